/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest(1) scenarios: the `explore` block (syntax in scen.h and
 * pamtest-scenario(5)).  The block's lines, lexed by parse.c as every line
 * of the file (quotes work), are parsed into a struct
 * xp_scen hung on a STEP_EXPLORE step, which owns it; running it explores
 * the service in the scenario's service directory (PAM_WRAPPER_SERVICE_DIR
 * as the runner set it), replays it on libpam, and checks each `expect`
 * line: a failed one reports the finding, its line and its path.  With
 * `against DIR` the block compares DIR's version of the service with the
 * scenario's (diff.c): `expect no new success` holds when no combination
 * of outcomes succeeds that did not, the other expectations are the new
 * version's.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_tool.h"
#include "scen.h"
#include "scenario.h"

#include <errno.h>
#include <security/pam_appl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum xp_want { WANT_NO_KIND, WANT_NO_FINDINGS, WANT_IFF, WANT_NO_NEW };

struct xp_expect {
	enum xp_want what;
	enum xp_kind_f kind;	/* WANT_NO_KIND */
	char **mods;		/* WANT_IFF */
	size_t nmods;
	int line;
};

struct xp_scen {
	char *service;		/* NULL: the scenario's first */
	char *against;		/* the old version's directory, or NULL */
	struct xp_opts o;
	struct xp_expect *exps;
	size_t nexps;
};


int xp_scen_keyword(const char *kw)
{
	static const char *const kws[] = { "explore", "outcomes", "model",
					   "must", "expect", "accept" };

	for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++) {
		if (strcmp(kw, kws[i]) == 0) {
			return 1;
		}
	}
	return 0;
}

/* The block being read: the last step, when it is an explore step. */
static struct xp_scen *current(struct scenario *sc)
{
	if (sc->nsteps == 0 || sc->steps[sc->nsteps - 1].kind != STEP_EXPLORE) {
		return NULL;
	}
	return sc->steps[sc->nsteps - 1].explore;
}

static int parse_explore(struct scenario *sc, char **w, size_t n,
			 const char *file, int line, int *nerr)
{
	struct xp_scen *x = calloc(1, sizeof(*x));
	struct step *s, *v;

	if (x == NULL) {
		return -1;
	}
	x->o.type = XP_ALL_TYPES;
	for (size_t i = 0; i < n; i += 2) {
		int t = -2;

		if (i + 1 >= n) {
			scenario_perr(file, line, nerr, "`explore %s` needs a value", w[i]);
		} else if (strcmp(w[i], "service") == 0) {
			free(x->service);
			x->service = strdup(w[i + 1]);
		} else if (strcmp(w[i], "against") == 0) {
			char *full = NULL;

			if (w[i + 1][0] == '/' || sc->dir == NULL) {
				full = strdup(w[i + 1]);
			} else if (asprintf(&full, "%s/%s", sc->dir, w[i + 1]) < 0) {
				full = NULL;
			}
			free(x->against);
			x->against = full != NULL ? realpath(full, NULL) : NULL;
			if (x->against == NULL) {
				scenario_perr(file, line, nerr, "explore against %s: %s",
					      full != NULL ? full : w[i + 1], strerror(errno));
			}
			free(full);
		} else if (strcmp(w[i], "type") == 0) {
			t = xp_parse_type(w[i + 1]);
			if (t < XP_ALL_TYPES) {
				scenario_perr(file, line, nerr, "explore type: auth, account, "
				     "password, session or all, not \"%s\"", w[i + 1]);
			} else {
				x->o.type = t;
			}
		} else {
			scenario_perr(file, line, nerr, "explore: expected `service NAME`, "
			     "`type TYPE` or `against DIR`, not \"%s\"", w[i]);
		}
	}
	v = reallocarray(sc->steps, sc->nsteps + 1, sizeof(*v));
	if (v == NULL) {
		xp_scen_free(x);
		return -1;
	}
	sc->steps = v;
	s = &v[sc->nsteps++];
	memset(s, 0, sizeof(*s));
	s->kind = STEP_EXPLORE;
	s->line = line;
	s->explore = x;
	return 0;
}

