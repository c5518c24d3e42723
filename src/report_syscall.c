// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer's passes over a trace file for `iotrail report`: the
 * side records (paths, names, comms) and the losses first, then the call
 * records. Each pass opens a records reader that steps over the other
 * chunks without reading them, so a pass costs little beyond its own data.
 */
#include <stdio.h>
#include <string.h>

#include "report_syscall.h"
#include "tracefile.h"

void report_sys_on_trail(const struct it_trail *t, void *ctx)
{
	it_sysan_trail(ctx, t);
}

static int side_pass(const char *path, struct it_sysan *s, uint64_t *dropped, char *err,
		     size_t errlen)
{
	static const uint16_t types[] = { IT_CHUNK_SYSSIDE };
	struct it_reader *r = it_reader_open_records(path, types, 1, err, errlen);
	struct it_losses lost;
	const void *p;
	uint16_t type;
	uint32_t count;
	size_t len;
	int rc;

	if (!r)
		return -1;
	*dropped = 0;
	while ((rc = it_reader_next_records(r, &type, &p, &len, &count)) > 0) {
		size_t off = 0, reclen;
		const void *rec;

		/* a malformed record ends its chunk: the rest cannot be framed */
		while ((rec = it_sys_side_next(p, len, &off, &reclen)))
			if (it_sysan_side(s, rec, reclen) && it_sysan_error(s))
				break;
	}
	if (rc < 0)
		snprintf(err, errlen, "%s", it_reader_error(r));
	/* the layer's DROPS chunk: read by the reader on the way */
	it_reader_losses(r, 0, IT_LAYER_SYSCALL, &lost);
	*dropped = lost.total;
	it_reader_close(r);
	return rc < 0 ? -1 : 0;
}

static int call_pass(const char *path, struct it_sysan *s, char *err, size_t errlen)
{
	static const uint16_t types[] = { IT_CHUNK_SYSCALLS };
	struct it_reader *r = it_reader_open_records(path, types, 1, err, errlen);
	const void *p;
	uint16_t type;
	uint32_t count;
	size_t len;
	int rc;

	if (!r)
		return -1;
	while ((rc = it_reader_next_records(r, &type, &p, &len, &count)) > 0) {
		if (it_sysan_calls(s, p, count)) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
	}
	if (rc < 0 && !*err)
		snprintf(err, errlen, "%s", it_reader_error(r));
	it_reader_close(r);
	return rc < 0 ? -1 : 0;
}

/* The last exit of the calls: the span of a trace cut short (no END). */
static uint64_t last_exit(const char *path)
{
	static const uint16_t types[] = { IT_CHUNK_SYSCALLS };
	char err[256];
	struct it_reader *r = it_reader_open_records(path, types, 1, err, sizeof(err));
	const struct it_sys_event *e;
	uint64_t last = 0;
	uint16_t type;
	uint32_t count;
	size_t len;

	if (!r)
		return 0;
	while (it_reader_next_records(r, &type, (const void **)&e, &len, &count) > 0)
		for (uint32_t i = 0; i < count; i++)
			last = e[i].ts_exit > last ? e[i].ts_exit : last;
	it_reader_close(r);
	return last;
}

int report_sys_read(const char *path, struct it_sysan *s, uint64_t start_ns, uint64_t end_ns,
		    uint64_t *dropped, char *err, size_t errlen)
{
	*err = 0;
	if (end_ns <= start_ns)
		end_ns = last_exit(path);
	if (side_pass(path, s, dropped, err, errlen))
		return -1;
	it_sysan_index(s, start_ns, end_ns);
	if (call_pass(path, s, err, errlen))
		return -1;
	it_sysan_finish(s);
	if (it_sysan_error(s)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}
