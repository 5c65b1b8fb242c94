/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Removing runtime directories that nobody uses (see pwrap_rundir.c for
 * the layout and the lock): one at a normal exit or before a switch of
 * uid (pwrap_reap with the identity of its .lock), and, when a process
 * tree makes its first directory, every unused one of the same user in
 * that base (pwrap_sweep: after _exit, exec or a kill nobody else would).
 *
 * Races: a directory is made before its .lock, so a directory without
 * .lock is removed only when it is empty (rmdir).  The remover holds the
 * exclusive lock while it removes, and removes .lock last.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_private.h"

bool pwrap_fd_is(int fd, dev_t dev, ino_t ino)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev &&
	       st.st_ino == ino;
}

bool pwrap_reap(int basefd, const char *name, uid_t uid, dev_t ldev,
		ino_t lino)
{
	bool want = lino != 0;
	bool gone = false;
	struct stat st, lst;
	int dfd = -1;
	int lfd = -1;
	int sub;

	dfd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		     O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) != 0 ||
	    (!want && st.st_uid != uid)) {
		goto out;
	}
	lfd = openat(dfd, PWRAP_LOCK_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		     O_NONBLOCK | O_NOCTTY);
	if (lfd < 0) {
		/* Being made right now, or its maker died before it made the
		 * lock: either way it is empty, and only then does this
		 * succeed (a maker that loses it starts again). */
		if (errno == ENOENT && !want) {
			(void)unlinkat(basefd, name, AT_REMOVEDIR);
		}
		goto out;
	}
	if ((want && !pwrap_fd_is(lfd, ldev, lino)) ||
	    flock(lfd, LOCK_EX | LOCK_NB) != 0 || fstat(lfd, &lst) != 0 ||
	    fstatat(dfd, PWRAP_LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    st.st_ino != lst.st_ino || st.st_dev != lst.st_dev) {
		goto out;	/* not ours, live, or already being removed */
	}
	PWRAP_LOG(PWRAP_LOG_DEBUG, "removing unused runtime directory %s",
		  name);
	sub = dup(dfd);
	if (sub >= 0) {
		pwrap_rmtree_at(sub, PWRAP_LOCK_NAME);	/* closes sub */
	}
	(void)unlinkat(dfd, PWRAP_LOCK_NAME, 0);
	gone = unlinkat(basefd, name, AT_REMOVEDIR) == 0;
	if (!gone && (errno == ENOTEMPTY || errno == EEXIST)) {
		/* an entry the first pass did not see (we still hold the
		 * lock, so nobody else is in here) */
		sub = dup(dfd);
		if (sub >= 0) {
			pwrap_rmtree_at(sub, NULL);
		}
		gone = unlinkat(basefd, name, AT_REMOVEDIR) == 0;
	}
out:
	if (lfd >= 0) {
		close(lfd);
	}
	if (dfd >= 0) {
		close(dfd);
	}
	return gone;
}

/* Whether name is a runtime directory's (not a kept one's). */
static bool is_ours(const char *name)
{
	const char *p = name + sizeof(PWRAP_PREFIX) - 1;

	if (strncmp(name, PWRAP_PREFIX ".", sizeof(PWRAP_PREFIX)) != 0) {
		return false;
	}
	p++;
	if (*p < '0' || *p > '9') {
		return false;
	}
	while (*p >= '0' && *p <= '9') {
		p++;
	}
	return *p == '.';
}

void pwrap_sweep(const char *base, const char *mine, uid_t uid)
{
	DIR *d = opendir(base);
	struct dirent *de;

	if (d == NULL) {
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (is_ours(de->d_name) && strcmp(de->d_name, mine) != 0) {
			pwrap_reap(dirfd(d), de->d_name, uid, 0, 0);
		}
	}
	closedir(d);
}
