/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Helpers the text and JSON printers share, so both say the same thing. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analyze/json_writer.h"
#include "analyze/nvme.h"
#include "analyze/report.h"
#include "task.h"

const double it_report_pcts[IT_NPCT] = { 50, 90, 99, 99.9 };

void it_report_stats(const struct it_report_input *in, struct it_stats *st)
{
	char err[200];

	/* the task's stats were checked when it was parsed */
	if (!in->task || !*in->task->stats || it_stats_parse(in->task->stats, st, err, sizeof(err)))
		it_stats_parse("min,avg,p50,p90,p99,p99.9,max", st, err, sizeof(err));
}

uint8_t it_report_stats_distinct(const struct it_stats *st)
{
	uint8_t keys = 0;

	for (unsigned int i = 0; i < st->n; i++)
		if (st->kind[i] == IT_STAT_DISTINCT)
			keys |= 1u << st->distinct[i];
	return keys;
}

uint64_t it_report_stat(const struct it_group *g, const struct it_stats *st, unsigned int i)
{
	const struct it_hist *h = &g->stage[IT_STAGE_Q2C];
	uint64_t v = 0;

	switch (st->kind[i]) {
	case IT_STAT_MIN:
		return h->count ? h->min : 0;
	case IT_STAT_MAX:
		return h->max;
	case IT_STAT_AVG:
		return it_hist_avg(h);
	case IT_STAT_PCT:
		it_hist_percentiles(h, &st->pct[i], 1, &v);
		break;
	case IT_STAT_DISTINCT:
		return g->distinct[st->distinct[i]];
	}
	return v;
}

void it_json_latency(struct it_json *j, const char *name, const struct it_hist *h)
{
	uint64_t p[IT_NPCT];

	it_hist_percentiles(h, it_report_pcts, IT_NPCT, p);
	it_json_name(j, name);
	it_json_object_start(j);
	it_json_kv_uint(j, "min", h->count ? h->min : 0);
	it_json_kv_uint(j, "avg", it_hist_avg(h));
	it_json_kv_uint(j, "p50", p[0]);
	it_json_kv_uint(j, "p90", p[1]);
	it_json_kv_uint(j, "p99", p[2]);
	it_json_kv_uint(j, "p999", p[3]);
	it_json_kv_uint(j, "max", h->max);
	it_json_object_end(j);
}

const struct it_device_rec *it_report_dev_rec(const struct it_report_input *in, uint32_t dev)
{
	for (size_t i = 0; i < in->ndevs; i++)
		if (in->devs[i].dev == dev)
			return &in->devs[i];
	return NULL;
}

const char *it_report_admin_name(const struct it_report_input *in, char *buf, size_t len)
{
	const struct it_nvme_results *nv = in->a ? it_analyzer_nvme(in->a) : NULL;
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; nv && i < nv->nqueues && n + 1 < len; i++)
		if (nv->queues[i].qid == 0 && nv->queues[i].commands)
			n += snprintf(buf + n, len - n, "%snvme%u", n ? "," : "", nv->queues[i].ctrl);
	if (!n)
		return NULL;
	if (n + 1 < len)
		snprintf(buf + n, len - n, " admin");
	return buf;
}

const char *it_report_dev_name(const struct it_report_input *in, uint32_t dev, char *buf,
			       size_t len)
{
	const struct it_device_rec *d = it_report_dev_rec(in, dev);

	if (d && d->name[0])
		snprintf(buf, len, "%.*s", (int)sizeof(d->name), d->name);
	else if (dev || !it_report_admin_name(in, buf, len))
		snprintf(buf, len, "%u:%u", IT_DEV_MAJOR(dev), IT_DEV_MINOR(dev));
	return buf;
}

void it_qd_bucket_range(unsigned b, uint32_t *lo, uint32_t *hi)
{
	*lo = b ? (1u << (b - 1)) + 1 : 1;
	*hi = b + 1 < IT_QD_BUCKETS ? 1u << b : 0;
}

uint64_t it_qd_buckets(const uint64_t *exact, uint64_t out[IT_QD_BUCKETS], double *avg)
{
	uint64_t n = 0;
	double sum = 0;

	memset(out, 0, IT_QD_BUCKETS * sizeof(*out));
	for (uint32_t d = 1; d <= IT_QD_EXACT; d++) {
		if (!exact[d])
			continue;
		unsigned b = d <= 1 ? 0 : 32 - (unsigned)__builtin_clz(d - 1);
		if (b >= IT_QD_BUCKETS)
			b = IT_QD_BUCKETS - 1;
		out[b] += exact[d];
		n += exact[d];
		sum += (double)d * (double)exact[d];
	}
	*avg = n ? sum / (double)n : 0;
	return n;
}

const char *it_wall_clock(char *buf, size_t len, uint64_t start_realtime_ns, uint64_t start_mono_ns,
			  uint64_t ns)
{
	uint64_t wall = start_realtime_ns + (ns > start_mono_ns ? ns - start_mono_ns : 0);
	time_t t = (time_t)(wall / 1000000000ull);
	struct tm tm;

	if (!start_realtime_ns || !gmtime_r(&t, &tm)) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	snprintf(buf, len, "%02d:%02d:%02d.%06u", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(wall % 1000000000ull / 1000));
	return buf;
}

double it_timeline_dur(const struct it_results *r, size_t i)
{
	double iv = (double)r->interval_ns / 1e9;
	double left = r->duration_s - iv * (double)i;

	return left >= iv || left <= 0 ? iv : left;
}
