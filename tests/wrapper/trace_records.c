/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The C tests' reader of the module trace's records (trace_records.h).
 * Every record is checked for the shape doc/trace-format.md gives: one
 * object per line, string or literal values, members kind, pid, tx and
 * service first.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "trace_records.h"

struct trecs tr_read(const char *path)
{
	struct trecs t = { NULL, 0 };
	char *all = tu_read_file_opt(path, NULL);
	char *line, *save = NULL;

	if (all == NULL) {
		return t;
	}
	for (line = strtok_r(all, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		t.rec = realloc(t.rec, (t.n + 1) * sizeof(*t.rec));
		assert_non_null(t.rec);
		t.rec[t.n] = strdup(line);
		assert_non_null(t.rec[t.n]);
		if (strncmp(line, "{\"kind\":\"", 9) != 0 ||
		    line[strlen(line) - 1] != '}') {
			fail_msg("%s: not a record of ours: %s", path, line);
		}
		t.n++;
	}
	free(all);
	return t;
}

void tr_free(struct trecs *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->rec[i]);
	}
	free(t->rec);
	t->rec = NULL;
	t->n = 0;
}

/* Decodes the JSON string at *p (after its opening quote) into a malloc'd
 * string; *p moves past the closing quote. */
static char *string_at(const char **p, const char *rec)
{
	const char *s = *p;
	char *out = malloc(strlen(s) + 1);
	char *o = out;

	assert_non_null(out);
	while (*s != '"') {
		if (*s == '\0' || (unsigned char)*s < 0x20) {
			fail_msg("unterminated or raw control character in "
				 "%s", rec);
		}
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		if (*s == '"' || *s == '\\' || *s == '/') {
			*o++ = *s++;
		} else if (*s == 'u') {
			unsigned v;

			if (sscanf(s + 1, "%4x", &v) != 1 || v > 0xff) {
				fail_msg("unexpected escape in %s", rec);
			}
			*o++ = (char)v;
			s += 5;
		} else {
			fail_msg("unexpected escape \\%c in %s", *s, rec);
		}
	}
	*o = '\0';
	*p = s + 1;
	return out;
}

char *tr_get(const char *rec, const char *key)
{
	const char *p = rec;
	size_t kl = strlen(key);

	/* inside strings every '"' is escaped: a '"' preceded by '{' or ','
	 * starts a member name */
	while ((p = strstr(p, key)) != NULL) {
		if (p - rec >= 2 && p[-1] == '"' &&
		    (p[-2] == '{' || p[-2] == ',') && p[kl] == '"' &&
		    p[kl + 1] == ':') {
			break;
		}
		p++;
	}
	if (p == NULL) {
		return NULL;
	}
	p += kl + 2;
	if (*p == '"') {
		p++;
		return string_at(&p, rec);
	}
	if (*p == '[') {
		const char *e = strchr(p, ']');

		assert_non_null(e);
		return strndup(p, (size_t)(e + 1 - p));
	}
	return strndup(p, strcspn(p, ",}"));
}

bool tr_is(const char *rec, const char *key, const char *value)
{
	char *v = tr_get(rec, key);
	bool same = v != NULL && strcmp(v, value) == 0;

	free(v);
	return same;
}

static void add(char **s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add(char **s, const char *fmt, ...)
{
	char *piece = NULL, *joined = NULL;
	va_list ap;

	va_start(ap, fmt);
	assert_true(vasprintf(&piece, fmt, ap) >= 0);
	va_end(ap);
	assert_true(asprintf(&joined, "%s%s%s", *s ? *s : "",
			     *s && **s ? "; " : "", piece) >= 0);
	free(*s);
	free(piece);
	*s = joined;
}

char *tr_summary(const struct trecs *t, const char *dir)
{
	char *s = strdup("");
	size_t dl = dir != NULL ? strlen(dir) : 0;

	for (size_t i = 0; i < t->n; i++) {
		const char *r = t->rec[i];
		char *kind = tr_get(r, "kind");
		char *rc = tr_get(r, "rc");

		assert_non_null(kind);
		assert_non_null(rc);
		assert_non_null(strstr(r, ",\"pid\":"));
		assert_non_null(strstr(r, ",\"tx\":"));
		assert_non_null(strstr(r, ",\"service\":"));
		if (strcmp(kind, "start") == 0) {
			add(&s, "start %s", rc);
		} else if (strcmp(kind, "result") == 0) {
			char *call = tr_get(r, "call");

			add(&s, "= %s %s", call, rc);
			free(call);
		} else {
			char *where = tr_get(r, "where");
			char *module = tr_get(r, "module");
			char *action = tr_get(r, "action");
			char *result = tr_get(r, "result");
			char *silent = tr_get(r, "silent");
			char *error = tr_get(r, "error");
			const char *w = where;
			size_t j;

			assert_string_equal(kind, "module");
			assert_non_null(where);
			assert_non_null(module);
			assert_non_null(action);
			assert_non_null(result);
			if (dl > 0 && strncmp(w, dir, dl) == 0 && w[dl] == '/') {
				w += dl + 1;
			}
			add(&s, "%s %s %s %s%s%s", w, module, rc, action,
			    silent ? " silent" : "", error ? " error" : "");
			/* the result it names is the one written after it */
			for (j = i + 1; j < t->n && !tr_is(t->rec[j], "kind",
							    "result"); j++) {
			}
			if (j < t->n) {
				char *final = tr_get(t->rec[j], "rc");

				assert_string_equal(result, final);
				free(final);
			} else {
				assert_string_equal(result, "null");
			}
			free(where);
			free(module);
			free(action);
			free(result);
			free(silent);
			free(error);
		}
		free(kind);
		free(rc);
	}
	return s;
}
