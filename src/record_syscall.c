// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer in `iotrail record` (see record_syscall.h). Which
 * processes: the `-- COMMAND` process and all its descendants, or -p PID
 * and its descendants, or every process but iotrail itself; the other
 * filters (--calls, --comm, --cgroup, --path, --tid) narrow that down in
 * the kernel.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "record_syscall.h"
#include "tracefile.h"

struct rec_sys {
	struct it_syscall_layer *l;
	struct it_writer *w;
	uint64_t calls, side;
	uint64_t dropped;
	int err;
};

static int fail(const char *what, const char *why, const char *todo)
{
	fprintf(stderr, "iotrail record: failed to %s: %s%s%s\n", what, why,
		todo ? "; " : "", todo ? todo : "");
	return -1;
}

void rec_sys_usage(FILE *f)
{
	fprintf(f,
		"      --layers LIST    block, syscall, or both (default: every layer this\n"
		"                       kernel supports; see iotrail probe)\n"
		"  syscall layer (which processes: COMMAND and its descendants, else -p PID\n"
		"  and its descendants, else every process but iotrail):\n"
		"      --calls LIST     only these calls: names (pread64,fsync,...) or groups\n"
		"                       data, sync, open, meta, dir, xattr, aio, uring, all\n"
		"      --comm PREFIX    only threads whose name starts with PREFIX\n"
		"      --cgroup DIR     only tasks in this cgroup v2 directory (and below)\n"
		"      --path PREFIX    only calls on files under PREFIX (up to 4)\n"
		"      --tid TID        only this thread (repeatable), besides -p/COMMAND\n"
		"      --syscall-hook KIND  tp_btf, raw_tp or tracepoint (default: tp_btf\n"
		"                       if the kernel has it; see README for the costs)\n");
}

static int parse_layers(struct rec_sys_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int rc = 0;

	if (!copy)
		return fail("parse --layers", "out of memory", NULL);
	o->layers = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "block")) {
			o->layers |= REC_LAYER_BLOCK;
		} else if (!strcmp(t, "syscall") || !strcmp(t, "syscalls")) {
			o->layers |= REC_LAYER_SYSCALL;
		} else {
			char why[96];
			snprintf(why, sizeof(why), "unknown layer '%s'", t);
			rc = fail("parse --layers", why, "use block, syscall or block,syscall");
			break;
		}
	}
	free(copy);
	if (!rc && !o->layers)
		rc = fail("parse --layers", "no layer given", "use block, syscall or block,syscall");
	return rc;
}

/* A pid that is gone, or a thread id that is not one, is an error now,
 * not an empty trace later. */
static int parse_tid(struct rec_sys_opts *o, const char *arg)
{
	char *end, path[64];
	long v = strtol(arg, &end, 10);

	if (*end || v <= 0 || v > INT_MAX)
		return fail("parse --tid", arg, "give a thread id");
	snprintf(path, sizeof(path), "/proc/%ld", v); /* /proc/TID works for threads */
	if (access(path, F_OK))
		return fail("find thread", arg, "no such thread");
	if (o->sys.ntids == IT_SYS_MAX_IDS)
		return fail("add --tid", "too many threads", "give at most 64");
	o->sys.tids[o->sys.ntids++] = (pid_t)v;
	return 0;
}

int rec_sys_parse(struct rec_sys_opts *o, int code, const char *arg)
{
	char err[256];
	struct stat st;

	switch (code) {
	case REC_OPT_LAYERS:
		return parse_layers(o, arg);
	case REC_OPT_CALLS:
		if (it_syscall_parse_calls(arg, o->sys.calls, err, sizeof(err)))
			return fail("parse --calls", err, NULL);
		return 0;
	case REC_OPT_COMM:
		if (!*arg || strlen(arg) > 15)
			return fail("parse --comm", arg, "give 1 to 15 characters (a comm is at most 15)");
		o->sys.comm = arg;
		return 0;
	case REC_OPT_CGROUP:
		if (stat(arg, &st) || !S_ISDIR(st.st_mode))
			return fail("use --cgroup", arg, "give a cgroup v2 directory, "
				    "e.g. /sys/fs/cgroup/system.slice");
		o->sys.cgroup = arg;
		return 0;
	case REC_OPT_PATH:
		if (stat(arg, &st)) {
			snprintf(err, sizeof(err), "%s: %s", arg, strerror(errno));
			return fail("use path filter", err, "give an existing file or directory");
		}
		if (o->sys.npaths == IT_SYS_MAX_PREFIX)
			return fail("add --path", "too many path filters", "give at most 4");
		o->sys.paths[o->sys.npaths++] = arg;
		return 0;
	case REC_OPT_TID:
		return parse_tid(o, arg);
	case REC_OPT_SYSCALL_HOOK:
		if (!strcmp(arg, "tp_btf"))
			o->sys.hook = IT_SYS_HOOK_TP_BTF;
		else if (!strcmp(arg, "raw_tp"))
			o->sys.hook = IT_SYS_HOOK_RAW_TP;
		else if (!strcmp(arg, "tracepoint"))
			o->sys.hook = IT_SYS_HOOK_TRACEPOINT;
		else
			return fail("parse --syscall-hook", arg, "use tp_btf, raw_tp or tracepoint");
		return 0;
	default:
		return fail("parse the options", "internal error", NULL);
	}
}

