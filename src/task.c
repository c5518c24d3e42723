// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A profiling task's pure parts (task.h): the predicate's grammar, sizes,
 * durations, sampling, the flight recorder's trigger, and the task file
 * (INI, by libinih: its sections and keys mapped onto the command line's
 * options, so that both say the same thing the same way).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ini.h>

#include "analyze/analyzer.h"
#include "iotrail/event.h"
#include "iotrail/sample_epoch.h"
#include "iotrail/trace_format.h"
#include "task.h"


#define ALL_OPS ((1u << IT_OP_MAX) - 1)

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

int it_size_parse(const char *text, uint64_t *bytes, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	errno = 0;
	v = isdigit((unsigned char)*text) ? strtoull(text, &end, 10) : 0;
	if (!isdigit((unsigned char)*text) || errno)
		goto bad;
	switch (tolower((unsigned char)*end)) {
	case 'k': mult = 1ull << 10; end++; break;
	case 'm': mult = 1ull << 20; end++; break;
	case 'g': mult = 1ull << 30; end++; break;
	}
	if (mult > 1 && (*end == 'i' || *end == 'I') && (end[1] == 'b' || end[1] == 'B'))
		end += 2;
	else if (mult > 1 && (*end == 'b' || *end == 'B'))
		end++;
	if (*end || v > (1ull << 40) / mult)
		goto bad;
	*bytes = v * mult;
	return 0;
bad:
	snprintf(err, errlen, "size '%s': give bytes, or a number with k, m or g (KiB, MiB, "
		 "GiB), at most 1 TiB", text);
	return -1;
}

int it_duration_parse(const char *text, uint64_t *ns, char *err, size_t errlen)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 },
		{ "min", 60e9 }, { "h", 3600e9 },
	};
	char *end;
	double v;

	errno = 0;
	v = (isdigit((unsigned char)*text) || *text == '.') ? strtod(text, &end) : -1;
	if (v > 0 && !errno) {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (strcmp(end, units[i].unit))
				continue;
			v *= units[i].ns;
			if (v >= 1 && v <= 1e18) {
				*ns = (uint64_t)v;
				return 0;
			}
		}
	}
	snprintf(err, errlen, "duration '%s': give a number > 0 with ns, us, ms, s, m or h "
		 "(e.g. 30s, 5ms)", text);
	return -1;
}

int it_sample_parse(const char *text, struct it_sample *s, char *err, size_t errlen)
{
	const char *p = text, *slash = strchr(text, '/');
	unsigned long v;
	char *end, derr[160];

	*s = (struct it_sample){ 0 };
	/* N/EPOCH: the epoch has a unit, 1/N does not */
	if (slash && slash[1] && !isdigit((unsigned char)slash[strlen(slash) - 1])) {
		errno = 0;
		v = isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : 0;
		if (!isdigit((unsigned char)*p) || errno || end != slash || v < 1 ||
		    v > IT_EPOCH_N_MAX || it_duration_parse(slash + 1, &s->epoch_ns, derr,
							     sizeof(derr)) ||
		    s->epoch_ns < IT_EPOCH_MIN_NS) {
			snprintf(err, errlen, "sample '%s': give N/EPOCH, the first N I/Os of every "
				 "EPOCH, N from 1 to %u, EPOCH from 1ms (e.g. 100/1s)", text,
				 IT_EPOCH_N_MAX);
			return -1;
		}
		s->per_epoch = (uint32_t)v;
		return 0;
	}
	if (p[0] == '1' && p[1] == '/')
		p += 2;
	errno = 0;
	v = isdigit((unsigned char)*p) ? strtoul(p, &end, 10) : 0;
	if (!isdigit((unsigned char)*p) || errno || *end || v < 1 || v > 1000000000ul) {
		snprintf(err, errlen, "sample '%s': give 1/N, one I/O in N, N from 1 to 1000000000; "
			 "or N/EPOCH, the first N of every EPOCH (100/1s)", text);
		return -1;
	}
	s->one_in = (uint32_t)v;
	return 0;
}

