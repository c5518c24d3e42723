// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * F2FS's tracepoints (f2fs.h) as raw tracepoints: their arguments are the
 * TP_PROTO's, read here in the order of 5.19 and later (checked against
 * Debian's 6.1 module BTF: f2fs_gc_begin(sb, gc_type, no_bg_gc,
 * nr_free_secs, dirty_nodes, dirty_dents, dirty_imeta, free_sec, free_seg,
 * reserved_seg, prefree_seg)). F2FS is a module: its types (the page
 * write's struct f2fs_io_info) come from its BTF through CO-RE, so this
 * object is loaded only on a kernel with F2FS (record.c checks).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "f2fs.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);    /* resized by user space */
} f2fs_events SEC(".maps");

/* events the ring had no room for, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} f2fs_drops SEC(".maps");

/* page writes by type * 3 + temperature, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_F2FS_PAGE_KINDS);
	__type(key, __u32);
	__type(value, __u64);
} f2fs_pages SEC(".maps");

/* threads inside a GC round (f2fs_gc holds the file system's gc_lock and
 * writes the blocks it moves on the caller's thread) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} in_gc SEC(".maps");

/* F2FS's own types, as far as read here (CO-RE against its module BTF) */
/* (libbpf matches an enum field by the enum's name, flavour dropped) */
enum page_type___it { IT_F2FS_DATA___it };
enum temp_type___it { IT_F2FS_HOT___it };
struct f2fs_io_info___it {
	unsigned int ino;
	enum page_type___it type;
	enum temp_type___it temp;
	unsigned int new_blkaddr;
	unsigned int old_blkaddr;
} __attribute__((preserve_access_index));
/* struct page's index before 6.16 renamed it */
struct page___index {
	unsigned long index;
} __attribute__((preserve_access_index));

/*
 * A background GC round writes no data block itself: it marks the page
 * dirty and "on-going migration" in page->private, and writeback moves
 * it later, on another thread (F2FS's move_data_page; the mark is cleared
 * when the write ends). F2FS keeps flags there when PG_private is set and
 * bit PAGE_PRIVATE_NOT_POINTER (0) of the word is; the migration bit is
 * PAGE_PRIVATE_ONGOING_MIGRATION, an anonymous enum's, so no CO-RE
 * relocation reaches it: user space reads it from F2FS's BTF (3 in
 * Debian's 6.1, after PAGE_PRIVATE_ATOMIC_WRITE, which later kernels
 * dropped), and leaves 64 when it is not there: nothing is taken for a
 * background move then.
 */
const volatile __u32 gcing_bit = 64;

/* page->flags: an unsigned long, or since 6.17 a struct of one
 * (memdesc_flags_t); CO-RE takes neither for the other */
struct page___flags_ulong {
	unsigned long flags;
} __attribute__((preserve_access_index));
struct memdesc_flags___it {
	unsigned long f;
};
struct page___flags_memdesc {
	struct memdesc_flags___it flags;
} __attribute__((preserve_access_index));

static __always_inline bool gc_marked(struct page *page)
{
	unsigned long flags = 0, priv;

	if (gcing_bit >= 64)
		return false;
	if (bpf_core_field_exists(struct page___flags_ulong, flags))
		flags = BPF_CORE_READ((struct page___flags_ulong *)page, flags);
	else
		flags = BPF_CORE_READ((struct page___flags_memdesc *)page, flags.f);
	if (!((flags >> bpf_core_enum_value(enum pageflags, PG_private)) & 1))
		return false;
	priv = BPF_CORE_READ(page, private);
	return (priv & 1) && ((priv >> (gcing_bit & 63)) & 1);
}

