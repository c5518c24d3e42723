/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The syscall layer's records, shared by src/layers/syscall/syscall.bpf.c (which emits them
 * into the layer's own ring buffer), the loader, the trace file and the
 * analyzer. Only __u* types (included by BPF code with vmlinux.h and by user
 * space with <linux/types.h>).
 *
 * One system call = one IT_SREC_CALL record, paired in the kernel: the entry
 * arguments wait in task-local storage until sys_exit emits the record.
 * Strings never ride in the call record: a file's path goes once per file
 * tag into an IT_SREC_PATH record; the name arguments of path-based calls
 * (stat, unlink, rename, a failing open, ...) go into IT_SREC_NAME records
 * emitted just before their call record; a thread's comm goes into an
 * IT_SREC_TASK record when the thread is first seen or its comm changed.
 *
 * Call ids are ours (stable across architectures and kernels), not syscall
 * numbers; user space maps __NR_* to them (the kernel side reads the map
 * from read-only data). Changing a value or a layout is a trace format
 * change.
 */
#ifndef IOTRAIL_SYSCALL_H
#define IOTRAIL_SYSCALL_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * The calls, as one table: X(ID, name, tracepoint, group, fd, path, path2,
 * off, count, flags, mode, whence, aux, kind)
 *   name        the call as the user writes it (--calls, reports)
 *   tracepoint  its syscalls:sys_enter_<tracepoint> event
 *   group       IT_SG_*: what --calls data,meta,... selects
 *   fd .. aux   which argument (0-5) holds that field, or N (none)
 *   kind        IT_SK_* bits: how the kernel side decodes the call
 * count is in bytes for data calls; for the readv family it is the sum of
 * the first IT_SYS_IOV_MAX iovecs (IT_SYSF_IOV_PARTIAL when there are more)
 * and aux is the iovec count.
 */
