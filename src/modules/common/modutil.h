/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by our four test modules (pam_matrix, pam_chatty,
 * pam_set_items, pam_get_items): exporting the PAM entry points from a
 * library built with hidden visibility, one-message conversations that
 * always hand the application a valid response pointer, and option parsing.
 * pwrap_add_module (src/modules/CMakeLists.txt) compiles modutil.c into
 * every module and puts this directory on its include path: each module is
 * a self-contained .so, nothing is shared at run time.
 */
#ifndef PWRAP_MODUTIL_H
#define PWRAP_MODUTIL_H

#include <stddef.h>

#include <security/pam_modules.h>

/* Modules are built with -fvisibility=hidden; only entry points get out. */
#define PWRAP_EXPORT __attribute__((visibility("default")))

/* Defines the PAM entry point SM_NAME as a call of FN with the same
 * arguments. */
#define PWRAP_ENTRY(sm_name, fn)                                          \
	PWRAP_EXPORT int sm_name(pam_handle_t *pamh, int flags, int argc,  \
				 const char **argv)                        \
	{                                                                  \
		return fn(pamh, flags, argc, argv);                        \
	}

/* All six entry points forwarding to FN (modules that do the same thing
 * whatever the management group). */
#define PWRAP_ALL_ENTRY_POINTS(fn)                 \
	PWRAP_ENTRY(pam_sm_authenticate, fn)       \
	PWRAP_ENTRY(pam_sm_setcred, fn)            \
	PWRAP_ENTRY(pam_sm_acct_mgmt, fn)          \
	PWRAP_ENTRY(pam_sm_open_session, fn)       \
	PWRAP_ENTRY(pam_sm_close_session, fn)      \
	PWRAP_ENTRY(pam_sm_chauthtok, fn)

/*
 * Sends one message of STYLE with TEXT through the application's
 * conversation function.  When ANSWER is not NULL the reply is stored there
 * (malloc'd, owned by the caller, who must release it with
 * pwrap_free_secret()); a response whose string is NULL gives PAM_SUCCESS
 * and *ANSWER NULL, and *CAUSE (when CAUSE is not NULL) says so.  Fails
 * with the conversation's own error, or PAM_CONV_ERR when there is no
 * conversation function or (ANSWER not NULL) no response at all; *CAUSE
 * then names which, for the log.  Replies we do not keep are wiped and
 * freed here.
 */
int pwrap_conv_one(pam_handle_t *pamh, int style, const char *text,
		   char **answer, const char **cause);

/* Wipes a NUL-terminated secret and frees it; NULL is fine. */
void pwrap_free_secret(char *s);

/* If ARG is "NAME=value", returns a pointer to value, else NULL. */
const char *pwrap_opt_value(const char *arg, const char *name);

#endif
