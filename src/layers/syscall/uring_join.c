// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * io_uring requests' two halves joined in the recorder (uring_join.h):
 * a hash table keyed by the request's address, open addressing with
 * linear probing and backward-shift deletion (no tombstones: a long
 * recording inserts and deletes every request). It grows up to
 * IT_URING_JOIN_MAX; full there (completions that never come, e.g. of
 * requests with IOSQE_CQE_SKIP_SUCCESS, whose addresses the kernel did
 * not reuse), it drops its older half, counted as evicted, as the BPF
 * LRU map it replaces evicted one by one.
 */
#include "layers/syscall/uring_join.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct it_uring_slot {
	uint64_t req; /* 0: empty */
	struct it_sys_event call;
};

static uint32_t slot_of(const struct it_uring_join *j, uint64_t req)
{
	/* the low bits of an address are alike (slab alignment): mix them */
	return (uint32_t)((req * 0x9e3779b97f4a7c15ull) >> 32) & (j->cap - 1);
}

static struct it_uring_slot *find(const struct it_uring_join *j, uint64_t req)
{
	if (!j->cap)
		return NULL;
	for (uint32_t i = slot_of(j, req);; i = (i + 1) & (j->cap - 1)) {
		if (j->slots[i].req == req)
			return &j->slots[i];
		if (!j->slots[i].req)
			return NULL;
	}
}

/* The slot for a new key (the table has room). */
static struct it_uring_slot *free_slot(struct it_uring_join *j, uint64_t req)
{
	uint32_t i = slot_of(j, req);

	while (j->slots[i].req)
		i = (i + 1) & (j->cap - 1);
	return &j->slots[i];
}

static void remove_slot(struct it_uring_join *j, struct it_uring_slot *s)
{
	uint32_t hole = (uint32_t)(s - j->slots), mask = j->cap - 1;

	/* shift back every later entry of the run whose home slot lies at or
	 * before the hole (cyclically), so that lookups still find them */
	for (uint32_t i = (hole + 1) & mask; j->slots[i].req; i = (i + 1) & mask) {
		uint32_t home = slot_of(j, j->slots[i].req);

		if (((i - home) & mask) >= ((i - hole) & mask)) {
			j->slots[hole] = j->slots[i];
			hole = i;
		}
	}
	j->slots[hole].req = 0;
	j->len--;
}

static int resize(struct it_uring_join *j, uint32_t cap)
{
	struct it_uring_slot *old = j->slots;
	uint32_t oldcap = j->cap;

	j->slots = calloc(cap, sizeof(*j->slots));
	if (!j->slots) {
		j->slots = old;
		return -ENOMEM;
	}
	j->cap = cap;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].req)
			*free_slot(j, old[i].req) = old[i];
	free(old);
	return 0;
}

/* Full at the bound: the older half of the waiting submissions goes. */
static void evict_older_half(struct it_uring_join *j)
{
	uint64_t lo = UINT64_MAX, hi = 0, mid;

	for (uint32_t i = 0; i < j->cap; i++) {
		uint64_t t = j->slots[i].call.ts_enter;

		if (!j->slots[i].req)
			continue;
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	mid = lo + (hi - lo) / 2;
	for (uint32_t i = 0; i < j->cap; i++) {
		struct it_uring_slot *s = &j->slots[i];

		/* a removal shifts a later entry into slot i: look again */
		while (s->req && s->call.ts_enter <= mid) {
			remove_slot(j, s);
			j->evicted++;
		}
	}
}

int it_uring_join_submit(struct it_uring_join *j, const struct it_sys_uring_submit *sub)
{
	struct it_uring_slot *s = find(j, sub->req);

	if (!s) {
		/* load at most 1/2: short probe runs */
		if ((j->len + 1) * 2 > j->cap) {
			if (j->cap < 2 * IT_URING_JOIN_MAX) {
				if (resize(j, j->cap ? j->cap * 2 : 256))
					return -ENOMEM;
			} else {
				evict_older_half(j);
			}
		}
		s = free_slot(j, sub->req);
		s->req = sub->req;
		j->len++;
	}
	s->call = sub->call;
	s->call.rec = IT_SREC_CALL;
	return 0;
}

int it_uring_join_done(struct it_uring_join *j, const struct it_sys_uring_done *d,
		       struct it_sys_event *out)
{
	struct it_uring_slot *s = find(j, d->req);

	if (!s) {
		j->unmatched++;
		return 0;
	}
	*out = s->call;
	remove_slot(j, s);
	if (!d->keep) {
		j->filtered++;
		return 0;
	}
	out->ts_exit = d->ts;
	out->ret = d->res;
	out->cpu = d->cpu;
	out->dev = d->dev;
	out->ino = d->ino;
	out->tag_ts = d->tag_ts;
	out->ftype = d->ftype;
	return 1;
}

void it_uring_join_free(struct it_uring_join *j)
{
	free(j->slots);
	memset(j, 0, sizeof(*j));
}
