// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Hook probing: every "is it available?" answer comes from loading a
 * program that returns 0 against the hook (the kernel's own verdict), or
 * from tracefs/BTF for what needs no program. Kernel versions are never
 * checked. A BTF-typed program is loaded only, not attached: the kernel
 * resolves its hook at load (a tracepoint's btf_trace_* typedef, which is
 * compiled with the tracepoint; a function's BTF and symbol), and what only
 * an attach could refuse is known without one (ftrace's list of traceable
 * functions; whether this kernel has BPF trampolines at all, tried once on
 * vfs_read). Attaching and detaching is what costs: text patching and RCU
 * grace periods, ~0.2 s each in a TCG guest, on every hook of every layer
 * before recording started.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "iotrail/event.h"
#include "evring.h"
#include "hooks.h"

static const char *const kind_names[] = {
	[IT_HOOK_NONE] = "none",       [IT_HOOK_TP_BTF] = "tp_btf",
	[IT_HOOK_RAW_TP] = "raw_tp",   [IT_HOOK_TRACEPOINT] = "tracepoint",
	[IT_HOOK_FENTRY] = "fentry",   [IT_HOOK_KPROBE] = "kprobe",
};

const char *it_hook_kind_name(enum it_hook_kind kind)
{
	return kind <= IT_HOOK_KPROBE ? kind_names[kind] : "?";
}

enum it_hook_kind it_hook_kind_parse(const char *name)
{
	for (int k = IT_HOOK_TP_BTF; k <= IT_HOOK_KPROBE; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return IT_HOOK_NONE;
}

/* r0 = 0; exit */
static const struct bpf_insn ret0[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static void say(char *why, size_t len, const char *fmt, const char *a, int err)
{
	if (why && len)
		snprintf(why, len, fmt, a, strerror(err));
}

static struct btf *btf;
static int tried;

static struct btf *vmlinux_btf(void)
{
	if (!tried) {
		tried = 1;
		btf = btf__load_vmlinux_btf(); /* NULL without kernel BTF */
	}
	return btf;
}

const struct btf *it_vmlinux_btf(void)
{
	return vmlinux_btf();
}

int it_btf_trace_arity(const char *tp)
{
	const struct btf *btf = vmlinux_btf();
	const struct btf_type *t;
	char name[128];
	int id;

	if (!btf)
		return -ENOENT;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -ENOENT;
	/* typedef -> pointer -> func_proto (void *__data, arguments...) */
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	return t && btf_is_func_proto(t) ? (int)btf_vlen(t) - 1 : -EINVAL;
}

/* The parsed kernel BTF is some megabytes: freed once the probes are
 * loaded (parsed again if asked for after). */
void it_vmlinux_btf_release(void)
{
	if (btf) {
		btf__free(btf);
		/* its big blocks came from the heap once glibc raised its mmap
		 * threshold (it does when a mapped block is freed): hand the
		 * pages back, or they stay resident for the whole recording */
		malloc_trim(0);
	}
	btf = NULL;
	tried = 0;
}

/* glibc serves blocks over its mapping threshold by mmap, but raises the
 * threshold to the size of any mapped block freed: after our BTF copy is
 * freed, libbpf's copies in each load came from the heap and stayed
 * resident after free while the next layer's maps were created (the
 * start-up peak: 36.9-38.5 MB, 29.9 with this; bench/memory.sh). */
void it_probes_loading(void)
{
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

/* From here on a process's own big buffers, allocated and freed over and
 * over, stay in the heap (mapped afresh each time, every page would fault
 * again), about as glibc's raised threshold kept them before: raised to
 * the ~5.5 MB of a freed BTF copy, the heap trimmed beyond twice that. */
void it_probes_loaded(void)
{
	it_attach_targets_forget();
	it_vmlinux_btf_release();
	mallopt(M_MMAP_THRESHOLD, 8 << 20);
	mallopt(M_TRIM_THRESHOLD, 16 << 20);
}

/* The kernel BTF object of a module: its fd (for attach_btf_obj_fd) and the
 * id of type_name of the given kind in it. 0 or -errno. */
static int module_btf_type(const char *module, const char *type_name, int kind,
			   int *obj_fd, int *type_id)
{
	unsigned int id = 0;
	char name[64];
	int fd;

	if (!vmlinux_btf())
		return -ENOENT;
	while ((fd = it_module_btf_next(&id, name, sizeof(name))) >= 0) {
		struct btf *btf;
		int tid;

		if (strcmp(name, module)) {
			close(fd);
			continue;
		}
		btf = btf__load_from_kernel_by_id_split(id, vmlinux_btf());
		tid = btf ? it_btf_own_type(btf, type_name, kind) : -ENOENT;
		btf__free(btf);
		if (tid < 0) {
			close(fd);
			return -ENOENT;
		}
		*obj_fd = fd;
		*type_id = tid;
		return 0;
	}
	return -ENOENT;
}

/* Load a TRACING program of attach type `type` against BTF id `btf_id`
 * (in module BTF obj_fd when >= 0), and attach it if `attach`; 0 or
 * -errno. */
static int load_tracing(enum bpf_attach_type type, int btf_id, int obj_fd, bool attach,
			char *why, size_t len, const char *what)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
		    .attach_btf_id = btf_id);
	int fd, link, err;

	if (obj_fd >= 0)
		opts.attach_btf_obj_fd = obj_fd;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", ret0, 2, &opts);
	if (fd < 0) {
		err = errno;
		say(why, len, "%s: the kernel refused the program: %s", what, err);
		return -err;
	}
	if (!attach) {
		close(fd);
		return 0;
	}
	link = bpf_raw_tracepoint_open(NULL, fd);
	err = errno;
	close(fd);
	if (link < 0) {
		say(why, len, "%s: attach failed: %s", what, err);
		return -err;
	}
	close(link);
	return 0;
}

int it_probe_tp_btf(const char *tp, const char *module, char *why, size_t len)
{
	char type_name[128];
	int id, obj_fd = -1, err;

	if (!vmlinux_btf()) {
		say(why, len, "%s: no kernel BTF (/sys/kernel/btf/vmlinux): %s", "tp_btf", ENOENT);
		return -ENOENT;
	}
	if (module) {
		snprintf(type_name, sizeof(type_name), "btf_trace_%s", tp);
		err = module_btf_type(module, type_name, BTF_KIND_TYPEDEF, &obj_fd, &id);
		if (err) {
			say(why, len, "tp_btf: no %s in the module's BTF: %s", type_name, -err);
			return err;
		}
	} else {
		/* as libbpf_find_vmlinux_btf_id would, but on the BTF parsed once
		 * (it parses the kernel's BTF again on every call: ~20 ms) */
		snprintf(type_name, sizeof(type_name), "btf_trace_%s", tp);
		id = btf__find_by_name_kind(vmlinux_btf(), type_name, BTF_KIND_TYPEDEF);
		if (id < 0) {
			say(why, len, "tp_btf: no btf_trace_%s in the kernel BTF: %s", tp, -id);
			return id;
		}
	}
	err = load_tracing(BPF_TRACE_RAW_TP, id, obj_fd, false, why, len, "tp_btf");
	if (obj_fd >= 0)
		close(obj_fd);
	return err;
}

int it_probe_raw_tp(const char *tp, char *why, size_t len)
{
	int fd, link, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", ret0, 2, NULL);
	if (fd < 0) {
		err = errno;
		say(why, len, "%s: raw tracepoint programs refused: %s", "raw_tp", err);
		return -err;
	}
	link = bpf_raw_tracepoint_open(tp, fd);
	err = errno;
	close(fd);
	if (link < 0) {
		say(why, len, "raw_tp: cannot attach to %s: %s", tp, err);
		return -err;
	}
	close(link);
	return 0;
}

int it_probe_bpf_allowed(char *why, size_t len)
{
	int fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", ret0, 2, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	fd = -errno;
	if (fd == -EPERM || fd == -EACCES)
		snprintf(why, len, "%s; run as root (or with CAP_BPF and CAP_PERFMON)",
			 strerror(-fd));
	else if (fd == -ENOSYS)
		snprintf(why, len, "this kernel has no bpf() system call; use a kernel "
			 "built with CONFIG_BPF_SYSCALL=y");
	else
		snprintf(why, len, "%s", strerror(-fd));
	return fd;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

const char *it_tracefs_dir(void)
{
	static const char *dir;

	if (dir)
		return dir;
	if (is_dir("/sys/kernel/tracing/events"))
		return dir = "/sys/kernel/tracing";
	if (is_dir("/sys/kernel/debug/tracing/events"))
		return dir = "/sys/kernel/debug/tracing";
	/* not mounted yet: tracefs is mountable without debugfs since v4.1 */
	if (!mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) &&
	    is_dir("/sys/kernel/tracing/events"))
		return dir = "/sys/kernel/tracing";
	return NULL;
}

bool it_tracepoint_in_tracefs(const char *category, const char *name)
{
	const char *dir = it_tracefs_dir();
	char path[256];

	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, category, name);
	return !access(path, R_OK);
}

/* Module names use '_' where their file names may have '-' (nvme-tcp.ko
 * is module nvme_tcp). */
static bool same_module(const char *a, const char *b, size_t blen)
{
	for (size_t i = 0; i < blen; i++, a++)
		if (!*a || (*a == '-' ? '_' : *a) != (b[i] == '-' ? '_' : b[i]))
			return false;
	return !*a;
}

/* Whether modules.builtin of the running kernel names module. */
static bool module_builtin(const char *module)
{
	char path[300];
	struct utsname u;
	char line[512];
	bool found = false;
	FILE *f;

	if (uname(&u))
		return false;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.builtin", u.release);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *base = strrchr(line, '/'), *dot;

		base = base ? base + 1 : line;
		dot = strstr(base, ".ko");
		found = dot && same_module(module, base, (size_t)(dot - base));
	}
	fclose(f);
	return found;
}

/* A module loaded (or a built-in with parameters: one without has no
 * /sys/module entry). */
static bool module_present(const char *module)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", module);
	return is_dir(path);
}

