// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The query protocol's meaning (query.h). A LOAD is answered from the
 * agent's recorder's spool by the analyzer that `iotrail report` uses, so
 * a switch's numbers are the report's numbers for the same I/Os: no second
 * recording, no second definition of a stage. A block I/O belongs to a
 * window when it completed in it (its C point); a stage's time is the
 * report's (it_stage_time). The target's switches take the fabric join's
 * "target alone" view over the window's events (query_target.c): a
 * command belongs to it when parsed and completed inside it. The spool is
 * read from its start at each LOAD: simple
 * and exact (an I/O queued before the window still has its Q), at a cost
 * that grows with the recording (a chunk index is the next step).
 */
#include "agent/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/nvme.h"
#include "agent/query_target.h"
#include "tracefile.h"

/* the names are the report's (the unit tests hold them to the stage tables) */
const struct it_switch it_switches[] = {
	{ "block.q2i", IT_SW_BLOCK, IT_STAGE_Q2I }, { "block.i2d", IT_SW_BLOCK, IT_STAGE_I2D },
	{ "block.q2d", IT_SW_BLOCK, IT_STAGE_Q2D }, { "block.s2d", IT_SW_BLOCK, IT_STAGE_S2D },
	{ "block.d2c", IT_SW_BLOCK, IT_STAGE_D2C }, { "block.d2n", IT_SW_BLOCK, IT_STAGE_D2N },
	{ "block.d2h", IT_SW_BLOCK, IT_STAGE_D2H }, { "block.h2n", IT_SW_BLOCK, IT_STAGE_H2N },
	{ "block.n2c", IT_SW_BLOCK, IT_STAGE_N2C }, { "block.q2c", IT_SW_BLOCK, IT_STAGE_Q2C },
	/* the fabric layer's stage of the same name (query_target.c) */
	{ "target", IT_SW_TARGET, 0 }, { "target.queue", IT_SW_TARGET, 0 },
	{ "target.dev", IT_SW_TARGET, 0 }, { "tdev.submit", IT_SW_TARGET, 0 },
	{ "tdev.q2d", IT_SW_TARGET, 0 }, { "tdev.d2c", IT_SW_TARGET, 0 },
	{ "tdev.done", IT_SW_TARGET, 0 }, { "target.sendq", IT_SW_TARGET, 0 },
	{ "target.send", IT_SW_TARGET, 0 },
};
const size_t it_nswitches = sizeof(it_switches) / sizeof(*it_switches);

const struct it_switch *it_switch_find(const char *name)
{
	for (size_t i = 0; i < it_nswitches; i++)
		if (!strcmp(it_switches[i].name, name))
			return &it_switches[i];
	return NULL;
}

void it_query_settings_default(struct it_query_settings *s)
{
	static const uint32_t pct[] = { 50000, 90000, 99000, 99900 };

	memset(s, 0, sizeof(*s));
	s->window_ns = IT_QUERY_WINDOW_DEFAULT;
	s->npct = sizeof(pct) / sizeof(*pct);
	memcpy(s->pct, pct, sizeof(pct));
}

bool it_query_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end), unit = 1e9;

	if (end == s)
		return false;
	if (!strcmp(end, "ms"))
		unit = 1e6;
	else if (strcmp(end, "s") && *end)
		return false;
	v *= unit;
	if (!(v >= IT_QUERY_WINDOW_MIN && v <= IT_QUERY_WINDOW_MAX))
		return false;
	*ns = (uint64_t)(v + 0.5);
	return true;
}

bool it_query_pct(const char *s, uint32_t *pct)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v > 0 && v <= 100))
		return false;
	v *= IT_PCT_SCALE;
	*pct = (uint32_t)(v + 0.5);
	/* the wire keeps thousandths of a percent: p99.9999 is refused, not
	 * rounded, and so is one under a thousandth (p0.0000001 would be p0,
	 * which the wire refuses: fuzz_query found it) */
	return *pct > 0 && v - *pct < 1e-6 && *pct - v < 1e-6;
}