static int parse_expect(struct xp_scen *x, char **w, size_t n,
			const char *file, int line, int *nerr)
{
	struct xp_expect e = { .line = line };
	struct xp_expect *v;

	if (n == 2 && strcmp(w[0], "no") == 0 && strcmp(w[1], "findings") == 0) {
		e.what = WANT_NO_FINDINGS;
	} else if (n == 3 && strcmp(w[0], "no") == 0 && strcmp(w[1], "new") == 0 &&
		   strcmp(w[2], "success") == 0) {
		if (x->against == NULL) {
			scenario_perr(file, line, nerr, "`expect no new success` needs "
				      "`explore ... against DIR`");
			return 0;
		}
		e.what = WANT_NO_NEW;
	} else if (n == 2 && strcmp(w[0], "no") == 0) {
		int k = -1;

		for (int i = 0; i < 4; i++) {
			if (strcmp(w[1], xp_finding_name((enum xp_kind_f)i)) ==
			    0) {
				k = i;
			}
		}
		if (k < 0) {
			scenario_perr(file, line, nerr, "expect no: bypass, lockout, "
			     "dead-line, ignored or findings, not \"%s\"", w[1]);
			return 0;
		}
		e.what = WANT_NO_KIND;
		e.kind = (enum xp_kind_f)k;
	} else if (n >= 3 && strcmp(w[0], "success") == 0 &&
		   strcmp(w[1], "iff") == 0 && n % 2 == 1) {
		e.what = WANT_IFF;
		for (size_t i = 2; i < n; i += 2) {
			char **m;

			if (i > 2 && strcmp(w[i - 1], "or") != 0) {
				scenario_perr(file, line, nerr, "expect success iff: modules "
				     "are joined with `or`, not \"%s\"", w[i - 1]);
				break;
			}
			m = reallocarray(e.mods, e.nmods + 1, sizeof(*m));
			if (m == NULL || (m[e.nmods] = strdup(w[i])) == NULL) {
				free(m != NULL ? m : e.mods);
				return -1;
			}
			e.mods = m;
			e.nmods++;
		}
	} else {
		scenario_perr(file, line, nerr, "expect: `no bypass`, `no lockout`, `no "
		     "dead-line`, `no ignored`, `no findings`, `no new success` or "
		     "`success iff MODULE [or MODULE]...`");
		return 0;
	}
	v = reallocarray(x->exps, x->nexps + 1, sizeof(*v));
	if (v == NULL) {
		return -1;
	}
	x->exps = v;
	v[x->nexps++] = e;
	return 0;
}

static int parse_option(struct xp_scen *x, const char *kw, char **w, size_t n,
			const char *file, int line, int *nerr)
{
	if (n != 1) {
		scenario_perr(file, line, nerr, "`%s` takes one word", kw);
	} else if (strcmp(kw, "outcomes") == 0) {
		if (xp_parse_outcomes(w[0], &x->o.outcomes) != 0) {
			scenario_perr(file, line, nerr, "outcomes: not a list of PAM "
			     "codes: \"%s\"", w[0]);
		}
	} else if (strcmp(kw, "model") == 0) {
		if (xp_add_model(&x->o.models, &x->o.nmodels, w[0]) != 0) {
			scenario_perr(file, line, nerr, "model: expected MODULE=CODE,... "
			     "(e.g. pam_unix=success,auth_err), not \"%s\"", w[0]);
		}
	} else if (strcmp(kw, "accept") == 0) {
		char *from = NULL;

		if (asprintf(&from, "%s:%d", file, line) < 0) {
			return -1;
		}
		if (xp_add_accept(&x->o.accepts, &x->o.naccepts, w[0], from) !=
		    0) {
			scenario_perr(file, line, nerr, "accept: expected KIND:FILE:LINE "
			     "(KIND: bypass, lockout, dead-line or ignored), not "
			     "\"%s\"", w[0]);
		}
		free(from);
	} else {	/* must */
		char **v = reallocarray(x->o.must, x->o.nmust + 1, sizeof(*v));

		if (v == NULL) {
			return -1;
		}
		x->o.must = v;
		if ((v[x->o.nmust] = strdup(w[0])) == NULL) {
			return -1;
		}
		x->o.nmust++;
	}
	return 0;
}

