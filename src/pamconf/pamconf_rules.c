/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which libpam this is, told from the loaded library at run time, and how
 * that one reads its configuration (struct pamconf_rules).
 *
 * Linux-PAM exports the same symbols from 1.4 to 1.7, so the version is
 * told from the library's own bytes: its read-only segments hold the texts
 * of its log messages, and 1.6.0 is where "maximum level of inclusions
 * reached" came in, with the include limit it reports and the getline()
 * reader of lines of any length.  Debian's libpam holds the keyword
 * "@include" of its patch.  OpenPAM is told by its own exported functions.
 * The bytes are read where the dynamic linker mapped them
 * (dl_iterate_phdr), nothing is opened; without dl_iterate_phdr the rules
 * are those of the library the tree was built against (CMake reads the
 * same texts from its file).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(PWRAP_HAVE_DL_ITERATE_PHDR)
#include <link.h>
#endif

#include "pamconf.h"

/* What CMake found in the libpam built against (the fallback). */
#ifndef PWRAP_BUILD_LINUX_PAM_VERSION
#define PWRAP_BUILD_LINUX_PAM_VERSION 105
#endif
#ifndef PWRAP_BUILD_AT_INCLUDE
#define PWRAP_BUILD_AT_INCLUDE 0
#endif

/* Linux-PAM's PAM_SUBSTACK_MAX_LEVEL (every version). */
#define LINUX_PAM_MAX_LEVEL 16

void pamconf_rules_linux(struct pamconf_rules *r, unsigned version,
			 bool at_include)
{
	memset(r, 0, sizeof(*r));
	r->impl = PAMCONF_LINUX_PAM;
	r->version = version == 0 ? 107 : version;
	r->at_include = at_include;
	r->substack_max = LINUX_PAM_MAX_LEVEL;
	if (r->version < 106) {
		r->line_buf = 1024;
		r->include_max = 0;	/* it recurses until it crashes */
		r->label = "Linux-PAM 1.5";
	} else {
		r->line_buf = 0;
		/* includes and substacks count alike from 1.6 */
		r->include_max = LINUX_PAM_MAX_LEVEL;
		r->label = "Linux-PAM 1.6";
	}
}

void pamconf_rules_openpam(struct pamconf_rules *r, unsigned lib_maj)
{
	memset(r, 0, sizeof(*r));
	r->impl = PAMCONF_OPENPAM;
	r->lib_maj = lib_maj;
	r->label = "OpenPAM";
}

#if defined(PWRAP_HAVE_DL_ITERATE_PHDR)
struct scan {
	const void *addr;	/* inside the library */
	const char *const *needles;
	size_t n;
	bool *found;
	bool matched;		/* the object was found */
};

/* Searches the read-only segments of the object that holds s->addr for
 * each needle (a NUL-terminated text, NULs on both sides in the file). */
static int scan_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct scan *s = data;
	uintptr_t a = (uintptr_t)s->addr;
	bool mine = false;

	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum && !mine; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		mine = ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz;
	}
	if (!mine) {
		return 0;
	}
	s->matched = true;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *lo = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = lo + ph->p_filesz;

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_R) == 0 ||
		    (ph->p_flags & PF_W) != 0) {
			continue;
		}
		for (size_t k = 0; k < s->n; k++) {
			/* the text as a whole string: NULs on both sides */
			size_t nl = strlen(s->needles[k]) + 1;
			const char *p = lo;

			while (!s->found[k] && p < end &&
			       (p = memmem(p, (size_t)(end - p), s->needles[k],
					   nl)) != NULL) {
				s->found[k] = p > lo && p[-1] == '\0';
				p++;
			}
		}
	}
	return 1;
}
#endif

/* N of a path whose name starts "libpam.so.N", or 0. */
static unsigned major_of(const char *path)
{
	const char *name = strrchr(path, '/');
	unsigned n = 0;

	name = name != NULL ? name + 1 : path;
	if (strncmp(name, "libpam.so.", 10) != 0) {
		return 0;
	}
	for (name += 10; *name >= '0' && *name <= '9' && n < 1000; name++) {
		n = n * 10 + (unsigned)(*name - '0');
	}
	return n;
}

void pamconf_rules_detect(struct pamconf_rules *r, void *handle,
			  const void *addr)
{
	static const char *const needles[] = {
		"maximum level of inclusions reached",	/* 1.6 on */
		"@include",				/* Debian's patch */
	};
	bool found[2] = { false, false };
	bool known = false;

	if (handle != NULL && dlsym(handle, "openpam_readword") != NULL) {
		Dl_info info;
		unsigned maj = 0;

		/* the version OpenPAM puts on module names: its own
		 * SONAME's, libpam.so.N (the file's, when loaded by a
		 * link of another name) */
		if (addr != NULL && dladdr(addr, &info) != 0 &&
		    info.dli_fname != NULL) {
			char *real = realpath(info.dli_fname, NULL);

			maj = major_of(info.dli_fname);
			if (maj == 0 && real != NULL) {
				maj = major_of(real);
			}
			free(real);
		}
		pamconf_rules_openpam(r, maj);
		return;
	}
#if defined(PWRAP_HAVE_DL_ITERATE_PHDR)
	if (addr != NULL) {
		struct scan s = { addr, needles, 2, found, false };

		dl_iterate_phdr(scan_object, &s);
		known = s.matched;
	}
#endif
	if (!known) {
		found[0] = PWRAP_BUILD_LINUX_PAM_VERSION >= 106;
		found[1] = PWRAP_BUILD_AT_INCLUDE;
	}
	pamconf_rules_linux(r, found[0] ? 106 : 105, found[1]);
}

#ifndef PWRAP_LIBPAM_SONAME
#define PWRAP_LIBPAM_SONAME "libpam.so.0"
#endif

void pamconf_rules_linked(struct pamconf_rules *r)
{
	/* by its name, not by pam_start: under the wrapper that symbol is
	 * the wrapper's */
	void *handle = dlopen(PWRAP_LIBPAM_SONAME, RTLD_LAZY | RTLD_NOLOAD);

#if defined(PWRAP_OPENPAM)
	if (handle == NULL) {
		/* not loaded (the launcher): the one built against */
		pamconf_rules_openpam(r, major_of(PWRAP_LIBPAM_SONAME));
		return;
	}
#endif
	pamconf_rules_detect(r, handle,
			     handle != NULL ? dlsym(handle, "pam_start") : NULL);
	if (handle != NULL) {
		dlclose(handle);	/* only the reference NOLOAD took */
	}
}
