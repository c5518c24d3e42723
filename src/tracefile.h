/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Trace file writer and reader (doc/trace-format.md). Pure C (zstd, zlib);
 * no libbpf, so the analyzer and the unit tests link it without the BPF
 * side. It knows no layer: what a layer's chunks hold comes from the
 * layers manifest (struct it_layer_rec), which the caller gives the writer
 * and the reader reads from the file.
 */
#ifndef IOTRAIL_TRACEFILE_H
#define IOTRAIL_TRACEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iotrail/event.h"
#include "iotrail/trace_format.h"

/* ---- writer ---- */
struct it_writer;

/* The head of a file: the recording machine's host facts and devices, and
 * the layers manifest (every layer recorded and its record types). */
struct it_trace_head {
	const struct it_host_rec *host;
	const struct it_device_rec *devs;
	size_t ndevs;
	const struct it_layer_rec *layers;
	size_t nlayers;
};

/* Creates path and writes the file header, HOST, DEVICES and LAYERS. On
 * failure (including a malformed manifest) returns NULL and puts a one-line
 * reason in err. */
struct it_writer *it_writer_open(const char *path, const struct it_trace_head *head,
				 char *err, size_t errlen);
/* Another machine's host facts (a HOST chunk tagged with machine > 0), and
 * how a machine's clock relates to another's (a CLOCK chunk). Only before
 * the first record chunk is written: -EINVAL after, or for machine 0. */
int it_writer_add_machine(struct it_writer *w, uint16_t machine, const struct it_host_rec *host);
int it_writer_add_clock(struct it_writer *w, const struct it_clock_rec *clock);
/* Another machine's device table, and a warning about a machine's data
 * (NOTE): head chunks too, after its HOST. */
int it_writer_add_devices(struct it_writer *w, uint16_t machine, const struct it_device_rec *devs,
			  size_t n);
int it_writer_add_note(struct it_writer *w, const struct it_note_rec *note);
/* machine's stored clock estimate and its windows (head, once per machine). */
int it_writer_add_clock_est(struct it_writer *w, const struct it_clock_est_rec *est,
			    const struct it_clock_window_rec *windows, size_t n);
/* machine's NVMe-oF endpoints (head, once per machine; n may be 0). */
int it_writer_add_nvmf(struct it_writer *w, uint16_t machine, const struct it_nvmf_rec *recs,
		       size_t n);
/* Copies a chunk as it is in another file (header h, then stored_len
 * payload bytes, CRC checked by the caller: it_chunk_scan) as a chunk of
 * machine: the CRC is made anew, the rest is kept. A layer's chunk needs
 * its (layer, type) in this writer's manifest (-ENOENT); the file's own
 * types HOST, DEVICES, LAYERS, CLOCK, NOTE and END are refused (-EINVAL).
 * Buffered records are flushed first, so order is kept. */
int it_writer_copy_chunk(struct it_writer *w, uint16_t machine, const struct it_chunk_header *h,
			 const void *stored);

/*
 * Records. A stream is the records of one (machine, layer, chunk type);
 * the manifest's entry for (layer, chunk type) gives its record size and
 * encoding: struct it_event records packed (IT_COMP_PACK), or records as
 * they are, fixed-size or variable (padded to 8 bytes), compressed with
 * zstd (IT_COMP_ZSTD). Each stream buffers its records and writes a chunk
 * of at most 1 MiB raw when the buffer fills, at flush and at close.
 * len must be the record size (any length up to 1 MiB for variable
 * records): -EINVAL otherwise; -ENOENT for a (layer, type) the manifest
 * lacks. Other errors (-errno) are the file's and sticky.
 */
int it_writer_add_record(struct it_writer *w, uint16_t machine, uint16_t layer, uint16_t type,
			 const void *rec, size_t len);
/* n events into machine 0's (layer, EVENTS) stream. */
int it_writer_add_events(struct it_writer *w, uint16_t layer, const struct it_event *evs,
			 size_t n);
/* Records of (machine, layer) lost so far (cumulative): the headers of the
 * layer's next chunks carry it, so a file cut short still tells. */
void it_writer_set_lost(struct it_writer *w, uint16_t machine, uint16_t layer, uint64_t total);
/* At close: a DROPS chunk of (machine, layer) with its final per-CPU
 * losses, and a MISSED chunk with the probe runs the kernel skipped. */
