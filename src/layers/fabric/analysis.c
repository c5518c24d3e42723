// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fabric view as an analysis layer (layer.h): built for a trace that
 * has the nvmet layer. It takes the host's NVMe commands from the bus
 * (IT_BUS_NVME_CMD_DONE, published by the block layer's NVMe view) and the
 * target's commands and the controllers' table from the EVENTS chunks, and
 * joins them (fabric.h). Report: the text section "Fabric (NVMe/TCP)" and
 * the JSON member "fabric" (doc/report.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "analyze/nvme.h"
#include "analyze/report.h"
#include "layers/fabric/fabric.h"
#include "layers/fabric/tape.h"
#include "nvmf.h"
#include "layers/fabric/transport.h"
#include "tracefile.h"

struct fabric {
	struct it_fabric *f;
	/* a file of two machines, reported as machine 0: the target's side */
	struct it_fabric_tape *tape;
	uint64_t slack;           /* the first clock guess's: the tape plays that far ahead */
	uint64_t latest;          /* machine 0's latest event */
	const char *cross_error;  /* why the target's side is not joined, or NULL */
	uint16_t target;          /* its machine */
	uint16_t others;          /* more machines in the file, not joined */
	struct it_clock_guess guess; /* the first guess */
	bool coarse_from_io;      /* from the commands' times; else the exchange */
	/* machine 0's fabric controllers and the machine serving each (nvmf.h:
	 * machine id, IT_NVMF_UNKNOWN or IT_NVMF_AMBIGUOUS); none when the file
	 * has no NVMF records of machine 0 and of a target */
	struct ctrl_map { struct it_nvmf_rec c; int machine; } *cmap;
	size_t ncmap;
	bool stored_clock;        /* the estimate is the one stored in the trace */
};

static void on_cmd(const void *msg, void *ctx)
{
	const struct it_bus_nvme_cmd *m = msg;
	const struct it_nvme_cmd *c = m->c;
	struct fabric *x = ctx;
	struct it_fabric_host h = {
		.s = c->submit_ns, .n = c->complete_ns, .bytes = c->bytes, .ctrl = c->ctrl,
		.qid = c->qid, .cid = c->cid, .status = c->status, .opcode = c->opcode,
	};

	if (m->t) {
		const struct it_trail *t = m->t;
		h.start = t->ts[IT_PT_Q] ? t->ts[IT_PT_Q] : t->ts[IT_PT_I] ? t->ts[IT_PT_I] : t->ts[IT_PT_D];
		/* S is set up before the request is issued (D): the trail starts at Q or I */
		if (h.start > h.s)
			h.start = 0;
		h.c = t->ts[IT_PT_C];
	}
	it_fabric_host(x->f, &h);
}

/* A matched command, for whoever draws it (the Perfetto export). */
static void on_matched(const struct it_fabric_matched *m, void *ctx)
{
	it_bus_publish(ctx, IT_BUS_FABRIC_CMD_DONE, m);
}

static void on_trail(const void *msg, void *ctx)
{
	const struct it_trail *t = ((const struct it_bus_trail *)msg)->t;
	struct fabric *x = ctx;

	if (x->tape) /* the initiator's bios: no target command's backend */
		return;
	it_fabric_trail(x->f, t->dev, t->ts[IT_PT_Q], t->ts[IT_PT_D], t->ts[IT_PT_C]);
}

static void fabric_free(void *self)
{
	struct fabric *x = self;

	if (!x)
		return;
	it_fabric_free(x->f);
	it_fabric_tape_free(x->tape);
	free(x->cmap);
	free(x);
}

/* Which machine serves each of machine 0's fabric controllers, from the
 * machines' NVMF records; x->ncmap stays 0 when machine 0 or every target
 * has none (a file recorded before them). 0, or -1 out of memory. */
static int map_controllers(struct fabric *x, const struct it_machine *ms, size_t n)
{
	struct it_nvmf_machine *nm = calloc(n ? n : 1, sizeof(*nm));
	bool targets_known = false;

	if (!nm)
		return -1;
	for (size_t i = 0; i < n; i++) {
		nm[i] = (struct it_nvmf_machine){ ms[i].id, ms[i].nvmf, ms[i].nnvmf };
		targets_known |= ms[i].id && ms[i].nnvmf;
	}
	if (n && targets_known && ms[0].nnvmf &&
	    !(x->cmap = calloc(ms[0].nnvmf, sizeof(*x->cmap)))) {
		free(nm);
		return -1;
	}
	for (size_t k = 0; x->cmap && k < ms[0].nnvmf; k++)
		if (ms[0].nvmf[k].role == IT_NVMF_HOST_CTRL)
			x->cmap[x->ncmap++] = (struct ctrl_map){ ms[0].nvmf[k],
								 it_nvmf_map(&ms[0].nvmf[k], nm, n) };
	free(nm);
	return 0;
}

/* The estimate record stored for machine (CLOCK_EST), if any, given to
 * the join. 0, or -1 out of memory. */
static int use_stored_clock(struct fabric *x, struct it_reader *rd, uint16_t machine)
{
	const struct it_clock_window_rec *w;
	size_t nw;
	const struct it_clock_est_rec *s = it_reader_clock_est(rd, machine, &w, &nw);
	struct it_clock_est e;

	if (!s || (s->method != IT_CLOCK_IO && s->method != IT_CLOCK_EXCHANGE))
		return 0;
	e = (struct it_clock_est){
		.method = s->method, .offset_ns = s->offset_ns, .ref_ns = s->ref_ns,
		.slope = s->slope, .drift_known = s->flags & IT_CLOCK_EST_DRIFT_KNOWN,
		.drift_bound_ppm = s->drift_bound_ppm,
		.all_bounds_meet = s->flags & IT_CLOCK_EST_ALL_BOUNDS_MEET,
		.uncertainty_ns = s->uncertainty_ns, .uncertainty_mid_ns = s->uncertainty_mid_ns,
		.samples = s->samples, .rejected = s->rejected, .windows = nw,
		.min_rtt_ns = s->min_rtt_ns, .max_rtt_ns = s->max_rtt_ns,
	};
	if (nw && !(e.window = malloc(nw * sizeof(*e.window))))
		return -1;
	for (size_t i = 0; i < nw; i++)
		e.window[i] = (struct it_clock_window){ w[i].at_ns, w[i].offset_ns, w[i].rtt_ns };
	it_fabric_use_estimate(x->f, &e);
	x->stored_clock = true;
	return 0;
}

/* The machine the most controllers map to (the lowest on a tie); 0 when
 * none maps to any. */
static uint16_t most_served(const struct fabric *x)
{
	size_t best = 0;
	uint16_t id = 0;

	for (size_t i = 0; i < x->ncmap; i++) {
		size_t votes = 0;

		if (x->cmap[i].machine <= 0)
			continue;
		for (size_t k = 0; k < x->ncmap; k++)
			votes += x->cmap[k].machine == x->cmap[i].machine;
		if (votes > best || (votes == best && x->cmap[i].machine < id)) {
			best = votes;
			id = (uint16_t)x->cmap[i].machine;
		}
	}
	return id;
}

/*
 * Machine 0 of a file of several: the target its fabric controllers reach
 * is the machine the most of them map to by the machines' NVMF records
 * (nvmf.h); the controllers another machine serves, or none recorded,
 * count as the initiator's alone (one target machine per report). A file
 * without NVMF records: the first other machine, as `record --target`
 * with one target merges it. Its side is read
 * alongside (tape.h), a first guess of its clock placed on it (clock.h:
 * it_clock_coarse, from the commands' times; the CLOCK chunk's exchange
 * when no command pairs up), and the join told to keep its matched I/Os
 * for the estimate at the end. 0, or -1 when memory ran out; a file that
 * cannot be read this way leaves the join one-sided with the reason kept.
 */
static int cross_setup(struct fabric *x, const struct it_pass_info *info)
{
	char err[256];
	struct it_reader *rd = it_reader_open(info->path, err, sizeof(err));
	const struct it_machine *ms, *m = NULL;
	const struct it_clock_rec *clock;
	struct it_clock_cmd *host = NULL, *target = NULL;
	size_t n, nh = 0, nt = 0;
	int rc = 0;

	if (!rd)
		return 0; /* the pass says why */
	ms = it_reader_machines(rd, &n);
	if (map_controllers(x, ms, n)) {
		rc = -1;
		goto out;
	}
	uint16_t want = info->join_machine ? info->join_machine : most_served(x);
	for (size_t i = 0; i < n; i++)
		if (ms[i].id != 0 && !m && (!want || ms[i].id == want))
			m = &ms[i];
	x->others = m && n > 2 ? (uint16_t)(n - 2) : 0;
	if (!m)
		goto out;
	if (!(info->opts && info->opts->recompute_clock) && use_stored_clock(x, rd, m->id)) {
		rc = -1;
		goto out;
	}
	x->target = m->id;
	for (size_t i = 0; i < x->ncmap; i++)
		if (x->cmap[i].machine != m->id && it_fabric_ctrl_elsewhere(x->f, (uint16_t)x->cmap[i].c.id)) {
			rc = -1;
			goto out;
		}
	if (!(x->tape = it_fabric_tape_open(info, m, err, sizeof(err)))) {
		x->cross_error = "its records could not be read";
		rc = strstr(err, "memory") ? -1 : 0;
		goto out;
	}
	clock = it_reader_clock(rd, m->id);
	target = it_fabric_target_commands(info->path, m->id, &nt);
	host = it_fabric_host_commands(info->path, &nh);
	if ((!target && nt) || (!host && nh)) {
		rc = -1;
		goto out;
	}
	int found = it_clock_coarse(host, nh, target, nt, clock ? clock->offset_ns : 0,
				    clock ? clock->uncertainty_ns : 0, &x->guess);
	if (found < 0) {
		rc = -1;
		goto out;
	}
	x->coarse_from_io = found == 1;
	if (!found)
		x->guess = (struct it_clock_guess){ .offset_ns = clock ? clock->offset_ns : 0,
						    .slack_ns = clock ? clock->uncertainty_ns : 0 };
	x->slack = x->guess.slack_ns;
	it_fabric_tape_shift(x->tape, &x->guess);
	it_fabric_cross(x->f, m->id, &x->guess, clock != NULL, clock ? clock->offset_ns : 0,
			clock ? clock->uncertainty_ns : 0);
out:
	free(host);
	free(target);
	it_reader_close(rd);
	return rc;
}

static void *fabric_new(const struct it_pass_info *info)
{
	struct fabric *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	if (!(x->f = it_fabric_new()))
		goto fail;
	/* an exporter subscribes after the layers are made: always published */
	it_fabric_on_matched(x->f, on_matched, info->bus);
	if (info->opts && info->opts->fabric_grouped)
		it_fabric_group_by(x->f, info->opts->fabric_keys, info->opts->nfabric_keys);
	if (it_bus_subscribe(info->bus, IT_BUS_NVME_CMD_DONE, on_cmd, x) ||
	    it_bus_subscribe(info->bus, IT_BUS_TRAIL_DONE, on_trail, x) ||
	    (info->machine == 0 && cross_setup(x, info)))
		goto fail;
	return x;
fail:
	fabric_free(x);
	return NULL;
}

static int fabric_feed(void *self, uint16_t type, const void *payload, size_t len, uint32_t count)
{
	struct fabric *x = self;
	const struct it_event *evs = payload;

	(void)type;
	(void)len;
	for (uint32_t i = 0; i < count; i++) {
		if (evs[i].ts_ns > x->latest)
			x->latest = evs[i].ts_ns;
		if (evs[i].layer == IT_LAYER_NVMET || evs[i].type == IT_EV_NVME_CTRL ||
		    evs[i].layer == IT_LAYER_NVME_TCP || evs[i].layer == IT_LAYER_NVMET_TCP ||
		    evs[i].type == IT_EV_BIO_QUEUE)
			it_fabric_event(x->f, &evs[i]);
	}
	/* the target's chunks up to here (on this clock, give or take the
	 * guess's slack): the target side of this chunk's host commands */
	if (x->tape && it_fabric_tape_play(x->tape, x->f, x->latest + x->slack))
		return -1;
	/* the host commands of this chunk came from the block layer before
	 * it: their target side is in this chunk or an earlier one */
	return it_fabric_settle(x->f);
}

static int fabric_finish(void *self, const struct it_span *span)
{
	struct fabric *x = self;

	(void)span;
	if (x->tape && it_fabric_tape_play(x->tape, x->f, UINT64_MAX))
		return -1;
	return it_fabric_finish(x->f);
}

static const char *op_name(const struct it_fabric_op *o, char *buf, size_t len)
{
	return it_nvme_opcode_name(o->opcode, o->admin, buf, len);
}

/* A stage's share, or -1 when the stage it is a share of is empty (a
 * command without a block trail has no io). */
static double share(const struct it_fabric_op *o, unsigned s)
{
	const struct it_hist *of = &o->stage[it_fabric_stages[s].share_of];

	return of->sum ? (double)o->stage[s].sum / (double)of->sum : -1;
}

/* A size class as the block tables print it: its lower bound. */
static const char *size_name(unsigned c, char *buf, size_t len)
{
	uint64_t b = it_size_class_lo(c);
	static const char *const unit[] = { "", "K", "M", "G" };
	unsigned u = 0;

	while (u < 3 && b >= 1024 && b % 1024 == 0) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)b, unit[u]);
	return buf;
}

