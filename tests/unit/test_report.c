/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The JSON writer and the report printers: valid JSON, the contract's
 * keys and values, text within 100 columns, warnings. */
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

#include "analyze/json_writer.h"
#include "analyze/report.h"
#include "tracefile.h"
#include "harness.h"
#include "layer_table.h"
#include "synth.h"
#include "task.h"

/* ---- a strict little JSON validator (RFC 8259 grammar) ---- */
static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *value(const char *p, int depth);

static const char *string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return NULL;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return NULL;
			}
		}
		p++;
	}
	return p + 1;
}

static const char *number(const char *p)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		while (isdigit((unsigned char)*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return NULL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p;
}

static const char *members(const char *p, int depth, char close, bool named)
{
	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (named) {
			if (!(p = string(ws(p))))
				return NULL;
			p = ws(p);
			if (*p++ != ':')
				return NULL;
		}
		if (!(p = value(p, depth + 1)))
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *value(const char *p, int depth)
{
	p = ws(p);
	if (depth > 64)
		return NULL;
	switch (*p) {
	case '{': return members(p, depth, '}', true);
	case '[': return members(p, depth, ']', false);
	case '"': return string(p);
	case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
	default: return number(p);
	}
}

static bool valid_json(const char *s)
{
	const char *end = value(s, 0);
	return end && !*ws(end);
}

/* ---- captured output ---- */
struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *cap_open(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->buf, &c->len);
	return c->f;
}

static char *cap_close(struct capture *c)
{
	fclose(c->f);
	return c->buf;
}

TEST(json_writer_nesting_and_escapes)
{
	struct capture c;
	struct it_json j;

	it_json_init(&j, cap_open(&c), false);
	it_json_object_start(&j);
	it_json_kv_string(&j, "s", "a\"b\\c\nd\x01");
	it_json_kv_uint(&j, "u", 18446744073709551615ull);
	it_json_kv_int(&j, "i", -5);
	it_json_kv_double(&j, "d", 0.25);
	it_json_kv_double(&j, "whole", 3);
	it_json_kv_double(&j, "nan", 0.0 / 0.0);
	it_json_name(&j, "a");
	it_json_array_start(&j);
	it_json_array_start(&j);
	it_json_array_end(&j);
	it_json_object_start(&j);
	it_json_object_end(&j);
	it_json_null(&j);
	it_json_bool(&j, true);
	it_json_array_end(&j);
	it_json_object_end(&j);
	char *out = cap_close(&c);

	ASSERT_STREQ(out, "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"u\":18446744073709551615,\"i\":-5,"
			  "\"d\":0.25,\"whole\":3.0,\"nan\":0.0,\"a\":[[],{},null,true]}\n",
		     "compact output");
	ASSERT_TRUE(valid_json(out), "valid");
	free(out);

	it_json_init(&j, cap_open(&c), true);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "x", 1);
	it_json_name(&j, "y");
	it_json_array_start(&j);
	it_json_uint(&j, 2);
	it_json_array_end(&j);
	it_json_object_end(&j);
	out = cap_close(&c);
	ASSERT_STREQ(out, "{\n  \"x\": 1,\n  \"y\": [\n    2\n  ]\n}\n", "pretty output");
	free(out);
}

/* Three reads on loop0 (Q2C 1000, 2008, 3000 ns; D2C 990, 1998, 2990)
 * and a write on an unnamed disk, over a 2 s trace. */
static size_t small_events(struct it_event *evs)
{
	static const uint64_t lat[] = { 1000, 2008, 3000 };
	size_t n = 0;
	const uint64_t s = 1000000000ull;

	for (size_t i = 0; i < 3; i++) {
		uint64_t t0 = s + 1000000 * i;
		evs[n++] = Q(t0, 0xb0 + i, DEV_A, 8 * i, K4, IT_OP_READ);
		evs[n++] = D(t0 + 10, 0x70 + i, 0xb0 + i, DEV_A, 8 * i, K4, IT_OP_READ);
		evs[n++] = C(t0 + lat[i], 0x70 + i, DEV_A, K4);
	}
	evs[n++] = Q(s + 10, 0xc0, DEV_B, 0, 2 * K4, IT_OP_WRITE);
	evs[n++] = I(s + 20, 0xd0, 0xc0, DEV_B, 0, 2 * K4, IT_OP_WRITE);
	evs[n++] = D(s + 30, 0xd0, 0xc0, DEV_B, 0, 2 * K4, IT_OP_WRITE);
	evs[n++] = C(s + 110, 0xd0, DEV_B, 2 * K4);
	return n;
}

