/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module trace (PAM_WRAPPER_TRACE), in process: this binary runs
 * preloaded with the wrapper (see CMakeLists.txt), writes stacks into a
 * fresh service directory per test and drives the real libpam with our
 * modules and Linux-PAM's stock ones.  Each test asserts the records (where,
 * module, return code, action, final result: trace_records.c checks their
 * shape and that every module record names the result written after it)
 * and that the same transactions without the trace give the same results.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <security/pam_appl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "testutil.h"
#include "trace_records.h"

#define PASSWORD "Tr4ce-s3cret"

/* What a "required" line's code did: Linux-PAM's action, OpenPAM's flag. */
#if defined(PWRAP_OPENPAM)
#define REQ_OK "required"
#define REQ_BAD "required"
#else
#define REQ_OK "ok"
#define REQ_BAD "bad"
#endif

/* The test's directory (services and passdb); the trace file in it. */
static char *dir;
static char *trace;

static int setup(void **state)
{
	(void)state;
	dir = tu_mkdtemp("pwrap-trace");
	trace = tu_path(dir, "trace.json");
	setenv("PAM_WRAPPER", "1", 1);
	setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1);
	unsetenv("PAM_WRAPPER_TRACE");
	unsetenv("PAM_WRAPPER_TRACE_FORMAT");
	tu_write_text(dir, "passdb", "alice:" PASSWORD ":svc\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("PAM_WRAPPER_TRACE");
	unsetenv("PAM_WRAPPER_TRACE_FORMAT");
	tu_rmtree(dir);
	free(dir);
	free(trace);
	return 0;
}

/* Writes service file name: fmt with every "%1$s" the test's directory. */
static void svc(const char *name, const char *fmt)
{
	char *text = NULL;
	const char *p;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	assert_non_null(f);
	for (p = fmt; *p != '\0'; p++) {
		if (strncmp(p, "@D@", 3) == 0) {
			fputs(dir, f);
			p += 2;
		} else {
			fputc(*p, f);
		}
	}
	fclose(f);
	tu_write_text(dir, name, text);
	free(text);
}

/*
 * One transaction: pam_start(service, "alice"), then each op of ops
 * (a authenticate, c setcred, m acct_mgmt, o open_session, x close_session,
 * p chauthtok), then pam_end.  Returns "start=N a=N ..." (caller frees).
 */
static char *run(const char *service, const char *password, const char *ops)
{
	struct pam_conv c = { tu_conv_password, (void *)password };
	pam_handle_t *ph = NULL;
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	int rc;

	assert_non_null(f);
	rc = pam_start(service, "alice", &c, &ph);
	fprintf(f, "start=%d", rc);
	for (const char *o = ops; rc == PAM_SUCCESS && *o != '\0'; o++) {
		int r = -1;

		switch (*o) {
		case 'a': r = pam_authenticate(ph, 0); break;
		case 'c': r = pam_setcred(ph, PAM_ESTABLISH_CRED); break;
		case 'm': r = pam_acct_mgmt(ph, 0); break;
		case 'o': r = pam_open_session(ph, 0); break;
		case 'x': r = pam_close_session(ph, 0); break;
		case 'p': r = pam_chauthtok(ph, 0); break;
		default: fail_msg("bad op %c", *o);
		}
		fprintf(f, " %c=%d", *o, r);
	}
	if (rc == PAM_SUCCESS) {
		fprintf(f, " end=%d", pam_end(ph, PAM_SUCCESS));
	}
	fclose(f);
	return out;
}

/* The transaction traced; its records in short (tr_summary), after
 * checking that it gives what it gives untraced.  The trace file is
 * removed afterwards. */
static char *traced(const char *service, const char *password,
		    const char *ops)
{
	char *plain, *with;
	struct trecs t;
	char *s;

	unsetenv("PAM_WRAPPER_TRACE");
	plain = run(service, password, ops);
	assert_int_not_equal(access(trace, F_OK), 0);
	setenv("PAM_WRAPPER_TRACE", trace, 1);
	with = run(service, password, ops);
	unsetenv("PAM_WRAPPER_TRACE");
	assert_string_equal(plain, with);
	t = tr_read(trace);
	s = tr_summary(&t, dir);
	tr_free(&t);
	unlink(trace);
	free(plain);
	free(with);
	return s;
}

