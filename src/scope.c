// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The scope's maps in a layer's BPF object (bpf/scope.bpf.h): sized before
 * load, seeded after attach. Seeding after attach closes the race with
 * fork: a process forked after its parent's bit is set is added by the
 * fork hook; one forked before is in /proc when it is read here.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "scope.h"

/* Reads "pid (comm) S ppid ..." from /proc/PID/stat. */
static int read_proc(pid_t pid, struct it_proc *p)
{
	char path[64], buf[512], *open, *close;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	open = strchr(buf, '(');
	close = strrchr(buf, ')'); /* a comm may hold ')' */
	if (!open || !close || close < open || sscanf(close + 1, " %*c %d", &p->ppid) != 1)
		return -1;
	p->pid = pid;
	n = close - open - 1;
	if (n >= sizeof(p->comm))
		n = sizeof(p->comm) - 1;
	memcpy(p->comm, open + 1, n);
	p->comm[n] = 0;
	return 0;
}

/* Every process in /proc; *n of them. NULL on failure. */
static struct it_proc *read_procs(size_t *n)
{
	struct it_proc *procs = NULL, *grown;
	size_t cap = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	*n = 0;
	if (!dir)
		return NULL;
	while ((d = readdir(dir))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(procs, cap * sizeof(*procs));
			if (!grown) {
				free(procs);
				closedir(dir);
				return NULL;
			}
			procs = grown;
		}
		if (!read_proc(atoi(d->d_name), &procs[*n]))
			(*n)++;
	}
	closedir(dir);
	return procs ? procs : calloc(1, sizeof(*procs));
}

void it_scope_size_maps(const struct it_scope *sc, struct bpf_map *pid_bits,
			struct bpf_map *comm_bits)
{
	if (!sc || !sc->npids)
		bpf_map__set_max_entries(pid_bits, 1);
	if (!sc || !sc->comm)
		bpf_map__set_max_entries(comm_bits, 1);
}

/* Not atomic against the fork program setting another bit of the same
 * word: a child forked in the very microseconds its sibling is seeded
 * could be lost (the window is one map update). */
int it_scope_set_bit(struct bpf_map *bits, pid_t pid)
{
	uint32_t k = ((uint32_t)pid >> 6) & 0xffff;
	uint64_t w = 0;

	if (bpf_map__lookup_elem(bits, &k, sizeof(k), &w, sizeof(w), 0))
		return -errno;
	w |= 1ull << (pid & 63);
	return bpf_map__update_elem(bits, &k, sizeof(k), &w, sizeof(w), 0) ? -errno : 0;
}

/* Roots (a PID given, or a comm that matches) and their descendants, from
 * one snapshot of /proc, into bits. */
static int seed_set(struct bpf_map *bits, const struct it_scope *sc, bool by_comm,
		    const struct it_proc *procs, size_t n)
{
	bool *in = calloc(n ? n : 1, sizeof(*in));
	int err = 0;

	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (by_comm) {
			in[i] = it_scope_comm_match(procs[i].comm, sc->comm);
			continue;
		}
		for (size_t j = 0; j < sc->npids; j++)
			in[i] |= procs[i].pid == sc->pids[j];
	}
	it_scope_close_descendants(procs, n, in);
	/* a PID given is in even if /proc could not be read for it */
	for (size_t j = 0; !by_comm && !err && j < sc->npids; j++)
		err = it_scope_set_bit(bits, sc->pids[j]);
	for (size_t i = 0; !err && i < n; i++)
		if (in[i])
			err = it_scope_set_bit(bits, procs[i].pid);
	free(in);
	return err;
}

int it_scope_seed(const struct it_scope *sc, struct bpf_map *pid_bits, struct bpf_map *comm_bits,
		  struct bpf_map *cgroup_map, char *err, size_t errlen)
{
	struct it_proc *procs;
	size_t n;
	int rc = 0, zero = 0;

	if (!it_scope_on(sc))
		return 0;
	if (sc->cgroup_fd >= 0 &&
	    bpf_map__update_elem(cgroup_map, &zero, sizeof(zero), &sc->cgroup_fd,
				 sizeof(sc->cgroup_fd), 0)) {
		rc = -errno;
		snprintf(err, errlen, "cannot use cgroup %s: %s", sc->cgroup, strerror(-rc));
		return rc;
	}
	if (!sc->npids && !sc->comm)
		return 0;
	procs = read_procs(&n);
	if (!procs) {
		snprintf(err, errlen, "cannot read /proc: %s", strerror(errno));
		return -errno;
	}
	if (sc->npids)
		rc = seed_set(pid_bits, sc, false, procs, n);
	if (!rc && sc->comm)
		rc = seed_set(comm_bits, sc, true, procs, n);
	free(procs);
	if (rc)
		snprintf(err, errlen, "cannot fill the process filter: %s", strerror(-rc));
	return rc;
}
