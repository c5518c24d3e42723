/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A ring per CPU (the event stream's, events.bpf.h, and the syscall
 * layer's): an array of BPF ring buffers indexed by the CPU, which the
 * recorder fills before any program is attached and merges by time
 * (src/evring.c). A ring shared by all CPUs put its lock and positions in
 * cache lines that moved between the CPU that queues an I/O and the one
 * that completes it, on every record (bench/hook_floor: one 64-byte record
 * at Q, D and C cost 1.2 us of BPF time per I/O in a shared ring, 0.55 us
 * in per-CPU rings, same run). Included by BPF code only.
 */
#ifndef IOTRAIL_CPU_RINGS_BPF_H
#define IOTRAIL_CPU_RINGS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* The template of the arrays' rings: only a type, the rings themselves
 * are made by user space (--ringbuf-mb divided among the CPUs), and the
 * kernel takes rings of any size in the array. */
struct it_cpu_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

/* An array of rings named name, slot N for CPU N; its size is set by user
 * space to the possible CPUs. */
#define IT_CPU_RINGS(name)                                                         \
	struct {                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);                          \
		__uint(max_entries, 1);                                            \
		__type(key, __u32);                                                \
		__array(values, struct it_cpu_ring);                               \
	} name SEC(".maps")

/* This CPU's ring in rings; NULL only if user space left its slot empty.
 * A program does not migrate while it runs: every call in one run gets the
 * same ring. */
static __always_inline void *it_cpu_ring(void *rings)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(rings, &cpu);
}

#endif
