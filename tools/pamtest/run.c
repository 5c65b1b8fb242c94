/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runner of pamtest(1): executes a parsed scenario against libpam in this
 * process (which runs with libpam_wrapper.so preloaded).  Each scenario gets
 * a private directory with its passdb and service files; the environment
 * variables it changes are restored afterwards, so several scenarios can run
 * one after the other.  Expectation failures become "file:line: ..." strings
 * in the results; answers and passwords never appear in them.
 *
 * Conversation faults (`fault` lines, see struct fault): the conversation
 * counts its calls per transaction and per operation; a call a fault names
 * fails, answers without an array or with NULL answers, or answers its
 * prompts with a long string.  Such a call is not checked against the
 * `prompt` lines and uses none of them; only a long-answer call records
 * its messages.
 */
#define _GNU_SOURCE
#include "names.h"
#include "pwrap_tool.h"
#include "scen.h"
#include "scenario.h"

#include <errno.h>
#include <security/pam_appl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set by main(): where nss_wrapper reads passwd and group (the files of
 * `service-dir system` scenarios), or NULL when it is not preloaded. */
extern const char *pamtest_nss_dir;

struct msg {
	int style;
	char *text;
};

/* Everything the conversation function and the steps share. */
struct runner {
	const struct scenario *sc;
	struct file_results *fr;
	pam_handle_t *pamh;
	int last_rc;        /* status handed to pam_end */
	char *start_error;  /* pam_start failed: every test until the next start fails */
	const struct step *run; /* operation in progress, or NULL */
	const struct step *tx;  /* `start` of the transaction if it has faults */
	unsigned int tx_calls;  /* conversation calls since pam_start */
	unsigned int op_calls;  /* and since the operation began */
	size_t next_exp;    /* index in run->exps to look for the next prompt */
	int conv_failed;
	struct msg *msgs;
	size_t nmsgs;
	/*
	 * Failures since the last test point: those of the next test point,
	 * including failed setup steps (set-item, putenv) before it.
	 */
	char **fails;
	size_t nfails;
	struct saved { char *name; char *value; } *saved; /* env to restore */
	size_t nsaved;
	int oom;
	const char *dir;    /* the scenario's private directory */
};

static void add_str(struct runner *r, char ***list, size_t *n, char *s)
{
	char **l;

	if (s == NULL) {
		r->oom = 1;
		return;
	}
	l = reallocarray(*list, *n + 1, sizeof(*l));
	if (l == NULL) {
		free(s);
		r->oom = 1;
		return;
	}
	*list = l;
	l[(*n)++] = s;
}

static void failf(struct runner *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void failf(struct runner *r, int line, const char *fmt, ...)
{
	char *msg = NULL, *full = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0) {
		msg = NULL;
	}
	va_end(ap);
	if (msg != NULL &&
	    asprintf(&full, "%s:%d: %s", r->sc->path, line, msg) < 0) {
		full = NULL;
	}
	free(msg);
	add_str(r, &r->fails, &r->nfails, full);
}

/* Whether s contains one of the scenario's secrets. */
static int holds_secret(const struct scenario *sc, const char *s)
{
	for (size_t i = 0; i < sc->nsecrets; i++) {
		if (strstr(s, sc->secrets[i]) != NULL) {
			return 1;
		}
	}
	return 0;
}

char *show(const struct scenario *sc, const char *s)
{
	struct pwrap_buf b = {0};

	if (s == NULL) {
		return strdup("(null)");
	}
	if (holds_secret(sc, s)) {
		return strdup("(hidden)");
	}
	pwrap_buf_str(&b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\') {
			pwrap_buf_fmt(&b, "\\%c", *p);
		} else if (*p == '\n') {
			pwrap_buf_str(&b, "\\n");
		} else if (*p == '\t') {
			pwrap_buf_str(&b, "\\t");
		} else if (*p < 0x20 || *p == 0x7f) {
			pwrap_buf_fmt(&b, "\\x%02x", *p);
		} else {
			pwrap_buf_add(&b, (const char *)p, 1);
		}
	}
	pwrap_buf_str(&b, "\"");
	return pwrap_buf_take(&b);
}

/* How an expectation's text reads in a message: "text" or /regex/. */
static char *show_match(const struct scenario *sc, const struct match *m)
{
	char *s = NULL;

	if (!m->is_regex) {
		return show(sc, m->text);
	}
	if (holds_secret(sc, m->text)) {
		return strdup("(hidden)");
	}
	if (asprintf(&s, "/%s/", m->text) < 0) {
		return NULL;
	}
	return s;
}

