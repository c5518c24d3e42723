// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* NVMe-oF endpoints: read from a made-up sysfs and configfs, mapped from
 * an initiator's controller to the target machine serving it, and kept
 * per machine through the trace file and the merge. */
#include "harness.h"
#include "layer_table.h"
#include "nvmf.h"
#include "trace_merge.h"
#include "tracefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w"))) {
		fputs(text, f);
		fclose(f);
	}
}

static void mkdirf(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
	snprintf(buf, len, fmt, a, b);
	mkdir(buf, 0700);
}

static struct it_nvmf_rec ctrl(const char *tr, const char *addr, const char *svc, const char *nqn)
{
	struct it_nvmf_rec r = { .role = IT_NVMF_HOST_CTRL };

	snprintf(r.transport, sizeof(r.transport), "%s", tr);
	snprintf(r.traddr, sizeof(r.traddr), "%s", addr);
	snprintf(r.trsvcid, sizeof(r.trsvcid), "%s", svc);
	snprintf(r.nqn, sizeof(r.nqn), "%s", nqn);
	return r;
}

static struct it_nvmf_rec port(const char *tr, const char *addr, const char *svc, const char *nqn)
{
	struct it_nvmf_rec r = ctrl(tr, addr, svc, nqn);

	r.role = IT_NVMF_TARGET_PORT;
	return r;
}

TEST(nvmf_collect_sysfs_and_configfs)
{
	char root[] = "/tmp/it-nvmf.XXXXXX", d[300], nvme[100], ports[100];
	struct it_nvmf_rec *r;
	long n;

	if (!mkdtemp(root))
		SKIP("no temporary directory");
	mkdirf(nvme, sizeof(nvme), "%s/class%s", root, "");
	mkdirf(d, sizeof(d), "%s/nvme0", nvme, "");
	put(d, "transport", "tcp\n");
	put(d, "address", "traddr=10.0.9.2,trsvcid=4420,src_addr=10.0.9.1\n");
	put(d, "subsysnqn", "nqn.2024-01.io.iotrail:a\n");
	mkdirf(d, sizeof(d), "%s/nvme1", nvme, ""); /* a local disk: not a fabric */
	put(d, "transport", "pcie\n");
	put(d, "address", "0000:01:00.0\n");
	mkdirf(d, sizeof(d), "%s/nvme-subsys0", nvme, "");
	mkdirf(ports, sizeof(ports), "%s/ports%s", root, "");
	mkdirf(d, sizeof(d), "%s/1", ports, "");
	put(d, "addr_trtype", "tcp\n");
	put(d, "addr_traddr", "0.0.0.0\n");
	put(d, "addr_trsvcid", "4421\n");
	mkdirf(d, sizeof(d), "%s/1/subsystems", ports, "");
	mkdirf(d, sizeof(d), "%s/1/subsystems/nqn.x:b", ports, "");

	n = it_nvmf_collect(nvme, ports, &r);
	ASSERT_EQ(n, 2, "one fabric controller, one port with one subsystem");
	if (n == 2) {
		const struct it_nvmf_rec *c = r[0].role == IT_NVMF_HOST_CTRL ? &r[0] : &r[1];
		const struct it_nvmf_rec *p = c == &r[0] ? &r[1] : &r[0];

		ASSERT_EQ(c->id, 0, "controller instance");
		ASSERT_STREQ(c->transport, "tcp", "controller transport");
		ASSERT_STREQ(c->traddr, "10.0.9.2", "controller address (src_addr left out)");
		ASSERT_STREQ(c->trsvcid, "4420", "controller service id");
		ASSERT_STREQ(c->nqn, "nqn.2024-01.io.iotrail:a", "controller subsystem");
		ASSERT_EQ(p->role, IT_NVMF_TARGET_PORT, "port role");
		ASSERT_EQ(p->id, 1, "port id");
		ASSERT_STREQ(p->traddr, "0.0.0.0", "port address");
		ASSERT_STREQ(p->nqn, "nqn.x:b", "port subsystem");
	}
	free(r);
	n = it_nvmf_collect("/nonexistent/a", "/nonexistent/b", &r);
	ASSERT_EQ(n, 0, "no nvme, no nvmet: no records");
	ASSERT_TRUE(r == NULL, "nothing allocated");
	snprintf(d, sizeof(d), "rm -rf %s", root);
	ASSERT_EQ(system(d), 0, "cleanup");
}

