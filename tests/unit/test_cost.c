/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `iotrail cost`'s arithmetic and outputs (src/cost/cost_model.c,
 * cost_output.c) on synthetic runs whose answers are worked out by hand. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>

#include "cost/cost_model.h"

/* A saturated run (2 CPUs busy for 1 s) that spent ns CPU-ns per I/O. */
static struct cost_run run_of(double ns, double idle)
{
	return (struct cost_run){ .busy_ns = 2e9, .window_ns = 1e9, .runtime_ns = 1e9,
				  .ios = 2e9 / ns, .idle_frac = idle, .cycles = -1 };
}

static void fill_size(struct cost_size *s, uint64_t bytes, const double *base, const double *with,
		      int n, double idle)
{
	memset(s, 0, sizeof(*s));
	s->bytes = bytes;
	for (int i = 0; i < n; i++) {
		s->base[s->nbase++] = run_of(base[i], idle);
		s->with[s->nwith++] = run_of(with[i], idle);
	}
}

TEST(cost_parse_sizes)
{
	uint64_t v[COST_MAX_SIZES];
	const char *bad;

	ASSERT_EQ(cost_parse_sizes("4k,16k,1m,512,1g", v, COST_MAX_SIZES, &bad), 5, "count");
	ASSERT_U64_EQ(v[0], 4096, "4k");
	ASSERT_U64_EQ(v[1], 16384, "16k");
	ASSERT_U64_EQ(v[2], 1 << 20, "1m");
	ASSERT_U64_EQ(v[3], 512, "512");
	ASSERT_U64_EQ(v[4], 1ULL << 30, "1g");
	ASSERT_EQ(cost_parse_sizes("4k,8x", v, COST_MAX_SIZES, &bad), -1, "unit x");
	ASSERT_STREQ(bad, "8x", "bad points at the item");
	ASSERT_EQ(cost_parse_sizes("", v, COST_MAX_SIZES, &bad), -1, "empty");
	ASSERT_EQ(cost_parse_sizes("4k,", v, COST_MAX_SIZES, &bad), -1, "trailing comma");
	ASSERT_EQ(cost_parse_sizes("100", v, COST_MAX_SIZES, &bad), -1, "not a multiple of 512");
	ASSERT_EQ(cost_parse_sizes("0", v, COST_MAX_SIZES, &bad), -1, "zero");
	ASSERT_EQ(cost_parse_sizes("2g", v, COST_MAX_SIZES, &bad), -1, "above 1 GiB");
	ASSERT_EQ(cost_parse_sizes("-4k", v, COST_MAX_SIZES, &bad), -1, "negative");
	ASSERT_EQ(cost_parse_sizes("4k,4k,4k", v, 2, &bad), -1, "more than max");

	char buf[24];
	ASSERT_STREQ(cost_size_str(4096, buf), "4k", "4k");
	ASSERT_STREQ(cost_size_str(3 << 20, buf), "3m", "3m");
	ASSERT_STREQ(cost_size_str(1536, buf), "1536", "1536: not whole KiB");
}

TEST(cost_run_and_interval)
{
	struct cost_run r = run_of(20000, 0);
	double a[] = { 10, 12, 14 }, b[] = { 20, 22, 24 }, diff, half;

	ASSERT_NEAR(cost_run_ns_per_io(&r), 20000, 1e-6, "F_cpu / R");
	/* half the CPU busy over the window: half the cost per I/O */
	r.busy_ns = 1e9;
	ASSERT_NEAR(cost_run_ns_per_io(&r), 10000, 1e-6, "busy share");
	ASSERT_LE(cost_run_cycles_per_io(&r), -1, "no cycles");
	ASSERT_NEAR(cost_t95(1), 12.706, 1e-9, "t df 1");
	ASSERT_NEAR(cost_t95(4.9), 2.776, 1e-9, "t df 4.9 rounds down");
	ASSERT_NEAR(cost_t95(1000), 1.96, 1e-9, "t large df");
	/* sd 2 each, n 3: se = sqrt(8/3), Welch df = 4, t = 2.776 */
	cost_welch(a, 3, b, 3, &diff, &half);
	ASSERT_NEAR(diff, 10, 1e-9, "difference of means");
	ASSERT_NEAR(half, 2.776 * sqrt(8.0 / 3), 1e-9, "half width");
	cost_welch(a, 1, b, 3, &diff, &half);
	ASSERT_LE(half, -1, "one run: no interval");
}

