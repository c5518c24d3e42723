/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail extents [--json [--pretty]] [--region SIZE] PATH...`: where the
 * files lie on their device. FIEMAP per file (directories walked), mapped
 * to the device's zones (BLKREPORTZONE) or to fixed-size regions; the
 * model, walk and output are in src/extents/.
 * Exit status: 0 done, 1 a PATH could not be read or nothing had extents,
 * 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "extents/extents.h"

static void usage(FILE *f)
{
	fputs("usage: iotrail extents [--json [--pretty]] [--region SIZE] PATH...\n"
	      "\n"
	      "Where files lie on their device: each regular file's extents (FIEMAP; directories\n"
	      "are walked, symbolic links are not followed), mapped to the device's zones on a\n"
	      "zoned device and to regions of SIZE otherwise. Per file and per zone: the extent\n"
	      "count, the extent sizes (min, p50, max), the holes and a fragmentation figure; per\n"
	      "zone the files with data in it. Files that vanish or cannot be opened during the\n"
	      "walk are counted on the first line, not fatal.\n"
	      "\n"
	      "  -r, --region SIZE  region size on unzoned devices (default 256M; K, M, G, T)\n"
	      "  -j, --json         JSON on stdout (doc/extents.md)\n"
	      "  -p, --pretty       indent the JSON\n"
	      "  -h, --help         this text\n"
	      "\n"
	      "examples:\n"
	      "  iotrail extents /mnt/zns/db\n"
	      "  iotrail extents --json /var/lib/postgresql | jq '.files[] | select(.runs > 100) | .path'\n",
	      f);
}

int cmd_extents(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "region", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct it_ext_set s = { 0 };
	bool json = false, pretty = false;
	char why[256];
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	it_cli_json_from_args(argc, argv);
	while ((c = getopt_long(argc, argv, "jpr:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			break;
		case 'r':
			s.region = it_ext_parse_size(optarg);
			if (s.region < 4096)
				return it_failf(2, "failed to use --region %s: not a size of at least 4K; "
						"give e.g. 256M or 1G", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return it_fail_option("extents", "r", argv);
		}
	}
	if (optind == argc)
		return it_failf(2, "failed to list extents: no PATH given; usage: iotrail extents "
				"[--json] [--region SIZE] PATH...");
	for (int i = optind; i < argc && !rc; i++) {
		int err = it_ext_walk(&s, argv[i], why, sizeof(why));
		if (err == -ENOMEM)
			rc = it_failf(1, "failed to walk %s: out of memory; walk fewer files at once",
				      argv[i]);
		else if (err)
			rc = it_failf(1, "failed to read %s: %s; give an existing file or directory",
				      argv[i], why);
	}
	if (!rc && !s.nfiles && s.unsupported)
		rc = it_failf(1, "failed to list extents: the file system of %s has no FIEMAP "
			      "(tmpfs, for one); give files on a block device's file system",
			      argv[optind]);
	if (!rc) {
		it_ext_read_zones(&s);
		it_ext_read_f2fs(&s);
		if (it_ext_finish(&s))
			rc = it_failf(1, "failed to map the extents: out of memory; walk fewer files "
				      "at once");
	}
	if (!rc) {
		if (json)
			it_ext_print_json(&s, stdout, pretty);
		else
			it_ext_print_text(&s, stdout);
		if (fflush(stdout) || ferror(stdout))
			rc = it_failf(1, "failed to write the extents: %s; check where stdout goes",
				      strerror(errno));
	}
	it_ext_set_free(&s);
	return rc;
}
