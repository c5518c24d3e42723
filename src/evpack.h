/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The packed encoding of struct it_event in EVENTS chunks (compression
 * IT_COMP_PACK; doc/trace-format.md). The recorder packs each event as it
 * leaves the ring buffer: a few nanoseconds and ~12-16 bytes per event,
 * where zstd took ~90 ns for a similar size, on the core the traced
 * workload also needs.
 *
 * Each event is coded against the previous event of the same type (and
 * its timestamp against the previous event of any type), so one I/O's Q,
 * D and C each find a close relative. State starts empty at every chunk:
 * a chunk decodes on its own.
 */
#ifndef IOTRAIL_EVPACK_H
#define IOTRAIL_EVPACK_H

#include <stddef.h>
#include <stdint.h>

#include "iotrail/event.h"

#define IT_PACK_REFS 32       /* reference slots: event type modulo this */
/* The most one event can take: type, mask, and 16 varints of up to 10 bytes. */
#define IT_PACK_MAX 176

struct it_packer {
	struct it_event ref[IT_PACK_REFS];
	uint64_t ts;
};

/* Forgets every reference: call at the start of each chunk. */
void it_pack_reset(struct it_packer *p);

/* Appends e's encoding at out (which has IT_PACK_MAX bytes free); returns
 * the bytes written. */
size_t it_pack_event(struct it_packer *p, const struct it_event *e, uint8_t *out);

/* Decodes exactly n events from the len bytes at in into evs. Returns 0, or
 * -1 when the bytes are not n packed events (damage: truncated varint, an
 * event past the end, bytes left over). */
int it_unpack_events(const uint8_t *in, size_t len, struct it_event *evs, size_t n);

#endif
