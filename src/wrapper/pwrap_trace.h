/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module trace (PAM_WRAPPER_TRACE; record format: doc/trace-format.md).
 * A traced transaction's copy of the stack names, in each module line, the
 * forwarding stand-in pam_wrapper_trace.so with a first argument
 * "pwrap_trace=N"; the stand-in hands every call to
 * pam_wrapper_trace_call(), which runs the real module and records it.
 *
 *   pwrap_trace_conf.c   the lines: what a module line becomes, the table
 *                        of traced lines (N), the actions of a Linux-PAM
 *                        control, which lines libpam reads
 *   pwrap_trace.c        the transactions: state per handle, the real
 *                        modules (loaded at pam_start, unloaded after
 *                        pam_end), the calls from the stand-in
 *   pwrap_trace_api.c    pam_authenticate ... pam_end: the final results
 *   pwrap_trace_out.c    names, the records, where they go and the file
 *   pwrap_trace_standin.c  the stand-in module itself (a separate .so)
 *
 * When PAM_WRAPPER_TRACE is not set none of it does anything beyond one
 * getenv() per pam_start and one atomic load per PAM call.
 */
#ifndef PWRAP_TRACE_H
#define PWRAP_TRACE_H

#include "pwrap_control.h"
#include "pwrap_names.h"
#include "pwrap_private.h"

/* The module functions (enum pwrap_sm) are pwrap_names.h's, in OpenPAM's
 * order (its PAM_SM_* values). */

/* Where records go and how they look; decided at pam_start. */
enum pwrap_trace_fmt {
	PWRAP_TRACE_JSON,
	PWRAP_TRACE_TEXT,
};

/* Linux-PAM's actions (pam.conf(5), pwrap_control.h); a jump N is N > 0. */
enum pwrap_action {
	PWRAP_ACT_IGNORE = PWRAP_CONTROL_IGNORE,
	PWRAP_ACT_OK = PWRAP_CONTROL_OK,
	PWRAP_ACT_DONE = PWRAP_CONTROL_DONE,
	PWRAP_ACT_BAD = PWRAP_CONTROL_BAD,
	PWRAP_ACT_DIE = PWRAP_CONTROL_DIE,
	PWRAP_ACT_RESET = PWRAP_CONTROL_RESET,
	PWRAP_ACT_INCOMPLETE = -6,	/* PAM_INCOMPLETE: libpam returns */
};
#define PWRAP_TRACE_CODES PWRAP_CONTROL_CODES	/* Linux-PAM's 0..31 */

/* A traced line; immutable once registered, kept for the process's life
 * (a handle started earlier may still run it). */
struct pwrap_trace_line {
	unsigned id;		/* N of "pwrap_trace=N" */
	char *where;		/* "FILE:LINE" of the user's file */
	char *control;		/* as written ("[...]" with its brackets) */
	char *module;		/* as written */
	char *path;		/* what is loaded */
	enum pamconf_stack stack;
	bool silent;		/* a "-type" line */
	signed char actions[PWRAP_TRACE_CODES];	/* Linux-PAM: per code */
};

/* ---- pwrap_trace_conf.c ------------------------------------------------ */

/* Called by the walk (pwrap_walk.c), with the preparation lock held. */
PWRAP_HIDDEN bool pwrap_trace_active(void);
PWRAP_HIDDEN char *pwrap_trace_line(const char *conf, const char *gpath,
				    const struct pamconf_module_line *ml);
PWRAP_HIDDEN void pwrap_trace_forget_file(const char *gpath);
PWRAP_HIDDEN void pwrap_trace_walk_begin(void);
PWRAP_HIDDEN void pwrap_trace_walked(const char *gpath, enum pamconf_stack asked);

/* The walk's mode: 0 untraced, 1 traced, 2 traced with pamtest explore's
 * plan (every module line names the stand-in). */
PWRAP_HIDDEN int pwrap_trace_mode(void);
/* The rewrite could not fit the stand-in (or an include target) into the
 * line at src:line: with a plan the plan hears of it (nonzero: the file is
 * refused), else 0 (a module line stays untraced). */
PWRAP_HIDDEN int pwrap_trace_unfit(const char *src, unsigned line);

/* Sets this thread's "the next walk is for a traced transaction", and
 * whether it collects the lines libpam reads (a pam_start's walk). */
PWRAP_HIDDEN void pwrap_trace_set_active(bool on, bool collect_walked);
/* Linux-PAM: the action per return code of a control token (libpam's
 * view: brackets removed); parse errors make every code "bad", as libpam
 * does. */
