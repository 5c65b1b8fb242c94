/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One regression test per defect of upstream pam_wrapper 1.1.x that we
 * avoid (test_regress_<defect>).  This binary runs wrapped (LD_PRELOAD,
 * PAM_WRAPPER=1) for the in-process checks, which libpamtest drives; checks
 * that need a fresh process spawn tests/hardening/hard_client with their own
 * environment and a private TMPDIR.
 *
 *   blank_passdb_line     blank lines in a passdb do not stop the lookup
 *   62_processes          100 concurrent wrapped processes all succeed
 *   exit_on_bad_dir       a bad PAM_WRAPPER_SERVICE_DIR is a pam_start
 *                         error, never an exit of the application
 *   hang_when_disabled    preloaded with PAM_WRAPPER=0 (or unset) a
 *                         transaction finishes (alarm() guards it)
 *   password_in_trace_logs  PAM_WRAPPER_DEBUGLEVEL=3 never prints a password
 *   null_conv_data        libpamtest with NULL conv data fails cleanly
 *   17th_message          more module messages than buffers: no overrun,
 *                         the first buffers filled
 *
 * plus test_null_service (libpamtest given no service name).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <security/pam_appl.h>

#include "hard_util.h"
#include "libpamtest.h"

struct ctx {
	struct hu_fixture f;
	char *top, *svc, *tmp, *passdb;	/* aliases into f */
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	hu_fixture_init(&c->f, "matrix");
	c->top = c->f.top;
	c->svc = c->f.svc;
	c->tmp = c->f.tmp;
	c->passdb = c->f.passdb;
	setenv("PAM_WRAPPER_SERVICE_DIR", c->svc, 1);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	setenv("PAM_WRAPPER", "1", 1);
	hu_fixture_free(&c->f);
	free(c);
	return 0;
}

static void set_passdb(struct ctx *c, const char *text)
{
	tu_write_file(c->passdb, text, strlen(text), 0600);
}

/* auth+acct of USER with PASSWORD through libpamtest; the PAM result of
 * the first case that failed, or PAM_SUCCESS. */
static int matrix_login(const char *user, const char *password)
{
	const char *answers[] = { password, NULL };
	struct pamtest_conv_data cd = { .in_echo_off = answers };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	enum pamtest_err perr = run_pamtest("matrix", user, &cd, tests);
	const struct pam_testcase *f = pamtest_failed_case(tests);

	if (perr == PAMTEST_ERR_OK) {
		return PAM_SUCCESS;
	}
	assert_int_equal(perr, PAMTEST_ERR_CASE);
	assert_non_null(f);
	return f->op_rv;
}

/* ---- blank passdb line --------------------------------------------------- */

static void test_regress_blank_passdb_line(void **state)
{
	struct ctx *c = *state;
	const char *db = "\n"
			 "alice:secret:matrix\n"
			 "\n"
			 "   \n"
			 "\t\n"
			 "\n"
			 "bob:builder:matrix\n"
			 "\n";
	const char *answers[] = { "builder", "builder", "b2", "b2", NULL };
	struct pamtest_conv_data cd = { .in_echo_off = answers };
	struct pam_testcase chpw[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_CHAUTHTOK, PAM_SUCCESS),
	};
	char *after;

	set_passdb(c, db);
	assert_int_equal(matrix_login("alice", "secret"), PAM_SUCCESS);
	assert_int_equal(matrix_login("bob", "builder"), PAM_SUCCESS);
	assert_int_not_equal(matrix_login("bob", "wrong"), PAM_SUCCESS);

	/* a rewrite keeps the blank lines and still finds bob after them */
	assert_int_equal(run_pamtest("matrix", "bob", &cd, chpw),
			 PAMTEST_ERR_OK);
	after = tu_read_file(c->passdb, NULL);
	assert_string_equal(after, "\n"
			    "alice:secret:matrix\n"
			    "\n"
			    "   \n"
			    "\t\n"
			    "\n"
			    "bob:b2:matrix\n"
			    "\n");
	free(after);
	assert_int_equal(matrix_login("bob", "b2"), PAM_SUCCESS);

	/* only blank lines: nobody is found, nothing crashes */
	set_passdb(c, "\n\n   \n\n");
	assert_int_not_equal(matrix_login("alice", "secret"), PAM_SUCCESS);
	set_passdb(c, "");
	assert_int_not_equal(matrix_login("alice", "secret"), PAM_SUCCESS);
}

/* ---- 62-process limit ----------------------------------------------------- */

#define NPROC 100

