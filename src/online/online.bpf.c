// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The online mode's probes: per-CPU log-linear histograms of Q2D, D2C and
 * Q2C per device and op (layout.h), and no per-I/O record to user space.
 * Apart from the recording layers' programs: it shares their tracepoints,
 * not their ring buffer or maps.
 *
 * The times are the kernel's own, kept in the request for its I/O
 * statistics, read at completion: no map is written per I/O.
 *   Q  rq->start_time_ns: the request's allocation (its first bio's), set
 *      when the device keeps I/O statistics (queue/iostats, the default) or
 *      has a scheduler; what iostat's await starts from
 *   D  rq->io_start_time_ns: set at issue when the queue keeps block stats
 *      (QUEUE_FLAG_STATS: writeback throttling, the default on a
 *      multi-queue device, iolatency, iocost)
 *   C  now, at block_rq_complete
 * Both come from the block layer's clock (blk_time_get_ns: since 6.10 one
 * reading per plug, so the requests of one plugged batch share a Q and a D).
 * Where the queue keeps no block stats, block_rq_issue stores its own D in
 * the `issued` map, keyed by the request (the old way, at the old cost); a
 * request the kernel gave no start time is counted in no_queue.
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
/* RQF_STATS in rq_flags (the kernel set io_start_time_ns) and the bit of
 * QUEUE_FLAG_STATS in queue_flags, from this kernel's BTF by user space;
 * 0 and 64 when it cannot tell: then every issue is stored in `issued` */
const volatile __u32 rqf_stats = 0;
const volatile __u32 queue_stats_bit = 64;
const volatile __u32 filter_ndevs = 0; /* 0: every device */
const volatile __u32 filter_devs[OL_MAX_DEVS] = {};

/* D of the requests the kernel does not time (a queue without block stats,
 * a passthrough request); an LRU with per-CPU lists: an entry whose
 * completion was missed ages out, and an update takes no lock shared by
 * all CPUs (an entry is still found from any CPU) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} issued SEC(".maps");

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

/* true when the kernel sets rq's io_start_time_ns right after this
 * tracepoint: blk_mq_start_request's own test (block stats on the queue,
 * not a passthrough request) */
static __always_inline bool kernel_times_issue(struct request *rq, bool btf)
{
	struct request_queue *q;
	__u32 op;

	if (queue_stats_bit >= 64)
		return false;
	op = KREAD(btf, rq, cmd_flags) & IT_REQ_OP_MASK;
	if (IT_OP_IS(op, DRV_IN) || IT_OP_IS(op, DRV_OUT))
		return false;
	q = KREAD(btf, rq, q);
	return q && (KREAD(btf, q, queue_flags) >> queue_stats_bit) & 1;
}

static __always_inline int on_issue(struct request *rq, bool btf)
{
	__u64 key = (__u64)rq, now;

	if (kernel_times_issue(rq, btf))
		return 0;
	if (filter_ndevs && !dev_wanted(rq_dev(rq, btf)))
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&issued, &key, &now, BPF_ANY);
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
	__u64 rq_key = (__u64)rq, now, queued, started = 0, *stored = NULL;
	struct ol_value *v;
	__u32 flags;

	if (!dev_wanted(k.dev))
		return 0;
	k.op = ol_op(KREAD(btf, rq, cmd_flags));
	v = value_of(&k);
	if (!v) {
		count_miss(OL_MISS_NO_SLOT);
		return 0;
	}
	v->bytes += nr_bytes;
	/* A partial completion (the tracepoint fires before the bytes are
	 * taken off): the request completes again for the rest. The data
	 * part of a flush sequence also completes again, at its end. */
	flags = KREAD(btf, rq, rq_flags);
	if (nr_bytes < KREAD(btf, rq, __data_len) || (flags & rqf_flush_seq))
		return 0;
	now = bpf_ktime_get_ns();
	v->ios += 1;
	if (flags & rqf_stats)
		started = KREAD(btf, rq, io_start_time_ns);
	if (!started) {
		stored = bpf_map_lookup_elem(&issued, &rq_key);
		started = stored ? *stored : 0;
	}
	queued = KREAD(btf, rq, start_time_ns);
	/* the block layer's clock (ktime_get_ns) and ours (the fast
	 * variant of the same clock) may disagree by a hair: no stage ends
	 * before it starts */
	if (started > now)
		started = now;
	if (queued > now)
		queued = now;
	if (started)
		hist_add(&v->stage[OL_D2C], now - started);
	else
		count_miss(OL_MISS_NO_ISSUE);
	if (queued) {
		hist_add(&v->stage[OL_Q2C], now - queued);
		if (started)
			hist_add(&v->stage[OL_Q2D], started > queued ? started - queued : 0);
	} else {
		count_miss(OL_MISS_NO_QUEUE);
	}
	if (stored)
		bpf_map_delete_elem(&issued, &rq_key);
	return 0;
}

/* Before v5.11 the request tracepoints had a leading request_queue (see
 * block.bpf.c; CTX_AT: core_fixes.bpf.h). */
#define ARG0(ctx) (tp_has_queue_arg ? CTX_AT(ctx, 1) : CTX_AT(ctx, 0))

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
