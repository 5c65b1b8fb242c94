/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: the decision table of a PAM stack (pamtest-explore(1)).
 *
 * The stages, each a file, each calling only the ones listed after it:
 *   main.c      the command line and xp_explore(), the whole pipeline;
 *   scen.c      the scenario's explore block (pamtest-scenario(5))
 *   diff.c      what a change does: two explorations compared (--diff)
 *   out.c       human, json, dot and mermaid output
 *   replay.c    the graph checked on libpam: each path a transaction
 *               through libpam_wrapper on the user's own files, the
 *               module trace's stand-in in every module's place, calls
 *               and result compared (pwrap_trace_plan.h)
 *   find.c      findings (bypass, lockout, dead-line, ignored), "iff";
 *   table.c     the reduced decision diagram and its table
 *   graph.c     the search over libpam's dispatch state, the replay set
 *   step_linux.c, step_openpam.c
 *               each library's dispatch rule, one step at a time (both
 *               compiled in every build: xp_linux, xp_openpam)
 *   outcomes.c  the outcomes each line may return (defaults, --outcomes,
 *               --model, modules absent on this machine)
 *   read.c      the service as libpam reads it (src/pamconf's walk) made
 *               into stacks of lines; elf.c whether a module has a
 *               function (read from its symbol table, nothing loaded)
 *   names.c     names of codes, "file:line", paths as text (a leaf)
 *
 * Ownership: a struct xp_conf owns its reading, files and lines; a struct
 * xp_graph owns its nodes and paths but points into the xp_conf it was
 * built from; a struct xp_report owns its graph, table and findings.
 */
#ifndef PAMTEST_EXPLORE_H
#define PAMTEST_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pamconf.h"

#define XP_NCODES PWRAP_CONTROL_CODES	/* codes an action table covers */
#define XP_MAXLEVEL 16	  /* Linux-PAM's PAM_SUBSTACK_MAX_LEVEL */
#define XP_ALL_TYPES (-1)

/* A set of return codes (bit n: code n; both libraries' codes are < 64). */
typedef uint64_t xp_set;
#define XP_BIT(code) ((xp_set)1 << (code))

/* The management groups, pwrap_names.h's. */
enum xp_type { XP_AUTH = PWRAP_GROUP_AUTH, XP_ACCOUNT = PWRAP_GROUP_ACCOUNT,
	       XP_PASSWORD = PWRAP_GROUP_PASSWORD,
	       XP_SESSION = PWRAP_GROUP_SESSION, XP_NTYPES = PWRAP_GROUPS };

/* Linux-PAM actions (pwrap_control.h); a positive value is a jump. */
enum { XP_IGNORE = PWRAP_CONTROL_IGNORE, XP_OK = PWRAP_CONTROL_OK,
       XP_DONE = PWRAP_CONTROL_DONE, XP_BAD = PWRAP_CONTROL_BAD,
       XP_DIE = PWRAP_CONTROL_DIE, XP_RESET = PWRAP_CONTROL_RESET };

enum xp_kind {
	XP_CALL,      /* a module call: returns one outcome of its set */
	XP_FIXED,     /* no call: libpam uses a fixed code (why says why) */
	XP_SUBSTACK,  /* Linux-PAM's mark of a substack (never evaluated) */
};

/* ---- the reading (read.c) and the outcomes (outcomes.c) --------------- */

struct xp_file {
	const char *path;	/* as libpam opens it (the reading's) */
	const char *show;	/* relative to the service directory */
	/* a scenario's inline service: shown as alias:lines[line - 1] */
	const char *alias;
	const int *lines;
	size_t nlines;
	int *site_at;		/* by physical line: its site, or -1 */
	size_t nsite_at;
};

/* One entry of a stack, in the order the library evaluates them. */
struct xp_line {
	enum xp_kind kind;
	int file;		/* index in xp_conf.files */
	unsigned line;		/* first physical line */
	int level;		/* substack depth (Linux-PAM) */
	int act[XP_NCODES];	/* Linux-PAM actions per code */
	int flag;		/* OpenPAM control flag (enum pamconf_flag) */
	const char *module;	/* as written (the reading's), or NULL */
	const char *control;	/* Linux-PAM: the control as written, or
				 * NULL (the reading's) */
	char *name;		/* short name: "pam_unix" ("?" without one) */
	unsigned seq;		/* the order the reading met it in */
	int fixed;		/* XP_FIXED: the code */
	const char *why;	/* XP_FIXED: static text */
	bool absent;		/* XP_CALL: the module cannot be loaded here */
	const char *absent_why;	/* ... why (xp_conf's), or NULL: no file */
	bool modelled;		/* ... but --model says what it returns */
	bool no_fn;		/* XP_CALL: it lacks the group's function */
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

/* A line libpam never reads (pamconf_unread): its site, and where and why
 * libpam stopped. */
struct xp_unread {
	int site;
	const struct pamconf_line *l;	/* the reading's */
	int at_file;
	unsigned at_line;
	const char *why;
};

struct xp_unreads {
	struct xp_unread *v;
	size_t n, cap;
};

/* A module absent on this machine and what it was taken to return. */
struct xp_absent {
	const char *name;
	xp_set outcomes;
	bool modelled;		/* by --model, else what libpam gives */
};

struct xp_impl;

/* A module file as libpam's dlopen() would find it (elf.c). */
struct xp_modfile {
	char *path;
	int rc;			/* 0: it loads, -1: why */
	unsigned fns;
	char *why;
};

/* A service as the library reads it. */
struct xp_conf {
	struct pamconf_rules rules;	/* of the libpam pamtest runs with */
	const struct xp_impl *impl;	/* its dispatch rule */
	struct pamconf_service s;	/* the reading (src/pamconf) */
	char *service;		/* the name libpam reads (pamconf's) */
	char *asked;		/* the name as given (the replay's) */
	char *dir;		/* absolute, as libpam_wrapper names it */
	struct xp_file *files;
	size_t nfiles;
	struct xp_site *sites;
	size_t nsites, capsites;
	struct xp_stack conf[XP_NTYPES], other[XP_NTYPES];
	/* what the stacks leave unread (as conf and other) */
	struct xp_unreads unread[XP_NTYPES], unread_other[XP_NTYPES];
	char *refused;		/* pam_start fails: "file:line: why" */
	int refused_file;	/* ... in this file (index), or -1 */
	char *error;		/* we cannot model it (exit 2): message */
	struct xp_absent *absent;	/* outcomes.c */
	size_t nabsent;
	struct xp_modfile *mods;	/* module files inspected (read.c) */
	size_t nmods;
};

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
	struct xp_accept *accepts;
	size_t naccepts;
	bool no_replay;
	bool replay_all;	/* every outcome, not every edge */
	/* libpam's module directory and ours (NULL: unknown) */
	const char *sysmoddir, *moddir;
	/* asked between replays: true stops them (NULL: never) */
	bool (*stop)(void);
	/* called once the service is read (the scenario's aliases) */
	void (*after_read)(struct xp_conf *c, const void *ctx);
	const void *ctx;
};

/* Reads service from dir (absolute) as the linked libpam reads it.  0,
 * or -1 with c->error (a message for the user). */
int xp_read(struct xp_conf *c, const char *dir, const char *service,
	    const struct xp_opts *o);
void xp_conf_free(struct xp_conf *c);
/* The stack libpam dispatches for a type (the service's, else other's),
 * and the lines it leaves unread. */
const struct xp_stack *xp_stack_of(const struct xp_conf *c, enum xp_type t);
const struct xp_unreads *xp_unread_of(const struct xp_conf *c, enum xp_type t);
/* The site of (file, line), or -1. */
int xp_site_at(const struct xp_conf *c, int file, unsigned line);

/* Gives every call of c its outcomes (defaults, stock modules,
 * --outcomes, --model; an absent module PAM_MODULE_UNKNOWN unless
 * modelled; OpenPAM: pam_start fails on an absent module not modelled).
 * 0, or -1 with a message on stderr. */
int xp_apply_outcomes(struct xp_conf *c, const struct xp_opts *o);
xp_set xp_default_outcomes(enum xp_type t);
/* What stock module `name` ("pam_unix") returns in group t, or 0: not
 * known (the group's default then). */
xp_set xp_stock_outcomes(const char *name, enum xp_type t);
/* Parses "success,auth_err,PAM_IGNORE" into a set.  0 or -1. */
int xp_parse_outcomes(const char *s, xp_set *out);

/* ---- the dispatch rule (step_*.c) and the graph (graph.c) ------------- */

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
/* A library's dispatch rule. */
struct xp_impl {
	/* The first state of pass `pass` (0, or 1 for chauthtok's update
	 * pass): -1 and *s, or the result when the pass ends without a
	 * call. */
	int (*begin)(const struct xp_graph *g, int pass, struct xp_state *s);
	/* The line at s->pos returned `code`: -1 and *next, or the
	 * result. */
	int (*step)(const struct xp_graph *g, const struct xp_state *s,
		    int code, struct xp_state *next);
	/* A state as text for dot and mermaid ("negative PAM_AUTH_ERR"). */
	void (*state_text)(const struct xp_state *s, char *buf, size_t len);
};
extern const struct xp_impl xp_linux, xp_openpam;

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

/* A number of paths: m * 2^e (m in [0.5, 1), or 0), exact while below
 * 2^53; far larger ones (a long stack has more paths than a double
 * holds) keep their magnitude. */
struct xp_count {
	double m;
	long e;
};
/* Whether c is exact (then *v is it). */
bool xp_count_exact(struct xp_count c, uint64_t *v);
double xp_count_log10(struct xp_count c);
struct xp_count xp_count_add(struct xp_count a, struct xp_count b);
/* c - k (k <= c) */
struct xp_count xp_count_sub(struct xp_count c, size_t k);

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
	int *order;		/* nodes, results first, then by position
				 * from the last: edges go backwards in it */
	struct xp_path *paths;	/* the replay set: every outcome of every
				 * line and every state but for what
				 * substacks saved (replay_all: every outcome
				 * of every edge) at least once */
	size_t npaths;
	size_t nedges;
	struct xp_count npaths_all;	/* outcome sequences (paths) */
	bool replay_all;	/* replay every outcome of every edge */
};

