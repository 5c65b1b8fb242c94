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

/* ---- names (of codes and functions: pwrap_names.h) -------------------- */

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

static void code(struct pwrap_buf *b, enum pwrap_trace_fmt fmt, int rc)
{
	const char *name = pwrap_code_name(rc);

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
	pwrap_buf_text(b, r->line->control);	/* OpenPAM: the flag */
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
	pwrap_buf_json(b, who->service ? who->service : "");
}

static void who_text(struct pwrap_buf *b, const struct pwrap_trace_who *who)
{
	pwrap_buf_fmt(b, "pam_wrapper[%ld] tx %lu ", who->pid, who->tx);
	pwrap_buf_text(b, who->service ? who->service : "");
	pwrap_buf_str(b, ": ");
}

void pwrap_trace_format_start(struct pwrap_buf *b, enum pwrap_trace_fmt fmt,
			      const struct pwrap_trace_who *who,
			      const char *dir, int rc)
{
	if (fmt == PWRAP_TRACE_JSON) {
		who_json(b, "start", who);
		pwrap_buf_str(b, ",\"dir\":");
		pwrap_buf_json(b, dir ? dir : "");
		pwrap_buf_str(b, ",\"rc\":");
		code(b, fmt, rc);
		pwrap_buf_str(b, "}\n");
		return;
	}
	who_text(b, who);
	pwrap_buf_str(b, "pam_start -> ");
	code(b, fmt, rc);
	pwrap_buf_str(b, " (");
	pwrap_buf_text(b, dir ? dir : "");
	pwrap_buf_str(b, ")\n");
}

static void format_json(struct pwrap_buf *b, const struct pwrap_trace_who *who,
			const struct pwrap_trace_rec *r)
{
	const struct pwrap_trace_line *l = r->line;

	who_json(b, l ? "module" : "result", who);
	pwrap_buf_fmt(b, ",\"call\":\"%s\"", pwrap_sm_call(r->sm));
	if (l == NULL) {
		pwrap_buf_str(b, ",\"flags\":[");
		flag_names(b, r->sm, r->flags, json_flag);
		pwrap_buf_str(b, "],\"rc\":");
		code(b, PWRAP_TRACE_JSON, r->rc);
		pwrap_buf_fmt(b, ",\"calls\":%u}\n", r->seq);
		return;
	}
	pwrap_buf_fmt(b, ",\"seq\":%u,\"type\":\"%s\",\"function\":\"%s\","
		       "\"flags\":[", r->seq, pwrap_group_name(pwrap_sm_group(r->sm)),
		       pwrap_sm_name(r->sm));
	flag_names(b, r->sm, r->flags, json_flag);
	pwrap_buf_str(b, "],\"where\":");
	pwrap_buf_json(b, l->where);
	pwrap_buf_str(b, ",\"control\":");
	pwrap_buf_json(b, l->control);
	pwrap_buf_str(b, ",\"module\":");
	pwrap_buf_json(b, l->module);
	pwrap_buf_str(b, ",\"path\":");
	pwrap_buf_json(b, l->path);
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
		pwrap_buf_json(b, r->error);
	}
	pwrap_buf_str(b, "}\n");
}

