// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail cost`: what an operator of the storage stack costs per I/O,
 * measured from outside by saturation throughput (cost_model.h has the
 * method). This file runs the experiment: two loop devices over tmpfs per CPU (or
 * --dev), fio with 4 jobs per CPU × depth 16 so every CPU is busy, and for
 * each size alternating runs without and with the operator, reading the
 * CPU's busy time from /proc/stat over each run's steady window.
 *
 * An operator is a pair of arms, each a device scheduler, a command
 * running beside fio (started before the run, stopped with SIGINT after
 * it) and fio's buffering. Whatever the command changes is undone on
 * every exit: the scheduler is restored (also from a signal), each loop
 * device is created with autoclear so it goes when the last descriptor
 * does, its tmpfs file is unlinked once attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <linux/loop.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "commands.h"
#include "cost/cost_model.h"

#define LOOP_BYTES (256ULL << 20) /* over all the loop devices made */
#define MAX_CPUS 256
#define MAX_DEVS 16
#define END_MARGIN_S 0.25 /* the CPU window closes this long before fio's run ends */

struct arm {
	const char *scheduler; /* set before the run; NULL: none */
	char *command;         /* runs beside fio; NULL: nothing */
	bool buffered;         /* fio without O_DIRECT */
	const char *fs;        /* fio reads a file on this file system, made on the devices */
	bool dm_crypt;         /* fio reads through a dm-crypt mapping of each device */
};

struct op_spec {
	char name[64];
	struct arm base, with;
};

struct cost_opts {
	uint64_t sizes[COST_MAX_SIZES];
	int nsizes, runs, seconds, ramp, settle, depth, jobs;
	bool json;
	const char *svg;
	char devs[MAX_DEVS][64]; /* --dev, or the loop devices made here */
	int ndevs;
	const char *compare[2];  /* --compare OLD.json NEW.json: no runs */
	struct op_spec ops[COST_MAX_OPS];
	int nops;
};

/* What the signal handler undoes: plain globals, written before use. */
static char sched_path[MAX_DEVS][128]; /* each device's scheduler file; "" when it has none */
static char sched_saved[MAX_DEVS][32]; /* and the scheduler it had */
static int nsched;
static volatile pid_t child_pgid[2]; /* fio, the operator's command */
static char tmpdir[64];
/* the files tmpdir may hold, removed at every exit (a signal's too) */
static const char *const tmp_files[] = { "fio.json", "command.out", "op.trail" };
static char tmp_paths[3][96];

/* The file systems an fs= operator mounted, unmounted at every exit. */
static char mnt_dir[MAX_DEVS][96];
static int nmnt;

static void unmount_all(void)
{
	for (int i = 0; i < nmnt; i++) {
		umount2(mnt_dir[i], MNT_DETACH);
		rmdir(mnt_dir[i]);
	}
	nmnt = 0;
}

/* The dm-crypt mappings a dm-crypt operator made, removed at every exit
 * (from a signal too: fork and execve are async-signal-safe). */
static char dm_name[MAX_DEVS][48];
static int ndm;
static char dmsetup_path[] = "/sbin/dmsetup";
extern char **environ;

static void remove_mappings(void)
{
	for (int i = ndm - 1; i >= 0; i--) {
		char *argv[] = { dmsetup_path, "--noudevsync", "remove", dm_name[i], NULL };
		pid_t pid = fork();

		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 1);
			dup2(null, 2);
			execve(dmsetup_path, argv, environ);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	ndm = 0;
}

static void remove_tmpdir(void)
{
	remove_mappings();
	unmount_all();
	for (int i = 0; i < 3; i++)
		if (tmp_paths[i][0])
			unlink(tmp_paths[i]);
	rmdir(tmpdir);
}

/* S into the file PATH (a sysfs attribute); 0 or -1. Async-signal-safe:
 * the signal handler restores the schedulers with it. */
static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), rc = -1;

	if (fd >= 0) {
		rc = write(fd, s, strlen(s)) < 0 ? -1 : 0;
		close(fd);
	}
	return rc;
}

static void restore_scheduler(void)
{
	for (int i = 0; i < nsched; i++)
		if (sched_path[i][0] && sched_saved[i][0])
			write_str(sched_path[i], sched_saved[i]); /* a failure here: nothing more to do */
}

/* Async-signal-safe calls only: fio is told to stop (it stops its jobs,
 * which run in process groups of their own, and waits for them: a
 * SIGKILL would orphan them), the operator's command likewise; then the
 * scheduler goes back and the signal takes its course. */
