/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's passdb: the streaming lookup and the locked, atomic rewrite
 * used by password changes (see passdb.h for the contract).
 *
 * A lookup reads the file through one buffer (struct pm_src) and searches
 * each buffer-full with memmem() for "\nUSER:"; only those candidate lines
 * are checked against the line rules (pm_classify), the first valid one is
 * the answer, and nothing else of the file is parsed.  Line numbers exist
 * only for messages: when something must be logged, pm_report() reads the
 * file again from its start and counts lines.  Nothing survives a call, so
 * libpam may unload the module at every pam_end, threads and fork() need no
 * care, and a file changed under a reader only changes what it reads.
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
#define _GNU_SOURCE /* memmem, asprintf, mkostemp, O_TMPFILE */
#include "passdb.h"

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

#include <security/pam_ext.h>

#define PM_STR2(x) #x
#define PM_STR(x) PM_STR2(x)

/* How often a writer re-opens a passdb that was replaced while it waited
 * for the lock before giving up (each retry means another writer finished,
 * so this only bounds pathological churn). */
#define PM_LOCK_RETRIES 100000

/* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
 * right after, like anything that is not a regular file). */
#define PM_OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

/* Thread-safe strerror; the result is BUF or a static string. */
static const char *pm_strerror(int errnum, char *buf, size_t len)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
	return strerror_r(errnum, buf, len); /* the GNU variant */
#else
	if (strerror_r(errnum, buf, len) != 0) {
		snprintf(buf, len, "error %d", errnum);
	}
	return buf;
#endif
}

static int pm_io_error(pam_handle_t *pamh, const char *path, const char *what,
		       int errnum)
{
	char ebuf[128];

	pam_syslog(pamh, LOG_ERR, "%s: cannot %s passdb: %s", path, what,
		   pm_strerror(errnum, ebuf, sizeof(ebuf)));
	return errnum == ENOMEM ? PAM_BUF_ERR : PAM_AUTHINFO_UNAVAIL;
}

static int pm_too_big(pam_handle_t *pamh, const char *path)
{
	pam_syslog(pamh, LOG_ERR,
		   "%s: passdb is larger than the limit of %llu bytes",
		   path, (unsigned long long)PM_PASSDB_MAX);
	return PAM_AUTHINFO_UNAVAIL;
}

/*
 * Opens PATH for reading and checks what it is: only a regular file of at
 * most PM_PASSDB_MAX bytes is a passdb.  On PAM_SUCCESS *FD (blocking
 * again) and *ST are filled; otherwise the error is logged.
 */
static int pm_open(pam_handle_t *pamh, const char *path, int *fd,
		   struct stat *st)
{
	*fd = open(path, PM_OPEN_FLAGS);
	if (*fd < 0) {
		return pm_io_error(pamh, path, "open", errno);
	}
	if (fstat(*fd, st) != 0) {
		int rv = pm_io_error(pamh, path, "stat", errno);

		close(*fd);
		*fd = -1;
		return rv;
	}
	if (!S_ISREG(st->st_mode)) {
		pam_syslog(pamh, LOG_ERR, "%s: passdb is not a regular file",
			   path);
		close(*fd);
		*fd = -1;
		return PAM_AUTHINFO_UNAVAIL;
	}
	if ((unsigned long long)st->st_size > PM_PASSDB_MAX) {
		close(*fd);
		*fd = -1;
		return pm_too_big(pamh, path);
	}
	/* O_NONBLOCK was for open(): it has no effect on reads of a
	 * regular file. */
	return PAM_SUCCESS;
}

/* ---- line rules ------------------------------------------------------ */

/* Why a line is skipped; PM_VALID and PM_COMMENT are not logged. */
enum pm_why {
	PM_VALID,
	PM_COMMENT,
	PM_LONG,
	PM_BLANK,
	PM_CRLF,
	PM_NUL,
	PM_FEW,
	PM_MANY,
	PM_NOUSER,
	PM_FLAG,
	PM_NWHY
};

static const char *const pm_why_text[PM_NWHY] = {
	[PM_VALID] = "valid",
	[PM_COMMENT] = "comment",
	[PM_LONG] = "line longer than " PM_STR(PM_LINE_MAX) " bytes",
	[PM_BLANK] = "blank line",
	[PM_CRLF] = "CRLF line ending (line ends with CR)",
	[PM_NUL] = "NUL byte in line",
	[PM_FEW] = "too few fields (expected user:password:service[:flags])",
	[PM_MANY] = "too many fields (expected user:password:service[:flags])",
	[PM_NOUSER] = "empty user name",
	[PM_FLAG] = "unknown account flag (known: expired, must_change, "
		    "locked)",
};

