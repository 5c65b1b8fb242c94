/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix through the real libpam: authentication, account, session and
 * credential groups, every return code they document, the options, and
 * every kind of bad passdb input (lines upstream crashes on must be
 * skipped with a "file:line: reason" log line, never crash; the others
 * read as upstream reads them).  Which lines a transaction reports: the
 * skipped ones that start with "USER:" before the line it uses, and that
 * line when it ends with CR or has a fourth field that is no flag list, or
 * every skipped line when the user has no line that is read.  What
 * upstream answers, case by case, is test_module_table.c's.  Password
 * changes
 * are tested in test_pam_matrix_chauthtok.c, big files in
 * test_pam_matrix_big.c, odd files (FIFOs, devices, files changing under
 * the reader) in test_pam_matrix_files.c.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <setjmp.h>
#include <cmocka.h>

#include "modtest.h"
#include "passdb_ref.h"

/* Asserts that no bad line was reported. */
static void assert_no_bad_lines(void)
{
	if (mt_log_has("line skipped")) {
		mt_log_dump();
		fail_msg("a bad line was reported");
	}
}

/* Asserts that a "<passdb>:LINE: REASON" message was logged. */
static void assert_logged_line(const struct mt_env *t, unsigned line,
			       const char *reason)
{
	char want[PATH_MAX + 128];

	snprintf(want, sizeof(want), "%s:%u: %s", t->passdb, line, reason);
	if (!mt_log_has(want)) {
		mt_log_dump();
		fail_msg("no log line \"%s\"", want);
	}
}

/* ---- authentication ---------------------------------------------------- */

static void auth_success(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:secret:svc\n");
	mt_matrix_service(t, "");
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_SUCCESS);
	assert_int_equal(c.nmsgs, 1);
	assert_string_equal(mt_msg(&c, 0), "P:Password: ");
	assert_int_equal(c.max_per_call, 1);
	mt_conv_free(&c);
}

static void auth_wrong_password(void **state)
{
	struct mt_env *t = *state;

	mt_passdb(t, "alice:secret:svc\n");
	mt_matrix_service(t, "");
	assert_int_equal(mt_auth(t, "alice", "Wr0ngPw"), PAM_AUTH_ERR);
	assert_int_equal(mt_auth(t, "alice", "secre"), PAM_AUTH_ERR);
	assert_int_equal(mt_auth(t, "alice", "secrets"), PAM_AUTH_ERR);
	assert_int_equal(mt_auth(t, "alice", ""), PAM_AUTH_ERR);
	/* Never a password in the log. */
	assert_false(mt_log_has("secret"));
	assert_false(mt_log_has("Wr0ngPw"));
	assert_false(mt_log_has("secre"));
}

static void auth_unknown_user(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:secret:svc\nalicex:secret:svc\n");
	mt_matrix_service(t, "");
	mt_conv_init(&c, 1, "secret");
	/* Asked anyway, then refused like a wrong password. */
	assert_int_equal(mt_run(t, "svc", "bob", &c, MT_AUTH, 0),
			 PAM_AUTH_ERR);
	assert_string_equal(mt_msg(&c, 0), "P:Password: ");
	mt_conv_free(&c);
	/* A prefix of a user name is not that user. */
	assert_int_equal(mt_auth(t, "alic", "secret"), PAM_AUTH_ERR);
	/* Nor is a name that would split the line differently. */
	assert_int_equal(mt_auth(t, "alice:secret", "svc"), PAM_AUTH_ERR);
}

/* As upstream: a failed conversation is PAM_AUTHINFO_UNAVAIL, a NULL
 * answer PAM_CRED_ERR; the log says which happened (it once said
 * "Conversation error" for a NULL answer too). */
static void auth_no_answer(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	char line[160];

	mt_passdb(t, "alice:secret:svc\n");
	mt_matrix_service(t, "");

	/* The conversation fails; the log ends with libpam's text for
	 * PAM_CONV_ERR ("Conversation error" in Linux-PAM, "Conversation
	 * failure" in OpenPAM). */
	mt_conv_init(&c, 0);
	c.fail = true;
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTHINFO_UNAVAIL);
	snprintf(line, sizeof(line),
		 "no answer to \"Password: \" for user alice: "
		 "the conversation function failed (%s)",
		 pam_strerror(NULL, PAM_CONV_ERR));
	assert_true(mt_log_has(line));
	mt_conv_free(&c);
	mt_log_clear();

	/* It succeeds but gives no string. */
	mt_conv_init(&c, 1, NULL);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_CRED_ERR);
	assert_true(mt_log_has("no answer to \"Password: \" for user alice: "
			       "the conversation function answered with a "
			       "NULL string"));
	assert_false(mt_log_has("Conversation error"));
	mt_conv_free(&c);
}

