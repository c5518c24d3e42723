/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The online mode's in-kernel histograms, as the BPF program (online.bpf.c)
 * writes them and user space reads them: shared by both, so the bucketing
 * is one function, unit-tested in user space (tests/unit/test_online.c).
 *
 * Log-linear buckets (fio's idea): 4 linear sub-buckets per power of two
 * of nanoseconds from 1.024 us to 34.4 s, one bucket below (<= 1.024 us)
 * and one above (overflow). A bucket holds the values in (lo, hi], so its
 * upper bound is exactly Prometheus' inclusive `le`, and the bounds within
 * 25% of each other keep a percentile within 25%.
 *
 * Every word of a value only grows (counters, never reset): user space reads
 * them while collection goes on and subtracts the previous reading
 * (online.c explains why each I/O then lands in exactly one interval).
 */
#ifndef IOTRAIL_ONLINE_LAYOUT_H
#define IOTRAIL_ONLINE_LAYOUT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define OL_SUB_BITS   2  /* 4 sub-buckets per power of two */
#define OL_MIN_SHIFT  10 /* bucket 0: up to 2^10 ns */
#define OL_OCTAVES    25 /* 2^10 .. 2^35 ns */
#define OL_NBUCKETS   (2 + (OL_OCTAVES << OL_SUB_BITS)) /* + below and overflow */
#define OL_MAX_DEVS   16

/* the block-layer stages measured: queued (Q, the request's start) to issued
 * (D), issued to completed (C), and the whole */
enum ol_stage { OL_Q2D, OL_D2C, OL_Q2C, OL_NSTAGES };

enum ol_op { OL_OP_READ, OL_OP_WRITE, OL_OP_FLUSH, OL_OP_DISCARD, OL_OP_OTHER, OL_NOPS };

/* Completions that could not be measured whole; counted per CPU. */
enum ol_miss {
	OL_MISS_NO_ISSUE, /* completed, no issue time (D) for it: no D2C, Q2D */
	OL_MISS_NO_QUEUE, /* no start time (Q) in the request: no Q2D, Q2C */
	OL_MISS_NO_SLOT,  /* the histogram map was full: the I/O not counted */
	OL_NMISS,
};

struct ol_key {
	__u32 dev; /* major << 20 | minor, as the kernel's dev_t */
	__u32 op;  /* enum ol_op */
};

struct ol_hist {
	__u64 sum_ns;
	__u64 buckets[OL_NBUCKETS];
};

struct ol_value {
	__u64 ios;   /* requests completed (whole, after any partial completion) */
	__u64 bytes; /* bytes completed */
	struct ol_hist stage[OL_NSTAGES];
};

/* floor(log2(v)) for v > 0, without a loop (the verifier, and no clz in BPF) */
static __always_inline __u32 ol_log2(__u64 v)
{
	__u32 r, shift;

	r = (v > 0xffffffffull) << 5;
	v >>= r;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (__u32)(v >> 1);
	return r;
}

/* The bucket of a duration: (lo, hi] intervals, so ns - 1 is binned as
 * [lo, hi) would bin it. */
static __always_inline __u32 ol_bucket(__u64 ns)
{
	__u64 v = ns ? ns - 1 : 0;
	__u32 msb;

	if (v < (1ull << OL_MIN_SHIFT))
		return 0;
	msb = ol_log2(v);
	if (msb >= OL_MIN_SHIFT + OL_OCTAVES)
		return OL_NBUCKETS - 1;
	return 1 + ((msb - OL_MIN_SHIFT) << OL_SUB_BITS) +
	       (__u32)((v >> (msb - OL_SUB_BITS)) & ((1u << OL_SUB_BITS) - 1));
}

/* A bucket's inclusive upper bound in ns (the overflow bucket's is infinite:
 * ~0). */
static __always_inline __u64 ol_bucket_le(__u32 b)
{
	__u32 msb, sub;

	if (b == 0)
		return 1ull << OL_MIN_SHIFT;
	if (b >= OL_NBUCKETS - 1)
		return ~0ull;
	msb = OL_MIN_SHIFT + ((b - 1) >> OL_SUB_BITS);
	sub = (b - 1) & ((1u << OL_SUB_BITS) - 1);
	return (__u64)((1u << OL_SUB_BITS) + sub + 1) << (msb - OL_SUB_BITS);
}

#endif
