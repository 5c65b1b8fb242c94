/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The service-file rewriter.  libpam is given a private copy of each service
 * file in which (a) include/substack/@include targets point at our own
 * rewritten copies of the included files, because Debian's libpam sends
 * relative includes to /etc/pam.d even with a confdir, and (b) bare names of
 * our test modules become absolute paths, because libpam looks for relative
 * module names only in the system module directory.  Everything else of a
 * line is kept as written; comments are dropped (libpam ignores them).
 *
 * This file does no I/O: the caller reads the file and decides through the
 * callbacks what each target becomes, which keeps it fuzzable on its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pwrap_private.h"

struct sbuf {
	char *p;	/* owned; NUL-terminated while len < cap */
	size_t len;
	size_t cap;
	int failed;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	char *np;
	size_t ncap;

	if (b->failed) {
		return;
	}
	if (b->len + n + 1 > b->cap) {
		ncap = b->cap ? b->cap : 256;
		while (ncap < b->len + n + 1) {
			ncap *= 2;
		}
		np = realloc(b->p, ncap);
		if (np == NULL) {
			b->failed = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
	       c == '\f';
}

/* Returns the start of the next token in [*pos, end) and its length. */
static const char *next_token(const char **pos, const char *end, size_t *len,
			      int bracketed)
{
	const char *s = *pos;
	const char *e;

	while (s < end && is_space(*s)) {
		s++;
	}
	if (s == end) {
		*pos = s;
		*len = 0;
		return NULL;
	}
	e = s;
	if (bracketed && *s == '[') {
		while (e < end && *e != ']') {
			e++;
		}
		if (e < end) {
			e++;	/* include the ']' */
		}
	} else {
		while (e < end && !is_space(*e)) {
			e++;
		}
	}
	*pos = e;
	*len = (size_t)(e - s);
	return s;
}

static int tok_is(const char *t, size_t n, const char *word)
{
	return t != NULL && strlen(word) == n && memcmp(t, word, n) == 0;
}

/* Appends the token, replaced by cb's answer when it has one. */
static void emit_replaced(struct sbuf *b, const char *t, size_t n,
			  char *(*cb)(void *, const char *, const char *, unsigned),
			  const struct pwrap_rewrite_ops *ops,
			  const char *src_name, unsigned line)
{
	char *tok = NULL;
	char *rep = NULL;

	if (cb == NULL) {
		sb_add(b, t, n);
		return;
	}
	tok = strndup(t, n);
	if (tok == NULL) {
		b->failed = 1;
		return;
	}
	rep = cb(ops->ctx, tok, src_name, line);
	if (rep != NULL) {
		sb_str(b, rep);
	} else {
		sb_add(b, t, n);
	}
	free(rep);
	free(tok);
}

/* Rewrites one logical line (comment and continuations already removed). */
static void rewrite_line(struct sbuf *b, const char *s, const char *end,
			 const char *src_name, unsigned line,
			 const struct pwrap_rewrite_ops *ops)
{
	const char *pos = s;
	const char *t1, *t2, *t3;
	size_t n1, n2, n3;

	t1 = next_token(&pos, end, &n1, 0);
	if (t1 == NULL) {
		return;	/* blank line */
	}
	if (tok_is(t1, n1, "@include")) {
		t2 = next_token(&pos, end, &n2, 0);
		sb_str(b, "@include ");
		if (t2 != NULL) {
			emit_replaced(b, t2, n2, ops->include_target, ops,
				      src_name, line);
		}
		sb_add(b, pos, (size_t)(end - pos));
		sb_str(b, "\n");
		return;
	}
	t2 = next_token(&pos, end, &n2, 1);
	t3 = next_token(&pos, end, &n3, 0);
	sb_add(b, t1, n1);
	if (t2 != NULL) {
		sb_str(b, " ");
		sb_add(b, t2, n2);
	}
	if (t3 != NULL) {
		sb_str(b, " ");
		if (tok_is(t2, n2, "include") || tok_is(t2, n2, "substack")) {
			emit_replaced(b, t3, n3, ops->include_target, ops,
				      src_name, line);
		} else {
			emit_replaced(b, t3, n3, ops->module_path, ops,
				      src_name, line);
		}
	}
	sb_add(b, pos, (size_t)(end - pos));
	sb_str(b, "\n");
}

int pwrap_rewrite_service(const char *in, size_t len, const char *src_name,
			  const struct pwrap_rewrite_ops *ops, char **out,
			  size_t *out_len)
{
	struct sbuf result = { 0 };
	struct sbuf logical = { 0 };
	const char *p = in;
	const char *end = in + len;
	unsigned lineno = 0;
	unsigned first_line = 0;
	int rc = -1;

	*out = NULL;
	if (out_len != NULL) {
		*out_len = 0;
	}
	sb_add(&result, "", 0);	/* an empty file gives an empty string */

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *nul = memchr(p, '\0', (size_t)(le - p));
		const char *hash;
		const char *te;
		const char *fs;

		lineno++;
		if (logical.len == 0) {
			first_line = lineno;
		}
		if (nul != NULL) {
			/* libpam reads lines as C strings: it sees up to the NUL. */
			PWRAP_LOG(PWRAP_LOG_WARN, "%s:%u: NUL byte in line, "
				  "the rest of the line is ignored",
				  src_name, lineno);
			te = nul;
		} else {
			te = le;
		}
		/* Like libpam, a blank line or one that starts with '#' is
		 * skipped, also in the middle of a continued line. */
		for (fs = p; fs < te && is_space(*fs); fs++) {
		}
		if (fs == te || *fs == '#') {
			p = nl ? nl + 1 : end;
			continue;
		}
		hash = memchr(p, '#', (size_t)(te - p));
		if (hash != NULL) {
			te = hash;
		}
		while (te > p && is_space(te[-1])) {
			te--;
		}
		if (hash == NULL && te > p && te[-1] == '\\') {
			/* continuation: the backslash becomes a blank */
			sb_add(&logical, p, (size_t)(te - 1 - p));
			sb_str(&logical, " ");
		} else {
			sb_add(&logical, p, (size_t)(te - p));
			if (!logical.failed) {
				rewrite_line(&result, logical.p,
					     logical.p + logical.len, src_name,
					     first_line, ops);
			}
			logical.len = 0;
		}
		if (logical.failed || result.failed) {
			errno = ENOMEM;
			goto out;
		}
		p = nl ? nl + 1 : end;
	}
	if (logical.len > 0) {
		/* The file ends in a continued line, which makes libpam
		 * refuse the whole file: keep it that way (backslash last,
		 * no newline). */
		size_t before = result.len;

		rewrite_line(&result, logical.p, logical.p + logical.len,
			     src_name, first_line, ops);
		if (result.len > before && result.p[result.len - 1] == '\n') {
			result.len--;
		}
		sb_str(&result, "\\");
	}
	if (result.failed) {
		errno = ENOMEM;
		goto out;
	}
	*out = result.p;
	result.p = NULL;
	if (out_len != NULL) {
		*out_len = result.len;
	}
	rc = 0;
out:
	free(result.p);
	free(logical.p);
	return rc;
}