static void format_text(struct pwrap_buf *b, const struct pwrap_trace_who *who,
			const struct pwrap_trace_rec *r)
{
	const struct pwrap_trace_line *l = r->line;
	size_t mark;

	who_text(b, who);
	pwrap_buf_str(b, pwrap_sm_call(r->sm));
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
	pwrap_buf_text(b, l->where);
	pwrap_buf_fmt(b, " %s%s ", pwrap_group_name(pwrap_sm_group(r->sm)),
		       l->silent ? "(-)" : "");
	pwrap_buf_text(b, l->control);
	pwrap_buf_str(b, " ");
	pwrap_buf_text(b, l->module);
	if (strcmp(l->module, l->path) != 0) {
		pwrap_buf_str(b, " (");
		pwrap_buf_text(b, l->path);
		pwrap_buf_str(b, ")");
	}
	pwrap_buf_str(b, " -> ");
	code(b, PWRAP_TRACE_TEXT, r->rc);
	pwrap_buf_str(b, ": ");
	action(b, r);
	if (r->error != NULL) {
		pwrap_buf_str(b, " (not called: ");
		pwrap_buf_text(b, r->error);
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

/*
 * Where records may go.  The trace is often written by root into a shared
 * directory (/tmp), where other users can plant names: a FIFO whose reader
 * sees every record, a file of theirs, a link to one of root's files or
 * directories.  So the path is opened one component at a time, relative to
 * the directory opened before (nothing can be swapped behind us), and
 *   - a symbolic link, anywhere on the way, is followed only when root or
 *     the process's user owns it;
 *   - what is opened must be owned by root or the process's user (real or
 *     effective uid), and a regular file must have no other name (a hard
 *     link another user made to one of root's files, where links are not
 *     protected);
 *   - it is opened without blocking, and stays so: records a FIFO's reader
 *     has no room for (or a stopped terminal) are dropped, never waited
 *     for;
 *   - a regular file is never written past the file size limit (ulimit
 *     -f), whose signal would end the program.
 * A refusal is said once per destination, as a failed write is.
 */
#if defined(O_PATH)
#define DIR_OPEN (O_PATH | O_DIRECTORY | O_CLOEXEC)
#elif defined(O_SEARCH)
#define DIR_OPEN (O_SEARCH | O_DIRECTORY | O_CLOEXEC)
#else
#define DIR_OPEN (O_RDONLY | O_DIRECTORY | O_CLOEXEC)
#endif
#define FILE_OPEN (O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | \
		   O_NOCTTY)

/* Opens name in dfd (flags; O_NOFOLLOW is added): a symbolic link there
 * only when its owner is root or ours.  -1 with why set on refusal. */
static int open_at(int dfd, const char *name, int flags, char *why, size_t n)
{
	struct stat st;
	int fd = openat(dfd, name, flags | O_NOFOLLOW, 0600);

	if (fd >= 0 || (errno != ELOOP && errno != ENOTDIR &&
			errno != EMLINK)) {
		return fd;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISLNK(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	if (!pwrap_owner_ours(st.st_uid)) {
		snprintf(why, n, "'%s' on the way is a link of uid %lu, not "
			 "of this process's user or root", name,
			 (unsigned long)st.st_uid);
		errno = EPERM;
		return -1;
	}
	return openat(dfd, name, flags, 0600);
}

/* Opens the absolute path dest for appending records (see above); -1 with
 * errno set, and why when it was refused. */
static int open_dest(const char *dest, char *why, size_t n)
{
	char *copy = strdup(dest);
	char *p, *next;
	struct stat st;
	int dfd, fd = -1;

	if (copy == NULL) {
		return -1;
	}
	dfd = open("/", DIR_OPEN);
	for (p = copy; dfd >= 0; p = next) {
		int sub;

		while (*p == '/') {
			p++;
		}
		next = strchr(p, '/');
		if (next == NULL) {
			break;
		}
		*next++ = '\0';
		sub = open_at(dfd, p, DIR_OPEN, why, n);
		close(dfd);
		dfd = sub;
	}
	if (dfd >= 0 && *p != '\0') {
		fd = open_at(dfd, p, FILE_OPEN, why, n);
	} else if (dfd >= 0) {
		errno = EISDIR;
	}
	if (fd >= 0 && fstat(fd, &st) != 0) {
		close(fd);
		fd = -1;
	} else if (fd >= 0 && !pwrap_owner_ours(st.st_uid)) {
		snprintf(why, n, "owned by uid %lu, not by this process's user "
			 "or root", (unsigned long)st.st_uid);
		close(fd);
		fd = -1;
		errno = EPERM;
	} else if (fd >= 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
		snprintf(why, n, "the file has %lu names (hard links), of "
			 "which another user may have made one",
			 (unsigned long)st.st_nlink);
		close(fd);
		fd = -1;
		errno = EPERM;
	}
	if (dfd >= 0) {
		close(dfd);
	}
	free(copy);
	return fd;
}

/* Writes buf (whole lines) to fd without waiting: a regular file all at
 * once (O_APPEND: one record set stays together), anything else a line at
 * a time (a FIFO takes a line of at most PIPE_BUF bytes whole or not at
 * all).  0, or an errno (EAGAIN: the reader has no room; EFBIG: the file
 * size limit). */
static int write_records(int fd, const char *buf, size_t len)
{
	struct stat st;
	bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	size_t off = 0;

	if (regular && !pwrap_fsize_allows(st.st_size, len)) {
		return EFBIG;
	}
	while (off < len) {
		const char *nl = regular ? NULL : memchr(buf + off, '\n',
							 len - off);
		size_t want = nl != NULL ? (size_t)(nl - buf) + 1 - off
					 : len - off;
		ssize_t w = write(fd, buf + off, want);

		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return w < 0 ? errno : EIO;
		}
		off += (size_t)w;
	}
	return 0;
}

static pthread_mutex_t failed_lock = PTHREAD_MUTEX_INITIALIZER;
static char *failed_dest;	/* the destination last logged as failing */

void pwrap_trace_write(const char *dest, const char *buf, size_t len)
{
	int saved = errno;
	bool to_stderr = strcmp(dest, "-") == 0;
	char why[512] = "";
	int fd = to_stderr ? STDERR_FILENO
			   : open_dest(dest, why, sizeof(why));
	int err = fd < 0 ? errno : write_records(fd, buf, len);

	if (fd >= 0 && !to_stderr) {
		close(fd);
	}
	if (err != 0 && !to_stderr) {
		pthread_mutex_lock(&failed_lock);
		if (failed_dest == NULL || strcmp(failed_dest, dest) != 0) {
			free(failed_dest);
			failed_dest = strdup(dest);
			PWRAP_LOG(PWRAP_LOG_ERROR, "PAM_WRAPPER_TRACE: cannot "
				  "write to %s: %s%s", dest,
				  why[0] != '\0' ? why
				  : err == EAGAIN ? "its reader does not read "
				    "(records are dropped, never waited for)"
				  : err == EFBIG ? "the file size limit (ulimit "
				    "-f) is reached"
				  : strerror(err),
				  why[0] != '\0' || err == EAGAIN ? "" :
				  "; records are dropped");
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
