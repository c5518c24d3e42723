// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail top`: the online histograms as a live view, one screen per
 * interval (like top and biotop), or one JSON line per interval. Queue
 * depth is Little's law over the interval: the time requests spent issued
 * (the D2C sum) over the interval's length, the average number of
 * requests at the device.
 *
 * Keys (only when stdin and stdout are a terminal, which is then in raw
 * mode and put back on every way out: q, Ctrl-C, SIGTERM, SIGHUP, an
 * error): g changes the grouping, s the sort, q quits.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "analyze/json_writer.h"
#include "cli.h"
#include "commands.h"
#include "online/collect.h"

enum sort_by { SORT_IOPS, SORT_MIBS, SORT_P99, SORT_DEV, NSORTS };
static const char *const sort_names[NSORTS] = { "iops", "mibs", "p99", "dev" };

static volatile sig_atomic_t stop_signal;
static struct termios saved_tty;
static bool tty_raw;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void tty_restore(void)
{
	if (!tty_raw)
		return;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	fputs("\033[?25h\n", stdout); /* the cursor back */
	fflush(stdout);
	tty_raw = false;
}

/* keys without Enter, no echo; output processing kept (so \n is a newline) */
static void tty_make_raw(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &saved_tty))
		return;
	t = saved_tty;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t))
		return;
	tty_raw = true;
	atexit(tty_restore);
	fputs("\033[?25l", stdout); /* no cursor blinking over the table */
}

struct top {
	double interval_s;
	long count; /* 0: until stopped */
	bool json;
	enum ol_group group;
	enum sort_by sort;
	struct ol_snapshot prev, cur, delta, grouped;
	uint64_t start_ns;
	double last_len_s; /* the last interval's length, for a redraw */
};

static double sort_value(const struct ol_series *s, enum sort_by by)
{
	switch (by) {
	case SORT_IOPS: return (double)s->v.ios;
	case SORT_MIBS: return (double)s->v.bytes;
	case SORT_P99: return (double)ol_hist_quantile(&s->v.stage[OL_Q2C], 0.99);
	default: return -(double)s->key.dev - (double)s->key.op / 16;
	}
}

static enum sort_by g_sort;

static int cmp_rows(const void *a, const void *b)
{
	double x = sort_value(a, g_sort), y = sort_value(b, g_sort);

	return (x < y) - (x > y); /* largest first */
}

/* a duration in 6 columns: 950ns, 12.3us, 4.56ms, 1.23s (the bounds keep
 * %.3g from rounding up into an exponent: 999.6us is 1ms) */
static void fmt_ns(char *buf, size_t n, uint64_t ns, bool any)
{
	if (!any)
		snprintf(buf, n, "-");
	else if (ns < 1000)
		snprintf(buf, n, "%" PRIu64 "ns", ns);
	else if (ns < 999500)
		snprintf(buf, n, "%.3gus", (double)ns / 1e3);
	else if (ns < 999500000)
		snprintf(buf, n, "%.3gms", (double)ns / 1e6);
	else if (ns < 999500000000ull)
		snprintf(buf, n, "%.3gs", (double)ns / 1e9);
	else
		snprintf(buf, n, ">999s");
}

static double secs(const struct ol_snapshot *d, uint64_t since_ns)
{
	return d->taken_ns > since_ns ? (double)(d->taken_ns - since_ns) / 1e9 : 0;
}

static uint64_t misses(const struct ol_snapshot *s)
{
	uint64_t n = s->nested;

	for (int m = 0; m < OL_NMISS; m++)
		n += s->missed[m];
	return n;
}

/* Rows that fit the terminal (all of them when not on one): the view
 * stays on one screen of 24 lines or more. */
static size_t rows_that_fit(size_t n)
{
	struct winsize ws;

	if (!tty_raw || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 8)
		return n;
	return n < (size_t)ws.ws_row - 6 ? n : (size_t)ws.ws_row - 6;
}

