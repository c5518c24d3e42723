/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Per-zone activity of zoned block devices: the zone layout comes from the
 * IT_EV_ZONE_INFO side table that record writes at start (BLKREPORTZONE);
 * completed block trails are counted on the zone of their first sector:
 * reads, writes, zone appends (counts and bytes), and resets, finishes,
 * opens, closes (counts and Q2C latency). The block analyzer runs it when
 * the stream has a zone table (it_analyzer_zones).
 */
#ifndef IOTRAIL_ANALYZE_ZONES_H
#define IOTRAIL_ANALYZE_ZONES_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/analyzer.h"
#include "analyze/hist.h"

enum { IT_ZM_RESET, IT_ZM_FINISH, IT_ZM_OPEN, IT_ZM_CLOSE, IT_ZM_MAX };
extern const char *const it_zm_names[IT_ZM_MAX]; /* "reset", "finish", "open", "close" */

struct it_zone {
	uint64_t start, len, capacity;  /* 512-byte sectors */
	uint64_t wp_start;              /* write pointer at record start */
	uint8_t type, cond_start;       /* BLK_ZONE_TYPE_*, BLK_ZONE_COND_* at start */
	uint64_t reads, read_bytes, writes, write_bytes, appends, append_bytes;
	uint64_t errors;
	struct it_hist mgmt[IT_ZM_MAX]; /* count and latency (Q2C, ns) */
};

struct it_zone_dev {
	uint32_t dev;
	struct it_zone *zones;
	uint32_t nzones;
	uint64_t reset_all;             /* REQ_OP_ZONE_RESET_ALL */
	uint64_t outside;               /* I/Os beyond the zone table */
};

struct it_zones {
	struct it_zone_dev *devs;
	uint32_t ndevs;
	int err;
};

void it_zones_info(struct it_zones *z, const struct it_event *e);
void it_zones_trail(struct it_zones *z, const struct it_trail *t);
void it_zones_free(struct it_zones *z);
/* The zone of dev holding sector, numbered over all the table's devices
 * from 1 (so a zone of one device is never another's); 0: none (z NULL,
 * not a zoned device, or beyond its zones). */
uint32_t it_zones_id(const struct it_zones *z, uint32_t dev, uint64_t sector);

/* The block analyzer's zones (NULL without a zone table in the stream). */
struct it_analyzer;
const struct it_zones *it_analyzer_zones(const struct it_analyzer *a);

struct it_json;
struct it_report_input;
void it_zones_report_json(struct it_json *j, const struct it_report_input *in);
void it_zones_report_text(FILE *f, const struct it_report_input *in);

#endif
