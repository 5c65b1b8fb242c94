/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A private /etc/pam.d for bare libpam (pwrap_ns.h): Linux mount
 * namespaces, and a user namespace when not root.  Elsewhere there is
 * none, and the caller says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mount.h>
#endif

#include "pwrap_ns.h"

/* Fills why with "WHAT: <errno's text>"; returns -1. */
static int failed(char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int failed(char *why, size_t n, const char *fmt, ...)
{
	int saved = errno;
	size_t used;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	used = strlen(why);
	snprintf(why + used, n - used, ": %s", strerror(saved));
	return -1;
}

#if defined(__linux__)
/* Writes text to a /proc file; 0, or -1. */
static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		return -1;
	}
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Makes place empty: a file gets /dev/null mounted over it, a directory
 * an empty tmpfs (nothing when it does not exist).  0, or -1. */
static int make_empty(const char *place, char *why, size_t n)
{
	struct stat st;

	if (stat(place, &st) != 0) {
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mount("pwrap", place, "tmpfs", MS_NOSUID | MS_NODEV,
			  "size=16k,mode=755") != 0) {
			return failed(why, n, "mount tmpfs on %s", place);
		}
	} else if (mount("/dev/null", place, NULL, MS_BIND, NULL) != 0) {
		return failed(why, n, "mount /dev/null on %s", place);
	}
	return 0;
}

/* The same uid and gid inside a new user namespace as outside. */
static int map_ids(uid_t uid, gid_t gid, char *why, size_t n)
{
	char map[64];

	snprintf(map, sizeof(map), "%lu %lu 1\n", (unsigned long)uid,
		 (unsigned long)uid);
	if (write_proc("/proc/self/setgroups", "deny") != 0 ||
	    write_proc("/proc/self/uid_map", map) != 0) {
		return failed(why, n, "write /proc/self/uid_map");
	}
	snprintf(map, sizeof(map), "%lu %lu 1\n", (unsigned long)gid,
		 (unsigned long)gid);
	if (write_proc("/proc/self/gid_map", map) != 0) {
		return failed(why, n, "write /proc/self/gid_map");
	}
	return 0;
}

int pwrap_ns_enter(const char *dir, char *why, size_t n)
{
	static const char *const empty[] = { "/usr/lib/pam.d",
					     "/usr/local/etc/pam.d",
					     "/etc/pam.conf",
					     "/usr/local/etc/pam.conf" };
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid == 0) {
		if (unshare(CLONE_NEWNS) != 0) {
			return failed(why, n, "unshare (CLONE_NEWNS)");
		}
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
			return failed(why, n,
				      "unshare (CLONE_NEWUSER | CLONE_NEWNS)");
		}
		/* files keep their owners */
		if (map_ids(uid, gid, why, n) != 0) {
			return -1;
		}
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		return failed(why, n, "make / private");
	}
	if (mount(dir, "/etc/pam.d", NULL, MS_BIND, NULL) != 0) {
		return failed(why, n, "mount over /etc/pam.d");
	}
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		if (make_empty(empty[i], why, n) != 0) {
			return -1;
		}
	}
	return 0;
}
#else
int pwrap_ns_enter(const char *dir, char *why, size_t n)
{
	(void)dir;
	errno = ENOSYS;
	return failed(why, n, "no private mount namespaces on this system "
		      "(Linux only)");
}
#endif
