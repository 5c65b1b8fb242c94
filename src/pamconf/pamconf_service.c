/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A service read as libpam builds its stacks (pamconf_service_read()): the
 * service file and "other", what they include, each file read for the
 * groups libpam reads it for, into one stack of entries per group.  The
 * files come through the one classifier of targets and the one file reader
 * (pamconf_files.c), their lines from pamconf_parse(), modules through the
 * one resolver.  pamtest explore builds its model from it, pamtest --check
 * its list of modules.
 *
 * Linux-PAM (pam_handlers.c): a file read for every group (the service
 * file, "other") or for the group of the line that includes it; Debian's
 * "@include" for the group being read.  A line of an unknown group, without
 * a control or a module, or whose include fails, fails without a call.  A
 * module or substack named "" or "?" ends the read of its file with an
 * error (its entry stays), as does a file that ends in a continued line:
 * the including line then fails; in the service file or "other" pam_start
 * fails.  Substacks nest at most 16 deep; from 1.6 includes and substacks
 * together, up to 1.5 libpam recurses through includes until it crashes,
 * which libpam_wrapper refuses (a cycle, or deeper than
 * PAMCONF_INCLUDE_DEEPEST).  Debian's failed "@include" in the service
 * file or "other" fails pam_start; in an included file it adds a failing
 * line to a group that depends on memory libpam did not set: that cannot
 * be told (s->error).
 *
 * OpenPAM (openpam_configure.c): "facility include service" adds that
 * service's lines of the facility; any error of a line it reads (its
 * facility is checked first, the rest only on lines of the facility read)
 * fails pam_start; a facility without lines in the service takes "other"'s
 * (libpam_wrapper gives an empty "other" when there is none).  Whether a
 * module loads is the caller's to say (OpenPAM then fails pam_start).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pamconf.h"
#include "pamconf_impl.h"

#define FILE_MAX (16u << 20)	/* what a service file may hold */

enum { RD_OK = 0, RD_FAILS = -1, RD_STOP = -2 };

struct walk {
	const struct pamconf_rules *r;
	const struct pamconf_walk_ops *ops;
	const char *dir;
	struct pamconf_service *s;
	bool other;		/* entries go to s->other */
	unsigned seq;
	int *chain;		/* files being read, outermost first */
	size_t depth, cap;
	const char *why;	/* RD_FAILS of an include: why */
	/* RD_FAILS of a file: where libpam stopped reading, and why */
	int stop_file;
	unsigned stop_line;
	const char *stop_why;
	/* files read for s->unread, once per stack: file * 8 + stack */
	int *shadowed;
	size_t nshadowed, capshadowed;
	/* include lines libpam reads (at some level), which are not unread
	 * when an include nested too deep would have read them again */
	struct read_include {
		const struct pamconf_line *l;
		int group;
		bool other;
	} *included;
	size_t nincluded, capincluded;
};

static void set_msg(char **to, const char *fmt, va_list ap)
{
	if (*to == NULL && vasprintf(to, fmt, ap) < 0) {
		*to = NULL;
	}
}

