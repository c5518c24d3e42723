// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe/TCP transport layers' records: struct it_event with its
 * transport view (e->tcp), in the block layer's EVENTS stream; each
 * event's layer byte tells initiator (nvme-tcp) from target (nvmet-tcp).
 * Pure C.
 */
#include <stddef.h>

#include "iotrail/trace_format.h"
#include "iotrail/event.h"

/* e->tcp is the same bytes as the block names, field for field */
#define SAME(blk, t) \
	_Static_assert(offsetof(struct it_event, blk) == offsetof(struct it_event, tcp.t) && \
		       sizeof(((struct it_event *)0)->blk) == sizeof(((struct it_event *)0)->tcp.t), \
		       "NVMe/TCP view of " #blk)
SAME(ts_ns, ts_ns);
SAME(id, cmd);
SAME(sector, end_ns);
SAME(aux, queue);
SAME(dev, io_work_wait_ns);
SAME(bytes, bytes);
SAME(pid, pid);
SAME(tid, tid);
SAME(flags, flags);
SAME(error, status);
SAME(tag, cid);
SAME(hwq, qid);
SAME(type, type);
SAME(op, pdu);
SAME(layer, layer);
SAME(cpu_lo, cpu_lo);
SAME(reserved, ctrl);
#undef SAME
_Static_assert(sizeof(struct it_tcp_event) == 64, "NVMe/TCP view layout");

const struct it_layer_rec it_nvme_tcp_records = {
	.id = IT_LAYER_NVME_TCP, .version = 1, .name = "nvme-tcp", .nrecords = 1,
	.records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, sizeof(struct it_event), "it_event.tcp" } },
};

const struct it_layer_rec it_nvmet_tcp_records = {
	.id = IT_LAYER_NVMET_TCP, .version = 1, .name = "nvmet-tcp", .nrecords = 1,
	.records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, sizeof(struct it_event), "it_event.tcp" } },
};