bool it_module_loaded(const char *module)
{
	return module_present(module) || module_builtin(module);
}

static void module_missing(const char *module, struct it_hook_status *st)
{
	snprintf(st->why, sizeof(st->why), "module %s not loaded", module);
	snprintf(st->fix, sizeof(st->fix), "modprobe %s", module);
}

/* A tracepoint: tp_btf > raw_tp > tracepoint (module NULL for vmlinux). */
static void probe_tracepoint(const char *category, const char *name, const char *module,
			     struct it_hook_status *st)
{
	char why_btf[160] = "", why_raw[160] = "";

	memset(st, 0, sizeof(*st));
	if (module && !module_present(module)) {
		module_missing(module, st);
		return;
	}
	st->tp_btf = !it_probe_tp_btf(name, module, why_btf, sizeof(why_btf));
	st->raw_tp = !it_probe_raw_tp(name, why_raw, sizeof(why_raw));
	st->tracepoint = it_tracepoint_in_tracefs(category, name);
	if (st->tp_btf)
		st->best = IT_HOOK_TP_BTF;
	else if (st->raw_tp)
		st->best = IT_HOOK_RAW_TP;
	else if (st->tracepoint)
		st->best = IT_HOOK_TRACEPOINT;
	if (st->best == IT_HOOK_TP_BTF)
		return;
	if (st->best != IT_HOOK_NONE) {
		snprintf(st->why, sizeof(st->why), "%s", why_btf);
		return;
	}
	if (!it_tracefs_dir() || !st->tracepoint) {
		snprintf(st->why, sizeof(st->why), "no tracepoint %s:%s on this kernel",
			 category, name);
		snprintf(st->fix, sizeof(st->fix),
			 "a newer kernel, or one built with that subsystem");
		return;
	}
	snprintf(st->why, sizeof(st->why), "%s", why_raw);
	snprintf(st->fix, sizeof(st->fix), "run as root (CAP_BPF + CAP_PERFMON)");
}

