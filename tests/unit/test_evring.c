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
