// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The floor under iotrail's block probes, for bench/overhead.sh: the same
 * three tracepoints an unscheduled blk-mq read passes (Q, D, C), with
 *   mode 0: programs that return at once (the cost of the hooks alone);
 *   mode 1: programs that put one 64-byte timestamped record in a shared
 *           ring buffer (the hooks plus the cheapest possible full record).
 * What iotrail record spends beyond mode 1 is its own doing; what mode 1
 * spends is the price of any per-I/O record on this kernel and CPU.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

const volatile int mode = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);
} ring SEC(".maps");

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct rec {
	__u64 ts, id, w[6];
};

static __always_inline int hit(__u64 id)
{
	struct rec *r;

	if (!mode)
		return 0;
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts = bpf_ktime_get_ns();
	r->id = id;
	for (int i = 0; i < 6; i++)
		r->w[i] = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/block_bio_queue")
int floor_q(u64 *ctx) { return hit(ctx[0]); }

SEC("tp_btf/block_rq_issue")
int floor_d(u64 *ctx) { return hit(ctx[0]); }

SEC("tp_btf/block_rq_complete")
int floor_c(u64 *ctx) { return hit(ctx[0]); }
