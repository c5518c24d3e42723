// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The block layer on the recording side: bio queue, merge, split, request
 * insert, issue, requeue and complete (block.bpf.c), one struct it_event
 * per probe hit into its CPU's event ring (the rings merged by time,
 * evring.h), packed into the trace file straight from ring memory; zoned
 * devices' zone tables at the start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "iotrail/task_counts.h" /* before the skeleton: its .bss has struct it_count_slot */
#include "block.skel.h"
#include "cli.h"
#include "evring.h"
#include "flight.h"
#include "hostinfo.h"
#include "layer.h"
#include "layers/block/record_zones.h"
#include "tracefile.h"

IT_SKEL_OPS(block);

/* Each tracepoint has a tp_btf program X_btf and a raw_tp twin X. */
enum { H_FORK = 12, H_EXIT_TASK };
#define BLOCK_HOOK(tp) { #tp, "block", NULL, false, { [IT_HOOK_TP_BTF] = #tp "_btf", [IT_HOOK_RAW_TP] = #tp } }
static const struct it_hook_def block_hooks[] = {
	BLOCK_HOOK(block_bio_queue),
	BLOCK_HOOK(block_bio_backmerge),
	BLOCK_HOOK(block_bio_frontmerge),
	BLOCK_HOOK(block_split),
	BLOCK_HOOK(block_bio_complete),
	BLOCK_HOOK(block_rq_insert),
	BLOCK_HOOK(block_rq_issue),
	BLOCK_HOOK(block_rq_requeue),
	BLOCK_HOOK(block_rq_complete),
	BLOCK_HOOK(block_rq_merge),
	/* v6.5+: I/O accounting start/done; informative, not used yet */
	{ "block_io_start", "block", NULL, true, { 0 } },
	{ "block_io_done", "block", NULL, true, { 0 } },
	/* the scope's descendants (bpf/scope.bpf.h), with -p or --comm only */
	[H_FORK] = { "sched_process_fork", "sched", NULL, true, { [IT_HOOK_RAW_TP] = "scope_fork" } },
	[H_EXIT_TASK] = { "sched_process_exit", "sched", NULL, true,
			  { [IT_HOOK_RAW_TP] = "scope_exit" } },
};
#define NHOOKS (sizeof(block_hooks) / sizeof(block_hooks[0]))

static struct {
	struct block_bpf *skel;
	struct it_session *s;
	uint64_t events, ios, dropped, missed;
	uint64_t *drops;             /* per CPU, s->ncpu of them */
	size_t ring_bytes;           /* each CPU's ring */
	struct it_ev_bufs bufs;       /* each CPU's event buffer (events.bpf.h) */
	bool task_counted;           /* the task decided: io_counts are its totals */
	uint64_t io_counts[IT_IOC_MAX]; /* kept, skipped by sampling, rejected */
} b;

/* The v5.11 block tracepoint change (commit a54895fa057c): 1 when
 * block_rq_issue still takes (q, rq), 0 when it takes (rq), -errno when the
 * kernel BTF cannot tell. */
static int tp_has_queue_arg(void)
{
	int n = it_btf_trace_arity("block_rq_issue"); /* ([q,] rq) */

	return n < 0 ? n : n == 2;
}

/* RQF_FLUSH_SEQ of request->rq_flags: since the flags became bit numbers
 * the kernel's BTF has the enumerator __RQF_FLUSH_SEQ, in an enum that is
 * named (rqf_flags, 6.18) or not (6.12), so it is looked up by the
 * enumerator's name; before, it was a #define, (1 << 4), with no BTF. */
static uint32_t rqf_flush_seq(void)
{
	const struct btf *btf = it_vmlinux_btf();
	uint32_t n = btf ? btf__type_cnt(btf) : 0;

	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (uint16_t i = 0; i < btf_vlen(t); i++, e++)
			if (!strcmp(btf__name_by_offset(btf, e->name_off), "__RQF_FLUSH_SEQ"))
				return e->val < 32 ? 1u << e->val : 0;
	}
	return 1u << 4;
}