/* The first record of kind with member key = value (caller frees). */
static char *record(const char *kind, const char *key, const char *value)
{
	struct trecs t = tr_read(trace);
	char *r = NULL;

	for (size_t i = 0; i < t.n && r == NULL; i++) {
		if (tr_is(t.rec[i], "kind", kind) &&
		    (key == NULL || tr_is(t.rec[i], key, value))) {
			r = strdup(t.rec[i]);
		}
	}
	tr_free(&t);
	assert_non_null(r);
	return r;
}

static void assert_member(const char *rec, const char *key, const char *want)
{
	char *v = tr_get(rec, key);

	if (v == NULL || strcmp(v, want) != 0) {
		fail_msg("%s is %s, not %s, in %s", key, v ? v : "(absent)",
			 want, rec);
	}
	free(v);
}

static char *ours(const char *module)
{
	return tu_path(getenv("PWRAP_MODULE_DIR"), module);
}

#if !defined(PWRAP_OPENPAM)
static char *systems(const char *module)
{
	return tu_path(getenv("PWRAP_SYSTEM_MODULE_DIR"), module);
}
#endif

/* ---- stacks ------------------------------------------------------------ */

#if !defined(PWRAP_OPENPAM)
/* Includes, substacks, a jump, requisite, "-auth" of a missing module. */
static void test_stack(void **state)
{
	char *s, *rec, *p;

	(void)state;
	svc("svc", "auth [success=1 default=ignore] pam_matrix.so "
		   "passdb=@D@/passdb\n"
		   "auth requisite pam_deny.so\n"
		   "# a comment, then a continued line\n"
		   "auth substack \\\n  sub-auth\n"
		   "-auth optional pam_pwrap_nonexistent.so\n"
		   "account include common-account\n");
	svc("sub-auth", "auth sufficient pam_permit.so\n"
			"auth required pam_deny.so\n");
	svc("common-account", "account required pam_permit.so\n"
			      "account sufficient pam_matrix.so "
			      "passdb=@D@/passdb\n"
			      "account required pam_deny.so\n");
	s = traced("svc", PASSWORD, "am");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_matrix.so PAM_SUCCESS jump 1; "
		"sub-auth:1 pam_permit.so PAM_SUCCESS done; "
		"svc:6 pam_pwrap_nonexistent.so PAM_MODULE_UNKNOWN ignore "
		"silent error; "
		"= pam_authenticate PAM_SUCCESS; "
		"common-account:1 pam_permit.so PAM_SUCCESS ok; "
		"common-account:2 pam_matrix.so PAM_SUCCESS done; "
		"= pam_acct_mgmt PAM_SUCCESS");
	free(s);

	setenv("PAM_WRAPPER_TRACE", trace, 1);
	free(run("svc", PASSWORD, "a"));
	unsetenv("PAM_WRAPPER_TRACE");
	rec = record("module", "seq", "1");
	assert_member(rec, "type", "auth");
	assert_member(rec, "function", "pam_sm_authenticate");
	assert_member(rec, "call", "pam_authenticate");
	assert_member(rec, "flags", "[]");
	assert_member(rec, "control", "[success=1 default=ignore]");
	assert_member(rec, "service", "svc");
	p = ours("pam_matrix.so");
	assert_member(rec, "path", p);
	free(p);
	free(rec);
	rec = record("module", "seq", "2");
	p = tu_path(dir, "sub-auth:1");
	assert_member(rec, "where", p);
	free(p);
	p = systems("pam_permit.so");
	assert_member(rec, "path", p);
	free(p);
	free(rec);
	unlink(trace);

	s = traced("svc", "wrong", "am");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_matrix.so PAM_AUTH_ERR ignore; "
		"svc:2 pam_deny.so PAM_AUTH_ERR die; "
		"= pam_authenticate PAM_AUTH_ERR; "
		"common-account:1 pam_permit.so PAM_SUCCESS ok; "
		"common-account:2 pam_matrix.so PAM_SUCCESS done; "
		"= pam_acct_mgmt PAM_SUCCESS");
	free(s);
}

