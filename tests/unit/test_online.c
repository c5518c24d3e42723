/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The online mode's pure C: the in-kernel histogram's bucketing (the same
 * function the BPF program runs), percentiles, intervals and groups of
 * snapshots, the Prometheus exposition, the HTTP request parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "online/expo.h"
#include "online/http.h"
#include "online/snapshot.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

TEST(online_bucket_bounds_are_le)
{
	int bad = 0;

	ASSERT_EQ(ol_bucket(0), 0u, "0 ns");
	ASSERT_EQ(ol_bucket(1024), 0u, "1024 ns: bucket 0 is <= 1.024 us");
	ASSERT_EQ(ol_bucket(1025), 1u, "1025 ns");
	ASSERT_U64_EQ(ol_bucket_le(0), 1024, "bucket 0's bound");
	ASSERT_U64_EQ(ol_bucket_le(1), 1280, "bucket 1's bound: a quarter above");
	ASSERT_U64_EQ(ol_bucket_le(OL_NBUCKETS - 2), 1ull << 35, "the last bound: 2^35 ns");
	ASSERT_EQ(ol_bucket(1ull << 35), (unsigned)OL_NBUCKETS - 2, "2^35 ns: the last bucket");
	ASSERT_EQ(ol_bucket((1ull << 35) + 1), (unsigned)OL_NBUCKETS - 1, "above: overflow");
	ASSERT_EQ(ol_bucket(~0ull), (unsigned)OL_NBUCKETS - 1, "UINT64_MAX: overflow");
	/* every bound is its bucket's largest value, the next ns the next bucket's */
	for (unsigned b = 0; b < OL_NBUCKETS - 1; b++) {
		uint64_t le = ol_bucket_le(b);

		bad += ol_bucket(le) != b || ol_bucket(le + 1) != b + 1;
		if (b)
			bad += le <= ol_bucket_le(b - 1) ||
			       (double)(le - ol_bucket_le(b - 1)) / (double)le > 0.25;
	}
	ASSERT_EQ(bad, 0, "bounds: each its bucket's top, 25% apart at most");
}

TEST(online_bucket_matches_definition)
{
	uint64_t s = 7;
	int bad = 0;

	for (int i = 0; i < 200000; i++) {
		uint64_t v = rnd(&s) >> (rnd(&s) % 64);
		unsigned b = ol_bucket(v);

		bad += ol_log2(v | 1) != (unsigned)(63 - __builtin_clzll(v | 1));
		/* v lies in (lo, hi] of its bucket */
		bad += v > ol_bucket_le(b) || (b > 0 && v <= ol_bucket_le(b - 1));
	}
	ASSERT_EQ(bad, 0, "random values: log2 and bucket by the definition");
}

TEST(online_quantile)
{
	struct ol_hist h = {};
	uint64_t p50, p99;

	ASSERT_U64_EQ(ol_hist_quantile(&h, 0.5), 0, "empty");
	/* 1..1000 us, one each */
	for (uint64_t us = 1; us <= 1000; us++) {
		h.buckets[ol_bucket(us * 1000)]++;
		h.sum_ns += us * 1000;
	}
	ASSERT_U64_EQ(ol_hist_count(&h), 1000, "count is the buckets' sum");
	p50 = ol_hist_quantile(&h, 0.50);
	p99 = ol_hist_quantile(&h, 0.99);
	ASSERT_NEAR((double)p50, 500000.0, 500000.0 * 0.25, "p50 of 1..1000 us within a bucket");
	ASSERT_NEAR((double)p99, 990000.0, 990000.0 * 0.25, "p99 within a bucket");
	ASSERT_TRUE(ol_hist_quantile(&h, 1.0) <= ol_bucket_le(ol_bucket(1000000)), "max in its bucket");
	memset(&h, 0, sizeof(h));
	h.buckets[OL_NBUCKETS - 1] = 3;
	ASSERT_U64_EQ(ol_hist_quantile(&h, 0.99), 1ull << 35, "overflow: its lower bound");
}

/* Snapshots of counters that only grow, one series added midway: the
 * intervals add up to the last snapshot exactly, word for word. */
