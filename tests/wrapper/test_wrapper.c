/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * In-process tests of libpam_wrapper.so.  This binary links libpam and runs
 * with LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1 and
 * PAM_WRAPPER_SERVICE_DIR=tests/wrapper/services (see CMakeLists.txt); each
 * test then points PAM_WRAPPER_SERVICE_DIR at its own temporary directory and
 * drives the real libpam with stock modules from libpam-modules.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <security/pam_appl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "pamconf.h"

/* How the loaded libpam reads service files (src/pamconf tells it from
 * the library): where Linux-PAM versions differ, so do the expectations. */
static struct pamconf_rules R;

/* Linux-PAM 1.6 or later: lines of any length, a blank or comment line
 * ends a continued line, includes stop at 16 levels (no cycle refused). */
static bool lp16(void)
{
	return R.impl == PAMCONF_LINUX_PAM && R.version >= 106;
}

/* Runs pam_start + one operation + pam_end; returns the operation's code,
 * or 1000 + pam_start's code when pam_start fails. */
static int txn_pw(const char *service, const char *user, int op,
		  const char *password)
{
	struct pam_conv c = { tu_conv_password, (void *)password };
	pam_handle_t *ph = NULL;
	int rc;

	rc = pam_start(service, user, &c, &ph);
	if (rc != PAM_SUCCESS) {
		assert_null(ph);
		return 1000 + rc;
	}
	switch (op) {
	case 'a':
		rc = pam_authenticate(ph, 0);
		break;
	case 'm':
		rc = pam_acct_mgmt(ph, 0);
		break;
	case 's':
		rc = pam_open_session(ph, 0);
		break;
	default:
		fail_msg("bad op %c", op);
	}
	pam_end(ph, rc);
	return rc;
}

static int txn(const char *service, int op)
{
	return txn_pw(service, "pwrap-no-such-user", op, NULL);
}

/* A fresh service directory for each test (removed by tu_teardown_tmpdir). */
static int setup_dir(void **state)
{
	tu_setup_tmpdir(state);
	setenv("PAM_WRAPPER_SERVICE_DIR", *state, 1);
	setenv("PAM_WRAPPER", "1", 1);
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	return 0;
}

/* Must run first: the directory exists before any pam_start, holding
 * copies of the service dir the process started with (SSSD reads them,
 * GLOME writes a file without a trailing newline and expects it used). */
static void test_runtime_dir_before_first_start(void **state)
{
	const char *rd = getenv("PAM_WRAPPER_RUNTIME_DIR");
	struct stat st;
	char *copy, *mine;

	(void)state;
	assert_non_null(rd);
	assert_int_equal(stat(rd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(access(rd, W_OK), 0);
	copy = tu_read_at(rd, "initial");
	assert_non_null(copy);
	mine = tu_read_at(getenv("PWRAP_SOURCE_DIR"),
			  "tests/wrapper/services/initial");
	assert_string_equal(copy, mine);
	free(copy);
	free(mine);
}

static void test_runtime_dir_on_demand(void **state)
{
	const char *(*rd)(void) = (const char *(*)(void))dlsym(
		RTLD_DEFAULT, "pam_wrapper_runtime_dir");
	const char *before = getenv("PAM_WRAPPER_RUNTIME_DIR");

	(void)state;
	assert_non_null(rd);
	assert_non_null(before);
	assert_string_equal(rd(), before);
	setenv("PAM_WRAPPER", "0", 1);
	assert_null(rd());
	setenv("PAM_WRAPPER", "1", 1);
}

static void test_runtime_dir_written_by_test(void **state)
{
	const char *rd = getenv("PAM_WRAPPER_RUNTIME_DIR");

	tu_write_text(*state, "glome", "auth required pam_deny.so\n");
	assert_int_equal(txn("glome", 'a'), PAM_AUTH_ERR);
	/* the test's own file in the runtime dir wins, no trailing newline */
	tu_write_text(rd, "glome", "auth required pam_permit.so");
	assert_int_equal(txn("glome", 'a'), PAM_SUCCESS);
	tu_unlink_at(rd, "glome");
}

static void test_redirect(void **state)
{
	char *err;
	int rc;

	tu_write_text(*state, "permit", "auth required pam_permit.so\n"
		      "account required pam_permit.so\n");
	tu_write_text(*state, "deny", "auth required pam_deny.so\n"
		      "account required pam_deny.so\n");
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
	assert_int_equal(txn("permit", 'm'), PAM_SUCCESS);
	assert_int_equal(txn("deny", 'a'), PAM_AUTH_ERR);
	assert_int_equal(txn("deny", 'm'), PAM_AUTH_ERR);
#if defined(PWRAP_OPENPAM)
	/* read as OpenPAM reads it: a continuation joins words, a '#' that
	 * starts a word ends the line (no continuation after it), and a file
	 * may end in a continuation */
	(void)err;
	(void)rc;
	tu_write_text(*state, "cont", "auth required \\\n  pam_permit.so\n"
		      "account required pam_permit.so \\\n");
	assert_int_equal(txn("cont", 'a'), PAM_SUCCESS);
	assert_int_equal(txn("cont", 'm'), PAM_SUCCESS);
	tu_write_text(*state, "cont", "auth required \\\n# c\n\n"
		      "  pam_permit.so\n");
	assert_int_equal(txn("cont", 'a'), 1000 + PAM_SYSTEM_ERR);
#else
	/* read as libpam reads it: a comment line inside a continued line is
	 * skipped up to 1.5, ends the line (which has no module then) from
	 * 1.6; a file that ends in a continuation is refused */
	tu_write_text(*state, "cont", "auth required \\\n# c\n\n"
		      "  pam_permit.so\n");
	assert_int_equal(txn("cont", 'a'),
			 lp16() ? PAM_PERM_DENIED : PAM_SUCCESS);
	tu_write_text(*state, "cont", "auth required pam_permit.so \\\n");
	tu_stderr_begin();
	rc = txn("cont", 'a');
	err = tu_stderr_end();
	assert_int_equal(rc, 1000 + PAM_ABORT);
	assert_non_null(strstr(err, "ends in a continued line"));
	free(err);
#endif
#if defined(PWRAP_OPENPAM)
	/* OpenPAM keeps the name's case: no file "PERMIT", no "other" */
	assert_int_equal(txn("PERMIT", 'a'), 1000 + PAM_ABORT);
#else
	/* libpam lowercases and keeps the part after the last '/' */
	assert_int_equal(txn("PERMIT", 'a'), PAM_SUCCESS);
	assert_int_equal(txn("/usr/sbin/permit", 'a'), PAM_SUCCESS);
#endif
}

/* Bareos sets a relative PAM_WRAPPER_SERVICE_DIR: relative to the cwd. */
static void test_relative_service_dir(void **state)
{
	char *dir = *state;
	char *slash = strrchr(dir, '/');
	char *parent = strndup(dir, (size_t)(slash - dir));
	char cwd[4096];

	tu_write_text(dir, "rel", "auth required pam_permit.so\n");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(parent), 0);
	setenv("PAM_WRAPPER_SERVICE_DIR", slash + 1, 1);
	assert_int_equal(txn("rel", 'a'), PAM_SUCCESS);
	assert_int_equal(chdir(cwd), 0);
	free(parent);
}

/* A relative PAM_WRAPPER_SERVICE_DIR is resolved when the value is first
 * seen: a daemon's chdir("/") afterwards does not lose it.  A new value is
 * resolved again, against the directory of that moment. */
static void test_relative_service_dir_after_chdir(void **state)
{
	char *dir = *state;
	char *slash = strrchr(dir, '/');
	char *parent = strndup(dir, (size_t)(slash - dir));
	char cwd[4096];

	tu_write_text(dir, "rel", "auth required pam_permit.so\n");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(parent), 0);
	setenv("PAM_WRAPPER_SERVICE_DIR", slash + 1, 1);
	assert_int_equal(txn("rel", 'a'), PAM_SUCCESS);
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(txn("rel", 'a'), PAM_SUCCESS);
	/* a changed value is resolved against the new working directory */
	setenv("PAM_WRAPPER_SERVICE_DIR", "tmp", 1);
	assert_int_equal(txn("rel", 'a'), 1000 + PAM_ABORT);
	assert_int_equal(chdir(cwd), 0);
	free(parent);
}