static int configure(void *skel, enum it_hook_kind *kinds, void *ctx)
{
	struct block_bpf *k = skel;
	const struct it_session *s = ctx;
	int qarg = tp_has_queue_arg();

	k->rodata->rqf_flush_seq = rqf_flush_seq();
	if (qarg < 0 && s->verbose)
		fprintf(stderr, "iotrail record: cannot read btf_trace_block_rq_issue (%s); "
			"assuming the v5.11+ tracepoint arguments\n", strerror(-qarg));
	k->rodata->tp_has_queue_arg = qarg == 1;
	k->rodata->filter_ndevs = s->ndevs;
	for (size_t i = 0; i < s->ndevs; i++)
		k->rodata->filter_devs[i] = s->devs[i];
	k->rodata->scoped = it_scope_tracks(s->scope);
	IT_SCOPE_RODATA(k->rodata, s->scope);
	IT_SCOPE_PRED_RODATA(k->rodata, s->scope);
	it_scope_size_maps(s->scope, k->maps.scope_pid_bits, k->maps.scope_comm_bits);
	k->rodata->scope_mark_calls = s->io_marks && it_task_decides(s->scope);
	/* --ringbuf-mb split among the CPUs' event buffers (events.bpf.h)
	 * and rings (hooks.h); the ring takes the events of interrupting
	 * programs, the NVMe target's and the fabric's. The consumer is
	 * woken early only when half of one is used (IT_WAKE_SHARE). */
	it_ev_bufs_size(&b.bufs, k->maps.ev_bufs, (size_t)s->ringbuf_mb << 20, s->ncpu, 4,
			&b.ring_bytes);
	k->rodata->wakeup_bytes = b.ring_bytes / IT_WAKE_SHARE;
	k->rodata->ev_buf_mask = b.bufs.data_bytes - 1;
	k->rodata->ev_buf_wakeup = b.bufs.data_bytes / IT_WAKE_SHARE;
	/* (the rings themselves are made at attach: cpu_rings.bpf.h) */
	bpf_map__set_max_entries(k->maps.events, s->ncpu);
	if (!k->rodata->scoped) /* the scope's bookkeeping map stays unused: keep it small */
		bpf_map__set_max_entries(k->maps.tracked, 64);
	/* descendants are followed only for -p and --comm */
	if (!k->rodata->scope_pids && !k->rodata->scope_comm_len)
		kinds[H_FORK] = kinds[H_EXIT_TASK] = IT_HOOK_NONE;
	return 0;
}

/* Each event is packed into the writer's chunk straight from the ring
 * buffer: no copy in between (evpack.h). */
static int on_event(void *ctx, void *data, size_t size)
{
	struct it_session *s = ctx;
	const struct it_event *e = data;

	if (size < sizeof(*e))
		return 0;
	b.events++;
	s->consumed++;
	b.ios += it_event_ends_io(e);
	if (s->flight) {
		s->flight_fired |= it_flight_add(s->flight, e);
		return 0;
	}
	if (!s->err && s->w)
		s->err = it_writer_add_record(s->w, 0, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, e, sizeof(*e));
	return s->err; /* a failing writer stops consumption */
}

static int load_error(int err, const char *why, bool verbose)
{
	err = -err;
	if (err == EPERM || (err == EACCES && geteuid() != 0))
		return it_fail(-1, "load the BPF programs", strerror(err),
			       "run as root (or with CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE)");
	if (err == ENOENT)
		return it_fail(-1, "attach the block probes",
			       "no block tracepoint is usable here", "see `iotrail probe`");
	if (err == ENOSYS)
		return it_fail(-1, "load the BPF programs", "this kernel has no bpf() system call",
			       "use a kernel built with CONFIG_BPF_SYSCALL=y");
	return it_fail(-1, "load the BPF programs", why,
		       verbose ? "see libbpf's messages above" : "rerun with -v to see why");
}

static int start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	enum it_hook_kind kinds[NHOOKS];
	struct it_hook_load l = {
		.layer = "block", .hooks = block_hooks, .nhooks = NHOOKS, .skel = &block_skel_ops,
		.configure = configure, .ctx = s, .force = s->force_hook, .verbose = s->verbose,
	};
	int err;

	b.s = s;
	b.drops = calloc(s->ncpu, sizeof(*b.drops));
	if (!b.drops)
		return it_fail(-1, "start the block layer", "out of memory", NULL);
	b.skel = it_hooks_load(&l, kinds, hooks, hlen, why, wlen, &err);
	if (!b.skel)
		return load_error(err, why, s->verbose);
	/* the shared event stream starts here; the NVMe layer joins it */
	s->ev.events = b.skel->maps.events;
	s->ev.drops = b.skel->maps.drops;
	s->ev.tracked = b.skel->maps.tracked;
	s->ev.wakeup_bytes = b.skel->rodata->wakeup_bytes;
	s->ev.bufs = b.bufs.map;
	s->ev.buf_mask = b.skel->rodata->ev_buf_mask;
	s->ev.buf_wakeup = b.skel->rodata->ev_buf_wakeup;
	if (b.skel->rodata->scope_mark_calls) {
		s->marks = b.skel->maps.scope_io_marks;
		s->call_counts = b.skel->maps.scope_call_counts;
	}
	return 1;
}

