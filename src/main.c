/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * iotrail: follow every storage I/O through Linux and tell where the time
 * went. This file only dispatches: `iotrail VERB ...`, where any unambiguous
 * prefix of a verb is accepted (as bpftool does).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

#ifndef IOTRAIL_VERSION
#define IOTRAIL_VERSION "0.1"
#endif

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "trace storage I/O into a trace file" },
	{ "report", cmd_report, "analyse a trace file: latency by stage, queue depth, sizes" },
	{ "probe",  cmd_probe,  "tell which layers this kernel can trace, and with which hooks" },
	{ "export", cmd_export, "write a trace file in another format (export --help lists them)" },
	{ "diff",   cmd_diff,   "compare two trace files: each stage's slowdown under load, the bottleneck" },
	{ "agent",  cmd_agent,  "serve `record --target` on a target machine (TLS, shared key)" },
	{ "query",  cmd_query,  "ask a target's agent: a stage's latest statistics (load, store, reset)" },
	{ "top",    cmd_top,    "live view of the block layer from in-kernel histograms (or --json)" },
	{ "serve",  cmd_serve,  "serve the in-kernel histograms to Prometheus over HTTP (/metrics)" },
	{ "extents", cmd_extents, "where files lie on their device: extents per file and per zone" },
	{ "cost",   cmd_cost,   "what an operator (scheduler, tracer, page cache) costs in CPU per I/O" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: iotrail COMMAND [OPTIONS]   (iotrail COMMAND --help for its options)\n\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nexample: iotrail record -o fio.trail -- fio job.fio && iotrail report fio.trail\n");
}

int main(int argc, char **argv)
{
	const struct command *match = NULL;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("iotrail %s\n", IOTRAIL_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strncmp(commands[i].name, argv[1], strlen(argv[1])))
			continue;
		if (!strcmp(commands[i].name, argv[1])) {
			match = &commands[i];
			break;
		}
		if (match) {
			fprintf(stderr, "iotrail: '%s' is ambiguous; run 'iotrail --help' for the commands\n",
				argv[1]);
			return 2;
		}
		match = &commands[i];
	}
	if (!match) {
		fprintf(stderr, "iotrail: unknown command '%s'; run 'iotrail --help' for the commands\n",
			argv[1]);
		return 2;
	}
	it_cli_set_verb(match->name);
	return match->fn(argc - 1, argv + 1);
}
