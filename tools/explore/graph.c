/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, stage 3: the graph of a stack.  A node is the dispatch
 * state before a module call (step_linux.c / step_openpam.c say what the
 * state holds) or a result; an edge is the set of outcomes of that call
 * that lead to the same next node.  What libpam does next depends on the
 * state only, so states reached by different outcomes merge and the graph
 * grows with the stack's length, not with the number of paths.  Nodes are
 * found again through a hash table over the state's bytes (states are
 * zeroed before they are filled, so equal states have equal bytes).
 *
 * Also here: the replay set, a few paths that between them take every edge
 * (replay.c runs them on libpam).
 */
#define _GNU_SOURCE
#include "explore.h"

#include <stdlib.h>
#include <string.h>

/* ---- building ------------------------------------------------------------- */

static uint64_t hash_state(const struct xp_state *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*s); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static int grow_hash(struct xp_graph *g)
{
	size_t cap = g->hcap ? g->hcap * 2 : 256;
	int *h = malloc(cap * sizeof(*h));

	if (h == NULL)
		return -1;
	for (size_t i = 0; i < cap; i++)
		h[i] = -1;
	for (size_t n = 0; n < g->nnodes; n++) {
		size_t i = hash_state(&g->nodes[n].st) & (cap - 1);

		while (h[i] >= 0)
			i = (i + 1) & (cap - 1);
		h[i] = (int)n;
	}
	free(g->hash);
	g->hash = h;
	g->hcap = cap;
	return 0;
}

/* The node of state s (added when new, with its way here): index or -1. */
static int node_of(struct xp_graph *g, const struct xp_state *s, int parent,
		   int code)
{
	size_t i;
	struct xp_node *n;

	if ((g->nnodes + 1) * 2 > g->hcap && grow_hash(g) != 0)
		return -1;
	for (i = hash_state(s) & (g->hcap - 1); g->hash[i] >= 0;
	     i = (i + 1) & (g->hcap - 1))
		if (memcmp(&g->nodes[g->hash[i]].st, s, sizeof(*s)) == 0)
			return g->hash[i];
	if (g->nnodes == g->capnodes) {
		size_t cap = g->capnodes ? g->capnodes * 2 : 64;
		struct xp_node *v = reallocarray(g->nodes, cap, sizeof(*v));

		if (v == NULL)
			return -1;
		g->nodes = v;
		g->capnodes = cap;
	}
	n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof(*n));
	n->st = *s;
	n->result = s->pos < 0 ? s->status : -1;
	n->parent = parent;
	n->parent_code = code;
	g->hash[i] = (int)g->nnodes;
	return (int)g->nnodes++;
}

static int result_node(struct xp_graph *g, int code, int parent, int pcode)
{
	struct xp_state s;

	memset(&s, 0, sizeof(s));
	s.pos = -1;
	s.status = (unsigned char)code;
	return node_of(g, &s, parent, pcode);
}

static int add_edge(struct xp_node *n, int to, int code)
{
	struct xp_edge *e;

	for (size_t i = 0; i < n->ne; i++) {
		if (n->e[i].to == to) {
			n->e[i].outcomes |= XP_BIT(code);
			return 0;
		}
	}
	e = reallocarray(n->e, n->ne + 1, sizeof(*e));
	if (e == NULL)
		return -1;
	n->e = e;
	e[n->ne].to = to;
	e[n->ne].outcomes = XP_BIT(code);
	n->ne++;
	return 0;
}

xp_set xp_codes_at(const struct xp_graph *g, int pos)
{
	const struct xp_line *l = g->seq[pos].l;

	return l->kind == XP_CALL ? l->outcomes : XP_BIT(l->fixed);
}

static int cover(struct xp_graph *g);

static int cmp_pos_desc(const void *a, const void *b, void *ctx)
{
	const struct xp_graph *g = ctx;
	int pa = g->nodes[*(const int *)a].st.pos;
	int pb = g->nodes[*(const int *)b].st.pos;

	if (pa < 0)
		pa = 1 << 30;
	if (pb < 0)
		pb = 1 << 30;
	return pb - pa;
}

