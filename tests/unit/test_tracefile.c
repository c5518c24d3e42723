// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Trace file: round trip, files cut at every offset, flipped bytes, foreign
 * and future files, losses without END, incompressible data, unknown chunks.
 */
#include "harness.h"
#include "layer_table.h"
#include "tracefile.h"
#include "layers/syscall/sysan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define SMALL_CHUNK 100     /* events per chunk in the damage tests (via flush) */
#define NSMALL      5       /* EVENTS chunks in the damage tests */

/* A writer as iotrail record opens it for the block layer. */
static struct it_writer *open_w(const char *path, const struct it_host_rec *host,
				const struct it_device_rec *devs, size_t ndevs, char *err,
				size_t errlen)
{
	struct it_trace_head head = { .host = host, .devs = devs, .ndevs = ndevs,
				      .layers = it_layer_builtin(IT_LAYER_BLOCK), .nlayers = 1 };

	return it_writer_open(path, &head, err, errlen);
}

/* Block events, with the losses so far for the next chunk headers. */
static int add_evs(struct it_writer *w, const struct it_event *evs, size_t n, uint64_t dropped)
{
	it_writer_set_lost(w, 0, IT_LAYER_BLOCK, dropped);
	return it_writer_add_events(w, IT_LAYER_BLOCK, evs, n);
}

