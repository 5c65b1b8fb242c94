/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, OpenPAM: a service read the way OpenPAM reads a policy
 * (openpam_configure.c) into one chain per facility, and its dispatch rule
 * (openpam_dispatch.c) as a step function.
 *
 * Reading: words as a shell splits them (blanks, '#' comments where a word
 * would start, backslash escapes and continuation lines, '...' and "..."),
 * "facility flag module [args]" or "facility include service".  Facility
 * and flag names are exact (required, requisite, sufficient, binding,
 * optional); an included service adds its lines of that facility.  Any
 * error (an unknown word, an include or module that cannot be loaded)
 * makes pam_start fail: it ends in xp_conf.refused.  A facility without
 * lines in the service takes "other"'s (libpam_wrapper gives an empty
 * "other" when the directory has none).
 *
 * Dispatch: whether a required (or binding) module failed, the code kept
 * (the first failure's, or the first required one's), whether a module
 * succeeded.  PAM_IGNORE is skipped; success of sufficient or binding ends
 * the chain unless something required failed (not in chauthtok's
 * PAM_PRELIM_CHECK pass); requisite failure ends it.  No success at all is
 * PAM_SYSTEM_ERR ("all modules were unsuccessful").
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_names.h"
#include "explore_openpam.h"
#include "explore_read.h"

#include <ctype.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ANY (-1)
#define LIB_MAJ 2	/* OpenPAM's module version suffix */

static const char *const flags[] = { [XP_F_REQUIRED] = "required",
				     [XP_F_REQUISITE] = "requisite",
				     [XP_F_SUFFICIENT] = "sufficient",
				     [XP_F_BINDING] = "binding",
				     [XP_F_OPTIONAL] = "optional" };

const char *xp_code_word(int code)
{
	static char words[64][32];
	const char *n = xp_code_name(code);
	char *w;

	if (code < 0 || code >= 64 || strncmp(n, "PAM_", 4) != 0)
		return "?";
	w = words[code];
	if (w[0] == '\0') {
		snprintf(w, sizeof(words[0]), "%s", n + 4);
		for (char *p = w; *p != '\0'; p++)
			*p = (char)tolower((unsigned char)*p);
	}
	return w;
}

const char *xp_system_dir(void)
{
	return "/etc/pam.d";
}

/* ---- words, as openpam_readword() splits them ---------------------------- */

static bool ws(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\r' || ch == '\n';
}

struct rd_text {
	const char *p, *end;
	unsigned line;
};

static int next_ch(struct rd_text *t)
{
	return t->p < t->end ? (unsigned char)*t->p++ : EOF;
}

/* One word into *w (malloc'd); 1, 0 at the end of the line (the '\n' is
 * left), -1 an unterminated quote or escape at the end of the file. */
static int word(struct rd_text *t, char **w)
{
	int ch, escape = 0, quote = 0;
	size_t len = 0, cap = 16;
	char *b;

	*w = NULL;
	while ((ch = next_ch(t)) != EOF) {
		if (ch == '\n') {
			if (!escape)
				break;
			t->line++;
			escape = 0;
		} else if (escape) {
			break;
		} else if (ch == '#') {
			while ((ch = next_ch(t)) != EOF && ch != '\n')
				;
			break;
		} else if (ch == '\\') {
			escape = 1;
		} else if (!ws(ch)) {
			break;
		}
	}
	if (ch == EOF)
		return 0;
	t->p--;
	if (ch == '\n')
		return 0;
	if ((b = malloc(cap)) == NULL)
		return -2;
	while ((ch = next_ch(t)) != EOF && (!ws(ch) || quote || escape)) {
		int add[2], na = 0;

		if (ch == '\\' && !escape && quote != '\'') {
			escape = ch;
		} else if ((ch == '\'' || ch == '"') && !quote && !escape) {
			quote = ch;
		} else if (ch == quote && !escape) {
			quote = 0;
		} else if (ch == '\n' && escape) {
			escape = 0;
		} else {
			if (escape && quote && ch != '\\' && ch != quote)
				add[na++] = '\\';
			add[na++] = ch;
			escape = 0;
		}
		if (ch == '\n')
			t->line++;
		for (int i = 0; i < na; i++) {
			if (len + 2 > cap) {
				char *nb = realloc(b, cap *= 2);

				if (nb == NULL) {
					free(b);
					return -2;
				}
				b = nb;
			}
			b[len++] = (char)add[i];
		}
	}
	if (ch == EOF && (escape || quote)) {
		free(b);
		return -1;
	}
	if (ch != EOF)
		t->p--;
	b[len] = '\0';
	*w = b;
	return 1;
}

