/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Aggregation of completed trails: the group-by table (count, bytes, one
 * histogram per stage) and per-device distributions (queue depth, sizes,
 * sequential/random, timeline). Fixed memory per group and per device,
 * except the timeline, which grows with the trace duration up to
 * IT_TIMELINE_MAX intervals.
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/internal.h"
#include "analyze/sort.h"
#include "analyze/timeline.h"

/* At most this many timeline intervals per device (768 KiB; 4.5 h at 1 s;
 * the JSON report lists them all, so this also bounds its size):
 * a longer trace, or a timestamp far off the trace (a damaged or forged
 * file), makes the interval longer instead, by a power of two
 * (timeline_coarsen). 4M intervals, the bound before, made 192 MiB per
 * device, every device of the trace padded to it at the end: a fuzzed
 * file with 4 devices took 790 MB and 5 s
 * (tests/fuzz/corpus/trace/timeline-far-completion). */
#define IT_TIMELINE_MAX (1u << 14)
/* And at most IT_TIMELINE_TOTAL over all devices (analyzer.h): beyond 64
 * devices each gets a power-of-two share. */
static uint32_t timeline_limit(const struct it_analyzer *a)
{
	return (uint32_t)it_timeline_share(IT_TIMELINE_MAX, a->ndevs, IT_TIMELINE_TOTAL);
}

static void add_point(struct it_timeline_point *to, const struct it_timeline_point *from)
{
	for (unsigned oc = 0; oc < IT_OPC_MAX; oc++) {
		to->ios[oc] += from->ios[oc];
		to->bytes[oc] += from->bytes[oc];
	}
	to->latency_ns += from->latency_ns;
}

/* Makes the timeline's interval 2^shift times longer, so that idx
 * intervals of the old one fit in timeline_limit, every device's alike
 * (IT_TIMELINE_COARSEN); what a device's timeline no longer needs is
 * given back. */
static void timeline_coarsen(struct it_analyzer *a, uint64_t idx)
{
	uint32_t limit = timeline_limit(a);
	unsigned shift = 0;

	while ((idx >> shift) >= limit)
		shift++;
	for (uint32_t i = 0; i < a->ndevs; i++) {
		struct it_dev_stats *d = &a->dst[i];
		size_t n = d->ntimeline;
		struct it_timeline_point *p;

		a->ds[i].tl_lo = a->ds[i].tl_hi = 0; /* the cached interval is gone */
		IT_TIMELINE_COARSEN(d->timeline, d->ntimeline, shift, add_point);
		if (d->ntimeline < n && d->ntimeline &&
		    (p = realloc(d->timeline, d->ntimeline * sizeof(*p))))
			d->timeline = p;
	}
	a->res.interval_ns <<= shift;
}

void it_timeline_fit(struct it_analyzer *a)
{
	uint32_t limit = timeline_limit(a);
	size_t used = 0;

	if (limit == a->tl_limit)
		return;
	a->tl_limit = limit;
	for (uint32_t i = 0; i < a->ndevs; i++)
		if (a->dst[i].ntimeline > used)
			used = a->dst[i].ntimeline;
	if (used > limit)
		timeline_coarsen(a, used - 1);
}

static uint64_t key_hash(const struct it_group_key *k)
{
	uint64_t x = ((uint64_t)k->dev << 32 | k->pid) * 0x9E3779B97F4A7C15ull;
	uint64_t y = ((uint64_t)k->comm << 16 | (uint64_t)k->op << 8 | k->size_class) *
		     0xC2B2AE3D27D4EB4Full;
	return (x ^ (y >> 7) ^ y) | 1;
}

static uint32_t group_add(struct it_analyzer *a, const struct it_group_key *k, uint64_t h,
			  bool mapped)
{
	if (a->ngroups == a->groupcap) {
		uint32_t n = a->groupcap ? a->groupcap * 2 : 8;
		struct it_group *g = realloc(a->groups, n * sizeof(*g));
		if (!g) {
			a->err = -1;
			return IT_MAP_NONE;
		}
		a->groups = g;
		a->groupcap = n;
	}
	uint32_t i = a->ngroups++;
	struct it_group *g = &a->groups[i];
	memset(g, 0, sizeof(*g));
	g->key = *k;
	g->first_ns = UINT64_MAX;
	for (unsigned s = 0; s < IT_STAGE_MAX; s++)
		it_hist_init(&g->stage[s]);
	if (!mapped && it_map_put(&a->groupmap, h, i))
		a->err = -1;
	return i;
}

