/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Implementation of the module-test scaffolding declared in modtest.h.
 * Failures inside helpers fail the running cmocka test.
 */
#define _GNU_SOURCE
#include "modtest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

void mt_init(struct mt_env *t)
{
	char *dir;

	memset(t, 0, sizeof(*t));
	/* Checked first: a failed setup gets no teardown to remove the
	 * directory. */
	t->moddir = getenv("PWRAP_MODULE_DIR");
	if (t->moddir == NULL) {
		fail_msg("PWRAP_MODULE_DIR is not set (run through ctest)");
	}
	dir = tu_mkdtemp("pwrap-modtest");
	if (strlen(dir) >= sizeof(t->dir)) {
		tu_rmtree_quiet(dir);
		fail_msg("TMPDIR is too long: %s", dir);
	}
	strcpy(t->dir, dir);
	free(dir);
	mt_path(t, "passdb", t->passdb);
}

void mt_cleanup(struct mt_env *t)
{
	if (t->dir[0] == '\0') {
		return;
	}
	(void)tu_rmtree_quiet(t->dir);
	t->dir[0] = '\0';
}

int mt_setup(void **state)
{
	struct mt_env *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		return -1;
	}
	mt_init(t);
	mt_log_clear();
	unsetenv("PAM_MATRIX_PASSWD");
	*state = t;
	return 0;
}

int mt_teardown(void **state)
{
	struct mt_env *t = *state;

	mt_cleanup(t);
	free(t);
	mt_log_clear();
	unsetenv("PAM_MATRIX_PASSWD");
	return 0;
}

void mt_path(const struct mt_env *t, const char *name, char *out)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", t->dir, name);

	assert_true(n > 0 && n < PATH_MAX);
}

void mt_write(const struct mt_env *t, const char *name, const char *data,
	      size_t len)
{
	char path[PATH_MAX];

	mt_path(t, name, path);
	tu_write_file(path, data, len, 0644);
}

void mt_passdb(const struct mt_env *t, const char *content)
{
	mt_write(t, "passdb", content, strlen(content));
}

void mt_service(const struct mt_env *t, const char *service,
		const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	mt_write(t, service, text, (size_t)n);
	free(text);
}

void mt_conv_init(struct mt_conv *c, size_t n, ...)
{
	va_list ap;

	memset(c, 0, sizeof(*c));
	assert_true(n <= MT_MAX_ANSWERS);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++) {
		c->answers[i] = va_arg(ap, const char *);
	}
	va_end(ap);
	c->nanswers = n;
}

void mt_conv_free(struct mt_conv *c)
{
	for (size_t i = 0; i < c->nmsgs; i++) {
		free(c->msgs[i]);
	}
	free(c->msgs);
	c->msgs = NULL;
	c->nmsgs = 0;
	c->cap = 0;
}

const char *mt_msg(const struct mt_conv *c, size_t i)
{
	return i < c->nmsgs ? c->msgs[i] : NULL;
}

static void mt_record(struct mt_conv *c, int style, const char *text)
{
	char tag;
	char *s = NULL;

	switch (style) {
	case PAM_PROMPT_ECHO_OFF:
		tag = 'P';
		break;
	case PAM_PROMPT_ECHO_ON:
		tag = 'p';
		break;
	case PAM_TEXT_INFO:
		tag = 'I';
		break;
	case PAM_ERROR_MSG:
		tag = 'E';
		break;
	default:
		tag = '?';
		break;
	}
	if (c->nmsgs == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		char **n = realloc(c->msgs, ncap * sizeof(*n));

		assert_non_null(n);
		c->msgs = n;
		c->cap = ncap;
	}
	assert_true(asprintf(&s, "%c:%s", tag, text ? text : "(null)") > 0);
	c->msgs[c->nmsgs++] = s;
}

static int mt_conv_fn(int num_msg, const struct pam_message **msg,
		      struct pam_response **resp, void *appdata)
{
	struct mt_conv *c = appdata;
	struct pam_response *r;

