/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix password changes through the real libpam: the prompts, every
 * return code, that the passdb rewrite keeps every other byte and the file
 * mode, that failures leave the file untouched, and that 50 concurrent
 * changes by separate processes all land.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include <security/pam_modules.h>

#include "modtest.h"

/* pam_chauthtok as USER answering OLD, NEW and VERIFY; records in *C. */
static int change(const struct mt_env *t, const char *user, const char *old,
		  const char *new1, const char *new2, struct mt_conv *c)
{
	mt_conv_init(c, 3, old, new1, new2);
	return mt_run(t, "svc", user, c, MT_CHAUTHTOK, 0);
}

static void assert_passdb(const struct mt_env *t, const char *want,
			  size_t want_len)
{
	size_t len;
	char *got = tu_read_file(t->passdb, &len);

	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
}

/* Only the passdb and the service file: no temporary files left over. */
static void assert_no_leftovers(const struct mt_env *t)
{
	DIR *d = opendir(t->dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.') {
			continue;
		}
		if (strcmp(de->d_name, "passdb") != 0 &&
		    strcmp(de->d_name, "svc") != 0 &&
		    strcmp(de->d_name, "shim") != 0 &&
		    strcmp(de->d_name, "link") != 0) {
			fail_msg("left over: %s", de->d_name);
		}
		n++;
	}
	closedir(d);
	assert_true(n >= 2);
}

static void change_success(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	static const char want[] = "# header\n"
				   "bob:bobpw:svc\n"
				   "alice:n3w:svc\n"
				   "carol:carolpw:other\n";
	struct stat st;

	mt_passdb(t, "# header\nbob:bobpw:svc\nalice:old:svc\n"
		     "carol:carolpw:other\n");
	assert_int_equal(chmod(t->passdb, 0640), 0);
	mt_matrix_service(t, "");
	assert_int_equal(change(t, "alice", "old", "n3w", "n3w", &c),
			 PAM_SUCCESS);
	assert_int_equal(c.nmsgs, 3);
	assert_string_equal(mt_msg(&c, 0), "P:Old password: ");
	assert_string_equal(mt_msg(&c, 1), "P:New Password :");
	assert_string_equal(mt_msg(&c, 2), "P:Verify New Password :");
	assert_int_equal(c.max_per_call, 1);
	mt_conv_free(&c);

	assert_passdb(t, want, sizeof(want) - 1);
	assert_int_equal(stat(t->passdb, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_no_leftovers(t);
	assert_int_equal(mt_auth(t, "alice", "n3w"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "alice", "old"), PAM_AUTH_ERR);
	assert_false(mt_log_has("n3w"));
}

static void change_echo(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:old:svc\n");
	mt_matrix_service(t, "echo");
	assert_int_equal(change(t, "alice", "old", "x", "x", &c), PAM_SUCCESS);
	assert_string_equal(mt_msg(&c, 0), "p:Old password: ");
	assert_string_equal(mt_msg(&c, 1), "p:New Password :");
	assert_string_equal(mt_msg(&c, 2), "p:Verify New Password :");
	mt_conv_free(&c);
}

static void change_wrong_old(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	static const char orig[] = "alice:old:svc\n";

	mt_passdb(t, orig);
	mt_matrix_service(t, "");
	assert_int_equal(change(t, "alice", "bad", "n", "n", &c),
			 PAM_AUTH_ERR);
	/* No update phase after a failed check. */
	assert_int_equal(c.nmsgs, 1);
	mt_conv_free(&c);
	assert_int_equal(change(t, "nobody", "old", "n", "n", &c),
			 PAM_AUTH_ERR);
	mt_conv_free(&c);
	assert_passdb(t, orig, sizeof(orig) - 1);
}

static void change_mismatch(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	static const char orig[] = "alice:old:svc\n";

	mt_passdb(t, orig);
	mt_matrix_service(t, "");
	assert_int_equal(change(t, "alice", "old", "one", "two", &c),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 4);
	assert_string_equal(mt_msg(&c, 3), "E:Passwords do not match");
	mt_conv_free(&c);
	assert_passdb(t, orig, sizeof(orig) - 1);
	assert_no_leftovers(t);
}

static void change_no_answer(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	static const char orig[] = "alice:old:svc\n";

	mt_passdb(t, orig);
	mt_matrix_service(t, "");
	/* As upstream: a failed conversation at any prompt is
	 * PAM_AUTHINFO_UNAVAIL, a NULL old password PAM_CRED_ERR, a NULL
	 * verification PAM_AUTHINFO_UNAVAIL. */
	mt_conv_init(&c, 0);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
	mt_conv_init(&c, 1, NULL);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_CRED_ERR);
	mt_conv_free(&c);
	mt_conv_init(&c, 1, "old");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
	mt_conv_init(&c, 2, "old", "new");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
	mt_conv_init(&c, 3, "old", "new", NULL);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
	/* Ours: a NULL new password is PAM_AUTHTOK_ERR (upstream says
	 * PAM_SUCCESS and changes nothing). */
	mt_conv_init(&c, 3, "old", NULL, "new");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CHAUTHTOK, 0),
			 PAM_AUTHTOK_ERR);
	assert_true(mt_log_has("no answer to \"New Password :\" for user "
			       "alice: the conversation function answered "
			       "with a NULL string"));
	mt_conv_free(&c);
	assert_passdb(t, orig, sizeof(orig) - 1);
}