static void auth_no_user(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:secret:svc\n");
	mt_matrix_service(t, "");
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", NULL, &c, MT_AUTH, 0),
			 PAM_BAD_ITEM);
	/* No prompt for a user name, nor for a password. */
	assert_int_equal(c.nmsgs, 0);
	mt_conv_free(&c);
	/* The empty name is a name, as upstream takes it: asked, unknown. */
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "", &c, MT_AUTH, 0), PAM_AUTH_ERR);
	assert_int_equal(c.nmsgs, 1);
	mt_conv_free(&c);
}

static void auth_no_passdb(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_service(t, "svc", "auth required %s/pam_matrix.so\n", t->moddir);
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 0);
	assert_true(mt_log_has("PAM_MATRIX_PASSWD"));
	/* An empty variable is no passdb either. */
	setenv("PAM_MATRIX_PASSWD", "", 1);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
}

static void auth_passdb_from_env(void **state)
{
	struct mt_env *t = *state;
	char other[PATH_MAX];

	mt_passdb(t, "alice:secret:svc\n");
	/* (not named "other": that is the fall-back service's file) */
	mt_write(t, "passdb2", "alice:other:svc\n", 16);
	mt_path(t, "passdb2", other);

	setenv("PAM_MATRIX_PASSWD", t->passdb, 1);
	mt_service(t, "svc", "auth required %s/pam_matrix.so\n", t->moddir);
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);

	/* The option wins over the environment. */
	mt_service(t, "svc", "auth required %s/pam_matrix.so passdb=%s\n",
		   t->moddir, other);
	assert_int_equal(mt_auth(t, "alice", "other"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_AUTH_ERR);
}

static void auth_missing_file(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	char want[PATH_MAX + 64];

	mt_matrix_service(t, "");
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 0);
	mt_conv_free(&c);
	snprintf(want, sizeof(want), "%s: cannot open passdb", t->passdb);
	assert_true(mt_log_has(want));

	/* A directory reads as an empty passdb, as upstream reads it (with
	 * an error in the log). */
	mt_service(t, "svc", "auth required %s/pam_matrix.so passdb=%s\n",
		   t->moddir, t->dir);
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_AUTH_ERR);
	assert_true(mt_log_has("passdb is a directory"));
}

static void auth_bad_options(void **state)
{
	struct mt_env *t = *state;

	mt_passdb(t, "alice:secret:svc\n");
	/* passdb= without a path is no option, as upstream reads it: the
	 * environment's passdb counts (with a warning). */
	mt_service(t, "svc", "auth required %s/pam_matrix.so passdb=\n",
		   t->moddir);
	setenv("PAM_MATRIX_PASSWD", t->passdb, 1);
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
	assert_true(mt_log_has("option passdb= without a path ignored"));
	unsetenv("PAM_MATRIX_PASSWD");
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_AUTHINFO_UNAVAIL);
	setenv("PAM_MATRIX_PASSWD", t->passdb, 1);

	/* Unknown options are logged and ignored. */
	mt_matrix_service(t, "frobnicate use_first_pass");
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
	assert_true(mt_log_has("unknown option \"frobnicate\""));
	assert_true(mt_log_has("unknown option \"use_first_pass\""));

	/* The last passdb= counts. */
	mt_service(t, "svc",
		   "auth required %s/pam_matrix.so passdb=/nonexistent "
		   "passdb=%s\n",
		   t->moddir, t->passdb);
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
}

static void auth_echo(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:secret:svc\n");
	mt_matrix_service(t, "echo");
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_SUCCESS);
	assert_string_equal(mt_msg(&c, 0), "p:Password: ");
	mt_conv_free(&c);
}

