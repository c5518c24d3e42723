// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The syscall layer: every storage system call as one record, paired in the
 * kernel, enriched (file type, file tag, offset at entry, path once per
 * tag), filtered in the kernel (calls, pids with their descendants, tids,
 * comm, cgroup, path prefix); plus one record per io_uring request, sent
 * in two halves (submission, completion) that the recorder joins.
 *
 * Hooks (user space picks one pair at run time, see src/layers/syscall/record_loader.c):
 *   tp_btf/sys_enter + sys_exit       every system call runs the program;
 *                                     a read-only table drops the others
 *   raw_tp/sys_enter + sys_exit       the same for kernels without tp_btf
 *   tracepoint/syscalls/sys_enter_X   attached once per traced call only
 * The entry arguments wait in task-local storage (one slot per thread, no
 * hashing, freed with the task) until sys_exit emits the record.
 *
 * Filters, cheapest first: the call table (one byte of read-only data);
 * the pid/tid set (the scope's, bpf/scope.bpf.h, and --tid: bitmaps in
 * array maps, inlined loads); then, for a
 * thread in the set, a per-thread verdict (comm, cgroup) computed once and
 * kept in its slot with the comm it was computed for, so a comm change
 * (exec, prctl) recomputes it. A thread the pid filter keeps out never
 * gets a slot, so its sys_exit costs one load (task->bpf_storage). The
 * path filter runs per file tag (at the tag's first sight) and on names.
 * With a task's predicate or sampling (--filter, --sample) and the block
 * layer deciding, a call is kept at its exit only when its thread queued a
 * kept I/O since its entry (scope.bpf.h: scope_call_kept), before its
 * names and tags cost anything; an io_uring request likewise when its
 * thread queued a kept I/O while submitting it (see uring_decide).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iotrail/syscall.h"
#include "core_fixes.bpf.h"
#include "cpu_rings.bpf.h"
#include "ev_buf.bpf.h"
#include "scope.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define AT_FDCWD_ (-100)
#define S_IFMT_ 00170000
#define O_CREAT_ 0100
#define O_WRONLY_ 01
#define O_TRUNC_ 01000
#define O_APPEND_ 02000
#define PF_IO_WORKER_ 0x00000010

/*
 * Cost model (measured on the development VM, see README): a helper call
 * such as bpf_probe_read_kernel costs 20-40 ns there, a plain load through
 * a BTF pointer about one. So the hot path reads kernel memory with plain
 * loads (BPF_PROBE_MEM) through the trusted current task and through
 * pointers typed with bpf_rdonly_cast (Linux 6.2+, inlined by the
 * verifier); helpers are left for user memory and the fd array slot.
 */
#ifndef IT_SYS_COMPAT
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define RDONLY(T, p) ((T *)bpf_rdonly_cast((const void *)(p), bpf_core_type_id_kernel(T)))
/* a field through such a pointer (or a trusted one): a plain load */
#define RD(p, f) ((p)->f)
#define RD2(p, f, g) ((p)->f->g)
#else
/*
 * The same programs for kernels without bpf_rdonly_cast (before 6.2;
 * Debian 12's 6.1): built again with IT_SYS_COMPAT (Makefile, the
 * syscall_compat object), where such pointers are plain numbers, read
 * field by field with CO-RE probe reads (a helper call each).
 */
#define RDONLY(T, p) ((T *)(unsigned long)(p))
#define RD(p, f) BPF_CORE_READ(p, f)
#define RD2(p, f, g) BPF_CORE_READ(p, f, g)
#endif

/* ---- configuration, set by user space before load ---- */
const volatile __u8 call_of_nr[IT_SYS_NR_MAX];  /* syscall nr -> enum it_sys_call, 0 = not traced */
const volatile __u8 uring_on;                   /* trace io_uring requests */
const volatile __s32 uring_enter_nr = -1;       /* io_uring_enter's syscall number */
const volatile __u32 self_tgid;                 /* the recorder: never traced */
const volatile __u8 filter_tids;                /* only tgids in the scope's pid set, or tids
						 * in sys_tid_bits (--tid) */
const volatile __u32 nprefix;                   /* --path prefixes */
const volatile __u32 prefix_dev[IT_SYS_MAX_PREFIX];
const volatile __u64 prefix_ino[IT_SYS_MAX_PREFIX];
const volatile __u32 prefix_len[IT_SYS_MAX_PREFIX];
const volatile char prefix_str[IT_SYS_MAX_PREFIX][IT_SYS_PREFIX_LEN];
const volatile __u64 wakeup_bytes = 1 << 20;    /* wake the consumer past this much data */

/* The decode table, generated from IT_SYS_CALLS. */
#define DECODE_ROW(ID, V, nm, tp, grp, fd_, p, p2, off_, cnt, fl, md, wh, ax, knd) \
	[V] = { IT_A_##fd_, IT_A_##p, IT_A_##p2, IT_A_##off_, IT_A_##cnt, IT_A_##fl, \
		IT_A_##md, IT_A_##wh, IT_A_##ax, IT_SG_##grp, (knd) },
#define DECODE_SIZE 128 /* a power of two >= IT_SYS_MAX: "& (DECODE_SIZE - 1)" bounds an index */
static const struct it_sys_decode decode[DECODE_SIZE] = { IT_SYS_CALLS(DECODE_ROW) };

/* ---- maps ---- */
/* A ring per CPU (cpu_rings.bpf.h); the recorder merges them by time
 * (src/evring.c, with the time of each record kind in record_loader.c). */
IT_CPU_RINGS(sys_events);

/* bpf_ringbuf_output into this CPU's ring: 0, or nonzero (not written). */
static __always_inline long sys_output(void *data, __u64 size, __u64 flags)
{
	void *rb = it_cpu_ring(&sys_events);

	return rb ? bpf_ringbuf_output(rb, data, size, flags) : -1;
}

/* bpf_ringbuf_reserve in this CPU's ring, or NULL. */
static __always_inline void *sys_reserve(__u64 size)
{
	void *rb = it_cpu_ring(&sys_events);

	return rb ? bpf_ringbuf_reserve(rb, size, 0) : NULL;
}

/*
 * The fixed-size records (calls, io_uring submissions and completions: all
 * but paths, names, tasks and titles) go into a buffer per CPU instead
 * (ev_buf.bpf.h: plain stores, where a ring takes a spinlock with
 * interrupts off and writes a header twice). sys_enter and sys_exit are
 * faultable tracepoints on newer kernels (6.18 here), run with preemption
 * on: a program may be preempted while it holds the buffer, and another
 * task's program may then run on the CPU. So the buffer is taken by a
 * compare-and-exchange (ev_buf_take), and a program that finds it taken
 * (or full) sends its record through the ring; the recorder merges both
 * by time.
 */
IT_EV_BUFS_MAP(sys_bufs);

/* Records lost because the ring was full: sys_drops the calls' (a call,
 * an io_uring request's half), sys_side_drops the side records' (a path, a
 * name, a task, an exit title: what a call refers to, not a call). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sys_drops SEC(".maps"), sys_side_drops SEC(".maps");

/* The last files a thread used, so repeated calls on one file skip the
 * tag table (a hash lookup). */
struct tag_cache {
	__u64 ino;
	__u64 ts;
	__u32 dev;
	__u32 gen;
	__u8 ftype;
	__u8 match;
	__u8 pad[6];
};

/* A thread's slot: its verdict and the call in flight. */
struct tstate {
	struct tag_cache tc[2];
	__u32 tc_next;
	__u32 pad;
	__u64 comm[2];    /* comm the verdict was computed for */
	__u64 args[6];
	__u64 ts_enter;
	__u64 offset;
	__u64 count;
	__u64 aux;
	__u64 ino;
	__u64 tag_ts;
	__u32 dev;
	__s32 nr;
	__u16 call;
	__u16 sflags;
	__u8 ftype;
	__u8 known;       /* verdict computed */
	__u8 traced;      /* the verdict */
	__u8 pending;     /* a call is in flight */
	/* with the block layer deciding (scope_mark_calls): the io_uring
	 * request this thread submitted last, its submission record held
	 * back until its I/Os are decided (uring_decide) */
	__u8 upending;    /* upend holds one */
	__u8 upunted;     /* it was handed to io-wq meanwhile */
	__u8 upad[6];
	struct it_sys_uring_submit upend;
	/* the parent's tgid and the cgroup id the thread's records carry, and
	 * the pointers they were read through (ids_of) */
	__u64 parent_ptr, cset_ptr, cgrp_ptr;
	__u64 cgroup;
	__u32 ppid;
	__u32 pad2;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tstate);
} sys_tstate SEC(".maps");

/*
 * The --tid set as a bitmap over the pid space (PID_MAX_LIMIT is 4M:
 * 65536 words), like the scope's pid set (scope.bpf.h). An array lookup is
 * inlined by the verifier, so the filter costs a few loads, not a hash
 * lookup; and a filtered-out thread never gets a task-storage slot (see
 * on_exit).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IT_SCOPE_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} sys_tid_bits SEC(".maps");

/* File tags seen so far. i_generation is in the key so a reused inode
 * number (unlink, then create) is a new file. */
struct tag_key {
	__u64 ino;
	__u32 dev;
	__u32 gen;
};

struct tag_val {
	__u64 ts;      /* first seen */
	__u8 match;    /* under a --path prefix */
	__u8 ftype;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768); /* an evicted tag is walked and named again */
	__type(key, struct tag_key);
	__type(value, struct tag_val);
} sys_tags SEC(".maps");

