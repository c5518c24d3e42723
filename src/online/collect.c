// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Loads online.bpf.c (tp_btf, else raw_tp where tp_btf does not load) and
 * reads its per-CPU maps into snapshots: each key's copies summed over
 * CPUs, the miss counters, and the completion program's recursion misses
 * (completions the kernel ran no probe for because one was running on
 * that CPU already).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "hooks.h"
#include "hostinfo.h"
#include "online/collect.h" /* the skeleton's zero_value is a struct ol_value */
#include "online.skel.h"

struct ol_collector {
	struct online_bpf *skel;
	int ncpu;
	bool raw_tp;
	struct ol_value *percpu; /* ncpu values: one lookup's answer */
};

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* 1 when block_rq_issue still takes (q, rq) (before v5.11), from the
 * arity of its BTF typedef; 0 when not or when the BTF cannot tell. */
static int rq_tp_has_queue_arg(void)
{
	return it_btf_trace_arity("block_rq_issue") == 2; /* ([q,] rq) */
}

/* The value of this kernel's enumerator `name` (its flag bit numbers are
 * enumerators in BTF since about 6.x), or -1 when its BTF has none. */
static long long btf_enumerator(const char *name)
{
	const struct btf *btf = it_vmlinux_btf();
	uint32_t n = btf ? btf__type_cnt(btf) : 0;

	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e = btf_is_enum(t) ? btf_enum(t) : NULL;

		for (uint16_t i = 0; e && i < btf_vlen(t); i++, e++)
			if (!strcmp(btf__name_by_offset(btf, e->name_off), name))
				return e->val;
	}
	return -1;
}

/* The flag (1 << bit) of the rq_flags bit __RQF_name: 0 when unknown */
static uint32_t rq_flag(const char *name)
{
	long long bit = btf_enumerator(name);

	return bit >= 0 && bit < 32 ? 1u << bit : 0;
}

static struct online_bpf *load(bool raw_tp, const uint32_t *devs, size_t ndevs, int *err)
{
	struct online_bpf *k = online_bpf__open();
	struct bpf_program *p;
	long long stats_bit;

	if (!k) {
		*err = errno;
		return NULL;
	}
	k->rodata->tp_has_queue_arg = rq_tp_has_queue_arg();
	/* RQF_FLUSH_SEQ was (1 << 4) for years before it was an enumerator */
	k->rodata->rqf_flush_seq = btf_enumerator("__RQF_FLUSH_SEQ") < 0 ? 1u << 4
									 : rq_flag("__RQF_FLUSH_SEQ");
	/* where this kernel's BTF has no such enumerators, the probes time
	 * every issue themselves (the map the kernel's times replace) */
	k->rodata->rqf_stats = rq_flag("__RQF_STATS");
	stats_bit = btf_enumerator("QUEUE_FLAG_STATS");
	k->rodata->queue_stats_bit = k->rodata->rqf_stats && stats_bit >= 0 && stats_bit < 64
					     ? (uint32_t)stats_bit : 64;
	/* the tests take the fallback on a kernel that has them */
	if (getenv("IOTRAIL_ONLINE_OWN_ISSUE_TIME")) {
		k->rodata->rqf_stats = 0;
		k->rodata->queue_stats_bit = 64;
	}
	k->rodata->filter_ndevs = (uint32_t)ndevs;
	for (size_t i = 0; i < ndevs && i < OL_MAX_DEVS; i++)
		k->rodata->filter_devs[i] = devs[i];
	bpf_object__for_each_program(p, k->obj) {
		bool is_btf = bpf_program__type(p) == BPF_PROG_TYPE_TRACING;

		bpf_program__set_autoload(p, raw_tp ? !is_btf : is_btf);
	}
	/* every question to the BTF is answered: libbpf parses its own copy
	 * for the load, so ours goes first (parsed again for a retry) */
	it_vmlinux_btf_release();
	*err = -online_bpf__load(k);
	if (!*err)
		*err = -online_bpf__attach(k);
	if (*err) {
		online_bpf__destroy(k);
		return NULL;
	}
	return k;
}

int ol_collector_open(struct ol_collector **out, const uint32_t *devs, size_t ndevs,
		      char *err, size_t errlen)
{
	struct ol_collector *c = calloc(1, sizeof(*c));
	libbpf_print_fn_t outer;
	int e = 0;

	*out = NULL;
	if (!c) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	c->ncpu = libbpf_num_possible_cpus();
	c->percpu = c->ncpu > 0 ? calloc((size_t)c->ncpu, sizeof(*c->percpu)) : NULL;
	if (!c->percpu) {
		snprintf(err, errlen, "cannot count the CPUs or allocate for them");
		free(c);
		return -1;
	}
	outer = libbpf_set_print(quiet_libbpf);
	it_probes_loading();
	c->skel = load(false, devs, ndevs, &e);
	if (!c->skel) {
		c->raw_tp = true;
		c->skel = load(true, devs, ndevs, &e);
	}
	libbpf_set_print(outer);
	it_probes_loaded();
	if (!c->skel) {
		snprintf(err, errlen, "the block probes did not load or attach (%s)", strerror(e));
		ol_collector_close(c);
		return -1;
	}
	*out = c;
	return 0;
}

const char *ol_collector_hooks(const struct ol_collector *c)
{
	return c->raw_tp ? "raw_tp" : "tp_btf";
}

static uint64_t recursion_misses(struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.recursion_misses;
}

int ol_collector_read(struct ol_collector *c, struct ol_snapshot *s)
{
	int hists = bpf_map__fd(c->skel->maps.hists), misses = bpf_map__fd(c->skel->maps.misses);
	struct ol_key key, next, *prev = NULL;
	struct timespec ts;
	uint64_t percpu_miss[c->ncpu];

	ol_snapshot_clear(s);
	/* the counters first, then the time: an interval may hold I/Os a
	 * little later than its end, never earlier than its start */
	while (!bpf_map_get_next_key(hists, prev, &next)) {
		struct ol_value *v;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(hists, &key, c->percpu))
			continue; /* never deleted: not reached */
		v = ol_snapshot_slot(s, key);
		if (!v)
			return -1;
		for (int cpu = 0; cpu < c->ncpu; cpu++)
			ol_value_add(v, &c->percpu[cpu]);
	}
	for (__u32 m = 0; m < OL_NMISS; m++) {
		if (bpf_map_lookup_elem(misses, &m, percpu_miss))
			return -1;
		for (int cpu = 0; cpu < c->ncpu; cpu++)
			s->missed[m] += percpu_miss[cpu];
	}
	s->nested = recursion_misses(c->raw_tp ? c->skel->progs.online_complete
					       : c->skel->progs.online_complete_btf);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->taken_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

void ol_collector_detach(struct ol_collector *c)
{
	if (!c || !c->skel)
		return;
	online_bpf__detach(c->skel);
	/* a probe already running when its link went may still be adding:
	 * they take microseconds, the final read waits a little more */
	usleep(20000);
}

void ol_collector_close(struct ol_collector *c)
{
	if (!c)
		return;
	if (c->skel)
		online_bpf__destroy(c->skel);
	free(c->percpu);
	free(c);
}

int ol_add_dev(const char *spec, uint32_t *devs, size_t *ndevs)
{
	char err[256];

	if (*ndevs == OL_MAX_DEVS)
		return it_fail(2, "add --dev", "too many devices", "give at most 16");
	if (it_dev_resolve(spec, &devs[*ndevs], err, sizeof(err)))
		return it_fail(2, "resolve --dev", err, "list devices with lsblk");
	(*ndevs)++;
	return 0;
}
