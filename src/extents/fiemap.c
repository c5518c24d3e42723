// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The file walk behind `iotrail extents`: FIEMAP on each regular file
 * (directories walked with openat, so a long path costs nothing and a
 * renamed parent cannot send the walk elsewhere), and BLKREPORTZONE on
 * each zoned device the files are on. Files change under a walk: one that
 * vanishes, cannot be opened or whose file system has no FIEMAP is
 * counted and the walk goes on.
 *
 * No FIEMAP_FLAG_SYNC: the extents are those the file system has now, as
 * filefrag shows them without -s; data not yet allocated (delayed
 * allocation) shows as extents without an address ("unplaced").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/blkzoned.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

#include "extents/extents.h"

#define FIEMAP_BATCH 256
/* FIEMAP flags whose fe_physical is no address on the device */
#define UNPLACED (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_DATA_INLINE | \
		  FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED)

/* The extents of an open file into *out (malloc'd), their count into *n.
 * Returns 0 or -errno. */
static int file_extents(int fd, struct it_extent **out, uint32_t *n)
{
	size_t sz = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(sz);
	struct it_extent *ext = NULL;
	uint32_t cnt = 0, cap = 0;
	uint64_t start = 0;
	bool last = false;
	int err = 0;

	if (!fm)
		return -ENOMEM;
	while (!last) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = FIEMAP_BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm)) {
			err = -errno;
			break;
		}
		if (!fm->fm_mapped_extents)
			break;
		if (cnt + fm->fm_mapped_extents > cap) {
			cap = cap ? cap * 2 : fm->fm_mapped_extents;
			if (cap < cnt + fm->fm_mapped_extents)
				cap = cnt + fm->fm_mapped_extents;
			struct it_extent *p = realloc(ext, cap * sizeof(*p));
			if (!p) {
				err = -ENOMEM;
				break;
			}
			ext = p;
		}
		for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *fe = &fm->fm_extents[i];
			ext[cnt++] = (struct it_extent){
				.logical = fe->fe_logical, .physical = fe->fe_physical,
				.length = fe->fe_length, .flags = fe->fe_flags,
				.placed = !(fe->fe_flags & UNPLACED),
			};
			last = fe->fe_flags & FIEMAP_EXTENT_LAST;
			start = fe->fe_logical + fe->fe_length;
		}
	}
	free(fm);
	if (err) {
		free(ext);
		return err;
	}
	*out = ext;
	*n = cnt;
	return 0;
}

/* one regular file, open as fd */
static int add_open_file(struct it_ext_set *s, int fd, const char *path)
{
	struct it_extent *ext = NULL;
	struct stat st;
	uint32_t n = 0;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		s->not_regular++;
		return 0;
	}
	if ((err = file_extents(fd, &ext, &n))) {
		if (err == -EOPNOTSUPP || err == -ENOTTY || err == -EINVAL)
			s->unsupported++;
		else if (err == -ENOMEM)
			return err;
		else
			s->unreadable++;
		return 0;
	}
	if (it_ext_add_file(s, path, st.st_size, (uint32_t)st.st_dev, st.st_blksize, ext, n) < 0) {
		free(ext);
		return -ENOMEM;
	}
	return 0;
}

static int walk_dir(struct it_ext_set *s, int dfd, char *path, size_t len, size_t cap);

/* name in directory dfd; path[0..len) is its path */
static int walk_entry(struct it_ext_set *s, int dfd, const char *name, unsigned char type,
		      char *path, size_t len, size_t cap)
{
	if (type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				s->vanished++;
			else
				s->unreadable++;
			return 0;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
	}
	if (type != DT_DIR && type != DT_REG) {
		s->not_regular++;
		return 0;
	}
	int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (type == DT_DIR ? O_DIRECTORY : 0);
	int fd = openat(dfd, name, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM) /* O_NOATIME needs the owner (or root) */
		fd = openat(dfd, name, flags);
	if (fd < 0) {
		if (errno == ENOENT)
			s->vanished++;
		else if (errno == ELOOP || errno == ENOTDIR)
			s->not_regular++; /* replaced by a link or a file meanwhile */
		else
			s->unreadable++;
		return 0;
	}
	int err = type == DT_DIR ? walk_dir(s, fd, path, len, cap) : add_open_file(s, fd, path);
	if (type != DT_DIR)
		close(fd); /* walk_dir closes its own (fdopendir took it) */
	return err;
}

