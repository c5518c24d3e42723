/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The per-CPU event rings of the I/O path (bpf/events.bpf.h), read in
 * place and merged by time: each CPU writes its events to its own BPF
 * ring buffer (cheaper than one ring shared by all CPUs), and the recorder
 * hands them on in the order of their timestamps, so that the events of
 * one I/O, queued on one CPU and completed on another, stay in causal
 * order in the trace file, as they were in the shared ring.
 *
 * Records are read where the kernel wrote them (no copy) and a ring's
 * consumer position moves past a record only once it is handed on: the
 * records not yet due stay in their ring. A record is due when its time
 * (its first 8 bytes, struct it_event's ts_ns, or what a key function
 * says) is at or before the drain's bound. Within one ring, records are handed on in ring order
 * (a completion that interrupts a probe on the same CPU may carry an
 * earlier time than the record reserved before it: the shared ring had
 * the same order); a record still being written (busy) stops its ring
 * until the next drain.
 */
#ifndef IOTRAIL_EVRING_H
#define IOTRAIL_EVRING_H

#include <stddef.h>
#include <stdint.h>

/* One BPF ring buffer as user space maps it: the consumer position (ours
 * to advance), the producer position, and the data, mapped twice in a row
 * so that a record is contiguous across the end. */
struct it_evring_src {
	unsigned long *consumer_pos;
	const unsigned long *producer_pos;
	const unsigned char *data;
	unsigned long mask;             /* data bytes - 1 (a power of two) */
};

/* Called with each record in time order; a negative return stops the
 * drain (the record counts as handed on) and is returned by it. */
typedef int (*it_evring_fn)(void *ctx, void *data, size_t size);
/* A record's time, the merge's key (records of several kinds); NULL: its
 * first 8 bytes, as struct it_event's ts_ns. */
typedef uint64_t (*it_evring_key)(const void *data, size_t size);

struct it_evring;

/* n rings, none mapped yet. NULL when out of memory. */
struct it_evring *it_evring_new(unsigned int n, it_evring_fn fn, it_evring_key key, void *ctx);
/* Maps ring i from a BPF_MAP_TYPE_RINGBUF map of bytes data bytes; fd is
 * kept (for epoll) and closed by it_evring_free. 0 or -errno. */
int it_evring_map(struct it_evring *r, unsigned int i, int fd, size_t bytes);
/* Ring i as given (unit tests: rings laid out by hand in memory). */
void it_evring_set(struct it_evring *r, unsigned int i, const struct it_evring_src *src);
/* The fd of ring i, -1 for one not mapped. */
int it_evring_fd(const struct it_evring *r, unsigned int i);
unsigned int it_evring_count(const struct it_evring *r);
/* Hands on every committed record of time <= upto_ns, in time order
 * across the rings (UINT64_MAX: all of them). The records handed on, or
 * the callback's negative return. */
long it_evring_drain(struct it_evring *r, uint64_t upto_ns);
/* Unmaps and closes the rings; frees r. NULL is fine. */
void it_evring_free(struct it_evring *r);

#endif
