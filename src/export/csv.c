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
#include <string.h>

#include "analyze/nvme.h"
#include "export/csv.h"

const char it_csv_nvme_header[] =
	"start_time_ns,end_time_ns,latency_ns,process_name,pid,device,qid,slba,length_bytes,"
	"length_lbas,opcode,opcode_name,ctrl,cid,tag,nsid,status,result,inflight_at_submit,tid,"
	"dsm_ranges,cqe_time_ns";

struct csv_ctx {
	FILE *out;
	struct it_reader *rd;
	int64_t rows;
};

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
	const struct it_device_rec *d = c->dev ? it_reader_device(x->rd, c->dev) : NULL;
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

int64_t it_export_nvme_csv(struct it_reader *rd, FILE *out, char *err, size_t errlen)
{
	struct csv_ctx x = { .out = out, .rd = rd };
	struct it_nvme_opts o = { .start_ns = it_reader_host(rd)->start_monotonic_ns,
				  .on_cmd = on_cmd, .ctx = &x };
	struct it_nvme *n = it_nvme_new(&o);
	const struct it_event *evs;
	size_t cnt;
	int rc;

	if (!n) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	fprintf(out, "%s\n", it_csv_nvme_header);
	while ((rc = it_reader_next(rd, &evs, &cnt)) > 0)
		for (size_t i = 0; i < cnt; i++)
			if (it_nvme_feed(n, &evs[i])) {
				snprintf(err, errlen, "out of memory");
				it_nvme_free(n);
				return -1;
			}
	if (rc < 0) {
		snprintf(err, errlen, "%s", it_reader_error(rd));
		it_nvme_free(n);
		return -1;
	}
	it_nvme_finish(n, 0);
	it_nvme_free(n);
	return x.rows;
}