int it_date_parse(const char *text, int64_t *sec, char *err, size_t errlen)
{
	struct tm tm = { 0 }, back;
	const char *end = strptime(text, "%Y-%m-%d %H:%M:%S", &tm);
	time_t t;

	/* strptime takes "2026-1-5 1:2:3" and blanks anywhere: the paper's
	 * form is exact, 19 characters */
	if (end && !*end && strlen(text) == 19 && text[4] == '-' && text[7] == '-' &&
	    text[10] == ' ' && text[13] == ':' && text[16] == ':') {
		tm.tm_isdst = -1;
		back = tm;
		t = mktime(&tm);
		/* mktime moves 02-30 to 03-02: a date that does not exist */
		if (t != (time_t)-1 && tm.tm_mday == back.tm_mday && tm.tm_mon == back.tm_mon &&
		    tm.tm_year == back.tm_year && tm.tm_hour == back.tm_hour &&
		    tm.tm_min == back.tm_min) {
			*sec = (int64_t)t;
			return 0;
		}
	}
	snprintf(err, errlen, "date '%s': give YYYY-MM-DD hh:mm:ss, local time, a date that "
		 "exists (e.g. 2026-11-23 20:00:00)", text);
	return -1;
}

const char *const it_distinct_names[IT_DISTINCT_MAX] = {
	[IT_DISTINCT_PID] = "pid", [IT_DISTINCT_TID] = "tid", [IT_DISTINCT_COMM] = "comm",
	[IT_DISTINCT_DEV] = "dev", [IT_DISTINCT_FILE] = "file", [IT_DISTINCT_ZONE] = "zone",
};

/* "distinct(KEY)": its key, or -1 */
static int distinct_key(const char *name)
{
	for (int k = 0; k < IT_DISTINCT_MAX; k++) {
		size_t n = strlen(it_distinct_names[k]);

		if (!strncmp(name, "distinct(", 9) && !strncmp(name + 9, it_distinct_names[k], n) &&
		    !strcmp(name + 9 + n, ")"))
			return k;
	}
	return -1;
}

int it_stats_parse(const char *text, struct it_stats *s, char *err, size_t errlen)
{
	const char *p = text;
	char name[16], *end;

	memset(s, 0, sizeof(*s));
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned int i = s->n;
		double v;

		snprintf(name, sizeof(name), "%.*s", (int)(len < 15 ? len : 15), p);
		if (i == IT_STATS_MAX || len > 14 || !len)
			goto bad;
		if (!strcmp(name, "min")) {
			s->kind[i] = IT_STAT_MIN;
		} else if (!strcmp(name, "max")) {
			s->kind[i] = IT_STAT_MAX;
		} else if (!strcmp(name, "avg")) {
			s->kind[i] = IT_STAT_AVG;
		} else if (distinct_key(name) >= 0) {
			s->kind[i] = IT_STAT_DISTINCT;
			s->distinct[i] = (enum it_distinct_key)distinct_key(name);
			/* the column's title: "pids" */
			snprintf(name, sizeof(name), "%ss", it_distinct_names[s->distinct[i]]);
		} else if (name[0] == 'p' && isdigit((unsigned char)name[1])) {
			errno = 0;
			v = strtod(name + 1, &end);
			if (*end || errno || !(v >= 0 && v <= 100))
				goto bad;
			s->kind[i] = IT_STAT_PCT;
			s->pct[i] = v;
		} else {
			goto bad;
		}
		strcpy(s->name[i], name);
		s->n++;
		p += len;
		if (*p && !*++p)
			goto bad; /* a trailing comma */
	}
	if (s->n)
		return 0;
bad:
	snprintf(err, errlen, "stats '%s': give a comma-separated list of at most %d from min, "
		 "max, avg, pN (a percentile, N from 0 to 100: p50, p99.9), distinct(KEY) (KEY: pid, tid, "
		 "comm, dev, file or zone)", text,
		 IT_STATS_MAX);
	return -1;
}

