// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail export --format csv [-o OUT] FILE`: the trace's NVMe commands,
 * one CSV row each (src/export/csv.c). Exit status: 0 done, 1 the file
 * could not be read or written, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "export/csv.h"
#include "tracefile.h"

static void usage(FILE *f)
{
	fputs("usage: iotrail export --format csv [-o OUT] FILE\n"
	      "\n"
	      "Write every NVMe command of a trace file as one CSV row (in completion order):\n"
	      "  start_time_ns,end_time_ns,latency_ns,process_name,pid,device,qid,slba,\n"
	      "  length_bytes,length_lbas,opcode, then opcode_name,ctrl,cid,tag,nsid,status,\n"
	      "  result,inflight_at_submit,tid,dsm_ranges. Times are CLOCK_MONOTONIC ns as\n"
	      "  recorded; opcode is the NVMe opcode number; LBAs are logical blocks.\n"
	      "\n"
	      "  -f, --format FMT   csv (the only format so far)\n"
	      "  -o, --output OUT   write to OUT instead of stdout\n"
	      "  -h, --help         this text\n"
	      "\n"
	      "example:\n"
	      "  iotrail record -o fio.trail -- fio job.fio && iotrail export --format csv -o fio.csv fio.trail\n",
	      f);
}

static int fail(int code, const char *what, const char *why, const char *todo)
{
	fprintf(stderr, "iotrail export: failed to %s: %s; %s\n", what, why, todo);
	return code;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = NULL, *output = NULL;
	char err[256];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
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
	if (!format)
		return fail(2, "export", "no --format given", "use --format csv");
	if (strcmp(format, "csv")) {
		snprintf(err, sizeof(err), "unknown format '%s'", format);
		return fail(2, "export", err, "use --format csv");
	}
	if (optind + 1 != argc)
		return fail(2, "export", optind == argc ? "no trace file given" :
			    "more than one trace file given", "usage: iotrail export --format csv [-o OUT] FILE");
	const char *path = argv[optind];
	struct it_reader *rd = it_reader_open(path, err, sizeof(err));
	if (!rd) {
		fprintf(stderr, "iotrail export: failed to read %s: %s; give a trace file written by "
			"'iotrail record -o FILE'\n", path, err);
		return 1;
	}
	FILE *out = output ? fopen(output, "w") : stdout;
	if (!out) {
		it_reader_close(rd);
		return fail(1, "create the output file", strerror(errno), "check the path");
	}
	int64_t rows = it_export_nvme_csv(rd, out, err, sizeof(err));
	int rc = 0;
	if (rows < 0)
		rc = fail(1, "read the trace file", err, "check the file");
	if ((output ? fclose(out) : fflush(out)) || (!output && ferror(out)))
		rc = fail(1, "write the CSV", strerror(errno), "check free space and where the output goes");
	if (!rc && rows == 0)
		fprintf(stderr, "iotrail export: note: %s has no NVMe commands (recorded without the "
			"NVMe layer, or no NVMe device)\n", path);
	it_reader_close(rd);
	return rc;
}
