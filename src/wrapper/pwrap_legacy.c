/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The legacy path, for a libpam without pam_start_confdir (Linux-PAM before
 * 1.4, OpenPAM), or every libpam in a build with PAM_WRAPPER_FORCE_LEGACY.
 * Such a libpam opens its configuration under fixed names: <dir>/pam.d/<name>
 * (/etc/pam.d, /usr/lib/pam.d, OpenPAM's /usr/local/etc/pam.d) and
 * <dir>/pam.conf.  All of them do it with fopen(path, "r") from libpam's own
 * code, so we interpose fopen (and glibc's fopen64): in a wrapped process
 * that started its transaction on this path, a call made from inside libpam
 * for a file of a pam.d directory opens the prepared conf/<name> instead
 * (through a descriptor of conf/, checked to be the directory we made), and
 * one for a pam.conf finds nothing.  Any other call (another file, a
 * caller outside libpam, a process that is not wrapped) goes straight to the
 * C library.  Include targets are rewritten to absolute paths inside conf/
 * (pwrap_walk.c), which libpam opens as they are: nothing of the
 * system's configuration is read.
 *
 * Caller test: the return address's object (dladdr) is libpam's.  It costs
 * nothing for the program's other fopen calls: the path is looked at first.
 * When another library's fopen stands between libpam and ours (one listed
 * before us in LD_PRELOAD that calls the C library itself), libpam's opens
 * never reach us: pwrap.c then finds that pam_start opened nothing through
 * us (pwrap_legacy_seen) and refuses the transaction instead of letting
 * libpam run on the system's configuration.
 */
/* fopen and fopen64 are both defined here: with 64-bit file offsets (as
 * 32-bit Debian builds ask), <stdio.h> would rename fopen to fopen64. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pwrap_private.h"

typedef FILE *(*fopen_fn)(const char *, const char *);

/* The next definitions, looked up at first use.  No pthread_once: a lookup
 * that itself opened a file would deadlock on it; two threads racing store
 * the same value. */
static fopen_fn next_fopen(const char *name, fopen_fn *slot)
{
	fopen_fn fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (fn == NULL) {
		*(void **)&fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

static fopen_fn real_fopen;
#if defined(__GLIBC__)
static fopen_fn real_fopen64;
#endif

/* Set by the first transaction started on the legacy path; never cleared
 * (a process does not change its libpam). */
static bool legacy_used;

/* How many of libpam's opens this thread answered (see pwrap_legacy_seen). */
static _Thread_local unsigned long answered;

void pwrap_legacy_start(void)
{
	if (!__atomic_load_n(&legacy_used, __ATOMIC_RELAXED)) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "%s: libpam's fopen calls of "
			  "pam.d files are redirected to the prepared "
			  "directory", pwrap_force_legacy() ?
			  "built with PAM_WRAPPER_FORCE_LEGACY" :
			  "libpam has no pam_start_confdir");
		__atomic_store_n(&legacy_used, true, __ATOMIC_RELAXED);
	}
}

/* What to do with a path libpam opens. */
enum legacy_map {
	MAP_PASS,	/* not a configuration file: open it */
	MAP_CONF,	/* <dir>/pam.d/<name>: open conf/<name> */
	MAP_NONE,	/* a pam.conf, or a bad name: nothing there */
};

/* Classifies path; for MAP_CONF, *name points into path. */
static enum legacy_map classify(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t dlen;

	if (path[0] != '/' || slash == NULL) {
		return MAP_PASS;
	}
	*name = slash + 1;
	if (strcmp(*name, "pam.conf") == 0) {
		return MAP_NONE;
	}
	/* the directory's last component is pam.d ("/pam.d" + "/name"), also
	 * when written with repeated slashes */
	dlen = (size_t)(slash - path);
	while (dlen > 0 && path[dlen - 1] == '/') {
		dlen--;
	}
	if (dlen < 6 || memcmp(path + dlen - 6, "/pam.d", 6) != 0) {
		return MAP_PASS;
	}
	return pwrap_name_is_service(*name) ? MAP_CONF : MAP_NONE;
}

/* Whether the code at addr belongs to the libpam we forward to. */
static bool in_libpam(const void *addr)
{
	const void *base = pwrap_libpam_base();
	Dl_info info;

	return base != NULL && dladdr(addr, &info) != 0 &&
	       info.dli_fbase == base;
}

/*
 * The redirection, shared by fopen and fopen64.  Returns true when the call
 * was handled (*fp set, errno set on NULL), false to let it through.
 */
static bool legacy_open(const char *path, const char *mode,
			const void *caller, FILE **fp)
{
	const char *name = NULL;
	enum legacy_map m;
	int fd;

	if (path == NULL || !__atomic_load_n(&legacy_used, __ATOMIC_RELAXED)) {
		return false;
	}
	m = classify(path, &name);
	if (m == MAP_PASS || !pwrap_enabled() || !in_libpam(caller)) {
		return false;
	}
	answered++;
	if (m == MAP_CONF && mode[0] == 'r' && strchr(mode, '+') == NULL) {
		/* through the descriptor of conf/: a renamed or replaced
		 * runtime directory cannot change what libpam reads */
		fd = pwrap_prepared_open(name);
		*fp = fd >= 0 ? fdopen(fd, "r") : NULL;
		if (fd >= 0 && *fp == NULL) {
			int saved = errno;

			close(fd);
			errno = saved;
		}
		PWRAP_LOG(PWRAP_LOG_TRACE, "libpam opens %s: conf/%s%s", path,
			  name, *fp == NULL ? " (none)" : "");
		return true;
	}
	PWRAP_LOG(PWRAP_LOG_TRACE, "libpam opens %s: refused (the system's "
		  "configuration is never read)", path);
	*fp = NULL;
	errno = ENOENT;
	return true;
}

unsigned long pwrap_legacy_seen(void)
{
	return answered;
}

/* fopen and fopen64: the redirection, else the next definition of NAME. */
static FILE *open_via(const char *name, fopen_fn *slot, const char *path,
		      const char *mode, const void *caller)
{
	fopen_fn next = next_fopen(name, slot);
	FILE *fp;

	if (legacy_open(path, mode, caller, &fp)) {
		return fp;
	}
	if (next == NULL) {
		errno = ENOSYS;
		return NULL;
	}
	return next(path, mode);
}

/* (The caller's address is taken here, in the function libpam calls.) */
PWRAP_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return open_via("fopen", &real_fopen, path, mode,
			__builtin_return_address(0));
}

#if defined(__GLIBC__)
PWRAP_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return open_via("fopen64", &real_fopen64, path, mode,
			__builtin_return_address(0));
}
#endif