static void auth_verbose(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;

	mt_passdb(t, "alice:secret:svc\n");
	mt_matrix_service(t, "verbose");

	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_SUCCESS);
	assert_int_equal(c.nmsgs, 2);
	assert_string_equal(mt_msg(&c, 0), "P:Password: ");
	assert_string_equal(mt_msg(&c, 1), "I:Authentication succeeded");
	mt_conv_free(&c);

	mt_conv_init(&c, 1, "wrong");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTH_ERR);
	assert_int_equal(c.nmsgs, 2);
	assert_string_equal(mt_msg(&c, 1), "E:Authentication failed");
	mt_conv_free(&c);

	/* As upstream: no report of a failure before the answer (no
	 * passdb, a failed conversation), one after a NULL answer. */
	mt_service(t, "svc", "auth required %s/pam_matrix.so verbose\n",
		   t->moddir);
	mt_conv_init(&c, 1, "secret");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 0);
	mt_conv_free(&c);
	mt_matrix_service(t, "verbose");
	mt_conv_init(&c, 0);
	c.fail = true;
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(c.nmsgs, 0); /* (a failing mt_conv records none) */
	mt_conv_free(&c);
	mt_conv_init(&c, 1, NULL);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_CRED_ERR);
	assert_int_equal(c.nmsgs, 2);
	assert_string_equal(mt_msg(&c, 1), "E:Authentication failed");
	mt_conv_free(&c);

	/* Without verbose: no messages besides the prompt. */
	mt_matrix_service(t, "");
	mt_conv_init(&c, 1, "wrong");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_AUTH, 0),
			 PAM_AUTH_ERR);
	assert_int_equal(c.nmsgs, 1);
	mt_conv_free(&c);
}

/* PAM_AUTHTOK stays set for the modules after pam_matrix. */
static void auth_keeps_authtok(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;
	const char *v;

	mt_passdb(t, "alice:secret:svc\n");
	mt_service(t, "svc",
		   "auth required %s/pam_matrix.so passdb=%s\n"
		   "auth required %s/pam_get_items.so\n",
		   t->moddir, t->passdb, t->moddir);
	mt_conv_init(&c, 1, "secret");
	pamh = mt_start(t, "svc", "alice", &c);
	assert_int_equal(pam_authenticate(pamh, 0), PAM_SUCCESS);
	v = pam_getenv(pamh, "PAM_AUTHTOK");
	assert_non_null(v);
	assert_string_equal(v, "secret");
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	mt_conv_free(&c);
}

/* Answers longer than upstream's 1024-byte buffer are taken whole. */
static void auth_long_password(void **state)
{
	struct mt_env *t = *state;
	size_t n = 3000;
	char *pw = malloc(n + 1);
	char *line = NULL;

	assert_non_null(pw);
	memset(pw, 'x', n);
	pw[n] = '\0';
	assert_true(asprintf(&line, "alice:%s:svc\n", pw) > 0);
	mt_passdb(t, line);
	mt_matrix_service(t, "");
	assert_int_equal(mt_auth(t, "alice", pw), PAM_SUCCESS);
	/* Same first 1024 bytes, different length: refused. */
	pw[1024] = '\0';
	assert_int_equal(mt_auth(t, "alice", pw), PAM_AUTH_ERR);
	pw[1024] = 'x';
	pw[n - 1] = 'y';
	assert_int_equal(mt_auth(t, "alice", pw), PAM_AUTH_ERR);
	free(line);
	free(pw);
}

/* ---- one call on service "svc": a row a case ----------------------------- */

/*
 * Each row: the passdb's text, then one call on "svc" (pam_matrix in all
 * four groups): authentication answering ANSWER, or an account check (no
 * conversation at all).  EXPECTED is the call's result; LOG a substring of
 * what the call logged ("<passdb>:LINE: REASON" lines), or NULL for no
 * reported bad line.
 */
struct matrix_case {
	const char *passdb;
	const char *user;
	enum mt_op op;
	const char *answer;
	int expected;
	const char *log;
};

#define CRLF_DB "alice:secret:svc\r\nalice:good:svc\n"
#define CR_NOTE "line ends with CR"
#define MATCH_DB "bob:one:svc\nalice:first:svc\nalice:second:svc\n"
#define ACCT_DB "alice:secret:svc\nbob:secret:other\ncarol:secret:MixedCase\n"

