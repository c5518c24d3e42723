/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The flush machinery's sequences (block/blk-flush.c) on synthetic
 * streams, as a device with a write cache and no FUA produces them:
 *  - fdatasync's data-less REQ_PREFLUSH write: Q, then the machinery's
 *    flush command (flush_rq: I, D, C with IT_F_FLUSH_SEQ, no bio), then
 *    the request's only completion (aux = its bio);
 *  - a journal commit block (data, PREFLUSH|FUA): PREFLUSH command, the
 *    data request (I, D, C of its data with IT_F_FLUSH_SEQ), POSTFLUSH
 *    command, and the request's second completion (0 bytes);
 *  - the same from a trace recorded before IT_F_FLUSH_SEQ existed.
 */
#include "harness.h"
#include "synth.h"

#define FSEQ(e) ev_flags((e), IT_F_FLUSH_SEQ)
#define FLUSH_RQ 0xf100 /* the flush queue's one flush request */

static struct it_event ev_flags(struct it_event e, uint32_t flags)
{
	e.flags |= flags;
	return e;
}

static struct it_event ev_aux(struct it_event e, uint64_t aux)
{
	e.aux = aux;
	return e;
}

/* The machinery's flush command at t, t + 1 us, t + 3 us. */
#define FLUSH_CMD(t) \
	FSEQ(I(t, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH)), \
	FSEQ(D((t) + 1000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH)), \
	FSEQ(ev_io(IT_EV_RQ_COMPLETE, (t) + 3000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH))

/* What `iotrail record` would say in its summary line. */
static uint64_t record_count(const struct it_event *evs, size_t n)
{
	uint64_t ios = 0;

	for (size_t i = 0; i < n; i++)
		ios += it_event_ends_io(&evs[i]);
	return ios;
}

static const struct it_group *group_of(const struct it_results *r, uint8_t op)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i].key.op == op)
			return &r->groups[i];
	return NULL;
}

TEST(flush_dataless_preflush_is_one_flush)
{
	struct it_event evs[] = {
		ev_flags(Q(1000, 0xb1, DEV_A, 0, 0, IT_OP_WRITE), IT_F_PREFLUSH | IT_F_SYNC),
		FLUSH_CMD(5000),
		/* the request, never inserted or issued, completes after its flush */
		ev_aux(ev_io(IT_EV_RQ_COMPLETE, 8500, 0x71, 0, DEV_A, 0, 0, IT_OP_WRITE), 0xb1),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "one I/O: the flush request, not a write and a flush");
	ASSERT_EQ(record_count(evs, N(evs)), r->stats.ios, "record's count == report's");
	ASSERT_EQ(r->stats.flush_cmds, 1, "one device flush command");
	ASSERT_EQ(r->stats.unknown_completions, 0, "no unknown completion");
	ASSERT_TRUE(group_of(r, IT_OP_WRITE) == NULL, "no write");
	const struct it_group *g = group_of(r, IT_OP_FLUSH);
	if (ASSERT_NOT_NULL(g, "a flush group"))
		ASSERT_EQ(g->count, 1, "flush count");
	if (ASSERT_EQ(tr.n, 1, "one trail")) {
		ASSERT_EQ(tr.t[0].op, IT_OP_FLUSH, "op flush");
		ASSERT_TRUE(tr.t[0].flags & IT_F_PREFLUSH, "PREFLUSH stays visible");
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 7500, "Q2C: what fdatasync waited");
		ASSERT_EQ(tr.t[0].pid, 100, "the submitter");
	}
	if (ASSERT_EQ(r->ndevs, 1, "one device")) {
		ASSERT_EQ(r->devs[0].flush_cmds, 1, "device flush commands");
		ASSERT_EQ(r->devs[0].flush_cmd_ns, 2000, "their D2C");
		ASSERT_EQ(r->devs[0].ios[IT_OPC_WRITE], 0, "no write I/O on the device");
	}
	it_analyzer_free(a);
}

TEST(flush_sequence_write_completes_twice)
{
	struct it_event evs[] = {
		ev_flags(Q(1000, 0xb2, DEV_A, 800, K4, IT_OP_WRITE), IT_F_PREFLUSH | IT_F_FUA),
		FLUSH_CMD(2000),                                   /* PREFLUSH */
		FSEQ(I(6000, 0x72, 0xb2, DEV_A, 800, K4, IT_OP_WRITE)),
		FSEQ(D(7000, 0x72, 0xb2, DEV_A, 800, K4, IT_OP_WRITE)),
		FSEQ(C(9000, 0x72, DEV_A, K4)),                    /* its data */
		FLUSH_CMD(10000),                                  /* POSTFLUSH */
		ev_aux(C(14000, 0x72, DEV_A, 0), 0xb2),            /* the request again */
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "one write");
	ASSERT_EQ(record_count(evs, N(evs)), r->stats.ios, "record's count == report's");
	ASSERT_EQ(r->stats.unknown_completions, 0, "the second completion is not an old I/O's");
	ASSERT_EQ(r->stats.flush_cmds, 2, "PREFLUSH and POSTFLUSH commands");
	ASSERT_EQ(r->stats.partials, 0, "not a partial completion");
	if (ASSERT_EQ(tr.n, 1, "one trail")) {
		ASSERT_EQ(tr.t[0].op, IT_OP_WRITE, "a write");
		ASSERT_EQ(tr.t[0].bytes, K4, "its data");
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2C), 13000, "Q2C to the sequence's end");
		ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_D2C), 7000, "D2C includes the POSTFLUSH");
	}
	it_analyzer_free(a);
}

