/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore --diff: what a change to a service does.  Both versions
 * are explored as usual (read, graphs, tables, findings, each replayed on
 * libpam), then each group is compared.
 *
 * Lines: a line of one version is the same line of the other when it is
 * in the file of the same name, for the same module, the same occurrence
 * of that module in that file (the second pam_unix line of common-auth is
 * the second on both sides), in the same pass of chauthtok; its control,
 * arguments, line number and place may differ.  A combination gives every
 * line of either version an outcome, a line both have the same one on both
 * sides.
 *
 * What changed is the set of pairs (result before, result after) over all
 * combinations, found exactly by a breadth-first search over pairs of
 * nodes, one of each graph: each step calls a line on one side or, when
 * both are at the same line, on both with the same outcome.  Lines met in
 * the same order on both sides need no memory; a line that one side has
 * called and the other may still call (a line moved across another) is
 * remembered in the state with its outcome, until the other side calls it
 * (then it returns that outcome) or goes past it.  A combination that
 * succeeds after and did not before is "a new way in" (exit status 1).
 *
 * Shown: each condition of after's PAM_SUCCESS (its table) under which
 * some combination succeeds that did not, with the shortest such
 * combination; the same for before's conditions that some combination no
 * longer meets; any other pair of results with a combination.  Findings
 * are compared by kind and line (the identity above), not line number.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_buf.h"

#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>

#define PEND 16		 /* lines remembered at once (moved lines) */
#define MAX_STATES 1000000 /* pairs of states searched, at most */

static const char *const side_name[2] = { "before", "after" };

/* ---- the lines both versions have -------------------------------------- */

/* var[s][pos]: the index of the line at position pos of side s among the
 * lines both have, or -1; at[s][k]: the position of shared line k on side
 * s. */
struct lines {
	int *var[2];
	int *at[2];
	size_t n;
};

static bool same_name(const struct xp_graph *a, const struct xp_line *la,
		      const struct xp_graph *b, const struct xp_line *lb)
{
	return strcmp(a->conf->files[la->file].show,
		      b->conf->files[lb->file].show) == 0 &&
	       strcmp(la->name, lb->name) == 0;
}

/* How many earlier positions of its pass have the line's file and module. */
static int occurrence(const struct xp_graph *g, size_t pos)
{
	const struct xp_line *l = g->seq[pos].l;
	int k = 0;

	for (size_t i = g->perpass * (size_t)g->seq[pos].pass; i < pos; i++) {
		if (g->seq[i].l->kind != XP_SUBSTACK &&
		    same_name(g, l, g, g->seq[i].l)) {
			k++;
		}
	}
	return k;
}

static void lines_free(struct lines *m)
{
	for (int s = 0; s < 2; s++) {
		free(m->var[s]);
		free(m->at[s]);
	}
	memset(m, 0, sizeof(*m));
}

static int lines_match(struct lines *m, const struct xp_graph *const g[2])
{
	int *occ[2] = { NULL, NULL };
	int rc = -1;

	for (int s = 0; s < 2; s++) {
		m->var[s] = malloc((g[s]->nseq + 1) * sizeof(int));
		m->at[s] = malloc((g[s]->nseq + 1) * sizeof(int));
		occ[s] = malloc((g[s]->nseq + 1) * sizeof(int));
		if (m->var[s] == NULL || m->at[s] == NULL || occ[s] == NULL) {
			goto out;
		}
		for (size_t i = 0; i < g[s]->nseq; i++) {
			m->var[s][i] = -1;
			occ[s][i] = occurrence(g[s], i);
		}
	}
	for (size_t i = 0; i < g[0]->nseq; i++) {
		const struct xp_line *l = g[0]->seq[i].l;

		for (size_t j = 0; j < g[1]->nseq && l->kind != XP_SUBSTACK; j++) {
			const struct xp_line *r = g[1]->seq[j].l;

			if (r->kind == XP_SUBSTACK || m->var[1][j] >= 0 ||
			    occ[0][i] != occ[1][j] ||
			    g[0]->seq[i].pass != g[1]->seq[j].pass ||
			    !same_name(g[0], l, g[1], r)) {
				continue;
			}
			m->var[0][i] = m->var[1][j] = (int)m->n;
			m->at[0][m->n] = (int)i;
			m->at[1][m->n] = (int)j;
			m->n++;
			break;
		}
	}
	rc = m->n < 65535 ? 0 : -1;	/* (a pend holds 16 bits) */
out:
	free(occ[0]);
	free(occ[1]);
	return rc;
}

/* ---- the search over pairs of states ----------------------------------- */

/* A line one side called with code, which the other side may still call. */
struct pend {
	uint16_t line;
	uint8_t code, by;
};

