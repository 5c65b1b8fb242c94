/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The interface between `pamtest explore` and its stand-in module
 * (explore_standin.c): the calls one replay expects and what happened.
 * All arrays belong to the caller of pwrap_xp_plan().
 */
#ifndef PAMTEST_EXPLORE_PLAN_H
#define PAMTEST_EXPLORE_PLAN_H

#include <stddef.h>

/* Which module function was called. */
enum {
	PWRAP_XP_AUTHENTICATE = 1,
	PWRAP_XP_SETCRED,
	PWRAP_XP_ACCT_MGMT,
	PWRAP_XP_OPEN_SESSION,
	PWRAP_XP_CLOSE_SESSION,
	PWRAP_XP_PRELIM,	/* pam_sm_chauthtok with PAM_PRELIM_CHECK */
	PWRAP_XP_UPDATE,	/* and with PAM_UPDATE_AUTHTOK */
};

struct pwrap_xp_plan {
	/* expected calls */
	const int *site;
	const int *fn;
	const int *code;	/* what each returns */
	size_t n;
	/* what happened: the first cap calls, and how many there were */
	int *seen_site;
	int *seen_fn;
	size_t cap;
	size_t ncalls;
};

/* The module's entry point (looked up with dlsym). */
typedef void pwrap_xp_plan_fn(struct pwrap_xp_plan *p);

#endif
