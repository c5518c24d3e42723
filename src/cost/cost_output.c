// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail cost`'s three outputs over one struct cost_result: the text
 * table, the JSON document (through the project's JSON writer) and the
 * OPQ plot as SVG (base cost against k, the paper's Fig. 3 layout).
 * Unknowns are stated: no interval with one run, no k with fewer than two
 * sizes of positive cost, no cycles without a readable cycle counter.
 */
#include "cost/cost_model.h"

#include <math.h>
#include <string.h>

#include "analyze/json_writer.h"

static void text_op(FILE *f, const struct cost_result *res, const struct cost_op *op)
{
	char sz[24];

	fprintf(f, "\n%s   valid: %s%s%s\n", op->name, op->valid ? "yes" : "no",
		op->valid ? "" : " — ", op->valid ? "" : op->reason);
	fprintf(f, "  %-6s %12s %12s %11s %23s %6s %7s\n", "size", "base ns/I/O", "with ns/I/O",
		"cost ns/I/O", "95% interval", "runs", "idle");
	for (int i = 0; i < op->nsizes; i++) {
		const struct cost_size *s = &op->sizes[i];
		char iv[48];

		if (isnan(s->lo_ns))
			snprintf(iv, sizeof(iv), "(one run: none)");
		else
			snprintf(iv, sizeof(iv), "[%.0f, %.0f]", s->lo_ns, s->hi_ns);
		fprintf(f, "  %-6s %12.0f %12.0f %11.0f %23s %3d+%-2d %6.1f%%\n",
			cost_size_str(s->bytes, sz), s->base_ns, s->with_ns, s->cost_ns, iv,
			s->nbase, s->nwith, s->max_idle * 100);
		if (s->has_cycles)
			fprintf(f, "  %-6s %12s %12s %11.0f cycles [%.0f, %.0f]\n", "", "", "",
					s->cost_cycles, s->lo_cycles, s->hi_cycles);
	}
	if (op->fit.npoints < 2) {
		fprintf(f, "  fit: none (fewer than two sizes with a positive cost)\n");
	} else {
		fprintf(f, "  fit: cost = %.3g × size^k over %d sizes: k = %.2f", op->fit.a,
			op->fit.npoints, op->fit.k);
		if (op->fit.k_err >= 0)
			fprintf(f, " ± %.2f, R² %.3f", op->fit.k_err, op->fit.r2);
		else
			fprintf(f, " (two sizes: no error, no R²)");
		fprintf(f, "\n");
	}
	fprintf(f, "  base cost %.0f ns/I/O at %s; quadrant: %s (base cost split at %.0f ns)\n",
		op->base_cost_ns, op->nsizes ? cost_size_str(op->sizes[0].bytes, sz) : "-",
		cost_quadrant_name(op->quadrant), res->split_ns);
}

void cost_print_text(FILE *f, const struct cost_result *res)
{
	fprintf(f, "iotrail cost: CPU time per I/O each operator adds at saturation\n");
	fprintf(f, "  C_op = F_cpu × (1/R_op − 1/R_base), F_cpu = CPU busy ns per second (/proc/stat), "
		   "R = I/Os per second (fio)\n");
	fprintf(f, "  %d CPUs, %d s per run, alternating runs; workload: %s\n", res->ncpus, res->seconds,
		res->workload ? res->workload : "(none)");
	if (res->cycles_note)
		fprintf(f, "  cycles: %s\n", res->cycles_note);
	for (int i = 0; i < res->nops; i++)
		text_op(f, res, &res->ops[i]);
	fprintf(f, "\nquadrants: base cost split at %.0f ns (%s), k at 1\n", res->split_ns,
		res->split_rule ? res->split_rule : "none");
}

static void kv_num(struct it_json *j, const char *name, double v)
{
	it_json_name(j, name);
	if (isnan(v) || isinf(v))
		it_json_null(j);
	else
		it_json_double(j, v);
}

static void json_runs(struct it_json *j, const char *name, const struct cost_run *r, int n)
{
	it_json_name(j, name);
	it_json_array_start(j);
	for (int i = 0; i < n; i++) {
		it_json_object_start(j);
		kv_num(j, "ns_per_io", cost_run_ns_per_io(&r[i]));
		kv_num(j, "iops", r[i].runtime_ns > 0 ? r[i].ios / (r[i].runtime_ns / 1e9) : 0);
		kv_num(j, "cpu_busy_per_s", r[i].window_ns > 0 ? r[i].busy_ns / r[i].window_ns : 0);
		kv_num(j, "idle_pct", r[i].idle_frac * 100);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

static void json_size(struct it_json *j, const struct cost_size *s)
{
	it_json_object_start(j);
	it_json_kv_uint(j, "size", s->bytes);
	kv_num(j, "cost_ns", s->cost_ns);
	kv_num(j, "cost_ns_lo", s->lo_ns);
	kv_num(j, "cost_ns_hi", s->hi_ns);
	kv_num(j, "cost_cycles", s->has_cycles ? s->cost_cycles : NAN);
	kv_num(j, "cost_cycles_lo", s->has_cycles ? s->lo_cycles : NAN);
	kv_num(j, "cost_cycles_hi", s->has_cycles ? s->hi_cycles : NAN);
	kv_num(j, "base_ns_per_io", s->base_ns);
	kv_num(j, "with_ns_per_io", s->with_ns);
	kv_num(j, "max_idle_pct", s->max_idle * 100);
	json_runs(j, "base_runs", s->base, s->nbase);
	json_runs(j, "with_runs", s->with, s->nwith);
	it_json_object_end(j);
}

void cost_print_json(FILE *f, const struct cost_result *res)
{
	struct it_json j;

	it_json_init(&j, f, true);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "version", 1);
	it_json_kv_uint(&j, "cpus", res->ncpus);
	it_json_kv_uint(&j, "seconds_per_run", res->seconds);
	it_json_kv_string(&j, "workload", res->workload ? res->workload : "");
	it_json_name(&j, "cycles_note");
	if (res->cycles_note)
		it_json_string(&j, res->cycles_note);
	else
		it_json_null(&j);
	kv_num(&j, "quadrant_split_ns", res->split_ns);
	it_json_kv_string(&j, "quadrant_split_rule", res->split_rule ? res->split_rule : "");
	it_json_name(&j, "operators");
	it_json_array_start(&j);
	for (int i = 0; i < res->nops; i++) {
		const struct cost_op *op = &res->ops[i];
		bool fit = op->fit.npoints >= 2;

		it_json_object_start(&j);
		it_json_kv_string(&j, "name", op->name);
		it_json_kv_bool(&j, "valid", op->valid);
		it_json_name(&j, "reason");
		if (op->valid)
			it_json_null(&j);
		else
			it_json_string(&j, op->reason);
		kv_num(&j, "base_cost_ns", op->base_cost_ns);
		kv_num(&j, "k", fit ? op->fit.k : NAN);
		kv_num(&j, "k_err", fit && op->fit.k_err >= 0 ? op->fit.k_err : NAN);
		kv_num(&j, "r2", fit && op->fit.r2 >= 0 ? op->fit.r2 : NAN);
		it_json_kv_uint(&j, "fit_points", op->fit.npoints);
		it_json_kv_string(&j, "quadrant", cost_quadrant_name(op->quadrant));
		it_json_name(&j, "sizes");
		it_json_array_start(&j);
		for (int k = 0; k < op->nsizes; k++)
			json_size(&j, &op->sizes[k]);
		it_json_array_end(&j);
		it_json_object_end(&j);
	}
	it_json_array_end(&j);
	it_json_object_end(&j);
	fputc('\n', f);
}

static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* The plot's frame: x = k (linear), y = base cost in ns (log10). */
struct svg_frame {
	double x0, x1, y0, y1; /* data ranges (y in log10 ns) */
};
#define SVG_W 640
#define SVG_H 440
#define SVG_L 80
#define SVG_R 20
#define SVG_T 30
#define SVG_B 50

static double px(const struct svg_frame *fr, double k)
{
	return SVG_L + (k - fr->x0) / (fr->x1 - fr->x0) * (SVG_W - SVG_L - SVG_R);
}

static double py(const struct svg_frame *fr, double ns)
{
	double l = log10(ns > 0 ? ns : pow(10, fr->y0));

	if (l < fr->y0)
		l = fr->y0;
	return SVG_H - SVG_B - (l - fr->y0) / (fr->y1 - fr->y0) * (SVG_H - SVG_T - SVG_B);
}

const struct cost_op *cost_find_op(const struct cost_result *res, const char *name)
{
	for (int i = 0; res && i < res->nops; i++)
		if (!strcmp(res->ops[i].name, name))
			return &res->ops[i];
	return NULL;
}

/* The plot's ranges over one result's points (fitted operators). */
static void svg_extent(const struct cost_result *res, struct svg_frame *fr, double *lo, double *hi)
{
	for (int i = 0; res && i < res->nops; i++) {
		const struct cost_op *op = &res->ops[i];

		if (op->fit.npoints < 2)
			continue;
		fr->x0 = fmin(fr->x0, op->fit.k - 0.3);
		fr->x1 = fmax(fr->x1, op->fit.k + 0.3);
		if (op->base_cost_ns > 0) {
			*lo = fmin(*lo, log10(op->base_cost_ns));
			*hi = fmax(*hi, log10(op->base_cost_ns));
		}
	}
	if (res && res->split_ns > 0) {
		*lo = fmin(*lo, log10(res->split_ns));
		*hi = fmax(*hi, log10(res->split_ns));
	}
}

int cost_write_svg(FILE *f, const struct cost_result *res, const struct cost_result *from)
{
	struct svg_frame fr = { -0.5, 2.0, 1, 4 };
	double lo = INFINITY, hi = -INFINITY;

	svg_extent(res, &fr, &lo, &hi);
	svg_extent(from, &fr, &lo, &hi);
	if (lo <= hi) {
		fr.y0 = floor(lo - 0.3);
		fr.y1 = ceil(hi + 0.3);
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n", SVG_W, SVG_H);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"18\" font-size=\"14\">Operator performance quadrant: "
		   "base cost against scaling k</text>\n", SVG_L);
	/* axes and the quadrant boundaries */
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n",
		SVG_L, SVG_T, SVG_W - SVG_L - SVG_R, SVG_H - SVG_T - SVG_B);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"gray\" stroke-dasharray=\"4\"/>\n",
		px(&fr, 1), SVG_T, px(&fr, 1), SVG_H - SVG_B);
	if (res->split_ns > 0)
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"gray\" stroke-dasharray=\"4\"/>\n",
			SVG_L, py(&fr, res->split_ns), SVG_W - SVG_R, py(&fr, res->split_ns));
	fprintf(f, "<g fill=\"gray\"><text x=\"%d\" y=\"%d\">high start-up cost</text>"
		   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">emergent bottleneck</text>"
		   "<text x=\"%d\" y=\"%d\">ideal</text>"
		   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">latent trap</text></g>\n",
		SVG_L + 6, SVG_T + 16, SVG_W - SVG_R - 6, SVG_T + 16,
		SVG_L + 6, SVG_H - SVG_B - 8, SVG_W - SVG_R - 6, SVG_H - SVG_B - 8);
	for (double k = ceil(fr.x0 * 2) / 2; k <= fr.x1 + 1e-9; k += 0.5)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.1f</text>\n",
			px(&fr, k), SVG_H - SVG_B + 16, k);
	for (double e = fr.y0; e <= fr.y1 + 1e-9; e += 1)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g ns</text>\n",
			SVG_L - 6, py(&fr, pow(10, e)) + 4, pow(10, e));
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">k (cost ∝ size^k)</text>\n",
		(SVG_W + SVG_L) / 2, SVG_H - 12);
	fprintf(f, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">"
		   "base cost, CPU-ns per I/O (smallest size)</text>\n", (SVG_H + SVG_T - SVG_B) / 2);
	if (from)
		fprintf(f, "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
			   "markerWidth=\"8\" markerHeight=\"8\" orient=\"auto-start-reverse\">"
			   "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"dimgray\"/></marker></defs>\n");
	/* the earlier result's points, hollow, each with an arrow to where
	 * the operator is now */
	for (int i = 0; from && i < from->nops; i++) {
		const struct cost_op *was = &from->ops[i], *now = cost_find_op(res, was->name);
		double x, y;

		if (was->fit.npoints < 2)
			continue;
		x = px(&fr, was->fit.k);
		y = py(&fr, was->base_cost_ns);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"dimgray\"/>\n", x, y);
		/* an arrow (named in its tooltip), or the name written beside
		 * a point that has nowhere to go */
		if (now && now->fit.npoints >= 2)
			fprintf(f, "<line class=\"moved\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				   "stroke=\"dimgray\" marker-end=\"url(#arrow)\"><title>",
				x, y, px(&fr, now->fit.k), py(&fr, now->base_cost_ns));
		else
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"dimgray\">", x + 6, y + 14);
		svg_text(f, was->name);
		fprintf(f, now && now->fit.npoints >= 2 ? "</title></line>\n" : " (earlier only)</text>\n");
	}
	for (int i = 0; i < res->nops; i++) {
		const struct cost_op *op = &res->ops[i];
		double x, y;

		if (op->fit.npoints < 2)
			continue;
		x = px(&fr, op->fit.k);
		y = py(&fr, op->base_cost_ns);
		if (op->fit.k_err > 0)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
				px(&fr, op->fit.k - op->fit.k_err), y, px(&fr, op->fit.k + op->fit.k_err), y);
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>\n", x, y,
			op->valid ? "steelblue" : "white\" stroke=\"firebrick");
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 8, y - 6);
		svg_text(f, op->name);
		fprintf(f, "%s</text>\n", op->valid ? "" : " (invalid)");
	}
	fprintf(f, "</svg>\n");
	return ferror(f) ? -1 : 0;
}

