/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Joins an io_uring request's submission and completion ring records
 * (IT_SREC_URING_SUBMIT, IT_SREC_URING_DONE) into the one call record the
 * trace file holds, by the request's address. The ring delivers a
 * request's submission before its completion (the submission is reserved
 * in the ring before the request is issued).
 */
#ifndef IOTRAIL_URING_JOIN_H
#define IOTRAIL_URING_JOIN_H

#include <stdint.h>
#include "iotrail/syscall.h"

/* Requests waiting for their completion, at most (as many as the BPF
 * map held before: 16384 entries, ~2 MB). */
#define IT_URING_JOIN_MAX 16384

struct it_uring_join {
	struct it_uring_slot *slots; /* open addressing, linear probing */
	uint32_t cap;                /* a power of two, or 0 */
	uint32_t len;
	uint64_t evicted;   /* submissions thrown out to make room (lost requests) */
	uint64_t unmatched; /* completions with no submission (begun before the
			     * recording, outside --comm/--cgroup, or lost) */
	uint64_t filtered;  /* completions outside --path */
};

/* Remembers a submission (a later one at the same address replaces it:
 * the kernel reuses a request once it completed). 0, or -ENOMEM. */
int it_uring_join_submit(struct it_uring_join *j, const struct it_sys_uring_submit *s);

/* The completion's call record into *out: 1 when it is to be written,
 * 0 when it has no submission or is filtered out. */
int it_uring_join_done(struct it_uring_join *j, const struct it_sys_uring_done *d,
		       struct it_sys_event *out);

void it_uring_join_free(struct it_uring_join *j);

#endif
