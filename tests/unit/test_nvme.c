/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The NVMe layer in the analyzer, on hand-made streams shaped like what
 * the 6.1 kernel emits (Q, NVMe submit, D, NVMe complete, C): linking by
 * request pointer, the NVMe stages, per-command records, queue depth per
 * NVMe queue, DSM ranges; and the per-zone counts of zones.c.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "synth.h"
#include "analyze/nvme.h"
#include "analyze/report.h"
#include "analyze/zones.h"
#include "export/exporter.h"

#define DEV_N IT_MKDEV(259, 0)

/* An NVMe event as src/layers/nvme/nvme.bpf.c fills it (event.h). */
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
/* nvme:nvme_sq: sector = SQ head (from the CQE), aux = SQ tail, bytes = SQ size */
#define NQ(ts, rq, qid, head, tail, size) nv(IT_EV_NVME_SQ, ts, rq, 0, qid, 0xffff, head, tail, size)

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

TEST(nvme_sq_backlog_and_cqe_stages)
{
	/* two reads on queue 1 of a 64-entry SQ; the CQEs report the SQ head:
	 * 62 with tail 1 (wrapped: 3 not fetched), then head == tail (0); a
	 * third sample with a head beyond the queue size is invalid */
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_N, 800, K4, IT_OP_READ),
		NS(1100, 0x71, IT_NVME_READ, 1, 0x1005, 100, 7, K4),
		D(1200, 0x71, 0xb1, DEV_N, 800, K4, IT_OP_READ),
		Q(1300, 0xb2, DEV_N, 900, K4, IT_OP_READ),
		NS(1400, 0x72, IT_NVME_READ, 1, 0x1006, 112, 7, K4),
		D(1500, 0x72, 0xb2, DEV_N, 900, K4, IT_OP_READ),
		NQ(5000, 0x71, 1, 62, 1, 64),
		NQ(5100, 0x72, 1, 1, 1, 64),
		NC(5300, 0x71, IT_NVME_READ, 1, 0x1005, K4),
		NC(5400, 0x72, IT_NVME_READ, 1, 0x1006, K4),
		C(5600, 0x71, DEV_N, K4),
		C(5700, 0x72, DEV_N, K4),
		NQ(6000, 0x99, 1, 70, 1, 64),
	};
	struct trails tr;
	struct it_analyzer *a = run(evs, N(evs), &tr);
	const struct it_results *r = it_analyzer_results(a);

	ASSERT_EQ(tr.n, 2, "two trails");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_D2H), 3800, "D2H: issued -> CQE handled");
	ASSERT_EQ(it_stage_time(&tr.t[0], IT_STAGE_H2N), 300, "H2N: CQE -> nvme_complete_rq");
	ASSERT_EQ(it_stage_time(&tr.t[1], IT_STAGE_D2H) + it_stage_time(&tr.t[1], IT_STAGE_H2N),
		  it_stage_time(&tr.t[1], IT_STAGE_D2N), "D2H + H2N == D2N");
	ASSERT_EQ(r->stats.nvme_stage_sum_ok, 2, "stage sums with H");
	const struct it_nvme_results *n = it_analyzer_nvme(a);
	if (ASSERT_NOT_NULL(n, "nvme results") && ASSERT_EQ(n->nqueues, 1, "one queue")) {
		const struct it_nvme_queue_stats *q = &n->queues[0];
		ASSERT_EQ(n->sq_events, 3, "SQ events");
		ASSERT_EQ(q->sq_samples, 2, "valid samples");
		ASSERT_EQ(q->sq_invalid, 1, "head outside the queue");
		ASSERT_EQ(q->sq_size, 64, "SQ size");
		ASSERT_EQ(q->sq_backlog[3], 1, "wrapped: (1 - 62) mod 64 == 3");
		ASSERT_EQ(q->sq_backlog[0], 1, "head == tail: nothing to fetch");
		ASSERT_EQ(q->sq_backlog_max, 3, "max backlog");
	}
	it_analyzer_free(a);
}

