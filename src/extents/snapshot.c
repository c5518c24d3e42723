// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fs layer's records (snapshot.h): an extents snapshot written as
 * FS_EXTENTS records and read back into an it_ext_set. Big zone tables
 * and files of many extents are cut into parts, so that no record comes
 * near the trace writer's 1 MiB limit. A record that does not parse is
 * counted and skipped, never trusted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iotrail/event.h"
#include "extents/snapshot.h"
#include "layers/fs/f2fs.h"

_Static_assert(sizeof(struct it_fs_rec_head) == 8, "fs record head layout");
_Static_assert(sizeof(struct it_fs_snapshot_rec) == 96, "fs snapshot record layout");
_Static_assert(sizeof(struct it_fs_zone_rec) == 40, "fs zone record layout");
_Static_assert(sizeof(struct it_fs_device_rec) == 200, "fs device record layout");
_Static_assert(sizeof(struct it_fs_extent_rec) == 32, "fs extent record layout");
_Static_assert(sizeof(struct it_fs_file_rec) == 40, "fs file record layout");
_Static_assert(sizeof(struct it_f2fs_event) == 56, "f2fs event layout");

/* version 2: F2FS's tracepoints (FS_F2FS) */
const struct it_layer_rec it_fs_records = {
	.id = IT_LAYER_FS, .version = 2, .name = "fs", .nrecords = 2,
	.records = { { IT_CHUNK_FS_EXTENTS, IT_COMP_ZSTD, 0, "it_fs_rec" },
		     { IT_CHUNK_FS_F2FS, IT_COMP_WORDS, sizeof(struct it_f2fs_event),
		       "it_f2fs_event" } },
};

static void *grow(void **buf, size_t *cap, size_t len)
{
	if (len > *cap) {
		void *p = realloc(*buf, len);
		if (!p)
			return NULL;
		*buf = p;
		*cap = len;
	}
	memset(*buf, 0, len);
	return *buf;
}

static int write_device(const struct it_ext_dev *d, unsigned which, it_fs_emit_fn emit,
			void *ctx, void **buf, size_t *cap)
{
	uint32_t first = 0;

	do {
		uint32_t n = d->zoned ? d->nzones - first : 0;
		if (n > IT_FS_ZONES_PER_REC)
			n = IT_FS_ZONES_PER_REC;
		size_t len = sizeof(struct it_fs_device_rec) + n * sizeof(struct it_fs_zone_rec);
		struct it_fs_device_rec *r = grow(buf, cap, len);
		if (!r)
			return -ENOMEM;
		r->h = (struct it_fs_rec_head){ IT_FS_DEVICE, (uint8_t)which, 0, (uint32_t)len };
		r->dev = d->dev;
		r->nzones = n;
		r->zone_first = first;
		r->total_zones = d->zoned ? d->nzones : 0;
		r->size = d->size;
		r->zoned = d->zoned;
		snprintf(r->name, sizeof(r->name), "%s", d->name);
		snprintf(r->why_regions, sizeof(r->why_regions), "%s",
			 d->why_regions ? d->why_regions : "");
		struct it_fs_zone_rec *z = (struct it_fs_zone_rec *)(r + 1);
		for (uint32_t i = 0; i < n; i++) {
			const struct it_ext_zone *x = &d->zones[first + i];
			z[i] = (struct it_fs_zone_rec){ x->start, x->len, x->capacity, x->wp,
							x->type, x->cond, { 0 } };
		}
		int err = emit(r, len, ctx);
		if (err)
			return err;
		first += n;
	} while (first < (d->zoned ? d->nzones : 0));
	return 0;
}

static int write_file(const struct it_ext_file *f, unsigned which, it_fs_emit_fn emit, void *ctx,
		      void **buf, size_t *cap)
{
	size_t plen = strlen(f->path);
	uint32_t first = 0;

	do {
		uint32_t n = f->next - first;
		if (n > IT_FS_EXTENTS_PER_REC)
			n = IT_FS_EXTENTS_PER_REC;
		size_t len = sizeof(struct it_fs_file_rec) + n * sizeof(struct it_fs_extent_rec) +
			     plen + 1;
		struct it_fs_file_rec *r = grow(buf, cap, len);
		if (!r)
			return -ENOMEM;
		r->h = (struct it_fs_rec_head){ IT_FS_FILE, (uint8_t)which, 0, (uint32_t)len };
		r->size = f->size;
		r->dev = f->dev;
		r->blksize = f->blksize;
		r->nextents = n;
		r->ext_first = first;
		r->total_extents = f->next;
		r->path_len = (uint32_t)plen;
		struct it_fs_extent_rec *e = (struct it_fs_extent_rec *)(r + 1);
		for (uint32_t i = 0; i < n; i++) {
			const struct it_extent *x = &f->ext[first + i];
			e[i] = (struct it_fs_extent_rec){ x->logical, x->physical, x->length,
							  x->flags, x->placed, x->f2fs_seg, 0 };
		}
		memcpy(e + n, f->path, plen + 1);
		int err = emit(r, len, ctx);
		if (err)
			return err;
		first += n;
	} while (first < f->next);
	return 0;
}

