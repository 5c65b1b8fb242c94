/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmocka tests of libpamtest through the real preload: every case runs in a
 * process wrapped by libpam_wrapper.so (LD_PRELOAD, PAM_WRAPPER=1) reading
 * service files from a private directory below $TMPDIR.  The services use
 * the stock modules pam_permit and pam_deny (Linux-PAM's and OpenPAM's),
 * Linux-PAM's pam_echo in the one case about it, our pam_chatty by its bare
 * name, and the test-only module pam_lpt_test.so (LPT_MODULE), which drives
 * the conversation, returns and sets exactly what each service line says.  Buffers and
 * answer lists are allocated to their exact size where an overrun is the
 * point, so valgrind (LABELS memcheck) catches any read or write past them.
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

#define M LPT_MODULE

/* What pam_lpt_test returns when the conversation succeeded but left a
 * prompt's answer NULL (its option ifnullentry=, written as @NULL@ in the
 * services below): upstream's libpamtest answers a prompt it has no answer
 * for so, and pam_matrix returns PAM_CRED_ERR for it, as here. */
#define NULL_ANSWER PAM_CRED_ERR

/* PAM_SILENT's value, as the test module reads it from its options */
#if defined(PWRAP_OPENPAM)
#define SILENT_VALUE "-2147483648"
#else
#define SILENT_VALUE "32768"
#endif

struct lpt_service {
	const char *name;
	const char *content;
};

static const struct lpt_service services[] = {
	{ "permit",
	  "auth required pam_permit.so\n"
	  "account required pam_permit.so\n"
	  "password required pam_permit.so\n"
	  "session required pam_permit.so\n" },
	{ "deny",
	  "auth required pam_deny.so\n"
	  "account required pam_deny.so\n" },
	{ "stop",
	  "auth required " M " ret=7 endstatus\n"
	  "account required " M " ret=13\n" },
	{ "flags", "auth required " M " flags=" SILENT_VALUE "\n" },
	{ "answers",
	  "auth required " M " off=a1 off=a2 on=b1 ifnullentry=@NULL@\n"
	  "account required " M " off=a3 on=b2 ifnullentry=@NULL@\n"
	  "password required " M " off=a4 ifnullentry=@NULL@\n" },
	{ "onprompt", "auth required " M " on=b1 ifnullentry=@NULL@\n" },
	{ "msgs", "auth required " M " info=i1 err=e1 info=i2 err=e2\n" },
	{ "manymsgs",
	  "auth required " M " info=m1 info=m2 info=m3 err=x1 err=x2\n" },
	{ "long", "auth required " M " long=511 long=512 long=1000\n" },
	{ "echo",
	  "auth required pam_echo.so hello_from_pam_echo\n"
	  "auth required pam_permit.so\n" },
	{ "chatty",
	  "auth required pam_chatty.so num_lines=1 info\n"
	  "auth required pam_permit.so\n" },
	{ "batch",
	  "auth required " M " batch info=bi off=p1 err=be on=p2 "
	  "ifnullentry=@NULL@\n" },
	{ "keep",
	  "auth required " M " off=first endstatus\n"
	  "account required " M " off=second\n"
	  "session required " M " info=kept_info err=kept_err\n" },
	{ "endok", "auth required " M " endstatus\n" },
	/* binary (Linux-PAM's PAM_BINARY_PROMPT), radio (PAM_RADIO_TYPE) and
	 * an unknown style: a NULL answer makes auth return NULL_ANSWER;
	 * account's prompt after one must get its answer all the same */
	{ "styles",
	  "auth required " M " style=7 style=5 style=99 ifnullentry=@NULL@\n"
	  "account required " M " batch style=5 off=a1\n" },
};

struct lpt_state {
	char *svcdir;
};

/* text with each "@NULL@" as NULL_ANSWER's value (malloc'd). */
static char *with_null_answer(const char *text)
{
	char num[16];
	size_t cap = strlen(text) * 2 + 1, o = 0;
	char *out = malloc(cap);

	assert_non_null(out);
	snprintf(num, sizeof(num), "%d", NULL_ANSWER);
	for (const char *p = text; *p != '\0';) {
		if (strncmp(p, "@NULL@", 6) == 0) {
			memcpy(out + o, num, strlen(num));
			o += strlen(num);
			p += 6;
		} else {
			out[o++] = *p++;
		}
	}
	out[o] = '\0';
	return out;
}

