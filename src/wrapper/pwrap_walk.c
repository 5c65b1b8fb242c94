/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bringing conf/ up to date for one service: its file and "other" (from
 * services/, see pwrap_services.c) and everything they include are
 * rewritten into conf/ (pwrap_conf.c does the text), relative include
 * targets and bare names of our modules resolved inside the test setup.
 * Includes are followed as libpam reads them: a file included by a line of
 * one stack is read for that stack only, so what libpam skips neither
 * counts against the service nor is walked.  A rewritten file is kept
 * while the (dev, ino, size, mtime, ctime) of its source stay the same, so
 * an unchanged configuration costs a few stat(2) per pam_start.  A write
 * that fails for lack of space is only noted (pwrap_rundir_no_space):
 * pwrap_prepare.c then moves everything to the next base.
 *
 * Called with the preparation lock held (pwrap_prepare.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_private.h"
#include "pwrap_trace.h"

/*
 * How deep includes may nest.  From 1.6 Linux-PAM stops at 16 levels
 * (pwrap_rules()->include_max), and so does the walk.  Up to 1.5 libpam
 * has no limit of its own: it recurses,
 * with a 1 KiB line buffer and an open FILE per level (Linux-PAM 1.5.2
 * crashes at about 5340 levels on the default 8 MiB stack; with fewer
 * descriptors than levels its innermost include fails).  Deeper than this
 * it needs more than 8 MiB of stack, so the wrapper refuses the file
 * rather than let libpam crash; the walk below keeps its paths on the heap
 * and needs far less stack per level than libpam.
 */
#define PWRAP_MAX_INCLUDE_DEPTH PAMCONF_INCLUDE_DEEPEST

/* An include line: its target as written (NULL: it has none), the stack it
 * belongs to, and whether it cannot work (then the line is refused where
 * libpam reads it). */
struct pwrap_inc {
	char *target;
	enum pamconf_stack stack;
	unsigned line;
	bool bad;
	enum pamconf_bad_include why;
};

static void incs_free(struct pwrap_inc *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].target);
	}
	free(v);
}

/* A rewritten file in conf/, with what it was made from. */
struct pwrap_gen {
	struct pwrap_entry e;	/* first; e.name: its absolute path in conf/ */
	char *src;		/* source path it was rewritten from */
	char *shown;		/* the user's file, for messages */
	struct pwrap_sig sig;	/* source signature then */
	struct pwrap_inc *incs;	/* its include lines */
	size_t n_incs;
	/* in walk number `walk`: the stacks (a bit per enum pamconf_stack) it
	 * was brought up to date for, and those it is being read for on the
	 * current include chain */
	unsigned long walk;
	unsigned seen, open;
	int traced;		/* module lines name the trace's stand-in
				 * (pwrap_trace_mode()) */
};

static struct pwrap_entry *gens;	/* of struct pwrap_gen */

/* Frees an entry taken out of gens (NULL: nothing). */
static void gen_free(struct pwrap_gen *g)
{
	if (g == NULL) {
		return;
	}
	incs_free(g->incs, g->n_incs);
	free(g->e.name);
	free(g->src);
	free(g->shown);
	free(g);
}

static void gens_free(void)
{
	while (gens != NULL) {
		gen_free((struct pwrap_gen *)pwrap_list_take(&gens, NULL));
	}
}

/* ---- walking a service file and its includes ---------------------------- */

struct walk {
	const struct pwrap_source *src;
	const char *conf;		/* the runtime directory's conf/ */
	unsigned long id;		/* this walk's number (pwrap_gen.walk) */
	struct pwrap_gen **chain;	/* the include chain (malloc'd) */
	size_t depth, cap;
	struct pwrap_inc *incs;	/* include lines of the file being rewritten */
	size_t n_incs;
	bool failed;
	bool cycle;		/* libpam would recurse until the stack overflows */
	bool suspect;		/* a file we made is gone: recheck the directory */
	bool top;		/* walking the requested service's own file */
	int traced;		/* rewrite for the module trace (mode) */
	const char *gpath;	/* the file being rewritten */
};

/* OpenPAM includes a service by name, not a file by path. */
#define INCLUDE_BY_NAME (pwrap_rules()->impl == PAMCONF_OPENPAM)

/* What libpam finds when it opens an include target (pamconf.h): a file
 * to read, one it reads as empty, none, or one it would block on. */
