/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The symbols libpam_wrapper.so interposes.  Preloaded, its unversioned
 * definitions bind the application's (versioned) references to libpam:
 *
 *   pam_start, pam_start_confdir  redirect the configuration to a private
 *                                 rewritten copy of PAM_WRAPPER_SERVICE_DIR
 *                                 (with pam_start_confdir, or, for a libpam
 *                                 without it, through pwrap_legacy.c);
 *   pam_set_item(PAM_SERVICE)     prepares the new service's file first, since
 *                                 libpam reloads the stack from the confdir;
 *   pam_syslog, pam_vsyslog       module log lines go to stderr as PWRAP lines
 *                                 (or to syslog with PAM_WRAPPER_USE_SYSLOG=1),
 *                                 with any authentication token masked;
 *   audit_open, cannot_audit      no kernel audit while wrapped (sshd and
 *                                 pam_unix need this as non-root);
 *   pam_wrapper_enabled           tells a program whether it is wrapped;
 *   pam_wrapper_runtime_dir       (ours) creates the runtime dir on demand.
 *
 * When PAM_WRAPPER is not '1' (or the process is AT_SECURE) every call goes
 * straight to the real function (said once when PAM_WRAPPER_SERVICE_DIR is
 * set: the test then runs on the system's configuration).  Nothing happens
 * at load time unless the wrapper is enabled and the program itself links
 * libpam.  (setuid and friends are in pwrap_uid.c.)
 *
 * Decision: an application that calls pam_start_confdir() itself while the
 * wrapper is enabled gets its confdir treated like PAM_WRAPPER_SERVICE_DIR
 * (same include and module-name resolution); with a NULL confdir it behaves
 * exactly like pam_start().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <security/pam_appl.h>
#if defined(PWRAP_OPENPAM)
#include <security/openpam.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/auxv.h>
#endif
#include <unistd.h>
#include <syslog.h>

#include "pwrap_private.h"
#include "pwrap_trace.h"

/* A setuid or setgid process (or one with file capabilities) must never
 * take its PAM configuration from the environment. */
static bool pwrap_secure_exec(void)
{
#if defined(__linux__)
	return getauxval(AT_SECURE) != 0;
#else
	return issetugid() != 0;
#endif
}

bool pwrap_enabled(void)
{
	const char *e = getenv("PAM_WRAPPER");

	return e != NULL && e[0] == '1' && !pwrap_secure_exec();
}

PWRAP_EXPORT int pam_wrapper_enabled(void);
int pam_wrapper_enabled(void)
{
	return pwrap_enabled() ? 1 : 0;
}

/*
 * Extension (not in upstream): creates the runtime directory now and returns
 * PAM_WRAPPER_RUNTIME_DIR, or NULL when the wrapper is not enabled.  For
 * programs that do not link libpam but want the directory before their first
 * pam_start (pypamtest calls it on import).  The string lives in the
 * environment; copy it.
 */
PWRAP_EXPORT const char *pam_wrapper_runtime_dir(void);
const char *pam_wrapper_runtime_dir(void)
{
	if (!pwrap_enabled()) {
		return NULL;
	}
	pwrap_runtime_now();
	return getenv("PAM_WRAPPER_RUNTIME_DIR");
}

__attribute__((constructor)) static void pwrap_constructor(void)
{
	if (pwrap_enabled()) {
		pwrap_runtime_early();
	}
}

/*
 * Preloaded with a service directory but not enabled: pass-through, as
 * upstream does, but a test that forgot PAM_WRAPPER=1 would silently run
 * on the system's configuration, so it is said, once per process (a
 * forked child does not repeat it) and only in a process that uses PAM.
 */
static void say_not_enabled(const char *entry, const char *confdir)
{
	static int said;
	const char *dir = getenv("PAM_WRAPPER_SERVICE_DIR");
	const char *v;

	if (dir == NULL || dir[0] == '\0' || pwrap_secure_exec() ||
	    __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) != 0) {
		return;
	}
	v = getenv("PAM_WRAPPER");
	pwrap_log(PWRAP_LOG_NOTICE, entry, "libpam_wrapper.so is preloaded and "
		  "PAM_WRAPPER_SERVICE_DIR=%s is set, but PAM_WRAPPER is "
		  "%s%.16s%s (not '1'): not wrapped, libpam reads %s%s", dir,
		  v != NULL ? "'" : "unset", v != NULL ? v : "",
		  v != NULL ? "'" : "",
		  confdir != NULL ? confdir : "the system's PAM configuration",
		  confdir != NULL ? " (the application's confdir)" : "");
}

