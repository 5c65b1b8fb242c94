/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to this project (libpamtest, pypamtest, pamtest(1)); not installed.
 *
 * A test that sets PAM_WRAPPER=1 and PAM_WRAPPER_SERVICE_DIR but forgot to
 * preload libpam_wrapper.so would otherwise run against the system's
 * /etc/pam.d: the test then passes or fails for reasons that have nothing to
 * do with its service files (and, as root, touches real accounts).  The
 * wrapper exports pam_wrapper_enabled(); when the process asks for the
 * wrapper and that symbol is not in it, callers refuse to start PAM and
 * print PAMTEST_PRELOAD_MISSING_MSG.  Without PAM_WRAPPER=1 nothing changes:
 * plain PAM use stays possible.
 *
 * Includers define _GNU_SOURCE before any system header (RTLD_DEFAULT).
 */
#ifndef PAMTEST_PRELOAD_H
#define PAMTEST_PRELOAD_H

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>

/* One line, without the program's prefix and without a newline. */
#define PAMTEST_PRELOAD_MISSING_MSG \
	"PAM_WRAPPER=1 and PAM_WRAPPER_SERVICE_DIR are set, but " \
	"libpam_wrapper.so is not loaded in this process: start it with " \
	"LD_PRELOAD=/path/to/libpam_wrapper.so (without the wrapper, " \
	"pam_start() would read the system's /etc/pam.d)"

/* True when PAM_WRAPPER=1 and a service dir are set but the wrapper is absent. */
static inline bool pamtest_preload_missing(void)
{
	const char *enabled = getenv("PAM_WRAPPER");

	if (enabled == NULL || enabled[0] != '1' ||
	    getenv("PAM_WRAPPER_SERVICE_DIR") == NULL) {
		return false;
	}
	return dlsym(RTLD_DEFAULT, "pam_wrapper_enabled") == NULL;
}

#endif /* PAMTEST_PRELOAD_H */
