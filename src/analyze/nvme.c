// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe command analyzer (see nvme.h). Open commands live in a slot
 * array indexed by a request-pointer map, as the block stitcher's trails.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/hashmap.h"
#include "analyze/nvme.h"
#include "analyze/sort.h"
#include "analyze/timeline.h"

#define TID_KEY(tid) ((uint64_t)(tid) | (1ull << 32))

struct open_cmd {
	struct it_nvme_cmd c;
	uint32_t next_free;
	uint32_t queue;          /* index in n->queues */
};

struct it_nvme {
	struct it_nvme_opts o;
	struct it_nvme_results r;
	int err;
	bool finished, started;
	struct open_cmd *cmds;
	uint32_t ncmds, free_head;
	struct it_map open;       /* request -> slot */
	struct it_map tids;       /* tid -> index in comms */
	char (*comms)[16];
	uint32_t ncomms, commcap;
	uint32_t *inflight;       /* per queue */
	uint64_t *qlast;          /* per queue: when its depth last changed */
	size_t queuecap;
	uint32_t total_inflight;  /* all queues: depth over time */
	uint64_t last_change_ns;
	uint64_t last_cmd_rq;     /* the last SUBMIT (DSM ranges follow it) */
	size_t timeline_cap;      /* r.timeline's allocated intervals */
	struct it_map queue_map;  /* (controller, qid) -> index in r.queues */
	bool too_many_queues;     /* a queue beyond IT_NVME_QUEUES_MAX: err is set */
};

static const char *const io_names[256] = {
	[0x00] = "flush", [0x01] = "write", [0x02] = "read", [0x04] = "write_uncorrectable",
	[0x05] = "compare", [0x08] = "write_zeroes", [0x09] = "dsm", [0x0c] = "verify",
	[0x0d] = "reservation_register", [0x0e] = "reservation_report",
	[0x11] = "reservation_acquire", [0x15] = "reservation_release", [0x19] = "copy",
	[0x79] = "zone_mgmt_send", [0x7a] = "zone_mgmt_recv", [0x7d] = "zone_append",
};
static const char *const admin_names[256] = {
	[0x00] = "delete_sq", [0x01] = "create_sq", [0x02] = "get_log_page", [0x04] = "delete_cq",
	[0x05] = "create_cq", [0x06] = "identify", [0x08] = "abort", [0x09] = "set_features",
	[0x0a] = "get_features", [0x0c] = "async_event", [0x0d] = "ns_mgmt",
	[0x10] = "fw_commit", [0x11] = "fw_download", [0x14] = "device_self_test",
	[0x15] = "ns_attach", [0x18] = "keep_alive", [0x19] = "directive_send",
	[0x1a] = "directive_recv", [0x7c] = "dbbuf", [0x7f] = "fabrics", [0x80] = "format_nvm",
	[0x81] = "security_send", [0x82] = "security_recv", [0x84] = "sanitize",
};

const char *it_nvme_opcode_name(uint8_t opcode, bool admin, char *buf, size_t len)
{
	const char *n = admin ? admin_names[opcode] : io_names[opcode];

	if (n && !admin)
		return n;
	if (n)
		snprintf(buf, len, "admin_%s", n);
	else
		snprintf(buf, len, "%s_0x%02x", admin ? "admin" : "io", opcode);
	return buf;
}

struct it_nvme *it_nvme_new(const struct it_nvme_opts *o)
{
	struct it_nvme *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->o = *o;
	n->r.start_ns = o->start_ns;
	n->r.interval_ns = o->interval_ns ? o->interval_ns : 1000000000ull;
	n->free_head = UINT32_MAX;
	n->commcap = 16;
	n->comms = calloc(n->commcap, sizeof(*n->comms));
	n->ncomms = 1;
	for (int a = 0; a < 2; a++)
		for (int k = 0; k < 256; k++)
			it_hist_init(&n->r.op[a][k].lat);
	if (!n->comms || it_map_init(&n->open, 8) || it_map_init(&n->tids, 6) ||
	    it_map_init(&n->queue_map, 4)) {
		it_nvme_free(n);
		return NULL;
	}
	return n;
}