static void pm_log_bad(pam_handle_t *pamh, const char *path,
		       unsigned long lineno, enum pm_why why)
{
	pam_syslog(pamh, LOG_WARNING, "%s:%lu: %s, line skipped", path, lineno,
		   pm_why_text[why]);
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

/* The account flags of the optional fourth field F[0, LEN): names
 * separated by commas (empty items are ignored).  False on an unknown
 * name. */
static bool pm_parse_flags(const char *f, size_t len, unsigned *flags)
{
	static const struct {
		const char *name;
		unsigned bit;
	} known[] = {
		{ "expired", PM_F_EXPIRED },
		{ "must_change", PM_F_MUST_CHANGE },
		{ "locked", PM_F_LOCKED },
	};
	const char *end = f + len;

	*flags = 0;
	while (f < end) {
		const char *comma = memchr(f, ',', (size_t)(end - f));
		size_t n = (size_t)((comma != NULL ? comma : end) - f);
		bool ok = n == 0;

		for (size_t i = 0; !ok && i < sizeof(known) / sizeof(known[0]);
		     i++) {
			if (strlen(known[i].name) == n &&
			    memcmp(known[i].name, f, n) == 0) {
				*flags |= known[i].bit;
				ok = true;
			}
		}
		if (!ok) {
			return false;
		}
		f += n + (comma != NULL ? 1 : 0);
	}
	return true;
}

/* The exact rules for the line P[0..LEN) (without its '\n'), in the order
 * of the man page.  A line longer than PM_LINE_MAX is only looked at for a
 * leading '#'. */
static enum pm_why pm_classify(const char *p, size_t len)
{
	size_t ncolon = 0;
	bool nul = false;

	if (len > 0 && p[0] == '#') {
		return PM_COMMENT;
	}
	if (len > PM_LINE_MAX) {
		return PM_LONG;
	}
	if (len == 0 || pm_is_blank(p, len)) {
		return PM_BLANK;
	}
	if (p[len - 1] == '\r') {
		return PM_CRLF;
	}
	/* no branch per byte: this runs on every line of an unknown user's
	 * lookup */
	for (size_t i = 0; i < len; i++) {
		ncolon += p[i] == ':';
		nul |= p[i] == '\0';
	}
	if (nul) {
		return PM_NUL;
	}
	if (ncolon < 2) {
		return PM_FEW;
	}
	if (ncolon > 3) {
		return PM_MANY;
	}
	if (p[0] == ':') {
		return PM_NOUSER;
	}
	if (ncolon == 3) {
		const char *c3 = memrchr(p, ':', len);
		unsigned flags;

		if (!pm_parse_flags(c3 + 1, (size_t)(p + len - c3 - 1),
				    &flags)) {
			return PM_FLAG;
		}
	}
	return PM_VALID;
}

/* Whether a line could be USER's at all: a non-empty name shorter than a
 * line, without ':' or '\n'.  Other names are not searched for (the lookup
 * then reports the file's malformed lines, as for an unknown user). */
static bool pm_user_searchable(const char *user, size_t ulen)
{
	return ulen > 0 && ulen < PM_LINE_MAX && strpbrk(user, ":\n") == NULL;
}

/* ---- the streaming reader ------------------------------------------- */

/*
 * A window on the file: buf[0, len) are the bytes at stream offsets
 * [base, base + len), stream offset 0 being a '\n' put before the file's
 * first byte (so the first line starts after a '\n' like every other one)
 * and stream offset N + 1 the file's byte N.  With fd < 0 the whole file
 * is in buf (base 0, eof set) and nothing is read.  The buffer is the
 * caller's; it holds passwords and is wiped before it is freed.
 */
struct pm_src {
	const char *path; /* for messages */
	int fd;
	char *buf;
	size_t cap;
	size_t len;
	uint64_t base;
	uint64_t nread; /* file bytes read, bounded by PM_PASSDB_MAX */
	uint64_t size;  /* st_size when opened (0: unknown) */
	bool eof;
};

/* Drops buf[0, FROM), moves the rest to the front and reads until the
 * buffer is full or the file ends.  Nothing happens after the end. */
static int pm_src_fill(pam_handle_t *pamh, struct pm_src *s, size_t from)
{
	if (s->eof) {
		return PAM_SUCCESS;
	}
	if (from > 0) {
		memmove(s->buf, s->buf + from, s->len - from);
		s->len -= from;
		s->base += from;
	}
	while (s->len < s->cap) {
		size_t want = s->cap - s->len;
		ssize_t n;

		/* At most one byte past the limit: enough to see it. */
		if (want > PM_PASSDB_MAX + 1 - s->nread) {
			want = (size_t)(PM_PASSDB_MAX + 1 - s->nread);
		}
		n = read(s->fd, s->buf + s->len, want);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return pm_io_error(pamh, s->path, "read", errno);
		}
		if (n == 0) {
			s->eof = true;
			break;
		}
		s->len += (size_t)n;
		s->nread += (uint64_t)n;
		if (s->nread > PM_PASSDB_MAX) {
			return pm_too_big(pamh, s->path);
		}
		/* A short read that reached the size fstat() gave is the end:
		 * no second read() to be told so (files that report no size,
		 * such as /proc ones, are read until read() returns 0). */
		if ((size_t)n < want && s->size > 0 && s->nread >= s->size) {
			s->eof = true;
			break;
		}
	}
	return PAM_SUCCESS;
}

