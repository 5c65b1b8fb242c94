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
 *   full_bases             a full TMPDIR, /dev/shm, /tmp: the next base is
 *                          used for every write; all full: a clear error;
 *                          nothing left (root, private mount namespace)
 *   syslog_masked_before_cut  a password across the old 2 KiB cut of a
 *                          module's log line is masked all the same
 *   daemon_leaves_nothing  daemon(3): no directory outlives the processes
 *   not_enabled_said       preloaded with a service directory but
 *                          PAM_WRAPPER not 1: one line per process
 *   uid_drop               root drops to nobody (setuid) or switches for a
 *                          while (seteuid): a new directory at once, no
 *                          error, nothing left (root)
 *
 * Tests that need root say so and skip when run as another user.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hard_util.h"

#define SERVICE "trust"
#define PW "Qx7Zp9WmK3"
#define NOBODY 65534
#define PERMIT \
	"auth sufficient pam_permit.so\naccount sufficient pam_permit.so\n"

struct ctx {
	struct hu_fixture f;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	hu_fixture_init(&c->f, SERVICE);
	tu_write_file(c->f.passdb, "alice:" PW ":" SERVICE "\n",
		      strlen("alice:" PW ":" SERVICE "\n"), 0644);
	/* readable by nobody too (the uid drop test) */
	assert_int_equal(chmod(c->f.top, 0755), 0);
	assert_int_equal(chmod(c->f.db_dir, 0755), 0);
	assert_int_equal(chmod(c->f.svc, 0755), 0);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	hu_fixture_free(&c->f);
	free(c);
	return 0;
}

static bool need_root(const char *why)
{
	if (geteuid() == 0) {
		return true;
	}
	print_message("SKIPPED: needs root: %s\n", why);
	return false;
}

/* argv for trust_client with the steps (NULL-terminated), malloc'd. */
static char **client_argv(const char *user, const char *const *steps)
{
	size_t n = 0;
	char **v;

	while (steps[n] != NULL) {
		n++;
	}
	v = calloc(n + 4, sizeof(*v));
	assert_non_null(v);
	v[0] = (char *)TRUST_CLIENT;
	v[1] = (char *)SERVICE;
	v[2] = (char *)user;
	memcpy(v + 3, steps, n * sizeof(*v));
	return v;
}

/* Runs the client to its end; stdout and stderr together in *out.
 * Returns its exit code (-1: killed). */
