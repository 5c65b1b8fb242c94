/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sweep's bound (issue 30): a wrapped process that makes its runtime
 * directory removes unused ones of its user, but looks at no more than 8
 * of them (PWRAP_SWEEP_MAX), so a start next to a large backlog (a killed
 * test run: here 20 directories of SIGKILLed processes) pays for 8, not
 * for all; the following starts clear the rest.  Process-level, with
 * tests/wrapper/pwrap_client and a private TMPDIR; this binary is not
 * preloaded.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#define SWEEP_MAX 8	/* PWRAP_SWEEP_MAX */
#define BACKLOG 20

struct ctx {
	char *tmp;	/* the children's TMPDIR */
	char *svc;	/* their PAM_WRAPPER_SERVICE_DIR */
	char **env;
	char *client;
};

static int setup(void **state)
{
	const char *const extra[] = { "PWRAP_CLIENT_PASSWORD=secret", NULL };
	struct ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->tmp = tu_mkdtemp("pwrap-test");
	c->svc = tu_mkdtemp("pwrap-test");
	tu_write_text(c->svc, "permit", "auth required pam_permit.so\n");
	c->env = tu_env_wrapped(c->tmp, c->svc, "1", extra);
	assert_true(asprintf(&c->client, "%s/tests/wrapper/pwrap_client",
			     getenv("PWRAP_BUILD_DIR")) > 0);
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
	free(c->client);
	tu_env_free(c->env);
	free(c);
	return 0;
}

/* Starts the client with END; for "hang", returns once it is ready (its
 * runtime directory is made and in use). */
static pid_t client(struct ctx *c, const char *end)
{
	char *argv[] = { c->client, "permit", "alice", "auth", (char *)end,
			 NULL };
	bool hang = strcmp(end, "hang") == 0;
	char buf[64] = { 0 };
	size_t got = 0;
	int fd = -1;
	pid_t pid = tu_spawn(argv, c->env, hang ? &fd : NULL, NULL, -1,
			     TU_SPAWN_INHERIT);

	while (hang && strstr(buf, "ready\n") == NULL &&
	       got < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);

		assert_true(n > 0);
		got += (size_t)n;
	}
	if (fd >= 0) {
		close(fd);
	}
	return pid;
}

/* Runs one wrapped process that exits normally; returns how many
 * directories are left in TMPDIR afterwards. */
static int one_start(struct ctx *c)
{
	int st = tu_wait(client(c, "exit"));

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	return tu_count_entries(c->tmp, false);
}

static void test_backlog_is_cleared_a_few_at_a_time(void **state)
{
	struct ctx *c = *state;
	pid_t pids[BACKLOG];
	int i;

	/* BACKLOG live directories (each start looks at some of the others
	 * and leaves them: they are in use) */
	for (i = 0; i < BACKLOG; i++) {
		pids[i] = client(c, "hang");
	}
	assert_int_equal(tu_count_entries(c->tmp, false), BACKLOG);
	for (i = 0; i < BACKLOG; i++) {
		assert_int_equal(kill(pids[i], SIGKILL), 0);
		assert_true(WIFSIGNALED(tu_wait(pids[i])));
	}
	/* all unused now; each start takes SWEEP_MAX away and its own
	 * directory at exit */
	assert_int_equal(tu_count_entries(c->tmp, false), BACKLOG);
	assert_int_equal(one_start(c), BACKLOG - SWEEP_MAX);
	assert_int_equal(one_start(c), BACKLOG - 2 * SWEEP_MAX);
	assert_int_equal(one_start(c), 0);
}

/* Live directories among the dead are never taken, whichever ones a start
 * looks at; once their processes are gone, they go too. */
static void test_live_ones_stay(void **state)
{
	struct ctx *c = *state;
	pid_t live[SWEEP_MAX], dead[SWEEP_MAX];
	int i, left;

	for (i = 0; i < SWEEP_MAX; i++) {
		live[i] = client(c, "hang");
		dead[i] = client(c, "hang");
	}
	for (i = 0; i < SWEEP_MAX; i++) {
		assert_int_equal(kill(dead[i], SIGKILL), 0);
		assert_true(WIFSIGNALED(tu_wait(dead[i])));
	}
	/* 16 there, 8 of them live: a start removes between 0 and 8 */
	left = one_start(c);
	assert_true(left >= SWEEP_MAX && left <= 2 * SWEEP_MAX);
	for (i = 0; i < SWEEP_MAX; i++) {
		assert_int_equal(kill(live[i], 0), 0);	/* still running */
	}
	/* however often it is tried, the live ones stay */
	for (i = 0; i < 4; i++) {
		assert_true(one_start(c) >= SWEEP_MAX);
	}
	for (i = 0; i < SWEEP_MAX; i++) {
		assert_int_equal(kill(live[i], SIGKILL), 0);
		assert_true(WIFSIGNALED(tu_wait(live[i])));
	}
	for (i = 0; i < 3 && tu_count_entries(c->tmp, false) > 0; i++) {
		(void)one_start(c);
	}
	assert_int_equal(tu_count_entries(c->tmp, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_backlog_is_cleared_a_few_at_a_time, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_live_ones_stay, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
