/* SPDX-License-Identifier: BSD-3-Clause */
/* Implementation of trust_util.h (see there). */
#define _GNU_SOURCE
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

bool trust_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}