static struct it_analyzer *small_trace(void)
{
	struct it_event evs[16];
	size_t n = small_events(evs);
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	o.start_ns = 1000000000ull;
	return run_opts(evs, n, o, NULL, 3000000000ull);
}

static const struct it_device_rec loop0 = {
	.dev = DEV_A, .name = "loop0", .scheduler = "none", .logical_block_size = 512,
	.physical_block_size = 512, .max_sectors_kb = 128, .max_hw_sectors_kb = 128,
	.nr_requests = 128, .blk_mq = 1, .size_sectors = 1 << 20,
};

TEST(report_json_contract)
{
	struct it_analyzer *a = small_trace();
	struct it_reader_status st = { .complete = true, .chunks = 1, .events = 13, .dropped_total = 4 };
	struct it_report_input in = {
		.path = "t.trail", .devs = &loop0, .ndevs = 1, .status = &st, .a = a,
		.r = it_analyzer_results(a),
	};
	struct capture c;

	it_report_json(cap_open(&c), &in, false);
	char *out = cap_close(&c);
	ASSERT_TRUE(valid_json(out), "valid JSON");
	ASSERT_TRUE(!strncmp(out, "{\"version\":1,\"duration_s\":2.0,\"ios\":4,\"dropped\":4,", 48),
		    "starts with the contract's fixed keys");
	ASSERT_TRUE(strstr(out, "\"groups\":[{\"key\":{\"op\":\"read\",\"dev\":\"loop0\"},\"count\":3,"
				"\"bytes\":12288,\"iops\":1.5,") != NULL, "first group: key, count, bytes, iops");
	ASSERT_TRUE(strstr(out, "\"latency_ns\":{\"min\":1000,\"avg\":2003,\"p50\":2008,\"p90\":3000,"
				"\"p99\":3000,\"p999\":3000,\"max\":3000}") != NULL, "latency_ns");
	ASSERT_TRUE(strstr(out, "\"stages\":[{\"name\":\"Q2D\",\"count\":3,") != NULL,
		    "direct issue: Q2D first, no Q2I or I2D listed");
	ASSERT_TRUE(strstr(out, "{\"name\":\"D2C\",\"count\":3,\"avg_ns\":1993,") != NULL, "D2C stage");
	ASSERT_TRUE(strstr(out, "\"stages\":[{\"name\":\"Q2I\",\"count\":1,\"avg_ns\":10,") != NULL,
		    "the inserted write lists Q2I");
	ASSERT_TRUE(strstr(out, "{\"key\":{\"op\":\"write\",\"dev\":\"259:1\"},\"count\":1,") != NULL,
		    "a device missing from the table is major:minor");
	ASSERT_TRUE(strstr(out, "\"qd\":{\"loop0\":{\"at_insert\":{\"ios\":3,") != NULL, "qd");
	ASSERT_TRUE(strstr(out, "\"sizes\":{\"loop0\":[{\"min\":4096,\"max\":8191,\"ios\":3,\"read\":3,") != NULL,
		    "sizes");
	ASSERT_TRUE(strstr(out, "\"timeline\":[{\"dev\":\"loop0\",\"interval_s\":1.0,\"points\":[{\"t_s\":0.0,"
				"\"dur_s\":1.0,\"ios\":3,\"iops\":3.0,") != NULL, "timeline");
	ASSERT_TRUE(strstr(out, "\"truncated\":false") != NULL, "truncated flag");
	ASSERT_TRUE(strstr(out, "\"incomplete\":0") != NULL, "incomplete");
	free(out);
	it_analyzer_free(a);
}

static int longest_line(const char *s)
{
	int best = 0, cur = 0;
	for (; *s; s++) {
		if (*s == '\n') {
			best = cur > best ? cur : best;
			cur = 0;
		} else {
			cur++;
		}
	}
	return cur > best ? cur : best;
}

