// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Hook probing: every "is it available?" answer comes from loading and
 * attaching a program that returns 0 (the kernel's own verdict), or from
 * tracefs/BTF for what needs no program. Kernel versions are never checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

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

static struct btf *vmlinux_btf(void)
{
	static struct btf *btf;
	static int tried;

	if (!tried) {
		tried = 1;
		btf = btf__load_vmlinux_btf(); /* NULL without kernel BTF */
	}
	return btf;
}

/* The kernel BTF object of a module: its fd (for attach_btf_obj_fd) and the
 * id of type_name of the given kind in it. 0 or -errno. */
static int module_btf_type(const char *module, const char *type_name, int kind,
			   int *obj_fd, int *type_id)
{
	__u32 id = 0;

	if (!vmlinux_btf())
		return -ENOENT;
	while (!bpf_btf_get_next_id(id, &id)) {
		char name[64] = "";
		struct bpf_btf_info info = { .name = (__u64)(uintptr_t)name,
					     .name_len = sizeof(name) };
		__u32 info_len = sizeof(info);
		struct btf *btf;
		int fd = bpf_btf_get_fd_by_id(id), tid;

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &info_len) || strcmp(name, module)) {
			close(fd);
			continue;
		}
		btf = btf__load_from_kernel_by_id_split(id, vmlinux_btf());
		tid = btf ? btf__find_by_name_kind(btf, type_name, kind) : -ENOENT;
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
 * (in module BTF obj_fd when >= 0) and attach it; 0 or -errno. */
static int load_and_attach_tracing(enum bpf_attach_type type, int btf_id, int obj_fd,
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
		id = libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP);
		if (id < 0) {
			say(why, len, "tp_btf: no btf_trace_%s in the kernel BTF: %s", tp, -id);
			return id;
		}
	}
	err = load_and_attach_tracing(BPF_TRACE_RAW_TP, id, obj_fd, why, len, "tp_btf");
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

bool it_module_loaded(const char *module)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", module);
	return is_dir(path);
}

static void module_missing(const char *module, struct it_hook_status *st)
{
	const char *load = module;

	/* nvme_core comes with the PCIe driver; name what a user would load */
	if (!strcmp(module, "nvme_core"))
		load = "nvme";
	snprintf(st->why, sizeof(st->why), "module %s not loaded", module);
	snprintf(st->fix, sizeof(st->fix), "modprobe %s", load);
}

void it_hook_probe_tracepoint(const char *category, const char *name, const char *module,
			      struct it_hook_status *st)
{
	char why_btf[160] = "", why_raw[160] = "";

	memset(st, 0, sizeof(*st));
	if (module && !it_module_loaded(module)) {
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

/* Is func in ftrace's list of traceable functions? -1 when the list cannot
 * be read (some sandboxed kernels), so the caller can tell "unknown". */
static int function_listed(const char *func)
{
	const char *dir = it_tracefs_dir();
	char path[256], line[256];
	size_t n = strlen(func);
	int found = 0;
	FILE *f;

	if (!dir)
		return -1;
	snprintf(path, sizeof(path), "%s/available_filter_functions", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* lines are "name" or "name [module]" */
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, func, n) && (line[n] == '\n' || line[n] == ' ');
	fclose(f);
	return found;
}

int it_fentry_supported(char *why, size_t len)
{
	static int cached = 1; /* 1: not probed yet */
	static char reason[160];
	int id;

	if (cached == 1) {
		/* vfs_read: in every kernel's BTF and never inlined */
		id = libbpf_find_vmlinux_btf_id("vfs_read", BPF_TRACE_FENTRY);
		if (id < 0) {
			cached = id;
			snprintf(reason, sizeof(reason), "fentry: no kernel BTF to attach to");
		} else {
			cached = load_and_attach_tracing(BPF_TRACE_FENTRY, id, -1, reason,
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

/* fentry on one function: needs its BTF FUNC (vmlinux or module). */
static int probe_fentry_func(const char *func, const char *module, char *why, size_t len)
{
	int id, obj_fd = -1, err;

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
		id = libbpf_find_vmlinux_btf_id(func, BPF_TRACE_FENTRY);
		if (id < 0) {
			say(why, len, "fentry: %s is not in the kernel BTF: %s", func, -id);
			return id;
		}
	}
	err = load_and_attach_tracing(BPF_TRACE_FENTRY, id, obj_fd, why, len, "fentry");
	if (obj_fd >= 0)
		close(obj_fd);
	return err;
}

void it_hook_probe_function(const char *func, const char *module, struct it_hook_status *st)
{
	char why_fentry[160] = "", why_kprobe[160] = "";
	int listed;

	memset(st, 0, sizeof(*st));
	if (module && !it_module_loaded(module)) {
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

/* ---- kernel differences ---- */

int it_block_tp_has_queue_arg(void)
{
	struct btf *btf = vmlinux_btf();
	const struct btf_type *t;
	int id;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, "btf_trace_block_rq_issue", BTF_KIND_TYPEDEF);
	if (id < 0)
		return id;
	/* typedef -> pointer -> func_proto (void *__data, [q,] rq) */
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_func_proto(t))
		return -EINVAL;
	return btf_vlen(t) == 3;
}
