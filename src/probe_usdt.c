// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail probe --usdt BINARY`: the binary's USDT probes, from its ELF
 * notes (src/usdt/usdt.c), in text or JSON. A binary built without them
 * (no .note.stapsdt) is told so, with what to use instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/json_writer.h"
#include "cli.h"
#include "usdt/usdt.h"

static void print_text(const char *path, const struct it_usdt_list *l, FILE *f)
{
	fprintf(f, "%s: %zu USDT probes\n", path, l->n);
	fprintf(f, "%-16s %-32s %4s %12s %12s  %s\n", "provider", "name", "args", "address",
		"semaphore", "argument locations");
	for (size_t i = 0; i < l->n; i++) {
		const struct it_usdt_probe *p = &l->probes[i];
		fprintf(f, "%-16s %-32s %4u %#12llx %#12llx  %s\n", p->provider, p->name, p->nargs,
			(unsigned long long)p->pc, (unsigned long long)p->semaphore, p->args);
	}
}

static void print_json(const char *path, const struct it_usdt_list *l, FILE *f)
{
	struct it_json j;

	it_json_init(&j, f, false);
	it_json_object_start(&j);
	it_json_kv_uint(&j, "version", 1);
	it_json_kv_string(&j, "binary", path);
	it_json_name(&j, "probes");
	it_json_array_start(&j);
	for (size_t i = 0; i < l->n; i++) {
		const struct it_usdt_probe *p = &l->probes[i];
		it_json_object_start(&j);
		it_json_kv_string(&j, "provider", p->provider);
		it_json_kv_string(&j, "name", p->name);
		it_json_kv_uint(&j, "address", p->pc);
		it_json_kv_uint(&j, "file_offset", p->file_offset);
		it_json_kv_uint(&j, "semaphore", p->semaphore);
		it_json_kv_uint(&j, "nargs", p->nargs);
		it_json_kv_string(&j, "args", p->args);
		it_json_object_end(&j);
	}
	it_json_array_end(&j);
	it_json_object_end(&j);
	fputc('\n', f);
}

int it_usdt_print(const char *path, bool json, FILE *f)
{
	struct it_usdt_list l;
	struct stat st;
	char why[160];
	bool none;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return it_failf(1, "failed to read %s: %s; give the path of an executable or library",
				path, strerror(e));
	}
	if (!S_ISREG(st.st_mode) || !st.st_size) {
		close(fd);
		return it_failf(1, "failed to read %s: %s; give the path of an executable or library",
				path, S_ISREG(st.st_mode) ? "empty file" : "not a regular file");
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return it_failf(1, "failed to read %s: %s; give the path of an executable or library",
				path, strerror(errno));
	int rc = it_usdt_parse(m, (size_t)st.st_size, &l, &none, why, sizeof(why));
	if (rc)
		rc = it_failf(1, "failed to read the USDT probes of %s: %s; give an ELF executable "
			      "or library", path, why);
	else if (none)
		rc = it_failf(1, "failed to find USDT probes in %s: it has no .note.stapsdt section "
			      "(built without sys/sdt.h probes, e.g. without --enable-dtrace); trace "
			      "its functions with --uprobe BINARY:SYMBOL instead", path);
	else if (json)
		print_json(path, &l, f);
	else
		print_text(path, &l, f);
	it_usdt_list_free(&l);
	munmap(m, (size_t)st.st_size);
	return rc;
}
