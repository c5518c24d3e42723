// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The extents model: files and their extents in, zones (or regions) with
 * the pieces of extents in them out, and the statistics of both. Pure C:
 * the walk (fiemap.c) and the unit tests feed it the same way.
 *
 * An extent that crosses a zone boundary is one extent of its file (as
 * FIEMAP and filefrag list it) but a piece in each zone it touches, so a
 * zone's bytes are exactly the data inside it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extents/extents.h"

long it_ext_add_file(struct it_ext_set *s, const char *path, uint64_t size, uint32_t dev,
		     uint32_t blksize, struct it_extent *ext, uint32_t next)
{
	if (s->nfiles == s->cap_files) {
		uint32_t cap = s->cap_files ? s->cap_files * 2 : 256;
		struct it_ext_file *f = realloc(s->files, cap * sizeof(*f));
		if (!f)
			return -1;
		s->files = f;
		s->cap_files = cap;
	}
	struct it_ext_file *f = &s->files[s->nfiles];
	memset(f, 0, sizeof(*f));
	if (!(f->path = strdup(path)))
		return -1;
	f->size = size;
	f->dev = dev;
	f->blksize = blksize ? blksize : 4096;
	f->ext = ext;
	f->next = next;
	s->extents += next;
	return s->nfiles++;
}

struct it_ext_dev *it_ext_dev_get(struct it_ext_set *s, uint32_t dev)
{
	for (uint32_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev == dev)
			return &s->devs[i];
	struct it_ext_dev *d = realloc(s->devs, (s->ndevs + 1) * sizeof(*d));
	if (!d)
		return NULL;
	s->devs = d;
	d = &s->devs[s->ndevs++];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	d->region = s->region ? s->region : IT_EXT_REGION_DEFAULT;
	return d;
}

void it_ext_dev_set_zones(struct it_ext_dev *d, struct it_ext_zone *zones, uint32_t n)
{
	free(d->zones);
	d->zones = zones;
	d->nzones = n;
	d->zoned = true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct it_ext_piece *x = a, *y = b;
	return x->physical < y->physical ? -1 : x->physical > y->physical;
}

/* nearest rank of sorted v[n] */
static uint64_t pct(const uint64_t *v, size_t n, double p)
{
	size_t r = (size_t)(p / 100.0 * (double)n + 0.999999);
	return n ? v[r ? r - 1 : 0] : 0;
}

/* min, p50, p90, p99, max of v[n] (sorted in place) into out[5] */
static void sizes(uint64_t *v, size_t n, uint64_t out[5])
{
	qsort(v, n, sizeof(*v), cmp_u64);
	out[0] = n ? v[0] : 0;
	out[1] = pct(v, n, 50);
	out[2] = pct(v, n, 90);
	out[3] = pct(v, n, 99);
	out[4] = n ? v[n - 1] : 0;
}

/* The regions of an unzoned device that hold data: one zone entry each,
 * sorted by start (a table of every region of a large disk would be
 * mostly empty). */
static int make_regions(struct it_ext_set *s, struct it_ext_dev *d)
{
	uint32_t *idx = NULL, n = 0, cap = 0;

	for (uint32_t i = 0; i < s->nfiles; i++) {
		const struct it_ext_file *f = &s->files[i];
		if (f->dev != d->dev)
			continue;
		for (uint32_t k = 0; k < f->next; k++) {
			const struct it_extent *e = &f->ext[k];
			if (!e->placed || !e->length)
				continue;
			uint64_t first = e->physical / d->region;
			uint64_t last = (e->physical + e->length - 1) / d->region;
			for (uint64_t r = first; r <= last && r < UINT32_MAX; r++) {
				if (n && idx[n - 1] == r)
					continue;
				if (n == cap) {
					uint32_t *p = realloc(idx, (cap = cap ? cap * 2 : 64) * sizeof(*p));
					if (!p) {
						free(idx);
						return -1;
					}
					idx = p;
				}
				idx[n++] = (uint32_t)r;
			}
		}
	}
	if (n)
		qsort(idx, n, sizeof(*idx), cmp_u32);
	uint32_t u = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!u || idx[u - 1] != idx[i])
			idx[u++] = idx[i];
	struct it_ext_zone *z = calloc(u ? u : 1, sizeof(*z));
	if (!z) {
		free(idx);
		return -1;
	}
	for (uint32_t i = 0; i < u; i++) {
		z[i].number = idx[i];
		z[i].start = (uint64_t)idx[i] * d->region;
		z[i].len = z[i].capacity = d->region;
	}
	free(idx);
	free(d->zones);
	d->zones = z;
	d->nzones = u;
	return 0;
}

/* the zone holding byte a, or NULL */
static struct it_ext_zone *zone_of(struct it_ext_dev *d, uint64_t a)
{
	uint32_t lo = 0, hi = d->nzones;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct it_ext_zone *z = &d->zones[mid];
		if (a < z->start)
			hi = mid;
		else if (a >= z->start + z->len)
			lo = mid + 1;
		else
			return z;
	}
	return NULL;
}

static int add_piece(struct it_ext_zone *z, uint64_t physical, uint64_t length, uint32_t file)
{
	if (z->npieces == z->cap_pieces) {
		uint32_t cap = z->cap_pieces ? z->cap_pieces * 2 : 8;
		struct it_ext_piece *p = realloc(z->pieces, cap * sizeof(*p));
		if (!p)
			return -1;
		z->pieces = p;
		z->cap_pieces = cap;
	}
	z->pieces[z->npieces++] = (struct it_ext_piece){ physical, length, file };
	return 0;
}

