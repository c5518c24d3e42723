/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The analysis side as modules (doc/architecture.md, "Analysis side"): one pass
 * over a trace file hands each chunk once, in file order, to every
 * consumer that reads its type: the analysis layers of `iotrail report`
 * (it_analysis_layers[], src/analyze/layers.c) or an exporter
 * (it_exporters[], src/export/exporters.c). Layers that join another
 * layer's data (syscall <- block trails) subscribe to the bus instead of
 * being called by that layer. Pure C, no CLI headers.
 */
#ifndef IOTRAIL_ANALYZE_LAYER_H
#define IOTRAIL_ANALYZE_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iotrail/event.h"
#include "iotrail/trace_format.h"
#include "analyze/analyzer.h"

struct it_task;

struct it_json;
struct it_reader;
struct it_reader_status;

/* ---- the bus: notifications between layers ---- */
enum it_bus_topic {
	IT_BUS_TRAIL_DONE,      /* const struct it_bus_trail *: a block trail completed */
	IT_BUS_BLOCK_WATERMARK, /* const uint64_t *: every trail queued before this time
				 * (monotonic ns) has been published, or never will be */
	IT_BUS_CALL_DONE,       /* const struct it_bus_call *: a system call was summed up */
	IT_BUS_NVME_CMD_DONE,   /* const struct it_bus_nvme_cmd *: an NVMe command completed
				 * (with its request's trail, once that completed too) */
	IT_BUS_FABRIC_CMD_DONE, /* const struct it_fabric_matched * (layers/fabric/fabric.h):
				 * a host NVMe command matched to its target command, its
				 * stages taken (two machines: at the pass's end) */
	IT_BUS_PROBE,           /* const struct it_bus_probe *: a user-space probe hit (in
				 * time order) or a span it closed (uprobe layer) */
	IT_BUS_F2FS,            /* const struct it_bus_f2fs * (layers/fs/f2fs_analysis.h):
				 * an F2FS GC round, checkpoint or background GC wake-up,
				 * in time order, at the pass's end (fs layer) */
	IT_BUS_BLOCK_OPEN,      /* const struct it_bus_block_open *: before each watermark,
				 * the trails still open behind the stream's front */
	IT_BUS_MAX
};

struct it_bus_trail {
	const struct it_trail *t;
	const struct it_analyzer *a;  /* its comm names (it_analyzer_comm) */
};

/* Every trail queued before seen has been published (or never will be)
 * but the open ones of open[0..nopen): a system call waits only for those
 * of its own thread, not for the watermark (which an I/O whose completion
 * was lost holds back for the block layer's horizon, 60 s). */
struct it_bus_block_open {
	uint64_t seen;
	const struct it_open_trail *open;
	size_t nopen;
};

struct it_bus_call {
	uint32_t tid;
	uint16_t call;                /* enum it_sys_call */
	uint64_t ts_enter, ts_exit;
	uint64_t block_ns;            /* time with its block I/O in the block layer */
	uint32_t block_ios;
};

/* A host NVMe command (nvme.h: ctrl instance, qid, cid, opcode, bytes,
 * S = submit_ns, N = complete_ns) and its request's completed block trail
 * (Q/I/D before S, C after N), or NULL when it has none (admin and
 * passthrough commands, a trail that did not complete). Published in the
 * order trails (or trail-less commands) complete. */
struct it_nvme_cmd;
struct it_bus_nvme_cmd {
	const struct it_nvme_cmd *c;
	const struct it_trail *t;
};

/* A user-space probe's hit as the uprobe layer takes it (time order), or
 * a span it closed: a hit of the span's end probe paired with its
 * start's on the thread (published right after that end's hit). */
/* OPEN: a span begun and not ended when the trace ends (the recording
 * stopped inside it): its duration runs to the trace's end */
enum it_probe_row { IT_PROBE_EVENT, IT_PROBE_BEGIN, IT_PROBE_END, IT_PROBE_SPAN, IT_PROBE_OPEN };
struct it_bus_probe {
	enum it_probe_row kind;       /* BEGIN/END: a hit of a span's start/end probe */
	const char *label;            /* the probe's label; a span's name ("checkpoint") */
	const char *binary;           /* the probed binary */
	uint64_t ts_ns;               /* the hit; a span's start */
	uint64_t duration_ns;         /* a span's (0 for a hit) */
	uint32_t pid, tid;
	uint32_t nargs;               /* the hit's arguments (a span: its start's) */
	const uint64_t *args;
};

