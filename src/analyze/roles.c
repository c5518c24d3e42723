/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Process roles for `--group-by role`: a process's title (what ps shows;
 * the syscall layer's title records: PostgreSQL names its checkpointer,
 * walwriter and backends there), else its comm as "[comm]". A title may
 * come after the process's block I/O (the recorder writes it about 100 ms
 * after it first sees the process), so while the trace is read trails are
 * grouped by pid and comm, and at the end each group is relabelled with
 * its role; aggregate.c then folds the groups whose keys became equal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/internal.h"

/* A string kept in a growing table; its index, or IT_MAP_NONE when memory
 * ran out. */
static uint32_t keep(struct it_analyzer *a, char ***tab, uint32_t *n, uint32_t *cap,
		     const char *s, size_t len)
{
	if (*n == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 16;
		char **t = realloc(*tab, ncap * sizeof(*t));

		if (!t) {
			a->err = -1;
			return IT_MAP_NONE;
		}
		*tab = t;
		*cap = ncap;
	}
	if (!((*tab)[*n] = strndup(s, len))) {
		a->err = -1;
		return IT_MAP_NONE;
	}
	return (*n)++;
}

int it_analyzer_title(struct it_analyzer *a, uint32_t pid, const char *title, size_t len)
{
	uint32_t i;

	if (!a->titlemap.slots && it_map_init(&a->titlemap, 6))
		return a->err = -1;
	/* the first one counts, as in the syscall layer's own tables */
	if (it_map_get(&a->titlemap, (uint64_t)pid + 1) != IT_MAP_NONE)
		return 0;
	i = keep(a, &a->titles, &a->ntitles, &a->titlecap, title, len);
	if (i == IT_MAP_NONE || it_map_put(&a->titlemap, (uint64_t)pid + 1, i))
		return a->err = -1;
	return 0;
}

/* The role's id, the same for the same name. Roles are few (one per kind
 * of process, not per process): a linear search is enough. */
static uint32_t role_id(struct it_analyzer *a, const char *name)
{
	for (uint32_t i = 0; i < a->nroles; i++)
		if (!strcmp(a->roles[i], name))
			return i;
	uint32_t i = keep(a, &a->roles, &a->nroles, &a->rolecap, name, strlen(name));
	return i == IT_MAP_NONE ? 0 : i;
}

void it_roles_label(struct it_analyzer *a)
{
	uint32_t m = a->keymask;

	if (!(m & (1u << IT_KEY_ROLE)))
		return;
	for (uint32_t i = 0; i < a->ngroups; i++) {
		struct it_group_key *k = &a->groups[i].key;
		uint32_t t = a->titlemap.slots ? it_map_get(&a->titlemap, (uint64_t)k->pid + 1)
					       : IT_MAP_NONE;
		char comm[24];

		if (t != IT_MAP_NONE && a->titles[t][0]) {
			k->role = role_id(a, a->titles[t]);
		} else {
			const char *c = it_analyzer_comm(a, k->comm);

			snprintf(comm, sizeof(comm), "[%s]", *c ? c : "?");
			k->role = role_id(a, comm);
		}
		/* pid and comm were only kept to find the role */
		if (!(m & (1u << IT_KEY_PID)))
			k->pid = 0;
		if (!(m & (1u << IT_KEY_COMM)))
			k->comm = 0;
	}
}

const char *it_analyzer_role(const struct it_analyzer *a, uint32_t id)
{
	return id < a->nroles ? a->roles[id] : "";
}

void it_roles_free(struct it_analyzer *a)
{
	for (uint32_t i = 0; i < a->ntitles; i++)
		free(a->titles[i]);
	for (uint32_t i = 0; i < a->nroles; i++)
		free(a->roles[i]);
	free(a->titles);
	free(a->roles);
	it_map_free(&a->titlemap);
}
