/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The stitcher: block events in stream order -> one trail per I/O.
 *
 * Identity: a bio trail is keyed by its bio pointer from Q until a request
 * takes it (I or D with aux == that bio, the request's first bio); from
 * then on it is keyed by the request pointer until its final completion.
 * Events of one I/O are causally ordered in the stream, so one pass in
 * file order suffices.
 *
 *  Q   new trail (a bio queued again replaces its older trail). A bio
 *      queued on a stacked device that remaps it to a disk without a new
 *      Q (md) moves with its request to that disk. Q names the file of
 *      the bio's page-cache pages, if any: the trail keeps it (ino,
 *      fsdev), and a merge gives the file of the merged bio to a trail
 *      that has none.
 *  M/F merge of a bio into a pending I/O: the target is found by sector
 *      adjacency on the same device among I/Os that can still take bios
 *      (queued bios not yet in a request, e.g. plugged, and requests
 *      inserted but not issued). A front merge makes the bio the I/O's
 *      first bio, so the trail is re-keyed to it. The merged bio's own
 *      trail ends there. No adjacent I/O: counted as unattributed.
 *  X   split: the front part (a new bio) becomes its own trail with the
 *      parent's Q time and submitter; the parent keeps the remainder.
 *  I   first insert; a later insert (requeue, flush sequence) keeps it.
 *  D   issue; the last one counts (requeued requests are issued again).
 *  R   requeue: back from the driver, counted on the trail.
 *  C   completion of nr bytes; the I/O ends when the bytes issued are all
 *      completed (partial completions are counted). A completion of a
 *      request never seen is counted apart (it was in flight when the
 *      trace started), never as an I/O; unless its aux names a queued bio:
 *      then it ends that bio's trail (a request the kernel completes
 *      without issuing it, as the flush machinery does with an empty
 *      REQ_PREFLUSH request).
 *  RQ_MERGE  the request goes away into the adjacent pending request.
 *  BIO_COMPLETE  end of a bio trail (bio-based devices).
 *
 * The flush machinery (block/blk-flush.c) on a device with a write cache
 * turns a REQ_PREFLUSH/REQ_FUA request into a sequence (PREFLUSH, data,
 * POSTFLUSH) and issues flushes with a request of its own (flush_rq: op
 * flush, no bio):
 *  - a data-less REQ_PREFLUSH write (fsync's, fdatasync's flush) is a
 *    flush, not a write: its trail is op flush from Q on (flags keep
 *    PREFLUSH), Q2C being what its submitter waited; the request is never
 *    inserted or issued, only completed once its flush is done (C, aux =
 *    its bio);
 *  - the machinery's flush commands (op flush, no Q) are what the device
 *    executes and diskstats counts as flushes; they are counted apart
 *    (per device: count and D2C), not as I/Os, or every fdatasync would
 *    be two I/Os; one command may serve several waiting requests;
 *  - a write with data in a sequence completes twice: its data part
 *    (with IT_F_FLUSH_SEQ), then the request again with 0 bytes when its
 *    POSTFLUSH is done (the kernel ends the bio only then). The trail ends
 *    at the second: its D2C includes the POSTFLUSH. Traces recorded
 *    before IT_F_FLUSH_SEQ end it at the first; the second is then known
 *    by its request (fseq_done) and counted as flush_seq_ends, not as a
 *    completion of an I/O issued before the trace started.
 *
 * In-flight counts, per device, maintained from the stream only:
 *   active  = requests inserted or issued (I or D seen) and neither
 *             completed nor merged away;
 *   issued  = requests issued (D seen) and neither completed nor requeued.
 * A trail samples qd_insert = active when it enters the queue (its first I,
 * or its D when it is issued directly without an insert), and qd_issue =
 * issued at its (last) issue; both counts include the I/O itself, so a
 * lone I/O has depth 1 and fio at iodepth=8 shows 8. Requests in flight
 * before the trace started are not counted (their I/D were not seen).
 *
 * Sequential: a request is sequential when, at its first issue, it starts
 * at the sector where the previous issued request of the same device and
 * op ended (the order the device sees); bio trails are classified at
 * completion. I/Os without data (flush) are not classified; the first I/O
 * of a device and op counts as random.
 */
#include <string.h>

#include "analyze/internal.h"

/* (device index, sector) -> nonzero map key; sectors are cut to 48 bits
 * (128 PiB), lookups check the full value on the slot. */