static int error(struct walk *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int error(struct walk *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_msg(&w->s->error, fmt, ap);
	va_end(ap);
	if (w->s->error == NULL) {
		w->s->error = strdup("out of memory");
	}
	return RD_STOP;
}

static int nomem(struct walk *w)
{
	return error(w, "out of memory");
}

/* pam_start fails: "SHOW[:LINE]: why" (the first reason wins). */
static int refuse(struct walk *w, int file, unsigned line, const char *fmt,
		  ...) __attribute__((format(printf, 4, 5)));
static int refuse(struct walk *w, int file, unsigned line, const char *fmt,
		  ...)
{
	struct pwrap_buf b = { 0 };
	va_list ap;

	if (w->s->refused != NULL) {
		return RD_STOP;
	}
	if (file >= 0) {
		pwrap_buf_str(&b, w->s->files[file].show);
		pwrap_buf_fmt(&b, line > 0 ? ":%u: " : ": ", line);
	}
	va_start(ap, fmt);
	set_msg(&w->s->refused, fmt, ap);
	va_end(ap);
	pwrap_buf_str(&b, w->s->refused != NULL ? w->s->refused : "");
	free(w->s->refused);
	w->s->refused = pwrap_buf_take(&b);
	w->s->refused_file = file;
	return w->s->refused != NULL ? RD_STOP : nomem(w);
}

/* The index of path in s->files (added when new), or -1. */
static int file_index(struct walk *w, const char *path)
{
	struct pamconf_service *s = w->s;
	size_t dl = strlen(w->dir);
	struct pamconf_sfile *v;
	const char *show = path;

	for (size_t i = 0; i < s->nfiles; i++) {
		if (strcmp(s->files[i].path, path) == 0) {
			return (int)i;
		}
	}
	v = realloc(s->files, (s->nfiles + 1) * sizeof(*v));
	if (v == NULL) {
		return -1;
	}
	s->files = v;
	if (strncmp(path, w->dir, dl) == 0 && path[dl] == '/' &&
	    path[dl + 1] != '\0') {
		show = path + dl + 1;
	}
	memset(&v[s->nfiles], 0, sizeof(v[0]));
	v[s->nfiles].path = strdup(path);
	v[s->nfiles].show = strdup(show);
	if (v[s->nfiles].path == NULL || v[s->nfiles].show == NULL) {
		free(v[s->nfiles].path);
		free(v[s->nfiles].show);
		return -1;
	}
	return (int)s->nfiles++;
}

/* The index of dir/name, or -1 (out of memory: s->error). */
static int index_of(struct walk *w, const char *name)
{
	char *path = NULL;
	int f = -1;

	if (asprintf(&path, "%s/%s", w->dir, name) >= 0) {
		f = file_index(w, path);
	}
	free(path);
	if (f < 0) {
		nomem(w);
	}
	return f;
}

/* Puts file f on the include chain. */
static int push(struct walk *w, int f)
{
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		int *v = realloc(w->chain, cap * sizeof(*v));

		if (v == NULL) {
			return nomem(w);
		}
		w->chain = v;
		w->cap = cap;
	}
	w->chain[w->depth++] = f;
	return RD_OK;
}

/* What is at path (the caller's source, or the disk). */
static enum pamconf_target kind_of(struct walk *w, const char *path, int *why)
{
	*why = 0;
	return w->ops->kind != NULL
		       ? w->ops->kind(w->ops->ctx, path, why)
		       : pamconf_target_kind(w->r, AT_FDCWD, path, why);
}

/* Where libpam stops reading a file, for the RD_FAILS that follows. */
static int stop_at(struct walk *w, int file, unsigned line, const char *why)
{
	w->stop_file = file;
	w->stop_line = line;
	w->stop_why = why;
	return RD_FAILS;
}

/* Grows *v (of *cap elements of size sz) to hold n + 1.  0 or -1. */
static int room(void **v, size_t *cap, size_t n, size_t sz)
{
	size_t c = *cap ? *cap * 2 : 16;
	void *nv;

	if (n < *cap) {
		return 0;
	}
	if ((nv = reallocarray(*v, c, sz)) == NULL) {
		return -1;
	}
	*v = nv;
	*cap = c;
	return 0;
}

/* Reads and parses file f once.  RD_OK or RD_STOP (quiet: RD_FAILS
 * instead of an error when it cannot be read). */
