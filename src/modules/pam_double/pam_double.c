/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_double: the test double `pam_wrapper --system` puts in the place of
 * a module that needs a system service or root and keeps no state a test
 * could own (pam_systemd, pam_loginuid, pam_selinux, ...; pam_wrapper(1),
 * SYSTEM STACKS).  It returns what the module returns on a working system,
 * as its line of the copy says:
 *
 *   pam_double.so as=pam_selinux auth=auth_err setcred=success
 *                 session=success -- <the line's own arguments>
 *
 * auth, setcred, account, session (open and close) and password name the
 * functions the real module has, each with its code (a PAM code's name,
 * with or without PAM_, any case); all=CODE gives every function that
 * code.  A function not named is one the real module lacks: the double
 * returns PAM_MODULE_UNKNOWN, which is what libpam makes of a missing
 * function.  Arguments after "--" are the replaced module's and are not
 * read.  as= names the module in the log.  Nothing else is done: no
 * message, no item, no file; the wrapper's trace records each call.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include <security/pam_appl.h>
#include "pam_compat.h"
#include <security/pam_modules.h>

#include "modutil.h"

enum pd_fn { PD_AUTH, PD_SETCRED, PD_ACCOUNT, PD_SESSION, PD_PASSWORD, PD_N };

static const char *const pd_fn_names[PD_N] = {
	"auth", "setcred", "account", "session", "password",
};

/* The codes a double may be told to return. */
static const struct {
	const char *name;
	int code;
} pd_codes[] = {
	{ "SUCCESS", PAM_SUCCESS },
	{ "IGNORE", PAM_IGNORE },
	{ "AUTH_ERR", PAM_AUTH_ERR },
	{ "PERM_DENIED", PAM_PERM_DENIED },
	{ "USER_UNKNOWN", PAM_USER_UNKNOWN },
	{ "AUTHINFO_UNAVAIL", PAM_AUTHINFO_UNAVAIL },
	{ "CRED_ERR", PAM_CRED_ERR },
	{ "CRED_UNAVAIL", PAM_CRED_UNAVAIL },
	{ "SESSION_ERR", PAM_SESSION_ERR },
	{ "AUTHTOK_ERR", PAM_AUTHTOK_ERR },
	{ "ACCT_EXPIRED", PAM_ACCT_EXPIRED },
	{ "NEW_AUTHTOK_REQD", PAM_NEW_AUTHTOK_REQD },
	{ "SERVICE_ERR", PAM_SERVICE_ERR },
	{ "SYSTEM_ERR", PAM_SYSTEM_ERR },
	{ "MODULE_UNKNOWN", PAM_MODULE_UNKNOWN },
};

/* The code called NAME, or -1. */
static int pd_code(const char *name)
{
	if (strncasecmp(name, "PAM_", 4) == 0) {
		name += 4;
	}
	for (size_t i = 0; i < sizeof(pd_codes) / sizeof(pd_codes[0]); i++) {
		if (strcasecmp(pd_codes[i].name, name) == 0) {
			return pd_codes[i].code;
		}
	}
	return -1;
}

/* What function FN returns, from the arguments before "--"; a bad code
 * is logged and makes the function fail with PAM_SERVICE_ERR. */
static int pd_answer(pam_handle_t *pamh, enum pd_fn fn, int argc,
		     const char **argv)
{
	const char *as = "?";
	int rv = PAM_MODULE_UNKNOWN;

	for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *v = pwrap_opt_value(argv[i], pd_fn_names[fn]);

		if (v == NULL) {
			v = pwrap_opt_value(argv[i], "all");
		}
		if (pwrap_opt_value(argv[i], "as") != NULL) {
			as = pwrap_opt_value(argv[i], "as");
		} else if (v != NULL && (rv = pd_code(v)) < 0) {
			pam_syslog(pamh, LOG_ERR, "bad code in \"%s\"",
				   argv[i]);
			return PAM_SERVICE_ERR;
		}
	}
	pam_syslog(pamh, LOG_DEBUG, "standing in for %s: %s -> %s", as,
		   pd_fn_names[fn], pam_strerror(pamh, rv));
	return rv;
}

#define PD_ENTRY(sm_name, fn)                                              \
	PWRAP_EXPORT int sm_name(pam_handle_t *pamh, int flags, int argc,   \
				 const char **argv)                         \
	{                                                                   \
		(void)flags;                                                \
		return pd_answer(pamh, fn, argc, argv);                     \
	}

PD_ENTRY(pam_sm_authenticate, PD_AUTH)
PD_ENTRY(pam_sm_setcred, PD_SETCRED)
PD_ENTRY(pam_sm_acct_mgmt, PD_ACCOUNT)
PD_ENTRY(pam_sm_open_session, PD_SESSION)
PD_ENTRY(pam_sm_close_session, PD_SESSION)
PD_ENTRY(pam_sm_chauthtok, PD_PASSWORD)
