// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The record layouts of the layers that wrote version-1 and -2 files, for
 * reading those files (see layer_table.h). A version-3 file carries its
 * own manifest, written from each layer's records.c.
 */
#include <stddef.h>
#include <string.h>

#include "iotrail/event.h"
#include "layer_table.h"

/* The layers that wrote version-1 and -2 files (their records are the
 * same today); each layer's record layout lives in its folder. */
extern const struct it_layer_rec it_block_records, it_nvme_records, it_syscall_records;
static const struct it_layer_rec *const builtin[] = {
	&it_block_records, &it_nvme_records, &it_syscall_records,
};
#define NBUILTIN (sizeof(builtin) / sizeof(*builtin))

const struct it_layer_rec *it_layer_builtin(uint16_t id)
{
	for (size_t i = 0; i < NBUILTIN; i++)
		if (builtin[i]->id == id)
			return builtin[i];
	return NULL;
}

const struct it_layer_rec *it_layer_builtin_by_name(const char *name)
{
	for (size_t i = 0; i < NBUILTIN; i++)
		if (!strcmp(builtin[i]->name, name))
			return builtin[i];
	return NULL;
}

uint16_t it_legacy_chunk_layer(uint16_t *type)
{
	switch (*type) {
	case IT_CHUNK_EVENTS:
	case IT_CHUNK_DROPS:    /* the block ring's losses (NVMe events share it) */
	case IT_CHUNK_MISSED:   /* the block probes' */
		return IT_LAYER_BLOCK;
	case IT_CHUNK_SYSDROPS:
		*type = IT_CHUNK_DROPS;
		return IT_LAYER_SYSCALL;
	case IT_CHUNK_SYSCALLS:
	case IT_CHUNK_SYSSIDE:
		return IT_LAYER_SYSCALL;
	default:
		return 0;
	}
}

size_t it_legacy_manifest(const char *layers, struct it_layer_rec *out, size_t max)
{
	size_t n = 0;

	while (*layers && n < max) {
		size_t len = strcspn(layers, ",");
		char name[sizeof(out->name)];
		const struct it_layer_rec *l;

		if (len < sizeof(name)) {
			memcpy(name, layers, len);
			name[len] = '\0';
			l = it_layer_builtin_by_name(name);
			/* a layer named twice is listed once */
			for (size_t i = 0; l && i < n; i++)
				if (out[i].id == l->id)
					l = NULL;
			if (l) {
				out[n] = *l;
				out[n++].version = 0;
			}
		}
		layers += len + (layers[len] == ',');
	}
	return n;
}
