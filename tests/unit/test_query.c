// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The query protocol: the text instructions into messages (and every bad
 * one refused with its reason), LOAD, STORE, RESET and STATS through the
 * encoder and parser, the settings a STORE may change, and LOAD's answer
 * from a synthetic spool whose I/Os have known completion times and stage
 * times: the window, the op and device filters, the count since reset.
 */
#include "harness.h"
#include "synth.h"
#include "agent/query.h"
#include "analyze/nvme.h"
#include "agent/query_target.h"
#include "layer_table.h"
#include "tracefile.h"

#include <ctype.h>
#include <stdio.h>
#include <unistd.h>

static long roundtrip(const struct it_agent_msg *in, struct it_agent_msg *out)
{
	uint8_t buf[IT_AGENT_HDR + IT_AGENT_MAX_MSG];
	char err[160];
	size_t n = it_agent_encode(in, buf, sizeof(buf));

	if (!n)
		return -2;
	return it_agent_parse(buf, n, out, err, sizeof(err));
}

TEST(query_parse_load)
{
	struct it_agent_msg m;
	char err[300];

	ASSERT_EQ(it_query_parse("load block.d2c p99.9 p50 max window=250ms op=read dev=loop0",
				 &m, err, sizeof(err)), 0, "parsed");
	ASSERT_EQ(m.type, IT_MSG_LOAD, "type");
	ASSERT_STREQ(m.u.load.sw, "block.d2c", "switch");
	ASSERT_EQ(m.u.load.stats, IT_QS_PCT | IT_QS_MAX, "statistics asked");
	ASSERT_EQ(m.u.load.npct, 2, "two percentiles");
	ASSERT_EQ(m.u.load.pct[0], 50000, "p50 first: kept ascending");
	ASSERT_EQ(m.u.load.pct[1], 99900, "p99.9 in thousandths of a percent");
	ASSERT_U64_EQ(m.u.load.window_ns, 250000000ull, "window");
	ASSERT_EQ(m.u.load.op, IT_OP_READ + 1, "op");
	ASSERT_STREQ(m.u.load.dev, "loop0", "device");

	ASSERT_EQ(it_query_parse("load block.q2c", &m, err, sizeof(err)), 0, "bare load");
	ASSERT_EQ(m.u.load.stats, IT_QS_ALL, "no statistic named: all");
	ASSERT_EQ(m.u.load.npct, 0, "no percentile named: the agent's set");
	ASSERT_U64_EQ(m.u.load.window_ns, 0, "no window: the agent's");

	ASSERT_EQ(it_query_parse("reset all", &m, err, sizeof(err)), 0, "reset all");
	ASSERT_EQ(m.type, IT_MSG_RESET, "reset type");
	ASSERT_STREQ(m.u.reset.sw, "all", "reset switch");
	ASSERT_EQ(it_query_parse("store block.q2c percentiles=50,99.9", &m, err, sizeof(err)), 0,
		  "store");
	ASSERT_STREQ(m.u.store.name, "percentiles", "store setting");
	ASSERT_STREQ(m.u.store.value, "50,99.9", "store value");
}

TEST(query_parse_refuses)
{
	static const struct { const char *text, *says; } bad[] = {
		{ "", "unknown instruction" },
		{ "fetch block.d2c", "unknown instruction 'fetch'" },
		{ "load", "no switch given" },
		{ "load target.nope p99", "unknown switch 'target.nope'" },
		{ "load all", "unknown switch 'all'" },
		{ "load block.d2c p101", "unknown statistic" },
		{ "load block.d2c p99.9999", "unknown statistic" },
		{ "load block.d2c p0.0000000001", "unknown statistic" }, /* p0 on the wire: fuzz_query */
		{ "load block.d2c median", "unknown statistic or parameter 'median'" },
		{ "load block.d2c window=0", "bad window" },
		{ "load block.d2c window=2h", "bad window" },
		{ "load block.d2c op=append", "unknown op 'append'" },
		{ "load block.d2c dev=", "bad device name" },
		{ "load target.dev ctrl=x", "bad controller 'x'" },
		{ "load target.dev ctrl=70000", "bad controller" },
		{ "load block.d2c p1 p2 p3 p4 p5 p6 p7 p8 p9", "more than 8 percentiles" },
		{ "reset block.d2c now", "unexpected 'now'" },
		{ "store block.d2c", "SETTING=VALUE" },
		{ "store block.d2c window", "SETTING=VALUE" },
		{ "store block.d2c window=", "SETTING=VALUE" },
		{ "store block.d2c a=1 b=2", "SETTING=VALUE" },
		{ "store block.d2c percentiles=50\x0e", "a control character (0x0e)" },
	};
	struct it_agent_msg m;
	char err[400];

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		ASSERT_EQ(it_query_parse(bad[i].text, &m, err, sizeof(err)), -1, bad[i].text);
		ASSERT_TRUE(strstr(err, bad[i].says) != NULL, err);
		ASSERT_TRUE(!strchr(err, '\n'), "one line");
	}
}

