// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Writes a small version-3 trace with what no recorded fixture has, as a
 * seed for fuzz_trace: two machines (the second's HOST and a CLOCK in the
 * head), the block, NVMe, NVMe target and syscall layers, block trails
 * (Q, I, D, C) with NVMe commands on them (S, H, N, a discard range, a
 * controller record, a zone record), the target's commands on machine 1,
 * system calls with a path and a task record, losses carried in chunk
 * headers, and at close MISSED, DROPS (per layer) and END.
 *
 *   build/fuzz/seed_machines tests/fuzz/corpus/trace/v3-two-machines
 *
 * (built by make fuzz-build, with the plain compiler and libitcore.a).
 */
#include <stdio.h>
#include <string.h>

#include "iotrail/syscall.h"
#include "tracefile.h"

extern const struct it_layer_rec it_block_records, it_nvme_records, it_nvmet_records,
	it_syscall_records;

static struct it_event ev(uint8_t type, uint8_t layer, uint64_t ts, uint64_t id)
{
	return (struct it_event){ .type = type, .layer = layer, .ts_ns = ts, .id = id,
				  .dev = (259u << 20) | 1, .sector = 2048, .bytes = 4096, .pid = 42,
				  .tid = 42, .op = IT_OP_READ };
}

int main(int argc, char **argv)
{
	struct it_host_rec host = { .hostname = "initiator", .kernel = "6.1.0-test", .clock = "monotonic",
				    .ncpus = 2, .page_size = 4096, .start_monotonic_ns = 1000000000,
				    .start_realtime_ns = 1700000000000000000ull,
				    .command = "iotrail record -- fio job", .layers = "block,nvme,nvmet,syscall",
				    .hooks = "block=tp_btf;nvme=tp_btf;nvmet=tp_btf;syscall=tp_btf" };
	struct it_host_rec target = host;
	struct it_device_rec dev = { .dev = (259u << 20) | 1, .name = "nvme0n1", .model = "QEMU NVMe",
				     .scheduler = "none", .logical_block_size = 512,
				     .physical_block_size = 512, .nr_requests = 1023, .blk_mq = 1,
				     .zoned = 2, .nr_zones = 4, .size_sectors = 1 << 20,
				     .zone_sectors = 1 << 18 };
	struct it_layer_rec layers[] = { it_block_records, it_nvme_records, it_nvmet_records,
					 it_syscall_records };
	struct it_trace_head head = { .host = &host, .devs = &dev, .ndevs = 1, .layers = layers,
				      .nlayers = 4 };
	struct it_clock_rec clock = { .machine = 1, .ref_machine = 0, .offset_ns = -5000,
				      .uncertainty_ns = 800, .method = "ntp-like exchange, 16 samples" };
	uint64_t t = 1000100000, drops[2] = { 1, 2 };
	char err[256];
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: seed_machines OUT\n");
		return 2;
	}
	snprintf(target.hostname, sizeof(target.hostname), "target");
	snprintf(target.layers, sizeof(target.layers), "nvmet");
	struct it_writer *w = it_writer_open(argv[1], &head, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "seed_machines: %s\n", err);
		return 1;
	}
	rc |= it_writer_add_machine(w, 1, &target);
	rc |= it_writer_add_clock(w, &clock);

	struct it_event task = ev(IT_EV_TASK, IT_LAYER_BLOCK, t, 0);
	memcpy(task.comm, "fio", 4);
	struct it_event ctrl = ev(IT_EV_NVME_CTRL, IT_LAYER_NVME, t, 0);
	struct it_event zone = ev(IT_EV_ZONE_INFO, IT_LAYER_BLOCK, t, 0);
	rc |= it_writer_add_events(w, IT_LAYER_BLOCK, &task, 1);
	rc |= it_writer_add_events(w, IT_LAYER_BLOCK, &ctrl, 1);
	rc |= it_writer_add_events(w, IT_LAYER_BLOCK, &zone, 1);
	for (unsigned i = 0; i < 8; i++, t += 100000) {
		uint64_t bio = 0xffff888000001000ull + i * 64, rq = 0xffff888000100000ull + i * 256;
		struct it_event e[] = {
			ev(IT_EV_BIO_QUEUE, IT_LAYER_BLOCK, t, bio),
			ev(IT_EV_RQ_INSERT, IT_LAYER_BLOCK, t + 1000, rq),
			ev(IT_EV_NVME_SUBMIT, IT_LAYER_NVME, t + 1500, rq),
			ev(IT_EV_NVME_RANGE, IT_LAYER_NVME, t + 1600, rq),
			ev(IT_EV_RQ_ISSUE, IT_LAYER_BLOCK, t + 2000, rq),
			ev(IT_EV_NVME_SQ, IT_LAYER_NVME, t + 50000, rq),
			ev(IT_EV_NVME_COMPLETE, IT_LAYER_NVME, t + 51000, rq),
			ev(IT_EV_RQ_COMPLETE, IT_LAYER_BLOCK, t + 52000, rq),
		};
		e[1].aux = e[4].aux = bio;
		e[2].hwq = e[6].hwq = 1;
		e[2].tag = e[6].tag = (uint16_t)i;
		rc |= it_writer_add_events(w, IT_LAYER_BLOCK, e, sizeof(e) / sizeof(e[0]));
		struct it_event init = ev(IT_EV_NVMET_INIT, IT_LAYER_NVMET, t + 20000, rq + 1);
		struct it_event done = ev(IT_EV_NVMET_COMPLETE, IT_LAYER_NVMET, t + 40000, rq + 1);
		rc |= it_writer_add_record(w, 1, IT_LAYER_NVMET, IT_CHUNK_EVENTS, &init, sizeof(init));
		rc |= it_writer_add_record(w, 1, IT_LAYER_NVMET, IT_CHUNK_EVENTS, &done, sizeof(done));
		it_writer_set_lost(w, 0, IT_LAYER_BLOCK, i);
	}
	rc |= it_writer_flush(w);

	struct { struct it_sys_path p; char comps[16]; } path = {
		.p = { .rec = IT_SREC_PATH, .len = 10, .ftype = 1, .pflags = IT_PATHF_MATCH, .ncomp = 2,
		       .dev = (259u << 20) | 1, .ino = 12, .tag_ts = t },
		.comps = "data\0mnt\0",
	};
	struct it_sys_task st = { .rec = IT_SREC_TASK, .pid = 42, .tid = 42, .ppid = 1, .ts = t,
				  .comm = "fio" };
	struct it_sys_event call = { .rec = IT_SREC_CALL, .call = 4 /* pread64 */, .ftype = 1,
				     .pid = 42, .tid = 42, .ppid = 1, .fd = 3, .dev = (259u << 20) | 1,
				     .ts_enter = t + 10, .ts_exit = t + 60000, .ret = 4096,
				     .count = 4096, .ino = 12, .tag_ts = t };
	rc |= it_writer_add_record(w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSSIDE, &st, sizeof(st));
	rc |= it_writer_add_record(w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSSIDE, &path,
				   sizeof(path.p) + path.p.len);
	rc |= it_writer_add_record(w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSCALLS, &call, sizeof(call));
	rc |= it_writer_set_drops(w, 0, IT_LAYER_BLOCK, drops, 2);
	rc |= it_writer_set_drops(w, 0, IT_LAYER_SYSCALL, drops, 2);
	rc |= it_writer_set_missed(w, 0, IT_LAYER_BLOCK, 3);
	rc |= it_writer_close(w, t + 1000000);
	if (rc) {
		fprintf(stderr, "seed_machines: writing %s failed (%d)\n", argv[1], rc);
		return 1;
	}
	return 0;
}
