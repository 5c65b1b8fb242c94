/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trust across switches of the effective uid (issue 34, the preload
 * library's part).  A root process that switches its effective uid to
 * another user keeps its real and saved uid 0: a module it loads could take
 * root back.  So the stack it reads must never come from a directory that
 * user could write, and what the test wrote into PAM_WRAPPER_RUNTIME_DIR
 * stays in force whatever the process switches.  Each test spawns
 * tests/hardening/trust_client, wrapped, with a private TMPDIR (sticky and
 * world-writable, as /tmp), as root: the nobody twin skips, saying why.
 * nobody (65534) is the other user, as in test_trust.
 *
 *   seteuid_attacker      root switches to nobody; nobody plants a
 *                         permissive stack into the runtime directory the
 *                         process now uses: never read, a wrong password
 *                         still fails (on 9c82650 nobody owned that
 *                         directory and the wrong password passed)
 *   seteuid_first_use     a service first used while the euid is nobody's:
 *                         refused loudly, never read from a directory
 *                         nobody owns
 *   file_kept_across_seteuid  sshd's seteuid(user) ... seteuid(0): the
 *                         test's file stays in force throughout (9c82650
 *                         dropped it at the switch back: "not taking")
 *   child_sees_parent_file  a forked child that switches its euid, or
 *                         drops for good, runs the test's file (9c82650:
 *                         the service directory's, silently)
 *   for_a_while_then_for_good  seteuid(nobody), then setresuid to
 *                         nobody: root's directory is removed, the test's
 *                         file goes along (a guard of the switch for a
 *                         while)
 *   threads_while_switching  threads in PAM while another thread switches
 *                         the euid back and forth: no PAM_ABORT, no wrong
 *                         verdict, nothing left after the exit (9c82650:
 *                         aborts and root-owned leftovers)
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "trust_util.h"

#define PW TRUST_PW

/* Root only; TMPDIR as /tmp (both users may make entries there). */
static bool setup_root(struct trust_ctx *c, const char *why)
{
	if (!trust_need_root(why)) {
		return false;
	}
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	return true;
}

/*
 * Root has used the service; it switches its euid to nobody, and nobody
 * (another process) puts a permissive stack into services/ and conf/ of
 * the runtime directory the process names now.  The process, still with
 * its real and saved uid 0, then checks a wrong password: it must fail,
 * and the directory must be root's (nobody's module could take root back
 * with setresuid(0, 0, 0)).
 */
static void test_seteuid_attacker(void **state)
{
	static const char *const steps[] = {
		"txn:" PW, "seteuid:65534", "dir", "wait", "txn:wrong",
		"txn:" PW, "seteuid:0", "txn:wrong", NULL
	};
	struct trust_ctx *c = *state;
	struct trust_paused p;
	struct stat st;
	bool in_svc, in_conf;
	char *top;
	int rc;

	if (!setup_root(c, "switching from root to nobody")) {
		skip();
	}
	trust_pause_start(&p, c->f.env, steps);
	top = trust_first_top(p.out);
	assert_int_equal(stat(top, &st), 0);
	in_svc = trust_plant_as_nobody(top, "services");
	in_conf = trust_plant_as_nobody(top, "conf");
	rc = trust_pause_finish(&p);
	if (st.st_uid != 0 || in_svc || in_conf || rc != 1 ||
	    trust_count_rc(p.out, "txn", PAM_AUTH_ERR) != 2 ||
	    trust_count_rc(p.out, "txn", PAM_SUCCESS) != 2) {
		fail_msg("with euid nobody the process used %s (uid %lu's); "
			 "nobody %s plant services/, %s plant conf/; it "
			 "said:\n%s", top, (unsigned long)st.st_uid,
			 in_svc ? "could" : "could not",
			 in_conf ? "could" : "could not", p.out);
	}
	assert_null(strstr(p.out, "PWRAP_ERROR"));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(top);
	free(p.out);
}

/*
 * A service used for the first time while the process runs as nobody
 * with saved uid 0: the wrapper cannot write into root's directory then,
 * and no directory nobody could write is trusted.  pam_start fails with
 * PAM_ABORT and an error that says why; the next transaction as root
 * works, and so does the one as nobody after it.
 */
static void test_seteuid_first_use(void **state)
{
	static const char *const steps[] = {
		"seteuid:65534", "dir", "txn:" PW, "seteuid:0", "txn:" PW,
		"seteuid:65534", "txn:" PW, NULL
	};
	struct trust_ctx *c = *state;
	char *out, *top;
	char refused[64];
	struct stat st;

	if (!setup_root(c, "switching from root to nobody")) {
		skip();
	}
	snprintf(refused, sizeof(refused), "txn: start %d\n", PAM_ABORT);
	assert_int_equal(trust_run(c->f.env, "alice", steps, &out), 1);
	top = trust_first_top(out);
	if (trust_count(out, refused) != 1 ||
	    trust_count_rc(out, "txn", PAM_SUCCESS) != 2 ||
	    strstr(out, "effective uid 65534") == NULL ||
	    lstat(top, &st) == 0) {
		fail_msg("first use as nobody must be refused loudly, the "
			 "later ones work, nothing left; it said:\n%s", out);
	}
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(top);
	free(out);
}

