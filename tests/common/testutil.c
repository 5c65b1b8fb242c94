/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Implementation of testutil.h, the helpers every C test shares: one
 * implementation each of the temporary directories, file I/O, tree
 * removal, child environments, spawning and waiting, stderr capture and
 * clock that the test parts used to carry copies of.  Failures fail the
 * running cmocka test unless testutil.h says otherwise.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "pwrap_rmtree.h"

extern char **environ;

/* ---- directories and paths ---------------------------------------------- */

char *tu_mkdtemp(const char *tag)
{
	const char *t = getenv("TMPDIR");
	char *d = NULL;

	if (t == NULL || *t == '\0') {
		t = "/tmp";
	}
	assert_true(asprintf(&d, "%s/%s.XXXXXX", t, tag) > 0);
	assert_non_null(mkdtemp(d));
	return d;
}

char *tu_svcdir_new(const char *tag)
{
	char *d = tu_mkdtemp(tag);

	assert_int_equal(setenv("PAM_WRAPPER_SERVICE_DIR", d, 1), 0);
	return d;
}

char *tu_path(const char *dir, const char *name)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

char *tu_subdir(const char *dir, const char *name)
{
	char *p = tu_path(dir, name);

	assert_int_equal(mkdir(p, 0700), 0);
	return p;
}

int tu_rmtree_quiet(const char *dir)
{
	return dir == NULL ? 0 : pwrap_rmtree(dir);
}

void tu_rmtree(const char *dir)
{
	if (tu_rmtree_quiet(dir) != 0) {
		fail_msg("cannot remove %s: %s", dir, strerror(errno));
	}
}

int tu_setup_tmpdir(void **state)
{
	*state = tu_mkdtemp("pwrap-test");
	return 0;
}

int tu_teardown_tmpdir(void **state)
{
	tu_rmtree(*state);
	free(*state);
	*state = NULL;
	return 0;
}

int tu_count_entries(const char *dir, bool print)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0) {
			continue;
		}
		if (print) {
			print_message("left in %s: %s\n", dir, e->d_name);
		}
		n++;
	}
	closedir(d);
	return n;
}

int tu_wait_empty(const char *dir, int seconds)
{
	long long end = tu_now_ms() + seconds * 1000LL;
	int n;

	while ((n = tu_count_entries(dir, false)) != 0 && tu_now_ms() < end) {
		usleep(10000);
	}
	return n == 0 ? 0 : tu_count_entries(dir, true);
}

void tu_unlink_at(const char *dir, const char *name)
{
	char *p = tu_path(dir, name);

	assert_int_equal(unlink(p), 0);
	free(p);
}

/* ---- files -------------------------------------------------------------- */

void tu_write_file(const char *path, const void *data, size_t len,
		   mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

void tu_write_text(const char *dir, const char *name, const char *text)
{
	char *p = tu_path(dir, name);

	tu_write_file(p, text, strlen(text), 0644);
	free(p);
}

static char *read_file(const char *path, size_t *len, bool missing_ok)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (!missing_ok || errno != ENOENT) {
			fail_msg("cannot open %s: %s", path, strerror(errno));
		}
		return NULL;
	}
	return tu_slurp(fd, len);
}

char *tu_read_file(const char *path, size_t *len)
{
	return read_file(path, len, false);
}

char *tu_read_file_opt(const char *path, size_t *len)
{
	return read_file(path, len, true);
}

char *tu_read_at(const char *dir, const char *name)
{
	char *p = tu_path(dir, name);
	char *text = tu_read_file_opt(p, NULL);

	free(p);
	return text;
}

