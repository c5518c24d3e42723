// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Loader of the NVMe driver probes (see nvme_layer.h, bpf/nvme.bpf.c).
 * Hook choice as for the block layer: tp_btf on the module's BTF when the
 * kernel takes it, else raw_tp; the choice is checked for real with
 * src/hooks.c before loading.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "nvme.skel.h"
#include "nvme_layer.h"

#define NVME_MODULE "nvme_core"
#define MAX_DEVS 16

static struct nvme_bpf *skel;

static enum it_hook_kind choose(const char *tp, enum it_hook_kind force, char *why, size_t len)
{
	if (force != IT_HOOK_RAW_TP && !it_probe_tp_btf(tp, NVME_MODULE, why, len))
		return IT_HOOK_TP_BTF;
	if (force != IT_HOOK_TP_BTF && !it_probe_raw_tp(tp, why, len))
		return IT_HOOK_RAW_TP;
	return IT_HOOK_NONE;
}

static int share_maps(const struct it_nvme_layer_opts *o)
{
	int err;

	err = bpf_map__reuse_fd(skel->maps.events, bpf_map__fd(o->events));
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.drops, bpf_map__fd(o->drops));
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.tracked, bpf_map__fd(o->tracked));
	return err;
}

/* kind: the setup/complete programs; sq: the optional nvme_sq ones
 * (IT_HOOK_NONE: left out). */
static int load(const struct it_nvme_layer_opts *o, enum it_hook_kind kind, enum it_hook_kind sq)
{
	int err;

	skel = nvme_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->filter_ndevs = o->ndevs < MAX_DEVS ? o->ndevs : MAX_DEVS;
	for (size_t i = 0; i < skel->rodata->filter_ndevs; i++)
		skel->rodata->filter_devs[i] = o->devs[i];
	skel->rodata->filter_tgid = o->pid;
	skel->rodata->wakeup_bytes = o->wakeup_bytes;
	bpf_program__set_autoload(skel->progs.nvme_setup_cmd_btf, kind == IT_HOOK_TP_BTF);
	bpf_program__set_autoload(skel->progs.nvme_complete_rq_btf, kind == IT_HOOK_TP_BTF);
	bpf_program__set_autoload(skel->progs.nvme_setup_cmd, kind == IT_HOOK_RAW_TP);
	bpf_program__set_autoload(skel->progs.nvme_complete_rq, kind == IT_HOOK_RAW_TP);
	bpf_program__set_autoload(skel->progs.nvme_sq_btf, sq == IT_HOOK_TP_BTF);
	bpf_program__set_autoload(skel->progs.nvme_sq, sq == IT_HOOK_RAW_TP);
	err = share_maps(o);
	if (!err)
		err = nvme_bpf__load(skel);
	if (!err)
		err = nvme_bpf__attach(skel);
	if (err) {
		nvme_bpf__destroy(skel);
		skel = NULL;
	}
	return err;
}

int it_nvme_layer_start(const struct it_nvme_layer_opts *o, char *hooks, size_t hlen,
			char *why, size_t wlen)
{
	enum it_hook_kind k1, k2, kind, sq;
	char w2[160] = "", w3[160] = "";
	int err;

	if (!it_module_loaded(NVME_MODULE)) {
		snprintf(why, wlen, "module %s is not loaded (no NVMe device; modprobe nvme)",
			 NVME_MODULE);
		return 0;
	}
	k1 = choose("nvme_setup_cmd", o->force_hook, why, wlen);
	k2 = choose("nvme_complete_rq", o->force_hook, w2, sizeof(w2));
	if (k1 == IT_HOOK_NONE || k2 == IT_HOOK_NONE) {
		if (k1 != IT_HOOK_NONE)
			snprintf(why, wlen, "%s", w2);
		return 0;
	}
	kind = k1 == k2 ? k1 : IT_HOOK_RAW_TP; /* both or none on tp_btf */
	/* nvme_sq: PCIe only, and not in every kernel; the layer works without */
	sq = choose("nvme_sq", o->force_hook, w3, sizeof(w3));
	if (sq == IT_HOOK_NONE && o->verbose)
		fprintf(stderr, "iotrail record: no nvme_sq probe (SQ backlog, CQE time): %s\n", w3);
	err = load(o, kind, sq);
	if (err && sq != IT_HOOK_NONE) {
		if (o->verbose)
			fprintf(stderr, "iotrail record: the nvme_sq program was refused (%s); "
				"recording without it\n", strerror(-err));
		sq = IT_HOOK_NONE;
		err = load(o, kind, sq);
	}
	if (err && kind == IT_HOOK_TP_BTF && o->force_hook != IT_HOOK_TP_BTF) {
		if (o->verbose)
			fprintf(stderr, "iotrail record: nvme tp_btf programs refused (%s); "
				"falling back to raw_tp\n", strerror(-err));
		kind = IT_HOOK_RAW_TP;
		err = load(o, kind, sq);
	}
	if (err) {
		snprintf(why, wlen, "loading the NVMe probes failed: %s%s", strerror(-err),
			 o->verbose ? "" : " (rerun with -v for libbpf's messages)");
		return 0;
	}
	snprintf(hooks, hlen, "nvme=%s,nvme_sq=%s", it_hook_kind_name(kind), it_hook_kind_name(sq));
	return 1;
}

void it_nvme_layer_stop(void)
{
	if (skel)
		nvme_bpf__detach(skel);
}

void it_nvme_layer_free(void)
{
	nvme_bpf__destroy(skel);
	skel = NULL;
}
