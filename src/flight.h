/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The flight recorder (`iotrail record --flight 30s`): the I/O path's
 * events (struct it_event: block, NVMe) kept in a bounded ring in memory,
 * only those of the last window; written out on SIGUSR1, at the end, or
 * when a trigger fires (`--trigger q2c>5ms`: one I/O's stage over a
 * threshold). Pure C: src/record.c feeds it and writes its window.
 */
#ifndef IOTRAIL_FLIGHT_H
#define IOTRAIL_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iotrail/event.h"
#include "task.h"

/* A spike fires the trigger once: it re-arms when an I/O completes under
 * the threshold this long after the last one over it (over-threshold
 * completions closer together than this are one spike: a device that
 * stalls often releases its backlog in bursts). */
#define IT_FLIGHT_REARM_NS 500000000ull

struct it_flight;

/* A recorder of window_ns, in at most mem_bytes (at least one event's
 * room); trig may be NULL or off. NULL out of memory. */
struct it_flight *it_flight_new(uint64_t window_ns, size_t mem_bytes, const struct it_trigger *trig);
void it_flight_free(struct it_flight *f);

/* Adds one event (in time order, as the ring gives them) and lets go of
 * those older than the window before it. Returns true when the trigger
 * fires on it. */
bool it_flight_add(struct it_flight *f, const struct it_event *e);

/* Calls fn on each event kept, oldest first, whose time is within the
 * window before now_ns. Returns how many, or fn's first non-zero return. */
long it_flight_each(const struct it_flight *f, uint64_t now_ns,
		    int (*fn)(const struct it_event *e, void *ctx), void *ctx);

struct it_flight_stats {
	uint64_t added;        /* events given */
	uint64_t overwritten;  /* still in the window, but pushed out by the memory bound */
	uint64_t fired;        /* trigger firings */
	size_t capacity;       /* events the memory bound holds */
};
void it_flight_stats(const struct it_flight *f, struct it_flight_stats *st);

#endif
