/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A PAM application driven step by step, for test_trust: the things a
 * program may do between and around its transactions that the wrapper
 * must survive without trusting what it should not.
 *
 *   trust_client SERVICE USER STEP...
 *
 *   txn:PASSWORD  pam_start, pam_authenticate and pam_acct_mgmt answering
 *                 every prompt with PASSWORD, pam_end; prints "txn: N"
 *                 (N: the first PAM code that was not PAM_SUCCESS, else 0;
 *                 a failed pam_start prints "txn: start N")
 *   start         pam_start and pam_end only; prints "start: N"
 *   dir           prints "dir: $PAM_WRAPPER_RUNTIME_DIR" ("dir: -" unset)
 *   wait          prints "wait", then waits for a byte (or EOF) on fd 3
 *   daemon        daemon(3) (keeping the working directory and stdio)
 *   setuid:UID    setgid to UID's group number and setuid(UID): a drop
 *   seteuid:UID   seteuid(UID): a temporary switch
 *   childdrop:UID a forked child drops to UID (as setuid:) and ends with
 *                 _exit, as one that execs would
 *   vforkdrop:UID the same from a child of vfork(2), which shares this
 *                 process's memory until it ends
 *   stackzero     zeroes 64 KiB of stack below this frame: a later call
 *                 that reads memory it never wrote sees zeros there
 *
 * stdout is line-buffered.  Exit status: 0 every txn succeeded, 1 one
 * failed, 2 a step failed or usage.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdbool.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int conv(int n, const struct pam_message **msg,
		struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));

	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup(data);
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

/* Zeroes the stack that the next calls will use (noinline: a frame of
 * its own). */
__attribute__((noinline)) static void stack_zero(void)
{
	volatile char buf[65536];

	memset((char *)buf, 0, sizeof(buf));
	__asm__ volatile("" : : "r"(buf) : "memory");
}

static int txn(const char *service, const char *user, const char *password,
	       bool start_only)
{
	struct pam_conv c = { conv, (void *)password };
	pam_handle_t *ph = NULL;
	int rc = pam_start(service, user, &c, &ph);

	if (rc != PAM_SUCCESS) {
		printf("%s: start %d\n", start_only ? "start" : "txn", rc);
		return rc;
	}
	if (!start_only) {
		rc = pam_authenticate(ph, 0);
		if (rc == PAM_SUCCESS) {
			rc = pam_acct_mgmt(ph, 0);
		}
	}
	pam_end(ph, rc);
	printf("%s: %d\n", start_only ? "start" : "txn", rc);
	return rc;
}

int main(int argc, char **argv)
{
	int status = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s SERVICE USER STEP...\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 3; i < argc; i++) {
		const char *s = argv[i];
		char line[1];

		if (strncmp(s, "txn:", 4) == 0) {
			if (txn(argv[1], argv[2], s + 4, false) !=
			    PAM_SUCCESS) {
				status = 1;
			}
		} else if (strcmp(s, "start") == 0) {
			(void)txn(argv[1], argv[2], "", true);
		} else if (strcmp(s, "stackzero") == 0) {
			stack_zero();
		} else if (strcmp(s, "dir") == 0) {
			const char *d = getenv("PAM_WRAPPER_RUNTIME_DIR");

			printf("dir: %s\n", d != NULL ? d : "-");
		} else if (strcmp(s, "wait") == 0) {
			printf("wait\n");
			if (read(3, line, 1) < 0) {
				perror("wait");
				return 2;
			}
		} else if (strcmp(s, "daemon") == 0) {
			if (daemon(1, 1) != 0) {
				perror("daemon");
				return 2;
			}
		} else if (strncmp(s, "setuid:", 7) == 0) {
			uid_t u = (uid_t)strtoul(s + 7, NULL, 10);

			if (setgroups(0, NULL) != 0 || setgid((gid_t)u) != 0 ||
			    setuid(u) != 0) {
				perror("setuid");
				return 2;
			}
			printf("setuid: %lu\n", (unsigned long)u);
		} else if (strncmp(s, "childdrop:", 10) == 0 ||
			   strncmp(s, "vforkdrop:", 10) == 0) {
			uid_t u = (uid_t)strtoul(s + 10, NULL, 10);
			pid_t pid = s[0] == 'v' ? vfork() : fork();
			int st;

			if (pid == 0) {
				_exit(setgroups(0, NULL) != 0 ||
				      setgid((gid_t)u) != 0 || setuid(u) != 0);
			}
			if (pid < 0 || waitpid(pid, &st, 0) != pid ||
			    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				fprintf(stderr, "childdrop failed\n");
				return 2;
			}
			printf("%.9s: %lu\n", s, (unsigned long)u);
		} else if (strncmp(s, "seteuid:", 8) == 0) {
			uid_t u = (uid_t)strtoul(s + 8, NULL, 10);

			if (seteuid(u) != 0) {
				perror("seteuid");
				return 2;
			}
			printf("seteuid: %lu\n", (unsigned long)u);
		} else {
			fprintf(stderr, "unknown step %s\n", s);
			return 2;
		}
	}
	return status;
}