/* A pair of states, zeroed before it is filled (hashed as bytes). */
struct pstate {
	int at[2];		/* node of each side; -1: pam_start fails */
	int npend;
	struct pend p[PEND];	/* by line */
};

struct pnode {
	struct pstate st;
	int parent;
	unsigned char both, side, code;	/* the step that led here */
};

struct product {
	const struct xp_graph *g[2];
	const struct lines *m;
	const xp_set *filt[2];	/* per position: the codes allowed, or NULL */
	struct pnode *v;
	size_t n, cap;
	int *hash;
	size_t hcap;
	bool full;		/* MAX_STATES or PEND reached */
};

static uint64_t hash_pstate(const struct pstate *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*s); i++) {
		h = (h ^ p[i]) * 1099511628211ull;
	}
	return h;
}

static int grow_hash(struct product *p)
{
	size_t cap = p->hcap ? p->hcap * 2 : 1024;
	int *h = malloc(cap * sizeof(*h));

	if (h == NULL) {
		return -1;
	}
	for (size_t i = 0; i < cap; i++) {
		h[i] = -1;
	}
	for (size_t n = 0; n < p->n; n++) {
		size_t i = hash_pstate(&p->v[n].st) & (cap - 1);

		while (h[i] >= 0) {
			i = (i + 1) & (cap - 1);
		}
		h[i] = (int)n;
	}
	free(p->hash);
	p->hash = h;
	p->hcap = cap;
	return 0;
}

