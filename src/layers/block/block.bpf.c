// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Block-layer probes: one struct it_event per tracepoint hit, into the
 * ring of the CPU it fires on (events.bpf.h; the recorder merges the CPUs'
 * rings by time, so the events of one request stay in causal order). See
 * include/iotrail/event.h for what each event means.
 *
 * Two variants of every program, picked by user space with
 * bpf_program__set_autoload() (src/record.c, with the checks of src/hooks.c):
 *   X_btf  SEC("tp_btf/X"): BTF-typed raw tracepoint; kernel pointers are
 *          dereferenced directly (cheapest; needs v5.5+ and vmlinux BTF).
 *   X      SEC("raw_tp/X"): untyped raw tracepoint; reads go through
 *          bpf_probe_read_kernel (BPF_CORE_READ). This is the fallback, not
 *          the classic SEC("tracepoint/block/X"): the classic format only
 *          carries dev/sector/rwbs, not the struct request or bio pointers,
 *          so it could not link a bio (Q) to its request (I/D/C).
 *
 * commit a54895fa057c ("block: remove the request_queue to argument request
 * based tracepoints"), e8a676d61c07 ("block: simplify and extend the
 * block_bio_merge tracepoint class") and eb6f7f7cd3af ("block: remove the
 * request_queue argument to the block_split tracepoint"), all v5.11, dropped
 * the leading struct request_queue * (and for the merges the request)
 * arguments. User space detects that from the arity of the
 * btf_trace_block_rq_issue typedef and sets tp_has_queue_arg.
 *
 * Hot path, unfiltered: no map besides the ring buffer, and on Q a per-CPU
 * "last submitter" slot (the tid -> comm LRU only when the submitter
 * changes); everything else is stateless. Wakeups are rare (see ev_submit).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "iotrail/event.h"
#include "core_fixes.bpf.h"
#define IT_EV_BUFS /* tracepoints only: events.bpf.h */
#include "events.bpf.h"
#include "scope.bpf.h"

/* ---- tunables, set by user space before load ---- */
const volatile bool tp_has_queue_arg = false; /* kernel < 5.11 argument layout */
const volatile __u32 rqf_flush_seq = 1u << 4; /* RQF_FLUSH_SEQ on this kernel (record.c) */

/* ---- maps (ring buffer, drop counters, -p tracking: events.bpf.h) ---- */

/* tid -> hash of the comm last announced with IT_EV_TASK. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} task_comm SEC(".maps");

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline struct gendisk *bio_disk(struct bio *bio, bool btf)
{
	struct bio___old *old = (void *)bio;
	struct block_device *bdev;

	if (!bpf_core_field_exists(old->bi_disk)) {
		bdev = KREAD(btf, bio, bi_bdev);
		return bdev ? KREAD(btf, bdev, bd_disk) : NULL;
	}
	return KREAD(btf, old, bi_disk);
}

static __always_inline __u8 norm_op(__u32 opf)
{
	__u32 op = opf & IT_REQ_OP_MASK;

	/* most frequent first */
	if (IT_OP_IS(op, READ))
		return IT_OP_READ;
	if (IT_OP_IS(op, WRITE))
		return IT_OP_WRITE;
	if (IT_OP_IS(op, FLUSH))
		return IT_OP_FLUSH;
	if (IT_OP_IS(op, DISCARD))
		return IT_OP_DISCARD;
	if (IT_OP_IS(op, WRITE_ZEROES))
		return IT_OP_WRITE_ZEROES;
	if (IT_OP_IS(op, SECURE_ERASE))
		return IT_OP_SECURE_ERASE;
	if (IT_OP_IS(op, ZONE_APPEND))
		return IT_OP_ZONE_APPEND;
	if (IT_OP_IS(op, ZONE_RESET))
		return IT_OP_ZONE_RESET;
	if (IT_OP_IS(op, ZONE_RESET_ALL))
		return IT_OP_ZONE_RESET_ALL;
	if (IT_OP_IS(op, ZONE_OPEN))
		return IT_OP_ZONE_OPEN;
	if (IT_OP_IS(op, ZONE_CLOSE))
		return IT_OP_ZONE_CLOSE;
	if (IT_OP_IS(op, ZONE_FINISH))
		return IT_OP_ZONE_FINISH;
	if (IT_OP_IS(op, DRV_IN))
		return IT_OP_DRV_IN;
	if (IT_OP_IS(op, DRV_OUT))
		return IT_OP_DRV_OUT;
	return IT_OP_OTHER;
}

