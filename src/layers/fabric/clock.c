// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The clock from matched I/Os (clock.h): the line that meets every I/O's
 * bound with the most room (meet_all), else the windows' fastest I/Os and a
 * weighted least-squares line (fit, uncertainty); and the first guess the
 * join matches with, from command times alone (it_clock_coarse).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers/fabric/clock.h"

/* One window's kept sample: its offset o, round trip, target time. */
struct win {
	uint64_t window;        /* t1 / IT_CLOCK_WINDOW_NS */
	int64_t o;
	uint64_t rtt;
	uint64_t x;             /* the target's midpoint (t2 + t3) / 2 */
};

static int by_window(const void *a, const void *b)
{
	const struct win *x = a, *y = b;

	if (x->window != y->window)
		return x->window < y->window ? -1 : 1;
	return x->rtt < y->rtt ? -1 : x->rtt > y->rtt;
}

const char *it_clock_method_name(enum it_clock_method m)
{
	switch (m) {
	case IT_CLOCK_IO:       return "matched-io";
	case IT_CLOCK_EXCHANGE: return "agent-exchange";
	default:                return "none";
	}
}

/* The line through the windows (x relative to the first, y relative to
 * its offset), each weighted by 1 / rtt^2: a window whose fastest I/O
 * took long says little. Slope 0 with one window. */
static void fit(const struct win *w, size_t n, struct it_clock_est *e)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;

	e->ref_ns = w[0].x;
	for (size_t i = 0; i < n; i++) {
		double r = w[i].rtt > 1000 ? (double)w[i].rtt : 1000; /* 1 us: one stamp's grain */
		double k = 1 / (r * r);
		double x = (double)(int64_t)(w[i].x - w[0].x), y = (double)(w[i].o - w[0].o);
		sw += k;
		sx += k * x;
		sy += k * y;
		sxx += k * x * x;
		sxy += k * x * y;
	}
	double d = sw * sxx - sx * sx;
	/* two windows at least, a second apart or more */
	e->drift_known = n >= 2 && d > 0 && (double)(int64_t)(w[n - 1].x - w[0].x) >= 1e9;
	e->slope = e->drift_known ? (sw * sxy - sx * sy) / d : 0;
	e->offset_ns = w[0].o + (int64_t)llround((sy - e->slope * sx) / sw);
}

static double lo_of(const struct win *w) { return (double)w->o - (double)w->rtt / 2; }
static double hi_of(const struct win *w) { return (double)w->o + (double)w->rtt / 2; }

/*
 * Every sample says the true offset at its time x lies in [lo, hi] (o +-
 * rtt / 2). A line a + s * (x - ref) that meets every sample's bound is a
 * clock under which every matched I/O is causal. For a slope s, the
 * offsets a that do so are [max(lo - s dx), min(hi - s dx)]: its width,
 * room(s), is concave in s, so its largest value is found by ternary
 * search, and the slopes where it is not negative (found by bisection on
 * either side) bound the drift. Relative to base (offsets) and ref (x).
 */
struct lines {
	const struct win *v;
	size_t n;
	int64_t base;
	uint64_t ref;
};

static double room(const struct lines *l, double s, double *alo, double *ahi)
{
	double lo = -1e300, hi = 1e300;

	for (size_t i = 0; i < l->n; i++) {
		double c = (double)(l->v[i].o - l->base) - s * (double)(int64_t)(l->v[i].x - l->ref);
		double r = (double)l->v[i].rtt / 2;
		if (c - r > lo)
			lo = c - r;
		if (c + r < hi)
			hi = c + r;
	}
	*alo = lo;
	*ahi = hi;
	return hi - lo;
}

/* The edge of {s : room(s) >= 0} between in (inside) and out. */
static double edge(const struct lines *l, double in, double out)
{
	double lo, hi;

	for (int k = 0; k < 100; k++) {
		double m = (in + out) / 2;
		if (room(l, m, &lo, &hi) >= 0)
			in = m;
		else
			out = m;
	}
	return in;
}

