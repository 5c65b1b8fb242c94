/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: the decision table of a PAM stack (pamtest-explore(1)).
 *
 * The pieces, each calling only the ones listed after it:
 *   explore_main.c    the command line; explore_scen.c the scenario block
 *   explore_out.c     human, json, dot and mermaid output
 *   explore_find.c    findings (bypass, lockout, dead-line, ignored), the
 *                     reduced decision diagram and its table, "iff" checks
 *   explore_replay.c  every edge replayed on the real libpam (through the
 *                     wrapper) with the stand-in module of explore_standin.c
 *   explore_graph.c   the search over libpam's dispatch state, path cover
 *   explore_linux.c / explore_openpam.c
 *                     reading a service as the PAM library reads it, and
 *                     the library's dispatch rule, one step at a time
 *   explore_elf.c     whether a module file exists and has a function,
 *                     read from its symbol table (nothing is loaded)
 *
 * Ownership: a struct xp_conf owns its files and lines; a struct xp_graph
 * owns its nodes and paths but points into the xp_conf it was built from.
 */
#ifndef PAMTEST_EXPLORE_H
#define PAMTEST_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pwrap_names.h"

#define XP_NCODES 32	  /* return codes an action table covers */
#define XP_MAXLEVEL 16	  /* Linux-PAM's PAM_SUBSTACK_MAX_LEVEL */
#define XP_ALL_TYPES (-1)

/* A set of return codes (bit n: code n; both libraries' codes are < 64). */
typedef uint64_t xp_set;
#define XP_BIT(code) ((xp_set)1 << (code))

/* The management groups, pwrap_names.h's. */
enum xp_type { XP_AUTH = PWRAP_GROUP_AUTH, XP_ACCOUNT = PWRAP_GROUP_ACCOUNT,
	       XP_PASSWORD = PWRAP_GROUP_PASSWORD,
	       XP_SESSION = PWRAP_GROUP_SESSION, XP_NTYPES = PWRAP_GROUPS };

/* Linux-PAM actions; a positive value is a jump over that many lines. */
enum { XP_IGNORE = 0, XP_OK = -1, XP_DONE = -2, XP_BAD = -3, XP_DIE = -4,
       XP_RESET = -5, XP_UNDEF = -6 };
/* OpenPAM control flags (in xp_line.flag). */
enum { XP_F_REQUIRED, XP_F_REQUISITE, XP_F_SUFFICIENT, XP_F_BINDING,
       XP_F_OPTIONAL };

enum xp_kind {
	XP_CALL,      /* a module: returns one outcome of its set */
	XP_FIXED,     /* no call: libpam uses a fixed code (why says why) */
	XP_SUBSTACK,  /* Linux-PAM's mark of a substack (never evaluated) */
};

struct xp_file {
	char *path;	/* as opened */
	char *show;	/* as shown: relative to the service directory */
	/* a scenario's inline service: shown as alias:lines[line - 1] */
	const char *alias;
	const int *lines;
	size_t nlines;
};

/* One entry of a stack, in the order the library evaluates them. */
struct xp_line {
	enum xp_kind kind;
	int file;		/* index in xp_conf.files */
	unsigned line;		/* first physical line */
	int level;		/* substack depth (Linux-PAM) */
	int act[XP_NCODES];	/* Linux-PAM actions per code */
	int flag;		/* OpenPAM control flag */
	char *module;		/* as written, or NULL */
	char *name;		/* short name: "pam_unix" ("?" without one) */
	int fixed;		/* XP_FIXED: the code */
	const char *why;	/* XP_FIXED: static text */
	bool standin;		/* the replay calls the stand-in here */
	xp_set outcomes;	/* XP_CALL: the codes it may return */
	int site;		/* index of (file, line) in xp_conf.sites */
};

struct xp_stack {
	struct xp_line *v;
	size_t n;
};

struct xp_site {
	int file;
	unsigned line;
};

/* A service as the library reads it. */
struct xp_conf {
	char *service;
	char *dir;		/* NULL: the system's (--system) */
	struct xp_file *files;	/* [0] the service file when it exists */
	size_t nfiles;
	struct xp_site *sites;
	size_t nsites;
	struct xp_stack conf[XP_NTYPES], other[XP_NTYPES];
	int service_file;	/* index, or -1: missing (only "other") */
	int other_file;		/* index, or -1 */
	char *refused;		/* pam_start fails: "file:line: why" */
	int refused_file;	/* ... in this file (index), or -1 */
	char *error;		/* we cannot model it (exit 2): message */
	void *impl;		/* the reader's own, freed with impl_free */
	void (*impl_free)(void *impl);
};

/* The stack libpam dispatches for a type (the service's, else other's). */
const struct xp_stack *xp_stack_of(const struct xp_conf *c, enum xp_type t);

/* explore_linux.c / explore_openpam.c: reading.  dir NULL: the system's.
 * Returns 0, or -1 after setting c->error (a message for the user). */
