/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyze/json_writer.h"

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

static const char *cli_verb = "";
static bool cli_json;

void it_cli_set_verb(const char *verb)
{
	cli_verb = verb;
}

void it_cli_set_json(bool json)
{
	cli_json = json;
}

int it_failf(int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "iotrail%s%s: %s\n", *cli_verb ? " " : "", cli_verb, msg);
	if (cli_json) {
		struct it_json j;

		fflush(stdout);
		it_json_init(&j, stdout, false);
		it_json_object_start(&j);
		it_json_kv_uint(&j, "version", 1);
		it_json_kv_string(&j, "error", msg);
		it_json_object_end(&j);
		fflush(stdout);
	}
	return code;
}

int it_fail(int code, const char *what, const char *why, const char *todo)
{
	return it_failf(code, "failed to %s: %s%s%s", what, why, todo ? "; " : "", todo ? todo : "");
}

void it_cli_json_from_args(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			it_cli_set_json(true);
}

int it_fail_option(const char *verb, const char *needs_value, char **argv)
{
	if (optopt)
		return it_failf(2, "option '-%c' %s; see 'iotrail %s --help'", optopt,
				strchr(needs_value, optopt) ? "needs a value" : "is unknown", verb);
	return it_failf(2, "option '%s' is unknown or needs a value; see 'iotrail %s --help'",
			argv[optind - 1], verb);
}