TEST(nvme_sq_optional_cqe_time_in_command)
{
	struct rows rows = { 0 };
	struct it_nvme_opts o = { .on_cmd = keep_cmd, .ctx = &rows };
	struct it_nvme *n = it_nvme_new(&o);
	struct it_event evs[] = {
		NS(1000, 0x71, IT_NVME_WRITE, 3, 1, 0, 7, K4),
		NQ(1800, 0x71, 3, 5, 5, 1024),
		NC(1900, 0x71, IT_NVME_WRITE, 3, 1, K4),
		NS(2000, 0x72, IT_NVME_WRITE, 3, 2, 8, 7, K4), /* no nvme_sq for this one */
		NC(2900, 0x72, IT_NVME_WRITE, 3, 2, K4),
	};

	if (!ASSERT_NOT_NULL(n, "new"))
		return;
	for (size_t i = 0; i < N(evs); i++)
		it_nvme_feed(n, &evs[i]);
	it_nvme_finish(n, 0);
	ASSERT_EQ(rows.n, 2, "2 commands");
	ASSERT_EQ(rows.c[0].cqe_ns, 1800, "CQE time");
	ASSERT_EQ(rows.c[1].cqe_ns, 0, "a resubmitted slot does not keep the old CQE time");
	ASSERT_EQ(it_nvme_results(n)->queues[0].sq_backlog[0], 1, "backlog 0");
	it_nvme_free(n);
}

TEST(nvme_queue_depth_over_time_per_queue)
{
	/* 1 us intervals; queue 1 holds 2 commands over [0, 1500) ns, queue 2
	 * one over [500, 2500) */
	struct it_nvme_opts o = { .start_ns = 10000, .interval_ns = 1000 };
	struct it_nvme *n = it_nvme_new(&o);
	struct it_event evs[] = {
		NS(10000, 0x71, IT_NVME_READ, 1, 1, 0, 7, K4),
		NS(10000, 0x72, IT_NVME_READ, 1, 2, 8, 7, K4),
		NS(10500, 0x73, IT_NVME_READ, 2, 3, 16, 7, K4),
		NC(11500, 0x71, IT_NVME_READ, 1, 1, K4),
		NC(11500, 0x72, IT_NVME_READ, 1, 2, K4),
		NC(12500, 0x73, IT_NVME_READ, 2, 3, K4),
	};

	if (!ASSERT_NOT_NULL(n, "new"))
		return;
	for (size_t i = 0; i < N(evs); i++)
		it_nvme_feed(n, &evs[i]);
	it_nvme_finish(n, 0);
	const struct it_nvme_results *r = it_nvme_results(n);
	ASSERT_EQ(r->ntimeline, 3, "3 intervals");
	if (ASSERT_EQ(r->nqueues, 2, "two queues") && ASSERT_EQ(r->queues[0].nqd_time, 3, "aligned") &&
	    ASSERT_EQ(r->queues[1].nqd_time, 3, "aligned")) {
		const struct it_nvme_qd_interval *q1 = r->queues[0].qd_time, *q2 = r->queues[1].qd_time;
		ASSERT_NEAR(q1[0].qd_ns, 2000, 1e-6, "q1 interval 0: 2 x 1000 ns");
		ASSERT_NEAR(q1[1].qd_ns, 1000, 1e-6, "q1 interval 1: 2 x 500 ns");
		ASSERT_NEAR(q1[2].qd_ns, 0, 1e-6, "q1 interval 2: idle");
		ASSERT_EQ(q1[0].qd_max, 2, "q1 max");
		ASSERT_NEAR(q2[0].qd_ns, 500, 1e-6, "q2 interval 0");
		ASSERT_NEAR(q2[1].qd_ns, 1000, 1e-6, "q2 interval 1");
		ASSERT_NEAR(q2[2].qd_ns, 500, 1e-6, "q2 interval 2");
		ASSERT_EQ(q2[0].qd_max, 1, "q2 max");
		ASSERT_NEAR(q1[0].qd_ns + q2[0].qd_ns, r->timeline[0].qd_ns, 1e-6,
			    "queues add up to the all-queue depth");
	}
	it_nvme_free(n);
}

static int widest_line(const char *s)
{
	int best = 0, cur = 0;

	for (; *s; s++) {
		cur = *s == '\n' ? 0 : cur + 1;
		best = cur > best ? cur : best;
	}
	return best;
}