/* ---- functions: fentry > kprobe ---- */

/* ftrace's list of traceable functions ("name\n" or "name [module]\n"
 * per function), read once; NULL when it cannot be read (some sandboxed
 * kernels). */
static const char *traceable_functions(void)
{
	static char *list;
	static bool tried;
	const char *dir;
	char path[256];
	size_t cap = 0;
	FILE *f;

	if (tried)
		return list;
	tried = true;
	dir = it_tracefs_dir();
	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/available_filter_functions", dir);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	/* the whole file: it holds no NUL */
	if (getdelim(&list, &cap, '\0', f) < 0) {
		free(list);
		list = NULL;
	}
	fclose(f);
	return list;
}

/* Is func in ftrace's list of traceable functions? -1 when the list cannot
 * be read, so the caller can tell "unknown". */
static int function_listed(const char *func)
{
	const char *list = traceable_functions(), *p;
	size_t n = strlen(func);

	if (!list)
		return -1;
	for (p = list; (p = strstr(p, func)); p += n)
		if ((p == list || p[-1] == '\n') && (p[n] == '\n' || p[n] == ' '))
			return 1;
	return 0;
}

int it_fentry_supported(char *why, size_t len)
{
	static int cached = 1; /* 1: not probed yet */
	static char reason[160];
	int id;

	if (cached == 1) {
		/* vfs_read: in every kernel's BTF and never inlined */
		id = vmlinux_btf() ? btf__find_by_name_kind(vmlinux_btf(), "vfs_read", BTF_KIND_FUNC)
				   : -ENOENT;
		if (id < 0) {
			cached = id;
			snprintf(reason, sizeof(reason), "fentry: no kernel BTF to attach to");
		} else {
			cached = load_tracing(BPF_TRACE_FENTRY, id, -1, true, reason,
					      sizeof(reason), "fentry");
		}
		if (cached == -ENOTSUP || cached == -EOPNOTSUPP || cached == -524)
			snprintf(reason, sizeof(reason),
				 "fentry: not supported by this kernel (no BPF trampolines)");
		else if (cached == -EPERM && geteuid() == 0)
			snprintf(reason, sizeof(reason),
				 "fentry: refused by this kernel even as root (BPF trampolines "
				 "disabled or blocked by a security policy)");
	}
	if (cached && why)
		snprintf(why, len, "%s", reason);
	return cached;
}

