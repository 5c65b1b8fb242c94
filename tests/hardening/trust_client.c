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
 *   stopparent    from now on the parent of a fork stops itself (SIGSTOP)
 *                 right after it (a fork handler registered after the
 *                 wrapper's): the parent of daemon(3) ends after its child
 *   pid           prints "pid: N", this process's pid
 *   setuid:UID    setgid to UID's group number and setuid(UID): a drop
 *   seteuid:UID   seteuid(UID): a temporary switch
 *   childdrop:UID a forked child drops to UID (as setuid:) and ends with
 *                 _exit, as one that execs would
 *   vforkdrop:UID the same from a child of vfork(2), which shares this
 *                 process's memory until it ends
 *   stackzero     zeroes 64 KiB of stack below this frame: a later call
 *                 that reads memory it never wrote sees zeros there
 *   deny          writes a stack that denies everyone into
 *                 $PAM_WRAPPER_RUNTIME_DIR/SERVICE (a test's own file)
 *   forktxn:M:UID:PASSWORD  a forked child switches to UID (M: e for
 *                 seteuid, u for a drop as setuid:), runs txn:PASSWORD
 *                 and exits; prints "child: N" (as txn: does)
 *   threads:T:K:UID:PASSWORD  T threads run txn:PASSWORD over and over
 *                 while this thread switches the euid to UID and back to
 *                 0, K times (each thread runs at least one that
 *                 succeeds); prints "threads: abort A other B ..." (the
 *                 transactions whose pam_start gave PAM_ABORT, and those
 *                 with any other result but success)
 *   txns:N:PASSWORD  N txn:PASSWORD, printing only "txns: N0" (how many
 *                 succeeded)
 *   closefrom:FD  closes every descriptor from FD on
 *   resuid:UID    setresuid(UID, UID, UID) (from a switch for a while:
 *                 allowed without root, as the euid is UID)
 *
 * stdout is line-buffered.  Exit status: 0 every txn succeeded, 1 one
 * failed, 2 a step failed or usage.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <pthread.h>
#include <signal.h>
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

/* One transaction; *started says whether pam_start succeeded. */
static int txn_quiet(const char *service, const char *user,
		     const char *password, bool start_only, bool *started)
{
	struct pam_conv c = { conv, (void *)password };
	pam_handle_t *ph = NULL;
	int rc = pam_start(service, user, &c, &ph);

	*started = rc == PAM_SUCCESS;
	if (rc != PAM_SUCCESS) {
		return rc;
	}
	if (!start_only) {
		rc = pam_authenticate(ph, 0);
		if (rc == PAM_SUCCESS) {
			rc = pam_acct_mgmt(ph, 0);
		}
	}
	pam_end(ph, rc);
	return rc;
}

static int txn_as(const char *label, const char *service, const char *user,
		  const char *password, bool start_only)
{
	bool started;
	int rc = txn_quiet(service, user, password, start_only, &started);

	printf("%s: %s%d\n", label, started ? "" : "start ", rc);
	return rc;
}

static int txn(const char *service, const char *user, const char *password,
	       bool start_only)
{
	return txn_as(start_only ? "start" : "txn", service, user, password,
		      start_only);
}

/* The deny step: the test's own file in the runtime directory. */
static int write_deny(const char *service)
{
	static const char text[] = "auth required pam_deny.so\n"
				   "account required pam_deny.so\n";
	const char *dir = getenv("PAM_WRAPPER_RUNTIME_DIR");
	char path[4096];
	FILE *f;

	if (dir == NULL ||
	    snprintf(path, sizeof(path), "%s/%s", dir, service) >=
		    (int)sizeof(path) ||
	    (f = fopen(path, "w")) == NULL) {
		perror("deny");
		return -1;
	}
	if (fputs(text, f) < 0 || fclose(f) != 0) {
		perror("deny");
		return -1;
	}
	return 0;
}

/* A drop for good to u (as the setuid: step does). */
static int drop_to(uid_t u)
{
	return setgroups(0, NULL) != 0 || setgid((gid_t)u) != 0 ||
	       setuid(u) != 0 ? -1 : 0;
}

/* childdrop:UID and vforkdrop:UID (a function of its own: vfork) */
static int child_drop(const char *s)
{
	uid_t u = (uid_t)strtoul(s + 10, NULL, 10);
	pid_t pid = s[0] == 'v' ? vfork() : fork();
	int st;

	if (pid == 0) {
		_exit(setgroups(0, NULL) != 0 || setgid((gid_t)u) != 0 ||
		      setuid(u) != 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "childdrop failed\n");
		return -1;
	}
	printf("%.9s: %lu\n", s, (unsigned long)u);
	return 0;
}

/* forktxn:M:UID:PASSWORD */
static int fork_txn(const char *service, const char *user, const char *arg)
{
	char mode = arg[0];
	char *end = NULL;
	uid_t u = (uid_t)strtoul(arg + 2, &end, 10);
	pid_t pid;
	int st;

	if ((mode != 'e' && mode != 'u') || arg[1] != ':' || end == NULL ||
	    *end != ':') {
		fprintf(stderr, "forktxn: bad argument %s\n", arg);
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if ((mode == 'e' ? seteuid(u) : drop_to(u)) != 0) {
			perror("forktxn");
			_exit(2);
		}
		exit(txn_as("child", service, user, end + 1, false) ==
			     PAM_SUCCESS ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) > 1) {
		fprintf(stderr, "forktxn: the child failed\n");
		return -1;
	}
	return 0;
}

/* threads:T:K:UID:PASSWORD */
struct worker {
	pthread_t t;
	const char *service, *user, *password;
	const int *stop;
	long ok, aborted, other;
	int first_other;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED) || w->ok == 0) {
		bool started;
		int rc = txn_quiet(w->service, w->user, w->password, false,
				   &started);

		if (rc == PAM_SUCCESS) {
			w->ok++;
		} else if (!started && rc == PAM_ABORT) {
			w->aborted++;
		} else if (w->other++ == 0) {
			w->first_other = rc;
		}
	}
	return NULL;
}