#define MERGE_KEY(di, sector) (((uint64_t)((di) + 1) << 48) | ((sector) & 0xffffffffffffull))
#define DEV_KEY(dev) ((uint64_t)(dev) | (1ull << 32))
#define TID_KEY(tid) ((uint64_t)(tid) | (1ull << 32))

static void oom(struct it_analyzer *a)
{
	a->err = -1;
}

/* ---- devices ---- */

uint32_t it_dev_index(struct it_analyzer *a, uint32_t dev)
{
	uint32_t i, nsmall = a->ndevs < IT_SMALL_DEVS ? a->ndevs : IT_SMALL_DEVS;

	if (dev == a->last_dev && a->ndevs)
		return a->last_devidx;
	for (i = 0; i < nsmall; i++)
		if (a->small_devs[i] == dev)
			goto found;
	i = it_map_get(&a->devmap, DEV_KEY(dev));
	if (i == IT_MAP_NONE) {
		if (a->ndevs == IT_DEVS_MAX) {
			a->too_many_devs = true;
			a->err = -1;
			return IT_MAP_NONE;
		}
		if (a->ndevs == a->devcap) {
			uint32_t n = a->devcap ? a->devcap * 2 : 4;
			struct devstate *ds = realloc(a->ds, n * sizeof(*ds));
			if (ds)
				a->ds = ds;
			struct it_dev_stats *dst = realloc(a->dst, n * sizeof(*dst));
			if (dst)
				a->dst = dst;
			if (!ds || !dst) {
				oom(a);
				return IT_MAP_NONE;
			}
			a->devcap = n;
		}
		i = a->ndevs;
		if (it_map_put(&a->devmap, DEV_KEY(dev), i)) {
			oom(a);
			return IT_MAP_NONE;
		}
		a->ndevs++;
		memset(&a->ds[i], 0, sizeof(a->ds[i]));
		memset(a->ds[i].last_end, 0xff, sizeof(a->ds[i].last_end));
		memset(&a->dst[i], 0, sizeof(a->dst[i]));
		a->dst[i].dev = dev;
		if (i < IT_SMALL_DEVS)
			a->small_devs[i] = dev;
		it_timeline_fit(a);
	}
found:
	a->last_dev = dev;
	a->last_devidx = i;
	return i;
}

/* ---- comms ---- */

static uint64_t comm_hash(const char name[16])
{
	uint64_t x, y;

	memcpy(&x, name, 8);
	memcpy(&y, name + 8, 8);
	return ((x * 0x9E3779B97F4A7C15ull) ^ (y * 0xC2B2AE3D27D4EB4Full)) | 1;
}

static uint32_t comm_intern(struct it_analyzer *a, const char *raw)
{
	char name[16] = { 0 };
	memcpy(name, raw, strnlen(raw, 15));
	uint64_t h = comm_hash(name);
	uint32_t id = it_map_get(&a->commmap, h);

	if (id != IT_MAP_NONE && !memcmp(a->comms[id], name, 16))
		return id;
	if (id != IT_MAP_NONE) { /* 64-bit hash collision: look the slow way */
		for (uint32_t k = 1; k < a->ncomms; k++)
			if (!memcmp(a->comms[k], name, 16))
				return k;
	}
	if (a->ncomms == a->commcap) {
		uint32_t n = a->commcap * 2;
		char (*c)[16] = realloc(a->comms, n * sizeof(*c));
		if (!c) {
			oom(a);
			return 0;
		}
		a->comms = c;
		a->commcap = n;
	}
	uint32_t nid = a->ncomms++;
	memcpy(a->comms[nid], name, 16);
	if (id == IT_MAP_NONE && it_map_put(&a->commmap, h, nid))
		oom(a);
	return nid;
}

static void on_task(struct it_analyzer *a, const struct it_event *e)
{
	uint32_t id = comm_intern(a, e->comm);

	a->st.tasks++;
	if (it_map_put(&a->tids, TID_KEY(e->tid), id))
		oom(a);
	if (e->tid == a->last_tid)
		a->last_comm = id;
}

static uint32_t comm_of(struct it_analyzer *a, uint32_t tid)
{
	if (tid != a->last_tid) {
		uint32_t id = it_map_get(&a->tids, TID_KEY(tid));
		a->last_tid = tid;
		a->last_comm = id == IT_MAP_NONE ? 0 : id;
	}
	return a->last_comm;
}

