/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tests pam_example with libpamtest, under pam_wrapper (ctest sets
 * LD_PRELOAD=<libpam_wrapper.so> PAM_WRAPPER=1): the service file goes
 * into a directory of our own, PAM_WRAPPER_SERVICE_DIR points there, and
 * the real libpam runs the module.  PAM_EXAMPLE_MODULE, the module's path,
 * comes from CMakeLists.txt.  Exit status 0 when every check passed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpamtest.h>

/* Runs authenticate (and account when it succeeds) with one password. */
static int check(const char *service, const char *password, int expected)
{
	const char *answers[] = { password, NULL };
	struct pamtest_conv_data conv = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, expected),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	/* A refused login stops after authenticate. */
	size_t n = expected == PAM_SUCCESS ? 2 : 1;
	enum pamtest_err perr = _pamtest(service, "alice", &conv, tests, n,
					 NULL);

	printf("%s %s with \"%s\": %s\n", perr == PAMTEST_ERR_OK ? "ok" : "FAILED",
	       service, password, pamtest_strerror(perr));
	return perr == PAMTEST_ERR_OK ? 0 : 1;
}

int main(void)
{
	char dir[] = "/tmp/pam_example.XXXXXX";
	char path[sizeof(dir) + 32];
	FILE *f;
	int failed = 0;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/example", dir);
	f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		rmdir(dir);
		return 1;
	}
	fprintf(f, "auth    required %s secret=open-sesame\n"
		   "account required %s\n", PAM_EXAMPLE_MODULE, PAM_EXAMPLE_MODULE);
	fclose(f);
	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);

	failed |= check("example", "open-sesame", PAM_SUCCESS);
	failed |= check("example", "guess", PAM_AUTH_ERR);
	failed |= check("example", "", PAM_AUTH_ERR);

	unlink(path);
	rmdir(dir);
	return failed;
}
