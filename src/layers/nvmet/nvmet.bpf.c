// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * NVMe target probes: nvmet:nvmet_req_init and nvmet:nvmet_req_complete of
 * the nvmet module (the target core under every fabric transport: tcp,
 * rdma, fc, loop). One struct it_event per command the target parsed and
 * per command it completed; the field names are struct it_nvmet_event's
 * (include/iotrail/event.h).
 *
 * The events go into the block probes' ring buffer (user space passes its
 * fd with bpf_map__reuse_fd): on a machine that is initiator and target at
 * once (loopback) the host's and the target's events of one I/O are in
 * causal order in one stream, which the fabric join relies on.
 *
 * A command on the wire is (cntlid, qid, cid): cntlid = req->sq->ctrl->cntlid
 * (the controller the host connected to; no controller yet while a connect
 * command is parsed), qid = req->sq->qid (the connect qid, as the host's),
 * cid = the command's command_id as the host sent it. Both tracepoints fire
 * where those are set (nvmet_req_init traces after parsing; the completion
 * before the response is queued). Only nvmet's own structures need CO-RE
 * (module BTF); the command and completion entries are read as raw bytes,
 * their layout is the NVMe specification's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "iotrail/event.h"
#define IT_EV_BUFS_CAS /* fentry/fexit may be preempted: events.bpf.h */
#include "events.bpf.h"
#include "nvmet.bpf.h"

/* events and drops (events.bpf.h) are the block object's (reuse_fd); the
 * --dev and -p filters do not apply: a target command belongs to a
 * connection, not to a local disk or process */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The command's first 48 bytes (NVMe base spec, "Common Command Format"). */
struct sqe_head {
	__u8 opcode;
	__u8 flags;
	__u16 cid;
	__u32 nsid;
	__u32 cdw2, cdw3;
	__u64 mptr;
	__u64 prp1, prp2;
	__u32 cdw10, cdw11, cdw12, cdw13;
};

/* The completion queue entry (NVMe base spec, "Completion Queue Entry"). */
struct cqe {
	__u64 result;
	__u16 sq_head, sq_id;
	__u16 cid;
	__u16 status;             /* phase tag in bit 0 */
};

static __always_inline __u32 ns_dev(struct nvmet_req___it *req)
{
	struct block_device *bdev = BPF_CORE_READ(req, ns, bdev);

	return bdev ? BPF_CORE_READ(bdev, bd_dev) : 0; /* dev_t: major << 20 | minor */
}

static __always_inline struct it_event *nvmet_ev(__u8 type, struct nvmet_req___it *req,
						 const struct sqe_head *c)
{
	struct it_event *e = ev_reserve(type, IT_LAYER_NVMET, ns_dev(req));

	if (!e)
		return NULL;
	e->nvmet.req = (__u64)req;
	e->nvmet.cdw12_13 = c->cdw12 | (__u64)c->cdw13 << 32;
	e->nvmet.bytes = BPF_CORE_READ(req, transfer_len);
	e->nvmet.nsid = c->nsid;
	e->nvmet.cid = c->cid;
	e->nvmet.qid = BPF_CORE_READ(req, sq, qid);
	e->nvmet.opcode = c->opcode;
	e->nvmet.cntlid = BPF_CORE_READ(req, sq, ctrl, cntlid);
	return e;
}

static __always_inline int on_init(struct nvmet_req___it *req, void *cmd)
{
	struct sqe_head c;
	struct it_event *e;

	if (bpf_probe_read_kernel(&c, sizeof(c), cmd))
		return 0;
	e = nvmet_ev(IT_EV_NVMET_INIT, req, &c);
	if (!e)
		return 0;
	e->nvmet.cdw10_11 = c.cdw10 | (__u64)c.cdw11 << 32;
	ev_submit(e);
	return 0;
}

static __always_inline int on_complete(struct nvmet_req___it *req)
{
	struct sqe_head c;
	struct cqe q = {};
	struct it_event *e;

	if (bpf_probe_read_kernel(&c, sizeof(c), BPF_CORE_READ(req, cmd)))
		return 0;
	bpf_probe_read_kernel(&q, sizeof(q), BPF_CORE_READ(req, cqe));
	e = nvmet_ev(IT_EV_NVMET_COMPLETE, req, &c);
	if (!e)
		return 0;
	e->nvmet.result = q.result;
	e->nvmet.status = (__s16)(q.status >> 1);
	ev_submit(e);
	return 0;
}

SEC("tp_btf/nvmet_req_init")
int BPF_PROG(nvmet_req_init_btf, struct nvmet_req___it *req, void *cmd)
{
	return on_init(req, cmd);
}

SEC("raw_tp/nvmet_req_init")
int BPF_PROG(nvmet_req_init, struct nvmet_req___it *req, void *cmd)
{
	return on_init(req, cmd);
}

SEC("tp_btf/nvmet_req_complete")
int BPF_PROG(nvmet_req_complete_btf, struct nvmet_req___it *req)
{
	return on_complete(req);
}

SEC("raw_tp/nvmet_req_complete")
int BPF_PROG(nvmet_req_complete, struct nvmet_req___it *req)
{
	return on_complete(req);
}

/*
 * The backend starts a command: req->execute of the namespace's backend
 * (block device or file), functions called through that pointer and so
 * out of line on every build (fentry, else kprobe; each optional: the
 * layer works with the tracepoints alone). Between this and
 * nvmet_req_complete is the backing device's time; before it, on a write,
 * the data's transfer.
 */
static __always_inline int on_execute(struct nvmet_req___it *req, __u32 backend)
{
	struct sqe_head c;
	struct it_event *e;

	if (bpf_probe_read_kernel(&c, sizeof(c), BPF_CORE_READ(req, cmd)))
		return 0;
	e = nvmet_ev(IT_EV_NVMET_EXECUTE, req, &c);
	if (!e)
		return 0;
	e->nvmet.result = backend;
	ev_submit(e);
	return 0;
}

#define EXECUTE(fn, backend)                                             \
	SEC("fentry/" #fn)                                               \
	int BPF_PROG(fn##_fentry, struct nvmet_req___it *req)            \
	{                                                                \
		return on_execute(req, backend);                         \
	}                                                                \
	SEC("kprobe/" #fn)                                               \
	int BPF_KPROBE(fn##_kprobe, struct nvmet_req___it *req)          \
	{                                                                \
		return on_execute(req, backend);                         \
	}

EXECUTE(nvmet_bdev_execute_rw, IT_NVMET_BDEV)
EXECUTE(nvmet_bdev_execute_flush, IT_NVMET_BDEV)
EXECUTE(nvmet_file_execute_rw, IT_NVMET_FILE)
EXECUTE(nvmet_file_execute_flush, IT_NVMET_FILE)
