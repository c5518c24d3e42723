// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The target's side read ahead (tape.h): items in the order the join
 * would have met them in a pass over the target's machine (a chunk's
 * trails, published while its block layer read it, then the chunk's
 * events), with a mark at each chunk's end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/hashmap.h"
#include "layers/fabric/tape.h"
#include "tracefile.h"

enum item_kind { ITEM_EVENT, ITEM_TRAIL };

struct item {
	uint8_t kind;
	union {
		struct it_event e;
		struct { uint32_t dev; uint64_t q, d, c; } t;
	};
};

struct tchunk {
	size_t first, end;      /* items [first, end) */
	uint64_t earliest;      /* its earliest time */
};

struct it_fabric_tape {
	uint16_t machine;
	struct item *it;
	size_t n, cap;
	struct tchunk *ch;
	size_t nch, chcap, played;
	bool nomem;
};

static struct item *item_new(struct it_fabric_tape *t)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		void *v = realloc(t->it, cap * sizeof(*t->it));
		if (!v) {
			t->nomem = true;
			return NULL;
		}
		t->it = v;
		t->cap = cap;
	}
	return &t->it[t->n++];
}

/* The items since the last mark are a chunk. */
static void mark(struct it_fabric_tape *t)
{
	size_t first = t->nch ? t->ch[t->nch - 1].end : 0;
	uint64_t earliest = UINT64_MAX;

	if (first == t->n)
		return;
	if (t->nch == t->chcap) {
		size_t cap = t->chcap ? 2 * t->chcap : 64;
		void *v = realloc(t->ch, cap * sizeof(*t->ch));
		if (!v) {
			t->nomem = true;
			return;
		}
		t->ch = v;
		t->chcap = cap;
	}
	for (size_t i = first; i < t->n; i++) {
		uint64_t at = t->it[i].kind == ITEM_EVENT ? t->it[i].e.ts_ns : t->it[i].t.q;
		if (at && at < earliest)
			earliest = at;
	}
	t->ch[t->nch++] = (struct tchunk){ first, t->n, earliest };
}

static void on_trail(const void *msg, void *ctx)
{
	const struct it_trail *tr = ((const struct it_bus_trail *)msg)->t;
	struct it_fabric_tape *t = ctx;
	struct item *i;

	if (!tr->ts[IT_PT_Q] || !tr->ts[IT_PT_D] || !tr->ts[IT_PT_C] || !(i = item_new(t)))
		return;
	i->kind = ITEM_TRAIL;
	i->t.dev = tr->dev;
	i->t.q = tr->ts[IT_PT_Q];
	i->t.d = tr->ts[IT_PT_D];
	i->t.c = tr->ts[IT_PT_C];
}

/* What the join reads of a target's events. */
static bool wanted(const struct it_event *e)
{
	return e->layer == IT_LAYER_NVMET || e->layer == IT_LAYER_NVMET_TCP ||
	       (e->layer == IT_LAYER_BLOCK && e->type == IT_EV_BIO_QUEUE);
}

struct it_fabric_tape *it_fabric_tape_read(const struct it_pass_info *info,
					   const struct it_machine *m, char *err, size_t errlen)
{
	const struct it_select sel = { m->id, IT_ANY, IT_CHUNK_EVENTS };
	struct it_fabric_tape *t = calloc(1, sizeof(*t));
	struct it_pass_info mi = *info;
	struct it_bus bus = { 0 };
	struct it_reader *rd = NULL;
	void *block = NULL;
	struct it_chunk c;
	int rc = 0;

	if (!t)
		goto nomem;
	t->machine = m->id;
	mi.machine = m->id;
	mi.host = &m->host;
	mi.devs = m->devs;
	mi.ndevs = m->ndevs;
	mi.bus = &bus;
	if (!(rd = it_reader_open_select(info->path, &sel, 1, err, errlen)))
		goto fail;
	if (!(block = it_layer_block.new(&mi)) || it_bus_subscribe(&bus, IT_BUS_TRAIL_DONE, on_trail, t))
		goto nomem;
	while ((rc = it_reader_next_chunk(rd, &c)) == 1) {
		const struct it_event *evs = c.data;

		if (it_layer_block.feed(block, c.type, c.data, c.len, c.count))
			goto nomem;
		for (uint32_t k = 0; k < c.count; k++) {
			struct item *i;
			if (!wanted(&evs[k]))
				continue;
			if (!(i = item_new(t)))
				goto nomem;
			i->kind = ITEM_EVENT;
			i->e = evs[k];
		}
		mark(t);
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", it_reader_error(rd));
		goto fail;
	}
	/* the trails still open at the end complete (or are given up) now */
	if (it_layer_block.finish(block, &(struct it_span){ .start_ns = m->host.start_monotonic_ns }))
		goto nomem;
	mark(t);
	if (t->nomem)
		goto nomem;
	it_layer_block.free(block);
	it_reader_close(rd);
	return t;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	if (block)
		it_layer_block.free(block);
	it_reader_close(rd);
	it_fabric_tape_free(t);
	return NULL;
}

void it_fabric_tape_free(struct it_fabric_tape *t)
{
	if (!t)
		return;
	free(t->it);
	free(t->ch);
	free(t);
}

uint16_t it_fabric_tape_machine(const struct it_fabric_tape *t)
{
	return t->machine;
}

#define CMD_KEY(cntlid, qid, cid) ((uint64_t)(cntlid) << 32 | (uint64_t)(qid) << 16 | (cid))

