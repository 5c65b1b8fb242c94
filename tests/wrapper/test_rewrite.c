/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the service-file rewriter (src/wrapper/pwrap_conf.c). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pwrap_private.h"

static char *inc_cb(void *ctx, const char *t, const char *src, unsigned line)
{
	char *r = NULL;

	(void)ctx;
	(void)src;
	(void)line;
	return asprintf(&r, "/G/%s", t) < 0 ? NULL : r;
}

static char *mod_cb(void *ctx, const char *m, const char *src, unsigned line)
{
	char *r = NULL;

	(void)ctx;
	(void)src;
	(void)line;
	if (strcmp(m, "pam_matrix.so") != 0) {
		return NULL;
	}
	return asprintf(&r, "/M/%s", m) < 0 ? NULL : r;
}

static void check(const char *in, size_t len, const char *expected)
{
	struct pwrap_rewrite_ops ops = { inc_cb, mod_cb, NULL };
	char *out = NULL;
	size_t out_len = 0;

	assert_int_equal(pwrap_rewrite_service(in, len, "svc", &ops, &out,
					       &out_len), 0);
	assert_string_equal(out, expected);
	assert_int_equal(out_len, strlen(expected));
	free(out);
}

#define CHECK(in, exp) check((in), sizeof(in) - 1, (exp))

static void test_plain_lines(void **state)
{
	(void)state;
	CHECK("auth required pam_permit.so\n", "auth required pam_permit.so\n");
	CHECK("auth\trequired  pam_permit.so  a=1 b\n",
	      "auth required pam_permit.so  a=1 b\n");
	CHECK("", "");
	CHECK("\n\n   \n", "");
	CHECK("# only a comment\n", "");
}

static void test_module_names(void **state)
{
	(void)state;
	CHECK("auth required pam_matrix.so passdb=/x\n",
	      "auth required /M/pam_matrix.so passdb=/x\n");
	CHECK("-session optional pam_matrix.so\n",
	      "-session optional /M/pam_matrix.so\n");
	CHECK("auth [success=1 default=ignore] pam_matrix.so echo\n",
	      "auth [success=1 default=ignore] /M/pam_matrix.so echo\n");
	CHECK("auth required /abs/pam_matrix.so\n",
	      "auth required /abs/pam_matrix.so\n");
}

static void test_includes(void **state)
{
	(void)state;
	CHECK("auth include common-auth\n", "auth include /G/common-auth\n");
	CHECK("account substack sub\n", "account substack /G/sub\n");
	CHECK("@include common-session\n", "@include /G/common-session\n");
	CHECK("@include   x   # c\n", "@include /G/x\n");
}

static void test_syntax_corners(void **state)
{
	(void)state;
	/* continuation lines are joined */
	CHECK("auth \\\n required \\\n pam_matrix.so\n",
	      "auth required /M/pam_matrix.so\n");
	/* comments anywhere are dropped */
	CHECK("auth required pam_matrix.so # pam_x.so\n",
	      "auth required /M/pam_matrix.so\n");
	/* no trailing newline (GLOME writes files like that) */
	CHECK("auth required pam_matrix.so", "auth required /M/pam_matrix.so\n");
	/* CRLF line ends */
	CHECK("auth required pam_matrix.so\r\n",
	      "auth required /M/pam_matrix.so\n");
	/* a NUL ends what libpam would see of the line */
	CHECK("auth required pam_matrix.so\0junk\nauth required x.so\n",
	      "auth required /M/pam_matrix.so\nauth required x.so\n");
	/* an unterminated bracket or a short line is kept as is */
	CHECK("auth [success=1 pam_matrix.so\n",
	      "auth [success=1 pam_matrix.so\n");
	CHECK("auth\n", "auth\n");
	CHECK("auth required\n", "auth required\n");
	CHECK("@include\n", "@include \n");
	/* a file ending in a continuation stays one (libpam refuses it) */
	CHECK("auth required \\", "auth required\\");
	CHECK("auth required \\\n\n", "auth required\\");
	/* blank and comment lines inside a continuation are skipped */
	CHECK("auth required \\\n# c\n\n pam_matrix.so\n",
	      "auth required /M/pam_matrix.so\n");
	/* a comment after text ends the line, backslash or not */
	CHECK("auth required # \\\npam_matrix.so x\n",
	      "auth required\npam_matrix.so x\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_lines),
		cmocka_unit_test(test_module_names),
		cmocka_unit_test(test_includes),
		cmocka_unit_test(test_syntax_corners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
