/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's PAM calls, interposed for the module trace: the final
 * result of pam_authenticate, pam_setcred, pam_acct_mgmt,
 * pam_open_session, pam_close_session and pam_chauthtok is written with
 * the records of its module calls, and pam_end closes the real modules the
 * trace loaded (after libpam's own pam_end, whose data cleanups may still
 * call into them).  While no transaction of the process is traced, each of
 * these is one atomic load and a tail call of libpam's function.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <security/pam_appl.h>

#include "pwrap_trace.h"

typedef int (*api_fn)(pam_handle_t *pamh, int flags);

#define END PWRAP_SM_COUNT	/* pam_end, after the six calls */
static api_fn fns[PWRAP_SM_COUNT + 1];

/* libpam's function i, looked up at first use.  No pthread_once (its
 * completion costs a futex call in every process): two threads racing
 * store the same value. */
static api_fn real_fn(int i)
{
	api_fn fn = __atomic_load_n(&fns[i], __ATOMIC_ACQUIRE);

	if (fn == NULL) {
		*(void **)&fn = pwrap_libpam_sym(
			i == END ? "pam_end"
				 : pwrap_sm_call((enum pwrap_sm)i));
		__atomic_store_n(&fns[i], fn, __ATOMIC_RELEASE);
	}
	return fn;
}

static int call(enum pwrap_sm sm, pam_handle_t *pamh, int flags)
{
	api_fn fn = real_fn(sm);
	int rc, saved;

	if (fn == NULL) {
		return PAM_SYSTEM_ERR;	/* no libpam (logged when looked up) */
	}
	if (!pwrap_trace_any() || !pwrap_trace_call_before(pamh)) {
		return fn(pamh, flags);
	}
	rc = fn(pamh, flags);
	saved = errno;	/* what libpam left is the application's */
	pwrap_trace_call_after(pamh, sm, flags, rc);
	errno = saved;
	return rc;
}

PWRAP_EXPORT int pam_authenticate(pam_handle_t *pamh, int flags)
{
	return call(PWRAP_SM_AUTHENTICATE, pamh, flags);
}

PWRAP_EXPORT int pam_setcred(pam_handle_t *pamh, int flags)
{
	return call(PWRAP_SM_SETCRED, pamh, flags);
}

PWRAP_EXPORT int pam_acct_mgmt(pam_handle_t *pamh, int flags)
{
	return call(PWRAP_SM_ACCT_MGMT, pamh, flags);
}

PWRAP_EXPORT int pam_open_session(pam_handle_t *pamh, int flags)
{
	return call(PWRAP_SM_OPEN_SESSION, pamh, flags);
}

PWRAP_EXPORT int pam_close_session(pam_handle_t *pamh, int flags)
{
	return call(PWRAP_SM_CLOSE_SESSION, pamh, flags);
}

PWRAP_EXPORT int pam_chauthtok(pam_handle_t *pamh, int flags)
{
	return call(PWRAP_SM_CHAUTHTOK, pamh, flags);
}

PWRAP_EXPORT int pam_end(pam_handle_t *pamh, int status)
{
	api_fn fn = real_fn(END);
	int rc, saved;

	if (fn == NULL) {
		return PAM_SYSTEM_ERR;
	}
	if (!pwrap_trace_any()) {
		return fn(pamh, status);
	}
	rc = fn(pamh, status);
	saved = errno;
	pwrap_trace_ended(pamh);
	errno = saved;
	return rc;
}
