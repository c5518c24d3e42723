// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe driver layer on the recording side (nvme.bpf.c): every command
 * the driver sets up and completes, and where the kernel has it, when the
 * driver handled its completion queue entry. Part of the block layer: its
 * events go into the block layer's ring (one stream, causal order per
 * request), so it records whenever the block layer does and nvme_core is
 * loaded. At the start it writes the controllers' side table (instance ->
 * cntlid and transport), which joins a fabric command to its target's.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "layer.h"
#include "nvme.skel.h"
#include "tracefile.h"

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

	(void)kinds;
	k->rodata->filter_ndevs = s->ndevs < MAX_DEVS ? s->ndevs : MAX_DEVS;
	for (size_t i = 0; i < k->rodata->filter_ndevs; i++)
		k->rodata->filter_devs[i] = s->devs[i];
	k->rodata->scoped = it_scope_tracks(s->scope);
	k->rodata->wakeup_bytes = s->ev.wakeup_bytes;
	/* the block layer's ring, drop counter and scope's tracked table,
	 * and its event buffers (the NVMe driver's programs are tracepoints,
	 * as the block layer's: events.bpf.h) */
	return it_session_share_events(s, k->maps.events, k->maps.drops, k->maps.tracked) ?:
	       it_session_share_bufs(s, k->maps.ev_bufs, &k->rodata->ev_buf_mask,
				     &k->rodata->ev_buf_wakeup);
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
	struct it_hook_load l = {
		.layer = "nvme", .hooks = nvme_hooks, .nhooks = NHOOKS, .skel = &nvme_skel_ops,
		.configure = configure, .ctx = s, .force = s->force_hook, .verbose = s->verbose,
	};

	skel = it_session_start_in_events(s, &l, hooks, hlen, why, wlen);
	return skel != NULL;
}

static int attach(struct it_session *s, char *why, size_t wlen)
{
	(void)s;
	return it_session_attach_skel(&nvme_skel_ops, skel, "nvme", why, wlen);
}

#define MAX_CTRLS 256

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ok = f && fgets(buf, (int)len, f);

	if (f)
		fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static uint64_t transport_of(const char *name)
{
	static const char *const names[] = {
		[IT_NVME_TR_PCIE] = "pcie", [IT_NVME_TR_TCP] = "tcp", [IT_NVME_TR_RDMA] = "rdma",
		[IT_NVME_TR_FC] = "fc", [IT_NVME_TR_LOOP] = "loop",
	};

	for (size_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return i;
	return IT_NVME_TR_OTHER;
}

/* One IT_EV_NVME_CTRL per controller in /sys/class/nvme: the cntlid is
 * what the target calls the connection (the tracepoints give the local
 * instance only). Controllers connected later are not in it. */
static void begin(struct it_session *s)
{
	struct it_event ev[MAX_CTRLS];
	DIR *d = opendir("/sys/class/nvme");
	struct dirent *de;
	size_t n = 0;
	char path[320], val[64];
	unsigned inst, cntlid;
	int end, err;

	while (d && (de = readdir(d)) && n < MAX_CTRLS) {
		if (sscanf(de->d_name, "nvme%u%n", &inst, &end) != 1 || de->d_name[end])
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/cntlid", de->d_name);
		if (read_line(path, val, sizeof(val)) || sscanf(val, "%u", &cntlid) != 1)
			continue;
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/transport", de->d_name);
		if (read_line(path, val, sizeof(val)))
			val[0] = 0;
		memset(&ev[n], 0, sizeof(ev[n]));
		ev[n].ts_ns = s->start_ns;
		ev[n].type = IT_EV_NVME_CTRL;
		ev[n].layer = IT_LAYER_NVME;
		ev[n].nvme.ctrl = (uint16_t)inst;
		ev[n].nvme.cntlid = cntlid;
		ev[n].nvme.transport = transport_of(val);
		n++;
	}
	if (d)
		closedir(d);
	err = n ? it_writer_add_events(s->w, IT_LAYER_NVME, ev, n) : 0;
	if (err)
		fprintf(stderr, "iotrail record: warning: failed to write the NVMe controllers' table: %s; "
			"fabric commands will not be matched\n", strerror(-err));
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
	.attach = attach,
	.begin = begin,
	.detach = detach,
	.free = nvme_free,
};