void it_query_pct_name(uint32_t pct, char *out, size_t len)
{
	char num[32];
	size_t n;

	snprintf(num, sizeof(num), "%u.%03u", pct / IT_PCT_SCALE, pct % IT_PCT_SCALE);
	n = strlen(num);
	while (num[n - 1] == '0')
		num[--n] = '\0';
	if (num[n - 1] == '.')
		num[--n] = '\0';
	snprintf(out, len, "p%s", num);
}

/* "50,90,99.9" into an ascending set. */
static bool parse_pct_list(const char *s, uint8_t *n, uint32_t *pct)
{
	char buf[IT_AGENT_TEXT], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*t == 'p')
			t++;
		if (*n == IT_QUERY_PCTS || !it_query_pct(t, &pct[*n]) ||
		    (*n && pct[*n] <= pct[*n - 1]))
			return false;
		(*n)++;
	}
	return *n > 0;
}

/* A pN statistic of a LOAD, kept ascending and without repeats. */
static bool add_pct(struct it_agent_msg *m, uint32_t p)
{
	unsigned i = 0;

	while (i < m->u.load.npct && m->u.load.pct[i] < p)
		i++;
	if (i < m->u.load.npct && m->u.load.pct[i] == p)
		return true;
	if (m->u.load.npct == IT_QUERY_PCTS)
		return false;
	memmove(&m->u.load.pct[i + 1], &m->u.load.pct[i], (m->u.load.npct - i) * sizeof(uint32_t));
	m->u.load.pct[i] = p;
	m->u.load.npct++;
	return true;
}

static const struct { const char *name; uint32_t bit; } stat_names[] = {
	{ "count", IT_QS_COUNT }, { "min", IT_QS_MIN }, { "avg", IT_QS_AVG }, { "max", IT_QS_MAX },
	{ "iops", IT_QS_IOPS }, { "bytes", IT_QS_BYTES }, { "percentiles", IT_QS_PCT },
	{ "all", IT_QS_ALL },
};

static int parse_load_word(struct it_agent_msg *m, const char *w, char *err, size_t errlen)
{
	const char *eq = strchr(w, '=');
	uint32_t p;

	for (size_t i = 0; !eq && i < sizeof(stat_names) / sizeof(*stat_names); i++)
		if (!strcmp(w, stat_names[i].name)) {
			m->u.load.stats |= stat_names[i].bit;
			return 0;
		}
	if (!eq && w[0] == 'p' && it_query_pct(w + 1, &p)) {
		if (!add_pct(m, p)) {
			snprintf(err, errlen, "more than %d percentiles in one load", IT_QUERY_PCTS);
			return -1;
		}
		m->u.load.stats |= IT_QS_PCT;
		return 0;
	}
	if (eq && !strncmp(w, "window=", 7)) {
		if (it_query_duration(eq + 1, &m->u.load.window_ns))
			return 0;
		snprintf(err, errlen, "bad window '%s': give a duration from 10ms to 3600s "
			 "(e.g. window=2s, window=250ms)", eq + 1);
		return -1;
	}
	if (eq && !strncmp(w, "op=", 3)) {
		for (unsigned op = 0; op < IT_OP_MAX; op++)
			if (!strcmp(eq + 1, it_op_name(op))) {
				m->u.load.op = (uint8_t)(op + 1);
				return 0;
			}
		snprintf(err, errlen, "unknown op '%s': give read, write, flush, discard, ...",
			 eq + 1);
		return -1;
	}
	if (eq && !strncmp(w, "ctrl=", 5)) { /* the target's switches: an initiator controller */
		char *end;
		unsigned long id = strtoul(eq + 1, &end, 10);

		if (eq[1] >= '0' && eq[1] <= '9' && !*end && id <= 0xffff) {
			memset(m->u.load.dev, 0, sizeof(m->u.load.dev));
			snprintf(m->u.load.dev, sizeof(m->u.load.dev), "%lu", id);
			return 0;
		}
		snprintf(err, errlen, "bad controller '%.40s': give the initiator controller's "
			 "id (cntlid), e.g. ctrl=1", eq + 1);
		return -1;
	}
	if (eq && !strncmp(w, "dev=", 4)) {
		if (eq[1] && strlen(eq + 1) < sizeof(m->u.load.dev)) {
			/* a later dev= replaces an earlier one whole: no tail of it left */
			memset(m->u.load.dev, 0, sizeof(m->u.load.dev));
			snprintf(m->u.load.dev, sizeof(m->u.load.dev), "%s", eq + 1);
			return 0;
		}
		snprintf(err, errlen, "bad device name '%.40s': give a name as lsblk shows it",
			 eq + 1);
		return -1;
	}
	snprintf(err, errlen, "unknown statistic or parameter '%.40s': give count, min, avg, "
		 "max, pN (p99, p99.9), iops, bytes, all, window=, op=, dev=, ctrl=", w);
	return -1;
}

