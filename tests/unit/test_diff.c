/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `iotrail diff`'s logic (src/analyze/diff.c) on two synthetic streams
 * analysed by the analyzer: one stage slower by a known factor. */
#include "analyze/diff.h"
#include "harness.h"
#include "synth.h"

#define NIO 300
#define FACTOR 3.7

/*
 * Reads on DEV_A, one at a time: Q2I q2i, I2D 500 ns, D2C 20..31 us
 * (times scale), the same values in both streams but scaled. Writes on
 * wdev (base: DEV_A; loaded: DEV_B, so each write group is in one trace).
 */
static struct it_analyzer *stream(uint64_t q2i, double scale, uint32_t wdev)
{
	struct it_event *evs = calloc(4 * (NIO + 10), sizeof(*evs));
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	size_t n = 0;

	if (!evs)
		return NULL;
	for (size_t i = 0; i < NIO + 10; i++) {
		bool w = i >= NIO;
		uint32_t dev = w ? wdev : DEV_A;
		uint8_t op = w ? IT_OP_WRITE : IT_OP_READ;
		uint64_t t0 = 1000000 * (i + 1), bio = 0x1000 + i, rq = 0x9000 + i, sec = 8 * i;
		uint64_t d2c = (uint64_t)(scale * (double)(20000 + 37 * (i % 300)));

		evs[n++] = Q(t0, bio, dev, sec, K4, op);
		evs[n++] = I(t0 + q2i, rq, bio, dev, sec, K4, op);
		evs[n++] = D(t0 + q2i + 500, rq, bio, dev, sec, K4, op);
		evs[n++] = C(t0 + q2i + 500 + d2c, rq, dev, K4);
	}
	struct it_analyzer *a = run_opts(evs, n, o, NULL, 0);
	free(evs);
	return a;
}

static const struct it_diff_group *group(const struct it_diff *d, const char *label)
{
	for (size_t i = 0; i < d->ngroups; i++)
		if (!strcmp(d->groups[i].label, label))
			return &d->groups[i];
	return NULL;
}

static const struct it_diff_stage *stage(const struct it_diff_group *g, const char *name)
{
	for (size_t i = 0; g && i < g->nstages; i++)
		if (!strcmp(g->stage[i].name, name))
			return &g->stage[i];
	return NULL;
}

