// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * What changed between two extents snapshots (snapshot.h). A file is
 * matched by its path. Its data is classified by logical offset: mapped at
 * the end but not (to a block) at the start is new, mapped at both but to
 * other blocks is moved, mapped at the start only is freed; what keeps
 * its blocks is neither. Exact extents are compared too: an appended file
 * whose last extent grew has one extent removed and one added, and its
 * new bytes are only the appended ones. New and moved data is then cut
 * into the zones (or regions) of the end snapshot's device table.
 */
#include <stdlib.h>
#include <string.h>

#include "extents/snapshot.h"

static const struct it_ext_set *sort_set; /* qsort has no context argument */

static int cmp_path(const void *a, const void *b)
{
	return strcmp(sort_set->files[*(const uint32_t *)a].path,
		      sort_set->files[*(const uint32_t *)b].path);
}

static uint32_t *by_path(const struct it_ext_set *s)
{
	uint32_t *idx = malloc((s->nfiles ? s->nfiles : 1) * sizeof(*idx));
	if (!idx)
		return NULL;
	for (uint32_t i = 0; i < s->nfiles; i++)
		idx[i] = i;
	sort_set = s;
	qsort(idx, s->nfiles, sizeof(*idx), cmp_path);
	return idx;
}

static const struct it_ext_dev *dev_of(const struct it_ext_set *s, uint32_t dev)
{
	for (uint32_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev == dev)
			return &s->devs[i];
	return NULL;
}

bool it_fs_zone_at(const struct it_ext_dev *d, uint64_t a, uint32_t *number, uint64_t *start,
		    uint64_t *len)
{
	if (!d->zoned) {
		uint64_t r = d->region ? d->region : IT_EXT_REGION_DEFAULT;
		*number = (uint32_t)(a / r);
		*start = a / r * r;
		*len = r;
		return true;
	}
	uint32_t lo = 0, hi = d->nzones;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct it_ext_zone *z = &d->zones[mid];
		if (a < z->start)
			hi = mid;
		else if (a >= z->start + z->len)
			lo = mid + 1;
		else {
			*number = z->number;
			*start = z->start;
			*len = z->len;
			return true;
		}
	}
	return false;
}

static int add_zone_bytes(struct it_fs_file_delta *f, uint32_t dev, uint32_t zone,
			  uint64_t zstart, uint64_t n)
{
	for (uint32_t i = 0; i < f->nzones; i++)
		if (f->zones[i].dev == dev && f->zones[i].zone == zone) {
			f->zones[i].bytes += n;
			return 0;
		}
	struct it_fs_zone_bytes *z = realloc(f->zones, (f->nzones + 1) * sizeof(*z));
	if (!z)
		return -1;
	f->zones = z;
	z[f->nzones++] = (struct it_fs_zone_bytes){ dev, zone, zstart, n };
	return 0;
}

/* Physical bytes [p, p + n) of the end snapshot's file: into its zones. */
static int place(struct it_fs_file_delta *f, const struct it_ext_set *end, uint32_t dev,
		 uint64_t p, uint64_t n)
{
	const struct it_ext_dev *d = dev_of(end, dev);
	while (d && n) {
		uint32_t number;
		uint64_t zstart, zlen;
		if (!it_fs_zone_at(d, p, &number, &zstart, &zlen))
			return add_zone_bytes(f, dev, IT_EXT_NO_ZONE, 0, n);
		uint64_t k = zstart + zlen - p < n ? zstart + zlen - p : n;
		if (add_zone_bytes(f, dev, number, zstart, k))
			return -1;
		p += k;
		n -= k;
	}
	return 0;
}

static bool same_extent(const struct it_extent *a, const struct it_extent *b)
{
	return a->logical == b->logical && a->physical == b->physical && a->length == b->length &&
	       a->placed == b->placed;
}

/* Extents of x (sorted by logical) not in y, exactly. */
static uint32_t not_in(const struct it_ext_file *x, const struct it_ext_file *y)
{
	uint32_t n = 0, j = 0;
	for (uint32_t i = 0; i < x->next; i++) {
		while (j < y->next && y->ext[j].logical < x->ext[i].logical)
			j++;
		bool found = false;
		for (uint32_t k = j; k < y->next && y->ext[k].logical == x->ext[i].logical; k++)
			found |= same_extent(&x->ext[i], &y->ext[k]);
		n += !found;
	}
	return n;
}

/* Walks extent e's logical range against the other snapshot's extents of
 * the file (sorted, not overlapping; *j the first that may overlap). With
 * covered_only, only whether each part is covered counts (freed data);
 * else a covered part whose block differs is moved, an uncovered one new.
 * Adds the bytes; new and moved parts go into the file's zones. */
