// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail diff`'s logic (diff.h): match the groups of two analysed
 * traces, compute each stage's LAD, pick the bottleneck, print text or
 * JSON (the contract in doc/report.md, "iotrail diff").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
#include "analyze/json_writer.h"
#include "analyze/nvme.h"
#include "analyze/report.h"
#include "layers/fabric/fabric.h"

/* the block stages that partition Q2C compete; the others say what they are */
static const char *block_role(unsigned s)
{
	switch (s) {
	case IT_STAGE_Q2I: case IT_STAGE_I2D: case IT_STAGE_Q2D: case IT_STAGE_D2C:
		return NULL;
	case IT_STAGE_Q2C:
		return "total";
	case IT_STAGE_S2D:
		return "part of I2D/Q2D";
	case IT_STAGE_D2N: case IT_STAGE_N2C:
		return "part of D2C";
	default:
		return "part of D2N";
	}
}

/* Without the transport, host.block, host.out, target, host.in and
 * host.done partition io; with it, host.out, target and host.in give way
 * to their parts. */
_Static_assert(IT_FS_MAX <= IT_DIFF_STAGES, "a diff group holds every fabric stage");

static const char *fabric_role(unsigned s, bool split)
{
	switch (s) {
	case IT_FS_IO:
		return "total";
	case IT_FS_COMMAND:
		return "out+target+in";
	case IT_FS_HOST_OUT: case IT_FS_TARGET: case IT_FS_HOST_IN:
		return split ? "split below" : NULL;
	case IT_FS_TDEV_SUBMIT: case IT_FS_TDEV_Q2D: case IT_FS_TDEV_D2C: case IT_FS_TDEV_DONE:
		return "part of target.dev"; /* the partition stops one level up */
	case IT_FS_R2T_SEND: case IT_FS_R2T_NET: case IT_FS_H2C_WAIT: case IT_FS_H2C_SEND:
	case IT_FS_H2C_NET: case IT_FS_H2C_RECV:
		return "part of target.queue";
	default:
		return it_fabric_stages[s].parent == s || split ? NULL : "not traced";
	}
}

double it_diff_lad(uint64_t base, uint64_t loaded, uint64_t base_count, uint64_t loaded_count)
{
	if (!base_count || !loaded_count || !base)
		return -1;
	return (double)loaded / (double)base;
}

static struct it_diff_stat stat_of(const struct it_hist *h)
{
	return (struct it_diff_stat){ .count = h->count, .p50_ns = it_hist_percentile(h, 50),
				      .avg_ns = it_hist_avg(h) };
}

/* ---- the groups of one side, in a neutral form ---- */
struct side_group {
	struct it_diff_group g;       /* key, label, stage names and roles */
	char match[256];              /* "op=read,dev=loop0": what is compared */
	uint64_t count;
	const struct it_hist *h[IT_DIFF_STAGES];
};

static void add_key(struct side_group *sg, const char *name, const char *val, bool num)
{
	struct it_diff_group *g = &sg->g;
	size_t l = strlen(sg->match), ll = strlen(g->label);

	g->kname[g->nkeys] = name;
	snprintf(g->kval[g->nkeys], sizeof(g->kval[0]), "%s", val);
	g->knum[g->nkeys] = num;
	g->nkeys++;
	snprintf(sg->match + l, sizeof(sg->match) - l, "%s%s=%s", l ? "," : "", name, val);
	snprintf(g->label + ll, sizeof(g->label) - ll, "%s%s", ll ? " " : "", val);
}

/* a stage competes when it has no role (it is part of the partition) */
static void add_stage(struct side_group *sg, const char *name, const char *role,
		      const struct it_hist *h)
{
	struct it_diff_stage *ds = &sg->g.stage[sg->g.nstages];

	ds->name = name;
	ds->role = role;
	ds->competes = !role;
	sg->h[sg->g.nstages++] = h;
}