int it_fs_snapshot_write(const struct it_ext_set *s, unsigned which, uint64_t at_ns,
			 uint64_t walk_ns, it_fs_emit_fn emit, void *ctx)
{
	void *buf = NULL;
	size_t cap = 0;
	int err = 0;

	for (uint32_t i = 0; !err && i < s->ndevs; i++)
		err = write_device(&s->devs[i], which, emit, ctx, &buf, &cap);
	for (uint32_t i = 0; !err && i < s->nfiles; i++)
		err = write_file(&s->files[i], which, emit, ctx, &buf, &cap);
	free(buf);
	if (err)
		return err;
	struct it_fs_snapshot_rec r = {
		.h = { IT_FS_SNAPSHOT, (uint8_t)which, 0, sizeof(r) },
		.at_ns = at_ns, .walk_ns = walk_ns,
		.files = s->nfiles, .extents = s->extents, .unplaced = s->unplaced,
		.dirs = s->dirs, .vanished = s->vanished, .unreadable = s->unreadable,
		.unsupported = s->unsupported, .not_regular = s->not_regular,
		.region = s->region ? s->region : IT_EXT_REGION_DEFAULT,
	};
	return emit(&r, sizeof(r), ctx);
}

/* ---- reading ---- */

static int read_device(struct it_fs_snapshots *ss, const struct it_fs_device_rec *r)
{
	struct it_ext_set *s = &ss->set[r->h.snapshot];
	size_t want = sizeof(*r) + (size_t)r->nzones * sizeof(struct it_fs_zone_rec);

	if (r->h.len != want || (uint64_t)r->zone_first + r->nzones > r->total_zones ||
	    (!r->zoned && r->total_zones)) {
		ss->bad++;
		return 0;
	}
	struct it_ext_dev *d = it_ext_dev_get(s, r->dev);
	if (!d)
		return -1;
	if (r->zone_first != (d->zoned ? d->nzones : 0)) { /* a part out of order */
		ss->bad++;
		return 0;
	}
	snprintf(d->name, sizeof(d->name), "%.*s", (int)sizeof(r->name), r->name);
	d->size = r->size;
	if (r->why_regions[0] && !d->why_regions &&
	    !(d->why_regions = strndup(r->why_regions, sizeof(r->why_regions))))
		return -1;
	if (!r->zoned)
		return 0;
	struct it_ext_zone *z = realloc(d->zones, (size_t)(r->zone_first + r->nzones) * sizeof(*z));
	if (!z)
		return -1;
	const struct it_fs_zone_rec *x = (const void *)(r + 1);
	for (uint32_t i = 0; i < r->nzones; i++) {
		struct it_ext_zone *o = &z[r->zone_first + i];
		memset(o, 0, sizeof(*o));
		o->number = r->zone_first + i;
		o->start = x[i].start;
		o->len = x[i].len;
		o->capacity = x[i].capacity;
		o->wp = x[i].wp;
		o->type = x[i].type;
		o->cond = x[i].cond;
	}
	d->zones = z;
	d->nzones = r->zone_first + r->nzones;
	d->zoned = true;
	return 0;
}

