/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The target's clock on the initiator's, from matched I/Os (issue 10).
 * Each I/O matched across two machines is one NTP sample: the initiator
 * sent at t1 and received the answer at t4 (its clock), the target
 * received at t2 and answered at t3 (its clock). With
 *
 *     offset = initiator minus target, so a target time t is t + offset
 *     o   = ((t1 - t2) + (t4 - t3)) / 2
 *     rtt = (t4 - t1) - (t3 - t2)
 *
 * the true offset lies within rtt / 2 of o whatever the asymmetry of the
 * two directions: in [t1 - t2, t4 - t3]. A line (offset and drift) that
 * meets every sample's bound makes every matched I/O causal; the one that
 * leaves the most room is the estimate, the slopes that still meet every
 * bound bound its drift, and how far any such line can be from it over the
 * trace is its uncertainty (the intersection of the bounds: tighter than
 * any one round trip). When no line meets them all (a clock step, a wrong
 * match), the min-RTT filter takes over: per window of IT_CLOCK_WINDOW_NS
 * (initiator's t1) the sample with the smallest round trip (queueing only
 * adds delay, so the fastest exchange is the least asymmetric one), a
 * least-squares line through them (weighted by 1 / rtt^2), the uncertainty
 * the widest window bound around it. Windows without I/O are covered by
 * the line; with no sample at all the agent channel's exchange (the CLOCK
 * chunk) is the estimate, and without that there is none.
 *
 * Pure C; it_clock_map() is what the cross-machine join applies.
 */
#ifndef IOTRAIL_LAYERS_FABRIC_CLOCK_H
#define IOTRAIL_LAYERS_FABRIC_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IT_CLOCK_WINDOW_NS 1000000000ull /* 1 s */
#define IT_CLOCK_PHI_PPM 15.0   /* how far the drift may be off: RFC 5905's PHI */
#define IT_CLOCK_NEAR 32        /* windows on either side that bound one */
#define IT_CLOCK_MAX_PPM 1000.0 /* drifts searched: twice NTP's largest (500 ppm) */

struct it_clock_sample {
	uint64_t t1, t4;        /* initiator: sent, received */
	uint64_t t2, t3;        /* target: received, sent (its own clock) */
};

enum it_clock_method {
	IT_CLOCK_NONE = 0,      /* impossible: no matched I/O, no exchange */
	IT_CLOCK_IO,            /* matched I/Os, min-RTT per window, a line through them */
	IT_CLOCK_EXCHANGE,      /* the agent channel's exchange alone (no matched I/O) */
};

/* One window's fastest matched I/O: the offset it says, give or take rtt / 2. */
struct it_clock_window {
	uint64_t at_ns;         /* target clock: the middle of its target side */
	int64_t offset_ns;
	uint64_t rtt_ns;
};

struct it_clock_est {
	enum it_clock_method method;
	int64_t offset_ns;      /* at the target's time ref_ns: initiator = target + offset */
	uint64_t ref_ns;        /* target clock */
	double slope;           /* offset change per target ns (drift_ppm = -slope * 1e6) */
	bool drift_known;       /* two windows or more, a second apart */
	double drift_bound_ppm; /* how far the drift can be off (NAN: unknown) */
	bool all_bounds_meet;   /* one line meets every sample's bound: all causal */
	uint64_t uncertainty_ns; /* anywhere in the trace */
	uint64_t uncertainty_mid_ns; /* at its middle I/O (where most are, usually);
				  * 0: not known apart (not from matched I/Os) */
	uint64_t samples;       /* samples given */
	uint64_t rejected;      /* with a negative round trip: no I/O can do that (kept out) */
	uint64_t windows;       /* windows with a sample */
	uint64_t min_rtt_ns;    /* smallest round trip of all */
	uint64_t max_rtt_ns;    /* largest of the windows' kept ones */
	struct it_clock_window *window; /* windows[] of them, in time order (malloc'd) */
	/* the exchange (CLOCK chunk) against the estimate: is it inside? */
	bool exchange;          /* a CLOCK chunk was given */
	int64_t exchange_offset_ns;
	uint64_t exchange_uncertainty_ns;
};

/* The estimate from n samples (any order) and the agent exchange's offset
 * and uncertainty (have_exchange false: none). 0, or -1 when memory ran
 * out. est->method says what it is built on. */
int it_clock_estimate(const struct it_clock_sample *s, size_t n, bool have_exchange,
		      int64_t exchange_offset_ns, uint64_t exchange_uncertainty_ns,
		      struct it_clock_est *est);

/*
 * A first guess the join can match with, before any I/O is matched: the
 * commands of each side (key: the connection and command id, as the join
 * keys them; start, end: S and N on the initiator, TI and TC on the
 * target, each on its own clock). A host command and a target command of
 * one key that served it have midpoints apart by the offset plus half the
 * difference of the two directions' delays, so the offsets that most
 * pairs of one key agree on within IT_CLOCK_COARSE_NS are the guess
 * (other pairs, another use of the command id, spread out); slack is how
 * far it can be from the truth: the bin, plus half the median round trip
 * of its pairs. Pairs are taken within IT_CLOCK_COARSE_SPAN_NS of guess
 * (the agent exchange, or 0), from at most IT_CLOCK_COARSE_TARGETS target
 * commands spread over the trace. With guess_unc_ns (the exchange's own
 * bound; 0: no exchange), the densest bin within that bound of guess is
 * taken unless another has over twice its pairs: at QD1 one command id
 * serves every I/O, and a regular pace (netem makes it very regular) lines
 * up almost as many pairs one or more I/Os off as at the truth (seen on
 * two guests: a guess 1.9 s off, 1 I/O of 30 matched). Returns 1 with
 * *offset_ns and *slack_ns set, 0 when no pair exists, -1 when memory ran
 * out.
 */
#define IT_CLOCK_COARSE_NS 10000ull                   /* 10 us */
#define IT_CLOCK_COARSE_SPAN_NS (100ull * 1000000000ull) /* 100 s */
#define IT_CLOCK_COARSE_TARGETS 4096
struct it_clock_cmd {
	uint64_t key;
	uint64_t start, end;
};
int it_clock_coarse(const struct it_clock_cmd *host, size_t nh, const struct it_clock_cmd *target,
		    size_t nt, int64_t guess_ns, uint64_t guess_unc_ns, int64_t *offset_ns,
		    uint64_t *slack_ns);

/* Frees what an estimate holds (its windows). */
void it_clock_free(struct it_clock_est *e);

/* A target time on the initiator's clock (identity for IT_CLOCK_NONE). */
uint64_t it_clock_map(const struct it_clock_est *est, uint64_t target_ns);

/* The drift in parts per million: how much faster the target's clock runs
 * than the initiator's (+: it gains). 0 when unknown. */
double it_clock_drift_ppm(const struct it_clock_est *est);

/* The method's name for reports: "matched-io", "agent-exchange", "none". */
const char *it_clock_method_name(enum it_clock_method m);

#endif
