/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A profiling task's pure parts (src/task.c): the predicate as the kernel
 * evaluates it, sizes, durations, sampling, the trigger, the task file, and
 * one line naming the key for each kind of bad input. */
#include <string.h>

#include <stdlib.h>
#include <time.h>

#include "harness.h"
#include "iotrail/event.h"
#include "iotrail/sample_epoch.h"
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
	struct it_sample n;
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
	ASSERT_TRUE(n.one_in == 100 && !n.per_epoch, "1/100");
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

/* What the syscall layer kept: when the trace does not say (an older
 * recording, no block layer), the report says its calls were not
 * filtered, and only when the trace has them. */
TEST(task_describe_calls)
{
	struct it_task t;
	char line[512], err[256];

	ASSERT_EQ(it_task_parse("[workload]\nop = read\n[profiler]\nsample = 1/10\n", &t, err,
				sizeof(err)), 0, err);
	it_task_describe(&t, false, false, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read; sampled 1 in 10: counts are of sampled I/Os",
		     "without system calls");
	it_task_describe(&t, true, false, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read; sampled 1 in 10: counts are of sampled I/Os; "
		     "system calls are not filtered or sampled: every call of the scope is recorded",
		     "with system calls");
	/* the kernel's counts (IT_EV_TASK_COUNTS): exact totals, and which
	 * calls the syscall layer kept */
	t.counted = (struct it_task_counted){ .ios_known = true, .passed = 100, .skipped = 90,
					      .rejected = 7 };
	it_task_describe(&t, false, false, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read: 100 of 107, 7 filtered out; sampled 1 in 10: "
		     "10 kept of 100, 90 skipped: counts are of sampled I/Os", "the totals");
	t.counted.calls_known = true;
	t.counted.calls_kept = 10;
	t.counted.calls_not_kept = 85;
	t.counted.calls_no_io = 3;
	it_task_describe(&t, true, false, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read: 100 of 107, 7 filtered out; sampled 1 in 10: "
		     "10 kept of 100, 90 skipped: counts are of sampled I/Os; system calls: only "
		     "those that queued a kept I/O, 10; not recorded: 85 whose I/Os were all left "
		     "out, 3 that queued none (io_uring requests are all recorded)",
		     "the calls followed the I/Os");
	/* io_uring requests followed too (IT_TCF_URING): their own counts,
	 * said only when there were requests */
	t.counted.uring_known = true;
	it_task_describe(&t, true, false, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read: 100 of 107, 7 filtered out; sampled 1 in 10: "
		     "10 kept of 100, 90 skipped: counts are of sampled I/Os; system calls: only "
		     "those that queued a kept I/O, 10; not recorded: 85 whose I/Os were all left "
		     "out, 3 that queued none", "no io_uring request: nothing said of them");
	t.counted.uring_kept = 4;
	t.counted.uring_not_kept = 36;
	t.counted.uring_no_io = 2;
	t.counted.uring_async = 1;
	it_task_describe(&t, true, false, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read: 100 of 107, 7 filtered out; sampled 1 in 10: "
		     "10 kept of 100, 90 skipped: counts are of sampled I/Os; system calls: only "
		     "those that queued a kept I/O, 10; not recorded: 85 whose I/Os were all left "
		     "out, 3 that queued none; io_uring requests: only those that queued a kept I/O "
		     "at submission, 4; not recorded: 36 whose I/Os were all left out, 2 that "
		     "queued none, 1 handed to io-wq before a kept I/O (not followed there)",
		     "the io_uring requests followed the I/Os");
	/* per epoch: the averages over the epochs the trace's I/Os are in */
	ASSERT_EQ(it_task_parse("[profiler]\nsample = 5/10ms\n", &t, err, sizeof(err)), 0, err);
	t.counted = (struct it_task_counted){ .ios_known = true, .passed = 1800, .skipped = 1755,
					      .epochs = 9 };
	it_task_describe(&t, false, false, line, sizeof(line));
	ASSERT_STREQ(line, "sampled the first 5 I/Os of every 10ms epoch, none after them: 45 kept "
		     "of 1800, 1755 skipped, in 9 epochs: 5.0 kept of 200.0 per epoch on average: "
		     "counts are of sampled I/Os", "per epoch");
	/* nothing filtered: nothing to say */
	ASSERT_EQ(it_task_parse("[report]\nformat = text\n", &t, err, sizeof(err)), 0, err);
	it_task_describe(&t, true, false, line, sizeof(line));
	ASSERT_STREQ(line, "", "every I/O kept");
	ASSERT_TRUE(it_task_layers_have_calls("block,syscall", 14), "block,syscall");
	ASSERT_TRUE(it_task_layers_have_calls("syscall", 8), "syscall");
	ASSERT_TRUE(!it_task_layers_have_calls("block,nvme", 11), "block,nvme");
	ASSERT_TRUE(!it_task_layers_have_calls("syscalls", 9), "syscalls");
	/* not NUL-terminated within its field */
	ASSERT_TRUE(!it_task_layers_have_calls("block,syscall", 9), "block,sys");
	ASSERT_TRUE(it_task_layers_have_tcp("block,nvme,nvme-tcp", 20), "nvme-tcp");
	ASSERT_TRUE(it_task_layers_have_tcp("block,nvmet-tcp", 16), "nvmet-tcp");
	ASSERT_TRUE(!it_task_layers_have_tcp("block,nvme,nvmet", 17), "no TCP layer");
	/* NVMe/TCP's own events: said, as the calls are */
	ASSERT_EQ(it_task_parse("[workload]\nop = read\n", &t, err, sizeof(err)), 0, err);
	it_task_describe(&t, false, true, line, sizeof(line));
	ASSERT_STREQ(line, "only I/Os with op=read; NVMe/TCP's own events are not filtered or "
		     "sampled", "NVMe/TCP said");
}

