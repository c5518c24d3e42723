/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The zone layout of the zoned devices in the device table, written into
 * the trace as IT_EV_ZONE_INFO events at record start (event.h). */
#ifndef IOTRAIL_ZONE_TABLE_H
#define IOTRAIL_ZONE_TABLE_H

#include <stddef.h>

#include "tracefile.h"

/* Returns the number of zones written, or -errno (message printed). */
long it_record_zone_table(struct it_writer *w, const struct it_device_rec *devs, size_t n,
			  uint64_t ts_ns);

#endif