static void on_signal(int sig)
{
	for (int i = 0; i < 2; i++) {
		pid_t pid = child_pgid[i];

		if (pid > 0) {
			kill(pid, i == 0 ? SIGTERM : SIGINT);
			kill(-pid, i == 0 ? SIGTERM : SIGINT);
			waitpid(pid, NULL, 0);
		}
	}
	restore_scheduler();
	remove_tmpdir();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail cost [--sizes 4k,16k,...] [--runs N] [--seconds S] [--jobs N] [--json] [--svg FILE]\n"
		"                    [--dev DEV[,DEV...]] (--op OPERATOR ... | [--base 'CMD'] --with 'CMD' [--name NAME])\n"
		"       iotrail cost --compare OLD.json NEW.json [--svg FILE]\n\n"
		"What an operator of the storage stack costs in CPU time per I/O, measured from\n"
		"outside: fio saturates every CPU with and without it, alternating runs, and\n"
		"C_op = F_cpu × (1/R_op − 1/R_base) with F_cpu the CPU busy time per second\n"
		"(/proc/stat) and R the I/Os per second. Per size: the cost with a 95%% interval;\n"
		"over sizes the power-law fit cost = a × size^k and the quadrant.\n\n"
		"  --op scheduler=mq-deadline|bfq|kyber  the device's I/O scheduler, against none\n"
		"  --op iotrail=block|syscall|nvme  iotrail record (that layer) running beside fio\n"
		"                              (nvme: with block, on NVMe devices given by --dev)\n"
		"  --op iotrail=online         iotrail top --json (in-kernel histograms) beside fio\n"
		"  --op buffered               fio through the page cache, against O_DIRECT\n"
		"  --op fs=ext4                fio reading a file on ext4 made on the devices,\n"
		"                              against the raw devices (only the loop devices\n"
		"                              made here: it formats them)\n"
		"  --op dm-crypt               fio reading through dm-crypt (aes-xts-plain64, a\n"
		"                              random key) over each device, against the raw ones\n"
		"  --with 'CMD'                a command running beside fio (started before each\n"
		"                              run, SIGINT after it); {dev} is the devices\n"
		"                              (comma-separated), {size}\n"
		"                              the I/O size in bytes; --base 'CMD' the same for the\n"
		"                              base runs (default: nothing)\n"
		"  --sizes LIST                I/O sizes (default 4k,16k,64k,256k)\n"
		"  --runs N                    runs per side and size (default 3)\n"
		"  --seconds S                 measured seconds per run (default 3)\n"
		"  --jobs N                    fio jobs, each 16 deep (default: 4 per CPU)\n"
		"  --ramp S                    seconds of each run before the measured ones (default 1)\n"
		"  --dev DEV[,DEV...]          block devices to read (default: two 256 MiB loop\n"
		"                              devices over tmpfs per CPU, made and removed here)\n"
		"  --json                      the result as JSON;  --svg FILE  the quadrant plot\n"
		"  --compare OLD.json NEW.json two results (--json output: two machines, kernels,\n"
		"                              versions) side by side, nothing run; with --svg an\n"
		"                              arrow from each operator's old point to its new one\n\n"
		"Valid only if every run's CPUs were < 5%% idle and the runs agree within 10%%;\n"
		"otherwise the result says valid: no, and why. Needs root and fio.\n");
}

static int add_named_op(struct cost_opts *o, const char *spec)
{
	struct op_spec *op = &o->ops[o->nops];
	const char *v = strchr(spec, '=');

	if (o->nops == COST_MAX_OPS)
		return it_failf(2, "failed to add operator '%s': at most %d in one run; run the rest separately",
				spec, COST_MAX_OPS);
	memset(op, 0, sizeof(*op));
	snprintf(op->name, sizeof(op->name), "%s", spec);
	op->base.scheduler = "none";
	op->with.scheduler = "none";
	if (!strncmp(spec, "scheduler=", 10) && (!strcmp(v + 1, "mq-deadline") ||
						  !strcmp(v + 1, "bfq") || !strcmp(v + 1, "kyber"))) {
		op->with.scheduler = v + 1;
	} else if (!strncmp(spec, "iotrail=", 8) && (!strcmp(v + 1, "block") || !strcmp(v + 1, "syscall") ||
						!strcmp(v + 1, "nvme") || !strcmp(v + 1, "online"))) {
		char self[512], cmd[1024];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n < 0)
			return it_failf(1, "failed to find iotrail's own binary: %s", strerror(errno));
		self[n] = 0;
		/* what a user would run: a recording of that layer (the NVMe
		 * layer records with the block layer it joins), or the online
		 * mode's live view, whose output nobody reads here */
		if (!strcmp(v + 1, "block"))
			snprintf(cmd, sizeof(cmd), "exec '%s' record --layers block --dev {dev} -o %s/op.trail",
				 self, tmpdir);
		else if (!strcmp(v + 1, "nvme"))
			snprintf(cmd, sizeof(cmd), "exec '%s' record --layers block,nvme --dev {dev} -o %s/op.trail",
				 self, tmpdir);
		else if (!strcmp(v + 1, "online"))
			snprintf(cmd, sizeof(cmd), "exec '%s' top --json --interval 1", self);
		else
			snprintf(cmd, sizeof(cmd), "exec '%s' record --layers syscall --comm fio -o %s/op.trail",
				 self, tmpdir);
		op->with.command = strdup(cmd);
	} else if (!strcmp(spec, "buffered")) {
		op->with.buffered = true;
	} else if (!strcmp(spec, "fs=ext4")) {
		op->with.fs = "ext4";
	} else if (!strcmp(spec, "dm-crypt")) {
		op->with.dm_crypt = true;
	} else {
		return it_failf(2, "failed to read --op '%s': not an operator; use scheduler=mq-deadline|bfq|kyber, "
				"iotrail=block|syscall|nvme|online, buffered, fs=ext4 or dm-crypt", spec);
	}
	o->nops++;
	return 0;
}

/* /proc/stat's first line: busy and all CPU time, in ns. */
struct cpu_times {
	double busy, idle, total;
};

