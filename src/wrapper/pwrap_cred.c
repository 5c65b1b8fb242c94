/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process's real credentials, and whose directories it may trust.
 *
 * A process whose real, effective and saved uids differ (a root daemon
 * after seteuid(user)) can become any of them again, and so can a module
 * it loads.  A directory owned by uid U can be written by every process of
 * U, so a stack read from it is U's choice: the wrapper reads stacks only
 * from a directory of root, or of a uid that is the process's real,
 * effective and saved uid at once (a process that can become nobody else
 * gains nothing from its own user's files).
 *
 * The credentials must be the kernel's: uid_wrapper and fakeroot answer
 * getuid(), getresuid() and even syscall() with made-up values, while the
 * files the process creates are owned by its real uid.  On Linux they are
 * read from /proc/self/status (one read, only when the answer of
 * getresuid() cannot settle the question); elsewhere getresuid() (or
 * getuid() and geteuid()) is believed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#include <unistd.h>

#include "pwrap_private.h"

#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__) || \
	defined(__DragonFly__)
#define HAVE_GETRESUID 1
#endif

/* What the C library (or whatever interposes it) says. */
static void ids_libc(struct pwrap_ids *ids)
{
#if defined(HAVE_GETRESUID)
	if (getresuid(&ids->r, &ids->e, &ids->s) == 0) {
		return;
	}
#endif
	ids->r = getuid();
	ids->e = geteuid();
	ids->s = ids->e;	/* not known: as after an exec */
}

#if defined(__linux__)
/* The "Uid:" line of /proc/self/status: real, effective, saved, fs. */
static bool ids_proc(struct pwrap_ids *ids)
{
	char buf[4096];
	size_t got = 0;
	unsigned long r, e, s;
	const char *p;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		return false;
	}
	while (got < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	p = strstr(buf, "\nUid:");
	if (p == NULL || sscanf(p + 5, "%lu %lu %lu", &r, &e, &s) != 3) {
		return false;
	}
	ids->r = (uid_t)r;
	ids->e = (uid_t)e;
	ids->s = (uid_t)s;
	return true;
}
#endif

void pwrap_ids_real(struct pwrap_ids *ids)
{
	int saved = errno;

#if defined(__linux__)
	if (!ids_proc(ids)) {
		ids_libc(ids);
	}
#else
	ids_libc(ids);
#endif
	errno = saved;
}

bool pwrap_ids_trust(const struct pwrap_ids *ids, uid_t owner)
{
	return owner == 0 ||
	       (ids->r == owner && ids->e == owner && ids->s == owner);
}

bool pwrap_owner_trusted(uid_t owner, struct pwrap_ids *ids)
{
	struct pwrap_ids seen;

	if (owner == 0) {
		return true;
	}
	/* the usual case, a process that is one user through and through,
	 * costs one system call: a stand-in that made the answer up cannot
	 * have made real credentials mixed, since it makes no real switch */
	ids_libc(&seen);
	if (pwrap_ids_trust(&seen, owner)) {
		if (ids != NULL) {
			*ids = seen;
		}
		return true;
	}
	pwrap_ids_real(&seen);
	if (ids != NULL) {
		*ids = seen;
	}
	return pwrap_ids_trust(&seen, owner);
}

bool pwrap_owner_ours(uid_t owner)
{
	struct pwrap_ids ids;

	if (owner == 0) {
		return true;
	}
	ids_libc(&ids);
	if (owner == ids.r || owner == ids.e) {
		return true;
	}
	pwrap_ids_real(&ids);
	return owner == ids.r || owner == ids.e;
}

bool pwrap_thread_euid(uid_t euid)
{
#if defined(__linux__) && (defined(SYS_setresuid32) || defined(SYS_setresuid))
	/* The system call, not the C library's function, which applies a
	 * switch to every thread of the process: only the calling one
	 * changes (Linux keeps credentials per thread).  (32-bit x86 and
	 * ARM have a 16-bit setresuid too; the 32-bit one is wanted.) */
#if defined(SYS_setresuid32)
	long nr = SYS_setresuid32;
#else
	long nr = SYS_setresuid;
#endif
	int saved = errno;
	bool ok = syscall(nr, (uid_t)-1, euid, (uid_t)-1) == 0;

	errno = saved;
	return ok;
#else
	(void)euid;
	return false;
#endif
}
