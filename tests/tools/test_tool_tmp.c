/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the tools' private directories (tools/common/pwrap_tmp.c,
 * issue 34): made 0700 and held by descriptor, only in a trusted base (the
 * wrapper's rule, src/common/pwrap_base.c), the base passed over named once;
 * removed through descriptors only: a name another user pointed elsewhere
 * (another directory, a link) is left alone while what was made is still
 * emptied, and a sub/ exchanged for a link to a root-only directory during
 * the removal costs that directory nothing.  The cases that need another
 * user (nobody) need root and skip otherwise, saying so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "pwrap_tool.h"
#include "testutil.h"

/* As many as the attack of issue 34 used. */
#define NFILES 20000

/* TMPDIR for the test (its path), restored by the teardown. */
static char *old_tmpdir;

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	old_tmpdir = t != NULL ? strdup(t) : NULL;
	return tu_setup_tmpdir(state);
}

static int teardown(void **state)
{
	if (old_tmpdir != NULL) {
		setenv("TMPDIR", old_tmpdir, 1);
	} else {
		unsetenv("TMPDIR");
	}
	free(old_tmpdir);
	old_tmpdir = NULL;
	return tu_teardown_tmpdir(state);
}

static bool under(const char *path, const char *dir)
{
	char *real = realpath(dir, NULL);
	size_t n = real != NULL ? strlen(real) : 0;
	bool in = real != NULL && strncmp(path, real, n) == 0 &&
		  path[n] == '/';

	free(real);
	return in;
}

static void nobody_ids(uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam("nobody");

	assert_non_null(pw);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
}

/* In a forked child: become nobody (the test's other user). */
static void become_nobody(void)
{
	uid_t uid;
	gid_t gid;

	nobody_ids(&uid, &gid);
	if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0) {
		_exit(3);
	}
}

/* Made in a trusted TMPDIR: 0700, held, written through its descriptor,
 * removed with all it holds. */
