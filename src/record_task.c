// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail record --task FILE`, `--filter`, `--sample` (record_task.h).
 * The file is read whole (a task is a few lines; 64 KiB at most) so that
 * its text goes into the trace as given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "hostinfo.h"
#include "iotrail/trace_format.h"
#include "record_task.h"
#include "tracefile.h"

#define TASK_MAX_BYTES (64 << 10)

static char *read_text(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	text = malloc(TASK_MAX_BYTES + 1);
	n = text ? fread(text, 1, TASK_MAX_BYTES + 1, f) : 0;
	if (text && (ferror(f) || n > TASK_MAX_BYTES || memchr(text, 0, n))) {
		snprintf(err, errlen, ferror(f) ? "cannot read it" : n > TASK_MAX_BYTES ?
			 "longer than 64 KiB" : "not a text file");
		free(text);
		text = NULL;
	} else if (text) {
		text[n] = 0;
	} else {
		snprintf(err, errlen, "out of memory");
	}
	fclose(f);
	return text;
}

/* A process term of the filter into the scope; its option wins when both
 * are given and differ. */
static int fold_process_terms(struct it_record_task *rt, struct it_scope *sc)
{
	const struct it_filter *f = &rt->filter;
	char err[160], pid[16];

	for (size_t i = 0; i < f->npids; i++) {
		snprintf(pid, sizeof(pid), "%d", (int)f->pids[i]);
		if (it_scope_add_pids(pid, &sc->pids, &sc->npids, err, sizeof(err)))
			return it_fail(-1, "apply the filter's pid", err, NULL);
	}
	if (*f->comm && sc->comm && strcmp(sc->comm, f->comm))
		return it_failf(-1, "failed to apply the filter's comm=%s: --comm %s says otherwise; "
				"give one of them", f->comm, sc->comm);
	if (*f->comm)
		sc->comm = f->comm;
	return 0;
}

/* --start and --stop: dates to come, stop after start. 0, or -1 after
 * one line. */
static int resolve_window(struct it_record_task *rt)
{
	const struct it_task *t = &rt->task;
	int64_t now = (int64_t)time(NULL);
	char err[200];

	if (*t->start && it_date_parse(t->start, &rt->start_s, err, sizeof(err)))
		return it_failf(-1, "failed to parse --start: %s", err);
	if (*t->stop && it_date_parse(t->stop, &rt->stop_s, err, sizeof(err)))
		return it_failf(-1, "failed to parse --stop: %s", err);
	if (*t->start && rt->start_s <= now)
		return it_failf(-1, "failed to apply --start %s: it is past (the time is %lld s "
				"later); give a date to come, or leave --start out to start now",
				t->start, (long long)(now - rt->start_s));
	if (*t->stop && rt->stop_s <= now)
		return it_failf(-1, "failed to apply --stop %s: it is past; give a date to come",
				t->stop);
	if (*t->start && *t->stop && rt->stop_s <= rt->start_s)
		return it_failf(-1, "failed to apply --stop %s: it is not after --start %s; give a "
				"later stop", t->stop, t->start);
	return 0;
}

/* --memory with --on-full: overwrite keeps the newest events in the
 * flight recorder's ring (a window of any age without --flight);
 * write-out writes every event to the file, as a recording does without
 * --memory, so nothing is overwritten. 0, or -1 after one line. */
static int resolve_on_full(struct it_record_task *rt)
{
	const struct it_task *t = &rt->task;

	if (*t->on_full && strcmp(t->on_full, "overwrite") && strcmp(t->on_full, "write-out"))
		return it_failf(-1, "failed to parse --on-full %s: give overwrite (keep the newest "
				"events in --memory) or write-out (every event to the file)",
				t->on_full);
	if (*t->on_full && !*t->memory)
		return it_failf(-1, "failed to apply --on-full: it says what happens when --memory "
				"is full; give --memory 256m");
	rt->write_out = !strcmp(t->on_full, "write-out");
	if (rt->write_out && rt->flight_ns)
		return it_failf(-1, "failed to apply --on-full write-out with --flight: the flight "
				"recorder keeps only its window in memory, write-out keeps every "
				"event; give one of them");
	if (*t->memory && !rt->write_out && !rt->flight_ns)
		rt->flight_ns = IT_FLIGHT_ANY_AGE_NS;
	return 0;
}

