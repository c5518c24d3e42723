/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Group-by on a stream mixing ops, devices, sizes and processes. */
#include "harness.h"
#include "synth.h"

/*
 * fio (pid 200) on DEV_A: reads of 4K with Q2C 1000, 2008, 3000 ns and a
 * write of 8K (5000 ns). dd (pid 300) on DEV_B: writes of 128K (10000,
 * 20000 ns) and a read of 4K (700 ns).
 */
static size_t mixed_stream(struct it_event *evs)
{
	static const struct {
		uint32_t pid, dev, bytes;
		uint8_t op;
		uint64_t lat;
	} io[] = {
		{ 200, DEV_A, K4, IT_OP_READ, 1000 },     { 200, DEV_A, K4, IT_OP_READ, 2008 },
		{ 200, DEV_A, 2 * K4, IT_OP_WRITE, 5000 }, { 200, DEV_A, K4, IT_OP_READ, 3000 },
		{ 300, DEV_B, 32 * K4, IT_OP_WRITE, 10000 }, { 300, DEV_B, K4, IT_OP_READ, 700 },
		{ 300, DEV_B, 32 * K4, IT_OP_WRITE, 20000 },
	};
	size_t n = 0;

	evs[n++] = TASK(1, 200, 200, "fio");
	evs[n++] = TASK(2, 300, 300, "dd");
	for (size_t i = 0; i < N(io); i++) {
		uint64_t t0 = 100000 * (i + 1), bio = 0xb0 + i, rq = 0x70 + i;
		uint64_t sector = 1000 * i;
		evs[n++] = ev_tid(Q(t0, bio, io[i].dev, sector, io[i].bytes, io[i].op), io[i].pid, io[i].pid);
		evs[n++] = D(t0 + 10, rq, bio, io[i].dev, sector, io[i].bytes, io[i].op);
		evs[n++] = C(t0 + io[i].lat, rq, io[i].dev, io[i].bytes);
	}
	return n;
}

static struct it_analyzer *grouped(const char *keys)
{
	struct it_event evs[32];
	size_t n = mixed_stream(evs);
	struct it_analyzer_opts o = { 0 };
	char err[128];

	if (it_parse_group_keys(keys, &o, err, sizeof(err)))
		return NULL;
	return run_opts(evs, n, o, NULL, 0);
}

TEST(group_by_op_dev)
{
	struct it_analyzer *a = grouped("op,dev");
	const struct it_results *r = it_analyzer_results(a);

	if (!ASSERT_EQ(r->ngroups, 4, "groups"))
		goto out;
	/* sorted by op (read < write), then dev */
	ASSERT_EQ(r->groups[0].key.op, IT_OP_READ, "g0 op");
	ASSERT_EQ(r->groups[0].key.dev, DEV_A, "g0 dev");
	ASSERT_EQ(r->groups[0].count, 3, "g0 count");
	ASSERT_EQ(r->groups[0].bytes, 3 * K4, "g0 bytes");
	ASSERT_EQ(r->groups[0].stage[IT_STAGE_Q2C].min, 1000, "g0 min");
	ASSERT_EQ(r->groups[0].stage[IT_STAGE_Q2C].max, 3000, "g0 max");
	ASSERT_EQ(it_hist_avg(&r->groups[0].stage[IT_STAGE_Q2C]), 2003, "g0 avg (6008/3)");
	ASSERT_EQ(it_hist_percentile(&r->groups[0].stage[IT_STAGE_Q2C], 50), 2008, "g0 p50");
	ASSERT_EQ(r->groups[1].key.op, IT_OP_READ, "g1 op");
	ASSERT_EQ(r->groups[1].key.dev, DEV_B, "g1 dev");
	ASSERT_EQ(r->groups[1].count, 1, "g1 count");
	ASSERT_EQ(r->groups[2].key.op, IT_OP_WRITE, "g2 op");
	ASSERT_EQ(r->groups[2].key.dev, DEV_A, "g2 dev");
	ASSERT_EQ(r->groups[2].bytes, 2 * K4, "g2 bytes");
	ASSERT_EQ(r->groups[3].key.dev, DEV_B, "g3 dev");
	ASSERT_EQ(r->groups[3].count, 2, "g3 count");
	ASSERT_EQ(r->groups[3].stage[IT_STAGE_Q2C].sum, 30000, "g3 latency sum");
	ASSERT_EQ(r->groups[0].key.pid, 0, "pid not a key: zero");
out:
	it_analyzer_free(a);
}

