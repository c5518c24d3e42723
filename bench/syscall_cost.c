/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What the syscall layer adds to a system call: a syscall-bound loop (4 KiB
 * pread on a cached file, about 400 ns a call here) timed inside the
 * process, run alternately
 *   - untraced,
 *   - floor: under an empty program on sys_enter and one on sys_exit, the
 *     hooks the syscall layer uses (bench/hook_floor 2): what any tracer
 *     of system calls on these hooks pays, whatever its programs do,
 *   - clock floor: the floor's programs reading the clock once each per
 *     pread (bench/hook_floor 8), nothing else: the least a tracer that
 *     times each call pays (bpf_ktime_get_ns cost 70-90 ns a read on this
 *     VM's kvm-clock, measured 2026-11-24),
 *   - filter floor: the floor's programs reading the calling process's
 *     id and comparing it with one no process has (bench/hook_floor 10):
 *     the least a tracer that filters by process pays for a call it
 *     filters out (the figure to set filtered out against),
 *   - record floor: the least a tracer that writes a full record per call
 *     pays here (bench/hook_floor 3: the entry time in task storage, one
 *     record of iotrail's size per pread at exit into a drained ring; no
 *     filter, tag or decoding): the price of the record itself,
 *   - traced: the worker is the COMMAND of `iotrail record --layers syscall`
 *     (every storage call recorded in full),
 *   - filtered out: a recorder runs with -p of another (idle) process, so
 *     the worker's calls hit the probes and the in-kernel filter only.
 * Prints, per thread count, the median over rounds of the added ns per
 * call and of the time ratio, how far traced and filtered out are above
 * the floor, and the BPF run time per call (the kernel's run-time
 * statistics of every program, summed over each loop: what the programs
 * themselves cost, which a busy neighbour disturbs far less than the
 * loop's time). Goals (issue 11): traced <= floor + 100 ns, filtered
 * out <= floor + 10 ns.
 *
 *   build/bench/syscall_cost [--pairs N] [--threads 1,4] [--calls N]
 *                            (--pairs: rounds, each of the five runs)
 *                            [--call pread|getppid] [--iotrail PATH]
 *                            [--record-opt OPTION]... [--baseline PATH]
 *
 * --record-opt passes an option to `iotrail record` (e.g. a hook choice:
 * --record-opt --syscall-hook --record-opt tp_btf).
 *
 * --baseline PATH adds a traced and a filtered-out run under another build of
 * iotrail (an older one) to every round, so a change is measured before and
 * after in the same run, beside the same floor.
 *
 * --call getppid times a call that is not a storage call: the tax every
 * process pays while the syscall layer is attached.
 *
 * The time per call is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over
 * the loop, not wall time: the probes run in the calling thread, so their
 * cost is in it, while time lost to other processes on a shared machine is
 * not. --wall uses wall time instead.
 * `syscall_cost --worker ...` is the timed loop itself (used by the driver).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/bpf.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE (1u << 20)
#define IO_SIZE 4096u
#define MAX_THREADS 64
#define MAX_PAIRS 50

struct opts {
	int pairs;
	int threads[8];
	int nthreads;
	long calls;
	const char *call;
	const char *iotrail;
	const char *baseline;         /* another iotrail, or NULL */
	const char *hook_floor;       /* bench/hook_floor, next to this program */
	const char *file;
	const char *result;
	bool wall;
	char *rec_opts[8];
	int nrec_opts;
};

/* ---- worker: the timed loop ---- */

struct worker_arg {
	int fd;
	long calls;
	bool getppid;
	pthread_barrier_t *start;
	double ns_per_call;
};

static bool use_wall;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(use_wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void *worker_thread(void *p)
{
	struct worker_arg *a = p;
	char buf[IO_SIZE] __attribute__((aligned(64)));
	uint64_t t0;

	for (long i = 0; i < 2000; i++) /* warm the cache lines and the TLB */
		pread(a->fd, buf, IO_SIZE, (i * IO_SIZE) % FILE_SIZE);
	pthread_barrier_wait(a->start); /* all warm: the driver thread reads the BPF time */
	pthread_barrier_wait(a->start);
	t0 = now_ns();
	if (a->getppid) {
		for (long i = 0; i < a->calls; i++)
			syscall(SYS_getppid);
	} else {
		for (long i = 0; i < a->calls; i++)
			if (pread(a->fd, buf, IO_SIZE, (i * IO_SIZE) % FILE_SIZE) != IO_SIZE)
				abort();
	}
	a->ns_per_call = (double)(now_ns() - t0) / (double)a->calls;
	return NULL;
}

static int make_file(const char *path)
{
	static char block[IO_SIZE];
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	if (st.st_size < FILE_SIZE) {
		memset(block, 'x', sizeof(block));
		for (unsigned off = 0; off < FILE_SIZE; off += IO_SIZE)
			if (pwrite(fd, block, IO_SIZE, off) != IO_SIZE)
				return -1;
	}
	return fd;
}

/* ---- BPF time: the kernel's run time of every BPF program ---- */

static long bpf_cmd(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

#define MAX_PROGS 4096

struct prog_time {
	__u32 id;
	uint64_t ns;
};

/* Every BPF program's run time (ns) into t, by ascending id (at most
 * MAX_PROGS): counted while statistics are on (the driver turns them on
 * with BPF_ENABLE_STATS for the whole run). Returns how many. */
static int bpf_run_times(struct prog_time *t)
{
	union bpf_attr a;
	__u32 id = 0;
	int n = 0;

	while (n < MAX_PROGS) {
		struct bpf_prog_info info;
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (bpf_cmd(BPF_PROG_GET_NEXT_ID, &a))
			break;
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = (int)bpf_cmd(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (__u32)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (__u64)(unsigned long)&info;
		if (!bpf_cmd(BPF_OBJ_GET_INFO_BY_FD, &a))
			t[n++] = (struct prog_time){ .id = id, .ns = info.run_time_ns };
		close(fd);
	}
	return n;
}

/* The run time the programs of both readings added between them (one
 * that went away meanwhile, such as the last run's tracer still
 * detaching at the first, is left out). */
static uint64_t bpf_run_time_between(const struct prog_time *t0, int n0,
				     const struct prog_time *t1, int n1)
{
	uint64_t sum = 0;

	for (int i = 0, j = 0; i < n0 && j < n1;) {
		if (t0[i].id < t1[j].id) {
			i++;
		} else if (t0[i].id > t1[j].id) {
			j++;
		} else {
			if (t1[j].ns >= t0[i].ns)
				sum += t1[j].ns - t0[i].ns;
			i++;
			j++;
		}
	}
	return sum;
}

/* Runs the loop in nthreads threads; writes the mean ns/call to o->result,
 * then the BPF run time per call over the loops (every program's). */
static int run_worker(const struct opts *o, int nthreads)
{
	struct worker_arg args[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	pthread_barrier_t start;
	double sum = 0, bpf_ns;
	static struct prog_time bpf0[MAX_PROGS], bpf1[MAX_PROGS];
	int n0, n1;
	FILE *f;
	int fd = make_file(o->file);

	if (fd < 0) {
		fprintf(stderr, "syscall_cost: failed to create %s: %s; pass a writable --file\n",
			o->file, strerror(errno));
		return 1;
	}
	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (int i = 0; i < nthreads; i++) {
		args[i] = (struct worker_arg){ .fd = fd, .calls = o->calls, .start = &start,
					       .getppid = !strcmp(o->call, "getppid") };
		pthread_create(&tids[i], NULL, worker_thread, &args[i]);
	}
	/* the BPF time is read around the loops: after every thread has
	 * warmed up, and after they all ended */
	pthread_barrier_wait(&start);
	n0 = bpf_run_times(bpf0);
	pthread_barrier_wait(&start);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(tids[i], NULL);
		sum += args[i].ns_per_call;
	}
	n1 = bpf_run_times(bpf1);
	bpf_ns = (double)bpf_run_time_between(bpf0, n0, bpf1, n1) / ((double)o->calls * nthreads);
	close(fd);
	f = o->result ? fopen(o->result, "w") : stdout;
	if (!f)
		return 1;
	fprintf(f, "%.2f %.2f\n", sum / nthreads, bpf_ns);
	if (f != stdout)
		fclose(f);
	return 0;
}

/* ---- driver ---- */

static pid_t spawn(char *const argv[], bool quiet)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (quiet) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 1);
			dup2(null, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_ok(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* A recorder is ready once it holds a BPF link (its probes are attached). */
static bool has_bpf_link(pid_t pid)
{
	char dir[64], fdp[PATH_MAX + 64], target[128];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		ssize_t n;

		snprintf(fdp, sizeof(fdp), "%s/%s", dir, de->d_name);
		n = readlink(fdp, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			found = strstr(target, "bpf_link") != NULL;
		}
	}
	closedir(d);
	return found;
}

/* The worker's ns per call (and its BPF ns per call into *bpf), or -1. */
static double read_result(const char *path, double *bpf)
{
	double v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lf %lf", &v, bpf) != 2)
			v = -1;
		fclose(f);
	}
	unlink(path);
	return v;
}

enum mode { UNTRACED, FLOOR, CLOCK_FLOOR, FILTER_FLOOR, RECORD_FLOOR, TRACED, FILTERED, BASE_TRACED,
	    BASE_FILTERED, NMODES };

static bool mode_traced(enum mode m) { return m == TRACED || m == BASE_TRACED; }

/* One timed run; returns ns/call or a negative value on failure. */
static double run_once(const struct opts *o, const char *self, int nthreads, enum mode m,
		       double *bpf)
{
	char threads[16], calls[32], trail[] = "/tmp/syscall_cost.XXXXXX";
	char result[64], idle_pid[16];
	pid_t rec = 0, idle = 0, w;
	int tfd = mkstemp(trail);
	double v;

	if (tfd < 0)
		return -1;
	close(tfd);
	snprintf(result, sizeof(result), "%s.result", trail);
	snprintf(threads, sizeof(threads), "%d", nthreads);
	snprintf(calls, sizeof(calls), "%ld", o->calls);
	char *worker[] = { (char *)self, "--worker", "--threads", threads, "--calls", calls,
			   "--call", (char *)o->call, "--file", (char *)o->file,
			   "--result", result, o->wall ? "--wall" : NULL, NULL };

	if (m >= TRACED) {
		char *argv[48];
		int n = 0;

		argv[n++] = (char *)(m >= BASE_TRACED ? o->baseline : o->iotrail);
		argv[n++] = "record";
		argv[n++] = "--layers";
		argv[n++] = "syscall";
		argv[n++] = "-o";
		argv[n++] = trail;
		for (int i = 0; i < o->nrec_opts; i++)
			argv[n++] = o->rec_opts[i];
		if (mode_traced(m)) {
			argv[n++] = "--";
			for (int i = 0; worker[i]; i++)
				argv[n++] = worker[i];
			argv[n] = NULL;
			w = spawn(argv, true);
		} else {
			char *sleeper[] = { "/bin/sleep", "1000", NULL };

			idle = spawn(sleeper, true);
			snprintf(idle_pid, sizeof(idle_pid), "%d", idle);
			argv[n++] = "-p";
			argv[n++] = idle_pid;
			argv[n] = NULL;
			rec = spawn(argv, true);
			for (int i = 0; i < 1000 && !has_bpf_link(rec); i++)
				usleep(10000);
			if (!has_bpf_link(rec)) {
				fprintf(stderr, "syscall_cost: the recorder attached no probe in 10 s\n");
				kill(rec, SIGKILL);
				kill(idle, SIGKILL);
				waitpid(rec, NULL, 0);
				waitpid(idle, NULL, 0);
				unlink(trail);
				return -1;
			}
			usleep(100000);
			w = spawn(worker, false);
		}
	} else if (m == FLOOR || m == CLOCK_FLOOR || m == FILTER_FLOOR || m == RECORD_FLOOR) {
		char *argv[32] = { (char *)o->hook_floor,
				   m == FLOOR ? "2" : m == CLOCK_FLOOR ? "8" :
				   m == FILTER_FLOOR ? "10" : "3", "--" };
		int n = 3;

		for (int i = 0; worker[i]; i++)
			argv[n++] = worker[i];
		argv[n] = NULL;
		w = spawn(argv, false);
	} else {
		w = spawn(worker, false);
	}
	v = wait_ok(w) ? -1 : read_result(result, bpf);
	if (rec) {
		kill(rec, SIGINT);
		waitpid(rec, NULL, 0);
	}
	if (idle) {
		kill(idle, SIGKILL);
		waitpid(idle, NULL, 0);
	}
	unlink(trail);
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the median of n values, sorted in a copy: the rounds keep their order,
 * which the differences round by round need (sorting in place paired the
 * k-th smallest of one mode with the k-th of another until 2026-11-25) */
static double median(const double *v, int n)
{
	double s[MAX_PAIRS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double least(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static int run_driver(const struct opts *o, const char *self)
{
	static const char *names[] = { "untraced", "floor", "clock-floor", "filter-floor",
				       "record-floor", "traced",
				       "filtered-out",
				       "baseline-traced", "baseline-filtered-out" };
	int nmodes = o->baseline ? NMODES : BASE_TRACED;
	union bpf_attr stats = { .enable_stats.type = BPF_STATS_RUN_TIME };
	/* the kernel counts programs' run time while this fd is open */
	int stats_fd = (int)bpf_cmd(BPF_ENABLE_STATS, &stats);

	if (stats_fd < 0) {
		fprintf(stderr, "syscall_cost: failed to turn on BPF run-time statistics: %s; run as "
			"root\n", strerror(errno));
		return 1;
	}
	printf("syscall_cost: %s (pread: %u bytes of a cached file), %ld calls per thread, "
	       "%d rounds, %s time\n", o->call, IO_SIZE, o->calls, o->pairs,
	       o->wall ? "wall" : "thread CPU");
	printf("(floor: empty programs on sys_enter and sys_exit; clock-floor: the same reading "
	       "the clock once each per pread; filter-floor: the same reading the calling "
	       "process's id and comparing it with one no process has; record-floor: entry time in "
	       "task storage and one 104-byte ring record per pread, nothing else; traced: iotrail "
	       "record --layers syscall -- the loop; filtered-out: iotrail record -p another "
	       "process%s)\n",
	       o->baseline ? "; baseline-*: the same under --baseline" : "");
	if (o->baseline)
		printf("(baseline: %s)\n", o->baseline);
	for (int t = 0; t < o->nthreads; t++) {
		int n = o->threads[t];
		/* per mode: added ns per call, time ratio, and how far above
		 * the floor of the same round */
		double add[NMODES][MAX_PAIRS], ratio[NMODES][MAX_PAIRS], above[NMODES][MAX_PAIRS];
		double bpf[NMODES][MAX_PAIRS], base[MAX_PAIRS];

		for (int p = 0; p < o->pairs; p++) {
			double v[NMODES], bv[NMODES];

			/* alternate the order, so that drift cancels out */
			printf("  %d thread%s round %d:", n, n > 1 ? "s" : " ", p + 1);
			for (int k = 0; k < nmodes; k++) {
				enum mode m = (enum mode)((p % 2) ? nmodes - 1 - k : k);

				v[m] = run_once(o, self, n, m, &bv[m]);
				if (v[m] < 0) {
					fprintf(stderr, "syscall_cost: the %s run failed; check that "
						"'%s record --layers syscall' and '%s 2 -- true' work "
						"as root\n", names[m],
						m >= BASE_TRACED ? o->baseline : o->iotrail, o->hook_floor);
					close(stats_fd);
					return 1;
				}
			}
			base[p] = v[UNTRACED];
			for (int m = FLOOR; m < nmodes; m++) {
				add[m][p] = v[m] - v[UNTRACED];
				ratio[m][p] = v[m] / v[UNTRACED];
				above[m][p] = v[m] - v[FLOOR];
			}
			for (int m = 0; m < nmodes; m++) {
				printf("  %s %.1f", names[m], v[m]);
				bpf[m][p] = bv[m];
			}
			printf(" ns/call; BPF");
			for (int m = FLOOR; m < nmodes; m++)
				printf(" %.0f", bv[m]);
			printf(" ns/call\n");
		}
		printf("%d thread%s: untraced %.1f ns/call; added per call [medians]:", n,
		       n > 1 ? "s" : "", median(base, o->pairs));
		for (int m = FLOOR; m < nmodes; m++)
			printf(" %s %+.1f (ratio %.3f)%s", names[m], median(add[m], o->pairs),
			       median(ratio[m], o->pairs), m + 1 < nmodes ? "," : "\n");
		printf("%d thread%s: above the floor [medians of the rounds' differences; goals: "
		       "traced <= +100, filtered out <= +10]:", n, n > 1 ? "s" : "");
		for (int m = CLOCK_FLOOR; m < nmodes; m++)
			printf(" %s %+.1f%s", names[m], median(above[m], o->pairs),
			       m + 1 < nmodes ? "," : " ns/call\n");
		/* the programs' own run time, which neighbours on a shared
		 * machine disturb far less than the loop's time */
		printf("%d thread%s: BPF run time per call [medians; every program on the "
		       "machine during the loop]:", n, n > 1 ? "s" : "");
		for (int m = FLOOR; m < nmodes; m++)
			printf(" %s %.1f%s", names[m], median(bpf[m], o->pairs),
			       m + 1 < nmodes ? "," : " ns\n");
		/* a filtered-out call against the empty pair (the goal's terms)
		 * and against the least any process filter does, in the
		 * programs' run time, round by round */
		{
			double pair[MAX_PAIRS], least_filter[MAX_PAIRS];

			for (int p = 0; p < o->pairs; p++) {
				pair[p] = bpf[FILTERED][p] - bpf[FLOOR][p];
				least_filter[p] = bpf[FILTERED][p] - bpf[FILTER_FLOOR][p];
			}
			printf("%d thread%s: filtered out, BPF run time per call [medians of the "
			       "rounds' differences]: %+.1f ns over the empty pair (goal <= +10), "
			       "%+.1f over the filter floor (the least a process filter does: "
			       "%+.1f over the pair)\n", n, n > 1 ? "s" : "",
			       median(pair, o->pairs), median(least_filter, o->pairs),
			       median(pair, o->pairs) - median(least_filter, o->pairs));
		}
		/* on a shared machine, neighbours only ever add time: the smallest
		 * difference is the least disturbed one */
		printf("%d thread%s: least added over the rounds:", n, n > 1 ? "s" : "");
		for (int m = FLOOR; m < nmodes; m++)
			printf(" %s %+.1f%s", names[m], least(add[m], o->pairs),
			       m + 1 < nmodes ? "," : " ns/call\n");
	}
	close(stats_fd);
	return 0;
}

static int parse_threads(struct opts *o, const char *s)
{
	char *end;

	o->nthreads = 0;
	do {
		long v = strtol(s, &end, 10);

		if (end == s || v < 1 || v > MAX_THREADS || o->nthreads == 8)
			return -1;
		o->threads[o->nthreads++] = (int)v;
		s = end + 1;
	} while (*end == ',');
	return *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .pairs = 5, .threads = { 1, 4 }, .nthreads = 2, .calls = 200000,
			  .call = "pread", .iotrail = "build/iotrail",
			  .file = "/tmp/syscall_cost.data" };
	bool worker = false;
	char self[PATH_MAX], floor_path[PATH_MAX + 16];
	ssize_t n;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool bad = false;

		if (!strcmp(a, "--worker")) {
			worker = true;
			continue;
		}
		if (!strcmp(a, "--wall")) {
			use_wall = o.wall = true;
			continue;
		}
		if (!v) {
			bad = true;
		} else if (!strcmp(a, "--pairs")) {
			o.pairs = atoi(v);
			bad = o.pairs < 1 || o.pairs > MAX_PAIRS;
		} else if (!strcmp(a, "--threads")) {
			bad = parse_threads(&o, v) != 0;
		} else if (!strcmp(a, "--calls")) {
			o.calls = atol(v);
			bad = o.calls < 1000;
		} else if (!strcmp(a, "--call")) {
			o.call = v;
			bad = strcmp(v, "pread") && strcmp(v, "getppid");
		} else if (!strcmp(a, "--iotrail")) {
			o.iotrail = v;
		} else if (!strcmp(a, "--baseline")) {
			o.baseline = v;
		} else if (!strcmp(a, "--file")) {
			o.file = v;
		} else if (!strcmp(a, "--result")) {
			o.result = v;
		} else if (!strcmp(a, "--record-opt")) {
			bad = o.nrec_opts == 8;
			if (!bad)
				o.rec_opts[o.nrec_opts++] = (char *)v;
		} else {
			bad = true;
		}
		if (bad) {
			fprintf(stderr, "syscall_cost: bad option '%s'; see the comment at the top "
				"of bench/syscall_cost.c\n", a);
			return 2;
		}
		i++;
	}
	if (worker)
		return run_worker(&o, o.threads[0]);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return 1;
	self[n] = 0;
	snprintf(floor_path, sizeof(floor_path), "%.*s/hook_floor",
		 (int)(strrchr(self, '/') - self), self);
	o.hook_floor = floor_path;
	if (access(o.hook_floor, X_OK)) {
		fprintf(stderr, "syscall_cost: failed to find %s: %s; build it (make all)\n",
			o.hook_floor, strerror(errno));
		return 1;
	}
	if (access(o.iotrail, X_OK)) {
		fprintf(stderr, "syscall_cost: failed to find %s: %s; build it (make) or pass --iotrail\n",
			o.iotrail, strerror(errno));
		return 1;
	}
	if (o.baseline && access(o.baseline, X_OK)) {
		fprintf(stderr, "syscall_cost: failed to find --baseline %s: %s\n", o.baseline,
			strerror(errno));
		return 1;
	}
	return run_driver(&o, self);
}
