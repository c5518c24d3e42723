// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail extents`' output over one it_ext_set: a text table of files and
 * one of zones (or regions), or the JSON document of doc/extents.md,
 * through the streaming writer.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <linux/blkzoned.h>
#include <linux/fiemap.h>

#include "analyze/json_writer.h"
#include "extents/extents.h"

/* files listed per zone in the text view; JSON lists them all */
#define TEXT_ZONE_FILES 4

const char *it_ext_human(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "BKMGTP";
	double d = (double)v;
	int u = 0;
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%" PRIu64 "B", v);
	else
		snprintf(buf, len, d < 10 && d != (uint64_t)d ? "%.1f%c" : "%.0f%c", d, units[u]);
	return buf;
}

static void dev_label(const struct it_ext_dev *d, char *buf, size_t len)
{
	if (d->name[0])
		snprintf(buf, len, "%s", d->name);
	else
		snprintf(buf, len, "%u:%u", major(d->dev), minor(d->dev));
}

static const struct it_ext_dev *file_dev(const struct it_ext_set *s, const struct it_ext_file *f)
{
	for (uint32_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev == f->dev)
			return &s->devs[i];
	return NULL;
}

static const char *zone_type(uint8_t t)
{
	return t == BLK_ZONE_TYPE_CONVENTIONAL ? "conventional" : t == BLK_ZONE_TYPE_SEQWRITE_REQ ?
	       "seq_write_required" : t == BLK_ZONE_TYPE_SEQWRITE_PREF ? "seq_write_preferred" :
	       "unknown";
}

static const char *zone_cond(uint8_t c)
{
	static const char *const n[] = { "not_wp", "empty", "implicit_open", "explicit_open",
					 "closed", "", "", "", "", "", "", "", "", "read_only",
					 "full", "offline" };
	return c < 16 && n[c][0] ? n[c] : "unknown";
}

static void walk_line(const struct it_ext_set *s, FILE *f)
{
	fprintf(f, "%" PRIu32 " files, %" PRIu64 " extents (%" PRIu64 " without an address yet); "
		"%" PRIu64 " directories walked; skipped: %" PRIu64 " vanished, %" PRIu64
		" unreadable, %" PRIu64 " without FIEMAP, %" PRIu64 " not regular files\n",
		s->nfiles, s->extents, s->unplaced, s->dirs, s->vanished, s->unreadable,
		s->unsupported, s->not_regular);
}

