// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The agent protocol's parser and encoder (every message round trip, cut
 * and bad frames, limits, another version), the NTP-like clock arithmetic,
 * and the merge of an initiator's and a target's trace into one file.
 */
#include "harness.h"
#include "agent/proto.h"
#include "layer_table.h"
#include "trace_merge.h"
#include "tracefile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static long roundtrip(const struct it_agent_msg *in, struct it_agent_msg *out, uint8_t *buf,
		      size_t cap)
{
	char err[160];
	size_t n = it_agent_encode(in, buf, cap);

	if (!n)
		return -2;
	return it_agent_parse(buf, n, out, err, sizeof(err));
}

TEST(agent_msg_roundtrip)
{
	uint8_t buf[IT_AGENT_HDR + IT_AGENT_MAX_MSG];
	struct it_agent_msg m = { .type = IT_MSG_HELLO, .u.hello.version = 1 }, o;
	long n;

	snprintf(m.u.hello.software, sizeof(m.u.hello.software), "iotrail");
	snprintf(m.u.hello.host, sizeof(m.u.hello.host), "target-7");
	n = roundtrip(&m, &o, buf, sizeof(buf));
	ASSERT_EQ(n, IT_AGENT_HDR + 100, "HELLO length");
	ASSERT_EQ(o.type, IT_MSG_HELLO, "HELLO type");
	ASSERT_EQ(o.version, IT_AGENT_VERSION, "frame version");
	ASSERT_STREQ(o.u.hello.host, "target-7", "HELLO host");

	m = (struct it_agent_msg){ .type = IT_MSG_START };
	snprintf(m.u.start.layers, sizeof(m.u.start.layers), "block,syscall");
	snprintf(m.u.start.devs, sizeof(m.u.start.devs), "nvme0n1,loop3");
	ASSERT_GE(roundtrip(&m, &o, buf, sizeof(buf)), IT_AGENT_HDR, "START parses");
	ASSERT_STREQ(o.u.start.layers, "block,syscall", "START layers");
	ASSERT_STREQ(o.u.start.devs, "nvme0n1,loop3", "START devs");

	m = (struct it_agent_msg){ .type = IT_MSG_CLOCK, .u.clock = { 1, 2, 3, true } };
	ASSERT_EQ(roundtrip(&m, &o, buf, sizeof(buf)), IT_AGENT_HDR + 24, "CLOCK reply length");
	ASSERT_TRUE(o.u.clock.reply && o.u.clock.t1 == 1 && o.u.clock.t2 == 2 && o.u.clock.t3 == 3,
		    "CLOCK reply times");
	m.u.clock.reply = false;
	ASSERT_EQ(roundtrip(&m, &o, buf, sizeof(buf)), IT_AGENT_HDR + 8, "CLOCK request length");
	ASSERT_TRUE(!o.u.clock.reply, "CLOCK request is no reply");

	m = (struct it_agent_msg){ .type = IT_MSG_ERROR, .u.error.code = IT_AERR_BUSY };
	snprintf(m.u.error.text, sizeof(m.u.error.text), "the agent is busy");
	ASSERT_GE(roundtrip(&m, &o, buf, sizeof(buf)), IT_AGENT_HDR, "ERROR parses");
	ASSERT_EQ(o.u.error.code, IT_AERR_BUSY, "ERROR code");
	ASSERT_STREQ(o.u.error.text, "the agent is busy", "ERROR text");

	m = (struct it_agent_msg){ .type = IT_MSG_PULL };
	ASSERT_EQ(roundtrip(&m, &o, buf, sizeof(buf)), IT_AGENT_HDR, "PULL is a header");
	ASSERT_EQ(o.type, IT_MSG_PULL, "PULL type");
}

