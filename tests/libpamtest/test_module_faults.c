/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Our own modules against a misbehaving application: pam_matrix
 * (authenticate, with and without verbose, and chauthtok), pam_chatty and
 * pam_set_items/pam_get_items run through libpamtest with each
 * conversation fault of struct pamtest_conv_faults on each call they make,
 * and must return exactly the code their code says for it, leave the
 * passdb alone when a password change fails, and never crash or leak
 * (this program also runs under valgrind and in the ASan build).
 *
 * What the modules do with a bad reply, as upstream's do (the facts are
 * tests/modules/test_module_table.c's): pam_matrix turns a failed call or
 * a missing reply array at any prompt into PAM_AUTHINFO_UNAVAIL, a NULL
 * answer into PAM_CRED_ERR for the password it checks (authenticate,
 * chauthtok's preliminary check) and PAM_AUTHINFO_UNAVAIL for the
 * verification, and (ours: upstream says PAM_SUCCESS) PAM_AUTHTOK_ERR for
 * the new password; its verbose message after authenticate may fail
 * without changing the result, and is not sent after a failed
 * conversation.  pam_chatty goes on after a failed call and succeeds, and
 * needs no reply array for its messages.  pam_set_items and pam_get_items
 * never talk.
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

#include <libpamtest.h>

#include "testutil.h"

#define EVERY PAMTEST_CONV_EVERY_CALL
#define LONG_LEN PAMTEST_CONV_LONG_ANSWER_LEN

/* The long answer libpamtest sends: "abcd...zabc...", LONG_LEN chars. */
static char long_pw[LONG_LEN + 1];

static const char passdb_text_fmt[] =
	"neo:secret:matrix\n"
	"longpw:%s:matrix\n";

/* The passdb as each test starts it, and the directory it is in. */
static char *passdb_text;
static char *dir;

static int group_setup(void **state)
{
	char *matrix = NULL;
	char *matrix_items = NULL;
	int rc = -1;

	(void)state;
	for (size_t i = 0; i < LONG_LEN; i++) {
		long_pw[i] = (char)('a' + i % 26);
	}
	dir = tu_svcdir_new("lpt");
	if (asprintf(&passdb_text, passdb_text_fmt, long_pw) < 0 ||
	    asprintf(&matrix,
		     "auth required pam_matrix.so passdb=%1$s/passdb\n"
		     "account required pam_matrix.so passdb=%1$s/passdb\n"
		     "password required pam_matrix.so passdb=%1$s/passdb\n"
		     "session required pam_matrix.so passdb=%1$s/passdb\n",
		     dir) < 0 ||
	    asprintf(&matrix_items,
		     "auth required pam_matrix.so passdb=%1$s/passdb\n"
		     "auth required pam_get_items.so\n",
		     dir) < 0) {
		goto out;
	}
	tu_write_text(dir, "matrix", matrix);
	tu_write_text(dir, "matrix_items", matrix_items);
	free(matrix);
	matrix = NULL;
	if (asprintf(&matrix,
		     "auth required pam_matrix.so passdb=%s/passdb verbose\n",
		     dir) < 0) {
		matrix = NULL;
		goto out;
	}
	tu_write_text(dir, "matrix_verbose", matrix);
	tu_write_text(dir, "chatty",
		      "auth required pam_chatty.so info error num_lines=2\n");
	tu_write_text(dir, "items",
		      "auth required pam_set_items.so\n"
		      "auth required pam_get_items.so\n"
		      "account required pam_set_items.so\n"
		      "account required pam_get_items.so\n"
		      "password required pam_set_items.so\n"
		      "password required pam_get_items.so\n"
		      "session required pam_set_items.so\n"
		      "session required pam_get_items.so\n");
	rc = 0;
out:
	free(matrix);
	free(matrix_items);
	return rc;
}

static int group_teardown(void **state)
{
	(void)state;
	tu_rmtree_quiet(dir);
	free(dir);
	dir = NULL;
	free(passdb_text);
	unsetenv("PAM_RHOST");
	return 0;
}

/* Every test starts from the same passdb (chauthtok rewrites it). */
static int reset_passdb(void **state)
{
	(void)state;
	tu_write_text(dir, "passdb", passdb_text);
	return 0;
}

static void assert_passdb_unchanged(void)
{
	char *now = tu_read_at(dir, "passdb");

	assert_non_null(now);
	assert_string_equal(now, passdb_text);
	free(now);
}

/* One operation with the given answers and faults; returns its op_rv. */
static int run_op(const char *service, const char *user,
		  enum pamtest_ops op, const char **answers,
		  struct pamtest_conv_faults *f, char **out_info,
		  char **out_err)
{
	struct pamtest_conv_data data = {
		.in_echo_off = answers,
		.out_info = out_info,
		.out_err = out_err,
	};
	/* expected_rv -1 is no PAM code: the case "fails", op_rv says. */
	struct pam_testcase tests[] = {
		pam_test(op, -1),
	};
	enum pamtest_err perr;

	perr = run_pamtest_faults(service, user, &data, f, tests);
	assert_int_equal(perr, PAMTEST_ERR_CASE);
	return tests[0].op_rv;
}

struct fault_case {
	const char *what;
	struct pamtest_conv_faults f;
	int rv;
};

/* pam_matrix authenticate: one call, the prompt. */
static void test_matrix_authenticate(void **state)
{
	const char *answers[] = { "secret", NULL };
	const struct fault_case cases[] = {
		{ "no fault", { 0 }, PAM_SUCCESS },
		{ "fail@1", { .fail_at = 1 }, PAM_AUTHINFO_UNAVAIL },
		{ "fail@1 BUF_ERR", { .fail_at = 1, .fail_code = PAM_BUF_ERR },
		  PAM_AUTHINFO_UNAVAIL },
		{ "fail@every", { .fail_at = EVERY }, PAM_AUTHINFO_UNAVAIL },
		{ "null_resp@1", { .null_resp_at = 1 }, PAM_AUTHINFO_UNAVAIL },
		{ "null_entry@1", { .null_entry_at = 1 }, PAM_CRED_ERR },
		{ "long@1", { .long_answer_at = 1 }, PAM_AUTH_ERR },
		{ "long@1 600", { .long_answer_at = 1, .long_answer_len = 600 },
		  PAM_AUTH_ERR },
		{ "fail@2", { .fail_at = 2 }, PAM_SUCCESS },
		{ "null_resp@2", { .null_resp_at = 2 }, PAM_SUCCESS },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pamtest_conv_faults f = cases[i].f;
		int rv = run_op("matrix", "neo", PAMTEST_AUTHENTICATE,
				answers, &f, NULL, NULL);

		print_message("matrix authenticate, %s: %d\n", cases[i].what, rv);
		assert_int_equal(rv, cases[i].rv);
		assert_int_equal(f.calls, 1);
	}
}

/* A password longer than PAM_MAX_RESP_SIZE is taken whole. */
static void test_matrix_long_password(void **state)
{
	const char *answers[] = { long_pw, NULL };
	struct pamtest_conv_faults f = { .long_answer_at = 1 };
	struct pamtest_conv_faults none = { 0 };
	struct pamtest_conv_faults shorter = { .long_answer_at = 1,
					       .long_answer_len = LONG_LEN - 1 };

	(void)state;
	assert_int_equal(run_op("matrix", "longpw", PAMTEST_AUTHENTICATE,
				NULL, &f, NULL, NULL),
			 PAM_SUCCESS);
	assert_int_equal(run_op("matrix", "longpw", PAMTEST_AUTHENTICATE,
				answers, &none, NULL, NULL),
			 PAM_SUCCESS);
	assert_int_equal(run_op("matrix", "longpw", PAMTEST_AUTHENTICATE,
				NULL, &shorter, NULL, NULL),
			 PAM_AUTH_ERR);
}

/* The next module sees the long answer whole as PAM_AUTHTOK; a failed
 * conversation leaves no PAM_AUTHTOK. */
static void test_matrix_then_get_items(void **state)
{
	struct pamtest_conv_data data = { 0 };
	struct pamtest_conv_faults f = { .long_answer_at = 1 };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
	};
	const char *tok;

	(void)state;
	assert_int_equal(run_pamtest_faults("matrix_items", "longpw", &data,
					    &f, tests),
			 PAMTEST_ERR_OK);
	tok = tu_env_get(tests[1].case_out.envlist, "PAM_AUTHTOK");
	assert_non_null(tok);
	assert_string_equal(tok, long_pw);
	pamtest_free_env(tests[1].case_out.envlist);

	f = (struct pamtest_conv_faults){ .null_entry_at = 1 };
	tests[0].expected_rv = PAM_CRED_ERR;
	assert_int_equal(run_pamtest_faults("matrix_items", "longpw", &data,
					    &f, tests),
			 PAMTEST_ERR_OK);
	assert_null(tu_env_get(tests[1].case_out.envlist, "PAM_AUTHTOK"));
	assert_non_null(tu_env_get(tests[1].case_out.envlist, "PAM_USER"));
	pamtest_free_env(tests[1].case_out.envlist);
}

