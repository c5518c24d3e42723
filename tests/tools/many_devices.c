// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * many_devices: a trace whose block events name NDEV devices, each with
 * one 4K read completed at the start and one SPAN seconds later: what a
 * damaged or forged file (or a very large machine) gives `iotrail report`
 * to analyse (tests/integration/test_errors.sh: refused with one line
 * beyond IT_DEVS_MAX devices; within it, the timelines' memory bounded).
 *
 *   many_devices OUT NDEV [SPAN]    (SPAN: seconds, default 36000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotrail/event.h"
#include "layer_table.h"
#include "tracefile.h"

#define START 1000000000ull

static int io(struct it_writer *w, uint32_t dev, uint64_t ts, uint64_t bio, uint64_t rq)
{
	struct it_event e[3];

	memset(e, 0, sizeof(e));
	for (int i = 0; i < 3; i++) {
		e[i].layer = IT_LAYER_BLOCK;
		e[i].dev = dev;
		e[i].ts_ns = ts + 50 * (uint64_t)i;
		e[i].bytes = 4096;
		e[i].op = IT_OP_READ;
	}
	e[0].type = IT_EV_BIO_QUEUE;
	e[0].id = bio;
	e[1].type = IT_EV_RQ_ISSUE;
	e[1].id = rq;
	e[1].aux = bio;
	e[2].type = IT_EV_RQ_COMPLETE;
	e[2].id = rq;
	return it_writer_add_events(w, IT_LAYER_BLOCK, e, 3);
}

int main(int argc, char **argv)
{
	struct it_host_rec host = { .hostname = "forged", .kernel = "synthetic", .clock = "monotonic",
				    .ncpus = 2, .start_monotonic_ns = START,
				    .command = "tests/tools/many_devices", .layers = "block" };
	struct it_layer_rec layers[1] = { *it_layer_builtin(IT_LAYER_BLOCK) };
	struct it_trace_head head = { .host = &host, .layers = layers, .nlayers = 1 };
	uint64_t drops[2] = { 0, 0 }, span;
	struct it_writer *w;
	char err[256];
	uint32_t ndev;
	int bad = 0;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: many_devices OUT NDEV [SPAN]\n");
		return 2;
	}
	ndev = (uint32_t)strtoul(argv[2], NULL, 10);
	span = (argc > 3 ? strtoull(argv[3], NULL, 10) : 36000) * 1000000000ull;
	w = it_writer_open(argv[1], &head, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "many_devices: failed to create %s: %s\n", argv[1], err);
		return 1;
	}
	for (uint32_t k = 0; k < ndev && !bad; k++) /* devices 8:0 on, one I/O each */
		bad = io(w, IT_MKDEV(8, 0) + k, START + 1000 + k, 0x100000 + k, 0x200000 + k);
	for (uint32_t k = 0; k < ndev && !bad; k++) /* and one more each, SPAN later */
		bad = io(w, IT_MKDEV(8, 0) + k, START + span + k, 0x300000 + k, 0x400000 + k);
	it_writer_set_drops(w, 0, IT_LAYER_BLOCK, drops, 2);
	if (it_writer_close(w, START + span + 1000000000ull) || bad) {
		fprintf(stderr, "many_devices: failed to write %s\n", argv[1]);
		return 1;
	}
	return 0;
}
