// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The per-CPU event rings' merge (src/evring.c) on rings laid out by hand
 * as the kernel lays out a BPF ring buffer: records come out in time
 * order across rings and in ring order within one, only up to the bound;
 * a busy record stops its ring, a discarded one is stepped over; each
 * ring's consumer position moves past exactly what was handed on.
 */
#include "harness.h"
#include "evring.h"

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct fake_ring {
	unsigned long cons, prod;
	unsigned char data[4096];
};

struct rec {
	uint64_t ts;
	uint32_t id;
};

/* Appends a record (flags: BPF_RINGBUF_BUSY_BIT / _DISCARD_BIT); its
 * header's offset, to change its flags later. */
static unsigned long put(struct fake_ring *f, uint64_t ts, uint32_t id, uint32_t flags)
{
	struct rec r = { .ts = ts, .id = id };
	uint32_t hdr[2] = { (uint32_t)sizeof(r) | flags, 0 };
	unsigned long at = f->prod;

	memcpy(f->data + at, hdr, sizeof(hdr));
	memcpy(f->data + at + BPF_RINGBUF_HDR_SZ, &r, sizeof(r));
	f->prod += (sizeof(r) + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
	return at;
}

/* A record of len bytes (at least 12: time and id; the kernel pads the
 * space it takes to 8 bytes, not its length). */
static void put_len(struct fake_ring *f, uint64_t ts, uint32_t id, uint32_t len, uint32_t flags)
{
	uint32_t hdr[2] = { len | flags, 0 };

	memcpy(f->data + f->prod, hdr, sizeof(hdr));
	memcpy(f->data + f->prod + BPF_RINGBUF_HDR_SZ, &ts, sizeof(ts));
	memcpy(f->data + f->prod + BPF_RINGBUF_HDR_SZ + sizeof(ts), &id, sizeof(id));
	f->prod += (len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
}

static void set_flags(struct fake_ring *f, unsigned long at, uint32_t flags)
{
	uint32_t len = (uint32_t)sizeof(struct rec) | flags;

	memcpy(f->data + at, &len, sizeof(len));
}

struct got {
	uint32_t ids[32];
	unsigned int n;
	int fail_at; /* the callback fails on this record (1-based), 0 never */
};

static int collect(void *ctx, void *data, size_t size)
{
	struct got *g = ctx;
	struct rec r;

	if (size != sizeof(r) || g->n >= 32)
		return -22;
	memcpy(&r, data, sizeof(r));
	g->ids[g->n++] = r.id;
	return (int)g->n == g->fail_at ? -5 : 0;
}

static struct it_evring *rings(struct fake_ring *f, unsigned int n, struct got *g)
{
	struct it_evring *r = it_evring_new(n, collect, NULL, g);

	for (unsigned int i = 0; r && i < n; i++)
		it_evring_set(r, i, &(struct it_evring_src){ .consumer_pos = &f[i].cons,
							      .producer_pos = &f[i].prod,
							      .data = f[i].data,
							      .mask = sizeof(f[i].data) - 1 });
	return r;
}

static void check_ids(const struct got *g, const uint32_t *want, unsigned int n, const char *label)
{
	if (!ASSERT_EQ(g->n, n, label))
		return;
	for (unsigned int i = 0; i < n; i++)
		ASSERT_EQ(g->ids[i], want[i], label);
}

TEST(evring_merges_by_time_up_to_the_bound)
{
	static struct fake_ring f[3];
	struct got g = { 0 };
	struct it_evring *r;

	memset(f, 0, sizeof(f));
	put(&f[0], 10, 1, 0);
	put(&f[0], 40, 4, 0);
	put(&f[0], 60, 6, 0);
	put(&f[1], 20, 2, 0);
	put(&f[1], 30, 3, 0);
	put(&f[1], 70, 7, 0);
	/* ring 2 stays empty */
	r = rings(f, 3, &g);
	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	ASSERT_EQ(it_evring_drain(r, 50), 4, "due by 50");
	check_ids(&g, (uint32_t[]){ 1, 2, 3, 4 }, 4, "order by 50");
	/* what was handed on is given back to the kernel, no more */
	ASSERT_EQ(f[0].cons, 2 * 24, "ring 0 consumed two");
	ASSERT_EQ(f[1].cons, 2 * 24, "ring 1 consumed two");
	put(&f[2], 65, 8, 0);
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), 3, "the rest");
	check_ids(&g, (uint32_t[]){ 1, 2, 3, 4, 6, 8, 7 }, 7, "order of all");
	ASSERT_EQ(f[0].cons, f[0].prod, "ring 0 empty");
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), 0, "nothing left");
	it_evring_free(r);
}

