// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The NVMe/TCP transport events, kept for the fabric join (transport.h).
 *
 * Sends: a list per command key, in stream order (the lists live in one
 * array, found through a map; a key's list is reused by the cid's next
 * generations). Arrivals: a time-sorted array per queue, with a start
 * index that moves as old ones are let go.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/hashmap.h"
#include "layers/fabric/transport.h"

/* What is older than this before the latest event is let go: longer than
 * any command that is not stuck (a stuck one is counted, not waited for). */
#define HORIZON_NS (2ull * 1000000000ull)
#define PRUNE_MIN 4096

#define SEND_KEY(side, ctrl, qid, cid) \
	(1ull << 63 | (uint64_t)(side) << 62 | (uint64_t)(ctrl) << 32 | (uint64_t)(qid) << 16 | (cid))
#define QUEUE_KEY(side, ctrl, qid) (1ull << 63 | (uint64_t)(side) << 62 | (uint64_t)(ctrl) << 32 | (qid))

struct send {
	uint64_t ts, end;
	uint8_t pdu, after, flags;
};

struct list {                     /* a command key's sends, or a queue's arrivals */
	void *v;
	uint32_t start, n, cap;       /* live entries: [start, n) */
	uint64_t gone_before;         /* entries before this time were let go */
};

struct it_fabric_tcp {
	struct it_map sends, arrivals; /* key -> index in lists */
	/* the host's request (struct request *) -> the cid of its last
	 * capsule: a send after an R2T names its command by the request (the
	 * PDU buffer the cid was read from holds the H2C data PDU by then,
	 * whose bytes there are the target's transfer tag) */
	struct it_map host_cid;
	struct list *lists;
	uint32_t nlists, cap;
	uint64_t latest, held, prune_at;
	struct it_tcp_io_work *io_work;
	size_t nio_work;
};

struct it_fabric_tcp *it_fabric_tcp_new(void)
{
	struct it_fabric_tcp *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->prune_at = PRUNE_MIN;
	if (it_map_init(&t->sends, 8) || it_map_init(&t->arrivals, 4) ||
	    it_map_init(&t->host_cid, 8)) {
		it_fabric_tcp_free(t);
		return NULL;
	}
	return t;
}

void it_fabric_tcp_free(struct it_fabric_tcp *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nlists; i++)
		free(t->lists[i].v);
	free(t->lists);
	it_map_free(&t->sends);
	it_map_free(&t->arrivals);
	it_map_free(&t->host_cid);
	for (size_t i = 0; i < t->nio_work; i++)
		it_hist_free(&t->io_work[i].wait);
	free(t->io_work);
	free(t);
}

static struct list *list_of(struct it_fabric_tcp *t, struct it_map *m, uint64_t key, bool make)
{
	uint32_t i = it_map_get(m, key);

	if (i != IT_MAP_NONE)
		return &t->lists[i];
	if (!make)
		return NULL;
	if (t->nlists == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		struct list *l = realloc(t->lists, cap * sizeof(*l));
		if (!l)
			return NULL;
		t->lists = l;
		t->cap = cap;
	}
	if (it_map_put(m, key, t->nlists))
		return NULL;
	memset(&t->lists[t->nlists], 0, sizeof(t->lists[0]));
	return &t->lists[t->nlists++];
}

/* Room for one more entry of size sz at the end (live entries moved to the
 * front first when that frees enough). */
