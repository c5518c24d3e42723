// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The HTML report (html.h): the same results the text report prints,
 * drawn. Every chart's data is also in a table (a <details> under it)
 * where that is cheap, so a screen reader or a copy-paste gets numbers.
 * Every string from the trace (host, command, process names, paths,
 * device names) goes through html_esc.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/diff.h"
#include "analyze/nvme.h"
#include "analyze/zones.h"
#include "export/html.h"
#include "export/svg.h"
#include "layers/fabric/fabric.h"
#include "layers/syscall/sysan.h"
#include "tracefile.h"

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }
static double us(uint64_t ns) { return (double)ns / 1000.0; }

static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#111}"
	"h1{font-size:1.4em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}"
	"h3{font-size:1.05em}table{border-collapse:collapse;margin:.5em 0}"
	"td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f3f3f3}"
	"td.k,th.k{text-align:left}figure{margin:1em 0}figcaption{font-weight:600}"
	"svg.chart text{font-size:11px;fill:#222}svg.chart text.label{font-size:12px;font-weight:600}"
	"svg.chart text.onbar{font-size:11px;fill:#000;paint-order:stroke;stroke:#fff;stroke-width:3px}"
	".small{display:inline-block;vertical-align:top}.note{color:#8a4b00}";

/* <figure> with its caption; the chart and </figure> follow. */
static void figure_open(FILE *f, bool small, const char *caption)
{
	fputs(small ? "<figure class=\"small\"><figcaption>" : "<figure><figcaption>", f);
	html_esc(f, caption);
	fputs("</figcaption>\n", f);
}

