// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The recording's spool (src/spool.c) on rings laid out by hand as the
 * kernel lays out a BPF ring buffer: what is taken into the files comes
 * back out once each, in time order within a set and to within a
 * millisecond across sets; records are looked at when taken, not again
 * when handed on; a busy record stays in its ring; a full spool leaves
 * records in their rings; the files wrap and are punched as they go.
 */
#include "harness.h"
#include "evring.h"
#include "spool.h"

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake_ring {
	unsigned long cons, prod;
	unsigned char data[4096];
};

struct rec {
	uint64_t ts;
	uint32_t id;   /* set << 28 | ring << 24 | count */
	uint32_t pad;
	uint64_t pad2; /* with its header 32 bytes: 4096 holds 128 whole */
};

#define REC_BYTES ((sizeof(struct rec) + BPF_RINGBUF_HDR_SZ + 7) & ~7ul)

/* Appends a record if it fits; its header's offset, or -1 when full. */
static long put(struct fake_ring *f, uint64_t ts, uint32_t id, uint32_t flags)
{
	struct rec r = { .ts = ts, .id = id };
	uint32_t hdr[2] = { (uint32_t)sizeof(r) | flags, 0 };
	unsigned long at = f->prod & (sizeof(f->data) - 1);

	if (f->prod - f->cons + REC_BYTES > sizeof(f->data))
		return -1;
	memcpy(f->data + at, hdr, sizeof(hdr));
	memcpy(f->data + at + BPF_RINGBUF_HDR_SZ, &r, sizeof(r));
	f->prod += REC_BYTES;
	return (long)at;
}

struct out {
	unsigned int n, looked;
	unsigned int bad_order;     /* a record more than 1 ms before the latest */
	unsigned int ring_order;    /* a ring's records out of their order */
	uint32_t last[2][4];        /* per set and ring: the last count handed on */
	uint64_t latest;
};

static int hand(void *ctx, void *data, size_t size)
{
	struct out *o = ctx;
	struct rec r;
	unsigned int set, ring;

	if (size != sizeof(r))
		return -22;
	memcpy(&r, data, sizeof(r));
	set = r.id >> 28;
	ring = (r.id >> 24) & 15;
	if (set > 1 || ring > 3 || (r.id & 0xffffff) != o->last[set][ring] + 1)
		o->ring_order++;
	else
		o->last[set][ring] = r.id & 0xffffff;
	if (r.ts + 1000000 < o->latest) {
		o->bad_order++;
		if (getenv("SPOOL_DEBUG"))
			fprintf(stderr, "late: set %u ring %u ts %llu latest %llu n %u\n", set, ring,
				(unsigned long long)r.ts, (unsigned long long)o->latest, o->n);
	}
	if (r.ts > o->latest)
		o->latest = r.ts;
	o->n++;
	return 0;
}

static void look(void *ctx, const void *data, size_t size)
{
	(void)data;
	(void)size;
	((struct out *)ctx)->looked++;
}

static struct it_evring *rings(unsigned int n, struct fake_ring *f, struct out *o)
{
	struct it_evring *r = it_evring_new(n, hand, NULL, o);

	for (unsigned int i = 0; r && i < n; i++)
		it_evring_set(r, i, &(struct it_evring_src){ .consumer_pos = &f[i].cons,
							      .producer_pos = &f[i].prod,
							      .data = f[i].data,
							      .mask = sizeof(f[i].data) - 1 });
	if (r)
		it_evring_set_look(r, look);
	return r;
}

static char dir[] = "/tmp/it-spool-XXXXXX";

/* Two sets (two rings and one) at random times, taken and handed on in
 * turns, bounded by the clock as the recorder bounds them, and at the end
 * everything: each record once, looked at once, in order. */
