// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail export --format FMT [-o OUT] FILE`: the trace's records in
 * another format, by the exporter named FMT (src/export/exporters.c), in
 * one pass over the file. Exit status: 0 done, 1 the file could not be
 * read or written, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "analyze/layer.h"
#include "export/exporter.h"
#include "http.h"
#include "layers/fabric/clock.h"
#include "tracefile.h"

/* "csv" or "csv, json or xml": the names of every format (once each). */
static const char *format_names(char *buf, size_t len)
{
	size_t off = 0, nformats = 0, k = 0;

	buf[0] = 0;
	for (size_t i = 0; i < it_nexporters; i++)
		nformats += it_exporter_find(it_exporters[i]->name) == it_exporters[i];
	for (size_t i = 0; i < it_nexporters && off < len; i++) {
		if (it_exporter_find(it_exporters[i]->name) != it_exporters[i])
			continue;
		int w = snprintf(buf + off, len - off, "%s%s",
				 !k ? "" : k + 1 < nformats ? ", " : " or ", it_exporters[i]->name);
		if (w < 0)
			break;
		off += (size_t)w;
		k++;
	}
	return buf;
}

/* "trails, calls, nvme or zones": the kinds of format name. */
static const char *kind_names(const char *name, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < it_nexporters && off < len; i++)
		if (!strcmp(it_exporters[i]->name, name) && it_exporters[i]->kind) {
			int w = snprintf(buf + off, len - off, "%s%s", off ? "|" : "",
					 it_exporters[i]->kind);
			if (w < 0)
				break;
			off += (size_t)w;
		}
	return buf;
}

static void usage(FILE *f)
{
	char names[256], kinds[256];

	fputs("usage: iotrail export --format FMT [--what KIND] [-o OUT | --url URL [--database DB]] FILE\n"
	      "\n"
	      "Write the records of a trace file in another format, one pass over the file.\n"
	      "\n"
	      "formats:\n", f);
	for (size_t i = 0; i < it_nexporters; i++) {
		const char *w = it_exporters[i]->what;
		/* the description, indented under the name */
		char label[40];

		snprintf(label, sizeof(label), "%s%s%s", it_exporters[i]->name,
			 it_exporters[i]->kind ? " --what " : "",
			 it_exporters[i]->kind ? it_exporters[i]->kind : "");
		fprintf(f, "  %s\n      ", label);
		for (; *w; w++) {
			fputc(*w, f);
			if (*w == '\n')
				fputs("      ", f);
		}
		fputc('\n', f);
	}
	fprintf(f, "\n"
		"  -f, --format FMT   %s\n"
		"  -w, --what KIND    what a format writes (csv: %s; default: the first listed)\n"
		"  -o, --output OUT   write to OUT instead of stdout\n"
		"  -u, --url URL      the server of an exporter to a server (clickhouse):\n"
		"                     http://HOST:8123\n"
		"  -d, --database DB  its database (default: iotrail)\n"
		"  -h, --help         this text\n"
		"\n"
		"example:\n"
		"  iotrail record -o fio.trail -- fio job.fio && iotrail export --format %s -o fio.%s fio.trail\n",
		format_names(names, sizeof(names)), kind_names("csv", kinds, sizeof(kinds)),
		it_exporters[0]->name, it_exporters[0]->name);
}

/* The pass: every chunk of the exporter's types to it. Returns the
 * records written, or -1 with a reason in err. */
