/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A layer on the recording side: what `iotrail probe` checks and what
 * `iotrail record` loads, configures, polls and writes for one level of
 * the storage stack. Each layer lives in src/layers/NAME/ (its BPF program,
 * this ops struct, its options) and is listed once in src/layers.c.
 * record.c, probe.c and the trace writer know no layer by name: they walk
 * that list.
 */
#ifndef IOTRAIL_LAYER_H
#define IOTRAIL_LAYER_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "hooks.h"
#include "iotrail/event.h"
#include "scope.h"

struct bpf_map;
struct ring_buffer;
struct it_evring;
struct it_writer;
struct it_device_rec;
struct it_disk_delta;
struct it_layer_rec;

/* What `iotrail record` tells every layer: the options common to all of
 * them, and the things layers share while recording. */
struct it_session {
	/* common options */
	const uint32_t *devs;          /* --dev filter (whole disks), ndevs of them */
	size_t ndevs;
	const struct it_scope *scope;  /* which processes (-p, --comm, --cgroup; scope.h) */
	unsigned int ringbuf_mb;
	enum it_hook_kind force_hook;  /* --hook; IT_HOOK_NONE: best available */
	bool verbose;
	bool cmd;                      /* `-- COMMAND` runs */
	unsigned int ncpu;             /* possible CPUs: per-CPU arrays */

	/* One poll for every layer: the first layer with a ring creates it,
	 * the others add theirs (ring_buffer__add). */
	struct ring_buffer *rb;
	/* Per-CPU rings merged by time (evring.h): the it_event stream's
	 * (made by the block layer), the syscall layer's; the session's from
	 * it_session_add_evring on, drained and freed with the others. */
	struct it_evring *evr[4];
	unsigned int nevr;
	/* The struct it_event stream (event.h): layers whose records are
	 * it_event share its per-CPU rings (events: the array of them), drop
	 * counter and -p table, so that events of one I/O stay in causal
	 * order. Set by the layer that creates it.
	 * tracked: the bios and requests of processes in scope. */
	struct {
		struct bpf_map *events, *drops, *tracked;
		uint64_t wakeup_bytes;
		/* the per-CPU event buffers (event.h, struct it_ev_buf) of
		 * the layers whose programs cannot be preempted; NULL: none */
		struct bpf_map *bufs;
		uint64_t buf_mask, buf_wakeup;
	} ev;
	/* A task's predicate or sampling, followed into the system calls
	 * (bpf/scope.bpf.h): io_marks when a recorded layer follows_io; the
	 * block object's maps of the marks and the calls' counts, which
	 * that layer reuses (then marks_followed), set by the block layer */
	bool io_marks, marks_followed;
	struct bpf_map *marks, *call_counts;
	struct it_writer *w;           /* the trace file, once open */
	const struct it_device_rec *devices; /* its device table (valid in begin) */
	size_t ndevices;
	uint64_t start_ns;             /* monotonic, when the trace file was opened */
	uint64_t consumed;             /* records taken from any ring (quiet detection) */
	/* In finish: the completed I/Os of the devices of the trace's device
	 * table whose diskstats moved while recording (hostinfo.h). */
	const struct it_disk_delta *disk;
	size_t ndisk;
	/* the window of those counts (monotonic): read right after the
	 * probes attached, and right before they detach */
	uint64_t disk_from_ns, disk_to_ns;
	int err;                       /* first failure of a consumer (-errno); stops the loop */
	/* --flight (flight.h): the event stream goes to this bounded buffer,
	 * not to w; flight_fired when the trigger fired on an event */
	struct it_flight *flight;
	bool flight_fired;
};

struct it_layer_ops {
	const char *name;              /* as in --layers and the trace's layer list */
	uint16_t id;                   /* enum it_layer (event.h): its id in the trace */
	const char *what;              /* one line: what it records */
	/* Its entry in the trace's layers manifest: the record types its chunks
	 * hold (src/layers/NAME/records.c, pure C). NULL: it writes none. */
	const struct it_layer_rec *records;
	const struct it_hook_def *hooks;
	size_t nhooks;
	/* The layer also needs this (beyond its hooks), for `iotrail probe`:
	 * 0, or -1 with why. NULL: its hooks say it all. Asked before the
	 * hooks are probed: it may give them the names this kernel has. */
	int (*requires)(char *why, size_t len);

