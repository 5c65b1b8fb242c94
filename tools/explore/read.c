/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, stage 1: the service as the linked libpam reads it.
 * The reading is src/pamconf's (pamconf_service_read(), with the rules of
 * the libpam pamtest runs with, told at run time); this file makes its
 * entries into stacks of lines: a module call (whether its module can be
 * loaded here, and whether it has the group's function, is read from its
 * file: elf.c), a line that fails without a call, a substack's mark; each
 * (file, line) once in c->sites.  The dispatch rule that goes with it is
 * the library's (xp_linux or xp_openpam).
 */
#define _GNU_SOURCE
#include "explore.h"

#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>

int xp_site_at(const struct xp_conf *c, int file, unsigned line)
{
	const struct xp_file *f = file >= 0 && (size_t)file < c->nfiles
					  ? &c->files[file] : NULL;

	return f != NULL && f->site_at != NULL && line < f->nsite_at
		       ? f->site_at[line] : -1;
}

/* The site of (file, line) of an entry, added when new: its index, or -1
 * (no memory).  Each file has an index by physical line, made when
 * first asked (lines of a file are at most its last line's number). */
static int site_of(struct xp_conf *c, int file, unsigned line)
{
	struct xp_file *f = &c->files[file];
	const struct pamconf_file *pf = &c->s.files[file].f;
	struct xp_site *v;

	if (f->site_at == NULL) {
		f->nsite_at = (pf->n > 0 ? pf->v[pf->n - 1].line : 0) + 1;
		f->site_at = malloc(f->nsite_at * sizeof(*f->site_at));
		if (f->site_at == NULL) {
			return -1;
		}
		for (size_t i = 0; i < f->nsite_at; i++) {
			f->site_at[i] = -1;
		}
	}
	if (line >= f->nsite_at) {
		return -1;	/* not a line of the file: cannot be */
	}
	if (f->site_at[line] >= 0) {
		return f->site_at[line];
	}
	if (c->nsites == c->capsites) {
		size_t cap = c->capsites ? c->capsites * 2 : 64;

		v = reallocarray(c->sites, cap, sizeof(*v));
		if (v == NULL) {
			return -1;
		}
		c->sites = v;
		c->capsites = cap;
	}
	c->sites[c->nsites] = (struct xp_site){ file, line };
	f->site_at[line] = (int)c->nsites;
	return (int)c->nsites++;
}

static int add_site(struct xp_conf *c, struct xp_line *l)
{
	l->site = site_of(c, l->file, l->line);
	return l->site >= 0 ? 0 : -1;
}

/* The module file at path as dlopen() would find it (inspected once). */
static const struct xp_modfile *modfile(struct xp_conf *c, const char *path)
{
	struct xp_modfile *v, *m;

	for (size_t i = 0; i < c->nmods; i++) {
		if (strcmp(c->mods[i].path, path) == 0) {
			return &c->mods[i];
		}
	}
	v = reallocarray(c->mods, c->nmods + 1, sizeof(*v));
	if (v == NULL) {
		return NULL;
	}
	c->mods = v;
	m = &v[c->nmods];
	memset(m, 0, sizeof(*m));
	if ((m->path = strdup(path)) == NULL) {
		return NULL;
	}
	m->rc = xp_module_inspect(path, &m->fns, &m->why);
	if (m->rc != 0 && m->why == NULL) {
		free(m->path);
		return NULL;
	}
	c->nmods++;
	return m;
}

/* Whether the module of a call can be loaded and has the function. */
static int call_kind(struct xp_conf *c, const struct pamconf_entry *e,
		     enum xp_type t, struct xp_line *l)
{
	const struct xp_modfile *m = NULL;

	if (strstr(e->module, "$ISA") != NULL) {
		/* libpam tries the path with $ISA replaced by a directory
		 * of its build, which it does not tell */
		return asprintf(&c->error, "%s:%u: module %s: libpam replaces "
				"$ISA with a directory of its build, which "
				"cannot be told", c->files[e->file].show,
				e->l->line, e->module) < 0 ? -1 : 1;
	}
	if (e->path != NULL && (m = modfile(c, e->path)) == NULL) {
		return -1;
	}
	l->absent = m == NULL || m->rc != 0;
	l->absent_why = m != NULL ? m->why : NULL;
	l->no_fn = !l->absent &&
		   !(m->fns & (1u << pwrap_group_sm((enum pwrap_group)t)));
	return 0;
}

/* Entry e of the stack of type t as a line. */
static int make_line(struct xp_conf *c, const struct pamconf_entry *e,
		     enum xp_type t, struct xp_line *l)
{
	const struct pamconf_line *pl = e->l;
	bool inc = pl->kind == PAMCONF_INCLUDE || pl->kind == PAMCONF_SUBSTACK ||
		   pl->kind == PAMCONF_AT_INCLUDE;

