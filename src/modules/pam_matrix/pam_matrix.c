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
 *   setcred   puts CRED=/tmp/<user> into the PAM environment (removes it
 *             for PAM_DELETE_CRED)
 *   password  PRELIM_CHECK verifies the old password, UPDATE_AUTHTOK asks
 *             for the new one twice and rewrites the user's lines
 *
 * Every group needs PAM_USER and a passdb it can read.  Options:
 * passdb=PATH (else $PAM_MATRIX_PASSWD), echo, verbose.  Return codes,
 * prompts and messages are those of upstream pam_wrapper's pam_matrix,
 * which applications' tests match on, except where upstream crashes,
 * corrupts or reports success for what it did not do (pam_matrix(8),
 * DIFFERENCES FROM UPSTREAM; tests/modules/table_*.c hold the facts).
 * Passwords we read are handed to
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

#include "matrix.h"
#include "modutil.h"
#include "passdb.h"

#define PM_PROMPT_PASSWORD "Password: "
#define PM_PROMPT_OLD "Old password: "
#define PM_PROMPT_NEW "New Password :"
#define PM_PROMPT_VERIFY "Verify New Password :"
#define PM_MSG_OK "Authentication succeeded"
#define PM_MSG_FAILED "Authentication failed"
#define PM_MSG_MISMATCH "Passwords do not match"
#define PM_MSG_MUST_CHANGE "You are required to change your password immediately"

/*
 * Parses the module arguments as upstream does, but only whole names:
 * passdb=PATH (the last one counts; one with an empty PATH is no option,
 * as upstream reads it), echo, verbose.  Unknown arguments are logged and
 * ignored.  Our opt-in as=MODULE (the first as= counts) makes every other
 * argument an option of that module (pam_matrix_as.c).
 */
static void pm_parse_opts(pam_handle_t *pamh, int argc, const char **argv,
			  struct pm_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (int i = 0; i < argc && o->as == NULL; i++) {
		const char *v = pwrap_opt_value(argv[i], "as");

		if (v != NULL && *v != '\0') {
			o->as = v;
		}
	}
	for (int i = 0; i < argc; i++) {
		const char *v = pwrap_opt_value(argv[i], "passdb");

		if (pwrap_opt_value(argv[i], "as") != NULL) {
			continue;
		} else if (o->as != NULL && v == NULL &&
			   pm_as_option(pamh, o, argv[i])) {
			continue;
		} else if (v != NULL && *v == '\0') {
			pam_syslog(pamh, LOG_WARNING,
				   "option passdb= without a path ignored");
		} else if (v != NULL) {
			o->passdb = v;
		} else if (strcmp(argv[i], "echo") == 0) {
			o->echo = true;
		} else if (strcmp(argv[i], "verbose") == 0) {
			o->verbose = true;
		} else {
			pam_syslog(pamh, LOG_WARNING,
				   "unknown option \"%s\" ignored", argv[i]);
		}
	}
}

/* The user name the application gave; we never prompt for one.  The
 * empty name is a name (of the passdb lines that start with ':'). */
static int pm_get_user(pam_handle_t *pamh, const char **user)
{
	const void *item = NULL;
	int rv = pam_get_item(pamh, PAM_USER, &item);

	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (item == NULL) {
		pam_syslog(pamh, LOG_ERR, "no user name (PAM_USER is unset)");
		return PAM_BAD_ITEM;
	}
	*user = item;
	return PAM_SUCCESS;
}

/* The common start of every group: options, user, then which passdb (the
 * option, else $PAM_MATRIX_PASSWD; none is PAM_AUTHINFO_UNAVAIL).  In
 * as= mode the user is asked for when unset, as the system's modules do. */
int pm_begin(pam_handle_t *pamh, int argc, const char **argv,
	     struct pm_opts *o, const char **user)
{
	int rv;

