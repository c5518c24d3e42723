/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The recording's scope: which processes every layer records. By default
 * every process (a COMMAND only bounds the recording in time); -p, --comm
 * and --cgroup restrict every layer the same way, with descendants. The
 * kernel side is bpf/scope.bpf.h (each BPF object that filters by process
 * includes it); this is the user side: parsing (src/scope_ids.c, pure C,
 * unit-tested) and seeding a layer's maps (src/scope.c, libbpf).
 */
#ifndef IOTRAIL_SCOPE_H
#define IOTRAIL_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include "task.h"

struct it_scope {
	pid_t *pids;          /* -p, as given (the descendants are found at start) */
	size_t npids;
	const char *comm;     /* --comm: a name prefix; NULL: any */
	const char *cgroup;   /* --cgroup: a cgroup v2 directory; NULL: any */
	int cgroup_fd;        /* that directory, open; -1 without --cgroup */
	/* a task's I/O predicate and sampling (--filter, --sample; task.h):
	 * decided with the process tests at an I/O's first event */
	const struct it_filter *filter; /* NULL or no clause: every I/O */
	uint32_t sample_n;    /* 1 in N; 0 or 1: every I/O */
	uint32_t sample_epoch_n;   /* the first N of each epoch (--sample N/EPOCH); 0: off */
	uint64_t sample_epoch_ns;
};

static inline bool it_scope_on(const struct it_scope *sc)
{
	return sc && (sc->npids || sc->comm || sc->cgroup);
}

/* Whether a task's predicate (--filter), its sampling (--sample), either
 * decides which I/Os are kept. */
static inline bool it_task_filters(const struct it_scope *sc)
{
	return sc && sc->filter && sc->filter->n;
}

static inline bool it_task_samples(const struct it_scope *sc)
{
	return sc && (sc->sample_n > 1 || sc->sample_epoch_n);
}

static inline bool it_task_decides(const struct it_scope *sc)
{
	return it_task_filters(sc) || it_task_samples(sc);
}

/* Whether I/Os are tracked from their first event: a process scope, a
 * predicate or sampling (the block and NVMe layers' `scoped`). */
static inline bool it_scope_tracks(const struct it_scope *sc)
{
	return it_scope_on(sc) || it_task_decides(sc);
}

/* ---- pure (scope_ids.c) ---- */

/* Whether arg is a PID list: digits, separated by commas and blanks, at
 * least one digit. `-p $(pidof postgres)` hands the shell's split words
 * to -p one by one: `iotrail record` takes the words after -p that are
 * PID lists as more PIDs. */
bool it_scope_is_pid_list(const char *arg);

/* Appends the PIDs of "12,13 14" to *pids (realloc'ed). 0, or -1 with
 * why in err (not a PID, out of memory). Duplicates are dropped. */
int it_scope_add_pids(const char *arg, pid_t **pids, size_t *npids, char *err, size_t errlen);

/* One process of the system: its pid, its parent's, its comm. */
struct it_proc {
	pid_t pid, ppid;
	char comm[16];
};

/* Marks in[i] every process of procs[] (n of them) that descends from one
 * already marked (in[] holds the roots on entry). Returns how many are
 * marked. A parent may come after its child in procs[]: this iterates to
 * a fixed point. */
size_t it_scope_close_descendants(const struct it_proc *procs, size_t n, bool *in);

/* Whether a comm starts with prefix (--comm). */
static inline bool it_scope_comm_match(const char *comm, const char *prefix)
{
	return !strncmp(comm, prefix, strlen(prefix));
}

/* ---- with libbpf (scope.c) ---- */

struct bpf_map;

/* The scope's tunables into a skeleton's read-only data (before load). */
#define IT_SCOPE_RODATA(rodata, sc)                                                  \
	do {                                                                         \
		(rodata)->scope_pids = (sc) && (sc)->npids > 0;                      \
		(rodata)->scope_cgroup = (sc) && (sc)->cgroup;                       \
		(rodata)->scope_comm_len = (sc) && (sc)->comm ? strlen((sc)->comm) : 0; \
		if ((rodata)->scope_comm_len)                                        \
			memcpy((char *)(rodata)->scope_comm, (sc)->comm,             \
			       (rodata)->scope_comm_len);                            \
	} while (0)

/* The predicate and sampling into the block object's read-only data. */
#define IT_SCOPE_PRED_RODATA(rodata, sc)                                             \
	do {                                                                         \
		const struct it_filter *f_ = (sc) ? (sc)->filter : NULL;             \
		(rodata)->scope_sample_n = (sc) ? (sc)->sample_n : 0;                \
		(rodata)->scope_sample_epoch_n = (sc) ? (sc)->sample_epoch_n : 0;    \
		(rodata)->scope_sample_epoch_ns = (sc) ? (sc)->sample_epoch_ns : 0;  \
		(rodata)->scope_pred_n = f_ ? f_->n : 0;                             \
		for (unsigned int i_ = 0; f_ && i_ < f_->n; i_++) {                  \
			(rodata)->scope_pred_ops[i_] = f_->c[i_].ops;                \
			(rodata)->scope_pred_min[i_] = f_->c[i_].size_min;           \
			(rodata)->scope_pred_max[i_] = f_->c[i_].size_max;           \
			(rodata)->scope_pred_dev[i_] = f_->c[i_].dev;                \
		}                                                                    \
	} while (0)

/* Before load: the sets that are off take one entry, not 512 KiB. */
void it_scope_size_maps(const struct it_scope *sc, struct bpf_map *pid_bits,
			struct bpf_map *comm_bits);

/* Sets pid's bit in a bitmap over the pid space (scope.bpf.h's layout).
 * 0 or -errno. */
int it_scope_set_bit(struct bpf_map *bits, pid_t pid);

/* After attach (the fork hook runs): the PIDs, the processes whose comm
 * matches, and the descendants of both alive now into the sets; the
 * cgroup into its map. 0, or -errno with why in err. */
int it_scope_seed(const struct it_scope *sc, struct bpf_map *pid_bits, struct bpf_map *comm_bits,
		  struct bpf_map *cgroup_map, char *err, size_t errlen);

#endif
