// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer on the recording side: its options, and its records
 * into the trace file (the probes are loaded by record_loader.c). Which
 * processes: the recording's scope (src/scope.h: every process but
 * iotrail itself, or -p, --comm, --cgroup with descendants, as every
 * layer); its own filters (--calls, --path, --tid) narrow that down in
 * the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "layer.h"
#include "layers/syscall/record_loader.h"
#include "layers/syscall/uring_join.h"
#include "tracefile.h"

enum { OPT_CALLS = IT_LAYER_OPT(IT_LAYER_SYSCALL, 0), OPT_PATH, OPT_TID,
       OPT_HOOK };

static const struct option options[] = {
	{ "calls", required_argument, NULL, OPT_CALLS },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "syscall-hook", required_argument, NULL, OPT_HOOK },
	{ 0 },
};

static struct {
	struct it_syscall_opts o;
	bool filters_given;
	struct it_syscall_layer *l;
	uint64_t calls, side, dropped;
	uint64_t side_dropped;      /* paths, names, tasks, exit titles */
	struct it_uring_join uring; /* io_uring requests' halves, joined here */
	/* processes whose title is written: an open-addressing set of pids */
	uint32_t *titled;
	size_t ntitled, titlecap;
	size_t tlen;    /* titles handed to the reader, not yet written */
} sys;

/* The titles' reader: a thread of its own, because reading
 * /proc/PID/cmdline takes the process's mmap lock, which a long mmap,
 * munmap or mprotect holds for writing (and a process starved of CPU may
 * hold for long): the drain thread must not wait on it (issue 13). Its
 * jobs, in the order the processes were seen: [final...][read once...]
 * [to read...]; the drain thread writes the final ones at the front. */
struct title_job {
	struct title_job *next;
	uint32_t pid;
	int len;
	bool exited;       /* title is the one at its exit: final */
	bool final;        /* read again (or exited): to be written */
	uint64_t seen_ns;
	char title[IT_TITLE_MAX];
};

static struct {
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct title_job *head, *tail;
	struct title_job *first, *again; /* the next to read once; to read again */
	bool now;          /* the end: read again without waiting */
	bool stop;
} tr = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void usage(FILE *f)
{
	fprintf(f,
		"  syscall layer (which processes: those in scope, see -p, --comm, --cgroup;\n"
		"  never iotrail itself):\n"
		"      --calls LIST     only these calls: names (pread64,fsync,...) or groups\n"
		"                       data, sync, open, meta, dir, xattr, aio, uring, all\n"
		"      --path PREFIX    only calls on files under PREFIX (up to 4)\n"
		"      --tid TID        only this thread (repeatable), besides -p\n"
		"      --syscall-hook KIND  tp_btf, raw_tp or tracepoint (default: tp_btf\n"
		"                       if the kernel has it; see README for the costs)\n"
		"      e.g. iotrail record --layers syscall --calls data,sync --path /var/lib/db -- ./db\n");
}

/* A pid that is gone, or a thread id that is not one, is an error now,
 * not an empty trace later. */
static int parse_tid(const char *arg)
{
	char *end, path[64];
	long v = strtol(arg, &end, 10);

	if (*end || v <= 0 || v > INT_MAX)
		return it_fail(-1, "parse --tid", arg, "give a thread id");
	snprintf(path, sizeof(path), "/proc/%ld", v); /* /proc/TID works for threads */
	if (access(path, F_OK))
		return it_fail(-1, "find thread", arg, "no such thread");
	if (sys.o.ntids == IT_SYS_MAX_IDS)
		return it_fail(-1, "add --tid", "too many threads", "give at most 64");
	sys.o.tids[sys.o.ntids++] = (pid_t)v;
	return 0;
}

