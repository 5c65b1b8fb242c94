/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's passdb: loading, lookup and the locked, atomic rewrite used
 * by password changes (see passdb.h for the contract).
 *
 * Concurrency: readers never lock.  A writer takes flock(LOCK_EX) on the
 * passdb itself, checks that the path still names the inode it locked (an
 * earlier writer may have renamed a new file over it while we waited),
 * writes the new content to a mkstemp file in the same directory and renames
 * it over the passdb.  Readers therefore always see a whole old or a whole
 * new file, and concurrent writers are serialised without losing updates.
 * Nothing in this file logs a password or a line's content.
 */
#define _GNU_SOURCE
#include "passdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_ext.h>

#define PM_STR2(x) #x
#define PM_STR(x) PM_STR2(x)

/* How often a writer re-opens a passdb that was replaced while it waited
 * for the lock before giving up (each retry means another writer finished,
 * so this only bounds pathological churn). */
#define PM_LOCK_RETRIES 100000

static const char *pm_strerror(int errnum, char *buf, size_t len)
{
	/* GNU strerror_r: thread-safe, may return a static string. */
	return strerror_r(errnum, buf, len);
}

static int pm_open_error(pam_handle_t *pamh, const char *path,
			 const char *what, int errnum)
{
	char ebuf[128];

	pam_syslog(pamh, LOG_ERR, "%s: cannot %s passdb: %s", path, what,
		   pm_strerror(errnum, ebuf, sizeof(ebuf)));
	return errnum == ENOMEM ? PAM_BUF_ERR : PAM_AUTHINFO_UNAVAIL;
}

/* Reads FD to its end into a malloc'd buffer (files that cannot be
 * mapped: pipes, /proc files, character devices). */
static int pm_read_all(pam_handle_t *pamh, const char *path, int fd,
		       struct pm_passdb *db)
{
	size_t cap = 0;

	for (;;) {
		ssize_t n;

		if (db->size == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nbuf = malloc(ncap);

			if (nbuf == NULL || ncap < cap) {
				free(nbuf);
				return pm_open_error(pamh, path, "read",
						     ENOMEM);
			}
			if (db->data != NULL) {
				memcpy(nbuf, db->data, db->size);
				explicit_bzero(db->data, db->size);
				free(db->data);
			}
			db->data = nbuf;
			cap = ncap;
		}
		n = read(fd, db->data + db->size, cap - db->size);
		if (n == 0) {
			return PAM_SUCCESS;
		}
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return pm_open_error(pamh, path, "read", errno);
		}
		db->size += (size_t)n;
	}
}

int pm_passdb_load(pam_handle_t *pamh, const char *path, int fd,
		   struct pm_passdb *db)
{
	int own_fd = -1;
	struct stat st;
	int rv = PAM_SUCCESS;

	db->path = path;
	db->data = NULL;
	db->size = 0;
	db->mapped = false;
	db->has_nul = false;

	if (fd < 0) {
		own_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (own_fd < 0) {
			return pm_open_error(pamh, path, "open", errno);
		}
		fd = own_fd;
	}
	if (fstat(fd, &st) != 0) {
		rv = pm_open_error(pamh, path, "stat", errno);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rv = pm_open_error(pamh, path, "read", EISDIR);
		goto out;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m;

		if ((uintmax_t)st.st_size > SIZE_MAX) {
			rv = pm_open_error(pamh, path, "map", EFBIG);
			goto out;
		}
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			 fd, 0);
		if (m != MAP_FAILED) {
			db->data = m;
			db->size = (size_t)st.st_size;
			db->mapped = true;
		}
	}
	/* Empty regular files need no buffer; the rest are read whole. */
	if (!db->mapped && !(S_ISREG(st.st_mode) && st.st_size == 0)) {
		rv = pm_read_all(pamh, path, fd, db);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	/* One vectorised pass instead of a NUL check on every line. */
	db->has_nul = db->size > 0 && memchr(db->data, '\0', db->size) != NULL;
out:
	if (own_fd >= 0) {
		close(own_fd);
	}
	if (rv != PAM_SUCCESS) {
		pm_passdb_close(db);
	}
	return rv;
}

