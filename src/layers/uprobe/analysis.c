// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The uprobe layer as an analysis layer: per probe, its hits; per span (a
 * probe NAME__start or NAME-start and its NAME__done or NAME-done), its
 * instances paired on the thread (nested instances pair innermost first),
 * their durations, and the block I/Os that completed inside each one and
 * were submitted by the same process (the block trails, from the bus).
 *
 * Streamed, so memory follows what is in flight, not the trace's length:
 * - hits wait in a short reorder window (the ring's records are in time
 *   order only within microseconds), then are counted and paired in time
 *   order; a span's duration goes into a histogram (hist.h: p50 and p99
 *   within 1/128, count, average and max exact);
 * - a closed span waits until the block watermark passes its end (every
 *   I/O queued before it has been published), then counts the I/Os of its
 *   process that completed inside it;
 * - a completed I/O is kept only while a span could still need it: one of
 *   its process open or waiting, or hits not yet read up to its time.
 * Every hit is kept only when the report lists them (--events, --log).
 * With the syscall layer, the sync calls (fsync, fdatasync,
 * sync_file_range) of every thread are kept (they are few: one per
 * commit at most) and listed per span instance for the first SPAN_KEEP
 * instances of each span: a PostgreSQL checkpoint's fsyncs and the WAL
 * fdatasyncs around them, each with the block I/Os its call submitted.
 * it_layer_uprobe_live() counts the entries held (the unit test's bound).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/hist.h"
#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "iotrail/syscall.h"
#include "layers/uprobe/uprobe.h"

/* span instances per span whose sync calls are listed */
#define SPAN_KEEP 16
#define TEXT_SPAN_CALLS 10

struct span_inst {
	uint64_t from, to;
	uint32_t pid, tid;
};

struct sync_call {                 /* from the syscall layer (bus) */
	uint64_t enter, exit, block_ns;
	uint32_t tid, block_ios;
	uint16_t call;
};

/* hits older than the newest read by this much are taken as in order */
#define REORDER_NS 10000000ull

struct io_done {
	uint32_t pid;
	uint64_t ts;               /* completion */
};

struct open_start {
	uint64_t ts;
	uint32_t pid, tid;
	uint32_t nargs;            /* its hit's arguments: the span's, for the exporters */
	uint64_t args[IT_UPROBE_MAX_ARGS];
};

/* a closed span waiting for the block watermark to pass its end */
struct closed_span {
	uint64_t from, to;
	uint32_t pid, span;
};

struct span_stat {
	uint32_t start, done;      /* probe ids */
	char name[48];
	uint64_t count, open, unmatched, ios, with_io;
	uint64_t avg_ns, p50_ns, p99_ns, max_ns;
	struct it_hist dur;
	struct open_start *opens;  /* started, not done: a stack (innermost last) */
	size_t nopen, capopen;
	struct span_inst kept[SPAN_KEEP]; /* the first instances */
	uint32_t nkept;
};

/* Room for need elements in *arr (capacity *cap, doubling from first). */
static int reserve(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	void **p = arr, *n;
	size_t c = *cap ? *cap : first;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(n = realloc(*p, c * elem)))
		return -1;
	*p = n;
	*cap = c;
	return 0;
}

struct uprobes {
	struct it_uprobe_def defs[IT_UPROBE_MAX];
	bool have[IT_UPROBE_MAX];
	uint64_t count[IT_UPROBE_MAX];
	uint64_t nhits;            /* all hits read */
	bool list;                 /* --events or --log: every hit kept in list */
	struct it_uprobe_hit *hits;
	size_t nlist, caplist;
	struct it_uprobe_hit *win; /* the reorder window, sorted by time */
	size_t nwin, capwin;
	uint64_t newest;           /* the latest hit time read */
	uint64_t frontier;         /* hits up to here are taken (paired) */
	bool taking;               /* the spans are known: hits are taken as they come */
	struct closed_span *wait;
	size_t nwait, capwait;
	struct io_done *ios;
	size_t nios, capios, pruned_at;
	uint64_t watermark;        /* the block layer's */
	bool block;                /* the trace has the block layer: I/Os are counted */
	struct span_stat spans[IT_UPROBE_MAX];
	size_t nspans;
	uint64_t lost, bad_probe, bad_chunks, late;
	uint64_t live_peak;        /* most entries held at once */
	int err;                   /* out of memory in a bus callback */
	bool calls;                /* the trace has the syscall layer */
	struct sync_call *syncs;   /* every sync call, in the order they were summed up */
	size_t nsyncs, capsyncs;
	struct it_bus *bus;        /* hits and spans published as taken (exporters) */
};