/* ---- slots ---- */

static uint32_t slot_alloc(struct it_analyzer *a)
{
	if (a->free_head == IT_NO_SLOT) {
		uint32_t n = a->nslots ? a->nslots * 2 : 1024;
		struct slot *s = realloc(a->slots, (size_t)n * sizeof(*s));
		if (!s) {
			oom(a);
			return IT_NO_SLOT;
		}
		for (uint32_t k = a->nslots; k < n; k++) {
			s[k].state = SLOT_FREE;
			s[k].next_free = k + 1 < n ? k + 1 : IT_NO_SLOT;
		}
		a->slots = s;
		a->free_head = a->nslots;
		a->nslots = n;
	}
	uint32_t i = a->free_head;
	struct slot *s = &a->slots[i];
	a->free_head = s->next_free;
	memset(s, 0, sizeof(*s));
	return i;
}

/* A new trail from the fields of event e. May move a->slots. */
static uint32_t trail_new(struct it_analyzer *a, const struct it_event *e, uint32_t di)
{
	uint32_t i = slot_alloc(a);
	if (i == IT_NO_SLOT)
		return i;
	struct slot *s = &a->slots[i];
	s->t.dev = e->dev;
	s->t.sector = e->sector;
	s->t.bytes = e->bytes;
	s->t.op = e->op < IT_OP_MAX ? e->op : IT_OP_OTHER;
	s->t.flags = e->flags;
	s->t.pid = e->pid;
	s->t.tid = e->tid;
	s->t.comm = comm_of(a, e->tid);
	s->end = e->sector + (e->bytes >> 9);
	s->devidx = di;
	return i;
}

/* Mergeable: reachable by its start and end sectors. */
static void index_add(struct it_analyzer *a, uint32_t i)
{
	struct slot *s = &a->slots[i];

	if (!s->t.bytes || !a->ds[s->devidx].indexing)
		return; /* nothing merges into a flush */
	if (it_map_put(&a->by_end, MERGE_KEY(s->devidx, s->end), i) ||
	    it_map_put(&a->by_start, MERGE_KEY(s->devidx, s->t.sector), i))
		oom(a);
	s->indexed = 1;
}

static void index_del(struct it_analyzer *a, uint32_t i)
{
	struct slot *s = &a->slots[i];

	if (!s->indexed)
		return;
	it_map_del_if(&a->by_end, MERGE_KEY(s->devidx, s->end), i);
	it_map_del_if(&a->by_start, MERGE_KEY(s->devidx, s->t.sector), i);
	s->indexed = 0;
}

/* The first merge on device di: from now on its mergeable trails (bios
 * not yet in a request, requests inserted and never issued) are indexed. */
static void index_enable(struct it_analyzer *a, uint32_t di)
{
	if (a->ds[di].indexing)
		return;
	a->ds[di].indexing = true;
	for (uint32_t i = 0; i < a->nslots; i++) {
		struct slot *s = &a->slots[i];

		/* the state first: a slot never used has no device yet */
		if ((s->state == SLOT_QUEUED || (s->state == SLOT_INSERTED && !s->t.ts[IT_PT_D])) &&
		    s->devidx == di)
			index_add(a, i);
	}
}

/* Removes trail i from every table and counter and frees its slot. */
static void trail_drop(struct it_analyzer *a, uint32_t i)
{
	struct slot *s = &a->slots[i];
	struct devstate *ds = &a->ds[s->devidx];

	index_del(a, i);
	if (s->state == SLOT_QUEUED)
		it_map_del_if(&a->bios, s->bio, i);
	else
		it_map_del_if(&a->rqs, s->rq, i);
	ds->active -= s->active;
	ds->issued -= s->issued;
	s->state = SLOT_FREE;
	s->next_free = a->free_head;
	a->free_head = i;
}

/* The flush machinery's own flush command: counted apart, not an I/O. */
static void flush_cmd_end(struct it_analyzer *a, const struct slot *s)
{
	struct it_dev_stats *d = &a->dst[s->devidx];
	int64_t d2c = s->t.ts[IT_PT_C] ? it_stage_time(&s->t, IT_STAGE_D2C) : 0;

	a->st.flush_cmds++;
	d->flush_cmds++;
	it_diskwin_add(a, s->t.dev, IT_DS_FLUSH, s->t.ts[IT_PT_C] ? s->t.ts[IT_PT_C] : s->t.completed_by,
		       s->t.ts[IT_PT_C] ? IT_DS_COUNTED : IT_DS_REUSED);
	if (d2c > 0) {
		d->flush_cmd_ns += (uint64_t)d2c;
		if ((uint64_t)d2c > d->flush_cmd_max_ns)
			d->flush_cmd_max_ns = (uint64_t)d2c;
	}
}

