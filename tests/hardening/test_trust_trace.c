/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Trust of the module trace's destination (PAM_WRAPPER_TRACE; issue 34): a
 * trace never blocks the application, and never writes into a file or FIFO
 * another user owns or reached through a link another user planted.  Each
 * test runs tests/hardening/trust_client, wrapped and traced, with a
 * private TMPDIR; nobody (65534) is the other user, and the cases that
 * need a second user are root's (the nobody twin skips them, saying why).
 *
 *   fifo_not_read     a FIFO whose reader holds it open but never reads:
 *                     the program runs on (9c82650: it hung in
 *                     pam_authenticate once 64 KiB were queued); what the
 *                     FIFO got is whole records
 *   fifo_of_another   another user's FIFO in a shared sticky directory:
 *                     it gets nothing (9c82650: every record of root's)
 *   file_of_another   another user's existing file: left as it was
 *                     (9c82650: appended to)
 *   dir_link_of_another  a directory on the way is a link another user
 *                     planted in a sticky directory, to one of root's:
 *                     not followed (9c82650: root's directory got the
 *                     file); a link root or the user made is followed
 *   hard_link         an existing file with another name elsewhere (a
 *                     hard link, which another user may make to root's
 *                     files where links are not protected): left as it was
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <security/pam_appl.h>
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

#include "trust_util.h"

#define PW TRUST_PW
#define NOBODY TRUST_NOBODY

/* The client's environment: the fixture's, traced to dest. */
static char **traced_env(const struct trust_ctx *c, const char *dest)
{
	char *v = NULL;
	char **env;

	assert_true(asprintf(&v, "PAM_WRAPPER_TRACE=%s", dest) > 0);
	env = tu_env_wrapped(c->f.tmp, c->f.svc, "1",
			     (const char *const[]){ v, NULL });
	free(v);
	return env;
}

/* Runs the client (as alice, traced to dest) with steps; its output. */
static char *run_traced(const struct trust_ctx *c, const char *dest,
			const char *const *steps, int want)
{
	char **env = traced_env(c, dest);
	char *out;
	int rc = trust_run(env, "alice", steps, &out);

	if (rc != want) {
		fail_msg("the client exited %d, not %d:\n%s", rc, want, out);
	}
	tu_env_free(env);
	return out;
}

/* Everything a FIFO opened without blocking holds now. */
static char *drain(int fd)
{
	char buf[65536];
	char *all = strdup("");
	size_t len = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		all = realloc(all, len + (size_t)n + 1);
		memcpy(all + len, buf, (size_t)n);
		len += (size_t)n;
		all[len] = '\0';
	}
	return all;
}

/*
 * The reader holds the FIFO open and reads nothing: 400 transactions
 * write several times 64 KiB of records.  The program must end (within
 * TU_HANG_SECONDS: only a hang takes that long; a second when idle), every
 * transaction succeed,
 * and what reached the FIFO be whole records.
 */
static void test_fifo_not_read(void **state)
{
	static const char *const steps[] = { "txns:400:" PW, NULL };
	struct trust_ctx *c = *state;
	char *fifo = tu_path(c->f.top, "trace.fifo");
	char **env, **argv, *out, *got;
	int rfd, ofd, rc;
	pid_t pid;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	env = traced_env(c, fifo);
	argv = trust_argv("alice", steps);
	pid = tu_spawn(argv, env, &ofd, NULL, -1, TU_SPAWN_MERGE);
	rc = tu_wait_bounded(pid, TU_HANG_SECONDS);	/* (kills it at the limit) */
	if (rc == -1) {
		fail_msg("the traced program still runs after %d s: it blocks "
			 "on the FIFO nobody reads", TU_HANG_SECONDS);
	}
	out = tu_slurp(ofd, NULL);
	if (rc != 0 || strstr(out, "txns: 400\n") == NULL ||
	    strstr(out, "does not read") == NULL) {
		fail_msg("exit %d:\n%s", rc, out);
	}
	got = drain(rfd);
	assert_true(strlen(got) > 0);
	/* whole records only: each line a JSON object */
	for (char *l = got; *l != '\0'; l = strchr(l, '\n') + 1) {
		char *nl = strchr(l, '\n');

		assert_non_null(nl);
		assert_true(l[0] == '{' && nl[-1] == '}');
	}
	close(rfd);
	free(got);
	free(out);
	free(argv);
	tu_env_free(env);
	free(fifo);
}

/* A FIFO of nobody's in a sticky directory both may use: root's
 * transactions must write nothing into it. */