/* Builds the graph of c's stack for type t and its replay set (see
 * xp_graph.paths).  0, or -1 (no memory). */
int xp_graph_build(struct xp_graph *g, const struct xp_conf *c,
		   enum xp_type t, bool all);
void xp_graph_free(struct xp_graph *g);
/* The path from the root to node n (BFS parents), appended to p. */
int xp_path_to(const struct xp_graph *g, int n, struct xp_path *p);
/* Appends the call of the line at pos returning code to p: 0, or -1 (no
 * memory; p unchanged). */
int xp_path_push(struct xp_path *p, int pos, int code);
void xp_path_free(struct xp_path *p);
/* The codes a position may return. */
xp_set xp_codes_at(const struct xp_graph *g, int pos);

/* ---- names (names.c) ----------------------------------------------------- */

/* Whether a module's short name is named by `want` ("pam_unix",
 * "pam_unix.so" or a path). */
bool xp_name_is(const char *name, const char *want);
/* "pam_unix" of "/lib/security/pam_unix.so" (malloc'd). */
char *xp_short_name(const char *module);
/* "file:line" of a line (static buffer, valid until the next call). */
const char *xp_where(const struct xp_conf *c, const struct xp_line *l);
const char *xp_where_at(const struct xp_conf *c, int file, unsigned line);
/* An outcome's name as written in controls ("success", "auth_err"). */
const char *xp_code_word(int code);
/* A result's name ("PAM_SUCCESS"). */
const char *xp_code_name(int code);
/* A path as "where module = outcome, ... -> RESULT" (malloc'd). */
char *xp_path_text(const struct xp_graph *g, const struct xp_path *p);