int it_kprobe_supported(char *why, size_t len)
{
	static int cached = 1;
	static char reason[160];

	if (cached == 1) {
		struct perf_event_attr attr = { .size = sizeof(attr) };
		FILE *f = fopen("/sys/bus/event_source/devices/kprobe/type", "r");
		int type = -1, fd;

		if (f) {
			if (fscanf(f, "%d", &type) != 1)
				type = -1;
			fclose(f);
		}
		if (type < 0) {
			cached = -ENOENT;
			snprintf(reason, sizeof(reason),
				 "kprobes: not supported by this kernel (CONFIG_KPROBES off?)");
		} else {
			attr.type = type;
			attr.config1 = (__u64)(uintptr_t)"vfs_read"; /* kprobe_func */
			fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
			cached = fd < 0 ? -errno : 0;
			if (fd >= 0)
				close(fd);
			else
				snprintf(reason, sizeof(reason), "kprobes: perf kprobe refused: %s",
					 strerror(-cached));
		}
	}
	if (cached && why)
		snprintf(why, len, "%s", reason);
	return cached;
}

/* fentry on one function: needs its BTF FUNC (vmlinux or module), and
 * ftrace must be able to patch it (listed as traceable; only when the list
 * cannot be read is a program attached to find out). */
static int probe_fentry_func(const char *func, const char *module, char *why, size_t len)
{
	int id, obj_fd = -1, err, listed;

	err = it_fentry_supported(why, len);
	if (err)
		return err;
	if (module) {
		err = module_btf_type(module, func, BTF_KIND_FUNC, &obj_fd, &id);
		if (err) {
			say(why, len, "fentry: %s is not in the module's BTF: %s", func, -err);
			return err;
		}
	} else {
		id = btf__find_by_name_kind(vmlinux_btf(), func, BTF_KIND_FUNC);
		if (id < 0) {
			say(why, len, "fentry: %s is not in the kernel BTF: %s", func, -id);
			return id;
		}
	}
	listed = function_listed(func);
	if (!listed) {
		say(why, len, "fentry: %s is not traceable here (not in ftrace's list): %s", func,
		    ENOENT);
		err = -ENOENT;
	} else {
		err = load_tracing(BPF_TRACE_FENTRY, id, obj_fd, listed < 0, why, len, "fentry");
	}
	if (obj_fd >= 0)
		close(obj_fd);
	return err;
}

/* A kernel function: fentry > kprobe (module NULL for vmlinux). */
static void probe_function(const char *func, const char *module, struct it_hook_status *st)
{
	char why_fentry[160] = "", why_kprobe[160] = "";
	int listed;

	memset(st, 0, sizeof(*st));
	if (module && !module_present(module)) {
		module_missing(module, st);
		return;
	}
	listed = function_listed(func);
	st->listed = listed == 1;
	if (listed == 0) {
		snprintf(st->why, sizeof(st->why),
			 "%s is not traceable here (inlined, renamed or notrace)", func);
		snprintf(st->fix, sizeof(st->fix), "use a neighbouring function");
		return;
	}
	st->fentry = !probe_fentry_func(func, module, why_fentry, sizeof(why_fentry));
	st->kprobe = !it_kprobe_supported(why_kprobe, sizeof(why_kprobe));
	st->best = st->fentry ? IT_HOOK_FENTRY : st->kprobe ? IT_HOOK_KPROBE : IT_HOOK_NONE;
	if (st->best == IT_HOOK_FENTRY)
		return;
	snprintf(st->why, sizeof(st->why), "%s", why_fentry);
	if (st->best == IT_HOOK_NONE) {
		snprintf(st->why, sizeof(st->why), "%.80s; %.70s", why_fentry, why_kprobe);
		snprintf(st->fix, sizeof(st->fix),
			 "a kernel with CONFIG_KPROBES=y or BPF trampolines (fentry)");
	}
}