static void free_words(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* One line's words (*n of them; an empty line has none): 1, 0 at the end
 * of the file, -1 an unterminated quote or escape, -2 out of memory. */
static int line_words(struct rd_text *t, char ***v, size_t *n, unsigned *first)
{
	char *w;
	int r;

	*v = NULL;
	*n = 0;
	*first = t->line;
	while ((r = word(t, &w)) == 1) {
		char **nv = reallocarray(*v, *n + 2, sizeof(**v));

		if (nv == NULL) {
			free(w);
			r = -2;
			break;
		}
		if (*n == 0)
			*first = t->line;
		*v = nv;
		nv[(*n)++] = w;
		nv[*n] = NULL;
	}
	if (r < 0) {
		free_words(*v, *n);
		*v = NULL;
		return r;
	}
	r = next_ch(t);
	if (r == '\n')
		t->line++;
	return r == EOF && *n == 0 ? 0 : 1;
}

static bool pfcs(const char *s, bool slash)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' &&
		    *s != '-' && !(slash && *s == '/'))
			return false;
	return true;
}

/* ---- reading ---------------------------------------------------------------- */

struct rd {
	struct xp_conf *c;
	const char *base;
	int chain[64];
	int nchain;
	bool other;
};

/* What the replay's copy of each file needs (xp_conf.impl). */
static void raw_free(void *p)
{
	struct xp_openpam *o = p;

	if (o != NULL)
		free(o->v);
	free(o);
}

/* Records an entry of file f once: a module line (l) or an include of
 * file inc. */
static int add_raw(struct rd *r, int f, unsigned line, int fac,
		   const struct xp_line *l, int inc)
{
	struct xp_openpam *o = r->c->impl;
	struct xp_raw *v;

	if (o == NULL) {
		if ((o = calloc(1, sizeof(*o))) == NULL)
			return -1;
		r->c->impl = o;
		r->c->impl_free = raw_free;
	}
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].file == f && o->v[i].line == line)
			return 0;
	v = reallocarray(o->v, o->n + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	o->v = v;
	v[o->n++] = (struct xp_raw){ f, line, fac, l ? l->flag : -1,
				     l ? l->site : -1, l ? l->standin : false,
				     inc };
	return 0;
}

/* OpenPAM's module lookup: a path as is, else name(.so).2 then name(.so)
 * in the system's module directory, else (the wrapper) ours. */
static int module_kind(struct xp_line *l, const char *fn)
{
	const char *m = l->module;
	size_t n = strlen(m);
	bool so = n > 3 && strcmp(m + n - 3, ".so") == 0;
	const char *dirs[2] = { xp_sysmoddir, xp_moddir };

	if (strchr(m, '/') != NULL)
		return xp_module_kind(l, fn);
	for (int d = 0; d < 2; d++) {
		for (int ver = 1; ver >= 0 && dirs[d] != NULL; ver--) {
			char *p = NULL;
			int has;

			if (asprintf(&p, ver ? "%s/%s%s.%d" : "%s/%s%s", dirs[d], m,
				     so ? "" : ".so", LIB_MAJ) < 0)
				return -1;
			has = xp_module_has(p, fn);
			if (has >= 0) {
				free(l->module);
				l->module = p;
				return xp_module_kind(l, fn);
			}
			free(p);
		}
	}
	return xp_module_kind(l, fn);	/* missing: fixed, no stand-in */
}

static int add_line(struct rd *r, int type, const struct xp_line *l)
{
	struct xp_stack *s = r->other ? &r->c->other[type] : &r->c->conf[type];
	struct xp_line *v = reallocarray(s->v, s->n + 1, sizeof(*v));

	if (v == NULL)
		return -1;
	s->v = v;
	v[s->n++] = *l;
	return 0;
}

static int load_chain(struct rd *r, const char *service, int want, int from,
		      unsigned line);

