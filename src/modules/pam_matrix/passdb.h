/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's password database: a text file of "user:password:service"
 * lines.  Reading maps the whole file (or reads it whole when it cannot be
 * mapped) and scans it 16 bytes at a time, so looking up the last of a
 * million users costs milliseconds.  Malformed lines are skipped with a
 * "file:line: reason" log message and never crash the module.  Changing a
 * password rewrites the file atomically under an exclusive lock.
 */
#ifndef PM_PASSDB_H
#define PM_PASSDB_H

#include <stdbool.h>
#include <stddef.h>

#include <security/pam_modules.h>

/* Longest line (without its '\n') we accept; longer ones are skipped. */
#define PM_LINE_MAX 8192

struct pm_passdb {
	const char *path; /* for messages; borrowed from the caller */
	char *data;       /* the file's bytes, not NUL-terminated */
	size_t size;
	bool mapped;      /* data is an mmap (else malloc'd, wiped on close) */
};

#define PM_PASSDB_INIT { NULL, NULL, 0, false }

/* One valid line; all pointers point into the pm_passdb's data. */
struct pm_entry {
	const char *line;
	size_t line_len; /* without the '\n' */
	unsigned long lineno;
	const char *pass;
	size_t pass_len;
	const char *service;
	size_t service_len;
};

/*
 * Loads PATH (or, when FD >= 0, the already open FD, which stays open).
 * Returns PAM_SUCCESS, PAM_AUTHINFO_UNAVAIL when the file cannot be opened
 * or read (logged, naming the file) or PAM_BUF_ERR.
 */
int pm_passdb_load(pam_handle_t *pamh, const char *path, int fd,
		   struct pm_passdb *db);

/* Releases what pm_passdb_load took; safe on an initialised, unloaded db. */
void pm_passdb_close(struct pm_passdb *db);

/*
 * Finds the first valid line for USER.  Malformed lines met on the way are
 * logged and skipped; comment lines ('#' in column 0) are skipped silently.
 */
bool pm_passdb_find(pam_handle_t *pamh, const struct pm_passdb *db,
		    const char *user, struct pm_entry *e);

/*
 * Replaces the password of USER's line in the passdb at PATH by NEWPW,
 * keeping every other byte of the file and its mode.  Returns PAM_SUCCESS,
 * PAM_AUTHINFO_UNAVAIL (no such file), PAM_USER_UNKNOWN (no line for USER),
 * PAM_AUTHTOK_ERR (NEWPW cannot be stored, or an I/O error: the original file
 * is then left as it was) or PAM_BUF_ERR.
 */
int pm_passdb_set_password(pam_handle_t *pamh, const char *path,
			   const char *user, const char *newpw);

#endif
