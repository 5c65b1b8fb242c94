/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_explore_standin.so: the module `pamtest explore` puts in place of
 * every module of a stack when it replays paths on the real libpam.  Each
 * line names it with the argument pwrap_xp=<site> (which line it stands
 * for).  pamtest, in the same process, loads this module first and hands
 * it a plan through pwrap_xp_plan(): the calls it expects, in order, each
 * with the code to return.  Every call is recorded (site and function),
 * and returns the planned code when it is the expected call, else
 * PAM_SYSTEM_ERR (the replay then reports the disagreement).  Without a
 * plan (the module used on its own) every call fails with PAM_SERVICE_ERR.
 *
 * The plan and its record belong to the caller; this module only keeps a
 * pointer to them between pwrap_xp_plan() calls.
 */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <stdlib.h>
#include <string.h>

#include "explore_plan.h"

#define EXPORT __attribute__((visibility("default")))

static struct pwrap_xp_plan *plan;

EXPORT void pwrap_xp_plan(struct pwrap_xp_plan *p)
{
	plan = p;
}

static int call(int fn, int argc, const char **argv)
{
	int site = -1;
	size_t k;

	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "pwrap_xp=", 9) == 0)
			site = atoi(argv[i] + 9);
	if (plan == NULL)
		return PAM_SERVICE_ERR;
	k = plan->ncalls++;
	if (k < plan->cap) {
		plan->seen_site[k] = site;
		plan->seen_fn[k] = fn;
	}
	if (k < plan->n && plan->site[k] == site && plan->fn[k] == fn)
		return plan->code[k];
	return PAM_SYSTEM_ERR;
}

EXPORT int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc,
			       const char **argv)
{
	(void)pamh;
	(void)flags;
	return call(PWRAP_XP_AUTHENTICATE, argc, argv);
}

EXPORT int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc,
			  const char **argv)
{
	(void)pamh;
	(void)flags;
	return call(PWRAP_XP_SETCRED, argc, argv);
}

EXPORT int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc,
			    const char **argv)
{
	(void)pamh;
	(void)flags;
	return call(PWRAP_XP_ACCT_MGMT, argc, argv);
}

EXPORT int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc,
			       const char **argv)
{
	(void)pamh;
	(void)flags;
	return call(PWRAP_XP_OPEN_SESSION, argc, argv);
}

EXPORT int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc,
				const char **argv)
{
	(void)pamh;
	(void)flags;
	return call(PWRAP_XP_CLOSE_SESSION, argc, argv);
}

EXPORT int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc,
			    const char **argv)
{
	(void)pamh;
	return call(flags & PAM_PRELIM_CHECK ? PWRAP_XP_PRELIM : PWRAP_XP_UPDATE,
		    argc, argv);
}
