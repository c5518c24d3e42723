// SPDX-License-Identifier: GPL-2.0
/*
 * Counts hits of one fentry, one kprobe and one tracepoint whose targets the
 * loader (attach_check.c) chooses at run time: the VM tests' proof that the
 * guest kernel takes each kind of probe iotrail relies on.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void count(__u32 kind)
{
	__u64 *v = bpf_map_lookup_elem(&hits, &kind);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("fentry")
int on_fentry(void *ctx)
{
	count(0);
	return 0;
}

SEC("kprobe")
int on_kprobe(void *ctx)
{
	count(1);
	return 0;
}

SEC("tracepoint")
int on_tracepoint(void *ctx)
{
	count(2);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