/* ':' or a line break in the new password would corrupt the file. */
static void change_unstorable(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	static const char orig[] = "alice:old:svc\n";
	static const char *bad[] = { "a:b", "a\nb", "ab\r", "\n" };
	char *huge = malloc(9000);

	mt_passdb(t, orig);
	mt_matrix_service(t, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(change(t, "alice", "old", bad[i], bad[i], &c),
				 PAM_AUTHTOK_ERR);
		mt_conv_free(&c);
	}
	/* Too long for a passdb line. */
	assert_non_null(huge);
	memset(huge, 'x', 8999);
	huge[8999] = '\0';
	assert_int_equal(change(t, "alice", "old", huge, huge, &c),
			 PAM_AUTHTOK_ERR);
	mt_conv_free(&c);
	free(huge);
	assert_passdb(t, orig, sizeof(orig) - 1);
	assert_no_leftovers(t);
	assert_true(mt_log_has("passdb:1: new password"));
}

static void change_no_passdb(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_matrix_service(t, "");
	assert_int_equal(change(t, "alice", "old", "n", "n", &c),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 0);
	mt_conv_free(&c);
	assert_int_equal(change(t, NULL, "old", "n", "n", &c), PAM_BAD_ITEM);
	mt_conv_free(&c);
}

/* Every line of the user that is read gets the new password, as upstream
 * rewrites it (blanks after its colons dropped, a CR kept in the
 * service); every other byte stays, even bad lines and comments (which
 * upstream drops). */
static void change_keeps_bytes(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	static const char orig[] = "#c1\n"
				   "\n"
				   "alice:short\n"
				   "x:n\0l:svc\n"
				   "short\n"
				   "alice:old:Svc\n"
				   "bob: b:\tsvc\n"
				   "alice: dup:\tsvc\r\n"
				   "#tail";
	static const char want[] = "#c1\n"
				   "\n"
				   "alice:short\n"
				   "x:n\0l:svc\n"
				   "short\n"
				   "alice:brand-new:Svc\n"
				   "bob: b:\tsvc\n"
				   "alice:brand-new:svc\r\n"
				   "#tail";

	mt_write(t, "passdb", orig, sizeof(orig) - 1);
	mt_matrix_service(t, "");
	assert_int_equal(change(t, "alice", "old", "brand-new", "brand-new",
				&c),
			 PAM_SUCCESS);
	mt_conv_free(&c);
	assert_passdb(t, want, sizeof(want) - 1);

	/* Last line without a newline: rewritten with one, as upstream
	 * does. */
	mt_passdb(t, "bob:b:svc\nalice:old:svc");
	assert_int_equal(change(t, "alice", "old", "", "", &c), PAM_SUCCESS);
	mt_conv_free(&c);
	assert_passdb(t, "bob:b:svc\nalice::svc\n", 21);
	assert_int_equal(mt_auth(t, "alice", ""), PAM_SUCCESS);
}

/* Changing through a symlink rewrites the target, keeps the link. */
static void change_through_symlink(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	char link[PATH_MAX];
	struct stat st;

	mt_passdb(t, "alice:old:svc\n");
	mt_path(t, "link", link);
	assert_int_equal(symlink(t->passdb, link), 0);
	mt_service(t, "svc", "password required %s/pam_matrix.so passdb=%s\n",
		   t->moddir, link);
	assert_int_equal(change(t, "alice", "old", "n", "n", &c), PAM_SUCCESS);
	mt_conv_free(&c);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_passdb(t, "alice:n:svc\n", 12);
	assert_no_leftovers(t);
}

/* The rewrite's temporary file has no name until just before the rename;
 * the fixed name it then gets, left by a writer killed between the link
 * and the rename, is removed by the next password change. */
static void change_leftover(void **state)
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
	after = tu_read_file(t->passdb, NULL);
	assert_string_equal(after, "zed:changed:svc\n");
	free(after);
	assert_no_leftovers(t);
}

/* The tokens are left for the modules stacked after pam_matrix. */
static void change_sets_tokens(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;

	mt_passdb(t, "alice:old:svc\n");
	mt_service(t, "svc",
		   "password required %s/pam_matrix.so passdb=%s\n"
		   "password required %s/pam_get_items.so\n",
		   t->moddir, t->passdb, t->moddir);
	mt_conv_init(&c, 3, "old", "n", "n");
	pamh = mt_start(t, "svc", "alice", &c);
	assert_int_equal(pam_chauthtok(pamh, 0), PAM_SUCCESS);
	assert_non_null(pam_getenv(pamh, "PAM_OLDAUTHTOK"));
	assert_string_equal(pam_getenv(pamh, "PAM_OLDAUTHTOK"), "old");
	assert_non_null(pam_getenv(pamh, "PAM_AUTHTOK"));
	assert_string_equal(pam_getenv(pamh, "PAM_AUTHTOK"), "n");
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	mt_conv_free(&c);
}