/* Save NAME's value once so that restore_env() can put it back. */
static void save_env(struct runner *r, const char *name)
{
	struct saved *n;
	const char *v = getenv(name);

	for (size_t i = 0; i < r->nsaved; i++) {
		if (strcmp(r->saved[i].name, name) == 0) {
			return;
		}
	}
	n = reallocarray(r->saved, r->nsaved + 1, sizeof(*n));
	if (n == NULL) {
		r->oom = 1;
		return;
	}
	r->saved = n;
	n[r->nsaved].name = strdup(name);
	n[r->nsaved].value = v != NULL ? strdup(v) : NULL;
	r->nsaved++;
}

static int set_env(struct runner *r, const char *name, const char *value)
{
	save_env(r, name);
	return value != NULL ? setenv(name, value, 1) : unsetenv(name);
}

static void restore_env(struct runner *r)
{
	for (size_t i = r->nsaved; i-- > 0;) {
		struct saved *s = &r->saved[i];
		if (s->name != NULL) {
			if (s->value != NULL) {
				setenv(s->name, s->value, 1);
			} else {
				unsetenv(s->name);
			}
		}
		free(s->name);
		free(s->value);
	}
	free(r->saved);
	r->saved = NULL;
	r->nsaved = 0;
}

static void clear_msgs(struct runner *r)
{
	for (size_t i = 0; i < r->nmsgs; i++) {
		free(r->msgs[i].text);
	}
	free(r->msgs);
	r->msgs = NULL;
	r->nmsgs = 0;
}

static void free_responses(struct pam_response *resp, int n)
{
	for (int i = 0; i < n; i++) {
		if (resp[i].resp != NULL) {
			explicit_bzero(resp[i].resp, strlen(resp[i].resp));
			free(resp[i].resp);
		}
	}
	free(resp);
}

/* Answer the prompt msg from the next `prompt` line, or fail. */
static int answer_prompt(struct runner *r, const struct pam_message *m, char **answer)
{
	const struct step *run = r->run;
	const struct expect *e = NULL;
	char *got = NULL, *want = NULL;

	if (r->conv_failed) {
		return PAM_CONV_ERR;
	}
	while (r->next_exp < run->nexps &&
	       run->exps[r->next_exp].kind != EXP_PROMPT) {
		r->next_exp++;
	}
	got = show(r->sc, m->msg);
	if (r->next_exp >= run->nexps) {
		failf(r, run->line, "unexpected prompt %s (no `prompt` line left for it)", got);
		goto fail;
	}
	e = &run->exps[r->next_exp];
	if (!match_test(&e->m, m->msg)) {
		want = show_match(r->sc, &e->m);
		failf(r, e->line, "expected prompt %s, got %s", want, got);
		goto fail;
	}
	if (e->style != 0 && e->style != m->msg_style) {
		failf(r, e->line, "prompt %s was asked %s, expected %s", got,
		      m->msg_style == PAM_PROMPT_ECHO_ON ? "echo-on" : "echo-off",
		      e->style == PAM_PROMPT_ECHO_ON ? "echo-on" : "echo-off");
		goto fail;
	}
	r->next_exp++;
	free(got);
	*answer = strdup(e->answer);
	return *answer != NULL ? PAM_SUCCESS : PAM_BUF_ERR;
fail:
	r->conv_failed = 1;
	free(got);
	free(want);
	return PAM_CONV_ERR;
}

/* The first fault of `kind` in s that names call `call`, or NULL. */
static const struct fault *fault_for(const struct step *s, enum fault_kind kind,
				     unsigned int call)
{
	for (size_t i = 0; s != NULL && i < s->nfaults; i++) {
		const struct fault *f = &s->faults[i];
		if (f->kind == kind && (f->at == 0 || f->at == call)) {
			return f;
		}
	}
	return NULL;
}

/*
 * The fault for this call: the operation's, then the transaction's, the
 * kinds in the order fail, null-resp, null-entry, long-answer.
 */
static const struct fault *current_fault(const struct runner *r)
{
	static const enum fault_kind order[] = {FAULT_FAIL, FAULT_NULL_RESP,
						FAULT_NULL_ENTRY, FAULT_LONG_ANSWER};

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		const struct fault *f = fault_for(r->run, order[k], r->op_calls);
		if (f == NULL) {
			f = fault_for(r->tx, order[k], r->tx_calls);
		}
		if (f != NULL) {
			return f;
		}
	}
	return NULL;
}