static enum pamconf_target kind_of(const char *path, int *why)
{
	return pamconf_target_kind(pwrap_rules(), AT_FDCWD, path, why);
}

/* Source of an include target: absolute as written, relative inside the
 * runtime/service dirs (never /etc/pam.d).  A file to read (PAMCONF_TARGET_FILE)
 * comes with its path, the path shown in messages and its signature. */
static enum pamconf_target include_source(struct walk *w, const char *target,
				       pwrap_path out, pwrap_path shown,
				       struct pwrap_sig *sig, int *why)
{
	enum pamconf_target kind = PAMCONF_TARGET_NONE;

	*why = ENOENT;
	if (pwrap_name_is_plain(target)) {
		pwrap_path mine;

		/* the service directory's entry, unless the test wrote its
		 * own into services/: a directory, a FIFO, a file libpam
		 * could not read are not copied */
		if ((w->src->only == NULL || strcmp(w->src->only, target) == 0) &&
		    pwrap_pjoin(out, w->src->dir, target) &&
		    pwrap_pjoin(mine, pwrap_rundir()->svc, target) &&
		    access(mine, F_OK) != 0) {
			kind = kind_of(out, why);
			if (kind == PAMCONF_TARGET_EMPTY || kind == PAMCONF_TARGET_BLOCKS ||
			    (kind == PAMCONF_TARGET_NONE && *why != ENOENT)) {
				memcpy(shown, out, sizeof(pwrap_path));
				return kind;
			}
		}
		*why = ENOENT;
		return pwrap_services_source(w->src, target, out, shown, sig,
					     &w->suspect, &w->failed)
			       ? PAMCONF_TARGET_FILE
			       : PAMCONF_TARGET_NONE;
	}
	if (target[0] == '/') {
		if (snprintf(out, sizeof(pwrap_path), "%s", target) <
		    (int)sizeof(pwrap_path)) {
			kind = kind_of(out, why);
		}
	} else {
		if (pwrap_pjoin(out, pwrap_rundir()->svc, target)) {
			kind = kind_of(out, why);
		}
		if (kind == PAMCONF_TARGET_NONE && *why == ENOENT &&
		    w->src->only == NULL &&
		    pwrap_pjoin(out, w->src->dir, target)) {
			kind = kind_of(out, why);
		}
	}
	memcpy(shown, out, sizeof(pwrap_path));
	if (kind == PAMCONF_TARGET_FILE && !pwrap_sig_of(out, sig)) {
		*why = errno;
		return PAMCONF_TARGET_NONE;	/* gone since */
	}
	return kind;
}

/*
 * Where an include target's rewritten copy goes.  Linux-PAM opens a target
 * as a path: conf/.inc/<target, %-escaped>, a flat name for any path, which
 * the target becomes.  OpenPAM includes a service by name through its
 * policy path (so through pwrap_legacy.c, to conf/<name>) and refuses any
 * other target itself: there the copy is conf/<target>, only a plain name
 * is one, and the target stays as written.
 */
static bool include_gpath(const struct walk *w, const char *target,
			  pwrap_path out)
{
	static const char hex[] = "0123456789abcdef";
	size_t j, i;

	if (INCLUDE_BY_NAME) {
		return pwrap_name_is_plain(target) &&
		       pwrap_pjoin(out, w->conf, target);
	}
	j = (size_t)snprintf(out, sizeof(pwrap_path), "%s/.inc/", w->conf);

	for (i = 0; target[i] != '\0'; i++) {
		unsigned char c = (unsigned char)target[i];

		if (j + 4 >= sizeof(pwrap_path)) {
			return false;
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    (c == '.' && i > 0)) {
			out[j++] = (char)c;
		} else {
			out[j++] = '%';
			out[j++] = hex[c >> 4];
			out[j++] = hex[c & 15];
		}
	}
	out[j] = '\0';
	return true;
}

/* Records an include line of the file being rewritten (target may be
 * NULL); 0, or -1 when out of memory. */
static int add_inc(struct walk *w, const char *target, enum pamconf_stack stack,
		   unsigned line)
{
	struct pwrap_inc *v = realloc(w->incs, (w->n_incs + 1) * sizeof(*v));

	if (v == NULL) {
		return -1;
	}
	w->incs = v;
	v[w->n_incs].target = NULL;
	if (target != NULL && (v[w->n_incs].target = strdup(target)) == NULL) {
		return -1;
	}
	v[w->n_incs].stack = stack;
	v[w->n_incs].line = line;
	v[w->n_incs].bad = false;
	w->n_incs++;
	return 0;
}