int it_trigger_parse(const char *text, struct it_trigger *t, char *err, size_t errlen)
{
	static const struct { const char *name; enum it_trigger_stage stage; } stages[] = {
		{ "q2c", IT_TRIG_Q2C }, { "d2c", IT_TRIG_D2C }, { "q2d", IT_TRIG_Q2D },
	};
	char dur_err[160];

	for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
		size_t len = strlen(stages[i].name);

		if (strncmp(text, stages[i].name, len) || text[len] != '>')
			continue;
		if (it_duration_parse(text + len + 1, &t->over_ns, dur_err, sizeof(dur_err)))
			break;
		t->stage = stages[i].stage;
		t->on = true;
		return 0;
	}
	snprintf(err, errlen, "trigger '%s': give STAGE>DURATION, STAGE one of q2c, d2c, q2d "
		 "(e.g. q2c>5ms)", text);
	return -1;
}

/* ---- the predicate ---- */

struct term_ctx {
	struct it_filter *f;
	it_dev_resolver resolve;
	char *err;
	size_t errlen;
	unsigned int nclauses;   /* as parsed, before the checks */
	bool process_terms;
};

static int bad_term(struct term_ctx *t, const char *term, const char *what)
{
	snprintf(t->err, t->errlen, "filter term '%s': %s", term, what);
	return -1;
}

static int parse_ops(struct term_ctx *t, const char *term, const char *v, uint32_t *ops)
{
	char name[32];

	*ops = 0;
	while (*v) {
		size_t len = strcspn(v, ",");
		bool found = false;

		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, v, len);
		name[len] = 0;
		for (unsigned int i = 0; i < IT_OP_MAX; i++)
			if (!strcmp(name, it_op_name(i))) {
				*ops |= 1u << i;
				found = true;
			}
		if (!found)
			return bad_term(t, term, "op is one of read, write, flush, discard, "
				       "write-zeroes, secure-erase, zone-append, zone-reset, "
				       "other, as the report names them (op=read,write for several)");
		v += strcspn(v, ",");
		if (*v)
			v++;
	}
	return *ops ? 0 : bad_term(t, term, "give an op (op=read)");
}