static uint32_t group_find(struct it_analyzer *a, const struct it_group_key *k)
{
	uint64_t h = key_hash(k);
	uint32_t i = it_map_get(&a->groupmap, h);

	if (i != IT_MAP_NONE && memcmp(&a->groups[i].key, k, sizeof(*k))) {
		/* 64-bit hash collision: find it the slow way */
		for (uint32_t j = 0; j < a->ngroups; j++)
			if (!memcmp(&a->groups[j].key, k, sizeof(*k)))
				return j;
		return group_add(a, k, h, true);
	}
	return i != IT_MAP_NONE ? i : group_add(a, k, h, false);
}

static void add_timeline(struct it_analyzer *a, struct it_dev_stats *d, struct devstate *ds,
			 const struct it_trail *t, unsigned oc)
{
	/* a completion not seen: at the latest time it can have been */
	uint64_t c = t->ts[IT_PT_C] ? t->ts[IT_PT_C] : t->completed_by, start = a->res.start_ns, idx;

	if (c >= ds->tl_lo && c < ds->tl_hi) { /* same interval as the last one: no division */
		idx = ds->tl_idx;
	} else {
		idx = c > start ? (c - start) / a->res.interval_ns : 0;
		if (idx >= timeline_limit(a)) {
			timeline_coarsen(a, idx);
			idx = (c - start) / a->res.interval_ns;
		}
		ds->tl_idx = idx;
		ds->tl_lo = c > start ? start + idx * a->res.interval_ns : 0;
		ds->tl_hi = start + (idx + 1) * a->res.interval_ns;
	}

	if (idx >= d->ntimeline) {
		size_t n = d->ntimeline ? d->ntimeline * 2 : 64;
		while (n <= idx)
			n *= 2;
		struct it_timeline_point *p = realloc(d->timeline, n * sizeof(*p));
		if (!p) {
			a->err = -1;
			return;
		}
		memset(p + d->ntimeline, 0, (n - d->ntimeline) * sizeof(*p));
		d->timeline = p;
		d->ntimeline = n; /* trimmed to the used length at the end */
	}
	d->timeline[idx].ios[oc]++;
	d->timeline[idx].bytes[oc] += t->bytes;
	int64_t q2c = it_stage_time(t, IT_STAGE_Q2C);
	if (q2c > 0)
		d->timeline[idx].latency_ns += (uint64_t)q2c;
}

static void add_device(struct it_analyzer *a, const struct it_trail *t, uint32_t devidx)
{
	struct it_dev_stats *d = &a->dst[devidx];
	unsigned oc = it_op_class(t->op);
	uint64_t start = t->ts[IT_PT_Q] ? t->ts[IT_PT_Q] : t->ts[IT_PT_I] ? t->ts[IT_PT_I] : t->ts[IT_PT_D];

	if (start < d->first_ns || !d->first_ns)
		d->first_ns = start;
	if (t->ts[IT_PT_C] > d->last_ns)
		d->last_ns = t->ts[IT_PT_C];

	d->ios[oc]++;
	d->bytes[oc] += t->bytes;
	if (t->qd_insert) {
		d->qd_insert[t->qd_insert < IT_QD_EXACT ? t->qd_insert : IT_QD_EXACT]++;
		if (t->qd_insert > d->qd_insert_max)
			d->qd_insert_max = t->qd_insert;
	}
	if (t->qd_issue) {
		d->qd_issue[t->qd_issue < IT_QD_EXACT ? t->qd_issue : IT_QD_EXACT]++;
		if (t->qd_issue > d->qd_issue_max)
			d->qd_issue_max = t->qd_issue;
	}
	d->sizes[it_size_class(t->bytes)][oc]++;
	d->seq[oc] += t->seq == IT_SEQ_SEQUENTIAL;
	d->rnd[oc] += t->seq == IT_SEQ_RANDOM;
	add_timeline(a, d, &a->ds[devidx], t, oc);
}

/* A file's id (1, 2, ...), 0 for an I/O of no file. The key packs
 * (fs dev, inode) in 64 bits: exact while inode numbers are below 2^40
 * (ext4's are 32-bit; XFS's can be larger, then two files may be one). */
static uint32_t file_id(struct it_analyzer *a, const struct it_trail *t)
{
	uint64_t key = (uint64_t)t->fsdev << 40 ^ t->ino;
	uint32_t id;

	if (!t->ino)
		return 0;
	id = it_map_get(&a->file_ids, key);
	if (id != IT_MAP_NONE)
		return id;
	if (it_map_put(&a->file_ids, key, ++a->nfiles))
		a->err = -1;
	return a->nfiles;
}

/* report --stats distinct(KEY): a value is new to the group when
 * (group, value) is. Unknown comms and I/Os of no file or zone are not
 * counted. */