typedef void (*it_bus_fn)(const void *msg, void *ctx);

#define IT_BUS_SUBS 4 /* subscribers per topic */
struct it_bus {
	struct { it_bus_fn fn; void *ctx; } sub[IT_BUS_MAX][IT_BUS_SUBS];
	unsigned nsub[IT_BUS_MAX];
};

/* Returns 0, or -1 when the topic has IT_BUS_SUBS subscribers already. */
int it_bus_subscribe(struct it_bus *b, enum it_bus_topic t, it_bus_fn fn, void *ctx);

static inline bool it_bus_wanted(const struct it_bus *b, enum it_bus_topic t)
{
	return b && b->nsub[t];
}

static inline void it_bus_publish(const struct it_bus *b, enum it_bus_topic t, const void *msg)
{
	for (unsigned i = 0; i < b->nsub[t]; i++)
		b->sub[t][i].fn(msg, b->sub[t][i].ctx);
}

/* ---- what the layers are built with ---- */

/* What `iotrail report` was asked (each layer reads its part). */
struct it_layer_opts {
	struct it_analyzer_opts analyzer; /* group-by keys; start_ns is set from the trace */
	bool zones;                       /* --zones */
	bool events;                      /* --events: the event lists in JSON */
	bool pretty;                      /* --pretty: JSON indented */
	bool log;                         /* --log: the event lists as text, nothing else */
	bool recompute_clock;             /* --recompute-clock: a stored clock estimate is ignored */
	uint16_t join_machine;            /* --join N: machine 0's fabric joins target machine N
					   * (0: the one serving the most controllers) */
	bool fabric_grouped;              /* --fabric-group-by: the fabric's keys */
	uint8_t fabric_keys[8];           /*   enum it_fabric_key, in order */
	unsigned nfabric_keys;
};

struct it_pass_info {
	const char *path;
	const struct it_host_rec *host;
	const struct it_device_rec *devs;
	size_t ndevs;
	uint32_t layers;                  /* 1u << enum it_layer: layers the trace has */
	const struct it_layer_opts *opts;
	struct it_bus *bus;
	uint16_t machine;                 /* whose chunks the pass reads (report --machine) */
	uint16_t join_machine;            /* machine 0's fabric join: this target machine
					   * (0: the one serving most controllers) */
	int64_t clock_offset_ns;          /* its CLOCK offset to machine 0 (0 for machine 0) */
	/* export of machines 1..: its clock on machine 0's, as machine 0's fabric
	 * view placed it (layers/fabric/clock.h); NULL: its own clock */
	const struct it_clock_est *clock_est;
};

/* The trace's span at the end of the pass. */
struct it_span {
	uint64_t start_ns;                /* HOST start (monotonic), 0 when not recorded */
	uint64_t end_ns;                  /* END chunk's time; 0: no END (cut short) */
	uint64_t lost;                    /* the layer's records lost (its DROPS chunk, which
					   * the reader reads itself); 0 when none was written */
};

struct it_report_ctx {
	const char *path;
	const struct it_host_rec *host;
	const struct it_device_rec *devs;
	size_t ndevs;
	const struct it_reader_status *status;
	const struct it_layer_opts *opts;
	const struct it_task *task;              /* the recording's task (task.h); NULL: none */
	/* the report's own last members of the JSON object (e.g. the machines
	 * of a file of several); NULL: none */
	void (*json_tail)(struct it_json *j, const void *arg);
	const void *json_tail_arg;
};

/* ---- an analysis layer ---- */
struct it_analysis_layer {
	const char *name;                 /* as in the HOST record's layers list */
	enum it_layer layer;
	bool always;                      /* built for every trace: it carries the report's
					   * frame (header, devices), with or without its data */
	const uint16_t *chunks;           /* chunk types it reads */
	size_t nchunks;
	const char *event_list;           /* what its report_log lists ("system calls"), or NULL */
	void *(*new)(const struct it_pass_info *info);
	/* A chunk's payload: count records (EVENTS: struct it_event). 0, or
	 * -1 once memory ran out. */
	int (*feed)(void *self, uint16_t type, const void *payload, size_t len, uint32_t count);
	int (*finish)(void *self, const struct it_span *span);
	/* Why feed or finish failed, in words, when not for memory (NULL:
	 * memory ran out); the op may be NULL. */
	const char *(*why)(void *self);
	void (*report_text)(void *self, FILE *f, const struct it_report_ctx *ctx);
	/* its members of the report's JSON object */
	void (*report_json)(void *self, struct it_json *j, const struct it_report_ctx *ctx);
	void (*report_log)(void *self, FILE *f, const struct it_report_ctx *ctx); /* or NULL */
	void (*free)(void *self);
};

