// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The floor under iotrail's block probes, for bench/overhead.sh: the same
 * three tracepoints an unscheduled blk-mq read passes (Q, D, C), with
 *   mode 0: programs that return at once (the cost of the hooks alone);
 *   mode 2: (for bench/syscall_cost) an empty program on sys_enter and on
 *           sys_exit instead, the hooks the syscall layer uses: the floor
 *           under its cost per call;
 *   mode 3: (for bench/syscall_cost) the least a tracer of system calls
 *           with full records pays: on every pread64, the entry time in
 *           task-local storage at sys_enter, and at sys_exit one record
 *           of iotrail's size (struct it_sys_event, 104 bytes) put in the
 *           ring, drained as in mode 1; no filter, no file tag, no
 *           argument decoding;
 *   mode 1: programs that put one 64-byte timestamped record in a shared
 *           ring buffer (the hooks plus the cheapest possible full record),
 *           submitted the way iotrail's probes submit (events.bpf.h:
 *           no wakeup until a quarter of the ring waits, looked at once
 *           in 64 records per CPU) into a ring of
 *           iotrail's default size here, and drained by
 *           bench/hook_floor.c the way iotrail's consumer drains its ring.
 *   mode 4: mode 1 with one ring per CPU (an array of rings indexed by
 *           the CPU, drained alike): what the shared ring's cache lines,
 *           bounced between the CPU that queues and the one that
 *           completes, cost beside the record itself.
 *   mode 5: mode 4 plus programs that return at once on the hooks the
 *           default recording adds for system calls (sys_enter, sys_exit,
 *           io_uring_submit_req, io_uring_complete): what merely having
 *           those hooks costs;
 *   mode 6: mode 4 plus one record where the default recording writes
 *           one for a call: at sys_exit of an I/O call (read, write,
 *           pread64, pwrite64, io_uring_enter; entry time kept in task
 *           storage at sys_enter), at an io_uring request's submission
 *           and at its completion; 104-byte records as iotrail's, into
 *           the CPU's ring: the floor of the default's own record set.
 *   mode 7: mode 4's records into a buffer per CPU and hook, read by
 *           hook_floor.c through the map's mmap (spsc_hit below): what a
 *           record costs without the ring buffer's lock and headers.
 *   modes 8 to 10: the system call pair's floors for bench/syscall_cost
 *           (below, where their programs are).
 *   mode 11: the events the default recording times for an I/O of fio
 *           (Q, D, C, fio's I/O calls' entry and exit, an io_uring
 *           request's submission and completion), each reading the clock
 *           once and nothing else (bpf_cost.sh and peers.sh's eventclock)
 * What iotrail record spends beyond mode 1 is its own doing; what mode 1
 * spends is the price of any per-I/O record on this kernel and CPU.
 * Records the ring could not take are counted (not_written), so a floor
 * that stopped writing shows.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

const volatile int mode = 0; /* the only read-only datum: hook_floor.c sets it whole */
/* iotrail's default ring on 2 CPUs (this machine), woken as iotrail's
 * block ring is, a quarter full: the floor writes under iotrail's
 * conditions (iotrail's own records cost more with its old 64 MiB ring in
 * one measurement; README, Performance). */
#define RING_BYTES (4 << 20)
#define WAKEUP_BYTES (RING_BYTES / 4)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} ring SEC(".maps");

struct cpu_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
};

/* mode 4: slot N is CPU N's ring (hook_floor.c fills the slots) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 256);
	__type(key, __u32);
	__array(values, struct cpu_ring);
} cpu_rings SEC(".maps");

__u64 not_written; /* reservations the full ring refused */

/* Records since the ring's fill was last looked at, per CPU: iotrail's
 * probes look once in 64 records (block, events.bpf.h) or 256 (syscall),
 * so the floor does too. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} since_query SEC(".maps");

static __always_inline __u64 wake_flag_of(void *rb, __u32 every)
{
	__u32 zero = 0, *n = bpf_map_lookup_elem(&since_query, &zero);

	if (n && (++*n & (every - 1)))
		return BPF_RB_NO_WAKEUP;
	return bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) > WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP
								       : BPF_RB_NO_WAKEUP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum { HIT_Q, HIT_D, HIT_C };

struct rec {
	__u64 ts, id;
	__u32 hook, pad;
	__u64 w[5];
};

/* the record, as every mode that writes one writes it */
static __always_inline void fill(struct rec *r, __u64 id, __u32 hook)
{
	r->ts = bpf_ktime_get_ns();
	r->id = id;
	r->hook = hook;
	r->pad = 0;
	for (int i = 0; i < 5; i++)
		r->w[i] = 0;
}

/*
 * Mode 7: the same record into a buffer of its own per CPU and hook, one
 * producer (this program on this CPU: tracepoints run it with preemption
 * off, and the kernel never runs a program inside itself on one CPU) and
 * one consumer (hook_floor.c, through the map's mmap): no lock, no atomic,
 * no header, where a BPF ring buffer takes a spinlock with interrupts off
 * and writes a header at reserve and commit (it serves many producers).
 * The record is complete before prod moves past it (x86 keeps stores in
 * order; the empty asm keeps the compiler from reordering them).
 */
#define SPSC_SLOTS 8192 /* 512 KiB per CPU and hook: 1.5 MiB per CPU, the rings' 2 */
struct spsc {
	__u64 prod, pad1[7];  /* a line the producer writes */
	__u64 cons, pad2[7];  /* a line the consumer writes */
	struct rec slot[SPSC_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 3);  /* 3 per CPU: hook_floor.c sets it */
	__type(key, __u32);
	__type(value, struct spsc);
} spsc SEC(".maps");

static __always_inline int spsc_hit(__u64 id, __u32 hook)
{
	__u32 k = bpf_get_smp_processor_id() * 3 + hook;
	struct spsc *b = bpf_map_lookup_elem(&spsc, &k);
	struct rec *r;
	__u64 p;

	if (!b)
		return 0;
	p = b->prod;
	if (p - *(volatile __u64 *)&b->cons >= SPSC_SLOTS) {
		__sync_fetch_and_add(&not_written, 1);
		return 0;
	}
	r = &b->slot[p & (SPSC_SLOTS - 1)];
	fill(r, id, hook);
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&b->prod = p + 1;
	return 0;
}

/* modes 8 to 10: where each clock read goes (so that it is not optimised
 * away) */
__u64 clock_sink;

/*
 * The floors that are to cost what the hook costs and nothing else have
 * programs of their own, chosen by hook_floor.c, which read neither `mode`
 * nor any other map: a program that reads its read-only data (the
 * verifier keeps the load of a frozen constant, only the branches on it
 * go) touches one more page, and where a system call's entry flushes the
 * TLB (PTI without PCID, as on the machine this was measured on) that page
 * costs a TLB refill, ~20-30 ns, at every sys_enter: the empty programs
 * read `mode` until 2026-11-25 and measured that, not the hook.
 */

/* modes 0 and 5: the hooks alone */
SEC("tp_btf/block_bio_queue")
int empty_q(u64 *ctx) { return 0; }

SEC("tp_btf/block_rq_issue")
int empty_d(u64 *ctx) { return 0; }

SEC("tp_btf/block_rq_complete")
int empty_c(u64 *ctx) { return 0; }

/* modes 8 and 9: one clock read, kept (the store never happens: a store
 * would touch the page of clock_sink) */
static __always_inline int clock_read(void)
{
	if (bpf_ktime_get_ns() == 1)
		clock_sink = 1;
	return 0;
}

/* mode 9: the block hooks reading the clock once each */
SEC("tp_btf/block_bio_queue")
int clock_q(u64 *ctx) { return clock_read(); }

SEC("tp_btf/block_rq_issue")
int clock_d(u64 *ctx) { return clock_read(); }

SEC("tp_btf/block_rq_complete")
int clock_c(u64 *ctx) { return clock_read(); }

static __always_inline int hit(__u64 id, __u32 hook)
{
	void *rb = &ring;
	struct rec *r;

	if (mode == 7)
		return spsc_hit(id, hook);
	if (mode >= 4) {
		__u32 cpu = bpf_get_smp_processor_id();

		rb = bpf_map_lookup_elem(&cpu_rings, &cpu);
		if (!rb)
			return 0;
	}
	r = bpf_ringbuf_reserve(rb, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&not_written, 1);
		return 0;
	}
	fill(r, id, hook);
	bpf_ringbuf_submit(r, wake_flag_of(rb, 64));
	return 0;
}

