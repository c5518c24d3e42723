// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The uprobe layer's analysis on synthetic records: hits per probe, spans
 * paired per thread (nested, unmatched, left open), their durations and
 * the block I/Os of the same process inside them (trails from the bus). */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "harness.h"
#include "iotrail/syscall.h"
#include "layers/uprobe/uprobe.h"

static struct it_uprobe_def def(uint32_t id, const char *label)
{
	struct it_uprobe_def d = { .probe = id, .kind = IT_UPROBE_USDT };

	snprintf(d.label, sizeof(d.label), "%s", label);
	snprintf(d.symbol, sizeof(d.symbol), "%s", label);
	snprintf(d.provider, sizeof(d.provider), "demo");
	snprintf(d.binary, sizeof(d.binary), "/bin/demo");
	return d;
}

static struct it_uprobe_hit hit(uint64_t ts, uint32_t pid, uint32_t tid, uint32_t probe)
{
	return (struct it_uprobe_hit){ .ts_ns = ts, .pid = pid, .tid = tid, .probe = probe };
}

static void trail(struct it_bus *b, uint32_t pid, uint64_t c)
{
	struct it_trail t;
	struct it_bus_trail m = { .t = &t };

	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.ts[IT_PT_C] = c;
	it_bus_publish(b, IT_BUS_TRAIL_DONE, &m);
}

/* The layer's JSON members as an object; the layer freed. */
static char *report_and_free(const struct it_analysis_layer *l, void *self,
			     const struct it_report_ctx *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct it_json j;

	it_json_init(&j, f, false);
	it_json_object_start(&j);
	l->report_json(self, &j, ctx);
	it_json_object_end(&j);
	fclose(f);
	l->free(self);
	return buf;
}

static char *run_json(bool events)
{
	const struct it_analysis_layer *l = &it_layer_uprobe;
	struct it_layer_opts opts = { .events = events };
	struct it_bus bus = { 0 };
	struct it_pass_info info = { .layers = (1u << IT_LAYER_UPROBE) | (1u << IT_LAYER_BLOCK),
				     .opts = &opts, .bus = &bus };
	struct it_report_ctx ctx = { .opts = &opts };
	struct it_uprobe_def defs[] = { def(0, "q__start"), def(1, "q__done"), def(2, "x-start"),
					def(3, "x-done"), def(4, "lonely") };
	/* in file order, not time order: rings of two CPUs */
	struct it_uprobe_hit hits[] = {
		hit(150, 10, 10, 0), hit(100, 10, 10, 0), hit(200, 10, 10, 1), hit(400, 10, 10, 1),
		hit(500, 10, 11, 1),  /* a done without its start: unmatched */
		hit(600, 10, 11, 0),  /* a start without its done: open */
		hit(1000, 12, 12, 2), hit(1100, 12, 12, 3), hit(50, 10, 10, 4),
	};
	struct it_span span = { .lost = 2 };
	void *self = l->new(&info);

	hits[8].nargs = 2;
	hits[8].args[0] = 7;
	hits[8].args[1] = (uint64_t)-1;
	ASSERT_TRUE(self != NULL, "new");
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_DEFS, defs, sizeof(defs), 5), 0, "defs");
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_HITS, hits, sizeof(hits), 9), 0, "hits");
	/* records of another size (a damaged or foreign manifest): skipped, counted */
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_HITS, hits, 8, 1), 0, "short records");
	trail(&bus, 10, 120);   /* inside the outer q (100-400) only */
	trail(&bus, 10, 180);   /* inside both q spans */
	trail(&bus, 11, 180);   /* another process: none */
	trail(&bus, 12, 1100);  /* x's end, inclusive */
	trail(&bus, 12, 1200);  /* after it */
	ASSERT_EQ(l->finish(self, &span), 0, "finish");
	return report_and_free(l, self, &ctx);
}

TEST(uprobe_spans_and_ios)
{
	char *s = run_json(false);

	ASSERT_TRUE(strstr(s, "\"hits\":9,\"lost\":2,\"skipped_chunks\":1,") != NULL, s);
	ASSERT_TRUE(strstr(s, "\"label\":\"q__start\",\"kind\":\"usdt\",\"binary\":\"/bin/demo\","
			      "\"provider\":\"demo\",\"name\":\"q__start\",\"hits\":3") != NULL, s);
	ASSERT_TRUE(strstr(s, "\"label\":\"q__done\",\"kind\":\"usdt\",\"binary\":\"/bin/demo\","
			      "\"provider\":\"demo\",\"name\":\"q__done\",\"hits\":3") != NULL, s);
	/* q: 150-200 (nested, innermost first) and 100-400; durations 50, 300 */
	ASSERT_TRUE(strstr(s, "{\"name\":\"q\",\"count\":2,\"open\":1,\"unmatched\":1,\"avg_ns\":175,"
			      "\"p50_ns\":50,\"p99_ns\":300,\"max_ns\":300,\"block_ios\":3,"
			      "\"spans_with_io\":2}") != NULL, s);
	ASSERT_TRUE(strstr(s, "{\"name\":\"x\",\"count\":1,\"open\":0,\"unmatched\":0,\"avg_ns\":100,"
			      "\"p50_ns\":100,\"p99_ns\":100,\"max_ns\":100,\"block_ios\":1,"
			      "\"spans_with_io\":1}") != NULL, s);
	ASSERT_TRUE(strstr(s, "\"events\"") == NULL, "no event list without --events");
	free(s);
}