/* "abcd...zabc...", len characters (libpamtest's long answer).  Malloc'd. */
static char *long_answer(size_t len)
{
	char *s = malloc(len + 1);

	if (s == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		s[i] = (char)('a' + i % 26);
	}
	s[len] = '\0';
	return s;
}

static int record_msg(struct runner *r, const struct pam_message *m)
{
	struct msg *l = reallocarray(r->msgs, r->nmsgs + 1, sizeof(*l));

	if (l == NULL) {
		return PAM_BUF_ERR;
	}
	r->msgs = l;
	l[r->nmsgs].style = m->msg_style;
	l[r->nmsgs].text = strdup(m->msg != NULL ? m->msg : "");
	r->nmsgs++;
	return PAM_SUCCESS;
}

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	struct runner *r = data;
	const struct fault *fault = NULL;
	struct pam_response *out;
	int rc = PAM_SUCCESS;

	if (r->run != NULL) {
		r->tx_calls++;
		r->op_calls++;
		fault = current_fault(r);
	}
	if (fault != NULL && fault->kind == FAULT_FAIL) {
		if (resp != NULL) {
			*resp = NULL;
		}
		return fault->code;
	}
	if (n <= 0 || n > PAM_MAX_NUM_MSG || msg == NULL || resp == NULL) {
		return PAM_CONV_ERR;
	}
	if (fault != NULL && fault->kind == FAULT_NULL_RESP) {
		*resp = NULL;
		return PAM_SUCCESS;
	}
	if (fault != NULL && fault->kind == FAULT_NULL_ENTRY) {
		/* Every answer NULL; the module frees the array. */
		*resp = calloc((size_t)n, sizeof(**resp));
		return *resp != NULL ? PAM_SUCCESS : PAM_BUF_ERR;
	}
	out = calloc((size_t)n, sizeof(*out));
	if (out == NULL) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < n && rc == PAM_SUCCESS; i++) {
		const struct pam_message *m = msg[i];
		if (r->run == NULL) {
			failf(r, r->sc->steps[0].line, "conversation outside an operation");
			rc = PAM_CONV_ERR;
			break;
		}
		switch (m->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
		case PAM_PROMPT_ECHO_ON:
			if (fault != NULL) {
				/* long-answer: no `prompt` line is used. */
				out[i].resp = long_answer(fault->length);
				rc = out[i].resp != NULL ? PAM_SUCCESS : PAM_BUF_ERR;
				break;
			}
			rc = answer_prompt(r, m, &out[i].resp);
			break;
		case PAM_TEXT_INFO:
		case PAM_ERROR_MSG:
			rc = record_msg(r, m);
			break;
		default:
			failf(r, r->run->line, "unsupported conversation message style %d", m->msg_style);
			rc = PAM_CONV_ERR;
		}
	}
	if (rc != PAM_SUCCESS) {
		free_responses(out, n);
		return rc;
	}
	*resp = out;
	return PAM_SUCCESS;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Record the test point in progress with the failures gathered so far. */
static void finish_test(struct runner *r, const struct step *s, const char *name, double t0)
{
	struct file_results *fr = r->fr;
	struct result *res = &fr->res[fr->nres++];

	memset(res, 0, sizeof(*res));
	res->step = s;
	res->seconds = now() - t0;
	if (asprintf(&res->name, "%s (line %d)", name, s->line) < 0) {
		res->name = NULL;
	}
	res->failures = r->fails;
	res->nfailures = r->nfails;
	res->passed = r->nfails == 0;
	r->fails = NULL;
	r->nfails = 0;
}

/* Check the info or error messages of an operation (in order, others allowed). */
static void check_messages(struct runner *r, const struct step *s, int style)
{
	const char *what = style == PAM_TEXT_INFO ? "info" : "error";
	enum exp_kind want = style == PAM_TEXT_INFO ? EXP_INFO : EXP_ERROR;
	enum exp_kind none = style == PAM_TEXT_INFO ? EXP_NO_INFO : EXP_NO_ERROR;
	struct pwrap_buf seen = {0};
	size_t j = 0, matched = 0;

	for (size_t i = 0; i < r->nmsgs; i++) {
		if (r->msgs[i].style != style) {
			continue;
		}
		char *t = show(r->sc, r->msgs[i].text);
		pwrap_buf_fmt(&seen, "%s%s", seen.len > 0 ? ", " : "", t != NULL ? t : "?");
		free(t);
	}
	for (size_t k = 0; k < s->nexps; k++) {
		const struct expect *e = &s->exps[k];
		if (e->kind == none && seen.len > 0) {
			failf(r, e->line, "expected no %s messages, got %s", what, seen.p);
		}
		if (e->kind != want) {
			continue;
		}
		/* In order: search after the previous matched message. */
		size_t from = j;
		while (j < r->nmsgs && (r->msgs[j].style != style ||
					!match_test(&e->m, r->msgs[j].text))) {
			j++;
		}
		if (j < r->nmsgs) {
			j++;
			matched++;
			continue;
		}
		j = from;
		char *w = show_match(r->sc, &e->m);
		failf(r, e->line, "expected %s message %s was not sent%s (%s messages: %s)", what, w,
		      matched > 0 ? " after the previous matched one" : "", what,
		      seen.len > 0 ? seen.p : "none");
		free(w);
	}
	pwrap_buf_free(&seen);
}