static const struct matrix_case matrix_cases[] = {
	/* The first line of the user wins. */
	{ MATCH_DB, "alice", MT_AUTH, "first", PAM_SUCCESS, NULL },
	{ MATCH_DB, "alice", MT_AUTH, "second", PAM_AUTH_ERR, NULL },
	{ MATCH_DB, "bob", MT_AUTH, "one", PAM_SUCCESS, NULL },
	/* A CRLF line is read as upstream reads it: password "secret",
	 * service "svc\r" (and said so in the log). */
	{ CRLF_DB, "alice", MT_AUTH, "secret", PAM_SUCCESS, ":1: " CR_NOTE },
	{ CRLF_DB, "alice", MT_AUTH, "good", PAM_AUTH_ERR, ":1: " CR_NOTE },
	{ CRLF_DB, "alice", MT_ACCT, NULL, PAM_PERM_DENIED, ":1: " CR_NOTE },
	{ "alice:secret:svc\r\n", "alice", MT_AUTH, "secret", PAM_SUCCESS,
	  ":1: " CR_NOTE },
	/* Empty file: nobody is known. */
	{ "", "alice", MT_AUTH, "secret", PAM_AUTH_ERR, NULL },
	/* No newline at the end of the last line. */
	{ "bob:x:svc\nalice:secret:svc", "alice", MT_AUTH, "secret",
	  PAM_SUCCESS, NULL },
	/* Empty password and empty service fields are allowed. */
	{ "alice::", "alice", MT_AUTH, "", PAM_SUCCESS, NULL },
	{ "alice::", "alice", MT_AUTH, "x", PAM_AUTH_ERR, NULL },
	/* Leading blanks belong to the user name. */
	{ " alice:secret:svc\n\talice:tab:svc\n", "alice", MT_AUTH, "secret",
	  PAM_AUTH_ERR, NULL },
	{ " alice:secret:svc\n\talice:tab:svc\n", " alice", MT_AUTH, "secret",
	  PAM_SUCCESS, NULL },
	{ " alice:secret:svc\n\talice:tab:svc\n", "\talice", MT_AUTH, "tab",
	  PAM_SUCCESS, NULL },
	/* Only comments and junk. */
	{ "#\n\n:\n::\n\r\n", "alice", MT_AUTH, "", PAM_AUTH_ERR,
	  "line skipped" },
	/* Account: the service field must be this service. */
	{ ACCT_DB, "alice", MT_ACCT, NULL, PAM_SUCCESS, NULL },
	{ ACCT_DB, "bob", MT_ACCT, NULL, PAM_PERM_DENIED, NULL },
	{ ACCT_DB, "nobody", MT_ACCT, NULL, PAM_PERM_DENIED, NULL },
	{ ACCT_DB, NULL, MT_ACCT, NULL, PAM_BAD_ITEM, NULL },
};

static void matrix_table(void **state)
{
	struct mt_env *t = *state;

	for (size_t i = 0; i < sizeof(matrix_cases) / sizeof(matrix_cases[0]);
	     i++) {
		const struct matrix_case *k = &matrix_cases[i];
		struct mt_conv c;
		int rv;

		mt_passdb(t, k->passdb);
		mt_matrix_service(t, "");
		mt_log_clear();
		if (k->op == MT_ACCT) {
			mt_conv_init(&c, 0);
		} else {
			mt_conv_init(&c, 1, k->answer);
		}
		rv = mt_run(t, "svc", k->user, &c, k->op, 0);
		if (rv != k->expected) {
			mt_log_dump();
			fail_msg("row %zu (user \"%s\"): returned %d, expected %d",
				 i, k->user != NULL ? k->user : "(null)", rv,
				 k->expected);
		}
		if (k->op == MT_ACCT && c.nmsgs != 0) {
			fail_msg("row %zu: account check talked (%d messages)",
				 i, (int)c.nmsgs);
		}
		mt_conv_free(&c);
		if (k->log != NULL ? !mt_log_has(k->log)
				   : mt_log_has("line skipped")) {
			mt_log_dump();
			fail_msg("row %zu: %s \"%s\"", i,
				 k->log != NULL ? "not logged" : "logged",
				 k->log != NULL ? k->log : "line skipped");
		}
	}
}

/* ---- passdb parsing ----------------------------------------------------- */

static void passdb_comments(void **state)
{
	struct mt_env *t = *state;
	static const unsigned comments[] = { 1, 2, 4 };
	char want[PATH_MAX + 16];

	mt_passdb(t, "# users\n#alice:bad:svc\nalice:secret:svc\n#\n");
	mt_matrix_service(t, "");
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "alice", "bad"), PAM_AUTH_ERR);
	/* A commented-out line is no user, even named with the '#'. */
	assert_int_equal(mt_auth(t, "#alice", "bad"), PAM_AUTH_ERR);
	/* Comments are not complaints: no comment line is logged. */
	assert_no_bad_lines();
	for (size_t i = 0; i < sizeof(comments) / sizeof(comments[0]); i++) {
		snprintf(want, sizeof(want), "%s:%u:", t->passdb, comments[i]);
		if (mt_log_has(want)) {
			mt_log_dump();
			fail_msg("comment line %u of the passdb was logged",
				 comments[i]);
		}
	}
}