static int64_t run(const struct it_exporter *x, struct it_reader *rd, FILE *out, char *err,
		   size_t errlen)
{
	struct it_bus bus = { 0 };
	struct it_pass_info info = { .host = it_reader_host(rd), .bus = &bus };
	void *self;
	int64_t rows;

	info.devs = it_reader_devices(rd, &info.ndevs);
	if (!(self = x->open(out, &info))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct it_consumer c = { .chunks = x->chunks, .nchunks = x->nchunks, .feed = x->feed,
				 .self = self };
	int rc = it_pass_run(rd, &c, 1, err, errlen);
	if (rc == -2)
		snprintf(err, errlen, "out of memory");
	rows = rc ? -1 : x->finish(self);
	if (!rc && rows < 0)
		snprintf(err, errlen, "out of memory");
	x->free(self);
	return rows;
}

/* Machine id's clock on machine 0's, for an exporter's one timeline: the
 * estimate machine 0's fabric view placed its target commands with (an0:
 * machine 0's analysis) when it joined that machine, else the one stored
 * in the file (CLOCK_EST), else the agent exchange's offset (CLOCK), else
 * none (IT_CLOCK_NONE: its own clock). */
static struct it_clock_est machine_clock(const struct it_analysis *an0, struct it_reader *rd,
					 uint16_t id)
{
	uint16_t joined = 0;
	const struct it_clock_est *e =
		it_layer_fabric_clock(it_analysis_state(an0, &it_layer_fabric), &joined);
	const struct it_clock_window_rec *w;
	size_t nw;
	const struct it_clock_est_rec *s = it_reader_clock_est(rd, id, &w, &nw);
	const struct it_clock_rec *c = it_reader_clock(rd, id);

	if (e && joined == id)
		return (struct it_clock_est){ .method = e->method, .offset_ns = e->offset_ns,
					      .ref_ns = e->ref_ns, .slope = e->slope };
	if (s && (s->method == IT_CLOCK_IO || s->method == IT_CLOCK_EXCHANGE))
		return (struct it_clock_est){ .method = s->method, .offset_ns = s->offset_ns,
					      .ref_ns = s->ref_ns, .slope = s->slope };
	if (c)
		return (struct it_clock_est){ .method = IT_CLOCK_EXCHANGE, .offset_ns = c->offset_ns };
	return (struct it_clock_est){ .method = IT_CLOCK_NONE };
}

/* The passes of machines 1.. of a file of several, into the same
 * exporter (x->next_machine), after machine 0's (rd0: its reader, an0:
 * its analysis). */
static int other_machines(const struct it_exporter *x, void *self, const char *path,
			  struct it_reader *rd0, const struct it_analysis *an0)
{
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	size_t n;
	const struct it_machine *ms = it_reader_machines(rd0, &n);
	int rc = 0;

	for (size_t i = 1; i < n && x->next_machine && !rc; i++) {
		struct it_pass_info info;
		struct it_analysis *an;
		struct it_reader *rd;

		if ((rc = it_trace_analysis_open(path, &o, ms[i].id, &rd, &an, &info)))
			break;
		struct it_clock_est clock = machine_clock(an0, rd, ms[i].id);

		info.bus = it_analysis_bus(an);
		info.clock_est = &clock;
		if (x->next_machine(self, &info))
			rc = it_fail(1, "export", "too many listeners on the analysis' bus",
				     "report it");
		else
			rc = it_trace_analysis_run(an, rd, path);
		it_analysis_free(an);
		it_reader_close(rd);
	}
	return rc;
}

/* An exporter on the report's analysis layers, fed through their bus;
 * the output file is created once the trace opened. */
static int export_analysis(const struct it_exporter *x, const char *path, const char *output)
{
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT, .zones = true };
	struct it_pass_info info;
	struct it_analysis *an;
	struct it_reader *rd;
	int64_t rows = -1;
	void *self = NULL;
	FILE *out;
	int rc;

	if ((rc = it_trace_analysis_open(path, &o, 0, &rd, &an, &info)))
		return rc;
	info.bus = it_analysis_bus(an);
	out = output ? fopen(output, "w") : stdout;
	if (!out)
		rc = it_fail(1, "create the output file", strerror(errno), "check the path");
	else if (!(self = x->open(out, &info)))
		rc = it_fail(1, "export", "out of memory", "free some memory");
	else if ((rc = it_trace_analysis_run(an, rd, path)) == 0 &&
		 (rc = other_machines(x, self, path, rd, an)) == 0) {
		rows = x->finish_analysis ? x->finish_analysis(self, an) : x->finish(self);
		if (rows < 0)
			rc = it_fail(1, "export", "out of memory", "free some memory");
	}
	if (self)
		x->free(self);
	if (out && ((output ? fclose(out) : fflush(out)) || (!output && ferror(out))))
		rc = it_fail(1, "write the output", strerror(errno),
			     "check free space and where the output goes");
	if (!rc && rows == 0)
		fprintf(stderr, "iotrail export: note: %s has no %s\n", path, x->none);
	it_analysis_free(an);
	it_reader_close(rd);
	return rc;
}

/* An exporter to a server (x->open_url): like export_analysis, the
 * report's layers read the trace in their one pass (of machine) and
 * publish on the bus it subscribed to at open. Machine 0's pass lists the
 * file's machines (ids, *nids) and keeps its host facts (*first), which
 * name the recording of every machine's rows. */
static int64_t run_url(const struct it_exporter *x, const char *path, uint16_t machine,
		       struct it_export_url *u, struct it_host_rec *first, uint16_t *ids,
		       size_t *nids, size_t maxids, const char **why, char *err, size_t errlen)
{
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	struct it_reader *rd;
	struct it_analysis *an;
	struct it_pass_info info;
	int64_t rows = -1;
	void *self;

	*why = NULL;
	if (it_trace_analysis_open(path, &o, machine, &rd, &an, &info))
		return -2; /* said */
	info.bus = it_analysis_bus(an);
	if (!machine) {
		size_t n;
		const struct it_machine *ms = it_reader_machines(rd, &n);

		for (*nids = 0; *nids < n && *nids < maxids; (*nids)++)
			ids[*nids] = ms[*nids].id;
		*first = *info.host;
		u->recording = first;
	}
	self = x->open_url(u, &info);
	if (!self) {
		snprintf(err, errlen, "out of memory");
	} else if (x->error && (*why = x->error(self))) {
		snprintf(err, errlen, "%s", *why);
	} else if (it_trace_analysis_run(an, rd, path)) {
		rows = -2; /* said */
	} else if ((rows = x->finish(self)) < 0) {
		*why = x->error ? x->error(self) : NULL;
		snprintf(err, errlen, "%s", *why ? *why : "out of memory");
	}
	if (self)
		x->free(self);
	it_analysis_free(an);
	it_reader_close(rd);
	return rows;
}