/* A group's initiator: the host's controller, or a target alone's cntlid. */
static const char *initiator_name(const struct it_fabric_op *g, char *buf, size_t len)
{
	if (g->side == IT_FSIDE_TARGET)
		snprintf(buf, len, "cntlid %u", g->cntlid);
	else
		snprintf(buf, len, "nvme%u", g->ctrl);
	return buf;
}

/* "write size=128K queue=2 initiator=nvme0": a group's keys, in order */
static const char *group_label(const struct it_fabric_results *r, const struct it_fabric_op *g,
			       char *out, size_t len)
{
	char buf[32];
	size_t n = 0;
	bool op = g->admin; /* an admin group keeps its opcode */

	out[0] = 0;
	for (unsigned k = 0; k < r->nkeys; k++)
		op |= r->keys[k] == IT_FK_OP;
	if (op)
		n += snprintf(out + n, len - n, "%s", op_name(g, buf, sizeof(buf)));
	for (unsigned k = 0; k < r->nkeys && n < len; k++) {
		const char *sep = n ? " " : "";
		switch (r->keys[k]) {
		case IT_FK_SIZE:
			n += snprintf(out + n, len - n, "%ssize=%s", sep,
				      size_name(g->size_class, buf, sizeof(buf)));
			break;
		case IT_FK_QUEUE:
			n += snprintf(out + n, len - n, "%squeue=%u", sep, g->qid);
			break;
		case IT_FK_INITIATOR:
			n += snprintf(out + n, len - n, "%sinitiator=%s", sep,
				      initiator_name(g, buf, sizeof(buf)));
			break;
		case IT_FK_MACHINE:
			if (g->machine == IT_FABRIC_NO_MACHINE)
				n += snprintf(out + n, len - n, "%smachine=-", sep);
			else
				n += snprintf(out + n, len - n, "%smachine=%u", sep, g->machine);
			break;
		}
	}
	if (!out[0])
		snprintf(out, len, "all");
	return out;
}