int xp_graph_build(struct xp_graph *g, const struct xp_conf *c,
		   enum xp_type t, bool all)
{
	const struct xp_stack *st = xp_stack_of(c, t);
	struct xp_state s, next;
	int *order = NULL, r;

	memset(g, 0, sizeof(*g));
	g->conf = c;
	g->type = t;
	g->replay_all = all;
	g->npasses = t == XP_PASSWORD ? 2 : 1;
	g->perpass = st->n;
	g->nseq = st->n * (size_t)g->npasses;
	g->seq = calloc(g->nseq > 0 ? g->nseq : 1, sizeof(*g->seq));
	if (g->seq == NULL)
		return -1;
	for (size_t i = 0; i < g->nseq; i++) {
		g->seq[i].l = &st->v[i % st->n];
		g->seq[i].pass = (int)(i / st->n);
	}
	r = c->impl->begin(g, 0, &s);
	g->root = r >= 0 ? result_node(g, r, -1, -1) : node_of(g, &s, -1, -1);
	if (g->root < 0)
		return -1;
	/* nodes are appended as found: the array is the breadth-first queue */
	for (size_t n = 0; n < g->nnodes; n++) {
		xp_set set;

		if (g->nodes[n].st.pos < 0)
			continue;
		set = xp_codes_at(g, g->nodes[n].st.pos);
		for (int code = 0; code < 64; code++) {
			int to;

			if (!(set & XP_BIT(code)))
				continue;
			s = g->nodes[n].st;
			r = c->impl->step(g, &s, code, &next);
			to = r >= 0 ? result_node(g, r, (int)n, code)
				    : node_of(g, &next, (int)n, code);
			if (to < 0 || add_edge(&g->nodes[n], to, code) != 0)
				return -1;
		}
		g->nedges += g->nodes[n].ne;
	}
	/* what each node can still lead to: edges go to later positions */
	order = malloc(g->nnodes * sizeof(*order));
	if (order == NULL)
		return -1;
	for (size_t n = 0; n < g->nnodes; n++)
		order[n] = (int)n;
	qsort_r(order, g->nnodes, sizeof(*order), cmp_pos_desc, g);
	for (size_t i = 0; i < g->nnodes; i++) {
		struct xp_node *n = &g->nodes[order[i]];

		n->reach = n->st.pos < 0 ? XP_BIT(n->result) : 0;
		for (size_t k = 0; k < n->ne; k++)
			n->reach |= g->nodes[n->e[k].to].reach;
	}
	/* how many outcome sequences (paths through the stack) there are:
	 * walked from the root down, in the reverse of that order */
	{
		double *ways = calloc(g->nnodes, sizeof(*ways));

		if (ways == NULL) {
			free(order);
			return -1;
		}
		ways[g->root] = 1;
		for (size_t i = g->nnodes; i-- > 0;) {
			const struct xp_node *n = &g->nodes[order[i]];

			if (n->st.pos < 0)
				g->npaths_all += ways[order[i]];
			for (size_t k = 0; k < n->ne; k++)
				ways[n->e[k].to] += ways[order[i]] *
					__builtin_popcountll(n->e[k].outcomes);
		}
		free(ways);
	}
	free(order);
	return cover(g);
}

void xp_path_free(struct xp_path *p)
{
	free(p->c);
	memset(p, 0, sizeof(*p));
}

void xp_graph_free(struct xp_graph *g)
{
	for (size_t n = 0; n < g->nnodes; n++)
		free(g->nodes[n].e);
	for (size_t i = 0; i < g->npaths; i++)
		xp_path_free(&g->paths[i]);
	free(g->paths);
	free(g->nodes);
	free(g->hash);
	free(g->seq);
	memset(g, 0, sizeof(*g));
}

/* ---- paths ---------------------------------------------------------------- */

static int push(struct xp_path *p, int pos, int code)
{
	struct xp_call *c = reallocarray(p->c, p->n + 1, sizeof(*c));

	if (c == NULL)
		return -1;
	p->c = c;
	c[p->n].pos = pos;
	c[p->n].code = code;
	p->n++;
	return 0;
}