/* --sample N/EPOCH: the syntax, and the bounds a bad value is told. */
TEST(task_sample_epoch_parse)
{
	struct it_sample s;
	char err[256];

	ASSERT_EQ(it_sample_parse("100/1s", &s, err, sizeof(err)), 0, err);
	ASSERT_TRUE(s.per_epoch == 100 && s.epoch_ns == 1000000000ull && !s.one_in, "100/1s");
	ASSERT_EQ(it_sample_parse("5/250ms", &s, err, sizeof(err)), 0, err);
	ASSERT_TRUE(s.per_epoch == 5 && s.epoch_ns == 250000000ull, "5/250ms");
	/* 1/1s is an epoch (a unit), 1/10 a draw */
	ASSERT_EQ(it_sample_parse("1/1s", &s, err, sizeof(err)), 0, err);
	ASSERT_TRUE(s.per_epoch == 1 && !s.one_in, "1/1s");
	ASSERT_EQ(it_sample_parse("0/1s", &s, err, sizeof(err)), -1, "0 per epoch");
	ASSERT_TRUE(strstr(err, "N/EPOCH") != NULL, err);
	ASSERT_EQ(it_sample_parse("10/500us", &s, err, sizeof(err)), -1, "epoch under 1ms");
	ASSERT_EQ(it_sample_parse("16777216/1s", &s, err, sizeof(err)), -1, "N over 2^24-1");
	ASSERT_EQ(it_sample_parse("x/1s", &s, err, sizeof(err)), -1, "not a number");
	ASSERT_EQ(it_sample_parse("10/1q", &s, err, sizeof(err)), -1, "not a unit");
}

/* The kernel's per-epoch arithmetic (sample_epoch.h, the same function):
 * at most N of every epoch, and exactly min(N, I/Os) when nothing races. */
