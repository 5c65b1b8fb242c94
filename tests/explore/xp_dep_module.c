/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test modules of pamtest explore's "loadable" (tests/explore): one source
 * built three times against a library of its own (xp_dep_lib.c), so that
 * libpam's dlopen() finds the library (through the module's run path), does
 * not find it (no run path to where it is), or finds one that lacks the
 * symbol version the module needs.  Every function succeeds, having called
 * the library: libpam gives PAM_MODULE_UNKNOWN only when dlopen() fails.
 */
#include <security/pam_modules.h>

int xp_dep_fn(void);

#define SM(name)                                                          \
	PAM_EXTERN int name(pam_handle_t *pamh, int flags, int argc,      \
			    const char **argv)                            \
	{                                                                 \
		(void)pamh;                                               \
		(void)flags;                                              \
		(void)argc;                                               \
		(void)argv;                                               \
		return xp_dep_fn() == 42 ? PAM_SUCCESS : PAM_SYSTEM_ERR;  \
	}

SM(pam_sm_authenticate)
SM(pam_sm_setcred)
SM(pam_sm_acct_mgmt)
SM(pam_sm_open_session)
SM(pam_sm_close_session)
SM(pam_sm_chauthtok)
