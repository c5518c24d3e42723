/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The event record: one fixed-size record per probe hit, shared by the BPF
 * programs (which emit it into the ring buffer), the trace file (which stores
 * it as is) and the analyzer (which stitches events into trails).
 *
 * Only __u* types: this header is included by BPF code (with vmlinux.h) and
 * by user space (with <linux/types.h>). Changing the layout means bumping
 * IT_TRACE_VERSION in trace_format.h.
 */
#ifndef IOTRAIL_EVENT_H
#define IOTRAIL_EVENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Which layer emitted an event. */
enum it_layer {
	IT_LAYER_BLOCK = 1,
	IT_LAYER_NVME = 2,
	IT_LAYER_SYSCALL = 3,
	IT_LAYER_NVME_TCP = 4,   /* NVMe/TCP initiator: PDU sends, data arrival */
	IT_LAYER_NVMET_TCP = 5,  /* NVMe/TCP target's transport: data arrival, PDU sends */
	IT_LAYER_NVMET = 6,      /* NVMe target core: commands of every fabric transport */
	IT_LAYER_UPROBE = 7,     /* user-space probes: --uprobe, --usdt */
	IT_LAYER_FS = 8,         /* file systems: extents snapshots (record --extents) */
};

/* Probe points. Letters are btt's where btt has one. */
enum it_event_type {
	IT_EV_NONE = 0,
	IT_EV_TASK = 1,           /* side table: tid -> comm (in .comm) */
	IT_EV_BIO_QUEUE = 2,      /* Q: bio submitted; id = bio; file identity below */
	IT_EV_BIO_BACKMERGE = 3,  /* M: bio merged at the back of a pending request; id = bio */
	IT_EV_BIO_FRONTMERGE = 4, /* F: bio merged at the front of a pending request; id = bio */
	IT_EV_BIO_SPLIT = 5,      /* X: id = new bio (front part), aux = parent bio,
				   *    sector = where the remainder now starts */
	IT_EV_BIO_COMPLETE = 6,   /* C of a bio-based device; on blk-mq disks only for bios
				   * that end in error before becoming a request (error set) */
	IT_EV_RQ_INSERT = 7,      /* I: request into scheduler/staging queue; id = request, aux = first bio */
	IT_EV_RQ_ISSUE = 8,       /* D: request to the driver; id = request, aux = first bio */
	IT_EV_RQ_REQUEUE = 9,     /* R: request back from the driver; id = request */
	IT_EV_RQ_COMPLETE = 10,   /* C: id = request, bytes = bytes completed by this call, error,
				   *    aux = its first bio not yet completed */
	IT_EV_RQ_MERGE = 11,      /* request id merged into another pending request (goes away) */
	/* NVMe driver layer (layer IT_LAYER_NVME), fields below */
	IT_EV_NVME_SUBMIT = 20,   /* nvme:nvme_setup_cmd: command built for request id */
	IT_EV_NVME_COMPLETE = 21, /* nvme:nvme_complete_rq: command of request id completed */
	IT_EV_NVME_RANGE = 22,    /* one range of a DSM (discard) command, after its SUBMIT */
	/* side table written by record at start (layer IT_LAYER_BLOCK), one per
	 * zone of a zoned device, from BLKREPORTZONE: dev, pid = zone index,
	 * sector = zone start, bytes = zone length (sectors), aux = capacity
	 * (sectors), id = write pointer (sector), flags = type | cond << 8 */
	IT_EV_ZONE_INFO = 23,
	IT_EV_NVME_SQ = 24,       /* nvme:nvme_sq: the driver handled the CQE of request id */
	/* side table written by record at start (layer IT_LAYER_NVME), one per
	 * NVMe controller in /sys/class/nvme: e->nvme.ctrl = its instance
	 * (nvmeN), e->nvme.cntlid, e->nvme.transport (enum it_nvme_transport) */
	IT_EV_NVME_CTRL = 25,
	/* NVMe target layer (layer IT_LAYER_NVMET), fields in struct it_nvmet_event */
	IT_EV_NVMET_INIT = 26,    /* nvmet:nvmet_req_init: the target parsed a command */
	IT_EV_NVMET_COMPLETE = 27, /* nvmet:nvmet_req_complete: the target completed it */
	IT_EV_NVMET_EXECUTE = 28, /* the backend (bdev, file) started the command */
	/* NVMe/TCP transport layers, fields in struct it_tcp_event */
	IT_EV_TCP_SEND = 29,      /* initiator: one nvme_tcp_try_send call sent request PDUs */
	IT_EV_TCP_READY = 30,     /* initiator: data arrived on a queue's socket */
	IT_EV_TCPT_READY = 31,    /* target: data arrived on a queue's socket */
	IT_EV_TCPT_SEND = 32,     /* target: a command's PDU (C2H data, R2T, response) starts out */
	/* side table written by record at the end (layer IT_LAYER_BLOCK), one
	 * per device of the trace's device table whose counters moved while
	 * recording: the I/Os the kernel itself counted as completed in
	 * /sys/block/DEV/stat over the recording: dev, ts = the end, sector =
	 * reads, aux = writes, id = flushes, bytes = discards. Since
	 * IT_EV_DISKSTATS_FROM: over the window from that record's ts to this
	 * one's (read right before the probes detach: every event before it
	 * in the file is older; those after it may be newer) */
	IT_EV_DISKSTATS = 33,
	/* the start of the diskstats window (layer IT_LAYER_BLOCK, one per
	 * trace, before the first probe event): ts = when the counters were
	 * read, right after the probes attached; flags IT_DSF_SCOPED when the
	 * block layer recorded only a scope's I/O (no reconciliation then) */
	IT_EV_DISKSTATS_FROM = 34,
	/* side record written by record at the end (layer IT_LAYER_BLOCK), with
	 * a task's predicate or sampling: what it left out, counted in the
	 * kernel (iotrail/task_counts.h). I/Os: id = passed the predicate,
	 * sector = skipped by the sampling, aux = rejected by the predicate;
	 * flags IT_TCF_CALLS: system calls, id = recorded (queued a kept
	 * I/O), sector = queued only I/Os not kept, aux = queued none;
	 * flags IT_TCF_CALLS | IT_TCF_URING (written before the calls'):
	 * io_uring requests, the same three and, in pid (low 32 bits) and tid
	 * (high), those handed to io-wq before a kept I/O */
	IT_EV_TASK_COUNTS = 35,
	IT_EV_TYPE_MAX
};

