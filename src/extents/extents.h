/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Where files lie on their device: each file's extents (FIEMAP), mapped to
 * the device's zones (BLKREPORTZONE) on a zoned device, or to fixed-size
 * regions otherwise; per file and per zone the extent count, the extent
 * sizes, the holes and a fragmentation figure; per zone the files with
 * data in it. The model and its statistics (extents.c) are pure C, fed
 * either by the file walk (fiemap.c) or by a unit test.
 *
 * Addresses are bytes on the file system's block device (FIEMAP's
 * fe_physical), which is also where the zone table is read from.
 */
#ifndef IOTRAIL_EXTENTS_H
#define IOTRAIL_EXTENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define IT_EXT_NO_ZONE UINT32_MAX
/* the region size of an unzoned device unless --region says otherwise:
 * the zone size of many ZNS drives and of null_blk's zoned mode */
#define IT_EXT_REGION_DEFAULT (256ull << 20)

/* FIEMAP's fe_flags, kept as the kernel gives them (linux/fiemap.h) */
struct it_extent {
	uint64_t logical, physical, length; /* bytes */
	uint32_t flags;
	uint32_t zone;                      /* zone (or region) number of its first
					     * byte; IT_EXT_NO_ZONE beyond the table */
	uint32_t zone_last;                 /* that of its last byte (== zone unless
					     * it crosses a zone boundary) */
	bool placed;                        /* has a physical address (not delalloc,
					     * inline or unknown), so a zone */
	uint8_t f2fs_seg;                   /* on F2FS: the type of the segment of its
					     * first block + 1 (IT_EXT_F2FS_*); 0 unknown */
};

/* F2FS's segment types (its CURSEG_* numbers + 1), from segment_info */
enum { IT_EXT_F2FS_HOT_DATA = 1, IT_EXT_F2FS_WARM_DATA, IT_EXT_F2FS_COLD_DATA,
       IT_EXT_F2FS_HOT_NODE, IT_EXT_F2FS_WARM_NODE, IT_EXT_F2FS_COLD_NODE,
       IT_EXT_F2FS_SEGS /* the types above and 0 (unknown) */ };
/* "warm_data", or NULL for 0 and unknown values */
const char *it_ext_f2fs_seg_name(uint8_t seg);

struct it_ext_file {
	char *path;
	uint64_t size;                      /* st_size */
	uint32_t dev;                       /* st_dev (makedev form) */
	uint32_t blksize;                   /* the file system's block size */
	struct it_extent *ext;
	uint32_t next;
	/* statistics (it_ext_finish) */
	uint64_t data_bytes;                /* sum of the extent lengths */
	uint64_t holes, hole_bytes;         /* logical gaps below st_size */
	uint32_t runs;                      /* physically contiguous runs */
	double fragmentation;               /* (runs - 1) / (blocks - 1): 0 one
					     * run, 1 every block apart */
	uint64_t size_min, size_p50, size_p90, size_p99, size_max; /* extent lengths */
	uint32_t nzones;                    /* zones it has data in */
};

/* One zone (or region) with the files' data in it. */
struct it_ext_piece {                       /* the part of one extent in one zone */
	uint64_t physical, length;
	uint32_t file;
};

struct it_ext_zone {
	uint32_t number;                    /* zone number, or region number */
	uint64_t start, len, capacity, wp;  /* bytes */
	uint8_t type, cond;                 /* BLK_ZONE_TYPE_*, BLK_ZONE_COND_* */
	struct it_ext_piece *pieces;
	uint32_t npieces, cap_pieces;
	/* statistics (it_ext_finish) */
	uint64_t bytes;
	uint64_t holes, hole_bytes;         /* gaps between the pieces, from the
					     * zone's start to its last piece */
	double fragmentation;               /* hole_bytes / (end of the last piece
					     * - zone start): 0 packed */
	uint64_t size_min, size_p50, size_p90, size_p99, size_max;
	uint32_t nfiles;
};

struct it_ext_dev {
	uint32_t dev;                       /* makedev form */
	char name[64];                      /* "nvme0n1", or "" (no block device) */
	bool zoned;                         /* zones from BLKREPORTZONE, else regions */
	uint64_t region;                    /* region size (bytes) when !zoned */
	uint64_t size;                      /* device bytes (0: unknown) */
	struct it_ext_zone *zones;
	uint32_t nzones;
	char *why_regions;                  /* why a zoned device has regions, or NULL */
};

struct it_ext_set {
	struct it_ext_file *files;
	uint32_t nfiles, cap_files;
	struct it_ext_dev *devs;
	uint32_t ndevs;
	uint64_t region;                    /* --region SIZE for unzoned devices */
	/* the walk's counts: what it met and could not map */
	uint64_t dirs, vanished, unreadable, unsupported, not_regular;
	uint64_t extents, unplaced;         /* all extents; those without address */
};

/* Adds a file with its extents (taken over: ext is freed by
 * it_ext_set_free). Returns its index, or -1 out of memory. */
long it_ext_add_file(struct it_ext_set *s, const char *path, uint64_t size, uint32_t dev,
		     uint32_t blksize, struct it_extent *ext, uint32_t next);
/* The device of dev (added with regions of s->region if new). */
struct it_ext_dev *it_ext_dev_get(struct it_ext_set *s, uint32_t dev);
/* Sets a device's zone table (taken over); zones sorted by start. */
void it_ext_dev_set_zones(struct it_ext_dev *d, struct it_ext_zone *zones, uint32_t n);
/* Maps every extent to its zone or region and computes the statistics.
 * Returns 0, or -1 out of memory. */
int it_ext_finish(struct it_ext_set *s);
void it_ext_set_free(struct it_ext_set *s);

/* Output: a text table, or JSON (doc/extents.md). */
void it_ext_print_text(const struct it_ext_set *s, FILE *f);
void it_ext_print_json(const struct it_ext_set *s, FILE *f, bool pretty);
/* The walk's counts as members of the JSON object j is in. */
struct it_json;
void it_ext_walk_json(struct it_json *j, const struct it_ext_set *s);
/* v bytes as "4K", "1.5M", "512B" into buf. */
const char *it_ext_human(uint64_t v, char *buf, size_t len);

/* The walk (fiemap.c): adds each regular file under path (directories
 * recursively; symbolic links not followed). A file that vanishes or
 * cannot be opened is counted, not fatal. Returns 0, or -errno when path
 * itself cannot be read (err names why). */
int it_ext_walk(struct it_ext_set *s, const char *path, char *err, size_t errlen);
/* Reads the zone table of every zoned device the files are on. */
void it_ext_read_zones(struct it_ext_set *s);
/* On F2FS (a device with /proc/fs/f2fs/NAME/segment_info): each placed
 * extent's segment type (hot/warm/cold, data/node), from segment_info and
 * the superblock's main area start. After it_ext_read_zones. */
void it_ext_read_f2fs(struct it_ext_set *s);

/* "256M", "1G", "4096": bytes, or 0 on a bad size. */
uint64_t it_ext_parse_size(const char *s);

#endif