	pm_parse_opts(pamh, argc, argv, o);
	rv = o->as != NULL ? pam_get_user(pamh, user, NULL)
			   : pm_get_user(pamh, user);
	if (rv != PAM_SUCCESS) {
		return rv;
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

/* Compares without an early exit, so timing does not tell the prefix. */
bool pm_secret_equal(const char *a, size_t alen, const char *b, size_t blen)
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

/*
 * Asks PROMPT (echo as the options say).  PAM_SUCCESS with *ANSWER the
 * reply, or NULL when the application answered a NULL string; otherwise
 * the conversation failed.  Both are logged with their cause (a NULL
 * string is not a failed conversation).
 */
static int pm_ask(pam_handle_t *pamh, const struct pm_opts *o,
		  const char *user, const char *prompt, char **answer)
{
	const char *cause = NULL;
	int rv = pwrap_conv_one(pamh,
				o->echo ? PAM_PROMPT_ECHO_ON
					: PAM_PROMPT_ECHO_OFF,
				prompt, answer, &cause);

	if (rv != PAM_SUCCESS) {
		pam_syslog(pamh, LOG_ERR, "no answer to \"%s\" for user %s: "
			   "%s (%s)", prompt, user, cause ? cause : "?",
			   pam_strerror(pamh, rv));
	} else if (*answer == NULL) {
		pam_syslog(pamh, LOG_ERR, "no answer to \"%s\" for user %s: %s",
			   prompt, user, cause ? cause : "NULL string");
	}
	return rv;
}

/* The verbose option's report of a check: sent whatever becomes of it. */
static void pm_report_outcome(pam_handle_t *pamh, const struct pm_opts *o,
			      bool ok)
{
	if (o->verbose) {
		(void)pwrap_conv_one(pamh, ok ? PAM_TEXT_INFO : PAM_ERROR_MSG,
				     ok ? PM_MSG_OK : PM_MSG_FAILED, NULL,
				     NULL);
	}
}

/*
 * Looks USER up, asks for the password with PROMPT, stores the answer as
 * ITEM for the modules after us, and checks it, as upstream does: a passdb
 * that cannot be read fails before the prompt (PAM_AUTHINFO_UNAVAIL), a
 * failed conversation gives PAM_AUTHINFO_UNAVAIL, a NULL answer
 * PAM_CRED_ERR, an unknown user or a wrong password PAM_AUTH_ERR.  The
 * verbose report follows an answer (NULL too), never a failure before one.
 * *E gets the user's line (the caller frees it).
 */
static int pm_verify(pam_handle_t *pamh, const struct pm_opts *o,
		     const char *user, const char *prompt, int item,
		     struct pm_found *e)
{
	char *answer = NULL;
	int rv;

	rv = pm_passdb_lookup(pamh, o->passdb, user, e);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	rv = pm_ask(pamh, o, user, prompt, &answer);
	if (rv != PAM_SUCCESS) {
		return PAM_AUTHINFO_UNAVAIL;
	}
	if (answer == NULL) {
		rv = PAM_CRED_ERR;
		goto out;
	}
	rv = pam_set_item(pamh, item, answer);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (!e->found) {
		pam_syslog(pamh, LOG_NOTICE, "%s: unknown user %s", o->passdb,
			   user);
		rv = PAM_AUTH_ERR;
	} else if (!pm_secret_equal(e->pass, e->pass_len, answer,
				    strlen(answer))) {
		pam_syslog(pamh, LOG_NOTICE, "wrong password for user %s",
			   user);
		rv = PAM_AUTH_ERR;
	}
out:
	/* (a locked account is refused by the caller after this) */
	pm_report_outcome(pamh, o,
			  rv == PAM_SUCCESS && !(e->flags & PM_F_LOCKED));
	pwrap_free_secret(answer);
	return rv;
}

static int pm_authenticate(pam_handle_t *pamh, int flags, int argc,
			   const char **argv)
{
	struct pm_opts o;
	struct pm_found e = PM_FOUND_INIT;
	const char *user = NULL;
	int rv;

	rv = pm_begin(pamh, argc, argv, &o, &user);
	if (rv == PAM_SUCCESS && o.as != NULL) {
		return pm_as_authenticate(pamh, flags, &o, user);
	}
	if (rv == PAM_SUCCESS) {
		rv = pm_verify(pamh, &o, user, PM_PROMPT_PASSWORD, PAM_AUTHTOK,
			       &e);
	}
	if (rv == PAM_SUCCESS && (e.flags & PM_F_LOCKED)) {
		/* asked all the same: a locked account looks like any other
		 * failure to the one who tries */
		pam_syslog(pamh, LOG_NOTICE, "account of user %s is locked",
			   user);
		rv = PAM_AUTH_ERR;
	}
	pm_found_free(&e);
	return rv;
}

/* ASCII case-insensitive: libpam lowercases the service name it is
 * given, while passdb files often spell it as the application does. */
bool pm_service_equal(const char *field, size_t len, const char *service)
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
	if (o.as != NULL) {
		return pm_as_acct_mgmt(pamh, &o, user);
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
				     NULL, NULL);
		rv = PAM_NEW_AUTHTOK_REQD;
	} else {
		rv = PAM_SUCCESS;
	}
	pm_found_free(&e);
	return rv;
}