static void passdb_blank_lines(void **state)
{
	struct mt_env *t = *state;

	/* Upstream crashed on the first of these. */
	mt_passdb(t, "\n  \t \nalice:secret:svc\n\n");
	mt_matrix_service(t, "");
	/* Found: blank lines cannot be the user's, nothing to report. */
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
	assert_no_bad_lines();
	/* Unknown: every bad line. */
	assert_int_equal(mt_auth(t, "nobody", "x"), PAM_AUTH_ERR);
	assert_logged_line(t, 1, "blank line");
	assert_logged_line(t, 2, "blank line");
	assert_logged_line(t, 4, "blank line");
	assert_int_equal(mt_log_count_has("line skipped"), 3);
}

static void passdb_short_lines(void **state)
{
	struct mt_env *t = *state;

	mt_passdb(t, "alice\nalice:secret\nalice:secret:svc\n");
	mt_matrix_service(t, "");
	/* Line 2 starts with "alice:" and could explain a failure; line 1
	 * does not. */
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
	assert_logged_line(t, 2, "too few fields");
	assert_int_equal(mt_log_count_has("line skipped"), 1);
	mt_log_clear();
	assert_int_equal(mt_auth(t, "bob", "secret"), PAM_AUTH_ERR);
	assert_logged_line(t, 1, "too few fields");
	assert_logged_line(t, 2, "too few fields");

	/* A short line alone means an unknown user. */
	mt_passdb(t, "alice:secret");
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_AUTH_ERR);
}

/* Lines upstream reads though they look odd: more colons (the rest is
 * the service), the empty user name, blanks after a colon, a fourth field
 * that is no flag list (said so in the log, at error level). */
static void passdb_odd_lines(void **state)
{
	struct mt_env *t = *state;

	mt_passdb(t, "alice:x:y:svc:z\n:empty:svc\nalice:secret:svc\n"
		     "bob: bobpw:\tsvc\ncarol:c:svc:lockd\n");
	mt_matrix_service(t, "");
	/* The first line of alice decides. */
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_AUTH_ERR);
	assert_int_equal(mt_auth(t, "alice", "x"), PAM_SUCCESS);
	assert_int_equal(mt_log_count_has("line skipped"), 0);
	assert_int_equal(mt_auth(t, "", "empty"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "bob", "bobpw"), PAM_SUCCESS);
	assert_int_equal(mt_auth(t, "bob", " bobpw"), PAM_AUTH_ERR);
	mt_log_clear();
	assert_int_equal(mt_auth(t, "carol", "c"), PAM_SUCCESS);
	assert_logged_line(t, 5, "the fourth field is not a list of account "
				 "flags");
	mt_log_clear();
	assert_int_equal(mt_auth(t, "dave", "secret"), PAM_AUTH_ERR);
	assert_int_equal(mt_log_count_has("line skipped"), 0);
}

static void passdb_overlong_line(void **state)
{
	struct mt_env *t = *state;
	size_t n = 20000;
	char *buf = malloc(n + 64);

	assert_non_null(buf);
	/* alice:<20000 x>:svc, then a normal alice line. */
	memcpy(buf, "alice:", 6);
	memset(buf + 6, 'x', n);
	strcpy(buf + 6 + n, ":svc\nalice:secret:svc\n");
	mt_passdb(t, buf);
	mt_matrix_service(t, "");
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
	assert_logged_line(t, 1, "line longer than");

	/* A line just at the limit (8192 bytes) is fine. */
	memcpy(buf, "alice:", 6);
	memset(buf + 6, 'x', 8192 - 10);
	strcpy(buf + 6 + 8192 - 10, ":svc\n");
	assert_int_equal(strlen(buf), 8193);
	mt_passdb(t, buf);
	buf[6 + 8192 - 10] = '\0';
	assert_int_equal(mt_auth(t, "alice", buf + 6), PAM_SUCCESS);
	free(buf);
}

