/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the service walk (src/pamconf/pamconf_service.c): how a
 * service's stacks are built from its files, for Linux-PAM up to 1.5 and
 * from 1.6 (with and without Debian's @include) and for OpenPAM, whatever
 * libpam the build has: the rules are passed in.  Each test writes its
 * files into a private directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "pamconf.h"
#include "testutil.h"

static struct pamconf_rules lp15, lp16, deb15, op;

/* The module dirs: one where "pam_here.so" (a plain file) is. */
static const char *dirs[2];

static void walk(const struct pamconf_rules *r, const char *dir,
		 const char *service, struct pamconf_service *s)
{
	struct pamconf_walk_ops ops = { .moddirs = dirs };

	assert_int_equal(pamconf_service_read(r, dir, service, &ops, s), 0);
}

/* "D:N" per entry of a stack: C a call, F a failing line, M a substack
 * mark; N the line. */
static char *shape(const struct pamconf_entries *e)
{
	char *out = calloc(e->n * 16 + 1, 1);

	for (size_t i = 0; i < e->n; i++) {
		sprintf(out + strlen(out), "%s%c%u", i ? " " : "",
			"CFM"[e->v[i].does], e->v[i].l->line);
	}
	return out;
}

static void assert_shape(const struct pamconf_entries *e, const char *want)
{
	char *got = shape(e);

	assert_string_equal(got, want);
	free(got);
}

static void test_groups_and_other(void **state)
{
	const char *d = *state;
	struct pamconf_service s;

	tu_write_text(d, "svc", "auth required pam_here.so\n"
				"account include inc\n"
				"bogus required pam_here.so\n"
				"session required\n");
	tu_write_text(d, "inc", "auth required pam_gone.so\n"
				"account sufficient pam_here.so x\n");
	tu_write_text(d, "other", "password required pam_here.so\n");
	walk(&lp15, d, "SVC", &s);	/* pam_start lowercases the name */
	assert_null(s.refused);
	assert_int_equal(s.service_file, 0);
	/* an unknown group goes to auth ("most sensitive"), a line without
	 * a module fails */
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "C1 F3");
	assert_shape(&s.conf[PWRAP_GROUP_ACCOUNT], "C2");
	assert_shape(&s.conf[PWRAP_GROUP_SESSION], "F4");
	assert_shape(&s.other[PWRAP_GROUP_PASSWORD], "C1");
	/* resolved where the module is, NULL where it is not */
	assert_non_null(s.conf[PWRAP_GROUP_AUTH].v[0].path);
	assert_string_equal(s.conf[PWRAP_GROUP_ACCOUNT].v[0].module,
			    "pam_here.so");
	assert_string_equal(s.files[s.conf[PWRAP_GROUP_ACCOUNT].v[0].file].show,
			    "inc");
	assert_int_equal(s.conf[PWRAP_GROUP_ACCOUNT].v[0].act[0],
			 PWRAP_CONTROL_DONE);
	pamconf_service_free(&s);
	/* no service file: only "other"; neither: pam_start fails */
	walk(&lp15, d, "nosuch", &s);
	assert_int_equal(s.service_file, -1);
	assert_shape(&s.other[PWRAP_GROUP_PASSWORD], "C1");
	pamconf_service_free(&s);
	tu_unlink_at(d, "other");
	walk(&lp15, d, "nosuch", &s);
	assert_non_null(strstr(s.refused, "neither"));
	pamconf_service_free(&s);
}