TEST(agent_msg_data)
{
	uint8_t buf[64], payload[5] = { 9, 8, 7, 6, 5 };
	struct it_agent_msg m = { .type = IT_MSG_DATA, .u.data = { IT_DATA_FINAL, payload, 5 } }, o;
	char err[160];
	size_t n = it_agent_encode(&m, buf, sizeof(buf));

	ASSERT_EQ(n, IT_AGENT_HDR + 4, "DATA header and flags");
	memcpy(buf + n, payload, 5); /* what the sender writes after */
	ASSERT_EQ(it_agent_parse(buf, n + 5, &o, err, sizeof(err)), n + 5, "DATA whole");
	ASSERT_EQ(o.u.data.len, 5, "DATA length");
	ASSERT_EQ(o.u.data.flags, IT_DATA_FINAL, "DATA flags");
	ASSERT_TRUE(!memcmp(o.u.data.bytes, payload, 5), "DATA bytes");
	/* every cut of the frame asks for more, none is taken */
	for (size_t cut = 0; cut < n + 5; cut++)
		ASSERT_EQ(it_agent_parse(buf, cut, &o, err, sizeof(err)), 0, "cut frame");
}

TEST(agent_msg_bad)
{
	uint8_t buf[IT_AGENT_HDR + IT_AGENT_MAX_MSG];
	struct it_agent_msg m = { .type = IT_MSG_PULL }, o;
	char err[160];
	size_t n = it_agent_encode(&m, buf, sizeof(buf));

	buf[0] ^= 1;
	ASSERT_EQ(it_agent_parse(buf, n, &o, err, sizeof(err)), -1, "wrong magic");
	ASSERT_TRUE(strstr(err, "magic") != NULL, "magic named");
	buf[0] ^= 1;
	buf[6] = 99; /* type */
	ASSERT_EQ(it_agent_parse(buf, n, &o, err, sizeof(err)), -1, "unknown type");
	buf[6] = IT_MSG_PULL;
	buf[8] = 1; /* a PULL with a payload */
	buf[IT_AGENT_HDR] = 0;
	ASSERT_EQ(it_agent_parse(buf, n + 1, &o, err, sizeof(err)), -1, "PULL with a payload");
	/* over the limit: refused from the header alone */
	buf[8] = 0;
	buf[9] = 0x20; /* 8 KiB for a PULL */
	ASSERT_EQ(it_agent_frame_len(buf, IT_AGENT_HDR, err, sizeof(err)), -1, "over the limit");
	/* a string with a control byte, a HELLO without its NUL */
	m = (struct it_agent_msg){ .type = IT_MSG_ERROR };
	snprintf(m.u.error.text, sizeof(m.u.error.text), "ab");
	n = it_agent_encode(&m, buf, sizeof(buf));
	buf[n - 1] = '\n';
	ASSERT_EQ(it_agent_parse(buf, n, &o, err, sizeof(err)), -1, "control byte in a string");
	m = (struct it_agent_msg){ .type = IT_MSG_HELLO };
	n = it_agent_encode(&m, buf, sizeof(buf));
	memset(buf + IT_AGENT_HDR + 36, 'x', 64);
	ASSERT_EQ(it_agent_parse(buf, n, &o, err, sizeof(err)), -1, "HELLO host without NUL");
	/* another version: handed back whole, unparsed, for the caller's answer */
	m = (struct it_agent_msg){ .type = IT_MSG_HELLO, .version = 7 };
	n = it_agent_encode(&m, buf, sizeof(buf));
	ASSERT_EQ(it_agent_parse(buf, n, &o, err, sizeof(err)), (long)n, "version 7 frame taken");
	ASSERT_EQ(o.version, 7, "its version told");
}