/* Scratch for variable-length records (too big for the 512-byte stack).
 * The path walk keeps its cursor here, in map memory, not in registers:
 * the verifier then sees every iteration alike and verifies the loop
 * once instead of once per depth. */
struct walk_state {
	__u64 dentry;
	__u64 mnt;
	__u32 off;
	__u8 match;
	__u8 done;
};

struct path_buf {
	struct walk_state w;
	struct it_sys_path hdr;
	char comps[IT_PATH_MAX + 256];
};

struct name_buf {
	struct it_sys_name hdr;
	char name[IT_NAME_MAX];
};

/* A call's two name arguments, read before the filter decides. */
struct name_bufs {
	struct name_buf n[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct path_buf);
} sys_path_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct name_bufs);
} sys_name_buf SEC(".maps");

/* ---- helpers ---- */

/*
 * Waking the consumer on every record costs an irq_work and a wakeup per
 * system call (measured here: several microseconds a call, when the
 * consumer keeps up and sleeps between records). So records are committed
 * without a wakeup, and one record in 256 per CPU looks whether
 * wakeup_bytes are waiting. The count is per CPU: one shared counter
 * moved its cache line between the CPUs on every traced call of two
 * threads. The consumer also polls with a short timeout, which bounds the
 * delay when the rate is low.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sys_since_check SEC(".maps");

static __always_inline __u64 wakeup_flag(void)
{
	__u32 zero = 0, *n = bpf_map_lookup_elem(&sys_since_check, &zero);
	void *rb;

	if (n && (++*n & 255))
		return BPF_RB_NO_WAKEUP;
	rb = it_cpu_ring(&sys_events);
	return rb && bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void count_in(void *drops)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(drops, &zero);

	if (n)
		*n += 1;
}
#define count_drop() count_in(&sys_drops)
#define count_side_drop() count_in(&sys_side_drops)

/* A record of size bytes (a constant, at most IT_EV_BUF_SLACK - 8) into
 * this CPU's buffer, or its ring: 0, or nonzero (not written). */
static __always_inline long sys_record(void *data, __u64 size)
{
#ifdef IT_EV_BUF_ON
	struct it_ev_buf *b = ev_buf_of_cpu(&sys_bufs);
	void *p;
	long err;

	if (!b)
		return -1;
	p = ev_buf_take(b, size);
	if (p) {
		/* records are 8-byte aligned, and every one starts with its
		 * u16 kind on an 8-byte boundary: copied a word at a time (a
		 * copy of unknown alignment goes byte by byte) */
		__builtin_memcpy(__builtin_assume_aligned(p, 8), __builtin_assume_aligned(data, 8),
				 size);
		ev_buf_publish(b, &sys_events);
		return 0;
	}
	err = sys_output(data, size, wakeup_flag());
	if (!err) /* a program may interrupt this one here: atomic */
		__sync_fetch_and_add(&b->ringed, 1);
	return err;
#else
	return sys_output(data, size, wakeup_flag());
#endif
}

/* The pid/tid filter, before anything else is looked at. */
static __always_inline bool ids_wanted(__u32 tgid, __u32 pid)
{
	if (!filter_tids)
		return scope_pid_wanted(tgid);
	return (scope_pids && scope_bit(&scope_pid_bits, tgid)) || scope_bit(&sys_tid_bits, pid);
}

/* task: a trusted pointer (the current task): plain loads on every kernel */
static __always_inline bool id_wanted(struct task_struct *task)
{
	return ids_wanted(task->tgid, task->pid);
}

static __always_inline __u8 file_type(__u32 mode)
{
	switch (mode & S_IFMT_) {
	case 0100000: return IT_FT_REG;
	case 0040000: return IT_FT_DIR;
	case 0020000: return IT_FT_CHR;
	case 0060000: return IT_FT_BLK;
	case 0010000: return IT_FT_FIFO;
	case 0120000: return IT_FT_LNK;
	case 0140000: return IT_FT_SOCK;
	default: return IT_FT_OTHER;
	}
}

/* The open file behind fd in task's table, typed for plain loads. */
static __always_inline struct file *fd_file(struct task_struct *task, long fd)
{
	struct files_struct *files = task->files;
	struct fdtable *fdt;
	struct file *f = NULL;

	if (fd < 0 || !files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || (unsigned long)fd >= fdt->max_fds)
		return NULL;
	/*
	 * fdt->fd is an array of pointers, which BTF cannot type. struct
	 * kiocb starts with a struct file pointer, so a slot read through it
	 * is a plain load (a probe read would cost a helper call).
	 */
#ifndef IT_SYS_COMPAT
	if (bpf_core_field_offset(struct kiocb, ki_filp) == 0)
		return RDONLY(struct kiocb, &fdt->fd[fd])->ki_filp;
#endif
	bpf_probe_read_kernel(&f, sizeof(f), &fdt->fd[fd]);
	return f ? RDONLY(struct file, f) : NULL;
}

