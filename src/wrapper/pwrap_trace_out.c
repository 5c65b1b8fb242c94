/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module trace's output: the names of return codes, flags and
 * functions, the records in JSON and text (doc/trace-format.md), where
 * they go (PAM_WRAPPER_TRACE, _FORMAT) and appending them to the trace
 * file.  No state but the relative destination last resolved and the
 * destination last logged as failing (so a bad path is logged once, not at
 * every call).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <security/pam_appl.h>
#include <security/pam_modules.h>	/* PAM_PRELIM_CHECK, ... */
#if defined(PWRAP_OPENPAM)
#include <security/openpam.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_trace.h"

/* ---- names ------------------------------------------------------------- */

const char *pwrap_trace_code_name(int rc)
{
#define C(x) case x: return #x
	switch (rc) {
	C(PAM_SUCCESS); C(PAM_OPEN_ERR); C(PAM_SYMBOL_ERR);
	C(PAM_SERVICE_ERR); C(PAM_SYSTEM_ERR); C(PAM_BUF_ERR);
	C(PAM_PERM_DENIED); C(PAM_AUTH_ERR); C(PAM_CRED_INSUFFICIENT);
	C(PAM_AUTHINFO_UNAVAIL); C(PAM_USER_UNKNOWN); C(PAM_MAXTRIES);
	C(PAM_NEW_AUTHTOK_REQD); C(PAM_ACCT_EXPIRED); C(PAM_SESSION_ERR);
	C(PAM_CRED_UNAVAIL); C(PAM_CRED_EXPIRED); C(PAM_CRED_ERR);
	C(PAM_NO_MODULE_DATA); C(PAM_CONV_ERR); C(PAM_AUTHTOK_ERR);
	C(PAM_AUTHTOK_RECOVERY_ERR); C(PAM_AUTHTOK_LOCK_BUSY);
	C(PAM_AUTHTOK_DISABLE_AGING); C(PAM_TRY_AGAIN); C(PAM_IGNORE);
	C(PAM_ABORT); C(PAM_AUTHTOK_EXPIRED); C(PAM_MODULE_UNKNOWN);
	C(PAM_BAD_ITEM);
#if defined(PAM_CONV_AGAIN)
	C(PAM_CONV_AGAIN);
#endif
#if defined(PAM_INCOMPLETE)
	C(PAM_INCOMPLETE);
#endif
#if defined(PWRAP_OPENPAM)
	C(PAM_DOMAIN_UNKNOWN); C(PAM_BAD_HANDLE); C(PAM_BAD_FEATURE);
	C(PAM_BAD_CONSTANT);
#endif
	default:
		return NULL;
	}
#undef C
}

static const char *const sm_names[PWRAP_SM_COUNT][3] = {
	{ "pam_authenticate", "pam_sm_authenticate", "auth" },
	{ "pam_setcred", "pam_sm_setcred", "auth" },
	{ "pam_acct_mgmt", "pam_sm_acct_mgmt", "account" },
	{ "pam_open_session", "pam_sm_open_session", "session" },
	{ "pam_close_session", "pam_sm_close_session", "session" },
	{ "pam_chauthtok", "pam_sm_chauthtok", "password" },
};

const char *pwrap_trace_call_name(enum pwrap_sm sm)
{
	return sm_names[sm][0];
}

const char *pwrap_trace_sm_name(enum pwrap_sm sm)
{
	return sm_names[sm][1];
}

const char *pwrap_trace_type_name(enum pwrap_sm sm)
{
	return sm_names[sm][2];
}

/* The flags a function can get (their values overlap between functions). */
struct flag {
	int value;
	const char *name;
};
#define F(x) { x, #x }
static const struct flag auth_flags[] = { F(PAM_SILENT),
					  F(PAM_DISALLOW_NULL_AUTHTOK) };
static const struct flag cred_flags[] = {
	F(PAM_SILENT), F(PAM_ESTABLISH_CRED), F(PAM_DELETE_CRED),
	F(PAM_REINITIALIZE_CRED), F(PAM_REFRESH_CRED)
};
static const struct flag sess_flags[] = { F(PAM_SILENT) };
static const struct flag tok_flags[] = {
	F(PAM_SILENT), F(PAM_CHANGE_EXPIRED_AUTHTOK), F(PAM_PRELIM_CHECK),
	F(PAM_UPDATE_AUTHTOK)
};
#undef F

