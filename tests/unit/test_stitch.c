/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Stitching and stage math on hand-made event streams. Every expected
 * value is worked out by hand from the timestamps in the stream.
 */
#include "harness.h"
#include "synth.h"

static const struct it_group *only_group(const struct it_results *r)
{
	return r->ngroups == 1 ? &r->groups[0] : NULL;
}

TEST(stitch_plain_q_d_c)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 800, K4, IT_OP_READ),
		D(3000, 0x71, 0xb1, DEV_A, 800, K4, IT_OP_READ),
		C(10000, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios");
	ASSERT_EQ(tr.n, 1, "trails");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2D), 2000, "Q2D");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_D2C), 7000, "D2C");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 9000, "Q2C");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2I), -1, "no Q2I");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_I2D), -1, "no I2D");
	const struct it_group *g = only_group(r);
	if (ASSERT_NOT_NULL(g, "one group")) {
		ASSERT_EQ(g->count, 1, "count");
		ASSERT_EQ(g->bytes, K4, "bytes");
		ASSERT_EQ(g->key.op, IT_OP_READ, "key op");
		ASSERT_EQ(g->key.dev, DEV_A, "key dev");
		ASSERT_EQ(g->stage[IT_STAGE_Q2C].min, 9000, "latency min");
		ASSERT_EQ(g->stage[IT_STAGE_Q2C].max, 9000, "latency max");
		ASSERT_NEAR(it_stage_share(g, IT_STAGE_D2C), 7000.0 / 9000, 1e-9, "D2C share");
		ASSERT_NEAR(it_stage_share(g, IT_STAGE_Q2D), 2000.0 / 9000, 1e-9, "Q2D share");
	}
	ASSERT_EQ(r->stats.incomplete, 0, "incomplete");
	it_analyzer_free(a);
}

TEST(stitch_q_i_d_c)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 800, K4, IT_OP_WRITE),
		I(1500, 0x71, 0xb1, DEV_A, 800, K4, IT_OP_WRITE),
		D(4000, 0x71, 0xb1, DEV_A, 800, K4, IT_OP_WRITE),
		C(9000, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);
	const struct it_group *g = only_group(r);

	ASSERT_EQ(tr.n, 1, "trails");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2I), 500, "Q2I");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_I2D), 2500, "I2D");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2D), -1, "no Q2D when inserted");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_D2C), 5000, "D2C");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 8000, "Q2C");
	if (ASSERT_NOT_NULL(g, "one group")) {
		ASSERT_EQ(g->key.op, IT_OP_WRITE, "op");
		ASSERT_NEAR(it_stage_share(g, IT_STAGE_Q2I) + it_stage_share(g, IT_STAGE_I2D) +
				    it_stage_share(g, IT_STAGE_D2C), 1.0, 1e-12, "shares add up");
		ASSERT_NEAR(it_stage_share(g, IT_STAGE_I2D), 2500.0 / 8000, 1e-12, "I2D share");
		ASSERT_EQ(g->stage[IT_STAGE_Q2D].count, 0, "Q2D samples");
	}
	it_analyzer_free(a);
}

/* b2 is merged behind b1 while both wait in the plug: one request, Q of b1. */
TEST(stitch_back_merge)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 100, K4, IT_OP_READ),
		Q(1100, 0xb2, DEV_A, 108, K4, IT_OP_READ),
		M(1150, 0xb2, DEV_A, 108, K4, IT_OP_READ),
		I(1500, 0x71, 0xb1, DEV_A, 100, 2 * K4, IT_OP_READ),
		D(2000, 0x71, 0xb1, DEV_A, 100, 2 * K4, IT_OP_READ),
		C(5000, 0x71, DEV_A, 2 * K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "one I/O");
	ASSERT_EQ(r->stats.merges, 1, "merges");
	ASSERT_EQ(r->stats.merges_unattributed, 0, "unattributed");
	ASSERT_EQ(r->stats.incomplete, 0, "the merged bio left no open trail");
	ASSERT_EQ(tr.t[0].merges, 1, "trail merges");
	ASSERT_EQ(tr.t[0].bytes, 2 * K4, "bytes");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 4000, "Q2C from b1's Q");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2I), 500, "Q2I");
	it_analyzer_free(a);
}

