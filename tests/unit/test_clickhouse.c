// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The ClickHouse exporter (src/export/clickhouse.c) against a fake server
 * (the POST it is given): it creates the tables, checks their columns,
 * refuses a recording the server has, and its RowBinary rows decode, by
 * the column types of its own CREATE TABLE, into the trails' values.
 * doc/clickhouse.md holds the statements the exporter runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "synth.h"
#include "analyze/layer.h"
#include "export/clickhouse.h"
#include "export/exporter.h"
#include "layers/fs/f2fs.h"
#include "layers/uprobe/uprobe.h"

extern const struct it_exporter it_export_clickhouse;

struct fake {
	char cols[IT_CH_TABLES][2048];   /* "name Type,name Type" from its CREATE */
	unsigned char *rows[IT_CH_TABLES]; /* every INSERT's body, appended */
	size_t len[IT_CH_TABLES];
	const char *count_answer;        /* to the recording's SELECT count() */
	unsigned creates, inserts;
};

static int table_of(const char *s)
{
	for (unsigned t = 0; t < IT_CH_TABLES; t++) {
		char name[64];
		snprintf(name, sizeof(name), "db.%s ", it_clickhouse_table(t));
		if (strstr(s, name) == s)
			return (int)t;
	}
	return -1;
}

static int fake_post(void *conn, const char *query, const void *body, size_t len, char *reply,
		     size_t replylen)
{
	struct fake *f = conn;
	const char *q = query ? query : body;
	const char *p;
	int t;

	reply[0] = 0;
	if (!strncmp(q, "CREATE TABLE IF NOT EXISTS ", 27) && (t = table_of(q + 27)) >= 0) {
		/* "    name Type,\n" lines up to ")" */
		size_t off = 0;
		f->creates++;
		for (p = strchr(q, '\n') + 1; !strncmp(p, "    ", 4); p = strchr(p, '\n') + 1) {
			const char *end = strchr(p, '\n');
			size_t n = (size_t)(end - p - 4);
			if (p[4 + n - 1] == ',')
				n--;
			off += (size_t)snprintf(f->cols[t] + off, sizeof(f->cols[t]) - off, "%s%.*s",
						off ? "," : "", (int)n, p + 4);
		}
	} else if ((p = strstr(q, "table = '"))) {
		for (t = 0; t < IT_CH_TABLES; t++)
			if (!strncmp(p + 9, it_clickhouse_table(t), strlen(it_clickhouse_table(t))) &&
			    p[9 + strlen(it_clickhouse_table(t))] == '\'')
				snprintf(reply, replylen, "%s", f->cols[t]);
	} else if (strstr(q, "SELECT count() FROM db.recordings")) {
		snprintf(reply, replylen, "%s", f->count_answer);
	} else if (!strncmp(q, "INSERT INTO ", 12) && (t = table_of(q + 12)) >= 0) {
		f->inserts++;
		f->rows[t] = realloc(f->rows[t], f->len[t] + len);
		memcpy(f->rows[t] + f->len[t], body, len);
		f->len[t] += len;
	} else if (strncmp(q, "CREATE DATABASE IF NOT EXISTS db", 32)) {
		snprintf(reply, replylen, "Code: 62, e.displayText() = DB::Exception: Syntax error");
		return -1;
	}
	return 0;
}

/* The value of column name in each row of table t, as a signed 64-bit
 * integer (numbers), or into strs (strings; may be NULL); returns the rows
 * decoded, -1 on a bad encoding. */
