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

#define MAX_TERMS 256	/* listed per result at most; the rest counted */

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

	if (v == NULL) {
		return -1;
	}
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

	if (order == NULL || canon == NULL) {
		goto out;
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		order[n] = (int)n;
	}
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
			for (size_t k = same_pos; k < r->nrd && found < 0;
			     k++) {
				if (r->rd[k].result == nd->result) {
					found = (int)k;
				}
			}
			if (found < 0) {
				found = add_rnode(r, -1, nd->result, NULL, 0);
			}
			if ((canon[order[i]] = found) < 0) {
				goto out;
			}
			continue;
		}
		e = calloc(nd->ne, sizeof(*e));
		if (e == NULL) {
			goto out;
		}
		for (size_t k = 0; k < nd->ne; k++) {
			size_t j;

			for (j = 0; j < ne && e[j].to != canon[nd->e[k].to];
			     j++) {
				;
			}
			if (j == ne) {
				e[ne++].to = canon[nd->e[k].to];
			}
			e[j].codes |= nd->e[k].outcomes;
		}
		if (ne == 1) {	/* the outcome does not matter here */
			canon[order[i]] = e[0].to;
			free(e);
			continue;
		}
		qsort(e, ne, sizeof(*e), cmp_edge);
		for (size_t k = same_pos; k < r->nrd && found < 0; k++) {
			if (r->rd[k].ne == ne &&
			    memcmp(r->rd[k].e, e, ne * sizeof(*e)) == 0) {
				found = (int)k;
			}
		}
		if (found >= 0) {
			free(e);
		} else if ((found = add_rnode(r, nd->st.pos, -1, e, ne)) < 0) {
			free(e);
			goto out;
		}
		canon[order[i]] = found;
	}
	r->rroot = canon[g->root];
	r->dep = calloc(g->nseq + 1, sizeof(*r->dep));
	if (r->dep == NULL) {
		goto out;
	}
	for (size_t i = 0; i < r->nrd; i++) {
		if (r->rd[i].pos >= 0) {
			r->dep[r->rd[i].pos] = true;
		}
	}
	rc = 0;
out:
	free(order);
	free(canon);
	return rc;
}

bool xp_depends(const struct xp_report *r, int pos)
{
	return r->dep != NULL && r->dep[pos];
}

/* ---- conditions ------------------------------------------------------------ */

/*
 * The table's size and the work on it are bounded, so that a long stack
 * (whose conditions can have as many terms as it has lines, each as long)
 * gives a table that grows with it linearly: each result lists terms while
 * they hold at most LIT_BUDGET literals (or as many as the stack has
 * positions, if more) and MAX_TERMS terms, the rest is counted; terms are
 * widened while WIDEN_STEPS visits of the diagram last, later ones are
 * listed as found (still exact, only longer than they need be).
 */
#define LIT_BUDGET 1024
#define WIDEN_STEPS 20000000ul
#define LIST_STEPS 1000000ul

struct walk {
	struct xp_report *r;
	xp_set *lit;		/* per position: allowed codes (term) */
	unsigned *stamp;	/* per rnode: visited in check `now` */
	unsigned now;
	int *todo;		/* implies()'s stack of rnodes */
	struct xp_lit *stack;
	size_t depth;
	unsigned long budget;	/* steps left for listing terms */
	unsigned long steps;	/* visits left for widening */
	size_t maxlits;		/* literals a result may list */
};

/* Whether every assignment the term allows ends in `result` (false, too,
 * when the visits for widening run out). */
static bool implies(struct walk *w, int result)
{
	size_t top = 0;

	w->now++;
	w->todo[top++] = w->r->rroot;
	w->stamp[w->r->rroot] = w->now;
	while (top > 0) {
		const struct xp_rnode *n = &w->r->rd[w->todo[--top]];

		if (w->steps == 0) {
			return false;
		}
		w->steps--;
		if (n->pos < 0) {
			if (n->result != result) {
				return false;
			}
			continue;
		}
		for (size_t k = 0; k < n->ne; k++) {
			int to = n->e[k].to;

			if ((n->e[k].codes & w->lit[n->pos]) &&
			    w->stamp[to] != w->now) {
				w->stamp[to] = w->now;
				w->todo[top++] = to;
			}
		}
	}
	return true;
}

/* Whether term t implies `result`; w->lit is every position's full set
 * before and after. */
