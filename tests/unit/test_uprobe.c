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
	struct it_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
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
	it_json_init(&j, f, false);
	it_json_object_start(&j);
	l->report_json(self, &j, &ctx);
	it_json_object_end(&j);
	fclose(f);
	l->free(self);
	return buf;
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
