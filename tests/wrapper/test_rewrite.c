/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the service-file rewriter (src/pamconf/pamconf_rewrite.c,
 * through the wrapper's pwrap_rewrite()) for Linux-PAM up to 1.5 and for
 * OpenPAM: pure functions, tested in every build. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pwrap_private.h"

/* The rules tested: Debian's Linux-PAM 1.5 (with @include) and OpenPAM;
 * Linux-PAM 1.6's reading has its own tests in tests/pamconf. */
static struct pamconf_rules lp, op;

static char *inc_cb(void *ctx, const char *t, enum pamconf_stack stack,
		    const char *src, unsigned line)
{
	char *r = NULL;

	(void)ctx;
	(void)stack;
	(void)src;
	(void)line;
	return asprintf(&r, "/G/%s", t) < 0 ? NULL : r;
}

/* How the last module token was asked for (quiet: a "-type" line). */
static int last_quiet = -1;

static char *mod_cb(void *ctx, const char *m, bool quiet, const char *src,
		    unsigned line)
{
	char *r = NULL;

	(void)ctx;
	(void)src;
	(void)line;
	last_quiet = quiet;
	if (strcmp(m, "pam_matrix.so") != 0) {
		return NULL;
	}
	return asprintf(&r, "/M/%s", m) < 0 ? NULL : r;
}

static void check(const char *in, size_t len, const char *expected)
{
	struct pamconf_ops ops = { .include_target = inc_cb,
				   .module_path = mod_cb };
	char *out = NULL;
	size_t out_len = 0;

	assert_int_equal(pwrap_rewrite(&lp, in, len, "svc", &ops, &out,
					       &out_len), 0);
	assert_string_equal(out, expected);
	assert_int_equal(out_len, strlen(expected));
	free(out);
}

#define CHECK(in, exp) check((in), sizeof(in) - 1, (exp))

static void refuse(const char *in)
{
	struct pamconf_ops ops = { .include_target = inc_cb,
				   .module_path = mod_cb };
	char *out = NULL;

	assert_int_equal(pwrap_rewrite(&lp, in, strlen(in), "svc", &ops,
					       &out, NULL), -1);
	assert_null(out);
}

static int crashes_cb(void *ctx, enum pamconf_stack stack,
		      enum pamconf_bad_include why, const char *target,
		      const char *src, unsigned line)
{
	char *seen = ctx;

	(void)stack;
	assert_int_equal(why, PAMCONF_NAME_CRASHES);
	assert_string_equal(src, "svc");
	snprintf(seen, 64, "%u:%s", line, target);
	return 0;
}

/* A line naming a module or substack libpam refuses: up to 1.5 refused
 * (or told to bad_include, kept as written), from 1.6 kept as written. */
static void name_crashes(const char *in, const char *name)
{
	struct pamconf_rules lp16;
	char seen[64] = "", want[64];
	struct pamconf_ops ops = { .include_target = inc_cb,
				   .module_path = mod_cb,
				   .bad_include = crashes_cb, .ctx = seen };
	char *out = NULL;

	refuse(in);
	assert_int_equal(pwrap_rewrite(&lp, in, strlen(in), "svc", &ops,
					       &out, NULL), 0);
	assert_string_equal(out, in);
	free(out);
	snprintf(want, sizeof(want), "1:%s", name);
	assert_string_equal(seen, want);
	pamconf_rules_linux(&lp16, 106, true);
	ops.bad_include = NULL;
	assert_int_equal(pwrap_rewrite(&lp16, in, strlen(in), "svc", &ops,
					       &out, NULL), 0);
	assert_string_equal(out, in);
	free(out);
}

static void test_plain_lines(void **state)
{
	(void)state;
	CHECK("auth required pam_permit.so\n", "auth required pam_permit.so\n");
	/* blanks are kept as written: libpam splits on " \t\n" only */
	CHECK("auth\trequired  pam_permit.so  a=1 b\n",
	      "auth\trequired  pam_permit.so  a=1 b\n");
	CHECK("", "");
	CHECK("\n\n   \n", "");
	CHECK("# only a comment\n", "");
}

static void test_module_names(void **state)
{
	(void)state;
	CHECK("auth required pam_matrix.so passdb=/x\n",
	      "auth required /M/pam_matrix.so passdb=/x\n");
	CHECK("-session optional pam_matrix.so\n",
	      "-session optional /M/pam_matrix.so\n");
	CHECK("auth [success=1 default=ignore] pam_matrix.so echo\n",
	      "auth [success=1 default=ignore] /M/pam_matrix.so echo\n");
	CHECK("auth required /abs/pam_matrix.so\n",
	      "auth required /abs/pam_matrix.so\n");
	/* "[...]" is one token wherever it is, and needs no blank after it */
	CHECK("auth [ok]pam_matrix.so x\n", "auth [ok]/M/pam_matrix.so x\n");
	CHECK("auth required [pam_matrix.so]x\n",
	      "auth required /M/pam_matrix.so x\n");
	/* the callback hears whether libpam stays silent about a missing
	 * module ("-type"), so a name found nowhere is logged as libpam
	 * would: an error, or only a warning */
	CHECK("auth required pam_matrix.so\n",
	      "auth required /M/pam_matrix.so\n");
	assert_int_equal(last_quiet, 0);
	CHECK("-auth required pam_matrix.so\n",
	      "-auth required /M/pam_matrix.so\n");
	assert_int_equal(last_quiet, 1);
	CHECK("[-session] optional pam_nx.so\n",
	      "[-session] optional pam_nx.so\n");
	assert_int_equal(last_quiet, 1);
}

static void test_includes(void **state)
{
	(void)state;
	CHECK("auth include common-auth\n", "auth include /G/common-auth\n");
	CHECK("account substack sub\n", "account substack /G/sub\n");
	CHECK("@include common-session\n", "@include /G/common-session\n");
	CHECK("@include   x   # c\n", "@include   /G/x   \n");
	/* a substack whose name libpam refuses (empty or "?": the last path
	 * component without its last ".suffix"): from 1.6 it stays as
	 * written, libpam fails the line before it opens the target; up to
	 * 1.5 libpam leaves a half-made handler behind and may crash, so the
	 * line is refused where libpam reads it (name_crashes()); include
	 * lines have no such name */
	name_crashes("account substack /d/dir/\n", "/d/dir/");
	name_crashes("account substack /d/.x\n", "/d/.x");
	name_crashes("account substack ?\n", "?");
	name_crashes("account SubStack ?.conf\n", "?.conf");
	name_crashes("auth required ?\n", "?");
	name_crashes("auth required .so\n", ".so");
	CHECK("account substack a.?\n", "account substack /G/a.?\n");
	CHECK("account substack ??\n", "account substack /G/??\n");
	CHECK("account include /d/dir/\n", "account include /G//d/dir/\n");
	CHECK("@include ?\n", "@include /G/?\n");
	/* libpam compares keywords without case */
	CHECK("auth Include common-auth\n", "auth Include /G/common-auth\n");
	CHECK("auth SUBSTACK sub\n", "auth SUBSTACK /G/sub\n");
	CHECK("@INCLUDE x\n", "@INCLUDE /G/x\n");
	CHECK("  @Include x\n", "  @Include /G/x\n");
	CHECK("auth [include] x\n", "auth [include] /G/x\n");
	/* libpam drops a leading '-' before it looks for "@include" */
	CHECK("-@include x\n", "-@include /G/x\n");
	CHECK("[-@include] x\n", "[-@include] /G/x\n");
}

static void test_syntax_corners(void **state)
{
	(void)state;
	/* continuation lines are joined as libpam joins them: the backslash
	 * becomes a blank, the next line's leading blanks stay */
	CHECK("auth \\\n required \\\n pam_matrix.so\n",
	      "auth   required   /M/pam_matrix.so\n");
	/* comments anywhere are dropped */
	CHECK("auth required pam_matrix.so # pam_x.so\n",
	      "auth required /M/pam_matrix.so \n");
	/* no trailing newline (GLOME writes files like that) */
	CHECK("auth required pam_matrix.so", "auth required /M/pam_matrix.so\n");
	/* CR is not a blank to libpam: the module is "pam_matrix.so\r",
	 * which is not ours, and the line stays as libpam sees it */
	CHECK("auth required pam_matrix.so\r\n",
	      "auth required pam_matrix.so\r\n");
	CHECK("auth\rrequired pam_matrix.so\n", "auth\rrequired pam_matrix.so\n");
	/* \v and \f are not blanks either */
	CHECK("auth required\vpam_matrix.so\n",
	      "auth required\vpam_matrix.so\n");
	/* a NUL ends what libpam would see of the line */
	CHECK("auth required pam_matrix.so\0junk\nauth required x.so\n",
	      "auth required /M/pam_matrix.so\nauth required x.so\n");
	/* an unterminated bracket or a short line is kept as is */
	CHECK("auth [success=1 pam_matrix.so\n",
	      "auth [success=1 pam_matrix.so\n");
	CHECK("auth\n", "auth\n");
	CHECK("auth required\n", "auth required\n");
	/* an include without a target crashes libpam when libpam reads
	 * it: refused unless the caller takes such lines (bad_include) */
	refuse("@include\n");
	refuse("-@include\n");
	refuse("auth include\n");
	refuse("auth [SubStack] # x\n");
	/* a file ending in a continuation stays one (libpam refuses it) */
	CHECK("auth required \\", "\\");
	CHECK("auth required \\\n\n", "\\");
	CHECK("auth required x.so\nauth required \\", "auth required x.so\n\\");
	/* blank and comment lines inside a continuation are skipped */
	CHECK("auth required \\\n# c\n\n pam_matrix.so\n",
	      "auth required   /M/pam_matrix.so\n");
	/* a comment after text ends the line, backslash or not */
	CHECK("auth required # \\\npam_matrix.so x\n",
	      "auth required \npam_matrix.so x\n");
	/* an unclosed "[..." cut at a '#' (or a NUL, or the end of the file)
	 * must not take the copy's newline into its token */
	CHECK("auth optional x.so [abc#\n", "auth optional x.so [abc#\n");
	CHECK("auth optional x.so [abc", "auth optional x.so [abc#\n");
	CHECK("auth optional x.so [abc\n", "auth optional x.so [abc\n");
	/* ... and a backslash before the comment is text: it must not
	 * become a continuation in the copy */
	CHECK("auth required x.so a\\ # c\nauth required y.so\n",
	      "auth required x.so a\\ #\nauth required y.so\n");
}

/* A string of n copies of c. */
static char *rep(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

static void check_str(const char *in, const char *expected)
{
	check(in, strlen(in), expected);
}

/* libpam reads lines into a 1024-byte buffer: a longer physical line is
 * two lines to it, and a rewrite never pushes a line past the buffer. */
/* keep_lines: each logical line of the copy starts on the physical line
 * it starts on in the original (what libpam and the trace then name). */
static void test_keep_lines(void **state)
{
	static const char in[] = "# a comment\n"
				 "\n"
				 "auth required pam_matrix.so \\\n"
				 "   a=1\n"
				 "   # indented\n"
				 "account include common\n";
	static const char exp[] = "\n\n"
				  "auth required /M/pam_matrix.so     a=1\n"
				  "\n\n"
				  "account include /G/common\n";
	struct pamconf_ops ops = { .include_target = inc_cb,
				   .module_path = mod_cb,
				   .keep_lines = true };
	char *out = NULL;

	(void)state;
	assert_int_equal(pwrap_rewrite(&lp, in, sizeof(in) - 1, "svc", &ops,
				       &out, NULL), 0);
	assert_string_equal(out, exp);
	free(out);
}

static void test_line_limit(void **state)
{
	char *pad = rep('a', 1100);
	char *in = NULL, *exp = NULL;

	(void)state;
	/* 1023 bytes per read: the rest is a line of its own */
	assert_true(asprintf(&in, "auth required x.so %s\n", pad) > 0);
	in[1023 + 0] = '\0';	/* first read */
	assert_true(asprintf(&exp, "%s\n%s\n", in, pad + (1023 - 19)) > 0);
	free(in);
	assert_true(asprintf(&in, "auth required x.so %s\n", pad) > 0);
	check_str(in, exp);
	free(in);
	free(exp);

	/* 990 bytes: with "/M/" the line still fits */
	pad[990 - 27] = '\0';
	assert_true(asprintf(&in, "auth required pam_matrix.so %s\n", pad) > 0);
	assert_true(asprintf(&exp, "auth required /M/pam_matrix.so %s\n",
			     pad) > 0);
	check_str(in, exp);
	free(in);
	free(exp);

	/* 1022 bytes: the module name stays as written (libpam then fails
	 * to find it, as it would without the wrapper) */
	memset(pad, 'a', 1100);
	pad[1022 - 27] = '\0';
	assert_true(asprintf(&in, "auth required pam_matrix.so %s\n", pad) > 0);
	check_str(in, in);
	free(in);
	free(pad);
}

/* What the callbacks are told of include lines: the stack each belongs to
 * (which decides whether libpam reads it), and the lines without a target,
 * which are kept as written when the caller takes them. */
struct seen_incs {
	char text[256];
};

static char *stack_inc_cb(void *ctx, const char *t, enum pamconf_stack stack,
			  const char *src, unsigned line)
{
	struct seen_incs *s = ctx;
	size_t n = strlen(s->text);

	(void)src;
	snprintf(s->text + n, sizeof(s->text) - n, "%u:%s:%d ", line, t,
		 (int)stack);
	return NULL;
}

static int bad_cb(void *ctx, enum pamconf_stack stack,
		  enum pamconf_bad_include why, const char *target,
		  const char *src, unsigned line)
{
	struct seen_incs *s = ctx;
	size_t n = strlen(s->text);

	assert_int_equal(why, PAMCONF_INCLUDE_NO_TARGET);
	assert_null(target);
	assert_string_equal(src, "svc");
	snprintf(s->text + n, sizeof(s->text) - n, "%u:-:%d ", line,
		 (int)stack);
	return 0;
}

static void test_include_stacks(void **state)
{
	static const char in[] =
		"auth include a\n"
		"account include\n"
		"-Session [substack] # no target\n"
		"@include\n"
		"-@INCLUDE b\n"
		"bogus include c\n"
		"password substack d\n";
	struct seen_incs seen = { "" };
	struct pamconf_ops ops = { .include_target = stack_inc_cb,
				   .ctx = &seen,
				   .bad_include = bad_cb };
	char *out = NULL;
	size_t out_len = 0;
	char exp[256];

	(void)state;
	assert_int_equal(pwrap_rewrite(&lp, in, sizeof(in) - 1, "svc", &ops,
					       &out, &out_len), 0);
	snprintf(exp, sizeof(exp), "1:a:%d 2:-:%d 3:-:%d 4:-:%d 5:b:%d 6:c:%d "
		 "7:d:%d ", PAMCONF_STACK_AUTH, PAMCONF_STACK_ACCOUNT,
		 PAMCONF_STACK_SESSION, PAMCONF_STACK_ASKED, PAMCONF_STACK_ASKED,
		 PAMCONF_STACK_BAD, PAMCONF_STACK_PASSWORD);
	assert_string_equal(seen.text, exp);
	/* the lines without a target are kept (the comment goes, the blank
	 * before it stays) */
	assert_string_equal(out, "auth include a\naccount include\n"
			    "-Session [substack] \n@include\n-@INCLUDE b\n"
			    "bogus include c\npassword substack d\n");
	free(out);

	/* what libpam reads of a file read for a stack, and for what it
	 * reads the include targets there */
	assert_true(pamconf_stack_reads(PAMCONF_STACK_AUTH, PAMCONF_STACK_ANY));
	assert_true(pamconf_stack_reads(PAMCONF_STACK_AUTH, PAMCONF_STACK_AUTH));
	assert_false(pamconf_stack_reads(PAMCONF_STACK_AUTH,
				       PAMCONF_STACK_ACCOUNT));
	assert_true(pamconf_stack_reads(PAMCONF_STACK_BAD, PAMCONF_STACK_SESSION));
	assert_true(pamconf_stack_reads(PAMCONF_STACK_ASKED,
				      PAMCONF_STACK_PASSWORD));
	assert_int_equal(pamconf_stack_included(PAMCONF_STACK_ACCOUNT,
					      PAMCONF_STACK_ANY),
			 PAMCONF_STACK_ACCOUNT);
	assert_int_equal(pamconf_stack_included(PAMCONF_STACK_ASKED,
					      PAMCONF_STACK_ANY),
			 PAMCONF_STACK_ANY);
	assert_int_equal(pamconf_stack_included(PAMCONF_STACK_ASKED,
					      PAMCONF_STACK_SESSION),
			 PAMCONF_STACK_SESSION);
	assert_int_equal(pamconf_stack_included(PAMCONF_STACK_BAD,
					      PAMCONF_STACK_ANY),
			 PAMCONF_STACK_AUTH);
	assert_int_equal(pamconf_stack_included(PAMCONF_STACK_BAD,
					      PAMCONF_STACK_ACCOUNT),
			 PAMCONF_STACK_ACCOUNT);
}

/* An include target that cannot be resolved within the limit is an error:
 * never a silent fall-back to /etc/pam.d. */
static int too_long_cb(void *ctx, enum pamconf_stack stack,
		       enum pamconf_bad_include why, const char *target,
		       const char *src, unsigned line)
{
	(void)src;
	assert_int_equal(why, PAMCONF_INCLUDE_TOO_LONG);
	assert_int_equal(stack, PAMCONF_STACK_ACCOUNT);
	assert_string_equal(target, "x");
	assert_int_equal(line, 2);
	(*(int *)ctx)++;
	return 0;
}

static void test_include_too_long(void **state)
{
	struct pamconf_ops ops = { .include_target = inc_cb,
				   .module_path = mod_cb };
	char *pad = rep('a', 1015);
	char *in = NULL;
	char *out = NULL;
	int told = 0;

	(void)state;
	assert_true(asprintf(&in, "auth include x %s\n", pad) > 0);
	assert_int_equal(pwrap_rewrite(&lp, in, strlen(in), "svc", &ops,
					       &out, NULL), -1);
	assert_int_equal(errno, E2BIG);
	assert_null(out);
	free(in);
	/* with bad_include the line stays as written, for the caller to
	 * refuse where libpam reads it */
	ops.ctx = &told;
	ops.bad_include = too_long_cb;
	free(pad);
	pad = rep('a', 1003);	/* 1021 bytes as written, 1024 resolved */
	assert_true(asprintf(&in, "auth required x.so\naccount include x %s\n",
			     pad) > 0);
	assert_int_equal(pwrap_rewrite(&lp, in, strlen(in), "svc", &ops,
					       &out, NULL), 0);
	assert_int_equal(told, 1);
	assert_string_equal(out, in);
	free(out);
	free(in);
	free(pad);
}

/* A continued line is assembled in the same buffer: what does not fit is
 * read as the next line.  A backslash on the buffer's last byte leaves
 * libpam reading nothing forever (Linux-PAM 1.5.2 hangs in pam_start): the
 * file is refused instead. */
static void test_continuation_fills_buffer(void **state)
{
	struct pamconf_ops ops = { .include_target = inc_cb,
				   .module_path = mod_cb };
	char *pad = rep('b', 600);
	char *in = NULL, *exp = NULL, *out = NULL;
	char *head = NULL;

	(void)state;
	assert_true(asprintf(&in, "auth required y.so %s \\\n%s\n", pad,
			     pad) > 0);
	/* 621 bytes of the first line + 402 of the second; its last 198
	 * bytes are a line of their own */
	assert_true(asprintf(&head, "auth required y.so %s  %.*s", pad, 402,
			     pad) > 0);
	assert_true(asprintf(&exp, "%s\n%s\n", head, pad + 402) > 0);
	check_str(in, exp);
	free(in);
	free(exp);
	free(head);

	free(pad);
	pad = rep('a', 1022 - 19);
	assert_true(asprintf(&in, "auth required x.so %s\\zzz\n", pad) > 0);
	assert_int_equal(strchr(in, '\\') - in, 1022);
	assert_int_equal(pwrap_rewrite(&lp, in, strlen(in), "svc", &ops,
					       &out, NULL), -1);
	assert_null(out);
	free(in);
	free(pad);
}

/* ---- OpenPAM: the copy is the file but for module words --------------- */

/* Include targets the OpenPAM rewriter reported, with their stacks. */
static char op_seen[512];

static char *op_inc_cb(void *ctx, const char *t, enum pamconf_stack stack,
		       const char *src, unsigned line)
{
	size_t n = strlen(op_seen);

	(void)ctx;
	(void)src;
	snprintf(op_seen + n, sizeof(op_seen) - n, "[%s:%d:%u]", t,
		 (int)stack, line);
	return strdup("/never/used");	/* OpenPAM's targets stay names */
}

static void op_check(const char *in, size_t len, const char *expected,
		     size_t exp_len)
{
	struct pamconf_ops ops = { .include_target = op_inc_cb,
				   .module_path = mod_cb };
	char *out = NULL;
	size_t out_len = 0;

	assert_int_equal(pwrap_rewrite(&op, in, len, "svc", &ops, &out,
					       &out_len), 0);
	assert_int_equal(out_len, exp_len);
	assert_memory_equal(out, expected, exp_len);
	assert_int_equal(out[out_len], '\0');
	free(out);
}

#define OP(in, exp) op_check((in), sizeof(in) - 1, (exp), sizeof(exp) - 1)

static void test_openpam_words(void **state)
{
	(void)state;
	OP("auth required pam_matrix.so passdb=/x\n",
	   "auth required /M/pam_matrix.so passdb=/x\n");
	/* everything else byte for byte: blanks, CR, form feeds, comments,
	 * continuations, no newline at the end, NUL bytes */
	OP("\tauth  \frequired\r pam_matrix.so a#b # c\r\n# x\n\n",
	   "\tauth  \frequired\r /M/pam_matrix.so a#b # c\r\n# x\n\n");
	OP("auth \\\n required \\\n\tpam_matrix.so x \\\n y",
	   "auth \\\n required \\\n\t/M/pam_matrix.so x \\\n y");
	OP("auth required pam_permit.so\0x\nacct required pam_matrix.so",
	   "auth required pam_permit.so\0x\nacct required /M/pam_matrix.so");
	/* the module word as OpenPAM reads it: quotes and escapes resolved,
	 * the whole word replaced */
	OP("auth required \"pam_matrix.so\" \"a # b\"\n",
	   "auth required /M/pam_matrix.so \"a # b\"\n");
	OP("auth required pam_\\\nmatrix.so 'x'\n",
	   "auth required /M/pam_matrix.so 'x'\n");
	OP("auth required \\pam_matrix.so\n", "auth required /M/pam_matrix.so\n");
	/* a '#' inside a word is no comment; one at a word's start is, and
	 * ends the line even after a backslash */
	OP("auth required x#y pam_matrix.so\n", "auth required x#y pam_matrix.so\n");
	OP("auth required #pam_matrix.so\nauth required pam_matrix.so\n",
	   "auth required #pam_matrix.so\nauth required /M/pam_matrix.so\n");
	/* no line limit of OpenPAM's own */
	{
		char in[3000], exp[3100];
		int n;

		n = snprintf(in, sizeof(in), "auth required pam_matrix.so %02500d\n",
			     0);
		snprintf(exp, sizeof(exp), "auth required /M/pam_matrix.so %02500d\n",
			 0);
		op_check(in, (size_t)n, exp, strlen(exp));
	}
	/* an unterminated quote: OpenPAM refuses the file; it stays as it is
	 * from there on */
	OP("auth required pam_matrix.so \"x\nauth required pam_matrix.so\n",
	   "auth required /M/pam_matrix.so \"x\nauth required pam_matrix.so\n");
}

static void test_openpam_includes(void **state)
{
	(void)state;
	op_seen[0] = '\0';
	OP("auth include common\naccount\tinclude \"other\"\n"
	   "password include x y\nsession include\n# auth include no\n"
	   "AUTH include z\n",
	   "auth include common\naccount\tinclude \"other\"\n"
	   "password include x y\nsession include\n# auth include no\n"
	   "AUTH include z\n");
	assert_string_equal(op_seen, "[common:1:1][other:2:2][x:3:3][z:5:6]");
}

/* The trace's callback: the stand-in for pam_matrix.so in the auth and
 * session stacks, with what it was told; NULL otherwise (the module
 * callback's path then, as untraced). */
static char *op_line_cb(void *ctx, const struct pamconf_module_line *ml)
{
	size_t n = strlen(op_seen);
	char *r = NULL;

	(void)ctx;
	snprintf(op_seen + n, sizeof(op_seen) - n, "[%s %s%s %s %d %s:%u]",
		 ml->type, ml->bracket ? "!" : "", ml->control, ml->module,
		 (int)ml->stack, ml->src, ml->line);
	if (strcmp(ml->module, "pam_matrix.so") != 0 ||
	    (ml->stack != PAMCONF_STACK_AUTH &&
	     ml->stack != PAMCONF_STACK_SESSION)) {
		return NULL;
	}
	return asprintf(&r, "/T/%s pwrap_trace=%u", ml->module, ml->line) < 0
		       ? NULL
		       : r;
}

/* A traced copy on OpenPAM names the stand-in in the module word's place
 * (the module's own arguments after it); includes stay names. */
static void test_openpam_traced(void **state)
{
	static const char in[] =
		"auth \"sufficient\" pam_\\\nmatrix.so a 'b c'\n"
		"account required pam_matrix.so\n"
		"session optional pam_matrix.so\n"
		"password include common\n"
		"bogus required pam_matrix.so\n";
	static const char exp[] =
		"auth \"sufficient\" /T/pam_matrix.so pwrap_trace=1 a 'b c'\n"
		"account required /M/pam_matrix.so\n"
		"session optional /T/pam_matrix.so pwrap_trace=4\n"
		"password include common\n"
		"bogus required /M/pam_matrix.so\n";
	struct pamconf_ops ops = { .include_target = op_inc_cb,
				   .module_path = mod_cb,
				   .module_line = op_line_cb };
	char *out = NULL;
	size_t out_len = 0;

	(void)state;
	op_seen[0] = '\0';
	assert_int_equal(pwrap_rewrite(&op, in, sizeof(in) - 1, "svc", &ops,
					       &out, &out_len), 0);
	assert_int_equal(out_len, sizeof(exp) - 1);
	assert_memory_equal(out, exp, sizeof(exp) - 1);
	free(out);
	assert_string_equal(op_seen,
			    "[auth sufficient pam_matrix.so 1 svc:1]"
			    "[account required pam_matrix.so 2 svc:3]"
			    "[session optional pam_matrix.so 4 svc:4]"
			    "[common:3:5]"
			    "[bogus required pam_matrix.so 5 svc:6]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_lines),
		cmocka_unit_test(test_module_names),
		cmocka_unit_test(test_includes),
		cmocka_unit_test(test_syntax_corners),
		cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_keep_lines),
		cmocka_unit_test(test_include_stacks),
		cmocka_unit_test(test_include_too_long),
		cmocka_unit_test(test_continuation_fills_buffer),
		cmocka_unit_test(test_openpam_words),
		cmocka_unit_test(test_openpam_includes),
		cmocka_unit_test(test_openpam_traced),
	};

	pamconf_rules_linux(&lp, 105, true);
	pamconf_rules_openpam(&op, 2);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