static int read_file(struct it_fs_snapshots *ss, const struct it_fs_file_rec *r)
{
	struct it_ext_set *s = &ss->set[r->h.snapshot];
	size_t want = sizeof(*r) + (size_t)r->nextents * sizeof(struct it_fs_extent_rec) +
		      (size_t)r->path_len + 1;
	const struct it_fs_extent_rec *x = (const void *)(r + 1);
	const char *path = (const char *)(x + r->nextents);

	if (r->h.len != want || path[r->path_len] || strlen(path) != r->path_len ||
	    (uint64_t)r->ext_first + r->nextents > r->total_extents) {
		ss->bad++;
		return 0;
	}
	struct it_ext_file *f = s->nfiles ? &s->files[s->nfiles - 1] : NULL;
	if (r->ext_first) {
		/* the next part of the file before it */
		if (!f || strcmp(f->path, path) || f->next != r->ext_first) {
			ss->bad++;
			return 0;
		}
	} else {
		long i = it_ext_add_file(s, path, r->size, r->dev, r->blksize, NULL, 0);
		if (i < 0)
			return -1;
		f = &s->files[i];
	}
	struct it_extent *e = realloc(f->ext, (size_t)(f->next + r->nextents + !f->next) * sizeof(*e));
	if (!e)
		return -1;
	for (uint32_t i = 0; i < r->nextents; i++)
		e[f->next + i] = (struct it_extent){ .logical = x[i].logical,
						     .physical = x[i].physical,
						     .length = x[i].length, .flags = x[i].flags,
						     .placed = x[i].placed != 0,
						     .f2fs_seg = x[i].f2fs_seg };
	f->ext = e;
	f->next += r->nextents;
	s->extents += r->nextents;
	return 0;
}

static int read_record(struct it_fs_snapshots *ss, const struct it_fs_rec_head *h)
{
	switch (h->kind) {
	case IT_FS_SNAPSHOT:
		if (h->len != sizeof(struct it_fs_snapshot_rec))
			break;
		memcpy(&ss->snap[h->snapshot], h, sizeof(struct it_fs_snapshot_rec));
		ss->have[h->snapshot] = true;
		ss->region = ss->snap[h->snapshot].region;
		return 0;
	case IT_FS_DEVICE:
		if (h->len < sizeof(struct it_fs_device_rec))
			break;
		return read_device(ss, (const void *)h);
	case IT_FS_FILE:
		if (h->len < sizeof(struct it_fs_file_rec))
			break;
		return read_file(ss, (const void *)h);
	}
	ss->bad++; /* a kind from a newer writer, or a short record */
	return 0;
}

int it_fs_snapshots_feed(struct it_fs_snapshots *ss, const void *payload, size_t len,
			 uint32_t count)
{
	const unsigned char *p = payload;
	size_t off = 0;

	for (uint32_t i = 0; i < count; i++) {
		struct it_fs_rec_head h;
		if (len - off < sizeof(h)) {
			ss->bad += count - i;
			return 0;
		}
		memcpy(&h, p + off, sizeof(h));
		size_t padded = ((size_t)h.len + 7) & ~(size_t)7;
		if (h.len < sizeof(h) || padded > len - off) {
			ss->bad += count - i; /* the rest cannot be found */
			return 0;
		}
		if (h.snapshot > IT_FS_END)
			ss->bad++;
		else if (((uintptr_t)(p + off) & 7) == 0) {
			if (read_record(ss, (const void *)(p + off)))
				return -1;
		} else {
			/* records are 8-aligned in the payload; a payload that is
			 * not (never from our reader) is copied */
			void *copy = malloc(h.len);
			int rc = copy ? (memcpy(copy, p + off, h.len), read_record(ss, copy)) : -1;
			free(copy);
			if (rc)
				return -1;
		}
		off += padded;
	}
	return 0;
}

static int cmp_logical(const void *a, const void *b)
{
	const struct it_extent *x = a, *y = b;
	return x->logical < y->logical ? -1 : x->logical > y->logical;
}

int it_fs_snapshots_finish(struct it_fs_snapshots *ss)
{
	for (int k = 0; k < 2; k++) {
		struct it_ext_set *s = &ss->set[k];
		s->region = ss->have[k] ? ss->snap[k].region : ss->region;
		if (!s->region)
			s->region = IT_EXT_REGION_DEFAULT;
		if (ss->have[k]) { /* the walk's counts, as the recorder met them */
			s->dirs = ss->snap[k].dirs;
			s->vanished = ss->snap[k].vanished;
			s->unreadable = ss->snap[k].unreadable;
			s->unsupported = ss->snap[k].unsupported;
			s->not_regular = ss->snap[k].not_regular;
		}
		for (uint32_t i = 0; i < s->ndevs; i++)
			s->devs[i].region = s->region;
		for (uint32_t i = 0; i < s->nfiles; i++)
			if (s->files[i].next > 1)
				qsort(s->files[i].ext, s->files[i].next, sizeof(struct it_extent),
				      cmp_logical);
		if (it_ext_finish(s))
			return -1;
	}
	return 0;
}

void it_fs_snapshots_free(struct it_fs_snapshots *ss)
{
	it_ext_set_free(&ss->set[0]);
	it_ext_set_free(&ss->set[1]);
	memset(ss, 0, sizeof(*ss));
}