TEST(online_intervals_telescope)
{
	struct ol_snapshot snap[6] = {}, delta = {}, sum = {};
	uint64_t s = 99;
	int bad = 0;

	for (int k = 0; k < 6; k++) {
		for (uint32_t dev = 1; dev <= (k < 3 ? 1u : 2u); dev++)
			for (uint32_t op = 0; op < 2; op++) {
				struct ol_key key = { .dev = dev, .op = op };
				struct ol_value *v = ol_snapshot_slot(&snap[k], key);
				const struct ol_value *before = NULL;

				if (k)
					for (size_t i = 0; i < snap[k - 1].n; i++)
						if (!memcmp(&snap[k - 1].series[i].key, &key, sizeof(key)))
							before = &snap[k - 1].series[i].v;
				if (before)
					*v = *before;
				v->ios += rnd(&s) % 1000;
				v->bytes += rnd(&s) % 100000;
				for (int st = 0; st < OL_NSTAGES; st++)
					v->stage[st].buckets[rnd(&s) % OL_NBUCKETS] += rnd(&s) % 50;
			}
		snap[k].missed[OL_MISS_NO_ISSUE] = (uint64_t)k * 3;
		snap[k].nested = (uint64_t)k;
	}
	for (int k = 1; k < 6; k++) {
		ASSERT_EQ(ol_snapshot_delta(&delta, &snap[k], &snap[k - 1]), 0, "delta");
		for (size_t i = 0; i < delta.n; i++)
			ol_value_add(ol_snapshot_slot(&sum, delta.series[i].key), &delta.series[i].v);
		sum.missed[OL_MISS_NO_ISSUE] += delta.missed[OL_MISS_NO_ISSUE];
		sum.nested += delta.nested;
	}
	/* sum + first == last */
	for (size_t i = 0; i < snap[0].n; i++)
		ol_value_add(ol_snapshot_slot(&sum, snap[0].series[i].key), &snap[0].series[i].v);
	ASSERT_EQ(sum.n, snap[5].n, "series");
	for (size_t i = 0; i < snap[5].n; i++)
		bad += !!memcmp(ol_snapshot_slot(&sum, snap[5].series[i].key), &snap[5].series[i].v,
				sizeof(struct ol_value));
	ASSERT_EQ(bad, 0, "every word of the intervals' sum");
	ASSERT_U64_EQ(sum.missed[OL_MISS_NO_ISSUE], 15, "misses too");
	ASSERT_U64_EQ(sum.nested, 5, "nested too");
	for (int k = 0; k < 6; k++)
		ol_snapshot_free(&snap[k]);
	ol_snapshot_free(&delta);
	ol_snapshot_free(&sum);
}

TEST(online_group)
{
	struct ol_snapshot in = {}, out = {};

	ol_snapshot_slot(&in, (struct ol_key){ 9, OL_OP_WRITE })->ios = 5;
	ol_snapshot_slot(&in, (struct ol_key){ 9, OL_OP_READ })->ios = 7;
	ol_snapshot_slot(&in, (struct ol_key){ 3, OL_OP_READ })->ios = 11;
	ASSERT_EQ(ol_snapshot_group(&out, &in, OL_GROUP_DEV), 0, "by dev");
	ASSERT_EQ(out.n, 2u, "two devices");
	ASSERT_TRUE(out.series[0].key.dev == 3 && out.series[0].v.ios == 11, "dev 3 first");
	ASSERT_TRUE(out.series[1].key.op == OL_OP_ALL && out.series[1].v.ios == 12, "dev 9: 5 + 7");
	ASSERT_EQ(ol_snapshot_group(&out, &in, OL_GROUP_OP), 0, "by op");
	ASSERT_TRUE(out.n == 2 && out.series[0].key.op == OL_OP_READ && out.series[0].v.ios == 18,
		    "reads: 7 + 11");
	ASSERT_EQ(ol_snapshot_group(&out, &in, OL_GROUP_ALL), 0, "all");
	ASSERT_TRUE(out.n == 1 && out.series[0].v.ios == 23, "all: 23");
	ol_snapshot_free(&in);
	ol_snapshot_free(&out);
}

TEST(online_expo_seconds)
{
	char b[32];

	ol_expo_seconds(b, sizeof(b), 0);
	ASSERT_STREQ(b, "0", "0");
	ol_expo_seconds(b, sizeof(b), 1024);
	ASSERT_STREQ(b, "0.000001024", "1024 ns");
	ol_expo_seconds(b, sizeof(b), 1000000000);
	ASSERT_STREQ(b, "1", "1 s");
	ol_expo_seconds(b, sizeof(b), 1ull << 35);
	ASSERT_STREQ(b, "34.359738368", "2^35 ns");
	ol_expo_seconds(b, sizeof(b), 1500000);
	ASSERT_STREQ(b, "0.0015", "1.5 ms");
}

static void test_namer(uint32_t dev, char *buf, size_t n)
{
	snprintf(buf, n, dev == 1 ? "sd\"a" : "loop%u", dev);
}

