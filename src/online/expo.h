/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The Prometheus text exposition (version 0.0.4) of the online histograms. */
#ifndef IOTRAIL_ONLINE_EXPO_H
#define IOTRAIL_ONLINE_EXPO_H

#include <stdio.h>

#include "online/snapshot.h"

#define OL_EXPO_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef void (*ol_dev_namer)(uint32_t dev, char *buf, size_t n);

/* Writes every metric of s, counters since the probes were attached. */
void ol_expo_write(FILE *f, const struct ol_snapshot *s, ol_dev_namer name_of);

/* ns as seconds, exactly ("0.000001024", "34.359738368", "0"). */
void ol_expo_seconds(char *buf, size_t n, uint64_t ns);

#endif
