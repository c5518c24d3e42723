// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The write queue (src/writeq.c): blocks reach the file in order while the
 * producer goes on; a producer that gets a bound ahead of a stalled file
 * waits (counted); a write error is sticky and comes back to the producer.
 */
#include "harness.h"
#include "writeq.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct reader {
	int fd;
	unsigned char got[40000];
	size_t n;
};

/* A reader that starts late (a stalled file system), then reads it all. */
static void *late_reader(void *arg)
{
	struct reader *r = arg;
	ssize_t k;

	usleep(200000);
	while ((k = read(r->fd, r->got + r->n, sizeof(r->got) - r->n)) > 0)
		r->n += (size_t)k;
	return NULL;
}

TEST(writeq_order_and_bound)
{
	enum { NB = 10, LEN = 3000 };
	unsigned char block[LEN];
	struct it_writeq_stats st;
	struct reader r = { 0 };
	struct it_writeq *q;
	pthread_t t;
	int pfd[2];
	uint64_t t0, puts_ns;
	size_t bad = 0;

	if (!ASSERT_EQ(pipe(pfd), 0, "pipe"))
		return;
	fcntl(pfd[1], F_SETPIPE_SZ, 4096); /* a file that takes little at once */
	r.fd = pfd[0];
	q = it_writeq_start(pfd[1], 0, 2 * LEN);
	if (!ASSERT_NOT_NULL(q, "start")) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	pthread_create(&t, NULL, late_reader, &r);
	t0 = now_ns();
	for (int i = 0; i < NB; i++) {
		memset(block, 'a' + i, sizeof(block));
		ASSERT_EQ(it_writeq_put(q, block, sizeof(block), 2, 1), 0, "put");
	}
	puts_ns = now_ns() - t0;
	it_writeq_sync(q, &st);
	ASSERT_EQ(it_writeq_stop(q), 0, "stop");
	close(pfd[1]);
	pthread_join(t, NULL);
	close(pfd[0]);
	/* 30,000 bytes through a 4 KiB pipe and a 6,000-byte queue: the
	 * producer waited for the late reader */
	ASSERT_GE(st.waits, 1, "the producer waited on the full queue");
	ASSERT_GE(puts_ns, 100000000, "for the stalled file's time");
	ASSERT_NEAR(st.wait_ns, puts_ns, puts_ns / 5 + 20000000, "the wait counted");
	ASSERT_LE(st.peak, 2 * LEN, "never more than the bound queued");
	ASSERT_U64_EQ(st.bytes, NB * LEN, "bytes written");
	ASSERT_U64_EQ(st.blocks, NB, "blocks written");
	ASSERT_U64_EQ(st.records, 2 * NB, "records written");
	ASSERT_U64_EQ(st.events, NB, "events written");
	ASSERT_EQ(r.n, NB * LEN, "bytes read");
	for (size_t i = 0; i < r.n; i++)
		bad += r.got[i] != 'a' + i / LEN;
	ASSERT_EQ(bad, 0, "bytes out of order");
}

/* A file that cannot take a byte (/dev/full: ENOSPC): the error comes
 * back to the producer, stays, and nothing counts as written. */
TEST(writeq_error_is_sticky)
{
	unsigned char block[512] = { 0 };
	struct it_writeq_stats st;
	struct it_writeq *q;
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		SKIP("no /dev/full");
	q = it_writeq_start(fd, 0, 1 << 20);
	if (!ASSERT_NOT_NULL(q, "start")) {
		close(fd);
		return;
	}
	ASSERT_EQ(it_writeq_put(q, block, sizeof(block), 1, 0), 0, "the first put is queued");
	it_writeq_sync(q, &st);
	ASSERT_EQ(st.err, -ENOSPC, "the write's error");
	ASSERT_U64_EQ(st.bytes, 0, "nothing written");
	for (int i = 0; i < 3 && !rc; i++)
		rc = it_writeq_put(q, block, sizeof(block), 1, 0);
	ASSERT_EQ(rc, -ENOSPC, "a later put gets it");
	ASSERT_EQ(it_writeq_stop(q), -ENOSPC, "and stop");
	close(fd);
}
