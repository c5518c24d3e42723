/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `record --extents`' snapshots on made-up sets: written as FS_EXTENTS
 * records and read back unchanged (a zone table and a file cut into
 * parts), damaged records counted and skipped, and the comparison of two
 * snapshots (appended, grown, moved, truncated, created, deleted,
 * unchanged and delayed-allocation files; zones and regions). */
#include <stdlib.h>
#include <string.h>

#include "analyze/json_writer.h"
#include "analyze/layer.h"
#include "layers/fs/f2fs.h"
#include "extents/snapshot.h"
#include "harness.h"

#define K 1024ull
#define M (1024ull * 1024)

struct payload {
	unsigned char *p;
	size_t len, cap;
	uint32_t count;
};

/* as the trace writer stores variable records: each padded to 8 bytes */
static int to_payload(const void *rec, size_t len, void *ctx)
{
	struct payload *b = ctx;
	size_t padded = (len + 7) & ~(size_t)7;
	if (b->len + padded > b->cap) {
		b->cap = (b->len + padded) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, rec, len);
	memset(b->p + b->len + len, 0, padded - len);
	b->len += padded;
	b->count++;
	return 0;
}

static void add(struct it_ext_set *s, const char *path, uint64_t size, uint32_t dev,
		const uint64_t (*v)[3], uint32_t n)
{
	struct it_extent *e = calloc(n ? n : 1, sizeof(*e));
	for (uint32_t i = 0; i < n; i++) /* physical 0: delayed allocation, no block */
		e[i] = (struct it_extent){ .logical = v[i][0], .physical = v[i][1],
					   .length = v[i][2], .placed = v[i][1] != 0 };
	it_ext_add_file(s, path, size, dev, 4096, e, n);
}

static void four_zones(struct it_ext_set *s, uint32_t dev)
{
	struct it_ext_zone *z = calloc(4, sizeof(*z));
	for (uint32_t i = 0; i < 4; i++)
		z[i] = (struct it_ext_zone){ .number = i, .start = i * M, .len = M, .capacity = M,
					     .wp = i * M + 4 * K, .type = 2, .cond = 2 };
	it_ext_dev_set_zones(it_ext_dev_get(s, dev), z, 4);
	snprintf(it_ext_dev_get(s, dev)->name, 64, "nullb0");
}

static void write_both(struct it_ext_set *a, struct it_ext_set *b, struct payload *p)
{
	ASSERT_EQ(it_fs_snapshot_write(a, IT_FS_START, 100, 5, to_payload, p), 0, "start written");
	ASSERT_EQ(it_fs_snapshot_write(b, IT_FS_END, 2000000100, 7, to_payload, p), 0, "end written");
}