/* Closes with the block layer's per-CPU losses (a DROPS chunk), if any. */
static int close_w(struct it_writer *w, const uint64_t *drops, uint32_t ncpu, uint64_t end)
{
	if (drops && it_writer_set_drops(w, 0, IT_LAYER_BLOCK, drops, ncpu)) {
		it_writer_abort(w);
		return -1;
	}
	return it_writer_close(w, end);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Block-layer-like events: compressible, every field exercised. */
static void gen_events(struct it_event *ev, size_t n, uint64_t seed)
{
	uint64_t s = seed | 1, ts = 1000000000;

	for (size_t i = 0; i < n; i++) {
		struct it_event *e = &ev[i];

		memset(e, 0, sizeof(*e));
		ts += 500 + rng_next(&s) % 4000;
		e->ts_ns = ts;
		e->type = (uint8_t)(IT_EV_BIO_QUEUE + i % 4 * 2);
		e->id = 0xffff888104a00000ull + (rng_next(&s) % 64) * 0x100;
		e->sector = (rng_next(&s) % (1u << 20)) * 8;
		e->aux = i % 3 ? 0 : e->id + 0x40;
		e->dev = IT_MKDEV(7, i % 2);
		e->bytes = 4096u << (i % 3);
		e->pid = 4242;
		e->tid = 4242 + (uint32_t)(i % 4);
		e->flags = IT_F_SYNC;
		e->error = i % 97 ? 0 : -5;
		e->tag = (uint16_t)(i % 32);
		e->hwq = (uint16_t)(i % 2);
		e->op = i % 5 ? IT_OP_READ : IT_OP_WRITE;
		e->layer = IT_LAYER_BLOCK;
		e->cpu_lo = (uint8_t)(i % 2);
	}
}

static void make_host(struct it_host_rec *h)
{
	memset(h, 0, sizeof(*h));
	strcpy(h->hostname, "testhost");
	strcpy(h->kernel, "6.18.0-test");
	strcpy(h->boot_id, "0f3c2a9e-8d8b-4b8e-9a55-1b2c3d4e5f60");
	strcpy(h->clock, "monotonic");
	h->ncpus = 4;
	h->page_size = 4096;
	h->start_realtime_ns = 1763728422000000000ull;
	h->start_monotonic_ns = 123456789;
	strcpy(h->command, "iotrail record -o x.trail -- fio job.fio");
	strcpy(h->layers, "block");
	strcpy(h->hooks, "block=tp_btf");
}

static void make_devs(struct it_device_rec *d, size_t n)
{
	memset(d, 0, n * sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		d[i].dev = IT_MKDEV(7, (uint32_t)i);
		snprintf(d[i].name, sizeof(d[i].name), "loop%zu", i);
		strcpy(d[i].scheduler, i % 2 ? "mq-deadline" : "none");
		d[i].logical_block_size = 512;
		d[i].physical_block_size = 4096;
		d[i].max_sectors_kb = 1280;
		d[i].max_hw_sectors_kb = 2048;
		d[i].nr_requests = 128;
		d[i].blk_mq = 1;
		d[i].size_sectors = 2097152ull << i;
	}
}

static bool tmp_path(char *path)
{
	int fd;

	strcpy(path, "/tmp/iotrail-test-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat sb;
	unsigned char *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &sb)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = malloc((size_t)sb.st_size + 1);
	if (p && read(fd, p, (size_t)sb.st_size) != sb.st_size) {
		free(p);
		p = NULL;
	}
	close(fd);
	*len = (size_t)sb.st_size;
	return p;
}

static bool spit(const char *path, const void *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool ok = fd >= 0 && write(fd, p, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok;
}

/* What a reader saw of a whole file. */
struct readback {
	bool opened;
	int rc;                 /* last it_reader_next result */
	char err[256];          /* open failure */
	char why[256];          /* it_reader_error after the end */
	struct it_event *evs;
	size_t n, cap;
	bool overflow;
	struct it_reader_status st;
	uint64_t drops[16];
	struct it_host_rec host;
	struct it_device_rec devs[8];
	size_t ndevs;
};

static void read_back(const char *path, struct readback *b, size_t cap)
{
	struct it_reader *r;
	const struct it_event *evs;
	size_t n;

	memset(b, 0, sizeof(*b));
	b->cap = cap;
	b->evs = malloc((cap ? cap : 1) * sizeof(*b->evs));
	r = it_reader_open(path, b->err, sizeof(b->err));
	if (!r)
		return;
	b->opened = true;
	b->host = *it_reader_host(r);
	{
		const struct it_device_rec *d = it_reader_devices(r, &b->ndevs);

		memcpy(b->devs, d, (b->ndevs < 8 ? b->ndevs : 8) * sizeof(*d));
	}
	while ((b->rc = it_reader_next(r, &evs, &n)) == 1) {
		if (b->n + n > cap) {
			b->overflow = true;
			continue;
		}
		memcpy(b->evs + b->n, evs, n * sizeof(*evs));
		b->n += n;
	}
	it_reader_status(r, &b->st);
	if (b->st.drops_per_cpu)
		memcpy(b->drops, b->st.drops_per_cpu,
		       (b->st.ncpu < 16 ? b->st.ncpu : 16) * sizeof(uint64_t));
	b->st.drops_per_cpu = NULL; /* owned by the closed reader */
	snprintf(b->why, sizeof(b->why), "%s", it_reader_error(r));
	it_reader_close(r);
}

static void readback_free(struct readback *b)
{
	free(b->evs);
}

/* A file of NSMALL EVENTS chunks of SMALL_CHUNK events, drops {3, 0, 4},
 * closed cleanly. bounds[0] = end of DEVICES, bounds[k] = end of the k-th
 * EVENTS chunk, bounds[NSMALL + 1] = end of DROPS, bounds[NSMALL + 2] = size. */
static bool write_small(const char *path, struct it_event *evs, uint64_t *bounds)
{
	struct it_host_rec host;
	struct it_device_rec devs[2];
	uint64_t drops[3] = { 3, 0, 4 };
	char err[256];
	struct it_writer *w;

	make_host(&host);
	make_devs(devs, 2);
	gen_events(evs, NSMALL * SMALL_CHUNK, 7);
	w = open_w(path, &host, devs, 2, err, sizeof(err));
	if (!w)
		return false;
	bounds[0] = it_writer_bytes(w);
	for (int k = 0; k < NSMALL; k++) {
		if (add_evs(w, evs + k * SMALL_CHUNK, SMALL_CHUNK, (uint64_t)k) ||
		    it_writer_flush(w)) {
			it_writer_abort(w);
			return false;
		}
		bounds[k + 1] = it_writer_bytes(w);
	}
	if (close_w(w, drops, 3, 999))
		return false;
	/* DROPS follows the last EVENTS chunk; END ends the file */
	{
		struct it_chunk_header h;
		size_t len;
		unsigned char *file = slurp(path, &len);
		bool ok = file && len >= bounds[NSMALL] + sizeof(h);

		if (ok) {
			memcpy(&h, file + bounds[NSMALL], sizeof(h));
			bounds[NSMALL + 1] = bounds[NSMALL] + sizeof(h) + h.stored_len;
			bounds[NSMALL + 2] = len;
			ok = h.type == IT_CHUNK_DROPS && bounds[NSMALL + 1] < len;
		}
		free(file);
		return ok;
	}
}

/* Same CRC as the writer: header with payload_crc 0, then payload. */
static uint32_t test_crc(const struct it_chunk_header *h, const void *p, size_t len)
{
	struct it_chunk_header c = *h;
	uLong crc;

	c.payload_crc = 0;
	crc = crc32(0L, (const Bytef *)&c, sizeof(c));
	if (len)
		crc = crc32(crc, p, (uInt)len);
	return (uint32_t)crc;
}

static void roundtrip(bool readahead)
{
	enum { N = 50000 };
	struct it_event *evs = malloc(N * sizeof(*evs));
	struct it_host_rec host;
	struct it_device_rec devs[3];
	uint64_t drops[4] = { 1, 2, 3, 0 };
	char path[64], err[256];
	struct readback b;
	struct it_writer *w;
	size_t at = 0;
	/* pieces: a whole chunk at once (the no-copy path), single events, a
	 * flush in the middle (a short chunk), a tail left for close to flush:
	 * EVENTS chunks of 16384, 10008, 16384, 7224 events */
	const size_t pieces[] = { 16384, 1, 7, 10000, 0, 1, 23607 };

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	gen_events(evs, N, 42);
	make_host(&host);
	make_devs(devs, 3);
	w = open_w(path, &host, devs, 3, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		goto out;
	for (size_t i = 0; i < sizeof(pieces) / sizeof(*pieces); i++) {
		if (!pieces[i]) {
			ASSERT_EQ(it_writer_flush(w), 0, "flush");
			continue;
		}
		ASSERT_EQ(add_evs(w, evs + at, pieces[i], at ? 5 : 0), 0, "add");
		at += pieces[i];
	}
	ASSERT_EQ(at, N, "pieces add up");
	ASSERT_EQ(close_w(w, drops, 4, 987654321), 0, "close");

	if (!readahead)
		setenv("IOTRAIL_READAHEAD", "0", 1);
	read_back(path, &b, N);
	unsetenv("IOTRAIL_READAHEAD");
	if (ASSERT_TRUE(b.opened, b.err)) {
		ASSERT_TRUE(!memcmp(&b.host, &host, sizeof(host)), "host record equal");
		ASSERT_EQ(b.ndevs, 3, "devices");
		ASSERT_TRUE(!memcmp(b.devs, devs, sizeof(devs)), "device records equal");
		ASSERT_EQ(b.rc, 0, "clean end");
		ASSERT_EQ(b.n, N, "events");
		ASSERT_TRUE(!b.overflow && !memcmp(b.evs, evs, N * sizeof(*evs)), "events equal");
		ASSERT_TRUE(b.st.complete, "complete");
		ASSERT_TRUE(!b.st.truncated, "not truncated");
		ASSERT_U64_EQ(b.st.events, N, "status events");
		ASSERT_U64_EQ(b.st.chunks, 3 + 4 + 2, "chunks: HOST DEVICES LAYERS 4xEVENTS DROPS END");
		ASSERT_U64_EQ(b.st.dropped_total, 6, "dropped_total");
		ASSERT_EQ(b.st.ncpu, 4, "ncpu");
		ASSERT_TRUE(!memcmp(b.drops, drops, sizeof(drops)), "drops per cpu");
		ASSERT_U64_EQ(b.st.end_monotonic_ns, 987654321, "end time");
		ASSERT_STREQ(b.why, "", "no error");
	}
	readback_free(&b);
out:
	unlink(path);
	free(evs);
}

TEST(tracefile_roundtrip)
{
	roundtrip(true);
}

TEST(tracefile_roundtrip_without_readahead)
{
	roundtrip(false);
}

TEST(tracefile_device_lookup)
{
	struct it_host_rec host;
	struct it_device_rec devs[3];
	char path[64], err[256];
	struct it_writer *w;
	struct it_reader *r;
	const struct it_device_rec *d;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	make_host(&host);
	make_devs(devs, 3);
	w = open_w(path, &host, devs, 3, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		goto out;
	ASSERT_EQ(close_w(w, NULL, 0, 1), 0, "close");
	r = it_reader_open(path, err, sizeof(err));
	if (ASSERT_NOT_NULL(r, err)) {
		d = it_reader_device(r, IT_MKDEV(7, 2));
		if (ASSERT_NOT_NULL(d, "loop2"))
			ASSERT_STREQ(d->name, "loop2", "name");
		ASSERT_TRUE(it_reader_device(r, IT_MKDEV(8, 0)) == NULL, "unknown dev");
		it_reader_close(r);
	}
out:
	unlink(path);
}

/* Expected stop for a file cut to len bytes. */
static void check_cut(const char *path, const struct it_event *orig, const uint64_t *bounds,
		      uint64_t len, int *failures)
{
	const uint64_t size = bounds[NSMALL + 2];
	struct readback b;
	size_t whole = 0;
	uint64_t stop = bounds[0];
	int before = it_test_failed;

	it_test_failed = 0;
	read_back(path, &b, NSMALL * SMALL_CHUNK);
	if (len < bounds[0]) {
		ASSERT_TRUE(!b.opened, "header part cut: open fails");
		ASSERT_TRUE(strstr(b.err, len ? "cut short" : "empty") != NULL, b.err);
		goto done;
	}
	for (int k = 1; k <= NSMALL; k++)
		if (bounds[k] <= len) {
			whole = (size_t)k * SMALL_CHUNK;
			stop = bounds[k];
		}
	if (len >= bounds[NSMALL + 1])
		stop = bounds[NSMALL + 1];
	if (!ASSERT_TRUE(b.opened, b.err))
		goto done;
	ASSERT_EQ(b.rc, 0, "stops cleanly");
	ASSERT_EQ(b.n, whole, "events of the complete chunks");
	ASSERT_TRUE(!memcmp(b.evs, orig, b.n * sizeof(*orig)), "events equal");
	ASSERT_EQ(b.st.truncated, len != size, "truncated");
	ASSERT_EQ(b.st.complete, len == size, "complete");
	if (len != size) {
		ASSERT_U64_EQ(b.st.bad_offset, stop, "bad_offset");
		ASSERT_TRUE(b.why[0] != '\0', "a reason");
		/* drops known from DROPS once it is whole, else from chunk headers */
		ASSERT_U64_EQ(b.st.dropped_total, len >= bounds[NSMALL + 1] ? 7 :
			      whole ? whole / SMALL_CHUNK - 1 : 0, "dropped_total");
	}
done:
	if (it_test_failed) {
		fprintf(stderr, "  ... for the file cut at %llu of %llu bytes\n",
			(unsigned long long)len, (unsigned long long)size);
		(*failures)++;
	}
	it_test_failed |= before;
	readback_free(&b);
}

TEST(tracefile_cut_at_every_offset)
{
	struct it_event *evs = malloc(NSMALL * SMALL_CHUNK * sizeof(*evs));
	uint64_t bounds[NSMALL + 3];
	char path[64];
	int failures = 0;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!ASSERT_TRUE(write_small(path, evs, bounds), "write"))
		goto out;
	/* from the end down, so that ftruncate only shrinks the one file */
	for (uint64_t len = bounds[NSMALL + 2] + 1; len-- > 0 && failures < 5;) {
		bool near_bound = false;

		for (int k = 0; k < NSMALL + 3; k++)
			near_bound |= len + 1 >= bounds[k] && len <= bounds[k] + 1;
		/* every offset up to the end of the 2nd EVENTS chunk, every
		 * chunk boundary and its neighbours, a sample of the rest */
		if (len > bounds[2] && !near_bound && len % 13)
			continue;
		if (!ASSERT_EQ(truncate(path, (off_t)len), 0, "truncate"))
			break;
		check_cut(path, evs, bounds, len, &failures);
	}
	ASSERT_EQ(failures, 0, "cut files read as expected");
out:
	unlink(path);
	free(evs);
}

/* Flips one byte at off and reads the file back. */
static void read_flipped(const char *path, const unsigned char *orig, size_t len, size_t off,
			 struct readback *b)
{
	unsigned char *copy = malloc(len);

	memcpy(copy, orig, len);
	copy[off] ^= 0x20;
	spit(path, copy, len);
	read_back(path, b, NSMALL * SMALL_CHUNK);
	free(copy);
}

TEST(tracefile_flipped_byte_stops_at_its_chunk)
{
	struct it_event *evs = malloc(NSMALL * SMALL_CHUNK * sizeof(*evs));
	uint64_t bounds[NSMALL + 3];
	char path[64];
	unsigned char *file = NULL;
	size_t len;
	struct readback b;
	const size_t hdr = sizeof(struct it_chunk_header);
	/* in the 3rd EVENTS chunk: a payload byte, the type, count, dropped_total,
	 * machine, layer */
	const size_t offs[] = { 44, 4, 16, 24, 32, 34 };

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!ASSERT_TRUE(write_small(path, evs, bounds), "write") ||
	    !ASSERT_NOT_NULL(file = slurp(path, &len), "slurp"))
		goto out;
	for (size_t i = 0; i < sizeof(offs) / sizeof(*offs); i++) {
		read_flipped(path, file, len, bounds[2] + offs[i], &b);
		if (ASSERT_TRUE(b.opened, b.err)) {
			ASSERT_EQ(b.n, 2 * SMALL_CHUNK, "events before the damage");
			ASSERT_TRUE(!memcmp(b.evs, evs, b.n * sizeof(*evs)), "events equal");
			ASSERT_TRUE(b.st.truncated && !b.st.complete, "truncated");
			ASSERT_U64_EQ(b.st.bad_offset, bounds[2], "bad_offset");
		}
		readback_free(&b);
	}
	/* damaged HOST and DEVICES: open fails with a reason */
	read_flipped(path, file, len, sizeof(struct it_file_header) + hdr + 3, &b);
	ASSERT_TRUE(!b.opened && strstr(b.err, "corrupt HOST"), b.err);
	readback_free(&b);
	{
		struct it_chunk_header host_h;
		size_t devs_at = sizeof(struct it_file_header) + hdr;

		memcpy(&host_h, file + sizeof(struct it_file_header), sizeof(host_h));
		devs_at += host_h.stored_len;
		read_flipped(path, file, len, devs_at + hdr + 1, &b);
		ASSERT_TRUE(!b.opened && strstr(b.err, "corrupt DEVICES"), b.err);
		readback_free(&b);
	}
	/* the last bytes before the events are the LAYERS chunk's */
	read_flipped(path, file, len, bounds[0] - 2, &b);
	ASSERT_TRUE(!b.opened && strstr(b.err, "corrupt LAYERS"), b.err);
	readback_free(&b);
out:
	free(file);
	unlink(path);
	free(evs);
}

/* Rewrites the 3rd EVENTS chunk header with consistent CRC but absurd
 * lengths: the reader must refuse before it allocates or reads. */
TEST(tracefile_absurd_lengths)
{
	struct it_event *evs = malloc(NSMALL * SMALL_CHUNK * sizeof(*evs));
	uint64_t bounds[NSMALL + 3];
	char path[64];
	unsigned char *file = NULL;
	size_t len;
	struct readback b;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!ASSERT_TRUE(write_small(path, evs, bounds), "write") ||
	    !ASSERT_NOT_NULL(file = slurp(path, &len), "slurp"))
		goto out;
	for (int variant = 0; variant < 4; variant++) {
		struct it_chunk_header h;
		unsigned char *copy = malloc(len);

		memcpy(copy, file, len);
		memcpy(&h, copy + bounds[2], sizeof(h));
		if (variant == 0)
			h.raw_len = 0xfffffff0u;
		else if (variant == 1)
			h.stored_len = 0x7fffffffu;
		else if (variant == 2)
			h.count += 1;           /* raw_len no longer count * 64 */
		else
			h.compression = 7;
		/* CRC made consistent, so only the length checks can catch it */
		h.payload_crc = test_crc(&h, copy + bounds[2] + sizeof(h),
					 variant == 1 ? 0 : h.stored_len);
		memcpy(copy + bounds[2], &h, sizeof(h));
		spit(path, copy, len);
		free(copy);
		read_back(path, &b, NSMALL * SMALL_CHUNK);
		if (ASSERT_TRUE(b.opened, b.err)) {
			ASSERT_EQ(b.n, 2 * SMALL_CHUNK, "events before the damage");
			ASSERT_TRUE(b.st.truncated, "truncated");
			ASSERT_U64_EQ(b.st.bad_offset, bounds[2], "bad_offset");
			ASSERT_TRUE(b.why[0] != '\0', "a reason");
		}
		readback_free(&b);
	}
out:
	free(file);
	unlink(path);
	free(evs);
}

/* An END whose counts disagree with the file (a writer bug or a spliced
 * file) is not trusted: every event is read, but the file is not complete. */
TEST(tracefile_end_that_disagrees)
{
	struct it_event *evs = malloc(NSMALL * SMALL_CHUNK * sizeof(*evs));
	uint64_t bounds[NSMALL + 3];
	char path[64];
	unsigned char *file = NULL;
	size_t len;
	struct readback b;
	struct it_chunk_header h;
	struct it_end_rec end;
	unsigned char *at;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!ASSERT_TRUE(write_small(path, evs, bounds), "write") ||
	    !ASSERT_NOT_NULL(file = slurp(path, &len), "slurp"))
		goto out;
	at = file + bounds[NSMALL + 1];
	memcpy(&h, at, sizeof(h));
	/* 32 bytes do not shrink under zstd: END is stored as is */
	if (!ASSERT_EQ(h.compression, IT_COMP_NONE, "END stored") ||
	    !ASSERT_EQ(h.type, IT_CHUNK_END, "END type"))
		goto out;
	memcpy(&end, at + sizeof(h), sizeof(end));
	ASSERT_U64_EQ(end.events_total, NSMALL * SMALL_CHUNK, "END events_total");
	ASSERT_U64_EQ(end.chunks, 3 + NSMALL + 1, "END chunks");
	ASSERT_U64_EQ(end.dropped_total, 7, "END dropped_total");
	ASSERT_U64_EQ(end.end_monotonic_ns, 999, "END time");
	end.events_total++;
	memcpy(at + sizeof(h), &end, sizeof(end));
	h.payload_crc = test_crc(&h, &end, sizeof(end));
	memcpy(at, &h, sizeof(h));
	spit(path, file, len);
	read_back(path, &b, NSMALL * SMALL_CHUNK);
	if (ASSERT_TRUE(b.opened, b.err)) {
		ASSERT_EQ(b.n, NSMALL * SMALL_CHUNK, "every event");
		ASSERT_TRUE(!b.st.complete && b.st.truncated, "not complete");
		ASSERT_U64_EQ(b.st.bad_offset, bounds[NSMALL + 1], "bad_offset at END");
		ASSERT_U64_EQ(b.st.dropped_total, 7, "drops from DROPS");
		ASSERT_TRUE(strstr(b.why, "END") != NULL, b.why);
	}
	readback_free(&b);
out:
	free(file);
	unlink(path);
	free(evs);
}

