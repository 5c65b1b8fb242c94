/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regression tests of the runtime directory's lifetime, against the contract
 * of the flock(2)-based cleanup: a live directory (its lock held by its
 * process) is never removed by anyone -- not from another PID namespace, not
 * under uid_wrapper -- a stale one is removed by the next wrapped process of
 * the same real uid, a wrapped process makes no process of its own, and the
 * descriptors the wrapper keeps are >= 3, O_CLOEXEC, and survive (or are
 * recovered after) an application's closefrom() or dup2() over them.  Each
 * test is the regression test of one defect of the old watcher-process
 * design (named in its comment).  Children run tests/wrapper/
 * pwrap_lifetime_client with a private TMPDIR that must be empty at the end;
 * this binary itself is not preloaded.  Namespace tests use util-linux's
 * unshare (as root, or with unprivileged user namespaces) and are skipped
 * with a message when neither works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"

#define STEP_MS (TU_HANG_SECONDS * 1000)	/* only a hang takes it */
#define MAX_KIDS 16
#define SERVICE "lt"

struct ctx {
	char *tmp;		/* the children's TMPDIR: must end up empty */
	char *svc;		/* PAM_WRAPPER_SERVICE_DIR, with service "lt" */
	char *data;		/* passdbs, stderr captures, the client's report */
	pid_t kids[MAX_KIDS];	/* not reaped yet (killed in teardown) */
};

struct child {
	pid_t pid;
	int in;			/* write end of its stdin, or -1 */
	int out;		/* read end of its stdout, or -1 */
};

/* ---- set-up ------------------------------------------------------------- */

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	char *svc = NULL;

	assert_non_null(c);
	c->tmp = tu_mkdtemp("pwrap-test");
	c->svc = tu_mkdtemp("pwrap-test");
	c->data = tu_mkdtemp("pwrap-test");
	/* alice is allowed, bob is not; an override (passdb2) swaps them */
	tu_write_text(c->data, "passdb", "alice:secret:" SERVICE "\n");
	tu_write_text(c->data, "passdb2", "bob:secret:" SERVICE "\n");
	assert_true(asprintf(&svc, "auth required pam_matrix.so passdb=%s/passdb\n"
			     "account required pam_matrix.so passdb=%s/passdb\n",
			     c->data, c->data) > 0);
	tu_write_text(c->svc, SERVICE, svc);
	free(svc);
	*state = c;
	return 0;
}

/* Our children, from /proc; -1 when the kernel does not list them. */
static int children_of(pid_t pid, pid_t *out, int max)
{
	char path[64];
	FILE *f;
	long p;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)pid,
		 (long)pid);
	f = fopen(path, "re");
	if (f == NULL) {
		return -1;
	}
	while (n < max && fscanf(f, "%ld", &p) == 1) {
		out[n++] = (pid_t)p;
	}
	fclose(f);
	return n;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
	}
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	pid_t left[64];
	int n;

	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	for (int i = 0; i < MAX_KIDS; i++) {
		if (c->kids[i] > 0) {
			kill(c->kids[i], SIGKILL);
			reap(c->kids[i]);
		}
	}
	/* anything a subreaper test adopted */
	n = children_of(getpid(), left, 64);
	for (int i = 0; i < n; i++) {
		kill(left[i], SIGKILL);
		reap(left[i]);
	}
	tu_rmtree(c->tmp);
	tu_rmtree(c->svc);
	tu_rmtree(c->data);
	free(c->tmp);
	free(c->svc);
	free(c->data);
	free(c);
	return 0;
}

static char *client_named(const char *name)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/tests/wrapper/%s",
			     getenv("PWRAP_BUILD_DIR"), name) > 0);
	return p;
}

/* The client linked with libpam (see pwrap_lifetime_client.c). */
static char *client_path(void)
{
	return client_named("pwrap_lifetime_client");
}

/* The environment of a wrapped child: ours without anything of the
 * wrapper's, plus TMPDIR, PAM_WRAPPER=1, the service dir, LD_PRELOAD=preload
 * (unless NULL) and the NULL-terminated `extra` list. */
