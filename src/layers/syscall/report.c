// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer in `iotrail report`: text (per call, per file, per
 * thread over time, block I/O ownership and block I/O by file), the event
 * list (--log), and the JSON members "syscalls", "files", "threads",
 * "syscall_block" and, with --events, "events" (doc/report.md), in pairs
 * over the same results.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/report.h"
#include "layers/syscall/report.h"

#define TOP 10

static const char *ns_str(char *buf, size_t len, uint64_t ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	unsigned u = 0;

	while (v >= 1000 && u < 3) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, u ? "%.1f%s" : "%.0f%s", v, unit[u]);
	return buf;
}

static const char *bytes_str(char *buf, size_t len, uint64_t b)
{
	static const char *const unit[] = { "", "K", "M", "G", "T" };
	double v = (double)b;
	unsigned u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f%s" : "%.0f%s", v, unit[u]);
	return buf;
}

static void call_rows(FILE *f, const struct it_sysan_results *r)
{
	static const double pct[2] = { 50, 99 };

	fprintf(f, "%-16s %9s %7s %9s %9s %9s %9s %9s %9s\n", "call", "count", "errors", "bytes",
		"avg", "p50", "p99", "max", "in block");
	for (size_t i = 0; i < r->ncalls; i++) {
		const struct it_sysan_call *c = &r->per_call[i];
		char b[5][24], blk[24] = "-";
		uint64_t p[2];

		it_hist_percentiles(&c->lat, pct, 2, p);
		if (c->block_calls && c->lat.sum)
			snprintf(blk, sizeof(blk), "%.0f%%", 100.0 * (double)c->block.sum /
				 (double)(c->block.sum + c->above.sum));
		fprintf(f, "%-16s %9" PRIu64 " %7" PRIu64 " %9s %9s %9s %9s %9s %9s\n",
			it_sys_call_name(c->call), c->count, c->errors,
			bytes_str(b[0], 24, c->bytes), ns_str(b[1], 24, it_hist_avg(&c->lat)),
			ns_str(b[2], 24, p[0]), ns_str(b[3], 24, p[1]), ns_str(b[4], 24, c->lat.max), blk);
	}
}

static void block_rows(FILE *f, const struct it_sysan_results *r, const struct it_analyzer *a)
{
	char b[3][24];

	for (size_t i = 0; i < r->ncalls; i++) {
		const struct it_sysan_call *c = &r->per_call[i];

		if (!c->block_calls)
			continue;
		char fl[40] = "", line[256];
		int n;

		if (c->block_flushes)
			snprintf(fl, sizeof(fl), ", %" PRIu64 " flush%s", c->block_flushes,
				 c->block_flushes == 1 ? "" : "es");
		n = snprintf(line, sizeof(line), "  %-14s %" PRIu64 " calls issued %" PRIu64
			     " I/Os (%s%s): block time avg %s,", it_sys_call_name(c->call),
			     c->block_calls, c->block_ios, bytes_str(b[0], 24, c->block_bytes), fl,
			     ns_str(b[1], 24, it_hist_avg(&c->block)));
		/* within 100 columns: the rest on a line of its own when it would not fit */
		fprintf(f, "%s%s above the block layer avg %s\n", line,
			n + 36 > 100 ? "\n                " : "",
			ns_str(b[2], 24, it_hist_avg(&c->above)));
	}
	if (!r->background_ios)
		return;
	fprintf(f, "  background (block I/O no traced call issued): %" PRIu64 " I/Os, %s",
		r->background_ios, bytes_str(b[0], 24, r->background_bytes));
	if (r->background_ios > r->unattributed_ios)
		fprintf(f, ";\n    %" PRIu64 " I/Os, %s of it to files (writeback, readahead: below)",
			r->background_ios - r->unattributed_ios,
			bytes_str(b[1], 24, r->background_bytes - r->unattributed_bytes));
	fprintf(f, "\n");
	if (!r->unattributed_ios)
		return;
	fprintf(f, "  background (unattributed: metadata, journal, raw device): %" PRIu64 " I/Os, %s\n"
		"    by comm:", r->unattributed_ios, bytes_str(b[0], 24, r->unattributed_bytes));
	/* five comms of at most 15 characters and their counts fit 100 columns */
	for (size_t i = 0; i < r->nunattributed && i < 5; i++)
		fprintf(f, "%s %s %" PRIu64, i ? "," : "",
			a ? it_analyzer_comm(a, r->unattributed[i].comm) : "?", r->unattributed[i].ios);
	fprintf(f, "%s\n", r->nunattributed > 5 ? ", ..." : "");
}

