/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The query protocol's meaning (doc/agent-protocol.md, "Queries"): the
 * switches a LOAD, STORE or RESET can address, the text form of an
 * instruction (`load block.d2c p99 window=2s`) into its message, the
 * settings a STORE can change, and LOAD's answer computed from a
 * recorder's spool with the analyzer. Pure C (no sockets, no libbpf): the
 * agent calls it, the unit tests feed it synthetic traces.
 */
#ifndef IOTRAIL_AGENT_QUERY_H
#define IOTRAIL_AGENT_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "agent/proto.h"

/* A switch: one stage of one layer, named as the report names it. */
enum it_switch_layer {
	IT_SW_BLOCK,        /* the block layer's stages, per device */
	IT_SW_TARGET,       /* the fabric layer's target alone, per initiator controller */
};
struct it_switch {
	const char *name;   /* "block.d2c", "target.dev" */
	uint8_t layer;      /* enum it_switch_layer */
	unsigned stage;     /* block: IT_STAGE_* (analyzer.h); target: the fabric stage
			     * of the same name (it_target_stage) */
};
extern const struct it_switch it_switches[];
extern const size_t it_nswitches;
/* NULL when unknown. */
const struct it_switch *it_switch_find(const char *name);

/* What a STORE can change, kept by the agent for every switch. */
struct it_query_settings {
	uint64_t window_ns;            /* LOAD's window when it names none */
	uint8_t npct;                  /* LOAD's percentiles when it names none */
	uint32_t pct[IT_QUERY_PCTS];
};
#define IT_QUERY_WINDOW_DEFAULT 1000000000ull /* 1 s */
#define IT_QUERY_WINDOW_MIN 10000000ull       /* 10 ms */
#define IT_QUERY_WINDOW_MAX 3600000000000ull  /* 1 hour */
void it_query_settings_default(struct it_query_settings *s);

/*
 * One instruction in its text form into the message that carries it:
 *   load SWITCH [STAT...] [window=DURATION] [op=OP] [dev=NAME | ctrl=CNTLID]
 *   store SWITCH|all SETTING=VALUE
 *   reset SWITCH|all
 * STAT: count min avg max iops bytes pN (p99, p99.9), default all of them.
 * 0, or -1 with a one-line reason ("what is wrong; what is accepted").
 */
int it_query_parse(const char *text, struct it_agent_msg *m, char *err, size_t errlen);

/* Applies a STORE to *s. 0; -1 with *code IT_AERR_UNSUPPORTED (a setting
 * the agent cannot honour yet: predicates, sampling) or IT_AERR_BAD (an
 * unknown setting or a bad value), and the reason in err. */
int it_query_store(struct it_query_settings *s, const char *name, const char *value,
		   uint32_t *code, char *err, size_t errlen);
/* The setting named, as text ("2s", "50,99,99.9"), into out. */
void it_query_setting_text(const struct it_query_settings *s, const char *name, char *out,
			   size_t len);

/* Parses "2s", "250ms", "1.5" (seconds) into ns; false when not a
 * duration within the window's limits. */
bool it_query_duration(const char *s, uint64_t *ns);
/* "99.9" into thousandths of a percent; false when not in (0, 100]. */
bool it_query_pct(const char *s, uint32_t *pct);
/* A percentile's name from thousandths of a percent: "p99.9". */
void it_query_pct_name(uint32_t pct, char *out, size_t len);

/* How far behind the spool's readable end is: the recorder flushes every
 * 0.25 s, so events older than twice that are all in. */
#define IT_QUERY_LAG_NS 500000000ull

/*
 * LOAD's answer from a spool (a trace file being written): the I/Os that
 * completed in the window [end - window, end), end = now_ns -
 * IT_QUERY_LAG_NS (both clipped to the recording's start), and those that
 * completed since reset_ns, filtered by op and device. The target's
 * switches count the commands of the target alone (no initiator in the
 * spool) that were parsed and completed inside the span, per initiator
 * controller (dev: its cntlid). Fills a STATS message. 0, or -1 with a
 * reason (the spool unreadable, an unknown device).
 */
int it_query_load(const char *spool, const struct it_agent_msg *load,
		  const struct it_query_settings *set, uint64_t reset_ns, uint64_t now_ns,
		  struct it_agent_msg *stats, char *err, size_t errlen);

#endif