static void trail_end(struct it_analyzer *a, uint32_t i, uint64_t ts)
{
	struct slot *s = &a->slots[i];

	s->t.ts[IT_PT_C] = ts;
	if (s->t.op == IT_OP_FLUSH && !s->t.ts[IT_PT_Q] && s->t.kind == IT_TRAIL_REQUEST) {
		flush_cmd_end(a, s);
		if (s->t.ts[IT_PT_N])
			it_nvme_link_trail(a, &s->t, s->rq);
		trail_drop(a, i);
		return;
	}
	/* an old trace's PREFLUSH/FUA write with data: it may complete again */
	if (s->t.bytes && (s->t.flags & (IT_F_PREFLUSH | IT_F_FUA)) &&
	    !(s->t.flags & IT_F_FLUSH_SEQ) && s->rq && it_map_put(&a->fseq_done, s->rq, 1))
		oom(a);
	it_aggregate(a, &s->t, s->devidx);
	if (s->t.ts[IT_PT_N])
		it_nvme_link_trail(a, &s->t, s->rq);
	if (a->zones)
		it_zones_trail(a->zones, &s->t);
	if (a->o.on_trail)
		a->o.on_trail(&s->t, a->o.ctx);
	trail_drop(a, i);
}

static void classify(struct devstate *ds, struct it_trail *t)
{
	if (!t->bytes)
		return;
	uint64_t *last = &ds->last_end[t->op];
	t->seq = *last == t->sector ? IT_SEQ_SEQUENTIAL : IT_SEQ_RANDOM;
	*last = t->sector + (t->bytes >> 9);
}

/* ---- bio events ---- */

static void trail_lost(struct it_analyzer *a, uint32_t i, uint64_t seen_again);

/* A data-less REQ_PREFLUSH request (a flush request): the machinery ends it
 * without inserting or issuing it, so it stays queued until its C. */
static bool dataless_flush(const struct slot *s)
{
	return s->state == SLOT_QUEUED && s->t.op == IT_OP_FLUSH && s->t.ts[IT_PT_Q] && !s->t.bytes;
}

static void on_queue(struct it_analyzer *a, const struct it_event *e, uint32_t di)
{
	uint32_t old = it_map_get(&a->bios, e->id);

	/* a flush request's bio queued again on its device: the bio was freed
	 * and reused, so the last flush ended, its completion event lost
	 * (PostgreSQL's fdatasync flushes: 2 of 17,000 a run, unflagged
	 * before); any other bio queued again is resubmitted */
	if (old != IT_MAP_NONE && dataless_flush(&a->slots[old]) && a->slots[old].devidx == di) {
		trail_lost(a, old, e->ts_ns);
	} else if (old != IT_MAP_NONE) {
		a->st.bio_requeued++;
		trail_drop(a, old);
	}
	uint32_t i = trail_new(a, e, di);
	if (i == IT_NO_SLOT)
		return;
	struct slot *s = &a->slots[i];
	s->t.ts[IT_PT_Q] = e->ts_ns;
	if (e->op == IT_OP_WRITE && !e->bytes && (e->flags & IT_F_PREFLUSH))
		s->t.op = IT_OP_FLUSH; /* a flush request, not a write (see the top) */
	if (e->aux) {
		s->t.ino = e->aux;
		s->t.fsdev = IT_EV_FILE_DEV(e);
	}
	s->bio = e->id;
	s->state = SLOT_QUEUED;
	if (it_map_put(&a->bios, e->id, i))
		oom(a);
	index_add(a, i);
}