static int read_cpu_times(struct cpu_times *t)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	fclose(f);
	if (n < 8)
		return -1;
	double tick = 1e9 / sysconf(_SC_CLK_TCK);
	/* user nice system idle iowait irq softirq steal (guest is in user):
	 * steal is time the hypervisor kept, neither busy nor idle here */
	t->busy = (v[0] + v[1] + v[2] + v[5] + v[6]) * tick;
	t->idle = (v[3] + v[4]) * tick;
	t->total = (v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]) * tick;
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Sleep to a CLOCK_MONOTONIC time in ns (a signal's interruption resumes). */
static void sleep_until(double t_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(t_ns / 1e9) };

	ts.tv_nsec = (long)(t_ns - ts.tv_sec * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* perf's cycle counter on every CPU, or why not. */
static int cycle_fd[MAX_CPUS];
static int ncycle_fds;

static const char *cycles_open(int ncpus)
{
	static char note[160];
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .size = sizeof(a),
				     .config = PERF_COUNT_HW_CPU_CYCLES };

	for (int i = 0; i < ncpus && i < MAX_CPUS; i++) {
		int fd = syscall(SYS_perf_event_open, &a, -1, i, -1, 0);

		if (fd < 0) {
			snprintf(note, sizeof(note), "not measured: perf's cycle counter is not readable "
				 "on this machine (perf_event_open: %s)", strerror(errno));
			for (int k = 0; k < ncycle_fds; k++)
				close(cycle_fd[k]);
			ncycle_fds = 0;
			return note;
		}
		cycle_fd[ncycle_fds++] = fd;
	}
	return NULL;
}

static double cycles_read(void)
{
	double sum = 0;

	for (int i = 0; i < ncycle_fds; i++) {
		uint64_t v;

		if (read(cycle_fd[i], &v, sizeof(v)) != sizeof(v))
			return -1;
		sum += (double)v;
	}
	return ncycle_fds ? sum : -1;
}

/* BYTES of data (not zeros) in FD: a hole of tmpfs reads as the one
 * zero page, always in the CPU's cache, which no real device's data is. */
static int fill(int fd, uint64_t bytes)
{
	static uint64_t chunk[(1 << 20) / 8];
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (size_t i = 0; i < sizeof(chunk) / 8; i++)
		chunk[i] = x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	for (uint64_t off = 0; off < bytes; off += sizeof(chunk))
		if (pwrite(fd, chunk, sizeof(chunk), (off_t)off) != (ssize_t)sizeof(chunk))
			return -1;
	return 0;
}

/* A loop device of BYTES over a tmpfs file full of data, that goes away
 * by itself. */
static int make_loop(char *dev, size_t len, uint64_t bytes, int *keep_fd)
{
	char file[] = "/dev/shm/iotrail-cost.XXXXXX";
	int back = mkstemp(file), ctl = -1, nr, fd = -1;
	struct loop_config cfg = { 0 };

	if (back < 0)
		return it_failf(1, "failed to create the loop device's file in /dev/shm: %s; mount a tmpfs there or use --dev",
				strerror(errno));
	unlink(file); /* the loop device holds it now; freed with it */
	if (fill(back, bytes)) {
		int e = errno;

		close(back);
		return it_failf(1, "failed to fill a %llu MiB file in /dev/shm: %s; free memory there or use --dev",
				(unsigned long long)(bytes >> 20), strerror(e));
	}
	if ((ctl = open("/dev/loop-control", O_RDWR)) < 0 ||
	    (nr = ioctl(ctl, LOOP_CTL_GET_FREE)) < 0) {
		int e = errno;

		close(back);
		if (ctl >= 0)
			close(ctl);
		return it_failf(1, "failed to get a loop device: %s; run as root, or use --dev", strerror(e));
	}
	close(ctl);
	snprintf(dev, len, "/dev/loop%d", nr);
	fd = open(dev, O_RDWR);
	cfg.fd = back;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	if (fd < 0 || ioctl(fd, LOOP_CONFIGURE, &cfg) < 0) {
		int e = errno;

		close(back);
		if (fd >= 0)
			close(fd);
		return it_failf(1, "failed to set up %s over tmpfs: %s; use --dev", dev, strerror(e));
	}
	close(back);
	*keep_fd = fd;
	return 0;
}

/* autoclear: each loop device goes with its last user */
static void close_loops(const int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Device i's scheduler file, and the scheduler it had (restored at exit). */
static int scheduler_prepare(int i, const char *dev)
{
	char buf[256], *l, *r;
	FILE *f;
	const char *name = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;

	nsched = i + 1 > nsched ? i + 1 : nsched;
	snprintf(sched_path[i], sizeof(sched_path[i]), "/sys/block/%s/queue/scheduler", name);
	f = fopen(sched_path[i], "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		sched_path[i][0] = 0;
		return -1;
	}
	fclose(f);
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (!l || !r) {
		sched_path[i][0] = 0;
		return -1;
	}
	*r = 0;
	snprintf(sched_saved[i], sizeof(sched_saved[i]), "%s", l + 1);
	return 0;
}

/* The scheduler WANT on every device that has one. */
static int scheduler_set(const char *want)
{
	for (int i = 0; i < nsched; i++)
		if (sched_path[i][0] && write_str(sched_path[i], want))
			return it_failf(1, "failed to set the scheduler %s in %s: %s; is it built into this kernel?",
					want, sched_path[i], strerror(errno));
	return 0;
}

/* Whether any device has a scheduler file. */
static bool scheduler_settable(void)
{
	for (int i = 0; i < nsched; i++)
		if (sched_path[i][0])
			return true;
	return false;
}

/* CMD with {dev} (the devices, comma-separated) and {size} replaced. */
static char *expand(const char *cmd, const char *dev, uint64_t size)
{
	size_t cap = strlen(cmd) * 2 + 256, n = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (const char *p = cmd; *p; ) {
		char tmp[64];
		const char *rep = NULL;

		if (!strncmp(p, "{dev}", 5)) {
			rep = dev;
			p += 5;
		} else if (!strncmp(p, "{size}", 6)) {
			snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)size);
			rep = tmp;
			p += 6;
		}
		size_t need = rep ? strlen(rep) : 1;

		if (n + need + 1 > cap) {
			char *bigger = realloc(out, cap = (n + need + 1) * 2);

			if (!bigger) {
				free(out);
				return NULL;
			}
			out = bigger;
		}
		if (rep) {
			memcpy(out + n, rep, need);
			n += need;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = 0;
	return out;
}

/* Runs argv (or /bin/sh -c cmd) in its own process group, output to a file. */
static pid_t spawn(char *const argv[], const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		setpgid(0, 0);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/* The last line of a file, for an error message. */
static const char *last_line(const char *path)
{
	static char line[256];
	char buf[256];
	FILE *f = fopen(path, "r");

	snprintf(line, sizeof(line), "(no output)");
	if (!f)
		return line;
	while (fgets(buf, sizeof(buf), f))
		if (buf[0] != '\n') {
			buf[strcspn(buf, "\n")] = 0;
			snprintf(line, sizeof(line), "%s", buf);
		}
	fclose(f);
	return line;
}

static int parse_fio(const char *path, double *ios, double *runtime_ns)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f)
		return -1;
	rc = cost_parse_fio(f, ios, runtime_ns);
	fclose(f);
	return rc;
}

static int stop_command(pid_t pid)
{
	int status = 0;

	kill(-pid, SIGINT);
	for (int i = 0; i < 200; i++) { /* 20 s for a recorder to write its file */
		if (waitpid(pid, &status, WNOHANG) == pid) {
			child_pgid[1] = 0;
			return status;
		}
		usleep(100000);
	}
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	child_pgid[1] = 0;
	return status;
}

static int one_run(const struct cost_opts *o, const struct op_spec *op, bool with, const char *dev,
		   uint64_t size, struct cost_run *run)
{
	const struct arm *arm = with ? &op->with : &op->base;
	char bs[32], rt[32], ramp[32], jobs[16], depth[32], fname[MAX_DEVS * 64 + 32], fio_out[96], cmd_out[96];
	pid_t cmd_pid = 0, fio_pid;
	struct cpu_times t0, t1;
	double w0, w1, c0, c1;
	int status;

	if (arm->scheduler && scheduler_settable() && scheduler_set(arm->scheduler))
		return 1;
	snprintf(cmd_out, sizeof(cmd_out), "%s/command.out", tmpdir);
	if (arm->command) {
		char *cmd = expand(arm->command, dev, size);
		char *argv[] = { "/bin/sh", "-c", cmd, NULL };

		if (!cmd)
			return it_failf(1, "failed to run the operator's command: out of memory");
		cmd_pid = spawn(argv, cmd_out);
		free(cmd);
		if (cmd_pid < 0)
			return it_failf(1, "failed to start the operator's command: %s", strerror(errno));
		child_pgid[1] = cmd_pid;
		sleep(o->settle); /* let it attach before the run */
		if (waitpid(cmd_pid, &status, WNOHANG) == cmd_pid) {
			child_pgid[1] = 0;
			return it_failf(1, "failed to run %s: its command exited before the run (%s); "
					"run it alone to see why", op->name, last_line(cmd_out));
		}
	}
	snprintf(bs, sizeof(bs), "--bs=%llu", (unsigned long long)size);
	snprintf(rt, sizeof(rt), "--runtime=%d", o->seconds);
	snprintf(ramp, sizeof(ramp), "--ramp_time=%d", o->ramp);
	snprintf(jobs, sizeof(jobs), "--numjobs=%d", o->jobs);
	snprintf(depth, sizeof(depth), "--iodepth=%d", o->depth);
	/* fio separates several files with ':' */
	snprintf(fname, sizeof(fname), "--filename=%s", dev);
	for (char *c = fname; *c; c++)
		if (*c == ',')
			*c = ':';
	snprintf(fio_out, sizeof(fio_out), "%s/fio.json", tmpdir);
	char *fio_argv[] = { "fio", "--name=iotrail-cost", fname, "--rw=randread", bs,
			     arm->buffered ? "--direct=0" : "--direct=1", "--ioengine=libaio", depth, jobs,
			     "--time_based", rt, ramp, "--group_reporting", "--output-format=json",
			     NULL };

	fio_pid = spawn(fio_argv, fio_out);
	if (fio_pid < 0) {
		if (cmd_pid)
			stop_command(cmd_pid);
		return it_failf(1, "failed to start fio: %s", strerror(errno));
	}
	child_pgid[0] = fio_pid;
	sleep(o->ramp); /* fio's own ramp: its counts start about now */
	read_cpu_times(&t0);
	c0 = cycles_read();
	w0 = now_ns();
	/* The CPU window closes a little before fio's timed run ends: fio's
	 * exit (joining its jobs, writing its JSON) leaves CPUs idle, and
	 * counted in the window it read as 6-14% idle in 3 s runs on a quiet
	 * machine. Busy CPU-ns per second is what the window gives; fio's own
	 * count over its own runtime gives the rate. */
	sleep_until(w0 + (o->seconds - END_MARGIN_S) * 1e9);
	w1 = now_ns();
	c1 = cycles_read();
	read_cpu_times(&t1);
	waitpid(fio_pid, &status, 0);
	child_pgid[0] = 0;
	if (cmd_pid) {
		int st = stop_command(cmd_pid);

		/* a shell that ran the command dies of the SIGINT it was sent */
		if (WIFEXITED(st) ? WEXITSTATUS(st) != 0 : WTERMSIG(st) != SIGINT)
			fprintf(stderr, "iotrail cost: warning: %s's command ended with status %d: %s\n",
				op->name, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
				last_line(cmd_out));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    parse_fio(fio_out, &run->ios, &run->runtime_ns))
		return it_failf(1, "failed to run fio on %s: %s; run fio alone to see why", dev,
				last_line(fio_out));
	run->busy_ns = t1.busy - t0.busy;
	run->window_ns = w1 - w0;
	run->idle_frac = t1.total > t0.total ? (t1.idle - t0.idle) / (t1.total - t0.total) : 1;
	run->cycles = c0 >= 0 && c1 >= 0 ? c1 - c0 : -1;
	return 0;
}

/* Runs ARGV to its end, its output in tmpdir's command.out; 0 when it
 * exited 0. */
static int run_to_end(char *const argv[])
{
	int status = -1;
	pid_t pid = spawn(argv, tmp_paths[1]);

	return pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ? -1 : 0;
}

/* FS made on each device, mounted in tmpdir, with one file of data on
 * it: FILES, the files in fio's form (':' between). */
static int make_fs(const char *fs, const struct cost_opts *o, uint64_t dev_bytes, char *files, size_t len)
{
	files[0] = 0;
	for (int i = 0; i < o->ndevs; i++) {
		char mkfs[32], path[128];
		char *argv[] = { mkfs, "-q", "-F", (char *)o->devs[i], NULL };
		int fd;

		snprintf(mkfs, sizeof(mkfs), "mkfs.%s", fs);
		if (run_to_end(argv))
			return it_failf(1, "failed to make %s on %s: %s; is %s installed?", fs, o->devs[i],
					last_line(tmp_paths[1]), mkfs);
		snprintf(mnt_dir[nmnt], sizeof(mnt_dir[0]), "%s/fs%d", tmpdir, i);
		if (mkdir(mnt_dir[nmnt], 0700) || mount(o->devs[i], mnt_dir[nmnt], fs, 0, NULL)) {
			int e = errno;

			rmdir(mnt_dir[nmnt]);
			return it_failf(1, "failed to mount %s on %s: %s; is %s built into this kernel?",
					o->devs[i], mnt_dir[nmnt], strerror(e), fs);
		}
		nmnt++;
		/* three quarters of the device: the file system's own metadata
		 * and reserve take the rest */
		snprintf(path, sizeof(path), "%s/data", mnt_dir[nmnt - 1]);
		if ((fd = open(path, O_WRONLY | O_CREAT, 0600)) < 0)
			return it_failf(1, "failed to create %s: %s", path, strerror(errno));
		if (fill(fd, dev_bytes / 4 * 3 & ~((1ULL << 20) - 1)) || fsync(fd)) {
			int e = errno;

			close(fd);
			return it_failf(1, "failed to write %s: %s", path, strerror(e));
		}
		close(fd);
		size_t n = strlen(files);

		snprintf(files + n, len - n, "%s%s", i ? ":" : "", path);
	}
	return 0;
}

/* The device node of the mapping NAME: /dev/dm-N, which devtmpfs makes
 * (/dev/mapper/NAME is udev's, and a guest or container may have none). */
static int dm_node(const char *name, char *node, size_t len)
{
	glob_t g;
	int rc = -1;

	if (glob("/sys/block/dm-*/dm/name", 0, NULL, &g))
		return -1;
	for (size_t i = 0; rc && i < g.gl_pathc; i++) {
		char buf[64] = "";
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (buf[strcspn(buf, "\n")] = 0, !strcmp(buf, name))) {
			const char *dm = g.gl_pathv[i] + strlen("/sys/block/");

			snprintf(node, len, "/dev/%.*s", (int)strcspn(dm, "/"), dm);
			rc = access(node, R_OK);
		}
		fclose(f);
	}
	globfree(&g);
	return rc;
}