/* ---- the hook engine ---- */

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

bool it_hook_at_return(const struct it_hook_def *h)
{
	return ends_with(h->prog[IT_HOOK_FENTRY], "_fexit") ||
	       ends_with(h->prog[IT_HOOK_KPROBE], "_kretprobe");
}

/* The module a hook is in, or NULL when the running kernel has it built
 * in: its tracepoint or function is in the kernel's own BTF (a built-in
 * has neither BTF of its own nor, without parameters, a /sys/module
 * entry: it read as "not loaded"), or modules.builtin names it. A module
 * returned is then only looked for in /sys/module. */
static const char *hook_module(const struct it_hook_def *h)
{
	char type_name[128];

	if (!h->module)
		return NULL;
	snprintf(type_name, sizeof(type_name), "%s%s", h->category ? "btf_trace_" : "", h->name);
	if (vmlinux_btf() &&
	    btf__find_by_name_kind(vmlinux_btf(), type_name,
				   h->category ? BTF_KIND_TYPEDEF : BTF_KIND_FUNC) >= 0)
		return NULL;
	return module_builtin(h->module) ? NULL : h->module;
}

void it_hook_probe(const struct it_hook_def *h, struct it_hook_status *st)
{
	const char *module = hook_module(h);

	if (h->category)
		probe_tracepoint(h->category, h->name, module, st);
	else
		probe_function(h->name, module, st);
}

/* Whether the layer has a program for h (a row without any is probed by
 * `iotrail probe` only). */
static bool has_program(const struct it_hook_def *h)
{
	for (int k = IT_HOOK_TP_BTF; k < IT_HOOK_KINDS; k++)
		if (h->prog[k])
			return true;
	return false;
}

/* One kind for one hook, checked for real; 0 or -errno with why. */
static int probe_kind_now(const struct it_hook_def *h, enum it_hook_kind k, char *why, size_t len)
{
	const char *module = hook_module(h);
	int listed;

	if (module && !module_present(module)) {
		snprintf(why, len, "module %s is not loaded", module);
		return -ENOENT;
	}
	switch (k) {
	case IT_HOOK_TP_BTF:
		return it_probe_tp_btf(h->name, module, why, len);
	case IT_HOOK_RAW_TP:
		return it_probe_raw_tp(h->name, why, len);
	case IT_HOOK_TRACEPOINT:
		if (it_tracepoint_in_tracefs(h->category, h->name))
			return 0;
		snprintf(why, len, "tracepoint: no %s:%s in tracefs", h->category, h->name);
		return -ENOENT;
	case IT_HOOK_FENTRY:
		return probe_fentry_func(h->name, module, why, len);
	case IT_HOOK_KPROBE:
		listed = function_listed(h->name);
		if (!listed) {
			snprintf(why, len, "kprobe: %s is not traceable here", h->name);
			return -ENOENT;
		}
		return it_kprobe_supported(why, len);
	default:
		return -EINVAL;
	}
}

/* Each answer is kept for the process: most need the kernel BTF, which is
 * freed before each object load (libbpf parses its own copy), and asking
 * again would parse it again, a second or more per layer in a TCG guest.
 * it_hooks_prefetch asks every layer's questions up front, on one parse. */
static struct probed {
	const struct it_hook_def *h;
	enum it_hook_kind k;
	int rc;
	char why[160];
} probed[256];
static size_t nprobed;

static int probe_kind(const struct it_hook_def *h, enum it_hook_kind k, char *why, size_t len)
{
	struct probed *p;

	for (size_t i = 0; i < nprobed; i++)
		if (probed[i].h == h && probed[i].k == k) {
			snprintf(why, len, "%s", probed[i].why);
			return probed[i].rc;
		}
	if (nprobed == sizeof(probed) / sizeof(probed[0]))
		return probe_kind_now(h, k, why, len);
	p = &probed[nprobed++];
	*p = (struct probed){ .h = h, .k = k };
	p->rc = probe_kind_now(h, k, p->why, sizeof(p->why));
	snprintf(why, len, "%s", p->why);
	return p->rc;
}

/* The first kind after `after` (IT_HOOK_NONE: from the start) that h has a
 * program for, the kernel takes, and force allows; IT_HOOK_NONE if none. */
