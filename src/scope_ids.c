// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The scope's pure parts (scope.h): PID lists as `-p` takes them ("12",
 * "12,13", "12 13" from a quoted $(pidof x)), and the descendants of a
 * set of processes in a snapshot of the process table.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope.h"

static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

bool it_scope_is_pid_list(const char *arg)
{
	bool digit = false;

	for (const char *p = arg; *p; p++) {
		if (isdigit((unsigned char)*p))
			digit = true;
		else if (!is_sep(*p))
			return false;
	}
	return digit;
}

int it_scope_add_pids(const char *arg, pid_t **pids, size_t *npids, char *err, size_t errlen)
{
	const char *p = arg;

	while (*p) {
		char *end;
		long v;

		if (is_sep(*p)) {
			p++;
			continue;
		}
		errno = 0;
		v = strtol(p, &end, 10);
		if (end == p || errno || v <= 0 || v > INT_MAX || (*end && !is_sep(*end))) {
			snprintf(err, errlen, "'%s' is not a process id", arg);
			return -1;
		}
		p = end;
		bool dup = false;
		for (size_t i = 0; i < *npids; i++)
			dup |= (*pids)[i] == (pid_t)v;
		if (dup)
			continue;
		pid_t *n = realloc(*pids, (*npids + 1) * sizeof(**pids));
		if (!n) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		*pids = n;
		n[(*npids)++] = (pid_t)v;
	}
	return 0;
}

size_t it_scope_close_descendants(const struct it_proc *procs, size_t n, bool *in)
{
	size_t count = 0;
	bool more = true;

	while (more) {
		more = false;
		for (size_t i = 0; i < n; i++) {
			if (in[i])
				continue;
			for (size_t j = 0; j < n; j++) {
				if (in[j] && procs[j].pid == procs[i].ppid) {
					in[i] = more = true;
					break;
				}
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		count += in[i];
	return count;
}