TEST(uprobe_events_args)
{
	char *s = run_json(true);

	/* time order; the lonely hit first, with its two arguments (signed) */
	ASSERT_TRUE(strstr(s, "\"events\":[{\"ts_ns\":50,\"pid\":10,\"tid\":10,\"probe\":4,"
			      "\"args\":[7,-1]},{\"ts_ns\":100,") != NULL, s);
	free(s);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t json_u64(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : UINT64_MAX;
}

/* A long stream as a pass delivers it: hit chunks of 2000 (neighbours
 * swapped: two CPUs' rings), the block trails and the watermark between
 * them, some trails before the hits of their time and some after. The
 * report equals what the whole stream says (counts, I/Os inside, average
 * and max exact; p50 and p99 within the histogram's 1/128), while the
 * entries held stay a small fraction of the stream. */
TEST(uprobe_streamed_bounded)
{
	enum { N = 20000, CHUNK = 2000 };
	const struct it_analysis_layer *l = &it_layer_uprobe;
	struct it_layer_opts opts = { 0 };
	struct it_bus bus = { 0 };
	struct it_pass_info info = { .layers = (1u << IT_LAYER_UPROBE) | (1u << IT_LAYER_BLOCK),
				     .opts = &opts, .bus = &bus };
	struct it_report_ctx ctx = { .opts = &opts };
	struct it_uprobe_def defs[] = { def(0, "txn__start"), def(1, "txn__done") };
	struct it_uprobe_hit *hits = calloc(2 * N, sizeof(*hits));
	uint64_t *dur = calloc(N, sizeof(*dur)), sum = 0, want_ios = 0, want_with = 0, peak = 0;
	struct it_span span = { 0 };
	void *self = l->new(&info);
	size_t trails_out = 0, ntrails = 0;
	struct { uint32_t pid; uint64_t c; } *trails = calloc(4 * N, sizeof(*trails));

	ASSERT_TRUE(self && hits && dur && trails, "memory");
	for (uint64_t k = 0; k < N; k++) {
		uint64_t t = 1000000 + k * 1000000, d = 100000 + (k * 7919 % 1000) * 100;

		hits[2 * k] = hit(t, 100, 100, 0);
		hits[2 * k + 1] = hit(t + d, 100, 100, 1);
		dur[k] = d;
		sum += d;
		for (uint64_t i = 0; i < k % 3; i++) /* inside the span */
			trails[ntrails++].c = t + 10000 * (i + 1), trails[ntrails - 1].pid = 100;
		trails[ntrails++].c = t + 500000, trails[ntrails - 1].pid = 100; /* after it */
		trails[ntrails++].c = t + 20000, trails[ntrails - 1].pid = 200; /* another process */
		want_ios += k % 3;
		want_with += k % 3 > 0;
	}
	for (size_t i = 0; i + 1 < 2 * N; i += 7) { /* rings of two CPUs */
		struct it_uprobe_hit x = hits[i];
		hits[i] = hits[i + 1];
		hits[i + 1] = x;
	}
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_DEFS, defs, sizeof(defs), 2), 0, "defs");
	for (size_t c = 0; c < 2 * N; c += CHUNK) {
		/* the trails up to 1 s after this chunk's first hit come first
		 * for odd chunks, after the hits for even ones */
		uint64_t upto = hits[c].ts_ns + 1000000000ull;
		for (int pass = 0; pass < 2; pass++) {
			if ((pass == 0) == ((c / CHUNK) % 2 == 1)) {
				while (trails_out < ntrails && trails[trails_out].c <= upto)
					trail(&bus, trails[trails_out].pid, trails[trails_out].c),
						trails_out++;
				uint64_t wm = trails_out ? trails[trails_out - 1].c - 600000 : 0;
				it_bus_publish(&bus, IT_BUS_BLOCK_WATERMARK, &wm);
			} else {
				ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_HITS, hits + c,
						  CHUNK * sizeof(*hits), CHUNK), 0, "hits");
			}
		}
	}
	while (trails_out < ntrails)
		trail(&bus, trails[trails_out].pid, trails[trails_out].c), trails_out++;
	ASSERT_EQ(l->finish(self, &span), 0, "finish");
	it_layer_uprobe_live(self, &peak);

	char *buf = report_and_free(l, self, &ctx);

	qsort(dur, N, sizeof(*dur), cmp_u64);
	const char *sp = strstr(buf, "{\"name\":\"txn\"");
	ASSERT_NOT_NULL(sp, buf);
	ASSERT_U64_EQ(json_u64(buf, "\"hits\":"), 2 * N, "hits");
	ASSERT_U64_EQ(json_u64(sp, "\"count\":"), N, "spans");
	ASSERT_U64_EQ(json_u64(sp, "\"open\":"), 0, "none open");
	ASSERT_U64_EQ(json_u64(sp, "\"unmatched\":"), 0, "none unmatched");
	ASSERT_U64_EQ(json_u64(sp, "\"avg_ns\":"), sum / N, "average, exact");
	ASSERT_U64_EQ(json_u64(sp, "\"max_ns\":"), dur[N - 1], "max, exact");
	ASSERT_NEAR((double)json_u64(sp, "\"p50_ns\":"), (double)dur[N / 2 - 1],
		    dur[N / 2 - 1] / 128.0 + 1, "p50 within 1/128");
	ASSERT_NEAR((double)json_u64(sp, "\"p99_ns\":"), (double)dur[N * 99 / 100 - 1],
		    dur[N * 99 / 100 - 1] / 128.0 + 1, "p99 within 1/128");
	ASSERT_U64_EQ(json_u64(sp, "\"block_ios\":"), want_ios, "I/Os inside the spans");
	ASSERT_U64_EQ(json_u64(sp, "\"spans_with_io\":"), want_with, "spans with I/O");
	ASSERT_TRUE(strstr(buf, "late_hits") == NULL, "no hit paired out of order");
	/* 40000 hits and 60000 I/Os went through (all of them held before);
	 * what may be held: a chunk of hits (2000), the I/Os of the second
	 * the trails run ahead (3000), twice over (pruned when they double) */
	ASSERT_LE(peak, 10000, "entries held at once: a tenth of the stream at most");
	ASSERT_GE(peak, CHUNK, "the counter counts (a chunk of hits at least)");
	free(buf);
	free(hits);
	free(dur);
	free(trails);
}