static void *list_push(struct list *l, size_t sz)
{
	if (l->n == l->cap && l->start >= l->cap / 2 && l->start) {
		memmove(l->v, (char *)l->v + l->start * sz, (l->n - l->start) * sz);
		l->n -= l->start;
		l->start = 0;
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 4;
		void *v = realloc(l->v, cap * sz);
		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	return (char *)l->v + l->n++ * sz;
}

static int add_send(struct it_fabric_tcp *t, enum it_tcp_side side, const struct it_event *e)
{
	uint16_t cid = e->tcp.cid;
	struct list *l;
	struct send *s;

	if (side == IT_TCP_HOST && e->tcp.cmd) {
		uint32_t c = it_map_get(&t->host_cid, e->tcp.cmd);
		if (e->tcp.pdu == IT_TCP_CMD_PDU) {
			if (it_map_put(&t->host_cid, e->tcp.cmd, cid))
				return -1;
		} else if (c != IT_MAP_NONE) {
			cid = (uint16_t)c;
		}
	}
	l = list_of(t, &t->sends, SEND_KEY(side, e->tcp.ctrl, e->tcp.qid, cid), true);

	/* a target's response that carries its C2H data's start: the data
	 * PDU went out first */
	if (l && side == IT_TCP_TARGET && e->tcp.pdu == IT_TCPT_RESPONSE && e->tcp.end_ns &&
	    e->tcp.end_ns <= e->ts_ns) {
		if (!(s = list_push(l, sizeof(*s))))
			return -1;
		*s = (struct send){ .ts = e->tcp.end_ns, .end = e->tcp.end_ns, .pdu = IT_TCPT_DATA_PDU };
		t->held++;
	}
	s = l ? list_push(l, sizeof(*s)) : NULL;
	if (!s)
		return -1;
	*s = (struct send){ .ts = e->ts_ns,
			    .end = side == IT_TCP_HOST && e->tcp.end_ns ? e->tcp.end_ns : e->ts_ns,
			    .pdu = e->tcp.pdu, .after = IT_TCP_STATE_AFTER_OF(e->tcp.flags),
			    .flags = e->tcp.flags & 0xff };
	t->held++;
	return 0;
}

static int add_arrival(struct it_fabric_tcp *t, enum it_tcp_side side, const struct it_event *e)
{
	struct list *l = list_of(t, &t->arrivals, QUEUE_KEY(side, e->tcp.ctrl, e->tcp.qid), true);
	uint64_t *v = l ? list_push(l, sizeof(*v)) : NULL;
	uint32_t k;

	if (!v)
		return -1;
	/* nearly sorted (events of several CPUs interleave): insertion sort */
	v = l->v;
	for (k = l->n - 1; k > l->start && v[k - 1] > e->ts_ns; k--)
		v[k] = v[k - 1];
	v[k] = e->ts_ns;
	t->held++;
	return 0;
}

/* A send from io_work: its run's delay, once per run. */
static int add_io_work(struct it_fabric_tcp *t, enum it_tcp_side side, const struct it_event *e)
{
	struct it_tcp_io_work *q = NULL;

	for (size_t i = 0; i < t->nio_work && !q; i++)
		if (t->io_work[i].side == side && t->io_work[i].ctrl == e->tcp.ctrl &&
		    t->io_work[i].qid == e->tcp.qid)
			q = &t->io_work[i];
	if (!q) {
		void *v = realloc(t->io_work, (t->nio_work + 1) * sizeof(*t->io_work));
		if (!v)
			return -1;
		t->io_work = v;
		q = &t->io_work[t->nio_work++];
		*q = (struct it_tcp_io_work){ .side = side, .ctrl = e->tcp.ctrl, .qid = e->tcp.qid };
		it_hist_init(&q->wait);
	} else if (q->last == e->tcp.io_work_wait_ns) {
		return 0; /* the same run's next send (a delay in ns repeats rarely) */
	}
	q->last = e->tcp.io_work_wait_ns;
	return it_hist_add(&q->wait, e->tcp.io_work_wait_ns);
}

const struct it_tcp_io_work *it_fabric_tcp_io_work(const struct it_fabric_tcp *t, size_t *n)
{
	*n = t->nio_work;
	return t->io_work;
}

int it_fabric_tcp_event(struct it_fabric_tcp *t, const struct it_event *e)
{
	enum it_tcp_side side = e->layer == IT_LAYER_NVMET_TCP ? IT_TCP_TARGET : IT_TCP_HOST;
	int err = 0;

	if (e->layer != IT_LAYER_NVME_TCP && e->layer != IT_LAYER_NVMET_TCP)
		return 0;
	if (e->ts_ns > t->latest)
		t->latest = e->ts_ns;
	switch (e->type) {
	case IT_EV_TCP_SEND:
	case IT_EV_TCPT_SEND:
		err = add_send(t, side, e);
		if (!err && (e->tcp.flags & IT_TCP_IO_WORK_WAIT))
			err = add_io_work(t, side, e);
		break;
	case IT_EV_TCP_READY:
	case IT_EV_TCPT_READY:
		err = add_arrival(t, side, e);
		break;
	}
	if (!err && t->held >= t->prune_at) {
		it_fabric_tcp_prune(t);
		t->prune_at = t->held * 2 > PRUNE_MIN ? t->held * 2 : PRUNE_MIN;
	}
	return err;
}

/* Drops a key's sends up to and including index last (older uses, and the
 * ones just given to a command). */
static void drop_through(struct it_fabric_tcp *t, struct list *l, uint32_t last)
{
	t->held -= last + 1 - l->start;
	l->start = last + 1;
	if (l->start == l->n)
		l->start = l->n = 0;
}

/* A key's sends up to time `to` (older uses of the cid included), taken
 * off its list: *count of them from the returned pointer, valid until the
 * next event is added; *gone: sends before this time were let go. */
static const struct send *take_sends(struct it_fabric_tcp *t, uint64_t key, uint64_t to,
				     uint32_t *count, uint64_t *gone)
{
	struct list *l = list_of(t, &t->sends, key, false);
	const struct send *v;
	uint32_t k;

	*count = 0;
	*gone = l ? l->gone_before : 0;
	if (!l)
		return NULL;
	v = (const struct send *)l->v + l->start;
	for (k = l->start; k < l->n && ((const struct send *)l->v)[k].ts <= to; k++)
		;
	*count = k - l->start;
	if (*count)
		drop_through(t, l, k - 1);
	return v;
}

enum it_tcp_found it_fabric_tcp_host_sent(struct it_fabric_tcp *t, uint16_t instance,
					  uint16_t qid, uint16_t cid, uint64_t s, uint64_t n,
					  uint64_t *first, uint64_t *capsule, uint64_t *h2c_first,
					  uint64_t *h2c_last)
{
	uint32_t count;
	uint64_t gone;
	const struct send *v = take_sends(t, SEND_KEY(IT_TCP_HOST, instance, qid, cid), n, &count,
					  &gone);

	*first = *capsule = *h2c_first = *h2c_last = 0;
	for (uint32_t k = 0; k < count; k++) {
		if (v[k].ts < s)
			continue;
		if (!*first)
			*first = v[k].ts;
		/* the capsule (with in-capsule data) is out when the request
		 * leaves the send slot; H2C data after an R2T comes later, in
		 * the calls after that: the first of them starts it, the last
		 * one's return ends it (an R2T each for data above the
		 * target's maxh2cdata: all of them) */
		if (*capsule && v[k].ts >= *capsule) {
			if (!*h2c_first)
				*h2c_first = v[k].ts;
			*h2c_last = v[k].end;
		}
		if (!*capsule && v[k].pdu != IT_TCP_H2C_PDU && (v[k].flags & IT_TCP_SENT_ALL))
			*capsule = v[k].end;
	}
	if (*first && *capsule)
		return IT_TCP_FOUND;
	return gone > s ? IT_TCP_GONE : IT_TCP_NONE;
}

enum it_tcp_found it_fabric_tcp_target_sent(struct it_fabric_tcp *t, uint16_t cntlid,
					    uint16_t qid, uint16_t cid, uint64_t ti, uint64_t tc,
					    uint64_t n, uint64_t *first, uint64_t *response,
					    uint64_t *r2t)
{
	uint32_t count;
	uint64_t gone;
	const struct send *v = take_sends(t, SEND_KEY(IT_TCP_TARGET, cntlid, qid, cid), n, &count,
					  &gone);

	*first = *response = *r2t = 0;
	for (uint32_t k = 0; k < count; k++) {
		if (v[k].ts >= ti && v[k].ts <= tc && v[k].pdu == IT_TCPT_R2T && !*r2t)
			*r2t = v[k].ts;
		if (v[k].ts < ti || v[k].ts < tc || v[k].pdu == IT_TCPT_R2T)
			continue;
		if (!*first)
			*first = v[k].ts;
		if (!*response && v[k].pdu == IT_TCPT_RESPONSE)
			*response = v[k].ts;
	}
	if (*first && !*response)
		*response = *first;
	if (*first)
		return IT_TCP_FOUND;
	return gone > ti ? IT_TCP_GONE : IT_TCP_NONE;
}

/* Queue (side, ctrl, qid)'s arrivals, or why there are none from from on. */
static enum it_tcp_found arrivals(const struct it_fabric_tcp *t, enum it_tcp_side side,
				  uint16_t ctrl, uint16_t qid, uint64_t from, const struct list **l)
{
	uint32_t i = it_map_get(&t->arrivals, QUEUE_KEY(side, ctrl, qid));

	*l = i == IT_MAP_NONE ? NULL : &t->lists[i];
	if (!*l)
		return IT_TCP_NONE;
	return (*l)->gone_before > from ? IT_TCP_GONE : IT_TCP_FOUND;
}

/* The index of the first of l's values above v (after_equal: at or above). */
static uint32_t search(const struct list *l, uint64_t v, bool after_equal)
{
	const uint64_t *a = l->v;
	uint32_t lo = l->start, hi = l->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (after_equal ? a[mid] < v : a[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first (or last) arrival on the queue in [from, to]. */
static enum it_tcp_found find_arrival(const struct it_fabric_tcp *t, enum it_tcp_side side,
				      uint16_t ctrl, uint16_t qid, uint64_t from, uint64_t to,
				      bool last, uint64_t *at)
{
	const struct list *l;
	enum it_tcp_found r = arrivals(t, side, ctrl, qid, from, &l);
	const uint64_t *v;
	uint32_t k;

	*at = 0;
	if (r != IT_TCP_FOUND)
		return r;
	v = l->v;
	k = last ? search(l, to, false) : search(l, from, true);
	if (last ? k == l->start || v[k - 1] < from : k == l->n || v[k] > to)
		return IT_TCP_NONE;
	*at = v[last ? k - 1 : k];
	return IT_TCP_FOUND;
}

enum it_tcp_found it_fabric_tcp_arrival(const struct it_fabric_tcp *t, enum it_tcp_side side,
					uint16_t ctrl, uint16_t qid, uint64_t from, uint64_t to,
					uint64_t *at)
{
	return find_arrival(t, side, ctrl, qid, from, to, false, at);
}

enum it_tcp_found it_fabric_tcp_arrival_last(const struct it_fabric_tcp *t, enum it_tcp_side side,
					     uint16_t ctrl, uint16_t qid, uint64_t from, uint64_t to,
					     uint64_t *at)
{
	return find_arrival(t, side, ctrl, qid, from, to, true, at);
}

void it_fabric_tcp_prune(struct it_fabric_tcp *t)
{
	uint64_t before = t->latest > HORIZON_NS ? t->latest - HORIZON_NS : 0;

	if (!before)
		return;
	for (uint32_t k = 0; k <= t->sends.mask; k++) {
		const struct it_map_slot *s = &t->sends.slots[k];
		struct list *l = s->key ? &t->lists[s->val] : NULL;
		const struct send *v = l ? l->v : NULL;
		uint32_t last = UINT32_MAX;

		for (uint32_t j = l ? l->start : 0; l && j < l->n && v[j].ts < before; j++)
			last = j;
		if (last != UINT32_MAX) {
			l->gone_before = v[last].ts + 1;
			drop_through(t, l, last);
		}
	}
	for (uint32_t k = 0; k <= t->arrivals.mask; k++) {
		const struct it_map_slot *s = &t->arrivals.slots[k];
		struct list *l = s->key ? &t->lists[s->val] : NULL;
		const uint64_t *v = l ? l->v : NULL;

		while (l && l->start < l->n && v[l->start] < before) {
			l->gone_before = v[l->start] + 1;
			l->start++;
			t->held--;
		}
	}
}
