/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PAM application of the differential test (test_differential.c).
 *
 *   pwrap_diff_client start   DIR SERVICE   pam_start(SERVICE, ...): run it
 *                     preloaded, with PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR=DIR
 *   pwrap_diff_client confdir DIR SERVICE   pam_start_confdir(SERVICE, ...,
 *                     DIR): bare libpam, not preloaded
 *   pwrap_diff_client ns DIR SERVICE   bare libpam without
 *                     pam_start_confdir (Linux-PAM before 1.4, OpenPAM):
 *                     pam_start(SERVICE, ...) in a private mount namespace
 *                     (a user namespace too when not root) in which DIR is
 *                     mounted over /etc/pam.d and the other places libpam
 *                     looks (/usr/lib/pam.d, /usr/local/etc/pam.d, pam.conf)
 *                     are empty; then without privileges (it executes
 *                     itself again), so file modes count as outside
 *   pwrap_diff_client nsprobe DIR   only sets that namespace up: exit 0, or
 *                     3 with the reason it cannot on stdout
 *
 * The user is "alice"; every prompt is answered with "secret".  After the
 * start it calls pam_authenticate, pam_setcred(PAM_ESTABLISH_CRED),
 * pam_acct_mgmt, pam_open_session, pam_close_session, pam_chauthtok(0) and
 * pam_end, and prints one line with the return code of each call, in order:
 *
 *   start=0 auth=0 setcred=0 acct=0 open=0 close=0 chauthtok=0 end=0
 *
 * Messages the modules send (pam_echo, pam_debug) appear in the line where
 * they arrive, as {STYLE:text} with bytes outside printable ASCII, '\' and
 * '}' written as \xHH, so the arguments libpam passed to a module are part
 * of what is compared.  When pam_start fails the line stops after it.
 * Exit status 0 (the line is the result), 2 usage, 3 no namespace (the
 * reason on stdout).  PWRAP_DIFF_CPU_SECONDS=N limits its CPU time
 * (RLIMIT_CPU: SIGXCPU, then SIGKILL a second later; no core file), which
 * is how the test tells a libpam looping for ever from a slow machine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <security/pam_appl.h>
#if defined(PWRAP_OPENPAM)
#include <security/openpam.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_ns.h"

static char line[16384];
static size_t used;

static void put(const char *s)
{
	size_t n = strlen(s);

	if (used + n >= sizeof(line)) {
		n = sizeof(line) - 1 - used;
	}
	memcpy(line + used, s, n);
	used += n;
	line[used] = '\0';
}

static void put_rc(const char *name, int rc)
{
	char b[64];

	snprintf(b, sizeof(b), "%s%s=%d", used > 0 ? " " : "", name, rc);
	put(b);
}

static void put_msg(int style, const char *msg)
{
	char b[8];
	const unsigned char *p;

	snprintf(b, sizeof(b), " {%d:", style);
	put(b);
	for (p = (const unsigned char *)(msg ? msg : "(null)"); *p; p++) {
		if (*p < 0x20 || *p > 0x7e || *p == '\\' || *p == '}') {
			snprintf(b, sizeof(b), "\\x%02x", *p);
		} else {
			b[0] = (char)*p;
			b[1] = '\0';
		}
		put(b);
	}
	put("}");
}

static int conv(int n, const struct pam_message **msg,
		struct pam_response **resp, void *data)
{
	struct pam_response *r;
	int i;

	(void)data;
	if (n <= 0) {
		return PAM_CONV_ERR;
	}
	r = calloc((size_t)n, sizeof(*r));
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup("secret");
		} else {
			put_msg(msg[i]->msg_style, msg[i]->msg);
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

/* Exits 3 saying why the namespace cannot be had. */
static void __attribute__((noreturn)) no_ns(const char *why)
{
	printf("no private mount namespace: %s\n", why);
	fflush(stdout);
	exit(3);
}

/* The private mount namespace of "ns" (see the top). */
static void enter_ns(const char *dir)
{
	char why[256];

	if (pwrap_ns_enter(dir, why, sizeof(why)) != 0) {
		no_ns(why);
	}
}

/* RLIMIT_CPU from PWRAP_DIFF_CPU_SECONDS (kept across the exec of "ns"). */
static void limit_cpu(void)
{
	const char *v = getenv("PWRAP_DIFF_CPU_SECONDS");
	struct rlimit none = { 0, 0 };
	struct rlimit cpu;

	if (v == NULL || v[0] == '\0') {
		return;
	}
	cpu.rlim_cur = (rlim_t)strtoul(v, NULL, 10);
	cpu.rlim_max = cpu.rlim_cur + 1;
	(void)setrlimit(RLIMIT_CORE, &none);
	(void)setrlimit(RLIMIT_CPU, &cpu);
}

int main(int argc, char **argv)
{
	struct pam_conv c = { conv, NULL };
	pam_handle_t *ph = NULL;
	int rc;

	limit_cpu();
	if (argc == 3 && strcmp(argv[1], "nsprobe") == 0) {
		enter_ns(argv[2]);
		return 0;
	}
	if (argc != 4 || (strcmp(argv[1], "start") != 0 &&
			  strcmp(argv[1], "confdir") != 0 &&
			  strcmp(argv[1], "ns") != 0 &&
			  strcmp(argv[1], "ns-start") != 0)) {
		fprintf(stderr, "usage: %s start|confdir|ns DIR SERVICE\n",
			argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "ns") == 0) {
		char *again[] = { argv[0], (char *)"ns-start", argv[2], argv[3],
				  NULL };

		enter_ns(argv[2]);
		/* executed again: no capabilities left in the namespace */
		execv("/proc/self/exe", again);
		no_ns("execute /proc/self/exe");
	}
#if defined(PWRAP_OPENPAM)
	/* as in a wrapped process: OpenPAM's ownership checks of policy and
	 * module files off (they refuse anything below a world-writable
	 * directory such as a build tree or an OpenPAM in /tmp) */
	if (strcmp(argv[1], "ns-start") == 0) {
		openpam_set_feature(OPENPAM_VERIFY_POLICY_FILE, 0);
		openpam_set_feature(OPENPAM_VERIFY_MODULE_FILE, 0);
	}
#endif
	if (strcmp(argv[1], "confdir") != 0) {
		rc = pam_start(argv[3], "alice", &c, &ph);
	} else {
#if defined(PWRAP_HAVE_PAM_START_CONFDIR)
		rc = pam_start_confdir(argv[3], "alice", &c, argv[2], &ph);
#else
		fprintf(stderr, "this libpam has no pam_start_confdir\n");
		return 2;
#endif
	}
	put_rc("start", rc);
	if (rc == PAM_SUCCESS) {
		put_rc("auth", pam_authenticate(ph, 0));
		put_rc("setcred", pam_setcred(ph, PAM_ESTABLISH_CRED));
		put_rc("acct", pam_acct_mgmt(ph, 0));
		put_rc("open", pam_open_session(ph, 0));
		put_rc("close", pam_close_session(ph, 0));
		put_rc("chauthtok", pam_chauthtok(ph, 0));
		put_rc("end", pam_end(ph, PAM_SUCCESS));
	}
	printf("%s\n", line);
	return fflush(stdout) == 0 ? 0 : 1;
}
