// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Event encodings side by side on a real trace: packing (src/evpack.c, what
 * the recorder does), zstd at the writer's old level -1 on the raw 64-byte
 * events, and zstd over the packed bytes. Prints ns and bytes per event for
 * each, in chunks of 16384 events as the writer makes them, and checks that
 * every packed chunk unpacks to the same events. Then the same for the
 * syscall layer's 112-byte records, if the trace has them: word packing
 * (what the recorder does since format version 4) against zstd -1 (what it
 * did before), in chunks as the writer makes them.
 *
 *   build/bench/codec TRACE      (e.g. from iotrail record of fio at QD 32)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "evpack.h"
#include "iotrail/syscall.h"
#include "tracefile.h"

#define CHUNK 16384u
#define MAX_EVENTS (8u << 20)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Packs evs[0..m) into out; returns the bytes. */
static size_t pack_chunk(const struct it_event *evs, size_t m, uint8_t *out)
{
	struct it_packer p;
	size_t len = 0;

	it_pack_reset(&p);
	for (size_t j = 0; j < m; j++)
		len += it_pack_event(&p, &evs[j], out + len);
	return len;
}

/* The syscall layer's records of path: word-packed against zstd -1, per
 * writer-sized chunk (each packed chunk checked to unpack the same). */
static int syscall_codecs(const char *path, ZSTD_CCtx *cc)
{
	const struct it_select sel = { IT_ANY, IT_LAYER_SYSCALL, IT_CHUNK_SYSCALLS };
	enum { REC = sizeof(struct it_sys_event), NW = REC / 8, PER = (1u << 20) / REC };
	size_t n = 0, cap = 1u << 16, packed = 0, zraw = 0;
	uint64_t *all = malloc(cap * REC), *back = malloc((size_t)PER * REC);
	uint8_t *out = malloc((size_t)PER * IT_WPACK_MAX(NW));
	uint8_t *zbuf = malloc(ZSTD_compressBound((size_t)PER * REC));
	struct it_wpacker *p = malloc(sizeof(*p));
	struct it_reader *r;
	struct it_chunk c;
	char err[256];
	double t0, t1, t2;
	int rc = 1;

	if (!all || !back || !out || !zbuf || !p) {
		fprintf(stderr, "codec: out of memory\n");
		goto out;
	}
	if (!(r = it_reader_open_select(path, &sel, 1, err, sizeof(err)))) {
		fprintf(stderr, "codec: %s: %s\n", path, err);
		goto out;
	}
	while (it_reader_next_chunk(r, &c) > 0 && n + c.count <= MAX_EVENTS) {
		if (n + c.count > cap) {
			uint64_t *more = realloc(all, (cap *= 2) * REC);

			if (!more)
				break;
			all = more;
		}
		memcpy((uint8_t *)all + n * REC, c.data, (size_t)c.count * REC);
		n += c.count;
	}
	it_reader_close(r);
	if (!n) {
		rc = 0; /* a trace without the syscall layer: nothing to compare */
		goto out;
	}
	/* twice, the first untimed: its first touches of the records (page
	 * faults, cold caches) took 7 times the second's time here */
	for (int pass = 0; pass < 2; pass++) {
		packed = 0;
		t0 = now();
		for (size_t i = 0; i < n; i += PER) {
			size_t m = n - i < PER ? n - i : PER;

			it_wpack_reset(p);
			for (size_t j = 0; j < m; j++)
				packed += it_wpack_record(p, all + (i + j) * NW, NW, out);
		}
		t1 = now();
	}
	for (size_t i = 0; i < n; i += PER) {
		size_t m = n - i < PER ? n - i : PER;

		zraw += ZSTD_compress2(cc, zbuf, ZSTD_compressBound((size_t)PER * REC), all + i * NW,
				       m * REC);
	}
	t2 = now();
	for (size_t i = 0; i < n; i += PER) {
		size_t m = n - i < PER ? n - i : PER, len = 0;

		it_wpack_reset(p);
		for (size_t j = 0; j < m; j++)
			len += it_wpack_record(p, all + (i + j) * NW, NW, out + len);
		if (it_wunpack_records(out, len, back, m, NW) || memcmp(back, all + i * NW, m * REC)) {
			fprintf(stderr, "codec: syscall chunk at record %zu does not round-trip\n", i);
			goto out;
		}
	}
	printf("%zu syscall records (%u bytes) of %s, chunks of %u\n", n, (unsigned)REC, path,
	       (unsigned)PER);
	printf("word-packed   %6.1f ns/record %6.2f bytes/record\n", (t1 - t0) / n * 1e9,
	       (double)packed / n);
	printf("zstd -1       %6.1f ns/record %6.2f bytes/record\n", (t2 - t1) / n * 1e9,
	       (double)zraw / n);
	printf("ratio zstd/word-packed time: %.1f\n", (t2 - t1) / (t1 - t0));
	rc = 0;
out:
	free(all);
	free(back);
	free(out);
	free(zbuf);
	free(p);
	return rc;
}