TEST(evring_busy_stops_its_ring_discarded_is_skipped)
{
	static struct fake_ring f[2];
	struct got g = { 0 };
	struct it_evring *r;
	unsigned long busy;

	memset(f, 0, sizeof(f));
	put(&f[0], 10, 1, 0);
	busy = put(&f[0], 20, 2, BPF_RINGBUF_BUSY_BIT);
	put(&f[0], 30, 3, 0);
	put(&f[1], 15, 5, BPF_RINGBUF_DISCARD_BIT);
	put(&f[1], 40, 4, 0);
	r = rings(f, 2, &g);
	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), 2, "up to the busy one");
	check_ids(&g, (uint32_t[]){ 1, 4 }, 2, "busy stops ring 0 only");
	ASSERT_EQ(f[0].cons, busy, "ring 0 waits at the busy record");
	set_flags(&f[0], busy, 0); /* committed */
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), 2, "after the commit");
	check_ids(&g, (uint32_t[]){ 1, 4, 2, 3 }, 4, "then the rest of ring 0");
	it_evring_free(r);
}

TEST(evring_keeps_ring_order_and_stops_on_error)
{
	static struct fake_ring f[2];
	struct got g = { .fail_at = 2 };
	struct it_evring *r;

	memset(f, 0, sizeof(f));
	/* a completion that interrupted a probe: written after, earlier time */
	put(&f[0], 50, 1, 0);
	put(&f[0], 30, 2, 0);
	put(&f[1], 40, 3, 0);
	r = rings(f, 2, &g);
	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), -5, "the callback's error");
	check_ids(&g, (uint32_t[]){ 3, 1 }, 2, "stopped after the failing record");
	ASSERT_EQ(f[0].cons, 24, "the failing record counts as handed on");
	g.fail_at = 0;
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), 1, "the rest");
	check_ids(&g, (uint32_t[]){ 3, 1, 2 }, 3, "ring order within ring 0");
	it_evring_free(r);
}

/* The consumer position goes back to the producer by the eighth of the
 * ring and at the end of a drain, not at every record (a write the
 * producer's next read of it would miss the cache for); the producer
 * position is read again once the records below its last value are used
 * up, so a record written during a drain is still handed on in it. */
struct watch {
	struct fake_ring *f;
	unsigned long cons_at[64];
	unsigned int n;
};

static int watch_cons(void *ctx, void *data, size_t size)
{
	struct watch *w = ctx;

	(void)data;
	(void)size;
	if (w->n < 64)
		w->cons_at[w->n] = w->f->cons;
	if (++w->n == 40) /* a record arrives while the drain runs */
		put(w->f, 1000, 99, 0);
	return 0;
}

