/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trust (issue 23): a full TMPDIR, /dev/shm or /tmp.  The runtime directory
 * can often be made in a full file system (a directory and an empty lock
 * file need no data blocks) while the copies of the service files cannot;
 * every write must move to the next base, and with all bases full
 * pam_start must fail saying why for each, leaving nothing anywhere.
 *
 * Each case runs in a child with a mount namespace of its own (never the
 * machine's: other tests share it), in which small tmpfs are mounted over
 * the bases and filled.  That needs root (CAP_SYS_ADMIN); as another user
 * the test skips, saying so.  Everything the client needs (its binary, the
 * libraries, the service directory, the passdb) lies in the build tree,
 * outside the bases filled: a build tree, or a libpam built from source,
 * below /tmp or /dev/shm skips too.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#include "trust_util.h"

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
 * tmpfs on each of the `n` dirs (with `no_shm`, an empty /dev: no
 * /dev/shm), then the client runs with env; its output and then "left: N"
 * (our entries left in the full dirs) go to fd out.  Exit code: the
 * client's, 77 when no private namespace can be made.
 */
static int run_full(char **env, const char *const *dirs, int n, bool no_shm,
		    char **out)
{
	static const char *const steps[] = { "txn:" TRUST_PW, "dir", NULL };
	/* (zeros where a stat that failed would leave nothing) */
	static const char *const zeroed[] = { "stackzero", "txn:" TRUST_PW,
					      "dir", NULL };
	char **argv = trust_argv("alice", no_shm ? zeroed : steps);
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
		if (no_shm && mount("tmpfs", "/dev", "tmpfs", MS_NOSUID,
				    "size=64k,mode=0755") != 0) {
			printf("cannot hide /dev: %s\n", strerror(errno));
			fflush(stdout);
			_exit(99);
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
	return path == NULL || trust_under(path, "/tmp") ||
	       trust_under(path, "/dev/shm");
}

/* The client's runtime directory was below base, quietly, and nothing is
 * left in the full ones; frees out. */
static void moved_to(char *out, const char *base)
{
	char *dir = trust_nth_dir(out, 0);

	assert_true(trust_under(dir, base));
	assert_non_null(strstr(out, "left: 0\n"));
	assert_null(strstr(out, "PWRAP_ERROR"));
	free(dir);
	free(out);
}

static void test_full_bases(void **state)
{
	const char *build = getenv("PWRAP_BUILD_DIR");
	char *top, *tmp, *svc, *passdb, *text, *out;
	const char *dirs[3];
	char **env;
	int rc;

	(void)state;
	if (!trust_need_root("mounting a full tmpfs needs a private mount "
		       "namespace (unshare -m)")) {
		skip();
	}
	/* everything the client needs lies outside the bases filled (a
	 * libpam built from source under /tmp too) */
	if (below_bases(build) || below_bases(getenv("PWRAP_PRELOAD"))) {
		print_message("SKIPPED: the build tree is below /tmp or "
			      "/dev/shm, which this test fills\n");
		skip();
	}
	if (getenv("PWRAP_SYSTEM_MODULE_DIR") != NULL &&
	    below_bases(getenv("PWRAP_SYSTEM_MODULE_DIR"))) {
		print_message("SKIPPED: the libpam under test (%s) is below "
			      "/tmp or /dev/shm, which this test fills\n",
			      getenv("PWRAP_SYSTEM_MODULE_DIR"));
		skip();
	}
	assert_true(asprintf(&top, "%s/tests/hardening/trust-full.XXXXXX",
			     build) > 0);
	assert_non_null(mkdtemp(top));
	tmp = tu_subdir(top, "tmp");
	svc = tu_subdir(top, "svc");
	passdb = tu_path(top, "passdb");
	tu_write_file(passdb, "alice:" TRUST_PW ":" TRUST_SERVICE "\n",
		      strlen("alice:" TRUST_PW ":" TRUST_SERVICE "\n"), 0600);
	text = hu_matrix_service(passdb);
	tu_write_text(svc, TRUST_SERVICE, text);
	env = tu_env_wrapped(tmp, svc, "1", NULL);
	dirs[0] = tmp;
	dirs[1] = "/dev/shm";
	dirs[2] = "/tmp";

	/* TMPDIR full: /dev/shm (a directory made in TMPDIR is removed) */
	rc = run_full(env, dirs, 1, false, &out);
	if (rc == 77) {
		print_message("SKIPPED: %s", out);
		tu_rmtree(top);
		skip();
	}
	assert_int_equal(rc, 0);
	moved_to(out, "/dev/shm");

	/* TMPDIR and /dev/shm full: /tmp */
	assert_int_equal(run_full(env, dirs, 2, false, &out), 0);
	moved_to(out, "/tmp");

	/* all full: pam_start fails, saying why for each; nothing left */
	assert_int_equal(run_full(env, dirs, 3, false, &out), 1);
	assert_non_null(strstr(out, "txn: start 26\n"));	/* PAM_ABORT */
	/* (at load and at pam_start) */
	rc = trust_count(out, "PWRAP_ERROR");
	assert_true(rc >= 1);
	assert_int_equal(trust_count(out, "cannot create a runtime directory"),
			 rc);
	assert_int_equal(trust_count(out, "No space left on device"), 3 * rc);
	assert_non_null(strstr(out, "dir: -\n"));	/* none to point to */
	assert_non_null(strstr(out, "left: 0\n"));
	free(out);
	tu_env_free(env);

	/* no TMPDIR, no /dev/shm (a sandbox without /dev), /tmp full: each
	 * error says so, however often */
	env = tu_env_wrapped(NULL, svc, "1", NULL);
	assert_int_equal(run_full(env, dirs + 2, 1, true, &out), 1);
	rc = trust_count(out, "cannot create a runtime directory");
	assert_true(rc >= 1);
	if (trust_count(out, "/dev/shm: No such file or directory; /tmp: "
			"No space left on device") != rc) {
		fail_msg("not every error names the missing /dev/shm:\n%s",
			 out);
	}
	free(out);
	tu_env_free(env);
	tu_rmtree(top);
	free(text);
	free(passdb);
	free(svc);
	free(tmp);
	free(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_bases),
	};

	tu_alarm(TU_SUITE_HANG_SECONDS, "test_trust_full: a test hangs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
