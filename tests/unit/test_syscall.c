// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer off the kernel: its records through the trace file
 * (beside block events, which must read as before), and the analysis on a
 * synthetic stream: paths and names resolved, relative names made
 * absolute, per call / per file sums, sequential offsets, block time as
 * the union of a call's requests, background I/O, the event list order.
 */
#include "harness.h"
#include "layer_table.h"
#include "tracefile.h"
#include "layers/syscall/report.h"
#include "layers/syscall/sysan.h"
#include "analyze/report.h"

#include <stdlib.h>
#include <unistd.h>

static void make_host(struct it_host_rec *h)
{
	memset(h, 0, sizeof(*h));
	strcpy(h->hostname, "testhost");
	strcpy(h->clock, "monotonic");
	strcpy(h->layers, "block,syscall");
	h->ncpus = 2;
	h->start_monotonic_ns = 1000;
}

/* A path record for components given leaf first ("b.log", "tmp"). */
static size_t make_path(unsigned char *buf, uint32_t dev, uint64_t ino, uint64_t ts, uint8_t ft,
			const char *const *comps, int n)
{
	struct it_sys_path p = { .rec = IT_SREC_PATH, .ftype = ft, .dev = dev, .ino = ino,
				 .tag_ts = ts, .ncomp = (uint16_t)n };
	size_t off = sizeof(p);

	for (int i = 0; i < n; i++) {
		size_t l = strlen(comps[i]) + 1;
		memcpy(buf + off, comps[i], l);
		off += l;
	}
	p.len = (uint16_t)(off - sizeof(p));
	memcpy(buf, &p, sizeof(p));
	return off;
}

static size_t make_name(unsigned char *buf, uint32_t tid, uint64_t ts_enter, uint8_t which,
			const char *s)
{
	struct it_sys_name n = { .rec = IT_SREC_NAME, .len = (uint16_t)strlen(s), .which = which,
				 .tid = tid, .ts_enter = ts_enter };

	memcpy(buf, &n, sizeof(n));
	memcpy(buf + sizeof(n), s, n.len);
	return sizeof(n) + n.len;
}

static struct it_sys_event call(uint16_t c, uint32_t tid, uint64_t t0, uint64_t t1, int64_t ret,
				uint64_t off)
{
	struct it_sys_event e = { .rec = IT_SREC_CALL, .call = c, .pid = 100, .tid = tid,
				  .ts_enter = t0, .ts_exit = t1, .ret = ret, .offset = off,
				  .fd = 3 };
	return e;
}

static void tag(struct it_sys_event *e, uint64_t ino, uint64_t ts)
{
	e->dev = IT_MKDEV(254, 0);
	e->ino = ino;
	e->tag_ts = ts;
	e->ftype = IT_FT_REG;
}

/* A record as record_syscall.c's sink files it: calls and side records. */
static int add_sys(struct it_writer *w, const void *rec, size_t len)
{
	uint16_t type;

	memcpy(&type, rec, sizeof(type));
	return it_writer_add_record(w, 0, IT_LAYER_SYSCALL,
				    type == IT_SREC_CALL ? IT_CHUNK_SYSCALLS : IT_CHUNK_SYSSIDE,
				    rec, len);
}

TEST(syscall_tracefile_round_trip)
{
	char path[] = "/tmp/iotrail-unit-sys.XXXXXX", err[256];
	int fd = mkstemp(path);
	struct it_host_rec h;
	struct it_event ev[3] = { { .ts_ns = 10, .type = IT_EV_BIO_QUEUE, .layer = IT_LAYER_BLOCK },
				  { .ts_ns = 20, .type = IT_EV_RQ_ISSUE, .layer = IT_LAYER_BLOCK },
				  { .ts_ns = 30, .type = IT_EV_RQ_COMPLETE, .layer = IT_LAYER_BLOCK } };
	unsigned char rec[256];
	static const char *const comps[] = { "b.log", "tmp" };
	uint64_t drops[2] = { 3, 4 };
	struct it_writer *w;
	struct it_reader *r;
	const struct it_event *evs;
	size_t n, total = 0;

	ASSERT_TRUE(fd >= 0, "mkstemp");
	close(fd);
	make_host(&h);
	struct it_layer_rec layers[2] = { *it_layer_builtin(IT_LAYER_BLOCK),
					  *it_layer_builtin(IT_LAYER_SYSCALL) };
	struct it_trace_head head = { .host = &h, .layers = layers, .nlayers = 2 };
	w = it_writer_open(path, &head, err, sizeof(err));
	ASSERT_NOT_NULL(w, "writer");
	if (!w)
		return;
	it_writer_add_events(w, IT_LAYER_BLOCK, ev, 2);
	for (int i = 0; i < 20000; i++) { /* more than one SYSCALLS chunk */
		struct it_sys_event e = call(IT_SYS_PREAD64, 7, 100 + i, 200 + i, 4096, i * 4096ull);
		ASSERT_EQ(add_sys(w, &e, sizeof(e)), 0, "add call");
	}
	ASSERT_EQ(add_sys(w, rec, make_path(rec, 1, 2, 3, IT_FT_REG, comps, 2)), 0,
		  "add path");
	ASSERT_EQ(add_sys(w, rec, make_name(rec, 7, 100, 0, "x.log")), 0, "add name");
	it_writer_add_events(w, IT_LAYER_BLOCK, ev + 2, 1);
	it_writer_set_drops(w, 0, IT_LAYER_SYSCALL, drops, 2);
	ASSERT_EQ(it_writer_close(w, 999), 0, "close");

	/* the block reader sees its events and a complete file, as before */
	r = it_reader_open(path, err, sizeof(err));
	ASSERT_NOT_NULL(r, "reader");
	if (!r)
		return;
	while (it_reader_next(r, &evs, &n) > 0)
		total += n;
	struct it_reader_status st;
	it_reader_status(r, &st);
	ASSERT_EQ(total, 3, "block events");
	ASSERT_TRUE(st.complete && !st.truncated, "complete");
	it_reader_close(r);

	/* the records reader: calls, then side records and drops */
	uint16_t types[] = { IT_CHUNK_SYSCALLS }, t2[] = { IT_CHUNK_SYSSIDE };
	struct it_losses lost;
	const void *p;
	uint16_t type;
	uint32_t count;
	size_t len, calls = 0, sides = 0, chunks = 0;
	uint64_t last_off = 0, dsum = 0;
	bool ordered = true;

	r = it_reader_open_records(path, types, 1, err, sizeof(err));
	ASSERT_NOT_NULL(r, "records reader");
	if (!r)
		return;
	while (it_reader_next_records(r, &type, &p, &len, &count) > 0) {
		const struct it_sys_event *e = p;
		chunks++;
		for (uint32_t i = 0; i < count; i++, calls++) {
			ordered &= calls == 0 || e[i].offset == last_off + 4096;
			last_off = e[i].offset;
		}
	}
	it_reader_status(r, &st);
	ASSERT_EQ(calls, 20000, "calls");
	ASSERT_EQ(chunks, 3, "SYSCALLS chunks of 1 MiB (9362 calls)");
	ASSERT_TRUE(ordered, "calls in order");
	ASSERT_TRUE(st.complete, "complete through the records reader");
	it_reader_close(r);

	r = it_reader_open_records(path, t2, 1, err, sizeof(err));
	ASSERT_NOT_NULL(r, "side reader");
	if (!r)
		return;
	while (it_reader_next_records(r, &type, &p, &len, &count) > 0) {
		size_t off = 0, rl;
		const void *x;
		while ((x = it_sys_side_next(p, len, &off, &rl)))
			sides++;
		ASSERT_EQ(off, len, "side records fill the chunk");
	}
	ASSERT_EQ(sides, 2, "side records");
	it_reader_losses(r, 0, IT_LAYER_SYSCALL, &lost);
	if (ASSERT_TRUE(lost.known && lost.ncpu == 2, "the layer's DROPS"))
		dsum = lost.per_cpu[0] + lost.per_cpu[1];
	ASSERT_EQ(dsum, 7, "syscall drops");
	it_reader_close(r);
	unlink(path);
}

