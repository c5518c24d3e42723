/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The subcommands; main.c dispatches to them (argv[0] is the verb). */
#ifndef IOTRAIL_COMMANDS_H
#define IOTRAIL_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
