// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * iotrail query: asks a target's agent for its switches' statistics (LOAD),
 * changes its settings (STORE), zeroes its counters since reset (RESET),
 * ntprof's in-band instructions over the authenticated agent channel. All
 * instructions are parsed before anything is sent, so a typo costs nothing
 * on the target; then each is sent in order on one connection and its
 * answer printed (text: one line per statistic; JSON: one document).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/channel.h"
#include "agent/query.h"
#include "agent/remote.h"
#include "analyze/json_writer.h"
#include "cli.h"
#include "commands.h"

#define QUERY_TIMEOUT_MS 130000

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail query --target HOST:PORT [--key FILE] [--json] INSTRUCTION...\n"
		"\n"
		"Ask a target's `iotrail agent` (its recording session's, or a recording it\n"
		"starts for this query) and print the answers. Instructions, one argument each:\n"
		"  load SWITCH [STAT...] [window=DUR] [op=OP] [dev=NAME | ctrl=CNTLID]\n"
		"        the switch's statistics of the last window (default 1 s, ending 0.5 s\n"
		"        ago: what the agent's spool surely holds) and since its last reset;\n"
		"        STAT: count min avg max pN (p99, p99.9) iops bytes all (default all)\n"
		"  reset SWITCH|all      start the switch's 'since reset' counters now\n"
		"  store SWITCH|all SETTING=VALUE\n"
		"        window=DUR (a load's default window), percentiles=50,99,99.9\n"
		"SWITCH: a stage, as the report names it: block.q2i block.i2d block.q2d\n"
		"block.s2d block.d2c block.d2n block.d2h block.h2n block.n2c block.q2c (per\n"
		"device: dev=NAME), and the NVMe/TCP target's, its commands without a host side\n"
		"(per initiator controller: ctrl=CNTLID): target target.queue target.dev\n"
		"tdev.submit tdev.q2d tdev.d2c tdev.done target.sendq target.send\n"
		"\n"
		"  --target HOST:PORT  the agent (iotrail agent --listen)\n"
		"  --key FILE          the shared key (default %s)\n"
		"  --json              one JSON document on stdout\n"
		"\n"
		"example:\n"
		"  iotrail query --target 10.0.0.2:%d --key agent.key 'load block.d2c p99 dev=nvme0n1'\n",
		IT_AGENT_KEY_DEFAULT, IT_AGENT_PORT);
}

/* A time in ns, as people read it: 850 ns, 12.3 us, 4.56 ms, 1.234 s. */
static const char *dur(char *buf, size_t len, uint64_t ns)
{
	static const struct { uint64_t below; double div; const char *unit; } u[] = {
		{ 1000, 1, "ns" }, { 1000000, 1e3, "us" }, { 1000000000, 1e6, "ms" },
		{ UINT64_MAX, 1e9, "s" },
	};
	size_t i = 0;

	while (ns >= u[i].below)
		i++;
	snprintf(buf, len, i ? "%.2f %s" : "%.0f %s", (double)ns / u[i].div, u[i].unit);
	return buf;
}

static const char *mib(char *buf, size_t len, uint64_t bytes)
{
	snprintf(buf, len, "%.1f MiB", (double)bytes / (1 << 20));
	return buf;
}

static double span_s(uint64_t from, uint64_t to)
{
	return to > from ? (double)(to - from) / 1e9 : 0;
}

/* One row: the switch, the statistic, its value in the window and since reset. */
static void row(const char *sw, const char *stat, const char *win, const char *since)
{
	if (*since)
		printf("%-10s %-10s %14s %14s\n", sw, stat, win, since);
	else /* a number of the recording, not of a span */
		printf("%-10s %-10s %14s\n", sw, stat, win);
}

