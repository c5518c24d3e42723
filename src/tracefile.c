// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Trace file writer and reader. Layout: include/iotrail/trace_format.h,
 * described in doc/trace-format.md.
 *
 * Writer: events are buffered into chunks of CHUNK_EVENTS (1 MiB raw),
 * compressed with one reused zstd context and written with one write()
 * (header + payload), so a crash leaves whole chunks plus at most one cut one.
 *
 * Reader: the analyzer's hot path. Decompressing 1 MiB of events costs about
 * as much as analysing it, so a read-ahead thread reads, checks and
 * decompresses the next chunks into a small ring of slots while the caller
 * works on the current one (set IOTRAIL_READAHEAD=0 to read in the caller's
 * thread, e.g. to compare). Reads use pread() into reused buffers rather than
 * mmap: the cost is the same here and a file that shrinks under us cannot
 * SIGBUS the reader.
 */
#include "evpack.h"
#include "tracefile.h"
#include "iotrail/syscall.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace file is little-endian and this code does not byte-swap"
#endif

/* The on-disk layout is these structs as compiled on LP64 little-endian;
 * a change here is a format change (bump IT_TRACE_VERSION). */
_Static_assert(sizeof(struct it_file_header) == 32, "file header layout");
_Static_assert(sizeof(struct it_chunk_header) == 32, "chunk header layout");
_Static_assert(sizeof(struct it_event) == 64, "event layout");
_Static_assert(sizeof(struct it_host_rec) == 784, "host record layout");
_Static_assert(sizeof(struct it_device_rec) == 192, "device record layout");
_Static_assert(offsetof(struct it_device_rec, size_sectors) == 176, "device record layout");
_Static_assert(sizeof(struct it_end_rec) == 32, "end record layout");
_Static_assert(sizeof(struct it_sys_event) == 112, "syscall record layout");
_Static_assert(sizeof(struct it_sys_path) == 32, "path record layout");
_Static_assert(sizeof(struct it_sys_name) == 24, "name record layout");
_Static_assert(sizeof(struct it_sys_task) == 48, "task record layout");

#define CHUNK_EVENTS 16384u        /* 1 MiB of events per EVENTS chunk */
#define CHUNK_SYSCALLS 8192u       /* 896 KiB of call records per SYSCALLS chunk */
#define CHUNK_SIDE (1u << 20)      /* bytes of side records per SYSSIDE chunk */
#define ZSTD_LEVEL   (-1)          /* see doc/trace-format.md: fastest with a good ratio */
#define MAX_PAYLOAD  (64u << 20)   /* raw or stored; larger is damage, not data */
#define NSLOTS       3             /* read-ahead depth, in chunks */

/* Record size of each known chunk type (0: unknown, skipped). */
static size_t rec_size(uint16_t type)
{
	switch (type) {
	case IT_CHUNK_HOST:    return sizeof(struct it_host_rec);
	case IT_CHUNK_DEVICES: return sizeof(struct it_device_rec);
	case IT_CHUNK_EVENTS:  return sizeof(struct it_event);
	case IT_CHUNK_DROPS:   return sizeof(uint64_t);
	case IT_CHUNK_END:     return sizeof(struct it_end_rec);
	case IT_CHUNK_SYSCALLS: return sizeof(struct it_sys_event);
	case IT_CHUNK_SYSDROPS: return sizeof(uint64_t);
	case IT_CHUNK_MISSED:  return sizeof(uint64_t);
	default:               return 0; /* SYSSIDE: variable records */
	}
}

/* CRC of the chunk header (with payload_crc as 0) and the stored payload:
 * a flipped type, count or length is caught like a flipped payload byte. */
static uint32_t chunk_crc(const struct it_chunk_header *h, const void *payload, size_t len)
{
	struct it_chunk_header c = *h;
	uLong crc;

	c.payload_crc = 0;
	crc = crc32(0L, (const Bytef *)&c, sizeof(c));
	if (len)	/* crc32(crc, NULL, 0) would return the initial value, not crc */
		crc = crc32(crc, (const Bytef *)payload, (uInt)len);
	return (uint32_t)crc;
}

struct buf {
	void *p;
	size_t cap;
};

static int buf_reserve(struct buf *b, size_t need)
{
	void *p;

	if (need <= b->cap)
		return 0;
	p = realloc(b->p, need);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = need;
	return 0;
}

/* ======================================================================
 * Writer
 * ====================================================================== */

