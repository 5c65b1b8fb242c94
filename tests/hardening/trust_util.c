/* SPDX-License-Identifier: BSD-3-Clause */
/* Implementation of trust_util.h (see there). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
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

int trust_setup(void **state)
{
	struct trust_ctx *c = calloc(1, sizeof(*c));

	hu_fixture_init(&c->f, TRUST_SERVICE);
	tu_write_file(c->f.passdb, "alice:" TRUST_PW ":" TRUST_SERVICE "\n",
		      strlen("alice:" TRUST_PW ":" TRUST_SERVICE "\n"), 0644);
	/* readable by nobody too (the uid drop test) */
	assert_int_equal(chmod(c->f.top, 0755), 0);
	assert_int_equal(chmod(c->f.db_dir, 0755), 0);
	assert_int_equal(chmod(c->f.svc, 0755), 0);
	*state = c;
	return 0;
}

int trust_teardown(void **state)
{
	struct trust_ctx *c = *state;

	hu_fixture_free(&c->f);
	free(c);
	return 0;
}

bool trust_need_root(const char *why)
{
	if (geteuid() == 0) {
		return true;
	}
	print_message("SKIPPED: needs root: %s\n", why);
	return false;
}

char **trust_argv(const char *user, const char *const *steps)
{
	size_t n = 0;
	char **v;

	while (steps[n] != NULL) {
		n++;
	}
	v = calloc(n + 4, sizeof(*v));
	assert_non_null(v);
	v[0] = (char *)TRUST_CLIENT;
	v[1] = (char *)TRUST_SERVICE;
	v[2] = (char *)user;
	memcpy(v + 3, steps, n * sizeof(*v));
	return v;
}

int trust_run(char **env, const char *user, const char *const *steps,
	       char **out)
{
	char **argv = trust_argv(user, steps);
	int st = tu_run_capture(argv, env, out, NULL);

	free(argv);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *trust_nth_dir(const char *out, int nth)
{
	const char *p = out;

	for (;;) {
		p = strstr(p, "dir: ");
		assert_non_null(p);
		if (p == out || p[-1] == '\n') {
			if (nth-- == 0) {
				break;
			}
		}
		p++;
	}
	p += 5;
	return strndup(p, strcspn(p, "\n"));
}

int trust_count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p != NULL;
	     p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

int trust_count_rc(const char *out, const char *what, int rc)
{
	char line[64];

	snprintf(line, sizeof(line), "%s: %d\n", what, rc);
	return trust_count(out, line);
}

bool trust_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

void trust_pause_start(struct trust_paused *p, char **env,
		       const char *const *steps)
{
	char **argv = trust_argv("alice", steps);
	int g[2], fd;
	size_t cap = 0, len = 0;
	char *line = NULL;

	assert_int_equal(pipe2(g, O_CLOEXEC), 0);
	p->pid = tu_spawn(argv, env, &fd, NULL, g[0], TU_SPAWN_MERGE);
	close(g[0]);
	p->gate = g[1];
	p->o = fdopen(fd, "r");
	assert_non_null(p->o);
	p->out = strdup("");
	while (getline(&line, &cap, p->o) > 0) {
		len = strlen(p->out);
		p->out = realloc(p->out, len + strlen(line) + 1);
		strcpy(p->out + len, line);
		if (strcmp(line, "wait\n") == 0) {
			break;
		}
	}
	free(line);
	free(argv);
	if (strstr(p->out, "wait\n") == NULL) {
		fail_msg("the client ended before its wait step:\n%s", p->out);
	}
}

int trust_pause_finish(struct trust_paused *p)
{
	char buf[4096];
	size_t n, len;
	int st;

	assert_int_equal(write(p->gate, "x", 1), 1);
	close(p->gate);
	while ((n = fread(buf, 1, sizeof(buf), p->o)) > 0) {
		len = strlen(p->out);
		p->out = realloc(p->out, len + n + 1);
		memcpy(p->out + len, buf, n);
		p->out[len + n] = '\0';
	}
	fclose(p->o);
	st = tu_wait(p->pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool trust_plant_as_nobody(const char *top, const char *sub)
{
	int st;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		char *tmp = NULL, *dst = NULL;
		int fd;

		tu_child_signals();
		if (setgroups(0, NULL) != 0 || setgid(TRUST_NOBODY) != 0 ||
		    setuid(TRUST_NOBODY) != 0 ||
		    asprintf(&tmp, "%s/%s/.evil", top, sub) < 0 ||
		    asprintf(&dst, "%s/%s/%s", top, sub, TRUST_SERVICE) < 0) {
			_exit(2);
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 ||
		    write(fd, TRUST_PERMIT, strlen(TRUST_PERMIT)) < 0 ||
		    close(fd) != 0 || rename(tmp, dst) != 0) {
			_exit(1);
		}
		_exit(0);
	}
	st = tu_wait(pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

char *trust_first_top(const char *out)
{
	char *svc = trust_nth_dir(out, 0);
	char *top = strndup(svc, (size_t)(strrchr(svc, '/') - svc));

	free(svc);
	return top;
}