/* Calls add(b, name) for each flag set in flags (unknown bits: a number). */
static void flag_names(struct pwrap_buf *b, enum pwrap_sm sm, int flags,
		       void (*add)(struct pwrap_buf *, const char *, bool))
{
	const struct flag *t = auth_flags;
	size_t n = sizeof(auth_flags) / sizeof(auth_flags[0]);
	bool first = true;
	char num[24];

	if (sm == PWRAP_SM_SETCRED) {
		t = cred_flags;
		n = sizeof(cred_flags) / sizeof(cred_flags[0]);
	} else if (sm == PWRAP_SM_OPEN_SESSION ||
		   sm == PWRAP_SM_CLOSE_SESSION) {
		t = sess_flags;
		n = 1;
	} else if (sm == PWRAP_SM_CHAUTHTOK) {
		t = tok_flags;
		n = sizeof(tok_flags) / sizeof(tok_flags[0]);
	}
	for (size_t i = 0; i < n; i++) {
		if ((flags & t[i].value) != 0) {
			add(b, t[i].name, first);
			first = false;
			flags &= ~t[i].value;
		}
	}
	if (flags != 0) {
		snprintf(num, sizeof(num), "%#x", (unsigned)flags);
		add(b, num, first);
	}
}

/* ---- records ------------------------------------------------------------ */

/* s as a JSON string: '"', '\' and control characters escaped, valid
 * UTF-8 kept, any other byte as \u00XX. */
static void json_str(struct pwrap_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	pwrap_buf_add(b, "\"", 1);
	while (*p != '\0') {
		size_t n = 0;

		if (*p >= 0xc2 && *p <= 0xf4) {
			/* a valid sequence: its continuation bytes, and no
			 * overlong or surrogate form */
			size_t want = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : 1;
			bool ok = true;

			for (size_t i = 1; i <= want; i++) {
				ok = ok && (p[i] & 0xc0) == 0x80;
			}
			if (ok && ((*p == 0xe0 && p[1] < 0xa0) ||
				   (*p == 0xed && p[1] >= 0xa0) ||
				   (*p == 0xf0 && p[1] < 0x90) ||
				   (*p == 0xf4 && p[1] >= 0x90))) {
				ok = false;
			}
			n = ok ? want + 1 : 0;
		} else if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
			n = 1;
		}
		if (n > 0) {
			pwrap_buf_add(b, (const char *)p, n);
			p += n;
		} else if (*p == '"' || *p == '\\') {
			pwrap_buf_fmt(b, "\\%c", *p++);
		} else {
			pwrap_buf_fmt(b, "\\u%04x", *p++);
		}
	}
	pwrap_buf_add(b, "\"", 1);
}

/* s for the text form: control characters as \xNN. */
static void text_str(struct pwrap_buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			pwrap_buf_fmt(b, "\\x%02x", *p);
		} else {
			pwrap_buf_add(b, (const char *)p, 1);
		}
	}
}

static void code(struct pwrap_buf *b, enum pwrap_trace_fmt fmt, int rc)
{
	const char *name = pwrap_trace_code_name(rc);

	const char *q = fmt == PWRAP_TRACE_JSON ? "\"" : "";

	if (name != NULL) {
		pwrap_buf_fmt(b, "%s%s%s", q, name, q);
	} else {
		pwrap_buf_fmt(b, "%s%d%s", q, rc, q);
	}
}

static void json_flag(struct pwrap_buf *b, const char *name, bool first)
{
	pwrap_buf_str(b, first ? "\"" : ",\"");
	pwrap_buf_str(b, name);
	pwrap_buf_str(b, "\"");
}

static void text_flag(struct pwrap_buf *b, const char *name, bool first)
{
	pwrap_buf_str(b, first ? "[" : "|");
	pwrap_buf_str(b, name);
}

static void action(struct pwrap_buf *b, const struct pwrap_trace_rec *r)
{
#if defined(PWRAP_OPENPAM)
	text_str(b, r->line->control);	/* OpenPAM: the flag */
#else
	static const char *const names[] = { "ignore", "ok", "done", "bad",
					     "die", "reset", "incomplete" };

	if (r->action > 0) {
		pwrap_buf_fmt(b, "jump %d", r->action);
	} else {
		pwrap_buf_str(b, names[-r->action]);
	}
#endif
}

static void who_json(struct pwrap_buf *b, const char *kind,
		     const struct pwrap_trace_who *who)
{
	pwrap_buf_fmt(b, "{\"kind\":\"%s\",\"pid\":%ld,\"tx\":%lu,"
		       "\"service\":", kind, who->pid, who->tx);
	json_str(b, who->service ? who->service : "");
}

