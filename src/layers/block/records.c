// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The block layer's records in the trace file, as its manifest entry
 * lists them: struct it_event, packed (event.h).
 * Pure C: the reader and the analysis link it without libbpf.
 */
#include <stddef.h>

#include "iotrail/trace_format.h"
#include "iotrail/event.h"

/* The layers' records on disk are these structs as compiled on LP64
 * little-endian: a change here is a change of the layer's version. */
_Static_assert(sizeof(struct it_event) == 64, "event layout");

const struct it_layer_rec it_block_records = {
	.id = IT_LAYER_BLOCK, .version = 1, .name = "block", .nrecords = 1,
	.records = { { IT_CHUNK_EVENTS, IT_COMP_PACK, sizeof(struct it_event), "it_event" } },
};
