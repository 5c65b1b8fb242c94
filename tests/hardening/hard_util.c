/* SPDX-License-Identifier: BSD-3-Clause */
/* Implementation of hard_util.h (see there). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
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

#include "hard_util.h"

extern char **environ;

char *hu_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char *d = NULL;

	assert_true(asprintf(&d, "%s/pwrap-hard.XXXXXX", t ? t : "/tmp") > 0);
	assert_non_null(mkdtemp(d));
	return d;
}

char *hu_path(const char *dir, const char *name)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

char *hu_subdir(const char *dir, const char *name)
{
	char *p = hu_path(dir, name);

	assert_int_equal(mkdir(p, 0700), 0);
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void hu_rmtree(const char *dir)
{
	assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

void hu_write_file(const char *path, const char *data, size_t len,
		   mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

char *hu_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		assert_int_equal(errno, ENOENT);
		return NULL;
	}
	return hu_slurp(fd, len);
}

int hu_count_entries(const char *dir, bool print)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			if (print) {
				print_message("left in %s: %s\n", dir,
					      e->d_name);
			}
			n++;
		}
	}
	closedir(d);
	return n;
}

int hu_wait_empty(const char *dir, int seconds)
{
	long long end = hu_now_ms() + seconds * 1000LL;
	int n;

	while ((n = hu_count_entries(dir, false)) != 0 && hu_now_ms() < end) {
		usleep(10000);
	}
	return n == 0 ? 0 : hu_count_entries(dir, true);
}

char **hu_env(const char *tmp, const char *svc, const char *wrapper,
	      const char *const *extra)
{
	size_t n = 0, nx = 0, i, j = 0;
	char **env;

	while (environ[n] != NULL) {
		n++;
	}
	while (extra != NULL && extra[nx] != NULL) {
		nx++;
	}
	env = calloc(n + nx + 5, sizeof(*env));
	assert_non_null(env);
	for (i = 0; i < n; i++) {
		if (strncmp(environ[i], "TMPDIR=", 7) != 0 &&
		    strncmp(environ[i], "PAM_WRAPPER", 11) != 0 &&
		    strncmp(environ[i], "LD_PRELOAD=", 11) != 0) {
			env[j++] = strdup(environ[i]);
		}
	}
	assert_true(asprintf(&env[j++], "TMPDIR=%s", tmp) > 0);
	assert_non_null(getenv("PWRAP_PRELOAD"));
	assert_true(asprintf(&env[j++], "LD_PRELOAD=%s",
			     getenv("PWRAP_PRELOAD")) > 0);
	if (svc != NULL) {
		assert_true(asprintf(&env[j++], "PAM_WRAPPER_SERVICE_DIR=%s",
				     svc) > 0);
	}
	if (wrapper != NULL) {
		assert_true(asprintf(&env[j++], "PAM_WRAPPER=%s", wrapper) > 0);
	}
	for (i = 0; i < nx; i++) {
		env[j++] = strdup(extra[i]);
	}
	env[j] = NULL;
	return env;
}

void hu_free_env(char **env)
{
	for (size_t i = 0; env[i] != NULL; i++) {
		free(env[i]);
	}
	free(env);
}

const char *hu_client(void)
{
	return HARD_CLIENT;
}

pid_t hu_spawn(char *const argv[], char **env, int *out_fd, int *err_fd,
	       int barrier_fd)
{
	posix_spawn_file_actions_t fa;
	int o[2] = { -1, -1 }, e[2] = { -1, -1 };
	pid_t pid;

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	if (out_fd != NULL) {
		assert_int_equal(pipe2(o, O_CLOEXEC), 0);
		posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	} else {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	}
	if (err_fd != NULL) {
		assert_int_equal(pipe2(e, O_CLOEXEC), 0);
		posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	} else {
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	}
	if (barrier_fd >= 0) {
		posix_spawn_file_actions_adddup2(&fa, barrier_fd, 3);
	}
	assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	if (out_fd != NULL) {
		close(o[1]);
		*out_fd = o[0];
	}
	if (err_fd != NULL) {
		close(e[1]);
		*err_fd = e[0];
	}
	return pid;
}

int hu_wait(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		assert_int_equal(errno, EINTR);
	}
	return st;
}

char *hu_slurp(int fd, size_t *lenp)
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

long long hu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Appends to a growing malloc'd string. */
static void cat(char **s, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cat(char **s, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *add = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&add, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	*s = realloc(*s, *len + (size_t)n + 1);
	assert_non_null(*s);
	memcpy(*s + *len, add, (size_t)n + 1);
	*len += (size_t)n;
	free(add);
}

char *hu_passdb_render(int n, char *const pw[])
{
	char *s = NULL;
	size_t len = 0;

	cat(&s, &len, "# hardening passdb: user:password:service\n");
	for (int i = 0; i < n; i++) {
		if (i % 5 == 0) {
			cat(&s, &len, "# comment before user%02d\n", i);
		}
		if (i % 7 == 3) {
			cat(&s, &len, "malformed line %d without fields\n", i);
		}
		if (i % 9 == 4) {
			cat(&s, &len, "\n \t \n");
		}
		if (i % 11 == 5) {
			cat(&s, &len, "too:many:fields:%d\n", i);
		}
		if (i % 13 == 6) {
			cat(&s, &len, "crlf%02d:pw:hard\r\n", i);
		}
		cat(&s, &len, "user%02d:%s:hard\n", i, pw[i]);
	}
	cat(&s, &len, "# trailer\nlast:line:without-newline");
	return s;
}

char *hu_matrix_service(const char *passdb)
{
	char *s = NULL;

	assert_true(asprintf(&s,
			     "auth required pam_matrix.so passdb=%s\n"
			     "account required pam_matrix.so passdb=%s\n"
			     "password required pam_matrix.so passdb=%s\n"
			     "session required pam_matrix.so passdb=%s\n",
			     passdb, passdb, passdb, passdb) > 0);
	return s;
}

void hu_fixture_init(struct hu_fixture *f, const char *service)
{
	char *text, *p;

	f->top = hu_mkdtemp();
	f->db_dir = hu_subdir(f->top, "db");
	f->svc = hu_subdir(f->top, "svc");
	f->tmp = hu_subdir(f->top, "tmp");
	f->passdb = hu_path(f->db_dir, "passdb");
	hu_write_file(f->passdb, "", 0, 0600);
	text = hu_matrix_service(f->passdb);
	p = hu_path(f->svc, service);
	hu_write_file(p, text, strlen(text), 0644);
	free(p);
	free(text);
	f->env = hu_env(f->tmp, f->svc, "1", NULL);
}

void hu_fixture_free(struct hu_fixture *f)
{
	hu_rmtree(f->top);
	hu_free_env(f->env);
	free(f->top);
	free(f->db_dir);
	free(f->passdb);
	free(f->svc);
	free(f->tmp);
	memset(f, 0, sizeof(*f));
}

int hu_run_capture(char *const argv[], char **env, char **out, char **err)
{
	int o, e;
	pid_t pid = hu_spawn(argv, env, &o, &e, -1);

	/* stdout is small: it fits in the pipe while we drain stderr */
	*err = hu_slurp(e, NULL);
	*out = hu_slurp(o, NULL);
	return hu_wait(pid);
}

int hu_conv_none(int n, const struct pam_message **m,
		 struct pam_response **r, void *d)
{
	(void)n;
	(void)m;
	(void)r;
	(void)d;
	return PAM_CONV_ERR;
}
