/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A profiling task's pure parts (src/task.c): the predicate as the kernel
 * evaluates it, sizes, durations, sampling, the trigger, the task file, and
 * one line naming the key for each kind of bad input. */
#include <string.h>

#include "harness.h"
#include "iotrail/event.h"
#include "task.h"

TEST(task_filter_predicate)
{
	struct it_filter f;
	char err[256];

	/* the example: 64K reads in, 4K reads and 8K writes out */
	ASSERT_EQ(it_filter_parse("op=read && size>=32k", &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_EQ(f.n, 1, "one clause");
	ASSERT_TRUE(it_filter_match(&f, IT_OP_READ, 65536, 0), "64K read in");
	ASSERT_TRUE(it_filter_match(&f, IT_OP_READ, 32768, 0), "32K read in (>=)");
	ASSERT_TRUE(!it_filter_match(&f, IT_OP_READ, 4096, 0), "4K read out");
	ASSERT_TRUE(!it_filter_match(&f, IT_OP_WRITE, 65536, 0), "64K write out");

	/* ranges, strict comparisons, op lists and !=, ||, devices */
	ASSERT_EQ(it_filter_parse("size=8k-64k", &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_TRUE(it_filter_match(&f, IT_OP_WRITE, 8192, 0) &&
		    it_filter_match(&f, IT_OP_WRITE, 65536, 0) &&
		    !it_filter_match(&f, IT_OP_WRITE, 65537, 0) &&
		    !it_filter_match(&f, IT_OP_WRITE, 4096, 0), "range inclusive");
	ASSERT_EQ(it_filter_parse("size>4k && size<8k", &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_TRUE(!it_filter_match(&f, IT_OP_READ, 4096, 0) &&
		    it_filter_match(&f, IT_OP_READ, 4097, 0) &&
		    !it_filter_match(&f, IT_OP_READ, 8192, 0), "strict bounds");
	ASSERT_EQ(it_filter_parse("op=read,flush", &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_TRUE(it_filter_match(&f, IT_OP_FLUSH, 0, 0) &&
		    !it_filter_match(&f, IT_OP_WRITE, 0, 0), "op list");
	ASSERT_EQ(it_filter_parse("op!=write", &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_TRUE(it_filter_match(&f, IT_OP_READ, 1, 0) &&
		    !it_filter_match(&f, IT_OP_WRITE, 1, 0), "op !=");
	ASSERT_EQ(it_filter_parse("op=write && size=8k || op=read && size>=32k || dev=7:1", &f,
				  NULL, err, sizeof(err)), 0, err);
	ASSERT_EQ(f.n, 3, "three clauses");
	ASSERT_TRUE(it_filter_match(&f, IT_OP_WRITE, 8192, 0), "first clause");
	ASSERT_TRUE(it_filter_match(&f, IT_OP_READ, 1 << 20, 0), "second clause");
	ASSERT_TRUE(it_filter_match(&f, IT_OP_DISCARD, 1, IT_MKDEV(7, 1)), "third clause");
	ASSERT_TRUE(!it_filter_match(&f, IT_OP_WRITE, 4096, IT_MKDEV(7, 2)), "none");
	ASSERT_EQ(it_filter_parse("op=read && op=write", &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_TRUE(!it_filter_match(&f, IT_OP_READ, 1, 0) && !it_filter_match(&f, IT_OP_WRITE, 1, 0),
		    "a contradiction rejects everything");

	/* process terms become the scope, not a clause */
	ASSERT_EQ(it_filter_parse("comm=fio && pid=12 && op=read", &f, NULL, err, sizeof(err)), 0,
		  err);
	ASSERT_STREQ(f.comm, "fio", "comm");
	ASSERT_EQ(f.npids, 1, "pid");
	ASSERT_EQ(f.n, 1, "the op clause");
	ASSERT_EQ(it_filter_parse("comm=fio", &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_EQ(f.n, 0, "process terms only: no I/O predicate");
}

TEST(task_filter_errors)
{
	static const struct { const char *text, *names; } bad[] = {
		{ "", "give terms" },
		{ "op=reed", "op is one of" },
		{ "size>=32q", "size>=32q" },
		{ "size=64k-8k", "LOW <= HIGH" },
		{ "color=red", "KEY is one of" },
		{ "op=read &&", "a term is missing" },
		{ "|| op=read", "a term is missing" },
		{ "op>read", "op takes = or !=" },
		{ "dev=sda", "MAJ:MIN" },
		{ "pid=0", "process id" },
		{ "comm=fio || op=read", "join them with && only" },
		{ "size<0", "no size is < 0" },
		{ "op=read || op=read || op=read || op=read || op=read", "at most 4" },
		{ "comm=abcdefghijklmnopq", "1 to 15" },
	};
	struct it_filter f;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ASSERT_EQ(it_filter_parse(bad[i].text, &f, NULL, err, sizeof(err)), -1, bad[i].text);
		ASSERT_TRUE(strstr(err, bad[i].names) != NULL, err);
		ASSERT_TRUE(!strchr(err, '\n'), "one line");
	}
}

TEST(task_values)
{
	uint64_t v;
	uint32_t n;
	struct it_trigger t;
	char err[256];

	ASSERT_EQ(it_size_parse("32k", &v, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(v, 32768, "32k");
	ASSERT_EQ(it_size_parse("1MiB", &v, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(v, 1 << 20, "1MiB");
	ASSERT_EQ(it_size_parse("-1", &v, err, sizeof(err)), -1, "negative size");
	ASSERT_EQ(it_duration_parse("30s", &v, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(v, 30000000000ull, "30s");
	ASSERT_EQ(it_duration_parse("5ms", &v, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(v, 5000000, "5ms");
	ASSERT_EQ(it_duration_parse("1.5s", &v, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(v, 1500000000ull, "1.5s");
	ASSERT_EQ(it_duration_parse("30", &v, err, sizeof(err)), -1, "no unit");
	ASSERT_EQ(it_duration_parse("0s", &v, err, sizeof(err)), -1, "zero");
	ASSERT_EQ(it_sample_parse("1/100", &n, err, sizeof(err)), 0, err);
	ASSERT_EQ(n, 100, "1/100");
	ASSERT_EQ(it_sample_parse("1/0", &n, err, sizeof(err)), -1, "1/0");
	ASSERT_EQ(it_sample_parse("2/10", &n, err, sizeof(err)), -1, "2/10");
	ASSERT_EQ(it_trigger_parse("q2c>5ms", &t, err, sizeof(err)), 0, err);
	ASSERT_TRUE(t.on && t.stage == IT_TRIG_Q2C && t.over_ns == 5000000, "q2c>5ms");
	ASSERT_EQ(it_trigger_parse("x2y>5ms", &t, err, sizeof(err)), -1, "unknown stage");
	ASSERT_EQ(it_trigger_parse("d2c>", &t, err, sizeof(err)), -1, "no threshold");
}

TEST(task_file)
{
	const char *text =
		"; 64K reads of fio only\n"
		"[workload]\n"
		"op = read\n"
		"size>= 32k\n"
		"comm = fio\n"
		"[profiler]\n"
		"mode = offline\n"
		"sample = 1/10\n"
		"duration = 30s\n"
		"trigger = q2c>5ms\n"
		"[report]\n"
		"group-by = op,size\n"
		"format = json\n";
	struct it_task t;
	struct it_filter f;
	char err[256];

	ASSERT_EQ(it_task_parse(text, &t, err, sizeof(err)), 0, err);
	ASSERT_STREQ(t.filter, "op=read && size>=32k && comm=fio", "workload terms joined");
	ASSERT_STREQ(t.sample, "1/10", "sample");
	ASSERT_STREQ(t.duration, "30s", "duration");
	ASSERT_STREQ(t.trigger, "q2c>5ms", "trigger");
	ASSERT_STREQ(t.group_by, "op,size", "group-by");
	ASSERT_STREQ(t.format, "json", "format");
	ASSERT_EQ(it_filter_parse(t.filter, &f, NULL, err, sizeof(err)), 0, err);
	ASSERT_TRUE(it_filter_match(&f, IT_OP_READ, 65536, 0) &&
		    !it_filter_match(&f, IT_OP_READ, 4096, 0), "the file's predicate");
}

TEST(task_file_errors)
{
	static const struct { const char *text, *names; } bad[] = {
		{ "[workload]\ncolour = red\n", "line 2: [workload] colour: unknown key" },
		{ "[profiler]\nsample = 1/0\n", "line 2: [profiler] sample: sample '1/0'" },
		{ "[profiler]\nmode = online\n", "[profiler] mode: 'online'" },
		{ "[profiler]\nflight = 30\n", "[profiler] flight: duration '30'" },
		{ "[profiler]\ntrigger = p99>5ms\n", "[profiler] trigger" },
		{ "[profiler]\nmemory = lots\n", "[profiler] memory" },
		{ "[report]\nformat = xml\n", "[report] format: 'xml'" },
		{ "[report]\nsort = 1\n", "[report] sort: unknown key" },
		{ "[stats]\nx = 1\n", "[stats]: unknown section" },
		{ "[workload]\nop read\n", "line 2: not KEY = VALUE" },
		{ "[workload]\nop = read\nsize =\n", "line 3: [workload] size: the value is missing" },
	};
	struct it_task t;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ASSERT_EQ(it_task_parse(bad[i].text, &t, err, sizeof(err)), -1, bad[i].text);
		ASSERT_TRUE(strstr(err, bad[i].names) != NULL, err);
	}
}

/* The syscall layer does not follow a filter or a sample: the report says
 * so when the trace has it, and only then. */
TEST(task_describe_calls)
{
	struct it_task t;
	char line[512], err[256];

	ASSERT_EQ(it_task_parse("[workload]\nop = read\n[profiler]\nsample = 1/10\n", &t, err,
				sizeof(err)), 0, err);
	it_task_describe(&t, false, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read; sampled 1 in 10: counts are of sampled I/Os",
		     "without system calls");
	it_task_describe(&t, true, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read; sampled 1 in 10: counts are of sampled I/Os; "
		     "system calls are not filtered or sampled: every call of the scope is recorded",
		     "with system calls");
	/* nothing filtered: nothing to say */
	ASSERT_EQ(it_task_parse("[report]\nformat = text\n", &t, err, sizeof(err)), 0, err);
	it_task_describe(&t, true, line, sizeof(line));
	ASSERT_STREQ(line, "", "every I/O kept");
	ASSERT_TRUE(it_task_layers_have_calls("block,syscall", 14), "block,syscall");
	ASSERT_TRUE(it_task_layers_have_calls("syscall", 8), "syscall");
	ASSERT_TRUE(!it_task_layers_have_calls("block,nvme", 11), "block,nvme");
	ASSERT_TRUE(!it_task_layers_have_calls("syscalls", 9), "syscalls");
	/* not NUL-terminated within its field */
	ASSERT_TRUE(!it_task_layers_have_calls("block,syscall", 9), "block,sys");
}