/* The group's name from its keys: "read nvme0n1 fio 1234". */
static void group_name(char *buf, size_t len, const struct it_report_input *in, const struct it_group *g)
{
	const struct it_results *r = in->r;
	size_t off = 0;
	char tmp[64];

	buf[0] = 0;
	for (unsigned k = 0; k < r->nkeys && off < len; k++) {
		const char *v = "";
		switch (r->keys[k]) {
		case IT_KEY_OP: v = it_op_name(g->key.op); break;
		case IT_KEY_DEV: v = it_report_dev_name(in, g->key.dev, tmp, sizeof(tmp)); break;
		case IT_KEY_COMM: v = it_analyzer_comm(in->a, g->key.comm); break;
		case IT_KEY_ROLE: v = it_analyzer_role(in->a, g->key.role); break;
		case IT_KEY_PID: snprintf(tmp, sizeof(tmp), "pid %u", g->key.pid); v = tmp; break;
		case IT_KEY_SIZE:
			snprintf(tmp, sizeof(tmp), ">=%lluB",
				 (unsigned long long)it_size_class_lo(g->key.size_class));
			v = tmp;
			break;
		}
		int n = snprintf(buf + off, len - off, "%s%s", k ? " " : "", v);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (!r->nkeys)
		snprintf(buf, len, "all I/O");
}

static void header(FILE *f, const struct it_report_input *in)
{
	const struct it_host_rec *h = in->host;
	const struct it_results *r = in->r;
	const struct it_stitch_stats *s = &r->stats;

	fputs("<h1>iotrail report", f);
	if (in->path) {
		fputs(": ", f);
		html_esc(f, in->path);
	}
	fputs("</h1>\n<table>\n", f);
	if (h) {
		char when[64] = "not recorded";
		time_t t = (time_t)(h->start_realtime_ns / 1000000000ull);
		struct tm tm;
		if (h->start_realtime_ns && gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		/* the record's strings may fill their arrays without a NUL */
		char host[sizeof(h->hostname) + 1], kernel[sizeof(h->kernel) + 1], cmd[sizeof(h->command) + 1];
		snprintf(host, sizeof(host), "%.*s", (int)sizeof(h->hostname), h->hostname);
		snprintf(kernel, sizeof(kernel), "%.*s", (int)sizeof(h->kernel), h->kernel);
		snprintf(cmd, sizeof(cmd), "%.*s", (int)sizeof(h->command), h->command);
		fputs("<tr><th class=\"k\">host</th><td class=\"k\">", f);
		html_esc(f, host);
		fputs(", kernel ", f);
		html_esc(f, kernel);
		fprintf(f, ", %u CPUs</td></tr>\n<tr><th class=\"k\">recorded</th><td class=\"k\">%s, for "
			"%.3f s</td></tr>\n", h->ncpus, when, r->duration_s);
		if (cmd[0]) {
			fputs("<tr><th class=\"k\">command</th><td class=\"k\">", f);
			html_esc(f, cmd);
			fputs("</td></tr>\n", f);
		}
	}
	fprintf(f, "<tr><th class=\"k\">I/Os</th><td class=\"k\">%llu completed, %.1f MiB; %llu events; "
		"%llu errors, %llu requeues, %llu without Q</td></tr>\n",
		(unsigned long long)s->ios, mib(s->bytes), (unsigned long long)s->events,
		(unsigned long long)s->errors, (unsigned long long)s->requeues,
		(unsigned long long)s->no_q);
	if (in->status) {
		const struct it_reader_status *st = in->status;
		fprintf(f, "<tr><th class=\"k\">losses</th><td class=\"k\">%llu records dropped",
			(unsigned long long)st->dropped_total);
		if (st->missed_known)
			fprintf(f, ", %llu probe runs missed", (unsigned long long)st->missed);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (in->status && in->status->truncated) {
		fputs("<p class=\"note\">The file is cut short: ", f);
		html_esc(f, in->status->reason);
		fputs("; this report covers what came before.</p>\n", f);
	}
	if (s->incomplete || s->lost)
		fprintf(f, "<p class=\"note\">%llu I/Os were still open at the end and %llu were given "
			"up (their completion was lost): they are not in the charts.</p>\n",
			(unsigned long long)s->incomplete, (unsigned long long)s->lost);
}

/* The groups drawn one by one: the IT_HTML_GROUPS with the most I/Os, in
 * the results' order. Returns how many (idx[]). */
static size_t top_groups(const struct it_results *r, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < r->ngroups; i++) {
		if (!r->groups[i].count)
			continue;
		if (n < IT_HTML_GROUPS) {
			idx[n++] = i;
			continue;
		}
		size_t least = 0; /* replace the smallest kept one if this one is larger */
		for (size_t k = 1; k < n; k++)
			if (r->groups[idx[k]].count < r->groups[idx[least]].count)
				least = k;
		if (r->groups[i].count > r->groups[idx[least]].count) {
			memmove(idx + least, idx + least + 1, (n - least - 1) * sizeof(*idx));
			idx[n - 1] = i;
		}
	}
	return n;
}

static void latency_table(FILE *f, const struct it_report_input *in)
{
	const struct it_results *r = in->r;
	char name[256];

	fputs("<table><caption>Latency (Q2C) by group, microseconds</caption>\n<tr><th class=\"k\">group</th>"
	      "<th>I/Os</th><th>MiB</th><th>avg</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th>"
	      "<th>max</th></tr>\n", f);
	for (size_t i = 0; i < r->ngroups; i++) {
		const struct it_group *g = &r->groups[i];
		const struct it_hist *h = &g->stage[IT_STAGE_Q2C];
		uint64_t p[IT_NPCT];
		it_hist_percentiles(h, it_report_pcts, IT_NPCT, p);
		group_name(name, sizeof(name), in, g);
		fputs("<tr><td class=\"k\">", f);
		html_esc(f, name);
		fprintf(f, "</td><td>%llu</td><td>%.1f</td><td>%.1f</td>", (unsigned long long)g->count,
			mib(g->bytes), us(it_hist_avg(h)));
		for (unsigned k = 0; k < IT_NPCT; k++)
			fprintf(f, "<td>%.1f</td>", us(p[k]));
		fprintf(f, "<td>%.1f</td></tr>\n", us(h->count ? h->max : 0));
	}
	fputs("</table>\n", f);
}

/* The histogram's bins summed into quarter-octaves (2^(k/4)): the CDF's
 * points (x: the bin's upper end, us; y: percent at or below) and the
 * histogram's bars (percent in the bin), after a first point at 0 percent
 * (the lowest bin's lower end). Returns the number of points: the bins
 * + 1, or 0 for an empty histogram. */
#define QBINS (4 * 50)
static size_t quarter_octaves(const struct it_hist *h, double *x, double *cdf, double *pct,
			      char (*lab)[16])
{
	double cnt[QBINS] = { 0 };
	int lo = QBINS, hi = -1;

	for (unsigned c = 0; c < IT_HIST_NCHUNKS; c++) {
		if (h->chunk && !h->chunk[c])
			continue;
		for (unsigned k = 0; k < IT_HIST_SUB; k++) {
			uint64_t n = it_hist_bin(h, c * IT_HIST_SUB + k);
			if (!n)
				continue;
			uint64_t v = it_hist_bin_mid(c * IT_HIST_SUB + k);
			int b = v ? (int)floor(4 * log2((double)v)) : 0;
			if (b >= QBINS)
				b = QBINS - 1;
			cnt[b] += (double)n;
			if (b < lo)
				lo = b;
			if (b > hi)
				hi = b;
		}
	}
	size_t n = 0;
	double sum = 0;
	if (hi < 0)
		return 0;
	/* the CDF starts at 0 at the lowest bin's lower end */
	x[n] = pow(2, lo / 4.0) / 1000.0;
	cdf[n] = 0;
	pct[n] = 0;
	snprintf(lab[n], sizeof(lab[n]), "%.3g", x[n]);
	n++;
	for (int b = lo; b <= hi; b++, n++) {
		sum += cnt[b];
		x[n] = pow(2, (b + 1) / 4.0) / 1000.0;
		cdf[n] = h->count ? 100.0 * sum / (double)h->count : 0;
		pct[n] = h->count ? 100.0 * cnt[b] / (double)h->count : 0;
		snprintf(lab[n], sizeof(lab[n]), "%.3g", pow(2, b / 4.0) / 1000.0);
	}
	return n;
}

static void group_charts(FILE *f, const struct it_report_input *in, size_t gi)
{
	const struct it_group *g = &in->r->groups[gi];
	static double x[IT_STAGE_MAX][QBINS + 1], cdf[IT_STAGE_MAX][QBINS + 1], pct[QBINS + 1];
	static char lab[QBINS + 1][16];
	struct svg_series s[IT_STAGE_MAX];
	char name[256], id[64], title[400], desc[600];
	size_t ns = 0;

	group_name(name, sizeof(name), in, g);
	fputs("<h3>", f);
	html_esc(f, name);
	fprintf(f, " (%llu I/Os)</h3>\n", (unsigned long long)g->count);
	for (unsigned st = 0; st < IT_STAGE_MAX; st++) {
		if (!g->stage[st].count)
			continue;
		size_t n = quarter_octaves(&g->stage[st], x[ns], cdf[ns], pct, lab);
		s[ns] = (struct svg_series){ .label = it_stages[st].name, .n = n, .x = x[ns],
					     .y = cdf[ns] };
		ns++;
	}
	snprintf(id, sizeof(id), "cdf-g%zu", gi);
	snprintf(title, sizeof(title), "Latency CDF of %s, per stage", name);
	snprintf(desc, sizeof(desc), "Percent of the group's I/Os (y) that spent at most x microseconds "
		 "(log scale) in each stage: %zu stages, Q2C is the total.", ns);
	figure_open(f, false, title);
	svg_lines(f, &(struct svg_chart){ .id = id, .title = title, .desc = desc,
					  .xlabel = "latency (us, log scale)",
					  .ylabel = "I/Os at or below (%)", .xlog = true }, s, ns);
	fputs("</figure>\n", f);
	/* a histogram per stage, small, side by side */
	for (unsigned st = 0; st < IT_STAGE_MAX; st++) {
		if (!g->stage[st].count)
			continue;
		double xx[QBINS + 1], cc[QBINS + 1];
		/* the bins after the CDF's starting point */
		size_t n = quarter_octaves(&g->stage[st], xx, cc, pct, lab) - 1;
		const char *cats[QBINS];
		for (size_t k = 0; k < n; k++)
			cats[k] = lab[k + 1];
		snprintf(id, sizeof(id), "hist-g%zu-%s", gi, it_stages[st].name);
		snprintf(title, sizeof(title), "%s histogram of %s", it_stages[st].name, name);
		snprintf(desc, sizeof(desc), "Percent of the group's I/Os (y) by %s time, in bins a "
			 "quarter of an octave wide, labelled by their lower end in microseconds (x): %s.",
			 it_stages[st].name, it_stages[st].what);
		figure_open(f, true, title);
		svg_bars(f, &(struct svg_chart){ .id = id, .title = title, .desc = desc,
						 .xlabel = "latency (us, bin's lower end)",
						 .ylabel = "I/Os (%)", .w = 520, .h = 220 },
			 cats, n, &(struct svg_series){ .label = it_stages[st].name, .y = pct + 1 }, 1);
		fputs("</figure>\n", f);
	}
}

/* The disjoint stages (they add up to Q2C): their mean time per I/O. */
static const unsigned parts_of_q2c[] = { IT_STAGE_Q2I, IT_STAGE_I2D, IT_STAGE_Q2D, IT_STAGE_D2C };
#define NPARTS (sizeof(parts_of_q2c) / sizeof(parts_of_q2c[0]))

static void stage_breakdown(FILE *f, const struct it_report_input *in, const size_t *idx, size_t n)
{
	static char names[IT_HTML_GROUPS][256];
	const char *rows[IT_HTML_GROUPS], *parts[NPARTS];
	double v[IT_HTML_GROUPS * NPARTS];

	for (size_t k = 0; k < NPARTS; k++)
		parts[k] = it_stages[parts_of_q2c[k]].name;
	for (size_t i = 0; i < n; i++) {
		const struct it_group *g = &in->r->groups[idx[i]];
		group_name(names[i], sizeof(names[i]), in, g);
		rows[i] = names[i];
		for (size_t k = 0; k < NPARTS; k++) /* the stage's time summed, per I/O of the group */
			v[i * NPARTS + k] = g->count ? us(g->stage[parts_of_q2c[k]].sum) / (double)g->count : 0;
	}
	fputs("<h2 id=\"stages\">Stage breakdown</h2>\n<figure><figcaption>Mean time per I/O in each "
	      "stage (Q2I + I2D or Q2D + D2C = Q2C)</figcaption>\n", f);
	svg_stacked(f, &(struct svg_chart){ .id = "stages-chart", .title = "Stage breakdown by group",
					    .desc = "For each group, a bar of its mean latency split into "
						    "the stages that add up to it: Q2I (queued to inserted), "
						    "I2D (inserted to issued), Q2D (queued to issued directly), "
						    "D2C (issued to completed: driver and device).",
					    .xlabel = "mean time per I/O (us)" },
		    rows, n, parts, NPARTS, v);
	fputs("<details><summary>Table: share of each stage</summary><table><tr><th class=\"k\">group</th>", f);
	for (size_t k = 0; k < NPARTS; k++)
		fprintf(f, "<th>%s us</th><th>%s share</th>", parts[k], parts[k]);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct it_group *g = &in->r->groups[idx[i]];
		fputs("<tr><td class=\"k\">", f);
		html_esc(f, rows[i]);
		fputs("</td>", f);
		for (size_t k = 0; k < NPARTS; k++)
			fprintf(f, "<td>%.1f</td><td>%.1f%%</td>", v[i * NPARTS + k],
				100 * it_stage_share(g, parts_of_q2c[k]));
		fputs("</tr>\n", f);
	}
	fputs("</table></details></figure>\n", f);
}

/* The fabric view's top stages in path order: host.block + command +
 * host.done = io, host.out + target + host.in = command. */
static const unsigned fabric_parts[] = { IT_FS_HOST_BLOCK, IT_FS_HOST_OUT, IT_FS_TARGET,
					 IT_FS_HOST_IN, IT_FS_HOST_DONE };
#define NFABRIC_PARTS (sizeof(fabric_parts) / sizeof(fabric_parts[0]))
#define FABRIC_OPS 16 /* opcodes drawn at most (the text report has them all) */

/* NVMe/TCP: per opcode of the matched commands, a bar of its mean time
 * per command split into the fabric's top stages. */
static void fabric_breakdown(FILE *f, const struct it_fabric_results *fr)
{
	static char names[FABRIC_OPS][32];
	const char *rows[FABRIC_OPS], *parts[NFABRIC_PARTS];
	double v[FABRIC_OPS * NFABRIC_PARTS];
	size_t n = 0;

	for (size_t i = 0; i < fr->nops && n < FABRIC_OPS; i++) {
		const struct it_fabric_op *o = &fr->ops[i];
		if (!o->count)
			continue;
		rows[n] = it_nvme_opcode_name(o->opcode, o->admin, names[n], sizeof(names[n]));
		for (size_t k = 0; k < NFABRIC_PARTS; k++) /* summed, per matched command */
			v[n * NFABRIC_PARTS + k] = us(o->stage[fabric_parts[k]].sum) / (double)o->count;
		n++;
	}
	if (!n)
		return;
	for (size_t k = 0; k < NFABRIC_PARTS; k++)
		parts[k] = it_fabric_stages[fabric_parts[k]].name;
	fputs("<h2 id=\"fabric\">Fabric (NVMe/TCP) stage breakdown</h2>\n<figure><figcaption>Mean "
	      "time per matched command in each stage (host.out + target + host.in = command; "
	      "with the request's block trail, host.block + command + host.done = io)"
	      "</figcaption>\n", f);
	svg_stacked(f, &(struct svg_chart){ .id = "fabric-stages", .title = "Fabric stage breakdown by opcode",
					    .desc = "For each NVMe opcode of the commands matched to "
						    "their target command, a bar of its mean time split into "
						    "host.block (initiator's block layer), host.out (send, "
						    "network, target receive), target (the target's execution), "
						    "host.in (response back) and host.done (initiator's "
						    "completion).",
					    .xlabel = "mean time per command (us)" },
		    rows, n, parts, NFABRIC_PARTS, v);
	fputs("<details><summary>Table: mean us per command</summary><table><tr><th class=\"k\">"
	      "opcode</th><th>commands</th>", f);
	for (size_t k = 0; k < NFABRIC_PARTS; k++)
		fprintf(f, "<th>%s us</th>", parts[k]);
	fputs("</tr>\n", f);
	for (size_t i = 0, r = 0; i < fr->nops && r < n; i++) {
		if (!fr->ops[i].count)
			continue;
		fputs("<tr><td class=\"k\">", f);
		html_esc(f, rows[r]);
		fprintf(f, "</td><td>%llu</td>", (unsigned long long)fr->ops[i].count);
		for (size_t k = 0; k < NFABRIC_PARTS; k++)
			fprintf(f, "<td>%.1f</td>", v[r * NFABRIC_PARTS + k]);
		fputs("</tr>\n", f);
		r++;
	}
	fputs("</table></details></figure>\n", f);
}

/* A device's IOPS, MiB/s and mean I/Os in flight over time, intervals
 * summed in runs so that at most IT_HTML_POINTS are drawn. */
static void device_timeline(FILE *f, const struct it_report_input *in, const struct it_dev_stats *d,
			    const char *dname, size_t di)
{
	const struct it_results *r = in->r;
	size_t step = (d->ntimeline + IT_HTML_POINTS - 1) / IT_HTML_POINTS, n = 0;
	static double t[IT_HTML_POINTS], iops[IT_OPC_MAX][IT_HTML_POINTS],
		mibs[IT_OPC_MAX][IT_HTML_POINTS], qd[IT_HTML_POINTS];
	char id[64], title[300];

	if (!d->ntimeline)
		return;
	if (!step)
		step = 1;
	for (size_t k0 = 0; k0 < d->ntimeline && n < IT_HTML_POINTS; k0 += step, n++) {
		uint64_t ios[IT_OPC_MAX] = { 0 }, bytes[IT_OPC_MAX] = { 0 }, lat = 0;
		double dur = 0;
		for (size_t k = k0; k < k0 + step && k < d->ntimeline; k++) {
			for (unsigned o = 0; o < IT_OPC_MAX; o++) {
				ios[o] += d->timeline[k].ios[o];
				bytes[o] += d->timeline[k].bytes[o];
			}
			lat += d->timeline[k].latency_ns;
			dur += it_timeline_dur(r, k);
		}
		if (dur <= 0)
			dur = 1e-9;
		/* plotted at the middle of the interval */
		t[n] = ((double)k0 + (double)step / 2) * (double)r->interval_ns / 1e9;
		for (unsigned o = 0; o < IT_OPC_MAX; o++) {
			iops[o][n] = (double)ios[o] / dur;
			mibs[o][n] = mib(bytes[o]) / dur;
		}
		qd[n] = (double)lat / 1e9 / dur;
	}
	struct svg_series s[IT_OPC_MAX], m[IT_OPC_MAX];
	for (unsigned o = 0; o < IT_OPC_MAX; o++) {
		s[o] = (struct svg_series){ .label = it_opc_names[o], .n = n, .x = t, .y = iops[o] };
		m[o] = (struct svg_series){ .label = it_opc_names[o], .n = n, .x = t, .y = mibs[o] };
	}
	double iv = (double)r->interval_ns * (double)step / 1e9;
	char desc[300];
	struct { const char *what, *unit, *ylabel; const struct svg_series *s; size_t ns; } ch[3] = {
		{ "IOPS", "iops", "I/Os per second", s, IT_OPC_MAX },
		{ "MiB/s", "mibs", "MiB per second", m, IT_OPC_MAX },
		{ "Queue depth", "inflight", "mean I/Os in flight",
		  &(struct svg_series){ .label = "in flight", .n = n, .x = t, .y = qd }, 1 },
	};
	for (unsigned c = 0; c < 3; c++) {
		snprintf(id, sizeof(id), "%s-d%zu", ch[c].unit, di);
		snprintf(title, sizeof(title), "%s over time, %s", ch[c].what, dname);
		snprintf(desc, sizeof(desc), c < 2 ? "Reads, writes and other I/Os completed per %g s "
			 "interval (x: seconds since the start), as a rate." :
			 "The mean number of I/Os in flight on the device per %g s interval: the "
			 "latencies of the I/Os completing in it, summed, over its length (Little's law).",
			 iv);
		figure_open(f, true, title);
		svg_lines(f, &(struct svg_chart){ .id = id, .title = title, .desc = desc,
						  .xlabel = "time since start (s)", .ylabel = ch[c].ylabel,
						  .w = 540, .h = 240 }, ch[c].s, ch[c].ns);
		fputs("</figure>\n", f);
	}
}

static void device_qd(FILE *f, const struct it_dev_stats *d, const char *dname, size_t di)
{
	static char lab[IT_QD_BUCKETS][16];
	const char *cats[IT_QD_BUCKETS];
	double pct[2][IT_QD_BUCKETS];
	const uint64_t *exact[2] = { d->qd_insert, d->qd_issue };
	char id[64], title[300];
	uint64_t sampled = 0;

	for (unsigned k = 0; k < IT_QD_BUCKETS; k++) {
		uint32_t lo, hi;
		it_qd_bucket_range(k, &lo, &hi);
		if (!hi)
			snprintf(lab[k], sizeof(lab[k]), ">%u", lo - 1);
		else if (lo == hi)
			snprintf(lab[k], sizeof(lab[k]), "%u", lo);
		else
			snprintf(lab[k], sizeof(lab[k]), "%u-%u", lo, hi);
		cats[k] = lab[k];
	}
	for (unsigned i = 0; i < 2; i++) {
		uint64_t b[IT_QD_BUCKETS];
		double avg;
		uint64_t n = it_qd_buckets(exact[i], b, &avg);
		sampled += n;
		for (unsigned k = 0; k < IT_QD_BUCKETS; k++)
			pct[i][k] = n ? 100.0 * (double)b[k] / (double)n : 0;
	}
	if (!sampled) { /* traces of version 1 */
		fputs("<p class=\"note\">The queue depth was not sampled in this trace.</p>\n", f);
		return;
	}
	struct svg_series s[2] = { { .label = "at insert", .y = pct[0] }, { .label = "at issue", .y = pct[1] } };
	snprintf(id, sizeof(id), "qd-d%zu", di);
	snprintf(title, sizeof(title), "I/Os by queue depth, %s", dname);
	figure_open(f, true, title);
	svg_bars(f, &(struct svg_chart){ .id = id, .title = title,
					 .desc = "Percent of the device's I/Os (y) by the number of "
						 "requests in flight on it, counting itself (x), when the "
						 "I/O entered the queue and when it was issued.",
					 .xlabel = "requests in flight", .ylabel = "I/Os (%)", .w = 540,
					 .h = 240 }, cats, IT_QD_BUCKETS, s, 2);
	fputs("<details><summary>Table</summary><table><tr><th class=\"k\">depth</th><th>at insert %</th>"
	      "<th>at issue %</th></tr>\n", f);
	for (unsigned k = 0; k < IT_QD_BUCKETS; k++)
		fprintf(f, "<tr><td class=\"k\">%s</td><td>%.1f</td><td>%.1f</td></tr>\n", lab[k],
			pct[0][k], pct[1][k]);
	fputs("</table></details></figure>\n", f);
}

static void device_sizes(FILE *f, const struct it_dev_stats *d, const char *dname, size_t di)
{
	static char lab[IT_SIZE_CLASSES][24];
	const char *cats[IT_SIZE_CLASSES];
	double v[IT_OPC_MAX][IT_SIZE_CLASSES];
	size_t n = 0;
	int lo = -1, hi = -1;
	char id[64], title[300];

	for (int c = 0; c < IT_SIZE_CLASSES; c++)
		if (d->sizes[c][0] + d->sizes[c][1] + d->sizes[c][2]) {
			if (lo < 0)
				lo = c;
			hi = c;
		}
	if (lo < 0)
		return;
	for (int c = lo; c <= hi; c++, n++) {
		uint64_t b = it_size_class_lo((unsigned)c);
		if (!c)
			snprintf(lab[n], sizeof(lab[n]), "0");
		else if (b >= 1 << 20)
			snprintf(lab[n], sizeof(lab[n]), "%lluM", (unsigned long long)(b >> 20));
		else if (b >= 1024)
			snprintf(lab[n], sizeof(lab[n]), "%lluK", (unsigned long long)(b >> 10));
		else
			snprintf(lab[n], sizeof(lab[n]), "%llu", (unsigned long long)b);
		cats[n] = lab[n];
		for (unsigned o = 0; o < IT_OPC_MAX; o++)
			v[o][n] = (double)d->sizes[c][o];
	}
	struct svg_series s[IT_OPC_MAX];
	for (unsigned o = 0; o < IT_OPC_MAX; o++)
		s[o] = (struct svg_series){ .label = it_opc_names[o], .y = v[o] };
	snprintf(id, sizeof(id), "sizes-d%zu", di);
	snprintf(title, sizeof(title), "I/O sizes, %s", dname);
	figure_open(f, true, title);
	svg_bars(f, &(struct svg_chart){ .id = id, .title = title,
					 .desc = "The device's I/Os (y) by size class: from the labelled "
						 "size (bytes, K = KiB, M = MiB) to below twice it (x), "
						 "reads, writes and other.",
					 .xlabel = "I/O size (bytes, class's lower end)", .ylabel = "I/Os",
					 .w = 540, .h = 240 }, cats, n, s, IT_OPC_MAX);
	fputs("</figure>\n", f);
}

static void zone_maps(FILE *f, const struct it_report_input *in)
{
	const struct it_zones *z = it_analyzer_zones(in->a);
	char dname[64], id[64], title[300];

	if (!z || !z->ndevs)
		return;
	fputs("<h2 id=\"zones\">Zones</h2>\n", f);
	for (uint32_t i = 0; i < z->ndevs; i++) {
		const struct it_zone_dev *zd = &z->devs[i];
		double *v = calloc(zd->nzones ? zd->nzones : 1, sizeof(*v));
		char **tips = calloc(zd->nzones ? zd->nzones : 1, sizeof(*tips));
		if (!v || !tips) {
			fputs("<p class=\"note\">Out of memory drawing the zones.</p>\n", f);
			free(v);
			free(tips);
			return;
		}
		for (uint32_t k = 0; k < zd->nzones; k++) {
			const struct it_zone *zo = &zd->zones[k];
			v[k] = mib(zo->write_bytes + zo->append_bytes);
			if (asprintf(&tips[k], "zone %u: %.2f MiB written, %.2f MiB read, %llu resets",
				     k, v[k], mib(zo->read_bytes),
				     (unsigned long long)zo->mgmt[IT_ZM_RESET].count) < 0)
				tips[k] = NULL;
		}
		it_report_dev_name(in, zd->dev, dname, sizeof(dname));
		snprintf(id, sizeof(id), "zones-d%u", i);
		snprintf(title, sizeof(title), "Zone heat map (MiB written), %s", dname);
		figure_open(f, false, title);
		svg_heatmap(f, &(struct svg_chart){ .id = id, .title = title,
						    .desc = "One cell per zone, 32 to a row, in zone order: "
							    "darker cells had more data written (writes and "
							    "zone appends); each cell's title gives its values.",
						    .xlabel = "zones in order, 32 a row; shade: MiB written" },
			    zd->nzones, 32, v, (const char *const *)tips);
		fputs("<details><summary>Table: zones with I/O</summary><table><tr><th>zone</th>"
		      "<th>MiB written</th><th>MiB read</th><th>resets</th></tr>\n", f);
		for (uint32_t k = 0; k < zd->nzones; k++) {
			const struct it_zone *zo = &zd->zones[k];
			if (v[k] > 0 || zo->read_bytes || zo->mgmt[IT_ZM_RESET].count)
				fprintf(f, "<tr><td>%u</td><td>%.2f</td><td>%.2f</td><td>%llu</td></tr>\n", k,
					v[k], mib(zo->read_bytes),
					(unsigned long long)zo->mgmt[IT_ZM_RESET].count);
		}
		fputs("</table></details></figure>\n", f);
		for (uint32_t k = 0; k < zd->nzones; k++)
			free(tips[k]);
		free(tips);
		free(v);
	}
}

static void syscall_threads(FILE *f, const struct it_sysan_results *y)
{
	size_t nt = y->nthreads < IT_HTML_THREADS ? y->nthreads : IT_HTML_THREADS;
	size_t step = (y->nintervals + IT_HTML_POINTS - 1) / IT_HTML_POINTS, n = 0;
	static double t[IT_HTML_POINTS], v[IT_HTML_THREADS][IT_HTML_POINTS];
	static char labels[IT_HTML_THREADS][48];
	struct svg_series s[IT_HTML_THREADS];

	if (!nt || !y->nintervals)
		return;
	if (!step)
		step = 1;
	double iv = (double)y->interval_ns / 1e9 * (double)step;
	for (size_t k0 = 0; k0 < y->nintervals && n < IT_HTML_POINTS; k0 += step, n++) {
		t[n] = ((double)k0 + (double)step / 2) * (double)y->interval_ns / 1e9;
		for (size_t i = 0; i < nt; i++) {
			uint64_t c = 0;
			for (size_t k = k0; k < k0 + step && k < y->nintervals; k++)
				c += y->threads[i].timeline[k];
			v[i][n] = (double)c / iv;
		}
	}
	for (size_t i = 0; i < nt; i++) {
		snprintf(labels[i], sizeof(labels[i]), "%.16s %u", y->threads[i].comm, y->threads[i].tid);
		s[i] = (struct svg_series){ .label = labels[i], .n = n, .x = t, .y = v[i] };
	}
	fputs("<h2 id=\"syscalls\">System calls</h2>\n<figure><figcaption>Calls per second per thread "
	      "(the busiest)</figcaption>\n", f);
	char desc[300];
	snprintf(desc, sizeof(desc), "System calls each thread made per second (y), per %g s interval "
		 "(x: seconds since the start); the %zu threads with the most calls, each named by "
		 "its command and thread id.", iv, nt);
	svg_lines(f, &(struct svg_chart){ .id = "calls-threads", .title = "Calls per second per thread",
					  .desc = desc, .xlabel = "time since start (s)",
					  .ylabel = "calls per second", .w = 800, .h = 300 }, s, nt);
	fputs("<details><summary>Table</summary><table><tr><th class=\"k\">thread</th><th>calls</th>"
	      "<th>errors</th><th>mean latency us</th></tr>\n", f);
	for (size_t i = 0; i < y->nthreads && i < 50; i++) {
		const struct it_sysan_thread *th = &y->threads[i];
		char comm[17];
		snprintf(comm, sizeof(comm), "%.16s", th->comm);
		fputs("<tr><td class=\"k\">", f);
		html_esc(f, comm);
		fprintf(f, " %u/%u</td><td>%llu</td><td>%llu</td><td>%.1f</td></tr>\n", th->pid, th->tid,
			(unsigned long long)th->calls, (unsigned long long)th->errors,
			th->calls ? us(th->lat_sum) / (double)th->calls : 0);
	}
	fputs("</table></details></figure>\n", f);
}

/* The page's head, up to <body> and the shared definitions. */
static void page_open(FILE *f, const char *title, const char *path)
{
	/* no script, no request: the policy makes the page prove it */
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'unsafe-inline'; img-src data:\">\n<title>%s", title);
	if (path) {
		fputs(": ", f);
		html_esc(f, path);
	}
	fprintf(f, "</title>\n<style>%s</style></head><body>\n", style);
	svg_defs(f);
}

