// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Every exporter of `iotrail export`, in --help order. To add one: write
 * its struct it_exporter (exporter.h; src/export/NAME.c) and list it here.
 */
#include <stdio.h>
#include <string.h>

#include "export/exporter.h"

extern const struct it_exporter it_export_csv, it_export_csv_trails, it_export_csv_calls,
	it_export_csv_zones, it_export_csv_fabric, it_export_perfetto, it_export_clickhouse,
	it_export_csv_probes, it_export_csv_fs;

const struct it_exporter *const it_exporters[] = {
	&it_export_csv,
	&it_export_csv_trails,
	&it_export_csv_calls,
	&it_export_csv_zones,
	&it_export_csv_fabric,
	&it_export_csv_probes,
	&it_export_csv_fs,
	&it_export_perfetto,
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

const struct it_exporter *it_exporter_find_kind(const char *name, const char *kind)
{
	for (size_t i = 0; i < it_nexporters; i++) {
		const struct it_exporter *x = it_exporters[i];

		if (!strcmp(x->name, name) &&
		    (!kind || (x->kind && !strcmp(x->kind, kind))))
			return x;
	}
	return NULL;
}

const char *it_export_dev_name(const struct it_pass_info *info, uint32_t dev, char *buf,
			       size_t len)
{
	for (size_t i = 0; i < info->ndevs; i++)
		if (info->devs[i].dev == dev && info->devs[i].name[0]) {
			snprintf(buf, len, "%.*s", (int)sizeof(info->devs[i].name), info->devs[i].name);
			return buf;
		}
	if (!dev)
		snprintf(buf, len, "admin");
	else
		snprintf(buf, len, "%u:%u", IT_DEV_MAJOR(dev), IT_DEV_MINOR(dev));
	return buf;
}
