/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Host facts and the block device table for the trace header, read from
 * uname, /proc and sysfs (/sys/block/NAME/...). Also resolves the device
 * names users type (/dev/loop0, loop0, 7:0) to whole-disk dev_t.
 */
#ifndef IOTRAIL_HOSTINFO_H
#define IOTRAIL_HOSTINFO_H

#include <stddef.h>
#include <stdint.h>

#include "iotrail/trace_format.h"

/* Fills hostname, kernel, boot id, clock, CPUs, page size and both start
 * clocks. command/layers/hooks are left to the caller. */
void it_host_fill(struct it_host_rec *host);
/* Joins argv into host->command (truncated with "..." when too long). */
void it_host_set_command(struct it_host_rec *host, int argc, char **argv);
/* Possible CPUs (/sys/devices/system/cpu/possible), at least 1. */
unsigned int it_host_possible_cpus(void);
uint64_t it_clock_ns(int clock_id);

/* Resolves a device given as /dev/NAME, NAME or MAJ:MIN to the kernel
 * encoding of its whole disk (a partition gives its disk). 0 on success,
 * else -errno and a one-line reason in err. */
int it_dev_resolve(const char *spec, uint32_t *dev, char *err, size_t errlen);

/* One device's record from /sys/block/NAME (0 or -errno). */
int it_device_read(const char *name, struct it_device_rec *rec);
/* The table of every block device in /sys/block (ndevs 0) or of the given
 * whole-disk devs: a malloc'd array of *n records, NULL when out of memory.
 * Devices sysfs does not know (a disk removed meanwhile) are left out. */
struct it_device_rec *it_device_table(const uint32_t *devs, size_t ndevs, size_t *n);

/* A disk's completed I/Os over a recording, from /sys/dev/block/M:m/stat
 * (what the kernel itself counts; 0 where this kernel has no such field:
 * discards before 4.19, flushes before 5.5). */
struct it_disk_delta {
	uint32_t dev;
	uint64_t reads, writes, discards, flushes;
};
/* Reads the counters (absolute) into d. 0, or -1 when unreadable. */
int it_diskstats_read(uint32_t dev, struct it_disk_delta *d);

/* Are the given whole disks (every disk when ndevs is 0) idle, per their
 * sysfs inflight counters? 1 idle, 0 some I/O in flight, -1 unreadable. */
int it_devices_idle(const uint32_t *devs, size_t ndevs);

#endif
