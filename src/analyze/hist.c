/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Log-linear histogram: see hist.h. */
#include "analyze/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void it_hist_init(struct it_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void it_hist_free(struct it_hist *h)
{
	for (unsigned c = 0; c < IT_HIST_NCHUNKS; c++)
		free(h->chunk[c]);
	it_hist_init(h);
}

int it_hist_alloc_chunk(struct it_hist *h, unsigned c)
{
	h->chunk[c] = calloc(IT_HIST_SUB, sizeof(uint64_t));
	return h->chunk[c] ? 0 : -1;
}

uint64_t it_hist_bin_lo(unsigned idx)
{
	if (idx < 2 * IT_HIST_SUB)
		return idx;
	unsigned e = idx / IT_HIST_SUB - 1;
	return (uint64_t)(IT_HIST_SUB + idx % IT_HIST_SUB) << e;
}

uint64_t it_hist_bin_hi(unsigned idx)
{
	if (idx < 2 * IT_HIST_SUB)
		return idx;
	unsigned e = idx / IT_HIST_SUB - 1;
	return it_hist_bin_lo(idx) + (1ull << e) - 1;
}

uint64_t it_hist_bin_mid(unsigned idx)
{
	uint64_t lo = it_hist_bin_lo(idx);
	return lo + (it_hist_bin_hi(idx) - lo + 1) / 2;
}

int it_hist_merge(struct it_hist *dst, const struct it_hist *src)
{
	if (!src->count)
		return 0;
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned c = 0; c < IT_HIST_NCHUNKS; c++) {
		if (!src->chunk[c])
			continue;
		if (!dst->chunk[c] && it_hist_alloc_chunk(dst, c))
			return -1;
		for (unsigned k = 0; k < IT_HIST_SUB; k++)
			dst->chunk[c][k] += src->chunk[c][k];
	}
	return 0;
}

uint64_t it_pct_rank(uint64_t count, double pct)
{
	uint64_t milli = (uint64_t)llround(pct * 1000.0); /* 99.9 -> 99900 */
	uint64_t rank = (count * milli + 99999) / 100000;

	if (rank < 1)
		rank = 1;
	if (rank > count)
		rank = count;
	return rank;
}

void it_hist_percentiles(const struct it_hist *h, const double *pct, size_t n, uint64_t *out)
{
	uint64_t cum = 0;
	size_t j = 0;

	if (!h->count) {
		for (size_t k = 0; k < n; k++)
			out[k] = 0;
		return;
	}
	for (unsigned i = 0; i < IT_HIST_NBINS && j < n; i++) {
		if (!h->chunk[i / IT_HIST_SUB]) {
			i += IT_HIST_SUB - 1; /* an empty power of two */
			continue;
		}
		cum += h->chunk[i / IT_HIST_SUB][i % IT_HIST_SUB];
		while (j < n && cum >= it_pct_rank(h->count, pct[j])) {
			uint64_t rank = it_pct_rank(h->count, pct[j]);
			uint64_t v = it_hist_bin_mid(i);
			/* the extreme ranks are known exactly */
			if (rank == h->count)
				v = h->max;
			else if (rank == 1)
				v = h->min;
			out[j++] = v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	for (; j < n; j++)
		out[j] = h->max;
}

uint64_t it_hist_percentile(const struct it_hist *h, double pct)
{
	uint64_t v;

	it_hist_percentiles(h, &pct, 1, &v);
	return v;
}
