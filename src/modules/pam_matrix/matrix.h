/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What pam_matrix.c (upstream's behaviour) and pam_matrix_as.c (the opt-in
 * as=MODULE mode, a double of a system's account source) share: the parsed
 * options and the few steps both take.  Internal to the module.
 */
#ifndef PM_MATRIX_H
#define PM_MATRIX_H

#include <stdbool.h>
#include <stddef.h>

#include <security/pam_modules.h>

#include "passdb.h"

#define PM_DATA_KEY "pam_matrix:auth_data"

struct pm_opts {
	const char *passdb; /* borrowed from argv or the environment */
	bool echo;
	bool verbose;
	/* as=MODULE (pam_matrix_as.c); NULL: upstream's pam_matrix */
	const char *as;
	bool nullok;		/* pam_unix's nullok */
	bool ignore_unknown;	/* pam_sss's and pam_ldap's ignore_unknown_user */
	bool quiet;		/* pam_unix's quiet */
	bool use_stack;		/* use_first_pass or use_authtok: the new
				 * password comes from the stack, one try */
	long remember;		/* pam_unix's remember=N (0: none) */
	const char *remember_arg;
	const char *unchecked;	/* an option whose checks the double does not
				 * make (pam_unix's obscure, minlen=) */
};

/* Options, user, then which passdb (pam_matrix.c). */
int pm_begin(pam_handle_t *pamh, int argc, const char **argv,
	     struct pm_opts *o, const char **user);
/* Constant-time comparison of two secrets. */
bool pm_secret_equal(const char *a, size_t alen, const char *b, size_t blen);
/* A passdb service field against PAM_SERVICE, ignoring ASCII case. */
bool pm_service_equal(const char *field, size_t len, const char *service);
/* pam_set_data's cleanup of the preliminary check's record. */
void pm_data_cleanup(pam_handle_t *pamh, void *data, int status);
/* Records that USER passed the preliminary check (PM_DATA_KEY). */
int pm_remember_prelim(pam_handle_t *pamh, const char *user);

/* ---- as=MODULE (pam_matrix_as.c) ---------------------------------------- */

/* Whether ARG is an option of the module o->as names (setting what it
 * keeps); false: unknown to it. */
bool pm_as_option(pam_handle_t *pamh, struct pm_opts *o, const char *arg);
/* The six functions in as= mode, called after pm_begin succeeded. */
int pm_as_authenticate(pam_handle_t *pamh, int flags, const struct pm_opts *o,
		       const char *user);
int pm_as_acct_mgmt(pam_handle_t *pamh, const struct pm_opts *o,
		    const char *user);
int pm_as_session(pam_handle_t *pamh, const struct pm_opts *o,
		  const char *user);
int pm_as_chauthtok(pam_handle_t *pamh, int flags, const struct pm_opts *o,
		    const char *user);

#endif
