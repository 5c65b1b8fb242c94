/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One row of the differential table (table.h): its directory (passdb,
 * service file "svc"), its PAM transaction through the real libpam with a
 * scripted conversation that records every message, and, for upstream's
 * modules, the same in a child process with a time limit (some rows crash
 * or hang them).  test_module_table.c compares what a row saw.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "table.h"
#include "testutil.h"

#define TB_TIMEOUT TU_HANG_SECONDS

/* ---- strings ------------------------------------------------------------ */

/* FMT with %P, %D, %M, %T and %% replaced (malloc'd); NULL stays NULL. */
static char *tb_expand(const struct tb_ctx *x, const char *fmt)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	if (fmt == NULL) {
		return NULL;
	}
	f = open_memstream(&out, &len);
	assert_non_null(f);
	for (const char *p = fmt; *p != '\0'; p++) {
		if (*p != '%') {
			fputc(*p, f);
			continue;
		}
		switch (*++p) {
		case 'P':
			fputs(x->passdb, f);
			break;
		case 'D':
			fputs(x->dir, f);
			break;
		case 'M':
			fputs(tb_moddir, f);
			break;
		case 'T':
			fputs(tb_testdir, f);
			break;
		case '%':
			fputc('%', f);
			break;
		default:
			fail_msg("row %s: bad %%%c", x->r->id, *p);
		}
	}
	assert_int_equal(fclose(f), 0);
	return out;
}

void tb_append(char **s, const char *tag, const char *text)
{
	char *n = NULL;

	assert_true(asprintf(&n, "%s%s%s%s", *s ? *s : "", *s ? "\n" : "",
			     tag, text ? text : "(null)") > 0);
	free(*s);
	*s = n;
}

/* ---- the conversation ---------------------------------------------------- */

struct tb_conv {
	const struct tb_row *r;
	size_t next;
	struct tb_obs *o;
};

static const char *tb_tag(int style)
{
	switch (style) {
	case PAM_PROMPT_ECHO_OFF:
		return "P:";
	case PAM_PROMPT_ECHO_ON:
		return "p:";
	case PAM_TEXT_INFO:
		return "I:";
	case PAM_ERROR_MSG:
		return "E:";
	}
	return "?:";
}

static int tb_conv_fn(int n, const struct pam_message **msg,
		      struct pam_response **resp, void *appdata)
{
	struct tb_conv *c = appdata;
	struct pam_response *out = calloc((size_t)(n > 0 ? n : 1),
					  sizeof(*out));
	enum tb_ans verdict = TB_END;

	assert_non_null(out);
	c->o->ncalls++;
	for (int i = 0; i < n; i++) {
		int style = msg[i]->msg_style;
		bool prompt = style == PAM_PROMPT_ECHO_OFF ||
			      style == PAM_PROMPT_ECHO_ON;
		const struct tb_tok *t;

		tb_append(&c->o->msgs, tb_tag(style), msg[i]->msg);
		if (resp == NULL) {
			c->o->noresp++;
		}
		if (!prompt) {
			if (verdict == TB_END && c->r->on_msg != TB_END) {
				verdict = c->r->on_msg;
			}
			continue;
		}
		t = c->next < TB_MAX_TOKS ? &c->r->conv[c->next] : NULL;
		c->next++;
		if (t == NULL || t->kind == TB_END || t->kind == TB_FAIL) {
			verdict = TB_FAIL;
		} else if (t->kind == TB_NULLRESP) {
			if (verdict == TB_END) {
				verdict = TB_NULLRESP;
			}
		} else if (t->kind == TB_ANSWER) {
			out[i].resp = strdup(t->s);
			assert_non_null(out[i].resp);
		}
	}
	if (verdict == TB_END && resp != NULL) {
		*resp = out;
		return PAM_SUCCESS;
	}
	for (int i = 0; i < n; i++) {
		free(out[i].resp);
	}
	free(out);
	if (verdict == TB_FAIL) {
		return PAM_CONV_ERR;
	}
	if (resp != NULL) {
		*resp = NULL;
	}
	return PAM_SUCCESS;
}

/* ---- one row ------------------------------------------------------------- */

