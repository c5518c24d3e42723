/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Latency histogram with log-linear buckets, the idea of fio's clat
 * histogram (stat.h, FIO_IO_U_PLAT_BITS): values are grouped by their most
 * significant bit and each power of two is cut into 64 equal buckets, so a
 * bucket is at most 1/64 of its values wide. Reporting the bucket midpoint
 * gives a relative error of at most 1/128 (< 1%) for any value, with fixed
 * memory; merging is adding bins. Values below 128 get exact buckets.
 * count, sum, min and max are kept exactly beside the bins.
 *
 * Bins live in chunks of 64 (one power of two each), allocated when a
 * value first falls there: a stage's values span a few powers of two, so
 * a histogram costs a few KiB however wide the range it could hold, and
 * a report grouped by pid with thousands of groups stays small. The table
 * of chunks is allocated with the third value: one or two values are
 * min and max, so a histogram of few values (a file read once, of the
 * hundred thousand a busy machine's report lists) costs its 40 bytes.
 */
#ifndef IOTRAIL_ANALYZE_HIST_H
#define IOTRAIL_ANALYZE_HIST_H

#include <stddef.h>
#include <stdint.h>

#define IT_HIST_SUB_BITS 6
#define IT_HIST_SUB      (1u << IT_HIST_SUB_BITS)
/* Largest value kept apart: 2^48 - 1 ns is 78 hours; larger values are
 * counted in the last bucket (min, max, sum stay exact). */
#define IT_HIST_MAX_MSB  47
#define IT_HIST_NCHUNKS  (IT_HIST_MAX_MSB - IT_HIST_SUB_BITS + 2)
#define IT_HIST_NBINS    (IT_HIST_NCHUNKS * IT_HIST_SUB)

struct it_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;   /* UINT64_MAX while empty */
	uint64_t max;
	/* NULL while count <= 2 (the values are min and max), else
	 * IT_HIST_NCHUNKS chunks: bins idx = 64 * c + k at chunk[c][k]; NULL:
	 * all 0 */
	uint64_t **chunk;
};

static inline unsigned it_hist_index(uint64_t v)
{
	if (v >> (IT_HIST_MAX_MSB + 1))
		v = (1ull << (IT_HIST_MAX_MSB + 1)) - 1;
	if (v < 2 * IT_HIST_SUB)
		return (unsigned)v;
	unsigned e = 63 - (unsigned)__builtin_clzll(v) - IT_HIST_SUB_BITS;
	return (e + 1) * IT_HIST_SUB + (unsigned)((v >> e) & (IT_HIST_SUB - 1));
}

void it_hist_init(struct it_hist *h);
void it_hist_free(struct it_hist *h);
int it_hist_alloc_chunk(struct it_hist *h, unsigned c);
/* The chunk table, with the (two) values so far binned; -1: no memory. */
int it_hist_alloc_table(struct it_hist *h);

/* Returns 0, or -1 when a chunk could not be allocated (the exact
 * count/sum/min/max are still updated). */
static inline int it_hist_add(struct it_hist *h, uint64_t v)
{
	unsigned idx = it_hist_index(v), c = idx / IT_HIST_SUB;

	if (__builtin_expect(!h->chunk, 0) && h->count >= 2 && it_hist_alloc_table(h)) {
		h->count++;
		h->sum += v;
		h->min = v < h->min ? v : h->min;
		h->max = v > h->max ? v : h->max;
		return -1;
	}
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	if (!h->chunk) /* one or two values: min and max */
		return 0;
	if (__builtin_expect(!h->chunk[c], 0) && it_hist_alloc_chunk(h, c))
		return -1;
	h->chunk[c][idx % IT_HIST_SUB]++;
	return 0;
}

/* Count in bucket idx. */
static inline uint64_t it_hist_bin(const struct it_hist *h, unsigned idx)
{
	if (!h->chunk) /* min, and max when there are two */
		return (h->count >= 1 && it_hist_index(h->min) == idx) +
		       (h->count == 2 && it_hist_index(h->max) == idx);
	const uint64_t *c = h->chunk[idx / IT_HIST_SUB];
	return c ? c[idx % IT_HIST_SUB] : 0;
}

/* Smallest and largest value of bucket idx, and the value reported for it. */
uint64_t it_hist_bin_lo(unsigned idx);
uint64_t it_hist_bin_hi(unsigned idx);
uint64_t it_hist_bin_mid(unsigned idx);

/* dst += src. Returns 0 or -1 (allocation). */
int it_hist_merge(struct it_hist *dst, const struct it_hist *src);

/* Percentiles pct[0..n) (ascending, in percent, 0 < p <= 100) in one pass
 * over the bins, nearest-rank definition: the value of rank ceil(p/100 *
 * count) in sorted order, as its bucket midpoint clamped to [min, max]
 * (rank 1 is min and rank count is max, exactly). An empty histogram gives
 * zeros. */
void it_hist_percentiles(const struct it_hist *h, const double *pct, size_t n, uint64_t *out);
uint64_t it_hist_percentile(const struct it_hist *h, double pct);

/* Nearest rank (1-based) of percentile pct among count values; exact
 * integer arithmetic at a resolution of 0.001 percent. */
uint64_t it_pct_rank(uint64_t count, double pct);

static inline uint64_t it_hist_avg(const struct it_hist *h)
{
	return h->count ? (h->sum + h->count / 2) / h->count : 0;
}

#endif
