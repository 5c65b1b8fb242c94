/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's passdb: the streaming lookup (see passdb.h for the
 * contract; the line rules are in passdb_line.c, the password change in
 * passdb_write.c).
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
 * Nothing in this file logs a password or a line's content.
 */
#define _GNU_SOURCE /* memmem, asprintf, mkostemp, O_TMPFILE */
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


/* Thread-safe strerror; the result is BUF or a static string. */
const char *pm_strerror(int errnum, char *buf, size_t len)
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

int pm_io_error(pam_handle_t *pamh, const char *path, const char *what,
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

/* Whether the character device FD reads as empty (/dev/null): one
 * non-blocking read gives the end of the file at once. */
static bool pm_reads_empty(int fd)
{
	char c;
	ssize_t n;

	do {
		n = read(fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	return n == 0;
}

/*
 * Opens PATH for reading and checks what it is: a regular file of at most
 * PM_PASSDB_MAX bytes is a passdb (*FD and *ST filled); a directory or a
 * device that reads as empty (/dev/null) reads as an empty passdb, as
 * upstream's pam_matrix reads them (*FD -1, *ST filled, st_size 0);
 * anything else (a FIFO, which would block upstream, /dev/zero, a socket,
 * a bigger file) is an error, logged.
 */
int pm_open(pam_handle_t *pamh, const char *path, int *fd,
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
	if (S_ISDIR(st->st_mode) ||
	    (S_ISCHR(st->st_mode) && pm_reads_empty(*fd))) {
		if (S_ISDIR(st->st_mode)) {
			pam_syslog(pamh, LOG_ERR,
				   "%s: passdb is a directory, read as an "
				   "empty file (no users)",
				   path);
		}
		close(*fd);
		*fd = -1;
		st->st_size = 0;
		return PAM_SUCCESS;
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

/* ---- the streaming reader ------------------------------------------- */


/* Drops buf[0, FROM), moves the rest to the front and reads until the
 * buffer is full or the file ends.  Nothing happens after the end. */
int pm_src_fill(pam_handle_t *pamh, struct pm_src *s, size_t from)
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
		if (s->len > s->dirty) {
			s->dirty = s->len;
		}
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
int pm_src_begin(pam_handle_t *pamh, struct pm_src *s)
{
	s->buf[0] = '\n';
	s->len = 1;
	if (s->dirty < 1) {
		s->dirty = 1;
	}
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


/*
 * Finds the first line of USER (searchable, ULEN bytes) that is read,
 * searching the current window from buf[FROM] on (a '\n' there counts).
 * *FOUND says whether there is one (then *H is it), *BAD whether a
 * malformed line starting with "USER:" came before it.  Logs nothing but
 * errors.
 */
int pm_search(pam_handle_t *pamh, struct pm_src *s, const char *user,
	      size_t ulen, size_t from, struct pm_hit *h, bool *found,
	      bool *bad)
{
	const size_t plen = ulen + 2;
	char *pat = malloc(plen); /* "\nUSER:" */
	size_t pos = from;
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
 * number: every one when USER is NULL (as warnings), else (as errors)
 * those that start with "USER:" and begin before stream offset LIMIT, and
 * the note of such a line that is read.  Reads the file again from its
 * start: a lookup counts no lines unless it has something to report.
 */
int pm_report(pam_handle_t *pamh, struct pm_src *s, const char *user,
		     size_t ulen, uint64_t limit)
{
	unsigned long lineno = 0;
	size_t pos = 1; /* after the '\n' put before the file */
	int rv = pm_src_rewind(pamh, s);

	while (rv == PAM_SUCCESS) {
		size_t at = pos, len = 0;
		bool whole, mine;
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
		mine = user != NULL &&
		       pm_src_starts_with(s, at, len, whole, user, ulen);
		if (user == NULL || mine) {
			why = pm_src_classify(s, at, len, whole);
		}
		if (why != PM_VALID && why != PM_COMMENT) {
			pm_log_line(pamh, s->path, lineno, why, PM_NOTE_NONE,
				    user != NULL);
		} else if (why == PM_VALID && mine) {
			/* only the line used can be read and be here */
			struct pm_fields f;

			pm_split(s->buf + at, len, ulen, &f);
			if (f.note != PM_NOTE_NONE) {
				pm_log_line(pamh, s->path, lineno, why, f.note,
					    true);
			}
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

int pm_report_hit(pam_handle_t *pamh, struct pm_src *s, const char *user,
		  size_t ulen, const struct pm_hit *h, bool bad)
{
	struct pm_fields f;

	pm_split(s->buf + h->at, h->len, ulen, &f);
	if (f.note == PM_NOTE_NONE && !bad) {
		return PAM_SUCCESS;
	}
	/* the line used is reported too when it has a note */
	return pm_report(pamh, s, user, ulen,
			 h->off + (f.note != PM_NOTE_NONE));
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

/* Copies the fields of USER's line P[0, LEN) (user name ULEN bytes),
 * which is read, into F. */
static int pm_found_set(pam_handle_t *pamh, const char *path,
			struct pm_found *f, const char *p, size_t len,
			size_t ulen)
{
	struct pm_fields fl;
	char *buf;

	pm_split(p, len, ulen, &fl);
	buf = malloc(fl.pass_len + fl.service_len + 2);
	if (buf == NULL) {
		return pm_io_error(pamh, path, "read", ENOMEM);
	}
	memcpy(buf, fl.pass, fl.pass_len);
	buf[fl.pass_len] = '\0';
	memcpy(buf + fl.pass_len + 1, fl.service, fl.service_len);
	buf[fl.pass_len + 1 + fl.service_len] = '\0';
	f->found = true;
	f->pass = buf;
	f->pass_len = fl.pass_len;
	f->service = buf + fl.pass_len + 1;
	f->service_len = fl.service_len;
	f->flags = fl.flagbits;
	return PAM_SUCCESS;
}

/* Wipes and frees S's buffer (it held the file's passwords). */
void pm_src_free(struct pm_src *s)
{
	if (s->buf != NULL) {
		explicit_bzero(s->buf, s->dirty);
		free(s->buf);
	}
	s->buf = NULL;
	s->cap = 0;
	s->len = 0;
	s->dirty = 0;
}

int pm_passdb_check(pam_handle_t *pamh, const char *path)
{
	struct stat st;
	int fd = -1;
	int rv = pm_open(pamh, path, &fd, &st);

	if (fd >= 0) {
		close(fd);
	}
	return rv;
}

int pm_passdb_lookup(pam_handle_t *pamh, const char *path, const char *user,
		     struct pm_found *f)
{
	struct pm_src s = { .path = path, .fd = -1 };
	const size_t ulen = strlen(user);
	struct pm_hit h = { 0, 0, 0 };
	bool found = false, bad = false;
	struct stat st;
	uint64_t want;
	int rv;

	pm_found_free(f);
	rv = pm_open(pamh, path, &s.fd, &st);
	if (rv != PAM_SUCCESS || s.fd < 0) {
		goto out; /* an error, or read as empty: nobody is found */
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
		rv = pm_search(pamh, &s, user, ulen, 0, &h, &found, &bad);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	if (found) {
		/* before pm_report moves the window */
		rv = pm_found_set(pamh, path, f, s.buf + h.at, h.len, ulen);
		if (rv == PAM_SUCCESS) {
			rv = pm_report_hit(pamh, &s, user, ulen, &h, bad);
		}
	} else {
		rv = pm_report(pamh, &s, NULL, ulen, UINT64_MAX);
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