void it_ext_print_text(const struct it_ext_set *s, FILE *f)
{
	char a[16], b[16], c[16], d[16], e[16];
	uint64_t *sum = calloc(s->nfiles ? s->nfiles : 1, sizeof(*sum));

	walk_line(s, f);
	fprintf(f, "\nFiles (extent sizes; holes below the file size; frag: (runs-1)/(blocks-1))\n");
	fprintf(f, "%8s %7s %5s %6s %6s %6s %5s %7s %6s %5s  %s\n", "size", "extents", "runs",
		"min", "p50", "max", "holes", "hole", "frag", "zones", "path");
	for (uint32_t i = 0; i < s->nfiles; i++) {
		const struct it_ext_file *x = &s->files[i];
		fprintf(f, "%8s %7" PRIu32 " %5" PRIu32 " %6s %6s %6s %5" PRIu64 " %7s %6.3f %5" PRIu32
			"  %s\n", it_ext_human(x->size, a, sizeof(a)), x->next, x->runs,
			it_ext_human(x->size_min, b, sizeof(b)), it_ext_human(x->size_p50, c, sizeof(c)),
			it_ext_human(x->size_max, d, sizeof(d)), x->holes, it_ext_human(x->hole_bytes, e, sizeof(e)),
			x->fragmentation, x->nzones, x->path);
	}
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct it_ext_dev *dv = &s->devs[i];
		char name[64];
		dev_label(dv, name, sizeof(name));
		if (dv->zoned)
			fprintf(f, "\nZones of %s (%" PRIu32 " zones of %s; those with data)\n", name,
				dv->nzones, it_ext_human(dv->nzones ? dv->zones[0].len : 0, a, sizeof(a)));
		else
			fprintf(f, "\nRegions of %s (%s each; %s)\n", name, it_ext_human(dv->region, a, sizeof(a)),
				dv->why_regions ? dv->why_regions : "not a zoned device");
		fprintf(f, "%6s %10s %8s %7s %5s %6s %6s %6s %5s %7s %6s  %s\n",
			dv->zoned ? "zone" : "region", "start", "data", "extents", "files", "min", "p50",
			"max", "holes", "hole", "frag", "files (most data first)");
		for (uint32_t k = 0; k < dv->nzones; k++) {
			const struct it_ext_zone *z = &dv->zones[k];
			char f1[16], f2[16], f3[16], f4[16], f5[16], f6[16];
			if (!z->npieces)
				continue;
			fprintf(f, "%6" PRIu32 " %10s %8s %7" PRIu32 " %5" PRIu32 " %6s %6s %6s %5" PRIu64
				" %7s %6.3f ", z->number, it_ext_human(z->start, f1, sizeof(f1)),
				it_ext_human(z->bytes, f2, sizeof(f2)), z->npieces, z->nfiles,
				it_ext_human(z->size_min, f3, sizeof(f3)), it_ext_human(z->size_p50, f4, sizeof(f4)),
				it_ext_human(z->size_max, f5, sizeof(f5)), z->holes,
				it_ext_human(z->hole_bytes, f6, sizeof(f6)), z->fragmentation);
			/* the files with the most data in the zone (sum[] per file,
			 * zeroed again as each is taken) */
			struct { uint32_t file; uint64_t bytes; } top[TEXT_ZONE_FILES + 1];
			uint32_t ntop = 0;
			for (uint32_t p = 0; sum && p < z->npieces; p++)
				sum[z->pieces[p].file] += z->pieces[p].length;
			for (uint32_t p = 0; sum && p < z->npieces; p++) {
				uint32_t fi = z->pieces[p].file, at;
				if (!sum[fi])
					continue;
				if (ntop <= TEXT_ZONE_FILES)
					at = ntop++;
				else if (sum[fi] > top[TEXT_ZONE_FILES].bytes)
					at = TEXT_ZONE_FILES;
				else {
					sum[fi] = 0;
					continue;
				}
				top[at].file = fi;
				top[at].bytes = sum[fi];
				sum[fi] = 0;
				for (; at > 0 && top[at].bytes > top[at - 1].bytes; at--) {
					__typeof__(top[0]) t = top[at];
					top[at] = top[at - 1];
					top[at - 1] = t;
				}
			}
			uint32_t shown = ntop < TEXT_ZONE_FILES ? ntop : TEXT_ZONE_FILES;
			for (uint32_t t = 0; t < shown; t++)
				fprintf(f, "%s%s %s", t ? ", " : " ", s->files[top[t].file].path,
					it_ext_human(top[t].bytes, a, sizeof(a)));
			if (z->nfiles > shown)
				fprintf(f, ", and %" PRIu32 " more", z->nfiles - shown);
			fputc('\n', f);
		}
	}
	free(sum);
}

static void sizes_json(struct it_json *j, uint64_t min, uint64_t p50, uint64_t p90, uint64_t p99,
		       uint64_t max)
{
	it_json_name(j, "extent_size");
	it_json_object_start(j);
	it_json_kv_uint(j, "min", min);
	it_json_kv_uint(j, "p50", p50);
	it_json_kv_uint(j, "p90", p90);
	it_json_kv_uint(j, "p99", p99);
	it_json_kv_uint(j, "max", max);
	it_json_object_end(j);
}

