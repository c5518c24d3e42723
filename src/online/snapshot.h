/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The online mode's readings, in user space: the per-CPU histograms summed
 * per device and op (a snapshot), the difference of two snapshots (an
 * interval), groupings and percentiles. Pure C, no libbpf: unit-tested on
 * made-up values (tests/unit/test_online.c).
 */
#ifndef IOTRAIL_ONLINE_SNAPSHOT_H
#define IOTRAIL_ONLINE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "online/layout.h"

#define OL_DEV_ALL 0xffffffffu /* a group's key: every device */
#define OL_OP_ALL  0xffffffffu /* every op */

struct ol_series {
	struct ol_key key;
	struct ol_value v;
};

struct ol_snapshot {
	uint64_t taken_ns; /* CLOCK_MONOTONIC, when it was read */
	size_t n, cap;
	struct ol_series *series;
	uint64_t missed[OL_NMISS];
	uint64_t nested; /* completions the kernel ran no program for (nested in one) */
};

void ol_snapshot_clear(struct ol_snapshot *s); /* keeps the memory */
void ol_snapshot_free(struct ol_snapshot *s);
/* The series of key k, added (zeroed) when missing; NULL when out of memory. */
struct ol_value *ol_snapshot_slot(struct ol_snapshot *s, struct ol_key k);
void ol_value_add(struct ol_value *dst, const struct ol_value *src);

/* out = cur - prev, series by series (a series missing from prev counts
 * from zero); 0, or -1 out of memory. Every word of cur is >= prev's, as
 * counters that only grow read in order (layout.h). */
int ol_snapshot_delta(struct ol_snapshot *out, const struct ol_snapshot *cur,
		      const struct ol_snapshot *prev);

enum ol_group { OL_GROUP_DEV_OP, OL_GROUP_DEV, OL_GROUP_OP, OL_GROUP_ALL, OL_NGROUPS };
/* out = in summed per group (OL_DEV_ALL / OL_OP_ALL in the keys it drops),
 * sorted by device then op. 0, or -1 out of memory. */
int ol_snapshot_group(struct ol_snapshot *out, const struct ol_snapshot *in, enum ol_group g);
const char *ol_group_name(enum ol_group g);
int ol_group_parse(const char *s, enum ol_group *g);

uint64_t ol_hist_count(const struct ol_hist *h);
/* The q-quantile (0..1) in ns, interpolated linearly inside its bucket;
 * 0 for an empty histogram; the overflow bucket answers its lower bound. */
uint64_t ol_hist_quantile(const struct ol_hist *h, double q);

const char *ol_op_name(uint32_t op); /* "all" for OL_OP_ALL */
extern const char *const ol_stage_names[OL_NSTAGES];
extern const char *const ol_miss_names[OL_NMISS];

/* The device's name from sysfs (/sys/dev/block/M:m/uevent), else "M:m";
 * "all" for OL_DEV_ALL. */
void ol_dev_name(uint32_t dev, char *buf, size_t n);

#endif
