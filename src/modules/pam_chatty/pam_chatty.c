/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_chatty: a test module whose authentication talks a lot, to exercise
 * how applications and libpamtest collect conversation messages.
 *
 * Options: num_lines=N (default 3), info (send N PAM_TEXT_INFO
 * "Authentication succeeded"), error (send N PAM_ERROR_MSG "Authentication
 * generated an error"; after the info messages when both are given).  Each
 * message is its own conversation call, as upstream sends them, so any N
 * works whatever the application's limit on messages per call; upstream
 * keeps N between 3 and 16.  A failed conversation does not stop the
 * messages nor fail the module, as upstream's.  The other management groups
 * (upstream has none) do nothing and succeed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_appl.h>
#include "pam_compat.h"
#include <security/pam_modules.h>

#include "modutil.h"

#define PC_DEFAULT_LINES 3UL
#define PC_MSG_INFO "Authentication succeeded"
#define PC_MSG_ERROR "Authentication generated an error"

struct pc_opts {
	unsigned long num_lines;
	bool info;
	bool error;
};

/* Bad arguments are logged and ignored (num_lines keeps its default). */
static void pc_parse_opts(pam_handle_t *pamh, int argc, const char **argv,
			  struct pc_opts *o)
{
	o->num_lines = PC_DEFAULT_LINES;
	o->info = false;
	o->error = false;

	for (int i = 0; i < argc; i++) {
		const char *v = pwrap_opt_value(argv[i], "num_lines");

		if (v != NULL) {
			char *end = NULL;
			unsigned long n;

			errno = 0;
			n = strtoul(v, &end, 10);
			if (*v < '0' || *v > '9' || *end != '\0' ||
			    errno != 0) {
				pam_syslog(pamh, LOG_WARNING,
					   "invalid option \"%s\" ignored",
					   argv[i]);
				continue;
			}
			o->num_lines = n;
		} else if (strcmp(argv[i], "info") == 0) {
			o->info = true;
		} else if (strcmp(argv[i], "error") == 0) {
			o->error = true;
		} else {
			pam_syslog(pamh, LOG_WARNING,
				   "unknown option \"%s\" ignored", argv[i]);
		}
	}
}

/* Sends N messages.  A failed conversation is logged (once) and the
 * messages go on, as upstream's do: the module still succeeds. */
static void pc_send(pam_handle_t *pamh, unsigned long n, int style,
		    const char *text)
{
	bool logged = false;

	for (unsigned long i = 0; i < n; i++) {
		const char *cause = NULL;
		int rv = pwrap_conv_one(pamh, style, text, NULL, &cause);

		if (rv != PAM_SUCCESS && !logged) {
			pam_syslog(pamh, LOG_ERR,
				   "conversation failed: %s (%s); the messages "
				   "go on",
				   cause ? cause : "?", pam_strerror(pamh, rv));
			logged = true;
		}
	}
}

static int pc_authenticate(pam_handle_t *pamh, int flags, int argc,
			   const char **argv)
{
	struct pc_opts o;

	(void)flags;
	pc_parse_opts(pamh, argc, argv, &o);
	if (o.info) {
		pc_send(pamh, o.num_lines, PAM_TEXT_INFO, PC_MSG_INFO);
	}
	if (o.error) {
		pc_send(pamh, o.num_lines, PAM_ERROR_MSG, PC_MSG_ERROR);
	}
	return PAM_SUCCESS;
}

static int pc_nothing(pam_handle_t *pamh, int flags, int argc,
		      const char **argv)
{
	(void)pamh;
	(void)flags;
	(void)argc;
	(void)argv;
	return PAM_SUCCESS;
}

PWRAP_ENTRY(pam_sm_authenticate, pc_authenticate)
PWRAP_ENTRY(pam_sm_setcred, pc_nothing)
PWRAP_ENTRY(pam_sm_acct_mgmt, pc_nothing)
PWRAP_ENTRY(pam_sm_open_session, pc_nothing)
PWRAP_ENTRY(pam_sm_close_session, pc_nothing)
PWRAP_ENTRY(pam_sm_chauthtok, pc_nothing)
