// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The layers of this build (see layer_table.h). The block and NVMe layers
 * share one ring buffer, so `iotrail record` writes both into the block
 * layer's EVENTS stream; each event's own layer byte tells them apart.
 */
#include <stddef.h>
#include <string.h>

#include "iotrail/event.h"
#include "iotrail/syscall.h"
#include "layer_table.h"

/* The layers' records on disk are these structs as compiled on LP64
 * little-endian: a change here is a change of the layer's version. */
_Static_assert(sizeof(struct it_event) == 64, "event layout");
/* e->nvme is the same bytes as the block names, field for field */
#define SAME(blk, nv) \
	_Static_assert(offsetof(struct it_event, blk) == offsetof(struct it_event, nvme.nv) && \
		       sizeof(((struct it_event *)0)->blk) == sizeof(((struct it_event *)0)->nvme.nv), \
		       "NVMe view of " #blk)
SAME(ts_ns, ts_ns);
SAME(id, rq);
SAME(sector, cdw10_11);
SAME(sector, result);
SAME(sector, range_sector);
SAME(sector, sq_head);
SAME(aux, cdw12_13);
SAME(aux, retries_genctr);
SAME(aux, range_index);
SAME(aux, sq_tail);
SAME(dev, dev);
SAME(bytes, bytes);
SAME(pid, pid);
SAME(tid, tid);
SAME(flags, nsid);
SAME(error, status);
SAME(tag, cid);
SAME(hwq, qid);
SAME(type, type);
SAME(op, opcode);
SAME(layer, layer);
SAME(cpu_lo, cpu_lo);
SAME(reserved, ctrl);
#undef SAME
_Static_assert(sizeof(struct it_nvme_event) == 64, "NVMe view layout");
_Static_assert(sizeof(struct it_sys_event) == 112, "syscall record layout");
_Static_assert(sizeof(struct it_sys_path) == 32, "path record layout");
_Static_assert(sizeof(struct it_sys_name) == 24, "name record layout");
_Static_assert(sizeof(struct it_sys_task) == 48, "task record layout");

static const struct it_layer_rec builtin[] = {
	{ .id = IT_LAYER_BLOCK, .version = 1, .name = "block", .nrecords = 1,
	  .records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, sizeof(struct it_event), "it_event" } } },
	{ .id = IT_LAYER_NVME, .version = 1, .name = "nvme", .nrecords = 1,
	  .records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, sizeof(struct it_event), "it_event.nvme" } } },
	{ .id = IT_LAYER_SYSCALL, .version = 1, .name = "syscall", .nrecords = 2,
	  .records = { { IT_CHUNK_SYSCALLS, IT_COMP_ZSTD, sizeof(struct it_sys_event), "it_sys_event" },
		       { IT_CHUNK_SYSSIDE, IT_COMP_ZSTD, 0, "it_sys_path/name/task" } } },
};
#define NBUILTIN (sizeof(builtin) / sizeof(*builtin))

const struct it_layer_rec *it_layer_builtin(uint16_t id)
{
	for (size_t i = 0; i < NBUILTIN; i++)
		if (builtin[i].id == id)
			return &builtin[i];
	return NULL;
}

const struct it_layer_rec *it_layer_builtin_by_name(const char *name)
{
	for (size_t i = 0; i < NBUILTIN; i++)
		if (!strcmp(builtin[i].name, name))
			return &builtin[i];
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