static void test_regress_62_processes(void **state)
{
	struct ctx *c = *state;
	char **env = c->f.env;
	char *argv[] = { (char *)hu_client(), "matrix", "alice", "auth,acct",
			 "secret", NULL };
	pid_t pids[NPROC];
	int ok = 0;

	set_passdb(c, "alice:secret:matrix\n");
	for (int i = 0; i < NPROC; i++) {
		pids[i] = tu_spawn(argv, env, NULL, NULL, -1, 0);
	}
	for (int i = 0; i < NPROC; i++) {
		int st = tu_wait(pids[i]);

		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	assert_int_equal(ok, NPROC);
	assert_int_equal(tu_wait_empty(c->tmp, TU_HANG_SECONDS), 0);
}

/* ---- exit(1) on a bad directory ----------------------------------------- */

/*
 * In a forked child (no cmocka there: plain exit codes): every bad service
 * dir makes pam_start fail with a PAM code and a NULL handle, and the
 * process goes on to a working pam_start and a normal exit.  Returns the
 * child's status.
 */
static int bad_dirs_in_child(struct ctx *c, const char *file)
{
	pid_t pid;
	int st;

	fflush(NULL);	/* the child's exit() must not repeat our output */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *bad[] = { "/nonexistent/pwrap-hard", file, "", NULL };
		struct pam_conv conv = { tu_conv_none, NULL };
		pam_handle_t *ph;
		int rc;

		for (int i = 0; bad[i] != NULL; i++) {
			ph = (pam_handle_t *)&conv;
			setenv("PAM_WRAPPER_SERVICE_DIR", bad[i], 1);
			rc = pam_start("matrix", "alice", &conv, &ph);
			if (rc == PAM_SUCCESS || ph != NULL) {
				_exit(10 + i);
			}
		}
		unsetenv("PAM_WRAPPER_SERVICE_DIR");
		ph = NULL;
		if (pam_start("matrix", "alice", &conv, &ph) == PAM_SUCCESS) {
			_exit(20);
		}
		/* Its own service name: a forked child's transaction
		 * changes the parent's cached copy of the file it used
		 * (see test_fork_isolation). */
		setenv("PAM_WRAPPER_SERVICE_DIR", c->svc, 1);
		rc = pam_start("matrix-child", "alice", &conv, &ph);
		if (rc != PAM_SUCCESS) {
			_exit(30);
		}
		pam_end(ph, PAM_SUCCESS);
		exit(42);	/* a normal exit, destructors included */
	}
	st = tu_wait(pid);
	return st;
}

static void test_regress_exit_on_bad_dir(void **state)
{
	struct ctx *c = *state;
	char *file = tu_path(c->top, "not-a-dir");
	int st;

	tu_write_text(c->top, "not-a-dir", "x\n");
	tu_write_text(c->svc, "matrix-child", "auth required pam_permit.so\n");
	st = bad_dirs_in_child(c, file);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 42);

	/* the same in a fresh process: pam_start fails, main() goes on */
	{
		const char *bad[] = { "/nonexistent/pwrap-hard", file, NULL };

		for (int i = 0; bad[i] != NULL; i++) {
			char **env = tu_env_wrapped(c->tmp, bad[i], "1", NULL);
			char *argv[] = { (char *)hu_client(), "matrix", "alice",
					 "auth", "secret", NULL };
			int out;
			pid_t pid = tu_spawn(argv, env, &out, NULL, -1, 0);
			char *o = tu_slurp(out, NULL);

			st = tu_wait(pid);
			assert_true(WIFEXITED(st));
			assert_int_equal(WEXITSTATUS(st), 2);
			assert_non_null(strstr(o, "pam_start: "));
			assert_null(strstr(o, "pam_start: 0\n"));
			free(o);
			tu_env_free(env);
		}
	}
	assert_int_equal(tu_wait_empty(c->tmp, TU_HANG_SECONDS), 0);
	free(file);
}

/* ---- hang when disabled ---------------------------------------------------- */

#define HANG_LIMIT TU_HANG_SECONDS

/*
 * Runs hard_client preloaded with PAM_WRAPPER=value (NULL: unset) in a child
 * that alarm() kills after HANG_LIMIT seconds (the alarm survives exec).
 * The transaction goes to the system's configuration (an unknown service
 * and user): whatever it answers, it must answer.
 */