static void on_bio_merge(struct it_analyzer *a, const struct it_event *e, uint32_t di, bool front)
{
	uint64_t len = e->bytes >> 9, qx = 0, xino = 0;
	uint32_t x = it_map_get(&a->bios, e->id), xfsdev = 0;

	index_enable(a, di);
	if (x != IT_MAP_NONE) { /* the merged bio's own trail ends here */
		qx = a->slots[x].t.ts[IT_PT_Q];
		xino = a->slots[x].t.ino;
		xfsdev = a->slots[x].t.fsdev;
		trail_drop(a, x);
	}
	uint64_t at = front ? e->sector + len : e->sector;
	uint32_t i = it_map_get(front ? &a->by_start : &a->by_end, MERGE_KEY(di, at));
	struct slot *s = i == IT_MAP_NONE ? NULL : &a->slots[i];
	if (!s || !s->indexed || s->devidx != di || (front ? s->t.sector : s->end) != at) {
		a->st.merges_unattributed++;
		return;
	}
	index_del(a, i);
	if (!front) {
		s->end += len;
	} else {
		s->t.sector = e->sector;
		if (s->state == SLOT_QUEUED) { /* the request will name this bio first */
			it_map_del_if(&a->bios, s->bio, i);
			s->bio = e->id;
			if (it_map_put(&a->bios, e->id, i))
				oom(a);
		}
	}
	s->t.bytes += e->bytes;
	if (s->t.merges < UINT16_MAX)
		s->t.merges++;
	if (qx && s->t.ts[IT_PT_Q] && qx < s->t.ts[IT_PT_Q])
		s->t.ts[IT_PT_Q] = qx;
	if (!s->t.ino && xino) { /* an I/O keeps the file of its first bio that has one */
		s->t.ino = xino;
		s->t.fsdev = xfsdev;
	}
	index_add(a, i);
	a->st.merges++;
}

static void on_split(struct it_analyzer *a, const struct it_event *e)
{
	uint32_t p = it_map_get(&a->bios, e->aux);

	if (p == IT_MAP_NONE) {
		a->st.splits_unknown++; /* the front part will show up without Q */
		return;
	}
	uint32_t old = it_map_get(&a->bios, e->id);
	if (old != IT_MAP_NONE && old != p)
		trail_drop(a, old);
	uint32_t i = slot_alloc(a);
	if (i == IT_NO_SLOT)
		return;
	struct slot *ps = &a->slots[p], *s = &a->slots[i];
	uint64_t start = ps->t.sector, cut = e->sector;

	if (cut <= start || cut >= ps->end) /* inconsistent: trust the front size */
		cut = start + (e->bytes >> 9);
	s->t = ps->t;
	s->t.bytes = (uint32_t)((cut - start) << 9);
	s->t.split = 1;
	s->end = cut;
	s->bio = e->id;
	s->devidx = ps->devidx;
	s->state = SLOT_QUEUED;
	index_del(a, p);
	ps->t.sector = cut;
	ps->t.bytes = ps->t.bytes > s->t.bytes ? ps->t.bytes - s->t.bytes : 0;
	ps->t.split = 1;
	index_add(a, p);
	if (it_map_put(&a->bios, e->id, i))
		oom(a);
	index_add(a, i);
	a->st.splits++;
}

static void on_bio_complete(struct it_analyzer *a, const struct it_event *e)
{
	uint32_t i = it_map_get(&a->bios, e->id);

	if (i == IT_MAP_NONE) {
		a->st.unknown_completions++;
		it_diskwin_add(a, e->dev, it_ds_class(e->op, false), e->ts_ns, IT_DS_UNSTARTED);
		return;
	}
	struct slot *s = &a->slots[i];
	s->t.kind = IT_TRAIL_BIO;
	if (e->error)
		s->t.error = e->error;
	classify(&a->ds[s->devidx], &s->t);
	trail_end(a, i, e->ts_ns);
}

/* ---- request events ---- */

/* The open trail of a request pointer that comes back with a first bio
 * still queued on its own is an older I/O whose completion was lost. */
static bool stale(struct it_analyzer *a, const struct it_event *e)
{
	return e->aux && it_map_get(&a->bios, e->aux) != IT_MAP_NONE;
}

/* Links request e->id to the trail of its first bio e->aux, or starts a
 * trail without Q when that bio was not seen. */
static uint32_t rq_link(struct it_analyzer *a, const struct it_event *e, uint32_t di)
{
	uint32_t i = e->aux ? it_map_take(&a->bios, e->aux) : IT_MAP_NONE;

	if (i != IT_MAP_NONE) {
		index_del(a, i);
	} else {
		i = trail_new(a, e, di);
		if (i == IT_NO_SLOT)
			return i;
	}
	struct slot *s = &a->slots[i];
	if (s->devidx != di) { /* queued on a stacked device (md) that remapped it */
		s->devidx = di;
		s->t.dev = e->dev;
	}
	s->rq = e->id;
	s->t.kind = IT_TRAIL_REQUEST;
	s->t.sector = e->sector;
	s->t.bytes = e->bytes;
	s->t.flags |= e->flags;
	s->end = e->sector + (e->bytes >> 9);
	s->state = SLOT_INSERTED;
	if (it_map_put(&a->rqs, e->id, i))
		oom(a);
	return i;
}