static long decode_any(const struct fake *f, unsigned t, const char *name, int64_t *out,
		       char (*strs)[64], size_t max)
{
	char types[64][16], names[64][32];
	unsigned ncol = 0;
	const char *p = f->cols[t];

	while (*p && ncol < 64) {
		if (sscanf(p, "%31s %15[^,]", names[ncol], types[ncol]) != 2)
			return -1;
		ncol++;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	size_t off = 0;
	long rows = 0;
	while (off < f->len[t] && (size_t)rows < max) {
		for (unsigned c = 0; c < ncol; c++) {
			const unsigned char *v = f->rows[t] + off;
			size_t w = 0;
			int64_t val = 0;
			if (!strcmp(types[c], "String")) {
				uint64_t n = 0;
				unsigned k = 0, sh = 0;
				do
					n |= (uint64_t)(v[k] & 0x7f) << sh, sh += 7;
				while (v[k++] & 0x80);
				w = k + n;
				if (strs && !strcmp(names[c], name))
					snprintf(strs[rows], 64, "%.*s", (int)(n < 63 ? n : 63), v + k);
			} else {
				w = strstr(types[c], "64") ? 8 : strstr(types[c], "32") || !strcmp(types[c], "DateTime") ? 4 :
				    strstr(types[c], "16") || !strcmp(types[c], "Date") ? 2 : 1;
				memcpy(&val, v, w); /* little-endian */
				if (types[c][0] == 'I' && w < 8 && (val >> (8 * w - 1)) & 1)
					val -= (int64_t)1 << (8 * w); /* sign */
			}
			if (off + w > f->len[t])
				return -1;
			if (out && !strcmp(names[c], name))
				out[rows] = val;
			off += w;
		}
		rows++;
	}
	return rows;
}

static long decode(const struct fake *f, unsigned t, const char *name, int64_t *out, size_t max)
{
	return decode_any(f, t, name, out, NULL, max);
}

static const struct it_host_rec host = {
	.hostname = "h1", .kernel = "6.1", .boot_id = "b00t", .clock = "monotonic", .ncpus = 2,
	.start_realtime_ns = 1700000000ull * 1000000000ull, .start_monotonic_ns = 1000,
};

/* Runs the exporter over trails tr (published as the block layer does). */
static int64_t export_trails(struct fake *f, const struct trails *tr, const struct it_analyzer *a,
			     const char **err)
{
	struct it_bus bus = { 0 };
	struct it_pass_info info = { .host = &host, .bus = &bus };
	struct it_export_url u = { .url = "http://fake", .database = "db", .post = fake_post, .conn = f };
	const struct it_exporter *x = &it_export_clickhouse;
	void *self = x->open_url(&u, &info);
	int64_t rows = -1;

	*err = NULL;
	if (!self)
		return -1;
	if ((*err = x->error(self)))
		goto out;
	for (size_t i = 0; i < tr->n; i++) {
		struct it_bus_trail m = { .t = &tr->t[i], .a = a };
		it_bus_publish(&bus, IT_BUS_TRAIL_DONE, &m);
	}
	rows = x->finish(self);
	*err = x->error(self);
out:
	if (*err) { /* kept past free */
		static char copy[600];
		snprintf(copy, sizeof(copy), "%s", *err);
		*err = copy;
	}
	x->free(self);
	return rows;
}

static struct it_analyzer *three_reads(struct trails *tr)
{
	struct it_event evs[12];
	size_t n = 0;

	for (uint64_t i = 0; i < 3; i++) {
		uint64_t t0 = 5000 + 100000 * i;
		evs[n++] = Q(t0, 0xb0 + i, DEV_A, 8 * i, K4, IT_OP_READ);
		evs[n++] = I(t0 + 50, 0x70 + i, 0xb0 + i, DEV_A, 8 * i, K4, IT_OP_READ);
		evs[n++] = D(t0 + 200, 0x70 + i, 0xb0 + i, DEV_A, 8 * i, K4, IT_OP_READ);
		evs[n++] = C(t0 + 1000 * (i + 1), 0x70 + i, DEV_A, K4);
	}
	return run(evs, n, tr);
}

TEST(clickhouse_rows_decode_to_the_trails)
{
	struct fake f = { .count_answer = "0" };
	struct trails tr;
	struct it_analyzer *a = three_reads(&tr);
	const char *err;
	int64_t q2c[8], bytes[8], start[8], d2c[8];

	ASSERT_EQ(export_trails(&f, &tr, a, &err), 3, "rows sent");
	ASSERT_TRUE(err == NULL, "no error");
	ASSERT_EQ(f.creates, IT_CH_TABLES, "a CREATE per table");
	ASSERT_EQ(f.inserts, 2, "ios and the recording (no calls, no NVMe)");
	ASSERT_EQ(decode(&f, IT_CH_IOS, "q2c_ns", q2c, 8), 3, "three rows");
	decode(&f, IT_CH_IOS, "bytes", bytes, 8);
	decode(&f, IT_CH_IOS, "start_ns", start, 8);
	decode(&f, IT_CH_IOS, "d2c_ns", d2c, 8);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(q2c[i], 1000 * (i + 1), "q2c_ns is the trail's Q2C");
		ASSERT_EQ(d2c[i], 1000 * (i + 1) - 200, "d2c_ns");
		ASSERT_EQ(bytes[i], K4, "bytes");
		ASSERT_EQ(start[i], 4000 + 100000 * i, "start_ns since the recording's start");
	}
	int64_t q2d[8];
	decode(&f, IT_CH_IOS, "q2d_ns", q2d, 8);
	ASSERT_EQ(q2d[0], -1, "a stage the trail lacks is -1");
	int64_t ios[2];
	ASSERT_EQ(decode(&f, IT_CH_RECORDINGS, "ios", ios, 2), 1, "one recording row");
	ASSERT_EQ(ios[0], 3, "its ios");
	for (unsigned t = 0; t < IT_CH_TABLES; t++)
		free(f.rows[t]);
	it_analyzer_free(a);
}