static int attach(struct it_session *s, char *why, size_t wlen)
{
	struct it_evring *evr;
	int err = 0;

	/* A ring per CPU into the events array, made and mapped here, not
	 * at load: mapped, their pages count in the recorder's memory twice
	 * (user space maps them twice), and the next layers' loads parse the
	 * kernel's BTF beside them: the start-up peak of
	 * test_record_memory.sh. Before any probe that writes them is
	 * attached: one that found its CPU's slot empty would count its
	 * event as dropped. */
	err = it_evring_make(&evr, bpf_map__fd(b.skel->maps.events), s->ncpu, b.ring_bytes,
			     s->ncpu, on_event, NULL, s);
	if (!err)
		err = it_ev_bufs_map(&b.bufs, evr, s->ncpu);
	if (!err)
		err = it_session_add_evring(s, evr);
	else if (evr)
		it_evring_free(evr);
	if (err)
		return it_fail(-1, "make the per-CPU ring buffers", strerror(-err),
			       err == -ENOMEM || err == -EPERM ?
			       "give a smaller --ringbuf-mb, or raise the locked-memory limit" : NULL);
	err = block_bpf__attach(b.skel);

	if (err)
		return it_fail(-1, "attach the block probes", strerror(-err),
			       "check `iotrail probe` for what this kernel supports");
	/* after attach: the fork hook adds what is forked from now on */
	err = it_scope_seed(s->scope, b.skel->maps.scope_pid_bits, b.skel->maps.scope_comm_bits,
			    b.skel->maps.scope_cgroup_map, why, wlen);
	if (err)
		return it_fail(-1, "set up the block layer's process filter", why, NULL);
	return 1;
}

/* Before any event: zoned devices' zone layout, and the start of the
 * diskstats window (when the counters were read, the probes attached). */
static void begin(struct it_session *s)
{
	struct it_event e = { .ts_ns = s->disk_from_ns, .type = IT_EV_DISKSTATS_FROM,
			      .layer = IT_LAYER_BLOCK, .flags = it_scope_tracks(s->scope) ? IT_DSF_SCOPED : 0,
			      .tag = 0xffff, .hwq = 0xffff, .op = IT_OP_OTHER };

	it_record_zone_table(s->w, s->devices, s->ndevices, s->start_ns);
	if (s->flight) /* the kernel's counts span the run, the file its last window */
		return;
	/* a failure here shows as a trace without the window (not reconciled) */
	it_writer_add_record(s->w, 0, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, &e, sizeof(e));
}

static void tick(struct it_session *s)
{
	b.dropped = it_percpu_counter(b.skel->maps.drops, b.drops, b.s->ncpu);
	if (s->w) /* the next chunks' headers carry it: a file cut short still tells */
		it_writer_set_lost(s->w, 0, IT_LAYER_BLOCK, b.dropped);
}

static void detach(void)
{
	block_bpf__detach(b.skel);
}

/* The kernel's own counts of the devices that were busy (IT_EV_DISKSTATS),
 * right before the probes detach: the report reconciles them with the
 * completions seen since IT_EV_DISKSTATS_FROM, and warns when the block
 * layer recorded nothing. */
static int write_diskstats(struct it_session *s)
{
	uint64_t now = s->disk_to_ns;
	int err = 0;

	if (s->flight)
		return 0;
	for (size_t i = 0; i < s->ndisk && !err; i++) {
		const struct it_disk_delta *d = &s->disk[i];
		struct it_event e = { .ts_ns = now, .type = IT_EV_DISKSTATS, .layer = IT_LAYER_BLOCK,
				      .dev = d->dev, .sector = d->reads, .aux = d->writes,
				      .id = d->flushes, .bytes = (uint32_t)d->discards,
				      .tag = 0xffff, .hwq = 0xffff, .op = IT_OP_OTHER };

		err = it_writer_add_record(s->w, 0, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, &e, sizeof(e));
	}
	return err;
}

/* A per-CPU struct it_task_counts (map[key]) summed over the CPUs. 0 or -errno. */
static int sum_counts(struct bpf_map *map, __u32 key, uint64_t out[4])
{
	int n = libbpf_num_possible_cpus(), err;
	struct it_task_counts *v;

	memset(out, 0, 4 * sizeof(*out));
	if (n <= 0 || !(v = calloc(n, sizeof(*v))))
		return -ENOMEM;
	err = bpf_map__lookup_elem(map, &key, sizeof(key), v, n * sizeof(*v), 0);
	for (int i = 0; !err && i < n; i++)
		for (int k = 0; k < 4; k++)
			out[k] += v[i].n[k];
	free(v);
	return err;
}