/* ---- findings (find.c) and the table (table.c) ------------------------- */

enum xp_kind_f { XP_BYPASS, XP_LOCKOUT, XP_DEAD, XP_IGNORED, XP_NKINDS };

struct xp_finding {
	enum xp_kind_f kind;
	char *where;		/* "file:line" */
	char *msg;
	struct xp_path path;
	int site;		/* a dead line's, else -1 */
	/* accepted (accept.c): the index in xp_opts.accepts, or -2 for the
	 * built-in rule; by: what accepted it (static or the accept's) */
	int accept;
	const char *by;
};

/* A finding accepted (accept.c): "KIND:WHERE", and where it was given. */
struct xp_accept {
	enum xp_kind_f kind;
	char *where;
	char *from;		/* "--accept", "FILE:LINE" of an accept file */
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
	size_t lits;		/* literals listed */
	struct xp_count total;	/* paths of the reduced diagram to it */
	struct xp_count more;	/* ... of them not listed */
};

/* The decision diagram reduced: equal futures merged, calls whose outcome
 * does not matter left out. */
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
	bool *dep;		/* per position: whether the result depends
				 * on its call */
	struct xp_finding *f;
	size_t nf;
	struct xp_finding *acc;	/* findings accepted (accept.c) */
	size_t nacc;
	struct xp_cond *table;	/* one per reachable result */
	size_t ntable;
	/* replay */
	size_t replays;
	char *disagree;		/* NULL: libpam agreed on every path */
	char *not_replayed;	/* why there was no replay (or NULL) */
	bool replayed;
};

/* The reduced diagram and the table of a built graph; whether the result
 * depends on the call at pos. */
int xp_table(struct xp_report *r);
void xp_table_free(struct xp_report *r);
bool xp_depends(const struct xp_report *r, int pos);

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

/* ---- accepted findings (accept.c) -------------------------------------- */

/* Adds "KIND:WHERE" (given at `from`) to v.  0, or -1 (not one). */
int xp_add_accept(struct xp_accept **v, size_t *n, const char *arg,
		  const char *from);
/* Adds an accept file's.  0, or -1 after a message on stderr. */
int xp_read_accepts(const char *path, struct xp_accept **v, size_t *n);
void xp_accepts_free(struct xp_accept *v, size_t n);
/* Moves r's accepted findings from r->f to r->acc.  0 or -1. */
int xp_accept(struct xp_report *r, const struct xp_opts *o);