enum cost_quadrant cost_quadrant_from_name(const char *name)
{
	for (enum cost_quadrant q = COST_Q_IDEAL; q <= COST_Q_BOTTLENECK; q++)
		if (!strcmp(name, cost_quadrant_name(q)))
			return q;
	return COST_Q_UNKNOWN;
}

static void compare_cell(char *buf, size_t len, const struct cost_op *op)
{
	if (!op)
		snprintf(buf, len, "-");
	else if (op->fit.npoints >= 2)
		snprintf(buf, len, "%.0f ns, k %.2f%s", op->base_cost_ns, op->fit.k, op->valid ? "" : " (invalid)");
	else
		snprintf(buf, len, "%.0f ns, no k%s", op->base_cost_ns, op->valid ? "" : " (invalid)");
}

void cost_print_compare(FILE *f, const struct cost_result *from, const char *from_name,
			const struct cost_result *to, const char *to_name)
{
	char a[96], b[96];

	fprintf(f, "iotrail cost: two results, operator by operator (base cost per I/O at the smallest\n"
		   "size, k of cost ∝ size^k, quadrant)\n  A: %s\n  B: %s\n", from_name, to_name);
	fprintf(f, "  %-21s %-25s %-25s %s\n", "operator", "A", "B", "quadrant A -> B");
	for (int i = 0; i < from->nops; i++) {
		const struct cost_op *was = &from->ops[i], *now = cost_find_op(to, was->name);

		compare_cell(a, sizeof(a), was);
		compare_cell(b, sizeof(b), now);
		fprintf(f, "  %-21s %-25s %-25s %s", was->name, a, b, cost_quadrant_name(was->quadrant));
		if (!now)
			fprintf(f, " (only in A)\n");
		else if (now->quadrant != was->quadrant)
			fprintf(f, " -> %s\n", cost_quadrant_name(now->quadrant));
		else
			fprintf(f, " (same)\n");
	}
	for (int i = 0; i < to->nops; i++) {
		const struct cost_op *now = &to->ops[i];

		if (cost_find_op(from, now->name))
			continue;
		compare_cell(b, sizeof(b), now);
		fprintf(f, "  %-21s %-25s %-25s %s (only in B)\n", now->name, "-", b,
			cost_quadrant_name(now->quadrant));
	}
}