/* One line of file f for facility want: 0, or -2 (refused / no memory). */
static int read_entry(struct rd *r, int f, unsigned lineno, char **w, size_t n,
		      int want)
{
	struct xp_line l = { .kind = XP_CALL, .file = f, .line = lineno };
	int fac = -1, flag = -1;

	for (int i = 0; i < XP_NTYPES && n > 0; i++)
		if (strcmp(w[0], pwrap_group_name(i)) == 0)
			fac = i;
	if (fac < 0) {
		xp_refuse(r->c, f, lineno, "missing or invalid facility: "
			  "pam_start fails");
		return -2;
	}
	if (want != ANY && fac != want)
		return 0;
	if (n > 1 && strcmp(w[1], "include") == 0) {
		if (n < 3 || !pfcs(w[2], false)) {
			xp_refuse(r->c, f, lineno, "missing or invalid service "
				  "name: pam_start fails");
			return -2;
		}
		if (n > 3) {
			xp_refuse(r->c, f, lineno, "garbage at end of line: "
				  "pam_start fails");
			return -2;
		}
		char *path = NULL;
		int inc;

		/* recorded first: the copy must include it even when the
		 * included file makes pam_start fail */
		if (asprintf(&path, "%s/%s", r->base, w[2]) < 0)
			return xp_oom(r->c);
		inc = xp_file_index(r->c, path, r->base);
		free(path);
		if (inc < 0 || add_raw(r, f, lineno, fac, NULL, inc) != 0)
			return xp_oom(r->c);
		return load_chain(r, w[2], fac, f, lineno) < 0 ? -2 : 0;
	}
	for (int i = 0; i < 5 && n > 1; i++)
		if (strcmp(w[1], flags[i]) == 0)
			flag = i;
	if (flag < 0) {
		xp_refuse(r->c, f, lineno, "missing or invalid control flag: "
			  "pam_start fails");
		return -2;
	}
	if (n < 3 || !pfcs(w[2], true)) {
		xp_refuse(r->c, f, lineno, "missing or invalid module name: "
			  "pam_start fails");
		return -2;
	}
	l.flag = flag;
	if ((l.module = strdup(w[2])) == NULL || (l.name = xp_short_name(w[2])) == NULL ||
	    module_kind(&l, pwrap_sm_name(pwrap_group_sm(fac))) != 0) {
		free(l.module);
		free(l.name);
		return xp_oom(r->c);
	}
	if (l.kind == XP_FIXED && !l.standin) {
		xp_refuse(r->c, f, lineno, "module %s cannot be loaded: "
			  "pam_start fails", w[2]);
		free(l.module);
		free(l.name);
		return -2;
	}
	if (l.kind == XP_FIXED) {	/* no function for this facility */
		l.fixed = PAM_SYMBOL_ERR;
		l.why = "the module has no function for this facility";
	}
	if (xp_add_site(r->c, &l) != 0 || add_line(r, fac, &l) != 0 ||
	    add_raw(r, f, lineno, fac, &l, -1) != 0) {
		free(l.module);
		free(l.name);
		return xp_oom(r->c);
	}
	return 0;
}

/* Reads service's file for want: its number of lines... as OpenPAM:
 * 0 read, 1 no such file, -1 refused or no memory. */
static int load_chain(struct rd *r, const char *service, int want, int from,
		      unsigned line)
{
	struct xp_text in;
	struct rd_text t;
	char *path = NULL, **w = NULL;
	size_t n;
	unsigned first;
	int f, rc = 0, lr;

	if (asprintf(&path, "%s/%s", r->base, service) < 0)
		return xp_oom(r->c) ? -1 : -1;
	if (!xp_readable(path)) {
		free(path);
		if (from >= 0)
			xp_refuse(r->c, from, line, "included service %s not "
				  "found: pam_start fails", service);
		return from >= 0 ? -1 : 1;
	}
	f = xp_file_index(r->c, path, r->base);
	free(path);
	if (f < 0)
		return xp_oom(r->c) ? -1 : -1;
	if (from < 0 && strcmp(service, "other") == 0)
		r->c->other_file = f;
	for (int i = 0; i < r->nchain; i++) {
		if (r->chain[i] == f) {
			xp_refuse(r->c, from, line, "an include cycle through "
				  "%s (OpenPAM recurses until it fails; the "
				  "wrapper refuses it)", r->c->files[f].show);
			return -1;
		}
	}
	if (r->nchain >= 64 || xp_text_load(&in, r->c->files[f].path) != 0) {
		xp_refuse(r->c, f, 0, "cannot be read: pam_start fails");
		return -1;
	}
	r->chain[r->nchain++] = f;
	t = (struct rd_text){ in.buf, in.buf + in.len, 1 };
	while (rc == 0 && (lr = line_words(&t, &w, &n, &first)) == 1) {
		if (n > 0)
			rc = read_entry(r, f, first, w, n, want);
		free_words(w, n);
	}
	if (rc == 0 && lr == -1) {
		xp_refuse(r->c, f, t.line, "unterminated quote or escape at "
			  "the end of the file: pam_start fails");
		rc = -1;
	} else if (rc == 0 && lr == -2) {
		rc = xp_oom(r->c);
	}
	r->nchain--;
	xp_text_free(&in);
	return rc < 0 ? -1 : 0;
}

