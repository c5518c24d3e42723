/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail record`'s task options: --task FILE, --filter, --sample, and the
 * task file's other keys resolved against the command line (which wins);
 * the result goes into the scope (scope.h) and into the trace's head.
 */
#ifndef IOTRAIL_RECORD_TASK_H
#define IOTRAIL_RECORD_TASK_H

#include <stdbool.h>

#include "scope.h"
#include "task.h"

struct it_writer;

struct it_record_task {
	/* as given on the command line (NULL: not given) */
	const char *path, *filter_arg, *sample_arg, *flight_arg, *trigger_arg, *memory_arg;
	const char *start_arg, *stop_arg, *on_full_arg;
	/* resolved */
	struct it_task task;       /* what holds: the file's keys, then the command line's */
	char *file_text;           /* the task file as read; NULL without --task */
	struct it_filter filter;
	struct it_sample sample;
	int64_t start_s, stop_s;   /* --start, --stop (seconds since the epoch); 0: none */
	uint64_t flight_ns;        /* --flight: the window; 0: a whole recording */
	uint64_t flight_mem;       /* --flight-memory: its bound in bytes */
	struct it_trigger trigger; /* --trigger */
	bool write_out;            /* --on-full write-out: every event to the file */
};

#define IT_FLIGHT_MEM_DEFAULT (256ull << 20)
/* --memory SIZE --on-full overwrite without --flight: the ring keeps the
 * newest events that fit, of any age (a window of 31 years) */
#define IT_FLIGHT_ANY_AGE_NS 1000000000000000000ull

/* Reads the task file, overlays the command line, parses the predicate
 * and sampling into sc. *output and *duration_s take the file's values
 * when the command line left them unset (output_set, duration 0). 0, or
 * -1 after printing one line. */
int it_record_task_resolve(struct it_record_task *rt, struct it_scope *sc, const char **output,
			   bool output_set, double *duration_s);

/* The task's settings and text into the trace's head (NOTE records).
 * Nothing without a task. 0 or -errno. */
int it_record_task_store(struct it_writer *w, const struct it_record_task *rt);

void it_record_task_free(struct it_record_task *rt);

#endif
