// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Inline SVG charts (svg.h). Coordinates are written with one decimal:
 * enough for a screen, and what keeps a page of many charts small.
 */
#include <math.h>
#include <string.h>

#include "export/svg.h"

#define ML 72   /* left margin: the y axis' ticks and label */
#define MR 150  /* right margin: the legend */
#define MT 14
#define MB 48   /* bottom: the x axis' ticks and label */
#define NSTYLE 8

/* Colour-blind safe (Okabe-Ito) colours; each series also has its own
 * dash (lines) or fill pattern (bars), so no colour is needed to tell them. */
static const char *const colours[NSTYLE] = {
	"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#999999",
};
static const char *const dashes[NSTYLE] = {
	"", "8 4", "2 3", "10 3 2 3", "4 4", "1 5", "12 6", "6 2 2 2 2 2",
};

void html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* control characters would make the page invalid XML-ish
			 * text in an attribute; none belongs in a name */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
		}
	}
}

void svg_defs(FILE *f)
{
	/* pattern k: colour k, with hatching of angle and spacing of its own */
	static const char *const marks[NSTYLE] = {
		"", "M0 0L0 8", "M0 4L8 4", "M0 0L8 8", "M0 8L8 0", "M2 2h1v1h-1z M6 6h1v1h-1z",
		"M0 0L8 8M0 8L8 0", "M0 2L8 2M0 6L8 6",
	};
	fputs("<svg width=\"0\" height=\"0\" aria-hidden=\"true\" style=\"position:absolute\"><defs>\n", f);
	for (int k = 0; k < NSTYLE; k++)
		fprintf(f, "<pattern id=\"fill%d\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\">"
			"<rect width=\"8\" height=\"8\" fill=\"%s\" fill-opacity=\"0.75\"/>"
			"<path d=\"%s\" stroke=\"#fff\" stroke-width=\"1.5\"/></pattern>\n",
			k, colours[k], marks[k]);
	fputs("</defs></svg>\n", f);
}

struct frame {
	double w, h;               /* plot area */
	double xlo, xhi, ylo, yhi;
	bool xlog;
};

static double px(const struct frame *fr, double x)
{
	double lo = fr->xlo, hi = fr->xhi;

	if (fr->xlog) {
		x = log10(x > 0 ? x : lo);
		lo = log10(lo);
		hi = log10(hi);
	}
	return ML + (hi > lo ? (x - lo) / (hi - lo) : 0.5) * fr->w;
}

static double py(const struct frame *fr, double y)
{
	return MT + fr->h - (fr->yhi > fr->ylo ? (y - fr->ylo) / (fr->yhi - fr->ylo) : 0) * fr->h;
}

/* A step of 1, 2 or 5 times a power of ten giving about n ticks. */
static double nice_step(double span, int n)
{
	double raw = span / n, p = pow(10, floor(log10(raw))), m = raw / p;

	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void fmt_num(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (a >= 1e9)
		snprintf(buf, len, "%gG", v / 1e9);
	else if (a >= 1e6)
		snprintf(buf, len, "%gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(buf, len, "%gk", v / 1e3);
	else
		snprintf(buf, len, "%.4g", v);
}

static void open_svg(FILE *f, const struct svg_chart *c, int w, int h)
{
	fprintf(f, "<svg id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"role=\"img\" aria-labelledby=\"%s-t %s-d\">\n<title id=\"%s-t\">", c->id, w, h, w, h,
		c->id, c->id, c->id);
	html_esc(f, c->title);
	fprintf(f, "</title><desc id=\"%s-d\">", c->id);
	html_esc(f, c->desc);
	fputs("</desc>\n", f);
}

static void text(FILE *f, double x, double y, const char *anchor, const char *extra, const char *s)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y, anchor, extra);
	html_esc(f, s);
	fputs("</text>\n", f);
}

