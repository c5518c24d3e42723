/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail report [--json] [--group-by KEYS] FILE`: reads a trace file
 * once, each chunk to the analysis layers the trace has (layer.h:
 * it_analysis_layers[]), then prints their text or JSON sections in
 * registry order.
 * Exit status: 0 done, 1 the file could not be read or analysed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "cli.h"
#include "commands.h"
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

int it_trace_analysis_open(const char *path, const struct it_layer_opts *o, struct it_reader **rd,
			   struct it_analysis **an, struct it_pass_info *info)
{
	uint16_t types[16];
	size_t ntypes = it_analysis_chunk_types(types, 16);
	char err[256];

	*an = NULL;
	*rd = it_reader_open_records(path, types, ntypes, err, sizeof(err));
	if (!*rd)
		return it_failf(1, "failed to read %s: %s; give a trace file written by "
			    "'iotrail record -o FILE'", path, err);
	*info = (struct it_pass_info){ .path = path, .host = it_reader_host(*rd), .opts = o,
				       .layers = it_pass_layers(*rd) };
	info->devs = it_reader_devices(*rd, &info->ndevs);
	if (!(*an = it_analysis_new(info))) {
		it_reader_close(*rd);
		*rd = NULL;
		return it_failf(1, "failed to start the analyzer: out of memory; free some memory");
	}
	return 0;
}

int it_trace_analysis_run(struct it_analysis *an, struct it_reader *rd, const char *path)
{
	char err[256];
	int rc = it_analysis_run(an, rd, err, sizeof(err));

	if (rc == -1)
		return it_failf(1, "failed to read %s: %s; check the disk and the file", path, err);
	if (rc)
		return it_failf(1, "failed to analyse %s: out of memory; try a machine with more "
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
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	bool json = false, pretty = false;
	char err[256];
	int c;

	optind = 1;
	opterr = 0;
	it_cli_json_from_args(argc, argv); /* errors in JSON too */
	while ((c = getopt_long(argc, argv, "jpg:zelh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.events = true;
			break;
		case 'l':
			o.log = true;
			break;
		case 'z':
			o.zones = true;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			break;
		case 'g':
			if (it_parse_group_keys(optarg, &o.analyzer, err, sizeof(err)))
				return it_failf(2, "%s", err);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return it_fail_option("report", "g", argv);
		}
	}
	if (optind + 1 != argc)
		return it_failf(2, "%s; usage: iotrail report [--json] [--group-by KEYS] FILE",
			    optind == argc ? "no trace file given" : "more than one trace file given");
	const char *path = argv[optind];

	struct it_reader *rd;
	struct it_analysis *an;
	struct it_pass_info info;
	int rc = it_trace_analysis_open(path, &o, &rd, &an, &info);
	if (rc)
		return rc;
	/* --events, --log: a layer that lists its events */
	const struct it_analysis_layer *lister;
	if ((o.events || o.log) && !it_analysis_lists(an, &lister)) {
		it_analysis_free(an);
		it_reader_close(rd);
		if (!lister)
			return it_failf(1, "failed to list the events of %s: no analysis layer lists "
				    "events", path);
		return it_failf(1, "failed to list the %s of %s: the trace has no %s layer; record it "
			    "with --layers %s", lister->event_list, path, lister->name, lister->name);
	}
	struct it_reader_status st;
	rc = it_trace_analysis_run(an, rd, path);
	it_reader_status(rd, &st);
	struct it_report_ctx ctx = { .path = path, .host = info.host, .devs = info.devs,
				     .ndevs = info.ndevs, .status = &st, .opts = &o };
	if (!rc && o.log)
		it_analysis_report_log(an, stdout, &ctx);
	else if (!rc && json)
		it_analysis_report_json(an, stdout, &ctx, pretty);
	else if (!rc)
		it_analysis_report_text(an, stdout, &ctx);
	if (!rc && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, "iotrail report: failed to write the report: %s; check where "
			"stdout goes\n", strerror(errno));
		rc = 1;
	}
	it_analysis_free(an);
	it_reader_close(rd);
	return rc;
}
