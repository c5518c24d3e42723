// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * iotrail probe: per layer and per hook, can this kernel trace it, with
 * which hook kind, and if not, why and what would fix it. The answers come
 * from src/hooks.c, the same code `iotrail record` decides with.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "commands.h"
#include "hooks.h"
#include "syscall_layer.h"

enum hook_type { TP, FUNC };

struct hook_def {
	const char *layer;
	enum hook_type type;
	const char *category; /* tracepoint system (TP only) */
	const char *name;
	const char *module;   /* NULL: built into vmlinux */
	bool optional;        /* nice to have; the layer works without it */
};

/* The hooks each layer's probes use (DESIGN.md, "Layers"). Data, not code:
 * a new layer adds rows. */
static const struct hook_def hooks[] = {
	{ "block", TP, "block", "block_bio_queue", NULL, false },
	{ "block", TP, "block", "block_bio_backmerge", NULL, false },
	{ "block", TP, "block", "block_bio_frontmerge", NULL, false },
	{ "block", TP, "block", "block_split", NULL, false },
	{ "block", TP, "block", "block_bio_complete", NULL, false },
	{ "block", TP, "block", "block_rq_insert", NULL, false },
	{ "block", TP, "block", "block_rq_issue", NULL, false },
	{ "block", TP, "block", "block_rq_requeue", NULL, false },
	{ "block", TP, "block", "block_rq_complete", NULL, false },
	{ "block", TP, "block", "block_rq_merge", NULL, false },
	/* v6.5+: I/O accounting start/done; informative, not used yet */
	{ "block", TP, "block", "block_io_start", NULL, true },
	{ "block", TP, "block", "block_io_done", NULL, true },
	{ "nvme", TP, "nvme", "nvme_setup_cmd", "nvme_core", false },
	{ "nvme", TP, "nvme", "nvme_complete_rq", "nvme_core", false },
	{ "nvme", TP, "nvme", "nvme_sq", "nvme_core", true },
	{ "nvme-tcp host", FUNC, NULL, "nvme_tcp_queue_rq", "nvme_tcp", false },
	{ "nvme-tcp host", FUNC, NULL, "nvme_tcp_try_send", "nvme_tcp", false },
	{ "nvme-tcp host", FUNC, NULL, "nvme_tcp_recv_skb", "nvme_tcp", false },
	{ "nvme-tcp host", TP, "sock", "sk_data_ready", NULL, true },
	{ "nvme-tcp target", TP, "nvmet", "nvmet_req_init", "nvmet", false },
	{ "nvme-tcp target", TP, "nvmet", "nvmet_req_complete", "nvmet", false },
	{ "nvme-tcp target", FUNC, NULL, "nvmet_tcp_try_recv_pdu", "nvmet_tcp", false },
	{ "nvme-tcp target", FUNC, NULL, "nvmet_tcp_queue_response", "nvmet_tcp", false },
	{ "syscall", TP, "raw_syscalls", "sys_enter", NULL, false },
	{ "syscall", TP, "raw_syscalls", "sys_exit", NULL, false },
	{ "syscall", TP, "io_uring", "io_uring_submit_req", NULL, true },
	{ "syscall", TP, "io_uring", "io_uring_complete", NULL, true },
};
#define NHOOKS (sizeof(hooks) / sizeof(hooks[0]))

struct layer_result {
	const char *name;
	size_t first, count;  /* rows in hooks[] */
	size_t usable, required, required_ok;
	enum it_hook_kind kind; /* what most usable hooks use */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail probe [--json]\n"
		"\n"
		"Tell, per layer (block, nvme, nvme-tcp host, nvme-tcp target, syscall)\n"
		"and per hook, whether this kernel can trace it and with which hook kind\n"
		"(tp_btf > raw_tp > tracepoint; fentry > kprobe for functions), and if\n"
		"not, why and what would fix it. Each answer comes from loading and\n"
		"attaching a tiny BPF program, so run it as root.\n"
		"\n"
		"  --json   machine-readable output\n"
		"\n"
		"examples:\n"
		"  iotrail probe\n"
		"  iotrail probe --json | jq '.layers[] | {name, hook}'\n");
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static void probe_hook(const struct hook_def *h, struct it_hook_status *st)
{
	if (h->type == TP)
		it_hook_probe_tracepoint(h->category, h->name, h->module, st);
	else
		it_hook_probe_function(h->name, h->module, st);
}