static int add_counts_event(struct it_session *s, uint8_t flags, const uint64_t c[4])
{
	/* the fourth count (io_uring's async) in pid and tid (event.h) */
	struct it_event e = { .ts_ns = it_clock_ns(CLOCK_MONOTONIC), .type = IT_EV_TASK_COUNTS,
			      .layer = IT_LAYER_BLOCK, .flags = flags, .id = c[0], .sector = c[1],
			      .aux = c[2], .pid = (uint32_t)c[3], .tid = (uint32_t)(c[3] >> 32),
			      .tag = 0xffff, .hwq = 0xffff, .op = IT_OP_OTHER };

	return it_writer_add_record(s->w, 0, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, &e, sizeof(e));
}

/* What the task's predicate and sampling left out (task_counts.h: the
 * enums' order is the event's id, sector, aux), after the probes
 * detached: exact totals for the report. */
static int write_task_counts(struct it_session *s)
{
	/* scope.bpf.h's I/O counts: a cache line per CPU in the mapped .bss */
	size_t nslots = sizeof(b.skel->bss->scope_io_slots) / sizeof(b.skel->bss->scope_io_slots[0]);
	uint64_t c[4] = { 0 };
	int err;

	if (s->flight || !it_task_decides(s->scope))
		return 0;
	for (size_t cpu = 0; cpu < nslots; cpu++)
		for (int k = 0; k < 4; k++)
			c[k] += b.skel->bss->scope_io_slots[cpu].c.n[k];
	b.task_counted = true;
	memcpy(b.io_counts, c, sizeof(b.io_counts));
	err = add_counts_event(s, 0, c);
	/* io_uring's before the calls': a reader older than IT_TCF_URING
	 * takes both for the calls' and keeps the last */
	if (!err && s->marks_followed)
		err = sum_counts(b.skel->maps.scope_call_counts, IT_CCK_URING, c) ?:
		      add_counts_event(s, IT_TCF_CALLS | IT_TCF_URING, c) ?:
		      sum_counts(b.skel->maps.scope_call_counts, IT_CCK_CALLS, c) ?:
		      add_counts_event(s, IT_TCF_CALLS, c);
	return err;
}

static int finish(struct it_session *s)
{
	b.dropped = it_percpu_counter(b.skel->maps.drops, b.drops, b.s->ncpu);
	b.missed = it_prog_misses(b.skel->obj);
	return write_task_counts(s) ?:
	       it_writer_set_missed(s->w, 0, IT_LAYER_BLOCK, b.missed) ?:
	       it_writer_set_drops(s->w, 0, IT_LAYER_BLOCK, b.drops, s->ncpu);
}

static void summary(char *out, size_t len)
{
	int n = snprintf(out, len, "%llu I/Os, %llu events, %llu dropped", (unsigned long long)b.ios,
			 (unsigned long long)b.events, (unsigned long long)b.dropped);

	/* what the task left out, in the kernel's count: a filter that
	 * keeps nothing says so here, not only in the report */
	if (b.task_counted && n > 0 && (size_t)n < len)
		snprintf(out + n, len - n, " (left out in the kernel: %llu by the predicate, "
			 "%llu by the sampling)", (unsigned long long)b.io_counts[IT_IOC_REJECTED],
			 (unsigned long long)b.io_counts[IT_IOC_SKIPPED]);
	if (b.missed)
		fprintf(stderr, "iotrail record: %llu probe runs were skipped by the kernel (a probe "
			"interrupted by itself on one CPU): their events are missing; the report "
			"says so too\n", (unsigned long long)b.missed);
	if (b.dropped)
		fprintf(stderr, "iotrail record: events were lost: the consumer fell behind; "
			"try a larger --ringbuf-mb or --dev/-p filters\n");
	if (b.s->verbose && b.bufs.mem)
		fprintf(stderr, "iotrail record: %llu block, NVMe and NVMe/TCP events went through "
			"the rings, not the CPUs' event buffers (a probe that interrupted another "
			"or found the buffer held, or a full buffer)\n",
			(unsigned long long)it_ev_bufs_ringed(&b.bufs));
}

static uint64_t recorded(void)
{
	return b.ios;
}

static void block_free(void)
{
	it_ev_bufs_unmap(&b.bufs);
	block_bpf__destroy(b.skel);
	free(b.drops);
	memset(&b, 0, sizeof(b));
}

extern const struct it_layer_rec it_block_records; /* records.c */

const struct it_layer_ops it_block_layer = {
	.name = "block",
	.id = IT_LAYER_BLOCK,
	.records = &it_block_records,
	.what = "bio queue, merge and split; request insert, issue, requeue and completion",
	.hooks = block_hooks,
	.nhooks = NHOOKS,
	.start = start,
	.attach = attach,
	.begin = begin,
	.tick = tick,
	.before_detach = write_diskstats,
	.detach = detach,
	.finish = finish,
	.summary = summary,
	.recorded = recorded,
	.free = block_free,
};
