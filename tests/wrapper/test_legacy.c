/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The legacy path (libpam without pam_start_confdir, or a build with
 * PAM_WRAPPER_FORCE_LEGACY=ON): libpam's own fopen calls of pam.d files
 * must be answered from the prepared directory, and nothing of the system's
 * configuration may be read; everyone else's fopen calls are untouched.
 * This binary runs preloaded (see CMakeLists.txt); PWRAP_EXPECT_LEGACY says
 * whether this build takes the legacy path, and the first test checks that
 * it really does (or really does not), so the others prove what they claim.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <security/pam_appl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

/* pam_start + pam_authenticate + pam_end with the trace captured in *log
 * (malloc'd); the authentication's code, or 1000 + pam_start's. */
static int auth_logged(const char *service, const char *pw, char **log)
{
	struct pam_conv c = { tu_conv_password, (void *)pw };
	pam_handle_t *ph = NULL;
	int rc;

	setenv("PAM_WRAPPER_DEBUGLEVEL", "3", 1);
	tu_stderr_begin();
	rc = pam_start(service, "alice", &c, &ph);
	if (rc == PAM_SUCCESS) {
		rc = pam_authenticate(ph, 0);
		pam_end(ph, rc);
	} else {
		rc += 1000;
	}
	*log = tu_stderr_end();
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	return rc;
}

/* A service dir with "app" and "other", both pam_matrix over one passdb
 * that knows alice only for the service named svc. */
static int setup(void **state)
{
	char *dir = tu_mkdtemp("pwrap-test");
	char *passdb = tu_path(dir, "passdb");
	char line[4200];

	snprintf(line, sizeof(line),
		 "auth required pam_matrix.so passdb=%s\n"
		 "account required pam_matrix.so passdb=%s\n", passdb, passdb);
	tu_write_text(dir, "app", line);
	tu_write_text(dir, "other", line);
	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);
	free(passdb);
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	tu_rmtree(*state);
	free(*state);
	return 0;
}

static void set_passdb(void **state, const char *svc)
{
	char line[256];

	snprintf(line, sizeof(line), "alice:secret:%s\n", svc);
	tu_write_text(*state, "passdb", line);
}

/* The build takes the path it says it takes. */
static void path_taken(void **state)
{
	char *log = NULL;

	set_passdb(state, "app");
	assert_int_equal(auth_logged("app", "secret", &log), PAM_SUCCESS);
#if defined(PWRAP_EXPECT_LEGACY)
	assert_non_null(strstr(log, "pam_start(app) on the legacy path = 0"));
	assert_non_null(strstr(log, "libpam opens /etc/pam.d/app: "));
	assert_null(strstr(log, "pam_start_confdir("));
#else
	assert_non_null(strstr(log, "pam_start_confdir(app, "));
	assert_null(strstr(log, "libpam opens"));
#endif
	free(log);
}

/* A name of the system's /etc/pam.d that the service dir does not have. */
static char *system_service(void)
{
	DIR *d = opendir("/etc/pam.d");
	struct dirent *de;
	char *name = NULL;

	if (d == NULL) {
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.' && strcmp(de->d_name, "other") != 0 &&
		    strcmp(de->d_name, "app") != 0 &&
		    strpbrk(de->d_name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == NULL) {
			name = strdup(de->d_name);
			break;
		}
	}
	closedir(d);
	return name;
}

/* A service the system has but the test setup does not: the setup's
 * "other" decides (alice's passdb line names that service), the system's
 * file is never opened, and neither is the vendor directory's. */
static void system_file_not_read(void **state)
{
	char *svc = system_service();
	char *log = NULL;
	char want[512];

	if (svc == NULL) {
		TU_SKIP("no service file in /etc/pam.d on this system");
	}
	set_passdb(state, svc);
	assert_int_equal(auth_logged(svc, "secret", &log), PAM_SUCCESS);
	free(log);
	assert_int_equal(auth_logged(svc, "wrong", &log), PAM_AUTH_ERR);
#if defined(PWRAP_EXPECT_LEGACY)
	snprintf(want, sizeof(want), "libpam opens /etc/pam.d/%s: ", svc);
	assert_non_null(strstr(log, want));
	snprintf(want, sizeof(want), "conf/%s (none)", svc);
	assert_non_null(strstr(log, want));
	assert_non_null(strstr(log, "libpam opens /etc/pam.d/other: "));
#else
	(void)want;
#endif
	free(log);
	free(svc);
}