static void passdb_nul_byte(void **state)
{
	struct mt_env *t = *state;
	static const char data[] = "alice:sec\0ret:svc\nbob:x\0:svc\n"
				   "alice:secret:svc\n";

	mt_write(t, "passdb", data, sizeof(data) - 1);
	mt_matrix_service(t, "");
	assert_int_equal(mt_auth(t, "alice", "sec"), PAM_AUTH_ERR);
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_SUCCESS);
	assert_logged_line(t, 1, "NUL byte");
	assert_int_equal(mt_auth(t, "bob", "x"), PAM_AUTH_ERR);
	assert_logged_line(t, 2, "NUL byte");
}

/*
 * Random passdbs of good and bad lines, checked against the reference
 * reading (passdb_ref.h): the same user is found (or not) with the same
 * password, and exactly the lines the contract names are reported, with
 * the right line numbers.
 */
/* Appends one random line (without its '\n') to F. */
static void random_line(FILE *f)
{
	int user = rand() % 4;
	int pad = rand() % 40;

	switch (rand() % 20) {
	case 0:
		fputs(rand() % 3 ? (rand() % 2 ? "" : " \t ") : "\r", f);
		break;
	case 1:
		fprintf(f, "u%d:crlf:svc\r", user);
		break;
	case 2:
		fprintf(f, "u%d:n", user);
		fputc('\0', f);
		fputs("ul:svc", f);
		break;
	case 3:
		fprintf(f, "u%d:short", user);
		break;
	case 4:
		fprintf(f, "u%d:a:b:svc", user);
		break;
	case 5:
		fprintf(f, "#u%d:comment:svc", user);
		break;
	case 6:
		fputs(rand() % 2 ? ":nouser:svc" : " :blank-user:svc", f);
		break;
	case 8:
		fprintf(f, "u%d: blank:\tsvc%s", user,
			rand() % 2 ? ":locked" : ":lockd");
		break;
	case 7:
		if (rand() % 4 == 0) {
			fprintf(f, "u%d:", user);
			for (int i = 0; i < 9000; i++) {
				fputc('L', f);
			}
			fputs(":svc", f);
			break;
		}
		/* fall through */
	default:
		fprintf(f, "u%d:pw%d_%.*s:svc", user, rand() % 1000, pad,
			"pppppppppppppppppppppppppppppppppppppppp");
		break;
	}
}

static void passdb_random(void **state)
{
	struct mt_env *t = *state;
	unsigned seed = 20240601;

	srand(seed);
	mt_matrix_service(t, "");
	for (int iter = 0; iter < 150; iter++) {
		char *data = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&data, &size);
		int nlines = 1 + rand() % 30;
		char user[8];
		struct ref_result r;
		char pass[64];
		size_t nskipped = 0;

		assert_non_null(f);
		for (int i = 0; i < nlines; i++) {
			random_line(f);
			if (i + 1 < nlines || rand() % 2) {
				fputc('\n', f);
			}
		}
		assert_int_equal(fclose(f), 0);
		mt_write(t, "passdb", data, size);
		snprintf(user, sizeof(user), "u%d", rand() % 5);
		ref_lookup(t->passdb, data, size, user, &r);
		if (r.found) {
			assert_true(r.f.pass_len < sizeof(pass));
			memcpy(pass, r.f.pass, r.f.pass_len);
			pass[r.f.pass_len] = '\0';
		}

		mt_log_clear();
		if (r.found) {
			/* (a locked account fails with the right password) */
			assert_int_equal(mt_auth(t, user, pass),
					 r.f.bits & 4 ? PAM_AUTH_ERR
						      : PAM_SUCCESS);
		} else {
			assert_int_equal(mt_auth(t, user, "pw"), PAM_AUTH_ERR);
		}
		for (size_t i = 0; i < r.nwant; i++) {
			nskipped += strstr(r.want[i], "line skipped") != NULL;
			if (!mt_log_has(r.want[i])) {
				mt_log_dump();
				fail_msg("seed %u iteration %d: no \"%s\"", seed,
					 iter, r.want[i]);
			}
		}
		assert_int_equal(mt_log_count_has("line skipped"), nskipped);
		if (r.found) {
			assert_int_equal(mt_auth(t, user, "not-it"),
					 PAM_AUTH_ERR);
		}
		ref_result_free(&r);
		free(data);
	}
	mt_log_clear();
}

/* /dev/null reads as an empty passdb, as upstream reads it; /dev/zero
 * is refused (upstream crashes on it; test_pam_matrix_files.c has FIFOs
 * and more). */