void it_nvme_free(struct it_nvme *n)
{
	if (!n)
		return;
	for (int a = 0; a < 2; a++)
		for (int k = 0; k < 256; k++)
			it_hist_free(&n->r.op[a][k].lat);
	for (size_t i = 0; i < n->r.nqueues; i++)
		free(n->r.queues[i].qd_time);
	free(n->r.queues);
	free(n->r.timeline);
	free(n->r.ranges);
	free(n->cmds);
	free(n->comms);
	free(n->inflight);
	free(n->qlast);
	it_map_free(&n->queue_map);
	it_map_free(&n->open);
	it_map_free(&n->tids);
	free(n);
}

/* ---- side tables ---- */

static void on_task(struct it_nvme *n, const struct it_event *e)
{
	if (n->ncomms == n->commcap) {
		char (*c)[16] = realloc(n->comms, 2 * n->commcap * sizeof(*c));
		if (!c) {
			n->err = -1;
			return;
		}
		n->comms = c;
		n->commcap *= 2;
	}
	memcpy(n->comms[n->ncomms], e->comm, 16);
	n->comms[n->ncomms][15] = 0;
	if (it_map_put(&n->tids, TID_KEY(e->tid), n->ncomms++))
		n->err = -1;
}

static void nvme_fit(struct it_nvme *n, uint64_t ts);

/* A queue's key in queue_map (never 0) */
#define QUEUE_KEY(ctrl, qid) ((uint64_t)(ctrl) << 16 | (qid) | 1ull << 32)

static uint32_t queue_index(struct it_nvme *n, uint16_t ctrl, uint16_t qid)
{
	struct it_nvme_results *r = &n->r;
	uint32_t i = it_map_get(&n->queue_map, QUEUE_KEY(ctrl, qid));

	/* a map, not a scan: a damaged or forged trace may name many (a
	 * scan made 100,000 queues a quadratic walk) */
	if (i != IT_MAP_NONE)
		return i;
	if (r->nqueues == IT_NVME_QUEUES_MAX) {
		n->too_many_queues = true;
		n->err = -1;
		return UINT32_MAX;
	}
	if (r->nqueues == n->queuecap) {
		size_t cap = n->queuecap ? n->queuecap * 2 : 8;
		struct it_nvme_queue_stats *q = realloc(r->queues, cap * sizeof(*q));
		uint32_t *inf = q ? realloc(n->inflight, cap * sizeof(*inf)) : NULL;
		uint64_t *last = inf ? realloc(n->qlast, cap * sizeof(*last)) : NULL;
		if (q)
			r->queues = q;
		if (inf)
			n->inflight = inf;
		if (!q || !inf || !last) {
			n->err = -1;
			return UINT32_MAX;
		}
		n->qlast = last;
		n->queuecap = cap;
	}
	if (it_map_put(&n->queue_map, QUEUE_KEY(ctrl, qid), (uint32_t)r->nqueues)) {
		n->err = -1;
		return UINT32_MAX;
	}
	memset(&r->queues[r->nqueues], 0, sizeof(r->queues[0]));
	r->queues[r->nqueues].ctrl = ctrl;
	r->queues[r->nqueues].qid = qid;
	n->inflight[r->nqueues] = 0;
	n->qlast[r->nqueues] = 0;
	r->nqueues++;
	nvme_fit(n, r->end_ns); /* the share of each queue may have shrunk */
	return (uint32_t)r->nqueues - 1;
}

/* ---- timeline ---- */

/* At most this many intervals (4.5 h at 1 s; the JSON report lists them
 * all): a later timestamp (a longer trace, a clock jump, a damaged or
 * forged file) makes the interval longer instead, by a power of two
 * (nvme_fit), as the block timeline's does; so do many queues, whose depth
 * timelines share IT_NVME_QUEUE_TIMELINES intervals (nvme_limit). Until
 * 2026-11-25 a later time counted in the last interval: a recording
 * longer than 4.5 h had its tail lumped there.
 * The depth integrals below walk the intervals between two events, so
 * this also bounds their steps: with 1M intervals and no bound on the
 * walk, a command completed 100 years after its submission took minutes
 * (tests/fuzz). */
#define NVME_TIMELINE_MAX 16384u

/* The intervals each timeline may hold with the queues seen: beyond 256
 * queues, each queue's share of IT_NVME_QUEUE_TIMELINES (a power of two,
 * at least 64). */
static uint64_t nvme_limit(const struct it_nvme *n)
{
	return it_timeline_share(NVME_TIMELINE_MAX, n->r.nqueues, IT_NVME_QUEUE_TIMELINES);
}

