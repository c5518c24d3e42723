/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The layers this build knows, as entries of the trace file's layers
 * manifest (struct it_layer_rec): id, name, version and the record types of
 * each. `iotrail record` puts the entries of the layers it records into
 * the file; the reader describes version-1 and -2 files (which have no
 * manifest) with them. Pure data, no libbpf: it will become the layer
 * registry.
 */
#ifndef IOTRAIL_LAYER_TABLE_H
#define IOTRAIL_LAYER_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "iotrail/trace_format.h"

/* The entry of layer id, or of the layer called name; NULL if unknown. */
const struct it_layer_rec *it_layer_builtin(uint16_t id);
const struct it_layer_rec *it_layer_builtin_by_name(const char *name);

/*
 * Versions 1 and 2 name no machine or layer in their chunks. The layer a
 * version-3 file tags a chunk of *type with, with *type changed to its
 * version-3 type (the syscall layer's SYSDROPS is DROPS of that layer).
 */
uint16_t it_legacy_chunk_layer(uint16_t *type);
/* The manifest of a version-1 or -2 file: the entries of the layers named
 * in its HOST record ("block,nvme,syscall"), with version 0. Returns how
 * many were put in out (at most max); unknown names are left out. */
size_t it_legacy_manifest(const char *layers, struct it_layer_rec *out, size_t max);

#endif