TEST(nvmf_map_controller_to_machine)
{
	struct it_nvmf_rec m1[] = { port("tcp", "10.0.9.2", "4420", "nqn.a"),
				    port("tcp", "10.0.9.2", "4420", "nqn.b") };
	struct it_nvmf_rec m2[] = { port("tcp", "10.0.8.3", "4420", "nqn.a") };
	struct it_nvmf_rec m3[] = { port("tcp", "0.0.0.0", "4421", "nqn.c") };
	struct it_nvmf_rec m0[] = { port("tcp", "10.0.9.2", "4420", "nqn.a") }; /* loopback */
	struct it_nvmf_machine ms[] = { { 0, m0, 1 }, { 1, m1, 2 }, { 2, m2, 1 }, { 3, m3, 1 } };
	struct it_nvmf_rec c;

	c = ctrl("tcp", "10.0.9.2", "4420", "nqn.a");
	ASSERT_EQ(it_nvmf_map(&c, ms, 4), 1, "address, service and subsystem: machine 1");
	c = ctrl("tcp", "10.0.8.3", "4420", "nqn.a");
	ASSERT_EQ(it_nvmf_map(&c, ms, 4), 2, "the same subsystem name at another address: machine 2");
	c = ctrl("tcp", "10.0.7.7", "4421", "nqn.c");
	ASSERT_EQ(it_nvmf_map(&c, ms, 4), 3, "a port on every address, the only one: machine 3");
	c = ctrl("tcp", "10.0.9.2", "4420", "nqn.z");
	ASSERT_EQ(it_nvmf_map(&c, ms, 4), IT_NVMF_UNKNOWN, "a subsystem no machine exports");
	c = ctrl("rdma", "10.0.9.2", "4420", "nqn.a");
	ASSERT_EQ(it_nvmf_map(&c, ms, 4), IT_NVMF_UNKNOWN, "another transport");
	c = ctrl("tcp", "10.0.9.2", "4421", "nqn.a");
	ASSERT_EQ(it_nvmf_map(&c, ms, 4), IT_NVMF_UNKNOWN, "another service id");
	ASSERT_EQ(it_nvmf_map(&c, NULL, 0), IT_NVMF_UNKNOWN, "no machine recorded");

	/* two machines with the same port: the initiator cannot tell */
	struct it_nvmf_machine twins[] = { { 1, m2, 1 }, { 2, m2, 1 } };
	c = ctrl("tcp", "10.0.8.3", "4420", "nqn.a");
	ASSERT_EQ(it_nvmf_map(&c, twins, 2), IT_NVMF_AMBIGUOUS, "two alike");
	/* an exact address beats another machine's wildcard */
	struct it_nvmf_rec wild[] = { port("tcp", "::", "4420", "nqn.a") };
	struct it_nvmf_machine mixed[] = { { 1, wild, 1 }, { 2, m2, 1 } };
	ASSERT_EQ(it_nvmf_map(&c, mixed, 2), 2, "exact before wildcard");
	/* a port record is not a controller */
	c.role = IT_NVMF_TARGET_PORT;
	ASSERT_EQ(it_nvmf_map(&c, ms, 4), IT_NVMF_UNKNOWN, "only controllers are mapped");
}

/* A one-layer trace with one event and the given NVMF records. */
static int write_nvmf_trace(const char *path, const char *host, const struct it_nvmf_rec *r,
			    size_t n)
{
	struct it_host_rec h = { .ncpus = 1, .start_monotonic_ns = 1000 };
	struct it_device_rec d = { .dev = 7 << 20, .name = "loop0" };
	struct it_trace_head head = { .host = &h, .devs = &d, .ndevs = 1,
				      .layers = it_layer_builtin(IT_LAYER_BLOCK), .nlayers = 1 };
	struct it_event e = { .ts_ns = 2000, .type = IT_EV_RQ_COMPLETE, .dev = 7 << 20,
			      .layer = IT_LAYER_BLOCK };
	char err[200];
	struct it_writer *w;

	snprintf(h.hostname, sizeof(h.hostname), "%s", host);
	if (!(w = it_writer_open(path, &head, err, sizeof(err))))
		return -1;
	if ((n && it_writer_add_nvmf(w, 0, r, n)) || it_writer_add_events(w, IT_LAYER_BLOCK, &e, 1)) {
		it_writer_abort(w);
		return -1;
	}
	return it_writer_close(w, 3000);
}

TEST(nvmf_kept_per_machine_through_the_merge)
{
	char dir[] = "/tmp/it-nvmf-merge.XXXXXX", local[64], t1[64], t2[64], out[64], err[300];
	struct it_nvmf_rec ini[] = { ctrl("tcp", "10.0.9.2", "4420", "nqn.a"),
				     ctrl("tcp", "10.0.8.3", "4420", "nqn.a") };
	struct it_nvmf_rec p1[] = { port("tcp", "10.0.9.2", "4420", "nqn.a") };
	struct it_merge_target t[2] = { { .clock.uncertainty_ns = 1 }, { .clock.uncertainty_ns = 1 } };
	struct it_merge_result res[2];
	const struct it_machine *ms;
	struct it_reader *r;
	size_t n;

	if (!mkdtemp(dir))
		SKIP("no temporary directory");
	snprintf(local, sizeof(local), "%s/local", dir);
	snprintf(t1, sizeof(t1), "%s/t1", dir);
	snprintf(t2, sizeof(t2), "%s/t2", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	t[0].path = t1;
	t[1].path = t2;
	ASSERT_EQ(write_nvmf_trace(local, "ini", ini, 2), 0, "initiator trace");
	ASSERT_EQ(write_nvmf_trace(t1, "tgt1", p1, 1), 0, "target 1 trace");
	ASSERT_EQ(write_nvmf_trace(t2, "tgt2", NULL, 0), 0, "target 2 trace, no NVMF (older)");
	ASSERT_EQ(it_trace_merge(out, local, t, 2, res, err, sizeof(err)), 0, err);
	r = it_reader_open(out, err, sizeof(err));
	if (!ASSERT_NOT_NULL(r, err))
		return;
	ms = it_reader_machines(r, &n);
	ASSERT_EQ(n, 3, "three machines");
	if (n == 3) {
		ASSERT_EQ(ms[0].nnvmf, 2, "machine 0's controllers");
		ASSERT_TRUE(ms[0].nvmf && !strcmp(ms[0].nvmf[1].traddr, "10.0.8.3"), "kept as written");
		ASSERT_EQ(ms[1].nnvmf, 1, "machine 1's port");
		ASSERT_TRUE(ms[1].nvmf && ms[1].nvmf[0].role == IT_NVMF_TARGET_PORT, "a port");
		ASSERT_TRUE(!ms[2].nvmf && !ms[2].nnvmf, "machine 2 has none");
	}
	it_reader_close(r);
	unlink(local);
	unlink(t1);
	unlink(t2);
	unlink(out);
	rmdir(dir);
}