TEST(nvme_report_sq_backlog_and_queue_time)
{
	/* one read per second for 20 s on queue 1, each with a CQE sample:
	 * the depth-over-time view merges intervals to stay in 100 columns */
	struct it_event evs[128];
	size_t k = 0;
	for (uint64_t i = 0; i < 20; i++) {
		uint64_t t = 1000000000ull * i + 1000, rq = 0x1000 + i;
		evs[k++] = Q(t, 0xb000 + i, DEV_N, i * 8, K4, IT_OP_READ);
		evs[k++] = NS(t + 100, rq, IT_NVME_READ, 1, (uint16_t)i, i, 7, K4);
		evs[k++] = D(t + 200, rq, 0xb000 + i, DEV_N, i * 8, K4, IT_OP_READ);
		evs[k++] = NQ(t + 5000, rq, 1, (uint16_t)i, (uint16_t)(i + 2), 64);
		evs[k++] = NC(t + 5100, rq, IT_NVME_READ, 1, (uint16_t)i, K4);
	}
	for (uint64_t i = 0; i < 20; i++)
		evs[k++] = C(1000000000ull * i + 7000, 0x1000 + i, DEV_N, K4);
	/* completions after their own second's events: sort by time */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && evs[j].ts_ns < evs[j - 1].ts_ns; j--) {
			struct it_event x = evs[j];
			evs[j] = evs[j - 1];
			evs[j - 1] = x;
		}
	struct it_analyzer *a = run(evs, k, NULL);
	struct it_report_input in = { .a = a, .r = it_analyzer_results(a) };
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	it_report_text(f, &in);
	fclose(f);
	ASSERT_LE(widest_line(out), 100, "text fits 100 columns");
	ASSERT_TRUE(strstr(out, "backlog avg") != NULL, "SQ backlog columns");
	ASSERT_TRUE(strstr(out, "    64        2.00      2") != NULL, "sq size 64, backlog avg 2, max 2");
	ASSERT_TRUE(strstr(out, "a column is 3 s") != NULL, "20 intervals in 7 columns of 3 s");
	ASSERT_TRUE(strstr(out, "D2H") && strstr(out, "H2N"), "CQE stages");
	free(out);
	f = open_memstream(&out, &len);
	it_report_json(f, &in, false);
	fclose(f);
	ASSERT_TRUE(strstr(out, "\"sq_events\":20") != NULL, "sq_events");
	ASSERT_TRUE(strstr(out, "\"sq_backlog\":{\"samples\":20,\"invalid\":0,\"sq_size\":64,"
			    "\"avg\":2.0,\"max\":2,\"by_depth\":{\"2\":20}}") != NULL, "sq_backlog JSON");
	ASSERT_TRUE(strstr(out, "\"qd_over_time\":{\"qd_avg\":[") != NULL, "qd_over_time JSON");
	free(out);
	it_analyzer_free(a);
}

TEST(nvme_admin_queue_named_for_its_controller)
{
	/* a fabric controller's keep-alive (admin opcode 0x18 on qid 0) goes
	 * through the block layer on the admin queue, which has no disk:
	 * device 0:0. The report names it for its controller (nvme3 admin)
	 * and says it is no disk; a read on nvme3n1 keeps its own name. */
	struct it_event ka_s = NS(1500, 0x81, 0x18, 0, 0x1010, 0, 0, 0);
	struct it_event ka_n = NC(9000, 0x81, 0x18, 0, 0x1010, 0);
	struct it_event rd_s = NS(2500, 0x71, IT_NVME_READ, 1, 0x3005, 100, 7, K4);
	struct it_event rd_n = NC(8000, 0x71, IT_NVME_READ, 1, 0x3005, K4);
	ka_s.dev = ka_n.dev = 0;
	ka_s.nvme.ctrl = ka_n.nvme.ctrl = rd_s.nvme.ctrl = rd_n.nvme.ctrl = 3;
	struct it_event evs[] = {
		TASK(500, 100, 100, "kworker"),
		I(1000, 0x81, 0, 0, 0, 0, IT_OP_DRV_IN),
		ka_s,
		D(2000, 0x81, 0, 0, 0, 0, IT_OP_DRV_IN),
		Q(2100, 0xb1, DEV_N, 800, K4, IT_OP_READ),
		rd_s,
		D(3000, 0x71, 0xb1, DEV_N, 800, K4, IT_OP_READ),
		rd_n,
		C(8500, 0x71, DEV_N, K4),
		ka_n,
		C(9500, 0x81, 0, 0),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);
	struct it_report_input in = { .a = a, .r = it_analyzer_results(a) };
	char name[48], *out = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_STREQ(it_report_dev_name(&in, 0, name, sizeof(name)), "nvme3 admin", "0:0 named");
	ASSERT_STREQ(it_report_dev_name(&in, DEV_N, name, sizeof(name)), "259:0",
		     "a disk not in the table keeps major:minor");
	f = open_memstream(&out, &len);
	it_report_text(f, &in);
	fclose(f);
	ASSERT_TRUE(strstr(out, "Device nvme3 admin (0:0): 1 I/Os") != NULL, "its device section");
	ASSERT_TRUE(strstr(out, "(no disk: requests on NVMe admin queues") != NULL, "said so");
	ASSERT_LE(widest_line(out), 100, "text fits 100 columns");
	free(out);
	it_analyzer_free(a);

	/* without NVMe admin commands, 0:0 stays 0:0 */
	struct it_event plain[] = { I(1000, 0x81, 0, 0, 0, 0, IT_OP_DRV_IN),
				    D(2000, 0x81, 0, 0, 0, 0, IT_OP_DRV_IN), C(3000, 0x81, 0, 0) };
	a = run(plain, N(plain), NULL);
	in = (struct it_report_input){ .a = a, .r = it_analyzer_results(a) };
	ASSERT_STREQ(it_report_dev_name(&in, 0, name, sizeof(name)), "0:0", "no admin command");
	it_analyzer_free(a);
}