/* The axes, their ticks, grid and labels. */
static void axes(FILE *f, const struct svg_chart *c, const struct frame *fr, bool xticks, bool yticks)
{
	char buf[32];

	fprintf(f, "<g class=\"axis\"><path d=\"M%d %d V%.1f H%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
		ML, MT, MT + fr->h, ML + fr->w);
	double step = nice_step(fr->yhi - fr->ylo, 5);
	for (double y = ceil(fr->ylo / step) * step; yticks && y <= fr->yhi + step * 1e-9; y += step) {
		fprintf(f, "<path d=\"M%d %.1fH%.1f\" stroke=\"#ddd\"/>", ML, py(fr, y), ML + fr->w);
		fmt_num(buf, sizeof(buf), fabs(y) < step * 1e-9 ? 0 : y);
		text(f, ML - 4, py(fr, y) + 4, "end", "", buf);
	}
	if (xticks && fr->xlog) {
		double lo = floor(log10(fr->xlo)), hi = ceil(log10(fr->xhi));
		bool thin = hi - lo < 2; /* less than two decades: 2 and 5 as well */
		for (double e = lo; e <= hi; e++)
			for (int m = 1; m < 10; m++) {
				double x = m * pow(10, e);
				if ((m != 1 && (!thin || (m != 2 && m != 5))) || x < fr->xlo || x > fr->xhi)
					continue;
				fprintf(f, "<path d=\"M%.1f %dV%.1f\" stroke=\"#ddd\"/>", px(fr, x), MT,
					MT + fr->h);
				fmt_num(buf, sizeof(buf), x);
				text(f, px(fr, x), MT + fr->h + 14, "middle", "", buf);
			}
	} else if (xticks) {
		step = nice_step(fr->xhi - fr->xlo, 6);
		for (double x = ceil(fr->xlo / step) * step; x <= fr->xhi + step * 1e-9; x += step) {
			fmt_num(buf, sizeof(buf), fabs(x) < step * 1e-9 ? 0 : x);
			text(f, px(fr, x), MT + fr->h + 14, "middle", "", buf);
		}
	}
	text(f, ML + fr->w / 2, MT + fr->h + 36, "middle", " class=\"label\"", c->xlabel);
	fprintf(f, "<text class=\"label\" text-anchor=\"middle\" transform=\"translate(14 %.1f) "
		"rotate(-90)\">", MT + fr->h / 2);
	html_esc(f, c->ylabel);
	fputs("</text></g>\n", f);
}

/* The legend in the right margin: a swatch (dash or pattern) and the label. */
static void legend(FILE *f, const struct frame *fr, const struct svg_series *s, size_t ns, bool fill)
{
	for (size_t i = 0; i < ns; i++) {
		double x = ML + fr->w + 12, y = MT + 8 + 16.0 * (double)i;
		if (fill)
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" fill=\"url(#fill%zu)\" "
				"stroke=\"%s\"/>", x, y - 5, i % NSTYLE, colours[i % NSTYLE]);
		else
			fprintf(f, "<path d=\"M%.1f %.1fh22\" stroke=\"%s\" stroke-width=\"2\" "
				"stroke-dasharray=\"%s\"/>", x, y, colours[i % NSTYLE], dashes[i % NSTYLE]);
		text(f, x + 26, y + 4, "start", "", s[i].label);
	}
}

static void frame_init(struct frame *fr, const struct svg_chart *c, int *w, int *h)
{
	*w = c->w ? c->w : 640;
	*h = c->h ? c->h : 280;
	*fr = (struct frame){ .w = *w - ML - MR, .h = *h - MT - MB, .xlog = c->xlog };
}