TEST(query_messages_roundtrip)
{
	struct it_agent_msg m, o;
	char err[200];

	ASSERT_EQ(it_query_parse("load block.q2c p50 p99.9 count window=2s op=write dev=sda", &m,
				 err, sizeof(err)), 0, "parsed");
	ASSERT_TRUE(roundtrip(&m, &o) > 0, "LOAD round trip");
	ASSERT_TRUE(!memcmp(&m.u.load, &o.u.load, sizeof(m.u.load)), "LOAD fields kept");

	m = (struct it_agent_msg){ .type = IT_MSG_STATS };
	snprintf(m.u.stats.sw, sizeof(m.u.stats.sw), "block.d2c");
	m.u.stats.stats = IT_QS_ALL;
	m.u.stats.start_ns = 5;
	m.u.stats.end_ns = 1000000005;
	m.u.stats.reset_ns = 7;
	m.u.stats.dropped = 3;
	m.u.stats.npct = 2;
	m.u.stats.pct[0] = 50000;
	m.u.stats.pct[1] = 100000;
	m.u.stats.window = (struct it_stage_stat){ 10, 9, 8192, 1, 100, 500, { 40, 100 } };
	m.u.stats.since_reset = (struct it_stage_stat){ 20, 19, 16384, 1, 200, 900, { 41, 200 } };
	ASSERT_TRUE(roundtrip(&m, &o) > 0, "STATS round trip");
	ASSERT_TRUE(!memcmp(&m.u.stats, &o.u.stats, sizeof(m.u.stats)), "STATS fields kept");

	m = (struct it_agent_msg){ .type = IT_MSG_RESET };
	snprintf(m.u.reset.sw, sizeof(m.u.reset.sw), "all");
	ASSERT_TRUE(roundtrip(&m, &o) > 0 && !o.u.reset.reply, "RESET asked");
	m.u.reset.reply = true;
	m.u.reset.at_ns = 123456789;
	ASSERT_TRUE(roundtrip(&m, &o) > 0 && o.u.reset.reply, "RESET answered");
	ASSERT_U64_EQ(o.u.reset.at_ns, 123456789, "RESET time");

	m = (struct it_agent_msg){ .type = IT_MSG_STORE };
	snprintf(m.u.store.sw, sizeof(m.u.store.sw), "block.q2c");
	snprintf(m.u.store.name, sizeof(m.u.store.name), "window");
	snprintf(m.u.store.value, sizeof(m.u.store.value), "2s");
	ASSERT_TRUE(roundtrip(&m, &o) > 0, "STORE round trip");
	ASSERT_STREQ(o.u.store.value, "2s", "STORE value");
}

TEST(query_messages_malformed)
{
	struct it_agent_msg m = { .type = IT_MSG_LOAD }, o;
	uint8_t buf[IT_AGENT_HDR + 200];
	char err[200];
	size_t n;

	snprintf(m.u.load.sw, sizeof(m.u.load.sw), "block.d2c");
	m.u.load.stats = 0;
	ASSERT_EQ(it_agent_encode(&m, buf, sizeof(buf)), 0, "no statistic: not encoded");
	m.u.load.stats = IT_QS_PCT;
	m.u.load.npct = 2;
	m.u.load.pct[0] = 99000;
	m.u.load.pct[1] = 50000;
	ASSERT_EQ(it_agent_encode(&m, buf, sizeof(buf)), 0, "descending percentiles: not encoded");
	m.u.load.pct[1] = 99900;
	n = it_agent_encode(&m, buf, sizeof(buf));
	ASSERT_TRUE(n > IT_AGENT_HDR, "encoded");
	for (size_t cut = IT_AGENT_HDR; cut < n; cut++)
		ASSERT_EQ(it_agent_parse(buf, cut, &o, err, sizeof(err)), 0, "cut: read more");
	/* the second percentile, as bytes, made smaller than the first */
	buf[n - 4] = 0x01;
	buf[n - 3] = 0x00;
	buf[n - 2] = 0x00;
	buf[n - 1] = 0x00;
	ASSERT_EQ(it_agent_parse(buf, n, &o, err, sizeof(err)), -1, "descending refused");
	ASSERT_TRUE(strstr(err, "malformed LOAD") != NULL, err);
	/* a byte more than the fields take */
	buf[8]++;
	ASSERT_EQ(it_agent_parse(buf, n + 1, &o, err, sizeof(err)), -1, "trailing byte refused");
	/* the type past the last one this version has */
	buf[6] = IT_MSG_LAST + 1;
	ASSERT_EQ(it_agent_parse(buf, n, &o, err, sizeof(err)), -1, "unknown type refused");
}