static void call(struct it_bus *b, uint32_t tid, uint16_t c, uint64_t enter, uint64_t exit,
		 uint32_t ios, uint64_t block_ns)
{
	struct it_bus_call m = { .tid = tid, .call = c, .ts_enter = enter, .ts_exit = exit,
				 .block_ns = block_ns, .block_ios = ios };
	it_bus_publish(b, IT_BUS_CALL_DONE, &m);
}

/* With the syscall layer: per span instance (a checkpoint on thread 10,
 * 1000-5000 ns), the sync calls of any thread entered and returned inside
 * it, each with its block I/Os: its own fsyncs, another thread's
 * fdatasync (the WAL writer's), not a read, not a call that returns after
 * the span's end, not one entered before it; published out of time order */
TEST(uprobe_span_sync_calls)
{
	const struct it_analysis_layer *l = &it_layer_uprobe;
	struct it_layer_opts opts = { 0 };
	struct it_bus bus = { 0 };
	struct it_pass_info info = { .layers = (1u << IT_LAYER_UPROBE) | (1u << IT_LAYER_SYSCALL),
				     .opts = &opts, .bus = &bus };
	struct it_host_rec host = { .start_monotonic_ns = 0 };
	struct it_report_ctx ctx = { .opts = &opts, .host = &host };
	struct it_uprobe_def defs[] = { def(0, "checkpoint__start"), def(1, "checkpoint__done") };
	struct it_uprobe_hit hits[] = { hit(1000, 10, 10, 0), hit(5000, 10, 10, 1) };
	struct it_span span = { 0 };
	void *self = l->new(&info);
	char *buf = NULL;
	size_t len = 0;

	ASSERT_TRUE(self != NULL, "new");
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_DEFS, defs, sizeof(defs), 2), 0, "defs");
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_HITS, hits, sizeof(hits), 2), 0, "hits");
	call(&bus, 10, IT_SYS_FSYNC, 3000, 4000, 7, 900);      /* the checkpointer's */
	call(&bus, 20, IT_SYS_FDATASYNC, 1500, 1800, 1, 200);  /* the WAL writer's */
	call(&bus, 10, IT_SYS_FSYNC, 2000, 2500, 3, 400);
	call(&bus, 10, IT_SYS_PREAD64, 2600, 2700, 1, 50);     /* not a sync call */
	call(&bus, 20, IT_SYS_FDATASYNC, 4900, 5100, 1, 100);  /* returns after the span */
	call(&bus, 20, IT_SYS_FDATASYNC, 900, 1100, 1, 100);   /* entered before it */
	ASSERT_EQ(l->finish(self, &span), 0, "finish");
	FILE *f = open_memstream(&buf, &len);
	l->report_text(self, f, &ctx);
	fclose(f);
	ASSERT_TRUE(strstr(buf, "  checkpoint #1 at 0.000001 s, 0.004 ms (thread 10): 3 calls, 11 I/Os\n")
		    != NULL, buf);
	const char *a = strstr(buf, "    0.000002      10* fsync   ");
	const char *b = strstr(buf, "    0.000003      10* fsync   ");
	const char *w = strstr(buf, "    0.000002      20  fdatasync");
	ASSERT_TRUE(a && b && w && w < a && a < b, "the three calls, in time order, * on its thread");
	size_t widest = 0;
	for (const char *l = buf; *l;) {
		const char *e = strchrnul(l, '\n');
		widest = (size_t)(e - l) > widest ? (size_t)(e - l) : widest;
		l = *e ? e + 1 : e;
	}
	ASSERT_LE(widest, 100, "every line fits 100 columns");
	free(buf);
	char *s = report_and_free(l, self, &ctx);
	ASSERT_TRUE(strstr(s, "\"instances\":[{\"start_ns\":1000,\"duration_ns\":4000,\"pid\":10,"
			      "\"tid\":10,\"sync_calls\":[{\"ts_ns\":1500,\"duration_ns\":300,\"tid\":20,"
			      "\"call\":\"fdatasync\",\"block_ios\":1,\"block_ns\":200},{\"ts_ns\":2000,"
			      "\"duration_ns\":500,\"tid\":10,\"call\":\"fsync\",\"block_ios\":3,"
			      "\"block_ns\":400},{\"ts_ns\":3000,\"duration_ns\":1000,\"tid\":10,"
			      "\"call\":\"fsync\",\"block_ios\":7,\"block_ns\":900}]}]") != NULL, s);
	free(s);
}