TEST(report_text_fits_100_columns)
{
	struct it_analyzer *a = small_trace();
	struct it_host_rec host = { .hostname = "box", .kernel = "6.18.0", .clock = "monotonic",
				    .ncpus = 2, .start_realtime_ns = 1700000000000000000ull,
				    .command = "iotrail record -o t.trail -- fio x.fio" };
	struct it_reader_status st = { .complete = false, .truncated = true, .bad_offset = 4242,
				       .chunks = 3, .dropped_total = 17 };
	struct it_report_input in = {
		.path = "t.trail", .host = &host, .devs = &loop0, .ndevs = 1, .status = &st,
		.a = a, .r = it_analyzer_results(a),
	};
	struct capture c;

	it_report_text(cap_open(&c), &in);
	char *out = cap_close(&c);
	ASSERT_LE(longest_line(out), 100, "longest line");
	ASSERT_TRUE(strstr(out, "17 EVENTS WERE LOST") != NULL, "loud drop warning");
	ASSERT_TRUE(strstr(out, "cut short at byte 4242") != NULL, "truncation warning");
	ASSERT_TRUE(strstr(out, "Latency (Q2C") != NULL, "latency table");
	ASSERT_TRUE(strstr(out, "read  loop0") != NULL, "group row");
	ASSERT_TRUE(strstr(out, "2.01us") != NULL, "p50 2008 ns shown as 2.01us");
	ASSERT_TRUE(strstr(out, "Device loop0 (7:0): 3 I/Os") != NULL, "device section");
	free(out);

	/* wide keys wrap instead of overflowing */
	struct it_analyzer_opts o = { 0 };
	char err[64];
	it_parse_group_keys("op,size,dev,comm,pid", &o, err, sizeof(err));
	struct it_event evs[] = {
		TASK(1, 4000000000u, 4000000000u, "a-very-long-nam"),
		ev_tid(Q(1000, 0xb1, DEV_B, 0, K4, IT_OP_WRITE_ZEROES), 4000000000u, 4000000000u),
		D(2000, 0x71, 0xb1, DEV_B, 0, K4, IT_OP_WRITE_ZEROES),
		C(3000, 0x71, DEV_B, K4),
	};
	struct it_analyzer *b = run_opts(evs, N(evs), o, NULL, 0);
	struct it_report_input in2 = { .a = b, .r = it_analyzer_results(b) };
	it_report_text(cap_open(&c), &in2);
	out = cap_close(&c);
	ASSERT_LE(longest_line(out), 100, "longest line with five keys");
	free(out);
	it_analyzer_free(b);
	it_analyzer_free(a);
}

/* An issued I/O whose completion event went missing (its request pointer
 * came back first) is counted, without a completion time, and the text
 * report says so; one lost before it was issued is not counted, and the
 * report warns loudly. */
TEST(report_text_tells_of_lost_completions)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_B, 0, K4, IT_OP_READ),
		D(1100, 0x71, 0xb1, DEV_B, 0, K4, IT_OP_READ),
		Q(5000, 0xb2, DEV_B, 64, K4, IT_OP_READ),
		D(5100, 0x71, 0xb2, DEV_B, 64, K4, IT_OP_READ),
		C(5600, 0x71, DEV_B, K4),
		Q(6000, 0xb3, DEV_B, 128, K4, IT_OP_READ),
		I(6100, 0x72, 0xb3, DEV_B, 128, K4, IT_OP_READ),
		Q(7000, 0xb4, DEV_B, 256, K4, IT_OP_READ),
		I(7100, 0x72, 0xb4, DEV_B, 256, K4, IT_OP_READ),
		D(7200, 0x72, 0xb4, DEV_B, 256, K4, IT_OP_READ),
		C(7600, 0x72, DEV_B, K4),
	};
	struct it_analyzer_opts o = { 0 };
	char err[64];
	struct capture c;

	it_parse_group_keys("op,dev", &o, err, sizeof(err));
	struct it_analyzer *a = run_opts(evs, N(evs), o, NULL, 0);
	struct it_report_input in = { .a = a, .r = it_analyzer_results(a) };
	it_report_text(cap_open(&c), &in);
	char *out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "NOTE: 1 I/Os lost their completion event") != NULL,
		    "the counted lost completion told");
	ASSERT_TRUE(strstr(out, "iotrail probe --untraced") != NULL,
		    "the note points at the probe that finds the threads no probe runs for");
	ASSERT_TRUE(strstr(out, "WARNING: 1 I/Os lost their completion event") != NULL,
		    "the uncounted one warned of");
	free(out);
	it_analyzer_free(a);
}

/* The kernel counted 3 reads on DEV_A (IT_EV_DISKSTATS) while the block
 * layer recorded none: the text says so first, the JSON carries the
 * counts; with one I/O recorded there is no warning. */
static struct it_event diskstats_ev(uint64_t reads)
{
	struct it_event e = ev_base(IT_EV_DISKSTATS, 9000, 0, DEV_A);