/*
 * verbose: call 1 the prompt, call 2 "Authentication succeeded" (info) or
 * "Authentication failed" (error).  A fault on call 2 changes nothing.
 */
static void test_matrix_verbose(void **state)
{
	const char *answers[] = { "secret", NULL };
	const struct fault_case cases[] = {
		{ "fail@2", { .fail_at = 2 }, PAM_SUCCESS },
		{ "fail@2 BUF_ERR", { .fail_at = 2, .fail_code = PAM_BUF_ERR },
		  PAM_SUCCESS },
		{ "null_resp@2", { .null_resp_at = 2 }, PAM_SUCCESS },
		{ "null_entry@2", { .null_entry_at = 2 }, PAM_SUCCESS },
		{ "long@2", { .long_answer_at = 2 }, PAM_SUCCESS },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char info[PAM_MAX_MSG_SIZE] = "none";
		char *out_info[] = { info, NULL };
		struct pamtest_conv_faults f = cases[i].f;
		int rv = run_op("matrix_verbose", "neo", PAMTEST_AUTHENTICATE,
				answers, &f, out_info, NULL);

		print_message("matrix verbose, %s: %d\n", cases[i].what, rv);
		assert_int_equal(rv, cases[i].rv);
		assert_int_equal(f.calls, 2);
		/* Only the long-answer call still delivers its message. */
		assert_string_equal(info, cases[i].f.long_answer_at != 0
						  ? "Authentication succeeded"
						  : "none");
	}
	{
		/* no report after a failed conversation, one after a NULL
		 * answer (as upstream) */
		char err[PAM_MAX_MSG_SIZE] = "none";
		char *out_err[] = { err, NULL };
		struct pamtest_conv_faults f = { .fail_at = 1 };

		assert_int_equal(run_op("matrix_verbose", "neo",
					PAMTEST_AUTHENTICATE, answers, &f,
					NULL, out_err),
				 PAM_AUTHINFO_UNAVAIL);
		assert_int_equal(f.calls, 1);
		assert_string_equal(err, "none");
		f = (struct pamtest_conv_faults){ .null_entry_at = 1 };
		assert_int_equal(run_op("matrix_verbose", "neo",
					PAMTEST_AUTHENTICATE, answers, &f,
					NULL, out_err),
				 PAM_CRED_ERR);
		assert_int_equal(f.calls, 2);
		assert_string_equal(err, "Authentication failed");
	}
}