#define IT_A_N 7 /* no such argument */
#define IT_A_0 0
#define IT_A_1 1
#define IT_A_2 2
#define IT_A_3 3
#define IT_A_4 4
#define IT_A_5 5
#define IT_SYS_CALLS(X)                                                                  \
	X(READ,        1, read,        read,        DATA, 0, N, N, N, 2, N, N, N, N, IT_SK_FD | IT_SK_FPOS) \
	X(PREAD64,     2, pread64,     pread64,     DATA, 0, N, N, 3, 2, N, N, N, N, IT_SK_FD) \
	X(READV,       3, readv,       readv,       DATA, 0, N, N, N, N, N, N, N, 2, IT_SK_FD | IT_SK_FPOS | IT_SK_IOV) \
	X(PREADV,      4, preadv,      preadv,      DATA, 0, N, N, 3, N, N, N, N, 2, IT_SK_FD | IT_SK_IOV) \
	X(PREADV2,     5, preadv2,     preadv2,     DATA, 0, N, N, 3, N, 5, N, N, 2, IT_SK_FD | IT_SK_IOV | IT_SK_POS_OR_FPOS) \
	X(WRITE,       6, write,       write,       DATA, 0, N, N, N, 2, N, N, N, N, IT_SK_FD | IT_SK_FPOS) \
	X(PWRITE64,    7, pwrite64,    pwrite64,    DATA, 0, N, N, 3, 2, N, N, N, N, IT_SK_FD) \
	X(WRITEV,      8, writev,      writev,      DATA, 0, N, N, N, N, N, N, N, 2, IT_SK_FD | IT_SK_FPOS | IT_SK_IOV) \
	X(PWRITEV,     9, pwritev,     pwritev,     DATA, 0, N, N, 3, N, N, N, N, 2, IT_SK_FD | IT_SK_IOV) \
	X(PWRITEV2,   10, pwritev2,    pwritev2,    DATA, 0, N, N, 3, N, 5, N, N, 2, IT_SK_FD | IT_SK_IOV | IT_SK_POS_OR_FPOS) \
	X(FSYNC,      11, fsync,       fsync,       SYNC, 0, N, N, N, N, N, N, N, N, IT_SK_FD) \
	X(FDATASYNC,  12, fdatasync,   fdatasync,   SYNC, 0, N, N, N, N, N, N, N, N, IT_SK_FD) \
	X(SYNC_FILE_RANGE, 13, sync_file_range, sync_file_range, SYNC, 0, N, N, 1, 2, 3, N, N, N, IT_SK_FD) \
	X(READAHEAD,  14, readahead,   readahead,   DATA, 0, N, N, 1, 2, N, N, N, N, IT_SK_FD) \
	X(FALLOCATE,  15, fallocate,   fallocate,   DATA, 0, N, N, 2, 3, N, 1, N, N, IT_SK_FD) \
	X(OPEN,       16, open,        open,        OPEN, N, 0, N, N, N, 1, 2, N, N, IT_SK_RETFD) \
	X(OPENAT,     17, openat,      openat,      OPEN, 0, 1, N, N, N, 2, 3, N, N, IT_SK_RETFD | IT_SK_DIRFD) \
	X(OPENAT2,    18, openat2,     openat2,     OPEN, 0, 1, N, N, N, N, N, N, N, IT_SK_RETFD | IT_SK_DIRFD | IT_SK_OPENHOW) \
	X(CREAT,      19, creat,       creat,       OPEN, N, 0, N, N, N, N, 1, N, N, IT_SK_RETFD | IT_SK_CREAT) \
	X(CLOSE,      20, close,       close,       OPEN, 0, N, N, N, N, N, N, N, N, IT_SK_FD) \
	X(LSEEK,      21, lseek,       lseek,       DATA, 0, N, N, 1, N, N, N, 2, N, IT_SK_FD) \
	X(TRUNCATE,   22, truncate,    truncate,    META, N, 0, N, 1, N, N, N, N, N, 0) \
	X(FTRUNCATE,  23, ftruncate,   ftruncate,   META, 0, N, N, 1, N, N, N, N, N, IT_SK_FD) \
	X(RENAME,     24, rename,      rename,      META, N, 0, 1, N, N, N, N, N, N, 0) \
	X(RENAMEAT,   25, renameat,    renameat,    META, 0, 1, 3, N, N, N, N, N, 2, IT_SK_DIRFD) \
	X(RENAMEAT2,  26, renameat2,   renameat2,   META, 0, 1, 3, N, N, 4, N, N, 2, IT_SK_DIRFD) \
	X(UNLINK,     27, unlink,      unlink,      META, N, 0, N, N, N, N, N, N, N, 0) \
	X(UNLINKAT,   28, unlinkat,    unlinkat,    META, 0, 1, N, N, N, 2, N, N, N, IT_SK_DIRFD) \
	X(MKDIR,      29, mkdir,       mkdir,       DIR,  N, 0, N, N, N, N, 1, N, N, 0) \
	X(MKDIRAT,    30, mkdirat,     mkdirat,     DIR,  0, 1, N, N, N, N, 2, N, N, IT_SK_DIRFD) \
	X(RMDIR,      31, rmdir,       rmdir,       DIR,  N, 0, N, N, N, N, N, N, N, 0) \
	X(MKNOD,      32, mknod,       mknod,       DIR,  N, 0, N, N, N, N, 1, N, 2, 0) \
	X(MKNODAT,    33, mknodat,     mknodat,     DIR,  0, 1, N, N, N, N, 2, N, 3, IT_SK_DIRFD) \
	X(READLINK,   34, readlink,    readlink,    META, N, 0, N, N, 2, N, N, N, N, 0) \
	X(READLINKAT, 35, readlinkat,  readlinkat,  META, 0, 1, N, N, 3, N, N, N, N, IT_SK_DIRFD) \
	X(STAT,       36, stat,        newstat,     META, N, 0, N, N, N, N, N, N, N, 0) \
	X(LSTAT,      37, lstat,       newlstat,    META, N, 0, N, N, N, N, N, N, N, 0) \
	X(FSTAT,      38, fstat,       newfstat,    META, 0, N, N, N, N, N, N, N, N, IT_SK_FD) \
	X(NEWFSTATAT, 39, newfstatat,  newfstatat,  META, 0, 1, N, N, N, 3, N, N, N, IT_SK_DIRFD) \
	X(STATX,      40, statx,       statx,       META, 0, 1, N, N, N, 2, N, N, 3, IT_SK_DIRFD) \
	X(STATFS,     41, statfs,      statfs,      META, N, 0, N, N, N, N, N, N, N, 0) \
	X(FSTATFS,    42, fstatfs,     fstatfs,     META, 0, N, N, N, N, N, N, N, N, IT_SK_FD) \
	X(GETXATTR,   43, getxattr,    getxattr,    XATTR, N, 0, 1, N, 3, N, N, N, N, IT_SK_XNAME) \
	X(LGETXATTR,  44, lgetxattr,   lgetxattr,   XATTR, N, 0, 1, N, 3, N, N, N, N, IT_SK_XNAME) \
	X(FGETXATTR,  45, fgetxattr,   fgetxattr,   XATTR, 0, N, 1, N, 3, N, N, N, N, IT_SK_FD | IT_SK_XNAME) \
	X(SETXATTR,   46, setxattr,    setxattr,    XATTR, N, 0, 1, N, 3, 4, N, N, N, IT_SK_XNAME) \
	X(LSETXATTR,  47, lsetxattr,   lsetxattr,   XATTR, N, 0, 1, N, 3, 4, N, N, N, IT_SK_XNAME) \
	X(FSETXATTR,  48, fsetxattr,   fsetxattr,   XATTR, 0, N, 1, N, 3, 4, N, N, N, IT_SK_FD | IT_SK_XNAME) \
	X(LISTXATTR,  49, listxattr,   listxattr,   XATTR, N, 0, N, N, 2, N, N, N, N, 0) \
	X(LLISTXATTR, 50, llistxattr,  llistxattr,  XATTR, N, 0, N, N, 2, N, N, N, N, 0) \
	X(FLISTXATTR, 51, flistxattr,  flistxattr,  XATTR, 0, N, N, N, 2, N, N, N, N, IT_SK_FD) \
	X(REMOVEXATTR, 52, removexattr, removexattr, XATTR, N, 0, 1, N, N, N, N, N, N, IT_SK_XNAME) \
	X(LREMOVEXATTR, 53, lremovexattr, lremovexattr, XATTR, N, 0, 1, N, N, N, N, N, N, IT_SK_XNAME) \
	X(FREMOVEXATTR, 54, fremovexattr, fremovexattr, XATTR, 0, N, 1, N, N, N, N, N, N, IT_SK_FD | IT_SK_XNAME) \
	X(IO_SUBMIT,  55, io_submit,   io_submit,   AIO,  N, N, N, N, 1, N, N, N, N, 0) \
	X(IO_GETEVENTS, 56, io_getevents, io_getevents, AIO, N, N, N, N, 2, N, N, N, 1, 0) \
	X(IO_URING_ENTER, 57, io_uring_enter, io_uring_enter, AIO, 0, N, N, N, 1, 3, N, N, 2, 0)

