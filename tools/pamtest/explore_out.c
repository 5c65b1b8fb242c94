/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: output.  human is the decision table (one condition per
 * result), the findings and the replay's verdict; json the same plus the
 * replay paths, for programs (pypamtest, the pytest fixture); dot and
 * mermaid the graph itself, states as nodes and outcomes as edges.  With
 * -t all, json is an array of one object per group, dot one digraph with a
 * cluster per group and mermaid one flowchart with a subgraph per group.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_tool.h"

#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[XP_NTYPES] = { "auth", "account",
						   "password", "session" };

/* The line of a position, with the pass for chauthtok. */
static void pos_label(struct sbuf *b, const struct xp_graph *g, int pos)
{
	const struct xp_pos *p = &g->seq[pos];

	sb_addf(b, "%s %s", xp_where(g->conf, p->l), p->l->name);
	if (g->npasses == 2)
		sb_add(b, p->pass == 0 ? " (prelim)" : " (update)");
}

static void codes_list(struct sbuf *b, xp_set s)
{
	const char *sep = "{";

	for (int c = 0; c < 64; c++) {
		if (s & XP_BIT(c)) {
			sb_addf(b, "%s%s", sep, xp_code_word(c));
			sep = ", ";
		}
	}
	sb_add(b, "}");
}

/* "= success", "!= success", "in {a, b}" or "not in {c}". */
static void lit_text(struct sbuf *b, const struct xp_graph *g,
		     const struct xp_lit *l)
{
	xp_set all = xp_codes_at(g, l->pos), rest = all & ~l->codes;
	int n = __builtin_popcountll(l->codes), m = __builtin_popcountll(rest);

	pos_label(b, g, l->pos);
	if (n == 1)
		sb_addf(b, " = %s", xp_code_word(__builtin_ctzll(l->codes)));
	else if (m == 1)
		sb_addf(b, " != %s", xp_code_word(__builtin_ctzll(rest)));
	else if (n <= m) {
		sb_add(b, " in ");
		codes_list(b, l->codes);
	} else {
		sb_add(b, " not in ");
		codes_list(b, rest);
	}
}

static void term_text(struct sbuf *b, const struct xp_graph *g,
		      const struct xp_term *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (i > 0)
			sb_add(b, " and ");
		lit_text(b, g, &t->l[i]);
	}
}

char *xp_path_text(const struct xp_graph *g, const struct xp_path *p)
{
	struct sbuf b = { 0 };

	sb_add(&b, "");
	for (size_t i = 0; i < p->n; i++) {
		sb_add(&b, i ? ", " : "");
		pos_label(&b, g, p->c[i].pos);
		sb_addf(&b, " = %s", xp_code_word(p->c[i].code));
	}
	sb_addf(&b, "%s-> %s", p->n ? " " : "", xp_code_name(p->result));
	if (b.failed) {
		sb_free(&b);
		return NULL;
	}
	return b.s;
}

/* ---- human ------------------------------------------------------------------ */

static void human(FILE *f, const struct xp_report *r)
{
	const struct xp_graph *g = &r->g;
	struct sbuf b = { 0 };

	sb_add(&b, "");
	if (r->refused != NULL) {
		sb_addf(&b, "%s %s: pam_start fails: %s (%s)\n", r->service,
			type_names[r->type], r->refused,
			!r->replayed ? (r->not_replayed ? r->not_replayed
						       : "not replayed") :
			r->disagree == NULL ?
			"so does libpam's" : "libpam DISAGREES");
	} else {
		sb_addf(&b, g->npaths_all < 1e12 ? "%s %s: %.0f paths, "
			"%zu states, %zu edges; " : "%s %s: %.3g paths, %zu "
			"states, %zu edges; ", r->service, type_names[g->type],
			g->npaths_all, g->nnodes, g->nedges);
		if (!r->replayed)
			sb_addf(&b, "not replayed on libpam%s%s\n",
				r->not_replayed ? ": " : "",
				r->not_replayed ? r->not_replayed : "");
		else if (r->disagree == NULL)
			sb_addf(&b, "%zu replays on libpam agree\n", r->replays);
		else
			sb_addf(&b, "replay %zu on libpam DISAGREES\n", r->replays);
		for (size_t i = 0; i < r->ntable; i++) {
			const struct xp_cond *c = &r->table[i];

			sb_addf(&b, "  %s ", xp_code_name(c->result));
			if (c->n == 1 && c->t[0].n == 0) {
				sb_add(&b, "always\n");
				continue;
			}
			sb_add(&b, "iff");
			for (size_t k = 0; k < c->n; k++) {
				sb_add(&b, c->n == 1 ? " " : k == 0 ? "\n      "
							      : "\n   or ");
				term_text(&b, g, &c->t[k]);
			}
			if (c->more > 0)
				sb_addf(&b, "\n   or ... (%zu more; see -f json "
					"or dot)", c->more);
			sb_add(&b, "\n");
		}
	}
	if (r->disagree != NULL)
		sb_addf(&b, "  error: %s\n", r->disagree);
	for (size_t i = 0; i < r->nf; i++) {
		char *p = r->f[i].path.n > 0 || r->f[i].kind != XP_DEAD ?
				  xp_path_text(g, &r->f[i].path) : NULL;

		sb_addf(&b, "  %s: %s: %s\n", xp_finding_name(r->f[i].kind),
			r->f[i].where, r->f[i].msg);
		if (p != NULL)
			sb_addf(&b, "      path: %s\n", p);
		free(p);
	}
	if (!b.failed)
		fputs(b.s, f);
	sb_free(&b);
}