/* PAM_WRAPPER_SERVICE_DIR may name one service file, relative too (Bareos'
 * system tests): that file is the service of its name, and only it. */
static void test_single_file_service_dir(void **state)
{
	char *dir = *state;
	char cwd[4096];

	tu_write_text(dir, "bareos", "auth required pam_permit.so\n");
	tu_write_text(dir, "sibling", "auth required pam_permit.so\n");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	setenv("PAM_WRAPPER_SERVICE_DIR", "bareos", 1);
	assert_int_equal(txn("bareos", 'a'), PAM_SUCCESS);
#if !defined(PWRAP_OPENPAM)	/* (OpenPAM keeps the case) */
	assert_int_equal(txn("BAREOS", 'a'), PAM_SUCCESS);  /* lowercased */
#endif
	assert_int_equal(txn("sibling", 'a'), 1000 + PAM_ABORT);
	assert_int_equal(txn("other", 'a'), 1000 + PAM_ABORT);
	/* the file is read again when it changes */
	tu_write_text(dir, "bareos", "auth required pam_deny.so\n");
	assert_int_equal(txn("bareos", 'a'), PAM_AUTH_ERR);
	assert_int_equal(chdir(cwd), 0);
}

/* libpam opens <confdir>/<name> for a name set with pam_set_item: one that
 * could leave the service directory is refused, and nothing is opened. */
static void test_set_item_service_outside_refused(void **state)
{
	static const char *const bad[] = { "/etc/pam.d/login",
					   "../../../../etc/pam.d/login",
					   "sub/x", "..", ".", "" };
	struct pam_conv c = { tu_conv_password, NULL };
	pam_handle_t *ph = NULL;

	tu_write_text(*state, "permit", "auth required pam_permit.so\n");
	assert_int_equal(pam_start("permit", "u", &c, &ph), PAM_SUCCESS);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *err;
		const void *now = NULL;

		tu_stderr_begin();
		assert_int_equal(pam_set_item(ph, PAM_SERVICE, bad[i]),
				 PAM_BAD_ITEM);
		err = tu_stderr_end();
		assert_non_null(strstr(err, "refused: a service name is a file "
					    "name"));
		free(err);
		/* the handle keeps its service */
		assert_int_equal(pam_get_item(ph, PAM_SERVICE, &now),
				 PAM_SUCCESS);
		assert_string_equal(now, "permit");
	}
	assert_int_equal(pam_authenticate(ph, 0), PAM_SUCCESS);
	pam_end(ph, PAM_SUCCESS);
}

static void test_other_fallback(void **state)
{
	tu_write_text(*state, "other", "auth required pam_permit.so\n");
	assert_int_equal(txn("pwrap-unknown-service", 'a'), PAM_SUCCESS);
	tu_write_text(*state, "other", "auth required pam_deny.so\n");
	assert_int_equal(txn("pwrap-unknown-service", 'a'), PAM_AUTH_ERR);
}

static void test_no_service_no_other(void **state)
{
	char *err;
	int rc;

	tu_stderr_begin();
	rc = txn("pwrap-unknown-service", 'a');
	err = tu_stderr_end();
	assert_int_equal(rc, 1000 + PAM_ABORT);
	assert_non_null(strstr(err, "PWRAP_ERROR["));
	assert_non_null(strstr(err, "pwrap-unknown-service"));
	assert_non_null(strstr(err, (char *)*state));
	free(err);
}

