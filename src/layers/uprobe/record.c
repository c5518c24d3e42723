// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The uprobe layer on the recording side: `--uprobe BINARY:SYMBOL[:LABEL]`
 * (a function's entry) and `--usdt BINARY:PROVIDER:NAME[:LABEL]` (a USDT
 * probe, with its arguments), each repeatable. One BPF object
 * (uprobe.bpf.c) with one program per kind, attached once per probe with
 * the probe's id as its cookie (libbpf's bpf_program__attach_usdt, which
 * also raises a probe's semaphore, and bpf_program__attach_uprobe_opts).
 * A USDT probe whose argument locations libbpf cannot read (PostgreSQL's
 * checkpoint__done: "-4@40+CheckpointStats(%rip)", RIP-relative) is
 * attached as a plain uprobe at each of its sites, its semaphore raised,
 * and recorded without arguments (said on stderr).
 * The layer records whenever a probe is given. Probes fire in every
 * process that runs the binary: -p, --comm and --cgroup do not filter them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "layer.h"
#include "tracefile.h"
#include "layers/uprobe/uprobe.h"
#include "uprobe.skel.h"
#include "usdt/usdt.h"

#define OPT_UPROBE IT_LAYER_OPT(IT_LAYER_UPROBE, 0)
#define OPT_USDT IT_LAYER_OPT(IT_LAYER_UPROBE, 1)

static const struct option options[] = {
	{ "uprobe", required_argument, NULL, OPT_UPROBE },
	{ "usdt", required_argument, NULL, OPT_USDT },
	{ 0 },
};

#define IT_UPROBE_MAX_LINKS 512 /* a USDT probe attached by hand: one per site */

static struct {
	struct it_uprobe_def defs[IT_UPROBE_MAX];
	size_t ndefs;
	struct uprobe_bpf *skel;
	struct bpf_link *links[IT_UPROBE_MAX_LINKS];
	size_t nlinks;
	uint64_t hits, dropped;
} up;

static void usage(FILE *f)
{
	fprintf(f,
		"      --uprobe BINARY:SYMBOL[:LABEL]\n"
		"                       record each entry of a function (repeatable)\n"
		"      --usdt BINARY:PROVIDER:NAME[:LABEL]\n"
		"                       record each hit of a USDT probe with its first %d arguments\n"
		"                       (repeatable; `iotrail probe --usdt BINARY` lists them);\n"
		"                       NAME__start/NAME__done (or -start/-done) pairs are spans\n",
		IT_UPROBE_MAX_ARGS);
}

/* BINARY without a '/' is looked up in PATH, as a shell would. */
static int resolve_binary(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		if (access(name, R_OK))
			return -errno;
		snprintf(out, len, "%s", name);
		return 0;
	}
	while (path && *path) {
		const char *end = strchrnul(path, ':');

		snprintf(out, len, "%.*s/%s", (int)(end - path), path, name);
		if (end > path && !access(out, X_OK))
			return 0;
		path = *end ? end + 1 : end;
	}
	return -ENOENT;
}

