/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What test_trust and test_trust_full share: the fixture (hard_util's, with
 * service "trust", user alice, password TRUST_PW, everything readable by
 * nobody), and running tests/hardening/trust_client (see its top comment
 * for the steps) and reading what it printed.  Like testutil, these fail
 * the running cmocka test on any error; strings returned are malloc'd and
 * the caller's.
 */
#ifndef TRUST_UTIL_H
#define TRUST_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "hard_util.h"

#define TRUST_SERVICE "trust"
#define TRUST_PW "Qx7Zp9WmK3"
/* The attacker of the tests that need a second local user. */
#define TRUST_NOBODY 65534
/* A stack that lets anyone in. */
#define TRUST_PERMIT \
	"auth sufficient pam_permit.so\naccount sufficient pam_permit.so\n"

struct trust_ctx {
	struct hu_fixture f;
};
/* cmocka setup and teardown: *state is a struct trust_ctx. */
int trust_setup(void **state);
int trust_teardown(void **state);

/* True as root; else prints "SKIPPED: needs root: WHY" (the caller then
 * skips). */
bool trust_need_root(const char *why);

/* argv for trust_client as USER with STEPS (NULL-terminated); free() the
 * array only. */
char **trust_argv(const char *user, const char *const *steps);
/* Runs the client to its end; stdout and stderr together in *OUT.  Its
 * exit code (-1: killed). */
int trust_run(char **env, const char *user, const char *const *steps,
	      char **out);
/* The value of the NTH (0-based) "dir: " line of OUT. */
char *trust_nth_dir(const char *out, int nth);
/* How many times NEEDLE occurs in HAY. */
int trust_count(const char *hay, const char *needle);
/* How many lines "WHAT: RC" OUT has (RC: the value of the libpam under
 * test, PAM_AUTH_ERR is 7 on Linux-PAM, 9 on OpenPAM). */
int trust_count_rc(const char *out, const char *what, int rc);
/* Whether PATH is below DIR. */
bool trust_under(const char *path, const char *dir);

/* A client (as alice) stopped at its "wait" step: out holds what it
 * printed up to there (stdout and stderr), gate releases it. */
struct trust_paused {
	pid_t pid;
	FILE *o;
	int gate;
	char *out;
};
void trust_pause_start(struct trust_paused *p, char **env,
		       const char *const *steps);
/* Releases the client; appends the rest of its output to out; its exit
 * code (-1: killed). */
int trust_pause_finish(struct trust_paused *p);
/* As nobody (a child process): puts TRUST_PERMIT at TOP/SUB/trust (SUB
 * may be "."), through a rename as an attacker would.  Whether it could. */
bool trust_plant_as_nobody(const char *top, const char *sub);
/* The top of the runtime directory of the first "dir: " line of OUT. */
char *trust_first_top(const char *out);

#endif