	e.sector = reads;
	e.aux = 1; /* writes */
	e.id = 2;  /* flushes */
	return e;
}

TEST(report_warns_of_a_silent_block_layer)
{
	struct it_event silent[] = { diskstats_ev(3) };
	struct it_event busy[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(1100, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		C(1600, 0x71, DEV_A, K4),
		diskstats_ev(3),
	};
	struct capture c;
	struct it_analyzer *a = run(silent, N(silent), NULL);
	struct it_report_input in = { .a = a, .r = it_analyzer_results(a) };

	it_report_text(cap_open(&c), &in);
	char *out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "WARNING: the block layer recorded no I/O while its devices "
			   "completed 6") != NULL, "warned, with the kernel's total");
	ASSERT_TRUE(strstr(out, "3 reads, 1 writes, 2 flushes") != NULL, "the device's counts");
	free(out);
	it_report_json(cap_open(&c), &in, false);
	out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "\"diskstats\":{\"7:0\":{\"reads\":3,\"writes\":1,"
			   "\"flushes\":2,\"discards\":0}}") != NULL, "JSON diskstats");
	free(out);
	it_analyzer_free(a);

	a = run(busy, N(busy), NULL);
	in = (struct it_report_input){ .a = a, .r = it_analyzer_results(a) };
	it_report_text(cap_open(&c), &in);
	out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "WARNING: the block layer") == NULL, "no warning with an I/O");
	ASSERT_TRUE(strstr(out, "diskstats): read 3, write 1, flush 2") != NULL,
		    "the kernel's count beside the device's");
	ASSERT_EQ(it_analyzer_results(a)->stats.ios, 1, "the event is not an I/O");
	free(out);
	it_analyzer_free(a);
}

/* The report's pipeline: events written with the trace file writer, read
 * back in batches and analysed, give the same JSON as the events analysed
 * from memory. */
TEST(report_from_trace_file_matches_memory)
{
	struct it_host_rec host = { .hostname = "box", .clock = "monotonic", .ncpus = 2,
				    .start_monotonic_ns = 1000000000ull };
	struct it_event evs[16];
	size_t n = small_events(evs);
	char path[] = "/tmp/iotrail-unit-report.XXXXXX", err[256];
	int fd = mkstemp(path);
	uint64_t drops[2] = { 0, 3 };

	if (fd < 0)
		SKIP("cannot create a file in /tmp");
	close(fd);
	struct it_trace_head head = { .host = &host, .devs = &loop0, .ndevs = 1,
				      .layers = it_layer_builtin(IT_LAYER_BLOCK), .nlayers = 1 };
	struct it_writer *w = it_writer_open(path, &head, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		return;
	for (size_t i = 0; i < n; i += 5) /* several batches */
		it_writer_add_events(w, IT_LAYER_BLOCK, evs + i, n - i < 5 ? n - i : 5);
	it_writer_set_missed(w, 0, IT_LAYER_BLOCK, 4);
	it_writer_set_drops(w, 0, IT_LAYER_BLOCK, drops, 2);
	ASSERT_EQ(it_writer_close(w, 3000000000ull), 0, "writer close");

	struct it_reader *rd = it_reader_open(path, err, sizeof(err));
	if (!ASSERT_NOT_NULL(rd, err)) {
		unlink(path);
		return;
	}
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	o.start_ns = it_reader_host(rd)->start_monotonic_ns;
	struct it_analyzer *a = it_analyzer_new(&o);
	const struct it_event *batch;
	size_t nb;
	while (it_reader_next(rd, &batch, &nb) > 0)
		it_analyzer_feed(a, batch, nb);
	struct it_reader_status st;
	it_reader_status(rd, &st);
	it_analyzer_finish(a, st.end_monotonic_ns);
	struct it_report_input in = { .devs = &loop0, .ndevs = 1, .status = &st, .a = a,
				      .r = it_analyzer_results(a) };
	struct it_analyzer *m = small_trace();
	struct it_reader_status mst = st;
	struct it_report_input min = { .devs = &loop0, .ndevs = 1, .status = &mst, .a = m,
				       .r = it_analyzer_results(m) };
	struct capture c1, c2;

	it_report_json(cap_open(&c1), &in, false);
	it_report_json(cap_open(&c2), &min, false);
	char *from_file = cap_close(&c1), *from_memory = cap_close(&c2);
	ASSERT_TRUE(st.complete, "file complete");
	ASSERT_EQ(st.dropped_total, 3, "drops from the file");
	ASSERT_STREQ(from_file, from_memory, "same JSON");
	ASSERT_NOT_NULL(strstr(from_file, ",\"probe_misses\":4,"), "probe runs skipped, from the file");
	it_report_text(cap_open(&c1), &in);
	char *text = cap_close(&c1);
	ASSERT_NOT_NULL(strstr(text, "WARNING: the kernel skipped 4 probe runs"), "text warning");
	free(text);
	ASSERT_TRUE(!strncmp(from_file, "{\"version\":1,\"duration_s\":2.0,\"ios\":4,\"dropped\":3,", 48),
		    "duration from the file's start and end");
	free(from_file);
	free(from_memory);
	it_analyzer_free(a);
	it_analyzer_free(m);
	it_reader_close(rd);
	unlink(path);
}

/* A task's [report] stats choose the latency columns, in their order, in
 * text and JSON alike (the default columns when it has none). */
TEST(report_stats_columns)
{
	struct it_analyzer *a = small_trace();
	struct it_task task = { .stats = "max,min,p50" };
	struct it_report_input in = { .devs = &loop0, .ndevs = 1, .a = a,
				      .r = it_analyzer_results(a), .task = &task };
	struct capture c;
	char *out, *hdr;

	it_report_text(cap_open(&c), &in);
	out = cap_close(&c);
	hdr = strstr(out, "MiB/s");
	ASSERT_TRUE(hdr && !strncmp(hdr, "MiB/s    max    min    p50\n", 27), "the task's columns");
	ASSERT_TRUE(strstr(out, "3.00us 1.00us 2.01us\n") != NULL, "read row: max, min, p50");
	free(out);
	it_report_json(cap_open(&c), &in, false);
	out = cap_close(&c);
	ASSERT_TRUE(valid_json(out), "valid JSON");
	ASSERT_TRUE(strstr(out, "\"stats_ns\":{\"max\":3000,\"min\":1000,\"p50\":2008}") != NULL,
		    "JSON stats_ns of the reads");
	free(out);
	task.stats[0] = 0;
	it_report_text(cap_open(&c), &in);
	out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "MiB/s    min    avg    p50    p90    p99  p99.9    max\n") != NULL,
		    "the default columns");
	free(out);
	it_analyzer_free(a);
}

