/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trust (issue 23, the preload library's part): a wrapped test runs on the
 * files it named or fails, whatever the environment around it does.  Each
 * test spawns tests/hardening/trust_client, wrapped, with a private TMPDIR
 * and names the threat it is the regression test of (tests/hardening/
 * README.md lists them with what we promise):
 *
 *   tmpdir_other_owner     a TMPDIR owned by another user (sudo -E) is not
 *                          used: said once, nothing made there (root)
 *   tmpdir_writable        a TMPDIR writable by others and not sticky is
 *                          not used; a sticky one is
 *   tmpdir_symlink         TMPDIR is resolved once: a link is not followed
 *                          again later
 *   runtime_dir_renamed    the runtime directory renamed and replaced
 *                          between two pam_start: libpam never reads the
 *                          replacement
 *   conf_replaced          the same for conf/ alone
 *   (test_trust_full.c: a full TMPDIR, /dev/shm, /tmp)
 *   syslog_masked_before_cut  a password across the old 2 KiB cut of a
 *                          module's log line is masked all the same
 *   daemon_leaves_nothing  daemon(3): no directory outlives the processes
 *   daemon_parent_ends_last  daemon(3) whose parent's _exit comes after the
 *                          child's end (as on a busy machine): the child's
 *                          end removes the directories all the same
 *   daemon_then_drop       daemon(3), then a drop from root to nobody: the
 *                          parent's directory does not outlive them (root)
 *   child_drop_leaves_nothing  a forked child drops to nobody and _exits:
 *                          it leaves no directory of its own (root)
 *   not_enabled_said       preloaded with a service directory but
 *                          PAM_WRAPPER not 1: one line per process
 *   uid_drop               root drops to nobody (setuid) or switches for a
 *                          while (seteuid): a new directory at once, no
 *                          error, nothing left (root)
 *   uid_back_to_root       root switches to nobody and back: root never
 *                          reads a directory nobody owns (root)
 *
 * Tests that need root say so and skip when run as another user.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <security/pam_appl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <security/pam_appl.h>

#include "trust_util.h"

#define SERVICE TRUST_SERVICE
#define PW TRUST_PW
#define NOBODY TRUST_NOBODY
#define PERMIT TRUST_PERMIT

/* ---- the base directory -------------------------------------------------- */

/*
 * With TMPDIR's mode (and owner) as given, the client runs: it must end
 * well, and when `trusted` its runtime directory is below TMPDIR, else
 * nowhere in it (checked while the client lives) with one PWRAP_WARN
 * naming `why`.
 */
static void check_tmpdir(struct trust_ctx *c, bool trusted, const char *why)
{
	static const char *const steps[] = { "dir", "wait", "txn:" PW, NULL };
	struct trust_paused p;
	char *dir;

	trust_pause_start(&p, c->f.env, steps);
	dir = trust_nth_dir(p.out, 0);
	if (trusted) {
		assert_true(trust_under(dir, c->f.tmp));
		assert_int_equal(trust_count(p.out, "PWRAP_WARN"), 0);
	} else {
		assert_false(trust_under(dir, c->f.tmp));
		assert_int_equal(tu_count_entries(c->f.tmp, true), 0);
		assert_int_equal(trust_count(p.out, "PWRAP_WARN"), 1);
		assert_non_null(strstr(p.out, "not using TMPDIR"));
		assert_non_null(strstr(p.out, why));
	}
	assert_int_equal(trust_pause_finish(&p), 0);
	assert_non_null(strstr(p.out, "txn: 0\n"));
	assert_null(strstr(p.out, "PWRAP_ERROR"));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(dir);
	free(p.out);
}

/* sudo -E keeps a user's TMPDIR for a test run as root: that user could
 * rename or swap what root's process makes there. */
static void test_tmpdir_other_owner(void **state)
{
	struct trust_ctx *c = *state;

	if (!trust_need_root("a TMPDIR owned by another user is made with "
			     "chown")) {
		skip();
	}
	assert_int_equal(chown(c->f.tmp, NOBODY, NOBODY), 0);
	assert_int_equal(chmod(c->f.tmp, 0755), 0);
	check_tmpdir(c, false, "owned by uid 65534");
	/* root's own, and root's sticky one, are trusted */
	assert_int_equal(chown(c->f.tmp, 0, 0), 0);
	check_tmpdir(c, true, NULL);
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	check_tmpdir(c, true, NULL);
}

static void test_tmpdir_writable(void **state)
{
	struct trust_ctx *c = *state;

	assert_int_equal(chmod(c->f.tmp, 0777), 0);
	check_tmpdir(c, false, "writable by everyone and not sticky");
	assert_int_equal(chmod(c->f.tmp, 0770), 0);
	check_tmpdir(c, false, "writable by its group and not sticky");
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	check_tmpdir(c, true, NULL);
	assert_int_equal(chmod(c->f.tmp, 0700), 0);
	check_tmpdir(c, true, NULL);
}

/* A TMPDIR through a symbolic link: the link is followed once, and the
 * runtime directory named by the real path (a link another user owns
 * could point elsewhere later). */
static void test_tmpdir_symlink(void **state)
{
	static const char *const steps[] = { "dir", "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char *link = tu_path(c->f.top, "tmplink");
	char *real = realpath(c->f.tmp, NULL);
	char **env = tu_env_wrapped(link, c->f.svc, "1", NULL);
	char *out, *dir;

	assert_int_equal(symlink(c->f.tmp, link), 0);
	assert_int_equal(trust_run(env, "alice", steps, &out), 0);
	dir = trust_nth_dir(out, 0);
	assert_true(trust_under(dir, real));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(dir);
	free(out);
	tu_env_free(env);
	free(real);
	free(link);
}

/* ---- the runtime directory under a live process -------------------------- */

/* A tree that would let anyone in, at dir/services and dir/conf. */
static void fake_tree(const char *dir)
{
	char *s, *cf;

	assert_int_equal(mkdir(dir, 0700), 0);
	s = tu_subdir(dir, "services");
	cf = tu_subdir(dir, "conf");
	tu_write_text(s, SERVICE, PERMIT);
	tu_write_text(cf, SERVICE, PERMIT);
	free(s);
	free(cf);
}

/*
 * Between two transactions, `what` (the runtime directory's top or its
 * conf/) is renamed and a permissive tree put at its path.  The second
 * transaction, with a wrong password, must fail: the wrapper notices, says
 * so, and makes a new directory from the service directory.
 */
static void swap_between(struct trust_ctx *c, bool whole)
{
	static const char *const steps[] = {
		"txn:" PW, "dir", "wait", "txn:wrong", "dir", NULL
	};
	struct trust_paused p;
	char *svc, *top, *victim, *moved;

	trust_pause_start(&p, c->f.env, steps);
	assert_non_null(strstr(p.out, "txn: 0\n"));
	svc = trust_nth_dir(p.out, 0);
	top = strndup(svc, (size_t)(strrchr(svc, '/') - svc));
	victim = whole ? strdup(top) : tu_path(top, "conf");
	assert_true(asprintf(&moved, "%s.moved", victim) > 0);
	assert_int_equal(rename(victim, moved), 0);
	if (whole) {
		fake_tree(victim);
	} else {
		assert_int_equal(mkdir(victim, 0755), 0);
		tu_write_text(victim, SERVICE, PERMIT);
	}
	assert_int_equal(trust_pause_finish(&p), 1);
	/* PAM_AUTH_ERR, not the permissive stack */
	assert_true(hu_has_rc(p.out, "txn", PAM_AUTH_ERR));
	assert_non_null(strstr(p.out, "renamed or replaced"));
	free(svc);
	svc = trust_nth_dir(p.out, 1);
	assert_false(trust_under(svc, top));
	/* what the test made or moved is the test's to remove; the client
	 * removed its new directory */
	tu_rmtree(whole ? moved : top);
	tu_rmtree(victim);
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(moved);
	free(victim);
	free(top);
	free(svc);
	free(p.out);
}

static void test_runtime_dir_renamed(void **state)
{
	swap_between(*state, true);
}

static void test_conf_replaced(void **state)
{
	swap_between(*state, false);
}

/* ---- what a process does ------------------------------------------------- */

/* pam_matrix logs "<passdb>: unknown user <user>"; the user name holds the
 * password so that it crosses the 2047th byte of the message, then again
 * and again past the end of a log line. */
static void test_syslog_masked_before_cut(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	const char *const extra[] = { "PAM_WRAPPER_DEBUGLEVEL=2", NULL };
	char **env = tu_env_wrapped(c->f.tmp, c->f.svc, "1", extra);
	size_t prefix = strlen(c->f.passdb) + strlen(": unknown user ");
	size_t pad = 2047 - 4 - prefix;
	char *user = malloc(pad + 400 * 17 + 1);
	char *out;
	size_t len;

	assert_true(prefix < 2000);
	memset(user, 'u', pad);
	len = pad;
	for (int i = 0; i < 400; i++) {
		memcpy(user + len, PW "uuuuuuu", 17);
		len += 17;
	}
	user[len] = '\0';
	assert_int_equal(trust_run(env, user, steps, &out), 1);
	/* not a piece of it: "Qx7Z" is how the old cut showed it */
	assert_null(strstr(out, "Qx7"));
	assert_non_null(strstr(out, "unknown user uuu"));
	assert_non_null(strstr(out, "uuu***uuu"));
	free(out);
	free(user);
	tu_env_free(env);
}

/* daemon(3): the parent ends with _exit, the child goes on with PAM and
 * exits normally; nothing may be left. */
static void test_daemon_leaves_nothing(void **state)
{
	static const char *const steps[] = { "daemon", "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char **argv = trust_argv("alice", steps);
	char *out;
	int fd;
	pid_t pid = tu_spawn(argv, c->f.env, &fd, NULL, -1, TU_SPAWN_MERGE);

	assert_int_equal(tu_wait_bounded(pid, TU_HANG_SECONDS), 0);
	/* the daemon's end: it held the pipe */
	out = tu_slurp(fd, NULL);
	assert_non_null(strstr(out, "txn: 0\n"));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(out);
	free(argv);
}

/* Whether process pid has ended (a zombie: its parent, stopped, does not
 * reap it); the answer of /proc (Linux), else of kill(2), which counts a
 * zombie as there. */
static bool ended(long pid)
{
	char path[64], buf[512];
	FILE *f;
	char *p;
	bool z;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (f == NULL) {
		return kill((pid_t)pid, 0) != 0;
	}
	p = fgets(buf, sizeof(buf), f) != NULL ? strrchr(buf, ')') : NULL;
	z = p != NULL && p[1] == ' ' && p[2] == 'Z';
	fclose(f);
	return z;
}

/* daemon(3) whose parent ends only after the child did (a busy machine
 * does that: the parent's _exit comes late).  The parent stops itself
 * right after the fork; the child runs a transaction and exits.  Its end
 * must leave nothing while the parent is still there: the parent let go
 * of the directories at the fork (before, the child found them held at
 * its exit and left them; the stopped parent's _exit removes nothing: a
 * directory left, seen under load as a test_daemon_leaves_nothing that
 * failed). */
static void test_daemon_parent_ends_last(void **state)
{
	static const char *const steps[] = { "stopparent", "daemon", "pid",
					     "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char **argv = trust_argv("alice", steps);
	char line[256];
	long child = 0;
	bool txn = false;
	int fd, left, st;
	pid_t parent = tu_spawn(argv, c->f.env, &fd, NULL, -1,
				TU_SPAWN_MERGE);
	FILE *out = fdopen(fd, "r");

	assert_non_null(out);
	while ((child == 0 || !txn) && fgets(line, sizeof(line), out) != NULL) {
		(void)sscanf(line, "pid: %ld", &child);
		txn |= strcmp(line, "txn: 0\n") == 0;
	}
	assert_true(child > 0 && txn);
	/* the parent stops after the wrapper's fork handler (registered
	 * first): stopped, it has let go; on a busy machine that may come
	 * after the child's end, which is the order this test is for */
	assert_int_equal(waitpid(parent, &st, WUNTRACED), parent);
	assert_true(WIFSTOPPED(st));
	for (int i = 0; !ended(child) && i < TU_HANG_SECONDS * 100; i++) {
		usleep(10000);
	}
	left = tu_count_entries(c->f.tmp, true);
	kill(parent, SIGKILL);
	(void)tu_wait(parent);
	fclose(out);
	free(argv);
	assert_int_equal(left, 0);
}

/*
 * A root daemon that drops to nobody (daemon(3), then setuid): the parent's
 * runtime directory, which the daemon holds after the parent's _exit, is
 * root's; after the switch the daemon could not remove it.  Nothing may be
 * left, whether the daemon used PAM before the switch or only after.
 */
static void test_daemon_then_drop(void **state)
{
	static const char *const after_only[] = {
		"daemon", "wait", "setuid:65534", "txn:" PW, NULL
	};
	static const char *const before_too[] = {
		"daemon", "wait", "txn:" PW, "setuid:65534", "txn:" PW, NULL
	};
	const char *const *const cases[] = { after_only, before_too };
	struct trust_ctx *c = *state;

	if (!trust_need_root("dropping from root to nobody")) {
		skip();
	}
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trust_paused p;
		char buf[4096];
		size_t n, len;

		trust_pause_start(&p, c->f.env, cases[i]);
		/* daemon(3)'s parent is gone: the daemon alone holds it */
		assert_int_equal(tu_wait_bounded(p.pid, TU_HANG_SECONDS), 0);
		assert_int_equal(write(p.gate, "x", 1), 1);
		close(p.gate);
		/* the daemon's end: it held the pipe */
		while ((n = fread(buf, 1, sizeof(buf), p.o)) > 0) {
			len = strlen(p.out);
			p.out = realloc(p.out, len + n + 1);
			memcpy(p.out + len, buf, n);
			p.out[len + n] = '\0';
		}
		fclose(p.o);
		assert_int_equal(trust_count(p.out, "txn: 0\n"), (int)i + 1);
		assert_null(strstr(p.out, "PWRAP_ERROR"));
		if (tu_wait_empty(c->f.tmp, TU_HANG_SECONDS) != 0) {
			fail_msg("case %zu: a directory is left in %s; the "
				 "daemon said:\n%s", i, c->f.tmp, p.out);
		}
		free(p.out);
	}
}

/* A forked child that drops to nobody and ends with _exit (as one that
 * execs): its parent still holds the directory they share, so the child
 * makes none of its own, which nobody would remove; and the parent goes
 * on with its directory, also after a child of vfork(2) did so. */
static void test_child_drop_leaves_nothing(void **state)
{
	static const char *const fork_steps[] = {
		"txn:" PW, "childdrop:65534", "dir", "txn:" PW, "dir", NULL
	};
	/* a child of vfork(2) shares the parent's memory: what it does
	 * before the switch must not change the parent's directory */
	static const char *const vfork_steps[] = {
		"txn:" PW, "vforkdrop:65534", "dir", "txn:" PW, "dir", NULL
	};
	const char *const *const cases[] = { fork_steps, vfork_steps };
	struct trust_ctx *c = *state;

	if (!trust_need_root("dropping from root to nobody")) {
		skip();
	}
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out, *d0, *d1;

		assert_int_equal(trust_run(c->f.env, "alice", cases[i], &out),
				 0);
		assert_int_equal(trust_count(out, "txn: 0\n"), 2);
		d0 = trust_nth_dir(out, 0);
		d1 = trust_nth_dir(out, 1);
		assert_string_equal(d0, d1);
		if (tu_wait_empty(c->f.tmp, TU_HANG_SECONDS) != 0) {
			fail_msg("case %zu: a directory is left in %s:\n%s",
				 i, c->f.tmp, out);
		}
		free(d0);
		free(d1);
		free(out);
	}
}

/* Preloaded, PAM_WRAPPER_SERVICE_DIR set, PAM_WRAPPER not 1: the test
 * would silently run on the system's configuration.  One line per process
 * that uses PAM; none when enabled, without a service directory, or in a
 * process that does not use PAM. */
static void test_not_enabled_said(void **state)
{
	static const char *const twice[] = { "start", "start", NULL };
	static const char *const no_pam[] = { "dir", NULL };
	static const char *const what = "(not '1'): not wrapped";
	struct trust_ctx *c = *state;
	char **env;
	char *out;

	env = tu_env_wrapped(c->f.tmp, c->f.svc, NULL, NULL);
	(void)trust_run(env, "alice", twice, &out);
	assert_int_equal(trust_count(out, what), 1);
	assert_non_null(strstr(out, "PAM_WRAPPER is unset"));
	assert_non_null(strstr(out, "PWRAP_WARN"));
	free(out);
	(void)trust_run(env, "alice", no_pam, &out);
	assert_int_equal(trust_count(out, what), 0);
	free(out);
	tu_env_free(env);

	env = tu_env_wrapped(c->f.tmp, c->f.svc, "0", NULL);
	(void)trust_run(env, "alice", twice, &out);
	assert_int_equal(trust_count(out, what), 1);
	assert_non_null(strstr(out, "PAM_WRAPPER is '0'"));
	free(out);
	tu_env_free(env);

	env = tu_env_wrapped(c->f.tmp, NULL, NULL, NULL);
	(void)trust_run(env, "alice", twice, &out);
	assert_int_equal(trust_count(out, what), 0);
	free(out);
	tu_env_free(env);

	(void)trust_run(c->f.env, "alice", twice, &out);
	assert_int_equal(trust_count(out, what), 0);
	free(out);
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
}

/* Root makes its runtime directory, then drops to nobody for good, or
 * only for a while: every transaction works, no error, nothing left. */
static void test_uid_drop(void **state)
{
	static const char *const drop[] = {
		"txn:" PW, "dir", "setuid:65534", "dir", "txn:" PW, "dir", NULL
	};
	static const char *const temporary[] = {
		"txn:" PW, "seteuid:65534", "txn:" PW, "seteuid:0",
		"txn:" PW, NULL
	};
	struct trust_ctx *c = *state;
	char *out, *d0, *d1;

	if (!trust_need_root("switching from root to nobody")) {
		skip();
	}
	/* a TMPDIR both may use, as /tmp */
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	assert_int_equal(trust_run(c->f.env, "alice", drop, &out), 0);
	assert_int_equal(trust_count(out, "txn: 0\n"), 2);
	assert_null(strstr(out, "PWRAP_ERROR"));
	/* a new directory right at the switch (the environment never names
	 * one that is gone), used by the next transaction */
	d0 = trust_nth_dir(out, 0);
	d1 = trust_nth_dir(out, 1);
	assert_string_not_equal(d0, d1);
	free(d0);
	d0 = trust_nth_dir(out, 2);
	assert_string_equal(d0, d1);
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(d0);
	free(d1);
	free(out);

	assert_int_equal(trust_run(c->f.env, "alice", temporary, &out), 0);
	assert_int_equal(trust_count(out, "txn: 0\n"), 3);
	assert_null(strstr(out, "PWRAP_ERROR"));
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(out);
}

/*
 * Root switches to nobody for a while and back: root's transactions after
 * that must read nothing nobody could have written, whatever nobody does
 * meanwhile: neither a directory nobody owns (its conf/ replaced after
 * the switch back) nor a file nobody put into services/ of the directory
 * used while the process ran as nobody (root's own since issue 34:
 * test_trust_uid has the attack while the process runs as nobody).
 */
static void test_uid_back_to_root(void **state)
{
	static const char *const conf_steps[] = {
		"txn:" PW, "seteuid:65534", "txn:" PW, "seteuid:0",
		"txn:" PW, "dir", "wait", "txn:wrong", NULL
	};
	static const char *const svc_steps[] = {
		"txn:" PW, "seteuid:65534", "txn:" PW, "dir", "wait",
		"seteuid:0", "txn:wrong", NULL
	};
	struct trust_ctx *c = *state;
	struct trust_paused p;
	struct stat st;
	char *top;
	bool planted;
	int rc;

	if (!trust_need_root("switching from root to nobody and back")) {
		skip();
	}
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	trust_pause_start(&p, c->f.env, conf_steps);
	assert_int_equal(trust_count(p.out, "txn: 0\n"), 3);
	top = trust_first_top(p.out);
	assert_int_equal(stat(top, &st), 0);
	planted = trust_plant_as_nobody(top, "conf");
	rc = trust_pause_finish(&p);
	if (planted || rc != 1 || !hu_has_rc(p.out, "txn", PAM_AUTH_ERR) ||
	    st.st_uid != 0) {
		fail_msg("root's runtime directory %s is uid %lu's; nobody %s "
			 "replace its conf/%s; the wrong password gave:\n%s",
			 top, (unsigned long)st.st_uid,
			 planted ? "could" : "could not", SERVICE, p.out);
	}
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(top);
	free(p.out);

	trust_pause_start(&p, c->f.env, svc_steps);
	top = trust_first_top(p.out);
	/* the directory in use while the process runs as nobody is still
	 * root's (issue 34; it used to be nobody's own, whose files were
	 * left behind at the switch back): nobody cannot write there */
	planted = trust_plant_as_nobody(top, "services");
	rc = trust_pause_finish(&p);
	if (planted || rc != 1 || !hu_has_rc(p.out, "txn", PAM_AUTH_ERR)) {
		fail_msg("nobody %s put services/%s into %s; the wrong "
			 "password gave:\n%s", planted ? "could" : "could not",
			 SERVICE, top, p.out);
	}
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(top);
	free(p.out);
}

#define T(f) cmocka_unit_test_setup_teardown(f, trust_setup, trust_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tmpdir_other_owner),
		T(test_tmpdir_writable),
		T(test_tmpdir_symlink),
		T(test_runtime_dir_renamed),
		T(test_conf_replaced),
		T(test_syslog_masked_before_cut),
		T(test_daemon_leaves_nothing),
		T(test_daemon_parent_ends_last),
		T(test_daemon_then_drop),
		T(test_child_drop_leaves_nothing),
		T(test_not_enabled_said),
		T(test_uid_drop),
		T(test_uid_back_to_root),
	};

	tu_alarm(TU_SUITE_HANG_SECONDS, "test_trust: a test hangs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
