// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe part of `iotrail report` (doc/report.md, "nvme"): commands by
 * opcode with latency, per-queue in-flight depth at submission, bytes and
 * depth over time, DSM (discard) ranges, and how the commands joined the
 * block trails. Printed only when the trace has NVMe events.
 */
#include <string.h>

#include "analyze/json_writer.h"
#include "analyze/nvme.h"
#include "analyze/report.h"


static void by_opcode(struct it_json *j, const struct it_nvme_results *n)
{
	char buf[32];

	it_json_name(j, "by_opcode");
	it_json_object_start(j);
	for (int admin = 0; admin < 2; admin++)
		for (int op = 0; op < 256; op++) {
			const struct it_nvme_opcode_stats *s = &n->op[admin][op];
			if (!s->count)
				continue;
			it_json_name(j, it_nvme_opcode_name(op, admin, buf, sizeof(buf)));
			it_json_object_start(j);
			it_json_kv_uint(j, "opcode", op);
			it_json_kv_bool(j, "admin", admin);
			it_json_kv_uint(j, "count", s->count);
			it_json_kv_uint(j, "bytes", s->bytes);
			it_json_kv_uint(j, "errors", s->errors);
			it_json_latency(j, "latency_ns", &s->lat);
			it_json_object_end(j);
		}
	it_json_object_end(j);
}

static double qd_avg(const struct it_nvme_queue_stats *q)
{
	uint64_t n = 0, sum = 0;

	for (unsigned d = 0; d <= IT_NVME_QD_EXACT; d++) {
		n += q->qd[d];
		sum += (uint64_t)d * q->qd[d];
	}
	return n ? (double)sum / (double)n : 0;
}

static double sq_avg(const struct it_nvme_queue_stats *q)
{
	uint64_t sum = 0;

	for (unsigned d = 0; d <= IT_NVME_QD_EXACT; d++)
		sum += (uint64_t)d * q->sq_backlog[d];
	return q->sq_samples ? (double)sum / (double)q->sq_samples : 0;
}

static void by_depth(struct it_json *j, const uint64_t *counts)
{
	char key[16];

	it_json_name(j, "by_depth");
	it_json_object_start(j);
	for (unsigned d = 0; d <= IT_NVME_QD_EXACT; d++)
		if (counts[d]) {
			snprintf(key, sizeof(key), d == IT_NVME_QD_EXACT ? ">=%u" : "%u", d);
			it_json_kv_uint(j, key, counts[d]);
		}
	it_json_object_end(j);
}

static double dur(const struct it_nvme_results *n, size_t i);

/* The queue's depth over time, aligned with "timeline"."points". */
static void queue_time(struct it_json *j, const struct it_nvme_results *n,
		       const struct it_nvme_queue_stats *q)
{
	it_json_name(j, "qd_over_time");
	it_json_object_start(j);
	it_json_name(j, "qd_avg");
	it_json_array_start(j);
	for (size_t i = 0; i < q->nqd_time; i++)
		it_json_double(j, q->qd_time[i].qd_ns / (dur(n, i) * 1e9));
	it_json_array_end(j);
	it_json_name(j, "qd_max");
	it_json_array_start(j);
	for (size_t i = 0; i < q->nqd_time; i++)
		it_json_uint(j, q->qd_time[i].qd_max);
	it_json_array_end(j);
	it_json_object_end(j);
}

