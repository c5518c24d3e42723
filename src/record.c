// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * iotrail record: start the chosen layers (src/layers.c), run the workload,
 * stream their ring buffers into a trace file until the workload exits,
 * the duration ends or SIGINT/SIGTERM arrives; the file is closed properly
 * in every case. No layer is named here: each is a struct it_layer_ops.
 *
 * Order matters: probes are attached and the trace header is written before
 * COMMAND starts, so its first I/O is on the trail.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/channel.h"
#include "agent/remote.h"
#include "analyze/clock_store.h"
#include "cli.h"
#include "evring.h"
#include "flight.h"
#include "commands.h"
#include "hooks.h"
#include "hostinfo.h"
#include "layer.h"
#include "nvmf.h"
#include "record_task.h"
#include "scope.h"
#include "sink.h"
#include "trace_merge.h"
#include "tracefile.h"

#define MAX_DEVS 16           /* IT_MAX_DEVS in the BPF programs */
#define MAX_LAYERS 16
#define MAX_TARGETS 8         /* --target machines: 1..MAX_TARGETS in the file */
#define POLL_MS 20            /* consumer timer: the BPF side rarely wakes us */
#define RING_MB_PER_CPU 2     /* default ring size per possible CPU (bench/memory.sh) */
#define RING_MB_MIN 4
#define RING_MB_MAX 64
#define DROPS_EVERY_NS 250000000ull
#define LINGER_QUIET_NS 100000000ull
#define LINGER_MAX_NS 2000000000ull
/* The chunks waiting for the trace's file system (a busy disk, a frozen
 * file system): written by a thread of their own, so the drain keeps up
 * with the rings meanwhile. Part of the 32 MB budget (bench/memory.sh);
 * compressed syscall chunks hold ~10x their size in calls. */
#define WRITE_QUEUE_MB 2

struct record_opts {
	const char *output;
	double duration_s;            /* 0: until COMMAND exits or a signal */
	uint32_t devs[MAX_DEVS];
	size_t ndevs;
	struct it_scope scope;        /* -p, --comm, --cgroup */
	struct it_record_task task;   /* --task, --filter, --sample (record_task.h) */
	bool output_set;              /* -o given: it wins over the task file's */
	unsigned int ringbuf_mb;
	int drain_nice;                 /* the draining thread's nice value */
	enum it_hook_kind force_hook; /* IT_HOOK_NONE: best available */
	bool verbose;
	char **cmd;                   /* NULL: no COMMAND */
	bool want[MAX_LAYERS];        /* by index in it_layers[] */
	bool layers_given;            /* --layers: a layer that cannot load is an error */
	double flush_every_s;         /* --flush-every: the agent's recorder */
	/* --target HOST:PORT[,...]: also record those machines (1..ntargets),
	 * each with its key file (--key: one for all, or one per target) */
	char *target_list, *key_list; /* strdup'd: targets[] and keyfiles[] point in */
	const char *targets[MAX_TARGETS], *keyfiles[MAX_TARGETS];
	size_t ntargets, nkeyfiles;
	const char *target_layers;
	const char *target_devs[MAX_TARGETS]; /* --target-dev: one for all, or one per target */
	size_t ntarget_devs;
	const char *sink;             /* --sink clickhouse://HOST:PORT/DB (sink.h) */
};

static volatile sig_atomic_t stop_signal, nsignals, flight_asked;

/* SIGUSR1 with --flight: write the last window out now. */
static void on_usr1(int sig)
{
	(void)sig;
	flight_asked = 1;
}

static void on_signal(int sig)
{
	stop_signal = sig;
	nsignals++; /* a second one also cuts the final wait for in-flight I/O */
}

static bool verbose;

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* A layer recorded on its own (named in --layers), not as part of another. */
static bool own_layer(const struct it_layer_ops *l)
{
	return l->start && !l->part_of;
}

static void layer_names(char *out, size_t len, const char *sep)
{
	size_t off = 0;

	*out = 0;
	for (size_t i = 0; i < it_nlayers && off < len; i++)
		if (own_layer(it_layers[i]))
			off += snprintf(out + off, len - off, "%s%s", off ? sep : "", it_layers[i]->name);
}

static void usage(FILE *f)
{
	char names[128];

	layer_names(names, sizeof(names), ", ");
	fprintf(f,
		"usage: iotrail record [-o FILE] [-d SECONDS] [--dev DEV]... [-p PID[,PID...]]\n"
		"                      [--comm NAME] [--cgroup DIR] [--ringbuf-mb N] [-v]\n"
		"                      [-- COMMAND [ARGS]]\n"
		"\n"
		"Trace storage I/O, layer by layer (below), into a trace file. Stops\n"
		"when COMMAND exits, after SECONDS, or on Ctrl-C / SIGTERM; the file is\n"
		"complete in each case.\n"
		"Every layer records every process (COMMAND only bounds the recording in\n"
		"time); -p, --comm and --cgroup restrict every layer alike, each with the\n"
		"processes' descendants (given together, each must hold).\n"
		"\n"
		"  -o, --output FILE    trace file (default iotrail.trail)\n"
		"  -d, --duration SECS  stop after SECS seconds\n"
		"      --dev DEV[,DEV]  only these devices: /dev/sda, sda or 8:0 (a partition\n"
		"                       means its disk); up to %d, listed or repeated\n"
		"  -p, --pid PID[,PID]  only these processes and their descendants (repeat -p,\n"
		"                       or list: -p 12,13 or -p $(pidof postgres)); block\n"
		"                       I/O: the bios they submit and the requests they become\n"
		"      --comm NAME      only processes whose name starts with NAME (at most\n"
		"                       15 characters), and their descendants\n"
		"      --cgroup DIR     only tasks in this cgroup v2 directory or below it\n"
		"      --ringbuf-mb N   size of each layer's ring buffer in MiB, a power of two\n"
		"                       (default: 2 per CPU, from 4 to 64)\n"
		"      --drain-nice N   nice value of the thread that empties the rings\n"
		"                       (default -20: it keeps up when every CPU is busy)\n"
		"      --hook KIND      force tp_btf or raw_tp (default: best available;\n"
		"                       see iotrail probe)\n"
		"  -v, --verbose        show libbpf's messages and hook decisions\n"
		"      --layers LIST    comma-separated from: %s (default: every layer this\n"
		"                       kernel supports; see iotrail probe)\n"
		"      --target HOST:PORT[,HOST:PORT...]  also record those machines, each\n"
		"                       through its `iotrail agent` (machines 1..N of the\n"
		"                       file, in this order; each one's clock offset measured)\n"
		"      --key FILE[,FILE...]  the agents' shared key: one for all, or one per\n"
		"                       target in order (default /etc/iotrail/agent.key)\n"
		"      --target-layers LIST  what the targets record (default: what\n"
		"                       `iotrail record` records there)\n"
		"      --target-dev DEV[,DEV]  the targets' devices: once for all, or once\n"
		"                       per target in order (default: every device)\n"
		"      --flush-every SECS  write buffered records to the file every SECS\n"
		"                       (the agent's recorder uses it)\n"
		"      --filter EXPR    only I/Os that match, decided in the kernel at their\n"
		"                       first event: 'op=read && size>=32k || dev=8:0'; terms\n"
		"                       op=OP[,OP], op!=OP, size=N, size=N-M, size>=N (<=, >, <),\n"
		"                       dev=DEV, pid=N, comm=NAME, cgroup=DIR\n"
		"      --sample 1/N     one I/O in N, at random (after --filter); or N/EPOCH\n"
		"                       (100/1s): the first N I/Os of every EPOCH, none more\n"
		"      --start DATE     wait until DATE ('YYYY-MM-DD hh:mm:ss', local time)\n"
		"                       before recording (COMMAND starts then too)\n"
		"      --stop DATE      stop at DATE (with -d: whichever comes first)\n"
		"      --task FILE      a task file (INI: [workload], [profiler], [report]);\n"
		"                       options given here win over its keys\n"
		"      --flight DUR     flight recorder: keep only the last DUR (30s, 500ms) of\n"
		"                       the block layer's events in memory; write them to FILE\n"
		"                       at the end, and to FILE.1, FILE.2... on SIGUSR1 or\n"
		"                       --trigger\n"
		"      --flight-memory SIZE, --memory SIZE  its bound (default 256m; the\n"
		"                       oldest events go first, counted, when the window does\n"
		"                       not fit); without --flight, a flight recorder of any age\n"
		"      --on-full overwrite|write-out  with --memory: keep the newest events\n"
		"                       (overwrite, the default), or every event written to\n"
		"                       FILE as it comes (write-out: nothing overwritten)\n"
		"      --trigger STAGE>DUR  write the window when an I/O's stage (q2c, d2c,\n"
		"                       q2d) exceeds DUR: --trigger 'q2c>5ms' (once a spike)\n"
		"      --sink clickhouse://HOST[:PORT][/DB]  also send the recording into\n"
		"                       ClickHouse as it is recorded (port 8123, database\n"
		"                       iotrail by default; tables as iotrail export\n"
		"                       --format clickhouse makes them); FILE is written too\n"
		"\n"
		"layers:\n",
		MAX_DEVS, names);
	for (size_t i = 0; i < it_nlayers; i++)
		if (it_layers[i]->start)
			fprintf(f, "  %-9s %s%s%s\n", it_layers[i]->name, it_layers[i]->what,
				it_layers[i]->part_of ? "; with " : "",
				it_layers[i]->part_of ? it_layers[i]->part_of : "");
	for (size_t i = 0; i < it_nlayers; i++)
		if (it_layers[i]->usage) {
			fputc('\n', f);
			it_layers[i]->usage(f);
		}
	fprintf(f,
		"\n"
		"examples:\n"
		"  iotrail record -o fio.trail --dev sdb -- fio job.fio\n"
		"  iotrail record -d 10 -p $(pidof postgres)\n"
		"  iotrail record -- dd if=/dev/sda of=/dev/null bs=1M count=100 iflag=direct\n"
		"  iotrail report fio.trail\n");
}

