/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Printers of the syscall layer's results (text, event list, JSON). */
#ifndef IOTRAIL_ANALYZE_REPORT_SYS_H
#define IOTRAIL_ANALYZE_REPORT_SYS_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/json_writer.h"
#include "layers/syscall/sysan.h"

/* Per call, block ownership, files, threads over time; a: comm names of
 * the block trails (may be NULL). */
/* lost: the records the recorder could not take (the trace's count) */
void it_report_sys_text(FILE *f, const struct it_sysan_results *r, const struct it_analyzer *a,
			uint64_t lost);
/* The trace's clock: its start, monotonic and (0: not recorded) wall. */
struct it_sys_clock {
	uint64_t start_ns, start_realtime_ns;
};
/* The event list, one call a line, at wall-clock times (microseconds). */
void it_report_sys_log(FILE *f, const struct it_sysan_results *r, const struct it_sys_clock *c);
/* The syscall members of the report object (after its other members). */
void it_report_sys_json(struct it_json *j, const struct it_sysan_results *r,
			const struct it_analyzer *a);
/* One event of "events" (--json --events). */
void it_report_sys_json_event(struct it_json *j, const struct it_sysan_event *v);

#endif