static void test_fifo_of_another(void **state)
{
	static const char *const steps[] = { "txn:" PW, "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char *fifo = tu_path(c->f.tmp, "trace.fifo");
	char *out, *got;
	int rfd;

	if (!trust_need_root("a FIFO of another user is made with chown")) {
		skip();
	}
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	assert_int_equal(mkfifo(fifo, 0622), 0);
	assert_int_equal(chown(fifo, NOBODY, NOBODY), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	out = run_traced(c, fifo, steps, 0);
	got = drain(rfd);
	if (got[0] != '\0' || strstr(out, "owned by uid 65534") == NULL) {
		fail_msg("nobody's FIFO read:\n%s\nthe client said:\n%s", got,
			 out);
	}
	close(rfd);
	unlink(fifo);
	free(got);
	free(out);
	free(fifo);
}

/* nobody's existing file: left empty. */
static void test_file_of_another(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char *file = tu_path(c->f.tmp, "trace.json");
	char *out, *got;

	if (!trust_need_root("a file of another user is made with chown")) {
		skip();
	}
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	tu_write_file(file, "", 0, 0666);
	assert_int_equal(chown(file, NOBODY, NOBODY), 0);
	out = run_traced(c, file, steps, 0);
	got = tu_read_file(file, NULL);
	if (got[0] != '\0' || strstr(out, "owned by uid 65534") == NULL) {
		fail_msg("nobody's file got:\n%s\nthe client said:\n%s", got,
			 out);
	}
	unlink(file);
	free(got);
	free(out);
	free(file);
}

/*
 * In a sticky directory both may use, nobody plants "d", a link to a
 * directory of root's that nobody cannot enter; root traces to d/trace.
 * Nothing may appear in root's directory.  The same link made by root is
 * followed (a control).
 */
static void test_dir_link_of_another(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char *priv = tu_subdir(c->f.top, "private");
	char *link = tu_path(c->f.tmp, "d");
	char *dest = tu_path(link, "trace");
	char *made = tu_path(priv, "trace");
	char *out;
	struct stat st;

	if (!trust_need_root("a link of another user is made with lchown")) {
		skip();
	}
	assert_int_equal(chmod(c->f.tmp, 01777), 0);
	assert_int_equal(chmod(priv, 0700), 0);
	assert_int_equal(symlink(priv, link), 0);
	assert_int_equal(lchown(link, NOBODY, NOBODY), 0);
	out = run_traced(c, dest, steps, 0);
	if (lstat(made, &st) == 0 ||
	    strstr(out, "link of uid 65534") == NULL) {
		fail_msg("%s: a trace reached root's directory through "
			 "nobody's link %s; the client said:\n%s", made, link,
			 out);
	}
	free(out);
	/* root's own link is followed */
	assert_int_equal(lchown(link, 0, 0), 0);
	out = run_traced(c, dest, steps, 0);
	assert_int_equal(lstat(made, &st), 0);
	assert_true(st.st_size > 0);
	assert_null(strstr(out, "PWRAP_ERROR"));
	unlink(link);
	free(out);
	free(made);
	free(dest);
	free(link);
	free(priv);
}

/* A second name of one of root's files (made here by root; another user
 * can make one where hard links are not protected): the file is left as
 * it was. */
static void test_hard_link(void **state)
{
	static const char *const steps[] = { "txn:" PW, NULL };
	struct trust_ctx *c = *state;
	char *priv = tu_subdir(c->f.top, "private");
	char *file = tu_path(priv, "secret");
	char *hl = tu_path(c->f.tmp, "trace.json");
	char *out, *got;

	if (!trust_need_root("a second user's hard link stands for one")) {
		skip();
	}
	tu_write_file(file, "root's\n", 7, 0600);
	assert_int_equal(link(file, hl), 0);
	out = run_traced(c, hl, steps, 0);
	got = tu_read_file(file, NULL);
	if (strcmp(got, "root's\n") != 0 ||
	    strstr(out, "has 2 names") == NULL) {
		fail_msg("%s got:\n%s\nthe client said:\n%s", file, got, out);
	}
	unlink(hl);
	free(got);
	free(out);
	free(hl);
	free(file);
	free(priv);
}

#define T(f) cmocka_unit_test_setup_teardown(f, trust_setup, trust_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_fifo_not_read),
		T(test_fifo_of_another),
		T(test_file_of_another),
		T(test_dir_link_of_another),
		T(test_hard_link),
	};

	tu_alarm(TU_SUITE_HANG_SECONDS, "test_trust_trace: a test hangs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