static bool check(struct walk *w, const struct xp_term *t, int result)
{
	const struct xp_graph *g = &w->r->g;
	bool ok;

	for (size_t i = 0; i < t->n; i++) {
		w->lit[t->l[i].pos] = t->l[i].codes;
	}
	ok = implies(w, result);
	for (size_t i = 0; i < t->n; i++) {
		w->lit[t->l[i].pos] = xp_codes_at(g, t->l[i].pos);
	}
	return ok;
}

/* Widens term t while it still implies `result`; drops full conditions. */
static void widen(struct walk *w, struct xp_term *t, int result)
{
	const struct xp_graph *g = &w->r->g;

	for (size_t i = 0; i < t->n && w->steps > 0; i++) {
		xp_set keep = t->l[i].codes;

		t->l[i].codes = xp_codes_at(g, t->l[i].pos);
		if (!check(w, t, result)) {
			t->l[i].codes = keep;
		}
	}
	for (size_t i = 0; i < t->n && w->steps > 0; i++) {
		xp_set all = xp_codes_at(g, t->l[i].pos);

		for (int c = 0; c < 64; c++) {
			if (!(all & XP_BIT(c)) || (t->l[i].codes & XP_BIT(c))) {
				continue;
			}
			t->l[i].codes |= XP_BIT(c);
			if (!check(w, t, result)) {
				t->l[i].codes &= ~XP_BIT(c);
			}
		}
	}
	for (size_t i = 0; i < t->n;) {
		if (t->l[i].codes == xp_codes_at(g, t->l[i].pos)) {
			t->l[i] = t->l[--t->n];
		} else {
			i++;
		}
	}
}

/* Whether term a allows everything term b allows (literals by position). */
static bool covers(const struct xp_term *a, const struct xp_term *b)
{
	size_t j = 0;

	for (size_t i = 0; i < a->n; i++) {
		while (j < b->n && b->l[j].pos < a->l[i].pos) {
			j++;
		}
		if (j == b->n || b->l[j].pos != a->l[i].pos ||
		    (b->l[j].codes & ~a->l[i].codes)) {
			return false;
		}
	}
	return true;
}

static struct xp_cond *cond_of(struct xp_report *r, int result)
{
	for (size_t i = 0; i < r->ntable; i++) {
		if (r->table[i].result == result) {
			return &r->table[i];
		}
	}
	return NULL;
}

/* Adds the term on w->stack to result's condition, if it still may. */
static int add_term(struct walk *w, int result)
{
	struct xp_cond *c = cond_of(w->r, result);
	struct xp_term *t;

	if (c == NULL) {
		return 0;
	}
	if (c->n >= MAX_TERMS || c->lits + w->depth > w->maxlits) {
		return 0;
	}
	t = reallocarray(c->t, c->n + 1, sizeof(*t));
	if (t == NULL) {
		return -1;
	}
	c->t = t;
	t = &t[c->n];
	t->n = w->depth;
	t->l = malloc((w->depth + 1) * sizeof(*t->l));
	if (t->l == NULL) {
		return -1;
	}
	memcpy(t->l, w->stack, w->depth * sizeof(*t->l));
	c->lits += w->depth;
	c->n++;
	return 0;
}

/* Lists the paths of the reduced diagram into each result's terms, depth
 * first (w->stack: the literals so far; w->todo: the edge to take next
 * at each depth), while the listing's steps last. */
static int list(struct walk *w)
{
	size_t *next = calloc(w->r->g.nseq + 2, sizeof(*next));
	int *at = calloc(w->r->g.nseq + 2, sizeof(*at));
	size_t d = 0;
	int rc = -1;

	if (next == NULL || at == NULL) {
		goto out;
	}
	at[0] = w->r->rroot;
	w->depth = 0;
	for (;;) {
		const struct xp_rnode *n = &w->r->rd[at[d]];

		if (w->budget == 0) {
			break;
		}
		w->budget--;
		if (n->pos < 0 || next[d] == n->ne) {
			if (n->pos < 0 && add_term(w, n->result) != 0) {
				goto out;
			}
			if (d == 0) {
				break;
			}
			d--;	/* back to the parent, its next edge */
			w->depth = d;
			continue;
		}
		w->stack[d].pos = n->pos;
		w->stack[d].codes = n->e[next[d]].codes;
		at[d + 1] = n->e[next[d]].to;
		next[d]++;
		next[++d] = 0;
		w->depth = d;
	}
	rc = 0;
out:
	free(next);
	free(at);
	return rc;
}