/* Cuts each placed extent of file fi into the zones it touches. */
static int map_file(struct it_ext_set *s, uint32_t fi)
{
	struct it_ext_file *f = &s->files[fi];
	struct it_ext_dev *d = it_ext_dev_get(s, f->dev);
	if (!d)
		return -1;
	for (uint32_t k = 0; k < f->next; k++) {
		struct it_extent *e = &f->ext[k];
		e->zone = e->zone_last = IT_EXT_NO_ZONE;
		if (!e->placed) {
			s->unplaced++;
			continue;
		}
		uint64_t a = e->physical, end = e->physical + e->length;
		while (a < end) {
			struct it_ext_zone *z = zone_of(d, a);
			if (!z)
				break; /* beyond the zone table: the rest has no zone */
			uint64_t zend = z->start + z->len, n = (end < zend ? end : zend) - a;
			if (e->zone == IT_EXT_NO_ZONE)
				e->zone = z->number;
			e->zone_last = z->number;
			if (add_piece(z, a, n, fi))
				return -1;
			a += n;
		}
	}
	return 0;
}

static int file_stats(struct it_ext_file *f)
{
	uint64_t *len = malloc((f->next ? f->next : 1) * sizeof(*len)), out[5];
	uint64_t lend = 0, pend = 0;
	bool have_prev = false;

	if (!len)
		return -1;
	f->runs = 0;
	for (uint32_t k = 0; k < f->next; k++) {
		const struct it_extent *e = &f->ext[k];
		len[k] = e->length;
		f->data_bytes += e->length;
		if (e->logical > lend) {
			f->holes++;
			f->hole_bytes += e->logical - lend;
		}
		if (e->logical + e->length > lend)
			lend = e->logical + e->length;
		if (!e->placed)
			continue;
		/* a new run unless it goes on where the one before ended */
		if (!have_prev || e->physical != pend)
			f->runs++;
		pend = e->physical + e->length;
		have_prev = true;
	}
	if (f->size > lend) { /* a hole at the end: only whole blocks count */
		uint64_t tail = f->size - lend;
		if (tail >= f->blksize) {
			f->holes++;
			f->hole_bytes += tail / f->blksize * f->blksize;
		}
	}
	uint64_t blocks = f->data_bytes / f->blksize;
	f->fragmentation = blocks > 1 && f->runs > 1 ? (double)(f->runs - 1) / (double)(blocks - 1) : 0;
	sizes(len, f->next, out);
	f->size_min = out[0], f->size_p50 = out[1], f->size_p90 = out[2];
	f->size_p99 = out[3], f->size_max = out[4];
	free(len);
	return 0;
}

/* zone statistics; seen[] holds per file the last zone stamp that counted it */
static int zone_stats(struct it_ext_set *s, struct it_ext_zone *z, uint64_t *seen, uint64_t stamp)
{
	uint64_t *len = malloc((z->npieces ? z->npieces : 1) * sizeof(*len)), out[5];
	uint64_t at = z->start;

	if (!len)
		return -1;
	if (z->npieces > 1) /* pieces is NULL in a zone without data */
		qsort(z->pieces, z->npieces, sizeof(*z->pieces), cmp_piece);
	for (uint32_t i = 0; i < z->npieces; i++) {
		const struct it_ext_piece *p = &z->pieces[i];
		len[i] = p->length;
		z->bytes += p->length;
		if (p->physical > at) {
			z->holes++;
			z->hole_bytes += p->physical - at;
		}
		if (p->physical + p->length > at)
			at = p->physical + p->length;
		if (seen[p->file] != stamp) {
			seen[p->file] = stamp;
			z->nfiles++;
			s->files[p->file].nzones++;
		}
	}
	z->fragmentation = at > z->start ? (double)z->hole_bytes / (double)(at - z->start) : 0;
	sizes(len, z->npieces, out);
	z->size_min = out[0], z->size_p50 = out[1], z->size_p90 = out[2];
	z->size_p99 = out[3], z->size_max = out[4];
	free(len);
	return 0;
}

int it_ext_finish(struct it_ext_set *s)
{
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (!it_ext_dev_get(s, s->files[i].dev))
			return -1;
	for (uint32_t i = 0; i < s->ndevs; i++)
		if (!s->devs[i].zoned && make_regions(s, &s->devs[i]))
			return -1;
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (map_file(s, i) || file_stats(&s->files[i]))
			return -1;
	uint64_t *seen = calloc(s->nfiles ? s->nfiles : 1, sizeof(*seen)), stamp = 0;
	if (!seen)
		return -1;
	for (uint32_t i = 0; i < s->ndevs; i++)
		for (uint32_t k = 0; k < s->devs[i].nzones; k++)
			if (zone_stats(s, &s->devs[i].zones[k], seen, ++stamp)) {
				free(seen);
				return -1;
			}
	free(seen);
	return 0;
}

void it_ext_set_free(struct it_ext_set *s)
{
	for (uint32_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].ext);
	}
	for (uint32_t i = 0; i < s->ndevs; i++) {
		for (uint32_t k = 0; k < s->devs[i].nzones; k++)
			free(s->devs[i].zones[k].pieces);
		free(s->devs[i].zones);
		free(s->devs[i].why_regions);
	}
	free(s->files);
	free(s->devs);
	memset(s, 0, sizeof(*s));
}

uint64_t it_ext_parse_size(const char *str)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(str, &end, 10);
	if (errno || end == str || str[0] == '-')
		return 0;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)
		end++;
	if ((*end == 'B' || *end == 'b') && end[1] == 0)
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return 0;
	return (uint64_t)v << shift;
}