static void flags_json(struct it_json *j, uint32_t fl)
{
	static const struct { uint32_t bit; const char *name; } names[] = {
		{ FIEMAP_EXTENT_LAST, "last" }, { FIEMAP_EXTENT_UNKNOWN, "unknown" },
		{ FIEMAP_EXTENT_DELALLOC, "delalloc" }, { FIEMAP_EXTENT_ENCODED, "encoded" },
		{ FIEMAP_EXTENT_DATA_ENCRYPTED, "encrypted" },
		{ FIEMAP_EXTENT_NOT_ALIGNED, "not_aligned" }, { FIEMAP_EXTENT_DATA_INLINE, "inline" },
		{ FIEMAP_EXTENT_DATA_TAIL, "tail" }, { FIEMAP_EXTENT_UNWRITTEN, "unwritten" },
		{ FIEMAP_EXTENT_MERGED, "merged" }, { FIEMAP_EXTENT_SHARED, "shared" },
	};
	it_json_name(j, "flags");
	it_json_array_start(j);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (fl & names[i].bit)
			it_json_string(j, names[i].name);
	it_json_array_end(j);
}

static void file_json(struct it_json *j, const struct it_ext_set *s, const struct it_ext_file *x)
{
	char name[64];
	const struct it_ext_dev *dv = file_dev(s, x);

	it_json_object_start(j);
	it_json_kv_string(j, "path", x->path);
	if (dv) {
		dev_label(dv, name, sizeof(name));
		it_json_kv_string(j, "dev", name);
	}
	it_json_kv_uint(j, "size", x->size);
	it_json_kv_uint(j, "block_size", x->blksize);
	it_json_kv_uint(j, "data_bytes", x->data_bytes);
	it_json_kv_uint(j, "extent_count", x->next);
	it_json_kv_uint(j, "runs", x->runs);
	sizes_json(j, x->size_min, x->size_p50, x->size_p90, x->size_p99, x->size_max);
	it_json_kv_uint(j, "holes", x->holes);
	it_json_kv_uint(j, "hole_bytes", x->hole_bytes);
	it_json_kv_double(j, "fragmentation", x->fragmentation);
	it_json_kv_uint(j, "zone_count", x->nzones);
	it_json_name(j, "extents");
	it_json_array_start(j);
	for (uint32_t k = 0; k < x->next; k++) {
		const struct it_extent *e = &x->ext[k];
		it_json_object_start(j);
		it_json_kv_uint(j, "logical", e->logical);
		it_json_kv_uint(j, "physical", e->physical);
		it_json_kv_uint(j, "length", e->length);
		if (e->zone == IT_EXT_NO_ZONE) {
			it_json_name(j, "zone");
			it_json_null(j);
		} else {
			it_json_kv_uint(j, "zone", e->zone);
			if (e->zone_last != e->zone)
				it_json_kv_uint(j, "zone_last", e->zone_last);
		}
		flags_json(j, e->flags);
		if (it_ext_f2fs_seg_name(e->f2fs_seg))
			it_json_kv_string(j, "segment_type", it_ext_f2fs_seg_name(e->f2fs_seg));
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

static void zone_json(struct it_json *j, const struct it_ext_set *s, const struct it_ext_dev *dv,
		      const struct it_ext_zone *z, uint64_t *sum, uint32_t *cnt)
{
	char name[64];

	dev_label(dv, name, sizeof(name));
	it_json_object_start(j);
	it_json_kv_string(j, "dev", name);
	it_json_kv_string(j, "kind", dv->zoned ? "zone" : "region");
	it_json_kv_uint(j, "zone", z->number);
	it_json_kv_uint(j, "start", z->start);
	it_json_kv_uint(j, "length", z->len);
	if (dv->zoned) {
		it_json_kv_uint(j, "capacity", z->capacity);
		it_json_kv_uint(j, "write_pointer", z->wp);
		it_json_kv_string(j, "type", zone_type(z->type));
		it_json_kv_string(j, "cond", zone_cond(z->cond));
	}
	it_json_kv_uint(j, "data_bytes", z->bytes);
	it_json_kv_uint(j, "extent_count", z->npieces);
	sizes_json(j, z->size_min, z->size_p50, z->size_p90, z->size_p99, z->size_max);
	it_json_kv_uint(j, "holes", z->holes);
	it_json_kv_uint(j, "hole_bytes", z->hole_bytes);
	it_json_kv_double(j, "fragmentation", z->fragmentation);
	it_json_name(j, "files");
	it_json_array_start(j);
	/* per file in the zone: its bytes and pieces, in the order of its
	 * first piece by address (sum[] and cnt[] are per file, zeroed after
	 * use) */
	for (uint32_t p = 0; p < z->npieces; p++) {
		sum[z->pieces[p].file] += z->pieces[p].length;
		cnt[z->pieces[p].file]++;
	}
	for (uint32_t p = 0; p < z->npieces; p++) {
		uint32_t fi = z->pieces[p].file;
		if (!cnt[fi])
			continue;
		it_json_object_start(j);
		it_json_kv_string(j, "path", s->files[fi].path);
		it_json_kv_uint(j, "data_bytes", sum[fi]);
		it_json_kv_uint(j, "extent_count", cnt[fi]);
		it_json_object_end(j);
		sum[fi] = cnt[fi] = 0;
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

const char *it_ext_f2fs_seg_name(uint8_t seg)
{
	static const char *const names[] = { NULL, "hot_data", "warm_data", "cold_data",
					      "hot_node", "warm_node", "cold_node" };
	return seg < sizeof(names) / sizeof(*names) ? names[seg] : NULL;
}

void it_ext_walk_json(struct it_json *j, const struct it_ext_set *s)
{
	it_json_kv_uint(j, "files", s->nfiles);
	it_json_kv_uint(j, "extents", s->extents);
	it_json_kv_uint(j, "unplaced_extents", s->unplaced);
	it_json_kv_uint(j, "directories", s->dirs);
	it_json_kv_uint(j, "vanished", s->vanished);
	it_json_kv_uint(j, "unreadable", s->unreadable);
	it_json_kv_uint(j, "unsupported", s->unsupported);
	it_json_kv_uint(j, "not_regular", s->not_regular);
}

void it_ext_print_json(const struct it_ext_set *s, FILE *f, bool pretty)
{
	struct it_json j;
	uint64_t *sum = calloc(s->nfiles ? s->nfiles : 1, sizeof(*sum));
	uint32_t *cnt = calloc(s->nfiles ? s->nfiles : 1, sizeof(*cnt));

	it_json_init(&j, f, pretty);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "version", 1);
	it_json_name(&j, "walk");
	it_json_object_start(&j);
	it_ext_walk_json(&j, s);
	it_json_object_end(&j);
	it_json_name(&j, "devices");
	it_json_array_start(&j);
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct it_ext_dev *dv = &s->devs[i];
		char name[64];
		dev_label(dv, name, sizeof(name));
		it_json_object_start(&j);
		it_json_kv_string(&j, "dev", name);
		it_json_kv_bool(&j, "zoned", dv->zoned);
		if (dv->zoned)
			it_json_kv_uint(&j, "zones", dv->nzones);
		else
			it_json_kv_uint(&j, "region_size", dv->region);
		if (dv->why_regions)
			it_json_kv_string(&j, "regions_because", dv->why_regions);
		it_json_object_end(&j);
	}
	it_json_array_end(&j);
	it_json_name(&j, "files");
	it_json_array_start(&j);
	for (uint32_t i = 0; i < s->nfiles; i++)
		file_json(&j, s, &s->files[i]);
	it_json_array_end(&j);
	it_json_name(&j, "zones");
	it_json_array_start(&j);
	for (uint32_t i = 0; sum && cnt && i < s->ndevs; i++)
		for (uint32_t k = 0; k < s->devs[i].nzones; k++)
			if (s->devs[i].zones[k].npieces)
				zone_json(&j, s, &s->devs[i], &s->devs[i].zones[k], sum, cnt);
	it_json_array_end(&j);
	it_json_object_end(&j);
	fputc('\n', f);
	free(sum);
	free(cnt);
}