/* b2 ends where b1 starts: front merge; the request then names b2 first. */
TEST(stitch_front_merge)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 108, K4, IT_OP_READ),
		Q(1200, 0xb2, DEV_A, 100, K4, IT_OP_READ),
		F(1250, 0xb2, DEV_A, 100, K4, IT_OP_READ),
		I(1500, 0x71, 0xb2, DEV_A, 100, 2 * K4, IT_OP_READ),
		D(2000, 0x71, 0xb2, DEV_A, 100, 2 * K4, IT_OP_READ),
		C(6000, 0x71, DEV_A, 2 * K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "one I/O");
	ASSERT_EQ(r->stats.merges, 1, "merges");
	ASSERT_EQ(r->stats.no_q, 0, "linked through the re-keyed bio");
	ASSERT_EQ(r->stats.incomplete, 0, "incomplete");
	ASSERT_EQ(tr.t[0].sector, 100, "sector");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 5000, "Q2C from the earliest Q");
	it_analyzer_free(a);
}

/* A bio merged into a request already inserted in the scheduler. */
TEST(stitch_merge_into_inserted_request)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 100, K4, IT_OP_WRITE),
		I(1100, 0x71, 0xb1, DEV_A, 100, K4, IT_OP_WRITE),
		Q(1200, 0xb2, DEV_A, 108, K4, IT_OP_WRITE),
		M(1210, 0xb2, DEV_A, 108, K4, IT_OP_WRITE),
		Q(1300, 0xb3, DEV_A, 500, K4, IT_OP_WRITE),
		M(1310, 0xb3, DEV_A, 500, K4, IT_OP_WRITE), /* nothing ends at 500 */
		D(2000, 0x71, 0xb1, DEV_A, 100, 2 * K4, IT_OP_WRITE),
		C(3000, 0x71, DEV_A, 2 * K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios");
	ASSERT_EQ(r->stats.merges, 1, "attributed");
	ASSERT_EQ(r->stats.merges_unattributed, 1, "unattributed");
	ASSERT_EQ(tr.t[0].merges, 1, "trail merges");
	ASSERT_EQ(tr.t[0].bytes, 2 * K4, "bytes at issue");
	ASSERT_EQ(r->stats.incomplete, 0, "no open trail left");
	it_analyzer_free(a);
}

/* Requeue: Q2I to the first insert, I2D from it to the last issue. */
TEST(stitch_requeue_reissue)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		I(1200, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(1500, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		R(2000, 0x71, DEV_A),
		I(2100, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(3000, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		C(7000, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios");
	ASSERT_EQ(r->stats.requeues, 1, "requeues");
	ASSERT_EQ(tr.t[0].requeues, 1, "trail requeues");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2I), 200, "Q2I");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_I2D), 1800, "I2D to the last issue");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_D2C), 4000, "D2C from the last issue");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 6000, "Q2C");
	ASSERT_EQ(tr.t[0].qd_issue, 1, "depth at reissue counts itself once");
	it_analyzer_free(a);
}

/* A 256K bio split at 128K: two requests, both with the parent's Q. */
TEST(stitch_split)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, 64 * K4, IT_OP_READ),
		X(1100, 0xb2, 0xb1, DEV_A, 256, 32 * K4),
		D(1200, 0x71, 0xb2, DEV_A, 0, 32 * K4, IT_OP_READ),
		D(1300, 0x72, 0xb1, DEV_A, 256, 32 * K4, IT_OP_READ),
		C(5000, 0x71, DEV_A, 32 * K4),
		C(6000, 0x72, DEV_A, 32 * K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 2, "two I/Os");
	ASSERT_EQ(r->stats.splits, 1, "splits");
	ASSERT_EQ(r->stats.no_q, 0, "both parts have Q");
	if (ASSERT_EQ(tr.n, 2, "trails")) {
		ASSERT_EQ(tr.t[0].sector, 0, "front part sector");
		ASSERT_EQ(tr.t[0].bytes, 32 * K4, "front part bytes");
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 4000, "front Q2C");
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2D), 200, "front Q2D");
		ASSERT_EQ(tr.t[1].sector, 256, "remainder sector");
		ASSERT_EQ(it_stage_time(&tr.t[1], IT_STAGE_Q2C), 5000, "remainder Q2C");
		ASSERT_EQ(tr.t[0].split + tr.t[1].split, 2, "both marked split");
		ASSERT_EQ(tr.t[1].seq, IT_SEQ_SEQUENTIAL, "remainder follows the front part");
	}
	it_analyzer_free(a);
}

