/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process-level tests of libpam_wrapper.so: each test runs wrapped child
 * processes (tests/wrapper/pwrap_client, or /bin/sh) with a private TMPDIR
 * and checks what they leave there: nothing for a process that never uses
 * PAM, nothing after a normal exit; after _exit, exec or SIGKILL the
 * directory stays until the next wrapped process, which removes it (never a
 * live one: liveness is a lock, not a pid); 200 concurrent wrapped processes
 * all succeed.  This binary itself is not preloaded.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

struct ctx {
	char *tmp;	/* the children's TMPDIR */
	char *svc;	/* their PAM_WRAPPER_SERVICE_DIR */
	char **env;
};

static char **make_env(const struct ctx *c, bool enabled)
{
	const char *const extra[] = {
		"PWRAP_CLIENT_PASSWORD=secret",
		enabled ? NULL : "PAM_WRAPPER_UNUSED=1", NULL
	};

	return tu_env_wrapped(c->tmp, c->svc, enabled ? "1" : NULL, extra);
}

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	c->tmp = tu_mkdtemp("pwrap-test");
	c->svc = tu_mkdtemp("pwrap-test");
	tu_write_text(c->svc, "permit", "auth required pam_permit.so\n"
		      "account required pam_permit.so\n");
	c->env = make_env(c, true);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	tu_rmtree(c->tmp);
	tu_rmtree(c->svc);
	free(c->tmp);
	free(c->svc);
	tu_env_free(c->env);
	free(c);
	return 0;
}

static char *client_path(void)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/tests/wrapper/pwrap_client",
			     getenv("PWRAP_BUILD_DIR")) > 0);
	return p;
}

/* Spawns argv with env; stdout to *out_fd when out_fd is given, else (and
 * stderr) ours. */
static pid_t spawn(char *const argv[], char **env, int *out_fd)
{
	return tu_spawn(argv, env, out_fd, NULL, -1, TU_SPAWN_INHERIT);
}

/* Entries of dir whose name starts with prefix. */
static int count_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	}
	closedir(d);
	return n;
}

/*
 * The contract after an end without exit() (_exit, exec, a kill): the dead
 * process's directory is still there, and the next wrapped process removes
 * it when it makes its own; that one exits normally, so then nothing is
 * left at all.
 */
static void assert_swept_by_next(struct ctx *c);

/*
 * cmake/PwrapTesting.cmake runs the ".nobody" twin of this binary through
 * "setpriv --reuid=nobody --regid=nogroup --clear-groups" with
 * PWRAP_AS_NOBODY=1, and only when it was configured as root (so the build
 * tree is root's).  The twin must really be nobody:nogroup with no groups;
 * the plain run must really be the build tree's owner (not the twin run
 * with the variable lost).
 */
static void test_runs_unprivileged_when_asked(void **state)
{
	const char *build = getenv("PWRAP_BUILD_DIR");
	struct stat st;

	(void)state;
	if (build == NULL) {
		print_message("PWRAP_BUILD_DIR unset: not run by ctest, "
			      "cannot tell which mode this is\n");
		skip();
	}
	assert_int_equal(stat(build, &st), 0);

	if (getenv("PWRAP_AS_NOBODY") != NULL) {
		struct passwd *pw = getpwnam("nobody");
		struct group *gr = getgrnam("nogroup");

		assert_non_null(pw);
		assert_non_null(gr);
		assert_int_not_equal(getuid(), 0);
		assert_int_not_equal(geteuid(), 0);
		assert_int_equal(getuid(), pw->pw_uid);
		assert_int_equal(geteuid(), pw->pw_uid);
		assert_int_equal(getgid(), gr->gr_gid);
		assert_int_equal(getegid(), gr->gr_gid);
		assert_int_equal(getgroups(0, NULL), 0);
		if (getuid() == st.st_uid) {
			fail_msg("PWRAP_AS_NOBODY set but running as the owner "
				 "(uid %u) of %s", (unsigned)st.st_uid, build);
		}
	} else if (getuid() != st.st_uid) {
		fail_msg("PWRAP_AS_NOBODY unset but uid %u is not the owner "
			 "(uid %u) of %s", (unsigned)getuid(),
			 (unsigned)st.st_uid, build);
	}
}

