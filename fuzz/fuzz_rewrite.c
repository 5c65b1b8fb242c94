/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the service-file rewriter (src/pamconf, through the
 * wrapper's pwrap_rewrite()), with the rules of Linux-PAM up to 1.5 (a
 * 1024-byte line buffer) and from 1.6 (lines of any length), Debian's
 * @include read.  The whole input is a service file.  For each rule set it
 * is rewritten twice: with callbacks that behave like the wrapper's (include
 * targets become paths below a private directory, some bare module names
 * become absolute paths, the choice depending on a hash of the name) and
 * with no callbacks at all.  For both results we check what libpam relies
 * on: the call succeeds (or refuses with EINVAL, a file libpam would hang
 * on, or E2BIG, an include that would not fit libpam's line), the output is
 * one NUL-terminated string of exactly out_len bytes (no NUL inside), every
 * line ends in '\n', no line is blank, and the only '#' left is one that
 * ends a line (added where the copy's newline would otherwise change what
 * libpam reads: after a last word ending in a backslash, after an unclosed
 * "[...").  Whether libpam reads the copy as it reads the original is
 * fuzz_pamdiff's question.
 *
 * With PWRAP_FUZZ_STRICT=1 in the environment the rewriter must also be a
 * fixpoint of itself: rewriting its own output without callbacks gives the
 * same bytes.
 *
 * The input buffer libFuzzer hands us is exactly `size` bytes long, so
 * AddressSanitizer catches any read past it.  Memory: the callbacks return
 * malloc'd strings that the rewriter frees; *out is ours to free.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pwrap_private.h"

static int strict;
static struct pamconf_rules rules[2];

/* FNV-1a, only to make the callbacks' choices depend on the token. */
static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++) {
		h = (h ^ (unsigned char)*s) * 16777619u;
	}
	return h;
}

static void check_token(const char *tok)
{
	/* A token handed to a callback is what libpam would use: one word,
	 * or the inside of "[...]", which may hold blanks and the line's
	 * newline, or be empty. */
	if (tok == NULL) {
		fprintf(stderr, "callback got a bad token\n");
		abort();
	}
}

static char *cb_include(void *ctx, const char *target, enum pamconf_stack stack,
			const char *src, unsigned line)
{
	char *r = NULL;

	(void)ctx;
	if (stack > PAMCONF_STACK_ASKED) {
		fprintf(stderr, "callback got no stack\n");
		abort();
	}
	(void)src;
	(void)line;
	check_token(target);
	if (asprintf(&r, "/tmp/pam_wrapper.XXXXXX/conf/.inc/%s", target) < 0) {
		return NULL;
	}
	return r;
}

static char *cb_module(void *ctx, const char *module, bool quiet,
		       const char *src, unsigned line)
{
	char *r = NULL;

	(void)ctx;
	(void)quiet;
	(void)src;
	(void)line;
	check_token(module);
	if (strchr(module, '/') != NULL || (hash(module) & 1) != 0) {
		return NULL;	/* keep it as written */
	}
	if (asprintf(&r, "/build/lib/pam_wrapper/%s", module) < 0) {
		return NULL;
	}
	return r;
}

static void fail(const char *why, const char *out, size_t out_len)
{
	fprintf(stderr, "fuzz_rewrite: %s (output %zu bytes)\n", why, out_len);
	if (out != NULL) {
		fwrite(out, 1, out_len, stderr);
		fputc('\n', stderr);
	}
	abort();
}

static void check_output(int rc, const char *out, size_t out_len)
{
	if (rc != 0 || out == NULL) {
		fail("rewrite failed", NULL, 0);
	}
	if (out[out_len] != '\0' || strlen(out) != out_len) {
		fail("output has a NUL byte or a wrong length", out, out_len);
	}
	/* The last line ends in a newline, or in a backslash when the input
	 * ended inside a continued line (kept: libpam refuses such a file). */
	if (out_len > 0 && out[out_len - 1] != '\n' &&
	    out[out_len - 1] != '\\') {
		fail("last output line ends in neither a newline nor a "
		     "kept continuation", out, out_len);
	}
	if (out[0] == '\n' || strstr(out, "\n\n") != NULL) {
		fail("output has an empty line", out, out_len);
	}
	for (const char *h = strchr(out, '#'); h != NULL;
	     h = strchr(h + 1, '#')) {
		if (h[1] != '\n') {
			fail("a comment survived", out, out_len);
		}
	}
}

/* The rewriter refuses a file libpam would hang on, or an include that
 * would not fit libpam's line: nothing to check then. */
static bool refused(int rc)
{
	return rc != 0 && (errno == EINVAL || errno == E2BIG);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *s = getenv("PWRAP_FUZZ_STRICT");

	(void)argc;
	(void)argv;
	strict = s != NULL && s[0] == '1';
	pamconf_rules_linux(&rules[0], 105, true);
	pamconf_rules_linux(&rules[1], 106, true);
	return 0;
}

static void one(const struct pamconf_rules *r, const uint8_t *data,
		size_t size)
{
	const struct pamconf_ops with_cbs = {
		.include_target = cb_include,
		.module_path = cb_module,
	};
	const struct pamconf_ops no_cbs = { .ctx = NULL };
	char *out = NULL;
	char *plain = NULL;
	char *again = NULL;
	size_t out_len = 0, plain_len = 0, again_len = 0;
	int rc;

	errno = 0;
	rc = pwrap_rewrite(r, (const char *)data, size, "fuzz", &with_cbs,
			   &out, &out_len);
	if (!refused(rc)) {
		check_output(rc, out, out_len);
	}

	errno = 0;
	rc = pwrap_rewrite(r, (const char *)data, size, "fuzz", &no_cbs,
			   &plain, &plain_len);
	if (refused(rc) && errno == EINVAL) {
		free(out);
		return;	/* a file libpam would hang on */
	}
	check_output(rc, plain, plain_len);

	if (strict) {
		rc = pwrap_rewrite(r, plain, plain_len, "fuzz", &no_cbs,
				   &again, &again_len);

		check_output(rc, again, again_len);
		if (again_len != plain_len ||
		    memcmp(again, plain, plain_len) != 0) {
			fprintf(stderr, "first pass:\n");
			fwrite(plain, 1, plain_len, stderr);
			fail("rewriting the output changes it", again,
			     again_len);
		}
	}

	free(out);
	free(plain);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(&rules[0], data, size);
	one(&rules[1], data, size);
	return 0;
}