/* pam_putenv("NAME=<prefix><user>"). */
static int pm_putenv_user(pam_handle_t *pamh, const char *name,
			  const char *prefix, const char *user)
{
	char *s = NULL;
	int rv;

	if (asprintf(&s, "%s=%s%s", name, prefix, user) < 0) {
		return PAM_BUF_ERR;
	}
	rv = pam_putenv(pamh, s);
	free(s);
	return rv;
}

/* Removing a variable that is not set is not an error (upstream returns
 * PAM_BAD_ITEM).  OpenPAM cannot remove one (its pam_putenv wants
 * NAME=value): there it becomes empty. */
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

/*
 * The session and credential groups: like upstream they need a user and a
 * passdb that can be read (whoever the user is), then set or remove the
 * PAM environment variable NAME ("NAME=<prefix><user>").
 */
static int pm_env_group(pam_handle_t *pamh, int argc, const char **argv,
			const char *name, const char *prefix, bool set)
{
	struct pm_opts o;
	const char *user = NULL;
	int rv = pm_begin(pamh, argc, argv, &o, &user);

	if (rv == PAM_SUCCESS && o.as != NULL) {
		return pm_as_session(pamh, &o, user);
	}
	if (rv == PAM_SUCCESS) {
		rv = pm_passdb_check(pamh, o.passdb);
	}
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	return set ? pm_putenv_user(pamh, name, prefix, user)
		   : pm_unsetenv(pamh, name);
}

static int pm_open_session(pam_handle_t *pamh, int flags, int argc,
			   const char **argv)
{
	(void)flags;
	return pm_env_group(pamh, argc, argv, "HOMEDIR", "/home/", true);
}

static int pm_close_session(pam_handle_t *pamh, int flags, int argc,
			    const char **argv)
{
	(void)flags;
	return pm_env_group(pamh, argc, argv, "HOMEDIR", NULL, false);
}

/* PAM_DELETE_CRED removes CRED (upstream sets it then too, and says it
 * succeeded). */
static int pm_setcred(pam_handle_t *pamh, int flags, int argc,
		      const char **argv)
{
	return pm_env_group(pamh, argc, argv, "CRED", "/tmp/",
			    !(flags & PAM_DELETE_CRED));
}

void pm_data_cleanup(pam_handle_t *pamh, void *data, int status)
{
	(void)pamh;
	(void)status;
	free(data);
}

static int pm_locked(pam_handle_t *pamh, const struct pm_found *e,
		     const char *user)
{
	if (e->found && (e->flags & PM_F_LOCKED)) {
		pam_syslog(pamh, LOG_NOTICE,
			   "account of user %s is locked: no password change",
			   user);
		return PAM_PERM_DENIED;
	}
	return PAM_SUCCESS;
}

/* PRELIM_CHECK: verify the old password and remember who passed.  A
 * locked account is refused like acct_mgmt refuses it, once the old
 * password is right. */
