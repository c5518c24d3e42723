/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Streaming JSON writer: see json_writer.h. */
#include "analyze/json_writer.h"

#include <math.h>
#include <string.h>

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
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
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
			fputc(',', j->f);
		j->nonempty[j->depth] = true;
		newline(j);
	}
}

static void begin(struct it_json *j, char c)
{
	sep(j);
	fputc(c, j->f);
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
	fputc(c, j->f);
	if (!j->depth)
		fputc('\n', j->f); /* a complete document ends its line */
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

	fputc('"', f);
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
		fwrite(s + run, 1, i - run, f);
		fputs(esc, f);
		run = i + 1;
	}
	fwrite(s + run, 1, i - run, f);
	fputc('"', f);
}

void it_json_name(struct it_json *j, const char *name)
{
	sep(j);
	quoted(j->f, name, SIZE_MAX);
	fputs(j->pretty ? ": " : ":", j->f);
	j->after_name = true;
}

void it_json_stringn(struct it_json *j, const char *s, size_t n)
{
	sep(j);
	quoted(j->f, s ? s : "", s ? n : 0);
}

void it_json_string(struct it_json *j, const char *s) { it_json_stringn(j, s, SIZE_MAX); }

void it_json_uint(struct it_json *j, uint64_t v)
{
	sep(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void it_json_int(struct it_json *j, int64_t v)
{
	sep(j);
	fprintf(j->f, "%lld", (long long)v);
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
	fputs(buf, j->f);
}

void it_json_bool(struct it_json *j, bool v)
{
	sep(j);
	fputs(v ? "true" : "false", j->f);
}

void it_json_null(struct it_json *j)
{
	sep(j);
	fputs("null", j->f);
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