static void check_env_item(struct runner *r, const struct expect *e)
{
	const char *val = NULL;
	char label[64];
	int absent = e->kind == EXP_ABSENT_ENV || e->kind == EXP_ABSENT_ITEM;

	if (e->kind == EXP_ENV || e->kind == EXP_ABSENT_ENV) {
		val = pam_getenv(r->pamh, e->name);
		snprintf(label, sizeof(label), "PAM environment variable %s", e->name);
	} else {
		const void *v = NULL;
		if (pam_get_item(r->pamh, e->item, &v) == PAM_SUCCESS) {
			val = v;
		}
		snprintf(label, sizeof(label), "item %s", item_name(e->item));
	}
	char *got = show(r->sc, val);
	if (absent) {
		if (val != NULL) {
			failf(r, e->line, "%s is set (to %s), expected it absent", label, got);
		}
	} else if (val == NULL) {
		failf(r, e->line, "%s is not set", label);
	} else if ((e->kind == EXP_ITEM || e->has_match) && !match_test(&e->m, val)) {
		char *want = show_match(r->sc, &e->m);
		failf(r, e->line, "%s is %s, expected %s", label, got, want);
		free(want);
	}
	free(got);
}

static int call_op(pam_handle_t *pamh, enum op op, int flags)
{
	switch (op) {
	case OP_AUTHENTICATE: return pam_authenticate(pamh, flags);
	case OP_SETCRED: return pam_setcred(pamh, flags);
	case OP_ACCT_MGMT: return pam_acct_mgmt(pamh, flags);
	case OP_CHAUTHTOK: return pam_chauthtok(pamh, flags);
	case OP_OPEN_SESSION: return pam_open_session(pamh, flags);
	case OP_CLOSE_SESSION: return pam_close_session(pamh, flags);
	}
	return PAM_SYSTEM_ERR;
}

static const char *default_user(const struct scenario *sc)
{
	return sc->nusers > 0 ? sc->users[0].name : NULL;
}

static void do_start(struct runner *r, const struct step *s)
{
	static struct pam_conv pc;
	double t0 = now();
	const char *svc = s != NULL && s->service != NULL ? s->service : r->sc->svcs[0].name;
	const char *user = s != NULL && s->user != NULL ? s->user : default_user(r->sc);
	int line = s != NULL ? s->line : 0;
	int rc;

	if (s != NULL && s->no_user) {
		user = NULL;
	}
	if (r->pamh != NULL) {
		pam_end(r->pamh, r->last_rc);
		r->pamh = NULL;
	}
	free(r->start_error);
	r->start_error = NULL;
	pc.conv = conv;
	pc.appdata_ptr = r;
	r->last_rc = PAM_SUCCESS;
	/* s may be need_handle()'s temporary, which has no faults. */
	r->tx = s != NULL && s->nfaults > 0 ? s : NULL;
	r->tx_calls = 0;
	rc = pam_start(svc, user, &pc, &r->pamh);
	if (rc != PAM_SUCCESS) {
		if (asprintf(&r->start_error,
			     "%s:%d: pam_start(\"%s\", %s%s%s) failed: %s",
			     r->sc->path, line, svc, user != NULL ? "\"" : "",
			     user != NULL ? user : "NULL",
			     user != NULL ? "\"" : "", pam_code_name(rc)) < 0) {
			r->start_error = NULL;
		}
		r->pamh = NULL;
	}
	if (s != NULL && s->has_expect) {
		if (rc != s->expected) {
			failf(r, line, "pam_start returned %s, expected %s", pam_code_name(rc),
			      pam_code_name(s->expected));
		}
		finish_test(r, s, "start", t0);
	}
}