void pm_passdb_close(struct pm_passdb *db)
{
	if (db->data != NULL) {
		if (db->mapped) {
			/* Page-cache pages, not a private copy of secrets. */
			munmap(db->data, db->size);
		} else {
			explicit_bzero(db->data, db->size);
			free(db->data);
		}
	}
	db->data = NULL;
	db->size = 0;
	db->mapped = false;
	db->has_nul = false;
}

static bool pm_is_blank(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
			return false;
		}
	}
	return true;
}

/*
 * Splits a non-comment line into its three fields.  Returns NULL and fills
 * E (except lineno) when the line is valid, else the reason it is skipped.
 */
static const char *pm_split(const struct pm_passdb *db, const char *p,
			    size_t len, struct pm_entry *e)
{
	const char *end = p + len;
	const char *c1;
	const char *c2;

	if (len == 0 || ((p[0] == ' ' || p[0] == '\t' || p[0] == '\r') &&
			 pm_is_blank(p, len))) {
		return "blank line";
	}
	if (len > PM_LINE_MAX) {
		return "line longer than " PM_STR(PM_LINE_MAX) " bytes";
	}
	if (p[len - 1] == '\r') {
		return "CRLF line ending (line ends with CR)";
	}
	if (db->has_nul && memchr(p, '\0', len) != NULL) {
		return "NUL byte in line";
	}
	c1 = memchr(p, ':', len);
	c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
	if (c2 == NULL) {
		return "too few fields (expected user:password:service)";
	}
	if (memchr(c2 + 1, ':', (size_t)(end - c2 - 1)) != NULL) {
		return "too many fields (expected user:password:service)";
	}
	if (c1 == p) {
		return "empty user name";
	}
	e->line = p;
	e->line_len = len;
	e->pass = c1 + 1;
	e->pass_len = (size_t)(c2 - c1 - 1);
	e->service = c2 + 1;
	e->service_len = (size_t)(end - c2 - 1);
	return NULL;
}