char *tu_slurp(int fd, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ssize_t n;

	assert_non_null(buf);
	for (;;) {
		if (len + 1 >= cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		assert_true(n >= 0);
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd);
	if (lenp != NULL) {
		*lenp = len;
	}
	return buf;
}

static int saved_stderr = -1;
static int capture_fd = -1;

void tu_stderr_begin(void)
{
	FILE *f;

	fflush(stderr);
	f = tmpfile();
	assert_non_null(f);
	capture_fd = dup(fileno(f));
	assert_true(capture_fd >= 0);
	fclose(f);
	saved_stderr = dup(2);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(capture_fd, 2) >= 0);
}

char *tu_stderr_end(void)
{
	fflush(stderr);
	assert_true(dup2(saved_stderr, 2) >= 0);
	close(saved_stderr);
	saved_stderr = -1;
	assert_int_equal(lseek(capture_fd, 0, SEEK_SET), 0);
	/* tu_slurp closes it */
	return tu_slurp(capture_fd, NULL);
}

/* ---- environments ------------------------------------------------------- */

static size_t env_len(char *const *env)
{
	size_t n = 0;

	while (env != NULL && env[n] != NULL) {
		n++;
	}
	return n;
}

/* Appends ENTRY (taken over) to *ENV. */
static void env_push(char ***env, char *entry)
{
	size_t n = env_len(*env);
	char **e = realloc(*env, (n + 2) * sizeof(*e));

	assert_non_null(e);
	assert_non_null(entry);
	e[n] = entry;
	e[n + 1] = NULL;
	*env = e;
}

char **tu_env_copy(const char *const *drop)
{
	char **env = calloc(1, sizeof(*env));

	assert_non_null(env);
	for (size_t i = 0; environ[i] != NULL; i++) {
		const char *e = environ[i];
		size_t k = 0;

		while (drop != NULL && drop[k] != NULL &&
		       strncmp(e, drop[k], strlen(drop[k])) != 0) {
			k++;
		}
		if (drop == NULL || drop[k] == NULL) {
			env_push(&env, strdup(e));
		}
	}
	return env;
}

void tu_env_add(char ***env, const char *fmt, ...)
{
	char *entry = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&entry, fmt, ap);
	va_end(ap);
	assert_true(n > 0);
	env_push(env, entry);
}

void tu_env_set(char ***env, const char *name, const char *value)
{
	size_t len = strlen(name);
	char **e = *env;
	char *entry = NULL;

	assert_true(asprintf(&entry, "%s=%s", name, value) > 0);
	for (size_t i = 0; e != NULL && e[i] != NULL; i++) {
		if (strncmp(e[i], name, len) == 0 && e[i][len] == '=') {
			free(e[i]);
			e[i] = entry;
			return;
		}
	}
	env_push(env, entry);
}

const char *tu_env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=') {
			return env[i] + n + 1;
		}
	}
	return NULL;
}

void tu_env_free(char **env)
{
	for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
		free(env[i]);
	}
	free(env);
}

char **tu_env_wrapped(const char *tmp, const char *svc, const char *wrapper,
		      const char *const *extra)
{
	static const char *const drop[] = { "TMPDIR=", "PAM_WRAPPER",
					     "LD_PRELOAD=", NULL };
	const char *preload = getenv("PWRAP_PRELOAD");
	char **env = tu_env_copy(drop);

	assert_non_null(preload);
	if (tmp != NULL) {
		tu_env_add(&env, "TMPDIR=%s", tmp);
	}
	tu_env_add(&env, "LD_PRELOAD=%s", preload);
	if (svc != NULL) {
		tu_env_add(&env, "PAM_WRAPPER_SERVICE_DIR=%s", svc);
	}
	if (wrapper != NULL) {
		tu_env_add(&env, "PAM_WRAPPER=%s", wrapper);
	}
	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
		env_push(&env, strdup(extra[i]));
	}
	return env;
}

/* ---- child processes ---------------------------------------------------- */