/*
 * Trail i's request came back for a new I/O (stale) before its completion
 * event was seen. The kernel reuses a request only after it has ended, and
 * an issued request ends by completing: block_rq_complete fired for it,
 * but no BPF program ran (README, Known problems: the kernel skips every
 * BPF program on the block tracepoints for a softirq's batch of
 * completions now and then, and counts no miss). So the I/O is counted as
 * completed, with its bytes, at seen_again (the latest its completion can
 * have been) in the timeline, but without a completion time: no D2C or
 * Q2C, and no link to a system call, NVMe command or zone. A request never
 * issued may instead have been merged away (its merge event lost too): it
 * is not counted. Both are counted in lost; the first also in
 * lost_counted (as is a data-less flush request, which the machinery ends
 * without issuing); an issued flush command of the machinery's is counted
 * as a flush command.
 */
static void trail_lost(struct it_analyzer *a, uint32_t i, uint64_t seen_again)
{
	struct slot *s = &a->slots[i];
	bool flush_cmd = s->t.op == IT_OP_FLUSH && !s->t.ts[IT_PT_Q] && s->t.kind == IT_TRAIL_REQUEST;

	a->st.lost++;
	if ((s->state == SLOT_ISSUED && !flush_cmd) || dataless_flush(s)) {
		a->st.lost_counted++;
		s->t.ts[IT_PT_C] = 0;
		s->t.completed_by = seen_again;
		it_aggregate(a, &s->t, s->devidx);
	} else if (s->state == SLOT_ISSUED) {
		/* the machinery's flush command: issued, so it completed (its
		 * request is reused only after); counted as a flush command
		 * (not an I/O: not in lost_counted), without a D2C */
		s->t.ts[IT_PT_C] = 0;
		s->t.completed_by = seen_again;
		flush_cmd_end(a, s);
	}
	trail_drop(a, i);
}

/* The machinery's flush request inserted again while issued: it carries
 * no bio to tell a new use by, and the machinery inserts it for its next
 * flush only once the last one completed: that completion was lost (a
 * requeue of it, lost too, would look the same; never seen). */
static bool flush_cmd_reused(const struct slot *s)
{
	return s->t.op == IT_OP_FLUSH && !s->t.ts[IT_PT_Q] && s->t.kind == IT_TRAIL_REQUEST &&
	       s->state == SLOT_ISSUED;
}

static void on_insert(struct it_analyzer *a, const struct it_event *e, uint32_t di)
{
	uint32_t i = it_map_get(&a->rqs, e->id);

	if (i != IT_MAP_NONE && (stale(a, e) || flush_cmd_reused(&a->slots[i]))) {
		trail_lost(a, i, e->ts_ns);
		i = IT_MAP_NONE;
	}
	if (i != IT_MAP_NONE) { /* inserted again: requeue, flush sequence */
		struct slot *s = &a->slots[i];
		if (s->issued) {
			s->issued = 0;
			a->ds[s->devidx].issued--;
		}
		s->state = SLOT_INSERTED;
		return;
	}
	i = rq_link(a, e, di);
	if (i == IT_NO_SLOT)
		return;
	struct slot *s = &a->slots[i];
	struct devstate *ds = &a->ds[s->devidx];
	s->t.ts[IT_PT_I] = e->ts_ns;
	s->active = 1;
	s->t.qd_insert = ++ds->active;
	index_add(a, i); /* the scheduler may still merge bios into it */
}

