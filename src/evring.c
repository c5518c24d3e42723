// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Per-CPU event rings read in place and merged by time (evring.h). The
 * ring layout is the kernel's (kernel/bpf/ringbuf.c, as libbpf reads it):
 * an 8-byte header per record (length with a busy and a discard bit, then
 * a page offset), records 8-byte aligned; the consumer position on the
 * first page (read-write), the producer position on the next, the data
 * after it, mapped twice.
 */
#include "evring.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bpf.h> /* BPF_RINGBUF_BUSY_BIT, _DISCARD_BIT, _HDR_SZ */

struct ring {
	struct it_evring_src src;
	unsigned long cons;            /* where the next record starts */
	unsigned long prod;            /* the producer position last read */
	unsigned long given;           /* the consumer position last written */
	const unsigned char *head;     /* that record's data, NULL: none ready */
	uint32_t head_len;
	uint64_t head_ts;
	void *map_cons, *map_prod;     /* what it_evring_map mapped */
	size_t prod_len;
	int fd;
};

struct it_evring {
	struct ring *rings;
	unsigned int n;
	unsigned int *heap;            /* rings with a due record, earliest first */
	it_evring_fn fn;
	it_evring_key key;
	void *ctx;
};

struct it_evring *it_evring_new(unsigned int n, it_evring_fn fn, it_evring_key key, void *ctx)
{
	struct it_evring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->rings = calloc(n ? n : 1, sizeof(*r->rings));
	r->heap = calloc(n ? n : 1, sizeof(*r->heap));
	if (!r->rings || !r->heap) {
		free(r->rings);
		free(r->heap);
		free(r);
		return NULL;
	}
	for (unsigned int i = 0; i < n; i++)
		r->rings[i].fd = -1;
	r->n = n;
	r->fn = fn;
	r->key = key;
	r->ctx = ctx;
	return r;
}

void it_evring_set(struct it_evring *r, unsigned int i, const struct it_evring_src *src)
{
	r->rings[i].src = *src;
	r->rings[i].cons = *src->consumer_pos;
	r->rings[i].prod = r->rings[i].given = r->rings[i].cons;
}

int it_evring_map(struct it_evring *r, unsigned int i, int fd, size_t bytes)
{
	struct ring *g = &r->rings[i];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *cons, *prod;

	if (!bytes || (bytes & (bytes - 1)) || bytes % page)
		return -EINVAL;
	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page + 2 * bytes, PROT_READ, MAP_SHARED, fd, (off_t)page);
	if (prod == MAP_FAILED) {
		int err = -errno;

		munmap(cons, page);
		return err;
	}
	g->map_cons = cons;
	g->map_prod = prod;
	g->prod_len = page + 2 * bytes;
	g->fd = fd;
	it_evring_set(r, i, &(struct it_evring_src){
		.consumer_pos = cons, .producer_pos = prod,
		.data = (const unsigned char *)prod + page, .mask = bytes - 1 });
	return 0;
}

int it_evring_fd(const struct it_evring *r, unsigned int i)
{
	return i < r->n ? r->rings[i].fd : -1;
}

unsigned int it_evring_count(const struct it_evring *r)
{
	return r->n;
}

/* The ring's next committed record into head (discarded ones are stepped
 * over): false when it has none yet (empty, or the next is busy). The
 * producer position is read again only when the records below the last
 * value read are used up: its cache line is written by the producing CPU
 * at every record, and reading it at every record missed the cache each
 * time (half of peek's samples in perf, 2026-11-25). */
static bool peek(const struct it_evring *r, struct ring *g)
{
	g->head = NULL;
	if (g->cons >= g->prod)
		g->prod = __atomic_load_n(g->src.producer_pos, __ATOMIC_ACQUIRE);
	while (g->cons < g->prod) {
		const unsigned char *p = g->src.data + (g->cons & g->src.mask);
		uint32_t len = __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			return false;
		if (len & BPF_RINGBUF_DISCARD_BIT) {
			g->cons += (len - BPF_RINGBUF_DISCARD_BIT + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
			continue;
		}
		g->head = p + BPF_RINGBUF_HDR_SZ;
		g->head_len = len;
		g->head_ts = 0;
		if (r->key)
			g->head_ts = r->key(g->head, len);
		else if (len >= sizeof(uint64_t))
			memcpy(&g->head_ts, g->head, sizeof(g->head_ts));
		return true;
	}
	return false;
}

/* Gives the space read so far back to the producer. */
static void give_back(struct ring *g)
{
	if (g->given != g->cons) {
		__atomic_store_n(g->src.consumer_pos, g->cons, __ATOMIC_RELEASE);
		g->given = g->cons;
	}
}

/* Past the head record. Its space goes back to the producer by the eighth
 * of the ring and at the end of a drain, not record by record: the
 * producer reads the consumer position at every record it places, and a
 * write here at every record took that cache line away from it each time. */
static void advance(struct ring *g)
{
	g->cons += (g->head_len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
	if (g->cons - g->given > (g->src.mask + 1) / 8)
		give_back(g);
}

static bool earlier(const struct it_evring *r, unsigned int a, unsigned int b)
{
	const struct ring *x = &r->rings[a], *y = &r->rings[b];

	/* equal times: the lower ring first, so that a drain is deterministic */
	return x->head_ts < y->head_ts || (x->head_ts == y->head_ts && a < b);
}

static void sift_down(struct it_evring *r, unsigned int len, unsigned int at)
{
	for (;;) {
		unsigned int l = 2 * at + 1, m = at, t;

		if (l < len && earlier(r, r->heap[l], r->heap[m]))
			m = l;
		if (l + 1 < len && earlier(r, r->heap[l + 1], r->heap[m]))
			m = l + 1;
		if (m == at)
			return;
		t = r->heap[at];
		r->heap[at] = r->heap[m];
		r->heap[m] = t;
		at = m;
	}
}

long it_evring_drain(struct it_evring *r, uint64_t upto_ns)
{
	unsigned int len = 0;
	long done = 0;
	int err = 0;

	for (unsigned int i = 0; i < r->n; i++) {
		struct ring *g = &r->rings[i];

		if (g->src.data && peek(r, g) && g->head_ts <= upto_ns)
			r->heap[len++] = i;
	}
	for (unsigned int i = len / 2; i-- > 0;)
		sift_down(r, len, i);
	while (len) {
		struct ring *g = &r->rings[r->heap[0]];

		err = r->fn(r->ctx, (void *)g->head, g->head_len);
		advance(g);
		if (err < 0)
			break;
		done++;
		if (!peek(r, g) || g->head_ts > upto_ns)
			r->heap[0] = r->heap[--len];
		sift_down(r, len, 0);
	}
	for (unsigned int i = 0; i < r->n; i++)
		give_back(&r->rings[i]);
	return err < 0 ? err : done;
}

void it_evring_free(struct it_evring *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!r)
		return;
	for (unsigned int i = 0; i < r->n; i++) {
		struct ring *g = &r->rings[i];

		if (g->map_prod)
			munmap(g->map_prod, g->prod_len);
		if (g->map_cons)
			munmap(g->map_cons, page);
		if (g->fd >= 0)
			close(g->fd);
	}
	free(r->rings);
	free(r->heap);
	free(r);
}