struct probe_msgs {
	unsigned n, open;
	uint64_t open_ts, open_dur;
	uint32_t open_tid;
};

static void on_probe_msg(const void *msg, void *ctx)
{
	const struct it_bus_probe *m = msg;
	struct probe_msgs *p = ctx;

	p->n++;
	if (m->kind == IT_PROBE_OPEN) {
		p->open++;
		p->open_ts = m->ts_ns;
		p->open_dur = m->duration_ns;
		p->open_tid = m->tid;
	}
}

/* A span begun and not ended when the trace ends goes to the exporters as
 * one IT_PROBE_OPEN row running to the trace's end (the exporters drew
 * nothing for it); a closed span is no such row. */
TEST(uprobe_open_span_published)
{
	const struct it_analysis_layer *l = &it_layer_uprobe;
	struct it_layer_opts opts = { 0 };
	struct it_bus bus = { 0 };
	struct it_pass_info info = { .layers = 1u << IT_LAYER_UPROBE, .opts = &opts, .bus = &bus };
	struct it_uprobe_def defs[] = { def(0, "q__start"), def(1, "q__done") };
	struct it_uprobe_hit hits[] = { hit(100, 10, 10, 0), hit(200, 10, 10, 1),
					hit(600, 10, 11, 0) };
	struct it_span span = { .end_ns = 2000 };
	struct probe_msgs got = { 0 };
	void *self;

	ASSERT_EQ(it_bus_subscribe(&bus, IT_BUS_PROBE, on_probe_msg, &got), 0, "subscribe");
	self = l->new(&info);
	if (!ASSERT_TRUE(self != NULL, "new"))
		return;
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_DEFS, defs, sizeof(defs), 2), 0, "defs");
	ASSERT_EQ(l->feed(self, IT_CHUNK_UPROBE_HITS, hits, sizeof(hits), 3), 0, "hits");
	ASSERT_EQ(l->finish(self, &span), 0, "finish");
	/* 3 hits (begin, end, begin), the closed span, the open one */
	ASSERT_EQ(got.n, 5, "messages");
	ASSERT_EQ(got.open, 1, "one open span");
	ASSERT_EQ(got.open_ts, 600, "from its start");
	ASSERT_EQ(got.open_dur, 1400, "to the trace's end");
	ASSERT_EQ(got.open_tid, 11, "its thread");
	l->free(self);
}
