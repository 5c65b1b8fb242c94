/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guards shared by pam_wrapper(1) and pamtest(1) (see pwrap_guard.h): the
 * re-execution under LD_PRELOAD that makes sure the PAM work is wrapped,
 * and the signal handling that lets the tool remove its private directories
 * whatever signal it gets.  The signal handler only forwards the signal
 * (kill(2) is async-signal-safe); every removal is done by the caller in
 * normal context once the child has ended.
 */
#define _GNU_SOURCE
#include "pwrap_guard.h"
#include "pwrap_tool.h"

#include <dlfcn.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

int pwrap_wrapped(void)
{
	return dlsym(RTLD_DEFAULT, "pam_wrapper_enabled") != NULL;
}

/* Why `lib` is not loaded as the wrapper after starting again with it. */
static const char *why_not_wrapped(const char *lib)
{
	void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);

	if (h != NULL) {
		dlclose(h);
		return "it is loaded but is not libpam_wrapper.so (it has no "
		       "pam_wrapper_enabled)";
	}
	return "the dynamic loader did not load it (see its message, if any, "
	       "above; LD_PRELOAD is also ignored for set-user-ID programs)";
}

int pwrap_reexec_wrapped(const char *mark, const char *lib, const char *preload,
			 char **argv)
{
	int again = getenv(mark) != NULL;

	unsetenv(mark);
	if (pwrap_wrapped()) {
		return again;
	}
	if (lib == NULL) {
		return -1;
	}
	/* Commands would run unwrapped: pam_start() would read the system's
	 * /etc/pam.d.  Refuse before running anything. */
	if (strpbrk(lib, " \t\n:") != NULL) {
		warnx("%s: LD_PRELOAD cannot hold a path with a blank or ':' (it "
		      "splits there), so libpam_wrapper.so would not be loaded and "
		      "pam_start() would read the system's /etc/pam.d; not running. "
		      "Use the library from a path without them (a symbolic link "
		      "to it will do)", lib);
		return -1;
	}
	if (again) {
		const char *pre = getenv("LD_PRELOAD");

		warnx("libpam_wrapper.so is not loaded after starting again with "
		      "LD_PRELOAD=%s: %s: %s; not running, since pam_start() would "
		      "read the system's /etc/pam.d", pre != NULL ? pre : "", lib,
		      why_not_wrapped(lib));
		return -1;
	}
	if (pwrap_preload_prepend(preload) != 0 ||
	    setenv("PAM_WRAPPER", "1", 1) != 0 || setenv(mark, "1", 1) != 0) {
		return -1;
	}
	fflush(NULL);
	execv("/proc/self/exe", argv);
	warn("cannot re-execute /proc/self/exe");
	return -1;
}

void pwrap_runtime_below(const char *dir)
{
	const char *(*runtime_dir)(void) = NULL;
	const char *keep = getenv("PAM_WRAPPER_KEEP_DIR");
	const char *t = getenv("TMPDIR");
	char *old = t != NULL ? strdup(t) : NULL;
	void *sym = dlsym(RTLD_DEFAULT, "pam_wrapper_runtime_dir");

	if (sym == NULL || (keep != NULL && keep[0] == '1') ||
	    (t != NULL && old == NULL)) {
		goto out;
	}
	memcpy(&runtime_dir, &sym, sizeof(sym));
	if (setenv("TMPDIR", dir, 1) != 0) {
		goto out;
	}
	(void)runtime_dir();
	if (old != NULL) {
		setenv("TMPDIR", old, 1);
	} else {
		unsetenv("TMPDIR");
	}
out:
	free(old);
}

/* ---- signals ------------------------------------------------------------ */

/* Signals whose default action ends a process (POSIX, then per system). */
static const int end_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
	SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
	SIGVTALRM, SIGPROF, SIGSYS,
#ifdef SIGPOLL
	SIGPOLL,
#endif
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
#ifdef SIGPWR
	SIGPWR,
#endif
#ifdef SIGEMT
	SIGEMT,
#endif
};

static volatile sig_atomic_t guard_child;	/* the child's pid, or 0 */
static sigset_t guard_set;	/* the signals we catch */
static sigset_t guard_old;	/* the mask before pwrap_guard_start() */

/* Faults raised by the CPU: returning from the handler would repeat them. */
static int is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGTRAP || sig == SIGSYS;
}