/* Modules that cannot be called: not loadable, a function missing. */
static void test_failures(void **state)
{
	char *s, *rec, *want;

	(void)state;
	tu_write_text(dir, "pam_broken.so", "not a shared object\n");
	svc("svc", "auth optional pam_permit.so\n"
		   "auth required @D@/pam_broken.so\n"
		   "session optional pam_permit.so\n"
		   "session required pam_nologin.so\n");
	tu_stderr_begin();
	s = traced("svc", PASSWORD, "ao");
	free(tu_stderr_end());
	assert_true(asprintf(&want,
		"start PAM_SUCCESS; "
		"svc:1 pam_permit.so PAM_SUCCESS ok; "
		"svc:2 %s/pam_broken.so PAM_MODULE_UNKNOWN bad error; "
		"= pam_authenticate PAM_MODULE_UNKNOWN; "
		"svc:3 pam_permit.so PAM_SUCCESS ok; "
		"svc:4 pam_nologin.so PAM_MODULE_UNKNOWN bad error; "
		"= pam_open_session PAM_MODULE_UNKNOWN", dir) > 0);
	assert_string_equal(s, want);
	free(want);
	free(s);
	setenv("PAM_WRAPPER_TRACE", trace, 1);
	free(run("svc", PASSWORD, "o"));
	unsetenv("PAM_WRAPPER_TRACE");
	rec = record("module", "module", "pam_nologin.so");
	assert_member(rec, "error", "no pam_sm_open_session()");
	assert_null(tr_get(rec, "silent"));
	free(rec);
}

/* pam_setcred takes its actions from what the same lines returned in
 * pam_authenticate (libpam's frozen chain); without one, from its own. */
static void test_setcred_frozen_chain(void **state)
{
	char *s;

	(void)state;
	svc("svc", "auth [success=ok default=die] pam_debug.so auth=success "
		   "cred=cred_err\n"
		   "auth required pam_permit.so\n");
	s = traced("svc", PASSWORD, "ac");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_debug.so PAM_SUCCESS ok; "
		"svc:2 pam_permit.so PAM_SUCCESS ok; "
		"= pam_authenticate PAM_SUCCESS; "
		"svc:1 pam_debug.so PAM_CRED_ERR ok; "
		"svc:2 pam_permit.so PAM_SUCCESS ok; "
		"= pam_setcred PAM_CRED_ERR");
	free(s);
	s = traced("svc", PASSWORD, "c");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_debug.so PAM_CRED_ERR die; "
		"= pam_setcred PAM_CRED_ERR");
	free(s);
}

/* Every keyword and a few bracketed controls. */
static void test_actions(void **state)
{
	char *s;

	(void)state;
	svc("svc", "auth optional pam_debug.so auth=auth_err\n"
		   "auth [auth_err=reset default=bad] pam_debug.so "
		   "auth=auth_err\n"
		   "auth [ignore=ignore success=ok default=bad] pam_debug.so "
		   "auth=ignore\n"
		   "auth [successful=ok] pam_permit.so\n"
		   "auth required pam_permit.so\n"
		   "auth Sufficient pam_debug.so auth=new_authtok_reqd\n");
	s = traced("svc", PASSWORD, "a");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_debug.so PAM_AUTH_ERR ignore; "
		"svc:2 pam_debug.so PAM_AUTH_ERR reset; "
		"svc:3 pam_debug.so PAM_IGNORE ignore; "
		"svc:4 pam_permit.so PAM_SUCCESS bad; "
		"svc:5 pam_permit.so PAM_SUCCESS ok; "
		"svc:6 pam_debug.so PAM_NEW_AUTHTOK_REQD done; "
		"= pam_authenticate PAM_PERM_DENIED");
	free(s);
}
#else
/* OpenPAM: its control flags, "include" of another service. */
static void test_stack(void **state)
{
	char *s;

	(void)state;
	svc("svc", "auth sufficient pam_matrix.so passdb=@D@/passdb\n"
		   "auth include sub\n"
		   "account required pam_matrix.so passdb=@D@/passdb\n");
	svc("sub", "auth required pam_deny.so\n");
	s = traced("svc", PASSWORD, "am");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_matrix.so PAM_SUCCESS sufficient; "
		"= pam_authenticate PAM_SUCCESS; "
		"svc:3 pam_matrix.so PAM_SUCCESS required; "
		"= pam_acct_mgmt PAM_SUCCESS");
	free(s);
	s = traced("svc", "wrong", "a");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_matrix.so PAM_AUTH_ERR sufficient; "
		"sub:1 pam_deny.so PAM_AUTH_ERR required; "
		"= pam_authenticate PAM_AUTH_ERR");
	free(s);
}