static size_t side_groups(const struct it_diff_side *s, struct side_group **out)
{
	const struct it_results *r = s->r;
	size_t nfab = s->fabric ? s->fabric->nops : 0, n = 0;
	struct side_group *v = calloc(r->ngroups + nfab + 1, sizeof(*v));
	struct it_report_input in = { .devs = s->devs, .ndevs = s->ndevs, .a = s->a, .r = r };
	char buf[64];

	if (!v)
		return (size_t)-1;
	for (size_t i = 0; i < r->ngroups; i++, n++) {
		const struct it_group *gr = &r->groups[i];
		struct side_group *sg = &v[n];

		for (unsigned k = 0; k < r->nkeys; k++) {
			const char *name = it_key_names[r->keys[k]];
			switch (r->keys[k]) {
			case IT_KEY_OP:
				add_key(sg, name, it_op_name(gr->key.op), false);
				break;
			case IT_KEY_SIZE:
				snprintf(buf, sizeof(buf), "%llu",
					 (unsigned long long)it_size_class_lo(gr->key.size_class));
				add_key(sg, name, buf, true);
				break;
			case IT_KEY_DEV:
				add_key(sg, name, it_report_dev_name(&in, gr->key.dev, buf, sizeof(buf)), false);
				break;
			case IT_KEY_COMM:
				add_key(sg, name, s->a ? it_analyzer_comm(s->a, gr->key.comm) : "", false);
				break;
			case IT_KEY_PID:
				snprintf(buf, sizeof(buf), "%u", gr->key.pid);
				add_key(sg, name, buf, true);
				break;
			case IT_KEY_ROLE:
				add_key(sg, name, s->a ? it_analyzer_role(s->a, gr->key.role) : "", false);
				break;
			}
		}
		if (!r->nkeys)
			snprintf(sg->g.label, sizeof(sg->g.label), "all");
		sg->count = gr->count;
		for (unsigned st = 0; st < IT_STAGE_MAX; st++)
			add_stage(sg, it_stages[st].name, block_role(st), &gr->stage[st]);
	}
	for (size_t i = 0; i < nfab; i++, n++) {
		const struct it_fabric_op *o = &s->fabric->ops[i];
		struct side_group *sg = &v[n];

		sg->g.fabric = true;
		add_key(sg, "layer", "fabric", false);
		add_key(sg, "op", it_nvme_opcode_name(o->opcode, o->admin, buf, sizeof(buf)), false);
		sg->count = o->count;
		for (unsigned st = 0; st < IT_FS_MAX; st++)
			add_stage(sg, it_fabric_stages[st].name,
				  /* a keep-alive's latency is the target's timer, not load */
				  o->admin ? "admin" : fabric_role(st, o->stage[IT_FS_HOST_QUEUE].count > 0),
				  &o->stage[st]);
	}
	*out = v;
	return n;
}

/* The time a stage added under load in all its I/Os (0 when it shrank). */
static double added_ns(const struct it_diff_stage *st)
{
	if (st->loaded.avg_ns <= st->base.avg_ns)
		return 0;
	return (double)st->loaded.count * (double)(st->loaded.avg_ns - st->base.avg_ns);
}

/* A stage that may be the bottleneck: in the partition of a group both
 * traces have, of the fabric view when there is one, with a LAD. */
static bool in_race(const struct it_diff_group *g, const struct it_diff_stage *st, bool fabric)
{
	return g->where == IT_DIFF_BOTH && g->fabric == fabric && st->competes && st->lad_avg >= 0;
}

/* descending by lad_avg, then lad_p50; nulls last; stable (stage order) */
static bool before(const struct it_diff_stage *a, const struct it_diff_stage *b)
{
	if (a->lad_avg != b->lad_avg)
		return a->lad_avg > b->lad_avg;
	return a->lad_p50 > b->lad_p50;
}

static void sort_stages(struct it_diff_group *g)
{
	for (size_t i = 1; i < g->nstages; i++) {
		struct it_diff_stage x = g->stage[i];
		size_t k = i;
		while (k > 0 && before(&x, &g->stage[k - 1])) {
			g->stage[k] = g->stage[k - 1];
			k--;
		}
		g->stage[k] = x;
	}
}