/* Random damage anywhere: never a crash, always a prefix of whole chunks. */
TEST(tracefile_random_damage)
{
	struct it_event *evs = malloc(NSMALL * SMALL_CHUNK * sizeof(*evs));
	uint64_t bounds[NSMALL + 3], s = 12345;
	char path[64];
	unsigned char *file = NULL, *copy = NULL;
	size_t len;
	struct readback b;
	int bad = 0;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!ASSERT_TRUE(write_small(path, evs, bounds), "write") ||
	    !ASSERT_NOT_NULL(file = slurp(path, &len), "slurp"))
		goto out;
	copy = malloc(len);
	for (int it = 0; it < 300; it++) {
		size_t cut = len - rng_next(&s) % 64;

		memcpy(copy, file, len);
		for (int f = 0, nf = 1 + (int)(rng_next(&s) % 3); f < nf; f++)
			copy[rng_next(&s) % len] ^= (unsigned char)(1 + rng_next(&s) % 255);
		spit(path, copy, cut);
		read_back(path, &b, NSMALL * SMALL_CHUNK);
		if (b.opened && (b.rc != 0 || b.n % SMALL_CHUNK ||
				 memcmp(b.evs, evs, b.n * sizeof(*evs))))
			bad++;
		if (!b.opened && !b.err[0])
			bad++;
		readback_free(&b);
	}
	ASSERT_EQ(bad, 0, "damaged files read as a prefix of whole chunks");
out:
	free(copy);
	free(file);
	unlink(path);
	free(evs);
}

static void expect_open_error(const char *path, const void *data, size_t len,
			      const char *want1, const char *want2)
{
	char err[256] = "";
	struct it_reader *r;

	if (data)
		spit(path, data, len);
	r = it_reader_open(path, err, sizeof(err));
	if (!ASSERT_TRUE(r == NULL, want1)) {
		it_reader_close(r);
		return;
	}
	ASSERT_TRUE(strstr(err, want1) != NULL, err);
	if (want2)
		ASSERT_TRUE(strstr(err, want2) != NULL, err);
	ASSERT_TRUE(strchr(err, '\n') == NULL, "one line");
}

TEST(tracefile_foreign_empty_and_future_files)
{
	static const char text[] = "# this is a fio job file\n[global]\nrw=randread\n";
	struct it_file_header fh = {
		.magic = IT_TRACE_MAGIC, .version = IT_TRACE_VERSION,
		.header_size = sizeof(fh), .event_size = sizeof(struct it_event),
	};
	char path[64];

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	expect_open_error(path, text, sizeof(text) - 1, "not an iotrail trace file", NULL);
	expect_open_error(path, "", 0, "empty file", NULL);
	expect_open_error(path, "IOTR", 4, "cut short", NULL);
	expect_open_error(path, &fh, 20, "cut short", NULL);
	expect_open_error(path, &fh, sizeof(fh), "cut short", "HOST");
	fh.version = IT_TRACE_VERSION + 1;
	expect_open_error(path, &fh, sizeof(fh), "version 5", "reads versions 1 to 4");
	fh.version = __builtin_bswap32(IT_TRACE_VERSION);
	expect_open_error(path, &fh, sizeof(fh), "big-endian", NULL);
	fh.version = IT_TRACE_VERSION;
	fh.event_size = 48;
	expect_open_error(path, &fh, sizeof(fh), "event size 48", NULL);
	unlink(path);
	expect_open_error("/nonexistent/x.trail", NULL, 0, "No such file", NULL);
}

