// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * BLKREPORTZONE over every zoned device in the device table, in batches,
 * as IT_EV_ZONE_INFO events. Zone sizes and capacities come from the
 * device (ZNS zone capacity may be less than the zone size), and the write
 * pointers and conditions are those at record start.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/blkzoned.h>

#include "layers/block/record_zones.h"

#define BATCH 256

static long report_dev(struct it_writer *w, const struct it_device_rec *d, uint64_t ts)
{
	size_t sz = sizeof(struct blk_zone_report) + BATCH * sizeof(struct blk_zone);
	struct blk_zone_report *rep = malloc(sz);
	struct it_event ev[BATCH];
	uint64_t sector = 0;
	long nz = 0;
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/dev/%s", d->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !rep) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	while (sector < d->size_sectors) {
		memset(rep, 0, sz);
		rep->sector = sector;
		rep->nr_zones = BATCH;
		if (ioctl(fd, BLKREPORTZONE, rep)) {
			err = -errno;
			break;
		}
		if (!rep->nr_zones)
			break;
		for (uint32_t i = 0; i < rep->nr_zones; i++) {
			const struct blk_zone *z = &rep->zones[i];
			struct it_event *e = &ev[i];
			memset(e, 0, sizeof(*e));
			e->ts_ns = ts;
			e->type = IT_EV_ZONE_INFO;
			e->layer = IT_LAYER_BLOCK;
			e->dev = d->dev;
			e->pid = (uint32_t)(nz + i);
			e->sector = z->start;
			e->bytes = (uint32_t)z->len;
#ifdef BLK_ZONE_REP_CAPACITY
			e->aux = rep->flags & BLK_ZONE_REP_CAPACITY ? z->capacity : z->len;
#else
			e->aux = z->len;
#endif
			e->id = z->wp;
			e->flags = z->type | (uint32_t)z->cond << 8;
			sector = z->start + z->len;
		}
		nz += rep->nr_zones;
		err = it_writer_add_events(w, IT_LAYER_BLOCK, ev, rep->nr_zones);
		if (err)
			break;
	}
out:
	if (fd >= 0)
		close(fd);
	free(rep);
	if (err)
		fprintf(stderr, "iotrail record: warning: failed to read the zones of %s: %s; "
			"no per-zone report for it\n", path, strerror(-err));
	return err ? err : nz;
}

long it_record_zone_table(struct it_writer *w, const struct it_device_rec *devs, size_t n,
			  uint64_t ts_ns)
{
	long total = 0, r;

	for (size_t i = 0; i < n; i++) {
		if (!devs[i].zoned)
			continue;
		r = report_dev(w, &devs[i], ts_ns);
		if (r > 0)
			total += r;
	}
	return total;
}
