/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `iotrail record --extents PATH...`: the extents of the given files
 * (FIEMAP, the walk of `iotrail extents`) at the start and at the end of a
 * recording, in the trace (the fs layer's FS_EXTENTS chunks,
 * doc/trace-format.md), and what changed between the two: per file the
 * data written at offsets that had no block at the start (new), the data
 * whose blocks moved (moved: GC, defragmentation, copy-on-write) and the
 * data unmapped (freed), and the zones (or regions) the new and moved data
 * went to. Pure C: the recorder writes a walked set, the report reads the
 * records back and compares; the unit tests do both on made-up sets.
 */
#ifndef IOTRAIL_EXTENTS_SNAPSHOT_H
#define IOTRAIL_EXTENTS_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "iotrail/trace_format.h"
#include "extents/extents.h"

/* ---- the records (variable size, each padded to 8 bytes) ---- */
enum it_fs_rec_kind {
	IT_FS_SNAPSHOT = 1,  /* struct it_fs_snapshot_rec: a walk's time and counts */
	IT_FS_DEVICE = 2,    /* struct it_fs_device_rec + zones: a device's zone table (part) */
	IT_FS_FILE = 3,      /* struct it_fs_file_rec + extents + path: a file's extents (part) */
};
enum { IT_FS_START = 0, IT_FS_END = 1 }; /* which snapshot */

struct it_fs_rec_head {
	uint16_t kind;        /* enum it_fs_rec_kind */
	uint8_t  snapshot;    /* IT_FS_START or IT_FS_END */
	uint8_t  reserved;    /* 0 */
	uint32_t len;         /* bytes of the record, this head included, before padding */
};

/* Written after the snapshot's devices and files: a reader takes a
 * snapshot as whole once it has this record. */
struct it_fs_snapshot_rec {
	struct it_fs_rec_head h;
	uint64_t at_ns;               /* monotonic, when the walk began */
	uint64_t walk_ns;             /* how long it took */
	uint64_t files, extents, unplaced;
	uint64_t dirs, vanished, unreadable, unsupported, not_regular;
	uint64_t region;              /* region size of unzoned devices (bytes) */
};

struct it_fs_zone_rec {
	uint64_t start, len, capacity, wp; /* bytes */
	uint8_t  type, cond;               /* BLK_ZONE_TYPE_*, BLK_ZONE_COND_* */
	uint8_t  reserved[6];
};
/* A device; a zoned one's table in parts of at most IT_FS_ZONES_PER_REC
 * zones, each a record with zone_first = the index of its first zone. */
struct it_fs_device_rec {
	struct it_fs_rec_head h;
	uint32_t dev;                 /* makedev form */
	uint32_t nzones;              /* zones in this record */
	uint32_t zone_first;
	uint32_t total_zones;         /* the whole table */
	uint64_t size;                /* device bytes (0: unknown) */
	char     name[64];            /* "nvme0n1", or "" */
	char     why_regions[96];     /* why a zoned device has regions, or "" */
	uint8_t  zoned;
	uint8_t  reserved[7];
	/* struct it_fs_zone_rec zones[nzones] */
};
struct it_fs_extent_rec {
	uint64_t logical, physical, length; /* bytes */
	uint32_t flags;                     /* FIEMAP's fe_flags */
	uint8_t  placed;                    /* 1: has a physical address */
	uint8_t  f2fs_seg;                  /* F2FS segment type + 1; 0 unknown */
	uint16_t reserved;                  /* 0 */
};
/* A file; its extents in parts of at most IT_FS_EXTENTS_PER_REC, each a
 * record with ext_first = the index of its first extent (parts of one
 * file follow each other). */
struct it_fs_file_rec {
	struct it_fs_rec_head h;
	uint64_t size;                /* st_size */
	uint32_t dev, blksize;
	uint32_t nextents;            /* extents in this record */
	uint32_t ext_first;
	uint32_t total_extents;
	uint32_t path_len;            /* bytes of the path, without its NUL */
	/* struct it_fs_extent_rec extents[nextents]; char path[path_len + 1] */
};
#define IT_FS_ZONES_PER_REC 1024
#define IT_FS_EXTENTS_PER_REC 1024