TEST(evring_gives_space_back_by_the_eighth)
{
	static struct fake_ring f[1];
	struct watch w = { .f = f };
	struct it_evring *r;
	unsigned long eighth = sizeof(f[0].data) / 8, first_given = 0;

	memset(f, 0, sizeof(f));
	for (uint32_t i = 0; i < 40; i++) /* 40 x 24 bytes: past an eighth (512) */
		put(&f[0], 10 + i, i, 0);
	r = it_evring_new(1, watch_cons, NULL, &w);
	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	it_evring_set(r, 0, &(struct it_evring_src){ .consumer_pos = &f[0].cons,
						      .producer_pos = &f[0].prod,
						      .data = f[0].data,
						      .mask = sizeof(f[0].data) - 1 });
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), 41, "every record, the late one too");
	ASSERT_EQ(w.cons_at[1], 0, "not given back after one record");
	for (unsigned int i = 0; i < 41; i++)
		if (!first_given && w.cons_at[i])
			first_given = w.cons_at[i];
	ASSERT_TRUE(first_given > eighth && first_given <= eighth + 24,
		    "given back once just past an eighth");
	ASSERT_EQ(f[0].cons, f[0].prod, "all given back at the end of the drain");
	it_evring_free(r);
}

/* Random rings drained as records keep coming, each drain bounded by the
 * clock at its start (later records are stamped after it): every record
 * is handed on once; within a ring in ring order; with each ring in time
 * order the whole output is; a drain never hands on a record past its
 * bound; the rings wrap. */
struct seen {
	uint32_t last_id[4];  /* per ring: the last id handed on (ids count up per ring) */
	uint64_t last_ts, bound;
	unsigned n, out_of_order, past_bound, ring_order;
};

static int check_rec(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	struct rec r;
	unsigned ring;

	if (size != sizeof(r))
		return -22;
	memcpy(&r, data, sizeof(r));
	ring = r.id >> 24;
	if (ring >= 4 || (r.id & 0xffffff) != s->last_id[ring] + 1)
		s->ring_order++;
	s->last_id[ring & 3] = r.id & 0xffffff;
	if (r.ts < s->last_ts)
		s->out_of_order++;
	if (r.ts > s->bound)
		s->past_bound++;
	s->last_ts = r.ts;
	s->n++;
	return 0;
}

/* A ring whose positions only grow, wrapping in a 4096-byte data area
 * written twice in a row, as the kernel maps it (a record crossing the
 * end reads whole). */
struct wrap_ring {
	unsigned long cons, prod;
	unsigned char data[8192];
};

static bool put_wrap(struct wrap_ring *f, uint64_t ts, uint32_t id)
{
	struct rec r = { .ts = ts, .id = id };
	uint32_t hdr[2] = { (uint32_t)sizeof(r), 0 };
	unsigned char rec[24] = { 0 };
	unsigned long at = f->prod & 4095;

	if (f->prod - f->cons + sizeof(rec) > 4096)
		return false; /* full: the kernel would refuse it */
	memcpy(rec, hdr, sizeof(hdr));
	memcpy(rec + BPF_RINGBUF_HDR_SZ, &r, sizeof(r));
	for (size_t b = 0; b < sizeof(rec); b++) {
		unsigned long pos = (at + b) & 4095;

		f->data[pos] = rec[b];
		f->data[pos + 4096] = rec[b];
	}
	f->prod += sizeof(rec);
	return true;
}

