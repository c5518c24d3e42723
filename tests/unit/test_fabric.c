// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fabric join (src/layers/fabric/) on synthetic streams: host commands
 * matched to target commands by (cntlid, qid, cid) in order, across two
 * queues, through cid reuse with generation bits, and every kind of
 * unmatched command counted by its reason; then the whole path through the
 * block and fabric analysis layers and the bus, with the block stages.
 */
#include "harness.h"
#include "synth.h"

#include "analyze/layer.h"
#include "analyze/nvme.h"
#include "layers/fabric/fabric.h"
#include "layers/fabric/transport.h"

#define DEV_T IT_MKDEV(259, 3)  /* the tcp namespace's disk */
#define INST 2                  /* nvme2 */
#define CNTLID 7

static struct it_event ctrl_ev(uint16_t inst, uint16_t cntlid, uint8_t transport)
{
	struct it_event e = ev_base(IT_EV_NVME_CTRL, 1, 0, 0);
	e.layer = IT_LAYER_NVME;
	e.nvme.ctrl = inst;
	e.nvme.cntlid = cntlid;
	e.nvme.transport = transport;
	return e;
}

/* A target event as src/layers/nvmet/nvmet.bpf.c fills it. */
static struct it_event tgt(uint8_t type, uint64_t ts, uint64_t req, uint16_t cntlid, uint16_t qid,
			   uint16_t cid, uint8_t opcode)
{
	struct it_event e = ev_base(type, ts, req, 0);
	e.layer = IT_LAYER_NVMET;
	e.nvmet.cntlid = cntlid;
	e.nvmet.qid = qid;
	e.nvmet.cid = cid;
	e.nvmet.opcode = opcode;
	e.nvmet.bytes = K4;
	return e;
}
#define TI(ts, req, qid, cid, op) tgt(IT_EV_NVMET_INIT, ts, req, CNTLID, qid, cid, op)
#define TC(ts, req, qid, cid, op) tgt(IT_EV_NVMET_COMPLETE, ts, req, CNTLID, qid, cid, op)

static struct it_fabric_host host(uint64_t s, uint64_t n, uint16_t qid, uint16_t cid, uint8_t op)
{
	return (struct it_fabric_host){ .s = s, .n = n, .qid = qid, .cid = cid, .opcode = op,
					.ctrl = INST, .bytes = K4 };
}

static void events(struct it_fabric *f, const struct it_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		it_fabric_event(f, &e[i]);
}

static const struct it_fabric_op *op_stats(const struct it_fabric_results *r, bool admin,
					   uint8_t opcode)
{
	for (size_t i = 0; i < r->nops; i++)
		if (r->ops[i].opcode == opcode && r->ops[i].admin == admin)
			return &r->ops[i];
	return NULL;
}

TEST(fabric_two_queues)
{
	struct it_fabric *f = it_fabric_new();
	/* the same cid on queues 1 and 2 at once: two connections' commands */
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		TI(1100, 0xa1, 1, 0x1003, IT_NVME_READ),
		TI(1150, 0xa2, 2, 0x1003, IT_NVME_WRITE),
		TC(1400, 0xa1, 1, 0x1003, IT_NVME_READ),
		TC(1950, 0xa2, 2, 0x1003, IT_NVME_WRITE),
	};
	struct it_fabric_host h1 = host(1000, 1500, 1, 0x1003, IT_NVME_READ);
	struct it_fabric_host h2 = host(1010, 2000, 2, 0x1003, IT_NVME_WRITE);

	events(f, evs, N(evs));
	it_fabric_host(f, &h1);
	it_fabric_host(f, &h2);
	ASSERT_EQ(it_fabric_settle(f), 0, "settle");
	ASSERT_EQ(it_fabric_finish(f), 0, "finish");
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->controllers, 1, "controllers");
	ASSERT_EQ(r->host_commands, 2, "host commands");
	ASSERT_EQ(r->target_commands, 2, "target commands");
	ASSERT_EQ(r->matched, 2, "matched");
	ASSERT_EQ(r->unmatched_host + r->unmatched_target, 0, "unmatched");
	ASSERT_EQ(r->stage_sum_ok, 2, "stages add up");
	ASSERT_EQ(r->io_sum_ok, 0, "no trails");
	const struct it_fabric_op *rd = op_stats(r, false, IT_NVME_READ), *wr = op_stats(r, false, IT_NVME_WRITE);
	if (ASSERT_NOT_NULL(rd, "reads") && ASSERT_NOT_NULL(wr, "writes")) {
		ASSERT_EQ(rd->count, 1, "one read");
		ASSERT_EQ(rd->stage[IT_FS_HOST_OUT].sum, 100, "read host.out");
		ASSERT_EQ(rd->stage[IT_FS_TARGET].sum, 300, "read target");
		ASSERT_EQ(rd->stage[IT_FS_HOST_IN].sum, 100, "read host.in");
		ASSERT_EQ(rd->stage[IT_FS_COMMAND].sum, 500, "read command");
		ASSERT_EQ(rd->stage[IT_FS_HOST_BLOCK].count, 0, "no block stage without a trail");
		ASSERT_EQ(wr->stage[IT_FS_HOST_OUT].sum, 140, "write host.out");
		ASSERT_EQ(wr->stage[IT_FS_TARGET].sum, 800, "write target");
		ASSERT_EQ(wr->stage[IT_FS_HOST_IN].sum, 50, "write host.in");
	}
	it_fabric_free(f);
}

TEST(fabric_cid_reuse_with_generations)
{
	/* tag 5 on queue 1, used 18 times one after another: the generation
	 * (top 4 bits) wraps after 16, so cid 0x0005 and 0x1005 come twice;
	 * each target command k takes 1000 + k ns and must go to its own */
	struct it_fabric *f = it_fabric_new();
	struct it_event c = ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP);
	uint64_t want_target = 0;

	it_fabric_event(f, &c);
	for (unsigned k = 0; k < 18; k++) {
		uint64_t t0 = 10000 * (k + 1);
		uint16_t cid = (uint16_t)((k % 16) << 12 | 5);
		struct it_event ti = TI(t0 + 200, 0xa0 + k % 3, 1, cid, IT_NVME_READ);
		struct it_event tc = TC(t0 + 200 + 1000 + k, 0xa0 + k % 3, 1, cid, IT_NVME_READ);
		struct it_fabric_host h = host(t0, t0 + 2000 + k, 1, cid, IT_NVME_READ);

		it_fabric_event(f, &ti);
		it_fabric_event(f, &tc);
		it_fabric_host(f, &h);
		if (k % 4 == 3) /* several host commands settle at once, as in a chunk */
			it_fabric_settle(f);
		want_target += 1000 + k;
	}
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 18, "matched");
	ASSERT_EQ(r->unmatched_host + r->unmatched_target, 0, "unmatched");
	const struct it_fabric_op *rd = op_stats(r, false, IT_NVME_READ);
	if (ASSERT_NOT_NULL(rd, "reads")) {
		ASSERT_U64_EQ(rd->stage[IT_FS_TARGET].sum, want_target, "target sum: each its own");
		ASSERT_EQ(rd->stage[IT_FS_HOST_OUT].max, 200, "host.out");
		ASSERT_EQ(rd->stage[IT_FS_HOST_IN].max, 800, "host.in");
	}
	it_fabric_free(f);
}