TEST(group_by_comm)
{
	struct it_analyzer *a = grouped("comm");
	const struct it_results *r = it_analyzer_results(a);

	if (ASSERT_EQ(r->ngroups, 2, "groups")) {
		ASSERT_STREQ(it_analyzer_comm(a, r->groups[0].key.comm), "dd", "sorted by name");
		ASSERT_EQ(r->groups[0].count, 3, "dd count");
		ASSERT_EQ(r->groups[0].bytes, 65 * K4, "dd bytes");
		ASSERT_STREQ(it_analyzer_comm(a, r->groups[1].key.comm), "fio", "fio");
		ASSERT_EQ(r->groups[1].count, 4, "fio count");
		ASSERT_EQ(r->groups[1].stage[IT_STAGE_Q2C].max, 5000, "fio max");
	}
	it_analyzer_free(a);
}

TEST(group_by_size)
{
	struct it_analyzer *a = grouped("size");
	const struct it_results *r = it_analyzer_results(a);

	if (ASSERT_EQ(r->ngroups, 3, "groups")) {
		ASSERT_EQ(it_size_class_lo(r->groups[0].key.size_class), 4096, "4K class");
		ASSERT_EQ(r->groups[0].count, 4, "4K count");
		ASSERT_EQ(it_size_class_lo(r->groups[1].key.size_class), 8192, "8K class");
		ASSERT_EQ(r->groups[1].count, 1, "8K count");
		ASSERT_EQ(it_size_class_lo(r->groups[2].key.size_class), 131072, "128K class");
		ASSERT_EQ(r->groups[2].count, 2, "128K count");
	}
	it_analyzer_free(a);
}

TEST(group_by_pid_op_keeps_key_order)
{
	struct it_analyzer *a = grouped("pid,op");
	const struct it_results *r = it_analyzer_results(a);
	static const struct { uint32_t pid; uint8_t op; uint64_t count; } want[] = {
		{ 200, IT_OP_READ, 3 }, { 200, IT_OP_WRITE, 1 }, { 300, IT_OP_READ, 1 }, { 300, IT_OP_WRITE, 2 },
	};

	ASSERT_EQ(r->nkeys, 2, "keys");
	ASSERT_EQ(r->keys[0], IT_KEY_PID, "first key");
	if (ASSERT_EQ(r->ngroups, 4, "groups")) {
		for (size_t i = 0; i < N(want); i++) {
			ASSERT_EQ(r->groups[i].key.pid, want[i].pid, "pid");
			ASSERT_EQ(r->groups[i].key.op, want[i].op, "op");
			ASSERT_EQ(r->groups[i].count, want[i].count, "count");
			ASSERT_EQ(r->groups[i].key.dev, 0, "dev not a key");
		}
	}
	it_analyzer_free(a);
}

TEST(group_by_none)
{
	struct it_analyzer *a = grouped("none");
	const struct it_results *r = it_analyzer_results(a);

	if (ASSERT_EQ(r->ngroups, 1, "one group")) {
		ASSERT_EQ(r->groups[0].count, 7, "all I/Os");
		ASSERT_EQ(r->groups[0].stage[IT_STAGE_Q2C].min, 700, "min");
		ASSERT_EQ(r->groups[0].stage[IT_STAGE_Q2C].max, 20000, "max");
	}
	ASSERT_EQ(r->stats.ios, 7, "ios");
	it_analyzer_free(a);
}

TEST(group_key_parsing)
{
	struct it_analyzer_opts o = { 0 };
	char err[128] = "";

	ASSERT_EQ(it_parse_group_keys("dev,op", &o, err, sizeof(err)), 0, "dev,op");
	ASSERT_EQ(o.nkeys, 2, "nkeys");
	ASSERT_EQ(o.keys[0], IT_KEY_DEV, "order kept");
	ASSERT_EQ(it_parse_group_keys("op,size,dev,comm,pid,role", &o, err, sizeof(err)), 0, "all keys");
	ASSERT_EQ(o.nkeys, 6, "six keys");
	ASSERT_EQ(it_parse_group_keys("op,foo", &o, err, sizeof(err)), -1, "unknown key");
	ASSERT_TRUE(strstr(err, "'foo'") != NULL, "the message names the key");
	ASSERT_EQ(it_parse_group_keys("op,op", &o, err, sizeof(err)), -1, "duplicate");
	ASSERT_EQ(it_parse_group_keys("", &o, err, sizeof(err)), -1, "empty");
	ASSERT_EQ(it_parse_group_keys("op,", &o, err, sizeof(err)), -1, "trailing comma");
	ASSERT_EQ(it_parse_group_keys("Op", &o, err, sizeof(err)), -1, "keys are lower case");
}

/*
 * Roles: PostgreSQL's checkpointer (pid 400), walwriter (401) and two
 * backends (402, 403) of one title, all of comm "postgres", and a kworker
 * (500) without a title. The titles come after the I/O, as the recorder
 * writes them; the role key folds the two backends into one group.
 */
