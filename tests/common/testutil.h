/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one helper library of the C tests (static library pwrap_testutil,
 * tests/common/CMakeLists.txt): private directories below $TMPDIR, whole-file
 * I/O, tree removal, environments for wrapped children, spawning and
 * waiting for them with a bound, capturing our own stderr, and the small
 * pieces every cmocka program needs.  Each part's own helpers (modtest.c,
 * hard_util.c) build on these and keep only what is specific to that part.
 *
 * Errors: a tu_ function fails the running cmocka test (assert/fail_msg) on
 * any error, so callers need no checks; the exceptions say so (the _quiet
 * and _opt variants, tu_wait_bounded).  Outside a running test a failure
 * ends the program, as cmocka's assertions do.
 *
 * Memory: every char * and char ** returned is malloc'd and owned by the
 * caller (free(), or tu_env_free() for environments); nothing returned
 * points into static storage.
 */
#ifndef PWRAP_TESTUTIL_H
#define PWRAP_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <security/pam_appl.h>

/*
 * How long a test waits for anything before it calls it a hang: far above
 * any honest time, on a loaded CI machine too (ctest -j4 on two busy
 * cores), so that only a hang reaches it.  No test asserts how fast
 * something is; a test that must tell a loop from slowness counts CPU time
 * (test_differential) or watches for progress.  TU_SUITE_HANG_SECONDS
 * bounds a whole program (tu_alarm at its start), below ctest's TIMEOUT
 * (cmake/PwrapTesting.cmake).
 */
#define TU_HANG_SECONDS 600
#define TU_SUITE_HANG_SECONDS 3000

/* ---- directories and paths ---------------------------------------------- */

/* A fresh directory $TMPDIR/TAG.XXXXXX (mode 0700; /tmp when TMPDIR is unset
 * or empty).  Caller frees the path. */
char *tu_mkdtemp(const char *tag);
/* tu_mkdtemp(TAG), then PAM_WRAPPER_SERVICE_DIR points at it.  Caller frees
 * the path. */
char *tu_svcdir_new(const char *tag);
/* DIR/NAME.  Caller frees. */
char *tu_path(const char *dir, const char *name);
/* mkdir of DIR/NAME (mode 0700).  Caller frees the path. */
char *tu_subdir(const char *dir, const char *name);
/* Removes the tree at DIR (never follows symlinks); a DIR that does not
 * exist is no error.  Fails the test when something is left. */
void tu_rmtree(const char *dir);
/* The same for teardowns that must not fail: best effort, DIR may be NULL;
 * 0 when the tree is gone, else -1. */
int tu_rmtree_quiet(const char *dir);
/* Entries of DIR other than . and .. (each named on stdout when PRINT). */
int tu_count_entries(const char *dir, bool print);
/* Waits up to SECONDS for DIR to be empty; the entries left (printed). */
int tu_wait_empty(const char *dir, int seconds);
/* cmocka setup and teardown: *STATE becomes a fresh tu_mkdtemp directory
 * (its path, owned by the pair); the teardown removes it (tu_rmtree) and
 * frees the path. */
int tu_setup_tmpdir(void **state);
int tu_teardown_tmpdir(void **state);
/* unlink of DIR/NAME. */
void tu_unlink_at(const char *dir, const char *name);

/* ---- files -------------------------------------------------------------- */

/* Creates or truncates PATH with LEN bytes of DATA, then sets MODE. */
void tu_write_file(const char *path, const void *data, size_t len,
		   mode_t mode);
/* DIR/NAME holding TEXT (mode 0644). */
void tu_write_text(const char *dir, const char *name, const char *text);
/* The whole file, NUL-terminated (caller frees); *LEN (may be NULL) gets
 * its size.  A file that cannot be read fails the test. */
char *tu_read_file(const char *path, size_t *len);
/* The same, but NULL (no failure) when PATH does not exist. */
char *tu_read_file_opt(const char *path, size_t *len);
/* tu_read_file_opt of DIR/NAME, without the length. */
char *tu_read_at(const char *dir, const char *name);
/* Reads FD to its end and closes it; NUL-terminated (caller frees), *LEN
 * (may be NULL) the bytes read. */
char *tu_slurp(int fd, size_t *len);

/* Captures what this process writes to fd 2 between begin and end; end
 * returns it (caller frees).  Not nested. */
void tu_stderr_begin(void);
char *tu_stderr_end(void);

