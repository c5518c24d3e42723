// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail export --format csv`: one row per NVMe command, the columns of
 * the per-command tools NVMe engineers use (start_time_ns ... opcode, the
 * opcode as its NVMe number), then iotrail's extras. Times are the trace's
 * CLOCK_MONOTONIC ns. LBAs are in the namespace's logical blocks (from the
 * device table); a DSM row gives its first range's LBA and the bytes of
 * all its ranges. Admin commands have device "nvmeN" and no LBAs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/nvme.h"
#include "export/exporter.h"

static const char header[] =
	"start_time_ns,end_time_ns,latency_ns,process_name,pid,device,qid,slba,length_bytes,"
	"length_lbas,opcode,opcode_name,ctrl,cid,tag,nsid,status,result,inflight_at_submit,tid,"
	"dsm_ranges,cqe_time_ns";

struct csv_ctx {
	FILE *out;
	const struct it_device_rec *devs;
	size_t ndevs;
	struct it_nvme *n;
	int64_t rows;
};

static const struct it_device_rec *device(const struct csv_ctx *x, uint32_t dev)
{
	for (size_t i = 0; i < x->ndevs; i++)
		if (x->devs[i].dev == dev)
			return &x->devs[i];
	return NULL;
}

/* A comm in CSV: quoted when it holds a comma, quote or newline. */
static void put_comm(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void on_cmd(const struct it_nvme_cmd *c, void *p)
{
	struct csv_ctx *x = p;
	const struct it_device_rec *d = c->dev ? device(x, c->dev) : NULL;
	uint32_t lbs = d && d->logical_block_size ? d->logical_block_size : 512;
	uint64_t slba = c->slba, bytes = c->bytes, nlb = c->nlb;
	char dev[40], name[32];
	bool admin = c->qid == 0;

	if (d)
		snprintf(dev, sizeof(dev), "%s", d->name);
	else if (admin || !c->dev)
		snprintf(dev, sizeof(dev), "nvme%u", c->ctrl);
	else
		snprintf(dev, sizeof(dev), "%u:%u", IT_DEV_MAJOR(c->dev), IT_DEV_MINOR(c->dev));
	if (!admin && c->opcode == IT_NVME_DSM) {
		slba = c->range_sector * 512 / lbs;
		bytes = c->range_bytes;
		nlb = c->range_bytes / lbs;
	}
	fprintf(x->out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", c->submit_ns, c->complete_ns,
		c->complete_ns > c->submit_ns ? c->complete_ns - c->submit_ns : 0);
	put_comm(x->out, c->comm);
	fprintf(x->out, ",%u,%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%s,%u,%u,%u,%u,%u,%" PRIu64
		",%u,%u,%u,%" PRIu64 "\n", c->pid, dev, c->qid, slba, bytes, nlb, c->opcode,
		it_nvme_opcode_name(c->opcode, admin, name, sizeof(name)), c->ctrl, c->cid,
		c->cid & 0xfffu, c->nsid, c->status, c->result, c->qd, c->tid, c->nranges, c->cqe_ns);
	x->rows++;
}

static void csv_free(void *self)
{
	struct csv_ctx *x = self;

	if (!x)
		return;
	it_nvme_free(x->n);
	free(x);
}

static void *csv_open(FILE *out, const struct it_pass_info *info)
{
	struct csv_ctx *x = calloc(1, sizeof(*x));
	struct it_nvme_opts o = { .start_ns = info->host->start_monotonic_ns, .on_cmd = on_cmd };

	if (!x)
		return NULL;
	x->out = out;
	x->devs = info->devs;
	x->ndevs = info->ndevs;
	o.ctx = x;
	if (!(x->n = it_nvme_new(&o))) {
		csv_free(x);
		return NULL;
	}
	fprintf(out, "%s\n", header);
	return x;
}

static int csv_feed(void *self, uint16_t type, const void *payload, size_t len, uint32_t count)
{
	struct csv_ctx *x = self;
	const struct it_event *evs = payload;

	(void)type;
	(void)len;
	for (uint32_t i = 0; i < count; i++)
		if (it_nvme_feed(x->n, &evs[i]))
			return -1;
	return 0;
}

static int64_t csv_finish(void *self)
{
	struct csv_ctx *x = self;

	it_nvme_finish(x->n, 0);
	return x->rows;
}

static const uint16_t csv_chunks[] = { IT_CHUNK_EVENTS };

const struct it_exporter it_export_csv = {
	.name = "csv",
	.what = "every NVMe command as one CSV row (in completion order):\n"
		"start_time_ns,end_time_ns,latency_ns,process_name,pid,device,qid,slba,\n"
		"length_bytes,length_lbas,opcode, then opcode_name,ctrl,cid,tag,nsid,status,\n"
		"result,inflight_at_submit,tid,dsm_ranges. Times are CLOCK_MONOTONIC ns as\n"
		"recorded; opcode is the NVMe opcode number; LBAs are logical blocks.",
	.none = "NVMe commands (recorded without the NVMe layer, or no NVMe device)",
	.chunks = csv_chunks,
	.nchunks = sizeof(csv_chunks) / sizeof(csv_chunks[0]),
	.open = csv_open,
	.feed = csv_feed,
	.finish = csv_finish,
	.free = csv_free,
	.kind = "nvme",
};
