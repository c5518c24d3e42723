/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A program with USDT probes built in (sys/sdt.h, systemtap-sdt-dev), the
 * ground truth for `iotrail probe --usdt` (tests/integration/test_usdt.sh
 * compares its listing with readelf -n's) and for `record --usdt` and
 * `--uprobe` (test_uprobe.sh). `usdt_demo N` fires each probe N times (a
 * begin/end pair around a write of i % 4096 + 1 bytes to /dev/null, i
 * from 0) and calls demo_step(i) between them; `usdt_demo N DEV` writes
 * 4 KiB at offset i * 4 KiB of DEV with O_DIRECT instead: one block I/O,
 * complete when write returns, inside each pair.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

/* a function for --uprobe: not inlined, not cloned (the asm is a side effect) */
__attribute__((noinline, used)) void demo_step(int i)
{
	asm volatile("" : : "r"(i) : "memory");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	const char *dev = argc > 2 ? argv[2] : NULL;
	int fd = dev ? open(dev, O_WRONLY | O_DIRECT) : open("/dev/null", O_WRONLY);
	static char buf[4096] __attribute__((aligned(4096)));

	if (fd < 0)
		return 1;
	DTRACE_PROBE(iotrail_demo, started);
	for (int i = 0; i < n; i++) {
		long len = dev ? (long)sizeof(buf) : (long)(i % (int)sizeof(buf)) + 1;
		DTRACE_PROBE2(iotrail_demo, work__start, i, len);
		demo_step(i);
		if ((dev ? pwrite(fd, buf, (size_t)len, (off_t)i * (off_t)sizeof(buf))
			 : write(fd, buf, (size_t)len)) != len)
			return 1;
		DTRACE_PROBE3(iotrail_demo, work__done, i, len, (long)fd);
	}
	close(fd);
	return 0;
}
