/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmocka tests of libpamtest's conversation fault injection
 * (_pamtest_faults(), _pamtest_conv_faults() and their run_* macros)
 * through the real preload, with the test-only module pam_lpt_test.so,
 * which drives the conversation exactly as its service line says and
 * returns a code of its choosing for each kind of bad reply (ifnull=,
 * ifnullentry=, offlen=).  Each fault is checked on the call it names and
 * on no other: call numbering across cases, the code of a failed call,
 * no reply array, NULL answers, long answers (length and content), what a
 * faulted call does to the answer lists and message buffers, which fault
 * wins, the caller's own conversation behind the faults and kept handles,
 * which must never keep the fault layer (its state dies with the call:
 * valgrind and ASan see any use of it).
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

/* Distinct codes pam_lpt_test returns for "no array" and "NULL answer". */
#if defined(PWRAP_OPENPAM)
/* OpenPAM's codes are enumerators, which STR() cannot turn into numbers */
#define IFNULL 24
#define IFNULLENTRY 11
_Static_assert(IFNULL == PAM_NO_MODULE_DATA, "OpenPAM's PAM_NO_MODULE_DATA");
_Static_assert(IFNULLENTRY == PAM_CRED_INSUFFICIENT,
	       "OpenPAM's PAM_CRED_INSUFFICIENT");
#else
#define IFNULL PAM_NO_MODULE_DATA
#define IFNULLENTRY PAM_CRED_INSUFFICIENT
#endif

#define STR_(x) #x
#define STR(x) STR_(x)
#define NULLOPTS " ifnull=" STR(IFNULL) " ifnullentry=" STR(IFNULLENTRY)

struct lpt_service {
	const char *name;
	const char *content;
};

static const struct lpt_service services[] = {
	/* Three calls in auth (a1, a2, b1), two in account (a3, b2). */
	{ "answers",
	  "auth required " M " off=a1 off=a2 on=b1\n"
	  "account required " M " off=a3 on=b2\n" },
	{ "one", "auth required " M NULLOPTS " off=a1\n" },
	{ "two", "auth required " M NULLOPTS " off=a1 off=a2\n" },
	{ "plain", "auth required " M " off=a1\n" },
	{ "msgs", "auth required " M " info=i1 info=i2 err=e1\n" },
	{ "long", "auth required " M " offlen=2048\n" },
	{ "longnull", "auth required " M NULLOPTS " offlen=2048\n" },
	{ "long600", "auth required " M " offlen=600\n" },
	{ "longon", "auth required " M " on=x offlen=2048\n" },
	{ "longthen", "auth required " M " offlen=2048 off=a1\n" },
	/* One call with a message, a prompt and an error; then a prompt. */
	{ "batchlong",
	  "auth required " M " batch info=bi offlen=2048 err=be\n"
	  "auth required " M " off=a1\n" },
	{ "keep",
	  "auth required " M " off=a1\n"
	  "account required " M " off=a2\n" },
	{ "silent", "auth required pam_permit.so\n" },
};

static int group_setup(void **state)
{
	char *svcdir = tu_svcdir_new("lpt");

	for (size_t i = 0; i < sizeof(services) / sizeof(services[0]); i++) {
		tu_write_text(svcdir, services[i].name, services[i].content);
	}
	*state = svcdir;
	return 0;
}

static int group_teardown(void **state)
{
	tu_rmtree_quiet(*state);
	free(*state);
	return 0;
}

/* One authenticate case expecting rv, with answers and faults. */
static enum pamtest_err auth_with(const char *service, const char **answers,
				  struct pamtest_conv_faults *faults, int rv)
{
	struct pamtest_conv_data data = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, rv),
	};

	return run_pamtest_faults(service, "alice", &data, faults, tests);
}

