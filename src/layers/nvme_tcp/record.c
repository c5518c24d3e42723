// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe/TCP initiator (nvme-tcp) and target (nvmet-tcp) transport
 * layers: PDU send and receive. So far only their hooks are described, so
 * `iotrail probe` can say whether this kernel could trace them; recording them is the next step (no start op:
 * record does not offer them yet). Most of these functions are static and
 * may be inlined on one build and not another: the probe checks each.
 */
#include "layer.h"

static const struct it_hook_def host_hooks[] = {
	{ "nvme_tcp_queue_rq", NULL, "nvme_tcp", false, { 0 } },
	{ "nvme_tcp_try_send", NULL, "nvme_tcp", false, { 0 } },
	{ "nvme_tcp_recv_skb", NULL, "nvme_tcp", false, { 0 } },
	{ "sk_data_ready", "sock", NULL, true, { 0 } },
};

/* the target core's tracepoints (nvmet_req_init/complete) are the nvmet
 * layer's, recorded (src/layers/nvmet/) */
static const struct it_hook_def target_hooks[] = {
	{ "nvmet_tcp_try_recv_pdu", NULL, "nvmet_tcp", false, { 0 } },
	{ "nvmet_tcp_queue_response", NULL, "nvmet_tcp", false, { 0 } },
};

const struct it_layer_ops it_nvme_tcp_layer = {
	.name = "nvme-tcp",
	.id = IT_LAYER_NVME_TCP,
	.what = "NVMe/TCP initiator: queueing, PDU send and receive (probed only, not recorded yet)",
	.hooks = host_hooks,
	.nhooks = sizeof(host_hooks) / sizeof(host_hooks[0]),
};

const struct it_layer_ops it_nvmet_tcp_layer = {
	.name = "nvmet-tcp",
	.id = IT_LAYER_NVMET_TCP,
	.what = "NVMe/TCP target: PDU receive, response (probed only, not recorded yet)",
	.hooks = target_hooks,
	.nhooks = sizeof(target_hooks) / sizeof(target_hooks[0]),
};