/* One group's table under its heading: each stage with count, avg, p50,
 * p99 and share, a part indented under its stage. */
static void stages_text(FILE *out, const struct it_fabric_op *o)
{
	fprintf(out, "    %-15s %9s %11s %11s %11s %7s\n", "stage", "count", "avg us", "p50 us",
		"p99 us", "share");
	for (unsigned s = 0; s < IT_FS_MAX; s++) {
		const struct it_hist *h = &o->stage[s];
		int depth = 0;
		double sh;

		if (!h->count)
			continue;
		for (unsigned k = s; it_fabric_stages[k].parent != k; k = it_fabric_stages[k].parent)
			depth++;
		sh = share(o, s);
		fprintf(out, "    %*s%-*s %9llu %11.1f %11.1f %11.1f ", 2 * depth, "",
			15 - 2 * depth, it_fabric_stages[s].name, (unsigned long long)h->count,
			it_hist_avg(h) / 1e3, it_hist_percentile(h, 50) / 1e3,
			it_hist_percentile(h, 99) / 1e3);
		if (sh < 0)
			fprintf(out, "%7s\n", "-");
		else
			fprintf(out, "%6.1f%%\n", 100 * sh);
	}
}

/* Which machine serves each controller, and what this report does with it. */
static void controllers_text(const struct fabric *x, FILE *out)
{
	for (size_t i = 0; i < x->ncmap; i++) {
		const struct ctrl_map *c = &x->cmap[i];

		fprintf(out, "  %s nvme%u (%s %s:%s %s) -> ", i ? "          " : "controller",
			c->c.id, c->c.transport, c->c.traddr, c->c.trsvcid, c->c.nqn);
		if (c->machine == x->target)
			fprintf(out, "machine %d, joined\n", c->machine);
		else if (c->machine > 0)
			fprintf(out, "machine %d, not joined here\n             (the initiator's "
				"stages only; iotrail report --join %d joins it)\n", c->machine, c->machine);
		else
			fprintf(out, "%s: the initiator's stages only\n",
				c->machine == IT_NVMF_AMBIGUOUS ? "several machines' ports fit it" :
								  "no recorded machine serves it");
	}
}