int xp_read(struct xp_conf *c, const char *dir, const char *service);
void xp_conf_free(struct xp_conf *c);
/* The system's PAM configuration directory ("/etc/pam.d"). */
const char *xp_system_dir(void);

/* The dispatch state between two module calls. */
struct xp_state {
	int pos;		/* index in xp_graph.seq of the next line */
	signed char imp;	/* Linux-PAM impression; OpenPAM: failed */
	unsigned char status;	/* the code held; OpenPAM: err */
	unsigned char flag;	/* OpenPAM: some module succeeded */
	unsigned char depth;	/* Linux-PAM: substack levels saved */
	struct { signed char imp; unsigned char status; } saved[XP_MAXLEVEL];
};

struct xp_graph;
/* The first state of pass `pass` (0, or 1 for chauthtok's update pass):
 * -1 and *s, or the result when the pass ends without a call. */
int xp_begin(const struct xp_graph *g, int pass, struct xp_state *s);
/* The line at s->pos returned `code`: -1 and *next, or the result. */
int xp_step(const struct xp_graph *g, const struct xp_state *s, int code,
	    struct xp_state *next);
/* A state as text for dot and mermaid ("negative PAM_AUTH_ERR"). */
void xp_state_text(const struct xp_state *s, char *buf, size_t len);
/* Outcome sets: the default of a type, and the fixed ones. */
xp_set xp_default_outcomes(enum xp_type t);
/* A stock module whose outcome is fixed (pam_permit, pam_deny): its code,
 * else -1. */
int xp_stock_fixed(const char *name, enum xp_type t);

/* ---- the graph (explore_graph.c) --------------------------------------- */

struct xp_edge {
	int to;			/* node index */
	xp_set outcomes;	/* the codes that lead there */
};

struct xp_node {
	struct xp_state st;	/* pos < 0: a result */
	int result;		/* the result's code */
	struct xp_edge *e;
	size_t ne;
	int parent, parent_code; /* first way here from the root (BFS) */
	xp_set reach;		/* results reachable from here */
};

/* A position: one line in one pass. */
struct xp_pos {
	const struct xp_line *l;
	int pass;
};

struct xp_call {
	int pos;
	int code;
};

struct xp_path {
	struct xp_call *c;
	size_t n;
	int result;
};

struct xp_graph {
	const struct xp_conf *conf;
	enum xp_type type;
	int npasses;
	struct xp_pos *seq;	/* pass 0 lines, then pass 1 lines */
	size_t nseq, perpass;
	struct xp_node *nodes;
	size_t nnodes, capnodes;
	int root;
	int *hash;		/* open addressing: node index or -1 */
	size_t hcap;
	struct xp_path *paths;	/* the replay set: every edge at least once */
	size_t npaths;
	size_t nedges;
	double npaths_all;	/* outcome sequences from the root (paths) */
	bool replay_all;	/* replay every outcome of every edge */
};

/* Builds the graph of c's stack for type t and its replay set (every
 * edge; with all, every outcome of every edge).  0, or -1 (no memory). */
int xp_graph_build(struct xp_graph *g, const struct xp_conf *c,
		   enum xp_type t, bool all);
void xp_graph_free(struct xp_graph *g);
/* The path from the root to node n (BFS parents), appended to p. */
int xp_path_to(const struct xp_graph *g, int n, struct xp_path *p);
void xp_path_free(struct xp_path *p);
/* Whether the call at pos is of a module named like `want` ("pam_unix",
 * "pam_unix.so" or a path). */
bool xp_name_is(const char *name, const char *want);
/* "file:line" of a line (static buffer, valid until the next call). */
const char *xp_where(const struct xp_conf *c, const struct xp_line *l);
/* An outcome's name as written in controls ("success", "auth_err"). */
const char *xp_code_word(int code);
/* A result's name ("PAM_SUCCESS"). */
const char *xp_code_name(int code);
/* Parses "success,auth_err,PAM_IGNORE" into a set.  0 or -1. */
int xp_parse_outcomes(const char *s, xp_set *out);

/* ---- options, findings and the table (explore_find.c) ------------------ */

struct xp_model {
	char *target;	/* module name, or "file:line" */
	xp_set outcomes;
};

struct xp_opts {
	int type;		/* an xp_type, or XP_ALL_TYPES */
	xp_set outcomes;	/* 0: the type's default */
	struct xp_model *models;
	size_t nmodels;
	char **must;
	size_t nmust;
	bool no_replay;
	bool keep;		/* keep the replay's directory */
	bool replay_all;	/* every outcome, not every edge */
	/* called once the service is read (the scenario's aliases) */
	void (*after_read)(struct xp_conf *c, const void *ctx);
	const void *ctx;
};

/* Applies the outcome sets (defaults, stock modules, --outcomes, --model)
 * to every line of c.  0, or -1 with a message on stderr. */
int xp_apply_outcomes(struct xp_conf *c, const struct xp_opts *o);

enum xp_kind_f { XP_BYPASS, XP_LOCKOUT, XP_DEAD, XP_IGNORED };