int xp_scen_parse(struct scenario *sc, const char *kw, char **w, size_t n,
		  const char *file, int line, int *nerr)
{
	struct xp_scen *x = current(sc);
	int rc;

	if (strcmp(kw, "explore") == 0) {
		rc = parse_explore(sc, w, n, file, line, nerr);
	} else if (x == NULL) {
		scenario_perr(file, line, nerr, "`%s` must follow an `explore` line (or "
		     "another line of its block)", kw);
		rc = -1;
	} else if (strcmp(kw, "expect") == 0) {
		rc = parse_expect(x, w, n, file, line, nerr);
	} else {
		rc = parse_option(x, kw, w, n, file, line, nerr);
	}
	return rc;
}

void xp_scen_free(struct xp_scen *x)
{
	if (x == NULL) {
		return;
	}
	for (size_t i = 0; i < x->nexps; i++) {
		for (size_t k = 0; k < x->exps[i].nmods; k++) {
			free(x->exps[i].mods[k]);
		}
		free(x->exps[i].mods);
	}
	for (size_t i = 0; i < x->o.nmodels; i++) {
		free(x->o.models[i].target);
	}
	for (size_t i = 0; i < x->o.nmust; i++) {
		free(x->o.must[i]);
	}
	xp_accepts_free(x->o.accepts, x->o.naccepts);
	free(x->o.models);
	free(x->o.must);
	free(x->exps);
	free(x->service);
	free(x->against);
	free(x);
}

/* ---- running ---------------------------------------------------------------- */

struct fails {
	const struct scenario *sc;
	char ***v;
	size_t *n;
	int oom;
};

static void fail(struct fails *f, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct fails *f, int line, const char *fmt, ...)
{
	char *msg = NULL, *full = NULL, **v;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0) {
		msg = NULL;
	}
	va_end(ap);
	if (msg == NULL ||
	    asprintf(&full, "%s:%d: %s", f->sc->path, line, msg) < 0) {
		full = NULL;
	}
	free(msg);
	v = full != NULL ? reallocarray(*f->v, *f->n + 1, sizeof(*v)) : NULL;
	if (v == NULL) {
		free(full);
		f->oom = 1;
		return;
	}
	*f->v = v;
	v[(*f->n)++] = full;
}

static void check(struct fails *f, const struct xp_expect *e,
		  const struct xp_report *r)
{
	for (size_t i = 0; i < r->nf && (e->what == WANT_NO_KIND ||
					 e->what == WANT_NO_FINDINGS); i++) {
		const struct xp_finding *x = &r->f[i];
		char *p;

		if (e->what == WANT_NO_KIND && x->kind != e->kind) {
			continue;
		}
		p = xp_path_text(&r->g, &x->path);
		fail(f, e->line, "%s %s: %s: %s: %s (path: %s)", r->service,
		     pwrap_group_name(r->type), xp_finding_name(x->kind), x->where,
		     x->msg, p != NULL ? p : "?");
		free(p);
	}
	if (e->what == WANT_IFF && r->refused == NULL) {
		struct xp_path w;

		if (!xp_iff(&r->g, e->mods, e->nmods, &w)) {
			char *p = xp_path_text(&r->g, &w);

			fail(f, e->line, "%s %s: PAM_SUCCESS is not \"one of %s%s "
			     "returned success\": %s", r->service,
			     pwrap_group_name(r->type), e->mods[0],
			     e->nmods > 1 ? ", ..." : "", p != NULL ? p : "?");
			free(p);
		}
		xp_path_free(&w);
	}
	if (e->what == WANT_IFF && r->refused != NULL) {
		fail(f, e->line, "%s %s: pam_start fails: %s", r->service,
		     pwrap_group_name(r->type), r->refused);
	}
}

/* Lines of the scenario's own services are shown as its lines. */
static void alias(struct xp_conf *c, const void *ctx)
{
	const struct scenario *sc = ctx;

	for (size_t i = 0; i < c->nfiles; i++) {
		const char *base = strrchr(c->files[i].path, '/');

		for (size_t k = 0; k < sc->nsvcs && base != NULL; k++) {
			const struct service *sv = &sc->svcs[k];

			if (sv->text == NULL ||
			    strcmp(base + 1, sv->name) != 0) {
				continue;
			}
			c->files[i].alias = sc->path;
			c->files[i].lines = sv->lines;
			c->files[i].nlines = sv->nlines;
		}
	}
}

