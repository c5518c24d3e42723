// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The targets of tp_btf, fentry and fexit programs, resolved here instead
 * of by libbpf. libbpf looks a target up by name at load: in the kernel's
 * BTF, then in every module's, and (libbpf 1.1) each module's lookup
 * walks the kernel's ~120K types again before the module's own. With the
 * NVMe/TCP modules loaded (27 BTF objects), a target in a module cost ~22
 * such walks: ~450 of them per recording, 3.3 s of a 7.5 s start in a TCG
 * guest (LD_PRELOAD count, 2026-11-25), and more on a machine with more
 * modules. Here the same name is looked up the same way, the kernel's BTF
 * first, then the modules' own types only, once for all of an object's
 * programs (it_attach_targets_resolve: before libbpf's load, on the BTF
 * parsed once) and kept until the probes are loaded (the hook engine's
 * retries; forgotten then, so that a module loaded again later is looked
 * up again: it_attach_targets_forget). The
 * answers reach the load through libbpf's program handlers for these
 * sections (the same program type and attach type as libbpf's own).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "hooks.h"

#define MAX_TARGETS 256 /* more than all of iotrail's programs' targets */

struct target {
	char name[128]; /* a type's name: btf_trace_X or a function */
	int kind;       /* BTF_KIND_TYPEDEF or BTF_KIND_FUNC */
	int id;         /* its type id, or -ESRCH when nowhere */
	int obj_fd;     /* its module's BTF object, or 0 for the kernel's */
};

static struct target targets[MAX_TARGETS];
static int ntargets;

/* The sections handled, as libbpf defines them. */
static const struct section {
	const char *prefix;
	enum bpf_attach_type attach;
	int kind;
	const char *type_prefix;
} sections[] = {
	{ "tp_btf/", BPF_TRACE_RAW_TP, BTF_KIND_TYPEDEF, "btf_trace_" },
	{ "fentry/", BPF_TRACE_FENTRY, BTF_KIND_FUNC, "" },
	{ "fexit/", BPF_TRACE_FEXIT, BTF_KIND_FUNC, "" },
};

/* The section of a program and its target's type name, or NULL. */
static const struct section *section_of(const struct bpf_program *prog, char *name, size_t len)
{
	const char *sec = bpf_program__section_name(prog);

	for (size_t i = 0; sec && i < sizeof(sections) / sizeof(sections[0]); i++) {
		size_t n = strlen(sections[i].prefix);

		if (!strncmp(sec, sections[i].prefix, n)) {
			snprintf(name, len, "%s%s", sections[i].type_prefix, sec + n);
			return &sections[i];
		}
	}
	return NULL;
}

static struct target *find(const char *name, int kind)
{
	for (int i = 0; i < ntargets; i++)
		if (targets[i].kind == kind && !strcmp(targets[i].name, name))
			return &targets[i];
	return NULL;
}

int it_btf_own_type(const struct btf *mod, const char *name, int kind)
{
	uint32_t n = btf__type_cnt(mod);

	for (uint32_t id = btf__type_cnt(btf__base_btf(mod)); id < n; id++) {
		const struct btf_type *t = btf__type_by_id(mod, id);

		if (btf_kind(t) == kind && !strcmp(btf__name_by_offset(mod, t->name_off), name))
			return (int)id;
	}
	return -ESRCH;
}

int it_module_btf_next(unsigned int *id, char *name, size_t len)
{
	while (!bpf_btf_get_next_id(*id, id)) {
		struct bpf_btf_info info = { .name = (__u64)(uintptr_t)name, .name_len = len };
		__u32 info_len = sizeof(info);
		int fd = bpf_btf_get_fd_by_id(*id);

		if (fd < 0)
			continue;
		name[0] = 0;
		if (!bpf_obj_get_info_by_fd(fd, &info, &info_len) && info.kernel_btf &&
		    strcmp(name, "vmlinux"))
			return fd;
		close(fd);
	}
	return -1;
}

/* The targets from first on that are not in the kernel's BTF, in the
 * modules', each module's BTF parsed once for all of them. */
static void resolve_in_modules(int first)
{
	unsigned int id = 0;
	char name[64];
	int fd;

	while ((fd = it_module_btf_next(&id, name, sizeof(name))) >= 0) {
		struct btf *mod = btf__load_from_kernel_by_id_split(id, (struct btf *)it_vmlinux_btf());

		for (int i = first; mod && i < ntargets; i++) {
			struct target *t = &targets[i];

			if (t->id >= 0)
				continue;
			t->id = it_btf_own_type(mod, t->name, t->kind);
			if (t->id >= 0) /* each target its own fd (closed alone) */
				t->obj_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			if (t->obj_fd < 0)
				t->id = -errno;
		}
		btf__free(mod);
		close(fd);
	}
}

/* Adds a target, looked up in the kernel's BTF first, as libbpf looks;
 * true when it is not there. */
static bool add(const char *name, int kind)
{
	struct target *t = &targets[ntargets++];

	*t = (struct target){ .kind = kind, .obj_fd = 0 };
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->id = btf__find_by_name_kind(it_vmlinux_btf(), name, kind);
	if (t->id < 0)
		t->id = -ESRCH;
	return t->id < 0;
}

void it_attach_targets_resolve(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int first = ntargets, missing = 0;

	if (!it_vmlinux_btf())
		return;
	bpf_object__for_each_program(prog, obj) {
		char name[128];
		const struct section *s = section_of(prog, name, sizeof(name));

		if (s && bpf_program__autoload(prog) && !find(name, s->kind) && ntargets < MAX_TARGETS)
			missing += add(name, s->kind);
	}
	if (missing)
		resolve_in_modules(first);
}

/* At load: the target resolved, else (an object opened outside the hook
 * engine) resolved now. -ESRCH when nowhere, as libbpf fails. */
static int prepare_load(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long cookie)
{
	char name[128];
	const struct section *s = section_of(prog, name, sizeof(name));
	struct target *t;

	(void)cookie;
	if (!s)
		return -EINVAL;
	t = find(name, s->kind);
	if (!t && it_vmlinux_btf() && ntargets < MAX_TARGETS) {
		if (add(name, s->kind))
			resolve_in_modules(ntargets - 1);
		t = find(name, s->kind);
	}
	if (!t || t->id < 0) /* libbpf says which program failed to load */
		return -ESRCH;
	opts->attach_btf_id = t->id;
	opts->attach_btf_obj_fd = t->obj_fd;
	return 0;
}

static int attach(const struct bpf_program *prog, long cookie, struct bpf_link **link)
{
	(void)cookie;
	*link = bpf_program__attach_trace(prog);
	return *link ? 0 : -errno;
}

int it_attach_targets_register(void)
{
	static int done, err;

	if (done)
		return err;
	done = 1;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]) && !err; i++) {
		LIBBPF_OPTS(libbpf_prog_handler_opts, o, .prog_prepare_load_fn = prepare_load,
			    .prog_attach_fn = attach);
		int id = libbpf_register_prog_handler(sections[i].prefix, BPF_PROG_TYPE_TRACING,
						      sections[i].attach, &o);

		err = id < 0 ? id : 0;
	}
	return err;
}

void it_attach_targets_forget(void)
{
	for (int i = 0; i < ntargets; i++)
		if (targets[i].obj_fd > 0)
			close(targets[i].obj_fd);
	ntargets = 0;
}