static void add_interval(struct it_nvme_interval *to, const struct it_nvme_interval *from)
{
	to->commands += from->commands;
	to->bytes += from->bytes;
	to->read_bytes += from->read_bytes;
	to->write_bytes += from->write_bytes;
	to->qd_ns += from->qd_ns;
	to->qd_max = from->qd_max > to->qd_max ? from->qd_max : to->qd_max;
}

static void add_qd(struct it_nvme_qd_interval *to, const struct it_nvme_qd_interval *from)
{
	to->qd_ns += from->qd_ns;
	to->qd_max = from->qd_max > to->qd_max ? from->qd_max : to->qd_max;
}

/* Makes the intervals longer (by a power of two) until one holding time ts
 * fits in nvme_limit: the all-queue timeline and every queue's depth
 * timeline alike (they share the interval). Called before an event's
 * intervals are walked, and when a new queue lowers the limit. */
static void nvme_fit(struct it_nvme *n, uint64_t ts)
{
	struct it_nvme_results *r = &n->r;
	uint64_t k = ts > r->start_ns ? (ts - r->start_ns) / r->interval_ns : 0, lim = nvme_limit(n);
	unsigned shift = 0;

	while ((k >> shift) >= lim)
		shift++;
	if (!shift)
		return;
	IT_TIMELINE_COARSEN(r->timeline, r->ntimeline, shift, add_interval);
	for (size_t qi = 0; qi < r->nqueues; qi++) {
		struct it_nvme_queue_stats *q = &r->queues[qi];
		size_t len = q->nqd_time;
		struct it_nvme_qd_interval *t;

		IT_TIMELINE_COARSEN(q->qd_time, q->nqd_time, shift, add_qd);
		/* give back what the share no longer allows (grown by doubling) */
		if (q->nqd_time < len && q->nqd_time &&
		    (t = realloc(q->qd_time, q->nqd_time * sizeof(*t))))
			q->qd_time = t;
	}
	r->interval_ns <<= shift;
}

static struct it_nvme_interval *interval(struct it_nvme *n, uint64_t ts)
{
	struct it_nvme_results *r = &n->r;
	uint64_t k = ts > r->start_ns ? (ts - r->start_ns) / r->interval_ns : 0;

	if (k >= NVME_TIMELINE_MAX)
		k = NVME_TIMELINE_MAX - 1;
	/* grown by doubling: the depth walk asks one interval further at a
	 * time, and a realloc per interval that copies (ASan's always does)
	 * made 65536 intervals a quadratic copy, minutes long (tests/fuzz) */
	if (k >= n->timeline_cap) {
		size_t cap = k + 1 > 2 * n->timeline_cap ? k + 1 : 2 * n->timeline_cap;

		if (cap > NVME_TIMELINE_MAX)
			cap = NVME_TIMELINE_MAX; /* k < NVME_TIMELINE_MAX */
		struct it_nvme_interval *t = realloc(r->timeline, cap * sizeof(*t));
		if (!t) {
			n->err = -1;
			return NULL;
		}
		memset(t + n->timeline_cap, 0, (cap - n->timeline_cap) * sizeof(*t));
		r->timeline = t;
		n->timeline_cap = cap;
	}
	if (k >= r->ntimeline)
		r->ntimeline = k + 1;
	return &r->timeline[k];
}

/* Depth was total_inflight from last_change_ns to ts: add it to the
 * intervals it covers. */
static void depth_advance(struct it_nvme *n, uint64_t ts)
{
	uint64_t t = n->last_change_ns, iv = n->r.interval_ns, s0 = n->r.start_ns;

	if (!t || ts <= t) {
		if (!t || ts > t)
			n->last_change_ns = ts;
		return;
	}
	while (t < ts && n->total_inflight) {
		uint64_t k = t > s0 ? (t - s0) / iv : 0;
		uint64_t end = s0 + (k + 1) * iv;
		uint64_t to = end < ts && k < NVME_TIMELINE_MAX - 1 ? end : ts;
		struct it_nvme_interval *p = interval(n, t);
		if (!p)
			return;
		p->qd_ns += (double)(to - t) * n->total_inflight;
		t = to;
	}
	n->last_change_ns = ts;
}

/* Queue qi's depth-over-time interval k (grown as needed), or NULL (k is
 * below nvme_limit: nvme_fit ran for the event's time). */
static struct it_nvme_qd_interval *queue_interval(struct it_nvme *n, uint32_t qi, uint64_t k)
{
	struct it_nvme_queue_stats *q = &n->r.queues[qi];