/* The program's own fopen of a system PAM file is not redirected (only
 * libpam's are), before and after a transaction. */
static void own_fopen_untouched(void **state)
{
	char *log = NULL;
	char buf[4096];
	size_t n;
	FILE *f;
	struct stat st;

	if (stat("/etc/pam.d/other", &st) != 0) {
		TU_SKIP("no /etc/pam.d/other on this system to fopen");
	}
	set_passdb(state, "app");
	assert_int_equal(auth_logged("app", "secret", &log), PAM_SUCCESS);
	free(log);
	f = fopen("/etc/pam.d/other", "r");
	assert_non_null(f);
	/* the system's file, not the setup's copy (which starts "auth") */
	assert_int_equal(fstat(fileno(f), &st) == 0 && st.st_uid == 0, 1);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_null(strstr(buf, "pam_matrix.so passdb="));
}

/* pam_set_item(PAM_SERVICE) makes libpam reload the stack for the new
 * name later, inside pam_authenticate: still from the setup.  "second"
 * reads another passdb, so only its stack accepts "secret2". */
static void set_item_reload(void **state)
{
	struct pam_conv c2 = { tu_conv_password, (void *)"secret2" };
	struct pam_conv c1 = { tu_conv_password, (void *)"secret" };
	pam_handle_t *ph = NULL;
	char line[4200];
	char *passdb2 = tu_path(*state, "passdb2");

	snprintf(line, sizeof(line), "auth required pam_matrix.so passdb=%s\n",
		 passdb2);
	tu_write_text(*state, "second", line);
	tu_write_text(*state, "passdb2", "alice:secret2:second\n");
	set_passdb(state, "app");
	assert_int_equal(pam_start("app", "alice", &c2, &ph), PAM_SUCCESS);
#if defined(PWRAP_OPENPAM)
	/* OpenPAM sets PAM_SERVICE once, in pam_start, and never reloads */
	assert_int_equal(pam_set_item(ph, PAM_SERVICE, "second"), PAM_BAD_ITEM);
	pam_end(ph, PAM_SUCCESS);
	free(passdb2);
	return;
#endif
	assert_int_equal(pam_set_item(ph, PAM_SERVICE, "second"), PAM_SUCCESS);
	assert_int_equal(pam_authenticate(ph, 0), PAM_SUCCESS);
	pam_end(ph, PAM_SUCCESS);
	assert_int_equal(pam_start("app", "alice", &c1, &ph), PAM_SUCCESS);
	assert_int_equal(pam_set_item(ph, PAM_SERVICE, "second"), PAM_SUCCESS);
	assert_int_equal(pam_authenticate(ph, 0), PAM_AUTH_ERR);
	pam_end(ph, PAM_SUCCESS);
	free(passdb2);
}

/* Another library's fopen before ours in LD_PRELOAD (calling the C library
 * itself): on the legacy path libpam's opens never reach the wrapper, and
 * the transaction is refused, saying why, instead of running on the
 * system's files; with pam_start_confdir the order does not matter. */
static void fopen_shim_first(void **state)
{
	const char *shim = getenv("PWRAP_FOPEN_SHIM");
	const char *client = getenv("PWRAP_CLIENT");
	char *preload = NULL;
	char *out = NULL, *err = NULL;
	const char *extra[] = { "PWRAP_CLIENT_PASSWORD=secret", NULL };
	char **env;
	char *argv[] = { (char *)client, "app", "alice", "auth", NULL };
	int st;

	assert_non_null(shim);
	assert_non_null(client);
	set_passdb(state, "app");
	assert_true(asprintf(&preload, "%s:%s", shim,
			     getenv("PWRAP_PRELOAD")) > 0);
	env = tu_env_wrapped(NULL, *state, "1", extra);
	tu_env_set(&env, "LD_PRELOAD", preload);
	st = tu_run_capture(argv, env, &out, &err);
	assert_true(WIFEXITED(st));
#if defined(PWRAP_EXPECT_LEGACY)
	assert_int_equal(WEXITSTATUS(st), 2);	/* pam_start failed */
	assert_non_null(strstr(err, "without going through "
				    "libpam_wrapper.so"));
#else
	assert_int_equal(WEXITSTATUS(st), 0);
#endif
	tu_env_free(env);
	free(preload);
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(path_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(system_file_not_read, setup,
						teardown),
		cmocka_unit_test_setup_teardown(own_fopen_untouched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(set_item_reload, setup,
						teardown),
		cmocka_unit_test_setup_teardown(fopen_shim_first, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
