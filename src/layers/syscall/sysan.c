// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer's analysis (see sysan.h). Tables keyed by u64 use the
 * analyzer's open-addressing map; names are interned once in a string
 * pool; per-call, per-file and per-thread sums are streamed. A call waits
 * in a queue (file order) until what it needs has been handed in: its
 * side records, and every block trail its thread may have queued during
 * it (the block watermark); nothing is kept per call once it is summed,
 * unless the event list was asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/hashmap.h"
#include "analyze/sort.h"
#include "layers/syscall/sysan.h"

/* A trail of a thread that queued bios, while a call of the thread may
 * still own it. */
struct btrail {
	uint32_t tid;
	uint32_t comm;
	uint32_t bytes;
	uint32_t fsdev;  /* file of its pages (ino != 0) */
	uint8_t owned;
	uint8_t op;
	uint64_t q, c;
	uint64_t ino;
};

/* The name arguments of one call, waiting for it: (tid, ts_enter), its
 * names in the order they came (which: 0 path, 1 second path, 2 xattr
 * name). The call takes them and frees the slot: pending names are the
 * calls in flight in the file, plus those whose call was lost. */
#define NAMES_PER_CALL 4
struct pending_name {
	uint64_t ts_enter;
	uint32_t tid;
	uint8_t n;
	uint8_t extra;   /* names past NAMES_PER_CALL, never used */
	uint8_t which[NAMES_PER_CALL];
	const char *s[NAMES_PER_CALL];
};

struct comm_rec {
	uint64_t ts;
	uint32_t tid, pid;
	char comm[16];
};

/* A call summed up but for its block I/O, waiting in its thread's queue
 * until no trail the thread queued during it can still come. */
struct bcall {
	uint64_t ts_enter, ts_exit;
	uint32_t tid, pid;
	uint32_t ev;      /* its index in r.events, EV_QUEUED, or UINT32_MAX */
	uint16_t call;
	uint64_t seq;     /* its place in the publication queue (see struct pubcall) */
};

/* A thread's trails that a call of it may still own, by queue time:
 * v[head..n). Calls of a thread come in the order it made them, so once
 * a call that entered at frontier is summed up, no later call owns a
 * trail queued before it: such a trail is settled (retire). A thread that
 * makes no call (a kworker, writeback) never moves its frontier: the
 * sweep moves it (see sweep). Its calls waiting for their block part,
 * calls[chead..cn), in the order it made them: they wait for the trails
 * of this thread still open (open_q: the oldest one's queue time at the
 * block layer's last word, when open_gen is that word's), not for other
 * threads' (a trail whose completion was lost holds the block watermark
 * back for a minute: every call of every thread would wait). */
struct tid_trails {
	uint32_t tid;
	uint64_t frontier;
	struct btrail *v;
	size_t head, n, cap;
	uint64_t open_q, open_gen;
	struct bcall *calls;
	size_t chead, cn, ccap;
};

/* A settled trail of a file (its page cache), kept to the end: which of
 * the file's tags names it depends on every tag (tag_at). */
struct ftrail {
	uint64_t q, q2c;
	uint32_t bytes;
	uint8_t op, owned;
};

/* They wait in a spill file, not in memory: one per block I/O of a file,
 * so memory grew with the trace (2.2 GB for the report of an hour of a
 * busy machine, bench/longrun.sh). In memory (inode_trails.v) only when no
 * temporary file can be made. */
struct spilled {
	uint32_t ino;                /* index in inov */
	uint32_t bytes;
	uint8_t op, owned, pad[6];
	uint64_t q, q2c;
};

struct inode_trails {
	uint32_t fsdev;
	uint64_t ino;
	struct ftrail *v;
	size_t n, cap;
};

/* A call waiting for its side records, and the side epoch it came in. */
struct qcall {
	struct it_sys_event e;
	uint64_t epoch;
};

/* A call's block part, published (opts.on_call, opts.on_event) in the
 * order the calls came in the file, whatever order their threads' queues
 * let them be summed up in: a ring of them from the first one not yet
 * published (seq pseq), kept only when someone listens. */
struct pubcall {
	struct bcall b;
	uint64_t block_ns;
	uint32_t bios;
	uint8_t done;
};

/* Trails queued this long before the processed point are settled even
 * when their thread made no call since: the block layer's HORIZON_NS
 * (src/analyze/layer_block.c), the same bet that no call lasts longer.
 * Swept once the processed point has moved on by SWEEP_NS. */
#define TRAIL_HORIZON_NS (60ull * 1000000000ull)
#define SWEEP_NS 1000000000ull

/* Per-thread calls over time are counted in base buckets of base_ns (1 ms,
 * times ten whenever a thread's calls reach past TL_BUCKETS of them): the
 * report's interval, chosen from the span at the end, is a multiple of
 * the base (1, 2 or 5 times a power of ten, over a twentieth of the
 * span), so the base buckets add up to it exactly. The base B was made
 * for a call that entered at least TL_BUCKETS * B / 10 into the span, so
 * the interval's power of ten, over a hundredth of the span, is over
 * 0.128 B: B or more. More buckets would buy nothing, and cost 8 bytes
 * each for every thread (2048 cost 530 MB for the 32,461 thread ids of an
 * hour of a busy machine, each reused all hour long). The block I/O of
 * processes over time has a base of its own, BTL_BUCKETS of them: an
 * I/O may complete after the span's end (a cut trace ends with its last
 * call), so the same bound does not hold for it. */
#define TL_BUCKETS 128
#define BTL_BUCKETS 2048

/* bcall.ev of a streamed event: the one at the head of the event queue
 * (the calls waiting for their block part and their events are in the
 * same order). */
#define EV_QUEUED (UINT32_MAX - 1)

/* b[i] counts base bucket first + i: a short-lived thread (a compiler,
 * a shell) keeps a few buckets, not every one from the trace's start. */
struct tl_buckets {
	uint64_t *b;
	size_t first, n;
};

/* Block I/O of one process (the tgid that queued its bios), over time. */
struct bproc {
	uint32_t pid, comm;
	uint64_t ios, bytes;
};

struct it_sysan {
	struct it_sysan_opts o;
	struct it_sysan_results r;
	int error;

	/* string pool: chunks of 64 KiB, each string once (strs: its hash
	 * -> index in strv), so names repeated by many calls cost nothing
	 * more */
	char **pool;
	size_t npool, pool_used;
	struct it_map strs;
	const char **strv;
	size_t nstrs, strcap;

	/* side records, block trails */
	struct it_map tags;          /* tag hash -> index in tagv */
	struct { uint64_t ino, ts; uint32_t dev; uint8_t ftype; const char *path; } *tagv;
	size_t ntags, tagcap;
	struct it_map names;         /* (tid, ts_enter) hash -> index in namev */
	struct pending_name *namev;
	size_t nnames, namecap;
	uint32_t free_name;          /* first free slot of namev (chained by tid), or UINT32_MAX */
	struct comm_rec *comms;      /* tid -> comm history, sorted at the end */
	size_t ncomms, commcap;
	struct it_map tidcomm;       /* tid + 1 -> index in tcv of its latest comm */
	/* a thread's comms, interned, newest first through prev (UINT32_MAX: none) */
	struct { uint64_t ts; const char *comm; uint32_t prev; } *tcv;
	size_t ntcv, tcvcap;
	/* streamed events (opts.on_event) waiting for their block part */
	struct it_sysan_event *evq;
	size_t evhead, evlen, evqcap;
	struct it_map titles;        /* pid + 1 -> index in titlev */
	const char **titlev;
	size_t ntitles, titlecap;
	struct it_map trail_tid;     /* tid + 1 -> index in tidv */
	struct tid_trails *tidv;
	size_t ntids, tidcap;
	uint32_t last_tid, last_tidx; /* the thread of the last lookup */
	/* settled trails of files, by (fsdev, ino) */
	struct it_map inodes;        /* inode key -> index in inov */
	struct inode_trails *inov;
	size_t ninos, inocap;
	uint32_t last_ino;           /* index of the last inode looked up, or IT_MAP_NONE */
	FILE *spill;                 /* struct spilled records, unlinked ($TMPDIR or /tmp) */
	bool spill_tried;
	/* settled trails by owner (the background sums) */
	struct it_map bg_comm, un_comm;
	size_t bgcap, uncap;

	/* calls waiting for their side records (a ring, in file order),
	 * then for their block trails (in their thread's queue: waiting
	 * lists the threads whose queue is not empty, by index in tidv) */
	struct qcall *q;
	size_t qhead, qlen, qcap;
	uint32_t *waiting;
	size_t nwaiting, waitcap, npending;
	struct pubcall *pub;         /* see struct pubcall */
	size_t phead, plen, pcap;
	uint64_t pseq;
	uint64_t side_epoch;         /* side chunks handed in */
	/* every trail queued before it is in, but the open ones of the
	 * block layer's last word (generation open_gen, see tid_trails) */
	uint64_t block_wm;
	uint64_t open_gen;
	uint64_t last_exit;          /* the latest exit of the call records */
	uint64_t processed;          /* the latest exit of the calls whose block part is summed up */
	uint64_t swept;              /* processed at the last sweep */
	size_t live_trails, live_peak; /* trails waiting for a call of their thread */

	/* sums */
	struct it_sysan_call calls[IT_SYS_MAX];
	struct it_map files;         /* file key -> index in r.files */
	size_t filecap;
	struct it_map threads;       /* tid -> index in r.threads */
	size_t threadcap, evcap;
	struct it_map procs;         /* pid + 1 -> index in r.procs */
	size_t proccap;
	struct tl_buckets *tl;       /* per thread (as r.threads): calls, base buckets */
	size_t tlcap;
	struct it_map bprocs;        /* pid + 1 -> index in bprocv and btl */
	struct bproc *bprocv;
	struct tl_buckets *btl;      /* per bproc: block I/O by completion, base buckets */
	size_t nbprocs, bproccap, btlcap;
	uint64_t base_ns, bbase_ns;  /* of tl, of btl */
};

/* Makes room for need elements (first of them at first); false (and
 * *error set) when memory ran out, the array left as it was. */