TEST(zones_counts)
{
	struct it_event evs[] = {
		ZINFO(DEV_N, 0, 0, 1024), ZINFO(DEV_N, 1, 1024, 1024), ZINFO(DEV_N, 2, 2048, 1024),
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

/* The CSV exporter through the registry, as `iotrail export` runs it. */
TEST(export_csv_exporter)
{
	const struct it_exporter *x = it_exporter_find("csv");
	struct it_event evs[] = {
		TASK(500, 100, 100, "fio"),
		NS(1000, 0x71, IT_NVME_READ, 1, 0x3005, 100, 7, K4),
		NC(9000, 0x71, IT_NVME_READ, 1, 0x3005, K4),
	};
	struct it_host_rec h = { .start_monotonic_ns = 1 };
	struct it_device_rec d = { .dev = DEV_N, .logical_block_size = 512 };
	struct it_pass_info info = { .host = &h, .devs = &d, .ndevs = 1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ASSERT_TRUE(it_exporter_find("xml") == NULL, "unknown format");
	if (!ASSERT_NOT_NULL(x, "csv is registered") || !f)
		return;
	strcpy(d.name, "nvme0n1");
	void *self = x->open(f, &info);
	ASSERT_NOT_NULL(self, "open");
	ASSERT_EQ(x->feed(self, IT_CHUNK_EVENTS, evs, sizeof(evs), N(evs)), 0, "feed");
	ASSERT_EQ(x->finish(self), 1, "one command");
	x->free(self);
	fclose(f);
	ASSERT_TRUE(!strncmp(buf, "start_time_ns,end_time_ns,latency_ns,", 37), "header first");
	const char *row = strchr(buf, '\n');
	ASSERT_STREQ(row ? row + 1 : "", "1000,9000,8000,fio,100,nvme0n1,1,100,4096,8,2,read,0,12293,5,1,"
		     "0,0,1,100,0,0\n", "the row");
	free(buf);
}

/* More queues than IT_NVME_QUEUES_MAX (a damaged or forged trace): refused
 * with a reason in words, not a quadratic scan and an out-of-memory
 * death. */
TEST(nvme_queues_beyond_max_refused)
{
	struct it_nvme_opts o = { .start_ns = 10000, .interval_ns = 1000 };
	struct it_nvme *n = it_nvme_new(&o);
	int rc = 0;

	if (!ASSERT_NOT_NULL(n, "new"))
		return;
	ASSERT_TRUE(it_nvme_why(n) == NULL, "no reason before");
	for (uint32_t q = 0; q <= IT_NVME_QUEUES_MAX && !rc; q++) {
		struct it_event e = NS(10000 + q, 0x100000 + q, IT_NVME_READ, (uint16_t)(q + 1), 1, 0, 7,
				       K4);

		rc = it_nvme_feed(n, &e);
	}
	ASSERT_TRUE(rc != 0, "the queue past the limit fails the feed");
	it_nvme_finish(n, 0);
	if (ASSERT_NOT_NULL(it_nvme_results(n), "results"))
		ASSERT_EQ(it_nvme_results(n)->nqueues, IT_NVME_QUEUES_MAX, "the queues up to the limit");
	const char *why = it_nvme_why(n);
	if (ASSERT_NOT_NULL(why, "a reason"))
		ASSERT_NOT_NULL(strstr(why, "more than 16384 NVMe queues"), "names the limit");
	it_nvme_free(n);
}

/* 1024 queues, each holding one command for 10,000 intervals: their depth
 * timelines share IT_NVME_QUEUE_TIMELINES intervals (4096 each here), so
 * the intervals get four times longer, for every timeline alike, and keep
 * every command and the whole depth integral. */
TEST(nvme_queue_timelines_bounded)
{
	struct it_nvme_opts o = { .start_ns = 10000, .interval_ns = 1000 };
	struct it_nvme *n = it_nvme_new(&o);
	const uint32_t nq = 1024;
	uint64_t total = 0, commands = 0;
	double qd_ns = 0;

	if (!ASSERT_NOT_NULL(n, "new"))
		return;
	for (uint32_t q = 0; q < nq; q++) {
		struct it_event e = NS(10000, 0x100000 + q, IT_NVME_READ, (uint16_t)(q + 1), 1, 0, 7, K4);

		it_nvme_feed(n, &e);
	}
	for (uint32_t q = 0; q < nq; q++) {
		struct it_event e = NC(10000 + 10000 * 1000, 0x100000 + q, IT_NVME_READ,
				       (uint16_t)(q + 1), 1, K4);

		it_nvme_feed(n, &e);
	}
	it_nvme_finish(n, 0);
	const struct it_nvme_results *r = it_nvme_results(n);

	ASSERT_EQ(r->nqueues, nq, "every queue");
	ASSERT_EQ(r->commands, nq, "every command");
	ASSERT_EQ(r->interval_ns, 4000, "intervals four times longer");
	ASSERT_EQ(r->ntimeline, 2501, "the all-queue timeline over the whole trace");
	for (size_t k = 0; k < r->ntimeline; k++)
		commands += r->timeline[k].commands;
	ASSERT_EQ(commands, nq, "every command in the timeline");
	for (size_t i = 0; i < r->nqueues; i++) {
		ASSERT_EQ(r->queues[i].nqd_time, r->ntimeline, "aligned with the timeline");
		total += r->queues[i].nqd_time;
		for (size_t k = 0; k < r->queues[i].nqd_time; k++)
			qd_ns += r->queues[i].qd_time[k].qd_ns;
	}
	ASSERT_LE(total, IT_NVME_QUEUE_TIMELINES, "within their budget");
	/* each queue held one command for 10 ms */
	ASSERT_NEAR(qd_ns, (double)nq * 10000 * 1000, 1.0, "depth integral whole");
	it_nvme_free(n);
}

/* One queue, commands completed at 0.5 s and 40,000.5 s (11 h): the
 * timeline's interval gets longer (4 s) instead of the second one counting
 * in the 16384th interval, as it did until 2026-11-25. */
TEST(nvme_long_trace_timeline_coarsened)
{
	const uint64_t s = 1000000000ull;
	struct it_nvme_opts o = { .start_ns = s };
	struct it_nvme *n = it_nvme_new(&o);
	struct it_event evs[] = {
		NS(s, 0x71, IT_NVME_READ, 1, 1, 0, 7, K4),
		NC(s + s / 2, 0x71, IT_NVME_READ, 1, 1, K4),
		NS(s + 40000 * s, 0x72, IT_NVME_WRITE, 1, 2, 8, 7, K4),
		NC(s + 40000 * s + s / 2, 0x72, IT_NVME_WRITE, 1, 2, K4),
	};

	if (!ASSERT_NOT_NULL(n, "new"))
		return;
	for (size_t i = 0; i < N(evs); i++)
		it_nvme_feed(n, &evs[i]);
	it_nvme_finish(n, 0);
	const struct it_nvme_results *r = it_nvme_results(n);

	ASSERT_EQ(r->interval_ns, 4 * s, "4 s intervals");
	if (ASSERT_EQ(r->ntimeline, 10001, "the whole trace, 40,000.5 s") &&
	    ASSERT_EQ(r->queues[0].nqd_time, 10001, "the queue's aligned")) {
		ASSERT_EQ(r->timeline[0].commands, 1, "the first command in interval 0");
		ASSERT_EQ(r->timeline[10000].commands, 1, "the second in interval 10000");
		ASSERT_EQ(r->timeline[10000].write_bytes, K4, "a write");
		ASSERT_NEAR(r->queues[0].qd_time[10000].qd_ns, s / 2, 1.0, "held 0.5 s");
	}
	it_nvme_free(n);
}
