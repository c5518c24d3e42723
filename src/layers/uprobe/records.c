// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The uprobe layer's records (uprobe.h): its probe definitions and hits. Pure C. */
#include "iotrail/trace_format.h"
#include "iotrail/event.h"
#include "layers/uprobe/uprobe.h"

_Static_assert(sizeof(struct it_uprobe_hit) == 72, "uprobe hit layout");
_Static_assert(sizeof(struct it_uprobe_def) == 312, "uprobe definition layout");

const struct it_layer_rec it_uprobe_records = {
	.id = IT_LAYER_UPROBE, .version = 1, .name = "uprobe", .nrecords = 2,
	.records = { { IT_CHUNK_UPROBE_DEFS, IT_COMP_ZSTD, sizeof(struct it_uprobe_def), "it_uprobe_def" },
		     { IT_CHUNK_UPROBE_HITS, IT_COMP_WORDS, sizeof(struct it_uprobe_hit), "it_uprobe_hit" } },
};