bool pm_passdb_find(pam_handle_t *pamh, const struct pm_passdb *db,
		    const char *user, struct pm_entry *e)
{
	const size_t ulen = strlen(user);
	const char *p = db->data;
	const char *const end = db->data + db->size;
	unsigned long lineno = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const size_t len = (size_t)((nl ? nl : end) - p);
		const char *why;

		lineno++;
		if (len == 0 || p[0] != '#') {
			why = pm_split(db, p, len, e);
			if (why != NULL) {
				pam_syslog(pamh, LOG_WARNING,
					   "%s:%lu: %s, line skipped",
					   db->path, lineno, why);
			} else if ((size_t)(e->pass - 1 - p) == ulen &&
				   memcmp(p, user, ulen) == 0) {
				e->lineno = lineno;
				return true;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return false;
}

/*
 * Opens PATH and takes an exclusive flock on it, making sure the locked
 * inode is still the one PATH names.  Fills *FD and *ST.
 */
static int pm_lock_current(pam_handle_t *pamh, const char *path, int *fd,
			   struct stat *st)
{
	char ebuf[128];

	for (long tries = 0; tries < PM_LOCK_RETRIES; tries++) {
		struct stat now;
		int lfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		if (lfd < 0) {
			return pm_open_error(pamh, path, "open", errno);
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
			int rv = pm_open_error(pamh, path, "stat", errno);

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

/* Checks that NEWPW fits in USER's passdb line E; logs why not. */
static bool pm_storable(pam_handle_t *pamh, const char *path,
			const struct pm_entry *e, size_t ulen,
			const char *newpw)
{
	size_t plen = strlen(newpw);

	if (strpbrk(newpw, ":\n\r") != NULL) {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password contains ':', CR or LF, "
			   "which the passdb cannot store",
			   path, e->lineno);
		return false;
	}
	if (plen > PM_LINE_MAX || ulen + plen + e->service_len + 2 >
					  PM_LINE_MAX) {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password would make the line longer "
			   "than " PM_STR(PM_LINE_MAX) " bytes",
			   path, e->lineno);
		return false;
	}
	return true;
}

/* Writes DB with line E's password replaced by NEWPW to the open TFD. */
static int pm_write_changed(int tfd, const struct pm_passdb *db,
			    const struct pm_entry *e, const char *newpw)
{
	const char *after = e->pass + e->pass_len; /* ":service..." */
	const char *end = db->data + db->size;

	if (pm_write_all(tfd, db->data, (size_t)(e->pass - db->data)) != 0 ||
	    pm_write_all(tfd, newpw, strlen(newpw)) != 0 ||
	    pm_write_all(tfd, after, (size_t)(end - after)) != 0) {
		return -1;
	}
	return 0;
}

/* Best effort: makes the rename durable. */
static void pm_sync_dir(const char *path)
{
	char *copy = strdup(path);
	char *slash = copy ? strrchr(copy, '/') : NULL;
	int dfd;

	if (slash == NULL) {
		free(copy);
		return;
	}
	if (slash == copy) {
		slash[1] = '\0';
	} else {
		slash[0] = '\0';
	}
	dfd = open(copy, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(copy);
}

int pm_passdb_set_password(pam_handle_t *pamh, const char *path,
			   const char *user, const char *newpw)
{
	struct pm_passdb db = PM_PASSDB_INIT;
	struct pm_entry e;
	struct stat st;
	char *real = NULL;
	char *tmp = NULL;
	int fd = -1;
	int tfd = -1;
	bool renamed = false;
	char ebuf[128];
	const char *step = NULL;
	int rv;

	/* Rename onto the target, not onto a symlink that names it. */
	real = realpath(path, NULL);
	if (real == NULL) {
		return pm_open_error(pamh, path, "resolve", errno);
	}
	rv = pm_lock_current(pamh, real, &fd, &st);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		pam_syslog(pamh, LOG_ERR,
			   "%s: passdb is not a regular file, cannot rewrite",
			   path);
		rv = PAM_AUTHTOK_ERR;
		goto out;
	}
	/* Read under the lock: this is the content we replace. */
	rv = pm_passdb_load(pamh, path, fd, &db);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (!pm_passdb_find(pamh, &db, user, &e)) {
		pam_syslog(pamh, LOG_ERR, "%s: no line for user %s", path,
			   user);
		rv = PAM_USER_UNKNOWN;
		goto out;
	}
	if (!pm_storable(pamh, path, &e, strlen(user), newpw)) {
		rv = PAM_AUTHTOK_ERR;
		goto out;
	}

	rv = PAM_AUTHTOK_ERR;
	if (asprintf(&tmp, "%s.XXXXXX", real) < 0) {
		tmp = NULL;
		rv = PAM_BUF_ERR;
		goto out;
	}
	step = "create a temporary file for";
	tfd = mkostemp(tmp, O_CLOEXEC);
	if (tfd < 0) {
		free(tmp);
		tmp = NULL; /* nothing to unlink */
		goto out;
	}
	step = "set the mode of the new";
	if (fchmod(tfd, st.st_mode & 07777) != 0) {
		goto out;
	}
	/* Keep the owner when we are allowed to (root rewriting a user's
	 * file); an unprivileged writer owns the file it rewrites anyway. */
	if (geteuid() == 0) {
		(void)fchown(tfd, st.st_uid, st.st_gid);
	}
	step = "write the new";
	if (pm_write_changed(tfd, &db, &e, newpw) != 0 || fsync(tfd) != 0) {
		goto out;
	}
	step = "close the new";
	if (close(tfd) != 0) {
		tfd = -1;
		goto out;
	}
	tfd = -1;
	step = "rename the new file onto the";
	if (rename(tmp, real) != 0) {
		goto out;
	}
	renamed = true;
	step = NULL;
	pm_sync_dir(real);
	rv = PAM_SUCCESS;
out:
	if (step != NULL) {
		pam_syslog(pamh, LOG_ERR, "%s: cannot %s passdb: %s", path,
			   step, pm_strerror(errno, ebuf, sizeof(ebuf)));
	}
	if (tfd >= 0) {
		close(tfd);
	}
	if (tmp != NULL && !renamed) {
		unlink(tmp);
	}
	free(tmp);
	pm_passdb_close(&db);
	if (fd >= 0) {
		close(fd); /* releases the lock, after the rename */
	}
	free(real);
	return rv;
}