static int fail(const char *what, const char *why, const char *todo)
{
	return it_fail(1, what, why, todo);
}

/* ---- options ---- */

static int parse_layers(struct record_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, names[128], todo[192];
	int rc = 0;

	if (!copy)
		return fail("parse --layers", "out of memory", NULL);
	layer_names(names, sizeof(names), ", ");
	snprintf(todo, sizeof(todo), "use a comma-separated list from: %s", names);
	memset(o->want, 0, sizeof(o->want));
	o->layers_given = true;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct it_layer_ops *l = it_layer_by_name(t);
		char why[128];
		size_t i = 0;

		if (!l || !own_layer(l)) {
			if (l && l->part_of)
				snprintf(why, sizeof(why), "layer '%s' is recorded with the %s layer "
					 "(where it can be)", t, l->part_of);
			else
				snprintf(why, sizeof(why), l ? "layer '%s' cannot be recorded yet" :
					 "unknown layer '%s'", t);
			rc = it_fail(-1, "parse --layers", why, todo);
			break;
		}
		while (it_layers[i] != l)
			i++;
		o->want[i] = true;
	}
	free(copy);
	bool any = false;
	for (size_t i = 0; i < it_nlayers; i++)
		any |= o->want[i];
	if (!rc && !any)
		rc = fail("parse --layers", "no layer given", todo);
	return rc;
}

/* long options without a letter (below the layers' IT_LAYER_OPT codes) */
enum { OPT_FILTER = 0x0800, OPT_SAMPLE, OPT_TASK, OPT_FLIGHT, OPT_FLIGHT_MEMORY, OPT_TRIGGER,
       OPT_SINK, OPT_START, OPT_STOP, OPT_ON_FULL, OPT_DRAIN_NICE };

/* The getopt table: the common options, then every layer's. */
static struct option *build_longopts(void)
{
	static const struct option common[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "dev", required_argument, NULL, 'D' },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'C' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "ringbuf-mb", required_argument, NULL, 'R' },
		{ "hook", required_argument, NULL, 'H' },
		{ "layers", required_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "target", required_argument, NULL, 'T' },
		{ "key", required_argument, NULL, 'K' },
		{ "target-layers", required_argument, NULL, 'Y' },
		{ "target-dev", required_argument, NULL, 'Z' },
		{ "flush-every", required_argument, NULL, 'F' },
		{ "filter", required_argument, NULL, OPT_FILTER },
		{ "sample", required_argument, NULL, OPT_SAMPLE },
		{ "task", required_argument, NULL, OPT_TASK },
		{ "flight", required_argument, NULL, OPT_FLIGHT },
		{ "flight-memory", required_argument, NULL, OPT_FLIGHT_MEMORY },
		{ "trigger", required_argument, NULL, OPT_TRIGGER },
		{ "sink", required_argument, NULL, OPT_SINK },
		{ "memory", required_argument, NULL, OPT_FLIGHT_MEMORY },
		{ "on-full", required_argument, NULL, OPT_ON_FULL },
		{ "start", required_argument, NULL, OPT_START },
		{ "stop", required_argument, NULL, OPT_STOP },
		{ "drain-nice", required_argument, NULL, OPT_DRAIN_NICE },
	};
	size_t n = sizeof(common) / sizeof(common[0]), k = 0;
	struct option *all;

	for (size_t i = 0; i < it_nlayers; i++)
		for (const struct option *p = it_layers[i]->options; p && p->name; p++)
			n++;
	all = calloc(n + 1, sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, common, sizeof(common));
	k = sizeof(common) / sizeof(common[0]);
	for (size_t i = 0; i < it_nlayers; i++)
		for (const struct option *p = it_layers[i]->options; p && p->name; p++)
			all[k++] = *p;
	return all;
}

/* The layer whose option code this is. */
static const struct it_layer_ops *option_layer(int code)
{
	for (size_t i = 0; i < it_nlayers; i++)
		if (it_layers[i]->id == IT_LAYER_OPT_LAYER(code) && it_layers[i]->parse)
			return it_layers[i];
	return NULL;
}

/* --dev DEV[,DEV...] (repeatable): each resolved to its whole disk. */
static int add_devs(struct record_opts *o, const char *arg)
{
	char copy[1024], err[200], *save = NULL;
	int added = 0;

	if (strlen(arg) >= sizeof(copy))
		return it_fail(-1, "parse --dev", "the list is too long", "give at most 16 devices");
	strcpy(copy, arg);
	for (char *d = strtok_r(copy, ",", &save); d; d = strtok_r(NULL, ",", &save), added++) {
		if (o->ndevs == MAX_DEVS)
			return it_fail(-1, "add --dev", "too many devices", "give at most 16");
		if (it_dev_resolve(d, &o->devs[o->ndevs], err, sizeof(err)))
			return it_fail(-1, "resolve --dev", err, "list devices with lsblk");
		o->ndevs++;
	}
	if (!added)
		return it_fail(-1, "parse --dev", "no device named", "give one, e.g. --dev sda or --dev loop0,loop1");
	return 0;
}

/* -p PID[,PID...]; the words after it that are PID lists too (the shell
 * splits `-p $(pidof postgres)` into them). Every PID must be running. */
static int parse_pids(struct record_opts *o, int argc, char **argv)
{
	char err[128];
	size_t first = o->scope.npids;

	if (it_scope_add_pids(optarg, &o->scope.pids, &o->scope.npids, err, sizeof(err)))
		return it_fail(-1, "parse -p", err, "give process ids: -p 12,13 or -p 12 -p 13");
	while (optind < argc && it_scope_is_pid_list(argv[optind]))
		if (it_scope_add_pids(argv[optind++], &o->scope.pids, &o->scope.npids, err,
				      sizeof(err)))
			return it_fail(-1, "parse -p", err, NULL);
	for (size_t i = first; i < o->scope.npids; i++) {
		if (kill(o->scope.pids[i], 0) && errno == ESRCH) {
			snprintf(err, sizeof(err), "%d", (int)o->scope.pids[i]);
			return it_fail(-1, "find process", err, "no such process; give a running one");
		}
	}
	return 0;
}

static int open_cgroup(struct record_opts *o, const char *dir)
{
	struct statfs sfs;

	if (o->scope.cgroup_fd >= 0)
		return it_fail(-1, "use --cgroup", dir, "give one --cgroup");
	o->scope.cgroup_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->scope.cgroup_fd < 0)
		return it_failf(-1, "failed to open cgroup %s: %s; give a cgroup v2 directory, e.g. "
				"/sys/fs/cgroup/system.slice", dir, strerror(errno));
	if (fstatfs(o->scope.cgroup_fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
		return it_failf(-1, "failed to use cgroup %s: not a cgroup v2 directory; give one "
				"under the cgroup2 mount (see: mount -t cgroup2)", dir);
	o->scope.cgroup = dir;
	return 0;
}

/* --OPTION A[,B...]: a copy of arg in *copy (freed first: the option
 * may be given again), split at its commas into out[] (at most
 * MAX_TARGETS, none empty), their number in *n. 0, or -1 after one line
 * ending in what to give. */
static int parse_list(const char *option, const char *arg, char **copy, const char **out,
		      size_t *n, const char *give)
{
	free(*copy);
	*n = 0;
	if (!(*copy = strdup(arg)))
		return it_failf(-1, "failed to parse %s: out of memory", option);
	for (char *p = *copy, *comma;; p = comma + 1) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		if (!*p || *n == MAX_TARGETS)
			return it_failf(-1, "failed to parse %s %s: an empty entry or more than %d; "
					"give %s", option, arg, MAX_TARGETS, give);
		out[(*n)++] = p;
		if (!comma)
			return 0;
	}
}