static char **make_env(const struct ctx *c, const char *preload, ...)
{
	static const char *const drop[] = { "TMPDIR=", "PAM_WRAPPER",
					    "UID_WRAPPER", "LD_PRELOAD=",
					    NULL };
	char **env = tu_env_copy(drop);
	const char *e;
	va_list ap;

	tu_env_add(&env, "TMPDIR=%s", c->tmp);
	tu_env_add(&env, "PAM_WRAPPER_SERVICE_DIR=%s", c->svc);
	tu_env_add(&env, "PWRAP_LT_REPORT=%s/report", c->data);
	tu_env_add(&env, "PAM_WRAPPER=1");
	tu_env_add(&env, "PWRAP_CLIENT_PASSWORD=secret");
	if (preload != NULL) {
		tu_env_add(&env, "LD_PRELOAD=%s", preload);
	}
	va_start(ap, preload);
	while ((e = va_arg(ap, const char *)) != NULL) {
		tu_env_add(&env, "%s", e);
	}
	va_end(ap);
	return env;
}

/* ---- children ----------------------------------------------------------- */

static void kid_add(struct ctx *c, pid_t pid)
{
	for (int i = 0; i < MAX_KIDS; i++) {
		if (c->kids[i] == 0) {
			c->kids[i] = pid;
			return;
		}
	}
	fail_msg("too many children");
}

static void kid_forget(struct ctx *c, pid_t pid)
{
	for (int i = 0; i < MAX_KIDS; i++) {
		if (c->kids[i] == pid) {
			c->kids[i] = 0;
		}
	}
}

enum stdio_mode {
	IO_INHERIT,	/* stdin /dev/null, stdout and stderr ours */
	IO_PIPES,	/* stdin and stdout are pipes to us */
	IO_CLOSED,	/* 0, 1 and 2 closed at exec */
};

/* Spawns argv; nothing of ours but (per mode) 0-2 is inherited, so the
 * child's fds >= 3 are all its own.  err_fd >= 0 becomes its stderr. */
static struct child start(struct ctx *c, char *const argv[], char **env,
			  enum stdio_mode mode, int err_fd)
{
	posix_spawn_file_actions_t fa;
	struct child k = { -1, -1, -1 };
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	if (mode == IO_CLOSED) {
		for (int fd = 0; fd < 3; fd++) {
			posix_spawn_file_actions_addclose(&fa, fd);
		}
	} else if (mode == IO_PIPES) {
		assert_int_equal(pipe2(in, O_CLOEXEC), 0);
		assert_int_equal(pipe2(out, O_CLOEXEC), 0);
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	} else {
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	}
	if (err_fd >= 0 && mode != IO_CLOSED) {
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	}
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	assert_int_equal(posix_spawn(&k.pid, argv[0], &fa, NULL, argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	kid_add(c, k.pid);
	if (mode == IO_PIPES) {
		close(in[0]);
		close(out[1]);
		k.in = in[1];
		k.out = out[0];
	}
	return k;
}

/* Waits up to ms for pid; false (and still running) on time-out. */
static bool finish(struct ctx *c, pid_t pid, int ms, int *status)
{
	for (int waited = 0;; waited += 10) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid) {
			kid_forget(c, pid);
			return true;
		}
		assert_true(r == 0 || errno == EINTR);
		if (waited >= ms) {
			return false;
		}
		usleep(10000);
	}
}

static void kill_kid(struct ctx *c, pid_t pid)
{
	kill(pid, SIGKILL);
	reap(pid);
	kid_forget(c, pid);
}

static void close_child(struct child *k)
{
	if (k->in >= 0) {
		close(k->in);
	}
	if (k->out >= 0) {
		close(k->out);
	}
	k->in = k->out = -1;
}

/* What the client wrote to $PWRAP_LT_REPORT (or ""), malloc'd. */
static char *client_report(const struct ctx *c)
{
	char *r = tu_read_at(c->data, "report");

	return r != NULL ? r : strdup("");
}

static const char *describe(int st, char *buf, size_t len)
{
	if (WIFEXITED(st)) {
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	} else if (WIFSIGNALED(st)) {
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	} else {
		snprintf(buf, len, "status 0x%x", st);
	}
	return buf;
}