TEST(syscall_path_join)
{
	unsigned char buf[256];
	static const char *const comps[] = { "app.log", "logs", "var" };
	char out[64];

	make_path(buf, 1, 2, 3, IT_FT_REG, comps, 3);
	it_sys_path_join((const struct it_sys_path *)buf, (const char *)buf + sizeof(struct it_sys_path),
			 out, sizeof(out));
	ASSERT_STREQ(out, "/var/logs/app.log", "joined");
	make_path(buf, 1, 77, 3, IT_FT_FIFO, NULL, 0);
	it_sys_path_join((const struct it_sys_path *)buf, (const char *)buf + sizeof(struct it_sys_path),
			 out, sizeof(out));
	ASSERT_STREQ(out, "pipe:[77]", "pipe");
	make_path(buf, 1, 2, 3, IT_FT_REG, comps, 3);
	it_sys_path_join((const struct it_sys_path *)buf, (const char *)buf + sizeof(struct it_sys_path),
			 out, 8);
	ASSERT_EQ(strlen(out), 7, "truncated to the buffer");
}

static struct it_trail trail(uint32_t tid, uint64_t q, uint64_t c, uint32_t comm)
{
	struct it_trail t = { .tid = tid, .pid = 100, .bytes = 4096, .comm = comm };

	t.ts[IT_PT_Q] = q;
	t.ts[IT_PT_D] = q + 1;
	t.ts[IT_PT_C] = c;
	return t;
}

TEST(syscall_analysis)
{
	struct it_sysan_opts o = { .events = true, .start_ns = 1000 };
	struct it_sysan *s = it_sysan_new(&o);
	unsigned char rec[256];
	static const char *const file[] = { "a.dat", "data" }, *const dir[] = { "work" };
	struct it_sys_task task = { .rec = IT_SREC_TASK, .pid = 100, .tid = 7, .ts = 1 };
	struct it_trail t;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	memcpy(task.comm, "db", 3);
	ASSERT_EQ(it_sysan_side(s, &task, sizeof(task)), 0, "task");
	ASSERT_EQ(it_sysan_side(s, rec, make_path(rec, IT_MKDEV(254, 0), 5, 50, IT_FT_REG, file, 2)),
		  0, "file path");
	ASSERT_EQ(it_sysan_side(s, rec, make_path(rec, IT_MKDEV(254, 0), 9, 90, IT_FT_DIR, dir, 1)),
		  0, "dir path");
	ASSERT_EQ(it_sysan_side(s, rec, make_name(rec, 7, 3000, 0, "rel/b.txt")), 0, "name");
	/* two overlapping requests in the first read, one outside any call */
	t = trail(7, 1100, 1500, 1);
	it_sysan_trail(s, &t);
	t = trail(7, 1200, 1800, 1);
	it_sysan_trail(s, &t);
	t = trail(7, 2500, 2600, 1);
	it_sysan_trail(s, &t);
	t = trail(99, 1300, 1400, 2); /* another thread: background */
	it_sysan_trail(s, &t);

	struct it_sys_event e[4];
	e[1] = call(IT_SYS_PREAD64, 7, 2000, 2100, 4096, 4096); /* sequential after e[0] */
	tag(&e[1], 5, 50);
	e[0] = call(IT_SYS_PREAD64, 7, 1000, 2000, 4096, 0);
	tag(&e[0], 5, 50);
	e[2] = call(IT_SYS_UNLINK, 7, 3000, 3100, -2, 0);
	e[2].sflags = IT_SYSF_NAME | IT_SYSF_TAG_DIR;
	tag(&e[2], 9, 90);
	e[2].ftype = IT_FT_DIR;
	e[3] = call(IT_SYS_PWRITE64, 7, 4000, 4200, 100, 0);
	tag(&e[3], 5, 50);
	/* a thread's calls come in order; the list is sorted anyway */
	ASSERT_EQ(it_sysan_calls(s, e, 2), 0, "calls");
	ASSERT_EQ(it_sysan_calls(s, e + 3, 1), 0, "a later call first");
	ASSERT_EQ(it_sysan_calls(s, e + 2, 1), 0, "calls");
	it_sysan_finish(s, 5000);
	ASSERT_EQ(it_sysan_error(s), 0, "no error");

	const struct it_sysan_results *r = it_sysan_results(s);
	ASSERT_EQ(r->calls, 4, "calls");
	ASSERT_EQ(r->errors, 1, "errors");
	ASSERT_EQ(r->per_call[0].call, IT_SYS_PREAD64, "most frequent first");
	ASSERT_EQ(r->per_call[0].count, 2, "preads");
	ASSERT_EQ(r->per_call[0].bytes, 8192, "pread bytes");
	ASSERT_EQ(r->per_call[0].block_calls, 1, "one pread issued I/O");
	ASSERT_EQ(r->per_call[0].block_ios, 2, "its two requests");
	/* union of [1100,1500] and [1200,1800]: 700 ns */
	ASSERT_EQ(r->per_call[0].block.sum, 700, "block time is the union");
	ASSERT_EQ(r->per_call[0].above.sum, 300, "the rest is above the block layer");
	ASSERT_EQ(r->owned_ios, 2, "owned");
	ASSERT_EQ(r->background_ios, 2, "background: the orphan and the other thread");
	ASSERT_EQ(r->nevents, 4, "events");
	ASSERT_EQ(r->events[0].e.ts_enter, 1000, "sorted by entry");
	ASSERT_STREQ(r->events[0].path, "/data/a.dat", "tag path");
	ASSERT_STREQ(r->events[0].comm, "db", "comm");
	ASSERT_EQ(r->events[0].block_ns, 700, "event block time");
	ASSERT_STREQ(r->events[2].path, "/work/rel/b.txt", "relative name under its directory");
	ASSERT_STREQ(r->files[0].path, "/data/a.dat", "busiest file");
	ASSERT_EQ(r->files[0].calls, 3, "file calls");
	ASSERT_EQ(r->files[0].read_bytes, 8192, "file reads");
	ASSERT_EQ(r->files[0].write_bytes, 100, "file writes");
	ASSERT_EQ(r->files[0].seq, 1, "second read is sequential");
	ASSERT_EQ(r->nthreads, 1, "threads");
	ASSERT_STREQ(r->threads[0].comm, "db", "thread comm");
	uint64_t sum = 0;
	for (size_t i = 0; i < r->nintervals; i++)
		sum += r->threads[0].timeline[i];
	ASSERT_EQ(sum, 4, "timeline holds every call");
	ASSERT_EQ(r->unmatched_names, 0, "every name found its call");
	it_sysan_free(s);
}

