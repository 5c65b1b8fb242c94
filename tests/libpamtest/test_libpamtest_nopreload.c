/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libpamtest in a process that is NOT wrapped (no LD_PRELOAD): with
 * PAM_WRAPPER=1 and PAM_WRAPPER_SERVICE_DIR set, run_pamtest() and
 * run_pamtest_conv() must return PAMTEST_ERR_START and print one line on
 * stderr naming LD_PRELOAD and libpam_wrapper.so, rather than run the
 * system's /etc/pam.d.  Without PAM_WRAPPER=1 (or without a service
 * directory) nothing changes: no such line, pam_start() is called.
 *
 * stderr is captured by pointing fd 2 at a temporary file around each call.
 * The service directory holds a service that would pass, so a libpamtest
 * that ran PAM anyway is caught by its result too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <libpamtest.h>

#include "testutil.h"

struct state {
	char *svcdir;
};

static int setup(void **st)
{
	struct state *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	/* The point of the test: this process must not be wrapped. */
	assert_null(dlsym(RTLD_DEFAULT, "pam_wrapper_enabled"));
	s->svcdir = tu_svcdir_new("lpt");
	tu_write_text(s->svcdir, "lpt_nopreload",
		      "auth required pam_permit.so\n"
		      "account required pam_permit.so\n");
	*st = s;
	return 0;
}

static int teardown(void **st)
{
	struct state *s = *st;

	tu_rmtree_quiet(s->svcdir);
	free(s->svcdir);
	free(s);
	return 0;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++) {
		n += *s == '\n';
	}
	return n;
}

static void assert_preload_message(const char *err)
{
	assert_int_equal(count_lines(err), 1);
	assert_non_null(strstr(err, "LD_PRELOAD"));
	assert_non_null(strstr(err, "libpam_wrapper.so"));
	assert_true(strncmp(err, "libpamtest: ", 12) == 0);
}

static void test_run_pamtest_refuses(void **st)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	enum pamtest_err perr;
	char *err;

	(void)st;
	setenv("PAM_WRAPPER", "1", 1);
	tu_stderr_begin();
	perr = run_pamtest("lpt_nopreload", "alice", NULL, tests);
	err = tu_stderr_end();
	assert_int_equal(perr, PAMTEST_ERR_START);
	assert_preload_message(err);
	/* Nothing ran. */
	assert_int_equal(tests[0].op_rv, 0);
	assert_int_equal(tests[1].op_rv, 0);
	free(err);
}

static void test_run_pamtest_conv_refuses(void **st)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	enum pamtest_err perr;
	char *err;

	(void)st;
	/* Only the first character counts, as for the wrapper itself. */
	setenv("PAM_WRAPPER", "1 please", 1);
	tu_stderr_begin();
	perr = run_pamtest_conv("lpt_nopreload", "alice", tu_conv_none, NULL,
				tests);
	err = tu_stderr_end();
	assert_int_equal(perr, PAMTEST_ERR_START);
	assert_preload_message(err);
	free(err);
}

/*
 * Without the request (PAM_WRAPPER other than "1...", or no service
 * directory) libpamtest calls pam_start() as before: whatever the system's
 * /etc/pam.d does with the unknown service, no preload message appears.
 * A run of no case only starts and ends a handle.
 */
static void run_unrequested(const char *wrapper, int with_dir, const char *dir)
{
	struct pam_testcase none[1] = { pam_test(PAMTEST_AUTHENTICATE, 0) };
	enum pamtest_err perr;
	char *err;

	if (wrapper != NULL) {
		setenv("PAM_WRAPPER", wrapper, 1);
	} else {
		unsetenv("PAM_WRAPPER");
	}
	if (with_dir) {
		setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);
	} else {
		unsetenv("PAM_WRAPPER_SERVICE_DIR");
	}
	tu_stderr_begin();
	perr = run_pamtest_n("lpt_nopreload", "alice", NULL, none, 0);
	err = tu_stderr_end();
	assert_null(strstr(err, "LD_PRELOAD"));
	assert_true(perr == PAMTEST_ERR_OK || perr == PAMTEST_ERR_START);
	free(err);
	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);
}

static void test_nothing_changes_without_the_request(void **st)
{
	struct state *s = *st;

	run_unrequested(NULL, 1, s->svcdir);
	run_unrequested("0", 1, s->svcdir);
	run_unrequested("", 1, s->svcdir);
	run_unrequested("yes", 1, s->svcdir);
	run_unrequested("1", 0, s->svcdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_pamtest_refuses),
		cmocka_unit_test(test_run_pamtest_conv_refuses),
		cmocka_unit_test(test_nothing_changes_without_the_request),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
