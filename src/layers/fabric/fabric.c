// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fabric join (fabric.h). Target commands live in a slot array: open
 * ones (parsed, not completed) through a map from their struct nvmet_req *,
 * completed ones in a FIFO per (cntlid, qid, cid) until a host command
 * claims them or a later host command with that key shows they had no host
 * side (they completed before it was even set up). A FIFO rarely holds
 * more than one command: a cid comes back after its command completed on
 * the host, and with another generation in its top bits.
 *
 * A target command no host command claims (its initiator is not in the
 * trace: another machine, or filtered out) would wait to the end; once
 * the waiting ones have doubled, those that completed HORIZON_NS before
 * the latest event are counted as without a host side and let go: a host
 * command set up before them would have had to last that long. Memory is
 * then the target commands of the last HORIZON_NS at most.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/hashmap.h"
#include "layers/fabric/fabric.h"
#include "layers/fabric/transport.h"

#define TOP(i, n, f, t, sh, w) [i] = { n, f, t, sh, i, w }
#define PART(i, n, f, t, p, w) [i] = { n, f, t, IT_FS_COMMAND, p, w }
const struct it_fabric_stage_def it_fabric_stages[IT_FS_MAX] = {
	TOP(IT_FS_HOST_BLOCK, "host.block", IT_FP_START, IT_FP_S, IT_FS_IO,
	    "request queued -> command set up (initiator's block layer and driver)"),
	TOP(IT_FS_HOST_OUT, "host.out", IT_FP_S, IT_FP_TI, IT_FS_COMMAND,
	    "command set up -> target parsed it (initiator send, network, target receive)"),
	PART(IT_FS_HOST_QUEUE, "host.queue", IT_FP_S, IT_FP_HS0, IT_FS_HOST_OUT,
	     "command set up -> its first byte to TCP (nvme-tcp send list, io_work)"),
	PART(IT_FS_HOST_SEND, "host.send", IT_FP_HS0, IT_FP_HS1, IT_FS_HOST_OUT,
	     "first -> last byte of the capsule to TCP (in-capsule data too)"),
	PART(IT_FS_NET_OUT, "net.out", IT_FP_HS1, IT_FP_TR, IT_FS_HOST_OUT,
	     "capsule sent -> data landed on the target's socket"),
	PART(IT_FS_TARGET_RECV, "target.recv", IT_FP_TR, IT_FP_TI, IT_FS_HOST_OUT,
	     "landed -> target parsed the command (nvmet-tcp io_work, PDU receive)"),
	TOP(IT_FS_TARGET, "target", IT_FP_TI, IT_FP_TC, IT_FS_COMMAND,
	    "target parsed -> target completed (execution on the backing device)"),
	PART(IT_FS_TARGET_QUEUE, "target.queue", IT_FP_TI, IT_FP_TX, IT_FS_TARGET,
	     "parsed -> backend started (a write's data: in-capsule, or R2T and H2C)"),
	PART(IT_FS_R2T_SEND, "r2t.send", IT_FP_TI, IT_FP_TR2T, IT_FS_TARGET_QUEUE,
	     "parsed -> its R2T starts out (a write's data buffer, the R2T queued)"),
	PART(IT_FS_R2T_NET, "r2t.net", IT_FP_TR2T, IT_FP_HR2T, IT_FS_TARGET_QUEUE,
	     "R2T starts out -> data landed on the initiator's socket"),
	PART(IT_FS_H2C_WAIT, "h2c.wait", IT_FP_HR2T, IT_FP_HH0, IT_FS_TARGET_QUEUE,
	     "landed -> the first H2C data PDU to TCP (nvme-tcp io_work, R2T handled)"),
	PART(IT_FS_H2C_SEND, "h2c.send", IT_FP_HH0, IT_FP_HH1, IT_FS_TARGET_QUEUE,
	     "first H2C byte -> the last data's send call returned"),
	PART(IT_FS_H2C_NET, "h2c.net", IT_FP_HH1, IT_FP_TH, IT_FS_TARGET_QUEUE,
	     "H2C data sent -> its last arrival on the target's socket"),
	PART(IT_FS_H2C_RECV, "h2c.recv", IT_FP_TH, IT_FP_TX, IT_FS_TARGET_QUEUE,
	     "landed -> backend started (nvmet-tcp io_work, data received)"),
	PART(IT_FS_TARGET_DEV, "target.dev", IT_FP_TX, IT_FP_TC, IT_FS_TARGET,
	     "backend started -> completed (the backing device)"),
	PART(IT_FS_TDEV_SUBMIT, "tdev.submit", IT_FP_TX, IT_FP_BQ, IT_FS_TARGET_DEV,
	     "backend started -> its first bio queued"),
	PART(IT_FS_TDEV_Q2D, "tdev.q2d", IT_FP_BQ, IT_FP_BD, IT_FS_TARGET_DEV,
	     "bio queued -> request issued to the backing device (its block layer: tags, scheduler)"),
	PART(IT_FS_TDEV_D2C, "tdev.d2c", IT_FP_BD, IT_FP_BC, IT_FS_TARGET_DEV,
	     "issued -> completed by the backing device"),
	PART(IT_FS_TDEV_DONE, "tdev.done", IT_FP_BC, IT_FP_TC, IT_FS_TARGET_DEV,
	     "the device completed -> the target completed the command"),
	TOP(IT_FS_HOST_IN, "host.in", IT_FP_TC, IT_FP_N, IT_FS_COMMAND,
	    "target completed -> initiator completed the command (response back)"),
	PART(IT_FS_TARGET_SENDQ, "target.sendq", IT_FP_TC, IT_FP_TS0, IT_FS_HOST_IN,
	     "completed -> its first PDU starts out (response queue, io_work)"),
	PART(IT_FS_TARGET_SEND, "target.send", IT_FP_TS0, IT_FP_TSR, IT_FS_HOST_IN,
	     "first PDU -> response PDU starts out (a read's C2H data)"),
	PART(IT_FS_NET_BACK, "net.back", IT_FP_TSR, IT_FP_HR, IT_FS_HOST_IN,
	     "response starts out -> data landed on the initiator's socket"),
	PART(IT_FS_HOST_COMPLETE, "host.complete", IT_FP_HR, IT_FP_N, IT_FS_HOST_IN,
	     "landed -> initiator completed the command (nvme-tcp io_work, receive)"),
	TOP(IT_FS_HOST_DONE, "host.done", IT_FP_N, IT_FP_C, IT_FS_IO,
	    "command completed -> request completed (initiator's block layer)"),
	TOP(IT_FS_COMMAND, "command", IT_FP_S, IT_FP_N, IT_FS_IO,
	    "command set up -> completed on the initiator (host.out + target + host.in)"),
	TOP(IT_FS_IO, "io", IT_FP_START, IT_FP_C, IT_FS_IO,
	    "request queued -> completed on the initiator (host.block + command + host.done)"),
	/* only where the target side is missing (it_fabric_results.alone) */
	TOP(IT_FS_REMOTE, "remote", IT_FP_HS1, IT_FP_N, IT_FS_COMMAND,
	    "capsule sent -> completed: the target, the network both ways, the receive"),
};
#undef TOP
#undef PART

const char *const it_fabric_gap_names[IT_FG_MAX] = {
	[IT_FG_HOST_SEND] = "no_host_send",
	[IT_FG_TARGET_ARRIVAL] = "no_target_arrival",
	[IT_FG_BACKEND] = "no_backend_start",
	[IT_FG_TARGET_SEND] = "no_target_send",
	[IT_FG_HOST_ARRIVAL] = "no_host_arrival",
	[IT_FG_GONE] = "transport_events_gone",
};

const char *const it_fabric_reason_names[IT_FR_MAX] = {
	[IT_FR_NO_TARGET_SIDE] = "no_target_side",
	[IT_FR_NO_HOST_SIDE] = "no_host_side",
	[IT_FR_NO_CONTROLLER] = "no_controller",
	[IT_FR_OPCODE_MISMATCH] = "opcode_mismatch",
	[IT_FR_TARGET_INCOMPLETE] = "target_incomplete",
};

const char *const it_fabric_key_names[IT_FK_MAX] = {
	[IT_FK_OP] = "op", [IT_FK_SIZE] = "size", [IT_FK_QUEUE] = "queue",
	[IT_FK_INITIATOR] = "initiator", [IT_FK_MACHINE] = "machine",
};