static size_t make_title(unsigned char *buf, uint32_t pid, const char *title)
{
	struct it_sys_title t = { .rec = IT_SREC_TITLE, .len = (uint16_t)strlen(title), .pid = pid };

	memcpy(buf, &t, sizeof(t));
	memcpy(buf + sizeof(t), title, t.len);
	return sizeof(t) + t.len;
}

/* Process titles (a process's first title record counts), per-process sums
 * with the block I/O its calls owned, and fsync/fdatasync latency per file
 * and per process; a title record walks like any side record. */
TEST(syscall_titles_and_syncs)
{
	struct it_sysan_opts o = { .start_ns = 1000 };
	struct it_sysan *s = it_sysan_new(&o);
	unsigned char rec[256], chunk[512];
	static const char *const wal[] = { "000001", "pg_wal" };
	struct it_sys_task task = { .rec = IT_SREC_TASK, .pid = 200, .tid = 201, .ts = 1 };
	struct it_sys_event e[4];
	struct it_trail t;
	size_t off = 0, len = 0, reclen, n = 0;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	memcpy(task.comm, "postgres", 9);
	ASSERT_EQ(it_sysan_side(s, &task, sizeof(task)), 0, "task");
	ASSERT_EQ(it_sysan_side(s, rec, make_title(rec, 200, "postgres: walwriter")), 0, "title");
	ASSERT_EQ(it_sysan_side(s, rec, make_title(rec, 200, "postgres: later")), 0, "second title");
	ASSERT_EQ(it_sysan_side(s, rec, make_title(rec, 100, "")), 0, "empty title");
	ASSERT_EQ(it_sysan_side(s, rec, make_path(rec, IT_MKDEV(254, 0), 5, 50, IT_FT_REG, wal, 2)),
		  0, "path");
	/* the walwriter's fdatasync issues a flush request */
	t = trail(201, 1100, 1400, 1);
	t.pid = 200;
	t.op = IT_OP_FLUSH;
	it_sysan_trail(s, &t);
	e[0] = call(IT_SYS_FDATASYNC, 201, 1000, 1500, 0, 0);
	e[0].pid = 200;
	e[1] = call(IT_SYS_FSYNC, 201, 2000, 2100, 0, 0);
	e[1].pid = 200;
	e[2] = call(IT_SYS_PWRITE64, 201, 3000, 3050, 8192, 0);
	e[2].pid = 200;
	e[3] = call(IT_SYS_FDATASYNC, 7, 4000, 4300, 0, 0); /* pid 100, no title */
	for (int i = 0; i < 4; i++)
		tag(&e[i], 5, 50);
	ASSERT_EQ(it_sysan_calls(s, e, 4), 0, "calls");
	it_sysan_finish(s, 5000);
	ASSERT_EQ(it_sysan_error(s), 0, "no error");

	const struct it_sysan_results *r = it_sysan_results(s);
	ASSERT_STREQ(it_sysan_title(s, 200), "postgres: walwriter", "the first title counts");
	ASSERT_STREQ(it_sysan_title(s, 300), "", "no title record");
	if (ASSERT_EQ(r->nprocs, 2, "processes")) {
		ASSERT_EQ(r->procs[0].pid, 200, "most calls first");
		ASSERT_STREQ(r->procs[0].title, "postgres: walwriter", "title");
		ASSERT_STREQ(r->procs[0].comm, "postgres", "comm");
		ASSERT_EQ(r->procs[0].io.calls, 3, "calls");
		ASSERT_EQ(r->procs[0].io.write_bytes, 8192, "bytes written");
		ASSERT_EQ(r->procs[0].io.syncs, 2, "fsync and fdatasync");
		ASSERT_EQ(r->procs[0].io.sync_lat.sum, 600, "sync time");
		ASSERT_EQ(r->procs[0].io.sync_lat.max, 500, "longest sync");
		ASSERT_EQ(r->procs[0].io.block_ios, 1, "the flush its fdatasync owned");
		ASSERT_STREQ(r->procs[1].title, "", "an empty title");
		ASSERT_EQ(r->procs[1].io.syncs, 1, "its fdatasync");
	}
	if (ASSERT_EQ(r->nbprocs, 1, "block I/O by process")) {
		uint64_t n = 0;

		ASSERT_EQ(r->bprocs[0].pid, 200, "the process that queued it");
		ASSERT_STREQ(r->bprocs[0].title, "postgres: walwriter", "its title");
		for (size_t i = 0; i < r->nintervals; i++)
			n += r->bprocs[0].timeline[i];
		ASSERT_EQ(n, 1, "its timeline holds its I/O");
		ASSERT_EQ(r->bprocs[0].timeline[(1400 - 1000) / r->interval_ns], 1,
			  "in the interval of its completion");
	}
	if (ASSERT_EQ(r->nfiles, 1, "files")) {
		ASSERT_STREQ(r->files[0].path, "/pg_wal/000001", "WAL file");
		ASSERT_EQ(r->files[0].syncs, 3, "syncs of the file");
		ASSERT_EQ(r->files[0].sync_lat.sum, 900, "their time");
	}
	it_sysan_free(s);

	/* in a SYSSIDE chunk: title records framed like the others */
	len = make_title(chunk, 200, "postgres: checkpointer");
	len = (len + 7) & ~(size_t)7;
	memcpy(chunk + len, &task, sizeof(task));
	len += sizeof(task);
	while (it_sys_side_next(chunk, len, &off, &reclen))
		n++;
	ASSERT_EQ(n, 2, "title and task records walked");
}

struct streamed {
	size_t n;
	uint64_t ts[4], block_ns[4];
	const char *comm[4];
};

static void on_event(const struct it_sysan_event *v, void *ctx)
{
	struct streamed *st = ctx;

	if (st->n < 4) {
		st->ts[st->n] = v->e.ts_enter;
		st->block_ns[st->n] = v->block_ns;
		st->comm[st->n] = v->comm;
	}
	st->n++;
}

/* --json --events: each event is handed out once complete (its block
 * part in), in the order the calls were recorded, with the comm the
 * thread had then; nothing is kept. */
