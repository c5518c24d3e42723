/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The report printers over the analyzer's results: plain text (100
 * columns) and JSON (the contract in doc/report.md), in pairs over the
 * same data, as bpftool does. Pure C: `iotrail report`, the benchmark and
 * the tests call them.
 */
#ifndef IOTRAIL_ANALYZE_REPORT_H
#define IOTRAIL_ANALYZE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/analyzer.h"
#include "iotrail/trace_format.h"

struct it_task;

struct it_reader_status; /* src/tracefile.h */

struct it_report_input {
	const char *path;                       /* trace file, or NULL */
	const struct it_host_rec *host;         /* NULL: no host facts */
	const struct it_device_rec *devs;       /* device table (may be empty) */
	size_t ndevs;
	const struct it_reader_status *status;  /* NULL: not from a file */
	const struct it_analyzer *a;            /* for comm names */
	const struct it_results *r;             /* it_analyzer_results(a) */
	bool zones;                             /* add the per-zone report (--zones) */
	const struct it_task *task;             /* what was filtered, sampled; NULL: every I/O */
};

/* The block layer's report: text, and JSON (a whole object, or its
 * members of an object the caller opened after "version"). Other layers
 * print their own sections (src/analyze/layer.h). */
void it_report_text(FILE *f, const struct it_report_input *in);
void it_report_json(FILE *f, const struct it_report_input *in, bool pretty);
/* The latency columns a report shows: the task's [report] stats (or
 * `report --stats`), else min, avg, p50, p90, p99, p99.9, max. */
struct it_stats;
void it_report_stats(const struct it_report_input *in, struct it_stats *st);
/* Column i of st for group g: ns of its Q2C latencies, or a count
 * (IT_STAT_DISTINCT). */
uint64_t it_report_stat(const struct it_group *g, const struct it_stats *st, unsigned int i);
/* The keys the report's columns count distinct values of: the analyzer's
 * opts.distinct. */
uint8_t it_report_stats_distinct(const struct it_stats *st);

struct it_json;
void it_report_json_members(struct it_json *j, const struct it_report_input *in);

/* ---- shared by the two printers ---- */
/* The device's name from the table, else "major:minor"; device 0:0 (a
 * request without a disk) is named for the NVMe admin queues whose
 * commands the trace has: "nvme0 admin" (keep-alives and other admin
 * commands go through the block layer on a queue without a disk). */
const char *it_report_dev_name(const struct it_report_input *in, uint32_t dev, char *buf,
			       size_t len);
/* "nvme0 admin" ("nvme0,nvme1 admin"), or NULL when the trace has no
 * admin command. */
const char *it_report_admin_name(const struct it_report_input *in, char *buf, size_t len);
const struct it_device_rec *it_report_dev_rec(const struct it_report_input *in, uint32_t dev);

/* Queue-depth buckets as fio prints them: 1, 2, 3-4, 5-8, ... 129-256, >256. */
#define IT_QD_BUCKETS 10
void it_qd_bucket_range(unsigned b, uint32_t *lo, uint32_t *hi); /* hi 0: open-ended */
/* Sums the exact depth counts into buckets; returns the I/O count, sets the average. */
uint64_t it_qd_buckets(const uint64_t *exact, uint64_t out[IT_QD_BUCKETS], double *avg);

/* Seconds covered by timeline interval i (the last one may be partial). */
double it_timeline_dur(const struct it_results *r, size_t i);

/* A monotonic time ns of a trace that started at start_mono_ns, when the
 * wall clock read start_realtime_ns, as that clock (UTC) to the
 * microsecond: "07:05:20.123456"; "" when the wall clock was not
 * recorded (start_realtime_ns 0). */
const char *it_wall_clock(char *buf, size_t len, uint64_t start_realtime_ns, uint64_t start_mono_ns,
			  uint64_t ns);

/* Seconds from the earliest start to the latest completion (0 if none). */
static inline double it_active_s(uint64_t first_ns, uint64_t last_ns)
{
	return last_ns > first_ns && first_ns ? (double)(last_ns - first_ns) / 1e9 : 0;
}

/* Latency percentiles reported per group, in this order. */
#define IT_NPCT 4
extern const double it_report_pcts[IT_NPCT]; /* 50, 90, 99, 99.9 */

struct it_json;
/* "name":{"min","avg","p50","p90","p99","p999","max"} of h, the latency
 * object of the JSON contract (doc/report.md). */
void it_json_latency(struct it_json *j, const char *name, const struct it_hist *h);

#endif