/* A file of block I/O: its path, else its identity. */
static const char *bfile_name(char *buf, size_t len, const struct it_sysan_bfile *x)
{
	if (x->path)
		return x->path;
	snprintf(buf, len, "[dev %u:%u inode %" PRIu64 "]", IT_DEV_MAJOR(x->dev), IT_DEV_MINOR(x->dev),
		 x->ino);
	return buf;
}

static void bfile_rows(FILE *f, const struct it_sysan_results *r)
{
	static const double pct[2] = { 50, 99 };

	fprintf(f, "\nBlock I/O by file (top %d by bytes of %zu; the file whose page cache its bios\n"
		"carry, whoever queued them)\n", TOP, r->nbfiles);
	fprintf(f, "%-40s %6s %8s %8s %10s %9s %9s\n", "path", "I/Os", "read", "written",
		"background", "Q2C p50", "Q2C p99");
	for (size_t i = 0; i < r->nbfiles && i < TOP; i++) {
		const struct it_sysan_bfile *x = &r->bfiles[i];
		char b[5][24], nm[96];
		const char *n = bfile_name(nm, sizeof(nm), x);
		size_t l = strlen(n);
		uint64_t p[2];

		it_hist_percentiles(&x->q2c, pct, 2, p);
		fprintf(f, "%s%-*s %6" PRIu64 " %8s %8s %10s %9s %9s\n", l > 40 ? "..." : "",
			l > 40 ? 37 : 40, l > 40 ? n + l - 37 : n, x->ios,
			bytes_str(b[0], 24, x->read_bytes), bytes_str(b[1], 24, x->write_bytes),
			bytes_str(b[2], 24, x->bg_bytes), ns_str(b[3], 24, p[0]), ns_str(b[4], 24, p[1]));
	}
}

static void file_rows(FILE *f, const struct it_sysan_results *r)
{
	static const double pct[1] = { 50 };

	fprintf(f, "\nFiles (top %d by calls of %zu)\n", TOP, r->nfiles);
	fprintf(f, "%-40s %6s %8s %8s %9s %9s %5s\n", "path", "calls", "read", "written",
		"rd p50", "wr p50", "seq%");
	for (size_t i = 0; i < r->nfiles && i < TOP; i++) {
		const struct it_sysan_file *x = &r->files[i];
		char b[4][24], seq[8] = "-";
		uint64_t rp = 0, wp = 0;
		size_t l = strlen(x->path);

		it_hist_percentiles(&x->read_lat, pct, 1, &rp);
		it_hist_percentiles(&x->write_lat, pct, 1, &wp);
		if (x->seq + x->rnd)
			snprintf(seq, sizeof(seq), "%.0f", 100.0 * (double)x->seq / (double)(x->seq + x->rnd));
		/* long paths keep their end, where the file name is */
		fprintf(f, "%s%-*s %6" PRIu64 " %8s %8s %9s %9s %5s\n", l > 40 ? "..." : "",
			l > 40 ? 37 : 40, l > 40 ? x->path + l - 37 : x->path, x->calls,
			bytes_str(b[0], 24, x->read_bytes), bytes_str(b[1], 24, x->write_bytes),
			x->reads ? ns_str(b[2], 24, rp) : "-", x->writes ? ns_str(b[3], 24, wp) : "-", seq);
	}
}

