/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, Linux-PAM: the service directory a replay runs on.
 * Every file the service reads is copied with the wrapper's own rewriter
 * (src/wrapper/pwrap_conf.c, so libpam reads each copy exactly as it reads
 * the original but for the tokens replaced): each module becomes the
 * stand-in, told which line it stands for ("<dir>/s pwrap_xp=<site>"), or,
 * where the module cannot be loaded, a path that does not exist; each
 * include target becomes the copy of the file it names (or a name that
 * does not exist, where the original is missing).  The copies are then
 * read back with the explorer's own reader, which must find the same
 * stacks, and no line may name a module outside the directory: a line the
 * rewriter had to leave as written (too long once rewritten) would load a
 * real module, so the replay is refused instead.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "explore_read.h"
/* the wrapper's header declares a function of the same name as the tools'
 * pwrap_write_file, which is the one used here */
#define pwrap_write_file pwrap_wrapper_write_file
#include "pwrap_private.h"
#undef pwrap_write_file
#include "pwrap_tool.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A line left as written by the rewriter (the stand-in's path would not
 * fit libpam's line buffer): replaying would load the real module. */
static const char TOO_LONG[] = "a line is too long to name the stand-in "
			       "module in it (libpam's 1024-byte line "
			       "buffer): replaying would load the real module";

struct gen {
	const struct xp_conf *c;
	const char *dir;
	int file;		/* the file being rewritten */
	bool *standin;		/* per site */
	bool *inc_ok;		/* per file: it is copied */
};

/* Where file f's copy is, relative to the directory. */
static char *copy_name(const struct xp_conf *c, int f)
{
	char *n = NULL;

	if (f == c->service_file)
		return strdup(c->service);
	if (f == c->other_file)
		return strdup("other");
	if (asprintf(&n, "xp%d", f) < 0)
		return NULL;
	return n;
}

static char *cb_module(void *ctx, const char *module, bool quiet,
		       const char *src, unsigned line)
{
	struct gen *g = ctx;
	char *rep = NULL, *base;

	(void)quiet;	/* every module becomes the stand-in */
	(void)src;
	for (size_t i = 0; i < g->c->nsites; i++) {
		if (g->c->sites[i].file == g->file && g->c->sites[i].line == line &&
		    g->standin[i]) {
			if (asprintf(&rep, "%s/s pwrap_xp=%zu", g->dir, i) < 0)
				rep = NULL;
			return rep;
		}
	}
	/* a module libpam cannot load, or a line libpam never reads */
	base = xp_short_name(module);
	if (base != NULL && asprintf(&rep, "%s/absent/%s.so", g->dir, base) < 0)
		rep = NULL;
	free(base);
	return rep;
}

static char *cb_include(void *ctx, const char *target, enum pamconf_stack stack,
			const char *src, unsigned line)
{
	struct gen *g = ctx;
	const char *base = g->c->dir != NULL ? g->c->dir : xp_system_dir();
	char *path = NULL, *rep = NULL;

	(void)stack;
	(void)src;
	(void)line;
	if (target[0] == '/')
		path = strdup(target);
	else if (asprintf(&path, "%s/%s", base, target) < 0)
		path = NULL;
	if (path == NULL)
		return NULL;
	for (size_t f = 0; f < g->c->nfiles && rep == NULL; f++)
		if (g->inc_ok[f] && strcmp(g->c->files[f].path, path) == 0)
			rep = copy_name(g->c, (int)f);
	if (rep == NULL && asprintf(&rep, "absent-%d", g->file) < 0)
		rep = NULL;
	free(path);
	return rep;
}

static int keep_bad_include(void *ctx, enum pamconf_stack stack,
			    enum pamconf_bad_include why, const char *target,
			    const char *src, unsigned line)
{
	(void)ctx;
	(void)stack;
	(void)why;
	(void)target;
	(void)src;
	(void)line;
	return 0;
}

/* Marks the sites of a stack's lines that call the stand-in. */
static void mark(const struct xp_stack *s, bool *standin)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].standin)
			standin[s->v[i].site] = true;
}