int it_fabric_parse_keys(const char *s, uint8_t *keys, unsigned *nkeys, char *err, size_t len)
{
	unsigned n = 0;

	if (!strcmp(s, "none")) {
		*nkeys = 0;
		return 0;
	}
	for (const char *p = s; *p;) {
		size_t l = strcspn(p, ",");
		unsigned k, j;
		for (k = 0; k < IT_FK_MAX; k++)
			if (strlen(it_fabric_key_names[k]) == l && !strncmp(p, it_fabric_key_names[k], l))
				break;
		if (k == IT_FK_MAX) {
			snprintf(err, len, "unknown fabric group-by key '%.*s' (keys: op, size, queue, "
				 "initiator, machine, or none)", (int)l, p);
			return -1;
		}
		for (j = 0; j < n && keys[j] != k; j++)
			;
		if (j < n) {
			snprintf(err, len, "fabric group-by key '%s' given twice", it_fabric_key_names[k]);
			return -1;
		}
		keys[n++] = (uint8_t)k;
		p += l;
		if (*p == ',' && !*++p) {
			snprintf(err, len, "fabric group-by list '%s' ends with a comma", s);
			return -1;
		}
	}
	if (!n) {
		snprintf(err, len, "empty fabric group-by list (keys: op, size, queue, initiator, "
			 "machine, or none)");
		return -1;
	}
	*nkeys = n;
	return 0;
}

#define NONE UINT32_MAX
#define HORIZON_NS (60ull * 1000000000ull) /* as the block layer's: beyond any I/O timeout */
#define PRUNE_MIN 4096
/* A target command's key: its machine (two targets can have the same
 * cntlid), connection and command id. */
#define KEY(machine, cntlid, qid, cid)                                                  \
	((uint64_t)(machine) << 49 | 1ull << 48 | (uint64_t)(cntlid) << 32 |              \
	 (uint64_t)(qid) << 16 | (uint64_t)(cid))

struct tcmd {
	uint64_t req;
	uint64_t ti, tx, tc;      /* tx: backend started, 0 unseen */
	uint64_t bq, bd, bc;      /* its backend bios: first Q, last D, last C; 0 unseen */
	uint8_t backend;          /* enum it_nvmet_backend at TX; 0 unseen */
	uint32_t bytes;           /* its data length */
	uint32_t next;            /* in its FIFO, or the free list */
	uint16_t cntlid, qid, cid;
	uint8_t opcode;
};

struct ctrl {
	uint16_t instance, cntlid;
	uint8_t transport;
};

/* A matched I/O of two machines, kept until the clock is known: its
 * points, target ones on the first guess's clock. */
struct kept {
	struct it_fabric_host h;
	uint64_t p[IT_FP_MAX];
	int8_t gap;               /* transport_points(): -1 split, else the gap; -2 not tried */
	uint8_t backend;
};

/* Two machines: the offset the matched I/Os tell as the pass goes (their
 * target points as moved by coarse), for finding each I/O's arrivals. An
 * I/O's capsule out (HS0), its parse on the target (TI), its response out
 * (TSR) and its completion (N) each belong to it alone and bound the
 * offset to [HS0 - TI, N - TSR]; the fastest I/O of this window and the
 * last one (1 s of the initiator's clock) gives the tightest. */
struct track_sample {
	uint64_t at, rtt;         /* the initiator's time (HS0); the round trip */
	int64_t delta;            /* the offset still to add to a moved target time */
};
struct track {
	struct track_sample cur, prev;
	uint64_t window;          /* the current window's start */
};

struct it_fabric {
	struct it_fabric_results r;
	int err;
	bool finished;
	struct ctrl *ctrls;
	uint32_t nctrls, ctrlcap;
	struct tcmd *t;
	uint32_t nt, tcap, tfree;
	struct it_map open;       /* struct nvmet_req * -> slot */
	struct it_map fifo;       /* KEY -> first slot of its FIFO */
	struct it_fabric_tcp *tcp; /* the transport events */
	/* backend bios: the command each thread's backend is running (tid ->
	 * slot), the Q events seen in it (Q time -> slot), the trails that
	 * completed before their Q was fed (Q time -> index in early[]) */
	struct it_map running, bound, early_q;
	struct { uint32_t dev, next; uint64_t q, d, c; } *early; /* next: same Q (a split bio) */
	size_t nearly, earlycap;
	uint32_t bound_prune_at;
	bool backend_bios;        /* a backend bio was seen: the target's disk is recorded */
	struct backlog *bl;       /* per initiator queue */
	size_t nbl;
	struct it_fabric_host *pending;
	size_t npending, pcap;
	struct it_fabric_op *op[2 * 256]; /* admin * 256 + opcode */
	struct it_fabric_op *alone[256];  /* initiator alone, I/O opcodes */
	struct it_fabric_op **talone;     /* target alone, by (cntlid, opcode) */
	size_t ntalone;
	uint8_t keymask;                  /* 1 << enum it_fabric_key grouped on; */
	struct it_map group_index;        /* group_key() -> index in groups */
	struct it_fabric_op **groups;
	size_t ngroups;
	uint64_t latest;          /* the latest event's time */
	/* two machines (it_fabric_cross) */
	uint16_t feeding;         /* the machine of the events being given */
	uint16_t target_machine;  /* the machine serving the host's controllers */
	bool stored;              /* stored_est is the estimate (it_fabric_use_estimate) */
	struct it_clock_est stored_est;
	uint16_t *elsewhere;      /* controller instances another machine serves */
	size_t nelsewhere;
	struct it_clock_guess guess; /* what the target events' times were moved by */
	uint64_t slack;           /* how far that can be off: the join's windows allow it */
	bool have_exchange;
	int64_t exchange_offset;
	uint64_t exchange_uncertainty;
	struct kept *kept;
	size_t nkept, keptcap;
	struct track track;       /* the clock as the I/Os so far tell it */
	uint32_t waiting, prune_at; /* completed target commands in the FIFOs; when to prune */
	it_fabric_matched_fn on_matched;
	void *on_matched_ctx;
};

/* A queue's I/O commands in setup order, (S, HS0), until every later
 * command's backlog is counted. Counted once S is BACKLOG_LAG_NS behind
 * the latest event: a command set up before it and completed later than
 * that is left out of its count. */
#define BACKLOG_LAG_NS (1000000000ull)
struct backlog {
	struct it_fabric_queue q;
	struct { uint64_t s, hs0; } *v;
	uint32_t start, next, n, cap; /* kept [start, n), counted [start, next) */
};

struct it_fabric *it_fabric_new(void)
{
	struct it_fabric *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->tfree = NONE;
	f->prune_at = PRUNE_MIN;
	f->bound_prune_at = PRUNE_MIN;
	if (it_map_init(&f->open, 8) || it_map_init(&f->fifo, 8) || !(f->tcp = it_fabric_tcp_new()) ||
	    it_map_init(&f->running, 4) || it_map_init(&f->bound, 8) || it_map_init(&f->early_q, 8) ||
	    it_map_init(&f->group_index, 4)) {
		it_fabric_free(f);
		return NULL;
	}
	return f;
}

void it_fabric_free(struct it_fabric *f)
{
	if (!f)
		return;
	for (int k = 0; k < 2 * 256; k++)
		if (f->op[k]) {
			for (int s = 0; s < IT_FS_MAX; s++)
				it_hist_free(&f->op[k]->stage[s]);
			free(f->op[k]);
		}
	for (int k = 0; k < 256; k++)
		if (f->alone[k]) {
			for (int s = 0; s < IT_FS_MAX; s++)
				it_hist_free(&f->alone[k]->stage[s]);
			free(f->alone[k]);
		}
	for (size_t k = 0; k < f->r.nops; k++)
		for (int s = 0; s < IT_FS_MAX; s++)
			it_hist_free(&f->r.ops[k].stage[s]);
	for (size_t k = 0; k < f->r.nalone; k++)
		for (int s = 0; s < IT_FS_MAX; s++)
			it_hist_free(&f->r.alone[k].stage[s]);
	for (size_t k = 0; k < f->ntalone; k++) {
		for (int s = 0; s < IT_FS_MAX; s++)
			it_hist_free(&f->talone[k]->stage[s]);
		free(f->talone[k]);
	}
	free(f->talone);
	for (size_t k = 0; k < f->ngroups; k++) {
		for (int s = 0; s < IT_FS_MAX; s++)
			it_hist_free(&f->groups[k]->stage[s]);
		free(f->groups[k]);
	}
	free(f->groups);
	it_map_free(&f->group_index);
	for (size_t k = 0; k < f->r.ngroups; k++)
		for (int s = 0; s < IT_FS_MAX; s++)
			it_hist_free(&f->r.groups[k].stage[s]);
	free(f->r.groups);
	for (size_t k = 0; k < f->r.ntarget_alone; k++)
		for (int s = 0; s < IT_FS_MAX; s++)
			it_hist_free(&f->r.target_alone[k].stage[s]);
	free(f->r.target_alone);
	free(f->r.ops);
	free(f->r.alone);
	free(f->ctrls);
	free(f->t);
	free(f->pending);
	it_map_free(&f->open);
	it_map_free(&f->fifo);
	it_fabric_tcp_free(f->tcp);
	for (size_t k = 0; k < f->nbl; k++)
		free(f->bl[k].v);
	free(f->bl);
	free(f->r.queues);
	it_map_free(&f->running);
	it_map_free(&f->bound);
	it_map_free(&f->early_q);
	free(f->early);
	free(f->kept);
	free(f->elsewhere);
	it_clock_free(&f->stored_est);
	it_clock_free(&f->r.clock);
	free(f);
}