static __always_inline bool is_prefix_dir(struct dentry *d)
{
	struct inode *ino;
	__u32 dev;
	__u64 i;

	if (!nprefix)
		return false;
	ino = RD(d, d_inode);
	if (!ino)
		return false;
	dev = RD2(ino, i_sb, s_dev);
	i = RD(ino, i_ino);
	for (int k = 0; k < IT_SYS_MAX_PREFIX; k++)
		if (k < nprefix && prefix_dev[k] == dev && prefix_ino[k] == i)
			return true;
	return false;
}

/* One step of the walk: the current dentry's name, or a mount crossing. */
static __always_inline void walk_step(struct path_buf *b)
{
	struct dentry *dentry = RDONLY(struct dentry, b->w.dentry), *parent, *root;
	struct mount *mnt = RDONLY(struct mount, b->w.mnt);
	const unsigned char *name;
	__u32 off = b->w.off;
	long n;

	parent = RD(dentry, d_parent);
	root = RD(mnt, mnt.mnt_root);
	if (is_prefix_dir(dentry))
		b->w.match = 1;
	if ((__u64)dentry == (__u64)root || (__u64)dentry == (__u64)parent) {
		struct mount *up = RD(mnt, mnt_parent);

		if ((__u64)up == (__u64)mnt || !up) {
			b->w.done = 1;
			return;
		}
		b->w.dentry = (__u64)RD(mnt, mnt_mountpoint);
		b->w.mnt = (__u64)up;
		return;
	}
	name = RD(dentry, d_name.name);
	n = bpf_probe_read_kernel_str(&b->comps[off & (IT_PATH_MAX - 1)], 256, name);
	if (n <= 0 || off + n >= IT_PATH_MAX) {
		b->hdr.pflags |= IT_PATHF_TRUNCATED;
		b->w.done = 1;
		if (n > 0)
			b->w.off = IT_PATH_MAX;
		return;
	}
	b->w.off = off + n;
	b->hdr.ncomp++;
	b->w.dentry = (__u64)parent;
}

/*
 * Walks from a dentry up to the root of the mount namespace, crossing
 * mounts, writing the names leaf first into b->comps. Returns whether a
 * --path prefix directory was on the way. bpf_d_path is not allowed in
 * tracepoints, hence the walk; it runs once per file tag.
 */
static __noinline bool walk_path(struct dentry *dentry, struct vfsmount *vfsmnt,
				 struct path_buf *b)
{
	b->w.dentry = (__u64)dentry;
	b->w.mnt = (__u64)container_of(vfsmnt, struct mount, mnt);
	b->w.off = 0;
	b->w.match = 0;
	b->w.done = 0;
	b->hdr.ncomp = 0;
	b->hdr.pflags = 0;
#ifdef IT_SYS_COMPAT
	/* 6.1's verifier takes a loop only where a jump closes it; clang
	 * closes this one by falling into its head */
#pragma unroll
#endif
	for (int i = 0; i < IT_PATH_DEPTH; i++) {
		walk_step(b);
		if (b->w.done)
			break;
	}
	if (!b->w.done)
		b->hdr.pflags |= IT_PATHF_TRUNCATED;
	b->hdr.len = b->w.off < IT_PATH_MAX ? b->w.off : IT_PATH_MAX;
	return b->w.match;
}

/* A tag seen for the first time: walk its path, emit it, remember it. */
static __noinline int new_tag(struct tag_key *key, struct tag_val *val, struct dentry *dentry,
			      struct vfsmount *mnt)
{
	struct path_buf *b;
	__u32 zero = 0, len;

	b = bpf_map_lookup_elem(&sys_path_buf, &zero);
	if (!b)
		return -1;
	val->ts = bpf_ktime_get_ns();
	val->match = walk_path(dentry, mnt, b) || !nprefix;
	b->hdr.rec = IT_SREC_PATH;
	b->hdr.ftype = val->ftype;
	b->hdr.dev = key->dev;
	b->hdr.ino = key->ino;
	b->hdr.tag_ts = val->ts;
	if (val->match)
		b->hdr.pflags |= IT_PATHF_MATCH;
	bpf_map_update_elem(&sys_tags, key, val, BPF_NOEXIST);
	/* only paths under the prefixes are worth the ring space */
	if (!val->match)
		return 0;
	len = b->hdr.len;
	if (len > IT_PATH_MAX)
		len = IT_PATH_MAX;
	if (sys_output(&b->hdr, sizeof(b->hdr) + len, wakeup_flag()))
		count_side_drop();
	return 0;
}

/*
 * Fills the slot's file fields (type, tag) for a dentry; returns whether
 * the file passes the path filter. The thread's two last files answer
 * first, then the tag table; a new tag has its path walked and emitted.
 */
static __always_inline bool tag_dentry(struct tstate *st, struct dentry *dentry,
				       struct vfsmount *mnt)
{
	struct inode *inode = RD(dentry, d_inode);
	struct tag_key key;
	struct tag_val val = {}, *v;
	struct tag_cache *c;
	__u32 slot;

	if (!inode)
		return true;
	key.ino = RD(inode, i_ino);
	key.dev = RD2(inode, i_sb, s_dev);
	key.gen = RD(inode, i_generation);
	st->dev = key.dev;
	st->ino = key.ino;
	for (int i = 0; i < 2; i++) {
		c = &st->tc[i];
		if (c->ino == key.ino && c->dev == key.dev && c->gen == key.gen && c->ts) {
			st->tag_ts = c->ts;
			st->ftype = c->ftype;
			return c->match;
		}
	}
	v = bpf_map_lookup_elem(&sys_tags, &key);
	if (v) {
		val = *v;
	} else {
		val.ftype = file_type(RD(inode, i_mode));
		if (new_tag(&key, &val, dentry, mnt))
			return true;
	}
	slot = st->tc_next++ & 1;
	c = &st->tc[slot];
	c->ino = key.ino;
	c->dev = key.dev;
	c->gen = key.gen;
	c->ts = val.ts;
	c->ftype = val.ftype;
	c->match = val.match;
	st->tag_ts = val.ts;
	st->ftype = val.ftype;
	return val.match;
}

/* Fills the slot's file fields from a file; false when filtered out. */
static __always_inline bool tag_file(struct tstate *st, struct file *file)
{
	if (!file)
		return true;
	return tag_dentry(st, RD(file, f_path.dentry), RD(file, f_path.mnt));
}

/*
 * The parent's tgid and the cgroup id (bpf_get_current_cgroup_id without
 * the helper call) for a record, at the cost of a load or two while they
 * stay what they were: the thread's slot keeps the last values with
 * the pointers they came from (task->real_parent; task->cgroups and its
 * default cgroup), and the parent's task_struct and the cgroup's kernfs
 * node, cold lines two pointers away, are read again only when a pointer
 * changed (a reparenting, a cgroup migration). Read every time, they cost
 * the default recording ~110 ns per I/O of fio (io_uring: sys_exit and
 * uring_submit), measured 2026-11-24.
 */
