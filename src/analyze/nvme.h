/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The NVMe command analyzer: IT_LAYER_NVME events (include/iotrail/event.h)
 * -> one record per command (submission to completion) -> per opcode, per
 * queue and per interval aggregates, and the ranges of DSM (discard)
 * commands. Pure C, fed in stream order like the block analyzer; the
 * block analyzer runs one itself (it_analyzer_nvme), the CSV exporter runs
 * its own with on_cmd.
 *
 * Identity: the struct request pointer (the id of both events). A command
 * is in flight on its queue (controller, qid) from SUBMIT to COMPLETE; a
 * request submitted again before completing (requeue) restarts its command.
 */
#ifndef IOTRAIL_ANALYZE_NVME_H
#define IOTRAIL_ANALYZE_NVME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iotrail/event.h"
#include "analyze/hist.h"

/* NVMe opcodes (NVM command set, zoned namespace command set) */
enum {
	IT_NVME_FLUSH = 0x00,
	IT_NVME_WRITE = 0x01,
	IT_NVME_READ = 0x02,
	IT_NVME_WRITE_ZEROES = 0x08,
	IT_NVME_DSM = 0x09,
	IT_NVME_ZONE_MGMT_SEND = 0x79,
	IT_NVME_ZONE_MGMT_RECV = 0x7a,
	IT_NVME_ZONE_APPEND = 0x7d,
};

/* One completed command. */
struct it_nvme_cmd {
	uint64_t rq;              /* struct request * */
	uint64_t submit_ns, complete_ns;
	uint64_t slba;            /* start LBA (commands that have one, else 0) */
	uint64_t result;          /* completion result (zone append: the LBA written) */
	uint32_t dev, nsid;
	uint32_t pid, tid;        /* task that set the command up */
	uint32_t bytes;           /* data bytes (blk_rq_bytes) */
	uint32_t nlb;             /* LBAs (1-based), 0 when the command has none */
	uint32_t qd;              /* commands in flight on its queue at submission, itself included */
	uint32_t nranges;         /* DSM: ranges */
	uint64_t range_sector;    /* DSM: first range, 512-byte sectors */
	uint64_t range_bytes;     /* DSM: bytes of all ranges */
	uint64_t cqe_ns;          /* the driver handled its CQE (nvme_sq), 0 when not seen */
	uint16_t cid, qid, ctrl, status;
	uint8_t opcode;
	uint8_t zsa;              /* zone management send action */
	char comm[16];            /* of tid, when a TASK event named it */
};

static inline bool it_nvme_is_admin(const struct it_nvme_cmd *c) { return c->qid == 0; }
/* "read", "write", "dsm", "zone_append", ... or "admin_identify"; unknown
 * opcodes: "io_0xNN" / "admin_0xNN" (written into buf). */
const char *it_nvme_opcode_name(uint8_t opcode, bool admin, char *buf, size_t len);

struct it_nvme_opcode_stats {
	uint64_t count, bytes, errors;
	struct it_hist lat;       /* submit -> complete, ns */
};

/* One interval of a queue's depth over time (intervals as the timeline's). */
struct it_nvme_qd_interval {
	double qd_ns;             /* integral of commands in flight on the queue over time */
	uint32_t qd_max;          /* at a submission in the interval */
};

#define IT_NVME_QD_EXACT 1024
struct it_nvme_queue_stats {
	uint16_t ctrl, qid;
	uint64_t commands, bytes;
	uint64_t qd[IT_NVME_QD_EXACT + 1]; /* commands by in-flight depth at submission */
	uint32_t qd_max;
	/* SQ backlog from nvme:nvme_sq, one sample per CQE the driver handled:
	 * (tail - head) mod sq_size, entries the controller had not fetched */
	uint64_t sq_samples;
	uint64_t sq_invalid;      /* samples with head or tail outside the queue size */
	uint64_t sq_backlog[IT_NVME_QD_EXACT + 1];
	uint32_t sq_backlog_max;
	uint32_t sq_size;         /* entries (last seen), 0 unknown */
	struct it_nvme_qd_interval *qd_time; /* ntimeline entries (results) */
	size_t nqd_time;
};

struct it_nvme_interval {
	uint64_t commands, bytes, read_bytes, write_bytes; /* by completion time */
	double qd_ns;             /* integral of in-flight commands over time (all queues) */
	uint32_t qd_max;
};

struct it_nvme_range {
	uint32_t dev;
	uint64_t sector;          /* 512-byte sectors */
	uint64_t bytes;
	uint64_t submit_ns;
};

#define IT_NVME_MAX_RANGES 4096 /* ranges kept for the report (all are counted) */
/* Queues (controller, qid) one analysis follows at most: a damaged or
 * forged trace naming more is refused (each takes ~17 KiB); a machine has
 * a few thousand at the most. */
#define IT_NVME_QUEUES_MAX 16384
/* Per-queue depth-over-time intervals in all (64 MiB): beyond 256 queues
 * the intervals get longer (nvme.c: nvme_fit). */
#define IT_NVME_QUEUE_TIMELINES (1u << 22)

struct it_nvme_results {
	uint64_t submits, commands; /* commands: completed */
	uint64_t admin, errors;
	uint64_t unknown_completions; /* completions without a seen submission */
	uint64_t incomplete;          /* submitted, not completed at the end */
	uint64_t requeued;            /* submitted again before completing */
	uint64_t sq_events;           /* nvme:nvme_sq events (0: not recorded or not PCIe) */
	uint64_t start_ns, end_ns, interval_ns;
	struct it_nvme_opcode_stats op[2][256]; /* [admin][opcode] */
	struct it_nvme_queue_stats *queues;     /* sorted by (ctrl, qid) */
	size_t nqueues;
	struct it_nvme_interval *timeline;
	size_t ntimeline;
	uint64_t dsm_commands, nranges;
	struct it_nvme_range *ranges;           /* the first IT_NVME_MAX_RANGES */
	size_t nranges_kept;
};

struct it_nvme_opts {
	uint64_t start_ns;        /* 0: the first event */
	uint64_t interval_ns;     /* 0: 1 s */
	void (*on_cmd)(const struct it_nvme_cmd *c, void *ctx);
	void *ctx;
	/* Names a tid from another side table (the block analyzer's); NULL:
	 * the TASK events fed here. */
	const char *(*name_tid)(uint32_t tid, void *ctx);
	void *name_ctx;
};

struct it_nvme *it_nvme_new(const struct it_nvme_opts *o);
/* Any event; other layers are ignored (TASK events name tids). Returns 0,
 * or -1 once memory ran out. */
int it_nvme_feed(struct it_nvme *n, const struct it_event *e);
void it_nvme_finish(struct it_nvme *n, uint64_t end_ns);
const struct it_nvme_results *it_nvme_results(const struct it_nvme *n);
/* Why feeding failed, in words, when not for memory; else NULL. */
const char *it_nvme_why(const struct it_nvme *n);
void it_nvme_free(struct it_nvme *n);

/* The block analyzer's NVMe view (NULL when the stream had no NVMe event). */
struct it_analyzer;
const struct it_nvme_results *it_analyzer_nvme(const struct it_analyzer *a);

/* JSON "nvme" member and text section over the results (report_nvme.c). */
struct it_json;
struct it_report_input;
void it_nvme_report_json(struct it_json *j, const struct it_report_input *in);
void it_nvme_report_text(FILE *f, const struct it_report_input *in);

#endif
