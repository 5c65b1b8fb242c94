/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix on a 1,000,000-user passdb: the last user authenticates, is
 * refused with a wrong password, passes the account check and can change
 * the password.  Only correctness is asserted here (speed is benchmarked
 * elsewhere); the elapsed times are printed for information.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <setjmp.h>
#include <cmocka.h>

#include "modtest.h"

#define NUSERS 1000000

static int timed_run(const struct mt_env *t, const char *user,
		     enum mt_op op, size_t n, ...)
{
	struct mt_conv c;
	const char *a[3] = { NULL, NULL, NULL };
	va_list ap;
	double t0;
	int rv;

	va_start(ap, n);
	for (size_t i = 0; i < n && i < 3; i++) {
		a[i] = va_arg(ap, const char *);
	}
	va_end(ap);
	mt_conv_init(&c, n, a[0], a[1], a[2]);
	t0 = tu_now();
	rv = mt_run(t, "svc", user, &c, op, 0);
	printf("# op %d for %s: %.1f ms\n", (int)op, user,
	       (tu_now() - t0) * 1000.0);
	mt_conv_free(&c);
	return rv;
}

static void big_passdb(void **state)
{
	struct mt_env t;
	FILE *f;
	char last[32];
	char lastpw[32];
	size_t len;
	char *content;
	char *p;

	(void)state;
	mt_init(&t);
	f = fopen(t.passdb, "w");
	assert_non_null(f);
	fputs("# a million users\n", f);
	for (int i = 0; i < NUSERS; i++) {
		fprintf(f, "user%07d:pass%07d:svc\n", i, i);
	}
	assert_int_equal(fclose(f), 0);
	mt_service(&t, "svc",
		   "auth     required %s/pam_matrix.so passdb=%s\n"
		   "account  required %s/pam_matrix.so passdb=%s\n"
		   "password required %s/pam_matrix.so passdb=%s\n",
		   t.moddir, t.passdb, t.moddir, t.passdb, t.moddir,
		   t.passdb);
	snprintf(last, sizeof(last), "user%07d", NUSERS - 1);
	snprintf(lastpw, sizeof(lastpw), "pass%07d", NUSERS - 1);

	assert_int_equal(timed_run(&t, last, MT_AUTH, 1, lastpw), PAM_SUCCESS);
	assert_int_equal(timed_run(&t, last, MT_AUTH, 1, "pass0000000"),
			 PAM_AUTH_ERR);
	assert_int_equal(timed_run(&t, "user0000000", MT_AUTH, 1,
				   "pass0000000"),
			 PAM_SUCCESS);
	assert_int_equal(timed_run(&t, "user10000000", MT_AUTH, 1, lastpw),
			 PAM_AUTH_ERR);
	assert_int_equal(timed_run(&t, last, MT_ACCT, 0), PAM_SUCCESS);
	assert_int_equal(timed_run(&t, last, MT_CHAUTHTOK, 3, lastpw, "fresh",
				   "fresh"),
			 PAM_SUCCESS);
	assert_int_equal(timed_run(&t, last, MT_AUTH, 1, "fresh"),
			 PAM_SUCCESS);

	/* Every other line is still there. */
	content = tu_read_file(t.passdb, &len);
	assert_int_equal(len, strlen("# a million users\n") +
				      (size_t)NUSERS * 28 - 6);
	p = strstr(content, "user0999998:pass0999998:svc\nuser0999999:fresh:"
			    "svc\n");
	assert_non_null(p);
	free(content);
	/* No complaints about a well-formed file. */
	assert_false(mt_log_has("line skipped"));
	mt_cleanup(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(big_passdb),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