TEST(evring_random_streams)
{
	static struct wrap_ring f[4];
	uint64_t next_ts[4] = { 0 };
	uint32_t next_id[4] = { 0 };
	struct seen s = { 0 };
	struct it_evring *r;
	unsigned total = 0, seed = 12345;

	memset(f, 0, sizeof(f));
	r = it_evring_new(4, check_rec, NULL, &s);
	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	for (unsigned i = 0; i < 4; i++)
		it_evring_set(r, i, &(struct it_evring_src){ .consumer_pos = &f[i].cons,
							      .producer_pos = &f[i].prod,
							      .data = f[i].data, .mask = 4095 });
	for (unsigned round = 0, clk = 100; round < 2000; round++) {
		/* the clock moves on; each ring gets 0-7 records stamped with
		 * it or a little later (probes still running), in ring order */
		clk += 1 + ((seed = seed * 1103515245 + 12345) >> 16 & 31);
		for (unsigned i = 0; i < 4; i++) {
			for (unsigned k = (seed = seed * 1103515245 + 12345) >> 16 & 7; k--;) {
				uint64_t ts = clk + ((seed = seed * 1103515245 + 12345) >> 16 & 15);

				if (ts <= next_ts[i])
					ts = next_ts[i] + 1;
				if (!put_wrap(&f[i], ts, (i << 24) | (next_id[i] + 1)))
					break;
				next_ts[i] = ts;
				next_id[i]++;
				total++;
			}
		}
		/* the drain's bound: the clock now (what comes later is
		 * stamped after it), as the recorder's is, less its hold */
		s.bound = clk;
		it_evring_drain(r, s.bound);
	}
	s.bound = UINT64_MAX;
	it_evring_drain(r, UINT64_MAX);
	ASSERT_EQ(s.n, total, "every record once");
	ASSERT_EQ(s.ring_order, 0, "ring order kept");
	ASSERT_EQ(s.out_of_order, 0, "time order across rings");
	ASSERT_EQ(s.past_bound, 0, "none past its drain's bound");
	ASSERT_TRUE(f[0].prod > 3 * 4096, "the rings wrapped");
	ASSERT_TRUE(total > 10000, "a real stream");
	it_evring_free(r);
}

static unsigned lens_seen;

static int count_len(void *ctx, void *data, size_t size)
{
	uint32_t id;

	(void)ctx;
	memcpy(&id, (const unsigned char *)data + 8, sizeof(id));
	lens_seen = lens_seen * 10 + id;
	return size >= 12 ? 0 : -22;
}

/* Records of lengths that are no multiple of 8 (the syscall layer's
 * paths and names): each takes its length rounded up, discarded or not. */
TEST(evring_odd_lengths)
{
	static struct fake_ring f;
	struct it_evring *r = it_evring_new(1, count_len, NULL, NULL);

	memset(&f, 0, sizeof(f));
	put_len(&f, 1, 1, 12, 0);
	put_len(&f, 2, 2, 13, BPF_RINGBUF_DISCARD_BIT);
	put_len(&f, 3, 3, 21, 0);
	put_len(&f, 4, 4, 16, 0);
	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	it_evring_set(r, 0, &(struct it_evring_src){ .consumer_pos = &f.cons, .producer_pos = &f.prod,
						      .data = f.data, .mask = sizeof(f.data) - 1 });
	lens_seen = 0;
	ASSERT_EQ(it_evring_drain(r, UINT64_MAX), 3, "three kept");
	ASSERT_EQ(lens_seen, 134, "in order, the discarded one stepped over");
	ASSERT_EQ(f.cons, f.prod, "all consumed");
	it_evring_free(r);
}

/* ---- a CPU's event buffer (include/iotrail/event.h, struct it_ev_buf) ----
 * laid out as bpf/events.bpf.h's ev_buf_reserve/ev_submit lay it out
 * (mirrored here: the same steps, in C): a record never wraps around the
 * data's end, the space left there is a discarded record. */
#include "iotrail/event.h"

#define BUF_BYTES 256 /* 3 records of 72 bytes, 40 left at the end */

static unsigned char evb_mem[sizeof(struct it_ev_buf) + BUF_BYTES + IT_EV_BUF_REC]
	__attribute__((aligned(64)));
#define B ((struct it_ev_buf *)evb_mem)
#define D (evb_mem + offsetof(struct it_ev_buf, data))