#define IT_DSF_SCOPED 1u /* IT_EV_DISKSTATS_FROM: -p, --comm or --cgroup was given */
#define IT_TCF_CALLS 1u  /* IT_EV_TASK_COUNTS: the system calls' counts */
#define IT_TCF_URING 2u  /* with IT_TCF_CALLS: the io_uring requests' counts */

/*
 * NVMe events reuse struct it_event; the fields mean (raw NVMe values, the
 * analyzer interprets them by opcode; src/analyze/nvme.c):
 *   all:      id = struct request * (links to the block trail), dev = the
 *             namespace's disk (0 for admin commands), bytes = blk_rq_bytes,
 *             tag = command id as sent (generation counter in the top 4
 *             bits: cid & 0xfff is the blk-mq tag), hwq = NVMe queue id
 *             (0 admin, else hctx + 1), op = NVMe opcode (not enum it_op),
 *             reserved = controller instance (nvmeN), flags = nsid.
 *             struct it_nvme_event (below, e->nvme) names them so.
 *   SUBMIT:   sector = CDW10 | CDW11 << 32 (the SLBA of read/write/zone
 *             commands), aux = CDW12 | CDW13 << 32 (NLB-1 in CDW12 bits
 *             0-15; zone send action in CDW13 bits 0-7); pid/tid = the
 *             task that set the command up.
 *   COMPLETE: sector = the completion's result (zone append: the LBA
 *             written), aux = retries | genctr << 8, error = NVMe status
 *             (status field >> 1: SCT << 8 | SC, DNR/More bits on top).
 *   RANGE:    sector = 512-byte sector, bytes = length, aux = range index.
 *   SQ:       (nvme:nvme_sq, PCIe transport only; optional) ts = when the
 *             driver handled the command's completion queue entry (irq or
 *             poll), before nvme_complete_rq; sector = SQ head pointer
 *             from the CQE (the controller has fetched the entries before
 *             it), aux = the driver's SQ tail at that moment, bytes = SQ
 *             size in entries (0: unknown), flags = 0, op = 0; tag, hwq,
 *             reserved as above. (tail - head) mod size = commands written
 *             to the SQ that the controller had not fetched yet.
 */

