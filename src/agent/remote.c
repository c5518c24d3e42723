// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The initiator's side of a recording session (remote.h). Clock: NTP's
 * four timestamps over the channel (t1 sent, t2 agent received, t3 agent
 * sent, t4 received), several exchanges at the start and at the end, the
 * one with the smallest round trip kept: its offset is off by at most half
 * its round trip (the exchange cannot be faster than the wire each way).
 */
#include "agent/remote.h"
#include "agent/channel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS 10000
/* START waits for the agent's recorder to load its probes: the agent gives
 * it 120 s (START_WAIT_NS in agent.c; a slow, loaded target can need a
 * minute), and says so when it gives up */
#define START_TIMEOUT_MS 130000
#define CLOCK_SAMPLES 8            /* per round: at the start and at the end */

struct it_remote {
	struct it_remote_opts o;
	char spool_path[4096];    /* o.spool's copy: the caller's may not last */
	struct it_chan *c;
	int spool;
	uint64_t bytes, next_pull;
	size_t last_len;          /* bytes of the last DATA */
	struct it_clock_sample best;
	unsigned samples;
	char lost[160];
	uint64_t lost_at;
	bool final;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint16_t proto_version(void)
{
	/* tests only: speak another version, to see it refused */
	const char *v = getenv("IOTRAIL_AGENT_PROTOCOL");

	return v && *v ? (uint16_t)atoi(v) : IT_AGENT_VERSION;
}

/* Sends m and receives the answer of the type wanted; an ERROR answer or
 * another type is a failure with the agent's own line. */
int it_agent_ask(struct it_chan *c, const struct it_agent_msg *m, uint16_t want,
		 struct it_agent_msg *a, char *err, size_t errlen)
{
	int rc;

