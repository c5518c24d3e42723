// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail export --format csv --what zones` on a synthetic zoned trace
 * (no fixture has a zoned device): three zones, a reset and a write on
 * zone 1, a read and an append on zone 2, written through the trace
 * writer, read back through the analysis layers as export.c does, and
 * the rows checked against the I/Os put in.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/layer.h"
#include "export/exporter.h"
#include "harness.h"
#include "layers/fabric/clock.h"
#include "layers/fs/f2fs_analysis.h"
#include "layer_table.h"
#include "tracefile.h"
#include "unit/synth.h"

#define DEV_Z IT_MKDEV(259, 3)

static struct it_event zone(uint32_t idx, uint64_t start, uint64_t len)
{
	return ZINFO(DEV_Z, idx, start, len);
}

/* The zones CSV of evs (as one block-layer trace) into out; its rows. */
static int64_t export_zones(const struct it_event *evs, size_t n, FILE *out, char *err)
{
	const struct it_exporter *x = it_exporter_find_kind("csv", "zones");
	struct it_host_rec host = { .ncpus = 1, .page_size = 4096, .start_monotonic_ns = 1 };
	struct it_device_rec dev = { .dev = DEV_Z, .name = "nullb0", .logical_block_size = 512,
				     .blk_mq = 1, .zoned = 2, .nr_zones = 3 };
	struct it_trace_head head = { .host = &host, .devs = &dev, .ndevs = 1,
				      .layers = it_layer_builtin(IT_LAYER_BLOCK), .nlayers = 1 };
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT, .zones = true };
	char path[] = "/tmp/iotrail-test-zones-XXXXXX";
	uint16_t types[16];
	int64_t rows = -1;
	int fd = mkstemp(path);

	strcpy(host.clock, "monotonic");
	strcpy(host.layers, "block");
	if (fd < 0 || !x)
		return -1;
	close(fd);
	struct it_writer *w = it_writer_open(path, &head, err, 256);
	if (!w || it_writer_add_events(w, IT_LAYER_BLOCK, evs, n) || it_writer_close(w, 2000)) {
		unlink(path);
		return -1;
	}
	size_t ntypes = it_analysis_chunk_types(types, 16);
	struct it_reader *rd = it_reader_open_records(path, types, ntypes, err, 256);
	if (rd) {
		struct it_pass_info info = { .path = path, .host = it_reader_host(rd), .opts = &o,
					     .layers = it_pass_layers(rd) };
		info.devs = it_reader_devices(rd, &info.ndevs);
		struct it_analysis *an = it_analysis_new(&info);
		void *self = NULL;

		if (an) {
			info.bus = it_analysis_bus(an);
			self = x->open(out, &info);
		}
		if (self && !it_analysis_run(an, rd, err, 256))
			rows = x->finish_analysis(self, an);
		if (self)
			x->free(self);
		it_analysis_free(an);
		it_reader_close(rd);
	}
	unlink(path);
	return rows;
}

TEST(export_zones)
{
	const struct it_event evs[] = {
		zone(0, 0, 1024), zone(1, 1024, 1024), zone(2, 2048, 1024),
		Q(100, 0xb1, DEV_Z, 1024, 0, IT_OP_ZONE_RESET),
		D(110, 0x71, 0xb1, DEV_Z, 1024, 0, IT_OP_ZONE_RESET),
		C(400, 0x71, DEV_Z, 0),
		Q(500, 0xb2, DEV_Z, 1024, 65536, IT_OP_WRITE),
		D(510, 0x72, 0xb2, DEV_Z, 1024, 65536, IT_OP_WRITE),
		C(600, 0x72, DEV_Z, 65536),
		Q(700, 0xb3, DEV_Z, 2100, K4, IT_OP_READ),
		D(710, 0x73, 0xb3, DEV_Z, 2100, K4, IT_OP_READ),
		C(800, 0x73, DEV_Z, K4),
		Q(900, 0xb4, DEV_Z, 2048, K4, IT_OP_ZONE_APPEND),
		D(910, 0x74, 0xb4, DEV_Z, 2048, K4, IT_OP_ZONE_APPEND),
		C(990, 0x74, DEV_Z, K4),
	};
	char *text = NULL, err[256] = "";
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!ASSERT_NOT_NULL(out, "open_memstream"))
		return;
	int64_t rows = export_zones(evs, sizeof(evs) / sizeof(evs[0]), out, err);
	fclose(out);
	ASSERT_EQ(rows, 3, err);
	/* header, then per zone: device,dev,zone,start,len,capacity,type,cond,
	 * wp,reads,read_bytes,writes,write_bytes,appends,append_bytes,errors,
	 * resets,finishes,opens,closes,reset_avg_ns */
	const char *want =
		"device,dev,zone,start_sector,len_sectors,capacity_sectors,type,cond_at_start,"
		"wp_at_start,reads,read_bytes,writes,write_bytes,appends,append_bytes,errors,resets,"
		"finishes,opens,closes,reset_avg_ns\n"
		"nullb0,259:3,0,0,1024,1024,2,1,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
		"nullb0,259:3,1,1024,1024,1024,2,1,1024,0,0,1,65536,0,0,0,1,0,0,0,300\n"
		"nullb0,259:3,2,2048,1024,1024,2,1,2048,1,4096,0,0,1,4096,0,0,0,0,0,0\n";
	ASSERT_STREQ(text ? text : "", want, "the zones' rows");
	free(text);
}