/* Adds state s (when new) with the step that reached it.  0 or -1. */
static int pnode_add(struct product *p, const struct pstate *s, int parent,
		     bool both, int side, int code)
{
	size_t i;

	if ((p->n + 1) * 2 > p->hcap && grow_hash(p) != 0) {
		return -1;
	}
	for (i = hash_pstate(s) & (p->hcap - 1); p->hash[i] >= 0;
	     i = (i + 1) & (p->hcap - 1)) {
		if (memcmp(&p->v[p->hash[i]].st, s, sizeof(*s)) == 0) {
			return 0;
		}
	}
	if (p->n >= MAX_STATES) {
		p->full = true;
		return -1;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct pnode *v = reallocarray(p->v, cap, sizeof(*v));

		if (v == NULL) {
			return -1;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n] = (struct pnode){ *s, parent, both, (unsigned char)side,
				     (unsigned char)code };
	p->hash[i] = (int)p->n++;
	return 0;
}

static int side_pos(const struct product *p, const struct pstate *st, int s)
{
	return st->at[s] < 0 ? -1 : p->g[s]->nodes[st->at[s]].st.pos;
}

/* A side without a graph: pam_start fails, the application gets no
 * further (the lockout's path says PAM_ABORT too). */
static int side_result(const struct product *p, const struct pstate *st,
		       int s)
{
	return st->at[s] < 0 ? PAM_ABORT : p->g[s]->nodes[st->at[s]].result;
}

static int find_pend(const struct pstate *st, int line)
{
	for (int i = 0; i < st->npend; i++) {
		if (st->p[i].line == line) {
			return i;
		}
	}
	return -1;
}

static void drop_pend(struct pstate *st, int i)
{
	memmove(&st->p[i], &st->p[i + 1],
		(size_t)(st->npend - i - 1) * sizeof(st->p[0]));
	st->npend--;
	memset(&st->p[st->npend], 0, sizeof(st->p[0]));
}

static int add_pend(struct pstate *st, int line, int code, int by)
{
	int i = st->npend;

	if (st->npend == PEND) {
		return -1;
	}
	for (; i > 0 && st->p[i - 1].line > line; i--) {
		st->p[i] = st->p[i - 1];
	}
	st->p[i] = (struct pend){ (uint16_t)line, (uint8_t)code, (uint8_t)by };
	st->npend++;
	return 0;
}

/* Forgets the lines the other side has gone past (or ended without). */
static void forget(const struct product *p, struct pstate *st)
{
	for (int i = 0; i < st->npend;) {
		int o = 1 - st->p[i].by, op = side_pos(p, st, o);

		if (op < 0 || op > p->m->at[o][st->p[i].line]) {
			drop_pend(st, i);
		} else {
			i++;
		}
	}
}

/* How far the other side is from the line side s is at, when it may
 * still call it and has not yet: stepping s alone then means remembering
 * its outcome.  0 when it need not. */
static int ahead(const struct product *p, const struct pstate *st, int s)
{
	int pos = side_pos(p, st, s), o = 1 - s, op = side_pos(p, st, o);
	int k = p->m->var[s][pos];

	if (k < 0 || op < 0 || find_pend(st, k) >= 0 || p->m->at[o][k] <= op) {
		return 0;
	}
	return p->m->at[o][k] - op;
}

static int next_node(const struct xp_graph *g, int n, int code)
{
	const struct xp_node *nd = &g->nodes[n];

	for (size_t k = 0; k < nd->ne; k++) {
		if (nd->e[k].outcomes & XP_BIT(code)) {
			return nd->e[k].to;
		}
	}
	return n;	/* (not reached: codes come from the node's edges) */
}

/* The side that calls next: when both are at the same line both, else
 * the one that need not remember (the farther one when both must). */
static int choose(const struct product *p, const struct pstate *st,
		  const int pos[2], bool *both)
{
	int a0, a1;

	*both = pos[0] >= 0 && pos[1] >= 0 && p->m->var[0][pos[0]] >= 0 &&
		p->m->var[0][pos[0]] == p->m->var[1][pos[1]];
	if (*both || pos[1] < 0) {
		return 0;
	}
	if (pos[0] < 0) {
		return 1;
	}
	a0 = ahead(p, st, 0);
	a1 = ahead(p, st, 1);
	return a0 == 0 ? 0 : a1 == 0 ? 1 : a0 >= a1 ? 0 : 1;
}

/* The successors of node i.  0 or -1. */
static int expand(struct product *p, size_t i)
{
	struct pstate st = p->v[i].st;
	int pos[2] = { side_pos(p, &st, 0), side_pos(p, &st, 1) };
	int s, k, pi = -1, remember = 0;
	bool both;
	xp_set codes = ~(xp_set)0;

	if (pos[0] < 0 && pos[1] < 0) {
		return 0;
	}
	s = choose(p, &st, pos, &both);
	for (int x = 0; x < 2; x++) {
		if (x == s || both) {
			codes &= xp_codes_at(p->g[x], pos[x]) &
				 (p->filt[x] != NULL ? p->filt[x][pos[x]] : ~(xp_set)0);
		}
	}
	k = p->m->var[s][pos[s]];
	if (!both && k >= 0 && (pi = find_pend(&st, k)) >= 0) {
		codes &= XP_BIT(st.p[pi].code);
	} else if (!both) {
		remember = ahead(p, &st, s) > 0;
	}
	for (int code = 0; code < 64; code++) {
		struct pstate nx = st;

		if (!(codes & XP_BIT(code))) {
			continue;
		}
		if (pi >= 0) {
			drop_pend(&nx, pi);
		}
		for (int x = 0; x < 2; x++) {
			if (x == s || both) {
				nx.at[x] = next_node(p->g[x], st.at[x], code);
			}
		}
		if (remember && add_pend(&nx, k, code, s) != 0) {
			p->full = true;
			return -1;
		}
		forget(p, &nx);
		if (pnode_add(p, &nx, (int)i, both, s, code) != 0) {
			return -1;
		}
	}
	return 0;
}

static void product_free(struct product *p)
{
	free(p->v);
	free(p->hash);
	p->v = NULL;
	p->hash = NULL;
	p->n = p->cap = p->hcap = 0;
}

/* Every pair of states from the roots (the filters set).  0 or -1. */
static int product_run(struct product *p)
{
	struct pstate root;

	product_free(p);
	memset(&root, 0, sizeof(root));
	for (int s = 0; s < 2; s++) {
		root.at[s] = p->g[s]->nnodes > 0 ? p->g[s]->root : -1;
	}
	if (pnode_add(p, &root, -1, false, 0, 0) != 0) {
		return -1;
	}
	for (size_t i = 0; i < p->n; i++) {
		if (expand(p, i) != 0) {
			return -1;
		}
	}
	return 0;
}

/* Whether node i is a pair of results: *b before's, *a after's. */
static bool results(const struct product *p, size_t i, int *b, int *a)
{
	const struct pstate *st = &p->v[i].st;

	if (side_pos(p, st, 0) >= 0 || side_pos(p, st, 1) >= 0) {
		return false;
	}
	*b = side_result(p, st, 0);
	*a = side_result(p, st, 1);
	return true;
}

/* The combination that leads to node t, as each side's path.  0 or -1. */
static int witness(const struct product *p, size_t t, struct xp_path out[2])
{
	memset(out, 0, 2 * sizeof(*out));
	for (int x = (int)t; p->v[x].parent >= 0; x = p->v[x].parent) {
		const struct pnode *n = &p->v[x], *up = &p->v[n->parent];

		for (int s = 0; s < 2; s++) {
			if ((s == n->side || n->both) &&
			    xp_path_push(&out[s], side_pos(p, &up->st, s), n->code) != 0) {
				return -1;
			}
		}
	}
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < out[s].n / 2; i++) {
			struct xp_call c = out[s].c[i];

			out[s].c[i] = out[s].c[out[s].n - 1 - i];
			out[s].c[out[s].n - 1 - i] = c;
		}
	}
	results(p, t, &out[0].result, &out[1].result);
	return 0;
}