TEST(flush_sequence_old_trace)
{
	/* recorded before IT_F_FLUSH_SEQ: the trail ends at the data part's
	 * completion; the second one is known by its request */
	struct it_event evs[] = {
		ev_flags(Q(1000, 0xb3, DEV_A, 800, K4, IT_OP_WRITE), IT_F_PREFLUSH | IT_F_FUA),
		I(2000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
		D(3000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
		ev_io(IT_EV_RQ_COMPLETE, 5000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
		I(6000, 0x73, 0xb3, DEV_A, 800, K4, IT_OP_WRITE),
		D(7000, 0x73, 0xb3, DEV_A, 800, K4, IT_OP_WRITE),
		C(9000, 0x73, DEV_A, K4),
		ev_aux(C(14000, 0x73, DEV_A, 0), 0xb3),
		/* a real completion of a request issued before the trace */
		C(15000, 0x7777, DEV_A, K4),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 1, "one write");
	ASSERT_EQ(r->stats.flush_seq_ends, 1, "the sequence's end, known as such");
	ASSERT_EQ(r->stats.unknown_completions, 1, "only the genuine old I/O");
	ASSERT_EQ(r->stats.flush_cmds, 1, "the flush command");
	it_analyzer_free(a);
}

/* The machinery's flush command whose completion event the kernel ran no
 * probe for (README, Known problems): its request comes back for the next
 * flush, so the first one was issued and completed: two flush commands, as
 * diskstats counts them, the lost one without a D2C; neither is an I/O. */
TEST(flush_command_lost_completion_counted)
{
	struct it_event evs[] = {
		I(2000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
		D(3000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
		/* its completion lost; the next flush */
		I(9000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
		D(10000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
		ev_io(IT_EV_RQ_COMPLETE, 12000, FLUSH_RQ, 0, DEV_A, 0, 0, IT_OP_FLUSH),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.flush_cmds, 2, "both flush commands");
	ASSERT_EQ(r->stats.ios, 0, "no I/O");
	ASSERT_EQ(r->stats.lost, 1, "one lost completion");
	ASSERT_EQ(r->stats.lost_counted, 0, "not an I/O");
	if (ASSERT_EQ(r->ndevs, 1, "one device")) {
		ASSERT_EQ(r->devs[0].flush_cmds, 2, "device flush commands");
		ASSERT_EQ(r->devs[0].flush_cmd_ns, 2000, "D2C of the seen one only");
	}
	it_analyzer_free(a);
}

/* fdatasync's data-less PREFLUSH whose completion event was lost (the
 * kernel ran no probe for it): its bio is freed and the next fdatasync's
 * bio comes at the same address, queued on the same device. The first
 * flush request ended: counted, without a completion time. */
TEST(flush_dataless_lost_completion_counted_on_bio_reuse)
{
	struct it_event evs[] = {
		ev_flags(Q(1000, 0xb1, DEV_A, 0, 0, IT_OP_WRITE), IT_F_PREFLUSH | IT_F_SYNC),
		FLUSH_CMD(2000),
		/* its completion lost; the next fdatasync, same bio address */
		ev_flags(Q(9000, 0xb1, DEV_A, 0, 0, IT_OP_WRITE), IT_F_PREFLUSH | IT_F_SYNC),
		FLUSH_CMD(10000),
		ev_aux(ev_io(IT_EV_RQ_COMPLETE, 13500, 0x71, 0, DEV_A, 0, 0, IT_OP_WRITE), 0xb1),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(r->stats.ios, 2, "two flush requests");
	ASSERT_EQ(r->stats.lost, 1, "one lost completion");
	ASSERT_EQ(r->stats.lost_counted, 1, "counted");
	ASSERT_EQ(r->stats.bio_requeued, 0, "not taken for a resubmitted bio");
	ASSERT_EQ(r->stats.incomplete, 0, "nothing left in flight");
	ASSERT_EQ(tr.n, 1, "one trail with a completion time");
	const struct it_group *g = group_of(r, IT_OP_FLUSH);
	if (ASSERT_TRUE(g != NULL, "a flush group"))
		ASSERT_EQ(g->count, 2, "both flushes in it");
	it_analyzer_free(a);
}
