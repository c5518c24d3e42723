// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The recording's spool (spool.h): each ring's records appended to a file
 * that is a ring itself, read back by a twin of the ring's set (evring.h)
 * over the file's two mappings, in time order across the sets.
 */
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "evring.h"

/* Handed on a millisecond at a time across the sets: the trace file is
 * then in time order across them to within that (the report allows 10 ms). */
#define SLICE_NS 1000000ull
/* Space handed on is punched out of a file (and out of our mappings) by
 * this much at least. */
#define PUNCH_STEP (1ul << 20)
/* A spool smaller than this is not worth it (the rings hold 2 MiB). */
#define SPOOL_MIN (16ull << 20)

struct file_ring {
	int fd;
	unsigned char *base;       /* the file mapped twice in a row */
	unsigned long cons, prod;  /* handed on (the reader's), taken (ours) */
	unsigned long punched;     /* positions below it are holes */
};

struct set {
	struct it_spool *sp;
	struct it_evring *live, *reader;
	struct file_ring *f;
	unsigned int n;
};

struct it_spool {
	struct set *sets;
	unsigned int nsets;
	size_t size;               /* each file's ring: a power of two >= bytes */
	uint64_t bytes;            /* the bound of what it holds, all files */
	uint64_t held, peak, total;
	uint64_t cursor;           /* handed on up to this time */
	uint64_t taken_at;         /* the last take's clock */
};

static int write_at(int fd, const unsigned char *p, size_t len, off_t at)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		at += n;
	}
	return 0;
}

/* A run of ring i's records to the end of its file ring. */
static int put(void *ctx, unsigned int i, const void *bytes, size_t len)
{
	struct set *set = ctx;
	struct it_spool *sp = set->sp;
	struct file_ring *f = &set->f[i];
	size_t at = f->prod & (sp->size - 1), first = len < sp->size - at ? len : sp->size - at;
	int err;

	if (sp->held + len > sp->bytes)
		return -EAGAIN;
	err = write_at(f->fd, bytes, first, (off_t)at);
	if (!err && len > first)
		err = write_at(f->fd, (const unsigned char *)bytes + first, len - first, 0);
	if (err)
		return err;
	f->prod += len;
	sp->held += len;
	sp->total += len;
	if (sp->held > sp->peak)
		sp->peak = sp->held;
	return 0;
}

long it_spool_take(struct it_spool *sp, uint64_t now)
{
	long n = 0;

	sp->taken_at = now;
	for (unsigned int k = 0; k < sp->nsets; k++) {
		long m = it_evring_take(sp->sets[k].live, put, &sp->sets[k]);

		if (m < 0)
			return m;
		n += m;
	}
	return n;
}

/* What is held, from the readers' positions (moved by their drains). */
static void count_held(struct it_spool *sp)
{
	sp->held = 0;
	for (unsigned int k = 0; k < sp->nsets; k++)
		for (unsigned int i = 0; i < sp->sets[k].n; i++)
			sp->held += sp->sets[k].f[i].prod - sp->sets[k].f[i].cons;
}

/* Frees the space handed on: the file's blocks and our mappings' pages
 * (punching does both; where the file system cannot, the pages at least). */
static void punch(struct it_spool *sp, struct file_ring *f)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long done = f->cons & ~(unsigned long)(page - 1);

	while (done - f->punched >= PUNCH_STEP) {
		size_t at = f->punched & (sp->size - 1), len = done - f->punched;

		if (len > sp->size - at)
			len = sp->size - at;
		if (fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)at,
			      (off_t)len)) {
			madvise(f->base + at, len, MADV_DONTNEED);
			madvise(f->base + sp->size + at, len, MADV_DONTNEED);
		}
		f->punched += len;
	}
}

/* After a drain of the readers: what is still held; the space handed on
 * punched out (by the slice: the spool's pages then never pile up in our
 * mappings while a long recording is packed at its end). */
static void handed_on(struct it_spool *sp)
{
	count_held(sp);
	for (unsigned int k = 0; k < sp->nsets; k++)
		for (unsigned int i = 0; i < sp->sets[k].n; i++)
			punch(sp, &sp->sets[k].f[i]);
}

