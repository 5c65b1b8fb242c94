/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's account states through the real libpam: the optional fourth
 * passdb field "flag[,flag...]" (expired, must_change, locked).  One table
 * row per case: the passdb line, then what authenticate (with the right
 * password) and acct_mgmt return.  Then the changes a state brings: the
 * must_change message, chauthtok clearing must_change and keeping the rest
 * of the line, a locked account refused a password change, and a fourth
 * field that is no flag list reported with file:line at error level.
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

#include <security/pam_modules.h>

#include <syslog.h>

#include "modtest.h"

struct row {
	const char *line;	/* alice's passdb line; her password is "pw" */
	int auth;		/* authenticate with "pw" */
	int acct;		/* acct_mgmt */
};

static const struct row rows[] = {
	{ "alice:pw:svc\n", PAM_SUCCESS, PAM_SUCCESS },
	{ "alice:pw:svc:expired\n", PAM_SUCCESS, PAM_ACCT_EXPIRED },
	{ "alice:pw:svc:must_change\n", PAM_SUCCESS, PAM_NEW_AUTHTOK_REQD },
	{ "alice:pw:svc:locked\n", PAM_AUTH_ERR, PAM_PERM_DENIED },
	{ "alice:pw:svc:expired,locked\n", PAM_AUTH_ERR, PAM_PERM_DENIED },
	{ "alice:pw:svc:must_change,expired\n", PAM_SUCCESS,
	  PAM_ACCT_EXPIRED },
	{ "alice:pw:svc:,expired,\n", PAM_SUCCESS, PAM_ACCT_EXPIRED },
	/* another service: the service check comes first */
	{ "alice:pw:other:expired\n", PAM_SUCCESS, PAM_PERM_DENIED },
	/* no flag list: read as upstream reads them, the rest after the
	 * second ':' is the service ("svc:frozen") */
	{ "alice:pw:svc:\n", PAM_SUCCESS, PAM_PERM_DENIED },
	{ "alice:pw:svc:frozen\n", PAM_SUCCESS, PAM_PERM_DENIED },
	{ "alice:pw:svc:expired:x\n", PAM_SUCCESS, PAM_PERM_DENIED },
	{ "alice:pw:svc:Expired\n", PAM_SUCCESS, PAM_PERM_DENIED },
};

static void states_table(void **state)
{
	struct mt_env *t = *state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mt_conv c;

		print_message("passdb: %s", rows[i].line);
		mt_passdb(t, rows[i].line);
		mt_matrix_service(t, "");
		assert_int_equal(mt_auth(t, "alice", "pw"), rows[i].auth);
		mt_conv_init(&c, 0);
		assert_int_equal(mt_run(t, "svc", "alice", &c, MT_ACCT, 0),
				 rows[i].acct);
		mt_conv_free(&c);
	}
}

/* A locked account fails even with the right password, after the prompt
 * (it looks like any failed login), and the password is never logged. */
static void states_locked_prompts(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:s3cr3t:svc:locked\n");
	mt_matrix_service(t, "");
	mt_log_clear();
	mt_conv_init(&c, 1, "s3cr3t");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTH_ERR);
	assert_int_equal(c.nmsgs, 1);
	assert_string_equal(mt_msg(&c, 0), "P:Password: ");
	mt_conv_free(&c);
	assert_true(mt_log_has("account of user alice is locked"));
	assert_false(mt_log_has("s3cr3t"));
}

/* must_change: acct_mgmt says so with an info message; a successful
 * password change clears the flag and keeps the rest of the line. */
static void states_must_change_cleared(void **state)
{
	struct mt_env *t = *state;
	static const char want[] = "bob:b:svc:must_change\n"
				   "alice:n3w:svc:expired\n"
				   "carol:c:svc\n";
	struct mt_conv c;
	size_t len;
	char *got;

	mt_passdb(t, "bob:b:svc:must_change\nalice:old:svc:must_change,expired\n"
		     "carol:c:svc\n");
	mt_matrix_service(t, "");
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "bob", &c, MT_ACCT, 0),
			 PAM_NEW_AUTHTOK_REQD);
	assert_int_equal(c.nmsgs, 1);
	assert_string_equal(mt_msg(&c, 0),
			    "I:You are required to change your password "
			    "immediately");
	mt_conv_free(&c);

	mt_conv_init(&c, 3, "old", "n3w", "n3w");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_SUCCESS);
	mt_conv_free(&c);
	got = tu_read_file(t->passdb, &len);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(got, want, len);
	free(got);
	/* and only must_change went: expired stays */
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_ACCT, 0),
			 PAM_ACCT_EXPIRED);
	mt_conv_free(&c);

	/* a line left with no flag loses the empty field */
	mt_passdb(t, "alice:old:svc:must_change\n");
	mt_conv_init(&c, 3, "old", "x", "x");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_SUCCESS);
	mt_conv_free(&c);
	got = tu_read_file(t->passdb, &len);
	assert_int_equal(len, strlen("alice:x:svc\n"));
	assert_memory_equal(got, "alice:x:svc\n", len);
	free(got);
}

/* A flag typo: the line is read as upstream reads it (its first line
 * decides, the service is "svc:frozen") and reported with file and line as
 * an error, which the wrapper's default log level shows (issue 23: it was
 * a warning, hidden by default, and the user then looked unknown). */
static void states_unknown_flag_reported(void **state)
{
	struct mt_env *t = *state;
	char want[PATH_MAX + 256];
	struct mt_conv c;

	mt_passdb(t, "# users\nalice:pw:svc:frozen\nalice:pw2:svc\n");
	mt_matrix_service(t, "");
	mt_log_clear();
	assert_int_equal(mt_auth(t, "alice", "pw2"), PAM_AUTH_ERR);
	assert_int_equal(mt_auth(t, "alice", "pw"), PAM_SUCCESS);
	snprintf(want, sizeof(want), "%s:2: the fourth field is not a list of "
		 "account flags (expired, must_change, locked): it is read as "
		 "part of the service", t->passdb);
	if (mt_log_count_prio(LOG_ERR, want) != 2) {
		mt_log_dump();
		fail_msg("not logged twice as an error: %s", want);
	}
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_ACCT, 0),
			 PAM_PERM_DENIED);
	mt_conv_free(&c);
}

/* A locked account cannot change its password either (issue 23): once
 * the old password is right, chauthtok is refused as acct_mgmt refuses
 * the account, and the passdb stays as it was. */
static void states_locked_no_change(void **state)
{
	struct mt_env *t = *state;
	static const char orig[] = "alice:pw:svc:locked\n";
	struct mt_conv c;
	char *got;

	mt_passdb(t, orig);
	mt_matrix_service(t, "");
	mt_log_clear();
	mt_conv_init(&c, 3, "pw", "n3w", "n3w");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_PERM_DENIED);
	assert_int_equal(c.nmsgs, 1);
	mt_conv_free(&c);
	assert_true(mt_log_has("account of user alice is locked"));
	got = tu_read_file(t->passdb, NULL);
	assert_string_equal(got, orig);
	free(got);
	/* A wrong old password is refused as for anyone. */
	mt_conv_init(&c, 3, "bad", "n3w", "n3w");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_AUTH_ERR);
	mt_conv_free(&c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, mt_setup, mt_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(states_table),
		T(states_locked_prompts),
		T(states_must_change_cleared),
		T(states_unknown_flag_reported),
		T(states_locked_no_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