/* Every analysis layer, in report order (src/analyze/layers.c). */
extern const struct it_analysis_layer *const it_analysis_layers[];
extern const size_t it_analysis_nlayers;

/* The layers a trace has, from its manifest: 1u << enum it_layer each. */
uint32_t it_pass_layers(const struct it_reader *rd);

/* ---- the pass ---- */
struct it_consumer {
	const uint16_t *chunks;
	size_t nchunks;
	int (*feed)(void *self, uint16_t type, const void *payload, size_t len, uint32_t count);
	void *self;
};

/* Reads rd (a records reader opened with the consumers' chunk types) to
 * its end, each chunk to every consumer that reads its type. Returns 0;
 * -1 with a reason in err on a read error; -2 when a consumer ran out of
 * memory. */
int it_pass_run(struct it_reader *rd, const struct it_consumer *c, size_t n, char *err,
		size_t errlen);
/* Adds the chunk types of c to types[*n] (no repeats; at most max). */
void it_pass_types(const uint16_t *chunks, size_t nchunks, uint16_t *types, size_t *n, size_t max);

/* ---- `iotrail report`: the layers a trace has, through one pass ---- */
struct it_analysis;

/* The chunk types of every analysis layer (to open the reader with). */
size_t it_analysis_chunk_types(uint16_t *types, size_t max);
/* Builds the layers the trace has (HOST layers list; the `always` ones
 * too). NULL when memory ran out. */
struct it_analysis *it_analysis_new(const struct it_pass_info *info);
/* The layer that lists events for --events/--log among the built ones;
 * when none is, *missing names the registered one (NULL: none exists). */
bool it_analysis_lists(const struct it_analysis *an, const struct it_analysis_layer **missing);
/* The pass and every layer's finish. 0; -1 (read error, reason in err);
 * -2 (a layer failed: out of memory, or what its why says, in err; err
 * empty for memory). */
int it_analysis_run(struct it_analysis *an, struct it_reader *rd, char *err, size_t errlen);
void it_analysis_report_text(struct it_analysis *an, FILE *f, const struct it_report_ctx *ctx);
void it_analysis_report_json(struct it_analysis *an, FILE *f, const struct it_report_ctx *ctx,
			     bool pretty);
void it_analysis_report_log(struct it_analysis *an, FILE *f, const struct it_report_ctx *ctx);
/* The bus the layers publish on: an exporter subscribes before the run. */
struct it_bus *it_analysis_bus(struct it_analysis *an);
/* The state ops->new made for the trace, or NULL when it was not built. */
void *it_analysis_state(const struct it_analysis *an, const struct it_analysis_layer *ops);
void it_analysis_free(struct it_analysis *an);

/* The layers (layers.c lists them); the block layer's analyzer (for the
 * benchmark and tests: its results, comm names). */
extern const struct it_analysis_layer it_layer_block, it_layer_syscall, it_layer_fabric;
extern const struct it_analysis_layer it_layer_uprobe;
extern const struct it_analysis_layer it_layer_fs;
/* The uprobe layer's entries held now (hits waiting, open and closed
 * spans, I/Os), and the most at once in *peak: its memory bound. */
uint64_t it_layer_uprobe_live(const void *state, uint64_t *peak);
const struct it_analyzer *it_layer_block_analyzer(const void *state);
/* The syscall layer's results (after the pass), for the HTML report. */
struct it_sysan_results;
const struct it_sysan_results *it_layer_syscall_results(const void *state);
/* The fabric join's clock estimate (machine 0's pass of a file of several)
 * and the machine it is of; NULL when no target machine was joined. */
const struct it_clock_est *it_layer_fabric_clock(const void *state, uint16_t *machine);

#endif
