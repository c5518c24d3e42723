// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The write queue (writeq.h): a FIFO of copied blocks under one mutex, and
 * one thread that takes the oldest block and write()s it outside the lock.
 * A copy per block (a compressed chunk, about a hundred KiB) costs little
 * next to compressing it, and lets the producer reuse its buffers at once.
 * Blocks are mapped, not malloc'd, and a written block is kept for the
 * next one, up to SPARE_BYTES of them: unmapped at once (as before), each
 * block cost its page faults when filled and, at its unmapping, a TLB
 * shootdown interrupting every CPU the recorder ran on (the workload's
 * too): a fifth of the recorder's CPU time in a profile of a default
 * recording. Beyond the spares, the recorder holds what is queued and no
 * more (malloc would keep freed blocks of this size in its heap).
 */
#include "writeq.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Written blocks kept for reuse, at most this many bytes of them. */
#define SPARE_BYTES (2u << 20)
/* A block's mapping is rounded up to this, so that one fits the next. */
#define BLOCK_ROUND (64u << 10)

struct block {
	struct block *next;
	size_t len, mapped;
	uint64_t records, events;
	unsigned char data[];
};

struct it_writeq {
	int fd;
	uint64_t base;                  /* bytes in the file before the queue's */
	size_t bound, queued;           /* bytes of blocks not yet written */
	struct block *head, *tail;
	struct block *spare;            /* written blocks for reuse */
	size_t spare_bytes;             /* their mappings' bytes */
	bool busy;                      /* the thread is writing the block it took */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t work, room;      /* for the thread; for producers and sync */
	pthread_t thread;
	struct it_writeq_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A block for len bytes: a spare that fits (q->lock not held), or a new
 * mapping. */
static struct block *block_new(struct it_writeq *q, size_t len)
{
	size_t mapped = (sizeof(struct block) + len + BLOCK_ROUND - 1) / BLOCK_ROUND * BLOCK_ROUND;
	struct block *b, **p;

	pthread_mutex_lock(&q->lock);
	for (p = &q->spare; *p; p = &(*p)->next) {
		if ((*p)->mapped >= sizeof(struct block) + len)
			break;
	}
	b = *p;
	if (b) {
		*p = b->next;
		q->spare_bytes -= b->mapped;
	}
	pthread_mutex_unlock(&q->lock);
	if (!b) {
		b = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			return NULL;
		b->mapped = mapped;
	}
	b->len = len;
	b->next = NULL;
	return b;
}

static void block_free(struct block *b)
{
	if (b)
		munmap(b, b->mapped);
}

static void free_blocks(struct block *b)
{
	while (b) {
		struct block *next = b->next;

		block_free(b);
		b = next;
	}
}

static void *writer_main(void *arg)
{
	struct it_writeq *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct block *b = q->head;
		int err;

		if (!b) {
			if (q->stop)
				break;
			pthread_cond_wait(&q->work, &q->lock);
			continue;
		}
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		q->busy = true;
		pthread_mutex_unlock(&q->lock);
		err = q->st.err ? q->st.err : write_all(q->fd, b->data, b->len);
		if (err && !q->st.err) {
			/* a full disk: cut the part of this block that got out,
			 * so the file ends on its last whole chunk */
			int cut = ftruncate(q->fd, (off_t)(q->base + q->st.bytes));

			(void)cut; /* if it fails, the reader stops at the cut chunk all the same */
		}
		pthread_mutex_lock(&q->lock);
		q->busy = false;
		q->queued -= b->len;
		if (err) {
			q->st.err = err;
		} else {
			q->st.bytes += b->len;
			q->st.blocks++;
			q->st.records += b->records;
			q->st.events += b->events;
		}
		if (q->spare_bytes + b->mapped <= SPARE_BYTES) {
			b->next = q->spare;
			q->spare = b;
			q->spare_bytes += b->mapped;
			b = NULL;
		}
		pthread_cond_broadcast(&q->room);
		if (b) { /* no room among the spares: unmapped outside the lock */
			pthread_mutex_unlock(&q->lock);
			block_free(b);
			pthread_mutex_lock(&q->lock);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct it_writeq *it_writeq_start(int fd, uint64_t base, size_t bound)
{
	struct it_writeq *q = calloc(1, sizeof(*q));
	sigset_t all, old;
	int err;

	if (!q)
		return NULL;
	q->fd = fd;
	q->base = base;
	q->bound = bound;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->room, NULL);
	/* signals (SIGINT, SIGUSR1) are the main thread's: it polls on them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&q->thread, NULL, writer_main, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&q->room);
		pthread_cond_destroy(&q->work);
		pthread_mutex_destroy(&q->lock);
		free(q);
		errno = err;
		return NULL;
	}
	return q;
}

int it_writeq_put(struct it_writeq *q, const void *p, size_t len, uint64_t records,
		  uint64_t events)
{
	struct block *b = block_new(q, len);
	uint64_t since = 0;
	int err;

	if (!b)
		return -ENOMEM;
	b->records = records;
	b->events = events;
	memcpy(b->data, p, len);
	pthread_mutex_lock(&q->lock);
	while (!q->st.err && q->queued && q->queued + len > q->bound) {
		if (!since)
			since = mono_ns();
		pthread_cond_wait(&q->room, &q->lock);
	}
	if (since) {
		q->st.waits++;
		q->st.wait_ns += mono_ns() - since;
	}
	err = q->st.err;
	if (!err) {
		if (q->tail)
			q->tail->next = b;
		else
			q->head = b;
		q->tail = b;
		q->queued += len;
		if (q->queued > q->st.peak)
			q->st.peak = q->queued;
		b = NULL;
		pthread_cond_signal(&q->work);
	}
	pthread_mutex_unlock(&q->lock);
	block_free(b);
	return err;
}

void it_writeq_sync(struct it_writeq *q, struct it_writeq_stats *st)
{
	pthread_mutex_lock(&q->lock);
	while (q->head || q->busy)
		pthread_cond_wait(&q->room, &q->lock);
	*st = q->st;
	pthread_mutex_unlock(&q->lock);
}

int it_writeq_stop(struct it_writeq *q)
{
	int err;

	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	err = q->st.err;
	free_blocks(q->head);
	free_blocks(q->spare);
	pthread_cond_destroy(&q->room);
	pthread_cond_destroy(&q->work);
	pthread_mutex_destroy(&q->lock);
	free(q);
	return err;
}
