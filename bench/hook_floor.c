// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench/hook_floor MODE -- COMMAND [ARGS]: attaches bench/hook_floor.bpf.c
 * in MODE (0: empty hooks, 1: one ring record per hook, drained and thrown
 * away here as iotrail's consumer would drain it), runs COMMAND, detaches.
 * Prints the hook runs and records seen on stderr; exits with COMMAND's
 * status. For bench/overhead.sh only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static unsigned long long records;

static int on_rec(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	records++;
	return 0;
}

int main(int argc, char **argv)
{
	char obj_path[4096];
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct ring_buffer *rb;
	struct bpf_link *links[3];
	int mode, n = 0, status = 0;
	pid_t child;
	ssize_t len;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: hook_floor 0|1 -- COMMAND [ARGS]\n");
		return 2;
	}
	mode = atoi(argv[1]);
	/* the object sits next to this binary */
	len = readlink("/proc/self/exe", obj_path, sizeof(obj_path) - 16);
	if (len < 0)
		return 1;
	obj_path[len] = 0;
	strcat(obj_path, ".bpf.o");
	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj) {
		fprintf(stderr, "hook_floor: cannot open %s: %s\n", obj_path, strerror(errno));
		return 1;
	}
	bpf_map__set_initial_value(bpf_object__find_map_by_name(obj, ".rodata"), &mode, sizeof(mode));
	if (bpf_object__load(obj)) {
		fprintf(stderr, "hook_floor: cannot load %s\n", obj_path);
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		links[n] = bpf_program__attach(prog);
		if (!links[n++]) {
			fprintf(stderr, "hook_floor: cannot attach %s\n", bpf_program__name(prog));
			return 1;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(obj, "ring")), on_rec, NULL, NULL);
	if (!rb)
		return 1;
	child = fork();
	if (child == 0) {
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	while (waitpid(child, &status, WNOHANG) == 0)
		ring_buffer__poll(rb, 20); /* iotrail's consumer timer */
	ring_buffer__consume(rb);
	fprintf(stderr, "hook_floor: mode %d, %llu records\n", mode, records);
	while (n)
		bpf_link__destroy(links[--n]);
	ring_buffer__free(rb);
	bpf_object__close(obj);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
