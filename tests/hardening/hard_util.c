/* SPDX-License-Identifier: BSD-3-Clause */
/* Implementation of hard_util.h (see there); the generic parts are
 * testutil's. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hard_util.h"

const char *hu_client(void)
{
	return HARD_CLIENT;
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

void hu_fixture_passdb(const struct hu_fixture *f, int n, char *const pw[],
		       mode_t mode)
{
	char *text = hu_passdb_render(n, pw);

	tu_write_file(f->passdb, text, strlen(text), mode);
	free(text);
}

bool hu_has_rc(const char *out, const char *what, int rc)
{
	char line[128];

	snprintf(line, sizeof(line), "%s: %d\n", what, rc);
	return out != NULL && strstr(out, line) != NULL;
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
	char *text;

	f->top = tu_mkdtemp("pwrap-hard");
	f->db_dir = tu_subdir(f->top, "db");
	f->svc = tu_subdir(f->top, "svc");
	f->tmp = tu_subdir(f->top, "tmp");
	f->passdb = tu_path(f->db_dir, "passdb");
	tu_write_file(f->passdb, "", 0, 0600);
	text = hu_matrix_service(f->passdb);
	tu_write_text(f->svc, service, text);
	free(text);
	f->env = tu_env_wrapped(f->tmp, f->svc, "1", NULL);
}

void hu_fixture_free(struct hu_fixture *f)
{
	tu_rmtree(f->top);
	tu_env_free(f->env);
	free(f->top);
	free(f->db_dir);
	free(f->passdb);
	free(f->svc);
	free(f->tmp);
	memset(f, 0, sizeof(*f));
}
