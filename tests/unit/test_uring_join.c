// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The recorder's join of io_uring submissions and completions
 * (src/layers/syscall/uring_join.c) on synthetic ring records: fields
 * from each half, completions without a submission, --path drops, a
 * reused request address, a long interleaved stream against a plain
 * model (the table's deletions must keep every other entry findable),
 * and the bound on requests whose completion never comes.
 */
#include "harness.h"
#include "layers/syscall/uring_join.h"

#include <stdlib.h>

static struct it_sys_uring_submit submit(uint64_t req, uint64_t ts, uint64_t off)
{
	struct it_sys_uring_submit s = {
		.call = { .rec = IT_SREC_URING_SUBMIT, .call = IT_SYS_URING_READ, .mode = 22,
			  .sflags = IT_SYSF_URING, .pid = 7, .tid = 8, .ppid = 1, .fd = 3,
			  .ts_enter = ts, .offset = off, .count = 4096, .cgroup = 99,
			  .aux = req ^ 0xabc },
		.req = req,
	};
	return s;
}

static struct it_sys_uring_done done(uint64_t req, uint64_t ts, int32_t res)
{
	struct it_sys_uring_done d = { .rec = IT_SREC_URING_DONE, .ftype = IT_FT_BLK, .keep = 1,
				       .dev = 0x700001, .cpu = 1, .res = res, .req = req, .ts = ts,
				       .ino = 55, .tag_ts = 5 };
	return d;
}

TEST(uring_join_fields)
{
	struct it_uring_join j = { 0 };
	struct it_sys_uring_submit a = submit(0xffff888000001000ull, 100, 4096),
				   b = submit(0xffff888000001100ull, 110, 8192);
	struct it_sys_uring_done db = done(b.req, 150, 4096), da = done(a.req, 170, -5);
	struct it_sys_event e;

	ASSERT_EQ(it_uring_join_submit(&j, &a), 0, "submit a");
	ASSERT_EQ(it_uring_join_submit(&j, &b), 0, "submit b");
	ASSERT_EQ(j.len, 2, "waiting");
	/* completions come in any order */
	ASSERT_EQ(it_uring_join_done(&j, &db, &e), 1, "b joined");
	ASSERT_EQ(e.rec, IT_SREC_CALL, "a call record");
	ASSERT_U64_EQ(e.offset, 8192, "b's offset, from its submission");
	ASSERT_U64_EQ(e.ts_enter, 110, "ts_enter from the submission");
	ASSERT_U64_EQ(e.ts_exit, 150, "ts_exit from the completion");
	ASSERT_EQ(e.ret, 4096, "ret");
	ASSERT_EQ(it_uring_join_done(&j, &da, &e), 1, "a joined");
	ASSERT_EQ(e.ret, -5, "a negative result");
	ASSERT_EQ(e.pid, 7, "pid");
	ASSERT_EQ(e.tid, 8, "tid");
	ASSERT_EQ(e.fd, 3, "fd");
	ASSERT_EQ(e.mode, 22, "opcode");
	ASSERT_EQ(e.call, IT_SYS_URING_READ, "call");
	ASSERT_EQ(e.sflags, IT_SYSF_URING, "flags");
	ASSERT_U64_EQ(e.aux, a.req ^ 0xabc, "user_data");
	ASSERT_U64_EQ(e.cgroup, 99, "cgroup");
	ASSERT_EQ(e.cpu, 1, "cpu at completion");
	ASSERT_EQ(e.dev, 0x700001, "tag dev");
	ASSERT_U64_EQ(e.ino, 55, "tag ino");
	ASSERT_U64_EQ(e.tag_ts, 5, "tag ts");
	ASSERT_EQ(e.ftype, IT_FT_BLK, "file type");
	ASSERT_EQ(j.len, 0, "none waiting");
	it_uring_join_free(&j);
}

TEST(uring_join_unmatched_and_filtered)
{
	struct it_uring_join j = { 0 };
	struct it_sys_uring_submit a = submit(0x1000, 100, 0);
	struct it_sys_uring_done d = done(0x1000, 120, 4096), other = done(0x2000, 130, 4096);
	struct it_sys_event e;

	/* a completion before any submission (a request begun before the
	 * recording): nothing to write */
	ASSERT_EQ(it_uring_join_done(&j, &other, &e), 0, "no submission");
	ASSERT_EQ(it_uring_join_submit(&j, &a), 0, "submit");
	ASSERT_EQ(it_uring_join_done(&j, &other, &e), 0, "another request's completion");
	ASSERT_EQ(j.unmatched, 2, "unmatched counted");
	d.keep = 0;
	ASSERT_EQ(it_uring_join_done(&j, &d, &e), 0, "outside --path: dropped");
	ASSERT_EQ(j.filtered, 1, "filtered counted");
	ASSERT_EQ(j.len, 0, "the dropped request is not kept");
	d.keep = 1;
	ASSERT_EQ(it_uring_join_done(&j, &d, &e), 0, "its completion again: no submission");
	it_uring_join_free(&j);
}

TEST(uring_join_reused_address)
{
	struct it_uring_join j = { 0 };
	struct it_sys_uring_submit old = submit(0x1000, 100, 111), now = submit(0x1000, 200, 222);
	struct it_sys_uring_done d = done(0x1000, 250, 1);
	struct it_sys_event e;

	/* the first one's completion was lost (ring full): the kernel reuses
	 * the address, and the later submission is the one that completes */
	it_uring_join_submit(&j, &old);
	it_uring_join_submit(&j, &now);
	ASSERT_EQ(j.len, 1, "one request per address");
	ASSERT_EQ(it_uring_join_done(&j, &d, &e), 1, "joined");
	ASSERT_U64_EQ(e.offset, 222, "the later submission");
	ASSERT_U64_EQ(e.ts_enter, 200, "its ts_enter");
	it_uring_join_free(&j);
}

/* A long stream of submissions and out-of-order completions at
 * slab-like addresses (many in one probe run), against a plain array. */
TEST(uring_join_stream_model)
{
	enum { NREQ = 3000, STEPS = 200000 };
	struct it_uring_join j = { 0 };
	static uint64_t model_ts[NREQ]; /* 0: not in flight */
	uint64_t joined = 0, want = 0, bad = 0, ts = 1;
	unsigned int seed = 12345;

	memset(model_ts, 0, sizeof(model_ts));
	for (int step = 0; step < STEPS; step++) {
		int k = rand_r(&seed) % NREQ;
		uint64_t req = 0xffff888100000000ull + (uint64_t)k * 256;
		struct it_sys_event e;

		if (!model_ts[k]) {
			struct it_sys_uring_submit s = submit(req, ts, (uint64_t)k);

			if (it_uring_join_submit(&j, &s))
				bad++;
			model_ts[k] = ts++;
		} else {
			struct it_sys_uring_done d = done(req, ts++, k);

			want++;
			if (it_uring_join_done(&j, &d, &e) == 1 && e.ts_enter == model_ts[k] &&
			    e.offset == (uint64_t)k && e.ret == k)
				joined++;
			model_ts[k] = 0;
		}
	}
	ASSERT_EQ(bad, 0, "submissions refused");
	ASSERT_U64_EQ(joined, want, "every completion joined with its own submission");
	ASSERT_GE(want, STEPS / 3, "the stream completed many requests");
	{
		uint32_t inflight = 0;

		for (int k = 0; k < NREQ; k++)
			inflight += model_ts[k] != 0;
		ASSERT_EQ(j.len, inflight, "waiting == in flight in the model");
	}
	ASSERT_EQ(j.unmatched, 0, "no completion lost its submission");
	ASSERT_EQ(j.evicted, 0, "nothing evicted below the bound");
	it_uring_join_free(&j);
}

/* Completions that never come (IOSQE_CQE_SKIP_SUCCESS, or lost): the
 * table stays bounded, the older requests go and are counted, the newer
 * still join. */
TEST(uring_join_bound)
{
	enum { N = 3 * IT_URING_JOIN_MAX };
	struct it_uring_join j = { 0 };
	struct it_sys_event e;
	struct it_sys_uring_done first = done(0x10000, 1, 0), last;

	for (uint64_t i = 0; i < N; i++) {
		struct it_sys_uring_submit s = submit(0x10000 + i * 64, 1000 + i, i);

		it_uring_join_submit(&j, &s);
		ASSERT_LE(j.len, IT_URING_JOIN_MAX, "bounded");
	}
	ASSERT_GE(j.evicted, N - IT_URING_JOIN_MAX, "evicted counted");
	ASSERT_EQ(j.evicted + j.len, N, "every submission waits or was evicted");
	last = done(0x10000 + (N - 1) * 64, 5000000, 7);
	ASSERT_EQ(it_uring_join_done(&j, &last, &e), 1, "the newest still joins");
	ASSERT_U64_EQ(e.offset, N - 1, "with its own submission");
	ASSERT_EQ(it_uring_join_done(&j, &first, &e), 0, "the oldest was evicted");
	it_uring_join_free(&j);
}
