/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What pam_wrapper(1) and pamtest(1) promise about the processes they start
 * (pwrap_guard.c): the PAM work never runs unwrapped, and nothing they made
 * (the private directory holds a cleartext passdb) outlives them, whatever
 * signal ends them.  Problems are reported with warn()/warnx(); nothing
 * here exits.
 */
#ifndef PWRAP_GUARD_H
#define PWRAP_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Is a libpam_wrapper.so loaded in this process (its symbol is there)? */
int pwrap_wrapped(void);

/*
 * Make sure this process and the commands it starts run wrapped, never on
 * the system's /etc/pam.d (pamtest(1) and pam_wrapper(1) share this).  When
 * the wrapper is not loaded yet: put `preload` (colon-separated, holding
 * `lib`) in front of LD_PRELOAD, set PAM_WRAPPER=1 and the environment
 * variable `mark`, and execute /proc/self/exe again with argv.  Started
 * again (mark set), it is removed from the environment; if the wrapper is
 * still missing, the cause is printed.  Returns 1 when this process was
 * started again and is wrapped (LD_PRELOAD already holds `preload`), 0 when
 * it was wrapped from the start, -1 after a message (a path LD_PRELOAD
 * cannot hold, `lib` not the wrapper or not loaded, exec failed).
 */
int pwrap_reexec_wrapped(const char *mark, const char *lib, const char *preload,
			 char **argv);

/*
 * In a child that goes on to use PAM: have the wrapper make this process's
 * runtime directory below `dir` now (TMPDIR pointing there for the moment),
 * so that removing `dir` also removes it after a signal ended the child.
 * Nothing happens unwrapped or with PAM_WRAPPER_KEEP_DIR=1.
 */
void pwrap_runtime_below(const char *dir);

/*
 * Signals.  The work runs in a child: the command (launcher) or the
 * scenarios (pamtest).  The tool catches every signal whose default action
 * would end it (ignored ones stay ignored, for nohup), passes each one that
 * another process sent on to the child, waits for the child, then removes
 * what it made and exits with the child's status: 128+N when signal N ended
 * the child, which it does unless it handles or ignores N.
 *
 *   pwrap_guard_start();        before creating anything: caught, blocked
 *   pid = pwrap_guard_fork();   child: 0, default dispositions, old mask
 *   status = pwrap_guard_wait(pid);
 */
void pwrap_guard_start(void);
/* fflush(NULL) and fork(); -1 after a warning (signals unblocked again). */
pid_t pwrap_guard_fork(void);
/* The exit status for the child's end: its exit code, or 128+N. */
int pwrap_guard_wait(pid_t pid);
/* Secrets (n strings, owned by the caller) no output may show. */
struct pwrap_masks {
	const char *const *secrets;
	size_t n;
};
/*
 * All of the above for a tool whose PAM work runs in a child (pamtest,
 * pamtest explore): starts the guard, makes *TOP (unless KEEP) below which
 * the child's temporary and runtime directories go, and forks.  With M,
 * the child's standard error (its own messages, the wrapper's and the
 * modules' log lines) reaches ours through this process, line by line,
 * each of M's secrets replaced by "***" (pamtest: every password and
 * answer of the scenarios).  Returns 0
 * in the child; in the parent the child's pid once it ended, *STATUS its
 * exit status; -1 on an error (warned).  Unless it returned 0, the caller
 * removes *TOP when set (pwrap_tmp_remove); the child lets go of it
 * (pwrap_tmp_keep).  before_fork (NULL: none) runs just before the fork
 * with *TOP's path (NULL with KEEP): what it sets in the environment the
 * child inherits, and so do libraries' fork handlers (such as
 * nss_wrapper's, which reads its variables then); non-zero fails.
 */
struct pwrap_tmp;
pid_t pwrap_guard_run(const char *prefix, bool keep, const struct pwrap_masks *m,
		      struct pwrap_tmp **top, int *status,
		      int (*before_fork)(const char *top));
/*
 * pamtest and pamtest explore: pwrap_reexec_wrapped(mark, lib, preload,
 * argv), then pwrap_guard_run(prefix, keep, m, top, status, before_fork).
 * 0 in the child, which goes on; else (the parent, or an error, warned) the
 * caller ends with pwrap_guard_finish() and *status.
 */
pid_t pwrap_guard_wrapped(const char *mark, const char *lib,
			  const char *preload, char **argv, const char *prefix,
			  bool keep, const struct pwrap_masks *m,
			  int (*before_fork)(const char *top),
			  struct pwrap_tmp **top, int *status);
/* The end of a tool that called pwrap_guard_wrapped(): in the parent
 * (pid != 0) *top is removed (pwrap_tmp_remove), in the child let go of
 * (pwrap_tmp_keep). */
void pwrap_guard_finish(pid_t pid, struct pwrap_tmp *top);

#endif