static void test_no_work_without_pam(void **state)
{
	struct ctx *c = *state;
	char *argv[] = { "/bin/sh", "-c",
			 "ls -A \"$TMPDIR\"; echo \"${PAM_WRAPPER_RUNTIME_DIR-unset}\"",
			 NULL };
	char buf[512] = { 0 };
	ssize_t n;
	int fd;
	pid_t pid = spawn(argv, c->env, &fd);

	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(WIFEXITED(tu_wait(pid)));
	assert_true(n > 0);
	/* nothing in TMPDIR while it ran, and no runtime dir exported */
	assert_string_equal(buf, "unset\n");
	assert_int_equal(tu_count_entries(c->tmp, false), 0);
}

static void run_client_end(struct ctx *c, const char *end, bool sync_clean)
{
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth,acct", (char *)end,
			 NULL };
	int st = tu_wait(spawn(argv, c->env, NULL));

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	if (sync_clean) {
		assert_int_equal(tu_count_entries(c->tmp, false), 0);
	} else {
		assert_swept_by_next(c);
	}
	free(client);
}

static void assert_swept_by_next(struct ctx *c)
{
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth", "exit", NULL };
	int st;

	/* the dead one's */
	assert_int_equal(tu_count_entries(c->tmp, false), 1);
	st = tu_wait(spawn(argv, c->env, NULL));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(tu_count_entries(c->tmp, false), 0);
	free(client);
}

static void test_clean_after_exit(void **state)
{
	run_client_end(*state, "exit", true);
}

static void test_clean_after__exit(void **state)
{
	run_client_end(*state, "_exit", false);
}

static void test_clean_after_exec(void **state)
{
	run_client_end(*state, "exec", false);
}

/* A daemon-like process without stdin and stdout: the wrapper's lock
 * descriptor must not land on 0 or 1. */
static void test_clean_without_stdio(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth", "_exit", NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	posix_spawn_file_actions_addclose(&fa, 0);
	posix_spawn_file_actions_addclose(&fa, 1);
	assert_int_equal(posix_spawn(&pid, client, &fa, NULL, argv, c->env), 0);
	posix_spawn_file_actions_destroy(&fa);
	st = tu_wait(pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);	/* it did authenticate */
	assert_swept_by_next(c);
	free(client);
}

/* Runs the client until it hangs after its transaction, adds `depth`
 * nested directories to its runtime directory, kills it: the next wrapped
 * process must remove everything. */
static void kill_hanging_client(struct ctx *c, int depth)
{
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth", "hang", NULL };
	char buf[256] = { 0 };
	size_t got = 0;
	int fd, st;
	pid_t pid = spawn(argv, c->env, &fd);
	DIR *d;
	struct dirent *de;
	char *path = NULL;

	while (strstr(buf, "ready\n") == NULL && got < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);

		assert_true(n > 0);
		got += (size_t)n;
	}
	close(fd);
	/* in use */
	assert_int_equal(tu_count_entries(c->tmp, false), 1);
	d = opendir(c->tmp);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL && path == NULL) {
		if (de->d_name[0] != '.') {
			assert_true(asprintf(&path, "%s/%s/services", c->tmp,
					     de->d_name) > 0);
		}
	}
	closedir(d);
	assert_non_null(path);
	for (int i = 0; i < depth; i++) {
		char *sub = NULL;

		assert_true(asprintf(&sub, "%s/d%d", path, i) > 0);
		assert_int_equal(mkdir(sub, 0700), 0);
		free(path);
		path = sub;
	}
	tu_write_text(path, "deepest", "x\n");
	assert_int_equal(kill(pid, SIGKILL), 0);
	st = tu_wait(pid);
	assert_true(WIFSIGNALED(st));
	assert_swept_by_next(c);
	free(path);
	free(client);
}

static void test_clean_after_sigkill(void **state)
{
	kill_hanging_client(*state, 0);
}

/* A deep tree in a dead directory is removed whole. */
static void test_clean_deep_tree_after_sigkill(void **state)
{
	kill_hanging_client(*state, 60);
}

static void test_disabled_creates_nothing(void **state)
{
	struct ctx *c = *state;
	char **env = make_env(c, false);
	char *client = client_path();
	char *argv[] = { client, "pwrap-passthrough", "pwrap-no-such-user",
			 "auth", NULL };
	int st;

	tu_write_text(c->svc, "pwrap-passthrough", "auth required pam_permit.so\n");
	st = tu_wait(spawn(argv, env, NULL));
	/* the system's configuration refused; nothing was redirected */
	assert_true(WIFEXITED(st));
	assert_int_not_equal(WEXITSTATUS(st), 0);
	assert_int_equal(tu_count_entries(c->tmp, false), 0);
	free(client);
	tu_env_free(env);
}

