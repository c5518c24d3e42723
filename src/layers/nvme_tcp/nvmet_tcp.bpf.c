// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * NVMe/TCP target probes (the nvmet_tcp module): when data arrives on a
 * target queue's socket, and when a command's PDUs (C2H data, R2T,
 * response) start out on it. Fields in struct it_tcp_event
 * (include/iotrail/event.h). The command's own life (parsed, backend
 * started, completed) is the nvmet layer's.
 *
 * nvmet-tcp's send functions are static and inlined on Debian 6.1
 * (nvmet_tcp_try_send and below); nvmet_tcp_io_work is out of line (a
 * work item) and does all of a queue's sending, so it opens a context for
 * its thread, and the socket send primitive inside it (kernel_sendpage up
 * to 6.4, sock_sendmsg from 6.5; both optional) reads the command being
 * sent (queue->snd_cmd) and its state. Only the first byte of a PDU makes
 * an event (the command's send offset is 0): a PDU that goes out in
 * several calls is one event; a read's C2H data PDU and its response are
 * one event, at the response, with the data's start in it.
 *
 * Arrival: nvmet_tcp_data_ready, the queue's sk_data_ready.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "iotrail/event.h"
#define IT_EV_BUFS_CAS /* fentry/fexit may be preempted: events.bpf.h */
#include "events.bpf.h"
#include "nvmet.bpf.h"
#include "fn_hooks.bpf.h"
#include "io_work.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* drivers/nvme/target/tcp.c (module BTF) */
/* an enum field is read through an enum of the same name (CO-RE matches
 * an enum with an enum only); its values are the kernel's */
enum nvmet_tcp_send_state___it { nvmet_tcp_send_state___it_first = 0 };

struct nvmet_tcp_cmd___it {
	struct nvmet_req___it req;
	__u32 offset;             /* bytes of the current PDU sent */
	enum nvmet_tcp_send_state___it state;
} __attribute__((preserve_access_index));

struct nvmet_tcp_queue___it {
	struct work_struct io_work;
	struct nvmet_tcp_cmd___it *snd_cmd;
	struct nvmet_sq___it nvme_sq;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);       /* tid inside nvmet_tcp_io_work */
	__type(value, __u64);     /* its queue */
} working SEC(".maps");

/* A read's C2H data PDU start, until its response goes out (LRU: a
 * response never sent, the connection torn down, ages out). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);       /* struct nvmet_tcp_cmd * */
	__type(value, __u64);
} data_start SEC(".maps");

static __always_inline struct it_event *queue_ev(__u8 type, struct nvmet_tcp_queue___it *q)
{
	struct it_event *e = ev_reserve(type, IT_LAYER_NVMET_TCP, 0);

	if (!e)
		return NULL;
	e->tcp.queue = (__u64)q;
	e->tcp.qid = BPF_CORE_READ(q, nvme_sq.qid);
	e->tcp.ctrl = BPF_CORE_READ(q, nvme_sq.ctrl, cntlid);
	return e;
}

static __always_inline int on_io_work(struct work_struct *w)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 q = (__u64)w - bpf_core_field_offset(struct nvmet_tcp_queue___it, io_work);

	bpf_map_update_elem(&working, &tid, &q, BPF_ANY);
	io_work_starts(w);
	return 0;
}

static __always_inline int on_io_work_return(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&working, &tid);
	io_work_ends();
	return 0;
}

static __always_inline int on_sock_send(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *qp = bpf_map_lookup_elem(&working, &tid);
	struct nvmet_tcp_queue___it *q;
	struct nvmet_tcp_cmd___it *cmd;
	struct it_event *e;
	__u16 cid = 0;
	int state;

	if (!qp)
		return 0;
	q = (void *)*qp;
	cmd = BPF_CORE_READ(q, snd_cmd);
	if (!cmd || BPF_CORE_READ(cmd, offset))
		return 0;
	state = BPF_CORE_READ(cmd, state);
	if (state != IT_TCPT_DATA_PDU && state != IT_TCPT_R2T && state != IT_TCPT_RESPONSE)
		return 0;
	/* a read's C2H data PDU is followed by its response: one event for
	 * both, at the response, the data's start kept till then (unless the
	 * host disabled SQ head updates: then no response follows) */
	if (state == IT_TCPT_DATA_PDU && !BPF_CORE_READ(q, nvme_sq.sqhd_disabled)) {
		__u64 now = bpf_ktime_get_ns();

		bpf_map_update_elem(&data_start, &cmd, &now, BPF_NOEXIST);
		return 0;
	}
	e = queue_ev(IT_EV_TCPT_SEND, q);
	if (!e)
		return 0;
	if (state == IT_TCPT_RESPONSE) {
		__u64 *t = bpf_map_lookup_elem(&data_start, &cmd);

		if (t) {
			e->tcp.end_ns = *t;
			bpf_map_delete_elem(&data_start, &cmd);
		}
	}
	bpf_probe_read_kernel(&cid, sizeof(cid), (char *)BPF_CORE_READ(cmd, req.cmd) + 2);
	e->tcp.cmd = (__u64)cmd + bpf_core_field_offset(struct nvmet_tcp_cmd___it, req);
	e->tcp.cid = cid;
	e->tcp.pdu = state;
	e->tcp.bytes = BPF_CORE_READ(cmd, req.transfer_len);
	io_work_delay(e);
	ev_submit(e);
	return 0;
}

static __always_inline int on_data_ready(struct sock *sk)
{
	struct nvmet_tcp_queue___it *q = (void *)((__u64)BPF_CORE_READ(sk, sk_user_data) & ~3ull);
	struct it_event *e;

	if (!q)
		return 0;
	e = queue_ev(IT_EV_TCPT_READY, q);
	if (e)
		ev_submit(e);
	return 0;
}

SEC("fexit/nvmet_tcp_io_work")
int BPF_PROG(io_work_fexit)
{
	return on_io_work_return();
}

SEC("kretprobe/nvmet_tcp_io_work")
int BPF_KRETPROBE(io_work_kretprobe)
{
	return on_io_work_return();
}

IT_FN_HOOK(nvmet_tcp_io_work, io_work, struct work_struct *, on_io_work)
IT_IO_WORK_QUEUE_HOOKS
IT_FN_HOOK(nvmet_tcp_data_ready, data_ready, struct sock *, on_data_ready)
IT_SOCK_SEND_HOOKS(on_sock_send)