static int copy_field(char *dst, size_t len, const char *src, const char *what, const char *opt)
{
	if (!*src || strlen(src) >= len)
		return it_failf(-1, "bad --%s %s: empty or too long (at most %zu characters); "
				"see iotrail record --help", opt, what, len - 1);
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

static int parse(int code, const char *arg)
{
	const char *opt = code == OPT_USDT ? "usdt" : "uprobe";
	size_t want = code == OPT_USDT ? 3 : 2; /* fields before the label */
	char buf[512], *field[5] = { 0 }, *save = NULL, *t;
	struct it_uprobe_def *d;
	size_t n = 0;
	int err;

	if (up.ndefs == IT_UPROBE_MAX)
		return it_failf(-1, "too many probes: at most %d --uprobe and --usdt in all",
				IT_UPROBE_MAX);
	snprintf(buf, sizeof(buf), "%s", arg);
	for (t = strtok_r(buf, ":", &save); t && n < 5; t = strtok_r(NULL, ":", &save))
		field[n++] = t;
	if (n < want || n > want + 1)
		return it_failf(-1, "bad --%s %s: expected %s[:LABEL]", opt, arg,
				code == OPT_USDT ? "BINARY:PROVIDER:NAME" : "BINARY:SYMBOL");
	d = &up.defs[up.ndefs];
	memset(d, 0, sizeof(*d));
	d->probe = (uint32_t)up.ndefs;
	d->kind = code == OPT_USDT ? IT_UPROBE_USDT : IT_UPROBE_FUNC;
	err = resolve_binary(field[0], d->binary, sizeof(d->binary));
	if (err)
		return it_failf(-1, "bad --%s %s: cannot read %s: %s; give the binary's path", opt,
				arg, field[0], strerror(-err));
	if (code == OPT_USDT && copy_field(d->provider, sizeof(d->provider), field[1], "provider", opt))
		return -1;
	if (copy_field(d->symbol, sizeof(d->symbol), field[want - 1], "name", opt) ||
	    copy_field(d->label, sizeof(d->label), field[n == want + 1 ? want : want - 1], "label",
		       opt))
		return -1;
	up.ndefs++;
	return 0;
}

static int available(char *why, size_t len)
{
	if (up.ndefs)
		return 1;
	snprintf(why, len, "no --uprobe or --usdt given");
	return 0;
}

static int settle(const struct it_session *s, bool recorded)
{
	(void)s;
	if (up.ndefs && !recorded)
		return it_failf(-1, "--uprobe and --usdt need the uprobe layer: add uprobe to "
				"--layers");
	return 0;
}

static int on_hit(void *ctx, void *data, size_t size)
{
	struct it_session *s = ctx;
	int err;

	if (size < sizeof(struct it_uprobe_hit))
		return 0;
	up.hits++;
	s->consumed++;
	if (!s->w)
		return 0;
	err = it_writer_add_record(s->w, 0, IT_LAYER_UPROBE, IT_CHUNK_UPROBE_HITS, data,
				   sizeof(struct it_uprobe_hit));
	if (err && !s->err)
		s->err = err;
	return err;
}

static int add_link(struct bpf_link *link)
{
	if (!link)
		return -errno;
	if (up.nlinks == IT_UPROBE_MAX_LINKS) {
		bpf_link__destroy(link);
		return -E2BIG;
	}
	up.links[up.nlinks++] = link;
	return 0;
}

/* The USDT probe d as plain uprobes at its sites (from the binary's own
 * notes, src/usdt/usdt.c), its semaphore raised by the kernel
 * (ref_ctr_offset): its hits without arguments. Sets *args to the probe's
 * argument locations. 0, or -errno. */
static int attach_usdt_sites(const struct it_uprobe_def *d, char *args, size_t alen)
{
	struct it_usdt_list l = { 0 };
	char err[160];
	struct stat st;
	bool none;
	size_t sites = 0;
	int rc = -ENOENT, fd = open(d->binary, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	if (it_usdt_parse(m, (size_t)st.st_size, &l, &none, err, sizeof(err)))
		rc = -ENOEXEC;
	for (size_t i = 0; i < l.n; i++) {
		const struct it_usdt_probe *p = &l.probes[i];

		if (strcmp(p->provider, d->provider) || strcmp(p->name, d->symbol))
			continue;
		if (!p->file_offset || (p->semaphore && !p->semaphore_offset)) {
			rc = -ENOEXEC;
			break;
		}
		LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = d->probe,
			    .ref_ctr_offset = p->semaphore_offset);
		rc = add_link(bpf_program__attach_uprobe_opts(up.skel->progs.uprobe_hit, -1,
							      d->binary, p->file_offset, &o));
		if (rc)
			break;
		snprintf(args, alen, "%s", p->args);
		sites++;
	}
	it_usdt_list_free(&l);
	munmap(m, (size_t)st.st_size);
	return rc ? rc : sites ? 0 : -ENOENT;
}

static int attach_one(const struct it_uprobe_def *d, char *why, size_t wlen)
{
	char args[256] = "";
	int err;

	if (d->kind == IT_UPROBE_USDT) {
		LIBBPF_OPTS(bpf_usdt_opts, o, .usdt_cookie = d->probe);
		err = add_link(bpf_program__attach_usdt(up.skel->progs.usdt_hit, -1, d->binary,
							d->provider, d->symbol, &o));
		/* libbpf's verdict on the argument locations it cannot read */
		if (err == -EINVAL && !attach_usdt_sites(d, args, sizeof(args))) {
			fprintf(stderr, "iotrail record: note: --usdt %s:%s:%s recorded without its "
				"arguments: libbpf cannot read their locations (\"%s\"; "
				"symbol-relative ones are not supported)\n",
				d->binary, d->provider, d->symbol, args);
			return 0;
		}
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = d->symbol, .bpf_cookie = d->probe);
		err = add_link(bpf_program__attach_uprobe_opts(up.skel->progs.uprobe_hit, -1,
							       d->binary, 0, &o));
	}
	if (!err)
		return 0;
	if (d->kind == IT_UPROBE_USDT)
		snprintf(why, wlen, "failed to attach --usdt %s:%s:%s: %s (%s); `iotrail probe "
			 "--usdt %s` lists its probes, --uprobe BINARY:FUNCTION is the fallback",
			 d->binary, d->provider, d->symbol, strerror(-err),
			 err == -ENOENT ? "no such probe in the binary" : "libbpf or the kernel refused it",
			 d->binary);
	else
		snprintf(why, wlen, "failed to attach --uprobe %s:%s: %s (%s)", d->binary, d->symbol,
			 strerror(-err),
			 err == -ENOENT ? "no such function in the binary's symbol tables"
					: "the kernel refused it");
	return err;
}