/* Runs to completion within STEP_MS and must exit 0 (else: fail, saying
 * what the client reported). */
static void expect_success(struct ctx *c, pid_t pid, const char *what)
{
	char buf[128];
	int st = 0;

	if (!finish(c, pid, STEP_MS, &st)) {
		kill_kid(c, pid);
		fail_msg("%s: still running after %d ms", what, STEP_MS);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *r = client_report(c);

		print_error("%s: %s; the client reported:\n%s", what,
			    describe(st, buf, sizeof(buf)), r);
		free(r);
		fail();
	}
}

/* Reads "ready PID DIR" from the child within STEP_MS; returns DIR
 * (malloc'd) or NULL if the child ended or timed out first. */
static char *read_ready(struct child *k, long *pid)
{
	char line[4096];
	size_t got = 0;
	char *dir = NULL;

	while (got < sizeof(line) - 1) {
		struct pollfd p = { .fd = k->out, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, STEP_MS) <= 0) {
			return NULL;
		}
		n = read(k->out, line + got, 1);	/* a line, not more */
		if (n <= 0) {
			return NULL;
		}
		if (line[got] == '\n') {
			break;
		}
		got++;
	}
	line[got] = '\0';
	dir = calloc(1, sizeof(line));
	assert_non_null(dir);
	if (sscanf(line, "ready %ld %4000s", pid, dir) != 2) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* read_ready() that must succeed (else fails with the client's report). */
static char *must_ready(struct ctx *c, struct child *k, long *pid)
{
	char *dir = read_ready(k, pid);

	if (dir == NULL) {
		char *r;

		kill_kid(c, k->pid);
		r = client_report(c);
		print_error("the client ended or hung before its 'sync' step; "
			    "it reported:\n%s", r);
		free(r);
		fail();
	}
	return dir;
}

static void go(struct child *k)
{
	assert_int_equal(write(k->in, "go\n", 3), 3);
}

/* The runtime dir's top (DIR/services -> DIR), malloc'd. */
static char *top_of(const char *services)
{
	char *t = strdup(services);
	char *slash = strrchr(t, '/');

	assert_non_null(slash);
	*slash = '\0';
	return t;
}

/* Writes the override that swaps who is allowed (bob, not alice) into a
 * client's PAM_WRAPPER_RUNTIME_DIR: what tests written for upstream do. */
static void write_override(const struct ctx *c, const char *rundir)
{
	char *text = NULL;

	assert_true(asprintf(&text, "auth required pam_matrix.so passdb=%s/passdb2\n",
			     c->data) > 0);
	tu_write_text(rundir, SERVICE, text);
	free(text);
}

static void expect_tmpdir_empty(const struct ctx *c, const char *why)
{
	int n = tu_count_entries(c->tmp, false);

	if (n != 0) {
		char *cmd = NULL;

		print_error("%d entr%s left in TMPDIR %s (%s):\n", n,
			    n == 1 ? "y" : "ies", c->tmp, why);
		assert_true(asprintf(&cmd, "ls -la '%s' >&2", c->tmp) > 0);
		if (system(cmd) != 0) {
			/* only a diagnostic */
		}
		free(cmd);
		fail();
	}
}

/* ---- namespaces --------------------------------------------------------- */

static const char *unshare_path(void)
{
	static const char *const cands[] = { "/usr/bin/unshare", "/bin/unshare",
					     "/usr/sbin/unshare" };

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (access(cands[i], X_OK) == 0) {
			return cands[i];
		}
	}
	return NULL;
}

/* unshare's options for a new PID namespace with its own /proc, whose
 * init is killed with unshare: as root without a user namespace, else
 * with an unprivileged one.  NULL when neither works here. */
