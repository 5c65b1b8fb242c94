/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix through the real libpam with passdbs that are not plain,
 * quiet text files: a FIFO and /dev/zero (refused at once, never a hang),
 * a file over the size bound (refused), a file truncated and rewritten in
 * place while transactions read it (clean answers, never a signal), files
 * edited between transactions (each transaction reads the file anew), and
 * the bad-line reports of every transaction.  The passdb code itself
 * is tested line by line in test_passdb.c.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "modtest.h"
#include "passdb.h" /* PM_PASSDB_MAX */

/* What ends a test whose passdb open or read blocks (tu_alarm). */
#define BLOCKED_MSG "timed out: opening or reading the passdb blocked\n"

/* Authentication and account check with a passdb that is not a regular
 * file or is too big: PAM_AUTHINFO_UNAVAIL without blocking, no prompt,
 * and the reason logged with the file's name. */
static void check_refused(const struct mt_env *t, const char *passdb,
			  const char *reason)
{
	char want[PATH_MAX + 128];
	struct mt_conv c;

	mt_service(t, "svc",
		   "auth    required %s/pam_matrix.so passdb=%s\n"
		   "account required %s/pam_matrix.so passdb=%s\n",
		   t->moddir, passdb, t->moddir, passdb);
	snprintf(want, sizeof(want), "%s: %s", passdb, reason);
	tu_alarm(TU_HANG_SECONDS, BLOCKED_MSG);
	mt_log_clear();
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 0);
	mt_conv_free(&c);
	if (!mt_log_has(want)) {
		mt_log_dump();
		fail_msg("no log line \"%s\"", want);
	}
	mt_log_clear();
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_ACCT, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
	assert_true(mt_log_has(want));
	alarm(0);
	mt_log_clear();
}

/* Upstream and our earlier versions blocked for ever in open(). */
static void files_fifo(void **state)
{
	struct mt_env *t = *state;

	assert_int_equal(mkfifo(t->passdb, 0600), 0);
	check_refused(t, t->passdb, "passdb is not a regular file");
}

/* Our earlier versions read it until memory ran out; upstream crashes.
 * /dev/null reads as empty, as upstream reads it: asked, nobody found. */
static void files_dev_zero(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	check_refused(t, "/dev/zero", "passdb is not a regular file");
	mt_service(t, "svc", "auth required %s/pam_matrix.so passdb=/dev/null\n",
		   t->moddir);
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTH_ERR);
	assert_int_equal(c.nmsgs, 1);
	mt_conv_free(&c);
}

/* A sparse file one byte over PM_PASSDB_MAX. */
static void files_too_big(void **state)
{
	struct mt_env *t = *state;
	char reason[80];
	int fd = open(t->passdb, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)PM_PASSDB_MAX + 1), 0);
	assert_int_equal(close(fd), 0);
	snprintf(reason, sizeof(reason),
		 "passdb is larger than the limit of %llu bytes",
		 (unsigned long long)PM_PASSDB_MAX);
	check_refused(t, t->passdb, reason);
}

/* 1.5 MiB of users, then zed:pwXXXX:svc with X all A or all B. */
static char *inplace_content(char x, size_t *len)
{
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	assert_non_null(f);
	/* (ftell, not size: size changes only at fflush, behind the
	 * compiler's back) */
	for (unsigned i = 0; ftell(f) < (3L << 19); i++) {
		fprintf(f, "user%07u:pass%07u:svc\n", i, i);
	}
	fprintf(f, "zed:pw%c%c%c%c:svc\n", x, x, x, x);
	assert_int_equal(fclose(f), 0);
	*len = size;
	return s;
}

/* One authentication without cmocka assertions (for a child). */
static int raw_auth(const struct mt_env *t, const char *user, const char *pw)
{
	struct mt_conv c;
	pam_handle_t *pamh = NULL;
	int rv;

	memset(&c, 0, sizeof(c));
	c.answers[0] = pw;
	c.nanswers = 1;
	rv = mt_start_raw(t, "svc", user, &c, &pamh);
	if (rv == PAM_SUCCESS) {
		rv = pam_authenticate(pamh, 0);
		(void)pam_end(pamh, rv);
	}
	mt_conv_free(&c);
	return rv;
}

/*
 * A writer truncates the passdb and writes it again in 64 KiB pieces
 * ("cat new > passdb"), over and over, while a worker authenticates zed.
 * A mapped passdb that shrinks under a reader gives SIGBUS; the worker
 * must instead exit normally, every answer success (the read saw zed's
 * line), a wrong password (it saw the other version, or a mix) or an
 * unknown user (it saw a shortened file).
 */