void it_fabric_cross(struct it_fabric *f, uint16_t target_machine,
		     const struct it_clock_guess *guess, bool have_exchange,
		     int64_t exchange_offset_ns, uint64_t exchange_uncertainty_ns)
{
	f->r.cross = true;
	f->target_machine = target_machine;
	f->guess = *guess;
	f->slack = guess->slack_ns;
	f->have_exchange = have_exchange;
	f->exchange_offset = exchange_offset_ns;
	f->exchange_uncertainty = exchange_uncertainty_ns;
}

void it_fabric_use_estimate(struct it_fabric *f, struct it_clock_est *e)
{
	it_clock_free(&f->stored_est);
	f->stored_est = *e;
	f->stored = true;
	e->window = NULL;
}

int it_fabric_ctrl_elsewhere(struct it_fabric *f, uint16_t instance)
{
	uint16_t *p = realloc(f->elsewhere, (f->nelsewhere + 1) * sizeof(*p));

	if (!p)
		return f->err = -1;
	f->elsewhere = p;
	f->elsewhere[f->nelsewhere++] = instance;
	return 0;
}

static bool served_elsewhere(const struct it_fabric *f, uint16_t instance)
{
	for (size_t k = 0; k < f->nelsewhere; k++)
		if (f->elsewhere[k] == instance)
			return true;
	return false;
}

void it_fabric_group_by(struct it_fabric *f, const uint8_t *keys, unsigned nkeys)
{
	f->r.grouped = true;
	f->r.nkeys = nkeys < IT_FK_MAX ? nkeys : IT_FK_MAX;
	memcpy(f->r.keys, keys, f->r.nkeys);
	f->keymask = 0;
	for (unsigned k = 0; k < f->r.nkeys; k++)
		f->keymask |= 1u << keys[k];
}

void it_fabric_feeding(struct it_fabric *f, uint16_t machine)
{
	f->feeding = machine;
}

/* ---- target commands ---- */

static uint32_t tcmd_new(struct it_fabric *f)
{
	uint32_t i = f->tfree;

	if (i != NONE) {
		f->tfree = f->t[i].next;
		return i;
	}
	if (f->nt == f->tcap) {
		uint32_t cap = f->tcap ? 2 * f->tcap : 256;
		struct tcmd *t = realloc(f->t, cap * sizeof(*t));
		if (!t) {
			f->err = -1;
			return NONE;
		}
		f->t = t;
		f->tcap = cap;
	}
	return f->nt++;
}

static void tcmd_free(struct it_fabric *f, uint32_t i)
{
	f->t[i].next = f->tfree;
	f->tfree = i;
}

/* A command without a partner, on queue qid (0: admin) of its side. */
static void unmatched(struct it_fabric *f, enum it_fabric_reason why, bool host, uint16_t qid)
{
	f->r.reason[why]++;
	f->r.unmatched_io += qid != 0;
	if (host)
		f->r.unmatched_host++;
	else
		f->r.unmatched_target++;
}

static void target_init(struct it_fabric *f, const struct it_event *e)
{
	uint32_t i = it_map_take(&f->open, e->nvmet.req);

	if (i != NONE) /* the request came back: its completion was lost */
		unmatched(f, IT_FR_TARGET_INCOMPLETE, false, f->t[i].qid);
	else if ((i = tcmd_new(f)) == NONE)
		return;
	f->t[i] = (struct tcmd){ .req = e->nvmet.req, .ti = e->ts_ns, .next = NONE,
				 .qid = e->nvmet.qid, .bytes = e->nvmet.bytes };
	if (it_map_put(&f->open, e->nvmet.req, i))
		f->err = -1;
}

static void target_execute(struct it_fabric *f, const struct it_event *e)
{
	uint32_t i = it_map_get(&f->open, e->nvmet.req);

	if (i == NONE)
		return;
	if (!f->t[i].tx) {
		f->t[i].tx = e->ts_ns;
		f->t[i].backend = (uint8_t)e->nvmet.result;
	}
	if (e->tid && it_map_put(&f->running, e->tid, i))
		f->err = -1;
}

/* A backend bio's points into its target command (still open: the bio
 * completes before the command does). */
static void bio_points(struct it_fabric *f, uint32_t i, uint64_t q, uint64_t d, uint64_t c)
{
	struct tcmd *t = &f->t[i];

	if (!t->bq || q < t->bq)
		t->bq = q;
	if (d > t->bd)
		t->bd = d;
	if (c > t->bc)
		t->bc = c;
}

/* Backend bios are bound to their command by their Q time until that is
 * BIO_HORIZON_NS behind the latest event (a command that lasts longer
 * keeps its target.dev unsplit): the map holds a few seconds of them. */
#define BIO_HORIZON_NS (10ull * 1000000000ull)

static void prune_bound(struct it_fabric *f)
{
	uint64_t before = f->latest > BIO_HORIZON_NS ? f->latest - BIO_HORIZON_NS : 0;

	for (uint32_t k = 0; k <= f->bound.mask; k++)
		while (f->bound.slots[k].key && f->bound.slots[k].key < before)
			it_map_take(&f->bound, f->bound.slots[k].key);
	f->bound_prune_at = f->bound.count * 2 > PRUNE_MIN ? f->bound.count * 2 : PRUNE_MIN;
}

/* A bio queued: by a thread whose backend runs a command, on its disk? */
static void bio_queued(struct it_fabric *f, const struct it_event *e)
{
	uint32_t i = it_map_get(&f->running, e->tid), k;

	if (i == NONE || f->t[i].tx > e->ts_ns || !f->t[i].req || it_map_get(&f->open, f->t[i].req) != i)
		return;
	/* its trails (a split bio has several, one Q) that came first: same chunk */
	for (k = it_map_take(&f->early_q, e->ts_ns); k != NONE; k = f->early[k].next)
		if (f->early[k].dev == e->dev)
			bio_points(f, i, f->early[k].q, f->early[k].d, f->early[k].c);
	f->backend_bios = true;
	/* and the ones to come */
	if (it_map_put(&f->bound, e->ts_ns, i))
		f->err = -1;
	if (f->bound.count >= f->bound_prune_at)
		prune_bound(f);
}

int it_fabric_trail(struct it_fabric *f, uint32_t dev, uint64_t q, uint64_t d, uint64_t c)
{
	uint32_t i;

	if (!q || !d || !c)
		return f->err;
	i = it_map_get(&f->bound, q); /* kept: a split bio's other parts have its Q too */
	/* the slot may serve a later command by now: it started after this Q */
	if (i != NONE && f->t[i].tx && q >= f->t[i].tx) {
		bio_points(f, i, q, d, c);
		return f->err;
	}
	/* its Q may be in the chunk being read: kept until the chunk is settled */
	if (f->nearly == f->earlycap) {
		size_t cap = f->earlycap ? 2 * f->earlycap : 256;
		void *p = realloc(f->early, cap * sizeof(*f->early));
		if (!p)
			return f->err = -1;
		f->early = p;
		f->earlycap = cap;
	}
	f->early[f->nearly] = (typeof(*f->early)){ dev, it_map_get(&f->early_q, q), q, d, c };
	if (it_map_put(&f->early_q, q, (uint32_t)f->nearly++))
		f->err = -1;
	return f->err;
}

static void target_complete(struct it_fabric *f, const struct it_event *e)
{
	uint32_t i = it_map_take(&f->open, e->nvmet.req), j;
	uint64_t key = KEY(f->feeding, e->nvmet.cntlid, e->nvmet.qid, e->nvmet.cid);

	/* parsed before the trace started: TI stays 0, it cannot match */
	if (i == NONE) {
		if ((i = tcmd_new(f)) == NONE)
			return;
		f->t[i] = (struct tcmd){ .req = e->nvmet.req };
	}
	struct tcmd *t = &f->t[i];
	t->tc = e->ts_ns;
	t->next = NONE;
	/* the completion's view: a connect command has its controller by now */
	t->cntlid = e->nvmet.cntlid;
	t->qid = e->nvmet.qid;
	t->cid = e->nvmet.cid;
	t->opcode = e->nvmet.opcode;
	if (e->nvmet.bytes > t->bytes)
		t->bytes = e->nvmet.bytes;
	f->r.target_commands++;
	if (++f->waiting > f->r.waiting_max)
		f->r.waiting_max = f->waiting;
	j = it_map_get(&f->fifo, key);
	if (j == NONE) {
		if (it_map_put(&f->fifo, key, i))
			f->err = -1;
		return;
	}
	while (f->t[j].next != NONE)
		j = f->t[j].next;
	f->t[j].next = i;
}

