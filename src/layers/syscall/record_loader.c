// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Loader of the syscall layer (src/layers/syscall/syscall.bpf.c): filters go into
 * read-only data before load, the pid set into a map after load; then one
 * hook pair is attached (see enum it_sys_hook) and the ring buffer is
 * drained into the caller's sink.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "iotrail/event.h"
#include "iotrail/syscall_nr.h"
#include "iotrail/task_counts.h" /* before the skeleton: its .bss has struct it_count_slot */
#include "syscall.skel.h"
#include "syscall_compat.skel.h"
#include "evring.h"
#include "hooks.h"
#include "layers/syscall/record_loader.h"

/*
 * Kernels without the bpf_rdonly_cast kfunc (before 6.2; Debian 12's 6.1)
 * load the same programs built with CO-RE probe reads where the others
 * load through typed pointers (syscall.bpf.c, IT_SYS_COMPAT). Both
 * skeletons come from one source, so their maps, programs and data are
 * laid out alike: the compat one is opened, then used as the other type
 * (load, attach, destroy and every field are the same calls on both).
 */
#define SAME_LAYOUT(m) \
	_Static_assert(offsetof(struct syscall_bpf, m) == offsetof(struct syscall_compat_bpf, m) && \
		       sizeof(((struct syscall_bpf *)0)->m) == sizeof(((struct syscall_compat_bpf *)0)->m), \
		       "the compat skeleton's " #m " differs")
SAME_LAYOUT(maps);
SAME_LAYOUT(progs);
SAME_LAYOUT(links);
SAME_LAYOUT(rodata);
SAME_LAYOUT(bss);
_Static_assert(sizeof(struct syscall_bpf) == sizeof(struct syscall_compat_bpf), "skeleton sizes");
_Static_assert(sizeof(*((struct syscall_bpf *)0)->rodata) ==
	       sizeof(*((struct syscall_compat_bpf *)0)->rodata), "rodata layouts");
_Static_assert(sizeof(*((struct syscall_bpf *)0)->bss) ==
	       sizeof(*((struct syscall_compat_bpf *)0)->bss), "bss layouts");

static bool have_kfunc(const char *name);

/* Whether this kernel needs the compat programs; asked once.
 * IOTRAIL_SYSCALL_COMPAT=1 loads them anyway: the host tests run them on
 * a kernel that would not, and bench/ measures what they cost. */
static bool syscall_compat(void)
{
	static int known = -1;
	const char *force = getenv("IOTRAIL_SYSCALL_COMPAT");

	if (known < 0)
		known = (force && !strcmp(force, "1")) || !have_kfunc("bpf_rdonly_cast");
	return known;
}

static void *syscall_skel_open(void)
{
	return syscall_compat() ? (void *)syscall_compat_bpf__open() : (void *)syscall_bpf__open();
}

/* IT_SKEL_OPS's other four, on either skeleton */
static int syscall_skel_load(void *s) { return syscall_bpf__load(s); }
static void syscall_skel_destroy(void *s) { syscall_bpf__destroy(s); }
static struct bpf_object *syscall_skel_object(void *s) { return ((struct syscall_bpf *)s)->obj; }
static int syscall_skel_attach(void *s) { return syscall_bpf__attach(s); }
static const struct it_skel_ops syscall_skel_ops = { syscall_skel_open, syscall_skel_load,
						     syscall_skel_destroy, syscall_skel_object,
						     syscall_skel_attach };

struct it_syscall_layer {
	struct syscall_bpf *skel;
	struct bpf_link **links;   /* the tracepoint hook: two per call */
	size_t nlinks;
	enum it_hook_kind hook;    /* of sys_enter/sys_exit */
	bool scoped;               /* the _scoped sys_enter: threads in scope marked up front */
	char hooks_desc[128];
	it_syscall_sink sink;
	void *ctx;
	unsigned int ncpu;         /* rings: one per possible CPU */
	size_t ring_bytes;         /* each */
	struct it_ev_bufs bufs;    /* the fixed-size records' buffers (syscall.bpf.c) */
};

/* __NR_x + 1 per call, 0 where this architecture has no such call. */
#define NR_PLUS1_(ID, ...) [IT_SYS_##ID] = IT_NR_##ID + 1,
static const int nr_plus1[IT_SYS_MAX] = {
	IT_SYS_CALLS(NR_PLUS1_)
};

static const char *const call_names[IT_SYS_MAX] = {
#define NAME_(ID, V, nm, ...) [V] = #nm,
	IT_SYS_CALLS(NAME_)
	IT_SYS_URING_CALLS(NAME_)
#undef NAME_
};

static const char *const tp_names[IT_SYS_MAX] = {
#define TP_(ID, V, nm, tp, ...) [V] = #tp,
	IT_SYS_CALLS(TP_)
#undef TP_
};

#define GROUP_(ID, V, nm, tp, grp, ...) [V] = IT_SG_##grp,
static const unsigned call_group[IT_SYS_MAX] = {
	IT_SYS_CALLS(GROUP_)
#undef GROUP_
#define UGROUP_(ID, V, nm) [V] = IT_SG_URING,
	IT_SYS_URING_CALLS(UGROUP_)
#undef UGROUP_
};

static const struct { const char *name; unsigned mask; } groups[] = {
	{ "data", IT_SG_DATA }, { "sync", IT_SG_SYNC }, { "open", IT_SG_OPEN },
	{ "meta", IT_SG_META }, { "dir", IT_SG_DIR }, { "xattr", IT_SG_XATTR },
	{ "aio", IT_SG_AIO }, { "uring", IT_SG_URING }, { "all", ~0u },
};

const char *it_syscall_name(unsigned call)
{
	return call < IT_SYS_MAX ? call_names[call] : NULL;
}

int it_syscall_parse_calls(const char *list, uint8_t calls[IT_SYS_MAX], char *err, size_t errlen)
{
	char *copy = strdup(list), *save = NULL;
	int rc = 0;

	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(calls, 0, IT_SYS_MAX);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool found = false;

		for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
			if (strcmp(t, groups[g].name))
				continue;
			for (unsigned c = 1; c < IT_SYS_MAX; c++)
				if (call_group[c] & groups[g].mask)
					calls[c] = 1;
			found = true;
		}
		for (unsigned c = 1; c < IT_SYS_MAX && !found; c++)
			if (call_names[c] && !strcmp(t, call_names[c]))
				calls[c] = found = true;
		if (!found) {
			snprintf(err, errlen, "unknown call '%s'; use call names such as pread64 or "
				 "fsync, or the groups data, sync, open, meta, dir, xattr, aio, uring, all", t);
			rc = -1;
			break;
		}
	}
	free(copy);
	return rc;
}

