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
 * Also here: how many paths there are (a count far beyond a double's range,
 * kept as mantissa and exponent), and the replay set (replay.c runs it on
 * libpam): a few paths that between them give every line each of its
 * outcomes and reach every state (as far as its own line tells it: not
 * what substacks saved), or (replay_all) take every outcome of every
 * edge.  Each is the path that meets the most of what is still needed,
 * found by one pass over the graph in reverse topological order.  Every
 * edge would take a number of paths that grows with the stack (a chain of
 * n required lines has an edge into "failed with X" at each line, and a
 * path stays failed once it is), so the replays' calls would grow as n^2;
 * states and outcomes need about as many paths as a line has outcomes.
 */
#define _GNU_SOURCE
#include "explore.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- counts ---------------------------------------------------------------- */

static struct xp_count count_norm(double m, long e)
{
	int k;

	m = frexp(m, &k);
	return (struct xp_count){ m, m == 0 ? 0 : e + k };
}

struct xp_count xp_count_add(struct xp_count a, struct xp_count b)
{
	if (b.m == 0 || (a.m != 0 && a.e - b.e > 64)) {
		return a;
	}
	if (a.m == 0 || b.e - a.e > 64) {
		return b;
	}
	if (a.e < b.e) {
		struct xp_count t = a;

		a = b;
		b = t;
	}
	return count_norm(a.m + ldexp(b.m, (int)(b.e - a.e)), a.e);
}

struct xp_count xp_count_sub(struct xp_count c, size_t k)
{
	uint64_t v;

	return xp_count_exact(c, &v) ? count_norm((double)(v - k), 0) : c;
}

bool xp_count_exact(struct xp_count c, uint64_t *v)
{
	/* the sums are exact below 2^53 (53-bit mantissas, integers) */
	if (c.m == 0 || c.e <= 53) {
		*v = c.m == 0 ? 0 : (uint64_t)ldexp(c.m, (int)c.e);
		return c.m == 0 || ldexp(c.m, (int)c.e) < 0x1p53;
	}
	return false;
}

double xp_count_log10(struct xp_count c)
{
	return c.m == 0 ? 0 : log10(c.m) + (double)c.e * log10(2.0);
}

/* ---- building ------------------------------------------------------------- */

static uint64_t hash_state(const struct xp_state *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*s); i++) {
		h = (h ^ p[i]) * 1099511628211ull;
	}
	return h;
}

