/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A preload library that defines fopen and calls the C library's own
 * (through a handle of libc, not RTLD_NEXT), as some wrappers do.  Listed
 * before libpam_wrapper.so in LD_PRELOAD, it keeps libpam's fopen calls from
 * reaching the wrapper; test_legacy checks that a legacy transaction is then
 * refused rather than run on the system's configuration.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

__attribute__((visibility("default"))) FILE *fopen(const char *path,
						   const char *mode)
{
	static FILE *(*libc_fopen)(const char *, const char *);

	if (libc_fopen == NULL) {
		void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

		if (h != NULL) {
			*(void **)&libc_fopen = dlsym(h, "fopen");
		}
	}
	if (libc_fopen == NULL) {
		errno = ENOSYS;
		return NULL;
	}
	return libc_fopen(path, mode);
}
