/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs the differential table (table.h, rows in table_*.c, one row's
 * transaction in table_run.c) against the modules in $MT_TABLE_MODDIR:
 * ours (ctest test_module_table) or upstream's as Debian 12 and 13 ship
 * them, libpam-wrapper 1.1.4 and 1.1.7 (test_module_table_upstream_debian12
 * and _debian13, with MT_TABLE_UPSTREAM set: fetched into the build tree by
 * fetch_upstream.sh and loaded by absolute path; upstream_table.sh skips
 * them, saying why, when they could not be fetched).
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "table.h"
#include "testutil.h"

const char *tb_moddir;  /* modules under test */
const char *tb_testdir; /* test-only modules */
static bool tb_upstream;
static bool tb_verbose;

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
				 "step %d returned %d (%s), expected %d (%s)",
				 i + 1, o->codes[i],
				 pam_strerror(NULL, o->codes[i]), r->codes[i],
				 pam_strerror(NULL, r->codes[i]));
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
	tb_prepare(&x);
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
		if (access(path, R_OK) != 0 && tb_upstream) {
			/* upstream_table.sh found the package fetched */
			fprintf(stderr, "%s: %s (not in the package)\n",
				path, strerror(errno));
			return 1;
		}
		if (access(path, R_OK) != 0) {
			printf("SKIPPED: %s: %s (not built)\n", path,
			       strerror(errno));
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