	if (resp == NULL) {
		/* A module passing NULL here is the upstream crash. */
		fail_msg("conversation called with a NULL response pointer");
	}
	if (num_msg > c->max_per_call) {
		c->max_per_call = num_msg;
	}
	if (c->fail) {
		return PAM_CONV_ERR;
	}
	r = calloc((size_t)num_msg, sizeof(*r));
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < num_msg; i++) {
		int style = msg[i]->msg_style;

		mt_record(c, style, msg[i]->msg);
		if (style != PAM_PROMPT_ECHO_OFF && style != PAM_PROMPT_ECHO_ON) {
			continue;
		}
		if (c->next >= c->nanswers) {
			for (int j = 0; j < i; j++) {
				free(r[j].resp);
			}
			free(r);
			return PAM_CONV_ERR;
		}
		if (c->answers[c->next] != NULL) {
			r[i].resp = strdup(c->answers[c->next]);
			assert_non_null(r[i].resp);
		}
		c->next++;
	}
	*resp = r;
	return PAM_SUCCESS;
}

int mt_start_raw(const struct mt_env *t, const char *service,
		 const char *user, struct mt_conv *c, pam_handle_t **pamh)
{
	c->pc.conv = mt_conv_fn;
	c->pc.appdata_ptr = c;
	*pamh = NULL;
#if defined(PWRAP_HAVE_PAM_START_CONFDIR)
	return pam_start_confdir(service, user, &c->pc, t->dir, pamh);
#else
	/* A libpam without pam_start_confdir: these tests run under the
	 * wrapper (tests/modules/CMakeLists.txt), which serves t->dir. */
	setenv("PAM_WRAPPER_SERVICE_DIR", t->dir, 1);
	return pam_start(service, user, &c->pc, pamh);
#endif
}

pam_handle_t *mt_start(const struct mt_env *t, const char *service,
		       const char *user, struct mt_conv *c)
{
	pam_handle_t *pamh = NULL;

	assert_int_equal(mt_start_raw(t, service, user, c, &pamh),
			 PAM_SUCCESS);
	return pamh;
}

int mt_call(pam_handle_t *pamh, enum mt_op op, int flags)
{
	switch (op) {
	case MT_AUTH:
		return pam_authenticate(pamh, flags);
	case MT_SETCRED:
		return pam_setcred(pamh, flags);
	case MT_ACCT:
		return pam_acct_mgmt(pamh, flags);
	case MT_OPEN:
		return pam_open_session(pamh, flags);
	case MT_CLOSE:
		return pam_close_session(pamh, flags);
	case MT_CHAUTHTOK:
		return pam_chauthtok(pamh, flags);
	}
	fail_msg("bad op %d", (int)op);
	return -1;
}

int mt_run(const struct mt_env *t, const char *service, const char *user,
	   struct mt_conv *c, enum mt_op op, int flags)
{
	pam_handle_t *pamh = mt_start(t, service, user, c);
	int rv = mt_call(pamh, op, flags);

	assert_int_equal(pam_end(pamh, rv), PAM_SUCCESS);
	return rv;
}

void mt_matrix_service(const struct mt_env *t, const char *opts)
{
	mt_service(t, "svc",
		   "auth     required %s/pam_matrix.so passdb=%s %s\n"
		   "account  required %s/pam_matrix.so passdb=%s %s\n"
		   "password required %s/pam_matrix.so passdb=%s %s\n"
		   "session  required %s/pam_matrix.so passdb=%s %s\n",
		   t->moddir, t->passdb, opts, t->moddir, t->passdb, opts,
		   t->moddir, t->passdb, opts, t->moddir, t->passdb, opts);
}

int mt_auth(const struct mt_env *t, const char *user, const char *password)
{
	struct mt_conv c;
	int rv;

	mt_conv_init(&c, 1, password);
	rv = mt_run(t, "svc", user, &c, MT_AUTH, 0);
	mt_conv_free(&c);
	return rv;
}
