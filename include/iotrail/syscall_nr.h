/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The system call numbers of the calls in IT_SYS_CALLS (syscall.h) on the
 * architecture compiled for: IT_NR_<ID> is __NR_<name> (<sys/syscall.h>,
 * included before this), -1 where the architecture has no such call. The
 * loader fills the kernel side's nr -> call table from them
 * (record_loader.c); tests/progs/every_call makes each call once.
 */
#ifndef IOTRAIL_SYSCALL_NR_H
#define IOTRAIL_SYSCALL_NR_H

#ifdef __NR_read
#define IT_NR_READ __NR_read
#else
#define IT_NR_READ (-1)
#endif
#ifdef __NR_pread64
#define IT_NR_PREAD64 __NR_pread64
#else
#define IT_NR_PREAD64 (-1)
#endif
#ifdef __NR_readv
#define IT_NR_READV __NR_readv
#else
#define IT_NR_READV (-1)
#endif
#ifdef __NR_preadv
#define IT_NR_PREADV __NR_preadv
#else
#define IT_NR_PREADV (-1)
#endif
#ifdef __NR_preadv2
#define IT_NR_PREADV2 __NR_preadv2
#else
#define IT_NR_PREADV2 (-1)
#endif
#ifdef __NR_write
#define IT_NR_WRITE __NR_write
#else
#define IT_NR_WRITE (-1)
#endif
#ifdef __NR_pwrite64
#define IT_NR_PWRITE64 __NR_pwrite64
#else
#define IT_NR_PWRITE64 (-1)
#endif
#ifdef __NR_writev
#define IT_NR_WRITEV __NR_writev
#else
#define IT_NR_WRITEV (-1)
#endif
#ifdef __NR_pwritev
#define IT_NR_PWRITEV __NR_pwritev
#else
#define IT_NR_PWRITEV (-1)
#endif
#ifdef __NR_pwritev2
#define IT_NR_PWRITEV2 __NR_pwritev2
#else
#define IT_NR_PWRITEV2 (-1)
#endif
#ifdef __NR_fsync
#define IT_NR_FSYNC __NR_fsync
#else
#define IT_NR_FSYNC (-1)
#endif
#ifdef __NR_fdatasync
#define IT_NR_FDATASYNC __NR_fdatasync
#else
#define IT_NR_FDATASYNC (-1)
#endif
#ifdef __NR_sync_file_range
#define IT_NR_SYNC_FILE_RANGE __NR_sync_file_range
#else
#define IT_NR_SYNC_FILE_RANGE (-1)
#endif
#ifdef __NR_readahead
#define IT_NR_READAHEAD __NR_readahead
#else
#define IT_NR_READAHEAD (-1)
#endif
#ifdef __NR_fallocate
#define IT_NR_FALLOCATE __NR_fallocate
#else
#define IT_NR_FALLOCATE (-1)
#endif
#ifdef __NR_open
#define IT_NR_OPEN __NR_open
#else
#define IT_NR_OPEN (-1)
#endif
#ifdef __NR_openat
#define IT_NR_OPENAT __NR_openat
#else
#define IT_NR_OPENAT (-1)
#endif
#ifdef __NR_openat2
#define IT_NR_OPENAT2 __NR_openat2
#else
#define IT_NR_OPENAT2 (-1)
#endif
#ifdef __NR_creat
#define IT_NR_CREAT __NR_creat
#else
#define IT_NR_CREAT (-1)
#endif
#ifdef __NR_close
#define IT_NR_CLOSE __NR_close
#else
#define IT_NR_CLOSE (-1)
#endif
#ifdef __NR_lseek
#define IT_NR_LSEEK __NR_lseek
#else
#define IT_NR_LSEEK (-1)
#endif
#ifdef __NR_truncate
#define IT_NR_TRUNCATE __NR_truncate
#else
#define IT_NR_TRUNCATE (-1)
#endif
#ifdef __NR_ftruncate
#define IT_NR_FTRUNCATE __NR_ftruncate
#else
#define IT_NR_FTRUNCATE (-1)
#endif
#ifdef __NR_rename
#define IT_NR_RENAME __NR_rename
#else
#define IT_NR_RENAME (-1)
#endif
#ifdef __NR_renameat
#define IT_NR_RENAMEAT __NR_renameat
#else
#define IT_NR_RENAMEAT (-1)
#endif
#ifdef __NR_renameat2
#define IT_NR_RENAMEAT2 __NR_renameat2
#else
#define IT_NR_RENAMEAT2 (-1)
#endif
#ifdef __NR_unlink
#define IT_NR_UNLINK __NR_unlink
#else
#define IT_NR_UNLINK (-1)
#endif
#ifdef __NR_unlinkat
#define IT_NR_UNLINKAT __NR_unlinkat
#else
#define IT_NR_UNLINKAT (-1)
#endif
#ifdef __NR_mkdir
#define IT_NR_MKDIR __NR_mkdir
#else
#define IT_NR_MKDIR (-1)
#endif
#ifdef __NR_mkdirat
#define IT_NR_MKDIRAT __NR_mkdirat
#else
#define IT_NR_MKDIRAT (-1)
#endif
#ifdef __NR_rmdir
#define IT_NR_RMDIR __NR_rmdir
#else
#define IT_NR_RMDIR (-1)
#endif
#ifdef __NR_mknod
#define IT_NR_MKNOD __NR_mknod
#else
#define IT_NR_MKNOD (-1)
#endif
#ifdef __NR_mknodat
#define IT_NR_MKNODAT __NR_mknodat
#else
#define IT_NR_MKNODAT (-1)
#endif
#ifdef __NR_readlink
#define IT_NR_READLINK __NR_readlink
#else
#define IT_NR_READLINK (-1)
#endif
#ifdef __NR_readlinkat
#define IT_NR_READLINKAT __NR_readlinkat
#else
#define IT_NR_READLINKAT (-1)
#endif
#ifdef __NR_stat
#define IT_NR_STAT __NR_stat
#else
#define IT_NR_STAT (-1)
#endif
#ifdef __NR_lstat
#define IT_NR_LSTAT __NR_lstat
#else
#define IT_NR_LSTAT (-1)
#endif
#ifdef __NR_fstat
#define IT_NR_FSTAT __NR_fstat
#else
#define IT_NR_FSTAT (-1)
#endif
#ifdef __NR_newfstatat
#define IT_NR_NEWFSTATAT __NR_newfstatat
#else
#define IT_NR_NEWFSTATAT (-1)
#endif
#ifdef __NR_statx
#define IT_NR_STATX __NR_statx
#else
#define IT_NR_STATX (-1)
#endif
#ifdef __NR_statfs
#define IT_NR_STATFS __NR_statfs
#else
#define IT_NR_STATFS (-1)
#endif
#ifdef __NR_fstatfs
#define IT_NR_FSTATFS __NR_fstatfs
#else
#define IT_NR_FSTATFS (-1)
#endif
#ifdef __NR_getxattr
#define IT_NR_GETXATTR __NR_getxattr
#else
#define IT_NR_GETXATTR (-1)
#endif
#ifdef __NR_lgetxattr
#define IT_NR_LGETXATTR __NR_lgetxattr
#else
#define IT_NR_LGETXATTR (-1)
#endif
#ifdef __NR_fgetxattr
#define IT_NR_FGETXATTR __NR_fgetxattr
#else
#define IT_NR_FGETXATTR (-1)
#endif
#ifdef __NR_setxattr
#define IT_NR_SETXATTR __NR_setxattr
#else
#define IT_NR_SETXATTR (-1)
#endif
#ifdef __NR_lsetxattr
#define IT_NR_LSETXATTR __NR_lsetxattr
#else
#define IT_NR_LSETXATTR (-1)
#endif
#ifdef __NR_fsetxattr
#define IT_NR_FSETXATTR __NR_fsetxattr
#else
#define IT_NR_FSETXATTR (-1)
#endif
#ifdef __NR_listxattr
#define IT_NR_LISTXATTR __NR_listxattr
#else
#define IT_NR_LISTXATTR (-1)
#endif
#ifdef __NR_llistxattr
#define IT_NR_LLISTXATTR __NR_llistxattr
#else
#define IT_NR_LLISTXATTR (-1)
#endif
#ifdef __NR_flistxattr
#define IT_NR_FLISTXATTR __NR_flistxattr
#else
#define IT_NR_FLISTXATTR (-1)
#endif
#ifdef __NR_removexattr
#define IT_NR_REMOVEXATTR __NR_removexattr
#else
#define IT_NR_REMOVEXATTR (-1)
#endif
#ifdef __NR_lremovexattr
#define IT_NR_LREMOVEXATTR __NR_lremovexattr
#else
#define IT_NR_LREMOVEXATTR (-1)
#endif
#ifdef __NR_fremovexattr
#define IT_NR_FREMOVEXATTR __NR_fremovexattr
#else
#define IT_NR_FREMOVEXATTR (-1)
#endif
#ifdef __NR_io_submit
#define IT_NR_IO_SUBMIT __NR_io_submit
#else
#define IT_NR_IO_SUBMIT (-1)
#endif
#ifdef __NR_io_getevents
#define IT_NR_IO_GETEVENTS __NR_io_getevents
#else
#define IT_NR_IO_GETEVENTS (-1)
#endif
#ifdef __NR_io_uring_enter
#define IT_NR_IO_URING_ENTER __NR_io_uring_enter
#else
#define IT_NR_IO_URING_ENTER (-1)
#endif

#endif