static bool have_kfunc(const char *name)
{
	const struct btf *vmlinux = it_vmlinux_btf();

	return vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;
}

/*
 * tp_btf first: measured here (README, bench/syscall_cost), a traced pread
 * costs ~150-200 ns less with tp_btf/sys_enter+sys_exit than with
 * syscalls:sys_enter_pread64 (perf_syscall_enter builds a perf record
 * before it runs the program), and so does a filtered-out one. The price:
 * every other system call on the machine runs the program's first test
 * (~120 ns here with the hook, ~50 ns with per-call tracepoints, where
 * only the syscall slow path is paid). Where storage calls are a small
 * share of all calls (under ~20% here), --syscall-hook tracepoint is
 * cheaper. The engine's order (tp_btf, raw_tp, tracepoint) is that one;
 * a verifier that refuses tp_btf on sys_enter (seen: Debian's 6.1) moves
 * the pair to raw_tp.
 */
#define SYS_HOOK(x) { "sys_" #x, "raw_syscalls", NULL, false, { [IT_HOOK_TP_BTF] = "sys_" #x "_btf", \
	[IT_HOOK_RAW_TP] = "sys_" #x "_raw", [IT_HOOK_TRACEPOINT] = "sys_" #x "_tp" } }
enum { H_ENTER, H_EXIT, H_URING_SUBMIT, H_URING_COMPLETE, H_FORK, H_EXIT_TASK, H_EXIT_TITLE,
       H_URING_PUNT };
