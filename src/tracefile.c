// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Trace file writer and reader. Layout: include/iotrail/trace_format.h,
 * described in doc/trace-format.md.
 *
 * Writer: records go into streams, one per (machine, layer, chunk type),
 * each buffering up to one chunk (1 MiB raw): struct it_event records and
 * the fixed-size records a manifest says are word-packed are packed as
 * they come (evpack.h), other records are copied and compressed with one
 * reused zstd context when their chunk is written. Each chunk
 * goes out with one write() (header + payload), so a crash leaves whole
 * chunks plus at most one cut one. What a layer's records are (size,
 * encoding) is the caller's layers manifest: this file knows no layer.
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
#include "layer_table.h"
#include "tracefile.h"
#include "writeq.h"

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
 * a change here is a format change (bump IT_TRACE_VERSION). The layers'
 * own records are checked where they are defined. */
_Static_assert(sizeof(struct it_file_header) == 32, "file header layout");
_Static_assert(sizeof(struct it_chunk_header) == 40, "chunk header layout");
_Static_assert(offsetof(struct it_chunk_header, machine) == IT_CHUNK_HEADER_V2_SIZE,
	       "a version-3 chunk header is a version-2 one and 8 bytes");
_Static_assert(offsetof(struct it_chunk_header, layer) == 34, "chunk header layout");
_Static_assert(sizeof(struct it_event) == 64, "event layout");
_Static_assert(sizeof(struct it_host_rec) == 784, "host record layout");
_Static_assert(sizeof(struct it_device_rec) == 192, "device record layout");
_Static_assert(offsetof(struct it_device_rec, size_sectors) == 176, "device record layout");
_Static_assert(sizeof(struct it_end_rec) == 32, "end record layout");
_Static_assert(sizeof(struct it_record_type) == 32, "manifest record type layout");
_Static_assert(sizeof(struct it_layer_rec) == 224, "manifest layer layout");
_Static_assert(offsetof(struct it_layer_rec, records) == 32, "manifest layer layout");
_Static_assert(sizeof(struct it_clock_rec) == 96, "clock record layout");
_Static_assert(offsetof(struct it_clock_rec, offset_ns) == 8, "clock record layout");
_Static_assert(sizeof(struct it_note_rec) == 128, "note record layout");

#define CHUNK_RAW    (1u << 20)    /* raw bytes of records per chunk at most */
#define ZSTD_LEVEL   (-1)          /* see doc/trace-format.md: fastest with a good ratio */
#define MAX_PAYLOAD  (64u << 20)   /* raw or stored; larger is damage, not data */
#define MAX_STREAMS  64            /* (machine, layer, type) streams of a writer */
#define MAX_SELECT   16            /* selectors of a reader */
#define NSLOTS       8             /* read-ahead depth, in chunks */

/* Record size of the file's own chunk types (0: none). */
static size_t own_size(uint16_t type)
{
	switch (type) {
	case IT_CHUNK_HOST:    return sizeof(struct it_host_rec);
	case IT_CHUNK_DEVICES: return sizeof(struct it_device_rec);
	case IT_CHUNK_DROPS:   return sizeof(uint64_t);
	case IT_CHUNK_END:     return sizeof(struct it_end_rec);
	case IT_CHUNK_MISSED:  return sizeof(uint64_t);
	case IT_CHUNK_CLOCK:   return sizeof(struct it_clock_rec);
	case IT_CHUNK_LAYERS:  return sizeof(struct it_layer_rec);
	case IT_CHUNK_NOTE:    return sizeof(struct it_note_rec);
	case IT_CHUNK_NVMF:    return sizeof(struct it_nvmf_rec);
	case IT_CHUNK_CLOCK_EST: return sizeof(struct it_clock_est_rec);
	case IT_CHUNK_CLOCK_WINDOWS: return sizeof(struct it_clock_window_rec);
	default:               return 0;
	}
}

/* The file's own chunk types: read by this file, never a layer's records
 * (type 8 is a version-2 layer's DROPS, which this file reads as DROPS). */
static bool own_type(uint16_t type)
{
	return own_size(type) || type == IT_CHUNK_SYSDROPS;
}

/* The manifest's record type for chunks of (layer, type); NULL if none. */
static const struct it_record_type *find_record_type(const struct it_layer_rec *layers, size_t n,
						     uint16_t layer, uint16_t type)
{
	for (size_t i = 0; i < n; i++) {
		if (layers[i].id != layer)
			continue;
		for (uint16_t k = 0; k < layers[i].nrecords; k++)
			if (layers[i].records[k].chunk_type == type)
				return &layers[i].records[k];
	}
	return NULL;
}

/* The layer whose DROPS count machine 0's events (struct it_event in
 * EVENTS chunks): the first in the manifest with EVENTS records; 0: none. */
static uint16_t events_layer(const struct it_layer_rec *layers, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (find_record_type(&layers[i], 1, layers[i].id, IT_CHUNK_EVENTS))
			return layers[i].id;
	return 0;
}

/* A manifest both sides can trust: NULL, or what is wrong with it. */
static const char *check_layers(const struct it_layer_rec *l, size_t n, char *why, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		if (!l[i].id || l[i].id == IT_ANY || l[i].nrecords > IT_LAYER_MAX_RECORDS ||
		    !memchr(l[i].name, '\0', sizeof(l[i].name))) {
			snprintf(why, len, "layer %zu: id %u, %u record types", i, l[i].id,
				 l[i].nrecords);
			return why;
		}
		for (size_t j = 0; j < i; j++)
			if (l[j].id == l[i].id) {
				snprintf(why, len, "layer %u listed twice", l[i].id);
				return why;
			}
		for (uint16_t k = 0; k < l[i].nrecords; k++) {
			const struct it_record_type *t = &l[i].records[k];

			if (own_type(t->chunk_type) || !t->chunk_type || t->chunk_type == IT_ANY ||
			    (t->encoding != IT_COMP_ZSTD && t->encoding != IT_COMP_PACK &&
			     t->encoding != IT_COMP_WORDS) ||
			    (t->encoding == IT_COMP_PACK && t->size != sizeof(struct it_event)) ||
			    (t->encoding == IT_COMP_WORDS &&
			     (!t->size || t->size % 8 || t->size / 8 > IT_WPACK_WORDS)) ||
			    t->size > CHUNK_RAW || !memchr(t->name, '\0', sizeof(t->name)) ||
			    find_record_type(&l[i], 1, l[i].id, t->chunk_type) != t) {
				snprintf(why, len, "layer %u: record type %u (chunk type %u, "
					 "encoding %u, size %u)", l[i].id, k, t->chunk_type,
					 t->encoding, t->size);
				return why;
			}
		}
	}
	return NULL;
}

/* CRC of the chunk header (its first hsize bytes, payload_crc as 0) and
 * the stored payload: a flipped type, count, length, machine or layer is
 * caught like a flipped payload byte. */
static uint32_t chunk_crc(const struct it_chunk_header *h, size_t hsize, const void *payload,
			  size_t len)
{
	struct it_chunk_header c = *h;
	uLong crc;

	c.payload_crc = 0;
	crc = crc32(0L, (const Bytef *)&c, (uInt)hsize);
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

/* Losses of one (machine, layer); a small table, searched linearly, on
 * both sides. */
struct loss {
	uint16_t machine, layer;
	uint64_t lost;            /* writer: cumulative, for chunk headers */
	uint64_t *drops;          /* final per-CPU counts (DROPS) */
	uint32_t ncpu;
	bool have_drops, have_missed;
	uint64_t missed;          /* MISSED */
};

struct losses {
	struct loss *v;
	size_t n;
};

/* The entry of (machine, layer), added if create; NULL if absent or out
 * of memory. */
static struct loss *loss_of(struct losses *ls, uint16_t machine, uint16_t layer, bool create)
{
	struct loss *v;

	for (size_t i = 0; i < ls->n; i++)
		if (ls->v[i].machine == machine && ls->v[i].layer == layer)
			return &ls->v[i];
	if (!create || !(v = realloc(ls->v, (ls->n + 1) * sizeof(*v))))
		return NULL;
	ls->v = v;
	v = &ls->v[ls->n++];
	*v = (struct loss){ .machine = machine, .layer = layer };
	return v;
}

static int loss_set_drops(struct loss *l, const uint64_t *per_cpu, uint32_t ncpu)
{
	uint64_t *d = malloc(ncpu ? ncpu * sizeof(*d) : 1);

	if (!d)
		return -ENOMEM;
	memcpy(d, per_cpu, ncpu * sizeof(*d));
	free(l->drops);
	l->drops = d;
	l->ncpu = ncpu;
	l->have_drops = true;
	return 0;
}

static uint64_t loss_sum(const struct loss *l)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; l && l->have_drops && i < l->ncpu; i++)
		sum += l->drops[i];
	return sum;
}