static bool sys_filters_given(const struct rec_sys_opts *o)
{
	bool calls = false;

	for (unsigned c = 0; c < IT_SYS_MAX; c++)
		calls |= o->sys.calls[c];
	return calls || o->sys.comm || o->sys.cgroup || o->sys.npaths || o->sys.ntids ||
	       o->sys.hook;
}

int rec_sys_settle(struct rec_sys_opts *o, pid_t pid, bool cmd, bool verbose)
{
	char hook[64], why[256];
	bool can = it_syscall_probe(hook, sizeof(hook), why, sizeof(why));

	if (!o->layers) {
		o->layers_default = true;
		o->layers = REC_LAYER_BLOCK | (can ? REC_LAYER_SYSCALL : 0);
		if (!can && verbose)
			fprintf(stderr, "iotrail record: syscall layer off: %s\n", why);
	} else if ((o->layers & REC_LAYER_SYSCALL) && !can) {
		return fail("trace system calls", why, "record --layers block");
	}
	if (!(o->layers & REC_LAYER_SYSCALL) && sys_filters_given(o))
		return fail("use the syscall options", "the syscall layer is not recorded",
			    "add syscall to --layers");
	if (pid) {
		o->sys.pids[o->sys.npids++] = pid;
		o->sys.follow_forks = true;
	} else if (cmd) {
		o->sys.children = true;
		o->sys.follow_forks = true;
	}
	return 0;
}

/* Every record, in ring order, into the trace file. */
static int sink(void *ctx, const void *rec, size_t size)
{
	struct rec_sys *r = ctx;
	uint16_t type;
	int err;

	if (!r->w || r->err)
		return r->err;
	if (size < sizeof(type))
		return 0; /* a malformed record: not the file's fault */
	memcpy(&type, rec, sizeof(type));
	/* calls are fixed-size records, the side records variable */
	err = it_writer_add_record(r->w, 0, IT_LAYER_SYSCALL,
				   type == IT_SREC_CALL ? IT_CHUNK_SYSCALLS : IT_CHUNK_SYSSIDE,
				   rec, size);
	if (err == -EINVAL)
		return 0; /* a malformed record: not the file's fault */
	if (err)
		return r->err = err;
	if (type == IT_SREC_CALL)
		r->calls++;
	else
		r->side++;
	return 0;
}

struct rec_sys *rec_sys_start(const struct rec_sys_opts *o, char *hooks, size_t len,
			      bool *failed)
{
	struct rec_sys *r;
	char err[320];
	size_t off = strlen(hooks);

	*failed = false;
	if (!(o->layers & REC_LAYER_SYSCALL))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		*failed = true;
		fail("start the syscall layer", "out of memory", NULL);
		return NULL;
	}
	r->l = it_syscall_open(&o->sys, sink, r, err, sizeof(err));
	if (!r->l) {
		/* asked for: an error; by default: recorded without it, and said */
		*failed = !o->layers_default;
		fprintf(stderr, "iotrail record: %s%s\n", o->layers_default ?
			"note: recording without the syscall layer: " : "", err);
		free(r);
		return NULL;
	}
	snprintf(hooks + off, len - off, "%ssyscall=%s", off ? ";" : "", it_syscall_hook_name(r->l));
	return r;
}

int rec_sys_ring(struct rec_sys *r, struct ring_buffer **rb)
{
	if (*rb)
		return it_syscall_share_ring(r->l, *rb);
	*rb = it_syscall_ring(r->l);
	return 0;
}

void rec_sys_set_writer(struct rec_sys *r, struct it_writer *w)
{
	if (r)
		r->w = w;
}

void rec_sys_adopt(struct rec_sys *r, bool on)
{
	if (r)
		it_syscall_adopt(r->l, on);
}

void rec_sys_detach(struct rec_sys *r)
{
	if (r)
		it_syscall_detach(r->l);
}

void rec_sys_finish(struct rec_sys *r, struct it_writer *w)
{
	int n = libbpf_num_possible_cpus();
	uint64_t *per_cpu;

	if (!r || n <= 0 || !(per_cpu = calloc(n, sizeof(*per_cpu))))
		return;
	r->dropped = it_syscall_drops(r->l, per_cpu, n);
	it_writer_set_drops(w, 0, IT_LAYER_SYSCALL, per_cpu, n);
	free(per_cpu);
}

int rec_sys_error(const struct rec_sys *r)
{
	return r ? r->err : 0;
}

void rec_sys_summary(const struct rec_sys *r, char *out, size_t len)
{
	if (!r) {
		*out = 0;
		return;
	}
	snprintf(out, len, ", %llu system calls (%llu lost)", (unsigned long long)r->calls,
		 (unsigned long long)r->dropped);
}

void rec_sys_free(struct rec_sys *r)
{
	if (!r)
		return;
	it_syscall_close(r->l);
	free(r);
}
