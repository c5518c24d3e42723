/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * One trace file from several: the initiator's own recording (machine 0)
 * and each target's (a copy of its agent's trace file, whole chunks only,
 * perhaps cut short when the agent was lost): target i becomes machine
 * i + 1. Pure C.
 */
#ifndef IOTRAIL_TRACE_MERGE_H
#define IOTRAIL_TRACE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "iotrail/trace_format.h"

struct it_merge_target {
	const char *path;             /* the target's trace (its head at least) */
	struct it_clock_rec clock;    /* machine and ref_machine are set by the merge */
	const char *lost;             /* NULL, or why the agent was lost (a NOTE) */
	uint64_t lost_at_ns;          /* when, on machine 0's clock */
	/* the clock estimate from the matched I/Os (analyze/clock_store.h), or
	 * NULL: none stored */
	const struct it_clock_est_rec *est;
	const struct it_clock_window_rec *windows;
	size_t nwindows;
};

struct it_merge_result {
	uint64_t target_chunks, target_events; /* copied as its machine */
	int target_complete;          /* the target's file ended with END */
};

/* Writes out (through out.merge, renamed at the end) from local (machine
 * 0, every chunk kept) and t[0..nt) (machines 1..nt), res[i] what came of
 * t[i]. 0, or -1 with a one-line reason in err and nothing at out. */
int it_trace_merge(const char *out, const char *local, const struct it_merge_target *t,
		   size_t nt, struct it_merge_result *res, char *err, size_t errlen);

#endif
