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
 * integer (numbers only); returns the rows decoded, -1 on a bad encoding. */
static long decode(const struct fake *f, unsigned t, const char *name, int64_t *out, size_t max)
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
			} else {
				w = strstr(types[c], "64") ? 8 : strstr(types[c], "32") || !strcmp(types[c], "DateTime") ? 4 :
				    strstr(types[c], "16") || !strcmp(types[c], "Date") ? 2 : 1;
				memcpy(&val, v, w); /* little-endian */
				if (types[c][0] == 'I' && w < 8 && (val >> (8 * w - 1)) & 1)
					val -= (int64_t)1 << (8 * w); /* sign */
			}
			if (off + w > f->len[t])
				return -1;
			if (!strcmp(names[c], name))
				out[rows] = val;
			off += w;
		}
		rows++;
	}
	return rows;
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