/* OpenPAM refuses pam_start when a module cannot be loaded or found: so
 * does the trace, which loads the modules itself. */
static void test_failures(void **state)
{
	char *s;

	(void)state;
	tu_write_text(dir, "pam_broken.so", "not a shared object\n");
	svc("svc", "auth required pam_permit.so\n"
		   "account required @D@/pam_broken.so\n");
	svc("other2", "auth required pam_pwrap_nonexistent.so\n");
	tu_stderr_begin();
	s = traced("svc", PASSWORD, "a");
	free(tu_stderr_end());
	assert_string_equal(s, "start PAM_SYSTEM_ERR");
	free(s);
	tu_stderr_begin();
	s = traced("other2", PASSWORD, "a");
	free(tu_stderr_end());
	assert_string_equal(s, "start PAM_SYSTEM_ERR");
	free(s);
}

/* OpenPAM reads "other" only for the facilities the service has no line
 * for: the trace loads no other module of it (one it cannot load would
 * fail pam_start, which OpenPAM does not). */
static void test_other_facilities(void **state)
{
	char *s;

	(void)state;
	tu_write_text(dir, "pam_broken.so", "not a shared object\n");
	svc("svc", "auth required pam_matrix.so passdb=@D@/passdb\n"
		   "account required pam_matrix.so passdb=@D@/passdb\n");
	svc("other", "auth required @D@/pam_broken.so\n"
		     "session required pam_matrix.so passdb=@D@/passdb\n"
		     "account required @D@/pam_broken.so\n");
	s = traced("svc", PASSWORD, "ao");
	assert_string_equal(s,
		"start PAM_SUCCESS; "
		"svc:1 pam_matrix.so PAM_SUCCESS required; "
		"= pam_authenticate PAM_SUCCESS; "
		"other:2 pam_matrix.so PAM_SUCCESS required; "
		"= pam_open_session PAM_SUCCESS");
	free(s);
}
#endif

/* pam_chauthtok: both passes, with their flags; no password anywhere. */
static void test_chauthtok(void **state)
{
	char *s, *all, *rec;

	(void)state;
	svc("svc", "password required pam_matrix.so passdb=@D@/passdb\n");
	setenv("PAM_WRAPPER_TRACE", trace, 1);
	s = run("svc", PASSWORD, "p");
	unsetenv("PAM_WRAPPER_TRACE");
	assert_string_equal(s, "start=0 p=0 end=0");
	free(s);
	rec = record("module", "seq", "1");
	assert_member(rec, "flags", "[\"PAM_PRELIM_CHECK\"]");
	assert_member(rec, "function", "pam_sm_chauthtok");
	free(rec);
	rec = record("module", "seq", "2");
	assert_member(rec, "flags", "[\"PAM_UPDATE_AUTHTOK\"]");
	assert_member(rec, "result", "PAM_SUCCESS");
	free(rec);
	rec = record("result", NULL, NULL);
	assert_member(rec, "calls", "2");
	free(rec);
	all = tu_read_file(trace, NULL);
	assert_null(strstr(all, PASSWORD));
	assert_null(strstr(all, "passdb"));	/* no module arguments */
	free(all);
}

/* ---- the trace file ------------------------------------------------------ */

static void test_text_format(void **state)
{
	char *text, *p, *want;

	(void)state;
	svc("svc", "auth required pam_matrix.so passdb=@D@/passdb\n");
	setenv("PAM_WRAPPER_TRACE", trace, 1);
	setenv("PAM_WRAPPER_TRACE_FORMAT", "text", 1);
	free(run("svc", "wrong", "a"));
	text = tu_read_file(trace, NULL);
	p = ours("pam_matrix.so");
	assert_true(asprintf(&want, " svc: pam_start -> PAM_SUCCESS (%s)\n",
			     dir) > 0);
	assert_non_null(strstr(text, want));
	free(want);
	assert_true(asprintf(&want, " svc: pam_authenticate #1 %s/svc:1 auth "
			     "required pam_matrix.so (%s) -> PAM_AUTH_ERR: "
			     REQ_BAD "\n", dir, p) > 0);
	if (strstr(text, want) == NULL) {
		fail_msg("no line ...%s in:\n%s", want, text);
	}
	assert_non_null(strstr(text, " svc: pam_authenticate -> PAM_AUTH_ERR "
				     "(1 module call)\n"));
	assert_int_equal(text[0] == '{', 0);
	free(want);
	free(p);
	free(text);
}

