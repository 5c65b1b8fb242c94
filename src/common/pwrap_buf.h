/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A growing, NUL-terminated string: the one text builder of the wrapper,
 * the tools and the tests (rewritten service files, trace records, reports,
 * JSON).  It never fails loudly: after an allocation failure (or a size
 * that cannot be held) `failed` is set and every later call does nothing,
 * so a caller checks once at the end.  The caller owns b->p and frees it
 * (pwrap_buf_free, or takes it with pwrap_buf_take).
 *
 * Self-contained: pulls in nothing of the wrapper or the tools.
 */
#ifndef PWRAP_BUF_H
#define PWRAP_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct pwrap_buf {
	char *p;
	size_t len, cap;
	bool failed;
};

void pwrap_buf_add(struct pwrap_buf *b, const char *s, size_t n);
void pwrap_buf_str(struct pwrap_buf *b, const char *s);
void pwrap_buf_fmt(struct pwrap_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Frees what b holds and makes it empty again (usable anew). */
void pwrap_buf_free(struct pwrap_buf *b);
/* The malloc'd string b built ("" when nothing was added), now the
 * caller's; NULL when a call failed (b's memory is freed then).  b is
 * empty afterwards. */
char *pwrap_buf_take(struct pwrap_buf *b);

/* s as a JSON string, quotes included: '"', '\' and control characters
 * escaped, valid UTF-8 kept, any other byte (invalid UTF-8) as \u00XX, so
 * the result is valid JSON whatever s holds. */
void pwrap_buf_json(struct pwrap_buf *b, const char *s);
/* s for a terminal or a text report: control characters (C0, DEL and
 * C1) and bytes that are not valid UTF-8 as \xNN, the rest as it is. */
void pwrap_buf_text(struct pwrap_buf *b, const char *s);
/* The n bytes at s (NULs allowed) with every occurrence of a secret
 * (non-empty strings; NULL entries are skipped) as "***", left to right,
 * the longest where two start at the same place: the one masking of log
 * lines (the wrapper's module lines, pamtest's relay).  Stops before the
 * first byte at or after `upto` that no replaced occurrence covers, so that
 * a caller holding the rest can mask a stream piece by piece; returns how
 * many bytes of s were used (n when upto >= n). */
size_t pwrap_buf_masked(struct pwrap_buf *b, const char *s, size_t n,
			size_t upto, const char *const *secrets,
			size_t nsecrets);

#endif
