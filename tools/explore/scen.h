/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest(1) scenarios: the `explore` block (pamtest-scenario(5)),
 *
 *     explore [service NAME] [type auth|account|password|session|all]
 *             [against DIR]     (DIR's version compared with this one)
 *         outcomes CODE,...          every module's outcomes
 *         model MODULE=CODE,...      one module's (or FILE:LINE's)
 *         must MODULE                the modules that must decide
 *         accept KIND:FILE:LINE      a finding known and accepted
 *         expect no bypass | no lockout | no dead-line | no ignored
 *         expect no findings
 *         expect no new success      (with against: diff.c)
 *         expect success iff MODULE [or MODULE]...
 *
 * parsed here (parse.c hands over the lines) and run with xp_explore() on
 * the scenario's service directory.  The block is one test point.
 */
#ifndef PAMTEST_EXPLORE_SCEN_H
#define PAMTEST_EXPLORE_SCEN_H

#include <stddef.h>

struct scenario;
struct step;
struct xp_scen;

/* Whether kw is a directive of the explore block. */
int xp_scen_keyword(const char *kw);
/* Parses one line of the block (kw and the n words after it, as parse.c
 * lexes them); adds a STEP_EXPLORE for `explore`.  Errors go to stderr as
 * "file:line: ...", counted in *nerr.  0 or -1. */
int xp_scen_parse(struct scenario *sc, const char *kw, char **w, size_t n,
		  const char *file, int line, int *nerr);
void xp_scen_free(struct xp_scen *x);
/* Runs the block of step s: the expectations that failed are appended to
 * *fails (malloc'd "file:line: message").  0, or -1 (out of memory). */
int xp_scen_run(const struct scenario *sc, const struct step *s,
		char ***fails, size_t *nfails);

#endif
