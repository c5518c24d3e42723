/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail record --sink clickhouse://HOST[:PORT][/DB]`: the recording
 * into ClickHouse while it is recorded (sink.c).
 */
#ifndef IOTRAIL_SINK_H
#define IOTRAIL_SINK_H

#include <stdbool.h>
#include <stddef.h>

struct it_sink;

/* Checks a --sink value: 0 with the server's url (http://HOST:PORT) and
 * database, or -1 with why in err. */
int it_sink_parse(const char *spec, char *url, size_t urllen, char *db, size_t dblen, char *err,
		  size_t errlen);
/* Starts sending the trace file at path, which the recorder has opened
 * (its head written; shown_path: its name in messages, where it ends up): reaches the server and makes its tables now, then
 * follows the file in a thread of its own. NULL after the error line. */
struct it_sink *it_sink_start(const char *spec, const char *path, const char *shown_path);
/* The recorder is done with the file (complete: END written; else it
 * stopped early): the sink reads to its end, sends the rest and the
 * recording's row, says what went where (one line) and is freed. 0, or 1
 * when not every row was inserted. */
int it_sink_stop(struct it_sink *s, bool complete);
/* Stops without a word (the recording did not start); s may be NULL. */
void it_sink_cancel(struct it_sink *s);

#endif
