// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe driver layer on the recording side (nvme.bpf.c): every command
 * the driver sets up and completes, and where the kernel has it, when the
 * driver handled its completion queue entry. Part of the block layer: its
 * events go into the block layer's ring (one stream, causal order per
 * request), so it records whenever the block layer does and nvme_core is
 * loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "layer.h"
#include "nvme.skel.h"

IT_SKEL_OPS(nvme);

#define NVME_MODULE "nvme_core"
#define MAX_DEVS 16

#define NVME_HOOK(tp, opt) { #tp, "nvme", NVME_MODULE, opt, \
	{ [IT_HOOK_TP_BTF] = #tp "_btf", [IT_HOOK_RAW_TP] = #tp } }
static const struct it_hook_def nvme_hooks[] = {
	NVME_HOOK(nvme_setup_cmd, false),
	NVME_HOOK(nvme_complete_rq, false),
	/* PCIe only, and not in every kernel: SQ backlog and CQE time */
	NVME_HOOK(nvme_sq, true),
};
#define NHOOKS (sizeof(nvme_hooks) / sizeof(nvme_hooks[0]))

static struct nvme_bpf *skel;

static int configure(void *obj, enum it_hook_kind *kinds, void *ctx)
{
	struct nvme_bpf *k = obj;
	const struct it_session *s = ctx;
	int err;

	(void)kinds;
	k->rodata->filter_ndevs = s->ndevs < MAX_DEVS ? s->ndevs : MAX_DEVS;
	for (size_t i = 0; i < k->rodata->filter_ndevs; i++)
		k->rodata->filter_devs[i] = s->devs[i];
	k->rodata->filter_tgid = s->pid;
	k->rodata->wakeup_bytes = s->ev.wakeup_bytes;
	/* the block layer's ring, drop counter and -p table */
	err = bpf_map__reuse_fd(k->maps.events, bpf_map__fd(s->ev.events));
	if (!err)
		err = bpf_map__reuse_fd(k->maps.drops, bpf_map__fd(s->ev.drops));
	if (!err)
		err = bpf_map__reuse_fd(k->maps.tracked, bpf_map__fd(s->ev.tracked));
	return err;
}

static int available(char *why, size_t len)
{
	if (it_module_loaded(NVME_MODULE))
		return 1;
	snprintf(why, len, "module %s is not loaded (no NVMe device; modprobe nvme)", NVME_MODULE);
	return 0;
}

static int start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	enum it_hook_kind kinds[NHOOKS];
	struct it_hook_load l = {
		.layer = "nvme", .hooks = nvme_hooks, .nhooks = NHOOKS, .skel = &nvme_skel_ops,
		.configure = configure, .ctx = s, .force = s->force_hook, .verbose = s->verbose,
	};
	int err;

	if (!s->ev.events) {
		snprintf(why, wlen, "the block layer is not recorded");
		return 0;
	}
	skel = it_hooks_load(&l, kinds, hooks, hlen, why, wlen, &err);
	if (!skel)
		return 0;
	err = nvme_bpf__attach(skel);
	if (err) {
		snprintf(why, wlen, "attaching the NVMe probes failed: %s", strerror(-err));
		nvme_bpf__destroy(skel);
		skel = NULL;
		return 0;
	}
	return 1;
}

static void detach(void)
{
	nvme_bpf__detach(skel);
}

static void nvme_free(void)
{
	nvme_bpf__destroy(skel);
	skel = NULL;
}

extern const struct it_layer_rec it_nvme_records; /* records.c */

const struct it_layer_ops it_nvme_layer = {
	.name = "nvme",
	.id = IT_LAYER_NVME,
	.records = &it_nvme_records,
	.what = "NVMe commands of the driver: setup, completion queue entry, completion",
	.hooks = nvme_hooks,
	.nhooks = NHOOKS,
	.part_of = "block",
	.available = available,
	.start = start,
	.detach = detach,
	.free = nvme_free,
};
