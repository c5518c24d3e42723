/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Trace file writer and reader. Pure C (zstd, zlib); no libbpf, so the
 * analyzer and the unit tests link it without the BPF side.
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

/* Creates path and writes the file header, the HOST and DEVICES chunks.
 * On failure returns NULL and puts a one-line reason in err. */
struct it_writer *it_writer_open(const char *path, const struct it_host_rec *host,
				 const struct it_device_rec *devs, size_t ndevs,
				 char *err, size_t errlen);
/* Buffers events; compresses and writes an EVENTS chunk whenever the
 * buffer fills. dropped_total is the cumulative loss count so far; it goes
 * into the next chunk header so a file cut short still tells its losses. */
int it_writer_add(struct it_writer *w, const struct it_event *evs, size_t n,
		  uint64_t dropped_total);
/* Writes buffered events as a chunk now (and fsyncs nothing: it is cheap). */
int it_writer_flush(struct it_writer *w);
/* Probe runs the kernel skipped (bpf_prog_info.recursion_misses): stored in
 * a MISSED chunk at close. */
void it_writer_set_missed(struct it_writer *w, uint64_t missed);
/* Flushes, writes DROPS (per-CPU counts, ncpu entries) and END, closes.
 * Returns 0 or -errno. Frees w in every case. */
int it_writer_close(struct it_writer *w, const uint64_t *drops_per_cpu, uint32_t ncpu,
		    uint64_t end_monotonic_ns);
/* Buffers one syscall-layer record as it came from the ring buffer (struct
 * it_sys_event, or a side record: it_sys_path, it_sys_name, it_sys_task
 * with its tail; len bytes). Calls go into SYSCALLS chunks, side records
 * into SYSSIDE chunks, written when their buffer fills and at flush. */
int it_writer_add_syscall(struct it_writer *w, const void *rec, size_t len);
/* Per-CPU syscall-layer losses, written as a SYSDROPS chunk at close. */
int it_writer_set_syscall_drops(struct it_writer *w, const uint64_t *per_cpu, uint32_t ncpu);
/* Bytes written so far (for the end-of-record summary). */
uint64_t it_writer_bytes(const struct it_writer *w);
/* Frees w without writing END (error paths). */
void it_writer_abort(struct it_writer *w);

/* ---- reader ---- */
struct it_reader;

/* Opens and checks the file header and the HOST/DEVICES chunks. A foreign,
 * corrupt or unsupported file gives NULL and a one-line reason in err. */
struct it_reader *it_reader_open(const char *path, char *err, size_t errlen);
const struct it_host_rec *it_reader_host(const struct it_reader *r);
const struct it_device_rec *it_reader_devices(const struct it_reader *r, size_t *n);
/* Looks up a device by dev; NULL when the table does not have it. */
const struct it_device_rec *it_reader_device(const struct it_reader *r, uint32_t dev);
/* Next batch of events in file order. Returns 1 with *evs and *n set (valid
 * until the next call), 0 at the end of the readable data, -1 on an I/O
 * error (reason via it_reader_error). A damaged or cut-short tail is not an
 * error: reading stops there and it_reader_status says so. */
int it_reader_next(struct it_reader *r, const struct it_event **evs, size_t *n);

struct it_reader_status {
	bool     complete;        /* END chunk seen: the recorder closed the file */
	bool     truncated;       /* stopped at an incomplete or damaged chunk */
	uint64_t bad_offset;      /* file offset where reading stopped, if truncated */
	uint64_t events;          /* events delivered */
	uint64_t chunks;
	uint64_t dropped_total;   /* from END/DROPS, else the last chunk header */
	uint64_t end_monotonic_ns;/* 0 unless complete */
	const uint64_t *drops_per_cpu; /* NULL unless a DROPS chunk was read */
	uint32_t ncpu;
	uint64_t missed;          /* probe runs the kernel skipped (MISSED chunk) */
	bool     missed_known;    /* a MISSED chunk was read (files before it lack one) */
};
/* Valid after it_reader_next returned 0. */
void it_reader_status(const struct it_reader *r, struct it_reader_status *st);

/*
 * Records of other chunk types (the syscall layer's): open with the chunk
 * types wanted, then it_reader_next_records hands out their raw payloads
 * in file order (valid until the next call), with the type and the record
 * count. Chunks of other types are stepped over without being read.
 * it_reader_next must not be used on such a reader. Same return values as
 * it_reader_next; it_reader_status works the same.
 */
struct it_reader *it_reader_open_records(const char *path, const uint16_t *types, size_t ntypes,
					 char *err, size_t errlen);
int it_reader_next_records(struct it_reader *r, uint16_t *type, const void **payload,
			   size_t *len, uint32_t *count);
const char *it_reader_error(const struct it_reader *r);
void it_reader_close(struct it_reader *r);

#endif