TEST(spool_hands_on_in_time_order_across_sets)
{
	static struct fake_ring a[2], b[1];
	struct out o = { 0 };
	struct it_evring *sets[2];
	struct it_spool *sp;
	uint32_t count[2][2] = { { 0 } };
	uint64_t clock = 1000000000ull;
	unsigned int made = 0;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	srand(7);
	sets[0] = rings(2, a, &o);
	sets[1] = rings(1, b, &o);
	if (!ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	sp = it_spool_new(dir, sets, 2, 16u << 20, clock);
	if (!ASSERT_NOT_NULL(sp, "spool"))
		return;
	for (unsigned int round = 0; round < 3000; round++) {
		/* a few records per ring, each ring in time order */
		for (unsigned int k = 0; k < 3; k++) {
			struct fake_ring *f = k < 2 ? &a[k] : &b[0];
			unsigned int set = k < 2 ? 0 : 1, ring = k < 2 ? k : 0;

			for (int j = rand() % 4; j > 0; j--) {
				clock += 1 + (uint64_t)(rand() % 20000);
				if (put(f, clock, set << 28 | ring << 24 | (count[set][ring] + 1), 0) < 0)
					break;
				count[set][ring]++;
				made++;
			}
		}
		ASSERT_TRUE(it_spool_take(sp, clock) >= 0, "take");
		if (round % 7 == 0)
			ASSERT_EQ(it_spool_hand_on(sp, clock - 2000000, 0), 0, "hand on");
	}
	ASSERT_EQ(it_spool_hand_on(sp, UINT64_MAX, 0), 0, "hand on the rest");
	ASSERT_EQ(o.n, made, "every record handed on once");
	ASSERT_EQ(o.looked, made, "every record looked at once, when taken");
	ASSERT_EQ(o.ring_order, 0, "each ring's records in their order");
	ASSERT_EQ(o.bad_order, 0, "in time order to within a millisecond");
	ASSERT_TRUE(it_spool_total(sp) == (uint64_t)made * REC_BYTES, "bytes taken");
	ASSERT_EQ(it_spool_held(sp), 0, "nothing held at the end");
	ASSERT_TRUE(a[0].cons == a[0].prod && b[0].cons == b[0].prod, "the rings given back");
	it_spool_free(sp);
	it_evring_free(sets[0]);
	it_evring_free(sets[1]);
	rmdir(dir);
	memcpy(dir + sizeof(dir) - 7, "XXXXXX", 6);
}

/* A busy record stops its ring's take; a spool at its bound leaves
 * records in their ring; the files wrap (16 MiB through a 16 MiB spool
 * several times) and hand on intact. */
TEST(spool_busy_full_and_wrapping)
{
	static struct fake_ring f[1];
	struct out o = { 0 };
	struct it_evring *set;
	struct it_spool *sp;
	uint64_t clock = 5000000000ull;
	uint32_t id = 0;
	long busy;
	unsigned long cap;

	memset(f, 0, sizeof(f));
	set = rings(1, f, &o);
	if (!ASSERT_TRUE(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	sp = it_spool_new(dir, &set, 1, 16u << 20, clock);
	if (!ASSERT_NOT_NULL(sp, "spool"))
		return;
	put(f, ++clock, ++id, 0);
	busy = put(f, ++clock, ++id, BPF_RINGBUF_BUSY_BIT);
	put(f, ++clock, ++id, 0);
	ASSERT_EQ(it_spool_take(sp, clock), 1, "the record before the busy one");
	ASSERT_EQ(o.looked, 1, "looked at the one taken");
	ASSERT_EQ(f[0].cons, REC_BYTES, "the busy one stays in its ring");
	memset(f[0].data + busy, 0, 4); /* committed */
	((uint32_t *)(f[0].data + busy))[0] = sizeof(struct rec);
	ASSERT_EQ(it_spool_take(sp, clock), 2, "the rest, once committed");

	/* fill the spool to its bound without handing on */
	cap = it_spool_bytes(sp) / REC_BYTES;
	while (id < cap + 100) {
		while (id < cap + 100 && put(f, ++clock, id + 1, 0) >= 0)
			id++;
		it_spool_take(sp, clock);
		if (f[0].cons != f[0].prod)
			break; /* full: it left them */
	}
	ASSERT_TRUE(f[0].cons != f[0].prod, "a full spool leaves records in their ring");
	ASSERT_TRUE(it_spool_held(sp) + REC_BYTES > it_spool_bytes(sp), "held up to its bound");
	ASSERT_EQ(it_spool_hand_on(sp, UINT64_MAX, 0), 0, "hand on");
	ASSERT_EQ(it_spool_held(sp), 0, "emptied");
	/* three times round the file */
	for (unsigned int round = 0; round < 3 * 4096; round++) {
		while (put(f, ++clock, id + 1, 0) >= 0)
			id++;
		ASSERT_TRUE(it_spool_take(sp, clock) >= 0, "take");
		if (round % 64 == 0)
			it_spool_hand_on(sp, clock - 100, 1u << 20);
	}
	ASSERT_EQ(it_spool_hand_on(sp, UINT64_MAX, 0), 0, "hand on the rest");
	ASSERT_TRUE(it_spool_total(sp) > 3 * it_spool_bytes(sp), "round the file three times");
	ASSERT_EQ(o.n, id, "every record handed on once");
	ASSERT_EQ(o.ring_order, 0, "in the ring's order, across the file's end");
	ASSERT_LE(it_spool_peak(sp), it_spool_bytes(sp), "never past its bound");
	it_spool_free(sp);
	it_evring_free(set);
	rmdir(dir);
	memcpy(dir + sizeof(dir) - 7, "XXXXXX", 6);
}

/* Where the spool cannot be: an error, so that the recording goes on
 * without one. */
TEST(spool_refuses_a_missing_directory)
{
	static struct fake_ring f[1];
	struct out o = { 0 };
	struct it_evring *set = rings(1, f, &o);

	ASSERT_TRUE(it_spool_new("/nonexistent/dir", &set, 1, 64u << 20, 0) == NULL,
		    "no spool in a missing directory");
	it_evring_free(set);
}
