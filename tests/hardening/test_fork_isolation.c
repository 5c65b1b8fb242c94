/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A wrapped process forks; the child runs a PAM transaction with another
 * PAM_WRAPPER_SERVICE_DIR and exits.  The parent's next transaction must
 * still use the parent's service directory.  (The runtime directory is
 * shared with forked children, and the child's copy of the service file
 * in services/ looks to the parent like a file the test wrote there, which
 * wins over PAM_WRAPPER_SERVICE_DIR from then on.)  This binary runs
 * wrapped (LD_PRELOAD, PAM_WRAPPER=1).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <security/pam_appl.h>

#include "hard_util.h"

static int auth(const char *dir)
{
	struct pam_conv c = { tu_conv_none, NULL };
	pam_handle_t *ph = NULL;
	int rc;

	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);
	rc = pam_start("svc", "u", &c, &ph);
	if (rc != PAM_SUCCESS) {
		return 1000 + rc;
	}
	rc = pam_authenticate(ph, 0);
	pam_end(ph, rc);
	return rc;
}

static void test_child_transaction_keeps_parent_config(void **state)
{
	char *a = tu_subdir(*state, "permit");
	char *b = tu_subdir(*state, "deny");
	char *p;
	pid_t pid;
	int st;

	p = tu_path(a, "svc");
	tu_write_file(p, "auth required pam_permit.so\n", 28, 0644);
	free(p);
	p = tu_path(b, "svc");
	tu_write_file(p, "auth required pam_deny.so\n", 26, 0644);
	free(p);

	assert_int_equal(auth(a), PAM_SUCCESS);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ok = auth(b) == PAM_AUTH_ERR;

		free(a);	/* valgrind checks the child's heap at _exit */
		free(b);
		_exit(ok ? 0 : 1);
	}
	st = tu_wait(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(auth(a), PAM_SUCCESS);
	assert_int_equal(auth(b), PAM_AUTH_ERR);
	assert_int_equal(auth(a), PAM_SUCCESS);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_child_transaction_keeps_parent_config,
			tu_setup_tmpdir, tu_teardown_tmpdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