static void losses_free(struct losses *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->v[i].drops);
	free(ls->v);
}

/* ======================================================================
 * Writer
 * ====================================================================== */

struct stream {
	uint16_t machine, layer, type;
	uint16_t encoding;        /* IT_COMP_PACK, IT_COMP_WORDS or IT_COMP_ZSTD */
	uint32_t size;            /* record size; 0: variable, padded to 8 */
	uint32_t n;               /* records pending */
	uint32_t cap;             /* PACK, WORDS: records per chunk */
	struct buf data;          /* PACK, WORDS: room for a chunk header, then the
				   * packed records; else the raw records */
	size_t len;               /* bytes of pending records in data */
	struct it_packer *packer; /* PACK */
	struct it_wpacker *wpacker; /* WORDS */
};

static bool packed(const struct stream *s)
{
	return s->encoding == IT_COMP_PACK || s->encoding == IT_COMP_WORDS;
}

struct it_writer {
	int fd;
	int err;                  /* first failure (-errno); sticky */
	ZSTD_CCtx *cctx;
	struct buf out;           /* chunk header + payload, written at once */
	uint64_t bytes, events, chunks;
	uint64_t records;         /* of every stream, in chunks written */
	struct it_layer_rec *layers; /* the manifest: the streams' registry */
	size_t nlayers;
	uint16_t ev_layer;        /* events_layer() */
	struct stream streams[MAX_STREAMS];
	size_t nstreams, last;    /* last: the stream used last (the hot path) */
	struct losses losses;
	bool body;                /* a record chunk is written: the head is over */
	/* it_writer_async: chunks go out through this queue's thread; the
	 * counts above are then of chunks handed to it, sync_part is what
	 * was written before */
	struct it_writeq *q;
	struct it_writer_stats sync_part;
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

/* A chunk header of (machine, layer), with that layer's losses so far. */
static struct it_chunk_header chunk_header(struct it_writer *w, uint16_t type, uint16_t machine,
					   uint16_t layer, uint32_t count, size_t len)
{
	const struct loss *l = loss_of(&w->losses, machine, layer, false);

	return (struct it_chunk_header){
		.magic = IT_CHUNK_MAGIC, .type = type, .compression = IT_COMP_NONE,
		.raw_len = (uint32_t)len, .stored_len = (uint32_t)len, .count = count,
		.dropped_total = l ? l->lost : 0, .machine = machine, .layer = layer,
	};
}

/* Writes the chunk at buf (of records records): room for its header h,
 * then the stored payload. Fills in the CRC and puts h in front. */
static int put_chunk(struct it_writer *w, struct it_chunk_header *h, void *buf, uint32_t records)
{
	size_t len = sizeof(*h) + h->stored_len;
	int err;

	h->payload_crc = chunk_crc(h, sizeof(*h), (unsigned char *)buf + sizeof(*h), h->stored_len);
	memcpy(buf, h, sizeof(*h));
	if (w->q) {
		err = it_writeq_put(w->q, buf, len, records,
				    h->type == IT_CHUNK_EVENTS ? h->count : 0);
		if (err)
			return w->err = err;
	} else if ((err = write_all(w->fd, buf, len))) {
		/* a full disk: cut the part of this chunk that got out, so the
		 * file ends on its last complete chunk and the space is free */
		int cut = ftruncate(w->fd, (off_t)w->bytes);

		(void)cut; /* if it fails, the reader stops at the cut chunk all the same */
		return w->err = err;
	}
	w->bytes += len;
	w->chunks++;
	return 0;
}

/* Compresses (or stores, when zstd does not shrink it) and writes a chunk
 * of a stream's records (none: a head or tail chunk). */
static int write_records(struct it_writer *w, uint16_t type, uint16_t machine, uint16_t layer,
			 uint32_t count, const void *data, size_t len, uint32_t records)
{
	struct it_chunk_header h = chunk_header(w, type, machine, layer, count, len);
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
	return put_chunk(w, &h, w->out.p, records);
}

static int write_chunk(struct it_writer *w, uint16_t type, uint16_t machine, uint16_t layer,
		       uint32_t count, const void *data, size_t len)
{
	return write_records(w, type, machine, layer, count, data, len, 0);
}

/* A stream's packed records as one chunk: no copy, no compression (packing
 * already made them about as small as zstd did, at a tenth of the CPU;
 * doc/trace-format.md). */
static int write_packed(struct it_writer *w, struct stream *s)
{
	struct it_chunk_header h = chunk_header(w, s->type, s->machine, s->layer, s->n,
						s->n * s->size);
	unsigned char *payload = (unsigned char *)s->data.p + sizeof(h);
	uint64_t *raw;
	int err;

	h.compression = s->encoding;
	h.stored_len = (uint32_t)s->len;
	if (h.stored_len < h.raw_len)
		return put_chunk(w, &h, s->data.p, s->n);
	/* random-looking records pack larger than they are: store them the old
	 * way (rare, so decoding them back is fine) */
	if (!(raw = malloc(h.raw_len)))
		return w->err = -ENOMEM;
	if (s->encoding == IT_COMP_PACK ? !it_unpack_events(payload, h.stored_len, (void *)raw, s->n) :
	    !it_wunpack_records(payload, h.stored_len, raw, s->n, s->size / 8))
		err = write_records(w, s->type, s->machine, s->layer, h.count, raw, h.raw_len, s->n);
	else
		err = w->err = -EIO; /* our own encoding: cannot happen */
	free(raw);
	return err;
}

static void flush_stream(struct it_writer *w, struct stream *s)
{
	int err;

	/* A layer's side records (variable size: the paths and names its
	 * fixed-size records refer to) go out before a chunk of the records:
	 * a reader then has what a record names when the record comes, and
	 * need not hold the records until a side chunk much later in the
	 * file (every call of a long trace, when the side stream filled
	 * slowly). */
	if (s->size && s->n)
		for (size_t i = 0; i < w->nstreams; i++) {
			struct stream *o = &w->streams[i];

			if (o != s && !o->size && o->n && o->machine == s->machine &&
			    o->layer == s->layer && !packed(o))
				flush_stream(w, o);
		}
	if (s->n && !w->err) {
		if (packed(s))
			err = write_packed(w, s);
		else
			err = write_records(w, s->type, s->machine, s->layer, s->n, s->data.p, s->len,
					    s->n);
		if (!err && s->type == IT_CHUNK_EVENTS)
			w->events += s->n;
		if (!err)
			w->records += s->n;
		w->body = true;
	}
	s->n = 0;
	s->len = 0;
}

/* The stream of (machine, layer, type), made from the manifest at first
 * use; NULL with *err set (-ENOENT: not in the manifest). */
static struct stream *get_stream(struct it_writer *w, uint16_t machine, uint16_t layer,
				 uint16_t type, int *err)
{
	const struct it_record_type *t;
	struct stream *s = &w->streams[w->last];
	size_t room;

	if (w->nstreams && s->machine == machine && s->layer == layer && s->type == type)
		return s;
	for (size_t i = 0; i < w->nstreams; i++) {
		s = &w->streams[i];
		if (s->machine == machine && s->layer == layer && s->type == type) {
			w->last = i;
			return s;
		}
	}
	t = find_record_type(w->layers, w->nlayers, layer, type);
	if (!t || w->nstreams == MAX_STREAMS) {
		*err = !t ? -ENOENT : -ENOSPC;
		return NULL;
	}
	s = &w->streams[w->nstreams];
	*s = (struct stream){ .machine = machine, .layer = layer, .type = type,
			      .encoding = t->encoding, .size = t->size };
	/* a packed stream's chunk: its header, then 1 MiB of raw records
	 * packed, each at most IT_PACK_MAX or IT_WPACK_MAX bytes */
	room = CHUNK_RAW;
	if (packed(s)) {
		s->cap = CHUNK_RAW / s->size;
		if (s->encoding == IT_COMP_PACK)
			s->packer = malloc(sizeof(*s->packer));
		else
			s->wpacker = malloc(sizeof(*s->wpacker));
		room = sizeof(struct it_chunk_header) +
		       (size_t)s->cap * (s->encoding == IT_COMP_PACK ? IT_PACK_MAX :
								IT_WPACK_MAX(s->size / 8));
	}
	if ((packed(s) && !s->packer && !s->wpacker) || buf_reserve(&s->data, room)) {
		free(s->packer);
		free(s->wpacker);
		free(s->data.p);
		*err = w->err = -ENOMEM;
		return NULL;
	}
	w->last = w->nstreams++;
	return s;
}

int it_writer_add_record(struct it_writer *w, uint16_t machine, uint16_t layer, uint16_t type,
			 const void *rec, size_t len)
{
	unsigned char *at;
	struct stream *s;
	size_t padded;
	int err = 0;

	if (w->err)
		return w->err;
	if (!(s = get_stream(w, machine, layer, type, &err)))
		return err;
	if (packed(s)) {
		if (len != s->size) /* PACK: the manifest's size is struct it_event's */
			return -EINVAL;
		at = (unsigned char *)s->data.p + sizeof(struct it_chunk_header) + s->len;
		if (s->encoding == IT_COMP_PACK) {
			if (!s->n)
				it_pack_reset(s->packer);
			s->len += it_pack_event(s->packer, rec, at);
		} else {
			if (!s->n)
				it_wpack_reset(s->wpacker);
			s->len += it_wpack_record(s->wpacker, rec, s->size / 8, at);
		}
		if (++s->n == s->cap)
			flush_stream(w, s);
		return w->err;
	}
	if (s->size ? len != s->size : !len || len > CHUNK_RAW)
		return -EINVAL;
	padded = s->size ? len : (len + 7) & ~(size_t)7;
	if (s->len + padded > CHUNK_RAW)
		flush_stream(w, s);
	at = (unsigned char *)s->data.p + s->len;
	memcpy(at, rec, len);
	memset(at + len, 0, padded - len);
	s->len += padded;
	s->n++;
	/* fixed-size records: write the chunk as soon as it is full */
	if (s->size && s->len + s->size > CHUNK_RAW)
		flush_stream(w, s);
	return w->err;
}

int it_writer_add_events(struct it_writer *w, uint16_t layer, const struct it_event *evs,
			 size_t n)
{
	int err = w->err;

	for (size_t i = 0; i < n && !err; i++)
		err = it_writer_add_record(w, 0, layer, IT_CHUNK_EVENTS, &evs[i], sizeof(*evs));
	return err;
}

void it_writer_set_lost(struct it_writer *w, uint16_t machine, uint16_t layer, uint64_t total)
{
	struct loss *l = loss_of(&w->losses, machine, layer, true);

	if (l)
		l->lost = total;
	else
		w->err = -ENOMEM;
}

int it_writer_set_drops(struct it_writer *w, uint16_t machine, uint16_t layer,
			const uint64_t *per_cpu, uint32_t ncpu)
{
	struct loss *l = loss_of(&w->losses, machine, layer, true);

	if (!l || loss_set_drops(l, per_cpu, ncpu))
		return -ENOMEM;
	return 0;
}

int it_writer_set_missed(struct it_writer *w, uint16_t machine, uint16_t layer, uint64_t missed)
{
	struct loss *l = loss_of(&w->losses, machine, layer, true);

	if (!l)
		return -ENOMEM;
	l->missed = missed;
	l->have_missed = true;
	return 0;
}

/* Copies the device table with the padding zeroed (LP64 has 4 bytes before
 * size_sectors): the file must not carry stray memory. */
static int write_devices(struct it_writer *w, uint16_t machine, const struct it_device_rec *devs,
			 size_t n)
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
	err = write_chunk(w, IT_CHUNK_DEVICES, machine, 0, (uint32_t)n, copy, n * sizeof(*copy));
	free(copy);
	return err;
}