static int classify(struct it_fs_file_delta *f, const struct it_extent *e,
		    const struct it_ext_file *other, uint32_t *j, const struct it_ext_set *end,
		    uint32_t dev, bool covered_only)
{
	uint64_t at = e->logical, stop = e->logical + e->length, moved = 0;

	while (*j < other->next && other->ext[*j].logical + other->ext[*j].length <= at)
		(*j)++;
	for (uint32_t k = *j; at < stop; k++) {
		const struct it_extent *o = k < other->next ? &other->ext[k] : NULL;
		/* covered only by an extent with a block (for new and moved);
		 * by any extent (for freed: unmapped means no extent at all) */
		uint64_t gap_end = o && o->logical < stop ? o->logical : stop;
		if (gap_end > at) { /* [at, gap_end) has no extent in other */
			if (covered_only)
				f->freed_bytes += gap_end - at;
			else {
				f->new_bytes += gap_end - at;
				if (place(f, end, dev, e->physical + (at - e->logical), gap_end - at))
					return -1;
			}
			at = gap_end;
		}
		if (!o || at >= stop)
			break;
		uint64_t to = o->logical + o->length < stop ? o->logical + o->length : stop;
		if (to <= at)
			continue;
		if (!covered_only) {
			uint64_t n = to - at, p = e->physical + (at - e->logical);
			if (!o->placed) {
				f->new_bytes += n; /* it had no block yet at the start */
				if (place(f, end, dev, p, n))
					return -1;
			} else if (o->physical - o->logical != e->physical - e->logical) {
				f->moved_bytes += n;
				moved += n;
				if (place(f, end, dev, p, n))
					return -1;
			}
		}
		at = to;
	}
	f->extents_moved += moved > 0;
	return 0;
}

static int compare_file(struct it_fs_file_delta *f, const struct it_ext_file *a,
			const struct it_ext_file *b, const struct it_ext_set *end)
{
	static const struct it_ext_file none;
	uint32_t j = 0;

	if (!a)
		a = &none;
	if (!b)
		b = &none;
	for (uint32_t i = 0; i < a->next; i++)
		if (a->ext[i].placed && a->ext[i].f2fs_seg < IT_EXT_F2FS_SEGS)
			f->seg_start[a->ext[i].f2fs_seg] += a->ext[i].length;
	for (uint32_t i = 0; i < b->next; i++)
		if (b->ext[i].placed && b->ext[i].f2fs_seg < IT_EXT_F2FS_SEGS)
			f->seg_end[b->ext[i].f2fs_seg] += b->ext[i].length;
	f->extents_added = not_in(b, a);
	f->extents_removed = not_in(a, b);
	for (uint32_t i = 0; i < b->next; i++) {
		const struct it_extent *e = &b->ext[i];
		if (!e->placed) {
			f->unplaced_end++;
			f->unplaced_bytes += e->length;
			continue;
		}
		if (classify(f, e, a, &j, end, b->dev, false))
			return -1;
	}
	j = 0;
	for (uint32_t i = 0; i < a->next; i++)
		if (a->ext[i].placed && classify(f, &a->ext[i], b, &j, end, b->dev, true))
			return -1;
	return 0;
}

static int add_file(struct it_fs_delta *d, const struct it_fs_snapshots *ss, int32_t ia,
		    int32_t ib)
{
	const struct it_ext_file *a = ia >= 0 ? &ss->set[0].files[ia] : NULL;
	const struct it_ext_file *b = ib >= 0 ? &ss->set[1].files[ib] : NULL;
	struct it_fs_file_delta *f = &d->files[d->nfiles++];

	memset(f, 0, sizeof(*f));
	f->path = b ? b->path : a->path;
	f->start = ia;
	f->end = ib;
	f->size_start = a ? a->size : 0;
	f->size_end = b ? b->size : 0;
	if (compare_file(f, a, b, &ss->set[1]))
		return -1;
	f->state = !a ? IT_FS_CREATED : !b ? IT_FS_DELETED
		 : f->extents_added || f->extents_removed || f->new_bytes || f->moved_bytes ||
		   f->freed_bytes || f->size_start != f->size_end ? IT_FS_CHANGED : IT_FS_SAME;
	d->same += f->state == IT_FS_SAME;
	d->changed += f->state == IT_FS_CHANGED;
	d->created += f->state == IT_FS_CREATED;
	d->deleted += f->state == IT_FS_DELETED;
	d->new_bytes += f->new_bytes;
	d->moved_bytes += f->moved_bytes;
	d->freed_bytes += f->freed_bytes;
	return 0;
}

int it_fs_delta_compute(const struct it_fs_snapshots *ss, struct it_fs_delta *d)
{
	const struct it_ext_set *a = &ss->set[0], *b = &ss->set[1];
	uint32_t *ia = by_path(a), *ib = by_path(b), i = 0, k = 0;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	d->files = calloc((size_t)a->nfiles + b->nfiles + 1, sizeof(*d->files));
	if (!ia || !ib || !d->files)
		goto out;
	while (i < a->nfiles || k < b->nfiles) {
		int c = i == a->nfiles ? 1 : k == b->nfiles ? -1
		      : strcmp(a->files[ia[i]].path, b->files[ib[k]].path);
		if (add_file(d, ss, c <= 0 ? (int32_t)ia[i] : -1, c >= 0 ? (int32_t)ib[k] : -1))
			goto out;
		i += c <= 0;
		k += c >= 0;
	}
	rc = 0;
out:
	free(ia);
	free(ib);
	if (rc)
		it_fs_delta_free(d);
	return rc;
}

void it_fs_delta_free(struct it_fs_delta *d)
{
	for (uint32_t i = 0; d->files && i < d->nfiles; i++)
		free(d->files[i].zones);
	free(d->files);
	memset(d, 0, sizeof(*d));
}
