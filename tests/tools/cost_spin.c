// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cost_spin --dev DEV[,DEV...] (--ns N | --ns-per-kib N) [--stats FILE]
 *
 * Loads cost_spin.bpf.c (a known cost per I/O on the requests of each DEV) with the
 * kernel's BPF run-time statistics on (BPF_ENABLE_STATS), prints "ready"
 * once attached, and at SIGINT/SIGTERM appends to FILE (or stdout) the
 * truth: "run_cnt N run_time_ns N matched N". bench/cost_truth.sh runs it
 * as `iotrail cost --with`'s command.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cost_spin.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "cost_spin: failed to %s: %s\n", what, why);
	return 1;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *stats = NULL;
	unsigned long long ns = 0, per_kib = 0;
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	struct cost_spin_bpf *skel;
	struct stat st;
	int stats_fd;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--dev"))
			dev = argv[i + 1];
		else if (!strcmp(argv[i], "--ns"))
			ns = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--ns-per-kib"))
			per_kib = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--stats"))
			stats = argv[i + 1];
		else
			return fail("read the options", "usage: cost_spin --dev DEV[,DEV...] (--ns N | --ns-per-kib N) [--stats FILE]");
	}
	if (!dev)
		return fail("find the disk", "--dev must name block devices");
	if (!ns && !per_kib)
		return fail("read the options", "give --ns or --ns-per-kib");
	skel = cost_spin_bpf__open();
	if (!skel)
		return fail("open the BPF program", strerror(errno));
	char copy[1024], *save = NULL;
	const int max_disks = sizeof(skel->rodata->disks) / sizeof(skel->rodata->disks[0]);

	snprintf(copy, sizeof(copy), "%s", dev);
	for (char *d = strtok_r(copy, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
		if (stat(d, &st) || !S_ISBLK(st.st_mode) || skel->rodata->ndisks == max_disks) {
			cost_spin_bpf__destroy(skel);
			return fail("find the disk", "--dev must name up to 16 block devices, comma-separated");
		}
		skel->rodata->disks[skel->rodata->ndisks++] = major(st.st_rdev) << 20 | minor(st.st_rdev);
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		cost_spin_bpf__destroy(skel);
		return fail("enable BPF run-time statistics", strerror(errno));
	}
	skel->rodata->spin_ns = ns;
	skel->rodata->spin_ns_per_kib = per_kib;
	if (cost_spin_bpf__load(skel) || cost_spin_bpf__attach(skel)) {
		cost_spin_bpf__destroy(skel);
		return fail("load and attach the BPF program", strerror(errno));
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.spin_issue), &info, &len)) {
		cost_spin_bpf__destroy(skel);
		return fail("read the program's statistics", strerror(errno));
	}
	FILE *out = stats ? fopen(stats, "a") : stdout;

	if (!out) {
		cost_spin_bpf__destroy(skel);
		return fail("open the statistics file", strerror(errno));
	}
	fprintf(out, "run_cnt %llu run_time_ns %llu matched %llu\n", (unsigned long long)info.run_cnt,
		(unsigned long long)info.run_time_ns, (unsigned long long)skel->bss->matched);
	if (out != stdout)
		fclose(out);
	cost_spin_bpf__destroy(skel);
	close(stats_fd);
	return 0;
}
