/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix: a test PAM module for all four management groups, backed by
 * a plain "user:password:service" file (the passdb, see passdb.h).
 *
 *   auth      prompts "Password: " and checks it against the passdb
 *   account   allows the user only for the service named in its line;
 *             the line's optional flags (locked, expired, must_change)
 *             give PAM_PERM_DENIED, PAM_ACCT_EXPIRED, PAM_NEW_AUTHTOK_REQD
 *   session   open puts HOMEDIR=/home/<user> into the PAM environment,
 *             close removes it
 *   setcred   puts CRED=/tmp/<user> into the PAM environment
 *   password  PRELIM_CHECK verifies the old password, UPDATE_AUTHTOK asks
 *             for the new one twice and rewrites the passdb
 *
 * Options: passdb=PATH (else $PAM_MATRIX_PASSWD), echo, verbose.  The
 * prompts and messages are those of upstream pam_wrapper's pam_matrix,
 * which applications' tests match on.  Passwords we read are handed to
 * libpam as PAM_AUTHTOK/PAM_OLDAUTHTOK (libpam keeps its own copy, which we
 * never touch again) and our own copies are wiped before they are freed.
 * Every lookup reads the passdb anew (passdb.h) and the module keeps no
 * state of its own, so libpam may unload it at every pam_end and it needs
 * no care for threads or fork().
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_appl.h>
#include "pam_compat.h"
#include <security/pam_modules.h>

#include "modutil.h"
#include "passdb.h"

#define PM_DATA_KEY "pam_matrix:auth_data"

#define PM_PROMPT_PASSWORD "Password: "
#define PM_PROMPT_OLD "Old password: "
#define PM_PROMPT_NEW "New Password :"
#define PM_PROMPT_VERIFY "Verify New Password :"
#define PM_MSG_OK "Authentication succeeded"
#define PM_MSG_FAILED "Authentication failed"
#define PM_MSG_MISMATCH "Passwords do not match"
#define PM_MSG_MUST_CHANGE "You are required to change your password immediately"

struct pm_opts {
	const char *passdb; /* borrowed from argv or the environment */
	bool echo;
	bool verbose;
};

/*
 * Parses the module arguments.  Unknown arguments are logged and ignored;
 * "passdb=" with an empty path is a configuration error (PAM_SERVICE_ERR)
 * rather than a silent fallback to $PAM_MATRIX_PASSWD.  A missing passdb is
 * PAM_AUTHINFO_UNAVAIL.
 */
static int pm_parse_opts(pam_handle_t *pamh, int argc, const char **argv,
			 struct pm_opts *o)
{
	bool bad_passdb = false;

	o->passdb = NULL;
	o->echo = false;
	o->verbose = false;

	/* All arguments are read even after an error, so that "verbose"
	 * still reports the failure. */
	for (int i = 0; i < argc; i++) {
		const char *v = pwrap_opt_value(argv[i], "passdb");

		if (v != NULL) {
			bad_passdb = *v == '\0';
			o->passdb = bad_passdb ? NULL : v;
		} else if (strcmp(argv[i], "echo") == 0) {
			o->echo = true;
		} else if (strcmp(argv[i], "verbose") == 0) {
			o->verbose = true;
		} else {
			pam_syslog(pamh, LOG_WARNING,
				   "unknown option \"%s\" ignored", argv[i]);
		}
	}
	if (bad_passdb) {
		pam_syslog(pamh, LOG_ERR, "option passdb= needs a path");
		return PAM_SERVICE_ERR;
	}
	if (o->passdb == NULL) {
		const char *env = getenv("PAM_MATRIX_PASSWD");

		if (env == NULL || *env == '\0') {
			pam_syslog(pamh, LOG_ERR,
				   "no passdb: give passdb=PATH or set "
				   "PAM_MATRIX_PASSWD");
			return PAM_AUTHINFO_UNAVAIL;
		}
		o->passdb = env;
	}
	return PAM_SUCCESS;
}

