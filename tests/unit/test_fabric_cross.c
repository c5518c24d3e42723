// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fabric join across two machines (it_fabric_cross): the target's
 * commands on its own clock, given moved by a first guess a few
 * microseconds off; the join matches within the guess's slack, estimates
 * the clock from the matched I/Os and takes the stages on the initiator's
 * clock. Then target commands of another machine with the same cntlid are
 * not taken, and with no clock estimate possible only the stages within
 * one machine are.
 */
#include "harness.h"
#include "synth.h"

#include "analyze/nvme.h"
#include "layers/fabric/fabric.h"

#define INST 0
#define CNTLID 3
#define AHEAD 3700000000ll /* the target's clock reads 3.7 s ahead */
#define GUESS_OFF 5000     /* the first guess is 5 us off */

static struct it_event nvmet(uint8_t type, uint64_t ts, uint64_t req, uint16_t cid)
{
	struct it_event e = ev_base(type, ts, req, 0);
	e.layer = IT_LAYER_NVMET;
	e.nvmet.cntlid = CNTLID;
	e.nvmet.qid = 1;
	e.nvmet.cid = cid;
	e.nvmet.opcode = IT_NVME_READ;
	return e;
}

static struct it_event ctrl(void)
{
	struct it_event e = ev_base(IT_EV_NVME_CTRL, 1, 0, 0);
	e.layer = IT_LAYER_NVME;
	e.nvme.ctrl = INST;
	e.nvme.cntlid = CNTLID;
	e.nvme.transport = IT_NVME_TR_TCP;
	return e;
}

/* k reads, one a millisecond: the target parses each 20 us after the
 * host set it up and takes target_us; the host completes it host_us after
 * setting it up. The target's events from machine, its times moved by guess. */
static void reads(struct it_fabric *f, int k, uint16_t machine, int64_t guess, uint64_t target_us,
		  uint64_t host_us)
{
	for (int i = 0; i < k; i++) {
		uint64_t s = 1000000 + (uint64_t)i * 1000000, ti = s + 20000, tc = ti + target_us * 1000;
		uint64_t shift = (uint64_t)(AHEAD + guess);
		struct it_event a = nvmet(IT_EV_NVMET_INIT, ti + shift, 0x100 + i, (uint16_t)i);
		struct it_event b = nvmet(IT_EV_NVMET_COMPLETE, tc + shift, 0x100 + i, (uint16_t)i);
		struct it_fabric_host h = { .s = s, .n = s + host_us * 1000,
					    .qid = 1, .cid = (uint16_t)i, .opcode = IT_NVME_READ,
					    .ctrl = INST, .bytes = K4 };

		it_fabric_feeding(f, machine);
		it_fabric_event(f, &a);
		it_fabric_event(f, &b);
		it_fabric_feeding(f, 0);
		it_fabric_host(f, &h);
		it_fabric_settle(f);
	}
}

static const struct it_fabric_op *read_op(const struct it_fabric_results *r)
{
	for (size_t i = 0; i < r->nops; i++)
		if (r->ops[i].opcode == IT_NVME_READ && !r->ops[i].admin)
			return &r->ops[i];
	return NULL;
}

/* The matched commands an exporter is told of: two machines, only once
 * the clock is placed (it_fabric_finish), the target's points on the
 * initiator's clock. */
struct told {
	unsigned calls;
	uint16_t machine;
	int64_t ti_after_s_max, ti_after_s_min; /* TI - S over the calls */
};

static void told_matched(const struct it_fabric_matched *m, void *ctx)
{
	struct told *t = ctx;
	int64_t d = (int64_t)m->p[IT_FP_TI] - (int64_t)m->h->s;

	if (!t->calls++ || d > t->ti_after_s_max)
		t->ti_after_s_max = d;
	if (t->calls == 1 || d < t->ti_after_s_min)
		t->ti_after_s_min = d;
	t->machine = m->target_machine;
}

