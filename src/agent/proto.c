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
				       "ERROR", "LOAD", "STORE", "RESET", "STATS" };

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
	if (version == IT_AGENT_VERSION && (type < IT_MSG_HELLO || type > IT_MSG_LAST)) {
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

/* The query messages' fields in order, through a cursor that remembers
 * the first failure (too short, a bad string): each message reads (or
 * writes) as one list of fields, checked once at the end. */
struct cur {
	uint8_t *w;        /* encoding: where to write; NULL when parsing */
	const uint8_t *r;  /* parsing: where to read */
	size_t left;       /* bytes left to read, or room left to write */
	bool ok;
};

static void cur_take(struct cur *c, void *v, size_t size)
{
	if (!c->ok || c->left < size) {
		c->ok = false;
		return;
	}
	if (c->w) {
		if (size == 1)
			*c->w = *(uint8_t *)v;
		else if (size == 4)
			put32(c->w, *(uint32_t *)v);
		else
			put64(c->w, *(uint64_t *)v);
		c->w += size;
	} else {
		if (size == 1)
			*(uint8_t *)v = *c->r;
		else if (size == 4)
			*(uint32_t *)v = get32(c->r);
		else
			*(uint64_t *)v = get64(c->r);
		c->r += size;
	}
	c->left -= size;
}
#define CUR(c, field) cur_take((c), &(field), sizeof(field))

static void cur_text(struct cur *c, char *s, size_t cap)
{
	size_t n;

	if (!c->ok)
		return;
	if (c->w) {
		n = strnlen(s, cap - 1);
		if (n + 2 > c->left) {
			c->ok = false;
			return;
		}
		put16(c->w, (uint16_t)n);
		memcpy(c->w + 2, s, n);
		c->w += n + 2;
		c->left -= n + 2;
	} else {
		if (!(n = get_text(c->r, c->left, s, cap))) {
			c->ok = false;
			return;
		}
		c->r += n;
		c->left -= n;
	}
}

/* Percentiles: a count, then each in thousandths of a percent, strictly
 * ascending within (0, 100%]: one encoding per set. */
static void cur_pcts(struct cur *c, uint8_t *n, uint32_t *pct)
{
	CUR(c, *n);
	if (c->ok && *n > IT_QUERY_PCTS)
		c->ok = false;
	for (unsigned i = 0; c->ok && i < *n; i++) {
		CUR(c, pct[i]);
		if (!pct[i] || pct[i] > 100 * IT_PCT_SCALE || (i && pct[i] <= pct[i - 1]))
			c->ok = false;
	}
}

static void cur_stage(struct cur *c, struct it_stage_stat *s, uint8_t npct)
{
	CUR(c, s->ios);
	CUR(c, s->count);
	CUR(c, s->bytes);
	CUR(c, s->min);
	CUR(c, s->max);
	CUR(c, s->sum);
	for (unsigned i = 0; c->ok && i < npct; i++) /* npct checked once ok */
		CUR(c, s->pct_ns[i]);
}

/* One query message (LOAD, STORE, RESET, STATS) through the cursor; the
 * same code parses and encodes, so the two cannot disagree. */
static void cur_query(struct cur *c, struct it_agent_msg *m)
{
	switch (m->type) {
	case IT_MSG_LOAD:
		cur_text(c, m->u.load.sw, sizeof(m->u.load.sw));
		CUR(c, m->u.load.stats);
		CUR(c, m->u.load.window_ns);
		CUR(c, m->u.load.op);
		cur_text(c, m->u.load.dev, sizeof(m->u.load.dev));
		cur_pcts(c, &m->u.load.npct, m->u.load.pct);
		if (!m->u.load.stats || m->u.load.stats & ~(uint32_t)IT_QS_ALL)
			c->ok = false;
		break;
	case IT_MSG_STATS:
		cur_text(c, m->u.stats.sw, sizeof(m->u.stats.sw));
		CUR(c, m->u.stats.stats);
		CUR(c, m->u.stats.start_ns);
		CUR(c, m->u.stats.end_ns);
		CUR(c, m->u.stats.reset_ns);
		CUR(c, m->u.stats.dropped);
		cur_pcts(c, &m->u.stats.npct, m->u.stats.pct);
		cur_stage(c, &m->u.stats.window, m->u.stats.npct);
		cur_stage(c, &m->u.stats.since_reset, m->u.stats.npct);
		if (m->u.stats.stats & ~(uint32_t)IT_QS_ALL)
			c->ok = false;
		break;
	case IT_MSG_STORE:
		cur_text(c, m->u.store.sw, sizeof(m->u.store.sw));
		cur_text(c, m->u.store.name, sizeof(m->u.store.name));
		cur_text(c, m->u.store.value, sizeof(m->u.store.value));
		break;
	case IT_MSG_RESET:
		cur_text(c, m->u.reset.sw, sizeof(m->u.reset.sw));
		/* the agent's answer adds the time of the reset */
		if (c->w ? m->u.reset.reply : c->left == 8) {
			m->u.reset.reply = true;
			CUR(c, m->u.reset.at_ns);
		}
		break;
	}
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
	case IT_MSG_LOAD:
	case IT_MSG_STORE:
	case IT_MSG_RESET:
	case IT_MSG_STATS: {
		struct cur c = { .r = p, .left = n, .ok = true };

		cur_query(&c, m);
		return c.ok && !c.left;
	}
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
	case IT_MSG_LOAD:
	case IT_MSG_STORE:
	case IT_MSG_RESET:
	case IT_MSG_STATS: {
		struct it_agent_msg copy = *m; /* the cursor takes fields by address */
		struct cur c = { .w = p, .left = cap, .ok = true };

		cur_query(&c, &copy);
		if (!c.ok)
			return 0;
		n = cap - c.left;
		break;
	}
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
