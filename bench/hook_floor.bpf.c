// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The floor under iotrail's block probes, for bench/overhead.sh: the same
 * three tracepoints an unscheduled blk-mq read passes (Q, D, C), with
 *   mode 0: programs that return at once (the cost of the hooks alone);
 *   mode 2: (for bench/syscall_cost) an empty program on sys_enter and on
 *           sys_exit instead, the hooks the syscall layer uses: the floor
 *           under its cost per call;
 *   mode 1: programs that put one 64-byte timestamped record in a shared
 *           ring buffer (the hooks plus the cheapest possible full record),
 *           submitted the way iotrail's probes submit (events.bpf.h:
 *           no wakeup until a quarter of the ring waits) into a ring of
 *           iotrail's default size here, and drained by
 *           bench/hook_floor.c the way iotrail's consumer drains its ring.
 * What iotrail record spends beyond mode 1 is its own doing; what mode 1
 * spends is the price of any per-I/O record on this kernel and CPU.
 * Records the ring could not take are counted (not_written), so a floor
 * that stopped writing shows.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

const volatile int mode = 0; /* the only read-only datum: hook_floor.c sets it whole */
/* iotrail's default ring on 2 CPUs (this machine), woken as iotrail's
 * block ring is, a quarter full: the floor writes under iotrail's
 * conditions (iotrail's own records cost more with its old 64 MiB ring in
 * one measurement; README, Performance). */
#define RING_BYTES (4 << 20)
#define WAKEUP_BYTES (RING_BYTES / 4)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} ring SEC(".maps");

__u64 not_written; /* reservations the full ring refused */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum { HIT_Q, HIT_D, HIT_C };

struct rec {
	__u64 ts, id;
	__u32 hook, pad;
	__u64 w[5];
};

static __always_inline int hit(__u64 id, __u32 hook)
{
	struct rec *r;

	if (!mode)
		return 0;
	r = bpf_ringbuf_reserve(&ring, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&not_written, 1);
		return 0;
	}
	r->ts = bpf_ktime_get_ns();
	r->id = id;
	r->hook = hook;
	r->pad = 0;
	for (int i = 0; i < 5; i++)
		r->w[i] = 0;
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA) > WAKEUP_BYTES
				      ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/block_bio_queue")
int floor_q(u64 *ctx) { return hit(ctx[0], HIT_Q); }

SEC("tp_btf/block_rq_issue")
int floor_d(u64 *ctx) { return hit(ctx[0], HIT_D); }

SEC("tp_btf/block_rq_complete")
int floor_c(u64 *ctx) { return hit(ctx[0], HIT_C); }

/* mode 2 only (hook_floor.c loads these or the three above) */
SEC("tp_btf/sys_enter")
int floor_sys_enter(u64 *ctx) { return 0; }

SEC("tp_btf/sys_exit")
int floor_sys_exit(u64 *ctx) { return 0; }
