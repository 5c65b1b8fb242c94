/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's password change: the locked, atomic rewrite of the passdb
 * (see passdb.h for the contract), on top of passdb.c's reader.
 *
 * Concurrency of writers: a writer takes flock(LOCK_EX) on the passdb
 * itself, checks that the path still names the inode it locked (an earlier
 * writer may have renamed a new file over it while we waited), writes the
 * new content to a new file in the same directory and renames it over the
 * passdb.  Readers therefore see a whole old or a whole new file (unless
 * something else edits the file in place), and concurrent writers are
 * serialised without losing updates.
 *
 * Nothing in this file logs a password or a line's content.
 */
#define _GNU_SOURCE /* asprintf, mkostemp, O_TMPFILE */
#include "passdb.h"
#include "passdb_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <syslog.h>
#include <unistd.h>

#include "pam_compat.h"

/* How often a writer re-opens a passdb that was replaced while it waited
 * for the lock before giving up (each retry means another writer finished,
 * so this only bounds pathological churn). */
#define PM_LOCK_RETRIES 100000

/* ---- password change -------------------------------------------------- */

/*
 * Opens PATH, checks it like a lookup does and takes an exclusive flock on
 * it, making sure the locked inode is still the one PATH names.  Fills *FD
 * and *ST (the file as locked).
 */
static int pm_lock_current(pam_handle_t *pamh, const char *path, int *fd,
			   struct stat *st)
{
	char ebuf[128];

	for (long tries = 0; tries < PM_LOCK_RETRIES; tries++) {
		struct stat now;
		int lfd;
		int rv = pm_open(pamh, path, &lfd, st);

		if (rv != PAM_SUCCESS) {
			return rv;
		}
		while (flock(lfd, LOCK_EX) != 0) {
			if (errno != EINTR) {
				pam_syslog(pamh, LOG_ERR,
					   "%s: cannot lock passdb: %s", path,
					   pm_strerror(errno, ebuf,
						       sizeof(ebuf)));
				close(lfd);
				return PAM_AUTHTOK_LOCK_BUSY;
			}
		}
		if (fstat(lfd, st) != 0) {
			rv = pm_io_error(pamh, path, "stat", errno);
			close(lfd);
			return rv;
		}
		if (stat(path, &now) == 0 && now.st_dev == st->st_dev &&
		    now.st_ino == st->st_ino) {
			*fd = lfd;
			return PAM_SUCCESS;
		}
		/* Replaced while we waited: lock the new file instead. */
		close(lfd);
	}
	pam_syslog(pamh, LOG_ERR, "%s: passdb keeps changing, giving up", path);
	return PAM_AUTHTOK_LOCK_BUSY;
}

/*
 * Reads the whole file of S (open, at its start; SIZE is what fstat said)
 * into S's buffer, after the usual leading '\n'.  S then holds it all (fd
 * -1: the descriptor stays the caller's).
 */
static int pm_read_whole(pam_handle_t *pamh, struct pm_src *s, uint64_t size)
{
	int rv;

	s->cap = (size_t)size + 2 > PM_READ_MIN ? (size_t)size + 2
						: PM_READ_MIN;
	s->buf = malloc(s->cap);
	if (s->buf == NULL) {
		return pm_io_error(pamh, s->path, "read", ENOMEM);
	}
	rv = pm_src_begin(pamh, s);
	/* Full but not at the end: the file grew since fstat. */
	while (rv == PAM_SUCCESS && !s->eof) {
		size_t len = s->len;
		size_t ncap = s->cap * 2;
		char *nbuf = ncap > s->cap ? malloc(ncap) : NULL;

		if (nbuf == NULL) {
			return pm_io_error(pamh, s->path, "read", ENOMEM);
		}
		memcpy(nbuf, s->buf, len);
		pm_src_free(s);
		s->buf = nbuf;
		s->cap = ncap;
		s->len = len;
		s->dirty = len;
		rv = pm_src_fill(pamh, s, 0);
	}
	s->fd = -1;
	return rv;
}

/* Number of the line that starts at buf[AT] of an all-in-memory S. */
static unsigned long pm_lineno(const struct pm_src *s, size_t at)
{
	unsigned long n = 0;
	const char *p = s->buf;
	const char *end = s->buf + at;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

static int pm_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The new file's content: HEAD, the new password, MID (the rest of the
 * line, without the must_change flag), TAIL. */
struct pm_new {
	const char *head;
	size_t head_len;
	const char *pw;
	const char *mid;
	size_t mid_len;
	const char *tail;
	size_t tail_len;
	const struct stat *st; /* of the passdb: mode and owner */
};

/*
 * The rest of a valid line from its second ':' (":service[:flags]",
 * R[0, LEN)) as a changed password leaves it: the must_change flag is
 * done with, the other flags and everything else stay as written (an
 * emptied flags field goes with its ':').  Malloc'd; NULL on ENOMEM.
 */
