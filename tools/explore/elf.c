/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: what libpam's dlopen() would make of a module file,
 * told from the files alone.  The explorer never loads a module of the
 * stack it explores (it could do anything in our process), nor does it
 * start a process that would (a dlopen() in a child runs the module's and
 * its libraries' constructors; the dynamic linker's own tracing mode runs
 * none, but it is glibc's, treats the module as a program of its own and
 * does not see the libraries this process has loaded).  So the files are
 * read as the dynamic linker reads them:
 *
 *   the module is an ELF shared object of this machine's class and
 *   machine; every DT_NEEDED library of it and of what it needs resolves:
 *   one this process has loaded already (libpam and its libraries: the
 *   application has them too), by its DT_SONAME; a name with a '/' as it
 *   is; else, in the dynamic linker's order, the DT_RPATH of the needing
 *   object and of those that needed it (of each that has no DT_RUNPATH),
 *   LD_LIBRARY_PATH, the needing object's DT_RUNPATH, the cache
 *   /etc/ld.so.cache and the system directories (both skipped for an
 *   object linked -z nodeflib), taking the first file of our class and
 *   machine; and every symbol version an object needs (DT_VERNEED, but
 *   weak ones) is defined by the library that provides it (DT_VERDEF).
 *
 * Not told: symbols missing from a library that is found (libpam's
 * RTLD_NOW would fail on one; that needs every library's symbol tables),
 * the application's own libraries and run paths, and $LIB or $PLATFORM in
 * a run path (a library found only through such a directory is taken as
 * found).  Then whether the module defines the pam_sm_ function of a
 * group, from its dynamic symbol table (libpam's dlsym()).
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_buf.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_FILE "/etc/ld.so.cache"
#define MAX_OBJS 512	/* libraries in a module's closure */

/* A mapped ELF file of this machine's class and machine. */
struct elf {
	const unsigned char *m;
	size_t len;
	bool is64;
};

/* What its dynamic section says (string offsets into strtab). */
struct dyn {
	uint64_t strtab, strsz;	/* file offset, size */
	uint64_t soname, rpath, runpath;	/* (uint64_t)-1: none */
	uint64_t needed[64];
	size_t nneeded;
	uint64_t verneed, verdef;	/* file offsets, or 0 */
	size_t nverneed, nverdef;
	bool nodeflib;
};

/* An object of a module's closure. */
struct obj {
	char *path;
	struct elf e;
	struct dyn d;
	int loader;		/* the object that needed it, or -1 */
	int *dep;		/* per needed name: the object that provides it */
};

/* ---- reading ELF files ------------------------------------------------------ */

/* The class and machine of this program, from its own ELF header. */
static int self_ident(unsigned char *cls, unsigned *machine)
{
	Dl_info info;
	const unsigned char *h;

	if (dladdr((void *)self_ident, &info) == 0 || info.dli_fbase == NULL) {
		return -1;
	}
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

/* Maps path when it is a shared object of our class and machine: 0, or -1
 * (no such file, not one). */
static int elf_open(const char *path, struct elf *e)
{
	unsigned char cls;
	unsigned machine, type, mach;
	struct stat st;
	void *m;
	int fd;

	memset(e, 0, sizeof(*e));
	if (self_ident(&cls, &machine) != 0) {
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
		      0)) == MAP_FAILED) {
		close(fd);
		return -1;
	}
	close(fd);
	e->m = m;
	e->len = (size_t)st.st_size;
	e->is64 = cls == ELFCLASS64;
	if (e->len < (e->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) ||
	    memcmp(e->m, ELFMAG, SELFMAG) != 0 || e->m[EI_CLASS] != cls) {
		goto no;
	}
	type = e->is64 ? ((const Elf64_Ehdr *)(const void *)e->m)->e_type
		       : ((const Elf32_Ehdr *)(const void *)e->m)->e_type;
	mach = e->is64 ? ((const Elf64_Ehdr *)(const void *)e->m)->e_machine
		       : ((const Elf32_Ehdr *)(const void *)e->m)->e_machine;
	if (type == ET_DYN && mach == machine) {
		return 0;
	}
no:
	munmap((void *)e->m, e->len);
	memset(e, 0, sizeof(*e));
	return -1;
}

static void elf_close(struct elf *e)
{
	if (e->m != NULL) {
		munmap((void *)e->m, e->len);
	}
	memset(e, 0, sizeof(*e));
}

/* A program header, whichever the class. */
struct phdr {
	uint32_t type;
	uint64_t off, vaddr, filesz;
};

/* Program header i, or false. */
static bool get_phdr(const struct elf *e, size_t i, struct phdr *p)
{
	uint64_t off;
	size_t n, sz;

	if (e->is64) {
		const Elf64_Ehdr *h = (const void *)e->m;

		off = h->e_phoff, n = h->e_phnum, sz = h->e_phentsize;
	} else {
		const Elf32_Ehdr *h = (const void *)e->m;

		off = h->e_phoff, n = h->e_phnum, sz = h->e_phentsize;
	}
	if (i >= n ||
	    sz != (e->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
	    !inside(e->len, off + i * sz, sz)) {
		return false;
	}
	if (e->is64) {
		const Elf64_Phdr *h = (const void *)(e->m + off + i * sz);

		*p = (struct phdr){ h->p_type, h->p_offset, h->p_vaddr, h->p_filesz };
	} else {
		const Elf32_Phdr *h = (const void *)(e->m + off + i * sz);

		*p = (struct phdr){ h->p_type, h->p_offset, h->p_vaddr, h->p_filesz };
	}
	return true;
}

/* The file offset of address va (through the PT_LOAD segments), or 0. */
static uint64_t offset_of(const struct elf *e, uint64_t va)
{
	struct phdr p;

	for (size_t i = 0; get_phdr(e, i, &p); i++) {
		if (p.type == PT_LOAD && va >= p.vaddr &&
		    va - p.vaddr < p.filesz) {
			return p.off + (va - p.vaddr);
		}
	}
	return 0;
}

/* One entry of the dynamic section at off. */
static void get_dyn(const struct elf *e, uint64_t off, int64_t *tag,
		    uint64_t *val)
{
	if (e->is64) {
		const Elf64_Dyn *d = (const void *)(e->m + off);

		*tag = d->d_tag, *val = d->d_un.d_val;
	} else {
		const Elf32_Dyn *d = (const void *)(e->m + off);

		*tag = d->d_tag, *val = d->d_un.d_val;
	}
}

/* Reads the dynamic section: 0, or -1 (none, or it does not hold). */
static int read_dyn(const struct elf *e, struct dyn *d)
{
	size_t esz = e->is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
	uint64_t strva = 0, vnva = 0, vdva = 0;
	struct phdr p;
	bool found = false;

	memset(d, 0, sizeof(*d));
	d->soname = d->rpath = d->runpath = (uint64_t)-1;
	for (size_t i = 0; !found && get_phdr(e, i, &p); i++) {
		found = p.type == PT_DYNAMIC && inside(e->len, p.off, p.filesz);
	}
	if (!found) {
		return -1;
	}
	for (uint64_t off = p.off; off + esz <= p.off + p.filesz; off += esz) {
		int64_t tag;
		uint64_t val;

		get_dyn(e, off, &tag, &val);
		if (tag == DT_NULL) {
			break;
		}
		switch (tag) {
		case DT_NEEDED:
			if (d->nneeded <
			    sizeof(d->needed) / sizeof(d->needed[0])) {
				d->needed[d->nneeded++] = val;
			}
			break;
		case DT_STRTAB: strva = val; break;
		case DT_STRSZ: d->strsz = val; break;
		case DT_SONAME: d->soname = val; break;
		case DT_RPATH: d->rpath = val; break;
		case DT_RUNPATH: d->runpath = val; break;
		case DT_VERNEED: vnva = val; break;
		case DT_VERNEEDNUM: d->nverneed = (size_t)val; break;
		case DT_VERDEF: vdva = val; break;
		case DT_VERDEFNUM: d->nverdef = (size_t)val; break;
		case DT_FLAGS_1: d->nodeflib = (val & DF_1_NODEFLIB) != 0; break;
		default: break;
		}
	}
	d->strtab = offset_of(e, strva);
	d->verneed = vnva != 0 ? offset_of(e, vnva) : 0;
	d->verdef = vdva != 0 ? offset_of(e, vdva) : 0;
	return d->strtab != 0 && inside(e->len, d->strtab, d->strsz) ? 0 : -1;
}

/* The string at offset s of the dynamic string table, or NULL. */
static const char *dstr(const struct elf *e, const struct dyn *d, uint64_t s)
{
	const char *p;

	if (s >= d->strsz) {
		return NULL;
	}
	p = (const char *)e->m + d->strtab + s;
	return memchr(p, '\0', (size_t)(d->strsz - s)) != NULL ? p : NULL;
}

/* ---- the pam_sm_ functions ------------------------------------------------ */

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

/* The bits (per enum pwrap_sm) of the functions symbol table sym (strings
 * in str) defines. */
static unsigned defined(const struct elf *e, const struct shdr *sym,
			const struct shdr *str)
{
	size_t esz = e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	unsigned fns = 0;

	for (uint64_t k = 0; k + 1 <= sym->size / esz; k++) {
		const unsigned char *p = e->m + sym->off + k * esz;
		uint32_t name = e->is64 ? ((const Elf64_Sym *)(const void *)p)->st_name
					: ((const Elf32_Sym *)(const void *)p)->st_name;
		uint16_t shndx = e->is64 ? ((const Elf64_Sym *)(const void *)p)->st_shndx
					 : ((const Elf32_Sym *)(const void *)p)->st_shndx;
		const char *nm = (const char *)e->m + str->off + name;

		if (shndx == SHN_UNDEF || name >= str->size ||
		    memchr(nm, '\0', (size_t)(str->size - name)) == NULL ||
		    strncmp(nm, "pam_sm_", 7) != 0) {
			continue;
		}
		for (int sm = 0; sm < PWRAP_SM_COUNT; sm++) {
			if (strcmp(nm, pwrap_sm_name((enum pwrap_sm)sm)) == 0) {
				fns |= 1u << sm;
			}
		}
	}
	return fns;
}

/* The pam_sm_ functions the module defines (its .dynsym, as dlsym() sees
 * it). */
static unsigned functions(const struct elf *e)
{
	uint64_t shoff;
	unsigned shentsize, shnum;
	struct shdr sh, st;

	if (e->is64) {
		const Elf64_Ehdr *h = (const void *)e->m;

		shoff = h->e_shoff, shentsize = h->e_shentsize, shnum = h->e_shnum;
	} else {
		const Elf32_Ehdr *h = (const void *)e->m;

		shoff = h->e_shoff, shentsize = h->e_shentsize, shnum = h->e_shnum;
	}
	if (shentsize != (e->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) ||
	    !inside(e->len, shoff, (uint64_t)shnum * shentsize)) {
		return 0;
	}
	for (unsigned i = 0; i < shnum; i++) {
		get_shdr(e->m + shoff + (uint64_t)i * shentsize, e->is64, &sh);
		if (sh.type != SHT_DYNSYM || sh.link >= shnum ||
		    sh.entsize !=
			    (e->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)) ||
		    !inside(e->len, sh.off, sh.size)) {
			continue;
		}
		get_shdr(e->m + shoff + (uint64_t)sh.link * shentsize, e->is64, &st);
		if (inside(e->len, st.off, st.size)) {
			return defined(e, &sh, &st);
		}
	}
	return 0;
}

/* ---- the closure ------------------------------------------------------------- */

struct closure {
	struct obj v[MAX_OBJS];
	size_t n;
	size_t nloaded;		/* v[0..nloaded): this process's objects */
	struct pwrap_buf why;	/* the first reason it would not load */
	bool untold;		/* a run path with $LIB or $PLATFORM */
};

/* Adds the object at path (mapped and read): its index, or -1. */
static int add_obj(struct closure *c, const char *path, int loader)
{
	struct obj *o;

	if (c->n == MAX_OBJS) {
		return -1;
	}
	o = &c->v[c->n];
	memset(o, 0, sizeof(*o));
	if (elf_open(path, &o->e) != 0) {
		return -1;
	}
	if (read_dyn(&o->e, &o->d) != 0 ||
	    (o->path = strdup(path)) == NULL ||
	    (o->dep = calloc(o->d.nneeded + 1, sizeof(*o->dep))) == NULL) {
		free(o->path);
		elf_close(&o->e);
		return -1;
	}
	o->loader = loader;
	return (int)c->n++;
}

static int add_loaded(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct closure *c = ctx;

	(void)size;
	/* (the program itself has no name here; the vdso no file) */
	if (info->dlpi_name != NULL && info->dlpi_name[0] == '/') {
		(void)add_obj(c, info->dlpi_name, -1);
	}
	return 0;
}

/* The object already in the closure that name (a DT_NEEDED) means, or
 * -1: by its DT_SONAME, or by its path for a name with a '/'. */
static int known(const struct closure *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct obj *o = &c->v[i];
		const char *so = o->d.soname != (uint64_t)-1
					 ? dstr(&o->e, &o->d, o->d.soname) : NULL;

		if ((so != NULL && strcmp(so, name) == 0) ||
		    strcmp(o->path, name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* Tries name in each directory of the colon-separated list (of object
 * o: $ORIGIN is its directory): the new object's index, or -1. */
static int try_dirs(struct closure *c, const char *list, const struct obj *o,
		    const char *name, int loader)
{
	const char *p = list;

	while (p != NULL && *p != '\0') {
		size_t n = strcspn(p, ":");
		struct pwrap_buf b = { 0 };
		char *dir = strndup(p, n);
		int k = -1;

		if (dir != NULL && (strstr(dir, "$LIB") != NULL ||
				    strstr(dir, "${LIB}") != NULL ||
				    strstr(dir, "$PLATFORM") != NULL ||
				    strstr(dir, "${PLATFORM}") != NULL)) {
			c->untold = true;
		} else if (dir != NULL) {
			const char *slash = o != NULL ? strrchr(o->path, '/') : NULL;
			const char *tok = strstr(dir, "${ORIGIN}") != NULL ? "${ORIGIN}"
								       : "$ORIGIN";
			char *at = strstr(dir, tok);

			if (at != NULL && slash != NULL) {
				pwrap_buf_add(&b, dir, (size_t)(at - dir));
				pwrap_buf_add(&b, o->path, (size_t)(slash - o->path));
				pwrap_buf_str(&b, at + strlen(tok));
			} else {
				pwrap_buf_str(&b, dir);
			}
			pwrap_buf_fmt(&b, "%s%s", n > 0 ? "/" : "", name);
			if (!b.failed) {
				k = add_obj(c, b.p, loader);
			}
		}
		pwrap_buf_free(&b);
		free(dir);
		if (k >= 0) {
			return k;
		}
		p += n + (p[n] == ':');
	}
	return -1;
}

/* name in /etc/ld.so.cache (glibc's format 1.1, alone or after the old
 * one): the new object's index, or -1. */
static int try_cache(struct closure *c, const char *name, int loader)
{
	static const char magic_old[] = "ld.so-1.7.0", magic[] = "glibc-ld.so.cache1.1";
	struct elf f;
	uint64_t base = 0, n;
	int k = -1;

	memset(&f, 0, sizeof(f));
	{
		struct stat st;
		int fd = open(CACHE_FILE, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		void *m;

		if (fd < 0) {
			return -1;
		}
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 48 ||
		    (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			      fd, 0)) == MAP_FAILED) {
			close(fd);
			return -1;
		}
		close(fd);
		f.m = m;
		f.len = (size_t)st.st_size;
	}
	if (memcmp(f.m, magic_old, sizeof(magic_old) - 1) == 0) {
		uint32_t old;

		memcpy(&old, f.m + 12, sizeof(old));
		base = (16 + (uint64_t)old * 12 + 7) & ~(uint64_t)7;
	}
	if (!inside(f.len, base, 48) ||
	    memcmp(f.m + base, magic, sizeof(magic) - 1) != 0) {
		goto out;
	}
	{
		uint32_t nlibs;

		memcpy(&nlibs, f.m + base + 20, sizeof(nlibs));
		n = nlibs;
	}
	for (uint64_t i = 0; i < n && k < 0; i++) {
		uint64_t at = base + 48 + i * 24;
		uint32_t key, value;

		if (!inside(f.len, at, 24)) {
			break;
		}
		memcpy(&key, f.m + at + 4, sizeof(key));
		memcpy(&value, f.m + at + 8, sizeof(value));
		if (key >= f.len || value >= f.len ||
		    memchr(f.m + key, '\0', f.len - key) == NULL ||
		    memchr(f.m + value, '\0', f.len - value) == NULL ||
		    strcmp((const char *)f.m + key, name) != 0) {
			continue;
		}
		k = add_obj(c, (const char *)f.m + value, loader);
	}
out:
	munmap((void *)f.m, f.len);
	return k;
}

/* The system directories: that of this process's C library (the
 * multiarch or lib64 one, and its /usr twin), then /lib and /usr/lib. */
static int try_system(struct closure *c, const char *name, int loader)
{
	struct pwrap_buf b = { 0 };
	int k = -1;

	for (size_t i = 0; i < c->nloaded && b.p == NULL; i++) {
		const struct obj *o = &c->v[i];
		const char *so = o->d.soname != (uint64_t)-1
					 ? dstr(&o->e, &o->d, o->d.soname) : NULL;
		const char *slash = strrchr(o->path, '/');

		if (so != NULL && strncmp(so, "libc.so", 7) == 0 && slash != NULL) {
			pwrap_buf_add(&b, o->path, (size_t)(slash - o->path));
			if (strncmp(o->path, "/lib", 4) == 0) {
				pwrap_buf_str(&b, ":/usr");
				pwrap_buf_add(&b, o->path, (size_t)(slash - o->path));
			}
			pwrap_buf_str(&b, ":");
		}
	}
	pwrap_buf_str(&b, "/lib:/usr/lib");
	if (!b.failed) {
		k = try_dirs(c, b.p, NULL, name, loader);
	}
	pwrap_buf_free(&b);
	return k;
}

/* Finds the library name that object i needs, as the dynamic linker
 * looks for it: its index, or -1. */
static int find_lib(struct closure *c, int i, const char *name)
{
	const struct obj *o = &c->v[i];
	const char *env = getenv("LD_LIBRARY_PATH");
	int k = known(c, name);

	if (k >= 0) {
		return k;
	}
	if (strchr(name, '/') != NULL) {
		return add_obj(c, name, i);
	}
	if (o->d.runpath == (uint64_t)-1) {
		for (int l = i; l >= 0 && k < 0; l = c->v[l].loader) {
			const struct obj *x = &c->v[l];

			if (x->d.runpath == (uint64_t)-1 &&
			    x->d.rpath != (uint64_t)-1) {
				k = try_dirs(c, dstr(&x->e, &x->d, x->d.rpath), x,
					     name, i);
			}
		}
	}
	if (k < 0 && env != NULL) {
		k = try_dirs(c, env, NULL, name, i);
	}
	if (k < 0 && o->d.runpath != (uint64_t)-1) {
		k = try_dirs(c, dstr(&o->e, &o->d, o->d.runpath), o, name, i);
	}
	if (k < 0 && !o->d.nodeflib) {
		k = try_cache(c, name, i);
	}
	if (k < 0 && !o->d.nodeflib) {
		k = try_system(c, name, i);
	}
	return k;
}

/* Whether object p defines version ver (or has no versions: then the
 * dynamic linker only warns). */
static bool defines(const struct obj *p, const char *ver)
{
	uint64_t at = p->d.verdef;

	if (at == 0) {
		return true;
	}
	for (size_t i = 0; i < p->d.nverdef && inside(p->e.len, at, sizeof(Elf64_Verdef)); i++) {
		Elf64_Verdef vd;
		Elf64_Verdaux va;

		memcpy(&vd, p->e.m + at, sizeof(vd));
		if (vd.vd_cnt > 0 && inside(p->e.len, at + vd.vd_aux, sizeof(va))) {
			const char *n;

			memcpy(&va, p->e.m + at + vd.vd_aux, sizeof(va));
			n = dstr(&p->e, &p->d, va.vda_name);
			if (n != NULL && strcmp(n, ver) == 0) {
				return true;
			}
		}
		if (vd.vd_next == 0) {
			break;
		}
		at += vd.vd_next;
	}
	return false;
}

/* The versions object i needs, each from the library that provides it:
 * 0, or -1 with c->why. */
static int check_versions(struct closure *c, size_t i)
{
	const struct obj *o = &c->v[i];
	uint64_t at = o->d.verneed;

	for (size_t k = 0; at != 0 && k < o->d.nverneed &&
			   inside(o->e.len, at, sizeof(Elf64_Verneed)); k++) {
		Elf64_Verneed vn;
		const char *file;
		int p;
		uint64_t ax;

		memcpy(&vn, o->e.m + at, sizeof(vn));
		file = dstr(&o->e, &o->d, vn.vn_file);
		p = file != NULL ? known(c, file) : -1;
		ax = at + vn.vn_aux;
		for (size_t j = 0; p >= 0 && j < vn.vn_cnt &&
				   inside(o->e.len, ax, sizeof(Elf64_Vernaux)); j++) {
			Elf64_Vernaux va;
			const char *ver;

			memcpy(&va, o->e.m + ax, sizeof(va));
			ver = dstr(&o->e, &o->d, va.vna_name);
			if (ver != NULL && !(va.vna_flags & VER_FLG_WEAK) &&
			    !defines(&c->v[p], ver)) {
				pwrap_buf_fmt(&c->why, "%s needs version %s of %s, "
					      "which %s does not define", o->path,
					      ver, file, c->v[p].path);
				return -1;
			}
			if (va.vna_next == 0) {
				break;
			}
			ax += va.vna_next;
		}
		if (vn.vn_next == 0) {
			break;
		}
		at += vn.vn_next;
	}
	return 0;
}

/* Resolves the libraries of v[first..] and what they need, breadth
 * first: 0, or -1 with c->why. */
static int resolve(struct closure *c, size_t first)
{
	for (size_t i = first; i < c->n; i++) {
		for (size_t k = 0; k < c->v[i].d.nneeded; k++) {
			const struct obj *o = &c->v[i];
			const char *name = dstr(&o->e, &o->d, o->d.needed[k]);
			int p = name != NULL ? find_lib(c, (int)i, name) : -1;

			if (p < 0 && c->untold) {
				return 0;	/* cannot tell: taken as found */
			}
			if (p < 0) {
				pwrap_buf_fmt(&c->why, "%s needs %s, which the "
					      "dynamic linker does not find",
					      c->v[i].path, name != NULL ? name : "?");
				return -1;
			}
			c->v[i].dep[k] = p;
		}
	}
	for (size_t i = first; i < c->n; i++) {
		if (check_versions(c, i) != 0) {
			return -1;
		}
	}
	return 0;
}

int xp_module_inspect(const char *path, unsigned *fns, char **why)
{
	struct closure *c = calloc(1, sizeof(*c));
	int rc = -1, m;

	*fns = 0;
	*why = NULL;
	if (c == NULL) {
		return -1;
	}
	dl_iterate_phdr(add_loaded, c);
	c->nloaded = c->n;
	m = add_obj(c, path, -1);
	if (m < 0) {
		pwrap_buf_str(&c->why, "not a shared object of this machine");
	} else if (resolve(c, (size_t)m) == 0) {
		*fns = functions(&c->v[m].e);
		rc = 0;
	}
	if (rc != 0) {
		*why = pwrap_buf_take(&c->why);
	}
	pwrap_buf_free(&c->why);
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].dep);
		elf_close(&c->v[i].e);
	}
	free(c);
	return rc;
}