TEST(fabric_unmatched_by_reason)
{
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		ctrl_ev(0, 1, IT_NVME_TR_PCIE),
		/* a target command whose host side was not traced (admin keep-alive on
		 * a controller the --dev filter left out): noticed when the cid's next
		 * host command is set up after it completed */
		TI(100, 0xb1, 1, 0x2009, IT_NVME_READ),
		TC(200, 0xb1, 1, 0x2009, IT_NVME_READ),
		/* one the host claims with another opcode */
		TI(5100, 0xb2, 1, 0x200a, IT_NVME_WRITE),
		TC(5200, 0xb2, 1, 0x200a, IT_NVME_WRITE),
		/* one left at the end, one never completed */
		TI(7000, 0xb3, 2, 0x0001, IT_NVME_READ),
		TC(7100, 0xb3, 2, 0x0001, IT_NVME_READ),
		TI(8000, 0xb4, 2, 0x0002, IT_NVME_READ),
		/* an admin command (keep-alive) whose host side fell outside */
		TI(8100, 0xb5, 0, 0x0010, 0x18),
		TC(8200, 0xb5, 0, 0x0010, 0x18),
	};
	struct it_fabric_host hs[] = {
		host(1000, 1500, 1, 0x2009, IT_NVME_READ),  /* no target side (its target was earlier) */
		host(5000, 5300, 1, 0x200a, IT_NVME_READ),  /* opcode mismatch */
		host(6000, 6500, 3, 0x0001, IT_NVME_READ),  /* no target side at all */
	};
	struct it_fabric_host pcie = host(1000, 2000, 1, 0x0001, IT_NVME_READ);
	struct it_fabric_host later = host(1000, 2000, 1, 0x0001, IT_NVME_READ);

	pcie.ctrl = 0;
	later.ctrl = 5; /* not in the table: connected after record started */
	events(f, evs, N(evs));
	for (size_t i = 0; i < N(hs); i++)
		it_fabric_host(f, &hs[i]);
	it_fabric_host(f, &pcie);
	it_fabric_host(f, &later);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 0, "matched");
	ASSERT_EQ(r->not_fabric, 1, "PCIe command left out");
	ASSERT_EQ(r->host_commands, 4, "host commands on fabric controllers");
	ASSERT_EQ(r->target_commands, 4, "target commands completed");
	ASSERT_EQ(r->reason[IT_FR_NO_TARGET_SIDE], 2, "no target side");
	ASSERT_EQ(r->reason[IT_FR_NO_HOST_SIDE], 3, "no host side (one stale, two at the end)");
	ASSERT_EQ(r->reason[IT_FR_OPCODE_MISMATCH], 2, "opcode mismatch, both sides");
	ASSERT_EQ(r->reason[IT_FR_NO_CONTROLLER], 1, "no controller");
	ASSERT_EQ(r->reason[IT_FR_TARGET_INCOMPLETE], 1, "target incomplete");
	ASSERT_EQ(r->unmatched_host, 4, "unmatched host");
	ASSERT_EQ(r->unmatched_target, 5, "unmatched target");
	ASSERT_EQ(r->unmatched_io, 8, "unmatched on I/O queues: all but the admin one");
	it_fabric_free(f);
}

TEST(fabric_target_only_is_let_go)
{
	/* target commands nobody on the host claims (their initiator is on
	 * another machine), 20 ms apart over 200 s, then one matched: the old
	 * ones are counted without a host side along the way, the recent one
	 * still waits for its host command */
	struct it_fabric *f = it_fabric_new();
	struct it_event c = ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP);
	const unsigned n = 10000;
	uint64_t t = 0;

	it_fabric_event(f, &c);
	for (unsigned k = 0; k < n; k++) {
		struct it_event ti = TI(t + 100, 0xd0 + k, 1 + k % 4, (uint16_t)k, IT_NVME_READ);
		struct it_event tc = TC(t + 600, 0xd0 + k, 1 + k % 4, (uint16_t)k, IT_NVME_READ);

		it_fabric_event(f, &ti);
		it_fabric_event(f, &tc);
		if (k % 64 == 0)
			ASSERT_EQ(it_fabric_settle(f), 0, "settle");
		t += 20000000;
	}
	struct it_event ti = TI(t + 100, 0xe0, 2, 0x7777, IT_NVME_READ);
	struct it_event tc = TC(t + 600, 0xe0, 2, 0x7777, IT_NVME_READ);
	struct it_fabric_host h = host(t, t + 1000, 2, 0x7777, IT_NVME_READ);
	it_fabric_event(f, &ti);
	it_fabric_event(f, &tc);
	it_fabric_host(f, &h);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->target_commands, n + 1, "target commands");
	ASSERT_EQ(r->matched, 1, "the recent one matched");
	ASSERT_EQ(r->reason[IT_FR_NO_HOST_SIDE], n, "the rest without a host side");
	ASSERT_EQ(r->unmatched_target, n, "unmatched target");
	/* 60 s of them (3000), twice that before a prune, and a chunk */
	ASSERT_LE(r->waiting_max, 2 * 3000 + 64 + 1, "kept at most twice the horizon's");
	ASSERT_GE(r->waiting_max, 4096, "kept until the first prune");
	it_fabric_free(f);
}

TEST(fabric_controller_table_is_no_nvme_io)
{
	/* a block trace recorded on a machine with NVMe controllers has their
	 * table: the block report must not grow an empty NVMe view from it */
	struct it_event evs[] = {
		ctrl_ev(0, 1, IT_NVME_TR_PCIE),
		Q(1000, 0xc1, DEV_A, 80, K4, IT_OP_READ),
		D(1300, 0x71, 0xc1, DEV_A, 80, K4, IT_OP_READ),
		C(2400, 0x71, DEV_A, K4),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);

	if (!ASSERT_NOT_NULL(a, "analyzer"))
		return;
	ASSERT_TRUE(it_analyzer_nvme(a) == NULL, "no NVMe view");
	ASSERT_EQ(it_analyzer_results(a)->stats.ios, 1, "the block I/O");
	it_analyzer_free(a);
}

/* The whole path: the block layer's analyzer publishes each command with
 * its trail on the bus, the fabric layer joins it to the target's. */
