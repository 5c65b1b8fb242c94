/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * setuid, seteuid, setreuid and setresuid: before the process switches its
 * effective uid away from the owner of the runtime directory it made, the
 * directory goes (files a test wrote into services/ are kept in memory);
 * afterwards the process could neither use it (mode 0700) nor remove it,
 * and root's directory would outlive it.  Right after the switch a new one
 * is made, as the new uid, with those files: PAM_WRAPPER_RUNTIME_DIR never
 * names a directory that is gone.  A switch back to root replaces the
 * directory too: root could use another user's, but that user could put
 * any stack into it.  Everything else is the next
 * definition's (the C library's, or uid_wrapper's when it comes later in
 * LD_PRELOAD; when it comes first, no real switch happens and we are not
 * called).  In a process that made no directory these only forward.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

#include "pwrap_private.h"

/* The next definition of name, looked up at first use (two threads racing
 * store the same value). */
static void *next_fn(const char *name, void **slot)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (fn == NULL) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	if (fn == NULL) {
		errno = ENOSYS;
	}
	return fn;
}

/* Before a call that sets the effective uid to euid ((uid_t)-1: keeps it):
 * whether the runtime directory went. */
static bool before(uid_t euid)
{
	return euid != (uid_t)-1 && pwrap_uid_switch(euid);
}

/* After the call (rc, errno kept): a new directory if the old one went. */
static int after(bool went, int rc)
{
	int saved = errno;

	if (went && pwrap_enabled()) {
		pwrap_runtime_now();
	}
	errno = saved;
	return rc;
}

PWRAP_EXPORT int setuid(uid_t uid)
{
	static void *slot;
	bool went;
	int (*fn)(uid_t);

	*(void **)&fn = next_fn("setuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	went = before(uid);
	return after(went, fn(uid));
}

PWRAP_EXPORT int seteuid(uid_t euid)
{
	static void *slot;
	bool went;
	int (*fn)(uid_t);

	*(void **)&fn = next_fn("seteuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	went = before(euid);
	return after(went, fn(euid));
}

PWRAP_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	static void *slot;
	bool went;
	int (*fn)(uid_t, uid_t);

	*(void **)&fn = next_fn("setreuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	went = before(euid);
	return after(went, fn(ruid, euid));
}

/* Not POSIX; where the C library has it. */
#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
	defined(__DragonFly__)
PWRAP_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	static void *slot;
	bool went;
	int (*fn)(uid_t, uid_t, uid_t);

	*(void **)&fn = next_fn("setresuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	went = before(euid);
	return after(went, fn(ruid, euid, suid));
}
#endif
