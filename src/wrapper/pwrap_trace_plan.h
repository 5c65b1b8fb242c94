/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A private interface of libpam_wrapper.so for pamtest explore's replay
 * (tools/explore/replay.c), not for tests: the module trace with a plan.
 * While a plan is set, traced transactions of the process load and call no
 * module of their stacks: every module line the trace rewrites names its
 * stand-in (whether libpam would find the module or not), each call asks
 * plan->call for the code to return, and on OpenPAM pam_start asks
 * plan->loads, for each line it read, whether its module would load (it
 * fails where one does not, as OpenPAM does).  A line too long to name the
 * stand-in in it (libpam's line buffer) is told to plan->unfit and fails
 * the transaction's pam_start: its real module is never loaded.  No
 * records are written (PAM_WRAPPER_TRACE need only be set; the plan hears
 * every call).  The plan is the caller's;
 * the wrapper keeps a pointer to it until it is set again.
 */
#ifndef PWRAP_TRACE_PLAN_H
#define PWRAP_TRACE_PLAN_H

#include <stdbool.h>

struct pam_wrapper_trace_plan {
	void *ctx;
	/* The code the module of the line at `where` ("FILE:LINE" of the
	 * user's file, as the trace records it) returns from function sm
	 * (enum pwrap_sm) called with flags. */
	int (*call)(void *ctx, const char *where, const char *module, int sm,
		    int flags);
	/* OpenPAM: whether that line's module loads (NULL: every one). */
	bool (*loads)(void *ctx, const char *where, const char *module);
	/* The stand-in does not fit into that line (NULL: not told). */
	void (*unfit)(void *ctx, const char *where);
};

/* The entry point, looked up with dlsym(): sets the plan (NULL: none).
 * 0, or -1 when the trace's stand-in module is missing. */
#define PAM_WRAPPER_TRACE_PLAN "pam_wrapper_trace_plan"
typedef int pam_wrapper_trace_plan_fn(const struct pam_wrapper_trace_plan *p);

#endif