TEST(query_store_settings)
{
	struct it_query_settings s;
	char err[300], text[64];
	uint32_t code;

	it_query_settings_default(&s);
	ASSERT_U64_EQ(s.window_ns, 1000000000ull, "default window 1 s");
	ASSERT_EQ(it_query_store(&s, "window", "2.5s", &code, err, sizeof(err)), 0, "window");
	ASSERT_U64_EQ(s.window_ns, 2500000000ull, "window set");
	it_query_setting_text(&s, "window", text, sizeof(text));
	ASSERT_STREQ(text, "2.5s", "window as text");
	ASSERT_EQ(it_query_store(&s, "percentiles", "50,p99.9,99.99", &code, err, sizeof(err)),
		  0, "percentiles");
	it_query_setting_text(&s, "percentiles", text, sizeof(text));
	ASSERT_STREQ(text, "50,99.9,99.99", "percentiles as text");
	ASSERT_EQ(it_query_store(&s, "percentiles", "99,50", &code, err, sizeof(err)), -1,
		  "descending refused");
	ASSERT_EQ(code, IT_AERR_BAD, "a bad value");
	ASSERT_EQ(s.npct, 3, "the set is unchanged by a refused store");
	ASSERT_EQ(it_query_store(&s, "predicate", "dev==sda", &code, err, sizeof(err)), -1,
		  "predicate");
	ASSERT_EQ(code, IT_AERR_UNSUPPORTED, "not supported yet");
	ASSERT_TRUE(strstr(err, "not supported by this agent yet") != NULL, err);
	ASSERT_EQ(it_query_store(&s, "sampling", "0.1", &code, err, sizeof(err)), -1, "sampling");
	ASSERT_EQ(code, IT_AERR_UNSUPPORTED, "sampling not supported yet");
	ASSERT_EQ(it_query_store(&s, "colour", "red", &code, err, sizeof(err)), -1, "unknown");
	ASSERT_EQ(code, IT_AERR_BAD, "unknown setting");
}

/*
 * The spool: the recording starts at 1 s; I/O k (0..19) on loop0 is queued
 * at 1 s + k * 100 ms, issued 10 us later and completed (k + 1) us after
 * that: D2C = (k + 1) us, even k reads, odd k writes. One more read on a
 * second disk completes at 2.05 s.
 */
#define REC_START 1000000000ull
#define MS 1000000ull

static int write_spool(const char *path, bool close)
{
	struct it_host_rec host = { .start_monotonic_ns = REC_START, .ncpus = 1 };
	struct it_device_rec devs[2] = { { .dev = DEV_A }, { .dev = DEV_B } };
	struct it_trace_head head = { .host = &host, .devs = devs, .ndevs = 2,
				      .layers = it_layer_builtin(IT_LAYER_BLOCK), .nlayers = 1 };
	struct it_event ev[64];
	struct it_writer *w;
	char err[200];
	size_t n = 0;

	snprintf(host.clock, sizeof(host.clock), "monotonic");
	snprintf(devs[0].name, sizeof(devs[0].name), "loop0");
	snprintf(devs[1].name, sizeof(devs[1].name), "nvme0n1");
	if (!(w = it_writer_open(path, &head, err, sizeof(err))))
		return -1;
	for (unsigned k = 0; k < 20; k++) {
		uint64_t q = REC_START + k * 100 * MS, d = q + 10000, c = d + (k + 1) * 1000ull;
		uint8_t op = k % 2 ? IT_OP_WRITE : IT_OP_READ;

		ev[n++] = Q(q, 1000 + k, DEV_A, k * 8, K4, op);
		ev[n++] = D(d, 5000 + k, 1000 + k, DEV_A, k * 8, K4, op);
		ev[n++] = C(c, 5000 + k, DEV_A, K4);
		if (k == 10) { /* the other disk's read, at 2.05 s */
			ev[n++] = Q(2050 * MS, 900, DEV_B, 0, K4, IT_OP_READ);
			ev[n++] = D(2050 * MS + 1000, 901, 900, DEV_B, 0, K4, IT_OP_READ);
			ev[n++] = C(2050 * MS + 3000, 901, DEV_B, K4);
		}
	}
	if (it_writer_add_events(w, IT_LAYER_BLOCK, ev, n) || it_writer_flush(w)) {
		it_writer_abort(w);
		return -1;
	}
	if (!close)
		return 0; /* left as a recorder leaves it between flushes (the writer leaks) */
	return it_writer_close(w, REC_START + 3000 * MS);
}

