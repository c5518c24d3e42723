/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * CSV export of NVMe commands: one row per completed command, in
 * completion order (pure C, over the tracefile reader and nvme.c).
 */
#ifndef IOTRAIL_EXPORT_CSV_H
#define IOTRAIL_EXPORT_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracefile.h"

/* The header line (no newline). */
extern const char it_csv_nvme_header[];

/* Writes the header and every command of rd to out. Returns the number of
 * rows (>= 0), or -1 with a one-line reason in err. */
int64_t it_export_nvme_csv(struct it_reader *rd, FILE *out, char *err, size_t errlen);

#endif