TEST(stitch_out_of_order_completion)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		Q(1100, 0xb2, DEV_A, 800, K4, IT_OP_READ),
		D(1200, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(1300, 0x72, 0xb2, DEV_A, 800, K4, IT_OP_READ),
		C(2000, 0x72, DEV_A, K4),
		C(5000, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_group *g = only_group(it_analyzer_results(a));

	if (ASSERT_EQ(tr.n, 2, "trails")) {
		ASSERT_EQ(tr.t[0].sector, 800, "second request completes first");
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 900, "its Q2C");
		ASSERT_EQ(it_stage_time(&tr.t[1], IT_STAGE_Q2C), 4000, "first request's Q2C");
		ASSERT_EQ(it_stage_time(&tr.t[1], IT_STAGE_D2C), 3800, "first request's D2C");
	}
	if (ASSERT_NOT_NULL(g, "group")) {
		ASSERT_EQ(g->stage[IT_STAGE_Q2C].min, 900, "min");
		ASSERT_EQ(g->stage[IT_STAGE_Q2C].max, 4000, "max");
		ASSERT_EQ(it_hist_avg(&g->stage[IT_STAGE_Q2C]), 2450, "avg");
	}
	it_analyzer_free(a);
}

TEST(stitch_partial_completions)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, 3 * K4, IT_OP_WRITE),
		D(2000, 0x71, 0xb1, DEV_A, 0, 3 * K4, IT_OP_WRITE),
		C(3000, 0x71, DEV_A, K4),
		C(4000, 0x71, DEV_A, K4),
		C(6000, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "one I/O");
	ASSERT_EQ(r->stats.partials, 2, "partial completions");
	ASSERT_EQ(tr.t[0].partial, 2, "on the trail");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 5000, "ends at the final completion");
	ASSERT_EQ(r->stats.unknown_completions, 0, "no unknown completion");
	/* the BPF side marks the first two partial: record's count agrees */
	evs[2].flags |= IT_F_PARTIAL;
	evs[3].flags |= IT_F_PARTIAL;
	uint64_t counted = 0;
	for (size_t i = 0; i < N(evs); i++)
		counted += it_event_ends_io(&evs[i]);
	ASSERT_EQ(counted, r->stats.ios, "record's count == report's");
	it_analyzer_free(a);
}

TEST(stitch_unknown_completion)
{
	struct it_event evs[] = {
		C(500, 0xdead, DEV_A, K4),  /* issued before the trace started */
		R(600, 0xbeef, DEV_A),
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(2000, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		C(3000, 0x71, DEV_A, K4),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "only the I/O seen issued counts");
	ASSERT_EQ(r->stats.unknown_completions, 1, "unknown completions");
	ASSERT_EQ(r->stats.requeues_unknown, 1, "unknown requeue");
	ASSERT_EQ(r->devs[0].qd_issue[1], 1, "the unknown request is not in flight");
	it_analyzer_free(a);
}

TEST(stitch_bio_based_trail)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_B, 64, 2 * K4, IT_OP_READ),
		BC(4000, 0xb1, DEV_B),
		BC(4500, 0xb9, DEV_B), /* never queued in the trace */
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios");
	ASSERT_EQ(r->stats.bio_ios, 1, "bio-based");
	ASSERT_EQ(r->stats.unknown_completions, 1, "unknown bio completion");
	ASSERT_EQ(tr.t[0].kind, IT_TRAIL_BIO, "kind");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 3000, "Q2C");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_D2C), -1, "no D2C");
	ASSERT_EQ(tr.t[0].qd_issue, 0, "no depth sampled");
	it_analyzer_free(a);
}