static void test_targets_not_files(void **state)
{
	const char *d = *state;
	char *fifo = tu_path(d, "fifo"), *sub = tu_subdir(d, "dir");
	char *text = NULL;
	struct pamconf_service s;
	time_t t0 = time(NULL);

	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* /dev/null and a directory read as empty, a missing file fails
	 * the including line */
	assert_true(asprintf(&text, "auth include /dev/null\n"
				    "auth include %s\n"
				    "auth substack missing\n"
				    "auth required pam_here.so\n", sub) > 0);
	tu_write_text(d, "svc", text);
	walk(&lp15, d, "svc", &s);
	assert_null(s.refused);
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "M3 F3 C4");
	pamconf_service_free(&s);
	/* a FIFO: refused at once, never opened */
	tu_write_text(d, "svc", "auth include fifo\n");
	walk(&lp15, d, "svc", &s);
	assert_non_null(strstr(s.refused, "svc:1: include target fifo is not "
					  "a file"));
	assert_true(time(NULL) - t0 < 60);
	pamconf_service_free(&s);
	/* the service file itself counts only as a regular file */
	tu_unlink_at(d, "svc");
	free(fifo);
	fifo = tu_path(d, "svc");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	tu_write_text(d, "other", "auth required pam_here.so\n");
	walk(&lp15, d, "svc", &s);
	assert_int_equal(s.service_file, -1);
	assert_shape(&s.other[PWRAP_GROUP_AUTH], "C1");
	pamconf_service_free(&s);
	free(fifo);
	free(sub);
	free(text);
}

/* include a1 ... a20 (each includes the next), then a module line. */
static void chain(const char *d, int n, const char *how)
{
	for (int i = 1; i <= n; i++) {
		char name[16], line[64];

		snprintf(name, sizeof(name), "a%d", i);
		if (i < n) {
			snprintf(line, sizeof(line), "auth %s a%d\n", how, i + 1);
		} else {
			snprintf(line, sizeof(line), "auth required pam_here.so\n");
		}
		tu_write_text(d, name, line);
	}
	tu_write_text(d, "svc", "auth include a1\n");
}

static void test_limits_by_version(void **state)
{
	const char *d = *state;
	struct pamconf_service s;

	/* 20 nested includes: up to 1.5 no limit; from 1.6 the 16th fails */
	chain(d, 20, "include");
	walk(&lp15, d, "svc", &s);
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "C1");
	pamconf_service_free(&s);
	walk(&lp16, d, "svc", &s);
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "F1");
	assert_non_null(strstr(s.conf[PWRAP_GROUP_AUTH].v[0].why, "deeper"));
	assert_string_equal(s.files[s.conf[PWRAP_GROUP_AUTH].v[0].file].show,
			    "a15");
	pamconf_service_free(&s);
	/* 20 nested substacks fail at 16 in both */
	chain(d, 20, "substack");
	walk(&lp15, d, "svc", &s);
	assert_int_equal(s.conf[PWRAP_GROUP_AUTH].n, 16 + 1);
	assert_int_equal(s.conf[PWRAP_GROUP_AUTH].v[16].does, PAMCONF_FAILS);
	pamconf_service_free(&s);
	/* a cycle: refused up to 1.5, read to the limit from 1.6 */
	tu_write_text(d, "svc", "auth include inc\n");
	tu_write_text(d, "inc", "auth required pam_here.so\nauth include svc\n");
	walk(&lp15, d, "svc", &s);
	assert_non_null(strstr(s.refused, "inc:2: an include cycle through svc"));
	pamconf_service_free(&s);
	walk(&lp16, d, "svc", &s);
	assert_null(s.refused);
	assert_int_equal(s.conf[PWRAP_GROUP_AUTH].n, 8 + 1);
	pamconf_service_free(&s);
}

static void test_lines_by_version(void **state)
{
	const char *d = *state;
	char text[1100 + 64];
	struct pamconf_service s;

	/* a line behind a comment that fills 1.5's buffer: 1.5 reads it */
	memset(text, 'x', 1023);
	text[0] = '#';
	snprintf(text + 1023, sizeof(text) - 1023,
		 "auth required pam_here.so\n");
	tu_write_text(d, "svc", text);
	walk(&lp15, d, "svc", &s);
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "C1");
	pamconf_service_free(&s);
	walk(&lp16, d, "svc", &s);
	assert_int_equal(s.conf[PWRAP_GROUP_AUTH].n, 0);
	pamconf_service_free(&s);
	/* a file ending in a continued line: pam_start fails */
	tu_write_text(d, "svc", "auth required pam_here.so \\\n");
	walk(&lp16, d, "svc", &s);
	assert_non_null(strstr(s.refused, "cannot read the service file"));
	pamconf_service_free(&s);
}