static __always_inline void ids_of(struct task_struct *task, struct tstate *st, __u32 *ppid,
				   __u64 *cgroup)
{
	struct task_struct *parent = task->real_parent;
	struct css_set *cset = task->cgroups;
	struct cgroup *cgrp = cset->dfl_cgrp;

	if ((__u64)parent != st->parent_ptr) {
		st->parent_ptr = (__u64)parent;
		st->ppid = parent->tgid;
	}
	if ((__u64)cset != st->cset_ptr || (__u64)cgrp != st->cgrp_ptr) {
		st->cset_ptr = (__u64)cset;
		st->cgrp_ptr = (__u64)cgrp;
		st->cgroup = cgrp->kn->id;
	}
	*ppid = st->ppid;
	*cgroup = st->cgroup;
}

static __always_inline void emit_task(struct task_struct *task, struct tstate *st)
{
	struct it_sys_task *t = sys_reserve(sizeof(*t));

	if (!t) {
		count_side_drop();
		return;
	}
	t->rec = IT_SREC_TASK;
	t->reserved = 0;
	t->pid = task->tgid;
	t->tid = task->pid;
	ids_of(task, st, &t->ppid, &t->cgroup);
	t->ts = bpf_ktime_get_ns();
	__builtin_memcpy(t->comm, st->comm, sizeof(t->comm));
	bpf_ringbuf_submit(t, wakeup_flag());
}

/* The per-thread verdict, recomputed when the comm changed. */
static __always_inline bool traced(struct task_struct *task, struct tstate *st)
{
	__u64 comm[2];
	bool ok = true;

	comm[0] = *(__u64 *)&task->comm[0];
	comm[1] = *(__u64 *)&task->comm[8];
	if (st->known && st->comm[0] == comm[0] && st->comm[1] == comm[1])
		return st->traced;
	st->comm[0] = comm[0];
	st->comm[1] = comm[1];
	st->known = 1;
	if (task->tgid == self_tgid)
		ok = false;
	if (ok && (scope_comm_len || scope_cgroup))
		ok = scope_rest_wanted(task->tgid, (const char *)comm);
	st->traced = ok;
	if (ok)
		emit_task(task, st);
	return ok;
}

static __always_inline bool is_write(__u8 call)
{
	return call == IT_SYS_WRITE || call == IT_SYS_PWRITE64 || call == IT_SYS_WRITEV ||
	       call == IT_SYS_PWRITEV || call == IT_SYS_PWRITEV2;
}

static __always_inline __u64 arg_at(const __u64 *args, __u8 i)
{
	return i < 6 ? args[i] : 0;
}

struct iovec_ {
	__u64 base;
	__u64 len;
};

/* Sum of the first iovecs: the bytes a readv/writev asks for. */
static __always_inline void sum_iov(struct tstate *st, __u64 uiov, __u64 cnt)
{
	struct iovec_ iov[IT_SYS_IOV_MAX] = {};
	__u32 n = cnt < IT_SYS_IOV_MAX ? cnt : IT_SYS_IOV_MAX;
	__u64 sum = 0;

	if (cnt > IT_SYS_IOV_MAX)
		st->sflags |= IT_SYSF_IOV_PARTIAL;
	if (!n || n > IT_SYS_IOV_MAX)
		return;
	if (bpf_probe_read_user(iov, n * sizeof(iov[0]), (void *)uiov))
		return;
	for (int i = 0; i < IT_SYS_IOV_MAX; i++)
		if (i < n)
			sum += iov[i].len;
	st->count = sum;
}

/* ---- system calls ---- */

/* The filters of sys_enter: the slot of a thread whose call is traced,
 * else NULL. Cheap tests first. */
