// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail report --zones`: per-zone activity of zoned devices (zones.h).
 * Text: one heat map row of 64 cells per 64 zones (so 64-1000 zones take
 * 1-16 lines), for written bytes, read bytes and resets, then a table of
 * the zones that saw anything. JSON: "zones":[{...}] with every zone.
 */
#include <string.h>

#include "analyze/json_writer.h"
#include "analyze/report.h"
#include "analyze/zones.h"

#define CELLS 64
static const char ramp[] = ".:-=+*#%@"; /* 9 levels, ' ' for none */

static uint32_t lbs_of(const struct it_report_input *in, uint32_t dev)
{
	const struct it_device_rec *d = it_report_dev_rec(in, dev);

	return d && d->logical_block_size ? d->logical_block_size : 512;
}

static const char *cond_name(uint8_t c)
{
	static const char *const n[] = { "not_wp", "empty", "implicit_open", "explicit_open",
					 "closed", "", "", "", "", "", "", "", "", "read_only",
					 "full", "offline" };
	return c < 16 && n[c][0] ? n[c] : "unknown";
}

static void mgmt_json(struct it_json *j, const char *name, const struct it_hist *h)
{
	static const double p[2] = { 50, 99 };
	uint64_t v[2];
	char key[32];

	snprintf(key, sizeof(key), "%s%s", name, strcmp(name, "finish") ? "s" : "es");
	it_json_kv_uint(j, key, h->count);
	snprintf(key, sizeof(key), "%s_latency_ns", name);
	it_hist_percentiles(h, p, 2, v);
	it_json_name(j, key);
	it_json_object_start(j);
	it_json_kv_uint(j, "count", h->count);
	it_json_kv_uint(j, "min", h->count ? h->min : 0);
	it_json_kv_uint(j, "avg", it_hist_avg(h));
	it_json_kv_uint(j, "p50", v[0]);
	it_json_kv_uint(j, "p99", v[1]);
	it_json_kv_uint(j, "max", h->max);
	it_json_object_end(j);
}

static void zone_json(struct it_json *j, const char *dev, uint32_t lbs, uint32_t idx,
		      const struct it_zone *z)
{
	it_json_object_start(j);
	it_json_kv_string(j, "dev", dev);
	it_json_kv_uint(j, "zone", idx);
	it_json_kv_uint(j, "start_lba", z->start * 512 / lbs);
	it_json_kv_uint(j, "len_lba", z->len * 512 / lbs);
	it_json_kv_uint(j, "capacity_lba", z->capacity * 512 / lbs);
	it_json_kv_string(j, "type", z->type == 1 ? "conventional" : z->type == 2 ?
			  "seq_write_required" : z->type == 3 ? "seq_write_preferred" : "unknown");
	it_json_kv_string(j, "cond_at_start", cond_name(z->cond_start));
	it_json_kv_uint(j, "wp_at_start_lba", z->wp_start * 512 / lbs);
	it_json_kv_uint(j, "reads", z->reads);
	it_json_kv_uint(j, "read_bytes", z->read_bytes);
	it_json_kv_uint(j, "writes", z->writes);
	it_json_kv_uint(j, "write_bytes", z->write_bytes);
	it_json_kv_uint(j, "appends", z->appends);
	it_json_kv_uint(j, "append_bytes", z->append_bytes);
	it_json_kv_uint(j, "errors", z->errors);
	for (int m = 0; m < IT_ZM_MAX; m++)
		mgmt_json(j, it_zm_names[m], &z->mgmt[m]);
	it_json_object_end(j);
}

