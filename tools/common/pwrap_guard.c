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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	if (pwrap_wrapped())
		return again;
	if (lib == NULL)
		return -1;
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
	if (pwrap_preload_prepend(preload) != 0 || setenv("PAM_WRAPPER", "1", 1) != 0 ||
	    setenv(mark, "1", 1) != 0)
		return -1;
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

	if (sym == NULL || (keep != NULL && keep[0] == '1') || (t != NULL && old == NULL))
		goto out;
	memcpy(&runtime_dir, &sym, sizeof(sym));
	if (setenv("TMPDIR", dir, 1) != 0)
		goto out;
	(void)runtime_dir();
	if (old != NULL)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
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
	if (si == NULL)
		return 1;
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
		if (guard_child > 0)
			kill((pid_t)guard_child, sig);
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

	if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) == 0)
		sigaddset(&guard_set, sig);
}

void pwrap_guard_start(void)
{
	sigemptyset(&guard_set);
	for (size_t i = 0; i < sizeof(end_sigs) / sizeof(end_sigs[0]); i++)
		guard_catch(end_sigs[i]);
#if defined(SIGRTMIN) && defined(SIGRTMAX)
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		guard_catch(sig);
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
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&guard_set, sig) == 1)
				sigaction(sig, &dfl, NULL);
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
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

pid_t pwrap_guard_run(const char *prefix, bool keep, struct pwrap_tmp **top,
		      int *status, int (*before_fork)(const char *top))
{
	pid_t pid;

	pwrap_guard_start();
	if (!keep && (*top = pwrap_tmp_make(prefix)) == NULL)
		return -1;
	if (before_fork != NULL &&
	    before_fork(*top != NULL ? (*top)->path : NULL) != 0)
		return -1;
	pid = pwrap_guard_fork();
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
			  bool keep, int (*before_fork)(const char *top),
			  struct pwrap_tmp **top, int *status)
{
	if (pwrap_reexec_wrapped(mark, lib, preload, argv) < 0)
		return -1;
	return pwrap_guard_run(prefix, keep, top, status, before_fork);
}

void pwrap_guard_finish(pid_t pid, struct pwrap_tmp *top)
{
	if (pid != 0)
		(void)pwrap_tmp_remove(top);
	else
		pwrap_tmp_keep(top);
}
