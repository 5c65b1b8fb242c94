/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's password database: a text file of "user:password:service"
 * lines.  Reading maps a big file (small ones and files that cannot be
 * mapped are read whole); a lookup searches the bytes for "\nUSER:" and
 * proves the lines before the hit valid in bulk, 64 bytes at a time (in 16
 * chunks shared with a helper thread for files of 4 MiB and more), so
 * looking up the last of a million users costs a few milliseconds.
 * Malformed lines are skipped with a "file:line: reason" log message and
 * never crash the module.  Changing a password rewrites the file atomically
 * under an exclusive lock.  passdb_cache.h keeps loaded files and an index
 * across lookups; this file knows nothing of it.
 */
#ifndef PM_PASSDB_H
#define PM_PASSDB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

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

/* Regular files smaller than this are read into memory, bigger ones are
 * mapped. */
#define PM_READ_MAX 65536

/*
 * Loads PATH (or, when FD >= 0, the already open FD, which stays open).
 * Returns PAM_SUCCESS, PAM_AUTHINFO_UNAVAIL when the file cannot be opened
 * or read (logged, naming the file) or PAM_BUF_ERR.
 */
int pm_passdb_load(pam_handle_t *pamh, const char *path, int fd,
		   struct pm_passdb *db);

/* The same; *ST gets the fstat of what was loaded (on success). */
int pm_passdb_load_st(pam_handle_t *pamh, const char *path, int fd,
		      struct pm_passdb *db, struct stat *st);

/* Releases what pm_passdb_load took; safe on an initialised, unloaded db. */
void pm_passdb_close(struct pm_passdb *db);

/*
 * Finds the first valid line for USER.  Malformed lines met on the way are
 * logged and skipped; comment lines ('#' in column 0) are skipped silently.
 */
bool pm_passdb_find(pam_handle_t *pamh, const struct pm_passdb *db,
		    const char *user, struct pm_entry *e);

/*
 * Visits every line of DB in order, for building an index.  ENTRY gets each
 * valid line (OFF: its offset in db->data, ULEN: the length of its user
 * name, LINENO: its 1-based number), BAD each malformed one (WHY: see
 * pm_passdb_why); comments are skipped.  Either returns false to stop the
 * walk, which then returns false.  Nothing is logged.
 */
struct pm_walker {
	bool (*entry)(void *ctx, size_t off, size_t ulen, unsigned long lineno);
	bool (*bad)(void *ctx, size_t off, unsigned long lineno, unsigned why);
	void *ctx;
};

bool pm_passdb_walk(const struct pm_passdb *db, const struct pm_walker *w);

/* Fills E from the valid line at OFF whose user name has ULEN bytes. */
void pm_passdb_entry_at(const struct pm_passdb *db, size_t off, size_t ulen,
			unsigned long lineno, struct pm_entry *e);

/* Whether a line could be USER's at all: a non-empty name shorter than a
 * line, without ':' or '\n' (find() still scans for other names, to log
 * the malformed lines the same way). */
bool pm_user_searchable(const char *user, size_t ulen);

/* Whether the line at OFF of DATA (SIZE bytes) starts with "USER:". */
bool pm_line_starts_with_user(const char *data, size_t size, size_t off,
			      const char *user, size_t ulen);

/* Logs "PATH:LINENO: <reason>, line skipped" as a lookup does. */
void pm_passdb_log_bad(pam_handle_t *pamh, const char *path,
		       unsigned long lineno, unsigned why);

/* Tests only: which scanner to use (0 portable C, 1 SSE2, 2 AVX2, 3
 * AVX-512BW; x86-64 has all four), or -1 (the default) for the best one
 * the CPU has.  Forcing one the CPU lacks crashes. */
extern int pm_passdb_isa;

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
