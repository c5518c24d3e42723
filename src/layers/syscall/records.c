// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer's records: one struct it_sys_event per call, and side
 * records (paths, names, tasks) of variable size (iotrail/syscall.h).
 * Pure C: the reader and the analysis link it without libbpf.
 */
#include <stddef.h>

#include "iotrail/trace_format.h"
#include "iotrail/event.h"
#include "iotrail/syscall.h"

/* The records on disk are these structs as compiled on LP64 little-endian:
 * a change here is a change of the layer's version. */
_Static_assert(sizeof(struct it_sys_event) == 112, "syscall record layout");
_Static_assert(sizeof(struct it_sys_path) == 32, "path record layout");
_Static_assert(sizeof(struct it_sys_name) == 24, "name record layout");
_Static_assert(sizeof(struct it_sys_task) == 48, "task record layout");


const struct it_layer_rec it_syscall_records = {
	.id = IT_LAYER_SYSCALL, .version = 1, .name = "syscall", .nrecords = 2,
	.records = { { IT_CHUNK_SYSCALLS, IT_COMP_WORDS, sizeof(struct it_sys_event), "it_sys_event" },
		     { IT_CHUNK_SYSSIDE, IT_COMP_ZSTD, 0, "it_sys_path/name/task" } },
};