/* Make sure a transaction is open; false when pam_start failed. */
static int need_handle(struct runner *r, const struct step *s)
{
	if (r->pamh == NULL && r->start_error == NULL) {
		struct step implicit = {.kind = STEP_START, .line = s->line};
		do_start(r, &implicit);
	}
	if (r->pamh == NULL) {
		failf(r, s->line, "no PAM transaction: %s",
		      r->start_error != NULL ? r->start_error : "pam_start failed");
		return 0;
	}
	return 1;
}

static void do_run(struct runner *r, const struct step *s)
{
	char name[128];
	double t0 = now();
	int rc;

	snprintf(name, sizeof(name), "%s", op_name(s->op));
	for (int bit = 1; bit <= (int)PAM_SILENT; bit <<= 1) {
		const char *fl = (s->flags & bit) ? flag_name(bit) : NULL;
		if (fl != NULL) {
			snprintf(name + strlen(name), sizeof(name) - strlen(name), " %s", fl);
		}
	}
	r->run = s;
	r->next_exp = 0;
	r->conv_failed = 0;
	r->op_calls = 0;
	clear_msgs(r);
	if (!need_handle(r, s)) {
		goto out;
	}
	rc = call_op(r->pamh, s->op, s->flags);
	r->last_rc = rc;
	if (rc != s->expected) {
		failf(r, s->line, "%s returned %s, expected %s", op_name(s->op), pam_code_name(rc),
		      pam_code_name(s->expected));
	}
	if (!r->conv_failed) {
		for (size_t k = r->next_exp; k < s->nexps; k++) {
			if (s->exps[k].kind != EXP_PROMPT) {
				continue;
			}
			char *w = show_match(r->sc, &s->exps[k].m);
			failf(r, s->exps[k].line, "prompt %s was never asked", w);
			free(w);
		}
	}
	check_messages(r, s, PAM_TEXT_INFO);
	check_messages(r, s, PAM_ERROR_MSG);
	for (size_t k = 0; k < s->nexps; k++) {
		enum exp_kind kd = s->exps[k].kind;
		if (kd == EXP_ENV || kd == EXP_ABSENT_ENV || kd == EXP_ITEM ||
		    kd == EXP_ABSENT_ITEM) {
			check_env_item(r, &s->exps[k]);
		}
	}
out:
	r->run = NULL;
	clear_msgs(r);
	finish_test(r, s, name, t0);
}

static void do_end(struct runner *r, const struct step *s)
{
	double t0 = now();

	if (r->pamh == NULL) {
		failf(r, s->line, "`end` without an open transaction%s%s",
		      r->start_error != NULL ? ": " : "",
		      r->start_error != NULL ? r->start_error : "");
	} else {
		int rc = pam_end(r->pamh, r->last_rc);
		r->pamh = NULL;
		r->tx = NULL;
		if (rc != s->expected) {
			failf(r, s->line, "pam_end returned %s, expected %s", pam_code_name(rc),
			      pam_code_name(s->expected));
		}
	}
	free(r->start_error);
	r->start_error = NULL;
	finish_test(r, s, "end", t0);
}

/* write-file / remove-file below the private directory. */
static void write_step(struct runner *r, const struct step *s)
{
	char *path = NULL, *slash;

	if (asprintf(&path, "%s/%s", r->dir, s->name) < 0) {
		r->oom = 1;
		return;
	}
	if (s->value == NULL) {
		if (unlink(path) != 0 && errno != ENOENT) {
			failf(r, s->line, "cannot remove %s: %s", s->name, strerror(errno));
		}
	} else {
		slash = strrchr(path, '/');
		*slash = '\0';
		if (pwrap_replace_file(path, slash + 1, s->value) != 0) {
			failf(r, s->line, "cannot write %s", s->name);
		}
	}
	free(path);
}

static void do_setup_step(struct runner *r, const struct step *s)
{
	int rc;

	switch (s->kind) {
	case STEP_SETENV:
		if (set_env(r, s->name, s->value) != 0) {
			failf(r, s->line, "cannot set %s", s->name);
		}
		break;
	case STEP_PUTENV: {
		char *kv = NULL;
		if (!need_handle(r, s)) {
			break;
		}
		if (s->value != NULL ? asprintf(&kv, "%s=%s", s->name, s->value) < 0
				     : (kv = strdup(s->name)) == NULL) {
			r->oom = 1;
			break;
		}
		rc = pam_putenv(r->pamh, kv);
		if (rc != PAM_SUCCESS) {
			failf(r, s->line, "pam_putenv(%s) failed: %s", s->name, pam_code_name(rc));
		}
		explicit_bzero(kv, strlen(kv));
		free(kv);
		break;
	}
	case STEP_WRITE:
		write_step(r, s);
		break;
	case STEP_SET_ITEM:
		if (!need_handle(r, s)) {
			break;
		}
		rc = pam_set_item(r->pamh, s->item, s->value);
		if (rc != PAM_SUCCESS) {
			failf(r, s->line, "pam_set_item(%s) failed: %s", item_name(s->item),
			      pam_code_name(rc));
		}
		break;
	default:
		break;
	}
}