static void controller(struct it_fabric *f, const struct it_event *e)
{
	for (uint32_t k = 0; k < f->nctrls; k++)
		if (f->ctrls[k].instance == e->nvme.ctrl) {
			f->ctrls[k].cntlid = (uint16_t)e->nvme.cntlid;
			f->ctrls[k].transport = (uint8_t)e->nvme.transport;
			return;
		}
	if (f->nctrls == f->ctrlcap) {
		uint32_t cap = f->ctrlcap ? 2 * f->ctrlcap : 8;
		struct ctrl *c = realloc(f->ctrls, cap * sizeof(*c));
		if (!c) {
			f->err = -1;
			return;
		}
		f->ctrls = c;
		f->ctrlcap = cap;
	}
	f->ctrls[f->nctrls++] = (struct ctrl){ (uint16_t)e->nvme.ctrl, (uint16_t)e->nvme.cntlid,
					       (uint8_t)e->nvme.transport };
	f->r.controllers = f->nctrls;
}

int it_fabric_event(struct it_fabric *f, const struct it_event *e)
{
	if (e->ts_ns > f->latest)
		f->latest = e->ts_ns;
	if (e->layer == IT_LAYER_NVMET) {
		if (e->type == IT_EV_NVMET_INIT)
			target_init(f, e);
		else if (e->type == IT_EV_NVMET_COMPLETE)
			target_complete(f, e);
		else if (e->type == IT_EV_NVMET_EXECUTE)
			target_execute(f, e);
	} else if (e->layer == IT_LAYER_BLOCK && e->type == IT_EV_BIO_QUEUE) {
		if (f->running.count)
			bio_queued(f, e);
	} else if (e->layer == IT_LAYER_NVME_TCP || e->layer == IT_LAYER_NVMET_TCP) {
		if (it_fabric_tcp_event(f->tcp, e))
			f->err = -1;
		f->r.transport = true;
	} else if (e->layer == IT_LAYER_NVME && e->type == IT_EV_NVME_CTRL) {
		controller(f, e);
	}
	return f->err;
}

/* ---- host commands ---- */

int it_fabric_host(struct it_fabric *f, const struct it_fabric_host *h)
{
	if (h->n > f->latest)
		f->latest = h->n;
	if (f->npending == f->pcap) {
		size_t cap = f->pcap ? 2 * f->pcap : 256;
		struct it_fabric_host *p = realloc(f->pending, cap * sizeof(*p));
		if (!p) {
			f->err = -1;
			return -1;
		}
		f->pending = p;
		f->pcap = cap;
	}
	f->pending[f->npending++] = *h;
	return 0;
}

/* A new, empty opcode entry; NULL (the error kept) when memory ran out. */
static struct it_fabric_op *op_new(struct it_fabric *f, bool admin, uint8_t opcode,
				   uint16_t cntlid)
{
	struct it_fabric_op *o = calloc(1, sizeof(*o));

	if (!o) {
		f->err = -1;
		return NULL;
	}
	o->opcode = opcode;
	o->admin = admin;
	o->cntlid = cntlid;
	for (int s = 0; s < IT_FS_MAX; s++)
		it_hist_init(&o->stage[s]);
	return o;
}

static struct it_fabric_op *op_in(struct it_fabric *f, struct it_fabric_op **table, bool admin,
				   uint8_t opcode)
{
	if (!table[opcode])
		table[opcode] = op_new(f, admin, opcode, 0);
	return table[opcode];
}

static struct it_fabric_op *op_of(struct it_fabric *f, bool admin, uint8_t opcode)
{
	return op_in(f, f->op + admin * 256, admin, opcode);
}

/* The group of a command of key k (its side, opcode, bytes' size class,
 * qid, initiator, machine): the keys not grouped on cleared, an admin
 * command's opcode kept (a keep-alive's latency is the target's timer, not
 * its load: never in an I/O group). NULL when not grouping, or (the error
 * kept) when memory ran out. */
static struct it_fabric_op *group_of(struct it_fabric *f, struct it_fabric_op k)
{
	struct it_fabric_op *g;
	uint64_t packed;
	uint32_t i;

	if (!f->r.grouped)
		return NULL;
	if (!(f->keymask & 1u << IT_FK_OP) && !k.admin)
		k.opcode = 0;
	if (!(f->keymask & 1u << IT_FK_SIZE))
		k.size_class = 0;
	if (!(f->keymask & 1u << IT_FK_QUEUE))
		k.qid = 0;
	if (!(f->keymask & 1u << IT_FK_INITIATOR))
		k.ctrl = k.cntlid = 0;
	if (!(f->keymask & 1u << IT_FK_MACHINE))
		k.machine = 0;
	/* side 2 bits, admin 1, opcode 8, size class 6, qid 16, initiator
	 * 16 (the host's instance, or a target alone's cntlid), machine 15 */
	packed = (uint64_t)k.side << 62 | (uint64_t)k.admin << 61 | (uint64_t)k.opcode << 53 |
		 (uint64_t)(k.size_class & 63) << 47 | (uint64_t)k.qid << 31 |
		 (uint64_t)(k.side == IT_FSIDE_TARGET ? k.cntlid : k.ctrl) << 15 | (k.machine & 0x7fff);
	if ((i = it_map_get(&f->group_index, packed)) != IT_MAP_NONE)
		return f->groups[i];
	void *v = realloc(f->groups, (f->ngroups + 1) * sizeof(*f->groups));
	if (!v) {
		f->err = -1;
		return NULL;
	}
	f->groups = v;
	if (!(g = op_new(f, k.admin, k.opcode, k.cntlid)))
		return NULL;
	g->side = k.side;
	g->size_class = k.size_class;
	g->qid = k.qid;
	g->ctrl = k.ctrl;
	g->machine = k.machine;
	if (it_map_put(&f->group_index, packed, (uint32_t)f->ngroups)) {
		f->err = -1;
		free(g);
		return NULL;
	}
	f->groups[f->ngroups++] = g;
	return g;
}

/* A host command's group. */
static struct it_fabric_op *host_group(struct it_fabric *f, const struct it_fabric_host *h,
				       enum it_fabric_side side)
{
	return group_of(f, (struct it_fabric_op){
		.side = side, .admin = h->qid == 0, .opcode = h->opcode,
		.size_class = (uint8_t)it_size_class(h->bytes), .qid = h->qid, .ctrl = h->ctrl,
		.machine = side == IT_FSIDE_MATCHED ? f->target_machine : IT_FABRIC_NO_MACHINE });
}

/* ---- send backlog per initiator queue ---- */

static void backlog_add(struct it_fabric *f, uint16_t ctrl, uint16_t qid, uint64_t s, uint64_t hs0)
{
	struct backlog *b = NULL;
	uint32_t k;

	for (size_t i = 0; i < f->nbl && !b; i++)
		if (f->bl[i].q.ctrl == ctrl && f->bl[i].q.qid == qid)
			b = &f->bl[i];
	if (!b) {
		void *p = realloc(f->bl, (f->nbl + 1) * sizeof(*f->bl));
		if (!p) {
			f->err = -1;
			return;
		}
		f->bl = p;
		b = memset(&f->bl[f->nbl++], 0, sizeof(*b));
		b->q.ctrl = ctrl;
		b->q.qid = qid;
	}
	if (b->n == b->cap) {
		if (b->start > b->cap / 2) { /* the counted ones no one needs: out */
			memmove(b->v, b->v + b->start, (b->n - b->start) * sizeof(*b->v));
			b->n -= b->start;
			b->next -= b->start;
			b->start = 0;
		} else {
			uint32_t cap = b->cap ? 2 * b->cap : 64;
			void *p = realloc(b->v, cap * sizeof(*b->v));
			if (!p) {
				f->err = -1;
				return;
			}
			b->v = p;
			b->cap = cap;
		}
	}
	/* in setup order: completions come nearly in it */
	for (k = b->n++; k > b->next && b->v[k - 1].s > s; k--)
		b->v[k] = b->v[k - 1];
	b->v[k].s = s;
	b->v[k].hs0 = hs0;
}

/* Counts the backlog of the commands set up before cut. */
static void backlog_count(struct it_fabric *f, uint64_t cut)
{
	for (size_t i = 0; i < f->nbl; i++) {
		struct backlog *b = &f->bl[i];

		for (; b->next < b->n && b->v[b->next].s < cut; b->next++) {
			uint64_t s = b->v[b->next].s, depth = 0;
			for (uint32_t j = b->start; j < b->next; j++)
				depth += b->v[j].hs0 > s;
			b->q.commands++;
			b->q.sum += depth;
			if (depth > b->q.max)
				b->q.max = depth;
			b->q.depth[depth < IT_FABRIC_DEPTHS - 1 ? depth : IT_FABRIC_DEPTHS - 1]++;
		}
		/* one that started out before the next uncounted command was set
		 * up is in no later command's backlog */
		while (b->start < b->next &&
		       b->v[b->start].hs0 <= (b->next < b->n ? b->v[b->next].s : cut))
			b->start++;
	}
}