/* The group from a side's group (sb or sl may be NULL): stages either side has. */
static void fill(struct it_diff_group *g, const struct side_group *sb, const struct side_group *sl)
{
	const struct side_group *any = sb ? sb : sl;
	size_t n = 0;

	*g = any->g;
	g->where = sb && sl ? IT_DIFF_BOTH : sb ? IT_DIFF_BASE_ONLY : IT_DIFF_LOADED_ONLY;
	g->count[0] = sb ? sb->count : 0;
	g->count[1] = sl ? sl->count : 0;
	for (size_t i = 0; i < any->g.nstages; i++) {
		struct it_diff_stage s = any->g.stage[i];
		if (sb)
			s.base = stat_of(sb->h[i]);
		if (sl)
			s.loaded = stat_of(sl->h[i]);
		if (!s.base.count && !s.loaded.count)
			continue;
		s.lad_p50 = it_diff_lad(s.base.p50_ns, s.loaded.p50_ns, s.base.count, s.loaded.count);
		s.lad_avg = it_diff_lad(s.base.avg_ns, s.loaded.avg_ns, s.base.count, s.loaded.count);
		g->stage[n++] = s;
	}
	g->nstages = n;
	sort_stages(g);
}

struct it_diff *it_diff_new(const struct it_diff_side *base, const struct it_diff_side *loaded)
{
	struct side_group *b = NULL, *l = NULL;
	struct it_diff *d = calloc(1, sizeof(*d));
	size_t nb = (size_t)-1, nl = (size_t)-1;
	bool *used = NULL;

	if (!d)
		return NULL;
	d->base_path = base->path;
	d->loaded_path = loaded->path;
	d->bn_group = d->bn_stage = -1;
	if ((nb = side_groups(base, &b)) == (size_t)-1 || (nl = side_groups(loaded, &l)) == (size_t)-1 ||
	    !(used = calloc(nl + 1, sizeof(*used))) ||
	    !(d->groups = calloc(nb + nl + 1, sizeof(*d->groups)))) {
		free(b);
		free(l);
		free(used);
		free(d);
		return NULL;
	}
	for (size_t i = 0; i < nb; i++) {
		const struct side_group *m = NULL;
		for (size_t k = 0; k < nl && !m; k++)
			if (!used[k] && !strcmp(b[i].match, l[k].match)) {
				used[k] = true;
				m = &l[k];
			}
		fill(&d->groups[d->ngroups++], &b[i], m);
	}
	for (size_t k = 0; k < nl; k++)
		if (!used[k])
			fill(&d->groups[d->ngroups++], NULL, &l[k]);
	/* the bottleneck: the stage with the highest LAD at avg among those that
	 * partition a group's total; on a fabric trace the fabric view's (the
	 * initiator's whole path, the target's device in it), else the block
	 * groups'. Only a stage that added at least a tenth of the time the
	 * most adding one added competes (added_ns): a ratio alone is blind to
	 * size, and a loaded VM's target.queue (~0.2 ms at base), stretched by
	 * a few stalls to LAD 26.8 at avg and 1.07 at p50, beat the target's
	 * device, which adds ~230 ms an I/O in that test. */
	bool fabric = false;
	double most = 0;
	for (size_t i = 0; i < d->ngroups; i++)
		fabric |= d->groups[i].where == IT_DIFF_BOTH && d->groups[i].fabric;
	d->bn_fabric = fabric;
	for (size_t i = 0; i < d->ngroups; i++)
		for (size_t s = 0; s < d->groups[i].nstages; s++) {
			const struct it_diff_stage *st = &d->groups[i].stage[s];

			if (in_race(&d->groups[i], st, fabric))
				most = fmax(most, added_ns(st));
		}
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct it_diff_group *g = &d->groups[i];