char *scenario_expand(const struct scenario *sc, const char *text,
		      const char *dir, const char *passdb, bool keep)
{
	struct pwrap_buf b = {0};
	const char *p = text;

	for (const char *v; (v = strstr(p, "${")) != NULL;) {
		const char *e = strchr(v, '}');
		const char *val = NULL;
		size_t n = e != NULL ? (size_t)(e - v - 2) : 0;
		pwrap_buf_add(&b, p, (size_t)(v - p));
		if (n == 6 && strncmp(v + 2, "PASSDB", n) == 0) {
			val = passdb;
		} else if (n == 10 && strncmp(v + 2, "MODULE_DIR", n) == 0) {
			val = pamtest_moddir;
		} else if (n == 12 && strncmp(v + 2, "SCENARIO_DIR", n) == 0) {
			val = sc->dir;
		} else if (n == 3 && strncmp(v + 2, "DIR", n) == 0) {
			val = dir;
		}
		if (val == NULL && !keep) {
			pwrap_buf_free(&b);
			return NULL;
		}
		pwrap_buf_str(&b, val != NULL ? val : "${");
		p = val != NULL ? e + 1 : v + 2;
	}
	pwrap_buf_str(&b, p);
	return pwrap_buf_take(&b);
}

/* An explore block (tools/explore/scen.c): one test point. */
static void do_explore(struct runner *r, const struct step *s)
{
	double t0 = now();

	if (xp_scen_run(r->sc, s, &r->fails, &r->nfails) != 0) {
		r->oom = 1;
	}
	finish_test(r, s, "explore", t0);
}

/*
 * `service-dir system`: the copy of the stacks in dir (pwrap_system.h) and
 * the users and groups in nss_wrapper's files (dir/state, where
 * pam_localuser reads them, and pamtest's own, whose path nss_wrapper
 * fixed at its first lookup).  *svcdir gets dir/pam.d.
 */
static int setup_system(struct runner *r, const char *dir, const char *passdb,
			char **svcdir, char **err)
{
	const struct scenario *sc = r->sc;
	const char **names = calloc(sc->nsvcs + sc->nusers + 1, sizeof(*names));
	struct pwrap_nss_group *groups = calloc(sc->ngroups + 1, sizeof(*groups));
	struct pwrap_system sys = {
		.src = sc->system, .dir = dir, .moddir = pamtest_moddir,
		.services = names, .nservices = sc->nsvcs, .swaps = sc->swaps,
		.nswaps = sc->nswaps, .passdb = passdb, .swap_word = "swap ",
	};
	char *state = NULL, *pw = NULL, *gr = NULL, *prog = NULL, *trace = NULL;
	int rc = -1;

	*svcdir = NULL;
	if (names == NULL || groups == NULL ||
	    asprintf(&prog, "pamtest: %s", sc->path) < 0 ||
	    asprintf(&state, "%s/state", dir) < 0 ||
	    asprintf(svcdir, "%s/pam.d", dir) < 0) {
		*err = strdup("out of memory");
		goto out;
	}
	if (pamtest_nss_dir == NULL || pamtest_moddir == NULL) {
		if (asprintf(
			    err, "%s:%d: service-dir system needs %s", sc->path,
			    sc->service_dir_line,
			    pamtest_moddir == NULL
				    ? "pam_wrapper's modules (--module-dir)"
				    : "libnss_wrapper.so, which pamtest preloads when it "
				      "starts itself (Debian: apt-get install libnss-wrapper; "
				      "not under pam_wrapper(1) without --nss)") <
		    0) {
			*err = NULL;
		}
		goto out;
	}
	sys.prog = prog;
	sys.sysmoddir = system_module_dir();
	for (size_t i = 0; i < sc->nsvcs; i++) {
		names[i] = sc->svcs[i].name;
	}
	rc = pwrap_system_copy(&sys);
	free((char *)sys.sysmoddir);
	if (rc != 0) {
		if (asprintf(err,
			     "%s:%d: service-dir system: the copy of %s was "
			     "refused (see above)",
			     sc->path, sc->service_dir_line, sc->system) < 0) {
			*err = NULL;
		}
		goto out;
	}
	rc = -1;
	for (size_t i = 0; i < sc->nusers; i++) {
		names[i] = sc->users[i].name;
	}
	for (size_t i = 0; i < sc->ngroups; i++) {
		groups[i].name = sc->groups[i].name;
		groups[i].members = sc->groups[i].members;
	}
	if (pwrap_nss_files(state, names, sc->nusers, groups, sc->ngroups, &pw, &gr) != 0) {
		*err = strdup("cannot write the nss_wrapper files");
		goto out;
	}
	free(pw);
	free(gr);
	pw = gr = NULL;
	if (pwrap_nss_files(pamtest_nss_dir, names, sc->nusers, groups,
			    sc->ngroups, &pw, &gr) != 0 ||
	    set_env(r, "PAM_WRAPPER_SYSTEM_DIR", state) != 0) {
		*err = strdup("cannot write the nss_wrapper files");
		goto out;
	}
	/* --trace: the swap records come first in the scenario's trace */
	trace = pamtest_trace != NULL ? trace_path(dir) : NULL;
	if (pamtest_trace != NULL &&
	    (trace == NULL ||
	     pwrap_system_trace(dir, trace, pamtest_trace_format) != 0)) {
		*err = strdup("cannot write the swap records into the trace");
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		free(*svcdir);
		*svcdir = NULL;
	}
	free(names);
	free(groups);
	free(state);
	free(pw);
	free(gr);
	free(prog);
	free(trace);
	return rc;
}