/* A controller's transport (IT_EV_NVME_CTRL), from /sys/class/nvme/nvmeN/transport. */
enum it_nvme_transport {
	IT_NVME_TR_OTHER = 0,
	IT_NVME_TR_PCIE = 1,
	IT_NVME_TR_TCP = 2,
	IT_NVME_TR_RDMA = 3,
	IT_NVME_TR_FC = 4,
	IT_NVME_TR_LOOP = 5,
};

/*
 * IT_EV_BIO_QUEUE also names the file whose data the bio carries, when its
 * first page is in a regular file's page cache (writeback, readahead and
 * page-cache misses, whichever thread submits them; src/layers/block/block.bpf.c):
 *   aux = the inode number (i_ino); 0: no such file (direct I/O from
 *         anonymous memory, the block device's own cache: metadata and
 *         journal, bios without data);
 *   tag | hwq << 16 = the file system's dev (i_sb->s_dev, kernel encoding
 *         major << 20 | minor, as in the syscall layer's file tags), valid
 *         when aux != 0 (tag and hwq otherwise mean nothing on Q).
 * Traces written before this carry aux = 0 on Q: no file.
 */
#define IT_EV_FILE_DEV(e) ((__u32)(e)->tag | (__u32)(e)->hwq << 16)

/* Operations, normalised from the kernel's REQ_OP_* (whose values are a
 * kernel detail) by the BPF side. */
enum it_op {
	IT_OP_READ = 0,
	IT_OP_WRITE = 1,
	IT_OP_FLUSH = 2,
	IT_OP_DISCARD = 3,
	IT_OP_SECURE_ERASE = 4,
	IT_OP_WRITE_ZEROES = 5,
	IT_OP_ZONE_OPEN = 6,
	IT_OP_ZONE_CLOSE = 7,
	IT_OP_ZONE_FINISH = 8,
	IT_OP_ZONE_APPEND = 9,
	IT_OP_ZONE_RESET = 10,
	IT_OP_ZONE_RESET_ALL = 11,
	IT_OP_DRV_IN = 12,
	IT_OP_DRV_OUT = 13,
	IT_OP_OTHER = 14,
	IT_OP_MAX
};

/* Request flags, normalised (the kernel's __REQ_* bit numbers move between
 * versions; the BPF side maps them with CO-RE enum relocations). */
#define IT_F_SYNC      (1u << 0)
#define IT_F_META      (1u << 1)
#define IT_F_PRIO      (1u << 2)
#define IT_F_NOMERGE   (1u << 3)
#define IT_F_IDLE      (1u << 4)
#define IT_F_FUA       (1u << 5)
#define IT_F_PREFLUSH  (1u << 6)
#define IT_F_RAHEAD    (1u << 7)
#define IT_F_BACKGROUND (1u << 8)
#define IT_F_NOWAIT    (1u << 9)
#define IT_F_POLLED    (1u << 10)
/* Not a REQ_* flag: the request is in the flush machinery's sequence
 * (RQF_FLUSH_SEQ; block/blk-flush.c) when the event fires. Its data part
 * (op write, bytes > 0) completes with this flag, then the request
 * completes again without it, 0 bytes, when its POSTFLUSH is done; the
 * flush command the machinery issues (op flush) carries it at I, D and C.
 * Traces recorded before this flag have it clear everywhere. */
#define IT_F_FLUSH_SEQ (1u << 15)
/* Not a REQ_* flag either: on C, the completion covers less than what is
 * left of the request (a partial completion; the request completes again).
 * Traces recorded before this flag have it clear everywhere. */
#define IT_F_PARTIAL   (1u << 14)