TEST(stitch_incomplete_at_end)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		Q(1100, 0xb2, DEV_A, 100, K4, IT_OP_READ),
		I(1200, 0x72, 0xb2, DEV_A, 100, K4, IT_OP_READ),
		Q(1300, 0xb3, DEV_A, 200, K4, IT_OP_READ),
		D(1400, 0x73, 0xb3, DEV_A, 200, K4, IT_OP_READ),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 0, "nothing completed");
	ASSERT_EQ(r->stats.incomplete, 3, "incomplete");
	ASSERT_EQ(r->stats.incomplete_queued, 1, "queued");
	ASSERT_EQ(r->stats.incomplete_inserted, 1, "inserted");
	ASSERT_EQ(r->stats.incomplete_issued, 1, "issued");
	ASSERT_EQ(r->ngroups, 0, "no group");
	it_analyzer_free(a);
}

/* comm: the submitter's at Q; without Q, the issuing task's. */
TEST(stitch_comm_of_submitter)
{
	struct it_event evs[] = {
		TASK(10, 200, 201, "fio"),
		TASK(11, 2, 77, "kworker/0:1H"),
		ev_tid(Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ), 200, 201),
		ev_tid(D(2000, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ), 2, 77),
		/* its bio queued before the trace (a flush command without Q
		 * is not a trail: it is counted apart, see test_flush.c) */
		ev_tid(D(2100, 0x72, 0xb9, DEV_A, 64, K4, IT_OP_READ), 2, 77),
		C(3000, 0x71, DEV_A, K4),
		C(3100, 0x72, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	if (ASSERT_EQ(tr.n, 2, "trails")) {
		ASSERT_STREQ(it_analyzer_comm(a, tr.t[0].comm), "fio", "comm at Q");
		ASSERT_EQ(tr.t[0].pid, 200, "pid at Q");
		ASSERT_STREQ(it_analyzer_comm(a, tr.t[1].comm), "kworker/0:1H", "comm at D");
		ASSERT_EQ(it_stage_time(&tr.t[1], IT_STAGE_Q2C), 1000, "latency from D without Q");
	}
	ASSERT_EQ(r->stats.no_q, 1, "no_q");
	ASSERT_EQ(r->stats.tasks, 2, "task events");
	it_analyzer_free(a);
}

/* Request 0x72 is merged behind 0x71 in the scheduler and goes away. */
TEST(stitch_request_merge)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_WRITE),
		I(1100, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_WRITE),
		Q(1200, 0xb2, DEV_A, 8, K4, IT_OP_WRITE),
		I(1300, 0x72, 0xb2, DEV_A, 8, K4, IT_OP_WRITE),
		RQM(1400, 0x72, DEV_A),
		D(2000, 0x71, 0xb1, DEV_A, 0, 2 * K4, IT_OP_WRITE),
		C(3000, 0x71, DEV_A, 2 * K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios");
	ASSERT_EQ(r->stats.rq_merges, 1, "rq merges");
	ASSERT_EQ(tr.t[0].merges, 1, "noted on the survivor");
	ASSERT_EQ(tr.t[0].qd_issue, 1, "the merged request left the queue");
	ASSERT_EQ(tr.t[0].qd_insert, 1, "depth at its own insert");
	ASSERT_EQ(r->stats.incomplete, 0, "incomplete");
	it_analyzer_free(a);
}

/* The completion of 0x71's first I/O was lost (the kernel ran no probe for
 * it); the pointer comes back for a new I/O. The first I/O was issued, and
 * the kernel reuses a request only once it has ended: it is counted, with
 * its bytes, but without a completion time (no Q2C sample, no callback),
 * and the new one completes. */
TEST(stitch_lost_completion_pointer_reuse)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(1100, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		Q(5000, 0xb2, DEV_A, 64, K4, IT_OP_READ),
		D(5100, 0x71, 0xb2, DEV_A, 64, K4, IT_OP_READ),
		C(5600, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 2, "ios: the lost one counted");
	ASSERT_EQ(r->stats.bytes, 2 * K4, "bytes of both");
	ASSERT_EQ(r->stats.lost, 1, "lost");
	ASSERT_EQ(r->stats.lost_counted, 1, "lost, counted");
	ASSERT_EQ(r->stats.incomplete, 0, "incomplete");
	if (ASSERT_EQ(r->ngroups, 1, "groups")) {
		ASSERT_EQ(r->groups[0].count, 2, "group count");
		ASSERT_EQ(r->groups[0].stage[IT_STAGE_Q2C].count, 1, "one Q2C sample: the seen one");
		ASSERT_EQ(r->groups[0].stage[IT_STAGE_Q2C].max, 600, "its Q2C");
	}
	if (ASSERT_EQ(tr.n, 1, "callbacks: only the trail with a completion")) {
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 600, "the new I/O's Q2C");
		ASSERT_EQ(tr.t[0].qd_issue, 1, "the lost one is no longer in flight");
	}
	it_analyzer_free(a);
}