static void add_stage(struct it_fabric *f, struct it_fabric_op *o, int s, const uint64_t *p)
{
	const struct it_fabric_stage_def *d = &it_fabric_stages[s];

	if (p[d->from] && p[d->to] && p[d->to] >= p[d->from] &&
	    it_hist_add(&o->stage[s], p[d->to] - p[d->from]))
		f->err = -1;
}

/* An I/O command whose target side is not in the trace: what the
 * initiator's transport alone tells. */
static void alone(struct it_fabric *f, const struct it_fabric_host *h)
{
	static const int stages[] = { IT_FS_HOST_BLOCK, IT_FS_HOST_QUEUE, IT_FS_HOST_SEND,
				      IT_FS_REMOTE, IT_FS_HOST_DONE, IT_FS_COMMAND, IT_FS_IO };
	uint64_t p[IT_FP_MAX] = { [IT_FP_START] = h->start, [IT_FP_S] = h->s, [IT_FP_N] = h->n,
				  [IT_FP_C] = h->c };
	struct it_fabric_op *to[2];

	if (it_fabric_tcp_host_sent(f->tcp, h->ctrl, h->qid, h->cid, h->s, h->n, &p[IT_FP_HS0],
				    &p[IT_FP_HS1], &p[IT_FP_HH0], &p[IT_FP_HH1]) != IT_TCP_FOUND ||
	    !(to[0] = op_in(f, f->alone, false, h->opcode)))
		return;
	if (p[IT_FP_HS0] < h->s || p[IT_FP_HS1] < p[IT_FP_HS0] || h->n < p[IT_FP_HS1])
		return;
	backlog_add(f, h->ctrl, h->qid, h->s, p[IT_FP_HS0]);
	to[1] = host_group(f, h, IT_FSIDE_INITIATOR);
	for (int w = 0; w < 2 && to[w]; w++) {
		to[w]->count++;
		to[w]->bytes += h->bytes;
		to[w]->with_trail += h->c != 0;
		for (size_t k = 0; k < sizeof(stages) / sizeof(stages[0]); k++)
			add_stage(f, to[w], stages[k], p);
	}
}

/* This I/O's own bounds on the offset to add to a moved target time: its
 * capsule out before its parse, its response out before its completion
 * ([HS0 - TI, N - TSR]). lo > hi: its points bound nothing (then the
 * arrivals are looked for in the estimate's window alone). */
struct own_bound {
	int64_t lo, hi;
};

#define TRACK_WINDOW_NS 1000000000ull
#define TRACK_DRIFT_PPM 500 /* two guests' clocks were seen 250 ppm apart */

/* One I/O's sample (its capsule out at hs0, its own bounds) into the
 * tracker; the best estimate for time hs0: the offset to add to a moved
 * target time, and how far it can be off. */
static void track(struct track *t, uint64_t hs0, const struct own_bound *own, int64_t *delta,
		  uint64_t *unc)
{
	struct track_sample x = { .at = hs0 }, *b;
	int64_t lo = own->lo, hi = own->hi;

	if (hi >= lo) {
		x.rtt = (uint64_t)(hi - lo);
		x.delta = lo + (hi - lo) / 2;
		if (hs0 >= t->window + TRACK_WINDOW_NS) {
			if (t->cur.at) /* the last window with a sample */
				t->prev = t->cur;
			t->cur = (struct track_sample){ 0 };
			t->window = hs0 - hs0 % TRACK_WINDOW_NS;
		}
		if (!t->cur.at || x.rtt < t->cur.rtt)
			t->cur = x;
	}
	b = t->prev.at && (!t->cur.at || t->prev.rtt < t->cur.rtt) ? &t->prev : &t->cur;
	if (!b->at) { /* no sample yet that holds: the coarse guess */
		*delta = 0;
		*unc = UINT64_MAX;
		return;
	}
	*delta = b->delta;
	*unc = b->rtt / 2 + (hs0 > b->at ? hs0 - b->at : b->at - hs0) / 1000000 * TRACK_DRIFT_PPM;
}

/* The arrival of what was sent at (as the clock estimate puts it on the
 * receiver's clock, give or take unc): the last arrival before to (the
 * receiver's use of it: the target's parse, the initiator's completion)
 * and not before at - unc. The receiver acts on the data as it arrives,
 * so the last arrival before its use is the likeliest carrier; the first
 * after the estimated send was another PDU's whenever the estimate ran
 * early (seen at QD4 on two guests: 26 of 404 I/Os not causal; with the
 * last, none, and the QD1 stages unchanged).
 * The estimate comes from other I/Os, and two guests' clocks can move
 * apart faster than TRACK_DRIFT_PPM allows: under a loaded host, ~1000
 * ppm (the offset went from -1.2 ms to +0.05 ms over 1.3 s of one run, and
 * 16 of 400 reads found no arrival). So when its window holds none, the
 * arrival is looked for from earliest: the first moment this I/O's own
 * round trip allows (its send, moved by the largest offset its own points
 * bound), which holds whatever the clocks did before. */
static enum it_tcp_found arrival(struct it_fabric *f, enum it_tcp_side side, uint16_t ctrl,
				 uint16_t qid, int64_t at, uint64_t unc, int64_t earliest, uint64_t to,
				 uint64_t *p)
{
	int64_t from = at > (int64_t)unc ? at - (int64_t)unc : 0;
	enum it_tcp_found r = it_fabric_tcp_arrival_last(f->tcp, side, ctrl, qid, (uint64_t)from, to, p);

	if (r == IT_TCP_NONE && earliest < from)
		r = it_fabric_tcp_arrival_last(f->tcp, side, ctrl, qid,
					       earliest > 0 ? (uint64_t)earliest : 0, to, p);
	return r;
}

static int64_t earliest_on_target(const struct own_bound *b, uint64_t sent, int64_t at)
{
	return b->lo <= b->hi ? (int64_t)sent - b->hi : at;
}

static int64_t earliest_on_host(const struct own_bound *b, uint64_t sent, int64_t at)
{
	return b->lo <= b->hi ? (int64_t)sent + b->lo : at;
}

/* A write's R2T round trip, given its R2T (TR2T) and H2C sends (HH0,
 * HH1): the R2T's arrival on the host (HR2T: the first arrival after it
 * on one clock; across two, as arrival() finds it, the target's times
 * moved by d give or take unc) and its data's last arrival on the target
 * before the backend started (TH). All five points, or none (the R2T
 * parts are then left out; target.queue stays whole). */
static void r2t_points(struct it_fabric *f, const struct it_fabric_host *h, const struct tcmd *t,
		       uint64_t *p, int64_t d, uint64_t unc, const struct own_bound *own)
{
	enum it_tcp_found hr = IT_TCP_NONE, th = IT_TCP_NONE;

	if (p[IT_FP_TR2T] && p[IT_FP_HH0] && p[IT_FP_HH1] && t->tx) {
		if (!f->r.cross) {
			hr = it_fabric_tcp_arrival(f->tcp, IT_TCP_HOST, h->ctrl, h->qid,
						   p[IT_FP_TR2T], p[IT_FP_HH0], &p[IT_FP_HR2T]);
			th = it_fabric_tcp_arrival_last(f->tcp, IT_TCP_TARGET, t->cntlid, t->qid,
							p[IT_FP_HH0], t->tx, &p[IT_FP_TH]);
		} else {
			int64_t at = (int64_t)p[IT_FP_TR2T] + d;

			hr = arrival(f, IT_TCP_HOST, h->ctrl, h->qid, at, unc,
				     earliest_on_host(own, p[IT_FP_TR2T], at), p[IT_FP_HH0],
				     &p[IT_FP_HR2T]);
			at = (int64_t)p[IT_FP_HH0] - d;
			th = arrival(f, IT_TCP_TARGET, t->cntlid, t->qid, at, unc,
				     earliest_on_target(own, p[IT_FP_HH0], at), t->tx, &p[IT_FP_TH]);
		}
	}
	if (hr != IT_TCP_FOUND || th != IT_TCP_FOUND)
		for (int k = IT_FP_TR2T; k <= IT_FP_TH; k++)
			p[k] = 0;
}

/* The transport points of a matched I/O command (p[HS0 .. HR], TX is the
 * target command's), or the first one missing. */