static int load_file(struct walk *w, int f, bool quiet)
{
	struct pamconf_sfile *sf = &w->s->files[f];
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (sf->loaded) {
		return RD_OK;
	}
	rc = w->ops->read != NULL
		     ? w->ops->read(w->ops->ctx, sf->path, &text, &len)
		     : pamconf_read_file(AT_FDCWD, sf->path, FILE_MAX, &text,
					 &len);
	if (rc != 0 && quiet) {
		return RD_FAILS;
	}
	if (rc != 0) {
		return error(w, "%s: %s", sf->show, strerror(errno));
	}
	rc = pamconf_parse(w->r, text, len, &sf->f);
	free(text);
	if (rc != 0) {
		return nomem(w);
	}
	sf->loaded = true;
	return RD_OK;
}

static int load(struct walk *w, int f)
{
	return load_file(w, f, false);
}

/* Appends a copy of e (its path taken) to the stack of group. */
static int add(struct walk *w, int group, struct pamconf_entry *e)
{
	struct pamconf_entries *st = w->other ? &w->s->other[group]
					      : &w->s->conf[group];

	if (w->seq >= PAMCONF_ENTRIES_MAX) {
		free(e->path);
		e->path = NULL;
		return error(w, "the service's stacks hold more than %d "
			     "lines (with what their includes repeat); "
			     "libpam's pam_start takes time quadratic in "
			     "them, no tool here follows that many",
			     PAMCONF_ENTRIES_MAX);
	}
	if (room((void **)&st->v, &st->cap, st->n, sizeof(*st->v)) != 0) {
		free(e->path);
		e->path = NULL;
		return nomem(w);
	}
	e->seq = w->seq++;
	st->v[st->n++] = *e;
	e->path = NULL;
	return RD_OK;
}

/* A module line's entry: its module as written and where it is. */
static int add_call(struct walk *w, int group, struct pamconf_entry *e)
{
	char path[4096];
	int why;

	e->does = PAMCONF_CALLS;
	e->module = e->l->tok[e->l->target].text;
	if (pamconf_module_find(w->r, e->module, w->ops->moddirs, path,
				sizeof(path), &why) >= 0 &&
	    (e->path = strdup(path)) == NULL) {
		return nomem(w);
	}
	return add(w, group, e);
}

static void all_bad(int *act)
{
	for (int i = 0; i < PWRAP_CONTROL_CODES; i++) {
		act[i] = PWRAP_CONTROL_BAD;
	}
}

/* The group of a stack (a line libpam reads is of one). */
static int group_of(enum pamconf_stack st)
{
	return (int)st - 1;
}

/* ---- Linux-PAM ---------------------------------------------------------- */

static int read_linux(struct walk *w, int f, enum pamconf_stack asked,
		      unsigned level, unsigned inc);

/* The index of include target `target` (a path, or a name in the service
 * directory), or -1 (out of memory: s->error). */
static int target_index(struct walk *w, const char *target)
{
	char *path = NULL;
	int f = -1;

	if (target[0] == '/' ? (path = strdup(target)) != NULL
			     : asprintf(&path, "%s/%s", w->dir, target) >= 0) {
		f = file_index(w, path);
	}
	free(path);
	if (f < 0) {
		nomem(w);
	}
	return f;
}

/* ---- what libpam leaves unread (s->unread) ---- */

/* An include line libpam reads at one level is read, although an include
 * nested too deep (an include cycle on 1.6+) leaves it unread at another:
 * it goes from s->unread.  (Module lines are in the stacks; consumers
 * tell those themselves.) */
static int read_include_cmp(const void *a, const void *b)
{
	const struct read_include *x = a, *y = b;
	uintptr_t lx = (uintptr_t)x->l, ly = (uintptr_t)y->l;

	if (lx != ly) {
		return lx < ly ? -1 : 1;
	}
	if (x->group != y->group) {
		return x->group < y->group ? -1 : 1;
	}
	return (int)x->other - (int)y->other;
}

