/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which hook each probe point can use on the running kernel, found by
 * trying for real (loading and attaching a two-instruction program), never
 * by kernel version. `iotrail probe` prints these decisions; `iotrail
 * record` uses the same ones to pick its program variants.
 */
#ifndef IOTRAIL_HOOKS_H
#define IOTRAIL_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

enum it_hook_kind {
	IT_HOOK_NONE = 0,
	IT_HOOK_TP_BTF,     /* BTF-typed raw tracepoint (SEC("tp_btf/...")) */
	IT_HOOK_RAW_TP,     /* raw tracepoint (SEC("raw_tp/...")) */
	IT_HOOK_TRACEPOINT, /* classic tracefs tracepoint (SEC("tracepoint/...")) */
	IT_HOOK_FENTRY,     /* BPF trampoline on a kernel function */
	IT_HOOK_KPROBE,
};

const char *it_hook_kind_name(enum it_hook_kind kind);
/* "tp_btf" -> IT_HOOK_TP_BTF ...; IT_HOOK_NONE when unknown */
enum it_hook_kind it_hook_kind_parse(const char *name);

/* What one probe point can use. best is the preferred available kind;
 * when it is IT_HOOK_NONE, why says why and fix what would help. */
struct it_hook_status {
	bool tp_btf, raw_tp, tracepoint;   /* tracepoint hooks */
	bool listed, fentry, kprobe;       /* function hooks (listed: ftrace can see it) */
	enum it_hook_kind best;
	char why[160];
	char fix[96];
};

/* A tracepoint ("block", "block_rq_issue"; module is NULL for vmlinux, or
 * the module that defines it, e.g. "nvme_core"). */
void it_hook_probe_tracepoint(const char *category, const char *name, const char *module,
			      struct it_hook_status *st);
/* A kernel function (module NULL for vmlinux). */
void it_hook_probe_function(const char *func, const char *module, struct it_hook_status *st);

/* Single checks, each 0 or -errno (reason in why when given). */
int it_probe_tp_btf(const char *tp, const char *module, char *why, size_t len);
int it_probe_raw_tp(const char *tp, char *why, size_t len);
bool it_tracepoint_in_tracefs(const char *category, const char *name);
/* May this process load BPF programs at all? 0, or -errno with "why; what
 * to do" in why. */
int it_probe_bpf_allowed(char *why, size_t len);
bool it_module_loaded(const char *module);
/* Can this kernel run fentry / kprobe programs at all? (cached) */
int it_fentry_supported(char *why, size_t len);
int it_kprobe_supported(char *why, size_t len);

/* The v5.11 block tracepoint change (commit a54895fa057c): 1 when
 * block_rq_issue still takes (q, rq), 0 when it takes (rq), -errno when the
 * kernel BTF cannot tell. */
int it_block_tp_has_queue_arg(void);

/* The directory tracefs is mounted on (mounting it if needed), or NULL. */
const char *it_tracefs_dir(void);

#endif