TEST(tracefile_drops_from_chunk_headers_without_end)
{
	enum { N = 3 * SMALL_CHUNK };
	struct it_event evs[N];
	struct it_host_rec host;
	struct it_device_rec dev;
	char path[64], err[256];
	struct it_writer *w;
	struct readback b;
	const uint64_t dropped[3] = { 0, 5, 17 };

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	gen_events(evs, N, 3);
	make_host(&host);
	make_devs(&dev, 1);
	w = open_w(path, &host, &dev, 1, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		goto out;
	for (int k = 0; k < 3; k++) {
		ASSERT_EQ(add_evs(w, evs + k * SMALL_CHUNK, SMALL_CHUNK, dropped[k]), 0, "add");
		ASSERT_EQ(it_writer_flush(w), 0, "flush");
	}
	it_writer_abort(w);     /* as if the recorder died: no DROPS, no END */
	read_back(path, &b, N);
	if (ASSERT_TRUE(b.opened, b.err)) {
		ASSERT_EQ(b.n, N, "events");
		ASSERT_TRUE(!b.st.complete && b.st.truncated, "cut short");
		ASSERT_U64_EQ(b.st.dropped_total, 17, "dropped_total of the last chunk");
		ASSERT_EQ(b.st.ncpu, 0, "no per-CPU drops");
		ASSERT_U64_EQ(b.st.end_monotonic_ns, 0, "no end time");
		ASSERT_TRUE(strstr(b.why, "without an END") != NULL, b.why);
	}
	readback_free(&b);
out:
	unlink(path);
}

TEST(tracefile_incompressible_payload)
{
	enum { N = 20000 };
	struct it_event *evs = malloc(N * sizeof(*evs));
	struct it_host_rec host;
	char path[64], err[256];
	struct it_writer *w;
	struct readback b;
	struct it_chunk_header h;
	uint64_t s = 99, start;
	unsigned char *file = NULL;
	size_t len;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	for (size_t i = 0; i < N * sizeof(*evs) / 8; i++)
		((uint64_t *)evs)[i] = rng_next(&s);
	make_host(&host);
	w = open_w(path, &host, NULL, 0, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		goto out;
	start = it_writer_bytes(w);
	ASSERT_EQ(add_evs(w, evs, N, 0), 0, "add");
	ASSERT_EQ(close_w(w, NULL, 0, 5), 0, "close");
	if (ASSERT_NOT_NULL(file = slurp(path, &len), "slurp") &&
	    ASSERT_TRUE(len > start + sizeof(h), "length")) {
		memcpy(&h, file + start, sizeof(h));
		ASSERT_EQ(h.type, IT_CHUNK_EVENTS, "first chunk after DEVICES");
		ASSERT_EQ(h.compression, IT_COMP_NONE, "stored, neither packed nor compressed");
		ASSERT_EQ(h.stored_len, h.raw_len, "stored length");
	}
	read_back(path, &b, N);
	if (ASSERT_TRUE(b.opened, b.err)) {
		ASSERT_EQ(b.ndevs, 0, "no devices");
		ASSERT_EQ(b.n, N, "events");
		ASSERT_TRUE(!memcmp(b.evs, evs, N * sizeof(*evs)), "events equal");
		ASSERT_TRUE(b.st.complete, "complete");
	}
	readback_free(&b);
out:
	free(file);
	unlink(path);
	free(evs);
}

/* A chunk type this build does not know (from a newer writer) is skipped. */
TEST(tracefile_unknown_chunk_type_is_skipped)
{
	struct it_event *evs = malloc(NSMALL * SMALL_CHUNK * sizeof(*evs));
	uint64_t bounds[NSMALL + 3];
	unsigned char payload[100], *file = NULL, *spliced = NULL;
	struct it_chunk_header h = {
		.magic = IT_CHUNK_MAGIC, .type = 77, .compression = IT_COMP_NONE,
		.raw_len = sizeof(payload), .stored_len = sizeof(payload), .count = 1,
		.dropped_total = 1,
	};
	char path[64];
	size_t len, at;
	struct readback b;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!ASSERT_TRUE(write_small(path, evs, bounds), "write") ||
	    !ASSERT_NOT_NULL(file = slurp(path, &len), "slurp"))
		goto out;
	memset(payload, 0xab, sizeof(payload));
	h.payload_crc = test_crc(&h, payload, sizeof(payload));
	/* the events only (no DROPS/END, whose counts would not include it) */
	len = bounds[NSMALL];
	at = bounds[1];
	spliced = malloc(len + sizeof(h) + sizeof(payload));
	memcpy(spliced, file, at);
	memcpy(spliced + at, &h, sizeof(h));
	memcpy(spliced + at + sizeof(h), payload, sizeof(payload));
	memcpy(spliced + at + sizeof(h) + sizeof(payload), file + at, len - at);
	len += sizeof(h) + sizeof(payload);
	spit(path, spliced, len);
	read_back(path, &b, NSMALL * SMALL_CHUNK);
	if (ASSERT_TRUE(b.opened, b.err)) {
		ASSERT_EQ(b.n, NSMALL * SMALL_CHUNK, "every event");
		ASSERT_TRUE(!memcmp(b.evs, evs, b.n * sizeof(*evs)), "events equal");
		ASSERT_U64_EQ(b.st.bad_offset, len, "stops at the end of the file");
		ASSERT_U64_EQ(b.st.chunks, 3 + NSMALL + 1, "chunks, the unknown one included");
	}
	readback_free(&b);
out:
	free(spliced);
	free(file);
	unlink(path);
	free(evs);
}

/* Closing in the middle (read-ahead thread waiting for a free slot). */
TEST(tracefile_close_while_reading)
{
	enum { N = 8 * 16384 };
	struct it_event *evs = malloc(N * sizeof(*evs));
	struct it_host_rec host;
	char path[64], err[256];
	struct it_writer *w;
	struct it_reader *r;
	const struct it_event *got;
	size_t n;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	gen_events(evs, N, 5);
	make_host(&host);
	w = open_w(path, &host, NULL, 0, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		goto out;
	ASSERT_EQ(add_evs(w, evs, N, 0), 0, "add");
	ASSERT_EQ(close_w(w, NULL, 0, 5), 0, "close");
	r = it_reader_open(path, err, sizeof(err));
	if (ASSERT_NOT_NULL(r, err)) {
		ASSERT_EQ(it_reader_next(r, &got, &n), 1, "first batch");
		ASSERT_EQ(n, 16384, "a whole chunk");
		ASSERT_TRUE(n && !memcmp(got, evs, n * sizeof(*got)), "events equal");
		usleep(20000);  /* let the read-ahead fill every slot */
		it_reader_close(r);
	}
out:
	unlink(path);
	free(evs);
}

TEST(tracefile_writer_errors)
{
	struct it_host_rec host;
	char err[256] = "";
	struct it_writer *w;

	make_host(&host);
	w = open_w("/nonexistent/x.trail", &host, NULL, 0, err, sizeof(err));
	ASSERT_TRUE(w == NULL, "no directory");
	ASSERT_TRUE(strstr(err, "cannot create") != NULL, err);
	if (access("/dev/full", W_OK))
		return;
	w = open_w("/dev/full", &host, NULL, 0, err, sizeof(err));
	ASSERT_TRUE(w == NULL, "full disk");
	ASSERT_TRUE(strstr(err, "No space left") != NULL, err);
}

/* A file under tests/data. */
static void data_path(char *path, size_t len, const char *name)
{
	const char *slash = strrchr(__FILE__, '/');

	snprintf(path, len, "%.*s/../data/%s", slash ? (int)(slash - __FILE__) : 1,
		 slash ? __FILE__ : ".", name);
}

/* Version 2 only added packed EVENTS chunks: a file written by the version-1
 * writer (tests/data/v1-events.trail, made by commit 5c4180a's writer from
 * gen_events(1000, seed 2024) in chunks of 600 and 400 events, drops 1 and
 * 2 per CPU, end time 7777) still reads, event for event. */
TEST(tracefile_reads_version_1_files)
{
	static struct it_event want[1000];
	char path[512];
	struct readback b;

	data_path(path, sizeof(path), "v1-events.trail");
	gen_events(want, 1000, 2024);
	read_back(path, &b, 1000);
	if (ASSERT_TRUE(b.opened, b.err)) {
		ASSERT_EQ(b.n, 1000, "events");
		ASSERT_TRUE(b.n == 1000 && !memcmp(b.evs, want, sizeof(want)), "events equal");
		ASSERT_TRUE(b.st.complete, "complete");
		ASSERT_EQ(b.st.chunks, 6, "HOST, DEVICES, 2 EVENTS, DROPS, END");
		ASSERT_EQ(b.st.dropped_total, 3, "drops");
		ASSERT_EQ(b.st.end_monotonic_ns, 7777, "end time");
	}
	readback_free(&b);
}

/* Probe runs the kernel skipped are stored (MISSED chunk) and read back;
 * a file without the chunk says it does not know. */
TEST(tracefile_probe_misses_round_trip)
{
	struct it_event evs[10];
	struct it_host_rec host;
	char path[64], err[256];
	struct it_writer *w;
	struct readback b;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	gen_events(evs, 10, 5);
	make_host(&host);
	for (int with = 0; with < 2; with++) {
		w = open_w(path, &host, NULL, 0, err, sizeof(err));
		if (!ASSERT_NOT_NULL(w, err))
			break;
		ASSERT_EQ(add_evs(w, evs, 10, 0), 0, "add");
		if (with)
			it_writer_set_missed(w, 0, IT_LAYER_BLOCK, 37);
		ASSERT_EQ(close_w(w, NULL, 0, 5), 0, "close");
		read_back(path, &b, 10);
		if (ASSERT_TRUE(b.opened, b.err)) {
			ASSERT_EQ(b.n, 10, "events");
			ASSERT_TRUE(b.st.complete, "complete");
			ASSERT_EQ(b.st.missed_known, with, "MISSED chunk present");
			ASSERT_EQ(b.st.missed, with ? 37 : 0, "missed runs");
		}
		readback_free(&b);
	}
	unlink(path);
}

/* Records of one chunk type from a file, in file order, and a CRC of them. */
struct recs {
	uint64_t n, bytes, chunks;
	uint32_t crc;
	struct it_reader_status st;
};

static bool read_recs(const char *path, uint16_t type, struct recs *o,
		      void (*each)(const void *p, size_t len, uint32_t count, void *ctx), void *ctx)
{
	char err[256];
	struct it_reader *r = it_reader_open_records(path, &type, 1, err, sizeof(err));
	const void *p;
	uint16_t t;
	uint32_t count;
	size_t len;

	memset(o, 0, sizeof(*o));
	if (!ASSERT_NOT_NULL(r, err))
		return false;
	o->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	while (it_reader_next_records(r, &t, &p, &len, &count) > 0) {
		ASSERT_EQ(t, type, "chunk type handed out");
		o->crc = (uint32_t)crc32(o->crc, p, (uInt)len);
		o->n += count;
		o->bytes += len;
		o->chunks++;
		if (each)
			each(p, len, count, ctx);
	}
	it_reader_status(r, &o->st);
	it_reader_close(r);
	return true;
}

static void count_calls(const void *p, size_t len, uint32_t count, void *ctx)
{
	uint64_t *per_call = ctx;
	const struct it_sys_event *e = p;

	(void)len;
	for (uint32_t i = 0; i < count; i++)
		per_call[e[i].call < IT_SYS_MAX ? e[i].call : 0]++;
}

static void count_side(const void *p, size_t len, uint32_t count, void *ctx)
{
	uint64_t *walked = ctx;
	size_t off = 0, rl;

	(void)count;
	while (it_sys_side_next(p, len, &off, &rl))
		(*walked)++;
}

/*
 * tests/data/v2-block-syscall.trail: recorded by the version-2 build (commit
 * 6b0cbf9) with `iotrail record --dev /dev/loop0 -- sh -c 'dd ... oflag=direct;
 * dd ... iflag=direct'` (200 4K direct writes, then 200 4K direct reads) on a
 * loop device over tmpfs with mq-deadline. Every count and CRC below was
 * taken from that build's reader and `iotrail report --json`: the file must
 * read the same, event for event and record for record.
 */
TEST(tracefile_reads_version_2_block_syscall_file)
{
	char path[512];
	struct readback b;
	struct recs calls, side;
	uint64_t per_call[IT_SYS_MAX] = { 0 }, types[IT_EV_TYPE_MAX] = { 0 }, walked = 0;
	uint32_t crc;

	data_path(path, sizeof(path), "v2-block-syscall.trail");
	read_back(path, &b, 2000);
	if (!ASSERT_TRUE(b.opened, b.err))
		return;
	ASSERT_STREQ(b.host.layers, "block,syscall", "host layers");
	ASSERT_STREQ(b.host.hostname, "vm", "hostname");
	ASSERT_EQ(b.host.ncpus, 2, "ncpus");
	ASSERT_U64_EQ(b.host.start_monotonic_ns, 255981530503ull, "start");
	ASSERT_EQ(b.ndevs, 1, "devices");
	ASSERT_STREQ(b.devs[0].name, "loop0", "device name");
	ASSERT_EQ(b.devs[0].dev, IT_MKDEV(7, 0), "device dev");
	ASSERT_STREQ(b.devs[0].scheduler, "mq-deadline", "scheduler");
	ASSERT_EQ(b.n, 1602, "events");
	crc = (uint32_t)crc32(0L, (const Bytef *)b.evs, (uInt)(b.n * sizeof(*b.evs)));
	ASSERT_EQ(crc, 0x094bf6df, "CRC of the events as the version-2 reader gave them");
	for (size_t i = 0; i < b.n; i++)
		types[b.evs[i].type < IT_EV_TYPE_MAX ? b.evs[i].type : 0]++;
	ASSERT_EQ(types[IT_EV_TASK], 2, "task events");
	ASSERT_EQ(types[IT_EV_BIO_QUEUE], 400, "Q");
	ASSERT_EQ(types[IT_EV_RQ_INSERT], 400, "I");
	ASSERT_EQ(types[IT_EV_RQ_ISSUE], 400, "D");
	ASSERT_EQ(types[IT_EV_RQ_COMPLETE], 400, "C: the report's 400 I/Os");
	ASSERT_TRUE(b.st.complete && !b.st.truncated, "complete");
	ASSERT_EQ(b.st.chunks, 9, "HOST DEVICES EVENTS SYSSIDE SYSCALLS SYSDROPS MISSED DROPS END");
	ASSERT_U64_EQ(b.st.dropped_total, 0, "dropped");
	ASSERT_EQ(b.st.ncpu, 2, "per-CPU drops");
	ASSERT_TRUE(b.st.missed_known && b.st.missed == 0, "probe misses known, none");
	ASSERT_U64_EQ(b.st.end_monotonic_ns, 256068581278ull, "end");
	readback_free(&b);

	if (read_recs(path, IT_CHUNK_SYSCALLS, &calls, count_calls, per_call)) {
		ASSERT_U64_EQ(calls.n, 998, "system calls (report: 998)");
		ASSERT_U64_EQ(calls.bytes, 998 * sizeof(struct it_sys_event), "call bytes");
		ASSERT_EQ(calls.crc, 0xebdb53a4, "CRC of the call records");
		ASSERT_TRUE(calls.st.complete, "complete through the records reader");
		ASSERT_U64_EQ(per_call[IT_SYS_READ], 407, "read");
		ASSERT_U64_EQ(per_call[IT_SYS_WRITE], 406, "write");
		ASSERT_U64_EQ(per_call[IT_SYS_OPENAT], 74, "openat");
		ASSERT_U64_EQ(per_call[IT_SYS_CLOSE], 53, "close");
		ASSERT_U64_EQ(per_call[IT_SYS_NEWFSTATAT], 49, "newfstatat");
		ASSERT_U64_EQ(per_call[IT_SYS_PREAD64], 6, "pread64");
		ASSERT_U64_EQ(per_call[IT_SYS_LSEEK], 3, "lseek");
	}
	if (read_recs(path, IT_CHUNK_SYSSIDE, &side, count_side, &walked)) {
		ASSERT_U64_EQ(side.n, 108, "side records");
		ASSERT_U64_EQ(side.bytes, 5184, "side bytes");
		ASSERT_EQ(side.crc, 0x5329b024, "CRC of the side records");
		ASSERT_U64_EQ(walked, 108, "side records walked");
	}
}

/* The v2 file through the version-3 API: a manifest made from its HOST
 * record, chunks tagged as version 3 would tag them, SYSDROPS as the
 * syscall layer's DROPS. */
TEST(tracefile_version_2_file_as_version_3)
{
	char path[512], err[256];
	struct it_reader *r;
	const struct it_layer_rec *l;
	const struct it_machine *m;
	struct it_losses lost;
	struct it_chunk c;
	size_t n;
	uint64_t calls = 0, events = 0, side = 0;
	const struct it_select all[] = { { IT_ANY, IT_ANY, IT_ANY } };

	data_path(path, sizeof(path), "v2-block-syscall.trail");
	r = it_reader_open_select(path, all, 1, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err))
		return;
	l = it_reader_layers(r, &n);
	ASSERT_EQ(n, 2, "layers from \"block,syscall\"");
	if (n == 2) {
		ASSERT_EQ(l[0].id, IT_LAYER_BLOCK, "block first");
		ASSERT_STREQ(l[1].name, "syscall", "syscall second");
		ASSERT_EQ(l[1].version, 0, "made up, not read");
		ASSERT_EQ(l[1].records[0].size, 112, "call record size");
	}
	ASSERT_TRUE(it_reader_layer(r, IT_LAYER_SYSCALL) != NULL, "has the syscall layer");
	ASSERT_TRUE(it_reader_layer(r, IT_LAYER_NVME) == NULL, "no NVMe layer");
	m = it_reader_machines(r, &n);
	ASSERT_EQ(n, 1, "one machine");
	ASSERT_TRUE(n == 1 && m[0].id == 0 && !strcmp(m[0].host.hostname, "vm"), "machine 0");
	ASSERT_TRUE(it_reader_clock(r, 0) == NULL, "no clock");
	while (it_reader_next_chunk(r, &c) > 0) {
		ASSERT_EQ(c.machine, 0, "machine of a v2 chunk");
		if (c.type == IT_CHUNK_EVENTS && ASSERT_EQ(c.layer, IT_LAYER_BLOCK, "events' layer"))
			events += c.count;
		if (c.type == IT_CHUNK_SYSCALLS && ASSERT_EQ(c.layer, IT_LAYER_SYSCALL, "calls' layer"))
			calls += c.count;
		if (c.type == IT_CHUNK_SYSSIDE && ASSERT_EQ(c.layer, IT_LAYER_SYSCALL, "side layer"))
			side += c.count;
	}
	ASSERT_U64_EQ(events, 1602, "events");
	ASSERT_U64_EQ(calls, 998, "calls");
	ASSERT_U64_EQ(side, 108, "side records");
	it_reader_losses(r, 0, IT_LAYER_SYSCALL, &lost);
	ASSERT_TRUE(lost.known && lost.ncpu == 2 && lost.total == 0, "SYSDROPS read as DROPS");
	it_reader_losses(r, 0, IT_LAYER_BLOCK, &lost);
	ASSERT_TRUE(lost.known && lost.ncpu == 2 && lost.missed_known, "DROPS, MISSED: block's");
	it_reader_close(r);
}

/* A layer of records the file code has never heard of: fixed-size and
 * variable ones, from two machines. */
#define TEST_LAYER 9
#define TEST_FIXED 40
#define TEST_VAR   41
struct test_rec {
	uint64_t seq;
	uint32_t machine, pad;
};

static const struct it_layer_rec test_layers[] = {
	{ .id = IT_LAYER_BLOCK, .version = 1, .name = "block", .nrecords = 1,
	  .records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, 64, "it_event" } } },
	{ .id = TEST_LAYER, .version = 7, .name = "test", .nrecords = 2,
	  .records = { { TEST_FIXED, IT_COMP_ZSTD, sizeof(struct test_rec), "test_rec" },
		       { TEST_VAR, IT_COMP_ZSTD, 0, "test_var" } } },
};