void svg_lines(FILE *f, const struct svg_chart *c, const struct svg_series *s, size_t ns)
{
	struct frame fr;
	int w, h;
	bool any = false;

	frame_init(&fr, c, &w, &h);
	for (size_t i = 0; i < ns; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			double x = s[i].x[k], y = s[i].y[k];
			if (c->xlog && x <= 0)
				continue;
			if (!any || x < fr.xlo)
				fr.xlo = x;
			if (!any || x > fr.xhi)
				fr.xhi = x;
			if (y > fr.yhi)
				fr.yhi = y;
			any = true;
		}
	if (c->xlog && any) { /* whole decades at the ends when the range is wide */
		if (fr.xhi / fr.xlo > 100) {
			fr.xlo = pow(10, floor(log10(fr.xlo)));
			fr.xhi = pow(10, ceil(log10(fr.xhi)));
		}
	} else if (!any) {
		fr.xhi = 1;
	}
	if (fr.yhi <= 0)
		fr.yhi = 1;
	fr.yhi *= 1.05;
	open_svg(f, c, w, h);
	axes(f, c, &fr, true, true);
	for (size_t i = 0; i < ns; i++) {
		bool first = true;
		fprintf(f, "<path class=\"mark\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
			"stroke-dasharray=\"%s\" aria-label=\"", colours[i % NSTYLE], dashes[i % NSTYLE]);
		html_esc(f, s[i].label);
		fputs("\" d=\"", f);
		for (size_t k = 0; k < s[i].n; k++) {
			if (c->xlog && s[i].x[k] <= 0)
				continue;
			fprintf(f, "%s%.1f %.1f", first ? "M" : "L", px(&fr, s[i].x[k]), py(&fr, s[i].y[k]));
			first = false;
		}
		if (first) /* nothing to draw: a point at the origin keeps the path valid */
			fprintf(f, "M%d %.1f", ML, MT + fr.h);
		fputs("\"/>\n", f);
		/* few points (a short trace: one interval is a point, no line):
		 * each one drawn as a square of the series' colour */
		for (size_t k = 0; s[i].n <= 60 && k < s[i].n; k++)
			if (!c->xlog || s[i].x[k] > 0)
				fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"5\" height=\"5\" fill=\"%s\"/>",
					px(&fr, s[i].x[k]) - 2.5, py(&fr, s[i].y[k]) - 2.5, colours[i % NSTYLE]);
	}
	legend(f, &fr, s, ns, false);
	fputs("</svg>\n", f);
}

void svg_bars(FILE *f, const struct svg_chart *c, const char *const *cats, size_t ncats,
	      const struct svg_series *s, size_t ns)
{
	struct frame fr;
	int w, h;

	frame_init(&fr, c, &w, &h);
	for (size_t i = 0; i < ns; i++)
		for (size_t k = 0; k < ncats; k++)
			if (s[i].y[k] > fr.yhi)
				fr.yhi = s[i].y[k];
	fr.yhi = fr.yhi > 0 ? fr.yhi * 1.05 : 1;
	open_svg(f, c, w, h);
	axes(f, c, &fr, false, true);
	double gw = fr.w / (double)(ncats ? ncats : 1), bw = gw * 0.8 / (double)(ns ? ns : 1);
	size_t every = ncats > 0 ? (ncats * 40 + (size_t)fr.w - 1) / (size_t)fr.w : 1; /* labels 40 px apart */
	for (size_t k = 0; k < ncats; k++) {
		if (!(k % (every ? every : 1)))
			text(f, ML + gw * ((double)k + 0.5), MT + fr.h + 14, "middle", "", cats[k]);
		for (size_t i = 0; i < ns; i++) {
			double y = s[i].y[k];
			fprintf(f, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"url(#fill%zu)\" stroke=\"%s\"><title>", ML + gw * (double)k + gw * 0.1 +
				bw * (double)i, py(&fr, y), bw, MT + fr.h - py(&fr, y), i % NSTYLE,
				colours[i % NSTYLE]);
			html_esc(f, s[i].label);
			fprintf(f, " ");
			html_esc(f, cats[k]);
			fprintf(f, ": %.4g</title></rect>\n", y);
		}
	}
	legend(f, &fr, s, ns, true);
	fputs("</svg>\n", f);
}

