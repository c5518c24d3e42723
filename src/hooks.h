/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which hook each probe point can use on the running kernel, found by
 * trying for real (loading and attaching a two-instruction program), never
 * by kernel version. `iotrail probe` prints these decisions; `iotrail
 * record` uses the same ones to pick its program variants.
 */
#ifndef IOTRAIL_HOOKS_H
#define IOTRAIL_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

enum it_hook_kind {
	IT_HOOK_NONE = 0,
	IT_HOOK_TP_BTF,     /* BTF-typed raw tracepoint (SEC("tp_btf/...")) */
	IT_HOOK_RAW_TP,     /* raw tracepoint (SEC("raw_tp/...")) */
	IT_HOOK_TRACEPOINT, /* classic tracefs tracepoint (SEC("tracepoint/...")) */
	IT_HOOK_FENTRY,     /* BPF trampoline on a kernel function */
	IT_HOOK_KPROBE,
	IT_HOOK_KINDS
};

const char *it_hook_kind_name(enum it_hook_kind kind);
/* "tp_btf" -> IT_HOOK_TP_BTF ...; IT_HOOK_NONE when unknown */
enum it_hook_kind it_hook_kind_parse(const char *name);

/* What one probe point can use. best is the preferred available kind;
 * when it is IT_HOOK_NONE, why says why and fix what would help. */
struct it_hook_status {
	bool tp_btf, raw_tp, tracepoint;   /* tracepoint hooks */
	bool listed, fentry, kprobe;       /* function hooks (listed: ftrace can see it) */
	enum it_hook_kind best;
	char why[160];
	char fix[96];
};

/* Single checks, each 0 or -errno (reason in why when given). */
int it_probe_tp_btf(const char *tp, const char *module, char *why, size_t len);
int it_probe_raw_tp(const char *tp, char *why, size_t len);
bool it_tracepoint_in_tracefs(const char *category, const char *name);
/* May this process load BPF programs at all? 0, or -errno with "why; what
 * to do" in why. */
int it_probe_bpf_allowed(char *why, size_t len);
/* Whether module is loaded or built in (modules.builtin). */
bool it_module_loaded(const char *module);
/* Can this kernel run fentry / kprobe programs at all? (cached) */
int it_fentry_supported(char *why, size_t len);
int it_kprobe_supported(char *why, size_t len);

/* ---- the hook engine: one for every layer ----
 *
 * A layer describes its hooks as data: one row per probe point, with the
 * BPF program that implements it for each hook kind. The engine probes
 * what the kernel takes, autoloads one variant per hook, loads, and when
 * the verifier refuses a program, moves that hook to its next kind (or
 * leaves it out when it is optional) and loads again. `iotrail probe`
 * reads the same rows.
 */
struct it_hook_def {
	const char *name;       /* tracepoint, or kernel function when category is NULL */
	const char *category;   /* tracepoint system ("block"); NULL for a function */
	const char *module;     /* module that defines it; NULL: vmlinux */
	bool optional;          /* the layer works without it */
	/* its program in the layer's BPF object, per kind; NULL: no such variant.
	 * A row without any program is probed by `iotrail probe` only. */
	const char *prog[IT_HOOK_KINDS];
};

/* A row for a function's return, not its entry: its programs are named
 * NAME_fexit and NAME_kretprobe (the convention that tells them apart). */
bool it_hook_at_return(const struct it_hook_def *h);

/* Probes one row: a tracepoint's or a function's kinds. */
void it_hook_probe(const struct it_hook_def *h, struct it_hook_status *st);