static void queues(struct it_json *j, const struct it_nvme_results *n)
{
	it_json_name(j, "queues");
	it_json_array_start(j);
	for (size_t i = 0; i < n->nqueues; i++) {
		const struct it_nvme_queue_stats *q = &n->queues[i];
		it_json_object_start(j);
		it_json_kv_uint(j, "ctrl", q->ctrl);
		it_json_kv_uint(j, "qid", q->qid);
		it_json_kv_uint(j, "commands", q->commands);
		it_json_kv_uint(j, "bytes", q->bytes);
		it_json_name(j, "inflight_at_submit");
		it_json_object_start(j);
		it_json_kv_double(j, "avg", qd_avg(q));
		it_json_kv_uint(j, "max", q->qd_max);
		by_depth(j, q->qd);
		it_json_object_end(j);
		it_json_name(j, "sq_backlog");
		it_json_object_start(j);
		it_json_kv_uint(j, "samples", q->sq_samples);
		it_json_kv_uint(j, "invalid", q->sq_invalid);
		it_json_kv_uint(j, "sq_size", q->sq_size);
		it_json_kv_double(j, "avg", sq_avg(q));
		it_json_kv_uint(j, "max", q->sq_backlog_max);
		by_depth(j, q->sq_backlog);
		it_json_object_end(j);
		queue_time(j, n, q);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

/* Seconds covered by interval i: the last one ends at the trace end. */
static double dur(const struct it_nvme_results *n, size_t i)
{
	double iv = (double)n->interval_ns / 1e9;
	double end = (double)(n->end_ns - n->start_ns) / 1e9 - iv * (double)i;

	return end > 0 && end < iv ? end : iv;
}

static void timeline(struct it_json *j, const struct it_nvme_results *n)
{
	it_json_name(j, "timeline");
	it_json_object_start(j);
	it_json_kv_double(j, "interval_s", (double)n->interval_ns / 1e9);
	it_json_name(j, "points");
	it_json_array_start(j);
	for (size_t i = 0; i < n->ntimeline; i++) {
		const struct it_nvme_interval *p = &n->timeline[i];
		double d = dur(n, i);
		it_json_object_start(j);
		it_json_kv_double(j, "t_s", (double)n->interval_ns / 1e9 * (double)i);
		it_json_kv_double(j, "dur_s", d);
		it_json_kv_uint(j, "commands", p->commands);
		it_json_kv_uint(j, "bytes", p->bytes);
		it_json_kv_double(j, "bytes_per_s", (double)p->bytes / d);
		it_json_kv_uint(j, "read_bytes", p->read_bytes);
		it_json_kv_uint(j, "write_bytes", p->write_bytes);
		it_json_kv_double(j, "qd_avg", p->qd_ns / (d * 1e9));
		it_json_kv_uint(j, "qd_max", p->qd_max);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

static void discards(struct it_json *j, const struct it_report_input *in,
		     const struct it_nvme_results *n)
{
	char name[40];

	it_json_name(j, "discards");
	it_json_object_start(j);
	it_json_kv_uint(j, "commands", n->dsm_commands);
	it_json_kv_uint(j, "ranges", n->nranges);
	it_json_kv_bool(j, "ranges_truncated", n->nranges > n->nranges_kept);
	it_json_name(j, "list");
	it_json_array_start(j);
	for (size_t i = 0; i < n->nranges_kept; i++) {
		const struct it_nvme_range *g = &n->ranges[i];
		const struct it_device_rec *d = it_report_dev_rec(in, g->dev);
		uint32_t lbs = d && d->logical_block_size ? d->logical_block_size : 512;
		it_json_object_start(j);
		it_json_kv_string(j, "dev", it_report_dev_name(in, g->dev, name, sizeof(name)));
		it_json_kv_uint(j, "offset_bytes", g->sector * 512);
		it_json_kv_uint(j, "bytes", g->bytes);
		it_json_kv_uint(j, "slba", g->sector * 512 / lbs);
		it_json_kv_uint(j, "nlb", g->bytes / lbs);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

void it_nvme_report_json(struct it_json *j, const struct it_report_input *in)
{
	const struct it_nvme_results *n = it_analyzer_nvme(in->a);
	const struct it_stitch_stats *s = &in->r->stats;

	if (!n)
		return;
	it_json_name(j, "nvme");
	it_json_object_start(j);
	it_json_kv_uint(j, "commands", n->commands);
	it_json_kv_uint(j, "submits", n->submits);
	it_json_kv_uint(j, "admin", n->admin);
	it_json_kv_uint(j, "errors", n->errors);
	it_json_kv_uint(j, "incomplete", n->incomplete);
	it_json_kv_uint(j, "unknown_completions", n->unknown_completions);
	it_json_kv_uint(j, "resubmitted", n->requeued);
	it_json_kv_uint(j, "sq_events", n->sq_events);
	it_json_kv_uint(j, "linked", s->nvme_linked);
	it_json_kv_uint(j, "unlinked", s->nvme_unlinked);
	it_json_kv_uint(j, "trails", s->nvme_trails);
	it_json_kv_uint(j, "stage_sum_ok", s->nvme_stage_sum_ok);
	by_opcode(j, n);
	queues(j, n);
	timeline(j, n);
	discards(j, in, n);
	it_json_object_end(j);
}

/* ---- text ---- */

static void fmt_ns(char *b, size_t len, uint64_t ns)
{
	if (ns >= 10000000)
		snprintf(b, len, "%.1fms", ns / 1e6);
	else if (ns >= 10000)
		snprintf(b, len, "%.0fus", ns / 1e3);
	else
		snprintf(b, len, "%.1fus", ns / 1e3);
}

static void queues_text(FILE *f, const struct it_nvme_results *n)
{
	char buf[32];

	fprintf(f, "\nNVMe queues (qd: in flight on the queue at submission, itself included)\n");
	if (n->sq_events)
		fprintf(f, "SQ backlog: entries in the submission queue the controller had not fetched, "
			"at each CQE\n");
	fprintf(f, "%-10s %9s %12s %8s %6s", "ctrl/qid", "commands", "bytes", "qd avg", "max");
	if (n->sq_events)
		fprintf(f, " %8s %11s %6s", "sq size", "backlog avg", "max");
	fputc('\n', f);
	for (size_t i = 0; i < n->nqueues; i++) {
		const struct it_nvme_queue_stats *q = &n->queues[i];
		snprintf(buf, sizeof(buf), "nvme%u/%u", q->ctrl, q->qid);
		fprintf(f, "%-10s %9llu %12llu %8.2f %6u", buf, (unsigned long long)q->commands,
			(unsigned long long)q->bytes, qd_avg(q), q->qd_max);
		if (n->sq_events && q->sq_samples)
			fprintf(f, " %8u %11.2f %6u", q->sq_size, sq_avg(q), q->sq_backlog_max);
		else if (n->sq_events)
			fprintf(f, " %8s %11s %6s", "-", "-", "-");
		fputc('\n', f);
	}
}

#define QT_COLS 8 /* 10 + 8 x 10 columns: fits the 100-column report */

/* Depth over time per queue, at most QT_COLS columns (intervals merged). */
static void queues_time_text(FILE *f, const struct it_nvme_results *n)
{
	size_t per, cols;
	char buf[32];

	if (!n->ntimeline || !n->nqueues)
		return;
	per = (n->ntimeline + QT_COLS - 1) / QT_COLS;
	cols = (n->ntimeline + per - 1) / per;
	fprintf(f, "\nNVMe queue depth over time (avg/max in flight per queue; a column is %g s)\n",
		(double)n->interval_ns / 1e9 * (double)per);
	fprintf(f, "%-10s", "ctrl/qid");
	for (size_t c = 0; c < cols; c++) {
		snprintf(buf, sizeof(buf), "%gs", (double)n->interval_ns / 1e9 * (double)(c * per));
		fprintf(f, " %9s", buf);
	}
	fputc('\n', f);
	for (size_t i = 0; i < n->nqueues; i++) {
		const struct it_nvme_queue_stats *q = &n->queues[i];
		snprintf(buf, sizeof(buf), "nvme%u/%u", q->ctrl, q->qid);
		fprintf(f, "%-10s", buf);
		for (size_t c = 0; c < cols; c++) {
			double qd_ns = 0, d = 0;
			uint32_t mx = 0;
			for (size_t k = c * per; k < (c + 1) * per && k < q->nqd_time; k++) {
				qd_ns += q->qd_time[k].qd_ns;
				d += dur(n, k);
				mx = q->qd_time[k].qd_max > mx ? q->qd_time[k].qd_max : mx;
			}
			snprintf(buf, sizeof(buf), "%.1f/%u", d > 0 ? qd_ns / (d * 1e9) : 0, mx);
			fprintf(f, " %9s", buf);
		}
		fputc('\n', f);
	}
}

void it_nvme_report_text(FILE *f, const struct it_report_input *in)
{
	const struct it_nvme_results *n = it_analyzer_nvme(in->a);
	const struct it_stitch_stats *s = &in->r->stats;
	char buf[32], b[3][16];

	if (!n)
		return;
	fprintf(f, "\nNVMe commands: %llu completed (%llu admin, %llu with error status),\n"
		"  %llu linked to block trails, %llu without one\n",
		(unsigned long long)n->commands, (unsigned long long)n->admin,
		(unsigned long long)n->errors, (unsigned long long)s->nvme_linked,
		(unsigned long long)s->nvme_unlinked);
	fprintf(f, "%-24s %9s %12s %8s %8s %8s\n", "opcode", "commands", "bytes", "avg", "p50",
		"p99");
	for (int admin = 0; admin < 2; admin++)
		for (int op = 0; op < 256; op++) {
			const struct it_nvme_opcode_stats *o = &n->op[admin][op];
			uint64_t p[2];
			static const double pp[2] = { 50, 99 };
			if (!o->count)
				continue;
			it_hist_percentiles(&o->lat, pp, 2, p);
			fmt_ns(b[0], 16, it_hist_avg(&o->lat));
			fmt_ns(b[1], 16, p[0]);
			fmt_ns(b[2], 16, p[1]);
			fprintf(f, "%-24s %9llu %12llu %8s %8s %8s\n",
				it_nvme_opcode_name(op, admin, buf, sizeof(buf)),
				(unsigned long long)o->count, (unsigned long long)o->bytes, b[0], b[1], b[2]);
		}
	queues_text(f, n);
	queues_time_text(f, n);
	if (n->dsm_commands)
		fprintf(f, "\nDSM (discard): %llu commands, %llu ranges (see --json for the list)\n",
			(unsigned long long)n->dsm_commands, (unsigned long long)n->nranges);
}