/* Takes a copy of the manifest, checked: NULL, or the reason. */
static const char *take_layers(struct it_writer *w, const struct it_trace_head *head, char *why,
			       size_t len)
{
	if (head->nlayers > MAX_PAYLOAD / sizeof(*head->layers)) {
		snprintf(why, len, "%zu layers", head->nlayers);
		return why;
	}
	if (check_layers(head->layers, head->nlayers, why, len))
		return why;
	w->layers = calloc(head->nlayers ? head->nlayers : 1, sizeof(*w->layers));
	if (!w->layers) {
		snprintf(why, len, "out of memory");
		return why;
	}
	/* records[] past nrecords, reserved: zeroes, not the caller's memory */
	for (size_t i = 0; i < head->nlayers; i++) {
		const struct it_layer_rec *l = &head->layers[i];

		w->layers[i].id = l->id;
		w->layers[i].version = l->version;
		w->layers[i].nrecords = l->nrecords;
		memcpy(w->layers[i].name, l->name, sizeof(l->name));
		memcpy(w->layers[i].records, l->records, l->nrecords * sizeof(*l->records));
	}
	w->nlayers = head->nlayers;
	w->ev_layer = events_layer(w->layers, w->nlayers);
	return NULL;
}

struct it_writer *it_writer_open(const char *path, const struct it_trace_head *head,
				 char *err, size_t errlen)
{
	struct it_file_header fh = {
		.magic = IT_TRACE_MAGIC, .version = IT_TRACE_VERSION,
		.header_size = sizeof(fh), .event_size = sizeof(struct it_event),
	};
	struct it_writer *w = calloc(1, sizeof(*w));
	struct stat st;
	char why[160];
	int rc;

	if (!w || !(w->cctx = ZSTD_createCCtx())) {
		snprintf(err, errlen, "out of memory");
		goto fail_nofd;
	}
	if (take_layers(w, head, why, sizeof(why))) {
		snprintf(err, errlen, "bad layers manifest: %s", why);
		goto fail_nofd;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
	/* 0600: a trace holds paths, commands and process names; an existing
	 * file keeps its mode through O_TRUNC, so a regular one is set too */
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		goto fail_nofd;
	}
	if (!fstat(w->fd, &st) && S_ISREG(st.st_mode) && (st.st_mode & 077) &&
	    fchmod(w->fd, st.st_mode & 0700)) {
		snprintf(err, errlen, "cannot make %s private (mode 0600): %s", path,
			 strerror(errno));
		it_writer_abort(w);
		return NULL;
	}
	rc = write_all(w->fd, &fh, sizeof(fh));
	if (!rc) {
		w->bytes = sizeof(fh);
		rc = write_chunk(w, IT_CHUNK_HOST, 0, 0, 1, head->host, sizeof(*head->host));
	}
	if (!rc)
		rc = write_devices(w, 0, head->devs, head->ndevs);
	if (!rc)
		rc = write_chunk(w, IT_CHUNK_LAYERS, 0, 0, (uint32_t)w->nlayers, w->layers,
				 w->nlayers * sizeof(*w->layers));
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

int it_writer_add_machine(struct it_writer *w, uint16_t machine, const struct it_host_rec *host)
{
	if (w->body || !machine || machine == IT_ANY)
		return -EINVAL;
	return write_chunk(w, IT_CHUNK_HOST, machine, 0, 1, host, sizeof(*host));
}

int it_writer_add_clock(struct it_writer *w, const struct it_clock_rec *clock)
{
	struct it_clock_rec c = *clock;

	if (w->body || !c.machine || c.machine == IT_ANY || c.machine == c.ref_machine ||
	    !memchr(c.method, '\0', sizeof(c.method)))
		return -EINVAL;
	c.reserved = 0;
	return write_chunk(w, IT_CHUNK_CLOCK, c.machine, 0, 1, &c, sizeof(c));
}

int it_writer_add_devices(struct it_writer *w, uint16_t machine, const struct it_device_rec *devs,
			  size_t n)
{
	if (w->body || !machine || machine == IT_ANY)
		return -EINVAL;
	return write_devices(w, machine, devs, n);
}

int it_writer_add_note(struct it_writer *w, const struct it_note_rec *note)
{
	struct it_note_rec c = *note;

	if (w->body || c.machine == IT_ANY || !memchr(c.text, '\0', sizeof(c.text)))
		return -EINVAL;
	c.reserved = 0;
	return write_chunk(w, IT_CHUNK_NOTE, c.machine, 0, 1, &c, sizeof(c));
}

int it_writer_add_nvmf(struct it_writer *w, uint16_t machine, const struct it_nvmf_rec *recs,
		       size_t n)
{
	if (w->body || machine == IT_ANY || n > UINT32_MAX / sizeof(*recs))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!memchr(recs[i].transport, '\0', sizeof(recs[i].transport)) ||
		    !memchr(recs[i].traddr, '\0', sizeof(recs[i].traddr)) ||
		    !memchr(recs[i].trsvcid, '\0', sizeof(recs[i].trsvcid)) ||
		    !memchr(recs[i].nqn, '\0', sizeof(recs[i].nqn)))
			return -EINVAL;
	return write_chunk(w, IT_CHUNK_NVMF, machine, 0, (uint32_t)n, recs, n * sizeof(*recs));
}