TEST(syscall_events_streamed)
{
	struct streamed st = { 0 };
	struct it_sysan_opts o = { .start_ns = 1000, .block = true, .on_event = on_event, .ctx = &st };
	struct it_sysan *s = it_sysan_new(&o);
	struct it_sys_task task = { .rec = IT_SREC_TASK, .pid = 100, .tid = 7, .ts = 1 };
	struct it_sys_event e[3];
	struct it_trail t;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	memcpy(task.comm, "sh", 3);
	ASSERT_EQ(it_sysan_side(s, &task, sizeof(task)), 0, "task");
	task.ts = 2500; /* exec: a new comm from then on */
	memcpy(task.comm, "db", 3);
	ASSERT_EQ(it_sysan_side(s, &task, sizeof(task)), 0, "task after exec");
	e[0] = call(IT_SYS_PREAD64, 7, 1000, 2000, 4096, 0);
	e[1] = call(IT_SYS_FSYNC, 7, 3000, 4000, 0, 0);
	e[2] = call(IT_SYS_PREAD64, 7, 2100, 2200, 4096, 0); /* recorded after the fsync */
	ASSERT_EQ(it_sysan_calls(s, e, 3), 0, "calls");
	ASSERT_EQ(st.n, 0, "no event before its block part is known");
	t = trail(7, 3100, 3600, 1);
	it_sysan_trail(s, &t);
	it_sysan_block_watermark(s, 5000);
	ASSERT_EQ(st.n, 3, "every event once the watermark passed them");
	it_sysan_finish(s, 6000);
	ASSERT_EQ(st.n, 3, "each event once");
	ASSERT_EQ(it_sysan_results(s)->nevents, 0, "nothing kept");
	ASSERT_EQ(st.ts[1], 3000, "in the order recorded");
	ASSERT_EQ(st.block_ns[1], 500, "the fsync's block time");
	ASSERT_STREQ(st.comm[0], "sh", "the comm before the exec");
	ASSERT_STREQ(st.comm[1], "db", "the comm after it");
	it_sysan_free(s);
}

/* Wall-clock times of the report: the trace's start plus the monotonic
 * offset, UTC, to the microsecond; nothing without a start time. */
TEST(report_wall_clock)
{
	char buf[32];

	/* 2026-11-23 02:29:21.792131357 UTC */
	ASSERT_STREQ(it_wall_clock(buf, sizeof(buf), 1795400961792131357ull, 1000, 2500),
		     "02:29:21.792132", "start + 1.5 us");
	ASSERT_STREQ(it_wall_clock(buf, sizeof(buf), 1795400961792131357ull, 1000, 500),
		     "02:29:21.792131", "before the start: the start");
	ASSERT_STREQ(it_wall_clock(buf, sizeof(buf), 1795400961792131357ull, 1000,
				   1000 + 3600000000000ull), "03:29:21.792131", "an hour later");
	ASSERT_STREQ(it_wall_clock(buf, sizeof(buf), 0, 1000, 2500), "", "no start time");
}

/* One pass: the records come in any interleaving. A call waits for the
 * trails its thread may have queued during it (the block watermark) and
 * for its side records (a later side chunk), and is summed up in file
 * order (its block part in its thread's order: a call of another thread
 * does not wait); the result is the one of the sides-and-trails-first
 * order. */
TEST(syscall_one_pass_waits)
{
	struct it_sysan_opts o = { .events = true, .start_ns = 1000, .block = true };
	struct it_sysan *s = it_sysan_new(&o);
	unsigned char rec[256];
	static const char *const file[] = { "a.dat", "data" };
	struct it_sys_event e[3];
	struct it_trail t;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	e[0] = call(IT_SYS_PREAD64, 7, 1000, 2000, 4096, 0);
	tag(&e[0], 5, 50);
	e[1] = call(IT_SYS_PREAD64, 7, 2000, 2100, 4096, 4096);
	tag(&e[1], 5, 50);
	e[2] = call(IT_SYS_FSYNC, 8, 1500, 1600, 0, 0); /* no file tag: waits for trails only */
	/* the calls first: nothing is summed up yet */
	ASSERT_EQ(it_sysan_calls(s, e, 3), 0, "calls");
	ASSERT_EQ(it_sysan_queued(s), 3, "all wait: no trail and no path in yet");
	/* the path comes in a later side chunk; the trails are not in yet */
	ASSERT_EQ(it_sysan_side(s, rec, make_path(rec, IT_MKDEV(254, 0), 5, 50, IT_FT_REG, file, 2)),
		  0, "path");
	it_sysan_side_chunk_end(s);
	ASSERT_EQ(it_sysan_queued(s), 3, "still waiting for the block trails");
	t = trail(7, 1100, 1500, 1);
	it_sysan_trail(s, &t);
	it_sysan_block_watermark(s, 1900); /* e[0] exits at 2000: not yet */
	ASSERT_EQ(it_sysan_queued(s), 2, "e[0] waits, so does e[1] of its thread; not e[2] of another");
	t = trail(7, 1200, 2500, 1); /* queued in e[0], completes after it */
	it_sysan_trail(s, &t);
	it_sysan_block_watermark(s, 2050);
	ASSERT_EQ(it_sysan_queued(s), 1, "e[0] summed up; e[1] exits at 2100");
	it_sysan_block_watermark(s, 3000);
	ASSERT_EQ(it_sysan_queued(s), 0, "all summed up");
	it_sysan_finish(s, 5000);
	ASSERT_EQ(it_sysan_error(s), 0, "no error");

	const struct it_sysan_results *r = it_sysan_results(s);
	ASSERT_EQ(r->calls, 3, "calls");
	ASSERT_EQ(r->unknown_tags, 0, "the late path was found");
	ASSERT_EQ(r->owned_ios, 2, "both trails owned by e[0]");
	ASSERT_EQ(r->background_ios, 0, "no background");
	ASSERT_EQ(r->nevents, 3, "events");
	ASSERT_STREQ(r->events[0].path, "/data/a.dat", "path of a call that came before it");
	/* union of [1100,1500] and [1200,2000 (clipped to the exit)] */
	ASSERT_EQ(r->events[0].block_ns, 900, "block time of e[0]");
	ASSERT_EQ(r->events[0].block_ios, 2, "its I/Os");
	ASSERT_STREQ(r->files[0].path, "/data/a.dat", "file");
	ASSERT_EQ(r->files[0].seq, 1, "e[1] follows e[0]: file order kept");
	it_sysan_free(s);
}

struct call_order {
	uint64_t exit[64];
	uint32_t block_ios[64];
	size_t n;
};

static void on_call_order(uint32_t tid, uint16_t call, uint64_t ts_enter, uint64_t ts_exit,
			  uint64_t block_ns, uint32_t block_ios, void *ctx)
{
	struct call_order *o = ctx;

	(void)tid, (void)call, (void)ts_enter, (void)block_ns;
	if (o->n < 64) {
		o->exit[o->n] = ts_exit;
		o->block_ios[o->n] = block_ios;
	}
	o->n++;
}

/* An I/O whose completion was lost stays open until the block layer's
 * horizon (60 s): it holds back the calls of its own thread, which may
 * own it, and no other thread's. Thread 9 (no calls: a kworker) and
 * thread 8 each have an I/O open; thread 7's calls stream past them,
 * each owning a trail, handed in as the report does (trails, the calls,
 * then what is still open). Thread 8's call waits until its slow I/O
 * completes, then owns it; the calls are handed out in file order. */
