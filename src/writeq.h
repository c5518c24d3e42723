/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A write queue: blocks of bytes written to a file, in order, by a thread
 * of its own, so that whoever produces them never waits on the file system
 * (a disk that is busy, a file system frozen for a snapshot). The queue is
 * bounded in bytes: a producer that gets that far ahead waits (then what
 * the recorder's rings cannot hold meanwhile is dropped and counted, as
 * when nothing was queued). Used by the trace writer (tracefile.c) when
 * `iotrail record` asks for it: the drain thread must keep up with the
 * rings (issue 13).
 */
#ifndef IOTRAIL_WRITEQ_H
#define IOTRAIL_WRITEQ_H

#include <stddef.h>
#include <stdint.h>

struct it_writeq;

/* What the queue put in the file (up to the last block written whole), how long
 * producers waited on a full queue, and the first error (-errno). */
struct it_writeq_stats {
	uint64_t bytes, blocks, records, events;
	uint64_t waits, wait_ns;        /* it_writeq_put calls that waited; their time */
	size_t peak;                    /* most bytes queued at once */
	int err;
};

/* A queue of at most bound bytes in front of fd (which stays the
 * caller's; base bytes are in it already), its thread started. NULL
 * with errno. */
struct it_writeq *it_writeq_start(int fd, uint64_t base, size_t bound);
/* Copies len bytes to be written after everything put before; records and
 * events are counted as written with them. Waits while the queue holds
 * bound bytes (a block larger than the bound waits for an empty queue).
 * 0, or the first write error (-errno): sticky; from then on nothing is
 * written, and the file is cut back to its last whole block. */
int it_writeq_put(struct it_writeq *q, const void *p, size_t len, uint64_t records,
		  uint64_t events);
/* Waits until everything put is written (or a write failed): the stats. */
void it_writeq_sync(struct it_writeq *q, struct it_writeq_stats *st);
/* Writes what is queued, stops the thread and frees q; the write error. */
int it_writeq_stop(struct it_writeq *q);

#endif