/* ---- one group compared ------------------------------------------------- */

static int add_change(struct xp_cmp *c, const struct product *p, size_t t,
		      const struct xp_term *term, int side)
{
	struct xp_change *v = reallocarray(c->ch, c->nch + 1, sizeof(*v));

	if (v == NULL) {
		return -1;
	}
	c->ch = v;
	v = &v[c->nch];
	memset(v, 0, sizeof(*v));
	v->term = term;
	v->side = side;
	if (witness(p, t, v->path) != 0) {
		xp_path_free(&v->path[0]);
		xp_path_free(&v->path[1]);
		return -1;
	}
	v->before = v->path[0].result;
	v->after = v->path[1].result;
	c->nch++;
	return 0;
}

static const struct xp_cond *success_cond(const struct xp_report *r)
{
	for (size_t i = 0; i < r->ntable; i++) {
		if (r->table[i].result == PAM_SUCCESS) {
			return &r->table[i];
		}
	}
	return NULL;
}

/* For each term of side s's PAM_SUCCESS: the shortest combination that
 * meets it and on which the other side does not succeed.  0 or -1. */
static int by_term(struct xp_cmp *c, struct product *p, int s,
		   const struct xp_report *r)
{
	const struct xp_cond *cond = success_cond(r);
	xp_set *f[2] = { NULL, NULL };
	int rc = -1, o = 1 - s;

	for (int x = 0; x < 2; x++) {
		f[x] = malloc((p->g[x]->nseq + 1) * sizeof(xp_set));
		if (f[x] == NULL) {
			goto out;
		}
		p->filt[x] = f[x];
	}
	for (size_t k = 0; cond != NULL && k < cond->n; k++) {
		const struct xp_term *t = &cond->t[k];

		for (int x = 0; x < 2; x++) {
			for (size_t i = 0; i < p->g[x]->nseq; i++) {
				f[x][i] = ~(xp_set)0;
			}
		}
		for (size_t i = 0; i < t->n; i++) {
			int v = p->m->var[s][t->l[i].pos];

			f[s][t->l[i].pos] &= t->l[i].codes;
			if (v >= 0) {
				f[o][p->m->at[o][v]] &= t->l[i].codes;
			}
		}
		if (product_run(p) != 0) {
			goto out;
		}
		for (size_t i = 0; i < p->n; i++) {
			int res[2];

			if (results(p, i, &res[0], &res[1]) &&
			    res[s] == PAM_SUCCESS && res[o] != PAM_SUCCESS) {
				if (add_change(c, p, i, t, s) != 0) {
					goto out;
				}
				break;
			}
		}
	}
	rc = 0;
out:
	p->filt[0] = p->filt[1] = NULL;
	free(f[0]);
	free(f[1]);
	return rc;
}

/* Whether a change through a condition already shows the pair (b, a). */
static bool shown(const struct xp_cmp *c, size_t n, int b, int a)
{
	for (size_t i = 0; i < n; i++) {
		if (c->ch[i].before == b && c->ch[i].after == a) {
			return true;
		}
	}
	return false;
}

/* "kind\tfile\tmodule\toccurrence" of a finding at a line, else
 * "kind\twhere\tmessage".  Malloc'd or NULL. */
static char *finding_key(const struct xp_report *r, const struct xp_finding *f)
{
	const struct xp_graph *g = &r->g;
	char *key = NULL;

	for (size_t i = 0; i < g->nseq; i++) {
		const struct xp_line *l = g->seq[i].l;

		if (strcmp(xp_where(g->conf, l), f->where) == 0) {
			if (asprintf(&key, "%s\t%s\t%s\t%d", xp_finding_name(f->kind),
				     g->conf->files[l->file].show, l->name,
				     occurrence(g, i)) < 0) {
				key = NULL;
			}
			return key;
		}
	}
	if (asprintf(&key, "%s\t%s\t%s", xp_finding_name(f->kind), f->where,
		     f->msg) < 0) {
		key = NULL;
	}
	return key;
}

/* The findings of side s that the other side has not: their indices in
 * *v.  0 or -1. */
