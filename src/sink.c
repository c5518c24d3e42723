// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail record --sink clickhouse://HOST[:PORT][/DB]`: the recording
 * goes into ClickHouse as it is recorded, through the same exporter as
 * `iotrail export --format clickhouse` (src/export/clickhouse.c), fed by
 * the same analysis layers, so its rows are those a later export of the
 * file would send.
 *
 * The sink follows the trace file as the recorder writes it (a follower
 * reader, tracefile.h), in a thread of its own: the file is the queue
 * between the two. The recorder's hot path does not change, a slow
 * server makes the sink lag behind, never the recording, and a server
 * that fails costs the recording nothing: the file is written whole in
 * every case (it is the reference: what the sink could not insert, an
 * export of the file can). Rows go out in the exporter's batches, and
 * whenever the sink has caught up with the file, at most once a
 * SEND_EVERY_NS, so they reach the server about a second after the
 * recorder wrote them (with --sink, record writes its buffers to the
 * file every second).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/layer.h"
#include "cli.h"
#include "export/clickhouse.h"
#include "export/exporter.h"
#include "http.h"
#include "sink.h"
#include "tracefile.h"

#define SEND_EVERY_NS 1000000000ull
#define WAIT_NS 50000000L /* between looks at a file that did not grow */

extern const struct it_exporter it_export_clickhouse;

struct it_sink {
	char url[300], database[80], path[4096];
	struct it_http *http;
	struct it_export_url u;
	struct it_layer_opts opts;
	struct it_pass_info info;
	struct it_reader *rd;
	struct it_analysis *an;
	void *x;                   /* the exporter's state */
	pthread_t thread;
	atomic_bool writer_done;   /* the recorder closed the file, or gave it up */
	bool looked_after_done;
	bool failure_said;
	uint64_t last_send_ns;
	int pass_rc;               /* it_analysis_run's */
	char pass_err[256];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int it_sink_parse(const char *spec, char *url, size_t urllen, char *db, size_t dblen, char *err,
		  size_t errlen)
{
	static const char scheme[] = "clickhouse://";
	const char *host = spec + sizeof(scheme) - 1, *slash, *colon;
	size_t hostlen;

	if (strncmp(spec, scheme, sizeof(scheme) - 1)) {
		snprintf(err, errlen, "'%.100s' is not a clickhouse:// address", spec);
		return -1;
	}
	slash = strchr(host, '/');
	hostlen = slash ? (size_t)(slash - host) : strlen(host);
	colon = memchr(host, ':', hostlen);
	if (!hostlen || colon == host || hostlen > 200) {
		snprintf(err, errlen, "'%.100s' names no server", spec);
		return -1;
	}
	if (colon) {
		char *end;
		long port = strtol(colon + 1, &end, 10);

		if (end != host + hostlen || port < 1 || port > 65535) {
			snprintf(err, errlen, "'%.*s' is not a port", (int)(hostlen - (size_t)(colon + 1 - host)),
				 colon + 1);
			return -1;
		}
	}
	snprintf(url, urllen, "http://%.*s%s", (int)hostlen, host, colon ? "" : ":8123");
	snprintf(db, dblen, "%s", slash && slash[1] ? slash + 1 : "iotrail");
	if (!it_clickhouse_name_ok(db)) {
		snprintf(err, errlen, "the database '%.64s' is not a plain name (letters, digits, _)",
			 db);
		return -1;
	}
	return 0;
}

/* The one line of a sink that stopped sending, when it stops. */
static void say_failure(struct it_sink *s)
{
	const char *why = it_export_clickhouse.error(s->x);

	if (s->failure_said || !why)
		return;
	s->failure_said = true;
	fprintf(stderr, "iotrail record: warning: the ClickHouse sink stopped: %s; the recording "
		"goes on into %s only (what was not inserted is counted at the end)\n", why,
		s->path);
}

/* The reader is at the end of the file as written so far. */
static bool follow_wait(void *ctx)
{
	struct it_sink *s = ctx;
	struct timespec pause = { 0, WAIT_NS };
	uint64_t now = now_ns();

	/* once the recorder is done, one more look: END may have come just
	 * before it said so; a file without END ends there */
	if (atomic_load(&s->writer_done))
		return !s->looked_after_done ? (s->looked_after_done = true) : false;
	say_failure(s);
	if (now - s->last_send_ns >= SEND_EVERY_NS) {
		it_clickhouse_send_now(s->x);
		s->last_send_ns = now;
		say_failure(s);
	}
	nanosleep(&pause, NULL);
	return true;
}

static void *sink_main(void *arg)
{
	struct it_sink *s = arg;

	s->pass_rc = it_analysis_run(s->an, s->rd, s->pass_err, sizeof(s->pass_err));
	return NULL;
}

static void sink_free(struct it_sink *s)
{
	if (s->x)
		it_export_clickhouse.free(s->x);
	it_analysis_free(s->an);
	if (s->rd)
		it_reader_close(s->rd);
	if (s->http)
		it_http_close(s->http);
	free(s);
}

struct it_sink *it_sink_start(const char *spec, const char *path, const char *shown_path)
{
	struct it_sink *s = calloc(1, sizeof(*s));
	uint16_t types[16];
	struct it_select sel[16];
	size_t ntypes = it_analysis_chunk_types(types, 16), nm;
	const struct it_machine *m;
	const char *why;
	char err[600];
	sigset_t all, old;