	if (k >= NVME_TIMELINE_MAX)
		k = NVME_TIMELINE_MAX - 1;
	if (k >= q->nqd_time) {
		size_t len = k + 1 > 2 * q->nqd_time ? k + 1 : 2 * q->nqd_time;
		struct it_nvme_qd_interval *t = realloc(q->qd_time, len * sizeof(*t));
		if (!t) {
			n->err = -1;
			return NULL;
		}
		memset(t + q->nqd_time, 0, (len - q->nqd_time) * sizeof(*t));
		q->qd_time = t;
		q->nqd_time = len;
	}
	return &q->qd_time[k];
}

static uint64_t interval_of(const struct it_nvme *n, uint64_t ts)
{
	return ts > n->r.start_ns ? (ts - n->r.start_ns) / n->r.interval_ns : 0;
}

/* Queue qi held inflight[qi] commands from qlast[qi] to ts: as
 * depth_advance, per queue. */
static void queue_advance(struct it_nvme *n, uint32_t qi, uint64_t ts)
{
	uint64_t t = n->qlast[qi], iv = n->r.interval_ns, s0 = n->r.start_ns;

	if (t && ts > t) {
		while (t < ts && n->inflight[qi]) {
			uint64_t k = interval_of(n, t);
			uint64_t end = s0 + (k + 1) * iv;
			uint64_t to = end < ts && k < NVME_TIMELINE_MAX - 1 ? end : ts;
			struct it_nvme_qd_interval *p = queue_interval(n, qi, k);
			if (!p)
				return;
			p->qd_ns += (double)(to - t) * n->inflight[qi];
			t = to;
		}
	}
	if (!n->qlast[qi] || ts > n->qlast[qi])
		n->qlast[qi] = ts;
}

/* ---- commands ---- */

static uint32_t slot_alloc(struct it_nvme *n)
{
	if (n->free_head == UINT32_MAX) {
		uint32_t cap = n->ncmds ? n->ncmds * 2 : 256;
		struct open_cmd *c = realloc(n->cmds, cap * sizeof(*c));
		if (!c) {
			n->err = -1;
			return UINT32_MAX;
		}
		for (uint32_t k = n->ncmds; k < cap; k++)
			c[k].next_free = k + 1 < cap ? k + 1 : UINT32_MAX;
		n->cmds = c;
		n->free_head = n->ncmds;
		n->ncmds = cap;
	}
	uint32_t i = n->free_head;
	n->free_head = n->cmds[i].next_free;
	return i;
}

static void slot_free(struct it_nvme *n, uint32_t i)
{
	n->cmds[i].next_free = n->free_head;
	n->free_head = i;
}

static void leave_queue(struct it_nvme *n, struct open_cmd *oc, uint64_t ts)
{
	depth_advance(n, ts);
	if (oc->queue != UINT32_MAX)
		queue_advance(n, oc->queue, ts);
	if (oc->queue != UINT32_MAX && n->inflight[oc->queue])
		n->inflight[oc->queue]--;
	if (n->total_inflight)
		n->total_inflight--;
}

/* Fields of a SUBMIT, interpreted by opcode (event.h). */
static void decode_submit(struct it_nvme_cmd *c, const struct it_event *ev)
{
	const struct it_nvme_event *e = &ev->nvme;

	memset(c, 0, sizeof(*c));
	c->rq = e->rq;
	c->submit_ns = e->ts_ns;
	c->dev = e->dev;
	c->nsid = e->nsid;
	c->pid = e->pid;
	c->tid = e->tid;
	c->bytes = e->bytes;
	c->cid = e->cid;
	c->qid = e->qid;
	c->ctrl = e->ctrl;
	c->opcode = e->opcode;
	if (!c->qid)
		return; /* admin: CDWs mean other things */
	switch (c->opcode) {
	case IT_NVME_READ:
	case IT_NVME_WRITE:
	case IT_NVME_WRITE_ZEROES:
	case IT_NVME_ZONE_APPEND:
	case 0x04: /* write uncorrectable */
	case 0x05: /* compare */
	case 0x0c: /* verify */
		c->slba = e->cdw10_11;
		c->nlb = (uint32_t)(e->cdw12_13 & 0xffff) + 1;
		break;
	case IT_NVME_ZONE_MGMT_SEND:
		c->slba = e->cdw10_11;
		c->zsa = (uint8_t)(e->cdw12_13 >> 32);
		break;
	case IT_NVME_ZONE_MGMT_RECV:
		c->slba = e->cdw10_11;
		break;
	case IT_NVME_DSM:
		c->nranges = (uint32_t)(e->cdw10_11 & 0xff) + 1;
		break;
	}
}

