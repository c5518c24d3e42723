// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Another BPF tool coming and going on the block tracepoints, for the
 * exactness test (tests/integration/test_block_churn.sh): loads one empty
 * raw_tracepoint program and, until SIGTERM/SIGINT or SECONDS pass,
 * attaches it to each block tracepoint iotrail uses and detaches it again,
 * in a loop. Each attach or detach rewrites the tracepoint's array of
 * probes while I/O runs through it: what a perf, bpftrace or second
 * iotrail session starting or stopping does to a recording.
 *
 *   tp_churn SECONDS [TRACEPOINT...]
 *
 * (default: block_bio_queue block_rq_insert block_rq_issue block_rq_complete)
 * Prints "tp_churn: N attach/detach cycles" on stderr at the end (a cycle
 * is every tracepoint attached once and detached once); exit status 0 when
 * at least one cycle ran, 1 with one line saying why otherwise.
 *
 * Plain bpf(2), no libbpf: the program is two instructions (r0 = 0; exit).
 */
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *default_tracepoints[] = {
	"block_bio_queue", "block_rq_insert", "block_rq_issue", "block_rq_complete",
};
#define MAX_TP 16

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static int load_empty_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (unsigned long)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

static int attach(int prog, const char *tp)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.raw_tracepoint.name = (unsigned long)tp;
	attr.raw_tracepoint.prog_fd = prog;
	return sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end;
	unsigned long cycles = 0;
	const char **tracepoints = default_tracepoints;
	size_t ntp = sizeof(default_tracepoints) / sizeof(default_tracepoints[0]);
	int prog, links[MAX_TP];

	if (argc < 2 || atof(argv[1]) <= 0 || argc - 2 > MAX_TP) {
		fprintf(stderr, "usage: tp_churn SECONDS [TRACEPOINT...] (at most %d)\n", MAX_TP);
		return 2;
	}
	if (argc > 2) {
		tracepoints = (const char **)argv + 2;
		ntp = argc - 2;
	}
	end = now() + atof(argv[1]);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	prog = load_empty_prog();
	if (prog < 0) {
		fprintf(stderr, "tp_churn: cannot load a raw_tracepoint program: %s (needs root)\n",
			strerror(errno));
		return 1;
	}
	while (!stop && now() < end) {
		for (size_t i = 0; i < ntp; i++) {
			links[i] = attach(prog, tracepoints[i]);
			if (links[i] < 0) {
				fprintf(stderr, "tp_churn: cannot attach to %s: %s\n", tracepoints[i],
					strerror(errno));
				return 1;
			}
		}
		for (size_t i = 0; i < ntp; i++)
			close(links[i]);
		cycles++;
	}
	fprintf(stderr, "tp_churn: %lu attach/detach cycles\n", cycles);
	return cycles ? 0 : 1;
}