static __always_inline __u32 norm_flags(__u32 opf)
{
	__u32 f = 0;

	f |= IT_FLAG_SET(opf, SYNC) ? IT_F_SYNC : 0;
	f |= IT_FLAG_SET(opf, META) ? IT_F_META : 0;
	f |= IT_FLAG_SET(opf, PRIO) ? IT_F_PRIO : 0;
	f |= IT_FLAG_SET(opf, NOMERGE) ? IT_F_NOMERGE : 0;
	f |= IT_FLAG_SET(opf, IDLE) ? IT_F_IDLE : 0;
	f |= IT_FLAG_SET(opf, FUA) ? IT_F_FUA : 0;
	f |= IT_FLAG_SET(opf, PREFLUSH) ? IT_F_PREFLUSH : 0;
	f |= IT_FLAG_SET(opf, RAHEAD) ? IT_F_RAHEAD : 0;
	f |= IT_FLAG_SET(opf, BACKGROUND) ? IT_F_BACKGROUND : 0;
	f |= IT_FLAG_SET(opf, NOWAIT) ? IT_F_NOWAIT : 0;
	f |= (IT_FLAG_SET(opf, POLLED) || IT_FLAG_SET(opf, HIPRI)) ? IT_F_POLLED : 0;
	return f;
}

/* blk_status_t -> negative errno, as blk_status_to_errno() does. The
 * BLK_STS_* values are #defines (no BTF), stable since v4.13 for 1..13. */
static __always_inline __s16 status_errno(__u32 sts)
{
	switch (sts) {
	case 0: return 0;
	case 1: return -95;  /* NOTSUPP    -EOPNOTSUPP */
	case 2: return -110; /* TIMEOUT    -ETIMEDOUT */
	case 3: return -28;  /* NOSPC      -ENOSPC */
	case 4: return -67;  /* TRANSPORT  -ENOLINK */
	case 5: return -121; /* TARGET     -EREMOTEIO */
	case 6: return -52;  /* NEXUS/RESV_CONFLICT -EBADE */
	case 7: return -61;  /* MEDIUM     -ENODATA */
	case 8: return -84;  /* PROTECTION -EILSEQ */
	case 9: return -12;  /* RESOURCE   -ENOMEM */
	case 11: return -78; /* DM_REQUEUE -EREMCHG */
	case 12: return -11; /* AGAIN      -EAGAIN */
	case 13: return -16; /* DEV_RESOURCE -EBUSY */
	default: return -5;  /* IOERR and newer codes: -EIO */
	}
}

/* Per CPU, the last thread that submitted here and its comm hash: the same
 * thread submitting again (the common case) costs no hash-map lookup. */
struct task_seen {
	__u32 tid;
	__u32 pad;
	__u64 hash;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct task_seen);
} last_task SEC(".maps");

union comm16 {
	char c[16];
	__u64 w[2];
};

static __always_inline void current_comm(union comm16 *comm, bool btf)
{
	/* bpf_get_current_task_btf() is v5.11+; tp_btf itself is v5.5+ */
	if (btf && bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		/* two loads instead of a helper call */
		struct task_struct *t = bpf_get_current_task_btf();

		comm->w[0] = *(__u64 *)&t->comm[0];
		comm->w[1] = *(__u64 *)&t->comm[8];
	} else {
		bpf_get_current_comm(comm->c, sizeof(comm->c));
	}
}

/* IT_EV_TASK the first time a tid is seen, or when its comm changed. */
static __always_inline void note_task(bool btf)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	union comm16 comm = {};
	struct task_seen *last;
	struct it_event *e;
	__u64 h, *old;

	current_comm(&comm, btf);
	h = (comm.w[0] * 0x9e3779b97f4a7c15ull) ^ (comm.w[1] + 0x632be59bd9b4e019ull);
	h |= 1; /* never 0, so a zeroed slot cannot match */
	last = bpf_map_lookup_elem(&last_task, &zero);
	if (last && last->tid == tid && last->hash == h)
		return;
	old = bpf_map_lookup_elem(&task_comm, &tid);
	if (!old || *old != h) {
		e = ev_reserve(IT_EV_TASK, IT_LAYER_BLOCK, 0);
		if (!e)
			return; /* not cached: retried on the next Q */
		__builtin_memcpy(e->comm, comm.c, sizeof(e->comm));
		ev_submit(e);
		bpf_map_update_elem(&task_comm, &tid, &h, BPF_ANY);
	}
	if (last) {
		last->tid = tid;
		last->hash = h;
	}
}

