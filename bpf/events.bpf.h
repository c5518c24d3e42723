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
 *
 * An object whose programs all run with preemption off (tracepoints: the
 * block and NVMe layers) defines IT_EV_BUFS before including this: its
 * events go into an event buffer per CPU (ev_buf.bpf.h), held by the
 * program writing: a program that interrupts another on the same CPU (a
 * completion's interrupt during a Q) finds it taken and sends its event
 * through the CPU's ring instead; the recorder merges both by time.
 * Programs that may be preempted (fentry, fexit: the NVMe/TCP initiator's
 * and the target's objects) cannot take the buffer this way (a preempted
 * writer's slot could be taken by another task's program, and the nesting
 * below would not unwind in order): those objects define IT_EV_BUFS_CAS,
 * take the same buffers with a compare-and-exchange (ev_buf_take) and,
 * when one is held (by a program they interrupted, or a preempted one)
 * or full, write into its slot for the ring. A tracepoint program that
 * runs while one of theirs holds the buffer takes a nested slot as it
 * would under another tracepoint's.
 */
#ifndef IOTRAIL_EVENTS_BPF_H
#define IOTRAIL_EVENTS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "iotrail/event.h"
#include "cpu_rings.bpf.h"
#include "ev_buf.bpf.h"

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

static __always_inline void ev_count_drop(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&drops, &zero);

	if (n)
		__sync_fetch_and_add(n, 1); /* a completion irq may nest */
}

#if defined(IT_EV_BUFS) || defined(IT_EV_BUFS_CAS)
IT_EV_BUFS_MAP(ev_bufs);
#else
#undef IT_EV_BUF_ON /* the ring alone */
#endif

#if defined(IT_EV_BUF_ON) && defined(IT_EV_BUFS_CAS)
/* The CPU's buffer's next record when no other program holds it and it
 * has room; else its slot for the ring, when no other program holds that
 * (both taken by compare-and-exchange); else NULL (a drop: three programs
 * on one CPU at once, two of them preempted). (A ring reservation here
 * would leave ev_submit a pointer to test against the buffer's, which the
 * verifier cannot follow: it sees a reservation that may not be
 * submitted.) */
static __always_inline struct it_event *ev_buf_reserve(struct it_ev_buf *b)
{
	struct it_event *e = ev_buf_take(b, sizeof(*e));

	if (e)
		return e;
	if (!__sync_val_compare_and_swap(&b->slot_taken, 0, 1))
		return &b->slot;
	return NULL;
}
#elif defined(IT_EV_BUF_ON)
/* The CPU's buffer's next record; when programs that this one interrupts
 * hold the buffer (or its first nested slot), a nested slot; when the
 * buffer is full, the overflow slot (the ring takes the event, as it took
 * every event before the buffers); NULL (a drop) when three are nested. A
 * program on one CPU runs to its end before the one it interrupted goes
 * on (tracepoints run with preemption off), so taken goes back to what it
 * was. */
static __always_inline struct it_event *ev_buf_reserve(struct it_ev_buf *b)
{
	__u64 taken = b->taken;
	struct it_event *e;

	if (taken) {
		if (taken > 2)
			return NULL;
		b->taken = taken + 1;
		/* (constant offsets: 6.1's verifier loses the bounds of an
		 * index computed in 32 bits) sent through the ring by ev_submit */
		return taken == 1 ? &b->nested[0] : &b->nested[1];
	}
	b->taken = 1;
	ev_barrier();
	e = ev_buf_place(b, sizeof(*e));
	return e ? e : &b->nested[2]; /* full: taken stays 1, interrupters use [0], [1] */
}
#endif

/* A zeroed-out event of this type (ring memory is not zeroed: every field
 * is written), or NULL after counting a drop. Every event reserved is
 * submitted (ev_submit), on every path. */
static __always_inline struct it_event *ev_reserve(__u8 type, __u8 layer, __u32 dev)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct it_event *e;
#ifdef IT_EV_BUF_ON
	struct it_ev_buf *b = ev_buf_of_cpu(&ev_bufs);

	e = b ? ev_buf_reserve(b) : NULL;
#else
	void *rb = it_cpu_ring(&events);

	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
#endif
	if (!e) {
		ev_count_drop();
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

#ifndef IT_EV_BUF_ON /* (the buffers count in struct it_ev_buf's since) */
/* Events submitted on this CPU since the ring's fill was last looked at. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ev_since_query SEC(".maps");
#endif

/* Wakeups (irq_work + epoll) cost more than the event itself at 100K+ IOPS:
 * the consumer polls on a short timer, and is only woken early when the
 * ring fills past wakeup_bytes. The fill is looked at on one event in 64
 * per CPU (a per-CPU counter: a shared one would bounce its cache line
 * between the submitting and the completing CPU on every event), which
 * saves a helper call on the others; the wakeup then comes at most 64
 * events (4 KiB) per CPU late, far inside the ring's slack. */
#ifdef IT_EV_BUF_ON
/* An event of one of b's slots (not its data) into the CPU's ring, or a
 * counted drop; the slot is free again after this. */
static __always_inline void ev_ring_out(struct it_ev_buf *b, struct it_event *e)
{
	void *rb = it_cpu_ring(&events);

	if (!rb || bpf_ringbuf_output(rb, e, sizeof(*e), 0))
		ev_count_drop();
	else /* a program may interrupt this one here: atomic */
		__sync_fetch_and_add(&b->ringed, 1);
	ev_barrier();
}
#endif

#if defined(IT_EV_BUF_ON) && defined(IT_EV_BUFS_CAS)
/* The event is whole: the slot's goes through the ring, the buffer's is
 * published. */
static __always_inline void ev_submit(struct it_event *e)
{
	struct it_ev_buf *b = ev_buf_of_cpu(&ev_bufs);

	if (!b)
		return;
	if (e == &b->slot) {
		ev_ring_out(b, e);
		b->slot_taken = 0;
		return;
	}
	ev_buf_publish(b, &events);
}
#elif defined(IT_EV_BUF_ON)
/* The event reserved from the CPU's buffer is whole: the consumer may
 * read it. An interrupting program's (the nested slot) goes through the
 * ring. The buffer's fill is looked at once in 64 records, and beyond
 * ev_buf_wakeup the consumer is woken through the ring (a discarded
 * record with a wakeup: the reader skips it). */
static __always_inline void ev_submit(struct it_event *e)
{
	struct it_ev_buf *b = ev_buf_of_cpu(&ev_bufs);

	if (!b)
		return;
	if (e == &b->nested[0] || e == &b->nested[1] || e == &b->nested[2]) {
		ev_ring_out(b, e);
		b->taken--; /* the overflow slot's 1 back to 0 too */
		return;
	}
	ev_buf_publish(b, &events);
}
#else
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

#endif
