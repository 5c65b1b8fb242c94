/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A system's PAM stacks, run for real as a normal user (pam_wrapper
 * --system, pamtest's "service-dir system", the pytest fixture's
 * use_system()): a private copy of the service files in which each module
 * that needs root, a daemon or real accounts is replaced by a test double
 * on its own line, and each module whose state lives in /etc, /var or /run
 * gets that state in the private directory.  pwrap_system_table.c holds
 * the table that decides (documented in pam_wrapper(1)); pwrap_system.c
 * makes the copy with the wrapper's service-file rewriter.
 *
 * The private directory DIR gets:
 *   DIR/pam.d/   the copies (PAM_WRAPPER_SERVICE_DIR)
 *   DIR/state/   the modules' state and configuration files
 *                (PAM_WRAPPER_SYSTEM_DIR), where the caller also writes
 *                nss_wrapper's passwd and group (pam_localuser reads
 *                passwd there)
 *   DIR/swaps.json, DIR/swaps.txt  one record per module line, in the
 *                module trace's two formats (doc/trace-format.md)
 */
#ifndef PWRAP_SYSTEM_H
#define PWRAP_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>

/* The system's service files. */
#define PWRAP_SYSTEM_SRC "/etc/pam.d"

/* What becomes of a module: its table row or a --swap. */
enum pwrap_sys_kind {
	PWRAP_SYS_REAL,		/* runs as it is */
	PWRAP_SYS_STATE,	/* runs with its state in DIR/state */
	PWRAP_SYS_MATRIX,	/* pam_matrix as=MODULE: an account source */
	PWRAP_SYS_DOUBLE,	/* pam_double: what a working system returns */
	PWRAP_SYS_MODULE,	/* --swap M=PATH: another module */
};

/* A file of DIR/state a state row's option names. */
struct pwrap_sys_state {
	const char *opt;	/* the option, "dir" for dir=... */
	const char *name;	/* DIR/state/<name> */
	const char *seed;	/* the system's files copied into it, one
				 * after the other (blank-separated, a glob
				 * allowed), NULL: none */
	bool dir;		/* a directory (made empty) */
	bool written;		/* the module writes there: the line may not
				 * name its own */
	const char *probe;	/* NULL: every version of the module knows the
				 * option; else a string that is in the
				 * module's file when it knows it */
	bool optional;		/* a module without the option reads the
				 * system's file (harmless) rather than being
				 * refused */
};

struct pwrap_sys_row {
	const char *module;	/* libpam's name of it: "pam_unix" */
	enum pwrap_sys_kind kind;
	const char *codes;	/* PWRAP_SYS_DOUBLE: per function */
	struct pwrap_sys_state state[2];	/* PWRAP_SYS_STATE */
	const char *why;
};

/* The row of MODULE (libpam's name), or NULL. */
const struct pwrap_sys_row *pwrap_sys_row(const char *module);
/* Every row, ending with one whose module is NULL (pam_wrapper(1)). */
extern const struct pwrap_sys_row pwrap_sys_table[];

/* A --swap MODULE=REPLACEMENT. */
struct pwrap_sys_swap {
	char *module;		/* without ".so" */
	enum pwrap_sys_kind kind;
	char *arg;		/* PWRAP_SYS_MODULE: the path;
				 * PWRAP_SYS_DOUBLE: the code, "success" */
};
/* Parses a --swap argument into *s (owned, pwrap_sys_swap_free); NULL or
 * why it is no swap. */
const char *pwrap_sys_swap_parse(const char *arg, struct pwrap_sys_swap *s);
void pwrap_sys_swap_free(struct pwrap_sys_swap *s);

struct pwrap_system {
	const char *src;	/* the service files: PWRAP_SYSTEM_SRC or a
				 * test's copy of them */
	const char *dir;	/* the private directory (exists, empty) */
	const char *moddir;	/* our modules (pam_matrix.so, pam_double.so) */
	const char *passdb;	/* the account sources' passdb, named on their
				 * lines (a process may clear its environment
				 * before PAM runs: sshd's keyboard-interactive
				 * child); NULL: $PAM_MATRIX_PASSWD */
	const char *sysmoddir;	/* libpam's, NULL when unknown */
	const char *const *services;	/* only these (and "other" and what
					 * they include); none: every file */
	size_t nservices;
	const struct pwrap_sys_swap *swaps;
	size_t nswaps;
	const char *prog;	/* who reports: "pam_wrapper --system" */
	const char *swap_word;	/* how the caller spells a swap in its
				 * messages: "--swap " (NULL), "swap " */
	bool quiet;		/* no report on stderr */
};

/*
 * Makes DIR/pam.d, DIR/state and DIR/swaps.json from s->src.  Prints what
 * was swapped (once, on stderr) unless quiet.  Returns 0, or -1 after
 * saying why on stderr: a module that is neither in the table nor swapped
 * (each one named with its file:line and the --swap that would run it), a
 * file that cannot be read or is not the real user's or root's, an include
 * outside s->src, a line that would be too long for libpam once swapped.
 */
int pwrap_system_copy(const struct pwrap_system *s);

/*
 * Appends the swap records of the copy in dir (DIR/swaps.json, or
 * swaps.txt when format is "text") to the module trace file trace ("-":
 * stderr; NULL or "": nothing), opened as the wrapper opens it: appended,
 * created 0600, a symbolic link followed only when it belongs to root or
 * the real user.  0, or -1 after a warning.
 */
int pwrap_system_trace(const char *dir, const char *trace, const char *format);

#endif