/* Walks the open directory dfd (closed here) whose path is path[0..len). */
static int walk_dir(struct it_ext_set *s, int dfd, char *path, size_t len, size_t cap)
{
	DIR *dir = fdopendir(dfd);
	struct dirent *de;
	int err = 0;

	if (!dir) {
		close(dfd);
		s->unreadable++;
		return 0;
	}
	s->dirs++;
	while (!err && (errno = 0, de = readdir(dir))) {
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		size_t nl = strlen(name), need = len + 1 + nl + 1;
		if (need > cap) {
			s->unreadable++; /* a path beyond PATH_MAX-like bounds */
			continue;
		}
		size_t l = len;
		if (l && path[l - 1] != '/')
			path[l++] = '/';
		memcpy(path + l, name, nl + 1);
		err = walk_entry(s, dirfd(dir), name, de->d_type, path, l + nl, cap);
		path[len] = 0;
	}
	if (!err && errno)
		s->unreadable++; /* the listing broke off (e.g. the directory went) */
	closedir(dir);
	return err;
}

int it_ext_walk(struct it_ext_set *s, const char *path, char *err, size_t errlen)
{
	size_t cap = 8192;
	char *buf = malloc(cap);
	struct stat st;
	int rc;

	if (!buf)
		return -ENOMEM;
	if (lstat(path, &st) || strlen(path) >= cap) {
		rc = errno ? -errno : -ENAMETOOLONG;
		snprintf(err, errlen, "%s", strerror(-rc));
		free(buf);
		return rc;
	}
	strcpy(buf, path);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "neither a regular file nor a directory");
		free(buf);
		return -EINVAL;
	}
	rc = walk_entry(s, AT_FDCWD, path, S_ISDIR(st.st_mode) ? DT_DIR : DT_REG, buf, strlen(buf), cap);
	if (rc)
		snprintf(err, errlen, "%s", strerror(-rc));
	free(buf);
	return rc;
}

/* /sys/dev/block/MAJ:MIN/NAME's first line into buf; 0 or -1 */
static int sys_read(uint32_t dev, const char *name, char *buf, size_t len)
{
	char p[128];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/%s", major(dev), minor(dev), name);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	char *ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* BLKREPORTZONE on /dev/NAME: the zone table, or NULL with *why set */
static struct it_ext_zone *report_zones(const struct it_ext_dev *d, uint32_t *n, const char **why)
{
	size_t sz = sizeof(struct blk_zone_report) + FIEMAP_BATCH * sizeof(struct blk_zone);
	struct blk_zone_report *rep = malloc(sz);
	struct it_ext_zone *z = NULL;
	uint32_t cnt = 0, cap = 0;
	uint64_t sector = 0, end = d->size / 512;
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/dev/%s", d->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !rep) {
		*why = fd < 0 ? strerror(errno) : "out of memory";
		goto fail;
	}
	while (sector < end) {
		memset(rep, 0, sz);
		rep->sector = sector;
		rep->nr_zones = FIEMAP_BATCH;
		if (ioctl(fd, BLKREPORTZONE, rep)) {
			*why = strerror(errno);
			goto fail;
		}
		if (!rep->nr_zones)
			break;
		if (cnt + rep->nr_zones > cap) {
			cap = cap ? cap * 2 : 1024;
			if (cap < cnt + rep->nr_zones)
				cap = cnt + rep->nr_zones;
			struct it_ext_zone *p = realloc(z, cap * sizeof(*p));
			if (!p) {
				*why = "out of memory";
				goto fail;
			}
			z = p;
		}
		for (uint32_t i = 0; i < rep->nr_zones; i++) {
			const struct blk_zone *b = &rep->zones[i];
			struct it_ext_zone *e = &z[cnt];
			memset(e, 0, sizeof(*e));
			e->number = cnt++;
			e->start = b->start * 512;
			e->len = b->len * 512;
#ifdef BLK_ZONE_REP_CAPACITY
			e->capacity = (rep->flags & BLK_ZONE_REP_CAPACITY ? b->capacity : b->len) * 512;
#else
			e->capacity = e->len;
#endif
			e->wp = b->wp * 512;
			e->type = b->type;
			e->cond = b->cond;
			sector = b->start + b->len;
		}
	}
	close(fd);
	free(rep);
	*n = cnt;
	return z;
fail:
	if (fd >= 0)
		close(fd);
	free(rep);
	free(z);
	return NULL;
}

