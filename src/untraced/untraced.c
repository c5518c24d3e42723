// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Loads untraced.bpf.c, counts context switches for a while, and lists the
 * threads switched in at least twice and never seen switching away: the
 * threads this kernel runs no probe for while they are current (a thread
 * cannot be switched in twice without leaving the CPU in between, and the
 * switch away runs in its own context). Names come from /proc afterwards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hooks.h"
#include "untraced.skel.h"
#include "untraced.h"

/* The first line of /proc/PATH (a comm), "" if it cannot be read. */
static void read_comm(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	out[0] = '\0';
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

/* The map's threads switched in twice and never away, into u. */
static int collect(int fd, struct it_untraced *u, char *why, size_t len)
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
		char path[64];

		memset(t, 0, sizeof(*t));
		t->tid = key;
		t->in = c.in;
		snprintf(path, sizeof(path), "/proc/%u/comm", key);
		read_comm(path, t->comm, sizeof(t->comm));
		t->tgid = tgid_of(key);
		if (t->tgid) {
			snprintf(path, sizeof(path), "/proc/%u/comm", t->tgid);
			read_comm(path, t->proc_comm, sizeof(t->proc_comm));
		}
	}
	if (u->n)
		qsort(u->tasks, u->n, sizeof(*u->tasks), by_tid);
	return 0;
}

int it_untraced_watch(double secs, struct it_untraced *u, char *why, size_t len)
{
	struct untraced_bpf *k;
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
	fprintf(stderr, "iotrail probe: counting context switches for %.1f s\n", secs);
	sleep_for(secs);
	untraced_bpf__detach(k);
	u->not_counted = k->bss->not_counted;
	err = collect(bpf_map__fd(k->maps.switches), u, why, len);
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
