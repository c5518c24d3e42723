/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * One trace file from two: the initiator's own recording (machine 0) and a
 * target's (a copy of the agent's trace file, whole chunks only, perhaps
 * cut short when the agent was lost), which becomes machine 1. Pure C.
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
};

struct it_merge_result {
	uint64_t target_chunks, target_events; /* copied as machine 1 */
	int target_complete;          /* the target's file ended with END */
};

/* Writes out (through out.tmp, renamed at the end) from local (machine 0,
 * every chunk kept) and t (machine 1). 0, or -1 with a one-line reason in
 * err and nothing at out. */
int it_trace_merge(const char *out, const char *local, const struct it_merge_target *t,
		   struct it_merge_result *res, char *err, size_t errlen);

#endif
