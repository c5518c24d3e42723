/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The target machine's side of the fabric, read ahead (two machines, one
 * trace: `iotrail record --target`). A merged file holds machine 0's
 * chunks, then machine 1's: the one pass over machine 0 cannot meet the
 * target's commands in time order. So before the pass, the target's
 * chunks are read once: its block layer's analyzer runs on them (its
 * completed trails: the backend bios of its commands) and what the
 * fabric join reads of them (nvmet and nvmet-tcp events, bio queue
 * events) is kept in stream order, chunk by chunk: the tape. The join
 * then plays the tape chunk by chunk as machine 0's stream reaches each
 * chunk's time, its times moved onto machine 0's clock (it_fabric_tape_shift).
 * Memory: the target's fabric events and trails (about 64 bytes each).
 */
#ifndef IOTRAIL_LAYERS_FABRIC_TAPE_H
#define IOTRAIL_LAYERS_FABRIC_TAPE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/layer.h"
#include "layers/fabric/clock.h"
#include "layers/fabric/fabric.h"

struct it_fabric_tape;
struct it_machine;

/* machine's side of info->path (info: machine 0's pass). NULL with a
 * reason in err when the file cannot be read or memory ran out. */
struct it_fabric_tape *it_fabric_tape_read(const struct it_pass_info *info,
					   const struct it_machine *machine, char *err,
					   size_t errlen);
void it_fabric_tape_free(struct it_fabric_tape *t);
/* Its target commands completed (nvmet), for the first clock guess: key
 * (cntlid, qid, cid), TI, TC on its clock. *n of them in a malloc'd
 * array (NULL, *n = 0 when none; NULL with *n = 1 when memory ran out). */
struct it_clock_cmd *it_fabric_tape_commands(const struct it_fabric_tape *t, size_t *n);
/* Machine 0's host commands from its nvme events (SUBMIT paired with its
 * COMPLETE, keyed through the controllers' table as the join keys them),
 * the same way. */
struct it_clock_cmd *it_fabric_host_commands(const char *path, size_t *n);
/* Every time on the tape moved by ns. */
void it_fabric_tape_shift(struct it_fabric_tape *t, int64_t ns);
/* Gives f the tape's chunks not given yet whose earliest time is at or
 * before until, each whole (it_fabric_settle_target after it), as events
 * of the tape's machine. 0, or -1 when memory ran out. */
int it_fabric_tape_play(struct it_fabric_tape *t, struct it_fabric *f, uint64_t until);
/* The machine it was read from; the target commands it holds. */
uint16_t it_fabric_tape_machine(const struct it_fabric_tape *t);

#endif