/* One term "key CMP value" into clause c. */
static int parse_term(struct term_ctx *t, const char *term, struct it_pred_clause *c)
{
	static const char *const cmps[] = { ">=", "<=", "!=", "=", ">", "<" };
	const char *p = term, *cmp = NULL;
	char key[16], ferr[160];
	size_t klen = 0;
	uint64_t a, b;
	uint32_t ops;

	while (isalpha((unsigned char)*p) && klen < sizeof(key) - 1)
		key[klen++] = *p++;
	key[klen] = 0;
	p = skip_blanks(p);
	for (size_t i = 0; i < sizeof(cmps) / sizeof(cmps[0]) && !cmp; i++)
		if (!strncmp(p, cmps[i], strlen(cmps[i])))
			cmp = cmps[i];
	if (!klen || !cmp)
		return bad_term(t, term, "a term is KEY=VALUE (or >=, <=, >, <, != for size and "
			       "op), KEY one of op, size, dev, pid, comm, cgroup");
	p = skip_blanks(p + strlen(cmp));
	if (!*p)
		return bad_term(t, term, "the value is missing");
	if (!strcmp(key, "op")) {
		if (strcmp(cmp, "=") && strcmp(cmp, "!="))
			return bad_term(t, term, "op takes = or != (op=read, op!=write)");
		if (parse_ops(t, term, p, &ops))
			return -1;
		c->ops &= *cmp == '!' ? ~ops : ops;
		return 0;
	}
	if (!strcmp(key, "size")) {
		const char *dash = strchr(p, '-');
		char lo[32];

		if (dash && !strcmp(cmp, "=") && (size_t)(dash - p) < sizeof(lo)) {
			memcpy(lo, p, dash - p);
			lo[dash - p] = 0;
			if (it_size_parse(lo, &a, ferr, sizeof(ferr)) ||
			    it_size_parse(dash + 1, &b, ferr, sizeof(ferr)) || a > b)
				return bad_term(t, term, "a size range is LOW-HIGH, LOW <= HIGH "
					       "(size=8k-64k)");
		} else if (it_size_parse(p, &a, ferr, sizeof(ferr))) {
			return bad_term(t, term, "a size is bytes or a number with k, m, g "
				       "(size>=32k)");
		} else if (!strcmp(cmp, "=")) {
			b = a;
		} else if (!strcmp(cmp, ">=")) {
			b = UINT64_MAX;
		} else if (!strcmp(cmp, ">")) {
			b = UINT64_MAX, a++;
		} else if (!strcmp(cmp, "<=")) {
			b = a, a = 0;
		} else if (!strcmp(cmp, "<")) {
			if (!a)
				return bad_term(t, term, "no size is < 0");
			b = a - 1, a = 0;
		} else {
			return bad_term(t, term, "size takes =, >=, <=, >, < or a range size=8k-64k");
		}
		if (a > c->size_min)
			c->size_min = a;
		if (b < c->size_max)
			c->size_max = b;
		return 0;
	}
	if (strcmp(cmp, "="))
		return bad_term(t, term, "dev, pid, comm and cgroup take = only");
	if (!strcmp(key, "dev")) {
		uint32_t dev;
		unsigned int maj, min;
		int n = 0;

		if (t->resolve) {
			if (t->resolve(p, &dev, ferr, sizeof(ferr)))
				return bad_term(t, term, ferr);
		} else if (sscanf(p, "%u:%u%n", &maj, &min, &n) == 2 && !p[n] && maj < 4096 &&
			   min < (1u << 20)) {
			dev = IT_MKDEV(maj, min);
		} else {
			return bad_term(t, term, "dev is MAJ:MIN here (8:0)");
		}
		if (c->dev && c->dev != dev)
			c->ops = 0; /* two devices at once: nothing */
		c->dev = dev;
		return 0;
	}
	t->process_terms = true;
	if (!strcmp(key, "pid")) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || *end || errno || v <= 0 || v > INT_MAX)
			return bad_term(t, term, "pid is a process id > 0");
		if (t->f->npids == IT_TASK_MAX_PIDS)
			return bad_term(t, term, "at most 16 pids");
		t->f->pids[t->f->npids++] = (pid_t)v;
		return 0;
	}
	if (!strcmp(key, "comm")) {
		if (strlen(p) > 15)
			return bad_term(t, term, "comm is 1 to 15 characters (a name prefix)");
		if (*t->f->comm && strcmp(t->f->comm, p))
			return bad_term(t, term, "one comm only");
		strcpy(t->f->comm, p);
		return 0;
	}
	if (!strcmp(key, "cgroup")) {
		if (strlen(p) >= sizeof(t->f->cgroup))
			return bad_term(t, term, "cgroup is a directory path of at most 255 bytes");
		if (*t->f->cgroup && strcmp(t->f->cgroup, p))
			return bad_term(t, term, "one cgroup only");
		strcpy(t->f->cgroup, p);
		return 0;
	}
	return bad_term(t, term, "KEY is one of op, size, dev, pid, comm, cgroup");
}

/* Copies [from, to) trimmed of blanks into out. */
static void trimmed(const char *from, const char *to, char *out, size_t outlen)
{
	size_t n;

	from = skip_blanks(from);
	while (to > from && (to[-1] == ' ' || to[-1] == '\t'))
		to--;
	n = (size_t)(to - from) < outlen - 1 ? (size_t)(to - from) : outlen - 1;
	memcpy(out, from, n);
	out[n] = 0;
}