/* Without PAM_WRAPPER_TRACE the copy is the plain one and nothing is
 * written; the copy follows the variable at each pam_start. */
static void test_off_is_untouched(void **state)
{
	char *conf, *copy, *s;

	(void)state;
	svc("svc", "auth required pam_matrix.so passdb=@D@/passdb\n");
	assert_non_null(getenv("PAM_WRAPPER_RUNTIME_DIR"));	/* preloaded */
	conf = strdup(getenv("PAM_WRAPPER_RUNTIME_DIR"));
	assert_non_null(conf);
	strcpy(strrchr(conf, '/'), "/conf");
	for (int i = 0; i < 3; i++) {
		bool on = i == 1;

		if (on) {
			setenv("PAM_WRAPPER_TRACE", trace, 1);
		}
		s = run("svc", PASSWORD, "a");
		unsetenv("PAM_WRAPPER_TRACE");
		assert_string_equal(s, "start=0 a=0 end=0");
		free(s);
		copy = tu_read_at(conf, "svc");
		assert_non_null(copy);
		assert_int_equal(strstr(copy, "/.t/pam_matrix.so pwrap_trace=") !=
					 NULL, on);
		assert_int_equal(access(trace, F_OK) == 0, on);
		unlink(trace);
		free(copy);
	}
	free(conf);
}

/* The real modules live from pam_start to pam_end, as without the trace. */
static void test_module_lifetime(void **state)
{
	struct pam_conv c = { tu_conv_none, NULL };
	char *mod = ours("pam_get_items.so");

	(void)state;
	svc("svc", "session optional pam_get_items.so\n");
	for (int i = 0; i < 2; i++) {
		pam_handle_t *ph = NULL;
		void *h;

		if (i == 1) {
			setenv("PAM_WRAPPER_TRACE", trace, 1);
		}
		assert_null(dlopen(mod, RTLD_NOW | RTLD_NOLOAD));
		assert_int_equal(pam_start("svc", "alice", &c, &ph),
				 PAM_SUCCESS);
		h = dlopen(mod, RTLD_NOW | RTLD_NOLOAD);
		assert_non_null(h);
		dlclose(h);
		assert_int_equal(pam_open_session(ph, 0), PAM_SUCCESS);
		assert_int_equal(pam_end(ph, PAM_SUCCESS), PAM_SUCCESS);
		assert_null(dlopen(mod, RTLD_NOW | RTLD_NOLOAD));
		unsetenv("PAM_WRAPPER_TRACE");
	}
	free(mod);
}

static void test_start_failure(void **state)
{
	char *s;

	(void)state;
	setenv("PAM_WRAPPER_TRACE", trace, 1);
	tu_stderr_begin();
	s = run("pwrap-no-such-service", PASSWORD, "a");
	free(tu_stderr_end());
	unsetenv("PAM_WRAPPER_TRACE");
	assert_string_equal(s, "start=26");	/* PAM_ABORT, nothing read */
	free(s);
	{
		struct trecs t = tr_read(trace);

		s = tr_summary(&t, dir);
		tr_free(&t);
	}
	assert_string_equal(s, "start PAM_ABORT");
	free(s);
}

static void test_to_stderr(void **state)
{
	char *err;

	(void)state;
	svc("svc", "account required pam_matrix.so passdb=@D@/passdb\n");
	setenv("PAM_WRAPPER_TRACE", "-", 1);
	tu_stderr_begin();
	free(run("svc", PASSWORD, "m"));
	err = tu_stderr_end();
	unsetenv("PAM_WRAPPER_TRACE");
	assert_non_null(strstr(err, "{\"kind\":\"start\""));
	assert_non_null(strstr(err, "\"function\":\"pam_sm_acct_mgmt\""));
	assert_non_null(strstr(err, "{\"kind\":\"result\""));
	free(err);
}

/* A relative path is resolved when first seen: a later chdir does not
 * move the trace. */