static int parse(int code, const char *arg)
{
	char err[256];
	struct stat st;

	sys.filters_given = true;
	switch (code) {
	case OPT_CALLS:
		if (it_syscall_parse_calls(arg, sys.o.calls, err, sizeof(err)))
			return it_fail(-1, "parse --calls", err, NULL);
		return 0;
	case OPT_PATH:
		if (stat(arg, &st)) {
			snprintf(err, sizeof(err), "%s: %s", arg, strerror(errno));
			return it_fail(-1, "use path filter", err, "give an existing file or directory");
		}
		if (sys.o.npaths == IT_SYS_MAX_PREFIX)
			return it_fail(-1, "add --path", "too many path filters", "give at most 4");
		sys.o.paths[sys.o.npaths++] = arg;
		return 0;
	case OPT_TID:
		return parse_tid(arg);
	case OPT_HOOK:
		sys.o.hook = it_hook_kind_parse(arg);
		if (sys.o.hook != IT_HOOK_TP_BTF && sys.o.hook != IT_HOOK_RAW_TP &&
		    sys.o.hook != IT_HOOK_TRACEPOINT)
			return it_fail(-1, "parse --syscall-hook", arg, "use tp_btf, raw_tp or tracepoint");
		return 0;
	default:
		return it_fail(-1, "parse the options", "internal error", NULL);
	}
}

static int available(char *why, size_t len)
{
	return !it_syscall_requires(why, len);
}

static int settle(const struct it_session *s, bool recorded)
{
	if (!recorded && sys.filters_given)
		return it_fail(-1, "use the syscall options", "the syscall layer is not recorded",
			       "add syscall to --layers");
	sys.o.scope = s->scope;
	return 0;
}

/* Whether pid is new to the set of titled processes (then added). A set
 * that cannot grow says no: a title is missed, nothing else. */
static bool title_new(uint32_t pid)
{
	size_t i;

	if (sys.ntitled * 2 >= sys.titlecap) {
		size_t ncap = sys.titlecap ? sys.titlecap * 2 : 1024;
		uint32_t *n = calloc(ncap, sizeof(*n));

		if (!n)
			return false;
		for (i = 0; i < sys.titlecap; i++) {
			size_t j = sys.titled[i] * 2654435761u % ncap;
			if (!sys.titled[i])
				continue;
			while (n[j])
				j = (j + 1) % ncap;
			n[j] = sys.titled[i];
		}
		free(sys.titled);
		sys.titled = n;
		sys.titlecap = ncap;
	}
	for (i = pid * 2654435761u % sys.titlecap; sys.titled[i]; i = (i + 1) % sys.titlecap)
		if (sys.titled[i] == pid)
			return false;
	sys.titled[i] = pid;
	sys.ntitled++;
	return true;
}

/* An argv area as ps shows it: NULs between the arguments as spaces, no
 * trailing ones. Its length. */
static int tidy_title(char *title, int n)
{
	while (n > 0 && (title[n - 1] == 0 || title[n - 1] == ' '))
		n--;
	for (int i = 0; i < n; i++)
		if (title[i] == 0)
			title[i] = ' ';
	return n;
}

/* /proc/PID/cmdline as ps shows it (NULs between the arguments as
 * spaces) into title (IT_TITLE_MAX bytes); its length, -1 when it cannot
 * be read (the process is gone). A kernel thread has an empty one. */