/* Whether another process sent the signal with kill(2), sigqueue(3), ... */
static int sent_by_process(const siginfo_t *si)
{
	if (si == NULL) {
		return 1;
	}
	if (si->si_code != SI_USER && si->si_code != SI_QUEUE
#ifdef SI_TKILL
	    && si->si_code != SI_TKILL
#endif
	)
		return 0;
	/* Not ourselves (abort(), the kernel's SIGPIPE for our write), not
	 * the child (it would get its own signal back). */
	return si->si_pid != getpid() && si->si_pid != (pid_t)guard_child;
}

static void guard_handler(int sig, siginfo_t *si, void *uctx)
{
	int saved = errno;

	(void)uctx;
	if (sent_by_process(si)) {
		if (guard_child > 0) {
			kill((pid_t)guard_child, sig);
		}
	} else if (is_fault(sig)) {
		/* A fault of our own: die of it, with the core dump. */
		signal(sig, SIG_DFL);
	}
	/* Else the kernel sent it: a terminal's ^C, ^\ or hangup reached the
	 * child (same process group) as well; our own SIGPIPE or SIGXFSZ
	 * makes the write fail instead. */
	errno = saved;
}

static void guard_catch(int sig)
{
	struct sigaction sa, old;

	if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN) {
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) == 0) {
		sigaddset(&guard_set, sig);
	}
}

void pwrap_guard_start(void)
{
	sigemptyset(&guard_set);
	for (size_t i = 0; i < sizeof(end_sigs) / sizeof(end_sigs[0]); i++) {
		guard_catch(end_sigs[i]);
	}
#if defined(SIGRTMIN) && defined(SIGRTMAX)
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
		guard_catch(sig);
	}
#endif
	/* Until the child exists: a signal now is passed on to it then. */
	sigprocmask(SIG_BLOCK, &guard_set, &guard_old);
}

pid_t pwrap_guard_fork(void)
{
	struct sigaction dfl;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		warn("fork");
		sigprocmask(SIG_SETMASK, &guard_old, NULL);
		return -1;
	}
	if (pid == 0) {
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		for (int sig = 1; sig < NSIG; sig++) {
			if (sigismember(&guard_set, sig) == 1) {
				sigaction(sig, &dfl, NULL);
			}
		}
		sigprocmask(SIG_SETMASK, &guard_old, NULL);
		return 0;
	}
	guard_child = pid;
	sigprocmask(SIG_SETMASK, &guard_old, NULL);
	return pid;
}

int pwrap_guard_wait(pid_t pid)
{
	siginfo_t si;
	sigset_t cur;
	int status;

	/* Wait without reaping, so that a signal forwarded meanwhile cannot
	 * reach another process that got the pid. */
	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0) {
		if (errno != EINTR) {
			warn("waitid");
			break;
		}
	}
	sigprocmask(SIG_BLOCK, &guard_set, &cur);
	guard_child = 0;
	sigprocmask(SIG_SETMASK, &cur, NULL);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			warn("waitpid");
			return 126;
		}
	}
	if (WIFSIGNALED(status)) {
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

/* ---- the relay of the child's standard error ----------------------------- */

/* What the relay holds back at most before it writes a line it has not
 * seen the end of (more when a secret is longer). */
#define RELAY_LINE 65536

static void no_op(int sig)
{
	(void)sig;
}

static bool child_ended(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == pid;
}

/* Writes all of b to our standard error (what cannot be written is
 * dropped: the child must never block on a full pipe) and frees it. */
static void relay_out(struct pwrap_buf *b)
{
	size_t off = 0;

	while (!b->failed && off < b->len) {
		ssize_t n = write(STDERR_FILENO, b->p + off, b->len - off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		off += (size_t)n;
	}
	pwrap_buf_free(b);
}

/* Masks and writes what the pending bytes hold: up to their last newline,
 * everything (at_end), or, when the buffer is full without one, all but
 * what could be the start of a secret.  The rest moves to the front. */
static void relay_flush(char *pend, size_t *len, size_t cap, size_t longest,
			bool at_end, const struct pwrap_masks *m)
{
	struct pwrap_buf out = { 0 };
	size_t upto = 0, used;

	if (at_end) {
		upto = *len;
	} else {
		for (size_t i = *len; i > 0; i--) {
			if (pend[i - 1] == '\n') {
				upto = i;
				break;
			}
		}
		if (upto == 0 && *len == cap) {
			upto = *len - (longest > 0 ? longest - 1 : 0);
		}
	}
	if (upto == 0) {
		return;
	}
	used = pwrap_buf_masked(&out, pend, *len, upto, m->secrets, m->n);
	relay_out(&out);
	memmove(pend, pend + used, *len - used);
	explicit_bzero(pend + *len - used, used);
	*len -= used;
}

/*
 * In the parent: what the child writes to rfd goes to our standard error,
 * line by line, every secret replaced by "***" (pwrap_buf_masked), until
 * the pipe's end or the child's (then what is there is drained: a process
 * the child started and left holding the pipe never keeps us waiting).
 * SIGCHLD, blocked but while waiting in pselect(), says the child ended.
 */
static void relay(int rfd, pid_t pid, const struct pwrap_masks *m)
{
	size_t longest = 0, cap, len = 0;
	sigset_t chld, during;
	char *pend;
	bool ended = false;

	for (size_t i = 0; i < m->n; i++) {
		if (m->secrets[i] != NULL && strlen(m->secrets[i]) > longest) {
			longest = strlen(m->secrets[i]);
		}
	}
	cap = longest < RELAY_LINE / 2 ? RELAY_LINE : 2 * longest + 1;
	pend = malloc(cap);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &during);
	sigdelset(&during, SIGCHLD);
	while (pend != NULL) {
		fd_set rs;
		ssize_t n;

		if (!ended && (ended = child_ended(pid))) {
			(void)fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) | O_NONBLOCK);
		}
		FD_ZERO(&rs);
		FD_SET(rfd, &rs);
		if (!ended && pselect(rfd + 1, &rs, NULL, NULL, NULL, &during) < 0) {
			if (errno == EINTR) {
				continue;	/* a signal, SIGCHLD perhaps */
			}
			break;
		}
		n = read(rfd, pend + len, cap - len);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;		/* the end, or drained after the child's */
		}
		len += (size_t)n;
		relay_flush(pend, &len, cap, longest, false, m);
	}
	if (pend != NULL) {
		relay_flush(pend, &len, cap, longest, true, m);
		explicit_bzero(pend, cap);
		free(pend);
	} else {
		warn("relay of the scenarios' messages");
	}
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
}