/* `expect no new success`: each group's first combination that succeeds
 * and did not. */
static void check_new(struct fails *f, const struct xp_expect *e,
		      const struct xp_diff *d)
{
	for (int k = 0; k < d->n[1]; k++) {
		const struct xp_cmp *c = &d->cmp[k];

		for (size_t i = 0; i < c->nch && c->weaker; i++) {
			char *p[2];

			if (c->ch[i].after != PAM_SUCCESS) {
				continue;
			}
			p[0] = xp_path_text(&d->r[0][k].g, &c->ch[i].path[0]);
			p[1] = xp_path_text(&d->r[1][k].g, &c->ch[i].path[1]);
			fail(f, e->line, "%s %s: PAM_SUCCESS where it was %s (against "
			     "%s): %s (before: %s)", d->service,
			     pwrap_group_name(c->type), xp_code_name(c->ch[i].before),
			     d->dir[0], p[1] != NULL ? p[1] : "?",
			     p[0] != NULL ? p[0] : "?");
			free(p[0]);
			free(p[1]);
			break;
		}
	}
}

/* A block with `against DIR`: DIR's version against the scenario's. */
static void run_diff(struct fails *f, const struct xp_scen *x, int line,
		     const char *dir, const char *service, const struct xp_opts *o)
{
	struct xp_diff d;

	if (xp_diff(&d, x->against, dir, service, o) != 0) {
		fail(f, line, "explore %s against %s: %s", service, x->against,
		     d.error != NULL ? d.error : "out of memory");
	}
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < d.n[s]; k++) {
			if (d.r[s][k].disagree != NULL) {
				fail(f, line, "%s %s (%s): %s", service,
				     pwrap_group_name(d.r[s][k].type), d.dir[s],
				     d.r[s][k].disagree);
			}
		}
	}
	for (size_t k = 0; k < x->nexps && d.error == NULL; k++) {
		if (x->exps[k].what == WANT_NO_NEW) {
			check_new(f, &x->exps[k], &d);
			continue;
		}
		for (int i = 0; i < d.n[1]; i++) {
			check(f, &x->exps[k], &d.r[1][i]);
		}
	}
	xp_diff_free(&d);
}

int xp_scen_run(const struct scenario *sc, const struct step *s,
		char ***fails, size_t *nfails)
{
	const struct xp_scen *x = s->explore;
	struct xp_opts o = x->o;
	const char *dir = getenv("PAM_WRAPPER_SERVICE_DIR");
	const char *service = x->service != NULL ? x->service : sc->svcs[0].name;
	struct fails f = { sc, fails, nfails, 0 };
	struct xp_report r[XP_NTYPES];
	struct xp_conf c = { 0 };
	char *sysmod = system_module_dir(), *err = NULL;
	int n;

	o.moddir = pamtest_moddir;
	o.sysmoddir = sysmod;
	o.after_read = alias;
	o.ctx = sc;
	if (dir != NULL && x->against != NULL) {
		run_diff(&f, x, s->line, dir, service, &o);
		free(sysmod);
		return f.oom ? -1 : 0;
	}
	n = dir != NULL ? xp_explore(dir, service, &o, &c, r, &err) : -1;
	if (n < 0) {
		fail(&f, s->line, "explore %s: %s", service,
		     err != NULL ? err : "no service directory");
	}
	for (int i = 0; i < n; i++) {
		if (r[i].disagree != NULL) {
			fail(&f, s->line, "%s %s: %s", service,
			     pwrap_group_name(r[i].type), r[i].disagree);
		}
		for (size_t k = 0; k < x->nexps; k++) {
			check(&f, &x->exps[k], &r[i]);
		}
		xp_report_free(&r[i]);
	}
	xp_conf_free(&c);
	free(err);
	free(sysmod);
	return f.oom ? -1 : 0;
}