/* A dm-crypt mapping over each device (aes-xts-plain64 with a random
 * 256-bit key: reads decrypt whatever the device holds); MAPPED, the
 * mappings in fio's form. */
static int make_dm_crypt(const struct cost_opts *o, char *mapped, size_t len)
{
	unsigned char key[32];
	char hex[65];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (access("/dev/mapper/control", F_OK))
		return it_failf(1, "failed to set up dm-crypt: this kernel has no device-mapper (/dev/mapper/control); "
				"load dm-crypt (modprobe dm-crypt)");
	if (access(dmsetup_path, X_OK))
		return it_failf(1, "failed to set up dm-crypt: %s not found; install dmsetup", dmsetup_path);
	if (fd < 0 || read(fd, key, sizeof(key)) != (ssize_t)sizeof(key)) {
		if (fd >= 0)
			close(fd);
		return it_failf(1, "failed to read a key from /dev/urandom: %s", strerror(errno));
	}
	close(fd);
	for (size_t i = 0; i < sizeof(key); i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	mapped[0] = 0;
	for (int i = 0; i < o->ndevs; i++) {
		char table[256], node[64];
		char *argv[] = { dmsetup_path, "--noudevsync", "create", dm_name[ndm], "--table", table, NULL };
		int dfd = open(o->devs[i], O_RDONLY | O_CLOEXEC);
		off_t end = dfd < 0 ? -1 : lseek(dfd, 0, SEEK_END);
		size_t n = strlen(mapped);

		if (end <= 0) {
			int e = errno;

			if (dfd >= 0)
				close(dfd);
			return it_failf(1, "failed to read the size of %s: %s", o->devs[i], end ? strerror(e) : "empty");
		}
		close(dfd);
		snprintf(dm_name[ndm], sizeof(dm_name[0]), "iotrail-cost-%d-%d", (int)getpid(), i);
		snprintf(table, sizeof(table), "0 %llu crypt aes-xts-plain64 %s 0 %s 0",
			 (unsigned long long)end >> 9, hex, o->devs[i]);
		if (run_to_end(argv))
			return it_failf(1, "failed to set up dm-crypt over %s: %s; is dm-crypt in this kernel?",
					o->devs[i], last_line(tmp_paths[1]));
		if (dm_node(dm_name[ndm++], node, sizeof(node)))
			return it_failf(1, "failed to find the dm-crypt mapping over %s in /sys/block", o->devs[i]);
		snprintf(mapped + n, len - n, "%s%s", i ? ":" : "", node);
	}
	memset(key, 0, sizeof(key));
	memset(hex, 0, sizeof(hex));
	return 0;
}

static int measure_op(const struct cost_opts *o, const struct op_spec *spec, const char *dev,
		      struct cost_op *op)
{
	char sz[24];
	/* the with arm's files, on the file system or through the mappings;
	 * on a failure the command's end (remove_tmpdir) undoes both */
	static char with_files[MAX_DEVS * 128];
	int rc;

	if (spec->with.fs && (rc = make_fs(spec->with.fs, o, LOOP_BYTES / o->ndevs, with_files, sizeof(with_files))))
		return rc;
	if (spec->with.dm_crypt && (rc = make_dm_crypt(o, with_files, sizeof(with_files))))
		return rc;
	snprintf(op->name, sizeof(op->name), "%s", spec->name);
	op->nsizes = o->nsizes;
	for (int i = 0; i < o->nsizes; i++) {
		struct cost_size *s = &op->sizes[i];

		s->bytes = o->sizes[i];
		for (int r = 0; r < o->runs; r++) {
			/* alternate which side goes first, so a drift in the
			 * machine's load falls on both alike */
			for (int side = 0; side < 2; side++) {
				bool with = (r % 2) ^ side;
				struct cost_run *run = with ? &s->with[s->nwith] : &s->base[s->nbase];
				rc = one_run(o, spec, with, with && (spec->with.fs || spec->with.dm_crypt) ? with_files : dev,
					     s->bytes, run);
				if (rc)
					return rc;
				with ? s->nwith++ : s->nbase++;
				fprintf(stderr, "iotrail cost: %s %s run %d/%d %-4s %8.0f I/O/s %8.0f CPU-ns/I/O %5.1f%% idle\n",
					spec->name, cost_size_str(s->bytes, sz), r + 1, o->runs,
					with ? "with" : "base", run->ios / (run->runtime_ns / 1e9),
					cost_run_ns_per_io(run), run->idle_frac * 100);
			}
		}
	}
	restore_scheduler();
	remove_mappings();
	unmount_all();
	cost_op_finish(op);
	return 0;
}

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (*end || end == v || n < lo || n > hi)
		return it_failf(2, "failed to read %s '%s': want a whole number from %d to %d", opt, v, lo, hi);
	*out = (int)n;
	return 0;
}