/* Relative include/substack/@include resolve in our dir, not /etc/pam.d
 * (whose common-* use pam_unix, which fails for a user that does not exist). */
static void test_include_resolution(void **state)
{
	tu_write_text(*state, "inc", "auth include common-auth\n"
#if defined(PWRAP_OPENPAM)	/* include is OpenPAM's only way */
		      "account include common-account\n"
		      "session include common-session\n");
#else
		      "account substack common-account\n"
#endif
#if defined(PWRAP_OPENPAM)
#elif defined(PWRAP_LIBPAM_AT_INCLUDE)
		      "@include common-session\n");
#else	/* a libpam without "@include" (upstream Linux-PAM 1.3) */
		      "session include common-session\n");
#endif
	tu_write_text(*state, "common-auth", "auth required pam_permit.so\n");
	tu_write_text(*state, "common-account",
		      "account required pam_permit.so\n");
	tu_write_text(*state, "common-session",
		      "session required pam_permit.so\n");
	assert_int_equal(txn("inc", 'a'), PAM_SUCCESS);
	assert_int_equal(txn("inc", 'm'), PAM_SUCCESS);
	assert_int_equal(txn("inc", 's'), PAM_SUCCESS);
#if defined(PWRAP_LIBPAM_AT_INCLUDE) && !defined(PWRAP_OPENPAM)
	/* "-@include" is an @include to libpam as well */
	tu_write_text(*state, "dash-inc", "-@include common-auth\n");
	assert_int_equal(txn("dash-inc", 'a'), PAM_SUCCESS);
#endif
	/* an edited include is picked up */
	tu_write_text(*state, "common-auth", "auth required pam_deny.so\n");
	assert_int_equal(txn("inc", 'a'), PAM_AUTH_ERR);
#if defined(PWRAP_LIBPAM_AT_INCLUDE) && !defined(PWRAP_OPENPAM)
	assert_int_equal(txn("dash-inc", 'a'), PAM_AUTH_ERR);
#endif
}

static void test_nested_and_absolute_include(void **state)
{
	char *abs = NULL;
	char *svc = NULL;
	char *err, *cyc;

	tu_write_text(*state, "level2", "auth required pam_permit.so\n");
	tu_write_text(*state, "level1", "auth include level2\n");
#if defined(PWRAP_OPENPAM)
	/* OpenPAM refuses an include target with a '/' itself: nested
	 * includes by name only */
	assert_true(asprintf(&abs, "level1") > 0);
#else
	assert_true(asprintf(&abs, "%s/level1", (char *)*state) > 0);
#endif
	assert_true(asprintf(&svc, "auth \\\n  include %s # absolute\n",
			     abs) > 0);
	tu_write_text(*state, "nested", svc);
	assert_int_equal(txn("nested", 'a'), PAM_SUCCESS);
	tu_write_text(*state, "level2", "auth required pam_deny.so\n");
	assert_int_equal(txn("nested", 'a'), PAM_AUTH_ERR);
	/* an include cycle neither hangs nor crashes: pam_start refuses it,
	 * naming the user's file (not the runtime directory's copy); from
	 * Linux-PAM 1.6 libpam stops it at 16 levels, failing that line, and
	 * the wrapper follows */
	tu_write_text(*state, "cycle", "auth include cycle2\n");
#if defined(PWRAP_OPENPAM)	/* (its keywords are lower case) */
	tu_write_text(*state, "cycle2", "auth include cycle\n");
#else
	tu_write_text(*state, "cycle2", "auth Include cycle\n");
#endif
	if (lp16()) {
		assert_int_equal(txn("cycle", 'a'), PAM_PERM_DENIED);
		free(abs);
		free(svc);
		return;
	}
	tu_stderr_begin();
	assert_int_equal(txn("cycle", 'a'), 1000 + PAM_ABORT);
	err = tu_stderr_end();
	cyc = tu_path(*state, "cycle");
	assert_non_null(strstr(err, cyc));
	assert_non_null(strstr(err, "include cycle"));
	assert_null(strstr(err, getenv("PAM_WRAPPER_RUNTIME_DIR")));
	free(err);
	free(cyc);
	free(abs);
	free(svc);
}

/* libpam reads a file included by an "account" line for account only: an
 * "auth" include there without a target (libpam crashes on it when it
 * reads it) or an "auth" include of the file itself (endless recursion when
 * read) are lines libpam skips, so the service works; the same file
 * included for auth is refused, naming the file and line. */
