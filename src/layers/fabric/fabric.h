/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The fabric join: an initiator's NVMe command and the target's command
 * that served it, matched on the wire's identity. The initiator's command
 * (nvme layer: controller instance, qid, cid = genctr << 12 | tag, set up
 * at S and completed at N) is on connection (cntlid, qid), where cntlid is
 * the controller's id from the recorded controllers' table (the host
 * tracepoints give the local nvmeN instance only); the target's (nvmet
 * layer: cntlid, qid, cid, parsed at TI, completed at TC) names the same
 * connection and copies the cid unchanged. A cid comes back within 16 uses
 * of its tag, so commands are matched by (cntlid, qid, cid) in order: the
 * target command with that key whose TI..TC lies inside the host's S..N
 * (one clock: both sides on one machine, e.g. loopback; or two machines,
 * it_fabric_cross: the target's times moved onto the initiator's clock by
 * a first guess, the window widened by its slack, the stages taken once
 * the clock is estimated from the matched I/Os, clock.h).
 *
 * Then each matched I/O splits into stages (a table, it_fabric_stages[]):
 * host.out + target + host.in == command (S -> N) exactly; with its
 * request's block trail, host.block before S and host.done after N. With
 * the NVMe/TCP transport layers in the trace (transport.h), each of the
 * three splits further, down to the network each way.
 * Unmatched commands are counted by reason, never dropped silently.
 *
 * Pure C, fed in stream order: it_fabric_host() for each host command
 * (the bus topic IT_BUS_NVME_CMD_DONE), it_fabric_event() for the
 * stream's events (controllers' table, target commands), it_fabric_settle()
 * once a chunk's events are all in (host commands are matched then: their
 * target side came before them in the stream), it_fabric_finish() at the
 * end. Memory: the open and unmatched target commands, and the host
 * commands of one chunk.
 */
#ifndef IOTRAIL_LAYERS_FABRIC_H
#define IOTRAIL_LAYERS_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "iotrail/event.h"
#include "analyze/hist.h"
#include "layers/fabric/clock.h"

/* Points of a matched I/O, in time order. The transport points (HS0 ..
 * HR) come from the nvme-tcp and nvmet-tcp layers, TX from the nvmet
 * layer's backend hooks; 0 where the trace has none. */
enum it_fabric_point {
	IT_FP_START = 0, /* the request's first block point (Q, else I, else D); 0: no trail */
	IT_FP_S,         /* host: command set up (nvme_setup_cmd) */
	IT_FP_HS0,       /* host: the capsule's first byte handed to TCP */
	IT_FP_HS1,       /* host: the capsule's last byte handed to TCP (send call returned) */
	IT_FP_TR,        /* target: data landed on its socket (first arrival after HS0) */
	IT_FP_TI,        /* target: command parsed (nvmet_req_init) */
	/* a write's data after an R2T (0 for every other command) */
	IT_FP_TR2T,      /* target: its (first) R2T PDU starts out */
	IT_FP_HR2T,      /* host: data landed on its socket (first arrival after TR2T) */
	IT_FP_HH0,       /* host: the first H2C data PDU's first byte handed to TCP */
	IT_FP_HH1,       /* host: the last H2C data's send call returned */
	IT_FP_TH,        /* target: the last data arrival on its socket before TX */
	IT_FP_TX,        /* target: the backend started it (bdev or file execute) */
	IT_FP_BQ,        /* target: its first bio queued on the backing device (block Q) */
	IT_FP_BD,        /* target: its last request issued to the backing device (D) */
	IT_FP_BC,        /* target: its last request completed by the backing device (C) */
	IT_FP_TC,        /* target: command completed (nvmet_req_complete) */
	IT_FP_TS0,       /* target: its first PDU after completion starts out (C2H data or response) */
	IT_FP_TSR,       /* target: the response PDU starts out */
	IT_FP_HR,        /* host: data landed on its socket (first arrival after TSR) */
	IT_FP_N,         /* host: command completed (nvme_complete_rq) */
	IT_FP_C,         /* host: request completed (block_rq_complete); 0: no trail */
	IT_FP_MAX
};

struct it_fabric_stage_def {
	const char *name;
	uint8_t from, to;        /* enum it_fabric_point */
	uint8_t share_of;        /* the stage whose sum its share is taken of */
	uint8_t parent;          /* the stage it is a part of; itself for a top one */
	const char *what;
};