static void count_distinct(struct it_analyzer *a, uint32_t gi, struct it_group *g,
			   const struct it_trail *t)
{
	for (int k = 0; k < IT_DISTINCT_MAX; k++) {
		uint32_t v = 0;
		uint64_t key;

		if (!(a->o.distinct & (1u << k)))
			continue;
		switch (k) {
		case IT_DISTINCT_PID: v = t->pid; break;
		case IT_DISTINCT_TID: v = t->tid; break;
		case IT_DISTINCT_COMM: v = t->comm; break;
		case IT_DISTINCT_DEV: v = t->dev; break;
		case IT_DISTINCT_FILE: v = file_id(a, t); break;
		case IT_DISTINCT_ZONE: v = it_zones_id(a->zones, t->dev, t->sector); break;
		}
		if (!v && (k == IT_DISTINCT_COMM || k == IT_DISTINCT_FILE || k == IT_DISTINCT_ZONE))
			continue;
		key = (uint64_t)gi << 32 | v;
		if (it_map_get(&a->group_distinct[k], key) != IT_MAP_NONE)
			continue;
		if (it_map_put(&a->group_distinct[k], key, 1))
			a->err = -1;
		g->distinct[k]++;
	}
}

void it_aggregate(struct it_analyzer *a, const struct it_trail *t, uint32_t devidx)
{
	uint32_t m = a->packmask;
	/* The key packed in two words, compared with the last group's in
	 * registers (a struct built field by field and compared with memcmp
	 * stalls on store forwarding). */
	uint64_t k0 = (m & (1u << IT_KEY_DEV) ? (uint64_t)t->dev << 32 : 0) |
		      (m & (1u << IT_KEY_PID) ? t->pid : 0);
	uint64_t k1 = (m & (1u << IT_KEY_COMM) ? (uint64_t)t->comm << 16 : 0) |
		      (m & (1u << IT_KEY_OP) ? (uint64_t)t->op << 8 : 0) |
		      (m & (1u << IT_KEY_SIZE) ? it_size_class(t->bytes) : 0);

	uint32_t gi = a->last_group;
	if (gi == IT_MAP_NONE || k0 != a->last_k0 || k1 != a->last_k1) {
		struct it_group_key k = {
			.dev = (uint32_t)(k0 >> 32), .pid = (uint32_t)k0,
			.comm = (uint32_t)(k1 >> 16), .op = (uint8_t)(k1 >> 8), .size_class = (uint8_t)k1,
		};
		gi = group_find(a, &k);
		if (gi == IT_MAP_NONE)
			return;
		a->last_k0 = k0;
		a->last_k1 = k1;
		a->last_group = gi;
	}
	struct it_group *g = &a->groups[gi];
	g->count++;
	if (a->o.distinct)
		count_distinct(a, gi, g, t);
	if (a->o.epoch_ns && t->ts[IT_PT_Q]) { /* per-epoch sampling: its epochs */
		uint64_t epoch = t->ts[IT_PT_Q] / a->o.epoch_ns + 1;

		if (it_map_get(&a->epochs, epoch) == IT_MAP_NONE) {
			if (it_map_put(&a->epochs, epoch, 1))
				a->err = -1;
			a->task.epochs++;
		}
	}
	g->bytes += t->bytes;
	g->errors += t->error != 0;
	g->merges += t->merges;
	g->requeues += t->requeues;
	g->splits += t->split;
	g->no_q += !t->ts[IT_PT_Q];
	g->seq += t->seq == IT_SEQ_SEQUENTIAL;
	g->rnd += t->seq == IT_SEQ_RANDOM;
	uint64_t start = t->ts[IT_PT_Q] ? t->ts[IT_PT_Q] : t->ts[IT_PT_I] ? t->ts[IT_PT_I] : t->ts[IT_PT_D];
	if (start < g->first_ns)
		g->first_ns = start;
	if (t->ts[IT_PT_C] > g->last_ns)
		g->last_ns = t->ts[IT_PT_C];
	for (unsigned s = 0; s < IT_STAGE_MAX; s++) {
		int64_t v = it_stage_time(t, s);
		if (v >= 0 && it_hist_add(&g->stage[s], (uint64_t)v))
			a->err = -1;
	}

	it_diskwin_add(a, t->dev, it_ds_class(t->op, false), t->ts[IT_PT_C] ? t->ts[IT_PT_C] : t->completed_by,
		       t->ts[IT_PT_C] ? IT_DS_COUNTED : IT_DS_REUSED);
	a->st.ios++;
	a->st.bytes += t->bytes;
	a->st.request_ios += t->kind == IT_TRAIL_REQUEST;
	a->st.bio_ios += t->kind == IT_TRAIL_BIO;
	a->st.no_q += !t->ts[IT_PT_Q];
	a->st.errors += t->error != 0;
	add_device(a, t, devidx);
}

