/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The subcommands; main.c dispatches to them (argv[0] is the verb). */
#ifndef IOTRAIL_COMMANDS_H
#define IOTRAIL_COMMANDS_H

#include <stdint.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
/* `iotrail record`'s option parsing alone (argv[0] is the verb), as
 * cmd_record does it, starting nothing: 0 valid, 1 --help printed, -1 the
 * error line printed. For the fuzz target tests/fuzz/fuzz_args.c. */
int it_record_parse_only(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_query(int argc, char **argv);
/* the online mode (src/online/) */
int cmd_top(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_extents(int argc, char **argv);
int cmd_cost(int argc, char **argv);

/* Shared by report and diff (report.c): open a trace and build the
 * analysis layers it has (it_analysis_new), then run the one pass over
 * it. Each returns 0, or prints the error line and returns its exit
 * status; after a failed open nothing is left to free. */
struct it_reader;
struct it_analysis;
struct it_layer_opts;
struct it_pass_info;
int it_trace_analysis_open(const char *path, const struct it_layer_opts *o, uint16_t machine,
			   struct it_reader **rd, struct it_analysis **an, struct it_pass_info *info);
int it_trace_analysis_run(struct it_analysis *an, struct it_reader *rd, const char *path);

#endif