TEST(diff_lad_and_bottleneck)
{
	/* base: Q2I 0 (null LAD); loaded: Q2I 20 us, so Q2C's LAD (a total,
	 * not competing) is above D2C's */
	struct it_analyzer *ab = stream(0, 1.0, DEV_A), *al = stream(20000, FACTOR, DEV_B);
	if (!ASSERT_NOT_NULL(ab, "base") || !ASSERT_NOT_NULL(al, "loaded"))
		return;
	struct it_diff_side b = { .path = "b.trail", .r = it_analyzer_results(ab), .a = ab };
	struct it_diff_side l = { .path = "l.trail", .r = it_analyzer_results(al), .a = al };
	struct it_diff *d = it_diff_new(&b, &l);
	if (!ASSERT_NOT_NULL(d, "diff"))
		goto out;

	const struct it_diff_group *rd = group(d, "read 7:0");
	const struct it_diff_stage *d2c = stage(rd, "D2C"), *q2i = stage(rd, "Q2I");
	const struct it_diff_stage *i2d = stage(rd, "I2D"), *q2c = stage(rd, "Q2C");
	if (!ASSERT_NOT_NULL(rd, "read group") || !ASSERT_NOT_NULL(d2c, "D2C") ||
	    !ASSERT_NOT_NULL(q2i, "Q2I") || !ASSERT_NOT_NULL(i2d, "I2D") || !ASSERT_NOT_NULL(q2c, "Q2C"))
		goto out;
	ASSERT_EQ(rd->where, IT_DIFF_BOTH, "read in both");
	ASSERT_U64_EQ(d2c->base.count, NIO, "D2C base count");
	ASSERT_U64_EQ(d2c->loaded.count, NIO, "D2C loaded count");
	/* the factor, within the histogram's error on each side (1/128 each) */
	ASSERT_NEAR(d2c->lad_avg, FACTOR, FACTOR * 0.001, "D2C LAD at avg (avg is exact)");
	ASSERT_NEAR(d2c->lad_p50, FACTOR, FACTOR * 2.0 / 128, "D2C LAD at p50");
	ASSERT_NEAR(i2d->lad_avg, 1.0, 1e-9, "I2D unchanged");
	ASSERT_TRUE(q2i->lad_avg < 0 && q2i->lad_p50 < 0, "Q2I at base 0: null");
	ASSERT_TRUE(q2c->lad_avg > d2c->lad_avg, "Q2C amplified more (it includes Q2I)");
	ASSERT_TRUE(!q2c->competes && d2c->competes && q2i->competes, "competing stages");
	/* sorted by LAD at avg, nulls last */
	ASSERT_STREQ(rd->stage[0].name, "Q2C", "first row");
	ASSERT_STREQ(rd->stage[1].name, "D2C", "second row");
	ASSERT_STREQ(rd->stage[rd->nstages - 1].name, "Q2I", "null last");
	/* the bottleneck: D2C, not the total */
	if (ASSERT_TRUE(d->bn_group >= 0, "a bottleneck")) {
		ASSERT_STREQ(d->groups[d->bn_group].label, "read 7:0", "bottleneck group");
		ASSERT_STREQ(d->groups[d->bn_group].stage[d->bn_stage].name, "D2C", "bottleneck stage");
	}
	/* the writes: one group in each trace, listed as such */
	const struct it_diff_group *wa = group(d, "write 7:0"), *wb = group(d, "write 259:1");
	if (ASSERT_NOT_NULL(wa, "base-only write group"))
		ASSERT_EQ(wa->where, IT_DIFF_BASE_ONLY, "write 7:0 only at base");
	if (ASSERT_NOT_NULL(wb, "loaded-only write group")) {
		ASSERT_EQ(wb->where, IT_DIFF_LOADED_ONLY, "write 259:1 only loaded");
		ASSERT_U64_EQ(wb->count[1], 10, "its I/Os");
		ASSERT_TRUE(stage(wb, "D2C") && stage(wb, "D2C")->lad_avg < 0, "no LAD one-sided");
	}
	ASSERT_EQ(d->ngroups, 3, "groups");

	/* the text: the bottleneck on the first line, 100 columns */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (ASSERT_NOT_NULL(f, "memstream")) {
		it_diff_text(d, f);
		fclose(f);
		ASSERT_TRUE(!strncmp(buf, "bottleneck: D2C of read 7:0: LAD 3.7", 36), "first line");
		ASSERT_TRUE(strstr(buf, "write 259:1: only in the loaded trace (10 I/Os)") != NULL,
			    "loaded-only group in the text");
		for (char *p = buf, *nl; (nl = strchr(p, '\n')); p = nl + 1)
			ASSERT_LE(nl - p, 100, "line width");
		free(buf);
	}

	/* the JSON names the bottleneck and nulls */
	buf = NULL;
	len = 0;
	f = open_memstream(&buf, &len);
	if (ASSERT_NOT_NULL(f, "memstream")) {
		it_diff_json(d, f, false);
		fclose(f);
		ASSERT_TRUE(strstr(buf, "\"bottleneck\":{\"key\":{\"op\":\"read\",\"dev\":\"7:0\"},"
					"\"stage\":\"D2C\"") != NULL, "JSON bottleneck");
		ASSERT_TRUE(strstr(buf, "\"name\":\"Q2I\",\"competes\":true,\"base\":{\"count\":300,"
					"\"p50_ns\":0,\"avg_ns\":0}") != NULL, "JSON zero base");
		ASSERT_TRUE(strstr(buf, "\"lad_p50\":null,\"lad_avg\":null") != NULL, "JSON null LAD");
		ASSERT_TRUE(strstr(buf, "\"in\":\"loaded\"") != NULL, "JSON loaded-only group");
		free(buf);
	}
out:
	it_diff_free(d);
	it_analyzer_free(ab);
	it_analyzer_free(al);
}

/* Reads with Q2I 1 us and I2D 500 ns; D2C 20..31 us times d2c_scale; in
 * the loaded stream every 30th read's I2D stalls 500 us. */
static struct it_analyzer *stalls(double d2c_scale, bool stall)
{
	struct it_event *evs = calloc(4 * NIO, sizeof(*evs));
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	size_t n = 0;

	if (!evs)
		return NULL;
	for (size_t i = 0; i < NIO; i++) {
		uint64_t t0 = 2000000 * (i + 1), bio = 0x1000 + i, rq = 0x9000 + i, sec = 8 * i;
		uint64_t i2d = stall && i % 30 == 0 ? 500000 : 500;
		uint64_t d2c = (uint64_t)(d2c_scale * (double)(20000 + 37 * (i % 300)));

		evs[n++] = Q(t0, bio, DEV_A, sec, K4, IT_OP_READ);
		evs[n++] = I(t0 + 1000, rq, bio, DEV_A, sec, K4, IT_OP_READ);
		evs[n++] = D(t0 + 1000 + i2d, rq, bio, DEV_A, sec, K4, IT_OP_READ);
		evs[n++] = C(t0 + 1000 + i2d + d2c, rq, DEV_A, K4);
	}
	struct it_analyzer *a = run_opts(evs, n, o, NULL, 0);
	free(evs);
	return a;
}