/* ---- the scope (-p, --comm, --cgroup): the submitter of a bio decides,
 * and its bios are followed into their requests ---- */

/* Whether the current task is in the recording's scope (scope.bpf.h). */
static __always_inline bool submitter_wanted(bool btf)
{
	union comm16 comm = {};

	current_comm(&comm, btf);
	return scope_wanted(bpf_get_current_pid_tgid() >> 32, comm.c);
}

/*
 * How many entries the tracked table holds, or more: raised by an insert,
 * lowered by a delete that found its entry (an entry the LRU evicts, or a
 * bio merged into the middle of a request, which nothing deletes, leaves
 * it high for good: then the table is asked as before). While it is zero,
 * no kept I/O is in flight and a rejected request's events skip the table:
 * with a filter that keeps few I/Os, most of the time.
 */
__u64 tracked_live __attribute__((aligned(64))) = 0; /* read by every scoped event: a line of its own */

static __always_inline bool is_tracked(const void *p)
{
	__u64 key = (__u64)p;

	return tracked_live && bpf_map_lookup_elem(&tracked, &key) != NULL;
}

/* Raised before the insert, so that it is never below the table's count. */
static __always_inline void track(const void *p)
{
	__u64 key = (__u64)p;
	__u8 one = 1;

	__sync_fetch_and_add(&tracked_live, 1);
	if (bpf_map_update_elem(&tracked, &key, &one, BPF_NOEXIST))
		__sync_fetch_and_add(&tracked_live, -1); /* already in: counted */
}

static __always_inline void untrack(const void *p)
{
	__u64 key = (__u64)p;

	/* -1: the default BPF CPU has an atomic add but no sub */
	if (tracked_live && !bpf_map_delete_elem(&tracked, &key))
		__sync_fetch_and_add(&tracked_live, -1);
}

/* A request belongs to the filtered process if it is already tracked, or
 * if its first or last bio is (a bio merged at either end of it). */
static __always_inline bool rq_tracked(struct request *rq, bool btf, bool adopt)
{
	struct bio *first, *last;

	if (is_tracked(rq))
		return true;
	if (!adopt)
		return false;
	first = KREAD(btf, rq, bio);
	last = KREAD(btf, rq, biotail);
	if (last == first) /* one bio: the common case */
		last = NULL;
	if (!(first && is_tracked(first)) && !(last && is_tracked(last)))
		return false;
	/* from now on the request carries the identity: drop its bios so
	 * the LRU holds in-flight requests, not stale bios */
	track(rq);
	if (first)
		untrack(first);
	if (last)
		untrack(last);
	return true;
}

/* ---- the file a queued bio's data belongs to ---- */

#define IT_S_IFMT  0170000
#define IT_S_IFREG 0100000

/* Notes on Q (event.h) the regular file whose page cache m is. */
static __always_inline void mapping_file(struct address_space *m, struct it_event *e, bool btf)
{
	struct inode *host = KREAD(btf, m, host);
	struct super_block *sb;
	__u32 sdev;

	if (!host || (KREAD(btf, host, i_mode) & IT_S_IFMT) != IT_S_IFREG)
		return; /* the block device's own cache: metadata, journal */
	sb = KREAD(btf, host, i_sb);
	if (!sb)
		return;
	sdev = KREAD(btf, sb, s_dev);
	e->aux = KREAD(btf, host, i_ino);
	e->tag = (__u16)sdev;
	e->hwq = (__u16)(sdev >> 16);
}

/*
 * Writeback and readahead bios carry page-cache pages, whose mapping names
 * the file even when a flusher kworker submits them. Only the first page
 * is looked at (one file per bio in the writeback and readahead paths).
 * page->mapping's low two bits tag anon_vma and movable/KSM pointers
 * (PAGE_MAPPING_ANON/MOVABLE/KSM, FOLIO_MAPPING_* since their 2025 rename;
 * #defines, same values): only an untagged pointer is an address_space.
 * A tail page of a large folio (compound_head bit 0) has no mapping of its
 * own; its head page has. page->mapping and page->compound_head exist on
 * every kernel with BTF, so no flavour is needed (struct folio's mapping
 * aliases the head page's).
 */
