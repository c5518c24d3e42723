/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail report [--json] [--group-by KEYS] FILE`: reads a trace file
 * with the tracefile reader, streams its events through the analyzer and
 * prints the text or JSON report (src/analyze/report_*.c).
 * Exit status: 0 done, 1 the file could not be read or analysed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/json_writer.h"
#include "analyze/report.h"
#include "analyze/report_sys.h"
#include "commands.h"
#include "report_syscall.h"
#include "tracefile.h"

static void usage(FILE *f)
{
	fputs("usage: iotrail report [--json [--pretty]] [--group-by KEYS] FILE\n"
	      "\n"
	      "Analyse a trace file written by `iotrail record`: one trail per I/O from bio queue\n"
	      "to completion, latency percentiles, btt-style stages (Q2I, I2D or Q2D, D2C, Q2C),\n"
	      "queue depth at insert and issue, I/O sizes, sequential share, IOPS over time.\n"
	      "\n"
	      "  -g, --group-by KEYS  comma-separated keys from op, size, dev, comm, pid, or none\n"
	      "                       (default: op,dev); size groups by power-of-two class\n"
	      "  -j, --json           JSON on stdout (contract: doc/report.md)\n"
	      "  -p, --pretty         indent the JSON\n"
	      "  -z, --zones          per-zone activity of zoned devices: heat maps (text) or\n"
	      "                       \"zones\":[...] (JSON)\n"
	      "  -e, --events         with --json: the system calls, one object each (\"events\")\n"
	      "  -l, --log            the system calls as a list, one a line (time, pid, tid,\n"
	      "                       comm, call, fd, offset, count, return, file type, path)\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "examples:\n"
	      "  iotrail report iotrail.trail\n"
	      "  iotrail report --group-by op,comm,pid fio.trail\n"
	      "  iotrail report --group-by dev,op,size fio.trail\n"
	      "  iotrail report --json fio.trail | jq '.groups[] | {key, p99: .latency_ns.p99}'\n",
	      f);
}

static bool json_mode;

/* One line on stderr: what failed, why, what to do. In JSON mode stdout
 * also gets {"version":1,"error":"..."} (as bpftool does), so a consumer
 * piping the output never sees an empty document. Returns code. */
__attribute__((format(printf, 2, 3))) static int fail(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "iotrail report: %s\n", msg);
	if (json_mode) {
		struct it_json j;
		it_json_init(&j, stdout, false);
		it_json_object_start(&j);
		it_json_kv_uint(&j, "version", 1);
		it_json_kv_string(&j, "error", msg);
		it_json_object_end(&j);
	}
	return code;
}

/* Streams the file through the analyzer. Returns 0 or 1 (message printed). */
static int analyse(struct it_reader *rd, struct it_analyzer *a, const char *path,
		   struct it_reader_status *st)
{
	const struct it_event *evs;
	size_t n;
	int rc;

	while ((rc = it_reader_next(rd, &evs, &n)) > 0) {
		if (it_analyzer_feed(a, evs, n))
			return fail(1, "failed to analyse %s: out of memory; try a machine with more "
				    "memory or a shorter trace", path);
	}
	if (rc < 0)
		return fail(1, "failed to read %s: %s; check the disk and the file", path,
			    it_reader_error(rd));
	it_reader_status(rd, st);
	it_analyzer_finish(a, st->complete ? st->end_monotonic_ns : 0);
	if (it_analyzer_error(a))
		return fail(1, "failed to analyse %s: out of memory; try a machine with more "
			    "memory or a shorter trace", path);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "group-by", required_argument, NULL, 'g' },
		{ "zones", no_argument, NULL, 'z' },
		{ "events", no_argument, NULL, 'e' },
		{ "log", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	bool events = false, log = false;
	bool json = false, pretty = false, zones = false;
	char err[256];
	int c;

	optind = 1;
	opterr = 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) /* errors in JSON too */
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json_mode = true;
	while ((c = getopt_long(argc, argv, "jpg:zelh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			events = true;
			break;
		case 'l':
			log = true;
			break;
		case 'z':
			zones = true;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			break;
		case 'g':
			if (it_parse_group_keys(optarg, &o, err, sizeof(err)))
				return fail(2, "%s", err);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (optopt)
				return fail(2, "option '-%c' %s; see 'iotrail report --help'", optopt,
					    strchr("g", optopt) ? "needs a value" : "is unknown");
			return fail(2, "option '%s' is unknown or needs a value; see 'iotrail report --help'",
				    argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		return fail(2, "%s; usage: iotrail report [--json] [--group-by KEYS] FILE",
			    optind == argc ? "no trace file given" : "more than one trace file given");
	const char *path = argv[optind];

	struct it_reader *rd = it_reader_open(path, err, sizeof(err));
	if (!rd)
		return fail(1, "failed to read %s: %s; give a trace file written by "
			    "'iotrail record -o FILE'", path, err);
	o.start_ns = it_reader_host(rd)->start_monotonic_ns;
	/* the syscall layer collects the block trails during the block pass */
	struct it_sysan *sys = NULL;
	if (it_reader_layer(rd, IT_LAYER_SYSCALL)) {
		struct it_sysan_opts so = { .events = events || log };
		sys = it_sysan_new(&so);
		o.on_trail = report_sys_on_trail;
		o.ctx = sys;
	}
	if ((events || log) && !o.on_trail) {
		it_reader_close(rd);
		return fail(1, "failed to list the system calls of %s: the trace has no syscall "
			    "layer; record it with --layers syscall", path);
	}
	struct it_analyzer *a = o.on_trail && !sys ? NULL : it_analyzer_new(&o);
	if (!a) {
		it_reader_close(rd);
		return fail(1, "failed to start the analyzer: out of memory; free some memory");
	}
	struct it_reader_status st;
	int rc = analyse(rd, a, path, &st);
	uint64_t sys_dropped = 0;
	if (!rc && sys &&
	    report_sys_read(path, sys, o.start_ns, st.complete ? st.end_monotonic_ns : 0,
			    &sys_dropped, err, sizeof(err)))
		rc = fail(1, "failed to read the system calls of %s: %s; check the disk and the "
			  "file", path, err);
	if (!rc && log) {
		it_report_sys_log(stdout, it_sysan_results(sys), o.start_ns);
	} else if (!rc) {
		struct it_report_input in = {
			.path = path,
			.host = it_reader_host(rd),
			.status = &st,
			.a = a,
			.r = it_analyzer_results(a),
			.zones = zones,
			.sys = sys ? it_sysan_results(sys) : NULL,
			.sys_events = events,
			.sys_dropped = sys_dropped,
		};
		in.devs = it_reader_devices(rd, &in.ndevs);
		if (json)
			it_report_json(stdout, &in, pretty);
		else
			it_report_text(stdout, &in);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "iotrail report: failed to write the report: %s; check where "
				"stdout goes\n", strerror(errno));
			rc = 1;
		}
	}
	if (!rc && log && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, "iotrail report: failed to write the report: %s; check where "
			"stdout goes\n", strerror(errno));
		rc = 1;
	}
	it_sysan_free(sys);
	it_analyzer_free(a);
	it_reader_close(rd);
	return rc;
}
