// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Host facts and the block device table, from uname, /proc and sysfs.
 * Missing sysfs attributes (older kernels, bio-based devices) read as 0 or
 * "": a trace header never fails over a detail.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "hostinfo.h"
#include "iotrail/event.h"

/* Copies src into dst[len], truncating; always terminated. */
static void set_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

uint64_t it_clock_ns(int clock_id)
{
	struct timespec ts;

	clock_gettime(clock_id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* First line of a file without its newline; "" when unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
}

static uint64_t read_u64(const char *path)
{
	char buf[64];

	read_line(path, buf, sizeof(buf));
	return strtoull(buf, NULL, 10);
}

unsigned int it_host_possible_cpus(void)
{
	char buf[256], *p = buf;
	unsigned int n = 0;

	/* "0-3,8-11": count the CPUs in each range */
	read_line("/sys/devices/system/cpu/possible", buf, sizeof(buf));
	while (*p) {
		unsigned long a = strtoul(p, &p, 10), b = a;

		if (*p == '-')
			b = strtoul(p + 1, &p, 10);
		n += b >= a ? b - a + 1 : 0;
		if (*p != ',')
			break;
		p++;
	}
	return n ? n : 1;
}

void it_host_fill(struct it_host_rec *host)
{
	struct utsname u;
	uint64_t m0, m1;

	memset(host, 0, sizeof(*host));
	gethostname(host->hostname, sizeof(host->hostname) - 1);
	if (!uname(&u))
		set_str(host->kernel, sizeof(host->kernel), u.release);
	read_line("/proc/sys/kernel/random/boot_id", host->boot_id, sizeof(host->boot_id));
	snprintf(host->clock, sizeof(host->clock), "monotonic");
	host->ncpus = it_host_possible_cpus();
	host->page_size = sysconf(_SC_PAGESIZE);
	/* realtime read between two monotonic reads: the pair is off by at
	 * most half the gap */
	m0 = it_clock_ns(CLOCK_MONOTONIC);
	host->start_realtime_ns = it_clock_ns(CLOCK_REALTIME);
	m1 = it_clock_ns(CLOCK_MONOTONIC);
	host->start_monotonic_ns = m0 + (m1 - m0) / 2;
}

void it_host_set_command(struct it_host_rec *host, int argc, char **argv)
{
	size_t len = sizeof(host->command), off = 0;

	host->command[0] = '\0';
	for (int i = 0; i < argc && off < len; i++) {
		int n = snprintf(host->command + off, len - off, "%s%s", i ? " " : "", argv[i]);

		off += n > 0 ? (size_t)n : 0;
	}
	if (off >= len)
		memcpy(host->command + len - 4, "...", 4);
}

/* ---- devices ---- */

/* sysfs name of a whole-disk or partition dev_t, via /sys/dev/block. For a
 * partition, its parent directory is the disk. */
static int dev_to_disk(unsigned int maj, unsigned int min, char *name, size_t len,
		       uint32_t *dev)
{
	char path[128], link[512], buf[32], *base;
	unsigned int dmaj, dmin;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", maj, min);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", maj, min);
	if (!access(path, F_OK)) {
		base = strrchr(link, '/');
		if (base)
			*base = '\0'; /* .../block/sda/sda1 -> .../block/sda */
	}
	base = strrchr(link, '/');
	set_str(name, len, base ? base + 1 : link);
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	read_line(path, buf, sizeof(buf));
	if (sscanf(buf, "%u:%u", &dmaj, &dmin) != 2)
		return -ENODEV;
	*dev = IT_MKDEV(dmaj, dmin);
	return 0;
}

/* nvmeSnN with a hidden path disk nvmeScCnN beside it (native multipath):
 * true, with the first path's name. */