/* distinct(pid): how many processes submitted a group's I/Os, counted
 * only when a column asks for it (the analyzer's opts.distinct). */
TEST(report_stats_distinct_pids)
{
	static const uint32_t pids[] = { 100, 100, 200, 300 };
	struct it_event evs[12];
	size_t n = 0;
	const uint64_t s = 1000000000ull;

	for (size_t i = 0; i < 4; i++) {
		uint64_t t0 = s + 1000000 * i;
		evs[n++] = ev_tid(Q(t0, 0xb0 + i, DEV_A, 8 * i, K4, i < 3 ? IT_OP_READ : IT_OP_WRITE),
				  pids[i], pids[i]);
		evs[n++] = D(t0 + 10, 0x70 + i, 0xb0 + i, DEV_A, 8 * i, K4,
			     i < 3 ? IT_OP_READ : IT_OP_WRITE);
		evs[n++] = C(t0 + 1000, 0x70 + i, DEV_A, K4);
	}
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	o.distinct = 1u << IT_DISTINCT_PID;
	struct it_analyzer *a = run_opts(evs, n, o, NULL, 0);
	const struct it_results *r = it_analyzer_results(a);
	struct it_task task = { .stats = "distinct(pid),max" };
	struct it_report_input in = { .devs = &loop0, .ndevs = 1, .a = a, .r = r, .task = &task };
	struct capture c;
	char *out;

	ASSERT_EQ(r->ngroups, 2, "read and write groups");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_PID], 2, "reads: pids 100 and 200");
	ASSERT_U64_EQ(r->groups[1].distinct[IT_DISTINCT_PID], 1, "the write: pid 300");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_TID], 0, "tids: not asked, not counted");
	it_report_text(cap_open(&c), &in);
	out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "MiB/s   pids    max\n") != NULL, "the pids column's title");
	ASSERT_TRUE(strstr(out, "      2 1.00us\n") != NULL, "reads: 2 processes");
	free(out);
	it_report_json(cap_open(&c), &in, false);
	out = cap_close(&c);
	ASSERT_TRUE(valid_json(out) && strstr(out, "\"distinct_pids\":2") != NULL, "JSON");
	free(out);
	it_analyzer_free(a);
}