/* The syscall probes need more of the kernel than their tracepoints (see
 * it_syscall_probe): when it is missing, the layer's first hook says why. */
static void syscall_needs(struct it_hook_status *st)
{
	char hook[64], why[sizeof(st->why)];

	if (it_syscall_probe(hook, sizeof(hook), why, sizeof(why)))
		return;
	for (size_t i = 0; i < NHOOKS; i++) {
		if (strcmp(hooks[i].layer, "syscall") || hooks[i].optional)
			continue;
		st[i].best = IT_HOOK_NONE;
		snprintf(st[i].why, sizeof(st[i].why), "%s", why);
		snprintf(st[i].fix, sizeof(st[i].fix), "a newer kernel; record --layers block meanwhile");
		return;
	}
}

/* Groups consecutive rows of one layer and sums up its status. */
static size_t summarize(const struct it_hook_status *st, struct layer_result *out)
{
	size_t nl = 0;

	for (size_t i = 0; i < NHOOKS; i++) {
		struct layer_result *l = &out[nl];
		int votes[IT_HOOK_KPROBE + 1] = { 0 }, best = 0;

		if (i && !strcmp(hooks[i].layer, hooks[i - 1].layer))
			continue;
		*l = (struct layer_result){ .name = hooks[i].layer, .first = i };
		for (size_t j = i; j < NHOOKS && !strcmp(hooks[j].layer, l->name); j++) {
			l->count++;
			l->required += !hooks[j].optional;
			l->usable += st[j].best != IT_HOOK_NONE;
			l->required_ok += !hooks[j].optional && st[j].best != IT_HOOK_NONE;
			/* the layer's hook kind is what its required hooks use */
			votes[st[j].best] += st[j].best != IT_HOOK_NONE && !hooks[j].optional;
		}
		for (int k = 1; k <= IT_HOOK_KPROBE; k++)
			if (votes[k] > votes[best])
				best = k;
		l->kind = best;
		nl++;
	}
	return nl;
}

static const char *layer_verdict(const struct layer_result *l)
{
	if (l->required_ok == l->required)
		return "yes";
	return l->required_ok ? "partly" : "no";
}

/* The first required hook this kernel cannot take: why the layer is not
 * (fully) available. NULL when every required hook is usable. */
static const struct it_hook_status *layer_blocker(const struct it_hook_status *st,
						  const struct layer_result *l)
{
	if (l->required_ok == l->required)
		return NULL;
	for (size_t j = l->first; j < l->first + l->count; j++)
		if (st[j].best == IT_HOOK_NONE && !hooks[j].optional)
			return &st[j];
	return NULL;
}

