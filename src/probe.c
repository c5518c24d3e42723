// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * iotrail probe: per layer and per hook, can this kernel trace it, with
 * which hook kind, and if not, why and what would fix it. The layers and
 * their hooks come from the registry (src/layers.c), the answers from the
 * hook engine (src/hooks.c): the same tables and code `iotrail record`
 * decides with.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "analyze/json_writer.h"
#include "cli.h"
#include "commands.h"
#include "hooks.h"
#include "layer.h"
#include "untraced/untraced.h"
#include "usdt/usdt.h"

/* One layer's verdict, from its hooks' statuses. */
struct verdict {
	size_t usable, required, required_ok;
	enum it_hook_kind kind;            /* what most usable required hooks use */
	const struct it_hook_status *blocker; /* first required hook that is missing */
	char needs[200];                   /* what `requires` says is missing, "" if nothing */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail probe [--json] [--layer NAME] [--untraced SECS] [--usdt BINARY]\n"
		"\n"
		"Tell, per layer (");
	for (size_t i = 0; i < it_nlayers; i++)
		fprintf(f, "%s%s", i ? ", " : "", it_layers[i]->name);
	fprintf(f,
		")\n"
		"and per hook, whether this kernel can trace it and with which hook kind\n"
		"(tp_btf > raw_tp > tracepoint; fentry > kprobe for functions), and if\n"
		"not, why and what would fix it. Each answer comes from loading and\n"
		"attaching a tiny BPF program, so run it as root.\n"
		"\n"
		"  --json          machine-readable output\n"
		"  --layer NAME    this layer's hooks only (e.g. fs: F2FS's tracepoints)\n"
		"  --untraced SECS also count context switches for SECS seconds and list the\n"
		"                  threads this kernel runs no probe for while they are current\n"
		"                  (switched in, never seen switching away): what completes in a\n"
		"                  softirq over them, a batch of block I/O, no BPF program sees\n"
		"  --usdt BINARY   list BINARY's USDT probes (its .note.stapsdt ELF notes) instead\n"
		"\n"
		"examples:\n"
		"  iotrail probe\n"
		"  iotrail probe --json | jq '.layers[] | {name, hook}'\n"
		"  iotrail probe --layer block --untraced 3\n"
		"  iotrail probe --usdt /usr/lib/postgresql/15/bin/postgres\n");
}

/* --layer NAME: only that layer is probed and listed (NULL: all) */
static const char *only_layer;

