/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Analyzer throughput: writes a synthetic trace of N I/Os (default 10
 * million) with the trace file writer, then times reading it back and
 * analysing it, as `iotrail report` does. Goal: >= 5 million I/Os per
 * second on a 2-core machine.
 *
 *   build/bench/analyzer [-n IOS] [-o FILE] [-r] [-k] [-m] [-g] [-s CALLS] [-l]
 *     -n IOS   I/Os to generate (default 10000000)
 *     -s CALLS system calls per I/O too (a syscall layer, as `iotrail
 *              record`'s default): each I/O queued inside a pread64 or
 *              pwrite64 of its thread (the call owns it), and CALLS - 1
 *              calls without block I/O between the I/Os: a newfstatat
 *              of a name (a name record before it), then cached preads
 *     -l       one I/O of a kernel thread (a writeback write, no calls),
 *              queued and issued at the start, loses its completion event
 *              and its request is never reused: its trail stays open to
 *              the end (the block watermark held back all along)
 *     -g       only generate FILE (kept): bench/report_memory.sh's trace
 *     -o FILE  trace file (default $TMPDIR/iotrail-bench-analyzer.trail)
 *     -r       reuse FILE if it exists (skip generating)
 *     -k       keep FILE afterwards
 *     -m       only the in-memory pass (the analyzer alone; for profiling)
 *
 * The synthetic workload: two blk-mq disks at queue depth 32 and 8, 70%
 * reads, mostly 4K with 64K and 128K I/Os, half sequential, one in five
 * requests through the scheduler (I), bios merged (1%), requeues (0.1%),
 * partial completions (0.1%), out-of-order completions, tags and bio
 * pointers recycled as the kernel does, eight submitting threads.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyzer.h"
#include "iotrail/syscall.h"
#include "analyze/layer.h"
#include "layer_table.h"
#include "tracefile.h"

#define NDEV 2
#define MAXQD 32
#define BATCH 4096

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time: the machine is shared, so wall time alone says little about
 * the code; CPU seconds of this process (all threads) or this thread do. */
static double cpu_s(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }
static double thread_cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

/* ---- generator ---- */
struct pending {
	uint64_t ctime, rq;
	uint32_t bytes;
	uint16_t tag;
};

struct gdev {
	uint32_t dev, qd;
	struct pending heap[MAXQD]; /* min-heap on ctime */
	uint32_t n;
	uint16_t free_tags[MAXQD];
	uint32_t nfree;
	uint64_t next_sector[2];
};

struct gen {
	struct it_writer *w;
	uint32_t calls_per_io;   /* -s: system calls per I/O, 0: none */
	uint64_t calls;
	uint64_t last_exit[8];   /* per thread: its calls come one after the other */
	struct it_event buf[BATCH];
	size_t nbuf;
	uint64_t rng, now, bio_seq, events;
	struct gdev d[NDEV];
	int err;
};

static uint64_t rnd(struct gen *g)
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 2685821657736338717ull;
}

