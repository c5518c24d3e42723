/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The NVMe driver layer for `iotrail record`: loads bpf/nvme.bpf.c into
 * the block probes' ring buffer (one stream, causal order per request)
 * when the nvme_core module is loaded.
 */
#ifndef IOTRAIL_NVME_LAYER_H
#define IOTRAIL_NVME_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_map;

struct it_nvme_layer_opts {
	struct bpf_map *events, *drops, *tracked; /* the block skeleton's maps */
	const uint32_t *devs;
	size_t ndevs;
	pid_t pid;
	uint64_t wakeup_bytes;
	int force_hook;          /* enum it_hook_kind; IT_HOOK_NONE: best */
	bool verbose;
};

/* Loads and attaches the NVMe probes. Returns 1 when they run (hooks gets
 * e.g. "nvme=tp_btf"), 0 when the layer is off (why says why: the module
 * is not loaded, no tracepoint, load failed). Never fatal for record. */
int it_nvme_layer_start(const struct it_nvme_layer_opts *o, char *hooks, size_t hlen,
			char *why, size_t wlen);
/* Detaches (before the final drain); then frees. Both safe when not started. */
void it_nvme_layer_stop(void);
void it_nvme_layer_free(void);

#endif