		for (size_t s = 0; s < g->nstages; s++) {
			const struct it_diff_stage *st = &g->stage[s];

			if (!in_race(g, st, fabric) || added_ns(st) * 10 < most)
				continue;
			if (d->bn_group < 0 || before(st, &d->groups[d->bn_group].stage[d->bn_stage])) {
				d->bn_group = (long)i;
				d->bn_stage = (long)s;
			}
		}
	}
	free(b);
	free(l);
	free(used);
	return d;
}

void it_diff_free(struct it_diff *d)
{
	if (!d)
		return;
	free(d->groups);
	free(d);
}

/* ---- text ---- */
static const char *fmt_ns(char *buf, size_t len, uint64_t ns, uint64_t count)
{
	double v = (double)ns;
	const char *u = "ns";

	if (!count) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (ns < 1000) {
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
		return buf;
	}
	if (ns < 1000000) {
		v /= 1e3;
		u = "us";
	} else if (ns < 1000000000) {
		v /= 1e6;
		u = "ms";
	} else {
		v /= 1e9;
		u = "s";
	}
	snprintf(buf, len, v < 10 ? "%.2f%s" : v < 100 ? "%.1f%s" : "%.0f%s", v, u);
	return buf;
}

static const char *fmt_lad(char *buf, size_t len, double lad)
{
	if (lad < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, lad < 10 ? "%.2f" : lad < 100 ? "%.1f" : "%.0f", lad);
	return buf;
}

static const char *where_name(enum it_diff_where w)
{
	return w == IT_DIFF_BOTH ? "both" : w == IT_DIFF_BASE_ONLY ? "base" : "loaded";
}

static const char *noun(const struct it_diff_group *g, uint64_t n)
{
	if (g->fabric)
		return n == 1 ? "command" : "commands";
	return n == 1 ? "I/O" : "I/Os";
}

/* The bottleneck first, then one table per group (100 columns). */
void it_diff_text(const struct it_diff *d, FILE *f)
{
	char a[16], b[16], c[16], e[16];

	if (d->bn_group >= 0) {
		const struct it_diff_group *g = &d->groups[d->bn_group];
		const struct it_diff_stage *s = &g->stage[d->bn_stage];
		fprintf(f, "bottleneck: %s of %s: LAD %s at avg, %s at p50\n", s->name, g->label,
			fmt_lad(a, sizeof(a), s->lad_avg), fmt_lad(b, sizeof(b), s->lad_p50));
	} else {
		fprintf(f, "bottleneck: none (no stage has data in both traces)\n");
	}
	fprintf(f, "base %s, loaded %s\n", d->base_path, d->loaded_path);
	if (d->bn_fabric)
		fprintf(f, "LAD: loaded / base latency; the fabric stages that add up to io compete for the "
			"bottleneck,\nthe others and the block groups' are listed for information\n");
	else
		fprintf(f, "LAD: loaded / base latency; Q2I, I2D, Q2D and D2C (they add up to Q2C) compete "
			"for the\nbottleneck, the other stages are listed for information\n");
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct it_diff_group *g = &d->groups[i];

		fputc('\n', f);
		if (g->where != IT_DIFF_BOTH) {
			uint64_t n = g->count[g->where == IT_DIFF_LOADED_ONLY];
			fprintf(f, "%s: only in the %s trace (%llu %s)\n", g->label, where_name(g->where),
				(unsigned long long)n, noun(g, n));
			continue;
		}
		fprintf(f, "%s: %llu %s at base, %llu loaded\n", g->label,
			(unsigned long long)g->count[0], noun(g, g->count[0]),
			(unsigned long long)g->count[1]);
		fprintf(f, "  %-11s %8s %8s %8s %8s %8s %8s %7s %7s\n", "stage", "base n", "p50",
			"avg", "loaded n", "p50", "avg", "LAD p50", "LAD avg");
		for (size_t k = 0; k < g->nstages; k++) {
			const struct it_diff_stage *s = &g->stage[k];
			char p0[16], a0[16], p1[16], a1[16];
			fprintf(f, "  %-11s %8llu %8s %8s %8llu %8s %8s %7s %7s%s%s\n", s->name,
				(unsigned long long)s->base.count,
				fmt_ns(p0, sizeof(p0), s->base.p50_ns, s->base.count),
				fmt_ns(a0, sizeof(a0), s->base.avg_ns, s->base.count),
				(unsigned long long)s->loaded.count,
				fmt_ns(p1, sizeof(p1), s->loaded.p50_ns, s->loaded.count),
				fmt_ns(a1, sizeof(a1), s->loaded.avg_ns, s->loaded.count),
				fmt_lad(c, sizeof(c), s->lad_p50), fmt_lad(e, sizeof(e), s->lad_avg),
				s->role ? "  " : "", s->role ? s->role : "");
		}
	}
}

