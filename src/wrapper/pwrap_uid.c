/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * setuid, seteuid, setreuid and setresuid, around the next definition (the
 * C library's, or uid_wrapper's when it comes later in LD_PRELOAD; when it
 * comes first, no real switch happens and we are not called).  Whose
 * directories a process may read a stack from depends on its credentials
 * (pwrap_cred.c: root's, or those of a uid that is its real, effective and
 * saved uid at once), so the runtime directory follows each switch:
 *
 *  - for good (the directory's owner is none of the uids afterwards, as
 *    after root's setuid(user)): the directory goes before the switch
 *    (the process could neither use nor remove it afterwards), the files a
 *    test wrote into services/ kept in memory, and right after it a new one
 *    is made as the new uid with those files;
 *  - for a while (the owner stays the real or saved uid, as after root's
 *    seteuid(user)): the directory stays in use, test's files and all; it
 *    is made searchable (0711) before the switch, since libpam then reads
 *    conf/ as the new euid, and made 0700 again when the process is back.
 *    The wrapper cannot write into it meanwhile, and makes none as the
 *    temporary euid: that user could put any stack there, and a module
 *    loaded from it could take the real or saved uid back.
 *
 * The preparation lock is held from before the switch until after it, so
 * that no other thread prepares (or makes a directory) half before and
 * half after a switch that glibc applies to every thread.  In a process
 * that holds no directory these only forward (and take the lock).
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

/* After the call (its rc and errno kept): see pwrap_uid_after. */
static int finish(unsigned what, int rc)
{
	int saved = errno;

	pwrap_uid_after(what);
	errno = saved;
	return rc;
}

PWRAP_EXPORT int setuid(uid_t uid)
{
	static void *slot;
	struct pwrap_uid_call call = { PWRAP_SETUID, (uid_t)-1, (uid_t)-1,
				       (uid_t)-1 };
	unsigned what;
	int (*fn)(uid_t);

	*(void **)&fn = next_fn("setuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	call.e = uid;
	what = pwrap_uid_before(&call);
	return finish(what, fn(uid));
}

PWRAP_EXPORT int seteuid(uid_t euid)
{
	static void *slot;
	struct pwrap_uid_call call = { PWRAP_SETEUID, (uid_t)-1, (uid_t)-1,
				       (uid_t)-1 };
	unsigned what;
	int (*fn)(uid_t);

	*(void **)&fn = next_fn("seteuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	call.e = euid;
	what = pwrap_uid_before(&call);
	return finish(what, fn(euid));
}

PWRAP_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	static void *slot;
	struct pwrap_uid_call call = { PWRAP_SETREUID, (uid_t)-1, (uid_t)-1,
				       (uid_t)-1 };
	unsigned what;
	int (*fn)(uid_t, uid_t);

	*(void **)&fn = next_fn("setreuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	call.r = ruid;
	call.e = euid;
	what = pwrap_uid_before(&call);
	return finish(what, fn(ruid, euid));
}

/* Not POSIX; where the C library has it. */
#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
	defined(__DragonFly__)
PWRAP_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	static void *slot;
	struct pwrap_uid_call call = { PWRAP_SETRESUID, (uid_t)-1, (uid_t)-1,
				       (uid_t)-1 };
	unsigned what;
	int (*fn)(uid_t, uid_t, uid_t);

	*(void **)&fn = next_fn("setresuid", &slot);
	if (fn == NULL) {
		return -1;
	}
	call.r = ruid;
	call.e = euid;
	call.s = suid;
	what = pwrap_uid_before(&call);
	return finish(what, fn(ruid, euid, suid));
}
#endif