struct it_hook_def it_syscall_hooks[] = {
	[H_ENTER] = SYS_HOOK(enter),
	[H_EXIT] = SYS_HOOK(exit),
	[H_URING_SUBMIT] = { "io_uring_submit_req", "io_uring", NULL, true,
			     { [IT_HOOK_TP_BTF] = "uring_submit" } },
	[H_URING_COMPLETE] = { "io_uring_complete", "io_uring", NULL, true,
			       { [IT_HOOK_TP_BTF] = "uring_complete" } },
	/* the scope follows forks and forgets exited processes (scope.bpf.h) */
	[H_FORK] = { "sched_process_fork", "sched", NULL, true, { [IT_HOOK_RAW_TP] = "scope_fork" } },
	[H_EXIT_TASK] = { "sched_process_exit", "sched", NULL, true,
			  { [IT_HOOK_RAW_TP] = "scope_exit" } },
	/* a process's title at its exit (record.c: a short-lived one's last title) */
	[H_EXIT_TITLE] = { "sched_process_exit", "sched", NULL, true,
			   { [IT_HOOK_RAW_TP] = "title_at_exit" } },
	/* requests handed to io-wq: with --filter/--sample, counted apart
	 * (syscall.bpf.c) */
	[H_URING_PUNT] = { "io_uring_queue_async_work", "io_uring", NULL, true,
			   { [IT_HOOK_TP_BTF] = "uring_punt" } },
};
_Static_assert(sizeof(it_syscall_hooks) / sizeof(it_syscall_hooks[0]) == IT_SYSCALL_NHOOKS, "IT_SYSCALL_NHOOKS");

const char *it_syscall_hooks_desc(const struct it_syscall_layer *l)
{
	return l->hooks_desc;
}

/* On older kernels (Debian's 6.1) the submission's tracepoint was
 * io_uring_submit_sqe, with the request first as now; and io_uring_complete
 * took (ctx, req, user_data, res, cflags, extra1, extra2), not (ring, req,
 * cqe). Both read from the kernel's BTF, once. */
static bool submit_sqe_kernel(void)
{
	static int known = -1;

	if (known < 0)
		known = it_btf_trace_arity("io_uring_submit_req") < 0 &&
			it_btf_trace_arity("io_uring_submit_sqe") >= 1;
	return known;
}

static bool uring_complete_old(void)
{
	static int known = -1;

	if (known < 0)
		known = it_btf_trace_arity("io_uring_complete") == 7;
	return known;
}

static void uring_hook_names(struct it_hook_def *hooks)
{
	(void)uring_complete_old(); /* asked now, while the BTF is parsed */
	if (submit_sqe_kernel()) {
		hooks[H_URING_SUBMIT].name = "io_uring_submit_sqe";
		hooks[H_URING_SUBMIT].prog[IT_HOOK_TP_BTF] = "uring_submit_sqe";
	}
}

int it_syscall_requires(char *why, size_t whylen)
{
	if (!it_tracepoint_in_tracefs("raw_syscalls", "sys_enter")) {
		snprintf(why, whylen, "no syscall tracepoints (CONFIG_FTRACE_SYSCALLS=y is needed, "
			 "and tracefs at /sys/kernel/tracing)");
		return -1;
	}
	if (!it_vmlinux_btf()) {
		snprintf(why, whylen, "no kernel BTF (/sys/kernel/btf/vmlinux): the CO-RE programs "
			 "cannot load; a kernel with CONFIG_DEBUG_INFO_BTF=y is needed");
		return -1;
	}
	uring_hook_names(it_syscall_hooks);
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct it_syscall_layer *l = ctx;

	return l->sink(l->ctx, data, size);
}

/* A --path prefix: its directory (dev, inode) for fd-based calls and its
 * canonical string for absolute names. */
static int set_prefix(struct syscall_bpf *s, unsigned k, const char *path, char *err,
		      size_t errlen)
{
	char real[PATH_MAX];
	struct stat st;
	size_t n;

	if (!realpath(path, real) || stat(real, &st)) {
		snprintf(err, errlen, "failed to use path filter '%s': %s; give an existing file "
			 "or directory", path, strerror(errno));
		return -1;
	}
	n = strlen(real);
	if (n >= IT_SYS_PREFIX_LEN) {
		snprintf(err, errlen, "failed to use path filter '%s': longer than %d bytes; "
			 "give a shorter path", path, IT_SYS_PREFIX_LEN - 1);
		return -1;
	}
	memcpy((char *)s->rodata->prefix_str[k], real, n + 1);
	s->rodata->prefix_len[k] = n;
	s->rodata->prefix_dev[k] = IT_MKDEV(major(st.st_dev), minor(st.st_dev));
	s->rodata->prefix_ino[k] = st.st_ino;
	return 0;
}

