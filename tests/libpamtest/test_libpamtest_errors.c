/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmocka tests of libpamtest's failure paths that real PAM cannot be made to
 * take on demand: pam_start() and pam_end() failing, and pam_set_item(PAM_CONV)
 * failing (out of memory) when a call installs its conversation on a given
 * handle or detaches it from a kept one.  This program defines pam_start,
 * pam_end and pam_set_item itself (exported, so they interpose on the
 * references of libpamtest); each forwards to the next definition (the
 * preloaded wrapper, then libpam) unless a test armed a failure.  Everything
 * else runs through the real preload, as in test_libpamtest.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <libpamtest.h>

#include "testutil.h"

#define M LPT_MODULE

/* Armed failures; reset before every test. */
static int fail_pam_start;
static int fail_pam_end;
static int fail_set_conv_at; /* n > 0: the n-th pam_set_item(PAM_CONV) fails */
static int set_conv_calls;

static void *next_symbol(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (f == NULL) {
		abort();
	}
	return f;
}

int pam_start(const char *service_name, const char *user,
	      const struct pam_conv *pam_conversation, pam_handle_t **pamh)
{
	int (*real)(const char *, const char *, const struct pam_conv *,
		    pam_handle_t **);

	if (fail_pam_start) {
		*pamh = NULL;
		return PAM_ABORT;
	}
	*(void **)&real = next_symbol("pam_start");
	return real(service_name, user, pam_conversation, pamh);
}

int pam_end(pam_handle_t *pamh, int pam_status)
{
	int (*real)(pam_handle_t *, int);
	int rv;

	*(void **)&real = next_symbol("pam_end");
	/* Really end it (no leak), then report a failure. */
	rv = real(pamh, pam_status);
	return fail_pam_end ? PAM_SYSTEM_ERR : rv;
}

int pam_set_item(pam_handle_t *pamh, int item_type, const void *item)
{
	int (*real)(pam_handle_t *, int, const void *);

	if (item_type == PAM_CONV) {
		set_conv_calls++;
		if (set_conv_calls == fail_set_conv_at) {
			return PAM_BUF_ERR;
		}
	}
	*(void **)&real = next_symbol("pam_set_item");
	return real(pamh, item_type, item);
}

static int group_setup(void **state)
{
	char *dir = tu_svcdir_new("lpt");

	tu_write_text(dir, "permit",
		      "auth required " M " endstatus\n"
		      "account required pam_permit.so\n");
	tu_write_text(dir, "deny", "auth required pam_deny.so\n");
	tu_write_text(dir, "keep",
		      "auth required " M " off=first endstatus\n"
		      "account required " M " off=second\n");
	*state = dir;
	return 0;
}

static int group_teardown(void **state)
{
	tu_rmtree_quiet(*state);
	free(*state);
	return 0;
}

static int reset(void **state)
{
	(void)state;
	fail_pam_start = 0;
	fail_pam_end = 0;
	fail_set_conv_at = 0;
	set_conv_calls = 0;
	unsetenv("LPT_END_STATUS");
	return 0;
}

static const char *end_status(void)
{
	return getenv("LPT_END_STATUS");
}

static void test_start_fails(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	fail_pam_start = 1;
	assert_int_equal(run_pamtest("permit", "trinity", NULL, tests),
			 PAMTEST_ERR_START);
	assert_int_equal(tests[0].op_rv, 0);
	assert_int_equal(_pamtest_conv("permit", "trinity", NULL, NULL, NULL, 0,
				       NULL),
			 PAMTEST_ERR_START);
}

static void test_end_fails(void **state)
{
	struct pam_testcase ok[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	struct pam_testcase bad[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	fail_pam_end = 1;
	assert_int_equal(run_pamtest("permit", "trinity", NULL, ok),
			 PAMTEST_ERR_END);
	assert_string_equal(end_status(), "0");
	/* A failed pam_end() is reported even after a failed case. */
	assert_int_equal(run_pamtest("deny", "trinity", NULL, bad),
			 PAMTEST_ERR_END);
	assert_int_equal(bad[0].op_rv, PAM_AUTH_ERR);
	assert_ptr_equal(pamtest_failed_case(bad), &bad[0]);
	/* And without any case. */
	assert_int_equal(_pamtest("permit", "trinity", NULL, NULL, 0, NULL),
			 PAMTEST_ERR_END);
}

static void test_keep_detach_fails(void **state)
{
	const char *answers[] = { "first", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	/* A new handle: the first PAM_CONV change is the detach on return
	 * (OpenPAM's pam_start sets PAM_CONV through pam_set_item first). */
#if defined(PWRAP_OPENPAM)
	fail_set_conv_at = 2;
#else
	fail_set_conv_at = 1;
#endif
	assert_int_equal(run_pamtest("keep", "trinity", &conv_data, tests),
			 PAMTEST_ERR_KEEPHANDLE);
	/* Not handed out, and ended with the last op_rv. */
	assert_null(tests[0].case_out.ph);
	assert_string_equal(end_status(), "0");
}

static void test_reuse_install_fails(void **state)
{
	const char *answers[] = { "first", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = answers };
	struct pam_testcase keep[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	struct pam_testcase acct[] = {
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("keep", "trinity", &conv_data, keep),
			 PAMTEST_ERR_OK);
	assert_non_null(keep[1].case_out.ph);
	assert_null(end_status());
	/* The next PAM_CONV change is the install on the given handle. */
	fail_set_conv_at = set_conv_calls + 1;
	assert_int_equal(run_pamtest(NULL, NULL, &conv_data, acct,
				     keep[1].case_out.ph),
			 PAMTEST_ERR_INTERNAL);
	assert_int_equal(acct[0].op_rv, 0);
	/* The handle was ended anyway: nothing leaks. */
	assert_non_null(end_status());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_start_fails, reset),
		cmocka_unit_test_setup(test_end_fails, reset),
		cmocka_unit_test_setup(test_keep_detach_fails, reset),
		cmocka_unit_test_setup(test_reuse_install_fails, reset),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