static int cmp_group(const void *pa, const void *pb, void *arg)
{
	const struct it_analyzer *a = arg;
	const struct it_group_key *x = &((const struct it_group *)pa)->key;
	const struct it_group_key *y = &((const struct it_group *)pb)->key;

	for (unsigned i = 0; i < a->o.nkeys; i++) {
		int c = 0;
		switch (a->o.keys[i]) {
		case IT_KEY_OP:
			c = (x->op > y->op) - (x->op < y->op);
			break;
		case IT_KEY_SIZE:
			c = (x->size_class > y->size_class) - (x->size_class < y->size_class);
			break;
		case IT_KEY_DEV:
			c = (x->dev > y->dev) - (x->dev < y->dev);
			break;
		case IT_KEY_COMM:
			c = strcmp(a->comms[x->comm], a->comms[y->comm]);
			break;
		case IT_KEY_PID:
			c = (x->pid > y->pid) - (x->pid < y->pid);
			break;
		case IT_KEY_ROLE:
			c = strcmp(it_analyzer_role(a, x->role), it_analyzer_role(a, y->role));
			break;
		}
		if (c)
			return c;
	}
	return 0;
}

static int cmp_dev(const void *pa, const void *pb)
{
	uint32_t x = ((const struct it_dev_stats *)pa)->dev, y = ((const struct it_dev_stats *)pb)->dev;
	return (x > y) - (x < y);
}

/* Intervals of iv that cover span (no overflow near UINT64_MAX). */
static uint64_t intervals(uint64_t span, uint64_t iv)
{
	return span / iv + (span % iv != 0);
}

/* Adds group s into group d (s is left empty). */
static void group_fold(struct it_analyzer *a, struct it_group *d, struct it_group *s)
{
	d->count += s->count;
	d->bytes += s->bytes;
	d->errors += s->errors;
	d->merges += s->merges;
	d->requeues += s->requeues;
	d->splits += s->splits;
	d->no_q += s->no_q;
	d->seq += s->seq;
	d->rnd += s->rnd;
	/* folded groups are of different processes, so of different pids and
	 * tids: the sums are exact; comms, devs and files may be shared, and
	 * `report` refuses those with a role key (report.c) */
	for (int k = 0; k < IT_DISTINCT_MAX; k++)
		d->distinct[k] += s->distinct[k];
	if (s->first_ns < d->first_ns)
		d->first_ns = s->first_ns;
	if (s->last_ns > d->last_ns)
		d->last_ns = s->last_ns;
	for (unsigned st = 0; st < IT_STAGE_MAX; st++) {
		if (it_hist_merge(&d->stage[st], &s->stage[st]))
			a->err = -1;
		it_hist_free(&s->stage[st]);
	}
}

/* Sorted groups whose keys became equal (processes of one role) as one.
 * The group map is not updated: no trail comes after this. */
static void fold_equal(struct it_analyzer *a)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < a->ngroups; i++) {
		if (n && !cmp_group(&a->groups[n - 1], &a->groups[i], a)) {
			group_fold(a, &a->groups[n - 1], &a->groups[i]);
			continue;
		}
		if (n != i)
			a->groups[n] = a->groups[i];
		n++;
	}
	a->ngroups = n;
}

void it_aggregate_finish(struct it_analyzer *a)
{
	const struct it_timeline_point zero = { 0 };
	uint64_t span = a->res.end_ns > a->res.start_ns ? a->res.end_ns - a->res.start_ns : 0;
	uint64_t window = intervals(span, a->res.interval_ns);

	if (window > timeline_limit(a)) {
		timeline_coarsen(a, window - 1);
		window = intervals(span, a->res.interval_ns);
	}
	it_roles_label(a);
	if (a->ngroups > 1)
		qsort_r(a->groups, a->ngroups, sizeof(*a->groups), cmp_group, a);
	if (a->keymask & (1u << IT_KEY_ROLE))
		fold_equal(a);
	/* Every device's timeline covers the whole window, idle intervals
	 * included (and any late completion beyond it). */
	for (uint32_t i = 0; i < a->ndevs; i++) {
		struct it_dev_stats *d = &a->dst[i];
		while (d->ntimeline && !memcmp(&d->timeline[d->ntimeline - 1], &zero, sizeof(zero)))
			d->ntimeline--;
		if (d->ntimeline >= window)
			continue;
		struct it_timeline_point *p = realloc(d->timeline, window * sizeof(*p));
		if (!p) {
			a->err = -1;
			continue;
		}
		memset(p + d->ntimeline, 0, (window - d->ntimeline) * sizeof(*p));
		d->timeline = p;
		d->ntimeline = window;
	}
	if (a->ndevs > 1)
		it_sort(a->dst, a->ndevs, sizeof(*a->dst), cmp_dev);
	a->last_group = IT_MAP_NONE; /* indices changed; no more trails come */
}
