/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Command-line helpers shared by the subcommands. */
#ifndef IOTRAIL_CLI_H
#define IOTRAIL_CLI_H

#include <stdbool.h>

/* Call after getopt_long returned '?' or ':' (with opterr = 0 and a ':'
 * after any '+' in optstring): prints the one-line error for the option
 * getopt stopped at and returns 2, the exit status for bad usage. */
int it_bad_option(const char *verb, int c, char **argv);

/* The command running (main.c sets it) and whether it answers in JSON. */
void it_cli_set_verb(const char *verb);
void it_cli_set_json(bool json);

/* Sets JSON errors (it_cli_set_json) when --json or -j is among the
 * arguments before "--": call before getopt, so a usage error is JSON too. */
void it_cli_json_from_args(int argc, char **argv);
/* The it_failf line for getopt_long's '?' (with opterr = 0, no ':' in
 * optstring): needs_value lists the short options that take a value.
 * Returns 2. */
int it_fail_option(const char *verb, const char *needs_value, char **argv);

/* The one error line of every command, on stderr:
 *   iotrail VERB: failed to WHAT: WHY; TODO
 * (TODO may be NULL). Under --json, stdout also gets
 * {"version":1,"error":"failed to WHAT: WHY; TODO"}, so a consumer piping
 * the output never reads an empty document (as bpftool does). Returns code. */
int it_fail(int code, const char *what, const char *why, const char *todo);
/* The same with a free-form message (already "failed to ...; what to do"). */
__attribute__((format(printf, 2, 3))) int it_failf(int code, const char *fmt, ...);

#endif
