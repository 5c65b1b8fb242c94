/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Issue 23 ("Trust"), the pam_matrix items: a wrapped application
 * (tests/hardening/hard_client) at the wrapper's default log level, as a
 * user runs a test.
 *
 *   flag_typo_is_shown     item 7: a passdb flag typo ("bob:secret:login:
 *                          lockd") was only a warning, hidden at the
 *                          default PAM_WRAPPER_DEBUGLEVEL, and bob then
 *                          looked unknown.  Promise: the line is read as
 *                          upstream reads it and an error line, shown at
 *                          the default level, names the file and the line
 *                          (never the password).
 *   locked_cannot_change   item 11: a locked account could still change its
 *                          password.  Promise: chauthtok is refused with
 *                          PAM_PERM_DENIED, as acct_mgmt refuses the
 *                          account, and the passdb stays byte for byte.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <security/pam_appl.h>

#include "hard_util.h"

static int setup(void **state)
{
	struct hu_fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	hu_fixture_init(f, "login");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct hu_fixture *f = *state;

	hu_fixture_free(f);
	free(f);
	return 0;
}

/* Runs hard_client on service "login" as USER with OPS and the answers
 * (NULL-terminated); its exit status, stdout and stderr. */
static int client(const struct hu_fixture *f, const char *user,
		  const char *ops, const char *a1, const char *a2,
		  const char *a3, char **out, char **err)
{
	char *argv[] = { (char *)hu_client(), "login", (char *)user,
			 (char *)ops, (char *)a1, (char *)a2, (char *)a3,
			 NULL };
	int st = tu_run_capture(argv, f->env, out, err);

	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void flag_typo_is_shown(void **state)
{
	struct hu_fixture *f = *state;
	static const char db[] = "# users\nbob:Sekr3t-bob:login:lockd\n";
	char want[PATH_MAX + 64];
	char *out = NULL, *err = NULL;

	/* the default level: no PAM_WRAPPER_DEBUGLEVEL at all */
	assert_null(tu_env_get(f->env, "PAM_WRAPPER_DEBUGLEVEL"));
	tu_write_file(f->passdb, db, sizeof(db) - 1, 0600);
	/* Read as upstream reads it: the password is right, the service
	 * is "login:lockd", so the account check fails. */
	assert_int_equal(client(f, "bob", "auth,acct", "Sekr3t-bob", NULL,
				NULL, &out, &err),
			 1);
	assert_true(hu_has_rc(out, "auth", PAM_SUCCESS));
	assert_true(hu_has_rc(out, "acct", PAM_PERM_DENIED));
	snprintf(want, sizeof(want), "%s:2: the fourth field is not a list of "
		 "account flags", f->passdb);
	if (strstr(err, want) == NULL || strstr(err, "PWRAP_ERROR[") == NULL) {
		fprintf(stderr, "stderr: %s\n", err);
		fail_msg("no error line naming %s:2 at the default level",
			 f->passdb);
	}
	assert_null(strstr(err, "Sekr3t"));
	free(out);
	free(err);
}

static void locked_cannot_change(void **state)
{
	struct hu_fixture *f = *state;
	static const char db[] = "alice:Old-pw:login:locked\n";
	char *out = NULL, *err = NULL;
	char *now;

	tu_write_file(f->passdb, db, sizeof(db) - 1, 0600);
	assert_int_equal(client(f, "alice", "chauthtok", "Old-pw", "New-pw",
				"New-pw", &out, &err),
			 1);
	if (!hu_has_rc(out, "chauthtok", PAM_PERM_DENIED)) {
		fprintf(stderr, "stdout: %s\nstderr: %s\n", out, err);
		fail_msg("chauthtok of a locked account was not refused with "
			 "PAM_PERM_DENIED");
	}
	free(out);
	free(err);
	now = tu_read_file(f->passdb, NULL);
	assert_string_equal(now, db);
	free(now);
	/* as acct_mgmt refuses the account */
	assert_int_equal(client(f, "alice", "acct", NULL, NULL, NULL, &out,
				&err),
			 1);
	assert_true(hu_has_rc(out, "acct", PAM_PERM_DENIED));
	free(out);
	free(err);
	assert_int_equal(tu_wait_empty(f->tmp, TU_HANG_SECONDS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(flag_typo_is_shown, setup,
						teardown),
		cmocka_unit_test_setup_teardown(locked_cannot_change, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