static int pm_chauthtok_prelim(pam_handle_t *pamh, int argc,
			       const char **argv)
{
	struct pm_opts o;
	struct pm_found e = PM_FOUND_INIT;
	const char *user = NULL;
	int rv;

	rv = pm_begin(pamh, argc, argv, &o, &user);
	if (rv == PAM_SUCCESS) {
		rv = pm_verify(pamh, &o, user, PM_PROMPT_OLD, PAM_OLDAUTHTOK,
			       &e);
	}
	if (rv == PAM_SUCCESS) {
		rv = pm_locked(pamh, &e, user);
	}
	pm_found_free(&e);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	return pm_remember_prelim(pamh, user);
}

int pm_remember_prelim(pam_handle_t *pamh, const char *user)
{
	char *who = strdup(user);
	int rv;

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

/*
 * The checks of UPDATE_AUTHTOK before it asks, in upstream's order: the
 * old password item (unset: PAM_AUTHINFO_UNAVAIL), the preliminary
 * check's data (the pam_get_data error), the options, user and passdb;
 * then ours: the same user as in the preliminary check, not locked.
 */
static int pm_update_begin(pam_handle_t *pamh, int argc, const char **argv,
			   struct pm_opts *o, const char **user)
{
	struct pm_found e = PM_FOUND_INIT;
	const void *old = NULL;
	const void *who = NULL;
	int rv;

	if (pam_get_item(pamh, PAM_OLDAUTHTOK, &old) != PAM_SUCCESS ||
	    old == NULL) {
		pam_syslog(pamh, LOG_ERR,
			   "password update without the old password "
			   "(PAM_OLDAUTHTOK is unset)");
		return PAM_AUTHINFO_UNAVAIL;
	}
	rv = pam_get_data(pamh, PM_DATA_KEY, &who);
	if (rv != PAM_SUCCESS) {
		pam_syslog(pamh, LOG_ERR,
			   "password update without a preliminary check");
		return rv;
	}
	rv = pm_begin(pamh, argc, argv, o, user);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (who == NULL || strcmp(who, *user) != 0) {
		pam_syslog(pamh, LOG_ERR,
			   "user changed since the preliminary check");
		return PAM_AUTHTOK_ERR;
	}
	rv = pm_passdb_lookup(pamh, o->passdb, *user, &e);
	if (rv == PAM_SUCCESS) {
		rv = pm_locked(pamh, &e, *user);
	}
	pm_found_free(&e);
	return rv;
}

/* UPDATE_AUTHTOK: ask for the new password twice and store it.  As
 * upstream: a failed conversation, a NULL verification or two different
 * answers give PAM_AUTHINFO_UNAVAIL; a NULL new password is
 * PAM_AUTHTOK_ERR (upstream says PAM_SUCCESS and changes nothing). */
static int pm_chauthtok_update(pam_handle_t *pamh, int argc,
			       const char **argv)
{
	struct pm_opts o;
	const char *user = NULL;
	char *pw1 = NULL;
	char *pw2 = NULL;
	int rv;

	rv = pm_update_begin(pamh, argc, argv, &o, &user);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	rv = pm_ask(pamh, &o, user, PM_PROMPT_NEW, &pw1);
	if (rv == PAM_SUCCESS && pw1 == NULL) {
		rv = PAM_AUTHTOK_ERR;
		goto out;
	}
	if (rv == PAM_SUCCESS) {
		rv = pm_ask(pamh, &o, user, PM_PROMPT_VERIFY, &pw2);
	}
	if (rv != PAM_SUCCESS || pw2 == NULL) {
		rv = PAM_AUTHINFO_UNAVAIL;
		goto out;
	}
	if (strcmp(pw1, pw2) != 0) {
		(void)pwrap_conv_one(pamh, PAM_ERROR_MSG, PM_MSG_MISMATCH,
				     NULL, NULL);
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
	for (int i = 0; i < argc; i++) {
		const char *as = pwrap_opt_value(argv[i], "as");

		if (as != NULL && *as != '\0') {
			struct pm_opts o;
			const char *user = NULL;
			int rv = pm_begin(pamh, argc, argv, &o, &user);

			return rv == PAM_SUCCESS
				       ? pm_as_chauthtok(pamh, flags, &o, user)
				       : rv;
		}
	}
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