TEST(extents_snapshot_round_trip)
{
	struct it_ext_set s = { 0 };
	struct it_fs_snapshots ss = { 0 };
	struct payload p = { 0 };
	uint32_t n = 2500; /* three records of at most 1024 extents */
	uint64_t (*v)[3] = calloc(n, sizeof(*v));

	four_zones(&s, 7);
	for (uint32_t i = 0; i < n; i++) {
		v[i][0] = i * 8 * K;
		v[i][1] = 4 * K + i * 8 * K; /* 4K holes between them, none on block 0 */
		v[i][2] = 4 * K;
	}
	add(&s, "/d/many", n * 8 * K, 7, (const uint64_t (*)[3])v, n);
	static const uint64_t small[][3] = { { 0, M + 4 * K, 8 * K } };
	add(&s, "/d/small", 8 * K, 7, small, 1);
	s.files[1].ext[0].f2fs_seg = IT_EXT_F2FS_COLD_DATA;
	s.dirs = 1;
	s.vanished = 2;
	ASSERT_EQ(it_fs_snapshot_write(&s, IT_FS_END, 42, 3, to_payload, &p), 0, "written");
	/* 1 device, 3 + 1 file parts, 1 snapshot */
	ASSERT_EQ(p.count, 6, "records");
	ASSERT_EQ(it_fs_snapshots_feed(&ss, p.p, p.len, p.count), 0, "read back");
	ASSERT_EQ(ss.bad, 0, "no record skipped");
	ASSERT_TRUE(ss.have[IT_FS_END] && !ss.have[IT_FS_START], "the end snapshot only");
	ASSERT_U64_EQ(ss.snap[IT_FS_END].at_ns, 42, "its time");
	ASSERT_EQ(it_fs_snapshots_finish(&ss), 0, "finish");
	const struct it_ext_set *r = &ss.set[IT_FS_END];
	ASSERT_EQ(r->nfiles, 2, "files");
	ASSERT_EQ(r->files[0].next, n, "the big file's extents, all parts");
	ASSERT_U64_EQ(r->files[0].ext[n - 1].physical, v[n - 1][1], "its last extent");
	ASSERT_STREQ(r->files[1].path, "/d/small", "path");
	ASSERT_EQ(r->ndevs, 1, "devices");
	ASSERT_TRUE(r->devs[0].zoned, "zoned");
	ASSERT_EQ(r->devs[0].nzones, 4, "zones");
	ASSERT_U64_EQ(r->devs[0].zones[3].wp, 3 * M + 4 * K, "a zone's write pointer");
	ASSERT_STREQ(r->devs[0].name, "nullb0", "device name");
	ASSERT_EQ(r->files[1].ext[0].zone, 1, "small's extent in zone 1");
	ASSERT_EQ(r->files[1].ext[0].f2fs_seg, IT_EXT_F2FS_COLD_DATA, "its F2FS segment type");
	ASSERT_STREQ(it_ext_f2fs_seg_name(r->files[1].ext[0].f2fs_seg), "cold_data", "named");
	ASSERT_EQ(r->files[0].ext[0].f2fs_seg, 0, "unknown elsewhere");
	ASSERT_U64_EQ(r->vanished, 2, "the walk's counts");

	/* damaged: a record's length beyond the payload, an unknown kind */
	struct it_fs_snapshots bad = { 0 };
	struct it_fs_rec_head h = { 99, 0, 0, 8 };
	struct payload q = { 0 };
	to_payload(&h, sizeof(h), &q);
	to_payload(p.p, 200, &q); /* the device record, whole */
	((struct it_fs_rec_head *)(q.p + 8))->len = 4096;
	ASSERT_EQ(it_fs_snapshots_feed(&bad, q.p, q.len, q.count), 0, "damaged: no failure");
	ASSERT_EQ(bad.bad, 2, "damaged: both records counted");
	it_fs_snapshots_free(&bad);
	free(q.p);
	free(p.p);
	free(v);
	it_fs_snapshots_free(&ss);
	it_ext_set_free(&s);
}

static const struct it_fs_file_delta *find(const struct it_fs_delta *d, const char *path)
{
	for (uint32_t i = 0; i < d->nfiles; i++)
		if (!strcmp(d->files[i].path, path))
			return &d->files[i];
	return NULL;
}

static uint64_t zone_bytes(const struct it_fs_file_delta *f, uint32_t zone)
{
	uint64_t n = 0;
	for (uint32_t i = 0; f && i < f->nzones; i++)
		if (f->zones[i].zone == zone)
			n += f->zones[i].bytes;
	return n;
}

