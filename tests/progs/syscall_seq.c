// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A known sequence of storage system calls for the syscall-layer tests:
 * create, pwrite at known offsets, write after lseek, read and pread, fsync,
 * fdatasync, rename, setxattr/getxattr, unlink, a failing open, a directory
 * listing, O_DIRECT writes. Every call goes through syscall(2) so the call
 * the kernel sees is exactly the one named here (libc may turn open into
 * openat or rename into renameat2).
 *
 *   syscall_seq DIR MANIFEST
 *
 * DIR must exist (and be empty of the names used here). MANIFEST gets one
 * line per call, in order, tab-separated:
 *   call  fd  offset  count  ret  errno  file_type  path
 * where offset is the argument or, for read/write, the file position at
 * entry ("-" when the call has none), ret is the raw return (-1 on error,
 * with errno the error name), and path is the file the call worked on
 * (fd-based calls: the path the file was opened with). The test compares
 * this with `iotrail report --json --events`.
 *
 * Exit status: 0 when every call did what it should (the failing open
 * failed with ENOENT), 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BLK 4096

static FILE *manifest;
static int failed;

static void note(const char *call, long fd, long long off, long long count, long ret, int err,
		 const char *type, const char *path)
{
	char offs[32] = "-", cnts[32] = "-", fds[16] = "-";

	if (off >= 0)
		snprintf(offs, sizeof(offs), "%lld", off);
	if (count >= 0)
		snprintf(cnts, sizeof(cnts), "%lld", count);
	if (fd != -1000)
		snprintf(fds, sizeof(fds), "%ld", fd);
	fprintf(manifest, "%s\t%s\t%s\t%s\t%ld\t%s\t%s\t%s\n", call, fds, offs, cnts, ret,
		ret < 0 ? strerrorname_np(err) : "-", type, path);
}

static void expect(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "syscall_seq: %s failed: %s\n", what, strerror(errno));
		failed = 1;
	}
}

#define NOFD (-1000L)

int main(int argc, char **argv)
{
	static char buf[2 * BLK] __attribute__((aligned(BLK)));
	char data[512], data2[512], missing[512], direct[512], val[64];
	const char *dir;
	long fd, dfd, r;

	if (argc != 3) {
		fprintf(stderr, "usage: syscall_seq DIR MANIFEST\n");
		return 2;
	}
	dir = argv[1];
	manifest = fopen(argv[2], "w");
	if (!manifest) {
		perror(argv[2]);
		return 2;
	}
	/* one write at the end: the manifest's own writes stay out of the sequence */
	setvbuf(manifest, NULL, _IOFBF, 1 << 16);
	snprintf(data, sizeof(data), "%s/data.bin", dir);
	snprintf(data2, sizeof(data2), "%s/data2.bin", dir);
	snprintf(missing, sizeof(missing), "%s/missing.bin", dir);
	snprintf(direct, sizeof(direct), "%s/direct.bin", dir);
	memset(buf, 'a', sizeof(buf));

	/* create, pwrite at known offsets */
	fd = syscall(SYS_openat, AT_FDCWD, data, O_CREAT | O_RDWR | O_TRUNC, 0644);
	note("openat", AT_FDCWD, -1, -1, fd, errno, "reg", data);
	expect(fd >= 0, "create");
	r = syscall(SYS_pwrite64, fd, buf, BLK, 0);
	note("pwrite64", fd, 0, BLK, r, errno, "reg", data);
	expect(r == BLK, "pwrite at 0");
	r = syscall(SYS_pwrite64, fd, buf, BLK, 3 * BLK);
	note("pwrite64", fd, 3 * BLK, BLK, r, errno, "reg", data);
	expect(r == BLK, "pwrite at 12288");

	/* write after lseek: its offset is the position at entry */
	r = syscall(SYS_lseek, fd, 100, SEEK_SET);
	note("lseek", fd, 100, -1, r, errno, "reg", data);
	r = syscall(SYS_write, fd, buf, 50);
	note("write", fd, 100, 50, r, errno, "reg", data);
	expect(r == 50, "write after lseek");
	/* read continues from where the write left the position */
	r = syscall(SYS_read, fd, buf, 10);
	note("read", fd, 150, 10, r, errno, "reg", data);
	r = syscall(SYS_pread64, fd, buf, BLK, 3 * BLK);
	note("pread64", fd, 3 * BLK, BLK, r, errno, "reg", data);
	expect(r == BLK, "pread");

	r = syscall(SYS_fsync, fd);
	note("fsync", fd, -1, -1, r, errno, "reg", data);
	r = syscall(SYS_fdatasync, fd);
	note("fdatasync", fd, -1, -1, r, errno, "reg", data);
	r = syscall(SYS_close, fd);
	note("close", fd, -1, -1, r, errno, "reg", data);

	/* rename, then xattrs on the new name, then unlink */
	r = syscall(SYS_rename, data, data2);
	note("rename", NOFD, -1, -1, r, errno, "-", data);
	expect(r == 0, "rename");
	r = syscall(SYS_setxattr, data2, "user.iotrail", "v1", 2, 0);
	note("setxattr", NOFD, -1, 2, r, errno, "-", data2);
	r = syscall(SYS_getxattr, data2, "user.iotrail", val, sizeof(val));
	note("getxattr", NOFD, -1, sizeof(val), r, errno, "-", data2);
	r = syscall(SYS_unlink, data2);
	note("unlink", NOFD, -1, -1, r, errno, "-", data2);
	expect(r == 0, "unlink");

	/* a failing open */
	r = syscall(SYS_openat, AT_FDCWD, missing, O_RDONLY, 0);
	note("openat", AT_FDCWD, -1, -1, r, errno, "-", missing);
	expect(r == -1 && errno == ENOENT, "the open of a missing file");
	if (r >= 0)
		syscall(SYS_close, r);

	/* a directory listing: open the directory, read its entries, close */
	dfd = syscall(SYS_openat, AT_FDCWD, dir, O_RDONLY | O_DIRECTORY, 0);
	note("openat", AT_FDCWD, -1, -1, dfd, errno, "dir", dir);
	expect(dfd >= 0, "open the directory");
	r = syscall(SYS_getdents64, dfd, buf, sizeof(buf)); /* not a traced call */
	expect(r >= 0, "getdents64");
	r = syscall(SYS_fstat, dfd, (struct stat *)buf);
	note("fstat", dfd, -1, -1, r, errno, "dir", dir);
	r = syscall(SYS_close, dfd);
	note("close", dfd, -1, -1, r, errno, "dir", dir);

	/* O_DIRECT writes (they reach the block layer in this thread) */
	fd = syscall(SYS_openat, AT_FDCWD, direct, O_CREAT | O_WRONLY | O_TRUNC | O_DIRECT, 0644);
	note("openat", AT_FDCWD, -1, -1, fd, errno, fd >= 0 ? "reg" : "-", direct);
	if (fd >= 0) {
		for (int i = 0; i < 2; i++) {
			r = syscall(SYS_pwrite64, fd, buf, BLK, (long)i * BLK);
			note("pwrite64", fd, (long long)i * BLK, BLK, r, errno, "reg", direct);
			expect(r == BLK, "O_DIRECT pwrite");
		}
		r = syscall(SYS_close, fd);
		note("close", fd, -1, -1, r, errno, "reg", direct);
	} else {
		fprintf(stderr, "syscall_seq: O_DIRECT open failed (%s): the file system of %s "
			"does not take O_DIRECT\n", strerror(errno), dir);
		failed = 1;
	}
	fclose(manifest);
	return failed;
}