static int group_setup(void **state)
{
	struct lpt_state *st = calloc(1, sizeof(*st));
	char *envsvc = NULL;
	char *opssvc = NULL;

	if (st == NULL) {
		return -1;
	}
	st->svcdir = tu_svcdir_new("lpt");
	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++) {
		char *text = with_null_answer(services[i].content);

		tu_write_text(st->svcdir, services[i].name, text);
		free(text);
	}
	if (asprintf(&envsvc,
		     "session required %s putenv=LPT_FOO=bar\n"
		     "session required %s putenv=LPT_VAR=lpt_value\n",
		     M, M) < 0) {
		return -1;
	}
	tu_write_text(st->svcdir, "env", envsvc);
	free(envsvc);
	/* pam_matrix with a passdb of its own, beside the services (a file
	 * named passdb is no service any test uses) */
	tu_write_text(st->svcdir, "passdb", "trinity:secret:matrix\n");
	if (asprintf(&envsvc, "auth required pam_matrix.so passdb=%s/passdb\n",
		     st->svcdir) < 0) {
		return -1;
	}
	tu_write_text(st->svcdir, "matrix", envsvc);
	free(envsvc);
	/* Every operation returns a different code (the implementation's
	 * values of the names). */
	if (asprintf(&opssvc,
		     "auth required %s authenticate=%d setcred=%d\n"
		     "account required %s ret=%d\n"
		     "password required %s ret=%d\n"
		     "session required %s open_session=%d close_session=%d\n",
		     M, PAM_AUTH_ERR, PAM_CRED_UNAVAIL, M, PAM_ACCT_EXPIRED,
		     M, PAM_AUTHTOK_ERR, M, PAM_SESSION_ERR,
		     PAM_CRED_INSUFFICIENT) < 0) {
		return -1;
	}
	tu_write_text(st->svcdir, "ops", opssvc);
	free(opssvc);
	*state = st;
	return 0;
}

static int group_teardown(void **state)
{
	struct lpt_state *st = *state;

	if (st != NULL) {
		tu_rmtree_quiet(st->svcdir);
		free(st->svcdir);
		free(st);
	}
	return 0;
}

static int reset_end_status(void **state)
{
	(void)state;
	unsetenv("LPT_END_STATUS");
	return 0;
}

/* The status pam_end() passed to pam_lpt_test's cleanup, or NULL. */
static const char *end_status(void)
{
	return getenv("LPT_END_STATUS");
}

/* ---- constants, macros, strerror, failed_case ---- */

static void test_enum_values(void **state)
{
	struct pam_testcase t = pam_test(PAMTEST_CHAUTHTOK, PAM_AUTH_ERR);
	struct pam_testcase f = pam_test_flags(PAMTEST_SETCRED, PAM_SUCCESS,
					       PAM_REINITIALIZE_CRED);

	(void)state;
	assert_int_equal(PAMTEST_AUTHENTICATE, 0);
	assert_int_equal(PAMTEST_SETCRED, 1);
	assert_int_equal(PAMTEST_ACCOUNT, 2);
	assert_int_equal(PAMTEST_OPEN_SESSION, 3);
	assert_int_equal(PAMTEST_CLOSE_SESSION, 4);
	assert_int_equal(PAMTEST_CHAUTHTOK, 5);
	assert_int_equal(PAMTEST_GETENVLIST, 20);
	assert_int_equal(PAMTEST_KEEPHANDLE, 21);
	assert_int_equal(PAMTEST_ERR_OK, 0);
	assert_int_equal(PAMTEST_ERR_START, 1);
	assert_int_equal(PAMTEST_ERR_CASE, 2);
	assert_int_equal(PAMTEST_ERR_OP, 3);
	assert_int_equal(PAMTEST_ERR_END, 4);
	assert_int_equal(PAMTEST_ERR_KEEPHANDLE, 5);
	assert_int_equal(PAMTEST_ERR_INTERNAL, 6);

	assert_int_equal(t.pam_operation, PAMTEST_CHAUTHTOK);
	assert_int_equal(t.expected_rv, PAM_AUTH_ERR);
	assert_int_equal(t.flags, 0);
	assert_int_equal(t.op_rv, 0);
	assert_null(t.case_out.envlist);
	assert_int_equal(f.pam_operation, PAMTEST_SETCRED);
	assert_int_equal(f.flags, PAM_REINITIALIZE_CRED);
	assert_int_equal(f.op_rv, 0);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(pamtest_strerror(PAMTEST_ERR_OK), "Success");
	assert_string_equal(pamtest_strerror(PAMTEST_ERR_START), "pam_start failed()");
	assert_string_equal(pamtest_strerror(PAMTEST_ERR_CASE),
			    "Unexpected testcase result");
	assert_string_equal(pamtest_strerror(PAMTEST_ERR_OP),
			    "Could not run a test case");
	assert_string_equal(pamtest_strerror(PAMTEST_ERR_END), "pam_end failed()");
	assert_string_equal(pamtest_strerror(PAMTEST_ERR_KEEPHANDLE),
			    "Internal libpamtest error");
	assert_string_equal(pamtest_strerror(PAMTEST_ERR_INTERNAL),
			    "Internal libpamtest error");
	assert_string_equal(pamtest_strerror((enum pamtest_err)7), "Unknown");
	assert_string_equal(pamtest_strerror((enum pamtest_err)-1), "Unknown");
	assert_string_equal(pamtest_strerror((enum pamtest_err)1000), "Unknown");
}

static void test_failed_case(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_PERM_DENIED),
		pam_test(PAMTEST_OPEN_SESSION, PAM_SUCCESS),
	};

	(void)state;
	tests[1].op_rv = PAM_PERM_DENIED;
	assert_null(pamtest_failed_case(tests));
	tests[2].op_rv = PAM_SESSION_ERR;
	assert_ptr_equal(pamtest_failed_case(tests), &tests[2]);
	tests[1].op_rv = PAM_SUCCESS;
	assert_ptr_equal(pamtest_failed_case(tests), &tests[1]);
	assert_ptr_equal(_pamtest_failed_case(tests, 3), &tests[1]);
	assert_null(_pamtest_failed_case(tests, 1));
	assert_null(_pamtest_failed_case(tests, 0));
	assert_null(_pamtest_failed_case(NULL, 3));
}

