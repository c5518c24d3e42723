/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * F2FS's tracepoint events (f2fs.h) in `iotrail report`: GC rounds with
 * their durations and the blocks they moved, checkpoints, the background
 * GC's wake-ups and the page writes by type and temperature. With the
 * extents snapshots of the same recording, a GC round's moved blocks are
 * named by file (the start snapshot's extents holding the old block) and
 * zone (old: the start's zone table; new: the end's). Pure C.
 */
#ifndef IOTRAIL_FS_F2FS_ANALYSIS_H
#define IOTRAIL_FS_F2FS_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "layers/fs/f2fs.h"

struct it_json;
struct it_fs_snapshots;
struct it_f2fs_an;
struct it_bus;

/* Data a GC round moved: of one file (path, else NULL and its inode),
 * from one zone to another (IT_EXT_NO_ZONE: not known). */
struct it_f2fs_moved {
	const char *path;
	uint64_t ino;
	uint32_t from_zone, to_zone;
	uint64_t bytes;
};

/* IT_BUS_F2FS's message: a GC round, a checkpoint or a background GC
 * wake-up, as the report takes them. */
enum it_f2fs_row { IT_F2FS_ROW_GC = 1, IT_F2FS_ROW_CHECKPOINT, IT_F2FS_ROW_BG_GC };
struct it_bus_f2fs {
	enum it_f2fs_row kind;
	uint32_t dev;                   /* the kernel's dev_t (major << 20 | minor) */
	uint64_t start_ns, end_ns;      /* monotonic; end 0: not seen (a wake-up: 0) */
	uint32_t pid, tid;
	/* a GC round */
	bool foreground;
	int64_t ret;
	uint64_t segments_freed, sections_freed, free_before, free_after;
	uint64_t data_blocks, node_blocks;
	const struct it_f2fs_moved *moved;
	uint32_t nmoved;
	/* a checkpoint: CP_* bits (it_f2fs_reason_text) */
	uint32_t reason;
	/* a background GC wake-up: its next wait, prefree and free segments */
	uint64_t wait_ms, prefree, free_segments;
};

struct it_f2fs_an *it_f2fs_an_new(void);
/* one FS_F2FS chunk's payload (count events). 0, or -1 out of memory. */
int it_f2fs_an_feed(struct it_f2fs_an *an, const void *payload, size_t len, uint32_t count);
/* After the last chunk: events in time order, GC rounds and checkpoints
 * paired, moved blocks named by ss (NULL, or snapshots missing: by
 * inode, no zones). lost: the layer's records lost. 0, or -1 out of memory. */
int it_f2fs_an_finish(struct it_f2fs_an *an, const struct it_fs_snapshots *ss, uint64_t lost);
/* any F2FS record read */
bool it_f2fs_an_any(const struct it_f2fs_an *an);
/* t0: the recording's start (monotonic ns), times are printed after it */
void it_f2fs_an_text(const struct it_f2fs_an *an, FILE *f, uint64_t t0);
void it_f2fs_an_json(const struct it_f2fs_an *an, struct it_json *j, uint64_t t0, bool events);
/* the events of [from, to) (monotonic ns), one line each */
void it_f2fs_an_log(const struct it_f2fs_an *an, FILE *f, uint64_t t0, uint64_t from,
		    uint64_t to);
/* After finish: the GC rounds, checkpoints and background GC wake-ups on
 * bus (IT_BUS_F2FS), in time order. 0, or -1 out of memory. */
int it_f2fs_an_publish(const struct it_f2fs_an *an, const struct it_bus *bus);
/* A checkpoint's reason bits as "sync|trimmed" ("-": none). */
void it_f2fs_reason_text(uint32_t reason, char *out, size_t len);
void it_f2fs_an_free(struct it_f2fs_an *an);

#endif
