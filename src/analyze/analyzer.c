/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The analyzer's entry points, the stage table and the group-by keys. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/internal.h"

double it_stage_share(const struct it_group *g, unsigned stage)
{
	uint64_t total = g->stage[IT_STAGE_Q2C].sum;

	return total ? (double)g->stage[stage].sum / (double)total : 0;
}

const char *const it_key_names[IT_KEY_MAX] = {
	[IT_KEY_OP] = "op", [IT_KEY_SIZE] = "size", [IT_KEY_DEV] = "dev",
	[IT_KEY_COMM] = "comm", [IT_KEY_PID] = "pid", [IT_KEY_ROLE] = "role",
};

const char *const it_opc_names[IT_OPC_MAX] = { "read", "write", "other" };
const char *const it_ds_names[IT_DS_MAX] = { "reads", "writes", "flushes", "discards" };

const char *it_op_name(unsigned op)
{
	static const char *const names[IT_OP_MAX] = {
		[IT_OP_READ] = "read", [IT_OP_WRITE] = "write", [IT_OP_FLUSH] = "flush",
		[IT_OP_DISCARD] = "discard", [IT_OP_SECURE_ERASE] = "secure-erase",
		[IT_OP_WRITE_ZEROES] = "write-zeroes", [IT_OP_ZONE_OPEN] = "zone-open",
		[IT_OP_ZONE_CLOSE] = "zone-close", [IT_OP_ZONE_FINISH] = "zone-finish",
		[IT_OP_ZONE_APPEND] = "zone-append", [IT_OP_ZONE_RESET] = "zone-reset",
		[IT_OP_ZONE_RESET_ALL] = "zone-reset-all", [IT_OP_DRV_IN] = "drv-in",
		[IT_OP_DRV_OUT] = "drv-out", [IT_OP_OTHER] = "other",
	};
	return op < IT_OP_MAX && names[op] ? names[op] : "other";
}

int it_parse_group_keys(const char *s, struct it_analyzer_opts *o, char *err, size_t errlen)
{
	unsigned n = 0;
	const char *p = s;

	if (!strcmp(s, "none")) {
		o->nkeys = 0;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned k;
		for (k = 0; k < IT_KEY_MAX; k++)
			if (strlen(it_key_names[k]) == len && !strncmp(p, it_key_names[k], len))
				break;
		if (k == IT_KEY_MAX) {
			snprintf(err, errlen, "unknown group-by key '%.*s' (keys: op, size, dev, comm, pid, role, or none)",
				 (int)len, p);
			return -1;
		}
		for (unsigned j = 0; j < n; j++) {
			if (o->keys[j] == k) {
				snprintf(err, errlen, "group-by key '%s' given twice", it_key_names[k]);
				return -1;
			}
		}
		o->keys[n++] = (uint8_t)k;
		p += len;
		if (*p == ',' && !*++p) {
			snprintf(err, errlen, "group-by list '%s' ends with a comma", s);
			return -1;
		}
	}
	if (!n) {
		snprintf(err, errlen, "empty group-by list (keys: op, size, dev, comm, pid, role, or none)");
		return -1;
	}
	o->nkeys = n;
	return 0;
}

struct it_analyzer *it_analyzer_new(const struct it_analyzer_opts *o)
{
	struct it_analyzer *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->o = *o;
	if (a->o.nkeys > IT_KEY_MAX)
		a->o.nkeys = IT_KEY_MAX;
	for (unsigned i = 0; i < a->o.nkeys; i++)
		a->keymask |= 1u << a->o.keys[i];
	a->packmask = a->keymask;
	if (a->keymask & (1u << IT_KEY_ROLE))
		a->packmask |= 1u << IT_KEY_PID | 1u << IT_KEY_COMM;
	a->free_head = IT_NO_SLOT;
	a->last_group = IT_MAP_NONE;
	a->res.start_ns = o->start_ns;
	a->win_to = UINT64_MAX;
	a->res.interval_ns = o->interval_ns ? o->interval_ns : 1000000000ull;
	a->commcap = 64;
	a->comms = calloc(a->commcap, sizeof(*a->comms));
	a->ncomms = 1; /* id 0: unknown, "" */
	if (!a->comms || it_map_init(&a->bios, 10) || it_map_init(&a->rqs, 10) ||
	    it_map_init(&a->by_start, 10) || it_map_init(&a->by_end, 10) ||
	    it_map_init(&a->fseq_done, 4) ||
	    it_map_init(&a->devmap, 4) || it_map_init(&a->tids, 8) ||
	    it_map_init(&a->commmap, 6) || it_map_init(&a->groupmap, 4) ||
	    it_map_init(&a->file_ids, 4) || it_map_init(&a->epochs, 4)) {
		it_analyzer_free(a);
		return NULL;
	}
	for (int k = 0; k < IT_DISTINCT_MAX; k++)
		if (it_map_init(&a->group_distinct[k], 4)) {
			it_analyzer_free(a);
			return NULL;
		}
	return a;
}

void it_analyzer_set_on_trail(struct it_analyzer *a, void (*fn)(const struct it_trail *t, void *ctx),
			      void *ctx)
{
	a->o.on_trail = fn;
	a->o.ctx = ctx;
}