TEST(fabric_layer_with_block_trails)
{
	struct it_bus bus = { 0 };
	struct it_layer_opts opts = { .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	struct it_host_rec hrec;
	struct it_pass_info info = { .host = &hrec, .opts = &opts, .bus = &bus,
				     .layers = 1u << IT_LAYER_BLOCK | 1u << IT_LAYER_NVME | 1u << IT_LAYER_NVMET };
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		/* read: Q 1000, S 1200, D 1300, target 1500..1900, N 2300, C 2400 */
		Q(1000, 0xc1, DEV_T, 80, K4, IT_OP_READ),
		{ .nvme = { .ts_ns = 1200, .rq = 0x71, .dev = DEV_T, .bytes = K4, .cid = 0x3001, .qid = 1,
			    .type = IT_EV_NVME_SUBMIT, .opcode = IT_NVME_READ, .layer = IT_LAYER_NVME,
			    .ctrl = INST, .nsid = 1 } },
		D(1300, 0x71, 0xc1, DEV_T, 80, K4, IT_OP_READ),
		TI(1500, 0xa1, 1, 0x3001, IT_NVME_READ),
		TC(1900, 0xa1, 1, 0x3001, IT_NVME_READ),
		{ .nvme = { .ts_ns = 2300, .rq = 0x71, .dev = DEV_T, .bytes = K4, .cid = 0x3001, .qid = 1,
			    .type = IT_EV_NVME_COMPLETE, .opcode = IT_NVME_READ, .layer = IT_LAYER_NVME,
			    .ctrl = INST, .nsid = 1 } },
		C(2400, 0x71, DEV_T, K4),
		/* an admin command without a request trail: published at N */
		TI(3100, 0xa2, 0, 0x0010, 0x18),
		TC(3200, 0xa2, 0, 0x0010, 0x18),
		{ .nvme = { .ts_ns = 3000, .rq = 0x72, .cid = 0x0010, .qid = 0, .type = IT_EV_NVME_SUBMIT,
			    .opcode = 0x18, .layer = IT_LAYER_NVME, .ctrl = INST } },
		{ .nvme = { .ts_ns = 3300, .rq = 0x72, .cid = 0x0010, .qid = 0, .type = IT_EV_NVME_COMPLETE,
			    .opcode = 0x18, .layer = IT_LAYER_NVME, .ctrl = INST } },
	};
	struct it_span span = { 0 };

	memset(&hrec, 0, sizeof(hrec));
	void *blk = it_layer_block.new(&info);
	void *fab = it_layer_fabric.new(&info);
	if (!ASSERT_NOT_NULL(blk, "block layer") || !ASSERT_NOT_NULL(fab, "fabric layer"))
		return;
	/* two chunks, as the pass hands them: block first, then fabric */
	for (size_t at = 0, n; at < N(evs); at += n) {
		n = at ? N(evs) - at : 5;
		ASSERT_EQ(it_layer_block.feed(blk, IT_CHUNK_EVENTS, &evs[at], n * sizeof(evs[0]), (uint32_t)n), 0, "block feed");
		ASSERT_EQ(it_layer_fabric.feed(fab, IT_CHUNK_EVENTS, &evs[at], n * sizeof(evs[0]), (uint32_t)n), 0, "fabric feed");
	}
	ASSERT_EQ(it_layer_block.finish(blk, &span), 0, "block finish");
	ASSERT_EQ(it_layer_fabric.finish(fab, &span), 0, "fabric finish");
	const struct it_fabric_results *r = it_layer_fabric_results(fab);
	ASSERT_EQ(r->matched, 2, "matched");
	ASSERT_EQ(r->unmatched_host + r->unmatched_target, 0, "unmatched");
	ASSERT_EQ(r->stage_sum_ok, 2, "stages add up");
	ASSERT_EQ(r->io_sum_ok, 1, "with the block stages too");
	const struct it_fabric_op *rd = op_stats(r, false, IT_NVME_READ);
	if (ASSERT_NOT_NULL(rd, "reads")) {
		ASSERT_EQ(rd->with_trail, 1, "read with its trail");
		ASSERT_EQ(rd->stage[IT_FS_HOST_BLOCK].sum, 200, "host.block = S - Q");
		ASSERT_EQ(rd->stage[IT_FS_HOST_OUT].sum, 300, "host.out");
		ASSERT_EQ(rd->stage[IT_FS_TARGET].sum, 400, "target");
		ASSERT_EQ(rd->stage[IT_FS_HOST_IN].sum, 400, "host.in");
		ASSERT_EQ(rd->stage[IT_FS_HOST_DONE].sum, 100, "host.done = C - N");
		ASSERT_EQ(rd->stage[IT_FS_IO].sum, 1400, "io = C - Q");
	}
	const struct it_fabric_op *ka = op_stats(r, true, 0x18);
	if (ASSERT_NOT_NULL(ka, "admin keep-alive")) {
		ASSERT_EQ(ka->with_trail, 0, "no trail");
		ASSERT_EQ(ka->stage[IT_FS_TARGET].sum, 100, "its target stage");
	}
	it_layer_fabric.free(fab);
	it_layer_block.free(blk);
}

/* ---- the transport split (nvme-tcp, nvmet-tcp layers) ---- */

#define HQ 0xffff888000100000ull /* the host's struct nvme_tcp_queue * */
#define TQ 0xffff888000200000ull /* the target's struct nvmet_tcp_queue * */

static struct it_event tcp_ev(uint8_t layer, uint8_t type, uint64_t ts, uint16_t ctrl, uint16_t qid,
			      uint16_t cid, uint8_t pdu)
{
	struct it_event e = ev_base(type, ts, 0, 0);
	e.layer = layer;
	e.tcp.ctrl = ctrl;
	e.tcp.qid = qid;
	e.tcp.cid = cid;
	e.tcp.pdu = pdu;
	e.tcp.queue = layer == IT_LAYER_NVME_TCP ? HQ : TQ;
	return e;
}

/* one nvme_tcp_try_send call: first byte at ts, returned at end */
static struct it_event hsend(uint64_t ts, uint64_t end, uint16_t cid, uint8_t pdu, uint8_t after,
			     bool all)
{
	struct it_event e = tcp_ev(IT_LAYER_NVME_TCP, IT_EV_TCP_SEND, ts, INST, 1, cid, pdu);
	e.tcp.end_ns = end;
	e.tcp.flags = IT_TCP_STATE_AFTER(after) | (all ? IT_TCP_SENT_ALL : 0);
	return e;
}
#define HREADY(ts) tcp_ev(IT_LAYER_NVME_TCP, IT_EV_TCP_READY, ts, INST, 1, 0, 0)
#define TREADY(ts) tcp_ev(IT_LAYER_NVMET_TCP, IT_EV_TCPT_READY, ts, CNTLID, 1, 0, 0)
#define TSEND(ts, cid, pdu) tcp_ev(IT_LAYER_NVMET_TCP, IT_EV_TCPT_SEND, ts, CNTLID, 1, cid, pdu)
#define TX(ts, req, cid, op) tgt(IT_EV_NVMET_EXECUTE, ts, req, CNTLID, 1, cid, op)

