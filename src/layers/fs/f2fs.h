/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * F2FS's own tracepoints as the fs layer's events (`record --f2fs`, or
 * --extents on an F2FS mount): garbage collection rounds (f2fs_gc_begin,
 * f2fs_gc_end), the background GC thread's wake-ups (f2fs_background_gc),
 * checkpoints (f2fs_write_checkpoint, one event per phase) and the page
 * writes a GC round issues (f2fs_submit_page_write on the GC's thread
 * between its begin and end: each moved block's old and new address).
 * Page writes outside a GC are only counted, by type and temperature
 * (per-CPU, written as IT_F2FS_PAGES records when the recording ends):
 * one record per page would cost a ring slot per 4 KiB written.
 * Shared by the BPF program, the recorder and the analysis; a change here
 * is a change of the fs layer's version.
 */
#ifndef IOTRAIL_FS_F2FS_H
#define IOTRAIL_FS_F2FS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum it_f2fs_kind {
	IT_F2FS_GC_BEGIN = 1,   /* a: 1 foreground, 0 background; b: free sections;
				 * c: free segments; d: prefree segments */
	IT_F2FS_GC_END = 2,     /* a: the return value (signed); b: segments freed;
				 * c: sections freed; d: free sections after */
	IT_F2FS_BG_GC = 3,      /* the GC thread woke: a: its next wait (ms);
				 * b: prefree segments; c: free segments */
	IT_F2FS_CHECKPOINT = 4, /* a: reason (CP_* bits); c, d: the phase's text's
				 * first 16 bytes ("start block_ops", "finish
				 * block_ops", "finish checkpoint") */
	IT_F2FS_GC_WRITE = 5,   /* a page written by a GC round: a: inode;
				 * b: page index; c: old block | new block << 32
				 * (F2FS block addresses); d: type | temperature << 8,
				 * | IT_F2FS_GC_LATER when a background round only
				 * marked the page and writeback wrote it later */
	IT_F2FS_PAGES = 6,      /* written at the end: a: page writes of type b
				 * (0 data, 1 node, 2 meta) and temperature c (0 hot,
				 * 1 warm, 2 cold), GC rounds' included */
};

struct it_f2fs_event {
	__u64 ts_ns;            /* monotonic */
	__u32 dev;              /* the kernel's dev_t (major << 20 | minor) */
	__u16 kind;             /* enum it_f2fs_kind */
	__u16 reserved;         /* 0 */
	__u32 pid, tid;
	__u64 a, b, c, d;
};

#define IT_F2FS_GC_LATER (1u << 16) /* in a GC_WRITE's d: written back after its round */

#define IT_F2FS_PAGE_KINDS 9    /* type (3) x temperature (3): the page counters */

#endif