/* ---- json -------------------------------------------------------------------- */

static void json_str(struct sbuf *b, const char *s)
{
	sb_add(b, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			sb_addf(b, "\\%c", *p);
		else if (*p < 0x20)
			sb_addf(b, "\\u%04x", *p);
		else
			sb_addn(b, (const char *)p, 1);
	}
	sb_add(b, "\"");
}

static void json_call(struct sbuf *b, const struct xp_graph *g, int pos,
		      xp_set codes, bool one)
{
	const struct xp_pos *p = &g->seq[pos];

	sb_add(b, "{\"where\": ");
	json_str(b, xp_where(g->conf, p->l));
	sb_add(b, ", \"module\": ");
	json_str(b, p->l->name);
	if (g->npasses == 2)
		sb_addf(b, ", \"pass\": \"%s\"", p->pass ? "update" : "prelim");
	if (one) {
		sb_addf(b, ", \"outcome\": \"%s\"}", xp_code_word(__builtin_ctzll(codes)));
		return;
	}
	sb_add(b, ", \"outcomes\": [");
	for (int c = 0, first = 1; c < 64; c++) {
		if (codes & XP_BIT(c)) {
			sb_addf(b, "%s\"%s\"", first ? "" : ", ", xp_code_word(c));
			first = 0;
		}
	}
	sb_add(b, "]}");
}

static void json_path(struct sbuf *b, const struct xp_graph *g,
		      const struct xp_path *p)
{
	sb_add(b, "{\"calls\": [");
	for (size_t i = 0; i < p->n; i++) {
		sb_add(b, i ? ", " : "");
		json_call(b, g, p->c[i].pos, XP_BIT(p->c[i].code), true);
	}
	sb_addf(b, "], \"result\": \"%s\"}", xp_code_name(p->result));
}

static void json(struct sbuf *b, const struct xp_report *r)
{
	const struct xp_graph *g = &r->g;

	sb_add(b, "{\"service\": ");
	json_str(b, r->service);
	sb_addf(b, ", \"type\": \"%s\"", type_names[r->type]);
	if (r->refused != NULL) {
		sb_add(b, ", \"refused\": ");
		json_str(b, r->refused);
	}
	sb_addf(b, ", \"paths_total\": %.0f, \"states\": %zu, \"edges\": %zu, "
		"\"replays\": %zu, \"replayed\": %s, \"disagreement\": ",
		g->npaths_all, g->nnodes, g->nedges, r->replays,
		r->replayed ? "true" : "false");
	if (r->disagree != NULL)
		json_str(b, r->disagree);
	else
		sb_add(b, "null");
	if (r->not_replayed != NULL) {
		sb_add(b, ", \"not_replayed\": ");
		json_str(b, r->not_replayed);
	}
	sb_add(b, ",\n \"table\": [");
	for (size_t i = 0; i < r->ntable; i++) {
		const struct xp_cond *c = &r->table[i];

		sb_addf(b, "%s{\"result\": \"%s\", \"when\": [", i ? ", " : "",
			xp_code_name(c->result));
		for (size_t k = 0; k < c->n; k++) {
			sb_add(b, k ? ", [" : "[");
			for (size_t j = 0; j < c->t[k].n; j++) {
				sb_add(b, j ? ", " : "");
				json_call(b, g, c->t[k].l[j].pos, c->t[k].l[j].codes,
					  false);
			}
			sb_add(b, "]");
		}
		sb_addf(b, "], \"more\": %zu}", c->more);
	}
	sb_add(b, "],\n \"paths\": [");
	for (size_t i = 0; i < g->npaths; i++) {
		sb_add(b, i ? ",\n  " : "\n  ");
		json_path(b, g, &g->paths[i]);
	}
	sb_add(b, "],\n \"findings\": [");
	for (size_t i = 0; i < r->nf; i++) {
		sb_addf(b, "%s{\"kind\": \"%s\", \"where\": ", i ? ",\n  " : "\n  ",
			xp_finding_name(r->f[i].kind));
		json_str(b, r->f[i].where);
		sb_add(b, ", \"message\": ");
		json_str(b, r->f[i].msg);
		sb_add(b, ", \"path\": ");
		json_path(b, g, &r->f[i].path);
		sb_add(b, "}");
	}
	sb_add(b, "]}");
}