/* "block.d2c", or "all" where allowed. */
static int parse_switch(const char *w, bool all_ok, char *out, size_t len, char *err,
			size_t errlen)
{
	char known[512] = "";
	size_t k = 0;

	if (w && (it_switch_find(w) || (all_ok && !strcmp(w, "all")))) {
		snprintf(out, len, "%s", w);
		return 0;
	}
	for (size_t i = 0; i < it_nswitches && k < sizeof(known); i++)
		k += (size_t)snprintf(known + k, sizeof(known) - k, "%s%s", i ? " " : "",
				      it_switches[i].name);
	if (!w)
		snprintf(err, errlen, "no switch given: give one of %s%s", known,
			 all_ok ? " or all" : "");
	else
		snprintf(err, errlen, "unknown switch '%.40s': give one of %s%s", w, known,
			 all_ok ? " or all" : "");
	return -1;
}

int it_query_parse(const char *text, struct it_agent_msg *m, char *err, size_t errlen)
{
	char buf[IT_AGENT_TEXT], *save = NULL, *verb, *w;

	memset(m, 0, sizeof(*m));
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "instruction too long (over %d bytes)", IT_AGENT_TEXT - 1);
		return -1;
	}
	for (const char *p = text; *p; p++)
		if ((unsigned char)*p < 0x20 ? *p != '\t' : *p == 0x7f) {
			/* the protocol's strings take none */
			snprintf(err, errlen, "a control character (0x%02x) in the instruction; give "
				 "plain text", (unsigned char)*p);
			return -1;
		}
	snprintf(buf, sizeof(buf), "%s", text);
	verb = strtok_r(buf, " \t", &save);
	w = verb ? strtok_r(NULL, " \t", &save) : NULL;
	if (verb && !strcmp(verb, "load")) {
		m->type = IT_MSG_LOAD;
		if (parse_switch(w, false, m->u.load.sw, sizeof(m->u.load.sw), err, errlen))
			return -1;
		while ((w = strtok_r(NULL, " \t", &save)))
			if (parse_load_word(m, w, err, errlen))
				return -1;
		if (!m->u.load.stats)
			m->u.load.stats = IT_QS_ALL;
		return 0;
	}
	if (verb && !strcmp(verb, "reset")) {
		m->type = IT_MSG_RESET;
		if (parse_switch(w, true, m->u.reset.sw, sizeof(m->u.reset.sw), err, errlen))
			return -1;
		if ((w = strtok_r(NULL, " \t", &save))) {
			snprintf(err, errlen, "unexpected '%.40s' after reset SWITCH", w);
			return -1;
		}
		return 0;
	}
	if (verb && !strcmp(verb, "store")) {
		const char *eq;

		m->type = IT_MSG_STORE;
		if (parse_switch(w, true, m->u.store.sw, sizeof(m->u.store.sw), err, errlen))
			return -1;
		w = strtok_r(NULL, " \t", &save);
		eq = w ? strchr(w, '=') : NULL;
		if (!eq || eq == w || (size_t)(eq - w) >= sizeof(m->u.store.name) || !eq[1] ||
		    strtok_r(NULL, " \t", &save)) {
			snprintf(err, errlen, "store needs one SETTING=VALUE after the switch "
				 "(e.g. store all window=2s)");
			return -1;
		}
		snprintf(m->u.store.name, sizeof(m->u.store.name), "%.*s", (int)(eq - w), w);
		snprintf(m->u.store.value, sizeof(m->u.store.value), "%s", eq + 1);
		return 0;
	}
	snprintf(err, errlen, "unknown instruction '%.40s': give load, store or reset, e.g. "
		 "'load block.d2c p99'", verb ? verb : "");
	return -1;
}