	/* ---- recording; start == NULL: probed only, not recorded yet ---- */
	/* Part of another layer: recorded whenever that one is, never named in
	 * --layers (the NVMe driver with the block layer). NULL: its own. */
	const char *part_of;
	/* Recorded only when named in --layers, never by default. */
	bool opt_in;
	/* Follows the block layer's decisions of a task's predicate and
	 * sampling (it_session.io_marks). */
	bool follows_io;
	/* Its options for `iotrail record` (getopt codes in its own range, see
	 * IT_LAYER_OPT), their help lines, and the parser of one of them. */
	const struct option *options;
	void (*usage)(FILE *f);
	int (*parse)(int code, const char *arg);   /* 0, or -1 after a one-line message */
	/* Whether this kernel can record it; 1 yes, 0 no (why says why). */
	int (*available)(char *why, size_t len);
	/* After all options: checks them against the layers chosen. 0 or -1. */
	int (*settle)(const struct it_session *s, bool recorded);
	/* Loads (and attaches, when attach is NULL). Returns 1 when it runs
	 * (hooks gets its part of the trace's hook list, "block=tp_btf"), 0
	 * when it is left out (why says why; not an error), -1 on an error
	 * already reported. */
	int (*start)(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen);
	/* Attaches what start loaded, once every layer has loaded: loading
	 * takes seconds on a busy machine, and probes attached before the
	 * last layer loads would fill rings that nobody drains yet (events
	 * dropped before the recording begins). Returns as start does. */
	int (*attach)(struct it_session *s, char *why, size_t wlen);
	/* The trace file is open (s->w): side tables (zones), records from now on. */
	void (*begin)(struct it_session *s);
	/* Every DROPS_EVERY_NS while recording: refresh loss counters. */
	void (*tick)(struct it_session *s);
	/* Right before the probes detach, s->disk just read:
	 * what the layer stores of that moment. 0 or -errno. */
	int (*before_detach)(struct it_session *s);
	/* Stop the probes; what is in the rings is drained after. */
	void (*detach)(void);
	/* Before the file is closed: losses and misses into it. 0 or -errno. */
	int (*finish)(struct it_session *s);
	/* Its part of the summary line (", 12 system calls (0 lost)"). */
	void (*summary)(char *out, size_t len);
	/* What it recorded (I/Os, calls): none while its devices were busy
	 * (diskstats) gets a warning. NULL: not checked. */
	uint64_t (*recorded)(void);
	void (*free)(void);
};

/* Hands r (per-CPU rings, evring.h) to the session: drained in its loop,
 * freed at its end (also on failure: -ENOSPC when it holds four). */
int it_session_add_evring(struct it_session *s, struct it_evring *r);

/* ---- layers whose BPF object writes into the shared it_event stream ----
 * (events.bpf.h: the NVMe driver and target layers, part of the block
 * layer, which creates the stream) */
/* In a layer's configure: its events, drops and tracked maps become the
 * stream's (bpf_map__reuse_fd). 0 or -errno. */
int it_session_share_events(const struct it_session *s, struct bpf_map *events,
			    struct bpf_map *drops, struct bpf_map *tracked);
/* And its event buffers (ev_bufs, events.bpf.h): the stream's, with their
 * size and wakeup threshold in its rodata (*mask, *wakeup). 0 or -errno. */
int it_session_share_bufs(const struct it_session *s, struct bpf_map *bufs, __u64 *mask,
			  __u64 *wakeup);
/* Its start: loads through the hook engine (l). Returns the skeleton, or
 * NULL with why (the stream is not recorded, no hook, the kernel refused). */
void *it_session_start_in_events(const struct it_session *s, const struct it_hook_load *l,
				 char *hooks, size_t hlen, char *why, size_t wlen);
/* Its attach: 1, or 0 with why (the layer is left out). */
int it_session_attach_skel(const struct it_skel_ops *ops, void *skel, const char *layer,
			   char *why, size_t wlen);

/* getopt codes: each layer's options take codes from its own range */
#define IT_LAYER_OPT(id, n) (0x1000 + ((id) << 6) + (n))
#define IT_LAYER_OPT_LAYER(code) (((code) - 0x1000) >> 6)

/* The registry (src/layers.c), in print order. */
extern const struct it_layer_ops *const it_layers[];
extern const size_t it_nlayers;
const struct it_layer_ops *it_layer_by_name(const char *name);

#endif
