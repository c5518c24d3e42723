// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: a profiling task's parsers (src/task.c) on any bytes:
 * the task file (INI through libinih), then its predicate, sampling,
 * durations and trigger as `iotrail record` would take them, and the
 * settings written back into the trace and read again. What is accepted
 * must describe itself without harm and survive the round trip through
 * the trace's NOTE records. Seeds in corpus/task.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iotrail/trace_format.h"
#include "task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct it_task t, back;
	struct it_filter f;
	struct it_trigger trig;
	struct it_note_rec *notes;
	char text[4096], err[400], line[1024], settings[2048], *joined;
	uint64_t ns;
	struct it_sample smp;
	struct it_stats stats;
	int64_t date;
	long nn;

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* the whole input as one predicate, and as a trigger */
	if (!it_filter_parse(text, &f, NULL, err, sizeof(err)))
		(void)it_filter_match(&f, (unsigned int)size % 16, size, 0);
	(void)it_trigger_parse(text, &trig, err, sizeof(err));
	(void)it_sample_parse(text, &smp, err, sizeof(err));
	(void)it_stats_parse(text, &stats, err, sizeof(err));
	(void)it_date_parse(text, &date, err, sizeof(err));
	if (it_task_parse(text, &t, err, sizeof(err)))
		return 0;
	if (*t.filter && !it_filter_parse(t.filter, &f, NULL, err, sizeof(err)))
		(void)it_filter_match(&f, 0, 4096, 0);
	if (*t.sample && it_sample_parse(t.sample, &smp, err, sizeof(err)))
		abort(); /* the file's parser checked it */
	if (*t.stats && it_stats_parse(t.stats, &stats, err, sizeof(err)))
		abort();
	if ((*t.start && it_date_parse(t.start, &date, err, sizeof(err))) ||
	    (*t.stop && it_date_parse(t.stop, &date, err, sizeof(err))))
		abort();
	if (*t.flight && it_duration_parse(t.flight, &ns, err, sizeof(err)))
		abort();
	it_task_describe(&t, true, true, line, sizeof(line));
	/* with the kernel's counts too (epochs may be 0: no division then) */
	t.counted = (struct it_task_counted){ .ios_known = true, .calls_known = true,
					      .passed = size, .skipped = size / 2,
					      .rejected = size % 7, .epochs = size % 3 };
	it_task_describe(&t, true, true, line, sizeof(line));
	/* into the trace and back: the same settings */
	it_task_settings(&t, settings, sizeof(settings));
	nn = it_task_to_notes(settings, IT_NOTE_TASK, &notes);
	if (nn < 0)
		return 0;
	joined = it_task_from_notes(notes, (size_t)nn, IT_NOTE_TASK);
	if (*settings && (!joined || strcmp(joined, settings)))
		abort();
	if (joined && !it_task_parse(joined, &back, err, sizeof(err)) &&
	    (strcmp(back.filter, t.filter) || strcmp(back.sample, t.sample) ||
	     strcmp(back.start, t.start) || strcmp(back.stop, t.stop) ||
	     strcmp(back.stats, t.stats) || strcmp(back.on_full, t.on_full)))
		abort();
	free(joined);
	free(notes);
	return 0;
}
