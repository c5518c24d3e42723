// SPDX-License-Identifier: GPL-2.0
/*
 * attach_check OBJ FUNC CATEGORY:TRACEPOINT -- COMMAND [ARGS]
 *
 * Loads attach_check.bpf.o, attaches its fentry and kprobe programs to the
 * kernel (or module) function FUNC and its tracepoint program to
 * CATEGORY:TRACEPOINT, runs COMMAND, and prints
 *   fentry=N kprobe=N tracepoint=N
 * (hits while COMMAND ran). A probe that cannot be attached prints
 * "KIND=error: why" in its place and makes the exit status 1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	const char *kinds[3] = { "fentry", "kprobe", "tracepoint" };
	char errs[3][128] = { "", "", "" };
	struct bpf_link *links[3] = { 0 };
	struct bpf_object *obj = NULL;
	struct bpf_program *fentry, *kprobe, *tp;
	char cat[64], *name;
	int err = 1, status = 0, i, fd;
	pid_t pid;

	if (argc < 6 || strcmp(argv[4], "--") != 0) {
		fprintf(stderr, "usage: %s OBJ FUNC CATEGORY:TRACEPOINT -- COMMAND [ARGS]\n", argv[0]);
		return 2;
	}
	snprintf(cat, sizeof(cat), "%s", argv[3]);
	name = strchr(cat, ':');
	if (!name) {
		fprintf(stderr, "attach_check: tracepoint must be CATEGORY:NAME, got %s\n", argv[3]);
		return 2;
	}
	*name++ = '\0';
	libbpf_set_print(silent);

	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "attach_check: failed to open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fentry = bpf_object__find_program_by_name(obj, "on_fentry");
	kprobe = bpf_object__find_program_by_name(obj, "on_kprobe");
	tp = bpf_object__find_program_by_name(obj, "on_tracepoint");
	if (!fentry || !kprobe || !tp) {
		fprintf(stderr, "attach_check: %s lacks a program\n", argv[1]);
		goto cleanup;
	}
	/* fentry resolves FUNC in vmlinux BTF or in a module's BTF */
	if (bpf_program__set_attach_target(fentry, 0, argv[2])) {
		snprintf(errs[0], sizeof(errs[0]), "no BTF for %s", argv[2]);
		bpf_program__set_autoload(fentry, false);
	}
	if (bpf_object__load(obj)) {
		/* most likely the fentry target: retry without it */
		snprintf(errs[0], sizeof(errs[0]), "load failed: %s", strerror(errno));
		bpf_object__close(obj);
		obj = bpf_object__open_file(argv[1], NULL);
		if (!obj)
			return 1;
		fentry = bpf_object__find_program_by_name(obj, "on_fentry");
		kprobe = bpf_object__find_program_by_name(obj, "on_kprobe");
		tp = bpf_object__find_program_by_name(obj, "on_tracepoint");
		bpf_program__set_autoload(fentry, false);
		if (bpf_object__load(obj)) {
			fprintf(stderr, "attach_check: failed to load %s: %s\n", argv[1], strerror(errno));
			goto cleanup;
		}
		fentry = NULL;
	}
	if (fentry) {
		links[0] = bpf_program__attach(fentry);
		if (!links[0])
			snprintf(errs[0], sizeof(errs[0]), "attach failed: %s", strerror(errno));
	}
	links[1] = bpf_program__attach_kprobe(kprobe, false, argv[2]);
	if (!links[1])
		snprintf(errs[1], sizeof(errs[1]), "attach failed: %s", strerror(errno));
	links[2] = bpf_program__attach_tracepoint(tp, cat, name);
	if (!links[2])
		snprintf(errs[2], sizeof(errs[2]), "attach failed: %s", strerror(errno));

	pid = fork();
	if (pid == 0) {
		execvp(argv[5], argv + 5);
		fprintf(stderr, "attach_check: failed to run %s: %s\n", argv[5], strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		fprintf(stderr, "attach_check: failed to run %s: %s\n", argv[5], strerror(errno));
		goto cleanup;
	}

	err = 0;
	fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "hits"));
	for (i = 0; i < 3; i++) {
		__u32 key = i;
		__u64 val = 0;

		if (!links[i]) {
			printf("%s%s=error: %s", i ? " " : "", kinds[i], errs[i]);
			err = 1;
			continue;
		}
		bpf_map_lookup_elem(fd, &key, &val);
		printf("%s%s=%llu", i ? " " : "", kinds[i], (unsigned long long)val);
	}
	printf("\n");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "attach_check: %s exited with status %d\n", argv[5],
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		err = 1;
	}
cleanup:
	for (i = 0; i < 3; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return err;
}