/* ---- replay (replay.c) ------------------------------------------------- */

struct xp_replayer;
/* A group of more lines is not replayed (libpam's pam_start is quadratic
 * in them: it appends each handler at the end of a list). */
#define XP_REPLAY_MAX 5000
/* Sets up the replays of c (needs libpam_wrapper in this process).  NULL
 * with *err (malloc'd) when they cannot run. */
struct xp_replayer *xp_replay_begin(const struct xp_conf *c, char **err);
/* Replays r's paths (c->refused: pam_start must fail): r->replays,
 * r->disagree (NULL: libpam agreed) or r->not_replayed. */
void xp_replay_run(struct xp_replayer *rp, struct xp_report *r,
		   bool (*stop)(void));
void xp_replay_end(struct xp_replayer *rp);

/* ---- output (out.c) ------------------------------------------------------ */

enum xp_format { XP_HUMAN, XP_JSON, XP_DOT, XP_MERMAID };
void xp_print(FILE *f, enum xp_format fmt, struct xp_report *const *r,
	      size_t n, bool all);
struct pwrap_buf;
/* A term as human output writes it ("svc:2 pam_unix = success and ..."),
 * and a path as json ({"calls": [...], "result"}): for diff.c. */
void xp_term_text(struct pwrap_buf *b, const struct xp_graph *g,
		  const struct xp_term *t);
void xp_json_path(struct pwrap_buf *b, const struct xp_graph *g,
		  const struct xp_path *p);

/* ---- what a change does (diff.c) ------------------------------------------ */

/* A way the result changed: on the combination of outcomes `path` shows
 * (path[0] the calls before, path[1] after), the result was `before` and is
 * `after`.  term, when set, is the condition of side `side`'s PAM_SUCCESS
 * (in its table) some of whose combinations changed so. */
struct xp_change {
	int before, after;
	const struct xp_term *term;
	int side;
	struct xp_path path[2];
};

/* One group compared.  fnew: indices of after's findings that before does
 * not have (by kind and line), fgone: before's that after does not. */
struct xp_cmp {
	enum xp_type type;
	struct xp_change *ch;
	size_t nch;
	size_t *fnew, nfnew, *fgone, nfgone;
	bool weaker;		/* a combination succeeds that did not */
	bool same;		/* every combination gives what it gave */
};

/* Two explorations of one service and how they differ (side 0: before,
 * side 1: after).  Owns its readings, reports and comparisons. */
struct xp_diff {
	const char *dir[2];
	const char *service;
	struct xp_conf c[2];
	struct xp_report r[2][XP_NTYPES];
	int n[2];		/* groups explored on each side */
	struct xp_cmp cmp[XP_NTYPES];
	char *error;		/* why it could not be done (malloc'd) */
};

/* Explores service in old and in new (each replayed on libpam) and
 * compares each group.  0, or -1 with d->error.  The caller frees d with
 * xp_diff_free either way. */
int xp_diff(struct xp_diff *d, const char *old, const char *new,
	    const char *service, const struct xp_opts *o);
void xp_diff_free(struct xp_diff *d);
/* Both tables, then what changed (human or json). */
void xp_diff_print(FILE *f, enum xp_format fmt, const struct xp_diff *d,
		   bool all);
/* pamtest explore's exit status for d: 2 an error or a disagreement with
 * libpam, 1 a combination succeeds now that did not, else 0. */
int xp_diff_status(const struct xp_diff *d);

/* ---- module files (elf.c) -------------------------------------------------- */

/* What libpam's dlopen() would make of the module at path, told from its
 * file and those of the libraries it needs (nothing is loaded): 0 with
 * *fns (bit 1 << sm for each pam_sm_ function it defines, enum pwrap_sm),
 * or -1 with *why (malloc'd, or NULL when out of memory) when it would
 * fail. */
int xp_module_inspect(const char *path, unsigned *fns, char **why);

/* ---- the pipeline (main.c) ------------------------------------------------ */

int explore_main(int argc, char **argv);
/* --type's and `explore type`'s word: an xp_type, XP_ALL_TYPES, or -2. */
int xp_parse_type(const char *s);
/* Adds "MODULE=CODE,..." to v (--model, `model`).  0 or -1. */
int xp_add_model(struct xp_model **v, size_t *n, const char *arg);
/* One exploration as the scenario runner and explore_main use it: reads
 * service from dir, explores the type(s), replays.  Fills r[0..]
 * (XP_NTYPES entries for all) and returns how many, or -1 with *err set
 * (malloc'd). */
int xp_explore(const char *dir, const char *service, const struct xp_opts *o,
	       struct xp_conf *conf, struct xp_report *r, char **err);

#endif
