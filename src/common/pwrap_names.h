/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The name tables of PAM that the wrapper, the module trace, pamtest and
 * pamtest explore all print or parse: return codes, management groups and
 * the module functions (pam_sm_*) with the application calls that reach
 * them.  One copy each; the values are those of the PAM headers the tree is
 * built against (OpenPAM's extra codes in an OpenPAM build).  All tables are
 * static and read-only.
 */
#ifndef PWRAP_NAMES_H
#define PWRAP_NAMES_H

#include <stdbool.h>

/* The management groups ("module types"), in the order pam.d(5) lists
 * them after auth. */
enum pwrap_group {
	PWRAP_GROUP_AUTH,
	PWRAP_GROUP_ACCOUNT,
	PWRAP_GROUP_PASSWORD,
	PWRAP_GROUP_SESSION,
	PWRAP_GROUPS
};
/* "auth", "account", "password", "session"; NULL out of range. */
const char *pwrap_group_name(int group);
/* The group a word names (compared with case when `nocase` is false, as
 * OpenPAM does; without, as Linux-PAM does), or -1. */
int pwrap_group_parse(const char *word, bool nocase);

/* The module functions, in the order of the calls that reach them. */
enum pwrap_sm {
	PWRAP_SM_AUTHENTICATE,
	PWRAP_SM_SETCRED,
	PWRAP_SM_ACCT_MGMT,
	PWRAP_SM_OPEN_SESSION,
	PWRAP_SM_CLOSE_SESSION,
	PWRAP_SM_CHAUTHTOK,
	PWRAP_SM_COUNT
};
/* "pam_authenticate", ... (the application's call). */
const char *pwrap_sm_call(enum pwrap_sm sm);
/* "pam_sm_authenticate", ... (the module's function). */
const char *pwrap_sm_name(enum pwrap_sm sm);
/* The group the function belongs to. */
enum pwrap_group pwrap_sm_group(enum pwrap_sm sm);
/* The function a group's stack is first run with: pam_sm_authenticate,
 * pam_sm_acct_mgmt, pam_sm_chauthtok, pam_sm_open_session. */
enum pwrap_sm pwrap_group_sm(enum pwrap_group group);

/* "PAM_AUTH_ERR" for PAM_AUTH_ERR; NULL for a code the headers lack. */
const char *pwrap_code_name(int code);
/* The code a name gives, with or without its "PAM_" prefix (and the old
 * spelling PAM_AUTHTOK_RECOVER_ERR): 0 and *code, or -1. */
int pwrap_code_parse(const char *name, int *code);

#endif