/* Starts reading at the file's current offset (its start). */
static int pm_src_begin(pam_handle_t *pamh, struct pm_src *s)
{
	s->buf[0] = '\n';
	s->len = 1;
	s->base = 0;
	s->nread = 0;
	s->eof = false;
	return pm_src_fill(pamh, s, 0);
}

/* Goes back to the start of the file (a no-op when it is all in memory). */
static int pm_src_rewind(pam_handle_t *pamh, struct pm_src *s)
{
	if (s->fd < 0) {
		return PAM_SUCCESS;
	}
	if (lseek(s->fd, 0, SEEK_SET) != 0) {
		return pm_io_error(pamh, s->path, "read", errno);
	}
	return pm_src_begin(pamh, s);
}

/*
 * Makes the line starting at buf[*AT] available: either whole (*WHOLE set,
 * *LEN its length without the '\n', at most PM_LINE_MAX) or, for a longer
 * line, its first PM_LINE_MAX + 1 bytes (*WHOLE clear).  The window may be
 * moved for that, so that the line starts at buf[0]; *AT follows.
 */
static int pm_src_line(pam_handle_t *pamh, struct pm_src *s, size_t *at,
		       size_t *len, bool *whole)
{
	for (;;) {
		size_t avail = s->len - *at;
		size_t look = avail < PM_LINE_MAX + 1 ? avail : PM_LINE_MAX + 1;
		const char *nl = memchr(s->buf + *at, '\n', look);
		int rv;

		if (nl != NULL) {
			*len = (size_t)(nl - (s->buf + *at));
			*whole = true;
			return PAM_SUCCESS;
		}
		if (avail >= PM_LINE_MAX + 1) {
			*whole = false;
			return PAM_SUCCESS;
		}
		if (s->eof) {
			*len = avail; /* the last line, without a '\n' */
			*whole = true;
			return PAM_SUCCESS;
		}
		/* cap >= PM_READ_MIN: the line's PM_LINE_MAX + 1 bytes fit */
		rv = pm_src_fill(pamh, s, *at);
		if (rv != PAM_SUCCESS) {
			return rv;
		}
		*at = 0;
	}
}

/* What the rules say of the line at buf[AT] that pm_src_line made
 * available. */
static enum pm_why pm_src_classify(const struct pm_src *s, size_t at,
				   size_t len, bool whole)
{
	if (!whole) {
		return s->buf[at] == '#' ? PM_COMMENT : PM_LONG;
	}
	return pm_classify(s->buf + at, len);
}

/* Moves *POS past the next '\n' at or after buf[FROM], reading on as
 * needed (the rest of a long line), or to the end of the file. */