TEST(cost_fit_power)
{
	double s[] = { 4096, 16384, 65536 }, c[3];
	struct cost_fit f;

	for (int i = 0; i < 3; i++)
		c[i] = 3 * sqrt(s[i]);
	f = cost_fit_power(s, c, 3);
	ASSERT_EQ(f.npoints, 3, "points");
	ASSERT_NEAR(f.k, 0.5, 1e-9, "k of an exact power law");
	ASSERT_NEAR(f.a, 3, 1e-6, "a");
	ASSERT_NEAR(f.r2, 1, 1e-9, "R² exact");
	ASSERT_NEAR(f.k_err, 0, 1e-9, "no error");

	/* log-log points (0,0) (1,1.5) (2,2): k 1, SSres 1/6, SStot 13/6 */
	double s2[] = { 1, M_E, M_E * M_E }, c2[] = { 1, exp(1.5), exp(2) };
	f = cost_fit_power(s2, c2, 3);
	ASSERT_NEAR(f.k, 1, 1e-9, "k");
	ASSERT_NEAR(f.r2, 1 - 1.0 / 13, 1e-9, "R²");
	ASSERT_NEAR(f.k_err, sqrt(1.0 / 6 / 2), 1e-9, "k's standard error");

	/* sizes with no positive cost are left out of a log fit */
	double c3[] = { -5, 100, 400 };
	f = cost_fit_power(s, c3, 3);
	ASSERT_EQ(f.npoints, 2, "negative left out");
	ASSERT_NEAR(f.k, 1, 1e-9, "k from two points");
	ASSERT_LE(f.k_err, -1, "two points: no error");
	double c4[] = { -5, 0, 400 };
	ASSERT_EQ(cost_fit_power(s, c4, 3).npoints, 1, "one point: no fit");
}

TEST(cost_validity)
{
	struct cost_op op = { .nsizes = 2 };
	double b[] = { 10000, 10100, 9900 }, w[] = { 12000, 12100, 11900 };
	double w16[] = { 18000, 18100, 17900 };

	fill_size(&op.sizes[0], 4096, b, w, 3, 0.01);
	fill_size(&op.sizes[1], 16384, b, w16, 3, 0.02);
	cost_op_finish(&op);
	ASSERT_TRUE(op.valid, "saturated, steady runs are valid");
	ASSERT_NEAR(op.sizes[0].cost_ns, 2000, 1e-6, "cost at 4k");
	ASSERT_NEAR(op.base_cost_ns, 2000, 1e-6, "base cost: the smallest size");
	ASSERT_TRUE(op.sizes[0].lo_ns < 2000 && op.sizes[0].hi_ns > 2000, "interval around it");
	ASSERT_NEAR(op.fit.k, log(4) / log(4), 1e-6, "cost ×4 for size ×4: k 1");
	ASSERT_NEAR(op.sizes[1].max_idle, 0.02, 1e-12, "max idle");

	fill_size(&op.sizes[1], 16384, b, w16, 3, 0.06);
	cost_op_finish(&op);
	ASSERT_TRUE(!op.valid, "6% idle: invalid");
	ASSERT_TRUE(strstr(op.reason, "not saturated at 16k") != NULL, op.reason);

	double spread[] = { 10000, 13000, 7000 };
	fill_size(&op.sizes[1], 16384, spread, w16, 3, 0.0);
	cost_op_finish(&op);
	ASSERT_TRUE(!op.valid, "30% spread: invalid");
	ASSERT_TRUE(strstr(op.reason, "runs too spread at 16k") != NULL, op.reason);

	fill_size(&op.sizes[0], 4096, b, w, 1, 0.0);
	fill_size(&op.sizes[1], 16384, b, w16, 3, 0.0);
	cost_op_finish(&op);
	ASSERT_TRUE(!op.valid, "one run: invalid");
	ASSERT_TRUE(strstr(op.reason, "only one run per side at 4k") != NULL, op.reason);
	ASSERT_TRUE(isnan(op.sizes[0].lo_ns), "one run: no interval");
}

