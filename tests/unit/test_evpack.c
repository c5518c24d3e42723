// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Packed events and word-packed records (src/evpack.c): exact round trips
 * of every field at its extremes, the worst-case size bound, and damaged
 * input rejected rather than decoded into wrong events.
 */
#include "harness.h"
#include "evpack.h"

#include <stdlib.h>

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t pack_all(const struct it_event *evs, size_t n, uint8_t *out)
{
	struct it_packer p;
	size_t len = 0;

	it_pack_reset(&p);
	for (size_t i = 0; i < n; i++) {
		size_t k = it_pack_event(&p, &evs[i], out + len);

		if (!ASSERT_LE(k, IT_PACK_MAX, "one event's bytes"))
			return 0;
		len += k;
	}
	return len;
}

static bool round_trip(const struct it_event *evs, size_t n, const char *what)
{
	uint8_t *buf = malloc(n * IT_PACK_MAX);
	struct it_event *back = calloc(n, sizeof(*back));
	bool ok = false;
	size_t len;

	if (!ASSERT_NOT_NULL(buf, "malloc") || !ASSERT_NOT_NULL(back, "calloc"))
		goto out;
	len = pack_all(evs, n, buf);
	if (ASSERT_EQ(it_unpack_events(buf, len, back, n), 0, what))
		ok = ASSERT_TRUE(!memcmp(back, evs, n * sizeof(*evs)), what);
out:
	free(buf);
	free(back);
	return ok;
}

/* Random bytes in every field, including padding and comm: whatever the
 * recorder hands over comes back bit for bit. */
TEST(evpack_random_bytes_round_trip)
{
	enum { N = 5000 };
	struct it_event *evs = malloc(N * sizeof(*evs));
	uint64_t s = 12345;

	if (!ASSERT_NOT_NULL(evs, "malloc"))
		return;
	for (size_t i = 0; i < N * sizeof(*evs) / 8; i++)
		((uint64_t *)evs)[i] = rng(&s);
	/* random bits in type spread over all 256 values and the ref slots */
	round_trip(evs, N, "random events");
	free(evs);
}

/* Each field at 0, its maximum and back, and time going backwards (events
 * of two CPUs reserved in one order, stamped in the other). */
TEST(evpack_extremes)
{
	struct it_event evs[8];

	memset(evs, 0, sizeof(evs));
	for (int i = 0; i < 8; i++)
		evs[i].type = IT_EV_RQ_ISSUE;
	evs[1].ts_ns = UINT64_MAX;
	evs[1].id = UINT64_MAX;
	evs[1].sector = UINT64_MAX;
	evs[1].aux = 1ull << 63;
	evs[1].dev = UINT32_MAX;
	evs[1].bytes = UINT32_MAX;
	evs[1].pid = UINT32_MAX;
	evs[1].tid = 1;
	evs[1].flags = 0x80000000u;
	evs[1].error = -32768;
	evs[1].tag = 0xffff;
	evs[1].hwq = 0x8000;
	evs[1].op = 0xff;
	evs[1].layer = 0x80;
	evs[1].cpu_lo = 0x7f;
	evs[1].reserved = 0xffff;
	evs[2] = evs[1];          /* identical to its reference: mask 0 */
	evs[3].ts_ns = 5;         /* back to near zero: the largest negative step */
	evs[4].ts_ns = 4;         /* backwards by one */
	evs[5].ts_ns = 1ull << 62;
	evs[5].error = 32767;
	evs[6] = evs[5];
	evs[6].type = IT_EV_TASK;
	memcpy(evs[6].comm, "fio\0\xff\x80" "comm-name!", 16);
	evs[7] = evs[1];
	evs[7].type = IT_EV_TYPE_MAX + IT_PACK_REFS; /* shares a slot with type 25 */
	round_trip(evs, 8, "extremes");
}

/* An I/O's Q, D and C in the shape the probes emit them pack into far less
 * than the 64 bytes of the struct: the point of the encoding. */
