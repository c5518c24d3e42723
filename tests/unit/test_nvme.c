/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The NVMe layer in the analyzer, on hand-made streams shaped like what
 * the 6.1 kernel emits (Q, NVMe submit, D, NVMe complete, C): linking by
 * request pointer, the NVMe stages, per-command records, queue depth per
 * NVMe queue, DSM ranges; and the per-zone counts of zones.c.
 */
#include "harness.h"
#include "synth.h"
#include "analyze/nvme.h"
#include "analyze/zones.h"

#define DEV_N IT_MKDEV(259, 0)

/* An NVMe event as bpf/nvme.bpf.c fills it (event.h). */
static struct it_event nv(uint8_t type, uint64_t ts, uint64_t rq, uint8_t opcode, uint16_t qid,
			  uint16_t cid, uint64_t cdw1011, uint64_t cdw1213, uint32_t bytes)
{
	struct it_event e = ev_base(type, ts, rq, DEV_N);
	e.layer = IT_LAYER_NVME;
	e.op = opcode;
	e.hwq = qid;
	e.tag = cid;
	e.sector = cdw1011;
	e.aux = cdw1213;
	e.bytes = bytes;
	e.flags = 1; /* nsid */
	return e;
}
#define NS(ts, rq, op, qid, cid, slba, nlb0, bytes) \
	nv(IT_EV_NVME_SUBMIT, ts, rq, op, qid, cid, slba, nlb0, bytes)
#define NC(ts, rq, op, qid, cid, bytes) nv(IT_EV_NVME_COMPLETE, ts, rq, op, qid, cid, 0, 0, bytes)

TEST(nvme_link_direct_issue)
{
	/* no scheduler: the command is set up (S) before the request is
	 * started (D), when only its bio is known */
	struct it_event evs[] = {
		TASK(500, 100, 100, "fio"),
		Q(1000, 0xb1, DEV_N, 800, K4, IT_OP_READ),
		NS(1500, 0x71, IT_NVME_READ, 1, 0x3005, 100, 7, K4),
		D(2000, 0x71, 0xb1, DEV_N, 800, K4, IT_OP_READ),
		NC(9000, 0x71, IT_NVME_READ, 1, 0x3005, K4),
		C(9500, 0x71, DEV_N, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(tr.n, 1, "one trail");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_S2D), 500, "S2D");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_D2N), 7000, "D2N");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_N2C), 500, "N2C");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_Q2D) + it_stage_time(&tr.t[0], IT_STAGE_D2N) +
		  it_stage_time(&tr.t[0], IT_STAGE_N2C), it_stage_time(&tr.t[0], IT_STAGE_Q2C),
		  "Q2D + D2N + N2C == Q2C");
	ASSERT_EQ(r->stats.nvme_linked, 1, "linked");
	ASSERT_EQ(r->stats.nvme_trails, 1, "trails with NVMe");
	ASSERT_EQ(r->stats.nvme_stage_sum_ok, 1, "stage sum ok");
	ASSERT_EQ(r->stats.ios, 1, "the NVMe events add no I/O");
	const struct it_nvme_results *n = it_analyzer_nvme(a);
	if (ASSERT_NOT_NULL(n, "nvme results")) {
		ASSERT_EQ(n->commands, 1, "commands");
		ASSERT_EQ(n->op[0][IT_NVME_READ].count, 1, "reads");
		ASSERT_EQ(n->op[0][IT_NVME_READ].lat.max, 7500, "latency S->N");
	}
	it_analyzer_free(a);
}

