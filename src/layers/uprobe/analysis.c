// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The uprobe layer as an analysis layer: per probe, its hits; per span (a
 * probe NAME__start or NAME-start and its NAME__done or NAME-done), its
 * instances paired on the thread (nested instances pair innermost first),
 * their durations, and the block I/Os that completed inside each one and
 * were submitted by the same process (the block trails, from the bus).
 * Everything is kept to the end: hits are few next to I/Os, and the
 * trails needed are 16 bytes each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "layers/uprobe/uprobe.h"

struct io_done {
	uint32_t pid;
	uint64_t ts;               /* completion */
};

struct span_stat {
	uint32_t start, done;      /* probe ids */
	char name[48];
	uint64_t count, open, unmatched, ios, with_io;
	uint64_t avg_ns, p50_ns, p99_ns, max_ns;
	uint64_t *dur;             /* each instance's duration, sorted at the end */
};

struct uprobes {
	struct it_uprobe_def defs[IT_UPROBE_MAX];
	bool have[IT_UPROBE_MAX];
	uint64_t count[IT_UPROBE_MAX];
	struct it_uprobe_hit *hits;
	size_t nhits, caphits;
	struct io_done *ios;
	size_t nios, capios;
	bool block;                /* the trace has the block layer: I/Os are counted */
	struct span_stat spans[IT_UPROBE_MAX];
	size_t nspans;
	uint64_t lost, bad_probe, bad_chunks;
};

static void on_trail(const void *msg, void *ctx)
{
	const struct it_trail *t = ((const struct it_bus_trail *)msg)->t;
	struct uprobes *u = ctx;

	if (!t->ts[IT_PT_C] || !t->pid)
		return;
	if (u->nios == u->capios) {
		size_t cap = u->capios ? 2 * u->capios : 4096;
		struct io_done *p = realloc(u->ios, cap * sizeof(*p));

		if (!p)
			return;  /* counted short; the span's I/Os then are a lower bound */
		u->ios = p;
		u->capios = cap;
	}
	u->ios[u->nios++] = (struct io_done){ t->pid, t->ts[IT_PT_C] };
}

static void *up_new(const struct it_pass_info *info)
{
	struct uprobes *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->block = info->layers & (1u << IT_LAYER_BLOCK);
	if (u->block && info->bus && it_bus_subscribe(info->bus, IT_BUS_TRAIL_DONE, on_trail, u)) {
		free(u);
		return NULL;
	}
	return u;
}

static int up_feed(void *self, uint16_t type, const void *payload, size_t len, uint32_t count)
{
	struct uprobes *u = self;

	/* a file whose manifest gives these records another size: not ours */
	if (len != (size_t)count * (type == IT_CHUNK_UPROBE_DEFS ? sizeof(struct it_uprobe_def)
								  : sizeof(struct it_uprobe_hit))) {
		u->bad_chunks++;
		return 0;
	}
	if (type == IT_CHUNK_UPROBE_DEFS) {
		const struct it_uprobe_def *d = payload;

		for (uint32_t i = 0; i < count; i++)
			if (d[i].probe < IT_UPROBE_MAX) {
				struct it_uprobe_def *k = &u->defs[d[i].probe];

				*k = d[i];
				k->label[sizeof(k->label) - 1] = 0;
				k->binary[sizeof(k->binary) - 1] = 0;
				k->provider[sizeof(k->provider) - 1] = 0;
				k->symbol[sizeof(k->symbol) - 1] = 0;
				u->have[d[i].probe] = true;
			}
		return 0;
	}
	if (!count)
		return 0;
	if (u->nhits + count > u->caphits) {
		size_t cap = u->caphits ? u->caphits : 1024;
		struct it_uprobe_hit *p;

		while (cap < u->nhits + count)
			cap *= 2;
		p = realloc(u->hits, cap * sizeof(*p));
		if (!p)
			return -1;
		u->hits = p;
		u->caphits = cap;
	}
	memcpy(u->hits + u->nhits, payload, (size_t)count * sizeof(*u->hits));
	u->nhits += count;
	return 0;
}