/* Top stages, each followed by its parts where the transport was traced:
 * host.out = host.queue + host.send + net.out + target.recv, target =
 * target.queue + target.dev, host.in = target.sendq + target.send +
 * net.back + host.complete; for a write whose data came after an R2T,
 * target.queue = r2t.send + r2t.net + h2c.wait + h2c.send + h2c.net +
 * h2c.recv (the R2T round trip); and where the backend's bios were traced,
 * target.dev = tdev.submit + tdev.q2d + tdev.d2c + tdev.done (the backing
 * device's own block stages, inside the command). */
enum { IT_FS_HOST_BLOCK,
       IT_FS_HOST_OUT, IT_FS_HOST_QUEUE, IT_FS_HOST_SEND, IT_FS_NET_OUT, IT_FS_TARGET_RECV,
       IT_FS_TARGET, IT_FS_TARGET_QUEUE,
       IT_FS_R2T_SEND, IT_FS_R2T_NET, IT_FS_H2C_WAIT, IT_FS_H2C_SEND, IT_FS_H2C_NET,
       IT_FS_H2C_RECV,
       IT_FS_TARGET_DEV,
       IT_FS_TDEV_SUBMIT, IT_FS_TDEV_Q2D, IT_FS_TDEV_D2C, IT_FS_TDEV_DONE,
       IT_FS_HOST_IN, IT_FS_TARGET_SENDQ, IT_FS_TARGET_SEND, IT_FS_NET_BACK, IT_FS_HOST_COMPLETE,
       IT_FS_HOST_DONE, IT_FS_COMMAND, IT_FS_IO,
       IT_FS_REMOTE, /* initiator alone: capsule sent -> completed (target, network, receive) */
       IT_FS_MAX };
extern const struct it_fabric_stage_def it_fabric_stages[IT_FS_MAX];

/* Why a matched I/O has no transport stages. */
enum it_fabric_gap {
	IT_FG_HOST_SEND,      /* no send of its capsule on the host */
	IT_FG_TARGET_ARRIVAL, /* no data arrival on the target's queue before it was parsed */
	IT_FG_BACKEND,        /* no backend start (admin command, or backend not hooked) */
	IT_FG_TARGET_SEND,    /* no data or response PDU from the target */
	IT_FG_HOST_ARRIVAL,   /* no data arrival on the host's queue after the response */
	IT_FG_GONE,           /* it lasted longer than the transport events are kept */
	IT_FG_MAX
};
extern const char *const it_fabric_gap_names[IT_FG_MAX];

/* Why a command has no partner. */
enum it_fabric_reason {
	IT_FR_NO_TARGET_SIDE,    /* host command on a fabric controller, no target command */
	IT_FR_NO_HOST_SIDE,      /* target command no host command claimed */
	IT_FR_NO_CONTROLLER,     /* host controller not in the controllers' table (connected later) */
	IT_FR_OPCODE_MISMATCH,   /* same key, in the window, different opcode: both sides */
	IT_FR_TARGET_INCOMPLETE, /* target command parsed, not completed by the end */
	IT_FR_MAX
};
extern const char *const it_fabric_reason_names[IT_FR_MAX];

/* A host command, as the join needs it. */
struct it_fabric_host {
	uint64_t start, s, n, c;  /* IT_FP_START, S, N, C (start and c: 0 without a trail) */
	uint32_t bytes;
	uint16_t ctrl, qid, cid;  /* ctrl: the local instance (nvmeN) */
	uint16_t status;
	uint8_t opcode;
};

/* Group-by keys of the fabric tables (report --fabric-group-by): the
 * opcode, the I/O size as the block tables bucket it (powers of two), the
 * queue (qid), the initiator (the host's controller, nvmeN; a target
 * alone: the initiator's cntlid) and the target's machine (a merged file). */
enum it_fabric_key { IT_FK_OP, IT_FK_SIZE, IT_FK_QUEUE, IT_FK_INITIATOR, IT_FK_MACHINE, IT_FK_MAX };
extern const char *const it_fabric_key_names[IT_FK_MAX];
/* Parses "op,size,queue": 0, or -1 with one line in err. "none": no keys. */
int it_fabric_parse_keys(const char *s, uint8_t *keys, unsigned *nkeys, char *err, size_t len);

/* Which commands a group holds. */
enum it_fabric_side { IT_FSIDE_MATCHED = 1, IT_FSIDE_INITIATOR = 2, IT_FSIDE_TARGET = 3 };
#define IT_FABRIC_NO_MACHINE 0x7fff /* initiator alone: its target is not in the trace */