/*
 * Per-request io_uring events (io_uring:io_uring_submit_req/complete): not
 * system calls, but one record each with the request's own latency
 * (ts_enter = submission, ts_exit = completion). fd is the request's fd (a
 * fixed-file index with IT_SYSF_FIXED_FILE), aux the user_data, mode the
 * IORING_OP_* opcode.
 */
#define IT_SYS_URING_CALLS(X)                 \
	X(URING_READ,     64, uring_read)     \
	X(URING_WRITE,    65, uring_write)    \
	X(URING_READV,    66, uring_readv)    \
	X(URING_WRITEV,   67, uring_writev)   \
	X(URING_READ_FIXED,  68, uring_read_fixed)  \
	X(URING_WRITE_FIXED, 69, uring_write_fixed) \
	X(URING_FSYNC,    70, uring_fsync)    \
	X(URING_OTHER,    71, uring_other)

enum it_sys_call {
	IT_SYS_NONE = 0,
#define IT_SYS_ENUM_(ID, V, ...) IT_SYS_##ID = V,
	IT_SYS_CALLS(IT_SYS_ENUM_)
	IT_SYS_URING_CALLS(IT_SYS_ENUM_)
#undef IT_SYS_ENUM_
	IT_SYS_MAX = 72
};

/* Call groups (--calls data,sync,...): one bit each. */
#define IT_SG_DATA  (1u << 0) /* read/write family, lseek, readahead, fallocate */
#define IT_SG_SYNC  (1u << 1) /* fsync, fdatasync, sync_file_range */
#define IT_SG_OPEN  (1u << 2) /* open family, close */
#define IT_SG_META  (1u << 3) /* stat family, rename, unlink, truncate, readlink */
#define IT_SG_DIR   (1u << 4) /* mkdir, rmdir, mknod */
#define IT_SG_XATTR (1u << 5)
#define IT_SG_AIO   (1u << 6) /* io_submit, io_getevents, io_uring_enter */
#define IT_SG_URING (1u << 7) /* io_uring requests */

/* How the kernel side decodes a call (the table's kind column). */
#define IT_SK_FD          (1u << 0) /* fd argument names the file: tag it at entry (not
					   * io_uring_enter's: the ring, or with
					   * IORING_ENTER_REGISTERED_RING an index
					   * into the task's registered rings) */