/* --target HOST:PORT[,HOST:PORT...], each checked before anything connects */
static int parse_targets(struct record_opts *o, const char *arg)
{
	char host[256], port[8], why[320];

	if (parse_list("--target", arg, &o->target_list, o->targets, &o->ntargets,
		       "HOST:PORT[,HOST:PORT...]"))
		return -1;
	for (size_t i = 0; i < o->ntargets; i++) {
		if (it_hostport_split(o->targets[i], host, sizeof(host), port, sizeof(port), why,
				      sizeof(why)))
			return it_fail(-1, "parse --target", why,
				       "give the agents' addresses, e.g. 10.0.0.2:4790,10.0.0.3:4790");
		for (size_t k = 0; k < i; k++)
			if (!strcmp(o->targets[k], o->targets[i]))
				return it_failf(-1, "failed to parse --target: %s is given twice; "
						"give each agent once", o->targets[i]);
	}
	return 0;
}

/* After parsing: one key file (and one --target-dev) for all targets, or
 * one per target in --target's order. */
static int check_per_target(struct record_opts *o)
{
	if (o->nkeyfiles > 1 && o->nkeyfiles != o->ntargets)
		return it_failf(-1, "failed to match --key to --target: %zu key files for %zu "
				"targets; give one key file for all, or one per target in the "
				"same order", o->nkeyfiles, o->ntargets);
	if (o->ntarget_devs > 1 && o->ntarget_devs != o->ntargets)
		return it_failf(-1, "failed to match --target-dev to --target: given %zu times for "
				"%zu targets; give it once for all, or once per target in the "
				"same order", o->ntarget_devs, o->ntargets);
	for (size_t i = 1; i < o->ntargets; i++) {
		if (o->nkeyfiles == 1)
			o->keyfiles[i] = o->keyfiles[0];
		if (o->ntarget_devs == 1)
			o->target_devs[i] = o->target_devs[0];
	}
	return 0;
}

/* The flight recorder keeps the event stream (block, with NVMe where it
 * runs): --layers block by default, any other layer refused. */