static int configure(struct it_syscall_layer *l, const struct it_syscall_opts *o, char *err,
		     size_t errlen)
{
	struct syscall_bpf *s = l->skel;
	bool any = false, uring = false;

	for (unsigned c = 1; c < IT_SYS_MAX; c++)
		any |= o->calls[c];
	for (unsigned c = 1; c < IT_SYS_MAX; c++) {
		bool on = any ? o->calls[c] : call_names[c] != NULL;

		if (on && call_group[c] == IT_SG_URING)
			uring = true;
		else if (on && nr_plus1[c] && nr_plus1[c] - 1 < IT_SYS_NR_MAX)
			s->rodata->call_of_nr[nr_plus1[c] - 1] = c;
	}
	s->rodata->uring_on = uring; /* and hooked: see configure_attempt */
	s->rodata->self_tgid = getpid();
	s->rodata->filter_tids = o->ntids > 0;
	IT_SCOPE_RODATA(s->rodata, o->scope);
	it_scope_size_maps(o->scope, s->maps.scope_pid_bits, s->maps.scope_comm_bits);
	if (o->marks && o->call_counts) { /* the block object's: one set of marks */
		int e = bpf_map__reuse_fd(s->maps.scope_io_marks, bpf_map__fd(o->marks));

		if (!e)
			e = bpf_map__reuse_fd(s->maps.scope_call_counts, bpf_map__fd(o->call_counts));
		if (e) {
			snprintf(err, errlen, "failed to share the block layer's I/O decisions with "
				 "the syscall layer: %s", strerror(-e));
			return -1;
		}
		s->rodata->scope_mark_calls = 1;
	}
#ifdef __NR_io_uring_enter
	s->rodata->uring_enter_nr = __NR_io_uring_enter;
#endif
	if (!s->rodata->scope_mark_calls) /* only kept requests in flight go in */
		bpf_map__set_max_entries(s->maps.sys_uring_kept, 1);
	if (!o->ntids)
		bpf_map__set_max_entries(s->maps.sys_tid_bits, 1);
	if (o->npaths > IT_SYS_MAX_PREFIX) {
		snprintf(err, errlen, "failed to use %zu path filters: at most %d; merge them into "
			 "a common directory", o->npaths, IT_SYS_MAX_PREFIX);
		return -1;
	}
	for (size_t k = 0; k < o->npaths; k++)
		if (set_prefix(s, k, o->paths[k], err, errlen))
			return -1;
	s->rodata->nprefix = o->npaths;
	/* an event buffer and a ring per CPU (made at it_syscall_join_ring),
	 * the total divided (hooks.h: it_ev_bufs_size); the ring an eighth:
	 * it takes the rare records (paths, names, tasks, titles) and what
	 * finds the buffer held or full */
	l->ncpu = (unsigned int)libbpf_num_possible_cpus();
	it_ev_bufs_size(&l->bufs, s->maps.sys_bufs, o->ringbuf_bytes ? o->ringbuf_bytes : 4 << 20,
			l->ncpu, 8, &l->ring_bytes);
	s->rodata->ev_buf_mask = l->bufs.data_bytes - 1;
	s->rodata->ev_buf_wakeup = l->bufs.data_bytes / IT_WAKE_SHARE;
	bpf_map__set_max_entries(s->maps.sys_events, l->ncpu);
	/* wake the consumer when half is used; it polls anyway (see the BPF side) */
	s->rodata->wakeup_bytes = l->ring_bytes / IT_WAKE_SHARE;
	return 0;
}