static bool grow_to(void **p, size_t *cap, size_t need, size_t size, size_t first, int *error)
{
	size_t ncap;
	void *q;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : first;
	while (ncap < need)
		ncap *= 2;
	q = realloc(*p, ncap * size);
	if (!q) {
		*error = 1;
		return false;
	}
	*p = q;
	*cap = ncap;
	return true;
}

#define GROW(s, arr, n, cap) grow_to((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)), 256, &(s)->error)
/* The same for an array each thread has (its trails, its calls waiting):
 * a busy machine's report has tens of thousands of threads. */
#define THREAD_ARRAY 16
#define GROW_SMALL(s, arr, n, cap) \
	grow_to((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)), 4, &(s)->error)

static uint64_t mix(uint64_t a, uint64_t b);

/* FNV-1a of len bytes. */
static uint64_t bytes_hash(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
	return h;
}

static const char *pool_add(struct it_sysan *s, const char *str, size_t len)
{
	char *dst;

	if (!s->npool || s->pool_used + len + 1 > 65536) {
		char **np = realloc(s->pool, (s->npool + 1) * sizeof(*np));
		if (!np || !(np[s->npool] = malloc(65536))) {
			s->error = 1;
			if (np)
				s->pool = np;
			return "";
		}
		s->pool = np;
		s->npool++;
		s->pool_used = 0;
	}
	dst = s->pool[s->npool - 1] + s->pool_used;
	memcpy(dst, str, len);
	dst[len] = 0;
	s->pool_used += len + 1;
	return dst;
}

/* The pooled copy of str (len bytes), the same one for the same bytes. */
static const char *intern(struct it_sysan *s, const char *str, size_t len)
{
	uint64_t k;
	uint32_t i;
	const char *dst;

	len = strnlen(str, len < 65535 ? len : 65535); /* as C strings they are read */
	k = mix(bytes_hash(str, len), 0x5e);
	/* a hash key: step to the next one on a collision */
	while ((i = it_map_get(&s->strs, k)) != IT_MAP_NONE &&
	       (strncmp(s->strv[i], str, len) || s->strv[i][len]))
		k = mix(k, 0x2f);
	if (i != IT_MAP_NONE)
		return s->strv[i];
	if (!GROW(s, s->strv, s->nstrs, s->strcap))
		return "";
	dst = pool_add(s, str, len);
	if (!*dst && len) /* memory ran out */
		return dst;
	s->strv[s->nstrs] = dst;
	if (it_map_put(&s->strs, k, (uint32_t)s->nstrs)) {
		s->error = 1;
		return dst;
	}
	s->nstrs++;
	return dst;
}

/* Nonzero 64-bit keys for the maps (0 means an empty slot). */
static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull + (a << 6) + (a >> 2));

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 32;
	return h ? h : 1;
}

/* FNV-1a: a file known by name only is keyed by the name's content. */
static uint64_t str_key(const char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*p)
		h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
	return mix(h, 0x51);
}

static uint64_t tag_key(uint32_t dev, uint64_t ino, uint64_t ts)
{
	return mix(mix(dev, ino), ts);
}

/* ---- names and helpers ---- */

static const char *const call_names[IT_SYS_MAX] = {
#define NAME_(ID, V, nm, ...) [V] = #nm,
	IT_SYS_CALLS(NAME_)
	IT_SYS_URING_CALLS(NAME_)
#undef NAME_
};

#define HAS_OFF_(ID, V, nm, tp, grp, fd, p, p2, off, cnt, fl, md, wh, ax, knd) \
	[V] = IT_A_##off != IT_A_N || ((knd) & (IT_SK_FPOS | IT_SK_POS_OR_FPOS)),
#define HAS_CNT_(ID, V, nm, tp, grp, fd, p, p2, off, cnt, fl, md, wh, ax, knd) \
	[V] = IT_A_##cnt != IT_A_N || ((knd) & IT_SK_IOV),
static const bool has_off[IT_SYS_MAX] = {
	IT_SYS_CALLS(HAS_OFF_)
	[IT_SYS_URING_READ] = 1, [IT_SYS_URING_WRITE] = 1, [IT_SYS_URING_READV] = 1,
	[IT_SYS_URING_WRITEV] = 1, [IT_SYS_URING_READ_FIXED] = 1, [IT_SYS_URING_WRITE_FIXED] = 1,
};
static const bool has_cnt[IT_SYS_MAX] = {
	IT_SYS_CALLS(HAS_CNT_)
	[IT_SYS_URING_READ] = 1, [IT_SYS_URING_WRITE] = 1, [IT_SYS_URING_READV] = 1,
	[IT_SYS_URING_WRITEV] = 1, [IT_SYS_URING_READ_FIXED] = 1, [IT_SYS_URING_WRITE_FIXED] = 1,
};
#undef HAS_OFF_
#undef HAS_CNT_

bool it_sys_call_has_offset(unsigned call)
{
	return call < IT_SYS_MAX && has_off[call];
}

bool it_sys_call_has_count(unsigned call)
{
	return call < IT_SYS_MAX && has_cnt[call];
}

const char *it_sys_call_name(unsigned call)
{
	return call < IT_SYS_MAX ? call_names[call] : NULL;
}

const char *it_sys_file_type_name(unsigned ft)
{
	static const char *const n[] = { "", "reg", "dir", "chr", "blk", "fifo", "lnk", "sock",
					 "other" };

	return ft < sizeof(n) / sizeof(n[0]) ? n[ft] : "other";
}

bool it_sys_call_is_read(unsigned c)
{
	switch (c) {
	case IT_SYS_READ: case IT_SYS_PREAD64: case IT_SYS_READV: case IT_SYS_PREADV:
	case IT_SYS_PREADV2: case IT_SYS_URING_READ: case IT_SYS_URING_READV:
	case IT_SYS_URING_READ_FIXED:
		return true;
	default:
		return false;
	}
}

bool it_sys_call_is_sync(unsigned c)
{
	return c == IT_SYS_FSYNC || c == IT_SYS_FDATASYNC;
}

bool it_sys_call_is_write(unsigned c)
{
	switch (c) {
	case IT_SYS_WRITE: case IT_SYS_PWRITE64: case IT_SYS_WRITEV: case IT_SYS_PWRITEV:
	case IT_SYS_PWRITEV2: case IT_SYS_URING_WRITE: case IT_SYS_URING_WRITEV:
	case IT_SYS_URING_WRITE_FIXED:
		return true;
	default:
		return false;
	}
}

size_t it_sys_path_join(const struct it_sys_path *p, const char *comps, char *out, size_t len)
{
	const char *c[IT_PATH_DEPTH];
	size_t n = 0, off = 0, w = 0;

	if (!len)
		return 0;
	while (off < p->len && n < IT_PATH_DEPTH) {
		size_t l = strnlen(comps + off, p->len - off);
		c[n++] = comps + off;
		off += l + 1;
	}
	if (!n) {
		static const char *const pseudo[] = { [IT_FT_FIFO] = "pipe", [IT_FT_SOCK] = "socket" };
		const char *kind = p->ftype < sizeof(pseudo) / sizeof(pseudo[0]) && pseudo[p->ftype] ?
				   pseudo[p->ftype] : p->ftype == IT_FT_DIR ? NULL : "anon_inode";
		int k = kind ? snprintf(out, len, "%s:[%llu]", kind, (unsigned long long)p->ino) :
			       snprintf(out, len, "/");
		return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
	}
	for (size_t i = n; i-- > 0 && w + 1 < len;) {
		size_t l = strnlen(c[i], comps + p->len - c[i]);
		out[w++] = '/';
		if (l > len - 1 - w)
			l = len - 1 - w;
		memcpy(out + w, c[i], l);
		w += l;
	}
	out[w] = 0;
	return w;
}

/* ---- side records and trails ---- */

/* A step of 1, 2 or 5 times a power of ten that cuts the span into at
 * most ~20 intervals (at least 1 ms). */
static uint64_t pick_interval(uint64_t span)
{
	uint64_t step = 1000000;

	for (;;) {
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3)
			if (span / (step * m) < 20)
				return step * m;
		step *= 10;
	}
}


struct it_sysan *it_sysan_new(const struct it_sysan_opts *o)
{
	struct it_sysan *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = *o;
	s->block_wm = o->block ? 0 : UINT64_MAX;
	s->open_gen = 1; /* a thread's open_q counts once set: its open_gen starts at 0 */
	s->base_ns = o->interval_ns ? o->interval_ns : 1000000;
	s->bbase_ns = s->base_ns;
	s->last_tidx = IT_MAP_NONE;
	s->last_ino = IT_MAP_NONE;
	s->free_name = UINT32_MAX;
	if (it_map_init(&s->tags, 10) || it_map_init(&s->strs, 10) || it_map_init(&s->names, 10) ||
	    it_map_init(&s->trail_tid, 8) || it_map_init(&s->files, 8) ||
	    it_map_init(&s->threads, 8) || it_map_init(&s->inodes, 6) ||
	    it_map_init(&s->titles, 6) || it_map_init(&s->procs, 6) ||
	    it_map_init(&s->bprocs, 6) || it_map_init(&s->tidcomm, 6) ||
	    it_map_init(&s->bg_comm, 6) || it_map_init(&s->un_comm, 6)) {
		it_sysan_free(s);
		return NULL;
	}
	for (unsigned c = 0; c < IT_SYS_MAX; c++) {
		s->calls[c].call = c;
		it_hist_init(&s->calls[c].lat);
		it_hist_init(&s->calls[c].block);
		it_hist_init(&s->calls[c].above);
	}
	return s;
}

static int side_path(struct it_sysan *s, const struct it_sys_path *p, size_t len)
{
	char buf[IT_PATH_MAX + 64];
	uint64_t k;

	if (len < sizeof(*p) || p->len > len - sizeof(*p))
		return -1;
	k = tag_key(p->dev, p->ino, p->tag_ts);
	if (it_map_get(&s->tags, k) != IT_MAP_NONE)
		return 0;
	if (!GROW(s, s->tagv, s->ntags, s->tagcap))
		return -1;
	it_sys_path_join(p, (const char *)(p + 1), buf, sizeof(buf));
	s->tagv[s->ntags].ino = p->ino;
	s->tagv[s->ntags].ts = p->tag_ts;
	s->tagv[s->ntags].dev = p->dev;
	s->tagv[s->ntags].ftype = p->ftype;
	s->tagv[s->ntags].path = intern(s, buf, strlen(buf));
	if (it_map_put(&s->tags, k, s->ntags))
		return s->error = 1, -1;
	s->ntags++;
	return 0;
}