static __always_inline struct it_f2fs_event *event(__u16 kind, __u32 dev)
{
	struct it_f2fs_event *e = bpf_ringbuf_reserve(&f2fs_events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		__u32 zero = 0;
		__u64 *d = bpf_map_lookup_elem(&f2fs_drops, &zero);

		if (d)
			__sync_fetch_and_add(d, 1);
		return NULL;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->dev = dev;
	e->kind = kind;
	e->reserved = 0;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->a = e->b = e->c = e->d = 0;
	return e;
}

static __always_inline __u32 sb_dev(__u64 sb)
{
	return BPF_CORE_READ((struct super_block *)sb, s_dev);
}

SEC("raw_tp/f2fs_gc_begin")
int f2fs_gc_begin(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), one = 1;
	struct it_f2fs_event *e = event(IT_F2FS_GC_BEGIN, sb_dev(ctx->args[0]));

	bpf_map_update_elem(&in_gc, &tid, &one, BPF_ANY);
	if (!e)
		return 0;
	e->a = (int)ctx->args[1] == 1; /* FG_GC */
	e->b = (__u32)ctx->args[7];
	e->c = (__u32)ctx->args[8];
	e->d = (__u32)ctx->args[10];
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/f2fs_gc_end")
int f2fs_gc_end(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct it_f2fs_event *e = event(IT_F2FS_GC_END, sb_dev(ctx->args[0]));

	bpf_map_delete_elem(&in_gc, &tid);
	if (!e)
		return 0;
	e->a = (__u64)(__s64)(int)ctx->args[1];
	e->b = (__u32)ctx->args[2];
	e->c = (__u32)ctx->args[3];
	e->d = (__u32)ctx->args[7];
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/f2fs_background_gc")
int f2fs_background_gc(struct bpf_raw_tracepoint_args *ctx)
{
	struct it_f2fs_event *e = event(IT_F2FS_BG_GC, sb_dev(ctx->args[0]));

	if (!e)
		return 0;
	e->a = (__u32)ctx->args[1];
	e->b = (__u32)ctx->args[2];
	e->c = (__u32)ctx->args[3];
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/f2fs_write_checkpoint")
int f2fs_write_checkpoint(struct bpf_raw_tracepoint_args *ctx)
{
	struct it_f2fs_event *e = event(IT_F2FS_CHECKPOINT, sb_dev(ctx->args[0]));
	char msg[17] = {}; /* 16 bytes and the NUL bpf_probe_read_kernel_str adds */

	if (!e)
		return 0;
	e->a = (__u32)ctx->args[1];
	bpf_probe_read_kernel_str(msg, sizeof(msg), (const void *)ctx->args[2]);
	/* "finish checkpoint" is 17 characters: its first 16 are kept */
	__builtin_memcpy(&e->c, msg, 8);
	__builtin_memcpy(&e->d, msg + 8, 8);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("raw_tp/f2fs_submit_page_write")
int f2fs_submit_page_write(struct bpf_raw_tracepoint_args *ctx)
{
	struct page *page = (struct page *)ctx->args[0];
	struct f2fs_io_info___it *fio = (void *)ctx->args[1];
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 type = BPF_CORE_READ(fio, type), temp = BPF_CORE_READ(fio, temp);
	__u32 k = type * 3 + temp, later = 0;
	__u64 *n;

	if (type < 3 && temp < 3 && (n = bpf_map_lookup_elem(&f2fs_pages, &k)))
		*n += 1;
	if (!bpf_map_lookup_elem(&in_gc, &tid)) {
		/* a data page a background round marked, written back now */
		if (type != 0 || !gc_marked(page))
			return 0;
		later = IT_F2FS_GC_LATER;
	}
	struct it_f2fs_event *e = event(IT_F2FS_GC_WRITE,
					BPF_CORE_READ(page, mapping, host, i_sb, s_dev));
	if (!e)
		return 0;
	e->a = BPF_CORE_READ(fio, ino);
	if (bpf_core_field_exists(struct page___index, index))
		e->b = BPF_CORE_READ((struct page___index *)page, index);
	e->c = BPF_CORE_READ(fio, old_blkaddr) | (__u64)BPF_CORE_READ(fio, new_blkaddr) << 32;
	e->d = type | temp << 8 | later;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
