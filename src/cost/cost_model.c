// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The saturation-throughput delta's arithmetic (cost_model.h): per-run
 * CPU time per I/O, the operator's cost per size with a Welch interval
 * across the alternating runs, the power-law fit over sizes, the quadrant
 * and the method's validity checks. No I/O is run here: cost.c runs fio
 * and fills the runs in.
 */
#include "cost/cost_model.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

double cost_run_ns_per_io(const struct cost_run *r)
{
	if (r->ios <= 0 || r->window_ns <= 0)
		return 0;
	/* F_cpu / R: busy CPU-ns per second times seconds per I/O */
	return r->busy_ns / r->window_ns * r->runtime_ns / r->ios;
}

double cost_run_cycles_per_io(const struct cost_run *r)
{
	if (r->cycles < 0 || r->ios <= 0 || r->window_ns <= 0)
		return -1;
	return r->cycles / r->window_ns * r->runtime_ns / r->ios;
}

const char *cost_quadrant_name(enum cost_quadrant q)
{
	switch (q) {
	case COST_Q_IDEAL:       return "ideal";
	case COST_Q_STARTUP:     return "high start-up cost";
	case COST_Q_LATENT_TRAP: return "latent trap";
	case COST_Q_BOTTLENECK:  return "emergent bottleneck";
	default:                 return "unknown";
	}
}

void cost_mean_sd(const double *v, int n, double *mean, double *sd)
{
	double sum = 0, ss = 0;

	for (int i = 0; i < n; i++)
		sum += v[i];
	*mean = n ? sum / n : 0;
	for (int i = 0; i < n; i++)
		ss += (v[i] - *mean) * (v[i] - *mean);
	*sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
}

double cost_t95(double df)
{
	/* two-sided 95% quantiles of Student's t, df 1..30 */
	static const double t[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				    2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
				    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
				    2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };
	int d = (int)floor(df); /* rounding df down keeps the interval wide */

	if (d < 1)
		d = 1;
	if (d <= 30)
		return t[d - 1];
	return d <= 60 ? 2.000 : d <= 120 ? 1.980 : 1.960;
}

void cost_welch(const double *a, int na, const double *b, int nb, double *diff, double *half)
{
	double ma, sa, mb, sb;

	cost_mean_sd(a, na, &ma, &sa);
	cost_mean_sd(b, nb, &mb, &sb);
	*diff = mb - ma;
	if (na < 2 || nb < 2) {
		*half = -1;
		return;
	}
	double va = sa * sa / na, vb = sb * sb / nb, se2 = va + vb;

	if (se2 == 0) {
		*half = 0;
		return;
	}
	/* Welch–Satterthwaite degrees of freedom */
	double df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));

	*half = cost_t95(df) * sqrt(se2);
}

static double cv_of(const double *v, int n)
{
	double m, sd;

	cost_mean_sd(v, n, &m, &sd);
	return m > 0 ? sd / m : 0;
}

void cost_size_finish(struct cost_size *s)
{
	double b[COST_MAX_RUNS], w[COST_MAX_RUNS], bc[COST_MAX_RUNS], wc[COST_MAX_RUNS];
	double sd, half;
	bool cycles = s->nbase > 0 && s->nwith > 0;

	s->max_idle = 0;
	for (int i = 0; i < s->nbase; i++) {
		b[i] = cost_run_ns_per_io(&s->base[i]);
		bc[i] = cost_run_cycles_per_io(&s->base[i]);
		cycles &= bc[i] >= 0;
		if (s->base[i].idle_frac > s->max_idle)
			s->max_idle = s->base[i].idle_frac;
	}
	for (int i = 0; i < s->nwith; i++) {
		w[i] = cost_run_ns_per_io(&s->with[i]);
		wc[i] = cost_run_cycles_per_io(&s->with[i]);
		cycles &= wc[i] >= 0;
		if (s->with[i].idle_frac > s->max_idle)
			s->max_idle = s->with[i].idle_frac;
	}
	cost_mean_sd(b, s->nbase, &s->base_ns, &sd);
	cost_mean_sd(w, s->nwith, &s->with_ns, &sd);
	s->base_cv = cv_of(b, s->nbase);
	s->with_cv = cv_of(w, s->nwith);
	cost_welch(b, s->nbase, w, s->nwith, &s->cost_ns, &half);
	s->lo_ns = half < 0 ? NAN : s->cost_ns - half;
	s->hi_ns = half < 0 ? NAN : s->cost_ns + half;
	s->has_cycles = cycles;
	s->cost_cycles = s->lo_cycles = s->hi_cycles = NAN;
	if (cycles) {
		cost_welch(bc, s->nbase, wc, s->nwith, &s->cost_cycles, &half);
		s->lo_cycles = half < 0 ? NAN : s->cost_cycles - half;
		s->hi_cycles = half < 0 ? NAN : s->cost_cycles + half;
	}
}

struct cost_fit cost_fit_power(const double *size, const double *cost, int n)
{
	struct cost_fit f = { .k_err = -1, .r2 = -1 };
	double x[COST_MAX_SIZES], y[COST_MAX_SIZES], mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0;
	int m = 0;

	/* log C = log a + k log s: a linear fit in log-log space */
	for (int i = 0; i < n && m < COST_MAX_SIZES; i++) {
		if (cost[i] <= 0 || size[i] <= 0)
			continue;
		x[m] = log(size[i]);
		y[m] = log(cost[i]);
		mx += x[m];
		my += y[m];
		m++;
	}
	f.npoints = m;
	if (m < 2)
		return f;
	mx /= m;
	my /= m;
	for (int i = 0; i < m; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx == 0) {
		f.npoints = 0; /* one size given twice: no slope */
		return f;
	}
	f.k = sxy / sxx;
	f.a = exp(my - f.k * mx);
	double ssres = syy - f.k * sxy;