/*
 * An NVMe driver event (layer IT_LAYER_NVME): the bytes of struct it_event
 * by their NVMe names (see above for each type), as e->nvme in struct
 * it_event. The layout is it_event's; src/layer_table.c checks every
 * offset.
 */
struct it_nvme_event {
	__u64 ts_ns;
	__u64 rq;                 /* it_event.id: struct request *, links to the block trail */
	union {                   /* it_event.sector */
		__u64 cdw10_11;   /* SUBMIT: CDW10 | CDW11 << 32 */
		__u64 result;     /* COMPLETE: the completion's result */
		__u64 range_sector; /* RANGE: 512-byte sector */
		__u64 sq_head;    /* SQ: SQ head pointer from the CQE */
		__u64 cntlid;     /* CTRL: the controller's id, as its target knows it */
	};
	union {                   /* it_event.aux */
		__u64 cdw12_13;   /* SUBMIT: CDW12 | CDW13 << 32 */
		__u64 retries_genctr; /* COMPLETE: retries | genctr << 8 */
		__u64 range_index; /* RANGE */
		__u64 sq_tail;    /* SQ: the driver's SQ tail */
		__u64 transport;  /* CTRL: enum it_nvme_transport */
	};
	__u32 dev;                /* the namespace's disk; 0 for admin commands */
	__u32 bytes;              /* blk_rq_bytes; RANGE: length; SQ: SQ size (0: unknown) */
	__u32 pid;
	__u32 tid;
	__u32 nsid;               /* it_event.flags */
	__s16 status;             /* it_event.error; COMPLETE: NVMe status */
	__u16 cid;                /* it_event.tag: command id as sent */
	__u16 qid;                /* it_event.hwq: NVMe queue id, 0 admin */
	__u8  type;
	__u8  opcode;             /* it_event.op: NVMe opcode */
	__u8  layer;
	__u8  cpu_lo;
	__u16 ctrl;               /* it_event.reserved: controller instance (nvmeN) */
};

/*
 * An NVMe target event (layer IT_LAYER_NVMET, src/layers/nvmet/nvmet.bpf.c):
 * one command the target core (nvmet) parsed (INIT) and completed
 * (COMPLETE), on any fabric transport. (cntlid, qid, cid) is the command on
 * its connection: cid is the initiator's command id, copied unchanged.
 */
struct it_nvmet_event {
	__u64 ts_ns;
	__u64 req;                /* it_event.id: struct nvmet_req *, pairs INIT and COMPLETE */
	union {                   /* it_event.sector */
		__u64 cdw10_11;   /* INIT: CDW10 | CDW11 << 32 */
		__u64 result;     /* COMPLETE: the completion's result;
				   * EXECUTE: the backend (enum it_nvmet_backend) */
	};
	__u64 cdw12_13;           /* it_event.aux: CDW12 | CDW13 << 32 (both) */
	__u32 dev;                /* the namespace's backing disk; 0: none (file, admin) */
	__u32 bytes;              /* data length of the command (req->transfer_len) */
	__u32 pid;
	__u32 tid;
	__u32 nsid;               /* it_event.flags */
	__s16 status;             /* it_event.error; COMPLETE: NVMe status (SCT << 8 | SC) */
	__u16 cid;                /* it_event.tag: command id from the initiator */
	__u16 qid;                /* it_event.hwq: the queue's qid on its connection, 0 admin */
	__u8  type;
	__u8  opcode;             /* it_event.op: NVMe opcode */
	__u8  layer;
	__u8  cpu_lo;
	__u16 cntlid;             /* it_event.reserved: controller id (0: connect, no controller yet) */
};

