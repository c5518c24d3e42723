// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer as an analysis layer (layer.h): its SYSSIDE and
 * SYSCALLS chunks into the syscall analysis (sysan.h), which joins the
 * block trails it gets from the bus (IT_BUS_TRAIL_DONE, and the trails
 * still open, IT_BUS_BLOCK_OPEN, that say when a call has all of its
 * own). Publishes every call once summed up (IT_BUS_CALL_DONE), when
 * someone listens. Its report sections follow the
 * block layer's (report.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "layers/syscall/report.h"
#include "layers/syscall/sysan.h"
#include "tracefile.h"

struct syscall {
	struct it_sysan *s;
	const struct it_bus *bus;
	const struct it_analyzer *names; /* comm names of the block trails (from the bus) */
	uint64_t start_ns, start_realtime_ns;
	uint64_t dropped;                /* records lost (the layer's DROPS) */
	bool fed;                        /* a chunk came: on_call is set, or not */
	/* --json --events: the events are streamed as JSON into an unlinked
	 * temporary file while the pass runs (memory stays constant however
	 * many calls), then spliced into the report as "events" */
	FILE *events;
	struct it_json ej;
};

static void on_trail(const void *msg, void *ctx)
{
	const struct it_bus_trail *m = msg;
	struct syscall *y = ctx;

	y->names = m->a;
	it_sysan_trail(y->s, m->t);
}

static void on_block_open(const void *msg, void *ctx)
{
	const struct it_bus_block_open *m = msg;
	struct syscall *y = ctx;

	it_sysan_block_open(y->s, m->seen, m->open, m->nopen);
}

static void on_call(uint32_t tid, uint16_t call, uint64_t ts_enter, uint64_t ts_exit,
		    uint64_t block_ns, uint32_t block_ios, void *ctx)
{
	struct syscall *y = ctx;
	struct it_bus_call m = { .tid = tid, .call = call, .ts_enter = ts_enter, .ts_exit = ts_exit,
				 .block_ns = block_ns, .block_ios = block_ios };

	it_bus_publish(y->bus, IT_BUS_CALL_DONE, &m);
}

static void on_event(const struct it_sysan_event *v, void *ctx)
{
	struct syscall *y = ctx;

	it_report_sys_json_event(&y->ej, v);
}

/* An unlinked file under $TMPDIR (else /tmp) for the streamed events, or
 * NULL with its one-line reason on stderr. */
static FILE *events_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/iotrail-events.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "iotrail report: failed to create %s for the event list: %s; set "
			"TMPDIR to a writable directory\n", path, strerror(errno));
		return NULL;
	}
	unlink(path);
	f = fdopen(fd, "w+");
	if (!f) {
		close(fd);
		return NULL;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

static void syscall_free(void *self)
{
	struct syscall *y = self;

	if (!y)
		return;
	if (y->events)
		fclose(y->events);
	it_sysan_free(y->s);
	free(y);
}

static void *syscall_new(const struct it_pass_info *info)
{
	struct syscall *y = calloc(1, sizeof(*y));
	struct it_sysan_opts so = {
		.events = info->opts->log,
		.start_ns = info->host->start_monotonic_ns,
		/* the trails come from the block layer, when the trace has it */
		.block = info->layers & (1u << IT_LAYER_BLOCK),
	};

	if (!y)
		return NULL;
	y->bus = info->bus;
	y->start_ns = so.start_ns;
	y->start_realtime_ns = info->host->start_realtime_ns;
	so.ctx = y;
	if (info->opts->events && !info->opts->log) {
		if (!(y->events = events_file())) {
			syscall_free(y);
			return NULL;
		}
		/* the value of the report's "events" member, one level deep */
		it_json_init_value(&y->ej, y->events, info->opts->pretty, 1);
		it_json_array_start(&y->ej);
		so.on_event = on_event;
	}
	if (!(y->s = it_sysan_new(&so)) ||
	    it_bus_subscribe(info->bus, IT_BUS_TRAIL_DONE, on_trail, y) ||
	    it_bus_subscribe(info->bus, IT_BUS_BLOCK_OPEN, on_block_open, y)) {
		syscall_free(y);
		return NULL;
	}
	return y;
}

static int syscall_feed(void *self, uint16_t type, const void *p, size_t len, uint32_t count)
{
	struct syscall *y = self;

	/* the later layers subscribed when they were built: with no one to
	 * tell, the calls are not kept in file order to be handed out */
	if (!y->fed && it_bus_wanted(y->bus, IT_BUS_CALL_DONE))
		it_sysan_set_on_call(y->s, on_call);
	y->fed = true;
	switch (type) {
	case IT_CHUNK_SYSSIDE: {
		size_t off = 0, reclen;
		const void *rec;

		/* a malformed record ends its chunk: the rest cannot be framed */
		while ((rec = it_sys_side_next(p, len, &off, &reclen)))
			if (it_sysan_side(y->s, rec, reclen) && it_sysan_error(y->s))
				break;
		it_sysan_side_chunk_end(y->s);
		return it_sysan_error(y->s) ? -1 : 0;
	}
	case IT_CHUNK_SYSCALLS:
		return it_sysan_calls(y->s, p, count);
	}
	return 0;
}

static int syscall_finish(void *self, const struct it_span *span)
{
	struct syscall *y = self;

	y->dropped = span->lost;
	it_sysan_finish(y->s, span->end_ns);
	return it_sysan_error(y->s) ? -1 : 0;
}

static void syscall_text(void *self, FILE *f, const struct it_report_ctx *ctx)
{
	struct syscall *y = self;

	(void)ctx;
	it_report_sys_text(f, it_sysan_results(y->s), y->names, y->dropped);
}

static void syscall_json(void *self, struct it_json *j, const struct it_report_ctx *ctx)
{
	struct syscall *y = self;

	(void)ctx;
	it_json_kv_uint(j, "syscall_dropped", y->dropped);
	it_report_sys_json(j, it_sysan_results(y->s), y->names);
	if (!y->events)
		return;
	it_json_array_end(&y->ej);
	it_json_name(j, "events");
	if (ferror(y->events) || it_json_splice(j, y->events))
		fprintf(stderr, "iotrail report: failed to write the event list through a "
			"temporary file: %s; check the space under $TMPDIR (else /tmp)\n",
			strerror(errno ? errno : EIO));
}

static void syscall_log(void *self, FILE *f, const struct it_report_ctx *ctx)
{
	struct syscall *y = self;

	(void)ctx;
	struct it_sys_clock c = { .start_ns = y->start_ns, .start_realtime_ns = y->start_realtime_ns };

	it_report_sys_log(f, it_sysan_results(y->s), &c);
}

const struct it_sysan_results *it_layer_syscall_results(const void *state)
{
	const struct syscall *y = state;

	return it_sysan_results(y->s);
}

static const uint16_t syscall_chunks[] = { IT_CHUNK_SYSSIDE, IT_CHUNK_SYSCALLS };

const struct it_analysis_layer it_layer_syscall = {
	.name = "syscall",
	.layer = IT_LAYER_SYSCALL,
	.chunks = syscall_chunks,
	.nchunks = sizeof(syscall_chunks) / sizeof(syscall_chunks[0]),
	.event_list = "system calls",
	.new = syscall_new,
	.feed = syscall_feed,
	.finish = syscall_finish,
	.report_text = syscall_text,
	.report_json = syscall_json,
	.report_log = syscall_log,
	.free = syscall_free,
};