/* The low bits of x, a kernel pointer or an integer read through one. In
 * tp_btf, such a load is a typed pointer, and the verifier forbids bit
 * operations on those, but lets a privileged program (tp_btf needs
 * CAP_PERFMON) subtract two pointers: the difference is a plain integer.
 * base is a struct page (64-byte aligned), so (x - base) has x's low bits. */
#define LOW_BITS(btf, x, base)                                                     \
	((btf) ? (((unsigned long)(x) - (unsigned long)(base)) & 3)                \
	       : ((unsigned long)(x) & 3))

static __always_inline void bio_file(struct bio *bio, struct it_event *e, bool btf)
{
	struct address_space *m;
	struct bio_vec *bv;
	struct page *page;
	unsigned long head;

	if (!e->bytes || !KREAD(btf, bio, bi_vcnt))
		return; /* no data: flush, discard, write zeroes */
	bv = KREAD(btf, bio, bi_io_vec);
	if (!bv)
		return;
	page = KREAD(btf, bv, bv_page);
	if (!page)
		return;
	/* compound_head shares its word with lru.next, so tp_btf sees a
	 * pointer there too */
	head = (unsigned long)KREAD(btf, page, compound_head);
	if (LOW_BITS(btf, head, page) & 1) {
		/* a tail page: the head page's address is an integer, not a
		 * pointer we may load through directly; probe reads from here */
		m = BPF_CORE_READ((struct page *)(head - 1), mapping);
		if (m && !((unsigned long)m & 3))
			mapping_file(m, e, false);
		return;
	}
	m = KREAD(btf, page, mapping);
	if (m && !LOW_BITS(btf, m, page))
		mapping_file(m, e, btf);
}

/* ---- bio events ---- */

static __always_inline int on_bio(struct bio *bio, __u8 type, __s16 error, bool btf)
{
	__u32 dev = disk_dev(bio_disk(bio, btf), btf);
	__u64 decided_ns = 0;
	__u32 opf;
	struct it_event *e;
	bool kept;

	if (!dev_wanted(dev))
		return 0;
	if (scoped) {
		if (type == IT_EV_BIO_QUEUE) {
			if (IT_SCOPE_ON && !submitter_wanted(btf))
				return 0;
			opf = KREAD(btf, bio, bi_opf);
			/* the clock only where the decision needs it (an epoch,
			 * the queuing call's mark) or the I/O is kept: a
			 * rejected Q reads no clock */
			if (scope_sample_epoch_n || scope_mark_calls)
				decided_ns = bpf_ktime_get_ns();
			kept = scope_pred_wanted(norm_op(opf), KREAD(btf, bio, bi_iter.bi_size), dev,
						 decided_ns);
			scope_mark_io(kept, decided_ns); /* for the syscall that queued it */
			if (!kept)
				return 0;
			if (!decided_ns)
				decided_ns = bpf_ktime_get_ns();
			track(bio);
		} else if (!is_tracked(bio)) {
			return 0;
		}
	}
	if (type == IT_EV_BIO_QUEUE)
		note_task(btf);
	e = ev_reserve(type, IT_LAYER_BLOCK, dev);
	if (!e)
		return 0;
	if (decided_ns) /* the Q's time is the one its epoch was counted at */
		e->ts_ns = decided_ns;
	opf = KREAD(btf, bio, bi_opf);
	e->id = (__u64)bio;
	e->sector = KREAD(btf, bio, bi_iter.bi_sector);
	e->bytes = KREAD(btf, bio, bi_iter.bi_size);
	e->op = norm_op(opf);
	e->flags = norm_flags(opf);
	e->error = error;
	if (type == IT_EV_BIO_QUEUE)
		bio_file(bio, e, btf);
	ev_submit(e);
	return 0;
}

/* The tracepoint's bio is the front part; bio_chain() made the remainder
 * (which keeps its identity) its bi_private. */
static __always_inline int on_split(struct bio *split, __u64 new_sector, bool btf)
{
	__u32 dev = disk_dev(bio_disk(split, btf), btf);
	void *parent = KREAD(btf, split, bi_private);
	struct it_event *e;
	__u32 opf;

	if (!dev_wanted(dev))
		return 0;
	if (scoped) {
		if (!is_tracked(parent))
			return 0;
		track(split);
	}
	e = ev_reserve(IT_EV_BIO_SPLIT, IT_LAYER_BLOCK, dev);
	if (!e)
		return 0;
	opf = KREAD(btf, split, bi_opf);
	e->id = (__u64)split;
	e->aux = (__u64)parent;
	e->sector = new_sector;
	e->bytes = KREAD(btf, split, bi_iter.bi_size);
	e->op = norm_op(opf);
	e->flags = norm_flags(opf);
	ev_submit(e);
	return 0;
}

