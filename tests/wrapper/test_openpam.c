/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What differs on OpenPAM, shown where it differs: one test per line of the
 * README's "On OpenPAM" list, in the order of the list.  Each runs in every
 * build and asserts what the PAM implementation under test does (Linux-PAM's
 * counterpart where there is one, so the difference itself is checked);
 * only the ownership checks, which Linux-PAM does not have, skip there.
 *
 * In-process: this binary runs preloaded with PAM_WRAPPER=1 (see
 * CMakeLists.txt), each test with a service directory of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <security/pam_appl.h>
#if defined(PWRAP_OPENPAM)
#include <security/openpam.h>
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <libpamtest.h>

#include "testutil.h"

static int setup_dir(void **state)
{
	tu_setup_tmpdir(state);
	setenv("PAM_WRAPPER_SERVICE_DIR", *state, 1);
	setenv("PAM_WRAPPER", "1", 1);
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	return 0;
}

/* pam_start(service, "alice") + pam_authenticate + pam_end: the code of
 * the authentication, or 1000 + pam_start's code. */
static int auth(const char *service)
{
	struct pam_conv c = { tu_conv_password, (void *)"secret" };
	pam_handle_t *ph = NULL;
	int rc = pam_start(service, "alice", &c, &ph);

	if (rc != PAM_SUCCESS) {
		return 1000 + rc;
	}
	rc = pam_authenticate(ph, 0);
	pam_end(ph, rc);
	return rc;
}

/* "Modules see the plain service name as PAM_SERVICE" (pam_get_items puts
 * the items into the PAM environment): the name, not a path into the
 * wrapper's directory. */
static void test_plain_service_name_in_pam_service(void **state)
{
	struct pam_conv c = { tu_conv_password, NULL };
	pam_handle_t *ph = NULL;
	const char *seen;

	tu_write_text(*state, "items", "auth required pam_get_items.so\n");
	assert_int_equal(pam_start("items", "alice", &c, &ph), PAM_SUCCESS);
	assert_int_equal(pam_authenticate(ph, 0), PAM_SUCCESS);
	seen = pam_getenv(ph, "PAM_SERVICE");
	assert_non_null(seen);
	assert_string_equal(seen, "items");
	pam_end(ph, PAM_SUCCESS);
}

/* "Policy syntax is OpenPAM's": its control flags (binding too) and
 * "include NAME"; Linux-PAM's "-type", "[value=action]", "substack",
 * "@include" and an include target with a '/' fail pam_start there. */
static void test_policy_syntax(void **state)
{
#if !defined(PWRAP_OPENPAM)
	(void)state;
	TU_SKIP("OpenPAM's syntax; Linux-PAM's is test_differential's");
#else
	static const char *const linux_only[] = {
		"-auth required pam_permit.so\n",
		"auth [success=ok default=bad] pam_permit.so\n",
		"auth substack common\n",
		"@include common\n",
		"auth include ./common\n",
	};

	tu_write_text(*state, "common", "auth required pam_permit.so\n");
	tu_write_text(*state, "other", "");
	/* binding: a success ends the chain (as sufficient), a failure
	 * counts (as required) */
	tu_write_text(*state, "flags", "auth binding pam_permit.so\n"
		      "auth required pam_deny.so\n");
	assert_int_equal(auth("flags"), PAM_SUCCESS);
	tu_write_text(*state, "flags", "auth binding pam_deny.so\n"
		      "auth sufficient pam_permit.so\n");
	assert_int_equal(auth("flags"), PAM_AUTH_ERR);
	tu_write_text(*state, "flags", "auth optional pam_deny.so\n"
		      "auth sufficient pam_permit.so\n"
		      "auth requisite pam_deny.so\n");
	assert_int_equal(auth("flags"), PAM_SUCCESS);
	tu_write_text(*state, "inc", "auth include common\n");
	assert_int_equal(auth("inc"), PAM_SUCCESS);
	for (size_t i = 0; i < sizeof(linux_only) / sizeof(linux_only[0]);
	     i++) {
		tu_write_text(*state, "linux", linux_only[i]);
		if (auth("linux") != 1000 + PAM_SYSTEM_ERR) {
			fail_msg("OpenPAM accepted %s", linux_only[i]);
		}
	}
#endif
}

/* "Service names keep their case" (Linux-PAM lowercases them). */
static void test_service_name_case(void **state)
{
	tu_write_text(*state, "MixedCase", "auth required pam_permit.so\n");
	tu_write_text(*state, "mixedcase", "auth required pam_deny.so\n");
#if defined(PWRAP_OPENPAM)
	assert_int_equal(auth("MixedCase"), PAM_SUCCESS);
#else
	assert_int_equal(auth("MixedCase"), PAM_AUTH_ERR);
#endif
	assert_int_equal(auth("mixedcase"), PAM_AUTH_ERR);
}

/* "Service names are letters, digits, '.', '_' and '-' only": OpenPAM
 * refuses any other at pam_start (PAM_SYSTEM_ERR), even with the file
 * there; Linux-PAM takes it. */
static void test_service_name_charset(void **state)
{
	tu_write_text(*state, "#svc", "auth required pam_permit.so\n");
	tu_write_text(*state, "a+b", "auth required pam_permit.so\n");
	tu_write_text(*state, "Ok.name_1-2", "auth required pam_permit.so\n");
#if defined(PWRAP_OPENPAM)
	assert_int_equal(auth("#svc"), 1000 + PAM_SYSTEM_ERR);
	assert_int_equal(auth("a+b"), 1000 + PAM_SYSTEM_ERR);
	assert_int_equal(auth("Ok.name_1-2"), PAM_SUCCESS);
#else
	assert_int_equal(auth("#svc"), PAM_SUCCESS);
	assert_int_equal(auth("a+b"), PAM_SUCCESS);
	tu_write_text(*state, "ok.name_1-2", "auth required pam_permit.so\n");
	assert_int_equal(auth("Ok.name_1-2"), PAM_SUCCESS);
#endif
}