TEST(agent_clock_offset)
{
	struct it_clock_sample s, best = { .rtt = UINT64_MAX };

	/* agent 1000 ns ahead, 100 ns each way, 50 ns in the agent */
	ASSERT_TRUE(it_clock_sample(10000, 11100, 11150, 10250, &s), "sample");
	ASSERT_EQ(s.theta, 1000, "offset");
	ASSERT_EQ(s.rtt, 200, "round trip");
	ASSERT_TRUE(it_clock_keep_best(&best, &s), "first kept");
	/* asymmetric and slower: offset off, but within half its round trip */
	ASSERT_TRUE(it_clock_sample(20000, 21500, 21550, 20650, &s), "slow sample");
	ASSERT_EQ(s.rtt, 600, "slow round trip");
	ASSERT_LE(llabs(s.theta - 1000), s.rtt / 2, "error within rtt/2");
	ASSERT_TRUE(!it_clock_keep_best(&best, &s), "slower one not kept");
	ASSERT_EQ(best.theta, 1000, "best offset");
	/* the agent behind: negative offset */
	ASSERT_TRUE(it_clock_sample(5000, 4100, 4120, 5220, &s), "behind");
	ASSERT_EQ(s.theta, -1000, "negative offset");
	/* impossible timestamps are refused */
	ASSERT_TRUE(!it_clock_sample(100, 50, 40, 200, &s), "t3 before t2");
	ASSERT_TRUE(!it_clock_sample(100, 50, 60, 90, &s), "t4 before t1");
	ASSERT_TRUE(!it_clock_sample(100, 0, 500, 200, &s), "agent time longer than the trip");
}