TEST(evpack_block_stream_is_small)
{
	enum { NIO = 3000 };
	struct it_event *evs = calloc(3 * NIO, sizeof(*evs));
	uint8_t *buf = malloc(3 * NIO * IT_PACK_MAX);
	uint64_t s = 7, ts = 1000000000;
	size_t len;

	if (!ASSERT_NOT_NULL(evs, "calloc") || !ASSERT_NOT_NULL(buf, "malloc"))
		goto out;
	for (size_t i = 0; i < NIO; i++) {
		uint64_t bio = 0xffff888104a00000ull + (rng(&s) % 256) * 0x100;
		uint64_t rq = 0xffff888110000000ull + (rng(&s) % 32) * 0x180;
		uint64_t sector = (rng(&s) % (1u << 20)) * 8;

		for (int k = 0; k < 3; k++) {
			struct it_event *e = &evs[3 * i + k];

			ts += 300 + rng(&s) % 2000;
			e->ts_ns = ts;
			e->type = k == 0 ? IT_EV_BIO_QUEUE : k == 1 ? IT_EV_RQ_ISSUE : IT_EV_RQ_COMPLETE;
			e->id = k ? rq : bio;
			e->aux = k ? bio : 0;
			e->sector = sector;
			e->dev = IT_MKDEV(7, 0);
			e->bytes = 4096;
			e->pid = e->tid = 4242;
			e->layer = IT_LAYER_BLOCK;
			e->tag = k ? (uint16_t)(rq >> 7 & 31) : 0xffff;
			e->hwq = k ? 0 : 0xffff;
			e->cpu_lo = (uint8_t)(rng(&s) & 1);
		}
	}
	len = pack_all(evs, 3 * NIO, buf);
	ASSERT_LE((double)len / (3 * NIO), 16, "bytes per event");
	round_trip(evs, 3 * NIO, "block stream");
out:
	free(evs);
	free(buf);
}

/* Cut anywhere, or given a byte more or an event more or less, the decoder
 * says no: a damaged chunk must stop the reader, never yield events. */
TEST(evpack_damage_is_rejected)
{
	enum { N = 64 };
	struct it_event evs[N], back[N + 1];
	uint8_t buf[N * IT_PACK_MAX + 16];
	uint64_t s = 99;
	size_t len;

	memset(evs, 0, sizeof(evs));
	for (size_t i = 0; i < N; i++) {
		evs[i].ts_ns = 1000 + 100 * i;
		evs[i].type = (uint8_t)(2 + i % 3);
		evs[i].id = rng(&s);
		evs[i].sector = rng(&s) >> 20;
	}
	len = pack_all(evs, N, buf);
	for (size_t cut = 0; cut < len; cut++)
		if (it_unpack_events(buf, cut, back, N) == 0) {
			ASSERT_TRUE(false, "a cut stream decoded");
			break;
		}
	buf[len] = 0;
	ASSERT_EQ(it_unpack_events(buf, len + 1, back, N), -1, "a byte left over");
	ASSERT_EQ(it_unpack_events(buf, len, back, N + 1), -1, "one event too many");
	ASSERT_EQ(it_unpack_events(buf, len, back, N - 1), -1, "one event too few");
	buf[2] |= 0x80; /* mask bit 15: no such field */
	ASSERT_EQ(it_unpack_events(buf, len, back, N), -1, "unknown field bit");
	/* an endless varint: eleven continuation bytes */
	memset(buf, 0, 3);
	memset(buf + 3, 0xff, 11);
	ASSERT_EQ(it_unpack_events(buf, 14, back, 1), -1, "varint past 10 bytes");
	ASSERT_EQ(it_unpack_events(buf, 0, back, 0), 0, "nothing is zero events");
}

/* ---- word-packed records (IT_COMP_WORDS) ---- */

static size_t wpack_all(const uint64_t *recs, size_t n, unsigned int nwords, uint8_t *out)
{
	struct it_wpacker p;
	size_t len = 0;

	it_wpack_reset(&p);
	for (size_t i = 0; i < n; i++) {
		size_t k = it_wpack_record(&p, recs + i * nwords, nwords, out + len);

		if (!ASSERT_LE(k, IT_WPACK_MAX(nwords), "one record's bytes"))
			return 0;
		len += k;
	}
	return len;
}

/* Random words of every width a layout can have (1 to 16 words), with
 * runs of equal words: every record comes back bit for bit. */
TEST(wpack_random_words_round_trip)
{
	enum { N = 3000 };
	uint64_t *recs = malloc(N * IT_WPACK_WORDS * sizeof(*recs));
	uint64_t *back = malloc(N * IT_WPACK_WORDS * sizeof(*back));
	uint8_t *buf = malloc(N * IT_WPACK_MAX(IT_WPACK_WORDS));
	uint64_t s = 777;

	if (!ASSERT_NOT_NULL(recs, "malloc") || !ASSERT_NOT_NULL(back, "malloc") ||
	    !ASSERT_NOT_NULL(buf, "malloc"))
		goto out;
	for (unsigned int nw = 1; nw <= IT_WPACK_WORDS; nw++) {
		size_t len;

		for (size_t i = 0; i < N * nw; i++) {
			uint64_t r = rng(&s);

			/* a third repeat the word before, a third are extremes */
			recs[i] = i >= nw && r % 3 == 0 ? recs[i - nw] :
				  r % 3 == 1 ? (r & 4 ? UINT64_MAX : (uint64_t)INT64_MIN) : rng(&s);
		}
		len = wpack_all(recs, N, nw, buf);
		memset(back, 0xa5, N * nw * sizeof(*back));
		if (!ASSERT_EQ(it_wunpack_records(buf, len, back, N, nw), 0, "decodes") ||
		    !ASSERT_TRUE(!memcmp(back, recs, N * nw * sizeof(*recs)), "records equal"))
			break;
	}
out:
	free(recs);
	free(back);
	free(buf);
}

