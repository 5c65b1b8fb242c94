/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The two classic pam_wrapper examples, written as the seed article shows
 * them (its missing comma restored) and compiled as they are:
 *   1. change trinity's password with pam_matrix, then log in with the new
 *      one (run_pamtest's 4-argument form);
 *   2. a stack of pam_set_items and pam_get_items, checked through
 *      PAMTEST_GETENVLIST;
 * plus the examples of libpamtest(3) (keeping a handle, conversation faults).
 * The fixture only writes the service files and the passdb into a private
 * directory below $TMPDIR; the test bodies are the examples.  Runs wrapped
 * (LD_PRELOAD, PAM_WRAPPER=1), with our modules named bare in the services.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <libpamtest.h>

#include "testutil.h"

static int setup_services(void **state)
{
	char *dir = tu_svcdir_new("lpt");
	char *matrix = NULL;
	int rc = -1;

	if (asprintf(&matrix,
		     "auth required pam_matrix.so passdb=%1$s/passdb\n"
		     "account required pam_matrix.so passdb=%1$s/passdb\n"
		     "password required pam_matrix.so passdb=%1$s/passdb\n"
		     "session required pam_matrix.so passdb=%1$s/passdb\n",
		     dir) < 0) {
		matrix = NULL;
		goto out;
	}
	tu_write_text(dir, "passdb", "trinity:secret:matrix\n");
	tu_write_text(dir, "matrix", matrix);
	tu_write_text(dir, "pam_items",
		      "auth required pam_set_items.so\n"
		      "auth required pam_get_items.so\n");
	rc = 0;
out:
	free(matrix);
	if (rc != 0) {
		tu_rmtree_quiet(dir);
		free(dir);
		dir = NULL;
	}
	*state = dir;
	return rc;
}

static int teardown_services(void **state)
{
	tu_rmtree_quiet(*state);
	free(*state);
	unsetenv("PAM_AUTHTOK");
	unsetenv("PAM_RHOST");
	return 0;
}

/* Example 1: a password change, then a login with the new password. */
static void test_pam_chauthtok(void **state)
{
	enum pamtest_err perr;
	const char *new_authtoks[] = {
		"secret",           /* old password */
		"new_secret",       /* new password */
		"new_secret",       /* verify the new password */
		NULL,
	};
	struct pamtest_conv_data conv_data = {
		.in_echo_off = new_authtoks,
	};
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_CHAUTHTOK, PAM_SUCCESS),
	};
	const char *login_authtoks[] = {
		"new_secret",
		NULL,
	};
	struct pamtest_conv_data login_data = {
		.in_echo_off = login_authtoks,
	};
	struct pam_testcase login[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};

	perr = run_pamtest("matrix", "trinity", &conv_data, tests);
	assert_int_equal(perr, PAMTEST_ERR_OK);

	perr = run_pamtest("matrix", "trinity", &login_data, login);
	assert_int_equal(perr, PAMTEST_ERR_OK);

	/* Not part of the example: the passdb really changed. */
	{
		char *passdb = tu_read_at(*state, "passdb");

		assert_non_null(passdb);
		assert_string_equal(passdb, "trinity:new_secret:matrix\n");
		free(passdb);
	}
}

/* The same password change and login in one transaction: the answers are
 * consumed in order across the cases. */
