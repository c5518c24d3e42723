/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The NVMe/TCP transport events of a trace (layers nvme-tcp and nvmet-tcp,
 * struct it_tcp_event), kept so that the fabric join can ask, once it has
 * matched a host command to its target command: when did the host hand
 * the command's PDUs to TCP, when did the target send its data and
 * response, and when did data land on each side's socket.
 *
 * Sends are kept per command key (side, controller, qid, cid) in stream
 * order, and given to the first command whose window holds them; data
 * arrivals are kept per queue (side, controller, qid), sorted by time.
 * Both are let go HORIZON_NS after the latest event: a command that lasted
 * longer finds them gone, and the join counts it as such. Pure C.
 */
#ifndef IOTRAIL_LAYERS_FABRIC_TRANSPORT_H
#define IOTRAIL_LAYERS_FABRIC_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "iotrail/event.h"
#include "analyze/hist.h"

enum it_tcp_side { IT_TCP_HOST = 0, IT_TCP_TARGET = 1 };

/* What a lookup found. */
enum it_tcp_found {
	IT_TCP_FOUND = 0,
	IT_TCP_NONE,      /* no such event in the window */
	IT_TCP_GONE,      /* the window reaches back past what is still kept */
};

struct it_fabric_tcp;
struct it_fabric_tcp *it_fabric_tcp_new(void);
void it_fabric_tcp_free(struct it_fabric_tcp *t);
/* An event of the nvme-tcp or nvmet-tcp layer (others are ignored). 0 or -1
 * (no memory). */
int it_fabric_tcp_event(struct it_fabric_tcp *t, const struct it_event *e);

/* The host's sends of command (instance, qid, cid) set up at s and
 * completed at n: *first = the first byte of its capsule handed to TCP,
 * *capsule = the return of the call that sent the capsule's last byte
 * (with in-capsule data, the data's); a write's data after an R2T:
 * *h2c_first = the first byte of the first H2C data PDU handed to TCP,
 * *h2c_last = the return of the call that sent the last (both 0 without
 * an R2T). The sends are used up. */
enum it_tcp_found it_fabric_tcp_host_sent(struct it_fabric_tcp *t, uint16_t instance,
					  uint16_t qid, uint16_t cid, uint64_t s, uint64_t n,
					  uint64_t *first, uint64_t *capsule, uint64_t *h2c_first,
					  uint64_t *h2c_last);
/* The target's sends of command (cntlid, qid, cid) between ti and n: *first
 * = the first PDU after its completion tc (C2H data or the response; an
 * R2T comes before the backend and is not counted), *response = the
 * response PDU (or *first when there is none: SQ head pointer updates
 * disabled, the data PDU carries the success); *r2t = a write's first R2T
 * (between ti and tc; 0: none). Used up. */
enum it_tcp_found it_fabric_tcp_target_sent(struct it_fabric_tcp *t, uint16_t cntlid,
					    uint16_t qid, uint16_t cid, uint64_t ti, uint64_t tc,
					    uint64_t n, uint64_t *first, uint64_t *response,
					    uint64_t *r2t);
/* The first arrival of data on queue (side, ctrl, qid) in [from, to]. */
enum it_tcp_found it_fabric_tcp_arrival(const struct it_fabric_tcp *t, enum it_tcp_side side,
					uint16_t ctrl, uint16_t qid, uint64_t from, uint64_t to,
					uint64_t *at);
/* The last arrival in [from, to] instead (same returns). */
enum it_tcp_found it_fabric_tcp_arrival_last(const struct it_fabric_tcp *t, enum it_tcp_side side,
					     uint16_t ctrl, uint16_t qid, uint64_t from, uint64_t to,
					     uint64_t *at);
/* A queue's io_work scheduling delays (queued -> running), one per run
 * that sent a PDU (its sends carry it: IT_TCP_IO_WORK_WAIT; a run's
 * later sends, the same delay again, are not counted twice). */
struct it_tcp_io_work {
	uint8_t side;             /* enum it_tcp_side */
	uint16_t ctrl, qid;       /* host: controller instance; target: cntlid */
	uint32_t last;            /* the last run's delay (a run's sends share it) */
	struct it_hist wait;      /* ns */
};
/* The queues' io_work delays so far, by (side, ctrl, qid) as first seen. */
const struct it_tcp_io_work *it_fabric_tcp_io_work(const struct it_fabric_tcp *t, size_t *n);

/* Lets go of what is older than HORIZON_NS before the latest event. */
void it_fabric_tcp_prune(struct it_fabric_tcp *t);

#endif