static void test_made_held_removed(void **state)
{
	const char *dir = *state;
	struct pwrap_tmp *t;
	struct stat st;
	char *passdb = NULL;

	setenv("TMPDIR", dir, 1);
	t = pwrap_tmp_make("unit");
	assert_non_null(t);
	assert_true(under(t->path, dir));
	assert_int_equal(stat(t->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_true(st.st_dev == t->dev && st.st_ino == t->ino);
	assert_int_equal(pwrap_tmp_write(t, "passdb", "bob:secret:svc\n", &passdb),
			 0);
	assert_string_equal(strrchr(passdb, '/') + 1, "passdb");
	free(tu_read_file(passdb, NULL));
	/* a file that exists is never written through */
	assert_int_equal(pwrap_tmp_write(t, "passdb", "x", NULL), -1);
	free(tu_subdir(t->path, "sub"));
	assert_int_equal(pwrap_tmp_remove(t), 0);
	assert_int_equal(tu_count_entries(dir, true), 0);
	free(passdb);
}

/* A TMPDIR anyone may write into (not sticky) is passed over for the next
 * base, said once per process; a sticky one is used. */
static void test_writable_base_passed_over(void **state)
{
	const char *dir = *state;
	char *open_dir = tu_subdir(dir, "open");
	struct pwrap_tmp *t, *t2;
	char *err;

	assert_int_equal(chmod(open_dir, 0777), 0);
	setenv("TMPDIR", open_dir, 1);
	tu_stderr_begin();
	t = pwrap_tmp_make("unit");
	t2 = pwrap_tmp_make("unit");
	err = tu_stderr_end();
	assert_non_null(t);
	assert_non_null(t2);
	assert_false(under(t->path, open_dir));
	assert_false(under(t2->path, open_dir));
	assert_non_null(strstr(err, "not using TMPDIR "));
	assert_non_null(strstr(err, "(writable by everyone and not sticky)"));
	/* once per process */
	assert_null(strstr(strstr(err, "not using") + 1, "not using"));
	assert_int_equal(pwrap_tmp_remove(t), 0);
	assert_int_equal(pwrap_tmp_remove(t2), 0);
	assert_int_equal(tu_count_entries(open_dir, true), 0);

	assert_int_equal(chmod(open_dir, 01777), 0);
	t = pwrap_tmp_make("unit");
	assert_non_null(t);
	assert_true(under(t->path, open_dir));
	assert_int_equal(pwrap_tmp_remove(t), 0);
	free(err);
	free(open_dir);
}

/* A TMPDIR of another user (sudo -E): passed over (root). */
static void test_base_of_another_user(void **state)
{
	const char *dir = *state;
	char *theirs;
	struct pwrap_tmp *t;
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0) {
		TU_SKIP("needs root: the TMPDIR belongs to another user (nobody)");
	}
	nobody_ids(&uid, &gid);
	theirs = tu_subdir(dir, "theirs");
	assert_int_equal(chown(theirs, uid, gid), 0);
	setenv("TMPDIR", theirs, 1);
	t = pwrap_tmp_make("unit");
	assert_non_null(t);
	assert_false(under(t->path, theirs));
	assert_int_equal(tu_count_entries(theirs, true), 0);
	assert_int_equal(pwrap_tmp_remove(t), 0);
	free(theirs);
}

/* The name of what was made now leads elsewhere (renamed away, another
 * directory or a link put there: what an attacker who could rename in the
 * base would do): the removal leaves that name and what it leads to
 * alone, says so, and still empties what was made. */
static void check_replaced(const char *dir, bool by_link)
{
	char *victim = tu_subdir(dir, "victim");
	char *moved = tu_path(dir, "moved");
	struct pwrap_tmp *t;
	char *err, *path;
	int rc;

	tu_write_text(victim, "precious", "x\n");
	setenv("TMPDIR", dir, 1);
	t = pwrap_tmp_make("unit");
	assert_non_null(t);
	assert_int_equal(pwrap_tmp_write(t, "passdb", "bob:secret:svc\n", NULL), 0);
	path = strdup(t->path);
	assert_non_null(path);
	assert_int_equal(rename(path, moved), 0);
	if (by_link) {
		assert_int_equal(symlink(victim, path), 0);
	} else {
		assert_int_equal(mkdir(path, 0755), 0);
		char *lnk = tu_path(path, "lnk");

		tu_write_text(path, "theirs", "y\n");
		assert_int_equal(symlink(victim, lnk), 0);
		free(lnk);
	}
	tu_stderr_begin();
	rc = pwrap_tmp_remove(t);
	err = tu_stderr_end();
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err, "is no longer the directory made there"));
	assert_non_null(strstr(err, path));
	/* the victim and the replacement are untouched */
	assert_int_equal(tu_count_entries(victim, false), 1);
	if (!by_link) {
		assert_int_equal(tu_count_entries(path, false), 2);
	}
	/* what was made lost its passdb wherever it went */
	assert_int_equal(tu_count_entries(moved, true), 0);
	assert_int_equal(unlink(path) == 0 || tu_rmtree_quiet(path) == 0, 1);
	free(err);
	free(path);
	free(moved);
	free(victim);
}

static void test_replaced_by_directory_left_alone(void **state)
{
	check_replaced(*state, false);
}

static void test_replaced_by_link_left_alone(void **state)
{
	check_replaced(*state, true);
}

/* Descriptors a module closed, another file on their numbers (pamtest's
 * scenarios run modules in its process): a directory inside one of ours is
 * still made inside it, removals still go through the right directories,
 * and no descriptor that is no longer ours is closed. */