static struct it_clock_cmd *grow(struct it_clock_cmd *v, size_t n, size_t *cap)
{
	if (n < *cap)
		return v;
	*cap = *cap ? 2 * *cap : 256;
	return realloc(v, *cap * sizeof(*v));
}

struct it_clock_cmd *it_fabric_tape_commands(const struct it_fabric_tape *t, size_t *n)
{
	struct it_clock_cmd *v = NULL, *g;
	struct it_map open;
	size_t cap = 0;

	*n = 0;
	if (it_map_init(&open, 8))
		goto nomem;
	for (size_t k = 0; k < t->n; k++) {
		const struct it_event *e = &t->it[k].e;
		uint32_t i;

		if (t->it[k].kind != ITEM_EVENT || e->layer != IT_LAYER_NVMET)
			continue;
		if (e->type == IT_EV_NVMET_INIT) {
			if (!(g = grow(v, *n, &cap)))
				goto nomem;
			v = g;
			v[*n] = (struct it_clock_cmd){ .start = e->ts_ns };
			if (it_map_put(&open, e->nvmet.req, (uint32_t)(*n)++))
				goto nomem;
		} else if (e->type == IT_EV_NVMET_COMPLETE &&
			   (i = it_map_take(&open, e->nvmet.req)) != IT_MAP_NONE) {
			v[i].key = CMD_KEY(e->nvmet.cntlid, e->nvmet.qid, e->nvmet.cid);
			v[i].end = e->ts_ns;
		}
	}
	it_map_free(&open);
	return v;
nomem:
	it_map_free(&open);
	free(v);
	*n = 1;
	return NULL;
}

struct it_clock_cmd *it_fabric_host_commands(const char *path, size_t *n)
{
	const struct it_select sel = { 0, IT_ANY, IT_CHUNK_EVENTS };
	struct { uint16_t instance, cntlid; } ctrl[64];
	size_t nctrl = 0, cap = 0;
	struct it_clock_cmd *v = NULL, *g;
	struct it_reader *rd;
	struct it_map open;
	struct it_chunk c;
	char err[256];

	*n = 0;
	if (!(rd = it_reader_open_select(path, &sel, 1, err, sizeof(err))))
		return NULL; /* the pass reads it too and says why */
	if (it_map_init(&open, 8)) {
		it_reader_close(rd);
		*n = 1;
		return NULL;
	}
	while (it_reader_next_chunk(rd, &c) == 1) {
		const struct it_event *evs = c.data;

		for (uint32_t k = 0; k < c.count; k++) {
			const struct it_nvme_event *e = &evs[k].nvme;
			uint32_t i;

			if (e->layer != IT_LAYER_NVME)
				continue;
			if (e->type == IT_EV_NVME_CTRL && nctrl < 64) {
				ctrl[nctrl++] = (typeof(ctrl[0])){ e->ctrl, (uint16_t)e->cntlid };
			} else if (e->type == IT_EV_NVME_SUBMIT) {
				size_t x = 0;
				while (x < nctrl && ctrl[x].instance != e->ctrl)
					x++;
				if (x == nctrl)
					continue; /* not in the table: the join cannot key it either */
				if (!(g = grow(v, *n, &cap)))
					goto nomem;
				v = g;
				v[*n] = (struct it_clock_cmd){ CMD_KEY(ctrl[x].cntlid, e->qid, e->cid),
							       e->ts_ns, 0 };
				if (it_map_put(&open, e->rq, (uint32_t)(*n)++))
					goto nomem;
			} else if (e->type == IT_EV_NVME_COMPLETE &&
				   (i = it_map_take(&open, e->rq)) != IT_MAP_NONE) {
				v[i].end = e->ts_ns;
			}
		}
	}
	it_map_free(&open);
	it_reader_close(rd);
	return v;
nomem:
	it_map_free(&open);
	it_reader_close(rd);
	free(v);
	*n = 1;
	return NULL;
}

static uint64_t moved(uint64_t t, int64_t ns)
{
	return t ? t + (uint64_t)ns : 0;
}

void it_fabric_tape_shift(struct it_fabric_tape *t, int64_t ns)
{
	for (size_t k = 0; k < t->n; k++) {
		struct item *i = &t->it[k];

		if (i->kind == ITEM_TRAIL) {
			i->t.q = moved(i->t.q, ns);
			i->t.d = moved(i->t.d, ns);
			i->t.c = moved(i->t.c, ns);
			continue;
		}
		i->e.ts_ns = moved(i->e.ts_ns, ns);
		if (i->e.layer == IT_LAYER_NVMET_TCP) /* a response's C2H data start */
			i->e.tcp.end_ns = moved(i->e.tcp.end_ns, ns);
	}
	for (size_t k = 0; k < t->nch; k++)
		if (t->ch[k].earliest != UINT64_MAX)
			t->ch[k].earliest = moved(t->ch[k].earliest, ns);
}

int it_fabric_tape_play(struct it_fabric_tape *t, struct it_fabric *f, uint64_t until)
{
	int rc = 0;

	it_fabric_feeding(f, t->machine);
	for (; t->played < t->nch && t->ch[t->played].earliest <= until && !rc; t->played++) {
		const struct tchunk *ch = &t->ch[t->played];

		for (size_t k = ch->first; k < ch->end && !rc; k++)
			rc = t->it[k].kind == ITEM_EVENT ?
				     it_fabric_event(f, &t->it[k].e) :
				     it_fabric_trail(f, t->it[k].t.dev, t->it[k].t.q, t->it[k].t.d,
						     t->it[k].t.c);
		if (!rc)
			rc = it_fabric_settle_target(f);
	}
	it_fabric_feeding(f, 0);
	return rc;
}
