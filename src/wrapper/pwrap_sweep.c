/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Removing runtime directories that nobody uses (see pwrap_rundir.c for
 * the layout and the lock): one at a normal exit or before a switch of
 * uid (pwrap_reap with the identity of its .lock), and, when a process
 * tree makes its first directory, unused ones of the same user in that
 * base (pwrap_sweep: after _exit, exec or a kill nobody else would).
 *
 * The sweep looks at no more than PWRAP_SWEEP_MAX of the other
 * directories, picked at random (reservoir sampling over one pass of the
 * base): removing one costs tens of system calls (~70 us on tmpfs, ~230
 * us on a disk here, bench SW), so a process that starts next to a large
 * backlog (a killed test run) or to many live directories (1,000
 * concurrent processes) pays for a few, not for all; each wrapped process
 * leaves at most one behind and takes up to PWRAP_SWEEP_MAX away, so the
 * next ones clear the rest.
 *
 * Races: a directory is made before its .lock, so a directory without
 * .lock is removed only when it is empty (rmdir).  The remover holds the
 * exclusive lock while it removes, and removes .lock last.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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

/* A small pseudo-random generator (splitmix64): which directories a sweep
 * looks at needs to differ from process to process, nothing more. */
static uint64_t next_random(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void pwrap_sweep(const char *base, const char *mine, uid_t uid)
{
	char picked[PWRAP_SWEEP_MAX][NAME_MAX + 1];
	DIR *d = opendir(base);
	struct dirent *de;
	struct timespec ts;
	uint64_t seed;
	size_t seen = 0;

	if (d == NULL) {
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	seed = (uint64_t)getpid() << 32 ^ (uint64_t)ts.tv_nsec ^
	       (uint64_t)ts.tv_sec << 20;
	/* reservoir sampling: each candidate ends up in picked with the same
	 * chance, PWRAP_SWEEP_MAX / candidates */
	while ((de = readdir(d)) != NULL) {
		size_t slot;

		if (!is_ours(de->d_name) || strcmp(de->d_name, mine) == 0 ||
		    strlen(de->d_name) > NAME_MAX) {
			continue;
		}
		slot = seen < PWRAP_SWEEP_MAX
			       ? seen
			       : (size_t)(next_random(&seed) % (seen + 1));
		seen++;
		if (slot < PWRAP_SWEEP_MAX) {
			memcpy(picked[slot], de->d_name,
			       strlen(de->d_name) + 1);
		}
	}
	for (size_t i = 0; i < seen && i < PWRAP_SWEEP_MAX; i++) {
		pwrap_reap(dirfd(d), picked[i], uid, 0, 0);
	}
	closedir(d);
}
