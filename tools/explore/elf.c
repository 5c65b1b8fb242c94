/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: whether a PAM module defines a function, read from the
 * dynamic symbol table of its file.  The explorer never loads a module of
 * the stack it explores (the module could do anything in our process), so
 * it answers from the ELF file: libpam would dlopen() it (and fail on a
 * missing file or an object of another machine) and look the pam_sm_
 * function up with dlsym() (PAM_MODULE_UNKNOWN without it).  A file that
 * dlopen() would still refuse for another reason (a missing library it
 * needs) is taken as loadable.
 */
#define _GNU_SOURCE
#include "explore.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The class and machine of this program, from its own ELF header. */
static int self_ident(unsigned char *cls, unsigned *machine)
{
	Dl_info info;
	const unsigned char *h;

	if (dladdr((void *)self_ident, &info) == 0 || info.dli_fbase == NULL)
		return -1;
	h = info.dli_fbase;
	*cls = h[EI_CLASS];
	*machine = h[EI_CLASS] == ELFCLASS64 ?
		((const Elf64_Ehdr *)(const void *)h)->e_machine :
		((const Elf32_Ehdr *)(const void *)h)->e_machine;
	return 0;
}

/* Whether [off, off + n) lies inside a file of size len. */
static bool inside(size_t len, uint64_t off, uint64_t n)
{
	return off <= len && n <= len - off;
}

/* A section header, whichever the class. */
struct shdr {
	uint32_t type, link;
	uint64_t off, size, entsize;
};

static void get_shdr(const unsigned char *p, bool is64, struct shdr *s)
{
	if (is64) {
		const Elf64_Shdr *h = (const void *)p;

		*s = (struct shdr){ h->sh_type, h->sh_link, h->sh_offset,
				    h->sh_size, h->sh_entsize };
	} else {
		const Elf32_Shdr *h = (const void *)p;

		*s = (struct shdr){ h->sh_type, h->sh_link, h->sh_offset,
				    h->sh_size, h->sh_entsize };
	}
}

/* Whether the symbol table sym (strings in str) defines fn. */
static int find(const unsigned char *m, bool is64, const struct shdr *sym,
		const struct shdr *str, const char *fn)
{
	size_t esz = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	size_t want = strlen(fn);

	for (uint64_t k = 0; k + 1 <= sym->size / esz; k++) {
		const unsigned char *p = m + sym->off + k * esz;
		uint32_t name = is64 ? ((const Elf64_Sym *)(const void *)p)->st_name
				     : ((const Elf32_Sym *)(const void *)p)->st_name;
		uint16_t shndx = is64 ? ((const Elf64_Sym *)(const void *)p)->st_shndx
				      : ((const Elf32_Sym *)(const void *)p)->st_shndx;
		const char *nm = (const char *)m + str->off + name;

		if (shndx != SHN_UNDEF && name < str->size &&
		    strnlen(nm, str->size - name) == want &&
		    memcmp(nm, fn, want) == 0)
			return 1;
	}
	return 0;
}

static int lookup(const unsigned char *m, size_t len, const char *fn)
{
	unsigned char cls;
	unsigned machine;
	bool is64;
	uint64_t shoff;
	unsigned type, mach, shentsize, shnum;
	struct shdr sh, st;

	if (len < EI_NIDENT || memcmp(m, ELFMAG, SELFMAG) != 0 ||
	    self_ident(&cls, &machine) != 0 || m[EI_CLASS] != cls)
		return -1;
	is64 = cls == ELFCLASS64;
	if (len < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return -1;
	if (is64) {
		const Elf64_Ehdr *e = (const void *)m;

		type = e->e_type, mach = e->e_machine, shoff = e->e_shoff;
		shentsize = e->e_shentsize, shnum = e->e_shnum;
	} else {
		const Elf32_Ehdr *e = (const void *)m;

		type = e->e_type, mach = e->e_machine, shoff = e->e_shoff;
		shentsize = e->e_shentsize, shnum = e->e_shnum;
	}
	if (type != ET_DYN || mach != machine ||
	    shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
	    !inside(len, shoff, (uint64_t)shnum * shentsize))
		return -1;
	for (unsigned i = 0; i < shnum; i++) {
		get_shdr(m + shoff + (uint64_t)i * shentsize, is64, &sh);
		if (sh.type != SHT_DYNSYM || sh.link >= shnum ||
		    sh.entsize != (is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)) ||
		    !inside(len, sh.off, sh.size))
			continue;
		get_shdr(m + shoff + (uint64_t)sh.link * shentsize, is64, &st);
		if (inside(len, st.off, st.size))
			return find(m, is64, &sh, &st, fn);
	}
	return 0;
}

int xp_module_has(const char *path, const char *fn)
{
	struct stat st;
	void *m;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	rc = lookup(m, (size_t)st.st_size, fn);
	munmap(m, (size_t)st.st_size);
	return rc;
}
