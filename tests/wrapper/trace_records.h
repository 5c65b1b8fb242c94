/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading the module trace's JSON records (doc/trace-format.md) in the C
 * tests: just enough JSON for our own flat records.  Strings returned are
 * malloc'd (caller frees).
 */
#ifndef PWRAP_TRACE_RECORDS_H
#define PWRAP_TRACE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>

struct trecs {
	char **rec;	/* one line each, without its newline */
	size_t n;
};

/* The records of the file at path (none when it does not exist). */
struct trecs tr_read(const char *path);
void tr_free(struct trecs *t);

/* The value of member key: a string decoded, anything else (a number,
 * null, true, an array) as written; NULL when the record has no such
 * member.  Fails the test on a record that is not well-formed JSON of our
 * shape. */
char *tr_get(const char *rec, const char *key);
/* Whether member key is the string value. */
bool tr_is(const char *rec, const char *key, const char *value);

/*
 * The records in short, one per element, joined by "; ":
 *   start RC
 *   FILE:LINE MODULE RC ACTION [silent] [error]   (module; FILE made
 *                                                 relative to dir)
 *   = CALL RC                                     (result)
 * Each module record's "result" must equal the result record after it
 * (checked here).  Caller frees.
 */
char *tr_summary(const struct trecs *t, const char *dir);

/*
 * The results the trace records, in pwrap_diff_client's words:
 * "start=N auth=N setcred=N acct=N open=N close=N chauthtok=N" (numbers,
 * the calls as they came).  Caller frees.
 */
char *tr_results(const struct trecs *t);

#endif