static void set_op(struct cost_op *op, const char *name, double base_cost, double k, int npoints)
{
	memset(op, 0, sizeof(*op));
	snprintf(op->name, sizeof(op->name), "%s", name);
	op->base_cost_ns = base_cost;
	op->fit.k = k;
	op->fit.npoints = npoints;
	op->fit.k_err = 0.05;
	op->valid = true;
}

TEST(cost_quadrants)
{
	static struct cost_result res;

	memset(&res, 0, sizeof(res));
	res.nops = 5;
	set_op(&res.ops[0], "cheap-flat", 100, 0.2, 3);
	set_op(&res.ops[1], "dear-flat", 5000, 0.1, 3);
	set_op(&res.ops[2], "cheap-steep", 200, 1.4, 3);
	set_op(&res.ops[3], "dear-steep", 9000, 1.2, 3);
	set_op(&res.ops[4], "a<b&c", 1000, 0.5, 1);
	cost_quadrants(&res);
	ASSERT_NEAR(res.split_ns, 1000, 1e-9, "median of five");
	ASSERT_STREQ(cost_quadrant_name(res.ops[0].quadrant), "ideal", "low, k < 1");
	ASSERT_STREQ(cost_quadrant_name(res.ops[1].quadrant), "high start-up cost", "high, k < 1");
	ASSERT_STREQ(cost_quadrant_name(res.ops[2].quadrant), "latent trap", "low, k > 1");
	ASSERT_STREQ(cost_quadrant_name(res.ops[3].quadrant), "emergent bottleneck", "high, k > 1");
	ASSERT_STREQ(cost_quadrant_name(res.ops[4].quadrant), "unknown", "no fit");

	/* one operator: a tenth of the pipeline's own cost per I/O */
	res.nops = 1;
	res.ops[0].nsizes = 1;
	res.ops[0].sizes[0].base_ns = 20000;
	cost_quadrants(&res);
	ASSERT_NEAR(res.split_ns, 2000, 1e-9, "10% of the base");
	ASSERT_STREQ(cost_quadrant_name(res.ops[0].quadrant), "ideal", "100 ns below 2000");
}