/* A request inserted but never issued whose pointer comes back: it may
 * have been merged away (its merge event lost too), so it is not counted
 * as an I/O, only as lost. */
TEST(stitch_lost_before_issue_not_counted)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		I(1100, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		Q(5000, 0xb2, DEV_A, 64, K4, IT_OP_READ),
		I(5100, 0x71, 0xb2, DEV_A, 64, K4, IT_OP_READ),
		D(5200, 0x71, 0xb2, DEV_A, 64, K4, IT_OP_READ),
		C(5600, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios: only the completed one");
	ASSERT_EQ(r->stats.lost, 1, "lost");
	ASSERT_EQ(r->stats.lost_counted, 0, "lost, counted");
	ASSERT_EQ(tr.n, 1, "callbacks");
	it_analyzer_free(a);
}

/* A lost completion in the timeline: in the interval where the request
 * was seen again (the latest it can have completed), not the first. */
TEST(stitch_lost_completion_timeline)
{
	struct it_event evs[] = {
		Q(2000000000ull, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(2000000100ull, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		Q(3500000000ull, 0xb2, DEV_A, 64, K4, IT_OP_READ),
		D(3500000100ull, 0x71, 0xb2, DEV_A, 64, K4, IT_OP_READ),
		C(3500000600ull, 0x71, DEV_A, K4),
	};
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	o.start_ns = 1000000000ull;
	o.interval_ns = 1000000000ull;
	struct it_analyzer *a = it_analyzer_new(&o);
	it_analyzer_feed(a, evs, N(evs));
	it_analyzer_finish(a, 0);
	const struct it_results *r = it_analyzer_results(a);

	if (ASSERT_EQ(r->ndevs, 1, "devices") && ASSERT_GE(r->devs[0].ntimeline, 3, "intervals")) {
		ASSERT_EQ(r->devs[0].timeline[0].ios[0], 0, "nothing in the first second");
		ASSERT_EQ(r->devs[0].timeline[2].ios[0], 2, "both reads where the pointer came back");
	}
	it_analyzer_free(a);
}

/* A request completed without being issued (flush machinery), whose C
 * names its queued bio through aux. */
TEST(stitch_completion_names_queued_bio)
{
	struct it_event c = C(3000, 0x75, DEV_A, 0);
	c.aux = 0xb5;
	struct it_event evs[] = {
		Q(1000, 0xb5, DEV_A, 0, 0, IT_OP_WRITE),
		c,
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios");
	ASSERT_EQ(r->stats.unknown_completions, 0, "not unknown");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 2000, "Q2C");
	ASSERT_EQ(r->stats.incomplete, 0, "bio trail closed");
	it_analyzer_free(a);
}

TEST(stitch_completion_error)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(1100, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		ev_err(C(1600, 0x71, DEV_A, K4), -5),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.errors, 1, "errors");
	ASSERT_EQ(tr.t[0].error, -5, "errno on the trail");
	ASSERT_EQ(r->groups[0].errors, 1, "group errors");
	it_analyzer_free(a);
}

/* md remaps the bio it was given to a member disk without a second Q:
 * the I/O belongs to the disk whose request carries it. */
TEST(stitch_bio_remapped_to_another_disk)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_B, 2048, K4, IT_OP_READ),
		D(1500, 0x71, 0xb1, DEV_A, 4096, K4, IT_OP_READ),
		C(4000, 0x71, DEV_A, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "ios");
	if (ASSERT_EQ(tr.n, 1, "trails")) {
		ASSERT_EQ(tr.t[0].dev, DEV_A, "on the member disk");
		ASSERT_EQ(tr.t[0].sector, 4096, "at the request's sector");
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 3000, "Q2C from the md queue");
		ASSERT_EQ(tr.t[0].qd_issue, 1, "in flight on the member disk");
	}
	ASSERT_EQ(r->groups[0].key.dev, DEV_A, "grouped under the member disk");
	it_analyzer_free(a);
}