/* Private dir with passdb and service files; exports what the wrapper reads. */
static int setup(struct runner *r, struct pwrap_tmp **dir_out, char **err)
{
	const struct scenario *sc = r->sc;
	struct pwrap_buf pdb = {0};
	struct pwrap_tmp *tmp = NULL;
	const char *dir = NULL;
	char *passdb = NULL, *syscopy = NULL;
	const char *svcdir = sc->service_dir;
	/* `service-dir system`: a user is every service's unless it names one */
	const char *defsvc = sc->system != NULL ? "*" : sc->svcs[0].name;
	int rc = -1;

	*err = NULL;
	tmp = pwrap_tmp_make("pamtest");
	dir = tmp != NULL ? tmp->path : NULL;
	if (dir == NULL) {
		*err = strdup("cannot create a private directory");
		goto out;
	}
	pwrap_buf_str(&pdb, "");
	for (size_t i = 0; i < sc->nusers; i++) {
		pwrap_buf_fmt(&pdb, "%s:%s:%s%s%s\n", sc->users[i].name, sc->users[i].password,
			sc->users[i].service != NULL ? sc->users[i].service : defsvc,
			sc->users[i].flags != NULL ? ":" : "",
			sc->users[i].flags != NULL ? sc->users[i].flags : "");
	}
	if (pdb.failed || pwrap_tmp_write(tmp, "passdb", pdb.p, &passdb) != 0) {
		*err = strdup("cannot write the passdb");
		goto out;
	}
	for (size_t i = 0; i < sc->nsvcs; i++) {
		const struct service *sv = &sc->svcs[i];
		if (sv->text == NULL) {
			continue;
		}
		char *text = scenario_expand(r->sc, sv->text, dir, passdb, false);
		if (text == NULL) {
			if (asprintf(
				    err,
				    "%s:%d: cannot expand the service lines of %s "
				    "(module directory unknown?)",
				    sc->path, sv->line, sv->name) < 0) {
				*err = NULL;
			}
			goto out;
		}
		int wrc = pwrap_tmp_write(tmp, sv->name, text, NULL);
		free(text);
		if (wrc != 0) {
			*err = strdup("cannot write a service file");
			goto out;
		}
		svcdir = dir;
	}
	if (sc->system != NULL) {
		if (setup_system(r, dir, passdb, &syscopy, err) != 0) {
			goto out;
		}
		svcdir = syscopy;
	}
	if (svcdir == NULL) {
		svcdir = getenv("PAM_WRAPPER_SERVICE_DIR");
	}
	if (svcdir == NULL) {
		if (asprintf(
			    err,
			    "%s:%d: service \"%s\" has no lines and neither service-dir nor "
			    "PAM_WRAPPER_SERVICE_DIR gives a directory",
			    sc->path, sc->svcs[0].line, sc->svcs[0].name) < 0) {
			*err = NULL;
		}
		goto out;
	}
	char *trace = pamtest_trace != NULL ? trace_path(dir) : NULL;
	if ((pamtest_trace != NULL &&
	     (trace == NULL || set_env(r, "PAM_WRAPPER_TRACE", trace) != 0 ||
	      set_env(r, "PAM_WRAPPER_TRACE_FORMAT", pamtest_trace_format) != 0)) ||
	    set_env(r, "PAM_WRAPPER", "1") != 0 ||
	    set_env(r, "PAM_WRAPPER_SERVICE_DIR", svcdir) != 0 ||
	    ((sc->nusers > 0 || getenv("PAM_MATRIX_PASSWD") == NULL) &&
	     set_env(r, "PAM_MATRIX_PASSWD", passdb) != 0)) {
		*err = strdup("cannot set the environment");
		free(trace);
		goto out;
	}
	free(trace);
	rc = 0;
out:
	if (pdb.p != NULL) {
		explicit_bzero(pdb.p, pdb.len);
	}
	pwrap_buf_free(&pdb);
	free(passdb);
	free(syscopy);
	*dir_out = tmp;
	if (rc != 0 && *err == NULL) {
		*err = strdup("setup failed");
	}
	return rc;
}

