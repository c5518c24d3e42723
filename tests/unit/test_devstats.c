/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Per-device analyses: in-flight counts, sequential share, sizes, timeline. */
#include "analyze/report.h"
#include "harness.h"
#include "synth.h"

static const struct it_trail *by_sector(const struct trails *tr, uint64_t sector)
{
	for (size_t i = 0; i < tr->n; i++)
		if (tr->t[i].sector == sector)
			return &tr->t[i];
	return NULL;
}

static const struct it_dev_stats *dev_stats(const struct it_results *r, uint32_t dev)
{
	for (size_t i = 0; i < r->ndevs; i++)
		if (r->devs[i].dev == dev)
			return &r->devs[i];
	return NULL;
}

/*
 * Four requests on DEV_A (sectors 100, 200, 300, 400 = a, b, c, d) and
 * one on DEV_B, hand-interleaved. Depths (active = inserted or issued and
 * not completed; issued = at the driver), counting the I/O itself:
 *   I a      active 1            a.qd_insert = 1
 *   I b      active 2            b.qd_insert = 2
 *   D a      issued 1            a.qd_issue = 1
 *   D c      active 3, issued 2  c issued directly: c.qd_insert = 3, c.qd_issue = 2
 *   D b      issued 3            b.qd_issue = 3
 *   C a      active 2, issued 2
 *   I d      active 3            d.qd_insert = 3
 *   R c      issued 1            (c back from the driver)
 *   D d      issued 2            d.qd_issue = 2
 *   D c      issued 3            c.qd_issue = 3 (its last issue)
 *   C b, C c, C d
 * DEV_B's lone request, issued in the middle, has depth 1 and 1.
 */