static int transport_points(struct it_fabric *f, const struct it_fabric_host *h,
			    const struct tcmd *t, uint64_t *p)
{
	enum it_tcp_found hs, ts, tr = IT_TCP_NONE, hr = IT_TCP_NONE;

	/* both sides' sends are used up whatever else is missing */
	hs = it_fabric_tcp_host_sent(f->tcp, h->ctrl, h->qid, h->cid, h->s, h->n, &p[IT_FP_HS0],
				     &p[IT_FP_HS1], &p[IT_FP_HH0], &p[IT_FP_HH1]);
	/* across two clocks, a window's edge set by the other side's point
	 * is good to the slack */
	ts = it_fabric_tcp_target_sent(f->tcp, t->cntlid, t->qid, t->cid, t->ti, t->tc,
				       h->n + f->slack, &p[IT_FP_TS0], &p[IT_FP_TSR], &p[IT_FP_TR2T]);
	if (!f->r.cross) {
		if (hs == IT_TCP_FOUND)
			tr = it_fabric_tcp_arrival(f->tcp, IT_TCP_TARGET, t->cntlid, t->qid,
						   p[IT_FP_HS0], t->ti, &p[IT_FP_TR]);
		if (ts == IT_TCP_FOUND)
			hr = it_fabric_tcp_arrival(f->tcp, IT_TCP_HOST, h->ctrl, h->qid,
						   p[IT_FP_TSR], h->n, &p[IT_FP_HR]);
		r2t_points(f, h, t, p, 0, 0, NULL);
	} else if (hs == IT_TCP_FOUND && ts == IT_TCP_FOUND) {
		/* across two clocks: where the I/Os so far put the send, not
		 * the coarse guess give or take its slack (another PDU's
		 * arrival can be in that slack) */
		struct own_bound own = { (int64_t)(p[IT_FP_HS0] - t->ti), (int64_t)(h->n - p[IT_FP_TSR]) };
		int64_t d, at;
		uint64_t unc;

		track(&f->track, p[IT_FP_HS0], &own, &d, &unc);
		if (unc == UINT64_MAX) {
			d = 0;
			unc = f->slack;
		}
		at = (int64_t)p[IT_FP_HS0] - d;
		tr = arrival(f, IT_TCP_TARGET, t->cntlid, t->qid, at, unc,
			     earliest_on_target(&own, p[IT_FP_HS0], at), t->ti, &p[IT_FP_TR]);
		at = (int64_t)p[IT_FP_TSR] + d;
		hr = arrival(f, IT_TCP_HOST, h->ctrl, h->qid, at, unc,
			     earliest_on_host(&own, p[IT_FP_TSR], at), h->n, &p[IT_FP_HR]);
		r2t_points(f, h, t, p, d, unc, &own);
	}
	if (hs == IT_TCP_GONE || ts == IT_TCP_GONE || tr == IT_TCP_GONE || hr == IT_TCP_GONE)
		return IT_FG_GONE;
	if (hs != IT_TCP_FOUND)
		return IT_FG_HOST_SEND;
	if (tr != IT_TCP_FOUND)
		return IT_FG_TARGET_ARRIVAL;
	if (!t->tx)
		return IT_FG_BACKEND;
	if (ts != IT_TCP_FOUND)
		return IT_FG_TARGET_SEND;
	if (hr != IT_TCP_FOUND)
		return IT_FG_HOST_ARRIVAL;
	p[IT_FP_TX] = t->tx;
	if (t->bq && t->bd && t->bc) {
		p[IT_FP_BQ] = t->bq;
		p[IT_FP_BD] = t->bd;
		p[IT_FP_BC] = t->bc;
	}
	return -1;
}

/* The target's points of a matched I/O (the rest are the initiator's). */
static const uint8_t target_points[] = { IT_FP_TR, IT_FP_TI, IT_FP_TR2T, IT_FP_TH, IT_FP_TX,
					 IT_FP_BQ, IT_FP_BD, IT_FP_BC, IT_FP_TC, IT_FP_TS0,
					 IT_FP_TSR };

static bool on_target(int point)
{
	for (size_t k = 0; k < sizeof(target_points); k++)
		if (target_points[k] == point)
			return true;
	return false;
}

bool it_fabric_point_on_target(int point)
{
	return on_target(point);
}

void it_fabric_on_matched(struct it_fabric *f, it_fabric_matched_fn fn, void *ctx)
{
	f->on_matched = fn;
	f->on_matched_ctx = ctx;
}

static const struct ctrl *ctrl_of(const struct it_fabric *f, uint16_t instance);
_Static_assert(IT_FS_MAX <= 32, "it_fabric_matched.stages is a 32-bit mask");

/* A matched I/O's stages, its points on one timeline (p[] as match()
 * made it; gap as transport_points() gave it, -2: not tried), or, when
 * one_clock (two machines, no clock estimate), each machine's points on
 * its own clock: only the stages within one machine are taken. */
static void account(struct it_fabric *f, const struct it_fabric_host *h, uint64_t *p, int gap,
		    uint8_t backend, bool one_clock)
{
	struct it_fabric_op *to[2] = { op_of(f, h->qid == 0, h->opcode),
				       host_group(f, h, IT_FSIDE_MATCHED) };
	uint64_t ti = p[IT_FP_TI], tc = p[IT_FP_TC];
	bool detail = false;

	/* in the window: S <= TI <= TC <= N, the parts add up (across two
	 * clocks, as far as the estimate places TI and TC right) */
	if (h->s <= ti && ti <= tc && tc <= h->n && (ti - h->s) + (tc - ti) + (h->n - tc) == h->n - h->s)
		f->r.stage_sum_ok++;
	if (h->start && h->c && h->start <= h->s && h->n <= h->c)
		f->r.io_sum_ok++;
	if (gap >= 0) {
		f->r.gap[gap]++;
		for (int k = IT_FP_HS0; k <= IT_FP_HR; k++)
			if (k != IT_FP_TI && k != IT_FP_TC)
				p[k] = 0;
	} else if (gap == -1 && one_clock) {
		detail = true; /* its parts within each machine */
	} else if (gap == -1) {
		uint64_t sum[IT_FS_MAX] = { 0 }, prev = p[IT_FP_S];
		/* one clock, causal order: each point at or after the one
		 * before. Only an arrival can come before the send call that
		 * caused it returned (loopback delivers inside the call):
		 * then the network took no time of its own. */
		for (int k = IT_FP_S + 1; k <= IT_FP_N; k++) {
			if (p[k] && p[k] < prev)
				p[k] = prev;
			if (p[k])
				prev = p[k];
		}
		for (int s = 0; s < IT_FS_MAX; s++) {
			const struct it_fabric_stage_def *d = &it_fabric_stages[s];
			if (d->parent != s && p[d->from] && p[d->to])
				sum[d->parent] += p[d->to] - p[d->from];
		}
		detail = true;
		f->r.detailed++;
		f->r.detail_sum_ok += sum[IT_FS_HOST_OUT] == p[IT_FP_TI] - h->s &&
				      sum[IT_FS_TARGET] == p[IT_FP_TC] - p[IT_FP_TI] &&
				      sum[IT_FS_HOST_IN] == h->n - p[IT_FP_TC];
		if (p[IT_FP_TR2T]) {
			f->r.r2t_split++;
			f->r.r2t_sum_ok += sum[IT_FS_TARGET_QUEUE] == p[IT_FP_TX] - p[IT_FP_TI];
		}
		if (p[IT_FP_BQ]) {
			f->r.dev_split++;
			f->r.dev_sum_ok += sum[IT_FS_TARGET_DEV] == p[IT_FP_TC] - p[IT_FP_TX];
		} else if (backend == IT_NVMET_BDEV && f->backend_bios) {
			f->r.dev_unlinked++;
		}
	}
	uint32_t taken = 0;
	for (int s = 0; s < IT_FS_MAX; s++) {
		const struct it_fabric_stage_def *d = &it_fabric_stages[s];
		if (one_clock && on_target(d->from) != on_target(d->to))
			continue;
		if ((d->parent == s || detail) && s != IT_FS_REMOTE && p[d->from] && p[d->to] &&
		    p[d->to] >= p[d->from])
			taken |= 1u << s;
	}
	for (int w = 0; w < 2 && to[w]; w++) {
		to[w]->count++;
		to[w]->bytes += h->bytes;
		to[w]->with_trail += h->c != 0;
		for (int s = 0; s < IT_FS_MAX; s++)
			if (taken & 1u << s)
				add_stage(f, to[w], s, p);
	}
	if (f->on_matched) {
		const struct ctrl *c = ctrl_of(f, h->ctrl);
		struct it_fabric_matched m = { .h = h, .p = p, .stages = taken,
					       .cntlid = c ? c->cntlid : 0,
					       .target_machine = f->target_machine };
		f->on_matched(&m, f->on_matched_ctx);
	}
}

static void match(struct it_fabric *f, const struct it_fabric_host *h, const struct tcmd *t)
{
	uint64_t p[IT_FP_MAX] = { [IT_FP_START] = h->start, [IT_FP_S] = h->s, [IT_FP_TI] = t->ti,
				  [IT_FP_TC] = t->tc, [IT_FP_N] = h->n, [IT_FP_C] = h->c };
	int gap = -2;

	f->r.matched++;
	if (f->r.transport && h->qid) {
		gap = transport_points(f, h, t, p);
		/* the backlog is the host's alone: counted as the stream goes */
		if (gap < 0)
			backlog_add(f, h->ctrl, h->qid, h->s, p[IT_FP_HS0]);
	}
	if (!f->r.cross) {
		account(f, h, p, gap, t->backend, false);
		return;
	}
	if (f->nkept == f->keptcap) {
		size_t cap = f->keptcap ? 2 * f->keptcap : 256;
		void *v = realloc(f->kept, cap * sizeof(*f->kept));
		if (!v) {
			f->err = -1;
			return;
		}
		f->kept = v;
		f->keptcap = cap;
	}
	struct kept *k = &f->kept[f->nkept++];
	k->h = *h;
	memcpy(k->p, p, sizeof(p));
	k->gap = (int8_t)gap;
	k->backend = t->backend;
}