static void passdb_not_regular(void **state)
{
	struct mt_env *t = *state;

	mt_service(t, "svc", "auth required %s/pam_matrix.so passdb=%s\n",
		   t->moddir, "/dev/null");
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_AUTH_ERR);
	assert_false(mt_log_has("/dev/null: passdb"));
	mt_service(t, "svc", "auth required %s/pam_matrix.so passdb=%s\n",
		   t->moddir, "/dev/zero");
	assert_int_equal(mt_auth(t, "alice", "secret"), PAM_AUTHINFO_UNAVAIL);
	assert_true(mt_log_has("/dev/zero: passdb is not a regular file"));
}

/* ---- account ------------------------------------------------------------ */

static int acct_as(const struct mt_env *t, const char *service,
		   const char *user)
{
	struct mt_conv c;
	int rv;

	mt_conv_init(&c, 0);
	rv = mt_run(t, service, user, &c, MT_ACCT, 0);
	assert_int_equal(c.nmsgs, 0);
	mt_conv_free(&c);
	return rv;
}

static void account(void **state)
{
	struct mt_env *t = *state;

	mt_passdb(t, "alice:secret:svc\nbob:secret:other\n"
		     "carol:secret:MixedCase\n");
	mt_matrix_service(t, "");
	mt_service(t, "mixedcase",
		   "account required %s/pam_matrix.so passdb=%s\n", t->moddir,
		   t->passdb);
#if defined(PWRAP_OPENPAM)
	/* OpenPAM keeps the service name's case (and file name) */
	mt_service(t, "MixedCase",
		   "account required %s/pam_matrix.so passdb=%s\n", t->moddir,
		   t->passdb);
#endif

	/* (The "svc" cases are rows of matrix_cases.) */
	/* Linux-PAM lowercases "MixedCase"; the passdb keeps the case and
	 * pam_matrix compares service names without case. */
	assert_int_equal(acct_as(t, "MixedCase", "carol"), PAM_SUCCESS);
	assert_int_equal(acct_as(t, "mixedcase", "carol"), PAM_SUCCESS);
	assert_int_equal(acct_as(t, "mixedcase", "alice"), PAM_PERM_DENIED);
}

static void account_no_passdb(void **state)
{
	struct mt_env *t = *state;

	mt_matrix_service(t, "");
	assert_int_equal(acct_as(t, "svc", "alice"), PAM_AUTHINFO_UNAVAIL);
	mt_service(t, "svc", "account required %s/pam_matrix.so\n",
		   t->moddir);
	assert_int_equal(acct_as(t, "svc", "alice"), PAM_AUTHINFO_UNAVAIL);
	setenv("PAM_MATRIX_PASSWD", t->passdb, 1);
	mt_passdb(t, "alice:secret:svc\n");
	assert_int_equal(acct_as(t, "svc", "alice"), PAM_SUCCESS);
}

/* Account checks skip bad lines the same way. */
static void account_bad_lines(void **state)
{
	struct mt_env *t = *state;

	mt_passdb(t, "\nalice:x\nalice:secret:svc\r\nalice:secret:svc\n");
	mt_matrix_service(t, "");
	/* Line 3 decides: its service is "svc\r", as upstream reads it. */
	assert_int_equal(acct_as(t, "svc", "alice"), PAM_PERM_DENIED);
	assert_logged_line(t, 2, "too few fields");
	assert_logged_line(t, 3, "line ends with CR");
	assert_int_equal(mt_log_count_has("line skipped"), 1);
	mt_log_clear();
	assert_int_equal(acct_as(t, "svc", "bob"), PAM_PERM_DENIED);
	assert_logged_line(t, 1, "blank line");
	assert_logged_line(t, 2, "too few fields");
	assert_int_equal(mt_log_count_has("line skipped"), 2);
}

/* ---- session and credentials ------------------------------------------- */

/* A removed PAM variable: gone (Linux-PAM), or empty (OpenPAM, which cannot
 * remove one). */
static void assert_unset(pam_handle_t *pamh, const char *name)
{
#if defined(PWRAP_OPENPAM)
	assert_string_equal(pam_getenv(pamh, name), "");
#else
	assert_null(pam_getenv(pamh, name));
#endif
}