/* The kernel's counts of what a task left out (IT_EV_TASK_COUNTS) reach
 * the report's task line and its JSON as totals: a filter's 1 of 5, a
 * sample's skipped, and the calls the syscall layer left out. */
static struct it_event task_counts_ev(uint8_t flags, uint64_t a, uint64_t b, uint64_t c)
{
	struct it_event e = ev_base(IT_EV_TASK_COUNTS, 9000, a, 0);

	e.flags = flags;
	e.sector = b;
	e.aux = c;
	return e;
}

/* io_uring's counts (IT_TCF_URING): the fourth in pid (low) and tid (high) */
static struct it_event uring_counts_ev(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	struct it_event e = task_counts_ev(IT_TCF_CALLS | IT_TCF_URING, a, b, c);

	e.pid = (uint32_t)d;
	e.tid = (uint32_t)(d >> 32);
	return e;
}

TEST(report_task_counts)
{
	struct it_event evs[] = {
		Q(1000, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		D(1100, 0x71, 0xb1, DEV_A, 0, K4, IT_OP_READ),
		C(1600, 0x71, DEV_A, K4),
		task_counts_ev(0, 10, 9, 40),
		/* before the calls', as recorded: an older reader keeps the last */
		uring_counts_ev(2, 5, 7, (3ull << 32) + 11),
		task_counts_ev(IT_TCF_CALLS, 1, 9, 300),
	};
	struct it_host_rec h = { .layers = "block,syscall" };
	struct it_task t;
	char err[256];
	struct capture c;
	struct it_analyzer *a = run(evs, N(evs), NULL);
	struct it_report_input in = { .a = a, .r = it_analyzer_results(a), .host = &h, .task = &t };

	ASSERT_EQ(it_task_parse("[workload]\nop = read\n[profiler]\nsample = 1/10\n", &t, err,
				sizeof(err)), 0, err);
	ASSERT_EQ(in.r->stats.ios, 1, "the counts are not I/Os");
	it_report_text(cap_open(&c), &in);
	char *out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "only I/Os with op=read: 10 of 50, 40 filtered out; sampled 1 in 10: "
			   "1 kept of 10,") != NULL, "the I/O totals said");
	ASSERT_TRUE(strstr(out, "system calls: only") != NULL, "the calls said (wrapped)");
	free(out);
	it_report_json(cap_open(&c), &in, false);
	out = cap_close(&c);
	ASSERT_TRUE(valid_json(out), "valid JSON");
	ASSERT_TRUE(strstr(out, "I/O, 1; not recorded: 9 whose I/Os were all left out, 300 that "
			   "queued none") != NULL, "the calls' totals said");
	ASSERT_TRUE(strstr(out, "\"syscalls_unfiltered\":false,\"ios_passed\":10,\"ios_kept\":1,"
			   "\"ios_skipped\":9,\"ios_filtered_out\":40,\"calls_kept\":1,"
			   "\"calls_not_kept\":9,\"calls_no_io\":300,\"uring_kept\":2,"
			   "\"uring_not_kept\":5,\"uring_no_io\":7,\"uring_async\":12884901899}")
		    != NULL, "JSON totals");
	ASSERT_TRUE(strstr(out, "io_uring requests: only those that queued a kept I/O at "
			   "submission, 2; not recorded: 5 whose I/Os were all left out, 7 that "
			   "queued none, 12884901899 handed to io-wq") != NULL, "io_uring's said");
	free(out);
	it_analyzer_free(a);
}

/* distinct(tid|comm|dev|file): the other keys a group's I/Os have, by op
 * over two devices: reads of 3 threads of 2 processes (fio, dd) on 2
 * devices and 2 files (one read of no file: direct I/O), one write. */
