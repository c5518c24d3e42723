// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * F2FS's GC rounds in the report (f2fs_analysis.c) from synthetic events:
 * a foreground round's page writes are those of its thread while it is
 * open; a background round writes no data itself, and the pages it marked
 * that writeback wrote later, on another thread (IT_F2FS_GC_LATER), are
 * its own: the last background round of their device begun before them.
 * One written back with no such round in the trace is counted apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/json_writer.h"
#include "harness.h"
#include "layers/fs/f2fs_analysis.h"

#define DEV_A ((8u << 20) | 1)
#define DEV_B ((8u << 20) | 2)

static struct it_f2fs_event ev(uint64_t ts, uint32_t dev, uint16_t kind, uint32_t tid, uint64_t a,
			       uint64_t c, uint64_t d)
{
	return (struct it_f2fs_event){ .ts_ns = ts, .dev = dev, .kind = kind, .pid = tid, .tid = tid,
				       .a = a, .c = c, .d = d };
}

/* a data page's write: inode ino, old block | new block << 32 */
static struct it_f2fs_event write_ev(uint64_t ts, uint32_t dev, uint32_t tid, uint64_t ino,
				     uint32_t old, uint32_t new, bool later)
{
	return ev(ts, dev, IT_F2FS_GC_WRITE, tid, ino, old | (uint64_t)new << 32,
		  later ? IT_F2FS_GC_LATER : 0);
}

/* the report's f2fs object for the events, as JSON text (caller frees) */
static char *f2fs_json(const struct it_f2fs_event *e, size_t n)
{
	struct it_f2fs_an *an = it_f2fs_an_new();
	struct it_json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!an || !f || it_f2fs_an_feed(an, e, n * sizeof(*e), (uint32_t)n) ||
	    it_f2fs_an_finish(an, NULL, 0)) {
		free(buf);
		return NULL;
	}
	it_json_init(&j, f, false);
	it_json_object_start(&j);
	it_f2fs_an_json(an, &j, 0, false);
	it_json_object_end(&j);
	fclose(f);
	it_f2fs_an_free(an);
	return buf;
}

/* the number after the n-th (0-based) occurrence of key, or -1 */
static long long nth(const char *s, const char *key, int n)
{
	const char *p = s;

	for (int i = 0; p && i <= n; i++) {
		p = strstr(p, key);
		if (p && i < n)
			p += strlen(key);
	}
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

TEST(f2fs_background_moves_written_back_later)
{
	const struct it_f2fs_event e[] = {
		/* a foreground round on A, thread 10: two blocks of inode 5 */
		ev(100, DEV_A, IT_F2FS_GC_BEGIN, 10, 1, 0, 0),
		write_ev(110, DEV_A, 10, 5, 1000, 2000, false),
		write_ev(120, DEV_A, 10, 5, 1001, 2001, false),
		ev(130, DEV_A, IT_F2FS_GC_END, 10, 0, 0, 0),
		/* a background round on A, thread 11: it writes nothing */
		ev(200, DEV_A, IT_F2FS_GC_BEGIN, 11, 0, 0, 0),
		ev(210, DEV_A, IT_F2FS_GC_END, 11, 0, 0, 0),
		/* a background round on B */
		ev(220, DEV_B, IT_F2FS_GC_BEGIN, 12, 0, 0, 0),
		ev(230, DEV_B, IT_F2FS_GC_END, 12, 0, 0, 0),
		/* writeback (thread 20) writes three pages the round on A
		 * marked and one the round on B did */
		write_ev(300, DEV_A, 20, 7, 3000, 4000, true),
		write_ev(301, DEV_A, 20, 7, 3001, 4001, true),
		write_ev(302, DEV_A, 20, 8, 3002, 4002, true),
		write_ev(303, DEV_B, 20, 9, 5000, 6000, true),
		/* a page of thread 10 after its round closed: no GC's */
		write_ev(400, DEV_A, 10, 5, 1002, 2002, false),
	};
	char *s = f2fs_json(e, sizeof(e) / sizeof(e[0]));

	ASSERT_TRUE(s != NULL, "report");
	if (!s)
		return;
	/* rounds in order: fg A, bg A, bg B */
	ASSERT_U64_EQ((uint64_t)nth(s, "\"data_blocks\":", 0), 2, "fg round's data blocks");
	ASSERT_U64_EQ((uint64_t)nth(s, "\"data_blocks_written_back_later\":", 0), 0, "fg later");
	ASSERT_U64_EQ((uint64_t)nth(s, "\"data_blocks\":", 1), 3, "bg round A's data blocks");
	ASSERT_U64_EQ((uint64_t)nth(s, "\"data_blocks_written_back_later\":", 1), 3, "bg A later");
	ASSERT_U64_EQ((uint64_t)nth(s, "\"data_blocks\":", 2), 1, "bg round B's data blocks");
	ASSERT_U64_EQ((uint64_t)nth(s, "\"data_blocks_written_back_later\":", 2), 1, "bg B later");
	/* round A moved inode 7 (8 KiB) and inode 8 (4 KiB) */
	ASSERT_TRUE(strstr(s, "{\"ino\":7,\"bytes\":8192,") != NULL, "inode 7 moved 8 KiB");
	ASSERT_TRUE(strstr(s, "{\"ino\":8,\"bytes\":4096,") != NULL, "inode 8 moved 4 KiB");
	ASSERT_U64_EQ((uint64_t)nth(s, "\"gc_blocks_of_rounds_before\":", 0), 0, "orphans");
	free(s);
}

TEST(f2fs_written_back_without_its_round)
{
	const struct it_f2fs_event e[] = {
		/* marked before the recording began: no round in the trace */
		write_ev(50, DEV_A, 20, 7, 3000, 4000, true),
		/* a foreground round does not take it either */
		ev(100, DEV_A, IT_F2FS_GC_BEGIN, 10, 1, 0, 0),
		ev(130, DEV_A, IT_F2FS_GC_END, 10, 0, 0, 0),
		write_ev(150, DEV_A, 20, 7, 3001, 4001, true),
	};
	char *s = f2fs_json(e, sizeof(e) / sizeof(e[0]));

	ASSERT_TRUE(s != NULL, "report");
	if (!s)
		return;
	ASSERT_U64_EQ((uint64_t)nth(s, "\"gc_blocks_of_rounds_before\":", 0), 2, "orphans");
	ASSERT_U64_EQ((uint64_t)nth(s, "\"data_blocks\":", 0), 0, "the fg round's data blocks");
	free(s);
}