TEST(clickhouse_refuses_a_recording_it_has)
{
	struct fake f = { .count_answer = "3" };
	struct trails tr;
	struct it_analyzer *a = three_reads(&tr);
	const char *err;

	ASSERT_EQ(export_trails(&f, &tr, a, &err), -1, "refused");
	ASSERT_TRUE(err && strstr(err, "is in database db already"), "says why");
	ASSERT_EQ(f.inserts, 0, "nothing inserted");
	it_analyzer_free(a);
}

TEST(clickhouse_schema_in_the_doc)
{
	FILE *d = fopen("doc/clickhouse.md", "r");
	char doc[65536], stmt[4096];
	size_t n;

	if (!d)
		SKIP("doc/clickhouse.md not found: run from the repository's root");
	n = fread(doc, 1, sizeof(doc) - 1, d);
	fclose(d);
	doc[n] = 0;
	for (unsigned t = 0; t < IT_CH_TABLES; t++) {
		it_clickhouse_create(stmt, sizeof(stmt), t, "iotrail", NULL);
		ASSERT_TRUE(strstr(doc, stmt) != NULL, it_clickhouse_table(t));
		it_clickhouse_create(stmt, sizeof(stmt), t, "iotrail", "iotrail_cluster");
		ASSERT_TRUE(strstr(doc, stmt) != NULL, "its Distributed table");
	}
	ASSERT_TRUE(it_clickhouse_name_ok("iotrail_2"), "a plain name");
	ASSERT_TRUE(!it_clickhouse_name_ok("a;DROP"), "not a plain name");
	ASSERT_TRUE(!it_clickhouse_name_ok("9x"), "not starting with a digit");
}

/* The uprobe and fs analysis layers publish on the bus the exporter
 * listens to: their hits, spans, GC rounds (and files moved),
 * checkpoints and wake-ups become rows of probes and f2fs_events. */