static struct it_event *emit(struct gen *g, uint8_t type, uint64_t ts, uint64_t id, uint32_t dev)
{
	if (g->nbuf == BATCH) {
		if (it_writer_add_events(g->w, IT_LAYER_BLOCK, g->buf, g->nbuf))
			g->err = 1;
		g->events += g->nbuf;
		g->nbuf = 0;
	}
	struct it_event *e = &g->buf[g->nbuf++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->ts_ns = ts;
	e->id = id;
	e->dev = dev;
	e->layer = IT_LAYER_BLOCK;
	return e;
}

/* A system call of thread tid on file k (fd 10 + k, tag inode 100 + k). */
static void sys_call(struct gen *g, uint16_t call, uint32_t tid, uint32_t k, uint64_t t0,
		     uint64_t t1, uint64_t off, uint32_t bytes)
{
	struct it_sys_event e = { .rec = IT_SREC_CALL, .call = call, .ftype = IT_FT_REG,
				  .pid = 4000, .tid = tid, .ppid = 1, .fd = (int32_t)(10 + k),
				  .dev = IT_MKDEV(254, 0), .ts_enter = t0, .ts_exit = t1,
				  .ret = bytes, .offset = off, .count = bytes, .ino = 100 + k,
				  .tag_ts = 1000000000ull + k };

	if (it_writer_add_record(g->w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSCALLS, &e, sizeof(e)))
		g->err = 1;
	g->calls++;
}

/* A path-based call (newfstatat of /data/f3 by name), its name record
 * first, as the recorder writes them. */
static void sys_name_call(struct gen *g, uint32_t tid, uint64_t t0, uint64_t t1)
{
	struct it_sys_name n = { .rec = IT_SREC_NAME, .len = 8, .tid = tid, .ts_enter = t0 };
	struct it_sys_event e = { .rec = IT_SREC_CALL, .call = IT_SYS_NEWFSTATAT,
				  .sflags = IT_SYSF_NAME, .pid = 4000, .tid = tid, .ppid = 1,
				  .fd = -100, .ts_enter = t0, .ts_exit = t1 };
	unsigned char rec[sizeof(n) + 8];

	memcpy(rec, &n, sizeof(n));
	memcpy(rec + sizeof(n), "/data/f3", 8);
	if (it_writer_add_record(g->w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSSIDE, rec, sizeof(rec)) ||
	    it_writer_add_record(g->w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSCALLS, &e, sizeof(e)))
		g->err = 1;
	g->calls++;
}

/* The side records of the syscall layer's start: the threads' names and
 * the four files' paths (/data/f0 ... /data/f3). */
static void sys_side(struct gen *g, uint64_t now)
{
	unsigned char rec[128];

	for (uint32_t t = 0; t < 8; t++) {
		struct it_sys_task k = { .rec = IT_SREC_TASK, .pid = 4000, .tid = 4000 + t,
					 .ppid = 1, .ts = now };
		snprintf(k.comm, sizeof(k.comm), "fio-%u", t);
		if (it_writer_add_record(g->w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSSIDE, &k, sizeof(k)))
			g->err = 1;
	}
	for (uint32_t k = 0; k < 4; k++) {
		struct it_sys_path p = { .rec = IT_SREC_PATH, .ftype = IT_FT_REG,
					 .pflags = IT_PATHF_MATCH, .ncomp = 2,
					 .dev = IT_MKDEV(254, 0), .ino = 100 + k,
					 .tag_ts = 1000000000ull + k };
		char comps[16];
		int n = snprintf(comps, sizeof(comps), "f%u", k);

		memcpy(comps + n + 1, "data", 5);
		p.len = (uint16_t)(n + 1 + 5);
		memcpy(rec, &p, sizeof(p));
		memcpy(rec + sizeof(p), comps, p.len);
		if (it_writer_add_record(g->w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSSIDE, rec,
					 sizeof(p) + p.len))
			g->err = 1;
	}
}

static void heap_push(struct gdev *d, struct pending p)
{
	uint32_t i = d->n++;
	while (i && d->heap[(i - 1) / 2].ctime > p.ctime) {
		d->heap[i] = d->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	d->heap[i] = p;
}

static struct pending heap_pop(struct gdev *d)
{
	struct pending top = d->heap[0], last = d->heap[--d->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= d->n)
			break;
		if (c + 1 < d->n && d->heap[c + 1].ctime < d->heap[c].ctime)
			c++;
		if (d->heap[c].ctime >= last.ctime)
			break;
		d->heap[i] = d->heap[c];
		i = c;
	}
	if (d->n)
		d->heap[i] = last;
	return top;
}

static void complete_one(struct gen *g, struct gdev *d)
{
	struct pending p = heap_pop(d);

	if (rnd(g) % 1000 == 0 && p.bytes > 4096) { /* partial completion first */
		struct it_event *e = emit(g, IT_EV_RQ_COMPLETE, p.ctime - 500, p.rq, d->dev);
		e->bytes = 4096;
		p.bytes -= 4096;
	}
	struct it_event *e = emit(g, IT_EV_RQ_COMPLETE, p.ctime, p.rq, d->dev);
	e->bytes = p.bytes;
	d->free_tags[d->nfree++] = p.tag;
}

static struct it_event *io_event(struct gen *g, uint8_t type, uint64_t ts, uint64_t id,
				 uint64_t aux, uint32_t dev, uint64_t sector, uint32_t bytes,
				 uint8_t op, uint32_t tid)
{
	struct it_event *e = emit(g, type, ts, id, dev);
	e->aux = aux;
	e->sector = sector;
	e->bytes = bytes;
	e->op = op;
	e->pid = 4000;
	e->tid = tid;
	return e;
}

static void one_io(struct gen *g)
{
	uint64_t r = rnd(g);
	struct gdev *d = &g->d[r % 10 < 7 ? 0 : 1];
	uint8_t op = (r >> 8) % 10 < 7 ? IT_OP_READ : IT_OP_WRITE;
	uint32_t sz = (r >> 16) % 100;
	uint32_t bytes = sz < 85 ? 4096 : sz < 95 ? 65536 : 131072;
	uint32_t tid = 4000 + (uint32_t)((r >> 24) % 8);
	uint64_t sector = (r >> 32) % 2 ? d->next_sector[op] : (rnd(g) % (1ull << 28)) & ~7ull;
	uint64_t bio = 0xffff888100000000ull + (g->bio_seq++ % 65536) * 0x100;

	g->now += 500 + rnd(g) % 3000 + 40ull * g->calls_per_io;
	while (d->n && (d->n == d->qd || d->heap[0].ctime <= g->now)) {
		if (d->heap[0].ctime > g->now) /* queue full: wait for a tag */
			g->now = d->heap[0].ctime;
		complete_one(g, d);
	}
	uint64_t t = g->now;

	/* the cached reads of the thread since its last I/O, then the call
	 * that queues the I/O (it enters before Q, exits after the merge) */
	uint64_t *last = &g->last_exit[tid - 4000];
	for (uint32_t i = 1; i < g->calls_per_io; i++) {
		uint64_t e0 = t - 40ull * (g->calls_per_io - i) - 60;
		if (e0 <= *last)
			e0 = *last + 1;
		if (i == 1)
			sys_name_call(g, tid, e0, e0 + 20);
		else
			sys_call(g, IT_SYS_PREAD64, tid, 3, e0, e0 + 20, (rnd(g) % 1024) * 4096, 4096);
		*last = e0 + 20;
	}
	if (g->calls_per_io) {
		sys_call(g, op == IT_OP_READ ? IT_SYS_PREAD64 : IT_SYS_PWRITE64, tid,
			 (uint32_t)(r >> 40) % 3, t - 50, t + 180, sector * 512, bytes);
		*last = t + 180;
	}
	uint16_t tag = d->free_tags[--d->nfree];
	uint64_t rq = 0xffff888200000000ull + (uint64_t)d->dev * 0x100000 + tag * 0x200ull;

	io_event(g, IT_EV_BIO_QUEUE, t, bio, 0, d->dev, sector, bytes, op, tid);
	uint32_t rq_bytes = bytes;
	if (rnd(g) % 100 == 0) { /* a second bio merged behind the first */
		uint64_t b2 = 0xffff888100000000ull + (g->bio_seq++ % 65536) * 0x100;
		io_event(g, IT_EV_BIO_QUEUE, t + 100, b2, 0, d->dev, sector + bytes / 512, 4096, op, tid);
		io_event(g, IT_EV_BIO_BACKMERGE, t + 150, b2, 0, d->dev, sector + bytes / 512, 4096, op, tid);
		rq_bytes += 4096;
	}
	t += 200 + rnd(g) % 300;
	if (rnd(g) % 5 == 0) {
		io_event(g, IT_EV_RQ_INSERT, t, rq, bio, d->dev, sector, rq_bytes, op, tid);
		t += 300 + rnd(g) % 5000;
	}
	io_event(g, IT_EV_RQ_ISSUE, t, rq, bio, d->dev, sector, rq_bytes, op, tid)->tag = tag;
	if (rnd(g) % 1000 == 0) {
		emit(g, IT_EV_RQ_REQUEUE, t + 1000, rq, d->dev);
		t += 3000;
		io_event(g, IT_EV_RQ_ISSUE, t, rq, bio, d->dev, sector, rq_bytes, op, tid)->tag = tag;
	}
	uint64_t lat = 15000 + rnd(g) % 40000 + (rnd(g) % 100 == 0 ? 1000000 : 0);
	heap_push(d, (struct pending){ .ctime = t + lat, .rq = rq, .bytes = rq_bytes, .tag = tag });
	d->next_sector[op] = sector + rq_bytes / 512;
}

/* -l: a kworker's write whose completion event is lost, on a request
 * that is never used again (no tag of the device's: never reused). */
static void lost_io(struct gen *g)
{
	const uint32_t tid = 5000;
	const uint64_t bio = 0xffff8881ffff0000ull, rq = 0xffff8882ffff0000ull;
	struct it_event *e = emit(g, IT_EV_TASK, g->now, 0, 0);

	e->pid = tid;
	e->tid = tid;
	snprintf(e->comm, sizeof(e->comm), "kworker/u8:1");
	io_event(g, IT_EV_BIO_QUEUE, g->now, bio, 0, g->d[0].dev, 1ull << 29, 4096, IT_OP_WRITE, tid);
	io_event(g, IT_EV_RQ_ISSUE, g->now + 500, rq, bio, g->d[0].dev, 1ull << 29, 4096, IT_OP_WRITE,
		 tid)->tag = 999;
	g->now += 1000;
}

static int generate(const char *path, uint64_t nios, uint32_t calls_per_io, bool lose)
{
	static struct gen g;
	struct it_host_rec host = { .hostname = "bench", .kernel = "synthetic", .clock = "monotonic",
				    .ncpus = 2, .start_monotonic_ns = 1000000000ull,
				    .command = "bench/analyzer", .layers = "block" };
	struct it_device_rec devs[NDEV] = {
		{ .dev = IT_MKDEV(259, 0), .name = "nvme0n1", .scheduler = "none", .blk_mq = 1,
		  .nr_requests = 1023, .logical_block_size = 512, .max_sectors_kb = 128 },
		{ .dev = IT_MKDEV(8, 0), .name = "sda", .scheduler = "mq-deadline", .blk_mq = 1,
		  .nr_requests = 64, .logical_block_size = 512, .max_sectors_kb = 1280 },
	};
	char err[256];

	memset(&g, 0, sizeof(g));
	g.rng = 0x9E3779B97F4A7C15ull;
	g.now = host.start_monotonic_ns;
	g.calls_per_io = calls_per_io;
	if (calls_per_io)
		snprintf(host.layers, sizeof(host.layers), "block,syscall");
	struct it_layer_rec layers[2] = { *it_layer_builtin(IT_LAYER_BLOCK),
					  *it_layer_builtin(IT_LAYER_SYSCALL) };
	struct it_trace_head head = { .host = &host, .devs = devs, .ndevs = NDEV,
				      .layers = layers, .nlayers = calls_per_io ? 2 : 1 };
	g.w = it_writer_open(path, &head, err, sizeof(err));
	if (!g.w) {
		fprintf(stderr, "bench/analyzer: failed to create %s: %s\n", path, err);
		return -1;
	}
	for (int i = 0; i < NDEV; i++) {
		g.d[i].dev = devs[i].dev;
		g.d[i].qd = i ? 8 : 32;
		for (uint32_t t = 0; t < g.d[i].qd; t++)
			g.d[i].free_tags[g.d[i].nfree++] = (uint16_t)t;
	}
	for (uint32_t t = 0; t < 8; t++) {
		struct it_event *e = emit(&g, IT_EV_TASK, g.now, 0, 0);
		e->pid = 4000;
		e->tid = 4000 + t;
		snprintf(e->comm, sizeof(e->comm), "fio-%u", t);
	}
	if (calls_per_io)
		sys_side(&g, g.now);
	g.now += 1000000;
	if (lose)
		lost_io(&g);
	for (uint64_t i = 0; i < nios && !g.err; i++)
		one_io(&g);
	for (int i = 0; i < NDEV; i++)
		while (g.d[i].n)
			complete_one(&g, &g.d[i]);
	if (g.nbuf && it_writer_add_events(g.w, IT_LAYER_BLOCK, g.buf, g.nbuf))
		g.err = 1;
	g.events += g.nbuf;
	uint64_t drops[2] = { 0, 0 };
	it_writer_set_drops(g.w, 0, IT_LAYER_BLOCK, drops, 2);
	if (calls_per_io)
		it_writer_set_drops(g.w, 0, IT_LAYER_SYSCALL, drops, 2);
	if (it_writer_close(g.w, g.now + 1000000) || g.err) {
		fprintf(stderr, "bench/analyzer: failed to write %s\n", path);
		return -1;
	}
	return 0;
}

/* ---- timed passes ---- */

static int read_only(const char *path, uint64_t *events)
{
	char err[256];
	struct it_reader *rd = it_reader_open(path, err, sizeof(err));
	const struct it_event *evs;
	size_t n;
	int rc;

	if (!rd)
		return -1;
	*events = 0;
	while ((rc = it_reader_next(rd, &evs, &n)) > 0)
		*events += n;
	it_reader_close(rd);
	return rc;
}

/* As `iotrail report` does it (src/report.c): one records reader with the
 * chunk types of every analysis layer, the layers the trace has, the
 * pass, then the text and JSON reports. */
static int analyse(const char *path, uint64_t *ios, double *t_report)
{
	char err[256];
	uint16_t types[16];
	size_t ntypes = it_analysis_chunk_types(types, 16);
	struct it_reader *rd = it_reader_open_records(path, types, ntypes, err, sizeof(err));
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	struct it_reader_status st;
	int rc;

	if (!rd) {
		fprintf(stderr, "bench/analyzer: failed to read %s: %s\n", path, err);
		return -1;
	}
	struct it_pass_info info = { .path = path, .host = it_reader_host(rd), .opts = &o };
	info.devs = it_reader_devices(rd, &info.ndevs);
	struct it_analysis *an = it_analysis_new(&info);
	if (!an) {
		it_reader_close(rd);
		return -1;
	}
	rc = it_analysis_run(an, rd, err, sizeof(err));
	it_reader_status(rd, &st);
	const struct it_analyzer *a = it_layer_block_analyzer(it_analysis_state(an, &it_layer_block));
	const struct it_results *r = it_analyzer_results(a);
	*ios = r ? r->stats.ios : 0;

	double t0 = now_s();
	FILE *devnull = fopen("/dev/null", "w");
	struct it_report_ctx ctx = { .path = path, .host = info.host, .devs = info.devs,
				     .ndevs = info.ndevs, .status = &st, .opts = &o };
	if (devnull) {
		it_analysis_report_json(an, devnull, &ctx, false);
		it_analysis_report_text(an, devnull, &ctx);
		fclose(devnull);
	}
	*t_report = now_s() - t0;
	if (rc || !r || r->stats.incomplete || r->stats.unknown_completions)
		fprintf(stderr, "bench/analyzer: unexpected: rc %d (%s), incomplete %llu, unknown %llu\n",
			rc, rc == -1 ? err : rc ? "out of memory" : "",
			r ? (unsigned long long)r->stats.incomplete : 0,
			r ? (unsigned long long)r->stats.unknown_completions : 0);
	it_analysis_free(an);
	it_reader_close(rd);
	return rc ? -1 : 0;
}

/* The analyzer alone: up to max events held in memory, fed as the reader
 * would (batches of 16384), without reading or decompressing. */
static int in_memory(const char *path, size_t max, uint64_t *ios, uint64_t *events, double *secs)
{
	char err[256];
	struct it_reader *rd = it_reader_open(path, err, sizeof(err));
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	struct it_event *all = NULL;
	const struct it_event *evs;
	size_t n, have = 0, cap = 0;

	if (!rd)
		return -1;
	while (have < max && it_reader_next(rd, &evs, &n) > 0) {
		if (n > max - have)
			n = max - have;
		if (have + n > cap) {
			cap = cap ? cap * 2 : 1u << 20;
			struct it_event *p = realloc(all, cap * sizeof(*all));
			if (!p) {
				free(all);
				it_reader_close(rd);
				return -1;
			}
			all = p;
		}
		memcpy(all + have, evs, n * sizeof(*evs));
		have += n;
	}
	o.start_ns = it_reader_host(rd)->start_monotonic_ns;
	it_reader_close(rd);
	double t0 = thread_cpu_s();
	struct it_analyzer *a = it_analyzer_new(&o);
	for (size_t i = 0; i < have; i += 16384)
		it_analyzer_feed(a, all + i, have - i < 16384 ? have - i : 16384);
	it_analyzer_finish(a, 0);
	*secs = thread_cpu_s() - t0;
	*ios = it_analyzer_results(a)->stats.ios;
	*events = have;
	it_analyzer_free(a);
	free(all);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t nios = 10000000, events = 0, ios = 0;
	const char *tmp = getenv("TMPDIR");
	char defpath[512];
	const char *path = NULL;
	bool reuse = false, keep = false, mem_only = false, gen_only = false, lose = false;
	uint32_t calls_per_io = 0;
	int c;

	while ((c = getopt(argc, argv, "n:o:rkmgs:lh")) != -1) {
		switch (c) {
		case 'n': nios = strtoull(optarg, NULL, 10); break;
		case 'o': path = optarg; break;
		case 'r': reuse = true; break;
		case 'k': keep = true; break;
		case 'm': mem_only = true; break;
		case 'g': gen_only = true; break;
		case 's': calls_per_io = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'l': lose = true; break;
		default:
			fprintf(stderr, "usage: %s [-n IOS] [-o FILE] [-r] [-k] [-m] [-g] [-s CALLS] [-l]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (!path) {
		snprintf(defpath, sizeof(defpath), "%s/iotrail-bench-analyzer.trail", tmp ? tmp : "/tmp");
		path = defpath;
	}

	struct stat sb;
	if (!(reuse && !stat(path, &sb))) {
		double t0 = now_s();
		if (generate(path, nios, calls_per_io, lose))
			return 1;
		stat(path, &sb);
		printf("generated   %llu I/Os and %llu system calls into %s (%.0f MiB) in %.2f s\n",
		       (unsigned long long)nios, (unsigned long long)nios * calls_per_io, path,
		       (double)sb.st_size / 1048576.0, now_s() - t0);
	}
	if (gen_only)
		return 0;

	uint64_t mios, mevents;
	double t_mem;
	if (!in_memory(path, mem_only ? SIZE_MAX / 2 / sizeof(struct it_event) : 1u << 22, &mios,
		       &mevents, &t_mem))
		printf("in memory   %llu events, %llu I/Os in %.3f s CPU: analyzer alone %.2f M I/Os/s\n",
		       (unsigned long long)mevents, (unsigned long long)mios, t_mem,
		       (double)mios / t_mem / 1e6);
	if (mem_only)
		return 0;

	double t0 = now_s(), c0 = cpu_s();
	if (read_only(path, &events))
		return 1;
	double t_read = now_s() - t0, c_read = cpu_s() - c0;
	printf("read only   %llu events in %.2f s (%.2f s CPU): %.1f M events/s (%.0f MiB/s of events)\n",
	       (unsigned long long)events, t_read, c_read, (double)events / t_read / 1e6,
	       (double)events * sizeof(struct it_event) / t_read / 1048576.0);

	double t_report = 0;
	t0 = now_s();
	c0 = cpu_s();
	if (analyse(path, &ios, &t_report))
		return 1;
	double t_all = now_s() - t0 - t_report, c_all = cpu_s() - c0 - t_report;
	printf("read+report %llu I/Os in %.2f s (%.2f s CPU in 2 threads; +%.3f s printing text and JSON)\n",
	       (unsigned long long)ios, t_all, c_all, t_report);
	printf("analyzer: %.2f million I/Os per second (%.1f M events/s; goal >= 5 M I/Os/s)\n",
	       (double)ios / t_all / 1e6, (double)events / t_all / 1e6);
	if (!keep && !reuse)
		unlink(path);
	return 0;
}