/* The pending names of (tid, ts_enter): a hash key, stepped on a
 * collision; *slot its index in namev or IT_MAP_NONE. */
static uint64_t names_key(const struct it_sysan *s, uint32_t tid, uint64_t ts_enter,
			  uint32_t *slot)
{
	uint64_t k = mix(tid, ts_enter);
	uint32_t i;

	while ((i = it_map_get(&s->names, k)) != IT_MAP_NONE &&
	       (s->namev[i].tid != tid || s->namev[i].ts_enter != ts_enter))
		k = mix(k, 0x3f);
	*slot = i;
	return k;
}

static int side_name(struct it_sysan *s, const struct it_sys_name *n, size_t len)
{
	struct pending_name *pn;
	uint32_t i;
	uint64_t k;

	if (len < sizeof(*n) || n->len > len - sizeof(*n))
		return -1;
	k = names_key(s, n->tid, n->ts_enter, &i);
	if (i == IT_MAP_NONE) {
		if (s->free_name != UINT32_MAX) {
			i = s->free_name;
			s->free_name = s->namev[i].tid;
		} else {
			if (!GROW(s, s->namev, s->nnames, s->namecap))
				return -1;
			i = (uint32_t)s->nnames++;
		}
		s->namev[i] = (struct pending_name){ .ts_enter = n->ts_enter, .tid = n->tid };
		if (it_map_put(&s->names, k, i))
			return s->error = 1, -1;
	}
	pn = &s->namev[i];
	if (pn->n == NAMES_PER_CALL) {
		pn->extra++;
		return 0;
	}
	pn->which[pn->n] = n->which;
	pn->s[pn->n++] = intern(s, (const char *)(n + 1), n->len);
	return 0;
}

static int side_task(struct it_sysan *s, const struct it_sys_task *t, size_t len)
{
	if (len < sizeof(*t) || !GROW(s, s->comms, s->ncomms, s->commcap))
		return -1;
	uint32_t last = it_map_get(&s->tidcomm, (uint64_t)t->tid + 1);

	s->comms[s->ncomms].ts = t->ts;
	s->comms[s->ncomms].tid = t->tid;
	s->comms[s->ncomms].pid = t->pid;
	memcpy(s->comms[s->ncomms].comm, t->comm, 16);
	s->ncomms++;
	/* the thread's comms as they come, for the streamed events */
	if (!GROW(s, s->tcv, s->ntcv, s->tcvcap))
		return -1;
	s->tcv[s->ntcv].ts = t->ts;
	s->tcv[s->ntcv].comm = intern(s, t->comm, strnlen(t->comm, sizeof(t->comm)));
	s->tcv[s->ntcv].prev = last;
	if (it_map_put(&s->tidcomm, (uint64_t)t->tid + 1, s->ntcv))
		return s->error = 1, -1;
	s->ntcv++;
	return 0;
}

static int side_title(struct it_sysan *s, const struct it_sys_title *t, size_t len)
{
	if (len < sizeof(*t) || t->len > len - sizeof(*t))
		return -1;
	if (it_map_get(&s->titles, (uint64_t)t->pid + 1) != IT_MAP_NONE)
		return 0;
	if (!GROW(s, s->titlev, s->ntitles, s->titlecap))
		return -1;
	s->titlev[s->ntitles] = intern(s, (const char *)(t + 1), t->len);
	if (it_map_put(&s->titles, (uint64_t)t->pid + 1, s->ntitles))
		return s->error = 1, -1;
	s->ntitles++;
	return 0;
}

int it_sysan_side(struct it_sysan *s, const void *rec, size_t len)
{
	uint16_t type;

	if (len < sizeof(type))
		return -1;
	memcpy(&type, rec, sizeof(type));
	switch (type) {
	case IT_SREC_PATH: return side_path(s, rec, len);
	case IT_SREC_NAME: return side_name(s, rec, len);
	case IT_SREC_TASK: return side_task(s, rec, len);
	case IT_SREC_TITLE: return side_title(s, rec, len);
	default: return -1;
	}
}

/* The trail list of thread tid, made when missing; NULL when memory ran out. */
static struct tid_trails *tid_of(struct it_sysan *s, uint32_t tid)
{
	uint32_t k;

	if (s->last_tidx != IT_MAP_NONE && s->last_tid == tid)
		return &s->tidv[s->last_tidx];
	k = it_map_get(&s->trail_tid, (uint64_t)tid + 1);
	if (k == IT_MAP_NONE) {
		if (!GROW(s, s->tidv, s->ntids, s->tidcap))
			return NULL;
		k = (uint32_t)s->ntids;
		if (it_map_put(&s->trail_tid, (uint64_t)tid + 1, k)) {
			s->error = 1;
			return NULL;
		}
		s->tidv[s->ntids++] = (struct tid_trails){ .tid = tid };
	}
	s->last_tid = tid;
	s->last_tidx = k;
	return &s->tidv[k];
}

/* Adds trail t to the per-comm list *v (map m: comm -> index). */
static void by_comm(struct it_sysan *s, struct it_map *m, struct it_sysan_background **v,
		    size_t *n, size_t *cap, const struct btrail *t)
{
	uint32_t k = it_map_get(m, (uint64_t)t->comm + 1);

	if (k == IT_MAP_NONE) {
		if (!GROW(s, *v, *n, *cap))
			return;
		k = (uint32_t)(*n)++;
		(*v)[k] = (struct it_sysan_background){ .comm = t->comm };
		if (it_map_put(m, (uint64_t)t->comm + 1, k))
			s->error = 1;
	}
	(*v)[k].ios++;
	(*v)[k].bytes += t->bytes;
}

/* The settled trails of (fsdev, ino), made when missing. */
static struct inode_trails *inode_of(struct it_sysan *s, uint32_t fsdev, uint64_t ino)
{
	uint64_t k = mix(mix(fsdev, ino), 0x1f);
	uint32_t i;

	if (s->last_ino != IT_MAP_NONE && s->inov[s->last_ino].ino == ino &&
	    s->inov[s->last_ino].fsdev == fsdev)
		return &s->inov[s->last_ino];
	/* a hash key: step to the next one on a collision */
	while ((i = it_map_get(&s->inodes, k)) != IT_MAP_NONE &&
	       (s->inov[i].ino != ino || s->inov[i].fsdev != fsdev))
		k = mix(k, 0x2f);
	if (i == IT_MAP_NONE) {
		if (!GROW(s, s->inov, s->ninos, s->inocap))
			return NULL;
		i = (uint32_t)s->ninos;
		if (it_map_put(&s->inodes, k, i)) {
			s->error = 1;
			return NULL;
		}
		s->inov[s->ninos++] = (struct inode_trails){ .fsdev = fsdev, .ino = ino };
	}
	s->last_ino = i;
	return &s->inov[i];
}

static FILE *spill_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	FILE *f = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/iotrail-report.XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	f = fdopen(fd, "w+b");
	if (!f)
		close(fd);
	else
		setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/* A file's settled trail, to the spill file (or to memory, see above). */
static void keep_ftrail(struct it_sysan *s, struct inode_trails *in, const struct ftrail *t)
{
	if (!s->spill_tried) {
		s->spill_tried = true;
		s->spill = spill_open();
	}
	if (s->spill) {
		struct spilled r = { .ino = (uint32_t)(in - s->inov), .bytes = t->bytes, .op = t->op,
				     .owned = t->owned, .q = t->q, .q2c = t->q2c };

		if (fwrite(&r, sizeof(r), 1, s->spill) != 1)
			s->error = 1;
	} else if (GROW(s, in->v, in->n, in->cap)) {
		in->v[in->n++] = *t;
	}
}

/* A settled trail into the sums by owner: the calls (owned), and by comm
 * what no call owns (background) and, of it, what no file explains
 * either (unattributed); a trail of a file is kept for the end. */
static void retire(struct it_sysan *s, const struct btrail *t)
{
	struct it_sysan_results *r = &s->r;

	if (t->ino) {
		struct inode_trails *f = inode_of(s, t->fsdev, t->ino);

		if (f)
			keep_ftrail(s, f, &(struct ftrail){ .q = t->q, .q2c = t->c > t->q ? t->c - t->q : 0,
							    .bytes = t->bytes, .op = t->op,
							    .owned = t->owned });
	}
	if (t->owned) {
		r->owned_ios++;
		r->owned_bytes += t->bytes;
		return;
	}
	r->background_ios++;
	r->background_bytes += t->bytes;
	by_comm(s, &s->bg_comm, &r->background, &r->nbackground, &s->bgcap, t);
	if (!t->ino) {
		r->unattributed_ios++;
		r->unattributed_bytes += t->bytes;
		by_comm(s, &s->un_comm, &r->unattributed, &r->nunattributed, &s->uncap, t);
	}
}

/* Retires the thread's trails queued before its frontier. */
static void settle(struct it_sysan *s, struct tid_trails *tt)
{
	while (tt->head < tt->n && tt->v[tt->head].q < tt->frontier) {
		retire(s, &tt->v[tt->head++]);
		s->live_trails--;
	}
	if (tt->head == tt->n) {
		tt->head = tt->n = 0;
		if (tt->cap > THREAD_ARRAY) { /* a burst held (a minute of a kworker's): let it go */
			free(tt->v);
			tt->v = NULL;
			tt->cap = 0;
		}
	} else if (tt->head > tt->n / 2) {
		memmove(tt->v, tt->v + tt->head, (tt->n - tt->head) * sizeof(*tt->v));
		tt->n -= tt->head;
		tt->head = 0;
	}
}

static void block_proc_add(struct it_sysan *s, const struct it_trail *t);

