// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe target layer on the recording side (nvmet.bpf.c): every command
 * the target core parses and completes, on any fabric transport. Part of
 * the block layer: its events go into the block layer's ring (one stream:
 * on a loopback setup the initiator's and the target's events of one I/O
 * stay in causal order), so it records whenever the block layer does and
 * the nvmet module is loaded. Where the kernel takes fentry or kprobes, it
 * also sees the backend start each command (optional hooks). The initiator's controllers (their cntlid,
 * which the target sees) are the NVMe layer's side table.
 */
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "layer.h"
#include "nvmet.skel.h"

IT_SKEL_OPS(nvmet);

#define NVMET_MODULE "nvmet"

#define NVMET_HOOK(tp) { #tp, "nvmet", NVMET_MODULE, false, \
	{ [IT_HOOK_TP_BTF] = #tp "_btf", [IT_HOOK_RAW_TP] = #tp } }
/* a backend's execute function: out of line (called through req->execute) */
#define EXECUTE_HOOK(fn) { #fn, NULL, NVMET_MODULE, true, \
	{ [IT_HOOK_FENTRY] = #fn "_fentry", [IT_HOOK_KPROBE] = #fn "_kprobe" } }
static const struct it_hook_def nvmet_hooks[] = {
	NVMET_HOOK(nvmet_req_init),
	NVMET_HOOK(nvmet_req_complete),
	EXECUTE_HOOK(nvmet_bdev_execute_rw),
	EXECUTE_HOOK(nvmet_bdev_execute_flush),
	EXECUTE_HOOK(nvmet_file_execute_rw),
	EXECUTE_HOOK(nvmet_file_execute_flush),
};
#define NHOOKS (sizeof(nvmet_hooks) / sizeof(nvmet_hooks[0]))

static struct nvmet_bpf *skel;

static int configure(void *obj, enum it_hook_kind *kinds, void *ctx)
{
	struct nvmet_bpf *k = obj;
	const struct it_session *s = ctx;

	(void)kinds;
	k->rodata->wakeup_bytes = s->ev.wakeup_bytes;
	/* the block layer's ring, drop counter, -p table and event buffers
	 * (taken by compare-and-exchange here: events.bpf.h) */
	return it_session_share_events(s, k->maps.events, k->maps.drops, k->maps.tracked) ?:
	       it_session_share_bufs(s, k->maps.ev_bufs, &k->rodata->ev_buf_mask,
				     &k->rodata->ev_buf_wakeup);
}

static int available(char *why, size_t len)
{
	if (it_module_loaded(NVMET_MODULE))
		return 1;
	snprintf(why, len, "module %s is not loaded (no NVMe target on this machine; modprobe %s)",
		 NVMET_MODULE, NVMET_MODULE);
	return 0;
}

static int start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	struct it_hook_load l = {
		.layer = "nvmet", .hooks = nvmet_hooks, .nhooks = NHOOKS, .skel = &nvmet_skel_ops,
		.configure = configure, .ctx = s, .force = s->force_hook, .verbose = s->verbose,
	};

	skel = it_session_start_in_events(s, &l, hooks, hlen, why, wlen);
	return skel != NULL;
}

static int attach(struct it_session *s, char *why, size_t wlen)
{
	(void)s;
	return it_session_attach_skel(&nvmet_skel_ops, skel, "nvmet", why, wlen);
}

static void detach(void)
{
	nvmet_bpf__detach(skel);
}

static void nvmet_free(void)
{
	nvmet_bpf__destroy(skel);
	skel = NULL;
}

extern const struct it_layer_rec it_nvmet_records; /* records.c */

const struct it_layer_ops it_nvmet_layer = {
	.name = "nvmet",
	.id = IT_LAYER_NVMET,
	.records = &it_nvmet_records,
	.what = "NVMe target commands (any fabric): parsed, backend started, completed; "
		"every connection, not filtered by --dev or -p",
	.hooks = nvmet_hooks,
	.nhooks = NHOOKS,
	.part_of = "block",
	.available = available,
	.start = start,
	.attach = attach,
	.detach = detach,
	.free = nvmet_free,
};
