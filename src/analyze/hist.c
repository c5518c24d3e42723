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
	if (h->chunk) {
		for (unsigned c = 0; c < IT_HIST_NCHUNKS; c++)
			free(h->chunk[c]);
		free(h->chunk);
	}
	it_hist_init(h);
}

int it_hist_alloc_chunk(struct it_hist *h, unsigned c)
{
	h->chunk[c] = calloc(IT_HIST_SUB, sizeof(uint64_t));
	return h->chunk[c] ? 0 : -1;
}

/* Bins v (count, sum, min and max are the caller's). */
static int bin_add(struct it_hist *h, uint64_t v)
{
	unsigned idx = it_hist_index(v), c = idx / IT_HIST_SUB;

	if (!h->chunk[c] && it_hist_alloc_chunk(h, c))
		return -1;
	h->chunk[c][idx % IT_HIST_SUB]++;
	return 0;
}

int it_hist_alloc_table(struct it_hist *h)
{
	if (!(h->chunk = calloc(IT_HIST_NCHUNKS, sizeof(*h->chunk))))
		return -1;
	if (h->count >= 1 && bin_add(h, h->min))
		return -1;
	if (h->count >= 2 && bin_add(h, h->max))
		return -1;
	return 0;
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
	if (!src->chunk) { /* min, and max when there are two */
		int rc = it_hist_add(dst, src->min);

		return src->count == 2 && it_hist_add(dst, src->max) ? -1 : rc;
	}
	if (!dst->chunk && it_hist_alloc_table(dst))
		return -1;
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
	if (!h->chunk) { /* every rank is the first (min) or the last (max) */
		for (size_t k = 0; k < n; k++)
			out[k] = it_pct_rank(h->count, pct[k]) == h->count ? h->max : h->min;
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