/* One opcode's table (the default grouping). */
static void op_text(FILE *out, const struct it_fabric_op *o, const char *what)
{
	char buf[32];

	if (o->cntlid)
		fprintf(out, "\n  %s from cntlid %u: %llu %s\n", op_name(o, buf, sizeof(buf)),
			o->cntlid, (unsigned long long)o->count, what);
	else
		fprintf(out, "\n  %s: %llu %s (%llu with their request's block trail)\n",
			op_name(o, buf, sizeof(buf)), (unsigned long long)o->count, what,
			(unsigned long long)o->with_trail);
	stages_text(out, o);
}

/* The groups of one side (--fabric-group-by). */
static void groups_text(FILE *out, const struct it_fabric_results *r, enum it_fabric_side side,
			const char *what)
{
	char label[160];

	for (size_t i = 0; i < r->ngroups; i++) {
		const struct it_fabric_op *g = &r->groups[i];
		if (g->side != side)
			continue;
		fprintf(out, "\n  %s: %llu %s", group_label(r, g, label, sizeof(label)),
			(unsigned long long)g->count, what);
		if (side == IT_FSIDE_TARGET)
			fputc('\n', out);
		else
			fprintf(out, " (%llu with block trails)\n", (unsigned long long)g->with_trail);
		stages_text(out, g);
	}
}

/* Two machines: where the target's side came from, its clock on the
 * initiator's, and how causal the merged timeline is. */
static void cross_text(const struct fabric *x, const struct it_fabric_results *r, FILE *out)
{
	const struct it_clock_est *e = &r->clock;

	controllers_text(x, out);
	if (!r->cross) {
		if (x->cross_error)
			fprintf(out, "  machine %u's side not joined: %s\n", x->target, x->cross_error);
		return;
	}
	fprintf(out, "  target side: machine %u (nvmet, nvmet-tcp, its disks' block trails), its times\n"
		"  placed on machine 0's clock\n", x->target);
	if (x->others)
		fprintf(out, "  %u more machine%s in the file not joined: one target per report\n"
			"  (report --join N joins machine N; --machine N shows its own side)\n",
			x->others, x->others == 1 ? "" : "s");
	if (it_fabric_tape_error(x->tape))
		fprintf(out, "  *** machine %u's side ends early: %s\n", x->target,
			it_fabric_tape_error(x->tape));
	if (e->method == IT_CLOCK_NONE) {
		fprintf(out, "  clock: no estimate (no matched I/O, no agent exchange): stages stay on one "
			"clock,\n  the ones across both (host.out, host.in, net.out, net.back) are not "
			"taken\n");
		return;
	}
	fprintf(out, "  clock (%s%s): machine 0's time = machine %u's %+.9f s (at machine %u's %.6f s),\n"
		"    +- %.1f us anywhere in the trace", it_clock_method_name(e->method),
		x->stored_clock ? ", stored by record" : "", x->target,
		(double)e->offset_ns / 1e9, x->target, (double)e->ref_ns / 1e9,
		(double)e->uncertainty_ns / 1e3);
	if (e->uncertainty_mid_ns)
		fprintf(out, " (+- %.1f us at its middle I/O)", (double)e->uncertainty_mid_ns / 1e3);
	if (e->drift_known)
		fprintf(out, ",\n    drift %+.2f ppm +- %.2f (machine %u's clock gains)\n",
			it_clock_drift_ppm(e), e->drift_bound_ppm, x->target);
	else
		fprintf(out, ",\n    drift not estimated (%s)\n",
			e->method == IT_CLOCK_IO ? "the trace is too short to bound it" :
						   "no matched I/O");
	if (e->method == IT_CLOCK_IO)
		fprintf(out, "    from %llu matched I/Os (%llu rejected) in %llu windows of %.0f s, "
			"round trip min %.1f us,\n    max of the windows' kept %.1f us\n",
			(unsigned long long)e->samples, (unsigned long long)e->rejected,
			(unsigned long long)e->windows, IT_CLOCK_WINDOW_NS / 1e9, e->min_rtt_ns / 1e3,
			e->max_rtt_ns / 1e3);
	if (e->exchange && e->method == IT_CLOCK_IO) {
		/* the exchange was made at the ends of the recording: within both
		 * uncertainties and what the drift moves over the I/Os' span */
		int64_t d = e->exchange_offset_ns - e->offset_ns;
		uint64_t ad = d < 0 ? (uint64_t)-d : (uint64_t)d;
		double moved = e->windows ? fabs(e->slope) * (double)(e->window[e->windows - 1].at_ns -
								       e->window[0].at_ns) : 0;
		fprintf(out, "    agent exchange: %+.9f s +- %.3f us, %s\n",
			(double)e->exchange_offset_ns / 1e9, e->exchange_uncertainty_ns / 1e3,
			(double)ad <= (double)(e->uncertainty_ns + e->exchange_uncertainty_ns) + moved ?
				"agrees" : "disagrees: the matched I/Os' estimate is used");
	}
	if (r->causal_checked)
		fprintf(out, "  causal on the merged timeline: %llu of %llu matched I/Os; not: %llu "
			"out (target received\n  before the initiator sent), %llu back (initiator "
			"received before the target sent),\n  %llu of those within +- the uncertainty\n",
			(unsigned long long)(r->causal_checked -
					     (r->noncausal_out + r->noncausal_back)),
			(unsigned long long)r->causal_checked, (unsigned long long)r->noncausal_out,
			(unsigned long long)r->noncausal_back, (unsigned long long)r->noncausal_within);
}