static uint64_t stage_sum(const struct it_fabric_op *o, int s)
{
	return o->stage[s].sum;
}

TEST(fabric_transport_read)
{
	/* a 4K read, every point 100 ns or so apart, with an arrival on
	 * each side for an earlier command (it must not be taken) */
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		TREADY(900),                     /* an older command's data */
		HREADY(950),
		hsend(1100, 1300, 0x2001, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(1500),                    /* net.out 200 */
		TI(1800, 0xa1, 1, 0x2001, IT_NVME_READ),
		TX(1850, 0xa1, 0x2001, IT_NVME_READ),
		TC(3850, 0xa1, 1, 0x2001, IT_NVME_READ), /* target.dev 2000 */
		TSEND(4000, 0x2001, IT_TCPT_DATA_PDU),
		TSEND(4300, 0x2001, IT_TCPT_RESPONSE),
		HREADY(4700),                    /* net.back 400 */
	};
	struct it_fabric_host h = host(1000, 5000, 1, 0x2001, IT_NVME_READ);

	events(f, evs, N(evs));
	it_fabric_host(f, &h);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->transport, true, "transport seen");
	ASSERT_EQ(r->matched, 1, "matched");
	ASSERT_EQ(r->detailed, 1, "split");
	ASSERT_EQ(r->detail_sum_ok, 1, "parts add up");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_READ);
	if (!ASSERT_NOT_NULL(o, "reads"))
		goto out;
	ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_QUEUE), 100, "host.queue: S -> first byte");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_SEND), 200, "host.send");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_NET_OUT), 200, "net.out");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_RECV), 300, "target.recv");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_QUEUE), 50, "target.queue");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_DEV), 2000, "target.dev");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_SENDQ), 150, "target.sendq");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_SEND), 300, "target.send: data before the response");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_NET_BACK), 400, "net.back");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_COMPLETE), 300, "host.complete");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_OUT), 800, "host.out unchanged");
out:
	it_fabric_free(f);
}

/* Two machines whose clocks move apart at 1000 ppm (two guests under a
 * loaded host did: the offset went from -1.2 ms to +0.05 ms in 1.3 s),
 * more than the tracker's drift allowance: its estimate, taken from the
 * fastest I/O of a window, goes stale within the window, and its arrival
 * window starts after the capsule's real arrival on the target. Each
 * read's own round trip still bounds where that arrival can be, so every
 * read is split, with the arrival that carried it. */
#define DRIFT_AHEAD 3700000000ll /* the target's clock reads 3.7 s ahead */

/* A target time, as the pass gives it: moved by the first guess (exactly
 * -DRIFT_AHEAD at the start), so what is left is the drift, +1000 ppm. */
static uint64_t on_target(uint64_t host_ns)
{
	return host_ns + (host_ns - 1000000) / 1000;
}

TEST(fabric_cross_drifting_clocks_find_arrivals)
{
	struct it_fabric *f = it_fabric_new();
	struct it_event c = ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP);
	const int n = 200;

	it_fabric_cross(f, 1, &(struct it_clock_guess){ -DRIFT_AHEAD, 0, 0, 5000000 }, true,
			-DRIFT_AHEAD, 5000000);
	it_fabric_event(f, &c);
	for (int i = 0; i < n; i++) {
		/* one read every 10 ms, on the initiator's clock: sent 10-20 us
		 * after S, on the target's socket at 50 us, parsed at 60,
		 * executed at 65, done at 100, data and response out at 110 and
		 * 115, on the initiator's socket at 150, completed at 160 */
		uint64_t s = 1000000 + (uint64_t)i * 10000000;
		uint16_t cid = (uint16_t)(0x1000 + i);
		struct it_event t[] = {
			TREADY(on_target(s + 50000)),
			TI(on_target(s + 60000), 0x500 + i, 1, cid, IT_NVME_READ),
			TX(on_target(s + 65000), 0x500 + i, cid, IT_NVME_READ),
			TC(on_target(s + 100000), 0x500 + i, 1, cid, IT_NVME_READ),
			TSEND(on_target(s + 110000), cid, IT_TCPT_DATA_PDU),
			TSEND(on_target(s + 115000), cid, IT_TCPT_RESPONSE),
		};
		struct it_event hs = hsend(s + 10000, s + 20000, cid, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true);
		struct it_event hr = HREADY(s + 150000);
		struct it_fabric_host h = host(s, s + 160000, 1, cid, IT_NVME_READ);

		it_fabric_feeding(f, 1);
		events(f, t, N(t));
		it_fabric_settle_target(f);
		it_fabric_feeding(f, 0);
		it_fabric_event(f, &hs);
		it_fabric_event(f, &hr);
		it_fabric_host(f, &h);
		it_fabric_settle(f);
	}
	ASSERT_EQ(it_fabric_finish(f), 0, "finish");
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_TRUE(r->cross, "two machines");
	ASSERT_EQ(r->matched, (uint64_t)n, "every read matched");
	ASSERT_EQ(r->gap[IT_FG_TARGET_ARRIVAL], 0, "none without its arrival on the target");
	ASSERT_EQ(r->detailed, (uint64_t)n, "every read split");
	ASSERT_EQ(r->detail_sum_ok, (uint64_t)n, "its parts add up");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_READ);
	/* the target's own stretch, on its own clock whatever the offset:
	 * arrival (50) to parse (60), 10 us each */
	if (ASSERT_NOT_NULL(o, "reads"))
		ASSERT_NEAR((double)stage_sum(o, IT_FS_TARGET_RECV), n * 10000.0, n * 20.0,
			    "target.recv from the carrying arrival");
	it_fabric_free(f);
}