/* A target I/O command no host command claimed (its initiator is another
 * machine, or not traced): what the target's side alone tells. */
static void target_alone(struct it_fabric *f, const struct tcmd *t)
{
	static const int stages[] = { IT_FS_TARGET, IT_FS_TARGET_QUEUE, IT_FS_R2T_SEND,
				      IT_FS_TARGET_DEV,
				      IT_FS_TDEV_SUBMIT, IT_FS_TDEV_Q2D, IT_FS_TDEV_D2C,
				      IT_FS_TDEV_DONE, IT_FS_TARGET_SENDQ, IT_FS_TARGET_SEND };
	uint64_t p[IT_FP_MAX] = { [IT_FP_TI] = t->ti, [IT_FP_TX] = t->tx, [IT_FP_TC] = t->tc };
	struct it_fabric_op *o = NULL;

	if (!t->qid || !t->ti || !t->tc)
		return;
	if (t->bq && t->bd && t->bc) {
		p[IT_FP_BQ] = t->bq;
		p[IT_FP_BD] = t->bd;
		p[IT_FP_BC] = t->bc;
	}
	it_fabric_tcp_target_sent(f->tcp, t->cntlid, t->qid, t->cid, t->ti, t->tc, UINT64_MAX,
				  &p[IT_FP_TS0], &p[IT_FP_TSR], &p[IT_FP_TR2T]);
	for (size_t k = 0; k < f->ntalone && !o; k++)
		if (f->talone[k]->cntlid == t->cntlid && f->talone[k]->opcode == t->opcode)
			o = f->talone[k];
	if (!o) {
		void *v = realloc(f->talone, (f->ntalone + 1) * sizeof(*f->talone));
		if (!v) {
			f->err = -1;
			return;
		}
		f->talone = v;
		if (!(o = op_new(f, false, t->opcode, t->cntlid)))
			return;
		f->talone[f->ntalone++] = o;
	}
	struct it_fabric_op *to[2] = {
		o, group_of(f, (struct it_fabric_op){
			   .side = IT_FSIDE_TARGET, .opcode = t->opcode,
			   .size_class = (uint8_t)it_size_class(t->bytes), .qid = t->qid,
			   .cntlid = t->cntlid, .machine = f->target_machine }) };
	for (int w = 0; w < 2 && to[w]; w++) {
		to[w]->count++;
		to[w]->bytes += t->bytes;
		for (size_t k = 0; k < sizeof(stages) / sizeof(stages[0]); k++)
			add_stage(f, to[w], stages[k], p);
	}
}

static const struct ctrl *ctrl_of(const struct it_fabric *f, uint16_t instance)
{
	for (uint32_t k = 0; k < f->nctrls; k++)
		if (f->ctrls[k].instance == instance)
			return &f->ctrls[k];
	return NULL;
}

static void host_one(struct it_fabric *f, const struct it_fabric_host *h)
{
	const struct ctrl *c = ctrl_of(f, h->ctrl);
	uint64_t key;
	uint32_t i, first;

	if (c && c->transport == IT_NVME_TR_PCIE) {
		f->r.not_fabric++;
		return;
	}
	f->r.host_commands++;
	if (!c) {
		unmatched(f, IT_FR_NO_CONTROLLER, true, h->qid);
		return;
	}
	if (served_elsewhere(f, h->ctrl)) { /* its target side is not in this join */
		unmatched(f, IT_FR_NO_TARGET_SIDE, true, h->qid);
		if (f->r.transport && h->qid)
			alone(f, h);
		return;
	}
	key = KEY(f->target_machine, c->cntlid, h->qid, h->cid);
	first = i = it_map_get(&f->fifo, key);
	/* completed before this command was set up: nobody's on the host */
	while (i != NONE && f->t[i].tc + f->slack < h->s) {
		uint32_t next = f->t[i].next;
		unmatched(f, IT_FR_NO_HOST_SIDE, false, f->t[i].qid);
		target_alone(f, &f->t[i]);
		tcmd_free(f, i);
		f->waiting--;
		i = next;
	}
	if (i != NONE && f->t[i].ti + f->slack >= h->s && f->t[i].tc <= h->n + f->slack) {
		uint32_t next = f->t[i].next;
		if (f->t[i].opcode == h->opcode) {
			match(f, h, &f->t[i]);
		} else {
			unmatched(f, IT_FR_OPCODE_MISMATCH, true, h->qid);
			unmatched(f, IT_FR_OPCODE_MISMATCH, false, f->t[i].qid);
		}
		tcmd_free(f, i);
		f->waiting--;
		i = next;
	} else {
		unmatched(f, IT_FR_NO_TARGET_SIDE, true, h->qid);
		if (f->r.transport && h->qid)
			alone(f, h);
	}
	if (i == first)
		return;
	if (i == NONE)
		it_map_take(&f->fifo, key);
	else if (it_map_put(&f->fifo, key, i))
		f->err = -1;
}

/* Lets go of the target commands that completed HORIZON_NS before the
 * latest event (the heads of their FIFOs: a FIFO is in completion order). */
static void prune(struct it_fabric *f)
{
	uint64_t before = f->latest > HORIZON_NS ? f->latest - HORIZON_NS : 0;
	struct { uint64_t key; uint32_t head; } *moved;
	uint32_t n = 0;

	if (!before || !(moved = malloc(f->fifo.count * sizeof(*moved))))
		return; /* no memory: prune later */
	for (uint32_t k = 0; k <= f->fifo.mask; k++) {
		struct it_map_slot *s = &f->fifo.slots[k];
		uint32_t i = s->key ? s->val : NONE;

		while (i != NONE && f->t[i].tc < before) {
			uint32_t next = f->t[i].next;
			unmatched(f, IT_FR_NO_HOST_SIDE, false, f->t[i].qid);
			target_alone(f, &f->t[i]);
			tcmd_free(f, i);
			f->waiting--;
			i = next;
		}
		if (s->key && i != s->val)
			moved[n++] = (typeof(*moved)){ s->key, i };
	}
	for (uint32_t k = 0; k < n; k++)
		if (moved[k].head == NONE)
			it_map_take(&f->fifo, moved[k].key);
		else
			it_map_put(&f->fifo, moved[k].key, moved[k].head); /* present: no growth */
	free(moved);
}

int it_fabric_settle_target(struct it_fabric *f)
{
	/* a trail whose Q was not in the chunks read so far is no backend bio */
	if (f->nearly) {
		it_map_free(&f->early_q);
		if (it_map_init(&f->early_q, 8))
			f->err = -1;
		f->nearly = 0;
	}
	return f->err;
}

int it_fabric_settle(struct it_fabric *f)
{
	it_fabric_settle_target(f);
	for (size_t k = 0; k < f->npending; k++)
		host_one(f, &f->pending[k]);
	f->npending = 0;
	if (f->latest > BACKLOG_LAG_NS)
		backlog_count(f, f->latest - BACKLOG_LAG_NS);
	if (f->waiting >= f->prune_at) {
		prune(f);
		f->prune_at = f->waiting * 2 > PRUNE_MIN ? f->waiting * 2 : PRUNE_MIN;
	}
	return f->err;
}

/* ---- the end ---- */

/* A kept I/O's clock sample: four points each tied to this command alone,
 * so that every sample's bound holds: the capsule's first byte out (HS0;
 * without the transport, S), the command parsed on the target (TI), the
 * response out (TSR; without the transport, TC), the completion on the
 * initiator (N). The arrivals (TR, HR) are closer to the wire but are
 * found per queue, by time: across two clocks an early guess can take
 * another PDU's arrival, whose bound would be wrong (seen on two guests:
 * round trips of 50 us where the best exchange took 900 us, half the I/Os
 * not causal). TI and N come after the arrivals, so the bound is wider by
 * the target's parse and the initiator's completion, never wrong. The
 * target's on its own clock (its points as kept, moved back by moved;
 * NULL: as kept). false when a point is missing. */
static bool sample_of(const struct kept *k, const struct it_clock_guess *moved,
		      struct it_clock_sample *c)
{
	bool split = k->gap == -1;

	c->t1 = k->p[split ? IT_FP_HS0 : IT_FP_S];
	c->t2 = k->p[IT_FP_TI];
	c->t3 = k->p[split ? IT_FP_TSR : IT_FP_TC];
	if (moved) {
		c->t2 = it_clock_guess_unmap(moved, c->t2);
		c->t3 = it_clock_guess_unmap(moved, c->t3);
	}
	c->t4 = k->p[IT_FP_N];
	return c->t1 && k->p[IT_FP_TI] && k->p[split ? IT_FP_TSR : IT_FP_TC] && c->t4;
}

