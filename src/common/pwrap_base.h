/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where private directories may be made (the bases), and which of them are
 * trusted (pwrap_base.c): the one rule of the wrapper's runtime
 * directories and of the tools' private directories (pam_wrapper(1)'s
 * --user directory, pamtest(1)'s and pamtest explore's).
 * Self-contained: logs nothing, says why in the caller's buffers.
 */
#ifndef PWRAP_BASE_H
#define PWRAP_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PWRAP_MAX_BASES 3
#define PWRAP_BASE_TMPDIR 1u
#define PWRAP_BASE_SHM 2u
#define PWRAP_BASE_TMP 4u
struct pwrap_base {
	const char *path;
	const char *label;	/* "TMPDIR " or "", for messages */
	unsigned bit;		/* PWRAP_BASE_* */
};

/* pwrap_bases() flags.  TOKEN: the wrapper's paths become tokens of
 * service-file lines, so a $TMPDIR whose real path holds a blank or '#' is
 * not used.  RELATIVE: a relative $TMPDIR is resolved against the working
 * directory now (the tools, which resolve it once at start; the wrapper
 * makes its directories later, after a possible chdir, and skips one). */
#define PWRAP_BASES_TOKEN 1u
#define PWRAP_BASES_RELATIVE 2u

/* The bases in order ($TMPDIR resolved, /dev/shm on Linux, /tmp); returns
 * how many.  *resolved is the malloc'd real path of $TMPDIR (or NULL), which
 * out[0].path may point to: the caller frees it after use.  When $TMPDIR is
 * set but not used, note (n bytes) says why ("" otherwise). */
size_t pwrap_bases(struct pwrap_base out[PWRAP_MAX_BASES], char **resolved,
		   unsigned flags, char *note, size_t n);
/* Whether the base directory st must not be trusted by a process whose
 * real file-system uid is uid ((uid_t)-1: not known yet; then only what
 * the mode tells); why (n bytes) then says why. */
bool pwrap_base_distrust(const struct stat *st, uid_t uid, char *why,
			 size_t n);
/* What a message says of the rule, after "only" (one copy of the text). */
#define PWRAP_BASE_RULE "a directory owned by this process's user or " \
	"root, and writable by nobody else unless sticky, is trusted"

#endif
