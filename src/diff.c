/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail diff [--json [--pretty]] [--group-by KEYS] BASE LOADED`: runs
 * each trace through the analysis pass `iotrail report` runs
 * (it_analysis_new / it_analysis_run), then compares the stages of the
 * groups the two have (src/analyze/diff.c): the latency amplification
 * degree of each stage, and the bottleneck.
 * Exit status: 0 done, 1 a file could not be read or analysed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyze/diff.h"
#include "analyze/layer.h"
#include "cli.h"
#include "commands.h"
#include "export/html.h"
#include "layers/fabric/fabric.h"
#include "tracefile.h"

static void usage(FILE *f)
{
	fputs("usage: iotrail diff [--json [--pretty]] [--group-by KEYS] BASE LOADED\n"
	      "\n"
	      "Compare two trace files written by `iotrail record`, one at base and one under load:\n"
	      "for every stage of every group both have (Q2I, I2D, Q2D, D2C, Q2C, the NVMe stages;\n"
	      "the fabric view's stages per opcode), the count, p50 and avg in each, and the\n"
	      "latency amplification degree (LAD = loaded / base, at p50 and at avg). The first\n"
	      "line names the bottleneck: the stage of the block partition (Q2I, I2D, Q2D, D2C)\n"
	      "with the highest LAD at avg. Groups in only one trace are listed as such.\n"
	      "\n"
	      "  -g, --group-by KEYS  comma-separated keys from op, size, dev, comm, pid, or none\n"
	      "                       (default: op,dev); traces of two devices match by op only\n"
	      "  -j, --json           JSON on stdout (contract: doc/report.md, \"iotrail diff\")\n"
	      "  -p, --pretty         indent the JSON\n"
	      "      --html           one self-contained HTML page: the LAD per stage as bars\n"
	      "  -o, --output FILE    with --html: write it to FILE instead of stdout\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "examples:\n"
	      "  iotrail diff idle.trail busy.trail\n"
	      "  iotrail diff --group-by op fast-disk.trail slow-disk.trail\n"
	      "  iotrail diff --json base.trail loaded.trail | jq .bottleneck\n",
	      f);
}

struct side {
	struct it_reader *rd;
	struct it_analysis *an;
	struct it_diff_side s;
};

static void side_free(struct side *s)
{
	it_analysis_free(s->an);
	if (s->rd)
		it_reader_close(s->rd);
}

static int side_load(struct side *s, const char *path, const struct it_layer_opts *o)
{
	struct it_pass_info info;
	int rc = it_trace_analysis_open(path, o, 0, &s->rd, &s->an, &info);

	if (rc || (rc = it_trace_analysis_run(s->an, s->rd, path)))
		return rc;
	const struct it_analyzer *a = it_layer_block_analyzer(it_analysis_state(s->an, &it_layer_block));
	s->s = (struct it_diff_side){ .path = path, .r = it_analyzer_results(a), .a = a,
				      .devs = info.devs, .ndevs = info.ndevs,
				      .fabric = it_layer_fabric_results(
					      it_analysis_state(s->an, &it_layer_fabric)) };
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "group-by", required_argument, NULL, 'g' },
		{ "html", no_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	bool json = false, pretty = false, html = false;
	const char *output = NULL;
	char err[256];
	int c;

	optind = 1;
	opterr = 0;
	it_cli_json_from_args(argc, argv); /* errors in JSON too */
	while ((c = getopt_long(argc, argv, "jpg:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			html = true;
			break;
		case 'o':
			output = optarg;
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
			return it_fail_option("diff", "go", argv);
		}
	}
	if (optind + 2 != argc)
		return it_failf(2, "%s; usage: iotrail diff [--json] [--group-by KEYS] BASE LOADED",
			    optind == argc ? "no trace file given" :
			    optind + 1 == argc ? "one trace file given, two are needed" :
			    "more than two trace files given");

	if (html && json)
		return it_failf(2, "failed to parse the options: --html and --json are two forms of the "
				"comparison; give one");
	if (output && !html)
		return it_failf(2, "failed to write to %s: -o goes with --html (the text and JSON go to "
				"stdout); redirect stdout instead", output);
	struct side base = { 0 }, loaded = { 0 };
	int rc = side_load(&base, argv[optind], &o);
	if (!rc)
		rc = side_load(&loaded, argv[optind + 1], &o);
	struct it_diff *d = NULL;
	if (!rc && !(d = it_diff_new(&base.s, &loaded.s)))
		rc = it_failf(1, "failed to compare the traces: out of memory; free some memory");
	FILE *out = d && output ? fopen(output, "w") : stdout;
	if (!out) {
		rc = it_failf(1, "failed to create %s: %s; check the path and its directory's "
			      "permissions", output, strerror(errno));
		it_diff_free(d);
		d = NULL;
	}
	if (d && html) {
		it_diff_html(d, out);
		if (output ? fclose(out) : (fflush(out) || ferror(out)))
			rc = it_failf(1, "failed to write the HTML comparison to %s: %s; check free "
				      "space", output ? output : "stdout", strerror(errno));
	} else if (d && json)
		it_diff_json(d, stdout, pretty);
	else if (d)
		it_diff_text(d, stdout);
	if (d && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, "iotrail diff: failed to write the comparison: %s; check where "
			"stdout goes\n", strerror(errno));
		rc = 1;
	}
	it_diff_free(d);
	side_free(&loaded);
	side_free(&base);
	return rc;
}
