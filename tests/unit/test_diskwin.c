/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The reconciliation with the kernel's counts over the diskstats window
 * (src/analyze/diskwin.c) on a synthetic stream. */
#include "harness.h"
#include "synth.h"

static struct it_event window_from(uint64_t ts, uint32_t flags)
{
	struct it_event e = ev_base(IT_EV_DISKSTATS_FROM, ts, 0, 0);

	e.flags = flags;
	return e;
}

static struct it_event diskstats(uint64_t ts, uint32_t dev, uint64_t r, uint64_t w, uint64_t f)
{
	struct it_event e = ev_base(IT_EV_DISKSTATS, ts, f, dev);

	e.sector = r;
	e.aux = w;
	return e;
}

/*
 * Window 1000..20000 on DEV_A. Before it: a read completed at 500. In it:
 * a read, a write; a read whose completion no probe saw but whose request
 * came back (counted from reuse) and the read that reused it; a completion
 * of a request never seen (not an I/O); a read whose completion no probe
 * saw and whose request never came back; the machinery's flush command.
 * After the DISKSTATS record in the file: a read completed at 19000
 * (inside: the ring still held it) and one at 21000 (after the read).
 * The kernel counted 6 reads (the 5 in the window and the one at 19000),
 * 1 write, 1 flush.
 */
static size_t window_stream(struct it_event *e, uint32_t from_flags, bool with_from)
{
	size_t n = 0;

	e[n++] = Q(100, 0xb0, DEV_A, 0, K4, IT_OP_READ);
	e[n++] = D(110, 0x70, 0xb0, DEV_A, 0, K4, IT_OP_READ);
	e[n++] = C(500, 0x70, DEV_A, K4);
	if (with_from)
		e[n++] = window_from(1000, from_flags);
	e[n++] = Q(2000, 0xb1, DEV_A, 100, K4, IT_OP_READ);
	e[n++] = D(2010, 0x71, 0xb1, DEV_A, 100, K4, IT_OP_READ);
	e[n++] = C(3000, 0x71, DEV_A, K4);
	e[n++] = Q(4000, 0xb2, DEV_A, 200, K4, IT_OP_WRITE);
	e[n++] = D(4010, 0x72, 0xb2, DEV_A, 200, K4, IT_OP_WRITE);
	e[n++] = C(5000, 0x72, DEV_A, K4);
	e[n++] = Q(6000, 0xb3, DEV_A, 300, K4, IT_OP_READ);
	e[n++] = I(6005, 0x73, 0xb3, DEV_A, 300, K4, IT_OP_READ);
	e[n++] = D(6010, 0x73, 0xb3, DEV_A, 300, K4, IT_OP_READ);
	/* its completion lost; request 0x73 reused for a new bio */
	e[n++] = Q(7990, 0xb4, DEV_A, 400, K4, IT_OP_READ);
	e[n++] = I(8000, 0x73, 0xb4, DEV_A, 400, K4, IT_OP_READ);
	e[n++] = D(8010, 0x73, 0xb4, DEV_A, 400, K4, IT_OP_READ);
	e[n++] = C(9000, 0x73, DEV_A, K4);
	e[n++] = C(9500, 0x99, DEV_A, K4); /* never seen: not an I/O */
	e[n - 1].op = IT_OP_READ;
	e[n++] = Q(10000, 0xb5, DEV_A, 500, K4, IT_OP_READ);
	e[n++] = D(10010, 0x75, 0xb5, DEV_A, 500, K4, IT_OP_READ); /* never completes */
	e[n++] = I(11000, 0x80, 0, DEV_A, 0, 0, IT_OP_FLUSH);      /* the machinery's flush */
	e[n++] = D(11010, 0x80, 0, DEV_A, 0, 0, IT_OP_FLUSH);
	e[n++] = C(11500, 0x80, DEV_A, 0);
	e[n - 1].op = IT_OP_FLUSH;
	e[n++] = Q(18000, 0xb6, DEV_A, 600, K4, IT_OP_READ);
	e[n++] = D(18010, 0x76, 0xb6, DEV_A, 600, K4, IT_OP_READ);
	e[n++] = Q(19500, 0xb7, DEV_A, 700, K4, IT_OP_READ);
	e[n++] = D(19510, 0x77, 0xb7, DEV_A, 700, K4, IT_OP_READ);
	e[n++] = diskstats(20000, DEV_A, 6, 1, 1);
	e[n++] = C(19000, 0x76, DEV_A, K4); /* consumed after the read, older than it */
	e[n++] = C(21000, 0x77, DEV_A, K4); /* after the read */
	return n;
}

