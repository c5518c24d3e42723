/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The log-linear histogram: error bound, merge, percentiles. */
#include <stdlib.h>

#include "analyze/hist.h"
#include "harness.h"

/* xorshift64*: deterministic data, no libc rand() state */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* A value spread log-uniformly over [1, 2^max_bits). */
static uint64_t log_uniform(uint64_t *s, unsigned max_bits)
{
	unsigned bits = 1 + (unsigned)(rnd(s) % max_bits);
	uint64_t v = rnd(s) >> (64 - bits);
	return v ? v : 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

TEST(hist_relative_error_bound)
{
	uint64_t s = 42;
	double worst = 0;
	int bad = 0;

	/* every bucket boundary region and random values, 1 ns .. 2^48 ns */
	for (unsigned b = 0; b <= IT_HIST_MAX_MSB; b++) {
		for (int d = -2; d <= 2; d++) {
			uint64_t v = (1ull << b) + (uint64_t)d;
			if (v == 0 || v >> (IT_HIST_MAX_MSB + 1))
				continue;
			double err = (double)llabs((long long)(it_hist_bin_mid(it_hist_index(v)) - v)) / (double)v;
			if (err > worst)
				worst = err;
		}
	}
	for (int i = 0; i < 200000; i++) {
		uint64_t v = log_uniform(&s, IT_HIST_MAX_MSB + 1);
		unsigned idx = it_hist_index(v);
		if (idx >= IT_HIST_NBINS || v < it_hist_bin_lo(idx) || v > it_hist_bin_hi(idx))
			bad++;
		double err = (double)llabs((long long)(it_hist_bin_mid(idx) - v)) / (double)v;
		if (err > worst)
			worst = err;
	}
	ASSERT_EQ(bad, 0, "values outside their bucket");
	ASSERT_LE(worst, 0.01, "worst relative error");
	ASSERT_LE(worst, 1.0 / 128, "worst relative error (1/128 by construction)");
	for (uint64_t v = 0; v < 128; v++)
		if (it_hist_bin_mid(it_hist_index(v)) != v)
			bad++;
	ASSERT_EQ(bad, 0, "values below 128 are exact");
	ASSERT_EQ(it_hist_index(UINT64_MAX), IT_HIST_NBINS - 1, "huge values in the last bucket");
}

TEST(hist_buckets_tile_the_range)
{
	int gaps = 0;

	for (unsigned i = 1; i < IT_HIST_NBINS; i++)
		if (it_hist_bin_lo(i) != it_hist_bin_hi(i - 1) + 1)
			gaps++;
	ASSERT_EQ(gaps, 0, "consecutive buckets are adjacent");
	ASSERT_EQ(it_hist_bin_hi(IT_HIST_NBINS - 1), (1ull << (IT_HIST_MAX_MSB + 1)) - 1, "last bucket end");
}

TEST(hist_merge_equals_union)
{
	struct it_hist a, b, u;
	uint64_t s = 7;
	int diff = 0;

	it_hist_init(&a);
	it_hist_init(&b);
	it_hist_init(&u);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = log_uniform(&s, 40);
		it_hist_add(i % 3 ? &a : &b, v);
		it_hist_add(&u, v);
	}
	ASSERT_EQ(it_hist_merge(&a, &b), 0, "merge");
	for (unsigned i = 0; i < IT_HIST_NBINS; i++)
		diff += it_hist_bin(&a, i) != it_hist_bin(&u, i);
	ASSERT_EQ(diff, 0, "bins differ");
	ASSERT_U64_EQ(a.count, u.count, "count");
	ASSERT_U64_EQ(a.sum, u.sum, "sum");
	ASSERT_U64_EQ(a.min, u.min, "min");
	ASSERT_U64_EQ(a.max, u.max, "max");
	ASSERT_U64_EQ(it_hist_percentile(&a, 99.9), it_hist_percentile(&u, 99.9), "p99.9");
	it_hist_free(&a);
	it_hist_free(&b);
	it_hist_free(&u);
}

TEST(hist_percentiles_vs_sorted_reference)
{
	static const double pct[] = { 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100 };
	enum { NP = sizeof(pct) / sizeof(pct[0]) };
	const size_t sizes[] = { 1, 2, 3, 10, 999, 100000 };
	uint64_t s = 1234;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		uint64_t *v = malloc(n * sizeof(*v)), out[NP];
		struct it_hist h;
		it_hist_init(&h);
		for (size_t i = 0; i < n; i++) {
			/* latency-like: a 20us body with a long tail up to seconds */
			v[i] = rnd(&s) % 8 ? 15000 + rnd(&s) % 10000 : log_uniform(&s, 31);
			it_hist_add(&h, v[i]);
		}
		qsort(v, n, sizeof(*v), cmp_u64);
		it_hist_percentiles(&h, pct, NP, out);
		for (int p = 0; p < NP; p++) {
			/* nearest rank: the ceil(p/100 * n)-th smallest value */
			size_t milli = (size_t)(pct[p] * 1000 + 0.5);
			size_t rank = (milli * n + 99999) / 100000;
			uint64_t want = v[(rank ? rank : 1) - 1];
			char label[64];
			snprintf(label, sizeof(label), "n=%zu p%g: got %llu want %llu", n, pct[p],
				 (unsigned long long)out[p], (unsigned long long)want);
			ASSERT_LE((double)llabs((long long)(out[p] - want)), 0.01 * (double)want, label);
		}
		ASSERT_U64_EQ(out[NP - 1], v[n - 1], "p100 is the max");
		ASSERT_U64_EQ(h.min, v[0], "min exact");
		it_hist_free(&h);
		free(v);
	}
}

