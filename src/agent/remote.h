/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The initiator's side of the agent channel, for `iotrail record
 * --target`: start the target's recording, pull its chunks into a spool
 * file now and then, measure the clock offset, stop. The spool is always
 * a readable trace (whole chunks only), so a lost agent costs at most the
 * data since the last pull.
 */
#ifndef IOTRAIL_AGENT_REMOTE_H
#define IOTRAIL_AGENT_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iotrail/trace_format.h"

struct it_remote;
struct it_chan;
struct it_agent_msg;

/* Connects to the agent at target (HOST:PORT), authenticates with the key
 * file (NULL: the default) and exchanges HELLO: a channel for queries or a
 * session. NULL with a one-line reason ("failed to ...: WHY; WHAT TO DO"). */
struct it_chan *it_agent_connect(const char *target, const char *keyfile, char *err,
				 size_t errlen);
/* Sends m, receives the answer of type want into *a. 0; -1 with the reason
 * (an ERROR answer: "the agent says: ..."). */
int it_agent_ask(struct it_chan *c, const struct it_agent_msg *m, uint16_t want,
		 struct it_agent_msg *a, char *err, size_t errlen);

struct it_remote_opts {
	const char *target;       /* HOST:PORT */
	const char *keyfile;
	const char *layers;       /* "" or NULL: the target's default */
	const char *devs;         /* comma-separated, "" or NULL: every device */
	const char *spool;        /* where the target's trace goes */
	uint64_t pull_every_ns;
};

/* Connects, authenticates, HELLO, clock exchanges, creates the spool: the
 * agent is reachable and speaks our protocol, nothing records yet. NULL
 * with a one-line reason ("WHAT: WHY; WHAT TO DO") on any failure. */
struct it_remote *it_remote_open(const struct it_remote_opts *o, char *err, size_t errlen);
/* START: the target records. 0, or -1 with the one-line reason (the
 * caller frees r; the spool is its to remove). */
int it_remote_begin(struct it_remote *r, char *err, size_t errlen);
/* Pulls when pull_every_ns has passed; the first failure marks the agent
 * lost and prints one warning line. */
void it_remote_tick(struct it_remote *r, uint64_t now_ns);
/* More clock exchanges, STOP, the last pulls. 0, or -1 when the agent is
 * (or gets) lost: the spool then holds what was pulled before. */
int it_remote_finish(struct it_remote *r);
/* The best clock estimate (machine 1 relative to machine 0). */
void it_remote_clock(const struct it_remote *r, struct it_clock_rec *c, uint64_t *rtt_ns);
/* NULL, or why the agent was lost (and when, CLOCK_MONOTONIC). */
const char *it_remote_lost(const struct it_remote *r, uint64_t *at_ns);
const char *it_remote_target(const struct it_remote *r);
uint64_t it_remote_bytes(const struct it_remote *r);
void it_remote_free(struct it_remote *r);

#endif
