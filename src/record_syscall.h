/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail record`'s syscall layer: its options (--layers, --calls, --comm,
 * --cgroup, --path, --tid, --syscall-hook), starting it beside the block
 * layer on the same ring_buffer poll, its records into the trace file, its
 * losses and summary. record.c calls these; src/syscall_layer.c loads the
 * probes.
 */
#ifndef IOTRAIL_RECORD_SYSCALL_H
#define IOTRAIL_RECORD_SYSCALL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "syscall_layer.h"

struct ring_buffer;
struct it_writer;

#define REC_LAYER_BLOCK   (1u << 0)
#define REC_LAYER_SYSCALL (1u << 1)

/* getopt codes of the options below (long only) */
enum {
	REC_OPT_LAYERS = 0x300, REC_OPT_CALLS, REC_OPT_COMM, REC_OPT_CGROUP, REC_OPT_PATH,
	REC_OPT_TID, REC_OPT_SYSCALL_HOOK,
};
#define REC_SYS_LONGOPTS                                                    \
	{ "layers", required_argument, NULL, REC_OPT_LAYERS },              \
	{ "calls", required_argument, NULL, REC_OPT_CALLS },                \
	{ "comm", required_argument, NULL, REC_OPT_COMM },                  \
	{ "cgroup", required_argument, NULL, REC_OPT_CGROUP },              \
	{ "path", required_argument, NULL, REC_OPT_PATH },                  \
	{ "tid", required_argument, NULL, REC_OPT_TID },                    \
	{ "syscall-hook", required_argument, NULL, REC_OPT_SYSCALL_HOOK }

struct rec_sys_opts {
	unsigned layers;           /* REC_LAYER_*; 0: every layer this kernel supports */
	bool layers_default;       /* layers not given: a layer that fails to load is left out */
	struct it_syscall_opts sys;
};

/* Handles one of the options above; 0, or -1 after a one-line message. */
int rec_sys_parse(struct rec_sys_opts *o, int code, const char *arg);
/* The option lines of `iotrail record --help`. */
void rec_sys_usage(FILE *f);
/* Settles the layers once all options are read: the default is every
 * layer this kernel supports. pid: -p, cmd: whether `-- COMMAND` runs.
 * Returns 0, or -1 after a one-line message. */
int rec_sys_settle(struct rec_sys_opts *o, pid_t pid, bool cmd, bool verbose);

struct rec_sys;

/* Loads and attaches the layer (NULL when it is not recorded); on failure
 * *failed is set after a one-line message. hooks gets ";syscall=KIND". */
struct rec_sys *rec_sys_start(const struct rec_sys_opts *o, char *hooks, size_t len,
			      bool *failed);
/* Polls the layer on rb (another layer's ring_buffer), or, with *rb NULL,
 * hands out the layer's own ring in *rb (owned by the layer). */
int rec_sys_ring(struct rec_sys *r, struct ring_buffer **rb);
/* Records go to w from now on. */
void rec_sys_set_writer(struct rec_sys *r, struct it_writer *w);
/* Around the fork of COMMAND: its process tree is what gets traced. */
void rec_sys_adopt(struct rec_sys *r, bool on);
/* Stops the probes; what is in the ring can still be consumed. */
void rec_sys_detach(struct rec_sys *r);
/* Before the writer closes: per-CPU losses into the file. */
void rec_sys_finish(struct rec_sys *r, struct it_writer *w);
/* First failure of the writer seen by the sink (-errno), 0 if none. */
int rec_sys_error(const struct rec_sys *r);
/* "N system calls, N lost" for the summary line ("" without the layer). */
void rec_sys_summary(const struct rec_sys *r, char *out, size_t len);
void rec_sys_free(struct rec_sys *r);

#endif
