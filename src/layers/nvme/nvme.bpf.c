// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * NVMe driver probes: nvme:nvme_setup_cmd and nvme:nvme_complete_rq of the
 * nvme_core module (every NVMe transport: PCIe, TCP, RDMA, FC, loop).
 * One struct it_event per command submission and completion, plus one per
 * range of a DSM (discard) command, plus (where the kernel has nvme:nvme_sq,
 * the PCIe transport) one per completion queue entry the driver handled; the field layout is in
 * include/iotrail/event.h.
 *
 * The events go into the block probes' ring buffer (user space passes its
 * fd with bpf_map__reuse_fd), so a request's block and NVMe events stay in
 * causal order in one stream.
 *
 * Both tracepoints take the struct request *, the identity the block layer
 * uses too: linking a command to its block trail is exact. The command is
 * read as the 64 raw bytes of the submission queue entry, whose layout is
 * fixed by the NVMe specification, so only struct nvme_request (the
 * request's driver PDU) and struct nvme_ctrl need CO-RE. Those types live
 * in the nvme_core module's BTF; libbpf relocates against module BTF.
 *
 * Every read is a probe read (BPF_CORE_READ), so the tp_btf and raw_tp
 * variants share one body: module BTF pointers cannot be walked past the
 * struct request into its PDU by direct loads anyway.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "iotrail/event.h"
#include "core_fixes.bpf.h"
#define IT_EV_BUFS /* tracepoints only: events.bpf.h */
#include "events.bpf.h"
#define NVME_CMD_DSM 0x09
#define MAX_DSM_RANGES 64 /* ranges followed per DSM command (the spec allows 256) */
#define NVME_AQ_DEPTH 32  /* admin queue entries (drivers/nvme/host/nvme.h) */

/* events, drops and tracked (events.bpf.h) are the block object's (reuse_fd) */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* drivers/nvme/host/nvme.h (nvme_core BTF). */
struct nvme_ctrl___it {
	int instance;
	__u16 sqsize; /* I/O queue entries - 1 (0's based, as the spec's MQES) */
} __attribute__((preserve_access_index));

struct nvme_request___it {
	void *cmd;
	union {
		__u64 u64;
	} result;
	__u8 genctr;
	__u8 retries;
	__u16 status;
	struct nvme_ctrl___it *ctrl;
} __attribute__((preserve_access_index));

/* The submission queue entry (NVMe base spec, figure "Common Command
 * Format"): little-endian, fixed layout. */
struct sqe {
	__u8 opcode;
	__u8 flags;
	__u16 cid;
	__u32 nsid;
	__u32 cdw2, cdw3;
	__u64 mptr;
	__u64 prp1, prp2;
	__u32 cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

static __always_inline struct nvme_request___it *nvme_req(struct request *rq)
{
	/* blk_mq_rq_to_pdu(): the driver PDU follows struct request */
	return (void *)rq + bpf_core_type_size(struct request);
}

/* nvme_req_qid(): 0 for the admin queue (no namespace), else hctx + 1 */
static __always_inline __u16 rq_qid(struct request *rq)
{
	struct request_queue *q = BPF_CORE_READ(rq, q);

	if (!q || !BPF_CORE_READ(q, queuedata))
		return 0;
	return BPF_CORE_READ(rq, mq_hctx, queue_num) + 1;
}

static __always_inline bool wanted(struct request *rq, __u32 dev)
{
	__u64 key = (__u64)rq;

	if (scoped && !bpf_map_lookup_elem(&tracked, &key)) {
		/* set up before block_rq_issue adopts the request: its bios */
		__u64 first = (__u64)BPF_CORE_READ(rq, bio), last = (__u64)BPF_CORE_READ(rq, biotail);

		if (!(first && bpf_map_lookup_elem(&tracked, &first)) &&
		    !(last && bpf_map_lookup_elem(&tracked, &last)))
			return false;
	}
	return dev_wanted(dev);
}

static __always_inline struct it_event *nvme_ev_reserve(__u8 type, struct request *rq, __u32 dev)
{
	struct it_event *e = ev_reserve(type, IT_LAYER_NVME, dev);

	if (e) {
		e->nvme.rq = (__u64)rq;
		e->bytes = BPF_CORE_READ(rq, __data_len);
	}
	return e;
}

/* The ranges of a DSM command are the request's bios, as
 * nvme_setup_discard() builds them. */
static __always_inline void dsm_ranges(struct request *rq, __u32 dev, __u32 nsid)
{
	struct bio *bio = BPF_CORE_READ(rq, bio);
	struct it_event *e;

	for (__u32 i = 0; i < MAX_DSM_RANGES && bio; i++) {
		e = nvme_ev_reserve(IT_EV_NVME_RANGE, rq, dev);
		if (!e)
			return;
		e->nvme.range_sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
		e->bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
		e->nvme.range_index = i;
		e->nvme.nsid = nsid;
		e->nvme.opcode = NVME_CMD_DSM;
		ev_submit(e);
		bio = BPF_CORE_READ(bio, bi_next);
	}
}

static __always_inline int on_setup(struct request *rq, void *cmd)
{
	struct nvme_request___it *nr = nvme_req(rq);
	__u32 dev = rq_dev(rq, false);
	struct it_event *e;
	struct sqe c;
	__u16 qid;

	if (!wanted(rq, dev))
		return 0;
	qid = rq_qid(rq);
	if (bpf_probe_read_kernel(&c, sizeof(c), cmd))
		return 0;
	e = nvme_ev_reserve(IT_EV_NVME_SUBMIT, rq, dev);
	if (!e)
		return 0;
	e->nvme.cdw10_11 = c.cdw10 | (__u64)c.cdw11 << 32;
	e->nvme.cdw12_13 = c.cdw12 | (__u64)c.cdw13 << 32;
	e->nvme.nsid = c.nsid;
	e->nvme.cid = c.cid;
	e->nvme.qid = qid;
	e->nvme.opcode = c.opcode;
	e->nvme.ctrl = BPF_CORE_READ(nr, ctrl, instance);
	ev_submit(e); /* e is gone from here on */
	if (c.opcode == NVME_CMD_DSM && qid)
		dsm_ranges(rq, dev, c.nsid);
	return 0;
}

static __always_inline int on_complete(struct request *rq)
{
	struct nvme_request___it *nr = nvme_req(rq);
	__u32 dev = rq_dev(rq, false);
	struct it_event *e;
	struct sqe c = {};
	void *cmd;

	if (!wanted(rq, dev))
		return 0;
	cmd = BPF_CORE_READ(nr, cmd);
	if (cmd)
		bpf_probe_read_kernel(&c, 4 + sizeof(c.nsid), cmd);
	e = nvme_ev_reserve(IT_EV_NVME_COMPLETE, rq, dev);
	if (!e)
		return 0;
	e->nvme.result = BPF_CORE_READ(nr, result.u64);
	e->nvme.retries_genctr = BPF_CORE_READ(nr, retries) | (__u64)BPF_CORE_READ(nr, genctr) << 8;
	e->nvme.status = (__s16)BPF_CORE_READ(nr, status);
	e->nvme.nsid = c.nsid;
	e->nvme.cid = c.cid;
	e->nvme.qid = rq_qid(rq);
	e->nvme.opcode = c.opcode;
	e->nvme.ctrl = BPF_CORE_READ(nr, ctrl, instance);
	ev_submit(e);
	return 0;
}

/* nvme:nvme_sq (PCIe: nvme_handle_cqe, before the request completes): the
 * SQ head the controller reported in the CQE and the driver's SQ tail.
 * Optional: user space leaves these programs out where it is missing. */
static __always_inline int on_sq(struct request *rq, __u16 head, __u32 tail)
{
	struct nvme_request___it *nr = nvme_req(rq);
	__u32 dev = rq_dev(rq, false);
	struct it_event *e;
	__u16 qid;

	if (!wanted(rq, dev))
		return 0;
	qid = rq_qid(rq);
	e = nvme_ev_reserve(IT_EV_NVME_SQ, rq, dev);
	if (!e)
		return 0;
	e->nvme.sq_head = head;
	e->nvme.sq_tail = tail;
	e->bytes = 0;
	if (!qid)
		e->bytes = NVME_AQ_DEPTH;
	else if (bpf_core_field_exists(nr->ctrl->sqsize))
		e->bytes = BPF_CORE_READ(nr, ctrl, sqsize) + 1;
	e->nvme.qid = qid;
	e->nvme.opcode = 0;
	e->nvme.ctrl = BPF_CORE_READ(nr, ctrl, instance);
	ev_submit(e);
	return 0;
}

SEC("tp_btf/nvme_sq")
int BPF_PROG(nvme_sq_btf, struct request *rq, __u16 sq_head, int sq_tail)
{
	return on_sq(rq, sq_head, (__u32)sq_tail);
}

SEC("raw_tp/nvme_sq")
int BPF_PROG(nvme_sq, struct request *rq, __u16 sq_head, int sq_tail)
{
	return on_sq(rq, sq_head, (__u32)sq_tail);
}

SEC("tp_btf/nvme_setup_cmd")
int BPF_PROG(nvme_setup_cmd_btf, struct request *rq, void *cmd)
{
	return on_setup(rq, cmd);
}

SEC("raw_tp/nvme_setup_cmd")
int BPF_PROG(nvme_setup_cmd, struct request *rq, void *cmd)
{
	return on_setup(rq, cmd);
}

SEC("tp_btf/nvme_complete_rq")
int BPF_PROG(nvme_complete_rq_btf, struct request *rq)
{
	return on_complete(rq);
}

SEC("raw_tp/nvme_complete_rq")
int BPF_PROG(nvme_complete_rq, struct request *rq)
{
	return on_complete(rq);
}
