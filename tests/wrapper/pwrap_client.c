/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A minimal PAM application for the wrapper's process-level tests.
 *
 *   pwrap_client SERVICE USER [OPS] [END]
 *
 * OPS is a comma list of auth, acct, open, close, chauthtok (default
 * "auth,acct").  Echo-off prompts are answered with $PWRAP_CLIENT_PASSWORD.
 * END says how the process ends after the transaction: exit (default),
 * _exit, exec (execs /bin/true), hang (writes "ready\n" to stdout and sleeps
 * until killed).  Exit status: 0 all operations succeeded, 1 an operation
 * failed (its code printed), 2 pam_start failed, 3 usage.
 */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int conv(int n, const struct pam_message **msg,
		struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));
	const char *pw = getenv("PWRAP_CLIENT_PASSWORD");
	int i;

	(void)data;
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup(pw ? pw : "");
		} else {
			printf("msg[%d]: %s\n", msg[i]->msg_style, msg[i]->msg);
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

int main(int argc, char **argv)
{
	struct pam_conv c = { conv, NULL };
	pam_handle_t *ph = NULL;
	const char *ops = argc > 3 ? argv[3] : "auth,acct";
	const char *end = argc > 4 ? argv[4] : "exit";
	char *list, *op, *save = NULL;
	int rc, last = PAM_SUCCESS, status = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SERVICE USER [OPS] [END]\n", argv[0]);
		return 3;
	}
	rc = pam_start(argv[1], argv[2], &c, &ph);
	if (rc != PAM_SUCCESS) {
		printf("pam_start: %d\n", rc);
		return 2;
	}
	list = strdup(ops);
	for (op = strtok_r(list, ",", &save); op != NULL;
	     op = strtok_r(NULL, ",", &save)) {
		if (strcmp(op, "auth") == 0) {
			rc = pam_authenticate(ph, 0);
		} else if (strcmp(op, "acct") == 0) {
			rc = pam_acct_mgmt(ph, 0);
		} else if (strcmp(op, "open") == 0) {
			rc = pam_open_session(ph, 0);
		} else if (strcmp(op, "close") == 0) {
			rc = pam_close_session(ph, 0);
		} else if (strcmp(op, "chauthtok") == 0) {
			rc = pam_chauthtok(ph, 0);
		} else {
			fprintf(stderr, "unknown op %s\n", op);
			return 3;
		}
		printf("%s: %d\n", op, rc);
		if (rc != PAM_SUCCESS) {
			status = 1;
			last = rc;
			break;
		}
	}
	free(list);
	pam_end(ph, last);
	fflush(stdout);
	if (strcmp(end, "_exit") == 0) {
		_exit(status);
	} else if (strcmp(end, "exec") == 0) {
		if (status != 0) {
			_exit(status);	/* a failed transaction stays visible */
		}
		execl("/bin/true", "true", (char *)NULL);
		_exit(4);
	} else if (strcmp(end, "hang") == 0) {
		printf("ready\n");
		fflush(stdout);
		for (;;) {
			pause();
		}
	}
	return status;
}
