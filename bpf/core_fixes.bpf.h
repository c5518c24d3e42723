/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Kernel struct and enum changes the block probes must survive, as CO-RE
 * "flavours": a local type named X___suffix matches the kernel's X, only
 * the fields/enumerators named here are relocated, and bpf_core_*_exists()
 * tells at load time which flavour this kernel has. Every flavour names the
 * kernel commit that made it necessary. Included by BPF code only.
 */
#ifndef IOTRAIL_CORE_FIXES_BPF_H
#define IOTRAIL_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "iotrail/event.h" /* IT_MKDEV */

/*
 * commit 309dca309fc3 ("block: store a block_device pointer in struct bio"),
 * v5.12: bio->bi_disk (+ bi_partno) became bio->bi_bdev. Before it, the disk
 * was reached directly.
 */
struct bio___old {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/*
 * commit d152c682f03c ("block: add an explicit ->disk backpointer to the
 * request_queue"), v5.15, added q->disk; commit f3fa33acca9f ("block: remove
 * the ->rq_disk field in struct request"), v5.16, removed rq->rq_disk. Use
 * q->disk where it exists, else rq->rq_disk.
 */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

struct request_queue___new {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

/* tp_btf programs may load through kernel pointers (the verifier makes the
 * loads fault-safe); raw_tp programs must use probe reads. btf is always a
 * literal at the call site, so each program keeps only one of the two. */
#define KREAD(btf, ptr, field) ((btf) ? (ptr)->field : BPF_CORE_READ(ptr, field))

/* A disk's device number (IT_MKDEV's encoding); 0 without a disk. */
static __always_inline __u32 disk_dev(struct gendisk *disk, bool btf)
{
	if (!disk)
		return 0;
	return IT_MKDEV(KREAD(btf, disk, major), KREAD(btf, disk, first_minor));
}

/* The device number of a request's disk, on either side of v5.15/v5.16. */
static __always_inline __u32 rq_dev(struct request *rq, bool btf)
{
	struct request___old *old = (void *)rq;
	struct request_queue___new *q;

	if (bpf_core_field_exists(old->rq_disk))
		return disk_dev(KREAD(btf, old, rq_disk), btf);
	q = (void *)KREAD(btf, rq, q);
	return q ? disk_dev(KREAD(btf, q, disk), btf) : 0;
}

/*
 * commit ff07a02e9e8e ("treewide: Rename enum req_opf into enum req_op"),
 * v6.0: the REQ_OP_* enumerators moved from enum req_opf to enum req_op.
 * Their values also move between versions (6.x renumbered the zone ops), so
 * they are always read through enum relocations, never hard-coded. Both
 * flavours are declared here with suffixed enumerator names so this file
 * builds against any vmlinux.h.
 */
enum req_op___new {
	REQ_OP_READ___new, REQ_OP_WRITE___new, REQ_OP_FLUSH___new,
	REQ_OP_DISCARD___new, REQ_OP_SECURE_ERASE___new,
	REQ_OP_WRITE_ZEROES___new, REQ_OP_ZONE_OPEN___new,
	REQ_OP_ZONE_CLOSE___new, REQ_OP_ZONE_FINISH___new,
	REQ_OP_ZONE_APPEND___new, REQ_OP_ZONE_RESET___new,
	REQ_OP_ZONE_RESET_ALL___new, REQ_OP_DRV_IN___new, REQ_OP_DRV_OUT___new,
};

enum req_opf___old {
	REQ_OP_READ___old, REQ_OP_WRITE___old, REQ_OP_FLUSH___old,
	REQ_OP_DISCARD___old, REQ_OP_SECURE_ERASE___old,
	REQ_OP_WRITE_ZEROES___old, REQ_OP_ZONE_OPEN___old,
	REQ_OP_ZONE_CLOSE___old, REQ_OP_ZONE_FINISH___old,
	REQ_OP_ZONE_APPEND___old, REQ_OP_ZONE_RESET___old,
	REQ_OP_ZONE_RESET_ALL___old, REQ_OP_DRV_IN___old, REQ_OP_DRV_OUT___old,
};

/*
 * Request flag bit numbers (enum req_flag_bits) move whenever a flag is
 * added. commit 6ce913fe3eee ("block: rename REQ_HIPRI to REQ_POLLED"),
 * v5.16, renamed __REQ_HIPRI.
 */
enum req_flag_bits___x {
	__REQ_SYNC___x, __REQ_META___x, __REQ_PRIO___x, __REQ_NOMERGE___x,
	__REQ_IDLE___x, __REQ_FUA___x, __REQ_PREFLUSH___x, __REQ_RAHEAD___x,
	__REQ_BACKGROUND___x, __REQ_NOWAIT___x, __REQ_POLLED___x,
	__REQ_HIPRI___x,
};

/* REQ_OP_BITS: the operation is the low 8 bits of bi_opf/cmd_flags since
 * commit ef295ecf090d ("block: better op and flags encoding"), v4.10. */
#define IT_REQ_OP_MASK 0xffu

/* True when this kernel's REQ_OP_<name> exists and equals op. Uses the
 * v6.0+ enum where present, the older enum req_opf otherwise; the exists
 * checks are constants after relocation, so the verifier drops dead arms. */
#define IT_OP_IS(op, name)                                                         \
	(bpf_core_enum_value_exists(enum req_op___new, REQ_OP_##name##___new)      \
		 ? (op) == bpf_core_enum_value(enum req_op___new, REQ_OP_##name##___new) \
		 : (bpf_core_enum_value_exists(enum req_opf___old, REQ_OP_##name##___old) && \
		    (op) == bpf_core_enum_value(enum req_opf___old, REQ_OP_##name##___old)))

/* The kernel's request flag bit __REQ_<name> set in opf (0 when this kernel
 * has no such flag). */
#define IT_FLAG_SET(opf, name)                                                     \
	(bpf_core_enum_value_exists(enum req_flag_bits___x, __REQ_##name##___x) &&   \
	 ((opf) >> bpf_core_enum_value(enum req_flag_bits___x, __REQ_##name##___x) & 1))

/*
 * A tracepoint's argument i from a tp_btf or raw_tp program's ctx, where
 * the arguments moved between kernels: the program tests a flag in
 * rodata (known to the verifier: rodata is frozen at load, so it prunes
 * the other branch and never checks its out-of-range argument). CTX_AT
 * keeps i an immediate of the load instruction: with a plain
 * ctx[flag ? 1 : 0] clang computes ctx + 8 * flag, and the verifier
 * rejects loads through a modified ctx pointer.
 */
#define CTX_AT(ctx, i)                                                             \
	({                                                                         \
		__u64 __v;                                                         \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                              \
			     : "=r"(__v) : "r"(ctx), "i"((i) * 8));                \
		__v;                                                               \
	})

#endif
