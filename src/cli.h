/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Command-line helpers shared by the subcommands. */
#ifndef IOTRAIL_CLI_H
#define IOTRAIL_CLI_H

/* Call after getopt_long returned '?' or ':' (with opterr = 0 and a ':'
 * after any '+' in optstring): prints the one-line error for the option
 * getopt stopped at and returns 2, the exit status for bad usage. */
int it_bad_option(const char *verb, int c, char **argv);

#endif
