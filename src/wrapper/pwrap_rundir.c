/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime directory of a wrapped process, and its cleanup without any
 * helper process.
 *
 * Layout: <base>/pam_wrapper.<pid>.XXXXXX/ with
 *   .lock      liveness: its owner holds flock(LOCK_SH) on it through a
 *              descriptor that forked children inherit (and exec closes);
 *   services/  exported as PAM_WRAPPER_RUNTIME_DIR;
 *   conf/      what libpam reads; conf/.inc/ holds included files (made
 *              when first needed).
 * <base> is $TMPDIR, else /dev/shm (Linux: a memory file system, cheaper
 * than a disk-backed /tmp), else /tmp; when one cannot take the directory
 * (full, read-only, not writable) the next one is tried.
 *
 * A directory is live while someone holds its lock.  flock locks belong to
 * the open file, not to a pid, so the test is right across PID namespaces
 * and under uid_wrapper (where getuid() lies), and a lock never outlives
 * the processes that hold it, however they end.  At a normal exit the last
 * holder removes the directory; after _exit, exec or a kill, the next
 * wrapped process of the same user that makes a directory removes every
 * directory whose lock it can take (the sweep).  Kept directories
 * (PAM_WRAPPER_KEEP_DIR=1) are named pam_wrapper_kept.* and never swept.
 *
 * Races: a directory is made before its .lock, so the sweep removes a
 * directory without .lock only when it is empty (rmdir), and a maker whose
 * directory vanished before it held the lock starts again.  The sweep holds
 * the exclusive lock while it removes, and removes .lock last.
 *
 * Not thread-safe: pwrap_prepare.c serialises every call.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_private.h"

#define PWRAP_LOCK_NAME ".lock"
#define PWRAP_PREFIX "pam_wrapper"
#define PWRAP_KEPT_PREFIX "pam_wrapper_kept"

static struct {
	char *top;		/* malloc'd, or NULL before the first ensure */
	char *svc;
	char *conf;
	struct pwrap_rundir view;
	int lockfd;		/* holds LOCK_SH on top/.lock; -1 if none */
	dev_t ldev;		/* identity of top/.lock, to tell that lockfd */
	ino_t lino;		/* still is ours (a program may close it) */
	pid_t owner;		/* the process that made top */
	uid_t fsuid;		/* owner of what we made: our real file
				 * system uid, whatever getuid() says under
				 * uid_wrapper */
	bool keep;
	bool swept;		/* this process tree swept already */
} rd = {
	.lockfd = -1,
};

const struct pwrap_rundir *pwrap_rundir(void)
{
	rd.view.top = rd.top;
	rd.view.svc = rd.svc;
	rd.view.conf = rd.conf;
	return &rd.view;
}

bool pwrap_rundir_inherited(void)
{
	return rd.top != NULL && rd.owner != getpid();
}

/* Whether lockfd is still the descriptor we opened on top/.lock. */
static bool lock_fd_ours(void)
{
	struct stat st;

	return rd.lockfd >= 0 && fstat(rd.lockfd, &st) == 0 &&
	       st.st_dev == rd.ldev && st.st_ino == rd.lino;
}

/* Moves fd above the standard descriptors: a program started with 0, 1 or
 * 2 closed must never write into our lock file. */
static int fd_high(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2) {
		return fd;
	}
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/*
 * Opens top/.lock (creating it when `create`), takes the shared lock and
 * checks that the locked file is still the one top holds (a sweep may have
 * removed it while we waited).  Returns the descriptor, or -1.
 */
