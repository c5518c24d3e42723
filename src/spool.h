/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The recording's spool: while COMMAND runs, the recorder only moves the
 * per-CPU rings' records, as they lie, into files (one per ring, in a
 * directory for temporary files, record.c); merging them by time, joining
 * and packing them into the trace is done from the files later: when the
 * recording ends, or earlier where the spool fills up. That is perf record's way (raw per-CPU
 * buffers to a file, the work at report time): the packing, most of the
 * recorder's CPU, is no longer taken from the workload's cores while it
 * runs. Only the order in which records reach the packing changes
 * nothing: the same records, merged by the same rules (evring.h).
 *
 * Each ring's file is a ring of its own (as large as the whole spool,
 * sparse, mapped twice in a row so that a record is whole across its
 * end); the space handed on is punched out of it, so that the spool takes
 * about what it holds. The sets of rings (the I/O path's stream, the
 * system calls') are handed on together, a millisecond of records at a
 * time, so the trace file is in time order across them as the report
 * expects (it allows 10 ms of skew).
 */
#ifndef IOTRAIL_SPOOL_H
#define IOTRAIL_SPOOL_H

#include <stdint.h>

struct it_evring;
struct it_spool;

/* A spool of at most bytes for the n sets of rings evr, in files of the
 * directory dir (O_TMPFILE: nothing left behind); now: the recording's
 * clock, from which it hands on. NULL with errno when it cannot be made
 * (a file system without O_TMPFILE, no room): the caller records without. */
struct it_spool *it_spool_new(const char *dir, struct it_evring *const *evr, unsigned int n,
			      uint64_t bytes, uint64_t now);
/* Moves what the rings hold into the spool (a ring whose file has no room
 * keeps its records). now: the clock before it, the time every record
 * still being written is stamped after (less the rings' hold, see
 * record.c). The records moved, or -errno of a failed write. */
long it_spool_take(struct it_spool *sp, uint64_t now);
/* Hands on, merged by time, the records stamped up to upto (UINT64_MAX:
 * every one; the rings must be still), a millisecond at a time across the
 * sets, stopping after the millisecond that passes max_bytes (0: no
 * bound). 0, or the first negative return of a set's callback. */
int it_spool_hand_on(struct it_spool *sp, uint64_t upto, uint64_t max_bytes);
/* Bytes in the spool not yet handed on; the most it held; all it took. */
uint64_t it_spool_held(const struct it_spool *sp);
uint64_t it_spool_peak(const struct it_spool *sp);
uint64_t it_spool_total(const struct it_spool *sp);
/* Its bound (bytes). */
uint64_t it_spool_bytes(const struct it_spool *sp);
/* Frees it and its files; NULL is fine. */
void it_spool_free(struct it_spool *sp);

#endif
