/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_chatty through the real libpam: how many messages of which kind the
 * authentication sends for each combination of options, beyond upstream's
 * cap of 16, what the other entry points do, and a failing conversation.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "modtest.h"

#define INFO "I:Authentication succeeded"
#define ERROR "E:Authentication generated an error"

/* Authenticates with pam_chatty OPTS; checks NINFO info messages then
 * NERROR error messages were sent, one per conversation call. */
static void expect(const struct mt_env *t, const char *opts, size_t ninfo,
		   size_t nerror)
{
	struct mt_conv c;

	mt_service(t, "svc", "auth required %s/pam_chatty.so %s\n", t->moddir,
		   opts);
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_SUCCESS);
	if (c.nmsgs != ninfo + nerror) {
		fail_msg("options \"%s\": %zu messages, want %zu", opts,
			 c.nmsgs, ninfo + nerror);
	}
	for (size_t i = 0; i < ninfo; i++) {
		assert_string_equal(mt_msg(&c, i), INFO);
	}
	for (size_t i = 0; i < nerror; i++) {
		assert_string_equal(mt_msg(&c, ninfo + i), ERROR);
	}
	if (c.nmsgs > 0) {
		assert_int_equal(c.max_per_call, 1);
	}
	mt_conv_free(&c);
}

static void defaults(void **state)
{
	struct mt_env *t = *state;

	expect(t, "info", 3, 0);
	expect(t, "error", 0, 3);
	expect(t, "info error", 3, 3);
	expect(t, "error info", 3, 3);
	/* No kind chosen: nothing to say. */
	expect(t, "", 0, 0);
	expect(t, "num_lines=5", 0, 0);
}

static void counts(void **state)
{
	struct mt_env *t = *state;

	expect(t, "num_lines=0 info error", 0, 0);
	expect(t, "num_lines=1 info", 1, 0);
	expect(t, "info num_lines=17", 17, 0);
	expect(t, "num_lines=100 info", 100, 0);
	expect(t, "num_lines=100 error", 0, 100);
	expect(t, "num_lines=100 info error", 100, 100);
	/* The last num_lines counts. */
	expect(t, "num_lines=2 num_lines=4 info", 4, 0);
}

/* Bad counts are logged and ignored: the default applies. */
static void bad_options(void **state)
{
	struct mt_env *t = *state;

	expect(t, "num_lines=abc info", 3, 0);
	assert_true(mt_log_has("invalid option \"num_lines=abc\""));
	expect(t, "num_lines=-1 info", 3, 0);
	expect(t, "num_lines= info", 3, 0);
	expect(t, "num_lines=5x info", 3, 0);
	expect(t, "num_lines=99999999999999999999999 info", 3, 0);
	expect(t, "verbose info", 3, 0);
	assert_true(mt_log_has("unknown option \"verbose\""));
}

/* As upstream: a failed conversation neither stops the messages nor
 * fails the module (logged once for each kind of message). */
static void conversation_fails(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_service(t, "svc", "auth required %s/pam_chatty.so info error\n",
		   t->moddir);
	mt_conv_init(&c, 0);
	c.fail = true;
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_SUCCESS);
	mt_conv_free(&c);
	assert_int_equal(mt_log_count_has("conversation failed"), 2);
}

/* The other groups stay quiet and succeed. */
static void other_groups(void **state)
{
	struct mt_env *t = *state;
	static const enum mt_op ops[] = { MT_SETCRED, MT_ACCT, MT_OPEN,
					  MT_CLOSE, MT_CHAUTHTOK };
	struct mt_conv c;

	mt_service(t, "svc",
		   "auth required %s/pam_chatty.so info error\n"
		   "account required %s/pam_chatty.so info error\n"
		   "password required %s/pam_chatty.so info error\n"
		   "session required %s/pam_chatty.so info error\n",
		   t->moddir, t->moddir, t->moddir, t->moddir);
	mt_conv_init(&c, 0);
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		assert_int_equal(mt_run(t, "svc", "alice", &c, ops[o], 0),
				 PAM_SUCCESS);
	}
	assert_int_equal(c.nmsgs, 0);
	mt_conv_free(&c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, mt_setup, mt_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(defaults),
		T(counts),
		T(bad_options),
		T(conversation_fails),
		T(other_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
