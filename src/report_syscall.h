/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The syscall layer in `iotrail report`: its passes over the trace file
 * (see src/analyze/sysan.h for why there are passes). report.c creates the
 * analysis before the block pass, whose trails it collects through the
 * block analyzer's on_trail, then calls report_sys_read.
 */
#ifndef IOTRAIL_REPORT_SYSCALL_H
#define IOTRAIL_REPORT_SYSCALL_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/sysan.h"

/* The block analyzer's on_trail: hands each trail to the syscall analysis. */
void report_sys_on_trail(const struct it_trail *t, void *ctx);

/* Reads the side records, then the calls, of path into s; start/end: the
 * trace's span. dropped gets the syscall-layer losses. Returns 0, or -1
 * with a one-line reason in err. */
int report_sys_read(const char *path, struct it_sysan *s, uint64_t start_ns, uint64_t end_ns,
		    uint64_t *dropped, char *err, size_t errlen);

#endif