static const struct it_clock_rec test_clock = {
	.machine = 1, .ref_machine = 0, .offset_ns = -123456789, .uncertainty_ns = 2500,
	.method = "ntp-like 4-timestamp exchange, 16 samples",
};

/* Machine 0: 3000 block events; machine 1 (another host, a clock
 * relation): 2000 events, 50000 fixed records, 300 variable ones. Drops of
 * both machines' block layer. Returns the file's size, 0 on failure. */
static uint64_t write_two_machines(const char *path, struct it_event *ev0, struct it_event *ev1)
{
	struct it_host_rec h0, h1;
	struct it_trace_head head = { .host = &h0, .layers = test_layers, .nlayers = 2 };
	uint64_t d0[2] = { 1, 2 }, d1[3] = { 10, 0, 30 };
	char err[256], var[64];
	struct it_writer *w;

	make_host(&h0);
	make_host(&h1);
	strcpy(h1.hostname, "target");
	strcpy(h1.kernel, "6.1.0-nvmet");
	gen_events(ev0, 3000, 11);
	gen_events(ev1, 2000, 12);
	w = it_writer_open(path, &head, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		return 0;
	ASSERT_EQ(it_writer_add_machine(w, 1, &h1), 0, "machine 1");
	ASSERT_EQ(it_writer_add_clock(w, &test_clock), 0, "clock of machine 1");
	for (size_t i = 0; i < 50000; i++) {
		struct test_rec t = { .seq = i, .machine = 1 };

		if (i < 3000)
			add_evs(w, &ev0[i], 1, i / 1000);
		if (i < 2000)
			ASSERT_EQ(it_writer_add_record(w, 1, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, &ev1[i],
						       sizeof(*ev1)), 0, "machine 1 event");
		if (i < 300) {
			memset(var, 'a' + (int)(i % 26), sizeof(var));
			ASSERT_EQ(it_writer_add_record(w, 1, TEST_LAYER, TEST_VAR, var, 1 + i % 60),
				  0, "variable record");
		}
		if (it_writer_add_record(w, 1, TEST_LAYER, TEST_FIXED, &t, sizeof(t)))
			break;
	}
	/* the head is over once a chunk of records is out */
	ASSERT_EQ(it_writer_flush(w), 0, "flush");
	ASSERT_EQ(it_writer_add_machine(w, 2, &h1), -EINVAL, "no HOST after records");
	ASSERT_EQ(it_writer_add_record(w, 0, TEST_LAYER, 42, var, 8), -ENOENT, "not in the manifest");
	ASSERT_EQ(it_writer_add_record(w, 1, TEST_LAYER, TEST_FIXED, var, 8), -EINVAL, "wrong size");
	ASSERT_EQ(it_writer_add_record(w, 0, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, var, 8), -EINVAL,
		  "an event is 64 bytes");
	it_writer_set_drops(w, 0, IT_LAYER_BLOCK, d0, 2);
	it_writer_set_drops(w, 1, IT_LAYER_BLOCK, d1, 3);
	it_writer_set_missed(w, 1, TEST_LAYER, 5);
	if (!ASSERT_EQ(it_writer_close(w, 4242), 0, "close"))
		return 0;
	{
		struct stat sb;
		return stat(path, &sb) ? 0 : (uint64_t)sb.st_size;
	}
}

TEST(tracefile_two_machines_and_a_clock)
{
	static struct it_event ev0[3000], ev1[2000];
	const struct it_select sel[] = { { IT_ANY, IT_ANY, IT_CHUNK_EVENTS },
					 { 1, TEST_LAYER, IT_ANY } };
	char path[64], err[256];
	struct readback b;
	struct it_reader *r;
	struct it_chunk c;
	const struct it_machine *m;
	const struct it_clock_rec *clk;
	const struct it_layer_rec *l;
	struct it_losses lost;
	size_t n, n0 = 0, n1 = 0, nvar = 0;
	uint64_t seq = 0;
	bool same0 = true, same1 = true, fixed_ok = true, var_ok = true;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!write_two_machines(path, ev0, ev1))
		goto out;
	/* the old API: machine 0's events only, machine 0's losses */
	read_back(path, &b, 3000);
	if (ASSERT_TRUE(b.opened, b.err)) {
		ASSERT_EQ(b.n, 3000, "machine 0's events");
		ASSERT_TRUE(!b.overflow && !memcmp(b.evs, ev0, sizeof(ev0)), "events equal");
		ASSERT_TRUE(b.st.complete, "complete");
		ASSERT_U64_EQ(b.st.dropped_total, 3, "machine 0's block drops");
		ASSERT_EQ(b.st.ncpu, 2, "machine 0's CPUs");
		ASSERT_TRUE(!b.st.missed_known, "no MISSED on machine 0");
	}
	readback_free(&b);

	r = it_reader_open_select(path, sel, 2, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err))
		goto out;
	m = it_reader_machines(r, &n);
	if (ASSERT_EQ(n, 2, "machines")) {
		ASSERT_TRUE(m[0].id == 0 && !strcmp(m[0].host.hostname, "testhost"), "machine 0");
		ASSERT_TRUE(m[1].id == 1 && !strcmp(m[1].host.hostname, "target") &&
			    !strcmp(m[1].host.kernel, "6.1.0-nvmet"), "machine 1");
	}
	ASSERT_STREQ(it_reader_host(r)->hostname, "testhost", "host = machine 0");
	clk = it_reader_clock(r, 1);
	if (ASSERT_NOT_NULL(clk, "clock of machine 1")) {
		ASSERT_EQ(clk->ref_machine, 0, "relative to machine 0");
		ASSERT_EQ(clk->offset_ns, -123456789, "offset");
		ASSERT_U64_EQ(clk->uncertainty_ns, 2500, "uncertainty");
		ASSERT_STREQ(clk->method, test_clock.method, "method");
	}
	ASSERT_TRUE(it_reader_clock(r, 0) == NULL, "machine 0 is the reference");
	l = it_reader_layers(r, &n);
	ASSERT_EQ(n, 2, "layers");
	ASSERT_TRUE(n == 2 && !memcmp(l, test_layers, sizeof(test_layers)), "manifest as written");
	ASSERT_TRUE(it_reader_layer(r, TEST_LAYER) && it_reader_layer(r, TEST_LAYER)->version == 7,
		    "layer by id");
	while (it_reader_next_chunk(r, &c) > 0) {
		if (c.type == IT_CHUNK_EVENTS) {
			const struct it_event *e = c.data;
			bool one = c.machine == 1;

			ASSERT_EQ(c.layer, IT_LAYER_BLOCK, "events' layer");
			if (one)
				same1 &= n1 + c.count <= 2000 && !memcmp(e, ev1 + n1, c.len);
			else
				same0 &= n0 + c.count <= 3000 && !memcmp(e, ev0 + n0, c.len);
			*(one ? &n1 : &n0) += c.count;
			continue;
		}
		ASSERT_TRUE(c.machine == 1 && c.layer == TEST_LAYER, "test records: machine 1");
		if (c.type == TEST_FIXED) {
			const struct test_rec *t = c.data;

			fixed_ok &= c.len == c.count * sizeof(*t) && c.len <= (1u << 20);
			for (uint32_t i = 0; i < c.count; i++)
				fixed_ok &= t[i].seq == seq++ && t[i].machine == 1;
		} else if (ASSERT_EQ(c.type, TEST_VAR, "variable records")) {
			const unsigned char *p = c.data;

			/* 1 + k % 60 bytes, padded to 8 */
			for (uint32_t i = 0; i < c.count; i++, nvar++) {
				size_t len = 1 + nvar % 60;

				var_ok &= p[0] == 'a' + nvar % 26 && p[len - 1] == p[0] &&
					  (len % 8 == 0 || p[len] == 0);
				p += (len + 7) & ~(size_t)7;
			}
			var_ok &= p == (const unsigned char *)c.data + c.len;
		}
	}
	ASSERT_EQ(n0, 3000, "machine 0's events");
	ASSERT_EQ(n1, 2000, "machine 1's events");
	ASSERT_TRUE(same0 && same1, "events equal, each machine's in order");
	ASSERT_U64_EQ(seq, 50000, "fixed records");
	ASSERT_TRUE(fixed_ok, "fixed records in order, chunks of at most 1 MiB");
	ASSERT_EQ(nvar, 300, "variable records");
	ASSERT_TRUE(var_ok, "variable records, padded");
	it_reader_losses(r, 1, IT_LAYER_BLOCK, &lost);
	ASSERT_TRUE(lost.known && lost.ncpu == 3 && lost.total == 40 && lost.per_cpu[2] == 30,
		    "machine 1's block drops");
	it_reader_losses(r, 1, TEST_LAYER, &lost);
	ASSERT_TRUE(!lost.known && lost.missed_known && lost.missed == 5, "machine 1's misses");
	it_reader_losses(r, 2, IT_LAYER_BLOCK, &lost);
	ASSERT_TRUE(!lost.known && !lost.missed_known, "no machine 2");
	it_reader_close(r);