TEST(fabric_transport_write_r2t_and_loopback)
{
	/* a 128K write: the capsule goes out alone (the request leaves the
	 * send slot), the target sends an R2T before the backend starts, the
	 * host's H2C data follows; loopback: the target's arrival comes
	 * inside the host's send call (before it returned), so net.out is 0
	 * and the parts still add up */
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		TREADY(1150),                    /* before the send call returned at 1200 */
		hsend(1100, 1200, 0x3002, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TI(1300, 0xb1, 1, 0x3002, IT_NVME_WRITE),
		TSEND(1400, 0x3002, IT_TCPT_R2T),
		HREADY(1500),                    /* the R2T */
		hsend(1600, 2600, 0x3002, IT_TCP_H2C_PDU, IT_TCP_DATA, true),
		TREADY(1700),
		TX(2700, 0xb1, 0x3002, IT_NVME_WRITE),
		TC(5700, 0xb1, 1, 0x3002, IT_NVME_WRITE),
		TSEND(5800, 0x3002, IT_TCPT_RESPONSE),
		HREADY(5900),
	};
	struct it_fabric_host h = host(1000, 6000, 1, 0x3002, IT_NVME_WRITE);

	events(f, evs, N(evs));
	it_fabric_host(f, &h);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->detailed, 1, "split");
	ASSERT_EQ(r->detail_sum_ok, 1, "parts add up");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_WRITE);
	if (!ASSERT_NOT_NULL(o, "writes"))
		goto out;
	ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_SEND), 100, "host.send: the capsule only");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_NET_OUT), 0, "net.out: delivered inside the call");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_RECV), 100, "target.recv: returned -> parsed");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_QUEUE), 1400, "target.queue: R2T round trip, data");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_DEV), 3000, "target.dev");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_SENDQ), 100, "target.sendq: not the R2T");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_SEND), 0, "target.send: the response alone");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_NET_BACK), 100, "net.back");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_COMPLETE), 100, "host.complete");
	/* target.queue's R2T round trip: parsed 1300, R2T out 1400, landed
	 * on the host 1500, H2C data 1600 to 2600, landed on the target 1700
	 * (inside the send call: at its return), backend 2700 */
	ASSERT_EQ(r->r2t_split, 1, "the R2T round trip split");
	ASSERT_EQ(r->r2t_sum_ok, 1, "its parts add up to target.queue");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_R2T_SEND), 100, "r2t.send");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_R2T_NET), 100, "r2t.net");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_H2C_WAIT), 100, "h2c.wait");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_H2C_SEND), 1000, "h2c.send");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_H2C_NET), 0, "h2c.net: delivered inside the call");
	ASSERT_U64_EQ(stage_sum(o, IT_FS_H2C_RECV), 100, "h2c.recv");
out:
	it_fabric_free(f);
}

TEST(fabric_transport_h2c_by_request)
{
	/* a write whose H2C data goes out in two calls (the socket full
	 * after the first), recorded as Debian 6.1's probe did: the PDU
	 * buffer the cid is read from holds the H2C data PDU by then, so
	 * those sends carry the target's transfer tag (0x00fc) as their cid;
	 * the request pointer names the command (the analysis keeps each
	 * request's capsule cid). */
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		hsend(1100, 1200, 0x3002, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(1250),
		TI(1300, 0xb1, 1, 0x3002, IT_NVME_WRITE),
		TSEND(1400, 0x3002, IT_TCPT_R2T),
		HREADY(1500),
		hsend(1600, 2000, 0x00fc, IT_TCP_H2C_PDU, IT_TCP_DATA, false),
		hsend(2100, 2600, 0x00fc, IT_TCP_DATA, IT_TCP_DATA, true),
		TREADY(2650),
		TX(2700, 0xb1, 0x3002, IT_NVME_WRITE),
		TC(5700, 0xb1, 1, 0x3002, IT_NVME_WRITE),
		TSEND(5800, 0x3002, IT_TCPT_RESPONSE),
		HREADY(5900),
	};
	struct it_fabric_host h = host(1000, 6000, 1, 0x3002, IT_NVME_WRITE);

	for (size_t i = 0; i < N(evs); i++)
		if (evs[i].type == IT_EV_TCP_SEND)
			evs[i].tcp.cmd = 0xffff888000300000ull; /* its struct request * */
	events(f, evs, N(evs));
	it_fabric_host(f, &h);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->detail_sum_ok, 1, "split, parts add up");
	ASSERT_EQ(r->r2t_split, 1, "the R2T round trip split");
	ASSERT_EQ(r->r2t_sum_ok, 1, "adding up to target.queue");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_WRITE);
	if (ASSERT_NOT_NULL(o, "writes")) {
		ASSERT_U64_EQ(stage_sum(o, IT_FS_H2C_SEND), 1000, "h2c.send: both calls, 1600 -> 2600");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_H2C_NET), 50, "h2c.net: its arrival at 2650");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_H2C_RECV), 50, "h2c.recv");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_SEND), 100, "host.send: the capsule only");
	}
	it_fabric_free(f);
}

TEST(fabric_transport_gaps_counted)
{
	/* two reads: the first has no arrival on the host after the target's
	 * response (a lost event), the second no backend start (file backend
	 * not hooked); both are matched, neither is split, each counted */
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		hsend(1100, 1200, 0x0001, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(1300),
		TI(1400, 0xa1, 1, 0x0001, IT_NVME_READ),
		TX(1500, 0xa1, 0x0001, IT_NVME_READ),
		TC(1600, 0xa1, 1, 0x0001, IT_NVME_READ),
		TSEND(1700, 0x0001, IT_TCPT_RESPONSE),
		hsend(2100, 2200, 0x0002, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(2300),
		TI(2400, 0xa2, 1, 0x0002, IT_NVME_READ),
		TC(2600, 0xa2, 1, 0x0002, IT_NVME_READ),
		TSEND(2700, 0x0002, IT_TCPT_RESPONSE),
		HREADY(2800),
	};
	struct it_fabric_host h1 = host(1000, 1900, 1, 0x0001, IT_NVME_READ);
	struct it_fabric_host h2 = host(2000, 2900, 1, 0x0002, IT_NVME_READ);

	events(f, evs, N(evs));
	it_fabric_host(f, &h1);
	it_fabric_host(f, &h2);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 2, "matched");
	ASSERT_EQ(r->detailed, 0, "none split");
	ASSERT_EQ(r->gap[IT_FG_HOST_ARRIVAL], 1, "no host arrival");
	ASSERT_EQ(r->gap[IT_FG_BACKEND], 1, "no backend start");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_READ);
	if (ASSERT_NOT_NULL(o, "reads")) {
		ASSERT_EQ(o->stage[IT_FS_HOST_QUEUE].count, 0, "no parts");
		ASSERT_EQ(o->stage[IT_FS_TARGET].count, 2, "the top stages stay");
	}
	it_fabric_free(f);
}

