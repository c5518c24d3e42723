// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe layer's records: struct it_event with its NVMe view (e->nvme).
 * They travel in the block layer's EVENTS stream (one ring, causal order
 * per request); each event's own layer byte tells them apart.
 * Pure C: the reader and the analysis link it without libbpf.
 */
#include <stddef.h>

#include "iotrail/trace_format.h"
#include "iotrail/event.h"

/* e->nvme is the same bytes as the block names, field for field */
#define SAME(blk, nv) \
	_Static_assert(offsetof(struct it_event, blk) == offsetof(struct it_event, nvme.nv) && \
		       sizeof(((struct it_event *)0)->blk) == sizeof(((struct it_event *)0)->nvme.nv), \
		       "NVMe view of " #blk)
SAME(ts_ns, ts_ns);
SAME(id, rq);
SAME(sector, cdw10_11);
SAME(sector, result);
SAME(sector, range_sector);
SAME(sector, sq_head);
SAME(sector, cntlid);
SAME(aux, cdw12_13);
SAME(aux, retries_genctr);
SAME(aux, range_index);
SAME(aux, sq_tail);
SAME(aux, transport);
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
SAME(reserved, ctrl);
#undef SAME
_Static_assert(sizeof(struct it_nvme_event) == 64, "NVMe view layout");

const struct it_layer_rec it_nvme_records = {
	.id = IT_LAYER_NVME, .version = 1, .name = "nvme", .nrecords = 1,
	.records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, sizeof(struct it_event), "it_event.nvme" } },
};
