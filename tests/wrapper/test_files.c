/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the wrapper's file helpers (src/wrapper/pwrap_file.c):
 * writing a generated file leaves either the whole new text or the old one,
 * never a part and never a temporary file, whether the caller knows the
 * file to be new or not; removing a tree removes nested directories and
 * keeps the one entry asked for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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

#include "pwrap_private.h"
#include "testutil.h"

/* A new file, written in place: whole text, mode 0644 whatever the umask
 * (the runtime directory, 0700, keeps it private; a process that switches
 * its euid for a while has libpam read it as that uid), nothing else. */
static void test_write_fresh(void **state)
{
	const char *dir = *state;
	char *path = tu_path(dir, "svc");
	struct stat st;
	char *got;

	mode_t mask = umask(077);

	assert_int_equal(pwrap_write_file(path, "auth x\n", 7, true), 0);
	umask(mask);
	got = tu_read_file(path, NULL);
	assert_string_equal(got, "auth x\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(tu_count_entries(dir, true), 1);
	free(got);
	free(path);
}

/* An existing file is replaced whole, by a new inode (rename), so a reader
 * of the old one never sees a mix; also when the caller thought it new
 * (`fresh`: a file it forgot). */
static void check_replaced(const char *dir, bool fresh, const char *text)
{
	char *path = tu_path(dir, "svc");
	struct stat before, after;
	char *got;

	tu_write_text(dir, "svc", "old text that is longer\n");
	assert_int_equal(stat(path, &before), 0);
	assert_int_equal(pwrap_write_file(path, text, strlen(text), fresh), 0);
	assert_int_equal(stat(path, &after), 0);
	assert_true(before.st_ino != after.st_ino);
	got = tu_read_file(path, NULL);
	assert_string_equal(got, text);
	assert_int_equal(tu_count_entries(dir, true), 1);
	free(got);
	free(path);
}

static void test_write_replace(void **state)
{
	check_replaced(*state, false, "new\n");
	check_replaced(*state, false, "");
}

static void test_write_fresh_but_exists(void **state)
{
	check_replaced(*state, true, "new\n");
}

/* Failing (a directory that is not there) says why and leaves nothing. */
static void test_write_fails_cleanly(void **state)
{
	const char *dir = *state;
	char *path = tu_path(dir, "missing/svc");

	for (int fresh = 0; fresh < 2; fresh++) {
		errno = 0;
		assert_int_equal(pwrap_write_file(path, "x\n", 2, fresh), -1);
		assert_int_equal(errno, ENOENT);
	}
	assert_int_equal(tu_count_entries(dir, true), 0);
	free(path);
}

/* A symlink in the way of a new file is not followed. */
static void test_write_fresh_symlink(void **state)
{
	const char *dir = *state;
	char *path = tu_path(dir, "svc");
	char *target = tu_path(dir, "target");
	char *got;

	tu_write_text(dir, "target", "untouched\n");
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(pwrap_write_file(path, "new\n", 4, true), 0);
	got = tu_read_file(target, NULL);
	assert_string_equal(got, "untouched\n");
	free(got);
	got = tu_read_file(path, NULL);
	assert_string_equal(got, "new\n");
	free(got);
	free(path);
	free(target);
}

/* Nested directories go, and a symlink to a directory elsewhere goes
 * without what it points to; the entry kept stays.  (The fall-back for
 * file systems that give no d_type, unlink's EISDIR, is not reached on
 * tmpfs or ext4.) */
static void test_rmtree_at_keep(void **state)
{
	const char *dir = *state;
	char *a = tu_subdir(dir, "a");
	char *b = tu_subdir(a, "b");
	char *link = tu_path(dir, "ln");
	char *outside = tu_mkdtemp("pwrap-files-outside");
	char *kept = tu_path(outside, "kept");
	int fd;

	tu_write_text(dir, ".lock", "");
	tu_write_text(dir, "f", "1");
	tu_write_text(a, "g", "2");
	tu_write_text(b, "h", "3");
	tu_write_text(outside, "kept", "4");
	assert_int_equal(symlink(outside, link), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrap_rmtree_at(fd, ".lock"), 0);	/* closes fd */
	assert_int_equal(tu_count_entries(dir, true), 1);
	assert_int_equal(access(link, F_OK), -1);
	assert_int_equal(access(kept, F_OK), 0);
	tu_rmtree(outside);
	free(a);
	free(b);
	free(link);
	free(outside);
	free(kept);
}

static void test_rmtree_whole(void **state)
{
	const char *dir = *state;
	char *top = tu_subdir(dir, "top");
	char *sub = tu_subdir(top, "conf");
	char *inc = tu_subdir(sub, ".inc");

	tu_write_text(inc, "x", "1");
	tu_write_text(sub, "other", "2");
	assert_int_equal(pwrap_rmtree(top), 0);
	assert_int_equal(access(top, F_OK), -1);
	assert_int_equal(pwrap_rmtree(top), 0);	/* gone already: no error */
	assert_int_equal(tu_count_entries(dir, true), 0);
	free(top);
	free(sub);
	free(inc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_fresh,
						tu_setup_tmpdir,
						tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_write_fresh_but_exists,
						tu_setup_tmpdir,
						tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_write_replace,
						tu_setup_tmpdir,
						tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_write_fails_cleanly,
						tu_setup_tmpdir,
						tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_write_fresh_symlink,
						tu_setup_tmpdir,
						tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_rmtree_at_keep,
						tu_setup_tmpdir,
						tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_rmtree_whole,
						tu_setup_tmpdir,
						tu_teardown_tmpdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