/*
 * chauthtok: call 1 "Old password: " (preliminary check), call 2 "New
 * Password :", call 3 "Verify New Password :"; call 4 the mismatch error.
 */
static void test_matrix_chauthtok(void **state)
{
	const char *answers[] = { "secret", "new", "new", NULL };
	const struct fault_case cases[] = {
		{ "fail@1", { .fail_at = 1 }, PAM_AUTHINFO_UNAVAIL },
		{ "fail@1 BUF_ERR", { .fail_at = 1, .fail_code = PAM_BUF_ERR },
		  PAM_AUTHINFO_UNAVAIL },
		{ "null_resp@1", { .null_resp_at = 1 }, PAM_AUTHINFO_UNAVAIL },
		{ "null_entry@1", { .null_entry_at = 1 }, PAM_CRED_ERR },
		{ "long@1", { .long_answer_at = 1 }, PAM_AUTH_ERR },
		{ "fail@2", { .fail_at = 2 }, PAM_AUTHINFO_UNAVAIL },
		{ "fail@2 BUF_ERR", { .fail_at = 2, .fail_code = PAM_BUF_ERR },
		  PAM_AUTHINFO_UNAVAIL },
		{ "null_resp@2", { .null_resp_at = 2 }, PAM_AUTHINFO_UNAVAIL },
		/* ours: upstream says PAM_SUCCESS and changes nothing */
		{ "null_entry@2", { .null_entry_at = 2 }, PAM_AUTHTOK_ERR },
		{ "fail@3", { .fail_at = 3 }, PAM_AUTHINFO_UNAVAIL },
		{ "null_resp@3", { .null_resp_at = 3 }, PAM_AUTHINFO_UNAVAIL },
		{ "null_entry@3", { .null_entry_at = 3 }, PAM_AUTHINFO_UNAVAIL },
		/* The long new password does not match the verify answer. */
		{ "long@2", { .long_answer_at = 2 }, PAM_AUTHINFO_UNAVAIL },
		{ "long@3", { .long_answer_at = 3 }, PAM_AUTHINFO_UNAVAIL },
		{ "fail@every", { .fail_at = EVERY }, PAM_AUTHINFO_UNAVAIL },
	};
	/* How many calls each case makes before the module stops. */
	const unsigned int calls[] = { 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3,
				       4, 4, 1 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pamtest_conv_faults f = cases[i].f;
		int rv = run_op("matrix", "neo", PAMTEST_CHAUTHTOK, answers,
				&f, NULL, NULL);

		print_message("matrix chauthtok, %s: %d\n", cases[i].what, rv);
		assert_int_equal(rv, cases[i].rv);
		assert_int_equal(f.calls, calls[i]);
		assert_passdb_unchanged();
	}
}

