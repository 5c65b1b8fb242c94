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
		if (lfd < 0) {
			*fd = -1; /* reads as empty: nothing to lock */
			return PAM_SUCCESS;
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

/* The new file: its content (holding passwords) and the passdb's stat
 * (mode and owner). */
struct pm_new {
	const char *data;
	size_t len;
	const struct stat *st;
};

/* Writes (OUT not NULL) or counts the flags field F[0, LEN) as a changed
 * password leaves it: ":flags" without must_change (done with) and empty
 * items, nothing when no flag is left.  Returns the bytes. */
static size_t pm_put_flags(char *out, const char *f, size_t len)
{
	const char *end = f + len;
	size_t n = 0;

	while (f < end) {
		const char *comma = memchr(f, ',', (size_t)(end - f));
		size_t k = (size_t)((comma != NULL ? comma : end) - f);

		if (k > 0 && !(k == 11 && memcmp(f, "must_change", 11) == 0)) {
			if (out != NULL) {
				out[n] = n > 0 ? ',' : ':';
				memcpy(out + n + 1, f, k);
			}
			n += k + 1;
		}
		f += k + (comma != NULL ? 1 : 0);
	}
	return n;
}

/* One line of the user in the all-in-memory source: where it is (the
 * file's bytes start at buf[1]) and its fields. */
struct pm_line {
	size_t at, len;
	struct pm_fields f;
};

/* The length of LINE rewritten with a password of PLEN bytes, without its
 * '\n'. */
static size_t pm_new_len(const struct pm_line *l, size_t ulen, size_t plen)
{
	return ulen + 1 + plen + 1 + l->f.service_len +
	       (l->f.flags != NULL ? pm_put_flags(NULL, l->f.flags,
						  l->f.flags_len)
				   : 0);
}

/*
 * Checks that NEWPW can be stored in each of the user's lines (NLINES >
 * 0; line numbers for the log from S): no ':', CR or LF (they would cut
 * the line), no leading blank (reading drops it) and no line over
 * PM_LINE_MAX.
 */
static bool pm_storable(pam_handle_t *pamh, const struct pm_src *s,
			const struct pm_line *lines, size_t nlines,
			size_t ulen, const char *newpw)
{
	size_t plen = strlen(newpw);

	if (strpbrk(newpw, ":\n\r") != NULL) {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password contains ':', CR or LF, "
			   "which the passdb cannot store",
			   s->path, pm_lineno(s, lines[0].at));
		return false;
	}
	if (newpw[0] == ' ' || newpw[0] == '\t') {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password starts with a blank, which "
			   "reading the passdb drops",
			   s->path, pm_lineno(s, lines[0].at));
		return false;
	}
	for (size_t i = 0; i < nlines; i++) {
		if (plen > PM_LINE_MAX ||
		    pm_new_len(&lines[i], ulen, plen) > PM_LINE_MAX) {
			pam_syslog(pamh, LOG_ERR,
				   "%s:%lu: new password would make the line "
				   "longer than " PM_STR(PM_LINE_MAX) " bytes",
				   s->path, pm_lineno(s, lines[i].at));
			return false;
		}
	}
	return true;
}

/* The new content: S's file with each of LINES rewritten for NEWPW
 * (malloc'd into N->data; it holds passwords).  -1 when out of memory. */
static int pm_new_content(const struct pm_src *s, const struct pm_line *lines,
			  size_t nlines, const char *user, const char *newpw,
			  struct pm_new *n)
{
	size_t ulen = strlen(user), plen = strlen(newpw);
	size_t total = s->len - 1, from = 1, o = 0;
	char *out;

	for (size_t i = 0; i < nlines; i++) {
		total += pm_new_len(&lines[i], ulen, plen) + 1 - lines[i].len;
		total -= lines[i].at + lines[i].len < s->len; /* its '\n' */
	}
	out = malloc(total + 1);
	if (out == NULL) {
		return -1;
	}
	for (size_t i = 0; i < nlines; i++) {
		const struct pm_line *l = &lines[i];

		memcpy(out + o, s->buf + from, l->at - from);
		o += l->at - from;
		o += (size_t)sprintf(out + o, "%s:%s:", user, newpw);
		memcpy(out + o, l->f.service, l->f.service_len);
		o += l->f.service_len;
		if (l->f.flags != NULL) {
			o += pm_put_flags(out + o, l->f.flags, l->f.flags_len);
		}
		out[o++] = '\n';
		from = l->at + l->len + (l->at + l->len < s->len);
	}
	memcpy(out + o, s->buf + from, s->len - from);
	o += s->len - from;
	n->data = out;
	n->len = o;
	return 0;
}