TEST(report_stats_distinct_keys)
{
	static const struct { uint32_t pid, tid, dev; uint64_t ino; uint8_t op; } io[] = {
		{ 100, 100, DEV_A, 11, IT_OP_READ }, { 100, 101, DEV_A, 11, IT_OP_READ },
		{ 200, 200, DEV_B, 12, IT_OP_READ }, { 200, 200, DEV_B, 0, IT_OP_READ },
		{ 300, 300, DEV_A, 13, IT_OP_WRITE },
	};
	struct it_event evs[24];
	size_t n = 0;
	const uint64_t s = 1000000000ull;

	evs[n++] = TASK(s - 10, 100, 100, "fio");
	evs[n++] = TASK(s - 9, 100, 101, "fio");
	evs[n++] = TASK(s - 8, 200, 200, "dd");
	evs[n++] = TASK(s - 7, 300, 300, "dd");
	for (size_t i = 0; i < N(io); i++) {
		uint64_t t0 = s + 1000000 * i;
		struct it_event q = ev_tid(Q(t0, 0xb0 + i, io[i].dev, 8 * i, K4, io[i].op),
					   io[i].pid, io[i].tid);

		q.aux = io[i].ino; /* the file whose page cache it carries */
		q.tag = 0x801;     /* on file system dev 0:0x801 */
		evs[n++] = q;
		evs[n++] = D(t0 + 10, 0x70 + i, 0xb0 + i, io[i].dev, 8 * i, K4, io[i].op);
		evs[n++] = C(t0 + 1000, 0x70 + i, io[i].dev, K4);
	}
	struct it_analyzer_opts o = { .keys = { IT_KEY_OP }, .nkeys = 1 };
	struct it_task task = { .stats = "distinct(tid),distinct(comm),distinct(dev),distinct(file)" };
	struct it_stats st;
	char err[256];

	ASSERT_EQ(it_stats_parse(task.stats, &st, err, sizeof(err)), 0, err);
	o.distinct = it_report_stats_distinct(&st);
	ASSERT_EQ(o.distinct, (1u << IT_DISTINCT_TID) | (1u << IT_DISTINCT_COMM) |
		  (1u << IT_DISTINCT_DEV) | (1u << IT_DISTINCT_FILE), "the keys asked for");
	struct it_analyzer *a = run_opts(evs, n, o, NULL, 0);
	const struct it_results *r = it_analyzer_results(a);
	struct it_report_input in = { .devs = &loop0, .ndevs = 1, .a = a, .r = r, .task = &task };
	struct capture c;
	char *out;

	ASSERT_EQ(r->ngroups, 2, "read and write groups");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_TID], 3, "reads: tids 100, 101, 200");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_COMM], 2, "reads: fio and dd");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_DEV], 2, "reads: on two devices");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_FILE], 2,
		      "reads: inodes 11 and 12 (the direct read carries none)");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_PID], 0, "pids: not asked, not counted");
	ASSERT_U64_EQ(r->groups[1].distinct[IT_DISTINCT_FILE], 1, "the write: inode 13");
	ASSERT_U64_EQ(r->groups[1].distinct[IT_DISTINCT_COMM], 1, "the write: dd");
	it_report_text(cap_open(&c), &in);
	out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "MiB/s   tids  comms   devs  files\n") != NULL, "the columns' titles");
	ASSERT_TRUE(strstr(out, "      3      2      2      2\n") != NULL, "reads' counts");
	free(out);
	it_report_json(cap_open(&c), &in, false);
	out = cap_close(&c);
	ASSERT_TRUE(valid_json(out) && strstr(out, "\"distinct_tids\":3,\"distinct_comms\":2,"
						 "\"distinct_devs\":2,\"distinct_files\":2") != NULL,
		    "JSON");
	free(out);
	it_analyzer_free(a);
	ASSERT_EQ(it_stats_parse("distinct(lba)", &st, err, sizeof(err)), -1, "distinct(lba)");
	ASSERT_TRUE(strstr(err, "distinct(KEY) (KEY: pid, tid, comm, dev, file or zone)") != NULL,
		    "the keys told");
}

/* distinct(zone): the zones of the I/Os' first sectors, by op, over two
 * zoned devices (A: 2 zones, B: 4, of 1024 sectors): zone 0 of A and zone
 * 0 of B are two zones; a sector beyond A's zones counts none. */