/* The points a causal timeline orders, on the merged clock: the capsule
 * out before its arrival on the target, the response out before its
 * arrival on the initiator (the commands' when the I/O was not split). */
static void causal_points(const struct kept *k, struct it_clock_sample *c)
{
	bool split = k->gap == -1;

	c->t1 = k->p[split ? IT_FP_HS0 : IT_FP_S];
	c->t2 = k->p[split ? IT_FP_TR : IT_FP_TI];
	c->t3 = k->p[split ? IT_FP_TSR : IT_FP_TC];
	c->t4 = k->p[split ? IT_FP_HR : IT_FP_N];
}

/* Two machines: the clock from the kept I/Os, then each one's target
 * points moved onto the initiator's clock by it, its causality counted,
 * its stages taken. */
static void place_kept(struct it_fabric *f)
{
	struct it_clock_sample *smp = f->nkept ? malloc(f->nkept * sizeof(*smp)) : NULL;
	struct it_clock_est *e = &f->r.clock;
	size_t n = 0;

	if (f->nkept && !smp) {
		f->err = -1;
		return;
	}
	for (size_t i = 0; i < f->nkept; i++)
		n += sample_of(&f->kept[i], &f->guess, &smp[n]);
	if (f->stored) { /* made by record from these I/Os with this code */
		it_clock_free(e);
		*e = f->stored_est;
		f->stored_est.window = NULL;
		f->stored = false;
		e->exchange = f->have_exchange;
		e->exchange_offset_ns = f->exchange_offset;
		e->exchange_uncertainty_ns = f->exchange_uncertainty;
	} else if (it_clock_estimate(smp, n, f->have_exchange, f->exchange_offset,
				     f->exchange_uncertainty, e)) {
		f->err = -1;
	}
	free(smp);
	for (size_t i = 0; i < f->nkept; i++) {
		struct kept *k = &f->kept[i];
		struct it_clock_sample c;

		/* on the merged timeline (no estimate: back on the target's own
		 * clock, for its stages alone) */
		for (size_t j = 0; j < sizeof(target_points); j++) {
			uint64_t *at = &k->p[target_points[j]];
			if (*at)
				*at = it_clock_map(e, it_clock_guess_unmap(&f->guess, *at));
		}
		causal_points(k, &c);
		if (e->method != IT_CLOCK_NONE && c.t1 && c.t2 && c.t3 && c.t4) {
			f->r.causal_checked++;
			if (c.t2 < c.t1) {
				f->r.noncausal_out++;
				f->r.noncausal_within += c.t1 - c.t2 <= e->uncertainty_ns;
			}
			if (c.t4 < c.t3) {
				f->r.noncausal_back++;
				f->r.noncausal_within += c.t3 - c.t4 <= e->uncertainty_ns;
			}
		}
		account(f, &k->h, k->p, k->gap, k->backend, e->method == IT_CLOCK_NONE);
	}
	f->nkept = 0;
}

static int key_cmp(const struct it_fabric_op *a, const struct it_fabric_op *b, unsigned key)
{
	uint32_t x = 0, y = 0;

	switch (key) {
	case IT_FK_OP: /* I/O opcodes, then admin ones */
		x = a->admin << 8 | a->opcode;
		y = b->admin << 8 | b->opcode;
		break;
	case IT_FK_SIZE:
		x = a->size_class, y = b->size_class;
		break;
	case IT_FK_QUEUE:
		x = a->qid, y = b->qid;
		break;
	case IT_FK_INITIATOR:
		x = a->side == IT_FSIDE_TARGET ? a->cntlid : a->ctrl;
		y = b->side == IT_FSIDE_TARGET ? b->cntlid : b->ctrl;
		break;
	case IT_FK_MACHINE:
		x = a->machine, y = b->machine;
		break;
	}
	return x < y ? -1 : x > y;
}

/* By side, then by the keys in the order given, admin groups last. */
static int group_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct it_fabric_op *a = *(struct it_fabric_op *const *)pa;
	const struct it_fabric_op *b = *(struct it_fabric_op *const *)pb;
	const struct it_fabric_results *r = ctx;
	int c;

	if (a->side != b->side)
		return a->side < b->side ? -1 : 1;
	if (a->admin != b->admin)
		return a->admin ? 1 : -1;
	for (unsigned k = 0; k < r->nkeys; k++)
		if ((c = key_cmp(a, b, r->keys[k])))
			return c;
	return key_cmp(a, b, IT_FK_OP);
}

/* The groups into the results, sorted (the histograms move). */
static int groups_out(struct it_fabric *f)
{
	if (!f->ngroups)
		return 0;
	qsort_r(f->groups, f->ngroups, sizeof(*f->groups), group_cmp, &f->r);
	if (!(f->r.groups = calloc(f->ngroups, sizeof(*f->r.groups))))
		return -1;
	for (size_t k = 0; k < f->ngroups; k++) {
		f->r.groups[f->r.ngroups++] = *f->groups[k];
		free(f->groups[k]);
	}
	free(f->groups);
	f->groups = NULL;
	f->ngroups = 0;
	return 0;
}

int it_fabric_finish(struct it_fabric *f)
{
	size_t n = 0;

	if (f->finished)
		return f->err;
	f->finished = true;
	it_fabric_settle(f);
	for (uint32_t k = 0; k <= f->fifo.mask; k++)
		for (uint32_t i = f->fifo.slots[k].key ? f->fifo.slots[k].val : NONE; i != NONE;
		     i = f->t[i].next) {
			unmatched(f, IT_FR_NO_HOST_SIDE, false, f->t[i].qid);
			target_alone(f, &f->t[i]);
		}
	for (uint32_t k = 0; k <= f->open.mask; k++)
		if (f->open.slots[k].key)
			unmatched(f, IT_FR_TARGET_INCOMPLETE, false, f->t[f->open.slots[k].val].qid);
	if (f->r.cross)
		place_kept(f);
	for (int k = 0; k < 2 * 256; k++)
		n += f->op[k] != NULL;
	f->r.ops = n ? calloc(n, sizeof(*f->r.ops)) : NULL;
	if (n && !f->r.ops)
		return f->err = -1;
	for (int k = 0; k < 2 * 256; k++)
		if (f->op[k]) {
			f->r.ops[f->r.nops++] = *f->op[k]; /* the histograms move */
			free(f->op[k]);
			f->op[k] = NULL;
		}
	backlog_count(f, UINT64_MAX);
	f->r.target_alone = f->ntalone ? calloc(f->ntalone, sizeof(*f->r.target_alone)) : NULL;
	if (f->ntalone && !f->r.target_alone)
		return f->err = -1;
	for (size_t k = 0; k < f->ntalone; k++) {
		size_t j = f->r.ntarget_alone++;
		const struct it_fabric_op *o = f->talone[k];
		while (j > 0 && (f->r.target_alone[j - 1].cntlid > o->cntlid ||
				 (f->r.target_alone[j - 1].cntlid == o->cntlid &&
				  f->r.target_alone[j - 1].opcode > o->opcode))) {
			f->r.target_alone[j] = f->r.target_alone[j - 1];
			j--;
		}
		f->r.target_alone[j] = *o; /* the histograms move */
		free(f->talone[k]);
	}
	free(f->talone);
	f->talone = NULL;
	f->ntalone = 0;
	f->r.queues = f->nbl ? calloc(f->nbl, sizeof(*f->r.queues)) : NULL;
	if (f->nbl && !f->r.queues)
		return f->err = -1;
	for (size_t k = 0; k < f->nbl; k++) {
		size_t j = f->r.nqueues++;
		/* by controller, then qid */
		while (j > 0 && (f->r.queues[j - 1].ctrl > f->bl[k].q.ctrl ||
				 (f->r.queues[j - 1].ctrl == f->bl[k].q.ctrl &&
				  f->r.queues[j - 1].qid > f->bl[k].q.qid))) {
			f->r.queues[j] = f->r.queues[j - 1];
			j--;
		}
		f->r.queues[j] = f->bl[k].q;
	}
	if (groups_out(f))
		return f->err = -1;
	f->r.io_work = it_fabric_tcp_io_work(f->tcp, &f->r.nio_work);
	for (int k = n = 0; k < 256; k++)
		n += f->alone[k] != NULL;
	f->r.alone = n ? calloc(n, sizeof(*f->r.alone)) : NULL;
	if (n && !f->r.alone)
		return f->err = -1;
	for (int k = 0; k < 256; k++)
		if (f->alone[k]) {
			f->r.alone[f->r.nalone++] = *f->alone[k];
			free(f->alone[k]);
			f->alone[k] = NULL;
		}
	return f->err;
}

const struct it_fabric_results *it_fabric_results(const struct it_fabric *f)
{
	return &f->r;
}
