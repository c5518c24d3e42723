// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Every system call in iotrail's call table (IT_SYS_CALLS) that this
 * architecture has, made once, each failing at once and harmlessly: every
 * argument -1 (a bad fd, a pointer no page is mapped at, an invalid
 * context or size). Prints the name of each call made (iotrail's
 * name, as reports give it), one per line, for the test to compare with
 * the calls a recording of this program holds (tests/integration/
 * test_syscall.sh, syscall_every_call): the whole table end to end, its
 * numbers (iotrail/syscall_nr.h, the loader's) and decoding included.
 *
 *   every_call
 *
 * The calls are bracketed by two lseek(-1, MARK, 0), which the test looks
 * for (the dynamic loader's own calls come before main).
 *
 * Exit status: 0, or 1 when a call did not fail (it must not do anything).
 */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iotrail/syscall.h"
#include "iotrail/syscall_nr.h"

struct call {
	const char *name;
	long nr;
};

#define CALL_(ID, V, name, ...) { #name, IT_NR_##ID },
static const struct call calls[] = { IT_SYS_CALLS(CALL_) };

#define MARK 24301 /* the brackets' offset */

int main(void)
{
	const unsigned n = sizeof(calls) / sizeof(calls[0]);
	int bad = 0, failed[sizeof(calls) / sizeof(calls[0])];

	/* nothing but the calls between the markers (printing comes after:
	 * stdio's first output makes a call of its own, an fstat) */
	syscall(SYS_lseek, -1L, (long)MARK, 0L);
	for (unsigned i = 0; i < n; i++)
		failed[i] = calls[i].nr < 0 ||
			    syscall(calls[i].nr, -1L, -1L, -1L, -1L, -1L, -1L) == -1;
	syscall(SYS_lseek, -1L, (long)MARK, 0L);
	for (unsigned i = 0; i < n; i++) {
		if (calls[i].nr < 0)
			continue;
		if (!failed[i]) {
			fprintf(stderr, "every_call: %s did not fail\n", calls[i].name);
			bad = 1;
		}
		printf("%s\n", calls[i].name);
	}
	return bad;
}