pid_t tu_spawn(char *const argv[], char **env, int *out_fd, int *err_fd,
	       int fd3, unsigned flags)
{
	posix_spawn_file_actions_t fa;
	int o[2] = { -1, -1 }, e[2] = { -1, -1 };
	bool inherit = (flags & TU_SPAWN_INHERIT) != 0;
	bool merge = (flags & TU_SPAWN_MERGE) != 0 && out_fd != NULL;
	pid_t pid;

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	if (out_fd != NULL) {
		assert_int_equal(pipe2(o, O_CLOEXEC), 0);
		posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	} else if (!inherit) {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY,
						 0);
	}
	if (merge) {
		posix_spawn_file_actions_adddup2(&fa, o[1], 2);
	} else if (err_fd != NULL) {
		assert_int_equal(pipe2(e, O_CLOEXEC), 0);
		posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	} else if (!inherit) {
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY,
						 0);
	}
	if (fd3 >= 0) {
		posix_spawn_file_actions_adddup2(&fa, fd3, 3);
	}
	assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	if (out_fd != NULL) {
		close(o[1]);
		*out_fd = o[0];
	}
	if (e[1] >= 0) {
		close(e[1]);
		*err_fd = e[0];
	}
	return pid;
}

int tu_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		assert_int_equal(errno, EINTR);
	}
	return st;
}

void tu_kill_wait(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

int tu_wait_bounded(pid_t pid, double secs)
{
	double end = tu_now() + secs;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : -2 - WTERMSIG(st);
		}
		if (r < 0 || tu_now() > end) {
			kill(pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

int tu_run_capture(char *const argv[], char **env, char **out, char **err)
{
	int o, e = -1;
	pid_t pid = tu_spawn(argv, env, &o, err != NULL ? &e : NULL, -1,
			     err != NULL ? 0 : TU_SPAWN_MERGE);

	if (err != NULL) {
		/* stdout is small: it fits in the pipe while we drain stderr */
		*err = tu_slurp(e, NULL);
	}
	*out = tu_slurp(o, NULL);
	return tu_wait(pid);
}

void tu_skip_reason(const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	print_message("skipped: %s\n", reason);
}

void tu_child_signals(void)
{
	static const int sigs[] = { SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGSYS,
				    SIGABRT };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		signal(sigs[i], SIG_DFL);
	}
}

pid_t tu_rewriter_start(const char *path, const char *a, size_t alen,
			const char *b, size_t blen)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid > 0) {
		return pid;
	}
	tu_child_signals();
	for (unsigned round = 0;; round++) {
		const char *v = round % 2 ? b : a;
		size_t n = round % 2 ? blen : alen;
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

		if (fd < 0) {
			_exit(3);
		}
		for (size_t off = 0; off < n; off += 65536) {
			size_t k = n - off < 65536 ? n - off : 65536;

			if (write(fd, v + off, k) != (ssize_t)k) {
				_exit(4);
			}
		}
		close(fd);
		/* whole for a moment, so that some readers see it whole */
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
}

static const char *alarm_msg;
static size_t alarm_len;

static void on_alarm(int sig)
{
	(void)sig;
	if (write(2, alarm_msg, alarm_len) < 0) {
		/* nothing more to do */
	}
	_exit(124);
}

void tu_alarm(unsigned seconds, const char *msg)
{
	alarm_msg = msg;
	alarm_len = strlen(msg);
	signal(SIGALRM, on_alarm);
	alarm(seconds);
}

double tu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long long tu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- PAM ---------------------------------------------------------------- */

int tu_conv_none(int n, const struct pam_message **m,
		 struct pam_response **r, void *d)
{
	(void)n;
	(void)m;
	(void)r;
	(void)d;
	return PAM_CONV_ERR;
}

int tu_conv_password(int n, const struct pam_message **m,
		     struct pam_response **r, void *d)
{
	struct pam_response *reply = calloc((size_t)n, sizeof(*reply));

	if (reply == NULL) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < n; i++) {
		if (m[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    m[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			reply[i].resp = strdup(d != NULL ? d : "");
		}
	}
	*r = reply;
	return PAM_SUCCESS;
}
