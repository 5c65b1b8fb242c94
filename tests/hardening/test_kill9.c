/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SIGKILL at random moments of wrapped PAM transactions.  Two wrapped
 * clients at a time (different users) run auth or auth+chauthtok against a
 * pam_matrix passdb and are killed after a random delay of 0-20 ms (seeded:
 * the seed is printed; HARD_SEED=n repeats a run; HARD_KILLS=n changes the
 * number of clients, 200 by default).  After every kill the passdb must be
 * whole: exactly the template with each user's password either the old one
 * or the one being set, never a half-written file.  At the end no
 * temporary file of pam_matrix may be left next to the passdb, fresh
 * transactions (auth and chauthtok for every user) must work, and once
 * they exited the clients' private TMPDIR must be empty: the first fresh
 * wrapped process removes what the killed ones left.
 */
#define _GNU_SOURCE
#include <errno.h>
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hard_util.h"

#define NUSERS 8
#define PAR 2		/* clients alive at once */
#define MAX_DELAY_US 20000

struct ctx {
	struct hu_fixture f;
	char *pw[NUSERS];	/* what the passdb holds now */
	unsigned version[NUSERS];
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));

	hu_fixture_init(&c->f, "hard");
	for (int i = 0; i < NUSERS; i++) {
		assert_true(asprintf(&c->pw[i], "u%d-v0", i) > 0);
	}
	hu_fixture_passdb(&c->f, NUSERS, c->pw, 0600);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	hu_fixture_free(&c->f);
	for (int i = 0; i < NUSERS; i++) {
		free(c->pw[i]);
	}
	free(c);
	return 0;
}

struct job {
	int user;
	pid_t pid;
	char *next;	/* the password being set, or NULL (auth only) */
	long long kill_at_us;
};

/*
 * Finds which of the candidate passwords the passdb holds for the users of
 * the jobs (each either its old or its next password; all other users keep
 * theirs) and records it.  Fails when the file matches no combination.
 */
static void check_passdb(struct ctx *c, struct job *jobs, int n)
{
	char *got = tu_read_file(c->f.passdb, NULL);
	char *saved[PAR];

	assert_non_null(got);
	for (int i = 0; i < n; i++) {
		saved[i] = c->pw[jobs[i].user];
	}
	for (unsigned combo = 0; combo < (1u << n); combo++) {
		char *want;
		bool skip = false;

		for (int i = 0; i < n; i++) {
			bool take_next = (combo >> i) & 1;

			if (take_next && jobs[i].next == NULL) {
				skip = true;
			}
			c->pw[jobs[i].user] = take_next ? jobs[i].next : saved[i];
		}
		if (skip) {
			continue;
		}
		want = hu_passdb_render(NUSERS, c->pw);
		if (strcmp(want, got) == 0) {
			free(want);
			free(got);
			for (int i = 0; i < n; i++) {
				if (c->pw[jobs[i].user] == jobs[i].next) {
					free(saved[i]);
					jobs[i].next = NULL;	/* taken */
				}
			}
			return;
		}
		free(want);
	}
	print_message("passdb is neither old nor new:\n%s\n", got);
	fail_msg("passdb damaged by a killed transaction");
}

