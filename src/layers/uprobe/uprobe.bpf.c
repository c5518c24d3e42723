// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * User-space probes: one program for every USDT probe and one for every
 * function entry asked for; user space attaches each as often as there
 * are probes, with the probe's id as its cookie. Each hit becomes one
 * record in the layer's own ring, with the USDT arguments it has.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "uprobe.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);    /* resized by user space */
} hits SEC(".maps");

/* hits the ring had no room for, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline struct it_uprobe_hit *hit_begin(__u32 probe)
{
	struct it_uprobe_hit *h = bpf_ringbuf_reserve(&hits, sizeof(*h), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!h) {
		__u32 zero = 0;
		__u64 *d = bpf_map_lookup_elem(&drops, &zero);

		if (d)
			__sync_fetch_and_add(d, 1);
		return NULL;
	}
	h->ts_ns = bpf_ktime_get_ns();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->probe = probe;
	h->nargs = 0;
	for (int i = 0; i < IT_UPROBE_MAX_ARGS; i++)
		h->args[i] = 0;
	return h;
}

SEC("usdt")
int usdt_hit(struct pt_regs *ctx)
{
	struct it_uprobe_hit *h = hit_begin((__u32)bpf_usdt_cookie(ctx));
	int n;

	if (!h)
		return 0;
	n = bpf_usdt_arg_cnt(ctx);
	if (n > IT_UPROBE_MAX_ARGS)
		n = IT_UPROBE_MAX_ARGS;
	for (int i = 0; i < IT_UPROBE_MAX_ARGS; i++) {
		long v = 0;

		if (i >= n)
			break;
		if (bpf_usdt_arg(ctx, i, &v))
			break;
		h->args[i] = (__u64)v;
		h->nargs = i + 1;
	}
	bpf_ringbuf_submit(h, 0);
	return 0;
}

SEC("uprobe")
int uprobe_hit(struct pt_regs *ctx)
{
	struct it_uprobe_hit *h = hit_begin((__u32)bpf_get_attach_cookie(ctx));

	if (h)
		bpf_ringbuf_submit(h, 0);
	return 0;
}