static void drop_read_includes(struct walk *w)
{
	size_t n = 0;

	if (w->nincluded == 0 || w->s->nunread == 0) {
		return;
	}
	qsort(w->included, w->nincluded, sizeof(*w->included),
	      read_include_cmp);
	for (size_t i = 0; i < w->s->nunread; i++) {
		const struct pamconf_unread *u = &w->s->unread[i];
		struct read_include key = { u->l, u->group, u->other };

		if (bsearch(&key, w->included, w->nincluded,
			    sizeof(*w->included), read_include_cmp) == NULL) {
			w->s->unread[n++] = *u;
		}
	}
	w->s->nunread = n;
}

static int shadow_target(struct walk *w, const char *target,
			 enum pamconf_stack asked, int at_file,
			 unsigned at_line, const char *why);

/* Lines of file f from index `from` on, as libpam would read them for
 * `asked`, into s->unread, and what their includes would read. */
static int shadow_lines(struct walk *w, int f, size_t from,
			enum pamconf_stack asked, int at_file,
			unsigned at_line, const char *why)
{
	/* (s->files moves as targets are added; the lines stay) */
	for (size_t i = from; i < w->s->files[f].f.n; i++) {
		const struct pamconf_line *l = &w->s->files[f].f.v[i];
		enum pamconf_stack ls = pamconf_line_stack(l);
		enum pamconf_stack to = pamconf_stack_included(ls, asked);
		struct pamconf_unread *u;

		if (!pamconf_stack_reads(ls, asked) || group_of(to) < 0 ||
		    group_of(to) >= PWRAP_GROUPS) {
			continue;
		}
		if (room((void **)&w->s->unread, &w->s->capunread,
			 w->s->nunread, sizeof(*u)) != 0) {
			return nomem(w);
		}
		u = &w->s->unread[w->s->nunread++];
		*u = (struct pamconf_unread){ f, l, group_of(to), w->other,
					      at_file, at_line, why };
		if ((l->kind == PAMCONF_INCLUDE || l->kind == PAMCONF_SUBSTACK ||
		     l->kind == PAMCONF_AT_INCLUDE) && l->target >= 0 &&
		    shadow_target(w, l->tok[l->target].text, to, at_file,
				  at_line, why) == RD_STOP) {
			return RD_STOP;
		}
	}
	return RD_OK;
}

/* The file an include libpam does not follow would read, once per stack
 * (a file that cannot be read, or is not a file, adds nothing). */
static int shadow_target(struct walk *w, const char *target,
			 enum pamconf_stack asked, int at_file,
			 unsigned at_line, const char *why)
{
	int f = target_index(w, target), key, k;

	if (f < 0) {
		return RD_STOP;
	}
	key = f * 8 + (int)asked;
	for (size_t i = 0; i < w->nshadowed; i++) {
		if (w->shadowed[i] == key) {
			return RD_OK;
		}
	}
	if (room((void **)&w->shadowed, &w->capshadowed, w->nshadowed,
		 sizeof(*w->shadowed)) != 0) {
		return nomem(w);
	}
	w->shadowed[w->nshadowed++] = key;
	if (kind_of(w, w->s->files[f].path, &k) != PAMCONF_TARGET_FILE) {
		return RD_OK;
	}
	k = load_file(w, f, true);
	return k != RD_OK ? (k == RD_STOP ? RD_STOP : RD_OK)
			  : shadow_lines(w, f, 0, asked, at_file, at_line, why);
}

/* Follows an include target for `asked` (level, inc: after this include).
 * RD_OK, RD_FAILS (libpam fails the line: w->why) or RD_STOP. */
