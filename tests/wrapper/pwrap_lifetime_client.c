/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A PAM application for test_lifetime.c, the tests of how the wrapper keeps
 * and cleans up its runtime directory.  It runs a list of steps and says by
 * its exit status which one failed, so it works even with stdout and stderr
 * closed, and as PID 1 of a PID namespace.
 *
 *   pwrap_lifetime_client SERVICE STEP...
 *
 *   ok:USER, deny:USER  pam_start + pam_authenticate + pam_end for USER, which
 *                       must succeed / must not (echo-off prompts are answered
 *                       with $PWRAP_CLIENT_PASSWORD, default "secret")
 *   write12             20 lines alternately to fd 1 and fd 2 (errors ignored:
 *                       they may be closed; a SIGPIPE kills us, as it would)
 *   dir                 $PAM_WRAPPER_RUNTIME_DIR names an existing directory
 *   nostdfds            fds 0, 1 and 2 are all still closed
 *   cloexec             every open fd >= 3 (except those of dup2null) is
 *                       FD_CLOEXEC
 *   sync                prints "ready PID RUNTIME_DIR" on fd 1, then waits
 *                       for a line on fd 0
 *   closefrom           closefrom(3)
 *   closeloop           close() of every fd from 3 up to the fd limit
 *   dup2null            dup2() of /dev/null over every open fd >= 3
 *   dupok               the fds dup2null covered still are /dev/null
 *   waitall             `while (wait(NULL) > 0);` as an init does; it must
 *                       reap nothing (we made no child)
 *   euid0               geteuid() == 0 (uid_wrapper's UID_WRAPPER_ROOT=1)
 *
 * Built twice: linked with libpam (the wrapper sets up when the program is
 * loaded), and with -DPWRAP_LT_DLOPEN as pwrap_lifetime_dlclient, which
 * dlopen()s libpam and calls pam_start through the global scope, as Python
 * does with pypamtest: the wrapper then sets up at the first pam_start, after
 * every preloaded library (uid_wrapper) is initialised.
 *
 * Exit status: 0 every step held; 10 + i step i (from 0) failed; 3 usage;
 * 9 still running after 60 s.  The reason of a failure goes to stderr and,
 * when $PWRAP_LT_REPORT names a file, is appended there (stderr may be
 * closed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <security/pam_appl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define MAX_DUPS 256

/* libpam's entry points: linked, or looked up after dlopen() */
static struct {
	int (*start)(const char *, const char *, const struct pam_conv *,
		     pam_handle_t **);
	int (*authenticate)(pam_handle_t *, int);
	int (*end)(pam_handle_t *, int);
} pam;

static int dups[MAX_DUPS];	/* fds dup2null covered */
static size_t n_dups;
static struct stat devnull;

static void report(const char *fmt, ...)
{
	const char *path = getenv("PWRAP_LT_REPORT");
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0) {
		return;
	}
	if (n > (int)sizeof(line) - 2) {
		n = (int)sizeof(line) - 2;
	}
	line[n++] = '\n';
	if (write(2, line, (size_t)n) < 0) {
		/* stderr closed: the report file below is all there is */
	}
	if (path != NULL) {
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0644);

		if (fd >= 0) {
			if (write(fd, line, (size_t)n) < 0) {
				/* nothing more to do */
			}
			close(fd);
		}
	}
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(9);	/* a handler: PID 1 ignores a default-action signal */
}

static int conv(int n, const struct pam_message **msg,
		struct pam_response **resp, void *data)
{
	struct pam_response *r = calloc((size_t)n, sizeof(*r));
	const char *pw = getenv("PWRAP_CLIENT_PASSWORD");

	(void)data;
	if (r == NULL) {
		return PAM_BUF_ERR;
	}
	for (int i = 0; i < n; i++) {
		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup(pw ? pw : "secret");
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

static bool transaction(const char *service, const char *user, bool want_ok)
{
	struct pam_conv c = { conv, NULL };
	pam_handle_t *ph = NULL;
	int rc = pam.start(service, user, &c, &ph);

	if (rc != PAM_SUCCESS) {
		report("pam_start(%s, %s): %d", service, user, rc);
		return false;
	}
	rc = pam.authenticate(ph, 0);
	pam.end(ph, rc);
	if ((rc == PAM_SUCCESS) != want_ok) {
		report("authenticate %s: %d, expected %s", user, rc,
		       want_ok ? "PAM_SUCCESS" : "a refusal");
		return false;
	}
	return true;
}

static int fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur > (1 << 20)) {
		return 1 << 20;
	}
	return (int)rl.rlim_cur;
}

static bool is_dup(int fd)
{
	for (size_t i = 0; i < n_dups; i++) {
		if (dups[i] == fd) {
			return true;
		}
	}
	return false;
}

/* Reads one line from fd 0 (byte by byte: nothing may stay buffered). */
static bool wait_line(void)
{
	char ch;

	for (;;) {
		ssize_t n = read(0, &ch, 1);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return false;
		}
		if (ch == '\n') {
			return true;
		}
	}
}