/* --dev DEV[,DEV...]: block devices (a name without '/' is under /dev). */
static int add_devs(struct cost_opts *o, const char *arg)
{
	char copy[1024], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", arg);
	for (char *d = strtok_r(copy, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
		struct stat st;
		char *path = o->devs[o->ndevs];

		if (o->ndevs == MAX_DEVS)
			return it_failf(2, "failed to add --dev %s: at most %d devices; give fewer", d, MAX_DEVS);
		snprintf(path, sizeof(o->devs[0]), "%s%s", d[0] == '/' ? "" : "/dev/", d);
		if (stat(path, &st) || !S_ISBLK(st.st_mode))
			return it_failf(2, "failed to use --dev %s: not a block device; give one like loop0 or /dev/nvme0n1",
					d);
		o->ndevs++;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct cost_opts *o, const char **base_cmd,
		      const char **with_cmd, const char **name)
{
	static const struct option longopts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 'g' },
		{ "dev", required_argument, NULL, 'd' },
		{ "op", required_argument, NULL, 'o' },
		{ "base", required_argument, NULL, 'b' },
		{ "with", required_argument, NULL, 'w' },
		{ "name", required_argument, NULL, 'n' },
		{ "jobs", required_argument, NULL, 'J' },
		{ "ramp", required_argument, NULL, 'R' },
		{ "compare", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *bad;
	bool compare = false;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->nsizes = cost_parse_sizes(optarg, o->sizes, COST_MAX_SIZES, &bad);
			if (o->nsizes < 0)
				return it_failf(2, "failed to read --sizes at '%s': want sizes like 4k,16k,1m "
						"(multiples of 512, at most 1g, at most %d)", bad, COST_MAX_SIZES);
			break;
		case 'r':
			if ((rc = parse_int("--runs", optarg, 1, COST_MAX_RUNS, &o->runs)))
				return rc;
			break;
		case 'S':
			if ((rc = parse_int("--seconds", optarg, 1, 3600, &o->seconds)))
				return rc;
			break;
		case 'j': o->json = true; break;
		case 'g': o->svg = optarg; break;
		case 'd':
			if ((rc = add_devs(o, optarg)))
				return rc;
			break;
		case 'o':
			if ((rc = add_named_op(o, optarg)))
				return rc;
			break;
		case 'b': *base_cmd = optarg; break;
		case 'w': *with_cmd = optarg; break;
		case 'n': *name = optarg; break;
		case 'R':
			if ((rc = parse_int("--ramp", optarg, 0, 60, &o->ramp)))
				return rc;
			break;
		case 'J':
			if ((rc = parse_int("--jobs", optarg, 1, 1024, &o->jobs)))
				return rc;
			break;
		case 'C': compare = true; break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			return it_fail_option("cost", "", argv);
		}
	}
	if (compare) {
		if (argc - optind != 2)
			return it_failf(2, "failed to read --compare: give two result files (iotrail cost --json "
					"output), the earlier first");
		if (o->nops || *with_cmd)
			return it_failf(2, "failed to read --compare: it compares two results and runs nothing; "
					"leave out --op and --with");
		o->compare[0] = argv[optind];
		o->compare[1] = argv[optind + 1];
		return 0;
	}
	if (optind != argc)
		return it_failf(2, "failed to read '%s': iotrail cost takes options only; quote --with's command",
				argv[optind]);
	if (*base_cmd && !*with_cmd)
		return it_failf(2, "failed to read the operator: --base needs --with (the runs with the operator)");
	if (*with_cmd) {
		struct op_spec *op = &o->ops[o->nops];

		if (o->nops == COST_MAX_OPS)
			return it_failf(2, "failed to add --with: at most %d operators in one run", COST_MAX_OPS);
		memset(op, 0, sizeof(*op));
		snprintf(op->name, sizeof(op->name), "%s", *name ? *name : "with");
		op->with.command = strdup(*with_cmd);
		op->base.command = *base_cmd ? strdup(*base_cmd) : NULL;
		o->nops++;
	}
	if (!o->nops)
		return it_failf(2, "failed to start: no operator; give --op (e.g. --op scheduler=bfq) or --with 'CMD'");
	return 0;
}