static void test_relative_path(void **state)
{
	struct pam_conv c = { tu_conv_password, (void *)PASSWORD };
	char *elsewhere = tu_subdir(dir, "elsewhere");
	char *old = getcwd(NULL, 0);
	pam_handle_t *ph = NULL;
	char *s;

	(void)state;
	svc("svc", "auth required pam_matrix.so passdb=@D@/passdb\n");
	assert_int_equal(chdir(dir), 0);
	setenv("PAM_WRAPPER_TRACE", "trace.json", 1);
	assert_int_equal(pam_start("svc", "alice", &c, &ph), PAM_SUCCESS);
	assert_int_equal(chdir(elsewhere), 0);
	assert_int_equal(pam_authenticate(ph, 0), PAM_SUCCESS);
	assert_int_equal(pam_end(ph, PAM_SUCCESS), PAM_SUCCESS);
	unsetenv("PAM_WRAPPER_TRACE");
	assert_int_equal(chdir(old), 0);
	assert_int_equal(tu_count_entries(elsewhere, true), 0);
	{
		struct trecs t = tr_read(trace);

		s = tr_summary(&t, dir);
		tr_free(&t);
	}
	assert_string_equal(s, "start PAM_SUCCESS; "
			       "svc:1 pam_matrix.so PAM_SUCCESS " REQ_OK "; "
			       "= pam_authenticate PAM_SUCCESS");
	free(s);
	free(old);
	free(elsewhere);
}

/* A symbolic link is followed only when root or the real user owns it. */
static void test_symlink_owner(void **state)
{
	char *target = tu_path(dir, "target.json");
	char *err, *text;

	(void)state;
	svc("svc", "account required pam_matrix.so passdb=@D@/passdb\n");
	assert_int_equal(symlink(target, trace), 0);
	setenv("PAM_WRAPPER_TRACE", trace, 1);
	free(run("svc", PASSWORD, "m"));
	text = tu_read_file(target, NULL);
	assert_non_null(strstr(text, "\"kind\":\"result\""));
	free(text);
	if (geteuid() != 0) {
		unsetenv("PAM_WRAPPER_TRACE");
		free(target);
		print_message("(not root: a link of another user cannot be "
			      "made; that part is not run)\n");
		return;
	}
	unlink(target);
	assert_int_equal(lchown(trace, 65534, 65534), 0);
	tu_stderr_begin();
	free(run("svc", PASSWORD, "m"));
	err = tu_stderr_end();
	unsetenv("PAM_WRAPPER_TRACE");
	assert_int_not_equal(access(target, F_OK), 0);
	assert_non_null(strstr(err, "PAM_WRAPPER_TRACE: cannot write to"));
	free(err);
	free(target);
}

/* A FIFO at the trace's path that nobody reads (another user may plant
 * one in a shared directory): the transaction goes on, untouched, and the
 * failure is said; it never waits for a reader. */
static void test_fifo_without_reader(void **state)
{
	char *err, *s;

	(void)state;
	svc("svc", "account required pam_matrix.so passdb=@D@/passdb\n");
	assert_int_equal(mkfifo(trace, 0600), 0);
	setenv("PAM_WRAPPER_TRACE", trace, 1);
	tu_alarm(TU_HANG_SECONDS, "test_trace: writing the trace waits for a reader");
	tu_stderr_begin();
	s = run("svc", PASSWORD, "m");
	err = tu_stderr_end();
	alarm(0);
	unsetenv("PAM_WRAPPER_TRACE");
	assert_string_equal(s, "start=0 m=0 end=0");
	assert_non_null(strstr(err, "PAM_WRAPPER_TRACE: cannot write to"));
	free(err);
	free(s);
}

static void test_runs_unprivileged_when_asked(void **state)
{
	(void)state;
	if (getenv("PWRAP_AS_NOBODY") != NULL) {
		assert_int_not_equal(getuid(), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_unprivileged_when_asked),
		cmocka_unit_test_setup_teardown(test_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failures, setup,
						teardown),
#if !defined(PWRAP_OPENPAM)
		cmocka_unit_test_setup_teardown(test_setcred_frozen_chain,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_actions, setup, teardown),
#else
		cmocka_unit_test_setup_teardown(test_other_facilities, setup,
						teardown),
#endif
		cmocka_unit_test_setup_teardown(test_chauthtok, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_text_format, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_off_is_untouched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_module_lifetime, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_start_failure, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_to_stderr, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_relative_path, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_symlink_owner, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fifo_without_reader, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