TEST(diskwin_reconciles_per_class)
{
	struct it_event evs[64];
	size_t n = window_stream(evs, 0, true);
	struct it_analyzer *a = run(evs, n, NULL);
	const struct it_results *r = it_analyzer_results(a);
	const struct it_diskstats *d;

	if (!ASSERT_TRUE(r && r->ndisk == 1, "one device's diskstats"))
		goto out;
	d = &r->disk[0];
	ASSERT_TRUE(r->disk_window, "window known");
	ASSERT_TRUE(!r->disk_scoped, "not scoped");
	ASSERT_EQ(r->disk_from_ns, 1000, "from");
	ASSERT_EQ(r->disk_to_ns, 20000, "to");
	/* reads: 3000, the reused 0x73 (by 8000), 9000, 19000; not 500 nor 21000 */
	ASSERT_EQ(d->win.counted[IT_DS_READ], 4, "reads counted in the window");
	ASSERT_EQ(d->win.reused[IT_DS_READ], 1, "of which from reuse");
	ASSERT_EQ(d->win.unstarted[IT_DS_READ], 1, "a completion whose start was not seen");
	ASSERT_EQ(it_diskwin_short(d, IT_DS_READ), 2, "lacking: the unstarted one and the lost one");
	ASSERT_EQ(d->win.counted[IT_DS_WRITE], 1, "write");
	ASSERT_EQ(d->win.counted[IT_DS_FLUSH], 1, "flush command");
	ASSERT_EQ(it_diskwin_short(d, IT_DS_WRITE) + it_diskwin_short(d, IT_DS_FLUSH), 0, "exact");
	ASSERT_EQ(it_diskwin_over(d, IT_DS_READ), 0, "none over");
	ASSERT_EQ(it_diskwin_short_total(r), 2, "total lacking");
	/* the I/O totals: every completed read, in the window or not */
	ASSERT_EQ(r->stats.ios, 7, "I/Os: 6 reads and a write");
out:
	it_analyzer_free(a);
}

TEST(diskwin_scoped_not_reconciled)
{
	struct it_event evs[64];
	size_t n = window_stream(evs, IT_DSF_SCOPED, true);
	struct it_analyzer *a = run(evs, n, NULL);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_TRUE(r->disk_window && r->disk_scoped, "window, scoped");
	ASSERT_EQ(it_diskwin_short_total(r), 0, "nothing said lacking under a scope");
	it_analyzer_free(a);
}

TEST(diskwin_old_trace_without_window)
{
	struct it_event evs[64];
	size_t n = window_stream(evs, 0, false);
	struct it_analyzer *a = run(evs, n, NULL);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_TRUE(!r->disk_window, "no window");
	ASSERT_EQ(r->ndisk, 1, "its diskstats still read");
	ASSERT_EQ(r->disk[0].reads, 6, "kernel reads");
	ASSERT_EQ(it_diskwin_short_total(r), 0, "not reconciled");
	it_analyzer_free(a);
}

TEST(diskwin_classes)
{
	ASSERT_EQ(it_ds_class(IT_OP_READ, false), IT_DS_READ, "read");
	ASSERT_EQ(it_ds_class(IT_OP_FLUSH, false), IT_DS_WRITE, "data-less PREFLUSH: a write");
	ASSERT_EQ(it_ds_class(IT_OP_FLUSH, true), IT_DS_FLUSH, "flush command");
	ASSERT_EQ(it_ds_class(IT_OP_DISCARD, false), IT_DS_DISCARD, "discard");
	ASSERT_EQ(it_ds_class(IT_OP_WRITE_ZEROES, false), IT_DS_WRITE, "write zeroes");
	ASSERT_EQ(it_ds_class(IT_OP_ZONE_OPEN, false), IT_DS_READ, "zone open: an even op");
	ASSERT_EQ(it_ds_class(IT_OP_DRV_IN, false), -1, "passthrough: not counted");
}