	if (it_chan_send(c, m, err, errlen))
		return -1;
	rc = it_chan_recv(c, a, err, errlen);
	if (rc == 0)
		snprintf(err, errlen, "the agent closed the connection");
	if (rc <= 0)
		return -1;
	if (a->type == IT_MSG_ERROR) {
		snprintf(err, errlen, "the agent says: %s", a->u.error.text);
		return -1;
	}
	if (a->type != want) {
		snprintf(err, errlen, "the agent answered message type %u, not %u", a->type, want);
		return -1;
	}
	return 0;
}

static int clock_round(struct it_remote *r, char *err, size_t errlen)
{
	for (int i = 0; i < CLOCK_SAMPLES; i++) {
		struct it_agent_msg m = { .type = IT_MSG_CLOCK }, a;
		struct it_clock_sample s;
		uint64_t t4;

		m.u.clock.t1 = now_ns();
		if (it_agent_ask(r->c, &m, IT_MSG_CLOCK, &a, err, errlen))
			return -1;
		t4 = now_ns();
		if (!a.u.clock.reply || a.u.clock.t1 != m.u.clock.t1 ||
		    !it_clock_sample(m.u.clock.t1, a.u.clock.t2, a.u.clock.t3, t4, &s))
			continue; /* not a usable exchange (a clock step?): the others decide */
		it_clock_keep_best(&r->best, &s);
		r->samples++;
	}
	if (!r->samples) {
		snprintf(err, errlen, "no usable clock exchange with the agent");
		return -1;
	}
	return 0;
}

struct it_chan *it_agent_connect(const char *target, const char *keyfile, char *err,
				 size_t errlen)
{
	struct it_agent_msg m = { .type = IT_MSG_HELLO }, a;
	uint8_t key[IT_AGENT_KEY_LEN];
	struct it_chan *c;
	char why[400];

	if (it_key_load(keyfile ? keyfile : IT_AGENT_KEY_DEFAULT, key, why, sizeof(why))) {
		snprintf(err, errlen, "failed to use a key for %s: %s", target, why);
		return NULL;
	}
	if (!(c = it_chan_connect(target, key, TIMEOUT_MS, why, sizeof(why)))) {
		snprintf(err, errlen, "failed to reach the agent at %s: %s", target, why);
		return NULL;
	}
	m.version = proto_version();
	m.u.hello.version = m.version;
	snprintf(m.u.hello.software, sizeof(m.u.hello.software), "iotrail");
	gethostname(m.u.hello.host, sizeof(m.u.hello.host) - 1);
	if (it_agent_ask(c, &m, IT_MSG_HELLO, &a, why, sizeof(why))) {
		snprintf(err, errlen, "failed to start a session with the agent at %s: %s",
			 target, why);
	} else if (a.u.hello.version != IT_AGENT_VERSION) {
		snprintf(err, errlen, "failed to start a session with the agent at %s: it speaks "
			 "protocol version %u, this iotrail %u; run the same iotrail version on both",
			 target, a.u.hello.version, IT_AGENT_VERSION);
	} else {
		return c;
	}
	it_chan_close(c);
	return NULL;
}

struct it_remote *it_remote_open(const struct it_remote_opts *o, char *err, size_t errlen)
{
	struct it_remote *r = calloc(1, sizeof(*r));
	char why[400];

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->o = *o;
	snprintf(r->spool_path, sizeof(r->spool_path), "%s", o->spool);
	r->o.spool = r->spool_path;
	if (!r->o.keyfile)
		r->o.keyfile = IT_AGENT_KEY_DEFAULT;
	r->spool = -1;
	r->best.rtt = UINT64_MAX;
	if (!(r->c = it_agent_connect(o->target, r->o.keyfile, err, errlen)))
		goto fail;
	if (clock_round(r, why, sizeof(why))) {
		snprintf(err, errlen, "failed to estimate the clock of %s: %s", o->target, why);
		goto fail;
	}
	r->spool = open(o->spool, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->spool < 0) {
		snprintf(err, errlen, "failed to create %s: %s; check the output's directory",
			 o->spool, strerror(errno));
		goto fail;
	}
	return r;
fail:
	if (r->spool >= 0)
		unlink(o->spool);
	it_remote_free(r);
	return NULL;
}

int it_remote_begin(struct it_remote *r, char *err, size_t errlen)
{
	const struct it_remote_opts *o = &r->o;
	struct it_agent_msg m, a;
	char why[400];
	int rc;

	m = (struct it_agent_msg){ .type = IT_MSG_START };
	snprintf(m.u.start.layers, sizeof(m.u.start.layers), "%s", o->layers ? o->layers : "");
	snprintf(m.u.start.devs, sizeof(m.u.start.devs), "%s", o->devs ? o->devs : "");
	it_chan_set_timeout(r->c, START_TIMEOUT_MS);
	rc = it_agent_ask(r->c, &m, IT_MSG_START, &a, why, sizeof(why));
	it_chan_set_timeout(r->c, TIMEOUT_MS);
	if (rc) {
		snprintf(err, errlen, "failed to start recording on the target %s: %s", o->target,
			 why);
		return -1;
	}
	fprintf(stderr, "iotrail record: target %s recording, hooks %s\n", o->target,
		a.u.start.layers[0] ? a.u.start.layers : "?");
	r->next_pull = now_ns() + o->pull_every_ns;
	return 0;
}

static void mark_lost(struct it_remote *r, const char *why)
{
	if (r->lost[0])
		return;
	snprintf(r->lost, sizeof(r->lost), "agent %s lost: %s", r->o.target, why);
	r->lost_at = now_ns();
	fprintf(stderr, "iotrail record: warning: %s; the target's data ends at the last pull "
		"(%llu bytes), the initiator goes on recording\n", r->lost,
		(unsigned long long)r->bytes);
	it_chan_close(r->c);
	r->c = NULL;
}

/* One PULL: appends the chunks to the spool. */
static int pull(struct it_remote *r)
{
	struct it_agent_msg m = { .type = IT_MSG_PULL }, a;
	const uint8_t *p;
	char why[300];
	size_t n;

	if (!r->c)
		return -1;
	if (it_agent_ask(r->c, &m, IT_MSG_DATA, &a, why, sizeof(why))) {
		mark_lost(r, why);
		return -1;
	}
	for (p = a.u.data.bytes, n = a.u.data.len; n;) {
		ssize_t w = write(r->spool, p, n);

		if (w <= 0) {
			snprintf(why, sizeof(why), "cannot write %s: %s", r->o.spool, strerror(errno));
			mark_lost(r, why);
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	r->bytes += a.u.data.len;
	r->last_len = a.u.data.len;
	r->final = a.u.data.flags & IT_DATA_FINAL;
	return 0;
}

void it_remote_tick(struct it_remote *r, uint64_t now)
{
	if (!r->c || now < r->next_pull)
		return;
	/* a busy target may have more than one DATA holds: keep up */
	for (int i = 0; i < 8 && !pull(r) && r->last_len > IT_AGENT_MAX_DATA / 2; i++)
		;
	r->next_pull = now + r->o.pull_every_ns;
}

int it_remote_finish(struct it_remote *r)
{
	struct it_agent_msg m = { .type = IT_MSG_STOP }, a;
	char why[300];

	if (!r->c)
		return -1;
	if (clock_round(r, why, sizeof(why)) || it_agent_ask(r->c, &m, IT_MSG_STOP, &a, why, sizeof(why))) {
		mark_lost(r, why);
		return -1;
	}
	while (!r->final)
		if (pull(r))
			return -1;
	return 0;
}

void it_remote_clock(const struct it_remote *r, struct it_clock_rec *c, uint64_t *rtt_ns)
{
	memset(c, 0, sizeof(*c));
	c->machine = 1;
	/* theta is the agent's clock minus ours: its t is t - theta here */
	c->offset_ns = -r->best.theta;
	c->uncertainty_ns = (r->best.rtt + 1) / 2;
	snprintf(c->method, sizeof(c->method), "ntp-like 4-timestamp exchange, best of %u samples",
		 r->samples);
	*rtt_ns = r->best.rtt;
}

const char *it_remote_lost(const struct it_remote *r, uint64_t *at_ns)
{
	*at_ns = r->lost_at;
	return r->lost[0] ? r->lost : NULL;
}

const char *it_remote_target(const struct it_remote *r)
{
	return r->o.target;
}

uint64_t it_remote_bytes(const struct it_remote *r)
{
	return r->bytes;
}

void it_remote_free(struct it_remote *r)
{
	if (!r)
		return;
	it_chan_close(r->c);
	if (r->spool >= 0)
		close(r->spool);
	free(r);
}
