// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench/hook_floor MODE -- COMMAND [ARGS]: attaches bench/hook_floor.bpf.c
 * in MODE (0: empty hooks, 1: one ring record per hook, drained and thrown
 * away here as iotrail's consumer drains its ring: a poll on the same
 * 20 ms timer, then a consume, since the probes rarely wake it; 2: empty
 * sys_enter and sys_exit programs; 3: one 104-byte record per pread64,
 * entry time kept in task storage; 4: mode 1 with a ring per CPU; 5: mode 4
 * plus empty programs on the default recording's system-call hooks; 6: mode
 * 4 plus a record where the default recording writes one for a call; 7: mode
 * 4's records into a buffer per CPU and hook, mapped here; 8: sys_enter
 * and sys_exit programs that read the clock once each per pread64, and
 * do nothing else: the least a tracer that times each call pays; 9: the
 * block hooks' programs reading the clock once each, nothing else; 10:
 * sys_enter and sys_exit programs that read the calling process's id and
 * compare it with one no process has: the least a tracer that filters by
 * process pays for a call it filters out; 11: the block hooks of 9 plus
 * the system call pair and an io_uring request's two halves reading the
 * clock once each for fio's I/O calls: the default recording's events,
 * timed and nothing else), runs
 * COMMAND, detaches. In modes 0, 1 and 4 to 7, prints the records per
 * hook and per completed I/O, and those the ring could not take, on stderr
 * (mode 1 must show 3 per I/O and 0 not written, or it is no floor); exits
 * with COMMAND's status.
 * For bench/overhead.sh and bench/bpf_cost.sh (modes 0, 1, 4 to 7, 9) and
 * bench/syscall_cost (modes 2, 3, 8, 10).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define POLL_MS 20 /* iotrail's consumer timer (src/record.c) */

/* the record of hook_floor.bpf.c */
struct rec {
	__u64 ts, id;
	__u32 hook, pad;
	__u64 w[5];
};

static unsigned long long records[4]; /* per hook: Q, D, C, and calls (mode 6) */

static int on_rec(void *ctx, void *data, size_t size)
{
	const struct rec *r = data;

	(void)ctx;
	if (size >= sizeof(*r) && r->hook < 4)
		records[r->hook]++;
	return 0;
}

/* One line: records per hook, per completed I/O (C), and refused ones. */
/*
 * A mode's programs (hook_floor.bpf.c): the block hooks' (floor_q/d/c,
 * reading the mode), their empty ones (empty_q/d/c, mode 0) or clock ones
 * (clock_q/d/c, mode 9); the system call pair's empty ones (mode 2),
 * clock ones (8), filter ones (10) or record ones (floor_sys_, 3); mode 5
 * adds the empty system call and io_uring programs to mode 4's, mode 6
 * the record ones.
 */
static bool wanted(const char *name, int mode)
{
	bool sys = strstr(name, "_sys_") != NULL, uring = strstr(name, "uring") != NULL;
	const char *kind = !strncmp(name, "empty_", 6) ? "empty" : !strncmp(name, "clock_", 6) ? "clock" :
			   !strncmp(name, "clockio_", 8) ? "clockio" :
			   !strncmp(name, "filter_", 7) ? "filter" : "floor";

	switch (mode) {
	case 0: return !sys && !strcmp(kind, "empty");
	case 2: return sys && !uring && !strcmp(kind, "empty");
	case 3: return sys && !uring && !strcmp(kind, "floor");
	case 5: return sys ? !strcmp(kind, "empty") : !strcmp(kind, "floor");
	case 6: return !strcmp(kind, "floor");
	case 8: return sys && !strcmp(kind, "clock");
	case 9: return !sys && !strcmp(kind, "clock");
	case 10: return sys && !strcmp(kind, "filter");
	case 11: return sys ? !strcmp(kind, "clockio") : !strcmp(kind, "clock");
	default: return !sys && !strcmp(kind, "floor"); /* 1, 4, 7 */
	}
}

static void report(struct bpf_object *obj, int mode)
{
	unsigned long long total = records[0] + records[1] + records[2], refused = 0;
	struct bpf_map *bss = bpf_object__find_map_by_name(obj, ".bss");
	int zero = 0;

	if (!bss || bpf_map_lookup_elem(bpf_map__fd(bss), &zero, &refused)) {
		fprintf(stderr, "hook_floor: cannot read the refused-record count: %s\n", strerror(errno));
		refused = ~0ull;
	}
	fprintf(stderr, "hook_floor: mode %d, %llu records (Q %llu, D %llu, C %llu), %.2f per completed I/O, %llu not written (ring full)",
		mode, total, records[0], records[1], records[2],
		records[2] ? (double)total / records[2] : 0.0, refused);
	if (mode == 6)
		fprintf(stderr, "; %llu call records (%.2f per completed I/O)", records[3],
			records[2] ? (double)records[3] / records[2] : 0.0);
	fputc('\n', stderr);
}