/* ---- random streams: no crash, and the invariants hold ---- */
struct fuzz_check {
	uint64_t trails, bad_sum, bad_depth;
};

static void fuzz_trail(const struct it_trail *t, void *ctx)
{
	struct fuzz_check *c = ctx;
	int64_t q2c = it_stage_time(t, IT_STAGE_Q2C), sum = 0;

	c->trails++;
	for (unsigned s = 0; s < IT_STAGE_Q2C; s++)
		if (it_stage_time(t, s) > 0)
			sum += it_stage_time(t, s);
	/* with Q, D and C seen, the stages tile Q2C exactly */
	if (t->ts[IT_PT_Q] && t->ts[IT_PT_D] && sum != q2c)
		c->bad_sum++;
	if (t->qd_issue > 8 || t->qd_insert > 8) /* only 8 request pointers exist */
		c->bad_depth++;
}

TEST(stitch_random_streams_hold_invariants)
{
	static const uint8_t types[] = {
		IT_EV_TASK, IT_EV_BIO_QUEUE, IT_EV_BIO_QUEUE, IT_EV_BIO_QUEUE, IT_EV_BIO_BACKMERGE,
		IT_EV_BIO_FRONTMERGE, IT_EV_BIO_SPLIT, IT_EV_BIO_COMPLETE, IT_EV_RQ_INSERT,
		IT_EV_RQ_ISSUE, IT_EV_RQ_ISSUE, IT_EV_RQ_REQUEUE, IT_EV_RQ_COMPLETE,
		IT_EV_RQ_COMPLETE, IT_EV_RQ_MERGE, 0, 200,
	};
	static struct it_event evs[50000];
	uint64_t s = 99, unknown_types = 0;

	for (size_t i = 0; i < N(evs); i++) {
		s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
		uint64_t r = s * 2685821657736338717ull;
		struct it_event *e = &evs[i];
		*e = ev_io(types[r % N(types)], 1000 + 10 * i, 0, 0, (r >> 8) % 3 ? DEV_A : DEV_B,
			   ((r >> 10) % 64) * 8, (uint32_t)((r >> 20) % 4) * K4, (uint8_t)((r >> 24) % 16));
		bool rq = e->type >= IT_EV_RQ_INSERT && e->type <= IT_EV_RQ_MERGE;
		e->id = rq ? 0x100 + (r >> 28) % 8 : 0xb00 + (r >> 28) % 32;
		e->aux = 0xb00 + (r >> 34) % 32;
		e->tid = (uint32_t)(r >> 40) % 5;
		if (e->type == IT_EV_TASK)
			memcpy(e->comm, "fuzzfuzzfuzzfuzz", 16); /* no NUL: must be cut at 15 */
		unknown_types += e->type == 0 || e->type == 200;
	}
	struct fuzz_check c = { 0 };
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	o.on_trail = fuzz_trail;
	o.ctx = &c;
	struct it_analyzer *a = it_analyzer_new(&o);
	for (size_t i = 0; i < N(evs); i += 777)
		it_analyzer_feed(a, evs + i, N(evs) - i < 777 ? N(evs) - i : 777);
	it_analyzer_finish(a, 0);
	const struct it_results *r = it_analyzer_results(a);
	uint64_t groups = 0, devs = 0;

	for (size_t g = 0; g < r->ngroups; g++)
		groups += r->groups[g].count;
	for (size_t d = 0; d < r->ndevs; d++)
		devs += r->devs[d].ios[0] + r->devs[d].ios[1] + r->devs[d].ios[2];
	ASSERT_GE(r->stats.ios, 1000, "some I/Os complete");
	ASSERT_EQ(c.trails + r->stats.lost_counted, r->stats.ios,
		  "one callback per I/O with a completion time");
	ASSERT_EQ(groups, r->stats.ios, "groups add up");
	ASSERT_EQ(devs, r->stats.ios, "devices add up");
	ASSERT_EQ(c.bad_sum, 0, "stages tile Q2C");
	ASSERT_EQ(c.bad_depth, 0, "depth bounded by the request pointers");
	ASSERT_EQ(r->stats.ignored, unknown_types, "unknown event types ignored");
	ASSERT_STREQ(it_analyzer_comm(a, 1), "fuzzfuzzfuzzfuz", "comm cut at 15 characters");
	it_analyzer_free(a);
}
