// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe/TCP transport layers on the recording side: the initiator
 * (nvme-tcp, nvme_tcp.bpf.c: each request's PDUs onto its queue's socket,
 * data arrival per queue) and the target (nvmet-tcp, nvmet_tcp.bpf.c: data
 * arrival per queue, each command's C2H data, R2T and response PDUs onto
 * the socket). Both are part of the block layer (their events go into its
 * ring, in causal order with the NVMe driver's and the NVMe target's
 * command events), so each records whenever the block layer does, its
 * module is loaded and the kernel takes fentry or kprobes on its functions
 * (`iotrail probe` says which).
 */
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "layer.h"
#include "nvme_tcp.skel.h"
#include "nvmet_tcp.skel.h"

IT_SKEL_OPS(nvme_tcp);
IT_SKEL_OPS(nvmet_tcp);

#define HOST_MODULE "nvme_tcp"
#define TARGET_MODULE "nvmet_tcp"

/* a function's entry (PROG_fentry / PROG_kprobe) and its return */
#define FN_HOOK(fn, module, opt, prog) { fn, NULL, module, opt, \
	{ [IT_HOOK_FENTRY] = prog "_fentry", [IT_HOOK_KPROBE] = prog "_kprobe" } }
#define FN_RETURN_HOOK(fn, module, prog) { fn, NULL, module, false, \
	{ [IT_HOOK_FENTRY] = prog "_fexit", [IT_HOOK_KPROBE] = prog "_kretprobe" } }
#define FN_RETURN_HOOK_OPT(fn, module, prog) { fn, NULL, module, true, \
	{ [IT_HOOK_FENTRY] = prog "_fexit", [IT_HOOK_KPROBE] = prog "_kretprobe" } }
/* io_work queued: its scheduling delay (optional: the sends go without it) */
#define QUEUE_WORK_HOOK { "workqueue_queue_work", "workqueue", NULL, true, \
	{ [IT_HOOK_TP_BTF] = "workqueue_queue_work_btf", [IT_HOOK_RAW_TP] = "workqueue_queue_work" } }
/* the socket send primitive: one of them, by kernel version */
#define SOCK_SEND_HOOKS FN_HOOK("kernel_sendpage", NULL, true, "sendpage"), \
	FN_HOOK("sock_sendmsg", NULL, true, "sendmsg")

static const struct it_hook_def host_hooks[] = {
	FN_HOOK("nvme_tcp_try_send", HOST_MODULE, false, "try_send"),
	FN_RETURN_HOOK("nvme_tcp_try_send", HOST_MODULE, "try_send"),
	SOCK_SEND_HOOKS,
	FN_HOOK("nvme_tcp_data_ready", HOST_MODULE, false, "data_ready"),
	FN_HOOK("nvme_tcp_io_work", HOST_MODULE, true, "io_work"),
	FN_RETURN_HOOK_OPT("nvme_tcp_io_work", HOST_MODULE, "io_work"),
	QUEUE_WORK_HOOK,
	/* probed only: neighbours for kernels where the above are missing */
	{ "nvme_tcp_queue_rq", NULL, HOST_MODULE, true, { 0 } },
	{ "nvme_tcp_recv_skb", NULL, HOST_MODULE, true, { 0 } },
};

