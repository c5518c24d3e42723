/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail report --json`: the contract other tools and the tests read
 * (doc/report.md). The fixed part:
 *   {"version":1,"duration_s":F,"ios":N,"dropped":N,
 *    "groups":[{"key":{...},"count":N,"bytes":N,"iops":F,
 *               "latency_ns":{"min","avg","p50","p90","p99","p999","max"},
 *               "stages":[{"name","avg_ns","p50_ns","p99_ns","share"}]}],
 *    "qd":{...},"sizes":{...},"timeline":[...]}
 * Everything else is extra keys beside those.
 */
#include <string.h>

#include "analyze/json_writer.h"
#include "analyze/nvme.h"
#include "analyze/zones.h"
#include "analyze/report.h"
#include "task.h"
#include "tracefile.h"

#define STR(j, name, field) it_json_name(j, name), it_json_stringn(j, field, sizeof(field))

static void host(struct it_json *j, const struct it_host_rec *h)
{
	it_json_name(j, "host");
	it_json_object_start(j);
	STR(j, "hostname", h->hostname);
	STR(j, "kernel", h->kernel);
	STR(j, "boot_id", h->boot_id);
	STR(j, "clock", h->clock);
	it_json_kv_uint(j, "ncpus", h->ncpus);
	it_json_kv_uint(j, "start_realtime_ns", h->start_realtime_ns);
	it_json_kv_uint(j, "start_monotonic_ns", h->start_monotonic_ns);
	STR(j, "command", h->command);
	STR(j, "layers", h->layers);
	STR(j, "hooks", h->hooks);
	it_json_object_end(j);
}

/* What the recording kept (doc/report.md): counts are of these I/Os. */
static void task(struct it_json *j, const struct it_task *given, const struct it_host_rec *h,
		 const struct it_results *r)
{
	bool calls = h && it_task_layers_have_calls(h->layers, sizeof(h->layers));
	char line[1024], err[160];
	struct it_sample s = { 0 };
	struct it_task counted = *given, *t = &counted;
	const struct it_task_counted *c = &r->task;

	counted.counted = r->task; /* the kernel's counts, from the trace's events */
	if (*t->sample && it_sample_parse(t->sample, &s, err, sizeof(err)))
		s = (struct it_sample){ 0 };
	it_task_describe(t, calls, h && it_task_layers_have_tcp(h->layers, sizeof(h->layers)), line,
			 sizeof(line));
	it_json_name(j, "task");
	it_json_object_start(j);
	it_json_kv_string(j, "filter", t->filter);
	it_json_kv_uint(j, "sample_1_in", s.one_in > 1 ? s.one_in : 1);
	/* the first N of every epoch (--sample N/EPOCH); 0: no epochs */
	it_json_kv_uint(j, "sample_per_epoch", s.per_epoch);
	it_json_kv_uint(j, "sample_epoch_ns", s.epoch_ns);
	if (t->overwritten_known) /* a flight file: what its memory bound overwrote */
		it_json_kv_uint(j, "overwritten", t->overwritten);
	it_json_kv_string(j, "start", t->start);
	it_json_kv_string(j, "stop", t->stop);
	it_json_kv_string(j, "what", line);
	/* the syscall layer's calls are all there, kept I/O or not */
	it_json_kv_bool(j, "syscalls_unfiltered", calls && *line && !c->calls_known);
	if (c->ios_known) { /* the kernel's counts (task_counts.h) */
		it_json_kv_uint(j, "ios_passed", c->passed);
		it_json_kv_uint(j, "ios_kept", c->passed - c->skipped);
		it_json_kv_uint(j, "ios_skipped", c->skipped);
		it_json_kv_uint(j, "ios_filtered_out", c->rejected);
	}
	if (c->ios_known && s.per_epoch) /* the epochs of the trace's I/Os */
		it_json_kv_uint(j, "epochs", c->epochs);
	if (c->calls_known) {
		it_json_kv_uint(j, "calls_kept", c->calls_kept);
		it_json_kv_uint(j, "calls_not_kept", c->calls_not_kept);
		it_json_kv_uint(j, "calls_no_io", c->calls_no_io);
	}
	if (c->uring_known) { /* io_uring requests, decided as the calls are */
		it_json_kv_uint(j, "uring_kept", c->uring_kept);
		it_json_kv_uint(j, "uring_not_kept", c->uring_not_kept);
		it_json_kv_uint(j, "uring_no_io", c->uring_no_io);
		it_json_kv_uint(j, "uring_async", c->uring_async);
	}
	it_json_object_end(j);
}

static void device(struct it_json *j, const struct it_report_input *in, uint32_t dev)
{
	const struct it_device_rec *d = it_report_dev_rec(in, dev);
	char name[40];

	it_json_object_start(j);
	it_json_kv_string(j, "name", it_report_dev_name(in, dev, name, sizeof(name)));
	it_json_kv_uint(j, "major", IT_DEV_MAJOR(dev));
	it_json_kv_uint(j, "minor", IT_DEV_MINOR(dev));
	it_json_kv_bool(j, "in_device_table", d != NULL);
	if (d) {
		STR(j, "model", d->model);
		STR(j, "scheduler", d->scheduler);
		it_json_kv_bool(j, "blk_mq", d->blk_mq);
		it_json_kv_uint(j, "logical_block_size", d->logical_block_size);
		it_json_kv_uint(j, "physical_block_size", d->physical_block_size);
		it_json_kv_uint(j, "max_sectors_kb", d->max_sectors_kb);
		it_json_kv_uint(j, "max_hw_sectors_kb", d->max_hw_sectors_kb);
		it_json_kv_uint(j, "nr_requests", d->nr_requests);
		it_json_kv_uint(j, "optimal_io_size", d->optimal_io_size);
		it_json_kv_bool(j, "rotational", d->rotational);
		it_json_kv_uint(j, "zoned", d->zoned);
		it_json_kv_uint(j, "nr_zones", d->nr_zones);
		it_json_kv_uint(j, "size_bytes", d->size_sectors * 512);
		it_json_kv_uint(j, "zone_bytes", d->zone_sectors * 512);
	}
	it_json_object_end(j);
}

static void devices(struct it_json *j, const struct it_report_input *in)
{
	const struct it_results *r = in->r;

	it_json_name(j, "devices");
	it_json_array_start(j);
	for (size_t i = 0; i < in->ndevs; i++)
		device(j, in, in->devs[i].dev);
	for (size_t i = 0; i < r->ndevs; i++) /* seen in events only */
		if (!it_report_dev_rec(in, r->devs[i].dev))
			device(j, in, r->devs[i].dev);
	it_json_array_end(j);
}

static void stats(struct it_json *j, const struct it_stitch_stats *s)
{
	it_json_name(j, "stitch");
	it_json_object_start(j);
	it_json_kv_uint(j, "request_ios", s->request_ios);
	it_json_kv_uint(j, "bio_ios", s->bio_ios);
	it_json_kv_uint(j, "no_q", s->no_q);
	it_json_kv_uint(j, "merges", s->merges);
	it_json_kv_uint(j, "merges_unattributed", s->merges_unattributed);
	it_json_kv_uint(j, "rq_merges", s->rq_merges);
	it_json_kv_uint(j, "rq_merges_unknown", s->rq_merges_unknown);
	it_json_kv_uint(j, "splits", s->splits);
	it_json_kv_uint(j, "splits_unknown", s->splits_unknown);
	it_json_kv_uint(j, "requeues", s->requeues);
	it_json_kv_uint(j, "requeues_unknown", s->requeues_unknown);
	it_json_kv_uint(j, "partial_completions", s->partials);
	it_json_kv_uint(j, "lost", s->lost);
	it_json_kv_uint(j, "lost_counted", s->lost_counted);
	it_json_kv_uint(j, "bio_requeued", s->bio_requeued);
	it_json_kv_uint(j, "flush_commands", s->flush_cmds);
	it_json_kv_uint(j, "flush_seq_ends", s->flush_seq_ends);
	it_json_kv_uint(j, "ignored_events", s->ignored);
	it_json_kv_uint(j, "task_events", s->tasks);
	it_json_name(j, "incomplete");
	it_json_object_start(j);
	it_json_kv_uint(j, "queued", s->incomplete_queued);
	it_json_kv_uint(j, "inserted", s->incomplete_inserted);
	it_json_kv_uint(j, "issued", s->incomplete_issued);
	it_json_object_end(j);
	it_json_object_end(j);
}

static void group_key(struct it_json *j, const struct it_report_input *in, const struct it_group *g)
{
	const struct it_results *r = in->r;
	char name[40];

	it_json_name(j, "key");
	it_json_object_start(j);
	for (unsigned k = 0; k < r->nkeys; k++) {
		it_json_name(j, it_key_names[r->keys[k]]);
		switch (r->keys[k]) {
		case IT_KEY_OP:
			it_json_string(j, it_op_name(g->key.op));
			break;
		case IT_KEY_SIZE:
			it_json_uint(j, it_size_class_lo(g->key.size_class));
			break;
		case IT_KEY_DEV:
			it_json_string(j, it_report_dev_name(in, g->key.dev, name, sizeof(name)));
			break;
		case IT_KEY_COMM:
			it_json_string(j, it_analyzer_comm(in->a, g->key.comm));
			break;
		case IT_KEY_PID:
			it_json_uint(j, g->key.pid);
			break;
		case IT_KEY_ROLE:
			it_json_string(j, it_analyzer_role(in->a, g->key.role));
			break;
		}
	}
	it_json_object_end(j);
	if (r->nkeys && memchr(r->keys, IT_KEY_SIZE, r->nkeys))
		it_json_kv_uint(j, "size_max", it_size_class_hi(g->key.size_class));
}

static void group(struct it_json *j, const struct it_report_input *in, const struct it_group *g)
{
	const struct it_hist *lat = &g->stage[IT_STAGE_Q2C];
	double dur = in->r->duration_s;

	it_json_object_start(j);
	group_key(j, in, g);
	it_json_kv_uint(j, "count", g->count);
	it_json_kv_uint(j, "bytes", g->bytes);
	it_json_kv_double(j, "iops", dur > 0 ? (double)g->count / dur : 0);
	it_json_kv_double(j, "bandwidth_Bps", dur > 0 ? (double)g->bytes / dur : 0);
	double act = it_active_s(g->first_ns, g->last_ns);
	it_json_kv_double(j, "active_s", act);
	it_json_kv_double(j, "iops_active", act > 0 ? (double)g->count / act : 0);
	it_json_kv_uint(j, "errors", g->errors);
	it_json_kv_uint(j, "merges", g->merges);
	it_json_kv_uint(j, "requeues", g->requeues);
	it_json_kv_uint(j, "splits", g->splits);
	it_json_kv_uint(j, "no_q", g->no_q);
	it_json_kv_uint(j, "sequential", g->seq);
	it_json_kv_uint(j, "random", g->rnd);
	it_json_latency(j, "latency_ns", lat);
	if (in->task && *in->task->stats) { /* the task's columns, as the text shows them */
		struct it_stats st;

		it_report_stats(in, &st);
		it_json_name(j, "stats_ns");
		it_json_object_start(j);
		for (unsigned int c = 0; c < st.n; c++)
			if (st.kind[c] != IT_STAT_DISTINCT)
				it_json_kv_uint(j, st.name[c], it_report_stat(g, &st, c));
		it_json_object_end(j);
		for (unsigned int c = 0; c < st.n; c++) { /* "distinct_pids": g->distinct[] */
			char name[24];

			unsigned int first = 0;

			while (first < c && (st.kind[first] != IT_STAT_DISTINCT ||
					     st.distinct[first] != st.distinct[c]))
				first++;
			if (st.kind[c] != IT_STAT_DISTINCT || first < c) /* once per key */
				continue;
			snprintf(name, sizeof(name), "distinct_%s", st.name[c]);
			it_json_kv_uint(j, name, it_report_stat(g, &st, c));
		}
	}
	it_json_name(j, "stages");
	it_json_array_start(j);
	for (unsigned s = 0; s < IT_STAGE_MAX; s++) {
		const struct it_hist *h = &g->stage[s];
		static const double sp[2] = { 50, 99 };
		uint64_t v[2];
		if (!h->count)
			continue; /* no trail of the group went through it */
		it_hist_percentiles(h, sp, 2, v);
		it_json_object_start(j);
		it_json_kv_string(j, "name", it_stages[s].name);
		it_json_kv_uint(j, "count", h->count);
		it_json_kv_uint(j, "avg_ns", it_hist_avg(h));
		it_json_kv_uint(j, "p50_ns", v[0]);
		it_json_kv_uint(j, "p99_ns", v[1]);
		it_json_kv_uint(j, "max_ns", h->max);
		it_json_kv_double(j, "share", it_stage_share(g, s));
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

static void qd_one(struct it_json *j, const char *name, const uint64_t *exact, uint32_t max)
{
	uint64_t b[IT_QD_BUCKETS];
	double avg;
	uint64_t n = it_qd_buckets(exact, b, &avg);

	it_json_name(j, name);
	it_json_object_start(j);
	it_json_kv_uint(j, "ios", n);
	it_json_kv_double(j, "avg", avg);
	it_json_kv_uint(j, "max", max);
	it_json_name(j, "buckets");
	it_json_array_start(j);
	for (unsigned k = 0; k < IT_QD_BUCKETS; k++) {
		uint32_t lo, hi;
		it_qd_bucket_range(k, &lo, &hi);
		it_json_object_start(j);
		it_json_kv_uint(j, "min", lo);
		it_json_name(j, "max");
		if (hi)
			it_json_uint(j, hi);
		else
			it_json_null(j);
		it_json_kv_uint(j, "ios", b[k]);
		it_json_kv_double(j, "pct", n ? 100.0 * (double)b[k] / (double)n : 0);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

static uint64_t dev_ios(const struct it_dev_stats *d)
{
	return d->ios[IT_OPC_READ] + d->ios[IT_OPC_WRITE] + d->ios[IT_OPC_OTHER];
}

/* "qd", "sizes" and "pattern": objects keyed by device name. */
static void per_device(struct it_json *j, const struct it_report_input *in, const char *key,
		       void (*one)(struct it_json *j, const struct it_dev_stats *d))
{
	const struct it_results *r = in->r;
	char name[40];

	it_json_name(j, key);
	it_json_object_start(j);
	for (size_t i = 0; i < r->ndevs; i++) {
		it_json_name(j, it_report_dev_name(in, r->devs[i].dev, name, sizeof(name)));
		one(j, &r->devs[i]);
	}
	it_json_object_end(j);
}

/* One class list of a device's window: {"reads":N,...}. */
static void ds_counts(struct it_json *j, const char *name, const uint64_t *v)
{
	it_json_name(j, name);
	it_json_object_start(j);
	for (int c = 0; c < IT_DS_MAX; c++)
		it_json_kv_uint(j, it_ds_names[c], v[c]);
	it_json_object_end(j);
}

/* iotrail's counts over the diskstats window beside the kernel's. */
static void reconciled(struct it_json *j, const struct it_diskstats *d)
{
	uint64_t lack[IT_DS_MAX], over[IT_DS_MAX];

	for (int c = 0; c < IT_DS_MAX; c++) {
		lack[c] = it_diskwin_short(d, c);
		over[c] = it_diskwin_over(d, c);
	}
	it_json_name(j, "window");
	it_json_object_start(j);
	ds_counts(j, "counted", d->win.counted);
	ds_counts(j, "from_reuse", d->win.reused);
	ds_counts(j, "unstarted", d->win.unstarted);
	ds_counts(j, "lacking", lack);
	ds_counts(j, "over", over);
	it_json_object_end(j);
}

/* "diskstats": what the kernel counted on the busy devices while
 * recording, keyed by device name (empty for traces without it). */
static void diskstats(struct it_json *j, const struct it_report_input *in)
{
	const struct it_results *r = in->r;
	char name[40];

	it_json_name(j, "diskstats");
	it_json_object_start(j);
	for (size_t i = 0; i < r->ndisk; i++) {
		const struct it_diskstats *d = &r->disk[i];

		it_json_name(j, it_report_dev_name(in, d->dev, name, sizeof(name)));
		it_json_object_start(j);
		it_json_kv_uint(j, "reads", d->reads);
		it_json_kv_uint(j, "writes", d->writes);
		it_json_kv_uint(j, "flushes", d->flushes);
		it_json_kv_uint(j, "discards", d->discards);
		if (r->disk_window && !r->disk_scoped)
			reconciled(j, d);
		it_json_object_end(j);
	}
	it_json_object_end(j);
	if (r->disk_window) {
		it_json_name(j, "diskstats_window");
		it_json_object_start(j);
		it_json_kv_uint(j, "from_ns", r->disk_from_ns);
		it_json_kv_uint(j, "to_ns", r->disk_to_ns);
		it_json_name(j, "reconciled");
		it_json_bool(j, !r->disk_scoped);
		if (!r->disk_scoped)
			it_json_kv_uint(j, "lacking", it_diskwin_short_total(r));
		it_json_object_end(j);
	}
}

/* The flush machinery's flush commands (not I/Os; what diskstats counts
 * as flushes). */
static void flush_commands(struct it_json *j, const struct it_dev_stats *d)
{
	it_json_object_start(j);
	it_json_kv_uint(j, "count", d->flush_cmds);
	it_json_kv_uint(j, "avg_d2c_ns", d->flush_cmds ? d->flush_cmd_ns / d->flush_cmds : 0);
	it_json_kv_uint(j, "max_d2c_ns", d->flush_cmd_max_ns);
	it_json_object_end(j);
}

static void qd(struct it_json *j, const struct it_dev_stats *d)
{
	it_json_object_start(j);
	qd_one(j, "at_insert", d->qd_insert, d->qd_insert_max);
	qd_one(j, "at_issue", d->qd_issue, d->qd_issue_max);
	it_json_object_end(j);
}

static void sizes(struct it_json *j, const struct it_dev_stats *d)
{
	uint64_t total = dev_ios(d);

	it_json_array_start(j);
	for (unsigned c = 0; c < IT_SIZE_CLASSES; c++) {
		const uint64_t *n = d->sizes[c];
		uint64_t sum = n[IT_OPC_READ] + n[IT_OPC_WRITE] + n[IT_OPC_OTHER];
		if (!sum)
			continue;
		it_json_object_start(j);
		it_json_kv_uint(j, "min", it_size_class_lo(c));
		it_json_kv_uint(j, "max", it_size_class_hi(c));
		it_json_kv_uint(j, "ios", sum);
		for (unsigned o = 0; o < IT_OPC_MAX; o++)
			it_json_kv_uint(j, it_opc_names[o], n[o]);
		it_json_kv_double(j, "pct", 100.0 * (double)sum / (double)total);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void pattern(struct it_json *j, const struct it_dev_stats *d)
{
	it_json_object_start(j);
	for (unsigned o = 0; o < IT_OPC_MAX; o++) {
		uint64_t n = d->seq[o] + d->rnd[o];
		if (!n)
			continue;
		it_json_name(j, it_opc_names[o]);
		it_json_object_start(j);
		it_json_kv_uint(j, "ios", n);
		it_json_kv_uint(j, "sequential", d->seq[o]);
		it_json_kv_uint(j, "random", d->rnd[o]);
		it_json_kv_double(j, "sequential_pct", 100.0 * (double)d->seq[o] / (double)n);
		it_json_object_end(j);
	}
	it_json_object_end(j);
}

static void timeline(struct it_json *j, const struct it_report_input *in)
{
	const struct it_results *r = in->r;
	double iv = (double)r->interval_ns / 1e9;
	char name[40];

	it_json_name(j, "timeline");
	it_json_array_start(j);
	for (size_t i = 0; i < r->ndevs; i++) {
		const struct it_dev_stats *d = &r->devs[i];
		it_json_object_start(j);
		it_json_kv_string(j, "dev", it_report_dev_name(in, d->dev, name, sizeof(name)));
		it_json_kv_double(j, "interval_s", iv);
		it_json_name(j, "points");
		it_json_array_start(j);
		for (size_t t = 0; t < d->ntimeline; t++) {
			const struct it_timeline_point *p = &d->timeline[t];
			uint64_t ios = p->ios[0] + p->ios[1] + p->ios[2];
			uint64_t bytes = p->bytes[0] + p->bytes[1] + p->bytes[2];
			double dur = it_timeline_dur(r, t);
			it_json_object_start(j);
			it_json_kv_double(j, "t_s", iv * (double)t);
			it_json_kv_double(j, "dur_s", dur);
			it_json_kv_uint(j, "ios", ios);
			it_json_kv_double(j, "iops", (double)ios / dur);
			it_json_kv_uint(j, "bytes", bytes);
			it_json_kv_double(j, "bandwidth_Bps", (double)bytes / dur);
			it_json_kv_uint(j, "read_ios", p->ios[IT_OPC_READ]);
			it_json_kv_uint(j, "read_bytes", p->bytes[IT_OPC_READ]);
			it_json_kv_uint(j, "write_ios", p->ios[IT_OPC_WRITE]);
			it_json_kv_uint(j, "write_bytes", p->bytes[IT_OPC_WRITE]);
			it_json_kv_uint(j, "other_ios", p->ios[IT_OPC_OTHER]);
			it_json_kv_uint(j, "other_bytes", p->bytes[IT_OPC_OTHER]);
			it_json_object_end(j);
		}
		it_json_array_end(j);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

void it_report_json_members(struct it_json *j, const struct it_report_input *in)
{
	const struct it_results *r = in->r;
	const struct it_reader_status *st = in->status;

	it_json_kv_double(j, "duration_s", r->duration_s);
	it_json_kv_uint(j, "ios", r->stats.ios);
	it_json_kv_uint(j, "dropped", st ? st->dropped_total : 0);
	if (st && st->drops_per_cpu) {
		it_json_name(j, "dropped_per_cpu");
		it_json_array_start(j);
		for (uint32_t c = 0; c < st->ncpu; c++)
			it_json_uint(j, st->drops_per_cpu[c]);
		it_json_array_end(j);
	}
	if (st && st->missed_known)
		it_json_kv_uint(j, "probe_misses", st->missed);
	if (in->path)
		it_json_kv_string(j, "file", in->path);
	it_json_kv_bool(j, "complete", st ? st->complete : true);
	it_json_kv_bool(j, "truncated", st ? st->truncated : false);
	if (st && st->truncated) {
		it_json_kv_uint(j, "truncated_at", st->bad_offset);
		if (st->reason && *st->reason)
			it_json_kv_string(j, "truncated_reason", st->reason);
	}
	it_json_kv_uint(j, "events", r->stats.events);
	it_json_kv_uint(j, "bytes", r->stats.bytes);
	it_json_kv_uint(j, "incomplete", r->stats.incomplete);
	it_json_kv_uint(j, "unknown_completions", r->stats.unknown_completions);
	it_json_kv_uint(j, "errors", r->stats.errors);
	it_json_kv_uint(j, "start_ns", r->start_ns);
	it_json_kv_uint(j, "end_ns", r->end_ns);
	if (in->host)
		host(j, in->host);
	if (in->task)
		task(j, in->task, in->host, r);
	devices(j, in);
	stats(j, &r->stats);
	it_json_name(j, "group_by");
	it_json_array_start(j);
	for (unsigned k = 0; k < r->nkeys; k++)
		it_json_string(j, it_key_names[r->keys[k]]);
	it_json_array_end(j);
	it_json_name(j, "groups");
	it_json_array_start(j);
	for (size_t g = 0; g < r->ngroups; g++)
		group(j, in, &r->groups[g]);
	it_json_array_end(j);
	per_device(j, in, "qd", qd);
	per_device(j, in, "sizes", sizes);
	per_device(j, in, "pattern", pattern);
	per_device(j, in, "flush_commands", flush_commands);
	diskstats(j, in);
	timeline(j, in);
	it_nvme_report_json(j, in);
	if (in->zones)
		it_zones_report_json(j, in);
}

void it_report_json(FILE *f, const struct it_report_input *in, bool pretty)
{
	struct it_json j;

	it_json_init(&j, f, pretty);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "version", 1);
	it_report_json_members(&j, in);
	it_json_object_end(&j);
}