int xp_read(struct xp_conf *c, const char *dir, const char *service)
{
	struct rd r = { .c = c, .base = dir != NULL ? dir : xp_system_dir() };
	int rc, have = 0;

	memset(c, 0, sizeof(*c));
	c->service_file = c->other_file = -1;
	c->service = strdup(service);
	c->dir = dir != NULL ? strdup(dir) : NULL;
	if (c->service == NULL || (dir != NULL && c->dir == NULL)) {
		xp_oom(c);
		return -1;
	}
	if (!pfcs(service, false)) {
		xp_refuse(c, -1, 0, "invalid service name %s: pam_start fails",
			  service);
		return 0;
	}
	rc = load_chain(&r, service, ANY, -1, 0);
	if (rc < 0)
		return c->error != NULL ? -1 : 0;
	if (rc == 0) {
		c->service_file = 0;
		have = 1;
	}
	r.other = true;
	for (int t = 0; t < XP_NTYPES; t++) {
		if (c->conf[t].n > 0)
			continue;
		rc = load_chain(&r, "other", t, -1, 0);
		if (rc < 0)
			return c->error != NULL ? -1 : 0;
		if (rc == 0)
			have = 1;
	}
	if (!have)
		xp_refuse(c, -1, 0, "neither %s/%s nor %s/other exists: "
			  "pam_start fails", r.base, service, r.base);
	return c->error != NULL ? -1 : 0;
}

/* ---- dispatch ---------------------------------------------------------------- */

static int finish(const struct xp_graph *g, int pass, const struct xp_state *s,
		  struct xp_state *next)
{
	int err = s->status;

	if (!s->imp && err != PAM_NEW_AUTHTOK_REQD)
		err = PAM_SUCCESS;
	if (err == PAM_SUCCESS && !s->flag)
		err = PAM_SYSTEM_ERR;	/* "all modules were unsuccessful" */
	if (err == PAM_SUCCESS && pass + 1 < g->npasses)
		return xp_begin(g, pass + 1, next);
	return err;
}

int xp_begin(const struct xp_graph *g, int pass, struct xp_state *s)
{
	struct xp_state st;

	memset(&st, 0, sizeof(st));
	st.status = PAM_SUCCESS;
	if (g->perpass == 0)
		return finish(g, pass, &st, s);
	*s = st;
	s->pos = (int)((size_t)pass * g->perpass);
	return -1;
}

int xp_step(const struct xp_graph *g, const struct xp_state *s, int code,
	    struct xp_state *next)
{
	const struct xp_line *l = g->seq[s->pos].l;
	int pass = g->seq[s->pos].pass;
	bool prelim = g->npasses == 2 && pass == 0;
	struct xp_state st = *s;
	bool end = false;

	if (code == PAM_SUCCESS) {
		st.flag = 1;
		end = (l->flag == XP_F_SUFFICIENT || l->flag == XP_F_BINDING) &&
		      !st.imp && !prelim;
	} else if (code != PAM_IGNORE) {
		if (st.status == PAM_SUCCESS)
			st.status = (unsigned char)code;
		if ((l->flag == XP_F_REQUIRED || l->flag == XP_F_BINDING) &&
		    !st.imp) {
			st.imp = 1;
			st.status = (unsigned char)code;
		}
		if (l->flag == XP_F_REQUISITE) {
			st.imp = 1;
			end = true;
		}
	}
	if (end || (size_t)s->pos + 1 >= (size_t)(pass + 1) * g->perpass)
		return finish(g, pass, &st, next);
	*next = st;
	next->pos = s->pos + 1;
	return -1;
}

void xp_state_text(const struct xp_state *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", s->imp ? "failed " : "",
		 s->status != PAM_SUCCESS || s->imp ? xp_code_name(s->status) : "",
		 s->flag ? (s->imp || s->status != PAM_SUCCESS ? ", a success"
							       : "a success")
			 : (s->imp || s->status != PAM_SUCCESS ? "" : "nothing yet"));
}