/*
 * An NVMe/TCP transport event (layers IT_LAYER_NVME_TCP, initiator, and
 * IT_LAYER_NVMET_TCP, target; src/layers/nvme_tcp/). One connection is one
 * queue on each side, named (ctrl, qid) there: the initiator's controller
 * instance (nvmeN; its cntlid is in the controllers' table) and the
 * target's cntlid, and the same qid on both.
 *   TCP_SEND:  ts = the first byte of the request handed to TCP in this
 *              nvme_tcp_try_send call, end = the call's return; pdu = the
 *              request's send state then (enum it_tcp_host_state), the
 *              state at the return in IT_TCP_STATE_AFTER; IT_TCP_SENT_ALL
 *              when the request left the queue's send slot (all sent);
 *              bytes = the request's data length; status = the call's
 *              error (negative errno).
 *   TCP_READY, TCPT_READY: ts = data landed on the socket (sk_data_ready).
 *   TCPT_SEND: ts = the target starts a PDU of command cmd (its first
 *              byte); pdu = enum it_tcp_target_state; for a response that
 *              follows C2H data, end_ns = the data PDU's start (0: none;
 *              one event for both: a data PDU alone is an event only when
 *              no response follows, SQ head updates disabled).
 */
enum it_tcp_host_state {      /* the kernel's enum nvme_tcp_send_state */
	IT_TCP_CMD_PDU = 0, IT_TCP_H2C_PDU = 1, IT_TCP_DATA = 2, IT_TCP_DDGST = 3,
};
enum it_tcp_target_state {    /* the kernel's enum nvmet_tcp_send_state */
	IT_TCPT_DATA_PDU = 0, IT_TCPT_DATA = 1, IT_TCPT_R2T = 2, IT_TCPT_DDGST = 3,
	IT_TCPT_RESPONSE = 4,
};
#define IT_TCP_SENT_ALL (1u << 0)
#define IT_TCP_IO_WORK_WAIT (1u << 1) /* sent from io_work: io_work_wait_ns holds its delay */
#define IT_TCP_STATE_AFTER(s) (((__u32)(s) & 0xff) << 8)
#define IT_TCP_STATE_AFTER_OF(flags) (((flags) >> 8) & 0xff)

struct it_tcp_event {
	__u64 ts_ns;
	__u64 cmd;                /* it_event.id: initiator: struct request *; target:
				   * struct nvmet_req * (as the nvmet layer's); 0 for READY */
	__u64 end_ns;             /* it_event.sector: TCP_SEND: the call's return;
				   * TCPT_SEND response: its C2H data's start */
	__u64 queue;              /* it_event.aux: struct nvme_tcp_queue * / nvmet_tcp_queue * */
	__u32 io_work_wait_ns;    /* it_event.dev: with IT_TCP_IO_WORK_WAIT (sends), the delay
				   * of the io_work run that sent it: queued -> started */
	__u32 bytes;
	__u32 pid;
	__u32 tid;
	__u32 flags;              /* IT_TCP_* */
	__s16 status;             /* it_event.error */
	__u16 cid;                /* it_event.tag: command id as on the wire */
	__u16 qid;                /* it_event.hwq */
	__u8  type;
	__u8  pdu;                /* it_event.op: send state (see above) */
	__u8  layer;
	__u8  cpu_lo;
	__u16 ctrl;               /* it_event.reserved: initiator: instance; target: cntlid */
};

enum it_nvmet_backend { IT_NVMET_BDEV = 1, IT_NVMET_FILE = 2 };

/* 64 bytes, naturally aligned, no implicit padding. */
struct it_event {
	union {
		struct {
			__u64 ts_ns;      /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
			__u64 id;         /* identity on the trail: bio or request address */
			union {
				struct {
					__u64 sector; /* 512-byte sector */
					__u64 aux;    /* see enum it_event_type */
				};
				char comm[16];        /* IT_EV_TASK */
			};
			__u32 dev;        /* whole-disk dev_t, kernel encoding (major << 20 | minor) */
			__u32 bytes;
			__u32 pid;        /* tgid of the current task when the probe fired */
			__u32 tid;
			__u32 flags;      /* IT_F_* */
			__s16 error;      /* negative errno on completion */
			__u16 tag;        /* blk-mq tag (D, C); links to the NVMe command id */
			__u16 hwq;        /* blk-mq hardware queue index (D, C) */
			__u8  type;       /* enum it_event_type */
			__u8  op;         /* enum it_op */
			__u8  layer;      /* enum it_layer */
			__u8  cpu_lo;     /* CPU that emitted it (low 8 bits; diagnostics only) */
			__u16 reserved;
		};
		struct it_nvme_event nvme; /* layer IT_LAYER_NVME: the same bytes, NVMe names */
		struct it_nvmet_event nvmet; /* layer IT_LAYER_NVMET: the same bytes, target names */
		struct it_tcp_event tcp;     /* layers IT_LAYER_NVME_TCP, IT_LAYER_NVMET_TCP */
	};
};

