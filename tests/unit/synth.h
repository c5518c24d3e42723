/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Synthetic block event streams for the analyzer tests: one builder per
 * event kind, filled as the BPF side fills them (event.h), and a runner
 * that analyses a stream and keeps every completed trail.
 */
#ifndef IOTRAIL_TESTS_SYNTH_H
#define IOTRAIL_TESTS_SYNTH_H

#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"

#define DEV_A IT_MKDEV(7, 0)   /* "loop0" */
#define DEV_B IT_MKDEV(259, 1) /* a second disk */
#define K4 4096u

static inline struct it_event ev_base(uint8_t type, uint64_t ts, uint64_t id, uint32_t dev)
{
	struct it_event e;
	memset(&e, 0, sizeof(e));
	e.type = type;
	e.ts_ns = ts;
	e.id = id;
	e.dev = dev;
	e.layer = IT_LAYER_BLOCK;
	e.pid = e.tid = 100;
	return e;
}

static inline struct it_event ev_io(uint8_t type, uint64_t ts, uint64_t id, uint64_t aux,
				    uint32_t dev, uint64_t sector, uint32_t bytes, uint8_t op)
{
	struct it_event e = ev_base(type, ts, id, dev);
	e.aux = aux;
	e.sector = sector;
	e.bytes = bytes;
	e.op = op;
	return e;
}

#define Q(ts, bio, dev, sec, bytes, op) ev_io(IT_EV_BIO_QUEUE, ts, bio, 0, dev, sec, bytes, op)
#define M(ts, bio, dev, sec, bytes, op) ev_io(IT_EV_BIO_BACKMERGE, ts, bio, 0, dev, sec, bytes, op)
#define F(ts, bio, dev, sec, bytes, op) ev_io(IT_EV_BIO_FRONTMERGE, ts, bio, 0, dev, sec, bytes, op)
/* split: id = front part, aux = parent, sector = where the remainder starts */
#define X(ts, front, parent, dev, rest, bytes) \
	ev_io(IT_EV_BIO_SPLIT, ts, front, parent, dev, rest, bytes, IT_OP_READ)
#define I(ts, rq, bio, dev, sec, bytes, op) ev_io(IT_EV_RQ_INSERT, ts, rq, bio, dev, sec, bytes, op)
#define D(ts, rq, bio, dev, sec, bytes, op) ev_io(IT_EV_RQ_ISSUE, ts, rq, bio, dev, sec, bytes, op)
#define R(ts, rq, dev) ev_base(IT_EV_RQ_REQUEUE, ts, rq, dev)
#define RQM(ts, rq, dev) ev_base(IT_EV_RQ_MERGE, ts, rq, dev)
#define C(ts, rq, dev, bytes) ev_io(IT_EV_RQ_COMPLETE, ts, rq, 0, dev, 0, bytes, 0)
#define BC(ts, bio, dev) ev_base(IT_EV_BIO_COMPLETE, ts, bio, dev)

static inline struct it_event ev_err(struct it_event e, int16_t err)
{
	e.error = err;
	return e;
}

static inline struct it_event ev_tid(struct it_event e, uint32_t pid, uint32_t tid)
{
	e.pid = pid;
	e.tid = tid;
	return e;
}

static inline struct it_event TASK(uint64_t ts, uint32_t pid, uint32_t tid, const char *comm)
{
	struct it_event e = ev_base(IT_EV_TASK, ts, 0, 0);
	e.pid = pid;
	e.tid = tid;
	strncpy(e.comm, comm, sizeof(e.comm));
	return e;
}

/* A zone of a zoned device's table (IT_EV_ZONE_INFO): sequential write
 * required, empty. */
static inline struct it_event ZINFO(uint32_t dev, uint32_t idx, uint64_t start, uint64_t len)
{
	struct it_event e = ev_base(IT_EV_ZONE_INFO, 1, start, dev);
	e.pid = idx;
	e.sector = start;
	e.bytes = (uint32_t)len;
	e.aux = len;
	e.flags = 2 | 1 << 8;
	return e;
}

/* Completed trails, in completion order. */
struct trails {
	struct it_trail t[64];
	size_t n;
};

static inline void keep_trail(const struct it_trail *t, void *ctx)
{
	struct trails *tr = ctx;
	if (tr->n < 64)
		tr->t[tr->n++] = *t;
}

/* Analyses evs (one batch) with the given options; trails go to tr. */
static inline struct it_analyzer *run_opts(const struct it_event *evs, size_t n,
					   struct it_analyzer_opts o, struct trails *tr,
					   uint64_t end_ns)
{
	if (tr) {
		memset(tr, 0, sizeof(*tr));
		o.on_trail = keep_trail;
		o.ctx = tr;
	}
	struct it_analyzer *a = it_analyzer_new(&o);
	if (!a)
		return NULL;
	it_analyzer_feed(a, evs, n);
	it_analyzer_finish(a, end_ns);
	return a;
}

static inline struct it_analyzer *run(const struct it_event *evs, size_t n, struct trails *tr)
{
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	return run_opts(evs, n, o, tr, 0);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

#endif