/*
 * From a switch for a while to one for good: root switches its euid to
 * nobody, then, as nobody, gives up the real and saved uid 0 too.  Root's
 * directory cannot be removed as nobody; it must not be left behind, and
 * the test's file goes along into nobody's new one.  (Not a defect of
 * 9c82650, which had no directory of root's at that point: a guard of the
 * switch for a while.)
 */
static void test_for_a_while_then_for_good(void **state)
{
	static const char *const steps[] = {
		"deny", "txn:" PW, "dir", "seteuid:65534", "txn:" PW,
		"resuid:65534", "txn:" PW, NULL
	};
	struct trust_ctx *c = *state;
	char *out, *top;
	struct stat st;

	if (!setup_root(c, "switching from root to nobody")) {
		skip();
	}
	assert_int_equal(trust_run(c->f.env, "alice", steps, &out), 1);
	top = trust_first_top(out);
	if (trust_count_rc(out, "txn", PAM_AUTH_ERR) != 3 ||
	    stat(top, &st) == 0 || tu_wait_empty(c->f.tmp, TU_HANG_SECONDS) != 0) {
		fail_msg("the test's file must deny all three, nothing be "
			 "left; the client said:\n%s", out);
	}
	assert_null(strstr(out, "PWRAP_ERROR"));
	free(top);
	free(out);
}

/* sshd's pattern: the test's own file (a stack that denies everyone),
 * written into PAM_WRAPPER_RUNTIME_DIR as root, is in force before, during
 * and after a temporary switch to nobody. */
static void test_file_kept_across_seteuid(void **state)
{
	static const char *const steps[] = {
		"deny", "txn:" PW, "seteuid:65534", "txn:" PW, "seteuid:0",
		"txn:" PW, NULL
	};
	struct trust_ctx *c = *state;
	char *out;

	if (!setup_root(c, "switching from root to nobody")) {
		skip();
	}
	assert_int_equal(trust_run(c->f.env, "alice", steps, &out), 1);
	if (trust_count_rc(out, "txn", PAM_AUTH_ERR) != 3 ||
	    strstr(out, "not taking") != NULL) {
		fail_msg("the test's file must deny all three transactions; "
			 "the client said:\n%s", out);
	}
	assert_null(strstr(out, "PWRAP_ERROR"));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(out);
}

/* A forked child of a root process switches its euid to nobody, or drops
 * to nobody for good, and runs a transaction: the test's file, written
 * into the parent's runtime directory, is what it runs. */
static void test_child_sees_parent_file(void **state)
{
	static const char *const steps[] = {
		"deny", "txn:" PW, "forktxn:e:65534:" PW,
		"forktxn:u:65534:" PW, "txn:" PW, NULL
	};
	struct trust_ctx *c = *state;
	char *out;

	if (!setup_root(c, "switching from root to nobody")) {
		skip();
	}
	assert_int_equal(trust_run(c->f.env, "alice", steps, &out), 1);
	if (trust_count_rc(out, "child", PAM_AUTH_ERR) != 2 ||
	    trust_count_rc(out, "txn", PAM_AUTH_ERR) != 2) {
		fail_msg("the children must run the test's file (deny); the "
			 "client said:\n%s", out);
	}
	assert_null(strstr(out, "PWRAP_ERROR"));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(out);
}

/*
 * Four threads run transactions while the main thread switches the euid
 * to nobody and back 300 times (glibc applies a switch to every thread).
 * Every transaction must succeed, and nothing may be left after the exit.
 * The count is of switches, not of seconds: on 9c82650 PAM_ABORTs and
 * leftover directories came within a few dozen.
 */
static void test_threads_while_switching(void **state)
{
	static const char *const steps[] = {
		"txn:" PW, "threads:4:300:65534:" PW, NULL
	};
	struct trust_ctx *c = *state;
	char *out;
	bool left;
	int rc;

	if (!setup_root(c, "switching from root to nobody")) {
		skip();
	}
	rc = trust_run(c->f.env, "alice", steps, &out);
	left = tu_wait_empty(c->f.tmp, TU_HANG_SECONDS) != 0;
	if (rc != 0 || strstr(out, "threads: abort 0 other 0") == NULL ||
	    left) {
		fail_msg("exit %d, %s:\n%s", rc,
			 left ? "directories left after a normal exit"
			      : "nothing left", out);
	}
	free(out);
}

#define T(f) cmocka_unit_test_setup_teardown(f, trust_setup, trust_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_seteuid_attacker),
		T(test_seteuid_first_use),
		T(test_file_kept_across_seteuid),
		T(test_for_a_while_then_for_good),
		T(test_child_sees_parent_file),
		T(test_threads_while_switching),
	};

	tu_alarm(TU_SUITE_HANG_SECONDS, "test_trust_uid: a test hangs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