static void who_text(struct pwrap_buf *b, const struct pwrap_trace_who *who)
{
	pwrap_buf_fmt(b, "pam_wrapper[%ld] tx %lu ", who->pid, who->tx);
	text_str(b, who->service ? who->service : "");
	pwrap_buf_str(b, ": ");
}

void pwrap_trace_format_start(struct pwrap_buf *b, enum pwrap_trace_fmt fmt,
			      const struct pwrap_trace_who *who,
			      const char *dir, int rc)
{
	if (fmt == PWRAP_TRACE_JSON) {
		who_json(b, "start", who);
		pwrap_buf_str(b, ",\"dir\":");
		json_str(b, dir ? dir : "");
		pwrap_buf_str(b, ",\"rc\":");
		code(b, fmt, rc);
		pwrap_buf_str(b, "}\n");
		return;
	}
	who_text(b, who);
	pwrap_buf_str(b, "pam_start -> ");
	code(b, fmt, rc);
	pwrap_buf_str(b, " (");
	text_str(b, dir ? dir : "");
	pwrap_buf_str(b, ")\n");
}

static void format_json(struct pwrap_buf *b, const struct pwrap_trace_who *who,
			const struct pwrap_trace_rec *r)
{
	const struct pwrap_trace_line *l = r->line;

	who_json(b, l ? "module" : "result", who);
	pwrap_buf_fmt(b, ",\"call\":\"%s\"", pwrap_trace_call_name(r->sm));
	if (l == NULL) {
		pwrap_buf_str(b, ",\"flags\":[");
		flag_names(b, r->sm, r->flags, json_flag);
		pwrap_buf_str(b, "],\"rc\":");
		code(b, PWRAP_TRACE_JSON, r->rc);
		pwrap_buf_fmt(b, ",\"calls\":%u}\n", r->seq);
		return;
	}
	pwrap_buf_fmt(b, ",\"seq\":%u,\"type\":\"%s\",\"function\":\"%s\","
		       "\"flags\":[", r->seq, pwrap_trace_type_name(r->sm),
		       pwrap_trace_sm_name(r->sm));
	flag_names(b, r->sm, r->flags, json_flag);
	pwrap_buf_str(b, "],\"where\":");
	json_str(b, l->where);
	pwrap_buf_str(b, ",\"control\":");
	json_str(b, l->control);
	pwrap_buf_str(b, ",\"module\":");
	json_str(b, l->module);
	pwrap_buf_str(b, ",\"path\":");
	json_str(b, l->path);
	pwrap_buf_str(b, ",\"rc\":");
	code(b, PWRAP_TRACE_JSON, r->rc);
	pwrap_buf_str(b, ",\"action\":\"");
	action(b, r);
	pwrap_buf_str(b, "\",\"result\":");
	if (r->has_result) {
		code(b, PWRAP_TRACE_JSON, r->result);
	} else {
		pwrap_buf_str(b, "null");
	}
	if (l->silent) {
		pwrap_buf_str(b, ",\"silent\":true");
	}
	if (r->error != NULL) {
		pwrap_buf_str(b, ",\"error\":");
		json_str(b, r->error);
	}
	pwrap_buf_str(b, "}\n");
}

static void format_text(struct pwrap_buf *b, const struct pwrap_trace_who *who,
			const struct pwrap_trace_rec *r)
{
	const struct pwrap_trace_line *l = r->line;
	size_t mark;

	who_text(b, who);
	pwrap_buf_str(b, pwrap_trace_call_name(r->sm));
	mark = b->len;
	flag_names(b, r->sm, r->flags, text_flag);
	if (b->len != mark) {
		pwrap_buf_str(b, "]");
	}
	if (l == NULL) {
		pwrap_buf_str(b, " -> ");
		code(b, PWRAP_TRACE_TEXT, r->rc);
		pwrap_buf_fmt(b, " (%u module call%s)\n", r->seq,
			       r->seq == 1 ? "" : "s");
		return;
	}
	pwrap_buf_fmt(b, " #%u ", r->seq);
	text_str(b, l->where);
	pwrap_buf_fmt(b, " %s%s ", pwrap_trace_type_name(r->sm),
		       l->silent ? "(-)" : "");
	text_str(b, l->control);
	pwrap_buf_str(b, " ");
	text_str(b, l->module);
	if (strcmp(l->module, l->path) != 0) {
		pwrap_buf_str(b, " (");
		text_str(b, l->path);
		pwrap_buf_str(b, ")");
	}
	pwrap_buf_str(b, " -> ");
	code(b, PWRAP_TRACE_TEXT, r->rc);
	pwrap_buf_str(b, ": ");
	action(b, r);
	if (r->error != NULL) {
		pwrap_buf_str(b, " (not called: ");
		text_str(b, r->error);
		pwrap_buf_str(b, ")");
	}
	pwrap_buf_str(b, "\n");
}