static void fabric_text(void *self, FILE *out, const struct it_report_ctx *ctx)
{
	const struct fabric *x = self;
	const struct it_fabric_results *r = it_fabric_results(x->f);

	(void)ctx;
	fprintf(out, "\nFabric (NVMe/TCP): host commands matched to target commands by (cntlid, qid, cid)\n");
	cross_text(x, r, out);
	fprintf(out, "  %llu host commands on fabric controllers, %llu target commands: %llu matched,\n"
		"  %llu host and %llu target commands unmatched (%llu on I/O queues)\n",
		(unsigned long long)r->host_commands, (unsigned long long)r->target_commands,
		(unsigned long long)r->matched, (unsigned long long)r->unmatched_host,
		(unsigned long long)r->unmatched_target, (unsigned long long)r->unmatched_io);
	for (int k = 0; k < IT_FR_MAX; k++)
		if (r->reason[k])
			fprintf(out, "    unmatched, %s: %llu\n", it_fabric_reason_names[k],
				(unsigned long long)r->reason[k]);
	if (!r->controllers && r->host_commands)
		fprintf(out, "  no NVMe controllers' table in the trace: host commands cannot be matched\n");
	if (r->matched)
		fprintf(out, "  stages add up to the command on %llu of %llu matched I/Os\n",
			(unsigned long long)r->stage_sum_ok, (unsigned long long)r->matched);
	if (r->transport) {
		uint64_t gaps = 0;
		for (int k = 0; k < IT_FG_MAX; k++)
			gaps += r->gap[k];
		fprintf(out, "  split to the network (nvme-tcp, nvmet-tcp layers): %llu I/O commands, "
			"adding up on %llu; %llu not\n",
			(unsigned long long)r->detailed, (unsigned long long)r->detail_sum_ok,
			(unsigned long long)gaps);
		for (int k = 0; k < IT_FG_MAX; k++)
			if (r->gap[k])
				fprintf(out, "    not split, %s: %llu\n", it_fabric_gap_names[k],
					(unsigned long long)r->gap[k]);
		if (r->r2t_split)
			fprintf(out, "  with the R2T round trip (r2t.*, h2c.*): %llu writes, adding up on "
				"%llu\n", (unsigned long long)r->r2t_split,
				(unsigned long long)r->r2t_sum_ok);
		if (r->dev_split)
			fprintf(out, "  with the backing device's block stages: %llu, adding up on %llu; "
				"%llu without their bios\n", (unsigned long long)r->dev_split,
				(unsigned long long)r->dev_sum_ok, (unsigned long long)r->dev_unlinked);
	} else if (r->matched) {
		fprintf(out, "  no NVMe/TCP transport events (nvme-tcp, nvmet-tcp): host.out, target, "
			"host.in not split\n");
	}
	if (r->nqueues)
		fprintf(out, "  send backlog: I/O commands ahead on their queue when set up (nvme-tcp's "
			"lists)\n");
	for (size_t i = 0; i < r->nqueues; i++) {
		const struct it_fabric_queue *q = &r->queues[i];
		fprintf(out, "    nvme%u qid %-3u %9llu commands  avg %6.2f  max %3llu  none ahead %5.1f%%\n",
			q->ctrl, q->qid, (unsigned long long)q->commands,
			q->commands ? (double)q->sum / (double)q->commands : 0.0,
			(unsigned long long)q->max,
			q->commands ? 100.0 * (double)q->depth[0] / (double)q->commands : 0.0);
	}
	if (r->nio_work)
		fprintf(out, "  io_work scheduling delay: queued -> running, per run that sent a PDU (us)\n");
	for (size_t i = 0; i < r->nio_work; i++) {
		const struct it_tcp_io_work *q = &r->io_work[i];
		char who[32];
		snprintf(who, sizeof(who), q->side == IT_TCP_HOST ? "nvme%u" : "cntlid %u", q->ctrl);
		fprintf(out, "    %-9s %-9s qid %-3u %8llu runs  avg %7.1f  p50 %7.1f  p99 %7.1f  max %8.1f\n",
			q->side == IT_TCP_HOST ? "initiator" : "target", who, q->qid,
			(unsigned long long)q->wait.count, it_hist_avg(&q->wait) / 1e3,
			it_hist_percentile(&q->wait, 50) / 1e3, it_hist_percentile(&q->wait, 99) / 1e3,
			(double)q->wait.max / 1e3);
	}
	if (r->grouped)
		groups_text(out, r, IT_FSIDE_MATCHED, "matched");
	for (size_t i = 0; i < r->nops && !r->grouped; i++)
		op_text(out, &r->ops[i], "matched");
	if (r->nalone)
		fprintf(out, "\n  Initiator alone: I/O commands without a target side in the trace, "
			"split by nvme-tcp\n");
	if (r->grouped)
		groups_text(out, r, IT_FSIDE_INITIATOR, "without a target side");
	for (size_t i = 0; i < r->nalone && !r->grouped; i++)
		op_text(out, &r->alone[i], "without a target side");
	if (r->ntarget_alone)
		fprintf(out, "\n  Target alone: I/O commands without a host side in the trace, %s\n",
			r->grouped ? "by the keys given" : "per initiator controller");
	if (r->grouped)
		groups_text(out, r, IT_FSIDE_TARGET, "without a host side");
	for (size_t i = 0; i < r->ntarget_alone && !r->grouped; i++)
		op_text(out, &r->target_alone[i], "without a host side");
}