static const char *const *ns_flags(struct ctx *c)
{
	static const char *const as_root[] = { "-p", "-f", "--mount-proc",
					       "--kill-child", NULL };
	static const char *const as_user[] = { "-U", "-r", "-p", "-f",
					       "--mount-proc", "--kill-child",
					       NULL };
	static const char *const *const order[] = { as_root, as_user };
	static const char *const *found;
	static bool probed;
	const char *u = unshare_path();

	if (probed || u == NULL) {
		return found;
	}
	probed = true;
	for (size_t i = geteuid() == 0 ? 0 : 1; i < 2; i++) {
		const char *argv[16] = { u };
		char **env = make_env(c, NULL, NULL);
		size_t n = 1;
		int st = 0;
		pid_t pid;

		for (const char *const *f = order[i]; *f != NULL; f++) {
			argv[n++] = *f;
		}
		argv[n++] = "/bin/true";
		argv[n] = NULL;
		pid = start(c, (char *const *)argv, env, IO_INHERIT, -1).pid;
		tu_env_free(env);
		if (!finish(c, pid, STEP_MS, &st)) {
			kill_kid(c, pid);
			continue;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			found = order[i];
			break;
		}
	}
	return found;
}

#define NS_SKIP_MSG "skipped: no PID namespace: neither `unshare -pf " \
	"--mount-proc` (root) nor `unshare -Urpf --mount-proc` (unprivileged " \
	"user namespaces) works here\n"

/* argv: unshare FLAGS [prefix...] /usr/bin/env LD_PRELOAD=... client
 * SERVICE steps...; the strings in *owned are to be freed. */
static void ns_argv(const char *const *flags, const char *const prefix[],
		    const char *const steps[], const char **argv, char **owned)
{
	size_t n = 0;

	argv[n++] = unshare_path();
	for (; *flags != NULL; flags++) {
		argv[n++] = *flags;
	}
	for (; prefix != NULL && *prefix != NULL; prefix++) {
		argv[n++] = *prefix;
	}
	argv[n++] = "/usr/bin/env";
	/* only the client is wrapped, not unshare, sh or env */
	assert_true(asprintf(&owned[0], "LD_PRELOAD=%s", getenv("PWRAP_PRELOAD")) > 0);
	argv[n++] = owned[0];
	owned[1] = client_path();
	argv[n++] = owned[1];
	argv[n++] = SERVICE;
	for (; *steps != NULL; steps++) {
		argv[n++] = *steps;
	}
	argv[n] = NULL;
}

/* The first of 16 consecutive pids that do not exist here (so a process
 * inside a namespace given one of them is "dead" to a kill(pid, 0) here). */
static long free_pid_run(void)
{
	long max = 32768;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f != NULL) {
		if (fscanf(f, "%ld", &max) != 1) {
			max = 32768;
		}
		fclose(f);
	}
	for (long p = 1000 + (getpid() * 7919L) % (max / 2); p + 16 < max; p++) {
		int k = 0;

		while (k < 16 && kill((pid_t)(p + k), 0) != 0 && errno == ESRCH) {
			k++;
		}
		if (k == 16) {
			return p;
		}
		p += k;
	}
	return -1;
}

/*
 * The end of both PID-namespace tests: HOLDER (ready, pid HPID, runtime
 * directory RUNDIR) gets the test's override; the sweeper ARGV runs to
 * success and must leave the holder's directory and override alone; the
 * holder then finishes with the override in effect, and nothing is left.
 * HOLDER_DESC and SWEEPER_DESC name them in messages.
 */
static void expect_spared(struct ctx *c, struct child *holder, long hpid,
			  const char *rundir, char *const *argv, char **env,
			  const char *holder_desc, const char *sweeper_desc)
{
	char *top = top_of(rundir);
	char *ovr = tu_path(rundir, SERVICE);

	write_override(c, rundir);
	expect_success(c, start(c, argv, env, IO_INHERIT, -1).pid,
		       sweeper_desc);
	if (access(top, F_OK) != 0 || access(ovr, F_OK) != 0) {
		fail_msg("%s, the runtime directory of %s (pid %ld), (or the "
			 "test's override in it) was removed by %s", top,
			 holder_desc, hpid, sweeper_desc);
	}
	go(holder);
	/* its override (alice denied, bob allowed) still takes effect */
	expect_success(c, holder->pid, "the holder (override in effect)");
	close_child(holder);
	expect_tmpdir_empty(c, "after every process exited normally");
	free(top);
	free(ovr);
}