/* An exporter to a server: --url, through libcurl. */
static int export_url(const struct it_exporter *x, const char *path, const char *url,
		      const char *database)
{
	char err[600];
	const char *why;
	struct it_http *h = it_http_open(url, err, sizeof(err));

	if (!h)
		return it_failf(2, "failed to use --url %s: %s", url, err); /* err says what to do */
	struct it_export_url u = { .url = url, .database = database, .post = it_http_post, .conn = h };
	struct it_host_rec first;
	uint16_t ids[64] = { 0 };
	size_t nids = 1;
	int64_t rows = 0, r = 0;

	/* every machine of the file, each its own pass (as report --machine) */
	for (size_t k = 0; k < nids && r >= 0; k++)
		if ((r = run_url(x, path, ids[k], &u, &first, ids, &nids, 64, &why, err,
				 sizeof(err))) >= 0)
			rows += r;
	if (r < 0)
		rows = r;
	it_http_close(h);
	if (rows == -2)
		return 1;
	if (rows < 0)
		return it_failf(1, "failed to export %s to %s: %s%s", path, url, err,
				why ? "" : "; free some memory");
	fprintf(stderr, "iotrail export: %lld rows sent to %s, database %s%s\n", (long long)rows, url,
		database, nids > 1 ? " (every machine of the file)" : "");
	return 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "what", required_argument, NULL, 'w' },
		{ "url", required_argument, NULL, 'u' },
		{ "database", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = NULL, *output = NULL, *what = NULL, *url = NULL, *database = "iotrail";
	char err[256], names[256], todo[300];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:w:u:d:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			url = optarg;
			break;
		case 'd':
			database = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'w':
			what = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "iotrail export: option '%s' is unknown or needs a value; "
				"see 'iotrail export --help'\n", argv[optind - 1]);
			return 2;
		}
	}
	snprintf(todo, sizeof(todo), "use --format %s", format_names(names, sizeof(names)));
	if (!format)
		return it_fail(2, "export", "no --format given", todo);
	const struct it_exporter *x = it_exporter_find(format);
	if (!x) {
		snprintf(err, sizeof(err), "unknown format '%s'", format);
		return it_fail(2, "export", err, todo);
	}
	if (what && !(x = it_exporter_find_kind(format, what))) {
		char kinds[256];

		kind_names(format, kinds, sizeof(kinds));
		snprintf(err, sizeof(err), "format %s has no kind '%s'", format, what);
		snprintf(todo, sizeof(todo), *kinds ? "use --what %s" : "leave --what out for %s",
			 *kinds ? kinds : format);
		return it_fail(2, "export", err, todo);
	}
	if (optind + 1 != argc)
		return it_fail(2, "export", optind == argc ? "no trace file given" :
			    "more than one trace file given", "usage: iotrail export --format FMT [-o OUT] FILE");
	const char *path = argv[optind];
	if (x->open_url && !url)
		return it_failf(2, "failed to export to %s: no --url given; give --url http://HOST:PORT "
				"of the server", x->name);
	if (x->open_url && output)
		return it_failf(2, "failed to export to %s: it sends to --url, not to -o %s; drop -o",
				x->name, output);
	if (!x->open_url && url)
		return it_failf(2, "failed to export as %s: --url goes with an exporter to a server "
				"(clickhouse); use -o OUT", x->name);
	if (x->open_url)
		return export_url(x, path, url, database);
	if (x->analysis)
		return export_analysis(x, path, output);
	struct it_reader *rd = it_reader_open_records(path, x->chunks, x->nchunks, err, sizeof(err));
	if (!rd) {
		fprintf(stderr, "iotrail export: failed to read %s: %s; give a trace file written by "
			"'iotrail record -o FILE'\n", path, err);
		return 1;
	}
	FILE *out = output ? fopen(output, "w") : stdout;
	if (!out) {
		it_reader_close(rd);
		return it_fail(1, "create the output file", strerror(errno), "check the path");
	}
	int64_t rows = run(x, rd, out, err, sizeof(err));
	int rc = 0;
	if (rows < 0)
		rc = it_fail(1, "read the trace file", err, "check the file");
	if ((output ? fclose(out) : fflush(out)) || (!output && ferror(out)))
		rc = it_fail(1, "write the output", strerror(errno), "check free space and where the output goes");
	if (!rc && rows == 0)
		fprintf(stderr, "iotrail export: note: %s has no %s\n", path, x->none);
	it_reader_close(rd);
	return rc;
}