static int read_title(uint32_t pid, char *title)
{
	char path[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, title, IT_TITLE_MAX);
	close(fd);
	return n < 0 ? -1 : tidy_title(title, (int)n);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A process's title is read when its first task record comes out of the
 * ring, and again TITLE_DELAY_NS later: a forked server process sets its
 * role right after it starts (a PostgreSQL backend is "initializing",
 * then "authentication", then what it does), so the later read names
 * what the process went on to be; the first one stands in when the
 * process is gone by then, unless its title at exit came (the BPF
 * program sends it where the kernel allows, title_at_exit()). One title
 * record per process, once read again or at the end of the recording. */
#define TITLE_DELAY_NS 100000000ull

/* The reader's next step, the lock held: a first read, else the oldest
 * second read once due; false when there is nothing to do yet (*wait_ns:
 * until when, 0 for a new job). */
static bool title_step(uint64_t *wait_ns)
{
	struct title_job *j;
	char buf[IT_TITLE_MAX];
	bool again;
	int n;

	if ((j = tr.first)) {
		tr.first = j->next;
		again = false;
	} else if ((j = tr.again) && j != tr.first && (tr.now || j->exited ||
							 now_ns() >= j->seen_ns + TITLE_DELAY_NS)) {
		tr.again = j->next;
		again = true;
	} else {
		*wait_ns = j ? j->seen_ns + TITLE_DELAY_NS : 0;
		return false;
	}
	if (!j->exited) {
		uint32_t pid = j->pid;

		pthread_mutex_unlock(&tr.lock);
		n = read_title(pid, buf); /* may wait on the process's mmap lock */
		pthread_mutex_lock(&tr.lock);
		/* the title at its exit, come meanwhile, wins; a failed second
		 * read (gone) leaves the first one */
		if (!j->exited && (n >= 0 || !again)) {
			j->len = n < 0 ? 0 : n;
			memcpy(j->title, buf, (size_t)j->len);
		}
	}
	if (again) {
		j->final = true;
		pthread_cond_broadcast(&tr.done);
	}
	return true;
}

static void *title_main(void *arg)
{
	uint64_t until;

	(void)arg;
	pthread_mutex_lock(&tr.lock);
	while (!tr.stop) {
		if (title_step(&until))
			continue;
		if (!until) {
			pthread_cond_wait(&tr.work, &tr.lock);
		} else {
			struct timespec t = { .tv_sec = (time_t)(until / 1000000000ull),
					      .tv_nsec = (long)(until % 1000000000ull) };

			pthread_cond_timedwait(&tr.work, &tr.lock, &t);
		}
	}
	pthread_mutex_unlock(&tr.lock);
	return NULL;
}

static int titles_start(void)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* now_ns()'s clock */
	pthread_cond_init(&tr.work, &ca);
	pthread_cond_init(&tr.done, NULL);
	pthread_condattr_destroy(&ca);
	sigfillset(&all); /* signals are the main thread's */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&tr.thread, NULL, title_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	tr.running = !err;
	return -err;
}

/* Started at the first title to read: once the recording runs (its
 * memory is not added to the start-up peak, when libbpf holds the
 * kernel's BTF). A reader that cannot start is said once. */
static bool titles_running(void)
{
	static bool failed;
	int err;

	if (tr.running || failed)
		return tr.running;
	if ((err = titles_start())) {
		failed = true;
		fprintf(stderr, "iotrail record: warning: cannot start the reader of process "
			"titles: %s; the trace names processes by comm only\n", strerror(-err));
	}
	return tr.running;
}

static void titles_stop(void)
{
	if (tr.running) {
		pthread_mutex_lock(&tr.lock);
		tr.stop = true;
		pthread_cond_signal(&tr.work);
		pthread_mutex_unlock(&tr.lock);
		pthread_join(tr.thread, NULL);
		pthread_cond_destroy(&tr.work);
		pthread_cond_destroy(&tr.done);
	}
	while (tr.head) {
		struct title_job *j = tr.head;

		tr.head = j->next;
		free(j);
	}
	tr = (typeof(tr)){ .lock = PTHREAD_MUTEX_INITIALIZER };
}

static int write_title(struct it_session *s, const struct title_job *j)
{
	char buf[sizeof(struct it_sys_title) + IT_TITLE_MAX];
	struct it_sys_title *t = (struct it_sys_title *)buf;
	int err;

	memcpy(buf + sizeof(*t), j->title, (size_t)j->len);
	*t = (struct it_sys_title){ .rec = IT_SREC_TITLE, .len = (uint16_t)j->len, .pid = j->pid,
				    .ts = now_ns() };
	err = it_writer_add_record(s->w, 0, IT_LAYER_SYSCALL, IT_CHUNK_SYSSIDE, buf,
				   sizeof(*t) + (size_t)j->len);
	if (err && err != -EINVAL)
		return s->err = err;
	sys.side += !err;
	return 0;
}

/* Writes the titles read again (all: every one, the reader told to read
 * the rest again now and waited for). */
static int titles_due(struct it_session *s, bool all)
{
	struct title_job *done = NULL, **end = &done;

	pthread_mutex_lock(&tr.lock);
	if (all) {
		tr.now = true;
		pthread_cond_signal(&tr.work);
		while (tr.running && tr.tail && !tr.tail->final)
			pthread_cond_wait(&tr.done, &tr.lock);
	}
	/* the final ones, at the front, off the list: written unlocked */
	while (tr.head && tr.head->final) {
		*end = tr.head;
		end = &tr.head->next;
		tr.head = tr.head->next;
	}
	*end = NULL;
	if (!tr.head)
		tr.tail = NULL;
	pthread_mutex_unlock(&tr.lock);
	while (done) {
		struct title_job *j = done;

		done = j->next;
		if (!s->err)
			write_title(s, j);
		sys.tlen--;
		free(j);
	}
	return s->err;
}