TEST(fabric_backend_bios)
{
	/* two reads whose backends each queue a bio on the target's disk from
	 * the executing thread (tid 44). The first read's trail reaches the
	 * join before its Q event (both in one chunk: the block layer runs
	 * first), the second's after (its C in a later chunk). A bio of
	 * another thread at the same time is not theirs. */
	struct it_fabric *f = it_fabric_new();
	const uint32_t disk = IT_MKDEV(254, 0);
	struct it_event bq1 = ev_base(IT_EV_BIO_QUEUE, 1860, 0xb01, disk);
	struct it_event other = ev_base(IT_EV_BIO_QUEUE, 1870, 0xb09, disk);
	struct it_event bq2 = ev_base(IT_EV_BIO_QUEUE, 11860, 0xb02, disk);
	struct it_event x1 = TX(1850, 0xa1, 0x0001, IT_NVME_READ), x2 = TX(11850, 0xa2, 0x0002, IT_NVME_READ);
	struct it_event c1[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		hsend(1100, 1300, 0x0001, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(1500),
		TI(1800, 0xa1, 1, 0x0001, IT_NVME_READ),
	};
	struct it_event c1b[] = {
		TC(3850, 0xa1, 1, 0x0001, IT_NVME_READ),
		TSEND(4000, 0x0001, IT_TCPT_RESPONSE),
		HREADY(4700),
	};
	struct it_event c2[] = {
		hsend(11100, 11300, 0x0002, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(11500),
		TI(11800, 0xa2, 1, 0x0002, IT_NVME_READ),
	};
	struct it_event c2b[] = {
		TC(13850, 0xa2, 1, 0x0002, IT_NVME_READ),
		TSEND(14000, 0x0002, IT_TCPT_RESPONSE),
		HREADY(14700),
	};
	struct it_fabric_host h1 = host(1000, 5000, 1, 0x0001, IT_NVME_READ);
	struct it_fabric_host h2 = host(11000, 15000, 1, 0x0002, IT_NVME_READ);

	x1.tid = x2.tid = bq1.tid = bq2.tid = 44;
	other.tid = 45;
	/* chunk 1: the block layer's trails first (read 1's bio: Q 1860, D
	 * 2000, C 3700; the other thread's), then the chunk's events */
	it_fabric_trail(f, disk, 1860, 2000, 3700);
	it_fabric_trail(f, disk, 1870, 1900, 1950);
	events(f, c1, N(c1));
	it_fabric_event(f, &x1);
	it_fabric_event(f, &bq1);
	it_fabric_event(f, &other);
	events(f, c1b, N(c1b));
	it_fabric_host(f, &h1);
	it_fabric_settle(f);
	/* chunk 2: read 2 runs its backend and queues its bio ... */
	events(f, c2, N(c2));
	it_fabric_event(f, &x2);
	it_fabric_event(f, &bq2);
	it_fabric_settle(f);
	/* chunk 3: ... its trail completes (Q 11860, D 12860, C 13760) */
	it_fabric_trail(f, disk, 11860, 12860, 13760);
	events(f, c2b, N(c2b));
	it_fabric_host(f, &h2);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->detailed, 2, "split");
	ASSERT_EQ(r->dev_split, 2, "backing device split");
	ASSERT_EQ(r->dev_sum_ok, 2, "tdev parts add up");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_READ);
	if (ASSERT_NOT_NULL(o, "reads")) {
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TDEV_SUBMIT), 10 + 10, "tdev.submit");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TDEV_Q2D), 140 + 1000, "tdev.q2d: not the other thread's");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TDEV_D2C), 1700 + 900, "tdev.d2c");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TDEV_DONE), 150 + 90, "tdev.done");
	}
	it_fabric_free(f);
}

TEST(fabric_initiator_alone)
{
	/* the target is not in the trace (another machine): the initiator's
	 * transport still splits the command: host.queue, host.send, remote */
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		hsend(1100, 1300, 0x0005, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		HREADY(4000),
	};
	struct it_fabric_host h = host(1000, 4500, 1, 0x0005, IT_NVME_READ);

	events(f, evs, N(evs));
	it_fabric_host(f, &h);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 0, "nothing matched");
	ASSERT_EQ(r->reason[IT_FR_NO_TARGET_SIDE], 1, "counted without a target side");
	ASSERT_EQ(r->nalone, 1, "one opcode alone");
	if (r->nalone == 1) {
		const struct it_fabric_op *o = &r->alone[0];
		ASSERT_EQ(o->count, 1, "one read");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_QUEUE), 100, "host.queue");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_HOST_SEND), 200, "host.send");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_REMOTE), 3200, "remote: sent -> completed");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_COMMAND), 3500, "command");
	}
	it_fabric_free(f);
}

TEST(fabric_send_backlog)
{
	/* four reads on queue 1 set up at once (S 1000, 1010, 1020, 1030),
	 * sent one after another (HS0 1100, 1200, 1300, 1400): when each was
	 * set up 0, 1, 2 and 3 were set up before it and not out yet; a fifth,
	 * set up at 5000 after all went out, has none ahead */
	struct it_fabric *f = it_fabric_new();
	struct it_event c = ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP);

	it_fabric_event(f, &c);
	for (unsigned k = 0; k < 5; k++) {
		uint64_t s = k < 4 ? 1000 + 10 * k : 5000, hs0 = k < 4 ? 1100 + 100 * k : 5100;
		uint16_t cid = (uint16_t)(k + 1);
		struct it_event evs[] = {
			hsend(hs0, hs0 + 50, cid, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
			TREADY(hs0 + 60),
			TI(hs0 + 70, 0xa0 + k, 1, cid, IT_NVME_READ),
			TX(hs0 + 80, 0xa0 + k, cid, IT_NVME_READ),
			TC(hs0 + 90, 0xa0 + k, 1, cid, IT_NVME_READ),
			TSEND(hs0 + 95, cid, IT_TCPT_RESPONSE),
			HREADY(hs0 + 97),
		};
		struct it_fabric_host h = host(s, hs0 + 99, 1, cid, IT_NVME_READ);

		events(f, evs, N(evs));
		it_fabric_host(f, &h);
	}
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->detailed, 5, "split");
	if (ASSERT_EQ(r->nqueues, 1, "one queue")) {
		const struct it_fabric_queue *q = &r->queues[0];
		ASSERT_EQ(q->qid, 1, "qid");
		ASSERT_EQ(q->commands, 5, "commands");
		ASSERT_U64_EQ(q->sum, 0 + 1 + 2 + 3 + 0, "backlog sum");
		ASSERT_EQ(q->max, 3, "max");
		ASSERT_EQ(q->depth[0], 2, "none ahead twice");
		ASSERT_EQ(q->depth[3], 1, "three ahead once");
	}
	it_fabric_free(f);
}

TEST(fabric_transport_read_one_target_event)
{
	/* as fabric_transport_read, with the target's C2H data start carried
	 * by its response event (the recorder joins them in the kernel) */
	struct it_fabric *f = it_fabric_new();
	struct it_event resp = TSEND(4300, 0x2001, IT_TCPT_RESPONSE);
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		hsend(1100, 1300, 0x2001, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(1500),
		TI(1800, 0xa1, 1, 0x2001, IT_NVME_READ),
		TX(1850, 0xa1, 0x2001, IT_NVME_READ),
		TC(3850, 0xa1, 1, 0x2001, IT_NVME_READ),
	};
	struct it_event back = HREADY(4700);
	struct it_fabric_host h = host(1000, 5000, 1, 0x2001, IT_NVME_READ);

	resp.tcp.end_ns = 4000;
	events(f, evs, N(evs));
	it_fabric_event(f, &resp);
	it_fabric_event(f, &back);
	it_fabric_host(f, &h);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->detailed, 1, "split");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_READ);
	if (ASSERT_NOT_NULL(o, "reads")) {
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_SENDQ), 150, "target.sendq: to the data's start");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_SEND), 300, "target.send: data -> response");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_NET_BACK), 400, "net.back");
	}
	it_fabric_free(f);
}