static uint64_t live(const struct uprobes *u)
{
	uint64_t n = u->nwin + u->nwait + u->nios;

	for (size_t i = 0; i < u->nspans; i++)
		n += u->spans[i].nopen;
	return n;
}

static void note_live(struct uprobes *u)
{
	uint64_t n = live(u);

	if (n > u->live_peak)
		u->live_peak = n;
}

static int cmp_io(const void *a, const void *b)
{
	const struct io_done *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* I/Os of pid that completed in [from, to] (ios sorted by pid, time) */
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

/* The earliest time an I/O of pid may still be needed from: the hits
 * not taken yet, and pid's open and waiting spans. */
static uint64_t needed_from(const struct uprobes *u, uint32_t pid)
{
	uint64_t t = u->frontier;

	for (size_t i = 0; i < u->nspans; i++)
		for (size_t k = 0; k < u->spans[i].nopen; k++)
			if (u->spans[i].opens[k].pid == pid && u->spans[i].opens[k].ts < t)
				t = u->spans[i].opens[k].ts;
	for (size_t i = 0; i < u->nwait; i++)
		if (u->wait[i].pid == pid && u->wait[i].from < t)
			t = u->wait[i].from;
	return t;
}

/* Counts the I/Os of the waiting spans that ended by the watermark (all,
 * at the end), then drops the I/Os no span can need any more. */
static void settle_spans(struct uprobes *u, uint64_t watermark)
{
	size_t k = 0;
	uint64_t from = 0;

	if (u->nios > 1)
		qsort(u->ios, u->nios, sizeof(*u->ios), cmp_io);
	for (size_t i = 0; i < u->nwait; i++) {
		const struct closed_span *c = &u->wait[i];

		if (c->to > watermark) {
			u->wait[k++] = *c;
			continue;
		}
		uint64_t n = ios_inside(u, c->pid, c->from, c->to);
		u->spans[c->span].ios += n;
		u->spans[c->span].with_io += n > 0;
	}
	u->nwait = k;
	k = 0;
	for (size_t i = 0; i < u->nios; i++) {
		/* sorted by pid: one look-up per process */
		if (!i || u->ios[i].pid != u->ios[i - 1].pid)
			from = needed_from(u, u->ios[i].pid);
		if (u->ios[i].ts >= from)
			u->ios[k++] = u->ios[i];
	}
	u->nios = k;
	u->pruned_at = k;
}

static void on_trail(const void *msg, void *ctx)
{
	const struct it_trail *t = ((const struct it_bus_trail *)msg)->t;
	struct uprobes *u = ctx;

	if (!t->ts[IT_PT_C] || !t->pid)
		return;
	if (reserve(&u->ios, &u->capios, u->nios + 1, sizeof(*u->ios), 4096)) {
		u->err = -1;
		return;
	}
	u->ios[u->nios++] = (struct io_done){ t->pid, t->ts[IT_PT_C] };
	note_live(u);
}

static void on_watermark(const void *msg, void *ctx)
{
	struct uprobes *u = ctx;

	u->watermark = *(const uint64_t *)msg;
	/* amortized: the I/Os are sorted and pruned once their number doubled */
	if (u->nwait || u->nios >= 2 * u->pruned_at + 1024)
		settle_spans(u, u->watermark);
}

static void on_call(const void *msg, void *ctx)
{
	const struct it_bus_call *c = msg;
	struct uprobes *u = ctx;

	if (c->call != IT_SYS_FSYNC && c->call != IT_SYS_FDATASYNC &&
	    c->call != IT_SYS_SYNC_FILE_RANGE)
		return;
	if (reserve(&u->syncs, &u->capsyncs, u->nsyncs + 1, sizeof(*u->syncs), 256)) {
		u->err = -1;
		return;
	}
	u->syncs[u->nsyncs++] = (struct sync_call){ c->ts_enter, c->ts_exit, c->block_ns, c->tid,
						    c->block_ios, c->call };
}

static void *up_new(const struct it_pass_info *info)
{
	struct uprobes *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->calls = info->layers & (1u << IT_LAYER_SYSCALL);
	if (u->calls && info->bus && it_bus_subscribe(info->bus, IT_BUS_CALL_DONE, on_call, u)) {
		free(u);
		return NULL;
	}
	u->block = info->layers & (1u << IT_LAYER_BLOCK);
	u->bus = info->bus;
	u->list = info->opts && (info->opts->events || info->opts->log);
	if (u->block && info->bus &&
	    (it_bus_subscribe(info->bus, IT_BUS_TRAIL_DONE, on_trail, u) ||
	     it_bus_subscribe(info->bus, IT_BUS_BLOCK_WATERMARK, on_watermark, u))) {
		free(u);
		return NULL;
	}
	return u;
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
					it_hist_init(&s->dur);
					break;
				}
		}
}