struct it_writer {
	int fd;
	int err;                  /* first failure (-errno); sticky */
	ZSTD_CCtx *cctx;
	struct it_packer packer;  /* pending events, packed (evpack.h) */
	struct buf packed;        /* chunk header + their bytes */
	size_t packed_len;
	size_t nevs;              /* < CHUNK_EVENTS */
	struct buf out;           /* chunk header + payload, written at once */
	uint64_t bytes, events, chunks, dropped;
	struct it_sys_event *sys; /* pending syscall records, < CHUNK_SYSCALLS */
	size_t nsys;
	struct buf side;          /* pending side records, padded to 8 */
	size_t side_len;
	uint32_t nside;
	uint64_t *sysdrops;
	uint32_t nsysdrops;
	uint64_t missed;
	bool have_missed;
};

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes the chunk at buf: room for its header h, then the stored payload.
 * Fills in the CRC and puts h in front. */
static int put_chunk(struct it_writer *w, struct it_chunk_header *h, void *buf)
{
	int err;

	h->payload_crc = chunk_crc(h, (unsigned char *)buf + sizeof(*h), h->stored_len);
	memcpy(buf, h, sizeof(*h));
	err = write_all(w->fd, buf, sizeof(*h) + h->stored_len);
	if (err)
		return w->err = err;
	w->bytes += sizeof(*h) + h->stored_len;
	w->chunks++;
	return 0;
}

/* Compresses (or stores, when zstd does not shrink it) and writes a chunk. */
static int write_chunk(struct it_writer *w, uint16_t type, uint32_t count,
		       const void *data, size_t len)
{
	struct it_chunk_header h = {
		.magic = IT_CHUNK_MAGIC, .type = type, .compression = IT_COMP_NONE,
		.raw_len = (uint32_t)len, .stored_len = (uint32_t)len, .count = count,
		.dropped_total = w->dropped,
	};
	unsigned char *payload;
	size_t z;

	if (w->err)
		return w->err;
	if (len > MAX_PAYLOAD)
		return w->err = -EFBIG;
	if (buf_reserve(&w->out, sizeof(h) + ZSTD_compressBound(len)))
		return w->err = -ENOMEM;
	payload = (unsigned char *)w->out.p + sizeof(h);
	z = len ? ZSTD_compress2(w->cctx, payload, w->out.cap - sizeof(h), data, len) : 0;
	if (len && !ZSTD_isError(z) && z < len) {
		h.compression = IT_COMP_ZSTD;
		h.stored_len = (uint32_t)z;
	} else if (len) {
		memcpy(payload, data, len);
	}
	return put_chunk(w, &h, w->out.p);
}

/* The pending packed events as one EVENTS chunk: no copy, no compression
 * (packing already made them about as small as zstd did, at a tenth of the
 * CPU; doc/trace-format.md). */
static int write_events(struct it_writer *w)
{
	struct it_chunk_header h = {
		.magic = IT_CHUNK_MAGIC, .type = IT_CHUNK_EVENTS, .compression = IT_COMP_PACK,
		.raw_len = (uint32_t)(w->nevs * sizeof(struct it_event)),
		.stored_len = (uint32_t)w->packed_len, .count = (uint32_t)w->nevs,
		.dropped_total = w->dropped,
	};
	unsigned char *payload = (unsigned char *)w->packed.p + sizeof(h);
	struct it_event *raw;
	int err;

	if (w->err)
		return w->err;
	if (h.stored_len < h.raw_len) {
		err = put_chunk(w, &h, w->packed.p);
	} else {
		/* random-looking events pack larger than they are: store them
		 * the old way (rare, so decoding them back is fine) */
		if (!(raw = malloc(h.raw_len)))
			return w->err = -ENOMEM;
		if (!it_unpack_events(payload, h.stored_len, raw, w->nevs))
			err = write_chunk(w, IT_CHUNK_EVENTS, h.count, raw, h.raw_len);
		else
			err = w->err = -EIO; /* our own encoding: cannot happen */
		free(raw);
	}
	if (!err)
		w->events += w->nevs;
	return err;
}

/* Copies the device table with the padding zeroed (LP64 has 4 bytes before
 * size_sectors): the file must not carry stray memory. */
static int write_devices(struct it_writer *w, const struct it_device_rec *devs, size_t n)
{
	const size_t pad_at = offsetof(struct it_device_rec, blk_mq) + sizeof(devs->blk_mq);
	const size_t pad = offsetof(struct it_device_rec, size_sectors) - pad_at;
	struct it_device_rec *copy;
	int err;

	if (n > MAX_PAYLOAD / sizeof(*devs))
		return w->err = -EFBIG;
	copy = calloc(n ? n : 1, sizeof(*copy));
	if (!copy)
		return w->err = -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		copy[i] = devs[i];
		memset((char *)&copy[i] + pad_at, 0, pad);
	}
	err = write_chunk(w, IT_CHUNK_DEVICES, (uint32_t)n, copy, n * sizeof(*copy));
	free(copy);
	return err;
}

