/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The ClickHouse tables of `iotrail export --format clickhouse`
 * (doc/clickhouse.md prints the same statements): their columns, in the
 * order the exporter writes a row's RowBinary values.
 */
#ifndef IOTRAIL_EXPORT_CLICKHOUSE_H
#define IOTRAIL_EXPORT_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { IT_CH_IOS, IT_CH_CALLS, IT_CH_NVME, IT_CH_FABRIC, IT_CH_PROBES, IT_CH_F2FS, IT_CH_RECORDINGS,
       IT_CH_TABLES };

/* "ios", "calls", "nvme_commands", "fabric_commands", "probes", "f2fs_events",
 * "recordings" */
const char *it_clickhouse_table(unsigned table);
/* The CREATE TABLE IF NOT EXISTS statement of a table in database db: a
 * MergeTree (cluster NULL), or TABLE_all, the Distributed table over the
 * cluster's shards of it. Returns the length (as snprintf). */
int it_clickhouse_create(char *buf, size_t len, unsigned table, const char *db, const char *cluster);
/* A database name the statements may carry as it is: [A-Za-z_][A-Za-z0-9_]*. */
bool it_clickhouse_name_ok(const char *s);

/* For a sink (`record --sink`, sink.c), on the exporter's state: post the
 * rows batched so far now (the sink caught up with the recording), and
 * per table (ios, calls, nvme_commands, fabric_commands, probes, f2fs_events) the rows posted and those not
 * (in a POST that failed, or seen after a failure, or still batched). */
void it_clickhouse_send_now(void *self);
void it_clickhouse_counts(const void *self, uint64_t sent[IT_CH_RECORDINGS],
			  uint64_t unsent[IT_CH_RECORDINGS]);
/* The recording_id of its rows. */
uint64_t it_clickhouse_recording(const void *self);

#endif