static int cmp_hit(const void *a, const void *b)
{
	const struct it_uprobe_hit *x = a, *y = b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* A hit of a defined probe on the bus (the exporters' rows): an event,
 * or a span's begin or end. */
static void publish_hit(const struct uprobes *u, const struct it_uprobe_hit *h)
{
	const struct it_uprobe_def *d = &u->defs[h->probe];
	struct it_bus_probe m = { .kind = IT_PROBE_EVENT, .label = d->label, .binary = d->binary,
				  .ts_ns = h->ts_ns, .pid = h->pid, .tid = h->tid,
				  .nargs = h->nargs < IT_UPROBE_MAX_ARGS ? h->nargs : IT_UPROBE_MAX_ARGS,
				  .args = (const uint64_t *)h->args };

	for (size_t i = 0; i < u->nspans; i++)
		if (h->probe == u->spans[i].start)
			m.kind = IT_PROBE_BEGIN;
		else if (h->probe == u->spans[i].done)
			m.kind = IT_PROBE_END;
	it_bus_publish(u->bus, IT_BUS_PROBE, &m);
}

/* One hit, in time order: counted, and paired when it starts or ends a span. */
static int take_hit(struct uprobes *u, const struct it_uprobe_hit *h)
{
	bool publish = it_bus_wanted(u->bus, IT_BUS_PROBE);

	if (h->probe < IT_UPROBE_MAX && u->have[h->probe]) {
		u->count[h->probe]++;
		if (publish)
			publish_hit(u, h);
	} else {
		u->bad_probe++;
	}
	for (size_t i = 0; i < u->nspans; i++) {
		struct span_stat *s = &u->spans[i];

		if (h->probe == s->start) {
			if (reserve(&s->opens, &s->capopen, s->nopen + 1, sizeof(*s->opens), 16))
				return -1;
			struct open_start *o = &s->opens[s->nopen++];

			*o = (struct open_start){ .ts = h->ts_ns, .pid = h->pid, .tid = h->tid };
			if (publish) {
				o->nargs = h->nargs < IT_UPROBE_MAX_ARGS ? h->nargs : IT_UPROBE_MAX_ARGS;
				memcpy(o->args, h->args, sizeof(o->args));
			}
		} else if (h->probe == s->done) {
			size_t j = s->nopen;

			while (j > 0 && s->opens[j - 1].tid != h->tid)
				j--;
			if (!j) {
				s->unmatched++;
				continue;
			}
			struct open_start b = s->opens[j - 1];

			memmove(s->opens + j - 1, s->opens + j, (s->nopen - j) * sizeof(*s->opens));
			s->nopen--;
			if (it_hist_add(&s->dur, h->ts_ns - b.ts))
				return -1;
			s->count++;
			if (publish) {
				struct it_bus_probe m = {
					.kind = IT_PROBE_SPAN, .label = s->name,
					.binary = u->defs[s->start].binary, .ts_ns = b.ts,
					.duration_ns = h->ts_ns - b.ts, .pid = b.pid, .tid = b.tid,
					.nargs = b.nargs, .args = b.args };

				it_bus_publish(u->bus, IT_BUS_PROBE, &m);
			}
			if (s->nkept < SPAN_KEEP)
				s->kept[s->nkept++] = (struct span_inst){ b.ts, h->ts_ns, b.pid, b.tid };
			if (!u->block)
				continue;
			if (reserve(&u->wait, &u->capwait, u->nwait + 1, sizeof(*u->wait), 64))
				return -1;
			u->wait[u->nwait++] = (struct closed_span){ b.ts, h->ts_ns, b.pid,
								    (uint32_t)i };
		}
	}
	return 0;
}

/* Takes the window's hits up to time upto (all: UINT64_MAX). */
static int take_window(struct uprobes *u, uint64_t upto)
{
	size_t n = 0;

	while (n < u->nwin && u->win[n].ts_ns <= upto)
		if (take_hit(u, &u->win[n++]))
			return -1;
	if (n && u->win[n - 1].ts_ns > u->frontier)
		u->frontier = u->win[n - 1].ts_ns;
	if (upto > u->frontier && upto != UINT64_MAX)
		u->frontier = upto;
	if (n) /* win is NULL while no hit came */
		memmove(u->win, u->win + n, (u->nwin - n) * sizeof(*u->win));
	u->nwin -= n;
	return 0;
}

static int add_hits(struct uprobes *u, const struct it_uprobe_hit *h, uint32_t count)
{
	if (u->list) {
		if (reserve(&u->hits, &u->caplist, u->nlist + count, sizeof(*h), 1024))
			return -1;
		memcpy(u->hits + u->nlist, h, (size_t)count * sizeof(*h));
		u->nlist += count;
	}
	if (reserve(&u->win, &u->capwin, u->nwin + count, sizeof(*h), 1024))
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		if (u->taking && h[i].ts_ns < u->frontier)
			u->late++; /* behind hits already taken: paired out of order */
		if (h[i].ts_ns > u->newest)
			u->newest = h[i].ts_ns;
	}
	memcpy(u->win + u->nwin, h, (size_t)count * sizeof(*h));
	u->nwin += count;
	u->nhits += count;
	qsort(u->win, u->nwin, sizeof(*u->win), cmp_hit);
	note_live(u);
	/* the spans are known once the definitions are: files write them first */
	if (!u->taking)
		return 0;
	return take_window(u, u->newest > REORDER_NS ? u->newest - REORDER_NS : 0);
}

static int up_feed(void *self, uint16_t type, const void *payload, size_t len, uint32_t count)
{
	struct uprobes *u = self;

	if (u->err)
		return -1;
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
		/* hits before their definitions (a file written before they
		 * went first) wait in the window until the end */
		if (!u->taking && !u->nhits) {
			find_spans(u);
			u->taking = true;
		}
		return 0;
	}
	if (!count)
		return 0;
	return add_hits(u, payload, count);
}

