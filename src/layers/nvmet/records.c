// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe target layer's records: struct it_event with its target view
 * (e->nvmet). They travel in the block layer's EVENTS stream (one ring,
 * causal order with the initiator's events on a loopback setup); each
 * event's own layer byte tells them apart. Pure C.
 */
#include <stddef.h>

#include "iotrail/trace_format.h"
#include "iotrail/event.h"

/* e->nvmet is the same bytes as the block names, field for field */
#define SAME(blk, t) \
	_Static_assert(offsetof(struct it_event, blk) == offsetof(struct it_event, nvmet.t) && \
		       sizeof(((struct it_event *)0)->blk) == sizeof(((struct it_event *)0)->nvmet.t), \
		       "NVMe target view of " #blk)
SAME(ts_ns, ts_ns);
SAME(id, req);
SAME(sector, cdw10_11);
SAME(sector, result);
SAME(aux, cdw12_13);
SAME(dev, dev);
SAME(bytes, bytes);
SAME(pid, pid);
SAME(tid, tid);
SAME(flags, nsid);
SAME(error, status);
SAME(tag, cid);
SAME(hwq, qid);
SAME(type, type);
SAME(op, opcode);
SAME(layer, layer);
SAME(cpu_lo, cpu_lo);
SAME(reserved, cntlid);
#undef SAME
_Static_assert(sizeof(struct it_nvmet_event) == 64, "NVMe target view layout");

const struct it_layer_rec it_nvmet_records = {
	.id = IT_LAYER_NVMET, .version = 1, .name = "nvmet", .nrecords = 1,
	.records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, sizeof(struct it_event), "it_event.nvmet" } },
};