static int attach_tracepoints(struct it_syscall_layer *l, char *err, size_t errlen)
{
	struct syscall_bpf *s = l->skel;

	l->links = calloc(2 * IT_SYS_MAX, sizeof(*l->links));
	if (!l->links)
		return -ENOMEM;
	for (unsigned c = 1; c < IT_SYS_MAX; c++) {
		char ev[96];
		int nr = nr_plus1[c] - 1;

		if (!tp_names[c] || nr < 0 || nr >= IT_SYS_NR_MAX || s->rodata->call_of_nr[nr] != c)
			continue;
		for (int x = 0; x < 2; x++) {
			struct bpf_program *p = x ? s->progs.sys_exit_tp
						  : l->scoped ? s->progs.sys_enter_tp_scoped
							      : s->progs.sys_enter_tp;
			struct bpf_link *k;

			snprintf(ev, sizeof(ev), "sys_%s_%s", x ? "exit" : "enter", tp_names[c]);
			k = bpf_program__attach_tracepoint(p, "syscalls", ev);
			if (!k) {
				snprintf(err, errlen, "failed to attach syscalls:%s: %s; try --syscall-hook tp_btf",
					 ev, strerror(errno));
				return -1;
			}
			l->links[l->nlinks++] = k;
		}
	}
	/* io_uring_enter's return decides the io_uring requests it submitted
	 * (syscall.bpf.c: uring_decide), traced as a call or not */
	int ue = s->rodata->uring_enter_nr;

	if (s->rodata->uring_on && s->rodata->scope_mark_calls && ue >= 0 &&
	    ue < IT_SYS_NR_MAX && !s->rodata->call_of_nr[ue]) {
		struct bpf_link *k = bpf_program__attach_tracepoint(s->progs.sys_exit_tp, "syscalls",
								    "sys_exit_io_uring_enter");

		if (!k) {
			snprintf(err, errlen, "failed to attach syscalls:sys_exit_io_uring_enter: %s; "
				 "try --syscall-hook tp_btf", strerror(errno));
			return -1;
		}
		l->links[l->nlinks++] = k;
	}
	return 0;
}

static int attach(struct it_syscall_layer *l, char *err, size_t errlen)
{
	struct syscall_bpf *s = l->skel;

	if (l->hook == IT_HOOK_TRACEPOINT) {
		if (attach_tracepoints(l, err, errlen))
			return -1;
		/* the rest auto-attaches; the generic programs have no target */
		bpf_program__set_autoattach(s->progs.sys_enter_tp, false);
		bpf_program__set_autoattach(s->progs.sys_enter_tp_scoped, false);
		bpf_program__set_autoattach(s->progs.sys_exit_tp, false);
	}
	if (syscall_bpf__attach(s)) {
		snprintf(err, errlen, "failed to attach the syscall probes: %s; run "
			 "'iotrail probe' to see what this kernel offers", strerror(errno));
		return -1;
	}
	return 0;
}

struct load_ctx {
	struct it_syscall_layer *l;
	const struct it_syscall_opts *o;
	char *err;
	size_t errlen;
	bool no_scoped; /* a load with the scoped programs failed: without them */
};

/*
 * Under a pid filter (-p, --tid, a command's processes) sys_enter is the
 * _scoped program (of each hook kind), whose first test reads only the
 * task (syscall.bpf.c: NO_SLOT): ~90 ns less per call of a thread
 * filtered out here, where every page a program touches at sys_enter
 * costs a TLB refill. It needs every thread in scope marked with its
 * storage: sys_mark_fork for those forked, sys_mark_tasks (run by
 * mark_tasks, at attach) for those there.
 */
static void choose_enter(struct syscall_bpf *s, enum it_hook_kind enter, bool scoped)
{
	bpf_program__set_autoload(s->progs.sys_enter_btf, enter == IT_HOOK_TP_BTF && !scoped);
	bpf_program__set_autoload(s->progs.sys_enter_btf_scoped, enter == IT_HOOK_TP_BTF && scoped);
	bpf_program__set_autoload(s->progs.sys_enter_raw, enter == IT_HOOK_RAW_TP && !scoped);
	bpf_program__set_autoload(s->progs.sys_enter_raw_scoped, enter == IT_HOOK_RAW_TP && scoped);
	bpf_program__set_autoload(s->progs.sys_enter_tp, enter == IT_HOOK_TRACEPOINT && !scoped);
	bpf_program__set_autoload(s->progs.sys_enter_tp_scoped, enter == IT_HOOK_TRACEPOINT && scoped);
	bpf_program__set_autoload(s->progs.sys_mark_tasks, scoped);
	bpf_program__set_autoload(s->progs.sys_mark_fork, scoped);
	bpf_program__set_autoattach(s->progs.sys_mark_tasks, false); /* run, not attached */
}

static int mark_tasks(struct it_syscall_layer *l, bool verbose, char *err, size_t errlen)
{
	struct bpf_link *link = bpf_program__attach_iter(l->skel->progs.sys_mark_tasks, NULL);
	char buf[64];
	ssize_t n = -1;
	int fd = -1;

	if (link)
		fd = bpf_iter_create(bpf_link__fd(link));
	if (fd >= 0) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		close(fd);
	}
	if (n < 0)
		snprintf(err, errlen, "failed to mark the threads in scope for the syscall layer: %s",
			 strerror(errno));
	bpf_link__destroy(link);
	if (!n && verbose)
		fprintf(stderr, "iotrail record: syscall: %u threads in scope marked at the start "
			"(given their storage: a thread without is out of scope)\n",
			l->skel->bss->sys_marked_at_start);
	return n < 0 ? -1 : 0;
}

