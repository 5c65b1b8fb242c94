/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: the decision table.  The graph is an ordered decision
 * diagram (calls happen in stack order), so reducing it the usual way,
 * from the results up, merges nodes with the same future and leaves out a
 * call when all its outcomes lead to the same place: what remains are the
 * calls the result depends on (xp_depends).  Each path of the reduced
 * diagram to a result is a conjunction of conditions "this line returned
 * one of these codes"; each is then widened as far as it stays sufficient
 * for that result (a condition dropped, a code added), and conjunctions
 * another one covers are dropped, which gives short conditions such as
 * "PAM_SUCCESS iff common-auth:1 pam_unix = success".
 */
#define _GNU_SOURCE
#include "explore.h"

#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TERMS 256	/* listed per result; the rest is counted */

static int cmp_pos_desc(const void *a, const void *b, void *ctx)
{
	const struct xp_graph *g = ctx;
	int pa = g->nodes[*(const int *)a].st.pos;
	int pb = g->nodes[*(const int *)b].st.pos;

	pa = pa < 0 ? 1 << 30 : pa;
	pb = pb < 0 ? 1 << 30 : pb;
	return pb - pa;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct xp_redge *x = a, *y = b;

	return x->to - y->to;
}

static int add_rnode(struct xp_report *r, int pos, int result,
		     struct xp_redge *e, size_t ne)
{
	struct xp_rnode *v = reallocarray(r->rd, r->nrd + 1, sizeof(*v));

	if (v == NULL)
		return -1;
	r->rd = v;
	v[r->nrd] = (struct xp_rnode){ pos, result, e, ne };
	return (int)r->nrd++;
}

/* Reduces the graph: canon[n] is node n's node in r->rd. */
static int reduce(struct xp_report *r)
{
	const struct xp_graph *g = &r->g;
	int *order = malloc(g->nnodes * sizeof(*order));
	int *canon = malloc(g->nnodes * sizeof(*canon));
	size_t same_pos = 0;	/* first rnode at the position being done */
	int rc = -1, last_pos = -2;

	if (order == NULL || canon == NULL)
		goto out;
	for (size_t n = 0; n < g->nnodes; n++)
		order[n] = (int)n;
	qsort_r(order, g->nnodes, sizeof(*order), cmp_pos_desc, (void *)g);
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct xp_node *nd = &g->nodes[order[i]];
		struct xp_redge *e;
		size_t ne = 0;
		int found = -1;

		if (nd->st.pos != last_pos) {
			same_pos = r->nrd;
			last_pos = nd->st.pos;
		}
		if (nd->st.pos < 0) {
			for (size_t k = same_pos; k < r->nrd && found < 0; k++)
				if (r->rd[k].result == nd->result)
					found = (int)k;
			if (found < 0)
				found = add_rnode(r, -1, nd->result, NULL, 0);
			if ((canon[order[i]] = found) < 0)
				goto out;
			continue;
		}
		e = calloc(nd->ne, sizeof(*e));
		if (e == NULL)
			goto out;
		for (size_t k = 0; k < nd->ne; k++) {
			size_t j;

			for (j = 0; j < ne && e[j].to != canon[nd->e[k].to]; j++)
				;
			if (j == ne)
				e[ne++].to = canon[nd->e[k].to];
			e[j].codes |= nd->e[k].outcomes;
		}
		if (ne == 1) {	/* the outcome does not matter here */
			canon[order[i]] = e[0].to;
			free(e);
			continue;
		}
		qsort(e, ne, sizeof(*e), cmp_edge);
		for (size_t k = same_pos; k < r->nrd && found < 0; k++)
			if (r->rd[k].ne == ne &&
			    memcmp(r->rd[k].e, e, ne * sizeof(*e)) == 0)
				found = (int)k;
		if (found >= 0) {
			free(e);
		} else if ((found = add_rnode(r, nd->st.pos, -1, e, ne)) < 0) {
			free(e);
			goto out;
		}
		canon[order[i]] = found;
	}
	r->rroot = canon[g->root];
	rc = 0;
out:
	free(order);
	free(canon);
	return rc;
}

bool xp_depends(const struct xp_report *r, int pos)
{
	for (size_t i = 0; i < r->nrd; i++)
		if (r->rd[i].pos == pos)
			return true;
	return false;
}

/* ---- conditions ------------------------------------------------------------ */

struct walk {
	struct xp_report *r;
	xp_set *lit;		/* per position: allowed codes (term) */
	unsigned *stamp;	/* per rnode: visited in check `now` */
	unsigned now;
	struct xp_lit *stack;
	size_t depth;
	unsigned long budget;	/* steps left for listing terms */
};

/* Whether every assignment the term allows ends in `result`. */
static bool implies(struct walk *w, int rn, int result)
{
	const struct xp_rnode *n = &w->r->rd[rn];

	if (n->pos < 0)
		return n->result == result;
	if (w->stamp[rn] == w->now)
		return true;
	w->stamp[rn] = w->now;
	for (size_t k = 0; k < n->ne; k++)
		if ((n->e[k].codes & w->lit[n->pos]) &&
		    !implies(w, n->e[k].to, result))
			return false;
	return true;
}

static bool check(struct walk *w, const struct xp_term *t, int result)
{
	const struct xp_graph *g = &w->r->g;

	for (size_t i = 0; i < g->nseq; i++)
		w->lit[i] = xp_codes_at(g, (int)i);
	for (size_t i = 0; i < t->n; i++)
		w->lit[t->l[i].pos] = t->l[i].codes;
	w->now++;
	return implies(w, w->r->rroot, result);
}