static int load(const char *spool, const char *instr, uint64_t reset, uint64_t now,
		struct it_agent_msg *a, char *err, size_t errlen)
{
	struct it_query_settings set;
	struct it_agent_msg m;

	it_query_settings_default(&set);
	if (it_query_parse(instr, &m, err, errlen))
		return -2;
	return it_query_load(spool, &m, &set, reset, now, a, err, errlen);
}

TEST(query_load_window)
{
	char path[] = "/tmp/it-query.XXXXXX", err[300];
	struct it_agent_msg a;
	int fd = mkstemp(path);

	ASSERT_TRUE(fd >= 0, "temporary file");
	close(fd);
	ASSERT_EQ(write_spool(path, true), 0, "spool written");
	/* now 3.5 s: the window ends 0.5 s before (the spool's lag), at 3 s,
	 * and starts 1 s earlier: I/Os 10..19 completed in it, and the other disk's */
	ASSERT_EQ(load(path, "load block.d2c dev=loop0", 0, 3500 * MS, &a, err, sizeof(err)), 0,
		  err);
	ASSERT_EQ(a.type, IT_MSG_STATS, "answer");
	ASSERT_U64_EQ(a.u.stats.start_ns, 2000 * MS, "window start");
	ASSERT_U64_EQ(a.u.stats.end_ns, 3000 * MS, "window end");
	ASSERT_U64_EQ(a.u.stats.window.ios, 10, "I/Os 10..19");
	ASSERT_U64_EQ(a.u.stats.window.count, 10, "each has D2C");
	ASSERT_U64_EQ(a.u.stats.window.bytes, 10 * K4, "bytes");
	ASSERT_U64_EQ(a.u.stats.window.min, 11000, "min D2C: I/O 10");
	ASSERT_U64_EQ(a.u.stats.window.max, 20000, "max D2C: I/O 19");
	ASSERT_U64_EQ(a.u.stats.window.sum, 155000, "sum of 11..20 us");
	ASSERT_EQ(a.u.stats.npct, 4, "the agent's percentile set");
	ASSERT_NEAR((double)a.u.stats.window.pct_ns[0], 15000, 150, "p50: the 5th of 10 (1%)");
	ASSERT_U64_EQ(a.u.stats.window.pct_ns[3], 20000, "p99.9: the max");
	/* since reset (never reset): from the recording's start, every I/O of loop0 */
	ASSERT_U64_EQ(a.u.stats.reset_ns, REC_START, "since the recording started");
	ASSERT_U64_EQ(a.u.stats.since_reset.count, 20, "all of loop0's");
	ASSERT_U64_EQ(a.u.stats.dropped, 0, "nothing lost");

	ASSERT_EQ(load(path, "load block.d2c", 0, 3500 * MS, &a, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.count, 11, "every device: the other disk's read too");

	ASSERT_EQ(load(path, "load block.d2c op=read dev=loop0", 2500 * MS, 3500 * MS, &a, err,
		       sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.count, 5, "reads 10, 12, .. 18");
	ASSERT_U64_EQ(a.u.stats.window.min, 11000, "read 10");
	ASSERT_U64_EQ(a.u.stats.since_reset.count, 2, "reads completed after 2.5 s: 16, 18");
	ASSERT_U64_EQ(a.u.stats.reset_ns, 2500 * MS, "since the reset");

	ASSERT_EQ(load(path, "load block.d2c window=60s p90", 0, 3500 * MS, &a, err,
		       sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.start_ns, REC_START, "a long window starts with the recording");
	ASSERT_U64_EQ(a.u.stats.window.count, 21, "all 21 I/Os");
	ASSERT_EQ(a.u.stats.npct, 1, "the percentile asked");

	ASSERT_EQ(load(path, "load block.i2d", 0, 3500 * MS, &a, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.ios, 11, "I/Os in the window");
	ASSERT_U64_EQ(a.u.stats.window.count, 0, "none was inserted: no I2D");
	ASSERT_U64_EQ(a.u.stats.window.min, 0, "an empty stage's min is 0");

	/* a reset after the window's end: nothing since, until new I/O */
	ASSERT_EQ(load(path, "load block.q2c", 3200 * MS, 3500 * MS, &a, err, sizeof(err)), 0,
		  err);
	ASSERT_U64_EQ(a.u.stats.since_reset.count, 0, "0 since reset");
	ASSERT_U64_EQ(a.u.stats.reset_ns, a.u.stats.end_ns, "an empty span");

	ASSERT_EQ(load(path, "load block.d2c dev=sdz", 0, 3500 * MS, &a, err, sizeof(err)), -1,
		  "unknown device");
	ASSERT_TRUE(strstr(err, "no device 'sdz'") && strstr(err, "loop0 nvme0n1"), err);
	unlink(path);
	ASSERT_EQ(load(path, "load block.d2c", 0, 3500 * MS, &a, err, sizeof(err)), -1,
		  "no spool");
}

TEST(query_load_open_spool)
{
	char path[] = "/tmp/it-query.XXXXXX", err[300];
	struct it_agent_msg a;
	int fd = mkstemp(path);

	ASSERT_TRUE(fd >= 0, "temporary file");
	close(fd);
	ASSERT_EQ(write_spool(path, false), 0, "spool flushed, not closed");
	ASSERT_EQ(load(path, "load block.q2c window=60s", 0, 3500 * MS, &a, err, sizeof(err)), 0,
		  err);
	ASSERT_U64_EQ(a.u.stats.window.count, 21, "a spool being written is read to its last chunk");
	/* now before the lag has passed: an empty window at the recording's start */
	ASSERT_EQ(load(path, "load block.q2c", 0, REC_START + 100 * MS, &a, err, sizeof(err)), 0,
		  err);
	ASSERT_U64_EQ(a.u.stats.start_ns, REC_START, "start");
	ASSERT_U64_EQ(a.u.stats.end_ns, REC_START, "end");
	ASSERT_U64_EQ(a.u.stats.window.ios, 0, "nothing yet");
	unlink(path);
}

TEST(query_switch_names_are_the_reports)
{
	for (size_t i = 0; i < it_nswitches; i++) {
		const struct it_switch *s = &it_switches[i];
		char want[40];

		if (s->layer == IT_SW_BLOCK) {
			snprintf(want, sizeof(want), "block.%s", it_stages[s->stage].name);
			for (char *p = want; *p; p++)
				*p = (char)tolower((unsigned char)*p);
			ASSERT_STREQ(s->name, want, "a switch is named as the report names its stage");
		} else {
			ASSERT_TRUE(it_target_stage(s->name) >= 0, s->name);
		}
		ASSERT_TRUE(it_switch_find(s->name) == s, "found by its name");
	}
	ASSERT_TRUE(it_switch_find("target.dev") != NULL, "target.dev");
}

/*
 * A target's spool: ten read commands from initiator controllers 7 (even
 * k) and 8 (odd k), command k parsed at 1 s + k * 100 ms, its backend
 * started 1 us later and the command completed (k + 1) * 10 us after that
 * (target.dev); command 4 instead takes 200 ms, across 1.5 s (0.5 s into
 * the recording).
 */
extern const struct it_layer_rec it_nvmet_records; /* src/layers/nvmet/records.c */

static struct it_event nvmet_ev(uint8_t type, uint64_t ts, unsigned k)
{
	struct it_event e = ev_base(type, ts, 0xa000 + k, 0);

	e.layer = IT_LAYER_NVMET;
	e.nvmet.cntlid = k % 2 ? 8 : 7;
	e.nvmet.qid = 1;
	e.nvmet.cid = (uint16_t)k;
	e.nvmet.opcode = IT_NVME_READ;
	e.nvmet.bytes = K4;
	return e;
}

static int by_time(const void *a, const void *b)
{
	const struct it_event *x = a, *y = b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int write_target_spool(const char *path)
{
	struct it_host_rec host = { .start_monotonic_ns = REC_START, .ncpus = 1 };
	struct it_layer_rec layers[2] = { *it_layer_builtin(IT_LAYER_BLOCK), it_nvmet_records };
	struct it_trace_head head = { .host = &host, .layers = layers, .nlayers = 2 };
	struct it_event ev[30];
	struct it_writer *w;
	char err[200];
	size_t n = 0;

	snprintf(host.clock, sizeof(host.clock), "monotonic");
	if (!(w = it_writer_open(path, &head, err, sizeof(err))))
		return -1;
	for (unsigned k = 0; k < 10; k++) {
		uint64_t ti = REC_START + k * 100 * MS, tx = ti + 1000;
		uint64_t tc = tx + (k == 4 ? 200 * MS : (k + 1) * 10000ull);

		ev[n++] = nvmet_ev(IT_EV_NVMET_INIT, ti, k);
		ev[n++] = nvmet_ev(IT_EV_NVMET_EXECUTE, tx, k);
		ev[n++] = nvmet_ev(IT_EV_NVMET_COMPLETE, tc, k);
	}
	qsort(ev, n, sizeof(*ev), by_time);
	if (it_writer_add_events(w, IT_LAYER_NVMET, ev, n)) {
		it_writer_abort(w);
		return -1;
	}
	return it_writer_close(w, REC_START + 2000 * MS);
}

TEST(query_load_target)
{
	char path[] = "/tmp/it-query.XXXXXX", err[300];
	struct it_agent_msg a;
	int fd = mkstemp(path);
	const uint64_t now = REC_START + 1500 * MS; /* the window ends at 1 s after the start */

	ASSERT_TRUE(fd >= 0, "temporary file");
	close(fd);
	ASSERT_EQ(write_target_spool(path), 0, "spool written");
	/* window 0.5 s .. 1 s: commands 5..9 (4 was parsed before it) */
	ASSERT_EQ(load(path, "load target.dev window=500ms", 0, now, &a, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.ios, 5, "commands 5..9");
	ASSERT_U64_EQ(a.u.stats.window.count, 5, "each with target.dev");
	ASSERT_U64_EQ(a.u.stats.window.sum, (6 + 7 + 8 + 9 + 10) * 10000ull, "their device time");
	ASSERT_U64_EQ(a.u.stats.window.min, 60000, "command 5");
	ASSERT_U64_EQ(a.u.stats.window.max, 100000, "command 9");
	ASSERT_EQ(a.u.stats.stats, IT_QS_ALL & ~IT_QS_BYTES, "no bytes: the join has none");
	ASSERT_U64_EQ(a.u.stats.since_reset.ios, 10, "since the start: all ten");

	ASSERT_EQ(load(path, "load target.dev window=500ms ctrl=7 op=read", REC_START + 750 * MS,
		       now, &a, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.count, 2, "controller 7's: 6 and 8");
	ASSERT_U64_EQ(a.u.stats.window.sum, (7 + 9) * 10000ull, "their device time");
	ASSERT_U64_EQ(a.u.stats.since_reset.count, 1, "since 0.75 s: 8");

	ASSERT_EQ(load(path, "load target.queue window=2s", 0, now, &a, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.count, 10, "target.queue: parsed -> backend");
	ASSERT_U64_EQ(a.u.stats.window.max, 1000, "1 us each");
	ASSERT_EQ(load(path, "load target.sendq", 0, now, &a, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.count, 0, "no PDU sends traced: no target.sendq");
	ASSERT_EQ(load(path, "load target.dev op=write", 0, now, &a, err, sizeof(err)), 0, err);
	ASSERT_U64_EQ(a.u.stats.window.ios, 0, "no writes");

	ASSERT_EQ(load(path, "load target.dev dev=loop0", 0, now, &a, err, sizeof(err)), -1,
		  "a device filter on a target switch");
	ASSERT_TRUE(strstr(err, "per initiator controller: give ctrl=CNTLID") != NULL, err);
	ASSERT_EQ(load(path, "load target.dev op=discard", 0, now, &a, err, sizeof(err)), -1,
		  "an op without an NVMe opcode here");
	ASSERT_TRUE(strstr(err, "op=discard") != NULL, err);
	unlink(path);
}