static char *pm_line_rest(const char *r, size_t len, size_t *out_len)
{
	const char *c3 = memchr(r + 1, ':', len - 1);
	char *out = malloc(len + 1);
	char *o = out;
	const char *f, *end = r + len;
	bool any = false;

	if (out == NULL) {
		return NULL;
	}
	if (c3 == NULL) {
		memcpy(out, r, len);
		*out_len = len;
		return out;
	}
	memcpy(o, r, (size_t)(c3 - r));
	o += c3 - r;
	for (f = c3 + 1; f < end;) {
		const char *comma = memchr(f, ',', (size_t)(end - f));
		size_t n = (size_t)((comma != NULL ? comma : end) - f);

		if (n > 0 && !(n == 11 && memcmp(f, "must_change", 11) == 0)) {
			*o++ = any ? ',' : ':';
			memcpy(o, f, n);
			o += n;
			any = true;
		}
		f += n + (comma != NULL ? 1 : 0);
	}
	*out_len = (size_t)(o - out);
	return out;
}

/* Checks that NEWPW fits in USER's line LINE[0, LEN) (line number
 * LINENO); logs why not. */
static bool pm_storable(pam_handle_t *pamh, const char *path,
			unsigned long lineno, size_t len, size_t pass_len,
			const char *newpw)
{
	size_t plen = strlen(newpw);

	if (strpbrk(newpw, ":\n\r") != NULL) {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password contains ':', CR or LF, "
			   "which the passdb cannot store",
			   path, lineno);
		return false;
	}
	if (plen > PM_LINE_MAX || len - pass_len + plen > PM_LINE_MAX) {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password would make the line longer "
			   "than " PM_STR(PM_LINE_MAX) " bytes",
			   path, lineno);
		return false;
	}
	return true;
}

/* Gives the open new file TFD the mode (and, as root, the owner) of the
 * passdb, writes N to it and syncs it.  *STEP names what failed. */
static int pm_fill_new(int tfd, const struct pm_new *n, const char **step)
{
	*step = "set the mode of the new";
	if (fchmod(tfd, n->st->st_mode & 07777) != 0) {
		return -1;
	}
	/* Keep the owner when we are allowed to (root rewriting a user's
	 * file); an unprivileged writer owns the file it rewrites anyway. */
	if (geteuid() == 0) {
		(void)fchown(tfd, n->st->st_uid, n->st->st_gid);
	}
	*step = "write the new";
	if (pm_write_all(tfd, n->head, n->head_len) != 0 ||
	    pm_write_all(tfd, n->pw, strlen(n->pw)) != 0 ||
	    pm_write_all(tfd, n->mid, n->mid_len) != 0 ||
	    pm_write_all(tfd, n->tail, n->tail_len) != 0 || fsync(tfd) != 0) {
		return -1;
	}
	return 0;
}

/* The directory part of PATH (malloc'd), or NULL. */
static char *pm_dir_of(const char *path)
{
	char *copy = strdup(path);
	char *slash = copy ? strrchr(copy, '/') : NULL;

	if (slash == NULL) {
		free(copy);
		return NULL;
	}
	if (slash == copy) {
		slash[1] = '\0';
	} else {
		slash[0] = '\0';
	}
	return copy;
}

/* Best effort: makes the rename durable. */
static void pm_sync_dir(const char *path)
{
	char *dir = pm_dir_of(path);
	int dfd;

	if (dir == NULL) {
		return;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(dir);
}

#ifdef O_TMPFILE
/*
 * Linux: the new file is an unnamed O_TMPFILE until it is complete, so a
 * writer killed before leaves nothing behind; it is then linked as
 * REAL.pam_matrix-new (a file of that name can only be what a writer killed
 * between the link and its rename left: we hold the lock every writer
 * takes first, so it goes).  Returns 0 with *TMP set, -1 on an error
 * (errno, *STEP), or 1 when this cannot be done here (no O_TMPFILE support
 * in the file system, no way to link the file): then nothing was created.
 */
static int pm_new_unnamed(const char *real, const struct pm_new *n,
			  char **tmp, const char **step)
{
	char *dir = pm_dir_of(real);
	char proc[64];
	int tfd = dir != NULL ? open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC,
				     0600)
			      : -1;
	int linked;

	free(dir);
	if (tfd < 0) {
		return 1;
	}
	if (pm_fill_new(tfd, n, step) != 0) {
		int e = errno;

		close(tfd);
		errno = e;
		return -1;
	}
	if (asprintf(tmp, "%s.pam_matrix-new", real) < 0) {
		*tmp = NULL;
		close(tfd);
		errno = ENOMEM;
		*step = "name the new";
		return -1;
	}
	(void)unlink(*tmp);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tfd);
	linked = linkat(AT_FDCWD, proc, AT_FDCWD, *tmp, AT_SYMLINK_FOLLOW);
#ifdef AT_EMPTY_PATH
	if (linked != 0) {
		/* No /proc: needs CAP_DAC_READ_SEARCH on older kernels. */
		linked = linkat(tfd, "", AT_FDCWD, *tmp, AT_EMPTY_PATH);
	}