	if (ssres < 0)
		ssres = 0;
	f.r2 = syy > 0 ? 1 - ssres / syy : 1;
	if (m > 2)
		f.k_err = sqrt(ssres / (m - 2) / sxx);
	return f;
}

__attribute__((format(printf, 2, 3)))
static void set_invalid(struct cost_op *op, const char *fmt, ...)
{
	va_list ap;

	if (!op->valid)
		return; /* the first reason found is the one stated */
	op->valid = false;
	va_start(ap, fmt);
	vsnprintf(op->reason, sizeof(op->reason), fmt, ap);
	va_end(ap);
}

void cost_op_finish(struct cost_op *op)
{
	double size[COST_MAX_SIZES], cost[COST_MAX_SIZES];
	char sz[24];

	op->valid = true;
	op->reason[0] = 0;
	for (int i = 0; i < op->nsizes; i++) {
		struct cost_size *s = &op->sizes[i];

		cost_size_finish(s);
		size[i] = (double)s->bytes;
		cost[i] = s->cost_ns;
		cost_size_str(s->bytes, sz);
		if (s->max_idle >= COST_MAX_IDLE)
			set_invalid(op, "CPUs not saturated at %s: a run was %.1f%% idle (the method needs < 5%%)",
				    sz, s->max_idle * 100);
		else if (s->nbase < 2 || s->nwith < 2)
			set_invalid(op, "only one run per side at %s: no interval (use --runs 2 or more)", sz);
		else if (s->base_cv > COST_MAX_CV || s->with_cv > COST_MAX_CV)
			set_invalid(op, "runs too spread at %s: CPU-ns per I/O varied %.0f%% run to run (at most 10%% supports the interval)",
				    sz, fmax(s->base_cv, s->with_cv) * 100);
	}
	op->base_cost_ns = op->nsizes ? op->sizes[0].cost_ns : 0;
	op->fit = cost_fit_power(size, cost, op->nsizes);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void cost_quadrants(struct cost_result *res)
{
	double base[COST_MAX_OPS];

	for (int i = 0; i < res->nops; i++)
		base[i] = res->ops[i].base_cost_ns;
	if (res->nops >= 2) {
		qsort(base, res->nops, sizeof(base[0]), cmp_double);
		res->split_ns = res->nops % 2 ? base[res->nops / 2]
					      : (base[res->nops / 2 - 1] + base[res->nops / 2]) / 2;
		res->split_rule = "median of the operators' base costs";
	} else if (res->nops == 1 && res->ops[0].nsizes) {
		res->split_ns = 0.1 * res->ops[0].sizes[0].base_ns;
		res->split_rule = "10% of the base pipeline's CPU-ns per I/O at the smallest size";
	}
	for (int i = 0; i < res->nops; i++) {
		struct cost_op *op = &res->ops[i];
		bool high = op->base_cost_ns > res->split_ns;

		if (op->fit.npoints < 2)
			op->quadrant = COST_Q_UNKNOWN;
		else if (op->fit.k > 1)
			op->quadrant = high ? COST_Q_BOTTLENECK : COST_Q_LATENT_TRAP;
		else
			op->quadrant = high ? COST_Q_STARTUP : COST_Q_IDEAL;
	}
}

int cost_parse_sizes(const char *list, uint64_t *out, int max, const char **bad)
{
	const char *p = list;
	int n = 0;

	*bad = list;
	if (!*p)
		return -1;
	for (;;) {
		char *end;
		unsigned long long v;

		*bad = p;
		if (!isdigit((unsigned char)*p))
			return -1;
		v = strtoull(p, &end, 10);
		switch (tolower((unsigned char)*end)) {
		case 'k': v <<= 10; end++; break;
		case 'm': v <<= 20; end++; break;
		case 'g': v <<= 30; end++; break;
		default: break;
		}
		if ((*end != ',' && *end) || v == 0 || v % 512 || v > (1ULL << 30) || n == max)
			return -1;
		out[n++] = v;
		if (!*end)
			return n;
		p = end + 1;
	}
}

const char *cost_size_str(uint64_t bytes, char *buf)
{
	if (bytes && !(bytes % (1ULL << 30)))
		snprintf(buf, 24, "%llug", (unsigned long long)(bytes >> 30));
	else if (bytes && !(bytes % (1ULL << 20)))
		snprintf(buf, 24, "%llum", (unsigned long long)(bytes >> 20));
	else if (bytes && !(bytes % 1024))
		snprintf(buf, 24, "%lluk", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, 24, "%llu", (unsigned long long)bytes);
	return buf;
}

/*
 * Sum of fio's "total_ios" (read, write, trim, sync) and its measured
 * runtime: the largest of the directions' "runtime" (ms, a number; the
 * job options' "runtime" is a string). Not "job_runtime": with
 * group_reporting that is the jobs' runtimes summed, numjobs times the
 * wall clock.
 */
int cost_parse_fio(FILE *f, double *ios, double *runtime_ns)
{
	char line[512];

	*ios = 0;
	*runtime_ns = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if ((p = strstr(line, "\"total_ios\" : ")))
			*ios += strtod(p + 14, NULL);
		else if ((p = strstr(line, "\"runtime\" : ")) && isdigit((unsigned char)p[12])) {
			double ms = strtod(p + 12, NULL);

			if (ms * 1e6 > *runtime_ns)
				*runtime_ns = ms * 1e6;
		}
	}
	return *runtime_ns > 0 && *ios > 0 ? 0 : -1;
}
