/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the libpamtest tests: a private service directory below
 * $TMPDIR that the wrapped process reads through PAM_WRAPPER_SERVICE_DIR, and
 * small file helpers.  Every function returns 0/non-NULL on success so the
 * tests can assert on it; the strings they return are owned by the caller.
 */
#ifndef LPT_UTIL_H
#define LPT_UTIL_H

/* Creates a new directory $TMPDIR/lpt.XXXXXX. */
char *lpt_tmpdir_new(void);

/* lpt_tmpdir_new(), then points PAM_WRAPPER_SERVICE_DIR at it. */
char *lpt_svcdir_new(void);

/* Writes dir/name with content (mode 0644); 0 on success. */
int lpt_write_file(const char *dir, const char *name, const char *content);

/* Reads dir/name into a new string; NULL when it cannot. */
char *lpt_read_file(const char *dir, const char *name);

/* Removes every file in dir, then dir itself; frees dir.  NULL is allowed. */
void lpt_tmpdir_free(char *dir);

/* The value of NAME in a NULL-terminated "NAME=value" list, or NULL. */
const char *lpt_envlist_get(char **envlist, const char *name);

#endif /* LPT_UTIL_H */
