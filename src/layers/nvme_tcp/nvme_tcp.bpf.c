// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * NVMe/TCP initiator probes (the nvme_tcp module): when a request's PDUs
 * go onto the socket, and when data arrives on a queue's socket. Fields in
 * struct it_nvme_tcp_event (include/iotrail/event.h).
 *
 * Every function of nvme-tcp's send path below nvme_tcp_try_send is
 * static and most are inlined (try_send_cmd_pdu, try_send_data, ... are
 * not in Debian 6.1's ftrace list), so the send is seen from two hooks:
 * nvme_tcp_try_send (out of line on every kernel: it loops over the
 * queue's requests) opens a context for the calling thread, and the socket
 * send primitive the driver calls inside it (kernel_sendpage up to 6.4,
 * sock_sendmsg with MSG_SPLICE_PAGES from 6.5; both hooked, both
 * optional) marks the first byte handed to TCP and names the request
 * (queue->request is set by then). At nvme_tcp_try_send's return one
 * event tells: which request, its send state at the first byte, when the
 * first byte went and when the call returned, and whether the request was
 * fully sent (queue->request moved on). A thread outside nvme_tcp_try_send
 * finds no context: every other socket's send costs one map lookup.
 *
 * Arrival: nvme_tcp_data_ready (the queue's sk_data_ready, called by TCP
 * in softirq when data lands on the socket; out of line: it is a
 * pointer) gives one event per call, with the queue. The analysis takes a
 * command's response arrival from these (doc/report.md, "Fabric").
 *
 * The events go into the block probes' ring (reuse_fd): with the NVMe
 * driver layer's command events in one stream, one request's events stay
 * in causal order.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "iotrail/event.h"
#define IT_EV_BUFS_CAS /* fentry/fexit may be preempted: events.bpf.h */
#include "events.bpf.h"
#include "fn_hooks.bpf.h"
#include "io_work.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* drivers/nvme/host/nvme.h and tcp.c (module BTF) */
/* an enum field is read through an enum of the same name (CO-RE matches
 * an enum with an enum only); its values are the kernel's */
enum nvme_tcp_send_state___it { nvme_tcp_send_state___it_first = 0 };

struct nvme_ctrl___it {
	int instance;
} __attribute__((preserve_access_index));

struct nvme_request___it {
	void *cmd;                /* struct nvme_command *: the SQE as sent */
} __attribute__((preserve_access_index));

struct nvme_tcp_request___it {
	struct nvme_request___it req;
	__u32 data_len;
	enum nvme_tcp_send_state___it state;
} __attribute__((preserve_access_index));

/* include/linux/nvme-tcp.h: enum nvme_tcp_pdu_type */
#define NVME_TCP_H2C_DATA 6

struct nvme_tcp_ctrl___it;

struct nvme_tcp_queue___it {
	struct nvme_tcp_request___it *request;
	struct nvme_tcp_ctrl___it *ctrl;
} __attribute__((preserve_access_index));

struct nvme_tcp_ctrl___it {
	struct nvme_tcp_queue___it *queues;
	struct nvme_ctrl___it ctrl;
} __attribute__((preserve_access_index));

/* A thread inside nvme_tcp_try_send. */
struct tcp_send_ctx {
	__u64 queue;
	__u64 req;                /* the request whose first byte went; 0: none yet */
	__u64 first_ns;
	__u32 state;              /* its send state then */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);       /* tid */
	__type(value, struct tcp_send_ctx);
} sending SEC(".maps");

/* The queue's qid: its index in ctrl->queues (0 is the admin queue). */
static __always_inline __u16 queue_qid(struct nvme_tcp_queue___it *q, __u16 *instance)
{
	struct nvme_tcp_ctrl___it *ctrl = BPF_CORE_READ(q, ctrl);
	__u64 first = (__u64)BPF_CORE_READ(ctrl, queues);
	__u64 size = bpf_core_type_size(struct nvme_tcp_queue___it);

	*instance = BPF_CORE_READ(ctrl, ctrl.instance);
	if (!size || (__u64)q < first)
		return 0xffff;
	return ((__u64)q - first) / size;
}

static __always_inline int on_try_send(struct nvme_tcp_queue___it *q)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct tcp_send_ctx c = { .queue = (__u64)q };

	bpf_map_update_elem(&sending, &tid, &c, BPF_ANY);
	return 0;
}

/* Any socket send: inside nvme_tcp_try_send, the first one marks the
 * request's first byte. */
