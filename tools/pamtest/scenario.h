/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest(1) internals: the parsed form of a scenario file (see
 * pamtest-scenario(5)), the results of running it and the reporters.
 * A struct scenario owns every string and compiled regex inside it;
 * scenario_free() releases them.
 */
#ifndef PAMTEST_SCENARIO_H
#define PAMTEST_SCENARIO_H

#include <regex.h>
#include <stdbool.h>

#include "pwrap_system.h"
#include <stddef.h>
#include <stdio.h>

/* Text to compare: exact, or a POSIX extended regex searched in the text. */
struct xp_scen;

struct match {
	char *text;
	int is_regex;
	int compiled;
	regex_t re;
};

enum exp_kind {
	EXP_PROMPT,
	EXP_INFO,
	EXP_ERROR,
	EXP_NO_INFO,
	EXP_NO_ERROR,
	EXP_ENV,        /* name + optional match (has_match) */
	EXP_ABSENT_ENV, /* name */
	EXP_ITEM,       /* item + match */
	EXP_ABSENT_ITEM,
};

struct expect {
	enum exp_kind kind;
	int line;
	int style;       /* EXP_PROMPT: 0 any, else PAM_PROMPT_ECHO_ON/OFF */
	int item;        /* EXP_ITEM: PAM item type */
	int has_match;   /* EXP_ENV: value given */
	char *name;      /* env/item name */
	char *answer;    /* EXP_PROMPT: secret; never printed */
	struct match m;
};

/*
 * A conversation fault (`fault` line after a `start` or `run`): on the
 * conversation call `at` (1-based; 0 every call) of the transaction (after
 * `start`) or of the operation (after `run`), the application misbehaves.
 */
enum fault_kind {
	FAULT_FAIL,        /* return code */
	FAULT_NULL_RESP,   /* PAM_SUCCESS, no response array */
	FAULT_NULL_ENTRY,  /* PAM_SUCCESS, NULL answers */
	FAULT_LONG_ANSWER, /* prompts answered with `length` characters */
};

struct fault {
	enum fault_kind kind;
	int line;
	unsigned int at; /* 0: every call */
	int code;        /* FAULT_FAIL: what the call returns */
	size_t length;   /* FAULT_LONG_ANSWER */
};

enum step_kind {
	STEP_START,
	STEP_RUN,
	STEP_END,
	STEP_SETENV,   /* process environment: name, value (NULL = unset) */
	STEP_PUTENV,   /* pam_putenv: name, value (NULL = remove) */
	STEP_SET_ITEM, /* item, value */
	STEP_EXPLORE,  /* explore block (explore_scen.h) */
	STEP_WRITE,    /* write-file / remove-file: name (the path below the
			* private directory), value (NULL = remove) */
};

enum op {
	OP_AUTHENTICATE,
	OP_SETCRED,
	OP_ACCT_MGMT,
	OP_CHAUTHTOK,
	OP_OPEN_SESSION,
	OP_CLOSE_SESSION,
};

struct step {
	enum step_kind kind;
	int line;
	enum op op;
	int flags;
	int expected;     /* PAM code for RUN, END and START with has_expect */
	int has_expect;   /* START: a test point of its own */
	char *user;       /* START: NULL = default */
	int no_user;      /* START: pam_start with a NULL user */
	char *service;    /* START: NULL = default */
	char *name;       /* SETENV, PUTENV */
	char *value;      /* SETENV, PUTENV, SET_ITEM */
	int item;         /* SET_ITEM */
	struct expect *exps;
	size_t nexps;
	struct fault *faults; /* START (whole transaction) and RUN */
	size_t nfaults;
	struct xp_scen *explore; /* EXPLORE */
};

struct service {
	char *name;
	int line;
	char *text; /* NULL: taken from the service directory */
	int *lines; /* scenario line of each line of text */
	size_t nlines;
};

struct user {
	char *name;
	char *password;
	char *service; /* NULL: the default service */
	char *flags;   /* pam_matrix account flags ("locked,..."), or NULL */
	int line;
};

/* `group NAME USER...` (service-dir system) */
struct scen_group {
	char *name;
	char *members; /* comma-separated */
	int line;
};

