// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Snapshots of the online histograms and what is made of them: intervals
 * (the difference of two snapshots), groups, percentiles.
 *
 * Why an interval is exact: each word the kernel writes is a counter that
 * only grows, written by one CPU and read by user space 8 bytes at a time
 * (the kernel copies per-CPU values a long at a time). Interval k is
 * snapshot k minus snapshot k-1, so the intervals' sum telescopes to the
 * last snapshot minus the first: an I/O whose increment landed before
 * snapshot k and after snapshot k-1 is in interval k and in no other. An
 * I/O's stages are separate words, so one I/O being completed while a
 * snapshot is read may show its Q2C in one interval and its D2C in the
 * next; each is still counted once. A histogram's count is the sum of its
 * buckets (not a word of its own), so count and buckets always agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotrail/event.h"
#include "online/snapshot.h"

const char *const ol_stage_names[OL_NSTAGES] = { "q2d", "d2c", "q2c" };
const char *const ol_miss_names[OL_NMISS] = { "no_issue", "no_queue", "no_slot" };
static const char *const op_names[OL_NOPS] = { "read", "write", "flush", "discard", "other" };
static const char *const group_names[OL_NGROUPS] = { "dev,op", "dev", "op", "all" };

void ol_snapshot_clear(struct ol_snapshot *s)
{
	s->n = 0;
	s->taken_ns = s->nested = 0;
	memset(s->missed, 0, sizeof(s->missed));
}

void ol_snapshot_free(struct ol_snapshot *s)
{
	free(s->series);
	memset(s, 0, sizeof(*s));
}

struct ol_value *ol_snapshot_slot(struct ol_snapshot *s, struct ol_key k)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->series[i].key.dev == k.dev && s->series[i].key.op == k.op)
			return &s->series[i].v;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct ol_series *p = realloc(s->series, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->series = p;
		s->cap = cap;
	}
	memset(&s->series[s->n], 0, sizeof(s->series[s->n]));
	s->series[s->n].key = k;
	return &s->series[s->n++].v;
}

/* struct ol_value is all u64 words: added and subtracted as an array */
#define OL_WORDS (sizeof(struct ol_value) / sizeof(__u64))

void ol_value_add(struct ol_value *dst, const struct ol_value *src)
{
	__u64 *d = (__u64 *)dst;
	const __u64 *s = (const __u64 *)src;

	for (size_t i = 0; i < OL_WORDS; i++)
		d[i] += s[i];
}

static void value_sub(struct ol_value *dst, const struct ol_value *src)
{
	__u64 *d = (__u64 *)dst;
	const __u64 *s = (const __u64 *)src;

	for (size_t i = 0; i < OL_WORDS; i++)
		d[i] -= s[i];
}

int ol_snapshot_delta(struct ol_snapshot *out, const struct ol_snapshot *cur,
		      const struct ol_snapshot *prev)
{
	ol_snapshot_clear(out);
	out->taken_ns = cur->taken_ns;
	for (size_t i = 0; i < cur->n; i++) {
		struct ol_value *v = ol_snapshot_slot(out, cur->series[i].key);

		if (!v)
			return -1;
		*v = cur->series[i].v;
		for (size_t j = 0; j < prev->n; j++)
			if (prev->series[j].key.dev == cur->series[i].key.dev &&
			    prev->series[j].key.op == cur->series[i].key.op)
				value_sub(v, &prev->series[j].v);
	}
	for (int m = 0; m < OL_NMISS; m++)
		out->missed[m] = cur->missed[m] - prev->missed[m];
	out->nested = cur->nested - prev->nested;
	return 0;
}

static int cmp_series(const void *a, const void *b)
{
	const struct ol_key *x = &((const struct ol_series *)a)->key;
	const struct ol_key *y = &((const struct ol_series *)b)->key;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->op > y->op) - (x->op < y->op);
}

int ol_snapshot_group(struct ol_snapshot *out, const struct ol_snapshot *in, enum ol_group g)
{
	ol_snapshot_clear(out);
	out->taken_ns = in->taken_ns;
	memcpy(out->missed, in->missed, sizeof(out->missed));
	out->nested = in->nested;
	for (size_t i = 0; i < in->n; i++) {
		struct ol_key k = in->series[i].key;
		struct ol_value *v;

		if (g == OL_GROUP_OP || g == OL_GROUP_ALL)
			k.dev = OL_DEV_ALL;
		if (g == OL_GROUP_DEV || g == OL_GROUP_ALL)
			k.op = OL_OP_ALL;
		v = ol_snapshot_slot(out, k);
		if (!v)
			return -1;
		ol_value_add(v, &in->series[i].v);
	}
	if (out->n > 1)
		qsort(out->series, out->n, sizeof(*out->series), cmp_series);
	return 0;
}

const char *ol_group_name(enum ol_group g)
{
	return g < OL_NGROUPS ? group_names[g] : "?";
}

int ol_group_parse(const char *s, enum ol_group *g)
{
	if (!strcmp(s, "op,dev"))
		s = "dev,op";
	for (int i = 0; i < OL_NGROUPS; i++)
		if (!strcmp(s, group_names[i])) {
			*g = i;
			return 0;
		}
	return -1;
}

uint64_t ol_hist_count(const struct ol_hist *h)
{
	uint64_t n = 0;

	for (int b = 0; b < OL_NBUCKETS; b++)
		n += h->buckets[b];
	return n;
}

uint64_t ol_hist_quantile(const struct ol_hist *h, double q)
{
	uint64_t n = ol_hist_count(h), seen = 0;
	double rank;

	if (!n)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	rank = q * (double)n;
	if (rank < 1)
		rank = 1; /* the smallest value's bucket, not below it */
	for (int b = 0; b < OL_NBUCKETS; b++) {
		uint64_t lo, hi;

		if (!h->buckets[b] || (double)(seen + h->buckets[b]) < rank) {
			seen += h->buckets[b];
			continue;
		}
		lo = b ? ol_bucket_le(b - 1) : 0;
		if (b == OL_NBUCKETS - 1)
			return lo;
		hi = ol_bucket_le(b);
		return lo + (uint64_t)((double)(hi - lo) * (rank - (double)seen) /
				       (double)h->buckets[b]);
	}
	return ol_bucket_le(OL_NBUCKETS - 2); /* not reached: rank <= n */
}

const char *ol_op_name(uint32_t op)
{
	if (op == OL_OP_ALL)
		return "all";
	return op < OL_NOPS ? op_names[op] : "?";
}

void ol_dev_name(uint32_t dev, char *buf, size_t n)
{
	char path[64], line[256];
	FILE *f;

	if (dev == OL_DEV_ALL) {
		snprintf(buf, n, "all");
		return;
	}
	snprintf(buf, n, "%u:%u", IT_DEV_MAJOR(dev), IT_DEV_MINOR(dev));
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", IT_DEV_MAJOR(dev),
		 IT_DEV_MINOR(dev));
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, n, "%s", line + 8);
			break;
		}
	fclose(f);
}
