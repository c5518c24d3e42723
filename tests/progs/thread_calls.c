// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * thread_calls TIDS READY FILE N: a process whose threads make N pread64
 * calls each, for the syscall layer's pid and thread filters
 * (tests/integration/test_record_pid.sh). Its two first threads exist
 * before any recorder starts: it writes their tids (one line: "T1 T2") to
 * TIDS, and every thread waits until the file READY exists. Then the two
 * old threads and the main thread read; then two threads created after,
 * then a forked child and one thread of the child's. Seven threads, 7 * N
 * calls, each thread's on its own; exits 0 when all of them read.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *ready_path;
static int fd;
static long calls;

static void *reader(void *unused)
{
	char buf[512];

	(void)unused;
	for (long i = 0; i < calls; i++)
		if (pread(fd, buf, sizeof(buf), 0) < 0)
			exit(1);
	return NULL;
}

static void wait_ready(void)
{
	struct stat st;

	while (stat(ready_path, &st))
		usleep(20000);
}

/* an old thread: its tid out, then it waits */
static void *old_reader(void *tid_out)
{
	*(long *)tid_out = syscall(SYS_gettid);
	wait_ready();
	return reader(NULL);
}

/* two threads running fn; with tids (the old ones), returns once both
 * wrote theirs, else once both ended */
static int two_threads(void *(*fn)(void *), long *tids, pthread_t *t)
{
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, fn, tids ? &tids[i] : NULL))
			return -1;
	if (tids) { /* their tids, once both wrote them */
		while (!__atomic_load_n(&tids[0], __ATOMIC_ACQUIRE) ||
		       !__atomic_load_n(&tids[1], __ATOMIC_ACQUIRE))
			usleep(1000);
		return 0;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	long tids[2] = { 0, 0 };
	pthread_t old[2], now[2], child_thread;
	FILE *f;
	int st;
	pid_t c;

	if (argc != 5 || (calls = atol(argv[4])) < 1) {
		fprintf(stderr, "usage: thread_calls TIDS READY FILE N\n");
		return 2;
	}
	ready_path = argv[2];
	fd = open(argv[3], O_RDONLY);
	if (fd < 0 || two_threads(old_reader, tids, old))
		return 1;
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld %ld\n", tids[0], tids[1]) < 0 || fclose(f))
		return 1;
	wait_ready();
	reader(NULL);
	if (two_threads(reader, NULL, now)) /* threads created now */
		return 1;
	c = fork();
	if (c == 0) { /* a child, and a thread of its own */
		if (pthread_create(&child_thread, NULL, reader, NULL))
			_exit(1);
		reader(NULL);
		pthread_join(child_thread, NULL);
		_exit(0);
	}
	if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(old[i], NULL);
	return 0;
}