/* 78 columns: DEV OP IOPS MiB/s QD, then p50 and p99 of each stage */
static void print_text(struct top *t, const struct ol_snapshot *g, double len_s)
{
	char dev[16], cells[OL_NSTAGES][2][12];
	size_t rows = rows_that_fit(g->n);
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	if (tty_raw)
		fputs("\033[H\033[J", stdout);
	printf("iotrail top  %02d:%02d:%02d  %.2f s  group %s  sort %s  missed %" PRIu64 "\n",
	       tm.tm_hour, tm.tm_min, tm.tm_sec, len_s, ol_group_name(t->group),
	       sort_names[t->sort], misses(g));
	printf("%36s %13s %13s %13s\n", "", "---- Q2D ----", "---- D2C ----", "---- Q2C ----");
	printf("%-8s %-7s %7s %6s %4s %6s %6s %6s %6s %6s %6s\n", "DEV", "OP", "IOPS", "MiB/s",
	       "QD", "p50", "p99", "p50", "p99", "p50", "p99");
	for (size_t i = 0; i < rows; i++) {
		const struct ol_series *s = &g->series[i];
		double iops = len_s > 0 ? (double)s->v.ios / len_s : 0;
		double mibs = len_s > 0 ? (double)s->v.bytes / len_s / 1048576 : 0;
		double qd = len_s > 0 ? (double)s->v.stage[OL_D2C].sum_ns / 1e9 / len_s : 0;

		for (int st = 0; st < OL_NSTAGES; st++) {
			bool any = ol_hist_count(&s->v.stage[st]) > 0;

			fmt_ns(cells[st][0], sizeof(cells[st][0]),
			       ol_hist_quantile(&s->v.stage[st], 0.50), any);
			fmt_ns(cells[st][1], sizeof(cells[st][1]),
			       ol_hist_quantile(&s->v.stage[st], 0.99), any);
		}
		ol_dev_name(s->key.dev, dev, sizeof(dev));
		printf("%-8.8s %-7s %7.0f %6.1f %4.1f %6s %6s %6s %6s %6s %6s\n", dev,
		       ol_op_name(s->key.op), iops, mibs, qd, cells[0][0], cells[0][1],
		       cells[1][0], cells[1][1], cells[2][0], cells[2][1]);
	}
	if (!g->n)
		printf("(no block I/O completed)\n");
	else if (rows < g->n)
		printf("(%zu more rows: g groups them)\n", g->n - rows);
	if (tty_raw)
		printf("[g] grouping  [s] sort  [q] quit\n");
	fflush(stdout);
}

static void print_json(struct top *t, const struct ol_snapshot *g, double len_s)
{
	struct it_json j;
	char dev[64];

	it_json_init(&j, stdout, false);
	it_json_object_start(&j);
	it_json_kv_double(&j, "t_s", secs(g, t->start_ns));
	it_json_kv_double(&j, "interval_s", len_s);
	it_json_kv_string(&j, "group_by", ol_group_name(t->group));
	it_json_name(&j, "missed");
	it_json_object_start(&j);
	for (int m = 0; m < OL_NMISS; m++)
		it_json_kv_uint(&j, ol_miss_names[m], g->missed[m]);
	it_json_kv_uint(&j, "nested", g->nested);
	it_json_object_end(&j);
	it_json_name(&j, "groups");
	it_json_array_start(&j);
	for (size_t i = 0; i < g->n; i++) {
		const struct ol_series *s = &g->series[i];

		it_json_object_start(&j);
		ol_dev_name(s->key.dev, dev, sizeof(dev));
		it_json_kv_string(&j, "dev", dev);
		it_json_kv_string(&j, "op", ol_op_name(s->key.op));
		it_json_kv_uint(&j, "ios", s->v.ios);
		it_json_kv_uint(&j, "bytes", s->v.bytes);
		it_json_kv_double(&j, "iops", len_s > 0 ? (double)s->v.ios / len_s : 0);
		it_json_kv_double(&j, "queue_depth",
				  len_s > 0 ? (double)s->v.stage[OL_D2C].sum_ns / 1e9 / len_s : 0);
		for (int st = 0; st < OL_NSTAGES; st++) {
			const struct ol_hist *h = &s->v.stage[st];

			it_json_name(&j, ol_stage_names[st]);
			it_json_object_start(&j);
			it_json_kv_uint(&j, "count", ol_hist_count(h));
			it_json_kv_uint(&j, "sum_ns", h->sum_ns);
			it_json_kv_uint(&j, "p50_ns", ol_hist_quantile(h, 0.50));
			it_json_kv_uint(&j, "p99_ns", ol_hist_quantile(h, 0.99));
			it_json_object_end(&j);
		}
		it_json_object_end(&j);
	}
	it_json_array_end(&j);
	it_json_object_end(&j);
	fflush(stdout);
}

/* Shows the last interval again, as grouped and sorted now. */
static int show(struct top *t, double len_s)
{
	if (ol_snapshot_group(&t->grouped, &t->delta, t->group))
		return -1;
	g_sort = t->sort;
	if (t->grouped.n > 1)
		qsort(t->grouped.series, t->grouped.n, sizeof(*t->grouped.series), cmp_rows);
	if (t->json)
		print_json(t, &t->grouped, len_s);
	else
		print_text(t, &t->grouped, len_s);
	return 0;
}

/* One key from the terminal: false to quit. */
static bool on_key(struct top *t, double len_s)
{
	char c;

	if (read(STDIN_FILENO, &c, 1) != 1)
		return true;
	if (c == 'q' || c == 'Q' || c == 3 /* ^C where ISIG is off */)
		return false;
	if (c == 'g')
		t->group = (t->group + 1) % OL_NGROUPS;
	else if (c == 's')
		t->sort = (t->sort + 1) % NSORTS;
	else
		return true;
	show(t, len_s);
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail top [--interval SECONDS] [--count N] [--json] [--dev DEV]...\n"
		"                   [--group-by dev,op|dev|op|all] [--sort iops|mibs|p99|dev]\n"
		"\n"
		"A live view of the block layer from in-kernel histograms (no per-I/O\n"
		"records): per device and op, IOPS, MiB/s, queue depth (requests at the\n"
		"device, on average) and p50/p99 of Q2D, D2C and Q2C, every interval.\n"
		"  --interval S   seconds per interval (default 1, at least 0.1)\n"
		"  --count N      stop after N intervals (default: until q, Ctrl-C, SIGTERM)\n"
		"  --json         one JSON line per interval (counts of that interval only)\n"
		"  --dev DEV      only this device (/dev/sda, sda or 8:0); repeatable\n"
		"Keys on a terminal: g grouping, s sort, q quit.\n");
	return f == stdout ? 0 : 2;
}

