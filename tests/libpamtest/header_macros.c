/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compiled (never run) by the libpamtest_macros_* tests: every macro of the
 * header, in every form, expands to code that compiles with -Wall -Wextra
 * -Werror -pedantic as C99 and C11: run_pamtest with 4 and 5 arguments,
 * run_pamtest_conv with 5 and 6, run_pamtest_n with 5 and 6,
 * run_pamtest_faults with 5 and 6, run_pamtest_conv_faults with 6 and 7,
 * pamtest_failed_case, pam_test and pam_test_flags.  Only <libpamtest.h>
 * is included.
 */
#include <libpamtest.h>

int lpt_header_macros(pam_conv_fn fn, pam_handle_t *ph);
int lpt_header_macros(pam_conv_fn fn, pam_handle_t *ph)
{
	const char *answers[] = { "secret", NULL };
	struct pamtest_conv_data conv_data = { answers, NULL, NULL, NULL };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test_flags(PAMTEST_SETCRED, PAM_SUCCESS, PAM_ESTABLISH_CRED),
		pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	struct pamtest_conv_faults faults = { 1, PAM_BUF_ERR, 0, 0, 0, 0, 0 };
	struct pam_testcase *list = tests;
	const struct pam_testcase *failed;
	enum pamtest_err perr;
	int n = 0;

	perr = run_pamtest("matrix", "trinity", &conv_data, tests);
	n += (int)perr;
	perr = run_pamtest("matrix", "trinity", &conv_data, tests, ph);
	n += (int)perr;
	perr = run_pamtest("matrix", "trinity", NULL, tests, NULL);
	n += (int)perr;
	perr = run_pamtest_conv("matrix", "trinity", fn, &conv_data, tests);
	n += (int)perr;
	perr = run_pamtest_conv("matrix", "trinity", fn, NULL, tests, ph);
	n += (int)perr;
	perr = run_pamtest_n("matrix", "trinity", &conv_data, list, 2);
	n += (int)perr;
	perr = run_pamtest_n("matrix", "trinity", &conv_data, list, 2, ph);
	n += (int)perr;
	perr = run_pamtest_faults("matrix", "trinity", &conv_data, &faults,
				  tests);
	n += (int)perr;
	perr = run_pamtest_faults("matrix", "trinity", NULL, NULL, tests, ph);
	n += (int)perr;
	perr = run_pamtest_conv_faults("matrix", "trinity", fn, NULL, &faults,
				       tests);
	n += (int)perr;
	perr = run_pamtest_conv_faults("matrix", "trinity", fn, NULL, &faults,
				       tests, ph);
	n += (int)perr + (int)faults.calls;
	failed = pamtest_failed_case(tests);
	if (failed != NULL) {
		n += failed->op_rv;
	}
	failed = _pamtest_failed_case(list, 4);
	pamtest_free_env(tests[2].case_out.envlist);
	n += pamtest_strerror(perr)[0];
	return n + (failed != NULL);
}
