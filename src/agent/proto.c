// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The agent protocol's frames (doc/agent-protocol.md). Every frame is a
 * 12-byte header (magic "ITAG", protocol version, type, payload length,
 * little-endian) and its payload. The parser trusts nothing: lengths are
 * checked against per-type limits before anything is read, strings must
 * fit and hold no NUL or control byte, fixed payloads must have their exact
 * size. It never allocates, so a fuzzer can hammer it (tests/fuzz/).
 */
#include "agent/proto.h"

#include <stdio.h>
#include <string.h>

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

static const char *type_name(uint16_t t)
{
	static const char *names[] = { "?", "HELLO", "START", "PULL", "DATA", "CLOCK", "STOP",
				       "ERROR" };

	return t < sizeof(names) / sizeof(*names) ? names[t] : "?";
}

static size_t max_payload(uint16_t type)
{
	return type == IT_MSG_DATA ? IT_AGENT_MAX_DATA + 4 : IT_AGENT_MAX_MSG;
}

long it_agent_frame_len(const void *buf, size_t len, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	uint16_t version, type;
	uint32_t plen;

	if (len < IT_AGENT_HDR)
		return 0;
	if (get32(p) != IT_AGENT_MAGIC) {
		snprintf(err, errlen, "not an iotrail agent message (wrong magic 0x%08x)", get32(p));
		return -1;
	}
	version = get16(p + 4);
	type = get16(p + 6);
	plen = get32(p + 8);
	if (version == IT_AGENT_VERSION && (type < IT_MSG_HELLO || type > IT_MSG_ERROR)) {
		snprintf(err, errlen, "unknown message type %u", type);
		return -1;
	}
	/* another version's frame: only its length is trusted, within the
	 * largest this version takes, so its HELLO can be answered */
	if (plen > (version == IT_AGENT_VERSION ? max_payload(type) : IT_AGENT_MAX_DATA + 4)) {
		snprintf(err, errlen, "%s message of %u bytes, over the limit of %zu",
			 type_name(type), plen, max_payload(type));
		return -1;
	}
	return (long)(IT_AGENT_HDR + plen);
}

/* A string of the payload: u16 length, then that many bytes, no NUL or
 * control byte; copied NUL-terminated into out (cap bytes). Returns bytes
 * taken, or 0 on error. */
static size_t get_text(const uint8_t *p, size_t len, char *out, size_t cap)
{
	uint16_t n;

	if (len < 2)
		return 0;
	n = get16(p);
	if ((size_t)n + 2 > len || n >= cap)
		return 0;
	for (uint16_t i = 0; i < n; i++)
		if (p[2 + i] < 0x20 || p[2 + i] == 0x7f)
			return 0;
	memcpy(out, p + 2, n);
	out[n] = '\0';
	return (size_t)n + 2;
}

static size_t put_text(uint8_t *p, size_t cap, const char *s)
{
	size_t n = strnlen(s, IT_AGENT_TEXT - 1);

	if (n + 2 > cap)
		return 0;
	put16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return n + 2;
}

/* A fixed-size field: a string padded with NULs to the end (one at least),
 * no control byte: one encoding per value. */