TEST(extents_snapshot_delta_zones)
{
	struct it_ext_set a = { 0 }, b = { 0 };
	struct it_fs_snapshots ss = { 0 };
	struct it_fs_delta d;
	struct payload p = { 0 };

	four_zones(&a, 7);
	four_zones(&b, 7);
	/* appended: a second extent in zone 2 */
	static const uint64_t app0[][3] = { { 0, 4 * K, 64 * K } };
	static const uint64_t app1[][3] = { { 0, 4 * K, 64 * K }, { 64 * K, 2 * M, 32 * K } };
	add(&a, "app", 64 * K, 7, app0, 1);
	add(&b, "app", 96 * K, 7, app1, 2);
	/* grown in place: its one extent longer */
	static const uint64_t grow0[][3] = { { 0, 128 * K, 8 * K } };
	static const uint64_t grow1[][3] = { { 0, 128 * K, 16 * K } };
	add(&a, "grow", 8 * K, 7, grow0, 1);
	add(&b, "grow", 16 * K, 7, grow1, 1);
	/* moved (a GC): the same data from zone 1 to zone 3, its tail new */
	static const uint64_t gc0[][3] = { { 0, M, 64 * K } };
	static const uint64_t gc1[][3] = { { 0, 3 * M, 64 * K }, { 64 * K, 3 * M + 64 * K, 4 * K } };
	add(&a, "gc", 64 * K, 7, gc0, 1);
	add(&b, "gc", 68 * K, 7, gc1, 2);
	/* truncated: its second extent gone */
	static const uint64_t tr0[][3] = { { 0, 256 * K, 16 * K }, { 16 * K, 512 * K, 16 * K } };
	add(&a, "trunc", 32 * K, 7, tr0, 2);
	add(&b, "trunc", 16 * K, 7, tr0, 1);
	/* created, deleted, unchanged */
	static const uint64_t cr[][3] = { { 0, 3 * M + 512 * K, 4 * K } };
	static const uint64_t del[][3] = { { 0, 768 * K, 12 * K } };
	static const uint64_t same[][3] = { { 0, 900 * K, 4 * K } };
	add(&b, "created", 4 * K, 7, cr, 1);
	add(&a, "deleted", 12 * K, 7, del, 1);
	add(&a, "same", 4 * K, 7, same, 1);
	add(&b, "same", 4 * K, 7, same, 1);
	/* delayed allocation: no block at the start, one at the end; and a
	 * second extent still without one at the end */
	static const uint64_t da0[][3] = { { 0, 0, 4 * K } };
	static const uint64_t da1[][3] = { { 0, 2 * M + 128 * K, 4 * K }, { 4 * K, 0, 8 * K } };
	add(&a, "delalloc", 4 * K, 7, da0, 1);
	add(&b, "delalloc", 12 * K, 7, da1, 2);

	write_both(&a, &b, &p);
	ASSERT_EQ(it_fs_snapshots_feed(&ss, p.p, p.len, p.count), 0, "read back");
	ASSERT_EQ(it_fs_snapshots_finish(&ss), 0, "finish");
	ASSERT_EQ(it_fs_delta_compute(&ss, &d), 0, "compare");

	const struct it_fs_file_delta *f = find(&d, "app");
	ASSERT_NOT_NULL(f, "app");
	ASSERT_EQ(f->state, IT_FS_CHANGED, "app: changed");
	ASSERT_U64_EQ(f->new_bytes, 32 * K, "app: the appended 32K are new");
	ASSERT_U64_EQ(f->moved_bytes + f->freed_bytes, 0, "app: nothing moved or freed");
	ASSERT_EQ(f->extents_added, 1, "app: one extent added");
	ASSERT_EQ(f->extents_removed, 0, "app: none removed");
	ASSERT_U64_EQ(zone_bytes(f, 2), 32 * K, "app: in zone 2");
	ASSERT_EQ(f->nzones, 1, "app: one zone");

	f = find(&d, "grow");
	ASSERT_U64_EQ(f->new_bytes, 8 * K, "grow: 8K new");
	ASSERT_EQ(f->extents_added, 1, "grow: the longer extent is new");
	ASSERT_EQ(f->extents_removed, 1, "grow: the shorter one gone");
	ASSERT_EQ(f->extents_moved, 0, "grow: no extent moved");
	ASSERT_U64_EQ(zone_bytes(f, 0), 8 * K, "grow: in zone 0");

	f = find(&d, "gc");
	ASSERT_U64_EQ(f->moved_bytes, 64 * K, "gc: 64K moved");
	ASSERT_U64_EQ(f->new_bytes, 4 * K, "gc: 4K new");
	ASSERT_U64_EQ(f->freed_bytes, 0, "gc: nothing freed (its offsets still mapped)");
	ASSERT_EQ(f->extents_moved, 1, "gc: one extent moved");
	ASSERT_U64_EQ(zone_bytes(f, 3), 68 * K, "gc: moved and new data in zone 3");

	f = find(&d, "trunc");
	ASSERT_U64_EQ(f->freed_bytes, 16 * K, "trunc: 16K freed");
	ASSERT_EQ(f->extents_removed, 1, "trunc: one extent removed");
	ASSERT_EQ(f->nzones, 0, "trunc: wrote nowhere");

	f = find(&d, "created");
	ASSERT_EQ(f->state, IT_FS_CREATED, "created");
	ASSERT_TRUE(f->start < 0 && f->end >= 0, "created: at the end only");
	ASSERT_U64_EQ(zone_bytes(f, 3), 4 * K, "created: 4K in zone 3");
	f = find(&d, "deleted");
	ASSERT_EQ(f->state, IT_FS_DELETED, "deleted");
	ASSERT_U64_EQ(f->freed_bytes, 12 * K, "deleted: its 12K freed");
	f = find(&d, "same");
	ASSERT_EQ(f->state, IT_FS_SAME, "same");
	ASSERT_EQ(f->extents_added + f->extents_removed, 0, "same: no extent changed");

	f = find(&d, "delalloc");
	ASSERT_U64_EQ(f->new_bytes, 4 * K, "delalloc: its first block is new");
	ASSERT_EQ(f->unplaced_end, 1, "delalloc: one extent still without a block");
	ASSERT_U64_EQ(f->unplaced_bytes, 8 * K, "delalloc: its bytes");
	ASSERT_U64_EQ(zone_bytes(f, 2), 4 * K, "delalloc: in zone 2");

	ASSERT_EQ(d.nfiles, 8, "files");
	ASSERT_EQ(d.changed, 5, "changed");
	ASSERT_EQ(d.created + d.deleted + d.same, 3, "created, deleted, same");
	ASSERT_U64_EQ(d.new_bytes, 32 * K + 8 * K + 4 * K + 4 * K + 4 * K, "new in all");
	ASSERT_U64_EQ(d.moved_bytes, 64 * K, "moved in all");
	ASSERT_U64_EQ(d.freed_bytes, 16 * K + 12 * K, "freed in all");
	it_fs_delta_free(&d);
	it_fs_snapshots_free(&ss);
	it_ext_set_free(&a);
	it_ext_set_free(&b);
	free(p.p);
}