static int tb_call(pam_handle_t *pamh, const struct tb_step *s)
{
	switch (s->fn) {
	case TB_AUTH:
		return pam_authenticate(pamh, s->flags);
	case TB_SETCRED:
		return pam_setcred(pamh, s->flags);
	case TB_ACCT:
		return pam_acct_mgmt(pamh, s->flags);
	case TB_OPEN:
		return pam_open_session(pamh, s->flags);
	case TB_CLOSE:
		return pam_close_session(pamh, s->flags);
	case TB_CHAUTHTOK:
		return pam_chauthtok(pamh, s->flags);
	case TB_NONE:
		break;
	}
	fail_msg("bad step");
	return -1;
}

static int tb_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The PAM environment, sorted, '\n'-separated; NULL when empty. */
static char *tb_penv(pam_handle_t *pamh)
{
	char **env = pam_getenvlist(pamh);
	char *out = NULL;
	size_t n = 0;

	if (env == NULL) {
		return NULL;
	}
	while (env[n] != NULL) {
		n++;
	}
	qsort(env, n, sizeof(*env), tb_cmp);
	for (size_t i = 0; i < n; i++) {
		tb_append(&out, "", env[i]);
		free(env[i]);
	}
	free(env);
	return out;
}

/* Sets the row's process environment (or, with UNSET, removes it). */
static void tb_setenv(const struct tb_ctx *x, bool unset)
{
	char *env = tb_expand(x, x->r->env);
	char *save = NULL;

	for (char *l = env ? strtok_r(env, "\n", &save) : NULL; l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');

		assert_non_null(eq);
		*eq = '\0';
		if (unset) {
			unsetenv(l);
		} else {
			setenv(l, eq + 1, 1);
		}
	}
	free(env);
}

/* The PAM part of a row: start, steps, end. */
void tb_transact(const struct tb_ctx *x, struct tb_obs *o)
{
	const struct tb_row *r = x->r;
	struct tb_conv c = { r, 0, o };
	struct pam_conv pc = { r->null_conv ? NULL : tb_conv_fn, &c };
	const char *service = r->service ? r->service : "svc";
	const char *user = r->nouser ? NULL : r->user ? r->user : "alice";
	pam_handle_t *pamh = NULL;
	int rv;

	unsetenv("PAM_MATRIX_PASSWD");
	tb_setenv(x, false);
#if defined(PWRAP_HAVE_PAM_START_CONFDIR)
	rv = pam_start_confdir(service, user, &pc, x->dir, &pamh);
#else
	setenv("PAM_WRAPPER_SERVICE_DIR", x->dir, 1);
	rv = pam_start(service, user, &pc, &pamh);
#endif
	assert_int_equal(rv, PAM_SUCCESS);
	for (int i = 0; i < TB_MAX_STEPS && r->steps[i].fn != TB_NONE; i++) {
		rv = tb_call(pamh, &r->steps[i]);
		o->codes[i] = rv;
	}
	o->penv = tb_penv(pamh);
	assert_int_equal(pam_end(pamh, rv), PAM_SUCCESS);
	tb_setenv(x, true);
}

/*
 * The wait for the child of a row whose passdb is a FIFO without a writer:
 * a module that opened it for reading waits for a writer that never comes
 * (in open or in read), which is the hang the row observes.  That it
 * opened the FIFO shows as our non-blocking open for writing succeeding
 * (it fails with ENXIO while no one reads), so the hang is told by what
 * the child did, not by a time limit (TB_TIMEOUT stays the bound).
 * Returns as tu_wait_bounded does, -1 for the hang.
 */
