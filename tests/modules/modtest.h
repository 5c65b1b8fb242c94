/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared scaffolding for the module tests: a private temporary directory
 * holding service files and passdbs, PAM transactions through the real
 * libpam (pam_start_confdir, no preload needed), a scripted conversation
 * that records every message and answers from a list, and a capture of
 * what modules log with pam_syslog (see modtest_syslog.c).  The generic
 * helpers (directories, files, children, clock) are testutil.h's, which
 * this header includes.
 */
#ifndef MODTEST_H
#define MODTEST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <security/pam_appl.h>

#include "testutil.h"

#define MT_MAX_ANSWERS 16

/* A scripted conversation.  Answers are consumed in order, one per prompt;
 * an answer of NULL replies with a NULL resp string, running out of answers
 * (or fail set) makes the conversation return PAM_CONV_ERR. */
struct mt_conv {
	const char *answers[MT_MAX_ANSWERS];
	size_t nanswers;
	size_t next;
	bool fail;
	/* Recorded messages, malloc'd: "P:" prompt with echo off, "p:" with
	 * echo on, "I:" text info, "E:" error message, then the text. */
	char **msgs;
	size_t nmsgs;
	size_t cap;
	int max_per_call; /* largest num_msg seen */
	struct pam_conv pc; /* what mt_start hands to libpam */
};

struct mt_env {
	char dir[PATH_MAX];
	char passdb[PATH_MAX]; /* <dir>/passdb */
	const char *moddir;    /* $PWRAP_MODULE_DIR */
};

/* Creates a fresh directory below $TMPDIR (tu_mkdtemp); fails the test on
 * error. */
void mt_init(struct mt_env *t);
/* Removes the directory and everything in it (best effort: never fails). */
void mt_cleanup(struct mt_env *t);

/* cmocka per-test setup/teardown: *state becomes a fresh mt_env; the log
 * capture and $PAM_MATRIX_PASSWD are cleared before and after. */
int mt_setup(void **state);
int mt_teardown(void **state);

/* Path of NAME inside the test directory (static buffer per call site is
 * not needed: the result is written to OUT, PATH_MAX bytes). */
void mt_path(const struct mt_env *t, const char *name, char *out);

/* Writes LEN bytes to <dir>/NAME (mode 0644). */
void mt_write(const struct mt_env *t, const char *name, const char *data,
	      size_t len);
/* Writes a NUL-terminated string to the passdb. */
void mt_passdb(const struct mt_env *t, const char *content);

/* Writes service file <dir>/SERVICE from a printf format.  In the format,
 * the first %s of each "%s/" is usually t->moddir. */
void mt_service(const struct mt_env *t, const char *service,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Answers for a conversation, NULL-terminated is not possible (NULL is a
 * valid answer), so the count is given. */
void mt_conv_init(struct mt_conv *c, size_t n, ...);
void mt_conv_free(struct mt_conv *c);
/* The I-th recorded message, or NULL. */
const char *mt_msg(const struct mt_conv *c, size_t i);

/* pam_start_confdir on the test directory with a conversation bound to C. */
pam_handle_t *mt_start(const struct mt_env *t, const char *service,
		       const char *user, struct mt_conv *c);

/* The same without assertions (for forked children): pam_start_confdir's
 * result. */
int mt_start_raw(const struct mt_env *t, const char *service,
		 const char *user, struct mt_conv *c, pam_handle_t **pamh);

enum mt_op { MT_AUTH, MT_SETCRED, MT_ACCT, MT_OPEN, MT_CLOSE, MT_CHAUTHTOK };

/* Runs one PAM call of OP with FLAGS on PAMH and returns its result. */
int mt_call(pam_handle_t *pamh, enum mt_op op, int flags);

/* Start, one call, end: the call's result. */
int mt_run(const struct mt_env *t, const char *service, const char *user,
	   struct mt_conv *c, enum mt_op op, int flags);

/* Service "svc": pam_matrix with passdb=<t->passdb> and OPTS in all four
 * management groups. */
void mt_matrix_service(const struct mt_env *t, const char *opts);

/* Authenticates USER on service "svc", answering PASSWORD. */
int mt_auth(const struct mt_env *t, const char *user, const char *password);

/* Captured pam_syslog lines of this process. */
void mt_log_clear(void);
bool mt_log_has(const char *needle);
size_t mt_log_count(void);
/* How many captured lines contain NEEDLE. */
size_t mt_log_count_has(const char *needle);
/* How many captured lines of priority PRIO (LOG_ERR, ...) contain NEEDLE. */
size_t mt_log_count_prio(int prio, const char *needle);
/* Prints the captured lines to stderr (for failing tests). */
void mt_log_dump(void);

#endif