/* ---- environments for children (NULL-terminated "NAME=value" arrays) ---- */

/* A copy of environ without the entries that start with one of the prefixes
 * in DROP (NULL-terminated; NULL drops nothing).  Free with tu_env_free. */
char **tu_env_copy(const char *const *drop);
/* Appends one entry made from a printf format (an existing NAME stays). */
void tu_env_add(char ***env, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Replaces NAME's entry, or appends one. */
void tu_env_set(char ***env, const char *name, const char *value);
/* NAME's value in ENV (pointing into ENV), or NULL; ENV may be NULL. */
const char *tu_env_get(char *const *env, const char *name);
/* Frees ENV and its strings; NULL is allowed. */
void tu_env_free(char **env);
/*
 * A wrapped child's environment: ours without TMPDIR, LD_PRELOAD and
 * PAM_WRAPPER*, plus TMPDIR=TMP, LD_PRELOAD=$PWRAP_PRELOAD,
 * PAM_WRAPPER_SERVICE_DIR=SVC and PAM_WRAPPER=WRAPPER (each when not NULL)
 * and the NULL-terminated EXTRA strings ("K=V"; EXTRA may be NULL).
 */
char **tu_env_wrapped(const char *tmp, const char *svc, const char *wrapper,
		      const char *const *extra);

/* ---- child processes ----------------------------------------------------- */

/* tu_spawn flags: stdout and stderr that get no pipe stay ours (else they
 * are /dev/null); stderr goes to the stdout pipe too. */
#define TU_SPAWN_INHERIT 1u
#define TU_SPAWN_MERGE 2u

/*
 * Spawns argv[0] with ENV.  stdout and stderr go to pipes whose read ends
 * are returned in *OUT_FD and *ERR_FD when those are not NULL (both
 * close-on-exec here); FD3 >= 0 becomes the child's fd 3.
 */
pid_t tu_spawn(char *const argv[], char **env, int *out_fd, int *err_fd,
	       int fd3, unsigned flags);
/* waitpid, retried on EINTR; returns the status. */
int tu_wait(pid_t pid);
/* SIGKILL to PID, then reaps it. */
void tu_kill_wait(pid_t pid);
/* Waits up to SECS seconds for PID and kills it when it hangs: its exit
 * code, -1 for a hang, or -2 - N for death by signal N.  Never fails. */
int tu_wait_bounded(pid_t pid, double secs);
/* Runs argv with ENV to its end; stdout in *OUT and stderr in *ERR (both
 * malloc'd, caller frees).  ERR NULL: stderr goes into *OUT as well.
 * Returns the wait status. */
int tu_run_capture(char *const argv[], char **env, char **out, char **err);
/* Skips the running cmocka test, first printing one line
 * "skipped: <reason>" (the form every skip of ours prints, so that a
 * summary can collect the reasons).  Does not return. */
#define TU_SKIP(...)                                                         \
	do {                                                                 \
		tu_skip_reason(__VA_ARGS__);                                 \
		skip();                                                      \
	} while (0)
void tu_skip_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* In a forked child: the default action for the signals cmocka catches, so
 * that a crash kills the child (which its parent sees) instead of running
 * the rest of the suite in it. */
void tu_child_signals(void);
/* Arms an alarm of SECONDS that ends this program with MSG on stderr and
 * exit code 124: a regression fails instead of hanging.  MSG must stay
 * valid (a string literal). */
void tu_alarm(unsigned seconds, const char *msg);
/* Forks a child that truncates PATH and writes it again in 64 KiB pieces
 * (what "cat new > PATH" does), A (ALEN bytes) and B (BLEN bytes) by turns,
 * whole for 2 ms each time, until it is killed (tu_kill_wait); its pid.
 * For readers that must cope with a file changing under them. */
pid_t tu_rewriter_start(const char *path, const char *a, size_t alen,
			const char *b, size_t blen);
/* Monotonic clock: seconds, and milliseconds. */
double tu_now(void);
long long tu_now_ms(void);

/* ---- PAM ---------------------------------------------------------------- */

/* A conversation that refuses everything (PAM_CONV_ERR). */
int tu_conv_none(int n, const struct pam_message **m,
		 struct pam_response **r, void *d);
/* A conversation that answers every prompt with the string appdata D ("" for
 * NULL) and ignores messages; replies are malloc'd, libpam frees them. */
int tu_conv_password(int n, const struct pam_message **m,
		     struct pam_response **r, void *d);

#endif