TEST(extents_snapshot_delta_regions)
{
	struct it_ext_set a = { .region = M }, b = { .region = M };
	struct it_fs_snapshots ss = { 0 };
	struct it_fs_delta d;
	struct payload p = { 0 };

	/* an unzoned device, 1M regions: a new extent across regions 4 and 5 */
	static const uint64_t x[][3] = { { 0, 5 * M - 4 * K, 8 * K } };
	add(&b, "x", 8 * K, 8, x, 1);
	it_ext_dev_get(&a, 8);
	it_ext_dev_get(&b, 8);
	write_both(&a, &b, &p);
	ASSERT_EQ(it_fs_snapshots_feed(&ss, p.p, p.len, p.count), 0, "read back");
	ASSERT_EQ(it_fs_snapshots_finish(&ss), 0, "finish");
	ASSERT_U64_EQ(ss.set[IT_FS_END].devs[0].region, M, "the recorded region size");
	ASSERT_EQ(it_fs_delta_compute(&ss, &d), 0, "compare");
	const struct it_fs_file_delta *f = find(&d, "x");
	ASSERT_NOT_NULL(f, "x");
	ASSERT_EQ(f->nzones, 2, "x: two regions");
	ASSERT_U64_EQ(zone_bytes(f, 4), 4 * K, "x: 4K in region 4");
	ASSERT_U64_EQ(zone_bytes(f, 5), 4 * K, "x: 4K in region 5");
	ASSERT_U64_EQ(f->zones[1].zone_start + f->zones[0].zone_start, 9 * M, "regions' starts");
	it_fs_delta_free(&d);
	it_fs_snapshots_free(&ss);
	it_ext_set_free(&a);
	it_ext_set_free(&b);
	free(p.p);
}

/* the fs layer's report over payload p (FS_EXTENTS) and the F2FS events
 * ev (FS_F2FS): text, JSON or --log into a string (freed by the caller) */
enum fs_out { FS_TEXT, FS_JSON, FS_LOG };
static char *fs_report(const struct payload *p, const struct it_f2fs_event *ev, uint32_t nev,
		       enum fs_out out)
{
	const struct it_analysis_layer *l = &it_layer_fs;
	struct it_span span = { 0 };
	struct it_report_ctx ctx = { 0 };
	char *buf = NULL;
	size_t len = 0;
	void *self = l->new(NULL);
	FILE *f = open_memstream(&buf, &len);

	struct it_json j;
	if (!self || !f)
		return NULL;
	if (p)
		l->feed(self, IT_CHUNK_FS_EXTENTS, p->p, p->len, p->count);
	if (nev)
		l->feed(self, IT_CHUNK_FS_F2FS, ev, nev * sizeof(*ev), nev);
	l->finish(self, &span);
	if (out == FS_TEXT)
		l->report_text(self, f, &ctx);
	else if (out == FS_LOG)
		l->report_log(self, f, &ctx);
	else {
		it_json_init(&j, f, false);
		it_json_object_start(&j);
		l->report_json(self, &j, &ctx);
		it_json_object_end(&j);
	}
	fclose(f);
	l->free(self);
	return buf;
}

