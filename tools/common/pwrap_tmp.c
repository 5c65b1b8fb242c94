/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tools' private directories (pam_wrapper(1)'s --user directory,
 * pamtest(1)'s and pamtest explore's): where they are made, how they are
 * held, written and removed.  They hold a cleartext passdb and the service
 * files libpam reads, and the tools often run as root (`sudo -E` keeps the
 * caller's TMPDIR), so:
 *
 * - They are made only in a trusted base, by the wrapper's own rule
 *   (src/common/pwrap_base.c): a directory owned by this process's user or
 *   root, writable by nobody else unless sticky; otherwise the next base,
 *   said once per process.  In such a base no other user can rename or
 *   replace what we make, and our directory (0700) is ours alone: that is
 *   what lets the wrapper and libpam be given its path
 *   (PAM_WRAPPER_SERVICE_DIR, passdb=), which they open by path at every
 *   transaction.  The directories above the base are trusted as the
 *   wrapper trusts them (pwrap_base.c says why).
 * - Each is held by descriptor from the moment it is made, with the
 *   descriptor of the base it is in and its device and inode; right after
 *   making it the path is checked to lead to it.  pwrap_tmp_write() writes
 *   through the descriptor (pamtest's passdb and service files); what is
 *   written by path into it (the launcher's, the --system copy) is safe
 *   there for the reasons above.
 * - Removal never goes by path: the directory is emptied through its own
 *   descriptor (no link followed, pwrap_rmtree_at), and its name is
 *   removed from the base's descriptor only while it still names the
 *   directory made (pwrap_rmtree_in); otherwise the name is left alone and
 *   the tool says so.
 *
 * Directories made inside another one of ours (pamtest's scenarios below
 * its top directory) use that one, held, as their base.  Problems are
 * reported with warn()/warnx(); nothing here exits.
 */
#define _GNU_SOURCE
#include "pwrap_tool.h"
#include "pwrap_base.h"

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by pwrap_set_tmpbase(): where pwrap_tmp_make() creates, or NULL. */
static const struct pwrap_tmp *tmpbase;

void pwrap_set_tmpbase(const struct pwrap_tmp *dir)
{
	tmpbase = dir;
}

/* Whether fd is still the directory dev/ino (a descriptor the program
 * closed and whose number was reused is not). */
static bool held(int fd, dev_t dev, ino_t ino)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev &&
	       st.st_ino == ino;
}

/*
 * A descriptor (a duplicate, the caller's to close) of the directory dev/ino
 * that fd was opened on and that path (len bytes of it) names: fd itself
 * while it is still that directory, else, if the program closed it (or put
 * another file on its number), the path opened again, while it leads to
 * the same directory.  -1 with errno (ESTALE: it does not) else.
 */
static int reopen(int fd, const char *path, size_t len, dev_t dev,
		  ino_t ino)
{
	char *copy;

	if (held(fd, dev, ino)) {
		return fcntl(fd, F_DUPFD_CLOEXEC, 0);
	}
	copy = strndup(path, len > 0 ? len : 1);
	if (copy == NULL) {
		return -1;
	}
	fd = open(copy, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd >= 0 && !held(fd, dev, ino)) {
		close(fd);
		fd = -1;
		errno = ESTALE;
	}
	return fd;
}

/* Frees t, closing its descriptors only while they are still ours (a
 * number a module closed and something else got is not ours to close). */
static void tmp_free(struct pwrap_tmp *t)
{
	if (t == NULL) {
		return;
	}
	if (held(t->fd, t->dev, t->ino)) {
		close(t->fd);
	}
	if (held(t->parent, t->pdev, t->pino)) {
		close(t->parent);
	}
	free(t->path);
	free(t);
}

/*
 * Makes <base>/<prefix>.XXXXXX in the open base directory pfd (whose path
 * is base) and holds it.  mkdtemp() goes by path, so what it made is
 * opened again from pfd (no link followed): a base path that led elsewhere
 * by then is found out (the name is random), as is anything but a 0700
 * directory of ours.  *owner gets its owner.  NULL with errno set; nothing
 * of ours is left then.
 */
static struct pwrap_tmp *make_in(int pfd, const char *base,
				 const char *prefix, uid_t *owner)
{
	struct pwrap_tmp *t = calloc(1, sizeof(*t));
	struct stat st, pst, pathst;
	int err = ENOMEM;

	if (t == NULL) {
		return NULL;
	}
	t->fd = -1;
	t->parent = -1;
	if (asprintf(&t->path, "%s/%s.XXXXXX", strcmp(base, "/") == 0 ? ""
		     : base, prefix) < 0) {
		t->path = NULL;
		goto fail;
	}
	if (mkdtemp(t->path) == NULL) {
		err = errno;
		goto fail;
	}
	t->name = strrchr(t->path, '/') + 1;
	t->fd = openat(pfd, t->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		       O_CLOEXEC);
	if (t->fd < 0 || fstat(t->fd, &st) != 0 || fstat(pfd, &pst) != 0 ||
	    stat(t->path, &pathst) != 0) {
		err = t->fd < 0 && errno == ENOENT ? ESTALE : errno;
		goto fail;
	}
	if ((st.st_mode & 07777) != 0700 || pathst.st_dev != st.st_dev ||
	    pathst.st_ino != st.st_ino) {
		/* not what mkdtemp made through base's path */
		err = ESTALE;
		goto fail;
	}
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->pdev = pst.st_dev;
	t->pino = pst.st_ino;
	t->parent = fcntl(pfd, F_DUPFD_CLOEXEC, 0);
	if (t->parent < 0) {
		err = errno;
		(void)pwrap_rmtree_in(pfd, t->name, &st);
		goto fail;
	}
	*owner = st.st_uid;
	return t;
fail:
	if (t->fd >= 0) {
		/* ours, held: only that empty directory goes */
		(void)fstat(t->fd, &st);
		(void)pwrap_rmtree_in(pfd, t->name, &st);
		close(t->fd);
		t->fd = -1;
	}
	tmp_free(t);
	errno = err;
	return NULL;
}

/* Appends "; " (unless first) and "<label><path>: <text>" (or, for
 * `paren`, "<label><path> (<text>)") to b. */
static void note(struct pwrap_buf *b, const struct pwrap_base *base,
		 const char *text, bool paren)
{
	pwrap_buf_fmt(b, paren ? "%s%s%s (%s)" : "%s%s%s: %s",
		      b->len > 0 ? "; " : "", base->label, base->path, text);
}

/*
 * Tries the bases in order; said once per process when a base was not
 * trusted.  The first base that is trusted and takes the directory wins.
 */
static struct pwrap_tmp *make_trusted(const char *prefix)
{
	static bool said;
	struct pwrap_base bases[PWRAP_MAX_BASES];
	struct pwrap_buf why = {0}, untrusted = {0};
	struct pwrap_tmp *t = NULL;
	char *resolved = NULL;
	char tmpnote[512];
	size_t n, i;

	n = pwrap_bases(bases, &resolved, PWRAP_BASES_RELATIVE, tmpnote,
			sizeof(tmpnote));
	if (tmpnote[0] != '\0') {
		pwrap_buf_fmt(&why, "%s", tmpnote);
	}
	for (i = 0; i < n && t == NULL; i++) {
		const struct pwrap_base *b = &bases[i];
		char bad[256];
		struct stat bst;
		uid_t mine = (uid_t)-1;
		int pfd = open(b->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (pfd < 0 || fstat(pfd, &bst) != 0) {
			note(&why, b, strerror(errno), false);
		} else if (pwrap_base_distrust(&bst, mine, bad, sizeof(bad))) {
			note(&untrusted, b, bad, true);
		} else if ((t = make_in(pfd, b->path, prefix, &mine)) == NULL) {
			note(&why, b, strerror(errno), false);
		} else if (pwrap_base_distrust(&bst, mine, bad, sizeof(bad))) {
			/* not root's, and not the owner of what we made */
			(void)pwrap_tmp_remove(t);
			t = NULL;
			note(&untrusted, b, bad, true);
		}
		if (pfd >= 0) {
			close(pfd);
		}
	}
	if (untrusted.len > 0 && !said && !untrusted.failed) {
		said = true;
		if (t != NULL) {
			warnx("not using %s: only " PWRAP_BASE_RULE "; private "
			      "directory in %s", untrusted.p, bases[i - 1].path);
		}
	}
	if (t == NULL) {
		if (untrusted.len > 0) {
			pwrap_buf_fmt(&why, "%snot trusted: %s",
				      why.len > 0 ? "; " : "", untrusted.p);
		}
		warnx("cannot create a private directory (%s.XXXXXX): %s",
		      prefix, why.p != NULL ? why.p : "no base");
	}
	free(resolved);
	pwrap_buf_free(&why);
	pwrap_buf_free(&untrusted);
	return t;
}

struct pwrap_tmp *pwrap_tmp_make(const char *prefix)
{
	struct pwrap_tmp *t;
	uid_t owner;
	int fd;

	if (tmpbase == NULL) {
		return make_trusted(prefix);
	}
	/* inside one of ours: it is the base (a module may have closed
	 * our descriptor of it meanwhile) */
	fd = reopen(tmpbase->fd, tmpbase->path, strlen(tmpbase->path),
		    tmpbase->dev, tmpbase->ino);
	t = fd >= 0 ? make_in(fd, tmpbase->path, prefix, &owner) : NULL;
	if (t == NULL) {
		warn("cannot create a private directory in %s", tmpbase->path);
	}
	if (fd >= 0) {
		close(fd);
	}
	return t;
}

void pwrap_tmp_keep(struct pwrap_tmp *t)
{
	tmp_free(t);
}

int pwrap_tmp_remove(struct pwrap_tmp *t)
{
	struct stat made;
	int parent, rc = 0, err = 0;

	if (t == NULL) {
		return 0;
	}
	/* what we made, wherever it is now: its contents go through our
	 * own descriptor (the passdb is never left behind) */
	if (held(t->fd, t->dev, t->ino)) {
		int dup = fcntl(t->fd, F_DUPFD_CLOEXEC, 0);

		if (dup >= 0) {
			(void)pwrap_rmtree_at(dup, NULL);	/* closes dup */
		}
	}
	/* its name, only while it names what we made */
	memset(&made, 0, sizeof(made));
	made.st_dev = t->dev;
	made.st_ino = t->ino;
	/* the base: what precedes the last '/' of the path ("/" for a
	 * directory right below /) */
	parent = reopen(t->parent, t->path,
			(size_t)(t->name - 1 - t->path), t->pdev, t->pino);
	if (parent < 0 || pwrap_rmtree_in(parent, t->name, &made) != 0) {
		err = errno;
		rc = -1;
	}
	if (parent >= 0) {
		close(parent);
	}
	if (rc != 0) {
		warnx("could not remove %s: %s", t->path,
		      err == ESTALE ? "it is no longer the directory made there "
				      "(left alone)" : strerror(err));
	}
	tmp_free(t);
	return rc;
}