static __always_inline int on_sock_send(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct tcp_send_ctx *c = bpf_map_lookup_elem(&sending, &tid);
	struct nvme_tcp_queue___it *q;
	struct nvme_tcp_request___it *req;

	if (!c || c->req)
		return 0;
	q = (void *)c->queue;
	req = BPF_CORE_READ(q, request);
	if (!req)
		return 0;
	c->req = (__u64)req;
	c->first_ns = bpf_ktime_get_ns();
	c->state = BPF_CORE_READ(req, state);
	return 0;
}

static __always_inline int on_try_send_return(int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct tcp_send_ctx *c = bpf_map_lookup_elem(&sending, &tid);
	struct nvme_tcp_queue___it *q;
	struct nvme_tcp_request___it *req;
	struct it_event *e;
	__u16 cid = 0, instance = 0;
	__u8 pdu_type = 0;
	char *sqe;

	if (!c)
		return 0;
	q = (void *)c->queue;
	req = (void *)c->req;
	if (!req)
		goto out;
	e = ev_reserve(IT_EV_TCP_SEND, IT_LAYER_NVME_TCP, 0);
	if (!e)
		goto out;
	/* the request's PDU buffer (its 8-byte header, then the SQE that
	 * req.cmd points to) holds the command capsule, the cid 2 bytes into
	 * the SQE, until an R2T makes it the H2C data PDU: the cid right
	 * after the header, the target's transfer tag where it was before */
	sqe = (char *)BPF_CORE_READ(req, req.cmd);
	bpf_probe_read_kernel(&pdu_type, sizeof(pdu_type), sqe - 8);
	bpf_probe_read_kernel(&cid, sizeof(cid), sqe + (pdu_type == NVME_TCP_H2C_DATA ? 0 : 2));
	e->tcp.ts_ns = c->first_ns;
	e->tcp.cmd = (__u64)req - bpf_core_type_size(struct request);
	e->tcp.end_ns = bpf_ktime_get_ns();
	e->tcp.queue = c->queue;
	e->tcp.bytes = BPF_CORE_READ(req, data_len);
	e->tcp.qid = queue_qid(q, &instance);
	e->tcp.ctrl = instance;
	e->tcp.cid = cid;
	e->tcp.pdu = c->state;
	e->tcp.flags = IT_TCP_STATE_AFTER((__u32)BPF_CORE_READ(req, state));
	e->tcp.status = ret < 0 ? ret : 0;
	if ((__u64)BPF_CORE_READ(q, request) != (__u64)req)
		e->tcp.flags |= IT_TCP_SENT_ALL;
	io_work_delay(e);
	ev_submit(e);
out:
	bpf_map_delete_elem(&sending, &tid);
	return 0;
}

static __always_inline int on_data_ready(struct sock *sk)
{
	struct nvme_tcp_queue___it *q = (void *)((__u64)BPF_CORE_READ(sk, sk_user_data) & ~3ull);
	struct it_event *e;
	__u16 instance = 0;

	if (!q)
		return 0;
	e = ev_reserve(IT_EV_TCP_READY, IT_LAYER_NVME_TCP, 0);
	if (!e)
		return 0;
	e->tcp.queue = (__u64)q;
	e->tcp.qid = queue_qid(q, &instance);
	e->tcp.ctrl = instance;
	ev_submit(e);
	return 0;
}

SEC("fexit/nvme_tcp_try_send")
int BPF_PROG(try_send_fexit, struct nvme_tcp_queue___it *q, int ret)
{
	return on_try_send_return(ret);
}

SEC("kretprobe/nvme_tcp_try_send")
int BPF_KRETPROBE(try_send_kretprobe, int ret)
{
	return on_try_send_return(ret);
}

static __always_inline int on_io_work(struct work_struct *w)
{
	io_work_starts(w);
	return 0;
}

SEC("fexit/nvme_tcp_io_work")
int BPF_PROG(io_work_fexit)
{
	io_work_ends();
	return 0;
}

SEC("kretprobe/nvme_tcp_io_work")
int BPF_KRETPROBE(io_work_kretprobe)
{
	io_work_ends();
	return 0;
}

IT_FN_HOOK(nvme_tcp_io_work, io_work, struct work_struct *, on_io_work)
IT_IO_WORK_QUEUE_HOOKS
IT_FN_HOOK(nvme_tcp_try_send, try_send, struct nvme_tcp_queue___it *, on_try_send)
IT_FN_HOOK(nvme_tcp_data_ready, data_ready, struct sock *, on_data_ready)
IT_SOCK_SEND_HOOKS(on_sock_send)