/* An opcode's or a group's members: counts and "stages": [...] */
static void op_json(struct it_json *j, const struct it_fabric_op *o)
{
	it_json_kv_uint(j, "opcode", o->opcode);
	if (o->cntlid)
		it_json_kv_uint(j, "cntlid", o->cntlid);
	it_json_kv_bool(j, "admin", o->admin);
	it_json_kv_uint(j, "count", o->count);
	it_json_kv_uint(j, "bytes", o->bytes);
	it_json_kv_uint(j, "with_trail", o->with_trail);
	it_json_name(j, "stages");
	it_json_array_start(j);
	for (int s = 0; s < IT_FS_MAX; s++) {
		const struct it_hist *h = &o->stage[s];
		if (!h->count)
			continue;
		it_json_object_start(j);
		it_json_kv_string(j, "name", it_fabric_stages[s].name);
		it_json_kv_string(j, "share_of", it_fabric_stages[it_fabric_stages[s].share_of].name);
		if (it_fabric_stages[s].parent != s)
			it_json_kv_string(j, "part_of", it_fabric_stages[it_fabric_stages[s].parent].name);
		it_json_kv_uint(j, "count", h->count);
		it_json_kv_uint(j, "sum_ns", h->sum);
		if (share(o, s) < 0) {
			it_json_name(j, "share");
			it_json_null(j);
		} else {
			it_json_kv_double(j, "share", share(o, s));
		}
		it_json_latency(j, "ns", h);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

/* "NAME": {opcode: {..., "stages": [...]}, ...} */
static void ops_json(struct it_json *j, const char *name, const struct it_fabric_op *ops, size_t n)
{
	char buf[32];

	it_json_name(j, name);
	it_json_object_start(j);
	for (size_t i = 0; i < n; i++) {
		const struct it_fabric_op *o = &ops[i];
		if (o->cntlid) { /* target alone: "read@CNTLID" */
			char key[48];
			snprintf(key, sizeof(key), "%s@%u", op_name(o, buf, sizeof(buf)), o->cntlid);
			it_json_name(j, key);
		} else {
			it_json_name(j, op_name(o, buf, sizeof(buf)));
		}
		it_json_object_start(j);
		op_json(j, o);
		it_json_object_end(j);
	}
	it_json_object_end(j);
}

static const char *const side_names[] = {
	[IT_FSIDE_MATCHED] = "matched", [IT_FSIDE_INITIATOR] = "initiator_alone",
	[IT_FSIDE_TARGET] = "target_alone",
};

/* "group_by": [keys], "groups": [{"side", "key": {...}, ...}, ...] */
static void groups_json(struct it_json *j, const struct it_fabric_results *r)
{
	char buf[32];

	it_json_name(j, "group_by");
	it_json_array_start(j);
	for (unsigned k = 0; k < r->nkeys; k++)
		it_json_string(j, it_fabric_key_names[r->keys[k]]);
	it_json_array_end(j);
	it_json_name(j, "groups");
	it_json_array_start(j);
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct it_fabric_op *g = &r->groups[i];
		it_json_object_start(j);
		it_json_kv_string(j, "side", side_names[g->side]);
		it_json_name(j, "key");
		it_json_object_start(j);
		for (unsigned k = 0; k < r->nkeys; k++) {
			it_json_name(j, it_fabric_key_names[r->keys[k]]);
			switch (r->keys[k]) {
			case IT_FK_OP:
				it_json_string(j, op_name(g, buf, sizeof(buf)));
				break;
			case IT_FK_SIZE:
				it_json_uint(j, it_size_class_lo(g->size_class));
				break;
			case IT_FK_QUEUE:
				it_json_uint(j, g->qid);
				break;
			case IT_FK_INITIATOR:
				it_json_string(j, initiator_name(g, buf, sizeof(buf)));
				break;
			case IT_FK_MACHINE:
				if (g->machine == IT_FABRIC_NO_MACHINE)
					it_json_null(j);
				else
					it_json_uint(j, g->machine);
				break;
			}
		}
		it_json_object_end(j);
		if (memchr(r->keys, IT_FK_SIZE, r->nkeys))
			it_json_kv_uint(j, "size_max", it_size_class_hi(g->size_class));
		op_json(j, g);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

/* "NAME": {names[k]: counts[k], ...}: counts by reason */
static void counts_json(struct it_json *j, const char *name, const char *const *names,
			const uint64_t *counts, int n)
{
	it_json_name(j, name);
	it_json_object_start(j);
	for (int k = 0; k < n; k++)
		it_json_kv_uint(j, names[k], counts[k]);
	it_json_object_end(j);
}

/* "cross": {...}: two machines (doc/report.md) */
static void cross_json(const struct fabric *x, const struct it_fabric_results *r, struct it_json *j)
{
	const struct it_clock_est *e = &r->clock;

	it_json_name(j, "cross");
	it_json_object_start(j);
	it_json_kv_uint(j, "target_machine", x->target);
	it_json_kv_uint(j, "machines_not_joined", x->others);
	it_json_kv_bool(j, "joined", r->cross);
	if (x->ncmap) {
		it_json_name(j, "controllers");
		it_json_array_start(j);
		for (size_t i = 0; i < x->ncmap; i++) {
			const struct ctrl_map *c = &x->cmap[i];

			it_json_object_start(j);
			it_json_kv_uint(j, "ctrl", c->c.id);
			it_json_kv_string(j, "transport", c->c.transport);
			it_json_kv_string(j, "traddr", c->c.traddr);
			it_json_kv_string(j, "trsvcid", c->c.trsvcid);
			it_json_kv_string(j, "subsysnqn", c->c.nqn);
			it_json_name(j, "machine");
			if (c->machine > 0)
				it_json_uint(j, (uint64_t)c->machine);
			else
				it_json_null(j);
			it_json_kv_bool(j, "ambiguous", c->machine == IT_NVMF_AMBIGUOUS);
			it_json_kv_bool(j, "joined", c->machine == x->target);
			it_json_object_end(j);
		}
		it_json_array_end(j);
	}
	if (!r->cross)
		it_json_kv_string(j, "not_joined", x->cross_error);
	if (x->tape && it_fabric_tape_error(x->tape))
		it_json_kv_string(j, "target_read_error", it_fabric_tape_error(x->tape));
	it_json_name(j, "clock");
	it_json_object_start(j);
	it_json_kv_string(j, "method", it_clock_method_name(e->method));
	if (x->stored_clock) /* absent: recomputed by this report (a file without one) */
		it_json_kv_bool(j, "stored", true);
	it_json_kv_int(j, "offset_ns", e->offset_ns);
	it_json_kv_uint(j, "at_target_ns", e->ref_ns);
	it_json_kv_uint(j, "uncertainty_ns", e->uncertainty_ns);
	it_json_kv_uint(j, "uncertainty_mid_ns", e->uncertainty_mid_ns);
	if (e->drift_known) {
		it_json_kv_double(j, "drift_ppm", it_clock_drift_ppm(e));
		it_json_kv_double(j, "drift_bound_ppm", e->drift_bound_ppm);
	} else {
		it_json_name(j, "drift_ppm");
		it_json_null(j);
	}
	it_json_kv_bool(j, "every_io_bound_met", e->all_bounds_meet);
	it_json_kv_uint(j, "samples", e->samples);
	it_json_kv_uint(j, "rejected", e->rejected);
	it_json_kv_uint(j, "windows", e->windows);
	it_json_kv_uint(j, "window_ns", IT_CLOCK_WINDOW_NS);
	it_json_kv_uint(j, "min_rtt_ns", e->min_rtt_ns);
	it_json_kv_uint(j, "max_window_rtt_ns", e->max_rtt_ns);
	it_json_name(j, "by_window");
	it_json_array_start(j);
	for (uint64_t i = 0; i < e->windows; i++) {
		const struct it_clock_window *w = &e->window[i];
		it_json_object_start(j);
		it_json_kv_uint(j, "at_target_ns", w->at_ns);
		it_json_kv_int(j, "offset_ns", w->offset_ns);
		it_json_kv_uint(j, "rtt_ns", w->rtt_ns);
		it_json_kv_int(j, "from_estimate_ns",
			       w->offset_ns - (int64_t)(it_clock_map(e, w->at_ns) - w->at_ns));
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_kv_int(j, "first_guess_ns", x->guess.offset_ns);
	it_json_kv_uint(j, "first_guess_at_target_ns", x->guess.ref_ns);
	it_json_kv_double(j, "first_guess_drift_ppm", -x->guess.slope * 1e6);
	it_json_kv_uint(j, "first_guess_slack_ns", x->slack);
	it_json_kv_string(j, "first_guess_from", x->coarse_from_io ? "commands" : "exchange");
	if (e->exchange) {
		it_json_name(j, "exchange");
		it_json_object_start(j);
		it_json_kv_int(j, "offset_ns", e->exchange_offset_ns);
		it_json_kv_uint(j, "uncertainty_ns", e->exchange_uncertainty_ns);
		it_json_object_end(j);
	}
	it_json_object_end(j);
	it_json_name(j, "causality");
	it_json_object_start(j);
	it_json_kv_uint(j, "checked", r->causal_checked);
	it_json_kv_uint(j, "noncausal_out", r->noncausal_out);
	it_json_kv_uint(j, "noncausal_back", r->noncausal_back);
	it_json_kv_uint(j, "noncausal_within_uncertainty", r->noncausal_within);
	it_json_object_end(j);
	it_json_object_end(j);
}

static void fabric_json(void *self, struct it_json *j, const struct it_report_ctx *ctx)
{
	const struct fabric *x = self;
	const struct it_fabric_results *r = it_fabric_results(x->f);

	(void)ctx;
	it_json_name(j, "fabric");
	it_json_object_start(j);
	if (r->cross || x->cross_error)
		cross_json(x, r, j);
	it_json_kv_uint(j, "controllers", r->controllers);
	it_json_kv_uint(j, "host_commands", r->host_commands);
	it_json_kv_uint(j, "not_fabric", r->not_fabric);
	it_json_kv_uint(j, "target_commands", r->target_commands);
	it_json_kv_uint(j, "matched", r->matched);
	it_json_kv_uint(j, "unmatched_host", r->unmatched_host);
	it_json_kv_uint(j, "unmatched_target", r->unmatched_target);
	it_json_kv_uint(j, "unmatched_io", r->unmatched_io);
	counts_json(j, "unmatched", it_fabric_reason_names, r->reason, IT_FR_MAX);
	it_json_kv_uint(j, "stage_sum_ok", r->stage_sum_ok);
	it_json_kv_uint(j, "io_sum_ok", r->io_sum_ok);
	it_json_kv_uint(j, "target_waiting_max", r->waiting_max);
	it_json_kv_bool(j, "transport", r->transport);
	it_json_kv_uint(j, "detailed", r->detailed);
	it_json_kv_uint(j, "detail_sum_ok", r->detail_sum_ok);
	it_json_kv_uint(j, "r2t_split", r->r2t_split);
	it_json_kv_uint(j, "r2t_sum_ok", r->r2t_sum_ok);
	it_json_kv_uint(j, "dev_split", r->dev_split);
	it_json_kv_uint(j, "dev_sum_ok", r->dev_sum_ok);
	it_json_kv_uint(j, "dev_unlinked", r->dev_unlinked);
	counts_json(j, "not_detailed", it_fabric_gap_names, r->gap, IT_FG_MAX);
	it_json_name(j, "queues");
	it_json_array_start(j);
	for (size_t i = 0; i < r->nqueues; i++) {
		const struct it_fabric_queue *q = &r->queues[i];
		char d[8];
		it_json_object_start(j);
		it_json_kv_uint(j, "ctrl", q->ctrl);
		it_json_kv_uint(j, "qid", q->qid);
		it_json_kv_uint(j, "commands", q->commands);
		it_json_kv_double(j, "backlog_avg", q->commands ? (double)q->sum / (double)q->commands : 0);
		it_json_kv_uint(j, "backlog_max", q->max);
		it_json_name(j, "backlog_by_depth");
		it_json_object_start(j);
		for (int k = 0; k < IT_FABRIC_DEPTHS; k++)
			if (q->depth[k]) {
				snprintf(d, sizeof(d), "%d%s", k, k == IT_FABRIC_DEPTHS - 1 ? "+" : "");
				it_json_kv_uint(j, d, q->depth[k]);
			}
		it_json_object_end(j);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_name(j, "io_work");
	it_json_array_start(j);
	for (size_t i = 0; i < r->nio_work; i++) {
		const struct it_tcp_io_work *q = &r->io_work[i];
		it_json_object_start(j);
		it_json_kv_string(j, "side", q->side == IT_TCP_HOST ? "initiator" : "target");
		it_json_kv_uint(j, q->side == IT_TCP_HOST ? "ctrl" : "cntlid", q->ctrl);
		it_json_kv_uint(j, "qid", q->qid);
		it_json_kv_uint(j, "runs", q->wait.count);
		it_json_latency(j, "wait_ns", &q->wait);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	ops_json(j, "by_opcode", r->ops, r->nops);
	ops_json(j, "initiator_alone", r->alone, r->nalone);
	ops_json(j, "target_alone", r->target_alone, r->ntarget_alone);
	if (r->grouped)
		groups_json(j, r);
	it_json_object_end(j);
}

const struct it_fabric_results *it_layer_fabric_results(const void *state)
{
	return state ? it_fabric_results(((const struct fabric *)state)->f) : NULL;
}

static const uint16_t fabric_chunks[] = { IT_CHUNK_EVENTS };

const struct it_analysis_layer it_layer_fabric = {
	.name = "fabric",
	.layer = IT_LAYER_NVMET,
	.chunks = fabric_chunks,
	.nchunks = sizeof(fabric_chunks) / sizeof(fabric_chunks[0]),
	.new = fabric_new,
	.feed = fabric_feed,
	.finish = fabric_finish,
	.report_text = fabric_text,
	.report_json = fabric_json,
	.free = fabric_free,
};

const struct it_clock_est *it_layer_fabric_clock(const void *state, uint16_t *machine)
{
	const struct fabric *x = state;
	const struct it_fabric_results *r;

	if (!x || !x->tape)
		return NULL;
	r = it_fabric_results(x->f);
	*machine = x->target;
	return r->cross ? &r->clock : NULL;
}