static int flight_layers(struct record_opts *o)
{
	if (o->ntargets)
		return it_fail(-1, "use --flight", "it records this machine only",
			       "leave out --target");
	if (!o->layers_given)
		return parse_layers(o, "block") ? -1 : 0;
	for (size_t i = 0; i < it_nlayers; i++)
		if (o->want[i] && it_layers[i]->id != IT_LAYER_BLOCK)
			return it_failf(-1, "failed to use --flight with the %s layer: the flight "
					"recorder keeps the block layer's events (with NVMe); give "
					"--layers block", it_layers[i]->name);
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	struct option *longopts = build_longopts();
	const struct it_layer_ops *l;
	char err[200], *end;
	long num;
	int c, rc = 0;

	*o = (struct record_opts){ .output = "iotrail.trail", .ringbuf_mb = 0, .drain_nice = -20,
				   .scope.cgroup_fd = -1 };
	if (!longopts)
		return fail("parse the options", "out of memory", NULL);
	/* '+': stop at COMMAND, so its own options are left alone */
	opterr = 0;
	while (!rc && (c = getopt_long(argc, argv, "+:o:d:p:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			o->output_set = true;
			break;
		case OPT_FILTER:
			o->task.filter_arg = optarg;
			break;
		case OPT_SAMPLE:
			o->task.sample_arg = optarg;
			break;
		case OPT_TASK:
			o->task.path = optarg;
			break;
		case OPT_FLIGHT:
			o->task.flight_arg = optarg;
			break;
		case OPT_FLIGHT_MEMORY:
			o->task.memory_arg = optarg;
			break;
		case OPT_TRIGGER:
			o->task.trigger_arg = optarg;
			break;
		case OPT_SINK: {
			char url[300], db[80];

			o->sink = optarg;
			if (it_sink_parse(optarg, url, sizeof(url), db, sizeof(db), err, sizeof(err)))
				rc = it_failf(-1, "failed to parse --sink %s: %s; give "
					      "clickhouse://HOST:PORT/DATABASE", optarg, err);
			break;
		}
		case OPT_START:
			o->task.start_arg = optarg;
			break;
		case OPT_STOP:
			o->task.stop_arg = optarg;
			break;
		case OPT_ON_FULL:
			o->task.on_full_arg = optarg;
			break;
		case 'd':
			/* !(d <= max) also refuses nan; the bound keeps d * 1e9 in a uint64_t */
			o->duration_s = strtod(optarg, &end);
			if (end == optarg || *end || o->duration_s <= 0 || !(o->duration_s <= 1e9))
				rc = it_fail(-1, "parse -d", optarg,
					     "give a number of seconds > 0 (at most 1e9)");
			break;
		case 'D':
			rc = add_devs(o, optarg);
			break;
		case 'p':
			rc = parse_pids(o, argc, argv);
			break;
		case 'C':
			if (!*optarg || strlen(optarg) > 15)
				rc = it_fail(-1, "parse --comm", optarg,
					     "give 1 to 15 characters (a comm is at most 15)");
			o->scope.comm = optarg;
			break;
		case 'G':
			rc = open_cgroup(o, optarg);
			break;
		case 'R':
			errno = 0;
			num = strtol(optarg, &end, 10);
			o->ringbuf_mb = num > 0 && num <= 2048 ? (unsigned int)num : 0;
			if (end == optarg || *end || errno || !o->ringbuf_mb ||
			    (o->ringbuf_mb & (o->ringbuf_mb - 1)))
				rc = it_fail(-1, "parse --ringbuf-mb", optarg,
					  "give a power of two from 1 to 2048");
			break;
		case OPT_DRAIN_NICE:
			errno = 0;
			num = strtol(optarg, &end, 10);
			o->drain_nice = (int)num;
			if (end == optarg || *end || errno || num < -20 || num > 19)
				rc = it_fail(-1, "parse --drain-nice", optarg,
					  "give a nice value from -20 to 19");
			break;
		case 'H':
			o->force_hook = it_hook_kind_parse(optarg);
			if (o->force_hook != IT_HOOK_TP_BTF && o->force_hook != IT_HOOK_RAW_TP)
				rc = it_fail(-1, "parse --hook", optarg, "use tp_btf or raw_tp");
			break;
		case 'L':
			if (parse_layers(o, optarg))
				rc = -1;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'T':
			rc = parse_targets(o, optarg);
			break;
		case 'K':
			/* one key file for every target, or one per target in
			 * --target's order (a fleet keeps a key per target) */
			rc = parse_list("--key", optarg, &o->key_list, o->keyfiles, &o->nkeyfiles,
					"FILE, or FILE,FILE... one per --target");
			break;
		case 'Y':
			o->target_layers = optarg;
			break;
		case 'Z':
			if (o->ntarget_devs == MAX_TARGETS)
				rc = it_failf(-1, "failed to parse --target-dev %s: more than %d; give "
					      "one for every target, or one per target", optarg,
					      MAX_TARGETS);
			else
				o->target_devs[o->ntarget_devs++] = optarg;
			break;
		case 'F':
			o->flush_every_s = strtod(optarg, &end);
			if (*end || o->flush_every_s <= 0)
				rc = it_fail(-1, "parse --flush-every", optarg,
					     "give a number of seconds > 0");
			break;
		case 'h':
			usage(stdout);
			rc = 1;
			break;
		default:
			l = c >= IT_LAYER_OPT(0, 0) ? option_layer(c) : NULL;
			if (l) {
				if (l->parse(c, optarg))
					rc = -1;
				break;
			}
			it_bad_option("record", c, argv);
			rc = -1;
		}
	}
	free(longopts);
	if (!rc && optind < argc)
		o->cmd = argv + optind;
	if (!rc && !o->ntargets && (o->nkeyfiles || o->target_layers || o->ntarget_devs))
		rc = it_fail(-1, "parse the options", "--key, --target-layers and --target-dev go "
			     "with --target", "give --target HOST:PORT");
	if (!rc)
		rc = check_per_target(o);
	if (!rc)
		rc = it_record_task_resolve(&o->task, &o->scope, &o->output, o->output_set,
					    &o->duration_s);
	if (!rc && *o->task.filter.cgroup)
		rc = open_cgroup(o, o->task.filter.cgroup);
	if (!rc && o->task.flight_ns)
		rc = flight_layers(o);
	if (!rc && o->sink && o->task.flight_ns)
		rc = it_fail(-1, "use --sink with --flight", "a flight recording is written at its "
			     "end only", "record without --flight, or export the flight file");
	/* the sink follows the file: buffers go into it twice a second (the
	 * sink sends once a second: rows reach the server within 1.5 s) */
	if (!rc && o->sink && !o->flush_every_s)
		o->flush_every_s = 0.5;
	/* the agents record what their own options say: a predicate given
	 * here would hold on this machine only, a partial result unsaid */
	if (!rc && o->ntargets && (o->task.filter.n || o->task.sample.one_in > 1 ||
					o->task.sample.per_epoch || o->task.start_s))
		rc = it_fail(-1, "use --filter, --sample or --start with --target",
			     "the targets' agents do not take them yet",
			     "record without them, or each machine on its own");
	return rc;
}

int it_record_parse_only(int argc, char **argv)
{
	struct record_opts o;
	int rc;

	optind = 0; /* glibc: start getopt afresh, as for a new process */
	rc = parse_args(argc, argv, &o);
	/* what parsing took, as cmd_record gives it back */
	free(o.scope.pids);
	free(o.target_list);
	free(o.key_list);
	it_record_task_free(&o.task);
	if (o.scope.cgroup_fd >= 0)
		close(o.scope.cgroup_fd);
	return rc;
}

/* ---- layers ---- */

struct session {
	const struct record_opts *o;
	struct it_session s;          /* what the layers see */
	bool started[MAX_LAYERS];     /* by index in it_layers[]: running */
	bool called[MAX_LAYERS];      /* start was called: free is owed */
	pid_t child;
	int status;          /* of COMMAND, when it ran */
	uint64_t end_ns;
	/* the devices of the trace's device table: diskstats at the start,
	 * then the deltas of those that moved (s.disk) */
	struct it_disk_delta *disk;
	size_t ndisk;
	struct it_remote *remote[MAX_TARGETS]; /* --target: machine i + 1's agent session */
	size_t nremote;
	/* what the trace's head is made of, again for each flight file */
	int argc;
	char **argv;
	const char *hooks;
	unsigned int flight_files;    /* FILE.N written so far */
	struct it_writer_stats ws;    /* the trace's writer at the end (the queue) */
	struct it_sink *sink;         /* --sink: the file into ClickHouse as written */
};

#define FOR_STARTED(ss, i, l) \
	for (size_t i = 0; i < it_nlayers; i++) \
		for (const struct it_layer_ops *l = it_layers[i]; l && (ss)->started[i]; l = NULL)

static int flight_dump(struct session *ss, const char *path, const char *why);
static void flight_write_now(struct session *ss, const char *why);

/* Every target is pulled in the one loop: a lost one stops only itself. */
static void remote_ticks(struct session *ss, uint64_t now)
{
	for (size_t i = 0; i < ss->nremote; i++)
		it_remote_tick(ss->remote[i], now);
}

/* Which layers record: those given in --layers, else every layer this
 * kernel can record; a layer that is part of another goes with it. Then
 * each layer checks its options against the choice. 0, or 1 after a
 * one-line message. */
static int choose_layers(struct record_opts *o, struct it_session *s)
{
	char why[256];

	for (size_t i = 0; i < it_nlayers; i++) {
		const struct it_layer_ops *l = it_layers[i];

		if (!own_layer(l) || o->layers_given)
			continue;
		o->want[i] = !l->opt_in && (!l->available || l->available(why, sizeof(why)));
		if (!o->want[i] && !l->opt_in && o->verbose)
			fprintf(stderr, "iotrail record: %s layer off: %s\n", l->name, why);
	}
	for (size_t i = 0; i < it_nlayers; i++)
		s->io_marks |= o->want[i] && it_layers[i]->follows_io;
	for (size_t i = 0; i < it_nlayers; i++) {
		const struct it_layer_ops *l = it_layers[i], *parent;

		if (!l->start)
			continue;
		if (l->part_of) {
			parent = it_layer_by_name(l->part_of);
			for (size_t j = 0; j < it_nlayers; j++)
				if (it_layers[j] == parent)
					o->want[i] = o->want[j];
		} else if (o->want[i] && o->layers_given && l->available &&
			   !l->available(why, sizeof(why))) {
			char what[64], todo[96];

			snprintf(what, sizeof(what), "record the %s layer", l->name);
			snprintf(todo, sizeof(todo), "leave it out of --layers; see `iotrail probe`");
			return fail(what, why, todo);
		}
		if (l->settle && l->settle(s, o->want[i]))
			return 1;
	}
	return 0;
}

/* Starts the chosen layers in registry order; hooks gets their hook
 * lists ("block=tp_btf;nvme=none;syscall=tp_btf"). A layer left out by
 * default is said (always when the kernel refused it, else with -v); one
 * asked for by --layers is an error. 0, or 1 after a message. */
/* A layer that runs (rc 1), or not (0: a note, why; an error when it was
 * named in --layers); -1: an error already reported. */
static int layer_outcome(struct session *ss, size_t i, int rc, const char *why)
{
	const struct it_layer_ops *l = it_layers[i];

	ss->started[i] = rc > 0;
	if (rc)
		return rc < 0 ? -1 : 0;
	if (ss->o->layers_given && !l->part_of)
		return it_failf(-1, "%s", why);
	if (ss->o->verbose || ss->called[i])
		fprintf(stderr, "iotrail record: note: recording without the %s layer: %s\n", l->name,
			why);
	return 0;
}

/* --start: the probes are loaded, and attach at the date, so nothing
 * before it is recorded and the recording starts on time; a signal
 * meanwhile ends the wait, and record, with one line. 0 or 1. */
static int wait_for_start(const struct record_opts *o)
{
	uint64_t at = (uint64_t)o->task.start_s * 1000000000ull, now;

	fprintf(stderr, "iotrail record: probes loaded; waiting until %s (--start)\n",
		o->task.task.start);
	while (!stop_signal && (now = it_clock_ns(CLOCK_REALTIME)) < at) {
		uint64_t left = at - now < 100000000ull ? at - now : 100000000ull;
		struct timespec ts = { 0, (long)left };

		nanosleep(&ts, NULL);
	}
	if (stop_signal)
		return it_failf(1, "failed to start recording: %s while waiting for --start %s; "
				"nothing was recorded", strsignal(stop_signal), o->task.task.start);
	return 0;
}

/* Every layer loads first, then all attach: a layer attached early would
 * fill its ring while the others load (seconds on a busy machine: 150,000
 * block events were dropped before a default recording began, seen here). */
static int start_layers(struct session *ss, char *hooks, size_t len)
{
	char h[it_nlayers][160];
	size_t off = 0;

	/* every layer's hook questions on one parse of the kernel BTF (each
	 * load frees it: parsed again per layer, it took seconds a record in
	 * the test VM); why[i]: why layer i is left out, when it is */
	char why[it_nlayers][320];

	it_probes_loading();
	for (size_t i = 0; i < it_nlayers; i++) {
		const struct it_layer_ops *l = it_layers[i];

		h[i][0] = why[i][0] = 0;
		if (!ss->o->want[i])
			continue;
		ss->called[i] = !l->part_of || !l->available || l->available(why[i], sizeof(why[i]));
		if (ss->called[i])
			it_hooks_prefetch(l->hooks, l->nhooks, ss->s.force_hook);
	}
	for (size_t i = 0; i < it_nlayers; i++) {
		const struct it_layer_ops *l = it_layers[i];
		int rc;

		if (!ss->o->want[i])
			continue;
		rc = ss->called[i] ? l->start(&ss->s, h[i], sizeof(h[i]), why[i], sizeof(why[i])) : 0;
		/* loading probes can take seconds on a slow machine: the
		 * target's session is running already, keep pulling it */
		remote_ticks(ss, it_clock_ns(CLOCK_MONOTONIC));
		if (layer_outcome(ss, i, rc, why[i]))
			return 1;
	}
	if (ss->o->task.start_s && wait_for_start(ss->o)) /* --start: loaded, not attached */
		return 1;
	for (size_t i = 0; i < it_nlayers; i++)
		if (ss->started[i] && it_layers[i]->attach &&
		    layer_outcome(ss, i, it_layers[i]->attach(&ss->s, why[i], sizeof(why[i])), why[i]))
			return 1;
	for (size_t i = 0; i < it_nlayers; i++) {
		if (!ss->o->want[i])
			continue;
		if (!ss->started[i])
			snprintf(h[i], sizeof(h[i]), "%s=none", it_layers[i]->name);
		off += snprintf(hooks + off, off < len ? len - off : 0, "%s%s", off ? ";" : "", h[i]);
	}
	return 0;
}

/* ---- COMMAND ---- */

/* The caller's nice value, for COMMAND, when the drain raised its own. */
static int caller_nice;
static bool drain_raised;

/* fork + exec; an exec failure comes back through a close-on-exec pipe so
 * it is reported here, not as a mysterious exit status 127. */
static pid_t start_command(char **cmd, int *exec_errno)
{
	int pfd[2], e = 0;
	ssize_t n;
	pid_t pid;

	*exec_errno = 0;
	if (pipe2(pfd, O_CLOEXEC)) {
		*exec_errno = errno;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		*exec_errno = errno;
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		signal(SIGPIPE, SIG_DFL); /* ignored here with --target, not in COMMAND */
		if (drain_raised) /* the caller's priority, not the drain's */
			setpriority(PRIO_PROCESS, 0, caller_nice);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(e)) {
		waitpid(pid, NULL, 0);
		*exec_errno = e;
		return -1;
	}
	return pid;
}

/* ---- draining the rings ----
 * Every layer's libbpf rings (s->rb) and the per-CPU rings of the I/O
 * path's event stream and of the system calls (s->evr, each set merged by
 * time: evring.h). The loop sleeps in one epoll on both: the probes wake
 * it only when a ring fills up. */

/* An event this recent may still have an earlier one, of another I/O, on
 * its CPU that a completion interrupted half-written; left in its ring
 * until the next drain, so that the merge can put that one first. */
#define EV_HOLD_NS 2000000ull

static int rings_epfd = -1;

/* The epoll of every ring, made on first use (after every layer attached).
 * The per-CPU rings edge-triggered: events too recent to hand on stay in
 * them, and level-triggered they would read as ready at once. */
static int rings_epoll(const struct it_session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	if (rings_epfd >= 0)
		return rings_epfd;
	fd = epoll_create1(EPOLL_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (s->rb && epoll_ctl(fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev))
		goto fail;
	ev.events = EPOLLIN | EPOLLET;
	for (unsigned int k = 0; k < s->nevr; k++)
		for (unsigned int i = 0; i < it_evring_count(s->evr[k]); i++)
			if (it_evring_fd(s->evr[k], i) >= 0 &&
			    epoll_ctl(fd, EPOLL_CTL_ADD, it_evring_fd(s->evr[k], i), &ev))
				goto fail;
	return rings_epfd = fd;
fail:
	close(fd);
	return -errno;
}

/* Sleeps until a ring wakes us or ms pass: 0, or -errno (-EINTR: a
 * signal). */
static int rings_wait(const struct it_session *s, int ms)
{
	struct epoll_event evs[8];
	int fd = rings_epoll(s);

	if (fd < 0)
		return fd;
	return epoll_wait(fd, evs, 8, ms) < 0 ? -errno : 0;
}

/* Hands on what the rings hold (all: the event rings to their end, after
 * the probes detached): records taken, or -errno. */
static int rings_consume(struct it_session *s, bool all)
{
	long n = 0, m;

	if (s->rb) {
		m = ring_buffer__consume(s->rb);
		if (m < 0)
			return (int)m;
		n += m;
	}
	for (unsigned int k = 0; k < s->nevr; k++) {
		m = it_evring_drain(s->evr[k], all ? UINT64_MAX
						   : it_clock_ns(CLOCK_MONOTONIC) - EV_HOLD_NS);
		if (m < 0)
			return (int)m;
		n += m;
	}
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

/* Asks COMMAND to stop, consuming events meanwhile so its last I/Os are
 * recorded: it gets the signal that stopped us (SIGTERM when the duration
 * ended), then SIGKILL after 2 s. */
static void stop_command(pid_t pid, int *status, struct it_session *s)
{
	uint64_t deadline = it_clock_ns(CLOCK_MONOTONIC) + 2000000000ull;

	kill(pid, stop_signal ? stop_signal : SIGTERM);
	while (waitpid(pid, status, WNOHANG) == 0) {
		if (it_clock_ns(CLOCK_MONOTONIC) > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return;
		}
		rings_wait(s, POLL_MS);
		rings_consume(s, false);
	}
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---- the recording loop ---- */

/* The default ring size: the drain loop empties a ring within a poll
 * period or a wakeup (a ring wakes it an eighth or a quarter full), so a
 * ring need only hold what the CPUs write meanwhile: 2 MiB per CPU keeps
 * up with the fastest loop device here at 0 drops (bench/memory.sh), and
 * keeps the recorder small where the old fixed 64 MiB did not. */
static unsigned int default_ring_mb(unsigned int ncpu)
{
	unsigned int mb = RING_MB_MIN;

	while (mb < RING_MB_MAX && mb < ncpu * RING_MB_PER_CPU)
		mb *= 2;
	return mb;
}

/* The rings are emptied by one thread, this one, while every CPU may be
 * filling them: under a fair scheduler it gets one runnable thread's share,
 * and N busy processes making calls outrun it (bench/syscall_loss.sh with
 * PRODUCERS=16: a quarter of the calls lost at nice 0, none at -20). At
 * -20 it takes the CPU when it has work, which is the events' own cost;
 * idle, it sleeps in the poll. Set before COMMAND is forked (which goes
 * back to the caller's value) and before the writer's thread starts (which
 * inherits it: the drain waits on a full write queue). */
static void raise_drain_priority(int nice_value)
{
	errno = 0;
	caller_nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		caller_nice = 0;
	if (!setpriority(PRIO_PROCESS, (id_t)gettid(), nice_value)) {
		drain_raised = true;
		return;
	}
	fprintf(stderr, "iotrail record: warning: cannot set the draining thread's nice value to "
		"%d: %s; on a busy machine more events may be lost (counted); run as root "
		"(CAP_SYS_NICE) or give --drain-nice 0\n", nice_value, strerror(errno));
}

/* COMMAND is gone, but I/O it left in flight may still complete (io_uring
 * and aio contexts are torn down after the process): keep consuming until
 * the devices' inflight counters read 0 for a poll period (or, where they
 * cannot be read, until the rings have been quiet for LINGER_QUIET_NS), at
 * most LINGER_MAX_NS: a disk busy with other processes' I/O never idles. */
static void linger(struct session *ss)
{
	struct it_session *s = &ss->s;
	uint64_t now = it_clock_ns(CLOCK_MONOTONIC), start = now, quiet_since = now;
	uint64_t seen = s->consumed;
	int idle, idle_polls = 0;

	while (nsignals < 2 && !s->err && now - start < LINGER_MAX_NS) {
		idle = it_devices_idle(ss->o->devs, ss->o->ndevs);
		rings_wait(s, POLL_MS);
		rings_consume(s, false);
		now = it_clock_ns(CLOCK_MONOTONIC);
		if (s->consumed != seen) {
			seen = s->consumed;
			quiet_since = now;
		}
		/* idle before that poll: what completed is in the ring now */
		idle_polls = idle > 0 ? idle_polls + 1 : 0;
		if (idle_polls >= 2 || (idle < 0 && now - quiet_since >= LINGER_QUIET_NS))
			break;
	}
}

/* Until COMMAND exits, the duration ends, a signal arrives or the writer
 * fails. The consumer polls on a timer: the BPF side submits without
 * wakeups unless the ring fills up. */
static void record_loop(struct session *ss)
{
	struct it_session *s = &ss->s;
	uint64_t deadline = 0, next_tick = 0, next_flush = 0, now;
	int err;

	if (ss->o->duration_s > 0)
		deadline = s->start_ns + (uint64_t)(ss->o->duration_s * 1e9);
	if (ss->o->task.stop_s) {
		/* --stop: a wall-clock date, as a point of the loop's clock */
		uint64_t rt = it_clock_ns(CLOCK_REALTIME), mono = it_clock_ns(CLOCK_MONOTONIC);
		uint64_t stop = (uint64_t)ss->o->task.stop_s * 1000000000ull;
		uint64_t at = stop > rt ? mono + (stop - rt) : mono;

		if (stop <= rt)
			fprintf(stderr, "iotrail record: warning: the probes were ready %.3f s after "
				"--stop %s (loading them took that long): the file holds next to "
				"nothing; give a later stop\n", (rt - stop) / 1e9, ss->o->task.task.stop);
		if (!deadline || at < deadline)
			deadline = at;
	}
	while (!stop_signal && !s->err) {
		if (deadline && it_clock_ns(CLOCK_MONOTONIC) >= deadline)
			break; /* before a poll that would take I/O past it */
		err = rings_wait(s, POLL_MS);
		if (err >= 0 || err == -EINTR)
			err = rings_consume(s, false);
		if (err < 0 && err != -EINTR && !s->err)
			s->err = err;
		now = it_clock_ns(CLOCK_MONOTONIC);
		if (now >= next_tick) {
			FOR_STARTED(ss, i, l)
				if (l->tick)
					l->tick(s);
			next_tick = now + DROPS_EVERY_NS;
		}
		if (ss->o->flush_every_s > 0 && now >= next_flush) {
			if (it_writer_flush(s->w) && !s->err)
				s->err = it_writer_flush(s->w);
			next_flush = now + (uint64_t)(ss->o->flush_every_s * 1e9);
		}
		remote_ticks(ss, now);
		if (s->flight && (flight_asked || s->flight_fired)) {
			flight_write_now(ss, flight_asked ? "SIGUSR1" : ss->o->task.task.trigger);
			flight_asked = 0;
			s->flight_fired = false;
		}
		if (ss->child > 0 && waitpid(ss->child, &ss->status, WNOHANG) == ss->child) {
			ss->child = 0;
			break;
		}
		if (deadline && now >= deadline)
			break;
	}
	if (s->err) /* writing failed: COMMAND is left alone (stopped_early) */
		return;
	if (ss->child > 0)
		stop_command(ss->child, &ss->status, s);
	if (ss->o->cmd)
		linger(ss);
}

/* What the kernel counted on the trace's devices: at the start... */
static void disk_start(struct session *ss, const struct it_device_rec *devs, size_t n)
{
	ss->s.disk_from_ns = it_clock_ns(CLOCK_MONOTONIC);
	ss->disk = calloc(n ? n : 1, sizeof(*ss->disk));
	if (!ss->disk)
		return; /* no warning then, nothing worse */
	for (size_t i = 0; i < n; i++)
		if (!it_diskstats_read(devs[i].dev, &ss->disk[ss->ndisk]))
			ss->ndisk++;
}

/* ... and what moved since (right before the probes detach: the block
 * layer stores it, and its report reconciles its completions in that
 * window with these), and the warning of a layer that recorded nothing. */
static void disk_deltas(struct session *ss)
{
	size_t k = 0;

	for (size_t i = 0; i < ss->ndisk; i++) {
		struct it_disk_delta *d = &ss->disk[i], now;

		if (it_diskstats_read(d->dev, &now))
			continue;
		*d = (struct it_disk_delta){ .dev = d->dev, .reads = now.reads - d->reads,
					     .writes = now.writes - d->writes,
					     .discards = now.discards - d->discards,
					     .flushes = now.flushes - d->flushes };
		if (d->reads || d->writes || d->discards || d->flushes)
			ss->disk[k++] = *d;
	}
	ss->ndisk = k;
	ss->s.disk = ss->disk;
	ss->s.ndisk = k;
	ss->s.disk_to_ns = it_clock_ns(CLOCK_MONOTONIC);
}

/* A layer that recorded nothing while its devices completed I/O: most
 * likely the scope (or --dev) leaves out who did it; say so. */
static void warn_silent_layers(const struct session *ss)
{
	uint64_t busy = 0;
	char scope[96] = "";

	for (size_t i = 0; i < ss->ndisk; i++)
		busy += ss->disk[i].reads + ss->disk[i].writes + ss->disk[i].flushes +
			ss->disk[i].discards;
	if (!busy)
		return;
	if (it_scope_tracks(&ss->o->scope)) {
		const struct it_scope *sc = &ss->o->scope;
		int n = snprintf(scope, sizeof(scope), "the scope (%s%s%s%s%s", sc->npids ? "-p " : "",
				 sc->comm ? "--comm " : "", sc->cgroup ? "--cgroup " : "",
				 it_task_filters(sc) ? "--filter " : "",
				 it_task_samples(sc) ? "--sample " : "");

		snprintf(scope + n - 1, sizeof(scope) - (n - 1), ") may leave them out; ");
	}
	FOR_STARTED(ss, i, l)
		if (l->recorded && !l->recorded())
			fprintf(stderr, "iotrail record: warning: the %s layer recorded nothing while "
				"its devices completed %llu I/Os (diskstats); %srecord without it "
				"to compare\n", l->name, (unsigned long long)busy, scope);
}

/* Detach first, so nothing new arrives, then drain what is in the rings;
 * then each layer's losses go into the file, and it is closed. */
static int finish(struct session *ss)
{
	struct it_session *s = &ss->s;
	int err = 0;

	/* the kernel's counts while the probes still run: the events in the
	 * file before their record are older than the read; those still in
	 * the rings come after it, and the report tells them by time */
	disk_deltas(ss);
	FOR_STARTED(ss, i, l)
		if (l->before_detach && !err)
			err = l->before_detach(s);
	FOR_STARTED(ss, i, l)
		if (l->detach)
			l->detach();
	while (rings_consume(s, true) > 0)
		;
	FOR_STARTED(ss, i, l)
		if (l->finish && !err)
			err = l->finish(s);
	ss->end_ns = it_clock_ns(CLOCK_MONOTONIC);
	it_writer_stats(s->w, &ss->ws); /* the queue written out */
	if (err || s->flight) {
		/* a flight recording's file is its last window, written whole */
		it_writer_abort(s->w);
		return err ? err : flight_dump(ss, ss->o->output, "at the end");
	}
	return it_writer_close(s->w, ss->end_ns);
}

static void human_bytes(uint64_t b, char *out, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(out, len, "%.1f GiB", b / (double)(1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(out, len, "%.1f MiB", b / (double)(1ull << 20));
	else
		snprintf(out, len, "%.1f KiB", b / 1024.0);
}

/* One line: each layer's counts, the file, the time, how it ended. */
static void summary(const struct session *ss, bool ran_command)
{
	char size[32] = "?", tail[64] = "", counts[512] = "";
	size_t off = 0;
	struct stat st;

	FOR_STARTED(ss, i, l) {
		char part[160] = "";

		if (!l->summary)
			continue;
		l->summary(part, sizeof(part));
		off += snprintf(counts + off, off < sizeof(counts) ? sizeof(counts) - off : 0,
				"%s%s", off ? ", " : "", part);
	}
	if (!stat(ss->o->output, &st))
		human_bytes(st.st_size, size, sizeof(size));
	if (ran_command)
		snprintf(tail, sizeof(tail), "; command exit status %d", exit_code(ss->status));
	else if (stop_signal)
		snprintf(tail, sizeof(tail), "; stopped by %s", strsignal(stop_signal));
	fprintf(stderr, "iotrail record: %s, %s in %s, %.2f s%s\n", counts, size, ss->o->output,
		(ss->end_ns - ss->s.start_ns) / 1e9, tail);
	if (ss->ws.waits)
		fprintf(stderr, "iotrail record: note: writing the trace fell behind: its %d MiB "
			"queue was full and the rings went undrained for %.3f s in all; what "
			"they could not hold meanwhile is counted lost above\n",
			WRITE_QUEUE_MB, ss->ws.wait_ns / 1e9);
	warn_silent_layers(ss);
}

/* The trace file could not be written (a full disk, most often) or the
 * rings not read: tracing stops at once, the probes are detached, and the
 * one line says why, what the file keeps and what to do. COMMAND is not
 * disturbed: it runs on, untraced, and is waited for. Returns 1. */
static int stopped_early(struct session *ss)
{
	struct it_session *s = &ss->s;
	struct it_writer_stats ws;
	char size[32], command[160] = "";

	FOR_STARTED(ss, i, l)
		if (l->detach)
			l->detach();
	it_writer_stats(s->w, &ws);
	it_writer_abort(s->w);
	s->w = NULL;
	human_bytes(ws.bytes, size, sizeof(size));
	if (ss->child > 0)
		snprintf(command, sizeof(command), "; '%s' goes on untraced, iotrail waits for it",
			 ss->o->cmd[0]);
	if (ws.err)
		it_failf(1, "failed to write %s: %s; recording stopped, the file keeps its first %s "
			 "(%llu chunks, %llu records), up to its last complete chunk, which iotrail "
			 "report reads%s; free space there or record elsewhere with -o", ss->o->output,
			 strerror(-ws.err), size, (unsigned long long)ws.chunks,
			 (unsigned long long)ws.records, command);
	else
		it_failf(1, "failed to read the ring buffers: %s; recording stopped, %s keeps its "
			 "first %s (%llu records)%s; run again with -v and report it",
			 strerror(-s->err), ss->o->output, size, (unsigned long long)ws.records,
			 command);
	while (ss->child > 0 && waitpid(ss->child, &ss->status, 0) < 0 && errno == EINTR)
		;
	return 1;
}

/* This machine's NVMe-oF endpoints into the head: what maps an
 * initiator's controller to the target machine serving it (nvmf.h). */
static int add_nvmf(struct it_writer *w)
{
	struct it_nvmf_rec *recs;
	long n = it_nvmf_collect("/sys/class/nvme", "/sys/kernel/config/nvmet/ports", &recs);
	int rc = n < 0 ? -ENOMEM : n ? it_writer_add_nvmf(w, 0, recs, (size_t)n) : 0;

	free(recs);
	return rc;
}

/* Creates path with the trace's head (HOST, DEVICES, LAYERS, the task,
 * NVMF); back_ns moves its start time back (a flight file starts where
 * its window does). *devs is the device table (free it). NULL with err. */
static struct it_writer *open_head(struct session *ss, const char *path, uint64_t back_ns,
				   uint64_t *start_ns, struct it_device_rec **devs, size_t *ndevs,
				   char *err, size_t errlen)
{
	const struct record_opts *o = ss->o;
	const int argc = ss->argc;
	struct it_host_rec host;
	struct it_layer_rec layers[MAX_LAYERS];
	struct it_trace_head head = { .host = &host, .layers = layers };
	struct it_writer *w;
	char *cmdv[argc + 1];
	size_t off = 0;

	it_host_fill(&host);
	host.start_monotonic_ns -= back_ns;
	host.start_realtime_ns -= back_ns;
	*start_ns = host.start_monotonic_ns;
	host.ncpus = ss->s.ncpu; /* the drops array and the per-CPU map agree */
	cmdv[0] = "iotrail";
	memcpy(cmdv + 1, ss->argv, argc * sizeof(*ss->argv));
	it_host_set_command(&host, argc + 1, cmdv);
	host.layers[0] = 0;
	FOR_STARTED(ss, i, l)
		off += snprintf(host.layers + off, off < sizeof(host.layers) ?
				sizeof(host.layers) - off : 0, "%s%s", off ? "," : "", l->name);
	snprintf(host.hooks, sizeof(host.hooks), "%s", ss->hooks);
	/* the layers manifest: the record types of every layer that runs */
	FOR_STARTED(ss, i, l)
		if (l->records)
			layers[head.nlayers++] = *l->records;
	*devs = it_device_table(o->devs, o->ndevs, ndevs);
	head.devs = *devs;
	head.ndevs = *ndevs;
	w = it_writer_open(path, &head, err, errlen);
	if (w && it_record_task_store(w, &o->task)) {
		snprintf(err, errlen, "cannot write the task's NOTE chunks");
		it_writer_abort(w);
		w = NULL;
	}
	if (w && add_nvmf(w)) {
		snprintf(err, errlen, "cannot write its NVMF chunk");
		it_writer_abort(w);
		w = NULL;
	}
	return w;
}

static int flight_put(const struct it_event *e, void *w)
{
	return it_writer_add_record(w, 0, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, e, sizeof(*e));
}

/* The flight recorder's window into path, through path.tmp renamed: a
 * reader never meets half a file. Its head starts where the window does.
 * 0, or -errno after one line. */
static int flight_dump(struct session *ss, const char *path, const char *why)
{
	struct it_session *s = &ss->s;
	uint64_t now = it_clock_ns(CLOCK_MONOTONIC), window = ss->o->task.flight_ns, start;
	uint64_t back = now - s->start_ns < window ? now - s->start_ns : window;
	struct it_flight_stats st;
	struct it_device_rec *devs;
	struct it_writer *w;
	char tmp[4096], err[256] = "", cut[128] = "";
	size_t ndevs;
	long n = -1;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	w = open_head(ss, tmp, back, &start, &devs, &ndevs, err, sizeof(err));
	free(devs);
	it_flight_stats(s->flight, &st);
	if (w) { /* what the memory bound overwrote, for the report to say */
		struct it_note_rec note = { .kind = IT_NOTE_OVERWRITTEN, .at_ns = now };

		snprintf(note.text, sizeof(note.text), "%llu", (unsigned long long)st.overwritten);
		if (it_writer_add_note(w, &note)) {
			it_writer_abort(w);
			w = NULL;
		}
	}
	if (w)
		n = it_flight_each(s->flight, now, flight_put, w);
	rc = !w ? -EIO : n < 0 ? (int)n : it_writer_close(w, now);
	if (w && n < 0)
		it_writer_abort(w);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		fprintf(stderr, "iotrail record: failed to write the flight recorder's window to %s: "
			"%s; check the path and free space\n", path, *err ? err : strerror(-rc));
		return rc;
	}
	if (st.overwritten)
		snprintf(cut, sizeof(cut), "; %llu events of windows so far left early for the "
			 "memory bound (--memory)", (unsigned long long)st.overwritten);
	fprintf(stderr, "iotrail record: flight: %ld events of the last %.3f s in %s (%s; %llu "
		"given)%s\n", n, back / 1e9, path, why, (unsigned long long)st.added, cut);
	return 0;
}

/* SIGUSR1 or the trigger: the window into OUTPUT.N, the next N. */
static void flight_write_now(struct session *ss, const char *why)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.%u", ss->o->output, ++ss->flight_files);
	flight_dump(ss, path, why);
}

static struct it_writer *open_trace(struct session *ss, int argc, char **argv, const char *hooks)
{
	const struct record_opts *o = ss->o;
	struct it_device_rec *devs;
	struct it_writer *w;
	char err[256];
	size_t ndevs;
	uint64_t start_ns;

	ss->argc = argc;
	ss->argv = argv;
	ss->hooks = hooks;
	w = open_head(ss, o->output, 0, &start_ns, &devs, &ndevs, err, sizeof(err));
	if (w) {
		disk_start(ss, devs, devs ? ndevs : 0);
		ss->s.w = w;
		ss->s.start_ns = start_ns;
		ss->s.devices = devs;
		ss->s.ndevices = ndevs;
		FOR_STARTED(ss, i, l)
			if (l->begin)
				l->begin(&ss->s);
		/* what the layers wrote at their start (the NVMe controllers'
		 * table, the block layer's first diskstats read) goes out now, as
		 * chunks ahead of every event of the rings: the writer flushes its
		 * streams in the order they were opened, and a reader meets the
		 * controllers' table only after the commands that need it when
		 * the block layer's stream, opened first, carries the events */
		int ferr = it_writer_flush(w);
		if (ferr)
			fprintf(stderr, "iotrail record: warning: failed to write the layers' start "
				"records: %s\n", strerror(-ferr));
		ss->s.devices = NULL;
		ss->s.ndevices = 0;
	}
	free(devs);
	if (!w)
		fail("open the trace file", err, "check the path and free space");
	return w;
}

/* Starts COMMAND once the probes and the trace header are in place. If it
 * cannot run, the trace file (which would hold nothing of it) is removed. */
static int launch(struct session *ss)
{
	char what[128];
	int exec_errno;

	ss->child = start_command(ss->o->cmd, &exec_errno);
	if (ss->child > 0)
		return 0;
	snprintf(what, sizeof(what), "run '%s'", ss->o->cmd[0]);
	fail(what, strerror(exec_errno), "check the command name and PATH");
	it_writer_abort(ss->s.w);
	ss->s.w = NULL;
	it_sink_cancel(ss->sink);
	ss->sink = NULL;
	unlink(ss->o->output);
	return -1;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake poll */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Where the recording of machine m goes until the merge: OUTPUT.local
 * for ours (m == 0), OUTPUT.targetM for machine M's pulled chunks. */
static void spool_path(char *out, size_t len, const char *output, size_t m)
{
	if (m)
		snprintf(out, len, "%s.target%zu", output, m);
	else
		snprintf(out, len, "%s.local", output);
}

static void remove_spools(const char *output, size_t ntargets)
{
	char path[4096];

	for (size_t m = 0; m <= ntargets; m++) {
		spool_path(path, sizeof(path), output, m);
		unlink(path);
	}
}

/* --target: every agent's session starts before the local probes, so a
 * target that cannot record stops everything before anything ran here:
 * first every agent is reached (key, protocol, clock), so an unreachable
 * one or a wrong key is refused before any target records; then each
 * starts recording (one that cannot ends the sessions started before it
 * with their connections). The local recording goes to OUTPUT.local,
 * target i's chunks to OUTPUT.target(i+1); all become OUTPUT at the end
 * (target_merge). */
static int target_start(struct session *ss, struct record_opts *o, char *local, size_t len)
{
	char err[600], spool[4096];

	for (size_t i = 0; i < o->ntargets; i++) {
		struct it_remote_opts ro = { .target = o->targets[i], .keyfile = o->keyfiles[i],
					     .layers = o->target_layers, .devs = o->target_devs[i],
					     .spool = spool, .pull_every_ns = 1000000000ull };

		spool_path(spool, sizeof(spool), o->output, i + 1);
		if (!(ss->remote[i] = it_remote_open(&ro, err, sizeof(err)))) {
			remove_spools(o->output, i);
			return it_failf(1, "%s", err);
		}
		ss->nremote++;
	}
	for (size_t i = 0; i < ss->nremote; i++) {
		if (it_remote_begin(ss->remote[i], err, sizeof(err))) {
			remove_spools(o->output, ss->nremote);
			return it_failf(1, "%s", err);
		}
	}
	spool_path(local, len, o->output, 0);
	o->output = local;
	return 0;
}

/* The clock estimate of each target from the matched I/Os, made from the
 * merged file with the report's own join and stored in it: the file is
 * merged again with them in its head (the head comes first; chunks are
 * copied, not decoded). Without a fabric join there is nothing to store;
 * a failure leaves the file as merged (the report estimates) and says so. */
static void store_clocks(const char *output, const char *local, struct it_merge_target *t,
			 size_t n)
{
	struct it_clock_store est[MAX_TARGETS];
	struct it_merge_result res[MAX_TARGETS];
	uint64_t start = it_clock_ns(CLOCK_MONOTONIC);
	size_t stored = 0;
	char err[600];

	if (it_clock_store_estimate(output, est, n, err, sizeof(err))) {
		fprintf(stderr, "iotrail record: warning: cannot estimate the targets' clocks from "
			"the matched I/Os: %s; the file has none stored, iotrail report "
			"estimates them\n", err);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (est[i].est.method) {
			t[i].est = &est[i].est;
			t[i].windows = est[i].windows;
			t[i].nwindows = est[i].nwindows;
			stored++;
		}
	if (stored && it_trace_merge(output, local, t, n, res, err, sizeof(err)))
		fprintf(stderr, "iotrail record: warning: cannot store the clock estimates in %s: "
			"%s; iotrail report estimates them\n", output, err);
	else
		for (size_t i = 0; i < n; i++) {
			const struct it_clock_est_rec *e = t[i].est;
			char drift[64] = "drift not estimated";

			if (!e)
				continue;
			if (e->flags & IT_CLOCK_EST_DRIFT_KNOWN)
				snprintf(drift, sizeof(drift), "drift %+.2f ppm +- %.2f",
					 -e->slope * 1e6, e->drift_bound_ppm);
			fprintf(stderr, "iotrail record: machine %zu's clock stored (%s): %+.9f s "
				"+- %.1f us, %s, from %llu matched I/Os (%.2f s to estimate and "
				"store)\n", i + 1, e->method == 1 ? "matched-io" : "agent-exchange",
				(double)e->offset_ns / 1e9, (double)e->uncertainty_ns / 1e3, drift,
				(unsigned long long)e->samples,
				(it_clock_ns(CLOCK_MONOTONIC) - start) / 1e9);
		}
	for (size_t i = 0; i < n; i++)
		t[i].est = NULL;
	it_clock_store_free(est, n);
}

/* The last pulls, then one file: machine 0 (ours) and machines 1..N (the
 * targets) each with its clock offset, and a NOTE for each agent lost. A
 * merge that fails leaves our own recording at OUTPUT and says so. */
static int target_merge(struct session *ss, struct record_opts *o, const char *output)
{
	struct it_merge_target t[MAX_TARGETS];
	struct it_merge_result res[MAX_TARGETS];
	const char *local = o->output;
	char spool[MAX_TARGETS][4096], err[600];
	uint64_t rtt;
	int rc = 0;

	for (size_t i = 0; i < ss->nremote; i++) {
		const struct it_remote *r = ss->remote[i];

		it_remote_finish(ss->remote[i]);
		spool_path(spool[i], sizeof(spool[i]), output, i + 1);
		t[i] = (struct it_merge_target){ .path = spool[i] };
		it_remote_clock(r, &t[i].clock, &rtt);
		t[i].lost = it_remote_lost(r, &t[i].lost_at_ns);
		fprintf(stderr, "iotrail record: target %s: clock offset %+lld ns +- %llu ns (best "
			"round trip %llu ns; %s)\n", it_remote_target(r),
			(long long)t[i].clock.offset_ns, (unsigned long long)t[i].clock.uncertainty_ns,
			(unsigned long long)rtt, t[i].clock.method);
	}
	o->output = output;
	if (it_trace_merge(output, local, t, ss->nremote, res, err, sizeof(err))) {
		rc = it_failf(1, "failed to merge the targets' recordings into %s: %s; %s holds "
			      "this machine's recording only", output, err, output);
		if (rename(local, output))
			unlink(local);
	} else {
		store_clocks(output, local, t, ss->nremote);
		for (size_t i = 0; i < ss->nremote; i++)
			fprintf(stderr, "iotrail record: target %s: %llu events in %llu chunks "
				"(machine %zu)%s\n", it_remote_target(ss->remote[i]),
				(unsigned long long)res[i].target_events,
				(unsigned long long)res[i].target_chunks, i + 1,
				res[i].target_complete ? "" : "; incomplete: its agent was lost");
		unlink(local);
	}
	remove_spools(output, ss->nremote);
	return rc;
}

static int check_kernel(void)
{
	char why[160];

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return fail("find the kernel's BTF", "/sys/kernel/btf/vmlinux is missing",
			    "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
	if (it_probe_bpf_allowed(why, sizeof(why)))
		return fail("load BPF programs", why, NULL);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct session ss = { .o = &o };
	struct it_session *s = &ss.s;
	char hooks[sizeof(((struct it_host_rec *)0)->hooks)] = "";
	char local[4096];
	const char *output;
	int rc, ret = 1, sink_rc = 0;
	bool ran_command = false;

	/* one malloc arena: the drain, writer and title threads each took one
	 * of their own, pages the start-up budget (32 MB) did not have room
	 * for (test_record_memory failed by 0.2 MB in one run of three) */
	mallopt(M_ARENA_MAX, 1);
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : 2;
	/* first: the probes take seconds to load on a busy machine, and a
	 * SIGINT then would kill us, or be lost where the shell ignores it
	 * for a background job */
	catch_signals();
	verbose = o.verbose;
	*s = (struct it_session){
		.devs = o.devs, .ndevs = o.ndevs, .scope = &o.scope, .ringbuf_mb = o.ringbuf_mb,
		.force_hook = o.force_hook, .verbose = o.verbose, .cmd = o.cmd != NULL,
		.ncpu = libbpf_num_possible_cpus(),
	};
	if (!s->ringbuf_mb)
		s->ringbuf_mb = default_ring_mb(s->ncpu);
	if (o.task.flight_ns) {
		struct sigaction usr1 = { .sa_handler = on_usr1 };

		s->flight = it_flight_new(o.task.flight_ns, o.task.flight_mem, &o.task.trigger);
		if (!s->flight)
			return fail("keep the flight recorder's window", "out of memory",
				    "give a smaller --flight-memory");
		sigemptyset(&usr1.sa_mask);
		sigaction(SIGUSR1, &usr1, NULL);
	}
	if (choose_layers(&o, s))
		return 2;
	libbpf_set_print(libbpf_log);
	if (check_kernel())
		return 1;
	output = o.output;
	/* a dropped agent is an error to handle, not a SIGPIPE that kills us */
	if (o.ntargets)
		signal(SIGPIPE, SIG_IGN);
	if (o.ntargets && target_start(&ss, &o, local, sizeof(local)))
		goto out;
	if (start_layers(&ss, hooks, sizeof(hooks)))
		goto out;
	it_probes_loaded(); /* the BTF's megabytes, which the recording does not need */
	if (verbose)
		fprintf(stderr, "iotrail record: hooks %s\n", hooks);
	if (stop_signal) {
		char why[96];

		snprintf(why, sizeof(why), "%s while the probes were loading", strsignal(stop_signal));
		fail("start recording", why, "nothing was recorded");
		goto out;
	}
	if (!open_trace(&ss, argc, argv, hooks))
		goto out;
	if (o.sink && !(ss.sink = it_sink_start(o.sink, o.output, output))) {
		it_writer_abort(s->w);
		s->w = NULL;
		unlink(o.output);
		goto out;
	}
	raise_drain_priority(o.drain_nice);
	if (o.cmd) {
		if (launch(&ss))
			goto out;
		ran_command = true;
	} else if (!o.duration_s) {
		fprintf(stderr, "iotrail record: recording into %s; Ctrl-C to stop\n", o.output);
	}
	/* from now on the trace is written by a thread of its own (started
	 * here, once the probes are loaded: not added to the start-up peak) */
	rc = it_writer_async(s->w, (size_t)WRITE_QUEUE_MB << 20);
	if (rc)
		fprintf(stderr, "iotrail record: warning: cannot start the trace's writer thread: "
			"%s; the recording waits on each write\n", strerror(-rc));
	record_loop(&ss);
	if (s->err) {
		ret = stopped_early(&ss);
		if (ss.sink)
			it_sink_stop(ss.sink, false);
		ss.sink = NULL;
		goto out;
	}
	rc = finish(&ss);
	s->w = NULL;
	if (ss.sink)
		sink_rc = it_sink_stop(ss.sink, !rc && !s->err);
	ss.sink = NULL;
	if (rc || s->err) {
		fail("write the trace file", strerror(-(rc ? rc : s->err)),
		     "check free space on its file system");
		goto out;
	}
	if (ss.nremote && target_merge(&ss, &o, output))
		goto out;
	summary(&ss, ran_command);
	ret = ran_command ? exit_code(ss.status) : 0;
	if (!ret && sink_rc)
		ret = sink_rc; /* the recording is whole, ClickHouse has part of it */
out:
	if (s->w)
		it_writer_abort(s->w);
	it_sink_cancel(ss.sink);
	/* the rings first: they map the layers' ring buffer maps */
	ring_buffer__free(s->rb);
	for (unsigned int k = 0; k < s->nevr; k++)
		it_evring_free(s->evr[k]);
	if (rings_epfd >= 0)
		close(rings_epfd);
	for (size_t i = it_nlayers; i-- > 0;)
		if (ss.called[i] && it_layers[i]->free)
			it_layers[i]->free();
	if (ss.nremote && o.output != output)
		/* stopped before the end: nothing half-written is left */
		remove_spools(output, ss.nremote);
	for (size_t i = 0; i < ss.nremote; i++)
		it_remote_free(ss.remote[i]);
	free(o.target_list);
	free(o.key_list);
	free(o.scope.pids);
	it_record_task_free(&o.task);
	it_flight_free(s->flight);
	free(ss.disk);
	if (o.scope.cgroup_fd >= 0)
		close(o.scope.cgroup_fd);
	return ret;
}
