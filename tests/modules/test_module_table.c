/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs the differential table (table.h, rows in table_*.c) against the
 * modules in $MT_TABLE_MODDIR: ours (ctest test_module_table) or Debian's
 * libpam-wrapper 1.1.4 (test_module_table_upstream, loaded by absolute
 * path, skipped with the reason when they are not installed).
 *
 * Each row gets a fresh directory with its passdb and a service file
 * "svc", runs its PAM calls through the real libpam with a scripted
 * conversation that records every message, and compares the codes, the
 * messages, the PAM environment after the last call and the passdb after
 * it (content byte for byte, mode, still a symlink).
 *
 * Ours run in this process, so valgrind sees our modules.  Upstream's run
 * each row in a child with a time limit, because some rows crash or hang
 * them; there a row marked OURS must differ from what it expects (a crash
 * or a hang counts), which proves the mark.  MT_TABLE_VERBOSE=1 prints
 * what each row saw.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "table.h"
#include "testutil.h"

#define TB_TIMEOUT 5.0

static const char *tb_moddir;  /* modules under test */
static const char *tb_testdir; /* test-only modules */
static bool tb_upstream;
static bool tb_verbose;

/* What a row saw. */
struct tb_obs {
	int codes[TB_MAX_STEPS];
	char *msgs;
	char *penv;
	int noresp; /* messages sent without a response pointer */
	int ncalls; /* conversation calls */
	int status; /* 0, -1 hang, -2 - N killed by signal N */
};

struct tb_ctx {
	const struct tb_row *r;
	char *dir;
	char *passdb;
};

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

static void tb_append(char **s, const char *tag, const char *text)
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
static void tb_transact(const struct tb_ctx *x, struct tb_obs *o)
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

/* Upstream's rows in a child: crashes and hangs are observations. */
static void tb_transact_child(const struct tb_ctx *x, struct tb_obs *o)
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
	o->status = tu_wait_bounded(pid, TB_TIMEOUT);
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

static size_t tb_dblen(const struct tb_row *r)
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
	tu_write_text(x->dir, "svc", text);
	free(text);
	free(pre);
	free(post);
	free(opts);
}

static bool tb_streq(const char *a, const char *b)
{
	return (a == NULL || *a == '\0') ? (b == NULL || *b == '\0')
					 : (b != NULL && strcmp(a, b) == 0);
}

/* Compares; appends what differs to *WHY.  True when all matches. */
static bool tb_compare(const struct tb_ctx *x, const struct tb_obs *o,
		       char **why)
{
	const struct tb_row *r = x->r;
	char buf[256];
	bool ok = true;

	if (o->status != 0) {
		snprintf(buf, sizeof(buf), "%s",
			 o->status == -1 ? "hung" : "crashed");
		tb_append(why, "", buf);
		return false;
	}
	for (int i = 0; i < TB_MAX_STEPS && r->steps[i].fn != TB_NONE; i++) {
		if (o->codes[i] != r->codes[i]) {
			snprintf(buf, sizeof(buf),
				 "step %d returned %d, expected %d", i + 1,
				 o->codes[i], r->codes[i]);
			tb_append(why, "", buf);
			ok = false;
		}
	}
	if ((o->noresp > 0) != (tb_upstream && r->up_noresp)) {
		snprintf(buf, sizeof(buf),
			 "%d message(s) without a response pointer",
			 o->noresp);
		tb_append(why, "", buf);
		ok = false;
	}
	if (!tb_streq(r->msgs, o->msgs)) {
		tb_append(why, "messages: ", o->msgs ? o->msgs : "(none)");
		ok = false;
	}
	if (!tb_streq(r->penv, o->penv)) {
		tb_append(why, "PAM environment: ",
			  o->penv ? o->penv : "(empty)");
		ok = false;
	}
	if (r->gone) {
		struct stat st;

		if (lstat(x->passdb, &st) == 0) {
			tb_append(why, "", "the passdb is still there");
			ok = false;
		}
	} else if (r->passdb != NULL &&
		   (r->kind == TB_REG || r->kind == TB_SYMLINK ||
		    r->kind == TB_RODIR)) {
		const char *want = r->after ? r->after : r->passdb;
		size_t wlen = r->after ? strlen(r->after) : tb_dblen(r);
		size_t len = 0;
		char *now = tu_read_file_opt(x->passdb, &len);
		struct stat st;
		mode_t mode = r->mode_after ? r->mode_after
			      : r->mode	    ? r->mode
					    : 0644;

		if (now == NULL || len != wlen || memcmp(now, want, len) != 0) {
			tb_append(why, "passdb after: ",
				  now ? now : "(missing)");
			ok = false;
		}
		free(now);
		if (stat(x->passdb, &st) == 0 && (st.st_mode & 07777) != mode) {
			snprintf(buf, sizeof(buf), "passdb mode %04o, not %04o",
				 (unsigned)(st.st_mode & 07777),
				 (unsigned)mode);
			tb_append(why, "", buf);
			ok = false;
		}
		if (r->kind == TB_SYMLINK &&
		    (lstat(x->passdb, &st) != 0 || !S_ISLNK(st.st_mode))) {
			tb_append(why, "", "the symlink was replaced");
			ok = false;
		}
	}
	return ok;
}