/* A file's or a process's fsync and fdatasync calls, by total time. */
static int cmp_sync_file(const void *a, const void *b)
{
	const struct it_sysan_file *x = *(const struct it_sysan_file *const *)a;
	const struct it_sysan_file *y = *(const struct it_sysan_file *const *)b;

	if (x->sync_lat.sum != y->sync_lat.sum)
		return x->sync_lat.sum > y->sync_lat.sum ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The latency columns of a histogram: count avg p50 p99 max total. */
static void sync_cols(FILE *f, uint64_t n, const struct it_hist *h)
{
	static const double pct[2] = { 50, 99 };
	char b[5][24];
	uint64_t p[2];

	it_hist_percentiles(h, pct, 2, p);
	fprintf(f, " %6" PRIu64 " %9s %9s %9s %9s %9s\n", n, ns_str(b[0], 24, it_hist_avg(h)),
		ns_str(b[1], 24, p[0]), ns_str(b[2], 24, p[1]), ns_str(b[3], 24, h->max),
		ns_str(b[4], 24, h->sum));
}

/* fsync and fdatasync per file, the files that took the longest first. */
static void sync_file_rows(FILE *f, const struct it_sysan_results *r)
{
	const struct it_sysan_file **v = malloc((r->nfiles ? r->nfiles : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return;
	for (size_t i = 0; i < r->nfiles; i++)
		if (r->files[i].syncs)
			v[n++] = &r->files[i];
	if (n) {
		qsort(v, n, sizeof(*v), cmp_sync_file);
		fprintf(f, "\nfsync and fdatasync by file (top %d by total time of %zu files)\n", TOP, n);
		fprintf(f, "%-37s %6s %9s %9s %9s %9s %9s\n", "path", "calls", "avg", "p50", "p99",
			"max", "total");
	}
	for (size_t i = 0; i < n && i < TOP; i++) {
		size_t l = strlen(v[i]->path);

		/* long paths keep their end, where the file name is */
		fprintf(f, "%s%-*s", l > 37 ? "..." : "", l > 37 ? 34 : 37,
			l > 37 ? v[i]->path + l - 34 : v[i]->path);
		sync_cols(f, v[i]->syncs, &v[i]->sync_lat);
	}
	free(v);
}

/* Per role (process title, else [comm]): its processes' calls, bytes,
 * block I/O, and fsync/fdatasync latency. */
static void role_rows(FILE *f, const struct it_sysan_results *r)
{
	static const double pct[2] = { 50, 99 };

	fprintf(f, "\nProcesses by role (the title ps shows, else [comm]; syncs: fsync and fdatasync;\n"
		"top %d of %zu by time in syncs, then by calls; a long role on a line of its own)\n",
		TOP, r->nroles);
	fprintf(f, "%-36s %5s %8s %7s %7s %7s %6s %8s %8s\n", "role", "procs", "calls", "read",
		"written", "blk I/O", "syncs", "sync p50", "sync p99");
	for (size_t i = 0; i < r->nroles && i < TOP; i++) {
		const struct it_sysan_role *o = &r->roles[i];
		const struct it_sysan_io *io = &o->io;
		char b[4][24];
		uint64_t q[2] = { 0, 0 };

		it_hist_percentiles(&io->sync_lat, pct, 2, q);
		if (strlen(o->name) > 36)
			fprintf(f, "%.100s\n", o->name);
		fprintf(f, "%-36.36s %5" PRIu64 " %8" PRIu64 " %7s %7s %7" PRIu64 " %6" PRIu64
			" %8s %8s\n", strlen(o->name) > 36 ? "" : o->name, o->procs, io->calls,
			bytes_str(b[0], 24, io->read_bytes), bytes_str(b[1], 24, io->write_bytes),
			io->block_ios, io->syncs, io->syncs ? ns_str(b[2], 24, q[0]) : "-",
			io->syncs ? ns_str(b[3], 24, q[1]) : "-");
	}
}

/* Timelines in at most 7 columns (merging intervals), each a rate per
 * second: the columns, and the seconds one stands for. */
static size_t tl_cols(const struct it_sysan_results *r, size_t *per, double *step_s)
{
	*per = (r->nintervals + 6) / 7;
	*step_s = (double)r->interval_ns * (double)*per / 1e9;
	return (r->nintervals + *per - 1) / *per;
}

static void tl_head(FILE *f, const struct it_sysan_results *r)
{
	size_t per;
	double step_s;
	size_t cols = tl_cols(r, &per, &step_s);

	for (size_t c = 0; c < cols; c++)
		fprintf(f, " %7.3gs", (double)c * step_s);
	fprintf(f, "\n");
}

static void tl_cells(FILE *f, const struct it_sysan_results *r, const uint64_t *tl)
{
	size_t per;
	double step_s;
	size_t cols = tl_cols(r, &per, &step_s);

	for (size_t c = 0; c < cols; c++) {
		uint64_t n = 0;
		for (size_t k = c * per; k < (c + 1) * per && k < r->nintervals; k++)
			n += tl[k];
		fprintf(f, " %8.0f", (double)n / step_s);
	}
	fprintf(f, "\n");
}

/* Calls per second per thread (34 + 7 * 9 <= 100 columns). */
static void thread_rows(FILE *f, const struct it_sysan_results *r)
{
	size_t per;
	double step_s;

	tl_cols(r, &per, &step_s);
	fprintf(f, "\nCalls per second per thread (top %d of %zu; columns of %.3g s from the start)\n",
		TOP, r->nthreads, step_s);
	fprintf(f, "%-8s %-16s %8s", "tid", "comm", "calls");
	tl_head(f, r);
	for (size_t i = 0; i < r->nthreads && i < TOP; i++) {
		const struct it_sysan_thread *t = &r->threads[i];

		fprintf(f, "%-8u %-16.16s %8" PRIu64, t->tid, t->comm, t->calls);
		tl_cells(f, r, t->timeline);
	}
}

#define TL_TOP 5

/* Block I/O per second over time by the process that queued it and by
 * file (27 + 9 + 7 * 9 <= 100 columns): who made a burst, on what. */
static void block_time_rows(FILE *f, const struct it_sysan_results *r, const struct it_analyzer *a)
{
	size_t per;
	double step_s;

	if (!r->nbprocs)
		return;
	tl_cols(r, &per, &step_s);
	fprintf(f, "\nBlock I/O over time (I/Os per second by completion; columns of %.3g s from the\n"
		"start): by the process that queued it (top %d of %zu), by file (top %d of %zu)\n",
		step_s, TL_TOP, r->nbprocs, TL_TOP, r->nbfiles);
	fprintf(f, "%-27s %8s", "process", "I/Os");
	tl_head(f, r);
	for (size_t i = 0; i < r->nbprocs && i < TL_TOP; i++) {
		const struct it_sysan_bproc *p = &r->bprocs[i];
		char nm[40];

		if (*p->title)
			snprintf(nm, sizeof(nm), "%u %s", p->pid, p->title);
		else
			snprintf(nm, sizeof(nm), "%u [%.16s]", p->pid, a ? it_analyzer_comm(a, p->comm) : "?");
		fprintf(f, "%-27.27s %8" PRIu64, nm, p->ios);
		tl_cells(f, r, p->timeline);
	}
	if (!r->nbfiles)
		return;
	fprintf(f, "%-27s %8s\n", "file", "I/Os");
	for (size_t i = 0; i < r->nbfiles && i < TL_TOP; i++) {
		const struct it_sysan_bfile *x = &r->bfiles[i];
		char nm[96];
		const char *n = bfile_name(nm, sizeof(nm), x);
		size_t l = strlen(n);

		if (!x->timeline)
			continue;
		/* long paths keep their end, where the file name is */
		fprintf(f, "%s%-*s %8" PRIu64, l > 27 ? "..." : "", l > 27 ? 24 : 27,
			l > 27 ? n + l - 24 : n, x->ios);
		tl_cells(f, r, x->timeline);
	}
}

void it_report_sys_text(FILE *f, const struct it_sysan_results *r, const struct it_analyzer *a,
			uint64_t lost)
{
	if (!r || (!r->calls && !lost))
		return;
	fprintf(f, "\nSystem calls: %" PRIu64 " calls, %" PRIu64 " errors, %zu files, %zu threads\n",
		r->calls, r->errors, r->nfiles, r->nthreads);
	/* as the recorder's summary said it: never a silent lower bound */
	if (lost)
		fprintf(f, "*** WARNING: %" PRIu64 " records lost to a full ring: "
			"the counts below are lower bounds\n", lost);
	if (!r->calls)
		return;
	call_rows(f, r);
	if (r->owned_ios || r->background_ios) {
		fprintf(f, "\nBlock I/O of the calls (a call owns the bios its thread queued during it)\n");
		block_rows(f, r, a);
	}
	if (r->nbfiles)
		bfile_rows(f, r);
	file_rows(f, r);
	sync_file_rows(f, r);
	role_rows(f, r);
	thread_rows(f, r);
	block_time_rows(f, r, a);
}

static void ret_str(char *buf, size_t len, int64_t ret)
{
	if (ret < 0 && ret > -4096 && strerrorname_np((int)-ret))
		snprintf(buf, len, "-%s", strerrorname_np((int)-ret));
	else
		snprintf(buf, len, "%" PRId64, ret);
}

/* A time of the trace as the wall clock read it (the date is the
 * report's header's), or seconds from the start when the trace has no
 * start time. */
static const char *log_time(char *buf, size_t len, const struct it_sys_clock *c, uint64_t ns)
{
	if (c->start_realtime_ns)
		return it_wall_clock(buf, len, c->start_realtime_ns, c->start_ns, ns);
	snprintf(buf, len, "%.6f", ns > c->start_ns ? (double)(ns - c->start_ns) / 1e9 : 0.0);
	return buf;
}

void it_report_sys_log(FILE *f, const struct it_sysan_results *r, const struct it_sys_clock *c)
{
	fprintf(f, "%-15s %7s %7s %-15s %-14s %9s %5s %10s %8s %9s %-5s %s\n",
		c->start_realtime_ns ? "time (UTC)" : "time_s", "pid", "tid", "comm", "call", "latency",
		"fd", "offset", "count", "ret", "type", "path");
	for (size_t i = 0; i < r->nevents; i++) {
		const struct it_sysan_event *v = &r->events[i];
		char off[24] = "-", cnt[24] = "-", ret[32], fd[16] = "-", when[32], lat[24];

		if (v->e.fd != -1)
			snprintf(fd, sizeof(fd), v->e.fd == -100 ? "cwd" : "%d", v->e.fd);
		if (it_sys_call_has_offset(v->e.call))
			snprintf(off, sizeof(off), "%" PRIu64, (uint64_t)v->e.offset);
		if (it_sys_call_has_count(v->e.call))
			snprintf(cnt, sizeof(cnt), "%" PRIu64, (uint64_t)v->e.count);
		ret_str(ret, sizeof(ret), v->e.ret);
		bool xattr = v->e.call >= IT_SYS_GETXATTR && v->e.call <= IT_SYS_FREMOVEXATTR;

		fprintf(f, "%-15s %7u %7u %-15.15s %-14s %9s %5s %10s %8s %9s %-5s %s%s%s%s\n",
			log_time(when, sizeof(when), c, v->e.ts_enter), v->e.pid, v->e.tid, v->comm,
			it_sys_call_name(v->e.call),
			ns_str(lat, sizeof(lat), v->e.ts_exit > v->e.ts_enter ? v->e.ts_exit - v->e.ts_enter : 0),
			fd, off, cnt, ret, it_sys_file_type_name(v->e.ftype), v->path,
			!*v->path2 ? "" : xattr ? " [xattr " : " -> ", v->path2,
			*v->path2 && xattr ? "]" : "");
	}
}

/* ---- JSON ---- */

static void json_calls(struct it_json *j, const struct it_sysan_results *r)
{
	it_json_name(j, "syscalls");
	it_json_array_start(j);
	for (size_t i = 0; i < r->ncalls; i++) {
		const struct it_sysan_call *c = &r->per_call[i];

		it_json_object_start(j);
		it_json_kv_string(j, "name", it_sys_call_name(c->call));
		it_json_kv_uint(j, "count", c->count);
		it_json_kv_uint(j, "errors", c->errors);
		it_json_kv_uint(j, "bytes", c->bytes);
		it_json_latency(j, "latency_ns", &c->lat);
		it_json_name(j, "block");
		it_json_object_start(j);
		it_json_kv_uint(j, "calls", c->block_calls);
		it_json_kv_uint(j, "ios", c->block_ios);
		it_json_kv_uint(j, "flushes", c->block_flushes);
		it_json_kv_uint(j, "bytes", c->block_bytes);
		it_json_latency(j, "block_ns", &c->block);
		it_json_latency(j, "above_block_ns", &c->above);
		it_json_object_end(j);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void json_files(struct it_json *j, const struct it_sysan_results *r)
{
	it_json_name(j, "files");
	it_json_array_start(j);
	for (size_t i = 0; i < r->nfiles; i++) {
		const struct it_sysan_file *x = &r->files[i];

		it_json_object_start(j);
		it_json_kv_string(j, "path", x->path);
		it_json_kv_string(j, "file_type", it_sys_file_type_name(x->ftype));
		it_json_kv_uint(j, "dev_major", IT_DEV_MAJOR(x->dev));
		it_json_kv_uint(j, "dev_minor", IT_DEV_MINOR(x->dev));
		it_json_kv_uint(j, "inode", x->ino);
		it_json_kv_uint(j, "first_seen_ns", x->tag_ts);
		it_json_kv_uint(j, "calls", x->calls);
		it_json_kv_uint(j, "errors", x->errors);
		it_json_kv_uint(j, "reads", x->reads);
		it_json_kv_uint(j, "writes", x->writes);
		it_json_kv_uint(j, "read_bytes", x->read_bytes);
		it_json_kv_uint(j, "write_bytes", x->write_bytes);
		it_json_kv_uint(j, "sequential", x->seq);
		it_json_kv_uint(j, "random", x->rnd);
		it_json_latency(j, "read_latency_ns", &x->read_lat);
		it_json_latency(j, "write_latency_ns", &x->write_lat);
		it_json_kv_uint(j, "syncs", x->syncs);
		it_json_latency(j, "sync_latency_ns", &x->sync_lat);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void json_threads(struct it_json *j, const struct it_sysan_results *r)
{
	it_json_kv_double(j, "thread_interval_s", (double)r->interval_ns / 1e9);
	it_json_name(j, "threads");
	it_json_array_start(j);
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct it_sysan_thread *t = &r->threads[i];

		it_json_object_start(j);
		it_json_kv_uint(j, "pid", t->pid);
		it_json_kv_uint(j, "tid", t->tid);
		it_json_name(j, "comm");
		it_json_stringn(j, t->comm, sizeof(t->comm));
		it_json_kv_uint(j, "calls", t->calls);
		it_json_kv_uint(j, "errors", t->errors);
		it_json_name(j, "calls_per_interval");
		it_json_array_start(j);
		for (size_t k = 0; k < r->nintervals; k++)
			it_json_uint(j, t->timeline[k]);
		it_json_array_end(j);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

/* The members of what a process or a role did. */
static void json_io(struct it_json *j, const struct it_sysan_io *io)
{
	it_json_kv_uint(j, "calls", io->calls);
	it_json_kv_uint(j, "errors", io->errors);
	it_json_kv_uint(j, "read_bytes", io->read_bytes);
	it_json_kv_uint(j, "write_bytes", io->write_bytes);
	it_json_kv_uint(j, "block_ios", io->block_ios);
	it_json_kv_uint(j, "block_bytes", io->block_bytes);
	it_json_kv_uint(j, "syncs", io->syncs);
	it_json_latency(j, "sync_latency_ns", &io->sync_lat);
}

static void json_procs(struct it_json *j, const struct it_sysan_results *r)
{
	it_json_name(j, "processes");
	it_json_array_start(j);
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct it_sysan_proc *p = &r->procs[i];

		it_json_object_start(j);
		it_json_kv_uint(j, "pid", p->pid);
		it_json_name(j, "comm");
		it_json_stringn(j, p->comm, sizeof(p->comm));
		it_json_kv_string(j, "title", p->title);
		it_json_kv_uint(j, "threads", p->threads);
		json_io(j, &p->io);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void json_roles(struct it_json *j, const struct it_sysan_results *r)
{
	it_json_name(j, "roles");
	it_json_array_start(j);
	for (size_t i = 0; i < r->nroles; i++) {
		it_json_object_start(j);
		it_json_kv_string(j, "role", r->roles[i].name);
		it_json_kv_uint(j, "processes", r->roles[i].procs);
		json_io(j, &r->roles[i].io);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void json_by_comm(struct it_json *j, const char *name, const struct it_sysan_background *v,
			 size_t n, const struct it_analyzer *a)
{
	it_json_name(j, name);
	it_json_array_start(j);
	for (size_t i = 0; i < n; i++) {
		it_json_object_start(j);
		it_json_kv_string(j, "comm", a ? it_analyzer_comm(a, v[i].comm) : "");
		it_json_kv_uint(j, "ios", v[i].ios);
		it_json_kv_uint(j, "bytes", v[i].bytes);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void json_bfiles(struct it_json *j, const struct it_sysan_results *r)
{
	it_json_name(j, "files");
	it_json_array_start(j);
	for (size_t i = 0; i < r->nbfiles; i++) {
		const struct it_sysan_bfile *x = &r->bfiles[i];

		it_json_object_start(j);
		it_json_name(j, "path");
		if (x->path)
			it_json_string(j, x->path);
		else
			it_json_null(j);
		it_json_kv_uint(j, "dev_major", IT_DEV_MAJOR(x->dev));
		it_json_kv_uint(j, "dev_minor", IT_DEV_MINOR(x->dev));
		it_json_kv_uint(j, "inode", x->ino);
		it_json_kv_uint(j, "first_seen_ns", x->tag_ts);
		it_json_kv_uint(j, "ios", x->ios);
		it_json_kv_uint(j, "bytes", x->bytes);
		it_json_kv_uint(j, "read_ios", x->read_ios);
		it_json_kv_uint(j, "read_bytes", x->read_bytes);
		it_json_kv_uint(j, "write_ios", x->write_ios);
		it_json_kv_uint(j, "write_bytes", x->write_bytes);
		it_json_kv_uint(j, "background_ios", x->bg_ios);
		it_json_kv_uint(j, "background_bytes", x->bg_bytes);
		it_json_latency(j, "q2c_ns", &x->q2c);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void json_block(struct it_json *j, const struct it_sysan_results *r,
		       const struct it_analyzer *a)
{
	it_json_name(j, "syscall_block");
	it_json_object_start(j);
	it_json_kv_uint(j, "owned_ios", r->owned_ios);
	it_json_kv_uint(j, "owned_bytes", r->owned_bytes);
	it_json_kv_uint(j, "background_ios", r->background_ios);
	it_json_kv_uint(j, "background_bytes", r->background_bytes);
	json_by_comm(j, "background", r->background, r->nbackground, a);
	it_json_kv_uint(j, "unattributed_ios", r->unattributed_ios);
	it_json_kv_uint(j, "unattributed_bytes", r->unattributed_bytes);
	json_by_comm(j, "unattributed", r->unattributed, r->nunattributed, a);
	json_bfiles(j, r);
	it_json_object_end(j);
}

void it_report_sys_json_event(struct it_json *j, const struct it_sysan_event *v)
{
	char err[32];

	it_json_object_start(j);
	it_json_kv_uint(j, "ts_ns", v->e.ts_enter);
	it_json_kv_uint(j, "exit_ns", v->e.ts_exit);
	it_json_kv_uint(j, "pid", v->e.pid);
	it_json_kv_uint(j, "tid", v->e.tid);
	it_json_kv_uint(j, "ppid", v->e.ppid);
	it_json_kv_string(j, "comm", v->comm);
	it_json_kv_uint(j, "cgroup", v->e.cgroup);
	it_json_kv_string(j, "call", it_sys_call_name(v->e.call));
	it_json_kv_int(j, "fd", v->e.fd);
	it_json_name(j, "offset");
	if (it_sys_call_has_offset(v->e.call))
		it_json_uint(j, v->e.offset);
	else
		it_json_null(j);
	it_json_kv_bool(j, "offset_from_position", v->e.sflags & IT_SYSF_FPOS);
	it_json_kv_bool(j, "append", v->e.sflags & IT_SYSF_APPEND);
	it_json_name(j, "count");
	if (it_sys_call_has_count(v->e.call))
		it_json_uint(j, v->e.count);
	else
		it_json_null(j);
	it_json_kv_int(j, "ret", v->e.ret);
	if (v->e.ret < 0 && v->e.ret > -4096 && strerrorname_np((int)-v->e.ret))
		snprintf(err, sizeof(err), "%s", strerrorname_np((int)-v->e.ret));
	else
		err[0] = 0;
	it_json_kv_string(j, "errno", err);
	it_json_kv_uint(j, "flags", v->e.flags);
	it_json_kv_uint(j, "mode", v->e.mode);
	it_json_kv_uint(j, "whence", v->e.whence);
	it_json_kv_uint(j, "aux", v->e.aux);
	it_json_kv_string(j, "file_type", it_sys_file_type_name(v->e.ftype));
	it_json_kv_string(j, "path", v->path);
	if (*v->path2)
		it_json_kv_string(j, (v->e.call >= IT_SYS_GETXATTR && v->e.call <= IT_SYS_FREMOVEXATTR)
				  ? "xattr" : "new_path", v->path2);
	if (v->e.tag_ts) {
		it_json_name(j, "tag");
		it_json_object_start(j);
		it_json_kv_uint(j, "dev_major", IT_DEV_MAJOR(v->e.dev));
		it_json_kv_uint(j, "dev_minor", IT_DEV_MINOR(v->e.dev));
		it_json_kv_uint(j, "inode", v->e.ino);
		it_json_kv_uint(j, "first_seen_ns", v->e.tag_ts);
		it_json_kv_bool(j, "directory_of_name", v->e.sflags & IT_SYSF_TAG_DIR);
		it_json_object_end(j);
	}
	it_json_kv_uint(j, "latency_ns", v->e.ts_exit - v->e.ts_enter);
	it_json_kv_uint(j, "block_ios", v->block_ios);
	it_json_kv_uint(j, "block_ns", v->block_ns);
	it_json_object_end(j);
}

void it_report_sys_json(struct it_json *j, const struct it_sysan_results *r,
			const struct it_analyzer *a)
{
	it_json_kv_uint(j, "syscall_calls", r->calls);
	it_json_kv_uint(j, "syscall_errors", r->errors);
	json_calls(j, r);
	json_files(j, r);
	json_threads(j, r);
	json_procs(j, r);
	json_roles(j, r);
	json_block(j, r, a);
}
