/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Streaming JSON writer: see json_writer.h. */
#include "analyze/json_writer.h"

#include <math.h>
#include <string.h>

/* One writer owns its FILE: the stream's lock per character (fputc) was
 * a fifth of `report --json --events`. */
#define PUTC(c, f) putc_unlocked(c, f)
#define PUTS(s, f) fputs_unlocked(s, f)
#define WRITE(p, n, f) fwrite_unlocked(p, 1, n, f)

void it_json_init(struct it_json *j, FILE *f, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

static void newline(struct it_json *j)
{
	if (!j->pretty)
		return;
	PUTC('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		PUTS("  ", j->f);
}

/* Before any value or name: the separator its position needs. */
static void sep(struct it_json *j)
{
	if (j->after_name) {
		j->after_name = false;
		return;
	}
	if (j->depth > 0) {
		if (j->nonempty[j->depth])
			PUTC(',', j->f);
		j->nonempty[j->depth] = true;
		newline(j);
	}
}

static void begin(struct it_json *j, char c)
{
	sep(j);
	PUTC(c, j->f);
	if (j->depth < IT_JSON_MAX_DEPTH - 1)
		j->depth++;
	j->nonempty[j->depth] = false;
}

static void end(struct it_json *j, char c)
{
	bool had = j->nonempty[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		newline(j);
	PUTC(c, j->f);
	if (!j->depth)
		PUTC('\n', j->f); /* a complete document ends its line */
}

void it_json_init_value(struct it_json *j, FILE *f, bool pretty, int depth)
{
	it_json_init(j, f, pretty);
	j->depth = depth > 0 && depth < IT_JSON_MAX_DEPTH ? depth : 0;
	j->after_name = true; /* the value of a member: no separator before it */
}

int it_json_splice(struct it_json *j, FILE *src)
{
	char buf[1 << 16];
	size_t n;

	sep(j);
	if (fflush(src) || fseek(src, 0, SEEK_SET))
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), src)) > 0)
		if (WRITE(buf, n, j->f) != n)
			return -1;
	return ferror(src) ? -1 : 0;
}

void it_json_object_start(struct it_json *j) { begin(j, '{'); }
void it_json_object_end(struct it_json *j) { end(j, '}'); }
void it_json_array_start(struct it_json *j) { begin(j, '['); }
void it_json_array_end(struct it_json *j) { end(j, ']'); }

/* Runs of plain characters go out in one fwrite: a character at a time,
 * a 50 MB report (a long trace's timelines) spent half its time in fputc. */
static void quoted(FILE *f, const char *s, size_t n)
{
	size_t i, run = 0;

	PUTC('"', f);
	for (i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[8];

		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				snprintf(u, sizeof(u), "\\u%04x", c);
				esc = u;
			}
		}
		if (!esc)
			continue;
		WRITE(s + run, i - run, f);
		PUTS(esc, f);
		run = i + 1;
	}
	WRITE(s + run, i - run, f);
	PUTC('"', f);
}

void it_json_name(struct it_json *j, const char *name)
{
	sep(j);
	quoted(j->f, name, SIZE_MAX);
	PUTS(j->pretty ? ": " : ":", j->f);
	j->after_name = true;
}

void it_json_stringn(struct it_json *j, const char *s, size_t n)
{
	sep(j);
	quoted(j->f, s ? s : "", s ? n : 0);
}

void it_json_string(struct it_json *j, const char *s) { it_json_stringn(j, s, SIZE_MAX); }

/* Decimal digits of v, without printf's format parsing. */
static void put_u64(FILE *f, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	WRITE(p, (size_t)(buf + sizeof(buf) - p), f);
}

void it_json_uint(struct it_json *j, uint64_t v)
{
	sep(j);
	put_u64(j->f, v);
}

void it_json_int(struct it_json *j, int64_t v)
{
	sep(j);
	if (v < 0)
		PUTC('-', j->f);
	put_u64(j->f, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

void it_json_double(struct it_json *j, double v)
{
	char buf[64];

	sep(j);
	if (!isfinite(v))
		v = 0;
	int n = snprintf(buf, sizeof(buf), "%.6f", v);
	if (n <= 0 || n >= (int)sizeof(buf)) {
		fprintf(j->f, "%g", v);
		return;
	}
	while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
		buf[--n] = '\0';
	if (!strcmp(buf, "-0.0"))
		strcpy(buf, "0.0");
	PUTS(buf, j->f);
}

void it_json_bool(struct it_json *j, bool v)
{
	sep(j);
	PUTS(v ? "true" : "false", j->f);
}

void it_json_null(struct it_json *j)
{
	sep(j);
	PUTS("null", j->f);
}

void it_json_kv_string(struct it_json *j, const char *name, const char *s)
{
	it_json_name(j, name);
	it_json_string(j, s);
}

void it_json_kv_uint(struct it_json *j, const char *name, uint64_t v)
{
	it_json_name(j, name);
	it_json_uint(j, v);
}

void it_json_kv_int(struct it_json *j, const char *name, int64_t v)
{
	it_json_name(j, name);
	it_json_int(j, v);
}

void it_json_kv_double(struct it_json *j, const char *name, double v)
{
	it_json_name(j, name);
	it_json_double(j, v);
}

void it_json_kv_bool(struct it_json *j, const char *name, bool v)
{
	it_json_name(j, name);
	it_json_bool(j, v);
}