int it_writer_add_clock_est(struct it_writer *w, const struct it_clock_est_rec *est,
			    const struct it_clock_window_rec *windows, size_t n)
{
	int rc;

	if (w->body || !est->machine || est->machine == IT_ANY || est->ref_machine ||
	    n > UINT32_MAX / sizeof(*windows))
		return -EINVAL;
	rc = write_chunk(w, IT_CHUNK_CLOCK_EST, est->machine, 0, 1, est, sizeof(*est));
	if (!rc)
		rc = write_chunk(w, IT_CHUNK_CLOCK_WINDOWS, est->machine, 0, (uint32_t)n, windows,
				 n * sizeof(*windows));
	return rc;
}

int it_writer_copy_chunk(struct it_writer *w, uint16_t machine, const struct it_chunk_header *h,
			 const void *stored)
{
	struct it_chunk_header c = *h;

	if (w->err)
		return w->err;
	switch (h->type) {
	case IT_CHUNK_HOST: case IT_CHUNK_DEVICES: case IT_CHUNK_LAYERS: case IT_CHUNK_CLOCK:
	case IT_CHUNK_NOTE: case IT_CHUNK_NVMF: case IT_CHUNK_CLOCK_EST: case IT_CHUNK_CLOCK_WINDOWS:
	case IT_CHUNK_END:
		return -EINVAL;
	}
	if (!own_type(h->type) && !find_record_type(w->layers, w->nlayers, h->layer, h->type))
		return -ENOENT;
	if (it_writer_flush(w))
		return w->err;
	c.machine = machine;
	c.reserved = 0;
	if (buf_reserve(&w->out, sizeof(c) + h->stored_len))
		return w->err = -ENOMEM;
	memcpy((unsigned char *)w->out.p + sizeof(c), stored, h->stored_len);
	if (put_chunk(w, &c, w->out.p, 0))
		return w->err;
	if (h->type == IT_CHUNK_EVENTS)
		w->events += h->count;
	w->body = true;
	return 0;
}

int it_writer_flush(struct it_writer *w)
{
	for (size_t i = 0; i < w->nstreams; i++)
		flush_stream(w, &w->streams[i]);
	return w->err;
}