struct scenario {
	char *path;        /* as given on the command line */
	char *dir;         /* directory of the file (for relative paths) */
	char *service_dir; /* resolved; NULL if none */
	int service_dir_line;
	char *system;      /* `service-dir system [DIR]`: the stacks copied
			    * (pwrap_system.h), resolved; NULL if not */
	struct scen_group *groups;
	size_t ngroups;
	struct pwrap_sys_swap *swaps; /* `swap MODULE=REPLACEMENT` */
	size_t nswaps;
	int swap_line, group_line; /* the first of each, for errors */
	struct service *svcs;
	size_t nsvcs;
	struct user *users;
	size_t nusers;
	struct step *steps;
	size_t nsteps;
	char **secrets; /* passwords and answers: never printed */
	size_t nsecrets;
};

/* Parse `path`.  On errors prints "path:line: message" lines to stderr and
 * returns -1 (the scenario is then freed). */
int scenario_parse(const char *path, struct scenario *sc);
/* One such message, counted in *nerr. */
void scenario_perr(const char *file, int line, int *nerr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Set by main(): our module directory, or NULL when unknown. */
extern const char *pamtest_moddir;
/* The largest scenario file read (a bound, so that /dev/zero or a file
 * that never ends cannot exhaust memory). */
#define PAMTEST_MAX_SCENARIO (16 * 1024 * 1024)
#define PAMTEST_MAX_SCENARIO_TEXT "16 MiB"
void scenario_free(struct scenario *sc);
/*
 * pamtest -c: check that every module the scenario's service files name
 * exists, bare names looked up as the wrapper does at run time (sysmoddir,
 * then moddir; either may be NULL when unknown).  Prints "file:line: ..."
 * for each missing one and returns how many there are.
 */
int scenario_check_modules(const struct scenario *sc, const char *moddir,
			   const char *sysmoddir);
/* text with ${PASSDB}, ${MODULE_DIR} (pamtest_moddir), ${SCENARIO_DIR}
 * and ${DIR} replaced; a variable without a value (NULL) is kept as
 * written with `keep`, else the result is NULL.  Malloc'd. */
char *scenario_expand(const struct scenario *sc, const char *text,
		      const char *dir, const char *passdb, bool keep);
/* Number of test points (run and end steps). */
size_t scenario_ntests(const struct scenario *sc);

/* Whether a step is a test point of its own (RUN, END, START with expect). */
static inline int step_is_test(const struct step *s)
{
	return s->kind == STEP_RUN || s->kind == STEP_END ||
	       s->kind == STEP_EXPLORE ||
	       (s->kind == STEP_START && s->has_expect);
}

int match_test(const struct match *m, const char *text);

/* One test point's outcome.  Strings are owned. */
struct result {
	const struct step *step;
	char *name;     /* "authenticate (line 12)" */
	int passed;
	char **failures; /* "file:line: message" */
	size_t nfailures;
	double seconds;
};

struct file_results {
	const struct scenario *sc;
	struct result *res;
	size_t nres;
	double seconds;
	char *error; /* setup error: the whole file could not run */
};

/* Run every step of sc; fills fr.  Returns 0, or -1 for a setup error. */
int scenario_run(const struct scenario *sc, struct file_results *fr, int keep);
void file_results_free(struct file_results *fr);

/* Quote `s` for messages, or say "(hidden)" if it holds a secret.  Malloc'd. */
char *show(const struct scenario *sc, const char *s);

/* --trace (trace.c): the destination (NULL: off) and format, set by
 * main(); trace_path() is where the wrapper writes a scenario's records
 * (malloc'd), trace_collect() appends them to the destination with inline
 * services' lines named as in the scenario.  0 or -1 (warned). */
extern const char *pamtest_trace;
extern const char *pamtest_trace_format;
char *trace_path(const char *dir);
int trace_collect(const struct scenario *sc, const char *dir);

enum format { FMT_HUMAN, FMT_TAP, FMT_JUNIT };
struct reporter {
	enum format fmt;
	FILE *out;
	int err;	/* the first write error's errno, or 0 */
	int quiet;
	size_t total;   /* test points in all files */
	size_t counter; /* TAP numbering */
	size_t passed, failed, files;
};
void report_begin(struct reporter *r);
void report_file(struct reporter *r, const struct file_results *fr);
void report_end(struct reporter *r, const struct file_results *all, size_t nall);
/* Flushes the report and closes its file (not stdout): 0 when all of it
 * was written, else -1 (errno set when known, else 0). */
int report_close(struct reporter *r);

#endif
