/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The NVMe/TCP target's switches for LOAD (query.c): a fabric join
 * (layers/fabric/fabric.h) over one span of a spool, whose commands are
 * the target's alone (no host command is given to it). Apart from query.c
 * so that the fabric's headers and the protocol's do not meet.
 */
#ifndef IOTRAIL_AGENT_QUERY_TARGET_H
#define IOTRAIL_AGENT_QUERY_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/hist.h"
#include "iotrail/event.h"

/* The fabric stage named (it_fabric_stages[]: "target.dev"), or -1. */
int it_target_stage(const char *name);

struct it_target_span;
/* Commands parsed and completed in [from, to). NULL: out of memory. */
struct it_target_span *it_target_span_new(uint64_t from, uint64_t to);
/* A batch of the spool's events (those of the span are taken), then the
 * block trails the analyzer completed in it. 0, or -1 (out of memory). */
int it_target_span_feed(struct it_target_span *s, const struct it_event *evs, size_t n);
void it_target_span_trail(struct it_target_span *s, uint32_t dev, uint64_t q, uint64_t d,
			  uint64_t c);
/* After the last batch: the stage's times of the commands of initiator
 * controller cntlid and NVMe opcode (-1: any) merged into *h, their number
 * added to *ios. 0, or -1 (out of memory). */
int it_target_span_stat(struct it_target_span *s, int stage, int cntlid, int opcode,
			uint64_t *ios, struct it_hist *h);
void it_target_span_free(struct it_target_span *s);

#endif