/* The user name the application gave; we never prompt for one. */
static int pm_get_user(pam_handle_t *pamh, const char **user)
{
	const void *item = NULL;
	int rv = pam_get_item(pamh, PAM_USER, &item);

	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (item == NULL || *(const char *)item == '\0') {
		pam_syslog(pamh, LOG_ERR, "no user name (PAM_USER is unset)");
		return PAM_BAD_ITEM;
	}
	*user = item;
	return PAM_SUCCESS;
}

/* Options and user, the common start of auth, account and password. */
static int pm_begin(pam_handle_t *pamh, int argc, const char **argv,
		    struct pm_opts *o, const char **user)
{
	int rv = pm_parse_opts(pamh, argc, argv, o);

	if (rv != PAM_SUCCESS) {
		return rv;
	}
	return pm_get_user(pamh, user);
}

/* Compares without an early exit, so timing does not tell the prefix. */
static bool pm_secret_equal(const char *a, size_t alen, const char *b,
			    size_t blen)
{
	unsigned char diff = 0;

	if (alen != blen) {
		return false;
	}
	for (size_t i = 0; i < alen; i++) {
		diff |= (unsigned char)(a[i] ^ b[i]);
	}
	return diff == 0;
}

static int pm_prompt_style(const struct pm_opts *o)
{
	return o->echo ? PAM_PROMPT_ECHO_ON : PAM_PROMPT_ECHO_OFF;
}

/*
 * Asks for USER's password with PROMPT, stores the answer as ITEM for the
 * modules after us, and checks it against the passdb.  An unknown user is
 * asked too and fails like a wrong password.
 */
static int pm_verify(pam_handle_t *pamh, const struct pm_opts *o,
		     const char *user, const char *prompt, int item)
{
	struct pm_found e = PM_FOUND_INIT;
	char *answer = NULL;
	int rv;

	rv = pm_passdb_lookup(pamh, o->passdb, user, &e);
	if (rv != PAM_SUCCESS) {
		goto out;
	}

	rv = pwrap_conv_one(pamh, pm_prompt_style(o), prompt, &answer);
	if (rv != PAM_SUCCESS) {
		pam_syslog(pamh, LOG_ERR, "no password for user %s: %s", user,
			   pam_strerror(pamh, rv));
		rv = PAM_CRED_ERR;
		goto out;
	}
	rv = pam_set_item(pamh, item, answer);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (!e.found) {
		pam_syslog(pamh, LOG_NOTICE, "%s: unknown user %s", o->passdb,
			   user);
		rv = PAM_AUTH_ERR;
	} else if (!pm_secret_equal(e.pass, e.pass_len, answer,
				    strlen(answer))) {
		pam_syslog(pamh, LOG_NOTICE, "wrong password for user %s",
			   user);
		rv = PAM_AUTH_ERR;
	} else if (item == PAM_AUTHTOK && (e.flags & PM_F_LOCKED)) {
		/* asked all the same: a locked account looks like any other
		 * failure to the one who tries */
		pam_syslog(pamh, LOG_NOTICE, "account of user %s is locked",
			   user);
		rv = PAM_AUTH_ERR;
	}
out:
	pwrap_free_secret(answer);
	pm_found_free(&e);
	return rv;
}

static int pm_authenticate(pam_handle_t *pamh, int flags, int argc,
			   const char **argv)
{
	struct pm_opts o;
	const char *user = NULL;
	int rv;

	(void)flags;
	rv = pm_begin(pamh, argc, argv, &o, &user);
	if (rv == PAM_SUCCESS) {
		rv = pm_verify(pamh, &o, user, PM_PROMPT_PASSWORD,
			       PAM_AUTHTOK);
	}
	if (o.verbose) {
		/* The outcome is reported even if the message fails. */
		(void)pwrap_conv_one(pamh,
				     rv == PAM_SUCCESS ? PAM_TEXT_INFO
						       : PAM_ERROR_MSG,
				     rv == PAM_SUCCESS ? PM_MSG_OK
						       : PM_MSG_FAILED,
				     NULL);
	}
	return rv;
}

/* ASCII case-insensitive: libpam lowercases the service name it is
 * given, while passdb files often spell it as the application does. */
