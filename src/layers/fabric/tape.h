/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The target machine's side of the fabric, read alongside (two machines,
 * one trace: `iotrail record --target`). A merged file holds machine 0's
 * chunks, then machine 1's: the one pass over machine 0 cannot meet the
 * target's commands in time order. So the join reads the target's chunks
 * with a second reader as machine 0's stream reaches their time, a chunk
 * ahead: its block layer's analyzer runs on them (its completed trails:
 * the backend bios of its commands) and what the fabric join reads of
 * them (nvmet and nvmet-tcp events, bio queue events) is played in stream
 * order, chunk by chunk, its times moved onto machine 0's clock
 * (it_fabric_tape_shift). Memory: one chunk's items and the target's
 * block analyzer's state.
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
struct it_fabric_tape *it_fabric_tape_open(const struct it_pass_info *info,
					   const struct it_machine *machine, char *err,
					   size_t errlen);
void it_fabric_tape_free(struct it_fabric_tape *t);
/* Every time on the tape moved by ns (before it is played). */
void it_fabric_tape_shift(struct it_fabric_tape *t, int64_t ns);
/* Gives f the target's chunks not given yet whose earliest time is at or
 * before until, each whole (it_fabric_settle_target after it), as events
 * of the tape's machine. 0, or -1 when memory ran out. */
int it_fabric_tape_play(struct it_fabric_tape *t, struct it_fabric *f, uint64_t until);
/* Why the target's records ended before their end (a read error), or NULL. */
const char *it_fabric_tape_error(const struct it_fabric_tape *t);
/* The machine it reads. */
uint16_t it_fabric_tape_machine(const struct it_fabric_tape *t);

/* For the first clock guess, the commands of each side, keyed (cntlid,
 * qid, cid) as the join keys them, each on its machine's clock: machine's
 * target commands completed (nvmet: TI, TC), and machine 0's host commands
 * (nvme SUBMIT paired with its COMPLETE: S, N; keyed through the
 * controllers' table). *n of them in a malloc'd array (NULL, *n = 0 when
 * none; NULL with *n = 1 when memory ran out). */
struct it_clock_cmd *it_fabric_target_commands(const char *path, uint16_t machine, size_t *n);
struct it_clock_cmd *it_fabric_host_commands(const char *path, size_t *n);

#endif