static void test_include_read_for_one_stack(void **state)
{
	char *err, *where;

	tu_write_text(*state, "acct-only", "auth include\n"
		      "auth include acct-only\n"
		      "account required pam_permit.so\n");
	tu_write_text(*state, "typed", "account include acct-only\n");
	assert_int_equal(txn("typed", 'm'), PAM_SUCCESS);

	tu_write_text(*state, "typed", "account include acct-only\n"
		      "auth include acct-only\n");
#if !defined(PWRAP_OPENPAM)
	if (!R.at_include && lp16()) {
		/* upstream 1.6 and later: an include without a target fails
		 * its line, a cycle stops at 16 levels; nothing to refuse */
		assert_int_equal(txn("typed", 'm'), PAM_SUCCESS);
		assert_int_equal(txn("acct-only", 'm'), PAM_SUCCESS);
		goto too_long;
	}
#endif
	tu_stderr_begin();
	assert_int_equal(txn("typed", 'm'), 1000 + PAM_ABORT);
	err = tu_stderr_end();
	where = tu_path(*state, "acct-only:1:");
#if defined(PWRAP_OPENPAM)
	/* (OpenPAM refuses an include without a target itself: only the
	 * cycle, on which it would recurse until it crashes, is ours) */
	(void)where;
#else
	/* Debian's libpam crashes on line 1, the wrapper refuses it; upstream
	 * libpam fails that line, and the wrapper lets it */
	if (R.at_include) {
		assert_non_null(strstr(err, where));
		assert_non_null(strstr(err, "include without a target"));
	}
#endif
	if (!lp16()) {
		assert_non_null(strstr(err, "include cycle"));	/* line 2 */
	}
	free(err);
	free(where);

	/* as a service of its own (read for every stack) it is refused */
	tu_stderr_begin();
	assert_int_equal(txn("acct-only", 'm'), 1000 + PAM_ABORT);
	err = tu_stderr_end();
#if defined(PWRAP_OPENPAM)
	assert_non_null(strstr(err, "include cycle"));
#else
	/* Debian's: line 1 (libpam crashes); upstream's up to 1.5: line 2 */
	assert_non_null(strstr(err, R.at_include ? "include without a target"
						 : "include cycle"));
#endif
	free(err);
#if !defined(PWRAP_OPENPAM)
too_long:
#endif

#if !defined(PWRAP_OPENPAM)	/* (OpenPAM's targets stay names) */
	/* the same rule for an include line that the resolved target would
	 * make too long for libpam's line buffer (1000 bytes as written) */
	{
		char line[1100];

		snprintf(line, sizeof(line), "auth include common-x %0978d\n"
			 "account required pam_permit.so\n", 0);
		tu_write_text(*state, "acct-long", line);
	}
	tu_write_text(*state, "typed", "account include acct-long\n");
	assert_int_equal(txn("typed", 'm'), PAM_SUCCESS);
	tu_write_text(*state, "typed", "auth include acct-long\n");
	if (lp16()) {
		/* no line buffer from 1.6: common-x, missing, fails auth */
		assert_int_equal(txn("typed", 'a'), PAM_PERM_DENIED);
		return;
	}
	tu_stderr_begin();
	assert_int_equal(txn("typed", 'a'), 1000 + PAM_ABORT);
	err = tu_stderr_end();
	assert_non_null(strstr(err, "shorten the line"));
	free(err);
#endif
}

static void test_include_missing(void **state)
{
	char *err;
	int rc;

	tu_write_text(*state, "inc", "auth include common-auth\n");
	tu_stderr_begin();
	rc = txn("inc", 'a');
	err = tu_stderr_end();
	/* never silently /etc/pam.d/common-auth */
	assert_int_not_equal(rc, PAM_SUCCESS);
	assert_non_null(strstr(err, "include target 'common-auth' not found"));
	free(err);
}

/* Include targets (by name, in the service directory) that are not
 * regular files, answered as libpam answers them: a directory is read as
 * empty (OpenPAM: fails as a missing one); a FIFO, on which libpam would block in pam_start, is refused; a
 * file libpam cannot read fails the line's stack as a missing one does
 * (as root it is read). */
static void test_include_targets_not_files(void **state)
{
	char *path, *err;
	int missing;

	tu_write_text(*state, "inc", "auth include nothing\n"
		      "auth required pam_permit.so\n");
	missing = txn("inc", 'a');
	assert_int_not_equal(missing, PAM_SUCCESS);

	free(tu_subdir(*state, "sub"));
	tu_write_text(*state, "inc", "auth include sub\n"
		      "auth required pam_permit.so\n");
#if defined(PWRAP_OPENPAM)
	/* OpenPAM fails reading a directory: as a missing target */
	assert_int_equal(txn("inc", 'a'), missing);
#else
	assert_int_equal(txn("inc", 'a'), PAM_SUCCESS);
#endif

	path = tu_path(*state, "fifo");
	assert_int_equal(mkfifo(path, 0644), 0);
	free(path);
	tu_write_text(*state, "inc", "auth include fifo\n"
		      "auth required pam_permit.so\n");
	tu_stderr_begin();
	assert_int_equal(txn("inc", 'a'), 1000 + PAM_ABORT);
	err = tu_stderr_end();
	assert_non_null(strstr(err, "include target 'fifo'"));
	assert_non_null(strstr(err, "not a file"));
	free(err);

	tu_write_text(*state, "secret", "auth required pam_permit.so\n");
	path = tu_path(*state, "secret");
	assert_int_equal(chmod(path, 0), 0);
	free(path);
	tu_write_text(*state, "inc", "auth include secret\n"
		      "auth required pam_permit.so\n");
	tu_stderr_begin();
	if (geteuid() == 0) {
		assert_int_equal(txn("inc", 'a'), PAM_SUCCESS);
	} else {
		assert_int_equal(txn("inc", 'a'), missing);
	}
	err = tu_stderr_end();
	if (geteuid() != 0 &&
	    strstr(err, "include target 'secret'") == NULL) {
		fail_msg("no message naming the unreadable target:\n%s", err);
	}
	free(err);
}

static void test_env_changed_at_runtime(void **state)
{
	char *other = tu_mkdtemp("pwrap-test");

	tu_write_text(*state, "svc", "auth required pam_permit.so\n");
	tu_write_text(other, "svc", "auth required pam_deny.so\n");
	assert_int_equal(txn("svc", 'a'), PAM_SUCCESS);
	setenv("PAM_WRAPPER_SERVICE_DIR", other, 1);
	assert_int_equal(txn("svc", 'a'), PAM_AUTH_ERR);
	setenv("PAM_WRAPPER_SERVICE_DIR", *state, 1);
	assert_int_equal(txn("svc", 'a'), PAM_SUCCESS);
	/* same size, rewritten in place: still noticed */
	tu_write_text(*state, "svc", "auth required pam_deny.so  \n");
	assert_int_equal(txn("svc", 'a'), PAM_AUTH_ERR);
	/* a file that appears later is found; one removed is gone */
	tu_write_text(*state, "late", "auth required pam_permit.so\n");
	assert_int_equal(txn("late", 'a'), PAM_SUCCESS);
	tu_unlink_at(*state, "late");
	assert_int_equal(txn("late", 'a'), 1000 + PAM_ABORT);
	tu_rmtree(other);
	free(other);
}