TEST(task_sample_epoch_take)
{
	unsigned long long st = 0, epoch = 1000000000ull;
	unsigned int kept[6] = { 0 };

	/* 6 epochs of 250 I/Os each, evenly spread, from an epoch far from 0 */
	for (unsigned long long e = 0; e < 6; e++)
		for (unsigned long long i = 0; i < 250; i++)
			kept[e] += it_epoch_take(&st, (1000 + e) * epoch + i * (epoch / 250), epoch,
						 100);
	for (int e = 0; e < 6; e++)
		ASSERT_EQ(kept[e], 100, "first 100 of each epoch");
	/* an epoch with fewer I/Os than N keeps them all */
	ASSERT_EQ(it_epoch_take(&st, 1010 * epoch, epoch, 100), 1, "a new epoch's first");
	/* a CPU whose clock reads the epoch before counts in the newer one */
	st = 0;
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(it_epoch_take(&st, 5 * epoch, epoch, 3), 1, "epoch 5");
	ASSERT_EQ(it_epoch_take(&st, 5 * epoch - 1, epoch, 3), 0, "late reader: epoch 5 is full");
	ASSERT_EQ(it_epoch_take(&st, 6 * epoch, epoch, 3), 1, "epoch 6 starts afresh");
	/* epoch 0 (a clock near boot) and N at its largest */
	st = 0;
	ASSERT_EQ(it_epoch_take(&st, 5, epoch, IT_EPOCH_N_MAX), 1, "epoch 0");
	ASSERT_U64_EQ(st & IT_EPOCH_N_MAX, 1, "count 1 in epoch 0");
}

TEST(task_window_dates)
{
	struct it_task t;
	int64_t a, b;
	char err[256], line[512];

	setenv("TZ", "UTC", 1);
	tzset();
	ASSERT_EQ(it_date_parse("2026-11-23 20:00:00", &a, err, sizeof(err)), 0, err);
	ASSERT_EQ(a, 1795464000, "2026-11-23 20:00:00 UTC");
	ASSERT_EQ(it_date_parse("2026-11-23 20:05:30", &b, err, sizeof(err)), 0, err);
	ASSERT_EQ(b - a, 330, "5 min 30 s later");
	ASSERT_EQ(it_date_parse("2026-02-30 10:00:00", &a, err, sizeof(err)), -1, "Feb 30");
	ASSERT_TRUE(strstr(err, "YYYY-MM-DD hh:mm:ss") != NULL, err);
	ASSERT_EQ(it_date_parse("2026-11-23", &a, err, sizeof(err)), -1, "no time");
	ASSERT_EQ(it_date_parse("2026-11-23 25:00:00", &a, err, sizeof(err)), -1, "hour 25");
	ASSERT_EQ(it_date_parse("2026-1-23 20:00:00", &a, err, sizeof(err)), -1, "one-digit month");
	ASSERT_EQ(it_date_parse("2026-11-23 20:00:00x", &a, err, sizeof(err)), -1, "trailing");
	ASSERT_EQ(it_task_parse("[profiler]\nstart = 2026-11-23 20:00:00\nstop = 2026-11-23 "
				"20:05:00\nsample = 100/1s\n", &t, err, sizeof(err)), 0, err);
	ASSERT_STREQ(t.start, "2026-11-23 20:00:00", "start");
	ASSERT_STREQ(t.stop, "2026-11-23 20:05:00", "stop");
	it_task_describe(&t, false, false, line, sizeof(line));
	ASSERT_STREQ(line, "window 2026-11-23 20:00:00 to 2026-11-23 20:05:00 (local time); "
		     "sampled the first 100 I/Os of every 1s epoch, none after them: counts are "
		     "of sampled I/Os", "the window and the epochs said");
	ASSERT_EQ(it_task_parse("[profiler]\nstart = tomorrow\n", &t, err, sizeof(err)), -1,
		  "a bad date");
	ASSERT_STREQ(err, "line 2: [profiler] start: date 'tomorrow': give YYYY-MM-DD hh:mm:ss, "
		     "local time, a date that exists (e.g. 2026-11-23 20:00:00)", "one line");
	unsetenv("TZ");
	tzset();
}

