/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail diff`: the latency amplification degree (LAD, from the ntprof
 * paper) of every stage between two analysed traces. A stage's LAD is its
 * latency in the loaded trace over its latency in the base trace, at p50
 * and at avg; the stage with the highest LAD at avg is the bottleneck.
 *
 * Pure C over the results the one analysis pass left (the block layer's
 * groups, the fabric layer's ops): src/diff.c runs the pass on each
 * trace and hands the results here, the unit tests hand synthetic ones.
 *
 * Groups are matched by their key values as the report prints them
 * (device and comm by name, so two traces of one machine match), the
 * fabric layer's per opcode. Only the stages that partition the total
 * compete for the bottleneck: for block groups Q2I, I2D, Q2D, D2C (they
 * add up to Q2C); Q2C is the total, S2D and the NVMe stages inside D2C
 * (D2N, D2H, H2N, N2C) are a finer partition; they are listed for
 * information only. The fabric view's stages partition its io: host.block,
 * host.out, target, host.in, host.done; where the NVMe/TCP transport was
 * traced, host.out, target and host.in give way to their parts (host.queue
 * .. target.recv, target.queue and target.dev, target.sendq .. host.complete).
 * When both traces have a fabric view, the bottleneck is chosen among its
 * stages (an initiator's whole path, with the target's device in it); the
 * block groups' are listed for information.
 */
#ifndef IOTRAIL_ANALYZE_DIFF_H
#define IOTRAIL_ANALYZE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/analyzer.h"
#include "iotrail/trace_format.h"

struct it_fabric_results;

/* One analysed trace. */
struct it_diff_side {
	const char *path;
	const struct it_results *r;             /* block layer's results */
	const struct it_analyzer *a;            /* its comm names (may be NULL) */
	const struct it_device_rec *devs;       /* device names */
	size_t ndevs;
	const struct it_fabric_results *fabric; /* NULL: the trace has no fabric view */
};

#define IT_DIFF_KEYS 6
#define IT_DIFF_STAGES 28 /* the most stages a group has: the fabric view's (IT_FS_MAX) */

struct it_diff_stat {
	uint64_t count, p50_ns, avg_ns;
};

struct it_diff_stage {
	const char *name;
	bool competes;           /* in the partition that competes for the bottleneck */
	const char *role;        /* "total", "part of D2C", ...: NULL when it is in the partition */
	struct it_diff_stat base, loaded;
	double lad_p50, lad_avg; /* loaded / base; < 0: null (base 0 or a side without data) */
};

enum it_diff_where { IT_DIFF_BOTH, IT_DIFF_BASE_ONLY, IT_DIFF_LOADED_ONLY };

struct it_diff_group {
	unsigned nkeys;
	const char *kname[IT_DIFF_KEYS];
	char kval[IT_DIFF_KEYS][64];
	bool knum[IT_DIFF_KEYS];     /* the value is a number in JSON */
	char label[160];             /* "read loop0", "fabric read", "all" */
	bool fabric;                 /* a fabric view op, not a block group */
	enum it_diff_where where;
	uint64_t count[2];           /* I/Os (commands) at base, loaded */
	struct it_diff_stage stage[IT_DIFF_STAGES];
	size_t nstages;              /* sorted by lad_avg descending, nulls last */
};

struct it_diff {
	const char *base_path, *loaded_path;
	struct it_diff_group *groups; /* base's order, then the loaded-only ones */
	size_t ngroups;
	long bn_group, bn_stage;      /* the bottleneck; -1: none (no stage has a LAD) */
	bool bn_fabric;               /* it was chosen among the fabric view's stages */
};

/* LAD of one value: loaded / base, or -1 (null) when base is 0 or a side
 * has no data. */
double it_diff_lad(uint64_t base, uint64_t loaded, uint64_t base_count, uint64_t loaded_count);

/* NULL when memory ran out. */
struct it_diff *it_diff_new(const struct it_diff_side *base, const struct it_diff_side *loaded);
void it_diff_text(const struct it_diff *d, FILE *f);
void it_diff_json(const struct it_diff *d, FILE *f, bool pretty);
void it_diff_free(struct it_diff *d);

#endif