static int findings_only(const struct xp_report *r[2], int s, size_t **v,
			 size_t *n)
{
	const struct xp_report *a = r[s], *b = r[1 - s];

	*n = 0;
	*v = calloc(a->nf + 1, sizeof(**v));
	if (*v == NULL) {
		return -1;
	}
	for (size_t i = 0; i < a->nf; i++) {
		char *ka = finding_key(a, &a->f[i]);
		bool found = false;

		if (ka == NULL) {
			return -1;
		}
		for (size_t j = 0; j < b->nf && !found; j++) {
			char *kb = finding_key(b, &b->f[j]);

			if (kb == NULL) {
				free(ka);
				return -1;
			}
			found = strcmp(ka, kb) == 0;
			free(kb);
		}
		free(ka);
		if (!found) {
			(*v)[(*n)++] = i;
		}
	}
	return 0;
}

/* Group k of d compared.  0 or -1 (d->error). */
static int compare(struct xp_diff *d, int k)
{
	const struct xp_report *r[2] = { &d->r[0][k], &d->r[1][k] };
	const struct xp_graph *g[2] = { &r[0]->g, &r[1]->g };
	struct xp_cmp *c = &d->cmp[k], pairs = { 0 };
	struct lines m = { 0 };
	struct product p = { .g = { g[0], g[1] }, .m = &m };
	size_t nterm;
	bool lost = false;
	int rc = -1;

	c->type = r[0]->type;
	if (lines_match(&m, g) != 0 || product_run(&p) != 0) {
		goto out;
	}
	/* every pair of different results, with its shortest combination */
	for (size_t i = 0; i < p.n; i++) {
		int b, a;

		if (results(&p, i, &b, &a) && b != a && !shown(&pairs, pairs.nch, b, a) &&
		    add_change(&pairs, &p, i, NULL, 0) != 0) {
			goto out;
		}
	}
	c->same = pairs.nch == 0;
	for (size_t i = 0; i < pairs.nch; i++) {
		c->weaker |= pairs.ch[i].after == PAM_SUCCESS;
		lost |= pairs.ch[i].before == PAM_SUCCESS;
	}
	/* the conditions through which success came or went */
	if ((c->weaker && by_term(c, &p, 1, r[1]) != 0) ||
	    (lost && by_term(c, &p, 0, r[0]) != 0)) {
		goto out;
	}
	/* and the pairs those do not show */
	nterm = c->nch;
	for (size_t i = 0; i < pairs.nch; i++) {
		struct xp_change *x = &pairs.ch[i];
		struct xp_change *v;

		if (shown(c, nterm, x->before, x->after)) {
			continue;
		}
		v = reallocarray(c->ch, c->nch + 1, sizeof(*v));
		if (v == NULL) {
			goto out;
		}
		c->ch = v;
		v[c->nch++] = *x;
		memset(x->path, 0, sizeof(x->path));
	}
	if (findings_only(r, 1, &c->fnew, &c->nfnew) != 0 ||
	    findings_only(r, 0, &c->fgone, &c->nfgone) != 0) {
		goto out;
	}
	rc = 0;
out:
	if (rc != 0 && asprintf(&d->error, "%s %s: %s", d->service,
				pwrap_group_name(c->type),
				p.full ? "too many combinations to compare (lines "
					 "moved across many others)"
				       : "out of memory") < 0) {
		d->error = NULL;
	}
	for (size_t i = 0; i < pairs.nch; i++) {
		xp_path_free(&pairs.ch[i].path[0]);
		xp_path_free(&pairs.ch[i].path[1]);
	}
	free(pairs.ch);
	product_free(&p);
	lines_free(&m);
	return rc;
}

/* ---- both versions ------------------------------------------------------- */

/* One side's options: the caller's, with only the models that name a
 * module or line of this side (a model may name a line only one version
 * has; one that names nothing in either is an error). */
struct side_opts {
	struct xp_opts o;
	int side;
	const struct xp_opts *orig;
	struct xp_model *kept;
	bool *used;		/* per model of orig: named on some side */
};

static bool names_line(const struct xp_conf *c, const struct xp_model *m)
{
	for (int t = 0; t < XP_NTYPES; t++) {
		for (int k = 0; k < 2; k++) {
			const struct xp_stack *s = k ? &c->other[t] : &c->conf[t];

			for (size_t i = 0; i < s->n; i++) {
				if (strchr(m->target, ':') != NULL
					    ? strcmp(m->target, xp_where(c, &s->v[i])) == 0
					    : xp_name_is(s->v[i].name, m->target)) {
					return true;
				}
			}
		}
	}
	return false;
}

/* xp_explore's after_read: keeps the models of this side (ctx: the
 * struct side_opts whose o xp_explore is reading, ours to change); the
 * caller's after_read (a scenario's inline services) is the new side's. */
