/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail cost`'s arithmetic, apart from running anything (pure C, unit
 * tested): the saturation-throughput delta of
 * shared/papers/operator-cost-saturation-delta.txt. A saturated pipeline
 * spends all its CPU, so CPU time per I/O = F_cpu / R, and an operator's
 * cost is the difference C_op = F_cpu × (1/R_op − 1/R_base). Here F_cpu is
 * the CPU busy time per second read from /proc/stat over each run (so a
 * cost is in CPU-ns per I/O), and R the I/Os per second fio completed.
 */
#ifndef IOTRAIL_COST_MODEL_H
#define IOTRAIL_COST_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define COST_MAX_SIZES 16
#define COST_MAX_RUNS 32
#define COST_MAX_OPS 8
/* the method's assumption: the CPUs are saturated (idle below this) */
#define COST_MAX_IDLE 0.05
/* run-to-run spread (coefficient of variation of CPU-ns per I/O, per arm)
 * above which the interval stated is not one the runs support */
#define COST_MAX_CV 0.10

/* One saturated run of fio, with or without the operator. */
struct cost_run {
	double busy_ns;    /* CPU busy time (all CPUs) over the steady window */
	double window_ns;  /* the window's length on the wall clock */
	double idle_frac;  /* idle + iowait share of all CPU time in it */
	double ios;        /* I/Os fio completed over its measured runtime */
	double runtime_ns; /* fio's measured runtime */
	double cycles;     /* CPU cycles (all CPUs) over the window; < 0 unknown */
};

/* CPU-ns per I/O of a run: F_cpu (busy CPU-ns per second) / R. */
double cost_run_ns_per_io(const struct cost_run *r);
/* The same in cycles; < 0 when the run has no cycle count. */
double cost_run_cycles_per_io(const struct cost_run *r);

/* One I/O size: the alternating runs of both arms and what they give. */
struct cost_size {
	uint64_t bytes;
	int nbase, nwith;
	struct cost_run base[COST_MAX_RUNS], with[COST_MAX_RUNS];
	/* cost_size_finish: */
	double base_ns, with_ns;   /* mean CPU-ns per I/O of each arm */
	double base_cv, with_cv;   /* their run-to-run coefficient of variation */
	double cost_ns, lo_ns, hi_ns; /* C_op and its 95% interval */
	double max_idle;           /* the most idle run of both arms */
	bool has_cycles;           /* every run had a cycle count */
	double cost_cycles, lo_cycles, hi_cycles;
};

enum cost_quadrant {
	COST_Q_UNKNOWN,      /* no k (fewer than two sizes with a positive cost) */
	COST_Q_IDEAL,        /* low base cost, k < 1 */
	COST_Q_STARTUP,      /* high base cost, k < 1: batch it */
	COST_Q_LATENT_TRAP,  /* low base cost, k > 1: cheap until sizes grow */
	COST_Q_BOTTLENECK,   /* high base cost, k > 1: emergent bottleneck */
};
const char *cost_quadrant_name(enum cost_quadrant q);

/* The power-law fit cost = a × size^k on the sizes with a positive cost. */
struct cost_fit {
	int npoints;   /* sizes fitted (positive cost) */
	double a, k;
	double k_err;  /* standard error of k; < 0 when unknown (two points) */
	double r2;     /* < 0 when unknown */
};
/* Fits; npoints < 2 means no fit (k meaningless). */
struct cost_fit cost_fit_power(const double *size, const double *cost, int n);

struct cost_op {
	char name[64];
	int nsizes;
	struct cost_size sizes[COST_MAX_SIZES];
	/* cost_op_finish: */
	double base_cost_ns; /* C_op at the smallest size */
	struct cost_fit fit;
	bool valid;
	char reason[256];    /* why not valid */
	/* cost_quadrants: */
	enum cost_quadrant quadrant;
};

struct cost_result {
	int nops;
	struct cost_op ops[COST_MAX_OPS];
	double split_ns;        /* base cost dividing the quadrants */
	const char *split_rule; /* how it was chosen */
	int ncpus;
	int seconds;            /* measured seconds per run */
	const char *cycles_note; /* why there are no cycles, or NULL */
	const char *workload;   /* the fio command line, with SIZE for the size */
};

/* Mean and sample standard deviation (0 for n < 2). */
void cost_mean_sd(const double *v, int n, double *mean, double *sd);
/* Two-sided 95% Student t quantile for df degrees of freedom (df >= 1). */
double cost_t95(double df);
/* The 95% interval of mean(b) − mean(a) (Welch: unequal variances);
 * *half < 0 when either side has fewer than two values. */
void cost_welch(const double *a, int na, const double *b, int nb, double *diff, double *half);

void cost_size_finish(struct cost_size *s);
void cost_op_finish(struct cost_op *op);
/* The quadrants of every operator: the base cost split at the median of
 * the operators' base costs (the paper's rule) when there are two or
 * more; with one, at 10% of the base pipeline's own CPU-ns per I/O at the
 * smallest size (an operator adding a tenth is not cheap). */
void cost_quadrants(struct cost_result *res);

/* "4k,16k,1m" → bytes; returns the count, or -1 with *bad at the
 * offending item (a size must be a positive multiple of 512, at most 1 GiB). */
int cost_parse_sizes(const char *list, uint64_t *out, int max, const char **bad);
/* "4k" / "1m" / "512" for a size (buf of 24 bytes). */
const char *cost_size_str(uint64_t bytes, char *buf);

/* From fio's JSON output (--output-format=json, --group_reporting): the
 * I/Os completed and the measured runtime in ns. 0, or -1 when either is
 * missing. */
int cost_parse_fio(FILE *f, double *ios, double *runtime_ns);

void cost_print_text(FILE *f, const struct cost_result *res);
void cost_print_json(FILE *f, const struct cost_result *res);
/* The OPQ plot: base cost (log scale) against k, one point per operator
 * with a fit, the quadrant boundaries drawn; with FROM (an earlier result:
 * another machine or kernel), an arrow from each operator's point there
 * to its point in RES. Returns 0 or -1 (write failed). */
int cost_write_svg(FILE *f, const struct cost_result *res, const struct cost_result *from);
/* FROM and TO side by side, operator by operator (matched by name): base
 * cost, k and quadrant in each, and the operators only one of them has. */
void cost_print_compare(FILE *f, const struct cost_result *from, const char *from_name,
			const struct cost_result *to, const char *to_name);
/* The operator named NAME in RES, or NULL. */
const struct cost_op *cost_find_op(const struct cost_result *res, const char *name);
/* A quadrant from its name (cost_quadrant_name's); COST_Q_UNKNOWN else. */
enum cost_quadrant cost_quadrant_from_name(const char *name);

#endif