static int cmp_sync(const void *a, const void *b)
{
	const struct sync_call *x = a, *y = b;

	return x->enter < y->enter ? -1 : x->enter > y->enter;
}

/* The sync calls entered and returned inside [from, to]: *first and the
 * count (syncs sorted by entry). */
static size_t syncs_inside(const struct uprobes *u, uint64_t from, uint64_t to, size_t *first)
{
	size_t lo = 0, hi = u->nsyncs, n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->syncs[mid].enter < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	for (; lo < u->nsyncs && u->syncs[lo].enter <= to; lo++)
		n += u->syncs[lo].exit <= to;
	return n;
}

static const char *sync_name(uint16_t call)
{
	return call == IT_SYS_FSYNC ? "fsync" : call == IT_SYS_FDATASYNC ? "fdatasync"
									 : "sync_file_range";
}

/* Per kept span instance, the sync calls of any thread inside it. */
static void syncs_text(const struct uprobes *u, FILE *f, uint64_t t0)
{
	bool any = false;

	for (size_t i = 0; i < u->nspans && !any; i++)
		any = u->spans[i].nkept > 0;
	if (!u->calls || !any)
		return;
	fprintf(f, "\nSync calls inside spans (fsync, fdatasync, sync_file_range of any thread, "
		"entered and\nreturned inside; I/Os: the block I/Os the call submitted; the first %d "
		"spans of each;\n*: the span's thread)\n", SPAN_KEEP);
	for (size_t i = 0; i < u->nspans; i++) {
		const struct span_stat *s = &u->spans[i];

		for (uint32_t k = 0; k < s->nkept; k++) {
			const struct span_inst *in = &s->kept[k];
			size_t first, n = syncs_inside(u, in->from, in->to, &first), shown = 0;
			uint64_t ios = 0;

			for (size_t c = first; c < u->nsyncs && u->syncs[c].enter <= in->to; c++)
				ios += u->syncs[c].exit <= in->to ? u->syncs[c].block_ios : 0;
			fprintf(f, "  %s #%u at %.6f s, %.3f ms (thread %u): %zu calls, %llu I/Os\n",
				s->name, k + 1, (double)(in->from - (in->from >= t0 ? t0 : 0)) / 1e9,
				(double)(in->to - in->from) / 1e6, in->tid, n, (unsigned long long)ios);
			if (n)
				fprintf(f, "    %12s %8s %-16s %10s %7s %10s\n", "at(s)", "tid", "call",
					"took(ms)", "I/Os", "block(ms)");
			for (size_t c = first; c < u->nsyncs && u->syncs[c].enter <= in->to; c++) {
				const struct sync_call *y = &u->syncs[c];

				if (y->exit > in->to)
					continue;
				if (shown++ == TEXT_SPAN_CALLS) {
					fprintf(f, "    ... %zu more (all of them in --json)\n",
						n - TEXT_SPAN_CALLS);
					break;
				}
				fprintf(f, "    %12.6f %7u%s %-16s %10.3f %7u %10.3f\n",
					(double)(y->enter - (y->enter >= t0 ? t0 : 0)) / 1e9, y->tid,
					y->tid == in->tid ? "*" : " ", sync_name(y->call),
					(double)(y->exit - y->enter) / 1e6, y->block_ios,
					(double)y->block_ns / 1e6);
			}
		}
	}
}

