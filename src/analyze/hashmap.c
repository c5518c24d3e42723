/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The slow path of hashmap.h: doubling the table. */
#include "analyze/hashmap.h"

int it_map_grow(struct it_map *m)
{
	struct it_map old = *m;
	uint32_t log2_cap = 64 - old.shift + 1;

	if (log2_cap > 31 || it_map_init(m, log2_cap)) {
		*m = old;
		return -1;
	}
	for (uint32_t i = 0; i <= old.mask; i++) {
		if (!old.slots[i].key)
			continue;
		uint32_t j = it_map_home(m, old.slots[i].key);
		while (m->slots[j].key)
			j = (j + 1) & m->mask;
		m->slots[j] = old.slots[i];
		m->count++;
	}
	free(old.slots);
	return 0;
}
