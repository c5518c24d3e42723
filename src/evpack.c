// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Packed events (see evpack.h). One event is:
 *
 *   type     1 byte
 *   mask     2 bytes, little endian: bit i set when field i differs from
 *            the reference (the previous event of the same type)
 *   ts       varint: zigzag of ts - the previous event's ts (any type; the
 *            ring buffer's order is nearly, not exactly, time order)
 *   fields   for each bit set in mask, in field order: varint of the zigzag
 *            of (value - reference value), computed at the field's width
 *
 * varint is LEB128 (7 bits per byte, low first). A field equal to its
 * reference costs nothing; a pointer near the last one (requests come from
 * one tag set, bios from one slab) costs 2-3 bytes.
 */
#include <string.h>

#include "evpack.h"

/* field order, mask bit = position */
#define PACK_FIELDS(X)                                                             \
	X(id, uint64_t, int64_t)                                                   \
	X(sector, uint64_t, int64_t)                                               \
	X(aux, uint64_t, int64_t)                                                  \
	X(dev, uint32_t, int32_t)                                                  \
	X(bytes, uint32_t, int32_t)                                                \
	X(pid, uint32_t, int32_t)                                                  \
	X(tid, uint32_t, int32_t)                                                  \
	X(flags, uint32_t, int32_t)                                                \
	X(error, uint16_t, int16_t)                                                \
	X(tag, uint16_t, int16_t)                                                  \
	X(hwq, uint16_t, int16_t)                                                  \
	X(op, uint8_t, int8_t)                                                     \
	X(layer, uint8_t, int8_t)                                                  \
	X(cpu_lo, uint8_t, int8_t)                                                 \
	X(reserved, uint16_t, int16_t)

enum {
#define BIT(f, u, s) BIT_##f,
	PACK_FIELDS(BIT)
#undef BIT
	NFIELDS
};
_Static_assert(NFIELDS <= 16, "the mask is 16 bits");

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* Reads a varint at *in (< end); NULL when it runs past end or past 10 bytes. */
static inline const uint8_t *get_varint(const uint8_t *in, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned int shift = 0; shift < 70 && in < end; shift += 7) {
		uint8_t b = *in++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return in;
		}
	}
	return NULL;
}

/* The same without the bounds check, for the bulk of a chunk: the caller
 * makes sure 10 bytes (the longest varint) are left. One-byte varints, the
 * most common (fields that moved a little), take the first branch. */
static inline const uint8_t *get_varint_fast(const uint8_t *in, uint64_t *v)
{
	uint64_t r;

	if (!(in[0] & 0x80)) {
		*v = in[0];
		return in + 1;
	}
	r = in[0] & 0x7f;
	for (unsigned int shift = 7; shift < 70; shift += 7) {
		uint8_t b = *++in;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return in + 1;
		}
	}
	return NULL;
}

void it_pack_reset(struct it_packer *p)
{
	memset(p, 0, sizeof(*p));
}

size_t it_pack_event(struct it_packer *p, const struct it_event *e, uint8_t *out)
{
	struct it_event *ref = &p->ref[e->type % IT_PACK_REFS];
	uint8_t *o = out + 3;
	unsigned int mask = 0;

	o = put_varint(o, zigzag((int64_t)(e->ts_ns - p->ts)));
	p->ts = e->ts_ns;
#define ENC(f, u, s)                                                               \
	if (e->f != ref->f) {                                                      \
		mask |= 1u << BIT_##f;                                             \
		o = put_varint(o, zigzag((s)(u)((u)e->f - (u)ref->f)));            \
	}
	PACK_FIELDS(ENC)
#undef ENC
	out[0] = e->type;
	out[1] = (uint8_t)mask;
	out[2] = (uint8_t)(mask >> 8);
	*ref = *e;
	return (size_t)(o - out);
}

/* One event at in with every varint read by GET; the new position, or
 * NULL when the input is malformed. An event is at most 3 bytes and 16
 * varints: 163 bytes. */
#define EVENT_MAX (3 + 16 * 10)
#define UNPACK_ONE(GET, DEC)                                                         \
	do {                                                                       \
		struct it_event *e = &evs[i];                                      \
		const struct it_event *ref = refs[in[0] % IT_PACK_REFS];           \
		unsigned int mask;                                                 \
									   \
		*e = *ref;                                                         \
		e->type = in[0];                                                   \
		mask = in[1] | (unsigned int)in[2] << 8;                           \
		if (mask >> NFIELDS)                                               \
			return -1;                                                 \
		in = GET(in + 3, &v);                                              \
		if (!in)                                                           \
			return -1;                                                 \
		ts += (uint64_t)unzigzag(v);                                       \
		e->ts_ns = ts;                                                     \
		PACK_FIELDS(DEC)                                                   \
		refs[e->type % IT_PACK_REFS] = e;                                  \
	} while (0)