/* ---- running operations ---- */

static void test_permit_all_ops(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_SETCRED, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
		pam_test(PAMTEST_OPEN_SESSION, PAM_SUCCESS),
		pam_test(PAMTEST_CLOSE_SESSION, PAM_SUCCESS),
		pam_test(PAMTEST_CHAUTHTOK, PAM_SUCCESS),
	};
	enum pamtest_err perr;

	(void)state;
	perr = run_pamtest("permit", "trinity", NULL, tests);
	assert_int_equal(perr, PAMTEST_ERR_OK);
	assert_null(pamtest_failed_case(tests));

	/* The 1.1.x form with an explicit NULL handle. */
	perr = run_pamtest("permit", "trinity", NULL, tests, NULL);
	assert_int_equal(perr, PAMTEST_ERR_OK);
}

/* Each operation calls the right PAM function: pam_lpt_test returns a
 * different code for each one (the chauthtok's in its update pass). */
static void test_op_mapping(void **state)
{
	const struct {
		enum pamtest_ops op;
		int rv;
	} map[] = {
		{ PAMTEST_AUTHENTICATE, PAM_AUTH_ERR },
		{ PAMTEST_SETCRED, PAM_CRED_UNAVAIL },
		{ PAMTEST_ACCOUNT, PAM_ACCT_EXPIRED },
		{ PAMTEST_OPEN_SESSION, PAM_SESSION_ERR },
		{ PAMTEST_CLOSE_SESSION, PAM_CRED_INSUFFICIENT },
		{ PAMTEST_CHAUTHTOK, PAM_AUTHTOK_ERR },
	};
	struct pam_testcase all[6];

	(void)state;
	for (size_t i = 0; i < 6; i++) {
		struct pam_testcase one[] = { pam_test(map[i].op, map[i].rv) };
		enum pamtest_err perr = run_pamtest("ops", "trinity", NULL, one);

		assert_int_equal(one[0].op_rv, map[i].rv);
		assert_int_equal(perr, PAMTEST_ERR_OK);
		all[i] = (struct pam_testcase)pam_test(map[i].op, map[i].rv);
	}
	assert_int_equal(run_pamtest("ops", "trinity", NULL, all), PAMTEST_ERR_OK);
}

static void test_stop_at_first_failure(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, 13),
	};
	enum pamtest_err perr;

	(void)state;
	tests[1].op_rv = 4242; /* must stay: the case does not run */
	perr = run_pamtest("stop", "trinity", NULL, tests);
	assert_int_equal(perr, PAMTEST_ERR_CASE);
	assert_int_equal(tests[0].op_rv, 7);
	assert_int_equal(tests[1].op_rv, 4242);
	assert_ptr_equal(pamtest_failed_case(tests), &tests[0]);
	/* pam_end() got the op_rv of the failed case. */
	assert_non_null(end_status());
	assert_string_equal(end_status(), "7");
}

static void test_end_status_is_last_rv(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, 7),
		pam_test(PAMTEST_ACCOUNT, 13),
	};

	(void)state;
	assert_int_equal(run_pamtest("stop", "trinity", NULL, tests), PAMTEST_ERR_OK);
	assert_string_equal(end_status(), "13");

	/* pam_deny: the expected failure is a success of the run. */
	{
		struct pam_testcase deny[] = {
			pam_test(PAMTEST_AUTHENTICATE, PAM_AUTH_ERR),
			pam_test(PAMTEST_ACCOUNT, PAM_AUTH_ERR),
		};
		assert_int_equal(run_pamtest("deny", "trinity", NULL, deny),
				 PAMTEST_ERR_OK);
	}
}

static void test_flags(void **state)
{
	struct pam_testcase silent[] = {
		pam_test_flags(PAMTEST_AUTHENTICATE, PAM_SUCCESS, PAM_SILENT),
	};
	struct pam_testcase noflags[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SERVICE_ERR),
	};

	(void)state;
	assert_int_equal(PAM_SILENT, atoi(SILENT_VALUE));
	assert_int_equal(run_pamtest("flags", "trinity", NULL, silent),
			 PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest("flags", "trinity", NULL, noflags),
			 PAMTEST_ERR_OK);
}

static void test_unknown_op(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, 7),
		pam_test((enum pamtest_ops)99, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, 13),
	};

	(void)state;
	assert_int_equal(run_pamtest("stop", "trinity", NULL, tests),
			 PAMTEST_ERR_OP);
	assert_int_equal(tests[2].op_rv, 0);
	/* The handle was ended (with the last op_rv), not leaked. */
	assert_string_equal(end_status(), "7");
}

static void test_start_failure(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	/* No such service and no "other" file in the service directory. */
	assert_int_equal(run_pamtest("lpt_no_such_service", "trinity", NULL, tests),
			 PAMTEST_ERR_START);
	assert_int_equal(tests[0].op_rv, 0);
}