int main(int argc, char **argv)
{
	size_t n = 0, got, packed = 0, zpacked = 0, zraw = 0;
	const struct it_event *batch;
	struct it_event *all, *back;
	uint8_t *out, *zbuf;
	struct it_reader *r;
	ZSTD_CCtx *cc;
	char err[256];
	double t0, t1, t2, t3;

	if (argc != 2) {
		fprintf(stderr, "usage: codec TRACE\n");
		return 2;
	}
	r = it_reader_open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "codec: %s: %s\n", argv[1], err);
		return 1;
	}
	all = malloc((size_t)MAX_EVENTS * sizeof(*all));
	back = malloc(CHUNK * sizeof(*back));
	out = malloc((size_t)CHUNK * IT_PACK_MAX);
	zbuf = malloc(ZSTD_compressBound(CHUNK * sizeof(*all)));
	cc = ZSTD_createCCtx();
	if (!all || !back || !out || !zbuf || !cc) {
		fprintf(stderr, "codec: out of memory\n");
		return 1;
	}
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, -1);
	while (it_reader_next(r, &batch, &got) > 0 && n + got <= MAX_EVENTS) {
		memcpy(all + n, batch, got * sizeof(*all));
		n += got;
	}
	it_reader_close(r);
	if (!n) {
		fprintf(stderr, "codec: %s has no events\n", argv[1]);
		return 1;
	}

	t0 = now();
	for (size_t i = 0; i < n; i += CHUNK)
		packed += pack_chunk(all + i, n - i < CHUNK ? n - i : CHUNK, out);
	t1 = now();
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t m = n - i < CHUNK ? n - i : CHUNK;

		zraw += ZSTD_compress2(cc, zbuf, ZSTD_compressBound(CHUNK * sizeof(*all)),
				       all + i, m * sizeof(*all));
	}
	t2 = now();
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t m = n - i < CHUNK ? n - i : CHUNK, len = pack_chunk(all + i, m, out);

		zpacked += ZSTD_compress2(cc, zbuf, ZSTD_compressBound(CHUNK * sizeof(*all)), out, len);
	}
	t3 = now();
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t m = n - i < CHUNK ? n - i : CHUNK, len = pack_chunk(all + i, m, out);

		if (it_unpack_events(out, len, back, m) || memcmp(back, all + i, m * sizeof(*all))) {
			fprintf(stderr, "codec: chunk at event %zu does not round-trip\n", i);
			return 1;
		}
	}
	printf("%zu events of %s, chunks of %u\n", n, argv[1], CHUNK);
	printf("packed        %6.1f ns/event %6.2f bytes/event\n", (t1 - t0) / n * 1e9, (double)packed / n);
	printf("zstd -1       %6.1f ns/event %6.2f bytes/event\n", (t2 - t1) / n * 1e9, (double)zraw / n);
	printf("packed+zstd   %6.1f ns/event %6.2f bytes/event\n", (t3 - t2) / n * 1e9, (double)zpacked / n);
	printf("ratio zstd/packed time: %.1f\n", (t2 - t1) / (t1 - t0));
	if (syscall_codecs(argv[1], cc))
		return 1;
	ZSTD_freeCCtx(cc);
	free(all);
	free(back);
	free(out);
	free(zbuf);
	return 0;
}