static void run_disabled(struct ctx *c, const char *value)
{
	char **env = tu_env_wrapped(c->tmp, c->svc, value, NULL);
	char *argv[] = { (char *)hu_client(), "pwrap-hard-no-such-service",
			 "pwrap-no-such-user", "acct", NULL };
	long long t0 = tu_now_ms();
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		alarm(HANG_LIMIT);
		execve(argv[0], argv, env);
		_exit(127);
	}
	st = tu_wait(pid);
	if (WIFSIGNALED(st)) {
		print_message("PAM_WRAPPER=%s: killed by signal %d after %lld ms\n",
			      value ? value : "(unset)", WTERMSIG(st),
			      tu_now_ms() - t0);
	}
	assert_true(WIFEXITED(st));
	assert_int_not_equal(WEXITSTATUS(st), 127);
	assert_int_not_equal(WEXITSTATUS(st), 3);
	tu_env_free(env);
}

static void test_regress_hang_when_disabled(void **state)
{
	struct ctx *c = *state;

	run_disabled(c, "0");
	run_disabled(c, NULL);
	run_disabled(c, "");
	run_disabled(c, "no");
	/* disabled means untouched: nothing was created in TMPDIR */
	assert_int_equal(tu_count_entries(c->tmp, true), 0);

	/* the in-process switch: this process was loaded enabled */
	{
		pid_t pid;
		int st;

		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct pam_conv conv = { tu_conv_none, NULL };
			pam_handle_t *ph = NULL;

			alarm(HANG_LIMIT);
			setenv("PAM_WRAPPER", "0", 1);
			if (pam_start("pwrap-hard-no-such-service",
				      "pwrap-no-such-user", &conv, &ph) ==
			    PAM_SUCCESS) {
				(void)pam_acct_mgmt(ph, PAM_SILENT);
				pam_end(ph, PAM_SUCCESS);
			}
			exit(0);
		}
		st = tu_wait(pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

/* ---- password in trace logs ----------------------------------------------- */

static void test_regress_password_in_trace_logs(void **state)
{
	struct ctx *c = *state;
	const char *extra[] = { "PAM_WRAPPER_DEBUGLEVEL=3", NULL };
	char **env = tu_env_wrapped(c->tmp, c->svc, "1", extra);
	char oldpw[64], newpw[64], wrong[64], db[128];
	int st;
	char *o, *e;

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	snprintf(oldpw, sizeof(oldpw), "Old-%d-%d-pw", getpid(), rand());
	snprintf(newpw, sizeof(newpw), "New-%d-%d-pw", getpid(), rand());
	snprintf(wrong, sizeof(wrong), "Wrong-%d-%d-pw", getpid(), rand());
	snprintf(db, sizeof(db), "carol:%s:matrix\n", oldpw);
	set_passdb(c, db);

	{
		char *argv[] = { (char *)hu_client(), "matrix", "carol",
				 "auth,acct,chauthtok,open,close", oldpw, oldpw,
				 newpw, newpw, NULL };

		st = tu_run_capture(argv, env, &o, &e);
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* tracing was on */
	assert_non_null(strstr(e, "PWRAP_TRACE["));
	assert_null(strstr(e, oldpw));
	assert_null(strstr(e, newpw));
	assert_null(strstr(o, oldpw));
	assert_null(strstr(o, newpw));
	free(o);
	free(e);

	/* failed attempts: a wrong password, mismatching new ones */
	{
		char *argv[] = { (char *)hu_client(), "matrix", "carol",
				 "auth", wrong, NULL };
		char *argv2[] = { (char *)hu_client(), "matrix", "carol",
				  "chauthtok", newpw, wrong, oldpw, NULL };
		char **v[] = { argv, argv2 };

		for (int i = 0; i < 2; i++) {
			st = tu_run_capture(v[i], env, &o, &e);
			assert_true(WIFEXITED(st));
			assert_int_equal(WEXITSTATUS(st), 1);
			assert_non_null(strstr(e, "PWRAP_TRACE["));
			assert_null(strstr(e, wrong));
			assert_null(strstr(e, oldpw));
			assert_null(strstr(e, newpw));
			free(o);
			free(e);
		}
	}
	tu_env_free(env);
	assert_int_equal(tu_wait_empty(c->tmp, TU_HANG_SECONDS), 0);
}

/* ---- NULL conversation data ---------------------------------------------- */

static void test_regress_null_conv_data(void **state)
{
	struct ctx *c = *state;
	struct pam_testcase auth[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};
	struct pam_testcase chatty[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
	};
	struct pam_testcase keep[] = {
		pam_test(PAMTEST_ACCOUNT, PAM_SUCCESS),
		pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
	};
	const struct pam_testcase *f;

	set_passdb(c, "alice:secret:matrix\n");
	tu_write_text(c->svc, "chatty", "auth required pam_chatty.so num_lines=5 "
		      "info error\naccount required pam_permit.so\n");

	/* a prompt with nothing to answer it: a clean PAM error */
	assert_int_equal(run_pamtest("matrix", "alice", NULL, auth),
			 PAMTEST_ERR_CASE);
	f = pamtest_failed_case(auth);
	assert_non_null(f);
	assert_int_not_equal(f->op_rv, PAM_SUCCESS);

	/* messages with nowhere to go are dropped */
	assert_int_equal(run_pamtest("chatty", "alice", NULL, chatty),
			 PAMTEST_ERR_OK);

	/* a kept handle of such a call, continued and ended */
	assert_int_equal(run_pamtest("matrix", "alice", NULL, keep),
			 PAMTEST_ERR_OK);
	assert_non_null(keep[1].case_out.ph);
	{
		struct pam_testcase more[] = {
			pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
		};

		assert_int_equal(run_pamtest("matrix", "alice", NULL, more,
					     keep[1].case_out.ph),
				 PAMTEST_ERR_CASE);
	}

	/* the caller's-conversation form with no function at all */
	assert_int_equal(run_pamtest_conv("matrix", "alice", NULL, NULL, auth),
			 PAMTEST_ERR_CASE);
}

/* Not an upstream defect, a neighbour of the last one: no service name is
 * a pam_start failure, without handing libpam a NULL it declares nonnull
 * (UBSan checks that in the sanitizer build). */
static void test_null_service(void **state)
{
	(void)state;
	assert_int_equal(_pamtest(NULL, "alice", NULL, NULL, 0, NULL),
			 PAMTEST_ERR_START);
	assert_int_equal(_pamtest_conv(NULL, "alice", NULL, NULL, NULL, 0,
				       NULL),
			 PAMTEST_ERR_START);
}

/* ---- the 17th message --------------------------------------------------- */

#define INFO_TEXT "Authentication succeeded"
#define ERR_TEXT "Authentication generated an error"

/* NBUF buffers of exactly PAM_MAX_MSG_SIZE bytes (so that valgrind and
 * ASan see a write past one), filled with '#', NULL-terminated. */
static char **bufs(size_t nbuf)
{
	char **b = calloc(nbuf + 1, sizeof(*b));

	assert_non_null(b);
	for (size_t i = 0; i < nbuf; i++) {
		b[i] = malloc(PAM_MAX_MSG_SIZE);
		assert_non_null(b[i]);
		memset(b[i], '#', PAM_MAX_MSG_SIZE);
	}
	return b;
}

static void check_bufs(char **b, size_t nbuf, size_t nfilled,
		       const char *text)
{
	for (size_t i = 0; i < nbuf; i++) {
		if (i < nfilled) {
			assert_string_equal(b[i], text);
		} else {
			assert_int_equal(b[i][0], '#');	/* untouched */
		}
		free(b[i]);
	}
	free(b);
}

static void chatty_run(struct ctx *c, size_t lines, size_t nbuf)
{
	char svc[160];
	char **info = bufs(nbuf);
	char **err = bufs(nbuf);
	struct pamtest_conv_data cd = { .out_info = info, .out_err = err };
	struct pam_testcase tests[] = {
		pam_test(PAMTEST_AUTHENTICATE, PAM_SUCCESS),
	};

	snprintf(svc, sizeof(svc),
		 "auth required pam_chatty.so num_lines=%zu info error\n",
		 lines);
	tu_write_text(c->svc, "chatty", svc);
	assert_int_equal(run_pamtest("chatty", "alice", &cd, tests),
			 PAMTEST_ERR_OK);
	check_bufs(info, nbuf, lines < nbuf ? lines : nbuf, INFO_TEXT);
	check_bufs(err, nbuf, lines < nbuf ? lines : nbuf, ERR_TEXT);
}

static void test_regress_17th_message(void **state)
{
	struct ctx *c = *state;

	chatty_run(c, 17, 16);	/* pypamtest's 16 buffers */
	chatty_run(c, 100, 16);
	chatty_run(c, 17, 17);
	chatty_run(c, 100, 100);
	chatty_run(c, 16, 17);
	chatty_run(c, 1, 0);	/* an empty array */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_regress_blank_passdb_line),
		T(test_regress_62_processes),
		T(test_regress_exit_on_bad_dir),
		T(test_regress_hang_when_disabled),
		T(test_regress_password_in_trace_logs),
		T(test_regress_null_conv_data),
		T(test_regress_17th_message),
		T(test_null_service),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
