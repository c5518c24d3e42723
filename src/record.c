// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * iotrail record: load the block probes, run the workload, stream the ring
 * buffer into a trace file until the workload exits, the duration ends or
 * SIGINT/SIGTERM arrives; the file is closed properly in every case.
 *
 * Order matters: probes are attached and the trace header is written before
 * COMMAND starts, so its first I/O is on the trail.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "block.skel.h"
#include "cli.h"
#include "commands.h"
#include "hooks.h"
#include "hostinfo.h"
#include "layer_table.h"
#include "nvme_layer.h"
#include "record_syscall.h"
#include "zone_table.h"
#include "tracefile.h"

#define MAX_DEVS 16           /* IT_MAX_DEVS in bpf/block.bpf.c */
#define POLL_MS 20            /* consumer timer: the BPF side rarely wakes us */
#define DROPS_EVERY_NS 250000000ull
#define LINGER_QUIET_NS 100000000ull
#define LINGER_MAX_NS 2000000000ull

struct record_opts {
	const char *output;
	double duration_s;            /* 0: until COMMAND exits or a signal */
	uint32_t devs[MAX_DEVS];
	size_t ndevs;
	pid_t pid;
	unsigned int ringbuf_mb;
	enum it_hook_kind force_hook; /* IT_HOOK_NONE: best available */
	bool verbose;
	char **cmd;                   /* NULL: no COMMAND */
	struct rec_sys_opts sys;      /* --layers and the syscall layer's options */
};

struct consumer {
	struct it_writer *w;
	uint64_t events, ios, dropped;
	uint64_t missed;              /* probe runs the kernel skipped (nesting) */
	int err;
};

static volatile sig_atomic_t stop_signal, nsignals;

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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail record [-o FILE] [-d SECONDS] [--dev DEV]... [-p PID]\n"
		"                      [--ringbuf-mb N] [-v] [-- COMMAND [ARGS]]\n"
		"\n"
		"Trace every block I/O (bio queue, merge, split, request insert, issue,\n"
		"requeue, complete) into a trace file. Stops when COMMAND exits, after\n"
		"SECONDS, or on Ctrl-C / SIGTERM; the file is complete in each case.\n"
		"I/O of every process is recorded (COMMAND only bounds the recording);\n"
		"use -p to keep one process's I/O.\n"
		"\n"
		"  -o, --output FILE    trace file (default iotrail.trail)\n"
		"  -d, --duration SECS  stop after SECS seconds\n"
		"      --dev DEV        only this device: /dev/sda, sda or 8:0 (a partition\n"
		"                       means its disk); repeat for up to %d devices\n"
		"  -p, --pid PID        only I/O submitted by process PID (and the requests\n"
		"                       its bios become)\n"
		"      --ringbuf-mb N   ring buffer size in MiB, a power of two (default 64)\n"
		"      --hook KIND      force tp_btf or raw_tp (default: best available;\n"
		"                       see iotrail probe)\n"
		"  -v, --verbose        show libbpf's messages and hook decisions\n",
		MAX_DEVS);
	rec_sys_usage(f);
	fprintf(f,
		"\n"
		"examples:\n"
		"  iotrail record -o fio.trail --dev nvme0n1 -- fio job.fio\n"
		"  iotrail record -d 10 -p $(pidof postgres)\n"
		"  iotrail record -- dd if=/dev/sda of=/dev/null bs=1M count=100 iflag=direct\n"
		"  iotrail record --layers syscall --calls data,sync --path /var/lib/db -- ./db\n"
		"  iotrail report fio.trail\n");
}

static int fail(const char *what, const char *why, const char *todo)
{
	fprintf(stderr, "iotrail record: failed to %s: %s%s%s\n", what, why,
		todo ? "; " : "", todo ? todo : "");
	return 1;
}