static void diff_group(FILE *f, const struct it_diff *d, size_t gi)
{
	const struct it_diff_group *g = &d->groups[gi];
	static char names[IT_DIFF_STAGES][48];
	const char *cats[IT_DIFF_STAGES];
	double avg[IT_DIFF_STAGES], p50[IT_DIFF_STAGES];
	size_t n = 0;
	char id[32], title[300], desc[400];

	fputs("<h3>", f);
	html_esc(f, g->label);
	fprintf(f, " (%llu I/Os at base, %llu loaded)</h3>\n", (unsigned long long)g->count[0],
		(unsigned long long)g->count[1]);
	if (g->where != IT_DIFF_BOTH) {
		fprintf(f, "<p class=\"note\">Only in the %s trace: no LAD.</p>\n",
			g->where == IT_DIFF_BASE_ONLY ? "base" : "loaded");
		return;
	}
	for (size_t k = 0; k < g->nstages; k++) {
		const struct it_diff_stage *st = &g->stage[k];
		if (st->lad_avg < 0 && st->lad_p50 < 0)
			continue;
		snprintf(names[n], sizeof(names[n]), "%s%s", st->name, st->competes ? "" : "*");
		cats[n] = names[n];
		avg[n] = st->lad_avg > 0 ? st->lad_avg : 0;
		p50[n] = st->lad_p50 > 0 ? st->lad_p50 : 0;
		n++;
	}
	if (n) {
		struct svg_series s[2] = { { .label = "LAD at avg", .y = avg },
					   { .label = "LAD at p50", .y = p50 } };
		snprintf(id, sizeof(id), "lad-g%zu", gi);
		snprintf(title, sizeof(title), "Latency amplification per stage, %s", g->label);
		snprintf(desc, sizeof(desc), "For each stage (x; * marks a stage outside the partition "
			 "that competes for the bottleneck), its latency in the loaded trace over its "
			 "latency in the base trace (y, 1 = unchanged), at the average and at p50.");
		figure_open(f, false, title);
		svg_bars(f, &(struct svg_chart){ .id = id, .title = title, .desc = desc,
						 .xlabel = "stage", .ylabel = "loaded / base (LAD)" },
			 cats, n, s, 2);
	} else {
		fputs("<figure>", f);
	}
	fputs("<table><tr><th class=\"k\">stage</th><th>base avg us</th><th>base p50 us</th>"
	      "<th>loaded avg us</th><th>loaded p50 us</th><th>LAD avg</th><th>LAD p50</th>"
	      "<th class=\"k\">note</th></tr>\n", f);
	for (size_t k = 0; k < g->nstages; k++) {
		const struct it_diff_stage *st = &g->stage[k];
		fputs("<tr><td class=\"k\">", f);
		html_esc(f, st->name);
		fprintf(f, "</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td>",
			us(st->base.avg_ns), us(st->base.p50_ns), us(st->loaded.avg_ns),
			us(st->loaded.p50_ns));
		for (unsigned i = 0; i < 2; i++) {
			double v = i ? st->lad_p50 : st->lad_avg;
			if (v < 0)
				fputs("<td>-</td>", f);
			else
				fprintf(f, "<td>%.2f</td>", v);
		}
		fputs("<td class=\"k\">", f);
		if ((long)gi == d->bn_group && (long)k == d->bn_stage)
			fputs("bottleneck ", f);
		html_esc(f, st->role ? st->role : "");
		fputs("</td></tr>\n", f);
	}
	fputs("</table></figure>\n", f);
}