TEST(syscall_lost_completion_holds_its_thread_only)
{
	const uint64_t base = 1000000000000ull, ms = 1000000ull;
	struct call_order order = { 0 };
	struct it_sysan_opts o = { .start_ns = base, .block = true, .on_call = on_call_order,
				   .ctx = &order };
	struct it_sysan *s = it_sysan_new(&o);
	struct it_open_trail open[2] = { { .tid = 9, .q = base + 1 * ms },
					 { .tid = 8, .q = base + 3 * ms } };
	struct it_sys_event e[2];
	struct it_trail t;
	size_t most = 0;
	bool in_order = true;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	e[0] = call(IT_SYS_FSYNC, 8, base + 2 * ms, base + 4 * ms, 0, 0); /* owns the open one */
	ASSERT_EQ(it_sysan_calls(s, e, 1), 0, "thread 8's call");
	for (unsigned k = 0; k < 50; k++) { /* 50 s, a call of thread 7 every second */
		uint64_t t0 = base + (k + 1) * 1000 * ms;

		t = trail(7, t0 + 1 * ms, t0 + 2 * ms, 1);
		it_sysan_trail(s, &t);
		e[0] = call(IT_SYS_PREAD64, 7, t0, t0 + 3 * ms, 4096, 0);
		ASSERT_EQ(it_sysan_calls(s, e, 1), 0, "thread 7's call");
		if (k == 10) { /* thread 8 again: behind its first call */
			e[0] = call(IT_SYS_PREAD64, 8, t0 + 4 * ms, t0 + 5 * ms, 4096, 0);
			ASSERT_EQ(it_sysan_calls(s, e, 1), 0, "thread 8's second call");
		}
		it_sysan_block_open(s, t0 + 500 * ms, open, 2);
		if (it_sysan_queued(s) > most)
			most = it_sysan_queued(s);
	}
	ASSERT_EQ(most, 2, "only thread 8's calls wait (the old watermark held all 51)");
	ASSERT_EQ(order.n, 0, "handed out in file order: none before thread 8's first");
	t = trail(8, base + 3 * ms, base + 50500 * ms, 1); /* thread 8's I/O completes */
	it_sysan_trail(s, &t);
	it_sysan_block_open(s, base + 51000 * ms, open, 1); /* only thread 9's open now */
	ASSERT_EQ(it_sysan_queued(s), 0, "every call summed up");
	ASSERT_EQ(order.n, 52, "every call handed out");
	for (size_t i = 1; i < order.n && i < 64; i++)
		in_order &= order.exit[i] > order.exit[i - 1]; /* as written: by exit */
	ASSERT_TRUE(in_order, "in file order");
	ASSERT_EQ(order.block_ios[0], 1, "thread 8's fsync owns its slow I/O");
	it_sysan_finish(s, base + 60000 * ms);
	const struct it_sysan_results *r = it_sysan_results(s);
	ASSERT_EQ(r->owned_ios, 51, "thread 7's 50 and thread 8's one");
	ASSERT_EQ(r->background_ios, 0, "none unowned");
	it_sysan_free(s);
}

/* Trails are settled once no later call of their thread can own them:
 * owned ones, those between two calls, and those of threads without
 * calls (at the end) go to their sums; the files' ones wait for the end
 * (their tag), the rest is not kept. */
TEST(syscall_one_pass_settles_trails)
{
	struct it_sysan_opts o = { .start_ns = 1000, .block = true };
	struct it_sysan *s = it_sysan_new(&o);
	struct it_sys_event e[2];
	struct it_trail t;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	t = trail(7, 1500, 1700, 1); /* in e[0] */
	it_sysan_trail(s, &t);
	t = trail(7, 2500, 2600, 1); /* between e[0] and e[1] */
	it_sysan_trail(s, &t);
	t = trail(9, 1500, 1600, 2); /* a thread without calls */
	t.ino = 42;
	t.fsdev = IT_MKDEV(254, 0);
	it_sysan_trail(s, &t);
	e[0] = call(IT_SYS_READ, 7, 1000, 2000, 4096, 0);
	e[1] = call(IT_SYS_READ, 7, 3000, 3100, 4096, 4096);
	ASSERT_EQ(it_sysan_calls(s, e, 2), 0, "calls");
	it_sysan_block_watermark(s, 4000);
	ASSERT_EQ(it_sysan_queued(s), 0, "summed up");
	const struct it_sysan_results *r = it_sysan_results(s);
	/* e[1] entered at 3000: the trails of thread 7 before it are settled */
	ASSERT_EQ(r->owned_ios, 1, "owned by e[0], settled at e[1]");
	ASSERT_EQ(r->background_ios, 1, "the one between the calls, settled");
	/* a trail that comes after its thread moved on: no call owns it */
	t = trail(7, 2700, 2800, 1);
	it_sysan_trail(s, &t);
	ASSERT_EQ(r->background_ios, 2, "late trail settled at once");
	it_sysan_finish(s, 5000);
	ASSERT_EQ(r->background_ios, 3, "thread 9's at the end");
	ASSERT_EQ(r->unattributed_ios, 2, "of them, two without a file");
	ASSERT_EQ(r->nbfiles, 1, "thread 9's file");
	ASSERT_EQ(r->bfiles[0].ino, 42, "inode");
	ASSERT_EQ(r->bfiles[0].bg_ios, 1, "background I/O of the file");
	ASSERT_TRUE(r->bfiles[0].path == NULL, "no call named it");
	it_sysan_free(s);
}

/* Ten minutes of a thread that makes no call (a kworker: 100 trails a
 * second) beside a thread whose calls own every other trail of it, and a
 * 30 s call owning trails queued all through it, handed in as the report
 * does a second at a time (trails, the calls that exited, the
 * watermark). The kworker's trails are settled once they are
 * TRAIL_HORIZON_NS (60 s) behind the calls summed up, not kept to the
 * end; the sums are the ones every trail's owner gives. */
