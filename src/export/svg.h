/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Inline SVG charts for the HTML report, drawn by us (no script, no
 * library): line charts, grouped bars, stacked horizontal bars and a heat
 * map. Every chart is an <svg role="img"> with its <title> and <desc>,
 * axis labels with units, and series told apart by dash or fill pattern
 * and by a text label, not by colour alone. Each data mark (a line, a
 * bar, a cell) has class="mark", so a test can count what was drawn.
 */
#ifndef IOTRAIL_EXPORT_SVG_H
#define IOTRAIL_EXPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The page's shared definitions (fill patterns), once before any chart. */
void svg_defs(FILE *f);

/* Writes s with &, <, >, " and ' escaped (text and attribute values). */
void html_esc(FILE *f, const char *s);

struct svg_chart {
	const char *id;          /* unique in the page */
	const char *title, *desc;
	const char *xlabel, *ylabel; /* with their units */
	bool xlog;               /* log10 x axis (values > 0) */
	int w, h;                /* 0: 640 x 280 */
};

struct svg_series {
	const char *label;
	size_t n;
	const double *x, *y;     /* line charts: n points; bars: y only, one per category */
};

/* Lines over (x, y) points; the axes span the data (y from 0). */
void svg_lines(FILE *f, const struct svg_chart *c, const struct svg_series *s, size_t ns);
/* Vertical bars: ncats categories, a bar per series in each. */
void svg_bars(FILE *f, const struct svg_chart *c, const char *const *cats, size_t ncats,
	      const struct svg_series *s, size_t ns);
/* Horizontal stacked bars: a row per rows[i], parts v[i * nparts + k]. */
void svg_stacked(FILE *f, const struct svg_chart *c, const char *const *rows, size_t nrows,
		 const char *const *parts, size_t nparts, const double *v);
/* A grid of n cells, cols a row, shaded by v[i] / max; tip[i] is each
 * cell's tooltip (its <title>: the values in words). */
void svg_heatmap(FILE *f, const struct svg_chart *c, size_t n, size_t cols, const double *v,
		 const char *const *tip);

#endif
