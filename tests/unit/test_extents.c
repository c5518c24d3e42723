/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `iotrail extents`' model on made-up files and zone tables: extents cut
 * at zone boundaries, holes, runs and fragmentation, percentiles, sparse
 * regions on an unzoned device, and the JSON the command prints. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fiemap.h>

#include "extents/extents.h"
#include "harness.h"

#define K 1024ull
#define M (1024ull * 1024)

static struct it_extent *exts(const uint64_t (*v)[3], uint32_t n)
{
	struct it_extent *e = calloc(n, sizeof(*e));
	for (uint32_t i = 0; i < n; i++)
		e[i] = (struct it_extent){ .logical = v[i][0], .physical = v[i][1], .length = v[i][2],
					   .placed = true };
	return e;
}

/* a zoned device of four 1 MiB zones */
static void four_zones(struct it_ext_set *s, uint32_t dev)
{
	struct it_ext_zone *z = calloc(4, sizeof(*z));
	for (uint32_t i = 0; i < 4; i++)
		z[i] = (struct it_ext_zone){ .number = i, .start = i * M, .len = M, .capacity = M,
					     .type = 2, .cond = 14 };
	it_ext_dev_set_zones(it_ext_dev_get(s, dev), z, 4);
}

TEST(extents_zones_runs_holes)
{
	struct it_ext_set s = { 0 };
	/* a: two extents back to back (one run), then one across zones 0-1 */
	static const uint64_t a[][3] = { { 0, 0, 64 * K }, { 64 * K, 64 * K, 64 * K },
					 { 128 * K, M - 32 * K, 64 * K } };
	/* b: a hole at 0, data in zone 1, a hole, data in zone 3, a hole at the end */
	static const uint64_t b[][3] = { { 8 * K, M + 64 * K, 4 * K }, { 16 * K, 3 * M, 12 * K } };
	four_zones(&s, 7);
	ASSERT_EQ(it_ext_add_file(&s, "a", 192 * K, 7, 4096, exts(a, 3), 3), 0, "a added");
	ASSERT_EQ(it_ext_add_file(&s, "b", 64 * K, 7, 4096, exts(b, 2), 2), 1, "b added");
	ASSERT_EQ(it_ext_finish(&s), 0, "finish");

	const struct it_ext_file *fa = &s.files[0], *fb = &s.files[1];
	ASSERT_EQ(fa->runs, 2, "a: runs");
	ASSERT_EQ(fa->holes, 0, "a: holes");
	ASSERT_EQ(fa->nzones, 2, "a: zones");
	ASSERT_EQ(fa->ext[2].zone, 0, "a: third extent starts in zone 0");
	ASSERT_EQ(fa->ext[2].zone_last, 1, "a: and ends in zone 1");
	/* 48 blocks, 2 runs: one break out of 47 block boundaries */
	ASSERT_NEAR(fa->fragmentation, 1.0 / 47, 1e-9, "a: fragmentation");
	ASSERT_U64_EQ(fa->size_min, 64 * K, "a: min size");
	ASSERT_U64_EQ(fa->size_max, 64 * K, "a: max size");

	ASSERT_EQ(fb->holes, 3, "b: holes (start, middle, end)");
	ASSERT_U64_EQ(fb->hole_bytes, 8 * K + 4 * K + 36 * K, "b: hole bytes");
	ASSERT_EQ(fb->runs, 2, "b: runs");
	ASSERT_NEAR(fb->fragmentation, 1.0 / 3, 1e-9, "b: fragmentation (4 blocks, 2 runs)");
	ASSERT_U64_EQ(fb->size_p50, 4 * K, "b: p50");
	ASSERT_U64_EQ(fb->size_p90, 12 * K, "b: p90");

	const struct it_ext_dev *d = &s.devs[0];
	const struct it_ext_zone *z0 = &d->zones[0], *z1 = &d->zones[1], *z2 = &d->zones[2],
				 *z3 = &d->zones[3];
	ASSERT_U64_EQ(z0->bytes, 128 * K + 32 * K, "zone 0: bytes (a's first two, 32K of its third)");
	ASSERT_EQ(z0->npieces, 3, "zone 0: pieces");
	ASSERT_EQ(z0->holes, 1, "zone 0: one gap (128K..1M-32K)");
	ASSERT_U64_EQ(z0->hole_bytes, M - 32 * K - 128 * K, "zone 0: gap bytes");
	ASSERT_NEAR(z0->fragmentation, (double)(M - 160 * K) / (double)M, 1e-9, "zone 0: fragmentation");
	ASSERT_EQ(z0->nfiles, 1, "zone 0: files");
	ASSERT_U64_EQ(z1->bytes, 32 * K + 4 * K, "zone 1: a's tail and b's first");
	ASSERT_EQ(z1->nfiles, 2, "zone 1: files");
	ASSERT_EQ(z1->holes, 1, "zone 1: the gap between a's tail and b");
	ASSERT_EQ(z2->npieces, 0, "zone 2: empty");
	ASSERT_U64_EQ(z3->bytes, 12 * K, "zone 3: b's second");
	ASSERT_EQ(z3->holes, 0, "zone 3: at the zone start");
	it_ext_set_free(&s);
}