/* "pam_set_item(PAM_SERVICE, ...) after pam_start returns PAM_BAD_ITEM"
 * (Linux-PAM takes it and loads that service's stack). */
static void test_set_item_service(void **state)
{
	struct pam_conv c = { tu_conv_password, NULL };
	pam_handle_t *ph = NULL;

	tu_write_text(*state, "first", "auth required pam_permit.so\n");
	tu_write_text(*state, "second", "auth required pam_deny.so\n");
	assert_int_equal(pam_start("first", "alice", &c, &ph), PAM_SUCCESS);
#if defined(PWRAP_OPENPAM)
	assert_int_equal(pam_set_item(ph, PAM_SERVICE, "second"), PAM_BAD_ITEM);
	assert_int_equal(pam_authenticate(ph, 0), PAM_SUCCESS);
#else
	assert_int_equal(pam_set_item(ph, PAM_SERVICE, "second"), PAM_SUCCESS);
	assert_int_equal(pam_authenticate(ph, 0), PAM_AUTH_ERR);
#endif
	pam_end(ph, PAM_SUCCESS);
}

/* "OpenPAM's ownership checks are turned off" in a wrapped process: a
 * module below a directory anyone may write to (OpenPAM's module check
 * refuses it) loads, and both features read 0 once pam_start ran. */
static void test_ownership_checks_off(void **state)
{
#if !defined(PWRAP_OPENPAM)
	(void)state;
	TU_SKIP("Linux-PAM has no ownership checks of policy or module files");
#else
	const char *sysmod = getenv("PWRAP_SYSTEM_MODULE_DIR");
	char *open_dir = tu_subdir(*state, "anyone");
	char *from, *to, *svc, *text = NULL;
	size_t len = 0;
	int on = -1;

	assert_non_null(sysmod);
	assert_int_equal(chmod(open_dir, 0777), 0);	/* not sticky */
	from = tu_path(sysmod, "pam_permit.so");
	to = tu_path(open_dir, "pam_permit.so");
	text = tu_read_file(from, &len);
	tu_write_file(to, text, len, 0755);
	assert_true(asprintf(&svc, "auth required %s\n", to) > 0);
	tu_write_text(*state, "loose", svc);
	assert_int_equal(auth("loose"), PAM_SUCCESS);
	assert_int_equal(openpam_get_feature(OPENPAM_VERIFY_MODULE_FILE, &on),
			 PAM_SUCCESS);
	assert_int_equal(on, 0);
	assert_int_equal(openpam_get_feature(OPENPAM_VERIFY_POLICY_FILE, &on),
			 PAM_SUCCESS);
	assert_int_equal(on, 0);
	free(svc);
	free(text);
	free(to);
	free(from);
	free(open_dir);
#endif
}

/* "Our modules log through the wrapper's pam_syslog when it is loaded ...
 * libpamtest needs no pam_misc": pam_matrix's line reaches the wrapper's
 * log (OpenPAM has no pam_syslog), and a libpamtest transaction runs. */
static void test_module_logging_and_libpamtest(void **state)
{
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	const char *answers[] = { "secret", NULL };
	struct pamtest_conv_data conv = { .in_echo_off = answers };
	char *svc = NULL;
	char *err;

	tu_write_text(*state, "passdb", "alice:secret:logged\n");
	assert_true(asprintf(&svc, "auth required pam_matrix.so passdb=%s/"
			     "passdb\n", (char *)*state) > 0);
	tu_write_text(*state, "logged", svc);
	free(svc);
	setenv("PAM_WRAPPER_DEBUGLEVEL", "2", 1);
	tu_stderr_begin();
	assert_int_equal(run_pamtest("logged", "bob", &conv, tests),
			 PAMTEST_ERR_CASE);
	err = tu_stderr_end();
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	if (strstr(err, "SYSLOG(5): ") == NULL ||
	    strstr(err, "unknown user bob") == NULL) {
		fail_msg("pam_matrix's line did not reach the wrapper:\n%s",
			 err);
	}
	free(err);
	assert_int_equal(run_pamtest("logged", "alice", &conv, tests),
			 PAMTEST_ERR_OK);
}

/* "Return codes and flags have OpenPAM's values (e.g. PAM_AUTH_ERR is 9,
 * not 7)": the numbers a stack gives. */
static void test_return_code_values(void **state)
{
	tu_write_text(*state, "deny", "auth required pam_deny.so\n");
#if defined(PWRAP_OPENPAM)
	assert_int_equal(auth("deny"), 9);
	assert_int_equal(PAM_AUTH_ERR, 9);
	assert_int_equal(PAM_SYSTEM_ERR, 4);
	assert_int_equal(PAM_SILENT, INT_MIN);
#else
	assert_int_equal(auth("deny"), 7);
	assert_int_equal(PAM_AUTH_ERR, 7);
	assert_int_equal(PAM_SYSTEM_ERR, 4);
	assert_int_equal(PAM_SILENT, 0x8000);
#endif
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_dir, tu_teardown_tmpdir)
	const struct CMUnitTest tests[] = {
		T(test_plain_service_name_in_pam_service),
		T(test_policy_syntax),
		T(test_service_name_case),
		T(test_service_name_charset),
		T(test_set_item_service),
		T(test_ownership_checks_off),
		T(test_module_logging_and_libpamtest),
		T(test_return_code_values),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