TEST(clickhouse_probe_and_f2fs_rows)
{
	struct fake f = { .count_answer = "0" };
	struct it_bus bus = { 0 };
	struct it_layer_opts opts = { 0 };
	struct it_pass_info info = { .host = &host, .bus = &bus, .opts = &opts,
				     .layers = (1u << IT_LAYER_UPROBE) | (1u << IT_LAYER_FS) };
	struct it_export_url u = { .url = "http://fake", .database = "db", .post = fake_post, .conn = &f };
	const struct it_exporter *x = &it_export_clickhouse;
	void *self = x->open_url(&u, &info);
	void *up = it_layer_uprobe.new(&info), *fs = it_layer_fs.new(&info);
	struct it_uprobe_def defs[3] = { { .probe = 0, .kind = IT_UPROBE_USDT, .label = "q__start" },
					 { .probe = 1, .kind = IT_UPROBE_USDT, .label = "q__done" },
					 { .probe = 2, .kind = IT_UPROBE_FUNC, .label = "tick" } };
	struct it_uprobe_hit hits[] = {
		{ .ts_ns = 2000, .pid = 7, .tid = 8, .probe = 0, .nargs = 2, .args = { 5, (uint64_t)-3 } },
		{ .ts_ns = 2500, .pid = 7, .tid = 8, .probe = 2 },
		{ .ts_ns = 9000, .pid = 7, .tid = 8, .probe = 1, .nargs = 1, .args = { 6 } },
	};
	/* a GC round that moved two blocks of inode 12 (no snapshot: zones
	 * unknown), a checkpoint, a background GC wake-up */
	uint32_t dev = 253u << 20 | 1;
	struct it_f2fs_event ev[] = {
		{ .ts_ns = 3000, .dev = dev, .kind = IT_F2FS_GC_BEGIN, .pid = 9, .tid = 9, .a = 1, .b = 40 },
		{ .ts_ns = 3100, .dev = dev, .kind = IT_F2FS_GC_WRITE, .pid = 9, .tid = 9, .a = 12,
		  .c = 100 | 200ull << 32 },
		{ .ts_ns = 3200, .dev = dev, .kind = IT_F2FS_GC_WRITE, .pid = 9, .tid = 9, .a = 12,
		  .c = 101 | 201ull << 32 },
		{ .ts_ns = 4000, .dev = dev, .kind = IT_F2FS_GC_END, .pid = 9, .tid = 9, .b = 2, .c = 1, .d = 41 },
		{ .ts_ns = 5000, .dev = dev, .kind = IT_F2FS_CHECKPOINT, .pid = 9, .tid = 10, .a = 4 },
		{ .ts_ns = 5600, .dev = dev, .kind = IT_F2FS_CHECKPOINT, .pid = 9, .tid = 10, .a = 4 },
		{ .ts_ns = 6000, .dev = dev, .kind = IT_F2FS_BG_GC, .pid = 3, .tid = 3, .a = 30000 },
	};
	struct it_span span = { 0 };
	int64_t start[8], dur[8], nargs[8], arg0[8], arg1[8], bytes[8], zone[8];
	char kind[8][64] = { { 0 } }, label[8][64] = { { 0 } }, file[8][64] = { { 0 } };

	memcpy(&ev[4].c, "start block_ops", 16);
	memcpy(&ev[5].c, "finish checkpoint", 16); /* the phase's first 16 bytes, in c and d */
	ASSERT_TRUE(self && up && fs && !x->error(self), "the exporter and the layers");
	ASSERT_EQ(it_layer_uprobe.feed(up, IT_CHUNK_UPROBE_DEFS, defs, sizeof(defs), 3), 0, "defs");
	ASSERT_EQ(it_layer_uprobe.feed(up, IT_CHUNK_UPROBE_HITS, hits, sizeof(hits), 3), 0, "hits");
	ASSERT_EQ(it_layer_fs.feed(fs, IT_CHUNK_FS_F2FS, ev, sizeof(ev), 7), 0, "F2FS events");
	ASSERT_EQ(it_layer_uprobe.finish(up, &span), 0, "uprobe finish");
	ASSERT_EQ(it_layer_fs.finish(fs, &span), 0, "fs finish (publishes)");
	ASSERT_EQ(x->finish(self), 4 + 4, "rows: 3 hits and a span, gc + gc_move + checkpoint + wake-up");

	ASSERT_EQ(decode_any(&f, IT_CH_PROBES, "kind", NULL, kind, 8), 4, "four probe rows");
	decode_any(&f, IT_CH_PROBES, "label", NULL, label, 8);
	decode(&f, IT_CH_PROBES, "start_ns", start, 8);
	decode(&f, IT_CH_PROBES, "duration_ns", dur, 8);
	decode(&f, IT_CH_PROBES, "nargs", nargs, 8);
	decode(&f, IT_CH_PROBES, "arg0", arg0, 8);
	decode(&f, IT_CH_PROBES, "arg1", arg1, 8);
	/* in time order; the span right after the hit that closed it */
	ASSERT_TRUE(!strcmp(kind[0], "begin") && !strcmp(label[0], "q__start"), "q__start: begin");
	ASSERT_EQ(nargs[0], 2, "its arguments");
	ASSERT_EQ(arg0[0], 5, "arg0");
	ASSERT_EQ(arg1[0], -3, "arg1, signed");
	ASSERT_TRUE(!strcmp(kind[1], "event") && !strcmp(label[1], "tick"), "tick: an event");
	ASSERT_EQ(nargs[1], 0, "a uprobe has no arguments");
	ASSERT_TRUE(!strcmp(kind[2], "end") && !strcmp(label[2], "q__done"), "q__done: end");
	ASSERT_TRUE(!strcmp(kind[3], "span") && !strcmp(label[3], "q"), "then the span q");
	ASSERT_EQ(start[3], 2000 - 1000, "from its start, since the recording's start");
	ASSERT_EQ(dur[3], 7000, "to its done");
	ASSERT_EQ(arg0[3], 5, "with its start's arguments");
	ASSERT_EQ(dur[0], 0, "a hit has no duration");

	ASSERT_EQ(decode_any(&f, IT_CH_F2FS, "kind", NULL, kind, 8), 4, "four F2FS rows");
	decode_any(&f, IT_CH_F2FS, "file", NULL, file, 8);
	decode(&f, IT_CH_F2FS, "duration_ns", dur, 8);
	decode(&f, IT_CH_F2FS, "moved_bytes", bytes, 8);
	decode(&f, IT_CH_F2FS, "from_zone", zone, 8);
	decode(&f, IT_CH_F2FS, "start_ns", start, 8);
	ASSERT_TRUE(!strcmp(kind[0], "gc") && dur[0] == 1000, "the round, 1 us");
	ASSERT_TRUE(!strcmp(kind[1], "gc_move") && !strcmp(file[1], "inode 12"), "what it moved");
	ASSERT_EQ(bytes[1], 2 * 4096, "two blocks");
	ASSERT_EQ(zone[1], -1, "no zone table: not known");
	ASSERT_EQ(start[1], 3000 - 1000, "at its round's start");
	ASSERT_TRUE(!strcmp(kind[2], "checkpoint") && dur[2] == 600, "the checkpoint, 600 ns");
	ASSERT_TRUE(!strcmp(kind[3], "background_gc") && dur[3] == 0, "the wake-up");
	int64_t recs[2];
	decode(&f, IT_CH_RECORDINGS, "probes", recs, 2);
	ASSERT_EQ(recs[0], 4, "the recording counts the probes rows");
	decode(&f, IT_CH_RECORDINGS, "f2fs_events", recs, 2);
	ASSERT_EQ(recs[0], 4, "and the F2FS rows");
	it_layer_uprobe.free(up);
	it_layer_fs.free(fs);
	x->free(self);
	for (unsigned t = 0; t < IT_CH_TABLES; t++)
		free(f.rows[t]);
}
