/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The syscall layer's analysis (pure C, no libbpf): per call, per file, per
 * thread over time, per process and role (its title), the event list (kept,
 * or streamed to a callback), and the link to the block layer (a
 * system call owns the bios its thread queued between its entry and exit;
 * block I/O whose bios carry page-cache pages goes to their file, whoever
 * queued it: writeback, readahead).
 *
 * One pass over a trace, its records handed in as they come in the file,
 * in any interleaving:
 *
 *   struct it_sysan *s = it_sysan_new(&opts);
 *   it_sysan_side(s, rec, len)    each side record (paths, names, comms),
 *   it_sysan_side_chunk_end(s)    after each chunk of them;
 *   it_sysan_trail(s, t)          each completed block trail,
 *   it_sysan_block_open(s, ns, open, n)  when every trail queued before ns
 *                                 is in but the open ones listed
 *                                 (it_sysan_block_watermark: none open);
 *   it_sysan_calls(s, evs, n)     the call records;
 *   it_sysan_finish(s, end_ns);
 *   const struct it_sysan_results *r = it_sysan_results(s);
 *
 * A call is summed up once its side records are in (its tag's path, its
 * names; a side chunk after the call's chunk settles it: a record not in
 * by then was lost); until then it waits in a queue, in file order (the
 * sequential share of a file depends on the order). Its block part (with
 * opts.block) is summed up once every block trail its thread queued
 * during the call is in (it exited before the block watermark, and no
 * trail of its thread still open was queued before its exit): until then
 * it waits in its thread's queue, not behind other threads' calls (an
 * I/O whose completion was lost keeps its trail open for a minute).
 * The calls are handed out (on_call, on_event) in file order all the
 * same. A block trail waits until no later call of its thread can own it
 * (a call of the thread that entered after it was summed up: a thread's
 * calls come in the order it made them), then goes into its sums.
 *
 * Memory: the side records (paths, names, comms) for the whole trace;
 * per trail of a file's page cache, 24 bytes to the end (the file's tag
 * that names it is known at the end); the trails still open to a call
 * (48 bytes each: the trails of the calls waiting for their block part,
 * per thread; of a thread that makes no traced call, e.g. writeback,
 * those queued in the last 60 s behind the calls summed up); the calls
 * waiting for their side records (120 bytes each; none when the writer
 * puts the side records first, as it does); the calls waiting for their
 * block part (40 bytes each: a thread's calls of about one EVENTS chunk's
 * time span when block I/O flows, up to a minute of them behind an I/O
 * of the thread whose completion was lost; every call at worst, when the
 * block stream is silent until the end), and when on_call or on_event is
 * set, the calls from the first one not handed out yet (56 bytes each:
 * behind such an I/O, a minute of every thread's calls); per thread, its
 * calls over time in at most
 * 128 counters; per process that queued block I/O, the same for its
 * I/Os; per process, its title.
 */
#ifndef IOTRAIL_ANALYZE_SYSAN_H
#define IOTRAIL_ANALYZE_SYSAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analyzer.h"
#include "analyze/hist.h"
#include "iotrail/syscall.h"

/* Walks a SYSSIDE chunk's payload (side records, each padded to 8 bytes):
 * the record at *off (and its length without padding in *reclen), *off
 * moved to the next one. NULL at the end or at a malformed record. */
const void *it_sys_side_next(const void *payload, size_t len, size_t *off, size_t *reclen);

struct it_sysan_event;

struct it_sysan_opts {
	uint64_t interval_ns;  /* per-thread timeline step; 0: chosen from the span */
	bool events;           /* keep the event list, by entry time (--log) */
	/* Called with each event once it is complete (its block part in),
	 * about in the order the calls ended (the file's): the list streamed,
	 * nothing kept (--json --events); NULL: none. The event and its
	 * strings live until the call returns (the strings until the end). */
	void (*on_event)(const struct it_sysan_event *v, void *ctx);
	uint64_t start_ns;     /* trace start (monotonic): the timelines' origin */
	bool block;            /* block trails will be handed in: calls wait for the watermark */
	/* Called with every call once it is summed up with its time in the
	 * block layer; NULL: none. */
	void (*on_call)(uint32_t tid, uint16_t call, uint64_t ts_enter, uint64_t ts_exit,
			uint64_t block_ns, uint32_t block_ios, void *ctx);
	void *ctx;
};

/* Per call name. */
struct it_sysan_call {
	uint16_t call;          /* enum it_sys_call */
	uint64_t count, errors;
	uint64_t bytes;         /* data calls: bytes moved (positive returns) */
	struct it_hist lat;     /* exit - entry, ns */
	uint64_t block_calls;   /* calls that issued block I/O in their thread */
	uint64_t block_ios, block_bytes;
	uint64_t block_flushes; /* of block_ios: flush requests (a data-less PREFLUSH) */
	struct it_hist block;   /* per such call: time with its I/O in the block layer */
	struct it_hist above;   /* per such call: the rest of its latency */
};

/* Per file: a file tag (fd-based calls), or a name (path-based calls on
 * files never opened while recording). */
struct it_sysan_file {
	const char *path;
	uint32_t dev;           /* tag, 0 for a name */
	uint64_t ino, tag_ts;
	uint8_t ftype;
	uint64_t calls, errors;
	uint64_t reads, writes, read_bytes, write_bytes;
	uint64_t seq, rnd;      /* data calls at the end of the previous one (per direction) */
	uint64_t last_end[2];   /* read, write: end offset of the last call + 1 (0: none) */
	struct it_hist read_lat, write_lat;
	uint64_t syncs;         /* fsync and fdatasync calls */
	struct it_hist sync_lat;
	uint64_t first_ns, last_ns;
};

/* Per thread: calls per interval. */
struct it_sysan_thread {
	uint32_t pid, tid;
	char comm[16];
	uint64_t calls, errors;
	uint64_t lat_sum;
	uint64_t *timeline;     /* nintervals counts */
};

/* What a process, or the processes of a role, did: calls, bytes, the
 * block I/O its calls owned, fsync and fdatasync latency. */
struct it_sysan_io {
	uint64_t calls, errors;
	uint64_t read_bytes, write_bytes;
	uint64_t block_ios, block_bytes; /* block I/O its calls owned */
	uint64_t syncs;         /* fsync and fdatasync calls */
	struct it_hist sync_lat;
};

/* Per process: its title (what ps shows, e.g. "postgres: checkpointer":
 * /proc/PID/cmdline as the process rewrote it, from the trace's title
 * records; its comm when there is none) and its calls. */
struct it_sysan_proc {
	uint32_t pid;
	char comm[16];
	const char *title;      /* "" when the trace has none for it */
	uint64_t threads;
	struct it_sysan_io io;
};

/* Processes by role: those of one title (or, without one, one comm:
 * "[comm]", as ps shows a kernel thread), summed. */
struct it_sysan_role {
	const char *name;       /* the title, or "[comm]" */
	uint64_t procs;
	struct it_sysan_io io;
};

/* One event of the list (--events, --log). */
struct it_sysan_event {
	struct it_sys_event e;
	const char *path;       /* the file or name the call worked on, "" when none */
	const char *path2;      /* rename: the new name; xattr calls: the attribute */
	const char *comm;
	uint64_t block_ns;      /* time with its I/O in the block layer */
	uint32_t block_ios;
};

/* Block I/O no traced call owns: writeback, readahead, journal, other
 * processes. */
struct it_sysan_background {
	uint32_t comm;          /* block analyzer's interned id */
	uint64_t ios, bytes;
};

/* Block I/O of one file, known from the page cache its bios' first page
 * is in (it_trail.ino/fsdev): writeback, readahead and the page-cache
 * misses of calls, whichever thread queued them. The path is the one of
 * the syscall layer's file tag with the same (dev, inode): the last one
 * first seen at or before the I/O was queued, else the first one. */
struct it_sysan_bfile {
	const char *path;       /* NULL: no traced call named this file */
	uint32_t dev;           /* file system (s_dev, kernel encoding) */
	uint64_t ino, tag_ts;   /* tag_ts: the matched file tag, 0 without a path */
	uint64_t ios, bytes;
	uint64_t read_ios, read_bytes, write_ios, write_bytes;
	uint64_t bg_ios, bg_bytes;   /* of those, I/O no traced call owned */
	struct it_hist q2c;     /* ns, every I/O of the file */
	uint64_t *timeline;     /* I/Os by completion time, nintervals counts */
};

/* Block I/O of one process (the one that queued the bios: a flusher or
 * journal thread for writeback and commits), over time. */
struct it_sysan_bproc {
	uint32_t pid;
	uint32_t comm;          /* block analyzer's interned id */
	const char *title;      /* its title record's, "" when none */
	uint64_t ios, bytes;
	uint64_t *timeline;     /* I/Os by completion time, nintervals counts */
};

struct it_sysan_results {
	uint64_t start_ns, end_ns;       /* the span: opts.start_ns to it_sysan_finish's end */
	uint64_t calls, errors, first_ns, last_ns;
	uint64_t unmatched_names; /* name records without their call (dropped calls) */
	uint64_t unknown_tags;    /* calls whose file tag has no path record */
	struct it_sysan_call *per_call;  /* sorted by count, descending */
	size_t ncalls;
	struct it_sysan_file *files;     /* sorted by calls, descending */
	size_t nfiles;
	struct it_sysan_thread *threads; /* sorted by calls, descending */
	size_t nthreads;
	struct it_sysan_proc *procs;     /* sorted by calls, descending */
	size_t nprocs;
	struct it_sysan_role *roles;     /* by time in fsync/fdatasync, then calls, descending */
	size_t nroles;
	uint64_t interval_ns;   /* of every timeline here (threads, block by process and file) */
	size_t nintervals;
	struct it_sysan_event *events;   /* by entry time; NULL unless opts.events */
	size_t nevents;
	uint64_t owned_ios, owned_bytes; /* block I/O owned by a traced call */
	struct it_sysan_background *background; /* by ios, descending */
	size_t nbackground;
	uint64_t background_ios, background_bytes;
	/* block I/O by file (owned or not); by bytes, descending */
	struct it_sysan_bfile *bfiles;
	size_t nbfiles;
	/* block I/O by the process that queued it; by I/Os, descending */
	struct it_sysan_bproc *bprocs;
	size_t nbprocs;
	/* background I/O of no file (metadata, journal, raw device I/O), by
	 * comm; by ios, descending */
	struct it_sysan_background *unattributed;
	size_t nunattributed;
	uint64_t unattributed_ios, unattributed_bytes;
};

struct it_sysan;

struct it_sysan *it_sysan_new(const struct it_sysan_opts *o);
/* A side record (struct it_sys_path, it_sys_name, it_sys_task or
 * it_sys_title with its tail), len bytes. Returns 0, or -1 when it is malformed or memory ran
 * out. */
int it_sysan_side(struct it_sysan *s, const void *rec, size_t len);
/* A chunk of side records is in: calls before it wait for no more. */
void it_sysan_side_chunk_end(struct it_sysan *s);
/* A completed block trail. */
void it_sysan_trail(struct it_sysan *s, const struct it_trail *t);
/* Every block trail queued before ns has been handed in (or never will),
 * but the ones open[0..n) (each waits for its thread's calls, not
 * another's). */
void it_sysan_block_open(struct it_sysan *s, uint64_t ns, const struct it_open_trail *open,
			 size_t n);
/* Every block trail queued before ns has been handed in (or never will). */
void it_sysan_block_watermark(struct it_sysan *s, uint64_t ns);
/* Sets opts.on_call (before the first call record): once it is known
 * whether anyone listens. */
void it_sysan_set_on_call(struct it_sysan *s,
			  void (*fn)(uint32_t tid, uint16_t call, uint64_t ts_enter, uint64_t ts_exit,
				     uint64_t block_ns, uint32_t block_ios, void *ctx));
/* Call records, in file order. Returns 0, or -1 once memory ran out. */
int it_sysan_calls(struct it_sysan *s, const struct it_sys_event *evs, size_t n);
/* Calls waiting in the queue (for tests and measurements). */
size_t it_sysan_queued(const struct it_sysan *s);
/* Block trails waiting for a call of their thread, and their peak in
 * *peak (when not NULL): for tests and measurements. */
size_t it_sysan_live_trails(const struct it_sysan *s, size_t *peak);
/* The end: sums up the waiting calls; end_ns is the trace's end
 * (monotonic), at or before opts.start_ns: not known (no END chunk), the
 * latest exit of the call records stands in. Fixes the per-thread
 * timelines' interval from the span. */
void it_sysan_finish(struct it_sysan *s, uint64_t end_ns);
const struct it_sysan_results *it_sysan_results(const struct it_sysan *s);
/* The title of process pid (its title record), "" when none. */
const char *it_sysan_title(const struct it_sysan *s, uint32_t pid);
int it_sysan_error(const struct it_sysan *s);
void it_sysan_free(struct it_sysan *s);

/* ---- helpers shared by printers and tests ---- */
const char *it_sys_call_name(unsigned call);   /* "pread64", NULL if unknown */
bool it_sys_call_is_sync(unsigned call);       /* fsync, fdatasync */
const char *it_sys_file_type_name(unsigned ft); /* "reg", "dir", ... */
bool it_sys_call_is_read(unsigned call);
bool it_sys_call_is_write(unsigned call);
/* Whether the call's record has an offset (argument or position) / a count. */
bool it_sys_call_has_offset(unsigned call);
bool it_sys_call_has_count(unsigned call);
/* Joins a path record's components (leaf first) into "/a/b/c"; files
 * without a path (pipes, sockets) get "pipe:[ino]" and the like. Returns
 * the length written (truncated to len - 1). */
size_t it_sys_path_join(const struct it_sys_path *p, const char *comps, char *out, size_t len);

#endif