#endif
	if (linked != 0) {
		close(tfd);
		free(*tmp);
		*tmp = NULL;
		return 1;
	}
	*step = "close the new";
	if (close(tfd) != 0) {
		int e = errno;

		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
		errno = e;
		return -1;
	}
	return 0;
}
#endif

/* POSIX: the new file is REAL.XXXXXX from the start.  Returns 0 with *TMP
 * set, or -1 (errno, *STEP) with nothing left behind. */
static int pm_new_named(const char *real, const struct pm_new *n, char **tmp,
			const char **step)
{
	int tfd;
	int rv = -1;
	bool made;

	*step = "create a temporary file for";
	if (asprintf(tmp, "%s.XXXXXX", real) < 0) {
		*tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	tfd = mkostemp(*tmp, O_CLOEXEC);
	made = tfd >= 0;
	if (!made || pm_fill_new(tfd, n, step) != 0) {
		goto out;
	}
	*step = "close the new";
	rv = close(tfd);
	tfd = -1;
out:
	if (rv != 0) {
		int e = errno;

		if (tfd >= 0) {
			close(tfd);
		}
		if (made) {
			unlink(*tmp);
		}
		free(*tmp);
		*tmp = NULL;
		errno = e;
	}
	return rv;
}

int pm_passdb_set_password(pam_handle_t *pamh, const char *path,
			   const char *user, const char *newpw)
{
	struct pm_src s = { .path = path, .fd = -1 };
	const size_t ulen = strlen(user);
	struct pm_hit h = { 0, 0, 0 };
	struct pm_new n;
	char *mid = NULL;
	struct stat st;
	bool found = false, bad = false;
	char *real = NULL;
	char *tmp = NULL;
	int fd = -1;
	char ebuf[128];
	const char *step = NULL;
	int rv;

	/* Rename onto the target, not onto a symlink that names it. */
	real = realpath(path, NULL);
	if (real == NULL) {
		return pm_io_error(pamh, path, "resolve", errno);
	}
	rv = pm_lock_current(pamh, real, &fd, &st);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	/* Read under the lock: this is the content we replace. */
	s.fd = fd;
	rv = pm_read_whole(pamh, &s, (uint64_t)st.st_size);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (pm_user_searchable(user, ulen)) {
		rv = pm_search(pamh, &s, user, ulen, &h, &found, &bad);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	if (!found || bad) {
		/* all in memory: the hit stays where it is */
		rv = pm_report(pamh, &s, found ? user : NULL, ulen,
			       found ? h.off : UINT64_MAX);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	if (!found) {
		pam_syslog(pamh, LOG_ERR, "%s: no line for user %s", path,
			   user);
		rv = PAM_USER_UNKNOWN;
		goto out;
	}
	{
		const char *line = s.buf + h.at;
		const char *pass = line + ulen + 1;
		const char *c2 = memchr(pass, ':', h.len - ulen - 1);

		if (!pm_storable(pamh, path, pm_lineno(&s, h.at), h.len,
				 (size_t)(c2 - pass), newpw)) {
			rv = PAM_AUTHTOK_ERR;
			goto out;
		}
		/* the file's bytes start at buf[1] */
		n.head = s.buf + 1;
		n.head_len = (size_t)(pass - n.head);
		n.pw = newpw;
		mid = pm_line_rest(c2, (size_t)(line + h.len - c2), &n.mid_len);
		if (mid == NULL) {
			rv = pm_io_error(pamh, path, "rewrite", ENOMEM);
			goto out;
		}
		n.mid = mid;
		n.tail = line + h.len;
		n.tail_len = (size_t)(s.buf + s.len - n.tail);
		n.st = &st;
	}

	rv = PAM_AUTHTOK_ERR;
#ifdef O_TMPFILE
	switch (pm_new_unnamed(real, &n, &tmp, &step)) {
	case 0:
		break;
	case 1:
		if (pm_new_named(real, &n, &tmp, &step) != 0) {
			goto out;
		}
		break;
	default:
		goto out;
	}
#else
	if (pm_new_named(real, &n, &tmp, &step) != 0) {
		goto out;
	}
#endif
	step = "rename the new file onto the";
	if (rename(tmp, real) != 0) {
		int e = errno;

		unlink(tmp);
		errno = e;
		goto out;
	}
	step = NULL;
	pm_sync_dir(real);
	rv = PAM_SUCCESS;
out:
	if (step != NULL) {
		if (errno == ENOMEM) {
			rv = PAM_BUF_ERR;
		}
		pam_syslog(pamh, LOG_ERR, "%s: cannot %s passdb: %s", path,
			   step, pm_strerror(errno, ebuf, sizeof(ebuf)));
	}
	free(tmp);
	free(mid);
	pm_src_free(&s);
	if (fd >= 0) {
		close(fd); /* releases the lock, after the rename */
	}
	free(real);
	return rv;
}