static enum it_hook_kind next_kind(const struct it_hook_def *h, enum it_hook_kind after,
				   enum it_hook_kind force, char *why, size_t len)
{
	/* a forced kind holds for the hooks that have a program of that kind */
	if (force != IT_HOOK_NONE && !h->prog[force])
		force = IT_HOOK_NONE;
	for (int k = after + 1; k < IT_HOOK_KINDS; k++) {
		if (!h->prog[k] || (force != IT_HOOK_NONE && k != (int)force))
			continue;
		if (!probe_kind(h, k, why, len))
			return k;
	}
	return IT_HOOK_NONE;
}

/* The name of the program the kernel refused, caught from libbpf's log
 * while loading (libbpf unloads everything on failure, so the log is the
 * only place that says which one). Messages still go to the caller's
 * printer. */
static char refused_prog[128];
static libbpf_print_fn_t outer_print;

static int catch_refusal(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static const char marks[][32] = { "': BPF program load failed", "': failed to load" };
	char msg[512];
	va_list copy;

	va_copy(copy, ap);
	vsnprintf(msg, sizeof(msg), fmt, copy);
	va_end(copy);
	for (size_t i = 0; i < 2; i++) {
		const char *p = strstr(msg, "prog '"), *e = strstr(msg, marks[i]);

		if (p && e && e > p + 6 && (size_t)(e - p - 6) < sizeof(refused_prog)) {
			memcpy(refused_prog, p + 6, e - p - 6);
			refused_prog[e - p - 6] = 0;
		}
	}
	return outer_print ? outer_print(level, fmt, ap) : 0;
}

static void set_autoload(struct bpf_object *obj, const struct it_hook_def *h,
			 enum it_hook_kind chosen)
{
	for (int k = IT_HOOK_TP_BTF; k < IT_HOOK_KINDS; k++) {
		struct bpf_program *p = h->prog[k] ? bpf_object__find_program_by_name(obj, h->prog[k]) : NULL;

		if (p)
			bpf_program__set_autoload(p, k == (int)chosen);
	}
}

/* One attempt: open, autoload the chosen variants, configure, load. */
static void *try_load(const struct it_hook_load *l, enum it_hook_kind *kinds, bool *unwanted,
		      int *err)
{
	enum it_hook_kind asked[l->nhooks];
	void *skel;

	it_attach_targets_register(); /* libbpf's own lookups are the fallback */
	skel = l->skel->open();

	if (!skel) {
		*err = -errno;
		return NULL;
	}
	for (size_t i = 0; i < l->nhooks; i++)
		set_autoload(l->skel->object(skel), &l->hooks[i], kinds[i]);
	memcpy(asked, kinds, sizeof(asked));
	*err = l->configure ? l->configure(skel, kinds, l->ctx) : 0;
	for (size_t i = 0; i < l->nhooks; i++) {
		unwanted[i] = asked[i] != IT_HOOK_NONE && kinds[i] == IT_HOOK_NONE;
		if (unwanted[i])
			set_autoload(l->skel->object(skel), &l->hooks[i], IT_HOOK_NONE);
	}
	if (!*err) {
		/* libbpf parses the kernel BTF again for the load (CO-RE,
		 * tp_btf targets) and frees it after: ours goes first, so the
		 * process never holds both (tens of MB at start-up otherwise);
		 * a later question parses it again; the programs' targets are
		 * looked up on ours first */
		it_attach_targets_resolve(l->skel->object(skel));
		it_vmlinux_btf_release();
		refused_prog[0] = 0;
		outer_print = libbpf_set_print(catch_refusal);
		*err = l->skel->load(skel);
		libbpf_set_print(outer_print);
	}
	if (*err) {
		l->skel->destroy(skel);
		return NULL;
	}
	return skel;
}

/* After a refusal: the hook whose program was refused moves to its next
 * kind (an optional one without a next kind is left out). Without a name
 * from the log, every hook on the best kind in use moves. false when
 * nothing can move. */
static bool step_down(const struct it_hook_load *l, enum it_hook_kind *kinds)
{
	enum it_hook_kind best = IT_HOOK_KINDS;
	bool moved = false;
	char why[160];

	for (size_t i = 0; i < l->nhooks && refused_prog[0]; i++) {
		const struct it_hook_def *h = &l->hooks[i];

		if (kinds[i] == IT_HOOK_NONE || !h->prog[kinds[i]] || strcmp(h->prog[kinds[i]], refused_prog))
			continue;
		kinds[i] = next_kind(h, kinds[i], l->force, why, sizeof(why));
		return kinds[i] != IT_HOOK_NONE || h->optional;
	}
	if (refused_prog[0]) /* a program outside the hook table: nothing to choose */
		return false;
	for (size_t i = 0; i < l->nhooks; i++)
		if (kinds[i] != IT_HOOK_NONE && kinds[i] < best)
			best = kinds[i];
	for (size_t i = 0; i < l->nhooks; i++) {
		if (kinds[i] != best)
			continue;
		kinds[i] = next_kind(&l->hooks[i], kinds[i], l->force, why, sizeof(why));
		moved |= kinds[i] != IT_HOOK_NONE || l->hooks[i].optional;
	}
	return moved;
}

