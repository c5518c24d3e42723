// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fs layer on the recording side: `--extents PATH` (repeatable) takes
 * the extents of the files under each PATH (FIEMAP, the walk of `iotrail
 * extents`) when the recording starts and again right before the probes
 * detach, and writes both snapshots into the trace (snapshot.h), so the
 * report can tell where the recording's writes went and which files'
 * blocks moved. The walks need no BPF: user space, twice. The first walk
 * runs in start(), before the trace file is open, so that a PATH that
 * cannot be read fails the recording at once, in one line.
 * No sync is done: data the file system has not allocated yet (delayed
 * allocation) is counted as extents without an address.
 * `--f2fs`, or --extents on an F2FS mount: F2FS's own tracepoints too
 * (GC rounds, checkpoints, the GC's page writes: record_f2fs.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "layer.h"
#include "tracefile.h"
#include "extents/snapshot.h"
#include "layers/fs/record_f2fs.h"

#define OPT_EXTENTS IT_LAYER_OPT(IT_LAYER_FS, 0)
#define OPT_EXTENTS_REGION IT_LAYER_OPT(IT_LAYER_FS, 1)
#define OPT_F2FS IT_LAYER_OPT(IT_LAYER_FS, 2)
#define FS_MAX_PATHS 64

static const struct option options[] = {
	{ "extents", required_argument, NULL, OPT_EXTENTS },
	{ "extents-region", required_argument, NULL, OPT_EXTENTS_REGION },
	{ "f2fs", no_argument, NULL, OPT_F2FS },
	{ 0 },
};

static struct {
	const char *paths[FS_MAX_PATHS];
	size_t npaths;
	uint64_t region;               /* --extents-region; 0: the default */
	struct it_ext_set start;       /* walked in start(), written in begin() */
	uint64_t start_ns, start_walk_ns;
	uint64_t files[2], extents[2];
	int idle_ring;                 /* the empty ring of a recording of this layer alone */
	bool f2fs;                     /* --f2fs: F2FS's tracepoints */
	bool f2fs_on;                  /* recorded (--f2fs, or --extents on F2FS) */
} fs = { .idle_ring = -1 };

static void usage(FILE *f)
{
	fprintf(f,
		"      --extents PATH   the extents (FIEMAP) of the files under PATH at the start\n"
		"                       and at the end of the recording (repeatable; see\n"
		"                       iotrail extents): the report tells where writes went\n"
		"      --extents-region SIZE  region size of unzoned devices (default 256M)\n"
		"      --f2fs           F2FS's tracepoints: GC rounds and the blocks they move,\n"
		"                       checkpoints (also with --extents on an F2FS mount)\n");
}

static int parse(int code, const char *arg)
{
	if (code == OPT_F2FS) {
		fs.f2fs = true;
		return 0;
	}
	if (code == OPT_EXTENTS_REGION) {
		fs.region = it_ext_parse_size(arg);
		if (fs.region < 4096)
			return it_failf(-1, "failed to use --extents-region %s: not a size of at "
					"least 4K; give e.g. 1M or 256M", arg);
		return 0;
	}
	if (fs.npaths == FS_MAX_PATHS)
		return it_failf(-1, "too many --extents: at most %d; give their directory instead",
				FS_MAX_PATHS);
	fs.paths[fs.npaths++] = arg;
	return 0;
}

static int available(char *why, size_t len)
{
	if (fs.npaths || fs.f2fs)
		return 1;
	snprintf(why, len, "no --extents or --f2fs given");
	return 0;
}

static int settle(const struct it_session *s, bool recorded)
{
	(void)s;
	if ((fs.npaths || fs.f2fs) && !recorded)
		return it_failf(-1, "--%s needs the fs layer: add fs to --layers",
				fs.npaths ? "extents" : "f2fs");
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Walks every PATH into s. strict (the start): a PATH that cannot be read
 * is an error (-1 after a one-line message); else (the end: a PATH removed
 * while recording) it is counted as vanished and said. */
static int walk(struct it_ext_set *s, bool strict)
{
	char why[256];

	memset(s, 0, sizeof(*s));
	s->region = fs.region;
	for (size_t i = 0; i < fs.npaths; i++) {
		int err = it_ext_walk(s, fs.paths[i], why, sizeof(why));
		if (err == -ENOMEM)
			return it_failf(-1, "failed to walk --extents %s: out of memory; give fewer "
					"files", fs.paths[i]);
		if (err && strict)
			return it_failf(-1, "failed to read --extents %s: %s; give an existing file "
					"or directory", fs.paths[i], why);
		if (err) {
			fprintf(stderr, "iotrail record: note: --extents %s at the end: %s (counted "
				"as vanished)\n", fs.paths[i], why);
			s->vanished++;
		}
	}
	if (strict && !s->nfiles && s->unsupported)
		return it_failf(-1, "failed to take --extents %s: its file system has no FIEMAP "
				"(tmpfs, for one); give files on a block device's file system",
				fs.paths[0]);
	it_ext_read_zones(s);
	it_ext_read_f2fs(s);
	return 0;
}

static int emit(const void *rec, size_t len, void *ctx)
{
	struct it_session *s = ctx;
	return it_writer_add_record(s->w, 0, IT_LAYER_FS, IT_CHUNK_FS_EXTENTS, rec, len);
}

static int no_records(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/* The recording loop sleeps in ring_buffer__poll on the layers' rings;
 * recorded alone (--layers fs) this layer has none, so it gives the loop
 * an empty one to sleep on. */
static int idle_ring(struct it_session *s)
{
	if (s->rb)
		return 0;
	fs.idle_ring = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "fs_idle", 0, 0, 4096, NULL);
	if (fs.idle_ring < 0)
		return -errno;
	s->rb = ring_buffer__new(fs.idle_ring, no_records, NULL, NULL);
	return s->rb ? 0 : -errno;
}

static int start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	int err;

	(void)why;
	(void)wlen;
	fs.start_ns = now_ns();
	if (fs.npaths && walk(&fs.start, true)) {
		it_ext_set_free(&fs.start);
		return -1;
	}
	fs.start_walk_ns = now_ns() - fs.start_ns;
	fs.f2fs_on = fs.f2fs;
	for (size_t i = 0; i < fs.npaths && !fs.f2fs_on; i++)
		fs.f2fs_on = it_fs_f2fs_path(fs.paths[i]);
	if (fs.f2fs_on && it_fs_f2fs_load(s)) {
		if (fs.f2fs)
			return -1;
		/* asked for by --extents on F2FS, not by --f2fs: the extents alone */
		fprintf(stderr, "iotrail record: note: F2FS's tracepoints are not recorded (the "
			"line above says why); the extents are\n");
		it_fs_f2fs_free();
		fs.f2fs_on = false;
	}
	if ((err = idle_ring(s)))
		return it_failf(-1, "failed to record the fs layer alone: cannot make a ring buffer "
				"(%s); record it with another layer", strerror(-err));
	snprintf(hooks, hlen, "fs=%s%s", fs.npaths ? "fiemap" : "",
		 fs.f2fs_on ? (fs.npaths ? "+f2fs_raw_tp" : "f2fs_raw_tp") : "");
	return 1;
}

static int attach(struct it_session *s, char *why, size_t wlen)
{
	(void)s;
	if (fs.f2fs_on && it_fs_f2fs_attach(why, wlen))
		return it_failf(-1, "%s", why);
	return 1;
}

static void write_snapshot(struct it_session *s, struct it_ext_set *set, unsigned which,
			   uint64_t at, uint64_t took)
{
	int err = s->w ? it_fs_snapshot_write(set, which, at, took, emit, s) : 0;

	if (err && !s->err)
		s->err = err;
	fs.files[which] = set->nfiles;
	fs.extents[which] = set->extents;
	it_ext_set_free(set);
}

static void begin(struct it_session *s)
{
	if (fs.npaths)
		write_snapshot(s, &fs.start, IT_FS_START, fs.start_ns, fs.start_walk_ns);
}

static int before_detach(struct it_session *s)
{
	struct it_ext_set end;
	uint64_t at = now_ns();

	if (!fs.npaths)
		return 0;
	if (walk(&end, false)) {
		it_ext_set_free(&end);
		return -ENOMEM;
	}
	write_snapshot(s, &end, IT_FS_END, at, now_ns() - at);
	return 0;
}

static void summary(char *out, size_t len)
{
	char f2fs[96];

	it_fs_f2fs_summary(f2fs, sizeof(f2fs));
	if (fs.npaths)
		snprintf(out, len, "extents of %llu files at the start, %llu at the end%s",
			 (unsigned long long)fs.files[IT_FS_START],
			 (unsigned long long)fs.files[IT_FS_END], f2fs);
	else
		snprintf(out, len, "%s", f2fs[0] ? f2fs + 2 : "");
}

static int finish(struct it_session *s)
{
	return it_fs_f2fs_finish(s);
}

static void fs_free(void)
{
	it_fs_f2fs_free();
	it_ext_set_free(&fs.start);
	if (fs.idle_ring >= 0)
		close(fs.idle_ring);
	fs.idle_ring = -1;
}

/* F2FS's tracepoints that --f2fs attaches (f2fs.bpf.c, as raw tracepoints
 * of the f2fs module), for `iotrail probe` to list: no program here, the
 * F2FS object loads them itself, and they are optional (--extents alone
 * needs none). */
static const struct it_hook_def f2fs_hooks[] = {
	{ .name = "f2fs_gc_begin", .category = "f2fs", .module = "f2fs", .optional = true },
	{ .name = "f2fs_gc_end", .category = "f2fs", .module = "f2fs", .optional = true },
	{ .name = "f2fs_background_gc", .category = "f2fs", .module = "f2fs", .optional = true },
	{ .name = "f2fs_write_checkpoint", .category = "f2fs", .module = "f2fs", .optional = true },
	{ .name = "f2fs_submit_page_write", .category = "f2fs", .module = "f2fs", .optional = true },
};

const struct it_layer_ops it_fs_layer = {
	.name = "fs",
	.id = IT_LAYER_FS,
	.records = &it_fs_records,
	.what = "file systems (--extents, --f2fs): files' extents at both ends, F2FS's GC, "
		"checkpoints",
	.hooks = f2fs_hooks,
	.nhooks = sizeof(f2fs_hooks) / sizeof(f2fs_hooks[0]),
	.options = options,
	.usage = usage,
	.parse = parse,
	.available = available,
	.settle = settle,
	.start = start,
	.attach = attach,
	.begin = begin,
	.before_detach = before_detach,
	.detach = it_fs_f2fs_detach,
	.finish = finish,
	.summary = summary,
	.free = fs_free,
};