/* The line that leaves every sample the most room, when one meets them
 * all: the offset, drift and uncertainty from it. false when none does. */
static bool meet_all(const struct win *v, size_t n, struct it_clock_est *e)
{
	const double max = IT_CLOCK_MAX_PPM * 1e-6;
	struct lines l = { v, n, v[0].o, v[0].x };
	double a = -max, b = max, lo, hi, slo, shi, u = 0;
	uint64_t xmin = v[0].x, xmax = v[0].x;

	for (int k = 0; k < 200; k++) {
		double m1 = a + (b - a) / 3, m2 = b - (b - a) / 3;
		if (room(&l, m1, &lo, &hi) < room(&l, m2, &lo, &hi))
			a = m1;
		else
			b = m2;
	}
	double best = (a + b) / 2;
	if (room(&l, best, &lo, &hi) < 0)
		return false;
	slo = edge(&l, best, -max);
	shi = edge(&l, best, max);
	/* a short trace leaves the drift open: then none is assumed, if it can be */
	e->drift_known = slo > -max * 0.999 && shi < max * 0.999;
	if (!e->drift_known && room(&l, 0, &lo, &hi) >= 0)
		best = 0;
	e->slope = best;
	e->drift_bound_ppm = e->drift_known ? fmax(best - slo, shi - best) * 1e6 : NAN;
	e->all_bounds_meet = true;
	room(&l, best, &lo, &hi);
	e->ref_ns = l.ref;
	e->offset_ns = l.base + (int64_t)llround((lo + hi) / 2);
	/* how far another line meeting every bound can be from this one,
	 * anywhere in the trace: at its ends, over the slopes (a grid; a
	 * drift the trace leaves open taken as at most IT_CLOCK_PHI_PPM); and
	 * at the middle I/O (the samples come in about time order) */
	for (size_t i = 0; i < n; i++) {
		if ((int64_t)(v[i].x - xmin) < 0)
			xmin = v[i].x;
		if ((int64_t)(v[i].x - xmax) > 0)
			xmax = v[i].x;
	}
	if (!e->drift_known) {
		slo = fmax(slo, -IT_CLOCK_PHI_PPM * 1e-6);
		shi = fmin(shi, IT_CLOCK_PHI_PPM * 1e-6);
	}
	double um = 0;
	for (int k = 0; k <= 32; k++) {
		double s = slo + (shi - slo) * k / 32;
		const uint64_t at[3] = { xmin, xmax, v[n / 2].x };
		room(&l, s, &lo, &hi);
		for (int i = 0; i < 3; i++) {
			double dx = (double)(int64_t)(at[i] - l.ref);
			double mine = (double)(e->offset_ns - l.base) + best * dx;
			double d = fmax(fabs(lo + s * dx - mine), fabs(hi + s * dx - mine));
			if (i < 2)
				u = fmax(u, d);
			else
				um = fmax(um, d);
		}
	}
	e->uncertainty_mid_ns = (uint64_t)ceil(um);
	e->uncertainty_ns = (uint64_t)ceil(u);
	return true;
}

/*
 * How far the line can be from the true offset at each window: the true
 * offset at window v is within rtt_v / 2 of o_v; at another window w it is
 * within that, carried along the drift, widened by the drift's bound over
 * the distance. The intersection over the windows nearby (IT_CLOCK_NEAR on
 * either side) bounds it; the uncertainty is the widest of those bounds
 * around the line. An empty intersection (a clock step, a wrong match)
 * falls back to the window's own bound.
 */