/* Defect 2(a): a wrapped process inside a PID namespace (sharing TMPDIR)
 * swept the live directory of a wrapped process outside it, because
 * kill(outside pid, 0) fails in there; the test's override in that
 * directory was lost and an authentication it should deny succeeded. */
static void test_pidns_inside_spares_outside(void **state)
{
	struct ctx *c = *state;
	const char *const *flags = ns_flags(c);
	char *client = client_path();
	char *holder_argv[] = { client, SERVICE, "ok:alice", "deny:bob", "sync",
				"deny:alice", "ok:bob", NULL };
	const char *const steps[] = { "ok:alice", "deny:bob", NULL };
	const char *argv[32];
	char *owned[2] = { NULL, NULL };
	char **env_w, **env_ns;
	struct child holder;
	char *rundir;
	long hpid;

	if (flags == NULL) {
		free(client);
		print_message(NS_SKIP_MSG);
		skip();
	}
	env_w = make_env(c, getenv("PWRAP_PRELOAD"), NULL);
	env_ns = make_env(c, NULL, NULL);
	holder = start(c, holder_argv, env_w, IO_PIPES, -1);
	rundir = must_ready(c, &holder, &hpid);
	/* a fresh wrapped process in a new PID namespace: it sweeps */
	ns_argv(flags, NULL, steps, argv, owned);
	expect_spared(c, &holder, hpid, rundir, (char *const *)argv, env_ns,
		      "a live process outside the namespace",
		      "the wrapped process inside the namespace");
	free(owned[0]);
	free(owned[1]);
	free(rundir);
	tu_env_free(env_w);
	tu_env_free(env_ns);
	free(client);
}

/* Defect 2(b), the other way round: a wrapped process outside swept the
 * live directory of one inside a PID namespace.  The one inside is given a
 * pid (via ns_last_pid) that no process has outside, so the old
 * kill(pid, 0) check is certain to call it dead. */
static void test_pidns_outside_spares_inside(void **state)
{
	struct ctx *c = *state;
	const char *const *flags = ns_flags(c);
	char *client = client_path();
	char *attack_argv[] = { client, SERVICE, "ok:alice", "deny:bob", NULL };
	const char *const steps[] = { "ok:alice", "deny:bob", "sync",
				      "deny:alice", "ok:bob", NULL };
	char last[32];
	const char *const prefix[] = {
		"/bin/sh", "-c",
		/* sh is PID 1; its next child gets pid $1 + 1 */
		"{ echo \"$1\" > /proc/sys/kernel/ns_last_pid; } 2>/dev/null || "
		"echo 'note: ns_last_pid is not writable' >&2; "
		"shift; \"$@\"; exit $?",
		"sh", last, NULL
	};
	const char *argv[40];
	char *owned[2] = { NULL, NULL };
	char **env_w, **env_ns;
	struct child holder;
	char *rundir;
	long want, hpid = 0;

	if (flags == NULL) {
		free(client);
		print_message(NS_SKIP_MSG);
		skip();
	}
	want = free_pid_run();
	snprintf(last, sizeof(last), "%ld", want > 1 ? want - 1 : 1);
	env_w = make_env(c, getenv("PWRAP_PRELOAD"), NULL);
	env_ns = make_env(c, NULL, NULL);
	ns_argv(flags, prefix, steps, argv, owned);
	holder = start(c, (char *const *)argv, env_ns, IO_PIPES, -1);
	rundir = must_ready(c, &holder, &hpid);
	if (hpid != want || kill((pid_t)hpid, 0) == 0 || errno != ESRCH) {
		print_message("note: the process in the namespace has pid %ld, "
			      "which is in use outside: the old kill(pid, 0) "
			      "check would not be caught by this run\n", hpid);
	}
	/* a fresh wrapped process outside: it sweeps */
	expect_spared(c, &holder, hpid, rundir, attack_argv, env_w,
		      "a live process inside a PID namespace",
		      "the wrapped process outside the namespace");
	free(owned[0]);
	free(owned[1]);
	free(rundir);
	tu_env_free(env_w);
	tu_env_free(env_ns);
	free(client);
}

