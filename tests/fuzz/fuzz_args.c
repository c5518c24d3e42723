// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the command-line option values iotrail parses, as a
 * user types them. The input is split at NUL or newline bytes into up to
 * 32 words, given to `iotrail record`'s option parser (its own options:
 * -o, -d, --dev, -p, --ringbuf-mb, --hook, --layers; every layer's:
 * --calls, --comm, --cgroup, --path, --tid, --syscall-hook; COMMAND after
 * "--"), which starts nothing; each word is also a --group-by list of
 * `report` and `diff`. Bad values must give one error line, never a crash
 * or undefined behaviour. The parsers touch the system only to check
 * (stat, /sys/class/block, kill(pid, 0)).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "commands.h"

#define MAX_WORDS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_WORDS + 2], err[256];
	int argc = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	argv[argc++] = "record";
	for (char *p = buf; argc <= MAX_WORDS && p <= buf + size;) {
		size_t len = strcspn(p, "\n");

		p[len] = 0;
		argv[argc++] = p;
		p += len + 1;
	}
	argv[argc] = NULL;
	it_record_parse_only(argc, argv);
	for (int i = 1; i < argc; i++) {
		struct it_analyzer_opts o = IT_ANALYZER_OPTS_DEFAULT;

		it_parse_group_keys(argv[i], &o, err, sizeof(err));
	}
	free(buf);
	return 0;
}
