/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/common as units: the growing string (pwrap_buf.h) with its JSON and
 * terminal escapes, and PAM's name tables (pwrap_names.h).  Tree removal
 * is tested in tests/wrapper/test_files.c.
 */
#include <security/pam_appl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pwrap_buf.h"
#include "pwrap_names.h"

static char *json(const char *s)
{
	struct pwrap_buf b = { 0 };

	pwrap_buf_json(&b, s);
	return pwrap_buf_take(&b);
}

static char *text(const char *s)
{
	struct pwrap_buf b = { 0 };

	pwrap_buf_text(&b, s);
	return pwrap_buf_take(&b);
}

static void expect(char *got, const char *want)
{
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

/* JSON: valid UTF-8 kept, invalid bytes and controls escaped, so the
 * result is valid JSON whatever the input (pypamtest parses it). */
static void test_json(void **state)
{
	(void)state;
	expect(json("plain"), "\"plain\"");
	expect(json("a\"b\\c"), "\"a\\\"b\\\\c\"");
	expect(json("\n\x1b\x7f"), "\"\\u000a\\u001b\\u007f\"");
	expect(json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
	       "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* a lone continuation byte, a cut sequence, an overlong form and a
	 * surrogate are not UTF-8 */
	expect(json("\x80"), "\"\\u0080\"");
	expect(json("\xc3"), "\"\\u00c3\"");
	expect(json("\xc0\xaf"), "\"\\u00c0\\u00af\"");
	expect(json("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");
}

/* Text for a terminal: C0, DEL, C1 and invalid bytes as \xNN. */
static void test_text(void **state)
{
	(void)state;
	expect(text("ok caf\xc3\xa9"), "ok caf\xc3\xa9");
	expect(text("\x1b[31mred"), "\\x1b[31mred");
	expect(text("\x7f\xc2\x9b" "2J"), "\\x7f\\xc2\\x9b2J");
	expect(text("\xff"), "\\xff");
}

static void test_take(void **state)
{
	struct pwrap_buf b = { 0 };

	(void)state;
	expect(pwrap_buf_take(&b), "");	/* nothing added: "" */
	pwrap_buf_fmt(&b, "%d-%s", 42, "x");
	pwrap_buf_str(&b, "!");
	expect(pwrap_buf_take(&b), "42-x!");
	assert_null(b.p);
	pwrap_buf_str(&b, "lost");
	b.failed = true;	/* as after an allocation failure */
	assert_null(pwrap_buf_take(&b));
	assert_null(b.p);
	assert_false(b.failed);
}

static void test_names(void **state)
{
	int code = -1;

	(void)state;
	assert_string_equal(pwrap_code_name(PAM_AUTH_ERR), "PAM_AUTH_ERR");
	assert_null(pwrap_code_name(4242));
	assert_int_equal(pwrap_code_parse("PAM_IGNORE", &code), 0);
	assert_int_equal(code, PAM_IGNORE);
	assert_int_equal(pwrap_code_parse("USER_UNKNOWN", &code), 0);
	assert_int_equal(code, PAM_USER_UNKNOWN);
	assert_int_equal(pwrap_code_parse("PAM_AUTHTOK_RECOVER_ERR", &code), 0);
	assert_int_equal(code, PAM_AUTHTOK_RECOVERY_ERR);
	assert_string_equal(pwrap_code_name(code), "PAM_AUTHTOK_RECOVERY_ERR");
	assert_int_equal(pwrap_code_parse("auth_err", &code), -1);

	assert_int_equal(pwrap_group_parse("Session", true),
			 PWRAP_GROUP_SESSION);
	assert_int_equal(pwrap_group_parse("Session", false), -1);
	assert_string_equal(pwrap_group_name(PWRAP_GROUP_PASSWORD), "password");
	assert_null(pwrap_group_name(PWRAP_GROUPS));
	for (int g = 0; g < PWRAP_GROUPS; g++) {
		enum pwrap_sm sm = pwrap_group_sm((enum pwrap_group)g);

		assert_int_equal(pwrap_sm_group(sm), g);
		assert_int_equal(strncmp(pwrap_sm_name(sm), "pam_sm_", 7), 0);
		assert_string_equal(pwrap_sm_name(sm) + 7, pwrap_sm_call(sm) + 4);
	}
	assert_int_equal(pwrap_sm_group(PWRAP_SM_SETCRED), PWRAP_GROUP_AUTH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_take),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
