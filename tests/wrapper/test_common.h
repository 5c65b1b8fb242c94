/* SPDX-License-Identifier: BSD-3-Clause */
/* Small file and stderr helpers for the wrapper tests; they abort the test
 * (cmocka fail) on any error, so callers need no checks.  Returned strings
 * are malloc'd and owned by the caller. */
#ifndef PWRAP_TEST_COMMON_H
#define PWRAP_TEST_COMMON_H

char *pt_mkdtemp(void);
/* dir/name, malloc'd. */
char *pt_path(const char *dir, const char *name);
void pt_rmtree(const char *dir);
void pt_write_file(const char *dir, const char *name, const char *content);
char *pt_read_file_at(const char *dir, const char *name);
void pt_unlink_at(const char *dir, const char *name);
/* Count of entries in dir (without . and ..). */
int pt_count_entries(const char *dir);
/* Captures fd 2 between begin and end; end returns what was written. */
void pt_stderr_begin(void);
char *pt_stderr_end(void);

#endif