static void print_text(const struct it_hook_status *st, const struct layer_result *l,
		       size_t nl, const char *facts)
{
	printf("%s\n", facts);
	for (size_t i = 0; i < nl; i++) {
		const struct it_hook_status *first_bad = layer_blocker(st, &l[i]);

		printf("\n%s: %s", l[i].name, layer_verdict(&l[i]));
		if (l[i].kind != IT_HOOK_NONE)
			printf(", with %s", it_hook_kind_name(l[i].kind));
		printf(" (%zu of %zu hooks usable)", l[i].usable, l[i].count);
		if (first_bad)
			printf(" - %s%s%s", first_bad->why, first_bad->fix[0] ? "; fix: " : "",
			       first_bad->fix);
		printf("\n");
		for (size_t j = l[i].first; j < l[i].first + l[i].count; j++) {
			const struct hook_def *h = &hooks[j];
			const struct it_hook_status *s = &st[j];

			printf("  %-26s %-10s", h->name, s->best ? it_hook_kind_name(s->best) : "-");
			if (s->best == IT_HOOK_NONE)
				printf(" %s%s%s", s->why, s->fix[0] ? "; fix: " : "", s->fix);
			else if (s->why[0])
				printf(" (%s)", s->why);
			printf("%s\n", h->optional ? " [optional]" : "");
		}
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json_hook(const struct hook_def *h, const struct it_hook_status *s)
{
	printf("{\"name\":");
	json_str(h->name);
	printf(",\"type\":\"%s\",\"module\":", h->type == TP ? "tracepoint" : "function");
	json_str(h->module ? h->module : "");
	printf(",\"optional\":%s,\"hook\":\"%s\"", h->optional ? "true" : "false",
	       it_hook_kind_name(s->best));
	if (h->type == TP)
		printf(",\"tp_btf\":%s,\"raw_tp\":%s,\"tracepoint\":%s",
		       s->tp_btf ? "true" : "false", s->raw_tp ? "true" : "false",
		       s->tracepoint ? "true" : "false");
	else
		printf(",\"fentry\":%s,\"kprobe\":%s", s->fentry ? "true" : "false",
		       s->kprobe ? "true" : "false");
	printf(",\"why\":");
	json_str(s->why);
	printf(",\"fix\":");
	json_str(s->fix);
	printf("}");
}

static void print_json(const struct it_hook_status *st, const struct layer_result *l,
		       size_t nl, const char *kernel, int qarg, const char *fentry_why,
		       const char *kprobe_why)
{
	printf("{\"version\":1,\"kernel\":");
	json_str(kernel);
	printf(",\"btf\":%s,\"block_tp_has_queue_arg\":%s,\"fentry\":{\"supported\":%s,\"why\":",
	       access("/sys/kernel/btf/vmlinux", R_OK) ? "false" : "true",
	       qarg == 1 ? "true" : "false", fentry_why[0] ? "false" : "true");
	json_str(fentry_why);
	printf("},\"kprobe\":{\"supported\":%s,\"why\":", kprobe_why[0] ? "false" : "true");
	json_str(kprobe_why);
	printf("},\"layers\":[");
	for (size_t i = 0; i < nl; i++) {
		const struct it_hook_status *first_bad = layer_blocker(st, &l[i]);

		printf("%s{\"name\":", i ? "," : "");
		json_str(l[i].name);
		printf(",\"available\":\"%s\",\"hook\":\"%s\",\"why\":", layer_verdict(&l[i]),
		       it_hook_kind_name(l[i].kind));
		json_str(first_bad ? first_bad->why : "");
		printf(",\"fix\":");
		json_str(first_bad ? first_bad->fix : "");
		printf(",\"hooks\":[");
		for (size_t j = l[i].first; j < l[i].first + l[i].count; j++) {
			printf("%s", j > l[i].first ? "," : "");
			print_json_hook(&hooks[j], &st[j]);
		}
		printf("]}");
	}
	printf("]}\n");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct it_hook_status st[NHOOKS];
	struct layer_result layers[NHOOKS];
	char fentry_why[160] = "", kprobe_why[160] = "", facts[512];
	bool json = false;
	struct utsname u;
	size_t nl;
	int c, qarg;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			return it_bad_option("probe", c, argv);
		}
	}
	libbpf_set_print(quiet_libbpf);
	if (it_probe_bpf_allowed(facts, sizeof(facts))) {
		/* every answer below would be a permission error */
		fprintf(stderr, "iotrail probe: failed to load a test BPF program: %s\n", facts);
		return 1;
	}
	uname(&u);
	for (size_t i = 0; i < NHOOKS; i++)
		probe_hook(&hooks[i], &st[i]);
	syscall_needs(st);
	nl = summarize(st, layers);
	qarg = it_block_tp_has_queue_arg();
	it_fentry_supported(fentry_why, sizeof(fentry_why));
	it_kprobe_supported(kprobe_why, sizeof(kprobe_why));
	if (json) {
		print_json(st, layers, nl, u.release, qarg, fentry_why, kprobe_why);
		return 0;
	}
	snprintf(facts, sizeof(facts),
		 "kernel %s; BTF: %s; block tracepoints: %s\n%s\n%s", u.release,
		 access("/sys/kernel/btf/vmlinux", R_OK) ? "no (CONFIG_DEBUG_INFO_BTF off)" : "yes",
		 qarg == 1 ? "(q, rq) layout (before v5.11)" :
		 qarg == 0 ? "(rq) layout (v5.11+)" : "layout unknown",
		 fentry_why[0] ? fentry_why : "fentry: yes",
		 kprobe_why[0] ? kprobe_why : "kprobes: yes");
	print_text(st, layers, nl, facts);
	return 0;
}