static int follow(struct walk *w, const char *target, enum pamconf_stack asked,
		  unsigned level, unsigned inc, int from, unsigned line)
{
	int f, why;

	if (w->r->include_max != 0 ? inc >= w->r->include_max
				   : level >= w->r->substack_max) {
		w->why = w->r->include_max != 0
				 ? "includes and substacks nested deeper than "
				   "libpam allows"
				 : "substacks nested deeper than libpam allows";
		/* what it would have read stays unread */
		if (shadow_target(w, target, asked, from, line, w->why) ==
		    RD_STOP) {
			return RD_STOP;
		}
		return stop_at(w, from, line, w->why);
	}
	if ((f = target_index(w, target)) < 0) {
		return RD_STOP;
	}
	switch (kind_of(w, w->s->files[f].path, &why)) {
	case PAMCONF_TARGET_NONE:
		w->why = "its include cannot be read";
		return stop_at(w, from, line, w->why);
	case PAMCONF_TARGET_EMPTY:
		return RD_OK;	/* libpam reads no line from it */
	case PAMCONF_TARGET_BLOCKS:
		return refuse(w, from, line, "include target %s is not a "
			      "file: libpam would block reading it "
			      "(libpam_wrapper refuses it)", target);
	case PAMCONF_TARGET_FILE:
		break;
	}
	for (size_t i = 0; w->r->include_max == 0 && i < w->depth; i++) {
		if (w->chain[i] == f) {
			return refuse(w, from, line, "an include cycle through "
				      "%s (libpam would recurse until it "
				      "crashes; libpam_wrapper refuses it)",
				      w->s->files[f].show);
		}
	}
	if (w->depth >= PAMCONF_INCLUDE_DEEPEST) {
		return refuse(w, from, line, "includes nested deeper than %d "
			      "levels (libpam would run out of stack; "
			      "libpam_wrapper refuses them)",
			      PAMCONF_INCLUDE_DEEPEST);
	}
	return read_linux(w, f, asked, level, inc);
}

/* An include, substack or @include line. */
static int include_line(struct walk *w, struct pamconf_entry *e,
			enum pamconf_stack asked, enum pamconf_stack to,
			unsigned inc)
{
	const struct pamconf_line *l = e->l;
	bool sub = l->kind == PAMCONF_SUBSTACK;
	int rc;

	if (room((void **)&w->included, &w->capincluded, w->nincluded,
		 sizeof(*w->included)) != 0) {
		return nomem(w);
	}
	w->included[w->nincluded++] =
		(struct read_include){ l, group_of(to), w->other };
	if (sub) {
		struct pamconf_entry m = *e;

		m.does = PAMCONF_MARK;
		if (add(w, group_of(to), &m) != RD_OK) {
			return RD_STOP;
		}
	}
	rc = follow(w, l->tok[l->target].text, to, e->level + sub, inc + 1,
		    e->file, l->line);
	if (rc != RD_FAILS) {
		return rc;
	}
	if (l->kind == PAMCONF_AT_INCLUDE) {
		if (asked == PAMCONF_STACK_ANY) {
			return RD_FAILS;	/* libpam gives up on the file */
		}
		return error(w, "%s:%u: @include %s cannot be read: Debian's "
			     "libpam then adds a failing line to a management "
			     "group that depends on what it read before, so "
			     "what the stack does cannot be told; fix the "
			     "@include", w->s->files[e->file].show, l->line,
			     l->tok[l->target].text);
	}
	e->does = PAMCONF_FAILS;
	e->why = w->why;
	all_bad(e->act);
	return add(w, group_of(to), e);
}

/* One line of file f read for `asked`. */
static int line_linux(struct walk *w, int f, const struct pamconf_line *l,
		      enum pamconf_stack asked, unsigned level, unsigned inc)
{
	enum pamconf_stack ls = pamconf_line_stack(l);
	enum pamconf_stack to = pamconf_stack_included(ls, asked);
	struct pamconf_entry e = { .file = f, .l = l, .level = level };

