/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The growing string of pwrap_buf.h, with its two escapers: JSON strings
 * (the module trace's records, pamtest explore's JSON, which pypamtest
 * parses) and text for a terminal (bytes of a service file or of a module's
 * message must not reach it as escape sequences); and the masking of
 * secrets in log text.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pwrap_buf.h"

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
	if (n > 0) {
		memcpy(b->p + b->len, s, n);
	}
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

void pwrap_buf_free(struct pwrap_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->failed = false;
}

char *pwrap_buf_take(struct pwrap_buf *b)
{
	char *p;

	pwrap_buf_add(b, "", 0);	/* "" rather than NULL when empty */
	if (b->failed) {
		pwrap_buf_free(b);
		return NULL;
	}
	p = b->p;
	b->p = NULL;
	pwrap_buf_free(b);
	return p;
}

/* The length of the valid UTF-8 sequence at p (2 to 4 bytes; no overlong
 * form, no surrogate, nothing above U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char *p)
{
	size_t want;

	if (*p < 0xc2 || *p > 0xf4) {
		return 0;
	}
	want = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : 1;
	for (size_t i = 1; i <= want; i++) {
		if ((p[i] & 0xc0) != 0x80) {
			return 0;
		}
	}
	if ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] >= 0xa0) ||
	    (*p == 0xf0 && p[1] < 0x90) || (*p == 0xf4 && p[1] >= 0x90)) {
		return 0;
	}
	return want + 1;
}

void pwrap_buf_json(struct pwrap_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	pwrap_buf_add(b, "\"", 1);
	while (*p != '\0') {
		size_t n = utf8_seq(p);

		if (n == 0 && *p >= 0x20 && *p < 0x7f && *p != '"' &&
		    *p != '\\') {
			n = 1;
		}
		if (n > 0) {
			pwrap_buf_add(b, (const char *)p, n);
			p += n;
		} else if (*p == '"' || *p == '\\') {
			pwrap_buf_fmt(b, "\\%c", *p++);
		} else {
			pwrap_buf_fmt(b, "\\u%04x", *p++);
		}
	}
	pwrap_buf_add(b, "\"", 1);
}

void pwrap_buf_text(struct pwrap_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		size_t n = utf8_seq(p);

		/* U+0080..U+009F are C1 controls: a terminal acts on them */
		if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			n = 0;
		}
		if (n == 0 && *p >= 0x20 && *p < 0x7f) {
			n = 1;
		}
		if (n > 0) {
			pwrap_buf_add(b, (const char *)p, n);
			p += n;
		} else {
			pwrap_buf_fmt(b, "\\x%02x", *p++);
		}
	}
}

size_t pwrap_buf_masked(struct pwrap_buf *b, const char *s, size_t n,
			size_t upto, const char *const *secrets, size_t nsecrets)
{
	size_t i = 0;

	if (upto > n) {
		upto = n;
	}
	while (i < upto) {
		size_t at = n, len = 0;

		/* the first occurrence of any secret from i on; of those
		 * there, the longest */
		for (size_t k = 0; k < nsecrets; k++) {
			size_t sl = secrets[k] != NULL ? strlen(secrets[k]) : 0;
			const char *p = sl > 0 && sl <= n - i ?
					memmem(s + i, n - i, secrets[k], sl) : NULL;

			if (p != NULL && ((size_t)(p - s) < at ||
			    ((size_t)(p - s) == at && sl > len))) {
				at = (size_t)(p - s);
				len = sl;
			}
		}
		if (at >= upto) {
			pwrap_buf_add(b, s + i, upto - i);
			return upto;
		}
		pwrap_buf_add(b, s + i, at - i);
		pwrap_buf_str(b, "***");
		i = at + len;
	}
	return i;
}
