/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src/pamconf's reading of a file as a unit, where the PAM libraries
 * differ: Linux-PAM up to 1.5 (fgets() into 1024 bytes) against 1.6 and
 * later (getline(), includes limited), Debian's patches against upstream,
 * OpenPAM's words.  Every build tests every set of rules; which one the
 * loaded libpam follows is test_differential's question (it runs bare
 * libpam).  The expectations are what those libraries were measured to do
 * (tests/wrapper/test_differential.c has the same cases end to end).
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

#include "pamconf.h"

static struct pamconf_rules deb15, up15, deb16, up16, opam;

/* The file's logical lines as "LINE:text|" (Linux-PAM) or "LINE:w1 w2|"
 * (OpenPAM: the words), then "end=K@LINE" when libpam gives up. */
static char *lines_of(const struct pamconf_rules *r, const char *in,
		      size_t len)
{
	struct pamconf_file f;
	char *out = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&out, &n);

	assert_non_null(m);
	assert_int_equal(pamconf_parse(r, in, len, &f), 0);
	for (size_t i = 0; i < f.n; i++) {
		const struct pamconf_line *l = &f.v[i];

		fprintf(m, "%u:", l->line);
		if (l->text != NULL) {
			fputs(l->text, m);
		} else {
			for (size_t k = 0; k < l->ntok; k++) {
				fprintf(m, "%s%s", k ? " " : "", l->tok[k].text);
			}
		}
		fputc('|', m);
	}
	if (f.end != PAMCONF_END_OK) {
		fprintf(m, "end=%d@%u", (int)f.end, f.end_line);
	}
	fclose(m);
	pamconf_file_free(&f);
	return out;
}

static void expect(const struct pamconf_rules *r, const char *in, size_t len,
		   const char *want)
{
	char *got = lines_of(r, in, len);

	assert_string_equal(got, want);
	free(got);
}

#define EXPECT(r, lit, want) expect((r), (lit), sizeof(lit) - 1, (want))

/* A physical line of 1500 bytes: 1.5 reads 1023 of them, then the rest as
 * a line of its own; 1.6 reads it whole. */