static int parse(int argc, char **argv, struct top *t, uint32_t *devs, size_t *ndevs)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "dev", required_argument, NULL, 'D' },
		{ "group-by", required_argument, NULL, 'g' },
		{ "sort", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:n:jg:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			t->interval_s = strtod(optarg, &end);
			if (*end || !(t->interval_s >= 0.1 && t->interval_s <= 3600))
				return it_failf(2, "failed to read --interval '%s': not a number of "
						"seconds from 0.1 to 3600; give e.g. --interval 1", optarg);
			break;
		case 'n':
			errno = 0;
			t->count = strtol(optarg, &end, 10);
			if (*end || errno || t->count < 1)
				return it_failf(2, "failed to read --count '%s': not a whole number "
						"of intervals >= 1; give e.g. --count 10", optarg);
			break;
		case 'j':
			t->json = true;
			break;
		case 'D':
			if ((rc = ol_add_dev(optarg, devs, ndevs)))
				return rc;
			break;
		case 'g':
			if (ol_group_parse(optarg, &t->group))
				return it_failf(2, "failed to read --group-by '%s': not a grouping; "
						"give dev,op, dev, op or all", optarg);
			break;
		case 's':
			for (rc = 0; rc < NSORTS && strcmp(optarg, sort_names[rc]); rc++)
				;
			if (rc == NSORTS)
				return it_failf(2, "failed to read --sort '%s': not a sort key; "
						"give iops, mibs, p99 or dev", optarg);
			t->sort = rc;
			break;
		case 'h':
			return usage(stdout) - 1;
		default:
			return it_fail_option("top", "ingsD", argv);
		}
	}
	if (optind < argc)
		return it_failf(2, "failed to read '%s': top takes no file or command; "
				"see iotrail top --help", argv[optind]);
	return 0;
}

static void catch_stops(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	/* no SA_RESTART: poll returns at once */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int cmd_top(int argc, char **argv)
{
	struct top t = { .interval_s = 1, .group = OL_GROUP_DEV_OP };
	uint32_t devs[OL_MAX_DEVS];
	size_t ndevs = 0;
	struct ol_collector *c = NULL;
	char err[256];
	int rc = 0;
	long shown = 0;
	uint64_t next;

	it_cli_json_from_args(argc, argv);
	rc = parse(argc, argv, &t, devs, &ndevs);
	if (rc)
		return rc < 0 ? 0 : rc;
	catch_stops();
	if (ol_collector_open(&c, devs, ndevs, err, sizeof(err)))
		return it_fail(1, "start the online probes", err,
			       "run as root on a kernel with BTF (iotrail probe tells what is missing)");
	if (ol_collector_read(c, &t.prev)) {
		rc = it_fail(1, "read the online histograms", strerror(errno), NULL);
		goto out;
	}
	t.start_ns = t.prev.taken_ns;
	if (!t.json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		tty_make_raw();
	next = mono_ns() + (uint64_t)(t.interval_s * 1e9);
	while (!stop_signal) {
		struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
		uint64_t now = mono_ns();
		double len_s;

		if (now < next) {
			int ms = (int)((next - now + 999999) / 1000000);

			if (poll(&in, tty_raw ? 1 : 0, ms) > 0 &&
			    !on_key(&t, t.last_len_s))
				break;
			continue;
		}
		next += (uint64_t)(t.interval_s * 1e9);
		if (ol_collector_read(c, &t.cur) || ol_snapshot_delta(&t.delta, &t.cur, &t.prev)) {
			rc = it_fail(1, "read the online histograms", strerror(errno), NULL);
			goto out;
		}
		len_s = secs(&t.cur, t.prev.taken_ns);
		show(&t, len_s);
		t.last_len_s = len_s;
		{
			struct ol_snapshot tmp = t.prev;

			t.prev = t.cur;
			t.cur = tmp;
		}
		if (t.count && ++shown >= t.count)
			goto out;
	}
	/* stopped by a signal (or q): JSON consumers get the last, partial
	 * interval, so what every line adds up to is all that completed */
	if (t.json) {
		ol_collector_detach(c);
		if (!ol_collector_read(c, &t.cur) && !ol_snapshot_delta(&t.delta, &t.cur, &t.prev))
			show(&t, secs(&t.cur, t.prev.taken_ns));
	}
out:
	tty_restore();
	ol_collector_close(c);
	ol_snapshot_free(&t.prev);
	ol_snapshot_free(&t.cur);
	ol_snapshot_free(&t.delta);
	ol_snapshot_free(&t.grouped);
	return rc;
}