int it_spool_hand_on(struct it_spool *sp, uint64_t upto, uint64_t max_bytes)
{
	uint64_t bound = upto == UINT64_MAX ? sp->taken_at : upto, before = sp->held;
	long err = 0;

	while (sp->cursor < bound && err >= 0) {
		uint64_t next = UINT64_MAX, t = sp->cursor + SLICE_NS;

		for (unsigned int k = 0; k < sp->nsets; k++) {
			uint64_t nx = it_evring_next(sp->sets[k].reader);

			next = nx < next ? nx : next;
		}
		if (next == UINT64_MAX)
			break; /* nothing held: a later take's records may be older */
		if (next > t)
			t = next; /* skip a quiet stretch at once */
		if (t > bound)
			t = bound;
		for (unsigned int k = 0; k < sp->nsets && err >= 0; k++)
			err = it_evring_drain(sp->sets[k].reader, t);
		sp->cursor = t;
		handed_on(sp);
		if (max_bytes && before - sp->held >= max_bytes)
			break;
	}
	if (upto == UINT64_MAX)
		for (unsigned int k = 0; k < sp->nsets && err >= 0; k++)
			err = it_evring_drain(sp->sets[k].reader, UINT64_MAX);
	handed_on(sp);
	return err < 0 ? (int)err : 0;
}

uint64_t it_spool_held(const struct it_spool *sp)
{
	return sp->held;
}

uint64_t it_spool_peak(const struct it_spool *sp)
{
	return sp->peak;
}

uint64_t it_spool_total(const struct it_spool *sp)
{
	return sp->total;
}

uint64_t it_spool_bytes(const struct it_spool *sp)
{
	return sp->bytes;
}

/* A file ring of size bytes in dir, mapped twice in a row. */
static int file_ring_open(struct file_ring *f, const char *dir, size_t size)
{
	unsigned char *base;

	f->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f->fd < 0)
		return -errno;
	if (ftruncate(f->fd, (off_t)size))
		return -errno;
	base = mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	f->base = base;
	if (mmap(base, size, PROT_READ, MAP_SHARED | MAP_FIXED, f->fd, 0) == MAP_FAILED ||
	    mmap(base + size, size, PROT_READ, MAP_SHARED | MAP_FIXED, f->fd, 0) == MAP_FAILED)
		return -errno;
	return 0;
}

struct it_spool *it_spool_new(const char *dir, struct it_evring *const *evr, unsigned int n,
			      uint64_t bytes, uint64_t now)
{
	struct it_spool *sp = calloc(1, sizeof(*sp));
	struct statvfs vfs;
	int err = 0;

	if (!sp)
		return NULL;
	/* at most half the room the file system has */
	if (!statvfs(dir, &vfs) && bytes > (uint64_t)vfs.f_bavail * vfs.f_frsize / 2)
		bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize / 2;
	sp->bytes = bytes;
	sp->size = 1 << 20;
	while (sp->size < bytes)
		sp->size *= 2;
	sp->cursor = sp->taken_at = now;
	sp->sets = calloc(n ? n : 1, sizeof(*sp->sets));
	if (bytes < SPOOL_MIN || !sp->sets) {
		err = bytes < SPOOL_MIN ? -ENOSPC : -ENOMEM;
		goto fail;
	}
	sp->nsets = n;
	for (unsigned int k = 0; k < n && !err; k++) {
		struct set *set = &sp->sets[k];

		set->sp = sp;
		set->live = evr[k];
		set->n = it_evring_count(evr[k]);
		set->reader = it_evring_twin(evr[k]);
		set->f = calloc(set->n ? set->n : 1, sizeof(*set->f));
		for (unsigned int i = 0; set->f && i < set->n; i++)
			set->f[i].fd = -1;
		if (!set->reader || !set->f) {
			err = -ENOMEM;
			break;
		}
		for (unsigned int i = 0; i < set->n && !err; i++) {
			struct file_ring *f = &set->f[i];

			err = file_ring_open(f, dir, sp->size);
			if (!err)
				it_evring_set(set->reader, i, &(struct it_evring_src){
					.consumer_pos = &f->cons, .producer_pos = &f->prod,
					.data = f->base, .mask = sp->size - 1 });
		}
	}
	if (!err)
		return sp;
fail:
	it_spool_free(sp);
	errno = -err;
	return NULL;
}

void it_spool_free(struct it_spool *sp)
{
	if (!sp)
		return;
	for (unsigned int k = 0; k < sp->nsets; k++) {
		struct set *set = &sp->sets[k];

		for (unsigned int i = 0; set->f && i < set->n; i++) {
			if (set->f[i].base)
				munmap(set->f[i].base, 2 * sp->size);
			if (set->f[i].fd >= 0)
				close(set->f[i].fd);
		}
		free(set->f);
		it_evring_free(set->reader); /* maps nothing of its own */
	}
	free(sp->sets);
	free(sp);
}
