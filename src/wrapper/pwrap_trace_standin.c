/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_wrapper_trace.so, the module trace's forwarding stand-in.  A traced
 * copy of a stack names it (through a link named like the real module) in
 * every module line, with "pwrap_trace=N" as the first argument; each of
 * its functions hands the call to libpam_wrapper.so's
 * pam_wrapper_trace_call(), which runs the real module with the line's own
 * arguments and records the call (pwrap_trace.c).  It keeps no state and
 * links nothing but libdl: libpam loads and unloads it like any module.
 * Outside a wrapped process (nothing names it there) it fails every call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <stdio.h>
#include <syslog.h>

typedef int (*forward_fn)(int sm, pam_handle_t *pamh, int flags, int argc,
			  const char **argv);

/* The function numbers of pwrap_trace.h (enum pwrap_sm). */
enum { SM_AUTHENTICATE, SM_SETCRED, SM_ACCT_MGMT, SM_OPEN_SESSION,
       SM_CLOSE_SESSION, SM_CHAUTHTOK };

static int forward(int sm, pam_handle_t *pamh, int flags, int argc,
		   const char **argv)
{
	forward_fn fn;

	*(void **)&fn = dlsym(RTLD_DEFAULT, "pam_wrapper_trace_call");
	if (fn == NULL) {
		syslog(LOG_AUTHPRIV | LOG_ERR, "pam_wrapper_trace.so: "
		       "libpam_wrapper.so is not loaded; it is a stand-in of "
		       "the wrapper's module trace, not a module of its own");
		return PAM_SYSTEM_ERR;
	}
	return fn(sm, pamh, flags, argc, argv);
}

#define STANDIN(name, sm)                                                    \
	__attribute__((visibility("default"))) int name(                    \
		pam_handle_t *pamh, int flags, int argc, const char **argv) \
	{                                                                    \
		return forward((sm), pamh, flags, argc, argv);               \
	}

STANDIN(pam_sm_authenticate, SM_AUTHENTICATE)
STANDIN(pam_sm_setcred, SM_SETCRED)
STANDIN(pam_sm_acct_mgmt, SM_ACCT_MGMT)
STANDIN(pam_sm_open_session, SM_OPEN_SESSION)
STANDIN(pam_sm_close_session, SM_CLOSE_SESSION)
STANDIN(pam_sm_chauthtok, SM_CHAUTHTOK)
