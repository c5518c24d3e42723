/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail report` as text, readable in 100 columns: header facts and
 * warnings, the devices, latency by group (fio's percentiles), stages by
 * group (btt's gaps, with their share of the total), then per device the
 * queue depth ("percent of I/Os by queue depth", as fio's "IO depths"),
 * sizes, sequential share and a timeline.
 */
#include <string.h>
#include <time.h>

#include "analyze/report.h"
#include "tracefile.h"
#include "analyze/nvme.h"
#include "analyze/zones.h"
#include "task.h"

#define TIMELINE_ROWS 30 /* longer traces get coarser rows in text */
#define LINE_MAX 100     /* every line of the text report fits this many columns: */
#define WRAP_INDENT 4    /* keys that leave no room go on their own line, and the
			  * numbers on the next one, indented */
#define STAGE_COLS 66    /* a stage row after its keys */
#define LAT_COL 7        /* a latency row's duration, after its counts: 7 of them
			  * by default, or the task's stats */

/* Durations in at most 6 characters: 850ns 9.99us 99.9us 999us 1.23ms ... */
static const char *fmt_ns(char *buf, size_t len, uint64_t ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	unsigned u = 0;

	while (u < 3 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu%s", (unsigned long long)ns, unit[u]);
	else if (v < 9.995)
		snprintf(buf, len, "%.2f%s", v, unit[u]);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f%s", v, unit[u]);
	else
		snprintf(buf, len, "%.0f%s", v, unit[u]);
	return buf;
}

/* Bytes as 512, 4K, 1.5M, 128K ... (binary units); 0 is "-" (not known). */
static const char *fmt_bytes(char *buf, size_t len, uint64_t b)
{
	if (!b)
		return "-";
	static const char *const unit[] = { "", "K", "M", "G", "T", "P" };
	double v = (double)b;
	unsigned u = 0;

	while (u < 5 && v >= 1024) {
		v /= 1024;
		u++;
	}
	if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%llu%s", (unsigned long long)v, unit[u]);
	else
		snprintf(buf, len, "%.1f%s", v, unit[u]);
	return buf;
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* What the recording kept, said before any count: a predicate and 1 in N
 * sampling (counts are never scaled up). Wrapped at 88 columns. */
static void task_line(FILE *f, const struct it_task *t, const struct it_host_rec *h,
		      const struct it_results *r)
{
	struct it_task counted;
	char line[1024];
	const char *p = line;
	int n;

	if (!t)
		return;
	counted = *t; /* with the kernel's counts, from the trace's events */
	counted.counted = r->task;
	it_task_describe(&counted, it_task_layers_have_calls(h->layers, sizeof(h->layers)),
			 it_task_layers_have_tcp(h->layers, sizeof(h->layers)), line, sizeof(line));
	for (const char *lead = "task      "; *p; lead = "          ") {
		n = (int)strlen(p);
		if (n > 88) /* at a blank, when there is one */
			for (n = 88; n > 40 && p[n] != ' '; n--)
				;
		fprintf(f, "%s%.*s\n", lead, n, p);
		p += n;
		while (*p == ' ')
			p++;
	}
}

static void header(FILE *f, const struct it_report_input *in)
{
	const struct it_host_rec *h = in->host;
	const struct it_results *r = in->r;

	fprintf(f, "iotrail report%s%s\n", in->path ? ": " : "", in->path ? in->path : "");
	if (h) {
		char when[64] = "?";
		time_t t = (time_t)(h->start_realtime_ns / 1000000000ull);
		struct tm tm;
		/* to the microsecond, to line up with a server's log */
		if (h->start_realtime_ns && gmtime_r(&t, &tm)) {
			size_t n = strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
			snprintf(when + n, sizeof(when) - n, ".%06u UTC",
				 (unsigned)(h->start_realtime_ns % 1000000000ull / 1000));
		}
		fprintf(f, "host      %.*s, kernel %.*s, %u CPUs, clock %.*s\n",
			(int)sizeof(h->hostname), h->hostname, (int)sizeof(h->kernel), h->kernel,
			h->ncpus, (int)sizeof(h->clock), h->clock);
		if (h->start_realtime_ns)
			fprintf(f, "recorded  %s, for %.3f s\n", when, r->duration_s);
		else
			fprintf(f, "recorded  for %.3f s (start time not recorded)\n", r->duration_s);
		if (h->command[0])
			fprintf(f, "command   %.*s\n", 88, h->command);
		if (h->hooks[0])
			fprintf(f, "hooks     %.*s\n", 88, h->hooks);
		task_line(f, in->task, h, in->r);
	} else {
		fprintf(f, "duration  %.3f s\n", r->duration_s);
	}
	fprintf(f, "events    %llu", (unsigned long long)r->stats.events);
	if (in->status)
		fprintf(f, " in %llu chunks", (unsigned long long)in->status->chunks);
	fprintf(f, "; %llu I/Os completed, %.1f MiB\n", (unsigned long long)r->stats.ios,
		mib(r->stats.bytes));
	const struct it_stitch_stats *s = &r->stats;
	fprintf(f, "trails    %llu requests, %llu bio-based, %llu without Q; %llu errors; "
		"%llu requeues\n          bios merged %llu (unattributed %llu), requests merged %llu, "
		"splits %llu, partial completions %llu\n",
		(unsigned long long)s->request_ios, (unsigned long long)s->bio_ios,
		(unsigned long long)s->no_q, (unsigned long long)s->errors,
		(unsigned long long)s->requeues, (unsigned long long)s->merges,
		(unsigned long long)s->merges_unattributed, (unsigned long long)s->rq_merges,
		(unsigned long long)s->splits, (unsigned long long)s->partials);
}

/* The block layer recorded nothing while the kernel counted I/O on its
 * devices: say so first, with the kernel's counts. */
static void silent_block_layer(FILE *f, const struct it_report_input *in)
{
	const struct it_results *r = in->r;
	uint64_t busy = 0;
	char name[40];

	for (size_t i = 0; i < r->ndisk; i++)
		busy += r->disk[i].reads + r->disk[i].writes + r->disk[i].flushes +
			r->disk[i].discards;
	if (!busy || r->stats.ios)
		return;
	fprintf(f, "\n*** WARNING: the block layer recorded no I/O while its devices completed %llu\n"
		"*** (the kernel's count, /sys/block/DEV/stat):", (unsigned long long)busy);
	for (size_t i = 0; i < r->ndisk; i++) {
		const struct it_diskstats *d = &r->disk[i];

		fprintf(f, "%s %s %llu reads, %llu writes, %llu flushes", i ? ";\n***" : "",
			it_report_dev_name(in, d->dev, name, sizeof(name)),
			(unsigned long long)d->reads, (unsigned long long)d->writes,
			(unsigned long long)d->flushes);
	}
	fputs(in->task ? ".\n*** The task (its line above) keeps only the I/O it selects; a scope (-p,\n"
			 "*** --comm, --cgroup) only that of its processes; record without them to compare.\n"
		       : ".\n*** A scope (-p, --comm, --cgroup) keeps only the I/O its processes submit;\n"
			 "*** record without it to compare.\n", f);
}

static void warnings(FILE *f, const struct it_report_input *in)
{
	const struct it_reader_status *st = in->status;
	const struct it_stitch_stats *s = &in->r->stats;

	if (st && st->dropped_total) {
		fprintf(f, "\n*** WARNING: %llu EVENTS WERE LOST (ring buffer full)",
			(unsigned long long)st->dropped_total);
		if (st->drops_per_cpu) {
			int shown = 0;
			fputs(" per CPU:", f);
			for (uint32_t c = 0; c < st->ncpu && shown < 8; c++)
				if (st->drops_per_cpu[c]) {
					fprintf(f, " cpu%u=%llu", c, (unsigned long long)st->drops_per_cpu[c]);
					shown++;
				}
		}
		fputs("\n*** I/Os with lost events are missing, incomplete or unattributed: counts, IOPS\n"
		      "*** and bandwidth are lower bounds. Record fewer devices or a larger buffer.\n", f);
	}
	if (st && st->missed)
		fprintf(f, "\n*** WARNING: the kernel skipped %llu probe runs (a probe interrupted by itself\n"
			"*** on one CPU, e.g. a completion in an interrupt during a submission): their\n"
			"*** events are missing, and I/Os they belong to are incomplete or not counted.\n",
			(unsigned long long)st->missed);
	if (st && st->truncated)
		fprintf(f, "\n*** WARNING: the file is cut short at byte %llu: this report covers only what\n"
			"*** comes before it, up to its last complete chunk.\n*** Why: %s.\n",
			(unsigned long long)st->bad_offset,
			st->reason && *st->reason ? st->reason : "incomplete or damaged chunk");
	else if (st && !st->complete)
		fputs("\nNOTE: the recording did not end cleanly (no end record); the end time is the\n"
		      "      last event's.\n", f);
	bool drops = st && st->dropped_total;
	if (s->lost_counted)
		fprintf(f, "\nNOTE: %llu I/Os lost their completion event (%s)\n"
			"      but are counted: their request was issued, then reused for a new I/O,\n"
			"      so it had completed. They have no completion time (not in latencies).\n"
			"      `iotrail probe --untraced 5` lists the threads this kernel runs no probe\n"
			"      for while they are current (a completion in softirq over one is missed).\n",
			(unsigned long long)s->lost_counted,
			drops ? "no probe ran, or the ring dropped it" : "the kernel ran no probe for it");
	if (s->lost > s->lost_counted)
		fprintf(f, "\n*** WARNING: %llu I/Os lost their completion event (their request was seen\n"
			"*** again first) before they were issued, and are not counted: counts are\n"
			"*** lower bounds by that much.\n",
			(unsigned long long)(s->lost - s->lost_counted));
	silent_block_layer(f, in);
	uint64_t lack = it_diskwin_short_total(in->r);
	if (lack)
		fprintf(f, "\n*** WARNING: the kernel counted %llu completions that iotrail's counts lack\n"
			"*** (/sys/block/DEV/stat from the probes' attach to their detach; per device\n"
			"*** below): I/O counts, IOPS and bandwidth are lower bounds by %llu I/Os.\n",
			(unsigned long long)lack, (unsigned long long)lack);
	if (s->incomplete || s->unknown_completions)
		fprintf(f, "\nnot counted as I/Os: %llu still open at the end (queued %llu, inserted %llu, "
			"issued %llu),\n  %llu completions of I/Os issued before the trace started%s\n",
			(unsigned long long)s->incomplete, (unsigned long long)s->incomplete_queued,
			(unsigned long long)s->incomplete_inserted,
			(unsigned long long)s->incomplete_issued,
			(unsigned long long)s->unknown_completions,
			drops ? "\n  or whose earlier events were dropped" : "");
}

static void device_table(FILE *f, const struct it_report_input *in)
{
	const struct it_results *r = in->r;
	char b1[16], b2[16], b3[16], b4[16];

	if (!in->ndevs && !r->ndevs)
		return;
	fprintf(f, "\nDevices\n  %-12s %-8s %-6s %-12s %6s %7s %7s %7s %9s %6s  %s\n", "name", "dev",
		"type", "scheduler", "nr_rq", "max_io", "hw_max", "opt_io", "lbs/pbs", "size", "model");
	for (size_t i = 0; i < in->ndevs; i++) {
		const struct it_device_rec *d = &in->devs[i];
		char dev[16], lbs[24];
		snprintf(dev, sizeof(dev), "%u:%u", IT_DEV_MAJOR(d->dev), IT_DEV_MINOR(d->dev));
		if (d->physical_block_size)
			snprintf(lbs, sizeof(lbs), "%u/%u", d->logical_block_size, d->physical_block_size);
		else
			snprintf(lbs, sizeof(lbs), "%u", d->logical_block_size);
		char tail[112];
		/* the columns take 93: the model and the flags go at the end when
		 * they fit 100, else on a line of their own below */
		int n = snprintf(tail, sizeof(tail), "%.*s%s%s", (int)sizeof(d->model), d->model,
				 d->rotational ? " (rotational)" : "", d->zoned ? " (zoned)" : "");
		bool fits = n <= 7;
		fprintf(f, "  %-12.*s %-8s %-6s %-12.*s %6u %7s %7s %7s %9s %6s  %s\n",
			(int)sizeof(d->name), d->name, dev, d->blk_mq ? "blk-mq" : "bio",
			(int)sizeof(d->scheduler), d->scheduler[0] ? d->scheduler : "-", d->nr_requests,
			fmt_bytes(b1, sizeof(b1), (uint64_t)d->max_sectors_kb * 1024),
			fmt_bytes(b2, sizeof(b2), (uint64_t)d->max_hw_sectors_kb * 1024),
			fmt_bytes(b4, sizeof(b4), d->optimal_io_size), lbs,
			fmt_bytes(b3, sizeof(b3), d->size_sectors * 512), fits ? tail : "");
		if (!fits)
			fprintf(f, "  %-12s %.85s\n", "", tail + (tail[0] == ' '));
	}
	for (size_t i = 0; i < r->ndevs; i++) {
		if (it_report_dev_rec(in, r->devs[i].dev))
			continue;
		char dev[16], name[48];
		snprintf(dev, sizeof(dev), "%u:%u", IT_DEV_MAJOR(r->devs[i].dev), IT_DEV_MINOR(r->devs[i].dev));
		it_report_dev_name(in, r->devs[i].dev, name, sizeof(name));
		fprintf(f, "  %-12s %-8s %s\n", name, dev, strcmp(name, dev) ?
			"(no disk: requests on NVMe admin queues, e.g. keep-alives; not I/O)" :
			"(not in the trace's device table)");
	}
}

/* ---- group keys as columns ---- */

static const char *key_value(const struct it_report_input *in, const struct it_group *g,
			     unsigned key, char *buf, size_t len)
{
	switch (key) {
	case IT_KEY_OP:
		return it_op_name(g->key.op);
	case IT_KEY_SIZE:
		if (!g->key.size_class)
			return "0"; /* fmt_bytes would say "-" */
		return fmt_bytes(buf, len, it_size_class_lo(g->key.size_class));
	case IT_KEY_DEV:
		return it_report_dev_name(in, g->key.dev, buf, len);
	case IT_KEY_COMM:
		return it_analyzer_comm(in->a, g->key.comm);
	case IT_KEY_PID:
		snprintf(buf, len, "%u", g->key.pid);
		return buf;
	case IT_KEY_ROLE: {
		/* a long title is cut (JSON has it whole): the row must fit */
		const char *role = it_analyzer_role(in->a, g->key.role);

		if (strlen(role) < len)
			return role;
		snprintf(buf, len, "%.*s..", (int)len - 3, role);
		return buf;
	}
	}
	return "";
}

struct keycols {
	int width[IT_KEY_MAX];
	int total; /* all columns with their separating spaces */
	/* the latency table's I/Os, IOPS and MiB/s columns: 9, 9 and 8 wide,
	 * narrower (to what the numbers need) when the keys would push a row
	 * past LINE_MAX */
	int w_ios, w_iops, w_mib;
	bool wrap; /* the keys leave no room: they go on a line of their own */
};

static int num_width(double v, int decimals, int header)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%.*f", decimals, v);

	return n > header ? n : header;
}

/* The latency table's count columns, and whether the keys must wrap. */
static void count_widths(const struct it_report_input *in, struct keycols *kc)
{
	const struct it_results *r = in->r;
	struct it_stats st;
	int lat_cols;

	it_report_stats(in, &st);
	lat_cols = LAT_COL * (int)st.n;
	double dur = r->duration_s, ios = 0, iops = 0, mibs = 0;

	kc->w_ios = 9;
	kc->w_iops = 9;
	kc->w_mib = 8;
	if (kc->total + kc->w_ios + kc->w_iops + kc->w_mib + 3 + lat_cols - 1 <= LINE_MAX &&
	    kc->total + STAGE_COLS <= LINE_MAX)
		return;
	for (size_t g = 0; g < r->ngroups; g++) {
		const struct it_group *gr = &r->groups[g];
		ios = gr->count > ios ? gr->count : ios;
		if (dur > 0) {
			iops = (double)gr->count / dur > iops ? (double)gr->count / dur : iops;
			mibs = mib(gr->bytes) / dur > mibs ? mib(gr->bytes) / dur : mibs;
		}
	}
	kc->w_ios = num_width(ios, 0, 4);
	kc->w_iops = num_width(iops, 0, 4);
	kc->w_mib = num_width(mibs, 1, 5);
	kc->wrap = kc->total + kc->w_ios + kc->w_iops + kc->w_mib + 3 + lat_cols - 1 > LINE_MAX ||
		   kc->total + STAGE_COLS > LINE_MAX;
}

static void key_widths(const struct it_report_input *in, struct keycols *kc)
{
	const struct it_results *r = in->r;
	char buf[52];

	kc->total = 0;
	for (unsigned k = 0; k < r->nkeys; k++) {
		int w = (int)strlen(r->keys[k] == IT_KEY_SIZE ? "size>=" : it_key_names[r->keys[k]]);
		for (size_t g = 0; g < r->ngroups; g++) {
			int l = (int)strlen(key_value(in, &r->groups[g], r->keys[k], buf, sizeof(buf)));
			if (l > w)
				w = l;
		}
		kc->width[k] = w;
		kc->total += w + 1;
	}
	if (!r->nkeys) {
		kc->total = 4;
	}
	count_widths(in, kc);
}

static void key_header(FILE *f, const struct it_report_input *in, const struct keycols *kc)
{
	const struct it_results *r = in->r;

	if (!r->nkeys)
		fprintf(f, "%-4s", "all");
	for (unsigned k = 0; k < r->nkeys; k++)
		fprintf(f, "%-*s ", kc->width[k],
			r->keys[k] == IT_KEY_SIZE ? "size>=" : it_key_names[r->keys[k]]);
}

/* Prints the key cells; returns true when the numbers go on the next line. */
static bool key_cells(FILE *f, const struct it_report_input *in, const struct keycols *kc,
		      const struct it_group *g)
{
	const struct it_results *r = in->r;
	char buf[52];

	if (!r->nkeys)
		fprintf(f, "%-4s", "all");
	for (unsigned k = 0; k < r->nkeys; k++)
		fprintf(f, "%-*s ", kc->width[k], key_value(in, g, r->keys[k], buf, sizeof(buf)));
	if (kc->wrap) {
		fprintf(f, "\n%*s", WRAP_INDENT, "");
		return true;
	}
	return false;
}

static int key_pad(const struct keycols *kc)
{
	return kc->wrap ? WRAP_INDENT : kc->total;
}

static void key_list(FILE *f, const struct it_results *r)
{
	if (!r->nkeys)
		fputs("(all I/Os)", f);
	for (unsigned k = 0; k < r->nkeys; k++)
		fprintf(f, "%s%s", k ? "," : "", it_key_names[r->keys[k]]);
}

static void latency_table(FILE *f, const struct it_report_input *in, const struct keycols *kc)
{
	const struct it_results *r = in->r;
	double dur = r->duration_s;
	struct it_stats st;
	char b[16];

	it_report_stats(in, &st);
	fputs("\nLatency (Q2C, queued -> completed) by ", f);
	key_list(f, r);
	fputc('\n', f);
	key_header(f, in, kc);
	if (kc->wrap)
		fprintf(f, "\n%*s", WRAP_INDENT, "");
	fprintf(f, "%*s %*s %*s", kc->w_ios, "I/Os", kc->w_iops, "IOPS", kc->w_mib, "MiB/s");
	for (unsigned int c = 0; c < st.n; c++)
		fprintf(f, " %6s", st.name[c]);
	fputc('\n', f);
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct it_group *g = &r->groups[i];

		key_cells(f, in, kc, g);
		fprintf(f, "%*llu %*.0f %*.1f", kc->w_ios, (unsigned long long)g->count, kc->w_iops,
			dur > 0 ? (double)g->count / dur : 0, kc->w_mib,
			dur > 0 ? mib(g->bytes) / dur : 0);
		for (unsigned int c = 0; c < st.n; c++)
			if (st.kind[c] == IT_STAT_DISTINCT)
				fprintf(f, " %6llu", (unsigned long long)it_report_stat(g, &st, c));
			else
				fprintf(f, " %6s", fmt_ns(b, sizeof(b), it_report_stat(g, &st, c)));
		fputc('\n', f);
	}
}

static void stage_table(FILE *f, const struct it_report_input *in, const struct keycols *kc)
{
	const struct it_results *r = in->r;
	char b[3][16];

	fputs("\nStages by ", f);
	key_list(f, r);
	fputs(" (share: time in the stage / total Q2C time of the group)\n", f);
	key_header(f, in, kc);
	if (kc->wrap)
		fprintf(f, "\n%*s", WRAP_INDENT, "");
	fprintf(f, "%-5s %9s %6s %6s %6s %6s\n", "stage", "I/Os", "avg", "p50", "p99", "share");
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct it_group *g = &r->groups[i];
		bool first = true;
		for (unsigned s = 0; s < IT_STAGE_MAX; s++) {
			const struct it_hist *h = &g->stage[s];
			static const double sp[2] = { 50, 99 };
			uint64_t v[2];
			if (!h->count)
				continue;
			if (first)
				key_cells(f, in, kc, g);
			else
				fprintf(f, "%*s", key_pad(kc), "");
			first = false;
			it_hist_percentiles(h, sp, 2, v);
			double share = it_stage_share(g, s);
			fprintf(f, "%-5s %9llu %6s %6s %6s %5.1f%%", it_stages[s].name,
				(unsigned long long)h->count, fmt_ns(b[0], 16, it_hist_avg(h)),
				fmt_ns(b[1], 16, v[0]), fmt_ns(b[2], 16, v[1]), 100 * share);
			if (s != IT_STAGE_Q2C) {
				int n = (int)(share * 20 + 0.5);
				fputs(" |", f);
				for (int k = 0; k < 20; k++)
					fputc(k < n ? '#' : ' ', f);
				fputc('|', f);
			}
			fputc('\n', f);
		}
	}
}

static void qd_rows(FILE *f, const struct it_dev_stats *d)
{
	const struct { const char *name; const uint64_t *exact; uint32_t max; } rows[2] = {
		{ "at insert", d->qd_insert, d->qd_insert_max },
		{ "at issue", d->qd_issue, d->qd_issue_max },
	};

	fputs("  queue depth: percent of I/Os by requests in flight on the device (counting itself)\n"
	      "             ", f);
	for (unsigned k = 0; k < IT_QD_BUCKETS; k++) {
		uint32_t lo, hi;
		char lab[16];
		it_qd_bucket_range(k, &lo, &hi);
		if (!hi)
			snprintf(lab, sizeof(lab), ">%u", lo - 1);
		else if (lo == hi)
			snprintf(lab, sizeof(lab), "%u", lo);
		else
			snprintf(lab, sizeof(lab), "%u-%u", lo, hi);
		fprintf(f, " %6s", lab);
	}
	fprintf(f, " %6s %5s\n", "avg", "max");
	for (unsigned i = 0; i < 2; i++) {
		uint64_t b[IT_QD_BUCKETS];
		double avg;
		uint64_t n = it_qd_buckets(rows[i].exact, b, &avg);
		fprintf(f, "  %-11s", rows[i].name);
		for (unsigned k = 0; k < IT_QD_BUCKETS; k++)
			fprintf(f, " %6.1f", n ? 100.0 * (double)b[k] / (double)n : 0);
		fprintf(f, " %6.1f %5u\n", avg, rows[i].max);
	}
}

static void size_rows(FILE *f, const struct it_dev_stats *d, uint64_t total)
{
	char lo[16], hi[16], range[40];

	fprintf(f, "  I/O size %17s %11s %11s %7s\n", "reads", "writes", "other", "share");
	for (unsigned c = 0; c < IT_SIZE_CLASSES; c++) {
		const uint64_t *n = d->sizes[c];
		uint64_t sum = n[IT_OPC_READ] + n[IT_OPC_WRITE] + n[IT_OPC_OTHER];
		if (!sum)
			continue;
		if (!c)
			snprintf(range, sizeof(range), "0 (no data)");
		else
			snprintf(range, sizeof(range), "%s..<%s", fmt_bytes(lo, sizeof(lo), it_size_class_lo(c)),
				 fmt_bytes(hi, sizeof(hi), it_size_class_hi(c) + 1));
		fprintf(f, "    %-15s %11llu %11llu %11llu %6.1f%%\n", range,
			(unsigned long long)n[IT_OPC_READ], (unsigned long long)n[IT_OPC_WRITE],
			(unsigned long long)n[IT_OPC_OTHER], 100.0 * (double)sum / (double)total);
	}
}

static void timeline_rows(FILE *f, const struct it_report_input *in, const struct it_dev_stats *d)
{
	const struct it_results *r = in->r;
	size_t step = (d->ntimeline + TIMELINE_ROWS - 1) / TIMELINE_ROWS;
	double iv = (double)r->interval_ns / 1e9;
	uint64_t wall0 = in->host ? in->host->start_realtime_ns : 0;
	uint64_t mono0 = in->host ? in->host->start_monotonic_ns : 0;

	if (!d->ntimeline)
		return;
	if (!step)
		step = 1;
	fprintf(f, "  timeline, by completion time (rows of %g s)\n", iv * (double)step);
	fprintf(f, "  %9s %-15s %10s %10s %10s %10s %10s\n", "from", wall0 ? "at (UTC)" : "",
		"read IOPS", "read MiB/s", "write IOPS", "write MiB/s", "other IOPS");
	for (size_t t = 0; t < d->ntimeline; t += step) {
		uint64_t ios[IT_OPC_MAX] = { 0 }, bytes[IT_OPC_MAX] = { 0 };
		double dur = 0;
		for (size_t k = t; k < t + step && k < d->ntimeline; k++) {
			for (unsigned o = 0; o < IT_OPC_MAX; o++) {
				ios[o] += d->timeline[k].ios[o];
				bytes[o] += d->timeline[k].bytes[o];
			}
			dur += it_timeline_dur(r, k);
		}
		char at[32];

		it_wall_clock(at, sizeof(at), wall0, mono0,
			      r->start_ns + (uint64_t)t * r->interval_ns);
		fprintf(f, "  %8.0fs %-15s %10.0f %10.1f %10.0f %10.1f %10.0f\n", iv * (double)t, at,
			(double)ios[IT_OPC_READ] / dur, mib(bytes[IT_OPC_READ]) / dur,
			(double)ios[IT_OPC_WRITE] / dur, mib(bytes[IT_OPC_WRITE]) / dur,
			(double)ios[IT_OPC_OTHER] / dur);
	}
}

/* A "name N, name N" list of the classes where v(d, class) is not 0; the
 * number of them summed. */
static uint64_t class_list(char *buf, size_t len, const struct it_diskstats *d,
			   uint64_t (*v)(const struct it_diskstats *, int))
{
	uint64_t sum = 0;
	size_t off = 0;

	buf[0] = 0;
	for (int c = 0; c < IT_DS_MAX; c++) {
		uint64_t n = v(d, c);

		if (n && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s %llu", sum ? ", " : "",
						it_ds_names[c], (unsigned long long)n);
		sum += n;
	}
	return sum;
}

static uint64_t reused(const struct it_diskstats *d, int c) { return d->win.reused[c]; }
static uint64_t unstarted(const struct it_diskstats *d, int c) { return d->win.unstarted[c]; }

/* The kernel's count against iotrail's over the diskstats window. */
static void reconciled(FILE *f, const struct it_results *r, const struct it_diskstats *d)
{
	char lack[160], over[160], reuse[160], seen[160];
	uint64_t nlack, nover, nreuse, nseen;
	double win = (double)(r->disk_to_ns - r->disk_from_ns) / 1e9;

	if (!r->disk_window)
		return;
	if (r->disk_scoped) {
		fputs("  not reconciled: the block layer recorded only the scope's I/O (-p, --comm,\n"
		      "    --cgroup), and the kernel counts every process's I/O\n", f);
		return;
	}
	nlack = class_list(lack, sizeof(lack), d, it_diskwin_short);
	nover = class_list(over, sizeof(over), d, it_diskwin_over);
	nreuse = class_list(reuse, sizeof(reuse), d, reused);
	nseen = class_list(seen, sizeof(seen), d, unstarted);
	if (!nlack)
		fprintf(f, "  reconciled over %.3f s (probes attached to detached): exact\n", win);
	else
		fprintf(f, "  reconciled over %.3f s (probes attached to detached): iotrail lacks %llu I/Os\n"
			"    (%s): its counts are lower bounds by that many; %llu not in\n"
			"    the trace (no probe ran, or the ring dropped them), %llu in it whose start is "
			"not\n", win, (unsigned long long)nlack, lack,
			(unsigned long long)(nlack > nseen ? nlack - nseen : 0),
			(unsigned long long)(nseen < nlack ? nseen : nlack));
	if (nreuse)
		fprintf(f, "    of iotrail's, %s counted from their request's reuse (no probe saw them)\n",
			reuse);
	if (nover)
		fprintf(f, "    iotrail counted %s more (completing while the counters were read)\n",
			over);
}

static void device_sections(FILE *f, const struct it_report_input *in)
{
	const struct it_results *r = in->r;
	double dur = r->duration_s;
	char name[40];

	for (size_t i = 0; i < r->ndevs; i++) {
		const struct it_dev_stats *d = &r->devs[i];
		uint64_t ios = d->ios[0] + d->ios[1] + d->ios[2];
		uint64_t bytes = d->bytes[0] + d->bytes[1] + d->bytes[2];
		if (!ios)
			continue;
		char num[24];
		snprintf(num, sizeof(num), "%u:%u", IT_DEV_MAJOR(d->dev), IT_DEV_MINOR(d->dev));
		it_report_dev_name(in, d->dev, name, sizeof(name));
		double act = it_active_s(d->first_ns, d->last_ns);
		fprintf(f, "\nDevice %s%s%s%s: %llu I/Os, %.0f IOPS, %.1f MiB/s; busy %.3f s: %.0f IOPS, "
			"%.1f MiB/s\n", name,
			strcmp(name, num) ? " (" : "", strcmp(name, num) ? num : "",
			strcmp(name, num) ? ")" : "", (unsigned long long)ios,
			dur > 0 ? (double)ios / dur : 0, dur > 0 ? mib(bytes) / dur : 0, act,
			act > 0 ? (double)ios / act : 0, act > 0 ? mib(bytes) / act : 0);
		fputs(" ", f);
		for (unsigned o = 0; o < IT_OPC_MAX; o++) {
			uint64_t n = d->seq[o] + d->rnd[o];
			fprintf(f, " %s %llu", it_opc_names[o], (unsigned long long)d->ios[o]);
			if (n)
				fprintf(f, " (%.1f%% sequential)", 100.0 * (double)d->seq[o] / (double)n);
			fputs(o + 1 < IT_OPC_MAX ? "," : "\n", f);
		}
		for (size_t k = 0; k < r->ndisk; k++)
			if (r->disk[k].dev == d->dev) {
				fprintf(f, "  the kernel's count while recording (diskstats): read %llu, "
					"write %llu, flush %llu, discard %llu\n",
					(unsigned long long)r->disk[k].reads,
					(unsigned long long)r->disk[k].writes,
					(unsigned long long)r->disk[k].flushes,
					(unsigned long long)r->disk[k].discards);
				reconciled(f, r, &r->disk[k]);
			}
		if (d->flush_cmds) {
			char b1[16], b2[16];

			fprintf(f, "  device flush commands %llu (the flush machinery's; not I/Os): "
				"D2C avg %s, max %s\n", (unsigned long long)d->flush_cmds,
				fmt_ns(b1, sizeof(b1), d->flush_cmd_ns / d->flush_cmds),
				fmt_ns(b2, sizeof(b2), d->flush_cmd_max_ns));
		}
		qd_rows(f, d);
		size_rows(f, d, ios);
		timeline_rows(f, in, d);
	}
}

void it_report_text(FILE *f, const struct it_report_input *in)
{
	struct keycols kc = { 0 }; /* wrap stays false on the short path */

	header(f, in);
	warnings(f, in);
	device_table(f, in);
	if (!in->r->stats.ios) {
		fputs("\nNo completed block I/O in this trace.\n", f);
		return;
	}
	key_widths(in, &kc);
	latency_table(f, in, &kc);
	stage_table(f, in, &kc);
	device_sections(f, in);
	it_nvme_report_text(f, in);
	if (in->zones)
		it_zones_report_text(f, in);
}