static void test_kill9_random(void **state)
{
	struct ctx *c = *state;
	const char *s = getenv("HARD_SEED");
	const char *k = getenv("HARD_KILLS");
	unsigned seed = s ? (unsigned)strtoul(s, NULL, 10)
			  : (unsigned)time(NULL) ^ (unsigned)getpid();
	int kills = k ? atoi(k) : 200;
	int finished = 0, killed = 0, changed = 0;

	print_message("test_kill9: seed %u (HARD_SEED=%u repeats this run), "
		      "%d clients\n", seed, seed, kills);
	srand(seed);
	for (int done = 0; done < kills; done += PAR) {
		struct job jobs[PAR];
		int first = rand() % NUSERS;
		long long t0;

		for (int j = 0; j < PAR; j++) {
			struct job *jb = &jobs[j];
			char user[16];
			bool chpw = rand() % 4 != 0;

			jb->user = (first + j) % NUSERS;
			jb->next = NULL;
			if (chpw) {
				assert_true(asprintf(&jb->next, "u%d-v%u", jb->user,
						     ++c->version[jb->user]) > 0);
			}
			jb->kill_at_us = rand() % (MAX_DELAY_US + 1);
			snprintf(user, sizeof(user), "user%02d", jb->user);
			{
				char *argv[] = { (char *)hu_client(), "hard", user,
						 chpw ? "auth,chauthtok" : "auth,acct",
						 c->pw[jb->user], c->pw[jb->user],
						 jb->next, jb->next, NULL };

				jb->pid = tu_spawn(argv, c->f.env, NULL,
						   NULL, -1, 0);
			}
		}
		t0 = tu_now_ms() * 1000;
		for (int j = 0; j < PAR; j++) {
			long long wait = jobs[j].kill_at_us -
					 (tu_now_ms() * 1000 - t0);

			if (wait > 0) {
				usleep((useconds_t)wait);
			}
			kill(jobs[j].pid, SIGKILL);
		}
		for (int j = 0; j < PAR; j++) {
			int st = tu_wait(jobs[j].pid);

			if (WIFSIGNALED(st)) {
				assert_int_equal(WTERMSIG(st), SIGKILL);
				killed++;
			} else {
				/* finished before the kill: it must have
				 * succeeded */
				assert_int_equal(WEXITSTATUS(st), 0);
				finished++;
			}
		}
		check_passdb(c, jobs, PAR);
		for (int j = 0; j < PAR; j++) {
			if (jobs[j].next == NULL) {
				continue;
			}
			free(jobs[j].next);	/* not taken */
		}
		changed = 0;
		for (int i = 0; i < NUSERS; i++) {
			changed += c->version[i] > 0 &&
				   strstr(c->pw[i], "-v0") == NULL;
		}
	}
	print_message("test_kill9: %d killed, %d finished first, %d users "
		      "changed\n", killed, finished, changed);
	assert_true(killed > 0);	/* else no kill happened mid-way */

	/* pam_matrix left no half-written file behind.  A writer killed
	 * between linking its complete new file as passdb.pam_matrix-new
	 * and renaming it over the passdb leaves that one name (the next
	 * writer removes it under the lock, checked below); anything else
	 * next to the passdb is a defect.  The killed clients' runtime
	 * directories are still there until the next wrapped process. */
	{
		int left_tmp = tu_count_entries(c->f.tmp, true);
		int left_db = tu_count_entries(c->f.db_dir, true) - 1;
		char *pending = tu_path(c->f.db_dir, "passdb.pam_matrix-new");
		bool has_pending = access(pending, F_OK) == 0;

		print_message("test_kill9: %d runtime dir(s) left by killed "
			      "clients, %d temporary file(s) next to the "
			      "passdb%s\n", left_tmp, left_db,
			      has_pending ? " (a complete new one not yet "
					    "renamed)" : "");
		assert_int_equal(left_db, has_pending ? 1 : 0);
		free(pending);
	}

	/* and everything still works */
	for (int i = 0; i < NUSERS; i++) {
		char user[16];
		char *next = NULL;
		int st;

		snprintf(user, sizeof(user), "user%02d", i);
		assert_true(asprintf(&next, "u%d-final", i) > 0);
		{
			char *argv[] = { (char *)hu_client(), "hard", user,
					 "auth,acct,chauthtok", c->pw[i], c->pw[i],
					 next, next, NULL };

			st = tu_wait(tu_spawn(argv, c->f.env, NULL, NULL,
					      -1, 0));
		}
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		free(c->pw[i]);
		c->pw[i] = next;
	}
	{
		char *want = hu_passdb_render(NUSERS, c->pw);
		char *got = tu_read_file(c->f.passdb, NULL);

		assert_string_equal(got, want);
		free(want);
		free(got);
	}
	/* every client since the kills exited normally and each removed up
	 * to 8 of the dead ones' directories (the sweep's bound, issue 23):
	 * what is still there goes with the next wrapped processes, each
	 * taking some (on a busy machine more clients die mid-way than the
	 * eight above take away); the writers since removed any new file a
	 * killed writer left */
	for (int left = tu_count_entries(c->f.tmp, false), now; left > 0;
	     left = now) {
		char *argv[] = { (char *)hu_client(), "hard", "user00",
				 "auth,acct", c->pw[0], NULL };
		int st = tu_wait(tu_spawn(argv, c->f.env, NULL, NULL, -1, 0));

		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		now = tu_count_entries(c->f.tmp, false);
		if (now >= left) {
			(void)tu_count_entries(c->f.tmp, true);
			fail_msg("a wrapped process removed none of the %d dead "
				 "clients' directories", left);
		}
	}
	assert_int_equal(tu_count_entries(c->f.db_dir, true), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kill9_random, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