SEC("tp_btf/block_bio_queue")
int floor_q(u64 *ctx) { return hit(ctx[0], HIT_Q); }

SEC("tp_btf/block_rq_issue")
int floor_d(u64 *ctx) { return hit(ctx[0], HIT_D); }

SEC("tp_btf/block_rq_complete")
int floor_c(u64 *ctx) { return hit(ctx[0], HIT_C); }

/* modes 2 and 3 (hook_floor.c loads these or the three above) */
#if defined(__TARGET_ARCH_x86)
#define NR_PREAD64 17
#else
#define NR_PREAD64 67 /* arm64, the generic table */
#endif

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} entry_ts SEC(".maps");

struct sys_rec { /* the size of iotrail's struct it_sys_event */
	__u64 w[13];
};

/* mode 6's I/O calls (x86-64 numbers; elsewhere only pread64 and
 * io_uring_enter, which the generic table numbers alike on arm64 too) */
static __always_inline bool io_call(__u64 nr)
{
#if defined(__TARGET_ARCH_x86)
	return nr <= 1 || nr == 17 || nr == 18 || nr == 426;
#else
	return nr == NR_PREAD64 || nr == 426;
#endif
}

/* modes 3 and 6: one record of iotrail's call size, into the shared ring
 * (mode 3) or the CPU's (mode 6) */
