// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The block layer as an analysis layer (layer.h): the analyzer over the
 * EVENTS chunks (block, NVMe and zone events: the NVMe and zone views
 * join the open trails event by event, inside the analyzer), the report's
 * frame and block sections (report_text.c, report_json.c). It publishes
 * every completed trail (IT_BUS_TRAIL_DONE) and, after each chunk, the
 * trails still open (IT_BUS_BLOCK_OPEN) and the block watermark
 * (IT_BUS_BLOCK_WATERMARK), and, when someone listens,
 * every completed NVMe command with its trail (IT_BUS_NVME_CMD_DONE).
 * With --group-by role it also reads the syscall layer's title records
 * (SYSSIDE chunks): a role is a process's title (roles.c).
 */
#include <stdlib.h>
#include <string.h>

#include "analyze/layer.h"
#include "analyze/report.h"
#include "layers/syscall/sysan.h"

/* Events come in the file in time order but for a small skew between
 * CPUs (a probe reads the clock, then reserves its ring-buffer record):
 * 30 us at most over the 848k events of a psync fio trace. This margin
 * is far above it: an event read later was stamped at most this much
 * before the latest one read. */
#define SKEW_NS (10ull * 1000000ull)
/* Open trails queued this long before the latest event no longer hold the
 * watermark back (nor their thread's calls, IT_BUS_BLOCK_OPEN): a trail
 * whose completion was lost stays open forever, and the calls waiting for
 * it would pile up. An I/O that does take
 * longer is still counted; only a call it belongs to may have been summed
 * up without it. */
#define HORIZON_NS (60ull * 1000000000ull)

struct block {
	struct it_analyzer *a;
	const struct it_bus *bus;
	bool fed;
	bool zones;
	bool roles;     /* --group-by role: titles wanted */
	struct it_open_trail *open; /* IT_BUS_BLOCK_OPEN's list, ncap room */
	size_t ncap;
};

static void on_trail(const struct it_trail *t, void *ctx)
{
	struct block *b = ctx;
	struct it_bus_trail m = { .t = t, .a = b->a };

	it_bus_publish(b->bus, IT_BUS_TRAIL_DONE, &m);
}

static void on_nvme_cmd(const struct it_nvme_cmd *c, const struct it_trail *t, void *ctx)
{
	struct block *b = ctx;
	struct it_bus_nvme_cmd m = { .c = c, .t = t };

	it_bus_publish(b->bus, IT_BUS_NVME_CMD_DONE, &m);
}

static void *block_new(const struct it_pass_info *info)
{
	struct block *b = calloc(1, sizeof(*b));
	struct it_analyzer_opts o = info->opts->analyzer;

	if (!b)
		return NULL;
	b->bus = info->bus;
	b->zones = info->opts->zones;
	b->roles = memchr(o.keys, IT_KEY_ROLE, o.nkeys) != NULL;
	o.start_ns = info->host->start_monotonic_ns;
	if (!(b->a = it_analyzer_new(&o))) {
		free(b);
		return NULL;
	}
	return b;
}

/* The title records of a SYSSIDE chunk (the other side records are the
 * syscall layer's); a malformed record ends the chunk, as there. */
static int titles_feed(struct block *b, const void *payload, size_t len)
{
	size_t off = 0, reclen;
	const void *rec;

	while ((rec = it_sys_side_next(payload, len, &off, &reclen))) {
		struct it_sys_title t;

		if (*(const uint16_t *)rec != IT_SREC_TITLE || reclen < sizeof(t))
			continue;
		memcpy(&t, rec, sizeof(t));
		if (t.len <= reclen - sizeof(t) &&
		    it_analyzer_title(b->a, t.pid, (const char *)rec + sizeof(t), t.len))
			return -1;
	}
	return 0;
}

/* The trails still open behind the front of the stream (last: its
 * latest event), each with its thread: the ones the syscall layer's calls
 * of that thread may still wait for (IT_BUS_BLOCK_OPEN). Those open longer
 * than the horizon are left out, as from the watermark. */