int scenario_run(const struct scenario *sc, struct file_results *fr, int keep)
{
	struct runner r = {.sc = sc, .fr = fr};
	size_t ntests = scenario_ntests(sc);
	struct pwrap_tmp *tmp = NULL;
	const char *dir = NULL;
	char *err = NULL;
	double t0 = now();
	int rc = 0;

	memset(fr, 0, sizeof(*fr));
	fr->sc = sc;
	fr->res = calloc(ntests > 0 ? ntests : 1, sizeof(*fr->res));
	if (fr->res == NULL) {
		return -1;
	}
	rc = setup(&r, &tmp, &err);
	dir = tmp != NULL ? tmp->path : NULL;
	if (rc != 0) {
		/* Every test point fails with the setup error. */
		fr->error = err;
		for (size_t i = 0; i < sc->nsteps; i++) {
			const struct step *s = &sc->steps[i];
			const char *nm = s->kind == STEP_RUN ? op_name(s->op)
					 : s->kind == STEP_END ? "end"
					 : s->kind == STEP_EXPLORE ? "explore" : "start";
			if (!step_is_test(s)) {
				continue;
			}
			add_str(&r, &r.fails, &r.nfails, strdup(err != NULL ? err : "setup failed"));
			finish_test(&r, s, nm, now());
		}
		rc = -1;
		goto out;
	}
	r.dir = dir;
	if (keep) {
		fprintf(stderr, "pamtest: %s: private directory %s (kept)\n", sc->path, dir);
	}
	for (size_t i = 0; i < sc->nsteps; i++) {
		const struct step *s = &sc->steps[i];
		switch (s->kind) {
		case STEP_START:
			do_start(&r, s);
			break;
		case STEP_RUN:
			do_run(&r, s);
			break;
		case STEP_END:
			do_end(&r, s);
			break;
		case STEP_EXPLORE:
			do_explore(&r, s);
			break;
		default:
			do_setup_step(&r, s);
		}
	}
	if (r.pamh != NULL) {
		pam_end(r.pamh, r.last_rc);
	}
	/* Failures of trailing setup steps go to the last test point. */
	if (r.nfails > 0 && fr->nres > 0) {
		struct result *last = &fr->res[fr->nres - 1];
		for (size_t i = 0; i < r.nfails; i++) {
			add_str(&r, &last->failures, &last->nfailures, r.fails[i]);
		}
		last->passed = 0;
		free(r.fails);
		r.fails = NULL;
		r.nfails = 0;
	}
	if (r.oom) {
		fr->error = strdup("out of memory");
		rc = -1;
	}
out:
	if (pamtest_trace != NULL && dir != NULL &&
	    trace_collect(sc, dir) != 0 && rc == 0) {
		rc = -1;
	}
	restore_env(&r);
	free(r.start_error);
	for (size_t i = 0; i < r.nfails; i++) {
		free(r.fails[i]);
	}
	free(r.fails);
	if (keep) {
		pwrap_tmp_keep(tmp);
	} else {
		(void)pwrap_tmp_remove(tmp);
	}
	fr->seconds = now() - t0;
	return rc;
}

void file_results_free(struct file_results *fr)
{
	for (size_t i = 0; i < fr->nres; i++) {
		for (size_t j = 0; j < fr->res[i].nfailures; j++) {
			free(fr->res[i].failures[j]);
		}
		free(fr->res[i].failures);
		free(fr->res[i].name);
	}
	free(fr->res);
	free(fr->error);
	memset(fr, 0, sizeof(*fr));
}