static size_t widest_line(const char *s)
{
	size_t w = 0;
	for (const char *e; *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, '\n');
		w = (size_t)(e - s) > w ? (size_t)(e - s) : w;
	}
	return w;
}

static void add_seg(struct it_ext_set *s, const char *path, uint32_t dev, const uint64_t (*v)[4],
		    uint32_t n)
{
	struct it_extent *e = calloc(n, sizeof(*e));
	uint64_t size = 0;
	for (uint32_t i = 0; i < n; i++) {
		e[i] = (struct it_extent){ .logical = v[i][0], .physical = v[i][1],
					   .length = v[i][2], .placed = true,
					   .f2fs_seg = (uint8_t)v[i][3] };
		size = v[i][0] + v[i][2];
	}
	it_ext_add_file(s, path, size, dev, 4096, e, n);
}

/* F2FS: per file the bytes by segment type at both ends (a GC moving warm
 * data into a cold segment, an append into a hot one), in the text report
 * on one line under the file; every line fits 100 columns (the one of a
 * file on every type: two lines at the left margin) */
TEST(extents_snapshot_f2fs_segments)
{
	struct it_ext_set a = { 0 }, b = { 0 };
	struct it_fs_snapshots ss = { 0 };
	struct it_fs_delta d;
	struct payload p = { 0 };

	four_zones(&a, 7);
	four_zones(&b, 7);
	static const uint64_t gc0[][4] = { { 0, M, 512 * K, IT_EXT_F2FS_WARM_DATA } };
	static const uint64_t gc1[][4] = { { 0, 3 * M, 512 * K, IT_EXT_F2FS_COLD_DATA } };
	add_seg(&a, "/f2fs/f2", 7, gc0, 1);
	add_seg(&b, "/f2fs/f2", 7, gc1, 1);
	static const uint64_t ap0[][4] = { { 0, 8 * K, 64 * K, IT_EXT_F2FS_WARM_DATA } };
	static const uint64_t ap1[][4] = { { 0, 8 * K, 64 * K, IT_EXT_F2FS_WARM_DATA },
					   { 64 * K, 2 * M, 4 * K, IT_EXT_F2FS_HOT_DATA } };
	add_seg(&a, "/f2fs/app", 7, ap0, 1);
	add_seg(&b, "/f2fs/app", 7, ap1, 2);
	uint64_t all[7][4];
	for (uint64_t i = 0; i < 7; i++) { /* every type, and one unknown */
		all[i][0] = i * 16 * K;
		all[i][1] = 2 * M + 512 * K + i * 16 * K;
		all[i][2] = (i + 1) * 1536; /* sizes with a decimal: the longest text */
		all[i][3] = (i + 1) % 7;
	}
	add_seg(&a, "/f2fs/every-type-of-segment", 7, (const uint64_t (*)[4])all, 7);
	all[0][1] += 256 * K; /* one extent moved: the file changed */
	add_seg(&b, "/f2fs/every-type-of-segment", 7, (const uint64_t (*)[4])all, 7);

	write_both(&a, &b, &p);
	ASSERT_EQ(it_fs_snapshots_feed(&ss, p.p, p.len, p.count), 0, "read back");
	ASSERT_EQ(it_fs_snapshots_finish(&ss), 0, "finish");
	ASSERT_EQ(it_fs_delta_compute(&ss, &d), 0, "compare");
	const struct it_fs_file_delta *f = find(&d, "/f2fs/f2");
	ASSERT_U64_EQ(f->seg_start[IT_EXT_F2FS_WARM_DATA], 512 * K, "f2: warm at the start");
	ASSERT_U64_EQ(f->seg_end[IT_EXT_F2FS_COLD_DATA], 512 * K, "f2: cold at the end");
	ASSERT_U64_EQ(f->seg_end[IT_EXT_F2FS_WARM_DATA], 0, "f2: no warm at the end");
	f = find(&d, "/f2fs/app");
	ASSERT_U64_EQ(f->seg_end[IT_EXT_F2FS_HOT_DATA], 4 * K, "app: its append hot");
	ASSERT_U64_EQ(f->seg_end[IT_EXT_F2FS_WARM_DATA], 64 * K, "app: the rest warm");

	char *text = fs_report(&p, NULL, 0, FS_TEXT);
	ASSERT_NOT_NULL(text, "text report");
	if (text) {
		ASSERT_NOT_NULL(strstr(text, "\n" "                                                 "
					     "segments warm 512K -> cold 512K\n"), "f2's line");
		ASSERT_NOT_NULL(strstr(text, " segments warm 64K -> hot 4K, warm 64K\n"), "app's");
		static const char every[] = "hot 1.5K, warm 3K, cold 4.5K, hot-node 6K, "
					    "warm-node 7.5K, cold-node 9K, unknown 10K";
		char want[256];
		snprintf(want, sizeof(want), "\n     segments %s\n           -> %s\n", every, every);
		ASSERT_NOT_NULL(strstr(text, want), "every type's, on two lines at the left margin");
		ASSERT_NOT_NULL(strstr(text, "segments: the F2FS segments"), "explained");
		ASSERT_LE(widest_line(text), 100, "every line fits 100 columns");
	}
	free(text);
	it_fs_delta_free(&d);
	it_fs_snapshots_free(&ss);
	it_ext_set_free(&a);
	it_ext_set_free(&b);
	free(p.p);
}

