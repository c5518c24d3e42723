/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail report [--json] [--group-by KEYS] FILE`: reads a trace file
 * once, each chunk to the analysis layers the trace has (layer.h:
 * it_analysis_layers[]), then prints their text or JSON sections in
 * registry order.
 * Exit status: 0 done, 1 the file could not be read or analysed, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyze/json_writer.h"
#include "task.h"
#include "analyze/layer.h"
#include "cli.h"
#include "commands.h"
#include "tracefile.h"
#include "layers/fabric/fabric.h"
#include "export/html.h"
#include <stdlib.h>

static void usage(FILE *f)
{
	fputs("usage: iotrail report [--json [--pretty]] [--group-by KEYS] [--machine N | --join N]\n"
	      "                      FILE\n"
	      "\n"
	      "Analyse a trace file written by `iotrail record`: one trail per I/O from bio queue\n"
	      "to completion, latency percentiles, btt-style stages (Q2I, I2D or Q2D, D2C, Q2C),\n"
	      "queue depth at insert and issue, I/O sizes, sequential share, IOPS over time.\n"
	      "\n"
	      "  -g, --group-by KEYS  comma-separated keys from op, size, dev, comm, pid, role\n"
	      "                       (the process title ps shows, else [comm]), or none\n"
	      "                       (default: op,dev); size groups by power-of-two class\n"
	      "      --stats LIST     the latency table's columns, from min, max, avg, pN,\n"
	      "                       distinct(KEY): how many KEYs, KEY pid, tid, comm, dev, file,\n"
	      "                       zone (of zoned devices)\n"
	      "                       (default min,avg,p50,p90,p99,p99.9,max; the task's\n"
	      "                       [report] stats when it has them)\n"
	      "  -f, --fabric-group-by KEYS  the NVMe/TCP fabric tables by keys from op, size,\n"
	      "                       queue, initiator, machine, or none (default: op)\n"
	      "  -j, --json           JSON on stdout (contract: doc/report.md)\n"
	      "  -p, --pretty         indent the JSON\n"
	      "      --html           one self-contained HTML page with SVG charts (latency CDF\n"
	      "                       and histogram per group and stage, stage breakdown, IOPS,\n"
	      "                       MiB/s and queue depth over time, sizes, zones, calls per\n"
	      "                       second per thread); no script, nothing fetched\n"
	      "  -o, --output FILE    write the report to FILE instead of stdout\n"
	      "  -z, --zones          per-zone activity of zoned devices: heat maps (text) or\n"
	      "                       \"zones\":[...] (JSON)\n"
	      "  -e, --events         with --json: the system calls, one object each (\"events\")\n"
	      "  -l, --log            the system calls as a list, one a line (time, pid, tid,\n"
	      "                       comm, call, fd, offset, count, return, file type, path)\n"
	      "  -m, --machine N      analyse machine N of a file of several (record --target:\n"
	      "                       0 the initiator, the default; 1.. its targets)\n"
	      "      --join N         machine 0's fabric view joins target machine N (default:\n"
	      "                       the one serving the most controllers; one per report)\n"
	      "      --recompute-clock  estimate the targets' clocks from the matched I/Os\n"
	      "                       even when the file has the estimate record stored\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "examples:\n"
	      "  iotrail report iotrail.trail\n"
	      "  iotrail report --group-by op,comm,pid fio.trail\n"
	      "  iotrail report --group-by dev,op,size fio.trail\n"
	      "  iotrail report --html -o report.html fio.trail\n"
	      "  iotrail report --json fio.trail | jq '.groups[] | {key, p99: .latency_ns.p99}'\n",
	      f);
}

/* One machine's record chunks of the types the analysis layers read. */
static struct it_reader *open_machine(const char *path, uint16_t machine, char *err, size_t len)
{
	uint16_t types[16];
	struct it_select sel[16];
	size_t ntypes = it_analysis_chunk_types(types, 16);

	for (size_t i = 0; i < ntypes; i++)
		sel[i] = (struct it_select){ machine, IT_ANY, types[i] };
	return it_reader_open_select(path, sel, ntypes, err, len);
}

static const struct it_machine *find_machine(const struct it_machine *ms, size_t n, uint16_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ms[i].id == id)
			return &ms[i];
	return NULL;
}

int it_trace_analysis_open(const char *path, const struct it_layer_opts *o, uint16_t machine,
			   struct it_reader **rd, struct it_analysis **an, struct it_pass_info *info)
{
	const struct it_machine *m = NULL, *ms;
	const struct it_clock_rec *clock;
	char err[256];
	size_t n;

	*an = NULL;
	*rd = open_machine(path, machine, err, sizeof(err));
	if (!*rd)
		return it_failf(1, "failed to read %s: %s; give a trace file written by "
			    "'iotrail record -o FILE'", path, err);
	ms = it_reader_machines(*rd, &n);
	m = find_machine(ms, n, machine);
	if (!m) {
		it_reader_close(*rd);
		*rd = NULL;
		return it_failf(2, "failed to report machine %u of %s: the file has %zu machine%s "
				"(ids 0 to %u); give one of them", machine, path, n, n == 1 ? "" : "s",
				ms[n - 1].id);
	}
	if (o && o->join_machine && !find_machine(ms, n, o->join_machine)) {
		it_reader_close(*rd);
		*rd = NULL;
		return it_failf(2, "failed to join machine %u of %s: the file has %zu machine%s "
				"(ids 0 to %u); give a target's id", o->join_machine, path, n,
				n == 1 ? "" : "s", ms[n - 1].id);
	}
	clock = it_reader_clock(*rd, machine);
	*info = (struct it_pass_info){ .path = path, .host = &m->host, .opts = o,
				       .join_machine = o ? o->join_machine : 0,
				       .layers = it_pass_layers(*rd), .machine = machine,
				       .clock_offset_ns = clock ? clock->offset_ns : 0 };
	info->devs = m->devs;
	info->ndevs = m->ndevs;
	if (!(*an = it_analysis_new(info))) {
		it_reader_close(*rd);
		*rd = NULL;
		return it_failf(1, "failed to start the analyzer: out of memory; free some memory");
	}
	return 0;
}

int it_trace_analysis_run(struct it_analysis *an, struct it_reader *rd, const char *path)
{
	char err[256];
	int rc = it_analysis_run(an, rd, err, sizeof(err));

	if (rc == -1)
		return it_failf(1, "failed to read %s: %s; check the disk and the file", path, err);
	if (rc && *err)
		return it_failf(1, "failed to analyse %s: %s", path, err);
	if (rc)
		return it_failf(1, "failed to analyse %s: out of memory; try a machine with more "
			    "memory or a shorter trace", path);
	return 0;
}

/* Records of each other machine: the pass reads one machine's chunks. */
static void count_machines(const char *path, const struct it_machine *ms, size_t n,
			   uint64_t *records)
{
	uint16_t types[16];
	struct it_select sel[16];
	size_t ntypes = it_analysis_chunk_types(types, 16);
	struct it_chunk c;
	char err[256];
	struct it_reader *r;

	for (size_t i = 0; i < ntypes; i++)
		sel[i] = (struct it_select){ IT_ANY, IT_ANY, types[i] };
	memset(records, 0, n * sizeof(*records));
	if (!(r = it_reader_open_select(path, sel, ntypes, err, sizeof(err))))
		return;
	while (it_reader_next_chunk(r, &c) == 1)
		for (size_t i = 0; i < n; i++)
			if (ms[i].id == c.machine)
				records[i] += c.count;
	it_reader_close(r);
}

struct machines_arg {
	const char *path;
	struct it_reader *rd;
	uint16_t shown;
};

/* "machines": [...] of a file of several, as the text's Machines section. */
static void machines_json(struct it_json *j, const void *arg)
{
	const struct machines_arg *a = arg;
	size_t n, nnotes;
	const struct it_machine *ms = it_reader_machines(a->rd, &n);
	const struct it_note_rec *notes = it_reader_notes(a->rd, &nnotes);

	if (n < 2)
		return;
	uint64_t records[n];
	count_machines(a->path, ms, n, records);
	it_json_name(j, "machines");
	it_json_array_start(j);
	for (size_t i = 0; i < n; i++) {
		const struct it_clock_rec *c = it_reader_clock(a->rd, ms[i].id);

		it_json_object_start(j);
		it_json_kv_uint(j, "id", ms[i].id);
		it_json_kv_string(j, "hostname", ms[i].host.hostname);
		it_json_kv_string(j, "kernel", ms[i].host.kernel);
		it_json_kv_uint(j, "ncpus", ms[i].host.ncpus);
		it_json_kv_bool(j, "analysed", ms[i].id == a->shown);
		it_json_kv_uint(j, "records", records[i]);
		if (c) {
			it_json_name(j, "clock");
			it_json_object_start(j);
			it_json_kv_uint(j, "ref_machine", c->ref_machine);
			it_json_kv_int(j, "offset_ns", c->offset_ns);
			it_json_kv_uint(j, "uncertainty_ns", c->uncertainty_ns);
			it_json_kv_string(j, "method", c->method);
			it_json_object_end(j);
		}
		for (size_t k = 0; k < nnotes; k++)
			if (notes[k].machine == ms[i].id && notes[k].kind == IT_NOTE_LOST)
				it_json_kv_string(j, "incomplete", notes[k].text);
		it_json_object_end(j);
	}
	it_json_array_end(j);
}

/* A file of several machines (record --target): each one, its clock
 * against machine 0's, what the analysis above left out, and a warning
 * for a machine whose data ends early. Text only; nothing for one machine. */
static void report_machines(const char *path, struct it_reader *rd, uint16_t shown, FILE *f)
{
	size_t n, nnotes;
	const struct it_machine *ms = it_reader_machines(rd, &n);
	const struct it_note_rec *notes = it_reader_notes(rd, &nnotes);
	const uint64_t start = ms[0].host.start_monotonic_ns;

	if (n < 2)
		return;
	uint64_t records[n];
	count_machines(path, ms, n, records);
	fprintf(f, "\nMachines (%zu in the file; the analysis above is machine %u's)\n", n, shown);
	for (size_t i = 0; i < n; i++) {
		const struct it_clock_rec *c = it_reader_clock(rd, ms[i].id);

		fprintf(f, "  %-3u %s%.*s, kernel %.*s, %u CPUs\n", ms[i].id,
			ms[i].id ? "target " : "initiator ", 40, ms[i].host.hostname, 40,
			ms[i].host.kernel, ms[i].host.ncpus);
		if (c)
			fprintf(f, "      clock: its time %+lld ns is machine %u's, +- %llu ns (%.*s)\n",
				(long long)c->offset_ns, c->ref_machine,
				(unsigned long long)c->uncertainty_ns, 50, c->method);
		if (ms[i].id != shown && shown == 0 && (it_pass_layers(rd) & (1u << IT_LAYER_NVMET)))
			/* with several targets the fabric view joins one: it names it */
			fprintf(f, n > 2 ? "      %llu records of machine %u (target): the fabric view above "
					   "says if it\n      joins its NVMe target side; the rest of it: "
					   "iotrail report --machine %u\n" :
					   "      %llu records of machine %u (target): the fabric view above "
					   "joins its NVMe target side;\n      the rest of it: iotrail report "
					   "--machine %u\n",
				(unsigned long long)records[i], ms[i].id, ms[i].id);
		else if (ms[i].id != shown)
			fprintf(f, "      %llu records of machine %u (%s) not analysed yet (see "
				"iotrail report --machine %u)\n", (unsigned long long)records[i],
				ms[i].id, ms[i].id ? "target" : "initiator", ms[i].id);
	}
	for (size_t i = 0; i < nnotes; i++) {
		if (notes[i].kind != IT_NOTE_LOST)
			continue;
		fprintf(f, "\n*** WARNING: machine %u's data is incomplete: %.*s;\n", notes[i].machine,
			80, notes[i].text);
		if (notes[i].at_ns > start)
			fprintf(f, "*** it ends at the last pull before %.3f s into the recording.\n",
				(notes[i].at_ns - start) / 1e9);
		else
			fprintf(f, "*** it ends at its agent's last pull.\n");
	}
}

/* --html: the page from the block layer's results (and the syscall
 * layer's, when the trace has it), to FILE or stdout. */
static int report_html(struct it_analysis *an, const struct it_report_ctx *ctx, const char *output)
{
	const void *block = it_analysis_state(an, &it_layer_block);
	const void *sys = it_analysis_state(an, &it_layer_syscall);
	const struct it_analyzer *a = it_layer_block_analyzer(block);
	struct it_report_input in = { .path = ctx->path, .host = ctx->host, .devs = ctx->devs,
				      .ndevs = ctx->ndevs, .status = ctx->status, .a = a,
				      .r = it_analyzer_results(a) };
	struct it_html_input hi = { .in = &in, .sys = sys ? it_layer_syscall_results(sys) : NULL,
				    .fabric = it_layer_fabric_results(
					    it_analysis_state(an, &it_layer_fabric)) };
	FILE *f = output ? fopen(output, "w") : stdout;

	if (!f)
		return it_failf(1, "failed to create %s: %s; check the path and its directory's "
				"permissions", output, strerror(errno));
	it_report_html(f, &hi);
	if (output ? fclose(f) : (fflush(f) || ferror(f)))
		return it_failf(1, "failed to write the HTML report to %s: %s; check free space",
				output ? output : "stdout", strerror(errno));
	return 0;
}

/* The recording's task (record --task, --filter, --sample: NOTE records,
 * task.h), whose [report] keys are the report's defaults and whose
 * predicate and sampling the report states. false: none, or the file does
 * not open (its analysis says why). */
static bool read_task(const char *path, struct it_task *t)
{
	char err[256], *text;
	size_t n;
	struct it_reader *r = it_reader_open(path, err, sizeof(err));
	const struct it_note_rec *notes = r ? it_reader_notes(r, &n) : NULL;
	bool ok;

	text = notes ? it_task_from_notes(notes, n, IT_NOTE_TASK) : NULL;
	ok = text && !it_task_parse(text, t, err, sizeof(err));
	for (size_t i = 0; ok && i < n; i++)
		if (notes[i].kind == IT_NOTE_OVERWRITTEN && !notes[i].machine) {
			t->overwritten = strtoull(notes[i].text, NULL, 10);
			t->overwritten_known = true;
		}
	free(text);
	if (r)
		it_reader_close(r);
	return ok;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "group-by", required_argument, NULL, 'g' },
		{ "zones", no_argument, NULL, 'z' },
		{ "fabric-group-by", required_argument, NULL, 'f' },
		{ "events", no_argument, NULL, 'e' },
		{ "log", no_argument, NULL, 'l' },
		{ "machine", required_argument, NULL, 'm' },
		{ "recompute-clock", no_argument, NULL, 'R' },
		{ "join", required_argument, NULL, 'J' },
		{ "html", no_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "stats", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct it_layer_opts o = { .analyzer = IT_ANALYZER_OPTS_DEFAULT };
	bool json = false, pretty = false, html = false, grouped = false, has_task;
	const char *output = NULL, *stats = NULL;
	struct it_stats stats_cols;
	struct it_task task;
	char err[256], *end;
	unsigned long machine = 0, machine_join = 0;
	int c;

	optind = 1;
	opterr = 0;
	it_cli_json_from_args(argc, argv); /* errors in JSON too */
	while ((c = getopt_long(argc, argv, "jpg:zelhm:f:o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			html = true;
			break;
		case 'S':
			stats = optarg;
			if (it_stats_parse(stats, &stats_cols, err, sizeof(err)))
				return it_failf(2, "failed to parse --stats: %s", err);
			if (strlen(stats) >= sizeof(task.stats))
				return it_failf(2, "failed to parse --stats: longer than %zu bytes; give "
						"fewer columns", sizeof(task.stats) - 1);
			break;
		case 'o':
			output = optarg;
			break;
		case 'e':
			o.events = true;
			break;
		case 'l':
			o.log = true;
			break;
		case 'R':
			o.recompute_clock = true;
			break;
		case 'z':
			o.zones = true;
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			o.pretty = true;
			break;
		case 'g':
			grouped = true;
			if (it_parse_group_keys(optarg, &o.analyzer, err, sizeof(err)))
				return it_failf(2, "%s", err);
			break;
		case 'f':
			o.fabric_grouped = true;
			if (it_fabric_parse_keys(optarg, o.fabric_keys, &o.nfabric_keys, err,
						 sizeof(err)))
				return it_failf(2, "%s", err);
			break;
		case 'm':
			machine = strtoul(optarg, &end, 10);
			if (*end || !*optarg || machine >= IT_ANY)
				return it_failf(2, "failed to parse --machine %s: not a machine id; give "
						"0 (the initiator) or 1 (its target)", optarg);
			break;
		case 'J':
			machine_join = strtoul(optarg, &end, 10);
			if (*end || !*optarg || !machine_join || machine_join >= IT_ANY)
				return it_failf(2, "failed to parse --join %s: not a target machine id; "
						"give 1 or more (the Machines section lists them)", optarg);
			o.join_machine = (uint16_t)machine_join;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return it_fail_option("report", "gmfJo", argv);
		}
	}
	if (optind + 1 != argc)
		return it_failf(2, "%s; usage: iotrail report [--json] [--group-by KEYS] FILE",
			    optind == argc ? "no trace file given" : "more than one trace file given");
	const char *path = argv[optind];
	if (html && (json || o.log || o.events))
		return it_failf(2, "failed to parse the options: --html is a report of its own, not with "
				"--json, --log or --events; "
				"drop one of them");
	if (output && !html)
		return it_failf(2, "failed to write to %s: -o goes with --html (the text and JSON "
				"reports go to stdout); redirect stdout instead", output);
	if (o.join_machine && machine)
		return it_failf(2, "--join %u goes with machine 0's report, not --machine %lu: the "
				"join is the initiator's view; drop one of them", o.join_machine, machine);

	/* the task's [report] keys, where the command line says nothing */
	has_task = read_task(path, &task);
	if (stats && !has_task) /* only the columns: nothing was filtered */
		memset(&task, 0, sizeof(task));
	if (stats) {
		snprintf(task.stats, sizeof(task.stats), "%s", stats);
		has_task = true;
	}
	if (has_task && !grouped && *task.group_by &&
	    it_parse_group_keys(task.group_by, &o.analyzer, err, sizeof(err)))
		return it_failf(2, "failed to use the recording's task [report] group-by: %s", err);
	if (has_task && !strcmp(task.format, "json"))
		json = true;
	if (has_task && *task.stats && !it_stats_parse(task.stats, &stats_cols, err, sizeof(err)))
		o.analyzer.distinct = it_report_stats_distinct(&stats_cols);
	struct it_sample smp; /* per-epoch sampling: the report counts the epochs */
	if (has_task && *task.sample && !it_sample_parse(task.sample, &smp, err, sizeof(err)))
		o.analyzer.epoch_ns = smp.per_epoch ? smp.epoch_ns : 0;
	/* a role's processes are folded into one group after counting: their
	 * pids and tids differ, their comms, devices and files may not */
	for (int k = IT_DISTINCT_COMM; k < IT_DISTINCT_MAX; k++)
		if ((o.analyzer.distinct & (1u << k)) &&
		    memchr(o.analyzer.keys, IT_KEY_ROLE, o.analyzer.nkeys))
			return it_failf(2, "failed to count distinct(%s) by role: a role's processes "
					"are counted apart and a %s they share would count once per "
					"process; group by comm or pid instead, or count distinct(pid) "
					"or distinct(tid)", it_distinct_names[k], it_distinct_names[k]);

	struct it_reader *rd;
	struct it_analysis *an;
	struct it_pass_info info;
	int rc = it_trace_analysis_open(path, &o, (uint16_t)machine, &rd, &an, &info);
	if (rc)
		return rc;
	/* --events, --log: a layer that lists its events */
	const struct it_analysis_layer *lister;
	if ((o.events || o.log) && !it_analysis_lists(an, &lister)) {
		it_analysis_free(an);
		it_reader_close(rd);
		if (!lister)
			return it_failf(1, "failed to list the events of %s: no analysis layer lists "
				    "events", path);
		return it_failf(1, "failed to list the %s of %s: the trace has no %s layer; record it "
			    "with --layers %s", lister->event_list, path, lister->name, lister->name);
	}
	struct it_reader_status st;
	rc = it_trace_analysis_run(an, rd, path);
	it_reader_status(rd, &st);
	struct machines_arg marg = { .path = path, .rd = rd, .shown = (uint16_t)machine };
	struct it_report_ctx ctx = { .path = path, .host = info.host, .devs = info.devs,
				     .ndevs = info.ndevs, .status = &st, .opts = &o,
				     .task = has_task ? &task : NULL,
				     .json_tail = machines_json, .json_tail_arg = &marg };
	if (!rc && html)
		rc = report_html(an, &ctx, output);
	else if (!rc && o.log)
		it_analysis_report_log(an, stdout, &ctx);
	else if (!rc && json)
		it_analysis_report_json(an, stdout, &ctx, pretty);
	else if (!rc) {
		it_analysis_report_text(an, stdout, &ctx);
		report_machines(path, rd, (uint16_t)machine, stdout);
	}
	if (!rc && (fflush(stdout) || ferror(stdout))) {
		fprintf(stderr, "iotrail report: failed to write the report: %s; check where "
			"stdout goes\n", strerror(errno));
		rc = 1;
	}
	it_analysis_free(an);
	it_reader_close(rd);
	return rc;
}