static void test_no_faults(void **state)
{
	const char *answers[] = { "a1", "a2", NULL };
	const char *on[] = { "b1", "b2", NULL };
	struct pamtest_conv_data data = { .in_echo_off = answers,
					  .in_echo_on = on };
	struct pamtest_conv_faults none = { .calls = 99 };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	/* An all-zero struct changes nothing but counts the calls. */
	assert_int_equal(run_pamtest_faults("answers", "alice", &data, &none,
					    tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(none.calls, 3);
	/* NULL faults: exactly _pamtest(). */
	assert_int_equal(run_pamtest_faults("answers", "alice", &data, NULL,
					    tests),
			 PAMTEST_ERR_OK);
}

static void test_fail_at(void **state)
{
	const char *answers[] = { "a1", "a2", NULL };
	struct pamtest_conv_faults f1 = { .fail_at = 1 };
	struct pamtest_conv_faults f2 = { .fail_at = 2 };
	struct pamtest_conv_faults f3 = { .fail_at = 3 };
	struct pamtest_conv_faults buf = { .fail_at = 1,
					   .fail_code = PAM_BUF_ERR };
	struct pamtest_conv_faults every = { .fail_at = PAMTEST_CONV_EVERY_CALL };

	(void)state;
	assert_int_equal(auth_with("two", answers, &f1, PAM_CONV_ERR),
			 PAMTEST_ERR_OK);
	assert_int_equal(f1.calls, 1);
	assert_int_equal(auth_with("two", answers, &f2, PAM_CONV_ERR),
			 PAMTEST_ERR_OK);
	assert_int_equal(f2.calls, 2);
	/* A fault after the last call changes nothing. */
	assert_int_equal(auth_with("two", answers, &f3, PAM_SUCCESS),
			 PAMTEST_ERR_OK);
	assert_int_equal(f3.calls, 2);
	assert_int_equal(auth_with("two", answers, &buf, PAM_BUF_ERR),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("two", answers, &every, PAM_CONV_ERR),
			 PAMTEST_ERR_OK);
	assert_int_equal(every.calls, 1);
}

/* A failed call uses no answer: the next call gets the one it would have. */
static void test_faulted_call_uses_no_answer(void **state)
{
	const char *answers[] = { "a1", NULL };
	struct pamtest_conv_faults f = { .null_resp_at = 1 };
	struct pamtest_conv_data data = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		/* Call 1 has no reply array, call 2 gets the first answer. */
		pam_test(PAMTEST_AUTHENTICATE, IFNULL),
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest_faults("one", "alice", &data, &f, tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(f.calls, 2);
}

/* Calls are numbered across the cases of one run, from 1 in each run. */
static void test_numbering_across_cases(void **state)
{
	const char *off[] = { "a1", "a2", "a3", NULL };
	const char *on[] = { "b1", "b2", NULL };
	struct pamtest_conv_data data = { .in_echo_off = off, .in_echo_on = on };
	struct pamtest_conv_faults f = { .fail_at = 4 };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_CONV_ERR),
	};

	(void)state;
	assert_int_equal(run_pamtest_faults("answers", "alice", &data, &f,
					    tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(f.calls, 4);
	/* Again: the count starts over. */
	assert_int_equal(run_pamtest_faults("answers", "alice", &data, &f,
					    tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(f.calls, 4);
}

static void test_null_resp_and_null_entry(void **state)
{
	const char *answers[] = { "a1", "a2", NULL };
	struct pamtest_conv_faults nr1 = { .null_resp_at = 1 };
	struct pamtest_conv_faults nr2 = { .null_resp_at = 2 };
	struct pamtest_conv_faults ne1 = { .null_entry_at = 1 };
	struct pamtest_conv_faults ne2 = { .null_entry_at = 2 };
	struct pamtest_conv_faults ne_every = {
		.null_entry_at = PAMTEST_CONV_EVERY_CALL };

	(void)state;
	assert_int_equal(auth_with("two", answers, &nr1, IFNULL), PAMTEST_ERR_OK);
	assert_int_equal(auth_with("two", answers, &nr2, IFNULL), PAMTEST_ERR_OK);
	assert_int_equal(nr2.calls, 2);
	assert_int_equal(auth_with("two", answers, &ne1, IFNULLENTRY),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("two", answers, &ne2, IFNULLENTRY),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("two", answers, &ne_every, IFNULLENTRY),
			 PAMTEST_ERR_OK);
	/* Without ifnull=, pam_lpt_test treats a missing answer as wrong. */
	assert_int_equal(auth_with("plain", answers, &nr1, PAM_AUTH_ERR),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("plain", answers, &ne1, PAM_AUTH_ERR),
			 PAMTEST_ERR_OK);
}

/* Messages of a fail/null call are not recorded; the others are. */
static void test_faulted_message_call(void **state)
{
	char info[2][PAM_MAX_MSG_SIZE] = { "untouched", "untouched" };
	char err[1][PAM_MAX_MSG_SIZE] = { "untouched" };
	char *out_info[] = { info[0], info[1], NULL };
	char *out_err[] = { err[0], NULL };
	struct pamtest_conv_data data = { .out_info = out_info,
					  .out_err = out_err };
	struct pamtest_conv_faults f = { .null_resp_at = 1 };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	/* A message needs no answer: no array is fine for it. */
	assert_int_equal(run_pamtest_faults("msgs", "alice", &data, &f, tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(f.calls, 3);
	assert_string_equal(info[0], "i2");
	assert_string_equal(info[1], "untouched");
	assert_string_equal(err[0], "e1");

	/* A failed message call fails the module. */
	f = (struct pamtest_conv_faults){ .fail_at = 3 };
	tests[0].expected_rv = PAM_CONV_ERR;
	strcpy(info[0], "untouched");
	strcpy(err[0], "untouched");
	assert_int_equal(run_pamtest_faults("msgs", "alice", &data, &f, tests),
			 PAMTEST_ERR_OK);
	assert_string_equal(info[0], "i1");
	assert_string_equal(info[1], "i2");
	assert_string_equal(err[0], "untouched");
}

static void test_long_answer(void **state)
{
	struct pamtest_conv_faults deflt = { .long_answer_at = 1 };
	struct pamtest_conv_faults every = {
		.long_answer_at = PAMTEST_CONV_EVERY_CALL };
	struct pamtest_conv_faults l600 = { .long_answer_at = 1,
					    .long_answer_len = 600 };
	struct pamtest_conv_faults l599 = { .long_answer_at = 1,
					    .long_answer_len = 599 };
	struct pamtest_conv_faults at2 = { .long_answer_at = 2 };

	(void)state;
	/* No answers at all: the long answer needs none. */
	assert_int_equal(auth_with("long", NULL, &deflt, PAM_SUCCESS),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("long", NULL, &every, PAM_SUCCESS),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("long600", NULL, &l600, PAM_SUCCESS),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("long600", NULL, &l599, PAM_AUTH_ERR),
			 PAMTEST_ERR_OK);
	/* Not on call 1: that prompt finds no answer in the (empty) list and
	 * is answered NULL (as upstream's conversation does). */
	assert_int_equal(auth_with("longnull", NULL, &at2, IFNULLENTRY),
			 PAMTEST_ERR_OK);
	assert_true(PAMTEST_CONV_LONG_ANSWER_LEN > PAM_MAX_RESP_SIZE);
	assert_int_equal(PAMTEST_CONV_LONG_ANSWER_LEN, 2048);
}

/* Echo-on prompts get the long answer too (on=x then fails). */
static void test_long_answer_echo_on(void **state)
{
	const char *on[] = { "x", NULL };
	struct pamtest_conv_data data = { .in_echo_on = on };
	struct pamtest_conv_faults f = { .long_answer_at = 1 };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_AUTH_ERR),
	};

	(void)state;
	assert_int_equal(run_pamtest_faults("longon", "alice", &data, &f, tests),
			 PAMTEST_ERR_OK);
	/* on=x failed, so the module stopped after call 1. */
	assert_int_equal(f.calls, 1);
}

/* In a long-answer call the messages still reach the buffers and the
 * answer lists are not used: the next prompt gets the first answer. */
static void test_long_answer_batch(void **state)
{
	const char *answers[] = { "a1", NULL };
	char info[PAM_MAX_MSG_SIZE] = "";
	char err[PAM_MAX_MSG_SIZE] = "";
	char *out_info[] = { info, NULL };
	char *out_err[] = { err, NULL };
	struct pamtest_conv_data data = { .in_echo_off = answers,
					  .out_info = out_info,
					  .out_err = out_err };
	struct pamtest_conv_faults f = { .long_answer_at = 1 };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	assert_int_equal(run_pamtest_faults("batchlong", "alice", &data, &f,
					    tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(f.calls, 2);
	assert_string_equal(info, "bi");
	assert_string_equal(err, "be");
}

/* When several faults name one call, the first in member order wins. */
static void test_priority(void **state)
{
	const char *answers[] = { "a1", NULL };
	struct pamtest_conv_faults all = {
		.fail_at = 1, .fail_code = PAM_AUTHINFO_UNAVAIL, .null_resp_at = 1,
		.null_entry_at = 1, .long_answer_at = 1 };
	struct pamtest_conv_faults no_fail = {
		.null_resp_at = 1, .null_entry_at = 1, .long_answer_at = 1 };
	struct pamtest_conv_faults entry_long = {
		.null_entry_at = 1, .long_answer_at = 1 };

	(void)state;
	assert_int_equal(auth_with("one", answers, &all, PAM_AUTHINFO_UNAVAIL),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("one", answers, &no_fail, IFNULL),
			 PAMTEST_ERR_OK);
	assert_int_equal(auth_with("one", answers, &entry_long, IFNULLENTRY),
			 PAMTEST_ERR_OK);
}

/* The caller's conversation, counting its calls. */
struct counting {
	int calls;
};

static int counting_conv(int num_msg, const struct pam_message **msg,
			 struct pam_response **resp, void *appdata_ptr)
{
	struct counting *c = appdata_ptr;
	struct pam_response *r = calloc((size_t)num_msg, sizeof(*r));

	(void)msg;
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	c->calls++;
	for (int i = 0; i < num_msg; i++) {
		r[i].resp = strdup(c->calls == 1 ? "a1" : "a2");
	}
	*resp = r;
	return PAM_SUCCESS;
}

static void test_conv_faults(void **state)
{
	struct counting c = { 0 };
	struct pamtest_conv_faults f = { .long_answer_at = 1 };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_CONV_ERR),
	};
	struct pam_testcase ok[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	(void)state;
	/* Call 1 answered by the faults: the caller's function sees only
	 * call 2 and answers it "a1", which is what "longthen" wants. */
	assert_int_equal(run_pamtest_conv_faults("longthen", "alice",
						 counting_conv, &c, &f, ok),
			 PAMTEST_ERR_OK);
	assert_int_equal(c.calls, 1);
	assert_int_equal(f.calls, 2);

	/* No faults named: every call goes to the caller. */
	c.calls = 0;
	f = (struct pamtest_conv_faults){ 0 };
	assert_int_equal(run_pamtest_conv_faults("two", "alice", counting_conv,
						 &c, &f, ok),
			 PAMTEST_ERR_OK);
	assert_int_equal(c.calls, 2);

	/* NULL conv_fn, new handle: prompts fail behind the faults. */
	f = (struct pamtest_conv_faults){ .fail_at = 2 };
	assert_int_equal(run_pamtest_conv_faults("two", "alice", NULL, NULL,
						 &f, tests),
			 PAMTEST_ERR_OK);
	assert_int_equal(f.calls, 1);
	/* NULL faults: exactly _pamtest_conv(). */
	c.calls = 0;
	assert_int_equal(run_pamtest_conv_faults("two", "alice", counting_conv,
						 &c, NULL, ok),
			 PAMTEST_ERR_OK);
	assert_int_equal(c.calls, 2);
}

/*
 * A handle kept by a faulted run gets the conversation behind the faults
 * back: the faults struct may be gone when the handle is used again.
 */
static void test_keep_handle(void **state)
{
	const char *answers[] = { "a1", "a2", NULL };
	struct pamtest_conv_data data = { .in_echo_off = answers };
	struct pamtest_conv_faults *f = calloc(1, sizeof(*f));
	struct pam_testcase first[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	struct pam_testcase second[] = {
		/* The built-in conversation's kept form fails every prompt. */
		pam_test(PAMTEST_ACCOUNT, PAM_CONV_ERR),
	};
	const char *second_answers[] = { "a2", NULL };
	struct pamtest_conv_data second_data = { .in_echo_off = second_answers };
	struct pam_testcase third[] = {
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	struct counting c = { 0 };

	(void)state;
	assert_non_null(f);
	f->fail_at = 5;
	assert_int_equal(run_pamtest_faults("keep", "alice", &data, f, first),
			 PAMTEST_ERR_OK);
	assert_int_equal(f->calls, 1);
	free(f);
	/* _pamtest_conv with a NULL conv_fn keeps the handle's conversation. */
	assert_int_equal(run_pamtest_conv(NULL, NULL, NULL, NULL, second,
					  first[1].case_out.ph),
			 PAMTEST_ERR_OK);

	/* Again, continued with the built-in conversation. */
	f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->null_entry_at = 7;
	assert_int_equal(run_pamtest_faults("keep", "alice", &data, f, first),
			 PAMTEST_ERR_OK);
	free(f);
	assert_int_equal(run_pamtest(NULL, NULL, &second_data, third,
				     first[1].case_out.ph),
			 PAMTEST_ERR_OK);

	/* The caller's conversation stays on a handle kept by a faulted
	 * _pamtest_conv_faults(), without the faults. */
	f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->long_answer_at = 9;
	assert_int_equal(run_pamtest_conv_faults("keep", "alice", counting_conv,
						 &c, f, first),
			 PAMTEST_ERR_OK);
	free(f);
	assert_int_equal(c.calls, 1);
	assert_int_equal(run_pamtest_conv(NULL, NULL, NULL, NULL, third,
					  first[1].case_out.ph),
			 PAMTEST_ERR_OK);
	assert_int_equal(c.calls, 2);
}

/* Faults in front of a given handle's own conversation (NULL conv_fn). */
static void test_faults_on_given_handle(void **state)
{
	struct counting c = { 0 };
	struct pam_testcase first[] = {
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	struct pam_testcase second[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_CONV_ERR),
	};
	struct pamtest_conv_faults f = { .fail_at = 2 };

	(void)state;
	assert_int_equal(run_pamtest_conv("keep", "alice", counting_conv, &c,
					  first),
			 PAMTEST_ERR_OK);
	assert_int_equal(_pamtest_conv_faults(NULL, NULL, NULL, NULL, &f,
					      second, 2, first[0].case_out.ph),
			 PAMTEST_ERR_OK);
	assert_int_equal(c.calls, 1);
	assert_int_equal(f.calls, 2);
}

/* A module that never talks: no call, no fault, whatever is asked. */
static void test_no_conversation(void **state)
{
	struct pamtest_conv_faults f = {
		.fail_at = PAMTEST_CONV_EVERY_CALL,
		.null_resp_at = PAMTEST_CONV_EVERY_CALL,
		.null_entry_at = PAMTEST_CONV_EVERY_CALL,
		.long_answer_at = PAMTEST_CONV_EVERY_CALL };

	(void)state;
	assert_int_equal(auth_with("silent", NULL, &f, PAM_SUCCESS),
			 PAMTEST_ERR_OK);
	assert_int_equal(f.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_faults),
		cmocka_unit_test(test_fail_at),
		cmocka_unit_test(test_faulted_call_uses_no_answer),
		cmocka_unit_test(test_numbering_across_cases),
		cmocka_unit_test(test_null_resp_and_null_entry),
		cmocka_unit_test(test_faulted_message_call),
		cmocka_unit_test(test_long_answer),
		cmocka_unit_test(test_long_answer_echo_on),
		cmocka_unit_test(test_long_answer_batch),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_conv_faults),
		cmocka_unit_test(test_keep_handle),
		cmocka_unit_test(test_faults_on_given_handle),
		cmocka_unit_test(test_no_conversation),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
