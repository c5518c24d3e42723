/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A program with USDT probes built in (sys/sdt.h, systemtap-sdt-dev), the
 * ground truth for `iotrail probe --usdt`: tests/integration/test_usdt.sh
 * compares its listing with readelf -n's. `usdt_demo N` fires each probe
 * N times (a begin/end pair around a write of N bytes to /dev/null).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	int fd = open("/dev/null", O_WRONLY);
	static char buf[4096];

	DTRACE_PROBE(iotrail_demo, started);
	for (int i = 0; i < n; i++) {
		long len = (long)(i % (int)sizeof(buf)) + 1;
		DTRACE_PROBE2(iotrail_demo, work__start, i, len);
		if (write(fd, buf, (size_t)len) < 0)
			return 1;
		DTRACE_PROBE3(iotrail_demo, work__done, i, len, (long)fd);
	}
	close(fd);
	return 0;
}