static int pm_src_skip_line(pam_handle_t *pamh, struct pm_src *s, size_t from,
			    size_t *pos)
{
	for (;;) {
		const char *nl = memchr(s->buf + from, '\n', s->len - from);
		int rv;

		if (nl != NULL) {
			*pos = (size_t)(nl - s->buf) + 1;
			return PAM_SUCCESS;
		}
		if (s->eof) {
			*pos = s->len;
			return PAM_SUCCESS;
		}
		rv = pm_src_fill(pamh, s, s->len);
		if (rv != PAM_SUCCESS) {
			return rv;
		}
		from = 0;
	}
}

/* Whether the line at buf[AT] (made available by pm_src_line) starts with
 * "USER:". */
static bool pm_src_starts_with(const struct pm_src *s, size_t at, size_t len,
			       bool whole, const char *user, size_t ulen)
{
	/* a line that is not whole has more than PM_LINE_MAX > ulen bytes */
	return (!whole || len > ulen) && s->buf[at + ulen] == ':' &&
	       memcmp(s->buf + at, user, ulen) == 0;
}

/* USER's line found by pm_search: buf[at, at + len) until the next read. */
struct pm_hit {
	size_t at;
	size_t len;
	uint64_t off; /* stream offset of the line's start */
};

/*
 * Finds the first valid line of USER (searchable, ULEN bytes) from the
 * current window on.  *FOUND says whether there is one (then *H is it),
 * *BAD whether a malformed line starting with "USER:" came before it.
 * Logs nothing but errors.
 */
static int pm_search(pam_handle_t *pamh, struct pm_src *s, const char *user,
		     size_t ulen, struct pm_hit *h, bool *found, bool *bad)
{
	const size_t plen = ulen + 2;
	char *pat = malloc(plen); /* "\nUSER:" */
	size_t pos = 0;
	int rv = PAM_SUCCESS;

	*found = false;
	*bad = false;
	if (pat == NULL) {
		return pm_io_error(pamh, s->path, "search", ENOMEM);
	}
	pat[0] = '\n';
	memcpy(pat + 1, user, ulen);
	pat[ulen + 1] = ':';
	for (;;) {
		const char *m = memmem(s->buf + pos, s->len - pos, pat, plen);
		size_t at, len = 0;
		bool whole;
		enum pm_why why;

		if (m == NULL) {
			/* A match may begin in the last plen - 1 bytes. */
			size_t keep = s->len - pos < plen - 1 ? s->len - pos
							      : plen - 1;

			if (s->eof) {
				break;
			}
			rv = pm_src_fill(pamh, s, s->len - keep);
			if (rv != PAM_SUCCESS) {
				break;
			}
			pos = 0;
			continue;
		}
		at = (size_t)(m - s->buf) + 1;
		rv = pm_src_line(pamh, s, &at, &len, &whole);
		if (rv != PAM_SUCCESS) {
			break;
		}
		why = pm_src_classify(s, at, len, whole);
		if (why == PM_VALID) {
			h->at = at;
			h->len = len;
			h->off = s->base + at;
			*found = true;
			break;
		}
		*bad |= why != PM_COMMENT;
		/* The next match starts at this line's '\n' or later. */
		pos = at;
	}
	free(pat);
	return rv;
}

/*
 * Logs malformed lines of S's file in file order, each once, with its
 * number: every one when USER is NULL, else those that start with "USER:"
 * and begin before stream offset LIMIT.  Reads the file again from its
 * start: a lookup counts no lines unless it has something to report.
 */
static int pm_report(pam_handle_t *pamh, struct pm_src *s, const char *user,
		     size_t ulen, uint64_t limit)
{
	unsigned long lineno = 0;
	size_t pos = 1; /* after the '\n' put before the file */
	int rv = pm_src_rewind(pamh, s);

	while (rv == PAM_SUCCESS) {
		size_t at = pos, len = 0;
		bool whole;
		enum pm_why why = PM_VALID;

		if (pos == s->len) {
			if (s->eof) {
				break;
			}
			rv = pm_src_fill(pamh, s, pos);
			pos = 0;
			continue;
		}
		if (s->base + pos >= limit) {
			break;
		}
		lineno++;
		rv = pm_src_line(pamh, s, &at, &len, &whole);
		if (rv != PAM_SUCCESS) {
			break;
		}
		if (user == NULL ||
		    pm_src_starts_with(s, at, len, whole, user, ulen)) {
			why = pm_src_classify(s, at, len, whole);
		}
		if (why != PM_VALID && why != PM_COMMENT) {
			pm_log_bad(pamh, s->path, lineno, why);
		}
		if (whole) {
			/* past its '\n', or at the end of the file */
			pos = at + len + (at + len < s->len);
		} else {
			rv = pm_src_skip_line(pamh, s, at + PM_LINE_MAX + 1,
					      &pos);
		}
	}
	return rv;
}