static char *cb_include(void *ctx, const char *target, enum pamconf_stack stack,
			const char *src, unsigned line)
{
	struct walk *w = ctx;
	pwrap_path g;

	(void)src;
	if (!include_gpath(w, target, g)) {
		/* a path too long (an error), or for OpenPAM no service
		 * name (OpenPAM refuses it itself, nothing to prepare) */
		if (!INCLUDE_BY_NAME) {
			w->failed = true;
		}
		return NULL;
	}
	if (add_inc(w, target, stack, line) != 0) {
		w->failed = true;
		return NULL;
	}
	return INCLUDE_BY_NAME ? NULL : strdup(g);
}

/* Whether a bad include line matters depends on what the file is read
 * for: walk_file() decides.  The line stays as written.  (A line too long
 * once resolved was recorded by cb_include already: the last entry.) */
static int cb_bad_include(void *ctx, enum pamconf_stack stack,
			  enum pamconf_bad_include why, const char *target,
			  const char *src, unsigned line)
{
	struct walk *w = ctx;
	struct pwrap_inc *last = w->n_incs > 0 ? &w->incs[w->n_incs - 1] : NULL;

	(void)src;
	if (why != PAMCONF_INCLUDE_TOO_LONG || last == NULL ||
	    last->line != line) {
		if (add_inc(w, target, stack, line) != 0) {
			w->failed = true;
			return 0;
		}
		last = &w->incs[w->n_incs - 1];
	}
	last->bad = true;
	last->why = why;
	return 0;
}

static char *cb_module(void *ctx, const char *module, bool quiet,
		       const char *src, unsigned line)
{
	const struct walk *w = ctx;

	return pwrap_module_path(w->conf, module, quiet, src, line);
}

static char *cb_trace(void *ctx, const struct pamconf_module_line *ml)
{
	const struct walk *w = ctx;

	return pwrap_trace_line(w->conf, w->gpath, ml);
}

static int cb_unfit(void *ctx, const struct pamconf_module_line *ml)
{
	(void)ctx;
	return pwrap_trace_unfit(ml->src, ml->line);
}

static struct pwrap_gen *gen_find(const char *gpath)
{
	return (struct pwrap_gen *)pwrap_list_find(gens, gpath);
}

static void gen_drop(const char *gpath)
{
	gen_free((struct pwrap_gen *)pwrap_list_take(&gens, gpath));
}

static struct pwrap_gen *gen_new(const char *gpath)
{
	struct pwrap_gen *g = calloc(1, sizeof(*g));

	if (g == NULL || (g->e.name = strdup(gpath)) == NULL ||
	    (g->src = strdup("")) == NULL) {
		gen_free(g);
		return NULL;
	}
	pwrap_list_push(&gens, &g->e);
	return g;
}

static int walk_file(struct walk *w, const char *gpath, const char *src,
		     const char *shown, const struct pwrap_sig *sig,
		     enum pamconf_stack asked);
static int placeholder(const struct walk *w, const char *gpath);

/* Whether g is on the current include chain (then never dropped). */
static bool on_chain(const struct walk *w, const struct pwrap_gen *g)
{
	return g != NULL && g->walk == w->id && g->open != 0;
}

/* Brings conf/.inc/<target> up to date (recursively), as read for asked.
 * The paths live on the heap: a deep chain of includes must cost the
 * application's stack much less than it costs libpam's. */
static void walk_include(struct walk *w, const char *target,
			 enum pamconf_stack asked, const char *from)
{
	struct paths {
		pwrap_path gpath, src, shown;
	} *p = malloc(sizeof(*p));
	struct pwrap_sig sig;
	int why = 0;

