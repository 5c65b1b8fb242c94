/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_demo: the smallest useful PAM application, used by the README's demo.
 * It runs one login transaction (authenticate, account, open/close session)
 * for SERVICE and USER, reading the password for any echo-off prompt from
 * standard input, and says what each step returned.  It knows nothing about
 * pam_wrapper: the wrapper is preloaded from outside.
 *
 *   pam_demo SERVICE USER < password
 * Exit status: 0 when every step succeeded, 1 otherwise, 2 on usage errors.
 */
#define _GNU_SOURCE
#include <err.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Answers prompts from stdin; the answer memory is handed to libpam. */
static int demo_conv(int n, const struct pam_message **msg,
		     struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));
	char *line = NULL;
	size_t cap = 0;
	int i;

	(void)data;
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (i = 0; i < n; i++) {
		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
		case PAM_PROMPT_ECHO_ON:
			printf("  [prompt] %s\n", msg[i]->msg);
			if (getline(&line, &cap, stdin) < 0) {
				line = strdup("");
			}
			line[strcspn(line, "\n")] = '\0';
			r[i].resp = line;	/* libpam frees it */
			line = NULL;
			cap = 0;
			break;
		case PAM_TEXT_INFO:
			printf("  [info]   %s\n", msg[i]->msg);
			break;
		default:
			printf("  [error]  %s\n", msg[i]->msg);
			break;
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

static int step(pam_handle_t *ph, const char *what, int rc)
{
	printf("%-18s -> %s\n", what, pam_strerror(ph, rc));
	return rc;
}

int main(int argc, char **argv)
{
	struct pam_conv conv = { demo_conv, NULL };
	pam_handle_t *ph = NULL;
	const char *home;
	int rc;

	if (argc != 3) {
		errx(2, "usage: pam_demo SERVICE USER < password");
	}
	rc = pam_start(argv[1], argv[2], &conv, &ph);
	if (rc != PAM_SUCCESS) {
		printf("pam_start          -> failed (%d)\n", rc);
		return 1;
	}
	if (step(ph, "pam_authenticate", pam_authenticate(ph, 0)) != PAM_SUCCESS ||
	    step(ph, "pam_acct_mgmt", pam_acct_mgmt(ph, 0)) != PAM_SUCCESS ||
	    step(ph, "pam_open_session", pam_open_session(ph, 0)) != PAM_SUCCESS) {
		pam_end(ph, PAM_AUTH_ERR);
		return 1;
	}
	home = pam_getenv(ph, "HOMEDIR");
	printf("PAM env HOMEDIR    =  %s\n", home ? home : "(unset)");
	rc = step(ph, "pam_close_session", pam_close_session(ph, 0));
	pam_end(ph, rc);
	return rc == PAM_SUCCESS ? 0 : 1;
}