void it_analyzer_set_on_nvme_cmd(struct it_analyzer *a,
				 void (*fn)(const struct it_nvme_cmd *c, const struct it_trail *t, void *ctx),
				 void *ctx)
{
	a->on_nvme_cmd = fn;
	a->nvme_cmd_ctx = ctx;
}

int it_analyzer_feed(struct it_analyzer *a, const struct it_event *evs, size_t n)
{
	if (a->finished)
		return -1;
	if (n && !a->st.events) {
		a->st.first_ts = a->st.last_ts = evs[0].ts_ns;
		if (!a->res.start_ns)
			a->res.start_ns = evs[0].ts_ns;
	}
	for (size_t i = 0; i < n; i++) {
		const struct it_event *e = &evs[i];
		if (e->ts_ns > a->st.last_ts)
			a->st.last_ts = e->ts_ns;
		else if (e->ts_ns < a->st.first_ts)
			a->st.first_ts = e->ts_ns;
		it_stitch_event(a, e);
	}
	a->st.events += n;
	return a->err ? -1 : 0;
}

void it_analyzer_finish(struct it_analyzer *a, uint64_t end_ns)
{
	struct it_results *r = &a->res;

	if (a->finished)
		return;
	a->finished = true;
	if (!r->start_ns)
		r->start_ns = a->st.first_ts;
	r->end_ns = end_ns ? end_ns : a->st.last_ts;
	if (r->end_ns < r->start_ns)
		r->end_ns = r->start_ns;
	r->duration_s = (double)(r->end_ns - r->start_ns) / 1e9;
	it_stitch_count_open(a);
	if (a->nvme)
		it_nvme_finish(a->nvme, r->end_ns);
	it_nvme_link_finish(a);
	it_aggregate_finish(a);
	r->stats = a->st;
	r->groups = a->groups;
	r->ngroups = a->ngroups;
	r->devs = a->dst;
	r->ndevs = a->ndevs;
	it_diskwin_finish(a);
	r->disk = a->disk;
	r->ndisk = a->ndisk;
	r->task = a->task;
	memcpy(r->keys, a->o.keys, sizeof(r->keys));
	r->nkeys = a->o.nkeys;
}

uint64_t it_analyzer_oldest_open(const struct it_analyzer *a, uint64_t not_before)
{
	uint64_t oldest = UINT64_MAX;

	for (uint32_t i = 0; i < a->nslots; i++) {
		const struct slot *s = &a->slots[i];
		uint64_t q = s->t.ts[IT_PT_Q];

		if (s->state != SLOT_FREE && q && q >= not_before && q < oldest)
			oldest = q;
	}
	return oldest;
}

size_t it_analyzer_open_trails(const struct it_analyzer *a, uint64_t not_before, uint64_t before,
			       struct it_open_trail *out, size_t max)
{
	size_t n = 0;

	for (uint32_t i = 0; i < a->nslots; i++) {
		const struct slot *s = &a->slots[i];
		uint64_t q = s->t.ts[IT_PT_Q];

		if (s->state == SLOT_FREE || !q || q < not_before || q >= before)
			continue;
		if (n < max)
			out[n] = (struct it_open_trail){ .tid = s->t.tid, .q = q };
		n++;
	}
	return n;
}

const struct it_results *it_analyzer_results(const struct it_analyzer *a)
{
	return a->finished ? &a->res : NULL;
}

const char *it_analyzer_comm(const struct it_analyzer *a, uint32_t id)
{
	return id < a->ncomms ? a->comms[id] : "";
}

const char *it_analyzer_why(const struct it_analyzer *a)
{
	/* IT_DEVS_MAX, in words */
	_Static_assert(IT_DEVS_MAX == 16384, "the message below says 16384");
	return a->too_many_devs ? "it names more than 16384 block devices (damaged or forged?); "
				  "iotrail analyses at most that many"
				: it_nvme_why(a->nvme);
}

int it_analyzer_error(const struct it_analyzer *a)
{
	return a->err ? -ENOMEM : 0;
}

void it_analyzer_free(struct it_analyzer *a)
{
	if (!a)
		return;
	for (uint32_t i = 0; i < a->ngroups; i++)
		for (unsigned s = 0; s < IT_STAGE_MAX; s++)
			it_hist_free(&a->groups[i].stage[s]);
	for (uint32_t i = 0; i < a->ndevs; i++)
		free(a->dst[i].timeline);
	free(a->groups);
	free(a->disk);
	free(a->win);
	free(a->dst);
	free(a->ds);
	free(a->slots);
	free(a->comms);
	it_roles_free(a);
	it_map_free(&a->bios);
	it_map_free(&a->rqs);
	it_map_free(&a->by_start);
	it_map_free(&a->by_end);
	it_map_free(&a->fseq_done);
	it_map_free(&a->devmap);
	it_map_free(&a->tids);
	it_map_free(&a->commmap);
	it_map_free(&a->groupmap);
	for (int k = 0; k < IT_DISTINCT_MAX; k++)
		it_map_free(&a->group_distinct[k]);
	it_map_free(&a->file_ids);
	it_map_free(&a->epochs);
	it_nvme_free(a->nvme);
	it_zones_free(a->zones);
	it_map_free(&a->nvme_pending);
	it_map_free(&a->nvme_done);
	free(a->done_cmds);
	free(a);
}