static uint64_t uncertainty(const struct win *w, size_t n, const struct it_clock_est *e)
{
	double u = 0;

	for (size_t i = 0; i < n; i++) {
		double line = (double)(int64_t)(it_clock_map(e, w[i].x) - w[i].x);
		double lo = -1e300, hi = 1e300;
		size_t a = i > IT_CLOCK_NEAR ? i - IT_CLOCK_NEAR : 0;
		size_t b = i + IT_CLOCK_NEAR < n ? i + IT_CLOCK_NEAR : n - 1;

		for (size_t v = a; v <= b; v++) {
			double dx = (double)(int64_t)(w[i].x - w[v].x);
			double c = (double)w[v].o + e->slope * dx;
			double widen = (double)w[v].rtt / 2 + e->drift_bound_ppm * 1e-6 * fabs(dx);
			if (c - widen > lo)
				lo = c - widen;
			if (c + widen < hi)
				hi = c + widen;
		}
		if (lo > hi) {
			lo = lo_of(&w[i]);
			hi = hi_of(&w[i]);
		}
		double edge = fmax(fabs(line - lo), fabs(hi - line));
		if (edge > u)
			u = edge;
	}
	return (uint64_t)ceil(u);
}

int it_clock_estimate(const struct it_clock_sample *s, size_t n, bool have_exchange,
		      int64_t exchange_offset_ns, uint64_t exchange_uncertainty_ns,
		      struct it_clock_est *e)
{
	struct win *w = n ? malloc(2 * n * sizeof(*w)) : NULL, *all = w ? w + n : NULL;
	size_t nw = 0, kept = 0;

	memset(e, 0, sizeof(*e));
	e->samples = n;
	e->exchange = have_exchange;
	e->exchange_offset_ns = exchange_offset_ns;
	e->exchange_uncertainty_ns = exchange_uncertainty_ns;
	if (n && !w)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* the initiator waited less than the target worked: not one I/O */
		if (s[i].t4 < s[i].t1 || s[i].t3 < s[i].t2 || s[i].t4 - s[i].t1 < s[i].t3 - s[i].t2) {
			e->rejected++;
			continue;
		}
		/* o = ((t1 - t2) + (t4 - t3)) / 2, in two halves that cannot overflow */
		int64_t a = (int64_t)(s[i].t1 - s[i].t2), b = (int64_t)(s[i].t4 - s[i].t3);
		w[nw++] = (struct win){ .window = s[i].t1 / IT_CLOCK_WINDOW_NS,
					.o = a / 2 + b / 2 + (a % 2 + b % 2) / 2,
					.rtt = (s[i].t4 - s[i].t1) - (s[i].t3 - s[i].t2),
					.x = s[i].t2 + (s[i].t3 - s[i].t2) / 2 };
	}
	if (!nw) {
		free(w);
		if (have_exchange) {
			e->method = IT_CLOCK_EXCHANGE;
			e->offset_ns = exchange_offset_ns;
			e->uncertainty_ns = exchange_uncertainty_ns;
		}
		return 0;
	}
	memcpy(all, w, nw * sizeof(*w));
	qsort(w, nw, sizeof(*w), by_window);
	e->min_rtt_ns = UINT64_MAX;
	for (size_t i = 0; i < nw; i++) {
		if (w[i].rtt < e->min_rtt_ns)
			e->min_rtt_ns = w[i].rtt;
		if (kept && w[kept - 1].window == w[i].window)
			continue; /* a later one of the window: a longer round trip */
		w[kept++] = w[i];
		if (w[i].rtt > e->max_rtt_ns)
			e->max_rtt_ns = w[i].rtt;
	}
	e->windows = kept;
	e->method = IT_CLOCK_IO;
	if (!meet_all(all, nw, e)) {
		/* no line meets every bound (a clock step, a wrong match): the
		 * windows' fastest I/Os, a line through them */
		fit(w, kept, e);
		e->drift_bound_ppm = IT_CLOCK_PHI_PPM;
		e->uncertainty_ns = uncertainty(w, kept, e);
	}
	/* the windows' own offsets, for the report: the drift over time */
	if ((e->window = malloc(kept * sizeof(*e->window))))
		for (size_t i = 0; i < kept; i++)
			e->window[i] = (struct it_clock_window){ w[i].x, w[i].o, w[i].rtt };
	free(w);
	return e->window ? 0 : -1;
}

void it_clock_free(struct it_clock_est *e)
{
	free(e->window);
	e->window = NULL;
}