static bool pm_service_equal(const char *field, size_t len,
			     const char *service)
{
	if (strlen(service) != len) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char a = (unsigned char)field[i];
		unsigned char b = (unsigned char)service[i];

		if (a >= 'A' && a <= 'Z') {
			a = (unsigned char)(a - 'A' + 'a');
		}
		if (b >= 'A' && b <= 'Z') {
			b = (unsigned char)(b - 'A' + 'a');
		}
		if (a != b) {
			return false;
		}
	}
	return true;
}

static int pm_acct_mgmt(pam_handle_t *pamh, int flags, int argc,
			const char **argv)
{
	struct pm_opts o;
	struct pm_found e = PM_FOUND_INIT;
	const char *user = NULL;
	const void *service = NULL;
	int rv;

	(void)flags;
	rv = pm_begin(pamh, argc, argv, &o, &user);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	rv = pam_get_item(pamh, PAM_SERVICE, &service);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	rv = pm_passdb_lookup(pamh, o.passdb, user, &e);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	rv = PAM_PERM_DENIED;
	if (!e.found) {
		pam_syslog(pamh, LOG_NOTICE, "%s: unknown user %s", o.passdb,
			   user);
	} else if (service == NULL ||
		   !pm_service_equal(e.service, e.service_len, service)) {
		pam_syslog(pamh, LOG_NOTICE,
			   "user %s is not allowed to use service %s", user,
			   service ? (const char *)service : "(none)");
	} else if (e.flags & PM_F_LOCKED) {
		pam_syslog(pamh, LOG_NOTICE, "account of user %s is locked",
			   user);
	} else if (e.flags & PM_F_EXPIRED) {
		pam_syslog(pamh, LOG_NOTICE, "account of user %s has expired",
			   user);
		rv = PAM_ACCT_EXPIRED;
	} else if (e.flags & PM_F_MUST_CHANGE) {
		pam_syslog(pamh, LOG_NOTICE, "user %s must change the password",
			   user);
		(void)pwrap_conv_one(pamh, PAM_TEXT_INFO, PM_MSG_MUST_CHANGE,
				     NULL);
		rv = PAM_NEW_AUTHTOK_REQD;
	} else {
		rv = PAM_SUCCESS;
	}
	pm_found_free(&e);
	return rv;
}

/* pam_putenv("NAME=<prefix><user>"). */
static int pm_putenv_user(pam_handle_t *pamh, const char *name,
			  const char *prefix)
{
	const char *user = NULL;
	char *s = NULL;
	int rv = pm_get_user(pamh, &user);

	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (asprintf(&s, "%s=%s%s", name, prefix, user) < 0) {
		return PAM_BUF_ERR;
	}
	rv = pam_putenv(pamh, s);
	free(s);
	return rv;
}

/* Removing a variable that is not set is not an error.  OpenPAM cannot
 * remove one (its pam_putenv wants NAME=value): there it becomes empty. */
static int pm_unsetenv(pam_handle_t *pamh, const char *name)
{
	if (pam_getenv(pamh, name) == NULL) {
		return PAM_SUCCESS;
	}
#if defined(PWRAP_OPENPAM)
	{
		char s[64];

		if ((size_t)snprintf(s, sizeof(s), "%s=", name) >= sizeof(s)) {
			return PAM_BUF_ERR;
		}
		return pam_putenv(pamh, s);
	}
#else
	return pam_putenv(pamh, name);
#endif
}

static int pm_open_session(pam_handle_t *pamh, int flags, int argc,
			   const char **argv)
{
	(void)flags;
	(void)argc;
	(void)argv;
	return pm_putenv_user(pamh, "HOMEDIR", "/home/");
}

static int pm_close_session(pam_handle_t *pamh, int flags, int argc,
			    const char **argv)
{
	(void)flags;
	(void)argc;
	(void)argv;
	return pm_unsetenv(pamh, "HOMEDIR");
}

static int pm_setcred(pam_handle_t *pamh, int flags, int argc,
		      const char **argv)
{
	(void)argc;
	(void)argv;
	if (flags & PAM_DELETE_CRED) {
		return pm_unsetenv(pamh, "CRED");
	}
	return pm_putenv_user(pamh, "CRED", "/tmp/");
}

