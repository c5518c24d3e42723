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
