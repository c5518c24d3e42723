// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * split_trace: a single-machine NVMe/TCP loopback trace as the two-machine
 * file `iotrail record --target` would have written, with a known clock
 * between them: the ground truth of the cross-machine join and the clock
 * estimate (tests/integration/test_clock_split.sh).
 *
 *   split_trace IN OUT [--offset NS] [--drift-ppm PPM] [--exchange-error NS]
 *               [--exchange-uncertainty NS] [--no-clock] [--no-nvmet] [--chunk N]
 *               [--repeat N] [--decoy [--real-port ADDR]] [--store-clock [--stored-error NS]]
 *
 * Machine 0 keeps the initiator's events; machine 1 gets the target's: the
 * nvmet and nvmet-tcp layers', and the block events of the disks behind
 * the target's namespaces (the devices its nvmet events name). Machine 1's
 * clock reads t + NS + PPM * (t - start) / 1e6 where machine 0's reads t
 * (start: the recording's start), so the true offset (machine 0 = machine
 * 1 + offset) is -NS at the start and the target's clock gains PPM. Its
 * CLOCK chunk (the agent exchange) says the true offset at the start plus
 * --exchange-error (default 0), give or take --exchange-uncertainty
 * (default 50 us); --no-clock leaves it out, --no-nvmet leaves out the
 * target's nvmet events (no command can match). Records are written
 * machine 0's first, then machine 1's, as a merge does, in chunks of
 * --chunk events (default 64), as a recorder flushing often would.
 * --repeat N writes the recording N times one after another (each copy a
 * second after the one before ends): a longer trace for timing the
 * analysis, not ground truth.
 *
 * --decoy writes three machines: machine 1 a decoy target (the target's
 * events without its nvmet ones, on the same clock: no command of it can
 * match) and machine 2 the real target, each with NVMF records (nvmf.h):
 * machine 0's controller nvme0 connected over tcp to 127.0.0.1:4420,
 * subsystem nqn.2024-01.io.iotrail:split; machine 1's port exports that
 * subsystem at 10.99.0.1:4420, machine 2's at 127.0.0.1:4420. The join
 * must take machine 2 for nvme0 by its address (the first other machine
 * would be the decoy). --real-port puts machine 2's port at ADDR instead:
 * another address, and no recorded machine serves nvme0.
 *
 * --store-clock: then the target machines' clock estimates are made from
 * the file as `record --target` makes them (analyze/clock_store.h) and
 * the file written again with them stored (CLOCK_EST, CLOCK_WINDOWS);
 * --stored-error NS stores offsets NS off (to see the report use them).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotrail/event.h"
#include "iotrail/trace_format.h"
#include "analyze/clock_store.h"
#include "tracefile.h"

struct opts {
	int64_t offset;
	double ppm;
	int64_t exchange_error;
	uint64_t exchange_uncertainty;
	int no_clock, no_nvmet, decoy, store_clock;
	const struct it_clock_store *est; /* machine m's at [m - 1], or NULL */
	int64_t stored_error;
	const char *real_port;  /* --decoy: machine 2's port address */
	unsigned chunk;
	unsigned repeat;
	uint64_t span;          /* a copy's length, with a second between copies */
};

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "split_trace: failed to %s: %s\n", what, why);
	return 1;
}

static uint64_t target_time(const struct opts *o, uint64_t start, uint64_t t)
{
	if (!t)
		return 0;
	return t + (uint64_t)o->offset + (uint64_t)llround(o->ppm * (double)(int64_t)(t - start) / 1e6);
}

/* The disks behind the target's namespaces: the devs its nvmet events name. */
static size_t backing_devs(const char *in, uint32_t *devs, size_t max)
{
	char err[256];
	struct it_reader *r = it_reader_open(in, err, sizeof(err));
	const struct it_event *evs;
	size_t n, nd = 0;

	if (!r)
		return 0;
	while (it_reader_next(r, &evs, &n) == 1)
		for (size_t i = 0; i < n; i++) {
			size_t k = 0;
			if (evs[i].layer != IT_LAYER_NVMET || !evs[i].nvmet.dev)
				continue;
			while (k < nd && devs[k] != evs[i].nvmet.dev)
				k++;
			if (k == nd && nd < max)
				devs[nd++] = evs[i].nvmet.dev;
		}
	it_reader_close(r);
	return nd;
}

static bool on_target(const struct it_event *e, const uint32_t *devs, size_t nd)
{
	if (e->layer == IT_LAYER_NVMET || e->layer == IT_LAYER_NVMET_TCP)
		return true;
	if (e->layer != IT_LAYER_BLOCK)
		return false;
	for (size_t k = 0; k < nd; k++)
		if (e->dev == devs[k])
			return true;
	return false;
}

