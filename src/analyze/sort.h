/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * qsort for arrays that may be empty: an empty array is often a NULL
 * pointer here (nothing was ever allocated), and qsort(NULL, 0, ...) is
 * undefined in C (glibc declares base nonnull; UBSan stops on it, found by
 * tests/fuzz/fuzz_trace).
 */
#ifndef IOTRAIL_ANALYZE_SORT_H
#define IOTRAIL_ANALYZE_SORT_H

#include <stdlib.h>

static inline void it_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

#endif