/* ---- the built-in conversation ---- */

static void test_answers_in_order(void **state)
{
	const char *off[] = { "a1", "a2", "a3", "a4", NULL };
	const char *on[] = { "b1", "b2", NULL };
	struct pamtest_conv_data conv_data = {
		.in_echo_off = off,
		.in_echo_on = on,
	};
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
		pam_test(PAMTEST_CHAUTHTOK, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("answers", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	/* Each call starts again at the first answer. */
	assert_int_equal(run_pamtest("answers", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);

	/* Wrong order: the module sees a2 where it wants a1. */
	{
		const char *swapped[] = { "a2", "a1", "a3", "a4", NULL };
		struct pam_testcase auth[] = {
			pam_test(PAMTEST_AUTHENTICATE, PAM_AUTH_ERR),
		};
		conv_data.in_echo_off = swapped;
		assert_int_equal(run_pamtest("answers", "trinity", &conv_data, auth),
				 PAMTEST_ERR_OK);
	}
}

/* A prompt with no answer left gets a NULL response in a conversation
 * that succeeds, as upstream's libpamtest gives (upstream 1.1.5's
 * test_pam_authenticate_null_password relies on it); 9c82650 failed the
 * conversation (PAM_CONV_ERR). */
static void test_answers_run_out(void **state)
{
	/* Exactly two slots: reading a third would be an invalid read. */
	const char **off = malloc(2 * sizeof(*off));
	const char **on = malloc(2 * sizeof(*on));
	struct pamtest_conv_data conv_data = { .in_echo_off = off, .in_echo_on = on };
	struct pam_testcase auth[] = {
		pam_test(PAMTEST_AUTHENTICATE, NULL_ANSWER),
	};
	struct pam_testcase both[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, NULL_ANSWER),
	};

	(void)state;
	assert_non_null(off);
	assert_non_null(on);
	off[0] = "a1";
	off[1] = NULL;
	on[0] = "b1";
	on[1] = NULL;
	/* The second echo-off prompt finds no answer. */
	assert_int_equal(run_pamtest("answers", "trinity", &conv_data, auth),
			 PAMTEST_ERR_OK);

	/* Enough for auth; account's prompt finds none, and asking again
	 * (another call) still does not read past the end. */
	free(off);
	off = malloc(3 * sizeof(*off));
	assert_non_null(off);
	off[0] = "a1";
	off[1] = "a2";
	off[2] = NULL;
	conv_data.in_echo_off = off;
	assert_int_equal(run_pamtest("answers", "trinity", &conv_data, both),
			 PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest("answers", "trinity", &conv_data, both),
			 PAMTEST_ERR_OK);
	free(off);
	free(on);
}

/* No conv_data (upstream crashes): every prompt is answered NULL, as when
 * the answers run out. */
static void test_null_conv_data(void **state)
{
	struct pam_testcase prompt[] = {
		pam_test(PAMTEST_AUTHENTICATE, NULL_ANSWER),
	};
	struct pam_testcase msgs[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	struct pam_testcase permit[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_OPEN_SESSION, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("answers", "trinity", NULL, prompt),
			 PAMTEST_ERR_OK);
	/* Messages with nowhere to go are dropped, not an error. */
	assert_int_equal(run_pamtest("msgs", "trinity", NULL, msgs), PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest("permit", "trinity", NULL, permit),
			 PAMTEST_ERR_OK);
}

static void test_null_answer_arrays(void **state)
{
	const char *on[] = { "b1", NULL };
	const char *off[] = { "a1", "a2", NULL };
	struct pamtest_conv_data only_on = { .in_echo_on = on };
	struct pamtest_conv_data only_off = { .in_echo_off = off };
	struct pamtest_conv_data empty = { .in_echo_off = NULL };
	/* a NULL list (upstream crashes) reads as an empty one */
	struct pam_testcase null_answer[] = {
		pam_test(PAMTEST_AUTHENTICATE, NULL_ANSWER),
	};
	struct pam_testcase ok[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("answers", "trinity", &only_on, null_answer),
			 PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest("answers", "trinity", &only_off, null_answer),
			 PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest("onprompt", "trinity", &only_off, null_answer),
			 PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest("onprompt", "trinity", &empty, null_answer),
			 PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest("onprompt", "trinity", &only_on, ok),
			 PAMTEST_ERR_OK);
	/* Messages with NULL buffer arrays are dropped. */
	assert_int_equal(run_pamtest("msgs", "trinity", &empty, ok), PAMTEST_ERR_OK);
}

/* Upstream 1.1.5's test_pam_authenticate_null_password, here: no answer
 * for pam_matrix's password prompt gives it a NULL password in a
 * conversation that succeeded, for which it returns PAM_CRED_ERR (9c82650:
 * PAM_AUTHINFO_UNAVAIL, from a failed conversation). */
static void test_null_password_as_upstream(void **state)
{
	const char *empty_authtoks[] = { NULL };
	const char *right[] = { "secret", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = empty_authtoks };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_CRED_ERR),
	};
	struct pam_testcase ok[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("matrix", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	/* no conv_data at all (upstream crashes there): the same */
	assert_int_equal(run_pamtest("matrix", "trinity", NULL, tests),
			 PAMTEST_ERR_OK);
	conv_data.in_echo_off = right;
	assert_int_equal(run_pamtest("matrix", "trinity", &conv_data, ok),
			 PAMTEST_ERR_OK);
}

/* Messages of a style the conversation does not know (binary, radio, any
 * other) get a NULL response and the call succeeds, as upstream's does
 * (9c82650 failed the conversation); the prompts around them still get
 * their answers. */
static void test_other_styles_answered_null(void **state)
{
	const char *off[] = { "a1", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = off };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, NULL_ANSWER),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("styles", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
}

static void test_messages_copied(void **state)
{
	char info[3][PAM_MAX_MSG_SIZE];
	char err[3][PAM_MAX_MSG_SIZE];
	char *out_info[] = { info[0], info[1], info[2], NULL };
	char *out_err[] = { err[0], err[1], err[2], NULL };
	struct pamtest_conv_data conv_data = {
		.out_info = out_info,
		.out_err = out_err,
	};
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	for (int i = 0; i < 3; i++) {
		strcpy(info[i], "untouched");
		strcpy(err[i], "untouched");
	}
	assert_int_equal(run_pamtest("msgs", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	assert_string_equal(info[0], "i1");
	assert_string_equal(info[1], "i2");
	assert_string_equal(info[2], "untouched");
	assert_string_equal(err[0], "e1");
	assert_string_equal(err[1], "e2");
	assert_string_equal(err[2], "untouched");
}

static void test_stock_pam_echo(void **state)
{
#if defined(PWRAP_OPENPAM)
	if (state != NULL) {
		TU_SKIP("the service uses Linux-PAM's pam_echo module");
	}
#endif
	char info[PAM_MAX_MSG_SIZE] = "";
	char *out_info[] = { info, NULL };
	struct pamtest_conv_data conv_data = { .out_info = out_info };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("echo", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	assert_string_equal(info, "hello_from_pam_echo");
}

/* The same through our module named bare (found next to the wrapper), on
 * every PAM implementation. */
static void test_bare_pam_chatty(void **state)
{
	char info[PAM_MAX_MSG_SIZE] = "";
	char *out_info[] = { info, NULL };
	struct pamtest_conv_data conv_data = { .out_info = out_info };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("chatty", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	assert_string_equal(info, "Authentication succeeded");
}

static void test_more_messages_than_buffers(void **state)
{
	/* Exactly-sized heap arrays: one buffer for three infos, none for
	 * the two errors. */
	char **out_info = calloc(2, sizeof(char *));
	char **out_err = calloc(1, sizeof(char *));
	struct pamtest_conv_data conv_data;
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_non_null(out_info);
	assert_non_null(out_err);
	out_info[0] = malloc(PAM_MAX_MSG_SIZE);
	assert_non_null(out_info[0]);
	memset(&conv_data, 0, sizeof(conv_data));
	conv_data.out_info = out_info;
	conv_data.out_err = out_err;

	assert_int_equal(run_pamtest("manymsgs", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	assert_string_equal(out_info[0], "m1");
	assert_null(out_info[1]);
	assert_null(out_err[0]);
	free(out_info[0]);
	free(out_info);
	free(out_err);
}

static void test_long_message_truncated(void **state)
{
	char *bufs[4] = { NULL, NULL, NULL, NULL };
	struct pamtest_conv_data conv_data = { .out_info = bufs };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	char expect[PAM_MAX_MSG_SIZE];

	(void)state;
	for (int i = 0; i < 3; i++) {
		/* Exactly PAM_MAX_MSG_SIZE: one byte more would be an overrun. */
		bufs[i] = malloc(PAM_MAX_MSG_SIZE);
		assert_non_null(bufs[i]);
	}
	for (int i = 0; i < PAM_MAX_MSG_SIZE - 1; i++) {
		expect[i] = (char)('a' + i % 26);
	}
	expect[PAM_MAX_MSG_SIZE - 1] = '\0';

	assert_int_equal(run_pamtest("long", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(strlen(bufs[i]), PAM_MAX_MSG_SIZE - 1);
		assert_string_equal(bufs[i], expect);
		free(bufs[i]);
	}
}

static void test_batched_conversation(void **state)
{
	const char *off[] = { "p1", NULL };
	const char *on[] = { "p2", NULL };
	char info[PAM_MAX_MSG_SIZE] = "";
	char err[PAM_MAX_MSG_SIZE] = "";
	char *out_info[] = { info, NULL };
	char *out_err[] = { err, NULL };
	struct pamtest_conv_data conv_data = {
		.in_echo_off = off,
		.in_echo_on = on,
		.out_err = out_err,
		.out_info = out_info,
	};
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest("batch", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	assert_string_equal(info, "bi");
	assert_string_equal(err, "be");

	/* A batch whose second prompt has no answer gets a NULL response for
	 * it, the rest as usual. */
	{
		struct pam_testcase fail[] = {
			pam_test(PAMTEST_AUTHENTICATE, NULL_ANSWER),
		};
		conv_data.in_echo_on = NULL;
		assert_int_equal(run_pamtest("batch", "trinity", &conv_data, fail),
				 PAMTEST_ERR_OK);
	}
}

/* ---- GETENVLIST ---- */

static void test_getenvlist(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_OPEN_SESSION, PAM_SUCCESS),
		pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
	};
	char **env;

	(void)state;
	assert_int_equal(run_pamtest("env", "trinity", NULL, tests), PAMTEST_ERR_OK);
	env = tests[1].case_out.envlist;
	assert_non_null(env);
	assert_int_equal(tests[1].op_rv, PAM_SUCCESS);
	assert_non_null(tu_env_get(env, "LPT_FOO"));
	assert_string_equal(tu_env_get(env, "LPT_FOO"), "bar");
	assert_non_null(tu_env_get(env, "LPT_VAR"));
	assert_string_equal(tu_env_get(env, "LPT_VAR"), "lpt_value");
	pamtest_free_env(env);
	pamtest_free_env(NULL);

	/* An empty environment is an empty list, not NULL. */
	{
		struct pam_testcase empty[] = {
			pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
		};
		assert_int_equal(run_pamtest("permit", "trinity", NULL, empty),
				 PAMTEST_ERR_OK);
		assert_non_null(empty[0].case_out.envlist);
		assert_null(empty[0].case_out.envlist[0]);
		pamtest_free_env(empty[0].case_out.envlist);
	}
	/* GETENVLIST leaves op_rv 0: expecting anything else fails the case. */
	{
		struct pam_testcase wrong[] = {
			pam_test(PAMTEST_GETENVLIST, PAM_AUTH_ERR),
		};
		assert_int_equal(run_pamtest("permit", "trinity", NULL, wrong),
				 PAMTEST_ERR_CASE);
		assert_int_equal(wrong[0].op_rv, 0);
		pamtest_free_env(wrong[0].case_out.envlist);
	}
}

/* ---- KEEPHANDLE ---- */

/* Keeps a handle from a frame that is gone once it returns. */
static __attribute__((noinline)) pam_handle_t *keep_a_handle(void)
{
	const char *answers[] = { "first", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	enum pamtest_err perr;

	perr = run_pamtest("keep", "trinity", &conv_data, tests);
	assert_int_equal(perr, PAMTEST_ERR_OK);
	assert_int_equal(tests[1].op_rv, 0);
	assert_non_null(tests[1].case_out.ph);
	return tests[1].case_out.ph;
}

/* Overwrites the stack where keep_a_handle()'s frame was. */
static __attribute__((noinline)) void scribble_stack(void)
{
	volatile unsigned char junk[32768];

	for (size_t i = 0; i < sizeof(junk); i++) {
		junk[i] = 0xa5;
	}
}

static __attribute__((noinline)) enum pamtest_err
reuse_handle(pam_handle_t *ph, const char *answer)
{
	char pad[4096];
	const char *answers[] = { answer, NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};

	memset(pad, 0x5a, sizeof(pad));
	__asm__ volatile("" : : "r"(pad) : "memory");
	/* service and user are ignored with a handle. */
	return run_pamtest("permit", "nobody_else", &conv_data, tests, ph);
}

static void test_keephandle_reuse(void **state)
{
	pam_handle_t *ph;
	const void *user = NULL;

	(void)state;
	ph = keep_a_handle();
	assert_null(end_status()); /* not ended */
	assert_int_equal(pam_get_item(ph, PAM_USER, &user), PAM_SUCCESS);
	assert_string_equal((const char *)user, "trinity");
	scribble_stack();

	/* Between calls the handle's conversation fails prompts... */
	assert_int_equal(pam_acct_mgmt(ph, 0), PAM_CONV_ERR);
	/* ...and drops messages. */
	assert_int_equal(pam_open_session(ph, 0), PAM_SUCCESS);

	/* A later call installs its own conversation and ends the handle. */
	assert_int_equal(reuse_handle(ph, "second"), PAMTEST_ERR_OK);
	assert_string_equal(end_status(), "0");

	/* The same with a wrong answer: the case fails, the handle ends. */
	unsetenv("LPT_END_STATUS");
	ph = keep_a_handle();
	scribble_stack();
	assert_int_equal(reuse_handle(ph, "wrong"), PAMTEST_ERR_CASE);
	assert_non_null(end_status());
	assert_int_equal(atoi(end_status()), PAM_AUTH_ERR);
}

static void test_keephandle_caller_ends(void **state)
{
	pam_handle_t *ph;

	(void)state;
	ph = keep_a_handle();
	assert_null(end_status());
	assert_int_equal(pam_end(ph, PAM_SUCCESS), PAM_SUCCESS);
	assert_string_equal(end_status(), "0");
}

static void test_keephandle_not_last(void **state)
{
	const char *answers[] = { "first", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_GETENVLIST, PAM_SUCCESS),
	};
	pam_handle_t *ph;

	(void)state;
	assert_int_equal(run_pamtest("keep", "trinity", &conv_data, tests),
			 PAMTEST_ERR_OK);
	ph = tests[0].case_out.ph;
	assert_non_null(ph);
	assert_null(end_status());
	pamtest_free_env(tests[2].case_out.envlist);
	/* Keep it again across a second call, then end it in a third. */
	{
		struct pam_testcase again[] = {
			pam_test(PAMTEST_OPEN_SESSION, PAM_SUCCESS),
			pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
		};
		struct pam_testcase none[] = {
			pam_test(PAMTEST_CLOSE_SESSION, PAM_SUCCESS),
		};
		assert_int_equal(run_pamtest(NULL, NULL, NULL, again, ph),
				 PAMTEST_ERR_OK);
		assert_ptr_equal(again[1].case_out.ph, ph);
		assert_null(end_status());
		assert_int_equal(run_pamtest(NULL, NULL, NULL, none, ph),
				 PAMTEST_ERR_OK);
		assert_string_equal(end_status(), "0");
	}
}

static void test_keephandle_after_failure(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};

	(void)state;
	/* The run stops before KEEPHANDLE: the handle is ended. */
	assert_int_equal(run_pamtest("stop", "trinity", NULL, tests),
			 PAMTEST_ERR_CASE);
	assert_null(tests[1].case_out.ph);
	assert_string_equal(end_status(), "7");
}

/* ---- caller's conversation function ---- */

struct my_conv_ctx {
	const char *answer;
	int calls;
	int infos;
};

static int my_conv(int num_msg, const struct pam_message **msg,
		   struct pam_response **resp, void *appdata_ptr)
{
	struct my_conv_ctx *ctx = appdata_ptr;
	struct pam_response *r = calloc((size_t)num_msg, sizeof(*r));

	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	ctx->calls++;
	for (int i = 0; i < num_msg; i++) {
		if (msg[i]->msg_style == PAM_TEXT_INFO ||
		    msg[i]->msg_style == PAM_ERROR_MSG) {
			ctx->infos++;
		} else {
			r[i].resp = strdup(ctx->answer);
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

static void test_pamtest_conv(void **state)
{
	struct my_conv_ctx ctx = { .answer = "first" };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_OPEN_SESSION, PAM_SUCCESS),
	};
	struct pam_testcase keep[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	struct pam_testcase acct[] = {
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	struct pam_testcase acct_fail[] = {
		pam_test(PAMTEST_ACCOUNT, PAM_CONV_ERR),
	};
	struct pam_testcase auth_ok[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	pam_handle_t *ph;

	(void)state;
	/* The 5-argument form. */
	assert_int_equal(run_pamtest_conv("keep", "trinity", my_conv, &ctx, tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(ctx.calls, 3);
	assert_int_equal(ctx.infos, 2);

	/* The 6-argument form; the caller's conversation stays on a kept
	 * handle, so the caller can use it directly. */
	ctx.calls = 0;
	assert_int_equal(run_pamtest_conv("keep", "trinity", my_conv, &ctx, keep,
					  NULL),
			 PAMTEST_ERR_OK);
	ph = keep[1].case_out.ph;
	assert_non_null(ph);
	ctx.answer = "second";
	assert_int_equal(pam_acct_mgmt(ph, 0), PAM_SUCCESS);
	assert_int_equal(ctx.calls, 2);
	/* A NULL conv_fn with a handle keeps the handle's conversation. */
	assert_int_equal(run_pamtest_conv(NULL, NULL, NULL, NULL, acct, ph),
			 PAMTEST_ERR_OK);
	assert_int_equal(ctx.calls, 3);
	assert_string_equal(end_status(), "0");

	/* A handle kept by _pamtest() and continued with a conv function. */
	unsetenv("LPT_END_STATUS");
	ph = keep_a_handle();
	scribble_stack();
	ctx.calls = 0;
	assert_int_equal(run_pamtest_conv(NULL, NULL, my_conv, &ctx, acct, ph),
			 PAMTEST_ERR_OK);
	assert_int_equal(ctx.calls, 1);
	assert_string_equal(end_status(), "0");

	/* ...or with a NULL conv_fn: the detached conversation fails prompts. */
	unsetenv("LPT_END_STATUS");
	ph = keep_a_handle();
	assert_int_equal(run_pamtest_conv(NULL, NULL, NULL, NULL, acct_fail, ph),
			 PAMTEST_ERR_OK);
	assert_non_null(end_status());
	/* PAM_CONV_ERR, the last op_rv */
	assert_int_equal(atoi(end_status()), PAM_CONV_ERR);

	/* A new handle with a NULL conv_fn fails prompts, drops messages. */
	assert_int_equal(run_pamtest_conv("keep", "trinity", NULL, NULL, acct_fail),
			 PAMTEST_ERR_OK);
	assert_int_equal(_pamtest_conv("msgs", "trinity", NULL, NULL, auth_ok, 1,
				       NULL),
			 PAMTEST_ERR_OK);
}

/* ---- zero cases, pointer + count ---- */

static void test_zero_cases(void **state)
{
	pam_handle_t *ph;

	(void)state;
	assert_int_equal(_pamtest("endok", "trinity", NULL, NULL, 0, NULL),
			 PAMTEST_ERR_OK);
	assert_int_equal(_pamtest_conv("endok", "trinity", NULL, NULL, NULL, 0,
				       NULL),
			 PAMTEST_ERR_OK);
	assert_int_equal(run_pamtest_n("permit", "trinity", NULL, NULL, 0),
			 PAMTEST_ERR_OK);
	/* A given handle is ended even without cases. */
	ph = keep_a_handle();
	assert_int_equal(run_pamtest_n(NULL, NULL, NULL, NULL, 0, ph),
			 PAMTEST_ERR_OK);
	assert_string_equal(end_status(), "0");
}

static void test_invalid_arguments(void **state)
{
	pam_handle_t *ph;

	(void)state;
	assert_int_equal(_pamtest("permit", "trinity", NULL, NULL, 2, NULL),
			 PAMTEST_ERR_INTERNAL);
	assert_int_equal(_pamtest_conv("permit", "trinity", my_conv, NULL, NULL, 1,
				       NULL),
			 PAMTEST_ERR_INTERNAL);
	ph = keep_a_handle();
	assert_int_equal(_pamtest(NULL, NULL, NULL, NULL, 1, ph),
			 PAMTEST_ERR_INTERNAL);
	assert_string_equal(end_status(), "0");
}

static void test_pointer_and_count(void **state)
{
	const char *off[] = { "a1", "a2", "a3", NULL };
	const char *on[] = { "b1", "b2", NULL };
	struct pamtest_conv_data conv_data = { .in_echo_off = off, .in_echo_on = on };
	struct pam_testcase *list = NULL;
	size_t n = 0;

	(void)state;
	/* A list built at run time. */
	list = calloc(4, sizeof(*list));
	assert_non_null(list);
	list[n++] = (struct pam_testcase)pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS);
	list[n++] = (struct pam_testcase)pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS);
	list[n++] = (struct pam_testcase)pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS);
	assert_int_equal(run_pamtest_n("answers", "trinity", &conv_data, list, n),
			 PAMTEST_ERR_OK);
	assert_null(_pamtest_failed_case(list, n));
	/* no conv_data this time: account's prompt is answered NULL */
	list[0] = (struct pam_testcase)pam_test(PAMTEST_ACCOUNT, NULL_ANSWER);
	assert_int_equal(run_pamtest_n(NULL, NULL, NULL, list, 1, list[2].case_out.ph),
			 PAMTEST_ERR_OK);
	free(list);
}

int main(int argc, char **argv)
{
	/*
	 * Run alone by the test libpamtest_start_failure, not under valgrind:
	 * Linux-PAM 1.5's pam_start() leaks 96 bytes when it fails (it does
	 * not free its handler table); the leak-free START path is covered by
	 * test_libpamtest_errors.
	 */
	const struct CMUnitTest start_tests[] = {
		cmocka_unit_test_setup(test_start_failure, reset_end_status),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enum_values),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_failed_case),
		cmocka_unit_test_setup(test_permit_all_ops, reset_end_status),
		cmocka_unit_test_setup(test_op_mapping, reset_end_status),
		cmocka_unit_test_setup(test_stop_at_first_failure, reset_end_status),
		cmocka_unit_test_setup(test_end_status_is_last_rv, reset_end_status),
		cmocka_unit_test_setup(test_flags, reset_end_status),
		cmocka_unit_test_setup(test_unknown_op, reset_end_status),
		cmocka_unit_test_setup(test_answers_in_order, reset_end_status),
		cmocka_unit_test_setup(test_answers_run_out, reset_end_status),
		cmocka_unit_test_setup(test_null_conv_data, reset_end_status),
		cmocka_unit_test_setup(test_null_answer_arrays, reset_end_status),
		cmocka_unit_test_setup(test_null_password_as_upstream,
				       reset_end_status),
		cmocka_unit_test_setup(test_other_styles_answered_null,
				       reset_end_status),
		cmocka_unit_test_setup(test_messages_copied, reset_end_status),
		cmocka_unit_test_setup(test_stock_pam_echo, reset_end_status),
		cmocka_unit_test_setup(test_bare_pam_chatty, reset_end_status),
		cmocka_unit_test_setup(test_more_messages_than_buffers, reset_end_status),
		cmocka_unit_test_setup(test_long_message_truncated, reset_end_status),
		cmocka_unit_test_setup(test_batched_conversation, reset_end_status),
		cmocka_unit_test_setup(test_getenvlist, reset_end_status),
		cmocka_unit_test_setup(test_keephandle_reuse, reset_end_status),
		cmocka_unit_test_setup(test_keephandle_caller_ends, reset_end_status),
		cmocka_unit_test_setup(test_keephandle_not_last, reset_end_status),
		cmocka_unit_test_setup(test_keephandle_after_failure, reset_end_status),
		cmocka_unit_test_setup(test_pamtest_conv, reset_end_status),
		cmocka_unit_test_setup(test_zero_cases, reset_end_status),
		cmocka_unit_test_setup(test_invalid_arguments, reset_end_status),
		cmocka_unit_test_setup(test_pointer_and_count, reset_end_status),
	};

	if (argc > 1 && strcmp(argv[1], "start") == 0) {
		return cmocka_run_group_tests(start_tests, group_setup,
					      group_teardown);
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
