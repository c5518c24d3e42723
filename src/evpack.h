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

/*
 * The packed encoding of other fixed-size records (compression
 * IT_COMP_WORDS, version 4; doc/trace-format.md): a record of up to 16
 * 64-bit words, each word coded against the same word of the previous
 * record in the same reference slot. The slot is the packer's choice, from
 * the record's first 32 bits (a syscall record's kind and call), and is
 * written with the record, so a reader needs no knowledge of the layout.
 * The syscall layer's 112-byte calls pack to ~20 bytes at ~15 ns each,
 * where zstd -1 took ~10 times that.
 */
#define IT_WPACK_REFS 16
#define IT_WPACK_WORDS 16
/* The most one record of n words can take: slot, mask, n varints. */
#define IT_WPACK_MAX(nwords) (3 + 10 * (nwords))

struct it_wpacker {
	uint64_t ref[IT_WPACK_REFS][IT_WPACK_WORDS];
};

/* Forgets every reference: call at the start of each chunk. */
void it_wpack_reset(struct it_wpacker *p);

/* Appends the encoding of the record at rec (nwords 64-bit words, 1 to
 * IT_WPACK_WORDS, any alignment) at out, which has IT_WPACK_MAX(nwords)
 * bytes free; returns the bytes written. */
size_t it_wpack_record(struct it_wpacker *p, const void *rec, unsigned int nwords, uint8_t *out);

/* Decodes exactly n records of nwords words from the len bytes at in into
 * recs. Returns 0, or -1 when the bytes are not n such records (damage:
 * a slot or word bit out of range, a truncated varint, bytes left over). */
int it_wunpack_records(const uint8_t *in, size_t len, void *recs, size_t n, unsigned int nwords);

#endif
