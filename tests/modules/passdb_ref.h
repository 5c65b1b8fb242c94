/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reference reading of a pam_matrix passdb, written plainly from
 * pam_matrix(8) and independent of src/modules/pam_matrix/passdb.c, for the
 * tests and the fuzz target that compare the module with it
 * (tests/modules/test_passdb.c, test_pam_matrix.c, fuzz/fuzz_passdb.c):
 * which lines are skipped, how a line splits into fields, what a lookup
 * answers and reports, and what a password change leaves in the file.
 * Header-only, no allocation failures handled (callers are tests): each
 * user compiles its own copy.  The including file defines _GNU_SOURCE.
 */
#ifndef PWRAP_PASSDB_REF_H
#define PWRAP_PASSDB_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_LINE_MAX 8192

#define REF_FLAG_NOTE                                                     \
	"the fourth field is not a list of account flags (expired, "       \
	"must_change, locked): it is read as part of the service"
#define REF_CR_NOTE                                                       \
	"line ends with CR (CRLF line ending?): the CR is part of the "    \
	"service"

/* Whether F[0, N) is a list of known flags (empty items ignored, at least
 * one name); *BITS gets 1 expired, 2 must_change, 4 locked. */
static inline bool ref_flags(const char *f, size_t n, unsigned *bits)
{
	bool any = false;

	*bits = 0;
	while (n > 0) {
		const char *c = memchr(f, ',', n);
		size_t k = c != NULL ? (size_t)(c - f) : n;

		if (k == 7 && memcmp(f, "expired", 7) == 0) {
			*bits |= 1;
		} else if (k == 11 && memcmp(f, "must_change", 11) == 0) {
			*bits |= 2;
		} else if (k == 6 && memcmp(f, "locked", 6) == 0) {
			*bits |= 4;
		} else if (k > 0) {
			return false;
		}
		any |= k > 0;
		f += k;
		n -= k;
		if (n > 0) {
			f++;
			n--;
		}
	}
	return any;
}

/* The line P[0, LEN) without its '\n': NULL when it is read, "" for a
 * comment, else why it is skipped (what pam_matrix logs). */
static inline const char *ref_why(const char *p, size_t len)
{
	size_t colons = 0;
	bool blank = true;

	if (len > 0 && p[0] == '#') {
		return "";
	}
	if (len > REF_LINE_MAX) {
		return "line longer than 8192 bytes";
	}
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
			blank = false;
		}
		colons += p[i] == ':';
	}
	if (blank) {
		return "blank line";
	}
	if (memchr(p, '\0', len) != NULL) {
		return "NUL byte in line";
	}
	if (colons < 2) {
		return "too few fields (expected user:password:service[:flags])";
	}
	return NULL;
}

/* The fields of a line that is read (ref_why NULL). */
struct ref_fields {
	size_t ulen;
	const char *pass, *svc, *flags; /* flags NULL: none */
	size_t pass_len, svc_len, flags_len;
	unsigned bits;
	const char *note; /* NULL, REF_FLAG_NOTE or REF_CR_NOTE */
};

static inline const char *ref_skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t')) {
		p++;
	}
	return p;
}

static inline void ref_split(const char *p, size_t len, struct ref_fields *f)
{
	const char *end = p + len;
	const char *c1 = memchr(p, ':', len);
	const char *c2, *rest, *c3;
	size_t ncolon = 0;

	memset(f, 0, sizeof(*f));
	f->ulen = (size_t)(c1 - p);
	f->pass = ref_skip_blanks(c1 + 1, end);
	c2 = memchr(f->pass, ':', (size_t)(end - f->pass));
	f->pass_len = (size_t)(c2 - f->pass);
	rest = ref_skip_blanks(c2 + 1, end);
	f->svc = rest;
	f->svc_len = (size_t)(end - rest);
	for (const char *q = rest; q < end; q++) {
		ncolon += *q == ':';
	}
	c3 = memchr(rest, ':', (size_t)(end - rest));
	if (ncolon == 1) {
		if (ref_flags(c3 + 1, (size_t)(end - c3 - 1), &f->bits)) {
			f->svc_len = (size_t)(c3 - rest);
			f->flags = c3 + 1;
			f->flags_len = (size_t)(end - c3 - 1);
		} else {
			f->note = REF_FLAG_NOTE;
		}
	}
	if (f->note == NULL && len > 0 && end[-1] == '\r') {
		f->note = REF_CR_NOTE;
	}
}

/* Whether a line could be USER's: a name without ':' or '\n', shorter than
 * a line. */
static inline bool ref_searchable(const char *user, size_t ulen)
{
	return ulen < REF_LINE_MAX && strpbrk(user, ":\n") == NULL;
}

struct ref_result {
	bool found;
	size_t off, len; /* of the line used */
	struct ref_fields f;
	char **want; /* "path:line: text" a lookup logs, in order (owned) */
	size_t nwant;
};

