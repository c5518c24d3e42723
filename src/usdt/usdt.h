/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A binary's USDT probes (systemtap's sys/sdt.h, which DTrace-style
 * `--enable-dtrace` builds use too): each is one ELF note of type 3,
 * owner "stapsdt", in the .note.stapsdt section, holding the probe's
 * address, the .stapsdt.base address it was linked against, its
 * semaphore's address (0: none), and three strings: provider, name and
 * the arguments' locations ("-4@%eax 8@-16(%rbp)"). Parsed here from the
 * bytes of the file (64-bit little-endian ELF), without libelf, so the
 * parser is unit-tested and fuzzed on its own.
 */
#ifndef IOTRAIL_USDT_H
#define IOTRAIL_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct it_usdt_probe {
	const char *provider, *name, *args; /* point into the parsed buffer */
	uint64_t pc;                        /* address, adjusted for prelinking */
	uint64_t file_offset;               /* where pc lies in the file (uprobe's offset);
					     * 0 when no loadable segment holds it */
	uint64_t semaphore;                 /* address of its counter, 0: none */
	uint64_t semaphore_offset;          /* where it lies in the file (a uprobe's
					     * ref_ctr_offset); 0: none */
	unsigned nargs;
};

struct it_usdt_list {
	struct it_usdt_probe *probes;
	size_t n;
};

/* Parses buf[len], an ELF file. Returns 0 (list filled; n may be 0, when
 * the binary has no .note.stapsdt section: *no_notes is set), or -1 with
 * why (what is wrong with the file) in err. */
int it_usdt_parse(const uint8_t *buf, size_t len, struct it_usdt_list *out, bool *no_notes,
		  char *err, size_t errlen);
void it_usdt_list_free(struct it_usdt_list *l);

/* `iotrail probe --usdt BINARY`: the listing (text or JSON) on f.
 * Returns the exit status (the error line printed). */
int it_usdt_print(const char *path, bool json, FILE *f);

#endif