	if (p == NULL) {
		w->failed = true;
		return;
	}
	if (pwrap_rules()->include_max != 0 &&
	    w->depth >= pwrap_rules()->include_max) {
		/* libpam refuses to open a file this deep ("maximum level of
		 * inclusions reached") and fails the line: so does the copy,
		 * whatever it names */
		goto out;
	}
	if (!include_gpath(w, target, p->gpath)) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include target too long", from);
		w->failed = true;
		goto out;
	}
	switch (include_source(w, target, p->src, p->shown, &sig, &why)) {
	case PAMCONF_TARGET_FILE:
		walk_file(w, p->gpath, p->src, p->shown, &sig, asked);
		break;
	case PAMCONF_TARGET_EMPTY:
		/* libpam opens it and reads no line */
		if (!on_chain(w, gen_find(p->gpath)) &&
		    placeholder(w, p->gpath) != 0) {
			w->failed = true;
		}
		break;
	case PAMCONF_TARGET_BLOCKS:
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include target '%s' (%s) is "
			  "not a file: libpam would block or read it without "
			  "end; refusing the service", from, target, p->shown);
		w->failed = true;
		break;
	case PAMCONF_TARGET_NONE:
		if (w->failed) {
			break;	/* the cause is logged */
		}
		if (why == ENOENT) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include target '%s' not "
				  "found%s%s%s%s; the stack including it fails",
				  from, target,
				  target[0] == '/' ? "" : " in ",
				  target[0] == '/' ? "" : pwrap_rundir()->svc,
				  target[0] == '/' ? "" : " or ",
				  target[0] == '/' ? "" : w->src->dir);
#if defined(PWRAP_OPENPAM)
			if (strcmp(target, "other") == 0) {
				/* conf/other itself: the empty stand-in stays
				 * (never unlinked, see prepare_walk) */
				(void)placeholder(w, p->gpath);
				break;
			}
#endif
		} else {
			PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include target '%s' (%s) "
				  "cannot be opened: %s; the stack including "
				  "it fails", from, target, p->shown,
				  strerror(why));
		}
		if (!on_chain(w, gen_find(p->gpath))) {
			gen_drop(p->gpath);
			unlink(p->gpath);
		}
		break;
	}
out:
	free(p);
}

/* Writes a generated file; conf/.inc/ is made when the first included file
 * needs it (most setups include nothing). */
static int write_gen(const struct walk *w, const char *gpath, const char *buf,
		     size_t len, bool fresh)
{
	pwrap_path inc;

	if (pwrap_write_file(gpath, buf, len, fresh) == 0) {
		return 0;
	}
	if (errno != ENOENT || INCLUDE_BY_NAME ||
	    !pwrap_pjoin(inc, w->conf, ".inc") ||
	    strncmp(gpath, inc, strlen(inc)) != 0 ||
	    (mkdir(inc, 0755) != 0 && errno != EEXIST) ||
	    chmod(inc, 0755) != 0) {
		return -1;
	}
	return pwrap_write_file(gpath, buf, len, fresh);
}

/* Rewrites src into g->e.name (`fresh`: g is new, so is the file);
 * replaces g's source, signature and includes. */
static int regenerate(struct walk *w, struct pwrap_gen *g, const char *src,
		      const char *shown, const struct pwrap_sig *sig,
		      bool fresh)
{
	struct pamconf_ops ops = {
		.include_target = cb_include,
		.module_path = cb_module,
		.ctx = w,
		.bad_include = cb_bad_include,
		.module_line = w->traced ? cb_trace : NULL,
		.unfit = w->traced ? cb_unfit : NULL,
	};
	char *in = NULL;
	char *out = NULL;
	char *nsrc = NULL;
	char *nshown = NULL;
	struct pwrap_inc *incs = NULL;
	size_t n_incs = 0;
	size_t len = 0, out_len = 0;
	int rc = -1;

	if (pwrap_read_file(src, &in, &len) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot read %s: %s", shown,
			  strerror(errno));
		goto out;
	}
	w->gpath = g->e.name;
	if (w->traced) {
		pwrap_trace_forget_file(g->e.name);
	}
	rc = pwrap_rewrite(pwrap_rules(), in, len, shown, &ops, &out, &out_len);
	/* the include targets the callbacks collected are ours now */
	incs = w->incs;
	n_incs = w->n_incs;
	w->incs = NULL;
	w->n_incs = 0;
	if (rc != 0 || w->failed || (nsrc = strdup(src)) == NULL ||
	    (nshown = strdup(shown)) == NULL) {
		w->failed = true;
		rc = -1;
		goto out;
	}
	if (w->top && !INCLUDE_BY_NAME && out_len > 0 &&
	    out[out_len - 1] == '\\') {
		/* libpam gives up on the service (pam_start: PAM_ABORT), and
		 * leaks doing so; included files and "other" stay broken in
		 * the copy, where libpam fails them as it would the original */
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: the file ends in a continued "
			  "line, or a continued line overflows libpam's "
			  "1024-byte buffer; libpam refuses it", shown);
		w->failed = true;
		rc = -1;
		goto out;
	}
	if (write_gen(w, g->e.name, out, out_len, fresh) != 0) {
		/* no space: pwrap_prepare moves to the next base */
		PWRAP_LOG(pwrap_rundir_no_space(errno) ? PWRAP_LOG_DEBUG
						       : PWRAP_LOG_ERROR,
			  "cannot write %s: %s", g->e.name, strerror(errno));
		w->suspect = true;
		rc = -1;
		goto out;
	}
	incs_free(g->incs, g->n_incs);
	free(g->src);
	free(g->shown);
	g->incs = incs;
	g->n_incs = n_incs;
	g->src = nsrc;
	g->shown = nshown;
	g->sig = *sig;
	g->traced = w->traced;
	incs = NULL;
	n_incs = 0;
	nsrc = NULL;
	nshown = NULL;
	PWRAP_LOG(PWRAP_LOG_TRACE, "rewrote %s into %s", g->src, g->e.name);
	rc = 0;
