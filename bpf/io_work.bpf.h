/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The scheduling delay of an NVMe/TCP queue's io_work (the work item that
 * does a queue's sending and receiving, on both sides): from the moment
 * it is queued (workqueue:workqueue_queue_work, taken only for the io_work
 * function) to the moment it starts running (the io_work function's
 * entry). The function's address is learned at its first run (work->func;
 * the module's function is static): the first run's delay is unknown.
 * While it runs, io_work_delay() gives its thread's delay, which the
 * layer's send events carry (it_tcp_event.io_work_wait_ns). Included by
 * nvme_tcp.bpf.c and nvmet_tcp.bpf.c only.
 */
#ifndef IOTRAIL_IO_WORK_BPF_H
#define IOTRAIL_IO_WORK_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

__u64 io_work_fn;                 /* the io_work function, once seen running */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);       /* struct work_struct *: a queue's io_work */
	__type(value, __u64);     /* when it was queued */
} io_work_queued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);       /* tid running an io_work */
	__type(value, __u64);     /* its scheduling delay, ns; 0: unknown */
} io_work_running SEC(".maps");

static __always_inline void io_work_queued_now(struct work_struct *w)
{
	__u64 now, key = (__u64)w;

	if (!io_work_fn || (__u64)BPF_CORE_READ(w, func) != io_work_fn)
		return;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&io_work_queued, &key, &now, BPF_ANY);
}

static __always_inline void io_work_starts(struct work_struct *w)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 key = (__u64)w, delay = 0, *queued;

	if (!io_work_fn)
		io_work_fn = (__u64)BPF_CORE_READ(w, func);
	queued = bpf_map_lookup_elem(&io_work_queued, &key);
	if (queued) {
		delay = bpf_ktime_get_ns() - *queued;
		bpf_map_delete_elem(&io_work_queued, &key);
	}
	bpf_map_update_elem(&io_work_running, &tid, &delay, BPF_ANY);
}

static __always_inline void io_work_ends(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&io_work_running, &tid);
}

/* Into a send event: the delay of the io_work run this thread is in
 * (nothing outside io_work, or when the delay is unknown). */
static __always_inline void io_work_delay(struct it_event *e)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *delay = bpf_map_lookup_elem(&io_work_running, &tid);

	if (!delay || !*delay)
		return;
	e->tcp.io_work_wait_ns = *delay > 0xffffffffull ? 0xffffffffu : (__u32)*delay;
	e->tcp.flags |= IT_TCP_IO_WORK_WAIT;
}

#define IT_IO_WORK_QUEUE_HOOKS                                                          \
	SEC("tp_btf/workqueue_queue_work")                                              \
	int BPF_PROG(workqueue_queue_work_btf, int req_cpu, void *pwq, struct work_struct *w) \
	{                                                                               \
		io_work_queued_now(w);                                                  \
		return 0;                                                               \
	}                                                                               \
	SEC("raw_tp/workqueue_queue_work")                                              \
	int BPF_PROG(workqueue_queue_work, int req_cpu, void *pwq, struct work_struct *w) \
	{                                                                               \
		io_work_queued_now(w);                                                  \
		return 0;                                                               \
	}

#endif
