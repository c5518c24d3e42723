// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The one pass over a trace file, the bus, and `iotrail report`'s set of
 * analysis layers (layer.h): which layers a trace has, feeding them, then
 * their report sections in registry order.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "tracefile.h"

int it_bus_subscribe(struct it_bus *b, enum it_bus_topic t, it_bus_fn fn, void *ctx)
{
	if (b->nsub[t] == IT_BUS_SUBS)
		return -1;
	b->sub[t][b->nsub[t]].fn = fn;
	b->sub[t][b->nsub[t]].ctx = ctx;
	b->nsub[t]++;
	return 0;
}

uint32_t it_pass_layers(const struct it_reader *rd)
{
	const struct it_layer_rec *l;
	uint32_t mask = 0;
	size_t n;

	l = it_reader_layers(rd, &n);
	for (size_t i = 0; i < n; i++)
		if (l[i].id < 32)
			mask |= 1u << l[i].id;
	return mask;
}

void it_pass_types(const uint16_t *chunks, size_t nchunks, uint16_t *types, size_t *n, size_t max)
{
	for (size_t i = 0; i < nchunks; i++) {
		size_t k = 0;

		while (k < *n && types[k] != chunks[i])
			k++;
		if (k == *n && *n < max)
			types[(*n)++] = chunks[i];
	}
}

static bool reads(const struct it_consumer *c, uint16_t type)
{
	for (size_t i = 0; i < c->nchunks; i++)
		if (c->chunks[i] == type)
			return true;
	return false;
}

int it_pass_run(struct it_reader *rd, const struct it_consumer *c, size_t n, char *err,
		size_t errlen)
{
	const void *p;
	uint16_t type;
	uint32_t count;
	size_t len;
	int rc;

	while ((rc = it_reader_next_records(rd, &type, &p, &len, &count)) > 0)
		for (size_t i = 0; i < n; i++)
			if (reads(&c[i], type) && c[i].feed(c[i].self, type, p, len, count))
				return -2;
	if (rc < 0) {
		snprintf(err, errlen, "%s", it_reader_error(rd));
		return -1;
	}
	return 0;
}

/* ---- the analysis layers of a report ---- */

struct built {
	const struct it_analysis_layer *ops;
	void *self;
};

struct it_analysis {
	struct it_bus bus;
	struct it_pass_info info;
	struct built *l;
	size_t n;
};

size_t it_analysis_chunk_types(uint16_t *types, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < it_analysis_nlayers; i++)
		it_pass_types(it_analysis_layers[i]->chunks, it_analysis_layers[i]->nchunks, types, &n,
			      max);
	return n;
}

struct it_analysis *it_analysis_new(const struct it_pass_info *info)
{
	struct it_analysis *an = calloc(1, sizeof(*an));

	if (!an || !(an->l = calloc(it_analysis_nlayers, sizeof(*an->l)))) {
		free(an);
		return NULL;
	}
	an->info = *info;
	an->info.bus = &an->bus;
	/* in registry order: a layer subscribes to what the ones before it publish */
	for (size_t i = 0; i < it_analysis_nlayers; i++) {
		const struct it_analysis_layer *ops = it_analysis_layers[i];

		if (!ops->always && !(an->info.layers & (1u << ops->layer)))
			continue;
		an->l[an->n].ops = ops;
		if (!(an->l[an->n].self = ops->new(&an->info))) {
			it_analysis_free(an);
			return NULL;
		}
		an->n++;
	}
	return an;
}

bool it_analysis_lists(const struct it_analysis *an, const struct it_analysis_layer **missing)
{
	*missing = NULL;
	for (size_t i = 0; i < an->n; i++)
		if (an->l[i].ops->report_log)
			return true;
	for (size_t i = 0; i < it_analysis_nlayers && !*missing; i++)
		if (it_analysis_layers[i]->report_log)
			*missing = it_analysis_layers[i];
	return false;
}

/* -2 for it_analysis_run, with the first failed layer's reason in err
 * (empty when memory ran out). */
static int layer_failed(struct it_analysis *an, char *err, size_t errlen)
{
	if (errlen)
		err[0] = 0;
	for (size_t i = 0; i < an->n; i++) {
		const char *why = an->l[i].ops->why ? an->l[i].ops->why(an->l[i].self) : NULL;

		if (why) {
			snprintf(err, errlen, "%s", why);
			break;
		}
	}
	return -2;
}

int it_analysis_run(struct it_analysis *an, struct it_reader *rd, char *err, size_t errlen)
{
	struct it_consumer c[an->n ? an->n : 1];
	struct it_reader_status st;
	struct it_span span;
	int rc;

	for (size_t i = 0; i < an->n; i++)
		c[i] = (struct it_consumer){ .chunks = an->l[i].ops->chunks,
					     .nchunks = an->l[i].ops->nchunks,
					     .feed = an->l[i].ops->feed, .self = an->l[i].self };
	rc = it_pass_run(rd, c, an->n, err, errlen);
	if (rc == -2)
		return layer_failed(an, err, errlen);
	if (rc)
		return rc;
	it_reader_status(rd, &st);
	span.start_ns = an->info.host->start_monotonic_ns;
	/* END is machine 0's time: another machine's is that on its own clock */
	span.end_ns = st.complete ? st.end_monotonic_ns - (uint64_t)an->info.clock_offset_ns : 0;
	for (size_t i = 0; i < an->n; i++) {
		struct it_losses lost;

		it_reader_losses(rd, an->info.machine, an->l[i].ops->layer, &lost);
		span.lost = lost.known ? lost.total : 0;
		if (an->l[i].ops->finish(an->l[i].self, &span))
			return layer_failed(an, err, errlen);
	}
	return 0;
}

void it_analysis_report_text(struct it_analysis *an, FILE *f, const struct it_report_ctx *ctx)
{
	for (size_t i = 0; i < an->n; i++)
		an->l[i].ops->report_text(an->l[i].self, f, ctx);
}

void it_analysis_report_json(struct it_analysis *an, FILE *f, const struct it_report_ctx *ctx,
			     bool pretty)
{
	struct it_json j;

	it_json_init(&j, f, pretty);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "version", 1);
	for (size_t i = 0; i < an->n; i++)
		an->l[i].ops->report_json(an->l[i].self, &j, ctx);
	if (ctx->json_tail)
		ctx->json_tail(&j, ctx->json_tail_arg);
	it_json_object_end(&j);
}

void it_analysis_report_log(struct it_analysis *an, FILE *f, const struct it_report_ctx *ctx)
{
	for (size_t i = 0; i < an->n; i++)
		if (an->l[i].ops->report_log)
			an->l[i].ops->report_log(an->l[i].self, f, ctx);
}

struct it_bus *it_analysis_bus(struct it_analysis *an)
{
	return &an->bus;
}

void *it_analysis_state(const struct it_analysis *an, const struct it_analysis_layer *ops)
{
	for (size_t i = 0; i < an->n; i++)
		if (an->l[i].ops == ops)
			return an->l[i].self;
	return NULL;
}

void it_analysis_free(struct it_analysis *an)
{
	if (!an)
		return;
	for (size_t i = an->n; i-- > 0;)
		an->l[i].ops->free(an->l[i].self);
	free(an->l);
	free(an);
}