/* I2D's LAD (~34 at avg, from a few stalls) is above D2C's (20), but I2D
 * added ~17 us an I/O where D2C added ~490: D2C is the bottleneck, and
 * I2D's row still shows its LAD. Without D2C's slowdown, I2D is. */
TEST(diff_bottleneck_needs_added_time)
{
	struct it_analyzer *ab = stalls(1.0, false), *al = stalls(20.0, true);
	struct it_analyzer *al2 = stalls(1.0, true);
	struct it_diff *d = NULL, *d2 = NULL;

	if (!ASSERT_NOT_NULL(ab, "base") || !ASSERT_NOT_NULL(al, "loaded") ||
	    !ASSERT_NOT_NULL(al2, "loaded, stalls only"))
		goto out;
	struct it_diff_side b = { .path = "b.trail", .r = it_analyzer_results(ab), .a = ab };
	struct it_diff_side l = { .path = "l.trail", .r = it_analyzer_results(al), .a = al };
	struct it_diff_side l2 = { .path = "l2.trail", .r = it_analyzer_results(al2), .a = al2 };
	d = it_diff_new(&b, &l);
	d2 = it_diff_new(&b, &l2);
	if (!ASSERT_NOT_NULL(d, "diff") || !ASSERT_NOT_NULL(d2, "diff, stalls only"))
		goto out;
	const struct it_diff_stage *i2d = stage(group(d, "read 7:0"), "I2D");
	const struct it_diff_stage *d2c = stage(group(d, "read 7:0"), "D2C");
	if (!ASSERT_NOT_NULL(i2d, "I2D") || !ASSERT_NOT_NULL(d2c, "D2C"))
		goto out;
	ASSERT_TRUE(i2d->lad_avg > d2c->lad_avg, "I2D's LAD at avg above D2C's");
	ASSERT_TRUE(d2c->lad_avg > 19 && d2c->lad_avg < 21, "D2C's LAD about 20");
	if (ASSERT_TRUE(d->bn_group >= 0, "a bottleneck"))
		ASSERT_STREQ(d->groups[d->bn_group].stage[d->bn_stage].name, "D2C",
			     "the stage that added the time");
	if (ASSERT_TRUE(d2->bn_group >= 0, "a bottleneck, stalls only"))
		ASSERT_STREQ(d2->groups[d2->bn_group].stage[d2->bn_stage].name, "I2D",
			     "the stalls, when nothing else added more");
out:
	it_diff_free(d);
	it_diff_free(d2);
	it_analyzer_free(ab);
	it_analyzer_free(al);
	it_analyzer_free(al2);
}

TEST(diff_lad_null)
{
	ASSERT_TRUE(it_diff_lad(0, 100, 5, 5) < 0, "base 0");
	ASSERT_TRUE(it_diff_lad(10, 100, 0, 5) < 0, "no base data");
	ASSERT_TRUE(it_diff_lad(10, 100, 5, 0) < 0, "no loaded data");
	ASSERT_NEAR(it_diff_lad(10, 25, 5, 5), 2.5, 1e-12, "ratio");
	ASSERT_NEAR(it_diff_lad(10, 0, 5, 5), 0, 1e-12, "loaded 0 is a LAD of 0");
}

TEST(diff_same_trace)
{
	struct it_analyzer *a = stream(1000, 1.0, DEV_A);
	if (!ASSERT_NOT_NULL(a, "analyzer"))
		return;
	struct it_diff_side s = { .path = "x", .r = it_analyzer_results(a), .a = a };
	struct it_diff *d = it_diff_new(&s, &s);
	if (ASSERT_NOT_NULL(d, "diff")) {
		ASSERT_EQ(d->ngroups, 2, "groups");
		for (size_t i = 0; i < d->ngroups; i++) {
			ASSERT_EQ(d->groups[i].where, IT_DIFF_BOTH, "in both");
			for (size_t k = 0; k < d->groups[i].nstages; k++)
				ASSERT_NEAR(d->groups[i].stage[k].lad_avg, 1.0, 1e-12, "LAD 1");
		}
	}
	it_diff_free(d);
	it_analyzer_free(a);
}