TEST(nvme_link_with_insert_and_timestamp_wrap)
{
	/* with a scheduler: I, then S on the known request, then D; and a
	 * second request whose S low 32 bits wrap before its D */
	uint64_t base = 0xfffffff0ull;
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_N, 0, K4, IT_OP_WRITE),
		I(1100, 0x71, 0xb1, DEV_N, 0, K4, IT_OP_WRITE),
		NS(1200, 0x71, IT_NVME_WRITE, 2, 1, 0, 7, K4),
		D(1300, 0x71, 0xb1, DEV_N, 0, K4, IT_OP_WRITE),
		NC(2000, 0x71, IT_NVME_WRITE, 2, 1, K4),
		C(2100, 0x71, DEV_N, K4),
		Q(base, 0xb2, DEV_N, 64, K4, IT_OP_READ),
		NS(base + 8, 0x72, IT_NVME_READ, 1, 2, 8, 7, K4),
		D(base + 0x20, 0x72, 0xb2, DEV_N, 64, K4, IT_OP_READ),
		NC(base + 0x100, 0x72, IT_NVME_READ, 1, 2, K4),
		C(base + 0x110, 0x72, DEV_N, K4),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);

	ASSERT_EQ(tr.n, 2, "two trails");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_S2D), 100, "S2D after insert");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_I2D), 200, "I2D");
	ASSERT_EQ(it_stage_time(&tr.t[1], IT_STAGE_S2D), 0x18, "S2D across a 2^32 ns boundary");
	ASSERT_EQ(it_analyzer_results(a)->stats.nvme_stage_sum_ok, 2, "sums");
	it_analyzer_free(a);
}

struct rows {
	struct it_nvme_cmd c[8];
	int n;
};

static void keep_cmd(const struct it_nvme_cmd *c, void *ctx)
{
	struct rows *r = ctx;
	if (r->n < 8)
		r->c[r->n++] = *c;
}

TEST(nvme_commands_queue_depth_and_dsm)
{
	struct rows rows = { 0 };
	struct it_nvme_opts o = { .on_cmd = keep_cmd, .ctx = &rows };
	struct it_nvme *n = it_nvme_new(&o);
	struct it_event r2 = nv(IT_EV_NVME_RANGE, 3001, 0x73, IT_NVME_DSM, 1, 9, 2048, 0, 65536);
	struct it_event r3 = nv(IT_EV_NVME_RANGE, 3002, 0x73, IT_NVME_DSM, 1, 9, 16384, 1, 4096);
	struct it_event evs[] = {
		TASK(10, 100, 100, "db"),
		NS(1000, 0x71, IT_NVME_READ, 1, 0x1001, 5000, 15, 8192),
		NS(1100, 0x72, IT_NVME_READ, 1, 0x1002, 6000, 0, 4096),
		NS(1200, 0x74, IT_NVME_WRITE, 2, 0x1003, 7000, 0, 4096),
		NC(2000, 0x72, IT_NVME_READ, 1, 0x1002, 4096),
		NC(2100, 0x71, IT_NVME_READ, 1, 0x1001, 8192),
		NS(3000, 0x73, IT_NVME_DSM, 1, 9, 1 /* nr = 2 ranges */, 0, 0),
		r2, r3,
		NC(4000, 0x73, IT_NVME_DSM, 1, 9, 0),
		ev_err(NC(5000, 0x74, IT_NVME_WRITE, 2, 0x1003, 4096), 0x2),
	};

	if (!ASSERT_NOT_NULL(n, "new"))
		return;
	for (size_t i = 0; i < N(evs); i++)
		it_nvme_feed(n, &evs[i]);
	it_nvme_finish(n, 0);
	const struct it_nvme_results *r = it_nvme_results(n);
	ASSERT_EQ(rows.n, 4, "4 commands");
	ASSERT_EQ(rows.c[0].rq, 0x72, "completion order");
	ASSERT_EQ(rows.c[1].slba, 5000, "slba");
	ASSERT_EQ(rows.c[1].nlb, 16, "nlb is 0-based on the wire");
	ASSERT_EQ(rows.c[1].qd, 1, "first on queue 1: depth 1");
	ASSERT_EQ(rows.c[0].qd, 2, "second on queue 1: depth 2");
	ASSERT_EQ(rows.c[1].cid & 0xfff, 1, "tag");
	ASSERT_STREQ(rows.c[1].comm, "db", "comm");
	ASSERT_EQ(rows.c[2].nranges, 2, "DSM ranges");
	ASSERT_EQ(rows.c[2].range_sector, 2048, "first range");
	ASSERT_EQ(rows.c[2].range_bytes, 69632, "range bytes");
	ASSERT_EQ(rows.c[3].status, 2, "status");
	ASSERT_EQ(r->errors, 1, "errors");
	ASSERT_EQ(r->nqueues, 2, "queues");
	ASSERT_EQ(r->queues[0].qid, 1, "sorted");
	ASSERT_EQ(r->queues[0].qd_max, 2, "qd max q1");
	ASSERT_EQ(r->queues[1].qd[1], 1, "q2 depth 1 once");
	ASSERT_EQ(r->nranges, 2, "ranges");
	ASSERT_EQ(r->ranges[1].sector, 16384, "range 2");
	ASSERT_EQ(r->dsm_commands, 1, "dsm");
	ASSERT_EQ(r->incomplete, 0, "incomplete");
	char buf[32];
	ASSERT_STREQ(it_nvme_opcode_name(0x7d, false, buf, sizeof(buf)), "zone_append", "name");
	ASSERT_STREQ(it_nvme_opcode_name(0x06, true, buf, sizeof(buf)), "admin_identify", "admin");
	ASSERT_STREQ(it_nvme_opcode_name(0xc1, false, buf, sizeof(buf)), "io_0xc1", "unknown");
	/* depth over time: 1 in flight 1000-1100, 2 until 1200, 3 until 2000... */
	ASSERT_EQ(r->ntimeline, 1, "one interval");
	ASSERT_NEAR(r->timeline[0].qd_ns, 100.0 * 1 + 100 * 2 + 800 * 3 + 100 * 2 + 900 * 1 +
		    1000 * 2 + 1000 * 1, 1e-6, "depth integral");
	it_nvme_free(n);
}