static void on_issue(struct it_analyzer *a, const struct it_event *e, uint32_t di)
{
	uint32_t i = it_map_get(&a->rqs, e->id);

	if (i != IT_MAP_NONE && stale(a, e)) {
		trail_lost(a, i, e->ts_ns);
		i = IT_MAP_NONE;
	}
	if (i == IT_MAP_NONE) {
		i = rq_link(a, e, di);
		if (i == IT_NO_SLOT)
			return;
	} else if (a->slots[i].state == SLOT_ISSUED && a->slots[i].t.requeues < UINT16_MAX) {
		a->slots[i].t.requeues++; /* issued again: its requeue was lost */
	}
	struct slot *s = &a->slots[i];
	struct devstate *ds = &a->ds[s->devidx];
	index_del(a, i);
	if (!s->active) { /* issued directly, never inserted */
		s->active = 1;
		s->t.qd_insert = ++ds->active;
	}
	if (!s->issued) {
		s->issued = 1;
		ds->issued++;
	}
	s->t.qd_issue = ds->issued;
	s->remaining = e->bytes;
	s->state = SLOT_ISSUED;
	if (!s->t.ts[IT_PT_D]) {
		s->t.sector = e->sector;
		s->t.bytes = e->bytes;
		classify(ds, &s->t);
	}
	s->t.ts[IT_PT_D] = e->ts_ns;
	it_nvme_link_issue(a, i, e);
}

static void on_requeue(struct it_analyzer *a, const struct it_event *e)
{
	uint32_t i = it_map_get(&a->rqs, e->id);

	if (i == IT_MAP_NONE) {
		a->st.requeues_unknown++;
		return;
	}
	struct slot *s = &a->slots[i];
	if (s->t.requeues < UINT16_MAX)
		s->t.requeues++;
	a->st.requeues++;
	if (s->issued) {
		s->issued = 0;
		a->ds[s->devidx].issued--;
	}
	s->state = SLOT_INSERTED;
}

static void on_complete(struct it_analyzer *a, const struct it_event *e)
{
	uint32_t i = it_map_get(&a->rqs, e->id);

	if (i == IT_MAP_NONE && e->aux)
		i = it_map_get(&a->bios, e->aux);
	if (i == IT_MAP_NONE) {
		if (!e->bytes && it_map_del(&a->fseq_done, e->id))
			a->st.flush_seq_ends++; /* the end of a sequence whose data part ended it */
		else {
			a->st.unknown_completions++;
			/* no bio: the machinery's flush command */
			it_diskwin_add(a, e->dev, it_ds_class(e->op, e->op == IT_OP_FLUSH && !e->aux),
				       e->ts_ns, IT_DS_UNSTARTED);
		}
		return;
	}
	struct slot *s = &a->slots[i];
	s->t.kind = IT_TRAIL_REQUEST;
	if (e->error)
		s->t.error = e->error;
	if ((e->flags & IT_F_FLUSH_SEQ) && e->op != IT_OP_FLUSH && e->bytes) {
		/* the data part of a flush sequence: the request completes
		 * again once its POSTFLUSH is done */
		s->t.flags |= IT_F_FLUSH_SEQ;
		s->fseq_data = 1;
		s->remaining = 0;
		return;
	}
	if (e->bytes < s->remaining) {
		s->remaining -= e->bytes;
		if (s->t.partial < UINT16_MAX)
			s->t.partial++;
		a->st.partials++;
		return;
	}
	trail_end(a, i, e->ts_ns);
}

static void on_rq_merge(struct it_analyzer *a, const struct it_event *e)
{
	uint32_t i = it_map_get(&a->rqs, e->id);

	if (i == IT_MAP_NONE) {
		a->st.rq_merges_unknown++;
		return;
	}
	index_enable(a, a->slots[i].devidx);
	struct slot *s = &a->slots[i];
	index_del(a, i);
	/* the kernel merges `next` behind the request that ends where it starts */
	uint32_t j = it_map_get(&a->by_end, MERGE_KEY(s->devidx, s->t.sector));
	if (j != IT_MAP_NONE && j != i) {
		struct slot *t = &a->slots[j];
		if (t->indexed && t->devidx == s->devidx && t->end == s->t.sector) {
			index_del(a, j);
			t->end = s->end;
			t->t.bytes += s->t.bytes;
			uint32_t m = (uint32_t)t->t.merges + 1 + s->t.merges;
			t->t.merges = m > UINT16_MAX ? UINT16_MAX : (uint16_t)m;
			if (s->t.ts[IT_PT_Q] && t->t.ts[IT_PT_Q] && s->t.ts[IT_PT_Q] < t->t.ts[IT_PT_Q])
				t->t.ts[IT_PT_Q] = s->t.ts[IT_PT_Q];
			index_add(a, j);
		}
	}
	a->st.rq_merges++;
	trail_drop(a, i);
}

