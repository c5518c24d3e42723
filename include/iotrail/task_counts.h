/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What a task's predicate and sampling decided, counted in the kernel per
 * CPU (bpf/scope.bpf.h) and stored at the end of a recording (event.h:
 * IT_EV_TASK_COUNTS), so that the report gives exact totals of what it
 * did not keep instead of leaving them to be guessed.
 *
 * I/Os, at their first event (the bio's Q) of a process in scope:
 *   passed    passed the predicate (every I/O without one): offered to the
 *             sampling; kept = passed - skipped
 *   skipped   left out by the sampling (1 in N, or past an epoch's N)
 *   rejected  left out by the predicate
 * System calls (with the block layer deciding: the syscall layer records
 * only calls that queued a kept I/O between their entry and exit):
 *   kept      recorded: queued at least one kept I/O
 *   not_kept  not recorded: queued I/Os, none of them kept
 *   no_io     not recorded: queued no block I/O (a cache hit, an open)
 * io_uring requests (the syscall layer's, decided the same way: a request
 * is kept when its submitting thread queued a kept I/O between its
 * submission and the thread's next submission, its io_uring_enter's
 * return or a completion it runs, whichever comes first):
 *   kept      recorded: queued at least one kept I/O
 *   not_kept  not recorded: queued I/Os, none of them kept
 *   no_io     not recorded: queued no block I/O then (a cache hit, an
 *             operation without storage I/O)
 *   async     not recorded: handed to an io-wq worker before it queued a
 *             kept I/O (IOSQE_ASYNC, or it would block): the worker's I/O
 *             is decided on its own, which the request cannot follow
 */
#ifndef IOTRAIL_TASK_COUNTS_H
#define IOTRAIL_TASK_COUNTS_H

enum it_io_count { IT_IOC_PASSED, IT_IOC_SKIPPED, IT_IOC_REJECTED, IT_IOC_MAX };
enum it_call_count { IT_CALLC_KEPT, IT_CALLC_NOT_KEPT, IT_CALLC_NO_IO, IT_CALLC_MAX };
enum it_uring_count { IT_URC_KEPT, IT_URC_NOT_KEPT, IT_URC_NO_IO, IT_URC_ASYNC, IT_URC_MAX };
/* the keys of scope_call_counts (bpf/scope.bpf.h): one set per kind */
enum it_call_counts_key { IT_CCK_CALLS, IT_CCK_URING, IT_CCK_MAX };

/* One per-CPU slot of either: counters by the enums above. */
struct it_task_counts {
	unsigned long long n[4];
};

/* The I/O counts' slots in the block object's global data, one cache line
 * per CPU (bpf/scope.bpf.h: scope_io_slots; CPUs beyond share slots). */
#define IT_COUNT_CPUS 1024
struct it_count_slot {
	struct it_task_counts c;
	unsigned long long pad[4];
};

#endif
