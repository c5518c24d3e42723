// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Per-zone counters (see zones.h). */
#include <stdlib.h>
#include <string.h>

#include "analyze/internal.h"
#include "analyze/zones.h"

const char *const it_zm_names[IT_ZM_MAX] = { "reset", "finish", "open", "close" };

static struct it_zone_dev *dev_of(struct it_zones *z, uint32_t dev, bool add)
{
	for (uint32_t i = 0; i < z->ndevs; i++)
		if (z->devs[i].dev == dev)
			return &z->devs[i];
	if (!add)
		return NULL;
	struct it_zone_dev *d = realloc(z->devs, (z->ndevs + 1) * sizeof(*d));
	if (!d) {
		z->err = -1;
		return NULL;
	}
	z->devs = d;
	d = &z->devs[z->ndevs++];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	return d;
}

void it_zones_info(struct it_zones *z, const struct it_event *e)
{
	struct it_zone_dev *d = dev_of(z, e->dev, true);
	uint32_t idx = e->pid;

	if (!d || idx > (1u << 24)) /* 16M zones: a damaged record, not a device */
		return;
	if (idx >= d->nzones) {
		struct it_zone *zs = realloc(d->zones, (size_t)(idx + 1) * sizeof(*zs));
		if (!zs) {
			z->err = -1;
			return;
		}
		memset(zs + d->nzones, 0, (idx + 1 - d->nzones) * sizeof(*zs));
		for (uint32_t k = d->nzones; k <= idx; k++)
			for (int m = 0; m < IT_ZM_MAX; m++)
				it_hist_init(&zs[k].mgmt[m]);
		d->zones = zs;
		d->nzones = idx + 1;
	}
	struct it_zone *zn = &d->zones[idx];
	zn->start = e->sector;
	zn->len = e->bytes;
	zn->capacity = e->aux;
	zn->wp_start = e->id;
	zn->type = e->flags & 0xff;
	zn->cond_start = (e->flags >> 8) & 0xff;
}

/* The zone holding sector: zones are sorted and (except maybe the last)
 * equal-sized, so try the division first, then bisect. */
static struct it_zone *zone_of(struct it_zone_dev *d, uint64_t sector)
{
	uint32_t lo = 0, hi = d->nzones;

	if (!d->nzones)
		return NULL;
	if (d->zones[0].len) {
		uint64_t k = (sector - d->zones[0].start) / d->zones[0].len;
		if (sector >= d->zones[0].start && k < d->nzones && d->zones[k].start <= sector &&
		    sector < d->zones[k].start + d->zones[k].len)
			return &d->zones[k];
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct it_zone *zn = &d->zones[mid];
		if (sector < zn->start)
			hi = mid;
		else if (sector >= zn->start + zn->len)
			lo = mid + 1;
		else
			return zn;
	}
	return NULL;
}

void it_zones_trail(struct it_zones *z, const struct it_trail *t)
{
	struct it_zone_dev *d = dev_of(z, t->dev, false);
	struct it_zone *zn;
	int m = -1;

	if (!d)
		return;
	if (t->op == IT_OP_ZONE_RESET_ALL) {
		d->reset_all++;
		return;
	}
	zn = zone_of(d, t->sector);
	if (!zn) {
		d->outside++;
		return;
	}
	zn->errors += t->error != 0;
	switch (t->op) {
	case IT_OP_READ:
		zn->reads++;
		zn->read_bytes += t->bytes;
		return;
	case IT_OP_WRITE:
		zn->writes++;
		zn->write_bytes += t->bytes;
		return;
	case IT_OP_ZONE_APPEND:
		zn->appends++;
		zn->append_bytes += t->bytes;
		return;
	case IT_OP_ZONE_RESET: m = IT_ZM_RESET; break;
	case IT_OP_ZONE_FINISH: m = IT_ZM_FINISH; break;
	case IT_OP_ZONE_OPEN: m = IT_ZM_OPEN; break;
	case IT_OP_ZONE_CLOSE: m = IT_ZM_CLOSE; break;
	default:
		return;
	}
	int64_t lat = it_stage_time(t, IT_STAGE_Q2C);
	if (it_hist_add(&zn->mgmt[m], lat > 0 ? (uint64_t)lat : 0))
		z->err = -1;
}

uint32_t it_zones_id(const struct it_zones *z, uint32_t dev, uint64_t sector)
{
	uint32_t before = 0;

	for (uint32_t i = 0; z && i < z->ndevs; i++) {
		struct it_zone_dev *d = &z->devs[i];
		struct it_zone *zn;

		if (d->dev != dev) {
			before += d->nzones;
			continue;
		}
		zn = zone_of(d, sector);
		return zn ? before + (uint32_t)(zn - d->zones) + 1 : 0;
	}
	return 0;
}

void it_zones_free(struct it_zones *z)
{
	if (!z)
		return;
	for (uint32_t i = 0; i < z->ndevs; i++) {
		for (uint32_t k = 0; k < z->devs[i].nzones; k++)
			for (int m = 0; m < IT_ZM_MAX; m++)
				it_hist_free(&z->devs[i].zones[k].mgmt[m]);
		free(z->devs[i].zones);
	}
	free(z->devs);
	free(z);
}

/* ---- in the block analyzer ---- */

void it_zones_link_info(struct it_analyzer *a, const struct it_event *e)
{
	if (!a->zones && !(a->zones = calloc(1, sizeof(*a->zones)))) {
		a->err = -1;
		return;
	}
	it_zones_info(a->zones, e);
	if (a->zones->err)
		a->err = -1;
}

const struct it_zones *it_analyzer_zones(const struct it_analyzer *a)
{
	return a->zones;
}
