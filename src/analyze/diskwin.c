/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Reconciliation with the kernel's own counts. The recorder reads
 * /sys/block/DEV/stat right after the probes attach (IT_EV_DISKSTATS_FROM:
 * its time) and right before they detach (IT_EV_DISKSTATS: its time and
 * what each busy device completed between the two reads). Here every
 * completion in that window is counted per device and per class as
 * diskstats counts them, by how iotrail knows of it: seen by a probe and
 * counted as an I/O (a flush command for the flush class), counted from
 * its request's reuse (no probe saw it, stitch.c), or seen but not an I/O
 * (its start was not recorded: in flight at the start, or its events
 * dropped). The kernel's count minus the I/Os counted is what iotrail's
 * totals lack: 0 when they are exact. Events after the IT_EV_DISKSTATS
 * record in the file may be newer than its read: only those up to its
 * time count.
 */
#include <stdlib.h>

#include "analyze/internal.h"

/* Devices counted in the window: a recording has a few; a damaged or
 * forged trace naming thousands more does not make every completion a
 * long search (the rest are not counted: they cannot be in the file's
 * diskstats of a real recording). */
#define DISKWIN_DEVS 64

int it_ds_class(uint8_t op, bool flush_cmd)
{
	if (flush_cmd)
		return IT_DS_FLUSH;
	switch (op) {
	case IT_OP_READ:
	case IT_OP_ZONE_OPEN:   /* an even REQ_OP: op_is_write() says read */
	case IT_OP_ZONE_FINISH:
		return IT_DS_READ;
	case IT_OP_DISCARD:
		return IT_DS_DISCARD;
	case IT_OP_DRV_IN:      /* passthrough: not in diskstats */
	case IT_OP_DRV_OUT:
	case IT_OP_OTHER:
		return -1;
	default:                /* writes, and a data-less PREFLUSH write (op flush) */
		return IT_DS_WRITE;
	}
}

void it_diskwin_from(struct it_analyzer *a, const struct it_event *e)
{
	a->win_from = e->ts_ns ? e->ts_ns : 1;
	a->win_scoped = e->flags & IT_DSF_SCOPED;
}

void it_diskwin_to(struct it_analyzer *a, uint64_t ts)
{
	if (ts < a->win_to)
		a->win_to = ts;
}

void it_diskwin_add(struct it_analyzer *a, uint32_t dev, int cls, uint64_t ts,
		    enum it_ds_how how)
{
	struct it_diskwin *w = NULL;

	if (cls < 0 || !a->win_from || ts < a->win_from || ts > a->win_to)
		return;
	for (uint32_t i = 0; i < a->nwin && !w; i++)
		if (a->win[i].dev == dev)
			w = &a->win[i];
	if (!w) {
		if (a->nwin == DISKWIN_DEVS)
			return;
		if (!a->win && !(a->win = calloc(DISKWIN_DEVS, sizeof(*a->win)))) {
			a->err = -1;
			return;
		}
		w = &a->win[a->nwin++];
		w->dev = dev;
	}
	if (how == IT_DS_UNSTARTED) {
		w->unstarted[cls]++;
		return;
	}
	w->counted[cls]++; /* from reuse too: counted as an I/O all the same */
	w->reused[cls] += how == IT_DS_REUSED;
}

void it_diskwin_finish(struct it_analyzer *a)
{
	struct it_results *r = &a->res;

	r->disk_window = a->win_from && a->win_to != UINT64_MAX;
	r->disk_scoped = a->win_scoped;
	r->disk_from_ns = a->win_from;
	r->disk_to_ns = r->disk_window ? a->win_to : 0;
	for (size_t k = 0; k < a->ndisk; k++)
		for (uint32_t i = 0; i < a->nwin; i++)
			if (a->win[i].dev == a->disk[k].dev)
				a->disk[k].win = a->win[i];
}

uint64_t it_diskstats_kernel(const struct it_diskstats *d, int cls)
{
	switch (cls) {
	case IT_DS_READ: return d->reads;
	case IT_DS_WRITE: return d->writes;
	case IT_DS_FLUSH: return d->flushes;
	default: return d->discards;
	}
}

uint64_t it_diskwin_short(const struct it_diskstats *d, int cls)
{
	uint64_t k = it_diskstats_kernel(d, cls), c = d->win.counted[cls];

	return k > c ? k - c : 0;
}

uint64_t it_diskwin_over(const struct it_diskstats *d, int cls)
{
	uint64_t k = it_diskstats_kernel(d, cls), c = d->win.counted[cls];

	return c > k ? c - k : 0;
}

uint64_t it_diskwin_short_total(const struct it_results *r)
{
	uint64_t n = 0;

	if (!r->disk_window || r->disk_scoped)
		return 0;
	for (size_t k = 0; k < r->ndisk; k++)
		for (int c = 0; c < IT_DS_MAX; c++)
			n += it_diskwin_short(&r->disk[k], c);
	return n;
}