/* ---- options ---- */

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "dev", required_argument, NULL, 'D' },
		{ "pid", required_argument, NULL, 'p' },
		{ "ringbuf-mb", required_argument, NULL, 'R' },
		{ "hook", required_argument, NULL, 'H' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		REC_SYS_LONGOPTS,
		{ 0 },
	};
	char err[200], *end;
	int c;

	*o = (struct record_opts){ .output = "iotrail.trail", .ringbuf_mb = 64 };
	/* '+': stop at COMMAND, so its own options are left alone */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:d:p:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'd':
			o->duration_s = strtod(optarg, &end);
			if (*end || o->duration_s <= 0)
				return fail("parse -d", optarg, "give a number of seconds > 0"), -1;
			break;
		case 'D':
			if (o->ndevs == MAX_DEVS)
				return fail("add --dev", "too many devices", "give at most 16"), -1;
			if (it_dev_resolve(optarg, &o->devs[o->ndevs], err, sizeof(err)))
				return fail("resolve --dev", err, "list devices with lsblk"), -1;
			o->ndevs++;
			break;
		case 'p':
			o->pid = strtol(optarg, &end, 10);
			if (*end || o->pid <= 0)
				return fail("parse -p", optarg, "give a process id"), -1;
			if (kill(o->pid, 0) && errno == ESRCH)
				return fail("find process", optarg, "no such process"), -1;
			break;
		case 'R':
			o->ringbuf_mb = strtoul(optarg, &end, 10);
			if (*end || !o->ringbuf_mb || o->ringbuf_mb > 2048 ||
			    (o->ringbuf_mb & (o->ringbuf_mb - 1)))
				return fail("parse --ringbuf-mb", optarg,
					    "give a power of two from 1 to 2048"), -1;
			break;
		case 'H':
			o->force_hook = it_hook_kind_parse(optarg);
			if (o->force_hook != IT_HOOK_TP_BTF && o->force_hook != IT_HOOK_RAW_TP)
				return fail("parse --hook", optarg, "use tp_btf or raw_tp"), -1;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case REC_OPT_LAYERS ... REC_OPT_SYSCALL_HOOK:
			if (rec_sys_parse(&o->sys, c, optarg))
				return -1;
			break;
		default:
			it_bad_option("record", c, argv);
			return -1;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	return rec_sys_settle(&o->sys, o->pid, o->cmd != NULL, o->verbose);
}

/* ---- probes ---- */

struct block_prog {
	const char *tp;
	struct bpf_program *btf, *raw;
};

static size_t block_progs(struct block_bpf *skel, struct block_prog *p)
{
	size_t n = 0;

#define PAIR(name) p[n++] = (struct block_prog){ #name, skel->progs.name##_btf, skel->progs.name }
	PAIR(block_bio_queue);
	PAIR(block_bio_backmerge);
	PAIR(block_bio_frontmerge);
	PAIR(block_split);
	PAIR(block_bio_complete);
	PAIR(block_rq_insert);
	PAIR(block_rq_issue);
	PAIR(block_rq_requeue);
	PAIR(block_rq_complete);
	PAIR(block_rq_merge);
#undef PAIR
	return n;
}
#define NBLOCK_PROGS 10

/* Same decision as `iotrail probe`: tp_btf if the kernel takes it, else
 * raw_tp, else the hook is left out (with a warning). A forced kind is
 * still checked, so a missing tracepoint is a warning, not a failed attach. */
static enum it_hook_kind choose_hook(const char *tp, enum it_hook_kind force)
{
	char why[160] = "";

	if (force != IT_HOOK_RAW_TP) {
		if (!it_probe_tp_btf(tp, NULL, why, sizeof(why)))
			return IT_HOOK_TP_BTF;
		if (verbose && force == IT_HOOK_NONE)
			fprintf(stderr, "iotrail record: %s: %s; trying raw_tp\n", tp, why);
	}
	if (force != IT_HOOK_TP_BTF && !it_probe_raw_tp(tp, why, sizeof(why)))
		return IT_HOOK_RAW_TP;
	fprintf(stderr, "iotrail record: warning: %s is not traceable here (%s); "
		"its events are left out\n", tp, why);
	return IT_HOOK_NONE;
}