/* Whether two readings give the same stacks and no module outside dir. */
static const char *compare(const struct xp_conf *a, const struct xp_conf *b,
			   const char *dir)
{
	size_t dl = strlen(dir);

	for (int t = 0; t < XP_NTYPES; t++) {
		for (int k = 0; k < 2; k++) {
			const struct xp_stack *x = k ? &a->other[t] : &a->conf[t];
			const struct xp_stack *y = k ? &b->other[t] : &b->conf[t];

			if (x->n != y->n)
				return "the copy has other lines";
			for (size_t i = 0; i < x->n; i++) {
				const struct xp_line *l = &x->v[i], *m = &y->v[i];

				if (m->module != NULL && m->kind != XP_SUBSTACK &&
				    (strncmp(m->module, dir, dl) != 0 ||
				     m->module[dl] != '/'))
					return TOO_LONG;
				/* a module without the function: the
				 * stand-in has it, the plan says what it
				 * returns (PAM_MODULE_UNKNOWN) */
				enum xp_kind lk = l->kind == XP_FIXED &&
					l->standin ? XP_CALL : l->kind;

				if (lk != m->kind || l->level != m->level ||
				    l->standin != m->standin ||
				    memcmp(l->act, m->act, sizeof(l->act)) != 0)
					return "the copy reads differently";
			}
		}
	}
	return NULL;
}

int xp_gen_replay(const struct xp_conf *c, const char *dir,
		  const char *standin, char **err)
{
	struct gen g = { .c = c, .dir = dir };
	struct pamconf_ops ops = {
		.include_target = cb_include,
		.module_path = cb_module,
		.ctx = &g,
		.bad_include = keep_bad_include,
	};
	struct xp_conf back;
	char *s = NULL;
	const char *why = NULL;
	int rc = -1;

	*err = NULL;
	g.standin = calloc(c->nsites + 1, sizeof(*g.standin));
	g.inc_ok = calloc(c->nfiles + 1, sizeof(*g.inc_ok));
	if (g.standin == NULL || g.inc_ok == NULL ||
	    asprintf(&s, "%s/s", dir) < 0)
		goto oom;
	if (symlink(standin, s) != 0) {
		if (asprintf(err, "cannot link %s to %s", s, standin) < 0)
			*err = NULL;
		goto out;
	}
	for (int t = 0; t < XP_NTYPES; t++) {
		mark(&c->conf[t], g.standin);
		mark(&c->other[t], g.standin);
	}
	for (size_t f = 0; f < c->nfiles; f++)
		g.inc_ok[f] = xp_readable(c->files[f].path);
	for (size_t f = 0; f < c->nfiles; f++) {
		struct xp_text in;
		char *out = NULL, *name = NULL;
		int w;

		if (!g.inc_ok[f])
			continue;
		g.file = (int)f;
		if (xp_text_load(&in, c->files[f].path) != 0) {
			if (asprintf(err, "%s: cannot read it again",
				     c->files[f].show) < 0)
				*err = NULL;
			goto out;
		}
		w = pwrap_rewrite(xp_rules(), in.buf, in.len, c->files[f].show,
				  &ops, &out, NULL);
		xp_text_free(&in);
		if (w != 0 && c->refused != NULL) {
			/* the wrapper refuses it too (libpam would hang or
			 * crash on it): nothing to replay */
			*err = strdup("the wrapper refuses a file of the "
				      "service (libpam would hang or crash)");
			rc = 1;
			goto out;
		}
		name = w == 0 ? copy_name(c, (int)f) : NULL;
		w = name != NULL ? pwrap_write_file(dir, name, out, NULL) : -1;
		free(out);
		free(name);
		if (w != 0) {
			if (asprintf(err, "%s: cannot write its copy for the "
				     "replay", c->files[f].show) < 0)
				*err = NULL;
			goto out;
		}
	}
	if (xp_read(&back, dir, c->service) != 0) {
		why = back.error;
	} else if ((back.refused == NULL) != (c->refused == NULL)) {
		why = "libpam would read the copy differently";
	} else {
		why = compare(c, &back, dir);
	}
	if (why == TOO_LONG) {
		*err = strdup(why);
		rc = 1;
	} else {
		if (why != NULL && asprintf(err, "cannot replay: %s", why) < 0)
			*err = NULL;
		rc = why != NULL ? -1 : 0;
	}
	xp_conf_free(&back);
	goto out;
oom:
	*err = strdup("out of memory");
out:
	free(s);
	free(g.standin);
	free(g.inc_ok);
	return rc;
}