void svg_stacked(FILE *f, const struct svg_chart *c, const char *const *rows, size_t nrows,
		 const char *const *parts, size_t nparts, const double *v)
{
	const double rh = 26, lw = 150; /* row height, room for the row names */
	struct frame fr;
	int w, h;

	frame_init(&fr, c, &w, &h);
	h = (int)(MT + MB + rh * (double)nrows);
	fr.h = rh * (double)nrows;
	fr.w -= lw;
	for (size_t r = 0; r < nrows; r++) {
		double sum = 0;
		for (size_t k = 0; k < nparts; k++)
			sum += v[r * nparts + k];
		if (sum > fr.xhi)
			fr.xhi = sum;
	}
	if (fr.xhi <= 0)
		fr.xhi = 1;
	fr.yhi = 1;
	open_svg(f, c, w, h);
	fprintf(f, "<g transform=\"translate(%.0f 0)\">\n", lw);
	axes(f, &(struct svg_chart){ .xlabel = c->xlabel, .ylabel = "" }, &fr, true, false);
	fputs("</g>\n", f);
	for (size_t r = 0; r < nrows; r++) {
		double x = ML + lw, y = MT + rh * (double)r + 4;
		text(f, ML + lw - 6, y + rh / 2, "end", "", rows[r]);
		for (size_t k = 0; k < nparts; k++) {
			double val = v[r * nparts + k], wd = val / fr.xhi * fr.w;
			if (val <= 0)
				continue;
			fprintf(f, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"url(#fill%zu)\" stroke=\"%s\"><title>", x, y, wd, rh - 8, k % NSTYLE,
				colours[k % NSTYLE]);
			html_esc(f, rows[r]);
			fputs(" ", f);
			html_esc(f, parts[k]);
			fprintf(f, ": %.4g</title></rect>\n", val);
			if (wd > 34) /* the part's name on it, when it fits */
				text(f, x + wd / 2, y + rh / 2, "middle", " class=\"onbar\"", parts[k]);
			x += wd;
		}
	}
	struct svg_series s[nparts ? nparts : 1];
	for (size_t k = 0; k < nparts; k++)
		s[k] = (struct svg_series){ .label = parts[k] };
	fr.w += lw;
	legend(f, &fr, s, nparts, true);
	fputs("</svg>\n", f);
}

void svg_heatmap(FILE *f, const struct svg_chart *c, size_t n, size_t cols, const double *v,
		 const char *const *tip)
{
	struct frame fr;
	int w, h;
	double max = 0;

	frame_init(&fr, c, &w, &h);
	if (!cols)
		cols = 1;
	size_t rows = (n + cols - 1) / cols;
	double cell = fr.w / (double)cols;
	if (cell > 16)
		cell = 16;
	h = (int)(MT + MB + cell * (double)rows);
	for (size_t i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	open_svg(f, c, w, h);
	for (size_t i = 0; i < n; i++) {
		/* light (nothing) to dark (the busiest); the shade is a level,
		 * its value is in the cell's title and the table below */
		double q = max > 0 ? v[i] / max : 0;
		fprintf(f, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"hsl(210,70%%,%.0f%%)\" stroke=\"#fff\" stroke-width=\"0.5\"><title>",
			ML + cell * (double)(i % cols), MT + cell * (double)(i / cols), cell, cell,
			96 - q * 70);
		html_esc(f, tip[i]);
		fputs("</title></rect>\n", f);
	}
	char buf[64];
	double y = MT + cell * (double)rows + 16;
	text(f, ML, y, "start", " class=\"label\"", c->xlabel);
	for (int k = 0; k <= 4; k++)
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"20\" height=\"10\" fill=\"hsl(210,70%%,%.0f%%)\" "
			"stroke=\"#999\"/>", ML + fr.w - 110 + 22.0 * k, y - 9, 96 - k * 17.5);
	snprintf(buf, sizeof(buf), "0 .. %.4g", max);
	text(f, ML + fr.w - 116, y, "end", "", buf);
	fputs("</svg>\n", f);
}