	if (!pamconf_stack_reads(ls, asked)) {
		return RD_OK;
	}
	memcpy(e.act, l->act, sizeof(e.act));
	switch (l->kind) {
	case PAMCONF_CRASH:
		return refuse(w, f, l->line, "%s (libpam_wrapper refuses it)",
			      l->why);
	case PAMCONF_INCLUDE:
	case PAMCONF_SUBSTACK:
	case PAMCONF_AT_INCLUDE:
		return include_line(w, &e, asked, to, inc);
	case PAMCONF_FAILING:
		e.does = PAMCONF_FAILS;
		e.why = l->why;
		return add(w, group_of(to), &e);
	case PAMCONF_STOP:
		if (pamconf_stop_crashes(w->r, l)) {
			return refuse(w, f, l->line, "%s; " PAMCONF_STOP_CRASHES
				      " (libpam_wrapper refuses it)", l->why);
		}
		/* the handler (or substack mark) is added, then the name
		 * refused: a module's is never found, libpam fails the line
		 * it gives an unknown group, else calls nothing */
		e.does = l->control >= 0 && strcasecmp(l->tok[l->control].text,
							"substack") == 0
				 ? PAMCONF_MARK
				 : PAMCONF_FAILS;
		e.why = l->why;
		e.faulty = l->group >= 0;
		if (add(w, group_of(to), &e) != RD_OK) {
			return RD_STOP;
		}
		w->why = "libpam stops reading its include";
		return stop_at(w, f, l->line, l->why);
	case PAMCONF_MODULE:
		break;
	}
	return add_call(w, group_of(to), &e);
}

/* Reads file f for `asked`: RD_OK, RD_FAILS (libpam's read of the file
 * fails, the lines before stay; w->stop_* say where) or RD_STOP. */
static int read_linux(struct walk *w, int f, enum pamconf_stack asked,
		      unsigned level, unsigned inc)
{
	const struct pamconf_file *pf;
	int rc = load(w, f);
	size_t i;

	if (rc != RD_OK) {
		return rc;
	}
	pf = &w->s->files[f].f;
	if (pf->end == PAMCONF_END_HANG) {
		/* libpam_wrapper refuses the file wherever it is read */
		return refuse(w, f, pf->end_line, "a continued line fills "
			      "libpam's line buffer but for one byte: libpam "
			      "loops forever (libpam_wrapper refuses it)");
	}
	if (push(w, f) != RD_OK) {
		return RD_STOP;
	}
	/* (s->files moves as includes add to it; the lines stay) */
	for (i = 0; rc == RD_OK && i < w->s->files[f].f.n; i++) {
		rc = line_linux(w, f, &w->s->files[f].f.v[i], asked, level,
				inc);
	}
	w->depth--;
	/* libpam reads no more of this file (the shadow read leaves w->why
	 * and w->stop_* as they are) */
	if (rc == RD_FAILS &&
	    shadow_lines(w, f, i, asked, w->stop_file, w->stop_line,
			 "libpam stops reading the file before it") != RD_OK) {
		return RD_STOP;
	}
	if (rc == RD_OK && w->s->files[f].f.end == PAMCONF_END_BROKEN) {
		w->why = "libpam gives up reading its include";
		rc = stop_at(w, f, w->s->files[f].f.end_line,
			     "a continued line overflows libpam's line buffer "
			     "or ends the file: libpam gives up on the file");
	}
	return rc;
}

/* ---- OpenPAM ------------------------------------------------------------ */

static int chain_openpam(struct walk *w, const char *name, int fac, int from,
			 unsigned line);

/* One line of file f read for facility fac (-1: every one). */
static int line_openpam(struct walk *w, int f, const struct pamconf_line *l,
			int fac)
{
	struct pamconf_entry e = { .file = f, .l = l, .flag = l->flag };

	if (l->group < 0) {
		return refuse(w, f, l->line, "%s: pam_start fails", l->why);
	}
	if (fac >= 0 && l->group != fac) {
		return RD_OK;
	}
	if (l->kind == PAMCONF_STOP) {
		return refuse(w, f, l->line, "%s: pam_start fails", l->why);
	}
	if (l->kind == PAMCONF_INCLUDE) {
		return chain_openpam(w, l->tok[l->target].text, l->group, f,
				     l->line) < 0 ? RD_STOP : RD_OK;
	}
	return add_call(w, l->group, &e);
}

