// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The target's side read alongside (tape.h): one chunk at a time, its
 * items in the order the join would have met them in a pass over the
 * target's machine (the trails its block layer published while reading
 * it, then the chunk's events).
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

struct it_fabric_tape {
	uint16_t machine;
	struct it_reader *rd;
	void *block;              /* the target's block layer (its trails) */
	struct it_bus bus;
	struct it_pass_info info; /* the target machine's */
	struct it_host_rec host;  /* its facts and devices, copied: the reader */
	struct it_device_rec *devs; /* that gave them is gone */
	struct item *it;          /* the chunk read ahead */
	size_t n, cap;
	uint64_t earliest;        /* its earliest time (moved) */
	bool ahead;               /* a chunk is read ahead */
	bool done;                /* the records are all read */
	bool nomem;
	struct it_clock_guess guess; /* what the times are moved by */
	char error[160];          /* why the records end early, or "" */
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

struct it_fabric_tape *it_fabric_tape_open(const struct it_pass_info *info,
					   const struct it_machine *m, char *err, size_t errlen)
{
	const struct it_select sel = { m->id, IT_ANY, IT_CHUNK_EVENTS };
	struct it_fabric_tape *t = calloc(1, sizeof(*t));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->machine = m->id;
	t->host = m->host;
	if (m->ndevs && !(t->devs = malloc(m->ndevs * sizeof(*t->devs)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (m->ndevs)
		memcpy(t->devs, m->devs, m->ndevs * sizeof(*t->devs));
	t->info = *info;
	t->info.machine = m->id;
	t->info.host = &t->host;
	t->info.devs = t->devs;
	t->info.ndevs = m->ndevs;
	t->info.bus = &t->bus;
	if (!(t->rd = it_reader_open_select(info->path, &sel, 1, err, errlen)))
		goto fail;
	if (!(t->block = it_layer_block.new(&t->info)) ||
	    it_bus_subscribe(&t->bus, IT_BUS_TRAIL_DONE, on_trail, t)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return t;
fail:
	it_fabric_tape_free(t);
	return NULL;
}

void it_fabric_tape_free(struct it_fabric_tape *t)
{
	if (!t)
		return;
	if (t->block)
		it_layer_block.free(t->block);
	it_reader_close(t->rd);
	free(t->it);
	free(t->devs);
	free(t);
}

uint16_t it_fabric_tape_machine(const struct it_fabric_tape *t)
{
	return t->machine;
}

const char *it_fabric_tape_error(const struct it_fabric_tape *t)
{
	return t->error[0] ? t->error : NULL;
}

static uint64_t moved(const struct it_fabric_tape *t, uint64_t at)
{
	return at ? it_clock_guess_map(&t->guess, at) : 0;
}

/* The next chunk's items (its block layer's trails first, as a pass
 * meets them, then its events), their times moved; at the end, the
 * trails still open. false when nothing is left. */
static bool read_ahead(struct it_fabric_tape *t)
{
	struct it_chunk c;
	int rc;

	t->n = 0;
	while (!t->n && !t->done) {
		rc = it_reader_next_chunk(t->rd, &c);
		if (rc == 1) {
			const struct it_event *evs = c.data;
			if (it_layer_block.feed(t->block, c.type, c.data, c.len, c.count))
				t->nomem = true;
			for (uint32_t k = 0; k < c.count; k++) {
				struct item *i;
				if (!wanted(&evs[k]) || !(i = item_new(t)))
					continue;
				i->kind = ITEM_EVENT;
				i->e = evs[k];
			}
			continue;
		}
		if (rc < 0)
			snprintf(t->error, sizeof(t->error), "cannot read machine %u's records: %s",
				 t->machine, it_reader_error(t->rd));
		/* the trails still open complete (or are given up) now */
		if (it_layer_block.finish(t->block,
					  &(struct it_span){ .start_ns = t->info.host->start_monotonic_ns }))
			t->nomem = true;
		t->done = true;
	}
	t->earliest = UINT64_MAX;
	for (size_t k = 0; k < t->n; k++) {
		struct item *i = &t->it[k];
		uint64_t at;
		if (i->kind == ITEM_TRAIL) {
			i->t.q = moved(t, i->t.q);
			i->t.d = moved(t, i->t.d);
			i->t.c = moved(t, i->t.c);
			at = i->t.q;
		} else {
			i->e.ts_ns = moved(t, i->e.ts_ns);
			if (i->e.layer == IT_LAYER_NVMET_TCP) /* a response's C2H data start */
				i->e.tcp.end_ns = moved(t, i->e.tcp.end_ns);
			at = i->e.ts_ns;
		}
		if (at && at < t->earliest)
			t->earliest = at;
	}
	return t->ahead = t->n > 0;
}

#define CMD_KEY(cntlid, qid, cid) ((uint64_t)(cntlid) << 32 | (uint64_t)(qid) << 16 | (cid))

/* One side's commands as it_fabric_target_commands and _host_commands
 * collect them: started by a request, ended by the same request. */
struct scan {
	struct it_clock_cmd *v;
	size_t n, cap;
	struct it_map open;       /* request -> its command's index in v */
	struct { uint16_t instance, cntlid; } ctrl[64]; /* the host's controllers */
	size_t nctrl;
};

static int scan_start(struct scan *s, uint64_t req, struct it_clock_cmd c)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		void *v = realloc(s->v, cap * sizeof(*s->v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = c;
	return it_map_put(&s->open, req, (uint32_t)s->n++);
}

/* The command req started, now ended at ts; NULL when none was open. */
static struct it_clock_cmd *scan_end(struct scan *s, uint64_t req, uint64_t ts)
{
	uint32_t i = it_map_take(&s->open, req);

	if (i == IT_MAP_NONE)
		return NULL;
	s->v[i].end = ts;
	return &s->v[i];
}

/* nvmet INIT to COMPLETE: TI, TC; keyed at the end, where the cid is. */
static int target_event(struct scan *s, const struct it_event *e)
{
	struct it_clock_cmd *c;

	if (e->layer != IT_LAYER_NVMET)
		return 0;
	if (e->type == IT_EV_NVMET_INIT)
		return scan_start(s, e->nvmet.req, (struct it_clock_cmd){ .start = e->ts_ns });
	if (e->type == IT_EV_NVMET_COMPLETE && (c = scan_end(s, e->nvmet.req, e->ts_ns)))
		c->key = CMD_KEY(e->nvmet.cntlid, e->nvmet.qid, e->nvmet.cid);
	return 0;
}

/* nvme SUBMIT to COMPLETE: S, N; keyed through the controllers' table. */
static int host_event(struct scan *s, const struct it_event *ev)
{
	const struct it_nvme_event *e = &ev->nvme;
	size_t x = 0;

	if (e->layer != IT_LAYER_NVME)
		return 0;
	if (e->type == IT_EV_NVME_CTRL && s->nctrl < 64) {
		s->ctrl[s->nctrl++] = (typeof(s->ctrl[0])){ e->ctrl, (uint16_t)e->cntlid };
	} else if (e->type == IT_EV_NVME_SUBMIT) {
		while (x < s->nctrl && s->ctrl[x].instance != e->ctrl)
			x++;
		if (x == s->nctrl)
			return 0; /* not in the table: the join cannot key it either */
		return scan_start(s, e->rq, (struct it_clock_cmd){
			CMD_KEY(s->ctrl[x].cntlid, e->qid, e->cid), e->ts_ns, 0 });
	} else if (e->type == IT_EV_NVME_COMPLETE) {
		scan_end(s, e->rq, e->ts_ns);
	}
	return 0;
}

/* Every event of machine's records through one(); the commands it kept. */
static struct it_clock_cmd *scan(const char *path, uint16_t machine, size_t *n,
				 int (*one)(struct scan *, const struct it_event *))
{
	const struct it_select sel = { machine, IT_ANY, IT_CHUNK_EVENTS };
	struct scan s = { .v = NULL };
	struct it_reader *rd;
	struct it_chunk c;
	char err[256];
	int rc = 0;

	*n = 0;
	if (!(rd = it_reader_open_select(path, &sel, 1, err, sizeof(err))))
		return NULL; /* the pass reads it too and says why */
	if (it_map_init(&s.open, 8)) {
		it_reader_close(rd);
		*n = 1;
		return NULL;
	}
	while (!rc && it_reader_next_chunk(rd, &c) == 1) {
		const struct it_event *evs = c.data;

		for (uint32_t k = 0; k < c.count && !rc; k++)
			rc = one(&s, &evs[k]);
	}
	it_map_free(&s.open);
	it_reader_close(rd);
	if (rc) { /* out of memory */
		free(s.v);
		*n = 1;
		return NULL;
	}
	*n = s.n;
	return s.v;
}

struct it_clock_cmd *it_fabric_target_commands(const char *path, uint16_t machine, size_t *n)
{
	return scan(path, machine, n, target_event);
}

struct it_clock_cmd *it_fabric_host_commands(const char *path, size_t *n)
{
	return scan(path, 0, n, host_event);
}

void it_fabric_tape_shift(struct it_fabric_tape *t, const struct it_clock_guess *g)
{
	t->guess = *g;
}

int it_fabric_tape_play(struct it_fabric_tape *t, struct it_fabric *f, uint64_t until)
{
	int rc = 0;

	it_fabric_feeding(f, t->machine);
	while (!rc && (t->ahead || read_ahead(t)) && t->earliest <= until) {
		for (size_t k = 0; k < t->n && !rc; k++)
			rc = t->it[k].kind == ITEM_EVENT ?
				     it_fabric_event(f, &t->it[k].e) :
				     it_fabric_trail(f, t->it[k].t.dev, t->it[k].t.q, t->it[k].t.d,
						     t->it[k].t.c);
		if (!rc)
			rc = it_fabric_settle_target(f);
		t->ahead = false;
	}
	it_fabric_feeding(f, 0);
	return rc || t->nomem ? -1 : 0;
}