TEST(fabric_target_alone)
{
	/* the initiator is not in the trace (another machine): two reads
	 * from cntlid 7 on the target, split by its side alone */
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		TI(1000, 0xa1, 1, 0x0001, IT_NVME_READ),
		TX(1100, 0xa1, 0x0001, IT_NVME_READ),
		TC(3100, 0xa1, 1, 0x0001, IT_NVME_READ),
		TSEND(3300, 0x0001, IT_TCPT_RESPONSE),
		TI(5000, 0xa2, 1, 0x0002, IT_NVME_READ),
		TX(5050, 0xa2, 0x0002, IT_NVME_READ),
		TC(6050, 0xa2, 1, 0x0002, IT_NVME_READ),
		TSEND(6100, 0x0002, IT_TCPT_RESPONSE),
	};

	events(f, evs, N(evs));
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->reason[IT_FR_NO_HOST_SIDE], 2, "counted without a host side");
	if (ASSERT_EQ(r->ntarget_alone, 1, "one (cntlid, opcode)")) {
		const struct it_fabric_op *o = &r->target_alone[0];
		ASSERT_EQ(o->cntlid, CNTLID, "per initiator controller");
		ASSERT_EQ(o->count, 2, "two reads");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_QUEUE), 100 + 50, "target.queue");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_DEV), 2000 + 1000, "target.dev");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET_SENDQ), 200 + 50, "target.sendq");
		ASSERT_U64_EQ(stage_sum(o, IT_FS_TARGET), 2100 + 1050, "target");
	}
	it_fabric_free(f);
}

/* The group of r's side `side` whose key fields are these, or NULL. */
static const struct it_fabric_op *group(const struct it_fabric_results *r, uint8_t side,
					 uint8_t opcode, uint8_t size_class, uint16_t qid)
{
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i].side == side && r->groups[i].opcode == opcode &&
		    r->groups[i].size_class == size_class && r->groups[i].qid == qid)
			return &r->groups[i];
	return NULL;
}

TEST(fabric_group_by_size_queue)
{
	/* reads of 4K on queue 1 and of 128K on queues 1 and 2, a write of
	 * 4K on queue 2, a keep-alive, and a target command no host claims:
	 * grouped by size and queue (not op), each command in one group, the
	 * keep-alive in its own (admin) group, the target's alone in its side */
	struct it_fabric *f = it_fabric_new();
	static const uint8_t keys[] = { IT_FK_SIZE, IT_FK_QUEUE };
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		TI(1100, 0xa1, 1, 0x0001, IT_NVME_READ),
		TI(1150, 0xa2, 1, 0x0002, IT_NVME_READ),
		TI(1160, 0xa3, 2, 0x0003, IT_NVME_READ),
		TI(1170, 0xa4, 2, 0x0004, IT_NVME_WRITE),
		TI(1180, 0xa5, 0, 0x0005, 0x18 /* keep alive */),
		TC(1400, 0xa1, 1, 0x0001, IT_NVME_READ),
		TC(1500, 0xa2, 1, 0x0002, IT_NVME_READ),
		TC(1600, 0xa3, 2, 0x0003, IT_NVME_READ),
		TC(1700, 0xa4, 2, 0x0004, IT_NVME_WRITE),
		TC(1800, 0xa5, 0, 0x0005, 0x18),
	};
	struct it_fabric_host h[] = {
		host(1000, 1500, 1, 0x0001, IT_NVME_READ), host(1010, 1600, 1, 0x0002, IT_NVME_READ),
		host(1020, 1700, 2, 0x0003, IT_NVME_READ), host(1030, 1800, 2, 0x0004, IT_NVME_WRITE),
		host(1040, 1900, 0, 0x0005, 0x18),
	};
	struct it_event late[] = { /* after the host commands: claimed by none */
		TI(5000, 0xa6, 1, 0x0009, IT_NVME_READ), TC(5300, 0xa6, 1, 0x0009, IT_NVME_READ),
	};

	h[1].bytes = h[2].bytes = 128 * 1024;
	evs[2].nvmet.bytes = evs[3].nvmet.bytes = 128 * 1024;
	evs[7].nvmet.bytes = evs[8].nvmet.bytes = 128 * 1024;
	h[4].bytes = evs[5].nvmet.bytes = evs[10].nvmet.bytes = 0;
	it_fabric_group_by(f, keys, 2);
	events(f, evs, N(evs));
	for (size_t i = 0; i < N(h); i++)
		it_fabric_host(f, &h[i]);
	ASSERT_EQ(it_fabric_settle(f), 0, "settle");
	events(f, late, N(late));
	ASSERT_EQ(it_fabric_finish(f), 0, "finish");
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 5, "matched");
	ASSERT_EQ(r->grouped, true, "grouped");
	ASSERT_EQ(r->ngroups, 6, "4K q1, 128K q1, 128K q2, 4K q2, the keep-alive; the target's one");
	/* op is not a key: a group's opcode is 0, reads and writes together */
	const struct it_fabric_op *g4k1 = group(r, IT_FSIDE_MATCHED, 0, 13, 1);
	const struct it_fabric_op *g128k1 = group(r, IT_FSIDE_MATCHED, 0, 18, 1);
	const struct it_fabric_op *g128k2 = group(r, IT_FSIDE_MATCHED, 0, 18, 2);
	const struct it_fabric_op *g4k2 = group(r, IT_FSIDE_MATCHED, 0, 13, 2);
	const struct it_fabric_op *ka = group(r, IT_FSIDE_MATCHED, 0x18, 0, 0);
	if (ASSERT_NOT_NULL(g4k1, "4K queue 1") && ASSERT_NOT_NULL(g128k1, "128K queue 1") &&
	    ASSERT_NOT_NULL(g128k2, "128K queue 2") && ASSERT_NOT_NULL(g4k2, "4K queue 2") &&
	    ASSERT_NOT_NULL(ka, "keep-alive")) {
		ASSERT_EQ(g4k1->count, 1, "one 4K read on queue 1");
		ASSERT_U64_EQ(g4k1->stage[IT_FS_TARGET].sum, 300, "its target");
		ASSERT_U64_EQ(g128k1->stage[IT_FS_HOST_OUT].sum, 140, "the 128K read's host.out");
		ASSERT_U64_EQ(g128k2->stage[IT_FS_COMMAND].sum, 680, "128K on queue 2: command");
		ASSERT_EQ(g4k2->count, 1, "the write");
		ASSERT_U64_EQ(g4k2->bytes, K4, "its bytes");
		ASSERT_EQ(ka->admin, true, "admin, in a group of its own");
		ASSERT_EQ(g4k1->machine, 0, "machine not a key: 0");
	}
	/* the groups hold every matched command once: their sums are the ops' */
	uint64_t groups = 0, ops = 0;
	for (size_t i = 0; i < r->ngroups; i++)
		if (r->groups[i].side == IT_FSIDE_MATCHED)
			groups += r->groups[i].stage[IT_FS_COMMAND].sum;
	for (size_t i = 0; i < r->nops; i++)
		ops += r->ops[i].stage[IT_FS_COMMAND].sum;
	ASSERT_U64_EQ(groups, ops, "the groups' command time is the opcodes'");
	const struct it_fabric_op *t = group(r, IT_FSIDE_TARGET, 0, 13, 1);
	if (ASSERT_NOT_NULL(t, "the target's command alone, 4K on queue 1"))
		ASSERT_U64_EQ(t->stage[IT_FS_TARGET].sum, 300, "its target");
	it_fabric_free(f);
}