/* Mode 4: a ring per CPU in cpu_rings, each drained by the same manager. */
static int add_cpu_rings(struct bpf_object *obj, struct ring_buffer *rb)
{
	int outer = bpf_map__fd(bpf_object__find_map_by_name(obj, "cpu_rings"));
	int ncpu = libbpf_num_possible_cpus();
	__u32 bytes = 4096;

	/* the shared ring's 4 MiB divided among the CPUs, as iotrail divides
	 * its rings (a power of two, at least a page) */
	while (bytes * 2 <= (4u << 20) / (unsigned int)ncpu)
		bytes *= 2;
	for (int cpu = 0; cpu < ncpu && cpu < 256; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, bytes, NULL);

		if (fd < 0 || bpf_map_update_elem(outer, &cpu, &fd, BPF_ANY) ||
		    ring_buffer__add(rb, fd, on_rec, NULL)) {
			fprintf(stderr, "hook_floor: cannot make CPU %d's ring: %s\n", cpu, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Mode 7: the buffers of hook_floor.bpf.c's spsc map, 3 per CPU. */
#define SPSC_SLOTS 8192
struct spsc {
	__u64 prod, pad1[7];
	__u64 cons, pad2[7];
	struct rec slot[SPSC_SLOTS];
};

static struct spsc *spsc_bufs;
static int spsc_n;

static int spsc_map(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "spsc");
	size_t bytes = sizeof(struct spsc) * (size_t)spsc_n;
	void *p;

	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "hook_floor: cannot map the spsc buffers: %s\n", strerror(errno));
		return -1;
	}
	spsc_bufs = p;
	return 0;
}

/* Takes what each buffer holds, as on_rec does with a ring's records. */
static void spsc_drain(void)
{
	for (int i = 0; i < spsc_n; i++) {
		struct spsc *b = &spsc_bufs[i];
		__u64 p = __atomic_load_n(&b->prod, __ATOMIC_ACQUIRE), c = b->cons;

		for (; c < p; c++)
			on_rec(NULL, &b->slot[c & (SPSC_SLOTS - 1)], sizeof(struct rec));
		__atomic_store_n(&b->cons, c, __ATOMIC_RELEASE);
	}
}

int main(int argc, char **argv)
{
	char obj_path[4096];
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct ring_buffer *rb;
	struct bpf_link *links[8];
	int mode, n = 0, status = 0;
	pid_t child;
	ssize_t len;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: hook_floor 0|1|2|3|4|5|6|7|8|9|10|11 -- COMMAND [ARGS]\n");
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
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, wanted(bpf_program__name(prog), mode));
	if (bpf_map__set_initial_value(bpf_object__find_map_by_name(obj, ".rodata"), &mode, sizeof(mode))) {
		fprintf(stderr, "hook_floor: cannot set the mode: .rodata of %s is not one int\n", obj_path);
		return 1;
	}
	if (mode == 7) {
		spsc_n = 3 * libbpf_num_possible_cpus();
		bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "spsc"), spsc_n);
	} else {
		/* not used: as small as the map can be */
		bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "spsc"), 1);
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "hook_floor: cannot load %s\n", obj_path);
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		links[n] = bpf_program__attach(prog);
		if (!links[n++]) {
			fprintf(stderr, "hook_floor: cannot attach %s\n", bpf_program__name(prog));
			return 1;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(bpf_object__find_map_by_name(obj, "ring")), on_rec, NULL, NULL);
	if (!rb)
		return 1;
	if (mode >= 4 && mode <= 6 && add_cpu_rings(obj, rb))
		return 1;
	if (mode == 7 && spsc_map(obj))
		return 1;
	child = fork();
	if (child == 0) {
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	while (waitpid(child, &status, WNOHANG) == 0) {
		ring_buffer__poll(rb, POLL_MS); /* mode 7: the timer alone */
		ring_buffer__consume(rb);
		if (spsc_bufs)
			spsc_drain();
	}
	ring_buffer__consume(rb);
	if (spsc_bufs)
		spsc_drain();
	if (mode < 2 || (mode >= 4 && mode <= 7))
		report(obj, mode);
	while (n)
		bpf_link__destroy(links[--n]);
	ring_buffer__free(rb);
	bpf_object__close(obj);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
