// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * F2FS's tracepoint events in the report (f2fs_analysis.h). A GC round is
 * a gc_begin and the next gc_end of the same thread (f2fs_gc runs on its
 * caller's thread and holds the file system's gc_lock); the page writes
 * the BPF program tagged as a GC's are those of the open round of their
 * thread, and a data page a background round only marked, which
 * writeback wrote later (IT_F2FS_GC_LATER), is that of the last
 * background round of its device begun before the write. A checkpoint
 * runs from its "start block_ops" phase to its
 * "finish checkpoint" of the same device. F2FS addresses blocks of 4 KiB
 * from the start of its device (F2FS_BLKSIZE), as FIEMAP's physical bytes
 * do, so a moved block's old address names the file that had it in the
 * start snapshot.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "extents/snapshot.h"
#include "layers/fs/f2fs_analysis.h"

#define F2FS_BLOCK 4096ull
#define TEXT_ROUNDS 20
#define TEXT_MOVES 8
#define TEXT_CHECKPOINTS 20

struct move {                      /* blocks of one file moved between two zones */
	const char *path;          /* the start snapshot's, or NULL: ino */
	uint64_t ino;
	uint32_t from, to;         /* zones; IT_EXT_NO_ZONE unknown */
	uint64_t bytes;
};

struct round {
	uint64_t begin, end;       /* end 0: not seen */
	uint32_t dev, pid, tid;
	bool fg;
	int64_t ret;
	uint64_t segs, secs, free_before, free_after;
	uint64_t blocks[3];        /* written by type: data, node, meta */
	uint64_t later;            /* of its data blocks, written back after it */
	struct move *moves;
	uint32_t nmoves;
};

struct checkpoint {
	uint64_t begin, end;       /* end 0: not seen */
	uint32_t dev, reason;
};

struct extent_ref {                /* a placed extent of the start snapshot */
	uint32_t dev;              /* makedev form */
	uint64_t physical, length;
	const char *path;
};

struct it_f2fs_an {
	struct it_f2fs_event *ev;
	size_t n, cap;
	uint64_t pages[IT_F2FS_PAGE_KINDS];
	bool any;
	struct round *r;
	size_t nr;
	struct checkpoint *cp;
	size_t ncp;
	uint64_t bg_wakeups, lost;
	uint64_t later_orphans;    /* written back later, no background round seen before */
	const struct it_fs_snapshots *ss;
	struct extent_ref *refs;   /* sorted by (dev, physical) */
	size_t nrefs;
};

struct it_f2fs_an *it_f2fs_an_new(void)
{
	return calloc(1, sizeof(struct it_f2fs_an));
}

int it_f2fs_an_feed(struct it_f2fs_an *an, const void *payload, size_t len, uint32_t count)
{
	const struct it_f2fs_event *e = payload;

	if (len < (size_t)count * sizeof(*e))
		count = (uint32_t)(len / sizeof(*e));
	an->any |= count > 0;
	for (uint32_t i = 0; i < count; i++) {
		if (e[i].kind == IT_F2FS_PAGES) {
			if (e[i].b < 3 && e[i].c < 3)
				an->pages[e[i].b * 3 + e[i].c] += e[i].a;
			continue;
		}
		if (an->n == an->cap) {
			size_t cap = an->cap ? an->cap * 2 : 256;
			void *p = realloc(an->ev, cap * sizeof(*an->ev));
			if (!p)
				return -1;
			an->ev = p;
			an->cap = cap;
		}
		an->ev[an->n++] = e[i];
	}
	return 0;
}

bool it_f2fs_an_any(const struct it_f2fs_an *an)
{
	return an && an->any;
}

static int cmp_event(const void *a, const void *b)
{
	const struct it_f2fs_event *x = a, *y = b;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct extent_ref *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->physical < y->physical ? -1 : x->physical > y->physical;
}