/* Bios of blk-mq disks complete with their request (RQ_COMPLETE), so only
 * bio-based devices (no mq_ops) get BIO_COMPLETE for every bio. On blk-mq
 * disks the tracepoint still fires for bios that end in error before
 * becoming a request (e.g. -EAGAIN for a REQ_NOWAIT bio that needed a
 * split, which io_uring then resubmits): those are emitted too, or their Q
 * would dangle forever. */
static __always_inline int on_bio_complete(struct request_queue *q, struct bio *bio, bool btf)
{
	__u8 sts;

	if (!q)
		return 0;
	sts = KREAD(btf, bio, bi_status);
	if (!sts && KREAD(btf, q, mq_ops))
		return 0;
	on_bio(bio, IT_EV_BIO_COMPLETE, status_errno(sts), btf);
	if (scoped)
		untrack(bio);
	return 0;
}

/* ---- request events ---- */

static __always_inline int on_rq(struct request *rq, __u8 type, __u32 nr_bytes,
				 __u32 sts, bool btf)
{
	struct blk_mq_hw_ctx *hctx;
	struct it_event *e;
	bool last = false;
	__u32 opf, len, fseq, dev;
	int tag;

	/* scoped, with no kept I/O in flight: nothing to adopt or follow,
	 * so a rejected request reads nothing at all (not even its disk) */
	if (scoped && !tracked_live)
		return 0;
	dev = rq_dev(rq, btf);
	if (!dev_wanted(dev))
		return 0;
	/* C adopts too: an empty REQ_PREFLUSH request is never inserted or
	 * issued, only completed when its flush is done. Tested before any
	 * other read: a rejected request should cost next to nothing. */
	if (scoped && !rq_tracked(rq, btf, type == IT_EV_RQ_INSERT ||
				   type == IT_EV_RQ_ISSUE || type == IT_EV_RQ_COMPLETE))
		return 0;
	len = KREAD(btf, rq, __data_len);
	opf = KREAD(btf, rq, cmd_flags);
	/* a request in the flush machinery's sequence (PREFLUSH, data,
	 * POSTFLUSH; block/blk-flush.c): its data part completes once with
	 * the flag, and the request again, without it, when the sequence ends */
	fseq = KREAD(btf, rq, rq_flags) & rqf_flush_seq;
	if (scoped) {
		/* the last completion call covers what is left of the request
		 * (not the data part of a flush sequence: it completes again) */
		last = type == IT_EV_RQ_MERGE ||
		       (type == IT_EV_RQ_COMPLETE && nr_bytes >= len && !fseq);
	}
	e = ev_reserve(type, IT_LAYER_BLOCK, dev);
	if (!e)
		goto out;
	e->id = (__u64)rq;
	e->sector = KREAD(btf, rq, __sector);
	/* first bio: links I/D to its Q, and at C also requests that never
	 * pass I/D (an empty REQ_PREFLUSH bio goes straight to the flush
	 * machinery) */
	e->aux = (__u64)KREAD(btf, rq, bio);
	e->bytes = type == IT_EV_RQ_COMPLETE ? nr_bytes : len;
	e->op = norm_op(opf);
	e->flags = norm_flags(opf) | (fseq ? IT_F_FLUSH_SEQ : 0);
	/* the tracepoint fires before the bytes are taken off __data_len */
	if (type == IT_EV_RQ_COMPLETE && nr_bytes < len)
		e->flags |= IT_F_PARTIAL;
	tag = KREAD(btf, rq, tag);
	e->tag = tag < 0 ? 0xffff : tag;
	hctx = KREAD(btf, rq, mq_hctx);
	if (hctx)
		e->hwq = KREAD(btf, hctx, queue_num);
	if (type == IT_EV_RQ_COMPLETE)
		e->error = status_errno(sts);
	ev_submit(e);
out:
	if (last)
		untrack(rq);
	return 0;
}

/* ---- programs ----
 * ctx is the raw tracepoint argument array in both variants. Before v5.11
 * most block tracepoints had extra leading arguments; ARG() skips them.
 * tp_has_queue_arg is known to the verifier (rodata is frozen at load), so
 * it prunes the other branch (CTX_AT: core_fixes.bpf.h). */