static void on_submit(struct it_nvme *n, const struct it_event *e)
{
	uint32_t i = it_map_get(&n->open, e->id);

	n->r.submits++;
	if (i != IT_MAP_NONE) { /* submitted again: the earlier try left the queue */
		n->r.requeued++;
		leave_queue(n, &n->cmds[i], e->ts_ns);
	} else {
		i = slot_alloc(n);
		if (i == UINT32_MAX)
			return;
		if (it_map_put(&n->open, e->id, i)) {
			n->err = -1;
			slot_free(n, i);
			return;
		}
	}
	struct open_cmd *oc = &n->cmds[i];
	decode_submit(&oc->c, e);
	if (n->o.name_tid) {
		strncpy(oc->c.comm, n->o.name_tid(e->tid, n->o.name_ctx), 15);
	} else {
		uint32_t ci = it_map_get(&n->tids, TID_KEY(e->tid));
		if (ci != IT_MAP_NONE)
			memcpy(oc->c.comm, n->comms[ci], 16);
	}
	oc->queue = queue_index(n, oc->c.ctrl, oc->c.qid);
	depth_advance(n, e->ts_ns);
	n->total_inflight++;
	if (oc->queue != UINT32_MAX) {
		queue_advance(n, oc->queue, e->ts_ns);
		uint32_t d = ++n->inflight[oc->queue];
		struct it_nvme_qd_interval *qt = queue_interval(n, oc->queue, interval_of(n, e->ts_ns));
		struct it_nvme_queue_stats *q = &n->r.queues[oc->queue];
		oc->c.qd = d;
		q->qd[d < IT_NVME_QD_EXACT ? d : IT_NVME_QD_EXACT]++;
		if (d > q->qd_max)
			q->qd_max = d;
		if (qt && d > qt->qd_max)
			qt->qd_max = d;
	}
	struct it_nvme_interval *p = interval(n, e->ts_ns);
	if (p && n->total_inflight > p->qd_max)
		p->qd_max = n->total_inflight;
	n->last_cmd_rq = e->id;
	if (oc->c.opcode == IT_NVME_DSM && oc->c.qid)
		n->r.dsm_commands++;
}

static void on_range(struct it_nvme *n, const struct it_event *e)
{
	struct it_nvme_results *r = &n->r;
	uint32_t i = it_map_get(&n->open, e->id);

	r->nranges++;
	if (i != IT_MAP_NONE) {
		struct it_nvme_cmd *c = &n->cmds[i].c;
		if (e->nvme.range_index == 0)
			c->range_sector = e->nvme.range_sector;
		c->range_bytes += e->bytes;
	}
	if (r->nranges_kept == IT_NVME_MAX_RANGES)
		return;
	if (!r->ranges) {
		r->ranges = malloc(IT_NVME_MAX_RANGES * sizeof(*r->ranges));
		if (!r->ranges) {
			n->err = -1;
			return;
		}
	}
	r->ranges[r->nranges_kept++] = (struct it_nvme_range){
		.dev = e->dev, .sector = e->nvme.range_sector, .bytes = e->bytes, .submit_ns = e->ts_ns,
	};
}

/* The driver handled a CQE (nvme:nvme_sq): the SQ backlog at that moment,
 * and the command's CQE time. */
static void on_sq(struct it_nvme *n, const struct it_event *e)
{
	uint32_t qi = queue_index(n, e->nvme.ctrl, e->nvme.qid), i;
	uint32_t size = e->bytes, head = (uint32_t)e->nvme.sq_head, tail = (uint32_t)e->nvme.sq_tail;
	uint32_t b;
	struct it_nvme_queue_stats *q;

	n->r.sq_events++;
	i = it_map_get(&n->open, e->id);
	if (i != IT_MAP_NONE)
		n->cmds[i].c.cqe_ns = e->ts_ns;
	if (qi == UINT32_MAX)
		return;
	q = &n->r.queues[qi];
	if (size)
		q->sq_size = size;
	if (!size || head >= size || tail >= size) {
		q->sq_invalid++;
		return;
	}
	b = (tail + size - head) % size;
	q->sq_samples++;
	q->sq_backlog[b < IT_NVME_QD_EXACT ? b : IT_NVME_QD_EXACT]++;
	if (b > q->sq_backlog_max)
		q->sq_backlog_max = b;
}

