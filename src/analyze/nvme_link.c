// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * NVMe events on the block trails: the request pointer is the id of both
 * layers' events, so a command joins its request's trail exactly.
 *
 *   S (IT_EV_NVME_SUBMIT): nvme_queue_rq sets the command up before it
 *     starts the request (block_rq_issue), so on a device without a
 *     scheduler (no insert) the request is not known yet: S waits in
 *     nvme_pending (request -> low 32 bits of its time; D is microseconds
 *     later, so D's time restores the rest) until D links it. The last S
 *     before a D counts (a requeued request is set up again).
 *   N (IT_EV_NVME_COMPLETE): on the open trail of its request.
 *   H (IT_EV_NVME_SQ, optional): the driver handled the CQE, before N.
 * All events also go to the command analyzer (nvme.c) for the per-command
 * view. With on_nvme_cmd set (a join on commands: the fabric view), a
 * command completed on an open trail waits in nvme_done until that trail
 * completes, so its subscriber gets both at once.
 */
#include "analyze/internal.h"
#include "analyze/nvme.h"
#include "analyze/sort.h"

static void oom(struct it_analyzer *a)
{
	a->err = -1;
}

static const char *name_tid(uint32_t tid, void *ctx)
{
	struct it_analyzer *a = ctx;
	uint32_t id = it_map_get(&a->tids, (uint64_t)tid | (1ull << 32)); /* TID_KEY */

	return id == IT_MAP_NONE ? "" : it_analyzer_comm(a, id);
}

/* A command completed (N): published now when it has no open trail, else
 * kept until the trail's C. */
static void on_cmd(const struct it_nvme_cmd *c, void *ctx)
{
	struct it_analyzer *a = ctx;
	uint32_t j;

	if (it_map_get(&a->rqs, c->rq) == IT_MAP_NONE) {
		a->on_nvme_cmd(c, NULL, a->nvme_cmd_ctx);
		return;
	}
	j = it_map_take(&a->nvme_done, c->rq);
	if (j != IT_MAP_NONE) { /* a command of the same request not published yet */
		a->on_nvme_cmd(&a->done_cmds[j], NULL, a->nvme_cmd_ctx);
	} else if (a->done_free != UINT32_MAX) {
		j = a->done_free;
		a->done_free = (uint32_t)a->done_cmds[j].rq;
	} else {
		if (a->ndone == a->donecap) {
			uint32_t cap = a->donecap ? 2 * a->donecap : 64;
			struct it_nvme_cmd *d = realloc(a->done_cmds, cap * sizeof(*d));
			if (!d) {
				oom(a);
				return;
			}
			a->done_cmds = d;
			a->donecap = cap;
		}
		j = a->ndone++;
	}
	a->done_cmds[j] = *c;
	if (it_map_put(&a->nvme_done, c->rq, j))
		oom(a);
}

static void done_free(struct it_analyzer *a, uint32_t j)
{
	a->done_cmds[j].rq = a->done_free;
	a->done_free = j;
}

static struct it_nvme *nvme_of(struct it_analyzer *a)
{
	if (!a->nvme) {
		struct it_nvme_opts o = { .start_ns = a->res.start_ns, .interval_ns = a->res.interval_ns,
					  .name_tid = name_tid, .name_ctx = a };
		if (a->on_nvme_cmd) {
			o.on_cmd = on_cmd;
			o.ctx = a;
			a->done_free = UINT32_MAX;
			if (it_map_init(&a->nvme_done, 8))
				oom(a);
		}
		a->nvme = it_nvme_new(&o);
		if (!a->nvme || (!a->nvme_pending.slots && it_map_init(&a->nvme_pending, 8)))
			oom(a);
	}
	return a->nvme;
}

void it_nvme_link_event(struct it_analyzer *a, const struct it_event *e)
{
	struct it_nvme *n = nvme_of(a);
	uint32_t i;

	if (!n || !a->nvme_pending.slots)
		return;
	if (it_nvme_feed(n, e))
		oom(a);
	switch (e->type) {
	case IT_EV_NVME_SUBMIT:
		a->st.nvme_submits++;
		i = it_map_get(&a->rqs, e->id);
		if (i != IT_MAP_NONE && a->slots[i].state != SLOT_ISSUED)
			a->slots[i].t.ts[IT_PT_S] = e->ts_ns;
		else if (it_map_put(&a->nvme_pending, e->id, (uint32_t)e->ts_ns))
			oom(a);
		break;
	case IT_EV_NVME_COMPLETE:
		a->st.nvme_completions++;
		i = it_map_get(&a->rqs, e->id);
		if (i == IT_MAP_NONE) {
			a->st.nvme_unlinked++;
			break;
		}
		a->slots[i].t.ts[IT_PT_N] = e->ts_ns;
		a->st.nvme_linked++;
		break;
	case IT_EV_NVME_SQ:
		i = it_map_get(&a->rqs, e->id);
		if (i != IT_MAP_NONE)
			a->slots[i].t.ts[IT_PT_H] = e->ts_ns;
		break;
	}
}

/* D of request e->id on trail i: takes the S that waited for it. */
void it_nvme_link_issue(struct it_analyzer *a, uint32_t i, const struct it_event *e)
{
	uint32_t lo;

	if (!a->nvme_pending.slots || !a->nvme_pending.count)
		return;
	lo = it_map_take(&a->nvme_pending, e->id);
	if (lo == IT_MAP_NONE)
		return;
	/* S = D - (D - S) mod 2^32: exact while S is less than 4.29 s before D */
	a->slots[i].t.ts[IT_PT_S] = e->ts_ns - (uint32_t)((uint32_t)e->ts_ns - lo);
}

/* A completed trail that went through the NVMe layer (H, when the trace
 * has it, must lie in D..N: D2H + H2N == D2N). */
void it_nvme_link_trail(struct it_analyzer *a, const struct it_trail *t, uint64_t rq)
{
	int64_t sum = 0, q2c = it_stage_time(t, IT_STAGE_Q2C);
	static const unsigned parts[] = { IT_STAGE_Q2I, IT_STAGE_I2D, IT_STAGE_Q2D,
					  IT_STAGE_D2N, IT_STAGE_N2C };

	if (a->nvme_done.count) {
		uint32_t j = it_map_take(&a->nvme_done, rq);
		if (j != IT_MAP_NONE) {
			a->on_nvme_cmd(&a->done_cmds[j], t, a->nvme_cmd_ctx);
			done_free(a, j);
		}
	}
	if (!t->ts[IT_PT_N] || !t->ts[IT_PT_D])
		return;
	a->st.nvme_trails++;
	for (unsigned k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
		int64_t v = it_stage_time(t, parts[k]);
		if (v > 0)
			sum += v;
	}
	if (t->ts[IT_PT_D] <= t->ts[IT_PT_N] && t->ts[IT_PT_N] <= t->ts[IT_PT_C] && sum == q2c &&
	    (!t->ts[IT_PT_H] || (t->ts[IT_PT_D] <= t->ts[IT_PT_H] && t->ts[IT_PT_H] <= t->ts[IT_PT_N])))
		a->st.nvme_stage_sum_ok++;
}

static int by_completion(const void *x, const void *y)
{
	const struct it_nvme_cmd *c = x, *d = y;

	return c->complete_ns < d->complete_ns ? -1 : c->complete_ns > d->complete_ns;
}

/* The end: commands whose trail never completed go out without it, in
 * the order they completed. */
void it_nvme_link_finish(struct it_analyzer *a)
{
	struct it_nvme_cmd *left;
	uint32_t n = 0;

	if (!a->nvme_done.count)
		return;
	left = malloc(a->nvme_done.count * sizeof(*left));
	if (!left) {
		oom(a);
		return;
	}
	for (uint32_t k = 0; k <= a->nvme_done.mask; k++)
		if (a->nvme_done.slots[k].key)
			left[n++] = a->done_cmds[a->nvme_done.slots[k].val];
	it_sort(left, n, sizeof(*left), by_completion);
	for (uint32_t k = 0; k < n; k++)
		a->on_nvme_cmd(&left[k], NULL, a->nvme_cmd_ctx);
	free(left);
	it_map_free(&a->nvme_done);
}

const struct it_nvme_results *it_analyzer_nvme(const struct it_analyzer *a)
{
	return a->nvme ? it_nvme_results(a->nvme) : NULL;
}