static void keep_models(struct xp_conf *c, const void *ctx)
{
	struct side_opts *so = (struct side_opts *)ctx;

	if (so->orig->after_read != NULL && so->side == 1) {
		so->orig->after_read(c, so->orig->ctx);
	}
	so->o.nmodels = 0;
	for (size_t i = 0; i < so->orig->nmodels; i++) {
		if (names_line(c, &so->orig->models[i])) {
			so->kept[so->o.nmodels++] = so->orig->models[i];
			so->used[i] = true;
		}
	}
}

/* Explores side s.  0 or -1 with d->error. */
static int explore_side(struct xp_diff *d, int s, struct side_opts *so)
{
	char *err = NULL;

	so->o = *so->orig;
	so->side = s;
	so->o.models = so->kept;
	so->o.after_read = keep_models;
	so->o.ctx = so;
	d->n[s] = xp_explore(d->dir[s], d->service, &so->o, &d->c[s], d->r[s],
			     &err);
	if (d->n[s] >= 0) {
		return 0;
	}
	d->n[s] = 0;
	if (asprintf(&d->error, "%s (%s): %s", side_name[s], d->dir[s],
		     err != NULL ? err : "out of memory") < 0) {
		d->error = NULL;
	}
	free(err);
	return -1;
}

int xp_diff(struct xp_diff *d, const char *old, const char *new,
	    const char *service, const struct xp_opts *o)
{
	struct side_opts so = { .orig = o };
	int rc = -1;

	memset(d, 0, sizeof(*d));
	d->dir[0] = old;
	d->dir[1] = new;
	d->service = service;
	so.kept = calloc(o->nmodels + 1, sizeof(*so.kept));
	so.used = calloc(o->nmodels + 1, sizeof(*so.used));
	if (so.kept == NULL || so.used == NULL) {
		d->error = strdup("out of memory");
		goto out;
	}
	if (explore_side(d, 0, &so) != 0 || explore_side(d, 1, &so) != 0) {
		goto out;
	}
	for (size_t i = 0; i < o->nmodels; i++) {
		if (!so.used[i]) {
			if (asprintf(&d->error, "--model %s: no such module or line "
				     "in %s, before or after", o->models[i].target,
				     service) < 0) {
				d->error = NULL;
			}
			goto out;
		}
	}
	for (int k = 0; k < d->n[1]; k++) {
		if (compare(d, k) != 0) {
			goto out;
		}
	}
	rc = 0;
out:
	free(so.kept);
	free(so.used);
	return rc;
}

void xp_diff_free(struct xp_diff *d)
{
	for (int k = 0; k < XP_NTYPES; k++) {
		struct xp_cmp *c = &d->cmp[k];

		for (size_t i = 0; i < c->nch; i++) {
			xp_path_free(&c->ch[i].path[0]);
			xp_path_free(&c->ch[i].path[1]);
		}
		free(c->ch);
		free(c->fnew);
		free(c->fgone);
	}
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < d->n[s]; k++) {
			xp_report_free(&d->r[s][k]);
		}
		xp_conf_free(&d->c[s]);
	}
	free(d->error);
	memset(d, 0, sizeof(*d));
}

int xp_diff_status(const struct xp_diff *d)
{
	int status = 0;

	if (d->error != NULL) {
		return 2;
	}
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < d->n[s]; k++) {
			if (d->r[s][k].disagree != NULL) {
				return 2;
			}
		}
	}
	for (int k = 0; k < d->n[1]; k++) {
		status = d->cmp[k].weaker ? 1 : status;
	}
	return status;
}

/* ---- output ---------------------------------------------------------------- */

/* The changes into PAM_SUCCESS (gained) or out of it. */
static bool success_change(const struct xp_change *ch, bool gained)
{
	return gained ? ch->after == PAM_SUCCESS : ch->before == PAM_SUCCESS;
}

/* The conditions of the side's PAM_SUCCESS through which success came
 * (gained) or went: ", when (after) T" or a list, one a line. */
static void human_terms(struct pwrap_buf *b, const struct xp_diff *d, int k,
			bool gained)
{
	const struct xp_cmp *c = &d->cmp[k];
	const char *side = side_name[gained];
	size_t n = 0;

	for (size_t i = 0; i < c->nch; i++) {
		n += success_change(&c->ch[i], gained) && c->ch[i].term != NULL;
	}
	for (size_t shown = 0, i = 0; i < c->nch && n > 0; i++) {
		const struct xp_term *t = c->ch[i].term;

		if (!success_change(&c->ch[i], gained) || t == NULL) {
			continue;
		}
		if (t->n == 0) {
			pwrap_buf_fmt(b, ", where %s always succeeds", side);
			continue;
		}
		pwrap_buf_fmt(b, n == 1 ? ", when (%s) " : shown++ == 0
			      ? ", when (%s)\n        " : "     or ", side);
		xp_term_text(b, &d->r[gained][k].g, t);
		pwrap_buf_str(b, n > 1 ? "\n" : "");
	}
	pwrap_buf_str(b, n > 1 ? "" : "\n");
}