static struct it_analyzer *roles_run(const char *keys)
{
	static const struct { uint32_t pid; uint8_t op; uint64_t lat; } io[] = {
		{ 400, IT_OP_WRITE, 1000 }, { 401, IT_OP_WRITE, 2000 }, { 402, IT_OP_READ, 3000 },
		{ 403, IT_OP_READ, 5000 },  { 403, IT_OP_WRITE, 7000 }, { 500, IT_OP_WRITE, 9000 },
		{ 400, IT_OP_WRITE, 1100 },
	};
	struct it_event evs[64];
	struct it_analyzer_opts o = { 0 };
	struct it_analyzer *a;
	char err[128];
	size_t n = 0;

	for (uint32_t p = 400; p <= 403; p++)
		evs[n++] = TASK(1, p, p, "postgres");
	evs[n++] = TASK(1, 500, 500, "kworker/u8:2");
	for (size_t i = 0; i < N(io); i++) {
		uint64_t t0 = 100000 * (i + 1), bio = 0xb0 + i, rq = 0x70 + i;

		evs[n++] = ev_tid(Q(t0, bio, DEV_A, 1000 * i, K4, io[i].op), io[i].pid, io[i].pid);
		evs[n++] = D(t0 + 10, rq, bio, DEV_A, 1000 * i, K4, io[i].op);
		evs[n++] = C(t0 + io[i].lat, rq, DEV_A, K4);
	}
	if (it_parse_group_keys(keys, &o, err, sizeof(err)) || !(a = it_analyzer_new(&o)))
		return NULL;
	it_analyzer_feed(a, evs, n);
	it_analyzer_title(a, 400, "postgres: checkpointer", 22);
	it_analyzer_title(a, 401, "postgres: walwriter", 19);
	it_analyzer_title(a, 402, "postgres: db [local] idle", 25);
	it_analyzer_title(a, 403, "postgres: db [local] idle", 25);
	it_analyzer_title(a, 403, "postgres: a later title", 23); /* the first one counts */
	it_analyzer_finish(a, 0);
	return a;
}

TEST(group_by_role)
{
	struct it_analyzer *a = roles_run("role");
	const struct it_results *r = a ? it_analyzer_results(a) : NULL;
	static const struct { const char *role; uint64_t count, max; } want[] = {
		{ "[kworker/u8:2]", 1, 9000 }, { "postgres: checkpointer", 2, 1100 },
		{ "postgres: db [local] idle", 3, 7000 }, { "postgres: walwriter", 1, 2000 },
	};

	if (!ASSERT_TRUE(r != NULL, "analysed") || !ASSERT_EQ(r->ngroups, N(want), "groups"))
		goto out;
	for (size_t i = 0; i < N(want); i++) {
		ASSERT_STREQ(it_analyzer_role(a, r->groups[i].key.role), want[i].role, "role, sorted");
		ASSERT_EQ(r->groups[i].count, want[i].count, "I/Os of the role");
		ASSERT_EQ(r->groups[i].stage[IT_STAGE_Q2C].max, want[i].max, "latency merged");
		ASSERT_EQ(r->groups[i].key.pid, 0, "pid not a key: zero");
	}
	ASSERT_EQ(r->groups[2].stage[IT_STAGE_Q2C].min, 3000, "folded groups: min of both");
	ASSERT_EQ(r->groups[2].stage[IT_STAGE_Q2C].count, 3, "folded groups: every I/O");
out:
	it_analyzer_free(a);
}

TEST(group_by_role_op)
{
	struct it_analyzer *a = roles_run("role,op");
	const struct it_results *r = a ? it_analyzer_results(a) : NULL;

	if (!ASSERT_TRUE(r != NULL, "analysed") || !ASSERT_EQ(r->ngroups, 5, "groups"))
		goto out;
	/* the backends' role: its reads (402, 403) then its write */
	ASSERT_STREQ(it_analyzer_role(a, r->groups[2].key.role), "postgres: db [local] idle", "g2");
	ASSERT_EQ(r->groups[2].key.op, IT_OP_READ, "g2 op");
	ASSERT_EQ(r->groups[2].count, 2, "g2 reads of both backends");
	ASSERT_EQ(r->groups[3].key.op, IT_OP_WRITE, "g3 op");
	ASSERT_EQ(r->groups[3].count, 1, "g3 write");
	ASSERT_EQ(r->stats.ios, 7, "every I/O in some group");
out:
	it_analyzer_free(a);
}

TEST(group_by_role_pid)
{
	struct it_analyzer *a = roles_run("role,pid");
	const struct it_results *r = a ? it_analyzer_results(a) : NULL;

	/* with pid a key too, the backends stay apart */
	if (ASSERT_TRUE(r != NULL, "analysed") && ASSERT_EQ(r->ngroups, 5, "groups")) {
		ASSERT_EQ(r->groups[2].key.pid, 402, "g2 pid");
		ASSERT_EQ(r->groups[3].key.pid, 403, "g3 pid");
		ASSERT_EQ(r->groups[3].count, 2, "g3 count");
	}
	it_analyzer_free(a);
}
