// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * memsample PID MARKER: the peak memory of a recorder, sampled every
 * millisecond until PID exits, for bench/memory.sh and
 * tests/integration/test_record_memory.sh. A sample is the recorder's
 * resident memory outside the mappings of BPF maps (the Rss of
 * /proc/PID/smaps; a ring's pages are mapped twice to user space and are
 * kernel memory, counted below) plus the memlock of every BPF map it holds
 * an fd of (/proc/PID/fdinfo). Two peaks are kept: before the file MARKER
 * exists (start-up: the probes loading; the command creates MARKER when it
 * starts) and after (recording). Prints one line:
 *   start KB recording KB samples N
 * The shell's 50 ms samples missed the start-up peak, which lasts a few
 * milliseconds while libbpf parses the kernel's BTF beside the maps.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Rss in KB outside BPF maps' mappings; -1 when the process is gone */
static long rss_outside_maps(const char *pid)
{
	char path[64], line[512];
	long kb = 0, v;
	int in_map = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/smaps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		/* a mapping's first line: "lo-hi perms offset dev inode [name]" */
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3)
			in_map = strstr(line, "anon_inode:bpf-map") != NULL;
		else if (!in_map && sscanf(line, "Rss: %ld", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

/* the memlock of the BPF maps among PID's fds, in KB; -1 when gone */
static long maps_kb(const char *pid)
{
	char dir[64], path[384], line[256];
	struct dirent *e;
	long sum = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fdinfo", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		long memlock = 0;
		int is_map = 0;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "map_type:", 9))
				is_map = 1;
			sscanf(line, "memlock: %ld", &memlock);
		}
		fclose(f);
		if (is_map)
			sum += memlock;
	}
	closedir(d);
	return sum / 1024;
}

/* whether PID still runs (not gone, not a zombie its parent has yet to
 * reap: that parent may be waiting for us first) */
static int running(const char *pid)
{
	char path[64], buf[512], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold spaces */
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

int main(int argc, char **argv)
{
	const struct timespec ms = { 0, 1000000 };
	long start = 0, recording = 0, samples = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: memsample PID MARKER\n");
		return 2;
	}
	for (;;) {
		int started = access(argv[2], F_OK) == 0;
		long rss = rss_outside_maps(argv[1]);
		long maps = rss >= 0 ? maps_kb(argv[1]) : -1;

		if (rss < 0 || maps < 0 || !running(argv[1]))
			break;
		samples++;
		if (started && rss + maps > recording)
			recording = rss + maps;
		else if (!started && rss + maps > start)
			start = rss + maps;
		nanosleep(&ms, NULL);
	}
	printf("start %ld recording %ld samples %ld\n", start, recording, samples);
	return samples ? 0 : 1;
}
