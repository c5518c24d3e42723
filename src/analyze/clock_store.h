/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The clock estimate of each target machine of a merged trace, made with
 * the report's own join (layers/fabric: matched I/Os, NTP's four
 * timestamps each) for `record --target` to store in the file (CLOCK_EST
 * and CLOCK_WINDOWS, doc/trace-format.md). Pure C.
 */
#ifndef IOTRAIL_ANALYZE_CLOCK_STORE_H
#define IOTRAIL_ANALYZE_CLOCK_STORE_H

#include <stddef.h>

#include "iotrail/trace_format.h"

struct it_clock_store {
	struct it_clock_est_rec est;  /* method 0: no estimate (no fabric join, no I/O matched
				       * and no exchange) */
	struct it_clock_window_rec *windows; /* malloc'd */
	size_t nwindows;
};

/* est[i] for machine i + 1 of the file at path (machines 1..n). 0, or -1
 * with a reason in err (a read error, out of memory). */
int it_clock_store_estimate(const char *path, struct it_clock_store *est, size_t n, char *err,
			    size_t errlen);
void it_clock_store_free(struct it_clock_store *est, size_t n);

#endif
