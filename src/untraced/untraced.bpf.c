// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail probe --untraced`: counts, per thread, the context switches into
 * it and away from it. A switch away from a thread runs in that thread's
 * own context, a switch into it in the previous thread's: a thread switched
 * in twice and never seen switching away is one this kernel runs no probe
 * for while it is current (it cannot run twice without leaving the CPU in
 * between). Every program misses what happens then, in a softirq over that
 * thread too: the block completions of a batch among it (README, Known
 * problems). The thread id is the kernel's (global) pid.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "untraced.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IT_UNTRACED_MAX_TASKS);
	__type(key, __u32);
	__type(value, struct it_switch_counts);
} switches SEC(".maps");

/* switches not counted: the map was full (user space says the counts are
 * incomplete); one word, atomic adds */
__u64 not_counted = 0;

static __always_inline void count(__u32 tid, bool in)
{
	struct it_switch_counts zero = {}, *c = bpf_map_lookup_elem(&switches, &tid);

	if (!c) {
		bpf_map_update_elem(&switches, &tid, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&switches, &tid);
		if (!c) {
			__sync_fetch_and_add(&not_counted, 1);
			return;
		}
	}
	if (in)
		__sync_fetch_and_add(&c->in, 1);
	else
		__sync_fetch_and_add(&c->away, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	count(prev->pid, false);
	count(next->pid, true);
	return 0;
}
