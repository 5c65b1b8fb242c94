/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small PAM application for the hardening tests, run wrapped (LD_PRELOAD
 * of libpam_wrapper.so) as a separate process.
 *
 *   hard_client SERVICE USER OPS [ANSWER...]
 *
 * OPS is a comma list of auth, setcred, acct, open, close, chauthtok.  Every
 * prompt (echo on or off) takes the next ANSWER; a prompt with none left
 * fails the conversation.  Info and error messages are printed to stdout.
 * With HARD_WAIT_FD=n in the environment the client reads fd n to its end
 * after pam_start and before the operations (a start barrier the test
 * releases by closing the other end).  It prints "started" after a
 * successful pam_start and "pam_start: CODE" after a failed one, so a test
 * can tell that the process went on.
 *
 * Exit status: 0 every operation succeeded, 1 one failed (its code is
 * printed), 2 pam_start failed, 3 usage.
 */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct answers {
	char **v;	/* borrowed from argv */
	int n;
	int next;
};

static int conv(int n, const struct pam_message **msg,
		struct pam_response **resp, void *data)
{
	struct answers *a = data;
	struct pam_response *r;
	int i;

	if (n <= 0 || n > PAM_MAX_NUM_MSG) {
		return PAM_CONV_ERR;
	}
	r = calloc((size_t)n, sizeof(*r));
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (i = 0; i < n; i++) {
		int style = msg[i]->msg_style;

		if (style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON) {
			if (a->next >= a->n ||
			    (r[i].resp = strdup(a->v[a->next++])) == NULL) {
				goto fail;
			}
		} else {
			printf("msg %d: %s\n", style,
			       msg[i]->msg ? msg[i]->msg : "(null)");
		}
	}
	*resp = r;
	return PAM_SUCCESS;
fail:
	for (i = 0; i < n; i++) {
		free(r[i].resp);
	}
	free(r);
	return PAM_CONV_ERR;
}

static int run_op(pam_handle_t *ph, const char *op)
{
	if (strcmp(op, "auth") == 0) {
		return pam_authenticate(ph, 0);
	} else if (strcmp(op, "setcred") == 0) {
		return pam_setcred(ph, PAM_ESTABLISH_CRED);
	} else if (strcmp(op, "acct") == 0) {
		return pam_acct_mgmt(ph, 0);
	} else if (strcmp(op, "open") == 0) {
		return pam_open_session(ph, 0);
	} else if (strcmp(op, "close") == 0) {
		return pam_close_session(ph, 0);
	} else if (strcmp(op, "chauthtok") == 0) {
		return pam_chauthtok(ph, 0);
	}
	return -1;
}

static void wait_barrier(void)
{
	const char *s = getenv("HARD_WAIT_FD");
	char buf[64];
	int fd;

	if (s == NULL) {
		return;
	}
	fd = atoi(s);
	while (read(fd, buf, sizeof(buf)) > 0) {
		;
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct answers a;
	struct pam_conv c = { conv, &a };
	pam_handle_t *ph = NULL;
	char *list = NULL, *op, *save = NULL;
	int rc, last = PAM_SUCCESS, status = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s SERVICE USER OPS [ANSWER...]\n",
			argv[0]);
		return 3;
	}
	a.v = argv + 4;
	a.n = argc - 4;
	a.next = 0;
	rc = pam_start(argv[1], argv[2], &c, &ph);
	if (rc != PAM_SUCCESS) {
		printf("pam_start: %d\n", rc);
		return 2;
	}
	printf("started\n");
	fflush(stdout);
	wait_barrier();
	list = strdup(argv[3]);
	for (op = list ? strtok_r(list, ",", &save) : NULL; op != NULL;
	     op = strtok_r(NULL, ",", &save)) {
		rc = run_op(ph, op);
		printf("%s: %d\n", op, rc);
		if (rc != PAM_SUCCESS) {
			status = rc < 0 ? 3 : 1;
			last = rc < 0 ? PAM_SYSTEM_ERR : rc;
			break;
		}
	}
	free(list);
	pam_end(ph, last);
	return status;
}