pid_t pwrap_guard_run(const char *prefix, bool keep, const struct pwrap_masks *m,
		      struct pwrap_tmp **top, int *status,
		      int (*before_fork)(const char *top))
{
	struct sigaction sa, old_chld;
	int p[2] = { -1, -1 };
	pid_t pid;

	pwrap_guard_start();
	if (!keep && (*top = pwrap_tmp_make(prefix)) == NULL) {
		return -1;
	}
	if (before_fork != NULL &&
	    before_fork(*top != NULL ? (*top)->path : NULL) != 0) {
		return -1;
	}
	if (m != NULL) {
		if (pipe(p) != 0) {
			warn("pipe");
			return -1;
		}
		if (p[0] >= FD_SETSIZE) {	/* pselect() could not wait */
			warnx("pipe: descriptor %d too high", p[0]);
			close(p[0]);
			close(p[1]);
			return -1;
		}
		(void)fcntl(p[0], F_SETFD, FD_CLOEXEC);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = no_op;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGCHLD, &sa, &old_chld);
	}
	pid = pwrap_guard_fork();
	if (pid == 0 && m != NULL) {
		sigaction(SIGCHLD, &old_chld, NULL);
		dup2(p[1], STDERR_FILENO);
		close(p[0]);
		close(p[1]);
	} else if (m != NULL) {
		close(p[1]);
		if (pid > 0) {
			relay(p[0], pid, m);
		}
		close(p[0]);
		sigaction(SIGCHLD, &old_chld, NULL);
	}
	if (pid > 0) {
		*status = pwrap_guard_wait(pid);
	} else if (pid == 0 && *top != NULL) {
		pwrap_set_tmpbase(*top);
		pwrap_runtime_below((*top)->path);
	}
	return pid;
}

pid_t pwrap_guard_wrapped(const char *mark, const char *lib,
			  const char *preload, char **argv, const char *prefix,
			  bool keep, const struct pwrap_masks *m,
			  int (*before_fork)(const char *top),
			  struct pwrap_tmp **top, int *status)
{
	if (pwrap_reexec_wrapped(mark, lib, preload, argv) < 0) {
		return -1;
	}
	return pwrap_guard_run(prefix, keep, m, top, status, before_fork);
}

void pwrap_guard_finish(pid_t pid, struct pwrap_tmp *top)
{
	if (pid != 0) {
		(void)pwrap_tmp_remove(top);
	} else {
		pwrap_tmp_keep(top);
	}
}