/* Defect 3: a wrapped program that is PID 1 of a PID namespace inherited
 * the watcher process, so its init-style `while (wait(NULL) > 0);` never
 * returned.  It must return at once: the wrapper made no process. */
static void test_pid1_wait_loop_returns(void **state)
{
	struct ctx *c = *state;
	const char *const *flags = ns_flags(c);
	const char *const steps[] = { "ok:alice", "deny:bob", "waitall", NULL };
	const char *argv[32];
	char *owned[2] = { NULL, NULL };
	char **env_ns;
	pid_t pid;
	int st = 0;

	if (flags == NULL) {
		print_message(NS_SKIP_MSG);
		skip();
	}
	env_ns = make_env(c, NULL, NULL);
	/* `env` execs the client in unshare's child: the client is PID 1 */
	ns_argv(flags, NULL, steps, argv, owned);
	pid = start(c, (char *const *)argv, env_ns, IO_INHERIT, -1).pid;
	if (!finish(c, pid, STEP_MS, &st)) {
		/* --kill-child: killing unshare kills the namespace */
		kill_kid(c, pid);
		fail_msg("PID 1's `while (wait(NULL) > 0);` was still waiting "
			 "after 15 s: it inherited a process the wrapper made");
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char buf[128];
		char *r = client_report(c);

		print_error("the wrapped PID 1: %s; it reported:\n%s",
			    describe(st, buf, sizeof(buf)), r);
		free(r);
		fail();
	}
	expect_tmpdir_empty(c, "after PID 1 exited normally");
	free(owned[0]);
	free(owned[1]);
	tu_env_free(env_ns);
}

/* The contract behind defect 3 without namespaces: as a child subreaper we
 * would adopt any process the wrapped one made and left behind; there must
 * be none, and the wrapped process must have no child either. */
static void test_no_helper_process(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, SERVICE, "ok:alice", "sync", NULL };
	char **env = make_env(c, getenv("PWRAP_PRELOAD"), NULL);
	pid_t ours[64], theirs[64];
	int n_ours, n_theirs, extra = 0;
	struct child holder;
	char *rundir;
	long hpid;

	if (children_of(getpid(), ours, 64) < 0) {
		free(client);
		tu_env_free(env);
		print_message("skipped: /proc/PID/task/TID/children is not "
			      "available (CONFIG_PROC_CHILDREN)\n");
		skip();
	}
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	holder = start(c, argv, env, IO_PIPES, -1);
	rundir = must_ready(c, &holder, &hpid);
	n_ours = children_of(getpid(), ours, 64);
	n_theirs = children_of(holder.pid, theirs, 64);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
	for (int i = 0; i < n_ours; i++) {
		if (ours[i] != holder.pid) {
			print_error("pid %ld: made by the wrapped process and "
				    "left behind\n", (long)ours[i]);
			kill(ours[i], SIGKILL);
			reap(ours[i]);
			extra++;
		}
	}
	go(&holder);
	expect_success(c, holder.pid, "the wrapped process");
	close_child(&holder);
	assert_int_equal(extra, 0);
	assert_int_equal(n_theirs, 0);
	expect_tmpdir_empty(c, "after a normal exit");
	free(rundir);
	tu_env_free(env);
	free(client);
}

/* Defect 1: a program started with stdout and stderr closed got the
 * watcher's socket as fd 1 or 2; its next writes there made the watcher
 * remove the live directory and killed the program with SIGPIPE.  Writes
 * to 1 and 2 must be harmless, the directory must stay, later transactions
 * must work, and fds 0-2 must stay closed (the wrapper's are >= 3). */
static void test_closed_stdio(void **state)
{
	struct ctx *c = *state;
	char *client = client_path();
	char *argv[] = { client, SERVICE, "ok:alice", "write12", "dir",
			 "ok:alice", "deny:bob", "write12", "dir",
			 "nostdfds", "cloexec", NULL };
	char **env = make_env(c, getenv("PWRAP_PRELOAD"), NULL);
	char buf[128];
	pid_t pid = start(c, argv, env, IO_CLOSED, -1).pid;
	int st = 0;

	if (!finish(c, pid, STEP_MS, &st)) {
		kill_kid(c, pid);
		fail_msg("the client started without stdio hung");
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *r = client_report(c);

		print_error("client started with fds 0, 1, 2 closed: %s%s; it "
			    "reported:\n%s", describe(st, buf, sizeof(buf)),
			    WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE ?
			    " (a write to its own fd 1 or 2 hit a descriptor of "
			    "the wrapper's)" : "", r);
		free(r);
		fail();
	}
	expect_tmpdir_empty(c, "after a normal exit");
	tu_env_free(env);
	free(client);
}