/* Reads service name's file for fac: 0, 1 no such file, -1 stop. */
static int chain_openpam(struct walk *w, const char *name, int fac, int from,
			 unsigned line)
{
	int f = index_of(w, name), why, rc = RD_OK;
	size_t broken;

	if (f < 0) {
		return -1;
	}
	switch (kind_of(w, w->s->files[f].path, &why)) {
	case PAMCONF_TARGET_FILE:
		break;
	case PAMCONF_TARGET_BLOCKS:
		if (from >= 0) {
			refuse(w, from, line, "included service %s is not a "
			       "file: OpenPAM would block reading it "
			       "(libpam_wrapper refuses it)", name);
			return -1;
		}
		return 1;
	case PAMCONF_TARGET_EMPTY:
		return from >= 0 ? 0 : 1;	/* an empty policy */
	case PAMCONF_TARGET_NONE:
		if (from >= 0) {
			refuse(w, from, line, "included service %s not found: "
			       "pam_start fails", name);
			return -1;
		}
		if (why != ENOENT && why != ENOTDIR) {
			refuse(w, f, 0, "cannot be read (%s): libpam_wrapper "
			       "refuses the service", strerror(why));
			return -1;
		}
		return 1;
	}
	for (size_t i = 0; i < w->depth; i++) {
		if (w->chain[i] == f) {
			refuse(w, from, line, "an include cycle through %s "
			       "(OpenPAM recurses until it fails; "
			       "libpam_wrapper refuses it)",
			       w->s->files[f].show);
			return -1;
		}
	}
	if (load(w, f) != RD_OK || push(w, f) != RD_OK) {
		return -1;
	}
	/* a file cut in a word: its last line is not one OpenPAM reads (the
	 * lines stay where they are, s->files moves) */
	broken = w->s->files[f].f.end == PAMCONF_END_BROKEN;
	for (size_t i = 0; rc == RD_OK && i + broken < w->s->files[f].f.n; i++) {
		rc = line_openpam(w, f, &w->s->files[f].f.v[i], fac);
	}
	w->depth--;
	if (rc == RD_OK && broken) {
		rc = refuse(w, f, w->s->files[f].f.end_line, "unterminated quote or escape "
			    "at the end of the file: pam_start fails");
	}
	return rc == RD_OK ? 0 : -1;
}

static void read_openpam(struct walk *w, const char *service)
{
	int rc, have = 0;

	if (service[0] == '\0' || strchr(service, '/') != NULL ||
	    !pamconf_module_plain(w->r, service)) {
		refuse(w, -1, 0, "invalid service name %s: pam_start fails",
		       service);
		return;
	}
	rc = chain_openpam(w, service, -1, -1, 0);
	if (rc < 0) {
		return;
	}
	if (rc == 0) {
		w->s->service_file = index_of(w, service);
		have = 1;
	}
	w->other = true;
	for (int g = 0; g < PWRAP_GROUPS; g++) {
		if (w->s->conf[g].n > 0) {
			continue;
		}
		rc = chain_openpam(w, "other", g, -1, 0);
		if (rc < 0) {
			return;
		}
		if (rc == 0) {
			w->s->other_file = index_of(w, "other");
			have = 1;
		}
	}
	if (!have) {
		refuse(w, -1, 0, "neither %s/%s nor %s/other exists: "
		       "pam_start fails", w->dir, service, w->dir);
	}
}

/* ---- the service ---------------------------------------------------------- */

/*
 * Linux-PAM's service file or "other" (name) as libpam_wrapper provides
 * it, read for every group: *idx its file, -1 when it is missing.
 */