static __always_inline void sys_record(__u64 w0, __u64 w1, __u64 w2)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *rb = mode == 6 ? bpf_map_lookup_elem(&cpu_rings, &cpu) : (void *)&ring;
	struct sys_rec r;

	if (!rb)
		return;
	for (int i = 0; i < 13; i++)
		r.w[i] = 0;
	r.w[0] = w0;
	r.w[1] = w1;
	r.w[2] = 3; /* struct rec's hook: 3, a call's record */
	r.w[3] = w2;
	if (bpf_ringbuf_output(rb, &r, sizeof(r), wake_flag_of(rb, 256)))
		__sync_fetch_and_add(&not_written, 1);
}

/* mode 2 (and 5): the system call pair alone */
SEC("tp_btf/sys_enter")
int empty_sys_enter(u64 *ctx) { return 0; }

SEC("tp_btf/sys_exit")
int empty_sys_exit(u64 *ctx) { return 0; }

/* sys_exit's call number (tp_btf/sys_exit: (regs, ret)) */
static __always_inline __u64 exit_nr(u64 *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx[0];

#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#else
	return regs->syscallno;
#endif
}

/* mode 8: the pair reading the clock once each per pread64 */
SEC("tp_btf/sys_enter")
int clock_sys_enter(u64 *ctx)
{
	return ctx[1] == NR_PREAD64 ? clock_read() : 0;
}

SEC("tp_btf/sys_exit")
int clock_sys_exit(u64 *ctx)
{
	return exit_nr(ctx) == NR_PREAD64 ? clock_read() : 0;
}

/* Mode 10: a process filter's least work on each of the pair: the calling
 * process's id read and compared with one no process has (above
 * PID_MAX_LIMIT), so every call is filtered out. Any tracer that keeps
 * some processes' calls and not others' pays at least this per call. */
#define NO_TGID 0x7fffffff

static __always_inline int filter_floor(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (t->tgid == NO_TGID)
		clock_sink = 1;
	return 0;
}

SEC("tp_btf/sys_enter")
int filter_sys_enter(u64 *ctx) { return filter_floor(); }

SEC("tp_btf/sys_exit")
int filter_sys_exit(u64 *ctx) { return filter_floor(); }

/* modes 3 and 6: the least a tracer with full records pays */
SEC("tp_btf/sys_enter")
int floor_sys_enter(u64 *ctx)
{
	__u64 *ts;

	if (mode == 6 ? !io_call(ctx[1]) : ctx[1] != NR_PREAD64)
		return 0;
	ts = bpf_task_storage_get(&entry_ts, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int floor_sys_exit(u64 *ctx)
{
	__u64 *ts, nr = exit_nr(ctx);

	if (mode == 6 ? !io_call(nr) : nr != NR_PREAD64)
		return 0;
	ts = bpf_task_storage_get(&entry_ts, bpf_get_current_task_btf(), 0, 0);
	if (!ts)
		return 0;
	sys_record(*ts, bpf_ktime_get_ns(), ctx[1]);
	return 0;
}

/* mode 6: an io_uring request's submission and completion; mode 5: the
 * same hooks, empty */
SEC("tp_btf/io_uring_submit_req")
int floor_sys_uring_submit(u64 *ctx)
{
	sys_record(bpf_ktime_get_ns(), ctx[0], 0);
	return 0;
}

SEC("tp_btf/io_uring_complete")
int floor_sys_uring_complete(u64 *ctx)
{
	sys_record(bpf_ktime_get_ns(), ctx[1], 0);
	return 0;
}

/*
 * Mode 11: every event the default recording times for an I/O of fio
 * (io_uring), timed and nothing else: the block hooks of mode 9, the
 * system call pair reading the clock once each for mode 6's I/O calls,
 * and an io_uring request's submission and completion reading it once
 * each. Seven clock reads per I/O, where the floor of mode 1 takes three:
 * the least any tracer that times what the default times pays.
 */
SEC("tp_btf/sys_enter")
int clockio_sys_enter(u64 *ctx)
{
	return io_call(ctx[1]) ? clock_read() : 0;
}

SEC("tp_btf/sys_exit")
int clockio_sys_exit(u64 *ctx)
{
	return io_call(exit_nr(ctx)) ? clock_read() : 0;
}

SEC("tp_btf/io_uring_submit_req")
int clockio_sys_uring_submit(u64 *ctx) { return clock_read(); }

SEC("tp_btf/io_uring_complete")
int clockio_sys_uring_complete(u64 *ctx) { return clock_read(); }

SEC("tp_btf/io_uring_submit_req")
int empty_sys_uring_submit(u64 *ctx) { return 0; }

SEC("tp_btf/io_uring_complete")
int empty_sys_uring_complete(u64 *ctx) { return 0; }
