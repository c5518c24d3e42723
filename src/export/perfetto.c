// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail export --format perfetto`: the trace as a Chrome JSON trace
 * (the trace-event format ui.perfetto.dev and chrome://tracing open; why
 * JSON and not Perfetto's protobuf: README, "Exports"). Fed by the
 * report's analysis layers through the bus, in one pass:
 *
 *   - a process per block device ("block nvme0n1") and per NVMe queue
 *     ("nvme0 q3"), one for the system calls; an I/O is an "X" slice
 *     (its op, queued -> completed) on a lane of its device, with a child
 *     slice per stage (Q2I, I2D or Q2D, D2C; S2D inside I2D/Q2D, D2N and
 *     N2C inside D2C, D2H and H2N inside D2N): the same stages and times
 *     as the report. I/Os overlap (queue depth), slices on one thread must
 *     nest, so each device has lanes (threads "lane N"): an I/O takes the
 *     first lane free since it was queued;
 *   - a system call is a slice on its thread's track (process "system
 *     calls", thread = its tid);
 *   - flows ("s"/"f" events, bound to the enclosing slice): from a system
 *     call to each block I/O it owns (queued by its thread during the
 *     call, as the syscall report counts them), from a block I/O to its
 *     NVMe command;
 *   - NVMe/TCP (a trace with the nvmet layer): per matched fabric command
 *     (the report's fabric view, published by its layer) a slice on its
 *     initiator queue's track ("fabric nvme0 q1": the command S -> N, its
 *     op's name) with the initiator's and the network's stages inside it
 *     (host.out, host.queue, host.send, net.out, host.in, net.back, ...;
 *     io, host.block and host.done around it), and a slice on the target
 *     queue's track ("nvmet m0 cntlid 1 q1": the target command TI -> TC)
 *     with the target's stages (target.recv before it, target.queue,
 *     target.dev, tdev.*, target.sendq and target.send after it): the same
 *     stages and times as the report's fabric view. Flows: NVMe command ->
 *     fabric command -> target command;
 *   - user-space probes (record --uprobe/--usdt): a process per probed
 *     process ("probes pid 1234"), a thread per probe label in it: a span
 *     (a start paired with its done, as the report pairs them) is an "X"
 *     slice named by the span (its start's arguments as args), a hit of a
 *     probe that is no span's start or end an instant ("i") with its
 *     arguments; overlapping spans of one label go on more threads
 *     ("work 2");
 *   - F2FS (record --f2fs): a process per device ("f2fs nullb0"), its GC
 *     rounds ("gc": what it freed and wrote, what it moved, as args) and
 *     checkpoints ("checkpoint", its reason) as slices on threads "gc"
 *     and "checkpoint", background GC wake-ups as instants on "gc"; a
 *     round or checkpoint whose end was not recorded is an instant
 *     ("gc (no end)");
 *   - counters: per device, I/Os in flight at issue ("queue depth", as
 *     the report samples it) and completions per 100 ms ("IOPS"); per NVMe
 *     queue, commands in flight at submission.
 *
 *   - every other machine of a file of several (a pass each, after machine
 *     0's, through next_machine): its block devices, NVMe queues and
 *     system calls the same way, on processes of its own named by its
 *     machine and host ("block nullb0 (m1 target-host)"), flows within it;
 *     its times on machine 0's clock by the estimate its fabric view used
 *     (exporter.h: info->clock_est), one shift per I/O, call or command so
 *     that its stages keep the report's nanoseconds (report --machine N).
 *     The fabric view is machine 0's alone.
 *
 * Times: "ts"/"dur" are microseconds with three decimals, the trace's
 * CLOCK_MONOTONIC ns exactly. Numbers are formatted by hand into one
 * buffer: printf would take most of the time (bench/export_speed.sh).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/hashmap.h"
#include "analyze/nvme.h"
#include "export/exporter.h"
#include "export/outbuf.h"
#include "layers/fabric/clock.h"
#include "extents/extents.h"
#include "layers/fabric/fabric.h"
#include "layers/fs/f2fs_analysis.h"
#include "layers/syscall/sysan.h"

#define PID_CALLS 1u
#define PID_BLOCK 100000u /* + device slot */
#define PID_NVME 200000u  /* + controller * 1000 + qid */
#define PID_FABRIC 300000u /* + track index: an initiator's fabric queue */
#define PID_TARGET 400000u /* + track index: a target's queue */
#define PID_MACHINE 500000u /* + track index: a track of machine 1.. */
#define PID_NAMED 600000u /* + process index: a probed process, an F2FS device */
#define NAMED_TID 700000000000ull /* + named track * NAMED_LANES + lane */
#define NAMED_LANES 64u
#define LANES 1000u       /* a lane's tid: pid * LANES + lane */
#define IOPS_STEP_NS 100000000ull
/* trails of a thread kept for its next call: a thread that makes no
 * traced call (writeback, a kernel thread) keeps only its last ones */
#define TID_PENDING_MAX 4096u
/* an NVMe command's slice waits for its fabric match this long at most
 * (as the fabric join's: beyond any I/O timeout) */
#define CMD_HORIZON_NS (60ull * 1000000000ull)
#define CMD_PRUNE_MIN 4096u

struct lanes {
	uint32_t pid;
	uint64_t *busy_until;  /* per lane: the end of its last slice */
	uint32_t n;
	uint64_t *iops;        /* completions per IOPS_STEP_NS from the trace start (block) */
	size_t niops;
	char name[128];
};

struct pending {               /* a trail waiting for its thread's call */
	uint64_t q;            /* queued (its machine's clock, as the call's) */
	uint64_t q_at;         /* and where on the timeline */
	uint64_t lane_tid;     /* its lane (pid: lane_tid / LANES) */
};

struct cmd_at {                /* an NVMe command's slice, for its fabric flow */
	uint64_t submit_ns, lane_tid;
	uint16_t ctrl, qid, cid;
	bool taken;
};

/* A thread of a probe label in a probed process, or of an F2FS device's
 * GC rounds or checkpoints, with lanes for what overlaps. */
struct named {
	uint32_t pid;
	uint64_t busy_until[NAMED_LANES];
	uint32_t n;            /* lanes named so far */
	char label[48];
};

struct tid_queue {
	struct pending *v;
	uint32_t n, cap;
};

struct perfetto {
	struct it_outbuf ob;
	const struct it_pass_info *info;
	bool first;
	bool calls;            /* the trace has system calls: link them */
	uint64_t start_ns;
	struct lanes *tracks;  /* block devices, then NVMe queues, as met */
	size_t ntracks;
	struct it_map track_of; /* key: (kind << 48) | dev or (ctrl << 16 | qid) -> index */
	struct it_map tid_of;   /* tid -> index in tq */
	struct tid_queue *tq;
	size_t ntq;
	/* the trail of the last NVMe command published (just before the
	 * trail itself) and where that command's slice is */
	const struct it_trail *cmd_trail;
	uint64_t cmd_trail_c, cmd_lane_tid, cmd_submit_ns;
	uint64_t flows;
	bool fabric;           /* the trace has the nvmet layer: fabric commands */
	struct cmd_at *cmds;   /* NVMe commands not yet matched, by submission */
	size_t ncmds, cmdcap, cmds_prune_at;
	struct it_map cmd_of;  /* cmd_key() -> index in cmds */
	uint64_t fabric_latest; /* the latest S of a fabric command told */
	struct it_map sub_named; /* sub-lane tids named so far */
	char fabric_stage_open[IT_FS_MAX][56]; /* `{"ph":"X","cat":"fabric.stage","name":"net.out"` */
	size_t fabric_stage_openlen[IT_FS_MAX];
	int64_t records;       /* I/Os, calls and commands written */
	uint16_t machine;      /* whose pass goes: 0, then each other one's */
	struct it_clock_est clock; /* its clock on machine 0's (IT_CLOCK_NONE: 0's own) */
	char host[64];         /* its host name (machines 1..), for its tracks' names */
	uint32_t calls_pid;    /* its system calls' process */
	struct named *named;   /* probe labels' and F2FS devices' threads */
	size_t nnamed, nprocs;
	struct it_map named_of; /* (label index, machine, owner) -> index in named */
	struct it_map proc_of;  /* (fs?, machine, owner) -> its pid */
	char (*labels)[48];    /* every label met, its index in the keys */
	size_t nlabels;
	int err;               /* -1: memory ran out */
	char stage_open[IT_STAGE_MAX][48]; /* `{"ph":"X","cat":"stage","name":"Q2I"` */
	size_t stage_openlen[IT_STAGE_MAX];
	char op_open[IT_OP_OTHER + 1][64];  /* `{"ph":"X","cat":"block","name":"read"` */
	size_t op_openlen[IT_OP_OTHER + 1];
};

static void begin_event(struct perfetto *p)
{
	if (p->first) {
		p->first = false;
		IT_OB_PUT(&p->ob, "\n");
	} else {
		IT_OB_PUT(&p->ob, ",\n");
	}
}

/* {"ph":"M","name":"process_name"|"thread_name",...} */
static void name_meta(struct perfetto *p, bool thread, uint32_t pid, uint64_t tid, const char *name)
{
	begin_event(p);
	if (thread)
		IT_OB_PUT(&p->ob, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
	else
		IT_OB_PUT(&p->ob, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	it_ob_u64(&p->ob, pid);
	IT_OB_PUT(&p->ob, ",\"tid\":");
	it_ob_u64(&p->ob, tid);
	IT_OB_PUT(&p->ob, ",\"args\":{\"name\":\"");
	it_ob_json_str(&p->ob, name);
	IT_OB_PUT(&p->ob, "\"}}");
}

/* `,"pid":P,"tid":T,"ts":` of one track, written once for the slices of
 * an I/O */
struct head {
	char s[64];
	size_t n;
};

static void head_add(struct head *h, const char *s, size_t n)
{
	memcpy(h->s + h->n, s, n);
	h->n += n;
}

static void make_head(struct head *h, uint32_t pid, uint64_t tid)
{
	char tmp[20];
	size_t n;

	h->n = 0;
	head_add(h, ",\"pid\":", 7);
	n = it_fmt_u64(tmp, pid);
	head_add(h, tmp + n, 20 - n);
	head_add(h, ",\"tid\":", 7);
	n = it_fmt_u64(tmp, tid);
	head_add(h, tmp + n, 20 - n);
	head_add(h, ",\"ts\":", 6);
}

/* open: `{"ph":"X","cat":"CAT","name":"NAME"` */
static void slice(struct perfetto *p, const char *open, size_t openlen, const struct head *h,
		  uint64_t from, uint64_t to)
{
	begin_event(p);
	it_ob_put(&p->ob, open, openlen);
	it_ob_put(&p->ob, h->s, h->n);
	it_ob_us(&p->ob, from);
	IT_OB_PUT(&p->ob, ",\"dur\":");
	it_ob_us(&p->ob, to > from ? to - from : 0);
	IT_OB_PUT(&p->ob, "}");
}

/* a slice of category cat named name */
static void slice_named(struct perfetto *p, const char *cat, const char *name,
			const struct head *h, uint64_t from, uint64_t to)
{
	char open[96];
	int n = snprintf(open, sizeof(open), "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\"", cat,
			 name);

	if (n > 0 && (size_t)n < sizeof(open))
		slice(p, open, (size_t)n, h, from, to);
}

/* one end of flow id: "s" (start) or "f" (end), bound to the slice that
 * encloses ts on the thread */
static void flow(struct perfetto *p, bool start, uint64_t id, uint32_t pid, uint64_t tid,
		 uint64_t ts)
{
	begin_event(p);
	if (start)
		IT_OB_PUT(&p->ob, "{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"io\",\"id\":");
	else
		IT_OB_PUT(&p->ob, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"io\",\"id\":");
	it_ob_u64(&p->ob, id);
	IT_OB_PUT(&p->ob, ",\"pid\":");
	it_ob_u64(&p->ob, pid);
	IT_OB_PUT(&p->ob, ",\"tid\":");
	it_ob_u64(&p->ob, tid);
	IT_OB_PUT(&p->ob, ",\"ts\":");
	it_ob_us(&p->ob, ts);
	IT_OB_PUT(&p->ob, "}");
}

static void counter(struct perfetto *p, const char *name, uint32_t pid, uint64_t ts, uint64_t v)
{
	begin_event(p);
	IT_OB_PUT(&p->ob, "{\"ph\":\"C\",\"name\":\"");
	it_ob_put(&p->ob, name, strlen(name));
	IT_OB_PUT(&p->ob, "\",\"pid\":");
	it_ob_u64(&p->ob, pid);
	IT_OB_PUT(&p->ob, ",\"ts\":");
	it_ob_us(&p->ob, ts);
	IT_OB_PUT(&p->ob, ",\"args\":{\"value\":");
	it_ob_u64(&p->ob, v);
	IT_OB_PUT(&p->ob, "}}");
}

/* The track of a block device (kind 0, key dev) or an NVMe queue (kind
 * 1, key ctrl << 16 | qid) of the pass's machine, made (and named) when
 * first met; NULL when memory ran out. */
static struct lanes *track(struct perfetto *p, unsigned kind, uint64_t key, uint32_t dev,
			   uint16_t ctrl, uint16_t qid)
/* kind 2: an initiator's fabric queue (key ctrl << 16 | qid); kind 3: a
 * target's queue (key machine << 32 | cntlid << 16 | qid, ctrl = cntlid);
 * kind 4: the system calls of machine 1.. (key 0) */
{
	/* kind 3 holds the target's machine; fabric queues are machine 0's */
	uint64_t k = (uint64_t)kind << 48 | key | (kind < 2 || kind == 4 ? (uint64_t)p->machine << 32 : 0);
	uint32_t i = it_map_get(&p->track_of, k);
	struct lanes *l;

	if (i != IT_MAP_NONE)
		return &p->tracks[i];
	l = realloc(p->tracks, (p->ntracks + 1) * sizeof(*l));
	if (!l || it_map_put(&p->track_of, k, (uint32_t)p->ntracks)) {
		if (l)
			p->tracks = l;
		p->err = -1;
		return NULL;
	}
	p->tracks = l;
	l = &p->tracks[p->ntracks++];
	memset(l, 0, sizeof(*l));
	if (kind == 0) {
		char dn[40];

		l->pid = PID_BLOCK + (uint32_t)p->ntracks;
		snprintf(l->name, sizeof(l->name), "block %s",
			 it_export_dev_name(p->info, dev, dn, sizeof(dn)));
	} else if (kind >= 2) {
		char q[16];

		if (qid)
			snprintf(q, sizeof(q), "q%u", qid);
		else
			snprintf(q, sizeof(q), "admin");
		l->pid = (kind == 2 ? PID_FABRIC : PID_TARGET) + (uint32_t)p->ntracks;
		if (kind == 2)
			snprintf(l->name, sizeof(l->name), "fabric nvme%u %s", ctrl, q);
		else
			snprintf(l->name, sizeof(l->name), "nvmet m%u cntlid %u %s",
				 (unsigned)(key >> 32), ctrl, q);
	} else {
		l->pid = PID_NVME + ctrl * 1000u + qid % 1000u;
		if (qid)
			snprintf(l->name, sizeof(l->name), "nvme%u q%u", ctrl, qid);
		else
			snprintf(l->name, sizeof(l->name), "nvme%u admin", ctrl);
	}
	if (kind == 4)
		snprintf(l->name, sizeof(l->name), "system calls");
	if (p->machine) { /* its own processes, named by machine and host */
		size_t n = strlen(l->name);

		l->pid = PID_MACHINE + (uint32_t)p->ntracks;
		snprintf(l->name + n, sizeof(l->name) - n, " (m%u %s)", p->machine, p->host);
	}
	name_meta(p, false, l->pid, l->pid, l->name);
	return l;
}

/* The first lane free at from (a new one when none is), marked busy to
 * to; its tid. */
static uint64_t lane(struct perfetto *p, struct lanes *l, uint64_t from, uint64_t to)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (l->busy_until[i] <= from)
			break;
	if (i == l->n) {
		if (l->n == LANES - 1) { /* never on a real device: overlapping on the last */
			i = l->n - 1;
		} else {
			uint64_t *b = realloc(l->busy_until, (l->n + 1) * sizeof(*b));
			char name[16];

			if (!b) {
				p->err = -1;
				return (uint64_t)l->pid * LANES;
			}
			l->busy_until = b;
			l->busy_until[l->n++] = 0;
			snprintf(name, sizeof(name), "lane %u", i);
			name_meta(p, true, l->pid, (uint64_t)l->pid * LANES + i, name);
		}
	}
	if (to > l->busy_until[i])
		l->busy_until[i] = to;
	return (uint64_t)l->pid * LANES + i;
}

static void count_iops(struct perfetto *p, struct lanes *l, uint64_t c)
{
	size_t k = c > p->start_ns ? (size_t)((c - p->start_ns) / IOPS_STEP_NS) : 0;

	if (k >= l->niops) {
		size_t n = k + 1 > 2 * l->niops ? k + 1 : 2 * l->niops;
		uint64_t *v = realloc(l->iops, n * sizeof(*v));

		if (!v) {
			p->err = -1;
			return;
		}
		memset(v + l->niops, 0, (n - l->niops) * sizeof(*v));
		l->iops = v;
		l->niops = n;
	}
	l->iops[k]++;
}

/* A stage's slice when the trail has it; whether it has. */
static bool stage(struct perfetto *p, const struct it_trail *t, unsigned st, const struct head *h)
{
	const struct it_stage_def *d = &it_stages[st];
	int64_t ns = it_stage_time(t, st);

	if (ns < 0)
		return false;
	slice(p, p->stage_open[st], p->stage_openlen[st], h, t->ts[d->to] - (uint64_t)ns,
	      t->ts[d->to]);
	return true;
}

/* How far a record of the pass's machine that starts at t moves onto
 * machine 0's clock: the whole record by one shift, so that its stages
 * keep their nanoseconds (0 on machine 0). */
static int64_t shift_at(const struct perfetto *p, uint64_t t)
{
	int64_t d = (int64_t)(it_clock_map(&p->clock, t) - t);

	return d < 0 && (uint64_t)-d >= t ? 0 : d; /* an estimate off before 0's boot */
}

static uint64_t moved(uint64_t t, int64_t d)
{
	return t ? t + (uint64_t)d : 0;
}

/* A trail to wait for its thread's call. */
static void pend(struct perfetto *p, const struct it_trail *t, uint64_t q_at, uint64_t lane_tid)
{
	uint64_t key = (uint64_t)p->machine << 32 | t->tid;
	uint32_t i = it_map_get(&p->tid_of, key);
	struct tid_queue *q;

	if (i == IT_MAP_NONE) {
		struct tid_queue *v = realloc(p->tq, (p->ntq + 1) * sizeof(*v));

		if (!v || it_map_put(&p->tid_of, key, (uint32_t)p->ntq)) {
			if (v)
				p->tq = v;
			p->err = -1;
			return;
		}
		p->tq = v;
		i = (uint32_t)p->ntq++;
		memset(&p->tq[i], 0, sizeof(p->tq[i]));
	}
	q = &p->tq[i];
	if (q->n == TID_PENDING_MAX) { /* the oldest can have no call left */
		memmove(q->v, q->v + q->n / 2, (q->n - q->n / 2) * sizeof(*q->v));
		q->n -= q->n / 2;
	}
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? 2 * q->cap : 8;
		struct pending *v = realloc(q->v, cap * sizeof(*v));

		if (!v) {
			p->err = -1;
			return;
		}
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n++] = (struct pending){ .q = t->ts[IT_PT_Q], .q_at = q_at, .lane_tid = lane_tid };
}

static void on_trail(const void *msg, void *ctx)
{
	const struct it_bus_trail *m = msg;
	const struct it_trail *raw = m->t, *t = raw;
	struct perfetto *p = ctx;
	int64_t q2c = it_stage_time(t, IT_STAGE_Q2C);
	struct it_trail on_timeline;
	struct lanes *l;
	struct head h;
	uint64_t from, tid;

	if (q2c < 0)
		return;
	if (p->machine) {
		int64_t d = shift_at(p, t->ts[IT_PT_C] - (uint64_t)q2c);

		on_timeline = *t;
		for (unsigned i = 0; i < IT_PT_MAX; i++)
			on_timeline.ts[i] = moved(t->ts[i], d);
		t = &on_timeline;
	}
	if (!(l = track(p, 0, t->dev, t->dev, 0, 0)))
		return;
	from = t->ts[IT_PT_C] - (uint64_t)q2c;
	/* a request issued without Q or I (an NVMe admin command) starts at
	 * D, its command was set up before: S2D precedes its slice */
	tid = lane(p, l, t->ts[IT_PT_S] && t->ts[IT_PT_S] < from ? t->ts[IT_PT_S] : from,
		   t->ts[IT_PT_C]);
	make_head(&h, l->pid, tid);
	if (t->op <= IT_OP_OTHER)
		slice(p, p->op_open[t->op], p->op_openlen[t->op], &h, from, t->ts[IT_PT_C]);
	else
		slice_named(p, "block", it_op_name(t->op), &h, from, t->ts[IT_PT_C]);
	stage(p, t, IT_STAGE_Q2I, &h);
	stage(p, t, IT_STAGE_I2D, &h);
	stage(p, t, IT_STAGE_Q2D, &h);
	stage(p, t, IT_STAGE_S2D, &h);
	if (stage(p, t, IT_STAGE_D2C, &h) && stage(p, t, IT_STAGE_D2N, &h)) {
		stage(p, t, IT_STAGE_D2H, &h);
		stage(p, t, IT_STAGE_H2N, &h);
	}
	stage(p, t, IT_STAGE_N2C, &h);
	if (t->ts[IT_PT_D] && t->qd_issue)
		counter(p, "queue depth", l->pid, t->ts[IT_PT_D], t->qd_issue);
	count_iops(p, l, t->ts[IT_PT_C]);
	/* its NVMe command came just before it */
	if (p->cmd_trail == raw && p->cmd_trail_c == raw->ts[IT_PT_C]) {
		uint64_t at = t->ts[IT_PT_S] > from ? t->ts[IT_PT_S] : from;

		p->flows++;
		flow(p, true, p->flows, l->pid, tid, at);
		flow(p, false, p->flows, (uint32_t)(p->cmd_lane_tid / LANES), p->cmd_lane_tid,
		     p->cmd_submit_ns);
	}
	p->cmd_trail = NULL;
	if (p->calls && t->ts[IT_PT_Q] && t->tid)
		pend(p, raw, t->ts[IT_PT_Q], tid);
	p->records++;
}

static void on_call(const void *msg, void *ctx)
{
	const struct it_bus_call *c = msg;
	struct perfetto *p = ctx;
	const char *name = it_sys_call_name(c->call);
	int64_t d = shift_at(p, c->ts_enter);
	uint32_t i;

	struct head h;

	if (!p->calls_pid) {
		struct lanes *l = track(p, 4, 0, 0, 0, 0);

		if (!l)
			return;
		p->calls_pid = l->pid;
	}
	make_head(&h, p->calls_pid, c->tid);
	slice_named(p, "syscall", name ? name : "call", &h, moved(c->ts_enter, d),
		    moved(c->ts_exit, d));
	p->records++;
	if ((i = it_map_get(&p->tid_of, (uint64_t)p->machine << 32 | c->tid)) == IT_MAP_NONE)
		return;
	/* the trails its thread queued within it are its own (sysan.h); those
	 * queued before it had no call; those after wait for the next */
	struct tid_queue *q = &p->tq[i];
	uint32_t keep = 0;
	for (uint32_t k = 0; k < q->n; k++) {
		struct pending *e = &q->v[k];

		if (e->q > c->ts_exit) {
			q->v[keep++] = *e;
		} else if (e->q >= c->ts_enter) {
			p->flows++;
			flow(p, true, p->flows, p->calls_pid, c->tid, moved(e->q, d));
			flow(p, false, p->flows, (uint32_t)(e->lane_tid / LANES), e->lane_tid, e->q_at);
		}
	}
	q->n = keep;
}

static uint64_t cmd_key(uint64_t submit_ns, uint16_t ctrl, uint16_t qid)
{
	return submit_ns ^ ((uint64_t)ctrl << 56 | (uint64_t)qid << 40);
}

/* Lets go of the commands matched, and of those submitted CMD_HORIZON_NS
 * before the latest fabric command told (its match would have come by
 * then: PCIe, unmatched). Two machines: the fabric commands are told at
 * the end of the pass (the clock is estimated first), so every command
 * is kept until then, as the join keeps every matched one. */
static void cmds_prune(struct perfetto *p)
{
	size_t keep = 0;

	it_map_free(&p->cmd_of);
	if (it_map_init(&p->cmd_of, 8)) {
		p->err = -1;
		p->ncmds = 0;
		return;
	}
	for (size_t i = 0; i < p->ncmds; i++) {
		const struct cmd_at *c = &p->cmds[i];

		if (c->taken || c->submit_ns + CMD_HORIZON_NS < p->fabric_latest)
			continue;
		p->cmds[keep] = *c;
		if (it_map_put(&p->cmd_of, cmd_key(c->submit_ns, c->ctrl, c->qid), (uint32_t)keep))
			p->err = -1;
		keep++;
	}
	p->ncmds = keep;
	p->cmds_prune_at = 2 * keep > CMD_PRUNE_MIN ? 2 * keep : CMD_PRUNE_MIN;
}

/* Where an NVMe command's slice is, until its fabric command comes. */
static void cmd_remember(struct perfetto *p, const struct it_nvme_cmd *c, uint64_t lane_tid)
{
	if (p->ncmds >= p->cmds_prune_at)
		cmds_prune(p);
	if (p->ncmds == p->cmdcap) {
		size_t cap = p->cmdcap ? 2 * p->cmdcap : 256;
		struct cmd_at *v = realloc(p->cmds, cap * sizeof(*v));

		if (!v) {
			p->err = -1;
			return;
		}
		p->cmds = v;
		p->cmdcap = cap;
	}
	p->cmds[p->ncmds] = (struct cmd_at){ .submit_ns = c->submit_ns, .lane_tid = lane_tid,
					     .ctrl = c->ctrl, .qid = c->qid, .cid = c->cid };
	if (it_map_put(&p->cmd_of, cmd_key(c->submit_ns, c->ctrl, c->qid), (uint32_t)p->ncmds))
		p->err = -1;
	p->ncmds++;
}

static void on_nvme_cmd(const void *msg, void *ctx)
{
	const struct it_bus_nvme_cmd *m = msg;
	const struct it_nvme_cmd *c = m->c;
	struct it_nvme_cmd on_timeline;
	struct perfetto *p = ctx;
	struct lanes *l;
	struct head h;
	char name[32];
	uint64_t tid;

	if (!c->submit_ns || c->complete_ns < c->submit_ns)
		return;
	if (p->machine) {
		int64_t d = shift_at(p, c->submit_ns);

		on_timeline = *c;
		on_timeline.submit_ns = moved(c->submit_ns, d);
		on_timeline.complete_ns = moved(c->complete_ns, d);
		c = &on_timeline;
	}
	if (!(l = track(p, 1, (uint64_t)c->ctrl << 16 | c->qid, 0, c->ctrl, c->qid)))
		return;
	tid = lane(p, l, c->submit_ns, c->complete_ns);
	make_head(&h, l->pid, tid);
	slice_named(p, "nvme", it_nvme_opcode_name(c->opcode, c->qid == 0, name, sizeof(name)), &h,
		    c->submit_ns, c->complete_ns);
	counter(p, "queue depth", l->pid, c->submit_ns, c->qd);
	p->records++;
	if (p->fabric)
		cmd_remember(p, c, tid);
	/* the flow is written with the trail, if it is published (a flush
	 * sequence's trail is not) */
	p->cmd_trail = m->t;
	if (m->t) {
		p->cmd_trail_c = m->t->ts[IT_PT_C];
		p->cmd_lane_tid = tid;
		p->cmd_submit_ns = c->submit_ns;
	}
}

/* A stage's slice on a lane (its points as the fabric join took them). */
static void fabric_stage(struct perfetto *p, unsigned st, const uint64_t *pt, const struct head *h)
{
	const struct it_fabric_stage_def *d = &it_fabric_stages[st];

	slice(p, p->fabric_stage_open[st], p->fabric_stage_openlen[st], h, pt[d->from], pt[d->to]);
}

static bool stage_on_target(unsigned st)
{
	return it_fabric_point_on_target(it_fabric_stages[st].from) &&
	       it_fabric_point_on_target(it_fabric_stages[st].to);
}

/* Where an initiator-side stage goes in its lane: 0 the lane itself
 * (stages within the initiator), 1 its "network" thread (host.out,
 * net.out, host.in, net.back), 2 its "R2T network" thread (r2t.net,
 * h2c.net), 3 its "request" thread (io). A stage from one machine to the
 * other spans two clocks: on two machines the estimate can place the
 * target's point a little off (the report counts such non-causal I/Os),
 * and then it would not nest with the initiator's own stages; on a thread
 * of their own they nest (host.out ends at TI and host.in starts at TC,
 * TI <= TC; net.out and net.back lie inside them; r2t.net ends at HR2T <=
 * HH1 where h2c.net starts). io too: the join can move N past C (its
 * points in causal order), then io would end inside the command. */
static unsigned host_sub(unsigned st)
{
	if (st == IT_FS_IO)
		return 3;
	if (it_fabric_point_on_target(it_fabric_stages[st].from) ==
	    it_fabric_point_on_target(it_fabric_stages[st].to))
		return 0;
	return st == IT_FS_R2T_NET || st == IT_FS_H2C_NET ? 2 : 1;
}

/* A lane's sub-thread tid (unique in the trace, beyond every lane's),
 * named when first used. */
static uint64_t sub_tid(struct perfetto *p, uint32_t pid, uint64_t lane_tid, unsigned sub)
{
	uint64_t tid = 1000000000000ull * sub + lane_tid;
	char name[40];

	if (it_map_get(&p->sub_named, tid) != IT_MAP_NONE)
		return tid;
	if (it_map_put(&p->sub_named, tid, 1)) {
		p->err = -1;
		return tid;
	}
	snprintf(name, sizeof(name), "lane %u %s", (unsigned)(lane_tid % LANES),
		 sub == 1 ? "network" : sub == 2 ? "R2T network" : "request");
	name_meta(p, true, pid, tid, name);
	return tid;
}

/* A matched fabric command: the command on its initiator queue's track,
 * the target command on its target queue's, each with its side's stages;
 * flows from its NVMe command's slice to it, from it to the target's. */
static void on_fabric_cmd(const void *msg, void *ctx)
{
	const struct it_fabric_matched *m = msg;
	const struct it_fabric_host *fh = m->h;
	const uint64_t *pt = m->p;
	struct perfetto *p = ctx;
	uint64_t span[2][2] = { { pt[IT_FP_S], pt[IT_FP_N] }, { pt[IT_FP_TI], pt[IT_FP_TC] } };
	uint64_t tid[2];
	struct lanes *l[2];
	struct head h[5];          /* initiator's lane, target's lane, its sub-threads 1..3 */
	char op[32];

	/* each side's lane is busy from its first stage to its last */
	for (unsigned st = 0; st < IT_FS_MAX; st++) {
		const struct it_fabric_stage_def *d = &it_fabric_stages[st];
		unsigned side = stage_on_target(st);

		if (!(m->stages & 1u << st))
			continue;
		if (pt[d->from] < span[side][0])
			span[side][0] = pt[d->from];
		if (pt[d->to] > span[side][1])
			span[side][1] = pt[d->to];
	}
	/* made first, then both taken: making one may move the others */
	if (!track(p, 2, (uint64_t)fh->ctrl << 16 | fh->qid, 0, fh->ctrl, fh->qid) ||
	    !(l[1] = track(p, 3, (uint64_t)m->target_machine << 32 | (uint64_t)m->cntlid << 16 | fh->qid,
			   0, m->cntlid, fh->qid)) ||
	    !(l[0] = track(p, 2, (uint64_t)fh->ctrl << 16 | fh->qid, 0, fh->ctrl, fh->qid)))
		return;
	for (unsigned side = 0; side < 2; side++) {
		tid[side] = lane(p, l[side], span[side][0], span[side][1]);
		make_head(&h[side], l[side]->pid, tid[side]);
	}
	const char *name = it_nvme_opcode_name(fh->opcode, fh->qid == 0, op, sizeof(op));
	/* the command stage is the fabric command's own slice, the target
	 * stage the target command's (as an I/O's slice is its Q2C) */
	/* the join's S and N, as the report takes the command: with the
	 * transport split it puts the points in causal order, and N can move */
	slice_named(p, "fabric", name, &h[0], pt[IT_FP_S], pt[IT_FP_N]);
	if (m->stages & 1u << IT_FS_TARGET)
		slice_named(p, "nvmet", name, &h[1], pt[IT_FP_TI], pt[IT_FP_TC]);
	for (unsigned sub = 1; sub <= 3; sub++)
		h[1 + sub].n = 0;
	for (unsigned st = 0; st < IT_FS_MAX; st++) {
		unsigned at = stage_on_target(st) ? 1 : host_sub(st) ? 1 + host_sub(st) : 0;

		if (st == IT_FS_COMMAND || st == IT_FS_TARGET || !(m->stages & 1u << st))
			continue;
		if (at >= 2 && !h[at].n)
			make_head(&h[at], l[0]->pid, sub_tid(p, l[0]->pid, tid[0], at - 1));
		fabric_stage(p, st, pt, &h[at]);
	}
	p->records++;

	if (fh->s > p->fabric_latest)
		p->fabric_latest = fh->s;
	uint32_t i = it_map_get(&p->cmd_of, cmd_key(fh->s, fh->ctrl, fh->qid));
	if (i != IT_MAP_NONE && !p->cmds[i].taken && p->cmds[i].cid == fh->cid) {
		p->cmds[i].taken = true;
		p->flows++;
		flow(p, true, p->flows, (uint32_t)(p->cmds[i].lane_tid / LANES), p->cmds[i].lane_tid,
		     fh->s);
		flow(p, false, p->flows, l[0]->pid, tid[0], fh->s);
	}
	if (m->stages & 1u << IT_FS_TARGET) {
		/* from the command where the target parsed it (two machines
		 * without a clock estimate: its start, TI is another clock's) */
		uint64_t at = pt[IT_FP_TI] >= pt[IT_FP_S] && pt[IT_FP_TI] <= pt[IT_FP_N] ? pt[IT_FP_TI]
											   : pt[IT_FP_S];

		p->flows++;
		flow(p, true, p->flows, l[0]->pid, tid[0], at);
		flow(p, false, p->flows, l[1]->pid, tid[1], pt[IT_FP_TI]);
	}
}

/* ---- probes and F2FS: named threads ---- */

static uint64_t label_index(struct perfetto *p, const char *label)
{
	for (size_t i = 0; i < p->nlabels; i++)
		if (!strcmp(p->labels[i], label))
			return i;
	char (*v)[48] = realloc(p->labels, (p->nlabels + 1) * sizeof(*v));
	if (!v) {
		p->err = -1;
		return 0;
	}
	p->labels = v;
	snprintf(v[p->nlabels], sizeof(v[0]), "%s", label);
	return p->nlabels++;
}

/* The process of a probed process (fs false, owner: its pid) or of an
 * F2FS device (owner: its dev), made and named when first met. */
static uint32_t named_proc(struct perfetto *p, bool fs, uint32_t owner)
{
	uint64_t k = (uint64_t)fs << 48 | (uint64_t)p->machine << 32 | owner;
	uint32_t pid = it_map_get(&p->proc_of, k);
	char name[160], dn[48];

	if (pid != IT_MAP_NONE)
		return pid;
	pid = PID_NAMED + (uint32_t)p->nprocs++;
	if (it_map_put(&p->proc_of, k, pid))
		p->err = -1;
	if (fs)
		snprintf(name, sizeof(name), "f2fs %s",
			 it_export_dev_name(p->info, owner, dn, sizeof(dn)));
	else
		snprintf(name, sizeof(name), "probes pid %u", owner);
	if (p->machine) {
		size_t n = strlen(name);

		snprintf(name + n, sizeof(name) - n, " (m%u %s)", p->machine, p->host);
	}
	name_meta(p, false, pid, pid, name);
	return pid;
}

/* The thread (tid) of label in owner's process free at from, busy to to:
 * a lane of its own when the label's other lanes are busy then. */
static uint64_t named_lane(struct perfetto *p, bool fs, uint32_t owner, const char *label,
			   uint64_t from, uint64_t to, uint32_t *pid)
{
	uint64_t k = label_index(p, label) << 49 | (uint64_t)fs << 48 | (uint64_t)p->machine << 32 |
		     owner;
	uint32_t i = it_map_get(&p->named_of, k), lane;
	struct named *t;

	*pid = named_proc(p, fs, owner);
	if (i == IT_MAP_NONE) {
		t = realloc(p->named, (p->nnamed + 1) * sizeof(*t));
		if (!t || it_map_put(&p->named_of, k, (uint32_t)p->nnamed)) {
			if (t)
				p->named = t;
			p->err = -1;
			return NAMED_TID;
		}
		p->named = t;
		i = (uint32_t)p->nnamed++;
		memset(&t[i], 0, sizeof(t[i]));
		t[i].pid = *pid;
		snprintf(t[i].label, sizeof(t[i].label), "%s", label);
	}
	t = &p->named[i];
	for (lane = 0; lane < t->n && t->busy_until[lane] > from; lane++)
		;
	if (lane == NAMED_LANES) /* never on a real trace: overlapping on the last */
		lane--;
	uint64_t tid = NAMED_TID + (uint64_t)i * NAMED_LANES + lane;
	if (lane == t->n) {
		char name[64];

		t->n++;
		if (lane)
			snprintf(name, sizeof(name), "%s %u", t->label, lane + 1);
		else
			snprintf(name, sizeof(name), "%s", t->label);
		name_meta(p, true, t->pid, tid, name);
	}
	if (to > t->busy_until[lane])
		t->busy_until[lane] = to;
	return tid;
}

/* `{"ph":PH,"cat":CAT,"name":NAME,"pid":..,"tid":..,"ts":..` (an instant:
 * thread-scoped), then "dur" for a slice; the caller writes its args and
 * the closing brace. */
static void named_event(struct perfetto *p, bool slice_, const char *cat, const char *name,
			uint32_t pid, uint64_t tid, uint64_t from, uint64_t to)
{
	begin_event(p);
	if (slice_)
		IT_OB_PUT(&p->ob, "{\"ph\":\"X\",\"cat\":\"");
	else
		IT_OB_PUT(&p->ob, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"");
	it_ob_put(&p->ob, cat, strlen(cat));
	IT_OB_PUT(&p->ob, "\",\"name\":\"");
	it_ob_json_str(&p->ob, name);
	IT_OB_PUT(&p->ob, "\",\"pid\":");
	it_ob_u64(&p->ob, pid);
	IT_OB_PUT(&p->ob, ",\"tid\":");
	it_ob_u64(&p->ob, tid);
	IT_OB_PUT(&p->ob, ",\"ts\":");
	it_ob_us(&p->ob, from);
	if (slice_) {
		IT_OB_PUT(&p->ob, ",\"dur\":");
		it_ob_us(&p->ob, to > from ? to - from : 0);
	}
}

static void on_probe(const void *msg, void *ctx)
{
	const struct it_bus_probe *m = msg;
	struct perfetto *p = ctx;
	int64_t d = shift_at(p, m->ts_ns);
	uint64_t from = moved(m->ts_ns, d), to = from + m->duration_ns, tid;
	bool slice = m->kind == IT_PROBE_SPAN || m->kind == IT_PROBE_OPEN;
	uint32_t pid;
	char name[16], label[80];

	/* a span's begin and end hits are its slice; one that never ended
	 * runs to the trace's end, named so */
	if (m->kind == IT_PROBE_BEGIN || m->kind == IT_PROBE_END)
		return;
	snprintf(label, sizeof(label), "%s%s", m->label, m->kind == IT_PROBE_OPEN ? " (no end)" : "");
	tid = named_lane(p, false, m->pid, m->label, from, slice ? to : from, &pid);
	named_event(p, slice, "probe", label, pid, tid, from, to);
	IT_OB_PUT(&p->ob, ",\"args\":{\"tid\":");
	it_ob_u64(&p->ob, m->tid);
	for (uint32_t a = 0; a < m->nargs; a++) {
		snprintf(name, sizeof(name), "arg%u", a);
		IT_OB_PUT(&p->ob, ",\"");
		it_ob_put(&p->ob, name, strlen(name));
		IT_OB_PUT(&p->ob, "\":");
		it_ob_i64(&p->ob, (int64_t)m->args[a]);
	}
	IT_OB_PUT(&p->ob, "}}");
	p->records++;
}

static void on_f2fs(const void *msg, void *ctx)
{
	const struct it_bus_f2fs *m = msg;
	struct perfetto *p = ctx;
	int64_t d = shift_at(p, m->start_ns);
	uint64_t from = moved(m->start_ns, d), to = m->end_ns ? moved(m->end_ns, d) : from, tid;
	bool gc = m->kind != IT_F2FS_ROW_CHECKPOINT, no_end = m->kind != IT_F2FS_ROW_BG_GC && !m->end_ns;
	const char *name = m->kind == IT_F2FS_ROW_GC ? (no_end ? "gc (no end)" : "gc")
			   : m->kind == IT_F2FS_ROW_BG_GC ? "background gc"
			   : no_end ? "checkpoint (no end)" : "checkpoint";
	uint32_t pid;
	char text[128], who[200];

	tid = named_lane(p, true, m->dev, gc ? "gc" : "checkpoint", from, to, &pid);
	named_event(p, m->kind != IT_F2FS_ROW_BG_GC && !no_end, "f2fs", name, pid, tid, from, to);
	IT_OB_PUT(&p->ob, ",\"args\":{\"tid\":");
	it_ob_u64(&p->ob, m->tid);
	if (m->kind == IT_F2FS_ROW_GC) {
		const struct { const char *n; uint64_t v; } a[] = {
			{ "foreground", m->foreground }, { "segments_freed", m->segments_freed },
			{ "sections_freed", m->sections_freed }, { "free_sections_before", m->free_before },
			{ "free_sections_after", m->free_after }, { "data_blocks", m->data_blocks },
			{ "node_blocks", m->node_blocks } };

		IT_OB_PUT(&p->ob, ",\"ret\":");
		it_ob_i64(&p->ob, m->ret);
		for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
			IT_OB_PUT(&p->ob, ",\"");
			it_ob_put(&p->ob, a[i].n, strlen(a[i].n));
			IT_OB_PUT(&p->ob, "\":");
			it_ob_u64(&p->ob, a[i].v);
		}
		/* what it moved: "FILE BYTES zone A -> zone B" each */
		for (uint32_t k = 0; k < m->nmoved; k++) {
			const struct it_f2fs_moved *v = &m->moved[k];
			char from_z[16] = "?", to_z[16] = "?";

			if (v->from_zone != IT_EXT_NO_ZONE)
				snprintf(from_z, sizeof(from_z), "%u", v->from_zone);
			if (v->to_zone != IT_EXT_NO_ZONE)
				snprintf(to_z, sizeof(to_z), "%u", v->to_zone);
			if (v->path)
				snprintf(who, sizeof(who), "%s", v->path);
			else
				snprintf(who, sizeof(who), "inode %llu", (unsigned long long)v->ino);
			snprintf(text, sizeof(text), "moved %u", k + 1);
			IT_OB_PUT(&p->ob, ",\"");
			it_ob_put(&p->ob, text, strlen(text));
			IT_OB_PUT(&p->ob, "\":\"");
			it_ob_json_str(&p->ob, who);
			snprintf(text, sizeof(text), " %llu bytes zone %s -> zone %s",
				 (unsigned long long)v->bytes, from_z, to_z);
			it_ob_json_str(&p->ob, text);
			IT_OB_PUT(&p->ob, "\"");
		}
	} else if (m->kind == IT_F2FS_ROW_CHECKPOINT) {
		it_f2fs_reason_text(m->reason, text, sizeof(text));
		IT_OB_PUT(&p->ob, ",\"reason\":\"");
		it_ob_json_str(&p->ob, text);
		IT_OB_PUT(&p->ob, "\"");
	} else {
		IT_OB_PUT(&p->ob, ",\"wait_ms\":");
		it_ob_u64(&p->ob, m->wait_ms);
		IT_OB_PUT(&p->ob, ",\"prefree_segments\":");
		it_ob_u64(&p->ob, m->prefree);
		IT_OB_PUT(&p->ob, ",\"free_segments\":");
		it_ob_u64(&p->ob, m->free_segments);
	}
	IT_OB_PUT(&p->ob, "}}");
	p->records++;
}

static void perfetto_free(void *self)
{
	struct perfetto *p = self;

	if (!p)
		return;
	for (size_t i = 0; i < p->ntracks; i++) {
		free(p->tracks[i].busy_until);
		free(p->tracks[i].iops);
	}
	for (size_t i = 0; i < p->ntq; i++)
		free(p->tq[i].v);
	free(p->tracks);
	free(p->named);
	free(p->labels);
	it_map_free(&p->named_of);
	it_map_free(&p->proc_of);
	free(p->tq);
	free(p->cmds);
	it_map_free(&p->cmd_of);
	it_map_free(&p->sub_named);
	it_map_free(&p->track_of);
	it_map_free(&p->tid_of);
	it_ob_free(&p->ob);
	free(p);
}

static void *perfetto_open(FILE *out, const struct it_pass_info *info)
{
	struct perfetto *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->info = info;
	p->first = true;
	p->start_ns = info->host->start_monotonic_ns;
	p->calls = info->layers & (1u << IT_LAYER_SYSCALL);
	p->fabric = info->layers & (1u << IT_LAYER_NVMET);
	p->cmds_prune_at = CMD_PRUNE_MIN;
	if (it_ob_init(&p->ob, out) || it_map_init(&p->track_of, 4) ||
	    it_map_init(&p->cmd_of, 8) || it_map_init(&p->sub_named, 4) ||
	    (p->fabric && it_bus_subscribe(info->bus, IT_BUS_FABRIC_CMD_DONE, on_fabric_cmd, p)) ||
	    it_map_init(&p->tid_of, 8) || it_map_init(&p->named_of, 4) ||
	    it_map_init(&p->proc_of, 4) ||
	    it_bus_subscribe(info->bus, IT_BUS_PROBE, on_probe, p) ||
	    it_bus_subscribe(info->bus, IT_BUS_F2FS, on_f2fs, p) ||
	    it_bus_subscribe(info->bus, IT_BUS_TRAIL_DONE, on_trail, p) ||
	    it_bus_subscribe(info->bus, IT_BUS_NVME_CMD_DONE, on_nvme_cmd, p) ||
	    (p->calls && it_bus_subscribe(info->bus, IT_BUS_CALL_DONE, on_call, p))) {
		perfetto_free(p);
		return NULL;
	}
	for (unsigned st = 0; st < IT_STAGE_MAX; st++)
		p->stage_openlen[st] = (size_t)snprintf(p->stage_open[st], sizeof(p->stage_open[st]),
			"{\"ph\":\"X\",\"cat\":\"stage\",\"name\":\"%s\"", it_stages[st].name);
	for (unsigned st = 0; st < IT_FS_MAX; st++)
		p->fabric_stage_openlen[st] = (size_t)snprintf(p->fabric_stage_open[st],
			sizeof(p->fabric_stage_open[st]),
			"{\"ph\":\"X\",\"cat\":\"fabric.stage\",\"name\":\"%s\"",
			it_fabric_stages[st].name);
	for (unsigned op = 0; op <= IT_OP_OTHER; op++)
		p->op_openlen[op] = (size_t)snprintf(p->op_open[op], sizeof(p->op_open[op]),
			"{\"ph\":\"X\",\"cat\":\"block\",\"name\":\"%s\"", it_op_name(op));
	IT_OB_PUT(&p->ob, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	if (p->calls)
		name_meta(p, false, PID_CALLS, PID_CALLS, "system calls");
	p->calls_pid = PID_CALLS;
	return p;
}

/* Another machine's pass: its block I/O, NVMe commands and system calls
 * on tracks of its own, moved onto machine 0's clock (the fabric view,
 * machine 0's, was told in its pass). */
static int perfetto_next_machine(void *self, const struct it_pass_info *info)
{
	struct perfetto *p = self;

	p->info = info;
	p->machine = info->machine;
	p->clock = info->clock_est ? *info->clock_est : (struct it_clock_est){ 0 };
	p->clock.window = NULL; /* it_clock_map needs the line only */
	p->clock.windows = 0;
	snprintf(p->host, sizeof(p->host), "%.*s", (int)sizeof(info->host->hostname),
		 info->host->hostname);
	p->calls = info->layers & (1u << IT_LAYER_SYSCALL);
	p->calls_pid = 0; /* its process, made at its first call */
	p->fabric = false;
	p->cmd_trail = NULL;
	if (it_bus_subscribe(info->bus, IT_BUS_TRAIL_DONE, on_trail, p) ||
	    it_bus_subscribe(info->bus, IT_BUS_NVME_CMD_DONE, on_nvme_cmd, p) ||
	    it_bus_subscribe(info->bus, IT_BUS_PROBE, on_probe, p) ||
	    it_bus_subscribe(info->bus, IT_BUS_F2FS, on_f2fs, p) ||
	    (p->calls && it_bus_subscribe(info->bus, IT_BUS_CALL_DONE, on_call, p)))
		return -1;
	return 0;
}

static int64_t perfetto_finish(void *self)
{
	struct perfetto *p = self;

	for (size_t i = 0; i < p->ntracks; i++) {
		const struct lanes *l = &p->tracks[i];

		for (size_t k = 0; k < l->niops; k++)
			counter(p, "IOPS", l->pid, p->start_ns + k * IOPS_STEP_NS,
				l->iops[k] * (1000000000ull / IOPS_STEP_NS));
	}
	IT_OB_PUT(&p->ob, "\n]}\n");
	it_ob_flush(&p->ob);
	return p->err ? -1 : p->records;
}

const struct it_exporter it_export_perfetto = {
	.name = "perfetto",
	.analysis = true,
	.what = "the trace as a JSON trace (trace-event format) for ui.perfetto.dev: per block\n"
		"device and NVMe queue a track of I/Os with a slice per stage, system calls\n"
		"on their threads' tracks, flows call -> block I/O -> NVMe command, counters\n"
		"of queue depth and IOPS; with NVMe/TCP, per fabric command a slice per\n"
		"fabric stage on initiator and target queue tracks, flows NVMe command ->\n"
		"fabric command -> target command; user-space probes' spans and events on\n"
		"a thread per label of each probed process; F2FS GC rounds and checkpoints\n"
		"on a process per device; every machine of a file of several. Open it\n"
		"in ui.perfetto.dev (or chrome://tracing).",
	.none = "block I/O, system calls or NVMe commands",
	.open = perfetto_open,
	.next_machine = perfetto_next_machine,
	.finish = perfetto_finish,
	.free = perfetto_free,
};
