/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compiled by the libpamtest_no_pointer_* tests: handing run_pamtest() (and
 * the other array macros) a pointer instead of an array must not compile,
 * since sizeof(p) / sizeof(p[0]) would silently run the wrong number of
 * cases.  -DLPT_CASE=n picks the macro and the kind of pointer (a parameter
 * declared as an array, or a plain pointer); LPT_CASE 0 is the control that
 * passes the array itself and must compile.  The tests compile it without
 * -Werror: the rejection is a hard error, not a warning.
 */
#include <libpamtest.h>

int lpt_no_pointer(struct pam_testcase tests[], pam_conv_fn fn);
/* tests is a parameter: a pointer, whatever its declaration looks like. */
int lpt_no_pointer(struct pam_testcase tests[], pam_conv_fn fn)
{
	struct pam_testcase array[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	int n = 0;

	(void)tests;
	(void)fn;
	n += (int)run_pamtest("svc", "user", NULL, array);
#if LPT_CASE == 1
	n += (int)run_pamtest("svc", "user", NULL, tests);
#elif LPT_CASE == 2
	n += (int)run_pamtest("svc", "user", NULL, tests, NULL);
#elif LPT_CASE == 3
	n += (int)run_pamtest_conv("svc", "user", fn, NULL, tests);
#elif LPT_CASE == 4
	n += (int)run_pamtest_conv("svc", "user", fn, NULL, tests, NULL);
#elif LPT_CASE == 5
	n += pamtest_failed_case(tests) != NULL;
#elif LPT_CASE == 7
	n += (int)run_pamtest_faults("svc", "user", NULL, NULL, tests);
#elif LPT_CASE == 8
	n += (int)run_pamtest_conv_faults("svc", "user", fn, NULL, NULL, tests,
					  NULL);
#elif LPT_CASE == 6
	{
		struct pam_testcase *p = array;
		n += (int)run_pamtest("svc", "user", NULL, p);
	}
#endif
	return n;
}