/* ---- dot and mermaid ------------------------------------------------------------ */

static void node_label(struct sbuf *b, const struct xp_graph *g, int n,
		       const char *nl)
{
	const struct xp_node *nd = &g->nodes[n];
	char st[128];

	if (nd->st.pos < 0) {
		sb_add(b, xp_code_name(nd->result));
		return;
	}
	pos_label(b, g, nd->st.pos);
	xp_state_text(&nd->st, st, sizeof(st));
	sb_addf(b, "%s%s", nl, st);
}

static void edge_label(struct sbuf *b, xp_set s)
{
	for (int c = 0, first = 1; c < 64; c++) {
		if (s & XP_BIT(c)) {
			sb_addf(b, "%s%s", first ? "" : ", ", xp_code_word(c));
			first = 0;
		}
	}
}

static void dot(struct sbuf *b, const struct xp_report *r, size_t k)
{
	const struct xp_graph *g = &r->g;

	sb_addf(b, "  subgraph cluster_%zu {\n    label=\"%s %s\";\n", k,
		r->service, type_names[r->type]);
	for (size_t n = 0; n < g->nnodes; n++) {
		struct sbuf l = { 0 };

		sb_add(&l, "");
		node_label(&l, g, (int)n, "\\n");
		sb_addf(b, "    g%zu_%zu [label=", k, n);
		json_str(b, l.failed ? "?" : l.s);
		sb_add(b, g->nodes[n].st.pos < 0 ?
				  (g->nodes[n].result == PAM_SUCCESS ?
					   ", shape=ellipse, style=filled, fillcolor=palegreen" :
					   ", shape=ellipse, style=filled, fillcolor=lightpink") :
				  "");
		sb_add(b, n == (size_t)g->root ? ", penwidth=2];\n" : "];\n");
		sb_free(&l);
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		for (size_t e = 0; e < g->nodes[n].ne; e++) {
			sb_addf(b, "    g%zu_%zu -> g%zu_%d [label=\"", k, n, k,
				g->nodes[n].e[e].to);
			edge_label(b, g->nodes[n].e[e].outcomes);
			sb_add(b, "\"];\n");
		}
	}
	sb_add(b, "  }\n");
}

static void mermaid(struct sbuf *b, const struct xp_report *r, size_t k)
{
	const struct xp_graph *g = &r->g;

	sb_addf(b, "  subgraph s%zu[\"%s %s\"]\n", k, r->service,
		type_names[r->type]);
	for (size_t n = 0; n < g->nnodes; n++) {
		struct sbuf l = { 0 };

		sb_add(&l, "");
		node_label(&l, g, (int)n, "<br/>");
		for (char *c = l.s; c != NULL && *c != '\0'; c++)
			if (*c == '"')
				*c = '\'';
		sb_addf(b, g->nodes[n].st.pos < 0 ? "    g%zu_%zu([\"%s\"])\n"
						   : "    g%zu_%zu[\"%s\"]\n",
			k, n, l.failed ? "?" : l.s);
		sb_free(&l);
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		for (size_t e = 0; e < g->nodes[n].ne; e++) {
			sb_addf(b, "    g%zu_%zu -->|\"", k, n);
			edge_label(b, g->nodes[n].e[e].outcomes);
			sb_addf(b, "\"| g%zu_%d\n", k, g->nodes[n].e[e].to);
		}
	}
	sb_add(b, "  end\n");
}

void xp_print(FILE *f, enum xp_format fmt, struct xp_report *const *r,
	      size_t n, bool all)
{
	struct sbuf b = { 0 };

	sb_add(&b, "");
	if (fmt == XP_DOT)
		sb_add(&b, "digraph explore {\n  node [shape=box, fontname=\"monospace\"];\n");
	if (fmt == XP_MERMAID)
		sb_add(&b, "flowchart TD\n");
	if (fmt == XP_JSON && all)
		sb_add(&b, "[");
	for (size_t i = 0; i < n; i++) {
		switch (fmt) {
		case XP_HUMAN:
			if (!b.failed)
				fputs(b.s, f);
			sb_free(&b);
			sb_add(&b, "");
			human(f, r[i]);
			break;
		case XP_JSON:
			sb_add(&b, i ? ",\n" : "");
			json(&b, r[i]);
			break;
		case XP_DOT:
			dot(&b, r[i], i);
			break;
		case XP_MERMAID:
			mermaid(&b, r[i], i);
			break;
		}
	}
	if (fmt == XP_JSON)
		sb_add(&b, all ? "]\n" : "\n");
	if (fmt == XP_DOT)
		sb_add(&b, "}\n");
	if (!b.failed)
		fputs(b.s, f);
	sb_free(&b);
}
