/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A buffer per CPU that programs write records into with plain stores
 * (struct it_ev_buf, event.h), where a BPF ring buffer takes a spinlock
 * with interrupts off and writes a header twice per record (it serves any
 * number of producers): bench/hook_floor 7 against 4, one 64-byte record
 * at Q, D and C, 381-403 ns of BPF time per I/O against 531-563, empty
 * programs 180-193. One program writes at a time: it holds the buffer
 * (taken) from placing its record to publishing it. How a program takes
 * it is the object's: the block and NVMe layers' tracepoints run with
 * preemption off and nest like interrupts (events.bpf.h); the NVMe/TCP
 * layers' probes and the syscall layer's sys_exit may be preempted
 * (ev_buf_take: a compare-and-exchange). A program that cannot take it, or finds it full, sends its
 * record through the CPU's ring instead; the recorder merges buffers and
 * rings by time (src/evring.c reads both alike: the data is laid out as
 * a ring buffer's, a record never wraps around the end, the space left
 * there is a discarded record).
 *
 * x86 only: there stores stay in order, so a record is whole before the
 * producer position moves past it with only the compiler held back.
 * Elsewhere that would need a release store: the rings alone there (the
 * maps exist but stay empty). Included by BPF code only.
 */
#ifndef IOTRAIL_EV_BUF_BPF_H
#define IOTRAIL_EV_BUF_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "iotrail/event.h"
#include "cpu_rings.bpf.h"

const volatile __u64 ev_buf_mask = 4095;          /* data bytes - 1, a power of two */
const volatile __u64 ev_buf_wakeup = 16 << 20;    /* wake the consumer beyond this */

/* The buffers of an object, name: struct it_ev_buf, one value per CPU
 * (user space sets the count and the value size, IT_EV_BUF_VALUE_SIZE,
 * and maps them). */
#define IT_EV_BUFS_MAP(name)                                                       \
	struct {                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                  \
		__uint(map_flags, BPF_F_MMAPABLE);                                 \
		__uint(max_entries, 1);                                            \
		__uint(key_size, sizeof(__u32));                                   \
		__uint(value_size, 8192);                                          \
	} name SEC(".maps")

#ifdef __TARGET_ARCH_x86
#define IT_EV_BUF_ON 1
#endif

#ifdef IT_EV_BUF_ON
#define ev_barrier() asm volatile("" ::: "memory")

/* This CPU's buffer in bufs, or NULL. */
static __always_inline struct it_ev_buf *ev_buf_of_cpu(void *bufs)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(bufs, &cpu);
}

/* Room for a record of len bytes (a constant; at most IT_EV_BUF_SLACK - 8)
 * at the producer position of b, which the caller holds: its header is
 * written, the record goes at the pointer returned; NULL when the buffer
 * is full. Published by ev_buf_publish. */
static __always_inline void *ev_buf_place(struct it_ev_buf *b, __u64 len)
{
	__u64 rec = (8 + len + 7) & ~7ull, size = ev_buf_mask + 1;
	__u64 pos = b->prod, off = pos & ev_buf_mask, pad = 0;

	if (off + rec > size)
		pad = size - off;
	if (pos + pad + rec - *(volatile __u64 *)&b->cons > size)
		return NULL;
	if (pad) { /* what is left at the end: skipped by the reader */
		*(__u32 *)&b->data[off] = (__u32)(pad - 8) | IT_EV_BUF_DISCARD;
		*(__u32 *)&b->data[off + 4] = 0;
		pos += pad;
		off = 0;
	}
	*(__u32 *)&b->data[off] = (__u32)len;
	*(__u32 *)&b->data[off + 4] = 0;
	b->next = pos + rec;
	return &b->data[off + 8];
}

/* For programs that may be preempted (run with preemption on: fentry,
 * fexit, faultable tracepoints), which cannot nest their holds as
 * interrupts do: takes b by a compare-and-exchange and places a record of
 * len bytes there (ev_buf_place). The record's pointer, b held until
 * ev_buf_publish; NULL when another program holds b (one this one
 * interrupted, or a preempted one) or it is full (b not held). A 64-bit
 * compare-and-exchange needs no newer BPF instruction set. */
static __always_inline void *ev_buf_take(struct it_ev_buf *b, __u64 len)
{
	void *p;

	if (__sync_val_compare_and_swap(&b->taken, 0, 1))
		return NULL;
	p = ev_buf_place(b, len);
	if (!p) {
		ev_barrier();
		b->taken = 0;
	}
	return p;
}

/* The record placed last in b is whole: the consumer may read it, and b
 * is given back. Once in 64 records the fill is looked at, and beyond
 * ev_buf_wakeup the consumer is woken through this CPU's ring in rings
 * (a discarded record with a wakeup: the reader skips it). */
static __always_inline void ev_buf_publish(struct it_ev_buf *b, void *rings)
{
	void *rb;

	ev_barrier();
	b->prod = b->next;
	ev_barrier();
	b->taken = 0;
	if (!(++b->since & 63) && b->prod - *(volatile __u64 *)&b->cons > ev_buf_wakeup &&
	    (rb = it_cpu_ring(rings))) {
		void *w = bpf_ringbuf_reserve(rb, 8, 0);

		if (w)
			bpf_ringbuf_discard(w, BPF_RB_FORCE_WAKEUP);
	}
}
#endif

#endif