int it_query_store(struct it_query_settings *s, const char *name, const char *value,
		   uint32_t *code, char *err, size_t errlen)
{
	*code = IT_AERR_BAD;
	if (!strcmp(name, "window")) {
		if (it_query_duration(value, &s->window_ns))
			return 0;
		snprintf(err, errlen, "bad window '%.40s': give a duration from 10ms to 3600s",
			 value);
		return -1;
	}
	if (!strcmp(name, "percentiles")) {
		struct it_query_settings t = *s;

		if (parse_pct_list(value, &t.npct, t.pct)) {
			*s = t;
			return 0;
		}
		snprintf(err, errlen, "bad percentiles '%.60s': give up to %d ascending values "
			 "in (0, 100], e.g. 50,99,99.9", value, IT_QUERY_PCTS);
		return -1;
	}
	if (!strcmp(name, "predicate") || !strcmp(name, "sampling")) {
		*code = IT_AERR_UNSUPPORTED;
		snprintf(err, errlen, "setting '%s' is not supported by this agent yet: in-kernel "
			 "predicates and sampling need a recorder that filters in BPF (issue 14); "
			 "settable now: window, percentiles", name);
		return -1;
	}
	snprintf(err, errlen, "unknown setting '%.30s': settable now: window, percentiles", name);
	return -1;
}

void it_query_setting_text(const struct it_query_settings *s, const char *name, char *out,
			   size_t len)
{
	size_t k = 0;

	out[0] = '\0';
	if (!strcmp(name, "window")) {
		snprintf(out, len, "%gs", (double)s->window_ns / 1e9);
		return;
	}
	for (unsigned i = 0; i < s->npct && k < len; i++) {
		char p[24];

		it_query_pct_name(s->pct[i], p, sizeof(p));
		k += (size_t)snprintf(out + k, len - k, "%s%s", i ? "," : "", p + 1);
	}
}

/* ---- LOAD ---- */

struct load_ctx {
	const struct it_switch *sw;
	int op;               /* -1: any; enum it_op (block), NVMe opcode (target) */
	int64_t dev;          /* -1: any; dev_t (block), cntlid (target) */
	uint64_t start, end, reset;
	struct it_hist win, since;
	struct it_stage_stat *w, *s;
	struct it_target_span *span[2]; /* target: the window, since reset */
	int fstage;                 /* target: the fabric stage */
};

static void count_trail(struct it_stage_stat *st, struct it_hist *h, const struct it_trail *t,
			int64_t v)
{
	st->ios++;
	if (v < 0)
		return;
	st->count++;
	st->bytes += t->bytes;
	it_hist_add(h, (uint64_t)v);
}