static void print_stats_text(const struct it_agent_msg *a)
{
	const struct it_stage_stat *w = &a->u.stats.window, *s = &a->u.stats.since_reset;
	double ws = span_s(a->u.stats.start_ns, a->u.stats.end_ns);
	double ss = span_s(a->u.stats.reset_ns, a->u.stats.end_ns);
	uint32_t q = a->u.stats.stats;
	const char *sw = a->u.stats.sw;
	char b1[32], b2[32];

	row("switch", "statistic", "window", "since reset");
	snprintf(b1, sizeof(b1), "%.3f s", (double)a->u.stats.start_ns / 1e9);
	snprintf(b2, sizeof(b2), "%.3f s", (double)a->u.stats.reset_ns / 1e9);
	row(sw, "from", b1, b2); /* the agent's CLOCK_MONOTONIC */
	snprintf(b1, sizeof(b1), "%.3f s", ws);
	snprintf(b2, sizeof(b2), "%.3f s", ss);
	row(sw, "span", b1, b2);
	snprintf(b1, sizeof(b1), "%llu", (unsigned long long)w->ios);
	snprintf(b2, sizeof(b2), "%llu", (unsigned long long)s->ios);
	row(sw, "ios", b1, b2);
	if (q & IT_QS_COUNT) {
		snprintf(b1, sizeof(b1), "%llu", (unsigned long long)w->count);
		snprintf(b2, sizeof(b2), "%llu", (unsigned long long)s->count);
		row(sw, "count", b1, b2);
	}
	if (q & IT_QS_MIN)
		row(sw, "min", dur(b1, sizeof(b1), w->min), dur(b2, sizeof(b2), s->min));
	if (q & IT_QS_AVG)
		row(sw, "avg", dur(b1, sizeof(b1), w->count ? w->sum / w->count : 0),
		    dur(b2, sizeof(b2), s->count ? s->sum / s->count : 0));
	for (unsigned i = 0; (q & IT_QS_PCT) && i < a->u.stats.npct; i++) {
		char name[24];

		it_query_pct_name(a->u.stats.pct[i], name, sizeof(name));
		row(sw, name, dur(b1, sizeof(b1), w->pct_ns[i]), dur(b2, sizeof(b2), s->pct_ns[i]));
	}
	if (q & IT_QS_MAX)
		row(sw, "max", dur(b1, sizeof(b1), w->max), dur(b2, sizeof(b2), s->max));
	if (q & IT_QS_IOPS) {
		snprintf(b1, sizeof(b1), "%.1f", ws > 0 ? (double)w->count / ws : 0);
		snprintf(b2, sizeof(b2), "%.1f", ss > 0 ? (double)s->count / ss : 0);
		row(sw, "iops", b1, b2);
	}
	if (q & IT_QS_BYTES)
		row(sw, "bytes", mib(b1, sizeof(b1), w->bytes), mib(b2, sizeof(b2), s->bytes));
	snprintf(b1, sizeof(b1), "%llu", (unsigned long long)a->u.stats.dropped);
	row(sw, "lost", b1, "");
	if (a->u.stats.dropped)
		fprintf(stderr, "iotrail query: warning: the agent's recorder lost %llu events: "
			"counts may be short\n", (unsigned long long)a->u.stats.dropped);
}

static void stage_json(struct it_json *j, const char *name, const struct it_stage_stat *s,
		       const struct it_agent_msg *a, uint64_t from)
{
	double secs = span_s(from, a->u.stats.end_ns);

	it_json_name(j, name);
	it_json_object_start(j);
	it_json_kv_uint(j, "start_ns", from);
	it_json_kv_uint(j, "end_ns", a->u.stats.end_ns);
	it_json_kv_uint(j, "ios", s->ios);
	it_json_kv_uint(j, "count", s->count);
	if (a->u.stats.stats & IT_QS_BYTES)
		it_json_kv_uint(j, "bytes", s->bytes);
	it_json_kv_uint(j, "min_ns", s->min);
	it_json_kv_uint(j, "avg_ns", s->count ? s->sum / s->count : 0);
	it_json_kv_uint(j, "max_ns", s->max);
	it_json_name(j, "percentiles_ns");
	it_json_object_start(j);
	for (unsigned i = 0; i < a->u.stats.npct; i++) {
		char pname[24];

		it_query_pct_name(a->u.stats.pct[i], pname, sizeof(pname));
		it_json_kv_uint(j, pname, s->pct_ns[i]);
	}
	it_json_object_end(j);
	it_json_kv_double(j, "iops", secs > 0 ? (double)s->count / secs : 0);
	if (a->u.stats.stats & IT_QS_BYTES) /* the answer has them */
		it_json_kv_double(j, "bytes_per_s", secs > 0 ? (double)s->bytes / secs : 0);
	it_json_object_end(j);
}