int it_filter_parse(const char *text, struct it_filter *f, it_dev_resolver resolve, char *err,
		    size_t errlen)
{
	struct term_ctx t = { f, resolve, err, errlen, 0, false };
	const char *p = text;
	char term[128];

	memset(f, 0, sizeof(*f));
	if (strchr(text, ';')) {
		snprintf(err, errlen, "filter: ';' is not a term's character; join terms with && "
			 "or ||");
		return -1;
	}
	if (strlen(text) > IT_TASK_VALUE_MAX) {
		snprintf(err, errlen, "filter: longer than %d bytes; give fewer terms",
			 IT_TASK_VALUE_MAX);
		return -1;
	}
	if (!*skip_blanks(text)) {
		snprintf(err, errlen, "filter '': give terms such as op=read && size>=32k");
		return -1;
	}
	for (;;) {
		struct it_pred_clause *c;
		bool clause_end = false;

		if (t.nclauses == IT_PRED_MAX) {
			snprintf(err, errlen, "filter '%s': at most %d clauses joined by ||", text,
				 IT_PRED_MAX);
			return -1;
		}
		c = &f->c[t.nclauses++];
		*c = (struct it_pred_clause){ .ops = ALL_OPS, .size_max = UINT64_MAX };
		while (!clause_end) {
			const char *and = strstr(p, "&&"), *or = strstr(p, "||"), *end;

			end = and && (!or || and < or) ? and : or ? or : p + strlen(p);
			trimmed(p, end, term, sizeof(term));
			if (!*term) {
				snprintf(err, errlen, "filter '%s': a term is missing around && or ||; "
					 "give op=read && size>=32k", text);
				return -1;
			}
			if (parse_term(&t, term, c))
				return -1;
			if (!*end)
				goto done;
			clause_end = end == or;
			p = end + 2;
		}
	}
done:
	if (t.process_terms && t.nclauses > 1) {
		snprintf(err, errlen, "filter '%s': pid, comm and cgroup hold for the whole filter "
			 "(the process scope): join them with && only, not ||", text);
		return -1;
	}
	/* a filter of process terms only is no I/O predicate */
	f->n = t.nclauses;
	if (f->n == 1 && f->c[0].ops == ALL_OPS && !f->c[0].size_min &&
	    f->c[0].size_max == UINT64_MAX && !f->c[0].dev)
		f->n = 0;
	return 0;
}

bool it_filter_match(const struct it_filter *f, unsigned int op, uint64_t bytes, uint32_t dev)
{
	if (!f->n)
		return true;
	for (unsigned int i = 0; i < f->n; i++) {
		const struct it_pred_clause *c = &f->c[i];

		if (op < 32 && (c->ops >> op & 1) && bytes >= c->size_min && bytes <= c->size_max &&
		    (!c->dev || c->dev == dev))
			return true;
	}
	return false;
}

/* ---- the task file ---- */

struct ini_ctx {
	struct it_task *t;
	char err[256];           /* the first error */
};

static int set_key(struct ini_ctx *c, char *dst, size_t len, const char *section,
		   const char *name, const char *value)
{
	if (strlen(value) >= len || strlen(value) > IT_TASK_VALUE_MAX) {
		snprintf(c->err, sizeof(c->err), "[%s] %s: the value is longer than %zu bytes",
			 section, name, len - 1 < IT_TASK_VALUE_MAX ? len - 1 : IT_TASK_VALUE_MAX);
		return 0;
	}
	strcpy(dst, value);
	return 1;
}