/* A change to a password longer than PAM_MAX_RESP_SIZE, then a login. */
static void test_matrix_chauthtok_long(void **state)
{
	const char *answers[] = { "secret", long_pw, long_pw, NULL };
	struct pamtest_conv_faults every = { .long_answer_at = EVERY };
	struct pamtest_conv_faults none = { 0 };
	struct pamtest_conv_faults login = { .long_answer_at = 1 };
	char *now = NULL;

	(void)state;
	/* longpw's old password is the long answer too: all three calls. */
	assert_int_equal(run_op("matrix", "longpw", PAMTEST_CHAUTHTOK, NULL,
				&every, NULL, NULL),
			 PAM_SUCCESS);
	assert_int_equal(every.calls, 3);
	assert_passdb_unchanged();	/* the same password as before */

	/* neo: "secret" -> the long password, stored whole, then a login
	 * with the long answer. */
	assert_int_equal(run_op("matrix", "neo", PAMTEST_CHAUTHTOK, answers,
				&none, NULL, NULL),
			 PAM_SUCCESS);
	now = tu_read_at(dir, "passdb");
	assert_non_null(now);
	assert_non_null(strstr(now, "neo:"));
	assert_memory_equal(strstr(now, "neo:") + 4, long_pw, LONG_LEN);
	assert_memory_equal(strstr(now, "neo:") + 4 + LONG_LEN, ":matrix\n", 8);
	free(now);
	assert_int_equal(run_op("matrix", "neo", PAMTEST_AUTHENTICATE, NULL,
				&login, NULL, NULL),
			 PAM_SUCCESS);
}

/* pam_chatty info error num_lines=2: calls 1, 2 info, calls 3, 4 error;
 * a failed call does not stop the others. */
