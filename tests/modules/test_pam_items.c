/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_set_items and pam_get_items through the real libpam: stacked
 * set_items -> get_items turns process environment variables into PAM
 * environment variables of the same name, in all six entry points, and
 * both modules always succeed.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "modtest.h"

/* The items both modules handle, with a test value each.  PAM_SERVICE is
 * tested separately: setting it makes libpam reload the service. */
static const struct {
	int item;
	const char *name;
	const char *value;
} items[] = {
	{ PAM_USER, "PAM_USER", "bob" },
	{ PAM_USER_PROMPT, "PAM_USER_PROMPT", "Who are you? " },
	{ PAM_TTY, "PAM_TTY", "/dev/pts/7" },
	{ PAM_RUSER, "PAM_RUSER", "remote user" },
	{ PAM_RHOST, "PAM_RHOST", "host.example" },
	{ PAM_AUTHTOK, "PAM_AUTHTOK", "s3cr=t" },
	{ PAM_OLDAUTHTOK, "PAM_OLDAUTHTOK", "old" },
#if !defined(PWRAP_OPENPAM)	/* Linux-PAM's */
	{ PAM_XDISPLAY, "PAM_XDISPLAY", ":0.0" },
	{ PAM_AUTHTOK_TYPE, "PAM_AUTHTOK_TYPE", "UNIX" },
#endif
};

#define NITEMS (sizeof(items) / sizeof(items[0]))

static void clear_env(void)
{
	for (size_t i = 0; i < NITEMS; i++) {
		unsetenv(items[i].name);
	}
	unsetenv("PAM_SERVICE");
}

static int setup(void **state)
{
	clear_env();
	return mt_setup(state);
}

static int teardown(void **state)
{
	clear_env();
	return mt_teardown(state);
}

/* Service "svc": both modules in all four groups. */
static void stack_service(const struct mt_env *t)
{
	static const char *groups[] = { "auth", "account", "password",
					"session" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	for (size_t g = 0; g < 4; g++) {
		fprintf(f, "%s required %s/pam_set_items.so\n", groups[g],
			t->moddir);
		fprintf(f, "%s required %s/pam_get_items.so\n", groups[g],
			t->moddir);
	}
	assert_int_equal(fclose(f), 0);
	mt_write(t, "svc", text, len);
	free(text);
}

static void assert_env(pam_handle_t *pamh, const char *name,
		       const char *value)
{
	const char *v = pam_getenv(pamh, name);

	if (value == NULL) {
		assert_null(v);
		return;
	}
	if (v == NULL) {
		fail_msg("%s is not in the PAM environment", name);
	}
	assert_string_equal(v, value);
}

/* Every entry point copies every item, set from the environment. */
static void stack_all_entry_points(void **state)
{
	struct mt_env *t = *state;
	static const enum mt_op ops[] = { MT_AUTH,  MT_SETCRED, MT_ACCT,
					  MT_OPEN,  MT_CLOSE,   MT_CHAUTHTOK };

	stack_service(t);
	for (size_t i = 0; i < NITEMS; i++) {
		setenv(items[i].name, items[i].value, 1);
	}
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		struct mt_conv c;
		pam_handle_t *pamh;
		int flags = ops[o] == MT_SETCRED ? PAM_ESTABLISH_CRED : 0;

		mt_conv_init(&c, 0);
		pamh = mt_start(t, "svc", "alice", &c);
		assert_env(pamh, "PAM_USER", NULL);
		assert_int_equal(mt_call(pamh, ops[o], flags), PAM_SUCCESS);
		for (size_t i = 0; i < NITEMS; i++) {
			assert_env(pamh, items[i].name, items[i].value);
		}
		/* The service item exists even when not set from env. */
		assert_env(pamh, "PAM_SERVICE", "svc");
		assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
		assert_int_equal(c.nmsgs, 0);
		mt_conv_free(&c);
	}
}

/* Unset variables leave their items alone; unset items are not
 * exported. */
