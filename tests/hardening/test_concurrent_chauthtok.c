/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 50 wrapped processes change 50 different users' passwords in one
 * pam_matrix passdb at the same moment (each process does pam_start, then
 * waits on a shared barrier, then pam_chauthtok).  Afterwards the passdb
 * must be exactly the old file with those 50 passwords replaced: no line
 * lost, duplicated or altered (comments, malformed and CRLF lines and the
 * last line without '\n' included), its mode kept, no temporary file next to
 * it, every new password accepted and the old ones refused, and the
 * processes' TMPDIR empty once they are gone.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
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

#include "hard_util.h"

#define NUSERS 50
#define DB_MODE 0640

struct ctx {
	struct hu_fixture f;
	char *oldpw[NUSERS], *newpw[NUSERS];
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	hu_fixture_init(&c->f, "hard");
	for (int i = 0; i < NUSERS; i++) {
		assert_true(asprintf(&c->oldpw[i], "old-%02d-%d", i, getpid()) > 0);
		assert_true(asprintf(&c->newpw[i], "new-%02d-%d", i, getpid()) > 0);
	}
	hu_fixture_passdb(&c->f, NUSERS, c->oldpw, DB_MODE);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	hu_fixture_free(&c->f);
	for (int i = 0; i < NUSERS; i++) {
		free(c->oldpw[i]);
		free(c->newpw[i]);
	}
	free(c);
	return 0;
}

/* Runs hard_client for every user at once; returns how many exited with
 * status `expect` (0: all operations succeeded, 1: one was refused). */
static int run_all(struct ctx *c, const char *ops, char **pw1, char **pw2,
		   bool barrier, int expect)
{
	pid_t pids[NUSERS];
	int b[2] = { -1, -1 };
	int ok = 0;

	if (barrier) {
		assert_int_equal(pipe2(b, O_CLOEXEC), 0);
	}
	for (int i = 0; i < NUSERS; i++) {
		char user[16];
		char *argv[] = { (char *)hu_client(), "hard", user, (char *)ops,
				 pw1[i], pw2 ? pw2[i] : NULL,
				 pw2 ? pw2[i] : NULL, NULL };
		char **env = c->f.env;
		char **benv = NULL;

		snprintf(user, sizeof(user), "user%02d", i);
		if (barrier) {
			const char *extra[] = { "HARD_WAIT_FD=3", NULL };

			benv = tu_env_wrapped(c->f.tmp, c->f.svc, "1", extra);
			env = benv;
		}
		pids[i] = tu_spawn(argv, env, NULL, NULL,
				   barrier ? b[0] : -1, 0);
		if (benv != NULL) {
			tu_env_free(benv);
		}
	}
	if (barrier) {
		close(b[0]);
		close(b[1]);	/* go */
	}
	for (int i = 0; i < NUSERS; i++) {
		int st = tu_wait(pids[i]);

		if (WIFEXITED(st) && WEXITSTATUS(st) == expect) {
			ok++;
		} else {
			print_message("user%02d: %s %d\n", i,
				      WIFEXITED(st) ? "exit" : "signal",
				      WIFEXITED(st) ? WEXITSTATUS(st)
						    : WTERMSIG(st));
		}
	}
	return ok;
}

static void test_50_concurrent_chauthtok(void **state)
{
	struct ctx *c = *state;
	struct stat st;
	size_t got_len = 0;
	char *want = hu_passdb_render(NUSERS, c->newpw);
	char *got;
	int ok;

	ok = run_all(c, "chauthtok", c->oldpw, c->newpw, true, 0);
	assert_int_equal(ok, NUSERS);

	/* byte for byte: the old file with the 50 passwords replaced */
	got = tu_read_file(c->f.passdb, &got_len);
	assert_non_null(got);
	if (got_len != strlen(want) || strcmp(got, want) != 0) {
		print_message("passdb after the run:\n%s\n", got);
	}
	assert_string_equal(got, want);
	assert_int_equal(stat(c->f.passdb, &st), 0);
	assert_int_equal(st.st_mode & 07777, DB_MODE);
	assert_int_equal(tu_count_entries(c->f.db_dir, true), 1);

	/* the new passwords work, the old ones do not */
	assert_int_equal(run_all(c, "auth,acct", c->newpw, NULL, false, 0),
			 NUSERS);
	/* refused: exit 1 (an operation failed), not a crash or exit 2/3 */
	assert_int_equal(run_all(c, "auth", c->oldpw, NULL, false, 1), NUSERS);
	assert_int_equal(tu_wait_empty(c->f.tmp, TU_HANG_SECONDS), 0);
	free(got);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_50_concurrent_chauthtok,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