void it_sysan_trail(struct it_sysan *s, const struct it_trail *t)
{
	struct tid_trails *tt;
	struct btrail b;

	/* only a queued bio has the thread that submitted it */
	if (!t->ts[IT_PT_Q] || !t->tid || !t->ts[IT_PT_C])
		return;
	block_proc_add(s, t);
	b = (struct btrail){ .tid = t->tid, .comm = t->comm, .bytes = t->bytes, .fsdev = t->fsdev,
			     .op = t->op, .q = t->ts[IT_PT_Q], .c = t->ts[IT_PT_C], .ino = t->ino };
	tt = tid_of(s, t->tid);
	if (!tt)
		return;
	if (b.q < tt->frontier) { /* a call after it was summed up: no call owns it */
		retire(s, &b);
		return;
	}
	if (!GROW_SMALL(s, tt->v, tt->n, tt->cap))
		return;
	/* kept sorted by q: trails complete about in the order they were
	 * queued, so this is mostly an append */
	size_t j = tt->n++;
	while (j > tt->head && tt->v[j - 1].q > b.q) {
		tt->v[j] = tt->v[j - 1];
		j--;
	}
	tt->v[j] = b;
	if (++s->live_trails > s->live_peak)
		s->live_peak = s->live_trails;
}

/* Settles every thread's trails queued before TRAIL_HORIZON_NS behind
 * the processed point P (the latest exit of the calls whose block part
 * is summed up), whether or not its thread made a call since.
 *
 * Why no call still to come owns them: calls reach add_call in file
 * order (the side queue is FIFO); a call waiting there is not processed,
 * so P is not the latest exit seen (last_exit) but the latest one summed
 * up. A call waiting in its thread's block queue may have exited long
 * before P (other threads' calls do not wait for its trails): its
 * thread's frontier stops at its entry. Call records are written when
 * the call exits, into one ring buffer: in the file by exit time but for
 * the skew between CPUs (milliseconds, SKEW_NS in layer_block.c). So a
 * call still to come exited after about P. A trail at q is owned only by a call of its
 * thread that contains q (entered at or before q, exited at or after q):
 * one still to come for a trail queued before P - TRAIL_HORIZON_NS would
 * have lasted about TRAIL_HORIZON_NS or more. The block watermark makes
 * the same bet (an I/O open that long no longer holds calls back); a
 * call that did last longer keeps only the trails queued in its last
 * TRAIL_HORIZON_NS (own_trails searches from its entry among those left).
 *
 * Moving the frontier (never back) settles what is queued before it and
 * what comes in later queued before it (it_sysan_trail): the trails of a
 * thread without calls, a kernel thread, are kept for TRAIL_HORIZON_NS,
 * not to the end. */
static void sweep(struct it_sysan *s)
{
	uint64_t cut;

	if (s->processed < s->swept + SWEEP_NS || s->processed < TRAIL_HORIZON_NS)
		return;
	s->swept = s->processed;
	cut = s->processed - TRAIL_HORIZON_NS;
	for (size_t i = 0; i < s->ntids; i++) {
		struct tid_trails *tt = &s->tidv[i];
		uint64_t to = cut;

		/* a call of the thread still waiting owns what it queued: the
		 * processed point may have passed it, as other threads' calls
		 * do not wait for its trails */
		if (tt->chead < tt->cn && tt->calls[tt->chead].ts_enter < to)
			to = tt->calls[tt->chead].ts_enter;
		if (tt->frontier >= to)
			continue;
		tt->frontier = to;
		settle(s, tt);
	}
}

size_t it_sysan_live_trails(const struct it_sysan *s, size_t *peak)
{
	if (peak)
		*peak = s->live_peak;
	return s->live_trails;
}