/* inih's callback: one key. Returns 0 (an error, inih notes the line) or 1. */
static int on_key(void *user, const char *section, const char *name, const char *value)
{
	static const char *const workload_keys[] = { "op", "size", "dev", "pid", "comm", "cgroup" };
	struct ini_ctx *c = user;
	struct it_task *t = c->t;
	char term[300], check[160];
	size_t nlen = strlen(name);
	uint64_t u64;
	int64_t date;
	struct it_sample sample;
	struct it_stats stats;
	struct it_trigger trig;

	if (*c->err)
		return 0;
	if (!*value) {
		snprintf(c->err, sizeof(c->err), "[%s] %s: the value is missing", section, name);
		return 0;
	}
	if (strchr(value, ';')) { /* it would start a comment in the trace's copy */
		snprintf(c->err, sizeof(c->err), "[%s] %s: a value holds no ';'", section, name);
		return 0;
	}
	if (!strcmp(section, "workload")) {
		/* "size>=32k" reads as key "size>" and value "32k": the key's
		 * last character is the comparison's first */
		char base[16];
		size_t blen = nlen && strchr("<>!", name[nlen - 1]) ? nlen - 1 : nlen;
		bool known = false;

		if (!strcmp(name, "filter")) {
			snprintf(term, sizeof(term), "%s", value);
		} else {
			snprintf(base, sizeof(base), "%.*s", (int)(blen < 15 ? blen : 15), name);
			for (size_t i = 0; i < sizeof(workload_keys) / sizeof(*workload_keys); i++)
				known |= blen < 16 && !strcmp(base, workload_keys[i]);
			if (!known) {
				snprintf(c->err, sizeof(c->err), "[workload] %s: unknown key; the keys "
					 "are op, size, dev, pid, comm, cgroup, filter", name);
				return 0;
			}
			snprintf(term, sizeof(term), "%s=%s", name, value);
		}
		if (strlen(t->filter) + strlen(term) + 4 > IT_TASK_VALUE_MAX) {
			snprintf(c->err, sizeof(c->err), "[workload] %s: the filter is longer than "
				 "%d bytes", name, IT_TASK_VALUE_MAX);
			return 0;
		}
		/* a filter with || is one expression: the other keys join it by && only
		 * when it has one clause (checked when the filter is parsed) */
		if (*t->filter)
			strcat(t->filter, " && ");
		strcat(t->filter, term);
		return 1;
	}
	if (!strcmp(section, "profiler")) {
		if (!strcmp(name, "mode")) {
			if (strcmp(value, "offline")) {
				snprintf(c->err, sizeof(c->err), "[profiler] mode: '%s': record takes "
					 "offline (the online mode is iotrail top and serve)", value);
				return 0;
			}
			return 1;
		}
		if (!strcmp(name, "sample")) {
			if (it_sample_parse(value, &sample, check, sizeof(check)))
				goto bad;
			return set_key(c, t->sample, sizeof(t->sample), section, name, value);
		}
		if (!strcmp(name, "duration") || !strcmp(name, "flight")) {
			if (it_duration_parse(value, &u64, check, sizeof(check)))
				goto bad;
			return !strcmp(name, "flight") ?
				set_key(c, t->flight, sizeof(t->flight), section, name, value) :
				set_key(c, t->duration, sizeof(t->duration), section, name, value);
		}
		if (!strcmp(name, "trigger")) {
			/* "trigger = q2c>5ms" reads as key "trigger", value "q2c>5ms" */
			if (it_trigger_parse(value, &trig, check, sizeof(check)))
				goto bad;
			return set_key(c, t->trigger, sizeof(t->trigger), section, name, value);
		}
		if (!strcmp(name, "memory")) {
			if (it_size_parse(value, &u64, check, sizeof(check)))
				goto bad;
			return set_key(c, t->memory, sizeof(t->memory), section, name, value);
		}
		if (!strcmp(name, "start") || !strcmp(name, "stop")) {
			if (it_date_parse(value, &date, check, sizeof(check)))
				goto bad;
			return set_key(c, !strcmp(name, "start") ? t->start : t->stop,
				       sizeof(t->start), section, name, value);
		}
		if (!strcmp(name, "on-full") || !strcmp(name, "on_full")) {
			if (strcmp(value, "overwrite") && strcmp(value, "write-out")) {
				snprintf(c->err, sizeof(c->err), "[profiler] %s: '%s': give overwrite "
					 "(keep the newest in memory) or write-out (every event to "
					 "the file)", name, value);
				return 0;
			}
			return set_key(c, t->on_full, sizeof(t->on_full), section, name, value);
		}
		if (!strcmp(name, "output"))
			return set_key(c, t->output, sizeof(t->output), section, name, value);
		snprintf(c->err, sizeof(c->err), "[profiler] %s: unknown key; the keys are mode, "
			 "sample, duration, start, stop, flight, trigger, memory, on-full, output",
			 name);
		return 0;
	}
	if (!strcmp(section, "report")) {
		if (!strcmp(name, "group-by") || !strcmp(name, "group_by"))
			return set_key(c, t->group_by, sizeof(t->group_by), section, name, value);
		if (!strcmp(name, "stats")) {
			if (it_stats_parse(value, &stats, check, sizeof(check)))
				goto bad;
			return set_key(c, t->stats, sizeof(t->stats), section, name, value);
		}
		if (!strcmp(name, "format")) {
			if (strcmp(value, "text") && strcmp(value, "json")) {
				snprintf(c->err, sizeof(c->err), "[report] format: '%s': give text or "
					 "json", value);
				return 0;
			}
			return set_key(c, t->format, sizeof(t->format), section, name, value);
		}
		snprintf(c->err, sizeof(c->err), "[report] %s: unknown key; the keys are group-by, "
			 "stats, format", name);
		return 0;
	}
	snprintf(c->err, sizeof(c->err), "[%s]: unknown section; the sections are [workload], "
		 "[profiler], [report]", section);
	return 0;
bad:
	snprintf(c->err, sizeof(c->err), "[%s] %s: %s", section, name, check);
	return 0;
}