static inline void ref_result_free(struct ref_result *r)
{
	for (size_t i = 0; i < r->nwant; i++) {
		free(r->want[i]);
	}
	free(r->want);
	memset(r, 0, sizeof(*r));
}

static inline void ref_want(struct ref_result *r, const char *path,
			    unsigned long lineno, const char *text,
			    bool skipped)
{
	char **w = realloc(r->want, (r->nwant + 1) * sizeof(*w));

	if (w == NULL || asprintf(&w[r->nwant], "%s:%lu: %s%s", path, lineno,
				  text, skipped ? ", line skipped" : "") < 0) {
		abort();
	}
	r->want = w;
	r->nwant++;
}

/* What a lookup of USER in D[0, N) (the file at PATH) answers and logs:
 * the first line of USER that is read is used; logged are the skipped
 * lines of USER before it and its note, or, when USER has no such line,
 * every skipped line of the file. */
static inline void ref_lookup(const char *path, const char *d, size_t n,
			      const char *user, struct ref_result *r)
{
	size_t ulen = strlen(user);
	bool can = ref_searchable(user, ulen);

	memset(r, 0, sizeof(*r));
	for (int all = 0; all < 2 && !r->found; all++) {
		unsigned long lineno = 0;
		size_t pos = 0;

		ref_result_free(r);
		while (pos < n) {
			const char *p = d + pos;
			const char *nl = memchr(p, '\n', n - pos);
			size_t len = nl ? (size_t)(nl - p) : n - pos;
			const char *why = ref_why(p, len);
			bool mine = can && len > ulen && p[ulen] == ':' &&
				    memcmp(p, user, ulen) == 0;

			lineno++;
			if (why == NULL && mine) {
				r->found = true;
				r->off = pos;
				r->len = len;
				ref_split(p, len, &r->f);
				if (r->f.note != NULL) {
					ref_want(r, path, lineno, r->f.note,
						 false);
				}
				break;
			}
			if (why != NULL && *why != '\0' && (all || mine)) {
				ref_want(r, path, lineno, why, true);
			}
			pos += len + 1;
		}
	}
}

/*
 * What pm_passdb_set_password(USER, NEWPW) leaves in a passdb holding
 * D[0, N): returns the PAM code and, for PAM_SUCCESS, the new content in
 * *OUT (malloc'd, *OUTLEN bytes).  Every line of USER that is read is
 * rewritten as "USER:NEWPW:service[:flags]" (blanks after the colons and
 * the must_change flag dropped, an emptied flags field with its colon),
 * ended by a '\n' (even a last line that had none); every other byte
 * stays.  NEWPW must hold no ':', CR or LF, must not
 * start with a blank, and must leave each line within 8192 bytes.
 */
static inline int ref_set_password(const char *d, size_t n, const char *user,
				   const char *newpw, char **out,
				   size_t *outlen)
{
	size_t ulen = strlen(user), plen = strlen(newpw);
	bool can = ref_searchable(user, ulen), found = false;
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);
	size_t pos = 0;

	if (f == NULL) {
		abort();
	}
	while (pos < n) {
		const char *p = d + pos;
		const char *nl = memchr(p, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - p) : n - pos;
		struct ref_fields fl;
		size_t before;

		pos += len + (nl != NULL);
		if (!(can && len > ulen && p[ulen] == ':' &&
		      memcmp(p, user, ulen) == 0 && ref_why(p, len) == NULL)) {
			fwrite(p, 1, len + (nl != NULL), f);
			continue;
		}
		found = true;
		ref_split(p, len, &fl);
		fflush(f);
		before = blen;
		fprintf(f, "%s:%s:", user, newpw);
		fwrite(fl.svc, 1, fl.svc_len, f);
		if (fl.flags != NULL) {
			const char *q = fl.flags, *end = fl.flags + fl.flags_len;
			bool any = false;

			while (q < end) {
				const char *c = memchr(q, ',', (size_t)(end - q));
				size_t k = (size_t)((c ? c : end) - q);

				if (k > 0 && !(k == 11 && memcmp(q, "must_change",
								 11) == 0)) {
					fputc(any ? ',' : ':', f);
					fwrite(q, 1, k, f);
					any = true;
				}
				q += k + (c != NULL);
			}
		}
		fflush(f);
		if (blen - before > REF_LINE_MAX) {
			plen = (size_t)-1; /* too long: refused below */
		}
		fputc('\n', f); /* even after a last line without one */
	}
	fclose(f);
	if (!found) {
		free(buf);
		return PAM_USER_UNKNOWN;
	}
	if (plen == (size_t)-1 || strpbrk(newpw, ":\r\n") != NULL ||
	    newpw[0] == ' ' || newpw[0] == '\t' || strlen(newpw) > REF_LINE_MAX) {
		free(buf);
		return PAM_AUTHTOK_ERR;
	}
	*out = buf;
	*outlen = blen;
	return PAM_SUCCESS;
}

#endif