static uint32_t user_dev(uint32_t kdev)
{
	return (uint32_t)makedev(kdev >> 20, kdev & 0xfffff);
}

/* the start snapshot's placed extents, to name an old block's file */
static int index_extents(struct it_f2fs_an *an)
{
	const struct it_ext_set *s = &an->ss->set[IT_FS_START];
	size_t n = 0;

	for (uint32_t i = 0; i < s->nfiles; i++)
		n += s->files[i].next;
	if (!(an->refs = calloc(n ? n : 1, sizeof(*an->refs))))
		return -1;
	for (uint32_t i = 0; i < s->nfiles; i++)
		for (uint32_t k = 0; k < s->files[i].next; k++)
			if (s->files[i].ext[k].placed)
				an->refs[an->nrefs++] = (struct extent_ref){
					s->files[i].dev, s->files[i].ext[k].physical,
					s->files[i].ext[k].length, s->files[i].path };
	qsort(an->refs, an->nrefs, sizeof(*an->refs), cmp_ref);
	return 0;
}

static const char *file_at(const struct it_f2fs_an *an, uint32_t dev, uint64_t a)
{
	size_t lo = 0, hi = an->nrefs;
	while (lo < hi) { /* the last extent starting at or before a */
		size_t mid = lo + (hi - lo) / 2;
		const struct extent_ref *r = &an->refs[mid];
		if (r->dev < dev || (r->dev == dev && r->physical <= a))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct extent_ref *r = &an->refs[lo - 1];
	return r->dev == dev && a < r->physical + r->length ? r->path : NULL;
}

static uint32_t zone_of(const struct it_f2fs_an *an, int which, uint32_t dev, uint64_t a)
{
	const struct it_ext_set *s;
	uint32_t number;
	uint64_t start, len;

	if (!an->ss || !an->ss->have[which])
		return IT_EXT_NO_ZONE;
	s = &an->ss->set[which];
	for (uint32_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev == dev)
			return it_fs_zone_at(&s->devs[i], a, &number, &start, &len) ? number
										 : IT_EXT_NO_ZONE;
	return IT_EXT_NO_ZONE;
}

static int add_move(struct round *r, const char *path, uint64_t ino, uint32_t from, uint32_t to)
{
	for (uint32_t i = 0; i < r->nmoves; i++) {
		struct move *m = &r->moves[i];
		if (m->from == from && m->to == to && m->ino == ino &&
		    (m->path == path || (m->path && path && !strcmp(m->path, path)))) {
			m->bytes += F2FS_BLOCK;
			return 0;
		}
	}
	struct move *m = realloc(r->moves, (r->nmoves + 1) * sizeof(*m));
	if (!m)
		return -1;
	r->moves = m;
	m[r->nmoves++] = (struct move){ path, ino, from, to, F2FS_BLOCK };
	return 0;
}

/* NULL_ADDR (0) and NEW_ADDR (-1): no block before */
static bool real_block(uint32_t b)
{
	return b != 0 && b != UINT32_MAX;
}

static int gc_write(struct it_f2fs_an *an, struct round *r, const struct it_f2fs_event *e)
{
	uint32_t type = e->d & 0xff, old = (uint32_t)e->c, new = (uint32_t)(e->c >> 32);
	uint32_t dev = user_dev(e->dev);

	if (type < 3)
		r->blocks[type]++;
	if (e->d & IT_F2FS_GC_LATER)
		r->later++;
	if (type != 0 || !real_block(old)) /* data blocks are the files' */
		return 0;
	const char *path = an->refs ? file_at(an, dev, old * F2FS_BLOCK) : NULL;
	return add_move(r, path, path ? 0 : e->a, zone_of(an, IT_FS_START, dev, old * F2FS_BLOCK),
			zone_of(an, IT_FS_END, dev, (uint64_t)new * F2FS_BLOCK));
}

static void *grow(void *p, size_t n, size_t size)
{
	return realloc(p, (n + 1) * size);
}

/* A checkpoint event's phase: its text's first 16 bytes were recorded;
 * F2FS's own phases are named whole. */
static const char *phase(const struct it_f2fs_event *e, char *buf)
{
	static const char *const known[] = { "start block_ops", "finish block_ops",
					     "finish checkpoint" };
	memcpy(buf, &e->c, 8);
	memcpy(buf + 8, &e->d, 8);
	buf[16] = 0;
	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (!strncmp(buf, known[i], 16))
			return known[i];
	return buf;
}

static bool phase_is(const struct it_f2fs_event *e, const char *text)
{
	char buf[17];
	return !strcmp(phase(e, buf), text);
}

int it_f2fs_an_finish(struct it_f2fs_an *an, const struct it_fs_snapshots *ss, uint64_t lost)
{
	an->ss = ss;
	an->lost = lost;
	if (ss && ss->have[IT_FS_START] && index_extents(an))
		return -1;
	if (an->n > 1) /* ev is NULL without events */
		qsort(an->ev, an->n, sizeof(*an->ev), cmp_event);
	for (size_t i = 0; i < an->n; i++) {
		const struct it_f2fs_event *e = &an->ev[i];
		struct round *open = NULL;
		for (size_t k = an->nr; k-- > 0 && !open;)
			if (an->r[k].tid == e->tid && !an->r[k].end)
				open = &an->r[k];
		if (e->kind == IT_F2FS_GC_BEGIN) {
			struct round *r = grow(an->r, an->nr, sizeof(*r));
			if (!r)
				return -1;
			an->r = r;
			r[an->nr++] = (struct round){ .begin = e->ts_ns, .dev = e->dev, .pid = e->pid,
						      .tid = e->tid,
						      .fg = e->a, .free_before = e->b };
		} else if (e->kind == IT_F2FS_GC_END && open) {
			open->end = e->ts_ns;
			open->ret = (int64_t)e->a;
			open->segs = e->b;
			open->secs = e->c;
			open->free_after = e->d;
		} else if (e->kind == IT_F2FS_GC_WRITE && (e->d & IT_F2FS_GC_LATER)) {
			struct round *bg = NULL;
			for (size_t k = an->nr; k-- > 0 && !bg;)
				if (an->r[k].dev == e->dev && !an->r[k].fg)
					bg = &an->r[k];
			if (!bg)
				an->later_orphans++;
			else if (gc_write(an, bg, e))
				return -1;
		} else if (e->kind == IT_F2FS_GC_WRITE && open) {
			if (gc_write(an, open, e))
				return -1;
		} else if (e->kind == IT_F2FS_BG_GC) {
			an->bg_wakeups++;
		} else if (e->kind == IT_F2FS_CHECKPOINT && phase_is(e, "start block_ops")) {
			struct checkpoint *c = grow(an->cp, an->ncp, sizeof(*c));
			if (!c)
				return -1;
			an->cp = c;
			c[an->ncp++] = (struct checkpoint){ e->ts_ns, 0, e->dev, (uint32_t)e->a };
		} else if (e->kind == IT_F2FS_CHECKPOINT && phase_is(e, "finish checkpoint")) {
			for (size_t k = an->ncp; k-- > 0;)
				if (an->cp[k].dev == e->dev && !an->cp[k].end) {
					an->cp[k].end = e->ts_ns;
					break;
				}
		}
	}
	return 0;
}

static double secs_after(uint64_t t, uint64_t t0)
{
	return (double)(t - (t >= t0 ? t0 : 0)) / 1e9;
}

/* CP_UMOUNT, CP_FASTBOOT, ... (the kernel's CP_* bits) as "sync|trimmed" */
static void reason_text(uint32_t r, char *out, size_t len)
{
	static const char *const bits[] = { "umount", "fastboot", "sync", "recovery", "discard",
					    "trimmed", "pause", "resize" };
	size_t off = 0;

	*out = 0;
	for (unsigned i = 0; i < 8 && off < len; i++)
		if (r & (1u << i))
			off += snprintf(out + off, len - off, "%s%s", off ? "|" : "", bits[i]);
	if (!off)
		snprintf(out, len, r ? "0x%x" : "-", r);
}

static void zone_text(uint32_t z, char *out, size_t len)
{
	if (z == IT_EXT_NO_ZONE)
		snprintf(out, len, "?");
	else
		snprintf(out, len, "%u", z);
}

static void move_who(const struct move *m, char *out, size_t len)
{
	if (m->path)
		snprintf(out, len, "%s", m->path);
	else
		snprintf(out, len, "inode %llu", (unsigned long long)m->ino);
}

static void pages_text(const struct it_f2fs_an *an, FILE *f)
{
	const uint64_t *p = an->pages;
	fprintf(f, "  page writes (all, the GC's included): data hot %llu, warm %llu, cold %llu; "
		"node hot %llu,\n    warm %llu, cold %llu; meta %llu\n", (unsigned long long)p[0],
		(unsigned long long)p[1], (unsigned long long)p[2], (unsigned long long)p[3],
		(unsigned long long)p[4], (unsigned long long)p[5],
		(unsigned long long)(p[6] + p[7] + p[8]));
}

void it_f2fs_an_text(const struct it_f2fs_an *an, FILE *f, uint64_t t0)
{
	size_t fg = 0;
	char b[16], who[160], from[16], to[16];

	if (!it_f2fs_an_any(an))
		return;
	for (size_t i = 0; i < an->nr; i++)
		fg += an->r[i].fg;
	fprintf(f, "\nF2FS (its tracepoints): %zu GC rounds (%zu foreground), %zu checkpoints, "
		"%llu background GC wake-ups;\n  %llu events lost\n", an->nr, fg, an->ncp,
		(unsigned long long)an->bg_wakeups, (unsigned long long)an->lost);
	pages_text(an, f);
	if (an->nr) {
		fprintf(f, "\nGC rounds (at: s after the start; segs/secs: freed; data/node: blocks it "
			"wrote, a background\nround's data when writeback wrote it later; free: sections "
			"before -> after; under a round:\nthe data it moved, by file, from zone -> to "
			"zone)\n");
		fprintf(f, "  %10s %10s  %-4s %5s %5s %5s %7s %7s  %s\n", "at(s)", "took(ms)", "kind",
			"ret", "segs", "secs", "data", "node", "free");
	}
	for (size_t i = 0; i < an->nr && i < TEXT_ROUNDS; i++) {
		const struct round *r = &an->r[i];
		char took[16];
		snprintf(took, sizeof(took), r->end ? "%.3f" : "open", (double)(r->end - r->begin) / 1e6);
		fprintf(f, "  %10.6f %10s  %-4s %5lld %5llu %5llu %7llu %7llu  %llu -> %llu\n",
			secs_after(r->begin, t0), took, r->fg ? "fg" : "bg", (long long)r->ret,
			(unsigned long long)r->segs, (unsigned long long)r->secs,
			(unsigned long long)r->blocks[0], (unsigned long long)r->blocks[1],
			(unsigned long long)r->free_before, (unsigned long long)r->free_after);
		for (uint32_t k = 0; k < r->nmoves && k < TEXT_MOVES; k++) {
			move_who(&r->moves[k], who, sizeof(who));
			zone_text(r->moves[k].from, from, sizeof(from));
			zone_text(r->moves[k].to, to, sizeof(to));
			fprintf(f, "      moved %s %s: zone %s -> zone %s\n", who,
				it_ext_human(r->moves[k].bytes, b, sizeof(b)), from, to);
		}
		if (r->nmoves > TEXT_MOVES)
			fprintf(f, "      ... %u more (all of them in --json)\n", r->nmoves - TEXT_MOVES);
		if (r->later)
			fprintf(f, "      (%llu of its data blocks written back after the round)\n",
				(unsigned long long)r->later);
	}
	if (an->later_orphans)
		fprintf(f, "  %llu data blocks moved by a background round before the recording, "
			"written back in it\n", (unsigned long long)an->later_orphans);
	if (an->nr > TEXT_ROUNDS)
		fprintf(f, "  ... %zu more rounds (all of them in --json)\n", an->nr - TEXT_ROUNDS);
	if (!an->ncp)
		return;
	fprintf(f, "\nCheckpoints (at: s after the start; took: from its start block_ops to its "
		"finish checkpoint)\n  %10s %10s  %s\n", "at(s)", "took(ms)", "reason");
	for (size_t i = 0; i < an->ncp && i < TEXT_CHECKPOINTS; i++) {
		const struct checkpoint *c = &an->cp[i];
		char took[16], reason[64];
		snprintf(took, sizeof(took), c->end ? "%.3f" : "open", (double)(c->end - c->begin) / 1e6);
		reason_text(c->reason, reason, sizeof(reason));
		fprintf(f, "  %10.6f %10s  %s\n", secs_after(c->begin, t0), took, reason);
	}
	if (an->ncp > TEXT_CHECKPOINTS)
		fprintf(f, "  ... %zu more (all of them in --json)\n", an->ncp - TEXT_CHECKPOINTS);
}

static void dev_json(struct it_json *j, uint32_t kdev)
{
	char d[32];
	snprintf(d, sizeof(d), "%u:%u", kdev >> 20, kdev & 0xfffff);
	it_json_kv_string(j, "dev", d);
}

static void zone_json(struct it_json *j, const char *name, uint32_t z)
{
	if (z == IT_EXT_NO_ZONE) {
		it_json_name(j, name);
		it_json_null(j);
	} else {
		it_json_kv_uint(j, name, z);
	}
}

static void round_json(struct it_json *j, const struct round *r, uint64_t t0)
{
	it_json_object_start(j);
	dev_json(j, r->dev);
	it_json_kv_uint(j, "start_ns", r->begin - (r->begin >= t0 ? t0 : 0));
	if (r->end)
		it_json_kv_uint(j, "duration_ns", r->end - r->begin);
	it_json_kv_bool(j, "foreground", r->fg);
	it_json_kv_uint(j, "tid", r->tid);
	it_json_kv_int(j, "ret", r->ret);
	it_json_kv_uint(j, "segments_freed", r->segs);
	it_json_kv_uint(j, "sections_freed", r->secs);
	it_json_kv_uint(j, "free_sections_before", r->free_before);
	it_json_kv_uint(j, "free_sections_after", r->free_after);
	it_json_kv_uint(j, "data_blocks", r->blocks[0]);
	it_json_kv_uint(j, "node_blocks", r->blocks[1]);
	it_json_kv_uint(j, "data_blocks_written_back_later", r->later);
	it_json_name(j, "moved");
	it_json_array_start(j);
	for (uint32_t k = 0; k < r->nmoves; k++) {
		const struct move *m = &r->moves[k];
		it_json_object_start(j);
		if (m->path)
			it_json_kv_string(j, "path", m->path);
		else
			it_json_kv_uint(j, "ino", m->ino);
		it_json_kv_uint(j, "bytes", m->bytes);
		zone_json(j, "from_zone", m->from);
		zone_json(j, "to_zone", m->to);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

static const char *const kind_names[] = { "?", "gc_begin", "gc_end", "background_gc",
					  "checkpoint", "gc_write", "pages" };

void it_f2fs_an_json(const struct it_f2fs_an *an, struct it_json *j, uint64_t t0, bool events)
{
	static const char *const temps[] = { "hot", "warm", "cold" };
	static const char *const types[] = { "data", "node", "meta" };
	char reason[64];

	if (!it_f2fs_an_any(an))
		return;
	it_json_name(j, "f2fs");
	it_json_object_start(j);
	it_json_kv_uint(j, "lost", an->lost);
	it_json_kv_uint(j, "background_gc_wakeups", an->bg_wakeups);
	it_json_kv_uint(j, "gc_blocks_of_rounds_before", an->later_orphans);
	it_json_name(j, "page_writes");
	it_json_object_start(j);
	for (int t = 0; t < 3; t++) {
		it_json_name(j, types[t]);
		it_json_object_start(j);
		for (int k = 0; k < 3; k++)
			it_json_kv_uint(j, temps[k], an->pages[t * 3 + k]);
		it_json_object_end(j);
	}
	it_json_object_end(j);
	it_json_name(j, "gc_rounds");
	it_json_array_start(j);
	for (size_t i = 0; i < an->nr; i++)
		round_json(j, &an->r[i], t0);
	it_json_array_end(j);
	it_json_name(j, "checkpoints");
	it_json_array_start(j);
	for (size_t i = 0; i < an->ncp; i++) {
		const struct checkpoint *c = &an->cp[i];
		it_json_object_start(j);
		dev_json(j, c->dev);
		it_json_kv_uint(j, "start_ns", c->begin - (c->begin >= t0 ? t0 : 0));
		if (c->end)
			it_json_kv_uint(j, "duration_ns", c->end - c->begin);
		reason_text(c->reason, reason, sizeof(reason));
		it_json_kv_string(j, "reason", reason);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	if (events) {
		it_json_name(j, "events");
		it_json_array_start(j);
		for (size_t i = 0; i < an->n; i++) {
			const struct it_f2fs_event *e = &an->ev[i];
			it_json_object_start(j);
			it_json_kv_uint(j, "ts_ns", e->ts_ns - (e->ts_ns >= t0 ? t0 : 0));
			it_json_kv_string(j, "kind", e->kind < 7 ? kind_names[e->kind] : "?");
			dev_json(j, e->dev);
			it_json_kv_uint(j, "pid", e->pid);
			it_json_kv_uint(j, "tid", e->tid);
			it_json_kv_uint(j, "a", e->a);
			it_json_kv_uint(j, "b", e->b);
			it_json_kv_uint(j, "c", e->c);
			it_json_kv_uint(j, "d", e->d);
			it_json_object_end(j);
		}
		it_json_array_end(j);
	}
	it_json_object_end(j);
}

void it_f2fs_an_log(const struct it_f2fs_an *an, FILE *f, uint64_t t0, uint64_t from,
		    uint64_t to)
{
	static const char *const temps[] = { "hot", "warm", "cold" };
	static const char *const types[] = { "data", "node", "meta" };
	char reason[64], msg[17];

	for (size_t i = 0; an && i < an->n; i++) {
		const struct it_f2fs_event *e = &an->ev[i];
		if (e->ts_ns < from || e->ts_ns >= to)
			continue;
		unsigned long long a = e->a, b = e->b, c = e->c;
		fprintf(f, "%.6f %u/%u f2fs %s dev %u:%u", secs_after(e->ts_ns, t0), e->pid, e->tid,
			e->kind < 7 ? kind_names[e->kind] : "?", e->dev >> 20, e->dev & 0xfffff);
		switch (e->kind) {
		case IT_F2FS_GC_BEGIN:
			fprintf(f, " %s free_secs %llu free_segs %llu prefree %llu\n",
				a ? "foreground" : "background", b, c, (unsigned long long)e->d);
			break;
		case IT_F2FS_GC_END:
			fprintf(f, " ret %lld segs_freed %llu secs_freed %llu free_secs %llu\n",
				(long long)e->a, b, c, (unsigned long long)e->d);
			break;
		case IT_F2FS_BG_GC:
			fprintf(f, " wait_ms %llu prefree %llu free %llu\n", a, b, c);
			break;
		case IT_F2FS_CHECKPOINT:
			reason_text((uint32_t)e->a, reason, sizeof(reason));
			fprintf(f, " reason %s phase '%s'\n", reason, phase(e, msg));
			break;
		case IT_F2FS_GC_WRITE:
			fprintf(f, " ino %llu page %llu %s %s block %u -> %u\n", a, b,
				(e->d & 0xff) < 3 ? types[e->d & 0xff] : "?",
				(e->d >> 8 & 0xff) < 3 ? temps[e->d >> 8 & 0xff] : "?", (uint32_t)e->c,
				(uint32_t)(e->c >> 32));
			break;
		default:
			fputc('\n', f);
		}
	}
}

void it_f2fs_reason_text(uint32_t reason, char *out, size_t len)
{
	reason_text(reason, out, len);
}

static int publish_round(const struct round *r, const struct it_bus *bus)
{
	struct it_f2fs_moved *mv = calloc(r->nmoves ? r->nmoves : 1, sizeof(*mv));
	struct it_bus_f2fs m = { .kind = IT_F2FS_ROW_GC, .dev = r->dev, .start_ns = r->begin,
				 .end_ns = r->end, .pid = r->pid, .tid = r->tid, .foreground = r->fg,
				 .ret = r->ret, .segments_freed = r->segs, .sections_freed = r->secs,
				 .free_before = r->free_before, .free_after = r->free_after,
				 .data_blocks = r->blocks[0], .node_blocks = r->blocks[1],
				 .moved = mv, .nmoved = r->nmoves };

	if (!mv)
		return -1;
	for (uint32_t k = 0; k < r->nmoves; k++)
		mv[k] = (struct it_f2fs_moved){ r->moves[k].path, r->moves[k].ino, r->moves[k].from,
						r->moves[k].to, r->moves[k].bytes };
	it_bus_publish(bus, IT_BUS_F2FS, &m);
	free(mv);
	return 0;
}

int it_f2fs_an_publish(const struct it_f2fs_an *an, const struct it_bus *bus)
{
	size_t nr = 0, ncp = 0;

	if (!an || !it_bus_wanted(bus, IT_BUS_F2FS))
		return 0;
	/* finish made a round per gc_begin and a checkpoint per "start
	 * block_ops", in this order: the k-th of each is the k-th met */
	for (size_t i = 0; i < an->n; i++) {
		const struct it_f2fs_event *e = &an->ev[i];

		if (e->kind == IT_F2FS_GC_BEGIN && nr < an->nr) {
			if (publish_round(&an->r[nr++], bus))
				return -1;
		} else if (e->kind == IT_F2FS_CHECKPOINT && phase_is(e, "start block_ops") &&
			   ncp < an->ncp) {
			const struct checkpoint *c = &an->cp[ncp++];
			struct it_bus_f2fs m = { .kind = IT_F2FS_ROW_CHECKPOINT, .dev = c->dev,
						 .start_ns = c->begin, .end_ns = c->end,
						 .pid = e->pid, .tid = e->tid, .reason = c->reason };

			it_bus_publish(bus, IT_BUS_F2FS, &m);
		} else if (e->kind == IT_F2FS_BG_GC) {
			struct it_bus_f2fs m = { .kind = IT_F2FS_ROW_BG_GC, .dev = e->dev,
						 .start_ns = e->ts_ns, .pid = e->pid, .tid = e->tid,
						 .wait_ms = e->a, .prefree = e->b,
						 .free_segments = e->c };

			it_bus_publish(bus, IT_BUS_F2FS, &m);
		}
	}
	return 0;
}

void it_f2fs_an_free(struct it_f2fs_an *an)
{
	if (!an)
		return;
	for (size_t i = 0; i < an->nr; i++)
		free(an->r[i].moves);
	free(an->r);
	free(an->cp);
	free(an->ev);
	free(an->refs);
	free(an);
}