static void test_missing_dir(void **state)
{
	struct pam_conv c = { tu_conv_password, NULL };
	pam_handle_t *ph = (pam_handle_t *)&c;	/* must be reset to NULL */
	char *err;
	int rc;

	(void)state;
	setenv("PAM_WRAPPER_SERVICE_DIR", "/nonexistent/pwrap-dir", 1);
	tu_stderr_begin();
	rc = pam_start("svc", "u", &c, &ph);
	err = tu_stderr_end();
	assert_int_equal(rc, PAM_ABORT);
	assert_null(ph);
	assert_non_null(strstr(err, "PWRAP_ERROR["));
	assert_non_null(strstr(err, "/nonexistent/pwrap-dir"));
	free(err);

	unsetenv("PAM_WRAPPER_SERVICE_DIR");
	tu_stderr_begin();
	rc = pam_start("svc", "u", &c, &ph);
	err = tu_stderr_end();
	assert_int_equal(rc, PAM_ABORT);
	assert_non_null(strstr(err, "PAM_WRAPPER_SERVICE_DIR is not set"));
	free(err);

	/* a file is the one service of its name (as upstream): any other
	 * name is refused, naming the file */
	setenv("PAM_WRAPPER_SERVICE_DIR", "/etc/passwd", 1);
	tu_stderr_begin();
	rc = pam_start("svc", "u", &c, &ph);
	err = tu_stderr_end();
	assert_int_equal(rc, PAM_ABORT);
	assert_non_null(strstr(err, "no service file 'svc' and no 'other' in "
				    "/etc/passwd"));
	free(err);

	/* neither a directory nor a regular file */
	setenv("PAM_WRAPPER_SERVICE_DIR", "/dev/null", 1);
	tu_stderr_begin();
	rc = pam_start("svc", "u", &c, &ph);
	err = tu_stderr_end();
	assert_int_equal(rc, PAM_ABORT);
	assert_non_null(strstr(err, "/dev/null: not a directory or a service "
				    "file"));
	free(err);
}

static void test_disabled_passthrough(void **state)
{
	int (*enabled)(void) = (int (*)(void))dlsym(RTLD_DEFAULT,
						     "pam_wrapper_enabled");

	tu_write_text(*state, "pwrap-passthrough",
		      "auth required pam_permit.so\n");
	assert_non_null(enabled);
	assert_int_equal(enabled(), 1);
	assert_int_equal(txn("pwrap-passthrough", 'a'), PAM_SUCCESS);
	/* "0", or anything not starting with '1', is off: /etc/pam.d/other
	 * (pam_unix or pam_deny) refuses a user that does not exist */
	setenv("PAM_WRAPPER", "0", 1);
	assert_int_equal(enabled(), 0);
	assert_int_not_equal(txn("pwrap-passthrough", 'a'), PAM_SUCCESS);
	unsetenv("PAM_WRAPPER");
	assert_int_equal(enabled(), 0);
	assert_int_not_equal(txn("pwrap-passthrough", 'a'), PAM_SUCCESS);
	setenv("PAM_WRAPPER", "1", 1);
	assert_int_equal(txn("pwrap-passthrough", 'a'), PAM_SUCCESS);
}