void it_diff_html(const struct it_diff *d, FILE *f)
{
	page_open(f, "iotrail diff", NULL);
	fputs("<h1>iotrail diff</h1>\n<table><tr><th class=\"k\">base</th><td class=\"k\">", f);
	html_esc(f, d->base_path);
	fputs("</td></tr><tr><th class=\"k\">loaded</th><td class=\"k\">", f);
	html_esc(f, d->loaded_path);
	fputs("</td></tr></table>\n<p>", f);
	if (d->bn_group >= 0) {
		const struct it_diff_group *g = &d->groups[d->bn_group];
		fputs("Bottleneck: stage <strong>", f);
		html_esc(f, g->stage[d->bn_stage].name);
		fputs("</strong> of ", f);
		html_esc(f, g->label);
		fprintf(f, ", %.2f times slower on average.", g->stage[d->bn_stage].lad_avg);
	} else {
		fputs("No stage has a latency amplification: the traces share no group with data.", f);
	}
	fputs("</p>\n", f);
	for (size_t i = 0; i < d->ngroups; i++)
		diff_group(f, d, i);
	fputs("</body></html>\n", f);
}

void it_report_html(FILE *f, const struct it_html_input *hi)
{
	const struct it_report_input *in = hi->in;
	const struct it_results *r = in->r;
	size_t idx[IT_HTML_GROUPS], n = top_groups(r, idx);
	char dname[64];

	page_open(f, "iotrail report", in->path);
	header(f, in);
	fputs("<h2 id=\"latency\">Latency</h2>\n", f);
	latency_table(f, in);
	if (!r->stats.ios)
		fputs("<p class=\"note\">The trace has no completed block I/O: no block chart.</p>\n", f);
	if (r->ngroups > n)
		fprintf(f, "<p>The %zu groups with the most I/Os are drawn (of %zu; the table has them "
			"all).</p>\n", n, r->ngroups);
	for (size_t i = 0; i < n; i++)
		group_charts(f, in, idx[i]);
	if (n)
		stage_breakdown(f, in, idx, n);
	if (hi->fabric)
		fabric_breakdown(f, hi->fabric);
	for (size_t i = 0; i < r->ndevs; i++) {
		const struct it_dev_stats *d = &r->devs[i];
		if (!(d->ios[0] + d->ios[1] + d->ios[2]))
			continue;
		it_report_dev_name(in, d->dev, dname, sizeof(dname));
		fputs("<h2>Device ", f);
		html_esc(f, dname);
		fputs("</h2>\n", f);
		device_timeline(f, in, d, dname, i);
		device_qd(f, d, dname, i);
		device_sizes(f, d, dname, i);
	}
	zone_maps(f, in);
	if (hi->sys)
		syscall_threads(f, hi->sys);
	fputs("</body></html>\n", f);
}
