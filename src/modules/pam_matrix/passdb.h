/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's password database: a text file of "user:password:service"
 * lines.  A lookup opens the file, streams it through one fixed-size buffer
 * looking for "\nUSER:" with memmem() (the start of the file counts as a
 * line start), checks only the lines that start with "USER:" against the
 * line rules, and closes it again: no threads, no mapping, nothing kept
 * between lookups, so a file edited, truncated or replaced at any moment
 * gives a clean answer and never a signal.  Lines are read as upstream's
 * pam_matrix reads them (pam_matrix(8)); only the lines it crashes on are
 * skipped.  Only regular files of at most PM_PASSDB_MAX bytes are read; a
 * directory and /dev/null read as empty.  Skipped lines are reported as
 * "file:line: reason, line skipped" (never their content): those that start
 * with "USER:" before the line used, or every one of the file when USER has
 * none that is read; the line used is reported when it ends with a CR or
 * has a fourth field that is no list of flags.  Changing a password
 * rewrites the file atomically under an exclusive lock.
 */
#ifndef PM_PASSDB_H
#define PM_PASSDB_H

#include <stdbool.h>
#include <stddef.h>

#include <security/pam_modules.h>

/* Longest line (without its '\n') we accept; longer ones are skipped. */
#define PM_LINE_MAX 8192

/* Biggest passdb read, in bytes: checked on the size fstat() reports and
 * on the bytes actually read (files such as /proc ones report 0).  Bigger
 * files are refused with PAM_AUTHINFO_UNAVAIL. */
#ifndef PM_PASSDB_MAX
#define PM_PASSDB_MAX ((unsigned long long)1 << 30)
#endif

/* The read buffer of a lookup: this many bytes, or the file's size plus 2
 * when that is smaller (but never below PM_READ_MIN).  Overridable at
 * compile time, which tests use to put read edges where they want them. */
#ifndef PM_READ_BUF
#define PM_READ_BUF ((size_t)1 << 20)
#endif
#define PM_READ_MIN ((size_t)2 * (PM_LINE_MAX + 2))

_Static_assert(PM_READ_BUF >= PM_READ_MIN,
	       "PM_READ_BUF must hold two lines of PM_LINE_MAX bytes");

/* What a lookup found: copies, owned by the caller (pm_found_free). */
/* Account flags of a passdb line's optional fourth field. */
#define PM_F_EXPIRED 1u
#define PM_F_MUST_CHANGE 2u
#define PM_F_LOCKED 4u

struct pm_found {
	bool found;
	char *pass; /* NUL-terminated; a valid line holds no NUL */
	size_t pass_len;
	char *service; /* NUL-terminated, in the same buffer as pass */
	size_t service_len;
	unsigned flags; /* PM_F_* */
};

#define PM_FOUND_INIT { false, NULL, 0, NULL, 0, 0 }

/*
 * Finds the first line of USER in the passdb at PATH that is read.
 * Returns PAM_SUCCESS (then F->found says whether there is one, and F
 * holds copies of its fields), PAM_AUTHINFO_UNAVAIL when the file cannot
 * be opened or read, is neither a regular file nor one that reads as
 * empty, or is bigger than PM_PASSDB_MAX bytes, or PAM_BUF_ERR; every
 * error is logged naming the file.  Whatever F held before is released
 * first.
 */
int pm_passdb_lookup(pam_handle_t *pamh, const char *path, const char *user,
		     struct pm_found *f);

/* Whether the passdb at PATH can be read (as a lookup would open it):
 * PAM_SUCCESS or the lookup's error, logged. */
int pm_passdb_check(pam_handle_t *pamh, const char *path);

/* Wipes and frees what a lookup returned; F can be looked up again. */
void pm_found_free(struct pm_found *f);

/*
 * Sets the password of USER in the passdb at PATH to NEWPW: every line of
 * USER that is read becomes "USER:NEWPW:service[:flags]" (blanks after
 * its colons and the must_change flag dropped, ended by a '\n'), as
 * upstream rewrites them; every other byte of the file and its mode stay.
 * Returns PAM_SUCCESS, PAM_AUTHINFO_UNAVAIL (the file cannot be opened or
 * read, is not a regular file or is too big), PAM_USER_UNKNOWN (no line
 * for USER), PAM_AUTHTOK_ERR (NEWPW cannot be stored: it holds ':', CR or
 * LF, starts with a blank or makes a line too long), PAM_AUTHTOK_LOCK_BUSY
 * or PAM_BUF_ERR (out of memory, or the new file cannot be written, as
 * upstream answers then); on any error the original file is left as it
 * was.
 */
int pm_passdb_set_password(pam_handle_t *pamh, const char *path,
			   const char *user, const char *newpw);

#endif