/* Whether the last pam_start of this process was wrapped: libpam calls
 * audit_open() at every PAM call of a transaction, and answering from this
 * flag spares an environment scan each time (the transaction was started
 * wrapped, so its audit calls are answered as wrapped). */
static bool last_start_wrapped;

#if defined(PWRAP_OPENPAM)
/* Whether OpenPAM's pam_start takes the name: letters, digits, '.', '_'
 * and '-' (the portable file-name set), and '/' where an application
 * allowed it (OPENPAM_RESTRICT_SERVICE_NAME off; such a name is a path,
 * handled as before).  It refuses any other ("invalid service name",
 * PAM_SYSTEM_ERR) without opening a file. */
static bool openpam_takes(const char *service)
{
	return strspn(service, "abcdefghijklmnopqrstuvwxyz"
			       "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") ==
	       strlen(service);
}
#endif

static int start_prepared(const char *service, const char *user,
			  const struct pam_conv *conv, const char *app_confdir,
			  pam_handle_t **pamh)
{
	const struct pwrap_real *r = pwrap_real();
	char *confdir = NULL;
	unsigned long seen;
	int rc;

	__atomic_store_n(&last_start_wrapped, true, __ATOMIC_RELAXED);
	if (r->pam_start == NULL) {
		rc = PAM_ABORT;	/* no libpam (logged when looked up) */
		goto out;
	}
	if (r->pam_start_confdir == NULL || pwrap_force_legacy()) {
		/* libpam reads fixed paths: pwrap_legacy.c answers them */
#if defined(PWRAP_OPENPAM)
		if (service != NULL && !openpam_takes(service)) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "service name '%s': OpenPAM "
				  "refuses it (only letters, digits, '.', '_' "
				  "and '-')", service);
			rc = PAM_SYSTEM_ERR;	/* what OpenPAM says */
			goto out;
		}
#endif
		rc = pwrap_prepare(service, app_confdir, NULL);
		if (rc != PAM_SUCCESS) {
			goto out;
		}
		pwrap_legacy_start();
#if defined(PWRAP_OPENPAM)
		/* OpenPAM refuses modules below a world-writable directory
		 * (any build tree in /tmp), and policy files not owned by
		 * root or the euid (uid_wrapper fakes euid 0 while ours are
		 * the real user's): a test setup loads its own. */
		if (r->openpam_set_feature != NULL) {
			r->openpam_set_feature(OPENPAM_VERIFY_MODULE_FILE, 0);
			r->openpam_set_feature(OPENPAM_VERIFY_POLICY_FILE, 0);
		}
#endif
		seen = pwrap_legacy_seen();
		rc = r->pam_start(service, user, conv, (void **)pamh);
		PWRAP_LOG(PWRAP_LOG_TRACE, "pam_start(%s) on the legacy path "
			  "= %d", service, rc);
		if (pwrap_legacy_seen() == seen) {
			/* libpam read its configuration without us (another
			 * library's fopen comes first in LD_PRELOAD), or
			 * failed before reading any */
			PWRAP_LOG(PWRAP_LOG_ERROR, "libpam opened its "
				  "configuration without going through "
				  "libpam_wrapper.so (is another library that "
				  "defines fopen before it in LD_PRELOAD?); "
				  "transaction refused");
			if (rc == PAM_SUCCESS) {
				if (r->pam_end != NULL) {
					r->pam_end(*pamh, PAM_ABORT);
				}
				rc = PAM_ABORT;
			}
			goto out;
		}
		return rc;
	}
	rc = pwrap_prepare(service, app_confdir, &confdir);
	if (rc != PAM_SUCCESS) {
		goto out;
	}
	rc = r->pam_start_confdir(service, user, conv, confdir, (void **)pamh);
	PWRAP_LOG(PWRAP_LOG_TRACE, "pam_start_confdir(%s, %s) = %d", service,
		  confdir, rc);
	free(confdir);
	return rc;
out:
	if (pamh != NULL) {
		*pamh = NULL;
	}
	return rc;
}

/* A wrapped pam_start, recorded when PAM_WRAPPER_TRACE is set. */
static int pwrap_start(const char *service, const char *user,
		       const struct pam_conv *conv, const char *app_confdir,
		       pam_handle_t **pamh)
{
	bool traced = pwrap_trace_begin();
	int rc = start_prepared(service, user, conv, app_confdir, pamh);

	if (traced) {
		rc = pwrap_trace_started((void **)pamh, service, app_confdir,
					 rc);
	}
	return rc;
}