static void stack_partial(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;

	stack_service(t);
	setenv("PAM_RHOST", "h", 1);
	setenv("PAM_TTY", "", 1); /* empty counts as set */
	mt_conv_init(&c, 0);
	pamh = mt_start(t, "svc", "alice", &c);
	assert_int_equal(pam_authenticate(pamh, 0), PAM_SUCCESS);
	assert_env(pamh, "PAM_RHOST", "h");
	assert_env(pamh, "PAM_TTY", "");
	assert_env(pamh, "PAM_USER", "alice");
	assert_env(pamh, "PAM_RUSER", NULL);
	assert_env(pamh, "PAM_AUTHTOK", NULL);
	assert_env(pamh, "PAM_XDISPLAY", NULL);
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	mt_conv_free(&c);
}

/* get_items alone reports what the application set. */
static void get_items_alone(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;

	mt_service(t, "svc",
		   "auth required %s/pam_get_items.so\n"
		   "session required %s/pam_get_items.so\n",
		   t->moddir, t->moddir);
	setenv("PAM_RHOST", "ignored", 1);
	mt_conv_init(&c, 0);
	pamh = mt_start(t, "svc", NULL, &c);
	assert_int_equal(pam_set_item(pamh, PAM_RHOST, "app-host"),
			 PAM_SUCCESS);
	assert_int_equal(pam_set_item(pamh, PAM_RUSER, "ru"), PAM_SUCCESS);
	assert_int_equal(pam_open_session(pamh, 0), PAM_SUCCESS);
	assert_env(pamh, "PAM_RHOST", "app-host");
	assert_env(pamh, "PAM_RUSER", "ru");
	assert_env(pamh, "PAM_USER", NULL);
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	mt_conv_free(&c);
}

/* set_items alone changes the items the application then reads. */
static void set_items_alone(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;
	const void *v = NULL;

	mt_service(t, "svc", "account required %s/pam_set_items.so\n",
		   t->moddir);
	setenv("PAM_USER", "changed", 1);
	setenv("PAM_RHOST", "r", 1);
	mt_conv_init(&c, 0);
	pamh = mt_start(t, "svc", "alice", &c);
	assert_int_equal(pam_acct_mgmt(pamh, 0), PAM_SUCCESS);
	assert_int_equal(pam_get_item(pamh, PAM_USER, &v), PAM_SUCCESS);
	assert_string_equal(v, "changed");
	assert_int_equal(pam_get_item(pamh, PAM_RHOST, &v), PAM_SUCCESS);
	assert_string_equal(v, "r");
	/* Nothing is put into the PAM environment by set_items. */
	assert_env(pamh, "PAM_USER", NULL);
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	mt_conv_free(&c);
}

/* Setting PAM_SERVICE works too (libpam lowercases it and loads that
 * service's stack for the next call). */
static void set_service(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;

	stack_service(t);
	mt_service(t, "other2",
		   "auth required %s/pam_get_items.so\n"
		   "session required %s/pam_get_items.so\n",
		   t->moddir, t->moddir);
	setenv("PAM_SERVICE", "Other2", 1);
	mt_conv_init(&c, 0);
	pamh = mt_start(t, "svc", "alice", &c);
	assert_int_equal(pam_authenticate(pamh, 0), PAM_SUCCESS);
	assert_int_equal(pam_open_session(pamh, 0), PAM_SUCCESS);
#if defined(PWRAP_OPENPAM)
	/* OpenPAM sets PAM_SERVICE once, in pam_start: pam_set_items's
	 * change is refused (logged), the stack goes on */
	assert_env(pamh, "PAM_SERVICE", "svc");
#else
	assert_env(pamh, "PAM_SERVICE", "other2");
#endif
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	mt_conv_free(&c);
}

/* Nothing set at all: still success everywhere, nothing exported but the
 * service and user. */
static void nothing_set(void **state)
{
	struct mt_env *t = *state;
	static const enum mt_op ops[] = { MT_AUTH,  MT_SETCRED, MT_ACCT,
					  MT_OPEN,  MT_CLOSE,   MT_CHAUTHTOK };
	struct mt_conv c;

	stack_service(t);
	mt_conv_init(&c, 0);
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		assert_int_equal(mt_run(t, "svc", NULL, &c, ops[o], 0),
				 PAM_SUCCESS);
	}
	mt_conv_free(&c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(stack_all_entry_points),
		T(stack_partial),
		T(get_items_alone),
		T(set_items_alone),
		T(set_service),
		T(nothing_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
