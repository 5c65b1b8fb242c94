/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A test program as users of the installed libpamtest write it: a PAM
 * transaction whose prompts libpam_misc's misc_conv answers from standard
 * input.  Usage: consumer SERVICE USER  (the password on stdin).
 */
#include <stdio.h>

#include <libpamtest.h>
#include <security/pam_misc.h>

int main(int argc, char **argv)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	enum pamtest_err perr;

	if (argc != 3) {
		fprintf(stderr, "usage: consumer SERVICE USER\n");
		return 2;
	}
	perr = run_pamtest_conv(argv[1], argv[2], misc_conv, NULL, tests);
	printf("consumer: %s\n", pamtest_strerror(perr));
	return perr == PAMTEST_ERR_OK ? 0 : 1;
}
