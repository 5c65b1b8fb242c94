/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wrapper's fast path (src/wrapper/pwrap_runtime.c, fast_*): from the
 * second pam_start with the same service dir, an inotify instance tells that
 * nothing changed and pam_start skips its stat(2)s.  These tests first prove
 * the fast path is in use (the DEBUG line says "no change since the last
 * check"), then change the configuration in every way a test suite does and
 * check that the very next pam_start sees the change: the freshness promise
 * ("files are read at every pam_start") must hold with the fast path on.
 *
 * Runs preloaded (LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1), with the stock
 * pam_permit and pam_deny modules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <security/pam_appl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_common.h"

#define PERMIT "auth required pam_permit.so\n"
#define DENY "auth required pam_deny.so\n"
#define FAST_MARK "(no change since the last check)"

static int conv_fn(int n, const struct pam_message **msg,
		   struct pam_response **resp, void *data)
{
	(void)msg;
	(void)data;
	*resp = calloc((size_t)n, sizeof(**resp));
	return *resp != NULL ? PAM_SUCCESS : PAM_BUF_ERR;
}

/* pam_start + pam_authenticate + pam_end; 1000 + code if pam_start fails. */
static int auth(const char *service)
{
	struct pam_conv c = { conv_fn, NULL };
	pam_handle_t *ph = NULL;
	int rc = pam_start(service, "nobody", &c, &ph);

	if (rc != PAM_SUCCESS) {
		return 1000 + rc;
	}
	rc = pam_authenticate(ph, 0);
	pam_end(ph, rc);
	return rc;
}

/* Like auth(), and tells whether this pam_start took the fast path. */
static int auth_fast(const char *service, int *fast)
{
	char *err;
	int rc;

	setenv("PAM_WRAPPER_DEBUGLEVEL", "2", 1);
	pt_stderr_begin();
	rc = auth(service);
	err = pt_stderr_end();
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	*fast = strstr(err, FAST_MARK) != NULL;
	free(err);
	return rc;
}

/* Runs `service` until the fast path answers; it must within 3 calls. */
static void arm(const char *service, int expect)
{
	int fast = 0;
	int i;

	for (i = 0; i < 3 && !fast; i++) {
		assert_int_equal(auth_fast(service, &fast), expect);
	}
	assert_true(fast);
}

static int setup_dir(void **state)
{
	char *dir = pt_mkdtemp();

	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);
	setenv("PAM_WRAPPER", "1", 1);
	unsetenv("PAM_WRAPPER_DEBUGLEVEL");
	pt_write_file(dir, "svc", PERMIT);
	pt_write_file(dir, "other", DENY);
	*state = dir;
	return 0;
}

static int teardown_dir(void **state)
{
	pt_rmtree(*state);
	free(*state);
	return 0;
}

/* Rewrites an existing file in place (same inode), as `echo >` does. */
static void write_in_place(const char *dir, const char *name, const char *text)
{
	char *p = pt_path(dir, name);
	struct stat before, after;

	assert_int_equal(stat(p, &before), 0);
	pt_write_file(dir, name, text);
	assert_int_equal(stat(p, &after), 0);
	assert_true(before.st_ino == after.st_ino);
	free(p);
}

static void test_fast_path_is_used(void **state)
{
	int fast = 1;

	(void)state;
	/* the first pam_start of a directory never takes it */
	assert_int_equal(auth_fast("svc", &fast), PAM_SUCCESS);
	assert_false(fast);
	arm("svc", PAM_SUCCESS);
	assert_int_equal(auth_fast("svc", &fast), PAM_SUCCESS);
	assert_true(fast);
	/* "other" is a service of its own for the cache */
	arm("no-such-service", PAM_AUTH_ERR);
}

static void test_edit_in_place(void **state)
{
	int fast = 1;

	arm("svc", PAM_SUCCESS);
	write_in_place(*state, "svc", DENY);
	assert_int_equal(auth_fast("svc", &fast), PAM_AUTH_ERR);
	assert_false(fast);
	arm("svc", PAM_AUTH_ERR);
	write_in_place(*state, "svc", PERMIT);
	assert_int_equal(auth("svc"), PAM_SUCCESS);
}