TEST(report_stats_distinct_zones)
{
	static const struct { uint32_t dev; uint64_t sector; uint8_t op; } io[] = {
		{ DEV_B, 16, IT_OP_READ }, { DEV_A, 0, IT_OP_READ }, { DEV_B, 2048, IT_OP_READ },
		{ DEV_B, 3072, IT_OP_READ }, { DEV_B, 3080, IT_OP_READ }, { DEV_A, 4096, IT_OP_READ },
		{ DEV_B, 0, IT_OP_WRITE }, { DEV_B, 8, IT_OP_WRITE }, { DEV_B, 1024, IT_OP_WRITE },
	};
	struct it_event evs[6 + 3 * 9];
	size_t n = 0;

	for (uint32_t z = 0; z < 2; z++)
		evs[n++] = ZINFO(DEV_A, z, 1024 * z, 1024);
	for (uint32_t z = 0; z < 4; z++)
		evs[n++] = ZINFO(DEV_B, z, 1024 * z, 1024);
	for (size_t i = 0; i < N(io); i++) {
		uint64_t t0 = 1000000 + 100000 * i;

		evs[n++] = Q(t0, 0xb0 + i, io[i].dev, io[i].sector, K4, io[i].op);
		evs[n++] = D(t0 + 10, 0x70 + i, 0xb0 + i, io[i].dev, io[i].sector, K4, io[i].op);
		evs[n++] = C(t0 + 1000, 0x70 + i, io[i].dev, K4);
	}
	struct it_analyzer_opts o = { .keys = { IT_KEY_OP }, .nkeys = 1 };
	struct it_task task = { .stats = "distinct(zone),max" };
	struct it_stats st;
	char err[256];

	ASSERT_EQ(it_stats_parse(task.stats, &st, err, sizeof(err)), 0, err);
	o.distinct = it_report_stats_distinct(&st);
	ASSERT_EQ(o.distinct, 1u << IT_DISTINCT_ZONE, "the key asked for");
	struct it_analyzer *a = run_opts(evs, n, o, NULL, 0);
	const struct it_results *r = it_analyzer_results(a);
	struct it_report_input in = { .devs = &loop0, .ndevs = 1, .a = a, .r = r, .task = &task };
	struct capture c;
	char *out;

	ASSERT_EQ(r->ngroups, 2, "read and write groups");
	ASSERT_EQ(r->groups[0].key.op, IT_OP_READ, "reads first");
	ASSERT_U64_EQ(r->groups[0].count, 6, "six reads");
	ASSERT_U64_EQ(r->groups[0].distinct[IT_DISTINCT_ZONE], 4,
		      "reads: B's zones 0, 2, 3 and A's zone 0 (not the read beyond A's zones)");
	ASSERT_U64_EQ(r->groups[1].distinct[IT_DISTINCT_ZONE], 2, "writes: B's zones 0 and 1");
	it_report_text(cap_open(&c), &in);
	out = cap_close(&c);
	ASSERT_TRUE(strstr(out, "MiB/s  zones") != NULL, "the column's title");
	free(out);
	it_report_json(cap_open(&c), &in, false);
	out = cap_close(&c);
	ASSERT_TRUE(valid_json(out) && strstr(out, "\"distinct_zones\":4") != NULL &&
		    strstr(out, "\"distinct_zones\":2") != NULL, "JSON");
	free(out);
	it_analyzer_free(a);
}

/* --sample N/EPOCH: the analyzer counts the epochs of the kept I/Os' Q
 * times (opts.epoch_ns), and the report gives the per-epoch averages. */
TEST(report_task_epochs)
{
	static const uint64_t qs[] = { 1000000, 5000000, 12000000, 35000000, 39000000 };
	struct it_event evs[3 * 5 + 1];
	size_t n = 0;

	for (size_t i = 0; i < N(qs); i++) {
		evs[n++] = Q(qs[i], 0xb0 + i, DEV_A, 8 * i, K4, IT_OP_READ);
		evs[n++] = D(qs[i] + 10, 0x70 + i, 0xb0 + i, DEV_A, 8 * i, K4, IT_OP_READ);
		evs[n++] = C(qs[i] + 1000, 0x70 + i, DEV_A, K4);
	}
	evs[n++] = task_counts_ev(0, 20, 15, 0);
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	o.epoch_ns = 10000000;
	struct it_analyzer *a = run_opts(evs, n, o, NULL, 0);
	struct it_host_rec h = { .layers = "block" };
	struct it_task t = { .sample = "2/10ms" };
	struct it_report_input in = { .a = a, .r = it_analyzer_results(a), .host = &h, .task = &t };
	struct capture c;
	char *out;

	ASSERT_U64_EQ(in.r->task.epochs, 3, "Q times in epochs 0, 1 and 3");
	it_report_json(cap_open(&c), &in, false);
	out = cap_close(&c);
	ASSERT_TRUE(valid_json(out), "valid JSON");
	ASSERT_TRUE(strstr(out, "\"ios_passed\":20,\"ios_kept\":5,\"ios_skipped\":15,"
			   "\"ios_filtered_out\":0,\"epochs\":3") != NULL, "JSON epochs");
	ASSERT_TRUE(strstr(out, "5 kept of 20, 15 skipped, in 3 epochs: 1.7 kept of 6.7 per epoch "
			   "on average") != NULL, "the averages");
	free(out);
	it_analyzer_free(a);
}