TEST(syscall_trails_of_threads_without_calls_settled)
{
	const uint64_t base = 1000000000000ull, s1 = 1000000000ull, ms = 1000000ull;
	const unsigned secs = 600, per_sec = 100, long_from = 100, long_to = 130;
	struct it_sysan_opts o = { .start_ns = base, .block = true };
	struct it_sysan *s = it_sysan_new(&o);
	struct it_sys_event e[101];
	struct it_trail t;
	size_t peak = 0, bound;
	uint64_t long_trails = 0;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	for (unsigned sec = 0; sec < secs; sec++) {
		uint64_t t0 = base + sec * s1;
		size_t n = 0;

		for (unsigned k = 0; k < per_sec; k++) {
			uint64_t c0 = t0 + k * 10 * ms; /* thread 7's call: [c0, c0 + 5 ms] */

			t = trail(7, c0 + 1 * ms, c0 + 3 * ms, 1); /* in the call */
			it_sysan_trail(s, &t);
			t = trail(7, c0 + 7 * ms, c0 + 8 * ms, 1); /* between calls */
			it_sysan_trail(s, &t);
			t = trail(9, c0 + 2 * ms, c0 + 4 * ms, 2); /* the kworker */
			it_sysan_trail(s, &t);
		}
		if (sec >= long_from && sec < long_to) {
			for (unsigned k = 0; k < 10; k++, long_trails++) {
				t = trail(11, t0 + k * 100 * ms + 50 * ms, t0 + k * 100 * ms + 60 * ms, 3);
				it_sysan_trail(s, &t);
			}
		}
		if (sec == long_to) /* exits first in this second: first in the file */
			e[n++] = call(IT_SYS_FSYNC, 11, base + long_from * s1, t0, 0, 0);
		for (unsigned k = 0; k < per_sec; k++)
			e[n++] = call(IT_SYS_READ, 7, t0 + k * 10 * ms, t0 + k * 10 * ms + 5 * ms, 4096, 0);
		ASSERT_EQ(it_sysan_calls(s, e, n), 0, "calls");
		it_sysan_block_watermark(s, t0 + s1);
	}
	ASSERT_EQ(it_sysan_queued(s), 0, "every call summed up");
	/* the kworker's: the horizon (60 s), a second between sweeps and
	 * the second handed in ahead of the calls; thread 7's: that second's
	 * and the last one between calls before it; the long call's: nowhere
	 * near the kworker's 60000 */
	bound = (size_t)per_sec * (60 + 2) + (2 * per_sec + 1) + long_trails;
	ASSERT_LE(it_sysan_live_trails(s, &peak), bound, "held at the end: within the horizon");
	ASSERT_LE(peak, bound, "held at most: within the horizon");
	ASSERT_GE(peak, (size_t)per_sec * 60, "the kworker's trails wait the horizon out");
	it_sysan_finish(s, base + secs * s1);
	ASSERT_EQ(it_sysan_live_trails(s, NULL), 0, "all settled at the end");
	const struct it_sysan_results *r = it_sysan_results(s);
	ASSERT_EQ(r->owned_ios, secs * per_sec + long_trails, "thread 7's in its calls, the long call's");
	ASSERT_EQ(r->background_ios, 2ull * secs * per_sec, "between calls, and the kworker's");
	ASSERT_EQ(r->owned_bytes, (secs * per_sec + long_trails) * 4096, "owned bytes");
	ASSERT_EQ(r->background_bytes, 2ull * secs * per_sec * 4096, "background bytes");
	ASSERT_EQ(r->unattributed_ios, 2ull * secs * per_sec, "no file: all unattributed");
	ASSERT_EQ(r->nbackground, 2, "by comm: thread 7's and the kworker's");
	for (size_t i = 0; i < r->nbackground; i++)
		ASSERT_EQ(r->background[i].ios, (uint64_t)secs * per_sec, "each comm's background");
	it_sysan_free(s);
}

/* A side record that never comes (lost): the call waits until a later
 * side chunk, then counts an unknown tag; at the end every call is in. */
TEST(syscall_one_pass_lost_side)
{
	struct it_sysan_opts o = { .start_ns = 1000 };
	struct it_sysan *s = it_sysan_new(&o);
	struct it_sys_event e = call(IT_SYS_PREAD64, 7, 1000, 2000, 4096, 0), f;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	tag(&e, 5, 50);
	f = call(IT_SYS_CLOSE, 7, 2100, 2200, 0, 0);
	ASSERT_EQ(it_sysan_calls(s, &e, 1), 0, "call");
	ASSERT_EQ(it_sysan_calls(s, &f, 1), 0, "call");
	ASSERT_EQ(it_sysan_queued(s), 2, "waits for its path; the next call behind it");
	it_sysan_side_chunk_end(s);
	ASSERT_EQ(it_sysan_queued(s), 0, "a side chunk came after: the path was lost");
	it_sysan_finish(s, 0); /* no END: the last exit ends the span */
	const struct it_sysan_results *r = it_sysan_results(s);
	ASSERT_EQ(r->unknown_tags, 1, "unknown tag");
	ASSERT_EQ(r->end_ns, 2200, "span from the last exit");
	it_sysan_free(s);
}

/* Per-thread timelines: counted in 1 ms buckets, made ten times coarser
 * as the trace grows, added up to the interval chosen from the span at
 * the end; every call lands in the interval of its entry. */
TEST(syscall_timeline_rebucketing)
{
	const uint64_t ms = 1000000, t0 = 5 * ms;
	struct it_sysan_opts o = { .start_ns = t0 };
	struct it_sysan *s = it_sysan_new(&o);
	/* entries at 0 ms, 0.5 ms, 2.5 s, 9.99 s, 10 s and 100 s from the start */
	static const uint64_t at[] = { 0, 500000, 2500 * 1000000ull, 9990 * 1000000ull,
				       10000 * 1000000ull, 100000 * 1000000ull };
	struct it_sys_event e;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		e = call(IT_SYS_CLOSE, 7, t0 + at[i], t0 + at[i] + 10, 0, 0);
		ASSERT_EQ(it_sysan_calls(s, &e, 1), 0, "call");
	}
	it_sysan_finish(s, t0 + 120000 * ms);
	const struct it_sysan_results *r = it_sysan_results(s);
	ASSERT_U64_EQ(r->interval_ns, 10000 * ms, "120 s span: 10 s intervals (< 20 of them)");
	ASSERT_EQ(r->nintervals, 13, "intervals");
	ASSERT_EQ(r->threads[0].timeline[0], 4, "0, 0.5 ms, 2.5 s, 9.99 s: the first 10 s");
	ASSERT_EQ(r->threads[0].timeline[1], 1, "10 s");
	ASSERT_EQ(r->threads[0].timeline[10], 1, "100 s");
	uint64_t sum = 0;
	for (size_t i = 0; i < r->nintervals; i++)
		sum += r->threads[0].timeline[i];
	ASSERT_EQ(sum, 6, "every call counted once");
	it_sysan_free(s);
}

/* Names are taken by their calls and their slots reused (memory stays
 * with the calls in flight, not every call), strings pooled once; names
 * no call took are counted; a thread's timeline starts at its first
 * count, and a count before it (a call that entered earlier, summed up
 * later) still lands in its interval. */
