/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The syscall layer's loader: configure, load and attach src/layers/syscall/syscall.bpf.c,
 * hand every ring-buffer record to a sink, count drops, tear down. `iotrail
 * record` runs it beside the block layer (each layer has its own ring
 * buffer; both are polled from one loop through their epoll fds).
 */
#ifndef IOTRAIL_SYSCALL_LAYER_H
#define IOTRAIL_SYSCALL_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "iotrail/syscall.h"
#include "scope.h"

struct ring_buffer;

#include "hooks.h"

/* The hooks (sys_enter/sys_exit in three kinds: tp_btf and raw_tp see
 * every call, the classic syscalls:sys_{enter,exit}_X tracepoints only
 * the traced ones; io_uring; fork tracking), for the hook engine and
 * `iotrail probe`. */
/* the rows, under the names this kernel gives them once it_syscall_requires
 * or a load has asked (io_uring's submission: record_loader.c) */
extern struct it_hook_def it_syscall_hooks[];
#define IT_SYSCALL_NHOOKS 8

#define IT_SYS_MAX_IDS 64

struct it_syscall_opts {
	enum it_hook_kind hook;     /* IT_HOOK_NONE: the best this kernel takes */
	bool verbose;
	uint8_t calls[IT_SYS_MAX];  /* 1 = trace; all zero = every call */
	const struct it_scope *scope; /* which processes (scope.h); NULL: all */
	pid_t tids[IT_SYS_MAX_IDS]; /* ... or these threads too (--tid) */
	size_t ntids;
	const char *paths[IT_SYS_MAX_PREFIX]; /* path prefixes, existing */
	size_t npaths;
	size_t ringbuf_bytes;       /* 0 = 4 MiB */
	/* a task's predicate or sampling, decided by the block layer: its
	 * maps of the I/O marks and the calls' counts (scope.bpf.h), reused;
	 * then only calls that queued a kept I/O are recorded. NULL: every call */
	struct bpf_map *marks, *call_counts;
};

/* Receives each record (struct it_sys_event, it_sys_path + comps,
 * it_sys_name + name, it_sys_task; see iotrail/syscall.h) in ring order.
 * Non-zero stops the consume call that delivered it. */
typedef int (*it_syscall_sink)(void *ctx, const void *rec, size_t size);

struct it_syscall_layer;
struct it_evring;

/* Parses "pread64,fsync,meta,uring" (call names and the groups data, sync,
 * open, meta, dir, xattr, aio, uring, all) into calls[]. Returns 0, or -1
 * with "unknown call 'x'; ..." in err. */
int it_syscall_parse_calls(const char *list, uint8_t calls[IT_SYS_MAX], char *err, size_t errlen);

/* Name of a call id ("pread64"), or NULL. */
const char *it_syscall_name(unsigned call);

/* Opens, configures (filters into read-only data) and loads; then
 * it_syscall_attach attaches. On failure returns NULL (-1) with a one-line
 * "failed to X: why; what to do" reason in err (without the "iotrail
 * record: " prefix). */
struct it_syscall_layer *it_syscall_open(const struct it_syscall_opts *o, it_syscall_sink sink,
					 void *ctx, char *err, size_t errlen);
int it_syscall_attach(struct it_syscall_layer *l, const struct it_syscall_opts *o, char *err,
		      size_t errlen);

/* Makes the layer's rings and event buffers, one each per CPU, into *rings (merged by time,
 * evring.h): the sink is then called from it_evring_drain. Before
 * it_syscall_attach. 0 or -errno. */
int it_syscall_join_ring(struct it_syscall_layer *l, struct it_evring **rings);
/* Stops the probes; records already in the ring can still be consumed. */
void it_syscall_detach(struct it_syscall_layer *l);

/* Calls lost because the ring was full (call records, io_uring requests'
 * halves): per CPU into per_cpu (ncpu entries, may be NULL), total as the
 * return value. */
uint64_t it_syscall_drops(const struct it_syscall_layer *l, uint64_t *per_cpu, uint32_t ncpu);
/* Side records lost because the ring was full: paths, names, tasks and
 * exit titles (what calls refer to; not calls). */
uint64_t it_syscall_side_drops(const struct it_syscall_layer *l);
/* Fixed-size records sent through the rings, not the CPUs' buffers (a
 * program that found its CPU's buffer held by a preempted or interrupted
 * one, or full). */
uint64_t it_syscall_ringed(const struct it_syscall_layer *l);

/* The hooks in use, for the trace's hook list: "syscall=tp_btf". */
const char *it_syscall_hooks_desc(const struct it_syscall_layer *l);

/* Detaches and frees; accepts NULL. */
void it_syscall_close(struct it_syscall_layer *l);

/* What the probes need beyond their hooks (tracepoints, BTF, a kfunc):
 * 0, or -1 with why (one line). */
int it_syscall_requires(char *why, size_t len);

#endif