/* A stream shaped like the syscall layer's (112-byte calls: an
 * io_uring_enter then the request it submitted, in turn, times a few
 * microseconds apart, random offsets) packs to a fifth of its size or
 * less: what makes packing worth it over zstd. */
TEST(wpack_syscall_stream_is_small)
{
	enum { N = 4000, NW = 14 };
	static uint64_t recs[N][NW], back[N][NW];
	static uint8_t buf[N * IT_WPACK_MAX(NW)];
	uint64_t s = 4242, t = 1000000000;
	size_t len;

	for (size_t i = 0; i < N; i++) {
		bool req = i & 1;

		recs[i][0] = 1 | (uint64_t)(req ? 3 : 60) << 16; /* rec, call */
		recs[i][1] = 4242 | (uint64_t)4243 << 32;         /* pid, tid */
		recs[i][2] = 1 | (uint64_t)(req ? 5 : 4) << 32;   /* ppid, fd */
		recs[i][4] = (uint64_t)(rng(&s) & 1) << 32;       /* dev, cpu */
		t += 1000 + rng(&s) % 4000;
		recs[i][5] = t;                                   /* ts_enter */
		recs[i][6] = t + (req ? 20000 + rng(&s) % 5000 : 900);
		recs[i][7] = req ? 4096 : 1;                      /* ret */
		recs[i][8] = req ? (rng(&s) % (1u << 17)) << 12 : 0; /* offset */
		recs[i][9] = req ? 4096 : 0;
		recs[i][10] = req ? 12 : 0;                       /* ino */
		recs[i][12] = 1234;                               /* cgroup */
		recs[i][13] = req ? 0x55d0a0000000ull + (rng(&s) % 32) * 64 : 1;
	}
	len = wpack_all(&recs[0][0], N, NW, buf);
	ASSERT_EQ(it_wunpack_records(buf, len, &back[0][0], N, NW), 0, "decodes");
	ASSERT_TRUE(!memcmp(back, recs, sizeof(recs)), "records equal");
	ASSERT_LE(len, sizeof(recs) / 5, "packed to a fifth or less");
}

/* Cut anywhere, a byte or a record more or less, a slot or word bit out
 * of range: the decoder says no. */
TEST(wpack_damage_is_rejected)
{
	enum { N = 64, NW = 5 };
	uint64_t recs[N][NW], back[N + 1][NW];
	uint8_t buf[N * IT_WPACK_MAX(NW) + 16];
	uint64_t s = 5;
	size_t len;

	for (size_t i = 0; i < N; i++)
		for (size_t k = 0; k < NW; k++)
			recs[i][k] = k == 0 ? i % 3 : rng(&s) >> (8 * k);
	len = wpack_all(&recs[0][0], N, NW, buf);
	for (size_t cut = 0; cut < len; cut++)
		if (it_wunpack_records(buf, cut, back, N, NW) == 0) {
			ASSERT_TRUE(false, "a cut stream decoded");
			break;
		}
	buf[len] = 0;
	ASSERT_EQ(it_wunpack_records(buf, len + 1, back, N, NW), -1, "a byte left over");
	ASSERT_EQ(it_wunpack_records(buf, len, back, N + 1, NW), -1, "one record too many");
	ASSERT_EQ(it_wunpack_records(buf, len, back, N - 1, NW), -1, "one record too few");
	ASSERT_EQ(it_wunpack_records(buf, len, back, N, NW), 0, "the stream itself decodes");
	buf[2] |= 0x01; /* mask bit 8: no word 8 in a 5-word record */
	ASSERT_EQ(it_wunpack_records(buf, len, back, N, NW), -1, "word bit out of range");
	buf[2] &= (uint8_t)~0x01;
	buf[0] = IT_WPACK_REFS; /* no such slot */
	ASSERT_EQ(it_wunpack_records(buf, len, back, N, NW), -1, "slot out of range");
	ASSERT_EQ(it_wunpack_records(buf, len, back, N, 0), -1, "no words");
	ASSERT_EQ(it_wunpack_records(buf, len, back, N, IT_WPACK_WORDS + 1), -1, "too many words");
	/* an endless varint: eleven continuation bytes */
	memset(buf, 0, 3);
	buf[1] = 1;
	memset(buf + 3, 0xff, 11);
	ASSERT_EQ(it_wunpack_records(buf, 14, back, 1, NW), -1, "varint past 10 bytes");
	ASSERT_EQ(it_wunpack_records(buf, 0, back, 0, NW), 0, "nothing is zero records");
}