/* A one-layer trace with n block events starting at ts; end: write END. */
static int write_trace(const char *path, const char *host, size_t n, uint64_t ts, bool end)
{
	struct it_host_rec h = { .ncpus = 1, .start_monotonic_ns = ts };
	struct it_device_rec d = { .dev = 7 << 20, .name = "loop0" };
	struct it_trace_head head = { .host = &h, .devs = &d, .ndevs = 1,
				      .layers = it_layer_builtin(IT_LAYER_BLOCK), .nlayers = 1 };
	char err[200];
	struct it_writer *w;

	snprintf(h.hostname, sizeof(h.hostname), "%s", host);
	if (!(w = it_writer_open(path, &head, err, sizeof(err))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct it_event e = { .ts_ns = ts + i * 1000, .type = IT_EV_RQ_COMPLETE, .id = i,
				      .dev = 7 << 20, .bytes = 4096, .layer = IT_LAYER_BLOCK };

		if (it_writer_add_events(w, IT_LAYER_BLOCK, &e, 1))
			return -1;
		if (i % 100 == 99)
			it_writer_flush(w);
	}
	if (!end) {
		it_writer_flush(w);
		it_writer_abort(w);
		return 0;
	}
	return it_writer_close(w, ts + n * 1000);
}

/* Events per machine (machines 0..n-1; others are counted in the last). */
static void count_machine_events(const char *path, uint64_t *per, size_t n)
{
	const struct it_select sel = { IT_ANY, IT_ANY, IT_CHUNK_EVENTS };
	char err[200];
	struct it_chunk c;
	struct it_reader *r = it_reader_open_select(path, &sel, 1, err, sizeof(err));

	memset(per, 0, n * sizeof(*per));
	while (r && it_reader_next_chunk(r, &c) == 1)
		per[c.machine < n ? c.machine : n - 1] += c.count;
	it_reader_close(r);
}

static void count_events(const char *path, uint64_t *m0, uint64_t *m1)
{
	uint64_t per[2];

	count_machine_events(path, per, 2);
	*m0 = per[0];
	*m1 = per[1];
}

TEST(agent_merge)
{
	char dir[] = "/tmp/it-merge.XXXXXX", local[64], target[64], out[64], err[300];
	struct it_merge_target t = { .clock.offset_ns = -1500, .clock.uncertainty_ns = 20000 };
	struct it_merge_result res;
	struct it_reader_status st;
	const struct it_machine *ms;
	const struct it_note_rec *notes;
	const struct it_clock_rec *c;
	uint64_t m0, m1;
	struct it_reader *r;
	size_t n;

	if (!mkdtemp(dir))
		SKIP("no temporary directory");
	snprintf(local, sizeof(local), "%s/local", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(t.clock.method, sizeof(t.clock.method), "test");
	t.path = target;
	ASSERT_EQ(write_trace(local, "ini", 250, 1000000, true), 0, "local trace");
	ASSERT_EQ(write_trace(target, "tgt", 330, 2000000, true), 0, "target trace");
	ASSERT_EQ(it_trace_merge(out, local, &t, 1, &res, err, sizeof(err)), 0, err);
	ASSERT_EQ(res.target_events, 330, "target events copied");
	ASSERT_TRUE(res.target_complete, "target complete");
	count_events(out, &m0, &m1);
	ASSERT_EQ(m0, 250, "machine 0 events");
	ASSERT_EQ(m1, 330, "machine 1 events");
	r = it_reader_open(out, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err))
		return;
	ms = it_reader_machines(r, &n);
	ASSERT_EQ(n, 2, "two machines");
	ASSERT_STREQ(ms[1].host.hostname, "tgt", "machine 1 host");
	ASSERT_EQ(ms[1].ndevs, 1, "machine 1 devices");
	c = it_reader_clock(r, 1);
	ASSERT_TRUE(c && c->offset_ns == -1500 && c->uncertainty_ns == 20000 && !c->ref_machine,
		    "clock kept");
	notes = it_reader_notes(r, &n);
	ASSERT_EQ(n, 0, "no note for a whole target");
	while (it_reader_next(r, &(const struct it_event *){ NULL }, &n) == 1)
		;
	it_reader_status(r, &st);
	ASSERT_TRUE(st.complete && !st.truncated, "merged file complete");
	ASSERT_EQ(st.events, 250, "the default reader hands out machine 0 only");
	it_reader_close(r);

	/* a target cut short (its agent lost): a NOTE, the file still whole */
	ASSERT_EQ(write_trace(target, "tgt", 330, 2000000, false), 0, "cut target trace");
	t.lost = "agent 10.0.0.2:4790 lost: connection reset";
	t.lost_at_ns = 1200000;
	ASSERT_EQ(it_trace_merge(out, local, &t, 1, &res, err, sizeof(err)), 0, err);
	ASSERT_TRUE(!res.target_complete, "target incomplete");
	count_events(out, &m0, &m1);
	ASSERT_EQ(m1, 330, "machine 1 events up to its last chunk");
	r = it_reader_open(out, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err))
		return;
	notes = it_reader_notes(r, &n);
	ASSERT_EQ(n, 1, "one note");
	ASSERT_TRUE(n == 1 && notes[0].machine == 1 && notes[0].kind == IT_NOTE_LOST &&
		    strstr(notes[0].text, "lost") && notes[0].at_ns == 1200000, "the note");
	it_reader_close(r);

	/* no target data at all: an error, nothing at out */
	unlink(out);
	truncate(target, 0);
	ASSERT_EQ(it_trace_merge(out, local, &t, 1, &res, err, sizeof(err)), -1, "empty target");
	ASSERT_TRUE(access(out, F_OK) != 0, "nothing written");
	unlink(local);
	unlink(target);
	rmdir(dir);
}

/* Two targets, the second's agent lost: machines 1 and 2 each with their
 * own head, clock and events; the NOTE names machine 2 alone. */
