/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Service files as bare libpam reads them, and the test's files kept
 * (issue 34, the preload library's low items).  Each test runs
 * tests/hardening/trust_client, wrapped, with a private TMPDIR; all run as
 * any user (the nobody twin too).
 *
 *   hidden_service     pam_start(".hidden") reads the service file
 *                      .hidden, as bare libpam 1.5.2 does with
 *                      pam_start_confdir (checked here against it);
 *                      9c82650 ran "other" silently.  The two names the
 *                      wrapper keeps for itself in conf/ (.inc, .m) are
 *                      refused, saying so.
 *   closefrom_no_sweep a program that closes all its descriptors between
 *                      two transactions: another wrapped process of the
 *                      user does not sweep its directory meanwhile, and
 *                      the test's file stays in force (9c82650: swept,
 *                      the service directory's stack ran, said at debug
 *                      level only)
 *   ulimit_f           a file size limit below a service file's size:
 *                      pam_start fails with PAM_ABORT and an error naming
 *                      the limit (9c82650: killed by SIGXFSZ)
 *   large_service      a service file over 4 MiB works as with bare
 *                      libpam (9c82650: refused, PAM_ABORT); a service
 *                      file that is /dev/zero is refused (bare libpam
 *                      reads it for ever; 9c82650 ran "other" silently)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <security/pam_appl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "trust_util.h"

#define PW TRUST_PW

/* The client with SERVICE (not the fixture's) as alice: its exit code,
 * its output in *out. */
static int run_service(char **env, const char *service,
		       const char *const *steps, char **out)
{
	char **argv = trust_argv("alice", steps);
	int st;

	argv[1] = (char *)service;
	st = tu_run_capture(argv, env, out, NULL);
	free(argv);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define DENY "auth required pam_deny.so\naccount required pam_deny.so\n"

#if defined(PWRAP_HAVE_PAM_START_CONFDIR) && !defined(PWRAP_OPENPAM)
/* Bare libpam (this process is not wrapped) on dir, service .hidden: the
 * result of pam_authenticate, or 1000 + what pam_start returned. */
static int bare_hidden(const char *dir)
{
	struct pam_conv conv = { tu_conv_password, (void *)PW };
	pam_handle_t *ph = NULL;
	int rc = pam_start_confdir(".hidden", "alice", &conv, dir, &ph);

	if (rc != PAM_SUCCESS) {
		return 1000 + rc;
	}
	rc = pam_authenticate(ph, 0);
	pam_end(ph, rc);
	return rc;
}
#endif

static void test_hidden_service(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char *db = NULL, *stack = NULL, *out;
	char refused[64];

	/* .hidden: pam_matrix with the module's full path (bare libpam
	 * does not know where ours are); other: deny */
	assert_true(asprintf(&db, "alice:%s:.hidden\n", PW) > 0);
	tu_write_file(c->f.passdb, db, strlen(db), 0644);
	assert_true(asprintf(&stack, "auth required %s/pam_matrix.so "
			     "passdb=%s\naccount required %s/pam_matrix.so "
			     "passdb=%s\n", getenv("PWRAP_MODULE_DIR"),
			     c->f.passdb, getenv("PWRAP_MODULE_DIR"),
			     c->f.passdb) > 0);
	tu_write_text(c->f.svc, ".hidden", stack);
	tu_write_text(c->f.svc, "other", DENY);
#if defined(PWRAP_HAVE_PAM_START_CONFDIR) && !defined(PWRAP_OPENPAM)
	/* what bare libpam 1.5.2 does */
	assert_int_equal(bare_hidden(c->f.svc), PAM_SUCCESS);
#endif
	if (run_service(c->f.env, ".hidden", steps, &out) != 0 ||
	    trust_count_rc(out, "txn", PAM_SUCCESS) != 1) {
		fail_msg("pam_start(\".hidden\") must read .hidden; the client "
			 "said:\n%s", out);
	}
	assert_null(strstr(out, "PWRAP_"));
	free(out);

	/* the wrapper's own names in conf/ */
	snprintf(refused, sizeof(refused), "txn: start %d\n", PAM_ABORT);
	for (const char *const *n = (const char *const[]){ ".inc", ".m",
							   NULL };
	     *n != NULL; n++) {
		tu_write_text(c->f.svc, *n, stack);
		assert_int_equal(run_service(c->f.env, *n, steps, &out), 1);
		if (strstr(out, refused) == NULL ||
		    strstr(out, "reserved") == NULL) {
			fail_msg("pam_start(\"%s\"): the client said:\n%s", *n,
				 out);
		}
		free(out);
	}
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(stack);
	free(db);
}

/*
 * The program writes its own stack (deny) into the runtime directory,
 * closes every descriptor but the gate, and waits; another wrapped
 * process of the same user makes its directory in the same TMPDIR, which
 * sweeps unused ones.  The program's directory must still be there, and
 * its next transaction run the test's file.
 */
static void test_closefrom_no_sweep(void **state)
{
	static const char *const steps[] = {
		"txn:" PW, "deny", "txn:" PW, "closefrom:4", "dir", "wait",
		"txn:" PW, "dir", NULL
	};
	static const char *const sweeper[] = { "start", NULL };
	struct trust_ctx *c = *state;
	struct trust_paused p;
	struct stat st;
	char *top, *out;
	bool there;

	trust_pause_start(&p, c->f.env, steps);
	top = trust_first_top(p.out);
	(void)trust_run(c->f.env, "alice", sweeper, &out);
	there = lstat(top, &st) == 0;
	assert_int_equal(trust_pause_finish(&p), 1);
	if (!there || trust_count_rc(p.out, "txn", PAM_AUTH_ERR) != 2) {
		fail_msg("%s %s after another process's sweep; the program "
			 "said:\n%s", top, there ? "was there" : "was gone",
			 p.out);
	}
	assert_null(strstr(p.out, "PWRAP_"));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(out);
	free(top);
	free(p.out);
}

/* A service file of 8 KiB; an 8 KiB file of comments and the fixture's
 * stack (service "trust"). */
static void big_service(const struct trust_ctx *c, size_t size)
{
	char *stack = hu_matrix_service(c->f.passdb);
	size_t slen = strlen(stack);
	char *text = malloc(size + slen + 1);
	char *path = tu_path(c->f.svc, TRUST_SERVICE);

	assert_non_null(text);
	for (size_t i = 0; i < size; i += 64) {
		memset(text + i, 'x', 64);
		text[i] = '#';
		text[i + 63] = '\n';
	}
	memcpy(text + size, stack, slen + 1);
	tu_write_file(path, text, size + slen, 0644);
	free(path);
	free(text);
	free(stack);
}

/*
 * ulimit -f 4 (4096 bytes) and a service file of 8 KiB: the wrapper must
 * write its copies, which the limit forbids.  The program is not killed:
 * pam_start fails with PAM_ABORT, and the error says why.
 */
static void test_ulimit_f(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	struct rlimit was, now;
	char refused[64];
	char *out;
	int rc;

	big_service(c, 8192);
	snprintf(refused, sizeof(refused), "txn: start %d\n", PAM_ABORT);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
	now = was;
	now.rlim_cur = 4096;
	/* the client inherits the limit; this process writes nothing big
	 * meanwhile */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &now), 0);
	rc = trust_run(c->f.env, "alice", steps, &out);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
	if (rc != 1 || strstr(out, refused) == NULL ||
	    strstr(out, "file size limit") == NULL) {
		fail_msg("exit %d (-1: killed):\n%s", rc, out);
	}
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(out);
}