/* Sets autoload per variant and describes the choice in hooks, e.g.
 * "block=tp_btf" or "block=tp_btf,block_rq_merge=none". Returns how many
 * programs use tp_btf. */
static int select_variants(struct block_bpf *skel, enum it_hook_kind force, char *hooks,
			   size_t len)
{
	struct block_prog p[NBLOCK_PROGS];
	enum it_hook_kind kind[NBLOCK_PROGS], common;
	size_t n = block_progs(skel, p), off;
	int nbtf = 0;

	for (size_t i = 0; i < n; i++) {
		kind[i] = choose_hook(p[i].tp, force);
		bpf_program__set_autoload(p[i].btf, kind[i] == IT_HOOK_TP_BTF);
		bpf_program__set_autoload(p[i].raw, kind[i] == IT_HOOK_RAW_TP);
		nbtf += kind[i] == IT_HOOK_TP_BTF;
	}
	/* the kind most hooks use, then the exceptions */
	common = nbtf * 2 >= (int)n ? IT_HOOK_TP_BTF : IT_HOOK_RAW_TP;
	off = snprintf(hooks, len, "block=%s", it_hook_kind_name(common));
	for (size_t i = 0; i < n && off < len; i++)
		if (kind[i] != common)
			off += snprintf(hooks + off, len - off, ",%s=%s", p[i].tp,
					it_hook_kind_name(kind[i]));
	return nbtf;
}

static void set_tunables(struct block_bpf *skel, const struct record_opts *o)
{
	int qarg = it_block_tp_has_queue_arg();

	if (qarg < 0 && verbose)
		fprintf(stderr, "iotrail record: cannot read btf_trace_block_rq_issue (%s); "
			"assuming the v5.11+ tracepoint arguments\n", strerror(-qarg));
	skel->rodata->tp_has_queue_arg = qarg == 1;
	skel->rodata->filter_ndevs = o->ndevs;
	for (size_t i = 0; i < o->ndevs; i++)
		skel->rodata->filter_devs[i] = o->devs[i];
	skel->rodata->filter_tgid = o->pid;
	/* wake the consumer early only when a quarter of the ring is used */
	skel->rodata->wakeup_bytes = ((__u64)o->ringbuf_mb << 20) / 4;
	bpf_map__set_max_entries(skel->maps.events, o->ringbuf_mb << 20);
	if (!o->pid) /* the -p bookkeeping map stays unused: keep it small */
		bpf_map__set_max_entries(skel->maps.tracked, 64);
}