TEST(hist_percentile_exact_small_values)
{
	struct it_hist h;
	static const double pct[] = { 50, 90, 99 };
	uint64_t out[3];

	it_hist_init(&h);
	for (uint64_t v = 1; v <= 100; v++)
		it_hist_add(&h, v);
	it_hist_percentiles(&h, pct, 3, out);
	ASSERT_EQ(out[0], 50, "p50 of 1..100");
	ASSERT_EQ(out[1], 90, "p90 of 1..100");
	ASSERT_EQ(out[2], 99, "p99 of 1..100");
	ASSERT_EQ(it_hist_avg(&h), 51, "avg of 1..100 (50.5 rounded)");
	it_hist_free(&h);

	it_hist_init(&h);
	ASSERT_EQ(it_hist_percentile(&h, 50), 0, "empty histogram");
	it_hist_free(&h);
}

TEST(hist_pct_rank)
{
	ASSERT_EQ(it_pct_rank(1000, 99.9), 999, "p99.9 of 1000");
	ASSERT_EQ(it_pct_rank(1000, 50), 500, "p50 of 1000");
	ASSERT_EQ(it_pct_rank(1001, 50), 501, "p50 of 1001");
	ASSERT_EQ(it_pct_rank(3, 99), 3, "p99 of 3");
	ASSERT_EQ(it_pct_rank(10, 0.001), 1, "tiny percentile");
}

/* One or two values are kept as min and max, without bins (a file read
 * once costs its 40 bytes): the bins, percentiles and merges they give
 * are those of a histogram that binned them from the start. */
TEST(hist_few_values_without_bins)
{
	static const double pct[] = { 1, 50, 99, 99.9, 100 };
	const uint64_t vals[] = { 20000, 130, 7, 5000000, 20000 };
	uint64_t s = 99;
	int diff = 0;

	for (size_t n = 0; n <= 5; n++) {
		struct it_hist small, binned, m1, m2;
		uint64_t a[5], b[5];

		it_hist_init(&small);
		it_hist_init(&binned);
		ASSERT_EQ(it_hist_alloc_table(&binned), 0, "table");
		for (size_t i = 0; i < n; i++) {
			it_hist_add(&small, vals[i]);
			it_hist_add(&binned, vals[i]);
		}
		ASSERT_TRUE((small.chunk == NULL) == (n <= 2), "bins from the third value on");
		for (unsigned i = 0; i < IT_HIST_NBINS; i++)
			diff += it_hist_bin(&small, i) != it_hist_bin(&binned, i);
		it_hist_percentiles(&small, pct, 5, a);
		it_hist_percentiles(&binned, pct, 5, b);
		for (int p = 0; p < 5; p++)
			diff += a[p] != b[p];
		/* merged into an empty, a small and a binned one */
		it_hist_init(&m1);
		it_hist_init(&m2);
		for (int i = 0; i < 40; i++)
			it_hist_add(&m2, log_uniform(&s, 30));
		it_hist_add(&m1, 999);
		struct it_hist r1, r2;
		it_hist_init(&r1);
		it_hist_init(&r2);
		ASSERT_EQ(it_hist_merge(&r1, &m1), 0, "merge");
		ASSERT_EQ(it_hist_merge(&r1, &small), 0, "merge small into small");
		ASSERT_EQ(it_hist_merge(&r2, &m1), 0, "merge");
		ASSERT_EQ(it_hist_merge(&r2, &binned), 0, "merge binned into small");
		ASSERT_EQ(it_hist_merge(&m2, &small), 0, "merge small into binned");
		for (unsigned i = 0; i < IT_HIST_NBINS; i++)
			diff += it_hist_bin(&r1, i) != it_hist_bin(&r2, i);
		ASSERT_U64_EQ(r1.count, n + 1, "count");
		ASSERT_U64_EQ(r1.sum, r2.sum, "sum");
		ASSERT_U64_EQ(r1.min, r2.min, "min");
		ASSERT_U64_EQ(r1.max, r2.max, "max");
		ASSERT_U64_EQ(m2.count, 40 + n, "count merged into a binned one");
		it_hist_percentiles(&r1, pct, 5, a);
		it_hist_percentiles(&r2, pct, 5, b);
		for (int p = 0; p < 5; p++)
			diff += a[p] != b[p];
		it_hist_free(&small);
		it_hist_free(&binned);
		it_hist_free(&m1);
		it_hist_free(&m2);
		it_hist_free(&r1);
		it_hist_free(&r2);
	}
	ASSERT_EQ(diff, 0, "bins and percentiles differ");
}
