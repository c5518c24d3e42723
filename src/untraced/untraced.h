/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Threads this kernel runs no probe for while they are current, found by
 * counting context switches (untraced.bpf.c): shared by the BPF program
 * and `iotrail probe --untraced` (probe_untraced.c).
 */
#ifndef IOTRAIL_UNTRACED_H
#define IOTRAIL_UNTRACED_H

#ifndef __bpf__
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#endif

#define IT_UNTRACED_MAX_TASKS 16384

struct it_switch_counts {
	__u32 in;   /* switched into the thread (seen in the previous one's context) */
	__u32 away; /* switched away from it (seen in its own context) */
};

#ifndef __bpf__
/* A thread switched in at least twice and never seen switching away. */
struct it_untraced_task {
	uint32_t tid, tgid; /* tgid 0: the thread had exited when asked */
	uint32_t in;        /* times switched in */
	uint64_t ran_ns;    /* CPU time it ran in the window (/proc/TID/schedstat) */
	char comm[16];      /* the thread's name */
	char proc_comm[16]; /* its process's (the thread group leader's) */
};

struct it_untraced {
	double secs;          /* how long the switches were counted */
	uint64_t switches;    /* switches counted (into any thread) */
	uint64_t not_counted; /* switches lost to a full map: counts incomplete */
	uint64_t cpu_ns;      /* the window's CPU time: its length times the CPUs online */
	uint64_t hidden_ns;   /* what the listed threads ran of it */
	size_t n;
	struct it_untraced_task *tasks; /* sorted by tid; free with it_untraced_free */
};

/* Counts context switches for secs seconds (a line on stderr once counting)
 * and fills u. 0, or -1 with why filled (what failed and why). */
int it_untraced_watch(double secs, struct it_untraced *u, char *why, size_t len);
void it_untraced_free(struct it_untraced *u);
#endif

#endif