static struct block_bpf *load_probes(const struct record_opts *o, enum it_hook_kind force,
				     char *hooks, size_t len, int *nbtf, int *err)
{
	struct block_bpf *skel = block_bpf__open();

	if (!skel) {
		*err = -errno;
		return NULL;
	}
	set_tunables(skel, o);
	*nbtf = select_variants(skel, force, hooks, len);
	if (!strstr(hooks, "tp_btf") && !strstr(hooks, "raw_tp")) {
		*err = -ENOENT; /* no block tracepoint at all: nothing to record */
		block_bpf__destroy(skel);
		return NULL;
	}
	*err = block_bpf__load(skel);
	if (*err) {
		block_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int load_error(int err)
{
	char why[96];

	err = -err;
	snprintf(why, sizeof(why), "%s", strerror(err));
	if (err == EPERM || (err == EACCES && geteuid() != 0))
		return fail("load the BPF programs", why,
			    "run as root (or with CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE)");
	if (err == ENOENT)
		return fail("attach the block probes", "no block tracepoint is usable here",
			    "see `iotrail probe`");
	if (err == ENOSYS)
		return fail("load the BPF programs", "this kernel has no bpf() system call",
			    "use a kernel built with CONFIG_BPF_SYSCALL=y");
	return fail("load the BPF programs", why,
		    verbose ? "see libbpf's messages above" : "rerun with -v to see why");
}

/* Loads with the best hooks; if the kernel refuses the tp_btf variants,
 * tries again with raw_tp before giving up. */
static struct block_bpf *open_probes(const struct record_opts *o, char *hooks, size_t len)
{
	struct block_bpf *skel;
	int err, nbtf;

	skel = load_probes(o, o->force_hook, hooks, len, &nbtf, &err);
	if (!skel && nbtf && o->force_hook == IT_HOOK_NONE) {
		if (verbose)
			fprintf(stderr, "iotrail record: tp_btf programs refused (%s); "
				"falling back to raw_tp\n", strerror(-err));
		skel = load_probes(o, IT_HOOK_RAW_TP, hooks, len, &nbtf, &err);
	}
	if (!skel) {
		load_error(err);
		return NULL;
	}
	err = block_bpf__attach(skel);
	if (err) {
		fail("attach the block probes", strerror(-err),
		     "check `iotrail probe` for what this kernel supports");
		block_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* The NVMe driver layer joins when nvme_core is loaded (src/nvme_layer.c);
 * without it the trace is block-only, and we say so. */
static void start_nvme(const struct record_opts *o, struct block_bpf *skel, char *hooks,
		       size_t len)
{
	struct it_nvme_layer_opts no = {
		.events = skel->maps.events, .drops = skel->maps.drops,
		.tracked = skel->maps.tracked, .devs = o->devs, .ndevs = o->ndevs,
		.pid = o->pid, .wakeup_bytes = skel->rodata->wakeup_bytes,
		.force_hook = o->force_hook, .verbose = o->verbose,
	};
	char nh[64] = "", why[200] = "";
	size_t off = strlen(hooks);

	if (it_nvme_layer_start(&no, nh, sizeof(nh), why, sizeof(why))) {
		snprintf(hooks + off, len - off, ";%s", nh);
		return;
	}
	/* the trace says so too (hooks "nvme=none", shown by report); a
	 * machine without NVMe gets no message unless -v */
	snprintf(hooks + off, len - off, ";nvme=none");
	if (o->verbose || strstr(why, "failed"))
		fprintf(stderr, "iotrail record: NVMe layer off: %s; recording the block layer "
			"only\n", why);
}

/* ---- consumer ---- */

/* Each event is packed into the writer's chunk straight from the ring
 * buffer: no copy in between (evpack.h). */
static int on_event(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	const struct it_event *e = data;

	if (size < sizeof(*e))
		return 0;
	c->events++;
	/* an -EAGAIN bio completion is a NOWAIT bounce its submitter retries,
	 * not an I/O */
	c->ios += e->type == IT_EV_RQ_COMPLETE ||
		  (e->type == IT_EV_BIO_COMPLETE && e->error != -EAGAIN);
	if (!c->err)
		c->err = it_writer_add_record(c->w, 0, IT_LAYER_BLOCK, IT_CHUNK_EVENTS, e, sizeof(*e));
	return c->err; /* a failing writer stops consumption */
}

/* Per-CPU drop counters (ncpu entries); their sum is returned. */
static uint64_t read_drops(struct block_bpf *skel, uint64_t *per_cpu, unsigned int ncpu)
{
	uint64_t sum = 0;
	__u32 key = 0;

	memset(per_cpu, 0, ncpu * sizeof(*per_cpu));
	if (bpf_map__lookup_elem(skel->maps.drops, &key, sizeof(key), per_cpu,
				 ncpu * sizeof(*per_cpu), 0))
		return 0;
	for (unsigned int i = 0; i < ncpu; i++)
		sum += per_cpu[i];
	return sum;
}

/* ---- COMMAND ---- */

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

/* Asks COMMAND to stop, consuming events meanwhile so its last I/Os are
 * recorded: it gets the signal that stopped us (SIGTERM when the duration
 * ended), then SIGKILL after 2 s. */
static void stop_command(pid_t pid, int *status, struct ring_buffer *rb)
{
	uint64_t deadline = it_clock_ns(CLOCK_MONOTONIC) + 2000000000ull;

	kill(pid, stop_signal ? stop_signal : SIGTERM);
	while (waitpid(pid, status, WNOHANG) == 0) {
		if (it_clock_ns(CLOCK_MONOTONIC) > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return;
		}
		ring_buffer__poll(rb, POLL_MS);
		ring_buffer__consume(rb);
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

/* Runs of obj's programs the kernel skipped because the same program was
 * already running on that CPU (a completion in an interrupt that arrived
 * while the probe ran for another device's completion): each is an event
 * lost without a trace in the ring buffer. */
static uint64_t prog_misses(struct bpf_object *obj)
{
	struct bpf_program *p;
	uint64_t n = 0;

	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

struct session {
	const struct record_opts *o;
	struct block_bpf *skel;       /* NULL without the block layer */
	struct rec_sys *sys;          /* NULL without the syscall layer */
	struct ring_buffer *rb;
	struct consumer *c;
	uint64_t *drops;
	unsigned int ncpu;
	pid_t child;
	int status;          /* of COMMAND, when it ran */
	uint64_t start_ns, end_ns;
};

/* COMMAND is gone, but I/O it left in flight may still complete (io_uring
 * and aio contexts are torn down after the process): keep consuming until
 * the devices' inflight counters read 0 for a poll period (or, where they
 * cannot be read, until the ring has been quiet for LINGER_QUIET_NS), at
 * most LINGER_MAX_NS: a disk busy with other processes' I/O never idles. */
static void linger(struct session *s)
{
	uint64_t now = it_clock_ns(CLOCK_MONOTONIC), start = now, quiet_since = now;
	uint64_t seen = s->c->events;
	int idle, idle_polls = 0;

	while (nsignals < 2 && !s->c->err && now - start < LINGER_MAX_NS) {
		idle = it_devices_idle(s->o->devs, s->o->ndevs);
		ring_buffer__poll(s->rb, POLL_MS);
		ring_buffer__consume(s->rb);
		now = it_clock_ns(CLOCK_MONOTONIC);
		if (s->c->events != seen) {
			seen = s->c->events;
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
static void record_loop(struct session *s)
{
	uint64_t deadline = 0, next_drops = 0, now;
	int err;

	if (s->o->duration_s > 0)
		deadline = s->start_ns + (uint64_t)(s->o->duration_s * 1e9);
	while (!stop_signal && !s->c->err) {
		err = ring_buffer__poll(s->rb, POLL_MS);
		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(s->rb);
		if (err < 0 && err != -EINTR && !s->c->err)
			s->c->err = err;
		now = it_clock_ns(CLOCK_MONOTONIC);
		if (now >= next_drops && s->skel) {
			s->c->dropped = read_drops(s->skel, s->drops, s->ncpu);
			it_writer_set_lost(s->c->w, 0, IT_LAYER_BLOCK, s->c->dropped);
			next_drops = now + DROPS_EVERY_NS;
		}
		if (s->child > 0 && waitpid(s->child, &s->status, WNOHANG) == s->child) {
			s->child = 0;
			break;
		}
		if (deadline && now >= deadline)
			break;
	}
	if (s->child > 0)
		stop_command(s->child, &s->status, s->rb);
	if (s->o->cmd)
		linger(s);
}

/* Detach first, so nothing new arrives, then drain what is in the ring. */
static int finish(struct session *s, struct it_writer *w)
{
	if (s->skel)
		block_bpf__detach(s->skel);
	it_nvme_layer_stop();
	rec_sys_detach(s->sys);
	while (ring_buffer__consume(s->rb) > 0)
		;
	if (s->skel) {
		s->c->dropped = read_drops(s->skel, s->drops, s->ncpu);
		s->c->missed = prog_misses(s->skel->obj);
		it_writer_set_missed(w, 0, IT_LAYER_BLOCK, s->c->missed);
		it_writer_set_drops(w, 0, IT_LAYER_BLOCK, s->drops, s->ncpu);
	}
	rec_sys_finish(s->sys, w);
	s->end_ns = it_clock_ns(CLOCK_MONOTONIC);
	return it_writer_close(w, s->end_ns);
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

static void summary(const struct session *s, bool ran_command)
{
	char size[32] = "?", tail[64] = "", sys[96];
	struct stat st;

	rec_sys_summary(s->sys, sys, sizeof(sys));
	if (!stat(s->o->output, &st))
		human_bytes(st.st_size, size, sizeof(size));
	if (ran_command)
		snprintf(tail, sizeof(tail), "; command exit status %d", exit_code(s->status));
	else if (stop_signal)
		snprintf(tail, sizeof(tail), "; stopped by %s", strsignal(stop_signal));
	fprintf(stderr,
		"iotrail record: %llu I/Os, %llu events, %llu dropped%s, %s in %s, %.2f s%s\n",
		(unsigned long long)s->c->ios, (unsigned long long)s->c->events,
		(unsigned long long)s->c->dropped, sys, size, s->o->output,
		(s->end_ns - s->start_ns) / 1e9, tail);
	if (s->c->missed)
		fprintf(stderr, "iotrail record: %llu probe runs were skipped by the kernel (a probe "
			"interrupted by itself on one CPU): their events are missing; the report "
			"says so too\n", (unsigned long long)s->c->missed);
	if (s->c->dropped)
		fprintf(stderr, "iotrail record: events were lost: the consumer fell behind; "
			"try a larger --ringbuf-mb or --dev/-p filters\n");
}

/* The layers manifest of the recording (src/layer_table.c): block (with
 * NVMe when its probes run: both share the block ring) and syscall. */
static size_t trace_layers(const struct session *s, bool nvme, struct it_layer_rec *out)
{
	size_t n = 0;

	if (s->skel)
		out[n++] = *it_layer_builtin(IT_LAYER_BLOCK);
	if (s->skel && nvme)
		out[n++] = *it_layer_builtin(IT_LAYER_NVME);
	if (s->sys)
		out[n++] = *it_layer_builtin(IT_LAYER_SYSCALL);
	return n;
}

static struct it_writer *open_trace(const struct record_opts *o, int argc, char **argv,
				    const char *hooks, struct session *s)
{
	struct it_host_rec host;
	struct it_layer_rec layers[3];
	struct it_trace_head head = { .host = &host, .layers = layers };
	struct it_device_rec *devs;
	struct it_writer *w;
	char err[256], *cmdv[argc + 1];
	size_t ndevs;
	bool nvme = strstr(hooks, "nvme=") && !strstr(hooks, "nvme=none");

	it_host_fill(&host);
	host.ncpus = s->ncpu; /* the drops array and the per-CPU map agree */
	cmdv[0] = "iotrail";
	memcpy(cmdv + 1, argv, argc * sizeof(*argv));
	it_host_set_command(&host, argc + 1, cmdv);
	snprintf(host.layers, sizeof(host.layers), "%s%s%s%s", s->skel ? "block" : "",
		 nvme ? ",nvme" : "",
		 s->skel && s->sys ? "," : "", s->sys ? "syscall" : "");
	snprintf(host.hooks, sizeof(host.hooks), "%s", hooks);
	devs = it_device_table(o->devs, o->ndevs, &ndevs);
	head.devs = devs;
	head.ndevs = ndevs;
	head.nlayers = trace_layers(s, nvme, layers);
	w = it_writer_open(o->output, &head, err, sizeof(err));
	if (w) /* zoned devices: their zone layout, before any event */
		it_record_zone_table(w, devs, ndevs, host.start_monotonic_ns);
	free(devs);
	if (!w) {
		fail("open the trace file", err, "check the path and free space");
		return NULL;
	}
	s->start_ns = host.start_monotonic_ns;
	return w;
}

/* Starts COMMAND once the probes and the trace header are in place. If it
 * cannot run, the trace file (which would hold nothing of it) is removed. */
static int launch(struct session *s, struct it_writer *w)
{
	char what[128];
	int exec_errno;

	/* the syscall layer follows COMMAND's process tree from its fork on */
	rec_sys_adopt(s->sys, true);
	s->child = start_command(s->o->cmd, &exec_errno);
	rec_sys_adopt(s->sys, false);
	if (s->child > 0)
		return 0;
	snprintf(what, sizeof(what), "run '%s'", s->o->cmd[0]);
	fail(what, strerror(exec_errno), "check the command name and PATH");
	it_writer_abort(w);
	unlink(s->o->output);
	return -1;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake poll */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
	struct session s = { .o = &o };
	struct it_writer *w = NULL;
	char hooks[sizeof(((struct it_host_rec *)0)->hooks)] = "";
	int rc, ret = 1;
	bool ran_command = false, sys_failed;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : 2;
	verbose = o.verbose;
	libbpf_set_print(libbpf_log);
	if (check_kernel())
		return 1;
	if (o.sys.layers & REC_LAYER_BLOCK) {
		s.skel = open_probes(&o, hooks, sizeof(hooks));
		if (!s.skel)
			return 1;
		start_nvme(&o, s.skel, hooks, sizeof(hooks));
	}
	s.sys = rec_sys_start(&o.sys, hooks, sizeof(hooks), &sys_failed);
	if (sys_failed)
		goto out;
	if (verbose)
		fprintf(stderr, "iotrail record: hooks %s\n", hooks);
	s.ncpu = libbpf_num_possible_cpus();
	s.drops = calloc(s.ncpu, sizeof(*s.drops));
	s.c = calloc(1, sizeof(*s.c));
	if (!s.drops || !s.c) {
		fail("start", "out of memory", NULL);
		goto out;
	}
	if (s.skel) {
		s.rb = ring_buffer__new(bpf_map__fd(s.skel->maps.events), on_event, s.c, NULL);
		if (!s.rb) {
			fail("open the ring buffer", strerror(errno), NULL);
			goto out;
		}
	}
	/* one poll for both layers: the syscall ring joins the block one */
	if (s.sys && (rc = rec_sys_ring(s.sys, &s.rb))) {
		fail("open the syscall ring buffer", strerror(-rc), NULL);
		goto out;
	}
	catch_signals();
	w = s.c->w = open_trace(&o, argc, argv, hooks, &s);
	if (!w)
		goto out;
	rec_sys_set_writer(s.sys, w);
	if (o.cmd) {
		if (launch(&s, w))
			goto out;
		ran_command = true;
	} else if (!o.duration_s) {
		fprintf(stderr, "iotrail record: recording into %s; Ctrl-C to stop\n", o.output);
	}
	record_loop(&s);
	rc = finish(&s, w);
	if (rc || s.c->err) {
		fail("write the trace file", strerror(-(rc ? rc : s.c->err)),
		     "check free space on its file system");
		goto out;
	}
	summary(&s, ran_command);
	ret = ran_command ? exit_code(s.status) : 0;
out:
	if (s.skel) /* without it, the ring is the syscall layer's own */
		ring_buffer__free(s.rb);
	it_nvme_layer_free();
	rec_sys_free(s.sys);
	block_bpf__destroy(s.skel);
	free(s.c);
	free(s.drops);
	return ret;
}