/* The hook engine's configure step (each attempt): filters into read-only
 * data; io_uring and fork tracking only where they are wanted and hooked. */
static int configure_attempt(void *skel, enum it_hook_kind *kinds, void *ctx)
{
	struct load_ctx *c = ctx;
	struct it_syscall_layer *l = c->l;
	struct syscall_bpf *s = skel;

	l->skel = s;
	if (configure(l, c->o, c->err, c->errlen))
		return -EINVAL;
	if (kinds[H_URING_SUBMIT] == IT_HOOK_NONE || kinds[H_URING_COMPLETE] == IT_HOOK_NONE)
		s->rodata->uring_on = 0;
	/* the submission's program of the other tracepoint name stays out
	 * (the row names one: uring_hook_names) */
	bpf_program__set_autoload(submit_sqe_kernel() ? s->progs.uring_submit : s->progs.uring_submit_sqe,
				  false);
	s->rodata->uring_complete_old = uring_complete_old();
	if (!s->rodata->uring_on)
		kinds[H_URING_SUBMIT] = kinds[H_URING_COMPLETE] = IT_HOOK_NONE;
	if (!s->rodata->uring_on)
		kinds[H_URING_PUNT] = IT_HOOK_NONE;
	if (!s->rodata->scope_pids && !s->rodata->scope_comm_len)
		kinds[H_FORK] = kinds[H_EXIT_TASK] = IT_HOOK_NONE;
	l->scoped = !c->no_scoped && (s->rodata->scope_pids || s->rodata->filter_tids);
	choose_enter(s, kinds[H_ENTER], l->scoped);
	return 0;
}

/* Opens, configures and loads the skeleton with the best hooks the kernel
 * takes (o->hook: that kind for sys_enter/sys_exit), under the names this
 * kernel gives them (uring_hook_names). */
static int load(struct it_syscall_layer *l, const struct it_syscall_opts *o, char *err,
		size_t errlen)
{
	struct load_ctx c = { l, o, err, errlen, false };
	struct it_hook_load hl = {
		.layer = "syscall", .hooks = it_syscall_hooks, .nhooks = IT_SYSCALL_NHOOKS,
		.skel = &syscall_skel_ops, .configure = configure_attempt, .ctx = &c,
		.force = o->hook, .verbose = o->verbose,
	};
	enum it_hook_kind kinds[IT_SYSCALL_NHOOKS];
	char why[256];
	int e;

	uring_hook_names(it_syscall_hooks);
	*err = 0;
	l->skel = it_hooks_load(&hl, kinds, l->hooks_desc, sizeof(l->hooks_desc), why,
				sizeof(why), &e);
	if (!l->skel && !*err && l->scoped) { /* a kernel without task iterators: the full test */
		c.no_scoped = true;
		l->skel = it_hooks_load(&hl, kinds, l->hooks_desc, sizeof(l->hooks_desc), why,
					sizeof(why), &e);
	}
	if (l->skel) {
		l->hook = kinds[H_ENTER];
		if (o->verbose && syscall_compat())
			fprintf(stderr, "iotrail record: syscall: the programs for kernels without "
				"bpf_rdonly_cast (probe reads)\n");
		if (o->verbose && c.no_scoped)
			fprintf(stderr, "iotrail record: syscall: the threads in scope could not be "
				"marked up front; each call tests the pid filter\n");
		return 0;
	}
	if (!*err) /* not a filter of ours: the kernel's or the hooks' verdict */
		snprintf(err, errlen, "failed to load the syscall probes: %s; run 'iotrail probe', "
			 "or try another --syscall-hook", why);
	return -1;
}