static int cmp_comm(const void *a, const void *b)
{
	const struct comm_rec *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* ---- calls ---- */

/* The comm of tid at time ts: its last name record at or before ts. */
static const struct comm_rec *comm_at(const struct it_sysan *s, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = s->ncomms;
	const struct comm_rec *best = NULL;

	while (lo < hi) { /* first record of tid */
		size_t mid = (lo + hi) / 2;
		if (s->comms[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->ncomms && s->comms[i].tid == tid; i++) {
		if (best && s->comms[i].ts > ts)
			break;
		best = &s->comms[i];
	}
	return best;
}

/* The block time of a call: the union of its thread's trails queued
 * within the call, clipped to the call. */
static uint64_t own_trails(struct it_sysan *s, const struct bcall *e, uint32_t *ios,
			   uint32_t *flushes, uint64_t *bytes)
{
	struct tid_trails *tt = tid_of(s, e->tid);
	uint64_t total = 0, cur_lo = 0, cur_hi = 0;

	*ios = 0;
	*flushes = 0;
	*bytes = 0;
	if (!tt)
		return 0;
	size_t lo, hi;
	if (e->ts_enter >= tt->frontier) {
		/* no later call of the thread owns what it queued before this
		 * one: settled, the first trail left is the first queued in it */
		tt->frontier = e->ts_enter;
		settle(s, tt);
		lo = tt->head;
	} else {
		/* a call before one of the thread already summed up (out of
		 * order): the first trail queued at or after its entry */
		lo = tt->head;
		hi = tt->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (tt->v[mid].q < e->ts_enter)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	for (size_t k = lo; k < tt->n; k++) {
		struct btrail *t = &tt->v[k];
		uint64_t a = t->q, b = t->c < e->ts_exit ? t->c : e->ts_exit;

		if (t->q > e->ts_exit)
			break;
		t->owned = 1;
		(*ios)++;
		*flushes += t->op == IT_OP_FLUSH; /* fsync's, fdatasync's device flush */
		*bytes += t->bytes;
		if (b < a)
			continue;
		if (a > cur_hi) { /* trails are sorted by q: a gap closes the run */
			total += cur_hi - cur_lo;
			cur_lo = a;
			cur_hi = b;
		} else if (b > cur_hi) {
			cur_hi = b;
		}
	}
	return total + (cur_hi - cur_lo);
}

static struct it_sysan_file *file_of(struct it_sysan *s, const struct it_sys_event *e,
				     const char *path)
{
	uint64_t k = e->tag_ts ? tag_key(e->dev, e->ino, e->tag_ts) : str_key(path);
	uint32_t i = it_map_get(&s->files, k);
	struct it_sysan_file *f;

	if (i != IT_MAP_NONE)
		return &s->r.files[i];
	if (!GROW(s, s->r.files, s->r.nfiles, s->filecap))
		return NULL;
	f = &s->r.files[s->r.nfiles];
	memset(f, 0, sizeof(*f));
	f->path = path;
	if (e->tag_ts) {
		f->dev = e->dev;
		f->ino = e->ino;
		f->tag_ts = e->tag_ts;
		f->ftype = e->ftype;
	}
	it_hist_init(&f->read_lat);
	it_hist_init(&f->write_lat);
	it_hist_init(&f->sync_lat);
	if (it_map_put(&s->files, k, s->r.nfiles)) {
		s->error = 1;
		return NULL;
	}
	return &s->r.files[s->r.nfiles++];
}

static void add_file(struct it_sysan *s, const struct it_sys_event *e, const char *path)
{
	bool rd = it_sys_call_is_read(e->call), wr = it_sys_call_is_write(e->call);
	uint64_t lat = e->ts_exit > e->ts_enter ? e->ts_exit - e->ts_enter : 0;
	struct it_sysan_file *f;

	if (!path || !*path || (!e->tag_ts && (e->sflags & IT_SYSF_TAG_DIR) == 0 && path[0] != '/'))
		return;
	f = file_of(s, e, path);
	if (!f)
		return;
	f->calls++;
	f->errors += e->ret < 0;
	if (!f->first_ns || e->ts_enter < f->first_ns)
		f->first_ns = e->ts_enter;
	if (e->ts_exit > f->last_ns)
		f->last_ns = e->ts_exit;
	if (it_sys_call_is_sync(e->call)) {
		f->syncs++;
		it_hist_add(&f->sync_lat, lat);
	}
	if ((rd || wr) && e->ret >= 0) {
		int d = wr;
		uint64_t n = (uint64_t)e->ret;

		if (rd) {
			f->reads++;
			f->read_bytes += n;
			it_hist_add(&f->read_lat, lat);
		} else {
			f->writes++;
			f->write_bytes += n;
			it_hist_add(&f->write_lat, lat);
		}
		if (f->last_end[d])
			f->seq += e->offset + 1 == f->last_end[d];
		if (f->last_end[d])
			f->rnd += e->offset + 1 != f->last_end[d];
		f->last_end[d] = e->offset + n + 1;
	}
}

static struct it_sysan_thread *thread_of(struct it_sysan *s, const struct it_sys_event *e)
{
	uint32_t i = it_map_get(&s->threads, (uint64_t)e->tid + 1);
	struct it_sysan_thread *t;

	if (i != IT_MAP_NONE)
		return &s->r.threads[i];
	if (!GROW(s, s->r.threads, s->r.nthreads, s->threadcap))
		return NULL;
	if (!GROW(s, s->tl, s->r.nthreads, s->tlcap))
		return NULL;
	s->tl[s->r.nthreads].b = NULL;
	s->tl[s->r.nthreads].n = 0;
	t = &s->r.threads[s->r.nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = e->pid;
	t->tid = e->tid;
	if (it_map_put(&s->threads, (uint64_t)e->tid + 1, s->r.nthreads)) {
		s->error = 1;
		return NULL;
	}
	return &s->r.threads[s->r.nthreads++];
}

static struct it_sysan_proc *proc_of(struct it_sysan *s, uint32_t pid)
{
	uint32_t i = it_map_get(&s->procs, (uint64_t)pid + 1);
	struct it_sysan_proc *p;

	if (i != IT_MAP_NONE)
		return &s->r.procs[i];
	if (!GROW(s, s->r.procs, s->r.nprocs, s->proccap))
		return NULL;
	p = &s->r.procs[s->r.nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->title = "";
	it_hist_init(&p->io.sync_lat);
	if (it_map_put(&s->procs, (uint64_t)pid + 1, s->r.nprocs)) {
		s->error = 1;
		return NULL;
	}
	return &s->r.procs[s->r.nprocs++];
}

/* Per process: its calls, bytes, fsync/fdatasync latency. */
static void add_proc(struct it_sysan *s, const struct it_sys_event *e, uint64_t lat)
{
	struct it_sysan_proc *p = proc_of(s, e->pid);
	struct it_sysan_io *io = p ? &p->io : NULL;

	if (!io)
		return;
	io->calls++;
	io->errors += e->ret < 0;
	if (e->ret > 0 && it_sys_call_is_read(e->call))
		io->read_bytes += (uint64_t)e->ret;
	if (e->ret > 0 && it_sys_call_is_write(e->call))
		io->write_bytes += (uint64_t)e->ret;
	if (it_sys_call_is_sync(e->call)) {
		io->syncs++;
		it_hist_add(&io->sync_lat, lat);
	}
}

/* Ten times coarser base buckets, for every timeline of a set: the
 * threads' (tl) or the processes' block I/O (btl). */
static void coarsen(struct it_sysan *s, bool block)
{
	struct tl_buckets *set = block ? s->btl : s->tl;
	size_t n = block ? s->nbprocs : s->r.nthreads;

	for (size_t i = 0; i < n; i++) {
		struct tl_buckets *t = &set[i];

		for (size_t k = 0; k < t->n; k++) {
			uint64_t v = t->b[k];
			t->b[k] = 0;
			t->b[(t->first + k) / 10 - t->first / 10] += v;
		}
		t->first /= 10;
	}
	*(block ? &s->bbase_ns : &s->base_ns) *= 10;
}

/* Counts one at ts into the timeline at index ti of a set (block: btl,
 * else tl; a set coarsening may not move: the index, not a pointer). */
static void timeline_add(struct it_sysan *s, bool block, size_t ti, uint64_t ts)
{
	uint64_t off = ts > s->o.start_ns ? ts - s->o.start_ns : 0;
	const uint64_t *base = block ? &s->bbase_ns : &s->base_ns;
	const size_t most = block ? BTL_BUCKETS : TL_BUCKETS;
	uint64_t k = off / *base;
	struct tl_buckets *t;

	while (k >= most && !s->o.interval_ns) {
		coarsen(s, block);
		k = off / *base;
	}
	t = &(block ? s->btl : s->tl)[ti];
	if (!t->n)
		t->first = k;
	if (k < t->first || k - t->first >= t->n) {
		/* room for [lo, hi]: grown at the end, or at the front for a
		 * count before the first one (moved up by shift) */
		size_t lo = k < t->first ? k : t->first, shift = t->first - lo;
		size_t n = t->n ? t->n : 16, need = shift + t->n;
		uint64_t *b;

		if (k - lo + 1 > need)
			need = k - lo + 1;
		while (n < need)
			n *= 2;
		if (!s->o.interval_ns && n > most)
			n = most;
		if (n < need)
			n = need;
		b = realloc(t->b, n * sizeof(*b));
		if (!b) {
			s->error = 1;
			return;
		}
		if (shift)
			memmove(b + shift, b, t->n * sizeof(*b));
		memset(b, 0, shift * sizeof(*b));
		memset(b + shift + t->n, 0, (n - shift - t->n) * sizeof(*b));
		t->b = b;
		t->first = lo;
		t->n = n;
	}
	t->b[k - t->first]++;
}

/* A completed block trail into its process's timeline (the process
 * that queued its bios). */
static void block_proc_add(struct it_sysan *s, const struct it_trail *t)
{
	uint32_t i = it_map_get(&s->bprocs, (uint64_t)t->pid + 1);

	if (i == IT_MAP_NONE) {
		if (!GROW(s, s->bprocv, s->nbprocs, s->bproccap) ||
		    !GROW(s, s->btl, s->nbprocs, s->btlcap))
			return;
		i = (uint32_t)s->nbprocs;
		if (it_map_put(&s->bprocs, (uint64_t)t->pid + 1, i)) {
			s->error = 1;
			return;
		}
		s->bprocv[i] = (struct bproc){ .pid = t->pid, .comm = t->comm };
		s->btl[i] = (struct tl_buckets){ 0 };
		s->nbprocs++;
	}
	s->bprocv[i].ios++;
	s->bprocv[i].bytes += t->bytes;
	timeline_add(s, true, i, t->ts[IT_PT_C]);
}

/* The names of a call, and its path: the tag's, else its (first) name,
 * made absolute by the directory it is relative to. */
static void names_of(struct it_sysan *s, const struct it_sys_event *e, const char **path,
		     const char **path2)
{
	const char *tagpath = NULL, *n0 = NULL;
	uint32_t i;

	*path = "";
	*path2 = "";
	if (e->tag_ts) {
		i = it_map_get(&s->tags, tag_key(e->dev, e->ino, e->tag_ts));
		if (i != IT_MAP_NONE)
			tagpath = s->tagv[i].path;
		else
			s->r.unknown_tags++;
	}
	if (e->sflags & IT_SYSF_NAME) {
		uint64_t k = names_key(s, e->tid, e->ts_enter, &i);

		if (i != IT_MAP_NONE) { /* the call takes its names: the slot is free */
			struct pending_name *pn = &s->namev[i];

			for (unsigned j = 0; j < pn->n; j++) {
				if (pn->which[j] == 0)
					n0 = pn->s[j];
				else
					*path2 = pn->s[j];
			}
			s->r.unmatched_names += pn->extra;
			pn->n = 0;
			pn->extra = 0;
			pn->tid = s->free_name;
			s->free_name = i;
			it_map_del(&s->names, k);
		}
	}
	if (n0 && n0[0] != '/' && n0[0] && tagpath && (e->sflags & IT_SYSF_TAG_DIR)) {
		char buf[IT_PATH_MAX + IT_NAME_MAX + 2];
		int k = snprintf(buf, sizeof(buf), "%s/%s", strcmp(tagpath, "/") ? tagpath : "", n0);
		*path = intern(s, buf, k < 0 ? 0 : (size_t)k < sizeof(buf) ? (size_t)k : sizeof(buf) - 1);
	} else if (n0 && n0[0]) {
		*path = n0;
	} else if (tagpath) {
		*path = tagpath;
	}
}

/* Makes room for one more element in the ring *q (head, len, cap). */
static bool ring_room(struct it_sysan *s, void **q, size_t size, size_t *head, size_t len,
		      size_t *cap)
{
	size_t ncap = *cap ? *cap * 2 : 1024;
	char *nq;

	if (len < *cap)
		return true;
	nq = malloc(ncap * size);
	if (!nq) {
		s->error = 1;
		return false;
	}
	for (size_t i = 0; i < len; i++)
		memcpy(nq + i * size, (char *)*q + (*head + i) % *cap * size, size);
	free(*q);
	*q = nq;
	*head = 0;
	*cap = ncap;
	return true;
}

/* Whether the calls' block parts are handed out (opts.on_call,
 * opts.on_event): then in file order, through the publication queue. */
static bool published(const struct it_sysan *s)
{
	return s->o.on_call || s->o.on_event;
}

/* Call b's block part is known: handed out with every one before it in
 * the file whose part is known too. */
static void publish(struct it_sysan *s, const struct bcall *b, uint64_t block, uint32_t bios)
{
	struct pubcall *p;

	if (!published(s) || b->seq == UINT64_MAX)
		return;
	p = &s->pub[(s->phead + (b->seq - s->pseq)) % s->pcap];
	p->block_ns = block;
	p->bios = bios;
	p->done = 1;
	while (s->plen && s->pub[s->phead].done) {
		p = &s->pub[s->phead];
		if (p->b.ev == EV_QUEUED && s->evlen) {
			struct it_sysan_event *v = &s->evq[s->evhead];

			v->block_ns = p->block_ns;
			v->block_ios = p->bios;
			s->o.on_event(v, s->o.ctx);
			s->evhead = (s->evhead + 1) % s->evqcap;
			s->evlen--;
		}
		if (s->o.on_call)
			s->o.on_call(p->b.tid, p->b.call, p->b.ts_enter, p->b.ts_exit, p->block_ns,
				     p->bios, s->o.ctx);
		s->phead = (s->phead + 1) % s->pcap;
		s->plen--;
		s->pseq++;
	}
}

/* The block part of a call: the trails its thread queued during it. */
static void add_block(struct it_sysan *s, const struct bcall *b)
{
	struct it_sysan_call *c = &s->calls[b->call];
	uint64_t lat = b->ts_exit > b->ts_enter ? b->ts_exit - b->ts_enter : 0, bbytes;
	uint32_t bios, flushes;
	uint64_t block = own_trails(s, b, &bios, &flushes, &bbytes);

	if (b->ts_exit > s->processed) {
		s->processed = b->ts_exit;
		sweep(s);
	}

	if (bios) {
		struct it_sysan_proc *p = proc_of(s, b->pid);

		if (p) {
			p->io.block_ios += bios;
			p->io.block_bytes += bbytes;
		}
		c->block_calls++;
		c->block_ios += bios;
		c->block_flushes += flushes;
		c->block_bytes += bbytes;
		it_hist_add(&c->block, block);
		it_hist_add(&c->above, lat > block ? lat - block : 0);
	}
	if (b->ev != UINT32_MAX && b->ev != EV_QUEUED) {
		s->r.events[b->ev].block_ns = block;
		s->r.events[b->ev].block_ios = bios;
	}
	publish(s, b, block, bios);
}

/* The block watermark of a thread's calls: every trail it may own is in
 * before it. */
static uint64_t thread_wm(const struct it_sysan *s, const struct tid_trails *tt)
{
	return tt->open_gen == s->open_gen && tt->open_q < s->block_wm ? tt->open_q : s->block_wm;
}

/* The block part of call b now, when every trail its thread queued
 * during it is in, else once they are (in its thread's queue, behind
 * the thread's calls waiting already). */
static void queue_block(struct it_sysan *s, struct bcall *b)
{
	struct tid_trails *tt;
	size_t ti;

	b->seq = UINT64_MAX;
	if (published(s) &&
	    ring_room(s, (void **)&s->pub, sizeof(*s->pub), &s->phead, s->plen, &s->pcap)) {
		b->seq = s->pseq + s->plen;
		s->pub[(s->phead + s->plen++) % s->pcap] = (struct pubcall){ .b = *b };
	}
	if (!(tt = tid_of(s, b->tid)))
		return;
	if (tt->chead == tt->cn && b->ts_exit < thread_wm(s, tt)) {
		add_block(s, b);
		return;
	}
	ti = (size_t)(tt - s->tidv);
	if (tt->chead == tt->cn) {
		if (!GROW(s, s->waiting, s->nwaiting, s->waitcap))
			return;
		s->waiting[s->nwaiting++] = (uint32_t)ti;
		tt->chead = tt->cn = 0;
	}
	if (!GROW_SMALL(s, tt->calls, tt->cn, tt->ccap))
		return;
	tt->calls[tt->cn++] = *b;
	s->npending++;
}

/* Sums up the block part of the waiting calls whose thread's trails are
 * in (all: every one, the end of the trace), each thread's in the order
 * it made them. */
static void release(struct it_sysan *s, bool all)
{
	for (size_t i = 0; i < s->nwaiting; i++) {
		size_t ti = s->waiting[i];
		uint64_t wm = all ? UINT64_MAX : thread_wm(s, &s->tidv[ti]);
		struct tid_trails *tt = &s->tidv[ti];

		while (tt->chead < tt->cn && (all || tt->calls[tt->chead].ts_exit < wm)) {
			struct bcall b = tt->calls[tt->chead++];

			s->npending--;
			add_block(s, &b);
			tt = &s->tidv[ti];
		}
		if (tt->chead < tt->cn) {
			if (tt->chead > tt->cn / 2) {
				memmove(tt->calls, tt->calls + tt->chead,
					(tt->cn - tt->chead) * sizeof(*tt->calls));
				tt->cn -= tt->chead;
				tt->chead = 0;
			}
			continue;
		}
		tt->chead = tt->cn = 0;
		if (tt->ccap > THREAD_ARRAY) { /* a burst held: let it go */
			free(tt->calls);
			tt->calls = NULL;
			tt->ccap = 0;
		}
		s->waiting[i--] = s->waiting[--s->nwaiting];
	}
}

/* The comm of tid at time ts as the side records so far have it: the
 * newest at or before ts, else the oldest (as comm_at); "" when none. */
static const char *comm_now(const struct it_sysan *s, uint32_t tid, uint64_t ts)
{
	uint32_t i = it_map_get(&s->tidcomm, (uint64_t)tid + 1);

	if (i == IT_MAP_NONE)
		return "";
	while (s->tcv[i].ts > ts && s->tcv[i].prev != IT_MAP_NONE)
		i = s->tcv[i].prev;
	return s->tcv[i].comm;
}

/* Sums up a call but for its block I/O, which waits in its thread's
 * queue unless every trail the thread queued during it is in already. */
static void add_call(struct it_sysan *s, const struct it_sys_event *e)
{
	struct it_sysan_call *c = &s->calls[e->call < IT_SYS_MAX ? e->call : 0];
	uint64_t lat = e->ts_exit > e->ts_enter ? e->ts_exit - e->ts_enter : 0;
	const char *path, *path2;
	struct it_sysan_thread *t;
	struct bcall b = { .ts_enter = e->ts_enter, .ts_exit = e->ts_exit, .tid = e->tid,
			   .pid = e->pid, .ev = UINT32_MAX, .call = (uint16_t)(c - s->calls) };

	names_of(s, e, &path, &path2);
	s->r.calls++;
	s->r.errors += e->ret < 0;
	if (!s->r.first_ns || e->ts_enter < s->r.first_ns)
		s->r.first_ns = e->ts_enter;
	if (e->ts_exit > s->r.last_ns)
		s->r.last_ns = e->ts_exit;
	c->count++;
	c->errors += e->ret < 0;
	if ((it_sys_call_is_read(e->call) || it_sys_call_is_write(e->call)) && e->ret > 0)
		c->bytes += (uint64_t)e->ret;
	it_hist_add(&c->lat, lat);
	add_file(s, e, path);
	add_proc(s, e, lat);
	t = thread_of(s, e);
	if (t) {
		t->calls++;
		t->errors += e->ret < 0;
		t->lat_sum += lat;
		timeline_add(s, false, (size_t)(t - s->r.threads), e->ts_enter);
	}
	if (s->o.events && GROW(s, s->r.events, s->r.nevents, s->evcap)) {
		struct it_sysan_event *v = &s->r.events[s->r.nevents];

		b.ev = (uint32_t)s->r.nevents++;
		v->e = *e;
		v->path = path;
		v->path2 = path2;
		v->comm = ""; /* at the end: a thread's name may come later in the file */
		v->block_ns = 0;
		v->block_ios = 0;
	}
	if (s->o.on_event) {
		struct it_sysan_event v = { .e = *e, .path = path, .path2 = path2,
					    .comm = comm_now(s, e->tid, e->ts_exit) };

		if (e->sflags & IT_SYSF_URING) {
			s->o.on_event(&v, s->o.ctx);
		} else if (ring_room(s, (void **)&s->evq, sizeof(*s->evq), &s->evhead, s->evlen,
				     &s->evqcap)) {
			s->evq[(s->evhead + s->evlen++) % s->evqcap] = v;
			b.ev = EV_QUEUED;
		}
	}
	if (e->sflags & IT_SYSF_URING) { /* an io_uring request owns no trail */
		if (s->o.on_call)
			s->o.on_call(b.tid, b.call, b.ts_enter, b.ts_exit, 0, 0, s->o.ctx);
		return;
	}
	queue_block(s, &b);
}

/* Whether the side records the call names are in: its tag's path, and a
 * name when it has some (they are written before the call record). */
static bool sides_in(const struct it_sysan *s, const struct it_sys_event *e)
{
	uint32_t slot;

	if (e->tag_ts && it_map_get(&s->tags, tag_key(e->dev, e->ino, e->tag_ts)) == IT_MAP_NONE)
		return false;
	if (!(e->sflags & IT_SYSF_NAME))
		return true;
	names_key(s, e->tid, e->ts_enter, &slot);
	return slot != IT_MAP_NONE;
}

/* Sums up the calls at the head of the queues: of the side queue, those
 * whose side records are in (or a side chunk came after theirs: a record
 * still missing then was lost), in file order, as the calls were
 * written (the per-file sequential share depends on it); of the threads'
 * block queues, those that exited before their thread's block watermark
 * (every trail their thread queued during them is in), each thread's in
 * its order (the settling of its trails depends on it). all: every call
 * (the end of the trace). */
static void drain(struct it_sysan *s, bool all)
{
	while (s->qlen) {
		struct qcall *qc = &s->q[s->qhead];

		if (!all && qc->epoch == s->side_epoch && !sides_in(s, &qc->e))
			break;
		add_call(s, &qc->e);
		s->qhead = (s->qhead + 1) % s->qcap;
		s->qlen--;
	}
	release(s, all);
}

int it_sysan_calls(struct it_sysan *s, const struct it_sys_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (evs[i].ts_exit > s->last_exit)
			s->last_exit = evs[i].ts_exit;
		if (evs[i].rec != IT_SREC_CALL)
			continue;
		if (!s->qlen && sides_in(s, &evs[i])) {
			add_call(s, &evs[i]); /* its block part may wait */
			continue;
		}
		if (!ring_room(s, (void **)&s->q, sizeof(*s->q), &s->qhead, s->qlen, &s->qcap))
			return -1;
		s->q[(s->qhead + s->qlen) % s->qcap] = (struct qcall){ .e = evs[i], .epoch = s->side_epoch };
		s->qlen++;
	}
	drain(s, false);
	return s->error ? -1 : 0;
}

void it_sysan_side_chunk_end(struct it_sysan *s)
{
	s->side_epoch++;
	drain(s, false);
}

void it_sysan_block_open(struct it_sysan *s, uint64_t seen, const struct it_open_trail *open,
			size_t n)
{
	if (seen > s->block_wm)
		s->block_wm = seen;
	s->open_gen++;
	for (size_t i = 0; i < n; i++) {
		struct tid_trails *tt;

		/* a call exited before the watermark cannot own a trail after it.
		 * An open trail keeps its thread and queue time to the end but
		 * for a request merged into another's (stitch.c: the merged
		 * trail takes the earlier queue time, its thread stays): a call
		 * of that other thread could then have owned it, and one summed
		 * up before the merge does not (the hour of long.trail had
		 * three request merges; its report came out the same) */
		if (!open[i].tid || open[i].q >= s->block_wm)
			continue;
		if (!(tt = tid_of(s, open[i].tid)))
			return;
		if (tt->open_gen != s->open_gen || open[i].q < tt->open_q) {
			tt->open_gen = s->open_gen;
			tt->open_q = open[i].q;
		}
	}
	drain(s, false);
}

void it_sysan_block_watermark(struct it_sysan *s, uint64_t ns)
{
	it_sysan_block_open(s, ns, NULL, 0);
}

void it_sysan_set_on_call(struct it_sysan *s,
			  void (*fn)(uint32_t tid, uint16_t call, uint64_t ts_enter, uint64_t ts_exit,
				     uint64_t block_ns, uint32_t block_ios, void *ctx))
{
	s->o.on_call = fn;
}

size_t it_sysan_queued(const struct it_sysan *s)
{
	return s->qlen + s->npending;
}

/* ---- finish ---- */

static int cmp_call(const void *a, const void *b)
{
	const struct it_sysan_call *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->call - y->call;
}

static int cmp_file(const void *a, const void *b)
{
	const struct it_sysan_file *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct it_sysan_proc *x = a, *y = b;

	if (x->io.calls != y->io.calls)
		return x->io.calls > y->io.calls ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

const char *it_sysan_title(const struct it_sysan *s, uint32_t pid)
{
	uint32_t i = it_map_get(&s->titles, (uint64_t)pid + 1);

	return i == IT_MAP_NONE ? "" : s->titlev[i];
}

/* Each process's title, and its comm: its main thread's last one, else
 * that of its thread with the most calls. */
static void name_procs(struct it_sysan *s)
{
	struct it_sysan_results *r = &s->r;

	for (size_t i = 0; i < r->nthreads; i++) { /* by calls, descending */
		const struct it_sysan_thread *t = &r->threads[i];
		uint32_t k = it_map_get(&s->procs, (uint64_t)t->pid + 1);

		if (k == IT_MAP_NONE)
			continue;
		if (!r->procs[k].comm[0] || t->tid == t->pid)
			memcpy(r->procs[k].comm, t->comm, 16);
		r->procs[k].threads++;
	}
	for (size_t i = 0; i < r->nprocs; i++)
		r->procs[i].title = it_sysan_title(s, r->procs[i].pid);
	it_sort(r->procs, r->nprocs, sizeof(*r->procs), cmp_proc);
}

static int cmp_role(const void *a, const void *b)
{
	const struct it_sysan_role *x = a, *y = b;

	if (x->io.sync_lat.sum != y->io.sync_lat.sum)
		return x->io.sync_lat.sum > y->io.sync_lat.sum ? -1 : 1;
	if (x->io.calls != y->io.calls)
		return x->io.calls > y->io.calls ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The processes summed by role (title, else [comm]). */
static void roles(struct it_sysan *s)
{
	struct it_sysan_results *r = &s->r;
	struct it_map m = { 0 };
	size_t cap = 0;

	if (it_map_init(&m, 6)) {
		s->error = 1;
		return;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct it_sysan_proc *p = &r->procs[i];
		char buf[24];
		const char *name = p->title;
		struct it_sysan_role *o;
		uint64_t k;
		uint32_t j;

		if (!*name) {
			snprintf(buf, sizeof(buf), "[%.16s]", p->comm);
			name = buf;
		}
		k = str_key(name);
		/* a hash key: step to the next one on a collision */
		while ((j = it_map_get(&m, k)) != IT_MAP_NONE && strcmp(r->roles[j].name, name))
			k = mix(k, 0x3f);
		if (j == IT_MAP_NONE) {
			if (!GROW(s, r->roles, r->nroles, cap))
				break;
			j = (uint32_t)r->nroles++;
			r->roles[j] = (struct it_sysan_role){ .name = name == buf ? intern(s, buf, strlen(buf)) : name };
			it_hist_init(&r->roles[j].io.sync_lat);
			if (it_map_put(&m, k, j)) {
				s->error = 1;
				break;
			}
		}
		o = &r->roles[j];
		o->procs++;
		o->io.calls += p->io.calls;
		o->io.errors += p->io.errors;
		o->io.read_bytes += p->io.read_bytes;
		o->io.write_bytes += p->io.write_bytes;
		o->io.block_ios += p->io.block_ios;
		o->io.block_bytes += p->io.block_bytes;
		o->io.syncs += p->io.syncs;
		if (p->io.syncs && it_hist_merge(&o->io.sync_lat, &p->io.sync_lat))
			s->error = 1;
	}
	it_sort(r->roles, r->nroles, sizeof(*r->roles), cmp_role);
	it_map_free(&m);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct it_sysan_thread *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_event(const void *a, const void *b)
{
	const struct it_sysan_event *x = a, *y = b;

	if (x->e.ts_enter != y->e.ts_enter)
		return x->e.ts_enter < y->e.ts_enter ? -1 : 1;
	return x->e.tid < y->e.tid ? -1 : x->e.tid > y->e.tid;
}

static int cmp_bg(const void *a, const void *b)
{
	const struct it_sysan_background *x = a, *y = b;

	return x->ios != y->ios ? (x->ios > y->ios ? -1 : 1) : (x->comm > y->comm) - (x->comm < y->comm);
}

static int cmp_bfile(const void *a, const void *b)
{
	const struct it_sysan_bfile *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	/* the same inode under two tags (a reused inode number): by tag, so
	 * the order does not depend on the order the trails were settled */
	return (x->tag_ts > y->tag_ts) - (x->tag_ts < y->tag_ts);
}

/* A tag by (dev, ino, first seen), for matching a trail's file. */
struct tagref {
	uint32_t dev, idx; /* idx: in tagv */
	uint64_t ino, ts;
};

static int cmp_tagref(const void *a, const void *b)
{
	const struct tagref *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The tag of (dev, ino) at time ts: the last one first seen at or before
 * ts (an inode number reused by a later file gets a new tag), else the
 * first one (I/O queued before the first call on the file was seen);
 * IT_MAP_NONE when no call named the file. The answer holds for every
 * time in [*from, *to]. */
static uint32_t tag_at(const struct tagref *by, size_t n, uint32_t dev, uint64_t ino, uint64_t ts,
		       uint64_t *from, uint64_t *to)
{
	size_t lo = 0, hi = n, at = 0;
	uint32_t best = IT_MAP_NONE;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (by[mid].dev < dev || (by[mid].dev == dev && by[mid].ino < ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && by[i].dev == dev && by[i].ino == ino; i++) {
		if (best != IT_MAP_NONE && by[i].ts > ts)
			break;
		best = by[i].idx;
		at = i;
	}
	*from = best == IT_MAP_NONE || at == lo ? 0 : by[at].ts;
	*to = best != IT_MAP_NONE && at + 1 < n && by[at + 1].dev == dev && by[at + 1].ino == ino ?
	      by[at + 1].ts - 1 : UINT64_MAX;
	return best;
}

/* The entry of the file's I/O queued at q; [*from, *to]: the times it
 * holds for. */
static struct it_sysan_bfile *bfile_of(struct it_sysan *s, struct it_map *m, const struct tagref *by,
				       size_t *cap, const struct inode_trails *in, uint64_t q,
				       uint64_t *from, uint64_t *to)
{
	uint32_t tg = IT_MAP_NONE;

	*from = 0;
	*to = UINT64_MAX;
	if (by)
		tg = tag_at(by, s->ntags, in->fsdev, in->ino, q, from, to);
	uint64_t ts = tg == IT_MAP_NONE ? 0 : s->tagv[tg].ts, k = tag_key(in->fsdev, in->ino, ts);
	uint32_t i = it_map_get(m, k);
	struct it_sysan_bfile *f;

	if (i != IT_MAP_NONE)
		return &s->r.bfiles[i];
	if (!GROW(s, s->r.bfiles, s->r.nbfiles, *cap))
		return NULL;
	f = &s->r.bfiles[s->r.nbfiles];
	memset(f, 0, sizeof(*f));
	f->dev = in->fsdev;
	f->ino = in->ino;
	f->tag_ts = ts;
	f->path = tg == IT_MAP_NONE ? NULL : s->tagv[tg].path;
	it_hist_init(&f->q2c);
	f->timeline = calloc(s->r.nintervals, sizeof(*f->timeline));
	if (!f->timeline)
		s->error = 1;
	if (it_map_put(m, k, s->r.nbfiles)) {
		s->error = 1;
		return NULL;
	}
	return &s->r.bfiles[s->r.nbfiles++];
}

static void by_file(struct it_sysan *s, struct it_sysan_bfile *f, const struct ftrail *t)
{
	const struct it_sysan_results *r = &s->r;
	uint64_t c = t->q + t->q2c, k = c > r->start_ns ? (c - r->start_ns) / r->interval_ns : 0;

	if (f->timeline)
		f->timeline[k < r->nintervals ? k : r->nintervals - 1]++;
	f->ios++;
	f->bytes += t->bytes;
	if (t->op == IT_OP_READ) {
		f->read_ios++;
		f->read_bytes += t->bytes;
	} else if (t->op == IT_OP_WRITE) {
		f->write_ios++;
		f->write_bytes += t->bytes;
	}
	if (!t->owned) {
		f->bg_ios++;
		f->bg_bytes += t->bytes;
	}
	it_hist_add(&f->q2c, t->q2c);
}

/* Per inode: the file entry its trails went to last (an index in
 * r.bfiles), and the queue times that entry holds for, [from, to]. */
struct cursor {
	uint32_t f;
	uint64_t from, to;
};

static void to_file(struct it_sysan *s, struct it_map *files, const struct tagref *by, size_t *fcap,
		    struct cursor *c, const struct inode_trails *in, const struct ftrail *t)
{
	if (c->f == IT_MAP_NONE || t->q < c->from || t->q > c->to) {
		struct it_sysan_bfile *f = bfile_of(s, files, by, fcap, in, t->q, &c->from, &c->to);

		c->f = f ? (uint32_t)(f - s->r.bfiles) : IT_MAP_NONE;
	}
	if (c->f != IT_MAP_NONE)
		by_file(s, &s->r.bfiles[c->f], t);
}

static int cmp_tid(const void *a, const void *b)
{
	const struct tid_trails *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The end of the ownership: every trail still waiting for a call of its
 * thread is settled (by thread, by queue time); then the block I/O of
 * files (page-cache pages), each named by its tag at the time the I/O was
 * queued. */
static void background(struct it_sysan *s)
{
	struct it_map files = { 0 };
	struct it_sysan_results *r = &s->r;
	size_t fcap = 0;
	struct tagref *by = s->ntags ? malloc(s->ntags * sizeof(*by)) : NULL;
	struct cursor *cur = NULL;

	it_sort(s->tidv, s->ntids, sizeof(*s->tidv), cmp_tid);
	s->last_tidx = IT_MAP_NONE;
	for (size_t i = 0; i < s->ntids; i++) {
		struct tid_trails *tt = &s->tidv[i];

		tt->frontier = UINT64_MAX;
		settle(s, tt);
	}
	if (it_map_init(&files, 6) || (s->ntags && !by)) {
		s->error = 1;
		goto out;
	}
	for (size_t i = 0; i < s->ntags; i++)
		by[i] = (struct tagref){ .dev = s->tagv[i].dev, .idx = (uint32_t)i,
					 .ino = s->tagv[i].ino, .ts = s->tagv[i].ts };
	if (by)
		it_sort(by, s->ntags, sizeof(*by), cmp_tagref);
	cur = malloc((s->ninos ? s->ninos : 1) * sizeof(*cur));
	if (!cur) {
		s->error = 1;
		goto out;
	}
	for (size_t i = 0; i < s->ninos; i++)
		cur[i] = (struct cursor){ .f = IT_MAP_NONE, .from = 1, .to = 0 };
	if (s->spill) {
		struct spilled r;

		if (fflush(s->spill) || fseek(s->spill, 0, SEEK_SET))
			s->error = 1;
		while (!s->error && fread(&r, sizeof(r), 1, s->spill) == 1)
			if (r.ino < s->ninos)
				to_file(s, &files, by, &fcap, &cur[r.ino], &s->inov[r.ino],
					&(struct ftrail){ .q = r.q, .q2c = r.q2c, .bytes = r.bytes,
							  .op = r.op, .owned = r.owned });
		if (ferror(s->spill))
			s->error = 1;
	}
	for (size_t i = 0; i < s->ninos; i++)
		for (size_t j = 0; j < s->inov[i].n; j++)
			to_file(s, &files, by, &fcap, &cur[i], &s->inov[i], &s->inov[i].v[j]);
	it_sort(r->background, r->nbackground, sizeof(*r->background), cmp_bg);
	it_sort(r->unattributed, r->nunattributed, sizeof(*r->unattributed), cmp_bg);
	it_sort(r->bfiles, r->nbfiles, sizeof(*r->bfiles), cmp_bfile);
out:
	free(cur);
	free(by);
	it_map_free(&files);
}

/* A timeline at the report's interval, from its base buckets (see
 * TL_BUCKETS); NULL when memory ran out. */
static uint64_t *spread(struct it_sysan *s, const struct tl_buckets *t, uint64_t base_ns)
{
	struct it_sysan_results *r = &s->r;
	uint64_t *v = calloc(r->nintervals, sizeof(*v));

	if (!v) {
		s->error = 1;
		return NULL;
	}
	for (size_t b = 0; b < t->n; b++) {
		uint64_t k = (uint64_t)(t->first + b) * base_ns / r->interval_ns;
		v[k < r->nintervals ? k : r->nintervals - 1] += t->b[b];
	}
	return v;
}

static int cmp_bproc(const void *a, const void *b)
{
	const struct it_sysan_bproc *x = a, *y = b;

	if (x->ios != y->ios)
		return x->ios > y->ios ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The per-thread call timelines and the per-process block I/O timelines
 * at the report's interval. */
static void timelines(struct it_sysan *s)
{
	struct it_sysan_results *r = &s->r;

	for (size_t i = 0; i < r->nthreads; i++)
		if (!(r->threads[i].timeline = spread(s, &s->tl[i], s->base_ns)))
			return;
	r->bprocs = calloc(s->nbprocs ? s->nbprocs : 1, sizeof(*r->bprocs));
	if (!r->bprocs) {
		s->error = 1;
		return;
	}
	for (size_t i = 0; i < s->nbprocs; i++) {
		struct it_sysan_bproc *p = &r->bprocs[r->nbprocs];

		*p = (struct it_sysan_bproc){ .pid = s->bprocv[i].pid, .comm = s->bprocv[i].comm,
					      .title = it_sysan_title(s, s->bprocv[i].pid),
					      .ios = s->bprocv[i].ios, .bytes = s->bprocv[i].bytes };
		if (!(p->timeline = spread(s, &s->btl[i], s->bbase_ns)))
			return;
		r->nbprocs++;
	}
	it_sort(r->bprocs, r->nbprocs, sizeof(*r->bprocs), cmp_bproc);
}

void it_sysan_finish(struct it_sysan *s, uint64_t end_ns)
{
	struct it_sysan_results *r = &s->r;
	uint64_t start_ns = s->o.start_ns;
	size_t n = 0;

	drain(s, true);
	if (end_ns <= start_ns) /* no END: the trace ends with its last call */
		end_ns = s->last_exit;
	r->start_ns = start_ns;
	r->end_ns = end_ns > start_ns ? end_ns : start_ns;
	r->interval_ns = s->o.interval_ns ? s->o.interval_ns : pick_interval(r->end_ns - start_ns);
	r->nintervals = (r->end_ns - start_ns) / r->interval_ns + 1;
	timelines(s);
	it_sort(s->comms, s->ncomms, sizeof(*s->comms), cmp_comm);
	for (size_t i = 0; i < r->nevents; i++) {
		const struct comm_rec *cr = comm_at(s, r->events[i].e.tid, r->events[i].e.ts_exit);
		r->events[i].comm = cr ? cr->comm : "";
	}

	for (unsigned c = 1; c < IT_SYS_MAX; c++)
		if (s->calls[c].count)
			n++;
	r->per_call = calloc(n ? n : 1, sizeof(*r->per_call));
	if (!r->per_call) {
		s->error = 1;
		return;
	}
	for (unsigned c = 1; c < IT_SYS_MAX; c++)
		if (s->calls[c].count)
			r->per_call[r->ncalls++] = s->calls[c]; /* moves the histograms */
	for (unsigned c = 1; c < IT_SYS_MAX; c++)
		if (s->calls[c].count)
			memset(&s->calls[c], 0, sizeof(s->calls[c]));
	it_sort(r->per_call, r->ncalls, sizeof(*r->per_call), cmp_call);
	it_sort(r->files, r->nfiles, sizeof(*r->files), cmp_file);
	for (size_t i = 0; i < r->nthreads; i++) {
		const struct comm_rec *cr = comm_at(s, r->threads[i].tid, UINT64_MAX);
		if (cr)
			memcpy(r->threads[i].comm, cr->comm, 16);
	}
	it_sort(r->threads, r->nthreads, sizeof(*r->threads), cmp_thread);
	name_procs(s);
	roles(s);
	it_sort(r->events, r->nevents, sizeof(*r->events), cmp_event);
	background(s);
	/* the names no call took (slots on the free list have none) */
	for (size_t i = 0; i < s->nnames; i++)
		r->unmatched_names += s->namev[i].n + s->namev[i].extra;
}

const struct it_sysan_results *it_sysan_results(const struct it_sysan *s)
{
	return &s->r;
}

int it_sysan_error(const struct it_sysan *s)
{
	return s->error;
}

void it_sysan_free(struct it_sysan *s)
{
	if (!s)
		return;
	for (unsigned c = 0; c < IT_SYS_MAX; c++) {
		it_hist_free(&s->calls[c].lat);
		it_hist_free(&s->calls[c].block);
		it_hist_free(&s->calls[c].above);
	}
	for (size_t i = 0; i < s->r.ncalls; i++) {
		it_hist_free(&s->r.per_call[i].lat);
		it_hist_free(&s->r.per_call[i].block);
		it_hist_free(&s->r.per_call[i].above);
	}
	for (size_t i = 0; i < s->r.nfiles; i++) {
		it_hist_free(&s->r.files[i].read_lat);
		it_hist_free(&s->r.files[i].write_lat);
		it_hist_free(&s->r.files[i].sync_lat);
	}
	for (size_t i = 0; i < s->r.nprocs; i++)
		it_hist_free(&s->r.procs[i].io.sync_lat);
	free(s->r.procs);
	for (size_t i = 0; i < s->r.nroles; i++)
		it_hist_free(&s->r.roles[i].io.sync_lat);
	free(s->r.roles);
	free(s->titlev);
	it_map_free(&s->titles);
	it_map_free(&s->procs);
	for (size_t i = 0; i < s->r.nthreads; i++)
		free(s->r.threads[i].timeline);
	free(s->r.per_call);
	free(s->r.files);
	free(s->r.threads);
	free(s->r.events);
	free(s->r.background);
	for (size_t i = 0; i < s->r.nbfiles; i++) {
		it_hist_free(&s->r.bfiles[i].q2c);
		free(s->r.bfiles[i].timeline);
	}
	for (size_t i = 0; i < s->r.nbprocs; i++)
		free(s->r.bprocs[i].timeline);
	free(s->r.bprocs);
	for (size_t i = 0; i < s->nbprocs; i++)
		free(s->btl[i].b);
	free(s->btl);
	free(s->bprocv);
	it_map_free(&s->bprocs);
	free(s->r.bfiles);
	free(s->r.unattributed);
	for (size_t i = 0; i < s->npool; i++)
		free(s->pool[i]);
	free(s->pool);
	free(s->strv);
	it_map_free(&s->strs);
	free(s->tagv);
	free(s->namev);
	free(s->comms);
	free(s->evq);
	free(s->tcv);
	it_map_free(&s->tidcomm);
	for (size_t i = 0; i < s->ntids; i++) {
		free(s->tidv[i].v);
		free(s->tidv[i].calls);
	}
	free(s->tidv);
	free(s->waiting);
	free(s->pub);
	for (size_t i = 0; i < s->ninos; i++)
		free(s->inov[i].v);
	free(s->inov);
	if (s->spill)
		fclose(s->spill);
	it_map_free(&s->inodes);
	it_map_free(&s->bg_comm);
	it_map_free(&s->un_comm);
	free(s->q);
	for (size_t i = 0; i < s->r.nthreads; i++)
		free(s->tl[i].b);
	free(s->tl);
	it_map_free(&s->tags);
	it_map_free(&s->names);
	it_map_free(&s->trail_tid);
	it_map_free(&s->files);
	it_map_free(&s->threads);
	free(s);
}

const void *it_sys_side_next(const void *payload, size_t len, size_t *off, size_t *reclen)
{
	const unsigned char *p = (const unsigned char *)payload + *off;
	size_t left = len - *off, need;
	uint16_t type;

	if (*off >= len || left < sizeof(type))
		return NULL;
	memcpy(&type, p, sizeof(type));
	switch (type) {
	case IT_SREC_PATH: {
		struct it_sys_path h;
		if (left < sizeof(h))
			return NULL;
		memcpy(&h, p, sizeof(h));
		need = sizeof(h) + h.len;
		break;
	}
	case IT_SREC_NAME: {
		struct it_sys_name h;
		if (left < sizeof(h))
			return NULL;
		memcpy(&h, p, sizeof(h));
		need = sizeof(h) + h.len;
		break;
	}
	case IT_SREC_TASK:
		need = sizeof(struct it_sys_task);
		break;
	case IT_SREC_TITLE: {
		struct it_sys_title h;
		if (left < sizeof(h))
			return NULL;
		memcpy(&h, p, sizeof(h));
		need = sizeof(h) + h.len;
		break;
	}
	default:
		return NULL;
	}
	if (need > left)
		return NULL;
	*reclen = need;
	*off += (need + 7) & ~(size_t)7;
	return p;
}