/*
 * Defect 4: under uid_wrapper with UID_WRAPPER_ROOT=1 the sweep compared
 * owners with the faked euid 0 and never removed the stale directory of a
 * process of the same real uid (the .nobody twin, or any non-root run,
 * shows it; a root run cannot tell real from faked 0).  The stale
 * directory is made for real: a wrapped process killed with SIGKILL,
 * together with anything it left running (adopted as subreaper).  The
 * sweeper under uid_wrapper is `sweeper`: the linked client sets up while
 * it is loaded (before uid_wrapper's constructor has run: the old code got
 * the real euid there), the dlopen client at its first pam_start, as
 * Python with pypamtest does (the old code got the faked one: the defect).
 */
static void uid_wrapper_case(struct ctx *c, const char *sweeper)
{
	const char *lib = getenv("PWRAP_UID_WRAPPER_LIB");
	const char *pre = getenv("PWRAP_PRELOAD");
	const char *last = strrchr(pre, ':');
	char *client = client_path();
	char *uid_client = client_named(sweeper);
	char *hold_argv[] = { client, SERVICE, "ok:alice", "sync", NULL };
	char *uid_argv[] = { uid_client, SERVICE, "ok:alice", "deny:bob",
			     "euid0", NULL };
	char *preload = NULL, *rundir, *top;
	char **env_w, **env_uid;
	pid_t left[64];
	struct child holder;
	int n, st = 0;
	long hpid;

	if (lib == NULL || lib[0] == '\0') {
		lib = "/usr/lib/x86_64-linux-gnu/libuid_wrapper.so";
	}
	if (access(lib, R_OK) != 0) {
		free(client);
		free(uid_client);
		print_message("skipped: no libuid_wrapper.so (%s)\n", lib);
		skip();
	}
	/* libuid_wrapper before libpam_wrapper, after any sanitizer runtime */
	if (last == NULL) {
		assert_true(asprintf(&preload, "%s:%s", lib, pre) > 0);
	} else {
		assert_true(asprintf(&preload, "%.*s:%s%s", (int)(last - pre),
				     pre, lib, last) > 0);
	}
	env_w = make_env(c, pre, NULL);
	env_uid = make_env(c, preload, "UID_WRAPPER=1", "UID_WRAPPER_ROOT=1",
			   NULL);

	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	holder = start(c, hold_argv, env_w, IO_PIPES, -1);
	rundir = must_ready(c, &holder, &hpid);
	top = top_of(rundir);
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
	/* kill -9 of everything: what it left running first, then itself */
	n = children_of(getpid(), left, 64);
	if (n < 0) {
		print_message("note: cannot list children; only the wrapped "
			      "process itself is killed\n");
	}
	for (int i = 0; i < n; i++) {
		if (left[i] != holder.pid) {
			kill(left[i], SIGKILL);
			reap(left[i]);
		}
	}
	kill(holder.pid, SIGKILL);
	assert_true(finish(c, holder.pid, STEP_MS, &st));
	assert_true(WIFSIGNALED(st));
	close_child(&holder);
	if (access(top, F_OK) != 0) {
		print_message("note: %s went away with its process; nothing "
			      "stale to sweep in this run\n", top);
	}

	/* the next wrapped process, under uid_wrapper as fake root */
	expect_success(c, start(c, uid_argv, env_uid, IO_INHERIT, -1).pid,
		       "the wrapped process under uid_wrapper");
	expect_tmpdir_empty(c, "the stale directory of a killed process must be "
			    "swept by the next wrapped process of the same "
			    "real uid, even under uid_wrapper with "
			    "UID_WRAPPER_ROOT=1");
	free(rundir);
	free(top);
	free(preload);
	tu_env_free(env_w);
	tu_env_free(env_uid);
	free(client);
	free(uid_client);
}

