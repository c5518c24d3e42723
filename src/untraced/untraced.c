// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Loads untraced.bpf.c, counts context switches for a while, and lists the
 * threads switched in at least twice and never seen switching away: the
 * threads this kernel runs no probe for while they are current (a thread
 * cannot be switched in twice without leaving the CPU in between, and the
 * switch away runs in its own context). Names come from /proc afterwards,
 * and the CPU time each ran in the window from /proc/TID/schedstat (read for
 * every thread when counting starts): how much of the machine's time no
 * probe sees.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "untraced.skel.h"
#include "untraced.h"

/* /proc/ID/comm (a thread's or a process's name), "" if it cannot be read. */
static void read_comm(uint32_t id, char *out, size_t len)
{
	char path[64];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/comm", id);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* tid's process (Tgid in /proc/TID/status), 0 if it has exited */
static uint32_t tgid_of(uint32_t tid)
{
	char path[64], line[128];
	unsigned tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* A thread's CPU time so far (schedstat's first field), 0 if unreadable. */
static uint64_t ran_ns_of(uint32_t tid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/schedstat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/* Every thread's CPU time when counting starts, sorted by tid. */
struct ran_at_start {
	uint32_t tid;
	uint64_t ns;
};

static int by_ran_tid(const void *a, const void *b)
{
	const struct ran_at_start *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* NULL when memory ran out (a thread left out would be charged all its time). */
static struct ran_at_start *snapshot_ran(size_t *n)
{
	struct ran_at_start *v = NULL;
	size_t cap = 0;
	DIR *procs = opendir("/proc");
	struct dirent *p, *t;
	char path[64];

	*n = 0;
	while (procs && (p = readdir(procs))) {
		DIR *tasks;

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/task", p->d_name);
		if (!(tasks = opendir(path)))
			continue;
		while ((t = readdir(tasks))) {
			if (t->d_name[0] < '0' || t->d_name[0] > '9')
				continue;
			if (*n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				struct ran_at_start *nv = realloc(v, ncap * sizeof(*v));

				if (!nv) {
					closedir(tasks);
					closedir(procs);
					free(v);
					return NULL;
				}
				v = nv;
				cap = ncap;
			}
			v[*n].tid = (uint32_t)strtoul(t->d_name, NULL, 10);
			v[*n].ns = ran_ns_of(v[*n].tid);
			(*n)++;
		}
		closedir(tasks);
	}
	if (procs)
		closedir(procs);
	if (*n)
		qsort(v, *n, sizeof(*v), by_ran_tid);
	return v ? v : calloc(1, sizeof(*v));
}

/* What tid ran since start was taken (all of it if it was born since). */
static uint64_t ran_since(uint32_t tid, const struct ran_at_start *start, size_t nstart)
{
	struct ran_at_start k = { .tid = tid }, *was;
	uint64_t now = ran_ns_of(tid);

	was = nstart ? bsearch(&k, start, nstart, sizeof(*start), by_ran_tid) : NULL;
	if (!was)
		return now;
	return now >= was->ns ? now - was->ns : 0;
}

static int by_tid(const void *a, const void *b)
{
	const struct it_untraced_task *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void sleep_for(double secs)
{
	struct timespec t = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* The map's threads switched in twice and never away, into u; start: the
 * threads' CPU time when counting started (a thread not in it was born
 * since: all its time is the window's). */
static int collect(int fd, struct it_untraced *u, const struct ran_at_start *start, size_t nstart,
		   char *why, size_t len)
{
	__u32 key, next, *prev = NULL;
	struct it_switch_counts c;
	size_t cap = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &c))
			continue;
		u->switches += c.in;
		if (c.in < 2 || c.away || !key) /* tid 0: the idle threads, one per CPU */
			continue;
		if (u->n == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			struct it_untraced_task *t = realloc(u->tasks, ncap * sizeof(*t));

			if (!t) {
				snprintf(why, len, "out of memory");
				return -1;
			}
			u->tasks = t;
			cap = ncap;
		}
		struct it_untraced_task *t = &u->tasks[u->n++];

		memset(t, 0, sizeof(*t));
		t->tid = key;
		t->in = c.in;
		read_comm(key, t->comm, sizeof(t->comm));
		t->tgid = tgid_of(key);
		if (t->tgid)
			read_comm(t->tgid, t->proc_comm, sizeof(t->proc_comm));
		t->ran_ns = ran_since(key, start, nstart);
		u->hidden_ns += t->ran_ns;
	}
	if (u->n)
		qsort(u->tasks, u->n, sizeof(*u->tasks), by_tid);
	return 0;
}

int it_untraced_watch(double secs, struct it_untraced *u, char *why, size_t len)
{
	struct untraced_bpf *k;
	struct ran_at_start *start;
	size_t nstart;
	long ncpus;
	int err;

	memset(u, 0, sizeof(*u));
	u->secs = secs;
	it_probes_loading();
	k = untraced_bpf__open_and_load();
	it_probes_loaded();
	if (!k) {
		snprintf(why, len, "could not load its BPF program on sched_switch (%s)", strerror(errno));
		return -1;
	}
	err = untraced_bpf__attach(k);
	if (err) {
		snprintf(why, len, "could not attach to the tracepoint sched_switch (%s)", strerror(-err));
		untraced_bpf__destroy(k);
		return -1;
	}
	start = snapshot_ran(&nstart);
	if (!start) {
		snprintf(why, len, "out of memory reading every thread's CPU time in /proc");
		untraced_bpf__destroy(k);
		return -1;
	}
	fprintf(stderr, "iotrail probe: counting context switches for %.1f s\n", secs);
	sleep_for(secs);
	untraced_bpf__detach(k);
	u->not_counted = k->bss->not_counted;
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	u->cpu_ns = (uint64_t)(secs * 1e9) * (uint64_t)(ncpus > 0 ? ncpus : 1);
	err = collect(bpf_map__fd(k->maps.switches), u, start, nstart, why, len);
	free(start);
	untraced_bpf__destroy(k);
	if (err)
		it_untraced_free(u);
	return err;
}

void it_untraced_free(struct it_untraced *u)
{
	free(u->tasks);
	u->tasks = NULL;
	u->n = 0;
}
