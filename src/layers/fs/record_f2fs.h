/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The fs layer's F2FS tracepoints, recording side (record_f2fs.c). */
#ifndef IOTRAIL_FS_RECORD_F2FS_H
#define IOTRAIL_FS_RECORD_F2FS_H

#include <stdbool.h>
#include <stddef.h>

struct it_session;

/* path lies on an F2FS file system */
bool it_fs_f2fs_path(const char *path);
/* Loads the programs and adds their ring to s->rb. 0, or -1 after a
 * one-line message (no F2FS in this kernel, the kernel refused). */
int it_fs_f2fs_load(struct it_session *s);
/* 0, or -errno with why */
int it_fs_f2fs_attach(char *why, size_t wlen);
void it_fs_f2fs_detach(void);
/* the page-write counts and the losses into the trace. 0 or -errno. */
int it_fs_f2fs_finish(struct it_session *s);
/* ", 12 F2FS events (0 lost)", or "" when not recorded */
void it_fs_f2fs_summary(char *out, size_t len);
void it_fs_f2fs_free(void);

#endif