static const struct it_hook_def target_hooks[] = {
	FN_HOOK("nvmet_tcp_io_work", TARGET_MODULE, false, "io_work"),
	FN_RETURN_HOOK("nvmet_tcp_io_work", TARGET_MODULE, "io_work"),
	SOCK_SEND_HOOKS,
	FN_HOOK("nvmet_tcp_data_ready", TARGET_MODULE, false, "data_ready"),
	QUEUE_WORK_HOOK,
	{ "nvmet_tcp_try_recv_pdu", NULL, TARGET_MODULE, true, { 0 } },
	{ "nvmet_tcp_queue_response", NULL, TARGET_MODULE, true, { 0 } },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct nvme_tcp_bpf *host;
static struct nvmet_tcp_bpf *target;

static int configure_host(void *obj, enum it_hook_kind *kinds, void *ctx)
{
	struct nvme_tcp_bpf *k = obj;
	const struct it_session *s = ctx;

	(void)kinds;
	k->rodata->wakeup_bytes = s->ev.wakeup_bytes;
	/* the block layer's ring, drop counter, -p table and event buffers
	 * (taken by compare-and-exchange here: events.bpf.h) */
	return it_session_share_events(s, k->maps.events, k->maps.drops, k->maps.tracked) ?:
	       it_session_share_bufs(s, k->maps.ev_bufs, &k->rodata->ev_buf_mask,
				     &k->rodata->ev_buf_wakeup);
}

static int configure_target(void *obj, enum it_hook_kind *kinds, void *ctx)
{
	struct nvmet_tcp_bpf *k = obj;
	const struct it_session *s = ctx;

	(void)kinds;
	k->rodata->wakeup_bytes = s->ev.wakeup_bytes;
	/* the block layer's ring, drop counter, -p table and event buffers
	 * (taken by compare-and-exchange here: events.bpf.h) */
	return it_session_share_events(s, k->maps.events, k->maps.drops, k->maps.tracked) ?:
	       it_session_share_bufs(s, k->maps.ev_bufs, &k->rodata->ev_buf_mask,
				     &k->rodata->ev_buf_wakeup);
}

static int module_available(const char *module, const char *what, char *why, size_t len)
{
	if (it_module_loaded(module))
		return 1;
	snprintf(why, len, "module %s is not loaded (no NVMe/TCP %s here)", module, what);
	return 0;
}

static int host_available(char *why, size_t len)
{
	return module_available(HOST_MODULE, "controller", why, len);
}

static int target_available(char *why, size_t len)
{
	return module_available(TARGET_MODULE, "target", why, len);
}

/* Loads a layer; without a socket send primitive its sends would be
 * invisible: then it is not recorded at all. */
static void *start_layer(struct it_session *s, struct it_hook_load *l, char *hooks, size_t hlen,
			 char *why, size_t wlen)
{
	void *skel = it_session_start_in_events(s, l, hooks, hlen, why, wlen);
	struct bpf_object *obj = skel ? l->skel->object(skel) : NULL;
	static const char *const send[] = { "sendpage_fentry", "sendpage_kprobe", "sendmsg_fentry",
					    "sendmsg_kprobe" };

	for (size_t i = 0; obj && i < N(send); i++)
		if (bpf_program__autoload(bpf_object__find_program_by_name(obj, send[i])))
			return skel;
	if (skel) {
		snprintf(why, wlen, "neither kernel_sendpage nor sock_sendmsg can be traced here");
		l->skel->destroy(skel);
	}
	return NULL;
}

static int host_start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	struct it_hook_load l = {
		.layer = "nvme-tcp", .hooks = host_hooks, .nhooks = N(host_hooks),
		.skel = &nvme_tcp_skel_ops, .configure = configure_host, .ctx = s,
		.force = s->force_hook, .verbose = s->verbose,
	};

	host = start_layer(s, &l, hooks, hlen, why, wlen);
	return host != NULL;
}

static int target_start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	struct it_hook_load l = {
		.layer = "nvmet-tcp", .hooks = target_hooks, .nhooks = N(target_hooks),
		.skel = &nvmet_tcp_skel_ops, .configure = configure_target, .ctx = s,
		.force = s->force_hook, .verbose = s->verbose,
	};

	target = start_layer(s, &l, hooks, hlen, why, wlen);
	return target != NULL;
}

static int host_attach(struct it_session *s, char *why, size_t wlen)
{
	(void)s;
	return it_session_attach_skel(&nvme_tcp_skel_ops, host, "nvme-tcp", why, wlen);
}

static int target_attach(struct it_session *s, char *why, size_t wlen)
{
	(void)s;
	return it_session_attach_skel(&nvmet_tcp_skel_ops, target, "nvmet-tcp", why, wlen);
}

static void host_detach(void)
{
	nvme_tcp_bpf__detach(host);
}

static void target_detach(void)
{
	nvmet_tcp_bpf__detach(target);
}

static void host_free(void)
{
	nvme_tcp_bpf__destroy(host);
	host = NULL;
}

static void target_free(void)
{
	nvmet_tcp_bpf__destroy(target);
	target = NULL;
}

extern const struct it_layer_rec it_nvme_tcp_records, it_nvmet_tcp_records; /* records.c */

const struct it_layer_ops it_nvme_tcp_layer = {
	.name = "nvme-tcp",
	.id = IT_LAYER_NVME_TCP,
	.records = &it_nvme_tcp_records,
	.what = "NVMe/TCP initiator: each request's PDUs onto the socket, data arrival per queue",
	.hooks = host_hooks,
	.nhooks = N(host_hooks),
	.part_of = "block",
	.available = host_available,
	.start = host_start,
	.attach = host_attach,
	.detach = host_detach,
	.free = host_free,
};

const struct it_layer_ops it_nvmet_tcp_layer = {
	.name = "nvmet-tcp",
	.id = IT_LAYER_NVMET_TCP,
	.records = &it_nvmet_tcp_records,
	.what = "NVMe/TCP target: data arrival per queue, each command's C2H data, R2T and "
		"response PDUs onto the socket",
	.hooks = target_hooks,
	.nhooks = N(target_hooks),
	.part_of = "block",
	.available = target_available,
	.start = target_start,
	.attach = target_attach,
	.detach = target_detach,
	.free = target_free,
};