static __always_inline struct tstate *enter_slot(long nr, struct task_struct *task)
{
	struct tstate *st;

	if ((unsigned long)nr >= IT_SYS_NR_MAX || !call_of_nr[nr])
		return NULL;
	if (!id_wanted(task))
		return NULL;
	st = bpf_task_storage_get(&sys_tstate, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return NULL;
	st->pending = 0;
	if (!traced(task, st))
		return NULL;
	return st;
}

/* Stashes a traced call's entry in its thread's slot. */
static __always_inline int on_enter(struct tstate *st, struct task_struct *task, long nr,
				    const __u64 *args)
{
	const struct it_sys_decode *d;
	__u8 call;

	if ((unsigned long)nr >= IT_SYS_NR_MAX)
		return 0;
	call = call_of_nr[nr];
	if (!call || call >= IT_SYS_MAX)
		return 0;
	barrier_var(call); /* keep the mask below: clang drops it after the test */
	d = &decode[call & (DECODE_SIZE - 1)];
	st->call = call;
	st->nr = nr;
	st->sflags = 0;
	st->ftype = IT_FT_NONE;
	st->dev = 0;
	st->ino = 0;
	st->tag_ts = 0;
	for (int i = 0; i < 6; i++)
		st->args[i] = args[i];
	st->offset = arg_at(args, d->off);
	st->count = arg_at(args, d->count);
	st->aux = arg_at(args, d->aux);
	if (d->kind & IT_SK_IOV)
		sum_iov(st, args[1], args[2]);
	/* under a path filter, a call with neither a file nor a name has no path
	 * to pass it (a close of a bad fd, io_getevents) */
	if (nprefix && !(d->kind & (IT_SK_FD | IT_SK_RETFD)) && d->path >= 6)
		return 0;
	if (d->kind & IT_SK_FD) {
		struct file *f = fd_file(task, (int)arg_at(args, d->fd));

		if (nprefix && !f)
			return 0;
		if (!tag_file(st, f))
			return 0;
		if (f && ((d->kind & IT_SK_FPOS) ||
			  ((d->kind & IT_SK_POS_OR_FPOS) && (__s64)st->offset == -1))) {
			st->offset = RD(f, f_pos);
			st->sflags |= IT_SYSF_FPOS;
		}
		/* O_APPEND writes go to the end, whatever the position says */
		if (f && (RD(f, f_flags) & O_APPEND_) && is_write(call)) {
			st->offset = RD2(f, f_inode, i_size);
			st->sflags = (st->sflags & ~IT_SYSF_FPOS) | IT_SYSF_APPEND;
		}
	}
	st->ts_enter = bpf_ktime_get_ns();
	st->pending = 1;
	return 0;
}

/* Absolute name under a --path prefix? */
static __noinline bool name_under_prefix(const char *name)
{
	for (int k = 0; k < IT_SYS_MAX_PREFIX; k++) {
		__u32 len;
		bool ok = true;

		if (k >= nprefix)
			break;
		len = prefix_len[k];
		for (int i = 0; i < IT_SYS_PREFIX_LEN; i++) {
			if (i >= len)
				break;
			if (name[i] != prefix_str[k][i]) {
				ok = false;
				break;
			}
		}
		if (ok && len < IT_SYS_PREFIX_LEN &&
		    (name[len & (IT_SYS_PREFIX_LEN - 1)] == '/' ||
		     name[len & (IT_SYS_PREFIX_LEN - 1)] == 0 || prefix_str[k][(len - 1) & 255] == '/'))
			return true;
	}
	return false;
}

/* Reads a name argument from user memory into b; false when unreadable. */
static __always_inline bool read_name(struct name_buf *b, __u64 uptr, __u8 which, __u32 tid,
				      __u64 ts_enter)
{
	long n;

	if (!uptr)
		return false;
	n = bpf_probe_read_user_str(b->name, sizeof(b->name), (void *)uptr);
	if (n <= 0)
		return false;
	b->hdr.rec = IT_SREC_NAME;
	b->hdr.len = n - 1;
	b->hdr.which = which;
	b->hdr.truncated = n == sizeof(b->name);
	b->hdr.tid = tid;
	b->hdr.ts_enter = ts_enter;
	return true;
}

static __always_inline void emit_name(struct name_buf *b)
{
	if (sys_output(b, sizeof(b->hdr) + (b->hdr.len & (IT_NAME_MAX - 1)),
			       wakeup_flag()))
		count_side_drop();
}

/* The directory a relative name is under: dirfd, or the cwd. */
static __always_inline bool tag_dir(struct task_struct *task, struct tstate *st,
				    const struct it_sys_decode *d)
{
	long dfd = (d->kind & IT_SK_DIRFD) ? (int)arg_at(st->args, d->fd) : AT_FDCWD_;

	st->sflags |= IT_SYSF_TAG_DIR;
	if (dfd == AT_FDCWD_) {
		struct fs_struct *fs = task->fs;

		return !fs || tag_dentry(st, fs->pwd.dentry, fs->pwd.mnt);
	}
	return tag_file(st, fd_file(task, dfd));
}

/*
 * Name arguments and the path filter: an absolute name is matched against
 * the prefixes, a relative one by the directory it is under (which also
 * becomes the call's tag, IT_SYSF_TAG_DIR). The names are emitted only when
 * the call passes; false drops the call.
 */
static __always_inline bool names(struct task_struct *task, struct tstate *st,
				  const struct it_sys_decode *d, __u32 tid)
{
	bool check = nprefix > 0, xname = d->kind & IT_SK_XNAME;
	bool have0 = false, have1 = false, ok0 = true, ok1 = false, okdir = true;
	struct name_bufs *b;
	__u32 zero = 0;

	/* most calls name nothing (fd-based ones: read, pread64,
	 * io_uring_enter, ...): they do not touch the buffers, a per-CPU
	 * page which may cost a TLB refill at sys_exit (a call that slept)
	 * for nothing */
	if (d->path >= 6 && d->path2 >= 6)
		return true;
	b = bpf_map_lookup_elem(&sys_name_buf, &zero);
	if (!b)
		return true;
	if (d->path < 6) {
		char first;

		have0 = read_name(&b->n[0], arg_at(st->args, d->path), 0, tid, st->ts_enter);
		first = have0 ? b->n[0].name[0] : 0;
		if (first != '/' && !st->tag_ts)
			okdir = tag_dir(task, st, d);
		if (!first) /* AT_EMPTY_PATH: the dirfd is the file itself */
			st->sflags &= ~IT_SYSF_TAG_DIR;
		if (check)
			ok0 = first == '/' ? name_under_prefix(b->n[0].name) : okdir;
	}
	if (d->path2 < 6) {
		have1 = read_name(&b->n[1], arg_at(st->args, d->path2), xname ? 2 : 1, tid,
				  st->ts_enter);
		/* rename: either side under a prefix will do */
		if (check && have1 && !xname)
			ok1 = b->n[1].name[0] == '/' ? name_under_prefix(b->n[1].name) : okdir;
	}
	if (check && !ok0 && !ok1)
		return false;
	if (have0)
		emit_name(&b->n[0]);
	if (have1)
		emit_name(&b->n[1]);
	if (have0 || have1)
		st->sflags |= IT_SYSF_NAME;
	return true;
}

/*
 * io_uring requests with the block layer deciding (scope_mark_calls): a
 * request's bios are queued, when inline, by its submitting thread between
 * io_uring_submit_req and the thread's next submission or the return of
 * its io_uring_enter; the thread's completions run after that. So the
 * submission record waits in the thread's slot and is decided at the first
 * of these (one task-storage lookup, the block layer's marks): sent when a
 * kept I/O was queued since the submission, else counted and dropped, by
 * the syscall layer's rule for calls (a request that queued none, such as
 * a page-cache hit, is not recorded). A kept request's address goes into
 * sys_uring_kept, which its completion takes out (and is sent only then):
 * a request left out costs its completion a failed delete.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	/* kept requests in flight (a request without a CQE, IOSQE_CQE_SKIP_SUCCESS,
	 * stays until evicted); 1 when not deciding (user space) */
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u8);
} sys_uring_kept SEC(".maps");

static __always_inline void uring_decide(struct task_struct *task, struct tstate *st)
{
	struct scope_io_mark *m = bpf_task_storage_get(&scope_io_marks, task, 0, 0);
	__u64 since = st->upend.call.ts_enter;
	__u8 one = 1;

	st->upending = 0;
	if (m && m->kept_ns >= since) {
		scope_count(&scope_call_counts, IT_CCK_URING, IT_URC_KEPT);
		/* sent before its completion can find it (on another CPU);
		 * a submission lost to a full ring has its completion kept out */
		if (sys_record(&st->upend, sizeof(st->upend)))
			count_drop();
		else
			bpf_map_update_elem(&sys_uring_kept, &st->upend.req, &one, BPF_ANY);
		return;
	}
	scope_count(&scope_call_counts, IT_CCK_URING,
		    st->upunted ? IT_URC_ASYNC :
		    m && m->left_ns >= since ? IT_URC_NOT_KEPT : IT_URC_NO_IO);
}

/* A call's exit, for a thread with storage (the programs test that:
 * without, it has no call pending, and one the pid filter keeps out has
 * none; see sys_enter_btf_scoped for why the test comes alone). */
