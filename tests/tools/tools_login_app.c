/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A minimal PAM application for the pam_wrapper(1) launcher tests: logs USER
 * in to SERVICE answering every prompt with PASSWORD, runs account
 * management and opens a session, then prints "result: <PAM code name>"
 * (the same with Linux-PAM and OpenPAM, whose texts and numbers differ) and
 * the session's HOMEDIR.  Exit 0 when everything succeeded, 1 when PAM said
 * no, 3 for usage errors.  It knows nothing of the wrapper: the launcher must
 * set everything up.
 */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));

	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup(data);
		} else {
			printf("message: %s\n", msg[i]->msg);
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

/* The codes this app can end with; the number for any other. */
static const char *code_name(int rc)
{
	static char num[16];

	switch (rc) {
	case PAM_SUCCESS: return "PAM_SUCCESS";
	case PAM_AUTH_ERR: return "PAM_AUTH_ERR";
	case PAM_PERM_DENIED: return "PAM_PERM_DENIED";
	case PAM_ACCT_EXPIRED: return "PAM_ACCT_EXPIRED";
	case PAM_NEW_AUTHTOK_REQD: return "PAM_NEW_AUTHTOK_REQD";
	case PAM_USER_UNKNOWN: return "PAM_USER_UNKNOWN";
	case PAM_AUTHINFO_UNAVAIL: return "PAM_AUTHINFO_UNAVAIL";
	case PAM_ABORT: return "PAM_ABORT";
	case PAM_SYSTEM_ERR: return "PAM_SYSTEM_ERR";
	default:
		snprintf(num, sizeof(num), "%d", rc);
		return num;
	}
}

int main(int argc, char **argv)
{
	struct pam_conv pc = {conv, NULL};
	pam_handle_t *pamh = NULL;
	const char *home;
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SERVICE USER PASSWORD\n", argv[0]);
		return 3;
	}
	pc.appdata_ptr = argv[3];
	rc = pam_start(argv[1], argv[2], &pc, &pamh);
	if (rc == PAM_SUCCESS) {
		rc = pam_authenticate(pamh, 0);
	}
	if (rc == PAM_SUCCESS) {
		rc = pam_acct_mgmt(pamh, 0);
	}
	if (rc == PAM_SUCCESS) {
		rc = pam_open_session(pamh, 0);
	}
	printf("result: %s\n", code_name(rc));
	home = pamh != NULL ? pam_getenv(pamh, "HOMEDIR") : NULL;
	printf("HOMEDIR=%s\n", home != NULL ? home : "");
	if (pamh != NULL) {
		pam_end(pamh, rc);
	}
	return rc == PAM_SUCCESS ? 0 : 1;
}