/* ---- JSON ---- */
static void json_key(struct it_json *j, const struct it_diff_group *g)
{
	it_json_name(j, "key");
	it_json_object_start(j);
	for (unsigned k = 0; k < g->nkeys; k++) {
		it_json_name(j, g->kname[k]);
		if (g->knum[k])
			it_json_uint(j, strtoull(g->kval[k], NULL, 10));
		else
			it_json_string(j, g->kval[k]);
	}
	it_json_object_end(j);
}

static void json_lad(struct it_json *j, const char *name, double v)
{
	it_json_name(j, name);
	if (v < 0)
		it_json_null(j);
	else
		it_json_double(j, v);
}

static void json_stat(struct it_json *j, const char *name, const struct it_diff_stat *s)
{
	it_json_name(j, name);
	if (!s->count) {
		it_json_null(j);
		return;
	}
	it_json_object_start(j);
	it_json_kv_uint(j, "count", s->count);
	it_json_kv_uint(j, "p50_ns", s->p50_ns);
	it_json_kv_uint(j, "avg_ns", s->avg_ns);
	it_json_object_end(j);
}

void it_diff_json(const struct it_diff *d, FILE *f, bool pretty)
{
	struct it_json j;

	it_json_init(&j, f, pretty);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "version", 1);
	it_json_kv_string(&j, "base", d->base_path);
	it_json_kv_string(&j, "loaded", d->loaded_path);
	it_json_name(&j, "bottleneck");
	if (d->bn_group < 0) {
		it_json_null(&j);
	} else {
		const struct it_diff_group *g = &d->groups[d->bn_group];
		const struct it_diff_stage *s = &g->stage[d->bn_stage];
		it_json_object_start(&j);
		json_key(&j, g);
		it_json_kv_string(&j, "stage", s->name);
		json_lad(&j, "lad_p50", s->lad_p50);
		json_lad(&j, "lad_avg", s->lad_avg);
		it_json_object_end(&j);
	}
	it_json_name(&j, "groups");
	it_json_array_start(&j);
	for (size_t i = 0; i < d->ngroups; i++) {
		const struct it_diff_group *g = &d->groups[i];
		it_json_object_start(&j);
		json_key(&j, g);
		it_json_kv_string(&j, "in", where_name(g->where));
		it_json_kv_uint(&j, "base_count", g->count[0]);
		it_json_kv_uint(&j, "loaded_count", g->count[1]);
		it_json_name(&j, "stages");
		it_json_array_start(&j);
		for (size_t k = 0; k < g->nstages; k++) {
			const struct it_diff_stage *s = &g->stage[k];
			it_json_object_start(&j);
			it_json_kv_string(&j, "name", s->name);
			it_json_kv_bool(&j, "competes", s->competes);
			json_stat(&j, "base", &s->base);
			json_stat(&j, "loaded", &s->loaded);
			json_lad(&j, "lad_p50", s->lad_p50);
			json_lad(&j, "lad_avg", s->lad_avg);
			it_json_object_end(&j);
		}
		it_json_array_end(&j);
		it_json_object_end(&j);
	}
	it_json_array_end(&j);
	it_json_object_end(&j);
}