/* 0, or -1 when full (the BPF side then sends the event through the ring) */
static int buf_put(uint64_t ts, uint32_t id)
{
	uint64_t pos = B->prod, off = pos & (BUF_BYTES - 1), pad = 0;
	struct it_event e = { .ts_ns = ts, .id = id };
	uint32_t hdr[2] = { sizeof(e), 0 };

	if (off + IT_EV_BUF_REC > BUF_BYTES)
		pad = BUF_BYTES - off;
	if (pos + pad + IT_EV_BUF_REC - B->cons > BUF_BYTES)
		return -1;
	if (pad) {
		uint32_t skip[2] = { (uint32_t)(pad - 8) | IT_EV_BUF_DISCARD, 0 };

		memcpy(D + off, skip, sizeof(skip));
		pos += pad;
		off = 0;
	}
	memcpy(D + off, hdr, sizeof(hdr));
	memcpy(D + off + 8, &e, sizeof(e));
	B->prod = pos + IT_EV_BUF_REC;
	return 0;
}

static uint64_t ev_seen[64];
static unsigned int ev_nseen;

static int collect_event(void *ctx, void *data, size_t size)
{
	struct it_event e;

	(void)ctx;
	if (size != sizeof(e) || ev_nseen >= 64)
		return -22;
	memcpy(&e, data, sizeof(e));
	ev_seen[ev_nseen++] = e.id;
	return 0;
}

/* 40 events into the buffer, drained every few (it holds 3), beside a
 * ring with 10 of its own at times between: every one comes out once, in
 * time order, across the wraps; a full buffer refuses (the event then
 * goes to the ring in the kernel). */
TEST(evring_event_buffer_wraps)
{
	static struct fake_ring ring;
	struct it_evring *r = it_evring_new(2, collect_event, NULL, NULL);
	uint64_t ts = 0;
	unsigned int refused = 0, in_ring = 0;
	bool ordered = true;

	memset(evb_mem, 0, sizeof(evb_mem));
	memset(&ring, 0, sizeof(ring));
	ev_nseen = 0;
	if (!ASSERT_NOT_NULL(r, "new"))
		return;
	it_evring_set(r, 0, &(struct it_evring_src){ .consumer_pos = (unsigned long *)&B->cons,
						      .producer_pos = (const unsigned long *)&B->prod,
						      .data = D, .mask = BUF_BYTES - 1 });
	for (uint32_t id = 1; id <= 40; id++) {
		ts += 10;
		if (buf_put(ts, id)) { /* full: drain, then it fits */
			refused++;
			it_evring_drain(r, UINT64_MAX);
			ASSERT_EQ(buf_put(ts, id), 0, "fits after a drain");
		}
		if (id % 4 == 0 && in_ring < 10) { /* the ring's, 5 ns later */
			struct it_event e = { .ts_ns = ts + 5, .id = 1000 + in_ring++ };
			uint32_t hdr[2] = { sizeof(e), 0 };

			memcpy(ring.data + ring.prod, hdr, sizeof(hdr));
			memcpy(ring.data + ring.prod + 8, &e, sizeof(e));
			ring.prod += IT_EV_BUF_REC;
			if (id == 4)
				it_evring_set(r, 1, &(struct it_evring_src){
					.consumer_pos = &ring.cons, .producer_pos = &ring.prod,
					.data = ring.data, .mask = sizeof(ring.data) - 1 });
		}
	}
	it_evring_drain(r, UINT64_MAX);
	ASSERT_EQ(ev_nseen, 50, "every event once");
	ASSERT_TRUE(refused > 5, "the buffer filled and wrapped");
	for (unsigned int i = 0, buf = 1, rng = 1000; i < ev_nseen; i++) {
		/* buffer's in order, each ring event right after the buffer's
		 * event whose time it follows */
		if (ev_seen[i] >= 1000)
			ordered &= ev_seen[i] == rng++ && i > 0 && ev_seen[i - 1] % 4 == 0;
		else
			ordered &= ev_seen[i] == buf++;
	}
	ASSERT_TRUE(ordered, "in time order across the buffer and the ring");
	ASSERT_EQ(B->cons, B->prod, "the buffer's consumer position at its end");
	it_evring_free(r);
}
