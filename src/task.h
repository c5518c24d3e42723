/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A profiling task (issue 14): which I/Os to record (a predicate), how
 * many of them (1 in N), for how long, and the report's defaults, from a
 * task file (`record --task FILE`, INI, read with libinih) or from the
 * command line (`--filter`, `--sample`, ...; the command line wins).
 *
 * The predicate is evaluated in the kernel at an I/O's first event (the
 * bio's Q, bpf/scope.bpf.h: scope_pred_wanted) and the decision follows the
 * I/O by the scope's tracked table. It is a disjunction of at most
 * IT_PRED_MAX clauses of op, size and device terms; pid, comm and cgroup
 * terms restrict the whole predicate (they become the process scope,
 * scope.h, which holds for every clause), so they are joined with && only.
 *
 * Pure C (no libbpf): parsed here, unit-tested, fuzzed (tests/fuzz/fuzz_task.c).
 */
#ifndef IOTRAIL_TASK_H
#define IOTRAIL_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define IT_PRED_MAX 4        /* clauses joined by || (the BPF side's arrays) */
#define IT_TASK_MAX_PIDS 16
/* A value's bytes at most: an INI line is 199 characters for libinih, and
 * the settings are stored as INI text (the filter with its key) */
#define IT_TASK_VALUE_MAX 180

/* One clause: every term of it holds. */
struct it_pred_clause {
	uint32_t ops;            /* bit (1 << IT_OP_*) per op accepted; all ops: ~0 */
	uint64_t size_min;       /* bytes of the I/O's first bio, inclusive */
	uint64_t size_max;
	uint32_t dev;            /* IT_MKDEV; 0: any device */
};

struct it_filter {
	struct it_pred_clause c[IT_PRED_MAX];
	unsigned int n;          /* clauses; 0: no predicate (every I/O) */
	/* process terms, for the scope (scope.h) */
	pid_t pids[IT_TASK_MAX_PIDS];
	size_t npids;
	char comm[16];           /* "": none */
	char cgroup[256];        /* "": none */
};

/* Resolves a device as --dev does (/dev/sda, sda, 8:0) into IT_MKDEV. 0,
 * or -1 with why in err. NULL: MAJ:MIN only. */
typedef int (*it_dev_resolver)(const char *spec, uint32_t *dev, char *err, size_t errlen);

/* Parses "op=read && size>=32k || dev=8:0 && size=4k". Terms: op=OP[,OP]
 * and op!=OP; size=N, size=N-M, size>=N, size<=N, size>N, size<N (N in
 * bytes, or with k, m, g: KiB, MiB, GiB); dev=DEV; pid=N; comm=NAME;
 * cgroup=DIR. 0, or -1 with one line in err naming the term and what is
 * accepted. */
int it_filter_parse(const char *text, struct it_filter *f, it_dev_resolver resolve, char *err,
		    size_t errlen);

/* Whether an I/O (op IT_OP_*, bytes, dev) passes the predicate, as the
 * kernel decides (bpf/scope.bpf.h). */
bool it_filter_match(const struct it_filter *f, unsigned int op, uint64_t bytes, uint32_t dev);

/* Sampling: "1/N" (or "N"), one I/O in N at random, N from 1 to 1e9; or
 * "N/EPOCH" ("100/1s": an EPOCH has a unit), the first N I/Os of every
 * epoch of EPOCH (from 1 ms) and none more, N from 1 to IT_EPOCH_N_MAX
 * (include/iotrail/sample_epoch.h: the kernel's arithmetic). */
struct it_sample {
	uint32_t one_in;         /* 1 in N; 0 or 1: no draw */
	uint32_t per_epoch;      /* the first N of each epoch; 0: no epochs */
	uint64_t epoch_ns;
};
int it_sample_parse(const char *text, struct it_sample *s, char *err, size_t errlen);

/* A date as in ntprof's tasks, "YYYY-MM-DD hh:mm:ss", local time (TZ), into
 * seconds since the epoch. 0, or -1 with err (not that form, no such date). */
int it_date_parse(const char *text, int64_t *sec, char *err, size_t errlen);

/* The report's statistics columns ("min,avg,p50,p99,max"): what the latency
 * table shows, in order. min, max, avg, pN (N from 0 to 100, e.g. p99.9),
 * distinct(KEY): how many different KEYs the group's I/Os have, KEY one of
 * pid (processes that submitted them: column "pids"), tid ("tids"), comm
 * ("comms"), dev ("devs"), file ("files": the files whose page cache they
 * carried; direct I/O carries none), zone ("zones": the zones of zoned
 * devices their first sector is in, by the trace's zone table; I/Os of
 * other devices count none). */