static void test_long_line(void **state)
{
	char in[1600];
	char *got;
	struct pamconf_file f;

	(void)state;
	memset(in, 'a', sizeof(in));
	memcpy(in, "auth required pam_x.so ", 23);
	in[1500] = '\n';
	assert_int_equal(pamconf_parse(&deb15, in, 1501, &f), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(strlen(f.v[0].text), 1023);
	assert_int_equal(f.v[1].line, 1);	/* the same physical line */
	pamconf_file_free(&f);
	assert_int_equal(pamconf_parse(&deb16, in, 1501, &f), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.v[0].len, 1501);	/* the newline too */
	assert_int_equal(pamconf_argc(&f.v[0]), 1);
	assert_int_equal(strlen(pamconf_arg(&f.v[0], 0)), 1500 - 23);
	pamconf_file_free(&f);
	got = lines_of(&up16, in, 1501);
	assert_int_equal(strncmp(got, "1:auth required pam_x.so aaa", 28), 0);
	free(got);
}

/* Blank and comment lines inside a continued line: skipped by 1.5, the
 * end of the logical line from 1.6. */
static void test_continuation_through_blank_lines(void **state)
{
	(void)state;
	EXPECT(&deb15, "auth required pam_x.so \\\n\n   \n# c\narg=1\n",
	       "1:auth required pam_x.so  arg=1\n|");
	EXPECT(&deb16, "auth required pam_x.so \\\n\n   \n# c\narg=1\n",
	       "1:auth required pam_x.so  \n|5:arg=1\n|");
	/* a file that ends after a continued line and blank lines: 1.5
	 * gives up on it, 1.6 reads it */
	EXPECT(&deb15, "auth required pam_x.so \\\n\n  \n",
	       "end=1@3");
	EXPECT(&deb16, "auth required pam_x.so \\\n\n  \n",
	       "1:auth required pam_x.so  \n|");
	/* ending in the continued line itself: both give up */
	EXPECT(&deb16, "auth required pam_x.so \\\n", "end=1@1");
	EXPECT(&deb15, "auth required pam_x.so \\", "end=1@1");
	/* a comment line ending in a backslash continues nothing */
	EXPECT(&deb16, "# c \\\nauth required pam_x.so\n",
	       "2:auth required pam_x.so\n|");
	EXPECT(&deb15, "# c \\\nauth required pam_x.so\n",
	       "2:auth required pam_x.so\n|");
}

/* A NUL ends what libpam sees of a line; from 1.6 the bytes after it
 * still count for the continuation, which then takes the next line. */
static void test_nul_bytes(void **state)
{
	(void)state;
	EXPECT(&deb15, "account required pam_p.so\0\\\nsession required x\n",
	       "1:account required pam_p.so|2:session required x\n|");
	EXPECT(&deb16, "account required pam_p.so\0\\\nsession required x\n",
	       "1:account required pam_p.so|");
	EXPECT(&deb16, "\0auth required pam_deny.so\nauth required x\n",
	       "2:auth required x\n|");
}

/* A continued line that fills 1.5's buffer but for one byte makes libpam
 * loop for ever; 1.6 reads it. */
static void test_full_buffer(void **state)
{
	char in[1100];
	size_t n;
	struct pamconf_file f;

	(void)state;
	/* the backslash in the buffer's last byte but one (column 1022) */
	n = (size_t)snprintf(in, sizeof(in), "auth required pam_x.so a");
	memset(in + n, 'a', 1022 - n);
	memcpy(in + 1022, "\\\nauth required x\n", 18);
	assert_int_equal(pamconf_parse(&deb15, in, 1022 + 18, &f), 0);
	assert_int_equal(f.end, PAMCONF_END_HANG);
	pamconf_file_free(&f);
	assert_int_equal(pamconf_parse(&deb16, in, 1022 + 18, &f), 0);
	assert_int_equal(f.end, PAMCONF_END_OK);
	assert_int_equal(f.n, 1);
	pamconf_file_free(&f);
}

static enum pamconf_kind kind_of(const struct pamconf_rules *r,
				 const char *in)
{
	struct pamconf_file f;
	enum pamconf_kind k;

	assert_int_equal(pamconf_parse(r, in, strlen(in), &f), 0);
	assert_int_equal(f.n, 1);
	k = f.v[0].kind;
	pamconf_file_free(&f);
	return k;
}

/* Debian's libpam crashes on an include without a target; upstream fails
 * the line.  "@include" is Debian's only. */
static void test_debian_patches(void **state)
{
	(void)state;
	assert_int_equal(kind_of(&deb15, "auth include\n"), PAMCONF_CRASH);
	assert_int_equal(kind_of(&deb16, "auth substack\n"), PAMCONF_CRASH);
	assert_int_equal(kind_of(&up15, "auth include\n"), PAMCONF_FAILING);
	assert_int_equal(kind_of(&up16, "auth [SubStack]\n"), PAMCONF_FAILING);
	assert_int_equal(kind_of(&deb16, "-@Include x\n"), PAMCONF_AT_INCLUDE);
	assert_int_equal(kind_of(&deb15, "@include\n"), PAMCONF_CRASH);
	assert_int_equal(kind_of(&up15, "@include x\n"), PAMCONF_FAILING);
	assert_int_equal(kind_of(&up15, "auth required ?.so\n"), PAMCONF_STOP);
	assert_int_equal(kind_of(&deb16, "auth substack dir/\n"),
			 PAMCONF_STOP);
}

/* A jump past INT_MAX wraps up to 1.5 (libpam's int); from 1.6 it is an
 * error, and every code is "bad". */
static void test_jump_overflow(void **state)
{
	static const char in[] = "auth [success=4294967297 default=ignore] x\n";
	struct pamconf_file f;

	(void)state;
	assert_int_equal(pamconf_parse(&deb15, in, sizeof(in) - 1, &f), 0);
	assert_int_equal(f.v[0].act[0], 1);	/* wrapped: a jump over 1 */
	assert_int_equal(f.v[0].act[7], PWRAP_CONTROL_IGNORE);
	pamconf_file_free(&f);
	assert_int_equal(pamconf_parse(&up16, in, sizeof(in) - 1, &f), 0);
	assert_int_equal(f.v[0].act[0], PWRAP_CONTROL_BAD);
	assert_int_equal(f.v[0].act[7], PWRAP_CONTROL_BAD);
	pamconf_file_free(&f);
}

/* The rules themselves: the include limit comes with 1.6. */
static void test_rules(void **state)
{
	(void)state;
	assert_int_equal(deb15.line_buf, 1024);
	assert_int_equal(deb15.include_max, 0);
	assert_int_equal(up16.line_buf, 0);
	assert_int_equal(up16.include_max, 16);
	assert_true(deb16.at_include);
	assert_false(up16.at_include);
}

/* OpenPAM: words, quotes and escapes, no line limit; facility and flag
 * names compare exactly; an error is OpenPAM's failure of the policy. */
static void test_openpam(void **state)
{
	(void)state;
	EXPECT(&opam, "auth required pam_x.so 'a b' \"c\\\"d\" e\\ f # c\n"
		      "\n# only a comment\naccount \\\n  optional y.so\n",
	       "1:auth required pam_x.so a b c\"d e f|4:account optional y.so|");
	assert_int_equal(kind_of(&opam, "auth include other\n"),
			 PAMCONF_INCLUDE);
	assert_int_equal(kind_of(&opam, "Auth required x.so\n"), PAMCONF_STOP);
	assert_int_equal(kind_of(&opam, "auth include a/b\n"), PAMCONF_STOP);
	assert_int_equal(kind_of(&opam, "auth include a b\n"), PAMCONF_STOP);
	assert_int_equal(kind_of(&opam, "auth [default=ok] x.so\n"),
			 PAMCONF_STOP);
	assert_int_equal(kind_of(&opam, "auth binding /p/x.so a\n"),
			 PAMCONF_MODULE);
	EXPECT(&opam, "auth required x.so \"open\n", "1:auth required x.so open\n|end=1@2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_continuation_through_blank_lines),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_full_buffer),
		cmocka_unit_test(test_debian_patches),
		cmocka_unit_test(test_jump_overflow),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_openpam),
	};

	pamconf_rules_linux(&deb15, 105, true);
	pamconf_rules_linux(&up15, 105, false);
	pamconf_rules_linux(&deb16, 107, true);
	pamconf_rules_linux(&up16, 107, false);
	pamconf_rules_openpam(&opam, 2);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