static int tb_wait_fifo(pid_t pid, const char *fifo)
{
	double end = tu_now() + TB_TIMEOUT;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		int fd;

		if (r == pid) {
			return WIFEXITED(st) ? WEXITSTATUS(st)
					     : -2 - WTERMSIG(st);
		}
		fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (r < 0 || fd >= 0 || tu_now() > end) {
			/* killed before our end closes: no EOF reaches it */
			kill(pid, SIGKILL);
			(void)waitpid(pid, &st, 0);
			if (fd >= 0) {
				close(fd);
			}
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

/* Upstream's rows in a child: crashes and hangs are observations. */
void tb_transact_child(const struct tb_ctx *x, struct tb_obs *o)
{
	char *path = NULL;
	size_t len = 0;
	char *data;
	pid_t pid;

	/* next to the row's directory, which may be read-only */
	assert_true(asprintf(&path, "%s.obs", x->dir) > 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f;

		tu_child_signals();
		tb_transact(x, o);
		f = fopen(path, "w");
		if (f == NULL) {
			_exit(3);
		}
		fprintf(f, "%d %d %d %d %d %zu %zu\n", o->codes[0],
			o->codes[1], o->codes[2], o->noresp, o->ncalls,
			o->msgs ? strlen(o->msgs) : 0,
			o->penv ? strlen(o->penv) : 0);
		fputs(o->msgs ? o->msgs : "", f);
		fputs(o->penv ? o->penv : "", f);
		_exit(fclose(f) == 0 ? 0 : 3);
	}
	o->status = x->r->kind == TB_FIFO ? tb_wait_fifo(pid, x->passdb)
					  : tu_wait_bounded(pid, TB_TIMEOUT);
	if (o->status != 0) {
		(void)unlink(path);
		free(path);
		return;
	}
	data = tu_read_file(path, &len);
	{
		size_t ml = 0, pl = 0;
		int off = 0;

		assert_int_equal(sscanf(data, "%d %d %d %d %d %zu %zu\n%n",
					&o->codes[0], &o->codes[1],
					&o->codes[2], &o->noresp, &o->ncalls,
					&ml, &pl, &off),
				 7);
		assert_true((size_t)off + ml + pl == len);
		o->msgs = ml ? strndup(data + off, ml) : NULL;
		o->penv = pl ? strndup(data + off + ml, pl) : NULL;
	}
	free(data);
	unlink(path);
	free(path);
}

size_t tb_dblen(const struct tb_row *r)
{
	return r->passdb_len ? r->passdb_len : strlen(r->passdb);
}

static void tb_make_passdb(const struct tb_ctx *x)
{
	const struct tb_row *r = x->r;
	mode_t mode = r->mode ? r->mode : 0644;

	switch (r->kind) {
	case TB_REG:
	case TB_NOREAD:
	case TB_RODIR:
		if (r->passdb != NULL) {
			tu_write_file(x->passdb, r->passdb, tb_dblen(r),
				      r->kind == TB_NOREAD ? 0 : mode);
		}
		break;
	case TB_SYMLINK: {
		char *real = tu_path(x->dir, "real");

		tu_write_file(real, r->passdb, strlen(r->passdb), mode);
		assert_int_equal(symlink("real", x->passdb), 0);
		free(real);
		break;
	}
	case TB_FIFO:
		assert_int_equal(mkfifo(x->passdb, 0644), 0);
		break;
	case TB_DIR:
		assert_int_equal(mkdir(x->passdb, 0755), 0);
		break;
	}
}

/* The service file: PRE, the module in the four groups, POST. */
static void tb_make_service(const struct tb_ctx *x)
{
	static const char *const groups[] = { "auth", "account", "password",
					      "session" };
	const struct tb_row *r = x->r;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	char *pre = tb_expand(x, r->pre);
	char *post = tb_expand(x, r->post);
	char *opts = tb_expand(x, r->options);

	assert_non_null(f);
	fputs(pre ? pre : "", f);
	for (size_t g = 0; r->module != NULL && g < 4; g++) {
		fprintf(f, "%s %s %s/%s.so %s\n", groups[g],
			r->control ? r->control : "required", tb_moddir,
			r->module, opts ? opts : "");
	}
	fputs(post ? post : "", f);
	assert_int_equal(fclose(f), 0);
#if defined(PWRAP_OPENPAM)
	/* OpenPAM looks a service file up by the service name as given
	 * (acct-upper-start's "SVC"); Linux-PAM by the name lowercased. */
	tu_write_text(x->dir, r->service ? r->service : "svc", text);
#else
	tu_write_text(x->dir, "svc", text);
#endif
	free(text);
	free(pre);
	free(post);
	free(opts);
}

/* The row's directory: passdb, service file, %D/extra, and the mode. */
void tb_prepare(const struct tb_ctx *x)
{
	tb_make_passdb(x);
	tb_make_service(x);
	if (x->r->extra != NULL) {
		tu_write_text(x->dir, "extra", x->r->extra);
	}
	if (x->r->kind == TB_RODIR) {
		assert_int_equal(chmod(x->dir, 0555), 0);
	}
}