int xp_path_to(const struct xp_graph *g, int n, struct xp_path *p)
{
	size_t depth = 0, at = p->n;

	for (int m = n; g->nodes[m].parent >= 0; m = g->nodes[m].parent)
		depth++;
	for (size_t i = 0; i < depth; i++)
		if (push(p, 0, 0) != 0)
			return -1;
	for (int m = n; g->nodes[m].parent >= 0; m = g->nodes[m].parent) {
		const struct xp_node *up = &g->nodes[g->nodes[m].parent];

		depth--;
		p->c[at + depth].pos = up->st.pos;
		p->c[at + depth].code = g->nodes[m].parent_code;
	}
	return 0;
}

/* The edge of node n that code takes. */
static size_t edge_of(const struct xp_node *n, int code)
{
	for (size_t k = 0; k < n->ne; k++)
		if (n->e[k].outcomes & XP_BIT(code))
			return k;
	return 0;
}

/* Appends p to the replay set (which then owns it). */
static int keep_path(struct xp_graph *g, struct xp_path *p)
{
	struct xp_path *v = reallocarray(g->paths, g->npaths + 1, sizeof(*v));

	if (v == NULL) {
		xp_path_free(p);
		return -1;
	}
	g->paths = v;
	v[g->npaths++] = *p;
	return 0;
}

/* What an edge still needs: some outcome (edges) or each (all). */
static xp_set todo(const struct xp_graph *g, const struct xp_edge *e,
		   xp_set done)
{
	if (g->replay_all)
		return e->outcomes & ~done;
	return done ? 0 : e->outcomes;
}

/*
 * The replay set: for each edge no path has taken yet (with replay_all:
 * each outcome of each edge), the way to its node from the root, the
 * edge, and from there edges not taken yet where there are some, down to
 * a result.
 */
static int cover(struct xp_graph *g)
{
	size_t *base = calloc(g->nnodes + 1, sizeof(*base));
	xp_set *done = NULL;
	int rc = -1;

	if (base == NULL)
		return -1;
	if (g->nodes[g->root].st.pos < 0) {	/* no call at all */
		struct xp_path p = { .result = g->nodes[g->root].result };

		free(base);
		return keep_path(g, &p);
	}
	for (size_t n = 0; n < g->nnodes; n++)
		base[n + 1] = base[n] + g->nodes[n].ne;
	done = calloc(base[g->nnodes] + 1, sizeof(*done));
	if (done == NULL)
		goto out;
	for (size_t n = 0; n < g->nnodes; n++) {
		for (size_t k = 0; k < g->nodes[n].ne; k++) {
			while (todo(g, &g->nodes[n].e[k], done[base[n] + k])) {
				struct xp_path p = { 0 };
				size_t e = k;
				int m = (int)n;

				if (xp_path_to(g, m, &p) != 0)
					goto out;
				for (int x = m; g->nodes[x].parent >= 0;
				     x = g->nodes[x].parent) {
					int up = g->nodes[x].parent;
					int c = g->nodes[x].parent_code;

					done[base[up] + edge_of(&g->nodes[up], c)] |= XP_BIT(c);
				}
				while (g->nodes[m].st.pos >= 0) {
					const struct xp_node *cur = &g->nodes[m];
					xp_set want;
					int code;

					if (m != (int)n) {
						e = 0;
						for (size_t j = 0; j < cur->ne; j++) {
							if (todo(g, &cur->e[j], done[base[m] + j])) {
								e = j;
								break;
							}
						}
					}
					want = cur->e[e].outcomes & ~done[base[m] + e];
					code = __builtin_ctzll(want ? want : cur->e[e].outcomes);
					done[base[m] + e] |= XP_BIT(code);
					if (push(&p, cur->st.pos, code) != 0) {
						xp_path_free(&p);
						goto out;
					}
					m = cur->e[e].to;
				}
				p.result = g->nodes[m].result;
				if (keep_path(g, &p) != 0)
					goto out;
			}
		}
	}
	rc = 0;
out:
	free(base);
	free(done);
	return rc;
}