int it_record_task_resolve(struct it_record_task *rt, struct it_scope *sc, const char **output,
			   bool output_set, double *duration_s)
{
	struct it_task *t = &rt->task;
	char err[320];
	uint64_t ns;

	memset(t, 0, sizeof(*t));
	if (rt->path) {
		rt->file_text = read_text(rt->path, err, sizeof(err));
		if (!rt->file_text)
			return it_failf(-1, "failed to read the task file %s: %s; give an INI file "
					"with [workload], [profiler], [report]", rt->path, err);
		if (it_task_parse(rt->file_text, t, err, sizeof(err)))
			return it_failf(-1, "failed to parse the task file %s: %s", rt->path, err);
	}
	/* the command line wins */
	if (rt->filter_arg)
		snprintf(t->filter, sizeof(t->filter), "%s", rt->filter_arg);
	if (rt->sample_arg)
		snprintf(t->sample, sizeof(t->sample), "%s", rt->sample_arg);
	if (rt->flight_arg)
		snprintf(t->flight, sizeof(t->flight), "%s", rt->flight_arg);
	if (rt->trigger_arg)
		snprintf(t->trigger, sizeof(t->trigger), "%s", rt->trigger_arg);
	if (rt->memory_arg)
		snprintf(t->memory, sizeof(t->memory), "%s", rt->memory_arg);
	if (rt->start_arg)
		snprintf(t->start, sizeof(t->start), "%s", rt->start_arg);
	if (rt->stop_arg)
		snprintf(t->stop, sizeof(t->stop), "%s", rt->stop_arg);
	if (rt->on_full_arg)
		snprintf(t->on_full, sizeof(t->on_full), "%s", rt->on_full_arg);
	if (*t->filter &&
	    it_filter_parse(t->filter, &rt->filter, it_dev_resolve, err, sizeof(err)))
		return it_failf(-1, "failed to parse %s: %s", rt->filter_arg ? "--filter" :
				"the task file's [workload]", err);
	if (*t->sample && it_sample_parse(t->sample, &rt->sample, err, sizeof(err)))
		return it_failf(-1, "failed to parse --sample: %s", err);
	if (resolve_window(rt))
		return -1;
	if (*t->output && !output_set)
		*output = t->output;
	if (*t->duration && !*duration_s && !it_duration_parse(t->duration, &ns, err, sizeof(err)))
		*duration_s = (double)ns / 1e9;
	if (*t->flight && it_duration_parse(t->flight, &rt->flight_ns, err, sizeof(err)))
		return it_failf(-1, "failed to parse --flight: %s", err);
	if (*t->trigger && it_trigger_parse(t->trigger, &rt->trigger, err, sizeof(err)))
		return it_failf(-1, "failed to parse --trigger: %s", err);
	rt->flight_mem = IT_FLIGHT_MEM_DEFAULT;
	if (*t->memory && (it_size_parse(t->memory, &rt->flight_mem, err, sizeof(err)) ||
			   rt->flight_mem < (64u << 10)))
		return it_failf(-1, "failed to parse --memory %s: give a size of 64k or more "
				"(e.g. 64m)", t->memory);
	if (resolve_on_full(rt))
		return -1;
	if (*t->trigger && !rt->flight_ns)
		return it_failf(-1, "failed to apply --trigger: it goes with --flight; give --flight "
				"30s");
	sc->filter = &rt->filter;
	sc->sample_n = rt->sample.one_in;
	sc->sample_epoch_n = rt->sample.per_epoch;
	sc->sample_epoch_ns = rt->sample.epoch_ns;
	return fold_process_terms(rt, sc);
}

static int store(struct it_writer *w, const char *text, uint16_t kind)
{
	struct it_note_rec *notes;
	long n = it_task_to_notes(text, kind, &notes);
	int rc = n < 0 ? -ENOMEM : 0;

	for (long i = 0; !rc && i < n; i++)
		rc = it_writer_add_note(w, &notes[i]);
	free(n < 0 ? NULL : notes);
	return rc;
}

int it_record_task_store(struct it_writer *w, const struct it_record_task *rt)
{
	char settings[1024];
	int rc;

	it_task_settings(&rt->task, settings, sizeof(settings));
	rc = *settings ? store(w, settings, IT_NOTE_TASK) : 0;
	if (!rc && rt->file_text && *rt->file_text)
		rc = store(w, rt->file_text, IT_NOTE_TASK_FILE);
	return rc;
}

void it_record_task_free(struct it_record_task *rt)
{
	free(rt->file_text);
	rt->file_text = NULL;
}