static void test_keep_dir(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth", NULL };
	char **env = make_env(c, true);
	int st;

	tu_env_add(&env, "PAM_WRAPPER_KEEP_DIR=1");
	st = tu_wait(spawn(argv, env, NULL));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(tu_count_entries(c->tmp, false), 1);
	assert_int_equal(count_prefixed(c->tmp, "pam_wrapper_kept."), 1);
	/* and the next wrapped process does not sweep it away */
	st = tu_wait(spawn(argv, c->env, NULL));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(tu_count_entries(c->tmp, false), 1);
	assert_int_equal(count_prefixed(c->tmp, "pam_wrapper_kept."), 1);
	tu_env_free(env);
	free(client);
}

static bool exists_in(const char *dir, const char *name)
{
	char *p = tu_path(dir, name);
	bool there = access(p, F_OK) == 0;

	free(p);
	return there;
}

/* Makes base/name with a .lock file; returns the lock's open descriptor
 * (the caller may flock it to play a live owner). */
static int fake_dir(const char *base, const char *name, bool with_lock)
{
	char *top = tu_path(base, name);
	char *lock = tu_path(top, ".lock");
	char *svc = tu_path(top, "services");
	int fd = -1;

	assert_int_equal(mkdir(top, 0700), 0);
	if (with_lock) {
		fd = open(lock, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(mkdir(svc, 0700), 0);
		tu_write_text(svc, "other", "auth required pam_deny.so\n");
	}
	free(top);
	free(lock);
	free(svc);
	return fd;
}

/*
 * What the next wrapped process sweeps: directories whose lock nobody holds
 * (whatever pid their name has), and empty ones without a lock (a maker
 * killed before it made its lock).  Left alone: a directory whose lock is
 * held, even when the pid in its name is dead (another PID namespace), and
 * one with content but no lock (not made by us).
 */
static void test_stale_dirs_swept(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth", NULL };
	char *sh_argv[] = { "/bin/true", NULL };
	pid_t gone = spawn(sh_argv, c->env, NULL);
	char dead[64], empty[64], live[64], foreign[64];
	int dead_fd, live_fd;
	char *path;
	int st;

	tu_wait(gone);	/* its pid is now free */
	snprintf(dead, sizeof(dead), "pam_wrapper.%ld.AbCdEf", (long)getpid());
	snprintf(empty, sizeof(empty), "pam_wrapper.%ld.EmPtYy", (long)gone);
	snprintf(live, sizeof(live), "pam_wrapper.%ld.XyZxyZ", (long)gone);
	snprintf(foreign, sizeof(foreign), "pam_wrapper.%ld.FoReiG", (long)gone);
	dead_fd = fake_dir(c->tmp, dead, true);
	(void)fake_dir(c->tmp, empty, false);
	live_fd = fake_dir(c->tmp, live, true);
	assert_int_equal(flock(live_fd, LOCK_SH), 0);
	(void)fake_dir(c->tmp, foreign, false);
	path = tu_path(c->tmp, foreign);
	tu_write_text(path, "x", "x\n");
	free(path);

	st = tu_wait(spawn(argv, c->env, NULL));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_false(exists_in(c->tmp, dead));
	assert_false(exists_in(c->tmp, empty));
	assert_true(exists_in(c->tmp, live));
	assert_true(exists_in(c->tmp, foreign));
	/* the live one stays as long as its lock is held, then goes */
	close(live_fd);
	close(dead_fd);
	path = tu_path(c->tmp, foreign);
	tu_rmtree(path);
	free(path);
	st = tu_wait(spawn(argv, c->env, NULL));
	assert_true(WIFEXITED(st));
	assert_int_equal(tu_count_entries(c->tmp, false), 0);
	free(client);
}

/* A wrapper installed below a directory with a blank in its name (here
 * preloaded through a link, as LD_PRELOAD itself splits at blanks): libpam
 * would split the module path at the blank, so bare names of our modules
 * must still load (through a path without one). */
static void test_module_dir_with_blank(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, "matrix", "alice", "auth", NULL };
	char *base = tu_mkdtemp("pwrap-test");
	char *cmd = NULL, *lib = NULL, *preload = NULL, *svc = NULL;
	const char *orig = getenv("PWRAP_PRELOAD");
	const char *real = getenv("PWRAP_LIB");
	char **env = make_env(c, true);
	int st;

	assert_non_null(real);
	assert_true(asprintf(&cmd, "mkdir -p '%s/with blank' && cp -L '%s' "
			     "'%s/with blank/libpam_wrapper.so' && cp -r '%s' "
			     "'%s/with blank/pam_wrapper' && ln -s 'with blank' "
			     "'%s/link'", base, real, base,
			     getenv("PWRAP_MODULE_DIR"), base, base) > 0);
	assert_int_equal(system(cmd), 0);
	assert_true(asprintf(&lib, "%s/link/libpam_wrapper.so", base) > 0);
	/* the sanitizer runtimes (if any) stay in front */
	assert_true(asprintf(&preload, "LD_PRELOAD=%.*s%s",
			     (int)(strlen(orig) - strlen(real)), orig, lib) > 0);
	for (size_t i = 0; env[i] != NULL; i++) {
		if (strncmp(env[i], "LD_PRELOAD=", 11) == 0) {
			free(env[i]);
			env[i] = preload;
		}
	}
	tu_write_text(base, "passdb", "alice:secret:matrix\n");
	assert_true(asprintf(&svc, "auth required pam_matrix.so passdb=%s/passdb\n",
			     base) > 0);
	tu_write_text(c->svc, "matrix", svc);
	st = tu_wait(spawn(argv, env, NULL));
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	tu_rmtree(base);
	free(base);
	free(cmd);
	free(lib);
	free(svc);
	tu_env_free(env);
	free(client);
}