static struct it_f2fs_event f2ev(uint64_t ts, uint16_t kind, uint32_t tid, uint64_t a, uint64_t b,
				 uint64_t c, uint64_t d)
{
	return (struct it_f2fs_event){ .ts_ns = ts, .dev = 7, .kind = kind, .pid = tid, .tid = tid,
				       .a = a, .b = b, .c = c, .d = d };
}

static uint64_t text16(const char *s, int half)
{
	char b[16] = { 0 };
	uint64_t v;
	memcpy(b, s, strlen(s) < 16 ? strlen(s) : 16);
	memcpy(&v, b + 8 * half, 8);
	return v;
}

/* F2FS's events with the extents snapshots: a foreground GC round on
 * thread 7 writing f2's 128 data blocks from zone 1 to zone 3 (and two
 * node blocks), a page write of thread 9 outside any round (not the
 * GC's), a round without a victim (ret -61), a checkpoint's three phases,
 * a background GC wake-up and the page counters; events out of time
 * order (as per-CPU rings deliver them): the rounds, their durations,
 * the moved data by file and zone, the checkpoint's duration, in text,
 * JSON and the log */
TEST(fs_f2fs_events)
{
	struct it_ext_set a = { 0 }, b = { 0 };
	struct payload p = { 0 };
	struct it_f2fs_event ev[200];
	uint32_t n = 0;
	const uint64_t ms = 1000000;

	four_zones(&a, 7);
	four_zones(&b, 7);
	static const uint64_t f2a[][4] = { { 0, M, 512 * K, IT_EXT_F2FS_WARM_DATA } };
	static const uint64_t f2b[][4] = { { 0, 3 * M, 512 * K, IT_EXT_F2FS_COLD_DATA } };
	add_seg(&a, "/f2fs/f2", 7, f2a, 1);
	add_seg(&b, "/f2fs/f2", 7, f2b, 1);
	write_both(&a, &b, &p);

	ev[n++] = f2ev(40 * ms, IT_F2FS_CHECKPOINT, 9, 4, 0, text16("finish checkpoint", 0),
		       text16("finish checkpoint", 1));
	ev[n++] = f2ev(10 * ms, IT_F2FS_GC_BEGIN, 7, 1, 20, 300, 2);
	for (uint64_t i = 0; i < 128; i++)
		ev[n++] = f2ev(11 * ms + i, IT_F2FS_GC_WRITE, 7, 5, i,
			       (M / 4096 + i) | (3 * M / 4096 + i) << 32, 0 | 2 << 8);
	ev[n++] = f2ev(12 * ms, IT_F2FS_GC_WRITE, 7, 5, 0, 100 | 200ull << 32, 1 | 2 << 8);
	ev[n++] = f2ev(12 * ms + 1, IT_F2FS_GC_WRITE, 7, 5, 0, 101 | 201ull << 32, 1 | 2 << 8);
	ev[n++] = f2ev(12 * ms + 2, IT_F2FS_GC_WRITE, 9, 6, 0, 50 | 60ull << 32, 0 | 1 << 8);
	ev[n++] = f2ev(15 * ms, IT_F2FS_GC_END, 7, 0, 1, 1, 21);
	ev[n++] = f2ev(20 * ms, IT_F2FS_GC_BEGIN, 7, 1, 21, 302, 0);
	ev[n++] = f2ev(21 * ms, IT_F2FS_GC_END, 7, (uint64_t)-61, 0, 0, 21);
	ev[n++] = f2ev(30 * ms, IT_F2FS_CHECKPOINT, 9, 4, 0, text16("start block_ops", 0),
		       text16("start block_ops", 1));
	ev[n++] = f2ev(32 * ms, IT_F2FS_CHECKPOINT, 9, 4, 0, text16("finish block_ops", 0),
		       text16("finish block_ops", 1));
	ev[n++] = f2ev(33 * ms, IT_F2FS_BG_GC, 4, 30000, 0, 290, 0);
	ev[n++] = f2ev(0, IT_F2FS_PAGES, 0, 131, 0, 1, 0);  /* data warm */
	ev[n++] = f2ev(0, IT_F2FS_PAGES, 0, 128, 0, 2, 0);  /* data cold */
	ev[n++] = f2ev(0, IT_F2FS_PAGES, 0, 3, 2, 0, 0);    /* meta */

	char *text = fs_report(&p, ev, n, FS_TEXT);
	ASSERT_NOT_NULL(text, "text");
	if (text) {
		ASSERT_NOT_NULL(strstr(text, "F2FS (its tracepoints): 2 GC rounds (2 foreground), "
					     "1 checkpoints, 1 background GC wake-ups"), "the head line");
		ASSERT_NOT_NULL(strstr(text, "data hot 0, warm 131, cold 128;"), "page counts");
		ASSERT_NOT_NULL(strstr(text, "  0.010000      5.000  fg       0     1     1     128"
					     "       2  20 -> 21\n"), "round 1: 5 ms, 128 data blocks");
		ASSERT_NOT_NULL(strstr(text, "      moved /f2fs/f2 512K: zone 1 -> zone 3\n"),
				"f2's 512K from zone 1 to 3");
		ASSERT_NOT_NULL(strstr(text, "  0.020000      1.000  fg     -61     0     0       0"),
				"round 2: no victim");
		ASSERT_TRUE(!strstr(text, "inode 6"), "thread 9's write is not the GC's");
		ASSERT_NOT_NULL(strstr(text, "  0.030000     10.000  sync\n"), "the checkpoint: 10 ms");
		ASSERT_NOT_NULL(strstr(text, "File extents (--extents)"), "the extents part too");
		ASSERT_LE(widest_line(text), 100, "every line fits 100 columns");
	}
	free(text);
	char *json = fs_report(&p, ev, n, FS_JSON);
	ASSERT_NOT_NULL(json, "json");
	if (json) {
		ASSERT_NOT_NULL(strstr(json, "\"moved\":[{\"path\":\"/f2fs/f2\",\"bytes\":524288,"
					     "\"from_zone\":1,\"to_zone\":3}]"), "JSON: f2 moved");
		ASSERT_NOT_NULL(strstr(json, "\"duration_ns\":5000000,\"foreground\":true"), "JSON: 5 ms");
		ASSERT_NOT_NULL(strstr(json, "\"extents\":{"), "JSON: the extents too");
	}
	free(json);
	char *log = fs_report(&p, ev, n, FS_LOG);
	ASSERT_NOT_NULL(log, "log");
	if (log) {
		size_t lines = 0;
		for (const char *c = log; *c; c++)
			lines += *c == '\n';
		ASSERT_EQ(lines, 2 + n - 3, "log: the 2 snapshots and every event but the counters");
		ASSERT_NOT_NULL(strstr(log, "0.010000 7/7 f2fs gc_begin dev 0:7 foreground free_secs 20"),
				"log: the round's begin");
		ASSERT_NOT_NULL(strstr(log, "f2fs checkpoint dev 0:7 reason sync phase 'finish block_ops'"),
				"log: a checkpoint phase");
		ASSERT_NOT_NULL(strstr(log, "f2fs gc_write dev 0:7 ino 5 page 3 data cold block 259 -> 771"),
				"log: a moved block");
	}
	free(log);
	/* --f2fs alone (no snapshots): moved data by inode, no zones; no extents part */
	text = fs_report(NULL, ev, n, FS_TEXT);
	ASSERT_NOT_NULL(text, "text without snapshots");
	if (text) {
		ASSERT_NOT_NULL(strstr(text, "      moved inode 5 512K: zone ? -> zone ?\n"), "by inode");
		ASSERT_TRUE(!strstr(text, "File extents"), "no extents part");
	}
	free(text);
	it_ext_set_free(&a);
	it_ext_set_free(&b);
	free(p.p);
}