TEST(agent_merge_two_targets)
{
	char dir[] = "/tmp/it-merge2.XXXXXX", local[64], t1[64], t2[64], out[64], err[300];
	const struct it_clock_est_rec est = { .method = 1, .offset_ns = -1400, .ref_ns = 2000000,
					      .slope = -5e-6, .uncertainty_ns = 900, .samples = 42,
					      .flags = IT_CLOCK_EST_DRIFT_KNOWN };
	const struct it_clock_window_rec win[2] = { { 2000000, -1450, 300 }, { 3000000, -1350, 200 } };
	const struct it_clock_window_rec *gotw;
	const struct it_clock_est_rec *got;
	struct it_merge_target t[2] = {
		{ .clock.offset_ns = -1500, .clock.uncertainty_ns = 20000, .est = &est,
		  .windows = win, .nwindows = 2 },
		{ .clock.offset_ns = 7000, .clock.uncertainty_ns = 30000,
		  .lost = "agent 10.0.0.3:4790 lost: connection reset", .lost_at_ns = 1500000 },
	};
	struct it_merge_result res[2];
	const struct it_machine *ms;
	const struct it_note_rec *notes;
	const struct it_clock_rec *c1, *c2;
	uint64_t per[4];
	struct it_reader *r;
	size_t n;

	if (!mkdtemp(dir))
		SKIP("no temporary directory");
	snprintf(local, sizeof(local), "%s/local", dir);
	snprintf(t1, sizeof(t1), "%s/target1", dir);
	snprintf(t2, sizeof(t2), "%s/target2", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	t[0].path = t1;
	t[1].path = t2;
	ASSERT_EQ(write_trace(local, "ini", 250, 1000000, true), 0, "local trace");
	ASSERT_EQ(write_trace(t1, "tgt1", 330, 2000000, true), 0, "target 1 trace");
	ASSERT_EQ(write_trace(t2, "tgt2", 170, 3000000, false), 0, "target 2 trace, cut");
	ASSERT_EQ(it_trace_merge(out, local, t, 2, res, err, sizeof(err)), 0, err);
	ASSERT_TRUE(res[0].target_complete, "machine 1 complete");
	ASSERT_TRUE(!res[1].target_complete, "machine 2 incomplete");
	ASSERT_EQ(res[0].target_events, 330, "machine 1 events copied");
	ASSERT_EQ(res[1].target_events, 170, "machine 2 events copied");
	count_machine_events(out, per, 4);
	ASSERT_EQ(per[0], 250, "machine 0 events");
	ASSERT_EQ(per[1], 330, "machine 1 events");
	ASSERT_EQ(per[2], 170, "machine 2 events");
	ASSERT_EQ(per[3], 0, "no other machine");
	r = it_reader_open(out, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err))
		return;
	ms = it_reader_machines(r, &n);
	ASSERT_EQ(n, 3, "three machines");
	ASSERT_TRUE(n == 3 && !strcmp(ms[1].host.hostname, "tgt1") &&
		    !strcmp(ms[2].host.hostname, "tgt2"), "each machine its own host");
	c1 = it_reader_clock(r, 1);
	c2 = it_reader_clock(r, 2);
	ASSERT_TRUE(c1 && c1->offset_ns == -1500 && c1->machine == 1, "machine 1's clock");
	ASSERT_TRUE(c2 && c2->offset_ns == 7000 && c2->uncertainty_ns == 30000 && c2->machine == 2,
		    "machine 2's clock");
	notes = it_reader_notes(r, &n);
	ASSERT_EQ(n, 1, "one note");
	ASSERT_TRUE(n == 1 && notes[0].machine == 2 && strstr(notes[0].text, "10.0.0.3"),
		    "the note names machine 2's agent");
	got = it_reader_clock_est(r, 1, &gotw, &n);
	ASSERT_TRUE(got && got->machine == 1 && got->offset_ns == -1400 && got->slope == -5e-6 &&
		    got->samples == 42 && got->flags == IT_CLOCK_EST_DRIFT_KNOWN,
		    "machine 1's stored estimate");
	ASSERT_TRUE(n == 2 && gotw && gotw[1].offset_ns == -1350 && gotw[1].rtt_ns == 200,
		    "its windows");
	ASSERT_TRUE(!it_reader_clock_est(r, 2, &gotw, &n) && !gotw && !n,
		    "machine 2 has none stored");
	it_reader_close(r);
	unlink(local);
	unlink(t1);
	unlink(t2);
	unlink(out);
	rmdir(dir);
}