#define DEC_WITH(GET, f, u)                                                        \
	if (mask & (1u << BIT_##f)) {                                              \
		in = GET(in, &v);                                                  \
		if (!in)                                                           \
			return -1;                                                 \
		e->f = (u)((u)ref->f + (u)unzigzag(v));                            \
	}
#define GET_CHECKED(at, pv) get_varint(at, end, pv)
#define DEC_FAST(f, u, s) DEC_WITH(get_varint_fast, f, u)
#define DEC_CHECKED(f, u, s) DEC_WITH(GET_CHECKED, f, u)

int it_unpack_events(const uint8_t *in, size_t len, struct it_event *evs, size_t n)
{
	static const struct it_event zero;
	const uint8_t *end = in + len;
	/* the reference of each type is the last event of that type, already
	 * in evs: no copy back per event (as the packer's table needs) */
	const struct it_event *refs[IT_PACK_REFS];
	uint64_t ts = 0, v;
	size_t i = 0;

	for (size_t k = 0; k < IT_PACK_REFS; k++)
		refs[k] = &zero;
	/* far from the end, no varint can run past it: no bounds checks */
	for (; i < n && end - in >= EVENT_MAX; i++)
		UNPACK_ONE(get_varint_fast, DEC_FAST);
	for (; i < n; i++) {
		if (end - in < 3)
			return -1;
		UNPACK_ONE(GET_CHECKED, DEC_CHECKED);
	}
	return in == end ? 0 : -1;
}

/* ---- fixed-size records of 64-bit words (IT_COMP_WORDS) ---- */

void it_wpack_reset(struct it_wpacker *p)
{
	memset(p, 0, sizeof(*p));
}

/* The reference slot of a record: its first 32 bits folded to 4 (a syscall
 * record's kind and call; records alike in them are alike in the rest). */
static inline unsigned int wpack_slot(uint64_t w0)
{
	uint32_t k = (uint32_t)w0;

	k ^= k >> 16;
	k ^= k >> 8;
	return (k ^ k >> 4) % IT_WPACK_REFS;
}

size_t it_wpack_record(struct it_wpacker *p, const void *rec, unsigned int nwords, uint8_t *out)
{
	const unsigned char *r = rec;
	unsigned int mask = 0, slot;
	uint8_t *o = out + 3;
	uint64_t w, *ref;

	memcpy(&w, r, sizeof(w));
	slot = wpack_slot(w);
	ref = p->ref[slot];
	/* a word at a time from the record (no copy of it first) */
	for (unsigned int i = 0; i < nwords; i++, r += sizeof(w)) {
		memcpy(&w, r, sizeof(w));
		if (w != ref[i]) {
			mask |= 1u << i;
			o = put_varint(o, zigzag((int64_t)(w - ref[i])));
			ref[i] = w;
		}
	}
	out[0] = (uint8_t)slot;
	out[1] = (uint8_t)mask;
	out[2] = (uint8_t)(mask >> 8);
	return (size_t)(o - out);
}

int it_wunpack_records(const uint8_t *in, size_t len, void *recs, size_t n, unsigned int nwords)
{
	static const uint64_t zero[IT_WPACK_WORDS];
	const uint8_t *end = in + len;
	/* as it_unpack_events: each slot's reference is its last record in recs */
	const uint64_t *refs[IT_WPACK_REFS];
	uint64_t *r = recs, v;

	if (!nwords || nwords > IT_WPACK_WORDS)
		return -1;
	for (size_t k = 0; k < IT_WPACK_REFS; k++)
		refs[k] = zero;
	for (size_t i = 0; i < n; i++, r += nwords) {
		const uint64_t *ref;
		unsigned int mask;

		if (end - in < 3 || in[0] >= IT_WPACK_REFS)
			return -1;
		ref = refs[in[0]];
		refs[in[0]] = r;
		mask = in[1] | (unsigned int)in[2] << 8;
		if (mask >> nwords)
			return -1;
		in += 3;
		for (unsigned int k = 0; k < nwords; k++) {
			r[k] = ref[k];
			if (!(mask & (1u << k)))
				continue;
			in = end - in >= 10 ? get_varint_fast(in, &v) : get_varint(in, end, &v);
			if (!in)
				return -1;
			r[k] += (uint64_t)unzigzag(v);
		}
	}
	return in == end ? 0 : -1;
}