/*
 * The update phase and bad flags can't be reached in the wrong order
 * through pam_chauthtok, and libpam refuses module data to code called from
 * the application, so pam_call_shim.so calls pam_matrix's entry point with
 * chosen flags from inside a real dispatch.
 */
static int shim_run(const struct mt_env *t, const char *steps,
		    struct mt_conv *c)
{
	const char *shim = getenv("MT_CALL_SHIM");

	assert_non_null(shim);
	mt_service(t, "shim",
		   "auth required %s %s/pam_matrix.so %s -- passdb=%s\n", shim,
		   t->moddir, steps, t->passdb);
	return mt_run(t, "shim", "alice", c, MT_AUTH, 0);
}

static void chauthtok_direct_flags(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:old:svc\n");
	mt_conv_init(&c, 3, "old", "n", "n");
	/* As upstream: without the old password item, before anything
	 * else (test_module_table.c has the missing module data). */
	assert_int_equal(shim_run(t, "update", &c), PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 0);
	assert_true(mt_log_has("PAM_OLDAUTHTOK is unset"));
	assert_int_equal(shim_run(t, "none", &c), PAM_SYSTEM_ERR);
	assert_int_equal(c.nmsgs, 0);
	assert_passdb(t, "alice:old:svc\n", 14);
	/* In order it works: the update finds the check's data. */
	assert_int_equal(shim_run(t, "prelim update", &c), PAM_SUCCESS);
	assert_int_equal(c.nmsgs, 3);
	assert_passdb(t, "alice:n:svc\n", 12);
	mt_conv_free(&c);
}

#define NCONC 50

/* 50 processes change 50 different users' passwords at once. */
static void change_concurrent(void **state)
{
	struct mt_env *t = *state;
	char *content = NULL;
	size_t len = 0;
	FILE *f;
	int go[2];
	pid_t pids[NCONC];
	struct stat st;
	char *got;
	char *want = NULL;
	size_t wlen = 0;

	f = open_memstream(&content, &len);
	assert_non_null(f);
	fprintf(f, "# concurrent test\n");
	for (int i = 0; i < NCONC; i++) {
		fprintf(f, "user%02d:old%02d:svc\n", i, i);
		if (i % 10 == 0) {
			fprintf(f, "# after %d\n", i);
		}
	}
	fclose(f);
	mt_write(t, "passdb", content, len);
	assert_int_equal(chmod(t->passdb, 0604), 0);
	mt_matrix_service(t, "");

	assert_int_equal(pipe(go), 0);
	for (int i = 0; i < NCONC; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			/* No cmocka assertions in the child: a failure there
			 * would go on running the rest of the suite. */
			char user[16], old[16], new[16], b;
			struct mt_conv c;
			pam_handle_t *pamh = NULL;
			int rv;

			close(go[1]);
			/* Wait until every child exists. */
			(void)read(go[0], &b, 1);
			snprintf(user, sizeof(user), "user%02d", i);
			snprintf(old, sizeof(old), "old%02d", i);
			snprintf(new, sizeof(new), "new%02d", i);
			mt_conv_init(&c, 3, old, new, new);
			rv = mt_start_raw(t, "svc", user, &c, &pamh);
			if (rv == PAM_SUCCESS) {
				rv = pam_chauthtok(pamh, 0);
				(void)pam_end(pamh, rv);
			}
			_exit(rv == PAM_SUCCESS ? 0 : 10 + rv);
		}
	}
	close(go[0]);
	close(go[1]); /* all children start */
	for (int i = 0; i < NCONC; i++) {
		int status;

		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}

	f = open_memstream(&want, &wlen);
	assert_non_null(f);
	fprintf(f, "# concurrent test\n");
	for (int i = 0; i < NCONC; i++) {
		fprintf(f, "user%02d:new%02d:svc\n", i, i);
		if (i % 10 == 0) {
			fprintf(f, "# after %d\n", i);
		}
	}
	fclose(f);
	got = tu_read_file(t->passdb, &len);
	assert_int_equal(len, wlen);
	assert_string_equal(got, want);
	free(got);
	free(want);
	free(content);
	assert_int_equal(stat(t->passdb, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0604);
	assert_no_leftovers(t);
}

#define T(f) cmocka_unit_test_setup_teardown(f, mt_setup, mt_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(change_success),
		T(change_echo),
		T(change_wrong_old),
		T(change_mismatch),
		T(change_no_answer),
		T(change_unstorable),
		T(change_no_passdb),
		T(change_keeps_bytes),
		T(change_through_symlink),
		T(change_leftover),
		T(change_sets_tokens),
		T(chauthtok_direct_flags),
		T(change_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