TEST(inflight_hand_interleaving)
{
	struct it_event evs[] = {
		Q(100, 0xa, DEV_A, 100, K4, IT_OP_READ),
		I(110, 0x1a, 0xa, DEV_A, 100, K4, IT_OP_READ),
		Q(120, 0xb, DEV_A, 200, K4, IT_OP_READ),
		I(130, 0x1b, 0xb, DEV_A, 200, K4, IT_OP_READ),
		D(140, 0x1a, 0xa, DEV_A, 100, K4, IT_OP_READ),
		Q(150, 0xc, DEV_A, 300, K4, IT_OP_READ),
		Q(155, 0xe, DEV_B, 0, K4, IT_OP_READ),
		D(160, 0x1c, 0xc, DEV_A, 300, K4, IT_OP_READ),
		D(165, 0x1e, 0xe, DEV_B, 0, K4, IT_OP_READ),
		D(170, 0x1b, 0xb, DEV_A, 200, K4, IT_OP_READ),
		C(180, 0x1a, DEV_A, K4),
		Q(190, 0xd, DEV_A, 400, K4, IT_OP_READ),
		I(200, 0x1d, 0xd, DEV_A, 400, K4, IT_OP_READ),
		R(210, 0x1c, DEV_A),
		D(220, 0x1d, 0xd, DEV_A, 400, K4, IT_OP_READ),
		D(230, 0x1c, 0xc, DEV_A, 300, K4, IT_OP_READ),
		C(235, 0x1e, DEV_B, K4),
		C(240, 0x1b, DEV_A, K4),
		C(250, 0x1c, DEV_A, K4),
		C(260, 0x1d, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);
	static const struct { uint64_t sector; uint32_t ins, iss; } want[] = {
		{ 100, 1, 1 }, { 200, 2, 3 }, { 300, 3, 3 }, { 400, 3, 2 },
	};

	ASSERT_EQ(r->stats.ios, 5, "ios");
	for (size_t i = 0; i < N(want); i++) {
		const struct it_trail *t = by_sector(&tr, want[i].sector);
		char l1[32], l2[32];
		snprintf(l1, sizeof(l1), "qd_insert of %llu", (unsigned long long)want[i].sector);
		snprintf(l2, sizeof(l2), "qd_issue of %llu", (unsigned long long)want[i].sector);
		if (ASSERT_NOT_NULL(t, "trail")) {
			ASSERT_EQ(t->qd_insert, want[i].ins, l1);
			ASSERT_EQ(t->qd_issue, want[i].iss, l2);
		}
	}
	const struct it_dev_stats *da = dev_stats(r, DEV_A), *db = dev_stats(r, DEV_B);
	if (ASSERT_NOT_NULL(da, "DEV_A") && ASSERT_NOT_NULL(db, "DEV_B")) {
		ASSERT_EQ(da->qd_issue[1], 1, "DEV_A issue depth 1");
		ASSERT_EQ(da->qd_issue[2], 1, "DEV_A issue depth 2");
		ASSERT_EQ(da->qd_issue[3], 2, "DEV_A issue depth 3");
		ASSERT_EQ(da->qd_insert[1], 1, "DEV_A insert depth 1");
		ASSERT_EQ(da->qd_insert[2], 1, "DEV_A insert depth 2");
		ASSERT_EQ(da->qd_insert[3], 2, "DEV_A insert depth 3");
		ASSERT_EQ(da->qd_issue_max, 3, "DEV_A max");
		ASSERT_EQ(db->qd_issue[1], 1, "DEV_B depth 1");
		ASSERT_EQ(db->qd_insert[1], 1, "DEV_B insert depth 1");

		uint64_t b[IT_QD_BUCKETS];
		double avg;
		ASSERT_EQ(it_qd_buckets(da->qd_issue, b, &avg), 4, "bucketed I/Os");
		ASSERT_EQ(b[0], 1, "bucket 1");
		ASSERT_EQ(b[1], 1, "bucket 2");
		ASSERT_EQ(b[2], 2, "bucket 3-4");
		ASSERT_NEAR(avg, (1 + 2 + 3 + 3) / 4.0, 1e-12, "average depth at issue");
	}
	it_analyzer_free(a);
}

/*
 * Reads of 8 sectors at 0, 8, 16, 100, 108: random (first), sequential,
 * sequential, random, sequential. Writes interleaved at 16 and 24: the
 * first write is random even though a read ended at 16 (per op), the
 * second sequential. A flush is not classified.
 */
TEST(pattern_sequential_share)
{
	struct it_event evs[64];
	size_t n = 0;
	uint64_t ts = 1000, id = 1;
	static const struct { uint64_t sector; uint8_t op; } io[] = {
		{ 0, IT_OP_READ }, { 8, IT_OP_READ }, { 16, IT_OP_WRITE }, { 16, IT_OP_READ },
		{ 24, IT_OP_WRITE }, { 100, IT_OP_READ }, { 0, IT_OP_FLUSH }, { 108, IT_OP_READ },
	};

	for (size_t i = 0; i < N(io); i++, id++) {
		uint32_t bytes = io[i].op == IT_OP_FLUSH ? 0 : K4;
		evs[n++] = Q(ts++, 0xb00 + id, DEV_A, io[i].sector, bytes, io[i].op);
		evs[n++] = D(ts++, 0x100 + id, 0xb00 + id, DEV_A, io[i].sector, bytes, io[i].op);
		evs[n++] = C(ts++, 0x100 + id, DEV_A, bytes);
	}
	struct it_analyzer *a = run(evs, n, NULL);
	const struct it_results *r = it_analyzer_results(a);
	const struct it_dev_stats *d = dev_stats(r, DEV_A);

	if (ASSERT_NOT_NULL(d, "device")) {
		ASSERT_EQ(d->seq[IT_OPC_READ], 3, "sequential reads");
		ASSERT_EQ(d->rnd[IT_OPC_READ], 2, "random reads");
		ASSERT_EQ(d->seq[IT_OPC_WRITE], 1, "sequential writes");
		ASSERT_EQ(d->rnd[IT_OPC_WRITE], 1, "random writes");
		ASSERT_EQ(d->seq[IT_OPC_OTHER] + d->rnd[IT_OPC_OTHER], 0, "flush not classified");
		ASSERT_EQ(d->ios[IT_OPC_OTHER], 1, "flush counted as an I/O");
		ASSERT_EQ(d->sizes[0][IT_OPC_OTHER], 1, "flush in the 0-byte size class");
		ASSERT_EQ(d->sizes[it_size_class(K4)][IT_OPC_READ], 5, "4K reads");
		ASSERT_EQ(it_size_class_lo(it_size_class(K4)), 4096, "4K class starts at 4096");
		ASSERT_EQ(it_size_class_hi(it_size_class(K4)), 8191, "and ends at 8191");
	}
	it_analyzer_free(a);
}

/*
 * Trace window 1.0 s .. 5.5 s: 5 one-second intervals, the last one half
 * long. Completions at 1.0000001 s and 1.5 s (interval 0), 2.2 s (1),
 * 4.9 s (3, a write), none in 2 and 4.
 */
TEST(timeline_buckets)
{
	const uint64_t s = 1000000000ull;
	struct it_event evs[] = {
		Q(s, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(s + 50, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		C(s + 100, 0x71, DEV_A, K4),
		Q(s + s / 2 - 100, 0xb2, DEV_A, 8, 2 * K4, IT_OP_READ),
		D(s + s / 2 - 50, 0x72, 0xb2, DEV_A, 8, 2 * K4, IT_OP_READ),
		C(s + s / 2, 0x72, DEV_A, 2 * K4),
		Q(2 * s + s / 5 - 100, 0xb3, DEV_A, 64, K4, IT_OP_READ),
		D(2 * s + s / 5 - 50, 0x73, 0xb3, DEV_A, 64, K4, IT_OP_READ),
		C(2 * s + s / 5, 0x73, DEV_A, K4),
		Q(4 * s + 9 * s / 10 - 100, 0xb4, DEV_A, 640, K4, IT_OP_WRITE),
		D(4 * s + 9 * s / 10 - 50, 0x74, 0xb4, DEV_A, 640, K4, IT_OP_WRITE),
		C(4 * s + 9 * s / 10, 0x74, DEV_A, K4),
	};
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	o.start_ns = s;
	struct it_analyzer *a = run_opts(evs, N(evs), o, NULL, 5 * s + s / 2);
	const struct it_results *r = it_analyzer_results(a);
	const struct it_dev_stats *d = dev_stats(r, DEV_A);

	ASSERT_NEAR(r->duration_s, 4.5, 1e-9, "duration");
	if (ASSERT_NOT_NULL(d, "device") && ASSERT_EQ(d->ntimeline, 5, "intervals")) {
		ASSERT_EQ(d->timeline[0].ios[IT_OPC_READ], 2, "interval 0 reads");
		ASSERT_EQ(d->timeline[0].bytes[IT_OPC_READ], 3 * K4, "interval 0 bytes");
		ASSERT_EQ(d->timeline[1].ios[IT_OPC_READ], 1, "interval 1");
		ASSERT_EQ(d->timeline[2].ios[IT_OPC_READ] + d->timeline[2].ios[IT_OPC_WRITE], 0, "interval 2 idle");
		ASSERT_EQ(d->timeline[3].ios[IT_OPC_WRITE], 1, "interval 3 write");
		ASSERT_EQ(d->timeline[4].ios[IT_OPC_WRITE], 0, "interval 4 idle");
		ASSERT_NEAR(it_timeline_dur(r, 0), 1.0, 1e-9, "full interval");
		ASSERT_NEAR(it_timeline_dur(r, 4), 0.5, 1e-9, "last interval is half long");
	}
	it_analyzer_free(a);
}

/*
 * A trace naming thousands of devices (a very large machine, or a damaged
 * or forged file): 4096 devices, each with one read at the start and one
 * ten hours later. The timelines stay within IT_TIMELINE_TOTAL intervals
 * in all (longer intervals instead; 4096 full ones took 3.7 GB), and they
 * still hold every I/O.
 */
TEST(timeline_many_devices_bounded)
{
	const uint64_t s = 1000000000ull, far = 10 * 3600 * s;
	const uint32_t ndev = 4096;
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	struct it_analyzer *a;
	uint64_t total = 0, ios = 0;

	o.start_ns = s;
	a = it_analyzer_new(&o);
	for (uint32_t k = 0; k < ndev; k++) {
		uint32_t dev = 0x800000 + k;
		struct it_event evs[] = {
			Q(s + k, 0x10000 + k, dev, 0, K4, IT_OP_READ),
			D(s + k + 50, 0x20000 + k, 0x10000 + k, dev, 0, K4, IT_OP_READ),
			C(s + k + 100, 0x20000 + k, dev, K4),
			Q(far + k, 0x30000 + k, dev, 8, K4, IT_OP_READ),
			D(far + k + 50, 0x40000 + k, 0x30000 + k, dev, 8, K4, IT_OP_READ),
			C(far + k + 100, 0x40000 + k, dev, K4),
		};
		it_analyzer_feed(a, evs, N(evs));
	}
	it_analyzer_finish(a, far + s);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(it_analyzer_error(a), 0, "analysed");
	ASSERT_EQ(r->ndevs, ndev, "every device");
	for (size_t i = 0; i < r->ndevs; i++) {
		total += r->devs[i].ntimeline;
		for (size_t k = 0; k < r->devs[i].ntimeline; k++)
			ios += r->devs[i].timeline[k].ios[IT_OPC_READ];
	}
	ASSERT_LE(total, IT_TIMELINE_TOTAL, "timelines within their budget");
	ASSERT_EQ(ios, 2 * ndev, "every I/O in a timeline");
	ASSERT_GE(r->interval_ns, far / 256, "intervals made longer");
	it_analyzer_free(a);
}

/* More devices than IT_DEVS_MAX: refused, with a reason in words (report
 * prints it), not an out-of-memory death. */
TEST(devices_beyond_max_refused)
{
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	struct it_analyzer *a = it_analyzer_new(&o);
	int rc = 0;

	ASSERT_TRUE(it_analyzer_why(a) == NULL, "no reason before");
	for (uint32_t k = 0; k <= IT_DEVS_MAX && !rc; k++) {
		struct it_event e = Q(1000 + k, 0x10000 + k, 0x800000 + k, 0, K4, IT_OP_READ);

		rc = it_analyzer_feed(a, &e, 1);
	}
	ASSERT_TRUE(rc != 0, "the device past the limit fails the feed");
	ASSERT_TRUE(it_analyzer_error(a) != 0, "an error");
	const char *why = it_analyzer_why(a);
	if (ASSERT_NOT_NULL(why, "a reason"))
		ASSERT_NOT_NULL(strstr(why, "more than 16384 block devices"), "names the limit");
	it_analyzer_free(a);
}