static int lock_take(const char *top, bool create, struct stat *st)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY;
	struct stat now;
	pwrap_path path;
	int fd;

	if (!pwrap_pjoin(path, top, PWRAP_LOCK_NAME)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = fd_high(open(path, create ? flags | O_CREAT | O_EXCL : flags,
			  0600));
	if (fd < 0) {
		return -1;
	}
	while (flock(fd, LOCK_SH) != 0) {
		if (errno != EINTR) {
			goto fail;
		}
	}
	if (fstat(fd, st) != 0 || stat(path, &now) != 0 ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		errno = ENOENT;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * Removes base/name if nobody holds its lock and it belongs to uid.
 * basefd stays open.  Used by the sweep and at exit.
 */
static void reap(int basefd, const char *name, uid_t uid)
{
	struct stat st, lst;
	int dfd = -1;
	int lfd = -1;
	int sub;

	dfd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		     O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) != 0 || st.st_uid != uid) {
		goto out;
	}
	lfd = openat(dfd, PWRAP_LOCK_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		     O_NONBLOCK | O_NOCTTY);
	if (lfd < 0) {
		/* Being made right now, or its maker died before it made the
		 * lock: either way it is empty, and only then does this
		 * succeed (a maker that loses it starts again). */
		if (errno == ENOENT) {
			(void)unlinkat(basefd, name, AT_REMOVEDIR);
		}
		goto out;
	}
	if (flock(lfd, LOCK_EX | LOCK_NB) != 0 || fstat(lfd, &lst) != 0 ||
	    fstatat(dfd, PWRAP_LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    st.st_ino != lst.st_ino || st.st_dev != lst.st_dev) {
		goto out;	/* live (or already being removed) */
	}
	PWRAP_LOG(PWRAP_LOG_DEBUG, "removing unused runtime directory %s",
		  name);
	sub = dup(dfd);
	if (sub >= 0) {
		pwrap_rmtree_at(sub, PWRAP_LOCK_NAME);	/* closes sub */
	}
	(void)unlinkat(dfd, PWRAP_LOCK_NAME, 0);
	if (unlinkat(basefd, name, AT_REMOVEDIR) != 0 &&
	    (errno == ENOTEMPTY || errno == EEXIST)) {
		/* an entry the first pass did not see (we still hold the
		 * lock, so nobody else is in here) */
		sub = dup(dfd);
		if (sub >= 0) {
			pwrap_rmtree_at(sub, NULL);
		}
		(void)unlinkat(basefd, name, AT_REMOVEDIR);
	}
out:
	if (lfd >= 0) {
		close(lfd);
	}
	if (dfd >= 0) {
		close(dfd);
	}
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

/* Removes the unused runtime directories of uid in base, except ours. */
static void sweep(const char *base, const char *mine, uid_t uid)
{
	DIR *d = opendir(base);
	struct dirent *de;

	if (d == NULL) {
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (is_ours(de->d_name) && strcmp(de->d_name, mine) != 0) {
			reap(dirfd(d), de->d_name, uid);
		}
	}
	closedir(d);
}

/* Paths end up as tokens of service-file lines: no blanks allowed. */
static bool path_usable(const char *p)
{
	return p != NULL && p[0] == '/' && strpbrk(p, " \t\n#") == NULL;
}

/* Drops what we know of the current directory (never removes it). */
static void forget(void)
{
	if (lock_fd_ours()) {
		close(rd.lockfd);
	}
	rd.lockfd = -1;
	free(rd.top);
	free(rd.svc);
	free(rd.conf);
	rd.top = rd.svc = rd.conf = NULL;
}

/*
 * Makes base/<prefix>.<pid>.XXXXXX with its lock and subdirectories.  On
 * success fills rd (after forget()) and returns 0; else -1 with errno set
 * and nothing left behind.
 */
static int make_in(const char *base, const char *prefix)
{
	char *top = NULL;
	char *svc = NULL;
	char *conf = NULL;
	struct stat st;
	int fd = -1;
	int err = 0;

	for (int attempt = 0; attempt < 8; attempt++) {
		free(top);
		if (asprintf(&top, "%s/%s.%ld.XXXXXX", base, prefix,
			     (long)getpid()) < 0) {
			top = NULL;
			err = ENOMEM;
			goto fail;
		}
		if (mkdtemp(top) == NULL) {
			err = errno;
			goto fail;
		}
		fd = lock_take(top, true, &st);
		if (fd >= 0) {
			break;
		}
		/* swept before we held the lock: start again */
		err = errno;
		pwrap_rmtree(top);
	}
	if (fd < 0) {
		goto fail;
	}
	svc = pwrap_join(top, "services");
	conf = pwrap_join(top, "conf");
	if (svc == NULL || conf == NULL) {
		err = ENOMEM;
		goto fail_rm;
	}
	if (mkdir(svc, 0755) != 0 || mkdir(conf, 0755) != 0) {
		err = errno;
		goto fail_rm;
	}
	forget();
	rd.top = top;
	rd.svc = svc;
	rd.conf = conf;
	rd.lockfd = fd;
	rd.ldev = st.st_dev;
	rd.lino = st.st_ino;
	rd.fsuid = st.st_uid;
	rd.owner = getpid();
	return 0;
fail_rm:
	pwrap_rmtree(top);
fail:
	if (fd >= 0) {
		close(fd);
	}
	free(top);
	free(svc);
	free(conf);
	errno = err;
	return -1;
}

/* Creates a new directory in the first base that takes it. */
static int make_new(void)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *bases[3];
	const char *keep = getenv("PAM_WRAPPER_KEEP_DIR");
	const char *prefix;
	char why[1024] = "";
	size_t n = 0;
	size_t used = 0;

	if (path_usable(tmpdir)) {
		bases[n++] = tmpdir;
	} else if (tmpdir != NULL && tmpdir[0] != '\0') {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "TMPDIR=%s is not an absolute path "
			  "without blanks; not used", tmpdir);
	}
#ifdef __linux__
	bases[n++] = "/dev/shm";
#endif
	bases[n++] = "/tmp";

	rd.keep = keep != NULL && keep[0] == '1';
	prefix = rd.keep ? PWRAP_KEPT_PREFIX : PWRAP_PREFIX;
	for (size_t i = 0; i < n; i++) {
		if (make_in(bases[i], prefix) != 0) {
			int w = snprintf(why + used, sizeof(why) - used,
					 "%s%s: %s", used ? "; " : "",
					 bases[i], strerror(errno));

			if (w > 0 && (size_t)w < sizeof(why) - used) {
				used += (size_t)w;
			}
			continue;
		}
		setenv("PAM_WRAPPER_RUNTIME_DIR", rd.svc, 1);
		PWRAP_LOG(PWRAP_LOG_DEBUG, "runtime directory %s%s", rd.svc,
			  rd.keep ? " (kept: PAM_WRAPPER_KEEP_DIR=1)" : "");
		if (!rd.swept) {
			rd.swept = true;
			sweep(bases[i], strrchr(rd.top, '/') + 1, rd.fsuid);
		}
		return 0;
	}
	PWRAP_LOG(PWRAP_LOG_ERROR, "cannot create a runtime directory "
		  "(%s.%ld.XXXXXX): %s", prefix, (long)getpid(), why);
	return -1;
}

