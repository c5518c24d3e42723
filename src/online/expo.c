// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Prometheus' text format for the online histograms, following its naming
 * conventions: the iotrail_ prefix, base units (seconds, bytes), counters
 * ending in _total, one histogram family with the stage, device and op as
 * labels. Durations are written as exact decimals of the nanosecond
 * counts, so a bucket's `le` is its bound exactly and not a rounded float.
 */
#include <inttypes.h>
#include <string.h>

#include "online/expo.h"

void ol_expo_seconds(char *buf, size_t n, uint64_t ns)
{
	uint64_t sec = ns / 1000000000u, frac = ns % 1000000000u;
	int len;

	if (!frac) {
		snprintf(buf, n, "%" PRIu64, sec);
		return;
	}
	len = snprintf(buf, n, "%" PRIu64 ".%09" PRIu64, sec, frac);
	while (len > 0 && (size_t)len < n && buf[len - 1] == '0')
		buf[--len] = 0;
}

/* Label values are device names and fixed words; escaped as the format
 * asks all the same (backslash, quote, newline). */
static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}

static void labels(FILE *f, const char *dev, uint32_t op)
{
	fputs("device=\"", f);
	label_value(f, dev);
	fprintf(f, "\",op=\"%s\"", ol_op_name(op));
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void ol_expo_write(FILE *f, const struct ol_snapshot *s, ol_dev_namer name_of)
{
	char dev[64], num[32];

	family(f, "iotrail_block_ios_total", "counter",
	       "Block requests completed, per device and op.");
	for (size_t i = 0; i < s->n; i++) {
		name_of(s->series[i].key.dev, dev, sizeof(dev));
		fputs("iotrail_block_ios_total{", f);
		labels(f, dev, s->series[i].key.op);
		fprintf(f, "} %" PRIu64 "\n", (uint64_t)s->series[i].v.ios);
	}
	family(f, "iotrail_block_bytes_total", "counter",
	       "Bytes of the block requests completed, per device and op.");
	for (size_t i = 0; i < s->n; i++) {
		name_of(s->series[i].key.dev, dev, sizeof(dev));
		fputs("iotrail_block_bytes_total{", f);
		labels(f, dev, s->series[i].key.op);
		fprintf(f, "} %" PRIu64 "\n", (uint64_t)s->series[i].v.bytes);
	}
	family(f, "iotrail_block_stage_seconds", "histogram",
	       "Time of a block request in a stage: q2d queued to issued, d2c issued "
	       "to completed (the device), q2c queued to completed.");
	for (size_t i = 0; i < s->n; i++) {
		name_of(s->series[i].key.dev, dev, sizeof(dev));
		for (int st = 0; st < OL_NSTAGES; st++) {
			const struct ol_hist *h = &s->series[i].v.stage[st];
			uint64_t cum = 0;

			for (int b = 0; b < OL_NBUCKETS; b++) {
				cum += h->buckets[b];
				if (b == OL_NBUCKETS - 1)
					snprintf(num, sizeof(num), "+Inf");
				else
					ol_expo_seconds(num, sizeof(num), ol_bucket_le(b));
				fputs("iotrail_block_stage_seconds_bucket{", f);
				labels(f, dev, s->series[i].key.op);
				fprintf(f, ",stage=\"%s\",le=\"%s\"} %" PRIu64 "\n",
					ol_stage_names[st], num, cum);
			}
			ol_expo_seconds(num, sizeof(num), h->sum_ns);
			fputs("iotrail_block_stage_seconds_sum{", f);
			labels(f, dev, s->series[i].key.op);
			fprintf(f, ",stage=\"%s\"} %s\n", ol_stage_names[st], num);
			fputs("iotrail_block_stage_seconds_count{", f);
			labels(f, dev, s->series[i].key.op);
			fprintf(f, ",stage=\"%s\"} %" PRIu64 "\n", ol_stage_names[st], cum);
		}
	}
	family(f, "iotrail_block_missed_total", "counter",
	       "Completions not measured whole: no_issue (issue not seen: no q2d, d2c), "
	       "no_queue (queueing not seen: no q2d, q2c), no_slot (histogram map full: "
	       "not counted), nested (the kernel ran no probe: nested in another).");
	for (int m = 0; m < OL_NMISS; m++)
		fprintf(f, "iotrail_block_missed_total{reason=\"%s\"} %" PRIu64 "\n",
			ol_miss_names[m], s->missed[m]);
	fprintf(f, "iotrail_block_missed_total{reason=\"nested\"} %" PRIu64 "\n", s->nested);
}
