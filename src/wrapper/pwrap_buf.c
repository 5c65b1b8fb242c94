/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A growing, NUL-terminated string for the wrapper's text output: the
 * rewritten service files (pwrap_conf.c, pwrap_conf_openpam.c) and the
 * module trace's records (pwrap_trace_out.c).  It never fails loudly:
 * after an allocation failure (or a size that cannot be held) `failed` is
 * set and every later call does nothing, so a caller checks once at the
 * end.  The caller owns b->p and frees it.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pwrap_private.h"

void pwrap_buf_add(struct pwrap_buf *b, const char *s, size_t n)
{
	if (b->failed || n > SIZE_MAX / 4 - b->len) {
		b->failed = true;
		return;
	}
	if (b->p == NULL || b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1) {
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (p == NULL) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void pwrap_buf_str(struct pwrap_buf *b, const char *s)
{
	pwrap_buf_add(b, s, strlen(s));
}

void pwrap_buf_fmt(struct pwrap_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
	} else if ((size_t)n < sizeof(small)) {
		pwrap_buf_add(b, small, (size_t)n);
	} else {
		char *big = malloc((size_t)n + 1);

		if (big == NULL) {
			b->failed = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		pwrap_buf_add(b, big, (size_t)n);
		free(big);
	}
}
