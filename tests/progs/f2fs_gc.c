/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `f2fs_gc [--background] DIR [N]`: forces F2FS's foreground garbage
 * collection on the file system of DIR (F2FS_IOC_GARBAGE_COLLECT,
 * synchronous), N rounds (default 1), as Debian 12's f2fs_io has no gc
 * command. Each round moves the valid blocks of one victim section
 * elsewhere; a round that finds no victim (EAGAIN, ENODATA) ends the loop.
 * Prints the rounds that collected. --background asks for background
 * rounds instead (the ioctl's sync 0): they only mark the victim's data
 * pages dirty, and writeback (the sync after) moves them.
 * The file system is synced before (so deletions count) and after (so
 * the moved blocks are where FIEMAP looks), saving the test VM two
 * `sync` processes.
 * tests/vm/test_zones.sh uses it to see data move between zones.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* from the kernel's include/uapi/linux/f2fs.h (not in Debian 12's headers) */
#define F2FS_IOCTL_MAGIC 0xf5
#define F2FS_IOC_GARBAGE_COLLECT _IOW(F2FS_IOCTL_MAGIC, 6, uint32_t)

int main(int argc, char **argv)
{
	uint32_t sync = 1;
	int n, done = 0;

	if (argc > 1 && !strcmp(argv[1], "--background")) {
		sync = 0;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: f2fs_gc [--background] DIR [ROUNDS]\n");
		return 2;
	}
	n = argc > 2 ? atoi(argv[2]) : 1;
	int fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		fprintf(stderr, "f2fs_gc: failed to open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	syncfs(fd);
	for (int i = 0; i < n; i++) {
		if (ioctl(fd, F2FS_IOC_GARBAGE_COLLECT, &sync)) {
			if (errno == EAGAIN || errno == ENODATA) /* no victim section */
				break;
			fprintf(stderr, "f2fs_gc: F2FS_IOC_GARBAGE_COLLECT on %s: %s\n", argv[1],
				strerror(errno));
			return 1;
		}
		done++;
	}
	syncfs(fd);
	printf("%d\n", done);
	close(fd);
	return 0;
}