static __always_inline int on_exit(struct task_struct *task, long nr, long ret)
{
	const struct it_sys_decode *d;
	struct it_sys_event ev, *e;
	struct tstate *st;
	__u64 now;
	__u32 tid;
	__u16 call;
	/* io_uring_enter's return decides the request it submitted last */
	bool decide = scope_mark_calls && uring_on && nr == uring_enter_nr;

	if (((unsigned long)nr >= IT_SYS_NR_MAX || !call_of_nr[nr]) && !decide)
		return 0;
	st = bpf_task_storage_get(&sys_tstate, task, 0, 0);
	if (!st)
		return 0;
	if (decide && st->upending)
		uring_decide(task, st);
	if (!st->pending || st->nr != nr)
		return 0;
	now = bpf_ktime_get_ns();
	st->pending = 0;
	call = st->call;
	if (call >= IT_SYS_MAX)
		return 0;
	barrier_var(call);
	d = &decode[call & (DECODE_SIZE - 1)];
	tid = task->pid;
	/* a task's predicate or sampling: only calls that queued a kept I/O
	 * (scope.bpf.h), decided before the call's names cost anything */
	if (scope_mark_calls && !scope_call_kept(task, st->ts_enter))
		return 0;

	if ((d->kind & IT_SK_RETFD) && ret >= 0) {
		if (!tag_file(st, fd_file(task, ret)))
			return 0;
	} else if (!names(task, st, d, tid)) {
		return 0;
	}

	/* built on the stack and copied into the buffer (or by one helper
	 * call into the ring, cheaper than reserve + submit there) */
	e = &ev;
	e->rec = IT_SREC_CALL;
	e->call = st->call;
	e->ftype = st->ftype;
	e->whence = arg_at(st->args, d->whence);
	e->sflags = st->sflags;
	e->pid = task->tgid;
	e->tid = tid;
	ids_of(task, st, &e->ppid, &e->cgroup);
	e->fd = d->fd < 6 ? (__s32)arg_at(st->args, d->fd) : -1;
	e->flags = arg_at(st->args, d->flags);
	e->mode = arg_at(st->args, d->mode);
	if (d->kind & IT_SK_CREAT)
		e->flags = O_CREAT_ | O_WRONLY_ | O_TRUNC_;
	if (d->kind & IT_SK_OPENHOW) {
		struct open_how how = {};

		bpf_probe_read_user(&how, sizeof(how), (void *)st->args[2]);
		e->flags = how.flags;
		e->mode = how.mode;
	}
	e->dev = st->dev;
	e->cpu = bpf_get_smp_processor_id();
	e->ts_enter = st->ts_enter;
	e->ts_exit = now;
	e->ret = ret;
	e->offset = st->offset;
	e->count = st->count;
	e->ino = st->ino;
	e->tag_ts = st->tag_ts;
	e->aux = st->aux;
	if (sys_record(e, sizeof(*e)))
		count_drop();
	return 0;
}

/* tp_btf: the arguments are read straight from pt_regs (a trusted
 * pointer here, so plain loads). */
#if defined(__TARGET_ARCH_x86)
#define SYSCALL_ARGS(r) { (r)->di, (r)->si, (r)->dx, (r)->r10, (r)->r8, (r)->r9 }
#define SYSCALL_NR(r) ((r)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define SYSCALL_ARGS(r) { (r)->orig_x0, (r)->regs[1], (r)->regs[2], (r)->regs[3], \
			  (r)->regs[4], (r)->regs[5] }
#define SYSCALL_NR(r) ((r)->syscallno)
#endif

/*
 * Under a pid filter (-p, --tid, a command's processes) sys_enter is a
 * _scoped program (record_loader.c loads one of each pair), whose first
 * test reads the task alone: every thread in scope was given its storage
 * up front (sys_mark_tasks, sys_mark_fork), so one with none is out. Why
 * the task and nothing else: where a system call's entry flushes the TLB
 * (PTI without PCID), each other page a program touches first costs a TLB
 * refill at every call, map memory and read-only data alike (the verifier
 * keeps a load of a frozen constant), ~20-30 ns each here; the task is a
 * page the entry has just touched. So the rest is a function of its own
 * (__noinline), and the program does nothing else before the test
 * (doc/performance-log.md, 2026-11-25; the JIT's private stack, measured
 * apart, costs nothing there).
 */
/* a thread with no task storage at all: out of scope at sys_enter under a
 * pid filter, with no call pending at sys_exit always */
#define NO_SLOT(task) (!(task)->bpf_storage)

/*
 * The programs of a hook kind K (btf, raw), from its enter_K and nr_K:
 * sys_enter_K (every thread a candidate), sys_enter_K_scoped (under a pid
 * filter) and sys_exit_K. The test of the task comes alone, the rest in a
 * __noinline function (above). The per-call tracepoints' programs (below)
 * are the same three, written out: their context is a struct of the
 * tracepoint's, not BPF_PROG's arguments.
 */