/* Runs ROW; returns 0 when it came out as expected, 1 when not, 2 when
 * skipped. */
static int tb_run_row(const struct tb_row *r)
{
	struct tb_ctx x = { r, NULL, NULL };
	struct tb_obs o;
	char *why = NULL;
	bool same;
	int ret;

	memset(&o, 0, sizeof(o));
	if ((r->kind == TB_NOREAD || r->kind == TB_RODIR) && geteuid() == 0) {
		printf("  skip %s: root %s (the .nobody twin runs it)\n",
		       r->id, r->kind == TB_NOREAD ? "reads a mode-0000 file"
						   : "writes a mode-0555 "
						     "directory");
		return 2;
	}
	x.dir = tu_mkdtemp("pwrap-table");
	x.passdb = tu_path(x.dir, "passdb");
	tb_make_passdb(&x);
	tb_make_service(&x);
	if (r->extra != NULL) {
		tu_write_text(x.dir, "extra", r->extra);
	}
	if (r->kind == TB_RODIR) {
		assert_int_equal(chmod(x.dir, 0555), 0);
	}
	if (tb_upstream) {
		tb_transact_child(&x, &o);
	} else {
		tb_transact(&x, &o);
	}
	same = tb_compare(&x, &o, &why);
	if (tb_verbose) {
		printf("row %s: codes %d %d %d, noresp %d, calls %d, status "
		       "%d\n  msgs: %s\n  penv: %s\n",
		       r->id, o.codes[0], o.codes[1], o.codes[2], o.noresp,
		       o.ncalls, o.status, o.msgs ? o.msgs : "",
		       o.penv ? o.penv : "");
	}
	if (tb_upstream && r->ours != NULL) {
		/* upstream must differ where the row says it does */
		ret = same ? 1 : 0;
		if (same) {
			printf("FAIL %s: marked ours-only (%s), but upstream "
			       "agrees\n",
			       r->id, r->ours);
		} else if (tb_verbose) {
			printf("  %s: upstream differs as recorded (%s): %s\n",
			       r->id, r->ours, why);
		}
	} else {
		ret = same ? 0 : 1;
		if (!same) {
			printf("FAIL %s [%s]:\n%s\n", r->id, r->src, why);
		}
	}
	free(why);
	free(o.msgs);
	free(o.penv);
	/* mode 0000 files and directories go with the tree */
	(void)chmod(x.dir, 0700);
	(void)chmod(x.passdb, 0600);
	tu_rmtree(x.dir);
	free(x.dir);
	free(x.passdb);
	return ret;
}

static void tb_run_rows(const struct tb_row *rows, size_t n)
{
	size_t bad = 0, skipped = 0, ours = 0;

	for (size_t i = 0; i < n; i++) {
		int rv = tb_run_row(&rows[i]);

		bad += rv == 1;
		skipped += rv == 2;
		ours += rows[i].ours != NULL || rows[i].up_noresp;
		assert_non_null(rows[i].src);
	}
	printf("%zu rows: %zu as expected, %zu skipped, %zu failed (%zu "
	       "marked ours-only)\n",
	       n, n - bad - skipped, skipped, bad, ours);
	if (bad > 0) {
		fail_msg("%zu of %zu rows differ", bad, n);
	}
}

static void matrix_rows(void **state)
{
	(void)state;
	tb_run_rows(tb_matrix_rows, tb_matrix_nrows);
}

static void chauthtok_rows(void **state)
{
	(void)state;
	tb_run_rows(tb_chtok_rows, tb_chtok_nrows);
}

static void other_rows(void **state)
{
	(void)state;
	tb_run_rows(tb_other_rows, tb_other_nrows);
}

int main(void)
{
	static const char *const mods[] = { "pam_matrix", "pam_chatty",
					    "pam_set_items", "pam_get_items" };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matrix_rows),
		cmocka_unit_test(chauthtok_rows),
		cmocka_unit_test(other_rows),
	};

	tb_moddir = getenv("MT_TABLE_MODDIR");
	tb_testdir = getenv("MT_TABLE_TESTDIR");
	tb_upstream = getenv("MT_TABLE_UPSTREAM") != NULL;
	tb_verbose = getenv("MT_TABLE_VERBOSE") != NULL;
	if (tb_moddir == NULL || tb_testdir == NULL) {
		fprintf(stderr, "MT_TABLE_MODDIR and MT_TABLE_TESTDIR must be "
				"set (run through ctest)\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s.so", tb_moddir, mods[i]);
		if (access(path, R_OK) != 0) {
			printf("SKIPPED: %s: %s (%s)\n", path, strerror(errno),
			       tb_upstream ? "Debian's libpam-wrapper 1.1.4 "
					     "is not installed"
					   : "not built");
			return 77;
		}
	}
	/* The table drives libpam itself: no libpamtest (ours or Debian's)
	 * may be in the process to stand between it and the modules. */
	if (dlsym(RTLD_DEFAULT, "run_pamtest") != NULL) {
		fprintf(stderr, "a libpamtest is loaded: the table must not "
				"use one\n");
		return 1;
	}
	printf("modules under test: %s (%s)\n", tb_moddir,
	       tb_upstream ? "upstream" : "ours");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