void it_ext_read_zones(struct it_ext_set *s)
{
	for (uint32_t i = 0; i < s->nfiles; i++)
		if (!it_ext_dev_get(s, s->files[i].dev))
			return;
	for (uint32_t i = 0; i < s->ndevs; i++) {
		struct it_ext_dev *d = &s->devs[i];
		char buf[128];
		if (sys_read(d->dev, "uevent", buf, sizeof(buf)))
			continue; /* no block device (btrfs, overlay, NFS): regions */
		/* DEVNAME is uevent's second line or later: read them all */
		char p[128];
		snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/uevent", major(d->dev), minor(d->dev));
		FILE *f = fopen(p, "re");
		while (f && fgets(buf, sizeof(buf), f))
			if (!strncmp(buf, "DEVNAME=", 8)) {
				buf[strcspn(buf, "\n")] = 0;
				buf[8 + sizeof(d->name) - 1] = 0; /* names are short */
				memcpy(d->name, buf + 8, strlen(buf + 8) + 1);
			}
		if (f)
			fclose(f);
		if (!sys_read(d->dev, "size", buf, sizeof(buf)))
			d->size = strtoull(buf, NULL, 10) * 512;
		if (sys_read(d->dev, "queue/zoned", buf, sizeof(buf)) || !strcmp(buf, "none") ||
		    !d->name[0])
			continue;
		const char *why = NULL;
		uint32_t n = 0;
		struct it_ext_zone *z = report_zones(d, &n, &why);
		if (z && n)
			it_ext_dev_set_zones(d, z, n);
		else {
			free(z);
			char msg[160];
			snprintf(msg, sizeof(msg), "its zones could not be read: %s",
				 why ? why : "no zone reported");
			d->why_regions = strdup(msg);
		}
	}
}

/* ---- F2FS's segment types ---- */

#define F2FS_SUPER_OFFSET 1024
#define F2FS_MAGIC 0xF2F52010u

/* The superblock's fields we need (include/linux/f2fs_fs.h, packed,
 * little-endian): main_blkaddr (offset 92) and the block and segment
 * sizes (offsets 16, 20). 0, or -1 when it is not F2FS. */
static int f2fs_geometry(const char *devname, uint32_t *main_blk, uint32_t *log_block,
			 uint32_t *log_seg)
{
	unsigned char sb[128];
	char path[96];
	uint32_t magic;
	int fd;

	snprintf(path, sizeof(path), "/dev/%s", devname);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	ssize_t n = pread(fd, sb, sizeof(sb), F2FS_SUPER_OFFSET);
	close(fd);
	if (n != (ssize_t)sizeof(sb))
		return -1;
	memcpy(&magic, sb, 4);
	memcpy(log_block, sb + 16, 4);
	memcpy(log_seg, sb + 20, 4);
	memcpy(main_blk, sb + 92, 4);
	return magic == F2FS_MAGIC && *log_block >= 9 && *log_block <= 16 && *log_seg <= 16 ? 0 : -1;
}

/* segment_info: two header lines, then per line a first segment number and
 * up to ten "TYPE|VALID" entries. Returns the types (+1; 0 unknown) of
 * segments 0..*n-1 of the main area, or NULL. */
static uint8_t *f2fs_segment_types(const char *devname, uint32_t *n)
{
	char path[128], line[512];
	uint8_t *t = NULL;
	uint32_t cap = 0;
	FILE *f;

	*n = 0;
	snprintf(path, sizeof(path), "/proc/fs/f2fs/%s/segment_info", devname);
	if (!(f = fopen(path, "re")))
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		unsigned long seg = strtoul(p, &end, 10);
		if (end == p)
			continue; /* the header lines */
		for (p = end;; seg++) {
			unsigned long type = strtoul(p, &end, 10);
			if (end == p || *end != '|' || seg >= UINT32_MAX)
				break;
			if (seg >= cap) {
				uint32_t c = cap ? cap * 2 : 4096;
				while (c <= seg)
					c *= 2;
				uint8_t *x = realloc(t, c);
				if (!x)
					goto out;
				memset(x + cap, 0, c - cap);
				t = x;
				cap = c;
			}
			t[seg] = type < 6 ? (uint8_t)(type + 1) : 0;
			if (seg + 1 > *n)
				*n = (uint32_t)seg + 1;
			strtoul(end + 1, &p, 10); /* the valid blocks */
		}
	}
out:
	fclose(f);
	return t;
}

void it_ext_read_f2fs(struct it_ext_set *s)
{
	for (uint32_t i = 0; i < s->ndevs; i++) {
		const struct it_ext_dev *d = &s->devs[i];
		uint32_t main_blk, log_block, log_seg, n;
		uint8_t *types;

		if (!d->name[0] || f2fs_geometry(d->name, &main_blk, &log_block, &log_seg))
			continue;
		if (!(types = f2fs_segment_types(d->name, &n)))
			continue;
		for (uint32_t k = 0; k < s->nfiles; k++) {
			struct it_ext_file *f = &s->files[k];
			if (f->dev != d->dev)
				continue;
			for (uint32_t e = 0; e < f->next; e++) {
				uint64_t blk = f->ext[e].physical >> log_block;
				if (!f->ext[e].placed || blk < main_blk)
					continue;
				uint64_t seg = (blk - main_blk) >> log_seg;
				f->ext[e].f2fs_seg = seg < n ? types[seg] : 0;
			}
		}
		free(types);
	}
}
