// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: a trace file, as `iotrail report` and `iotrail export`
 * meet it. The input is the file's bytes (any format version). Each run:
 *
 *   1. the events reader (it_reader_open): host, devices, layers manifest,
 *      machines and their clocks, every event batch, status, each
 *      (machine, layer)'s losses;
 *   2. a reader of every chunk of every machine and layer
 *      (it_reader_open_select with IT_ANY): each chunk handed out;
 *   3. the analysis as `report` runs it: the layers the trace has, the one
 *      pass, then the text (with --zones), JSON (with --events) and --log
 *      reports, into /dev/null;
 *   4. every exporter, into /dev/null (those of the analysis in step 3's pass;
 *      not those to a server).
 *
 * Nothing of the input may crash, leak or be undefined (ASan, UBSan); a
 * reason line on refusal is the expected outcome. The file is a memfd
 * read through /proc/self/fd, since the reader opens a path. The reader's
 * read-ahead thread is used for odd input lengths, the caller's thread for
 * even ones, so both paths are fuzzed.
 *
 * Mutated bytes almost always break a chunk's CRC, and the reader stops
 * at the first bad CRC: the decoders behind it would hardly be reached.
 * So the harness sets each chunk's CRC right before the reader sees the
 * file (fix_crcs), except for one input length in eight, which keeps the
 * CRC check itself fuzzed too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zlib.h>

#include "analyze/layer.h"
#include "export/exporter.h"
#include "tracefile.h"

