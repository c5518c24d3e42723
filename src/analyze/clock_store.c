// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The clock estimates `record --target` stores (clock_store.h): machine
 * 0's analysis pass over the merged file, its fabric join told which
 * target machine to join, exactly as `iotrail report` runs it; the
 * estimate the join made is kept as a CLOCK_EST record and its windows.
 * One pass per target machine: the join reads one target at a time.
 */
#include "analyze/clock_store.h"
#include "analyze/analyzer.h"
#include "analyze/layer.h"
#include "layers/fabric/clock.h"
#include "tracefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct it_reader *open_machine0(const char *path, char *err, size_t errlen)
{
	uint16_t types[16];
	struct it_select sel[16];
	size_t ntypes = it_analysis_chunk_types(types, 16);

	for (size_t i = 0; i < ntypes; i++)
		sel[i] = (struct it_select){ 0, IT_ANY, types[i] };
	return it_reader_open_select(path, sel, ntypes, err, errlen);
}

/* The join of machine 0 with target: its estimate into *out (method 0
 * when there is none). 0, or -1 with a reason in err. */
static int estimate_one(const char *path, uint16_t target, struct it_clock_store *out, char *err,
			size_t errlen)
{
	const struct it_layer_opts opts = { .analyzer = IT_ANALYZER_OPTS_DEFAULT,
					    .recompute_clock = true };
	struct it_reader *rd = open_machine0(path, err, errlen);
	const struct it_machine *ms;
	const struct it_clock_est *e;
	struct it_pass_info info;
	struct it_analysis *an;
	uint16_t joined = 0;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!rd)
		return -1;
	ms = it_reader_machines(rd, &n);
	info = (struct it_pass_info){ .path = path, .host = &ms[0].host, .devs = ms[0].devs,
				      .ndevs = ms[0].ndevs, .opts = &opts,
				      .layers = it_pass_layers(rd), .join_machine = target };
	if (!(an = it_analysis_new(&info))) {
		it_reader_close(rd);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = it_analysis_run(an, rd, err, errlen);
	if (rc == -2)
		snprintf(err, errlen, "out of memory");
	e = rc ? NULL : it_layer_fabric_clock(it_analysis_state(an, &it_layer_fabric), &joined);
	if (e && joined == target && e->method != IT_CLOCK_NONE) {
		out->est = (struct it_clock_est_rec){
			.machine = target, .method = (uint16_t)e->method,
			.flags = (e->drift_known ? IT_CLOCK_EST_DRIFT_KNOWN : 0) |
				 (e->all_bounds_meet ? IT_CLOCK_EST_ALL_BOUNDS_MEET : 0),
			.offset_ns = e->offset_ns, .ref_ns = e->ref_ns, .slope = e->slope,
			.drift_bound_ppm = e->drift_bound_ppm, .uncertainty_ns = e->uncertainty_ns,
			.uncertainty_mid_ns = e->uncertainty_mid_ns, .samples = e->samples,
			.rejected = e->rejected, .windows = e->windows, .min_rtt_ns = e->min_rtt_ns,
			.max_rtt_ns = e->max_rtt_ns,
		};
		if (e->windows && !(out->windows = malloc(e->windows * sizeof(*out->windows)))) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
		for (size_t i = 0; !rc && i < e->windows; i++)
			out->windows[i] = (struct it_clock_window_rec){
				e->window[i].at_ns, e->window[i].offset_ns, e->window[i].rtt_ns };
		out->nwindows = rc ? 0 : e->windows;
	}
	it_analysis_free(an);
	it_reader_close(rd);
	return rc ? -1 : 0;
}

int it_clock_store_estimate(const char *path, struct it_clock_store *est, size_t n, char *err,
			    size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		if (estimate_one(path, (uint16_t)(i + 1), &est[i], err, errlen)) {
			it_clock_store_free(est, i);
			return -1;
		}
	return 0;
}

void it_clock_store_free(struct it_clock_store *est, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(est[i].windows);
		est[i].windows = NULL;
		est[i].nwindows = 0;
	}
}