static bool step(const char *service, const char *s)
{
	const char *rd = getenv("PAM_WRAPPER_RUNTIME_DIR");
	struct stat st;

	if (strncmp(s, "ok:", 3) == 0) {
		return transaction(service, s + 3, true);
	}
	if (strncmp(s, "deny:", 5) == 0) {
		return transaction(service, s + 5, false);
	}
	if (strcmp(s, "write12") == 0) {
		static const char line[] = "pwrap_lifetime_client: a line the "
					   "program itself writes to its "
					   "stdout or stderr, as programs do\n";

		for (int i = 0; i < 20; i++) {
			if (write(1 + i % 2, line, sizeof(line) - 1) < 0) {
				/* closed: that is fine */
			}
			usleep(20000);	/* let anything reading them react */
		}
		return true;
	}
	if (strcmp(s, "dir") == 0) {
		if (rd == NULL || stat(rd, &st) != 0 || !S_ISDIR(st.st_mode)) {
			report("PAM_WRAPPER_RUNTIME_DIR %s is not a directory",
			       rd ? rd : "(unset)");
			return false;
		}
		return true;
	}
	if (strcmp(s, "nostdfds") == 0) {
		for (int fd = 0; fd < 3; fd++) {
			if (fcntl(fd, F_GETFD) != -1) {
				report("fd %d was closed at exec but is open "
				       "now: the wrapper must keep fds >= 3",
				       fd);
				return false;
			}
		}
		return true;
	}
	if (strcmp(s, "cloexec") == 0) {
		int lim = fd_limit();

		for (int fd = 3; fd < lim && fd < 65536; fd++) {
			int fl = fcntl(fd, F_GETFD);

			if (fl != -1 && !(fl & FD_CLOEXEC) && !is_dup(fd)) {
				char link[64], target[256] = "?";
				ssize_t n;

				snprintf(link, sizeof(link), "/proc/self/fd/%d",
					 fd);
				n = readlink(link, target, sizeof(target) - 1);
				target[n > 0 ? n : 1] = '\0';
				report("fd %d (%s) is not O_CLOEXEC", fd,
				       target);
				return false;
			}
		}
		return true;
	}
	if (strcmp(s, "sync") == 0) {
		dprintf(1, "ready %ld %s\n", (long)getpid(), rd ? rd : "-");
		if (!wait_line()) {
			report("sync: no line on stdin");
			return false;
		}
		return true;
	}
	if (strcmp(s, "closefrom") == 0) {
		closefrom(3);
		return true;
	}
	if (strcmp(s, "closeloop") == 0) {
		int lim = fd_limit();

		for (int fd = 3; fd < lim; fd++) {
			close(fd);
		}
		return true;
	}
	if (strcmp(s, "dup2null") == 0) {
		int nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
		int lim = fd_limit();

		if (nfd < 0 || fstat(nfd, &devnull) != 0) {
			report("/dev/null: %s", strerror(errno));
			return false;
		}
		for (int fd = 3; fd < lim && fd < 65536 && n_dups < MAX_DUPS;
		     fd++) {
			if (fd != nfd && fcntl(fd, F_GETFD) != -1) {
				if (dup2(nfd, fd) != fd) {
					report("dup2 over %d: %s", fd,
					       strerror(errno));
					return false;
				}
				dups[n_dups++] = fd;
			}
		}
		close(nfd);
		return true;
	}
	if (strcmp(s, "dupok") == 0) {
		for (size_t i = 0; i < n_dups; i++) {
			if (fstat(dups[i], &st) != 0 ||
			    st.st_dev != devnull.st_dev ||
			    st.st_ino != devnull.st_ino) {
				report("fd %d, /dev/null put there by the "
				       "program, was closed or replaced",
				       dups[i]);
				return false;
			}
		}
		return true;
	}
	if (strcmp(s, "waitall") == 0) {
		int reaped = 0;

		while (wait(NULL) > 0) {
			reaped++;
		}
		if (errno != ECHILD || reaped != 0) {
			report("waitall: reaped %d process(es) we never made "
			       "(%s)", reaped, strerror(errno));
			return false;
		}
		return true;
	}
	if (strcmp(s, "euid0") == 0) {
		if (geteuid() != 0) {
			report("euid %ld: uid_wrapper is not in effect",
			       (long)geteuid());
			return false;
		}
		return true;
	}
	report("unknown step %s", s);
	return false;
}

static bool pam_load(void)
{
#ifdef PWRAP_LT_DLOPEN
	/* the global scope, where the preloaded wrapper's pam_start comes
	 * before libpam's (as for pypamtest's calls once Python imports it) */
	if (dlopen("libpam.so.0", RTLD_NOW | RTLD_GLOBAL) == NULL) {
		report("dlopen libpam.so.0: %s", dlerror());
		return false;
	}
	*(void **)&pam.start = dlsym(RTLD_DEFAULT, "pam_start");
	*(void **)&pam.authenticate = dlsym(RTLD_DEFAULT, "pam_authenticate");
	*(void **)&pam.end = dlsym(RTLD_DEFAULT, "pam_end");
#else
	pam.start = pam_start;
	pam.authenticate = pam_authenticate;
	pam.end = pam_end;
#endif
	return pam.start != NULL && pam.authenticate != NULL && pam.end != NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	if (argc < 3) {
		report("usage: %s SERVICE STEP...", argv[0]);
		return 3;
	}
	if (!pam_load()) {
		return 3;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(TU_HANG_SECONDS);	/* only a hang reaches it */
	for (int i = 2; i < argc; i++) {
		if (!step(argv[1], argv[i])) {
			report("pwrap_lifetime_client: step %d (%s) failed",
			       i - 2, argv[i]);
			return 10 + i - 2;
		}
	}
	return 0;
}