static int top_linux(struct walk *w, const char *name, int *idx,
		     const char *what)
{
	int why, rc;

	*idx = index_of(w, name);
	if (*idx < 0) {
		return RD_STOP;
	}
	switch (kind_of(w, w->s->files[*idx].path, &why)) {
	case PAMCONF_TARGET_FILE:
		break;
	case PAMCONF_TARGET_NONE:
		if (why != ENOENT && why != ENOTDIR) {
			return refuse(w, *idx, 0, "cannot be read (%s): "
				      "libpam_wrapper refuses the service",
				      strerror(why));
		}
		/* fall through */
	default:
		*idx = -1;	/* only a regular file is a service file */
		return RD_OK;
	}
	w->stop_file = -1;
	rc = read_linux(w, *idx, PAMCONF_STACK_ANY, 0, 0);
	if (rc == RD_FAILS && w->stop_file < 0) {
		return refuse(w, *idx, 0, "libpam cannot read %s: pam_start "
			      "fails", what);
	}
	if (rc == RD_FAILS) {
		/* named where libpam stopped reading */
		return refuse(w, w->stop_file, w->stop_line, "%s, so libpam "
			      "cannot read %s: pam_start fails", w->stop_why,
			      what);
	}
	return rc;
}

static void read_linux_service(struct walk *w, char *service)
{
	int f;

	for (char *p = service; *p != '\0'; p++) {
		*p = (char)tolower((unsigned char)*p);	/* as pam_start does */
	}
	if (service[0] == '\0' || strcmp(service, ".") == 0 ||
	    strcmp(service, "..") == 0) {
		/* libpam would open the directory or its parent */
		error(w, "service name \"%s\" names no file of %s", service,
		      w->dir);
		return;
	}
	/* "other" asked for: libpam reads the file twice, both "other" */
	w->other = strcmp(service, "other") == 0;
	if (top_linux(w, service, &f, "the service file") != RD_OK) {
		return;
	}
	w->s->service_file = f;
	w->other = true;
	if (top_linux(w, "other", &f, "\"other\"") != RD_OK) {
		return;
	}
	w->s->other_file = f;
	if (w->s->service_file < 0 && f < 0) {
		refuse(w, -1, 0, "neither %s/%s nor %s/other exists: "
		       "pam_start fails", w->dir, service, w->dir);
	}
}

int pamconf_service_read(const struct pamconf_rules *r, const char *dir,
			 const char *service, const struct pamconf_walk_ops *ops,
			 struct pamconf_service *s)
{
	static const char *const none[] = { NULL };
	struct pamconf_walk_ops defaults = { .moddirs = none };
	struct walk w = { .r = r, .ops = ops != NULL ? ops : &defaults,
			  .dir = dir, .s = s };
	/* Linux-PAM's pam_start keeps what follows the last '/' */
	const char *slash = r->impl == PAMCONF_OPENPAM ? NULL
						       : strrchr(service, '/');
	char *name = strdup(slash != NULL ? slash + 1 : service);

	memset(s, 0, sizeof(*s));
	s->service_file = s->other_file = s->refused_file = -1;
	if (w.ops->moddirs == NULL) {
		defaults = *ops;
		defaults.moddirs = none;
		w.ops = &defaults;
	}
	if (name == NULL) {
		nomem(&w);
	} else if (r->impl == PAMCONF_OPENPAM) {
		read_openpam(&w, service);
	} else {
		read_linux_service(&w, name);
	}
	s->name = name;
	drop_read_includes(&w);
	free(w.chain);
	free(w.shadowed);
	free(w.included);
	return s->error != NULL ? -1 : 0;
}

static void entries_free(struct pamconf_entries *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].path);
	}
	free(e->v);
}

void pamconf_service_free(struct pamconf_service *s)
{
	for (int g = 0; g < PWRAP_GROUPS; g++) {
		entries_free(&s->conf[g]);
		entries_free(&s->other[g]);
	}
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].show);
		pamconf_file_free(&s->files[i].f);
	}
	free(s->files);
	free(s->refused);
	free(s->error);
	free(s->name);
	free(s->unread);
	memset(s, 0, sizeof(*s));
	s->service_file = s->other_file = s->refused_file = -1;
}
