/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The uprobe layer's records: the probes `record --uprobe/--usdt` asked
 * for (one definition each, written when the file opens) and one hit per
 * time a probe fired. Shared by the BPF program, the recorder and the
 * analysis; a change here is a change of the layer's version.
 */
#ifndef IOTRAIL_UPROBE_H
#define IOTRAIL_UPROBE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define IT_UPROBE_MAX_ARGS 6   /* USDT arguments kept per hit (sys/sdt.h allows 12) */
#define IT_UPROBE_MAX 64       /* probes per recording */

enum it_uprobe_kind {
	IT_UPROBE_FUNC = 1,    /* --uprobe BINARY:SYMBOL: a function's entry */
	IT_UPROBE_USDT = 2,    /* --usdt BINARY:PROVIDER:NAME */
};

struct it_uprobe_hit {
	__u64 ts_ns;           /* monotonic */
	__u32 pid, tid;
	__u32 probe;           /* its definition's id */
	__u32 nargs;           /* arguments kept (USDT: min(the probe's, IT_UPROBE_MAX_ARGS)) */
	__u64 args[IT_UPROBE_MAX_ARGS];
};

struct it_uprobe_def {
	__u32 probe;           /* id, the hits' probe */
	__u16 kind;            /* enum it_uprobe_kind */
	__u16 reserved;
	char label[48];        /* how the report names it (LABEL, else SYMBOL or NAME) */
	char binary[160];      /* the path attached to */
	char provider[32];     /* USDT provider; "" for a function */
	char symbol[64];       /* function or USDT name */
};

#endif