/* count the lines of text starting with prefix */
static int lines_with(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

TEST(online_exposition)
{
	struct ol_snapshot s = {};
	struct ol_value *v = ol_snapshot_slot(&s, (struct ol_key){ 7, OL_OP_READ });
	char *text = NULL, line[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t prev = 0;
	int bad = 0, buckets = 0;

	v->ios = 6;
	v->bytes = 24576;
	v->stage[OL_Q2C].buckets[0] = 1;  /* <= 1.024 us */
	v->stage[OL_Q2C].buckets[5] = 2;
	v->stage[OL_Q2C].buckets[OL_NBUCKETS - 1] = 3;
	v->stage[OL_Q2C].sum_ns = 3000;
	ol_snapshot_slot(&s, (struct ol_key){ 1, OL_OP_WRITE });
	s.missed[OL_MISS_NO_QUEUE] = 4;
	s.nested = 2;
	ol_expo_write(f, &s, test_namer);
	fclose(f);
	ASSERT_EQ(lines_with(text, "# TYPE iotrail_block_stage_seconds histogram"), 1, "one TYPE");
	ASSERT_EQ(lines_with(text, "# TYPE iotrail_block_ios_total counter"), 1, "ios counter");
	ASSERT_EQ(lines_with(text, "iotrail_block_ios_total{device=\"loop7\",op=\"read\"} 6\n"), 1,
		  "ios of loop7 reads");
	ASSERT_EQ(lines_with(text, "iotrail_block_bytes_total{device=\"loop7\",op=\"read\"} 24576"), 1,
		  "bytes");
	ASSERT_EQ(lines_with(text, "iotrail_block_ios_total{device=\"sd\\\"a\",op=\"write\"} 0"), 1,
		  "a quote in a label value escaped");
	ASSERT_EQ(lines_with(text, "iotrail_block_stage_seconds_bucket{device=\"loop7\",op=\"read\","
				   "stage=\"q2c\",le=\"0.000001024\"} 1"), 1, "first bucket");
	ASSERT_EQ(lines_with(text, "iotrail_block_stage_seconds_bucket{device=\"loop7\",op=\"read\","
				   "stage=\"q2c\",le=\"+Inf\"} 6"), 1, "+Inf: all");
	ASSERT_EQ(lines_with(text, "iotrail_block_stage_seconds_sum{device=\"loop7\",op=\"read\","
				   "stage=\"q2c\"} 0.000003\n"), 1, "sum in seconds");
	ASSERT_EQ(lines_with(text, "iotrail_block_stage_seconds_count{device=\"loop7\",op=\"read\","
				   "stage=\"q2c\"} 6\n"), 1, "count = +Inf");
	ASSERT_EQ(lines_with(text, "iotrail_block_missed_total{reason=\"no_queue\"} 4"), 1, "missed");
	ASSERT_EQ(lines_with(text, "iotrail_block_missed_total{reason=\"nested\"} 2"), 1, "nested");
	/* the q2c buckets of loop7: cumulative, one per bound */
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *pre = "iotrail_block_stage_seconds_bucket{device=\"loop7\",op=\"read\","
				  "stage=\"q2c\"";
		unsigned long long n;

		if (strncmp(p, pre, strlen(pre)))
			continue;
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		n = strtoull(strrchr(line, ' ') + 1, NULL, 10);
		bad += n < prev;
		prev = n;
		buckets++;
	}
	ASSERT_EQ(bad, 0, "cumulative buckets never decrease");
	ASSERT_EQ(buckets, OL_NBUCKETS, "a line per bucket, +Inf included");
	free(text);
	ol_snapshot_free(&s);
}

TEST(online_http_parse)
{
	static const struct {
		const char *req;
		int status;
	} cases[] = {
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 200 },
		{ "GET /metrics HTTP/1.1\nHost: x\n\n", 200 },              /* bare LF */
		{ "\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 200 },    /* a leading CRLF */
		{ "GET /metrics?name[]=x HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", 200 },
		{ "GET /metrics HTTP/1.0\r\n\r\n", 200 },                   /* 1.0: Host optional */
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\n", 0 },              /* no end yet */
		{ "GET /metr", 0 },
		{ "", 0 },
		{ "GET /metrics HTTP/1.1\r\n\r\n", 400 },                   /* 1.1 without Host */
		{ "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", 400 },       /* space before colon */
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\rY\r\n\r\n", 400 },     /* a bare CR */
		{ "GET  /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1 \r\nHost: x\r\n\r\n", 400 },
		{ "GET /metrics HTTX/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "NOT A REQUEST\r\n\r\n", 400 },
		{ "GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n", 505 },
		{ "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 405 },
		{ "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 404 },
		{ "GET /metricsx HTTP/1.1\r\nHost: x\r\n\r\n", 404 },
	};
	int head_only, bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = ol_http_parse(cases[i].req, strlen(cases[i].req), &head_only);

		if (got != cases[i].status) {
			printf("  '%s': %d, want %d\n", cases[i].req, got, cases[i].status);
			bad++;
		}
	}
	ASSERT_EQ(bad, 0, "every case");
	ASSERT_EQ(ol_http_parse("GET /metrics HTTP/1.1\r\nHost: x\0\r\n\r\n", 34, &head_only), 400,
		  "a NUL in a field");
	ASSERT_EQ(ol_http_parse("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 35, &head_only), 200,
		  "HEAD");
	ASSERT_EQ(head_only, 1, "HEAD: head only");
	{
		static char big[OL_HTTP_MAX_HEAD];

		memset(big, 'a', sizeof(big));
		memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
		ASSERT_EQ(ol_http_parse(big, sizeof(big), &head_only), 431, "a head that fills the buffer");
	}
}