static void on_complete(struct it_nvme *n, const struct it_event *e)
{
	uint32_t i = it_map_take(&n->open, e->id);

	if (i == IT_MAP_NONE) {
		n->r.unknown_completions++;
		return;
	}
	struct open_cmd *oc = &n->cmds[i];
	struct it_nvme_cmd *c = &oc->c;
	c->complete_ns = e->ts_ns;
	c->result = e->nvme.result;
	c->status = (uint16_t)e->nvme.status;
	leave_queue(n, oc, e->ts_ns);

	bool admin = c->qid == 0;
	struct it_nvme_opcode_stats *os = &n->r.op[admin][c->opcode];
	os->count++;
	os->bytes += c->bytes;
	os->errors += c->status != 0;
	if (it_hist_add(&os->lat, c->complete_ns > c->submit_ns ? c->complete_ns - c->submit_ns : 0))
		n->err = -1;
	n->r.commands++;
	n->r.admin += admin;
	n->r.errors += c->status != 0;
	if (oc->queue != UINT32_MAX) {
		n->r.queues[oc->queue].commands++;
		n->r.queues[oc->queue].bytes += c->bytes;
	}
	struct it_nvme_interval *p = interval(n, e->ts_ns);
	if (p) {
		p->commands++;
		p->bytes += c->bytes;
		p->read_bytes += c->opcode == IT_NVME_READ && !admin ? c->bytes : 0;
		p->write_bytes += (c->opcode == IT_NVME_WRITE || c->opcode == IT_NVME_ZONE_APPEND) &&
				  !admin ? c->bytes : 0;
	}
	if (n->o.on_cmd)
		n->o.on_cmd(c, n->o.ctx);
	slot_free(n, i);
}

const char *it_nvme_why(const struct it_nvme *n)
{
	_Static_assert(IT_NVME_QUEUES_MAX == 16384, "the message below says 16384");
	return n && n->too_many_queues ? "it names more than 16384 NVMe queues (damaged or "
					 "forged?); iotrail analyses at most that many"
				       : NULL;
}

int it_nvme_feed(struct it_nvme *n, const struct it_event *e)
{
	if (n->finished)
		return -1;
	if (!n->started) {
		n->started = true;
		if (!n->r.start_ns)
			n->r.start_ns = e->ts_ns;
	}
	if (e->type == IT_EV_TASK) {
		on_task(n, e);
		return n->err;
	}
	if (e->layer != IT_LAYER_NVME)
		return n->err;
	if (e->ts_ns > n->r.end_ns)
		n->r.end_ns = e->ts_ns;
	nvme_fit(n, n->r.end_ns);
	switch (e->type) {
	case IT_EV_NVME_SUBMIT:
		on_submit(n, e);
		break;
	case IT_EV_NVME_COMPLETE:
		on_complete(n, e);
		break;
	case IT_EV_NVME_RANGE:
		on_range(n, e);
		break;
	case IT_EV_NVME_SQ:
		on_sq(n, e);
		break;
	}
	return n->err;
}

static int queue_cmp(const void *a, const void *b)
{
	const struct it_nvme_queue_stats *x = a, *y = b;

	if (x->ctrl != y->ctrl)
		return x->ctrl < y->ctrl ? -1 : 1;
	return x->qid < y->qid ? -1 : x->qid > y->qid;
}

void it_nvme_finish(struct it_nvme *n, uint64_t end_ns)
{
	if (n->finished)
		return;
	n->finished = true;
	if (end_ns > n->r.end_ns)
		n->r.end_ns = end_ns;
	nvme_fit(n, n->r.end_ns);
	depth_advance(n, n->r.end_ns);
	if (n->r.end_ns > n->r.start_ns)
		interval(n, n->r.end_ns - 1); /* the timeline covers the whole trace */
	for (uint32_t qi = 0; qi < n->r.nqueues; qi++) {
		queue_advance(n, qi, n->r.end_ns);
		/* aligned with the timeline: one entry per interval */
		if (n->r.ntimeline && !queue_interval(n, qi, n->r.ntimeline - 1))
			break;
		n->r.queues[qi].nqd_time = n->r.ntimeline;
	}
	n->r.incomplete = n->open.count;
	it_sort(n->r.queues, n->r.nqueues, sizeof(*n->r.queues), queue_cmp);
}

const struct it_nvme_results *it_nvme_results(const struct it_nvme *n)
{
	return n && n->finished ? &n->r : NULL;
}