#define IT_SK_FPOS        (1u << 1) /* offset = file->f_pos at entry (read, write, readv, writev) */
#define IT_SK_POS_OR_FPOS (1u << 2) /* offset argument, or f_pos when it is -1 (preadv2) */
#define IT_SK_IOV         (1u << 3) /* count = sum of the iovecs */
#define IT_SK_RETFD       (1u << 4) /* the returned fd names the file: tag it at exit */
#define IT_SK_DIRFD       (1u << 5) /* fd argument is a directory fd (or AT_FDCWD) */
#define IT_SK_OPENHOW     (1u << 6) /* flags and mode come from struct open_how */
#define IT_SK_CREAT       (1u << 7) /* flags = O_CREAT|O_WRONLY|O_TRUNC */
#define IT_SK_XNAME       (1u << 8) /* path2 is the xattr name, not a path */

/* Decode row, as the kernel side holds it (argument indices, IT_A_N = none). */
struct it_sys_decode {
	__u8 fd, path, path2, off, count, flags, mode, whence, aux;
	__u8 group;  /* IT_SG_* */
	__u16 kind;  /* IT_SK_* */
};

/* Record kinds; every ring-buffer record starts with __u16 rec. */
enum it_srec_type {
	IT_SREC_CALL = 1,  /* struct it_sys_event */
	IT_SREC_PATH = 2,  /* struct it_sys_path + components */
	IT_SREC_NAME = 3,  /* struct it_sys_name + string */
	IT_SREC_TASK = 4,  /* struct it_sys_task */
	IT_SREC_TITLE = 5, /* struct it_sys_title + title (the recorder writes it; the BPF
			    * program sends one at a process exit, for the recorder) */
	/* ring only, never in a trace file: an io_uring request's two halves,
	 * joined by the recorder into one IT_SREC_CALL (src/layers/syscall/uring_join.c) */
	IT_SREC_URING_SUBMIT = 6, /* struct it_sys_uring_submit */
	IT_SREC_URING_DONE = 7,   /* struct it_sys_uring_done */
	/* 8 was both halves in one ring record, joined in the kernel (until
	 * 2026-11: two records into the CPU's buffer cost less); not reused */
};

/* File types, from the inode's S_IFMT. */
enum it_file_type {
	IT_FT_NONE = 0,   /* no file (path-based call, or the fd was not open) */
	IT_FT_REG = 1,
	IT_FT_DIR = 2,
	IT_FT_CHR = 3,
	IT_FT_BLK = 4,
	IT_FT_FIFO = 5,   /* pipe or FIFO */
	IT_FT_LNK = 6,
	IT_FT_SOCK = 7,
	IT_FT_OTHER = 8,  /* anon inodes: eventfd, epoll, io_uring, ... */
};

/* it_sys_event.sflags */
#define IT_SYSF_FPOS        (1u << 0) /* offset is file->f_pos at entry */
#define IT_SYSF_NAME        (1u << 1) /* IT_SREC_NAME record(s) precede this record */
#define IT_SYSF_IOV_PARTIAL (1u << 2) /* more iovecs than were summed into count */
#define IT_SYSF_TAG_DIR     (1u << 3) /* the tag is the directory a relative name is under
				       * (dirfd, or the cwd when AT_FDCWD) */
#define IT_SYSF_FIXED_FILE  (1u << 4) /* io_uring: fd is a registered-file index */
#define IT_SYSF_SQPOLL      (1u << 5) /* io_uring: submitted by the SQPOLL thread */
#define IT_SYSF_URING       (1u << 6) /* an io_uring request, not a system call */
#define IT_SYSF_NOEXIT      (1u << 7) /* emitted without its exit (thread exited in the call) */
#define IT_SYSF_APPEND      (1u << 8) /* O_APPEND write: offset is the file size at entry */

/*
 * One system call (or io_uring request), 112 bytes. The file tag (dev, ino,
 * tag_ts) names one file across fds and processes; tag_ts is the time the
 * kernel side first saw it (0: no file). dev is the file system's s_dev in
 * kernel encoding (major << 20 | minor), like it_event.dev.
 */
struct it_sys_event {
	__u16 rec;      /* IT_SREC_CALL */
	__u16 call;     /* enum it_sys_call */
	__u8  ftype;    /* enum it_file_type */
	__u8  whence;   /* lseek */
	__u16 sflags;   /* IT_SYSF_* */
	__u32 pid;      /* tgid */
	__u32 tid;
	__u32 ppid;     /* tgid of the parent (real_parent) */
	__s32 fd;       /* fd or dirfd argument; -100 = AT_FDCWD; -1 none */
	__u32 flags;    /* open flags, RWF_*, AT_*, XATTR_*, RENAME_*, SYNC_FILE_RANGE_* */
	__u32 mode;     /* open/mkdir/mknod mode, fallocate mode, io_uring opcode */
	__u32 dev;      /* file tag: device */
	__u32 cpu;      /* CPU at exit */
	__u64 ts_enter; /* bpf_ktime_get_ns at sys_enter */
	__u64 ts_exit;  /* bpf_ktime_get_ns at sys_exit */
	__s64 ret;      /* return value; -errno on failure */
	__u64 offset;   /* file offset: argument, or f_pos at entry (IT_SYSF_FPOS);
			 * lseek: offset argument; [f]truncate: length */
	__u64 count;    /* bytes asked (see IT_SYS_CALLS) */
	__u64 ino;      /* file tag: inode */
	__u64 tag_ts;   /* file tag: first-seen time, 0 = no file */
	__u64 cgroup;   /* cgroup v2 id */
	__u64 aux;      /* iovcnt, newdirfd, mknod dev, statx mask, min_nr, user_data */
};