TEST(fabric_group_keys_parse)
{
	uint8_t keys[IT_FK_MAX];
	unsigned n = 9;
	char err[160];

	ASSERT_EQ(it_fabric_parse_keys("op,size,queue,initiator,machine", keys, &n, err, sizeof(err)),
		  0, "every key");
	ASSERT_EQ(n, 5, "five");
	ASSERT_EQ(keys[2], IT_FK_QUEUE, "in order");
	ASSERT_EQ(it_fabric_parse_keys("none", keys, &n, err, sizeof(err)), 0, "none");
	ASSERT_EQ(n, 0, "no key");
	ASSERT_EQ(it_fabric_parse_keys("op,dev", keys, &n, err, sizeof(err)), -1, "dev: no such key");
	ASSERT_TRUE(strstr(err, "unknown fabric group-by key 'dev'") != NULL, "says which");
	ASSERT_EQ(it_fabric_parse_keys("op,op", keys, &n, err, sizeof(err)), -1, "twice");
	ASSERT_EQ(it_fabric_parse_keys("op,", keys, &n, err, sizeof(err)), -1, "a trailing comma");
	ASSERT_EQ(it_fabric_parse_keys("", keys, &n, err, sizeof(err)), -1, "empty");
}

TEST(fabric_io_work_delay_per_queue)
{
	/* sends from io_work carry their run's scheduling delay: two sends of
	 * one run (the same delay) count once; a send outside io_work (no
	 * flag) not at all; the target's queue apart from the host's */
	struct it_fabric *f = it_fabric_new();
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		hsend(1100, 1200, 0x0001, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		hsend(1300, 1400, 0x0002, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		hsend(2100, 2200, 0x0003, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		hsend(3100, 3200, 0x0004, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TSEND(4000, 0x0001, IT_TCPT_RESPONSE),
	};
	uint32_t wait[] = { 0, 5000, 5000, 7000, 0, 9000 };

	for (size_t i = 0; i < N(evs); i++)
		if (wait[i]) {
			evs[i].tcp.io_work_wait_ns = wait[i];
			evs[i].tcp.flags |= IT_TCP_IO_WORK_WAIT;
		}
	events(f, evs, N(evs));
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	if (ASSERT_EQ(r->nio_work, 2, "the host's queue and the target's")) {
		const struct it_tcp_io_work *h = &r->io_work[0], *t = &r->io_work[1];
		ASSERT_EQ(h->side, IT_TCP_HOST, "host first (first seen)");
		ASSERT_EQ(h->wait.count, 2, "two runs: 5000 (two sends), 7000");
		ASSERT_U64_EQ(h->wait.sum, 12000, "their delays");
		ASSERT_U64_EQ(h->wait.max, 7000, "max");
		ASSERT_EQ(t->side, IT_TCP_TARGET, "target");
		ASSERT_EQ(t->ctrl, CNTLID, "by its cntlid");
		ASSERT_U64_EQ(t->wait.sum, 9000, "its run");
	}
	it_fabric_free(f);
}

/* What an exporter is told of each matched command (it_fabric_on_matched):
 * its points and the stages the report counted, one bit for each stage
 * with a sample, the target's controller. */
struct seen_matched {
	unsigned calls;
	uint32_t stages;
	uint64_t p[IT_FP_MAX];
	uint16_t cntlid, qid;
};

static void on_matched(const struct it_fabric_matched *m, void *ctx)
{
	struct seen_matched *s = ctx;

	s->calls++;
	s->stages = m->stages;
	memcpy(s->p, m->p, sizeof(s->p));
	s->cntlid = m->cntlid;
	s->qid = m->h->qid;
}

TEST(fabric_matched_callback)
{
	struct it_fabric *f = it_fabric_new();
	struct seen_matched seen = { 0 };
	struct it_event evs[] = {
		ctrl_ev(INST, CNTLID, IT_NVME_TR_TCP),
		hsend(1100, 1300, 0x2001, IT_TCP_CMD_PDU, IT_TCP_CMD_PDU, true),
		TREADY(1500),
		TI(1800, 0xa1, 1, 0x2001, IT_NVME_READ),
		TX(1850, 0xa1, 0x2001, IT_NVME_READ),
		TC(3850, 0xa1, 1, 0x2001, IT_NVME_READ),
		TSEND(4000, 0x2001, IT_TCPT_DATA_PDU),
		TSEND(4300, 0x2001, IT_TCPT_RESPONSE),
		HREADY(4700),
		/* a command with no target side: no call */
	};
	struct it_fabric_host h = host(1000, 5000, 1, 0x2001, IT_NVME_READ);
	struct it_fabric_host lone = host(6000, 7000, 1, 0x3001, IT_NVME_READ);

	it_fabric_on_matched(f, on_matched, &seen);
	events(f, evs, N(evs));
	it_fabric_host(f, &h);
	it_fabric_host(f, &lone);
	it_fabric_settle(f);
	it_fabric_finish(f);
	const struct it_fabric_results *r = it_fabric_results(f);
	ASSERT_EQ(r->matched, 1, "one matched");
	ASSERT_EQ(seen.calls, 1, "one call, for the matched command only");
	ASSERT_EQ(seen.cntlid, CNTLID, "the target's controller");
	ASSERT_EQ(seen.qid, 1, "its queue");
	ASSERT_U64_EQ(seen.p[IT_FP_S], 1000, "S");
	ASSERT_U64_EQ(seen.p[IT_FP_HS0], 1100, "HS0");
	ASSERT_U64_EQ(seen.p[IT_FP_TI], 1800, "TI");
	ASSERT_U64_EQ(seen.p[IT_FP_TC], 3850, "TC");
	ASSERT_U64_EQ(seen.p[IT_FP_N], 5000, "N");
	const struct it_fabric_op *o = op_stats(r, false, IT_NVME_READ);
	if (ASSERT_NOT_NULL(o, "reads")) {
		/* the bits are the stages the report has a sample of */
		for (int s = 0; s < IT_FS_MAX; s++)
			ASSERT_EQ(!!(seen.stages & 1u << s), o->stage[s].count == 1,
				  it_fabric_stages[s].name);
		ASSERT_EQ(!!(seen.stages & 1u << IT_FS_NET_OUT), 1, "net.out taken");
		ASSERT_EQ(!!(seen.stages & 1u << IT_FS_HOST_BLOCK), 0, "no trail: no host.block");
	}
	it_fabric_free(f);
}