/* A number of a JSON object, NAN when absent or null. */
static double json_num(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return NAN;
	return json_object_get_double(v);
}

/* A result written by --json, back: what --compare needs of each operator
 * (name, validity, base cost, k, quadrant) and the quadrant split. */
static int read_result(const char *path, struct cost_result *res)
{
	struct json_object *root = json_object_from_file(path), *ops, *v;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (!root) {
		char why[160];
		const char *e = json_util_get_last_err();

		/* json-c's message ends in a newline: one line is wanted */
		snprintf(why, sizeof(why), "%s", e ? e : "not JSON");
		why[strcspn(why, "\n")] = 0;
		return it_failf(2, "failed to read %s: %s; give a file written by iotrail cost --json", path, why);
	}
	if (!json_object_object_get_ex(root, "operators", &ops) || !json_object_is_type(ops, json_type_array)) {
		json_object_put(root);
		return it_failf(2, "failed to read %s: no \"operators\" array; give a file written by iotrail cost --json",
				path);
	}
	res->split_ns = json_num(root, "quadrant_split_ns");
	for (size_t i = 0; !rc && i < json_object_array_length(ops); i++) {
		struct json_object *o = json_object_array_get_idx(ops, i);
		struct cost_op *op = &res->ops[res->nops];
		double k = json_num(o, "k");

		if (res->nops == COST_MAX_OPS) {
			rc = it_failf(2, "failed to read %s: more than %d operators", path, COST_MAX_OPS);
			break;
		}
		if (!json_object_object_get_ex(o, "name", &v) || !json_object_is_type(v, json_type_string)) {
			rc = it_failf(2, "failed to read %s: operator %zu has no name; give a file written by "
					 "iotrail cost --json", path, i + 1);
			break;
		}
		snprintf(op->name, sizeof(op->name), "%s", json_object_get_string(v));
		op->valid = json_object_object_get_ex(o, "valid", &v) && json_object_get_boolean(v);
		op->base_cost_ns = json_num(o, "base_cost_ns");
		op->fit.npoints = isnan(k) ? 0 : (int)json_num(o, "fit_points");
		op->fit.k = k;
		op->fit.k_err = isnan(json_num(o, "k_err")) ? -1 : json_num(o, "k_err");
		op->quadrant = json_object_object_get_ex(o, "quadrant", &v)
				       ? cost_quadrant_from_name(json_object_get_string(v)) : COST_Q_UNKNOWN;
		res->nops++;
	}
	json_object_put(root);
	return rc;
}

