// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The online mode's probes: per-CPU log-linear histograms of Q2D, D2C and
 * Q2C per device and op (layout.h), and no per-I/O record to user space.
 * Apart from the recording layers' programs: it shares their tracepoints,
 * not their ring buffer or maps.
 *
 *   block_bio_queue   (Q) the time a bio was queued, keyed by the bio
 *   block_rq_issue    (D) the time a request was issued, in its first bio's
 *                         entry (or the request's own, for a request with no
 *                         bio, or whose Q was not seen)
 *   block_rq_complete (C) the stages into the histograms; the entry goes
 *
 * A request's Q is its first bio's: the others merged into it later. The
 * start map is an LRU: entries of bios merged into a request (never
 * looked up again) age out instead of filling it.
 *
 * Only the completion program writes the histograms and the miss counters,
 * each CPU its own copy, with plain adds: the kernel runs no program
 * nested in itself on one CPU (an interrupting completion is skipped and
 * counted in the program's recursion_misses, which user space reports), so
 * no add is lost, and each 8-byte word only grows.
 *
 * Two variants of each program as in the block layer: tp_btf, and raw_tp
 * (probe reads) where tp_btf does not load; user space picks with autoload.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "core_fixes.bpf.h"
#include "layout.h"

const volatile bool tp_has_queue_arg = false; /* kernel < 5.11 argument layout */
const volatile __u32 rqf_flush_seq = 1u << 4;
const volatile __u32 filter_ndevs = 0; /* 0: every device */
const volatile __u32 filter_devs[OL_MAX_DEVS] = {};

struct start {
	__u64 queued_ns; /* 0: not seen */
	__u64 issued_ns; /* 0: not seen */
};

/* per-CPU LRU lists: an update takes no lock shared by all CPUs (an entry
 * is still found from any CPU; only eviction is per CPU) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct ol_key);
	__type(value, struct ol_value);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OL_NMISS);
	__type(key, __u32);
	__type(value, __u64);
} misses SEC(".maps");

/* a new key's first value (never written: the stack is too small for it) */
struct ol_value zero_value;

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define KREAD(btf, ptr, field) ((btf) ? (ptr)->field : BPF_CORE_READ(ptr, field))

static __always_inline bool dev_wanted(__u32 dev)
{
	if (!filter_ndevs)
		return true;
	for (__u32 i = 0; i < OL_MAX_DEVS; i++) {
		if (i >= filter_ndevs)
			break;
		if (filter_devs[i] == dev)
			return true;
	}
	return false;
}

static __always_inline __u32 disk_dev(struct gendisk *disk, bool btf)
{
	if (!disk)
		return 0;
	return (KREAD(btf, disk, major) << 20) | KREAD(btf, disk, first_minor);
}

static __always_inline __u32 bio_dev(struct bio *bio, bool btf)
{
	struct bio___old *old = (void *)bio;
	struct block_device *bdev;

	if (bpf_core_field_exists(old->bi_disk))
		return disk_dev(KREAD(btf, old, bi_disk), btf);
	bdev = KREAD(btf, bio, bi_bdev);
	return bdev ? disk_dev(KREAD(btf, bdev, bd_disk), btf) : 0;
}

static __always_inline __u32 rq_dev(struct request *rq, bool btf)
{
	struct request___old *old = (void *)rq;
	struct request_queue___new *q;

	if (bpf_core_field_exists(old->rq_disk))
		return disk_dev(KREAD(btf, old, rq_disk), btf);
	q = (void *)KREAD(btf, rq, q);
	return q ? disk_dev(KREAD(btf, q, disk), btf) : 0;
}

static __always_inline __u32 ol_op(__u32 opf)
{
	__u32 op = opf & IT_REQ_OP_MASK;

	if (IT_OP_IS(op, READ))
		return OL_OP_READ;
	if (IT_OP_IS(op, WRITE))
		return OL_OP_WRITE;
	if (IT_OP_IS(op, FLUSH))
		return OL_OP_FLUSH;
	if (IT_OP_IS(op, DISCARD))
		return OL_OP_DISCARD;
	return OL_OP_OTHER;
}

static __always_inline void count_miss(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&misses, &why);

	if (n)
		*n += 1;
}

static __always_inline void hist_add(struct ol_hist *h, __u64 ns)
{
	/* 64 bits: the bound checked is the register indexed (a 32-bit
	 * index was checked in one copy and used zero-extended in another) */
	__u64 b = ol_bucket(ns);

	barrier_var(b);
	h->sum_ns += ns;
	if (b < OL_NBUCKETS)
		h->buckets[b] += 1;
}

static __always_inline int on_queue(struct bio *bio, bool btf)
{
	struct start s = { .queued_ns = bpf_ktime_get_ns() };
	__u64 key = (__u64)bio;

	/* without --dev the verifier drops the device's loads */
	if (filter_ndevs && !dev_wanted(bio_dev(bio, btf)))
		return 0;
	bpf_map_update_elem(&starts, &key, &s, BPF_ANY);
	return 0;
}