struct it_syscall_layer *it_syscall_open(const struct it_syscall_opts *o, it_syscall_sink sink,
					 void *ctx, char *err, size_t errlen)
{
	struct it_syscall_layer *l = calloc(1, sizeof(*l));

	if (!l) {
		snprintf(err, errlen, "failed to allocate the syscall layer: out of memory");
		return NULL;
	}
	l->sink = sink;
	l->ctx = ctx;
	if (load(l, o, err, errlen))
		goto fail;
	for (size_t i = 0; i < o->ntids; i++)
		if (it_scope_set_bit(l->skel->maps.sys_tid_bits, o->tids[i]))
			goto fail_pid;
	/* the rings are made and mapped once, at it_syscall_join_ring, after
	 * every layer's load (the start-up peak) */
	return l;
fail_pid:
	snprintf(err, errlen, "failed to add a thread to the syscall filter: %s", strerror(errno));
fail:
	it_syscall_close(l);
	return NULL;
}

int it_syscall_attach(struct it_syscall_layer *l, const struct it_syscall_opts *o, char *err,
		      size_t errlen)
{
	char why[160];

	if (attach(l, err, errlen))
		return -1;
	/* after attach: the fork hook adds what is forked from now on */
	if (it_scope_seed(o->scope, l->skel->maps.scope_pid_bits, l->skel->maps.scope_comm_bits,
			  l->skel->maps.scope_cgroup_map, why, sizeof(why))) {
		snprintf(err, errlen, "failed to set up the syscall layer's process filter: %s", why);
		return -1;
	}
	/* after the seed: the threads in scope then, and the fork hook the rest */
	return l->scoped ? mark_tasks(l, o->verbose, err, errlen) : 0;
}

/*
 * A record's time, the key of the merge of the CPUs' rings: the time it
 * was written at, or one before it, and after that of every record it
 * depends on (a call's thread and file path before the call, a name
 * argument before its call, an io_uring submission before its
 * completion). 0 (first) for what is too short to tell.
 */
static const size_t time_at[] = {
	[IT_SREC_CALL] = offsetof(struct it_sys_event, ts_exit),
	[IT_SREC_URING_SUBMIT] = offsetof(struct it_sys_uring_submit, call.ts_enter),
	[IT_SREC_URING_DONE] = offsetof(struct it_sys_uring_done, ts),
	[IT_SREC_PATH] = offsetof(struct it_sys_path, tag_ts),
	[IT_SREC_NAME] = offsetof(struct it_sys_name, ts_enter),
	[IT_SREC_TASK] = offsetof(struct it_sys_task, ts),
	[IT_SREC_TITLE] = offsetof(struct it_sys_title, ts),
};

static uint64_t record_time(const void *data, size_t size)
{
	const unsigned char *p = data;
	uint64_t ts = 0;
	uint16_t rec;

	if (size < sizeof(rec))
		return 0;
	memcpy(&rec, p, sizeof(rec));
	/* every kind's time is past its first 8 bytes: 0 is "no time" */
	if (rec < sizeof(time_at) / sizeof(time_at[0]) && time_at[rec] &&
	    size >= time_at[rec] + sizeof(ts))
		memcpy(&ts, p + time_at[rec], sizeof(ts));
	return ts;
}

int it_syscall_join_ring(struct it_syscall_layer *l, struct it_evring **rings)
{
	int err = it_evring_make(rings, bpf_map__fd(l->skel->maps.sys_events), l->ncpu,
				 l->ring_bytes, l->ncpu, on_record, record_time, l);

	if (!err)
		err = it_ev_bufs_map(&l->bufs, *rings, l->ncpu);
	if (err && *rings) {
		it_evring_free(*rings);
		*rings = NULL;
	}
	return err;
}

uint64_t it_syscall_ringed(const struct it_syscall_layer *l)
{
	return it_ev_bufs_ringed(&l->bufs);
}

void it_syscall_detach(struct it_syscall_layer *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nlinks; i++)
		bpf_link__destroy(l->links[i]);
	l->nlinks = 0;
	syscall_bpf__detach(l->skel);
}

uint64_t it_syscall_drops(const struct it_syscall_layer *l, uint64_t *per_cpu, uint32_t ncpu)
{
	return it_percpu_counter(l->skel->maps.sys_drops, per_cpu, ncpu);
}

uint64_t it_syscall_side_drops(const struct it_syscall_layer *l)
{
	return it_percpu_counter(l->skel->maps.sys_side_drops, NULL, 0);
}

void it_syscall_close(struct it_syscall_layer *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nlinks; i++)
		bpf_link__destroy(l->links[i]);
	free(l->links);
	it_ev_bufs_unmap(&l->bufs);
	syscall_bpf__destroy(l->skel);
	free(l);
}