	memset(l, 0, sizeof(*l));
	l->kind = e->does == PAMCONF_CALLS  ? XP_CALL
		  : e->does == PAMCONF_FAILS ? XP_FIXED
					     : XP_SUBSTACK;
	l->file = e->file;
	l->line = pl->line;
	l->level = (int)e->level;
	memcpy(l->act, e->act, sizeof(l->act));
	l->flag = e->flag;
	l->module = e->module;
	l->control = pl->control >= 0 ? pl->tok[pl->control].text : NULL;
	l->seq = e->seq;
	l->fixed = e->faulty ? PAM_MODULE_UNKNOWN : PAM_PERM_DENIED;
	l->why = e->why;
	l->name = l->kind == XP_FIXED && inc ? strdup("(include failed)")
		  : pl->target >= 0	     ? xp_short_name(pl->tok[pl->target].text)
					     : strdup("?");
	if (l->name == NULL || add_site(c, l) != 0) {
		return -1;
	}
	return l->kind == XP_CALL ? call_kind(c, e, t, l) : 0;
}

static int make_stack(struct xp_conf *c, const struct pamconf_entries *in,
		      enum xp_type t, struct xp_stack *out)
{
	out->v = calloc(in->n + 1, sizeof(*out->v));
	if (out->v == NULL) {
		return -1;
	}
	for (size_t i = 0; i < in->n; i++) {
		int rc = make_line(c, &in->v[i], t, &out->v[out->n]);

		if (rc != 0) {
			free(out->v[out->n].name);
			return rc;
		}
		out->n++;
	}
	return 0;
}

/* The lines libpam leaves unread, each with its site, by group. */
static int make_unread(struct xp_conf *c)
{
	for (size_t i = 0; i < c->s.nunread; i++) {
		const struct pamconf_unread *u = &c->s.unread[i];
		struct xp_unreads *to = u->other ? &c->unread_other[u->group]
						 : &c->unread[u->group];
		int site = site_of(c, u->file, u->l->line);

		if (site < 0) {
			return -1;
		}
		if (to->n == to->cap) {
			size_t cap = to->cap * 2 + 8;
			struct xp_unread *v = reallocarray(to->v, cap,
							   sizeof(*v));

			if (v == NULL) {
				return -1;
			}
			to->v = v;
			to->cap = cap;
		}
		to->v[to->n++] = (struct xp_unread){ site, u->l, u->at_file,
						     u->at_line, u->why };
	}
	return 0;
}

int xp_read(struct xp_conf *c, const char *dir, const char *service,
	    const struct xp_opts *o)
{
	const char *dirs[3] = { o->sysmoddir != NULL ? o->sysmoddir
						     : "/nonexistent",
				o->moddir, NULL };
	struct pamconf_walk_ops ops = { .moddirs = dirs };
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->refused_file = -1;
	pamconf_rules_linked(&c->rules);
	c->impl = c->rules.impl == PAMCONF_OPENPAM ? &xp_openpam : &xp_linux;
	c->dir = strdup(dir);
	if (c->dir == NULL) {
		goto oom;
	}
	if (pamconf_service_read(&c->rules, dir, service, &ops, &c->s) != 0) {
		c->error = strdup(c->s.error);
		return -1;
	}
	if ((c->service = strdup(c->s.name)) == NULL ||
	    (c->asked = strdup(service)) == NULL) {
		goto oom;
	}
	c->files = calloc(c->s.nfiles + 1, sizeof(*c->files));
	if (c->files == NULL || (c->s.refused != NULL &&
				 (c->refused = strdup(c->s.refused)) == NULL)) {
		goto oom;
	}
	c->refused_file = c->s.refused_file;
	for (; c->nfiles < c->s.nfiles; c->nfiles++) {
		c->files[c->nfiles].path = c->s.files[c->nfiles].path;
		c->files[c->nfiles].show = c->s.files[c->nfiles].show;
	}
	for (int t = 0; t < XP_NTYPES && rc == 0; t++) {
		rc = make_stack(c, &c->s.conf[t], t, &c->conf[t]);
		if (rc == 0) {
			rc = make_stack(c, &c->s.other[t], t, &c->other[t]);
		}
	}
	if (rc == 0) {
		rc = make_unread(c);
	}
	if (rc == 0) {
		return 0;
	}
	if (rc > 0) {
		return -1;	/* c->error says why */
	}
oom:
	free(c->error);
	c->error = strdup("out of memory");
	return -1;
}

const struct xp_stack *xp_stack_of(const struct xp_conf *c, enum xp_type t)
{
	return c->conf[t].n > 0 ? &c->conf[t] : &c->other[t];
}

const struct xp_unreads *xp_unread_of(const struct xp_conf *c, enum xp_type t)
{
	return c->conf[t].n > 0 ? &c->unread[t] : &c->unread_other[t];
}

static void stack_free(struct xp_stack *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
	}
	free(s->v);
}

void xp_conf_free(struct xp_conf *c)
{
	for (int t = 0; t < XP_NTYPES; t++) {
		stack_free(&c->conf[t]);
		stack_free(&c->other[t]);
		free(c->unread[t].v);
		free(c->unread_other[t].v);
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		free(c->files[i].site_at);
	}
	pamconf_service_free(&c->s);
	free(c->files);
	free(c->sites);
	free(c->service);
	free(c->asked);
	free(c->dir);
	free(c->refused);
	free(c->error);
	free(c->absent);
	for (size_t i = 0; i < c->nmods; i++) {
		free(c->mods[i].path);
		free(c->mods[i].why);
	}
	free(c->mods);
	memset(c, 0, sizeof(*c));
}