PWRAP_EXPORT int pam_start(const char *service_name, const char *user,
			   const struct pam_conv *pam_conversation,
			   pam_handle_t **pamh)
{
	const struct pwrap_real *r;

	if (pwrap_enabled()) {
		return pwrap_start(service_name, user, pam_conversation, NULL,
				   pamh);
	}
	__atomic_store_n(&last_start_wrapped, false, __ATOMIC_RELAXED);
	say_not_enabled("pam_start", NULL);
	r = pwrap_real();
	if (r->pam_start == NULL) {
		return PAM_ABORT;
	}
	return r->pam_start(service_name, user, pam_conversation,
			    (void **)pamh);
}

PWRAP_EXPORT int pam_start_confdir(const char *service_name, const char *user,
				   const struct pam_conv *pam_conversation,
				   const char *confdir, pam_handle_t **pamh)
{
	const struct pwrap_real *r;

	if (pwrap_enabled()) {
		return pwrap_start(service_name, user, pam_conversation,
				   confdir, pamh);
	}
	__atomic_store_n(&last_start_wrapped, false, __ATOMIC_RELAXED);
	say_not_enabled("pam_start_confdir", confdir);
	r = pwrap_real();
	if (r->pam_start_confdir == NULL) {
		return PAM_ABORT;
	}
	return r->pam_start_confdir(service_name, user, pam_conversation,
				    confdir, (void **)pamh);
}

PWRAP_EXPORT int pam_set_item(pam_handle_t *pamh, int item_type,
			      const void *item)
{
	const struct pwrap_real *r = pwrap_real();

	if (item_type == PAM_SERVICE && item != NULL && pwrap_enabled()) {
		const char *name = item;

		/* libpam opens <confdir>/<name> as given (only pam_start cuts
		 * a path off): a name with a '/' could leave the test setup,
		 * one starting with '/' names a system file; "." and ".." are
		 * directories, and two names are the wrapper's own. */
		if (!pwrap_name_is_service(name)) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "pam_set_item(PAM_SERVICE, "
				  "\"%s\") refused: a service name is a file "
				  "name in the service directory (no '/', not "
				  "empty, not . or .., not .inc or .m, which the "
				  "wrapper keeps for itself)", name);
			return PAM_BAD_ITEM;
		}
		/* libpam reloads the stack for the new name from the same
		 * confdir: make sure that file is there.  Errors are logged;
		 * libpam then reports the missing configuration itself.
		 * (OpenPAM refuses a new name after pam_start: nothing to
		 * prepare.) */
#if !defined(PWRAP_OPENPAM)
		pwrap_trace_resume(pamh);
		(void)pwrap_prepare(item, NULL, NULL);
#endif
	}
	if (r->pam_set_item == NULL) {
		return PAM_SYSTEM_ERR;
	}
	return r->pam_set_item(pamh, item_type, item);
}

static enum pwrap_dbglvl syslog_level(int priority)
{
	switch (priority & LOG_PRIMASK) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return PWRAP_LOG_ERROR;
	case LOG_WARNING:
		return PWRAP_LOG_WARN;
	case LOG_NOTICE:
	case LOG_INFO:
		return PWRAP_LOG_DEBUG;
	default:
		return PWRAP_LOG_TRACE;
	}
}

/* A priority without a facility gets LOG_AUTHPRIV, as libpam's lines do. */
static int with_facility(int priority)
{
	return (priority & LOG_FACMASK) != 0 ? priority
					     : (priority | LOG_AUTHPRIV);
}

/* Calls libpam's pam_vsyslog with a va_list made here.  (libpam's own
 * pam_syslog would call back into our pam_vsyslog.) */