static int start(struct it_session *s, char *hooks, size_t hlen, char *why, size_t wlen)
{
	int err;

	up.skel = uprobe_bpf__open();
	if (!up.skel)
		return it_failf(-1, "failed to open the uprobe layer's BPF object: %s",
				strerror(errno));
	bpf_map__set_max_entries(up.skel->maps.hits, (s->ringbuf_mb ? s->ringbuf_mb : 4) << 20);
	err = uprobe_bpf__load(up.skel);
	if (err)
		return it_failf(-1, "failed to load the uprobe layer's BPF programs: %s",
				strerror(-err));
	for (size_t i = 0; i < up.ndefs; i++)
		if (attach_one(&up.defs[i], why, wlen))
			return it_failf(-1, "%s", why);
	err = it_ring_join(&s->rb, bpf_map__fd(up.skel->maps.hits), on_hit, s);
	if (err)
		return it_failf(-1, "failed to open the uprobe ring buffer: %s", strerror(-err));
	snprintf(hooks, hlen, "uprobe=uprobe");
	return 1;
}

/* the definitions first: the hits name them by id, and the report pairs
 * hits as they come only once it knows the probes (written at once, not
 * when their stream's buffer fills, which would be after the hits') */
static void begin(struct it_session *s)
{
	int err = 0;

	for (size_t i = 0; i < up.ndefs && s->w && !err; i++)
		err = it_writer_add_record(s->w, 0, IT_LAYER_UPROBE, IT_CHUNK_UPROBE_DEFS,
					   &up.defs[i], sizeof(up.defs[i]));
	if (!err && up.ndefs && s->w)
		err = it_writer_flush(s->w);
	if (err && !s->err)
		s->err = err;
}

static void detach(void)
{
	for (size_t i = 0; i < up.nlinks; i++)
		bpf_link__destroy(up.links[i]);
	up.nlinks = 0;
}

static int finish(struct it_session *s)
{
	uint64_t per_cpu[s->ncpu];

	memset(per_cpu, 0, sizeof(per_cpu));
	up.dropped = it_percpu_counter(up.skel->maps.drops, per_cpu, s->ncpu);
	return it_writer_set_drops(s->w, 0, IT_LAYER_UPROBE, per_cpu, s->ncpu);
}

static void summary(char *out, size_t len)
{
	snprintf(out, len, "%llu probe hits (%llu lost)", (unsigned long long)up.hits,
		 (unsigned long long)up.dropped);
}

static void up_free(void)
{
	detach();
	uprobe_bpf__destroy(up.skel);
	up.skel = NULL;
}

extern const struct it_layer_rec it_uprobe_records; /* records.c */

const struct it_layer_ops it_uprobe_layer = {
	.name = "uprobe",
	.id = IT_LAYER_UPROBE,
	.records = &it_uprobe_records,
	.what = "user-space probes (--uprobe, --usdt): each hit with its USDT arguments",
	.options = options,
	.usage = usage,
	.parse = parse,
	.available = available,
	.settle = settle,
	.start = start,
	.begin = begin,
	.detach = detach,
	.finish = finish,
	.summary = summary,
	.free = up_free,
};
