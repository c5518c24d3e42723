/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Exporters: `iotrail export --format NAME` writes a trace's records in
 * another format. Each is one struct it_exporter, listed in it_exporters[]
 * (exporters.c); it reads its chunk types in the one pass over the trace
 * (it_pass_run, analyze/layer.h) as the analysis layers do. Pure C.
 */
#ifndef IOTRAIL_EXPORT_EXPORTER_H
#define IOTRAIL_EXPORT_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/layer.h"

/* Where an exporter to a server sends (--url, --database), and the HTTP
 * POST it sends with: the command supplies it (src/http.c, which loads
 * libcurl when a server is named; the core library has none of it). */
struct it_export_url {
	const char *url;        /* http://HOST:PORT */
	const char *database;
	/* machine 0's host facts, which name the recording of every machine's
	 * rows (NULL: the pass's own, info->host) */
	const struct it_host_rec *recording;
	/* POSTs len bytes of body to the url with ?query=query (NULL: the body
	 * is the query). 0 with the server's answer in reply (its first line),
	 * or -1 with why in reply (the server's error, one line). */
	int (*post)(void *conn, const char *query, const void *body, size_t len, char *reply,
		    size_t replylen);
	void *conn;
};

struct it_exporter {
	const char *name;       /* --format NAME */
	const char *what;       /* what it writes, for --help (may hold newlines) */
	const char *none;       /* a note when a trace has nothing to export: what it lacks */
	const uint16_t *chunks; /* chunk types it reads */
	size_t nchunks;
	/* Starts the output (a header); info: the trace's host and devices
	 * (info->opts is NULL). NULL when memory ran out. */
	void *(*open)(FILE *out, const struct it_pass_info *info);
	/* A chunk's payload, as the analysis layers get it. 0, or -1 once
	 * memory ran out. */
	int (*feed)(void *self, uint16_t type, const void *payload, size_t len, uint32_t count);
	/* The end of the trace: writes what is left; returns the records
	 * written (>= 0), or -1 when memory ran out. */
	int64_t (*finish)(void *self);
	void (*free)(void *self);
	/* --what KIND: exporters of one format are told apart by kind (NULL:
	 * the format's default, listed first) */
	const char *kind;
	/* Built on the report's analysis layers: open subscribes to info->bus
	 * (block trails, system calls, NVMe commands as the layers publish
	 * them); chunks and feed are unused. finish_analysis, when set, is
	 * called instead of finish, with the layers' state (e.g. the zones). */
	bool analysis;
	int64_t (*finish_analysis)(void *self, const struct it_analysis *an);
	/* An exporter to a server (instead of open; analysis set, so it
	 * subscribes to info->bus): NULL when memory ran out; a failure to
	 * reach the server is its error(). */
	void *(*open_url)(const struct it_export_url *u, const struct it_pass_info *info);
	/* Why open_url or finish failed, one line; NULL: memory ran out. */
	const char *(*error)(const void *self);
	/* An analysis exporter of every machine of a file of several: after
	 * machine 0's pass, each other machine's follows (as report
	 * --machine N); this subscribes to its info->bus, whose rows carry
	 * info->machine. 0, or -1 (no room on the bus). NULL: machine 0 only. */
	int (*next_machine)(void *self, const struct it_pass_info *info);
};

/* Every exporter, in --help order (exporters.c). */
extern const struct it_exporter *const it_exporters[];
extern const size_t it_nexporters;

/* The exporter named name, or NULL. */
const struct it_exporter *it_exporter_find(const char *name);
/* The exporter of format name and kind (--what; NULL: the format's
 * first), or NULL. */
const struct it_exporter *it_exporter_find_kind(const char *name, const char *kind);

/* A device's name for an export: its name in the trace's device table,
 * "admin" for dev 0 (NVMe admin queues' requests), else "MAJOR:MINOR". */
const char *it_export_dev_name(const struct it_pass_info *info, uint32_t dev, char *buf,
			       size_t len);

#endif