	if (!s) {
		it_failf(1, "failed to start the sink: out of memory; free some memory");
		return NULL;
	}
	snprintf(s->path, sizeof(s->path), "%s", shown_path);
	if (it_sink_parse(spec, s->url, sizeof(s->url), s->database, sizeof(s->database), err,
			  sizeof(err))) {
		it_failf(2, "failed to use --sink %s: %s; give clickhouse://HOST:PORT/DATABASE", spec,
			 err);
		goto fail;
	}
	if (!(s->http = it_http_open(s->url, err, sizeof(err)))) {
		it_failf(1, "failed to use --sink %s: %s", spec, err);
		goto fail;
	}
	/* machine 0's records, as the report's pass reads them */
	for (size_t i = 0; i < ntypes; i++)
		sel[i] = (struct it_select){ 0, IT_ANY, types[i] };
	s->rd = it_reader_open_follow(path, sel, ntypes, follow_wait, s, err, sizeof(err));
	if (!s->rd) {
		it_failf(1, "failed to follow %s for the sink: %s; record without --sink", path, err);
		goto fail;
	}
	m = it_reader_machines(s->rd, &nm);
	s->opts = (struct it_layer_opts){ .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	s->info = (struct it_pass_info){ .path = s->path, .host = &m[0].host, .devs = m[0].devs,
					 .ndevs = m[0].ndevs, .opts = &s->opts,
					 .layers = it_pass_layers(s->rd) };
	if (!(s->an = it_analysis_new(&s->info))) {
		it_failf(1, "failed to start the sink: out of memory; free some memory");
		goto fail;
	}
	s->info.bus = it_analysis_bus(s->an);
	s->u = (struct it_export_url){ .url = s->url, .database = s->database,
				       .post = it_http_post, .conn = s->http };
	/* the server is reached and the tables made before anything is
	 * recorded: a wrong address stops here, not in the middle */
	if (!(s->x = it_export_clickhouse.open_url(&s->u, &s->info))) {
		it_failf(1, "failed to start the sink: out of memory; free some memory");
		goto fail;
	}
	if ((why = it_export_clickhouse.error(s->x))) {
		it_failf(1, "failed to send to ClickHouse at %s (--sink %s): %s", s->url, spec, why);
		goto fail;
	}
	s->last_send_ns = now_ns();
	/* the recorder's signals (Ctrl-C, the command's exit) are the main
	 * thread's; a closed socket is an error here, not a SIGPIPE */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&s->thread, NULL, sink_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		it_failf(1, "failed to start the sink's thread: %s; record without --sink",
			 strerror(rc));
		goto fail;
	}
	return s;
fail:
	sink_free(s);
	return NULL;
}

/* "ios N, calls N, nvme_commands N, fabric_commands N" */
static void per_table(char *buf, size_t len, const uint64_t *n)
{
	size_t off = 0;

	buf[0] = 0;
	for (unsigned t = 0; t < IT_CH_RECORDINGS && off < len; t++) {
		int w = snprintf(buf + off, len - off, "%s%s %" PRIu64, t ? ", " : "",
				 it_clickhouse_table(t), n[t]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

void it_sink_cancel(struct it_sink *s)
{
	if (!s)
		return;
	atomic_store(&s->writer_done, true);
	pthread_join(s->thread, NULL);
	sink_free(s);
}

int it_sink_stop(struct it_sink *s, bool complete)
{
	uint64_t sent[IT_CH_RECORDINGS], unsent[IT_CH_RECORDINGS], total = 0, lost = 0;
	const char *why = NULL;
	char counts[200], missing[200], reason[700] = "";
	int64_t rows = -1;
	int ret = 0;

	atomic_store(&s->writer_done, true);
	pthread_join(s->thread, NULL);
	if (s->pass_rc == -1)
		snprintf(reason, sizeof(reason), "the sink could not read %.200s: %.250s", s->path,
			 s->pass_err);
	else if (s->pass_rc)
		snprintf(reason, sizeof(reason), "the sink's analysis failed: %.250s",
			 *s->pass_err ? s->pass_err : "out of memory");
	else if ((rows = it_export_clickhouse.finish(s->x)) < 0)
		why = it_export_clickhouse.error(s->x);
	if (!*reason && rows < 0)
		snprintf(reason, sizeof(reason), "%s", why ? why : "out of memory");
	it_clickhouse_counts(s->x, sent, unsent);
	for (unsigned t = 0; t < IT_CH_RECORDINGS; t++) {
		total += sent[t];
		lost += unsent[t];
	}
	per_table(counts, sizeof(counts), sent);
	if (!*reason && complete) {
		fprintf(stderr, "iotrail record: sink: %" PRIu64 " rows inserted into %s, database "
			"%s (%s) as recorded\n", total, s->url, s->database, counts);
	} else {
		per_table(missing, sizeof(missing), unsent);
		if (!*reason)
			snprintf(reason, sizeof(reason), "the recording stopped early");
		it_failf(1, "failed to send the whole recording to ClickHouse at %s, database %s: "
			 "%s; inserted %s; not inserted %s (%" PRIu64 " rows) and the recording's "
			 "row; %s has them all: delete the recording's rows (recording_id %" PRIu64
			 ") and send it with iotrail export --format clickhouse", s->url, s->database,
			 reason, counts, missing, lost, s->path, it_clickhouse_recording(s->x));
		ret = 1;
	}
	sink_free(s);
	return ret;
}