static void test_debian_at_include(void **state)
{
	const char *d = *state;
	struct pamconf_service s;

	tu_write_text(d, "svc", "@include common\nsession required pam_here.so\n");
	tu_write_text(d, "common", "auth required pam_here.so\n"
				   "account required pam_here.so\n");
	walk(&deb15, d, "svc", &s);
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "C1");
	assert_shape(&s.conf[PWRAP_GROUP_ACCOUNT], "C2");
	pamconf_service_free(&s);
	/* upstream: a line of an unknown group */
	walk(&lp15, d, "svc", &s);
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "F1");
	pamconf_service_free(&s);
	/* in the service file a failed @include fails pam_start; in an
	 * included file it cannot be told; without a target libpam crashes */
	tu_write_text(d, "svc", "@include nosuch\n");
	walk(&deb15, d, "svc", &s);
	assert_non_null(s.refused);
	pamconf_service_free(&s);
	tu_write_text(d, "svc", "auth include common\n");
	tu_write_text(d, "common", "@include nosuch\n");
	assert_int_equal(pamconf_service_read(&deb15, d, "svc", NULL, &s), -1);
	assert_non_null(strstr(s.error, "cannot be told"));
	pamconf_service_free(&s);
	tu_write_text(d, "svc", "@include\n");
	walk(&deb15, d, "svc", &s);
	assert_non_null(strstr(s.refused, "crashes"));
	pamconf_service_free(&s);
}

static void test_openpam_chains(void **state)
{
	const char *d = *state;
	struct pamconf_service s;

	tu_write_text(d, "svc", "auth include system\n"
				"session binding pam_here.so\n");
	tu_write_text(d, "system", "auth required pam_here.so\n"
				   "account optional pam_here.so\n"
				   "password BOGUS pam_here.so\n");
	tu_write_text(d, "other", "account required pam_here.so\n");
	walk(&op, d, "svc", &s);
	assert_null(s.refused);
	/* the included service's auth lines; account from "other"; the
	 * bad password line is skipped before its flag is looked at */
	assert_shape(&s.conf[PWRAP_GROUP_AUTH], "C1");
	assert_shape(&s.conf[PWRAP_GROUP_ACCOUNT], "");
	assert_shape(&s.other[PWRAP_GROUP_ACCOUNT], "C1");
	assert_int_equal(s.conf[PWRAP_GROUP_SESSION].v[0].flag,
			 PAMCONF_BINDING);
	pamconf_service_free(&s);
	/* an error of a line read fails pam_start; names keep their case */
	tu_write_text(d, "svc", "auth include system\npassword include system\n");
	walk(&op, d, "svc", &s);
	assert_non_null(strstr(s.refused, "system:3: missing or invalid "
					  "control flag"));
	pamconf_service_free(&s);
	tu_write_text(d, "svc", "auth include nosuch\n");
	walk(&op, d, "svc", &s);
	assert_non_null(strstr(s.refused, "included service nosuch not found"));
	pamconf_service_free(&s);
	walk(&op, d, "SVC", &s);
	assert_int_equal(s.service_file, -1);
	pamconf_service_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_groups_and_other,
						tu_setup_tmpdir, tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_targets_not_files,
						tu_setup_tmpdir, tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_limits_by_version,
						tu_setup_tmpdir, tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_lines_by_version,
						tu_setup_tmpdir, tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_debian_at_include,
						tu_setup_tmpdir, tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_openpam_chains,
						tu_setup_tmpdir, tu_teardown_tmpdir),
	};
	char *mods = tu_mkdtemp("walk-mods");
	char *here = tu_path(mods, "pam_here.so");
	char *here_op = tu_path(mods, "pam_here.so.2");
	int rc;

	tu_write_file(here, "", 0, 0644);
	tu_write_file(here_op, "", 0, 0644);
	dirs[0] = mods;
	pamconf_rules_linux(&lp15, 105, false);
	pamconf_rules_linux(&lp16, 106, false);
	pamconf_rules_linux(&deb15, 105, true);
	pamconf_rules_openpam(&op, 2);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	tu_rmtree(mods);
	free(here);
	free(here_op);
	free(mods);
	return rc;
}