out:
	unlink(path);
}

/* Damage in the head (another machine's HOST, a CLOCK) fails the open in
 * one line; a v3 file cut anywhere after the head reads to its last whole
 * chunk, as the v2 files did. */
TEST(tracefile_two_machines_damaged)
{
	static struct it_event ev0[3000], ev1[2000];
	char path[64];
	unsigned char *file = NULL, *copy = NULL;
	size_t len, at = sizeof(struct it_file_header), clock_at = 0, body_at = 0;
	struct it_chunk_header h;
	struct readback b;
	int bad = 0;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	if (!write_two_machines(path, ev0, ev1) ||
	    !ASSERT_NOT_NULL(file = slurp(path, &len), "slurp"))
		goto out;
	/* HOST DEVICES LAYERS HOST(1) CLOCK, then the records */
	for (int k = 0; k < 5 && at + sizeof(h) <= len; k++) {
		memcpy(&h, file + at, sizeof(h));
		if (k == 4)
			clock_at = at;
		at += sizeof(h) + h.stored_len;
	}
	body_at = at;
	if (!ASSERT_EQ(h.type, IT_CHUNK_CLOCK, "5th chunk is CLOCK"))
		goto out;
	copy = malloc(len);
	/* cut inside the CLOCK chunk */
	spit(path, file, clock_at + 50);
	read_back(path, &b, 3000);
	ASSERT_TRUE(!b.opened && strstr(b.err, "cut short") && strstr(b.err, "CLOCK"), b.err);
	readback_free(&b);
	/* a CLOCK of machine 1 relative to itself, stored, CRC made right */
	{
		struct it_clock_rec clk = test_clock;

		clk.ref_machine = 1;
		memcpy(&h, file + clock_at, sizeof(h));
		h.compression = IT_COMP_NONE;
		h.raw_len = h.stored_len = sizeof(clk);
		h.payload_crc = test_crc(&h, &clk, sizeof(clk));
		memcpy(copy, file, clock_at);
		memcpy(copy + clock_at, &h, sizeof(h));
		memcpy(copy + clock_at + sizeof(h), &clk, sizeof(clk));
		spit(path, copy, clock_at + sizeof(h) + sizeof(clk));
		read_back(path, &b, 3000);
		ASSERT_TRUE(!b.opened && strstr(b.err, "corrupt CLOCK") && strstr(b.err, "relative") &&
			    !strchr(b.err, '\n'), b.err);
		readback_free(&b);
	}
	/* a flipped machine id in the CLOCK header: the CRC catches it */
	memcpy(copy, file, len);
	copy[clock_at + 32] ^= 2;
	spit(path, copy, len);
	read_back(path, &b, 3000);
	ASSERT_TRUE(!b.opened && strstr(b.err, "corrupt CLOCK") && strstr(b.err, "CRC"), b.err);
	readback_free(&b);
	/* cut anywhere in the records: machine 0's events of the whole chunks */
	for (size_t cut = body_at; cut < len; cut += 997) {
		spit(path, file, cut);
		read_back(path, &b, 3000);
		if (!b.opened || b.rc || b.st.complete || !b.st.truncated ||
		    memcmp(b.evs, ev0, b.n * sizeof(*ev0)))
			bad++;
		readback_free(&b);
	}
	ASSERT_EQ(bad, 0, "cut files read to their last whole chunk");
	/* random damage anywhere, head included: a one-line refusal, or a
	 * prefix of machine 0's events */
	{
		uint64_t rs = 777;

		bad = 0;
		for (int it = 0; it < 200; it++) {
			size_t cut = len - rng_next(&rs) % 64;

			memcpy(copy, file, len);
			for (int f = 0, nf = 1 + (int)(rng_next(&rs) % 3); f < nf; f++)
				copy[rng_next(&rs) % (it % 2 ? len : body_at)] ^=
					(unsigned char)(1 + rng_next(&rs) % 255);
			spit(path, copy, cut);
			read_back(path, &b, 3000);
			if (b.opened ? b.rc || memcmp(b.evs, ev0, b.n * sizeof(*ev0)) :
				       !b.err[0] || strchr(b.err, '\n'))
				bad++;
			readback_free(&b);
		}
		ASSERT_EQ(bad, 0, "damaged files: refused in one line or read as a prefix");
	}
out:
	free(copy);
	free(file);
	unlink(path);
}