TEST(syscall_names_taken_and_pooled)
{
	const uint64_t ms = 1000000, t0 = 5 * ms;
	struct it_sysan_opts o = { .events = true, .start_ns = t0 };
	struct it_sysan *s = it_sysan_new(&o);
	static const char *const names[] = { "/n/a", "/n/b", "/n/c" };
	unsigned char rec[256];
	struct it_sys_event e;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	for (uint32_t i = 0; i < 10000; i++) {
		uint64_t t = t0 + 50000 * ms + i * 1000ull;

		ASSERT_EQ(it_sysan_side(s, rec, make_name(rec, 7, t, 0, names[i % 3])), 0, "name");
		e = call(IT_SYS_UNLINK, 7, t, t + 500, 0, 0);
		e.sflags = IT_SYSF_NAME;
		ASSERT_EQ(it_sysan_calls(s, &e, 1), 0, "call");
	}
	/* two names whose calls were lost */
	ASSERT_EQ(it_sysan_side(s, rec, make_name(rec, 9, t0 + 1000, 0, "/lost/1")), 0, "orphan");
	ASSERT_EQ(it_sysan_side(s, rec, make_name(rec, 9, t0 + 2000, 1, "/lost/2")), 0, "orphan");
	/* thread 7 entered a call at 5 s, summed up after its later ones */
	e = call(IT_SYS_CLOSE, 7, t0 + 5000 * ms, t0 + 5000 * ms + 10, 0, 0);
	ASSERT_EQ(it_sysan_calls(s, &e, 1), 0, "an earlier call");
	e = call(IT_SYS_CLOSE, 7, t0 + 100000 * ms, t0 + 100000 * ms + 10, 0, 0);
	ASSERT_EQ(it_sysan_calls(s, &e, 1), 0, "a later call");
	it_sysan_finish(s, t0 + 120000 * ms);
	ASSERT_EQ(it_sysan_error(s), 0, "no error");

	const struct it_sysan_results *r = it_sysan_results(s);
	size_t seen[3] = { 0 };
	const char *first[3] = { NULL };
	int wrong = 0, copies = 0;

	ASSERT_EQ(r->nevents, 10002, "events");
	for (size_t i = 0; i < r->nevents; i++) {
		const struct it_sysan_event *v = &r->events[i];

		if (v->e.call != IT_SYS_UNLINK)
			continue;
		uint32_t k = (uint32_t)((v->e.ts_enter - t0 - 50000 * ms) / 1000) % 3;
		wrong += strcmp(v->path, names[k]) != 0;
		if (!first[k])
			first[k] = v->path;
		copies += v->path != first[k];
		seen[k]++;
	}
	ASSERT_EQ(wrong, 0, "every call has its own name");
	ASSERT_EQ(copies, 0, "a name repeated by many calls is pooled once");
	ASSERT_EQ(seen[0] + seen[1] + seen[2], 10000, "every unlink");
	ASSERT_EQ(r->nfiles, 3, "three names");
	ASSERT_EQ(r->unmatched_names, 2, "the two names without their call");
	ASSERT_U64_EQ(r->interval_ns, 10000 * ms, "120 s span: 10 s intervals");
	ASSERT_EQ(r->threads[0].timeline[0], 1, "the call at 5 s, before the first counted");
	ASSERT_EQ(r->threads[0].timeline[5], 10000, "the unlinks at 50 s");
	ASSERT_EQ(r->threads[0].timeline[10], 1, "the call at 100 s");
	it_sysan_free(s);
}

TEST(syscall_side_malformed)
{
	struct it_sysan_opts o = { 0 };
	struct it_sysan *s = it_sysan_new(&o);
	struct it_sys_path p = { .rec = IT_SREC_PATH, .len = 500 };
	unsigned char junk[8] = { 9, 9 };
	size_t off = 0, rl;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	ASSERT_EQ(it_sysan_side(s, &p, sizeof(p)), -1, "length past the record");
	ASSERT_EQ(it_sysan_side(s, junk, sizeof(junk)), -1, "unknown record");
	ASSERT_TRUE(it_sys_side_next(&p, sizeof(p), &off, &rl) == NULL, "walker stops");
	it_sysan_free(s);
}

/* ---- block I/O by file: the page-cache identity on Q, matched to tags ---- */

#define FSDEV IT_MKDEV(254, 0) /* the file system of tag() */
#define DISK IT_MKDEV(7, 0)

static struct it_event bev(uint8_t type, uint64_t ts, uint64_t id, uint64_t aux, uint32_t tid,
			   uint64_t sector, uint32_t bytes, uint8_t op)
{
	struct it_event e = { .type = type, .layer = IT_LAYER_BLOCK, .ts_ns = ts, .id = id,
			      .aux = aux, .dev = DISK, .pid = tid, .tid = tid, .sector = sector,
			      .bytes = bytes, .op = op, .tag = 0xffff, .hwq = 0xffff };
	return e;
}

/* Q of a bio whose first page is in the cache of file ino (0: none). */
static struct it_event bq(uint64_t ts, uint64_t bio, uint32_t tid, uint64_t sector, uint32_t bytes,
			  uint8_t op, uint64_t ino)
{
	struct it_event e = bev(IT_EV_BIO_QUEUE, ts, bio, ino, tid, sector, bytes, op);

	if (ino) {
		e.tag = (uint16_t)FSDEV;
		e.hwq = (uint16_t)(FSDEV >> 16);
	}
	return e;
}

static struct it_event btask(uint32_t tid, const char *comm)
{
	struct it_event e = { .type = IT_EV_TASK, .layer = IT_LAYER_BLOCK, .pid = tid, .tid = tid };

	strncpy(e.comm, comm, sizeof(e.comm));
	return e;
}

static void to_sysan(const struct it_trail *t, void *ctx)
{
	it_sysan_trail(ctx, t);
}

static const struct it_sysan_bfile *bfile(const struct it_sysan_results *r, uint64_t ino,
					  uint64_t tag_ts)
{
	for (size_t i = 0; i < r->nbfiles; i++)
		if (r->bfiles[i].ino == ino && r->bfiles[i].dev == FSDEV && r->bfiles[i].tag_ts == tag_ts)
			return &r->bfiles[i];
	return NULL;
}