/*
 * The program closed our lock descriptor or put another file on its number
 * (closefrom() in a daemon): take the lock again if top still holds the
 * same lock file.  We never close a descriptor that is not ours.
 */
static bool relock(void)
{
	struct stat st;
	int fd;

	rd.lockfd = -1;
	fd = lock_take(rd.top, false, &st);
	if (fd < 0) {
		return false;
	}
	if (st.st_dev != rd.ldev || st.st_ino != rd.lino) {
		close(fd);
		return false;
	}
	rd.lockfd = fd;
	return true;
}

int pwrap_rundir_ensure(bool check)
{
	struct stat st;

	if (rd.top != NULL && rd.owner == getpid()) {
		if ((lock_fd_ours() || relock()) &&
		    (!check || (stat(rd.conf, &st) == 0 &&
				S_ISDIR(st.st_mode)))) {
			return 0;
		}
		PWRAP_LOG(PWRAP_LOG_DEBUG, "runtime directory %s is gone; "
			  "making a new one", rd.top);
	}
	/* A forked child makes its own (make_new() forgets, and so closes,
	 * the parent's lock descriptor once the new one is there). */
	return make_new() == 0 ? 1 : -1;
}

/*
 * At a normal exit: let go of the lock, then remove the directory unless
 * another process (a forked child) still holds it.
 */
__attribute__((destructor)) static void rundir_destructor(void)
{
	char *slash;
	int basefd;

	if (rd.top == NULL || rd.keep) {
		return;
	}
	if (lock_fd_ours()) {
		close(rd.lockfd);
	}
	rd.lockfd = -1;
	slash = strrchr(rd.top, '/');
	*slash = '\0';
	basefd = open(rd.top[0] != '\0' ? rd.top : "/",
		      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (basefd >= 0) {
		struct stat st;

		if (fstatat(basefd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			reap(basefd, slash + 1, st.st_uid);
		}
		close(basefd);
	}
	*slash = '/';
}
