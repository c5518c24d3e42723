/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* State shared by the analyzer's files (stitch.c, aggregate.c, analyzer.c). */
#ifndef IOTRAIL_ANALYZE_INTERNAL_H
#define IOTRAIL_ANALYZE_INTERNAL_H

#include <stdbool.h>

#include "analyze/analyzer.h"
#include "analyze/hashmap.h"
#include "analyze/nvme.h"
#include "analyze/zones.h"

enum slot_state {
	SLOT_FREE = 0,
	SLOT_QUEUED,    /* bio queued, not yet seen in a request: keyed by bio */
	SLOT_INSERTED,  /* request inserted (or requeued): keyed by request */
	SLOT_ISSUED,    /* request at the driver */
};

/* An open trail. Slots live in one growing array and are recycled through
 * a free list: no allocation per event. */
struct slot {
	struct it_trail t;
	uint64_t bio;        /* key in a->bios while SLOT_QUEUED */
	uint64_t rq;         /* key in a->rqs once linked to a request */
	uint64_t end;        /* first sector after the I/O: merge adjacency */
	uint32_t remaining;  /* bytes still to complete (set at issue) */
	uint32_t next_free;
	uint32_t devidx;
	uint8_t state;       /* enum slot_state */
	uint8_t indexed;     /* in a->by_start / a->by_end (mergeable) */
	uint8_t active;      /* counted in devstate.active */
	uint8_t issued;      /* counted in devstate.issued */
	uint8_t fseq_data;   /* its data part of a flush sequence completed */
};

/* Stitching state of one device. */
struct devstate {
	uint32_t active;     /* requests inserted or issued, not completed */
	uint32_t issued;     /* requests issued, not completed nor requeued */
	uint64_t last_end[IT_OP_MAX]; /* end sector of the previous issue, per op */
	/* The merge index is kept for a device only once it sees its first
	 * merge: a device without merges (random direct I/O) pays nothing. */
	bool indexing;
	/* timeline interval of the last completion: [tl_lo, tl_hi) is tl_idx */
	uint64_t tl_lo, tl_hi;
	uint64_t tl_idx;
};

#define IT_SMALL_DEVS 8 /* the first devices are found by a linear scan */

/* After a device is added: every timeline within the intervals each
 * device may have with this many devices (aggregate.c). */
void it_timeline_fit(struct it_analyzer *a);

struct it_analyzer {
	struct it_analyzer_opts o;
	int err;
	bool finished;
	bool too_many_devs;                /* a device beyond IT_DEVS_MAX: err is set */
	uint32_t tl_limit;                 /* timeline intervals per device (timeline_limit) */

	/* trails */
	struct slot *slots;
	uint32_t nslots, free_head;
	struct it_map bios, rqs;           /* bio / request pointer -> slot */
	struct it_map by_start, by_end;    /* (device, sector) -> mergeable slot */
	struct it_map fseq_done;           /* PREFLUSH/FUA request ended (old traces) -> 1 */

	/* devices, by index in the order first seen */
	struct it_map devmap;              /* dev -> index */
	struct devstate *ds;
	struct it_dev_stats *dst;
	uint32_t ndevs, devcap;
	uint32_t last_dev, last_devidx;
	uint32_t small_devs[IT_SMALL_DEVS];

	/* comms */
	struct it_map tids;                /* tid -> comm id */
	struct it_map commmap;             /* hash of the name -> comm id */
	char (*comms)[16];                 /* comm id -> name; id 0 is "" */
	uint32_t ncomms, commcap;
	uint32_t last_tid, last_comm;

	/* process titles and roles (roles.c) */
	struct it_map titlemap;            /* pid + 1 -> index in titles */
	char **titles;
	uint32_t ntitles, titlecap;
	char **roles;                      /* role id -> name */
	uint32_t nroles, rolecap;

	/* groups */
	struct it_map groupmap;            /* hash of the key -> group index */
	/* opts.distinct: (group index, value) seen, per key; a file's value
	 * is its id in file_ids ((fs dev, inode) -> 1, 2, ...) */
	struct it_map group_distinct[IT_DISTINCT_MAX];
	struct it_map file_ids;
	uint32_t nfiles;
	struct it_map epochs;              /* opts.epoch_ns: epochs of Q times seen */
	struct it_group *groups;
	uint32_t ngroups, groupcap;
	uint32_t keymask;                  /* 1 << IT_KEY_x for the keys used */
	uint32_t packmask;                 /* those packed while trails come: the role
					    * key packs pid and comm (roles.c) */
	uint64_t last_k0, last_k1;         /* packed key of last_group */
	uint32_t last_group;

	struct it_results res;
	struct it_stitch_stats st;

	/* NVMe layer (nvme_link.c); both set up at the first NVMe event */
	struct it_nvme *nvme;              /* the command analyzer */
	struct it_map nvme_pending;        /* request -> NVMe submit time, until its D */
	/* with on_nvme_cmd: completed commands waiting for their trail's C */
	void (*on_nvme_cmd)(const struct it_nvme_cmd *c, const struct it_trail *t, void *ctx);
	void *nvme_cmd_ctx;
	struct it_map nvme_done;           /* request -> index in done_cmds */
	struct it_nvme_cmd *done_cmds;     /* free ones chained through their rq field */
	uint32_t ndone, donecap, done_free;
	struct it_zones *zones;            /* zoned devices (zones.c): at the first zone record */
	struct it_diskstats *disk;         /* IT_EV_DISKSTATS, in file order */
	struct it_task_counted task;       /* IT_EV_TASK_COUNTS */
	size_t ndisk;
	/* the diskstats window (diskwin.c): 0 / UINT64_MAX until known */
	uint64_t win_from, win_to;
	bool win_scoped;
	struct it_diskwin *win;            /* per device, in the order seen */
	uint32_t nwin;
};

/* diskwin.c */
enum it_ds_how { IT_DS_COUNTED, IT_DS_REUSED, IT_DS_UNSTARTED };
void it_diskwin_from(struct it_analyzer *a, const struct it_event *e);
void it_diskwin_to(struct it_analyzer *a, uint64_t ts);
void it_diskwin_add(struct it_analyzer *a, uint32_t dev, int cls, uint64_t ts,
		    enum it_ds_how how);
void it_diskwin_finish(struct it_analyzer *a);

#define IT_NO_SLOT IT_MAP_NONE

/* stitch.c */
uint32_t it_dev_index(struct it_analyzer *a, uint32_t dev);
void it_stitch_event(struct it_analyzer *a, const struct it_event *e);
void it_stitch_count_open(struct it_analyzer *a);
/* nvme_link.c */
void it_nvme_link_event(struct it_analyzer *a, const struct it_event *e);
void it_nvme_link_issue(struct it_analyzer *a, uint32_t slot, const struct it_event *e);
void it_nvme_link_trail(struct it_analyzer *a, const struct it_trail *t, uint64_t rq);
void it_nvme_link_finish(struct it_analyzer *a);
/* zones.c */
void it_zones_link_info(struct it_analyzer *a, const struct it_event *e);
/* aggregate.c */
void it_aggregate(struct it_analyzer *a, const struct it_trail *t, uint32_t devidx);
void it_aggregate_finish(struct it_analyzer *a);
/* roles.c: each group's role from its pid and comm (with the role key) */
void it_roles_label(struct it_analyzer *a);
void it_roles_free(struct it_analyzer *a);

#endif