#ifndef __VMLINUX_H__
/* Whether a block event ends an I/O, as `iotrail record` counts them for
 * its summary line; the analyzer's count agrees (src/analyze/stitch.c) but
 * for completions of I/Os issued before the trace started. Not one: a
 * partial completion, the data part of a flush sequence (its request
 * completes again) and the flush machinery's own flush command (counted
 * apart, as diskstats counts flushes apart); an -EAGAIN bio completion is
 * a REQ_NOWAIT bounce its submitter retries. */
static inline int it_event_ends_io(const struct it_event *e)
{
	return (e->type == IT_EV_RQ_COMPLETE && !(e->flags & (IT_F_FLUSH_SEQ | IT_F_PARTIAL))) ||
	       (e->type == IT_EV_BIO_COMPLETE && e->error != -11 /* -EAGAIN */);
}
#endif

#define IT_MINORBITS 20
#define IT_DEV_MAJOR(d) ((__u32)(d) >> IT_MINORBITS)
#define IT_DEV_MINOR(d) ((__u32)(d) & ((1u << IT_MINORBITS) - 1))
#define IT_MKDEV(ma, mi) (((__u32)(ma) << IT_MINORBITS) | (__u32)(mi))


/*
 * The event buffer of one CPU (bpf/ev_buf.bpf.h): a ring with one writer
 * at a time, mapped by the recorder (src/hooks.c: it_ev_bufs_map), whose
 * data is laid out as a BPF ring buffer's (an 8-byte header before each
 * record: its length, IT_EV_BUF_DISCARD on space to skip), so that
 * src/evring.c reads it as it reads a ring. The block, NVMe and NVMe/TCP
 * layers write their events into one (events.bpf.h), the syscall layer its
 * fixed-size records into another (syscall.bpf.c). One per CPU: the
 * producer's line, the consumer's line (the recorder moves cons), then
 * the data, mask + 1 bytes and IT_EV_BUF_SLACK past their end (room for
 * one record, the largest any layer writes there: the map's value size).
 */
#define IT_EV_BUF_DISCARD (1u << 30) /* BPF_RINGBUF_DISCARD_BIT */
#define IT_EV_BUF_REC (8 + sizeof(struct it_event)) /* header + event */
#define IT_EV_BUF_SLACK 256
struct it_ev_buf {
	__u64 prod;     /* bytes written: the next record starts at prod & mask */
	__u64 next;     /* prod once the record being written is whole */
	__u64 taken;    /* programs on this CPU between reserving and submitting
			 * (64 bits: a compare-and-exchange of 64 bits needs no
			 * newer BPF instruction set: ev_buf_take) */
	__u64 ringed;   /* events sent through the CPU's ring instead (nested, full) */
	__u32 since;    /* records since the fill was last looked at */
	__u32 pad0;
	__u64 slot_taken; /* slot is held (IT_EV_BUFS_CAS objects: events.bpf.h) */
	__u64 pad1[2];
	__u64 cons;     /* the consumer's position */
	__u64 pad2[7];
	/* block and NVMe events for the ring: [0] and [1] of programs
	 * interrupting the one that holds the buffer, [2] of one that found
	 * it full (events.bpf.h) */
	struct it_event nested[3];
	/* the event for the ring of a program that may be preempted (fentry,
	 * fexit) and found the buffer held or full */
	struct it_event slot;
	__u8 data[8];   /* really mask + 1 + IT_EV_BUF_SLACK bytes */
};
/* The map value's size for a data area of bytes (a power of two). */
#define IT_EV_BUF_VALUE_SIZE(bytes) \
	((__u32)(sizeof(struct it_ev_buf) - 8 + (bytes) + IT_EV_BUF_SLACK))

#endif