/* Gives the open new file TFD the mode, owner and group of the passdb,
 * writes N to it and syncs it.  *STEP names what failed. */
static int pm_fill_new(int tfd, const struct pm_new *n, const char **step)
{
	struct stat st;

	/* A passdb never changes hands silently: when the new file did not
	 * get the passdb's owner and group (root rewriting a user's file, a
	 * set-group-ID directory), it is given them, or the rewrite fails and
	 * the passdb stays as it was. */
	*step = "give the passdb's owner and group to the new";
	if (fstat(tfd, &st) != 0) {
		return -1;
	}
	if ((st.st_uid != n->st->st_uid || st.st_gid != n->st->st_gid) &&
	    fchown(tfd, n->st->st_uid, n->st->st_gid) != 0) {
		return -1;
	}
	*step = "set the mode of the new";
	if (fchmod(tfd, n->st->st_mode & 07777) != 0) {
		return -1;
	}
	*step = "write the new";
	if (pm_write_all(tfd, n->data, n->len) != 0 || fsync(tfd) != 0) {
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

/*
 * Every line of USER in the all-in-memory S that is read, in file order,
 * in *LINES (malloc'd, *NLINES of them; none: NULL), with the reports a
 * lookup makes (the skipped lines before the first, its note, or every
 * skipped line when there is none).
 */
static int pm_user_lines(pam_handle_t *pamh, struct pm_src *s,
			 const char *user, struct pm_line **lines,
			 size_t *nlines)
{
	const size_t ulen = strlen(user);
	size_t from = 0;
	int rv = PAM_SUCCESS;

	*lines = NULL;
	*nlines = 0;
	while (pm_user_searchable(user, ulen)) {
		struct pm_hit h;
		struct pm_line *more;
		bool found = false, bad = false;

		rv = pm_search(pamh, s, user, ulen, from, &h, &found, &bad);
		if (rv != PAM_SUCCESS || !found) {
			break;
		}
		if (*nlines == 0) {
			/* all in memory: the hits stay where they are */
			rv = pm_report_hit(pamh, s, user, ulen, &h, bad);
			if (rv != PAM_SUCCESS) {
				break;
			}
		}
		more = realloc(*lines, (*nlines + 1) * sizeof(**lines));
		if (more == NULL) {
			rv = pm_io_error(pamh, s->path, "rewrite", ENOMEM);
			break;
		}
		*lines = more;
		more[*nlines].at = h.at;
		more[*nlines].len = h.len;
		pm_split(s->buf + h.at, h.len, ulen, &more[*nlines].f);
		(*nlines)++;
		from = h.at + h.len; /* its '\n' starts the next search */
	}
	if (rv == PAM_SUCCESS && *nlines == 0) {
		rv = pm_report(pamh, s, NULL, ulen, UINT64_MAX);
	}
	return rv;
}

int pm_passdb_set_password(pam_handle_t *pamh, const char *path,
			   const char *user, const char *newpw)
{
	struct pm_src s = { .path = path, .fd = -1 };
	struct pm_new n = { NULL, 0, NULL };
	struct pm_line *lines = NULL;
	size_t nlines = 0;
	struct stat st;
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
	if (fd >= 0) {
		/* Read under the lock: this is the content we replace. */
		s.fd = fd;
		rv = pm_read_whole(pamh, &s, (uint64_t)st.st_size);
		if (rv == PAM_SUCCESS) {
			rv = pm_user_lines(pamh, &s, user, &lines, &nlines);
		}
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	if (nlines == 0) {
		pam_syslog(pamh, LOG_ERR, "%s: no line for user %s", path,
			   user);
		rv = PAM_USER_UNKNOWN;
		goto out;
	}
	if (!pm_storable(pamh, &s, lines, nlines, strlen(user), newpw)) {
		rv = PAM_AUTHTOK_ERR;
		goto out;
	}
	if (pm_new_content(&s, lines, nlines, user, newpw, &n) != 0) {
		rv = pm_io_error(pamh, path, "rewrite", ENOMEM);
		goto out;
	}
	n.st = &st;

	/* what upstream answers when it cannot write the new file */
	rv = PAM_BUF_ERR;
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
		pam_syslog(pamh, LOG_ERR, "%s: cannot %s passdb: %s", path,
			   step, pm_strerror(errno, ebuf, sizeof(ebuf)));
	}
	free(tmp);
	if (n.data != NULL) {
		explicit_bzero((char *)n.data, n.len);
		free((char *)n.data);
	}
	free(lines);
	pm_src_free(&s);
	if (fd >= 0) {
		close(fd); /* releases the lock, after the rename */
	}
	free(real);
	return rv;
}