/* Success gained or lost: the other results, the conditions, and the
 * combinations (each once). */
static void human_success(struct pwrap_buf *b, const struct xp_diff *d, int k,
			  bool gained)
{
	const struct xp_cmp *c = &d->cmp[k];
	struct pwrap_buf seen = { 0 };
	xp_set other = 0;

	for (size_t i = 0; i < c->nch; i++) {
		if (success_change(&c->ch[i], gained)) {
			other |= XP_BIT(gained ? c->ch[i].before : c->ch[i].after);
		}
	}
	if (other == 0) {
		return;
	}
	pwrap_buf_str(b, gained ? "  now PAM_SUCCESS, before " :
		      "  no longer PAM_SUCCESS, now ");
	for (int r = 0, n = 0; r < 64; r++) {
		if (other & XP_BIT(r)) {
			other &= ~XP_BIT(r);
			pwrap_buf_fmt(b, "%s%s", n++ == 0 ? "" : other ? ", " : " or ",
				      xp_code_name(r));
		}
	}
	human_terms(b, d, k, gained);
	pwrap_buf_str(&seen, "\n");
	for (size_t i = 0; i < c->nch; i++) {
		char *p[2];

		if (!success_change(&c->ch[i], gained)) {
			continue;
		}
		p[1] = xp_path_text(&d->r[1][k].g, &c->ch[i].path[1]);
		p[0] = xp_path_text(&d->r[0][k].g, &c->ch[i].path[0]);
		if (p[0] != NULL && p[1] != NULL && !seen.failed) {
			struct pwrap_buf w = { 0 };

			pwrap_buf_fmt(&w, "    e.g. after:  %s\n         before: %s\n",
				      p[1], p[0]);
			if (!w.failed && strstr(seen.p, w.p) == NULL) {
				pwrap_buf_str(b, w.p);
				pwrap_buf_str(&seen, w.p);
			}
			pwrap_buf_free(&w);
		}
		free(p[0]);
		free(p[1]);
	}
	pwrap_buf_free(&seen);
}

static void human_findings(struct pwrap_buf *b, const struct xp_report *r,
			   const size_t *v, size_t n, bool new)
{
	for (size_t i = 0; i < n; i++) {
		const struct xp_finding *f = &r->f[v[i]];

		pwrap_buf_fmt(b, "  %s %s: %s: %s\n", new ? "new" : "gone",
			      xp_finding_name(f->kind), f->where, f->msg);
		if (new && (f->path.n > 0 || f->kind != XP_DEAD)) {
			char *p = xp_path_text(&r->g, &f->path);

			pwrap_buf_fmt(b, "      path: %s\n", p != NULL ? p : "?");
			free(p);
		}
	}
}

static void human_cmp(struct pwrap_buf *b, const struct xp_diff *d, int k)
{
	const struct xp_cmp *c = &d->cmp[k];

	pwrap_buf_fmt(b, "%s %s: %s\n", d->service, pwrap_group_name(c->type),
		      c->weaker ? "NEW SUCCESS: PAM_SUCCESS on combinations that did not succeed"
		      : !c->same ? "changed, no new success"
		      : c->nfnew + c->nfgone > 0 ?
		      "every combination gives what it gave; findings changed"
		      : "every combination gives what it gave");
	human_success(b, d, k, true);
	human_success(b, d, k, false);
	/* between two failures: one line (json has a combination of each) */
	for (size_t i = 0, n = 0; i < c->nch; i++) {
		const struct xp_change *ch = &c->ch[i];

		if (ch->before != PAM_SUCCESS && ch->after != PAM_SUCCESS) {
			pwrap_buf_fmt(b, "%s%s -> %s", n++ ? ", " :
				      "  failures that fail otherwise: ",
				      xp_code_name(ch->before), xp_code_name(ch->after));
		}
		if (i + 1 == c->nch && n > 0) {
			pwrap_buf_str(b, "\n");
		}
	}
	human_findings(b, &d->r[1][k], c->fnew, c->nfnew, true);
	human_findings(b, &d->r[0][k], c->fgone, c->nfgone, false);
}

/* One side's report as explore's json (without its newline). */
static void json_side(struct pwrap_buf *b, struct xp_report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL) {
		b->failed = true;
		return;
	}
	xp_print(f, XP_JSON, &r, 1, false);
	if (fclose(f) != 0 || text == NULL) {
		b->failed = true;
	} else {
		pwrap_buf_add(b, text, len > 0 && text[len - 1] == '\n' ? len - 1 : len);
	}
	free(text);
}

