// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fs layer in `iotrail report`: the two extents snapshots of `record
 * --extents` read back (src/extents/snapshot.c) and compared
 * (src/extents/delta.c): per file, the data new, moved and freed during
 * the recording and the zones (or regions) the new and moved data went
 * to; per zone, the files that wrote into it. With F2FS's tracepoints
 * (FS_F2FS chunks): its GC rounds, checkpoints and page writes
 * (f2fs_analysis.c), the GC's moved blocks named by the snapshots. Pure C.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "extents/snapshot.h"
#include "layers/fs/f2fs_analysis.h"

#define TEXT_FILES 20      /* files listed in the text view; JSON lists them all */
#define TEXT_ZONE_FILES 4  /* files listed per zone in the text view */

struct fs_state {
	struct it_fs_snapshots ss;
	struct it_fs_delta delta;
	bool complete;               /* both snapshots read and compared */
	struct it_f2fs_an *f2fs;     /* F2FS's tracepoint events */
	const struct it_bus *bus;    /* its rounds and checkpoints published at the end */
};

static void *fs_new(const struct it_pass_info *info)
{
	struct fs_state *st = calloc(1, sizeof(struct fs_state));

	if (st && !(st->f2fs = it_f2fs_an_new())) {
		free(st);
		return NULL;
	}
	if (st && info) /* NULL: no pass (the unit tests' reports) */
		st->bus = info->bus;
	return st;
}

static int fs_feed(void *self, uint16_t type, const void *payload, size_t len, uint32_t count)
{
	struct fs_state *st = self;
	if (type == IT_CHUNK_FS_F2FS)
		return it_f2fs_an_feed(st->f2fs, payload, len, count);
	return it_fs_snapshots_feed(&st->ss, payload, len, count);
}

static const struct it_fs_file_delta *sort_files; /* qsort has no context */

struct zone_ref {
	uint32_t dev, zone;
	uint64_t start, bytes;
	uint32_t file;               /* index in the delta */
};

static int cmp_ref(const void *a, const void *b)
{
	const struct zone_ref *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->zone != y->zone)
		return x->zone < y->zone ? -1 : 1;
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes; /* most data first */
}

struct fs_zones {
	struct zone_ref *refs;
	size_t nrefs;
};

/* The zones of every file's new and moved data, each with its files. */
static int zone_refs(const struct it_fs_delta *d, struct fs_zones *z)
{
	size_t n = 0;
	for (uint32_t i = 0; i < d->nfiles; i++)
		n += d->files[i].nzones;
	z->refs = calloc(n ? n : 1, sizeof(*z->refs));
	if (!z->refs)
		return -1;
	for (uint32_t i = 0; i < d->nfiles; i++)
		for (uint32_t k = 0; k < d->files[i].nzones; k++) {
			const struct it_fs_zone_bytes *b = &d->files[i].zones[k];
			z->refs[z->nrefs++] = (struct zone_ref){ b->dev, b->zone, b->zone_start,
								 b->bytes, i };
		}
	qsort(z->refs, z->nrefs, sizeof(*z->refs), cmp_ref);
	return 0;
}

static int fs_finish(void *self, const struct it_span *span)
{
	struct fs_state *st = self;
	if (it_fs_snapshots_finish(&st->ss) || it_f2fs_an_finish(st->f2fs, &st->ss, span->lost) ||
	    it_f2fs_an_publish(st->f2fs, st->bus))
		return -1;
	if (!st->ss.have[IT_FS_START] || !st->ss.have[IT_FS_END])
		return 0;
	if (it_fs_delta_compute(&st->ss, &st->delta))
		return -1;
	st->complete = true;
	return 0;
}

static void dev_name(const struct it_fs_snapshots *ss, uint32_t dev, char *buf, size_t len)
{
	const struct it_ext_set *s = &ss->set[IT_FS_END];
	for (uint32_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev == dev && s->devs[i].name[0]) {
			snprintf(buf, len, "%s", s->devs[i].name);
			return;
		}
	snprintf(buf, len, "%u:%u", major(dev), minor(dev));
}

static bool dev_zoned(const struct it_fs_snapshots *ss, uint32_t dev)
{
	const struct it_ext_set *s = &ss->set[IT_FS_END];
	for (uint32_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev == dev)
			return s->devs[i].zoned;
	return false;
}

static const char *state_name(enum it_fs_file_state s)
{
	return s == IT_FS_CHANGED ? "changed" : s == IT_FS_CREATED ? "created"
	     : s == IT_FS_DELETED ? "deleted" : "same";
}

static int cmp_changed(const void *a, const void *b)
{
	const struct it_fs_file_delta *x = &sort_files[*(const uint32_t *)a];
	const struct it_fs_file_delta *y = &sort_files[*(const uint32_t *)b];
	uint64_t vx = x->new_bytes + x->moved_bytes + x->freed_bytes;
	uint64_t vy = y->new_bytes + y->moved_bytes + y->freed_bytes;
	return vx > vy ? -1 : vx < vy ? 1 : strcmp(x->path, y->path);
}

/* "zone 3 64M, zone 4 1M" (the zones table below names their devices) */
static void where_text(const struct fs_state *st, const struct it_fs_file_delta *f, char *out,
		       size_t len)
{
	size_t off = 0;
	char b[16];

	*out = 0;
	for (uint32_t k = 0; k < f->nzones && off < len; k++) {
		const struct it_fs_zone_bytes *z = &f->zones[k];
		if (z->zone == IT_EXT_NO_ZONE)
			off += snprintf(out + off, len - off, "%sbeyond the zones %s", off ? ", " : "",
					it_ext_human(z->bytes, b, sizeof(b)));
		else
			off += snprintf(out + off, len - off, "%s%s %u %s", off ? ", " : "",
					dev_zoned(&st->ss, z->dev) ? "zone" : "region", z->zone,
					it_ext_human(z->bytes, b, sizeof(b)));
	}
	if (!f->nzones)
		snprintf(out, len, "-");
}

static bool has_segs(const struct it_fs_file_delta *f)
{
	for (int k = 1; k < IT_EXT_F2FS_SEGS; k++)
		if (f->seg_start[k] || f->seg_end[k])
			return true;
	return false;
}

/* "warm 1M, cold 64K" (data segments by temperature alone, node segments
 * as "warm-node"; "unknown": placed on no segment segment_info typed), or
 * "-" without placed data */
static void segs_text(const uint64_t *seg, char *out, size_t len)
{
	static const char *const names[IT_EXT_F2FS_SEGS] = {
		"unknown", "hot", "warm", "cold", "hot-node", "warm-node", "cold-node" };
	static const int order[] = { 1, 2, 3, 4, 5, 6, 0 };
	size_t off = 0;
	char b[16];

	*out = 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(*order) && off < len; i++)
		if (seg[order[i]])
			off += snprintf(out + off, len - off, "%s%s %s", off ? ", " : "",
					names[order[i]], it_ext_human(seg[order[i]], b, sizeof(b)));
	if (!off)
		snprintf(out, len, "-");
}

/* The F2FS segment types of a file's data at the start and at the end,
 * under its row: at the where-column when that fits 100 columns, else at
 * the left margin, else on two lines there (the longest side, every type
 * with a size, is 83 columns). */
static void segs_line(FILE *f, const struct it_fs_file_delta *x)
{
	char a[128], e[128];

	segs_text(x->seg_start, a, sizeof(a));
	segs_text(x->seg_end, e, sizeof(e));
	int n = (int)(strlen(" segments ") + strlen(a) + strlen(" -> ") + strlen(e));
	if (48 + n <= 100 || 4 + n <= 100)
		fprintf(f, "%*s segments %s -> %s\n", 48 + n <= 100 ? 48 : 4, "", a, e);
	else
		fprintf(f, "%4s segments %s\n%10s -> %s\n", "", a, "", e);
}

static void fs_text(void *self, FILE *f, const struct it_report_ctx *ctx)
{
	struct fs_state *st = self;
	const struct it_fs_snapshots *ss = &st->ss;
	const struct it_fs_delta *d = &st->delta;
	const struct it_ext_set *a = &ss->set[IT_FS_START], *e = &ss->set[IT_FS_END];
	char b1[16], b2[16], b3[16], where[256];

	uint64_t t0 = ctx && ctx->host ? ctx->host->start_monotonic_ns : 0;
	bool snapshots = ss->have[IT_FS_START] || ss->have[IT_FS_END] || ss->bad;

	it_f2fs_an_text(st->f2fs, f, t0);
	if (!snapshots && it_f2fs_an_any(st->f2fs))
		return; /* --f2fs without --extents */
	if (!st->complete) {
		fprintf(f, "\nFile extents (--extents): %s snapshot is missing: the recording was "
			"cut short\n", ss->have[IT_FS_START] ? "the end" : "the start");
		if (ss->bad)
			fprintf(f, "  %llu records skipped: damaged or from a newer iotrail\n",
				(unsigned long long)ss->bad);
		return;
	}
	fprintf(f, "\nFile extents (--extents): %u files at the start, %u at the end, taken %.2fs "
		"apart\n", a->nfiles, e->nfiles,
		(double)(ss->snap[IT_FS_END].at_ns - ss->snap[IT_FS_START].at_ns) / 1e9);
	fprintf(f, "  files: %u changed, %u created, %u deleted, %u unchanged; data: %s new, %s "
		"moved, %s freed\n", d->changed, d->created, d->deleted, d->same,
		it_ext_human(d->new_bytes, b1, sizeof(b1)), it_ext_human(d->moved_bytes, b2, sizeof(b2)),
		it_ext_human(d->freed_bytes, b3, sizeof(b3)));
	fprintf(f, "  at the end: %llu extents, %llu without an address yet\n  skipped: %llu "
		"vanished, %llu unreadable, %llu without FIEMAP, %llu not regular files\n",
		(unsigned long long)e->extents, (unsigned long long)e->unplaced,
		(unsigned long long)e->vanished, (unsigned long long)e->unreadable,
		(unsigned long long)e->unsupported, (unsigned long long)e->not_regular);
	if (ss->bad)
		fprintf(f, "  %llu records skipped: damaged or from a newer iotrail\n",
			(unsigned long long)ss->bad);
	uint32_t *idx = malloc((d->nfiles ? d->nfiles : 1) * sizeof(*idx)), n = 0;
	for (uint32_t i = 0; idx && i < d->nfiles; i++)
		if (d->files[i].state != IT_FS_SAME)
			idx[n++] = i;
	if (n) {
		sort_files = d->files;
		qsort(idx, n, sizeof(*idx), cmp_changed);
		bool segs = false;
		for (uint32_t i = 0; i < n && !segs; i++)
			segs = has_segs(&d->files[idx[i]]);
		fprintf(f, "\nFiles whose extents changed (new: data at offsets without a block at "
			"the start;\nmoved: on other blocks than at the start; freed: without a block "
			"at the end;\n+ext/-ext: extents not at the start/end; moved-ext: extents with "
			"moved data;\nunder a file: where its new and moved data went%s)\n",
			segs ? ";\nsegments: the F2FS segments (temperature) of its data, at the start -> "
			       "at the end" : "");
		fprintf(f, "  %8s %8s %8s %5s %5s %9s  %-8s %s\n", "new", "moved", "freed",
			"+ext", "-ext", "moved-ext", "state", "path");
		for (uint32_t i = 0; i < n && i < TEXT_FILES; i++) {
			const struct it_fs_file_delta *x = &d->files[idx[i]];
			where_text(st, x, where, sizeof(where));
			fprintf(f, "  %8s %8s %8s %5u %5u %9u  %-8s %s\n",
				it_ext_human(x->new_bytes, b1, sizeof(b1)),
				it_ext_human(x->moved_bytes, b2, sizeof(b2)),
				it_ext_human(x->freed_bytes, b3, sizeof(b3)), x->extents_added,
				x->extents_removed, x->extents_moved, state_name(x->state), x->path);
			if (strcmp(where, "-"))
				fprintf(f, "%48s went to %s\n", "", where);
			if (has_segs(x))
				segs_line(f, x);
		}
		if (n > TEXT_FILES)
			fprintf(f, "  ... %u more (all of them in --json)\n", n - TEXT_FILES);
	}
	free(idx);
	struct fs_zones z = { 0 };
	if (zone_refs(d, &z) || !z.nrefs) {
		free(z.refs);
		return;
	}
	fprintf(f, "\nZones and regions written during the recording (new and moved data; files "
		"most data first)\n");
	fprintf(f, "  %-10s %-7s %8s %10s %10s  %s\n", "device", "kind", "number", "start", "bytes",
		"files");
	for (size_t i = 0; i < z.nrefs;) {
		size_t k = i;
		uint64_t sum = 0;
		while (k < z.nrefs && z.refs[k].dev == z.refs[i].dev && z.refs[k].zone == z.refs[i].zone)
			sum += z.refs[k++].bytes;
		char dn[64], num[16], files[320];
		size_t off = 0;
		dev_name(ss, z.refs[i].dev, dn, sizeof(dn));
		snprintf(num, sizeof(num), z.refs[i].zone == IT_EXT_NO_ZONE ? "-" : "%u",
			 z.refs[i].zone);
		files[0] = 0;
		for (size_t m = i; m < k && m < i + TEXT_ZONE_FILES && off < sizeof(files); m++)
			off += snprintf(files + off, sizeof(files) - off, "%s%s %s", m > i ? ", " : "",
					d->files[z.refs[m].file].path,
					it_ext_human(z.refs[m].bytes, b1, sizeof(b1)));
		if (k - i > TEXT_ZONE_FILES && off < sizeof(files))
			snprintf(files + off, sizeof(files) - off, ", +%zu more",
				 k - i - TEXT_ZONE_FILES);
		fprintf(f, "  %-10s %-7s %8s %10s %10s  %s\n", dn,
			dev_zoned(ss, z.refs[i].dev) ? "zone" : "region", num,
			it_ext_human(z.refs[i].start, b2, sizeof(b2)), it_ext_human(sum, b3, sizeof(b3)), files);
		i = k;
	}
	free(z.refs);
}

static void extents_json(struct it_json *j, const char *name, const struct it_ext_file *x)
{
	it_json_name(j, name);
	it_json_array_start(j);
	for (uint32_t k = 0; x && k < x->next; k++) {
		const struct it_extent *e = &x->ext[k];
		it_json_object_start(j);
		it_json_kv_uint(j, "logical", e->logical);
		it_json_kv_uint(j, "physical", e->physical);
		it_json_kv_uint(j, "length", e->length);
		it_json_kv_bool(j, "placed", e->placed);
		if (e->placed && e->zone != IT_EXT_NO_ZONE)
			it_json_kv_uint(j, "zone", e->zone);
		if (it_ext_f2fs_seg_name(e->f2fs_seg))
			it_json_kv_string(j, "segment_type", it_ext_f2fs_seg_name(e->f2fs_seg));
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

/* {"warm_data": BYTES, ...}: the types with data; "unknown" for placed
 * data of no typed segment */
static void segs_json(struct it_json *j, const char *name, const uint64_t *seg)
{
	it_json_name(j, name);
	it_json_object_start(j);
	for (int k = 1; k < IT_EXT_F2FS_SEGS; k++)
		if (seg[k])
			it_json_kv_uint(j, it_ext_f2fs_seg_name((uint8_t)k), seg[k]);
	if (seg[0])
		it_json_kv_uint(j, "unknown", seg[0]);
	it_json_object_end(j);
}

static void snapshot_json(struct it_json *j, const char *name, const struct it_fs_snapshots *ss,
			  int k)
{
	const struct it_ext_set *s = &ss->set[k];
	const struct it_fs_snapshot_rec *r = &ss->snap[k];

	it_json_name(j, name);
	it_json_object_start(j);
	it_json_kv_uint(j, "at_ns", r->at_ns);
	it_json_kv_uint(j, "walk_ns", r->walk_ns);
	it_ext_walk_json(j, s);
	it_json_kv_uint(j, "region_size", s->region);
	it_json_object_end(j);
}

static void fs_json(void *self, struct it_json *j, const struct it_report_ctx *ctx)
{
	struct fs_state *st = self;
	const struct it_fs_snapshots *ss = &st->ss;
	const struct it_fs_delta *d = &st->delta;
	char dn[64];
	uint64_t t0 = ctx && ctx->host ? ctx->host->start_monotonic_ns : 0;

	it_f2fs_an_json(st->f2fs, j, t0, ctx && ctx->opts && ctx->opts->events);
	if (!ss->have[IT_FS_START] && !ss->have[IT_FS_END] && !ss->bad && it_f2fs_an_any(st->f2fs))
		return; /* --f2fs without --extents */
	it_json_name(j, "extents");
	it_json_object_start(j);
	it_json_kv_bool(j, "complete", st->complete);
	it_json_kv_uint(j, "skipped_records", ss->bad);
	if (ss->have[IT_FS_START])
		snapshot_json(j, "start", ss, IT_FS_START);
	if (ss->have[IT_FS_END])
		snapshot_json(j, "end", ss, IT_FS_END);
	if (!st->complete) {
		it_json_object_end(j);
		return;
	}
	it_json_kv_uint(j, "changed", d->changed);
	it_json_kv_uint(j, "created", d->created);
	it_json_kv_uint(j, "deleted", d->deleted);
	it_json_kv_uint(j, "unchanged", d->same);
	it_json_kv_uint(j, "new_bytes", d->new_bytes);
	it_json_kv_uint(j, "moved_bytes", d->moved_bytes);
	it_json_kv_uint(j, "freed_bytes", d->freed_bytes);
	it_json_name(j, "files");
	it_json_array_start(j);
	for (uint32_t i = 0; i < d->nfiles; i++) {
		const struct it_fs_file_delta *x = &d->files[i];
		it_json_object_start(j);
		it_json_kv_string(j, "path", x->path);
		it_json_kv_string(j, "state", state_name(x->state));
		it_json_kv_uint(j, "size_start", x->size_start);
		it_json_kv_uint(j, "size_end", x->size_end);
		it_json_kv_uint(j, "new_bytes", x->new_bytes);
		it_json_kv_uint(j, "moved_bytes", x->moved_bytes);
		it_json_kv_uint(j, "freed_bytes", x->freed_bytes);
		it_json_kv_uint(j, "extents_added", x->extents_added);
		it_json_kv_uint(j, "extents_removed", x->extents_removed);
		it_json_kv_uint(j, "extents_moved", x->extents_moved);
		it_json_kv_uint(j, "unplaced_extents_end", x->unplaced_end);
		it_json_kv_uint(j, "unplaced_bytes_end", x->unplaced_bytes);
		it_json_name(j, "zones");
		it_json_array_start(j);
		for (uint32_t k = 0; k < x->nzones; k++) {
			dev_name(ss, x->zones[k].dev, dn, sizeof(dn));
			it_json_object_start(j);
			it_json_kv_string(j, "dev", dn);
			if (x->zones[k].zone == IT_EXT_NO_ZONE)
				it_json_kv_bool(j, "beyond_zones", true);
			else
				it_json_kv_uint(j, "zone", x->zones[k].zone);
			it_json_kv_uint(j, "start", x->zones[k].zone_start);
			it_json_kv_uint(j, "bytes", x->zones[k].bytes);
			it_json_object_end(j);
		}
		it_json_array_end(j);
		if (has_segs(x)) {
			segs_json(j, "segment_bytes_start", x->seg_start);
			segs_json(j, "segment_bytes_end", x->seg_end);
		}
		extents_json(j, "extents_start", x->start >= 0 ? &ss->set[0].files[x->start] : NULL);
		extents_json(j, "extents_end", x->end >= 0 ? &ss->set[1].files[x->end] : NULL);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

/* the snapshots' moments and F2FS's events, in time order */
static void fs_log(void *self, FILE *f, const struct it_report_ctx *ctx)
{
	struct fs_state *st = self;
	uint64_t t0 = ctx && ctx->host ? ctx->host->start_monotonic_ns : 0, from = 0;

	for (int k = IT_FS_START; k <= IT_FS_END; k++) {
		const struct it_fs_snapshot_rec *r = &st->ss.snap[k];
		if (!st->ss.have[k])
			continue;
		it_f2fs_an_log(st->f2fs, f, t0, from, r->at_ns);
		from = r->at_ns;
		/* the start's walk runs before the trace (and its clock's t0) opens */
		fprintf(f, "%.6f extents snapshot %s: %llu files, %llu extents (walked in %.3f ms)\n",
			t0 ? (double)(int64_t)(r->at_ns - t0) / 1e9 : (double)r->at_ns / 1e9,
			k == IT_FS_START ? "start" : "end", (unsigned long long)r->files,
			(unsigned long long)r->extents, (double)r->walk_ns / 1e6);
	}
	it_f2fs_an_log(st->f2fs, f, t0, from, UINT64_MAX);
}

static void fs_free(void *self)
{
	struct fs_state *st = self;
	if (!st)
		return;
	it_f2fs_an_free(st->f2fs);
	it_fs_delta_free(&st->delta);
	it_fs_snapshots_free(&st->ss);
	free(st);
}

static const uint16_t fs_chunks[] = { IT_CHUNK_FS_EXTENTS, IT_CHUNK_FS_F2FS };

const struct it_analysis_layer it_layer_fs = {
	.name = "fs",
	.layer = IT_LAYER_FS,
	.chunks = fs_chunks,
	.nchunks = 2,
	.event_list = "file system events",
	.new = fs_new,
	.feed = fs_feed,
	.finish = fs_finish,
	.report_text = fs_text,
	.report_json = fs_json,
	.report_log = fs_log,
	.free = fs_free,
};