/* One answer, as text or as a member of the JSON array. */
static void print_answer(struct it_json *j, const char *instr, const struct it_agent_msg *a)
{
	if (!j) {
		if (a->type == IT_MSG_STATS)
			print_stats_text(a);
		else if (a->type == IT_MSG_RESET)
			printf("%-10s reset at %.3f s (the agent's clock)\n", a->u.reset.sw,
			       (double)a->u.reset.at_ns / 1e9);
		else
			printf("%-10s %s = %s\n", a->u.store.sw, a->u.store.name, a->u.store.value);
		return;
	}
	it_json_object_start(j);
	it_json_kv_string(j, "instruction", instr);
	if (a->type == IT_MSG_STATS) {
		it_json_kv_string(j, "switch", a->u.stats.sw);
		it_json_kv_uint(j, "lost_events", a->u.stats.dropped);
		stage_json(j, "window", &a->u.stats.window, a, a->u.stats.start_ns);
		stage_json(j, "since_reset", &a->u.stats.since_reset, a, a->u.stats.reset_ns);
	} else if (a->type == IT_MSG_RESET) {
		it_json_kv_string(j, "switch", a->u.reset.sw);
		it_json_kv_uint(j, "reset_ns", a->u.reset.at_ns);
	} else {
		it_json_kv_string(j, "switch", a->u.store.sw);
		it_json_kv_string(j, "setting", a->u.store.name);
		it_json_kv_string(j, "value", a->u.store.value);
	}
	it_json_object_end(j);
}

static uint16_t answer_type(uint16_t type)
{
	return type == IT_MSG_LOAD ? IT_MSG_STATS : type;
}

int cmd_query(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "target", required_argument, NULL, 't' },
		{ "key", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *target = NULL, *keyfile = NULL;
	struct it_agent_msg *msgs;
	struct it_json json, *j = NULL;
	struct it_chan *c;
	char err[600], *doc = NULL;
	size_t doclen = 0;
	FILE *out = NULL;
	int opt, n, rc = 0;

	optind = 1;
	opterr = 0;
	it_cli_json_from_args(argc, argv);
	while ((opt = getopt_long(argc, argv, "hj", longopts, NULL)) != -1) {
		switch (opt) {
		case 't': target = optarg; break;
		case 'k': keyfile = optarg; break;
		case 'j': j = &json; break;
		case 'h': usage(stdout); return 0;
		default: return it_fail_option("query", "", argv);
		}
	}
	if (!target)
		return it_failf(2, "failed to query: no agent given; give --target HOST:PORT");
	if (optind == argc)
		return it_failf(2, "failed to query: no instruction given; give one, e.g. "
				"'load block.d2c p99' (see iotrail query --help)");
	n = argc - optind;
	if (!(msgs = calloc((size_t)n, sizeof(*msgs))))
		return it_failf(1, "failed to query: out of memory");
	for (int i = 0; i < n; i++)
		if (it_query_parse(argv[optind + i], &msgs[i], err, sizeof(err))) {
			free(msgs);
			return it_failf(2, "failed to parse the instruction '%.60s': %s",
					argv[optind + i], err);
		}
	if (!(c = it_agent_connect(target, keyfile, err, sizeof(err)))) {
		free(msgs);
		return it_failf(1, "%s", err);
	}
	/* a LOAD may start the agent's own recording (its probes load within
	 * 120 s on a slow target) and wait out its first window (5 s at most) */
	it_chan_set_timeout(c, QUERY_TIMEOUT_MS);
	/* JSON is kept until every answer is in: a failure prints the error
	 * document alone (it_failf), never half an answer list */
	if (j && !(out = open_memstream(&doc, &doclen)))
		j = NULL;
	if (j) {
		it_json_init(j, out, true);
		it_json_object_start(j);
		it_json_kv_uint(j, "version", 1);
		it_json_kv_string(j, "target", target);
		it_json_name(j, "answers");
		it_json_array_start(j);
	}
	for (int i = 0; i < n && !rc; i++) {
		struct it_agent_msg a;

		if (it_agent_ask(c, &msgs[i], answer_type(msgs[i].type), &a, err, sizeof(err))) {
			rc = it_failf(1, "failed to '%.60s' on %s: %s", argv[optind + i], target, err);
			break;
		}
		print_answer(j, argv[optind + i], &a);
	}
	if (out) {
		it_json_array_end(j);
		it_json_object_end(j);
		fclose(out);
		if (!rc)
			printf("%s\n", doc);
		free(doc);
	}
	it_chan_close(c);
	free(msgs);
	return rc;
}
