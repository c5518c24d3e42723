/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What the analyzers' timelines share (the block devices' in aggregate.c,
 * the NVMe queues' in nvme.c): a bound on their intervals when there are
 * many of them, and making the interval longer, by a power of two, in
 * place, when a later time or a lower bound would not fit.
 */
#ifndef IOTRAIL_ANALYZE_TIMELINE_H
#define IOTRAIL_ANALYZE_TIMELINE_H

#include <stdint.h>
#include <string.h>

/* The intervals each of n timelines may hold: max, halved while n of them
 * would hold more than total, but never below 64 (powers of two in, powers
 * of two out). */
static inline uint64_t it_timeline_share(uint64_t max, uint64_t n, uint64_t total)
{
	uint64_t lim = max;

	while (lim > 64 && lim * n > total)
		lim >>= 1;
	return lim;
}

/* Sums timeline arr's n intervals in runs of 2^shift with add(to, from), in
 * place (interval j takes those from j << shift on, none before j); n
 * becomes the count left, the rest is cleared. One pass, whatever the
 * shift. */
#define IT_TIMELINE_COARSEN(arr, n, shift, add)                                            \
	do {                                                                               \
		size_t mask_ = ((size_t)1 << (shift)) - 1, m_ = ((n) + mask_) >> (shift); \
		for (size_t k_ = 0; k_ < (n); k_++) {                                      \
			if (k_ & mask_)                                                    \
				add(&(arr)[k_ >> (shift)], &(arr)[k_]);                    \
			else if (k_)                                                       \
				(arr)[k_ >> (shift)] = (arr)[k_];                          \
		}                                                                          \
		if ((n) > m_)                                                              \
			memset((arr) + m_, 0, ((n) - m_) * sizeof(*(arr)));                \
		(n) = m_;                                                                  \
	} while (0)

#endif
