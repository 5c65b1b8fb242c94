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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* What the scanner learnt about one line while finding its end. */
struct pm_line {
	size_t start;  /* offsets into the passdb data */
	size_t end;    /* of the '\n', or the data's size */
	size_t ncolon; /* ':' bytes in the line */
	bool nul;      /* a NUL byte somewhere in the line */
};

/* Why line L is skipped, or NULL when it is a valid entry. */
static const char *pm_check(const char *base, const struct pm_line *l)
{
	const char *p = base + l->start;
	size_t len = l->end - l->start;

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
	if (l->nul) {
		return "NUL byte in line";
	}
	if (l->ncolon < 2) {
		return "too few fields (expected user:password:service)";
	}
	if (l->ncolon > 2) {
		return "too many fields (expected user:password:service)";
	}
	if (p[0] == ':') {
		return "empty user name";
	}
	return NULL;
}

/*
 * The scanner looks at 64 bytes at a time and gets a bit mask of the bytes
 * that are '\n', ':' or NUL; it branches once per line, not per byte, and
 * counts a line's colons by popcount.  A million-line passdb takes a few
 * milliseconds.
 */
#define PM_BLOCK 64

struct pm_masks {
	uint64_t nl;
	uint64_t colon;
	uint64_t nul;
};

static inline __attribute__((always_inline)) void
pm_block_masks(const char *p, struct pm_masks *m)
{
#if defined(__SSE2__)
	const __m128i nl = _mm_set1_epi8('\n');
	const __m128i colon = _mm_set1_epi8(':');
	const __m128i zero = _mm_setzero_si128();

	m->nl = m->colon = m->nul = 0;
	for (unsigned i = 0; i < PM_BLOCK; i += 16) {
		const __m128i v =
			_mm_loadu_si128((const __m128i *)(const void *)(p + i));

		m->nl |= (uint64_t)(unsigned)_mm_movemask_epi8(
				 _mm_cmpeq_epi8(v, nl))
			 << i;
		m->colon |= (uint64_t)(unsigned)_mm_movemask_epi8(
				    _mm_cmpeq_epi8(v, colon))
			    << i;
		m->nul |= (uint64_t)(unsigned)_mm_movemask_epi8(
				  _mm_cmpeq_epi8(v, zero))
			  << i;
	}
#else
	m->nl = m->colon = m->nul = 0;
	for (unsigned i = 0; i < PM_BLOCK; i++) {
		m->nl |= (uint64_t)(p[i] == '\n') << i;
		m->colon |= (uint64_t)(p[i] == ':') << i;
		m->nul |= (uint64_t)(p[i] == '\0') << i;
	}
#endif
}

/* Bits set in a mask, without relying on a POPCNT instruction. */
static unsigned pm_popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

/*
 * Handles one finished line: tells whether it is USER's (USER has no ':',
 * so a valid line starting "USER:" is USER's).  Almost every line passes
 * the quick test; the others are comments, or are classified by pm_check
 * and logged.
 */
static inline __attribute__((always_inline)) bool
pm_line_done(pam_handle_t *pamh, const struct pm_passdb *db,
	     const struct pm_line *l, unsigned long lineno, const char *user,
	     size_t ulen, struct pm_entry *e)
{
	const char *p = db->data + l->start;
	const size_t len = l->end - l->start;
	const char *c2;

	if (len == 0 || len > PM_LINE_MAX || l->ncolon != 2 || l->nul ||
	    p[0] == '#' || p[0] == ':' || p[len - 1] == '\r') {
		const char *why;

		if (len > 0 && p[0] == '#') {
			return false; /* comment */
		}
		why = pm_check(db->data, l);
		if (why != NULL) {
			pam_syslog(pamh, LOG_WARNING,
				   "%s:%lu: %s, line skipped", db->path,
				   lineno, why);
			return false;
		}
	}
	/* Last byte of the name first: cheap, and it is where numbered
	 * test users differ. */
	if (len <= ulen || p[ulen] != ':' || p[ulen - 1] != user[ulen - 1] ||
	    memcmp(p, user, ulen) != 0) {
		return false;
	}
	c2 = memchr(p + ulen + 1, ':', len - ulen - 1);
	e->line = p;
	e->line_len = len;
	e->lineno = lineno;
	e->pass = p + ulen + 1;
	e->pass_len = (size_t)(c2 - e->pass);
	e->service = c2 + 1;
	e->service_len = (size_t)(p + len - e->service);
	return true;
}

bool pm_passdb_find(pam_handle_t *pamh, const struct pm_passdb *db,
		    const char *user, struct pm_entry *e)
{
	const size_t ulen = strlen(user);
	const char *base = db->data;
	const size_t size = db->size;
	struct pm_line l = { 0, 0, 0, false };
	unsigned long lineno = 0;
	/* An empty name, or one with ':' or '\n', can match no line; still
	 * scan, so that bad lines are reported the same way. */
	const size_t mlen =
		ulen == 0 || strpbrk(user, ":\n") != NULL ? SIZE_MAX : ulen;

	for (size_t blk = 0; blk < size; blk += PM_BLOCK) {
		struct pm_masks m;
		uint64_t nl;

		if (size - blk >= PM_BLOCK) {
			pm_block_masks(base + blk, &m);
		} else {
			/* Pad the tail with a byte that is no event. */
			char tail[PM_BLOCK];

			memset(tail, 'x', sizeof(tail));
			memcpy(tail, base + blk, size - blk);
			pm_block_masks(tail, &m);
			explicit_bzero(tail, sizeof(tail)); /* may hold a password */
		}
		for (nl = m.nl; nl != 0; nl &= nl - 1) {
			unsigned bit = (unsigned)__builtin_ctzll(nl);
			/* bits 0..bit */
			uint64_t upto = bit == 63 ? ~0ULL : (2ULL << bit) - 1;

			l.ncolon += pm_popcount64(m.colon & upto);
			m.colon &= ~upto;
			if (m.nul != 0) { /* rare: most blocks have none */
				l.nul = l.nul || (m.nul & upto) != 0;
				m.nul &= ~upto;
			}
			l.end = blk + bit;
			lineno++;
			if (pm_line_done(pamh, db, &l, lineno, user, mlen,
					 e)) {
				return true;
			}
			l.start = l.end + 1;
			l.ncolon = 0;
			l.nul = false;
		}
		l.ncolon += pm_popcount64(m.colon);
		l.nul = l.nul || m.nul != 0;
	}
	if (l.start < size) {
		l.end = size;
		lineno++;
		return pm_line_done(pamh, db, &l, lineno, user, mlen, e);
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
