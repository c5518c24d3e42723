/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A streaming JSON writer (bpftool's json_writer.c is the model): values
 * go straight to a FILE, commas and indentation are tracked on a nesting
 * stack, strings are escaped. No tree is built, so a report with many
 * groups or a long timeline costs no memory.
 */
#ifndef IOTRAIL_ANALYZE_JSON_WRITER_H
#define IOTRAIL_ANALYZE_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define IT_JSON_MAX_DEPTH 32

struct it_json {
	FILE *f;
	bool pretty;
	bool after_name;           /* a name was written, its value comes next */
	int depth;
	bool nonempty[IT_JSON_MAX_DEPTH];
};

void it_json_init(struct it_json *j, FILE *f, bool pretty);
/* A writer of one value that will be spliced (it_json_splice) into
 * another writer's document where it is depth levels deep, as the value
 * of a member: a long list streamed to a file while the document's other
 * members are still being computed. */
void it_json_init_value(struct it_json *j, FILE *f, bool pretty, int depth);
/* Writes the whole content of src (a value written with a writer from
 * it_json_init_value) as the next value. Returns 0, or -1 when src could
 * not be read back or the output not written. */
int it_json_splice(struct it_json *j, FILE *src);
void it_json_object_start(struct it_json *j);
void it_json_object_end(struct it_json *j);
void it_json_array_start(struct it_json *j);
void it_json_array_end(struct it_json *j);
/* The name of the next member (inside an object). */
void it_json_name(struct it_json *j, const char *name);
void it_json_string(struct it_json *j, const char *s);
/* At most n bytes of s (fixed-size kernel strings need no NUL). */
void it_json_stringn(struct it_json *j, const char *s, size_t n);
void it_json_uint(struct it_json *j, uint64_t v);
void it_json_int(struct it_json *j, int64_t v);
/* Fixed point with up to 6 decimals, trailing zeros trimmed; NaN and
 * infinities (not JSON) are written as 0. */
void it_json_double(struct it_json *j, double v);
void it_json_bool(struct it_json *j, bool v);
void it_json_null(struct it_json *j);

/* name + value in one call */
void it_json_kv_string(struct it_json *j, const char *name, const char *s);
void it_json_kv_uint(struct it_json *j, const char *name, uint64_t v);
void it_json_kv_int(struct it_json *j, const char *name, int64_t v);
void it_json_kv_double(struct it_json *j, const char *name, double v);
void it_json_kv_bool(struct it_json *j, const char *name, bool v);

#endif