static void files_rewritten_in_place(void **state)
{
	struct mt_env *t = *state;
	size_t alen, blen;
	char *a = inplace_content('A', &alen);
	char *b = inplace_content('B', &blen);
	pid_t writer, worker;
	int st;

	mt_write(t, "passdb", a, alen);
	mt_matrix_service(t, "");
	writer = tu_rewriter_start(t->passdb, a, alen, b, blen);
	worker = fork();
	assert_true(worker >= 0);
	if (worker == 0) {
		/* no cmocka assertions in the child */
		double end = tu_now() + 2.0;
		unsigned long n = 0, ok = 0;
		int bad = PAM_SUCCESS;

		tu_child_signals();
		while (tu_now() < end || n < 20) {
			int rv = raw_auth(t, "zed", "pwAAAA");

			n++;
			ok += rv == PAM_SUCCESS;
			if (rv != PAM_SUCCESS && rv != PAM_AUTH_ERR) {
				bad = rv;
				mt_log_dump();
			}
			mt_log_clear();
		}
		fprintf(stderr, "# %lu authentications during rewrites, "
				"%lu succeeded\n",
			n, ok);
		if (bad != PAM_SUCCESS) {
			fprintf(stderr, "# unexpected result: %s\n",
				pam_strerror(NULL, bad));
		}
		free(a); /* valgrind checks the child's heap at _exit */
		free(b);
		_exit(bad != PAM_SUCCESS ? 1 : 0);
	}
	st = tu_wait_bounded(worker, TU_HANG_SECONDS);
	tu_kill_wait(writer);
	free(a);
	free(b);
	if (st <= -2) {
		fail_msg("the authentications died of signal %d", -2 - st);
	}
	if (st != 0) {
		fail_msg("the authentications %s",
			 st < 0 ? "hung" : "got a bad answer");
	}
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

/* An edit of the same size with the mtime put back, right after a
 * transaction read the file, is seen by the next one: nothing is kept. */
static void files_edit_between_transactions(void **state)
{
	struct mt_env *t = *state;

	mt_matrix_service(t, "");
	for (unsigned n = 0; n <= 5000; n += 5000) {
		size_t len, pwoff;
		char *d = make_passdb(n, &len, &pwoff);

		mt_write(t, "passdb", d, len);
		free(d);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(mt_auth(t, "zed", "old-pw"),
					 PAM_SUCCESS);
		}
		edit_in_place(t, pwoff, "new-pw");
		assert_int_equal(mt_auth(t, "zed", "new-pw"), PAM_SUCCESS);
		assert_int_equal(mt_auth(t, "zed", "old-pw"), PAM_AUTH_ERR);
		edit_in_place(t, pwoff, "xyz-pw");
		assert_int_equal(mt_auth(t, "zed", "xyz-pw"), PAM_SUCCESS);
	}
}

/* Every transaction reports what the contract says: a bad line that does
 * not start with "zed:" only when the user has no valid line. */
static void files_bad_lines_every_transaction(void **state)
{
	struct mt_env *t = *state;
	char want[PATH_MAX + 64];

	mt_matrix_service(t, "");
	for (unsigned n = 0; n <= 5000; n += 5000) {
		size_t len, pwoff;
		char *d = make_passdb(n, &len, &pwoff);

		mt_write(t, "passdb", d, len);
		free(d);
		snprintf(want, sizeof(want), "%s:2: too few fields", t->passdb);
		for (int i = 0; i < 3; i++) {
			mt_log_clear();
			assert_int_equal(mt_auth(t, "zed", "old-pw"),
					 PAM_SUCCESS);
			assert_int_equal(mt_log_count_has("line skipped"), 0);
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
 * next transaction, in the auth and the account group. */
static void files_chauthtok_seen(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	size_t len, pwoff;
	char *d = make_passdb(5000, &len, &pwoff);

	mt_write(t, "passdb", d, len);
	free(d);
	mt_matrix_service(t, "");
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
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "zed", &c, MT_ACCT, 0), PAM_SUCCESS);
	assert_int_equal(mt_run(t, "svc", "nobody", &c, MT_ACCT, 0),
			 PAM_PERM_DENIED);
	mt_conv_free(&c);
}

/* libpam unloads the module at pam_end: it keeps nothing that would need
 * it to stay (no -z nodelete). */
#define T(f) cmocka_unit_test_setup_teardown(f, mt_setup, mt_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(files_fifo),
		T(files_dev_zero),
		T(files_too_big),
		T(files_rewritten_in_place),
		T(files_edit_between_transactions),
		T(files_bad_lines_every_transaction),
		T(files_chauthtok_seen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