/* "checkpoint__start" -> "checkpoint" (end: "__done"); also -start/-done */
static bool span_base(const char *label, const char *suffix, char *base, size_t len)
{
	size_t n = strlen(label), m = strlen(suffix);

	if (n <= m || strcmp(label + n - m, suffix))
		return false;
	snprintf(base, len, "%.*s", (int)(n - m), label);
	return true;
}

static void find_spans(struct uprobes *u)
{
	static const char *const pairs[][2] = { { "__start", "__done" }, { "-start", "-done" },
						{ "__begin", "__end" } };

	for (uint32_t a = 0; a < IT_UPROBE_MAX; a++)
		for (size_t k = 0; u->have[a] && k < sizeof(pairs) / sizeof(pairs[0]); k++) {
			char base[48], other[48];

			if (!span_base(u->defs[a].label, pairs[k][0], base, sizeof(base)))
				continue;
			for (uint32_t b = 0; b < IT_UPROBE_MAX; b++)
				if (u->have[b] &&
				    span_base(u->defs[b].label, pairs[k][1], other, sizeof(other)) &&
				    !strcmp(base, other)) {
					struct span_stat *s = &u->spans[u->nspans++];

					s->start = a;
					s->done = b;
					snprintf(s->name, sizeof(s->name), "%s", base);
					break;
				}
		}
}

