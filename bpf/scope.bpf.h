/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The recording's scope: which processes every layer records (`iotrail
 * record -p PID[,PID...]`, `--comm NAME`, `--cgroup DIR`; none of them:
 * every process). Each BPF object that filters by process includes this
 * and gets the same rules; user space (src/scope.c) seeds the maps the
 * same way in each, so the block and syscall layers agree.
 *
 * Descendants are followed in the kernel, not by polling /proc:
 *   -p      a bitmap over the pid space (scope_pid_bits), seeded with the
 *           PIDs and their descendants alive at start; sched_process_fork
 *           adds a child whose parent is in it, before the child runs, so
 *           a short-lived child (a backend, a `sh -c`) is never missed;
 *           sched_process_exit removes a process whose last thread is
 *           gone, so a reused pid is not recorded. An array lookup is
 *           inlined by the verifier: the test costs a few loads.
 *   --comm  processes whose name starts with NAME, and their descendants
 *           (scope_comm_bits, filled the same way, and by the first call
 *           or bio of a matching process, so one started later is in too):
 *           a child keeps its parent's membership after exec.
 *   --cgroup  tasks in the cgroup v2 directory or below it
 *           (bpf_current_task_under_cgroup): the cgroup tree already holds
 *           the descendants (unless moved out).
 * Given together, each must hold. Included by BPF code only.
 */
#ifndef IOTRAIL_SCOPE_BPF_H
#define IOTRAIL_SCOPE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iotrail/sample_epoch.h"
#include "iotrail/task_counts.h"

/* ---- tunables, set by user space before load ---- */
const volatile __u8 scope_pids;          /* -p: only tgids in scope_pid_bits */
const volatile __u8 scope_comm_len;      /* --comm: > 0, the prefix's length */
const volatile char scope_comm[16];
const volatile __u8 scope_cgroup;        /* --cgroup: the cgroup in scope_cgroup_map */

/* PID_MAX_LIMIT is 4M: 65536 words of 64 bits. */
#define IT_SCOPE_WORDS 65536

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IT_SCOPE_WORDS); /* 1 when the filter is off (user space) */
	__type(key, __u32);
	__type(value, __u64);
} scope_pid_bits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IT_SCOPE_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} scope_comm_bits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope_cgroup_map SEC(".maps");

#define IT_SCOPE_ON (scope_pids || scope_comm_len || scope_cgroup)

/* ---- the task's I/O predicate and sampling (src/task.h) ----
 * Decided once, at an I/O's first event (the bio's Q), with the process
 * tests above; the block layer then tracks the bio into its request and
 * the NVMe command, as for a process scope, so an I/O is in or out at
 * every layer alike. scope_pred_n clauses joined by ||, each of an op
 * set, a size range (the bio's bytes) and a device (0: any). */
#define IT_PRED_MAX 4
const volatile __u8 scope_pred_n;               /* 0: every I/O */
const volatile __u32 scope_pred_ops[IT_PRED_MAX];
const volatile __u64 scope_pred_min[IT_PRED_MAX];
const volatile __u64 scope_pred_max[IT_PRED_MAX];
const volatile __u32 scope_pred_dev[IT_PRED_MAX];
const volatile __u32 scope_sample_n;            /* 1 in N I/Os; 0 or 1: every one */
const volatile __u32 scope_sample_epoch_n;      /* the first N of every epoch; 0: off */
const volatile __u64 scope_sample_epoch_ns;
/* sample_epoch.h's word, in a cache line of its own (below) */
__u64 scope_sample_epoch_state __attribute__((aligned(64)));

#define IT_PRED_SAMPLING (scope_sample_n > 1 || scope_sample_epoch_n)
#define IT_PRED_ON (scope_pred_n || IT_PRED_SAMPLING)

/* What the predicate and the sampling left out (include/iotrail/
 * task_counts.h: enum it_io_count), in a cache line per CPU of global
 * data: an inlined CPU id and one uncontended atomic add (atomic because
 * a Q may nest in another on its CPU, in an interrupt).
 * The slots are aligned to their lines: unaligned, CPU 0's shared the
 * first line of .bss with the block layer's tracked_live, which every
 * request event of a scoped recording reads on the other CPU, so that
 * line moved between the CPUs on every rejected Q (a rejected I/O cost
 * ~200 ns of BPF time more than three empty programs; aligned, and with
 * no clock read for it, 10-40: README, Performance). libbpf maps global
 * data mmapable, so .bss is page-aligned.
 * Read from the skeleton's .bss at the end (CPUs beyond IT_COUNT_CPUS
 * share slots, still exactly: the adds are atomic; task_counts.h). */
struct it_count_slot scope_io_slots[IT_COUNT_CPUS] __attribute__((aligned(64)));

static __always_inline void scope_count_io(unsigned int which)
{
	__u32 cpu = bpf_get_smp_processor_id() & (IT_COUNT_CPUS - 1);

	__sync_fetch_and_add(&scope_io_slots[cpu].c.n[which & 3], 1);
}

/* The syscall layer's calls (enum it_call_count, key IT_CCK_CALLS) and
 * io_uring requests (enum it_uring_count, key IT_CCK_URING), per CPU, in
 * a map the block object owns and the syscall object reuses. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_CCK_MAX);
	__type(key, __u32);
	__type(value, struct it_task_counts);
} scope_call_counts SEC(".maps");

static __always_inline void scope_count(void *counts, __u32 key, unsigned int which)
{
	struct it_task_counts *c = bpf_map_lookup_elem(counts, &key);

	/* a call's exit, a request's submission or completion: process
	 * context, not nested in another of the syscall layer's programs */
	if (c)
		c->n[which & 3]++;
}

/* now_ns: the time the I/O's first event will carry, so that the epoch
 * it was counted in is the one its trace shows */
static __always_inline bool scope_pred_wanted(__u8 op, __u64 bytes, __u32 dev, __u64 now_ns)
{
	bool in = !scope_pred_n;

	for (int i = 0; i < IT_PRED_MAX; i++)
		if (i < scope_pred_n && ((scope_pred_ops[i] >> (op & 31)) & 1) &&
		    bytes >= scope_pred_min[i] && bytes <= scope_pred_max[i] &&
		    (!scope_pred_dev[i] || scope_pred_dev[i] == dev))
			in = true;
	if (!IT_PRED_ON)
		return in;
	if (!in) {
		scope_count_io(IT_IOC_REJECTED);
		return false;
	}
	scope_count_io(IT_IOC_PASSED);
	/* sampled after the predicate: 1 in N of the I/Os it keeps */
	if (scope_sample_n > 1)
		in = bpf_get_prandom_u32() % scope_sample_n == 0;
	if (in && scope_sample_epoch_n)
		in = it_epoch_take((unsigned long long *)&scope_sample_epoch_state,
				   now_ns, scope_sample_epoch_ns, scope_sample_epoch_n);
	if (!in)
		scope_count_io(IT_IOC_SKIPPED);
	return in;
}

/* ---- the decision, into the system call that queued the I/O ----
 * The block layer's Q notes, in the submitting thread's storage, when it
 * last kept and last left out one of its I/Os; the syscall layer (the
 * same map: user space reuses the block object's fd) reads it at the
 * call's exit, so a call is recorded when it queued a kept I/O between
 * its entry and exit. One task-storage lookup on each side, only with a
 * predicate or sampling and both layers recorded (scope_mark_calls). */
const volatile __u8 scope_mark_calls;

struct scope_io_mark {
	__u64 kept_ns;      /* the Q time of the thread's last kept I/O */
	__u64 left_ns;      /* of its last I/O left out */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct scope_io_mark);
} scope_io_marks SEC(".maps");

static __always_inline void scope_mark_io(bool kept, __u64 now_ns)
{
	struct scope_io_mark *m;

	if (!scope_mark_calls)
		return;
	m = bpf_task_storage_get(&scope_io_marks, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!m)
		return;
	if (kept)
		m->kept_ns = now_ns;
	else
		m->left_ns = now_ns;
}

/* At a call's exit: whether the thread queued a kept I/O since entered_ns
 * (counted in scope_call_counts either way). */
static __always_inline bool scope_call_kept(struct task_struct *task, __u64 entered_ns)
{
	struct scope_io_mark *m = bpf_task_storage_get(&scope_io_marks, task, 0, 0);

	if (m && m->kept_ns >= entered_ns) {
		scope_count(&scope_call_counts, IT_CCK_CALLS, IT_CALLC_KEPT);
		return true;
	}
	scope_count(&scope_call_counts, IT_CCK_CALLS,
		    m && m->left_ns >= entered_ns ? IT_CALLC_NOT_KEPT : IT_CALLC_NO_IO);
	return false;
}

static __always_inline bool scope_bit(void *bits, __u32 id)
{
	__u32 k = (id >> 6) & (IT_SCOPE_WORDS - 1);
	__u64 *w = bpf_map_lookup_elem(bits, &k);

	return w && ((*w >> (id & 63)) & 1);
}

static __always_inline void scope_set(void *bits, __u32 id, bool on)
{
	__u32 k = (id >> 6) & (IT_SCOPE_WORDS - 1);
	__u64 *w = bpf_map_lookup_elem(bits, &k);

	if (!w)
		return;
	if (on)
		__sync_fetch_and_or(w, 1ull << (id & 63));
	else
		__sync_fetch_and_and(w, ~(1ull << (id & 63)));
}

static __always_inline bool scope_comm_match(const char *c)
{
	bool ok = true;

	for (int i = 0; i < 16; i++)
		if (i < scope_comm_len && c[i] != scope_comm[i])
			ok = false;
	return ok;
}

/* Whether the current task (tgid, its comm) is in scope; scope_wanted()
 * is both tests. Call only when IT_SCOPE_ON. A process that matches
 * --comm joins scope_comm_bits here, so that its children follow it. */
static __always_inline bool scope_pid_wanted(__u32 tgid)
{
	return !scope_pids || scope_bit(&scope_pid_bits, tgid);
}

/* --comm and --cgroup (the syscall layer tests the pid set apart: its
 * --tid adds threads to it). */
static __always_inline bool scope_rest_wanted(__u32 tgid, const char *comm)
{
	if (scope_comm_len && !scope_bit(&scope_comm_bits, tgid)) {
		if (!scope_comm_match(comm))
			return false;
		scope_set(&scope_comm_bits, tgid, true);
	}
	if (scope_cgroup && bpf_current_task_under_cgroup(&scope_cgroup_map, 0) != 1)
		return false;
	return true;
}

static __always_inline bool scope_wanted(__u32 tgid, const char *comm)
{
	return scope_pid_wanted(tgid) && scope_rest_wanted(tgid, comm);
}

/* ---- descendants ---- */

SEC("raw_tp/sched_process_fork")
int BPF_PROG(scope_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	char comm[16];

	if (ptgid == ctgid) /* a thread */
		return 0;
	if (scope_pids && scope_bit(&scope_pid_bits, ptgid))
		scope_set(&scope_pid_bits, ctgid, true);
	if (scope_comm_len) {
		bool in = scope_bit(&scope_comm_bits, ptgid);

		if (!in) {
			BPF_CORE_READ_STR_INTO(&comm, parent, comm);
			in = scope_comm_match(comm);
		}
		if (in)
			scope_set(&scope_comm_bits, ctgid, true);
	}
	return 0;
}

/* A process that is gone leaves both sets, so a reused pid is not recorded. */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(scope_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (tgid != BPF_CORE_READ(task, pid) || BPF_CORE_READ(task, signal, live.counter))
		return 0;
	if (scope_pids)
		scope_set(&scope_pid_bits, tgid, false);
	if (scope_comm_len)
		scope_set(&scope_comm_bits, tgid, false);
	return 0;
}

#endif