static void json_finding(struct pwrap_buf *b, const struct xp_report *r,
			 const struct xp_finding *f)
{
	pwrap_buf_fmt(b, "{\"kind\": \"%s\", \"where\": ", xp_finding_name(f->kind));
	pwrap_buf_json(b, f->where);
	pwrap_buf_str(b, ", \"message\": ");
	pwrap_buf_json(b, f->msg);
	pwrap_buf_str(b, ", \"path\": ");
	xp_json_path(b, &r->g, &f->path);
	pwrap_buf_str(b, "}");
}

static void json_cmp(struct pwrap_buf *b, const struct xp_diff *d, int k)
{
	const struct xp_cmp *c = &d->cmp[k];
	struct xp_report *r[2] = { (struct xp_report *)&d->r[0][k],
				   (struct xp_report *)&d->r[1][k] };

	pwrap_buf_str(b, "{\"service\": ");
	pwrap_buf_json(b, d->service);
	pwrap_buf_fmt(b, ", \"type\": \"%s\", \"weaker\": %s, \"same\": %s",
		      pwrap_group_name(c->type), c->weaker ? "true" : "false",
		      c->same ? "true" : "false");
	for (int s = 0; s < 2; s++) {
		pwrap_buf_fmt(b, ",\n \"%s_dir\": ", side_name[s]);
		pwrap_buf_json(b, d->dir[s]);
		pwrap_buf_fmt(b, ",\n \"%s\": ", side_name[s]);
		json_side(b, r[s]);
	}
	pwrap_buf_str(b, ",\n \"changes\": [");
	for (size_t i = 0; i < c->nch; i++) {
		const struct xp_change *ch = &c->ch[i];

		pwrap_buf_fmt(b, "%s{\"before\": \"%s\", \"after\": \"%s\", \"when\": ",
			      i ? ",\n  " : "\n  ", xp_code_name(ch->before),
			      xp_code_name(ch->after));
		if (ch->term != NULL) {
			struct pwrap_buf t = { 0 };

			pwrap_buf_str(&t, "");
			xp_term_text(&t, &r[ch->side]->g, ch->term);
			pwrap_buf_fmt(b, "{\"side\": \"%s\", \"condition\": ",
				      side_name[ch->side]);
			pwrap_buf_json(b, t.failed ? "?" : t.p);
			pwrap_buf_str(b, "}");
			pwrap_buf_free(&t);
		} else {
			pwrap_buf_str(b, "null");
		}
		for (int s = 0; s < 2; s++) {
			pwrap_buf_fmt(b, ", \"%s_path\": ", side_name[s]);
			xp_json_path(b, &r[s]->g, &ch->path[s]);
		}
		pwrap_buf_str(b, "}");
	}
	pwrap_buf_str(b, "],\n \"findings_new\": [");
	for (size_t i = 0; i < c->nfnew; i++) {
		pwrap_buf_str(b, i ? ",\n  " : "\n  ");
		json_finding(b, r[1], &r[1]->f[c->fnew[i]]);
	}
	pwrap_buf_str(b, "],\n \"findings_gone\": [");
	for (size_t i = 0; i < c->nfgone; i++) {
		pwrap_buf_str(b, i ? ",\n  " : "\n  ");
		json_finding(b, r[0], &r[0]->f[c->fgone[i]]);
	}
	pwrap_buf_str(b, "]}");
}

void xp_diff_print(FILE *f, enum xp_format fmt, const struct xp_diff *d,
		   bool all)
{
	struct pwrap_buf b = { 0 };

	pwrap_buf_str(&b, "");
	if (fmt == XP_HUMAN) {
		for (int s = 0; s < 2; s++) {
			struct xp_report *rp[XP_NTYPES];

			for (int k = 0; k < d->n[s]; k++) {
				rp[k] = (struct xp_report *)&d->r[s][k];
			}
			fprintf(f, "== %s: %s\n", side_name[s], d->dir[s]);
			xp_print(f, XP_HUMAN, rp, (size_t)d->n[s], all);
		}
		pwrap_buf_str(&b, "== what changed\n");
		for (int k = 0; k < d->n[1]; k++) {
			human_cmp(&b, d, k);
		}
		if (d->error != NULL) {
			pwrap_buf_fmt(&b, "error: %s\n", d->error);
		}
	} else {
		pwrap_buf_str(&b, all ? "[" : "");
		for (int k = 0; k < d->n[1]; k++) {
			pwrap_buf_str(&b, k ? ",\n" : "");
			json_cmp(&b, d, k);
		}
		pwrap_buf_str(&b, all ? "]\n" : "\n");
	}
	if (!b.failed) {
		fputs(b.p, f);
	}
	pwrap_buf_free(&b);
}