#define SYSCALL_PROGS(K, KIND)                                                             \
static __noinline int enter_##K##_in_scope(struct task_struct *task, struct pt_regs *regs,  \
					   long id)                                         \
{                                                                                           \
	return enter_##K(task, regs, id);                                                   \
}                                                                                           \
static __noinline int exit_##K##_in_scope(struct task_struct *task, struct pt_regs *regs,   \
					  long ret)                                         \
{                                                                                           \
	return on_exit(task, nr_##K(regs), ret);                                            \
}                                                                                           \
SEC(KIND "/sys_enter")                                                                      \
int BPF_PROG(sys_enter_##K, struct pt_regs *regs, long id)                                  \
{                                                                                           \
	return enter_##K(bpf_get_current_task_btf(), regs, id);                             \
}                                                                                           \
SEC(KIND "/sys_enter")                                                                      \
int BPF_PROG(sys_enter_##K##_scoped, struct pt_regs *regs, long id)                         \
{                                                                                           \
	struct task_struct *task = bpf_get_current_task_btf();                              \
                                                                                            \
	return NO_SLOT(task) ? 0 : enter_##K##_in_scope(task, regs, id);                    \
}                                                                                           \
SEC(KIND "/sys_exit")                                                                       \
int BPF_PROG(sys_exit_##K, struct pt_regs *regs, long ret)                                  \
{                                                                                           \
	struct task_struct *task = bpf_get_current_task_btf();                              \
                                                                                            \
	return NO_SLOT(task) ? 0 : exit_##K##_in_scope(task, regs, ret);                    \
}

#ifdef SYSCALL_ARGS
static __always_inline int enter_btf(struct task_struct *task, struct pt_regs *regs, long id)
{
	struct tstate *st = enter_slot(id, task);

	if (!st)
		return 0;
	__u64 args[6] = SYSCALL_ARGS(regs);

	return on_enter(st, task, id, args);
}

static __always_inline long nr_btf(struct pt_regs *regs)
{
	return SYSCALL_NR(regs);
}

SYSCALL_PROGS(btf, "tp_btf")
#endif

/* raw_tp: the same hook where tp_btf is missing; pt_regs via probe reads. */
static __always_inline int enter_raw(struct task_struct *task, struct pt_regs *regs, long id)
{
	struct tstate *st = enter_slot(id, task);

	if (!st)
		return 0;
	__u64 args[6] = {
		PT_REGS_PARM1_CORE_SYSCALL(regs), PT_REGS_PARM2_CORE_SYSCALL(regs),
		PT_REGS_PARM3_CORE_SYSCALL(regs), PT_REGS_PARM4_CORE_SYSCALL(regs),
		PT_REGS_PARM5_CORE_SYSCALL(regs), 0,
	};
#if defined(__TARGET_ARCH_x86)
	args[5] = BPF_CORE_READ(regs, r9);
#elif defined(__TARGET_ARCH_arm64)
	args[5] = BPF_CORE_READ(regs, regs[5]);
#endif
	return on_enter(st, task, id, args);
}

static __always_inline long nr_raw(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ(regs, syscallno);
#else
	return 0;
#endif
}

SYSCALL_PROGS(raw, "raw_tp")

/* syscalls:sys_enter_X / sys_exit_X: one program, attached by user space
 * to the tracepoint of each traced call (so other calls cost nothing). */
struct syscall_enter_ctx {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[6];
};

struct syscall_exit_ctx {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

static __always_inline int enter_tp(struct task_struct *task, struct syscall_enter_ctx *ctx)
{
	struct tstate *st = enter_slot(ctx->nr, task);
	__u64 args[6];

	if (!st)
		return 0;
	/* A program may not load past the smallest event it is attached to
	 * (fsync's has one argument: perf_event_set_bpf_prog checks
	 * max_ctx_offset), but the kernel passes room for six, so one probe
	 * read takes them all. */
	bpf_probe_read_kernel(args, sizeof(args), ctx->args);
	return on_enter(st, task, ctx->nr, args);
}

static __noinline int enter_tp_in_scope(struct task_struct *task, struct syscall_enter_ctx *ctx)
{
	return enter_tp(task, ctx);
}

static __noinline int exit_tp_in_scope(struct task_struct *task, struct syscall_exit_ctx *ctx)
{
	return on_exit(task, ctx->nr, ctx->ret);
}

SEC("tracepoint")
int sys_enter_tp(struct syscall_enter_ctx *ctx)
{
	return enter_tp(bpf_get_current_task_btf(), ctx);
}

/* under a pid filter, as sys_enter_btf_scoped */
SEC("tracepoint")
int sys_enter_tp_scoped(struct syscall_enter_ctx *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return NO_SLOT(task) ? 0 : enter_tp_in_scope(task, ctx);
}

SEC("tracepoint")
int sys_exit_tp(struct syscall_exit_ctx *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return NO_SLOT(task) ? 0 : exit_tp_in_scope(task, ctx);
}

/* ---- descendants of the processes in scope: scope.bpf.h ---- */

/* ---- io_uring requests ---- */

static __always_inline __u16 uring_call(__u8 op)
{
	switch (op) {
	case 22: return IT_SYS_URING_READ;    /* IORING_OP_READ */
	case 23: return IT_SYS_URING_WRITE;   /* IORING_OP_WRITE */
	case 1: return IT_SYS_URING_READV;
	case 2: return IT_SYS_URING_WRITEV;
	case 4: return IT_SYS_URING_READ_FIXED;
	case 5: return IT_SYS_URING_WRITE_FIXED;
	case 3: return IT_SYS_URING_FSYNC;
	default: return IT_SYS_URING_OTHER;
	}
}

static __always_inline bool uring_rw(__u16 call)
{
	return call >= IT_SYS_URING_READ && call <= IT_SYS_URING_WRITE_FIXED;
}

/*
 * An io_uring request is sent in two records, its submission and its
 * completion, joined by the request's address in the recorder
 * (uring_join.c), which writes the one call record the trace file holds.
 * Kept in a BPF LRU hash from submission to completion instead, a request
 * cost a map update, lookup and delete, and the map 3 MB of kernel
 * memory. Held in a table of the submitting task's own (task storage, a
 * slot per request) until its completion, to send both halves in one
 * ring record, it cost more than a second record once records went into
 * the CPU's event buffer (sys_record): bench/bpf_cost.sh, the default
 * recording's BPF time per I/O at QD 8 / 32, 1274 / 1229 ns with two
 * records against 1296 / 1291 with the table (2026-11-24, 20:24 UTC; the
 * completion ~140 ns a run against ~190, the submission ~250 against
 * ~220, and the 6.6 KB table per task out of the caches).
 */
/* A request's submission (the tracepoint is io_uring_submit_req, and
 * io_uring_submit_sqe on older kernels such as Debian's 6.1, with the
 * request first either way: the loader attaches the program of the name
 * the kernel has). */
static __always_inline int on_uring_submit(struct io_kiocb *req)
{
	struct task_struct *task;
	struct it_sys_uring_submit r = {};
	struct it_sys_event *e;
	struct tstate *st;

	if (!uring_on)
		return 0;
	task = bpf_get_current_task_btf();
	/* the pid/tid scope first, as on sys_enter: traced() checks the
	 * rest of the scope only (an io_uring process outside -p was
	 * recorded request by request) */
	if (!id_wanted(task))
		return 0;
	st = bpf_task_storage_get(&sys_tstate, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st || !traced(task, st))
		return 0;
	e = &r.call;
	e->rec = IT_SREC_URING_SUBMIT;
	e->mode = req->opcode;
	e->call = uring_call(e->mode);
	e->sflags = IT_SYSF_URING;
	if (req->flags & REQ_F_FIXED_FILE)
		e->sflags |= IT_SYSF_FIXED_FILE;
	if (task->flags & PF_IO_WORKER_)
		e->sflags |= IT_SYSF_SQPOLL;
	e->fd = req->cqe.fd;
	e->aux = req->cqe.user_data;
	if (uring_rw(e->call)) {
		/* the command area holds struct io_rw for read/write requests */
		struct io_rw *rw = RDONLY(struct io_rw, &req->cmd);

		e->offset = RD(rw, kiocb.ki_pos);
		e->count = RD(rw, len);
		e->flags = RD(rw, flags);
	}
	e->pid = task->tgid;
	e->tid = task->pid;
	ids_of(task, st, &e->ppid, &e->cgroup);
	e->ts_enter = bpf_ktime_get_ns();
	r.req = (__u64)req;
	if (scope_mark_calls) { /* held back until its I/Os are decided */
		if (st->upending)
			uring_decide(task, st);
		st->upend = r;
		st->upending = 1;
		st->upunted = 0;
		return 0;
	}
	/* built on the stack and copied, as on_exit does */
	if (sys_record(&r, sizeof(r)))
		count_drop();
	return 0;
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(uring_submit, struct io_kiocb *req)
{
	return on_uring_submit(req);
}

SEC("tp_btf/io_uring_submit_sqe")
int BPF_PROG(uring_submit_sqe, struct io_kiocb *req)
{
	return on_uring_submit(req);
}

/* A request handed to io-wq (IOSQE_ASYNC, or its inline attempt would
 * block): with the block layer deciding, the worker queues its I/O, where
 * the decision cannot follow it; noted for uring_decide's count. Also
 * fires for a retry (-EAGAIN at completion), from the submitter's task
 * work, of a request already decided: then nothing is pending for it. */
SEC("tp_btf/io_uring_queue_async_work")
int BPF_PROG(uring_punt, struct io_kiocb *req)
{
	struct task_struct *task;
	struct tstate *st;

	if (!uring_on || !scope_mark_calls)
		return 0;
	task = bpf_get_current_task_btf();
	if (bpf_core_field_exists(task->bpf_storage) && !task->bpf_storage)
		return 0;
	st = bpf_task_storage_get(&sys_tstate, task, 0, 0);
	if (st && st->upending && st->upend.req == (__u64)req)
		st->upunted = 1;
	return 0;
}

/*
 * The file tags of io_uring completions: a slot per CPU whose two-file
 * cache answers as a thread's does on sys_enter. A zeroed slot on the
 * stack (as before) had an empty cache, so every completion looked its
 * file up in sys_tags (a hash lookup per I/O). Only the cache and the
 * file fields are used. A completion cannot nest in another on its CPU
 * (the program does not recurse), so the slot is not shared mid-use.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tstate);
} sys_uring_tags SEC(".maps");

/* Before Linux 6.13 the request named its task directly (req->task),
 * since then through its io_uring_task (req->tctx->task). */
struct io_kiocb___task {
	struct task_struct *task;
} __attribute__((preserve_access_index));

/* The task that submitted req, typed for plain loads; NULL if unknown. */
static __always_inline struct task_struct *uring_submitter(void *req)
{
	struct io_kiocb *r = RDONLY(struct io_kiocb, req);
	struct task_struct *t;

	if (bpf_core_field_exists(r->tctx)) {
		struct io_uring_task *tc = RD(r, tctx);

		t = tc ? RD(RDONLY(struct io_uring_task, tc), task) : NULL;
	} else {
		t = RD((struct io_kiocb___task *)r, task);
	}
	return t ? RDONLY(struct task_struct, t) : NULL;
}

/* io_uring_complete's arguments: (ring, req, cqe) on newer kernels,
 * (ctx, req, user_data, res, cflags, extra1, extra2) on older ones (6.1);
 * set by the loader from the tracepoint's BTF */
const volatile bool uring_complete_old;

SEC("tp_btf/io_uring_complete")
int uring_complete(u64 *ctx)
{
	void *req = (void *)CTX_AT(ctx, 1);
	int res = uring_complete_old ? (int)CTX_AT(ctx, 3)
				     : ((struct io_uring_cqe *)CTX_AT(ctx, 2))->res;
	struct it_sys_uring_done d;
	struct task_struct *t;
	struct io_kiocb *r;
	struct tstate *st;
	struct file *f;
	__u32 zero = 0;
	bool keep;

	if (!uring_on || !req)
		return 0;
	if (scope_mark_calls) {
		/* a completion its submitter runs comes after the submission
		 * (decided first); only a kept request is sent: one that is
		 * in sys_uring_kept (and is of the scope: it was submitted) */
		struct task_struct *cur = bpf_get_current_task_btf();
		__u64 key = (__u64)req;

		if (!bpf_core_field_exists(cur->bpf_storage) || cur->bpf_storage) {
			st = bpf_task_storage_get(&sys_tstate, cur, 0, 0);
			if (st && st->upending)
				uring_decide(cur, st);
		}
		if (bpf_map_delete_elem(&sys_uring_kept, &key))
			return 0;
	} else if (scope_pids || filter_tids || scope_comm_len) {
		/* A request of a process out of scope is not sent (the
		 * recorder would find no submission for it): the pid/tid sets,
		 * and --comm by the set of processes it matched (at their
		 * submission). --cgroup tests the current task only, so there
		 * the recorder drops them. */
		__u32 tgid;

		t = uring_submitter(req);
		tgid = t ? RD(t, tgid) : 0;
		if (t && (!ids_wanted(tgid, RD(t, pid)) ||
			  (scope_comm_len && !scope_bit(&scope_comm_bits, tgid))))
			return 0;
	}
	st = bpf_map_lookup_elem(&sys_uring_tags, &zero);
	if (!st)
		return 0;
	st->dev = 0;
	st->ino = 0;
	st->tag_ts = 0;
	st->ftype = 0;
	r = RDONLY(struct io_kiocb, req);
	f = RD(r, file);
	if (f)
		f = RDONLY(struct file, f);
	/* the other requests' file field may hold something else: no tag */
	keep = true;
	if (f && uring_call(RD(r, opcode)) != IT_SYS_URING_OTHER)
		keep = tag_file(st, f);
	d = (struct it_sys_uring_done){
		.rec = IT_SREC_URING_DONE, .ftype = st->ftype, .keep = keep, .dev = st->dev,
		.cpu = bpf_get_smp_processor_id(), .res = res, .req = (__u64)req,
		.ts = bpf_ktime_get_ns(), .ino = st->ino, .tag_ts = st->tag_ts,
	};
	if (sys_record(&d, sizeof(d)))
		count_drop();
	return 0;
}

/*
 * Under a pid filter, every thread in scope has its storage before the
 * scoped sys_enter sees it (NO_SLOT): the threads there when the
 * recording starts, by this iterator (record_loader.c runs it once, after
 * the filter is seeded), and those forked after, by sys_mark_fork.
 */
__u32 sys_marked_at_start; /* threads the iterator gave storage (record -v says) */

SEC("iter/task")
int sys_mark_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task && ids_wanted(task->tgid, task->pid) &&
	    bpf_task_storage_get(&sys_tstate, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE))
		sys_marked_at_start++;
	return 0;
}

/* A thread of a process in scope, or a process forked from one (which
 * scope_fork takes into the set, in whichever order the two run). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sys_mark_fork, struct task_struct *parent, struct task_struct *child)
{
	if ((scope_pids && scope_bit(&scope_pid_bits, parent->tgid)) ||
	    ids_wanted(child->tgid, child->pid))
		bpf_task_storage_get(&sys_tstate, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	return 0;
}

/*
 * A process's title at its exit (its argv area: what ps shows), for the
 * recorder: a process gone before its title is read the second time
 * (TITLE_DELAY_NS in record.c) gets its last title, not the one it had
 * when first seen (a program that retitles itself and exits within
 * 100 ms). Since Linux 6.16 the tracepoint fires before exit_mm(), so the
 * memory is still there; before, mm is NULL here and nothing is sent.
 * Sent for the last thread of every process (exits are rare): the
 * recorder keeps only those of processes whose title is still due, and
 * writes none of these records into the file itself.
 */
struct exit_title {
	struct it_sys_title h;
	char title[IT_TITLE_MAX];
};

SEC("raw_tp/sched_process_exit")
int BPF_PROG(title_at_exit, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	unsigned long start, end, len;
	struct exit_title *r;

	if (!mm || tgid != BPF_CORE_READ(task, pid) || BPF_CORE_READ(task, signal, live.counter))
		return 0;
	start = BPF_CORE_READ(mm, arg_start);
	end = BPF_CORE_READ(mm, arg_end);
	if (end <= start)
		return 0;
	len = end - start;
	if (len > IT_TITLE_MAX)
		len = IT_TITLE_MAX;
	r = sys_reserve(sizeof(*r));
	if (!r) {
		count_side_drop();
		return 0;
	}
	/* task is current: its own user memory */
	if (bpf_probe_read_user(r->title, len, (void *)start)) {
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		return 0;
	}
	r->h = (struct it_sys_title){ .rec = IT_SREC_TITLE, .len = (__u16)len, .pid = tgid,
				      .ts = bpf_ktime_get_ns() };
	bpf_ringbuf_submit(r, wakeup_flag());
	return 0;
}