/* A process seen for the first time: its title to read, now and later.
 * A job that cannot be made loses the title, nothing else. */
static void title_seen(uint32_t pid)
{
	struct title_job *j;

	if (!title_new(pid) || !titles_running() || !(j = calloc(1, sizeof(*j))))
		return;
	j->pid = pid;
	j->seen_ns = now_ns();
	pthread_mutex_lock(&tr.lock);
	if (tr.tail)
		tr.tail->next = j;
	else
		tr.head = j;
	tr.tail = j;
	if (!tr.first)
		tr.first = j;
	if (!tr.again)
		tr.again = j;
	pthread_cond_signal(&tr.work);
	pthread_mutex_unlock(&tr.lock);
	sys.tlen++;
}

/* The BPF program's title of a process at its exit (syscall.bpf.c): the
 * final one for a process whose title is not read again yet (it could
 * not be once the process is gone); not written to the file as such. */
static void title_at_exit(const void *rec, size_t size)
{
	struct it_sys_title h;

	if (size < sizeof(h))
		return;
	memcpy(&h, rec, sizeof(h));
	if (h.len > IT_TITLE_MAX || h.len > size - sizeof(h))
		return;
	pthread_mutex_lock(&tr.lock);
	for (struct title_job *j = tr.head; j; j = j->next) {
		if (j->pid != h.pid || j->final)
			continue;
		memcpy(j->title, (const char *)rec + sizeof(h), h.len);
		j->len = tidy_title(j->title, h.len);
		j->exited = true;
		pthread_cond_signal(&tr.work); /* final without waiting */
		break;
	}
	pthread_mutex_unlock(&tr.lock);
}

/* Every record, in ring order, into the trace file; the titles of the
 * processes the task records name (see TITLE_DELAY_NS). */
static int sink(void *ctx, const void *rec, size_t size)
{
	struct it_session *s = ctx;
	struct it_sys_event joined;
	uint16_t type;
	int err;

	if (!s->w || s->err)
		return s->err;
	s->consumed++;
	if (size < sizeof(type))
		return 0; /* a malformed record: not the file's fault */
	memcpy(&type, rec, sizeof(type));
	if (type == IT_SREC_TITLE) {
		title_at_exit(rec, size);
		return 0;
	}
	if (type == IT_SREC_URING_SUBMIT) {
		if (size >= sizeof(struct it_sys_uring_submit)) {
			struct it_sys_uring_submit sub;

			memcpy(&sub, rec, sizeof(sub));
			if (it_uring_join_submit(&sys.uring, &sub))
				return s->err = -ENOMEM;
		}
		return 0;
	}
	if (type == IT_SREC_URING_DONE) {
		struct it_sys_uring_done d;

		if (size < sizeof(d))
			return 0;
		memcpy(&d, rec, sizeof(d));
		if (!it_uring_join_done(&sys.uring, &d, &joined))
			return 0;
		rec = &joined;
		size = sizeof(joined);
		type = IT_SREC_CALL;
	}
	/* calls are fixed-size records, the side records variable */
	err = it_writer_add_record(s->w, 0, IT_LAYER_SYSCALL,
				   type == IT_SREC_CALL ? IT_CHUNK_SYSCALLS : IT_CHUNK_SYSSIDE,
				   rec, size);
	if (err == -EINVAL)
		return 0; /* a malformed record: not the file's fault */
	if (err)
		return s->err = err;
	if (type == IT_SREC_CALL) {
		sys.calls++;
		/* a cheap test per call; the clock only while titles wait */
		return sys.tlen && !(sys.calls & 255) ? titles_due(s, false) : 0;
	}
	sys.side++;
	if (type == IT_SREC_TASK && size >= sizeof(struct it_sys_task)) {
		struct it_sys_task t;

		memcpy(&t, rec, sizeof(t));
		title_seen(t.pid);
	}
	return sys.tlen ? titles_due(s, false) : 0;
}