int it_writer_close(struct it_writer *w, uint64_t end_monotonic_ns)
{
	struct it_end_rec end = { .end_monotonic_ns = end_monotonic_ns };
	struct loss *ev = loss_of(&w->losses, 0, w->ev_layer, false);
	int err;

	it_writer_flush(w);
	for (size_t i = 0; i < w->losses.n; i++) {
		const struct loss *l = &w->losses.v[i];

		if (l->have_missed)
			write_chunk(w, IT_CHUNK_MISSED, l->machine, l->layer, 1, &l->missed,
				    sizeof(l->missed));
		if (l->have_drops)
			write_chunk(w, IT_CHUNK_DROPS, l->machine, l->layer, l->ncpu, l->drops,
				    (size_t)l->ncpu * sizeof(uint64_t));
	}
	end.events_total = w->events;
	/* the per-CPU counters are final now; never report less than before */
	end.dropped_total = ev ? (loss_sum(ev) > ev->lost ? loss_sum(ev) : ev->lost) : 0;
	end.chunks = w->chunks;
	write_chunk(w, IT_CHUNK_END, 0, 0, 1, &end, sizeof(end));
	if (w->q) {
		err = it_writeq_stop(w->q);
		w->q = NULL;
		if (err && !w->err)
			w->err = err;
	}
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

int it_writer_async(struct it_writer *w, size_t bound)
{
	if (w->q)
		return 0;
	w->sync_part = (struct it_writer_stats){ .bytes = w->bytes, .chunks = w->chunks,
						 .records = w->records, .events = w->events };
	w->q = it_writeq_start(w->fd, w->bytes, bound);
	return w->q ? 0 : -errno;
}

void it_writer_stats(const struct it_writer *w, struct it_writer_stats *st)
{
	struct it_writeq_stats q;

	*st = (struct it_writer_stats){ .bytes = w->bytes, .chunks = w->chunks,
					.records = w->records, .events = w->events, .err = w->err };
	if (!w->q)
		return;
	/* what is in the file: what was written before the queue, and the
	 * queue written out (or failed) */
	it_writeq_sync(w->q, &q);
	*st = w->sync_part;
	st->bytes += q.bytes;
	st->chunks += q.blocks;
	st->records += q.records;
	st->events += q.events;
	st->waits = q.waits;
	st->wait_ns = q.wait_ns;
	st->queue_peak = q.peak;
	st->err = w->err ? w->err : q.err;
}

void it_writer_abort(struct it_writer *w)
{
	if (!w)
		return;
	if (w->q)
		it_writeq_stop(w->q); /* what was handed to it is written */
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	for (size_t i = 0; i < w->nstreams; i++) {
		free(w->streams[i].packer);
		free(w->streams[i].wpacker);
		free(w->streams[i].data.p);
	}
	losses_free(&w->losses);
	free(w->layers);
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

/* A chunk header as read, and what it means. */
struct hdr {
	struct it_chunk_header h; /* as in the file; machine, layer 0 in v1/v2 */
	uint16_t type, machine, layer; /* v1/v2: the type and layer v3 would write */
	const struct it_record_type *rt; /* a layer's records: the manifest's entry */
};

struct slot {
	struct buf evs;     /* raw payload of a wanted chunk (EVENTS by default) */
	size_t n;           /* its record count */
	size_t len;         /* its bytes */
	uint16_t type, machine, layer;
	bool full;          /* filled by the producer, not yet released by the caller */
};

struct it_reader {
	int fd;
	char err[256];      /* why reading stopped or failed; "" otherwise */
	struct it_host_rec host;
	struct it_device_rec *devs;
	size_t ndevs;
	uint32_t version;           /* of the file */
	size_t hsize;               /* chunk header bytes: 32 before version 3 */
	struct it_layer_rec *layers;
	size_t nlayers;
	uint16_t ev_layer;          /* whose DROPS count machine 0's events */
	struct it_machine *machines;
	size_t nmachines;
	struct it_clock_rec *clocks;
	size_t nclocks;
	struct it_note_rec *notes;
	size_t nnotes;
	struct it_device_rec **mdevs; /* other machines' device tables */
	size_t nmdevs;
	struct it_nvmf_rec **mnvmf;   /* the machines' NVMF records */
	size_t nmnvmf;
	struct est { struct it_clock_est_rec e; struct it_clock_window_rec *w; size_t nw; } *ests;
	size_t nests;

	/* producer state: the read-ahead thread's once it runs */
	uint64_t off;               /* next chunk */
	ZSTD_DCtx *dctx;
	struct buf stored;          /* compressed payload */
	struct buf tmp;             /* raw payload of chunks not handed out */
	uint64_t produced;          /* events in EVENTS chunks read */
	uint64_t chunks;            /* valid chunks read, all types */
	uint64_t hdr_dropped;       /* dropped_total of the last valid chunk of ev_layer */
	struct losses losses;       /* DROPS and MISSED payloads */
	bool complete, truncated;
	uint64_t bad_offset;
	struct it_end_rec end;
	struct it_select sel[MAX_SELECT]; /* the chunks handed out */
	size_t nsel;
	bool records;               /* a records reader: step over the others unread */
	/* a follower (it_reader_open_follow): at the end of the whole chunks,
	 * follow_wait says whether more may come (it waits first) */
	bool (*follow_wait)(void *ctx);
	void *follow_ctx;

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

/* The record type of a layer's chunks: the manifest's; a v1/v2 file's
 * chunks are what this build's layers wrote then. */
static const struct it_record_type *record_type(const struct it_reader *r, uint16_t layer,
						uint16_t type)
{
	const struct it_record_type *t = find_record_type(r->layers, r->nlayers, layer, type);

	if (!t && r->version < 3)
		t = find_record_type(it_layer_builtin(layer), it_layer_builtin(layer) ? 1 : 0,
				     layer, type);
	return t;
}

/* A chunk type's name in messages: a layer's chunks go by their records. */
static const char *type_name(uint16_t type)
{
	static const char *names[] = { "?", "HOST", "DEVICES", "EVENTS", "DROPS", "END",
				       "unknown", "unknown", "DROPS", "MISSED", "CLOCK", "LAYERS",
				       "NOTE", "NVMF", "CLOCK_EST", "CLOCK_WINDOWS" };

	return type < sizeof(names) / sizeof(*names) ? names[type] : "unknown";
}

static const char *chunk_name(const struct hdr *x)
{
	return x->rt && x->type != IT_CHUNK_EVENTS ? x->rt->name : type_name(x->type);
}

/* Reads the chunk header at r->off and checks what can be checked before
 * the payload: nothing later trusts a length that failed here. */
static enum rd read_header(struct it_reader *r, struct hdr *x)
{
	struct it_chunk_header *h = &x->h;
	ssize_t n;
	size_t rs;

	memset(h, 0, sizeof(*h));
	n = pread_full(r->fd, h, r->hsize, r->off);
	if (n < 0) {
		set_err(r, "read error at offset %llu: %s", (unsigned long long)r->off, strerror(errno));
		return RD_ERR;
	}
	if (n == 0)
		return RD_EOF;
	if ((size_t)n < r->hsize) {
		set_err(r, "chunk header cut short at offset %llu", (unsigned long long)r->off);
		return RD_SHORT;
	}
	if (h->magic != IT_CHUNK_MAGIC) {
		set_err(r, "no chunk magic at offset %llu", (unsigned long long)r->off);
		return RD_BAD;
	}
	x->type = h->type;
	x->machine = h->machine;
	x->layer = r->version < 3 ? it_legacy_chunk_layer(&x->type) : h->layer;
	x->rt = own_type(x->type) ? NULL : record_type(r, x->layer, x->type);
	if (h->compression > IT_COMP_WORDS || (h->compression == IT_COMP_WORDS && r->version < 4) ||
	    ((h->compression == IT_COMP_PACK || h->compression == IT_COMP_WORDS) &&
	     (!x->rt || x->rt->encoding != h->compression))) {
		set_err(r, "unknown compression %u in the chunk at offset %llu",
			h->compression, (unsigned long long)r->off);
		return RD_BAD;
	}
	if (h->raw_len > MAX_PAYLOAD || h->stored_len > MAX_PAYLOAD ||
	    (h->compression == IT_COMP_NONE && h->stored_len != h->raw_len) ||
	    (h->compression == IT_COMP_ZSTD &&
	     (!h->raw_len || !h->stored_len || h->stored_len > ZSTD_compressBound(h->raw_len))) ||
	    (h->compression == IT_COMP_PACK &&
	     (h->stored_len < 3ull * h->count || h->stored_len > (uint64_t)IT_PACK_MAX * h->count)) ||
	    (h->compression == IT_COMP_WORDS &&
	     (h->stored_len < 3ull * h->count ||
	      h->stored_len > (uint64_t)IT_WPACK_MAX(x->rt->size / 8) * h->count))) {
		set_err(r, "impossible lengths in the chunk at offset %llu (raw %u, stored %u)",
			(unsigned long long)r->off, h->raw_len, h->stored_len);
		return RD_BAD;
	}
	rs = x->rt ? x->rt->size : own_size(x->type);
	if ((rs && (uint64_t)h->count * rs != h->raw_len) ||
	    (x->rt && !rs && h->count > h->raw_len / 8) ||
	    ((x->type == IT_CHUNK_HOST || x->type == IT_CHUNK_END || x->type == IT_CHUNK_MISSED ||
	      x->type == IT_CHUNK_CLOCK || x->type == IT_CHUNK_NOTE ||
	      x->type == IT_CHUNK_CLOCK_EST) && h->count != 1)) {
		set_err(r, "%s chunk at offset %llu: %u records do not fill %u bytes",
			chunk_name(x), (unsigned long long)r->off, h->count, h->raw_len);
		return RD_BAD;
	}
	return RD_OK;
}

/* The chunk's header counts machine 0's event losses so far. */
static void took(struct it_reader *r, const struct hdr *x)
{
	r->off += r->hsize + x->h.stored_len;
	r->chunks++;
	if (r->version < 3 || (!x->machine && x->layer && x->layer == r->ev_layer))
		r->hdr_dropped = x->h.dropped_total;
}

/* Reads, checks and decompresses the payload of the chunk whose header is
 * x into raw; advances r->off past the chunk on success. */
static enum rd read_payload(struct it_reader *r, const struct hdr *x, struct buf *raw)
{
	const struct it_chunk_header *h = &x->h;
	struct buf *dst = h->compression == IT_COMP_NONE ? raw : &r->stored;
	uint64_t at = r->off;
	ssize_t n;

	if (buf_reserve(raw, h->raw_len ? h->raw_len : 1) ||
	    buf_reserve(dst, h->stored_len ? h->stored_len : 1)) {
		set_err(r, "out of memory for a %u-byte chunk", h->raw_len);
		return RD_ERR;
	}
	n = pread_full(r->fd, dst->p, h->stored_len, at + r->hsize);
	if (n < 0) {
		set_err(r, "read error at offset %llu: %s", (unsigned long long)at, strerror(errno));
		return RD_ERR;
	}
	if ((size_t)n < h->stored_len) {
		set_err(r, "%s chunk at offset %llu cut short (%zd of %u bytes)",
			chunk_name(x), (unsigned long long)at, n, h->stored_len);
		return RD_SHORT;
	}
	if (chunk_crc(h, r->hsize, dst->p, h->stored_len) != h->payload_crc) {
		set_err(r, "CRC mismatch in the %s chunk at offset %llu",
			chunk_name(x), (unsigned long long)at);
		return RD_BAD;
	}
	if (h->compression == IT_COMP_ZSTD) {
		size_t z = ZSTD_decompressDCtx(r->dctx, raw->p, h->raw_len, dst->p, h->stored_len);

		if (ZSTD_isError(z) || z != h->raw_len) {
			set_err(r, "cannot decompress the %s chunk at offset %llu: %s",
				chunk_name(x), (unsigned long long)at,
				ZSTD_isError(z) ? ZSTD_getErrorName(z) : "wrong length");
			return RD_BAD;
		}
	} else if (h->compression == IT_COMP_PACK &&
		   it_unpack_events(dst->p, h->stored_len, raw->p, h->count)) {
		set_err(r, "cannot unpack the %s chunk at offset %llu: not %u packed events",
			chunk_name(x), (unsigned long long)at, h->count);
		return RD_BAD;
	} else if (h->compression == IT_COMP_WORDS &&
		   it_wunpack_records(dst->p, h->stored_len, raw->p, h->count, x->rt->size / 8)) {
		set_err(r, "cannot unpack the %s chunk at offset %llu: not %u packed records",
			chunk_name(x), (unsigned long long)at, h->count);
		return RD_BAD;
	}
	took(r, x);
	return RD_OK;
}

/* Ends the stream: 0 for a clean or damaged end, -1 for a read error. */
static int stop_at(struct it_reader *r, enum rd rc)
{
	if (rc == RD_ERR)
		return -1;
	if (rc == RD_EOF)
		set_err(r, "file ends at offset %llu without an END chunk: the recording "
			"did not finish (killed, crashed or out of disk space?)", (unsigned long long)r->off);
	r->truncated = true;
	r->bad_offset = r->off;
	return 0;
}

static int take_end(struct it_reader *r, const struct hdr *x)
{
	uint64_t at = r->off - r->hsize - x->h.stored_len;

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

/* DROPS and MISSED: kept by (machine, layer) for the status. */
static int take_loss(struct it_reader *r, const struct hdr *x)
{
	struct loss *l = loss_of(&r->losses, x->machine, x->layer, true);

	if (l && x->type == IT_CHUNK_MISSED) {
		memcpy(&l->missed, r->tmp.p, sizeof(l->missed));
		l->have_missed = true;
		return 0;
	}
	if (!l || loss_set_drops(l, r->tmp.p, x->h.count)) {
		set_err(r, "out of memory");
		return -1;
	}
	return 0;
}

static bool matches(uint16_t want, uint16_t v)
{
	return want == IT_ANY || want == v;
}

/* A layer's records that the reader was asked for. */
static bool wanted(const struct it_reader *r, const struct hdr *x)
{
	if (!x->rt)
		return false;
	for (size_t i = 0; i < r->nsel; i++)
		if (matches(r->sel[i].machine, x->machine) && matches(r->sel[i].layer, x->layer) &&
		    matches(r->sel[i].type, x->type))
			return true;
	return false;
}

/* Chunks the reader itself consumes for its status, whatever was asked for. */
static bool status_chunk(uint16_t type)
{
	return type == IT_CHUNK_DROPS || type == IT_CHUNK_MISSED || type == IT_CHUNK_END;
}

/* A records reader steps over the chunks it does not hand out (one
 * layer's events, when it reads another layer's) without reading them: the next
 * header's magic catches a bad length. */
static bool skip(struct it_reader *r, const struct hdr *x)
{
	if (!r->records || wanted(r, x) || status_chunk(x->type))
		return false;
	if (x->type == IT_CHUNK_EVENTS)
		r->produced += x->h.count;
	took(r, x);
	return true;
}

/* Reads chunks up to the next non-empty wanted chunk (EVENTS for
 * it_reader_next), which lands in s. Returns 1, or 0 at the end of the
 * readable data, -1 on a read error. */
static int produce(struct it_reader *r, struct slot *s)
{
	for (;;) {
		struct hdr x;
		enum rd rc = read_header(r, &x);
		bool want = rc == RD_OK && wanted(r, &x);

		if (rc == RD_OK && skip(r, &x))
			continue;
		if (rc == RD_OK)
			rc = read_payload(r, &x, want ? &s->evs : &r->tmp);
		/* a file still being written: its next chunk is not (whole) there yet */
		if ((rc == RD_EOF || rc == RD_SHORT) && r->follow_wait && r->follow_wait(r->follow_ctx))
			continue;
		if (rc != RD_OK)
			return stop_at(r, rc);
		if (x.type == IT_CHUNK_EVENTS)
			r->produced += x.h.count;
		if (want) {
			if (!x.h.count)
				continue;
			s->n = x.h.count;
			s->len = x.h.raw_len;
			s->type = x.type;
			s->machine = x.machine;
			s->layer = x.layer;
			return 1;
		}
		switch (x.type) {
		case IT_CHUNK_DROPS:
		case IT_CHUNK_MISSED:
			if (take_loss(r, &x) < 0)
				return -1;
			continue;
		case IT_CHUNK_END:
			return take_end(r, &x);
		default:
			/* a chunk type from a newer writer, records of a layer the
			 * manifest lacks, or a head chunk repeated: intact, as the
			 * CRC says, and not ours to read */
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

int it_reader_next_chunk(struct it_reader *r, struct it_chunk *c)
{
	struct slot *s;
	int rc = next_slot(r, &s);

	memset(c, 0, sizeof(*c));
	if (rc == 1)
		*c = (struct it_chunk){ .type = s->type, .machine = s->machine, .layer = s->layer,
					.count = (uint32_t)s->n, .data = s->evs.p, .len = s->len };
	return rc;
}

int it_reader_next_records(struct it_reader *r, uint16_t *type, const void **payload,
			   size_t *len, uint32_t *count)
{
	struct it_chunk c;
	int rc = it_reader_next_chunk(r, &c);

	*type = c.type;
	*payload = c.data;
	*len = c.len;
	*count = c.count;
	return rc;
}

/* Strings from the file are the file's: make sure each one ends. */
#define TERMINATE(field) ((field)[sizeof(field) - 1] = '\0')

static void terminate_host(struct it_host_rec *h)
{
	TERMINATE(h->hostname);
	TERMINATE(h->kernel);
	TERMINATE(h->boot_id);
	TERMINATE(h->clock);
	TERMINATE(h->command);
	TERMINATE(h->layers);
	TERMINATE(h->hooks);
}

/* Reads a head chunk (its header x already read and checked) into r->tmp;
 * a one-line reason goes to err on failure. */
static int read_head_payload(struct it_reader *r, const struct hdr *x, uint64_t at, enum rd rc,
			     char *err, size_t errlen)
{
	const char *name = type_name(x->type);

	if (rc == RD_OK)
		rc = read_payload(r, x, &r->tmp);
	if (rc == RD_OK)
		return 0;
	if (rc == RD_EOF || rc == RD_SHORT)
		snprintf(err, errlen, "header cut short: the file ends in its %s chunk at offset "
			 "%llu (the recording stopped before it wrote any events)",
			 name, (unsigned long long)at);
	else if (rc == RD_ERR)
		snprintf(err, errlen, "%s", r->err);
	else
		snprintf(err, errlen, "corrupt %s chunk: %s", name, r->err);
	return -1;
}

/* Reads the chunk at r->off, which must be of this type (HOST, DEVICES,
 * LAYERS), into r->tmp. */
static int read_start_chunk(struct it_reader *r, uint16_t type, struct hdr *x,
			    char *err, size_t errlen)
{
	uint64_t at = r->off;
	enum rd rc = read_header(r, x);

	if (rc == RD_OK && (x->type != type || x->machine || x->layer)) {
		snprintf(err, errlen, "corrupt %s chunk at offset %llu: found a chunk of type %u "
			 "(machine %u, layer %u)", type_name(type), (unsigned long long)at,
			 x->h.type, x->machine, x->layer);
		return -1;
	}
	x->type = type; /* for the messages when the header itself failed */
	return read_head_payload(r, x, at, rc, err, errlen);
}

/* The manifest: from the LAYERS chunk, or made from host.layers for a
 * file written before there was one. */
static int read_layers(struct it_reader *r, char *err, size_t errlen)
{
	struct it_layer_rec legacy[8];
	struct hdr x;
	char why[160];
	size_t n;

	if (r->version < 3) {
		n = it_legacy_manifest(r->host.layers, legacy, sizeof(legacy) / sizeof(*legacy));
		r->layers = malloc((n ? n : 1) * sizeof(*legacy));
		if (r->layers)
			memcpy(r->layers, legacy, n * sizeof(*legacy));
		r->ev_layer = it_legacy_chunk_layer(&(uint16_t){ IT_CHUNK_EVENTS });
	} else {
		if (read_start_chunk(r, IT_CHUNK_LAYERS, &x, err, errlen))
			return -1;
		n = x.h.count;
		r->layers = malloc(n ? x.h.raw_len : 1);
		if (r->layers)
			memcpy(r->layers, r->tmp.p, x.h.raw_len);
	}
	if (!r->layers) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->nlayers = n;
	for (size_t i = 0; i < n; i++) {
		TERMINATE(r->layers[i].name);
		for (size_t k = 0; k < IT_LAYER_MAX_RECORDS; k++)
			TERMINATE(r->layers[i].records[k].name);
	}
	if (check_layers(r->layers, n, why, sizeof(why))) {
		snprintf(err, errlen, "corrupt LAYERS chunk: %s", why);
		return -1;
	}
	if (r->version >= 3)
		r->ev_layer = events_layer(r->layers, n);
	return 0;
}

/* A machine's entry; NULL if its HOST has not been read. */
static struct it_machine *machine_of(struct it_reader *r, uint16_t id)
{
	for (size_t i = 0; i < r->nmachines; i++)
		if (r->machines[i].id == id)
			return &r->machines[i];
	return NULL;
}

/* A machine's NVMF (after its HOST; a second one, or one of an unknown
 * machine, is ignored). 0, or -1 out of memory. */
static int read_nvmf(struct it_reader *r, const struct hdr *x)
{
	struct it_machine *m = machine_of(r, x->machine);
	struct it_nvmf_rec *recs;
	void *p;

	if (!m || m->nvmf)
		return 0;
	if (!(p = realloc(r->mnvmf, (r->nmnvmf + 1) * sizeof(*r->mnvmf))))
		return -1;
	r->mnvmf = p;
	if (!(recs = r->mnvmf[r->nmnvmf] = malloc(x->h.count ? x->h.raw_len : 1)))
		return -1;
	r->nmnvmf++;
	memcpy(recs, r->tmp.p, x->h.raw_len);
	for (size_t i = 0; i < x->h.count; i++) {
		TERMINATE(recs[i].transport);
		TERMINATE(recs[i].traddr);
		TERMINATE(recs[i].trsvcid);
		TERMINATE(recs[i].nqn);
	}
	m->nvmf = recs;
	m->nnvmf = x->h.count;
	return 0;
}

/* A machine's CLOCK_EST, then its CLOCK_WINDOWS (the first of each for a
 * machine; windows without their estimate are ignored). 0, or -1 out of
 * memory. */
static int read_clock_est(struct it_reader *r, const struct hdr *x)
{
	struct est *e = NULL;
	void *p;

	for (size_t i = 0; i < r->nests; i++)
		if (r->ests[i].e.machine == x->machine)
			e = &r->ests[i];
	if (x->type == IT_CHUNK_CLOCK_WINDOWS) {
		if (!e || e->w)
			return 0;
		if (!(e->w = malloc(x->h.count ? x->h.raw_len : 1)))
			return -1;
		memcpy(e->w, r->tmp.p, x->h.raw_len);
		e->nw = x->h.count;
		return 0;
	}
	if (e || !x->machine)
		return 0;
	if (!(p = realloc(r->ests, (r->nests + 1) * sizeof(*r->ests))))
		return -1;
	r->ests = p;
	e = &r->ests[r->nests++];
	*e = (struct est){ .w = NULL };
	memcpy(&e->e, r->tmp.p, sizeof(e->e));
	e->e.machine = x->machine;
	return 0;
}

/* Another machine's DEVICES (after its HOST; a second one, or one of an
 * unknown machine, is ignored), a NOTE or any machine's NVMF or clock
 * estimate. 0, or -1 out of memory. */
static int read_machine_extra(struct it_reader *r, const struct hdr *x)
{
	struct it_machine *m = machine_of(r, x->machine);
	void *p;

	if (x->type == IT_CHUNK_NVMF)
		return read_nvmf(r, x);
	if (x->type == IT_CHUNK_CLOCK_EST || x->type == IT_CHUNK_CLOCK_WINDOWS)
		return read_clock_est(r, x);
	if (x->type == IT_CHUNK_NOTE) {
		if (!(p = realloc(r->notes, (r->nnotes + 1) * sizeof(*r->notes))))
			return -1;
		r->notes = p;
		memcpy(&r->notes[r->nnotes], r->tmp.p, sizeof(*r->notes));
		r->notes[r->nnotes].machine = x->machine;
		TERMINATE(r->notes[r->nnotes++].text);
		return 0;
	}
	if (!x->machine || !m || m->devs)
		return 0;
	if (!(p = realloc(r->mdevs, (r->nmdevs + 1) * sizeof(*r->mdevs))))
		return -1;
	r->mdevs = p;
	if (!(r->mdevs[r->nmdevs] = malloc(x->h.count ? x->h.raw_len : 1)))
		return -1;
	memcpy(r->mdevs[r->nmdevs], r->tmp.p, x->h.raw_len);
	for (size_t i = 0; i < x->h.count; i++) {
		TERMINATE(r->mdevs[r->nmdevs][i].name);
		TERMINATE(r->mdevs[r->nmdevs][i].model);
		TERMINATE(r->mdevs[r->nmdevs][i].scheduler);
	}
	m->devs = r->mdevs[r->nmdevs++];
	m->ndevs = x->h.count;
	return 0;
}

/* Other machines' HOST, DEVICES, CLOCK and NOTE chunks, up to the first
 * other chunk. */
static int read_machines(struct it_reader *r, char *err, size_t errlen)
{
	for (;;) {
		uint64_t at = r->off;
		struct hdr x;
		enum rd rc = read_header(r, &x);
		void *p;

		if (rc != RD_OK || (x.type != IT_CHUNK_HOST && x.type != IT_CHUNK_CLOCK &&
				    x.type != IT_CHUNK_NOTE && x.type != IT_CHUNK_NVMF &&
				    x.type != IT_CHUNK_CLOCK_EST && x.type != IT_CHUNK_CLOCK_WINDOWS &&
				    (x.type != IT_CHUNK_DEVICES || !x.machine)))
			return 0; /* the records start here (or the damage reading will meet) */
		if (read_head_payload(r, &x, at, rc, err, errlen))
			return -1;
		if (x.type == IT_CHUNK_DEVICES || x.type == IT_CHUNK_NOTE || x.type == IT_CHUNK_NVMF ||
		    x.type == IT_CHUNK_CLOCK_EST || x.type == IT_CHUNK_CLOCK_WINDOWS) {
			if (read_machine_extra(r, &x))
				goto oom;
			continue;
		}
		if (x.type == IT_CHUNK_HOST) {
			bool seen = false;

			for (size_t i = 0; i < r->nmachines; i++)
				seen |= r->machines[i].id == x.machine;
			if (seen || x.machine == IT_ANY)
				continue; /* the first HOST of a machine is its own */
			p = realloc(r->machines, (r->nmachines + 1) * sizeof(*r->machines));
			if (!p)
				goto oom;
			r->machines = p;
			r->machines[r->nmachines] = (struct it_machine){ .id = x.machine };
			memcpy(&r->machines[r->nmachines].host, r->tmp.p, sizeof(struct it_host_rec));
			terminate_host(&r->machines[r->nmachines++].host);
			continue;
		}
		p = realloc(r->clocks, (r->nclocks + 1) * sizeof(*r->clocks));
		if (!p)
			goto oom;
		r->clocks = p;
		memcpy(&r->clocks[r->nclocks], r->tmp.p, sizeof(*r->clocks));
		TERMINATE(r->clocks[r->nclocks].method);
		if (r->clocks[r->nclocks].machine != x.machine || !x.machine ||
		    x.machine == r->clocks[r->nclocks].ref_machine) {
			snprintf(err, errlen, "corrupt CLOCK chunk at offset %llu: machine %u "
				 "relative to machine %u, in a chunk of machine %u",
				 (unsigned long long)at, r->clocks[r->nclocks].machine,
				 r->clocks[r->nclocks].ref_machine, x.machine);
			return -1;
		}
		r->nclocks++;
	}
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int read_start(struct it_reader *r, char *err, size_t errlen)
{
	struct hdr x;

	if (read_start_chunk(r, IT_CHUNK_HOST, &x, err, errlen))
		return -1;
	memcpy(&r->host, r->tmp.p, sizeof(r->host));
	terminate_host(&r->host);
	r->machines = malloc(sizeof(*r->machines));
	if (!r->machines) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->machines[0] = (struct it_machine){ .id = 0, .host = r->host };
	r->nmachines = 1;

	if (read_start_chunk(r, IT_CHUNK_DEVICES, &x, err, errlen))
		return -1;
	r->devs = malloc(x.h.count ? x.h.raw_len : 1);
	if (!r->devs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(r->devs, r->tmp.p, x.h.raw_len);
	r->ndevs = x.h.count;
	r->machines[0].devs = r->devs;
	r->machines[0].ndevs = r->ndevs;
	for (size_t i = 0; i < r->ndevs; i++) {
		TERMINATE(r->devs[i].name);
		TERMINATE(r->devs[i].model);
		TERMINATE(r->devs[i].scheduler);
	}
	if (read_layers(r, err, errlen))
		return -1;
	return r->version < 3 ? 0 : read_machines(r, err, errlen);
}

/* Checks the 32-byte file header: every foreign or future file stops here. */
static int check_file_header(int fd, uint32_t *version, char *err, size_t errlen)
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
	if (__builtin_bswap32(fh.version) >= 1 && __builtin_bswap32(fh.version) <= IT_TRACE_VERSION) {
		snprintf(err, errlen, "big-endian trace file: this build reads little-endian files only");
		return -1;
	}
	/* version 2 added packed EVENTS chunks, version 3 the machine and layer
	 * of each chunk, version 4 packed fixed-size records (IT_COMP_WORDS):
	 * older files read with what they lack made up */
	if (fh.version < 1 || fh.version > IT_TRACE_VERSION) {
		snprintf(err, errlen, "unsupported trace format version %u (this build reads versions 1 to %u%s)",
			 fh.version, IT_TRACE_VERSION,
			 fh.version > IT_TRACE_VERSION ? "; use a newer iotrail" : "");
		return -1;
	}
	if (fh.header_size != sizeof(fh) || fh.event_size != sizeof(struct it_event)) {
		snprintf(err, errlen, "corrupt file header: header size %u, event size %u "
			 "(version %u has %zu and %zu)", fh.header_size, fh.event_size,
			 fh.version, sizeof(fh), sizeof(struct it_event));
		return -1;
	}
	*version = fh.version;
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

static struct it_reader *open_reader(const char *path, const struct it_select *sel, size_t nsel,
				     bool records, bool readahead, char *err, size_t errlen);
static struct it_reader *open_select(const char *path, const struct it_select *sel, size_t nsel,
				     bool (*wait)(void *), void *ctx, char *err, size_t errlen);

struct it_reader *it_reader_open(const char *path, char *err, size_t errlen)
{
	const struct it_select events = { 0, IT_ANY, IT_CHUNK_EVENTS };

	return open_reader(path, &events, 1, false, true, err, errlen);
}

struct it_reader *it_reader_open_select(const char *path, const struct it_select *sel,
					size_t nsel, char *err, size_t errlen)
{
	return open_select(path, sel, nsel, NULL, NULL, err, errlen);
}

struct it_reader *it_reader_open_follow(const char *path, const struct it_select *sel, size_t nsel,
					bool (*wait)(void *ctx), void *ctx, char *err,
					size_t errlen)
{
	return open_select(path, sel, nsel, wait, ctx, err, errlen);
}

static struct it_reader *open_select(const char *path, const struct it_select *sel, size_t nsel,
				     bool (*wait)(void *), void *ctx, char *err, size_t errlen)
{
	struct it_reader *r;

	if (nsel > MAX_SELECT) {
		snprintf(err, errlen, "%zu chunk selectors, at most %d", nsel, MAX_SELECT);
		return NULL;
	}
	for (size_t i = 0; i < nsel; i++)
		if (own_type(sel[i].type) || !sel[i].type) {
			snprintf(err, errlen, "chunk type %u cannot be read as records", sel[i].type);
			return NULL;
		}
	/* a follower reads in the caller's thread: wait runs there, beside
	 * the caller's own work on what it read (no read-ahead thread) */
	r = open_reader(path, sel, nsel, true, !wait, err, errlen);
	if (r) {
		r->follow_wait = wait;
		r->follow_ctx = ctx;
	}
	return r;
}

struct it_reader *it_reader_open_records(const char *path, const uint16_t *types, size_t ntypes,
					 char *err, size_t errlen)
{
	struct it_select sel[MAX_SELECT];

	if (ntypes > MAX_SELECT) {
		snprintf(err, errlen, "%zu chunk types, at most %d", ntypes, MAX_SELECT);
		return NULL;
	}
	for (size_t i = 0; i < ntypes; i++)
		sel[i] = (struct it_select){ 0, IT_ANY, types[i] };
	return it_reader_open_select(path, sel, ntypes, err, errlen);
}

static struct it_reader *open_reader(const char *path, const struct it_select *sel, size_t nsel,
				     bool records, bool readahead, char *err, size_t errlen)
{
	struct it_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memcpy(r->sel, sel, nsel * sizeof(*sel));
	r->nsel = nsel;
	r->records = records;
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
	if (check_file_header(r->fd, &r->version, err, errlen))
		goto fail;
	r->hsize = r->version < 3 ? IT_CHUNK_HEADER_V2_SIZE : sizeof(struct it_chunk_header);
	r->off = sizeof(struct it_file_header);
	if (read_start(r, err, errlen))
		goto fail;
	r->err[0] = '\0';
	if (readahead)
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

const struct it_layer_rec *it_reader_layers(const struct it_reader *r, size_t *n)
{
	*n = r->nlayers;
	return r->layers;
}

const struct it_layer_rec *it_reader_layer(const struct it_reader *r, uint16_t id)
{
	for (size_t i = 0; i < r->nlayers; i++)
		if (r->layers[i].id == id)
			return &r->layers[i];
	return NULL;
}

const struct it_machine *it_reader_machines(const struct it_reader *r, size_t *n)
{
	*n = r->nmachines;
	return r->machines;
}

const struct it_note_rec *it_reader_notes(const struct it_reader *r, size_t *n)
{
	*n = r->nnotes;
	return r->notes;
}

int it_chunk_scan(int fd, uint64_t *off, struct it_chunk_header *h, void **buf, size_t *cap)
{
	struct buf b = { *buf, *cap };
	ssize_t n = pread_full(fd, h, sizeof(*h), *off);

	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(*h) || h->magic != IT_CHUNK_MAGIC || h->stored_len > MAX_PAYLOAD ||
	    h->raw_len > MAX_PAYLOAD)
		return 0;
	if (buf_reserve(&b, h->stored_len ? h->stored_len : 1)) {
		errno = ENOMEM;
		return -1;
	}
	*buf = b.p;
	*cap = b.cap;
	n = pread_full(fd, b.p, h->stored_len, *off + sizeof(*h));
	if (n < 0)
		return -1;
	if ((size_t)n < h->stored_len || chunk_crc(h, sizeof(*h), b.p, h->stored_len) != h->payload_crc)
		return 0;
	*off += sizeof(*h) + h->stored_len;
	return 1;
}

const struct it_clock_rec *it_reader_clock(const struct it_reader *r, uint16_t machine)
{
	for (size_t i = 0; i < r->nclocks; i++)
		if (r->clocks[i].machine == machine)
			return &r->clocks[i];
	return NULL;
}

const struct it_clock_est_rec *it_reader_clock_est(const struct it_reader *r, uint16_t machine,
						   const struct it_clock_window_rec **windows,
						   size_t *nwindows)
{
	for (size_t i = 0; i < r->nests; i++)
		if (r->ests[i].e.machine == machine) {
			*windows = r->ests[i].w;
			*nwindows = r->ests[i].nw;
			return &r->ests[i].e;
		}
	*windows = NULL;
	*nwindows = 0;
	return NULL;
}

void it_reader_losses(const struct it_reader *r, uint16_t machine, uint16_t layer,
		      struct it_losses *out)
{
	struct it_reader *m = (struct it_reader *)r; /* the lock only */
	const struct loss *l;

	pthread_mutex_lock(&m->mu);
	l = loss_of(&m->losses, machine, layer, false);
	memset(out, 0, sizeof(*out));
	if (l) {
		out->known = l->have_drops;
		out->per_cpu = l->have_drops && l->ncpu ? l->drops : NULL;
		out->ncpu = l->have_drops ? l->ncpu : 0;
		out->total = loss_sum(l);
		out->missed_known = l->have_missed;
		out->missed = l->missed;
	}
	pthread_mutex_unlock(&m->mu);
}

void it_reader_status(const struct it_reader *r, struct it_reader_status *st)
{
	struct it_reader *m = (struct it_reader *)r; /* the lock only */
	struct it_losses ev;

	it_reader_losses(r, 0, r->ev_layer, &ev);
	pthread_mutex_lock(&m->mu);
	memset(st, 0, sizeof(*st));
	st->complete = r->complete;
	st->truncated = r->truncated;
	st->bad_offset = r->truncated ? r->bad_offset : 0;
	st->reason = r->truncated ? r->err : NULL;
	st->events = r->delivered;
	st->chunks = r->chunks;
	if (ev.known) {
		st->drops_per_cpu = ev.per_cpu;
		st->ncpu = ev.ncpu;
	}
	if (r->complete)
		st->dropped_total = r->end.dropped_total;
	else if (ev.known)
		st->dropped_total = ev.total;
	else
		st->dropped_total = r->hdr_dropped;
	st->end_monotonic_ns = r->complete ? r->end.end_monotonic_ns : 0;
	for (size_t i = 0; i < r->losses.n; i++) {
		if (r->losses.v[i].machine || !r->losses.v[i].have_missed)
			continue;
		st->missed += r->losses.v[i].missed;
		st->missed_known = true;
	}
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
	losses_free(&r->losses);
	free(r->devs);
	free(r->layers);
	free(r->machines);
	free(r->clocks);
	free(r->notes);
	for (size_t i = 0; i < r->nmdevs; i++)
		free(r->mdevs[i]);
	free(r->mdevs);
	for (size_t i = 0; i < r->nmnvmf; i++)
		free(r->mnvmf[i]);
	free(r->mnvmf);
	for (size_t i = 0; i < r->nests; i++)
		free(r->ests[i].w);
	free(r->ests);
	free(r);
}