struct it_writer *it_writer_open(const char *path, const struct it_host_rec *host,
				 const struct it_device_rec *devs, size_t ndevs,
				 char *err, size_t errlen)
{
	struct it_file_header fh = {
		.magic = IT_TRACE_MAGIC, .version = IT_TRACE_VERSION,
		.header_size = sizeof(fh), .event_size = sizeof(struct it_event),
	};
	struct it_writer *w = calloc(1, sizeof(*w));
	int rc;

	if (!w || buf_reserve(&w->packed, sizeof(struct it_chunk_header) +
					  CHUNK_EVENTS * IT_PACK_MAX) ||
	    !(w->cctx = ZSTD_createCCtx())) {
		snprintf(err, errlen, "out of memory");
		goto fail_nofd;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		goto fail_nofd;
	}
	rc = write_all(w->fd, &fh, sizeof(fh));
	if (!rc) {
		w->bytes = sizeof(fh);
		rc = write_chunk(w, IT_CHUNK_HOST, 1, host, sizeof(*host));
	}
	if (!rc)
		rc = write_devices(w, devs, ndevs);
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		it_writer_abort(w);
		return NULL;
	}
	return w;

fail_nofd:
	if (w)
		w->fd = -1;
	it_writer_abort(w);
	return NULL;
}

int it_writer_add(struct it_writer *w, const struct it_event *evs, size_t n,
		  uint64_t dropped_total)
{
	unsigned char *out = (unsigned char *)w->packed.p + sizeof(struct it_chunk_header);

	w->dropped = dropped_total;
	for (size_t i = 0; i < n && !w->err; i++) {
		if (!w->nevs)
			it_pack_reset(&w->packer);
		w->packed_len += it_pack_event(&w->packer, &evs[i], out + w->packed_len);
		if (++w->nevs == CHUNK_EVENTS)
			it_writer_flush(w);
	}
	return w->err;
}

static void flush_syscalls(struct it_writer *w)
{
	if (w->nside && !w->err)
		write_chunk(w, IT_CHUNK_SYSSIDE, w->nside, w->side.p, w->side_len);
	w->nside = 0;
	w->side_len = 0;
	if (w->nsys && !w->err)
		write_chunk(w, IT_CHUNK_SYSCALLS, (uint32_t)w->nsys, w->sys, w->nsys * sizeof(*w->sys));
	w->nsys = 0;
}

int it_writer_add_syscall(struct it_writer *w, const void *rec, size_t len)
{
	uint16_t type;
	size_t padded = (len + 7) & ~(size_t)7;

	if (w->err)
		return w->err;
	if (len < sizeof(type) || len > CHUNK_SIDE)
		return -EINVAL;
	memcpy(&type, rec, sizeof(type));
	if (type == IT_SREC_CALL) {
		if (len < sizeof(*w->sys))
			return -EINVAL;
		if (!w->sys && !(w->sys = malloc(CHUNK_SYSCALLS * sizeof(*w->sys))))
			return w->err = -ENOMEM;
		memcpy(&w->sys[w->nsys++], rec, sizeof(*w->sys));
		if (w->nsys == CHUNK_SYSCALLS)
			flush_syscalls(w);
		return w->err;
	}
	if (w->side_len + padded > CHUNK_SIDE)
		flush_syscalls(w);
	if (buf_reserve(&w->side, CHUNK_SIDE))
		return w->err = -ENOMEM;
	memcpy((char *)w->side.p + w->side_len, rec, len);
	memset((char *)w->side.p + w->side_len + len, 0, padded - len);
	w->side_len += padded;
	w->nside++;
	return w->err;
}

int it_writer_set_syscall_drops(struct it_writer *w, const uint64_t *per_cpu, uint32_t ncpu)
{
	uint64_t *d = malloc(ncpu ? ncpu * sizeof(*d) : 1);

	if (!d)
		return -ENOMEM;
	memcpy(d, per_cpu, ncpu * sizeof(*d));
	free(w->sysdrops);
	w->sysdrops = d;
	w->nsysdrops = ncpu;
	return 0;
}

void it_writer_set_missed(struct it_writer *w, uint64_t missed)
{
	w->missed = missed;
	w->have_missed = true;
}

int it_writer_flush(struct it_writer *w)
{
	if (w->nevs && !w->err)
		write_events(w);
	w->nevs = 0;
	w->packed_len = 0;
	flush_syscalls(w);
	return w->err;
}

