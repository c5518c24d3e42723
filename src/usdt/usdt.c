// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The .note.stapsdt parser (usdt.h). Every offset and size read from the
 * file is checked against the buffer before use: the input is whatever
 * file the user names.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "usdt/usdt.h"

#define NT_STAPSDT 3

static bool in(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

/* the NUL-terminated string at p within end, or NULL */
static const char *str_at(const char *p, const char *end)
{
	const char *z = memchr(p, 0, (size_t)(end - p));
	return z ? p : NULL;
}

static unsigned count_args(const char *a)
{
	unsigned n = 0;
	for (bool word = false; *a; a++) {
		bool sp = *a == ' ' || *a == '\t';
		n += !sp && !word;
		word = !sp;
	}
	return n;
}

/* an address's offset in the file, from the loadable segment holding it
 * (code: an executable one; data, a semaphore: any) */
static uint64_t file_offset(const uint8_t *buf, size_t len, const Elf64_Ehdr *eh, uint64_t pc,
			    bool code)
{
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in(len, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, buf + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && (!code || (ph.p_flags & PF_X)) && pc >= ph.p_vaddr &&
		    pc - ph.p_vaddr < ph.p_filesz)
			return pc - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

static int fail(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -1;
}

int it_usdt_parse(const uint8_t *buf, size_t len, struct it_usdt_list *out, bool *no_notes,
		  char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	Elf64_Shdr notes = { 0 }, base = { 0 }, strtab;
	bool have_notes = false, have_base = false;
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	*no_notes = false;
	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG))
		return fail(err, errlen, "not an ELF file");
	if (buf[EI_CLASS] != ELFCLASS64 || buf[EI_DATA] != ELFDATA2LSB)
		return fail(err, errlen, "not a 64-bit little-endian ELF file (the only kind read)");
	if (len < sizeof(eh))
		return fail(err, errlen, "the ELF header is cut short");
	memcpy(&eh, buf, sizeof(eh));
	if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !in(len, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)) ||
	    eh.e_shstrndx >= eh.e_shnum)
		return fail(err, errlen, "its section table lies outside the file");
	memcpy(&strtab, buf + eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof(strtab), sizeof(strtab));
	if (!in(len, strtab.sh_offset, strtab.sh_size) || !strtab.sh_size)
		return fail(err, errlen, "its section names lie outside the file");
	const char *names = (const char *)buf + strtab.sh_offset;
	const char *names_end = names + strtab.sh_size;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		memcpy(&sh, buf + eh.e_shoff + (uint64_t)i * sizeof(sh), sizeof(sh));
		if (sh.sh_name >= strtab.sh_size || !str_at(names + sh.sh_name, names_end))
			continue;
		const char *nm = names + sh.sh_name;
		if (!strcmp(nm, ".note.stapsdt") && sh.sh_type == SHT_NOTE) {
			notes = sh;
			have_notes = true;
		} else if (!strcmp(nm, ".stapsdt.base")) {
			base = sh;
			have_base = true;
		}
	}
	if (!have_notes) {
		*no_notes = true;
		return 0;
	}
	if (!in(len, notes.sh_offset, notes.sh_size))
		return fail(err, errlen, "its .note.stapsdt section lies outside the file");
	const uint8_t *p = buf + notes.sh_offset, *end = p + notes.sh_size;
	while (end - p >= (ptrdiff_t)sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		memcpy(&nh, p, sizeof(nh));
		p += sizeof(nh);
		uint64_t nsz = ((uint64_t)nh.n_namesz + 3) & ~3ull;
		uint64_t dsz = ((uint64_t)nh.n_descsz + 3) & ~3ull;
		if (nsz > (uint64_t)(end - p) || dsz > (uint64_t)(end - p) - nsz) {
			it_usdt_list_free(out);
			return fail(err, errlen, "a note in .note.stapsdt runs past its section");
		}
		const uint8_t *name = p, *desc = p + nsz;
		p += nsz + dsz;
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 || memcmp(name, "stapsdt", 8) ||
		    nh.n_descsz < 3 * 8 + 3)
			continue; /* another owner's note, or too short to be a probe */
		const char *s = (const char *)desc + 24, *send = (const char *)desc + nh.n_descsz;
		const char *prov = str_at(s, send);
		const char *pname = prov ? str_at(prov + strlen(prov) + 1, send) : NULL;
		const char *args = pname && pname + strlen(pname) + 1 < send ?
				   str_at(pname + strlen(pname) + 1, send) : NULL;
		if (!pname) {
			it_usdt_list_free(out);
			return fail(err, errlen, "a probe's note in .note.stapsdt has no name");
		}
		if (out->n == cap) {
			cap = cap ? cap * 2 : 32;
			struct it_usdt_probe *np = realloc(out->probes, cap * sizeof(*np));
			if (!np) {
				it_usdt_list_free(out);
				return fail(err, errlen, "out of memory");
			}
			out->probes = np;
		}
		struct it_usdt_probe *u = &out->probes[out->n++];
		uint64_t v[3];
		memcpy(v, desc, sizeof(v));
		u->pc = v[0];
		u->semaphore = v[2];
		/* prelink moved the binary: the probe moved with .stapsdt.base */
		if (have_base && v[1])
			u->pc += base.sh_addr - v[1];
		u->provider = prov;
		u->name = pname;
		u->args = args ? args : "";
		u->nargs = count_args(u->args);
		u->file_offset = file_offset(buf, len, &eh, u->pc, true);
		u->semaphore_offset = u->semaphore ? file_offset(buf, len, &eh, u->semaphore, false) : 0;
	}
	return 0;
}

void it_usdt_list_free(struct it_usdt_list *l)
{
	free(l->probes);
	memset(l, 0, sizeof(*l));
}