static bool listed(const struct it_layer_ops *l)
{
	return !only_layer || !strcmp(l->name, only_layer);
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/* needs: what the layer's `requires` said is missing, NULL if nothing */
static void judge(const struct it_layer_ops *l, const struct it_hook_status *st, const char *needs,
		  struct verdict *v)
{
	int votes[IT_HOOK_KINDS] = { 0 }, best = IT_HOOK_NONE;

	memset(v, 0, sizeof(*v));
	for (size_t j = 0; j < l->nhooks; j++) {
		bool ok = st[j].best != IT_HOOK_NONE, opt = l->hooks[j].optional;

		v->required += !opt;
		v->usable += ok;
		v->required_ok += !opt && ok;
		votes[st[j].best] += ok && !opt;
		if (!ok && !opt && !v->blocker)
			v->blocker = &st[j];
	}
	for (int k = IT_HOOK_TP_BTF; k < IT_HOOK_KINDS; k++)
		if (votes[k] > votes[best])
			best = k;
	v->kind = best;
	/* the layer needs more of the kernel than its hooks: then it cannot run */
	if (needs) {
		snprintf(v->needs, sizeof(v->needs), "%s", needs);
		v->required_ok = 0;
		v->kind = IT_HOOK_NONE;
	}
}

static const char *verdict_name(const struct verdict *v)
{
	if (!v->needs[0] && v->required_ok == v->required)
		return "yes";
	return v->required_ok ? "partly" : "no";
}

static void print_text(const struct it_hook_status *const *st, const struct verdict *v,
		       const char *facts)
{
	printf("%s\n", facts);
	for (size_t i = 0; i < it_nlayers; i++) {
		const struct it_layer_ops *l = it_layers[i];

		if (!listed(l))
			continue;
		printf("\n%s: %s", l->name, verdict_name(&v[i]));
		if (v[i].kind != IT_HOOK_NONE)
			printf(", with %s", it_hook_kind_name(v[i].kind));
		printf(" (%zu of %zu hooks usable)", v[i].usable, l->nhooks);
		if (v[i].needs[0])
			printf(" - %s", v[i].needs);
		else if (v[i].blocker)
			printf(" - %s%s%s", v[i].blocker->why, v[i].blocker->fix[0] ? "; fix: " : "",
			       v[i].blocker->fix);
		if (!l->start)
			printf(" [not recorded yet]");
		printf("\n");
		for (size_t j = 0; j < l->nhooks; j++) {
			const struct it_hook_status *s = &st[i][j];

			char name[64];

			snprintf(name, sizeof(name), "%s%s", l->hooks[j].name,
				 it_hook_at_return(&l->hooks[j]) ? " (return)" : "");
			printf("  %-26s %-10s", name, s->best ? it_hook_kind_name(s->best) : "-");
			if (s->best == IT_HOOK_NONE)
				printf(" %s%s%s", s->why, s->fix[0] ? "; fix: " : "", s->fix);
			else if (s->why[0])
				printf(" (%s)", s->why);
			printf("%s\n", l->hooks[j].optional ? " [optional]" : "");
		}
	}
}

/* --untraced: the threads this kernel runs no probe for */
static void print_untraced_text(const struct it_untraced *u)
{
	printf("\nuntraced threads: %zu in %.1f s of context switches (%" PRIu64 " counted)\n", u->n,
	       u->secs, u->switches);
	if (u->not_counted)
		printf("*** WARNING: %" PRIu64 " switches not counted (the map of %d threads was full):\n"
		       "*** the list may be incomplete.\n", u->not_counted, IT_UNTRACED_MAX_TASKS);
	if (!u->n) {
		printf("  none: every thread switched in was seen switching away\n");
		return;
	}
	for (size_t i = 0; i < u->n; i++) {
		const struct it_untraced_task *t = &u->tasks[i];

		printf("  tid %-7u %-16s ", t->tid, t->comm[0] ? t->comm : "?");
		if (t->tgid)
			printf("process %u (%s)", t->tgid, t->proc_comm[0] ? t->proc_comm : "?");
		else
			printf("(exited)");
		printf(": switched in %u times, never seen switching away; ran %.1f ms\n", t->in,
		       t->ran_ns / 1e6);
	}
	printf("  Together they ran %.1f ms of the window's %.0f ms of CPU time (%.2f%%).\n",
	       u->hidden_ns / 1e6, u->cpu_ns / 1e6, u->cpu_ns ? 100.0 * u->hidden_ns / u->cpu_ns : 0);
	printf("  This kernel runs no probe while these threads are current: what completes in\n"
	       "  a softirq over one of them (a batch of block I/O) no BPF program sees. iotrail\n"
	       "  counts such I/Os from their request's reuse and reconciles with the kernel's\n"
	       "  /sys/block/DEV/stat (see the README's Known problems).\n");
}

static void json_untraced(struct it_json *j, const struct it_untraced *u)
{
	it_json_name(j, "untraced");
	it_json_object_start(j);
	it_json_kv_double(j, "seconds", u->secs);
	it_json_kv_uint(j, "switches", u->switches);
	it_json_kv_uint(j, "not_counted", u->not_counted);
	it_json_kv_uint(j, "cpu_ns", u->cpu_ns);
	it_json_kv_uint(j, "hidden_ns", u->hidden_ns);
	it_json_name(j, "threads");
	it_json_array_start(j);
	for (size_t i = 0; i < u->n; i++) {
		const struct it_untraced_task *t = &u->tasks[i];

		it_json_object_start(j);
		it_json_kv_uint(j, "tid", t->tid);
		it_json_kv_string(j, "comm", t->comm);
		it_json_kv_uint(j, "pid", t->tgid);
		it_json_kv_string(j, "process_comm", t->proc_comm);
		it_json_kv_uint(j, "switched_in", t->in);
		it_json_kv_uint(j, "ran_ns", t->ran_ns);
		it_json_object_end(j);
	}
	it_json_array_end(j);
	it_json_object_end(j);
}

static void json_hook(struct it_json *j, const struct it_hook_def *h, const struct it_hook_status *s)
{
	it_json_object_start(j);
	it_json_kv_string(j, "name", h->name);
	it_json_kv_string(j, "type", h->category ? "tracepoint" : "function");
	if (h->category)
		it_json_kv_string(j, "category", h->category);
	it_json_kv_string(j, "module", h->module ? h->module : "");
	it_json_kv_bool(j, "optional", h->optional);
	it_json_kv_bool(j, "at_return", it_hook_at_return(h));
	it_json_kv_string(j, "hook", it_hook_kind_name(s->best));
	if (h->category) {
		it_json_kv_bool(j, "tp_btf", s->tp_btf);
		it_json_kv_bool(j, "raw_tp", s->raw_tp);
		it_json_kv_bool(j, "tracepoint", s->tracepoint);
	} else {
		it_json_kv_bool(j, "fentry", s->fentry);
		it_json_kv_bool(j, "kprobe", s->kprobe);
	}
	/* the BPF program the layer has for each kind (record picks among these) */
	it_json_name(j, "programs");
	it_json_object_start(j);
	for (int k = IT_HOOK_TP_BTF; k < IT_HOOK_KINDS; k++)
		if (h->prog[k])
			it_json_kv_string(j, it_hook_kind_name(k), h->prog[k]);
	it_json_object_end(j);
	it_json_kv_string(j, "why", s->why);
	it_json_kv_string(j, "fix", s->fix);
	it_json_object_end(j);
}

static void print_json(const struct it_hook_status *const *st, const struct verdict *v,
		       const char *kernel, const char *fentry_why, const char *kprobe_why,
		       const struct it_untraced *u)
{
	struct it_json j;

	it_json_init(&j, stdout, false);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "version", 1);
	it_json_kv_string(&j, "kernel", kernel);
	it_json_kv_bool(&j, "btf", !access("/sys/kernel/btf/vmlinux", R_OK));
	it_json_name(&j, "fentry");
	it_json_object_start(&j);
	it_json_kv_bool(&j, "supported", !fentry_why[0]);
	it_json_kv_string(&j, "why", fentry_why);
	it_json_object_end(&j);
	it_json_name(&j, "kprobe");
	it_json_object_start(&j);
	it_json_kv_bool(&j, "supported", !kprobe_why[0]);
	it_json_kv_string(&j, "why", kprobe_why);
	it_json_object_end(&j);
	it_json_name(&j, "layers");
	it_json_array_start(&j);
	for (size_t i = 0; i < it_nlayers; i++) {
		const struct it_layer_ops *l = it_layers[i];
		const struct it_hook_status *b = v[i].blocker;

		if (!listed(l))
			continue;
		it_json_object_start(&j);
		it_json_kv_string(&j, "name", l->name);
		it_json_kv_uint(&j, "id", l->id);
		it_json_kv_string(&j, "what", l->what);
		it_json_kv_bool(&j, "recordable", l->start != NULL);
		it_json_kv_string(&j, "part_of", l->part_of ? l->part_of : "");
		it_json_kv_string(&j, "available", verdict_name(&v[i]));
		it_json_kv_string(&j, "hook", it_hook_kind_name(v[i].kind));
		it_json_kv_string(&j, "why", v[i].needs[0] ? v[i].needs : b ? b->why : "");
		it_json_kv_string(&j, "fix", v[i].needs[0] || !b ? "" : b->fix);
		it_json_name(&j, "hooks");
		it_json_array_start(&j);
		for (size_t k = 0; k < l->nhooks; k++)
			json_hook(&j, &l->hooks[k], &st[i][k]);
		it_json_array_end(&j);
		it_json_object_end(&j);
	}
	it_json_array_end(&j);
	if (u)
		json_untraced(&j, u);
	it_json_object_end(&j);
	fputc('\n', stdout);
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "usdt", required_argument, NULL, 'u' },
		{ "layer", required_argument, NULL, 'l' },
		{ "untraced", required_argument, NULL, 't' },
		{ 0 },
	};
	const char *usdt_binary = NULL, *untraced_arg = NULL;
	struct it_untraced untraced = { 0 };
	const struct it_hook_status *st[it_nlayers];
	struct it_hook_status *all;
	struct verdict v[it_nlayers];
	char fentry_why[160] = "", kprobe_why[160] = "", facts[512];
	size_t nhooks = 0, off = 0;
	bool json = false;
	struct utsname u;
	int c;

	opterr = 0;
	only_layer = NULL;
	while ((c = getopt_long(argc, argv, ":jhu:l:t:", longopts, NULL)) != -1) {
		if (c == 't') {
			untraced_arg = optarg;
		} else if (c == 'l') {
			only_layer = optarg;
		} else if (c == 'j') {
			json = true;
		} else if (c == 'u') {
			usdt_binary = optarg;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			return it_bad_option("probe", c, argv);
		}
	}
	it_cli_set_json(json);
	if (only_layer && !it_layer_by_name(only_layer))
		return it_failf(2, "failed to probe layer '%s': no such layer; give one of the layers "
				"'iotrail probe' lists", only_layer);
	double untraced_secs = 0;
	if (untraced_arg) {
		char *end;

		untraced_secs = strtod(untraced_arg, &end);
		if (end == untraced_arg || *end || !(untraced_secs >= 0.1 && untraced_secs <= 3600))
			return it_failf(2, "failed to read --untraced '%s': not a number of seconds from "
					"0.1 to 3600; give one (e.g. --untraced 3)", untraced_arg);
	}
	if (usdt_binary) /* a binary's probes: read from its file, no BPF needed */
		return it_usdt_print(usdt_binary, json, stdout);
	libbpf_set_print(quiet_libbpf);
	/* every answer below would be a permission error */
	if (it_probe_bpf_allowed(facts, sizeof(facts)))
		return it_fail(1, "load a test BPF program", facts, NULL);
	for (size_t i = 0; i < it_nlayers; i++)
		nhooks += it_layers[i]->nhooks;
	all = calloc(nhooks ? nhooks : 1, sizeof(*all));
	if (!all)
		return it_fail(1, "probe the hooks", "out of memory", NULL);
	for (size_t i = 0; i < it_nlayers; i++) {
		const struct it_layer_ops *l = it_layers[i];
		char needs[sizeof(v[i].needs)] = "";
		/* asked first: it may give the hooks the names this kernel has */
		bool lacks = l->requires && l->requires(needs, sizeof(needs));

		st[i] = all + off;
		for (size_t k = 0; k < l->nhooks; k++, off++)
			if (listed(l)) /* the others' rows stay zero: not asked */
				it_hook_probe(&l->hooks[k], &all[off]);
		judge(l, st[i], lacks ? needs : NULL, &v[i]);
	}
	if (untraced_arg && it_untraced_watch(untraced_secs, &untraced, facts, sizeof(facts))) {
		free(all);
		return it_fail(1, "count context switches (--untraced)", facts,
			       "run as root on a kernel with BTF; or leave out --untraced");
	}
	uname(&u);
	it_fentry_supported(fentry_why, sizeof(fentry_why));
	it_kprobe_supported(kprobe_why, sizeof(kprobe_why));
	if (json) {
		print_json(st, v, u.release, fentry_why, kprobe_why, untraced_arg ? &untraced : NULL);
	} else {
		snprintf(facts, sizeof(facts), "kernel %s; BTF: %s\n%s\n%s", u.release,
			 access("/sys/kernel/btf/vmlinux", R_OK) ? "no (CONFIG_DEBUG_INFO_BTF off)" : "yes",
			 fentry_why[0] ? fentry_why : "fentry: yes",
			 kprobe_why[0] ? kprobe_why : "kprobes: yes");
		print_text(st, v, facts);
		if (untraced_arg)
			print_untraced_text(&untraced);
	}
	it_untraced_free(&untraced);
	free(all);
	return 0;
}