int it_writer_set_drops(struct it_writer *w, uint16_t machine, uint16_t layer,
			const uint64_t *per_cpu, uint32_t ncpu);
int it_writer_set_missed(struct it_writer *w, uint16_t machine, uint16_t layer, uint64_t missed);
/* Writes every stream's buffered records as (shorter) chunks now. */
int it_writer_flush(struct it_writer *w);
/* Flushes, writes DROPS and MISSED chunks and END, closes. Returns 0 or
 * -errno. Frees w in every case. */
int it_writer_close(struct it_writer *w, uint64_t end_monotonic_ns);
/* Bytes written so far (for the end-of-record summary). */
uint64_t it_writer_bytes(const struct it_writer *w);
/* What is in the file so far, up to its last complete chunk, and the
 * writer's first error (-errno, sticky; 0 none). */
struct it_writer_stats {
	uint64_t bytes, chunks;
	uint64_t records;               /* every layer's, events included */
	uint64_t events;                /* struct it_event, in EVENTS chunks */
	/* it_writer_async: how often and how long the caller waited on a
	 * full queue (the file system stalled), the most it held */
	uint64_t waits, wait_ns;
	size_t queue_peak;
	int err;
};
/* With it_writer_async, waits until what was handed to the thread is
 * written (or failed). */
void it_writer_stats(const struct it_writer *w, struct it_writer_stats *st);
/* From now on chunks are written by a thread of their own, through a
 * queue of at most bound bytes (writeq.h): adding records never waits on
 * the file system until the queue is full. A write error shows in the
 * next call that hands over a chunk, in flush and in close. 0 or -errno. */
int it_writer_async(struct it_writer *w, size_t bound);
/* Frees w without writing END (error paths). */
void it_writer_abort(struct it_writer *w);

/* ---- reader ---- */
struct it_reader;

/* Opens and checks the file header and the head chunks (HOST, DEVICES,
 * LAYERS, other machines' HOST and CLOCK). A foreign, corrupt or
 * unsupported file gives NULL and a one-line reason in err. The reader
 * hands out the events of machine 0 (it_reader_next). */
struct it_reader *it_reader_open(const char *path, char *err, size_t errlen);
/* Machine 0's host facts and devices. */
const struct it_host_rec *it_reader_host(const struct it_reader *r);
const struct it_device_rec *it_reader_devices(const struct it_reader *r, size_t *n);
/* Looks up a device by dev; NULL when the table does not have it. */
const struct it_device_rec *it_reader_device(const struct it_reader *r, uint32_t dev);
/* The layers manifest (for version-1 and -2 files, made from the HOST
 * record's layers string), and one layer of it by id (NULL: not in the
 * file). */
const struct it_layer_rec *it_reader_layers(const struct it_reader *r, size_t *n);
const struct it_layer_rec *it_reader_layer(const struct it_reader *r, uint16_t id);
/* The machines in the file, machine 0 first, each with its host facts and
 * (machine 0 always, others when the file has them) its devices. */
struct it_machine {
	uint16_t id;
	struct it_host_rec host;
	const struct it_device_rec *devs;
	size_t ndevs;
	const struct it_nvmf_rec *nvmf; /* its NVMF chunk; NULL, 0 when it has none */
	size_t nnvmf;
};
const struct it_machine *it_reader_machines(const struct it_reader *r, size_t *n);
/* How machine's clock relates to another's; NULL when the file has no
 * CLOCK chunk for it (machine 0 has none: it is the reference). */
const struct it_clock_rec *it_reader_clock(const struct it_reader *r, uint16_t machine);
/* The clock estimate stored for machine (CLOCK_EST) and its windows; NULL
 * when the file has none (recorded before them, or by one target only). */
const struct it_clock_est_rec *it_reader_clock_est(const struct it_reader *r, uint16_t machine,
						   const struct it_clock_window_rec **windows,
						   size_t *nwindows);
/* The warnings (NOTE chunks) of the head, in file order. */
const struct it_note_rec *it_reader_notes(const struct it_reader *r, size_t *n);

