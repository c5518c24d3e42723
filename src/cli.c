/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>

int it_bad_option(const char *verb, int c, char **argv)
{
	/* getopt has already advanced optind past the offending word */
	const char *word = argv[optind - 1];

	if (c == ':')
		fprintf(stderr, "iotrail %s: option '%s' needs a value; run 'iotrail %s --help' for the options\n",
			verb, word, verb);
	else if (optopt && word[0] == '-' && word[1] != '-')
		fprintf(stderr, "iotrail %s: unknown option '-%c'; run 'iotrail %s --help' for the options\n",
			verb, optopt, verb);
	else
		fprintf(stderr, "iotrail %s: unknown option '%s'; run 'iotrail %s --help' for the options\n",
			verb, word, verb);
	return 2;
}