int it_writer_close(struct it_writer *w, const uint64_t *drops_per_cpu, uint32_t ncpu,
		    uint64_t end_monotonic_ns)
{
	struct it_end_rec end = { .end_monotonic_ns = end_monotonic_ns };
	uint64_t sum = 0;
	int err;

	if (!drops_per_cpu)
		ncpu = 0;
	for (uint32_t i = 0; i < ncpu; i++)
		sum += drops_per_cpu[i];
	it_writer_flush(w);
	if (w->sysdrops)
		write_chunk(w, IT_CHUNK_SYSDROPS, w->nsysdrops, w->sysdrops,
			    (size_t)w->nsysdrops * sizeof(uint64_t));
	if (w->have_missed)
		write_chunk(w, IT_CHUNK_MISSED, 1, &w->missed, sizeof(w->missed));
	/* the per-CPU counters are final now; never report less than before */
	if (sum > w->dropped)
		w->dropped = sum;
	write_chunk(w, IT_CHUNK_DROPS, ncpu, drops_per_cpu, (size_t)ncpu * sizeof(uint64_t));
	end.events_total = w->events;
	end.dropped_total = w->dropped;
	end.chunks = w->chunks;
	write_chunk(w, IT_CHUNK_END, 1, &end, sizeof(end));
	err = w->err;
	if (close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	it_writer_abort(w);
	return err;
}

uint64_t it_writer_bytes(const struct it_writer *w)
{
	return w->bytes;
}

void it_writer_abort(struct it_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	free(w->packed.p);
	free(w->sys);
	free(w->side.p);
	free(w->sysdrops);
	free(w->out.p);
	free(w);
}

/* ======================================================================
 * Reader
 * ====================================================================== */

/* How reading one chunk went. */
enum rd {
	RD_OK,
	RD_EOF,     /* no byte at all where a chunk would start */
	RD_SHORT,   /* the file ends inside this chunk */
	RD_BAD,     /* damaged: magic, lengths, CRC, decompression */
	RD_ERR,     /* read error or out of memory: reported as -1 */
};

struct slot {
	struct buf evs;     /* decompressed payload of a wanted chunk (EVENTS by default) */
	size_t n;           /* its record count */
	size_t len;         /* its bytes */
	uint16_t type;
	bool full;          /* filled by the producer, not yet released by the caller */
};

struct it_reader {
	int fd;
	char err[256];      /* why reading stopped or failed; "" otherwise */
	struct it_host_rec host;
	struct it_device_rec *devs;
	size_t ndevs;

	/* producer state: the read-ahead thread's once it runs */
	uint64_t off;               /* next chunk */
	ZSTD_DCtx *dctx;
	struct buf stored;          /* compressed payload */
	struct buf tmp;             /* raw payload of chunks other than EVENTS */
	uint64_t produced;          /* events in EVENTS chunks read */
	uint64_t chunks;            /* valid chunks read, all types */
	uint64_t hdr_dropped;       /* dropped_total of the last valid chunk */
	uint64_t *drops;            /* DROPS payload */
	uint64_t missed;            /* MISSED payload */
	bool have_missed;
	uint32_t ncpu;
	bool have_drops, complete, truncated;
	uint64_t bad_offset;
	struct it_end_rec end;
	uint64_t want;              /* bit per chunk type handed out (EVENTS by default) */
	bool records;               /* it_reader_open_records: step over the others unread */

	/* hand-off between producer and caller */
	bool threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	struct slot slots[NSLOTS];
	uint64_t head, tail;        /* next slot to fill / to hand out (never wrap) */
	bool held;                  /* the caller holds slots[(tail - 1) % NSLOTS] */
	bool done, stop;
	int result;                 /* what next() returns once done: 0 or -1 */
	uint64_t delivered;
};

static void set_err(struct it_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_err(struct it_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
}

/* pread until len bytes or the end of the file. */
static ssize_t pread_full(int fd, void *p, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)p + got, len - got, (off_t)(off + got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static const char *type_name(uint16_t type)
{
	static const char *names[] = { "?", "HOST", "DEVICES", "EVENTS", "DROPS", "END",
				       "SYSCALLS", "SYSSIDE", "SYSDROPS" };

	return type < sizeof(names) / sizeof(*names) ? names[type] : "unknown";
}

/* Reads the chunk header at r->off and checks what can be checked before
 * the payload: nothing later trusts a length that failed here. */
static enum rd read_header(struct it_reader *r, struct it_chunk_header *h)
{
	ssize_t n = pread_full(r->fd, h, sizeof(*h), r->off);
	size_t rs;

	if (n < 0) {
		set_err(r, "read error at offset %llu: %s", (unsigned long long)r->off, strerror(errno));
		return RD_ERR;
	}
	if (n == 0)
		return RD_EOF;
	if ((size_t)n < sizeof(*h)) {
		set_err(r, "chunk header cut short at offset %llu", (unsigned long long)r->off);
		return RD_SHORT;
	}
	if (h->magic != IT_CHUNK_MAGIC) {
		set_err(r, "no chunk magic at offset %llu", (unsigned long long)r->off);
		return RD_BAD;
	}
	if (h->compression > IT_COMP_PACK ||
	    (h->compression == IT_COMP_PACK && h->type != IT_CHUNK_EVENTS)) {
		set_err(r, "unknown compression %u in the chunk at offset %llu",
			h->compression, (unsigned long long)r->off);
		return RD_BAD;
	}
	if (h->raw_len > MAX_PAYLOAD || h->stored_len > MAX_PAYLOAD ||
	    (h->compression == IT_COMP_NONE && h->stored_len != h->raw_len) ||
	    (h->compression == IT_COMP_ZSTD &&
	     (!h->raw_len || !h->stored_len || h->stored_len > ZSTD_compressBound(h->raw_len))) ||
	    (h->compression == IT_COMP_PACK &&
	     (h->stored_len < 3ull * h->count || h->stored_len > (uint64_t)IT_PACK_MAX * h->count))) {
		set_err(r, "impossible lengths in the chunk at offset %llu (raw %u, stored %u)",
			(unsigned long long)r->off, h->raw_len, h->stored_len);
		return RD_BAD;
	}
	rs = rec_size(h->type);
	if ((rs && (uint64_t)h->count * rs != h->raw_len) ||
	    ((h->type == IT_CHUNK_HOST || h->type == IT_CHUNK_END || h->type == IT_CHUNK_MISSED) &&
	     h->count != 1)) {
		set_err(r, "%s chunk at offset %llu: %u records do not fill %u bytes",
			type_name(h->type), (unsigned long long)r->off, h->count, h->raw_len);
		return RD_BAD;
	}
	return RD_OK;
}

/* Reads, checks and decompresses the payload of the chunk whose header is
 * h into raw; advances r->off past the chunk on success. */
static enum rd read_payload(struct it_reader *r, const struct it_chunk_header *h, struct buf *raw)
{
	struct buf *dst = h->compression == IT_COMP_NONE ? raw : &r->stored;
	uint64_t at = r->off;
	ssize_t n;

	if (buf_reserve(raw, h->raw_len ? h->raw_len : 1) ||
	    buf_reserve(dst, h->stored_len ? h->stored_len : 1)) {
		set_err(r, "out of memory for a %u-byte chunk", h->raw_len);
		return RD_ERR;
	}
	n = pread_full(r->fd, dst->p, h->stored_len, at + sizeof(*h));
	if (n < 0) {
		set_err(r, "read error at offset %llu: %s", (unsigned long long)at, strerror(errno));
		return RD_ERR;
	}
	if ((size_t)n < h->stored_len) {
		set_err(r, "%s chunk at offset %llu cut short (%zd of %u bytes)",
			type_name(h->type), (unsigned long long)at, n, h->stored_len);
		return RD_SHORT;
	}
	if (chunk_crc(h, dst->p, h->stored_len) != h->payload_crc) {
		set_err(r, "CRC mismatch in the %s chunk at offset %llu",
			type_name(h->type), (unsigned long long)at);
		return RD_BAD;
	}
	if (h->compression == IT_COMP_ZSTD) {
		size_t z = ZSTD_decompressDCtx(r->dctx, raw->p, h->raw_len, dst->p, h->stored_len);

		if (ZSTD_isError(z) || z != h->raw_len) {
			set_err(r, "cannot decompress the %s chunk at offset %llu: %s",
				type_name(h->type), (unsigned long long)at,
				ZSTD_isError(z) ? ZSTD_getErrorName(z) : "wrong length");
			return RD_BAD;
		}
	} else if (h->compression == IT_COMP_PACK &&
		   it_unpack_events(dst->p, h->stored_len, raw->p, h->count)) {
		set_err(r, "cannot unpack the %s chunk at offset %llu: not %u packed events",
			type_name(h->type), (unsigned long long)at, h->count);
		return RD_BAD;
	}
	r->off = at + sizeof(*h) + h->stored_len;
	r->chunks++;
	r->hdr_dropped = h->dropped_total;
	return RD_OK;
}

/* Ends the stream: 0 for a clean or damaged end, -1 for a read error. */
static int stop_at(struct it_reader *r, enum rd rc)
{
	if (rc == RD_ERR)
		return -1;
	if (rc == RD_EOF)
		set_err(r, "file ends at offset %llu without an END chunk: the recording "
			"did not finish (crash or kill?)", (unsigned long long)r->off);
	r->truncated = true;
	r->bad_offset = r->off;
	return 0;
}

static int take_end(struct it_reader *r, const struct it_chunk_header *h)
{
	uint64_t at = r->off - sizeof(*h) - h->stored_len;

	memcpy(&r->end, r->tmp.p, sizeof(r->end));
	/* chunks counts this END already */
	if (r->end.events_total != r->produced || r->end.chunks + 1 != r->chunks) {
		set_err(r, "END chunk at offset %llu counts %llu events in %llu chunks, "
			"the file has %llu in %llu", (unsigned long long)at,
			(unsigned long long)r->end.events_total, (unsigned long long)r->end.chunks,
			(unsigned long long)r->produced, (unsigned long long)(r->chunks - 1));
		r->truncated = true;
		r->bad_offset = at;
		return 0;
	}
	r->complete = true;
	return 0;
}

static int take_drops(struct it_reader *r, const struct it_chunk_header *h)
{
	uint64_t *d = malloc(h->count ? h->raw_len : 1);

	if (!d) {
		set_err(r, "out of memory");
		return -1;
	}
	memcpy(d, r->tmp.p, h->raw_len);
	free(r->drops);
	r->drops = d;
	r->ncpu = h->count;
	r->have_drops = true;
	return 1;
}

static bool wanted(const struct it_reader *r, uint16_t type)
{
	return type < 64 && ((r->want >> type) & 1);
}

/* Chunks the reader itself consumes for its status, whatever was asked for. */
static bool status_chunk(uint16_t type)
{
	return type == IT_CHUNK_DROPS || type == IT_CHUNK_MISSED || type == IT_CHUNK_END;
}

/* A records reader steps over the chunks it does not hand out (the block
 * events, when it reads the syscall layer's) without reading them: the
 * next header's magic catches a bad length. */
static bool skip(struct it_reader *r, const struct it_chunk_header *h)
{
	if (!r->records || wanted(r, h->type) || status_chunk(h->type))
		return false;
	r->off += sizeof(*h) + h->stored_len;
	r->chunks++;
	r->hdr_dropped = h->dropped_total;
	if (h->type == IT_CHUNK_EVENTS)
		r->produced += h->count;
	return true;
}

/* Reads chunks up to the next non-empty wanted chunk (EVENTS for
 * it_reader_next), which lands in s. Returns 1, or 0 at the end of the
 * readable data, -1 on a read error. */
static int produce(struct it_reader *r, struct slot *s)
{
	for (;;) {
		struct it_chunk_header h;
		enum rd rc = read_header(r, &h);

		if (rc == RD_OK && skip(r, &h))
			continue;
		if (rc == RD_OK)
			rc = read_payload(r, &h, wanted(r, h.type) ? &s->evs : &r->tmp);
		if (rc != RD_OK)
			return stop_at(r, rc);
		if (h.type == IT_CHUNK_EVENTS)
			r->produced += h.count;
		if (wanted(r, h.type)) {
			if (!h.count)
				continue;
			s->n = h.count;
			s->len = h.raw_len;
			s->type = h.type;
			return 1;
		}
		switch (h.type) {
		case IT_CHUNK_DROPS:
			if (take_drops(r, &h) < 0)
				return -1;
			continue;
		case IT_CHUNK_MISSED:
			memcpy(&r->missed, r->tmp.p, sizeof(r->missed));
			r->have_missed = true;
			continue;
		case IT_CHUNK_END:
			return take_end(r, &h);
		default:
			/* a chunk type from a newer writer (or a repeated HOST or
			 * DEVICES): intact, as the CRC says, and not ours to read */
			continue;
		}
	}
}

static void *readahead_main(void *arg)
{
	struct it_reader *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct slot *s = &r->slots[r->head % NSLOTS];
		int rc;

		while (!r->stop && s->full)
			pthread_cond_wait(&r->freed, &r->mu);
		if (r->stop)
			break;
		/* s is neither full nor held: only this thread touches it */
		pthread_mutex_unlock(&r->mu);
		rc = produce(r, s);
		pthread_mutex_lock(&r->mu);
		if (rc == 1) {
			s->full = true;
			r->head++;
		} else {
			r->done = true;
			r->result = rc;
		}
		pthread_cond_signal(&r->filled);
		if (r->done)
			break;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static int next_threaded(struct it_reader *r, struct slot **out)
{
	struct slot *s;

	pthread_mutex_lock(&r->mu);
	if (r->held) {
		r->slots[(r->tail - 1) % NSLOTS].full = false;
		r->held = false;
		pthread_cond_signal(&r->freed);
	}
	s = &r->slots[r->tail % NSLOTS];
	while (!s->full && !r->done)
		pthread_cond_wait(&r->filled, &r->mu);
	if (!s->full) {
		pthread_mutex_unlock(&r->mu);
		return r->result;
	}
	r->tail++;
	r->held = true;
	pthread_mutex_unlock(&r->mu);
	*out = s;
	r->delivered += s->n;
	return 1;
}

/* The next wanted chunk in *out: 1, or 0 at the end, -1 on a read error. */
static int next_slot(struct it_reader *r, struct slot **out)
{
	int rc;

	if (r->threaded)
		return next_threaded(r, out);
	if (r->done)
		return r->result;
	rc = produce(r, &r->slots[0]);
	if (rc != 1) {
		r->done = true;
		r->result = rc;
		return rc;
	}
	*out = &r->slots[0];
	r->delivered += r->slots[0].n;
	return 1;
}

int it_reader_next(struct it_reader *r, const struct it_event **evs, size_t *n)
{
	struct slot *s;
	int rc = next_slot(r, &s);

	*evs = rc == 1 ? s->evs.p : NULL;
	*n = rc == 1 ? s->n : 0;
	return rc;
}

int it_reader_next_records(struct it_reader *r, uint16_t *type, const void **payload,
			   size_t *len, uint32_t *count)
{
	struct slot *s;
	int rc = next_slot(r, &s);

	*type = rc == 1 ? s->type : 0;
	*payload = rc == 1 ? s->evs.p : NULL;
	*len = rc == 1 ? s->len : 0;
	*count = rc == 1 ? (uint32_t)s->n : 0;
	return rc;
}

/* Strings from the file are the file's: make sure each one ends. */
#define TERMINATE(field) ((field)[sizeof(field) - 1] = '\0')

/* Reads the HOST or DEVICES chunk at r->off into r->tmp; a one-line
 * reason goes to err on failure. */
static int read_start_chunk(struct it_reader *r, uint16_t type, struct it_chunk_header *h,
			    char *err, size_t errlen)
{
	uint64_t at = r->off;
	enum rd rc = read_header(r, h);

	if (rc == RD_OK && h->type != type) {
		snprintf(err, errlen, "corrupt %s chunk at offset %llu: found a chunk of type %u",
			 type_name(type), (unsigned long long)at, h->type);
		return -1;
	}
	if (rc == RD_OK)
		rc = read_payload(r, h, &r->tmp);
	if (rc == RD_OK)
		return 0;
	if (rc == RD_EOF || rc == RD_SHORT)
		snprintf(err, errlen, "header cut short: the file ends in its %s chunk at offset "
			 "%llu (the recording stopped before it wrote any events)",
			 type_name(type), (unsigned long long)at);
	else if (rc == RD_ERR)
		snprintf(err, errlen, "%s", r->err);
	else
		snprintf(err, errlen, "corrupt %s chunk: %s", type_name(type), r->err);
	return -1;
}

static int read_start(struct it_reader *r, char *err, size_t errlen)
{
	struct it_chunk_header h;

	if (read_start_chunk(r, IT_CHUNK_HOST, &h, err, errlen))
		return -1;
	memcpy(&r->host, r->tmp.p, sizeof(r->host));
	TERMINATE(r->host.hostname);
	TERMINATE(r->host.kernel);
	TERMINATE(r->host.boot_id);
	TERMINATE(r->host.clock);
	TERMINATE(r->host.command);
	TERMINATE(r->host.layers);
	TERMINATE(r->host.hooks);

	if (read_start_chunk(r, IT_CHUNK_DEVICES, &h, err, errlen))
		return -1;
	r->devs = malloc(h.count ? h.raw_len : 1);
	if (!r->devs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(r->devs, r->tmp.p, h.raw_len);
	r->ndevs = h.count;
	for (size_t i = 0; i < r->ndevs; i++) {
		TERMINATE(r->devs[i].name);
		TERMINATE(r->devs[i].model);
		TERMINATE(r->devs[i].scheduler);
	}
	return 0;
}

/* Checks the 32-byte file header: every foreign or future file stops here. */
static int check_file_header(int fd, char *err, size_t errlen)
{
	struct it_file_header fh;
	ssize_t n = pread_full(fd, &fh, sizeof(fh), 0);
	size_t m;

	if (n < 0) {
		snprintf(err, errlen, "cannot read: %s", strerror(errno));
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty file (0 bytes): nothing was recorded into it");
		return -1;
	}
	m = (size_t)n < sizeof(fh.magic) ? (size_t)n : sizeof(fh.magic);
	if (memcmp(fh.magic, IT_TRACE_MAGIC, m)) {
		snprintf(err, errlen, "not an iotrail trace file (wrong magic)");
		return -1;
	}
	if ((size_t)n < sizeof(fh)) {
		snprintf(err, errlen, "header cut short: %zd of %zu bytes of the file header",
			 n, sizeof(fh));
		return -1;
	}
	if (fh.version == __builtin_bswap32(IT_TRACE_VERSION)) {
		snprintf(err, errlen, "big-endian trace file: this build reads little-endian files only");
		return -1;
	}
	/* version 2 only added packed EVENTS chunks: a version-1 file reads
	 * the same way */
	if (fh.version != IT_TRACE_VERSION && fh.version != 1) {
		snprintf(err, errlen, "unsupported trace format version %u (this build reads versions 1 to %u%s)",
			 fh.version, IT_TRACE_VERSION,
			 fh.version > IT_TRACE_VERSION ? "; use a newer iotrail" : "");
		return -1;
	}
	if (fh.header_size != sizeof(fh) || fh.event_size != sizeof(struct it_event)) {
		snprintf(err, errlen, "corrupt file header: header size %u, event size %u "
			 "(version %u has %zu and %zu)", fh.header_size, fh.event_size,
			 IT_TRACE_VERSION, sizeof(fh), sizeof(struct it_event));
		return -1;
	}
	return 0;
}

static void start_readahead(struct it_reader *r)
{
	const char *env = getenv("IOTRAIL_READAHEAD");

	if (env && !strcmp(env, "0"))
		return;
	/* without a thread (e.g. EAGAIN) the caller's thread reads: slower, same data */
	r->threaded = pthread_create(&r->thread, NULL, readahead_main, r) == 0;
}

static struct it_reader *open_reader(const char *path, uint64_t want, char *err, size_t errlen);

struct it_reader *it_reader_open(const char *path, char *err, size_t errlen)
{
	return open_reader(path, 1ull << IT_CHUNK_EVENTS, err, errlen);
}

struct it_reader *it_reader_open_records(const char *path, const uint16_t *types, size_t ntypes,
					 char *err, size_t errlen)
{
	uint64_t want = 0;

	for (size_t i = 0; i < ntypes; i++) {
		if (types[i] >= 64 || types[i] == IT_CHUNK_HOST || types[i] == IT_CHUNK_DEVICES ||
		    status_chunk(types[i])) {
			snprintf(err, errlen, "chunk type %u cannot be read as records", types[i]);
			return NULL;
		}
		want |= 1ull << types[i];
	}
	return open_reader(path, want | (1ull << 63), err, errlen);
}

/* want: the chunk types handed out; bit 63 marks a records reader. */
static struct it_reader *open_reader(const char *path, uint64_t want, char *err, size_t errlen)
{
	struct it_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->records = want >> 63;
	r->want = want & ~(1ull << 63);
	r->fd = -1;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->filled, NULL);
	pthread_cond_init(&r->freed, NULL);
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		goto fail;
	}
	if (check_file_header(r->fd, err, errlen))
		goto fail;
	r->off = sizeof(struct it_file_header);
	if (read_start(r, err, errlen))
		goto fail;
	r->err[0] = '\0';
	start_readahead(r);
	return r;

fail:
	it_reader_close(r);
	return NULL;
}

const struct it_host_rec *it_reader_host(const struct it_reader *r)
{
	return &r->host;
}

const struct it_device_rec *it_reader_devices(const struct it_reader *r, size_t *n)
{
	*n = r->ndevs;
	return r->devs;
}

const struct it_device_rec *it_reader_device(const struct it_reader *r, uint32_t dev)
{
	/* a handful of devices: a scan beats a map; callers cache per dev */
	for (size_t i = 0; i < r->ndevs; i++)
		if (r->devs[i].dev == dev)
			return &r->devs[i];
	return NULL;
}

void it_reader_status(const struct it_reader *r, struct it_reader_status *st)
{
	struct it_reader *m = (struct it_reader *)r; /* the lock only */
	uint64_t sum = 0;

	pthread_mutex_lock(&m->mu);
	memset(st, 0, sizeof(*st));
	st->complete = r->complete;
	st->truncated = r->truncated;
	st->bad_offset = r->truncated ? r->bad_offset : 0;
	st->events = r->delivered;
	st->chunks = r->chunks;
	if (r->have_drops) {
		for (uint32_t i = 0; i < r->ncpu; i++)
			sum += r->drops[i];
		st->drops_per_cpu = r->ncpu ? r->drops : NULL;
		st->ncpu = r->ncpu;
	}
	if (r->complete)
		st->dropped_total = r->end.dropped_total;
	else if (r->have_drops)
		st->dropped_total = sum;
	else
		st->dropped_total = r->hdr_dropped;
	st->end_monotonic_ns = r->complete ? r->end.end_monotonic_ns : 0;
	st->missed = r->missed;
	st->missed_known = r->have_missed;
	pthread_mutex_unlock(&m->mu);
}

/* The reason for -1 from it_reader_next, or why reading stopped early
 * (status.truncated); "" after a clean end. */
const char *it_reader_error(const struct it_reader *r)
{
	return r->err;
}

void it_reader_close(struct it_reader *r)
{
	if (!r)
		return;
	if (r->threaded) {
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		pthread_cond_signal(&r->freed);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->filled);
	pthread_cond_destroy(&r->freed);
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	for (int i = 0; i < NSLOTS; i++)
		free(r->slots[i].evs.p);
	free(r->stored.p);
	free(r->tmp.p);
	free(r->drops);
	free(r->devs);
	free(r);
}