/* One machine's events of in into w, in chunks of o->chunk: machine 0 the
 * initiator's, another the target's (without nvmet's when no_nvmet). */
static int copy_events(struct it_writer *w, const char *in, uint16_t machine, const struct opts *o,
		       uint64_t start, const uint32_t *devs, size_t nd, int no_nvmet)
{
	const struct it_select sel = { 0, IT_ANY, IT_CHUNK_EVENTS };
	char err[256];
	struct it_reader *r = it_reader_open_select(in, &sel, 1, err, sizeof(err));
	struct it_chunk c;
	unsigned since = 0, copy = 0;
	int rc = 0;

	if (!r)
		return fail("read the input", err);
	while (!rc && copy < o->repeat) {
		if (it_reader_next_chunk(r, &c) != 1) {
			it_reader_close(r);
			r = NULL;
			if (++copy == o->repeat)
				break;
			if (!(r = it_reader_open_select(in, &sel, 1, err, sizeof(err))))
				return fail("read the input again", err);
			continue;
		}
		const struct it_event *evs = c.data;

		for (uint32_t i = 0; i < c.count && !rc; i++) {
			struct it_event e = evs[i];

			if (on_target(&e, devs, nd) != (machine != 0))
				continue;
			if (machine && no_nvmet && e.layer == IT_LAYER_NVMET)
				continue;
			if (copy) { /* a later copy: every time moved on */
				e.ts_ns += copy * o->span;
				if ((e.layer == IT_LAYER_NVMET_TCP || e.layer == IT_LAYER_NVME_TCP) &&
				    e.tcp.end_ns)
					e.tcp.end_ns += copy * o->span;
			}
			if (machine) {
				e.ts_ns = target_time(o, start, e.ts_ns);
				if (e.layer == IT_LAYER_NVMET_TCP) /* a response's C2H data start */
					e.tcp.end_ns = target_time(o, start, e.tcp.end_ns);
			}
			rc = it_writer_add_record(w, machine, c.layer, IT_CHUNK_EVENTS, &e, sizeof(e));
			if (!rc && ++since == o->chunk) {
				rc = it_writer_flush(w);
				since = 0;
			}
		}
	}
	it_reader_close(r);
	if (!rc)
		rc = it_writer_flush(w);
	return rc ? fail("write the output", strerror(-rc)) : 0;
}

static struct it_nvmf_rec nvmf(uint16_t role, const char *traddr)
{
	struct it_nvmf_rec r = { .role = role };

	snprintf(r.transport, sizeof(r.transport), "tcp");
	snprintf(r.traddr, sizeof(r.traddr), "%s", traddr);
	snprintf(r.trsvcid, sizeof(r.trsvcid), "4420");
	snprintf(r.nqn, sizeof(r.nqn), "nqn.2024-01.io.iotrail:split");
	return r;
}

/* Target machine m's head: HOST, DEVICES, CLOCK. */
static int add_target(struct it_writer *w, uint16_t m, const struct it_host_rec *target,
		      const struct it_trace_head *head, struct it_clock_rec clock,
		      const struct opts *o)
{
	int rc = it_writer_add_machine(w, m, target);

	clock.machine = m;
	if (!rc)
		rc = it_writer_add_devices(w, m, head->devs, head->ndevs);
	if (!rc && !o->no_clock)
		rc = it_writer_add_clock(w, &clock);
	return rc;
}

/* Machine m's newer head chunks, after every machine's HOST (as the merge
 * puts them): its NVMF with --decoy, its stored estimate with --store-clock. */
static int add_extras(struct it_writer *w, uint16_t m, const struct opts *o)
{
	struct it_nvmf_rec rec = nvmf(m ? IT_NVMF_TARGET_PORT : IT_NVMF_HOST_CTRL,
				      m == 1 ? "10.99.0.1" : m ? o->real_port : "127.0.0.1");
	int rc = o->decoy ? it_writer_add_nvmf(w, m, &rec, 1) : 0;

	if (!rc && m && o->est && o->est[m - 1].est.method) {
		struct it_clock_est_rec e = o->est[m - 1].est;

		e.machine = m;
		e.offset_ns += o->stored_error;
		rc = it_writer_add_clock_est(w, &e, o->est[m - 1].windows, o->est[m - 1].nwindows);
	}
	return rc;
}

static int write_split(char **argv, struct opts *o);