out:
	incs_free(incs, n_incs);
	free(nsrc);
	free(nshown);
	free(in);
	free(out);
	return rc;
}

/*
 * Brings gpath up to date from src unless the cached copy is current, then
 * follows the include lines libpam reads when it reads the file for asked
 * (a file included by an "auth" line is read for auth only).
 */
static int walk_file(struct walk *w, const char *gpath, const char *src,
		     const char *shown, const struct pwrap_sig *sig,
		     enum pamconf_stack asked)
{
	struct pwrap_gen *g = gen_find(gpath);
	bool fresh = g == NULL;
	unsigned bit = 1u << asked;
	size_t i;

	if (g != NULL && g->walk != w->id) {
		g->walk = w->id;	/* marks of an earlier walk */
		g->seen = 0;
		g->open = 0;
	}
	/* Back at a file read for the same stack, libpam goes round for
	 * ever.  Back at one read for every stack (ANY), too: after leaving
	 * ANY, every file on the way was read for the one stack asked now,
	 * whose lines led here, so libpam follows them again.  (From 1.6 it
	 * stops at its include limit, which walk_include() keeps to: the
	 * file is up to date already.) */
	if (g != NULL && (g->open & (bit | 1u << PAMCONF_STACK_ANY)) != 0 &&
	    pwrap_rules()->include_max != 0) {
		return 0;
	}
	if (g != NULL && (g->open & (bit | 1u << PAMCONF_STACK_ANY)) != 0) {
		for (i = 0; i < w->depth && w->chain[i] != g; i++) {
		}
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include cycle (it includes "
			  "itself through %zu file(s)); refusing it, libpam "
			  "would crash", shown, w->depth - i - 1);
		w->cycle = true;
		return -1;
	}
	if (g != NULL && (g->seen & bit) != 0) {
		return 0;	/* already brought up to date */
	}
	if (w->depth == PWRAP_MAX_INCLUDE_DEPTH) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: includes nested deeper than "
			  "%d levels; refusing them, libpam would run out of "
			  "stack", shown, PWRAP_MAX_INCLUDE_DEPTH);
		w->cycle = true;
		return -1;
	}
	if (w->depth == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 16;
		struct pwrap_gen **nc = realloc(w->chain, ncap * sizeof(*nc));

		if (nc == NULL) {
			w->failed = true;
			return -1;
		}
		w->chain = nc;
		w->cap = ncap;
	}
	if (g == NULL) {
		if ((g = gen_new(gpath)) == NULL) {
			return -1;
		}
		g->walk = w->id;
	}
	if ((strcmp(g->src, src) != 0 || !pwrap_sig_eq(&g->sig, sig) ||
	     g->traced != w->traced) &&
	    regenerate(w, g, src, shown, sig, fresh) != 0) {
		gen_drop(gpath);
		return -1;
	}
	g->seen |= bit;
	g->open |= bit;
	if (w->traced) {
		pwrap_trace_walked(g->e.name, asked);
	}
	w->chain[w->depth++] = g;
	w->top = false;
	for (i = 0; i < g->n_incs; i++) {
		const struct pwrap_inc *in = &g->incs[i];

		if (!pamconf_stack_reads(in->stack, asked)) {
			continue;	/* libpam skips the line */
		}
		if (in->bad) {
			pwrap_log_bad_include(in->why, in->target, g->shown,
					      in->line);
			if (in->why == PAMCONF_INCLUDE_TOO_LONG) {
				(void)pwrap_trace_unfit(g->shown, in->line);
			}
			w->failed = true;
			continue;
		}
		walk_include(w, in->target,
			     pamconf_stack_included(in->stack, asked), g->shown);
	}
	w->depth--;
	g->open &= ~bit;
	return 0;
}