/* Widens term t while it still implies `result`; drops full conditions. */
static void widen(struct walk *w, struct xp_term *t, int result)
{
	const struct xp_graph *g = &w->r->g;

	for (size_t i = 0; i < t->n; i++) {
		xp_set keep = t->l[i].codes;

		t->l[i].codes = xp_codes_at(g, t->l[i].pos);
		if (!check(w, t, result))
			t->l[i].codes = keep;
	}
	for (size_t i = 0; i < t->n; i++) {
		xp_set all = xp_codes_at(g, t->l[i].pos);

		for (int c = 0; c < 64; c++) {
			if (!(all & XP_BIT(c)) || (t->l[i].codes & XP_BIT(c)))
				continue;
			t->l[i].codes |= XP_BIT(c);
			if (!check(w, t, result))
				t->l[i].codes &= ~XP_BIT(c);
		}
	}
	for (size_t i = 0; i < t->n;) {
		if (t->l[i].codes == xp_codes_at(g, t->l[i].pos))
			t->l[i] = t->l[--t->n];
		else
			i++;
	}
}

/* Whether term a allows everything term b allows. */
static bool covers(const struct xp_term *a, const struct xp_term *b)
{
	for (size_t i = 0; i < a->n; i++) {
		size_t j;

		for (j = 0; j < b->n && b->l[j].pos != a->l[i].pos; j++)
			;
		if (j == b->n || (b->l[j].codes & ~a->l[i].codes))
			return false;
	}
	return true;
}

static struct xp_cond *cond_of(struct xp_report *r, int result)
{
	for (size_t i = 0; i < r->ntable; i++)
		if (r->table[i].result == result)
			return &r->table[i];
	return NULL;
}

/* Lists the paths of the reduced diagram into each result's terms. */
static int list(struct walk *w, int rn)
{
	const struct xp_rnode *n = &w->r->rd[rn];

	if (w->budget == 0)
		return 0;
	w->budget--;
	if (n->pos < 0) {
		struct xp_cond *c = cond_of(w->r, n->result);
		struct xp_term *t;

		if (c == NULL)
			return 0;
		if (c->n >= MAX_TERMS) {
			c->more++;
			return 0;
		}
		t = reallocarray(c->t, c->n + 1, sizeof(*t));
		if (t == NULL)
			return -1;
		c->t = t;
		t = &t[c->n];
		t->n = w->depth;
		t->l = malloc((w->depth + 1) * sizeof(*t->l));
		if (t->l == NULL)
			return -1;
		memcpy(t->l, w->stack, w->depth * sizeof(*t->l));
		c->n++;
		return 0;
	}
	for (size_t k = 0; k < n->ne; k++) {
		w->stack[w->depth].pos = n->pos;
		w->stack[w->depth].codes = n->e[k].codes;
		w->depth++;
		if (list(w, n->e[k].to) != 0)
			return -1;
		w->depth--;
	}
	return 0;
}

static int cmp_term(const void *a, const void *b)
{
	const struct xp_term *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	for (size_t i = 0; i < x->n; i++)
		if (x->l[i].pos != y->l[i].pos)
			return x->l[i].pos - y->l[i].pos;
	return 0;
}

static int cmp_lit(const void *a, const void *b)
{
	return ((const struct xp_lit *)a)->pos - ((const struct xp_lit *)b)->pos;
}

int xp_table(struct xp_report *r)
{
	const struct xp_graph *g = &r->g;
	struct walk w = { .r = r, .budget = 1000000 };
	xp_set results = g->nodes[g->root].reach;
	int rc = -1;

	if (reduce(r) != 0)
		return -1;
	/* PAM_SUCCESS first, then the other results in code order */
	r->table = calloc(64, sizeof(*r->table));
	if (r->table == NULL)
		return -1;
	for (int c = 0; c < 64; c++)
		if (results & XP_BIT(c))
			r->table[r->ntable++].result = c;
	w.lit = calloc(g->nseq + 1, sizeof(*w.lit));
	w.stamp = calloc(r->nrd + 1, sizeof(*w.stamp));
	w.stack = calloc(g->nseq + 1, sizeof(*w.stack));
	if (w.lit == NULL || w.stamp == NULL || w.stack == NULL ||
	    list(&w, r->rroot) != 0)
		goto out;
	for (size_t i = 0; i < r->ntable; i++) {
		struct xp_cond *c = &r->table[i];

		for (size_t k = 0; k < c->n; k++) {
			widen(&w, &c->t[k], c->result);
			qsort(c->t[k].l, c->t[k].n, sizeof(*c->t[k].l), cmp_lit);
		}
		for (size_t k = 0; k < c->n;) {
			bool dup = false;

			for (size_t j = 0; j < c->n && !dup; j++)
				dup = j != k && covers(&c->t[j], &c->t[k]) &&
				      (!covers(&c->t[k], &c->t[j]) || j < k);
			if (dup) {
				free(c->t[k].l);
				c->t[k] = c->t[--c->n];
			} else {
				k++;
			}
		}
		qsort(c->t, c->n, sizeof(*c->t), cmp_term);
	}
	rc = 0;
out:
	free(w.lit);
	free(w.stamp);
	free(w.stack);
	return rc;
}

void xp_table_free(struct xp_report *r)
{
	for (size_t i = 0; i < r->ntable; i++) {
		for (size_t k = 0; k < r->table[i].n; k++)
			free(r->table[i].t[k].l);
		free(r->table[i].t);
	}
	free(r->table);
	for (size_t i = 0; i < r->nrd; i++)
		free(r->rd[i].e);
	free(r->rd);
	r->table = NULL;
	r->rd = NULL;
	r->ntable = r->nrd = 0;
}