#define IT_STATS_MAX 12
enum it_stat_kind { IT_STAT_MIN, IT_STAT_MAX, IT_STAT_AVG, IT_STAT_PCT, IT_STAT_DISTINCT };
enum it_distinct_key {
	IT_DISTINCT_PID, IT_DISTINCT_TID, IT_DISTINCT_COMM, IT_DISTINCT_DEV, IT_DISTINCT_FILE,
	IT_DISTINCT_ZONE, IT_DISTINCT_MAX
};
extern const char *const it_distinct_names[IT_DISTINCT_MAX]; /* "pid", "tid", ... */
struct it_stats {
	unsigned int n;          /* 0: the default columns */
	enum it_stat_kind kind[IT_STATS_MAX];
	double pct[IT_STATS_MAX];   /* IT_STAT_PCT's percentile */
	enum it_distinct_key distinct[IT_STATS_MAX]; /* IT_STAT_DISTINCT's key */
	char name[IT_STATS_MAX][8]; /* the column's title: "p99.9", "pids" */
};
int it_stats_parse(const char *text, struct it_stats *s, char *err, size_t errlen);

/* "30s", "500ms", "2m", "1h", "250us", "1.5s" into ns (> 0). 0 or -1. */
int it_duration_parse(const char *text, uint64_t *ns, char *err, size_t errlen);

/* "4k", "512", "1m" into bytes. 0 or -1. */
int it_size_parse(const char *text, uint64_t *bytes, char *err, size_t errlen);

/* The flight recorder's trigger: a stage over a threshold, "q2c>5ms". */
enum it_trigger_stage { IT_TRIG_Q2C, IT_TRIG_D2C, IT_TRIG_Q2D };
struct it_trigger {
	bool on;
	enum it_trigger_stage stage;
	uint64_t over_ns;
};
int it_trigger_parse(const char *text, struct it_trigger *t, char *err, size_t errlen);

/* What a task's predicate and sampling left out, as the kernel counted
 * (event.h: IT_EV_TASK_COUNTS; iotrail/task_counts.h); *_known: the trace
 * says (recorded with a predicate or sampling; calls: and the syscall
 * layer following the block layer's decisions). */
struct it_task_counted {
	bool ios_known, calls_known;
	uint64_t passed, skipped, rejected;       /* I/Os: kept = passed - skipped */
	uint64_t calls_kept, calls_not_kept, calls_no_io;
	/* io_uring requests (task_counts.h: enum it_uring_count), when known */
	bool uring_known;
	uint64_t uring_kept, uring_not_kept, uring_no_io, uring_async;
	/* --sample N/EPOCH: the epochs the trace's I/Os were queued in (from
	 * their Q times; the analyzer's): the skipped ones are in these too */
	uint64_t epochs;
};

/* Everything a task sets; a NULL string or 0: not set (the default). */
struct it_task {
	/* [workload] */
	char filter[512];        /* the predicate's text: the [workload] terms joined by && */
	/* [profiler] */
	char sample[32];
	char duration[32];
	char flight[32];
	char trigger[32];
	char memory[32];
	char on_full[16];        /* overwrite or write-out (with memory) */
	char start[32];          /* a date, it_date_parse */
	char stop[32];
	char output[256];
	/* [report] */
	char group_by[128];
	char stats[128];         /* it_stats_parse */
	char format[16];         /* text or json */
	/* not a key: from the trace's OVERWRITTEN note (a flight file), the
	 * events its memory bound overwrote before the file was written */
	bool overwritten_known;
	uint64_t overwritten;
	/* not a key: the kernel's counts, from the trace's events */
	struct it_task_counted counted;
};

/* Reads a task file's text (INI) into t. 0, or -1 with one line in err:
 * the line and key, and what is accepted. */
int it_task_parse(const char *text, struct it_task *t, char *err, size_t errlen);

/* ---- in the trace: NOTE records of kind IT_NOTE_TASK (the resolved
 * settings, INI text as it_task_settings writes it) and IT_NOTE_TASK_FILE
 * (the task file as given), each text cut into pieces of at most 111
 * bytes, in order (doc/trace-format.md) ---- */
struct it_note_rec;

/* The resolved settings as INI text (a task file of its own) into out. */
void it_task_settings(const struct it_task *t, char *out, size_t len);

/* Splits text into notes of kind (machine 0) into *notes (malloc'ed).
 * Returns how many, or -1 out of memory. */
long it_task_to_notes(const char *text, uint16_t kind, struct it_note_rec **notes);

/* The pieces of kind among notes, joined (malloc'ed, NUL-terminated);
 * NULL when there are none (a file recorded without a task) or out of memory. */
char *it_task_from_notes(const struct it_note_rec *notes, size_t n, uint16_t kind);

/* The report's line about what was recorded: "only I/Os with
 * op=read && size>=32k: 300 of 1800, 1500 filtered out; sampled 1 in 10:
 * 31 kept of 300, 269 skipped: counts are of sampled I/Os" (the totals
 * when t->counted knows them). "" when every I/O was. calls: the
 * recording has the syscall layer: which calls it kept (t->counted), or
 * that a filter or a sample did not reach them (said, not left silent). */
void it_task_describe(const struct it_task *t, bool calls, bool tcp, char *out, size_t len);
/* Whether a trace of these layers ("block,syscall") has the layer name,
 * system calls, NVMe/TCP events (tcp: said not filtered, as calls are). */
bool it_task_layers_have(const char *layers, size_t len, const char *name);
bool it_task_layers_have_calls(const char *layers, size_t len);
bool it_task_layers_have_tcp(const char *layers, size_t len);

#endif