static bool multipath_head(const char *name, char *path, size_t len)
{
	unsigned int subsys, ns, s2, c, n2;
	char tail;
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (sscanf(name, "nvme%un%u%c", &subsys, &ns, &tail) != 2 || !(d = opendir("/sys/block")))
		return false;
	while (!found && (de = readdir(d)))
		if (sscanf(de->d_name, "nvme%uc%un%u%c", &s2, &c, &n2, &tail) == 3 && s2 == subsys &&
		    n2 == ns) {
			set_str(path, len, de->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

int it_dev_resolve(const char *spec, uint32_t *dev, char *err, size_t errlen)
{
	unsigned int maj, min;
	char path[300], name[64], mpath[64], buf[32], extra;
	struct stat st;
	int rc;

	if (sscanf(spec, "%u:%u%c", &maj, &min, &extra) == 2) {
		/* MAJ:MIN */
	} else if (strchr(spec, '/')) {
		if (stat(spec, &st)) {
			snprintf(err, errlen, "%s: %s", spec, strerror(errno));
			return -errno;
		}
		if (!S_ISBLK(st.st_mode)) {
			snprintf(err, errlen, "%s is not a block device", spec);
			return -ENOTBLK;
		}
		maj = major(st.st_rdev);
		min = minor(st.st_rdev);
	} else {
		snprintf(path, sizeof(path), "/sys/class/block/%s/dev", spec);
		read_line(path, buf, sizeof(buf));
		if (sscanf(buf, "%u:%u", &maj, &min) != 2) {
			snprintf(err, errlen, "no block device named %s", spec);
			return -ENODEV;
		}
	}
	rc = dev_to_disk(maj, min, name, sizeof(name), dev);
	if (rc)
		snprintf(err, errlen, "no block device %u:%u", maj, min);
	else if (multipath_head(name, mpath, sizeof(mpath)))
		return snprintf(err, errlen, "%s is a native NVMe multipath head: its requests run on "
				"the hidden path disk %s, which has no device number to filter on; record "
				"without --dev", name, mpath), -EINVAL;
	return rc;
}

/* "[mq-deadline] none" -> "mq-deadline" */
static void active_scheduler(const char *dir, char *out, size_t len)
{
	char path[300], buf[256], *a, *b;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/queue/scheduler", dir);
	read_line(path, buf, sizeof(buf));
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b) {
		*b = '\0';
		snprintf(out, len, "%s", a + 1);
	} else if (!strcmp(buf, "none")) {
		snprintf(out, len, "none");
	}
}

static uint32_t zoned_model(const char *dir)
{
	char path[300], buf[32];

	snprintf(path, sizeof(path), "%s/queue/zoned", dir);
	read_line(path, buf, sizeof(buf));
	return !strcmp(buf, "host-aware") ? 1 : !strcmp(buf, "host-managed") ? 2 : 0;
}

int it_device_read(const char *name, struct it_device_rec *rec)
{
	char dir[128], path[300], buf[64];
	unsigned int maj, min;

#define Q(attr) (snprintf(path, sizeof(path), "%s/queue/" attr, dir), read_u64(path))
	memset(rec, 0, sizeof(*rec));
	snprintf(dir, sizeof(dir), "/sys/block/%s", name);
	snprintf(path, sizeof(path), "%s/dev", dir);
	read_line(path, buf, sizeof(buf));
	if (sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -ENODEV;
	rec->dev = IT_MKDEV(maj, min);
	snprintf(rec->name, sizeof(rec->name), "%s", name);
	snprintf(path, sizeof(path), "%s/device/model", dir);
	read_line(path, rec->model, sizeof(rec->model));
	/* request-based devices have an mq/ directory; bio-based ones do not */
	snprintf(path, sizeof(path), "%s/mq", dir);
	rec->blk_mq = !access(path, F_OK);
	if (rec->blk_mq)
		active_scheduler(dir, rec->scheduler, sizeof(rec->scheduler));
	rec->logical_block_size = Q("logical_block_size");
	rec->physical_block_size = Q("physical_block_size");
	rec->max_sectors_kb = Q("max_sectors_kb");
	rec->max_hw_sectors_kb = Q("max_hw_sectors_kb");
	rec->nr_requests = rec->blk_mq ? Q("nr_requests") : 0;
	rec->optimal_io_size = Q("optimal_io_size");
	rec->rotational = Q("rotational");
	rec->zoned = zoned_model(dir);
	rec->nr_zones = Q("nr_zones");
	rec->zone_sectors = Q("chunk_sectors");
	snprintf(path, sizeof(path), "%s/size", dir);
	rec->size_sectors = read_u64(path);
#undef Q
	return 0;
}

static struct it_device_rec *append(struct it_device_rec *tab, size_t *n, const char *name)
{
	struct it_device_rec *t = realloc(tab, (*n + 1) * sizeof(*t));

	if (!t) {
		free(tab);
		return NULL;
	}
	if (!it_device_read(name, &t[*n]))
		(*n)++;
	return t;
}

struct it_device_rec *it_device_table(const uint32_t *devs, size_t ndevs, size_t *n)
{
	struct it_device_rec *tab = malloc(sizeof(*tab));
	char name[64];
	struct dirent *de;
	DIR *d;

	*n = 0;
	if (!tab)
		return NULL;
	if (ndevs) {
		for (size_t i = 0; i < ndevs && tab; i++) {
			uint32_t dev;

			if (!dev_to_disk(IT_DEV_MAJOR(devs[i]), IT_DEV_MINOR(devs[i]), name,
					 sizeof(name), &dev))
				tab = append(tab, n, name);
		}
		return tab;
	}
	d = opendir("/sys/block");
	if (!d)
		return tab;
	while (tab && (de = readdir(d)))
		if (de->d_name[0] != '.')
			tab = append(tab, n, de->d_name);
	closedir(d);
	return tab;
}

/* "reads writes" in flight on one disk: 1 idle, 0 busy, -1 unreadable. */
static int inflight_idle(const char *path)
{
	unsigned long r, w;
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%lu %lu", &r, &w);
	fclose(f);
	return n == 2 ? !(r + w) : -1;
}

int it_diskstats_read(uint32_t dev, struct it_disk_delta *d)
{
	unsigned long long v[17] = { 0 };
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat", IT_DEV_MAJOR(dev), IT_DEV_MINOR(dev));
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
		   "%llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
		   &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16]);
	fclose(f);
	if (n < 11)
		return -1;
	/* Documentation/block/stat.rst: reads 0, writes 4, discards 11, flushes 15 */
	*d = (struct it_disk_delta){ .dev = dev, .reads = v[0], .writes = v[4], .discards = v[11],
				     .flushes = v[15] };
	return 0;
}

int it_devices_idle(const uint32_t *devs, size_t ndevs)
{
	char path[300];
	int idle = 1, rc;

	if (ndevs) {
		for (size_t i = 0; i < ndevs && idle > 0; i++) {
			snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/inflight",
				 IT_DEV_MAJOR(devs[i]), IT_DEV_MINOR(devs[i]));
			rc = inflight_idle(path);
			idle = rc < idle ? rc : idle;
		}
		return idle;
	}
	DIR *d = opendir("/sys/block");
	struct dirent *de;

	if (!d)
		return -1;
	while (idle > 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/inflight", de->d_name);
		rc = inflight_idle(path);
		idle = rc < idle ? rc : idle;
	}
	closedir(d);
	return idle;
}