static bool get_field(const uint8_t *p, size_t n, char *out)
{
	size_t l = strnlen((const char *)p, n);

	if (l == n)
		return false;
	for (size_t i = l; i < n; i++)
		if (p[i])
			return false;
	for (size_t i = 0; i < l; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			return false;
	memcpy(out, p, l + 1);
	return true;
}

#define HELLO_LEN (4 + 32 + 64)

static bool parse_payload(struct it_agent_msg *m, const uint8_t *p, size_t n)
{
	size_t a, b;

	switch (m->type) {
	case IT_MSG_HELLO:
		if (n != HELLO_LEN)
			return false;
		m->u.hello.version = get32(p);
		return get_field(p + 4, 32, m->u.hello.software) &&
		       get_field(p + 36, 64, m->u.hello.host);
	case IT_MSG_START:
		a = get_text(p, n, m->u.start.layers, sizeof(m->u.start.layers));
		b = a ? get_text(p + a, n - a, m->u.start.devs, sizeof(m->u.start.devs)) : 0;
		return a && b && a + b == n;
	case IT_MSG_PULL:
	case IT_MSG_STOP:
		return n == 0;
	case IT_MSG_DATA:
		if (n < 4)
			return false;
		m->u.data.flags = get32(p);
		m->u.data.bytes = p + 4;
		m->u.data.len = n - 4;
		return !(m->u.data.flags & ~IT_DATA_FINAL);
	case IT_MSG_CLOCK:
		if (n != 8 && n != 24)
			return false;
		m->u.clock.t1 = get64(p);
		m->u.clock.reply = n == 24;
		m->u.clock.t2 = n == 24 ? get64(p + 8) : 0;
		m->u.clock.t3 = n == 24 ? get64(p + 16) : 0;
		return true;
	case IT_MSG_ERROR:
		if (n < 4)
			return false;
		m->u.error.code = get32(p);
		a = get_text(p + 4, n - 4, m->u.error.text, sizeof(m->u.error.text));
		return a && a + 4 == n;
	}
	return false;
}

long it_agent_parse(const void *buf, size_t len, struct it_agent_msg *m, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	long flen = it_agent_frame_len(buf, len, err, errlen);

	memset(m, 0, sizeof(*m));
	if (flen <= 0 || (size_t)flen > len)
		return flen < 0 ? -1 : 0;
	m->version = get16(p + 4);
	m->type = get16(p + 6);
	if (m->version != IT_AGENT_VERSION)
		return flen; /* the caller answers: version not spoken */
	if (!parse_payload(m, p + IT_AGENT_HDR, (size_t)flen - IT_AGENT_HDR)) {
		snprintf(err, errlen, "malformed %s message (%ld bytes)", type_name(m->type),
			 flen - (long)IT_AGENT_HDR);
		return -1;
	}
	return flen;
}

size_t it_agent_encode(const struct it_agent_msg *m, uint8_t *out, size_t cap)
{
	uint8_t *p = out + IT_AGENT_HDR;
	size_t n = 0, a, b;

	if (cap < IT_AGENT_HDR)
		return 0;
	cap -= IT_AGENT_HDR;
	switch (m->type) {
	case IT_MSG_HELLO:
		if (cap < HELLO_LEN)
			return 0;
		memset(p, 0, HELLO_LEN);
		put32(p, m->u.hello.version);
		memcpy(p + 4, m->u.hello.software, strnlen(m->u.hello.software, 31));
		memcpy(p + 36, m->u.hello.host, strnlen(m->u.hello.host, 63));
		n = HELLO_LEN;
		break;
	case IT_MSG_START:
		a = put_text(p, cap, m->u.start.layers);
		b = a ? put_text(p + a, cap - a, m->u.start.devs) : 0;
		if (!a || !b)
			return 0;
		n = a + b;
		break;
	case IT_MSG_PULL:
	case IT_MSG_STOP:
		break;
	case IT_MSG_DATA:
		if (cap < 4 || m->u.data.len > IT_AGENT_MAX_DATA)
			return 0;
		put32(p, m->u.data.flags);
		/* the payload's length counts the bytes the caller sends after */
		put32(out + 8, (uint32_t)(4 + m->u.data.len));
		put32(out, IT_AGENT_MAGIC);
		put16(out + 4, m->version ? m->version : IT_AGENT_VERSION);
		put16(out + 6, m->type);
		return IT_AGENT_HDR + 4;
	case IT_MSG_CLOCK:
		if (cap < 24)
			return 0;
		put64(p, m->u.clock.t1);
		n = 8;
		if (m->u.clock.reply) {
			put64(p + 8, m->u.clock.t2);
			put64(p + 16, m->u.clock.t3);
			n = 24;
		}
		break;
	case IT_MSG_ERROR:
		if (cap < 4)
			return 0;
		put32(p, m->u.error.code);
		if (!(a = put_text(p + 4, cap - 4, m->u.error.text)))
			return 0;
		n = 4 + a;
		break;
	default:
		return 0;
	}
	put32(out, IT_AGENT_MAGIC);
	put16(out + 4, m->version ? m->version : IT_AGENT_VERSION);
	put16(out + 6, m->type);
	put32(out + 8, (uint32_t)n);
	return IT_AGENT_HDR + n;
}

bool it_clock_sample(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4,
		     struct it_clock_sample *s)
{
	if (t4 < t1 || t3 < t2 || t4 - t1 < t3 - t2)
		return false;
	s->rtt = (t4 - t1) - (t3 - t2);
	/* (t2 - t1) + (t3 - t4), each difference signed; halved without overflow */
	s->theta = ((int64_t)(t2 - t1) + (int64_t)(t3 - t4)) / 2;
	return true;
}

bool it_clock_keep_best(struct it_clock_sample *best, const struct it_clock_sample *s)
{
	if (s->rtt >= best->rtt)
		return false;
	*best = *s;
	return true;
}
