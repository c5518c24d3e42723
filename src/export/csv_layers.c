// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail export --format csv --what trails|calls|zones`: the layers'
 * records as the report's analysis layers make them (through the bus),
 * one CSV row each: a block trail (one I/O: its points Q/I/D/C, with the
 * NVMe command's S/N/H when it went through the NVMe driver), a system
 * call (with the block time and I/Os it owns), a zone of a zoned device
 * (its I/O and management counts over the trace), an NVMe/TCP command
 * the fabric view matched (its stages). Trails and calls of every machine
 * of a file of several (a pass each; their last column is the machine).
 * --what probes: a user-space probe's hit or span (record --uprobe/--usdt);
 * --what fs: an F2FS GC round (and per file and zone pair the data it
 * moved), checkpoint or background GC wake-up (record --f2fs).
 * The NVMe commands' rows are csv.c's (--what nvme). Columns:
 * doc/export.md.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/nvme.h"
#include "analyze/zones.h"
#include "export/exporter.h"
#include "export/outbuf.h"
#include "extents/extents.h"
#include "layers/fabric/fabric.h"
#include "layers/fs/f2fs_analysis.h"
#include "layers/syscall/sysan.h"
#include "layers/uprobe/uprobe.h"

struct rows {
	struct it_outbuf ob;   /* trails: millions of rows, formatted by hand */
	const struct it_pass_info *info;
	const struct it_analyzer *names; /* comm names of the trails (from the bus) */
	int64_t n;
	enum it_bus_topic topic;         /* what its rows are: the bus of each pass */
	it_bus_fn fn;
};

/* A row of few fields, rare enough for printf, through the buffer. */
__attribute__((format(printf, 2, 3))) static void row(struct rows *x, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		it_ob_put(&x->ob, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void *rows_open(FILE *out, const struct it_pass_info *info, const char *header,
		       enum it_bus_topic topic, it_bus_fn fn)
{
	struct rows *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->info = info;
	x->topic = topic;
	x->fn = fn;
	if (it_ob_init(&x->ob, out) || (fn && it_bus_subscribe(info->bus, topic, fn, x))) {
		it_ob_free(&x->ob);
		free(x);
		return NULL;
	}
	it_ob_put(&x->ob, header, strlen(header));
	it_ob_char(&x->ob, '\n');
	return x;
}

/* Another machine's pass: its rows follow, with its machine id. */
static int rows_next_machine(void *self, const struct it_pass_info *info)
{
	struct rows *x = self;

	x->info = info;
	return it_bus_subscribe(info->bus, x->topic, x->fn, x);
}

static int64_t rows_finish(void *self)
{
	struct rows *x = self;

	it_ob_flush(&x->ob);
	return x->n;
}

static void rows_free(void *self)
{
	struct rows *x = self;

	if (x)
		it_ob_free(&x->ob);
	free(x);
}

/* ---- trails ---- */

static const char trails_header[] =
	"device,dev,op,sector,bytes,pid,tid,comm,queue_ns,insert_ns,issue_ns,complete_ns,"
	"nvme_setup_ns,nvme_cqe_ns,nvme_complete_ns,q2c_ns,qd_insert,qd_issue,merges,requeues,"
	"partial,split,error,machine";

static void on_trail(const void *msg, void *ctx)
{
	const struct it_bus_trail *m = msg;
	const struct it_trail *t = m->t;
	struct rows *x = ctx;
	struct it_outbuf *o = &x->ob;
	int64_t q2c = it_stage_time(t, IT_STAGE_Q2C);
	const uint64_t points[] = { t->ts[IT_PT_Q], t->ts[IT_PT_I], t->ts[IT_PT_D], t->ts[IT_PT_C],
				    t->ts[IT_PT_S], t->ts[IT_PT_H], t->ts[IT_PT_N],
				    q2c < 0 ? 0 : (uint64_t)q2c, t->qd_insert, t->qd_issue,
				    t->merges, t->requeues, t->partial, t->split };
	char dev[48];

	it_ob_csv_str(o, it_export_dev_name(x->info, t->dev, dev, sizeof(dev)));
	it_ob_char(o, ',');
	it_ob_u64(o, IT_DEV_MAJOR(t->dev));
	it_ob_char(o, ':');
	it_ob_u64(o, IT_DEV_MINOR(t->dev));
	it_ob_char(o, ',');
	it_ob_csv_str(o, it_op_name(t->op));
	it_ob_char(o, ',');
	if (t->sector != UINT64_MAX) /* all ones: none (a request without data) */
		it_ob_u64(o, t->sector);
	it_ob_char(o, ',');
	it_ob_u64(o, t->bytes);
	it_ob_char(o, ',');
	it_ob_u64(o, t->pid);
	it_ob_char(o, ',');
	it_ob_u64(o, t->tid);
	it_ob_char(o, ',');
	it_ob_csv_str(o, it_analyzer_comm(m->a, t->comm));
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		it_ob_char(o, ',');
		it_ob_u64(o, points[i]);
	}
	it_ob_char(o, ',');
	it_ob_i64(o, t->error);
	it_ob_char(o, ',');
	it_ob_u64(o, x->info->machine);
	it_ob_char(o, '\n');
	x->n++;
}

static void *trails_open(FILE *out, const struct it_pass_info *info)
{
	return rows_open(out, info, trails_header, IT_BUS_TRAIL_DONE, on_trail);
}

const struct it_exporter it_export_csv_trails = {
	.name = "csv",
	.kind = "trails",
	.analysis = true,
	.what = "every block I/O (trail) as one CSV row, in completion order: its device,\n"
		"op, sector, bytes, submitter, the times it was queued, inserted, issued and\n"
		"completed (and its NVMe command's set-up, CQE and completion), Q2C, queue\n"
		"depths, merges, requeues, error (columns: doc/export.md).",
	.none = "block I/O (recorded without the block layer, or no I/O completed)",
	.open = trails_open,
	.next_machine = rows_next_machine,
	.finish = rows_finish,
	.free = rows_free,
};

/* ---- calls ---- */

static const char calls_header[] =
	"tid,call,enter_ns,exit_ns,latency_ns,block_ns,block_ios,machine";

static void on_call(const void *msg, void *ctx)
{
	const struct it_bus_call *c = msg;
	struct rows *x = ctx;
	const char *name = it_sys_call_name(c->call);
	char buf[16];

	if (!name) {
		snprintf(buf, sizeof(buf), "call_%u", c->call);
		name = buf;
	}
	row(x, "%u,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u\n", c->tid, name,
		c->ts_enter, c->ts_exit, c->ts_exit > c->ts_enter ? c->ts_exit - c->ts_enter : 0,
		c->block_ns, c->block_ios, x->info->machine);
	x->n++;
}

static void *calls_open(FILE *out, const struct it_pass_info *info)
{
	return rows_open(out, info, calls_header, IT_BUS_CALL_DONE, on_call);
}

const struct it_exporter it_export_csv_calls = {
	.name = "csv",
	.kind = "calls",
	.analysis = true,
	.what = "every system call as one CSV row, in the order they were summed up (about\n"
		"the order they ended): thread, call, entry and exit times, latency, and the\n"
		"time and I/Os of the block I/O it owns (columns: doc/export.md).",
	.none = "system calls (recorded without the syscall layer)",
	.open = calls_open,
	.next_machine = rows_next_machine,
	.finish = rows_finish,
	.free = rows_free,
};

/* ---- fabric ---- */

/* The header: the command's keys, then a column per fabric stage
 * (host.block -> host_block_ns), as the ClickHouse table has them. */
static void fabric_header(char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "machine,target_machine,ctrl,qid,cid,cntlid,"
				      "opcode,bytes,status,setup_ns");

	for (unsigned st = 0; st < IT_FS_MAX && off < len; st++) {
		buf[off++] = ',';
		for (const char *c = it_fabric_stages[st].name; *c && off + 4 < len; c++)
			buf[off++] = *c == '.' ? '_' : *c;
		off += (size_t)snprintf(buf + off, len - off, "_ns");
	}
}

/* A matched command: its stages as the report takes them; a stage it
 * does not have is empty. */
static void on_fabric(const void *msg, void *ctx)
{
	const struct it_fabric_matched *m = msg;
	const struct it_fabric_host *h = m->h;
	struct rows *x = ctx;
	struct it_outbuf *o = &x->ob;
	char op[32];

	row(x, "%u,%u,%u,%u,%u,%u,", x->info->machine,
	    m->target_machine == IT_FABRIC_NO_MACHINE ? 0 : m->target_machine, h->ctrl, h->qid,
	    h->cid, m->cntlid);
	it_ob_csv_str(o, it_nvme_opcode_name(h->opcode, h->qid == 0, op, sizeof(op)));
	row(x, ",%u,%u,%" PRIu64, h->bytes, h->status, h->s);
	for (unsigned st = 0; st < IT_FS_MAX; st++) {
		const struct it_fabric_stage_def *d = &it_fabric_stages[st];

		it_ob_char(o, ',');
		if (m->stages & 1u << st)
			it_ob_u64(o, m->p[d->to] - m->p[d->from]);
	}
	it_ob_char(o, '\n');
	x->n++;
}

static void *fabric_open(FILE *out, const struct it_pass_info *info)
{
	char header[1024];

	fabric_header(header, sizeof(header));
	return rows_open(out, info, header, IT_BUS_FABRIC_CMD_DONE, on_fabric);
}

const struct it_exporter it_export_csv_fabric = {
	.name = "csv",
	.kind = "fabric",
	.analysis = true,
	.what = "every NVMe/TCP command the fabric view matched as one CSV row: its\n"
		"queue, command and controller ids, opcode, the target's machine, and the ns\n"
		"of each fabric stage, empty when it has none (columns: doc/export.md).",
	.none = "NVMe/TCP commands matched initiator to target (no nvmet layer, or none matched)",
	.open = fabric_open,
	.finish = rows_finish,
	.free = rows_free,
};

/* ---- zones ---- */

static const char zones_header[] =
	"device,dev,zone,start_sector,len_sectors,capacity_sectors,type,cond_at_start,"
	"wp_at_start,reads,read_bytes,writes,write_bytes,appends,append_bytes,errors,resets,"
	"finishes,opens,closes,reset_avg_ns";

static void *zones_open(FILE *out, const struct it_pass_info *info)
{
	return rows_open(out, info, zones_header, IT_BUS_MAX, NULL);
}

/* The zones are the block analyzer's sums, complete at the end. */
static int64_t zones_finish(void *self, const struct it_analysis *an)
{
	struct rows *x = self;
	const void *block = it_analysis_state(an, &it_layer_block);
	const struct it_zones *z = block ? it_analyzer_zones(it_layer_block_analyzer(block)) : NULL;

	if (!z)
		return rows_finish(x);
	if (z->err)
		return -1;
	for (uint32_t d = 0; d < z->ndevs; d++) {
		const struct it_zone_dev *zd = &z->devs[d];
		char dev[48];

		it_export_dev_name(x->info, zd->dev, dev, sizeof(dev));
		for (uint32_t i = 0; i < zd->nzones; i++) {
			const struct it_zone *zn = &zd->zones[i];
			const struct it_hist *r = &zn->mgmt[IT_ZM_RESET];

			it_ob_csv_str(&x->ob, dev);
			row(x, ",%u:%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
				IT_DEV_MAJOR(zd->dev), IT_DEV_MINOR(zd->dev), i, zn->start, zn->len,
				zn->capacity, zn->type, zn->cond_start, zn->wp_start, zn->reads,
				zn->read_bytes, zn->writes, zn->write_bytes, zn->appends, zn->append_bytes,
				zn->errors, r->count, zn->mgmt[IT_ZM_FINISH].count,
				zn->mgmt[IT_ZM_OPEN].count, zn->mgmt[IT_ZM_CLOSE].count,
				r->count ? r->sum / r->count : 0);
			x->n++;
		}
	}
	return rows_finish(x);
}

const struct it_exporter it_export_csv_zones = {
	.name = "csv",
	.kind = "zones",
	.analysis = true,
	.what = "every zone of each zoned device as one CSV row: its range, type and\n"
		"condition and write pointer at the start, the I/O it took, its resets,\n"
		"finishes, opens and closes (columns: doc/export.md).",
	.none = "zones (no zoned device, or recorded without its zone table)",
	.open = zones_open,
	.finish = rows_finish,
	.finish_analysis = zones_finish,
	.free = rows_free,
};

/* ---- probes ---- */

static const char probes_header[] =
	"machine,ts_ns,pid,tid,label,kind,duration_ns,binary,nargs,arg0,arg1,arg2,arg3,arg4,arg5";

static const char *const probe_kinds[] = { "event", "begin", "end", "span", "open" };

/* A hit (kind event, begin or end) or a span (its start, duration and its
 * start's arguments); arguments it does not have are empty. */
static void on_probe(const void *msg, void *ctx)
{
	const struct it_bus_probe *m = msg;
	struct rows *x = ctx;
	struct it_outbuf *o = &x->ob;

	row(x, "%u,%" PRIu64 ",%u,%u,", x->info->machine, m->ts_ns, m->pid, m->tid);
	it_ob_csv_str(o, m->label);
	row(x, ",%s,", probe_kinds[m->kind]);
	if (m->kind == IT_PROBE_SPAN || m->kind == IT_PROBE_OPEN)
		it_ob_u64(o, m->duration_ns);
	it_ob_char(o, ',');
	it_ob_csv_str(o, m->binary);
	row(x, ",%u", m->nargs);
	for (uint32_t a = 0; a < IT_UPROBE_MAX_ARGS; a++) {
		it_ob_char(o, ',');
		if (a < m->nargs)
			it_ob_i64(o, (int64_t)m->args[a]);
	}
	it_ob_char(o, '\n');
	x->n++;
}

static void *probes_open(FILE *out, const struct it_pass_info *info)
{
	return rows_open(out, info, probes_header, IT_BUS_PROBE, on_probe);
}

const struct it_exporter it_export_csv_probes = {
	.name = "csv",
	.kind = "probes",
	.analysis = true,
	.what = "every user-space probe hit (record --uprobe/--usdt) as one CSV row, in time\n"
		"order: kind event, or begin/end of a span; and every span (a start paired\n"
		"with its done on the thread) as a row of kind span with its duration; the\n"
		"label, process, thread and arguments (columns: doc/export.md).",
	.none = "user-space probe hits (recorded without --uprobe or --usdt)",
	.open = probes_open,
	.next_machine = rows_next_machine,
	.finish = rows_finish,
	.free = rows_free,
};

/* ---- fs (F2FS) ---- */

static const char fs_header[] =
	"machine,kind,device,dev,start_ns,duration_ns,pid,tid,foreground,ret,segments_freed,"
	"sections_freed,free_sections_before,free_sections_after,data_blocks,node_blocks,reason,"
	"file,moved_bytes,from_zone,to_zone,wait_ms,prefree_segments,free_segments";

static void zone_field(struct it_outbuf *o, uint32_t z)
{
	it_ob_char(o, ',');
	if (z != IT_EXT_NO_ZONE)
		it_ob_u64(o, z);
}

/* The columns up to tid; the dev is the kernel's (major << 20 | minor). */
static void fs_head(struct rows *x, const char *kind, const struct it_bus_f2fs *m)
{
	char dn[48];

	row(x, "%u,%s,", x->info->machine, kind);
	it_ob_csv_str(&x->ob, it_export_dev_name(x->info, m->dev, dn, sizeof(dn)));
	row(x, ",%u:%u,%" PRIu64 ",", m->dev >> 20, m->dev & 0xfffff, m->start_ns);
	if (m->end_ns >= m->start_ns && m->end_ns)
		it_ob_u64(&x->ob, m->end_ns - m->start_ns);
	row(x, ",%u,%u", m->pid, m->tid);
}

static void on_f2fs(const void *msg, void *ctx)
{
	const struct it_bus_f2fs *m = msg;
	struct rows *x = ctx;
	char reason[64];

	switch (m->kind) {
	case IT_F2FS_ROW_GC:
		fs_head(x, "gc", m);
		row(x, ",%d,%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		    ",%" PRIu64 ",,,,,,,,\n", m->foreground, m->ret, m->segments_freed,
		    m->sections_freed, m->free_before, m->free_after, m->data_blocks, m->node_blocks);
		x->n++;
		/* what it moved: a row per file and zone pair, after the round's */
		for (uint32_t k = 0; k < m->nmoved; k++) {
			const struct it_f2fs_moved *v = &m->moved[k];

			fs_head(x, "gc_move", m);
			row(x, ",,,,,,,,,,");
			if (v->path)
				it_ob_csv_str(&x->ob, v->path);
			else
				row(x, "inode %" PRIu64, v->ino);
			row(x, ",%" PRIu64, v->bytes);
			zone_field(&x->ob, v->from_zone);
			zone_field(&x->ob, v->to_zone);
			row(x, ",,,\n");
			x->n++;
		}
		break;
	case IT_F2FS_ROW_CHECKPOINT:
		fs_head(x, "checkpoint", m);
		it_f2fs_reason_text(m->reason, reason, sizeof(reason));
		row(x, ",,,,,,,,,%s,,,,,,,\n", reason);
		x->n++;
		break;
	case IT_F2FS_ROW_BG_GC:
		fs_head(x, "background_gc", m);
		row(x, ",,,,,,,,,,,,,,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", m->wait_ms, m->prefree,
		    m->free_segments);
		x->n++;
		break;
	}
}

static void *fs_open(FILE *out, const struct it_pass_info *info)
{
	return rows_open(out, info, fs_header, IT_BUS_F2FS, on_f2fs);
}

const struct it_exporter it_export_csv_fs = {
	.name = "csv",
	.kind = "fs",
	.analysis = true,
	.what = "F2FS's events (record --f2fs) as CSV rows, in time order: every GC round\n"
		"(kind gc: its duration, what it freed, blocks written) followed by a gc_move\n"
		"row per file and zone pair of the data it moved; every checkpoint (its\n"
		"duration, reason); every background GC wake-up (columns: doc/export.md).",
	.none = "F2FS events (recorded without --f2fs, or not on F2FS)",
	.open = fs_open,
	.next_machine = rows_next_machine,
	.finish = rows_finish,
	.free = rows_free,
};