static char path[64];
static int fd = -1;
static FILE *devnull;
static volatile uint64_t sink; /* keeps what is read from being optimised out */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fd = memfd_create("fuzz-trace", 0);
	devnull = fopen("/dev/null", "w");
	if (fd < 0 || !devnull) {
		perror("fuzz_trace: memfd_create or /dev/null");
		exit(1);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

/* Walks the chunks as the reader would and sets each one's payload_crc. */
static void fix_crcs(uint8_t *d, size_t size)
{
	struct it_file_header fh;
	size_t off = sizeof(fh), hlen;

	if (size < sizeof(fh))
		return;
	memcpy(&fh, d, sizeof(fh));
	hlen = fh.version >= 3 ? sizeof(struct it_chunk_header) : IT_CHUNK_HEADER_V2_SIZE;
	while (off + hlen <= size) {
		struct it_chunk_header h = { 0 };
		uLong crc;

		memcpy(&h, d + off, hlen);
		if (h.magic != IT_CHUNK_MAGIC || h.stored_len > size - off - hlen)
			return;
		h.payload_crc = 0;
		crc = crc32(crc32(0, (const Bytef *)&h, hlen), d + off + hlen, h.stored_len);
		h.payload_crc = (uint32_t)crc;
		memcpy(d + off, &h, hlen);
		off += hlen + h.stored_len;
	}
}

static void read_events(void)
{
	char err[256];
	struct it_reader *r = it_reader_open(path, err, sizeof(err));
	const struct it_event *evs;
	struct it_reader_status st;
	size_t n, nm;

	if (!r)
		return;
	const struct it_host_rec *h = it_reader_host(r);
	sink += h->ncpus + strlen(h->hostname) + strlen(h->layers) + strlen(h->command);
	const struct it_device_rec *devs = it_reader_devices(r, &n);
	for (size_t i = 0; i < n; i++)
		sink += strlen(devs[i].name) + (it_reader_device(r, devs[i].dev) != NULL);
	const struct it_layer_rec *layers = it_reader_layers(r, &n);
	for (size_t i = 0; i < n; i++)
		sink += strlen(layers[i].name) + (it_reader_layer(r, layers[i].id) != NULL);
	const struct it_machine *m = it_reader_machines(r, &nm);
	for (size_t i = 0; i < nm; i++) {
		const struct it_clock_rec *c = it_reader_clock(r, m[i].id);
		sink += m[i].id + strlen(m[i].host.kernel) + (c ? (uint64_t)c->offset_ns : 0);
	}
	while (it_reader_next(r, &evs, &n) == 1)
		for (size_t i = 0; i < n; i++)
			sink += evs[i].ts_ns ^ evs[i].id ^ evs[i].type;
	it_reader_status(r, &st);
	sink += st.events + st.chunks + st.dropped_total + st.missed + st.truncated;
	for (uint32_t i = 0; st.drops_per_cpu && i < st.ncpu; i++)
		sink += st.drops_per_cpu[i];
	for (size_t i = 0; i < nm; i++)
		for (uint16_t l = 0; l < 8; l++) {
			struct it_losses lo;

			it_reader_losses(r, m[i].id, l, &lo);
			sink += lo.total + lo.missed;
			for (uint32_t c = 0; lo.known && c < lo.ncpu; c++)
				sink += lo.per_cpu[c];
		}
	sink += strlen(it_reader_error(r) ? it_reader_error(r) : "");
	it_reader_close(r);
}

static void read_all_chunks(void)
{
	static const struct it_select any = { IT_ANY, IT_ANY, IT_ANY };
	char err[256];
	struct it_reader *r = it_reader_open_select(path, &any, 1, err, sizeof(err));
	struct it_chunk c;

	if (!r)
		return;
	while (it_reader_next_chunk(r, &c) == 1) {
		sink += c.type + c.machine + c.layer + c.count + c.len;
		if (c.len)
			sink += ((const uint8_t *)c.data)[0] + ((const uint8_t *)c.data)[c.len - 1];
	}
	it_reader_close(r);
}

static void analyse(void)
{
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT, .zones = true,
				   .events = true };
	uint16_t types[16];
	size_t ntypes = it_analysis_chunk_types(types, 16);
	char err[256];
	struct it_reader *rd = it_reader_open_records(path, types, ntypes, err, sizeof(err));
	const struct it_analysis_layer *lister;
	struct it_reader_status st;
	struct it_analysis *an;
	struct it_pass_info info;

	/* every key: the grouping code sees every field */
	if (it_parse_group_keys("op,size,dev,comm,pid,role", &o.analyzer, err, sizeof(err)))
		abort();
	if (!rd)
		return;
	info = (struct it_pass_info){ .path = path, .host = it_reader_host(rd), .opts = &o,
				      .layers = it_pass_layers(rd) };
	info.devs = it_reader_devices(rd, &info.ndevs);
	an = it_analysis_new(&info);
	/* the exporters of the analysis (Perfetto, CSV of the layers) listen
	 * on its bus; those to a server (no open: ClickHouse) need one */
	void *xs[16] = { 0 };
	if (an) {
		info.bus = it_analysis_bus(an);
		for (size_t i = 0; i < it_nexporters && i < 16; i++)
			if (it_exporters[i]->analysis && it_exporters[i]->open)
				xs[i] = it_exporters[i]->open(devnull, &info);
	}
	if (an && !it_analysis_run(an, rd, err, sizeof(err))) {
		struct it_report_ctx ctx = { .path = path, .host = info.host, .devs = info.devs,
					     .ndevs = info.ndevs, .status = &st, .opts = &o };

		it_reader_status(rd, &st);
		it_analysis_report_text(an, devnull, &ctx);
		it_analysis_report_json(an, devnull, &ctx, true);
		if (it_analysis_lists(an, &lister)) {
			o.log = true;
			it_analysis_report_log(an, devnull, &ctx);
		}
		for (size_t i = 0; i < it_nexporters && i < 16; i++)
			if (xs[i])
				sink += (uint64_t)(it_exporters[i]->finish_analysis ?
					 it_exporters[i]->finish_analysis(xs[i], an) :
					 it_exporters[i]->finish(xs[i]));
	}
	for (size_t i = 0; i < it_nexporters && i < 16; i++)
		if (xs[i])
			it_exporters[i]->free(xs[i]);
	it_analysis_free(an);
	it_reader_close(rd);
}

static void export_all(void)
{
	char err[256];

	for (size_t i = 0; i < it_nexporters; i++) {
		const struct it_exporter *x = it_exporters[i];
		if (x->analysis)
			continue; /* fed by the analysis, in analyse() */
		struct it_reader *rd = it_reader_open_records(path, x->chunks, x->nchunks, err,
							      sizeof(err));
		struct it_bus bus = { 0 };
		struct it_pass_info info = { .bus = &bus };
		void *self;

		if (!rd)
			continue;
		info.host = it_reader_host(rd);
		info.devs = it_reader_devices(rd, &info.ndevs);
		self = x->open(devnull, &info);
		if (self) {
			struct it_consumer c = { .chunks = x->chunks, .nchunks = x->nchunks,
						 .feed = x->feed, .self = self };

			if (!it_pass_run(rd, &c, 1, err, sizeof(err)))
				sink += (uint64_t)x->finish(self);
			x->free(self);
		}
		it_reader_close(rd);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size % 8 != 7)
		fix_crcs(copy, size);
	if (ftruncate(fd, 0) || (size && pwrite(fd, copy, size, 0) != (ssize_t)size))
		abort();
	free(copy);
	setenv("IOTRAIL_READAHEAD", size & 1 ? "1" : "0", 1);
	read_events();
	read_all_chunks();
	analyse();
	export_all();
	return 0;
}
