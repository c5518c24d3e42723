/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail report --html`: the report as one self-contained HTML page
 * (no script, no request: its Content-Security-Policy forbids them) with
 * inline SVG charts (svg.h) drawn from the analyzer's results after the
 * one pass, as the text and JSON printers are.
 */
#ifndef IOTRAIL_EXPORT_HTML_H
#define IOTRAIL_EXPORT_HTML_H

#include <stdio.h>

#include "analyze/report.h"

struct it_sysan_results;

struct it_fabric_results;
struct it_html_input {
	const struct it_report_input *in;    /* the block layer's results and the trace's facts */
	const struct it_sysan_results *sys;  /* the syscall layer's, NULL without one */
	const struct it_fabric_results *fabric; /* the fabric view's, NULL without one */
};

/* Groups drawn one by one (latency CDF, histograms); the table lists all. */
#define IT_HTML_GROUPS 12
/* Threads drawn in the calls-per-second chart (the busiest). */
#define IT_HTML_THREADS 8
/* Points of a chart over time at most (intervals summed in runs). */
#define IT_HTML_POINTS 400

void it_report_html(FILE *f, const struct it_html_input *h);

/* `iotrail diff --html`: per group, the LAD (loaded / base, at avg and
 * p50) of each stage as bars, the bottleneck named, the values in a table. */
struct it_diff;
void it_diff_html(const struct it_diff *d, FILE *f);

#endif