static int publish_open(struct block *b, uint64_t last)
{
	uint64_t seen = last > SKEW_NS ? last - SKEW_NS : 0;
	uint64_t floor = last > HORIZON_NS ? last - HORIZON_NS : 0;
	size_t n = it_analyzer_open_trails(b->a, floor, seen, b->open, b->ncap);

	if (n > b->ncap) {
		size_t cap = b->ncap ? b->ncap : 64;
		struct it_open_trail *v;

		while (cap < n)
			cap *= 2;
		if (!(v = realloc(b->open, cap * sizeof(*v))))
			return -1;
		b->open = v;
		b->ncap = cap;
		n = it_analyzer_open_trails(b->a, floor, seen, b->open, b->ncap);
	}
	it_bus_publish(b->bus, IT_BUS_BLOCK_OPEN,
		       &(struct it_bus_block_open){ .seen = seen, .open = b->open, .nopen = n });
	return 0;
}

static int block_feed(void *self, uint16_t type, const void *payload, size_t len, uint32_t count)
{
	struct block *b = self;
	const struct it_event *evs = payload;

	if (type == IT_CHUNK_SYSSIDE)
		return b->roles ? titles_feed(b, payload, len) : 0;
	(void)len;
	/* the later layers subscribed when they were built: with no one to
	 * tell, the analyzer makes no call per trail */
	if (!b->fed && it_bus_wanted(b->bus, IT_BUS_TRAIL_DONE))
		it_analyzer_set_on_trail(b->a, on_trail, b);
	if (!b->fed && it_bus_wanted(b->bus, IT_BUS_NVME_CMD_DONE))
		it_analyzer_set_on_nvme_cmd(b->a, on_nvme_cmd, b);
	b->fed = true;
	if (it_analyzer_feed(b->a, evs, count))
		return -1;
	if (count && it_bus_wanted(b->bus, IT_BUS_BLOCK_OPEN) && publish_open(b, evs[count - 1].ts_ns))
		return -1;
	if (count && it_bus_wanted(b->bus, IT_BUS_BLOCK_WATERMARK)) {
		/* every trail queued before wm is complete (or given up) */
		uint64_t last = evs[count - 1].ts_ns;
		uint64_t seen = last > SKEW_NS ? last - SKEW_NS : 0;
		uint64_t open = it_analyzer_oldest_open(b->a, last > HORIZON_NS ? last - HORIZON_NS : 0);
		uint64_t wm = open < seen ? open : seen;

		it_bus_publish(b->bus, IT_BUS_BLOCK_WATERMARK, &wm);
	}
	return 0;
}

static int block_finish(void *self, const struct it_span *span)
{
	struct block *b = self;

	it_analyzer_finish(b->a, span->end_ns);
	return it_analyzer_error(b->a) ? -1 : 0;
}

static const char *block_why(void *self)
{
	return it_analyzer_why(((struct block *)self)->a);
}

static struct it_report_input input(const struct block *b, const struct it_report_ctx *ctx)
{
	return (struct it_report_input){
		.path = ctx->path, .host = ctx->host, .devs = ctx->devs, .ndevs = ctx->ndevs,
		.status = ctx->status, .a = b->a, .r = it_analyzer_results(b->a), .zones = b->zones,
		.task = ctx->task,
	};
}

static void block_text(void *self, FILE *f, const struct it_report_ctx *ctx)
{
	struct it_report_input in = input(self, ctx);

	it_report_text(f, &in);
}

static void block_json(void *self, struct it_json *j, const struct it_report_ctx *ctx)
{
	struct it_report_input in = input(self, ctx);

	it_report_json_members(j, &in);
}

static void block_free(void *self)
{
	struct block *b = self;

	if (!b)
		return;
	it_analyzer_free(b->a);
	free(b->open);
	free(b);
}

const struct it_analyzer *it_layer_block_analyzer(const void *state)
{
	return state ? ((const struct block *)state)->a : NULL;
}

static const uint16_t block_chunks[] = { IT_CHUNK_EVENTS, IT_CHUNK_SYSSIDE };

const struct it_analysis_layer it_layer_block = {
	.name = "block",
	.layer = IT_LAYER_BLOCK,
	.always = true,
	.chunks = block_chunks,
	.nchunks = sizeof(block_chunks) / sizeof(block_chunks[0]),
	.new = block_new,
	.feed = block_feed,
	.finish = block_finish,
	.why = block_why,
	.report_text = block_text,
	.report_json = block_json,
	.free = block_free,
};