PWRAP_HIDDEN void pwrap_trace_actions(const char *control,
				      signed char actions[PWRAP_TRACE_CODES]);
/* Forgets every line (the fuzzer, between inputs: no handle may run
 * them any more). */
PWRAP_HIDDEN void pwrap_trace_forget_all(void);
/* The line registered as id, or NULL. */
PWRAP_HIDDEN const struct pwrap_trace_line *pwrap_trace_line_get(unsigned id);
/* The lines libpam read in this thread's last walk (each once): *n of
 * them, the array malloc'd (caller frees), NULL when none. */
PWRAP_HIDDEN const struct pwrap_trace_line **pwrap_trace_walked_lines(
	size_t *n);
/* The path of the stand-in module, or NULL when it is missing (logged). */
PWRAP_HIDDEN const char *pwrap_trace_standin(void);

/* ---- pwrap_trace.c (pwrap.c calls these) ------------------------------- */

/* At a wrapped pam_start: reads PAM_WRAPPER_TRACE; true when this start
 * is traced (then the walk rewrites for the trace). */
PWRAP_HIDDEN bool pwrap_trace_begin(void);
/* After it (traced only): records the start and, when it succeeded,
 * loads the real modules of the lines libpam read.  Returns rc, or (an
 * OpenPAM that would have refused a module that cannot be loaded)
 * PAM_SYSTEM_ERR after ending *pamh. */
PWRAP_HIDDEN int pwrap_trace_started(void **pamh, const char *service,
				     const char *dir, int rc);
/* pam_set_item(PAM_SERVICE): whether pamh's transaction is traced (sets
 * the thread's flag for the walk that follows). */
PWRAP_HIDDEN void pwrap_trace_resume(const void *pamh);

/* ---- pwrap_trace.c (pwrap_trace_api.c calls these) --------------------- */

/* Whether any transaction of this process is traced (one atomic load). */
PWRAP_HIDDEN bool pwrap_trace_any(void);
/* Around an application's call on a traced handle: before returns whether
 * pamh is traced and the call is not nested in another; after writes its
 * records with the result. */
PWRAP_HIDDEN bool pwrap_trace_call_before(const void *pamh);
PWRAP_HIDDEN void pwrap_trace_call_after(const void *pamh, enum pwrap_sm sm,
					 int flags, int rc);
/* After the real pam_end: writes what is left, unloads the modules. */
PWRAP_HIDDEN void pwrap_trace_ended(const void *pamh);
/* pamtest explore's plan (pwrap_trace_plan.h), or NULL. */
struct pam_wrapper_trace_plan;
PWRAP_HIDDEN const struct pam_wrapper_trace_plan *pwrap_trace_plan(void);

/* ---- pwrap_trace_out.c ------------------------------------------------- */



/* One record (kind "module" or "result"), as the records are written. */
struct pwrap_trace_rec {
	const struct pwrap_trace_line *line;	/* NULL: a "result" record */
	enum pwrap_sm sm;
	int flags;
	int rc;
	int action;		/* Linux-PAM: enum pwrap_action or jump */
	unsigned seq;		/* "result": the number of module records */
	bool has_result;
	int result;
	const char *error;	/* the module was not called: why */
};
/* The common start of every record. */
struct pwrap_trace_who {
	long pid;
	unsigned long tx;
	const char *service;
};
PWRAP_HIDDEN void pwrap_trace_format(struct pwrap_buf *b,
				     enum pwrap_trace_fmt fmt,
				     const struct pwrap_trace_who *who,
				     const struct pwrap_trace_rec *r);
PWRAP_HIDDEN void pwrap_trace_format_start(struct pwrap_buf *b,
					   enum pwrap_trace_fmt fmt,
					   const struct pwrap_trace_who *who,
					   const char *dir, int rc);
/* The destination PAM_WRAPPER_TRACE=v names (malloc'd): "-", or an
 * absolute path (a relative one resolved when first seen); NULL (logged)
 * when it cannot be resolved.  The format PAM_WRAPPER_TRACE_FORMAT asks. */
PWRAP_HIDDEN char *pwrap_trace_dest(const char *v);
PWRAP_HIDDEN enum pwrap_trace_fmt pwrap_trace_fmt_env(void);
/* Appends buf to dest ("-": standard error) with one write; failures are
 * logged (once per destination). */
PWRAP_HIDDEN void pwrap_trace_write(const char *dest, const char *buf,
				    size_t len);

#endif
