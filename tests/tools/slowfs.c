// slowfs: a FUSE file system with one file, "disk", whose every read and
// write sleeps a fixed delay before it is answered. A loop device over that
// file is a block device with a known service time: the ground truth the
// integration tests check iotrail's stages against (this host has no
// null_blk, dm-delay, nbd or ublk).
//
//   slowfs [--delay-us=N] [--size-mb=N] MOUNTPOINT -f
//
// The file lives in anonymous memory (sparse: untouched pages read as
// zeros). It is opened with direct_io, so the kernel sends each read and
// write to this daemon as it comes (no page cache, no readahead), and the
// daemon is multithreaded (fuse_main's default), so requests that arrive
// together are delayed together, not one after another.
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#define DISK_NAME "disk"
#define DISK_PATH "/" DISK_NAME

static struct options {
	unsigned int delay_us;
	unsigned int size_mb;
} opts = { .delay_us = 500, .size_mb = 64 };

static char *disk;
static size_t disk_size;

static const struct fuse_opt opt_spec[] = {
	{ "--delay-us=%u", offsetof(struct options, delay_us), 0 },
	{ "--size-mb=%u", offsetof(struct options, size_mb), 0 },
	FUSE_OPT_END
};

// A relative sleep, restarted on signals until the whole delay has passed.
static void delay(void)
{
	struct timespec ts = {
		.tv_sec = opts.delay_us / 1000000,
		.tv_nsec = (long)(opts.delay_us % 1000000) * 1000,
	};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *slow_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	// the file never changes behind the kernel's back
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	return NULL;
}

static int slow_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (strcmp(path, DISK_PATH) == 0) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = disk_size;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int slow_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off; (void)fi; (void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, DISK_NAME, NULL, 0, 0);
	return 0;
}

static int slow_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, DISK_PATH) != 0)
		return -ENOENT;
	fi->direct_io = 1;	// every read and write reaches us, one by one
	return 0;
}

// Clamp [off, off+len) to the file; returns the byte count to move.
static size_t clamp(off_t off, size_t len)
{
	if (off < 0 || (size_t)off >= disk_size)
		return 0;
	return len < disk_size - off ? len : disk_size - off;
}

static int slow_read(const char *path, char *buf, size_t len, off_t off,
		     struct fuse_file_info *fi)
{
	(void)path; (void)fi;
	delay();
	len = clamp(off, len);
	memcpy(buf, disk + off, len);
	return len;
}

static int slow_write(const char *path, const char *buf, size_t len, off_t off,
		      struct fuse_file_info *fi)
{
	(void)path; (void)fi;
	delay();
	len = clamp(off, len);
	if (len == 0)
		return -ENOSPC;
	memcpy(disk + off, buf, len);
	return len;
}

// fsync and flush have nothing to write back: memory is the medium
static int slow_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path; (void)datasync; (void)fi;
	return 0;
}

static const struct fuse_operations slow_ops = {
	.init = slow_init,
	.getattr = slow_getattr,
	.readdir = slow_readdir,
	.open = slow_open,
	.read = slow_read,
	.write = slow_write,
	.fsync = slow_fsync,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	int rc;

	if (fuse_opt_parse(&args, &opts, opt_spec, NULL) != 0)
		return 1;
	if (opts.size_mb == 0) {
		fprintf(stderr, "slowfs: --size-mb must be at least 1\n");
		return 1;
	}
	// keep idle workers instead of starting a thread per request (this
	// also silences libfuse 3.14's bogus "invalid max threads" warning)
	fuse_opt_add_arg(&args, "-omax_idle_threads=16");
	disk_size = (size_t)opts.size_mb << 20;
	disk = mmap(NULL, disk_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (disk == MAP_FAILED) {
		fprintf(stderr, "slowfs: failed to map %u MiB: %s\n", opts.size_mb, strerror(errno));
		return 1;
	}
	rc = fuse_main(args.argc, args.argv, &slow_ops, NULL);
	fuse_opt_free_args(&args);
	munmap(disk, disk_size);
	return rc;
}
