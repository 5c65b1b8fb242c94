/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the hardening tests: private directories, whole-file I/O,
 * environments for wrapped children and spawning them.  They fail the
 * running cmocka test on any error, so callers need no checks.  Strings and
 * arrays they return are malloc'd and owned by the caller.
 */
#ifndef HARD_UTIL_H
#define HARD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <security/pam_appl.h>

/* A fresh directory below $TMPDIR (mode 0700). */
char *hu_mkdtemp(void);
/* mkdir of DIR/NAME (mode 0700); returns the path. */
char *hu_subdir(const char *dir, const char *name);
/* DIR/NAME */
char *hu_path(const char *dir, const char *name);
/* Removes a tree (never follows symlinks). */
void hu_rmtree(const char *dir);

void hu_write_file(const char *path, const char *data, size_t len,
		   mode_t mode);
/* The whole file, NUL-terminated; *len (may be NULL) its size.  NULL when
 * the file does not exist. */
char *hu_read_file(const char *path, size_t *len);
/* Entries of DIR other than . and .. (names printed when print). */
int hu_count_entries(const char *dir, bool print);
/* Waits up to SECONDS for DIR to be empty; returns the entries left. */
int hu_wait_empty(const char *dir, int seconds);

/*
 * An environment for a wrapped child: ours without TMPDIR, LD_PRELOAD and
 * PAM_WRAPPER*, plus TMPDIR=tmp, LD_PRELOAD=$PWRAP_PRELOAD,
 * PAM_WRAPPER_SERVICE_DIR=svc, PAM_WRAPPER=wrapper (when not NULL) and the
 * NULL-terminated EXTRA strings ("K=V").
 */
char **hu_env(const char *tmp, const char *svc, const char *wrapper,
	      const char *const *extra);
void hu_free_env(char **env);

/* The hard_client program. */
const char *hu_client(void);

/*
 * Spawns argv[0] with ENV.  stdout and stderr go to pipes returned in
 * *out_fd and *err_fd when those are not NULL (else to /dev/null); when
 * barrier_fd >= 0 it becomes the child's fd 3.
 */
pid_t hu_spawn(char *const argv[], char **env, int *out_fd, int *err_fd,
	       int barrier_fd);
/* waitpid, retried on EINTR; returns the status. */
int hu_wait(pid_t pid);
/* Reads FD to its end and closes it; NUL-terminated, *len (may be NULL)
 * the bytes read. */
char *hu_slurp(int fd, size_t *len);
/* Monotonic milliseconds. */
long long hu_now_ms(void);

#endif

/*
 * A passdb for N users "userNN" of service "hard", with comments, blank,
 * malformed, CRLF and too-many-field lines between them and a last line
 * without '\n', so that a rewrite that loses, duplicates or alters any
 * byte shows up in a plain comparison.  pw[i] is user i's password.
 */
char *hu_passdb_render(int n, char *const pw[]);
/* Service file text using pam_matrix with passdb=PATH for every group. */
char *hu_matrix_service(const char *passdb);

/*
 * The usual setup: TOP (private), TOP/db/passdb (empty, mode 0600),
 * TOP/svc/SERVICE (pam_matrix on that passdb for every group), TOP/tmp (the
 * children's TMPDIR) and ENV (a wrapped child's environment on those).
 */
struct hu_fixture {
	char *top, *db_dir, *passdb, *svc, *tmp;
	char **env;
};
void hu_fixture_init(struct hu_fixture *f, const char *service);
void hu_fixture_free(struct hu_fixture *f);	/* removes TOP */

/* Runs argv with ENV to its end; stdout and stderr returned in *out and
 * *err (malloc'd).  Returns the wait status. */
int hu_run_capture(char *const argv[], char **env, char **out, char **err);

/* A conversation that refuses everything. */
int hu_conv_none(int n, const struct pam_message **m,
		 struct pam_response **r, void *d);