struct it_fabric_op {
	uint8_t opcode;
	bool admin;               /* admin queue (qid 0): admin opcodes */
	uint16_t cntlid;          /* target alone: the initiator's controller; else 0 */
	/* a group's key (it_fabric_results.groups; the keys not grouped on
	 * are 0, and an admin command keeps its opcode) */
	uint8_t side;             /* enum it_fabric_side */
	uint8_t size_class;       /* it_size_class() of the command's bytes */
	uint16_t qid;
	uint16_t ctrl;            /* matched, initiator alone: the host's controller (nvmeN) */
	uint16_t machine;         /* the target's machine; IT_FABRIC_NO_MACHINE */
	uint64_t count, bytes;
	uint64_t with_trail;      /* of which with their request's completed trail (host.done);
				   * host.block and io need its first point (Q or I) too */
	struct it_hist stage[IT_FS_MAX];
};

/* A connection's send backlog: for each I/O command, how many commands
 * set up before it on its queue had not started out on the socket when it
 * was set up (ntprof's S2 occupancy: nvme-tcp's request and send lists). */
#define IT_FABRIC_DEPTHS 65 /* 0 .. 63, and 64 or more */
struct it_fabric_queue {
	uint16_t ctrl, qid;       /* the initiator's controller instance, queue */
	uint64_t commands, sum, max;
	uint64_t depth[IT_FABRIC_DEPTHS];
};

struct it_fabric_results {
	uint64_t host_commands;   /* host commands on fabric controllers (I/O and admin) */
	uint64_t not_fabric;      /* host commands on PCIe (or other local) controllers: left out */
	uint64_t target_commands; /* target commands completed */
	uint64_t matched;
	uint64_t unmatched_host, unmatched_target;
	uint64_t unmatched_io;    /* of both, on I/O queues (the rest: admin, e.g. a keep-alive
				   * whose other side fell outside the recording) */
	uint64_t reason[IT_FR_MAX];
	uint64_t stage_sum_ok;    /* matched: host.out + target + host.in == command, in order */
	uint64_t io_sum_ok;       /*   and with a trail: host.block + command + host.done == io */
	bool transport;           /* the trace has NVMe/TCP transport events */
	uint64_t detailed;        /* matched I/O commands with every transport point */
	uint64_t detail_sum_ok;   /*   whose parts add up to host.out, target, host.in */
	uint64_t gap[IT_FG_MAX];  /* matched I/O commands without them, by first missing point */
	uint64_t dev_split;       /* split commands whose backend bios were traced too */
	uint64_t dev_sum_ok;      /*   whose tdev.* parts add up to target.dev */
	uint64_t r2t_split;       /* split writes whose data came after an R2T, every point seen */
	uint64_t r2t_sum_ok;      /*   whose r2t and h2c parts add up to target.queue */
	uint64_t dev_unlinked;    /* split commands of a bdev backend whose bios were not found
				   * (a bio or completion event lost; none in a trace
				   * without the block layer's target disk) */
	uint32_t controllers;     /* entries of the controllers' table */
	uint64_t waiting_max;     /* most completed target commands kept for a host command */
	struct it_fabric_op *ops; /* I/O opcodes, then admin ones, ascending */
	size_t nops;
	/* I/O commands without a target side, split by the initiator's
	 * transport alone: host.block, host.queue, host.send, remote,
	 * host.done (command, io); per opcode, ascending */
	struct it_fabric_op *alone;
	size_t nalone;
	/* I/O commands without a host side, per initiator controller (cntlid)
	 * and opcode: target, target.queue, target.dev (tdev.*), target.sendq,
	 * target.send */
	struct it_fabric_op *target_alone;
	size_t ntarget_alone;
	struct it_fabric_queue *queues; /* by controller, qid */
	size_t nqueues;
	/* io_work scheduling delay per queue, both sides (transport.h; the
	 * join's memory: valid until it_fabric_free) */
	const struct it_tcp_io_work *io_work;
	size_t nio_work;
	/* it_fabric_group_by: the same commands by those keys, each group
	 * with its side; sorted by side, then key */
	bool grouped;
	uint8_t keys[IT_FK_MAX];
	unsigned nkeys;
	struct it_fabric_op *groups;
	size_t ngroups;
	/* two machines (it_fabric_cross): the target's clock on the
	 * initiator's, estimated from the matched I/Os, and how causal the
	 * merged timeline is. Per matched I/O: out = the target received
	 * (TR, else TI) at or after the initiator sent (HS0, else S); back =
	 * the initiator received (HR, else N) at or after the target sent
	 * (TSR, else TC). */
	bool cross;
	struct it_clock_est clock;
	uint64_t causal_checked;  /* matched I/Os placed on the merged timeline */
	uint64_t noncausal_out, noncausal_back;
	uint64_t noncausal_within; /* of those, by no more than the uncertainty */
};