/* 5 MiB of comments before the stack: read and used as bare libpam does.
 * A service file that is /dev/zero (which bare libpam would read for
 * ever), even with an "other" to fall back to: refused, PAM_ABORT. */
static void test_large_service(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char **argv;
	char *out, *zero;
	int fd, rc;
	pid_t pid;

	big_service(c, 5 * 1024 * 1024);
	rc = trust_run(c->f.env, "alice", steps, &out);
	if (rc != 0 || trust_count_rc(out, "txn", PAM_SUCCESS) != 1) {
		fail_msg("a 5 MiB service file: exit %d:\n%s", rc, out);
	}
	free(out);

	tu_write_text(c->f.svc, "other", DENY);
	zero = tu_path(c->f.svc, "zero");
	assert_int_equal(symlink("/dev/zero", zero), 0);
	argv = trust_argv("alice", steps);
	argv[1] = (char *)"zero";
	pid = tu_spawn(argv, c->f.env, &fd, NULL, -1, TU_SPAWN_MERGE);
	rc = tu_wait_bounded(pid, TU_HANG_SECONDS);	/* (kills it at the limit) */
	out = tu_slurp(fd, NULL);
	if (rc != 1 || strstr(out, "not a regular file") == NULL) {
		fail_msg("pam_start on /dev/zero: %s (%d):\n%s",
			 rc == -1 ? "still running (a hang)" : "exit", rc,
			 out);
	}
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(out);
	free(argv);
	free(zero);
}

#define T(f) cmocka_unit_test_setup_teardown(f, trust_setup, trust_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_hidden_service),
		T(test_closefrom_no_sweep),
		T(test_ulimit_f),
		T(test_large_service),
	};

	tu_alarm(TU_SUITE_HANG_SECONDS, "test_trust_files: a test hangs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