/* Word-packed fixed-size records (IT_COMP_WORDS), as the syscall layer's
 * are written: syscall-shaped records across chunks come back exactly and
 * take a fraction of their size; records packing cannot shrink (random
 * bytes) come back exactly too, stored the old way. */
#define TEST_WORDS 43
static const struct it_layer_rec words_layers[] = {
	{ .id = TEST_LAYER, .version = 1, .name = "test", .nrecords = 1,
	  .records = { { TEST_WORDS, IT_COMP_WORDS, 112, "test_words" } } },
};

static bool words_file(const char *path, const uint64_t (*recs)[14], size_t n, off_t *size)
{
	struct it_host_rec host;
	struct it_trace_head head = { .host = &host, .layers = words_layers, .nlayers = 1 };
	struct it_writer *w;
	struct stat sb;
	char err[256];

	make_host(&host);
	w = it_writer_open(path, &head, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ASSERT_EQ(it_writer_add_record(w, 0, TEST_LAYER, TEST_WORDS, recs[i], 112), 0,
			       "add"))
			break;
	ASSERT_EQ(it_writer_add_record(w, 0, TEST_LAYER, TEST_WORDS, recs[0], 104), -EINVAL,
		  "wrong size");
	if (!ASSERT_EQ(it_writer_close(w, 1), 0, "close") || stat(path, &sb))
		return false;
	*size = sb.st_size;
	return true;
}

static size_t words_read(const char *path, const uint64_t (*recs)[14], size_t n, size_t *chunks)
{
	const struct it_select sel = { 0, TEST_LAYER, TEST_WORDS };
	struct it_reader *r;
	struct it_chunk c;
	char err[256];
	size_t k = 0;

	*chunks = 0;
	r = it_reader_open_select(path, &sel, 1, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err))
		return 0;
	while (it_reader_next_chunk(r, &c) > 0) {
		if (!ASSERT_TRUE(c.len == c.count * 112u && k + c.count <= n &&
					 !memcmp(c.data, recs[k], c.len),
				 "chunk of records as written"))
			break;
		k += c.count;
		(*chunks)++;
	}
	it_reader_close(r);
	return k;
}

TEST(tracefile_word_packed_records)
{
	enum { N = 20000 };
	static uint64_t recs[N][14];
	uint64_t s = 31, t = 1ull << 40;
	size_t chunks;
	char path[64];
	off_t size;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	for (size_t i = 0; i < N; i++) {
		memset(recs[i], 0, sizeof(recs[i]));
		recs[i][0] = 1 | (uint64_t)(i & 1 ? 3 : 60) << 16;
		recs[i][1] = 77 | (uint64_t)78 << 32;
		t += 500 + rng_next(&s) % 3000;
		recs[i][5] = t;
		recs[i][6] = t + 9000 + rng_next(&s) % 2000;
		recs[i][8] = (rng_next(&s) % 100000) << 12;
		recs[i][9] = 4096;
	}
	if (words_file(path, recs, N, &size)) {
		ASSERT_EQ(words_read(path, recs, N, &chunks), N, "every record read back");
		ASSERT_EQ(chunks, 3, "9362 records of 112 bytes a chunk");
		ASSERT_TRUE(size < (off_t)sizeof(recs) / 5, "a fifth of the raw size or less");
	}
	for (size_t i = 0; i < 3000; i++)
		for (size_t k = 0; k < 14; k++)
			recs[i][k] = rng_next(&s);
	if (words_file(path, recs, 3000, &size)) {
		ASSERT_EQ(words_read(path, recs, 3000, &chunks), 3000, "random records read back");
		ASSERT_EQ(chunks, 1, "one chunk");
		ASSERT_TRUE(size > 3000 * 112, "stored as they are (nothing shrinks them)");
	}
	unlink(path);
}