TEST(task_report_stats)
{
	struct it_stats s;
	struct it_task t;
	char err[256];

	ASSERT_EQ(it_stats_parse("min,avg,p50,p99.9,max", &s, err, sizeof(err)), 0, err);
	ASSERT_EQ(s.n, 5, "five columns");
	ASSERT_TRUE(s.kind[0] == IT_STAT_MIN && s.kind[1] == IT_STAT_AVG &&
		    s.kind[2] == IT_STAT_PCT && s.pct[2] == 50 && s.pct[3] == 99.9 &&
		    s.kind[4] == IT_STAT_MAX, "kinds in order");
	ASSERT_STREQ(s.name[3], "p99.9", "title");
	ASSERT_EQ(it_stats_parse("distinct(pid),p99", &s, err, sizeof(err)), 0, err);
	ASSERT_TRUE(s.n == 2 && s.kind[0] == IT_STAT_DISTINCT && s.distinct[0] == IT_DISTINCT_PID &&
		    !strcmp(s.name[0], "pids"),
		    "distinct(pid), titled pids");
	ASSERT_EQ(it_stats_parse("distinct(comm),distinct(file)", &s, err, sizeof(err)), 0, err);
	ASSERT_TRUE(s.n == 2 && s.distinct[0] == IT_DISTINCT_COMM && !strcmp(s.name[0], "comms") &&
		    s.distinct[1] == IT_DISTINCT_FILE && !strcmp(s.name[1], "files"), "comm, file");
	ASSERT_EQ(it_stats_parse("distinct(tid", &s, err, sizeof(err)), -1, "distinct(tid");
	ASSERT_EQ(it_stats_parse("distinct(pids)", &s, err, sizeof(err)), -1, "distinct(pids)");
	ASSERT_EQ(it_stats_parse("p101", &s, err, sizeof(err)), -1, "p101");
	ASSERT_EQ(it_stats_parse("min,", &s, err, sizeof(err)), -1, "trailing comma");
	ASSERT_EQ(it_stats_parse("", &s, err, sizeof(err)), -1, "empty");
	ASSERT_EQ(it_stats_parse("median", &s, err, sizeof(err)), -1, "median");
	ASSERT_TRUE(strstr(err, "min, max, avg, pN") != NULL, err);
	ASSERT_EQ(it_stats_parse("p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13", &s, err,
				 sizeof(err)), -1, "13 columns");
	ASSERT_EQ(it_task_parse("[report]\nstats = p50,p99\n", &t, err, sizeof(err)), 0, err);
	ASSERT_STREQ(t.stats, "p50,p99", "[report] stats");
	ASSERT_EQ(it_task_parse("[report]\nstats = p50,mode\n", &t, err, sizeof(err)), -1, "bad");
	ASSERT_TRUE(!strncmp(err, "line 2: [report] stats:", 23), err);
	ASSERT_EQ(it_task_parse("[profiler]\non-full = drop\n", &t, err, sizeof(err)), -1,
		  "on-full");
	ASSERT_TRUE(strstr(err, "overwrite") && strstr(err, "write-out"), err);
}

/* A flight file's OVERWRITTEN note (read into the task by the report) is
 * said with the memory bound it came from. */
TEST(task_describe_overwritten)
{
	struct it_task t;
	char line[512], err[256];

	ASSERT_EQ(it_task_parse("[profiler]\nmemory = 64k\non-full = overwrite\n", &t, err,
				sizeof(err)), 0, err);
	it_task_describe(&t, true, false, line, sizeof(line));
	ASSERT_STREQ(line, "", "nothing overwritten is known before the file is written");
	t.overwritten_known = true;
	t.overwritten = 4379;
	it_task_describe(&t, true, false, line, sizeof(line));
	ASSERT_STREQ(line, "4379 events overwritten before this file was written (memory 64k, "
		     "on-full overwrite)", "the count and the bound, no word of system calls");
}
