/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The scope's pure parts: -p's PID lists (several PIDs, pidof's form) and
 * the descendants of the roots in a snapshot of the process table. */
#include <stdlib.h>

#include "harness.h"
#include "scope.h"

TEST(scope_pid_lists)
{
	pid_t *pids = NULL;
	size_t n = 0;
	char err[128];

	/* -p 12,13 -p 14 then pidof's words "15 16" and a repeat of 13 */
	ASSERT_EQ(it_scope_add_pids("12,13", &pids, &n, err, sizeof(err)), 0, "comma list");
	ASSERT_EQ(it_scope_add_pids("14", &pids, &n, err, sizeof(err)), 0, "single");
	ASSERT_EQ(it_scope_add_pids("15 16\n", &pids, &n, err, sizeof(err)), 0, "quoted pidof");
	ASSERT_EQ(it_scope_add_pids("13", &pids, &n, err, sizeof(err)), 0, "repeat");
	if (ASSERT_EQ(n, 5, "distinct pids")) {
		for (size_t i = 0; i < n; i++)
			ASSERT_EQ(pids[i], 12 + (pid_t)i, "pid in order");
	}
	ASSERT_EQ(it_scope_add_pids("17,x", &pids, &n, err, sizeof(err)), -1, "not a pid");
	ASSERT_EQ(it_scope_add_pids("0", &pids, &n, err, sizeof(err)), -1, "pid 0");
	ASSERT_EQ(it_scope_add_pids("-3", &pids, &n, err, sizeof(err)), -1, "negative");
	ASSERT_EQ(it_scope_add_pids("99999999999", &pids, &n, err, sizeof(err)), -1, "overflow");
	free(pids);

	/* which words after -p are more PIDs (the rest is COMMAND) */
	ASSERT_TRUE(it_scope_is_pid_list("13179"), "a pid");
	ASSERT_TRUE(it_scope_is_pid_list("13179 13180"), "pidof quoted");
	ASSERT_TRUE(it_scope_is_pid_list("1,2"), "comma list");
	ASSERT_TRUE(!it_scope_is_pid_list("--"), "the COMMAND separator");
	ASSERT_TRUE(!it_scope_is_pid_list("-d"), "an option");
	ASSERT_TRUE(!it_scope_is_pid_list("fio"), "a command");
	ASSERT_TRUE(!it_scope_is_pid_list(""), "empty");
	ASSERT_TRUE(!it_scope_is_pid_list(" , "), "no digit");
}

TEST(scope_descendants)
{
	/* 1 init; 100 postmaster -> 101, 102 (backends) -> 103 (a child of a
	 * backend, listed before its parent); 200 another server -> 201 */
	const struct it_proc procs[] = {
		{ 1, 0, "init" },        { 103, 102, "sh" },      { 100, 1, "postgres" },
		{ 101, 100, "postgres" }, { 102, 100, "postgres" }, { 200, 1, "other" },
		{ 201, 200, "other" },
	};
	size_t n = sizeof(procs) / sizeof(procs[0]);
	bool in[7] = { false };

	in[2] = true; /* -p 100 */
	ASSERT_EQ(it_scope_close_descendants(procs, n, in), 4, "100 and its three descendants");
	ASSERT_TRUE(in[1] && in[3] && in[4], "children and grandchild");
	ASSERT_TRUE(!in[0] && !in[5] && !in[6], "not the others");

	bool in2[7] = { false };
	in2[5] = in2[3] = true; /* -p 200,101 */
	ASSERT_EQ(it_scope_close_descendants(procs, n, in2), 3, "200, 201 and 101");
	ASSERT_TRUE(!in2[2] && !in2[4], "not 101's parent or sibling");

	bool none[7] = { false };
	ASSERT_EQ(it_scope_close_descendants(procs, n, none), 0, "no root, none in");

	ASSERT_TRUE(it_scope_comm_match("postgres", "postg"), "comm prefix");
	ASSERT_TRUE(!it_scope_comm_match("pg", "postgres"), "shorter comm");
}