TEST(tracefile_bad_manifest_refused)
{
	struct it_host_rec host;
	struct it_layer_rec bad[2] = { test_layers[0], test_layers[1] };
	struct it_trace_head head = { .host = &host, .layers = bad, .nlayers = 2 };
	char path[64], err[256] = "";
	struct it_writer *w;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	make_host(&host);
	bad[1].records[0].chunk_type = IT_CHUNK_DROPS;  /* the file's own type */
	w = it_writer_open(path, &head, err, sizeof(err));
	ASSERT_TRUE(!w && strstr(err, "bad layers manifest"), err);
	bad[1] = test_layers[1];
	bad[1].id = IT_LAYER_BLOCK;                      /* twice */
	w = it_writer_open(path, &head, err, sizeof(err));
	ASSERT_TRUE(!w && strstr(err, "listed twice"), err);
	bad[1] = test_layers[1];
	bad[1].records[1].encoding = IT_COMP_PACK;       /* packing is for 64-byte events */
	w = it_writer_open(path, &head, err, sizeof(err));
	ASSERT_TRUE(!w && strstr(err, "bad layers manifest"), err);
	bad[1] = test_layers[1];
	bad[1].records[1].encoding = IT_COMP_WORDS;      /* not for variable records */
	w = it_writer_open(path, &head, err, sizeof(err));
	ASSERT_TRUE(!w && strstr(err, "bad layers manifest"), err);
	bad[1].records[1].size = 12;                     /* nor for a size not in words */
	w = it_writer_open(path, &head, err, sizeof(err));
	ASSERT_TRUE(!w && strstr(err, "bad layers manifest"), err);
	bad[1].records[1].size = 136;                    /* nor past 16 words */
	w = it_writer_open(path, &head, err, sizeof(err));
	ASSERT_TRUE(!w && strstr(err, "bad layers manifest"), err);
	it_writer_abort(w);
	unlink(path);
}

/* Writes evs (whole chunks, single events, a flush, losses) to path, with
 * the chunks written by the writer's thread or not: 0, or -1. */
static int write_evs(const char *path, const struct it_event *evs, size_t n, bool async)
{
	struct it_host_rec host;
	struct it_device_rec devs[2];
	uint64_t drops[2] = { 5, 7 };
	char err[256];
	struct it_writer *w;

	make_host(&host);
	make_devs(devs, 2);
	w = open_w(path, &host, devs, 2, err, sizeof(err));
	if (!w || (async && it_writer_async(w, 64 << 10))) {
		it_writer_abort(w);
		return -1;
	}
	if (add_evs(w, evs, n / 2, 3) || it_writer_flush(w) || add_evs(w, evs + n / 2, 1, 9) ||
	    add_evs(w, evs + n / 2 + 1, n - n / 2 - 1, 12)) {
		it_writer_abort(w);
		return -1;
	}
	return close_w(w, drops, 2, 123456789) ? -1 : 0;
}

static bool same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	bool same = fa && fb;
	int ca, cb;

	while (same && (ca = getc(fa)) == (cb = getc(fb)) && ca != EOF)
		;
	same = same && ca == cb;
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* The writer's thread (iotrail record) writes the file byte for byte as
 * the caller's thread does: same chunks, same headers and losses, same
 * order; and its stats tell what reached the file. */
TEST(tracefile_async_same_bytes)
{
	enum { N = 70000 };
	struct it_event *evs = malloc(N * sizeof(*evs));
	char sync_path[64], async_path[64];

	ASSERT_TRUE(tmp_path(sync_path) && tmp_path(async_path), "mkstemp");
	gen_events(evs, N, 7);
	ASSERT_EQ(write_evs(sync_path, evs, N, false), 0, "written in the caller's thread");
	ASSERT_EQ(write_evs(async_path, evs, N, true), 0, "written by the writer's thread");
	ASSERT_TRUE(same_file(sync_path, async_path), "the two files are the same bytes");
	unlink(sync_path);
	unlink(async_path);
	free(evs);
}

/* A follower (record --sink) reads a file while it is written: here its
 * wait callback is the writer, adding a chunk per call (and once the first
 * bytes of a chunk header, as a reader meets a chunk mid-write), then END.
 * The follower must hand out every event, in order, and end complete; a
 * second one, told nothing more comes (the recorder gave up: no END),
 * ends where the file does. */
struct follow_ctx {
	struct it_writer *w;
	const char *path;
	const struct it_event *evs;
	size_t added, per_call, n, calls;
	bool cut_once, cut_pending, stop;
	off_t size_before_cut;
};

static bool follow_write_more(void *arg)
{
	struct follow_ctx *f = arg;
	char head[10];

	f->calls++;
	if (f->stop)
		return false;
	if (f->cut_pending) { /* the cut chunk goes, the real one comes */
		f->cut_pending = false;
		if (truncate(f->path, f->size_before_cut))
			return false;
	} else if (f->cut_once && f->added == f->per_call) {
		int fd = open(f->path, O_RDWR | O_APPEND);
		struct stat st;
		bool ok = fd >= 0 && !fstat(fd, &st) &&
			  pread(fd, head, sizeof(head), 32) == sizeof(head) && /* HOST's header */
			  write(fd, head, sizeof(head)) == sizeof(head);

		if (fd >= 0)
			close(fd);
		f->cut_once = false;
		f->cut_pending = true;
		f->size_before_cut = ok ? st.st_size : 0;
		return ok;
	}
	if (!f->w)
		return false;
	if (f->added < f->n) {
		size_t k = f->n - f->added < f->per_call ? f->n - f->added : f->per_call;

		add_evs(f->w, f->evs + f->added, k, 0);
		it_writer_flush(f->w);
		f->added += k;
	} else {
		close_w(f->w, NULL, 0, 42);
		f->w = NULL;
	}
	return true;
}

TEST(tracefile_follow)
{
	enum { N = 3000 };
	struct it_event *evs = malloc(N * sizeof(*evs));
	const struct it_select sel = { 0, IT_ANY, IT_CHUNK_EVENTS };
	struct follow_ctx f = { .n = N, .per_call = 700, .cut_once = true };
	struct it_host_rec host;
	struct it_device_rec devs[1];
	struct it_reader_status st;
	char path[64], err[256];
	struct it_reader *r;
	struct it_writer *w;
	const void *p;
	uint16_t type;
	uint32_t count;
	size_t len, got = 0;
	bool same = true;
	int rc;

	ASSERT_TRUE(tmp_path(path), "mkstemp");
	gen_events(evs, N, 7);
	make_host(&host);
	make_devs(devs, 1);
	f.evs = evs;
	f.path = path;
	f.w = open_w(path, &host, devs, 1, err, sizeof(err));
	if (!ASSERT_NOT_NULL(f.w, err))
		goto out;
	r = it_reader_open_follow(path, &sel, 1, follow_write_more, &f, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err)) {
		it_writer_abort(f.w);
		goto out;
	}
	while ((rc = it_reader_next_records(r, &type, &p, &len, &count)) > 0) {
		if (got + count <= N)
			same = same && !memcmp(p, evs + got, count * sizeof(*evs));
		got += count;
	}
	it_reader_status(r, &st);
	ASSERT_EQ(rc, 0, "clean end");
	ASSERT_EQ(got, N, "every event, as the writer added them");
	ASSERT_TRUE(same, "events equal");
	ASSERT_TRUE(st.complete && !st.truncated, "complete at END");
	ASSERT_U64_EQ(st.end_monotonic_ns, 42, "END's time");
	/* 5 chunks (700 x 4, 200), the cut header, its removal with the next
	 * chunk (counted in the 5), END */
	ASSERT_EQ(f.calls, 5 + 1 + 1, "a wait per chunk, the cut chunk, END");
	it_reader_close(r);
	if (f.w)
		it_writer_abort(f.w);

	/* no END: the recorder gave up, the follower ends at the file's end */
	w = open_w(path, &host, devs, 1, err, sizeof(err));
	if (!ASSERT_NOT_NULL(w, err))
		goto out;
	add_evs(w, evs, 1000, 0);
	it_writer_flush(w);
	f = (struct follow_ctx){ .stop = true };
	r = it_reader_open_follow(path, &sel, 1, follow_write_more, &f, err, sizeof(err));
	if (ASSERT_NOT_NULL(r, err)) {
		got = 0;
		while ((rc = it_reader_next_records(r, &type, &p, &len, &count)) > 0)
			got += count;
		it_reader_status(r, &st);
		ASSERT_EQ(rc, 0, "ends");
		ASSERT_EQ(got, 1000, "what is in the file");
		ASSERT_TRUE(st.truncated && !st.complete, "truncated: no END");
		ASSERT_EQ(f.calls, 1, "asked once");
		it_reader_close(r);
	}
	it_writer_abort(w);
out:
	unlink(path);
	free(evs);
}