static void real_vsyslog_args(const struct pwrap_real *r, const void *pamh,
			      int priority, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void real_vsyslog_args(const struct pwrap_real *r, const void *pamh,
			      int priority, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->pam_vsyslog(pamh, priority, fmt, ap);
	va_end(ap);
}

/*
 * The whole message of a module's log call, formatted: into buf (cap
 * bytes) when it fits, else into a malloc'd buffer of its size (*heap, of
 * *hcap bytes, the caller's to wipe and free even when NULL is returned),
 * so that the password is masked in all of it before anything is cut.
 * NULL when it cannot be formatted whole.
 */
__attribute__((format(printf, 3, 0)))
static char *format_whole(char *buf, size_t cap, const char *fmt, va_list ap,
			  char **heap, size_t *hcap)
{
	char *msg = buf;
	va_list again;
	int n;

	*heap = NULL;
	*hcap = 0;
	va_copy(again, ap);
	n = vsnprintf(buf, cap, fmt, ap);
	if (n >= 0 && (size_t)n >= cap) {
		/* what buf holds is cut, perhaps inside the password */
		explicit_bzero(buf, cap);
		msg = *heap = malloc((size_t)n + 1);
		if (msg != NULL) {
			*hcap = (size_t)n + 1;
			n = vsnprintf(msg, *hcap, fmt, again);
		}
	}
	va_end(again);
	return n < 0 ? NULL : msg;
}

PWRAP_EXPORT void pam_vsyslog(const pam_handle_t *pamh, int priority,
			      const char *fmt, va_list args)
{
	const struct pwrap_real *r = pwrap_real();
	const void *tok = NULL;
	const void *oldtok = NULL;
	const char *use_syslog;
	char buf[2048];
	char *heap = NULL;
	char *msg;
	size_t hcap = 0;
	struct pwrap_buf masked = { 0 };
	const char *shown;
	const char *secrets[2] = { NULL, NULL };
	char func[32];
	va_list ap;

	va_copy(ap, args);
	if (!pwrap_enabled()) {
		/* (OpenPAM has no pam_vsyslog: its modules' lines, which
		 * come here through their fallback, go to syslog) */
		if (r->pam_vsyslog != NULL) {
			r->pam_vsyslog(pamh, priority, fmt, ap);
		} else {
			vsyslog(with_facility(priority), fmt, ap);
		}
		goto out;
	}
	/* Passwords never reach a log line, whatever a module prints: the
	 * whole message is masked first, and only then cut to a line. */
	msg = format_whole(buf, sizeof(buf), fmt, ap, &heap, &hcap);
	if (msg == NULL) {
		msg = buf;
		snprintf(buf, sizeof(buf), "(a message that could not be "
			 "formatted whole, so not masked: not shown)");
	}
	if (pamh != NULL && r->pam_get_item != NULL) {
		if (r->pam_get_item(pamh, PAM_AUTHTOK, &tok) == PAM_SUCCESS) {
			secrets[0] = tok;
		}
		if (r->pam_get_item(pamh, PAM_OLDAUTHTOK, &oldtok) ==
		    PAM_SUCCESS) {
			secrets[1] = oldtok;
		}
	}
	(void)pwrap_buf_masked(&masked, msg, strlen(msg), SIZE_MAX, secrets, 2);
	shown = masked.failed || masked.p == NULL ?
		"(out of memory, so not masked: not shown)" : masked.p;
	use_syslog = getenv("PAM_WRAPPER_USE_SYSLOG");
	if (use_syslog != NULL && use_syslog[0] == '1') {
		/* The masked text goes to libpam's own pam_vsyslog (which
		 * adds the module prefix) as an argument, never as a format. */
		if (r->pam_vsyslog != NULL) {
			real_vsyslog_args(r, pamh, priority, "%s", shown);
		} else {
			syslog(with_facility(priority), "%s", shown);
		}
	} else {
		snprintf(func, sizeof(func), "SYSLOG(%d)",
			 priority & LOG_PRIMASK);
		pwrap_log(syslog_level(priority), func, "%s", shown);
	}
	explicit_bzero(buf, sizeof(buf));
	if (heap != NULL) {
		explicit_bzero(heap, hcap);
		free(heap);
	}
	pwrap_buf_free(&masked);
out:
	va_end(ap);
}

PWRAP_EXPORT void pam_syslog(const pam_handle_t *pamh, int priority,
			     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pam_vsyslog(pamh, priority, fmt, ap);
	va_end(ap);
}

PWRAP_EXPORT int audit_open(void);
int audit_open(void)
{
	const struct pwrap_real *r;

	if (!__atomic_load_n(&last_start_wrapped, __ATOMIC_RELAXED) &&
	    !pwrap_enabled()) {
		r = pwrap_real();
		if (r->audit_open != NULL) {
			return r->audit_open();
		}
	}
	errno = EPROTONOSUPPORT;
	return -1;
}

PWRAP_EXPORT int cannot_audit(int is_kernel);
int cannot_audit(int is_kernel)
{
	(void)is_kernel;
	return 1;
}
