// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The clock estimate from matched I/Os (clock.h): min-RTT per window, a
 * least-squares line through the windows' offsets, the uncertainty as the
 * widest window bound around that line.
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

int it_clock_coarse(const struct it_clock_cmd *host, size_t nh, const struct it_clock_cmd *target,
		    size_t nt, int64_t guess, uint64_t guess_unc, int64_t *offset, uint64_t *slack)
{
	const int64_t span = (int64_t)IT_CLOCK_COARSE_SPAN_NS, bin = (int64_t)IT_CLOCK_COARSE_NS;
	struct it_clock_cmd *h = nh ? malloc(nh * sizeof(*h)) : NULL;
	struct pair *p = NULL;
	size_t np = 0, cap = 0, step = nt / IT_CLOCK_COARSE_TARGETS + 1, best = 0, bestn = 0;
	size_t near = 0, nearn = 0;
	int rc = -1;

	if (!nh || !nt) {
		free(h);
		return 0;
	}
	if (!h)
		return -1;
	memcpy(h, host, nh * sizeof(*h));
	qsort(h, nh, sizeof(*h), by_key_start);
	for (size_t i = 0; i < nt; i += step) {
		const struct it_clock_cmd *t = &target[i];
		int64_t tm = mid(t);

		if (t->end < t->start)
			continue;
		for (size_t k = first_at(h, nh, t->key, tm + guess - span);
		     k < nh && h[k].key == t->key && mid(&h[k]) <= tm + guess + span; k++) {
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
			uint64_t hd = h[k].end - h[k].start, td = t->end - t->start;
			p[np++] = (struct pair){ mid(&h[k]) - tm, hd >= td ? hd - td : 0 };
		}
	}
	rc = 0;
	if (!np)
		goto out;
	/* the densest bin: the most pairs within bin of each other */
	qsort(p, np, sizeof(*p), by_d);
	for (size_t i = 0, j = 0; i < np; i++) {
		while (p[i].d - p[j].d > bin)
			j++;
		if (i - j + 1 > bestn) {
			bestn = i - j + 1;
			best = j;
		}
		/* within the exchange's bound (and a bin): its densest */
		if (guess_unc && p[j].d >= guess - (int64_t)guess_unc - bin &&
		    p[i].d <= guess + (int64_t)guess_unc + bin && i - j + 1 > nearn) {
			nearn = i - j + 1;
			near = j;
		}
	}
	if (nearn && 2 * nearn >= bestn) {
		best = near;
		bestn = nearn;
	}
	/* its median offset, and the median round trip of its pairs */
	uint64_t *rtt = malloc(bestn * sizeof(*rtt));
	if (!rtt) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < bestn; i++)
		rtt[i] = p[best + i].rtt;
	qsort(rtt, bestn, sizeof(*rtt), by_u64);
	*offset = p[best + bestn / 2].d;
	*slack = (uint64_t)bin + rtt[bestn / 2] / 2;
	free(rtt);
	rc = 1;
out:
	free(p);
	free(h);
	return rc;
}