/*
 * A file tag's path, once per tag, before the first record that uses it.
 * comps holds the dentry names from the file up to the root of the mount
 * namespace, leaf first, each NUL-terminated ("b.log\0dir\0tmp\0");
 * user space joins them in reverse. len = bytes in comps.
 */
#define IT_PATH_MAX 4096
#define IT_PATH_DEPTH 48
struct it_sys_path {
	__u16 rec;      /* IT_SREC_PATH */
	__u16 len;
	__u8  ftype;
	__u8  pflags;   /* IT_PATHF_* */
	__u16 ncomp;
	__u32 dev;
	__u32 reserved;
	__u64 ino;
	__u64 tag_ts;
	/* char comps[len]; */
};
#define IT_PATHF_TRUNCATED (1u << 0) /* deeper than IT_PATH_DEPTH or longer than IT_PATH_MAX */
#define IT_PATHF_MATCH     (1u << 1) /* under a --path prefix (always set without one) */
#define IT_PATHF_UNLINKED  (1u << 2) /* the dentry was already unlinked */

/*
 * A name argument of a path-based call, for the call record of the same
 * (tid, ts_enter) that follows it. which: 0 = path, 1 = second path (new
 * name of rename), 2 = xattr name. len = bytes in name, without a NUL.
 */
#define IT_NAME_MAX 512
struct it_sys_name {
	__u16 rec;      /* IT_SREC_NAME */
	__u16 len;
	__u8  which;
	__u8  truncated;
	__u16 reserved;
	__u32 tid;
	__u32 reserved2;
	__u64 ts_enter;
	/* char name[len]; */
};

/* A thread's names, when first seen and whenever its comm changes. */
struct it_sys_task {
	__u16 rec;      /* IT_SREC_TASK */
	__u16 reserved;
	__u32 pid;
	__u32 tid;
	__u32 ppid;
	__u64 ts;
	__u64 cgroup;
	char  comm[16];
};

/*
 * A process's title, what ps shows: /proc/PID/cmdline with its NULs as
 * spaces, as the process may have rewritten it ("postgres: checkpointer").
 * Written by the recorder (user space) once per process, after the first
 * task record of the process; an empty title: none could be read (a
 * kernel thread, or the process had exited). len = bytes in title, no NUL.
 */
#define IT_TITLE_MAX 128
struct it_sys_title {
	__u16 rec;      /* IT_SREC_TITLE */
	__u16 len;
	__u32 pid;
	__u64 ts;       /* when it was read (CLOCK_MONOTONIC) */
	/* char title[len]; */
};

/*
 * An io_uring request at submission: its call record so far (rec =
 * IT_SREC_URING_SUBMIT; ts_exit, ret, cpu and the file tag still 0), and
 * the request's address, which its completion names. Sent through the
 * ring instead of kept in a BPF hash map until the completion: a map
 * update, lookup and delete per request cost more than two ring records.
 */
struct it_sys_uring_submit {
	struct it_sys_event call;
	__u64 req;      /* struct io_kiocb address */
};

/* An io_uring request's completion: what its submit record lacks. */
struct it_sys_uring_done {
	__u16 rec;      /* IT_SREC_URING_DONE */
	__u8  ftype;    /* file tag, as in it_sys_event */
	__u8  keep;     /* 0: the file is outside --path: drop the request */
	__u32 dev;
	__u32 cpu;      /* CPU at completion */
	__s32 res;      /* the CQE's result */
	__u64 req;      /* struct io_kiocb address, as at submission */
	__u64 ts;       /* bpf_ktime_get_ns at completion */
	__u64 ino;
	__u64 tag_ts;
};

#define IT_SYS_IOV_MAX 8
#define IT_SYS_MAX_PREFIX 4
#define IT_SYS_PREFIX_LEN 256
#define IT_SYS_NR_MAX 1024 /* syscall numbers above this are not traced */

#endif