static void pm_data_cleanup(pam_handle_t *pamh, void *data, int status)
{
	(void)pamh;
	(void)status;
	free(data);
}

/* PRELIM_CHECK: verify the old password and remember who passed. */
static int pm_chauthtok_prelim(pam_handle_t *pamh, int argc,
			       const char **argv)
{
	struct pm_opts o;
	const char *user = NULL;
	char *who = NULL;
	int rv;

	rv = pm_begin(pamh, argc, argv, &o, &user);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	rv = pm_verify(pamh, &o, user, PM_PROMPT_OLD, PAM_OLDAUTHTOK);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	who = strdup(user);
	if (who == NULL) {
		return PAM_BUF_ERR;
	}
	/* libpam owns WHO from here on, and frees it at pam_end. */
	rv = pam_set_data(pamh, PM_DATA_KEY, who, pm_data_cleanup);
	if (rv != PAM_SUCCESS) {
		free(who);
	}
	return rv;
}

/* UPDATE_AUTHTOK: ask for the new password twice and store it. */
static int pm_chauthtok_update(pam_handle_t *pamh, int argc,
			       const char **argv)
{
	struct pm_opts o;
	const void *who = NULL;
	const char *user = NULL;
	char *pw1 = NULL;
	char *pw2 = NULL;
	int rv;

	rv = pam_get_data(pamh, PM_DATA_KEY, &who);
	if (rv != PAM_SUCCESS) {
		pam_syslog(pamh, LOG_ERR,
			   "password update without a preliminary check");
		return rv;
	}
	rv = pm_begin(pamh, argc, argv, &o, &user);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (who == NULL || strcmp(who, user) != 0) {
		pam_syslog(pamh, LOG_ERR,
			   "user changed since the preliminary check");
		return PAM_AUTHTOK_ERR;
	}
	rv = pwrap_conv_one(pamh, pm_prompt_style(&o), PM_PROMPT_NEW, &pw1);
	if (rv == PAM_SUCCESS) {
		rv = pwrap_conv_one(pamh, pm_prompt_style(&o),
				    PM_PROMPT_VERIFY, &pw2);
	}
	if (rv != PAM_SUCCESS) {
		pam_syslog(pamh, LOG_ERR, "no new password for user %s: %s",
			   user, pam_strerror(pamh, rv));
		rv = PAM_AUTHTOK_ERR;
		goto out;
	}
	if (strcmp(pw1, pw2) != 0) {
		(void)pwrap_conv_one(pamh, PAM_ERROR_MSG, PM_MSG_MISMATCH,
				     NULL);
		rv = PAM_AUTHINFO_UNAVAIL;
		goto out;
	}
	rv = pm_passdb_set_password(pamh, o.passdb, user, pw1);
	if (rv == PAM_SUCCESS) {
		rv = pam_set_item(pamh, PAM_AUTHTOK, pw1);
	}
out:
	pwrap_free_secret(pw1);
	pwrap_free_secret(pw2);
	return rv;
}

static int pm_chauthtok(pam_handle_t *pamh, int flags, int argc,
			const char **argv)
{
	if (flags & PAM_PRELIM_CHECK) {
		return pm_chauthtok_prelim(pamh, argc, argv);
	}
	if (flags & PAM_UPDATE_AUTHTOK) {
		return pm_chauthtok_update(pamh, argc, argv);
	}
	pam_syslog(pamh, LOG_ERR,
		   "chauthtok without PAM_PRELIM_CHECK or PAM_UPDATE_AUTHTOK");
	return PAM_SYSTEM_ERR;
}

PWRAP_ENTRY(pam_sm_authenticate, pm_authenticate)
PWRAP_ENTRY(pam_sm_setcred, pm_setcred)
PWRAP_ENTRY(pam_sm_acct_mgmt, pm_acct_mgmt)
PWRAP_ENTRY(pam_sm_open_session, pm_open_session)
PWRAP_ENTRY(pam_sm_close_session, pm_close_session)
PWRAP_ENTRY(pam_sm_chauthtok, pm_chauthtok)