/* argument n (counted on v5.11+) when the old layout had `extra` more in
 * front of it */
#define ARG(ctx, n, extra) (tp_has_queue_arg ? CTX_AT(ctx, (n) + (extra)) : CTX_AT(ctx, n))

#define RQ_PROGS(tp, type)                                                         \
	SEC("tp_btf/" #tp)                                                         \
	int tp##_btf(u64 *ctx)                                                     \
	{                                                                          \
		return on_rq((struct request *)ARG(ctx, 0, 1), type, 0, 0, true);      \
	}                                                                          \
	SEC("raw_tp/" #tp)                                                         \
	int tp(u64 *ctx)                                                           \
	{                                                                          \
		return on_rq((struct request *)ARG(ctx, 0, 1), type, 0, 0, false);     \
	}

/* (q, rq) before v5.11, (rq) since */
RQ_PROGS(block_rq_insert, IT_EV_RQ_INSERT)
RQ_PROGS(block_rq_issue, IT_EV_RQ_ISSUE)
RQ_PROGS(block_rq_requeue, IT_EV_RQ_REQUEUE)
RQ_PROGS(block_rq_merge, IT_EV_RQ_MERGE)

/* (rq, error, nr_bytes) on every kernel with BTF */
SEC("tp_btf/block_rq_complete")
int block_rq_complete_btf(u64 *ctx)
{
	return on_rq((struct request *)ctx[0], IT_EV_RQ_COMPLETE, ctx[2], ctx[1], true);
}

SEC("raw_tp/block_rq_complete")
int block_rq_complete(u64 *ctx)
{
	return on_rq((struct request *)ctx[0], IT_EV_RQ_COMPLETE, ctx[2], ctx[1], false);
}

/* (q, bio) before v5.11, (bio) since */
SEC("tp_btf/block_bio_queue")
int block_bio_queue_btf(u64 *ctx)
{
	return on_bio((struct bio *)ARG(ctx, 0, 1), IT_EV_BIO_QUEUE, 0, true);
}

SEC("raw_tp/block_bio_queue")
int block_bio_queue(u64 *ctx)
{
	return on_bio((struct bio *)ARG(ctx, 0, 1), IT_EV_BIO_QUEUE, 0, false);
}

/* (q, rq, bio) before v5.11, (bio) since */
SEC("tp_btf/block_bio_backmerge")
int block_bio_backmerge_btf(u64 *ctx)
{
	return on_bio((struct bio *)ARG(ctx, 0, 2), IT_EV_BIO_BACKMERGE, 0, true);
}

SEC("raw_tp/block_bio_backmerge")
int block_bio_backmerge(u64 *ctx)
{
	return on_bio((struct bio *)ARG(ctx, 0, 2), IT_EV_BIO_BACKMERGE, 0, false);
}

SEC("tp_btf/block_bio_frontmerge")
int block_bio_frontmerge_btf(u64 *ctx)
{
	return on_bio((struct bio *)ARG(ctx, 0, 2), IT_EV_BIO_FRONTMERGE, 0, true);
}

SEC("raw_tp/block_bio_frontmerge")
int block_bio_frontmerge(u64 *ctx)
{
	return on_bio((struct bio *)ARG(ctx, 0, 2), IT_EV_BIO_FRONTMERGE, 0, false);
}

/* (q, bio, new_sector) before v5.11, (bio, new_sector) since */
SEC("tp_btf/block_split")
int block_split_btf(u64 *ctx)
{
	return on_split((struct bio *)ARG(ctx, 0, 1), ARG(ctx, 1, 1), true);
}

SEC("raw_tp/block_split")
int block_split(u64 *ctx)
{
	return on_split((struct bio *)ARG(ctx, 0, 1), ARG(ctx, 1, 1), false);
}

/* (q, bio) on every kernel (v4.x also had a trailing error) */
SEC("tp_btf/block_bio_complete")
int block_bio_complete_btf(u64 *ctx)
{
	return on_bio_complete((struct request_queue *)ctx[0], (struct bio *)ctx[1], true);
}

SEC("raw_tp/block_bio_complete")
int block_bio_complete(u64 *ctx)
{
	return on_bio_complete((struct request_queue *)ctx[0], (struct bio *)ctx[1], false);
}
