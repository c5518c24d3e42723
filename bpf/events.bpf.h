/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The event rings of the I/O path (block and NVMe layers), the device and
 * process filters, and the helpers every probe uses to fill them. Each
 * .bpf.c that includes this gets its own copies of the maps; user space
 * makes them one (the NVMe object reuses the block object's fds), so the
 * events of all layers are one stream. Included by BPF code only.
 *
 * One ring per CPU (cpu_rings.bpf.h says why); the recorder merges the
 * CPUs' rings by time (src/evring.c), so the events of one I/O stay in
 * causal order in the file.
 */
#ifndef IOTRAIL_EVENTS_BPF_H
#define IOTRAIL_EVENTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "iotrail/event.h"
#include "cpu_rings.bpf.h"

#define IT_MAX_DEVS 16

/* ---- tunables, set by user space before load ---- */
const volatile __u32 filter_ndevs = 0;        /* 0: every device */
const volatile __u32 filter_devs[IT_MAX_DEVS] = {};
const volatile __u64 wakeup_bytes = 16 << 20; /* wake the consumer beyond this */
const volatile bool scoped = false;           /* a process scope (-p, --comm, --cgroup) or
					       * a task's predicate or sampling (--filter,
					       * --sample): only I/O of tracked bios and requests */

IT_CPU_RINGS(events);

/* Events lost because the ring was full, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* With a scope only: bios and requests of processes in it, so that the
 * request's later events (which run in other contexts) are kept too. LRU,
 * so entries of I/Os we never see finish age out instead of filling up. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} tracked SEC(".maps");

static __always_inline bool dev_wanted(__u32 dev)
{
	if (!filter_ndevs)
		return true;
	for (__u32 i = 0; i < IT_MAX_DEVS; i++) {
		if (i >= filter_ndevs)
			break;
		if (filter_devs[i] == dev)
			return true;
	}
	return false;
}

/* A zeroed-out event of this type (ring memory is not zeroed: every field
 * is written), or NULL after counting a drop. */
static __always_inline struct it_event *ev_reserve(__u8 type, __u8 layer, __u32 dev)
{
	void *rb = it_cpu_ring(&events);
	struct it_event *e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&drops, &zero);

		if (n)
			__sync_fetch_and_add(n, 1); /* a completion irq may nest */
		return NULL;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->id = 0;
	e->sector = 0;
	e->aux = 0;
	e->dev = dev;
	e->bytes = 0;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->flags = 0;
	e->error = 0;
	e->tag = 0xffff;
	e->hwq = 0xffff;
	e->type = type;
	e->op = IT_OP_OTHER;
	e->layer = layer;
	e->cpu_lo = bpf_get_smp_processor_id();
	e->reserved = 0;
	return e;
}

/* Events submitted on this CPU since the ring's fill was last looked at. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ev_since_query SEC(".maps");

/* Wakeups (irq_work + epoll) cost more than the event itself at 100K+ IOPS:
 * the consumer polls on a short timer, and is only woken early when the
 * ring fills past wakeup_bytes. The fill is looked at on one event in 64
 * per CPU (a per-CPU counter: a shared one would bounce its cache line
 * between the submitting and the completing CPU on every event), which
 * saves a helper call on the others; the wakeup then comes at most 64
 * events (4 KiB) per CPU late, far inside the ring's slack. */
static __always_inline void ev_submit(struct it_event *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;
	__u32 zero = 0, *n = bpf_map_lookup_elem(&ev_since_query, &zero);
	void *rb;

	if ((!n || !(++*n & 63)) && (rb = it_cpu_ring(&events)) &&
	    bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) > wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

#endif
