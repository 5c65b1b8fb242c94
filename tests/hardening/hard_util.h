/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What only the hardening tests need on top of testutil.h (which this
 * header includes): the hard_client program, a passdb full of lines a
 * rewrite must keep byte for byte, and the usual directory set-up of a
 * test.  They fail the running cmocka test on any error, so callers need
 * no checks.  Strings they return are malloc'd and owned by the caller.
 */
#ifndef HARD_UTIL_H
#define HARD_UTIL_H

#include "testutil.h"

/* The hard_client program (a static path; not to be freed). */
const char *hu_client(void);

/*
 * A passdb for N users "userNN" of service "hard", with comments, blank,
 * malformed, CRLF and too-many-field lines between them and a last line
 * without '\n', so that a rewrite that loses, duplicates or alters any
 * byte shows up in a plain comparison.  pw[i] is user i's password.
 */
char *hu_passdb_render(int n, char *const pw[]);
/* Service file text using pam_matrix with passdb=PATH for every group. */
char *hu_matrix_service(const char *passdb);

/*
 * The usual setup: TOP (private), TOP/db/passdb (empty, mode 0600),
 * TOP/svc/SERVICE (pam_matrix on that passdb for every group), TOP/tmp (the
 * children's TMPDIR) and ENV (a wrapped child's environment on those).
 * The strings and ENV belong to the fixture: hu_fixture_free frees them.
 */
struct hu_fixture {
	char *top, *db_dir, *passdb, *svc, *tmp;
	char **env;
};
void hu_fixture_init(struct hu_fixture *f, const char *service);
void hu_fixture_free(struct hu_fixture *f);	/* removes TOP */
/* Writes hu_passdb_render(N, PW) to F's passdb with MODE. */
void hu_fixture_passdb(const struct hu_fixture *f, int n, char *const pw[],
		       mode_t mode);
/* Whether OUT has the line "WHAT: RC" that the clients print for a return
 * code: RC as a number of the libpam under test (PAM_AUTH_ERR is 7 on
 * Linux-PAM, 9 on OpenPAM), so callers pass the PAM_* name. */
bool hu_has_rc(const char *out, const char *what, int rc);

#endif
