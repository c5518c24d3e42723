// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Every analysis layer of `iotrail report`, in the order their report
 * sections print (and their new() runs: a layer subscribes to what the
 * layers before it publish). To add one: write its struct
 * it_analysis_layer (layer.h; src/analyze/layer_*.c) and list it here.
 */
#include "analyze/layer.h"

const struct it_analysis_layer *const it_analysis_layers[] = {
	&it_layer_block,
	&it_layer_syscall,
	&it_layer_fabric,   /* joins the block layer's NVMe commands (bus) */
	&it_layer_uprobe,   /* joins the block trails (bus) */
	&it_layer_fs,       /* record --extents: the two snapshots compared */
};

const size_t it_analysis_nlayers = sizeof(it_analysis_layers) / sizeof(it_analysis_layers[0]);