static int grow_hash(struct xp_graph *g)
{
	size_t cap = g->hcap ? g->hcap * 2 : 256;
	int *h = malloc(cap * sizeof(*h));

	if (h == NULL) {
		return -1;
	}
	for (size_t i = 0; i < cap; i++) {
		h[i] = -1;
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		size_t i = hash_state(&g->nodes[n].st) & (cap - 1);

		while (h[i] >= 0) {
			i = (i + 1) & (cap - 1);
		}
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

	if ((g->nnodes + 1) * 2 > g->hcap && grow_hash(g) != 0) {
		return -1;
	}
	for (i = hash_state(s) & (g->hcap - 1); g->hash[i] >= 0;
	     i = (i + 1) & (g->hcap - 1)) {
		if (memcmp(&g->nodes[g->hash[i]].st, s, sizeof(*s)) == 0) {
			return g->hash[i];
		}
	}
	if (g->nnodes == g->capnodes) {
		size_t cap = g->capnodes ? g->capnodes * 2 : 64;
		struct xp_node *v = reallocarray(g->nodes, cap, sizeof(*v));

		if (v == NULL) {
			return -1;
		}
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
	if (e == NULL) {
		return -1;
	}
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

/* How many outcome sequences (paths through the stack) there are: walked
 * from the root down, in the reverse of g->order. */
static int count_paths(struct xp_graph *g)
{
	struct xp_count *ways = calloc(g->nnodes, sizeof(*ways));

	if (ways == NULL) {
		return -1;
	}
	ways[g->root] = (struct xp_count){ 0.5, 1 };
	for (size_t i = g->nnodes; i-- > 0;) {
		const struct xp_node *n = &g->nodes[g->order[i]];
		struct xp_count w = ways[g->order[i]];

		if (n->st.pos < 0) {
			g->npaths_all = xp_count_add(g->npaths_all, w);
		}
		for (size_t k = 0; k < n->ne; k++) {
			int m = __builtin_popcountll(n->e[k].outcomes);

			ways[n->e[k].to] = xp_count_add(ways[n->e[k].to],
						     count_norm(w.m * m, w.e));
		}
	}
	free(ways);
	return 0;
}

static int cmp_pos_desc(const void *a, const void *b, void *ctx)
{
	const struct xp_graph *g = ctx;
	int pa = g->nodes[*(const int *)a].st.pos;
	int pb = g->nodes[*(const int *)b].st.pos;

	if (pa < 0) {
		pa = 1 << 30;
	}
	if (pb < 0) {
		pb = 1 << 30;
	}
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
	if (g->seq == NULL) {
		return -1;
	}
	for (size_t i = 0; i < g->nseq; i++) {
		g->seq[i].l = &st->v[i % st->n];
		g->seq[i].pass = (int)(i / st->n);
	}
	r = c->impl->begin(g, 0, &s);
	g->root = r >= 0 ? result_node(g, r, -1, -1) : node_of(g, &s, -1, -1);
	if (g->root < 0) {
		return -1;
	}
	/* nodes are appended as found: the array is the breadth-first queue */
	for (size_t n = 0; n < g->nnodes; n++) {
		xp_set set;

		if (g->nodes[n].st.pos < 0) {
			continue;
		}
		set = xp_codes_at(g, g->nodes[n].st.pos);
		for (int code = 0; code < 64; code++) {
			int to;

			if (!(set & XP_BIT(code))) {
				continue;
			}
			s = g->nodes[n].st;
			r = c->impl->step(g, &s, code, &next);
			to = r >= 0 ? result_node(g, r, (int)n, code)
				    : node_of(g, &next, (int)n, code);
			if (to < 0 || add_edge(&g->nodes[n], to, code) != 0) {
				return -1;
			}
		}
		g->nedges += g->nodes[n].ne;
	}
	/* what each node can still lead to: edges go to later positions */
	order = malloc(g->nnodes * sizeof(*order));
	if (order == NULL) {
		return -1;
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		order[n] = (int)n;
	}
	qsort_r(order, g->nnodes, sizeof(*order), cmp_pos_desc, g);
	for (size_t i = 0; i < g->nnodes; i++) {
		struct xp_node *n = &g->nodes[order[i]];

		n->reach = n->st.pos < 0 ? XP_BIT(n->result) : 0;
		for (size_t k = 0; k < n->ne; k++) {
			n->reach |= g->nodes[n->e[k].to].reach;
		}
	}
	g->order = order;
	return count_paths(g) != 0 ? -1 : cover(g);
}

void xp_path_free(struct xp_path *p)
{
	free(p->c);
	memset(p, 0, sizeof(*p));
}

void xp_graph_free(struct xp_graph *g)
{
	for (size_t n = 0; n < g->nnodes; n++) {
		free(g->nodes[n].e);
	}
	for (size_t i = 0; i < g->npaths; i++) {
		xp_path_free(&g->paths[i]);
	}
	free(g->paths);
	free(g->order);
	free(g->nodes);
	free(g->hash);
	free(g->seq);
	memset(g, 0, sizeof(*g));
}

/* ---- paths ---------------------------------------------------------------- */

int xp_path_push(struct xp_path *p, int pos, int code)
{
	struct xp_call *c = reallocarray(p->c, p->n + 1, sizeof(*c));

	if (c == NULL) {
		return -1;
	}
	p->c = c;
	c[p->n].pos = pos;
	c[p->n].code = code;
	p->n++;
	return 0;
}

int xp_path_to(const struct xp_graph *g, int n, struct xp_path *p)
{
	size_t depth = 0, at = p->n;

	for (int m = n; g->nodes[m].parent >= 0; m = g->nodes[m].parent) {
		depth++;
	}
	for (size_t i = 0; i < depth; i++) {
		if (xp_path_push(p, 0, 0) != 0) {
			return -1;
		}
	}
	for (int m = n; g->nodes[m].parent >= 0; m = g->nodes[m].parent) {
		const struct xp_node *up = &g->nodes[g->nodes[m].parent];

		depth--;
		p->c[at + depth].pos = up->st.pos;
		p->c[at + depth].code = g->nodes[m].parent_code;
	}
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

/* What the replay set still needs: with replay_all every outcome of every
 * edge (done: per edge), else every outcome of every position (posdone)
 * and every state as far as its own line tells it (cls: per node, the
 * class of its state without what substacks saved; seen: per class). */
struct need {
	size_t *base;		/* node n's edges: base[n]... */
	xp_set *done;
	xp_set *posdone;
	int *cls;
	bool *seen;
};

/* The classes of the nodes' states without what substacks saved: a state
 * saved on entering the k-th of n substacks would make each line of them
 * need paths of its own, n * n calls (a node is still reached through one
 * class or another).  0, or -1. */
static int classes(const struct xp_graph *g, struct need *nd)
{
	size_t cap = 64;
	int *h, ncls = 0;
	struct xp_state *key = calloc(g->nnodes + 1, sizeof(*key));

	while (cap < g->nnodes * 2) {
		cap *= 2;
	}
	h = malloc(cap * sizeof(*h));
	if (h == NULL || key == NULL) {
		free(h);
		free(key);
		return -1;
	}
	for (size_t i = 0; i < cap; i++) {
		h[i] = -1;
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		struct xp_state s = g->nodes[n].st;
		size_t i;

		memset(s.saved, 0, sizeof(s.saved));
		for (i = hash_state(&s) & (cap - 1);
		     h[i] >= 0 && memcmp(&key[h[i]], &s, sizeof(s)) != 0;
		     i = (i + 1) & (cap - 1)) {
			;
		}
		if (h[i] < 0) {
			key[ncls] = s;
			h[i] = ncls++;
		}
		nd->cls[n] = h[i];
	}
	free(h);
	free(key);
	return 0;
}

/* The outcomes of edge k of node n that a path would take anew. */
static xp_set fresh(const struct xp_graph *g, const struct need *nd, int n,
		    size_t k)
{
	const struct xp_node *x = &g->nodes[n];

	return x->e[k].outcomes & ~(g->replay_all ? nd->done[nd->base[n] + k]
						  : nd->posdone[x->st.pos]);
}

/* best[n]: how many needs the best path from n on meets; choice[n]: its
 * edge.  Nodes in g->order: each one's successors come before it. */
static void plan(const struct xp_graph *g, const struct need *nd, size_t *best,
		 size_t *choice)
{
	for (size_t i = 0; i < g->nnodes; i++) {
		int n = g->order[i];
		const struct xp_node *x = &g->nodes[n];

		best[n] = 0;
		choice[n] = 0;
		for (size_t k = 0; k < x->ne; k++) {
			size_t b = best[x->e[k].to] + (fresh(g, nd, n, k) != 0);

			if (b > best[n]) {
				best[n] = b;
				choice[n] = k;
			}
		}
		best[n] += !g->replay_all && !nd->seen[nd->cls[n]];
	}
}

/*
 * The replay set: while something is still needed (see struct need), the
 * path from the root that meets the most of it, each call with an outcome
 * it needs where there is one.  Everything can be reached from the root,
 * so each path meets at least one need.
 */
static int cover(struct xp_graph *g)
{
	struct need nd = { 0 };
	size_t *best = calloc(g->nnodes + 1, sizeof(*best));
	size_t *choice = calloc(g->nnodes + 1, sizeof(*choice));
	int rc = -1;

	nd.base = calloc(g->nnodes + 1, sizeof(*nd.base));
	nd.seen = calloc(g->nnodes + 1, sizeof(*nd.seen));
	nd.cls = calloc(g->nnodes + 1, sizeof(*nd.cls));
	nd.posdone = calloc(g->nseq + 1, sizeof(*nd.posdone));
	if (best == NULL || choice == NULL || nd.base == NULL ||
	    nd.seen == NULL || nd.cls == NULL || nd.posdone == NULL ||
	    classes(g, &nd) != 0) {
		goto out;
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		nd.base[n + 1] = nd.base[n] + g->nodes[n].ne;
	}
	nd.done = calloc(nd.base[g->nnodes] + 1, sizeof(*nd.done));
	if (nd.done == NULL) {
		goto out;
	}
	for (;;) {
		struct xp_path p = { 0 };
		int m = g->root;

		plan(g, &nd, best, choice);
		if (best[g->root] == 0 && g->npaths > 0) {
			break;
		}
		for (;;) {
			const struct xp_node *cur = &g->nodes[m];
			xp_set want;
			int code;

			nd.seen[nd.cls[m]] = true;
			if (cur->st.pos < 0) {
				break;
			}
			want = fresh(g, &nd, m, choice[m]);
			code = __builtin_ctzll(want ? want : cur->e[choice[m]].outcomes);
			nd.done[nd.base[m] + choice[m]] |= XP_BIT(code);
			nd.posdone[cur->st.pos] |= XP_BIT(code);
			if (xp_path_push(&p, cur->st.pos, code) != 0) {
				xp_path_free(&p);
				goto out;
			}
			m = cur->e[choice[m]].to;
		}
		p.result = g->nodes[m].result;
		if (keep_path(g, &p) != 0) {
			goto out;
		}
	}
	rc = 0;
out:
	free(best);
	free(choice);
	free(nd.base);
	free(nd.seen);
	free(nd.cls);
	free(nd.posdone);
	free(nd.done);
	return rc;
}