int main(int argc, char **argv)
{
	struct opts o = { .exchange_uncertainty = 50000, .chunk = 64, .repeat = 1,
			  .real_port = "127.0.0.1" };
	struct it_clock_store est[2];
	char err[256];
	size_t n;
	int rc;

	if (argc < 3)
		return fail("parse the arguments", "usage: split_trace IN OUT [options]");
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--no-clock"))
			o.no_clock = 1;
		else if (!strcmp(a, "--no-nvmet"))
			o.no_nvmet = 1;
		else if (!strcmp(a, "--decoy"))
			o.decoy = 1;
		else if (!strcmp(a, "--store-clock"))
			o.store_clock = 1;
		else if (!v)
			return fail("parse the arguments", a);
		else if (!strcmp(a, "--offset") && ++i)
			o.offset = strtoll(v, NULL, 10);
		else if (!strcmp(a, "--drift-ppm") && ++i)
			o.ppm = strtod(v, NULL);
		else if (!strcmp(a, "--exchange-error") && ++i)
			o.exchange_error = strtoll(v, NULL, 10);
		else if (!strcmp(a, "--exchange-uncertainty") && ++i)
			o.exchange_uncertainty = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--stored-error") && ++i)
			o.stored_error = strtoll(v, NULL, 10);
		else if (!strcmp(a, "--real-port") && ++i)
			o.real_port = v;
		else if (!strcmp(a, "--chunk") && ++i)
			o.chunk = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--repeat") && ++i)
			o.repeat = (unsigned)strtoul(v, NULL, 10);
		else
			return fail("parse the arguments", a);
	}
	if (!o.chunk || !o.repeat)
		return fail("parse the arguments", "--chunk and --repeat must be at least 1");
	rc = write_split(argv, &o);
	if (rc || !o.store_clock)
		return rc;
	n = o.decoy ? 2 : 1;
	if (it_clock_store_estimate(argv[2], est, n, err, sizeof(err)))
		return fail("estimate the clocks", err);
	o.est = est;
	rc = write_split(argv, &o);
	it_clock_store_free(est, n);
	return rc;
}

/* IN (argv[1]) split into OUT (argv[2]) as o says. 0, or 1 after a line. */
static int write_split(char **argv, struct opts *o_)
{
	struct opts o = *o_;
	struct it_host_rec target;
	struct it_reader_status st;
	struct it_trace_head head;
	struct it_clock_rec clock = { .machine = 1, .ref_machine = 0 };
	struct it_writer *w;
	struct it_reader *r;
	uint32_t devs[16];
	size_t nd;
	char err[256];
	const struct it_event *evs;
	size_t n;
	int rc;

	if (!(r = it_reader_open(argv[1], err, sizeof(err))))
		return fail("read the input", err);
	head = (struct it_trace_head){ .host = it_reader_host(r) };
	head.devs = it_reader_devices(r, &head.ndevs);
	head.layers = it_reader_layers(r, &head.nlayers);
	if (!(w = it_writer_open(argv[2], &head, err, sizeof(err)))) {
		it_reader_close(r);
		return fail("write the output", err);
	}
	target = *head.host;
	snprintf(target.hostname, sizeof(target.hostname), "%.50s-target", head.host->hostname);
	target.start_monotonic_ns = target_time(&o, head.host->start_monotonic_ns,
						head.host->start_monotonic_ns);
	clock.offset_ns = -o.offset + o.exchange_error;
	clock.uncertainty_ns = o.exchange_uncertainty;
	snprintf(clock.method, sizeof(clock.method), "split_trace %+.3f s %+g ppm",
		 (double)o.offset / 1e9, o.ppm);
	rc = add_target(w, 1, &target, &head, clock, &o);
	if (!rc && o.decoy)
		rc = add_target(w, 2, &target, &head, clock, &o);
	for (uint16_t m = 0; !rc && m <= (o.decoy ? 2 : 1); m++)
		rc = add_extras(w, m, &o);
	while (it_reader_next(r, &evs, &n) == 1)
		; /* to its end: the END time */
	it_reader_status(r, &st);
	o.span = st.end_monotonic_ns - head.host->start_monotonic_ns + 1000000000ull;
	nd = backing_devs(argv[1], devs, 16);
	if (rc)
		rc = fail("write the output", strerror(-rc));
	if (!rc)
		rc = copy_events(w, argv[1], 0, &o, head.host->start_monotonic_ns, devs, nd, 0);
	if (!rc)
		rc = copy_events(w, argv[1], 1, &o, head.host->start_monotonic_ns, devs, nd,
				 o.no_nvmet || o.decoy);
	if (!rc && o.decoy)
		rc = copy_events(w, argv[1], 2, &o, head.host->start_monotonic_ns, devs, nd,
				 o.no_nvmet);
	if (rc) {
		it_writer_abort(w);
		it_reader_close(r);
		return 1;
	}
	it_reader_close(r);
	rc = it_writer_close(w, st.end_monotonic_ns + (o.repeat - 1) * o.span);
	return rc ? fail("close the output", strerror(-rc)) : 0;
}
