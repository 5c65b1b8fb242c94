/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Example: what does a PAM module do when the application's conversation
 * misbehaves?  This program runs pam_matrix's authenticate and chauthtok
 * through libpamtest with each conversation fault of struct
 * pamtest_conv_faults (a failing call, no reply array, NULL answers, an
 * answer longer than PAM_MAX_RESP_SIZE) and checks the code it returns.
 *
 * It writes its service file and passdb into a directory of its own below
 * $TMPDIR and removes it at the end.  Run it wrapped:
 *
 *   LD_PRELOAD=build/lib/libpam_wrapper.so PAM_WRAPPER=1 build/bin/conv_faults
 *
 * Exit status 0 when every fault gave the expected code.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpamtest.h>

struct check {
	const char *what;
	enum pamtest_ops op;
	struct pamtest_conv_faults faults;
	int expected; /* what pam_matrix returns */
};

/* pam_matrix prompts once in authenticate ("Password: "), three times in
 * chauthtok ("Old password: ", "New Password :", "Verify New Password :").
 * As upstream's: a failed call or no reply array at any prompt is
 * PAM_AUTHINFO_UNAVAIL; a NULL answer is PAM_CRED_ERR for the passwords it
 * checks, PAM_AUTHINFO_UNAVAIL for the verification, and (ours; upstream
 * says PAM_SUCCESS) PAM_AUTHTOK_ERR for the new password. */
static const struct check checks[] = {
	{ "authenticate, no fault", PAMTEST_AUTHENTICATE, { 0 }, PAM_SUCCESS },
	{ "authenticate, call 1 fails", PAMTEST_AUTHENTICATE,
	  { .fail_at = 1 }, PAM_AUTHINFO_UNAVAIL },
	{ "authenticate, call 1 out of memory", PAMTEST_AUTHENTICATE,
	  { .fail_at = 1, .fail_code = PAM_BUF_ERR }, PAM_AUTHINFO_UNAVAIL },
	{ "authenticate, no reply array", PAMTEST_AUTHENTICATE,
	  { .null_resp_at = 1 }, PAM_AUTHINFO_UNAVAIL },
	{ "authenticate, NULL answer", PAMTEST_AUTHENTICATE,
	  { .null_entry_at = 1 }, PAM_CRED_ERR },
	{ "authenticate, 2048-character answer", PAMTEST_AUTHENTICATE,
	  { .long_answer_at = 1 }, PAM_AUTH_ERR },
	{ "chauthtok, old password call fails", PAMTEST_CHAUTHTOK,
	  { .fail_at = 1 }, PAM_AUTHINFO_UNAVAIL },
	{ "chauthtok, NULL old password", PAMTEST_CHAUTHTOK,
	  { .null_entry_at = 1 }, PAM_CRED_ERR },
	{ "chauthtok, NULL new password", PAMTEST_CHAUTHTOK,
	  { .null_entry_at = 2 }, PAM_AUTHTOK_ERR },
	{ "chauthtok, NULL verification", PAMTEST_CHAUTHTOK,
	  { .null_entry_at = 3 }, PAM_AUTHINFO_UNAVAIL },
	{ "chauthtok, no reply to verify", PAMTEST_CHAUTHTOK,
	  { .null_resp_at = 3 }, PAM_AUTHINFO_UNAVAIL },
	{ "chauthtok, long new password", PAMTEST_CHAUTHTOK,
	  { .long_answer_at = 2 }, PAM_AUTHINFO_UNAVAIL },
};

/* Writes dir/name; 0 on success. */
static int write_file(const char *dir, const char *name, const char *text)
{
	char *path = NULL;
	FILE *f = NULL;
	int rc = -1;

	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		return -1;
	}
	f = fopen(path, "w");
	if (f != NULL && fputs(text, f) >= 0) {
		rc = 0;
	}
	if (f != NULL && fclose(f) != 0) {
		rc = -1;
	}
	free(path);
	return rc;
}

static void remove_dir(const char *dir)
{
	const char *names[] = { "matrix", "passdb", NULL };
	char *path = NULL;

	for (size_t i = 0; names[i] != NULL; i++) {
		if (asprintf(&path, "%s/%s", dir, names[i]) >= 0) {
			unlink(path);
			free(path);
		}
	}
	rmdir(dir);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = NULL;
	char *service = NULL;
	int failures = 0;
	int rc = 2;

	if (asprintf(&dir, "%s/conv_faults.XXXXXX",
		     tmp != NULL ? tmp : "/tmp") < 0) {
		return 2;
	}
	if (mkdtemp(dir) == NULL ||
	    asprintf(&service,
		     "auth required pam_matrix.so passdb=%1$s/passdb\n"
		     "password required pam_matrix.so passdb=%1$s/passdb\n",
		     dir) < 0 ||
	    write_file(dir, "matrix", service) != 0) {
		perror("conv_faults: setup");
		goto out;
	}
	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		const char *answers[] = { "secret", "new", "new", NULL };
		struct pamtest_conv_data conv = { .in_echo_off = answers };
		/* The run changes only calls; the table stays as it is. */
		struct pamtest_conv_faults faults = checks[i].faults;
		struct pam_testcase tests[] = {
			pam_test(checks[i].op, checks[i].expected),
		};
		enum pamtest_err perr;

		/* A fresh passdb: a successful chauthtok would change it. */
		if (write_file(dir, "passdb", "trinity:secret:matrix\n") != 0) {
			perror("conv_faults: passdb");
			goto out;
		}
		perr = run_pamtest_faults("matrix", "trinity", &conv, &faults,
					  tests);
		printf("%-40s %-6s returned %2d after %u conversation call(s)\n",
		       checks[i].what, perr == PAMTEST_ERR_OK ? "ok" : "FAIL",
		       tests[0].op_rv, faults.calls);
		if (perr != PAMTEST_ERR_OK) {
			fprintf(stderr, "conv_faults: %s: expected %d: %s\n",
				checks[i].what, checks[i].expected,
				pamtest_strerror(perr));
			failures++;
		}
	}
	rc = failures == 0 ? 0 : 1;
out:
	if (dir != NULL) {
		remove_dir(dir);
	}
	free(service);
	free(dir);
	return rc;
}