static void on_trail(const struct it_trail *t, void *ctx)
{
	struct load_ctx *c = ctx;
	uint64_t done = t->ts[IT_PT_C];
	int64_t v;

	if (c->sw->layer == IT_SW_TARGET) { /* a backend's bios, for the tdev.* stages */
		for (int k = 0; k < 2; k++)
			it_target_span_trail(c->span[k], t->dev, t->ts[IT_PT_Q], t->ts[IT_PT_D], done);
		return;
	}
	if ((c->op >= 0 && t->op != c->op) || (c->dev >= 0 && t->dev != (uint64_t)c->dev) ||
	    done >= c->end)
		return;
	v = it_stage_time(t, c->sw->stage);
	if (done >= c->start)
		count_trail(c->w, &c->win, t, v);
	if (done >= c->reset)
		count_trail(c->s, &c->since, t, v);
}

static void finish_stat(struct it_stage_stat *st, const struct it_hist *h, uint8_t npct,
			const uint32_t *pct)
{
	double p[IT_QUERY_PCTS];

	st->min = h->count ? h->min : 0;
	st->max = h->max;
	st->sum = h->sum;
	for (unsigned i = 0; i < npct; i++)
		p[i] = (double)pct[i] / IT_PCT_SCALE;
	it_hist_percentiles(h, p, npct, st->pct_ns);
}

/* A target switch's numbers for span k: its commands' stage times. */
static int target_stat(struct load_ctx *c, int k, struct it_stage_stat *st, struct it_hist *h)
{
	if (it_target_span_stat(c->span[k], c->fstage, (int)c->dev, c->op, &st->ios, h))
		return -1;
	st->count = h->count;
	return 0;
}

/* The target's filters: an initiator controller's id, an NVMe opcode. */
static int target_filters(struct load_ctx *c, const struct it_agent_msg *load, char *err,
			  size_t errlen)
{
	const char *d = load->u.load.dev;
	char *end;

	c->dev = -1;
	if (d[0]) {
		unsigned long id = strtoul(d, &end, 10);

		if (*end || id > 0xffff) {
			snprintf(err, errlen, "%s is per initiator controller: give ctrl=CNTLID, "
				 "not a device", c->sw->name);
			return -1;
		}
		c->dev = (int64_t)id;
	}
	switch (c->op) {
	case -1: break;
	case IT_OP_READ: c->op = IT_NVME_READ; break;
	case IT_OP_WRITE: c->op = IT_NVME_WRITE; break;
	case IT_OP_FLUSH: c->op = IT_NVME_FLUSH; break;
	case IT_OP_WRITE_ZEROES: c->op = IT_NVME_WRITE_ZEROES; break;
	default:
		snprintf(err, errlen, "op=%s is not an NVMe opcode the target's switches know: "
			 "give read, write, flush or write-zeroes", it_op_name((unsigned)c->op));
		return -1;
	}
	return 0;
}

/* The device filter: its number in the spool's device table. */
static int find_dev(struct it_reader *rd, const char *name, int64_t *dev, char *err,
		    size_t errlen)
{
	size_t n, k = 0;
	const struct it_device_rec *d = it_reader_devices(rd, &n);
	char names[200] = "";

	*dev = -1;
	if (!name[0])
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(d[i].name, name)) {
			*dev = d[i].dev;
			return 0;
		}
		if (k < sizeof(names))
			k += (size_t)snprintf(names + k, sizeof(names) - k, "%s%.31s", i ? " " : "",
					      d[i].name);
	}
	snprintf(err, errlen, "no device '%s' in the agent's recording (it records: %s)", name,
		 n ? names : "no device");
	return -1;
}

int it_query_load(const char *spool, const struct it_agent_msg *load,
		  const struct it_query_settings *set, uint64_t reset_ns, uint64_t now_ns,
		  struct it_agent_msg *stats, char *err, size_t errlen)
{
	const struct it_switch *sw = it_switch_find(load->u.load.sw);
	struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;
	struct load_ctx c = { .op = load->u.load.op ? load->u.load.op - 1 : -1, .sw = sw };
	struct it_reader_status st;
	struct it_analyzer *a = NULL;
	struct it_reader *rd;
	const struct it_event *evs;
	uint64_t rec_start, window;
	size_t n;
	int rc = -1;

