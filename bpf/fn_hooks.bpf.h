/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A kernel function hook in both kinds the hook engine chooses from
 * (src/hooks.h): PROG_fentry and PROG_kprobe, each calling HANDLER with
 * the function's first argument; and the socket send primitives (one per
 * kernel generation: kernel_sendpage up to 6.4, sock_sendmsg) as the
 * programs sendpage_* and sendmsg_*. Included by BPF code only.
 */
#ifndef IOTRAIL_FN_HOOKS_BPF_H
#define IOTRAIL_FN_HOOKS_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define IT_FN_HOOK(fn, prog, type, handler)                 \
	SEC("fentry/" #fn)                                  \
	int BPF_PROG(prog##_fentry, type arg)               \
	{                                                   \
		return handler(arg);                        \
	}                                                   \
	SEC("kprobe/" #fn)                                  \
	int BPF_KPROBE(prog##_kprobe, type arg)             \
	{                                                   \
		return handler(arg);                        \
	}

#define IT_SOCK_SEND_HOOKS(handler)                         \
	SEC("fentry/kernel_sendpage")                       \
	int BPF_PROG(sendpage_fentry)                       \
	{                                                   \
		return handler();                           \
	}                                                   \
	SEC("kprobe/kernel_sendpage")                       \
	int BPF_KPROBE(sendpage_kprobe)                     \
	{                                                   \
		return handler();                           \
	}                                                   \
	SEC("fentry/sock_sendmsg")                          \
	int BPF_PROG(sendmsg_fentry)                        \
	{                                                   \
		return handler();                           \
	}                                                   \
	SEC("kprobe/sock_sendmsg")                          \
	int BPF_KPROBE(sendmsg_kprobe)                      \
	{                                                   \
		return handler();                           \
	}

#endif