TEST(extents_unplaced_and_outside)
{
	struct it_ext_set s = { 0 };
	static const uint64_t a[][3] = { { 0, 0, 4 * K }, { 4 * K, 0, 4 * K }, { 8 * K, 9 * M, 4 * K } };
	struct it_extent *e = exts(a, 3);
	e[1].placed = false; /* delayed allocation: no address yet */
	e[1].flags = FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN;
	four_zones(&s, 1);
	it_ext_add_file(&s, "a", 12 * K, 1, 4096, e, 3);
	ASSERT_EQ(it_ext_finish(&s), 0, "finish");
	ASSERT_EQ(s.unplaced, 1, "unplaced extents");
	ASSERT_EQ(s.files[0].ext[1].zone, IT_EXT_NO_ZONE, "delalloc: no zone");
	ASSERT_EQ(s.files[0].ext[2].zone, IT_EXT_NO_ZONE, "beyond the table: no zone");
	ASSERT_EQ(s.files[0].ext[0].zone, 0, "first: zone 0");
	ASSERT_EQ(s.files[0].nzones, 1, "zones with data");
	it_ext_set_free(&s);
}

TEST(extents_regions_sparse)
{
	struct it_ext_set s = { .region = M };
	static const uint64_t a[][3] = { { 0, 5 * M + 4 * K, 4 * K }, { 4 * K, 1000 * M - 4 * K, 8 * K } };
	it_ext_add_file(&s, "a", 12 * K, 3, 4096, exts(a, 2), 2);
	ASSERT_EQ(it_ext_finish(&s), 0, "finish");
	const struct it_ext_dev *d = &s.devs[0];
	ASSERT_TRUE(!d->zoned, "unzoned");
	ASSERT_EQ(d->nzones, 3, "only the regions with data: 5, 999, 1000");
	ASSERT_EQ(d->zones[0].number, 5, "first region");
	ASSERT_EQ(d->zones[1].number, 999, "second region");
	ASSERT_EQ(d->zones[2].number, 1000, "third region");
	ASSERT_U64_EQ(d->zones[0].hole_bytes, 4 * K, "region 5: 4K before the data");
	ASSERT_EQ(s.files[0].ext[1].zone, 999, "second extent: region 999");
	ASSERT_EQ(s.files[0].ext[1].zone_last, 1000, "... to region 1000");
	it_ext_set_free(&s);
}

TEST(extents_json)
{
	struct it_ext_set s = { 0 };
	static const uint64_t a[][3] = { { 0, M - 4 * K, 8 * K } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	four_zones(&s, 2);
	it_ext_add_file(&s, "dir/a \"q\"", 8 * K, 2, 4096, exts(a, 1), 1);
	s.files[0].ext[0].flags = FIEMAP_EXTENT_LAST;
	ASSERT_EQ(it_ext_finish(&s), 0, "finish");
	it_ext_print_json(&s, f, false);
	fclose(f);
	ASSERT_TRUE(strstr(buf, "\"path\":\"dir/a \\\"q\\\"\"") != NULL, "path escaped");
	ASSERT_TRUE(strstr(buf, "\"extents\":[{\"logical\":0,\"physical\":1044480,\"length\":8192,"
			   "\"zone\":0,\"zone_last\":1,\"flags\":[\"last\"]}]") != NULL,
		    "the extent as the issue writes it");
	ASSERT_TRUE(strstr(buf, "\"kind\":\"zone\",\"zone\":1,\"start\":1048576") != NULL, "zone 1 listed");
	ASSERT_TRUE(strstr(buf, "\"kind\":\"zone\",\"zone\":2") == NULL, "empty zone 2 not listed");
	if (it_test_failed)
		fprintf(stderr, "  json: %s\n", buf);
	free(buf);
	it_ext_set_free(&s);
}

TEST(extents_parse_size)
{
	ASSERT_U64_EQ(it_ext_parse_size("4096"), 4096, "bytes");
	ASSERT_U64_EQ(it_ext_parse_size("256M"), 256 * M, "M");
	ASSERT_U64_EQ(it_ext_parse_size("1GiB"), 1024 * M, "GiB");
	ASSERT_U64_EQ(it_ext_parse_size("2k"), 2 * K, "k");
	ASSERT_U64_EQ(it_ext_parse_size("12X"), 0, "bad unit");
	ASSERT_U64_EQ(it_ext_parse_size("-1"), 0, "negative");
	ASSERT_U64_EQ(it_ext_parse_size(""), 0, "empty");
	ASSERT_U64_EQ(it_ext_parse_size("99999999999T"), 0, "overflow");
}

/* The walk's counts on a tmpfs directory (no FIEMAP there): a file is
 * counted as unsupported, a FIFO and a symbolic link as not regular, a
 * subdirectory walked; a missing path is the one error. */
TEST(extents_walk_counts)
{
	char dir[] = "/dev/shm/iotrail-unit-extents.XXXXXX", p[128], err[128];
	struct it_ext_set s = { 0 };

	if (!mkdtemp(dir))
		SKIP("no /dev/shm to walk");
	snprintf(p, sizeof(p), "%s/sub", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/sub/file", dir);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs("data", f);
		fclose(f);
	}
	snprintf(p, sizeof(p), "%s/fifo", dir);
	mkfifo(p, 0600);
	snprintf(p, sizeof(p), "%s/link", dir);
	if (symlink("sub/file", p))
		p[0] = 0;
	ASSERT_EQ(it_ext_walk(&s, dir, err, sizeof(err)), 0, err);
	ASSERT_EQ(s.dirs, 2, "directories");
	ASSERT_EQ(s.unsupported, 1, "the tmpfs file: no FIEMAP");
	ASSERT_EQ(s.not_regular, 2, "the FIFO and the link");
	ASSERT_EQ(s.nfiles, 0, "files with extents");
	ASSERT_EQ(s.vanished + s.unreadable, 0, "nothing vanished or unreadable");
	snprintf(p, sizeof(p), "%s/missing", dir);
	ASSERT_TRUE(it_ext_walk(&s, p, err, sizeof(err)) < 0, "a missing path fails");
	ASSERT_TRUE(strstr(err, "No such file") != NULL, "and says why");
	it_ext_set_free(&s);
	char cmd[192];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "  could not remove %s\n", dir);
}