static void test_audit_open(void **state)
{
	int (*ao)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "audit_open");

	(void)state;
	assert_non_null(ao);
	errno = 0;
	assert_int_equal(ao(), -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	/* libpam's audit calls during a transaction started wrapped are
	 * answered as wrapped, even if the environment changed since */
	tu_write_text(*state, "permit", "auth required pam_permit.so\n");
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
	setenv("PAM_WRAPPER", "0", 1);
	errno = 0;
	assert_int_equal(ao(), -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	setenv("PAM_WRAPPER", "1", 1);
}

static void test_set_item_service_reload(void **state)
{
	struct pam_conv c = { tu_conv_password, NULL };
	pam_handle_t *ph = NULL;

	tu_write_text(*state, "first", "auth required pam_permit.so\n");
	tu_write_text(*state, "second", "auth required pam_deny.so\n");
	assert_int_equal(pam_start("first", "u", &c, &ph), PAM_SUCCESS);
#if defined(PWRAP_OPENPAM)
	/* OpenPAM sets PAM_SERVICE once: the stack stays "first"'s */
	assert_int_equal(pam_set_item(ph, PAM_SERVICE, "second"), PAM_BAD_ITEM);
	assert_int_equal(pam_authenticate(ph, 0), PAM_SUCCESS);
#else
	assert_int_equal(pam_set_item(ph, PAM_SERVICE, "second"), PAM_SUCCESS);
	assert_int_equal(pam_authenticate(ph, 0), PAM_AUTH_ERR);
#endif
	pam_end(ph, PAM_SUCCESS);
}

static void test_app_confdir(void **state)
{
#if !defined(PWRAP_HAVE_PAM_START_CONFDIR)
	(void)state;
	TU_SKIP("this libpam has no pam_start_confdir to call");
#else
	struct pam_conv c = { tu_conv_password, NULL };
	pam_handle_t *ph = NULL;
	char *mine = tu_mkdtemp("pwrap-test");

	/* PAM_WRAPPER_SERVICE_DIR says deny; the app's own confdir wins */
	tu_write_text(*state, "app", "auth required pam_deny.so\n");
	tu_write_text(mine, "app", "auth include common-auth\n");
	tu_write_text(mine, "common-auth", "auth required pam_permit.so\n");
	assert_int_equal(pam_start_confdir("app", "u", &c, mine, &ph),
			 PAM_SUCCESS);
	assert_int_equal(pam_authenticate(ph, 0), PAM_SUCCESS);
	pam_end(ph, PAM_SUCCESS);
	assert_int_equal(txn("app", 'a'), PAM_AUTH_ERR);
	tu_rmtree(mine);
	free(mine);
#endif
}

static void test_module_name_resolution(void **state)
{
	char *svc = NULL;
	char *passdb = NULL;

	/* pam_matrix.so is not in the system module dir: it must resolve to
	 * the build tree's lib/pam_wrapper/ */
	assert_true(asprintf(&passdb, "%s/passdb", (char *)*state) > 0);
	tu_write_text(*state, "passdb", "alice:secret:matrix\n");
	assert_true(asprintf(&svc, "auth required pam_matrix.so passdb=%s\n"
			     "account required pam_matrix.so passdb=%s\n",
			     passdb, passdb) > 0);
	tu_write_text(*state, "matrix", svc);
	assert_int_equal(txn_pw("matrix", "alice", 'a', "secret"), PAM_SUCCESS);
	assert_int_equal(txn_pw("matrix", "alice", 'a', "wrong"), PAM_AUTH_ERR);
	assert_int_equal(txn_pw("matrix", "alice", 'm', NULL), PAM_SUCCESS);
	free(svc);
	free(passdb);
}

/* Stock modules named bare are those of the libpam this process loaded,
 * however that libpam was built: OpenPAM installed into a prefix searches
 * only its compiled-in path (/usr/lib:/usr/local/lib), where they are not.
 * OpenPAM also accepts a name without ".so". */
static void test_stock_modules_by_bare_name(void **state)
{
	char *err;

	tu_write_text(*state, "stock", "auth required pam_permit.so\n"
		      "account required pam_deny.so\n");
	tu_stderr_begin();
	assert_int_equal(txn("stock", 'a'), PAM_SUCCESS);
	assert_int_equal(txn("stock", 'm'), PAM_AUTH_ERR);
	err = tu_stderr_end();
	assert_null(strstr(err, "not found"));
	free(err);
#if defined(PWRAP_OPENPAM)
	tu_write_text(*state, "stock", "auth required pam_permit\n"
		      "account required pam_deny\n");
	assert_int_equal(txn("stock", 'a'), PAM_SUCCESS);
	assert_int_equal(txn("stock", 'm'), PAM_AUTH_ERR);
#endif
}

/* A module found nowhere (a typo) is reported at the default level, with
 * the file and line, and the directories searched; a "-type" line (libpam
 * stays silent about its missing module) only at the warning level. */
static void test_module_not_found_reported(void **state)
{
	const char *sys = getenv("PWRAP_SYSTEM_MODULE_DIR");
	const char *ours = getenv("PWRAP_MODULE_DIR");
	char *err, *where;

	assert_non_null(sys);
	assert_non_null(ours);
	tu_write_text(*state, "typo", "auth required pam_permit.so\n"
		      "auth required pam_matrx.so\n");
	tu_stderr_begin();
	assert_int_not_equal(txn("typo", 'a'), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_true(asprintf(&where, "%s/typo:2: module pam_matrx.so not "
			     "found", (char *)*state) > 0);
	if (strstr(err, "PWRAP_ERROR") == NULL ||
	    strstr(err, where) == NULL || strstr(err, sys) == NULL ||
	    strstr(err, ours) == NULL) {
		fail_msg("expected an error naming %s, %s and %s, got:\n%s",
			 where, sys, ours, err);
	}
	free(where);
	free(err);
#if !defined(PWRAP_OPENPAM)
	tu_write_text(*state, "typo", "auth required pam_permit.so\n"
		      "-auth optional pam_matrx.so\n");
	tu_stderr_begin();
	assert_int_equal(txn("typo", 'a'), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_null(strstr(err, "pam_matrx.so"));
	free(err);
	setenv("PAM_WRAPPER_DEBUGLEVEL", "1", 1);
	tu_write_text(*state, "typo", "auth required pam_permit.so\n"
		      "-auth optional pam_matrx.so\n\n");
	tu_stderr_begin();
	assert_int_equal(txn("typo", 'a'), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_non_null(strstr(err, "PWRAP_WARN"));
	assert_non_null(strstr(err, "module pam_matrx.so not found"));
	free(err);
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
#endif
}

/* Module pam_syslog() lines, level filter and PAM_WRAPPER_USE_SYSLOG, with
 * a stack of module (of ours, on every implementation, or Linux-PAM's
 * pam_warn) that logs one NOTICE line matching `line`. */
static void check_syslog_lines(const char *service, int op, const char *line)
{
	regex_t re;
	char *err;
	char *pattern;

	setenv("PAM_WRAPPER_DEBUGLEVEL", "1", 1);	/* NOTICE is hidden */
	tu_stderr_begin();
	assert_int_equal(txn(service, op), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_null(strstr(err, "SYSLOG("));
	free(err);

	setenv("PAM_WRAPPER_DEBUGLEVEL", "2", 1);
	tu_stderr_begin();
	assert_int_equal(txn(service, op), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_true(asprintf(&pattern, "^PWRAP_DEBUG\\[test_wrapper "
			     "\\([0-9]+\\)\\] - SYSLOG\\(5\\): %s",
			     line) > 0);
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE), 0);
	if (regexec(&re, err, 0, NULL, 0) != 0) {
		fail_msg("no line matching %s in:\n%s", pattern, err);
	}
	regfree(&re);
	free(pattern);
	free(err);

	/* PAM_WRAPPER_USE_SYSLOG=1: to syslog(3), not stderr */
	setenv("PAM_WRAPPER_USE_SYSLOG", "1", 1);
	tu_stderr_begin();
	assert_int_equal(txn(service, op), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_null(strstr(err, "SYSLOG("));
	free(err);
	unsetenv("PAM_WRAPPER_USE_SYSLOG");
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
}

/* The same with our pam_matrix, on every implementation: an unknown user
 * is a NOTICE line; the optional line's failure leaves the stack's
 * result to pam_permit. */
static void test_syslog_lines_own_module(void **state)
{
	char *svc = NULL;

	tu_write_text(*state, "passdb", "alice:secret:matrix\n");
	assert_true(asprintf(&svc, "account optional pam_matrix.so "
			     "passdb=%s/passdb\naccount required "
			     "pam_permit.so\n", (char *)*state) > 0);
	tu_write_text(*state, "matrix", svc);
	free(svc);
	check_syslog_lines("matrix", 'm',
			   ".*unknown user pwrap-no-such-user$");
}

/* A module that logs the password gets it masked, on every
 * implementation: pam_matrix asks for the password (the answer becomes
 * PAM_AUTHTOK) and logs the unknown user's name, which here is the same
 * string. */
static void test_password_never_logged_own_module(void **state)
{
	char *svc = NULL;
	char *err;

	tu_write_text(*state, "passdb", "alice:secret:leak\n");
	assert_true(asprintf(&svc, "auth optional pam_matrix.so passdb=%s/passdb\n"
			     "auth required pam_permit.so\n",
			     (char *)*state) > 0);
	tu_write_text(*state, "leak", svc);
	free(svc);
	setenv("PAM_WRAPPER_DEBUGLEVEL", "3", 1);
	tu_stderr_begin();
	assert_int_equal(txn_pw("leak", "Sup3rS3cret", 'a', "Sup3rS3cret"),
			 PAM_SUCCESS);
	err = tu_stderr_end();
	if (strstr(err, "unknown user ***") == NULL ||
	    strstr(err, "Sup3rS3cret") != NULL) {
		fail_msg("password not masked, or no line to mask:\n%s", err);
	}
	free(err);
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
}

/* The same with Linux-PAM's stock pam_warn (a module not built by us). */
static void test_syslog_lines(void **state)
{
#if defined(PWRAP_OPENPAM)
	(void)state;
	TU_SKIP("pam_warn is Linux-PAM's; test_syslog_lines_own_module runs "
		"the same checks with pam_matrix");
#else
	tu_write_text(*state, "warn", "auth required pam_warn.so\n"
		      "auth required pam_permit.so\n");
	check_syslog_lines("warn", 'a', ".*user=\\[pwrap-no-such-user\\]");
#endif
}

/* A module that logs the password gets it masked (pam_set_items puts
 * $PAM_AUTHTOK into the item; pam_warn logs the user name, which here is
 * the same string). */
static void test_password_never_logged(void **state)
{
	char *err;
#if defined(PWRAP_OPENPAM)
	TU_SKIP("pam_warn is Linux-PAM's; "
		"test_password_never_logged_own_module runs the same checks "
		"with pam_matrix");
#endif

	tu_write_text(*state, "leak", "auth required pam_set_items.so\n"
		      "auth required pam_warn.so\n"
		      "auth required pam_permit.so\n");
	setenv("PAM_AUTHTOK", "Sup3rS3cret", 1);
	setenv("PAM_WRAPPER_DEBUGLEVEL", "3", 1);
	tu_stderr_begin();
	assert_int_equal(txn_pw("leak", "Sup3rS3cret", 'a', NULL), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_non_null(strstr(err, "SYSLOG(5)"));
	assert_non_null(strstr(err, "user=[***]"));
	assert_null(strstr(err, "Sup3rS3cret"));
	free(err);

	/* a token made of the mask's own character must not loop forever */
	setenv("PAM_AUTHTOK", "*", 1);
	tu_stderr_begin();
	assert_int_equal(txn_pw("leak", "*", 'a', NULL), PAM_SUCCESS);
	err = tu_stderr_end();
	assert_non_null(strstr(err, "user=[***]"));
	free(err);
	unsetenv("PAM_AUTHTOK");
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
}

/* A message longer than the old 2 KiB cut, with the password across it and
 * again past the end of a log line: masked whole, then cut (pam_matrix
 * logs "<passdb>: unknown user <user>"). */
static void test_password_masked_before_cut(void **state)
{
	char *passdb = NULL, *svc = NULL, *user, *err;
	size_t pad, len;

	assert_true(asprintf(&passdb, "%s/passdb", (char *)*state) > 0);
	tu_write_text(*state, "passdb", "alice:secret:matrix\n");
	assert_true(asprintf(&svc, "auth required pam_matrix.so passdb=%s\n",
			     passdb) > 0);
	tu_write_text(*state, "matrix", svc);
	pad = 2047 - 4 - strlen(passdb) - strlen(": unknown user ");
	user = malloc(pad + 300 * 16 + 1);
	assert_non_null(user);
	memset(user, 'u', pad);
	len = pad;
	for (int i = 0; i < 300; i++) {
		memcpy(user + len, "Kq8vR2pLuuuuuuuu", 16);
		len += 16;
	}
	user[len] = '\0';
	setenv("PAM_WRAPPER_DEBUGLEVEL", "2", 1);
	tu_stderr_begin();
	assert_int_equal(txn_pw("matrix", user, 'a', "Kq8vR2pL"), PAM_AUTH_ERR);
	err = tu_stderr_end();
	assert_null(strstr(err, "Kq8"));
	assert_non_null(strstr(err, "uuu***uuu"));
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	free(err);
	free(user);
	free(svc);
	free(passdb);
}

struct thr {
	int ok;
};

/* Threads that ask for a service nobody has (with no "other" either). */
static void *unknown_main(void *arg)
{
	struct thr *t = arg;

	for (int i = 0; i < 60; i++) {
		t->ok += txn("pwrap-nobody-has-it", 'a') == 1000 + PAM_ABORT;
	}
	return NULL;
}

static void *permit_main(void *arg)
{
	struct thr *t = arg;

	for (int i = 0; i < 60; i++) {
		t->ok += txn("permit", 'a') == PAM_SUCCESS;
	}
	return NULL;
}

/* pam_start from many threads at once is correct and quiet: one thread's
 * refused unknown service never takes "other" away from another thread's
 * libpam while it reads it ("no default config other"). */
static void test_threads_unknown_and_known(void **state)
{
	pthread_t th[6];
	struct thr t[6];
	char *err;

	tu_write_text(*state, "permit", "auth required pam_permit.so\n");
	tu_stderr_begin();
	for (int i = 0; i < 6; i++) {
		t[i].ok = 0;
		assert_int_equal(pthread_create(&th[i], NULL,
						i % 2 ? unknown_main : permit_main,
						&t[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		pthread_join(th[i], NULL);
	}
	err = tu_stderr_end();
	for (int i = 0; i < 6; i++) {
		assert_int_equal(t[i].ok, 60);
	}
	assert_null(strstr(err, "no default config"));
	assert_null(strstr(err, "SYSLOG"));	/* libpam said nothing */
	free(err);
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < 40; i++) {
		if (txn("permit", 'a') == PAM_SUCCESS &&
		    txn("deny", 'a') == PAM_AUTH_ERR) {
			t->ok++;
		}
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t th[8];
	struct thr t[8];
	int i;

	tu_write_text(*state, "permit", "auth required pam_permit.so\n");
	tu_write_text(*state, "deny", "auth required pam_deny.so\n");
	for (i = 0; i < 8; i++) {
		t[i].ok = 0;
		assert_int_equal(pthread_create(&th[i], NULL, thread_main, &t[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].ok, 40);
	}
}

static volatile sig_atomic_t sigchld_seen;
static volatile pid_t sigchld_pid;

static void on_sigchld(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	sigchld_seen++;
	sigchld_pid = si->si_pid;
}

/* The wrapper starts no process: making a runtime directory (here: again,
 * after removing the first) sends no SIGCHLD and leaves nothing for
 * wait(-1), which daemons call on any SIGCHLD. */
static void test_no_process_started(void **state)
{
	struct sigaction sa = { .sa_sigaction = on_sigchld,
				.sa_flags = SA_SIGINFO };
	struct sigaction old;
	char *top;
	int st;

	tu_write_text(*state, "permit", "auth required pam_permit.so\n");
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
	top = strdup(getenv("PAM_WRAPPER_RUNTIME_DIR"));
	assert_non_null(top);
	*strrchr(top, '/') = '\0';
	tu_rmtree(top);	/* (runs rm: before the handler is in place) */
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGCHLD, &sa, &old), 0);
	sigchld_seen = 0;
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
	/* a new directory */
	assert_int_not_equal(strncmp(getenv("PAM_WRAPPER_RUNTIME_DIR"), top,
				     strlen(top)), 0);
	usleep(100000);
	if (sigchld_seen != 0) {
		fail_msg("SIGCHLD from pid %ld", (long)sigchld_pid);
	}
	assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	assert_int_equal(sigaction(SIGCHLD, &old, NULL), 0);
	free(top);
}

/* A program that is a child subreaper (or PID 1) would inherit any process
 * the wrapper left running: wait(-1) still finds no child. */
static void test_subreaper_inherits_nothing(void **state)
{
	char *top;
	int st;

	tu_write_text(*state, "permit", "auth required pam_permit.so\n");
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
	top = strdup(getenv("PAM_WRAPPER_RUNTIME_DIR"));
	assert_non_null(top);
	*strrchr(top, '/') = '\0';
	tu_rmtree(top);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
	usleep(100000);
	assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
	free(top);
}

static void test_fork(void **state)
{
	pid_t pid;
	int st;

	tu_write_text(*state, "permit", "auth required pam_permit.so\n");
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		_exit(txn("permit", 'a') == PAM_SUCCESS ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* the parent's directory survived the child */
	assert_int_equal(txn("permit", 'a'), PAM_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_dir_before_first_start),
#define T(f) \
	cmocka_unit_test_setup_teardown(f, setup_dir, tu_teardown_tmpdir)
		T(test_runtime_dir_on_demand),
		T(test_runtime_dir_written_by_test),
		T(test_redirect),
		T(test_relative_service_dir),
		T(test_relative_service_dir_after_chdir),
		T(test_single_file_service_dir),
		T(test_set_item_service_outside_refused),
		T(test_other_fallback),
		T(test_no_service_no_other),
		T(test_include_resolution),
		T(test_nested_and_absolute_include),
		T(test_include_missing),
		T(test_include_targets_not_files),
		T(test_include_read_for_one_stack),
		T(test_env_changed_at_runtime),
		T(test_missing_dir),
		T(test_disabled_passthrough),
		T(test_audit_open),
		T(test_set_item_service_reload),
		T(test_app_confdir),
		T(test_module_name_resolution),
		T(test_stock_modules_by_bare_name),
		T(test_module_not_found_reported),
		T(test_syslog_lines),
		T(test_syslog_lines_own_module),
		T(test_password_never_logged),
		T(test_password_masked_before_cut),
		T(test_password_never_logged_own_module),
		T(test_threads),
		T(test_threads_unknown_and_known),
		T(test_no_process_started),
		T(test_subreaper_inherits_nothing),
		T(test_fork),
#undef T
	};

	pamconf_rules_linked(&R);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