static void test_closed_descriptors(void **state)
{
	const char *dir = *state;
	struct pwrap_tmp *top, *in;
	struct stat st, now;
	int other, nums[2];

	setenv("TMPDIR", dir, 1);
	top = pwrap_tmp_make("top");
	assert_non_null(top);
	/* top's own and its base's descriptors now name another directory */
	other = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(other >= 0);
	assert_int_equal(dup2(other, top->fd), top->fd);
	assert_int_equal(dup2(other, top->parent), top->parent);
	assert_int_equal(fstat(other, &st), 0);
	nums[0] = top->fd;
	nums[1] = top->parent;
	pwrap_set_tmpbase(top);
	in = pwrap_tmp_make("in");
	pwrap_set_tmpbase(NULL);
	assert_non_null(in);
	assert_true(under(in->path, top->path));
	assert_int_equal(pwrap_tmp_write(in, "passdb", "x\n", NULL), 0);
	assert_int_equal(pwrap_tmp_remove(in), 0);
	assert_int_equal(tu_count_entries(top->path, true), 0);
	assert_int_equal(pwrap_tmp_remove(top), 0);
	assert_int_equal(tu_count_entries(dir, true), 0);
	/* the numbers still name "/": not closed by the removals */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(fstat(nums[i], &now), 0);
		assert_true(now.st_dev == st.st_dev && now.st_ino == st.st_ino);
		close(nums[i]);
	}
	close(other);
}

/* n empty files f00000... in the directory d; false when one could not
 * be made (also in a child, where a failed assertion would not tell). */
static bool fill(const char *d, int n)
{
	int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok = dfd >= 0;

	for (int i = 0; ok && i < n; i++) {
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "f%05d", i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    0600);
		ok = fd >= 0;
		if (ok) {
			close(fd);
		}
	}
	if (dfd >= 0) {
		close(dfd);
	}
	return ok;
}

#ifdef RENAME_EXCHANGE
/*
 * Root removes its directory while nobody, who can write into x/ inside
 * it, exchanges x/sub (NFILES files) with x/lnk (a link to a root-only
 * directory of NFILES files) as fast as it can: none of the root-only
 * files goes (9c82650's nftw removal deleted about 99% of them).
 */
static void test_removal_never_follows_an_exchanged_link(void **state)
{
	const char *dir = *state;
	char *victim, *x, *sub, *lnk;
	struct pwrap_tmp *t;
	int ready[2];
	pid_t pid;
	char c;
	uid_t uid;
	gid_t gid;

	if (geteuid() != 0) {
		TU_SKIP("needs root: the one who exchanges the links is another "
			"user (nobody)");
	}
	nobody_ids(&uid, &gid);
	victim = tu_subdir(dir, "root-only");
	assert_true(fill(victim, NFILES));
	setenv("TMPDIR", dir, 1);
	t = pwrap_tmp_make("unit");
	assert_non_null(t);
	/* nobody may reach x/ (and only that) */
	assert_int_equal(chmod(dir, 0711), 0);
	assert_int_equal(chmod(t->path, 0711), 0);
	x = tu_subdir(t->path, "x");
	assert_int_equal(chown(x, uid, gid), 0);
	sub = tu_path(x, "sub");
	lnk = tu_path(x, "lnk");
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		tu_child_signals();
		close(ready[0]);
		become_nobody();
		if (mkdir(sub, 0755) != 0 || symlink(victim, lnk) != 0) {
			_exit(6);
		}
		if (!fill(sub, NFILES) || write(ready[1], "r", 1) != 1) {
			_exit(7);
		}
		for (;;) {
			(void)renameat2(AT_FDCWD, sub, AT_FDCWD, lnk,
					RENAME_EXCHANGE);
		}
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	tu_stderr_begin();
	(void)pwrap_tmp_remove(t);
	free(tu_stderr_end());
	tu_kill_wait(pid);
	assert_int_equal(tu_count_entries(victim, false), NFILES);
	assert_int_equal(chmod(dir, 0700), 0);
	free(victim);
	free(x);
	free(sub);
	free(lnk);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_made_held_removed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_writable_base_passed_over,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_base_of_another_user,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_replaced_by_directory_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_replaced_by_link_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_closed_descriptors, setup,
						teardown),
#ifdef RENAME_EXCHANGE
		cmocka_unit_test_setup_teardown(
			test_removal_never_follows_an_exchanged_link, setup,
			teardown),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
