// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Every exporter of `iotrail export`, in --help order. To add one: write
 * its struct it_exporter (exporter.h; src/export/NAME.c) and list it here.
 */
#include <string.h>

#include "export/exporter.h"

extern const struct it_exporter it_export_csv;
extern const struct it_exporter it_export_clickhouse;

const struct it_exporter *const it_exporters[] = {
	&it_export_csv,
	&it_export_clickhouse,
};

const size_t it_nexporters = sizeof(it_exporters) / sizeof(it_exporters[0]);

const struct it_exporter *it_exporter_find(const char *name)
{
	for (size_t i = 0; i < it_nexporters; i++)
		if (!strcmp(it_exporters[i]->name, name))
			return it_exporters[i];
	return NULL;
}