struct xp_finding {
	enum xp_kind_f kind;
	char *where;		/* "file:line" */
	char *msg;
	struct xp_path path;
};

/* A literal: the line at pos returned one of `codes`. */
struct xp_lit {
	int pos;
	xp_set codes;
};
struct xp_term {
	struct xp_lit *l;
	size_t n;
};
struct xp_cond {
	int result;
	struct xp_term *t;
	size_t n;
	size_t more;		/* terms not listed (too many) */
};

/* The decision diagram reduced: equal futures merged, calls whose outcome
 * does not matter left out (explore_table.c). */
struct xp_redge {
	int to;
	xp_set codes;
};
struct xp_rnode {
	int pos;		/* < 0: a result */
	int result;
	struct xp_redge *e;
	size_t ne;
};

struct xp_report {
	const char *service;
	enum xp_type type;
	const char *refused;	/* the configuration's: pam_start fails */
	struct xp_graph g;
	struct xp_rnode *rd;
	size_t nrd;
	int rroot;
	struct xp_finding *f;
	size_t nf;
	struct xp_cond *table;	/* one per reachable result */
	size_t ntable;
	/* replay */
	size_t replays;
	char *disagree;		/* NULL: libpam agreed on every path */
	char *not_replayed;	/* why there was no replay (or NULL) */
	bool replayed;
	double seconds;
};

/* explore_table.c: the reduced diagram and the table of a built graph;
 * whether the result depends on the call at pos.  The codes a position
 * may return. */
int xp_table(struct xp_report *r);
void xp_table_free(struct xp_report *r);
bool xp_depends(const struct xp_report *r, int pos);
xp_set xp_codes_at(const struct xp_graph *g, int pos);

/* Findings and table of a built graph. */
int xp_analyse(struct xp_report *r, const struct xp_opts *o);
/* The lockout of a configuration on which pam_start fails ("file:line:
 * why"); takes p. */
int xp_add_lockout(struct xp_report *r, const char *refused,
		   struct xp_path *p);
void xp_report_free(struct xp_report *r);
/* "success iff one of mods[] returned success" on every path: true, or
 * false and *witness (caller frees). */
bool xp_iff(const struct xp_graph *g, char *const *mods, size_t n,
	    struct xp_path *witness);
const char *xp_finding_name(enum xp_kind_f k);

/* ---- replay (explore_replay.c, explore_gen_*.c) ------------------------ */

struct pwrap_xp_plan;
struct xp_replayer {
	const struct xp_conf *c;
	char *dir;		/* the copy of the service's files */
	void *h;		/* the stand-in, loaded by us */
	void (*set)(struct pwrap_xp_plan *);
	bool keep;		/* leave the directory (debugging) */
	bool none;		/* nothing can be replayed ... */
	char *why_none;		/* ... because of this (owned) */
};

/* Makes the copy of c's files for replays (needs the wrapper in this
 * process and the stand-in module).  0 (rp->none: nothing to replay, see
 * rp->why_none), or -1 with *err (malloc'd). */
int xp_replay_begin(struct xp_replayer *rp, const struct xp_conf *c,
		    const char *standin, char **err);
/* Replays r's paths: r->replays, r->disagree (NULL: libpam agreed). */
int xp_replay_run(struct xp_replayer *rp, struct xp_report *r);
/* c->refused: libpam's pam_start must fail too; NULL or what differed. */
char *xp_replay_refused(struct xp_replayer *rp);
void xp_replay_end(struct xp_replayer *rp);
/* Writes the copy of c's files into dir (the stand-in linked as dir/s):
 * 0; 1 when there is nothing to replay, with the reason in *err (the
 * wrapper refuses a file, a line too long to name the stand-in in it);
 * -1 with *err. */
int xp_gen_replay(const struct xp_conf *c, const char *dir,
		  const char *standin, char **err);

/* ---- output (explore_out.c) --------------------------------------------- */

enum xp_format { XP_HUMAN, XP_JSON, XP_DOT, XP_MERMAID };
void xp_print(FILE *f, enum xp_format fmt, struct xp_report *const *r,
	      size_t n, bool all);
/* One call as "where module = outcome" for messages (malloc'd). */
char *xp_path_text(const struct xp_graph *g, const struct xp_path *p);

/* ---- module files (explore_elf.c) --------------------------------------- */

/* 1: the shared object at path defines function sym; 0: it does not; -1:
 * it cannot be loaded (no such file, not an ELF object of this machine). */
int xp_module_has(const char *path, const char *sym);

/* ---- entry points -------------------------------------------------------- */

int explore_main(int argc, char **argv);
/* One exploration as the scenario runner and explore_main use it: reads
 * service from dir (NULL: the system's), explores the type(s), replays.
 * Fills r[0..] (XP_NTYPES entries for all) and returns how many, or -1
 * with *err set (malloc'd). */
int xp_explore(const char *dir, const char *service, const struct xp_opts *o,
	       struct xp_conf *conf, struct xp_report *r, char **err);
/* Our stand-in module (found next to our modules), malloc'd or NULL. */
char *xp_standin_path(void);

#endif