/* A layer's BPF skeleton, seen through five calls (IT_SKEL_OPS). */
struct it_skel_ops {
	void *(*open)(void);
	int (*load)(void *skel);
	void (*destroy)(void *skel);
	struct bpf_object *(*object)(void *skel);
	int (*attach)(void *skel);
};
struct bpf_object;
#define IT_SKEL_OPS(x)                                                               \
	static void *x##_skel_open(void) { return x##_bpf__open(); }                 \
	static int x##_skel_load(void *s) { return x##_bpf__load(s); }               \
	static void x##_skel_destroy(void *s) { x##_bpf__destroy(s); }               \
	static struct bpf_object *x##_skel_object(void *s) { return ((struct x##_bpf *)s)->obj; } \
	static int x##_skel_attach(void *s) { return x##_bpf__attach(s); }           \
	static const struct it_skel_ops x##_skel_ops = { x##_skel_open, x##_skel_load, \
							 x##_skel_destroy, x##_skel_object, \
							 x##_skel_attach }

struct it_hook_load {
	const char *layer;                   /* its name: messages, the description */
	const struct it_hook_def *hooks;
	size_t nhooks;
	const struct it_skel_ops *skel;
	/* After the variants are chosen, before load: rodata, map sizes, shared
	 * maps. It may set kinds[i] = IT_HOOK_NONE for a hook it does not want
	 * this time (that hook is then not described). 0 or -errno. */
	int (*configure)(void *skel, enum it_hook_kind *kinds, void *ctx);
	void *ctx;
	enum it_hook_kind force;             /* IT_HOOK_NONE: best available */
	bool verbose;
};

/* Probes the hooks' kinds as it_hooks_load will, ahead of it: a recording
 * asks every layer's before the first load, on one parse of the kernel BTF
 * (the answers are kept for the process). */
void it_hooks_prefetch(const struct it_hook_def *hooks, size_t nhooks, enum it_hook_kind force);

/* Chooses, loads, retries (see above). Returns the loaded skeleton and
 * fills kinds[nhooks] and desc ("block=tp_btf", exceptions after it:
 * "nvme=tp_btf,nvme_sq=none"); or NULL with -errno in *err and a reason in
 * why: no required hook is usable (-ENOENT), or the kernel refused every
 * variant. */
void *it_hooks_load(const struct it_hook_load *l, enum it_hook_kind *kinds, char *desc,
		    size_t dlen, char *why, size_t wlen, int *err);

/* The kernel's BTF, parsed once per process (tens of ms: share it); NULL
 * without /sys/kernel/btf/vmlinux. */
struct btf;
const struct btf *it_vmlinux_btf(void);

/* tp_btf, fentry and fexit programs' targets, resolved by iotrail, not
 * libbpf (attach_targets.c): the handlers registered once, before the
 * first object opens; an object's targets resolved before its load. */
struct bpf_object;
int it_attach_targets_register(void);
void it_attach_targets_resolve(struct bpf_object *obj);
void it_attach_targets_forget(void); /* it_probes_loaded: the targets kept */
/* name of BTF kind kind in a split BTF's own types (not its base's, which
 * libbpf's lookup walks first): its id, or -ESRCH */
int it_btf_own_type(const struct btf *mod, const char *name, int kind);
/* The next module's BTF object in the kernel after *id (the kernel's own
 * BTF and programs' skipped): its fd, its name in name; -1 past the last. */
int it_module_btf_next(unsigned int *id, char *name, size_t len);
void it_vmlinux_btf_release(void); /* when no more probes are loaded */
/* Around the loading of a process's probes: while they load, every block
 * of a megabyte or more (the kernel BTF's copies, ours and libbpf's in
 * each load) is mapped and handed back on free; once they are loaded the
 * BTF is released and big blocks stay in the heap again. */
void it_probes_loading(void);
void it_probes_loaded(void);
/* How many arguments tracepoint tp takes on this kernel (its btf_trace_tp
 * typedef's, less the leading void *__data): where an argument list moved
 * between kernels. -ENOENT without BTF or the typedef, -EINVAL when it is
 * not a function pointer. */
int it_btf_trace_arity(const char *tp);

/* ---- the recording's one poll ---- */
struct ring_buffer;
struct it_evring;
/* Adds the ring of map_fd to *rb, the one ring_buffer a recording polls
 * (made here, for the first ring): fn(ctx, data, size) gets its records.
 * 0, or -errno. */