/* Puts an empty file at gpath (once), recorded with an empty source. */
static int placeholder(const struct walk *w, const char *gpath)
{
	static const char text[] = "# not in the service directory\n";
	struct pwrap_gen *g = gen_find(gpath);
	bool fresh = g == NULL;

	if (g != NULL && g->src[0] == '\0' && g->n_incs == 0 &&
	    g->sig.ino == 0) {
		return 0;
	}
	gen_drop(gpath);
	g = gen_new(gpath);
	if (g == NULL) {
		return -1;
	}
	if (write_gen(w, gpath, text, sizeof(text) - 1, fresh) != 0) {
		PWRAP_LOG(pwrap_rundir_no_space(errno) ? PWRAP_LOG_DEBUG
						       : PWRAP_LOG_ERROR,
			  "cannot write %s: %s", gpath, strerror(errno));
		gen_drop(gpath);
		return -1;
	}
	return 0;
}

/*
 * Brings conf/<name> up to date; returns 1 if present, 0 if not, -1 error.
 * With `empty_if_missing`, a missing source gives an empty file: Linux-PAM
 * always reads "other" too and logs an error when it is missing, and
 * replacing (not unlinking) keeps concurrent pam_start()s from seeing a gap.
 * (OpenPAM fails pam_start when a facility the service lacks has no
 * "other" to fall back to; with the empty one the facility fails when it
 * is called, as with Linux-PAM: a documented difference.)
 */
static int walk_service(struct walk *w, const char *name, bool empty_if_missing)
{
	struct pwrap_sig sig;
	pwrap_path gpath, src, shown;

	if (!pwrap_pjoin(gpath, w->conf, name)) {
		return -1;
	}
	/* the requested service's file (not "other") is refused when libpam
	 * would give up on it */
	w->top = !empty_if_missing;
	if (!pwrap_services_source(w->src, name, src, shown, &sig,
				    &w->suspect, &w->failed)) {
		if (w->failed) {
			return -1;	/* the cause is logged */
		}
		if (empty_if_missing) {
			return placeholder(w, gpath) == 0 ? 0 : -1;
		}
		gen_drop(gpath);
		unlink(gpath);
		return 0;
	}
	/* libpam reads a service's file and "other" for every stack */
	return walk_file(w, gpath, src, shown, &sig, PAMCONF_STACK_ANY) == 0 ?
		       1 : -1;
}


/* One pass over the service and "other"; returns a PAM code. */
static int prepare_walk(struct walk *w, const char *name)
{
	int found = pwrap_name_is_service(name) ? walk_service(w, name, false)
						: 0;

	if (found >= 0 && strcmp(name, "other") != 0) {
		/* "other" is never unlinked (an empty file stands in for a
		 * missing one): another thread's libpam may be reading it. */
		int other = walk_service(w, "other", true);

		if (found == 0) {
			found = other;
		} else if (other < 0) {
			found = -1;
		}
	}
	if (found < 0 || w->failed || w->cycle) {
		return PAM_ABORT;
	}
	return found == 0 ? PAM_SERVICE_ERR : PAM_SUCCESS;
}

static void walk_reset(struct walk *w, const struct pwrap_source *src)
{
	static unsigned long walks;

	incs_free(w->incs, w->n_incs);
	free(w->chain);
	memset(w, 0, sizeof(*w));
	w->src = src;
	w->conf = pwrap_rundir()->conf;
	w->id = ++walks;
	w->traced = src != NULL ? pwrap_trace_mode() : 0;
	if (w->traced) {
		pwrap_trace_walk_begin();
	}
}


int pwrap_walk_update(const struct pwrap_source *src, const char *name,
		      bool *suspect)
{
	struct walk w = { 0 };
	int rc;

	walk_reset(&w, src);
	rc = prepare_walk(&w, name);
	*suspect = w.suspect;
	walk_reset(&w, NULL);
	return rc;
}

void pwrap_walk_forget(void)
{
	gens_free();
}