static int cmp_term(const void *a, const void *b)
{
	const struct xp_term *x = a, *y = b;

	if (x->n != y->n) {
		return x->n < y->n ? -1 : 1;
	}
	for (size_t i = 0; i < x->n; i++) {
		if (x->l[i].pos != y->l[i].pos) {
			return x->l[i].pos - y->l[i].pos;
		}
	}
	return 0;
}

static int cmp_lit(const void *a, const void *b)
{
	return ((const struct xp_lit *)a)->pos - ((const struct xp_lit *)b)->pos;
}

/* How many paths of the reduced diagram end in each result (ways[]: per
 * rnode, from the root; rnodes were added from the results up, so each
 * one's successors come before it). */
static void count_terms(struct xp_report *r, struct xp_count *ways)
{
	ways[r->rroot] = (struct xp_count){ 0.5, 1 };
	for (size_t i = r->nrd; i-- > 0;) {
		const struct xp_rnode *n = &r->rd[i];
		struct xp_cond *c;

		if (n->pos < 0 && (c = cond_of(r, n->result)) != NULL) {
			c->total = xp_count_add(c->total, ways[i]);
		}
		for (size_t k = 0; k < n->ne; k++) {
			ways[n->e[k].to] = xp_count_add(ways[n->e[k].to], ways[i]);
		}
	}
}

/* Widens the terms of c and drops those another one covers. */
static void simplify(struct walk *w, struct xp_cond *c)
{
	for (size_t k = 0; k < c->n; k++) {
		widen(w, &c->t[k], c->result);
		qsort(c->t[k].l, c->t[k].n, sizeof(*c->t[k].l), cmp_lit);
	}
	for (size_t k = 0; k < c->n;) {
		bool dup = false;

		for (size_t j = 0; j < c->n && !dup; j++) {
			dup = j != k && covers(&c->t[j], &c->t[k]) &&
			      (!covers(&c->t[k], &c->t[j]) || j < k);
		}
		if (dup) {
			free(c->t[k].l);
			c->t[k] = c->t[--c->n];
		} else {
			k++;
		}
	}
	qsort(c->t, c->n, sizeof(*c->t), cmp_term);
}

int xp_table(struct xp_report *r)
{
	const struct xp_graph *g = &r->g;
	struct walk w = { .r = r, .budget = LIST_STEPS, .steps = WIDEN_STEPS,
			  .maxlits = g->nseq > LIT_BUDGET ? g->nseq : LIT_BUDGET };
	xp_set results = g->nodes[g->root].reach;
	struct xp_count *ways = NULL;
	int rc = -1;

	if (reduce(r) != 0) {
		return -1;
	}
	/* PAM_SUCCESS first, then the other results in code order */
	r->table = calloc(64, sizeof(*r->table));
	if (r->table == NULL) {
		return -1;
	}
	for (int c = 0; c < 64; c++) {
		if (results & XP_BIT(c)) {
			r->table[r->ntable++].result = c;
		}
	}
	w.lit = calloc(g->nseq + 1, sizeof(*w.lit));
	w.stamp = calloc(r->nrd + 1, sizeof(*w.stamp));
	w.todo = calloc(r->nrd + 1, sizeof(*w.todo));
	w.stack = calloc(g->nseq + 2, sizeof(*w.stack));
	ways = calloc(r->nrd + 1, sizeof(*ways));
	if (w.lit == NULL || w.stamp == NULL || w.todo == NULL ||
	    w.stack == NULL || ways == NULL || list(&w) != 0) {
		goto out;
	}
	for (size_t i = 0; i < g->nseq; i++) {
		w.lit[i] = xp_codes_at(g, (int)i);
	}
	count_terms(r, ways);
	for (size_t i = 0; i < r->ntable; i++) {
		struct xp_cond *c = &r->table[i];

		c->more = xp_count_sub(c->total, c->n);
		simplify(&w, c);
	}
	rc = 0;
out:
	free(w.lit);
	free(w.stamp);
	free(w.todo);
	free(w.stack);
	free(ways);
	return rc;
}

void xp_table_free(struct xp_report *r)
{
	for (size_t i = 0; i < r->ntable; i++) {
		for (size_t k = 0; k < r->table[i].n; k++) {
			free(r->table[i].t[k].l);
		}
		free(r->table[i].t);
	}
	free(r->table);
	for (size_t i = 0; i < r->nrd; i++) {
		free(r->rd[i].e);
	}
	free(r->rd);
	free(r->dep);
	r->table = NULL;
	r->rd = NULL;
	r->dep = NULL;
	r->ntable = r->nrd = 0;
}