void it_zones_report_json(struct it_json *j, const struct it_report_input *in)
{
	const struct it_zones *zs = it_analyzer_zones(in->a);
	char name[40];

	it_json_name(j, "zone_devices");
	it_json_array_start(j);
	for (uint32_t i = 0; zs && i < zs->ndevs; i++) {
		const struct it_zone_dev *d = &zs->devs[i];
		it_json_object_start(j);
		it_json_kv_string(j, "dev", it_report_dev_name(in, d->dev, name, sizeof(name)));
		it_json_kv_uint(j, "nr_zones", d->nzones);
		it_json_kv_uint(j, "reset_all", d->reset_all);
		it_json_kv_uint(j, "outside_zones", d->outside);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_name(j, "zones");
	it_json_array_start(j);
	for (uint32_t i = 0; zs && i < zs->ndevs; i++) {
		const struct it_zone_dev *d = &zs->devs[i];
		it_report_dev_name(in, d->dev, name, sizeof(name));
		for (uint32_t k = 0; k < d->nzones; k++)
			zone_json(j, name, lbs_of(in, d->dev), k, &d->zones[k]);
	}
	it_json_array_end(j);
}

/* ---- text ---- */

typedef uint64_t (*zone_value)(const struct it_zone *z);
static uint64_t v_written(const struct it_zone *z) { return z->write_bytes + z->append_bytes; }
static uint64_t v_read(const struct it_zone *z) { return z->read_bytes; }
static uint64_t v_resets(const struct it_zone *z) { return z->mgmt[IT_ZM_RESET].count; }

/* One heat map: a cell per zone; ' ' nothing, then 9 levels up to the max
 * (counts 1-9 are printed as digits when digits is set). */
static void heat_map(FILE *f, const struct it_zone_dev *d, const char *title, zone_value val,
		     bool digits)
{
	uint64_t max = 0;

	for (uint32_t k = 0; k < d->nzones; k++)
		if (val(&d->zones[k]) > max)
			max = val(&d->zones[k]);
	fprintf(f, "  %s (%s)\n", title, !max ? "none" : digits ?
		"count per zone; + above 9" : "' ' none, . low ... @ the busiest zone");
	if (!max)
		return;
	fprintf(f, "  %6s  ", "zone");
	for (uint32_t k = 0; k < CELLS && k < d->nzones; k += 8)
		fprintf(f, "%-8u", k); /* column ruler: offset within the row */
	fputc('\n', f);
	for (uint32_t k = 0; k < d->nzones; k++) {
		uint64_t v = val(&d->zones[k]);
		char c = ' ';
		if (k % CELLS == 0)
			fprintf(f, "  %6u |", k);
		if (v && digits)
			c = v > 9 ? '+' : (char)('0' + v);
		else if (v)
			c = ramp[(v * 9 - 1) / max < 9 ? (v * 9 - 1) / max : 8];
		fputc(c, f);
		if (k % CELLS == CELLS - 1 || k + 1 == d->nzones)
			fputs("|\n", f);
	}
}

static void active_table(FILE *f, const struct it_zone_dev *d, uint32_t lbs)
{
	unsigned shown = 0, active = 0;

	for (uint32_t k = 0; k < d->nzones; k++) {
		const struct it_zone *z = &d->zones[k];
		if (!z->reads && !z->writes && !z->appends && !z->mgmt[0].count &&
		    !z->mgmt[1].count && !z->mgmt[2].count && !z->mgmt[3].count)
			continue;
		if (!active++)
			fprintf(f, "  %6s %12s %8s %10s %8s %10s %7s %6s %9s %6s %5s %6s\n", "zone",
				"start_lba", "reads", "rd_KiB", "writes", "wr_KiB", "appends", "resets",
				"reset_avg", "finish", "open", "close");
		if (shown++ == 50)
			continue;
		fprintf(f, "  %6u %12llu %8llu %10llu %8llu %10llu %7llu %6llu %7.1fus %6llu %5llu %6llu\n",
			k, (unsigned long long)(z->start * 512 / lbs),
			(unsigned long long)z->reads, (unsigned long long)(z->read_bytes >> 10),
			(unsigned long long)z->writes, (unsigned long long)(z->write_bytes >> 10),
			(unsigned long long)z->appends, (unsigned long long)z->mgmt[IT_ZM_RESET].count,
			it_hist_avg(&z->mgmt[IT_ZM_RESET]) / 1e3,
			(unsigned long long)z->mgmt[IT_ZM_FINISH].count,
			(unsigned long long)z->mgmt[IT_ZM_OPEN].count,
			(unsigned long long)z->mgmt[IT_ZM_CLOSE].count);
	}
	if (shown > 50)
		fprintf(f, "  ... %u more active zones (see --json)\n", shown - 50);
	if (!active)
		fputs("  no zone saw I/O in this trace\n", f);
}

void it_zones_report_text(FILE *f, const struct it_report_input *in)
{
	const struct it_zones *zs = it_analyzer_zones(in->a);
	char name[40];

	if (!zs || !zs->ndevs) {
		fputs("\nZones: no zoned device in this trace (`iotrail record` writes the zone table "
		      "of zoned devices)\n", f);
		return;
	}
	for (uint32_t i = 0; i < zs->ndevs; i++) {
		const struct it_zone_dev *d = &zs->devs[i];
		uint64_t zlen = d->nzones ? d->zones[0].len : 0, zcap = d->nzones ? d->zones[0].capacity : 0;
		fprintf(f, "\nZones of %s: %u zones of %.1f MiB (capacity %.1f MiB)",
			it_report_dev_name(in, d->dev, name, sizeof(name)), d->nzones,
			zlen / 2048.0, zcap / 2048.0);
		if (d->reset_all)
			fprintf(f, ", %llu reset-all", (unsigned long long)d->reset_all);
		fputc('\n', f);
		heat_map(f, d, "written bytes (writes + appends)", v_written, false);
		heat_map(f, d, "read bytes", v_read, false);
		heat_map(f, d, "resets", v_resets, true);
		active_table(f, d, lbs_of(in, d->dev));
	}
}