/* One block I/O through the Perfetto exporter on machine 0's bus, then one
 * on machine 1's (next_machine, as export.c drives it): machine 1's I/O
 * is on a process of its own, named by machine and host, moved by its
 * clock's offset as a whole (its stages keep their length). */
TEST(export_perfetto_machines)
{
	const struct it_exporter *x = it_exporter_find("perfetto");
	struct it_host_rec host0 = { .hostname = "initiator" }, host1 = { .hostname = "target" };
	struct it_bus bus0 = { 0 }, bus1 = { 0 };
	struct it_pass_info info0 = { .host = &host0, .bus = &bus0,
				      .layers = 1u << IT_LAYER_BLOCK };
	struct it_clock_est clock = { .method = IT_CLOCK_IO, .offset_ns = -500 };
	struct it_pass_info info1 = { .host = &host1, .bus = &bus1, .machine = 1,
				      .layers = 1u << IT_LAYER_BLOCK, .clock_est = &clock };
	struct it_trail t0 = { .ts = { [IT_PT_Q] = 1000, [IT_PT_D] = 1500, [IT_PT_C] = 3000 },
			       .dev = IT_MKDEV(8, 0), .op = IT_OP_READ };
	struct it_trail t1 = { .ts = { [IT_PT_Q] = 10000, [IT_PT_D] = 10100, [IT_PT_C] = 10400 },
			       .dev = IT_MKDEV(8, 0), .op = IT_OP_WRITE };
	struct it_bus_trail m0 = { .t = &t0 }, m1 = { .t = &t1 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	void *self;

	if (!ASSERT_NOT_NULL(x, "the perfetto exporter") || !ASSERT_NOT_NULL(out, "open_memstream"))
		return;
	self = x->open(out, &info0);
	if (!ASSERT_NOT_NULL(self, "open"))
		return;
	it_bus_publish(&bus0, IT_BUS_TRAIL_DONE, &m0);
	ASSERT_EQ(x->next_machine(self, &info1), 0, "next_machine");
	it_bus_publish(&bus1, IT_BUS_TRAIL_DONE, &m1);
	ASSERT_EQ(x->finish(self), 2, "records: an I/O of each machine");
	x->free(self);
	fclose(out);
	text = text ? text : strdup("");
	ASSERT_TRUE(strstr(text, "\"pid\":100001,\"tid\":100001,\"args\":{\"name\":\"block 8:0\"}"),
		    "machine 0's device: its process as before");
	ASSERT_TRUE(strstr(text, "{\"ph\":\"X\",\"cat\":\"block\",\"name\":\"read\",\"pid\":100001,"
				 "\"tid\":100001000,\"ts\":1.000,\"dur\":2.000}"),
		    "machine 0's I/O on its clock");
	ASSERT_TRUE(strstr(text, "\"pid\":500002,\"tid\":500002,\"args\":{\"name\":\"block 8:0 "
				 "(m1 target)\"}"),
		    "machine 1's device: a process of its own, named by machine and host");
	ASSERT_TRUE(strstr(text, "{\"ph\":\"X\",\"cat\":\"block\",\"name\":\"write\",\"pid\":500002,"
				 "\"tid\":500002000,\"ts\":9.500,\"dur\":0.400}"),
		    "machine 1's I/O moved by its clock's offset (-500 ns), Q2C kept");
	ASSERT_TRUE(strstr(text, "{\"ph\":\"X\",\"cat\":\"stage\",\"name\":\"Q2D\",\"pid\":500002,"
				 "\"tid\":500002000,\"ts\":9.500,\"dur\":0.100}"),
		    "its Q2D moved with it");
	free(text);
}

/* Probe rows through the Perfetto exporter: two overlapping spans of one
 * label in one process (two threads) on two threads of its process,
 * "work" and "work 2"; an event an instant with its arguments; a span's
 * begin and end hits not drawn. An F2FS round without its end: an
 * instant "gc (no end)" on the device's process. */
TEST(export_perfetto_probes_f2fs)
{
	const struct it_exporter *x = it_exporter_find("perfetto");
	struct it_host_rec host = { .hostname = "h" };
	struct it_bus bus = { 0 };
	struct it_pass_info info = { .host = &host, .bus = &bus };
	uint64_t args[2] = { 7, (uint64_t)-1 };
	struct it_bus_probe rows[] = {
		{ .kind = IT_PROBE_BEGIN, .label = "work__start", .ts_ns = 1000, .pid = 5, .tid = 5 },
		{ .kind = IT_PROBE_EVENT, .label = "tick", .ts_ns = 1500, .pid = 5, .tid = 5,
		  .nargs = 2, .args = args },
		{ .kind = IT_PROBE_SPAN, .label = "work", .ts_ns = 1000, .duration_ns = 2000,
		  .pid = 5, .tid = 5, .nargs = 1, .args = args },
		{ .kind = IT_PROBE_SPAN, .label = "work", .ts_ns = 2000, .duration_ns = 2000,
		  .pid = 5, .tid = 6 },
		{ .kind = IT_PROBE_END, .label = "work__done", .ts_ns = 4000, .pid = 5, .tid = 6 },
	};
	struct it_bus_f2fs gc = { .kind = IT_F2FS_ROW_GC, .dev = IT_MKDEV(254, 0), .start_ns = 5000,
				  .tid = 9, .foreground = true };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	void *self;

	if (!ASSERT_NOT_NULL(x, "the perfetto exporter") || !ASSERT_NOT_NULL(out, "open_memstream"))
		return;
	self = x->open(out, &info);
	if (!ASSERT_NOT_NULL(self, "open"))
		return;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		it_bus_publish(&bus, IT_BUS_PROBE, &rows[i]);
	it_bus_publish(&bus, IT_BUS_F2FS, &gc);
	ASSERT_EQ(x->finish(self), 4, "records: the event, two spans, the round");
	x->free(self);
	fclose(out);
	text = text ? text : strdup("");
	ASSERT_TRUE(strstr(text, "\"args\":{\"name\":\"probes pid 5\"}"), "the process's name");
	ASSERT_TRUE(strstr(text, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"probe\",\"name\":\"tick\","
				 "\"pid\":600000,\"tid\":700000000000,\"ts\":1.500,"
				 "\"args\":{\"tid\":5,\"arg0\":7,\"arg1\":-1}}"),
		    "the event: an instant with its arguments, signed");
	ASSERT_TRUE(strstr(text, "{\"ph\":\"X\",\"cat\":\"probe\",\"name\":\"work\",\"pid\":600000,"
				 "\"tid\":700000000064,\"ts\":1.000,\"dur\":2.000,"
				 "\"args\":{\"tid\":5,\"arg0\":7}}"),
		    "the first span on the label's thread");
	ASSERT_TRUE(strstr(text, "{\"ph\":\"X\",\"cat\":\"probe\",\"name\":\"work\",\"pid\":600000,"
				 "\"tid\":700000000065,\"ts\":2.000,\"dur\":2.000,"
				 "\"args\":{\"tid\":6}}"),
		    "the overlapping one on a second thread");
	ASSERT_TRUE(strstr(text, "\"tid\":700000000065,\"args\":{\"name\":\"work 2\"}"),
		    "named work 2");
	ASSERT_TRUE(!strstr(text, "work__start") && !strstr(text, "work__done"),
		    "begin and end hits: their span's slice");
	ASSERT_TRUE(strstr(text, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"f2fs\",\"name\":\"gc (no end)\","
				 "\"pid\":600001,"),
		    "a round without its end: an instant");
	ASSERT_TRUE(strstr(text, "\"args\":{\"name\":\"f2fs 254:0\"}"), "on its device's process");
	free(text);
}
