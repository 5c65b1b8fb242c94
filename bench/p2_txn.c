/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PAM client of the benchmarks (P2-P5): runs N transactions
 *   pam_start + pam_authenticate [+ pam_acct_mgmt] + pam_end
 * for one user, answering every prompt with the given password, and prints
 *   tx=<n> secs=<wall> tx_per_s=<n/wall> tx_us=<mean> auth_us=<mean>
 *   usr_us=<mean> sys_us=<mean>
 * (auth_us: mean wall time inside pam_authenticate alone; usr_us/sys_us:
 * user and kernel CPU time of the loop per transaction).
 *
 * -n 0 exits at once: a PAM-linked process that runs no transaction.
 * -x ends with _exit(2) instead of exit(3) (as sshd's per-connection
 * processes do: no destructor runs, so a wrapper's runtime directory is
 * left to the next process; P7's model).
 * -c DIR uses pam_start_confdir(DIR) (the "bare" Linux-PAM variant, run
 * without any wrapper; the environment variable P2_TXN_CONFDIR=DIR does
 * the same for spawn's variants, which differ only in their environment);
 * otherwise pam_start, which a preloaded wrapper redirects.  -t SECS runs
 * for that long instead of -n N.  -b FD blocks until FD reports EOF before
 * the first transaction (P4's start barrier: all processes are alive, with
 * their wrapper state, before any authenticates).  P5 times whole
 * processes of -n 1.  Exit status: 0 all transactions succeeded, 1 a PAM
 * call failed (reported on stderr), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <security/pam_appl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *g_password;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Answers prompts with the password; the replies are libpam's to free. */
static int conv(int n, const struct pam_message **msg,
		struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));
	int i;

	(void)data;
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup(g_password);
			if (r[i].resp == NULL) {
				goto fail;
			}
		}
	}
	*resp = r;
	return PAM_SUCCESS;
fail:
	for (i = 0; i < n; i++) {
		free(r[i].resp);
	}
	free(r);
	return PAM_BUF_ERR;
}

static void usage(void)
{
	fprintf(stderr, "usage: p2_txn [-c confdir] [-n N | -t secs] [-A] "
		"[-b fd] [-x] service user password\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *confdir = NULL;
	long n = 1;
	double secs = 0;
	bool acct = true;
	bool quick_exit = false;
	int barrier = -1;
	struct pam_conv pc = { conv, NULL };
	double t0, t1, auth = 0, u0, s0;
	struct rusage ru;
	long done = 0;
	int opt;

	while ((opt = getopt(argc, argv, "c:n:t:Ab:x")) != -1) {
		switch (opt) {
		case 'c': confdir = optarg; break;
		case 'n': n = atol(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'A': acct = false; break;
		case 'b': barrier = atoi(optarg); break;
		case 'x': quick_exit = true; break;
		default: usage();
		}
	}
	if (confdir == NULL && getenv("P2_TXN_CONFDIR") != NULL &&
	    getenv("P2_TXN_CONFDIR")[0] != '\0') {
		confdir = getenv("P2_TXN_CONFDIR");
	}
	if (argc - optind != 3 || n < 0) {
		usage();
	}
	if (n == 0 && secs <= 0) {
		return 0; /* -n 0: only the process start and exit */
	}
	g_password = argv[optind + 2];
	if (barrier >= 0) {
		char c;
		ssize_t r;

		while ((r = read(barrier, &c, 1)) != 0) {
			if (r < 0 && errno != EINTR) {
				break;
			}
		}
		close(barrier);
	}
	getrusage(RUSAGE_SELF, &ru);
	u0 = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	s0 = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	t0 = now();
	for (;;) {
		pam_handle_t *h = NULL;
		double a0;
		int rc;

		rc = confdir ? pam_start_confdir(argv[optind], argv[optind + 1],
						 &pc, confdir, &h)
			     : pam_start(argv[optind], argv[optind + 1], &pc,
					 &h);
		if (rc != PAM_SUCCESS) {
			fprintf(stderr, "p2_txn: pam_start: %d\n", rc);
			return 1;
		}
		a0 = now();
		rc = pam_authenticate(h, 0);
		auth += now() - a0;
		if (rc != PAM_SUCCESS) {
			fprintf(stderr, "p2_txn: pam_authenticate: %s\n",
				pam_strerror(h, rc));
			pam_end(h, rc);
			return 1;
		}
		if (acct && (rc = pam_acct_mgmt(h, 0)) != PAM_SUCCESS) {
			fprintf(stderr, "p2_txn: pam_acct_mgmt: %s\n",
				pam_strerror(h, rc));
			pam_end(h, rc);
			return 1;
		}
		rc = pam_end(h, PAM_SUCCESS);
		if (rc != PAM_SUCCESS) {
			fprintf(stderr, "p2_txn: pam_end: %d\n", rc);
			return 1;
		}
		done++;
		t1 = now();
		if (secs > 0 ? t1 - t0 >= secs : done >= n) {
			break;
		}
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("tx=%ld secs=%.6f tx_per_s=%.1f tx_us=%.3f auth_us=%.3f "
	       "usr_us=%.3f sys_us=%.3f\n",
	       done, t1 - t0, (double)done / (t1 - t0),
	       (t1 - t0) * 1e6 / (double)done, auth * 1e6 / (double)done,
	       ((double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 -
		u0) * 1e6 / (double)done,
	       ((double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6 -
		s0) * 1e6 / (double)done);
	if (quick_exit) {
		fflush(stdout);
		_exit(0);
	}
	return 0;
}