static int threads(const char *service, const char *user, const char *arg)
{
	struct worker w[64];
	long t = 0, k = 0, ok = 0, ab = 0, other = 0;
	unsigned long u = 0;
	int first_other = 0, stop = 0;
	char pw[256];

	if (sscanf(arg, "%ld:%ld:%lu:%255s", &t, &k, &u, pw) != 4 || t < 1 ||
	    t > 64 || k < 1) {
		fprintf(stderr, "threads: bad argument %s\n", arg);
		return -1;
	}
	for (long i = 0; i < t; i++) {
		w[i] = (struct worker){ .service = service, .user = user,
					.password = pw, .stop = &stop };
		if (pthread_create(&w[i].t, NULL, work, &w[i]) != 0) {
			fprintf(stderr, "threads: pthread_create failed\n");
			return -1;
		}
	}
	for (long i = 0; i < k; i++) {
		if (seteuid((uid_t)u) != 0 || seteuid(0) != 0) {
			perror("threads: seteuid");
			return -1;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (long i = 0; i < t; i++) {
		pthread_join(w[i].t, NULL);
		if (other == 0 && w[i].other > 0) {
			first_other = w[i].first_other;
		}
		ok += w[i].ok;
		ab += w[i].aborted;
		other += w[i].other;
	}
	printf("threads: abort %ld other %ld (first other result %d; %ld "
	       "transactions succeeded during %ld switches there and back)\n",
	       ab, other, first_other, ok, k);
	return ab == 0 && other == 0 ? 0 : 1;
}

/* The "stopparent" fork handler. */
static void stop_self(void)
{
	raise(SIGSTOP);
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
		} else if (strcmp(s, "stopparent") == 0) {
			pthread_atfork(NULL, stop_self, NULL);
		} else if (strcmp(s, "pid") == 0) {
			printf("pid: %ld\n", (long)getpid());
		} else if (strcmp(s, "daemon") == 0) {
			if (daemon(1, 1) != 0) {
				perror("daemon");
				return 2;
			}
		} else if (strncmp(s, "setuid:", 7) == 0) {
			uid_t u = (uid_t)strtoul(s + 7, NULL, 10);

			if (drop_to(u) != 0) {
				perror("setuid");
				return 2;
			}
			printf("setuid: %lu\n", (unsigned long)u);
		} else if (strncmp(s, "childdrop:", 10) == 0 ||
			   strncmp(s, "vforkdrop:", 10) == 0) {
			if (child_drop(s) != 0) {
				return 2;
			}
		} else if (strcmp(s, "deny") == 0) {
			if (write_deny(argv[1]) != 0) {
				return 2;
			}
			printf("deny: written\n");
		} else if (strncmp(s, "forktxn:", 8) == 0) {
			if (fork_txn(argv[1], argv[2], s + 8) != 0) {
				return 2;
			}
		} else if (strncmp(s, "threads:", 8) == 0) {
			int rc = threads(argv[1], argv[2], s + 8);

			if (rc < 0) {
				return 2;
			}
			if (rc > 0) {
				status = 1;
			}
		} else if (strncmp(s, "txns:", 5) == 0) {
			char *pw = NULL;
			long n = strtol(s + 5, &pw, 10), ok = 0;

			if (pw == NULL || *pw != ':') {
				fprintf(stderr, "txns: bad argument %s\n", s);
				return 2;
			}
			for (long k = 0; k < n; k++) {
				bool started;

				if (txn_quiet(argv[1], argv[2], pw + 1, false,
					      &started) == PAM_SUCCESS) {
					ok++;
				}
			}
			printf("txns: %ld\n", ok);
			if (ok != n) {
				status = 1;
			}
		} else if (strncmp(s, "resuid:", 7) == 0) {
			uid_t u = (uid_t)strtoul(s + 7, NULL, 10);

			if (setresuid(u, u, u) != 0) {
				perror("setresuid");
				return 2;
			}
			printf("resuid: %lu\n", (unsigned long)u);
		} else if (strncmp(s, "closefrom:", 10) == 0) {
			closefrom((int)strtol(s + 10, NULL, 10));
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