/*
 * Raw chunks of a version-3 file, for copying and for shipping whole
 * chunks: the chunk at *off (the first one is at 32, after the file
 * header) is read into *buf (grown as needed) if it is whole, its lengths
 * sane and its CRC right. Returns 1 with *h and *off moved past it, 0 at
 * the end of the whole chunks (the file ends, or the next chunk is cut or
 * damaged: it is not handed out), -1 on a read error (errno).
 */
int it_chunk_scan(int fd, uint64_t *off, struct it_chunk_header *h, void **buf, size_t *cap);

/* Next batch of events in file order. Returns 1 with *evs and *n set (valid
 * until the next call), 0 at the end of the readable data, -1 on an I/O
 * error (reason via it_reader_error). A damaged or cut-short tail is not an
 * error: reading stops there and it_reader_status says so. */
int it_reader_next(struct it_reader *r, const struct it_event **evs, size_t *n);

/* One chunk's records as handed out: raw payload (events unpacked, zstd
 * undone), valid until the next call. */
struct it_chunk {
	uint16_t type;          /* enum it_chunk_type */
	uint16_t machine;       /* 0: the recording machine */
	uint16_t layer;         /* enum it_layer */
	uint32_t count;         /* records */
	const void *data;
	size_t len;
};
/* Next chunk handed out, for any reader: same return values as
 * it_reader_next. */
int it_reader_next_chunk(struct it_reader *r, struct it_chunk *c);

/*
 * Readers of chosen chunks: each selector picks the chunks of a machine, a
 * layer and a chunk type (IT_ANY matches every value); the file's own chunk
 * types cannot be picked. Chunks not picked are stepped over without being
 * read. it_reader_next must not be used on such a reader.
 * it_reader_open_records(types) picks machine 0's chunks of those types.
 */
#define IT_ANY 0xffffu
struct it_select {
	uint16_t machine, layer, type;
};
struct it_reader *it_reader_open_select(const char *path, const struct it_select *sel,
					size_t nsel, char *err, size_t errlen);
/* A reader of a file still being written (iotrail record --sink): at the
 * end of its whole chunks it calls wait(ctx), in the caller's thread,
 * which waits a little and returns true to read on, false to end there
 * (the reader's status then says truncated unless END came). */
struct it_reader *it_reader_open_follow(const char *path, const struct it_select *sel, size_t nsel,
					bool (*wait)(void *ctx), void *ctx, char *err,
					size_t errlen);
struct it_reader *it_reader_open_records(const char *path, const uint16_t *types, size_t ntypes,
					 char *err, size_t errlen);
/* it_reader_next_chunk without machine and layer. */
int it_reader_next_records(struct it_reader *r, uint16_t *type, const void **payload,
			   size_t *len, uint32_t *count);

/* Valid after reading returned 0. The losses are those of machine 0's
 * events (the first layer in the manifest with EVENTS records). */
struct it_reader_status {
	bool     complete;        /* END chunk seen: the recorder closed the file */
	bool     truncated;       /* stopped at an incomplete or damaged chunk */
	uint64_t bad_offset;      /* file offset where reading stopped, if truncated */
	const char *reason;       /* if truncated: why, one line (it_reader_error); valid
				   * while the reader is open */
	uint64_t events;          /* records handed out */
	uint64_t chunks;
	uint64_t dropped_total;   /* from END/DROPS, else the last chunk header */
	uint64_t end_monotonic_ns;/* 0 unless complete */
	const uint64_t *drops_per_cpu; /* NULL unless a DROPS chunk was read */
	uint32_t ncpu;
	uint64_t missed;          /* probe runs the kernel skipped, machine 0, all layers */
	bool     missed_known;    /* a MISSED chunk was read (files before it lack one) */
};
void it_reader_status(const struct it_reader *r, struct it_reader_status *st);
/* One layer's losses on one machine, from its DROPS and MISSED chunks;
 * valid after reading returned 0. */
struct it_losses {
	bool known;               /* a DROPS chunk was read */
	const uint64_t *per_cpu;  /* ncpu entries */
	uint32_t ncpu;
	uint64_t total;
	bool missed_known;
	uint64_t missed;
};
void it_reader_losses(const struct it_reader *r, uint16_t machine, uint16_t layer,
		      struct it_losses *l);
const char *it_reader_error(const struct it_reader *r);
void it_reader_close(struct it_reader *r);

#endif