static int run(char **env, const char *user, const char *const *steps,
	       char **out)
{
	char **argv = client_argv(user, steps);
	int st = tu_run_capture(argv, env, out, NULL);

	free(argv);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The value of the nth (0-based) "dir: " line of out, malloc'd. */
static char *nth_dir(const char *out, int nth)
{
	const char *p = out;

	for (;;) {
		p = strstr(p, "dir: ");
		assert_non_null(p);
		if (p == out || p[-1] == '\n') {
			if (nth-- == 0) {
				break;
			}
		}
		p++;
	}
	p += 5;
	return strndup(p, strcspn(p, "\n"));
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p != NULL;
	     p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* A client stopped at its "wait" step: *out holds what it printed up to
 * there (stdout and stderr), gate releases it. */
struct paused {
	pid_t pid;
	FILE *o;
	int gate;
	char *out;
};

static void pause_start(struct paused *p, char **env, const char *const *steps)
{
	char **argv = client_argv("alice", steps);
	int g[2], fd;
	size_t cap = 0, len = 0;
	char *line = NULL;

	assert_int_equal(pipe2(g, O_CLOEXEC), 0);
	p->pid = tu_spawn(argv, env, &fd, NULL, g[0], TU_SPAWN_MERGE);
	close(g[0]);
	p->gate = g[1];
	p->o = fdopen(fd, "r");
	assert_non_null(p->o);
	p->out = strdup("");
	while (getline(&line, &cap, p->o) > 0) {
		len = strlen(p->out);
		p->out = realloc(p->out, len + strlen(line) + 1);
		strcpy(p->out + len, line);
		if (strcmp(line, "wait\n") == 0) {
			break;
		}
	}
	free(line);
	free(argv);
	assert_non_null(strstr(p->out, "wait\n"));
}

/* Releases the client; appends the rest of its output; its exit code. */
static int pause_finish(struct paused *p)
{
	char buf[4096];
	size_t n, len;
	int st;

	assert_int_equal(write(p->gate, "x", 1), 1);
	close(p->gate);
	while ((n = fread(buf, 1, sizeof(buf), p->o)) > 0) {
		len = strlen(p->out);
		p->out = realloc(p->out, len + n + 1);
		memcpy(p->out + len, buf, n);
		p->out[len + n] = '\0';
	}
	fclose(p->o);
	st = tu_wait(p->pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the base directory -------------------------------------------------- */

/*
 * With TMPDIR's mode (and owner) as given, the client runs: it must end
 * well, and when `trusted` its runtime directory is below TMPDIR, else
 * nowhere in it (checked while the client lives) with one PWRAP_WARN
 * naming `why`.
 */
static void check_tmpdir(struct ctx *c, bool trusted, const char *why)
{
	static const char *const steps[] = { "dir", "wait", "txn:" PW, NULL };
	struct paused p;
	char *dir;

	pause_start(&p, c->f.env, steps);
	dir = nth_dir(p.out, 0);
	if (trusted) {
		assert_true(under(dir, c->f.tmp));
		assert_int_equal(count(p.out, "PWRAP_WARN"), 0);
	} else {
		assert_false(under(dir, c->f.tmp));
		assert_int_equal(tu_count_entries(c->f.tmp, true), 0);
		assert_int_equal(count(p.out, "PWRAP_WARN"), 1);
		assert_non_null(strstr(p.out, "not using TMPDIR"));
		assert_non_null(strstr(p.out, why));
	}
	assert_int_equal(pause_finish(&p), 0);
	assert_non_null(strstr(p.out, "txn: 0\n"));
	assert_null(strstr(p.out, "PWRAP_ERROR"));
	assert_int_equal(tu_wait_empty(c->f.tmp, 10), 0);
	free(dir);
	free(p.out);
}

/* sudo -E keeps a user's TMPDIR for a test run as root: that user could
 * rename or swap what root's process makes there. */
static void test_tmpdir_other_owner(void **state)
{
	struct ctx *c = *state;

	if (!need_root("a TMPDIR owned by another user is made with chown")) {
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
	struct ctx *c = *state;

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
	struct ctx *c = *state;
	char *link = tu_path(c->f.top, "tmplink");
	char *real = realpath(c->f.tmp, NULL);
	char **env = tu_env_wrapped(link, c->f.svc, "1", NULL);
	char *out, *dir;

	assert_int_equal(symlink(c->f.tmp, link), 0);
	assert_int_equal(run(env, "alice", steps, &out), 0);
	dir = nth_dir(out, 0);
	assert_true(under(dir, real));
	assert_int_equal(tu_wait_empty(c->f.tmp, 10), 0);
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
static void swap_between(struct ctx *c, bool whole)
{
	static const char *const steps[] = {
		"txn:" PW, "dir", "wait", "txn:wrong", "dir", NULL
	};
	struct paused p;
	char *svc, *top, *victim, *moved;

	pause_start(&p, c->f.env, steps);
	assert_non_null(strstr(p.out, "txn: 0\n"));
	svc = nth_dir(p.out, 0);
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
	assert_int_equal(pause_finish(&p), 1);
	/* PAM_AUTH_ERR, not the permissive stack */
	assert_non_null(strstr(p.out, "txn: 7\n"));
	assert_non_null(strstr(p.out, "renamed or replaced"));
	free(svc);
	svc = nth_dir(p.out, 1);
	assert_false(under(svc, top));
	/* what the test made or moved is the test's to remove; the client
	 * removed its new directory */
	tu_rmtree(whole ? moved : top);
	tu_rmtree(victim);
	assert_int_equal(tu_wait_empty(c->f.tmp, 10), 0);
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

/* ---- full bases ---------------------------------------------------------- */

/* Mounts a tmpfs at dir (mode) and fills it; false with errno on error. */
static bool mount_full(const char *dir, const char *mode)
{
	char opts[64], chunk[65536], *filler = NULL;
	bool ok;
	int fd;

	snprintf(opts, sizeof(opts), "size=256k,mode=%s", mode);
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0 ||
	    asprintf(&filler, "%s/filler", dir) < 0) {
		return false;
	}
	fd = open(filler, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	free(filler);
	if (fd < 0) {
		return false;
	}
	memset(chunk, 'x', sizeof(chunk));
	while (write(fd, chunk, sizeof(chunk)) > 0) {
		;
	}
	/* down to the last byte */
	while (write(fd, chunk, 1) > 0) {
		;
	}
	ok = errno == ENOSPC;
	close(fd);
	return ok;
}

/* Entries of dir other than the filler, or -1. */
static int left_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL) {
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		n += strcmp(de->d_name, ".") != 0 &&
		     strcmp(de->d_name, "..") != 0 &&
		     strcmp(de->d_name, "filler") != 0;
	}
	closedir(d);
	return n;
}

/*
 * In a child in a mount namespace of its own (never the machine's): full
 * tmpfs on each of the `n` dirs, then the client runs with env; its output
 * and then "left: N" (our entries left in the full dirs) go to fd out.
 * Exit code: the client's, 77 when no private namespace can be made.
 */
static int run_full(char **env, const char *const *dirs, int n, char **out)
{
	static const char *const steps[] = { "txn:" PW, "dir", NULL };
	char **argv = client_argv("alice", steps);
	int o[2], st;
	pid_t pid;

	assert_int_equal(pipe2(o, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int left = 0;

		tu_child_signals();
		dup2(o[1], 1);
		dup2(o[1], 2);
		if (unshare(CLONE_NEWNS) != 0 ||
		    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
			printf("no private mount namespace: %s\n",
			       strerror(errno));
			fflush(stdout);
			_exit(77);
		}
		for (int i = 0; i < n; i++) {
			if (!mount_full(dirs[i], i == 0 ? "0700" : "1777")) {
				printf("cannot fill a tmpfs at %s: %s\n",
				       dirs[i], strerror(errno));
				fflush(stdout);
				_exit(99);
			}
		}
		pid = fork();
		if (pid == 0) {
			execve(argv[0], argv, env);
			_exit(127);
		}
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
			;
		}
		for (int i = 0; i < n; i++) {
			int l = left_in(dirs[i]);

			left += l < 0 ? 1000 : l;
		}
		printf("left: %d\n", left);
		fflush(stdout);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 98);
	}
	close(o[1]);
	*out = tu_slurp(o[0], NULL);
	st = tu_wait(pid);
	free(argv);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether path is below /tmp or /dev/shm (hidden when those are full). */
static bool below_bases(const char *path)
{
	return path == NULL || under(path, "/tmp") || under(path, "/dev/shm");
}

static void test_full_bases(void **state)
{
	struct ctx *c = *state;
	const char *build = getenv("PWRAP_BUILD_DIR");
	char *top, *tmp, *svc, *passdb, *text, *out, *dir;
	const char *dirs[3];
	char **env;
	int rc;

	(void)c;
	if (!need_root("mounting a full tmpfs needs a private mount "
		       "namespace (unshare -m)")) {
		skip();
	}
	/* everything the client needs lies outside the bases filled */
	if (below_bases(build) || below_bases(getenv("PWRAP_PRELOAD"))) {
		print_message("SKIPPED: the build tree is below /tmp or "
			      "/dev/shm, which this test fills\n");
		skip();
	}
	assert_true(asprintf(&top, "%s/tests/hardening/trust-full.XXXXXX",
			     build) > 0);
	assert_non_null(mkdtemp(top));
	tmp = tu_subdir(top, "tmp");
	svc = tu_subdir(top, "svc");
	passdb = tu_path(top, "passdb");
	tu_write_file(passdb, "alice:" PW ":" SERVICE "\n",
		      strlen("alice:" PW ":" SERVICE "\n"), 0600);
	text = hu_matrix_service(passdb);
	tu_write_text(svc, SERVICE, text);
	env = tu_env_wrapped(tmp, svc, "1", NULL);
	dirs[0] = tmp;
	dirs[1] = "/dev/shm";
	dirs[2] = "/tmp";

	/* TMPDIR full: /dev/shm (a directory made in TMPDIR is removed) */
	rc = run_full(env, dirs, 1, &out);
	if (rc == 77) {
		print_message("SKIPPED: %s", out);
		tu_rmtree(top);
		skip();
	}
	assert_int_equal(rc, 0);
	dir = nth_dir(out, 0);
	assert_true(under(dir, "/dev/shm"));
	assert_non_null(strstr(out, "left: 0\n"));
	assert_null(strstr(out, "PWRAP_ERROR"));
	free(dir);
	free(out);

	/* TMPDIR and /dev/shm full: /tmp */
	assert_int_equal(run_full(env, dirs, 2, &out), 0);
	dir = nth_dir(out, 0);
	assert_true(under(dir, "/tmp"));
	assert_non_null(strstr(out, "left: 0\n"));
	assert_null(strstr(out, "PWRAP_ERROR"));
	free(dir);
	free(out);

	/* all full: pam_start fails, saying why for each; nothing left */
	assert_int_equal(run_full(env, dirs, 3, &out), 1);
	assert_non_null(strstr(out, "txn: start 26\n"));	/* PAM_ABORT */
	/* (at load and at pam_start) */
	rc = count(out, "PWRAP_ERROR");
	assert_true(rc >= 1);
	assert_int_equal(count(out, "cannot create a runtime directory"), rc);
	assert_int_equal(count(out, "No space left on device"), 3 * rc);
	assert_non_null(strstr(out, "dir: -\n"));	/* none to point to */
	assert_non_null(strstr(out, "left: 0\n"));
	free(out);

	tu_env_free(env);
	tu_rmtree(top);
	free(text);
	free(passdb);
	free(svc);
	free(tmp);
	free(top);
}

/* ---- what a process does ------------------------------------------------- */

/* pam_matrix logs "<passdb>: unknown user <user>"; the user name holds the
 * password so that it crosses the 2047th byte of the message, then again
 * and again past the end of a log line. */
static void test_syslog_masked_before_cut(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct ctx *c = *state;
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
	assert_int_equal(run(env, user, steps, &out), 1);
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
	struct ctx *c = *state;
	char **argv = client_argv("alice", steps);
	char *out;
	int fd;
	pid_t pid = tu_spawn(argv, c->f.env, &fd, NULL, -1, TU_SPAWN_MERGE);

	assert_int_equal(tu_wait_bounded(pid, 30), 0);
	/* the daemon's end: it held the pipe */
	out = tu_slurp(fd, NULL);
	assert_non_null(strstr(out, "txn: 0\n"));
	assert_int_equal(tu_wait_empty(c->f.tmp, 10), 0);
	free(out);
	free(argv);
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
	struct ctx *c = *state;
	char **env;
	char *out;

	env = tu_env_wrapped(c->f.tmp, c->f.svc, NULL, NULL);
	(void)run(env, "alice", twice, &out);
	assert_int_equal(count(out, what), 1);
	assert_non_null(strstr(out, "PAM_WRAPPER is unset"));
	assert_non_null(strstr(out, "PWRAP_WARN"));
	free(out);
	(void)run(env, "alice", no_pam, &out);
	assert_int_equal(count(out, what), 0);
	free(out);
	tu_env_free(env);

	env = tu_env_wrapped(c->f.tmp, c->f.svc, "0", NULL);
	(void)run(env, "alice", twice, &out);
	assert_int_equal(count(out, what), 1);
	assert_non_null(strstr(out, "PAM_WRAPPER is '0'"));
	free(out);
	tu_env_free(env);

	env = tu_env_wrapped(c->f.tmp, NULL, NULL, NULL);
	(void)run(env, "alice", twice, &out);
	assert_int_equal(count(out, what), 0);
	free(out);
	tu_env_free(env);

	(void)run(c->f.env, "alice", twice, &out);
	assert_int_equal(count(out, what), 0);
	free(out);
	assert_int_equal(tu_wait_empty(c->f.tmp, 10), 0);
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
	struct ctx *c = *state;
	char *out, *d0, *d1;

	if (!need_root("switching from root to nobody")) {
		skip();
	}
	/* a TMPDIR both may use, as /tmp */
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	assert_int_equal(run(c->f.env, "alice", drop, &out), 0);
	assert_int_equal(count(out, "txn: 0\n"), 2);
	assert_null(strstr(out, "PWRAP_ERROR"));
	/* a new directory right at the switch (the environment never names
	 * one that is gone), used by the next transaction */
	d0 = nth_dir(out, 0);
	d1 = nth_dir(out, 1);
	assert_string_not_equal(d0, d1);
	free(d0);
	d0 = nth_dir(out, 2);
	assert_string_equal(d0, d1);
	assert_int_equal(tu_wait_empty(c->f.tmp, 10), 0);
	free(d0);
	free(d1);
	free(out);

	assert_int_equal(run(c->f.env, "alice", temporary, &out), 0);
	assert_int_equal(count(out, "txn: 0\n"), 3);
	assert_null(strstr(out, "PWRAP_ERROR"));
	assert_int_equal(tu_wait_empty(c->f.tmp, 10), 0);
	free(out);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tmpdir_other_owner),
		T(test_tmpdir_writable),
		T(test_tmpdir_symlink),
		T(test_runtime_dir_renamed),
		T(test_conf_replaced),
		T(test_full_bases),
		T(test_syslog_masked_before_cut),
		T(test_daemon_leaves_nothing),
		T(test_not_enabled_said),
		T(test_uid_drop),
	};

	tu_alarm(280, "test_trust: a test hangs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
