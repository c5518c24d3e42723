// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A target switch's span (query_target.h): the fabric join fed the span's
 * events alone, so its commands are those parsed and completed inside it,
 * and with no host command given, each is the target's alone: the view
 * the report prints as "Target alone", per initiator controller and opcode.
 */
#include "agent/query_target.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "layers/fabric/fabric.h"

struct it_target_span {
	struct it_fabric *f;
	uint64_t from, to;
	bool finished;
};

int it_target_stage(const char *name)
{
	for (int s = 0; s < IT_FS_MAX; s++)
		if (!strcmp(it_fabric_stages[s].name, name))
			return s;
	return -1;
}

struct it_target_span *it_target_span_new(uint64_t from, uint64_t to)
{
	struct it_target_span *s = calloc(1, sizeof(*s));

	if (s && !(s->f = it_fabric_new())) {
		free(s);
		return NULL;
	}
	if (s) {
		s->from = from;
		s->to = to;
	}
	return s;
}

/* the events the fabric join reads, as its analysis layer picks them */
static bool fabric_reads(const struct it_event *e)
{
	return e->layer == IT_LAYER_NVMET || e->type == IT_EV_NVME_CTRL ||
	       e->layer == IT_LAYER_NVME_TCP || e->layer == IT_LAYER_NVMET_TCP ||
	       e->type == IT_EV_BIO_QUEUE;
}

int it_target_span_feed(struct it_target_span *s, const struct it_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fabric_reads(&evs[i]) && evs[i].ts_ns >= s->from && evs[i].ts_ns < s->to &&
		    it_fabric_event(s->f, &evs[i]))
			return -1;
	return it_fabric_settle(s->f);
}

void it_target_span_trail(struct it_target_span *s, uint32_t dev, uint64_t q, uint64_t d,
			  uint64_t c)
{
	if (q >= s->from && c < s->to)
		it_fabric_trail(s->f, dev, q, d, c);
}

int it_target_span_stat(struct it_target_span *s, int stage, int cntlid, int opcode,
			uint64_t *ios, struct it_hist *h)
{
	const struct it_fabric_results *r;

	if (!s->finished && it_fabric_finish(s->f))
		return -1;
	s->finished = true;
	r = it_fabric_results(s->f);
	for (size_t i = 0; i < r->ntarget_alone; i++) {
		const struct it_fabric_op *o = &r->target_alone[i];

		if ((opcode >= 0 && o->opcode != opcode) || (cntlid >= 0 && o->cntlid != cntlid))
			continue;
		*ios += o->count;
		if (it_hist_merge(h, &o->stage[stage]))
			return -1;
	}
	return 0;
}

void it_target_span_free(struct it_target_span *s)
{
	if (!s)
		return;
	it_fabric_free(s->f);
	free(s);
}
