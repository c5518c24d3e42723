/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The analyzer: events (in stream order) -> one trail per I/O -> stages ->
 * group-by aggregates and per-device distributions. Pure C, no libbpf, no
 * files: it takes batches of struct it_event, so it runs the same on a
 * trace file (src/report.c feeds it from it_reader_next) and on synthetic
 * streams in the unit tests.
 *
 *   struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;   (group by op,dev)
 *   struct it_analyzer *a = it_analyzer_new(&o);
 *   it_analyzer_feed(a, evs, n);        (any number of times)
 *   it_analyzer_finish(a, end_ns);
 *   const struct it_results *r = it_analyzer_results(a);
 *   ... r->groups, r->devs, r->stats ...
 *   it_analyzer_free(a);
 *
 * What is an I/O: a block request on a blk-mq device (from its first bio's
 * queue event to its final completion; bios merged into it are noted on it,
 * a split bio's parts are separate I/Os, as the device sees them), or a
 * bio on a bio-based device (queue to bio completion).
 */
#ifndef IOTRAIL_ANALYZE_ANALYZER_H
#define IOTRAIL_ANALYZE_ANALYZER_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "iotrail/event.h"
#include "analyze/hist.h"
#include "task.h"               /* struct it_task_counted */

/* Points on a block trail, btt's letters. */
enum it_point {
	IT_PT_Q = 0,   /* bio queued (IT_EV_BIO_QUEUE) */
	IT_PT_I = 1,   /* request inserted (first insert) */
	IT_PT_D = 2,   /* request issued to the driver (last issue) */
	IT_PT_C = 3,   /* completed (final completion) */
	IT_PT_S = 4,   /* NVMe command set up for the request (nvme_setup_cmd; last one) */
	IT_PT_N = 5,   /* NVMe command completed (nvme_complete_rq; last one) */
	IT_PT_H = 6,   /* the driver handled the command's CQE (nvme_sq, PCIe; last one) */
	IT_PT_MAX,
	IT_PT_START = IT_PT_MAX, /* in a stage: the first point the trail has (Q, else I, else D) */
};

enum it_trail_kind {
	IT_TRAIL_REQUEST = 0,
	IT_TRAIL_BIO = 1,
};

enum it_seq {
	IT_SEQ_NA = 0,         /* not classified (no data: flush; or bio trail before completion) */
	IT_SEQ_RANDOM = 1,
	IT_SEQ_SEQUENTIAL = 2,
};

/* One I/O, complete. ts[p] == 0 means point p was not seen. */
struct it_trail {
	uint64_t ts[IT_PT_MAX];
	uint64_t completed_by; /* ts[C] 0: its completion event was lost, and the
				* request was seen again at this time (stitch.c) */
	uint64_t sector;     /* first 512-byte sector */
	uint64_t ino;        /* file whose page cache its (first) bio carries, 0: none (Q's aux) */
	uint32_t fsdev;      /*   and that file's file system (s_dev), when ino != 0 */
	uint32_t dev;
	uint32_t bytes;      /* request bytes at first issue (bio trails: at queue) */
	uint32_t pid, tid;   /* submitter (Q), else the task at I or D */
	uint32_t comm;       /* interned id, see it_results_comm(); 0 = unknown */
	uint32_t flags;      /* IT_F_* */
	uint32_t qd_insert;  /* in flight on the device when it entered (0 = not sampled) */
	uint32_t qd_issue;   /* in flight at the driver when issued (0 = not sampled) */
	uint16_t merges;     /* bios (and requests) merged into it */
	uint16_t requeues;
	uint16_t partial;    /* partial completions before the final one */
	int16_t  error;      /* last nonzero error of a completion, negative errno */
	uint8_t  op;         /* enum it_op */
	uint8_t  kind;       /* enum it_trail_kind */
	uint8_t  seq;        /* enum it_seq */
	uint8_t  split;      /* 1 when it is a part of a split bio */
};

/* ---- stages: data, not code ---- */
struct it_stage_def {
	const char *name;
	uint8_t from, to;    /* enum it_point (from may be IT_PT_START) */
	int8_t unless;       /* the stage is skipped when this point is present; -1: never */
	const char *what;
};
/* in print order: NVMe sub-stages follow the block stage they subdivide */
enum { IT_STAGE_Q2I, IT_STAGE_I2D, IT_STAGE_Q2D, IT_STAGE_S2D, IT_STAGE_D2C, IT_STAGE_D2N,
       IT_STAGE_D2H, IT_STAGE_H2N, IT_STAGE_N2C, IT_STAGE_Q2C, IT_STAGE_MAX };

/* A trail has a stage when it has both points (and not the `unless`
 * point). A request issued directly (no insert) gets Q2D instead of Q2I +
 * I2D, so the stages of every trail add up to its Q2C. Q2C starts at the
 * first point the trail has: requests the kernel makes without a queued
 * bio (flush sequences) and bios queued before the trace started have no
 * Q, and their latency runs from I (or D). The table is static so the
 * aggregation loop over it folds into straight code in every user. */
static const struct it_stage_def it_stages[IT_STAGE_MAX] = {
	[IT_STAGE_Q2I] = { "Q2I", IT_PT_Q, IT_PT_I, -1, "queued -> inserted (request allocation, plugging)" },
	[IT_STAGE_I2D] = { "I2D", IT_PT_I, IT_PT_D, -1, "inserted -> issued (scheduler / queue wait)" },
	[IT_STAGE_Q2D] = { "Q2D", IT_PT_Q, IT_PT_D, IT_PT_I, "queued -> issued directly (no insert)" },
	[IT_STAGE_D2C] = { "D2C", IT_PT_D, IT_PT_C, -1, "issued -> completed (driver + device)" },
	[IT_STAGE_Q2C] = { "Q2C", IT_PT_START, IT_PT_C, -1, "queued -> completed (total)" },
	/* NVMe trails (src/analyze/nvme_link.c). The driver sets the command up
	 * before it starts the request (nvme_queue_rq: nvme_setup_cmd, then
	 * blk_mq_start_request), so S comes before D: S2D is driver time inside
	 * I2D/Q2D, and D2N + N2C == D2C. So Q2I + I2D (or Q2D) + D2N + N2C == Q2C. */
	[IT_STAGE_S2D] = { "S2D", IT_PT_S, IT_PT_D, -1, "NVMe command set up -> issued (driver: DMA map; part of I2D/Q2D)" },
	[IT_STAGE_D2N] = { "D2N", IT_PT_D, IT_PT_N, -1, "issued -> NVMe completion (doorbell, device, interrupt; part of D2C)" },
	[IT_STAGE_N2C] = { "N2C", IT_PT_N, IT_PT_C, -1, "NVMe completion -> completed (driver completion; part of D2C)" },
	/* With nvme:nvme_sq (PCIe), which fires when the driver handles the
	 * CQE (irq or poll) before it completes the request (at once, or after
	 * the rest of the CQ as a batch): D2H + H2N == D2N. */
	[IT_STAGE_D2H] = { "D2H", IT_PT_D, IT_PT_H, -1, "issued -> CQE handled by the driver (doorbell, device, interrupt; part of D2N)" },
	[IT_STAGE_H2N] = { "H2N", IT_PT_H, IT_PT_N, -1, "CQE handled -> NVMe completion (completion batching; part of D2N)" },
};

/* Stage time of trail t, or -1 when the trail does not have that stage. */
static inline int64_t it_stage_time(const struct it_trail *t, unsigned stage)
{
	const struct it_stage_def *d = &it_stages[stage];
	uint64_t from;

	if (d->from == IT_PT_START)
		from = t->ts[IT_PT_Q] ? t->ts[IT_PT_Q] : t->ts[IT_PT_I] ? t->ts[IT_PT_I] : t->ts[IT_PT_D];
	else
		from = t->ts[d->from];
	if (!from || !t->ts[d->to] || (d->unless >= 0 && t->ts[d->unless]))
		return -1;
	/* events of one trail are causally ordered; a tiny clock step
	 * between CPUs must not wrap around */
	return t->ts[d->to] > from ? (int64_t)(t->ts[d->to] - from) : 0;
}

/* ---- group-by ---- */
/* role: the process's title (what ps shows), else "[comm]" (roles.c) */
enum it_key { IT_KEY_OP, IT_KEY_SIZE, IT_KEY_DEV, IT_KEY_COMM, IT_KEY_PID, IT_KEY_ROLE, IT_KEY_MAX };
extern const char *const it_key_names[IT_KEY_MAX];

struct it_group_key {
	uint32_t dev;
	uint32_t pid;
	uint32_t comm;       /* interned id */
	uint8_t op;
	uint8_t size_class;  /* it_size_class() */
	uint16_t pad;
	uint32_t role;       /* it_analyzer_role(); set at the end (roles.c) */
};

struct it_group {
	struct it_group_key key;  /* fields not grouped on are 0 */
	uint64_t count;           /* completed I/Os */
	uint64_t bytes;
	uint64_t errors;          /* I/Os completed with an error */
	uint64_t merges, requeues, splits, no_q;
	uint64_t seq, rnd;        /* sequential / random (data I/Os only) */
	uint64_t first_ns, last_ns; /* earliest start, latest completion: the active window */
	/* distinct values per key (task.h: enum it_distinct_key) of the keys
	 * in opts.distinct; else 0. [IT_DISTINCT_PID]: submitting processes */
	uint64_t distinct[IT_DISTINCT_MAX];
	struct it_hist stage[IT_STAGE_MAX]; /* ns; stage[IT_STAGE_Q2C] is the latency */
};

/* A stage's share in a group: the sum of its times over the sum of the
 * group's Q2C times (0 for an empty group). */
double it_stage_share(const struct it_group *g, unsigned stage);

/* ---- per device ---- */
/* The devices one analysis follows at most: a real machine's block devices
 * with I/O in one recording are far fewer (a host of 2,000 multipath LUNs,
 * four paths each, has ~10,000); a damaged or forged trace naming more is
 * refused (each device takes ~17 KiB and its share of the timelines). */
#define IT_DEVS_MAX 16384
/* Timeline intervals over all devices at most (56 MiB): a trace naming
 * thousands of devices gets longer intervals instead of 917 KiB per
 * device (aggregate.c). */
#define IT_TIMELINE_TOTAL (1u << 20)
#define IT_QD_EXACT 1024      /* depths 0..1023 counted exactly, the rest in one bin */
#define IT_SIZE_CLASSES 34    /* 0 bytes, then [2^(k-1), 2^k) for k = 1..33 */
enum { IT_OPC_READ, IT_OPC_WRITE, IT_OPC_OTHER, IT_OPC_MAX };

struct it_timeline_point {     /* one interval, by completion time */
	uint64_t ios[IT_OPC_MAX];
	uint64_t bytes[IT_OPC_MAX];
	/* the latencies (Q2C, ns) of those I/Os, summed: over the interval's
	 * length, the mean number in flight (Little's law; the HTML report's
	 * queue depth over time) */
	uint64_t latency_ns;
};

struct it_dev_stats {
	uint32_t dev;
	uint64_t first_ns, last_ns;          /* earliest start, latest completion */
	uint64_t ios[IT_OPC_MAX];
	uint64_t bytes[IT_OPC_MAX];
	uint64_t qd_insert[IT_QD_EXACT + 1]; /* I/Os by depth when they entered the queue */
	uint64_t qd_issue[IT_QD_EXACT + 1];  /* I/Os by depth at the driver when issued */
	uint32_t qd_insert_max, qd_issue_max;
	uint64_t sizes[IT_SIZE_CLASSES][IT_OPC_MAX];
	uint64_t seq[IT_OPC_MAX], rnd[IT_OPC_MAX];
	/* the flush machinery's flush commands (what diskstats counts as
	 * flushes): how many, their D2C */
	uint64_t flush_cmds, flush_cmd_ns, flush_cmd_max_ns;
	struct it_timeline_point *timeline;  /* ntimeline intervals of interval_ns */
	size_t ntimeline;
};

/* ---- counters of the stitching ---- */
struct it_stitch_stats {
	uint64_t events;
	uint64_t ignored;             /* other layers or unknown types */
	uint64_t ios;                 /* completed I/Os (trails) */
	uint64_t bytes;
	uint64_t request_ios, bio_ios;
	uint64_t no_q;                /* completed I/Os whose bio queue was not seen */
	uint64_t merges;              /* bio merges attributed to a request */
	uint64_t merges_unattributed; /* no pending request ended/started there */
	uint64_t rq_merges;           /* requests merged into another (gone) */
	uint64_t rq_merges_unknown;
	uint64_t splits, splits_unknown;
	uint64_t requeues, requeues_unknown;
	uint64_t partials;            /* partial completions */
	uint64_t errors;              /* I/Os completed with an error */
	uint64_t unknown_completions; /* completions of I/Os never seen queued or issued
				       * (in flight before the trace started) */
	/* The flush machinery (block/blk-flush.c), see stitch.c: */
	uint64_t flush_cmds;          /* its own flush commands (flush_rq): not I/Os */
	uint64_t flush_seq_ends;      /* second completions of PREFLUSH/FUA writes with
				       * data, in traces without IT_F_FLUSH_SEQ */
	uint64_t lost;                /* open trails given up because their request
				       * pointer came back (a completion was lost) */
	uint64_t lost_counted;        /*   of which issued: counted as completed I/Os,
				       *   without a completion time (stitch.c) */
	uint64_t bio_requeued;        /* bio queued again (stacked device remap) */
	uint64_t incomplete;          /* trails still open at the end: */
	uint64_t incomplete_queued;   /*   bio queued, no request seen */
	uint64_t incomplete_inserted; /*   request inserted, not issued */
	uint64_t incomplete_issued;   /*   issued, not completed */
	uint64_t tasks;               /* TASK events */
	uint64_t nvme_submits, nvme_completions; /* NVMe layer events */
	uint64_t nvme_linked;         /* NVMe completions whose request trail was open */
	uint64_t nvme_unlinked;       /* NVMe completions without a block trail (admin, passthrough) */
	uint64_t nvme_trails;         /* completed trails with both S and N */
	uint64_t nvme_stage_sum_ok;   /*   of which Q2I+I2D(Q2D)+D2N+N2C == Q2C, all in order */
	uint64_t first_ts, last_ts;   /* event time range */
};

/* The classes of /sys/block/DEV/stat: a data-less PREFLUSH write (op
 * flush) is a write there, the flush machinery's flush commands flushes. */
enum { IT_DS_READ, IT_DS_WRITE, IT_DS_FLUSH, IT_DS_DISCARD, IT_DS_MAX };
extern const char *const it_ds_names[IT_DS_MAX]; /* "reads", "writes", ... */
/* The class of a completion of op (flush_cmd: the machinery's flush
 * command), -1 for what diskstats does not count (passthrough). */
int it_ds_class(uint8_t op, bool flush_cmd);

/* A device's completions in the diskstats window (diskwin.c), per class. */
struct it_diskwin {
	uint32_t dev;
	uint64_t counted[IT_DS_MAX];   /* counted as I/Os (flush commands): seen, or */
	uint64_t reused[IT_DS_MAX];    /*   from their request's reuse (no probe saw them) */
	uint64_t unstarted[IT_DS_MAX]; /* seen, not I/Os: their start was not recorded */
};

/* What the kernel counted on a device while recording (IT_EV_DISKSTATS):
 * completed I/Os from /sys/block/DEV/stat, for devices that were busy;
 * with a window (it_results.disk_window), iotrail's count in it. */
struct it_diskstats {
	uint32_t dev;
	uint64_t reads, writes, flushes, discards;
	struct it_diskwin win;
};
/* The kernel's count of one class (IT_DS_*). */
uint64_t it_diskstats_kernel(const struct it_diskstats *d, int cls);
/* Reconciled (a window, no scope): completions of a class the kernel
 * counted that iotrail's counts lack, and those iotrail counted beyond
 * the kernel's (I/Os that completed while the counters were read). */
uint64_t it_diskwin_short(const struct it_diskstats *d, int cls);
uint64_t it_diskwin_over(const struct it_diskstats *d, int cls);
struct it_results;
uint64_t it_diskwin_short_total(const struct it_results *r); /* 0 when not reconciled */

struct it_results {
	uint64_t start_ns, end_ns;    /* analysed window (monotonic) */
	struct it_task_counted task;  /* traces recorded with a task's predicate or sampling */
	struct it_diskstats *disk;    /* traces that carry them; ndisk of them */
	size_t ndisk;
	/* the window of those counts (traces since IT_EV_DISKSTATS_FROM):
	 * reconciled unless the block layer recorded only a scope's I/O */
	bool disk_window, disk_scoped;
	uint64_t disk_from_ns, disk_to_ns;
	double duration_s;
	uint64_t interval_ns;         /* timeline interval (1 s) */
	struct it_stitch_stats stats;
	struct it_group *groups;      /* sorted by key, in the order of the keys */
	size_t ngroups;
	struct it_dev_stats *devs;    /* sorted by dev */
	size_t ndevs;
	uint8_t keys[IT_KEY_MAX];
	unsigned nkeys;
};

/* ---- the analyzer ---- */
struct it_analyzer_opts {
	uint8_t keys[IT_KEY_MAX];     /* group-by keys, in order */
	unsigned nkeys;
	uint64_t start_ns;            /* trace start (monotonic); 0: the first event */
	uint64_t interval_ns;         /* timeline interval; 0: 1 s */
	uint8_t distinct;             /* bit (1u << IT_DISTINCT_*) per key whose distinct
				       * values each group counts (report --stats) */
	uint64_t epoch_ns;            /* --sample N/EPOCH's: count the epochs of kept
				       * I/Os' Q times (it_task_counted.epochs); 0: no */
	/* Called with every completed trail (exporters, per-I/O listings). */
	void (*on_trail)(const struct it_trail *t, void *ctx);
	void *ctx;
};
#define IT_ANALYZER_OPTS_DEFAULT { .keys = { IT_KEY_OP, IT_KEY_DEV }, .nkeys = 2 }

/* Parses "op,dev" into o->keys/o->nkeys; "none" groups everything
 * together. Returns 0, or -1 with a reason in err. */
int it_parse_group_keys(const char *s, struct it_analyzer_opts *o, char *err, size_t errlen);

struct it_analyzer *it_analyzer_new(const struct it_analyzer_opts *o);
/* Sets (or clears, fn NULL) the on_trail callback before the first feed. */
void it_analyzer_set_on_trail(struct it_analyzer *a, void (*fn)(const struct it_trail *t, void *ctx),
			      void *ctx);
/* Sets the callback for every completed NVMe command (nvme.h), before the
 * first feed: called once its request's trail completed too (t, complete:
 * the block points around the command), or with t NULL for a command
 * without a trail (admin, passthrough, a trail lost or still open at the
 * end). Costs nothing when not set. */
struct it_nvme_cmd;
void it_analyzer_set_on_nvme_cmd(struct it_analyzer *a,
				 void (*fn)(const struct it_nvme_cmd *c, const struct it_trail *t, void *ctx),
				 void *ctx);
/* Returns 0, or -1 once memory ran out (the results are then partial). */
int it_analyzer_feed(struct it_analyzer *a, const struct it_event *evs, size_t n);
/* End of the stream: counts open trails as incomplete, sorts the groups.
 * end_ns is the trace end (monotonic); 0: the last event. */
void it_analyzer_finish(struct it_analyzer *a, uint64_t end_ns);
/* The queue time of the oldest open trail that has one, at or after
 * not_before; UINT64_MAX when there is none. A scan of the open trails
 * (call it per batch, not per event). */
uint64_t it_analyzer_oldest_open(const struct it_analyzer *a, uint64_t not_before);
/* An open trail that has a queue time: the thread that queued it, and
 * when (a system call of that thread may own it once it completes). */
struct it_open_trail {
	uint32_t tid;
	uint64_t q;
};
/* The open trails queued in [not_before, before), into out[0..max): how
 * many there are (more than max: call again with room for them). A scan
 * of the open trails, as it_analyzer_oldest_open. */
size_t it_analyzer_open_trails(const struct it_analyzer *a, uint64_t not_before, uint64_t before,
			       struct it_open_trail *out, size_t max);
/* Valid after it_analyzer_finish until it_analyzer_free. */
const struct it_results *it_analyzer_results(const struct it_analyzer *a);
/* Name of an interned comm id ("" for 0 / unknown). */
const char *it_analyzer_comm(const struct it_analyzer *a, uint32_t id);
/* A process's title (the syscall layer's title record; the first one per
 * pid counts), for --group-by role. 0, or -1 when memory ran out. */
int it_analyzer_title(struct it_analyzer *a, uint32_t pid, const char *title, size_t len);
/* The name of a group's role (key.role). */
const char *it_analyzer_role(const struct it_analyzer *a, uint32_t id);
/* Nonzero when memory ran out while analysing, or the trace named more than
 * IT_DEVS_MAX devices. */
int it_analyzer_error(const struct it_analyzer *a);
/* Why the analysis failed, in words, when not for memory; else NULL. */
const char *it_analyzer_why(const struct it_analyzer *a);
void it_analyzer_free(struct it_analyzer *a);

/* ---- helpers shared by the printers and tests ---- */
const char *it_op_name(unsigned op);
/* 0 for 0 bytes, else k with 2^(k-1) <= bytes < 2^k */
static inline unsigned it_size_class(uint32_t bytes)
{
	return bytes ? 32 - (unsigned)__builtin_clz(bytes) : 0;
}
static inline uint64_t it_size_class_lo(unsigned c) { return c ? 1ull << (c - 1) : 0; }
static inline uint64_t it_size_class_hi(unsigned c) { return c ? (1ull << c) - 1 : 0; }
static inline unsigned it_op_class(unsigned op)
{
	return op == IT_OP_READ ? IT_OPC_READ : op == IT_OP_WRITE ? IT_OPC_WRITE : IT_OPC_OTHER;
}
extern const char *const it_opc_names[IT_OPC_MAX];

#endif
