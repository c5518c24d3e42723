/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The .note.stapsdt parser on an ELF file made here byte by byte: the
 * probes' fields, the prelink adjustment, the file offset from the
 * loadable segment, other owners' notes skipped, and every truncation and
 * a damaged note refused without reading past the buffer. */
#include <elf.h>
#include <stdlib.h>

#include "harness.h"
#include "usdt/usdt.h"

struct elf_img {
	uint8_t b[2048];
	size_t len;
};

static size_t put(struct elf_img *e, const void *p, size_t n)
{
	size_t at = e->len;
	memcpy(e->b + at, p, n);
	e->len += (n + 7) & ~(size_t)7;
	return at;
}

static void note(uint8_t **p, const char *owner, uint32_t type, const void *desc, uint32_t dlen)
{
	Elf64_Nhdr nh = { .n_namesz = (uint32_t)strlen(owner) + 1, .n_descsz = dlen, .n_type = type };
	memcpy(*p, &nh, sizeof(nh));
	*p += sizeof(nh);
	memcpy(*p, owner, nh.n_namesz);
	*p += (nh.n_namesz + 3) & ~3u;
	memcpy(*p, desc, dlen);
	*p += (dlen + 3) & ~3u;
}

/* two probes (one with a semaphore), a foreign note between them; the
 * probes were linked with .stapsdt.base at 0x2000, the section now at
 * 0x2100 (prelinked by 0x100); text at vaddr 0x1000, file offset 0x400;
 * data (the semaphore) at vaddr 0x2f00, file offset 0xc00 */
static void make_elf(struct elf_img *e)
{
	static const char shstr[] = "\0.shstrtab\0.note.stapsdt\0.stapsdt.base";
	uint8_t notes[512], *p = notes, desc[128];
	uint64_t v[3];

	memset(e, 0, sizeof(*e));
	e->len = sizeof(Elf64_Ehdr);
	Elf64_Phdr ph[2] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x400, .p_vaddr = 0x1000,
		  .p_filesz = 0x800, .p_memsz = 0x800 },
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0xc00, .p_vaddr = 0x2f00,
		  .p_filesz = 0x200, .p_memsz = 0x200 },
	};
	size_t phoff = put(e, ph, sizeof(ph));

	v[0] = 0x1010, v[1] = 0x2000, v[2] = 0;
	memcpy(desc, v, 24);
	memcpy(desc + 24, "app\0begin\0-4@%eax 8@-16(%rbp)", 30);
	note(&p, "stapsdt", 3, desc, 24 + 30);
	note(&p, "GNU", 3, "\x01\x02\x03\x04", 4);
	v[0] = 0x1020, v[1] = 0x2000, v[2] = 0x3000;
	memcpy(desc, v, 24);
	memcpy(desc + 24, "app\0end\0", 8);
	note(&p, "stapsdt", 3, desc, 24 + 8);
	size_t noff = put(e, notes, (size_t)(p - notes));
	size_t soff = put(e, shstr, sizeof(shstr));

	Elf64_Shdr sh[4] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = soff, .sh_size = sizeof(shstr) },
		{ .sh_name = 11, .sh_type = SHT_NOTE, .sh_offset = noff, .sh_size = (uint64_t)(p - notes) },
		{ .sh_name = 25, .sh_type = SHT_PROGBITS, .sh_addr = 0x2100, .sh_size = 1 },
	};
	size_t shoff = put(e, sh, sizeof(sh));
	Elf64_Ehdr eh = { .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = phoff, .e_shoff = shoff, .e_ehsize = sizeof(Elf64_Ehdr),
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2,
			  .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 4, .e_shstrndx = 1 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(e->b, &eh, sizeof(eh));
}

TEST(usdt_parse_probes)
{
	struct elf_img e;
	struct it_usdt_list l;
	char err[128] = "";
	bool none;

	make_elf(&e);
	ASSERT_EQ(it_usdt_parse(e.b, e.len, &l, &none, err, sizeof(err)), 0, err);
	ASSERT_TRUE(!none, "has notes");
	if (!ASSERT_EQ(l.n, 2, "probes (the GNU note skipped)"))
		return;
	ASSERT_STREQ(l.probes[0].provider, "app", "provider");
	ASSERT_STREQ(l.probes[0].name, "begin", "name");
	ASSERT_STREQ(l.probes[0].args, "-4@%eax 8@-16(%rbp)", "args");
	ASSERT_EQ(l.probes[0].nargs, 2, "nargs");
	ASSERT_U64_EQ(l.probes[0].pc, 0x1110, "pc moved with .stapsdt.base");
	ASSERT_U64_EQ(l.probes[0].file_offset, 0x510, "file offset in the text segment");
	ASSERT_U64_EQ(l.probes[0].semaphore, 0, "no semaphore");
	ASSERT_STREQ(l.probes[1].name, "end", "second name");
	ASSERT_STREQ(l.probes[1].args, "", "no args");
	ASSERT_EQ(l.probes[1].nargs, 0, "second nargs");
	ASSERT_U64_EQ(l.probes[1].semaphore, 0x3000, "semaphore");
	ASSERT_U64_EQ(l.probes[1].semaphore_offset, 0xd00, "semaphore's file offset (data segment)");
	ASSERT_U64_EQ(l.probes[0].semaphore_offset, 0, "none without a semaphore");
	it_usdt_list_free(&l);
}

TEST(usdt_parse_bad_input)
{
	struct elf_img e;
	struct it_usdt_list l;
	char err[128];
	bool none;
	int ok = 0;

	make_elf(&e);
	/* every cut: refused or parsed, never a read beyond the cut (ASan
	 * in the fuzz build; here each cut is a separate heap copy) */
	for (size_t cut = 0; cut < e.len; cut++) {
		uint8_t *c = malloc(cut ? cut : 1);
		memcpy(c, e.b, cut);
		if (!it_usdt_parse(c, cut, &l, &none, err, sizeof(err)))
			ok++;
		it_usdt_list_free(&l);
		free(c);
	}
	ASSERT_EQ(ok, 0, "no cut of the file parses (the section table is at its end)");
	ASSERT_EQ(it_usdt_parse((const uint8_t *)"#!/bin/sh\n", 10, &l, &none, err, sizeof(err)), -1,
		  "a script");
	ASSERT_STREQ(err, "not an ELF file", "its reason");

	/* a note whose size runs past its section */
	make_elf(&e);
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	memcpy(&eh, e.b, sizeof(eh));
	memcpy(&sh, e.b + eh.e_shoff + 2 * sizeof(sh), sizeof(sh));
	Elf64_Nhdr nh;
	memcpy(&nh, e.b + sh.sh_offset, sizeof(nh));
	nh.n_descsz = 4000;
	memcpy(e.b + sh.sh_offset, &nh, sizeof(nh));
	ASSERT_EQ(it_usdt_parse(e.b, e.len, &l, &none, err, sizeof(err)), -1, "oversized note");
	ASSERT_TRUE(strstr(err, "runs past") != NULL, "its reason");

	/* no .note.stapsdt: renamed away */
	make_elf(&e);
	memcpy(&eh, e.b, sizeof(eh));
	memcpy(&sh, e.b + eh.e_shoff + sizeof(sh), sizeof(sh));
	memcpy(e.b + sh.sh_offset + 11, ".note.other\0", 12);
	ASSERT_EQ(it_usdt_parse(e.b, e.len, &l, &none, err, sizeof(err)), 0, "no notes: not an error");
	ASSERT_TRUE(none && l.n == 0, "told as none");
}
