/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * NVMe over Fabrics endpoints (the NVMF chunk): which target machine of a
 * merged trace serves each of the initiator's fabric controllers. record
 * writes each machine's endpoints into its head (it_nvmf_collect); the
 * report maps a controller to the machine whose nvmet port has its
 * transport, address, service id and subsystem (it_nvmf_map). Pure C.
 */
#ifndef IOTRAIL_NVMF_H
#define IOTRAIL_NVMF_H

#include <stddef.h>
#include <stdint.h>

#include "iotrail/trace_format.h"

/* This machine's endpoints: the fabric controllers under sysfs_nvme
 * (/sys/class/nvme; PCIe ones left out) and the nvmet ports under
 * nvmet_ports (/sys/kernel/config/nvmet/ports), one record per port and
 * subsystem it exports. Either root may be missing (no such module: no
 * records). *out is malloc'd (NULL when none); the count, or -1 when
 * memory ran out. */
long it_nvmf_collect(const char *sysfs_nvme, const char *nvmet_ports, struct it_nvmf_rec **out);

/* One machine's endpoints, as the mapping sees them. */
struct it_nvmf_machine {
	uint16_t id;
	const struct it_nvmf_rec *recs;
	size_t n;
};

enum {
	IT_NVMF_UNKNOWN = -1,   /* no machine's port serves it: its target was not recorded */
	IT_NVMF_AMBIGUOUS = -2, /* several machines' ports fit it alike */
};

/* The machine (one of ms[], machine 0 being the initiator's own and left
 * out) serving the host controller c: a port of the same transport,
 * service id and subsystem NQN whose address is c's, or (when none is)
 * a wildcard address (0.0.0.0, ::) on exactly one machine. The machine's
 * id, or IT_NVMF_UNKNOWN / IT_NVMF_AMBIGUOUS. */
int it_nvmf_map(const struct it_nvmf_rec *c, const struct it_nvmf_machine *ms, size_t n);

#endif