static void test_pam_chauthtok_and_login(void **state)
{
	enum pamtest_err perr;
	const char *authtoks[] = {
		"new_secret",       /* old password (set by the test above) */
		"newer_secret",     /* new password */
		"newer_secret",     /* verify the new password */
		"newer_secret",     /* log in with it */
		NULL,
	};
	char err[PAM_MAX_MSG_SIZE];
	char *out_err[] = { err, NULL };
	struct pamtest_conv_data conv_data = {
		.in_echo_off = authtoks,
		.out_err = out_err,
	};
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_CHAUTHTOK, PAM_SUCCESS),
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	const char *mismatch[] = {
		"newer_secret",
		"one",
		"two",
		NULL,
	};
	struct pam_testcase fail[] = {
		pam_test(PAMTEST_CHAUTHTOK, PAM_SUCCESS),
	};

	(void)state;
	perr = run_pamtest("matrix", "trinity", &conv_data, tests);
	assert_int_equal(perr, PAMTEST_ERR_OK);

	/* Mismatched new passwords: pam_matrix's error reaches out_err. */
	conv_data.in_echo_off = mismatch;
	perr = run_pamtest("matrix", "trinity", &conv_data, fail);
	assert_int_equal(perr, PAMTEST_ERR_CASE);
	assert_ptr_equal(pamtest_failed_case(fail), &fail[0]);
	assert_string_equal(err, "Passwords do not match");
}

/* The variable is in the list, with this value. */
static void env_is(char **envlist, const char *name, const char *value)
{
	const char *v = tu_env_get(envlist, name);

	assert_non_null(v);
	assert_string_equal(v, value);
}

/* Example 2: pam_set_items puts items on the stack, pam_get_items copies
 * them into the PAM environment, GETENVLIST shows them. */
static void test_pam_items(void **state)
{
	enum pamtest_err perr;
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
	};

	(void) state;

	setenv("PAM_AUTHTOK", "secret_token", 1);
	setenv("PAM_RHOST", "matrix.example.com", 1);

	perr = run_pamtest("pam_items", "trinity", NULL, tests);
	assert_int_equal(perr, PAMTEST_ERR_OK);

	env_is(tests[1].case_out.envlist, "PAM_AUTHTOK", "secret_token");
	env_is(tests[1].case_out.envlist, "PAM_RHOST", "matrix.example.com");
	env_is(tests[1].case_out.envlist, "PAM_USER", "trinity");
	env_is(tests[1].case_out.envlist, "PAM_SERVICE", "pam_items");
	pamtest_free_env(tests[1].case_out.envlist);
}

/* The second example of libpamtest(3): keep the handle of the items stack
 * and end it in a second call. */
static void test_manpage_keep_and_continue(void **state)
{
	enum pamtest_err perr;
	struct pam_testcase first[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	struct pam_testcase second[] = {
		pam_test(PAMTEST_SETCRED, PAM_SUCCESS),
	};

	(void)state;
	setenv("PAM_AUTHTOK", "secret_token", 1);
	perr = run_pamtest("pam_items", "trinity", NULL, first);
	assert_int_equal(perr, PAMTEST_ERR_OK);
	env_is(first[1].case_out.envlist, "PAM_AUTHTOK", "secret_token");
	pamtest_free_env(first[1].case_out.envlist);
	assert_non_null(first[2].case_out.ph);
	perr = run_pamtest(NULL, NULL, NULL, second, first[2].case_out.ph);
	assert_int_equal(perr, PAMTEST_ERR_OK);
}

/* The fault example of libpamtest(3): the conversation fails on pam_matrix's
 * password prompt. */
static void test_manpage_faults(void **state)
{
	enum pamtest_err perr;
	const char *answers[] = { "secret", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = answers };
	struct pamtest_conv_faults faults = {
		.fail_at = 1,
		.fail_code = PAM_BUF_ERR,
	};
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_AUTHINFO_UNAVAIL),
	};

	(void)state;
	perr = run_pamtest_faults("matrix", "trinity", &conv_data, &faults, tests);
	assert_int_equal(perr, PAMTEST_ERR_OK);
	assert_int_equal(faults.calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pam_chauthtok),
		cmocka_unit_test(test_pam_chauthtok_and_login),
		cmocka_unit_test(test_pam_items),
		cmocka_unit_test(test_manpage_keep_and_continue),
		cmocka_unit_test(test_manpage_faults),
	};

	return cmocka_run_group_tests(tests, setup_services, teardown_services);
}
