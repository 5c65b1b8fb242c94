/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where private directories may be made (the bases), and which of them are
 * trusted: the wrapper's runtime directories (pwrap_rundir.c) and the
 * tools' private directories (tools/common/pwrap_tool.c) follow this one
 * rule.  The bases, in order: $TMPDIR, /dev/shm (Linux), /tmp.  $TMPDIR
 * is resolved first (realpath), so that no symbolic link on its way is
 * followed again later (a link another user owns could be pointed
 * elsewhere between two uses); for the wrapper it must be absolute and,
 * resolved, free of blanks (its paths become tokens of service-file
 * lines); the tools resolve a relative one once, at start.
 *
 * Trusted: a directory owned by the process's real file-system uid or by
 * root, and writable by nobody else (its group or others) unless it is
 * sticky.  Only then can no other user rename or replace what we make in
 * it, which is what lets a path stand for what we made.  The uid is the
 * owner of what the process creates: pwrap_rundir.c learns it from the
 * directory it makes there (getuid() lies under uid_wrapper), so a base
 * that is neither root's nor obviously unsafe is decided in two steps.
 * The directories above a base are not checked: a sandbox's / may belong
 * to an unmapped uid, and the system's /tmp and /dev/shm and a user's own
 * TMPDIR sit below root's directories.
 *
 * Nothing here logs: the callers (the wrapper's log, the tools' stderr)
 * say what the notes and reasons hold.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pwrap_base.h"

/* Whether p (resolved) may be a base: absolute and, for TOKEN, without
 * the blanks and '#' a service-file token cannot hold. */
static bool path_usable(const char *p, unsigned flags)
{
	return p != NULL && p[0] == '/' &&
	       ((flags & PWRAP_BASES_TOKEN) == 0 ||
		strpbrk(p, " \t\n#") == NULL);
}

size_t pwrap_bases(struct pwrap_base out[PWRAP_MAX_BASES], char **resolved,
		   unsigned flags, char *note, size_t nn)
{
	const char *tmpdir = getenv("TMPDIR");
	size_t n = 0;

	*resolved = NULL;
	note[0] = '\0';
	if (tmpdir != NULL && (tmpdir[0] == '/' ||
	    (tmpdir[0] != '\0' && (flags & PWRAP_BASES_RELATIVE) != 0))) {
		*resolved = realpath(tmpdir, NULL);
		if (path_usable(*resolved, flags)) {
			out[n++] = (struct pwrap_base){ *resolved, "TMPDIR ",
							PWRAP_BASE_TMPDIR };
		} else {
			snprintf(note, nn, "TMPDIR=%s: %s; not used", tmpdir,
				 *resolved == NULL ? strerror(errno)
				 : "its real path has a blank");
		}
	} else if (tmpdir != NULL && tmpdir[0] != '\0') {
		snprintf(note, nn, "TMPDIR=%s is not an absolute path; "
			 "not used", tmpdir);
	}
#ifdef __linux__
	out[n++] = (struct pwrap_base){ "/dev/shm", "", PWRAP_BASE_SHM };
#endif
	out[n++] = (struct pwrap_base){ "/tmp", "", PWRAP_BASE_TMP };
	return n;
}

bool pwrap_base_distrust(const struct stat *st, uid_t uid, char *why,
			 size_t n)
{
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    (st->st_mode & S_ISVTX) == 0) {
		snprintf(why, n, "writable by %s and not sticky",
			 (st->st_mode & S_IWOTH) != 0 ? "everyone"
						      : "its group");
		return true;
	}
	if (uid != (uid_t)-1 && st->st_uid != 0 && st->st_uid != uid) {
		snprintf(why, n, "owned by uid %lu, not by this process's "
			 "user (uid %lu) or root", (unsigned long)st->st_uid,
			 (unsigned long)uid);
		return true;
	}
	return false;
}