static void test_chatty(void **state)
{
	(void)state;
	for (unsigned int at = 1; at <= 5; at++) {
		const struct fault_case cases[] = {
			{ "fail", { .fail_at = at }, PAM_SUCCESS },
			{ "fail BUF_ERR", { .fail_at = at, .fail_code = PAM_BUF_ERR },
			  PAM_SUCCESS },
			{ "null_resp", { .null_resp_at = at }, PAM_SUCCESS },
			{ "null_entry", { .null_entry_at = at }, PAM_SUCCESS },
			{ "long", { .long_answer_at = at }, PAM_SUCCESS },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char info[3][PAM_MAX_MSG_SIZE] = { "", "", "" };
			char err[3][PAM_MAX_MSG_SIZE] = { "", "", "" };
			char *out_info[] = { info[0], info[1], info[2], NULL };
			char *out_err[] = { err[0], err[1], err[2], NULL };
			struct pamtest_conv_faults f = cases[i].f;
			unsigned int recorded = 0;
			int rv = run_op("chatty", "neo", PAMTEST_AUTHENTICATE,
					NULL, &f, out_info, out_err);

			print_message("chatty, %s@%u: %d\n", cases[i].what, at, rv);
			assert_int_equal(rv, cases[i].rv);
			assert_int_equal(f.calls,
					 cases[i].rv == PAM_SUCCESS ? 4 : at);
			for (int k = 0; k < 3; k++) {
				recorded += info[k][0] != '\0';
				recorded += err[k][0] != '\0';
			}
			/* Every call but a fail/null one is recorded. */
			if (cases[i].f.long_answer_at != 0 || at == 5) {
				assert_int_equal(recorded, 4);
			} else if (cases[i].rv == PAM_SUCCESS) {
				assert_int_equal(recorded, 3);
			} else {
				assert_int_equal(recorded, at - 1);
			}
		}
	}
}

/* pam_set_items/pam_get_items never talk: every fault, every group. */
static void test_items(void **state)
{
	const enum pamtest_ops ops[] = {
		PAMTEST_AUTHENTICATE, PAMTEST_SETCRED, PAMTEST_ACCOUNT,
		PAMTEST_OPEN_SESSION, PAMTEST_CLOSE_SESSION, PAMTEST_CHAUTHTOK,
	};
	const struct pamtest_conv_faults faults[] = {
		{ .fail_at = EVERY },
		{ .fail_at = EVERY, .fail_code = PAM_BUF_ERR },
		{ .null_resp_at = EVERY },
		{ .null_entry_at = EVERY },
		{ .long_answer_at = EVERY },
	};

	(void)state;
	setenv("PAM_RHOST", "faults.example.com", 1);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			struct pamtest_conv_faults f = faults[i];
			struct pamtest_conv_data data = { 0 };
			struct pam_testcase tests[] = {
				pam_test(ops[k], PAM_SUCCESS),
				pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
			};

			assert_int_equal(run_pamtest_faults("items", "neo",
							    &data, &f, tests),
					 PAMTEST_ERR_OK);
			assert_int_equal(f.calls, 0);
			assert_string_equal(
				tu_env_get(tests[1].case_out.envlist,
						"PAM_RHOST"),
				"faults.example.com");
			pamtest_free_env(tests[1].case_out.envlist);
		}
	}
	unsetenv("PAM_RHOST");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_matrix_authenticate, reset_passdb),
		cmocka_unit_test_setup(test_matrix_long_password, reset_passdb),
		cmocka_unit_test_setup(test_matrix_then_get_items, reset_passdb),
		cmocka_unit_test_setup(test_matrix_verbose, reset_passdb),
		cmocka_unit_test_setup(test_matrix_chauthtok, reset_passdb),
		cmocka_unit_test_setup(test_matrix_chauthtok_long, reset_passdb),
		cmocka_unit_test_setup(test_chatty, reset_passdb),
		cmocka_unit_test_setup(test_items, reset_passdb),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