static __always_inline int on_issue(struct request *rq, bool btf)
{
	__u64 key = (__u64)KREAD(btf, rq, bio), now;
	struct start *s, fresh = {};

	if (filter_ndevs && !dev_wanted(rq_dev(rq, btf)))
		return 0;
	now = bpf_ktime_get_ns();
	s = key ? bpf_map_lookup_elem(&starts, &key) : NULL;
	if (s) {
		s->issued_ns = now;
		return 0;
	}
	/* no bio (a flush), or its Q came before we attached: the request
	 * itself is the key */
	key = (__u64)rq;
	fresh.issued_ns = now;
	bpf_map_update_elem(&starts, &key, &fresh, BPF_ANY);
	return 0;
}

static __always_inline struct ol_value *value_of(struct ol_key *k)
{
	struct ol_value *v = bpf_map_lookup_elem(&hists, k);

	if (v)
		return v;
	bpf_map_update_elem(&hists, k, &zero_value, BPF_NOEXIST);
	return bpf_map_lookup_elem(&hists, k);
}

static __always_inline int on_complete(struct request *rq, __u32 nr_bytes, bool btf)
{
	struct ol_key k = { .dev = rq_dev(rq, btf) };
	__u64 bio_key, rq_key = (__u64)rq, *key, now;
	struct ol_value *v;
	struct start *s;
	__u32 len;

	if (!dev_wanted(k.dev))
		return 0;
	now = bpf_ktime_get_ns();
	k.op = ol_op(KREAD(btf, rq, cmd_flags));
	v = value_of(&k);
	if (!v) {
		count_miss(OL_MISS_NO_SLOT);
		return 0;
	}
	v->bytes += nr_bytes;
	len = KREAD(btf, rq, __data_len);
	bio_key = (__u64)KREAD(btf, rq, bio);
	key = bio_key ? &bio_key : &rq_key;
	s = bpf_map_lookup_elem(&starts, key);
	if (!s && bio_key) {
		key = &rq_key;
		s = bpf_map_lookup_elem(&starts, key);
	}
	/* A partial completion (the tracepoint fires before the bytes are
	 * taken off): the request completes again for the rest, and its
	 * first bio goes now, so its times move to the request's key. The
	 * data part of a flush sequence also completes again, at its end. */
	if (nr_bytes < len || (KREAD(btf, rq, rq_flags) & rqf_flush_seq)) {
		if (s && key == &bio_key) {
			struct start keep = *s;

			bpf_map_update_elem(&starts, &rq_key, &keep, BPF_ANY);
			bpf_map_delete_elem(&starts, &bio_key);
		}
		return 0;
	}
	v->ios += 1;
	if (!s) {
		count_miss(OL_MISS_NO_ISSUE);
		count_miss(OL_MISS_NO_QUEUE);
		return 0;
	}
	if (s->issued_ns)
		hist_add(&v->stage[OL_D2C], now - s->issued_ns);
	else
		count_miss(OL_MISS_NO_ISSUE);
	if (s->queued_ns) {
		hist_add(&v->stage[OL_Q2C], now - s->queued_ns);
		if (s->issued_ns)
			hist_add(&v->stage[OL_Q2D], s->issued_ns - s->queued_ns);
	} else {
		count_miss(OL_MISS_NO_QUEUE);
	}
	bpf_map_delete_elem(&starts, key);
	return 0;
}

/* Before v5.11 the request tracepoints had a leading request_queue (see
 * block.bpf.c); CTX_AT keeps the argument index an immediate. */
#define CTX_AT(ctx, i)                                                             \
	({                                                                         \
		__u64 __v;                                                         \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                              \
			     : "=r"(__v) : "r"(ctx), "i"((i) * 8));                \
		__v;                                                               \
	})
#define ARG0(ctx) (tp_has_queue_arg ? CTX_AT(ctx, 1) : CTX_AT(ctx, 0))

SEC("tp_btf/block_bio_queue")
int online_queue_btf(u64 *ctx)
{
	return on_queue((struct bio *)ARG0(ctx), true);
}

SEC("raw_tp/block_bio_queue")
int online_queue(u64 *ctx)
{
	return on_queue((struct bio *)ARG0(ctx), false);
}

SEC("tp_btf/block_rq_issue")
int online_issue_btf(u64 *ctx)
{
	return on_issue((struct request *)ARG0(ctx), true);
}

SEC("raw_tp/block_rq_issue")
int online_issue(u64 *ctx)
{
	return on_issue((struct request *)ARG0(ctx), false);
}

/* (rq, error, nr_bytes) on every kernel with BTF */
SEC("tp_btf/block_rq_complete")
int online_complete_btf(u64 *ctx)
{
	return on_complete((struct request *)ctx[0], ctx[2], true);
}

SEC("raw_tp/block_rq_complete")
int online_complete(u64 *ctx)
{
	return on_complete((struct request *)ctx[0], ctx[2], false);
}
