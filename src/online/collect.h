/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The online mode's probes, loaded and read (libbpf): for top and serve. */
#ifndef IOTRAIL_ONLINE_COLLECT_H
#define IOTRAIL_ONLINE_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "online/snapshot.h"

struct ol_collector;

/* Loads and attaches the probes (every device, or the ndevs of devs):
 * 0, or -1 with err set (what failed and why). */
int ol_collector_open(struct ol_collector **c, const uint32_t *devs, size_t ndevs,
		      char *err, size_t errlen);
/* Reads the counters since the probes were attached into s: 0, or -1
 * with errno set. */
int ol_collector_read(struct ol_collector *c, struct ol_snapshot *s);
/* "tp_btf" or "raw_tp": the hook kind the probes run on */
const char *ol_collector_hooks(const struct ol_collector *c);
/* Detaches the probes; a read after it is final. */
void ol_collector_detach(struct ol_collector *c);
void ol_collector_close(struct ol_collector *c);

/* Shared by top and serve: --dev's device into devs[*ndevs]; 0, or the
 * usage error's status after its line. */
int ol_add_dev(const char *spec, uint32_t *devs, size_t *ndevs);

#endif