int it_task_parse(const char *text, struct it_task *t, char *err, size_t errlen)
{
	struct ini_ctx c = { t, "" };
	int line;

	memset(t, 0, sizeof(*t));
	line = ini_parse_string(text, on_key, &c);
	if (line == 0 && !*c.err)
		return 0;
	if (line > 0 && *c.err)
		snprintf(err, errlen, "line %d: %s", line, c.err);
	else if (line > 0)
		snprintf(err, errlen, "line %d: not KEY = VALUE or [SECTION] (lines of at most "
			 "199 characters)", line);
	else
		snprintf(err, errlen, "%s", *c.err ? c.err : "out of memory");
	return -1;
}

/* ---- in the trace ---- */

void it_task_settings(const struct it_task *t, char *out, size_t len)
{
	size_t off = 0;

#define PUT(...) (off += snprintf(out + off, off < len ? len - off : 0, __VA_ARGS__))
	*out = 0;
	if (*t->filter)
		PUT("[workload]\nfilter = %s\n", t->filter);
	if (*t->sample || *t->duration || *t->flight || *t->trigger || *t->memory || *t->output ||
	    *t->start || *t->stop || *t->on_full)
		PUT("[profiler]\n");
	if (*t->sample)
		PUT("sample = %s\n", t->sample);
	if (*t->duration)
		PUT("duration = %s\n", t->duration);
	if (*t->start)
		PUT("start = %s\n", t->start);
	if (*t->stop)
		PUT("stop = %s\n", t->stop);
	if (*t->flight)
		PUT("flight = %s\n", t->flight);
	if (*t->trigger)
		PUT("trigger = %s\n", t->trigger);
	if (*t->memory)
		PUT("memory = %s\n", t->memory);
	if (*t->on_full)
		PUT("on-full = %s\n", t->on_full);
	if (*t->output)
		PUT("output = %s\n", t->output);
	if (*t->group_by || *t->format || *t->stats)
		PUT("[report]\n");
	if (*t->group_by)
		PUT("group-by = %s\n", t->group_by);
	if (*t->stats)
		PUT("stats = %s\n", t->stats);
	if (*t->format)
		PUT("format = %s\n", t->format);
#undef PUT
}

long it_task_to_notes(const char *text, uint16_t kind, struct it_note_rec **notes)
{
	size_t len = strlen(text), piece = sizeof((*notes)->text) - 1;
	size_t n = (len + piece - 1) / piece;

	*notes = calloc(n ? n : 1, sizeof(**notes));
	if (!*notes)
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t k = len - i * piece < piece ? len - i * piece : piece;

		(*notes)[i].kind = kind;
		memcpy((*notes)[i].text, text + i * piece, k);
	}
	return (long)n;
}