static void test_uid_wrapper_sweeps_stale(void **state)
{
	uid_wrapper_case(*state, "pwrap_lifetime_client");
}

static void test_uid_wrapper_sweeps_stale_late_setup(void **state)
{
	uid_wrapper_case(*state, "pwrap_lifetime_dlclient");
}

/*
 * An application that closes (or dup2s /dev/null over) all its fds >= 3
 * between two transactions: the second pam_start must still work with the
 * test's override (written into PAM_WRAPPER_RUNTIME_DIR before) in effect,
 * the program's own /dev/null fds must be left alone, the wrapper's fds
 * must again be O_CLOEXEC, the directory must be live again (a fresh
 * wrapped process does not sweep it), and no PWRAP_ERROR line is printed.
 * The old design's watcher saw its socket closed and removed the directory,
 * override included.
 */
static void closer_case(struct ctx *c, const char *closer, bool dup)
{
	char *client = client_path();
	char *argv[] = { client, SERVICE, "ok:alice", "deny:bob", "cloexec",
			 "sync", (char *)closer, "deny:alice", "ok:bob",
			 "cloexec", dup ? "dupok" : "dir", "sync", NULL };
	char *sweep_argv[] = { client, SERVICE, "ok:alice", NULL };
	char **env = make_env(c, getenv("PWRAP_PRELOAD"), NULL);
	char *errpath = tu_path(c->data, "stderr");
	int errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct child holder;
	char *dir1, *dir2, *top2, *err, *what = NULL;
	long hpid;

	assert_true(errfd >= 0);
	holder = start(c, argv, env, IO_PIPES, errfd);
	close(errfd);
	dir1 = must_ready(c, &holder, &hpid);
	write_override(c, dir1);
	assert_true(asprintf(&what, "after the program's %s, a transaction "
			     "with the override written into its runtime dir "
			     "before (alice denied, bob allowed)", closer) > 0);
	go(&holder);			/* it closes its fds, then 2 transactions */
	dir2 = read_ready(&holder, &hpid);
	if (dir2 == NULL) {
		expect_success(c, holder.pid, what);	/* says why */
		fail_msg("the client stopped without reaching its 2nd sync");
	}
	top2 = top_of(dir2);
	/* a fresh wrapped process: it sweeps, and must spare the live one */
	expect_success(c, start(c, sweep_argv, env, IO_INHERIT, -1).pid,
		       "the sweeping wrapped process");
	if (access(top2, F_OK) != 0) {
		fail_msg("%s, live again after the program's %s and a "
			 "pam_start, was removed by another wrapped process",
			 top2, closer);
	}
	go(&holder);
	expect_success(c, holder.pid, what);
	close_child(&holder);
	err = tu_read_at(c->data, "stderr");
	assert_non_null(err);
	if (strstr(err, "PWRAP_ERROR") != NULL) {
		fail_msg("PWRAP_ERROR after the program's %s:\n%s", closer, err);
	}
	expect_tmpdir_empty(c, "after a normal exit");
	free(err);
	free(dir1);
	free(dir2);
	free(top2);
	free(errpath);
	free(what);
	tu_env_free(env);
	free(client);
}

static void test_closefrom_between_transactions(void **state)
{
	closer_case(*state, "closefrom", false);
}

static void test_close_loop_between_transactions(void **state)
{
	closer_case(*state, "closeloop", false);
}

static void test_dup2_over_fds_between_transactions(void **state)
{
	closer_case(*state, "dup2null", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_closed_stdio),
		T(test_pidns_inside_spares_outside),
		T(test_pidns_outside_spares_inside),
		T(test_pid1_wait_loop_returns),
		T(test_no_helper_process),
		T(test_uid_wrapper_sweeps_stale),
		T(test_uid_wrapper_sweeps_stale_late_setup),
		T(test_closefrom_between_transactions),
		T(test_close_loop_between_transactions),
		T(test_dup2_over_fds_between_transactions),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