static int compare_results(const struct cost_opts *o)
{
	static struct cost_result from, to;
	int rc;

	if ((rc = read_result(o->compare[0], &from)) || (rc = read_result(o->compare[1], &to)))
		return rc;
	cost_print_compare(stdout, &from, o->compare[0], &to, o->compare[1]);
	if (o->svg) {
		FILE *f = fopen(o->svg, "w");

		if (!f || cost_write_svg(f, &to, &from) || fclose(f))
			return it_failf(1, "failed to write the plot to %s: %s; check the path", o->svg,
					strerror(errno));
	}
	return 0;
}

int cmd_cost(int argc, char **argv)
{
	static struct cost_opts o = { 0 };
	static struct cost_result res;
	const char *base_cmd = NULL, *with_cmd = NULL, *name = NULL;
	char dev[MAX_DEVS * 64 + MAX_DEVS]; /* the devices, comma-separated */
	int loop_fd[MAX_DEVS], rc = 0;

	it_cli_json_from_args(argc, argv);
	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/iotrail-cost.XXXXXX");
	if (!mkdtemp(tmpdir))
		return it_failf(1, "failed to make a directory in /tmp: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		snprintf(tmp_paths[i], sizeof(tmp_paths[i]), "%s/%s", tmpdir, tmp_files[i]);
	o.runs = 3;
	o.seconds = 3;
	o.ramp = 1;
	o.settle = 2;
	o.depth = 16;
	o.nsizes = cost_parse_sizes("4k,16k,64k,256k", o.sizes, COST_MAX_SIZES, &(const char *){ 0 });
	rc = parse_args(argc, argv, &o, &base_cmd, &with_cmd, &name);
	if (rc || o.compare[0]) {
		rmdir(tmpdir);
		return rc < 0 ? 0 : rc ? rc : compare_results(&o);
	}
	res.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	/* A loop device does its reads in one kernel worker (per cgroup), so
	 * one device is the bottleneck at large sizes and the CPUs idle while
	 * fio waits on it: on 2 CPUs, 64 KiB reads left 12.5% idle on one
	 * device, 5.8% on two, 1.2% on four with 8 jobs; 256 KiB 26%, 15%,
	 * 1.6%. So: two devices per CPU, four jobs per CPU, each 16 deep. */
	bool made_loops = !o.ndevs;
	int nloops = 2 * res.ncpus < MAX_DEVS ? 2 * res.ncpus : MAX_DEVS;

	if (!o.jobs)
		o.jobs = 4 * res.ncpus;
	for (int i = 0; made_loops && i < nloops; i++) {
		if ((rc = make_loop(o.devs[i], sizeof(o.devs[i]), LOOP_BYTES / nloops, &loop_fd[i]))) {
			close_loops(loop_fd, o.ndevs);
			rmdir(tmpdir);
			return rc;
		}
		o.ndevs++;
	}
	dev[0] = 0;
	for (int i = 0; i < o.ndevs; i++) {
		size_t n = strlen(dev);

		snprintf(dev + n, sizeof(dev) - n, "%s%s", i ? "," : "", o.devs[i]);
		if (scheduler_prepare(i, o.devs[i]))
			fprintf(stderr, "iotrail cost: warning: %s has no I/O scheduler file; left as it is\n",
				o.devs[i]);
	}
	for (int i = 0; !rc && i < o.nops; i++) {
		const struct arm *with = &o.ops[i].with;

		if (with->fs && !made_loops)
			rc = it_failf(2, "failed to measure %s: it formats its devices, so only the loop devices "
				      "iotrail cost makes; leave out --dev", o.ops[i].name);
		else if (strcmp(with->scheduler ? with->scheduler : "none", "none") && !scheduler_settable())
			rc = it_failf(1, "failed to measure %s: %s has no scheduler to set", o.ops[i].name, dev);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	res.cycles_note = cycles_open(res.ncpus);
	res.seconds = o.seconds;
	static char workload[MAX_DEVS * 64 + 256];
	snprintf(workload, sizeof(workload),
		 "fio --rw=randread --bs=SIZE --direct=1 --ioengine=libaio --iodepth=%d --numjobs=%d "
		 "--runtime=%d --ramp_time=%d on %s%s", o.depth, o.jobs, o.seconds, o.ramp, dev,
		 made_loops ? " (loop devices over tmpfs files of data, 256 MiB in all)" : "");
	res.workload = workload;
	for (int i = 0; !rc && i < o.nops; i++) {
		rc = measure_op(&o, &o.ops[i], dev, &res.ops[i]);
		if (!rc)
			res.nops++;
	}
	restore_scheduler();
	close_loops(loop_fd, made_loops ? o.ndevs : 0);
	remove_tmpdir();
	if (rc)
		return rc;
	cost_quadrants(&res);
	if (o.json)
		cost_print_json(stdout, &res);
	else
		cost_print_text(stdout, &res);
	if (o.svg) {
		FILE *f = fopen(o.svg, "w");

		if (!f || cost_write_svg(f, &res, NULL) || fclose(f))
			return it_failf(1, "failed to write the plot to %s: %s; check the path", o.svg,
					strerror(errno));
	}
	for (int i = 0; i < res.nops; i++)
		if (!res.ops[i].valid)
			return 3; /* measured, but the method's assumption did not hold */
	return 0;
}
