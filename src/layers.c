// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The registry of recording-side layers, in print order: `iotrail probe`
 * lists them in this order, `iotrail record` starts them in this order (a
 * layer that is part of another comes after it). Adding a layer: a folder
 * src/layers/NAME/ with its BPF program and its struct it_layer_ops, and one
 * row here (doc/architecture.md walks through it).
 */
#include <string.h>

#include "layer.h"

extern const struct it_layer_ops it_block_layer, it_nvme_layer, it_nvmet_layer, it_syscall_layer,
	it_nvme_tcp_layer, it_nvmet_tcp_layer, it_uprobe_layer, it_fs_layer;

const struct it_layer_ops *const it_layers[] = {
	&it_block_layer,
	&it_nvme_layer,
	&it_nvmet_layer,
	&it_nvme_tcp_layer,
	&it_nvmet_tcp_layer,
	&it_syscall_layer,
	&it_uprobe_layer,
	&it_fs_layer,
};
const size_t it_nlayers = sizeof(it_layers) / sizeof(it_layers[0]);

const struct it_layer_ops *it_layer_by_name(const char *name)
{
	for (size_t i = 0; i < it_nlayers; i++)
		if (!strcmp(it_layers[i]->name, name))
			return it_layers[i];
	return NULL;
}