TEST(syscall_block_by_file)
{
	static const char *const a[] = { "a.dat", "data" }, *const b[] = { "b.dat", "data" },
			       *const n[] = { "new.dat", "data" };
	struct it_sysan_opts so = { .start_ns = 1000 };
	struct it_sysan *s = it_sysan_new(&so);
	struct it_analyzer_opts ao = IT_ANALYZER_OPTS_DEFAULT;
	unsigned char rec[256];
	const uint8_t W = IT_OP_WRITE, R = IT_OP_READ;
	/* writeback by a kworker (two bios of a.dat merged into one request),
	 * a journal write (no file), a read miss of a traced pread, a bio of
	 * no file front-merged with one of b.dat, a later file that reuses
	 * a.dat's inode number, and a file no call named */
	struct it_event evs[] = {
		btask(99, "kworker/u8:1"), btask(98, "jbd2/loop0-8"), btask(7, "db"),
		bq(1100, 0xd1, 7, 1000, 4096, R, 5),
		bev(IT_EV_RQ_ISSUE, 1110, 0xd01, 0xd1, 7, 1000, 4096, R),
		bev(IT_EV_RQ_COMPLETE, 1500, 0xd01, 0, 0, 0, 4096, 0),
		bq(1300, 0xb1, 99, 0, 4096, W, 5),
		bq(1310, 0xb2, 99, 8, 4096, W, 5),
		bev(IT_EV_BIO_BACKMERGE, 1311, 0xb2, 0, 99, 8, 4096, W),
		bev(IT_EV_RQ_INSERT, 1320, 0xb01, 0xb1, 99, 0, 8192, W),
		bev(IT_EV_RQ_ISSUE, 1330, 0xb01, 0xb1, 99, 0, 8192, W),
		bev(IT_EV_RQ_COMPLETE, 1400, 0xb01, 0, 0, 0, 8192, 0),
		bq(1600, 0xc1, 98, 500, 4096, W, 0),
		bev(IT_EV_RQ_ISSUE, 1610, 0xc01, 0xc1, 98, 500, 4096, W),
		bev(IT_EV_RQ_COMPLETE, 1700, 0xc01, 0, 0, 0, 4096, 0),
		bq(3000, 0xe1, 99, 108, 4096, W, 0),
		bq(3001, 0xe2, 99, 100, 4096, W, 6),
		bev(IT_EV_BIO_FRONTMERGE, 3002, 0xe2, 0, 99, 100, 4096, W),
		bev(IT_EV_RQ_ISSUE, 3010, 0xe01, 0xe2, 99, 100, 8192, W),
		bev(IT_EV_RQ_COMPLETE, 3100, 0xe01, 0, 0, 0, 8192, 0),
		bq(6000, 0xf1, 99, 2000, 4096, W, 5),
		bev(IT_EV_RQ_ISSUE, 6010, 0xf01, 0xf1, 99, 2000, 4096, W),
		bev(IT_EV_RQ_COMPLETE, 6100, 0xf01, 0, 0, 0, 4096, 0),
		bq(7000, 0xa1, 99, 3000, 4096, W, 77),
		bev(IT_EV_RQ_ISSUE, 7010, 0xa01, 0xa1, 99, 3000, 4096, W),
		bev(IT_EV_RQ_COMPLETE, 7100, 0xa01, 0, 0, 0, 4096, 0),
	};

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	ao.on_trail = to_sysan;
	ao.ctx = s;
	struct it_analyzer *an = it_analyzer_new(&ao);
	ASSERT_NOT_NULL(an, "analyzer");
	if (!an) {
		it_sysan_free(s);
		return;
	}
	it_sysan_side(s, rec, make_path(rec, FSDEV, 5, 50, IT_FT_REG, a, 2));
	it_sysan_side(s, rec, make_path(rec, FSDEV, 6, 60, IT_FT_REG, b, 2));
	it_sysan_side(s, rec, make_path(rec, FSDEV, 5, 5000, IT_FT_REG, n, 2));
	it_analyzer_feed(an, evs, sizeof(evs) / sizeof(evs[0]));
	it_analyzer_finish(an, 8000);
	struct it_sys_event e = call(IT_SYS_PREAD64, 7, 1000, 2000, 4096, 0);
	tag(&e, 5, 50);
	ASSERT_EQ(it_sysan_calls(s, &e, 1), 0, "calls");
	it_sysan_finish(s, 8000);
	ASSERT_EQ(it_sysan_error(s), 0, "no error");

	const struct it_sysan_results *r = it_sysan_results(s);
	const struct it_sysan_bfile *f;
	ASSERT_EQ(r->owned_ios, 1, "the read miss is the pread's");
	ASSERT_EQ(r->background_ios, 5, "writeback, journal, merged, reused inode, unnamed file");
	ASSERT_EQ(r->unattributed_ios, 1, "only the journal write has no file");
	ASSERT_EQ(r->unattributed_bytes, 4096, "unattributed bytes");
	ASSERT_EQ(r->nunattributed, 1, "one comm");
	if (r->nunattributed)
		ASSERT_STREQ(it_analyzer_comm(an, r->unattributed[0].comm), "jbd2/loop0-8",
			     "unattributed by comm");
	ASSERT_EQ(r->nbfiles, 4, "a.dat, b.dat, new.dat, inode 77");
	ASSERT_EQ(r->nbfiles ? r->bfiles[0].ino : 0, 5, "most bytes first");
	f = bfile(r, 5, 50);
	ASSERT_NOT_NULL(f, "a.dat");
	if (f) {
		ASSERT_STREQ(f->path, "/data/a.dat", "a.dat by path");
		ASSERT_EQ(f->ios, 2, "its writeback request and the read miss");
		ASSERT_EQ(f->write_bytes, 8192, "both merged writeback bios");
		ASSERT_EQ(f->read_bytes, 4096, "the read miss");
		ASSERT_EQ(f->bg_ios, 1, "writeback is background");
		ASSERT_EQ(f->bg_bytes, 8192, "background bytes");
		ASSERT_EQ(f->q2c.count, 2, "Q2C of both");
		ASSERT_EQ(f->q2c.max, 400, "read miss Q2C");
		ASSERT_EQ(f->q2c.min, 100, "writeback Q2C");
	}
	f = bfile(r, 6, 60);
	ASSERT_NOT_NULL(f, "b.dat");
	if (f) {
		ASSERT_STREQ(f->path, "/data/b.dat", "a merge names the request that had no file");
		ASSERT_EQ(f->write_bytes, 8192, "both bios");
	}
	f = bfile(r, 5, 5000);
	ASSERT_NOT_NULL(f, "new.dat");
	if (f)
		ASSERT_STREQ(f->path, "/data/new.dat", "a reused inode number goes to the later tag");
	f = bfile(r, 77, 0);
	ASSERT_NOT_NULL(f, "inode 77");
	if (f)
		ASSERT_TRUE(f->path == NULL, "no call named inode 77: no path");
	it_analyzer_free(an);
	it_sysan_free(s);
}

/* Calls the recorder lost are said in the text report, with or without
 * calls that made it (JSON has syscall_dropped): never a silent lower
 * bound. */
TEST(syscall_report_says_lost)
{
	struct it_sysan_opts o = { .start_ns = 1000 };
	struct it_sysan *s = it_sysan_new(&o);
	struct it_sys_event e = call(IT_SYS_PREAD64, 7, 1000, 1100, 4096, 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	tag(&e, 5, 50);
	ASSERT_EQ(it_sysan_calls(s, &e, 1), 0, "call");
	it_sysan_finish(s, 5000);
	for (uint64_t lost = 0; lost <= 7; lost += 7) {
		f = open_memstream(&text, &len);
		ASSERT_NOT_NULL(f, "memstream");
		if (!f)
			break;
		it_report_sys_text(f, it_sysan_results(s), NULL, lost);
		fclose(f);
		ASSERT_NOT_NULL(strstr(text, "System calls: 1 calls"), "the calls' line");
		ASSERT_EQ(strstr(text, "*** WARNING: 7 records lost to a full ring: the counts below "
				"are lower bounds") != NULL, lost == 7, "the warning exactly when lost");
		free(text);
		text = NULL;
	}
	it_sysan_free(s);

	/* every call lost: the warning still stands, with no table */
	s = it_sysan_new(&o);
	ASSERT_NOT_NULL(s, "new");
	if (!s)
		return;
	it_sysan_finish(s, 5000);
	f = open_memstream(&text, &len);
	ASSERT_NOT_NULL(f, "memstream");
	if (!f)
		return;
	it_report_sys_text(f, it_sysan_results(s), NULL, 3);
	fclose(f);
	ASSERT_NOT_NULL(strstr(text, "*** WARNING: 3 records lost"), "all lost: said");
	free(text);
	it_sysan_free(s);
}