static int cmp_hit(const void *a, const void *b)
{
	const struct it_uprobe_hit *x = a, *y = b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int cmp_io(const void *a, const void *b)
{
	const struct io_done *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* I/Os of pid that completed in [from, to] */
static uint64_t ios_inside(const struct uprobes *u, uint32_t pid, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = u->nios;
	uint64_t n = 0;

	while (lo < hi) {  /* first (pid, ts) >= (pid, from) */
		size_t mid = lo + (hi - lo) / 2;
		const struct io_done *m = &u->ios[mid];

		if (m->pid < pid || (m->pid == pid && m->ts < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < u->nios && u->ios[lo].pid == pid && u->ios[lo].ts <= to; lo++)
		n++;
	return n;
}

static uint64_t rank(const uint64_t *sorted, uint64_t n, unsigned pct)
{
	uint64_t r = (n * pct + 99) / 100;  /* nearest rank */

	return n ? sorted[r ? r - 1 : 0] : 0;
}

/* one span's instances: starts wait on a stack per thread (innermost first) */
static int pair_span(struct uprobes *u, struct span_stat *s)
{
	const struct it_uprobe_hit **open = NULL;
	size_t nopen = 0, cap = 0;
	uint64_t sum = 0;

	for (size_t i = 0; i < u->nhits; i++) {
		const struct it_uprobe_hit *h = &u->hits[i];

		if (h->probe == s->start) {
			if (nopen == cap) {
				const struct it_uprobe_hit **p;

				cap = cap ? 2 * cap : 64;
				p = realloc(open, cap * sizeof(*p));
				if (!p)
					goto oom;
				open = p;
			}
			open[nopen++] = h;
		} else if (h->probe == s->done) {
			size_t j = nopen;

			while (j > 0 && open[j - 1]->tid != h->tid)
				j--;
			if (!j) {
				s->unmatched++;
				continue;
			}
			const struct it_uprobe_hit *b = open[j - 1];
			uint64_t d = h->ts_ns - b->ts_ns, ios;

			memmove(open + j - 1, open + j, (nopen - j) * sizeof(*open));
			nopen--;
			if (!(s->count & (s->count - 1))) {
				uint64_t *p = realloc(s->dur, (s->count ? 2 * s->count : 1) *
							      sizeof(*p));
				if (!p)
					goto oom;
				s->dur = p;
			}
			s->dur[s->count++] = d;
			sum += d;
			ios = u->block ? ios_inside(u, b->pid, b->ts_ns, h->ts_ns) : 0;
			s->ios += ios;
			s->with_io += ios > 0;
		}
	}
	s->open = nopen;
	free(open);
	if (s->count)
		qsort(s->dur, s->count, sizeof(*s->dur), cmp_u64);
	s->avg_ns = s->count ? sum / s->count : 0;
	s->p50_ns = rank(s->dur, s->count, 50);
	s->p99_ns = rank(s->dur, s->count, 99);
	s->max_ns = s->count ? s->dur[s->count - 1] : 0;
	return 0;
oom:
	free(open);
	return -1;
}

static int up_finish(void *self, const struct it_span *span)
{
	struct uprobes *u = self;

	u->lost = span->lost;
	/* rings of several CPUs: the file is in time order only within a few
	 * microseconds */
	if (u->nhits)
		qsort(u->hits, u->nhits, sizeof(*u->hits), cmp_hit);
	if (u->nios)
		qsort(u->ios, u->nios, sizeof(*u->ios), cmp_io);
	for (size_t i = 0; i < u->nhits; i++) {
		uint32_t p = u->hits[i].probe;

		if (p < IT_UPROBE_MAX && u->have[p])
			u->count[p]++;
		else
			u->bad_probe++;
	}
	find_spans(u);
	for (size_t i = 0; i < u->nspans; i++)
		if (pair_span(u, &u->spans[i]))
			return -1;
	return 0;
}

static const char *kind_name(uint16_t kind)
{
	return kind == IT_UPROBE_USDT ? "usdt" : "uprobe";
}

static void where(const struct it_uprobe_def *d, char *buf, size_t len)
{
	if (d->kind == IT_UPROBE_USDT)
		snprintf(buf, len, "%s:%s:%s", d->binary, d->provider, d->symbol);
	else
		snprintf(buf, len, "%s:%s", d->binary, d->symbol);
}

static void up_text(void *self, FILE *f, const struct it_report_ctx *ctx)
{
	struct uprobes *u = self;
	char buf[320];

	(void)ctx;
	fprintf(f, "\nUser-space probes: %zu hits, %llu lost\n", u->nhits,
		(unsigned long long)u->lost);
	fprintf(f, "  %-24s %-6s %10s  %s\n", "probe", "kind", "hits", "where");
	for (uint32_t i = 0; i < IT_UPROBE_MAX; i++) {
		if (!u->have[i])
			continue;
		where(&u->defs[i], buf, sizeof(buf));
		fprintf(f, "  %-24s %-6s %10llu  %s\n", u->defs[i].label, kind_name(u->defs[i].kind),
			(unsigned long long)u->count[i], buf);
	}
	if (u->bad_probe)
		fprintf(f, "  %llu hits of probes the trace does not define (damaged file)\n",
			(unsigned long long)u->bad_probe);
	if (u->bad_chunks)
		fprintf(f, "  %llu chunks skipped: their records are not this version's size\n",
			(unsigned long long)u->bad_chunks);
	if (!u->nspans)
		return;
	fprintf(f, "\nSpans (start/done pairs on one thread; durations in ms; I/Os: block I/Os of the\n"
		"same process completed inside, and the spans with any%s)\n",
		u->block ? "" : "; no block layer in the trace");
	fprintf(f, "  %-16s %7s %5s %7s %9s %9s %9s %9s %8s %8s\n", "span", "count", "open",
		"unmatch", "avg", "p50", "p99", "max", "I/Os", "with I/O");
	for (size_t i = 0; i < u->nspans; i++) {
		const struct span_stat *s = &u->spans[i];

		fprintf(f, "  %-16s %7llu %5llu %7llu %9.3f %9.3f %9.3f %9.3f %8llu %8llu\n", s->name,
			(unsigned long long)s->count, (unsigned long long)s->open,
			(unsigned long long)s->unmatched, s->avg_ns / 1e6, s->p50_ns / 1e6,
			s->p99_ns / 1e6, s->max_ns / 1e6, (unsigned long long)s->ios,
			(unsigned long long)s->with_io);
	}
}

static void up_json(void *self, struct it_json *j, const struct it_report_ctx *ctx)
{
	struct uprobes *u = self;

	it_json_name(j, "uprobes");
	it_json_object_start(j);
	it_json_kv_uint(j, "hits", u->nhits);
	it_json_kv_uint(j, "lost", u->lost);
	if (u->bad_probe)
		it_json_kv_uint(j, "unknown_probe_hits", u->bad_probe);
	if (u->bad_chunks)
		it_json_kv_uint(j, "skipped_chunks", u->bad_chunks);
	it_json_name(j, "probes");
	it_json_array_start(j);
	for (uint32_t i = 0; i < IT_UPROBE_MAX; i++) {
		const struct it_uprobe_def *d = &u->defs[i];

		if (!u->have[i])
			continue;
		it_json_object_start(j);
		it_json_kv_uint(j, "id", d->probe);
		it_json_kv_string(j, "label", d->label);
		it_json_kv_string(j, "kind", kind_name(d->kind));
		it_json_kv_string(j, "binary", d->binary);
		if (d->kind == IT_UPROBE_USDT)
			it_json_kv_string(j, "provider", d->provider);
		it_json_kv_string(j, d->kind == IT_UPROBE_USDT ? "name" : "symbol", d->symbol);
		it_json_kv_uint(j, "hits", u->count[i]);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_name(j, "spans");
	it_json_array_start(j);
	for (size_t i = 0; i < u->nspans; i++) {
		const struct span_stat *s = &u->spans[i];

		it_json_object_start(j);
		it_json_kv_string(j, "name", s->name);
		it_json_kv_uint(j, "count", s->count);
		it_json_kv_uint(j, "open", s->open);
		it_json_kv_uint(j, "unmatched", s->unmatched);
		it_json_kv_uint(j, "avg_ns", s->avg_ns);
		it_json_kv_uint(j, "p50_ns", s->p50_ns);
		it_json_kv_uint(j, "p99_ns", s->p99_ns);
		it_json_kv_uint(j, "max_ns", s->max_ns);
		if (u->block) {
			it_json_kv_uint(j, "block_ios", s->ios);
			it_json_kv_uint(j, "spans_with_io", s->with_io);
		}
		it_json_object_end(j);
	}
	it_json_array_end(j);
	if (ctx->opts && ctx->opts->events) {
		it_json_name(j, "events");
		it_json_array_start(j);
		for (size_t i = 0; i < u->nhits; i++) {
			const struct it_uprobe_hit *h = &u->hits[i];

			it_json_object_start(j);
			it_json_kv_uint(j, "ts_ns", h->ts_ns);
			it_json_kv_uint(j, "pid", h->pid);
			it_json_kv_uint(j, "tid", h->tid);
			it_json_kv_uint(j, "probe", h->probe);
			it_json_name(j, "args");
			it_json_array_start(j);
			for (uint32_t a = 0; a < h->nargs && a < IT_UPROBE_MAX_ARGS; a++)
				it_json_int(j, (int64_t)h->args[a]);
			it_json_array_end(j);
			it_json_object_end(j);
		}
		it_json_array_end(j);
	}
	it_json_object_end(j);
}

/* --log: one line per hit, in time order */
static void up_log(void *self, FILE *f, const struct it_report_ctx *ctx)
{
	struct uprobes *u = self;
	uint64_t t0 = ctx->host ? ctx->host->start_monotonic_ns : 0;

	for (size_t i = 0; i < u->nhits; i++) {
		const struct it_uprobe_hit *h = &u->hits[i];
		const char *label = h->probe < IT_UPROBE_MAX && u->have[h->probe]
					    ? u->defs[h->probe].label : "?";

		fprintf(f, "%.6f %u/%u probe %s", (double)(h->ts_ns - (h->ts_ns >= t0 ? t0 : 0)) / 1e9,
			h->pid, h->tid, label);
		for (uint32_t a = 0; a < h->nargs && a < IT_UPROBE_MAX_ARGS; a++)
			fprintf(f, "%s%lld", a ? "," : " args=", (long long)h->args[a]);
		fputc('\n', f);
	}
}

static void up_free(void *self)
{
	struct uprobes *u = self;

	if (!u)
		return;
	for (size_t i = 0; i < u->nspans; i++)
		free(u->spans[i].dur);
	free(u->hits);
	free(u->ios);
	free(u);
}

static const uint16_t up_chunks[] = { IT_CHUNK_UPROBE_DEFS, IT_CHUNK_UPROBE_HITS };

const struct it_analysis_layer it_layer_uprobe = {
	.name = "uprobe",
	.layer = IT_LAYER_UPROBE,
	.chunks = up_chunks,
	.nchunks = 2,
	.event_list = "probe hits",
	.new = up_new,
	.feed = up_feed,
	.finish = up_finish,
	.report_text = up_text,
	.report_json = up_json,
	.report_log = up_log,
	.free = up_free,
};