static void test_replace_by_rename(void **state)
{
	char *tmp = pt_path(*state, ".svc.new");
	char *dst = pt_path(*state, "svc");

	arm("svc", PAM_SUCCESS);
	pt_write_file(*state, ".svc.new", DENY);
	assert_int_equal(rename(tmp, dst), 0);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	free(tmp);
	free(dst);
}

static void test_delete_falls_back_to_other(void **state)
{
	arm("svc", PAM_SUCCESS);
	pt_unlink_at(*state, "svc");
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);	/* other: pam_deny */
	pt_write_file(*state, "svc", PERMIT);
	assert_int_equal(auth("svc"), PAM_SUCCESS);
}

static void test_other_edited(void **state)
{
	arm("absent", PAM_AUTH_ERR);
	write_in_place(*state, "other", PERMIT);
	assert_int_equal(auth("absent"), PAM_SUCCESS);
}

static void test_runtime_dir_file_written_by_test(void **state)
{
	const char *rd;

	arm("svc", PAM_SUCCESS);
	rd = getenv("PAM_WRAPPER_RUNTIME_DIR");
	assert_non_null(rd);
	pt_write_file(rd, "svc", DENY);	/* a test's file in services/ wins */
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	pt_unlink_at(rd, "svc");
	assert_int_equal(auth("svc"), PAM_SUCCESS);
	(void)state;
}

static void test_included_file_edited(void **state)
{
	pt_write_file(*state, "svc", "auth include common\n");
	pt_write_file(*state, "common", PERMIT);
	arm("svc", PAM_SUCCESS);
	write_in_place(*state, "common", DENY);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
}

/*
 * A file reached through a symlink or a second hard link can change with no
 * event in the service dir: such a service never takes the fast path, and
 * an edit made through the other name is seen.
 */
static void check_indirect(const char *dir, int (*make)(const char *,
							 const char *))
{
	char *outside = pt_mkdtemp();
	char *target = pt_path(outside, "real");
	char *mine = pt_path(dir, "svc");
	int fast = 1;
	int i;

	pt_write_file(outside, "real", PERMIT);
	assert_int_equal(unlink(mine), 0);
	assert_int_equal(make(target, mine), 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(auth_fast("svc", &fast), PAM_SUCCESS);
		assert_false(fast);
	}
	write_in_place(outside, "real", DENY);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	pt_rmtree(outside);
	free(outside);
	free(target);
	free(mine);
}

static void test_symlinked_file(void **state)
{
	check_indirect(*state, symlink);
}

static void test_hard_linked_file(void **state)
{
	check_indirect(*state, link);
}

static void test_service_dir_switched(void **state)
{
	char *second = pt_mkdtemp();

	arm("svc", PAM_SUCCESS);
	pt_write_file(second, "svc", DENY);
	setenv("PAM_WRAPPER_SERVICE_DIR", second, 1);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	arm("svc", PAM_AUTH_ERR);
	setenv("PAM_WRAPPER_SERVICE_DIR", *state, 1);
	assert_int_equal(auth("svc"), PAM_SUCCESS);
	pt_rmtree(second);
	free(second);
}

/* The watched directory itself is removed and made again at the same path
 * (its watch is gone): the new files are seen, and the fast path comes
 * back for the new directory. */
static void test_service_dir_recreated(void **state)
{
	arm("svc", PAM_SUCCESS);
	pt_rmtree(*state);
	assert_int_equal(mkdir(*state, 0700), 0);
	pt_write_file(*state, "svc", DENY);
	pt_write_file(*state, "other", DENY);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	arm("svc", PAM_AUTH_ERR);
	write_in_place(*state, "svc", PERMIT);
	assert_int_equal(auth("svc"), PAM_SUCCESS);
}

/* A parent of the service directory is renamed and a new one made at the
 * same path: no event reaches the service directory's own watch. */
static void test_parent_renamed(void **state)
{
	char *top = pt_mkdtemp();
	char *svc = pt_path(top, "pam.d");
	char *old = NULL;

	(void)state;
	assert_int_equal(mkdir(svc, 0700), 0);
	pt_write_file(svc, "svc", PERMIT);
	setenv("PAM_WRAPPER_SERVICE_DIR", svc, 1);
	arm("svc", PAM_SUCCESS);
	assert_true(asprintf(&old, "%s.old", top) > 0);
	assert_int_equal(rename(top, old), 0);
	assert_int_equal(mkdir(top, 0700), 0);
	assert_int_equal(mkdir(svc, 0700), 0);
	pt_write_file(svc, "svc", DENY);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	arm("svc", PAM_AUTH_ERR);
	pt_rmtree(old);
	pt_rmtree(top);
	free(old);
	free(svc);
	free(top);
}

