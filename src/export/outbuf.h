/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An exporter's output: one buffer written out when full, numbers
 * formatted by hand. printf takes most of an export's time at millions of
 * rows (bench/export_speed.sh); this keeps the exporters at a few tens of
 * ns per field. A write error shows in ferror(out), which export.c checks.
 */
#ifndef IOTRAIL_EXPORT_OUTBUF_H
#define IOTRAIL_EXPORT_OUTBUF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IT_OB_SIZE (1u << 20)

struct it_outbuf {
	FILE *out;
	char *buf;
	size_t len;
};

static inline int it_ob_init(struct it_outbuf *o, FILE *out)
{
	o->out = out;
	o->len = 0;
	o->buf = malloc(IT_OB_SIZE);
	return o->buf ? 0 : -1;
}

static inline void it_ob_flush(struct it_outbuf *o)
{
	if (o->len)
		fwrite(o->buf, 1, o->len, o->out);
	o->len = 0;
}

static inline void it_ob_free(struct it_outbuf *o)
{
	free(o->buf);
	o->buf = NULL;
}

static inline void it_ob_room(struct it_outbuf *o, size_t n)
{
	if (o->len + n > IT_OB_SIZE)
		it_ob_flush(o);
}

static inline void it_ob_put(struct it_outbuf *o, const char *s, size_t n)
{
	it_ob_room(o, n);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

#define IT_OB_PUT(o, lit) it_ob_put(o, lit, sizeof(lit) - 1)

static inline void it_ob_char(struct it_outbuf *o, char c)
{
	it_ob_room(o, 1);
	o->buf[o->len++] = c;
}

/* v in decimal at the end of tmp[20], two digits at a time; returns
 * where it starts */
static inline size_t it_fmt_u64(char tmp[20], uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	size_t n = 20;

	while (v >= 100) {
		unsigned k = (unsigned)(v % 100) * 2;

		v /= 100;
		tmp[--n] = pairs[k + 1];
		tmp[--n] = pairs[k];
	}
	if (v >= 10) {
		tmp[--n] = pairs[v * 2 + 1];
		tmp[--n] = pairs[v * 2];
	} else {
		tmp[--n] = (char)('0' + v);
	}
	return n;
}

static inline void it_ob_u64(struct it_outbuf *o, uint64_t v)
{
	char tmp[20];
	size_t n = it_fmt_u64(tmp, v);

	it_ob_put(o, tmp + n, 20 - n);
}

static inline void it_ob_i64(struct it_outbuf *o, int64_t v)
{
	if (v < 0) {
		it_ob_char(o, '-');
		it_ob_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		it_ob_u64(o, (uint64_t)v);
	}
}

/* ns as microseconds with three decimals: exact */
static inline void it_ob_us(struct it_outbuf *o, uint64_t ns)
{
	uint64_t frac = ns % 1000;

	it_ob_u64(o, ns / 1000);
	it_ob_room(o, 4);
	o->buf[o->len++] = '.';
	o->buf[o->len++] = (char)('0' + frac / 100);
	o->buf[o->len++] = (char)('0' + frac / 10 % 10);
	o->buf[o->len++] = (char)('0' + frac % 10);
}

/* a JSON string's contents */
static inline void it_ob_json_str(struct it_outbuf *o, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			it_ob_char(o, '\\');
			it_ob_char(o, (char)ch);
		} else if (ch < 0x20) {
			char esc[8];

			snprintf(esc, sizeof(esc), "\\u%04x", ch);
			it_ob_put(o, esc, 6);
		} else {
			it_ob_char(o, (char)ch);
		}
	}
}

/* a CSV field: quoted when it holds a comma, quote or newline (RFC 4180) */
static inline void it_ob_csv_str(struct it_outbuf *o, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		it_ob_put(o, s, strlen(s));
		return;
	}
	it_ob_char(o, '"');
	for (; *s; s++) {
		if (*s == '"')
			it_ob_char(o, '"');
		it_ob_char(o, *s);
	}
	it_ob_char(o, '"');
}

#endif
