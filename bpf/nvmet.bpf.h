/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The NVMe target core's structures as the probes read them (CO-RE against
 * the nvmet module's BTF): the nvmet layer's and the nvmet-tcp layer's.
 * Included by BPF code only.
 */
#ifndef IOTRAIL_NVMET_BPF_H
#define IOTRAIL_NVMET_BPF_H

#include "vmlinux.h"

/* drivers/nvme/target/nvmet.h (nvmet BTF) */
struct nvmet_ctrl___it {
	__u16 cntlid;
} __attribute__((preserve_access_index));

struct nvmet_sq___it {
	struct nvmet_ctrl___it *ctrl;
	__u16 qid;
	bool sqhd_disabled;       /* the host asked for no SQ head updates */
} __attribute__((preserve_access_index));

struct nvmet_ns___it {
	struct block_device *bdev;
} __attribute__((preserve_access_index));

struct nvmet_req___it {
	void *cmd;
	void *cqe;
	struct nvmet_sq___it *sq;
	struct nvmet_ns___it *ns;
	__u32 transfer_len;
} __attribute__((preserve_access_index));

#endif