/* A service directory reached through a symlink never takes the fast path:
 * pointing the link elsewhere changes nothing we could watch. */
static void test_symlinked_parent(void **state)
{
	char *a = pt_mkdtemp();
	char *b = pt_mkdtemp();
	char *link = NULL;
	char *svc = NULL;
	int fast = 1;

	(void)state;
	pt_write_file(a, "svc", PERMIT);
	pt_write_file(b, "svc", DENY);
	assert_true(asprintf(&link, "%s.link", a) > 0);
	assert_int_equal(symlink(a, link), 0);
	assert_true(asprintf(&svc, "%s/.", link) > 0);
	setenv("PAM_WRAPPER_SERVICE_DIR", svc, 1);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(auth_fast("svc", &fast), PAM_SUCCESS);
		assert_false(fast);
	}
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink(b, link), 0);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	assert_int_equal(unlink(link), 0);
	pt_rmtree(a);
	pt_rmtree(b);
	free(link);
	free(svc);
	free(a);
	free(b);
}

/* Somebody tidies TMPDIR under a running process. */
static void test_runtime_dir_removed(void **state)
{
	char *top;

	arm("svc", PAM_SUCCESS);
	top = strdup(getenv("PAM_WRAPPER_RUNTIME_DIR"));
	assert_non_null(top);
	*strrchr(top, '/') = '\0';
	pt_rmtree(top);
	assert_int_equal(auth("svc"), PAM_SUCCESS);
	write_in_place(*state, "svc", DENY);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	free(top);
}

/* A child must not read the parent's inotify queue: an edit made by the
 * child is then still seen by the parent. */
static void test_fork_keeps_parent_events(void **state)
{
	pid_t pid;
	int st;

	arm("svc", PAM_SUCCESS);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ok = auth("svc") == PAM_SUCCESS;

		write_in_place(*state, "svc", DENY);
		ok = ok && auth("svc") == PAM_AUTH_ERR;
		ok = ok && auth("svc") == PAM_AUTH_ERR;
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
}

/* Closes every inotify descriptor of this process; returns how many. */
static int close_inotify_fds(void)
{
	char link[64], target[64];
	int n = 0;
	int fd;

	for (fd = 3; fd < 1024; fd++) {
		ssize_t len;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0) {
			continue;
		}
		target[len] = '\0';
		if (strcmp(target, "anon_inode:inotify") == 0) {
			assert_int_equal(close(fd), 0);
			n++;
		}
	}
	return n;
}

/* An application closes descriptors it did not open (a daemon's
 * closefrom()): the wrapper notices and goes on with full checks. */
static void test_descriptor_closed_by_app(void **state)
{
	int fast = 1;
	int i;

	arm("svc", PAM_SUCCESS);
	assert_int_equal(close_inotify_fds(), 1);
	write_in_place(*state, "svc", DENY);
	assert_int_equal(auth("svc"), PAM_AUTH_ERR);
	for (i = 0; i < 3; i++) {
		assert_int_equal(auth_fast("svc", &fast), PAM_AUTH_ERR);
		assert_false(fast);
	}
	write_in_place(*state, "svc", PERMIT);
	assert_int_equal(auth("svc"), PAM_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)
		T(test_fast_path_is_used),
		T(test_edit_in_place),
		T(test_replace_by_rename),
		T(test_delete_falls_back_to_other),
		T(test_other_edited),
		T(test_runtime_dir_file_written_by_test),
		T(test_included_file_edited),
		T(test_symlinked_file),
		T(test_hard_linked_file),
		T(test_service_dir_switched),
		T(test_service_dir_recreated),
		T(test_parent_renamed),
		T(test_symlinked_parent),
		T(test_runtime_dir_removed),
		T(test_fork_keeps_parent_events),
		/* last: it turns the fast path off for the process */
		T(test_descriptor_closed_by_app),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