int it_ring_join(struct ring_buffer **rb, int map_fd,
		 int (*fn)(void *ctx, void *data, size_t size), void *ctx);

/* Per-CPU rings (evring.h): a BPF ring buffer of bytes per CPU (ncpu of
 * them) made and put into the array-of-rings map outer_fd, each mapped
 * into a new evring *out whose records go to fn (merged by key, NULL: an
 * it_event's time), with extra sources after them for the caller to set
 * (it_evring_set). Before any probe that writes them is attached. 0, or
 * -errno (*out then freed and NULL). */
int it_evring_make(struct it_evring **out, int outer_fd, unsigned int ncpu, size_t bytes,
		   unsigned int extra, int (*fn)(void *ctx, void *data, size_t size),
		   uint64_t (*key)(const void *data, size_t size), void *ctx);
/* Each CPU's ring when total bytes are divided among ncpu: the largest
 * power of two within its share, at least a page (a BPF ring's size is a
 * power of two and a multiple of the page size). */
size_t it_ring_bytes_per_cpu(size_t total, unsigned int ncpu);

/* The part of a CPU's buffer or ring that, once used, makes its programs
 * wake the recorder before its poll timer would (record.c: POLL_MS). A
 * wakeup is a context switch, some 20 us of the recorder's CPU under this
 * VM's hypervisor: at an eighth (the syscall layer) and a quarter (the
 * block stream) the recorder switched 200-300 times a second at 100-130K
 * IOPS (its 20 ms timer's 50 included), at half 100-170. Half of a
 * 2 MiB buffer still leaves its programs 1 MiB to write while the
 * recorder, at nice -20, wakes and drains. */
#define IT_WAKE_SHARE 2

/* A layer's CPUs' event buffers (bpf/ev_buf.bpf.h, struct it_ev_buf: one
 * value per CPU of an mmapable array), mapped as sources of an evring. */
struct it_ev_bufs {
	struct bpf_map *map;
	size_t data_bytes;             /* each buffer's data: a power of two */
	void *mem;                     /* the map, mapped (NULL: not yet) */
	size_t len;
	unsigned int ncpu;
};
/* Divides a layer's share of --ringbuf-mb (total) among its CPUs' event
 * buffers and rings: each CPU's buffer takes its share, up to what an
 * array map's value may hold, and its ring a part of it (1 / part) for
 * what the buffer does not take (a program that could not take the buffer
 * or found it full, and the records the buffer is not for), or all of the
 * share beyond the buffer's limit. Sizes the map (its entries, value
 * size) before the load. */
void it_ev_bufs_size(struct it_ev_bufs *m, struct bpf_map *map, size_t total, unsigned int ncpu,
		     unsigned int part, size_t *ring_bytes);
/* Maps the buffers as sources first.. first + ncpu - 1 of r (after the
 * rings: it_evring_make's extra). 0, or -errno. */
int it_ev_bufs_map(struct it_ev_bufs *m, struct it_evring *r, unsigned int first);
/* Records the CPUs' programs sent through the rings instead (ringed). */
uint64_t it_ev_bufs_ringed(const struct it_ev_bufs *m);
void it_ev_bufs_unmap(struct it_ev_bufs *m);

/* ---- counters every layer reads ---- */
struct bpf_map;
/* A per-CPU array's entry 0 (a layer's ring-buffer drop counter): per CPU
 * into per_cpu (ncpu entries, may be NULL), the sum as the return value. */
uint64_t it_percpu_counter(struct bpf_map *map, uint64_t *per_cpu, unsigned int ncpu);
/* Runs of the object's programs the kernel skipped because a program was
 * already running on that CPU (bpf_prog_info.recursion_misses): each is an
 * event lost without a trace in the ring buffer. */
uint64_t it_prog_misses(struct bpf_object *obj);

/* The directory tracefs is mounted on (mounting it if needed), or NULL. */
const char *it_tracefs_dir(void);

#endif