char *it_task_from_notes(const struct it_note_rec *notes, size_t n, uint16_t kind)
{
	size_t len = 0, off = 0;
	char *text;

	for (size_t i = 0; i < n; i++)
		if (notes[i].kind == kind && !notes[i].machine)
			len += strnlen(notes[i].text, sizeof(notes[i].text));
	if (!len || !(text = malloc(len + 1)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t k = strnlen(notes[i].text, sizeof(notes[i].text));

		if (notes[i].kind != kind || notes[i].machine)
			continue;
		memcpy(text + off, notes[i].text, k);
		off += k;
	}
	text[off] = 0;
	return text;
}

void it_task_describe(const struct it_task *t, bool calls, bool tcp, char *out, size_t len)
{
	const struct it_task_counted *c = &t->counted;
	struct it_sample smp;
	char err[160];
	size_t off = 0;
	bool kept = false;

#define PUT(...) (off += snprintf(out + off, off < len ? len - off : 0, __VA_ARGS__))
#define U(x) ((unsigned long long)(x))
	*out = 0;
	if (*t->start || *t->stop)
		PUT("window %s to %s (local time)", *t->start ? t->start : "the start",
		    *t->stop ? t->stop : "the end");
	if (*t->filter) {
		PUT("%sonly I/Os with %s", off ? "; " : "", t->filter);
		if (c->ios_known)
			PUT(": %llu of %llu, %llu filtered out", U(c->passed),
			    U(c->passed + c->rejected), U(c->rejected));
		kept = true;
	}
	if (*t->sample && !it_sample_parse(t->sample, &smp, err, sizeof(err))) {
		if (smp.one_in > 1)
			PUT("%ssampled 1 in %u", off ? "; " : "", smp.one_in);
		else if (smp.per_epoch)
			PUT("%ssampled the first %u I/Os of every %s epoch, none after them",
			    off ? "; " : "", smp.per_epoch, strchr(t->sample, '/') + 1);
		if ((smp.one_in > 1 || smp.per_epoch) && c->ios_known)
			PUT(": %llu kept of %llu, %llu skipped", U(c->passed - c->skipped),
			    U(c->passed), U(c->skipped));
		/* every I/O the sampling saw is in an epoch that kept its first */
		if (smp.per_epoch && c->ios_known && c->epochs)
			PUT(", in %llu epochs: %.1f kept of %.1f per epoch on average",
			    U(c->epochs), (double)(c->passed - c->skipped) / (double)c->epochs,
			    (double)c->passed / (double)c->epochs);
		if (smp.one_in > 1 || smp.per_epoch)
			PUT(": counts are of sampled I/Os");
		kept |= smp.one_in > 1 || smp.per_epoch;
	}
	if (t->overwritten_known)
		PUT("%s%llu events overwritten before this file was written (memory %s, on-full "
		    "overwrite)", off ? "; " : "", U(t->overwritten), *t->memory ? t->memory : "256m");
	/* The block layer decides at each bio's Q; a call is recorded at its
	 * exit when its thread queued a kept I/O meanwhile. Without that (a
	 * trace of an older version, or no block layer), every call is in. */
	if (calls && kept && c->calls_known) {
		PUT("; system calls: only those that queued a kept I/O, %llu; not recorded: %llu "
		    "whose I/Os were all left out, %llu that queued none", U(c->calls_kept),
		    U(c->calls_not_kept), U(c->calls_no_io));
		/* io_uring requests followed too (since IT_TCF_URING); said
		 * when there were any */
		if (!c->uring_known)
			PUT(" (io_uring requests are all recorded)");
		else if (c->uring_kept + c->uring_not_kept + c->uring_no_io + c->uring_async)
			PUT("; io_uring requests: only those that queued a kept I/O at submission, "
			    "%llu; not recorded: %llu whose I/Os were all left out, %llu that queued "
			    "none, %llu handed to io-wq before a kept I/O (not followed there)",
			    U(c->uring_kept), U(c->uring_not_kept), U(c->uring_no_io),
			    U(c->uring_async));
	} else if (calls && kept)
		PUT("; system calls are not filtered or sampled: every call of the scope is recorded");
	/* NVMe/TCP's PDUs and socket events are not the block layer's */
	if (tcp && kept)
		PUT("; NVMe/TCP's own events are not filtered or sampled");
#undef U
#undef PUT
}

bool it_task_layers_have_calls(const char *layers, size_t len)
{
	return it_task_layers_have(layers, len, "syscall");
}

bool it_task_layers_have_tcp(const char *layers, size_t len)
{
	return it_task_layers_have(layers, len, "nvme-tcp") ||
	       it_task_layers_have(layers, len, "nvmet-tcp");
}

bool it_task_layers_have(const char *layers, size_t len, const char *name)
{
	size_t n = strnlen(layers, len), want = strlen(name);

	for (size_t i = 0; i < n;) {
		size_t k = strcspn(layers + i, ",");

		if (k > n - i)
			k = n - i;
		if (k == want && !strncmp(layers + i, name, want))
			return true;
		i += k + 1;
	}
	return false;
}
