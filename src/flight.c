// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The flight recorder's buffer (flight.h): a ring of events whose oldest
 * leave once they fall out of the window, or when the memory bound needs
 * their room (counted: a window cut short by memory is said, never hidden).
 * The trigger follows each I/O by its identities: the bio's Q time (by
 * bio), the request's D time (by request); at C, the request's first bio
 * (aux) finds its Q. Two small tables indexed by a hash of the identity,
 * an entry overwritten by a later I/O that hashes alike (that I/O's stage
 * is then unknown, and no firing comes of it).
 */
#include <stdlib.h>
#include <string.h>

#include "flight.h"

#define SLOTS 4096 /* per table: far more than the requests in flight */

struct slot {
	uint64_t id, ts;
};

struct it_flight {
	struct it_event *ev;
	size_t cap, head, n;         /* the oldest is ev[head] */
	uint64_t window_ns;
	struct it_trigger trig;
	bool disarmed;
	uint64_t last_over_ns;
	struct slot q[SLOTS], d[SLOTS];
	struct it_flight_stats st;
};

struct it_flight *it_flight_new(uint64_t window_ns, size_t mem_bytes, const struct it_trigger *trig)
{
	struct it_flight *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cap = mem_bytes / sizeof(struct it_event);
	if (!f->cap)
		f->cap = 1;
	f->ev = malloc(f->cap * sizeof(*f->ev));
	if (!f->ev) {
		free(f);
		return NULL;
	}
	f->window_ns = window_ns;
	if (trig)
		f->trig = *trig;
	f->st.capacity = f->cap;
	return f;
}

void it_flight_free(struct it_flight *f)
{
	if (!f)
		return;
	free(f->ev);
	free(f);
}

static struct slot *slot_of(struct slot *t, uint64_t id)
{
	return &t[(id * 0x9e3779b97f4a7c15ull) >> 52 & (SLOTS - 1)];
}

static uint64_t take(struct slot *t, uint64_t id)
{
	struct slot *s = slot_of(t, id);
	uint64_t ts = s->id == id ? s->ts : 0;

	if (s->id == id)
		s->id = 0;
	return ts;
}

/* The trigger's stage of a completed request; 0 when unknown. */
static uint64_t stage_ns(struct it_flight *f, const struct it_event *e)
{
	uint64_t q = take(f->q, e->aux), d = take(f->d, e->id);

	switch (f->trig.stage) {
	case IT_TRIG_Q2C: return q && q <= e->ts_ns ? e->ts_ns - q : 0;
	case IT_TRIG_D2C: return d && d <= e->ts_ns ? e->ts_ns - d : 0;
	case IT_TRIG_Q2D: return q && d && q <= d ? d - q : 0;
	}
	return 0;
}

static bool watch(struct it_flight *f, const struct it_event *e)
{
	uint64_t ns;
	struct slot *s;

	if (e->layer != IT_LAYER_BLOCK)
		return false;
	if (e->type == IT_EV_BIO_QUEUE || e->type == IT_EV_RQ_ISSUE) {
		s = slot_of(e->type == IT_EV_BIO_QUEUE ? f->q : f->d, e->id);
		s->id = e->id;
		s->ts = e->ts_ns;
		return false;
	}
	if (e->type != IT_EV_RQ_COMPLETE || (e->flags & (IT_F_FLUSH_SEQ | IT_F_PARTIAL)))
		return false;
	ns = stage_ns(f, e);
	if (!ns)
		return false;
	if (ns > f->trig.over_ns) {
		f->last_over_ns = e->ts_ns;
		if (f->disarmed)
			return false;
		f->disarmed = true;
		f->st.fired++;
		return true;
	}
	if (f->disarmed && e->ts_ns - f->last_over_ns >= IT_FLIGHT_REARM_NS)
		f->disarmed = false;
	return false;
}

bool it_flight_add(struct it_flight *f, const struct it_event *e)
{
	/* out of the window: the events before e's time minus the window */
	while (f->n && f->ev[f->head].ts_ns + f->window_ns < e->ts_ns) {
		f->head = (f->head + 1) % f->cap;
		f->n--;
	}
	if (f->n == f->cap) { /* the memory bound: the oldest goes early */
		f->head = (f->head + 1) % f->cap;
		f->n--;
		f->st.overwritten++;
	}
	f->ev[(f->head + f->n) % f->cap] = *e;
	f->n++;
	f->st.added++;
	return f->trig.on && watch(f, e);
}

long it_flight_each(const struct it_flight *f, uint64_t now_ns,
		    int (*fn)(const struct it_event *e, void *ctx), void *ctx)
{
	long count = 0;
	int rc;

	for (size_t i = 0; i < f->n; i++) {
		const struct it_event *e = &f->ev[(f->head + i) % f->cap];

		if (e->ts_ns + f->window_ns < now_ns)
			continue;
		if ((rc = fn(e, ctx)))
			return rc;
		count++;
	}
	return count;
}

void it_flight_stats(const struct it_flight *f, struct it_flight_stats *st)
{
	*st = f->st;
}
