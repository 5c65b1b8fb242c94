/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's per-process passdb cache through the real libpam, which
 * unloads the module at every pam_end (the module is linked -z nodelete so
 * the cache survives): an edit of the passdb in place that keeps its size
 * and mtime is seen by the next transaction, bad lines are logged by every
 * transaction as a scan would, and a password change is seen at once, for
 * small (kept in memory) and big (indexed) passdbs.  The files are left to
 * age past the cache's trust delay (passdb_cache.h) before the lookups
 * that the cache answers.  The cache's internals are tested in
 * test_passdb_cache.c.  Also: a password change leaves no temporary file,
 * and removes the one a writer killed just before its rename left.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "modtest.h"

/* Longer than the cache's trust delay (0.1 s). */
static void age(void)
{
	struct timespec ts = { 0, 250000000L };

	nanosleep(&ts, NULL);
}

/* A passdb of N users (and a bad line 2), then zed:old-pw:svc; its length
 * in *LEN, the offset of zed's password in *PWOFF.  Malloc'd. */
static char *make_passdb(unsigned n, size_t *len, size_t *pwoff)
{
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	assert_non_null(f);
	fputs("# users\nnot a valid line\n", f);
	for (unsigned i = 0; i < n; i++) {
		fprintf(f, "user%07u:pass%07u:svc\n", i, i);
	}
	fputs("zed:", f);
	fflush(f);
	*pwoff = size;
	fputs("old-pw:svc\n", f);
	assert_int_equal(fclose(f), 0);
	*len = size;
	return s;
}

/* Writes make_passdb(N) as the passdb and lets it age; returns the offset
 * of zed's password. */
static size_t aged_passdb(const struct mt_env *t, unsigned n)
{
	size_t len, pwoff;
	char *d = make_passdb(n, &len, &pwoff);

	mt_write(t, "passdb", d, len);
	free(d);
	age();
	return pwoff;
}

/* Overwrites zed's password in place and puts the mtime back. */
static void edit_in_place(const struct mt_env *t, size_t pwoff,
			  const char *pw)
{
	struct stat st;
	struct timespec ts[2];
	int fd;

	assert_int_equal(stat(t->passdb, &st), 0);
	fd = open(t->passdb, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, pw, strlen(pw), (off_t)pwoff),
			 (ssize_t)strlen(pw));
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(close(fd), 0);
}

/* An external edit of the same size, in the same second, with the mtime
 * put back, is seen by the next transaction. */
static void cache_external_edit(void **state)
{
	struct mt_env *t = *state;

	mt_matrix_service(t, "");
	for (unsigned n = 0; n <= 5000; n += 5000) {
		size_t pwoff = aged_passdb(t, n);

		for (int i = 0; i < 3; i++) {
			assert_int_equal(mt_auth(t, "zed", "old-pw"),
					 PAM_SUCCESS);
		}
		edit_in_place(t, pwoff, "new-pw");
		assert_int_equal(mt_auth(t, "zed", "new-pw"), PAM_SUCCESS);
		assert_int_equal(mt_auth(t, "zed", "old-pw"), PAM_AUTH_ERR);
		/* once more from the new cached copy */
		age();
		assert_int_equal(mt_auth(t, "zed", "new-pw"), PAM_SUCCESS);
		assert_int_equal(mt_auth(t, "zed", "new-pw"), PAM_SUCCESS);
		edit_in_place(t, pwoff, "xyz-pw");
		assert_int_equal(mt_auth(t, "zed", "xyz-pw"), PAM_SUCCESS);
		/* and an edit right after a read (a file too young to be
		 * trusted) */
		edit_in_place(t, pwoff, "abc-pw");
		assert_int_equal(mt_auth(t, "zed", "abc-pw"), PAM_SUCCESS);
	}
}

/* Every transaction logs the bad lines before the user, even when the
 * cache answers. */
static void cache_bad_lines_logged(void **state)
{
	struct mt_env *t = *state;
	char want[PATH_MAX + 64];

	mt_matrix_service(t, "");
	for (unsigned n = 0; n <= 5000; n += 5000) {
		(void)aged_passdb(t, n);
		snprintf(want, sizeof(want), "%s:2: too few fields", t->passdb);
		for (int i = 0; i < 4; i++) {
			mt_log_clear();
			assert_int_equal(mt_auth(t, "zed", "old-pw"),
					 PAM_SUCCESS);
			assert_int_equal(mt_log_count_has("line skipped"), 1);
			assert_true(mt_log_has(want));
			mt_log_clear();
			assert_int_equal(mt_auth(t, "nobody", "x"),
					 PAM_AUTH_ERR);
			assert_int_equal(mt_log_count_has("line skipped"), 1);
			assert_true(mt_log_has(want));
		}
	}
	mt_log_clear();
}

/* A password change (a new file renamed over the passdb) is seen by the
 * next transaction; the account group reads through the cache too. */
static void cache_chauthtok(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_matrix_service(t, "");
	(void)aged_passdb(t, 5000);
	assert_int_equal(mt_auth(t, "zed", "old-pw"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "user0004999", "pass0004999"),
			 PAM_SUCCESS);
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "zed", &c, MT_ACCT, 0), PAM_SUCCESS);
	mt_conv_free(&c);
	mt_conv_init(&c, 3, "old-pw", "changed", "changed");
	assert_int_equal(mt_run(t, "svc", "zed", &c, MT_CHAUTHTOK, 0),
			 PAM_SUCCESS);
	mt_conv_free(&c);
	assert_int_equal(mt_auth(t, "zed", "changed"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "zed", "old-pw"), PAM_AUTH_ERR);
	age();
	assert_int_equal(mt_auth(t, "zed", "changed"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "zed", "changed"), PAM_SUCCESS);
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "zed", &c, MT_ACCT, 0), PAM_SUCCESS);
	assert_int_equal(mt_run(t, "svc", "nobody", &c, MT_ACCT, 0),
			 PAM_PERM_DENIED);
	mt_conv_free(&c);
}

/* The rewrite's temporary file has no name until just before the rename;
 * the fixed name it then gets, left by a killed writer, is removed by the
 * next password change. */
static void chauthtok_leftover(void **state)
{
	struct mt_env *t = *state;
	char left[PATH_MAX + 32];
	char *after;
	struct mt_conv c;
	struct stat st;

	mt_passdb(t, "zed:old-pw:svc\n");
	mt_matrix_service(t, "");
	snprintf(left, sizeof(left), "%s.pam_matrix-new", t->passdb);
	mt_write(t, "passdb.pam_matrix-new", "zed:stale:svc\n", 14);
	mt_conv_init(&c, 3, "old-pw", "changed", "changed");
	assert_int_equal(mt_run(t, "svc", "zed", &c, MT_CHAUTHTOK, 0),
			 PAM_SUCCESS);
	mt_conv_free(&c);
	assert_int_equal(stat(left, &st), -1);
	after = mt_read(t->passdb, NULL);
	assert_string_equal(after, "zed:changed:svc\n");
	free(after);
}

#define T(f) cmocka_unit_test_setup_teardown(f, mt_setup, mt_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(cache_external_edit),
		T(cache_bad_lines_logged),
		T(cache_chauthtok),
		T(chauthtok_leftover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
