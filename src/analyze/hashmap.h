/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A u64 -> u32 open-addressing hash table (linear probing, backward-shift
 * deletion, no tombstones) for the stitcher's hot path: bio and request
 * pointers, (device, sector) adjacency keys, thread ids. Key 0 means an
 * empty slot. Kernel pointers are never 0 and the other keys are built
 * nonzero, but a damaged or forged trace may hold an id of 0: get, put and
 * find take it as ~0 (it_map_key), so any key is safe. Before, key 0
 * matched the first empty slot and handed out its stale value, an index
 * the caller trusted (tests/fuzz: a bio merge event with id 0 led to a
 * SEGV in the NVMe join,
 * tests/fuzz/corpus/trace/bio-merge-id-0). The table only holds what
 * is in flight, so it stays small and cache-resident; it doubles at half
 * load.
 */
#ifndef IOTRAIL_ANALYZE_HASHMAP_H
#define IOTRAIL_ANALYZE_HASHMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define IT_MAP_NONE UINT32_MAX

struct it_map_slot {
	uint64_t key;
	uint32_t val;
	uint32_t pad;
};

struct it_map {
	struct it_map_slot *slots;
	uint32_t mask;  /* capacity - 1, capacity a power of two */
	uint32_t shift; /* 64 - log2(capacity) */
	uint32_t count;
};

/* The key as stored: 0 marks empty slots, so 0 is stored as ~0 (the two
 * become one key, which only a damaged trace can tell apart). */
static inline uint64_t it_map_key(uint64_t key)
{
	return key ? key : ~0ull;
}

static inline uint32_t it_map_home(const struct it_map *m, uint64_t key)
{
	/* Fibonacci hashing: the top bits of key * 2^64/phi spread aligned
	 * pointers and consecutive sectors alike. */
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

static inline int it_map_init(struct it_map *m, uint32_t log2_cap)
{
	m->slots = calloc((size_t)1 << log2_cap, sizeof(*m->slots));
	if (!m->slots)
		return -1;
	m->mask = (1u << log2_cap) - 1;
	m->shift = 64 - log2_cap;
	m->count = 0;
	return 0;
}

static inline void it_map_free(struct it_map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->count = 0;
}

static inline uint32_t it_map_get(const struct it_map *m, uint64_t key)
{
	key = it_map_key(key);
	for (uint32_t i = it_map_home(m, key);; i = (i + 1) & m->mask) {
		const struct it_map_slot *s = &m->slots[i];
		if (s->key == key)
			return s->val;
		if (!s->key)
			return IT_MAP_NONE;
	}
}

int it_map_grow(struct it_map *m);

/* Inserts or overwrites. Returns 0, or -1 when growing failed. */
static inline int it_map_put(struct it_map *m, uint64_t key, uint32_t val)
{
	if ((m->count + 1) * 2 > m->mask + 1 && it_map_grow(m))
		return -1;
	key = it_map_key(key);
	for (uint32_t i = it_map_home(m, key);; i = (i + 1) & m->mask) {
		struct it_map_slot *s = &m->slots[i];
		if (s->key == key) {
			s->val = val;
			return 0;
		}
		if (!s->key) {
			s->key = key;
			s->val = val;
			m->count++;
			return 0;
		}
	}
}

/* Empties slot i. Backward shift keeps every remaining key reachable from
 * its home slot without tombstones. */
static inline void it_map_del_at(struct it_map *m, uint32_t i)
{
	for (uint32_t j = (i + 1) & m->mask;; j = (j + 1) & m->mask) {
		uint64_t k = m->slots[j].key;
		if (!k)
			break;
		/* k may move to the hole at i unless its home lies cyclically in (i, j] */
		uint32_t home = it_map_home(m, k);
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = 0;
	m->count--;
}

/* Slot of key, or UINT32_MAX. */
static inline uint32_t it_map_find(const struct it_map *m, uint64_t key)
{
	key = it_map_key(key);
	for (uint32_t i = it_map_home(m, key);; i = (i + 1) & m->mask) {
		if (m->slots[i].key == key)
			return i;
		if (!m->slots[i].key)
			return UINT32_MAX;
	}
}

/* Removes key if present; returns whether it was. */
static inline bool it_map_del(struct it_map *m, uint64_t key)
{
	uint32_t i = it_map_find(m, key);

	if (i == UINT32_MAX)
		return false;
	it_map_del_at(m, i);
	return true;
}

/* Removes key and returns its value, or IT_MAP_NONE. */
static inline uint32_t it_map_take(struct it_map *m, uint64_t key)
{
	uint32_t i = it_map_find(m, key);

	if (i == UINT32_MAX)
		return IT_MAP_NONE;
	uint32_t val = m->slots[i].val;
	it_map_del_at(m, i);
	return val;
}

/* Removes key only when it maps to val (an index entry another trail has
 * since taken over must stay). */
static inline void it_map_del_if(struct it_map *m, uint64_t key, uint32_t val)
{
	uint32_t i = it_map_find(m, key);

	if (i != UINT32_MAX && m->slots[i].val == val)
		it_map_del_at(m, i);
}

#endif
