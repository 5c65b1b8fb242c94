/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix as=MODULE: a double of one of a system's account sources
 * (pam_unix, pam_sss, ...), which `pam_wrapper --system` puts in its place
 * (pam_wrapper(1), SYSTEM STACKS).  The line's own arguments follow ours
 * and keep the meaning the replaced module gives them, as far as a test's
 * passdb can have it (pam_matrix(8), AS A DOUBLE):
 *
 *   - use_first_pass, try_first_pass, use_authtok, authtok_type=: the
 *     tokens are read with libpam's own pam_get_authtok(), which reads
 *     these arguments of the line itself, as pam_unix does;
 *   - nullok (pam_unix): an empty passdb password logs in without a
 *     prompt; without it, it never logs in;
 *   - ignore_unknown_user (pam_sss, pam_ldap): PAM_IGNORE for users the
 *     passdb does not know;
 *   - remember=N (pam_unix's password history, kept in /etc): no double
 *     can keep it, so a password change says so and fails;
 *   - obscure, minlen= (pam_unix's strength checks): not made (logged).
 *
 * The codes are the replaced module's: PAM_USER_UNKNOWN for a user the
 * passdb does not know, pam_unix's prompts (libpam's "Password: ",
 * "Current password: ", "New password: ", "Retype new password: "), root
 * (getuid() 0, e.g. under uid_wrapper) changes a password without the old
 * one.  A passdb line whose service is "*" is the user's for every
 * service.  Upstream's pam_matrix is unchanged: only as= selects this.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include "pam_compat.h"
#include <security/pam_modules.h>

#include "matrix.h"
#include "modutil.h"
#include "passdb.h"

/* pam_unix's MAX_PASSWD_TRIES: how often it asks for an acceptable new
 * password. */
#define PM_AS_TRIES 3

/* pam_unix's options that change nothing a test's passdb can show (hash
 * methods, logging, delays, where it would write). */
static const char *const pm_unix_inert[] = {
	"debug", "audit", "nodelay", "likeauth", "noreap", "shadow", "nis",
	"broken_shadow", "md5", "bigcrypt", "sha256", "sha512", "blowfish",
	"gost_yescrypt", "yescrypt", "des", "no_pass_expiry", "nullresetok",
	NULL,
};

static bool pm_in(const char *const *list, const char *arg)
{
	for (size_t i = 0; list[i] != NULL; i++) {
		if (strcmp(list[i], arg) == 0) {
			return true;
		}
	}
	return false;
}

bool pm_as_option(pam_handle_t *pamh, struct pm_opts *o, const char *arg)
{
	bool unix_ = strcmp(o->as, "pam_unix") == 0;
	const char *v;

	(void)pamh;
	if (strcmp(arg, "use_first_pass") == 0 ||
	    strcmp(arg, "use_authtok") == 0) {
		o->use_stack = true;
		return true;	/* read by libpam's pam_get_authtok() */
	}
	if (strcmp(arg, "try_first_pass") == 0 ||
	    pwrap_opt_value(arg, "authtok_type") != NULL) {
		return true;	/* the same */
	}
	if ((strcmp(o->as, "pam_sss") == 0 || strcmp(o->as, "pam_ldap") == 0) &&
	    strcmp(arg, "ignore_unknown_user") == 0) {
		o->ignore_unknown = true;
		return true;
	}
	if (!unix_) {
		return false;
	}
	if (strcmp(arg, "nullok") == 0) {
		o->nullok = true;
	} else if (strcmp(arg, "quiet") == 0) {
		o->quiet = true;
	} else if ((v = pwrap_opt_value(arg, "remember")) != NULL) {
		o->remember = strtol(v, NULL, 10);
		o->remember_arg = arg;
	} else if (strcmp(arg, "obscure") == 0 ||
		   pwrap_opt_value(arg, "minlen") != NULL) {
		o->unchecked = arg;
	} else if (pwrap_opt_value(arg, "rounds") == NULL &&
		   !pm_in(pm_unix_inert, arg)) {
		return false;
	}
	return true;
}

/* The code for a user the passdb does not know. */
static int pm_unknown(pam_handle_t *pamh, const struct pm_opts *o,
		      const char *user)
{
	pam_syslog(pamh, LOG_NOTICE, "%s: unknown user %s (as %s)", o->passdb,
		   user, o->as);
	return o->ignore_unknown ? PAM_IGNORE : PAM_USER_UNKNOWN;
}

/* An empty passdb password, on an account that is not locked. */
static bool pm_blank(const struct pm_found *e)
{
	return e->found && e->pass_len == 0 && !(e->flags & PM_F_LOCKED);
}

/* Checks the token against USER's line: PAM_SUCCESS or PAM_AUTH_ERR. */
static int pm_check(pam_handle_t *pamh, const struct pm_opts *o,
		    const struct pm_found *e, const char *user,
		    const char *tok)
{
	if (e->flags & PM_F_LOCKED) {
		pam_syslog(pamh, LOG_NOTICE, "account of user %s is locked",
			   user);
		return PAM_AUTH_ERR;
	}
	if (e->pass_len == 0 && !o->nullok) {
		pam_syslog(pamh, LOG_NOTICE, "user %s has an empty password "
			   "and the line has no nullok", user);
		return PAM_AUTH_ERR;
	}
	if (!pm_secret_equal(e->pass, e->pass_len, tok, strlen(tok))) {
		pam_syslog(pamh, LOG_NOTICE, "wrong password for user %s",
			   user);
		return PAM_AUTH_ERR;
	}
	return PAM_SUCCESS;
}

int pm_as_authenticate(pam_handle_t *pamh, int flags, const struct pm_opts *o,
		       const char *user)
{
	struct pm_found e = PM_FOUND_INIT;
	const char *tok = NULL;
	int rv;

	(void)flags;	/* pam_unix: nullok wins over DISALLOW_NULL_AUTHTOK */
	rv = pm_passdb_lookup(pamh, o->passdb, user, &e);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (o->nullok && pm_blank(&e)) {
		rv = PAM_SUCCESS;	/* no password, so no prompt */
		goto out;
	}
	/* asked before the user is checked, as pam_unix does */
	rv = pam_get_authtok(pamh, PAM_AUTHTOK, &tok, NULL);
	if (rv != PAM_SUCCESS) {
#if defined(PAM_CONV_AGAIN) && defined(PAM_INCOMPLETE)
		rv = rv == PAM_CONV_AGAIN ? PAM_INCOMPLETE : rv;  /* Linux-PAM */
#endif
		goto out;
	}
	rv = e.found ? pm_check(pamh, o, &e, user, tok)
		     : pm_unknown(pamh, o, user);
out:
	pm_found_free(&e);
	return rv;
}

int pm_as_acct_mgmt(pam_handle_t *pamh, const struct pm_opts *o,
		    const char *user)
{
	struct pm_found e = PM_FOUND_INIT;
	const void *service = NULL;
	int rv = pam_get_item(pamh, PAM_SERVICE, &service);

	if (rv == PAM_SUCCESS) {
		rv = pm_passdb_lookup(pamh, o->passdb, user, &e);
	}
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (!e.found) {
		rv = pm_unknown(pamh, o, user);
	} else if (!(e.service_len == 1 && e.service[0] == '*') &&
		   (service == NULL ||
		    !pm_service_equal(e.service, e.service_len, service))) {
		pam_syslog(pamh, LOG_NOTICE,
			   "user %s is not allowed to use service %s", user,
			   service ? (const char *)service : "(none)");
		rv = PAM_PERM_DENIED;
	} else if (e.flags & PM_F_LOCKED) {
		pam_syslog(pamh, LOG_NOTICE, "account of user %s is locked",
			   user);
		rv = PAM_PERM_DENIED;
	} else if (e.flags & PM_F_EXPIRED) {
		rv = PAM_ACCT_EXPIRED;
	} else if (e.flags & PM_F_MUST_CHANGE) {
		(void)pwrap_conv_one(pamh, PAM_ERROR_MSG,
				     "You are required to change your password "
				     "immediately (administrator enforced).",
				     NULL, NULL);
		rv = PAM_NEW_AUTHTOK_REQD;
	}
	pm_found_free(&e);
	return rv;
}

int pm_as_session(pam_handle_t *pamh, const struct pm_opts *o,
		  const char *user)
{
	(void)pamh;
	(void)o;
	(void)user;
	return PAM_SUCCESS;	/* pam_unix only logs "session opened" */
}

/* PRELIM_CHECK: the old password, unless the caller is root or the
 * password is empty with nullok; records who passed. */
static int pm_as_prelim(pam_handle_t *pamh, int flags, const struct pm_opts *o,
			const char *user, const struct pm_found *e)
{
	bool root = getuid() == 0 && !(flags & PAM_CHANGE_EXPIRED_AUTHTOK);
	int rv = PAM_SUCCESS;

	if (e->flags & PM_F_LOCKED) {
		pam_syslog(pamh, LOG_NOTICE, "account of user %s is locked: "
			   "no password change", user);
		return PAM_PERM_DENIED;
	}
	if (!(o->nullok && pm_blank(e)) && !root) {
		const char *old = NULL;
		char *msg = NULL;

		if (!o->quiet && !(flags & PAM_SILENT) &&
		    asprintf(&msg, "Changing password for %s.", user) >= 0) {
			(void)pwrap_conv_one(pamh, PAM_TEXT_INFO, msg, NULL,
					     NULL);
			free(msg);
		}
		rv = pam_get_authtok(pamh, PAM_OLDAUTHTOK, &old, NULL);
		if (rv != PAM_SUCCESS) {
			return rv;
		}
		rv = pm_check(pamh, o, e, user, old);
	}
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	return pm_remember_prelim(pamh, user);
}

/* Whether pam_unix accepts NEW after OLD (its checks without obscure). */
static int pm_as_approve(pam_handle_t *pamh, const char *old, const char *new)
{
	const char *why = NULL;

	if (*new == '\0') {
		why = "No password has been supplied.";
	} else if (old != NULL && strcmp(old, new) == 0) {
		why = "The password has not been changed.";
	}
	if (why == NULL) {
		return PAM_SUCCESS;
	}
	(void)pwrap_conv_one(pamh, PAM_ERROR_MSG, why, NULL, NULL);
	pam_set_item(pamh, PAM_AUTHTOK, NULL);
	return PAM_AUTHTOK_ERR;
}

/* UPDATE_AUTHTOK: the new password (up to three tries unless it must come
 * from the stack), then the passdb. */
static int pm_as_update(pam_handle_t *pamh, const struct pm_opts *o,
			const char *user, bool given)
{
	const void *who = NULL, *old = NULL;
	const char *new = NULL;
	int rv = pam_get_data(pamh, PM_DATA_KEY, &who);

	if (rv != PAM_SUCCESS || who == NULL || strcmp(who, user) != 0) {
		pam_syslog(pamh, LOG_ERR, "password update without a "
			   "preliminary check of user %s", user);
		return rv != PAM_SUCCESS ? rv : PAM_AUTHTOK_ERR;
	}
	if (o->unchecked != NULL) {
		pam_syslog(pamh, LOG_WARNING, "%s's option %s: its checks of "
			   "the new password are not made by the double",
			   o->as, o->unchecked);
	}
	(void)pam_get_item(pamh, PAM_OLDAUTHTOK, &old);
	rv = PAM_AUTHTOK_ERR;
	for (int tries = given ? PM_AS_TRIES - 1 : 0;
	     rv != PAM_SUCCESS && tries < PM_AS_TRIES; tries++) {
		rv = pam_get_authtok(pamh, PAM_AUTHTOK, &new, NULL);
		if (rv != PAM_SUCCESS) {
			return rv;
		}
		rv = pm_as_approve(pamh, old, new);
	}
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	return pm_passdb_set_password(pamh, o->passdb, user, new);
}

int pm_as_chauthtok(pam_handle_t *pamh, int flags, const struct pm_opts *o,
		    const char *user)
{
	struct pm_found e = PM_FOUND_INIT;
	int rv = pm_passdb_lookup(pamh, o->passdb, user, &e);

	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (!e.found) {
		rv = pm_unknown(pamh, o, user);
	} else if (o->remember > 0) {
		pam_syslog(pamh, LOG_ERR, "%s's option %s (its password history "
			   "in /etc/security/opasswd) cannot be kept by the "
			   "double: drop the option from the test's copy",
			   o->as, o->remember_arg);
		rv = PAM_SERVICE_ERR;
	} else if (flags & PAM_PRELIM_CHECK) {
		rv = pm_as_prelim(pamh, flags, o, user, &e);
	} else if (flags & PAM_UPDATE_AUTHTOK) {
		rv = pm_as_update(pamh, o, user, o->use_stack);
	} else {
		pam_syslog(pamh, LOG_ERR, "chauthtok without PAM_PRELIM_CHECK "
			   "or PAM_UPDATE_AUTHTOK");
		rv = PAM_SYSTEM_ERR;
	}
	pm_found_free(&e);
	return rv;
}