uint64_t it_clock_map(const struct it_clock_est *e, uint64_t t)
{
	if (e->method == IT_CLOCK_NONE)
		return t;
	int64_t dx = (int64_t)(t - e->ref_ns);
	return t + (uint64_t)(e->offset_ns + (int64_t)llround(e->slope * (double)dx));
}

double it_clock_drift_ppm(const struct it_clock_est *e)
{
	return e->drift_known ? -e->slope * 1e6 : 0;
}

/* ---- the first guess ---- */

struct pair {
	int64_t d;              /* host midpoint - target midpoint: the offset, give or take */
	uint64_t rtt;           /* (end - start) host - target; 0 when negative */
};

static int by_key_start(const void *a, const void *b)
{
	const struct it_clock_cmd *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_d(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return x->d < y->d ? -1 : x->d > y->d;
}

static int by_u64(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static int64_t mid(const struct it_clock_cmd *c)
{
	return (int64_t)(c->start + (c->end - c->start) / 2);
}

/* The first host command of key at or after midpoint at (binary search). */
static size_t first_at(const struct it_clock_cmd *h, size_t n, uint64_t key, int64_t at)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (h[m].key < key || (h[m].key == key && mid(&h[m]) < at))
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* The offset most pairs of one segment agree on: pairs of each target
 * command (of [from, to), every step-th) with the host commands of its key
 * whose midpoints are within span of guess. 1 with *seg set, 0 without a
 * pair, -1 out of memory. */
struct segment {
	uint64_t x;             /* the target's time (its commands' middle) */
	int64_t offset;
	uint64_t half_rtt;      /* half the median round trip of its pairs */
	size_t pairs;           /* in its bin */
};

static int segment_mode(const struct it_clock_cmd *h, size_t nh, const struct it_clock_cmd *t,
			size_t from, size_t to, int64_t guess, uint64_t bound, int64_t span,
			struct segment *seg)
{
	const int64_t bin = (int64_t)IT_CLOCK_COARSE_NS;
	size_t step = (to - from) / IT_CLOCK_COARSE_TARGETS + 1, np = 0, cap = 0, best = 0, bestn = 0;
	struct pair *p = NULL;
	int rc = -1;

	for (size_t i = from; i < to; i += step) {
		int64_t tm = mid(&t[i]);

		for (size_t k = first_at(h, nh, t[i].key, tm + guess - span);
		     k < nh && h[k].key == t[i].key && mid(&h[k]) <= tm + guess + span; k++) {
			if (h[k].end < h[k].start)
				continue;
			if (np == cap) {
				size_t c = cap ? 2 * cap : 1024;
				void *v = realloc(p, c * sizeof(*p));
				if (!v)
					goto out;
				p = v;
				cap = c;
			}
			uint64_t hd = h[k].end - h[k].start, td = t[i].end - t[i].start;
			p[np++] = (struct pair){ mid(&h[k]) - tm, hd >= td ? hd - td : 0 };
		}
	}
	rc = 0;
	if (!np)
		goto out;
	/* the densest bin: the most pairs within bin of each other; of the
	 * bins nearly as dense (a workload that repeats itself exactly has
	 * one per period), the nearest to the guess */
	qsort(p, np, sizeof(*p), by_d);
	size_t inn = 0; /* the densest bin within the guess's bound */
	for (size_t i = 0, j = 0; i < np; i++) {
		while (p[i].d - p[j].d > bin)
			j++;
		if (i - j + 1 > bestn)
			bestn = i - j + 1;
		if (bound && p[j].d >= guess - (int64_t)bound - bin &&
		    p[i].d <= guess + (int64_t)bound + bin && i - j + 1 > inn)
			inn = i - j + 1;
	}
	/* the guess's bound holds (an NTP exchange's always does) unless the
	 * commands say otherwise by far: with a jitter of hundreds of us (two
	 * TCG guests) the true pairs spread over many bins and a chance bin
	 * anywhere in the span can be as dense (seen: a guess 41 s off while
	 * the exchange had 0.47 ms) */
	bool within = inn && 4 * inn >= bestn;
	if (within)
		bestn = inn;
	/* away from a bound, a few pairs are chance (keep-alives the other
	 * side did not record: its recording began 40 s earlier once, and a
	 * lone keep-alive pair put the guess 41 s off) */
	else if (bound && bestn < IT_CLOCK_COARSE_AWAY_PAIRS)
		goto out;
	uint64_t near = UINT64_MAX;
	size_t n = 0;
	for (size_t i = 0, j = 0; i < np; i++) {
		while (p[i].d - p[j].d > bin)
			j++;
		int64_t c = p[j].d + (p[i].d - p[j].d) / 2 - guess;
		uint64_t dist = c < 0 ? (uint64_t)-c : (uint64_t)c;
		if (within && (p[j].d < guess - (int64_t)bound - bin ||
			       p[i].d > guess + (int64_t)bound + bin))
			continue;
		if (10 * (i - j + 1) >= 9 * bestn && dist < near) {
			near = dist;
			best = j;
			n = i - j + 1;
		}
	}
	/* its median offset, and the median round trip of its pairs */
	uint64_t *rtt = malloc(n * sizeof(*rtt));
	if (!rtt) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		rtt[i] = p[best + i].rtt;
	qsort(rtt, n, sizeof(*rtt), by_u64);
	*seg = (struct segment){ (uint64_t)mid(&t[from + (to - from) / 2]), p[best + n / 2].d,
				 rtt[n / 2] / 2, n };
	free(rtt);
	rc = 1;
out:
	free(p);
	return rc;
}

static int by_start(const void *a, const void *b)
{
	const struct it_clock_cmd *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_double(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* A line through the segments' offsets, robust to a wrong one: the median
 * of the pairwise slopes (Theil-Sen), the median intercept. */
/* The line of slope through the segments (the median intercept; v: n
 * doubles to work in) and the farthest a segment is from it. */
static double line_with(const struct segment *sg, size_t n, double slope, double *v,
			struct it_clock_guess *g)
{
	double r = 0;

	g->ref_ns = sg[0].x;
	g->slope = slope;
	for (size_t i = 0; i < n; i++)
		v[i] = (double)(sg[i].offset - sg[0].offset) - slope * (double)(int64_t)(sg[i].x - g->ref_ns);
	qsort(v, n, sizeof(*v), by_double);
	g->offset_ns = sg[0].offset + (int64_t)llround(v[n / 2]);
	for (size_t i = 0; i < n; i++)
		r = fmax(r, fabs((double)(sg[i].offset - g->offset_ns) -
				 slope * (double)(int64_t)(sg[i].x - g->ref_ns)));
	return r;
}

static void guess_line(const struct segment *sg, size_t n, struct it_clock_guess *g)
{
	/* the slopes of at most 512 segments spread over the trace */
	size_t step = n / 512 + 1, m = (n / step + 1) * (n / step + 1) / 2, k = 0;
	double *v = malloc((m > n ? m : n) * sizeof(*v)), r = 0;
	struct it_clock_guess flat;

	*g = (struct it_clock_guess){ .offset_ns = sg[0].offset, .ref_ns = sg[0].x };
	if (v) {
		for (size_t i = 0; i < n; i += step)
			for (size_t j = i + step; j < n; j += step)
				if (sg[j].x != sg[i].x)
					v[k++] = (double)(sg[j].offset - sg[i].offset) /
						 (double)(int64_t)(sg[j].x - sg[i].x);
		double slope = 0;
		if (k) {
			qsort(v, k, sizeof(*v), by_double);
			slope = v[k / 2];
		}
		/* the slope only when it brings the segments closer by more than
		 * a bin: between a few segments close together it is mostly their
		 * noise, and a drift moves the offset little there */
		double r0 = line_with(sg, n, 0, v, &flat), r1 = line_with(sg, n, slope, v, g);
		if (r0 - r1 <= (double)IT_CLOCK_COARSE_NS)
			*g = flat;
		free(v);
	}
	/* good to a bin plus a segment's distance from it and half its round trip */
	for (size_t i = 0; i < n; i++) {
		double line = (double)(int64_t)(it_clock_guess_map(g, sg[i].x) - sg[i].x);
		r = fmax(r, fabs((double)sg[i].offset - line) + (double)sg[i].half_rtt);
	}
	g->slack_ns = IT_CLOCK_COARSE_NS + (uint64_t)ceil(r);
}

int it_clock_coarse(const struct it_clock_cmd *host, size_t nh, const struct it_clock_cmd *target,
		    size_t nt, int64_t guess, uint64_t guess_unc, struct it_clock_guess *g)
{
	struct it_clock_cmd *h = nh ? malloc(nh * sizeof(*h)) : NULL;
	struct it_clock_cmd *t = nt ? malloc(nt * sizeof(*t)) : NULL;
	struct segment *sg = NULL;
	size_t n = 0, ns = 0, cap = 0;
	/* the first segment searches wide around the exchange (which may be
	 * off by seconds), the next ones track the one before */
	int64_t span = (int64_t)IT_CLOCK_COARSE_SPAN_NS;
	int rc = -1;

	memset(g, 0, sizeof(*g));
	if ((nh && !h) || (nt && !t))
		goto out;
	rc = 0;
	if (!nh || !nt)
		goto out;
	memcpy(h, host, nh * sizeof(*h));
	qsort(h, nh, sizeof(*h), by_key_start);
	/* the target's complete commands in time order */
	for (size_t i = 0; i < nt; i++)
		if (target[i].end >= target[i].start && target[i].start)
			t[n++] = target[i];
	qsort(t, n, sizeof(*t), by_start);
	for (size_t from = 0, to; from < n; from = to) {
		struct segment one;
		int found;

		for (to = from; to < n && t[to].start - t[from].start < IT_CLOCK_COARSE_SEGMENT_NS; to++)
			;
		found = segment_mode(h, nh, t, from, to, guess, guess_unc, span, &one);
		if (found < 0) {
			rc = -1;
			goto out;
		}
		if (!found)
			continue;
		if (ns == cap) {
			size_t c = cap ? 2 * cap : 64;
			void *v = realloc(sg, c * sizeof(*sg));
			if (!v) {
				rc = -1;
				goto out;
			}
			sg = v;
			cap = c;
		}
		sg[ns++] = one;
		guess = one.offset;
		/* the next segment: near this one, give or take its round trip
		 * and a drift of 1000 ppm over the segment */
		guess_unc = one.half_rtt + IT_CLOCK_COARSE_SEGMENT_NS / 1000;
		span = (int64_t)IT_CLOCK_COARSE_TRACK_NS;
	}
	if (ns) {
		/* a segment of a few commands (keep-alives between bursts) says
		 * little: with better ones, it stays out of the line */
		size_t most = 0, kept = 0;
		for (size_t i = 0; i < ns; i++)
			most = sg[i].pairs > most ? sg[i].pairs : most;
		for (size_t i = 0; i < ns; i++)
			if (sg[i].pairs >= 3 || sg[i].pairs == most)
				if (10 * sg[i].pairs >= most)
					sg[kept++] = sg[i];
		guess_line(sg, kept, g);
		rc = 1;
	}
out:
	free(sg);
	free(t);
	free(h);
	return rc;
}

uint64_t it_clock_guess_map(const struct it_clock_guess *g, uint64_t t)
{
	return t + (uint64_t)(g->offset_ns + (int64_t)llround(g->slope * (double)(int64_t)(t - g->ref_ns)));
}

uint64_t it_clock_guess_unmap(const struct it_clock_guess *g, uint64_t t)
{
	/* t = u + offset + slope * (u - ref): u = ref + (t - offset - ref) / (1 + slope) */
	double d = (double)(int64_t)(t - (uint64_t)g->offset_ns - g->ref_ns) / (1 + g->slope);
	return g->ref_ns + (uint64_t)(int64_t)llround(d);
}