	if (!sw) {
		snprintf(err, errlen, "unknown switch '%s'", load->u.load.sw);
		return -1;
	}
	if (!(rd = it_reader_open(spool, err, errlen)))
		return -1;
	if (sw->layer == IT_SW_TARGET ? target_filters(&c, load, err, errlen) :
	    find_dev(rd, load->u.load.dev, &c.dev, err, errlen))
		goto out;
	memset(stats, 0, sizeof(*stats));
	stats->type = IT_MSG_STATS;
	snprintf(stats->u.stats.sw, sizeof(stats->u.stats.sw), "%s", sw->name);
	stats->u.stats.stats = load->u.load.stats;
	if (sw->layer == IT_SW_TARGET) /* the join does not sum a target-alone command's bytes */
		stats->u.stats.stats &= ~(uint32_t)IT_QS_BYTES;
	stats->u.stats.npct = load->u.load.npct ? load->u.load.npct : set->npct;
	memcpy(stats->u.stats.pct, load->u.load.npct ? load->u.load.pct : set->pct,
	       sizeof(stats->u.stats.pct));
	/* the window ends where the spool is surely complete, and neither it
	 * nor the count since reset starts before the recording did */
	rec_start = it_reader_host(rd)->start_monotonic_ns;
	window = load->u.load.window_ns ? load->u.load.window_ns : set->window_ns;
	c.end = now_ns > rec_start + IT_QUERY_LAG_NS ? now_ns - IT_QUERY_LAG_NS : rec_start;
	c.start = c.end > rec_start + window ? c.end - window : rec_start;
	c.reset = reset_ns > rec_start ? reset_ns : rec_start;
	if (c.reset > c.end)
		c.reset = c.end;
	c.w = &stats->u.stats.window;
	c.s = &stats->u.stats.since_reset;
	it_hist_init(&c.win);
	it_hist_init(&c.since);
	o.nkeys = 0;
	o.start_ns = rec_start;
	o.on_trail = on_trail;
	o.ctx = &c;
	c.fstage = it_target_stage(sw->name);
	if (!(a = it_analyzer_new(&o)) || (sw->layer == IT_SW_TARGET &&
	    (!(c.span[0] = it_target_span_new(c.start, c.end)) ||
	     !(c.span[1] = it_target_span_new(c.reset, c.end))))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	while ((rc = it_reader_next(rd, &evs, &n)) == 1)
		if (it_analyzer_feed(a, evs, n) ||
		    (sw->layer == IT_SW_TARGET && (it_target_span_feed(c.span[0], evs, n) ||
						    it_target_span_feed(c.span[1], evs, n)))) {
			snprintf(err, errlen, "out of memory while analysing the spool");
			rc = -1;
			goto out;
		}
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the spool: %s", it_reader_error(rd));
		goto out;
	}
	it_analyzer_finish(a, c.end);
	if (sw->layer == IT_SW_TARGET &&
	    (target_stat(&c, 0, c.w, &c.win) || target_stat(&c, 1, c.s, &c.since))) {
		snprintf(err, errlen, "out of memory while joining the target's commands");
		rc = -1;
		goto out;
	}
	it_reader_status(rd, &st);
	stats->u.stats.start_ns = c.start;
	stats->u.stats.end_ns = c.end;
	stats->u.stats.reset_ns = c.reset;
	stats->u.stats.dropped = st.dropped_total;
	finish_stat(c.w, &c.win, stats->u.stats.npct, stats->u.stats.pct);
	finish_stat(c.s, &c.since, stats->u.stats.npct, stats->u.stats.pct);
	rc = 0;
out:
	it_analyzer_free(a);
	it_target_span_free(c.span[0]);
	it_target_span_free(c.span[1]);
	it_hist_free(&c.win);
	it_hist_free(&c.since);
	it_reader_close(rd);
	return rc;
}