/* "layer=KIND" with KIND what most required hooks use, then the hooks
 * that differ from it where they could have had it, or have none
 * ("nvme=tp_btf,nvme_sq=none"); a hook the layer did not want this time
 * is not named. */
static void describe(const struct it_hook_load *l, const enum it_hook_kind *kinds,
		     const bool *unwanted, char *desc, size_t len)
{
	int votes[IT_HOOK_KINDS] = { 0 }, common = IT_HOOK_NONE;
	size_t off;

	for (size_t i = 0; i < l->nhooks; i++)
		votes[kinds[i]] += !l->hooks[i].optional && kinds[i] != IT_HOOK_NONE;
	for (int k = IT_HOOK_TP_BTF; k < IT_HOOK_KINDS; k++)
		if (votes[k] > votes[common])
			common = k;
	off = snprintf(desc, len, "%s=%s", l->layer, it_hook_kind_name(common));
	for (size_t i = 0; i < l->nhooks && off < len; i++) {
		if (has_program(&l->hooks[i]) && !unwanted[i] && kinds[i] != (enum it_hook_kind)common &&
		    (kinds[i] == IT_HOOK_NONE || l->hooks[i].prog[common]))
			off += snprintf(desc + off, len - off, ",%s=%s", l->hooks[i].name,
					it_hook_kind_name(kinds[i]));
	}
}

void it_hooks_prefetch(const struct it_hook_def *hooks, size_t nhooks, enum it_hook_kind force)
{
	char why[160];

	for (size_t i = 0; i < nhooks; i++)
		if (has_program(&hooks[i]))
			next_kind(&hooks[i], IT_HOOK_NONE, force, why, sizeof(why));
}

void *it_hooks_load(const struct it_hook_load *l, enum it_hook_kind *kinds, char *desc,
		    size_t dlen, char *why, size_t wlen, int *err)
{
	bool unwanted[l->nhooks], any = false;
	char w[160] = "";
	void *skel;

	*why = 0;
	for (size_t i = 0; i < l->nhooks; i++) {
		bool has_prog = has_program(&l->hooks[i]);

		kinds[i] = has_prog ? next_kind(&l->hooks[i], IT_HOOK_NONE, l->force, w, sizeof(w))
				    : IT_HOOK_NONE;
		if (kinds[i] == IT_HOOK_NONE && has_prog && !l->hooks[i].optional) {
			if (l->verbose || !*why)
				snprintf(why, wlen, "%s: %s", l->hooks[i].name, w);
			fprintf(stderr, "iotrail record: warning: %s is not traceable here (%s); "
				"its events are left out\n", l->hooks[i].name, w);
		} else if (kinds[i] == IT_HOOK_NONE && has_prog && l->verbose) {
			fprintf(stderr, "iotrail record: optional hook %s left out: %s\n",
				l->hooks[i].name, w);
		}
		any |= kinds[i] != IT_HOOK_NONE && !l->hooks[i].optional;
	}
	if (!any) {
		*err = -ENOENT;
		if (!*why)
			snprintf(why, wlen, "no hook of the %s layer is usable here", l->layer);
		return NULL;
	}
	for (;;) {
		skel = try_load(l, kinds, unwanted, err);
		if (skel) {
			describe(l, kinds, unwanted, desc, dlen);
			return skel;
		}
		snprintf(why, wlen, "the kernel refused the %s probes%s%s: %s", l->layer,
			 refused_prog[0] ? " at " : "", refused_prog, strerror(-*err));
		if (!step_down(l, kinds))
			return NULL;
		if (l->verbose)
			fprintf(stderr, "iotrail record: %s; trying the next hook kind\n", why);
	}
}

/* ---- counters every layer reads ---- */