TEST(fabric_cross_clock_from_matched)
{
	struct it_fabric *f = it_fabric_new();
	struct it_event c = ctrl();
	struct told told = { 0 };

	/* the guess: initiator = target - 3.7 s, 5 us off, good to 10 us */
	it_fabric_cross(f, 1, &(struct it_clock_guess){ -AHEAD + GUESS_OFF, 0, 0, 10000 }, true,
			-AHEAD + 2000000000, 50000);
	it_fabric_event(f, &c);
	it_fabric_on_matched(f, told_matched, &told);
	reads(f, 50, 1, -AHEAD + GUESS_OFF, 50, 100);
	ASSERT_EQ(told.calls, 0, "no matched command told before the clock is placed");
	ASSERT_EQ(it_fabric_finish(f), 0, "finish");
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(told.calls, 50, "each matched command told at finish");
	ASSERT_EQ(told.machine, 1, "its target's machine");
	/* TI is 20 us after S: on the initiator's clock within the estimate's uncertainty */
	ASSERT_NEAR((double)told.ti_after_s_min, 20000, (double)r->clock.uncertainty_ns, "TI placed (min)");
	ASSERT_NEAR((double)told.ti_after_s_max, 20000, (double)r->clock.uncertainty_ns, "TI placed (max)");
	ASSERT_TRUE(r->cross, "two machines");
	ASSERT_EQ(r->matched, 50, "every read matched");
	ASSERT_EQ(r->clock.method, IT_CLOCK_IO, "clock from the matched I/Os");
	ASSERT_NEAR((double)r->clock.offset_ns, -AHEAD, (double)r->clock.uncertainty_ns,
		    "offset within its uncertainty");
	ASSERT_LE(r->clock.uncertainty_ns, 25000, "within half the round trip (50 us)");
	ASSERT_EQ(r->causal_checked, 50, "all placed");
	ASSERT_EQ(r->noncausal_out + r->noncausal_back, 0, "all causal");
	const struct it_fabric_op *o = read_op(r);
	if (ASSERT_NOT_NULL(o, "reads")) {
		ASSERT_EQ(o->stage[IT_FS_TARGET].sum, 50 * 50000, "target: its own clock");
		ASSERT_EQ(o->stage[IT_FS_COMMAND].sum, 50 * 100000, "command: the initiator's");
		/* the network's time is the wait minus the target's, wherever
		 * the offset puts the target between */
		ASSERT_EQ(o->stage[IT_FS_HOST_OUT].sum + o->stage[IT_FS_HOST_IN].sum, 50 * 50000,
			  "host.out + host.in");
		ASSERT_EQ(o->stage[IT_FS_HOST_OUT].count, 50, "host.out taken");
	}
	it_fabric_free(f);
}

TEST(fabric_cross_keys_by_machine)
{
	struct it_fabric *f = it_fabric_new();
	struct it_event c = ctrl();

	/* the host's controller is served by machine 1; machine 2 has the same cntlid */
	it_fabric_cross(f, 1, &(struct it_clock_guess){ -AHEAD, 0, 0, 10000 }, false, 0, 0);
	it_fabric_event(f, &c);
	reads(f, 5, 2, -AHEAD, 50, 100);
	ASSERT_EQ(it_fabric_finish(f), 0, "finish");
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 0, "another machine's commands are not this controller's");
	ASSERT_EQ(r->reason[IT_FR_NO_TARGET_SIDE], 5, "host commands without a target side");
	ASSERT_EQ(r->reason[IT_FR_NO_HOST_SIDE], 5, "target commands without a host side");
	it_fabric_free(f);
}

TEST(fabric_cross_no_estimate_one_clock)
{
	struct it_fabric *f = it_fabric_new();
	struct it_event c = ctrl();

	/* the target "worked" 170 us while the initiator waited 100 us: no
	 * clock can place that (a wrong guess with a wide slack matched it),
	 * and there is no exchange: no estimate */
	it_fabric_cross(f, 1, &(struct it_clock_guess){ -AHEAD, 0, 0, 100000 }, false, 0, 0);
	it_fabric_event(f, &c);
	reads(f, 3, 1, -AHEAD, 170, 100);
	ASSERT_EQ(it_fabric_finish(f), 0, "finish");
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 3, "matched within the slack");
	ASSERT_EQ(r->clock.method, IT_CLOCK_NONE, "no estimate");
	ASSERT_EQ(r->clock.rejected, 3, "every sample impossible");
	ASSERT_EQ(r->causal_checked, 0, "no merged timeline to be causal on");
	const struct it_fabric_op *o = read_op(r);
	if (ASSERT_NOT_NULL(o, "reads")) {
		ASSERT_EQ(o->stage[IT_FS_TARGET].count, 3, "target: within one machine");
		ASSERT_EQ(o->stage[IT_FS_COMMAND].count, 3, "command: within one machine");
		ASSERT_EQ(o->stage[IT_FS_HOST_OUT].count, 0, "host.out: across the clocks, not taken");
		ASSERT_EQ(o->stage[IT_FS_HOST_IN].count, 0, "host.in: not taken");
	}
	it_fabric_free(f);
}
