// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A short-lived process that changes its title, as a forked server process
 * does (setproctitle: its argv area rewritten, what ps shows), then does
 * block I/O and exits well within the recorder's 100 ms title delay:
 *
 *   retitle DEV TITLE NWRITES
 *
 * It waits 20 ms first (the recorder reads the title it starts with when
 * it first sees the process), then writes TITLE over its argv area,
 * writes NWRITES blocks of 4 KiB to DEV with O_DIRECT, fdatasyncs, and
 * exits about 30 ms after it started. The recorded title must be TITLE.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char block[4096] __attribute__((aligned(4096)));
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	char title[256];
	size_t area;
	int fd, n;

	if (argc != 4 || (n = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: retitle DEV TITLE NWRITES\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_DIRECT);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	nanosleep(&pause, NULL);
	/* the argv strings lie one after the other: the title goes over all
	 * of them (cut to their length), the rest zeroed */
	snprintf(title, sizeof(title), "%s", argv[2]);
	area = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
	memset(argv[0], 0, area);
	memcpy(argv[0], title, strlen(title) < area ? strlen(title) : area - 1);
	memset(block, 0x5a, sizeof(block));
	for (int i = 0; i < n; i++)
		if (pwrite(fd, block, sizeof(block), (off_t)i * 8192) != (ssize_t)sizeof(block)) {
			perror("pwrite");
			return 1;
		}
	if (fdatasync(fd)) {
		perror("fdatasync");
		return 1;
	}
	close(fd);
	return 0;
}