uint64_t it_percpu_counter(struct bpf_map *map, uint64_t *per_cpu, unsigned int ncpu)
{
	int n = libbpf_num_possible_cpus();
	uint64_t total = 0, *v;
	__u32 key = 0;

	if (per_cpu)
		memset(per_cpu, 0, ncpu * sizeof(*per_cpu));
	if (n <= 0 || !(v = calloc(n, sizeof(*v))))
		return 0;
	if (!bpf_map__lookup_elem(map, &key, sizeof(key), v, n * sizeof(*v), 0)) {
		for (int i = 0; i < n; i++) {
			total += v[i];
			if (per_cpu && (unsigned int)i < ncpu)
				per_cpu[i] = v[i];
		}
	}
	free(v);
	return total;
}

uint64_t it_prog_misses(struct bpf_object *obj)
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

/* ---- the recording's one poll ---- */

int it_ring_join(struct ring_buffer **rb, int map_fd,
		 int (*fn)(void *ctx, void *data, size_t size), void *ctx)
{
	if (*rb)
		return ring_buffer__add(*rb, map_fd, fn, ctx);
	*rb = ring_buffer__new(map_fd, fn, ctx, NULL);
	return *rb ? 0 : -errno;
}

int it_evring_make(struct it_evring **out, int outer_fd, unsigned int ncpu, size_t bytes,
		   unsigned int extra, int (*fn)(void *ctx, void *data, size_t size),
		   uint64_t (*key)(const void *data, size_t size), void *ctx)
{
	struct it_evring *r = it_evring_new(ncpu + extra, fn, key, ctx);
	int err = 0;

	if (!r)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < ncpu && !err; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "it_cpu_ring", 0, 0, (__u32)bytes, NULL);

		if (fd < 0) {
			err = -errno;
			break;
		}
		err = bpf_map_update_elem(outer_fd, &cpu, &fd, BPF_ANY) ? -errno : 0;
		if (!err)
			err = it_evring_map(r, cpu, fd, bytes); /* r keeps fd from here */
		if (err)
			close(fd);
	}
	if (err) {
		it_evring_free(r);
		r = NULL;
	}
	*out = r;
	return err;
}

/* An array map's value is at most what kmalloc gives (4 MiB with 4 KiB
 * pages): the largest power of two of data that fits with the header. */
#define EV_BUF_MAX ((size_t)2 << 20)

void it_ev_bufs_size(struct it_ev_bufs *m, struct bpf_map *map, size_t total, unsigned int ncpu,
		     unsigned int part, size_t *ring_bytes)
{
	size_t share = it_ring_bytes_per_cpu(total, ncpu);

	m->map = map;
	m->ncpu = ncpu;
	m->data_bytes = share < EV_BUF_MAX ? share : EV_BUF_MAX;
	*ring_bytes = share <= EV_BUF_MAX ? it_ring_bytes_per_cpu(share / part * ncpu, ncpu) : share;
	bpf_map__set_max_entries(map, ncpu);
	bpf_map__set_value_size(map, IT_EV_BUF_VALUE_SIZE(m->data_bytes));
}

int it_ev_bufs_map(struct it_ev_bufs *m, struct it_evring *r, unsigned int first)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), vsize = bpf_map__value_size(m->map);
	unsigned char *mem;

	m->len = (vsize * m->ncpu + page - 1) / page * page;
	mem = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m->map), 0);
	if (mem == MAP_FAILED)
		return -errno;
	m->mem = mem;
	for (unsigned int cpu = 0; cpu < m->ncpu; cpu++) {
		struct it_ev_buf *buf = (struct it_ev_buf *)(mem + vsize * cpu);

		it_evring_set(r, first + cpu, &(struct it_evring_src){
			.consumer_pos = (unsigned long *)&buf->cons,
			.producer_pos = (const unsigned long *)&buf->prod,
			.data = buf->data, .mask = m->data_bytes - 1 });
	}
	return 0;
}

uint64_t it_ev_bufs_ringed(const struct it_ev_bufs *m)
{
	size_t vsize = m->mem ? bpf_map__value_size(m->map) : 0;
	uint64_t n = 0;

	for (unsigned int cpu = 0; m->mem && cpu < m->ncpu; cpu++)
		n += ((const struct it_ev_buf *)((const char *)m->mem + vsize * cpu))->ringed;
	return n;
}

void it_ev_bufs_unmap(struct it_ev_bufs *m)
{
	if (m->mem)
		munmap(m->mem, m->len);
	m->mem = NULL;
}

size_t it_ring_bytes_per_cpu(size_t total, unsigned int ncpu)
{
	size_t share = total / (ncpu ? ncpu : 1), bytes = (size_t)sysconf(_SC_PAGESIZE);

	while (bytes * 2 <= share)
		bytes *= 2;
	return bytes;
}
