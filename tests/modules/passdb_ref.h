/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reference reading of a pam_matrix passdb line, written plainly from
 * pam_matrix(8) and independent of src/modules/pam_matrix/passdb.c, for the
 * tests and the fuzz target that compare the module with it
 * (tests/modules/test_passdb.c, test_pam_matrix.c, fuzz/fuzz_passdb.c).
 * Header-only: each user compiles its own copy.
 */
#ifndef PWRAP_PASSDB_REF_H
#define PWRAP_PASSDB_REF_H

/* memrchr: the including file defines _GNU_SOURCE before any include. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The fourth field's rule: comma-separated known flags, empty items
 * ignored. */
static inline bool ref_flags_ok(const char *f, size_t n)
{
	while (n > 0) {
		const char *c = memchr(f, ',', n);
		size_t k = c != NULL ? (size_t)(c - f) : n;

		if (k > 0 && !(k == 7 && memcmp(f, "expired", 7) == 0) &&
		    !(k == 11 && memcmp(f, "must_change", 11) == 0) &&
		    !(k == 6 && memcmp(f, "locked", 6) == 0)) {
			return false;
		}
		f += k;
		n -= k;
		if (n > 0) {
			f++;
			n--;
		}
	}
	return true;
}

/* The line P[0, LEN) without its '\n': NULL when valid, "" for a comment,
 * else the reason pam_matrix logs. */
static inline const char *ref_why(const char *p, size_t len)
{
	size_t colons = 0;
	bool blank = true;

	if (len > 0 && p[0] == '#') {
		return "";
	}
	if (len > 8192) {
		return "line longer than 8192 bytes";
	}
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
			blank = false;
		}
		colons += p[i] == ':';
	}
	if (len == 0 || blank) {
		return "blank line";
	}
	if (p[len - 1] == '\r') {
		return "CRLF line ending (line ends with CR)";
	}
	if (memchr(p, '\0', len) != NULL) {
		return "NUL byte in line";
	}
	if (colons < 2) {
		return "too few fields (expected user:password:service[:flags])";
	}
	if (colons > 3) {
		return "too many fields (expected user:password:service[:flags])";
	}
	if (p[0] == ':') {
		return "empty user name";
	}
	if (colons == 3) {
		const char *c3 = memrchr(p, ':', len);

		if (!ref_flags_ok(c3 + 1, (size_t)(p + len - c3 - 1))) {
			return "unknown account flag (known: expired, "
			       "must_change, locked)";
		}
	}
	return NULL;
}

#endif