/* A TMPDIR that cannot take the runtime directory: the next location is
 * used, quietly, and nothing is left anywhere. */
static void test_tmpdir_unusable_falls_back(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth", NULL };
	char **env = make_env(c, true);
	char *bad = tu_path(c->tmp, "not-a-dir");
	char *out;
	int st;

	tu_write_text(c->tmp, "not-a-dir", "x\n");
	tu_env_set(&env, "TMPDIR", bad);
	st = tu_run_capture(argv, env, &out, NULL);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_null(strstr(out, "PWRAP_ERROR"));
	/* only our file */
	assert_int_equal(tu_count_entries(c->tmp, false), 1);
	free(out);
	free(bad);
	tu_env_free(env);
	free(client);
}

/* A service file of 5 MiB is read as bare libpam reads it (issue 34:
 * there used to be a 4 MiB limit, in no man page). */
static void test_huge_service_file(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, "huge", "alice", "auth", NULL };
	char *path = tu_path(c->svc, "huge");
	char *out;
	FILE *f = fopen(path, "w");
	int st;

	assert_non_null(f);
	for (int i = 0; i < 5 * 1024 * 1024 / 32; i++) {
		fputs("# padding padding padding pad\n", f);
	}
	fputs("auth required pam_permit.so\n", f);
	assert_int_equal(fclose(f), 0);
	st = tu_run_capture(argv, c->env, &out, NULL);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_non_null(strstr(out, "auth: 0"));
	assert_null(strstr(out, "PWRAP_"));
	free(out);
	free(path);
	free(client);
}

#define NPROC 200

static void test_200_concurrent(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, "permit", "alice", "auth,acct", NULL };
	pid_t pids[NPROC];
	int i, ok = 0;

	for (i = 0; i < NPROC; i++) {
		pids[i] = spawn(argv, c->env, NULL);
	}
	for (i = 0; i < NPROC; i++) {
		int st = tu_wait(pids[i]);

		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			ok++;
		}
	}
	assert_int_equal(ok, NPROC);
	/* all exited normally: nothing left, at once */
	assert_int_equal(tu_count_entries(c->tmp, false), 0);
	free(client);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_runs_unprivileged_when_asked),
		T(test_no_work_without_pam),
		T(test_clean_after_exit),
		T(test_clean_after__exit),
		T(test_clean_after_exec),
		T(test_clean_without_stdio),
		T(test_clean_after_sigkill),
		T(test_clean_deep_tree_after_sigkill),
		T(test_disabled_creates_nothing),
		T(test_keep_dir),
		T(test_stale_dirs_swept),
		T(test_module_dir_with_blank),
		T(test_tmpdir_unusable_falls_back),
		T(test_huge_service_file),
		T(test_200_concurrent),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