static struct it_event zinfo(uint32_t idx, uint64_t start, uint64_t len)
{
	struct it_event e = ev_base(IT_EV_ZONE_INFO, 1, start, DEV_N);
	e.pid = idx;
	e.sector = start;
	e.bytes = (uint32_t)len;
	e.aux = len;
	e.flags = 2 | 1 << 8;
	return e;
}

TEST(zones_counts)
{
	struct it_event evs[] = {
		zinfo(0, 0, 1024), zinfo(1, 1024, 1024), zinfo(2, 2048, 1024),
		Q(100, 0xb1, DEV_N, 1024, 0, IT_OP_ZONE_RESET),
		D(110, 0x71, 0xb1, DEV_N, 1024, 0, IT_OP_ZONE_RESET),
		C(400, 0x71, DEV_N, 0),
		Q(500, 0xb2, DEV_N, 1024, 65536, IT_OP_WRITE),
		D(510, 0x72, 0xb2, DEV_N, 1024, 65536, IT_OP_WRITE),
		C(600, 0x72, DEV_N, 65536),
		Q(700, 0xb3, DEV_N, 2100, K4, IT_OP_READ),
		D(710, 0x73, 0xb3, DEV_N, 2100, K4, IT_OP_READ),
		C(800, 0x73, DEV_N, K4),
		Q(900, 0xb4, DEV_N, 2048, K4, IT_OP_ZONE_APPEND),
		D(910, 0x74, 0xb4, DEV_N, 2048, K4, IT_OP_ZONE_APPEND),
		C(990, 0x74, DEV_N, K4),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);
	const struct it_zones *z = it_analyzer_zones(a);

	if (ASSERT_NOT_NULL(z, "zones") && ASSERT_EQ(z->ndevs, 1, "one zoned dev")) {
		const struct it_zone_dev *d = &z->devs[0];
		ASSERT_EQ(d->nzones, 3, "3 zones");
		ASSERT_EQ(d->zones[1].mgmt[IT_ZM_RESET].count, 1, "reset on zone 1");
		ASSERT_EQ(d->zones[1].mgmt[IT_ZM_RESET].max, 300, "reset latency (Q2C)");
		ASSERT_EQ(d->zones[1].writes, 1, "write on zone 1");
		ASSERT_EQ(d->zones[1].write_bytes, 65536, "write bytes");
		ASSERT_EQ(d->zones[2].reads, 1, "read inside zone 2");
		ASSERT_EQ(d->zones[2].appends, 1, "append on zone 2");
		ASSERT_EQ(d->zones[0].writes + d->zones[0].reads + d->zones[0].mgmt[0].count, 0,
			  "zone 0 quiet");
	}
	it_analyzer_free(a);
}
