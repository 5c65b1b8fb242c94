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
#include <security/pam_appl.h>

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

/* A return code's value from its name in the trace. */
static int code_of(const char *name)
{
#define C(x) { #x, x }
	static const struct {
		const char *name;
		int value;
	} codes[] = {
		C(PAM_SUCCESS), C(PAM_OPEN_ERR), C(PAM_SYMBOL_ERR),
		C(PAM_SERVICE_ERR), C(PAM_SYSTEM_ERR), C(PAM_BUF_ERR),
		C(PAM_PERM_DENIED), C(PAM_AUTH_ERR), C(PAM_CRED_INSUFFICIENT),
		C(PAM_AUTHINFO_UNAVAIL), C(PAM_USER_UNKNOWN), C(PAM_MAXTRIES),
		C(PAM_NEW_AUTHTOK_REQD), C(PAM_ACCT_EXPIRED),
		C(PAM_SESSION_ERR), C(PAM_CRED_UNAVAIL), C(PAM_CRED_EXPIRED),
		C(PAM_CRED_ERR), C(PAM_NO_MODULE_DATA), C(PAM_CONV_ERR),
		C(PAM_AUTHTOK_ERR), C(PAM_AUTHTOK_RECOVERY_ERR),
		C(PAM_AUTHTOK_LOCK_BUSY), C(PAM_AUTHTOK_DISABLE_AGING),
		C(PAM_TRY_AGAIN), C(PAM_IGNORE), C(PAM_ABORT),
		C(PAM_AUTHTOK_EXPIRED), C(PAM_MODULE_UNKNOWN), C(PAM_BAD_ITEM),
#if defined(PAM_CONV_AGAIN)
		C(PAM_CONV_AGAIN),
#endif
#if defined(PAM_INCOMPLETE)
		C(PAM_INCOMPLETE),
#endif
	};
#undef C
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		if (strcmp(codes[i].name, name) == 0) {
			return codes[i].value;
		}
	}
	return atoi(name);	/* written as a number */
}

char *tr_results(const struct trecs *t)
{
	static const char *const calls[][2] = {
		{ "pam_authenticate", "auth" }, { "pam_setcred", "setcred" },
		{ "pam_acct_mgmt", "acct" },	{ "pam_open_session", "open" },
		{ "pam_close_session", "close" }, { "pam_chauthtok", "chauthtok" },
	};
	char *s = strdup("");

	for (size_t i = 0; i < t->n; i++) {
		const char *r = t->rec[i];
		char *rc, *call;
		const char *name = NULL;

		if (tr_is(r, "kind", "module")) {
			continue;
		}
		rc = tr_get(r, "rc");
		call = tr_get(r, "call");
		for (size_t k = 0; call != NULL && k < 6; k++) {
			if (strcmp(call, calls[k][0]) == 0) {
				name = calls[k][1];
			}
		}
		if (tr_is(r, "kind", "start")) {
			name = "start";
		}
		assert_non_null(name);
		add(&s, "%s=%d", name, code_of(rc));
		free(rc);
		free(call);
	}
	for (char *p = s; (p = strstr(p, "; ")) != NULL;) {
		memmove(p, p + 1, strlen(p + 1) + 1);	/* "; " -> " " */
	}
	return s;
}