static void syncs_json(const struct uprobes *u, const struct span_stat *s, struct it_json *j)
{
	it_json_name(j, "instances");
	it_json_array_start(j);
	for (uint32_t k = 0; k < s->nkept; k++) {
		const struct span_inst *in = &s->kept[k];
		size_t first;

		syncs_inside(u, in->from, in->to, &first);
		it_json_object_start(j);
		it_json_kv_uint(j, "start_ns", in->from);
		it_json_kv_uint(j, "duration_ns", in->to - in->from);
		it_json_kv_uint(j, "pid", in->pid);
		it_json_kv_uint(j, "tid", in->tid);
		it_json_name(j, "sync_calls");
		it_json_array_start(j);
		for (size_t c = first; c < u->nsyncs && u->syncs[c].enter <= in->to; c++) {
			const struct sync_call *y = &u->syncs[c];

			if (y->exit > in->to)
				continue;
			it_json_object_start(j);
			it_json_kv_uint(j, "ts_ns", y->enter);
			it_json_kv_uint(j, "duration_ns", y->exit - y->enter);
			it_json_kv_uint(j, "tid", y->tid);
			it_json_kv_string(j, "call", sync_name(y->call));
			it_json_kv_uint(j, "block_ios", y->block_ios);
			it_json_kv_uint(j, "block_ns", y->block_ns);
			it_json_object_end(j);
		}
		it_json_array_end(j);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

/* The spans begun and not ended when the trace ends (at end), for the
 * exporters: each as a span running to the end (IT_PROBE_OPEN). */
static void publish_open_spans(const struct uprobes *u, uint64_t end)
{
	if (!it_bus_wanted(u->bus, IT_BUS_PROBE))
		return;
	for (size_t i = 0; i < u->nspans; i++) {
		const struct span_stat *s = &u->spans[i];

		for (size_t k = 0; k < s->nopen; k++) {
			const struct open_start *o = &s->opens[k];
			struct it_bus_probe m = {
				.kind = IT_PROBE_OPEN, .label = s->name,
				.binary = u->defs[s->start].binary, .ts_ns = o->ts,
				.duration_ns = end > o->ts ? end - o->ts : 0, .pid = o->pid,
				.tid = o->tid, .nargs = o->nargs, .args = o->args };

			it_bus_publish(u->bus, IT_BUS_PROBE, &m);
		}
	}
}

static int up_finish(void *self, const struct it_span *span)
{
	struct uprobes *u = self;

	if (u->err)
		return -1;
	u->lost = span->lost;
	if (!u->taking) {
		find_spans(u);
		u->taking = true;
	}
	if (take_window(u, UINT64_MAX))
		return -1;
	publish_open_spans(u, span->end_ns > u->newest ? span->end_ns : u->newest);
	settle_spans(u, UINT64_MAX);
	if (u->nlist)
		qsort(u->hits, u->nlist, sizeof(*u->hits), cmp_hit);
	if (u->nsyncs)
		qsort(u->syncs, u->nsyncs, sizeof(*u->syncs), cmp_sync);
	for (size_t i = 0; i < u->nspans; i++) {
		struct span_stat *s = &u->spans[i];

		s->open = s->nopen;
		s->avg_ns = it_hist_avg(&s->dur);
		s->p50_ns = it_hist_percentile(&s->dur, 50);
		s->p99_ns = it_hist_percentile(&s->dur, 99);
		s->max_ns = s->count ? s->dur.max : 0;
	}
	return 0;
}

uint64_t it_layer_uprobe_live(const void *state, uint64_t *peak)
{
	const struct uprobes *u = state;

	if (peak)
		*peak = u->live_peak;
	return live(u);
}

static const char *kind_name(uint16_t kind)
{
	return kind == IT_UPROBE_USDT ? "usdt" : "uprobe";
}

/* the text report's "where" column: 100 less the columns before it */
#define WHERE_COLS 54

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

	fprintf(f, "\nUser-space probes: %llu hits, %llu lost\n", (unsigned long long)u->nhits,
		(unsigned long long)u->lost);
	fprintf(f, "  %-24s %-6s %10s  %s\n", "probe", "kind", "hits", "where");
	for (uint32_t i = 0; i < IT_UPROBE_MAX; i++) {
		if (!u->have[i])
			continue;
		where(&u->defs[i], buf, sizeof(buf));
		/* the line stays within 100 columns: a long binary path keeps
		 * its end (JSON has it whole) */
		size_t n = strlen(buf);
		int cut = n > WHERE_COLS ? (int)(n - (WHERE_COLS - 3)) : 0;

		fprintf(f, "  %-24s %-6s %10llu  %s%s\n", u->defs[i].label, kind_name(u->defs[i].kind),
			(unsigned long long)u->count[i], cut ? "..." : "", buf + cut);
	}
	if (u->bad_probe)
		fprintf(f, "  %llu hits of probes the trace does not define (damaged file)\n",
			(unsigned long long)u->bad_probe);
	if (u->bad_chunks)
		fprintf(f, "  %llu chunks skipped: their records are not this version's size\n",
			(unsigned long long)u->bad_chunks);
	if (u->late)
		fprintf(f, "  %llu hits came more than %llu ms behind later ones: paired out of "
			"order\n", (unsigned long long)u->late, REORDER_NS / 1000000);
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
	syncs_text(u, f, ctx && ctx->host ? ctx->host->start_monotonic_ns : 0);
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
	if (u->late)
		it_json_kv_uint(j, "late_hits", u->late);
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
		if (u->calls)
			syncs_json(u, s, j);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	if (ctx->opts && ctx->opts->events) {
		it_json_name(j, "events");
		it_json_array_start(j);
		for (size_t i = 0; i < u->nlist; i++) {
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

	for (size_t i = 0; i < u->nlist; i++) {
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
	for (size_t i = 0; i < u->nspans; i++) {
		it_hist_free(&u->spans[i].dur);
		free(u->spans[i].opens);
	}
	free(u->syncs);
	free(u->hits);
	free(u->win);
	free(u->wait);
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
