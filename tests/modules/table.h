/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The differential table of our test modules against upstream pam_wrapper
 * 1.1.x (issue 25): one row per case, each a PAM transaction through the
 * real libpam on a service file the runner writes (test_module_table.c),
 * with what upstream answers written down as facts.  Every row says where
 * its fact comes from: upstream's man pages (as shipped in Debian's
 * libpam-wrapper 1.1.4) or the behaviour of Debian's 1.1.4 modules, seen
 * by running this same table against them (the _upstream ctest), never
 * upstream's code.  Rows where we deliberately differ, because upstream
 * crashes, hangs, corrupts or loses data, or reports success for what it
 * did not do, carry the reason in OURS; the upstream run checks that
 * upstream does differ there.  Those differences are listed in
 * pam_matrix(8) and pam_chatty(8).
 *
 * The rows live in table_*.c by module; all strings are static.
 */
#ifndef MT_TABLE_H
#define MT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <security/pam_appl.h>

/* The PAM call of a step. */
enum tb_fn {
	TB_NONE = 0,
	TB_AUTH,
	TB_SETCRED,
	TB_ACCT,
	TB_OPEN,
	TB_CLOSE,
	TB_CHAUTHTOK,
};

/* What the conversation does at one prompt (prompts are taken in order;
 * once the list is used up it fails like TB_FAIL). */
enum tb_ans {
	TB_END = 0,
	TB_ANSWER,   /* answers the string */
	TB_NULLSTR,  /* succeeds with a response whose string is NULL */
	TB_FAIL,     /* returns PAM_CONV_ERR */
	TB_NULLRESP, /* returns PAM_SUCCESS without a response array */
};

struct tb_tok {
	enum tb_ans kind;
	const char *s;
};

#define A(s) { TB_ANSWER, s }
#define NULLSTR { TB_NULLSTR, NULL }
#define FAIL { TB_FAIL, NULL }
#define NULLRESP { TB_NULLRESP, NULL }

/* What the passdb path names before the call. */
enum tb_kind {
	TB_REG = 0,  /* a regular file holding .passdb (none when NULL) */
	TB_SYMLINK,  /* a symbolic link to a regular file "real" */
	TB_FIFO,     /* a FIFO (no writer) */
	TB_DIR,      /* a directory */
	TB_NOREAD,   /* a regular file of mode 0000 (skipped as root) */
	TB_RODIR,    /* a regular file in a directory of mode 0555 (no new
		      * file there; skipped as root) */
};

struct tb_step {
	enum tb_fn fn;
	int flags;
};

#define TB_MAX_STEPS 3
#define TB_MAX_TOKS 6

/*
 * One case.  In strings, %P is the passdb's path, %D the row's directory,
 * %M the directory of the modules under test (ours or upstream's), %T
 * the directory of the test-only modules (pam_table_probe.so,
 * pam_call_shim.so) and %% a '%'.
 *
 * The service file "svc" is PRE, then MODULE with CONTROL (default
 * "required") and OPTIONS in the auth, account, password and session
 * groups (none when MODULE is NULL), then POST.
 */
struct tb_row {
	const char *id;
	const char *src;  /* where the expected values come from */
	const char *ours; /* why we differ from upstream; NULL: we do not */

	const char *module;
	const char *control;
	const char *options;
	const char *pre;
	const char *post;
	const char *service; /* pam_start's service; default "svc" */
	const char *user;    /* pam_start's user; default "alice" */
	bool nouser;         /* pam_start with a NULL user */
	const char *env;     /* "NAME=value" lines for the process */
	const char *passdb;  /* content; NULL: no file */
	size_t passdb_len;   /* its length when it holds a NUL; 0: strlen */
	enum tb_kind kind;
	mode_t mode;         /* of the passdb; 0: 0644 */
	struct tb_tok conv[TB_MAX_TOKS];
	enum tb_ans on_msg;  /* answer to info/error messages: TB_END is
			      * success, or TB_FAIL, TB_NULLRESP */
	bool null_conv;      /* the pam_conv's function is NULL */
	const char *extra;   /* content of %D/extra (none when NULL) */
	struct tb_step steps[TB_MAX_STEPS];

	/* expected */
	int codes[TB_MAX_STEPS];
	const char *msgs;    /* "P:prompt" (echo off), "p:" (echo on), "I:",
			      * "E:" per message, '\n'-separated */
	const char *penv;    /* PAM environment after the last step, entries
			      * sorted, '\n'-separated; NULL: empty */
	const char *after;   /* passdb content after; NULL: unchanged */
	mode_t mode_after;   /* 0: unchanged */
	bool gone;           /* the passdb no longer exists */
	/* Upstream differs only in that it sends its messages without a
	 * response pointer (misc_conv(3) crashes on them); the row must
	 * match upstream in everything else. */
	bool up_noresp;
};

#define S(fn, flags) { fn, flags }
#define AUTH { { TB_AUTH, 0 } }
#define ACCT { { TB_ACCT, 0 } }
#define CHTOK { { TB_CHAUTHTOK, 0 } }
#define OPEN { { TB_OPEN, 0 } }
#define CLOSE { { TB_CLOSE, 0 } }
#define SETCRED { { TB_SETCRED, PAM_ESTABLISH_CRED } }

/* Sources. */
#define SRC_DEB "Debian 1.1.4 behaviour"
#define SRC_MAN_MATRIX "pam_matrix(8) of 1.1.4"
#define SRC_MAN_CHATTY "pam_chatty(8) of 1.1.4"
#define SRC_MAN_ITEMS "pam_set_items(8)/pam_get_items(8) of 1.1.4"

/* ---- the runner (test_module_table.c, table_run.c) ---- */

/* What a row saw. */
struct tb_obs {
	int codes[TB_MAX_STEPS];
	char *msgs;
	char *penv;
	int noresp; /* messages sent without a response pointer */
	int ncalls; /* conversation calls */
	int status; /* 0, -1 hang, -2 - N killed by signal N */
};

struct tb_ctx {
	const struct tb_row *r;
	char *dir;
	char *passdb;
};

extern const char *tb_moddir;  /* modules under test */
extern const char *tb_testdir; /* test-only modules */

/* Makes the row's directory X->dir: passdb, service file, extra file. */
void tb_prepare(const struct tb_ctx *x);
/* Runs the row's transaction in this process, or in a child (crashes and
 * hangs are observations: O->status). */
void tb_transact(const struct tb_ctx *x, struct tb_obs *o);
void tb_transact_child(const struct tb_ctx *x, struct tb_obs *o);
/* Appends TAG TEXT to *S as a new '\n'-separated line. */
void tb_append(char **s, const char *tag, const char *text);
/* The length of the row's passdb content. */
size_t tb_dblen(const struct tb_row *r);

extern const struct tb_row tb_matrix_rows[];
extern const size_t tb_matrix_nrows;
extern const struct tb_row tb_chtok_rows[];
extern const size_t tb_chtok_nrows;
extern const struct tb_row tb_other_rows[];
extern const size_t tb_other_nrows;

#define TB_NROWS(a) (sizeof(a) / sizeof((a)[0]))

#endif