static int start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	sys.o.verbose = s->verbose;
	sys.o.ringbuf_bytes = (size_t)s->ringbuf_mb << 20; /* --ringbuf-mb: every ring alike */
	sys.o.marks = s->marks; /* the block layer's decisions, when a task makes them */
	sys.o.call_counts = s->call_counts;
	sys.l = it_syscall_open(&sys.o, sink, s, why, wlen);
	if (!sys.l)
		return 0;
	snprintf(hooks, hlen, "%s", it_syscall_hooks_desc(sys.l));
	s->marks_followed = s->marks != NULL;
	return 1;
}

static int attach(struct it_session *s, char *why, size_t wlen)
{
	/* a ring per CPU, drained in the recording's loop; mapped at attach,
	 * as the block layer's */
	struct it_evring *rings;
	int err = it_syscall_join_ring(sys.l, &rings);

	if (!err)
		err = it_session_add_evring(s, rings);
	if (err)
		return it_fail(-1, "open the syscall ring buffer", strerror(-err), NULL);
	return !it_syscall_attach(sys.l, &sys.o, why, wlen);
}

/* The calls lost so far, in the next chunks' headers (as the block layer
 * does): where in the file they were lost, when a long recording loses
 * some (the report takes the total from the end's DROPS chunk). */
static void tick(struct it_session *s)
{
	if (sys.l && s->w)
		it_writer_set_lost(s->w, 0, IT_LAYER_SYSCALL, it_syscall_drops(sys.l, NULL, 0));
}

static void detach(void)
{
	it_syscall_detach(sys.l);
}

static int finish(struct it_session *s)
{
	uint64_t per_cpu[s->ncpu];

	if (s->w && !s->err && titles_due(s, true))
		return s->err;
	memset(per_cpu, 0, sizeof(per_cpu));
	sys.dropped = it_syscall_drops(sys.l, per_cpu, s->ncpu);
	/* io_uring submissions the join table had to throw out are lost
	 * requests too (no CPU to name: counted on the first) */
	per_cpu[0] += sys.uring.evicted;
	sys.dropped += sys.uring.evicted;
	sys.side_dropped = it_syscall_side_drops(sys.l);
	if (s->verbose)
		fprintf(stderr, "syscall: io_uring requests: %llu completions without their "
			"submission, %llu outside --path, %u submissions still waiting, %llu thrown "
			"out\n", (unsigned long long)sys.uring.unmatched,
			(unsigned long long)sys.uring.filtered, sys.uring.len,
			(unsigned long long)sys.uring.evicted);
	if (s->verbose)
		fprintf(stderr, "syscall: %llu records went through the rings, not the CPUs' "
			"buffers (a program that found its CPU's buffer held or full)\n",
			(unsigned long long)it_syscall_ringed(sys.l));
	return it_writer_set_drops(s->w, 0, IT_LAYER_SYSCALL, per_cpu, s->ncpu);
}

/* The calls lost, and apart from them the side records lost (a call
 * whose path or name was lost is in the trace without it). */
static void summary(char *out, size_t len)
{
	int n = snprintf(out, len, "%llu system calls (%llu lost)", (unsigned long long)sys.calls,
			 (unsigned long long)sys.dropped);

	if (sys.side_dropped && n >= 0 && (size_t)n < len)
		snprintf(out + n, len - n, ", %llu paths, names or titles lost",
			 (unsigned long long)sys.side_dropped);
}

static uint64_t recorded(void)
{
	return sys.calls;
}

static void sys_free(void)
{
	it_syscall_close(sys.l);
	sys.l = NULL;
	it_uring_join_free(&sys.uring);
	free(sys.titled);
	sys.titled = NULL;
	sys.ntitled = sys.titlecap = 0;
	titles_stop();
	sys.tlen = 0;
}

extern const struct it_layer_rec it_syscall_records; /* records.c */

const struct it_layer_ops it_syscall_layer = {
	.name = "syscall",
	.follows_io = true,
	.id = IT_LAYER_SYSCALL,
	.records = &it_syscall_records,
	.what = "storage system calls: arguments, file, result, latency; io_uring requests",
	.hooks = it_syscall_hooks,
	.nhooks = IT_SYSCALL_NHOOKS,
	.requires = it_syscall_requires,
	.options = options,
	.usage = usage,
	.parse = parse,
	.available = available,
	.settle = settle,
	.start = start,
	.attach = attach,
	.tick = tick,
	.detach = detach,
	.finish = finish,
	.summary = summary,
	.recorded = recorded,
	.free = sys_free,
};