void pwrap_trace_format(struct pwrap_buf *b, enum pwrap_trace_fmt fmt,
			const struct pwrap_trace_who *who,
			const struct pwrap_trace_rec *r)
{
	if (fmt == PWRAP_TRACE_JSON) {
		format_json(b, who, r);
	} else {
		format_text(b, who, r);
	}
}

/* ---- where records go -------------------------------------------------- */

/* A relative PAM_WRAPPER_TRACE is resolved when first seen (a daemon's
 * later chdir must not move the trace). */
static pthread_mutex_t rel_lock = PTHREAD_MUTEX_INITIALIZER;
static char *rel_seen, *rel_abs;

char *pwrap_trace_dest(const char *v)
{
	char *abs = NULL;
	char *cwd;

	if (strcmp(v, "-") == 0 || v[0] == '/') {
		return strdup(v);
	}
	pthread_mutex_lock(&rel_lock);
	if (rel_seen == NULL || strcmp(rel_seen, v) != 0) {
		cwd = getcwd(NULL, 0);
		free(rel_seen);
		free(rel_abs);
		rel_seen = strdup(v);
		rel_abs = cwd != NULL ? pwrap_join(cwd, v) : NULL;
		free(cwd);
	}
	if (rel_abs != NULL) {
		abs = strdup(rel_abs);
	}
	pthread_mutex_unlock(&rel_lock);
	if (abs == NULL) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "PAM_WRAPPER_TRACE=%s: cannot "
			  "resolve the relative path", v);
	}
	return abs;
}

enum pwrap_trace_fmt pwrap_trace_fmt_env(void)
{
	const char *f = getenv("PAM_WRAPPER_TRACE_FORMAT");

	if (f == NULL || f[0] == '\0' || strcasecmp(f, "json") == 0) {
		return PWRAP_TRACE_JSON;
	}
	if (strcasecmp(f, "text") == 0) {
		return PWRAP_TRACE_TEXT;
	}
	PWRAP_LOG(PWRAP_LOG_WARN, "PAM_WRAPPER_TRACE_FORMAT=%s: expected json "
		  "or text; writing json", f);
	return PWRAP_TRACE_JSON;
}

/* ---- the file ---------------------------------------------------------- */

/* Opens dest for appending: a symbolic link only when root or the real
 * user owns it (not one another user planted in a shared directory).  A
 * FIFO without a reader fails (ENXIO) instead of blocking the
 * application; the descriptor returned blocks as usual. */
static int open_dest(const char *dest)
{
	const int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
			  O_NONBLOCK;
	struct stat st;
	int fd = open(dest, flags | O_NOFOLLOW, 0600);

	if (fd < 0 && (errno == ELOOP || errno == EMLINK)) {
		if (lstat(dest, &st) != 0 || !S_ISLNK(st.st_mode)) {
			return -1;
		}
		if (st.st_uid != 0 && st.st_uid != getuid()) {
			errno = EPERM;
			return -1;
		}
		fd = open(dest, flags, 0600);
	}
	if (fd >= 0 && fcntl(fd, F_SETFL, O_APPEND) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static pthread_mutex_t failed_lock = PTHREAD_MUTEX_INITIALIZER;
static char *failed_dest;	/* the destination last logged as failing */

void pwrap_trace_write(const char *dest, const char *buf, size_t len)
{
	int saved = errno;
	bool to_stderr = strcmp(dest, "-") == 0;
	int fd = to_stderr ? STDERR_FILENO : open_dest(dest);
	size_t off = 0;
	int err = 0;

	if (fd < 0) {
		err = errno;
	}
	while (fd >= 0 && off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		off += (size_t)n;
	}
	if (fd >= 0 && !to_stderr) {
		close(fd);
	}
	if (err != 0 && !to_stderr) {
		pthread_mutex_lock(&failed_lock);
		if (failed_dest == NULL || strcmp(failed_dest, dest) != 0) {
			free(failed_dest);
			failed_dest = strdup(dest);
			PWRAP_LOG(PWRAP_LOG_ERROR, "PAM_WRAPPER_TRACE: cannot "
				  "write to %s: %s", dest, strerror(err));
		}
		pthread_mutex_unlock(&failed_lock);
	}
	errno = saved;
}

__attribute__((destructor)) static void out_fini(void)
{
	free(failed_dest);
	failed_dest = NULL;
	free(rel_seen);
	free(rel_abs);
	rel_seen = rel_abs = NULL;
}
