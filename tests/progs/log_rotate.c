// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The log-rotation scenario that loses data in log shippers (the DIO paper's
 * Fluent Bit case): a writer appends to DIR/app.log, renames it to
 * app.log.1 and starts a new app.log; a reader that reads by offset notices
 * the rotation, reopens app.log, but resumes at its old offset, so its read
 * returns 0 and the new file's first bytes are never shipped. With --fixed
 * the reader starts the new file at offset 0.
 *
 *   log_rotate DIR MANIFEST [--fixed]
 *
 * Writer (parent) and reader (child) take turns through pipes, so the
 * order of calls is fixed. MANIFEST gets the reader's reads, one line each:
 *   pread64  pid  path  offset  ret
 * Exit status 0 when the scenario ran (whatever the reader lost).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char old_lines[] = "line 1 of the old app.log\n";   /* 26 bytes */
static const char new_lines[] = "line 1 of new!!\n";              /* 16 bytes */

static void turn_wait(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		exit(1);
}

static void turn_give(int fd)
{
	if (write(fd, "x", 1) != 1)
		exit(1);
}

static void append(const char *path, const char *s)
{
	long fd = syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_APPEND, 0644);

	if (fd < 0 || syscall(SYS_write, fd, s, strlen(s)) != (long)strlen(s))
		exit(1);
	syscall(SYS_close, fd);
}

static void reader(const char *log, FILE *manifest, bool fixed, int go, int done)
{
	char buf[4096];
	struct stat now, mine;
	long fd, off = 0, r;

	turn_wait(go);
	fd = syscall(SYS_openat, AT_FDCWD, log, O_RDONLY, 0);
	r = syscall(SYS_pread64, fd, buf, sizeof(buf), off);
	fprintf(manifest, "pread64\t%d\t%s\t%ld\t%ld\n", getpid(), log, off, r);
	off += r > 0 ? r : 0;
	turn_give(done);

	turn_wait(go);
	/* rotated? (another inode behind the name) */
	if (!stat(log, &now) && !fstat(fd, &mine) && now.st_ino != mine.st_ino) {
		syscall(SYS_close, fd);
		fd = syscall(SYS_openat, AT_FDCWD, log, O_RDONLY, 0);
		if (fixed)
			off = 0;
	}
	r = syscall(SYS_pread64, fd, buf, sizeof(buf), off);
	fprintf(manifest, "pread64\t%d\t%s\t%ld\t%ld\n", getpid(), log, off, r);
	syscall(SYS_close, fd);
	turn_give(done);
}

int main(int argc, char **argv)
{
	char log[512], old[512];
	int go[2], done[2];
	bool fixed = argc == 4 && !strcmp(argv[3], "--fixed");
	FILE *manifest;
	pid_t pid;
	int st;

	if (argc < 3 || argc > 4 || (argc == 4 && !fixed)) {
		fprintf(stderr, "usage: log_rotate DIR MANIFEST [--fixed]\n");
		return 2;
	}
	manifest = fopen(argv[2], "w");
	if (!manifest || pipe(go) || pipe(done))
		return 2;
	setvbuf(manifest, NULL, _IOFBF, 1 << 16); /* written at exit, after the scenario */
	snprintf(log, sizeof(log), "%s/app.log", argv[1]);
	snprintf(old, sizeof(old), "%s/app.log.1", argv[1]);
	unlink(log);
	unlink(old);

	pid = fork();
	if (pid == 0) {
		reader(log, manifest, fixed, go[0], done[1]);
		fclose(manifest);
		_exit(0);
	}
	append(log, old_lines);
	turn_give(go[1]);
	turn_wait(done[0]);
	/* rotate: the old log keeps its inode under the new name */
	if (syscall(SYS_rename, log, old))
		return 1;
	append(log, new_lines);
	turn_give(go[1]);
	turn_wait(done[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1;
}