/* The kernel's count of a busy device over the recording (event.h). */
static void on_diskstats(struct it_analyzer *a, const struct it_event *e)
{
	struct it_diskstats *d = realloc(a->disk, (a->ndisk + 1) * sizeof(*d));

	if (!d) {
		oom(a);
		return;
	}
	a->disk = d;
	d[a->ndisk++] = (struct it_diskstats){ .dev = e->dev, .reads = e->sector,
					       .writes = e->aux, .flushes = e->id,
					       .discards = e->bytes };
	it_diskwin_to(a, e->ts_ns);
}

/* The kernel's counts of what a task left out (event.h). */
static void on_task_counts(struct it_analyzer *a, const struct it_event *e)
{
	struct it_task_counted *t = &a->task;

	if (e->flags & IT_TCF_URING) {
		t->uring_known = true;
		t->uring_kept = e->id;
		t->uring_not_kept = e->sector;
		t->uring_no_io = e->aux;
		t->uring_async = e->pid | (uint64_t)e->tid << 32;
	} else if (e->flags & IT_TCF_CALLS) {
		t->calls_known = true;
		t->calls_kept = e->id;
		t->calls_not_kept = e->sector;
		t->calls_no_io = e->aux;
	} else {
		t->ios_known = true;
		t->passed = e->id;
		t->skipped = e->sector;
		t->rejected = e->aux;
	}
}

void it_stitch_event(struct it_analyzer *a, const struct it_event *e)
{
	uint32_t di;

	if (e->layer == IT_LAYER_NVME) {
		/* the controllers' table is the fabric join's: it must not make
		 * an (empty) NVMe view of a trace without NVMe I/O */
		if (e->type == IT_EV_NVME_CTRL)
			a->st.ignored++;
		else
			it_nvme_link_event(a, e);
		return;
	}
	if (e->type == IT_EV_ZONE_INFO) {
		it_zones_link_info(a, e);
		return;
	}
	if (e->type == IT_EV_DISKSTATS) {
		on_diskstats(a, e);
		return;
	}
	if (e->type == IT_EV_DISKSTATS_FROM) {
		it_diskwin_from(a, e);
		return;
	}
	if (e->type == IT_EV_TASK_COUNTS) {
		on_task_counts(a, e);
		return;
	}
	if (e->layer && e->layer != IT_LAYER_BLOCK && e->type != IT_EV_TASK) {
		a->st.ignored++;
		return;
	}
	switch (e->type) {
	case IT_EV_TASK:
		on_task(a, e);
		return;
	case IT_EV_RQ_COMPLETE:
		on_complete(a, e);
		return;
	case IT_EV_RQ_REQUEUE:
		on_requeue(a, e);
		return;
	case IT_EV_RQ_MERGE:
		on_rq_merge(a, e);
		return;
	case IT_EV_BIO_COMPLETE:
		on_bio_complete(a, e);
		return;
	case IT_EV_BIO_QUEUE:
	case IT_EV_BIO_BACKMERGE:
	case IT_EV_BIO_FRONTMERGE:
	case IT_EV_BIO_SPLIT:
	case IT_EV_RQ_INSERT:
	case IT_EV_RQ_ISSUE:
		break;
	default:
		a->st.ignored++;
		return;
	}
	di = it_dev_index(a, e->dev);
	if (di == IT_MAP_NONE)
		return;
	switch (e->type) {
	case IT_EV_BIO_QUEUE:
		on_queue(a, e, di);
		break;
	case IT_EV_BIO_BACKMERGE:
		on_bio_merge(a, e, di, false);
		break;
	case IT_EV_BIO_FRONTMERGE:
		on_bio_merge(a, e, di, true);
		break;
	case IT_EV_BIO_SPLIT:
		on_split(a, e);
		break;
	case IT_EV_RQ_INSERT:
		on_insert(a, e, di);
		break;
	case IT_EV_RQ_ISSUE:
		on_issue(a, e, di);
		break;
	}
}

void it_stitch_count_open(struct it_analyzer *a)
{
	for (uint32_t i = 0; i < a->nslots; i++) {
		switch (a->slots[i].state) {
		case SLOT_QUEUED:
			a->st.incomplete_queued++;
			break;
		case SLOT_INSERTED:
			a->st.incomplete_inserted++;
			break;
		case SLOT_ISSUED:
			a->st.incomplete_issued++;
			break;
		}
	}
	a->st.incomplete = a->st.incomplete_queued + a->st.incomplete_inserted +
			   a->st.incomplete_issued;
}