static char *render(const struct cost_result *res, int what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (what == 0)
		cost_print_json(f, res);
	else if (what == 1)
		cost_write_svg(f, res, NULL);
	else
		cost_print_text(f, res);
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* The number after the first occurrence of key, NaN when absent. */
static double json_number(const char *json, const char *key)
{
	const char *p = strstr(json, key);

	return p ? strtod(p + strlen(key), NULL) : NAN;
}

TEST(cost_outputs)
{
	static struct cost_result res;
	double b[] = { 10000, 10100, 9900 }, w[] = { 12000, 12100, 11900 };
	char *out;

	memset(&res, 0, sizeof(res));
	res.nops = 2;
	res.ncpus = 2;
	res.seconds = 3;
	res.cycles_note = "not measured: test";
	set_op(&res.ops[0], "a<b&c", 0, 0, 0);
	res.ops[0].nsizes = 2;
	fill_size(&res.ops[0].sizes[0], 4096, b, w, 3, 0);
	fill_size(&res.ops[0].sizes[1], 65536, b, w, 3, 0);
	cost_op_finish(&res.ops[0]);
	set_op(&res.ops[1], "invalid-one", 0, 0, 0);
	res.ops[1].nsizes = 1;
	fill_size(&res.ops[1].sizes[0], 4096, b, w, 1, 0.2);
	cost_op_finish(&res.ops[1]);
	cost_quadrants(&res);

	out = render(&res, 0);
	ASSERT_NOT_NULL(out, "json");
	if (out) {
		ASSERT_EQ(count(out, "\"name\": "), 2, "two operators");
		ASSERT_EQ(count(out, "\"valid\": true"), 1, "first valid");
		ASSERT_EQ(count(out, "\"valid\": false"), 1, "second invalid");
		ASSERT_TRUE(strstr(out, "CPUs not saturated at 4k: a run was 20.0% idle") != NULL, "reason");
		ASSERT_NEAR(json_number(out, "\"k\": "), 0, 1e-6, "flat cost: k 0");
		ASSERT_TRUE(strstr(out, "\"k\": null") != NULL, "no fit: k null");
		ASSERT_NEAR(json_number(out, "\"cost_ns\": "), 2000, 1e-3, "cost_ns");
		ASSERT_TRUE(strstr(out, "\"cost_ns_lo\": null") != NULL, "one run: no interval");
		ASSERT_TRUE(strstr(out, "\"cost_cycles\": null") != NULL, "no cycles");
		ASSERT_TRUE(strstr(out, "\"quadrant\": \"ideal\"") != NULL, "quadrant");
		ASSERT_EQ(count(out, "\"ns_per_io\": "), 14, "every run listed");
	}
	free(out);
	out = render(&res, 1);
	ASSERT_NOT_NULL(out, "svg");
	if (out) {
		ASSERT_TRUE(!strncmp(out, "<svg ", 5), "starts as SVG");
		ASSERT_TRUE(strstr(out, "</svg>\n") != NULL, "ends");
		ASSERT_EQ(count(out, "<circle"), 1, "one point: the operator with a fit");
		ASSERT_TRUE(strstr(out, "a&lt;b&amp;c") != NULL, "name escaped");
		ASSERT_TRUE(strstr(out, "a<b") == NULL, "nothing unescaped");
		ASSERT_EQ(count(out, "nan"), 0, "no NaN coordinates");
	}
	free(out);
	out = render(&res, 2);
	ASSERT_NOT_NULL(out, "text");
	if (out) {
		ASSERT_TRUE(strstr(out, "invalid-one   valid: no — CPUs not saturated") != NULL, "verdict");
		ASSERT_TRUE(strstr(out, "(one run: none)") != NULL, "no interval said");
		ASSERT_TRUE(strstr(out, "cycles: not measured: test") != NULL, "cycles note");
	}
	free(out);
}

/* Two results of the same operators side by side (--compare): one moved
 * quadrant, one only in each; the plot gets an arrow for each operator
 * with a fit in both, and the earlier-only one a hollow point. */
TEST(cost_compare)
{
	static struct cost_result from, to;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	from.nops = 3;
	from.split_ns = 1000;
	set_op(&from.ops[0], "scheduler=bfq", 3800, 0.14, 3);
	from.ops[0].quadrant = COST_Q_STARTUP;
	set_op(&from.ops[1], "fs=ext4", 900, 0.3, 3);
	from.ops[1].quadrant = COST_Q_IDEAL;
	set_op(&from.ops[2], "gone", 500, 1.2, 3);
	from.ops[2].quadrant = COST_Q_LATENT_TRAP;
	to.nops = 3;
	to.split_ns = 1000;
	set_op(&to.ops[0], "fs=ext4", 950, 0.25, 3);
	to.ops[0].quadrant = COST_Q_IDEAL;
	set_op(&to.ops[1], "scheduler=bfq", 700, 0.5, 3);
	to.ops[1].quadrant = COST_Q_IDEAL;
	set_op(&to.ops[2], "new", 2000, 0, 0);
	to.ops[2].valid = false;
	ASSERT_EQ(cost_quadrant_from_name("latent trap"), COST_Q_LATENT_TRAP, "quadrant by name");
	ASSERT_EQ(cost_quadrant_from_name("nonsense"), COST_Q_UNKNOWN, "unknown name");
	ASSERT_TRUE(cost_find_op(&to, "scheduler=bfq") == &to.ops[1], "found by name, not position");
	if (!ASSERT_NOT_NULL(f = open_memstream(&buf, &len), "memstream"))
		return;
	cost_print_compare(f, &from, "a.json", &to, "b.json");
	fclose(f);
	ASSERT_TRUE(strstr(buf, "scheduler=bfq") && strstr(buf, "3800 ns, k 0.14") && strstr(buf, "700 ns, k 0.50") &&
			    strstr(buf, "high start-up cost -> ideal"), "bfq moved: both cells and the move");
	ASSERT_TRUE(strstr(buf, "950 ns, k 0.25") && strstr(buf, "ideal (same)"), "ext4 stayed");
	ASSERT_TRUE(strstr(buf, "latent trap (only in A)") != NULL, "only earlier");
	ASSERT_TRUE(strstr(buf, "2000 ns, no k (invalid)") && strstr(buf, "(only in B)") && strstr(buf, "A: a.json"), "only later, invalid");
	free(buf);
	buf = NULL;
	if (!ASSERT_NOT_NULL(f = open_memstream(&buf, &len), "memstream"))
		return;
	ASSERT_EQ(cost_write_svg(f, &to, &from), 0, "svg written");
	fclose(f);
	ASSERT_EQ(count(buf, "<line class=\"moved\""), 2, "an arrow for each operator in both");
	ASSERT_EQ(count(buf, "marker-end=\"url(#arrow)\""), 2, "arrow heads");
	ASSERT_EQ(count(buf, "<circle"), 2 + 3, "two current points (new has no fit), three earlier");
	ASSERT_TRUE(strstr(buf, "gone (earlier only)") != NULL, "an earlier-only point is named");
	ASSERT_EQ(count(buf, "nan"), 0, "no NaN coordinates");
	free(buf);
}

/* fio 3.33's JSON (trimmed) for 4 jobs × depth 16 of 1 s with
 * group_reporting on this machine: job_runtime is the 4 jobs' runtimes
 * summed (4011 ms), the read's runtime the wall clock (1007 ms). */
static const char fio_4jobs[] =
	"{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [\n    {\n"
	"      \"jobname\" : \"d\",\n      \"elapsed\" : 2,\n      \"job options\" : {\n"
	"        \"numjobs\" : \"4\",\n        \"runtime\" : \"1\",\n        \"group_reporting\" : \"\"\n      },\n"
	"      \"read\" : {\n        \"iops\" : 13425.024826,\n        \"runtime\" : 1007,\n"
	"        \"total_ios\" : 13519,\n        \"short_ios\" : 0\n      },\n"
	"      \"write\" : {\n        \"runtime\" : 0,\n        \"total_ios\" : 0\n      },\n"
	"      \"trim\" : {\n        \"runtime\" : 0,\n        \"total_ios\" : 0\n      },\n"
	"      \"sync\" : {\n        \"total_ios\" : 0\n      },\n"
	"      \"job_runtime\" : 4011,\n      \"usr_cpu\" : 1.421092\n    }\n  ]\n}\n";

TEST(cost_parse_fio)
{
	double ios, runtime;
	FILE *f = fmemopen((void *)fio_4jobs, sizeof(fio_4jobs) - 1, "r");

	if (!ASSERT_NOT_NULL(f, "fmemopen"))
		return;
	ASSERT_EQ(cost_parse_fio(f, &ios, &runtime), 0, "parsed");
	fclose(f);
	ASSERT_NEAR(ios, 13519, 0, "read total_ios (the kernel's diskstats counted 13519)");
	ASSERT_NEAR(runtime, 1007e6, 0, "the read's runtime, not job_runtime");

	static const char no_runtime[] = "\"total_ios\" : 5,\n\"runtime\" : \"1\",\n";
	f = fmemopen((void *)no_runtime, sizeof(no_runtime) - 1, "r");
	if (!ASSERT_NOT_NULL(f, "fmemopen"))
		return;
	ASSERT_EQ(cost_parse_fio(f, &ios, &runtime), -1, "only the options' runtime: refused");
	fclose(f);
}