/* ---- results ---------------------------------------------------------- */

void pm_found_free(struct pm_found *f)
{
	if (f->pass != NULL) {
		/* pass and service share one buffer */
		explicit_bzero(f->pass, f->pass_len + f->service_len + 2);
		free(f->pass);
	}
	f->found = false;
	f->pass = NULL;
	f->pass_len = 0;
	f->service = NULL;
	f->service_len = 0;
	f->flags = 0;
}

/* Copies the fields of USER's valid line P[0, LEN) (user name ULEN bytes)
 * into F. */
static int pm_found_set(pam_handle_t *pamh, const char *path,
			struct pm_found *f, const char *p, size_t len,
			size_t ulen)
{
	const char *pass = p + ulen + 1;
	const char *c2 = memchr(pass, ':', len - ulen - 1);
	const char *c3 = memchr(c2 + 1, ':', (size_t)(p + len - (c2 + 1)));
	const char *send = c3 != NULL ? c3 : p + len;
	size_t pass_len = (size_t)(c2 - pass);
	size_t service_len = (size_t)(send - (c2 + 1));
	char *buf = malloc(pass_len + service_len + 2);

	if (buf == NULL) {
		return pm_io_error(pamh, path, "read", ENOMEM);
	}
	f->flags = 0;
	if (c3 != NULL) {
		/* a valid line: its flags parse */
		(void)pm_parse_flags(c3 + 1, (size_t)(p + len - c3 - 1),
				     &f->flags);
	}
	memcpy(buf, pass, pass_len);
	buf[pass_len] = '\0';
	memcpy(buf + pass_len + 1, c2 + 1, service_len);
	buf[pass_len + 1 + service_len] = '\0';
	f->found = true;
	f->pass = buf;
	f->pass_len = pass_len;
	f->service = buf + pass_len + 1;
	f->service_len = service_len;
	return PAM_SUCCESS;
}

/* Wipes and frees S's buffer (it held the file's passwords). */
static void pm_src_free(struct pm_src *s)
{
	if (s->buf != NULL) {
		explicit_bzero(s->buf, s->cap);
		free(s->buf);
	}
	s->buf = NULL;
	s->cap = 0;
	s->len = 0;
}

int pm_passdb_lookup(pam_handle_t *pamh, const char *path, const char *user,
		     struct pm_found *f)
{
	struct pm_src s = { path, -1, NULL, 0, 0, 0, 0, 0, false };
	const size_t ulen = strlen(user);
	struct pm_hit h = { 0, 0, 0 };
	bool found = false, bad = false;
	struct stat st;
	uint64_t want;
	int rv;

	pm_found_free(f);
	rv = pm_open(pamh, path, &s.fd, &st);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	s.size = (uint64_t)st.st_size;
	/* The whole file plus the leading '\n' and a byte to see its end,
	 * when that is less than PM_READ_BUF. */
	want = (uint64_t)st.st_size + 2;
	s.cap = want < PM_READ_BUF ? (size_t)want : PM_READ_BUF;
	if (s.cap < PM_READ_MIN) {
		s.cap = PM_READ_MIN;
	}
	s.buf = malloc(s.cap);
	if (s.buf == NULL) {
		rv = pm_io_error(pamh, path, "read", ENOMEM);
		goto out;
	}
	rv = pm_src_begin(pamh, &s);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (pm_user_searchable(user, ulen)) {
		rv = pm_search(pamh, &s, user, ulen, &h, &found, &bad);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	if (found) {
		/* before pm_report moves the window */
		rv = pm_found_set(pamh, path, f, s.buf + h.at, h.len, ulen);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	if (!found || bad) {
		rv = pm_report(pamh, &s, found ? user : NULL, ulen,
			       found ? h.off : UINT64_MAX);
	}
out:
	if (s.fd >= 0) {
		close(s.fd);
	}
	pm_src_free(&s);
	if (rv != PAM_SUCCESS) {
		pm_found_free(f);
	}
	return rv;
}

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
	struct pm_src s = { path, -1, NULL, 0, 0, 0, 0, 0, false };
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
