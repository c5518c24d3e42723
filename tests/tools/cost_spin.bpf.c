// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * An operator whose cost is known, for `iotrail cost`'s ground truth
 * (bench/cost_truth.sh): at every request issued to its disks it spins
 * spin_ns + spin_ns_per_kib × KiB of the request on the CPU that issues
 * it. The kernel's own accounting of this program (bpf_stats: run_time_ns
 * over run_cnt) says what it really cost; cost_spin.c reads it.
 * block_rq_issue(rq) is the host kernel's (6.x) form; this tool is not
 * meant for kernels that still pass the queue first.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define MAX_DISKS 16
const volatile __u32 disks[MAX_DISKS]; /* major << 20 | first minor */
const volatile int ndisks = 0;
const volatile __u64 spin_ns = 0;
const volatile __u64 spin_ns_per_kib = 0;

__u64 matched; /* requests of the disk that spun */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static long spin_until(__u64 index, void *ctx)
{
	return bpf_ktime_get_ns() >= *(__u64 *)ctx; /* 1 stops bpf_loop */
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(spin_issue, struct request *rq)
{
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
	__u32 id;
	__u64 end;
	int i;

	if (!disk)
		return 0;
	id = (__u32)BPF_CORE_READ(disk, major) << 20 | BPF_CORE_READ(disk, first_minor);
	for (i = 0; i < MAX_DISKS && i < ndisks; i++)
		if (disks[i] == id)
			break;
	if (i == MAX_DISKS || i == ndisks)
		return 0;
	end = bpf_ktime_get_ns() + spin_ns + spin_ns_per_kib * BPF_CORE_READ(rq, __data_len) / 1024;
	/* ~30 ns a step: the bound (8M steps) is far above any spin asked */
	bpf_loop(1 << 23, spin_until, &end, 0);
	__sync_fetch_and_add(&matched, 1);
	return 0;
}