static void session(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;

	mt_passdb(t, "");
	mt_matrix_service(t, "");
	mt_conv_init(&c, 0);
	pamh = mt_start(t, "svc", "alice", &c);
	assert_null(pam_getenv(pamh, "HOMEDIR"));
	assert_int_equal(pam_open_session(pamh, 0), PAM_SUCCESS);
	assert_non_null(pam_getenv(pamh, "HOMEDIR"));
	assert_string_equal(pam_getenv(pamh, "HOMEDIR"), "/home/alice");
	assert_int_equal(pam_close_session(pamh, 0), PAM_SUCCESS);
	assert_unset(pamh, "HOMEDIR");
	/* Closing again is harmless. */
	assert_int_equal(pam_close_session(pamh, 0), PAM_SUCCESS);
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	assert_int_equal(c.nmsgs, 0);

	assert_int_equal(mt_run(t, "svc", NULL, &c, MT_OPEN, 0), PAM_BAD_ITEM);
	/* As upstream, the session needs a passdb it can read. */
	tu_unlink_at(t->dir, "passdb");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_OPEN, 0),
			 PAM_AUTHINFO_UNAVAIL);
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_CLOSE, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
}

static void setcred(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;

	mt_passdb(t, "");
	mt_matrix_service(t, "");
	mt_conv_init(&c, 0);
	pamh = mt_start(t, "svc", "alice", &c);
	assert_int_equal(pam_setcred(pamh, PAM_ESTABLISH_CRED), PAM_SUCCESS);
	assert_non_null(pam_getenv(pamh, "CRED"));
	assert_string_equal(pam_getenv(pamh, "CRED"), "/tmp/alice");
	assert_int_equal(pam_setcred(pamh, PAM_REFRESH_CRED), PAM_SUCCESS);
	assert_string_equal(pam_getenv(pamh, "CRED"), "/tmp/alice");
	assert_int_equal(pam_setcred(pamh, PAM_DELETE_CRED), PAM_SUCCESS);
	assert_unset(pamh, "CRED");
	assert_int_equal(pam_setcred(pamh, PAM_DELETE_CRED), PAM_SUCCESS);
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);

	assert_int_equal(mt_run(t, "svc", NULL, &c, MT_SETCRED, 0),
			 PAM_BAD_ITEM);
	tu_unlink_at(t->dir, "passdb");
	assert_int_equal(mt_run(t, "svc", "alice", &c, MT_SETCRED, 0),
			 PAM_AUTHINFO_UNAVAIL);
	mt_conv_free(&c);
}

/* A whole login: auth, account, setcred, session, as sshd would. */
static void full_transaction(void **state)
{
	struct mt_env *t = *state;
	struct mt_conv c;
	pam_handle_t *pamh;
	char **env;
	size_t n = 0;

	mt_passdb(t, "alice:secret:svc\n");
	mt_matrix_service(t, "");
	mt_conv_init(&c, 1, "secret");
	pamh = mt_start(t, "svc", "alice", &c);
	assert_int_equal(pam_authenticate(pamh, 0), PAM_SUCCESS);
	assert_int_equal(pam_acct_mgmt(pamh, 0), PAM_SUCCESS);
	assert_int_equal(pam_setcred(pamh, PAM_ESTABLISH_CRED), PAM_SUCCESS);
	assert_int_equal(pam_open_session(pamh, 0), PAM_SUCCESS);
	env = pam_getenvlist(pamh);
	assert_non_null(env);
	for (char **e = env; *e != NULL; e++) {
		if (strcmp(*e, "HOMEDIR=/home/alice") == 0 ||
		    strcmp(*e, "CRED=/tmp/alice") == 0) {
			n++;
		}
		free(*e);
	}
	free(env);
	assert_int_equal(n, 2);
	assert_int_equal(pam_close_session(pamh, 0), PAM_SUCCESS);
	assert_int_equal(pam_end(pamh, PAM_SUCCESS), PAM_SUCCESS);
	mt_conv_free(&c);
}

#define T(f) cmocka_unit_test_setup_teardown(f, mt_setup, mt_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(auth_success),
		T(auth_wrong_password),
		T(auth_unknown_user),
		T(auth_no_answer),
		T(auth_no_user),
		T(auth_no_passdb),
		T(auth_passdb_from_env),
		T(auth_missing_file),
		T(auth_bad_options),
		T(auth_echo),
		T(auth_verbose),
		T(auth_keeps_authtok),
		T(auth_long_password),
		T(matrix_table),
		T(passdb_comments),
		T(passdb_blank_lines),
		T(passdb_short_lines),
		T(passdb_odd_lines),
		T(passdb_overlong_line),
		T(passdb_nul_byte),
		T(passdb_random),
		T(passdb_not_regular),
		T(account),
		T(account_no_passdb),
		T(account_bad_lines),
		T(session),
		T(setcred),
		T(full_transaction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