struct it_fabric;
struct it_tcp_io_work;
struct it_fabric *it_fabric_new(void);
/* A completed host NVMe command. 0, or -1 when memory ran out. */
int it_fabric_host(struct it_fabric *f, const struct it_fabric_host *h);
/* Any event; the join reads IT_EV_NVME_CTRL and the nvmet layer's. 0 or -1. */
int it_fabric_event(struct it_fabric *f, const struct it_event *e);
/* A completed block trail (IT_BUS_TRAIL_DONE): a target command's backend
 * bio when its Q came from the thread that was running the command's
 * backend (nvmet_bdev_execute_rw submits them there). 0 or -1. */
int it_fabric_trail(struct it_fabric *f, uint32_t dev, uint64_t q, uint64_t d, uint64_t c);
/* Two machines: the target commands come from target_machine, their
 * events' times already moved onto the initiator's clock by a first guess
 * (clock.h: it_clock_coarse, good to its slack_ns), so the join's windows
 * allow the slack. Matched I/Os are kept until it_fabric_finish, which
 * estimates the clock from them (the exchange: the CLOCK chunk's offset
 * and uncertainty, the fallback), moves their target points by it and
 * only then takes their stages. Call before any event. */
void it_fabric_cross(struct it_fabric *f, uint16_t target_machine,
		     const struct it_clock_guess *guess, bool have_exchange,
		     int64_t exchange_offset_ns, uint64_t exchange_uncertainty_ns);
/* Two machines: the clock estimate stored in the trace (CLOCK_EST, made
 * by record with this code): it_fabric_finish places the matched I/Os by
 * it instead of estimating; f takes e's windows. */
void it_fabric_use_estimate(struct it_fabric *f, struct it_clock_est *e);
/* Several target machines: the initiator's controller instance is served
 * by another machine than target_machine, or by none recorded (nvmf.h):
 * its commands are not matched here, they count as the initiator's alone.
 * 0, or -1 when memory ran out. */
int it_fabric_ctrl_elsewhere(struct it_fabric *f, uint16_t instance);
/* Groups the commands by these keys too (results.groups); call before
 * any event. */
void it_fabric_group_by(struct it_fabric *f, const uint8_t *keys, unsigned nkeys);
/* The machine of the events given next (target commands are keyed by
 * machine too: two targets may have the same cntlid). */
void it_fabric_feeding(struct it_fabric *f, uint16_t machine);
/* A target's chunk has been given whole (its trails are bound or let go);
 * host commands wait for it_fabric_settle. 0 or -1. */
int it_fabric_settle_target(struct it_fabric *f);
/* Every event before the host commands given so far has been given. 0 or -1. */
int it_fabric_settle(struct it_fabric *f);
/* Matches what is left, counts the rest. 0, or -1 when memory ran out. */
int it_fabric_finish(struct it_fabric *f);
const struct it_fabric_results *it_fabric_results(const struct it_fabric *f);
void it_fabric_free(struct it_fabric *f);

/* A matched command as the report counted it (for an exporter's
 * timeline): its host side, its points on the initiator's clock (the
 * target's on its own when two machines have no clock estimate; 0: not
 * seen), and the stages the report took of it (1u << stage); the target's
 * controller and machine. Valid during the callback only. */
struct it_fabric_matched {
	const struct it_fabric_host *h;
	const uint64_t *p;        /* [IT_FP_MAX] */
	uint32_t stages;
	uint16_t cntlid, target_machine;
};
typedef void (*it_fabric_matched_fn)(const struct it_fabric_matched *m, void *ctx);
/* Calls fn for each matched command once its stages are taken (as the
 * pass goes; two machines: in it_fabric_finish). */
void it_fabric_on_matched(struct it_fabric *f, it_fabric_matched_fn fn, void *ctx);
/* Whether a point is the target's (else the initiator's). */
bool it_fabric_point_on_target(int point);

/* The analysis layer's results (it_layer_fabric's state, for tests). */
const struct it_fabric_results *it_layer_fabric_results(const void *state);

#endif
