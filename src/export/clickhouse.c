// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail export --format clickhouse --url http://HOST:8123 [--database
 * DB] TRACE`: the trace into ClickHouse tables (doc/clickhouse.md): one
 * row per block I/O with its stage times, one per system call, one per
 * NVMe command, one per NVMe/TCP command the fabric view matched (its
 * initiator's, network's and target's stages), one per user-space probe
 * hit or span (record --uprobe/--usdt), one per F2FS GC round, file moved
 * by it, checkpoint or background GC wake-up (record --f2fs), and one for the recording
 * (per machine of the file: the export runs a pass per machine). Fed by the analysis' bus (the
 * report's one pass), so a row's stage times are the report's.
 *
 * Rows are encoded as RowBinary (little-endian fixed-width numbers,
 * strings as a LEB128 length and bytes), the format every ClickHouse
 * since 2017 reads, Debian's 18.16 too, and posted in batches of
 * BATCH_BYTES per table over the HTTP interface (the command supplies the
 * POST: libcurl). The tables are created if missing. A recording already
 * in the tables is refused: a second export would count its I/Os twice.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/nvme.h"
#include "export/clickhouse.h"
#include "export/exporter.h"
#include "extents/extents.h"
#include "layers/fabric/fabric.h"
#include "layers/fs/f2fs_analysis.h"
#include "layers/syscall/sysan.h"
#include "layers/uprobe/uprobe.h"

/* A batch: big enough that a POST's cost (a part written by the server)
 * is spread over many rows, small enough to keep memory flat. */
#define BATCH_BYTES (8u << 20)

enum { T_IOS = IT_CH_IOS, T_CALLS = IT_CH_CALLS, T_NVME = IT_CH_NVME, T_FABRIC = IT_CH_FABRIC,
       T_PROBES = IT_CH_PROBES, T_F2FS = IT_CH_F2FS, T_MAX = IT_CH_RECORDINGS };

/* ---- the schema: each table's columns, in the order a row is written ---- */
struct column {
	const char *name, *type, *what;
};

/* every table's first columns (put_head) */
static const struct column head[] = {
	{ "recording_id", "UInt64", "the recording: its machine's boot id, start time, host name hashed" },
	{ "machine", "UInt16", "machine of the file (0: the initiator; record --target: 1.. targets)" },
	{ "host", "String", "its host name" },
	{ "event_date", "Date", "the row's start, UTC (partition key)" },
	{ "event_time", "DateTime", "the row's start, UTC, to the second" },
};
#define NHEAD (sizeof(head) / sizeof(head[0]))

static const struct column ios_cols[] = {
	{ "start_ns", "UInt64", "start (Q, else I, else D), ns since the recording's start" },
	{ "dev", "UInt32", "device number (kernel encoding)" },
	{ "dev_name", "String", "device name (nvme0n1), else major:minor" },
	{ "op", "String", "read, write, flush, discard, ..." },
	{ "bytes", "UInt32", "request bytes" },
	{ "sector", "UInt64", "first 512-byte sector" },
	{ "pid", "UInt32", "submitter" },
	{ "tid", "UInt32", "" },
	{ "comm", "String", "submitter's command name" },
	{ "flags", "UInt32", "IT_F_* (include/iotrail/event.h): sync, meta, FUA, ..." },
	{ "qd_insert", "UInt32", "requests in flight on the device when it entered (0: not sampled)" },
	{ "qd_issue", "UInt32", "in flight at the driver when issued (0: not sampled)" },
	{ "merges", "UInt16", "bios merged into it" },
	{ "requeues", "UInt16", "" },
	{ "error", "Int16", "negative errno, 0" },
	{ "pattern", "UInt8", "0 not classified, 1 random, 2 sequential" },
	/* then one Int64 per stage: stage_columns() */
};

static const struct column calls_cols[] = {
	{ "start_ns", "UInt64", "entry, ns since the recording's start" },
	{ "tid", "UInt32", "thread" },
	{ "call", "String", "pread64, fsync, io_uring ..." },
	{ "latency_ns", "UInt64", "exit - entry" },
	{ "block_ns", "UInt64", "time with its block I/O in the block layer" },
	{ "block_ios", "UInt32", "block I/Os it owned" },
};

static const struct column nvme_cols[] = {
	{ "start_ns", "UInt64", "submission (nvme_setup_cmd), ns since the recording's start" },
	{ "ctrl", "UInt16", "controller instance (nvmeN)" },
	{ "qid", "UInt16", "queue (0: admin)" },
	{ "cid", "UInt16", "command id" },
	{ "opcode", "String", "read, write, flush, dsm, zone_append, admin_identify ..." },
	{ "dev", "UInt32", "namespace's block device number (0: admin)" },
	{ "dev_name", "String", "" },
	{ "nsid", "UInt32", "" },
	{ "slba", "UInt64", "start LBA (commands that have one)" },
	{ "bytes", "UInt32", "data bytes" },
	{ "status", "UInt16", "NVMe status (0: success)" },
	{ "qd", "UInt32", "commands in flight on its queue at submission, itself included" },
	{ "latency_ns", "UInt64", "completion - submission" },
	{ "cqe_ns", "Int64", "CQE handled by the driver - submission (PCIe; -1: not seen)" },
	{ "pid", "UInt32", "task that set it up" },
	{ "tid", "UInt32", "" },
	{ "comm", "String", "" },
	{ "q2c_ns", "Int64", "its block request's Q2C (-1: no request: admin, passthrough)" },
};

static const struct column fabric_cols[] = {
	{ "start_ns", "UInt64", "initiator's command set up (S), ns since the recording's start" },
	{ "ctrl", "UInt16", "initiator's controller instance (nvmeN)" },
	{ "qid", "UInt16", "queue" },
	{ "cid", "UInt16", "command id" },
	{ "cntlid", "UInt16", "controller id (the same on both sides)" },
	{ "target_machine", "UInt16", "the target's machine in the file (0: the same machine)" },
	{ "opcode", "String", "read, write, flush, ..." },
	{ "bytes", "UInt32", "data bytes" },
	{ "status", "UInt16", "NVMe status (0: success)" },
	/* then one Int64 per fabric stage (host.block -> host_block_ns):
	 * stage_columns() */
};

static const struct column probes_cols[] = {
	{ "start_ns", "UInt64", "the hit, or the span's start, ns since the recording's start" },
	{ "pid", "UInt32", "" },
	{ "tid", "UInt32", "" },
	{ "label", "String", "the probe's label; a span's name (checkpoint for checkpoint__start/__done)" },
	{ "kind", "String", "event, begin, end (hits of a span's probes), span" },
	{ "duration_ns", "UInt64", "a span's (0: a hit)" },
	{ "binary", "String", "the probed binary" },
	{ "nargs", "UInt8", "arguments the hit has (a span: its start's)" },
	{ "arg0", "Int64", "" },
	{ "arg1", "Int64", "" },
	{ "arg2", "Int64", "" },
	{ "arg3", "Int64", "" },
	{ "arg4", "Int64", "" },
	{ "arg5", "Int64", "arguments beyond nargs are 0" },
};

static const struct column f2fs_cols[] = {
	{ "start_ns", "UInt64", "the round's, checkpoint's or wake-up's start, ns since the recording's start" },
	{ "kind", "String", "gc, gc_move (data a round moved: its row's start_ns), checkpoint, background_gc" },
	{ "dev", "UInt32", "the file system's device (kernel encoding)" },
	{ "dev_name", "String", "" },
	{ "duration_ns", "Int64", "gc, checkpoint (-1: its end not recorded)" },
	{ "pid", "UInt32", "" },
	{ "tid", "UInt32", "" },
	{ "foreground", "UInt8", "gc: 1 foreground, 0 background" },
	{ "ret", "Int64", "gc: f2fs_gc's return (negative errno)" },
	{ "segments_freed", "UInt64", "gc" },
	{ "sections_freed", "UInt64", "gc" },
	{ "free_sections_before", "UInt64", "gc" },
	{ "free_sections_after", "UInt64", "gc" },
	{ "data_blocks", "UInt64", "gc: data blocks it wrote" },
	{ "node_blocks", "UInt64", "gc: node blocks it wrote" },
	{ "reason", "String", "checkpoint: sync, umount, ... (F2FS's CP_* bits)" },
	{ "file", "String", "gc_move: the file (the start snapshot's path), else inode N" },
	{ "moved_bytes", "UInt64", "gc_move" },
	{ "from_zone", "Int64", "gc_move: the zone it left (-1: not known)" },
	{ "to_zone", "Int64", "gc_move: the zone it went to (-1: not known)" },
	{ "wait_ms", "UInt64", "background_gc: the GC thread's next wait" },
	{ "prefree_segments", "UInt64", "background_gc" },
	{ "free_segments", "UInt64", "background_gc" },
};

static const struct column rec_cols[] = {
	{ "kernel", "String", "uname -r" },
	{ "boot_id", "String", "" },
	{ "command", "String", "the iotrail record command line" },
	{ "layers", "String", "layers recorded" },
	{ "ios", "UInt64", "rows in ios" },
	{ "calls", "UInt64", "rows in calls" },
	{ "nvme_commands", "UInt64", "rows in nvme_commands" },
	{ "fabric_commands", "UInt64", "rows in fabric_commands" },
	{ "probes", "UInt64", "rows in probes" },
	{ "f2fs_events", "UInt64", "rows in f2fs_events" },
};

static const struct {
	const char *name;
	const struct column *cols;
	size_t ncols;
	const char *order;
} tables[IT_CH_TABLES] = {
	[IT_CH_IOS] = { "ios", ios_cols, sizeof(ios_cols) / sizeof(ios_cols[0]),
			"(recording_id, machine, start_ns)" },
	[IT_CH_CALLS] = { "calls", calls_cols, sizeof(calls_cols) / sizeof(calls_cols[0]),
			  "(recording_id, machine, start_ns)" },
	[IT_CH_NVME] = { "nvme_commands", nvme_cols, sizeof(nvme_cols) / sizeof(nvme_cols[0]),
			 "(recording_id, machine, start_ns)" },
	[IT_CH_FABRIC] = { "fabric_commands", fabric_cols, sizeof(fabric_cols) / sizeof(fabric_cols[0]),
			   "(recording_id, machine, start_ns)" },
	[IT_CH_PROBES] = { "probes", probes_cols, sizeof(probes_cols) / sizeof(probes_cols[0]),
			   "(recording_id, machine, start_ns)" },
	[IT_CH_F2FS] = { "f2fs_events", f2fs_cols, sizeof(f2fs_cols) / sizeof(f2fs_cols[0]),
			 "(recording_id, machine, start_ns)" },
	[IT_CH_RECORDINGS] = { "recordings", rec_cols, sizeof(rec_cols) / sizeof(rec_cols[0]),
			       "(recording_id, machine)" },
};

const char *it_clickhouse_table(unsigned table)
{
	return table < IT_CH_TABLES ? tables[table].name : "";
}

bool it_clickhouse_name_ok(const char *s)
{
	if (!s || !*s || (*s >= '0' && *s <= '9') || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

/* "    name Type,\n" for each column (list: "name Type,"); the stages'
 * (q2i_ns ...) after the ios table's own. */
static int columns(char *buf, size_t len, unsigned table, bool list)
{
	const char *fmt = list ? "%s %s," : "    %s %s,\n";
	size_t off = 0;
	int n;

#define ADD(...)                                                               \
	do {                                                                   \
		n = snprintf(buf + off, off < len ? len - off : 0, __VA_ARGS__); \
		if (n < 0)                                                     \
			return n;                                              \
		off += (size_t)n;                                              \
	} while (0)
	for (size_t i = 0; i < NHEAD; i++)
		ADD(fmt, head[i].name, head[i].type);
	for (size_t i = 0; i < tables[table].ncols; i++)
		ADD(fmt, tables[table].cols[i].name, tables[table].cols[i].type);
	for (unsigned s = 0; table == IT_CH_IOS && s < IT_STAGE_MAX; s++) {
		char name[8];
		for (unsigned k = 0; k < 3; k++) /* "Q2I" -> "q2i" */
			name[k] = (char)(it_stages[s].name[k] | 0x20);
		name[3] = 0;
		ADD(list ? "%s_ns Int64," : "    %s_ns Int64,\n", name);
	}
	for (unsigned s = 0; table == IT_CH_FABRIC && s < IT_FS_MAX; s++) {
		char name[32];
		size_t k = 0;

		for (const char *c = it_fabric_stages[s].name; *c && k + 1 < sizeof(name); c++)
			name[k++] = *c == '.' ? '_' : *c; /* "host.block" -> "host_block" */
		name[k] = 0;
		ADD(list ? "%s_ns Int64," : "    %s_ns Int64,\n", name);
	}
#undef ADD
	return (int)off;
}

int it_clickhouse_create(char *buf, size_t len, unsigned table, const char *db, const char *cluster)
{
	const char *t = tables[table].name;

	if (cluster)
		return snprintf(buf, len, "CREATE TABLE IF NOT EXISTS %s.%s_all AS %s.%s\n"
				"ENGINE = Distributed(%s, %s, %s, recording_id)", db, t, db, t, cluster,
				db, t);
	int n = snprintf(buf, len, "CREATE TABLE IF NOT EXISTS %s.%s (\n", db, t);
	if (n < 0 || (size_t)n >= len)
		return n;
	int c = columns(buf + n, len - (size_t)n, table, false);
	if (c < 0 || (size_t)(n + c) >= len)
		return n + c;
	n += c - 2; /* the last ",\n" */
	return n + snprintf(buf + n, len - (size_t)n, "\n) ENGINE = MergeTree()\n%sORDER BY %s",
			    table == IT_CH_RECORDINGS ? "" : "PARTITION BY toYYYYMM(event_date)\n",
			    tables[table].order);
}

struct buf {
	unsigned char *p;
	size_t len, cap;
	uint64_t rows;   /* in the buffer */
	uint64_t sent;   /* rows posted */
	uint64_t unsent; /* rows of a failed POST, or seen after a failure */
};

struct ch {
	struct it_export_url u;
	const struct it_pass_info *info;
	struct buf b[T_MAX];
	uint64_t recording_id;
	uint64_t start_mono, start_wall_ns;
	char host[65];
	int failed;      /* -1: out of memory; 1: the server or the network (err) */
	char err[512];
};

/* ---- RowBinary ---- */
static bool grow(struct ch *x, struct buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 1u << 16;
	while (cap < b->len + more)
		cap *= 2;
	unsigned char *p = realloc(b->p, cap);
	if (!p) {
		x->failed = -1;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

/* Little-endian on the machines iotrail runs on (x86-64, arm64). */
static void put(struct ch *x, struct buf *b, const void *v, size_t n)
{
	if (grow(x, b, n)) {
		memcpy(b->p + b->len, v, n);
		b->len += n;
	}
}
#define PUT(x, b, type, v) do { type v_ = (type)(v); put(x, b, &v_, sizeof(v_)); } while (0)

static void put_str(struct ch *x, struct buf *b, const char *s, size_t maxlen)
{
	size_t n = strnlen(s ? s : "", maxlen);
	unsigned char len[10];
	size_t k = 0;

	for (uint64_t v = n; ; v >>= 7) { /* LEB128 */
		len[k++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		if (v < 0x80)
			break;
	}
	put(x, b, len, k);
	put(x, b, s ? s : "", n);
}

/* recording_id, machine, host, event_date (Date), event_time (DateTime) */
static void put_head(struct ch *x, struct buf *b, uint64_t mono_ns)
{
	uint64_t wall = x->start_wall_ns + (mono_ns > x->start_mono ? mono_ns - x->start_mono : 0);
	uint32_t secs = (uint32_t)(wall / 1000000000ull);

	PUT(x, b, uint64_t, x->recording_id);
	PUT(x, b, uint16_t, x->info->machine);
	put_str(x, b, x->host, sizeof(x->host));
	PUT(x, b, uint16_t, secs / 86400);
	PUT(x, b, uint32_t, secs);
}

static uint64_t since_start(const struct ch *x, uint64_t ns)
{
	return ns > x->start_mono ? ns - x->start_mono : 0;
}

/* ---- sending ---- */
static void failf(struct ch *x, const char *fmt, ...)
{
	va_list ap;

	if (x->failed)
		return;
	x->failed = 1;
	va_start(ap, fmt);
	vsnprintf(x->err, sizeof(x->err), fmt, ap);
	va_end(ap);
}

/* reply (may be NULL): the server's answer. */
static int post(struct ch *x, const char *query, const void *body, size_t len, char *reply,
		size_t replylen)
{
	char why[400];

	if (x->failed)
		return -1;
	if (!reply) {
		reply = why;
		replylen = sizeof(why);
	}
	if (x->u.post(x->u.conn, query, body, len, reply, replylen)) {
		failf(x, "%s; check that a ClickHouse server answers there (its log tells more)", reply);
		return -1;
	}
	return 0;
}

static void flush(struct ch *x, unsigned t)
{
	struct buf *b = &x->b[t];
	char q[256];

	if (!b->rows || x->failed)
		return;
	snprintf(q, sizeof(q), "INSERT INTO %s.%s FORMAT RowBinary", x->u.database, tables[t].name);
	if (!post(x, q, b->p, b->len, NULL, 0))
		b->sent += b->rows;
	else
		b->unsent += b->rows;
	b->len = 0;
	b->rows = 0;
}

static void row_done(struct ch *x, unsigned t)
{
	x->b[t].rows++;
	if (x->b[t].len >= BATCH_BYTES)
		flush(x, t);
}

/* ---- rows ---- */
static const char *dev_name(const struct ch *x, uint32_t dev, char *buf, size_t len)
{
	for (size_t i = 0; i < x->info->ndevs; i++)
		if (x->info->devs[i].dev == dev)
			return x->info->devs[i].name;
	snprintf(buf, len, "%u:%u", IT_DEV_MAJOR(dev), IT_DEV_MINOR(dev));
	return buf;
}

static void on_trail(const void *msg, void *ctx)
{
	const struct it_bus_trail *m = msg;
	const struct it_trail *t = m->t;
	struct ch *x = ctx;
	struct buf *b = &x->b[T_IOS];
	uint64_t start = t->ts[IT_PT_Q] ? t->ts[IT_PT_Q] : t->ts[IT_PT_I] ? t->ts[IT_PT_I] : t->ts[IT_PT_D];
	char dn[24];

	if (x->failed) {
		x->b[T_IOS].unsent++; /* said by the sink (sink.c) */
		return;
	}
	put_head(x, b, start);
	PUT(x, b, uint64_t, since_start(x, start));
	PUT(x, b, uint32_t, t->dev);
	put_str(x, b, dev_name(x, t->dev, dn, sizeof(dn)), 32);
	put_str(x, b, it_op_name(t->op), 32);
	PUT(x, b, uint32_t, t->bytes);
	PUT(x, b, uint64_t, t->sector);
	PUT(x, b, uint32_t, t->pid);
	PUT(x, b, uint32_t, t->tid);
	put_str(x, b, it_analyzer_comm(m->a, t->comm), 16);
	PUT(x, b, uint32_t, t->flags);
	PUT(x, b, uint32_t, t->qd_insert);
	PUT(x, b, uint32_t, t->qd_issue);
	PUT(x, b, uint16_t, t->merges);
	PUT(x, b, uint16_t, t->requeues);
	PUT(x, b, int16_t, t->error);
	PUT(x, b, uint8_t, t->seq);
	for (unsigned s = 0; s < IT_STAGE_MAX; s++)
		PUT(x, b, int64_t, it_stage_time(t, s));
	row_done(x, T_IOS);
}

static void on_call(const void *msg, void *ctx)
{
	const struct it_bus_call *m = msg;
	struct ch *x = ctx;
	struct buf *b = &x->b[T_CALLS];
	const char *name = it_sys_call_name(m->call);
	char unknown[16];

	if (x->failed) {
		x->b[T_CALLS].unsent++; /* said by the sink (sink.c) */
		return;
	}
	if (!name) {
		snprintf(unknown, sizeof(unknown), "call_%u", m->call);
		name = unknown;
	}
	put_head(x, b, m->ts_enter);
	PUT(x, b, uint64_t, since_start(x, m->ts_enter));
	PUT(x, b, uint32_t, m->tid);
	put_str(x, b, name, 32);
	PUT(x, b, uint64_t, m->ts_exit > m->ts_enter ? m->ts_exit - m->ts_enter : 0);
	PUT(x, b, uint64_t, m->block_ns);
	PUT(x, b, uint32_t, m->block_ios);
	row_done(x, T_CALLS);
}

static void on_nvme(const void *msg, void *ctx)
{
	const struct it_bus_nvme_cmd *m = msg;
	const struct it_nvme_cmd *c = m->c;
	struct ch *x = ctx;
	struct buf *b = &x->b[T_NVME];
	char name[32], dn[24];

	if (x->failed) {
		x->b[T_NVME].unsent++; /* said by the sink (sink.c) */
		return;
	}
	put_head(x, b, c->submit_ns);
	PUT(x, b, uint64_t, since_start(x, c->submit_ns));
	PUT(x, b, uint16_t, c->ctrl);
	PUT(x, b, uint16_t, c->qid);
	PUT(x, b, uint16_t, c->cid);
	put_str(x, b, it_nvme_opcode_name(c->opcode, it_nvme_is_admin(c), name, sizeof(name)), 32);
	PUT(x, b, uint32_t, c->dev);
	put_str(x, b, c->dev ? dev_name(x, c->dev, dn, sizeof(dn)) : "", 32);
	PUT(x, b, uint32_t, c->nsid);
	PUT(x, b, uint64_t, c->slba);
	PUT(x, b, uint32_t, c->bytes);
	PUT(x, b, uint16_t, c->status);
	PUT(x, b, uint32_t, c->qd);
	PUT(x, b, uint64_t, c->complete_ns > c->submit_ns ? c->complete_ns - c->submit_ns : 0);
	PUT(x, b, int64_t, c->cqe_ns > c->submit_ns ? (int64_t)(c->cqe_ns - c->submit_ns) : -1);
	PUT(x, b, uint32_t, c->pid);
	PUT(x, b, uint32_t, c->tid);
	put_str(x, b, c->comm, sizeof(c->comm));
	PUT(x, b, int64_t, m->t ? it_stage_time(m->t, IT_STAGE_Q2C) : -1);
	row_done(x, T_NVME);
}

/* A matched NVMe/TCP command: the fabric view's stages, as the report
 * takes them (-1: a stage this command does not have). */
static void on_fabric(const void *msg, void *ctx)
{
	const struct it_fabric_matched *m = msg;
	const struct it_fabric_host *h = m->h;
	struct ch *x = ctx;
	struct buf *b = &x->b[T_FABRIC];
	char name[32];

	if (x->failed) {
		x->b[T_FABRIC].unsent++; /* said by the sink (sink.c) */
		return;
	}
	put_head(x, b, h->s);
	PUT(x, b, uint64_t, since_start(x, h->s));
	PUT(x, b, uint16_t, h->ctrl);
	PUT(x, b, uint16_t, h->qid);
	PUT(x, b, uint16_t, h->cid);
	PUT(x, b, uint16_t, m->cntlid);
	PUT(x, b, uint16_t, m->target_machine == IT_FABRIC_NO_MACHINE ? 0 : m->target_machine);
	put_str(x, b, it_nvme_opcode_name(h->opcode, h->qid == 0, name, sizeof(name)), 32);
	PUT(x, b, uint32_t, h->bytes);
	PUT(x, b, uint16_t, h->status);
	for (unsigned s = 0; s < IT_FS_MAX; s++) {
		const struct it_fabric_stage_def *d = &it_fabric_stages[s];

		PUT(x, b, int64_t, m->stages & 1u << s ? (int64_t)(m->p[d->to] - m->p[d->from]) : -1);
	}
	row_done(x, T_FABRIC);
}

static const char *const probe_kinds[] = { "event", "begin", "end", "span", "open" };

/* A user-space probe's hit or span: its arguments in arg0..arg5. */
static void on_probe(const void *msg, void *ctx)
{
	const struct it_bus_probe *m = msg;
	struct ch *x = ctx;
	struct buf *b = &x->b[T_PROBES];

	if (x->failed) {
		b->unsent++; /* said by the sink (sink.c) */
		return;
	}
	put_head(x, b, m->ts_ns);
	PUT(x, b, uint64_t, since_start(x, m->ts_ns));
	PUT(x, b, uint32_t, m->pid);
	PUT(x, b, uint32_t, m->tid);
	put_str(x, b, m->label, 64);
	put_str(x, b, probe_kinds[m->kind], 8);
	PUT(x, b, uint64_t, m->duration_ns);
	put_str(x, b, m->binary, 256);
	PUT(x, b, uint8_t, m->nargs);
	for (uint32_t a = 0; a < IT_UPROBE_MAX_ARGS; a++)
		PUT(x, b, int64_t, a < m->nargs ? (int64_t)m->args[a] : 0);
	row_done(x, T_PROBES);
}

/* One f2fs_events row: the columns a kind does not have are 0 ("", -1). */
static void f2fs_row(struct ch *x, const struct it_bus_f2fs *m, const char *kind,
		     const struct it_f2fs_moved *v)
{
	struct buf *b = &x->b[T_F2FS];
	bool gc = !strcmp(kind, "gc"), bg = m->kind == IT_F2FS_ROW_BG_GC;
	char dn[24], text[200] = "";

	put_head(x, b, m->start_ns);
	PUT(x, b, uint64_t, since_start(x, m->start_ns));
	put_str(x, b, kind, 16);
	PUT(x, b, uint32_t, m->dev);
	put_str(x, b, dev_name(x, m->dev, dn, sizeof(dn)), 32);
	PUT(x, b, int64_t, bg || v ? 0 : m->end_ns >= m->start_ns && m->end_ns
					     ? (int64_t)(m->end_ns - m->start_ns) : -1);
	PUT(x, b, uint32_t, m->pid);
	PUT(x, b, uint32_t, m->tid);
	PUT(x, b, uint8_t, gc && m->foreground);
	PUT(x, b, int64_t, gc ? m->ret : 0);
	PUT(x, b, uint64_t, gc ? m->segments_freed : 0);
	PUT(x, b, uint64_t, gc ? m->sections_freed : 0);
	PUT(x, b, uint64_t, gc ? m->free_before : 0);
	PUT(x, b, uint64_t, gc ? m->free_after : 0);
	PUT(x, b, uint64_t, gc ? m->data_blocks : 0);
	PUT(x, b, uint64_t, gc ? m->node_blocks : 0);
	if (m->kind == IT_F2FS_ROW_CHECKPOINT)
		it_f2fs_reason_text(m->reason, text, sizeof(text));
	put_str(x, b, text, sizeof(text));
	if (v && v->path)
		snprintf(text, sizeof(text), "%s", v->path);
	else if (v)
		snprintf(text, sizeof(text), "inode %llu", (unsigned long long)v->ino);
	put_str(x, b, v ? text : "", sizeof(text));
	PUT(x, b, uint64_t, v ? v->bytes : 0);
	PUT(x, b, int64_t, v && v->from_zone != IT_EXT_NO_ZONE ? (int64_t)v->from_zone : -1);
	PUT(x, b, int64_t, v && v->to_zone != IT_EXT_NO_ZONE ? (int64_t)v->to_zone : -1);
	PUT(x, b, uint64_t, bg ? m->wait_ms : 0);
	PUT(x, b, uint64_t, bg ? m->prefree : 0);
	PUT(x, b, uint64_t, bg ? m->free_segments : 0);
	row_done(x, T_F2FS);
}

static void on_f2fs(const void *msg, void *ctx)
{
	const struct it_bus_f2fs *m = msg;
	struct ch *x = ctx;

	if (x->failed) {
		x->b[T_F2FS].unsent += 1 + (m->kind == IT_F2FS_ROW_GC ? m->nmoved : 0);
		return;
	}
	f2fs_row(x, m, m->kind == IT_F2FS_ROW_GC ? "gc" : m->kind == IT_F2FS_ROW_CHECKPOINT
			? "checkpoint" : "background_gc", NULL);
	for (uint32_t k = 0; m->kind == IT_F2FS_ROW_GC && k < m->nmoved; k++)
		f2fs_row(x, m, "gc_move", &m->moved[k]);
}

/* ---- the tables ---- */

/* FNV-1a over what names a recording: its machine's boot, start time and
 * host name; the same trace exported twice has the same id. */
static uint64_t recording_id(const struct it_host_rec *h)
{
	uint64_t v = 0xcbf29ce484222325ull;
	const unsigned char *parts[3] = { (const void *)h->boot_id, (const void *)&h->start_realtime_ns,
					  (const void *)h->hostname };
	size_t lens[3] = { strnlen(h->boot_id, sizeof(h->boot_id)), sizeof(h->start_realtime_ns),
			   strnlen(h->hostname, sizeof(h->hostname)) };

	for (unsigned i = 0; i < 3; i++)
		for (size_t k = 0; k < lens[i]; k++)
			v = (v ^ parts[i][k]) * 0x100000001b3ull;
	return v;
}

/* Creates what is missing; a table that was there must have our columns,
 * in our order: RowBinary has no names, and a table of other columns
 * would take the bytes as other rows without a word. */
static void create_tables(struct ch *x)
{
	char q[4096], want[2048], got[2048];

	snprintf(q, sizeof(q), "CREATE DATABASE IF NOT EXISTS %s", x->u.database);
	post(x, NULL, q, strlen(q), NULL, 0);
	for (unsigned t = 0; t < IT_CH_TABLES && !x->failed; t++) {
		it_clickhouse_create(q, sizeof(q), t, x->u.database, NULL);
		post(x, NULL, q, strlen(q), NULL, 0);
		snprintf(q, sizeof(q), "SELECT arrayStringConcat(groupArray(concat(name, ' ', type)), ',') "
			 "FROM (SELECT name, type FROM system.columns WHERE database = '%s' AND "
			 "table = '%s')", x->u.database, tables[t].name);
		int n = columns(want, sizeof(want), t, true);
		if (n > 0)
			want[n - 1] = 0; /* the last comma */
		if (!post(x, NULL, q, strlen(q), got, sizeof(got)) && strcmp(got, want))
			failf(x, "table %s.%s has other columns than iotrail's (%.200s%s); export into "
			      "another --database, or drop the table", x->u.database, tables[t].name,
			      got, strlen(got) > 200 ? "..." : "");
	}
}

/* A recording already exported is refused: its rows would count twice. */
static void check_new(struct ch *x)
{
	char q[256], reply[400];

	snprintf(q, sizeof(q), "SELECT count() FROM %s.recordings WHERE recording_id = %" PRIu64
		 " AND machine = %u", x->u.database, x->recording_id, x->info->machine);
	if (!post(x, NULL, q, strlen(q), reply, sizeof(reply)) && strcmp(reply, "0"))
		failf(x, "recording %" PRIu64 " (machine %u) is in database %s already; delete its "
		      "rows first (ALTER TABLE %s.T DELETE WHERE recording_id = %" PRIu64 " for each "
		      "table T) or export into another --database", x->recording_id, x->info->machine,
		      x->u.database, x->u.database, x->recording_id);
}

static int ch_subscribe(void *self, struct it_bus *bus)
{
	struct ch *x = self;

	if (it_bus_subscribe(bus, IT_BUS_TRAIL_DONE, on_trail, x) ||
	    it_bus_subscribe(bus, IT_BUS_CALL_DONE, on_call, x) ||
	    it_bus_subscribe(bus, IT_BUS_NVME_CMD_DONE, on_nvme, x) ||
	    it_bus_subscribe(bus, IT_BUS_FABRIC_CMD_DONE, on_fabric, x) ||
	    it_bus_subscribe(bus, IT_BUS_PROBE, on_probe, x) ||
	    it_bus_subscribe(bus, IT_BUS_F2FS, on_f2fs, x))
		return -1;
	return 0;
}

static void *ch_open_url(const struct it_export_url *u, const struct it_pass_info *info)
{
	struct ch *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->u = *u;
	x->info = info;
	/* every machine's rows carry machine 0's: one recording */
	x->recording_id = recording_id(u->recording ? u->recording : info->host);
	x->start_mono = info->host->start_monotonic_ns;
	x->start_wall_ns = info->host->start_realtime_ns;
	snprintf(x->host, sizeof(x->host), "%.*s", (int)sizeof(info->host->hostname),
		 info->host->hostname);
	if (!it_clickhouse_name_ok(u->database)) {
		failf(x, "the database name '%.64s' is not a plain name; give --database with "
		      "letters, digits and _ only", u->database);
		return x;
	}
	if (info->bus && ch_subscribe(x, info->bus)) {
		failf(x, "too many listeners on the analysis' bus");
		return x;
	}
	create_tables(x);
	check_new(x);
	return x;
}

static int64_t ch_finish(void *self)
{
	struct ch *x = self;
	const struct it_host_rec *h = x->info->host;
	struct buf r = { 0 };

	for (unsigned t = 0; t < T_MAX; t++)
		flush(x, t);
	if (x->failed)
		return -1;
	/* the recording last: it is there only when its rows are */
	put_head(x, &r, x->start_mono);
	put_str(x, &r, h->kernel, sizeof(h->kernel));
	put_str(x, &r, h->boot_id, sizeof(h->boot_id));
	put_str(x, &r, h->command, sizeof(h->command));
	put_str(x, &r, h->layers, sizeof(h->layers));
	for (unsigned t = 0; t < T_MAX; t++)
		PUT(x, &r, uint64_t, x->b[t].sent);
	if (!x->failed) {
		char q[256];
		snprintf(q, sizeof(q), "INSERT INTO %s.recordings FORMAT RowBinary", x->u.database);
		post(x, q, r.p, r.len, NULL, 0);
	}
	free(r.p);
	if (x->failed)
		return -1;
	uint64_t rows = 0;
	for (unsigned t = 0; t < T_MAX; t++)
		rows += x->b[t].sent;
	return (int64_t)rows;
}

void it_clickhouse_send_now(void *self)
{
	struct ch *x = self;

	for (unsigned t = 0; t < T_MAX; t++)
		flush(x, t);
}

void it_clickhouse_counts(const void *self, uint64_t sent[IT_CH_RECORDINGS],
			  uint64_t unsent[IT_CH_RECORDINGS])
{
	const struct ch *x = self;

	for (unsigned t = 0; t < T_MAX; t++) {
		sent[t] = x->b[t].sent;
		unsent[t] = x->b[t].unsent + x->b[t].rows;
	}
}

uint64_t it_clickhouse_recording(const void *self)
{
	return ((const struct ch *)self)->recording_id;
}

static const char *ch_error(const void *self)
{
	const struct ch *x = self;

	return x->failed > 0 ? x->err : NULL;
}

static void ch_free(void *self)
{
	struct ch *x = self;

	if (!x)
		return;
	for (unsigned t = 0; t < T_MAX; t++)
		free(x->b[t].p);
	free(x);
}

const struct it_exporter it_export_clickhouse = {
	.name = "clickhouse",
	.what = "into ClickHouse over HTTP (--url http://HOST:8123 [--database DB],\n"
		"default iotrail): a row per block I/O with its stage times, per system\n"
		"call, per NVMe command, per matched NVMe/TCP command, per user-space\n"
		"probe hit and span, per F2FS GC round and checkpoint, per recording\n"
		"and machine; tables made when missing\n"
		"(doc/clickhouse.md)",
	.none = "block I/O, system calls, NVMe or NVMe/TCP commands, probe hits or F2FS events",
	.analysis = true,
	.open_url = ch_open_url,
	.finish = ch_finish,
	.error = ch_error,
	.free = ch_free,
};