/* The fs layer's manifest entry (src/extents/snapshot.c). */
extern const struct it_layer_rec it_fs_records;

/* Writes s (walked, zones read; it_ext_finish not needed) as snapshot
 * which: its devices, its files, then the snapshot record. emit gets each
 * record; a non-zero return stops and is returned. */
typedef int (*it_fs_emit_fn)(const void *rec, size_t len, void *ctx);
int it_fs_snapshot_write(const struct it_ext_set *s, unsigned which, uint64_t at_ns,
			 uint64_t walk_ns, it_fs_emit_fn emit, void *ctx);

/* ---- reading back ---- */
struct it_fs_snapshots {
	struct it_ext_set set[2];
	struct it_fs_snapshot_rec snap[2];
	bool have[2];                 /* its snapshot record was read */
	uint64_t bad;                 /* records that did not parse (skipped) */
	uint64_t region;              /* the snapshots' region size */
};
/* One FS_EXTENTS chunk's payload (count records). 0, or -1 out of memory. */
int it_fs_snapshots_feed(struct it_fs_snapshots *ss, const void *payload, size_t len,
			 uint32_t count);
/* After the last chunk: each file's extents in logical order, the
 * region size set, zones mapped (it_ext_finish) in both snapshots. 0, or
 * -1 out of memory. */
int it_fs_snapshots_finish(struct it_fs_snapshots *ss);
void it_fs_snapshots_free(struct it_fs_snapshots *ss);

/* ---- what changed ---- */
struct it_fs_zone_bytes {             /* new and moved data of a file in one zone */
	uint32_t dev, zone;
	uint64_t zone_start, bytes;
};
enum it_fs_file_state { IT_FS_SAME, IT_FS_CHANGED, IT_FS_CREATED, IT_FS_DELETED };
struct it_fs_file_delta {
	const char *path;             /* the snapshots' (valid while they are) */
	enum it_fs_file_state state;
	int32_t start, end;           /* index in set[0] / set[1]; -1: not there */
	uint64_t size_start, size_end;
	uint64_t new_bytes;           /* mapped at the end at offsets unmapped at the start */
	uint64_t moved_bytes;         /* mapped at both, to other blocks at the end */
	uint64_t freed_bytes;         /* mapped at the start, unmapped at the end */
	uint32_t extents_added;       /* extents of the end not at the start, exactly */
	uint32_t extents_removed;     /* extents of the start not at the end, exactly */
	uint32_t extents_moved;       /* extents of the end with some data moved */
	uint32_t unplaced_end;        /* extents of the end without an address yet */
	uint64_t unplaced_bytes;      /*   their bytes (in neither new nor moved) */
	struct it_fs_zone_bytes *zones; /* where new and moved data lie, by (dev, zone) */
	uint32_t nzones;
	/* on F2FS: the bytes of its placed extents by the type of the segment
	 * of each extent's first block (index: IT_EXT_F2FS_*; 0 unknown), at
	 * the start and at the end */
	uint64_t seg_start[IT_EXT_F2FS_SEGS], seg_end[IT_EXT_F2FS_SEGS];
};
struct it_fs_delta {
	struct it_fs_file_delta *files; /* sorted by path */
	uint32_t nfiles;
	uint32_t same, changed, created, deleted;
	uint64_t new_bytes, moved_bytes, freed_bytes;
};
/* Compares the two snapshots (it_ext_finish'ed: zones mapped). 0, or -1
 * out of memory. */
int it_fs_delta_compute(const struct it_fs_snapshots *ss, struct it_fs_delta *d);
void it_fs_delta_free(struct it_fs_delta *d);
/* The zone (or region) of device d holding byte a: its number, start and
 * length; false beyond a zoned device's table. */
bool it_fs_zone_at(const struct it_ext_dev *d, uint64_t a, uint32_t *number, uint64_t *start,
		   uint64_t *len);

#endif
