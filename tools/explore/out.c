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
#include "pwrap_buf.h"

#include <inttypes.h>
#include <math.h>
#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>

/* A count of paths: exact, or (too large for that) "1.23e+700", quoted in
 * json (a number there would overflow a reader's double). */
static void count_text(struct pwrap_buf *b, struct xp_count c, bool json)
{
	double l = xp_count_log10(c), mant;
	long ex;
	uint64_t v;

	if (xp_count_exact(c, &v)) {
		pwrap_buf_fmt(b, "%" PRIu64, v);
		return;
	}
	ex = (long)floor(l);
	mant = pow(10.0, l - (double)ex);
	if (mant >= 9.995) {
		mant /= 10;
		ex++;
	}
	pwrap_buf_fmt(b, json ? "\"%.2fe+%ld\"" : "%.2fe+%ld", mant, ex);
}


/* The line of a position, with the pass for chauthtok. */
static void pos_label(struct pwrap_buf *b, const struct xp_graph *g, int pos)
{
	const struct xp_pos *p = &g->seq[pos];

	pwrap_buf_fmt(b, "%s %s", xp_where(g->conf, p->l), p->l->name);
	if (g->npasses == 2) {
		pwrap_buf_str(b, p->pass == 0 ? " (prelim)" : " (update)");
	}
}

static void codes_list(struct pwrap_buf *b, xp_set s)
{
	const char *sep = "{";

	for (int c = 0; c < 64; c++) {
		if (s & XP_BIT(c)) {
			pwrap_buf_fmt(b, "%s%s", sep, xp_code_word(c));
			sep = ", ";
		}
	}
	pwrap_buf_str(b, "}");
}

/* "= success", "!= success", "in {a, b}" or "not in {c}". */
static void lit_text(struct pwrap_buf *b, const struct xp_graph *g,
		     const struct xp_lit *l)
{
	xp_set all = xp_codes_at(g, l->pos), rest = all & ~l->codes;
	int n = __builtin_popcountll(l->codes), m = __builtin_popcountll(rest);

	pos_label(b, g, l->pos);
	if (n == 1) {
		pwrap_buf_fmt(b, " = %s", xp_code_word(__builtin_ctzll(l->codes)));
	} else if (m == 1) {
		pwrap_buf_fmt(b, " != %s", xp_code_word(__builtin_ctzll(rest)));
	} else if (n <= m) {
		pwrap_buf_str(b, " in ");
		codes_list(b, l->codes);
	} else {
		pwrap_buf_str(b, " not in ");
		codes_list(b, rest);
	}
}

void xp_term_text(struct pwrap_buf *b, const struct xp_graph *g,
		  const struct xp_term *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (i > 0) {
			pwrap_buf_str(b, " and ");
		}
		lit_text(b, g, &t->l[i]);
	}
}

/* ---- human ------------------------------------------------------------------ */

/* Text for a terminal: each line's bytes as pwrap_buf_text() shows them
 * (service files may hold escape sequences and bytes that are not UTF-8;
 * the newlines are ours). */
static void put_text(FILE *f, const struct pwrap_buf *b)
{
	struct pwrap_buf o = { 0 };
	const char *p = b->p;

	if (b->failed || p == NULL) {
		return;
	}
	pwrap_buf_str(&o, "");
	while (*p != '\0') {
		size_t n = strcspn(p, "\n");
		char *line = strndup(p, n);

		if (line == NULL) {
			o.failed = true;
			break;
		}
		pwrap_buf_text(&o, line);
		free(line);
		pwrap_buf_str(&o, p[n] == '\n' ? "\n" : "");
		p += n + (p[n] == '\n');
	}
	if (!o.failed) {
		fputs(o.p, f);
	}
	pwrap_buf_free(&o);
}

static void human(FILE *f, const struct xp_report *r)
{
	const struct xp_graph *g = &r->g;
	struct pwrap_buf b = { 0 };

	pwrap_buf_str(&b, "");
	if (r->refused != NULL) {
		pwrap_buf_fmt(&b, "%s %s: pam_start fails: %s (%s)\n", r->service,
			pwrap_group_name(r->type), r->refused,
			!r->replayed ? (r->not_replayed ? r->not_replayed
						       : "not replayed") :
			r->disagree == NULL ?
			"so does libpam's" : "libpam DISAGREES");
	} else {
		pwrap_buf_fmt(&b, "%s %s: ", r->service, pwrap_group_name(g->type));
		count_text(&b, g->npaths_all, false);
		pwrap_buf_fmt(&b, " paths, %zu states, %zu edges; ", g->nnodes,
			      g->nedges);
		if (!r->replayed) {
			pwrap_buf_fmt(&b, "not replayed on libpam%s%s\n",
				r->not_replayed ? ": " : "",
				r->not_replayed ? r->not_replayed : "");
		} else if (r->disagree == NULL) {
			pwrap_buf_fmt(&b, "%zu replays on libpam agree\n", r->replays);
		} else {
			pwrap_buf_fmt(&b, "replay %zu on libpam DISAGREES\n", r->replays);
		}
		for (size_t i = 0; i < r->ntable; i++) {
			const struct xp_cond *c = &r->table[i];

			pwrap_buf_fmt(&b, "  %s ", xp_code_name(c->result));
			if (c->n == 1 && c->t[0].n == 0) {
				pwrap_buf_str(&b, "always\n");
				continue;
			}
			pwrap_buf_str(&b, "iff");
			for (size_t k = 0; k < c->n; k++) {
				pwrap_buf_str(&b, c->n == 1 ? " " : k == 0 ? "\n      "
							      : "\n   or ");
				xp_term_text(&b, g, &c->t[k]);
			}
			if (c->more.m > 0) {
				pwrap_buf_str(&b, "\n   or ... (");
				count_text(&b, c->more, false);
				pwrap_buf_str(&b, " more, not listed)");
			}
			pwrap_buf_str(&b, "\n");
		}
	}
	if (r->disagree != NULL) {
		pwrap_buf_fmt(&b, "  error: %s\n", r->disagree);
	}
	for (size_t i = 0; i < r->nf; i++) {
		char *p = r->f[i].path.n > 0 || r->f[i].kind != XP_DEAD ?
				  xp_path_text(g, &r->f[i].path) : NULL;

		pwrap_buf_fmt(&b, "  %s: %s: %s\n", xp_finding_name(r->f[i].kind),
			r->f[i].where, r->f[i].msg);
		if (p != NULL) {
			pwrap_buf_fmt(&b, "      path: %s\n", p);
		}
		free(p);
	}
	for (size_t i = 0; i < r->nacc; i++) {
		pwrap_buf_fmt(&b, "  accepted %s: %s: %s (by %s)\n",
			      xp_finding_name(r->acc[i].kind), r->acc[i].where,
			      r->acc[i].msg, r->acc[i].by);
	}
	put_text(f, &b);
	pwrap_buf_free(&b);
}

/* The modules absent on this machine and what they were taken to return
 * (once, before the groups). */
static void absent(struct pwrap_buf *b, const struct xp_conf *c)
{
	for (size_t i = 0; i < c->nabsent; i++) {
		const struct xp_absent *a = &c->absent[i];

		pwrap_buf_fmt(b, "%s %s ", i ? "," : "absent on this machine:",
			      a->name);
		codes_list(b, a->outcomes);
		pwrap_buf_str(b, a->modelled ? " (--model)"
				: c->rules.impl == PAMCONF_OPENPAM
					? " (OpenPAM's pam_start fails)"
					: " (what libpam gives a module it "
					  "cannot load)");
	}
	pwrap_buf_str(b, c->nabsent > 0 ? "\n" : "");
}

/* ---- json -------------------------------------------------------------------- */


/* ", \"outcomes\": [...]" of a set. */
static void json_codes(struct pwrap_buf *b, xp_set codes)
{
	pwrap_buf_str(b, ", \"outcomes\": [");
	for (int c = 0, first = 1; c < 64; c++) {
		if (codes & XP_BIT(c)) {
			pwrap_buf_fmt(b, "%s\"%s\"", first ? "" : ", ", xp_code_word(c));
			first = 0;
		}
	}
	pwrap_buf_str(b, "]");
}

static void json_call(struct pwrap_buf *b, const struct xp_graph *g, int pos,
		      xp_set codes, bool one)
{
	const struct xp_pos *p = &g->seq[pos];

	pwrap_buf_str(b, "{\"where\": ");
	pwrap_buf_json(b, xp_where(g->conf, p->l));
	pwrap_buf_str(b, ", \"module\": ");
	pwrap_buf_json(b, p->l->name);
	if (g->npasses == 2) {
		pwrap_buf_fmt(b, ", \"pass\": \"%s\"", p->pass ? "update" : "prelim");
	}
	if (one) {
		pwrap_buf_fmt(b, ", \"outcome\": \"%s\"}", xp_code_word(__builtin_ctzll(codes)));
		return;
	}
	json_codes(b, codes);
	pwrap_buf_str(b, "}");
}

#define SPILL (1u << 20)

/* Writes out what b holds once it is large (json and dot are written as
 * they are made, so that a long stack's do not sit in memory whole); f
 * NULL: b keeps it all. */
static void spill(FILE *f, struct pwrap_buf *b)
{
	if (f == NULL || b->len < SPILL || b->failed) {
		return;
	}
	fputs(b->p, f);
	b->len = 0;
	b->p[0] = '\0';
}

static void json_path(FILE *out, struct pwrap_buf *b,
		      const struct xp_graph *g, const struct xp_path *p)
{
	pwrap_buf_str(b, "{\"calls\": [");
	for (size_t i = 0; i < p->n; i++) {
		spill(out, b);
		pwrap_buf_str(b, i ? ", " : "");
		json_call(b, g, p->c[i].pos, XP_BIT(p->c[i].code), true);
	}
	pwrap_buf_fmt(b, "], \"result\": \"%s\"}", xp_code_name(p->result));
}

void xp_json_path(struct pwrap_buf *b, const struct xp_graph *g,
		  const struct xp_path *p)
{
	json_path(NULL, b, g, p);
}

/* Findings (accepted ones with what accepted them). */
static void json_findings(FILE *out, struct pwrap_buf *b,
			  const struct xp_graph *g, const struct xp_finding *f,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		spill(out, b);
		pwrap_buf_fmt(b, "%s{\"kind\": \"%s\", \"where\": ", i ? ",\n  " : "\n  ",
			xp_finding_name(f[i].kind));
		pwrap_buf_json(b, f[i].where);
		pwrap_buf_str(b, ", \"message\": ");
		pwrap_buf_json(b, f[i].msg);
		if (f[i].by != NULL) {
			pwrap_buf_str(b, ", \"by\": ");
			pwrap_buf_json(b, f[i].by);
		}
		pwrap_buf_str(b, ", \"path\": ");
		/* a dead line's path is shown once for the lines it stops
		 * before (find.c): the others have none */
		if (f[i].kind == XP_DEAD && f[i].path.n == 0) {
			pwrap_buf_str(b, "null");
		} else {
			json_path(out, b, g, &f[i].path);
		}
		pwrap_buf_str(b, "}");
	}
}

static void json(FILE *out, struct pwrap_buf *b, const struct xp_report *r)
{
	const struct xp_graph *g = &r->g;

	pwrap_buf_str(b, "{\"service\": ");
	pwrap_buf_json(b, r->service);
	pwrap_buf_fmt(b, ", \"type\": \"%s\"", pwrap_group_name(r->type));
	if (r->refused != NULL) {
		pwrap_buf_str(b, ", \"refused\": ");
		pwrap_buf_json(b, r->refused);
	}
	pwrap_buf_str(b, ", \"paths_total\": ");
	count_text(b, g->npaths_all, true);
	pwrap_buf_fmt(b, ", \"paths_log10\": %.4f, \"states\": %zu, \"edges\": %zu, "
		"\"replays\": %zu, \"replayed\": %s, \"disagreement\": ",
		xp_count_log10(g->npaths_all), g->nnodes, g->nedges, r->replays,
		r->replayed ? "true" : "false");
	if (r->disagree != NULL) {
		pwrap_buf_json(b, r->disagree);
	} else {
		pwrap_buf_str(b, "null");
	}
	if (r->not_replayed != NULL) {
		pwrap_buf_str(b, ", \"not_replayed\": ");
		pwrap_buf_json(b, r->not_replayed);
	}
	for (size_t i = 0; i < g->conf->nabsent; i++) {
		const struct xp_absent *a = &g->conf->absent[i];

		pwrap_buf_str(b, i ? ", {\"module\": " : ", \"absent\": [{\"module\": ");
		pwrap_buf_json(b, a->name);
		json_codes(b, a->outcomes);
		pwrap_buf_fmt(b, ", \"modelled\": %s}%s", a->modelled ? "true" : "false",
			      i + 1 == g->conf->nabsent ? "]" : "");
	}
	pwrap_buf_str(b, ",\n \"table\": [");
	for (size_t i = 0; i < r->ntable; i++) {
		const struct xp_cond *c = &r->table[i];

		pwrap_buf_fmt(b, "%s{\"result\": \"%s\", \"when\": [", i ? ", " : "",
			xp_code_name(c->result));
		for (size_t k = 0; k < c->n; k++) {
			pwrap_buf_str(b, k ? ", [" : "[");
			for (size_t j = 0; j < c->t[k].n; j++) {
				pwrap_buf_str(b, j ? ", " : "");
				json_call(b, g, c->t[k].l[j].pos, c->t[k].l[j].codes,
					  false);
			}
			pwrap_buf_str(b, "]");
		}
		pwrap_buf_str(b, "], \"more\": ");
		count_text(b, c->more, true);
		pwrap_buf_str(b, "}");
	}
	pwrap_buf_str(b, "],\n \"paths\": [");
	for (size_t i = 0; i < g->npaths; i++) {
		spill(out, b);
		pwrap_buf_str(b, i ? ",\n  " : "\n  ");
		json_path(out, b, g, &g->paths[i]);
	}
	pwrap_buf_str(b, "],\n \"findings\": [");
	json_findings(out, b, g, r->f, r->nf);
	pwrap_buf_str(b, "],\n \"accepted\": [");
	json_findings(out, b, g, r->acc, r->nacc);
	pwrap_buf_str(b, "]}");
}

/* ---- dot and mermaid ------------------------------------------------------------ */

/* A node's label: its line, then (a second line) the state; a result's
 * name. */
static void node_label(struct pwrap_buf *line, struct pwrap_buf *state,
		       const struct xp_graph *g, int n)
{
	const struct xp_node *nd = &g->nodes[n];
	char st[128];

	if (nd->st.pos < 0) {
		pwrap_buf_str(line, xp_code_name(nd->result));
		return;
	}
	pos_label(line, g, nd->st.pos);
	g->conf->impl->state_text(&nd->st, st, sizeof(st));
	pwrap_buf_str(state, st);
}

/* s inside a dot string: JSON's escapes ('"', '\\', control characters;
 * bytes that are not UTF-8), without the quotes. */
static void dot_text(struct pwrap_buf *b, const char *s)
{
	struct pwrap_buf j = { 0 };

	pwrap_buf_json(&j, s != NULL ? s : "");
	if (!j.failed && j.len >= 2) {
		pwrap_buf_add(b, j.p + 1, j.len - 2);
	}
	pwrap_buf_free(&j);
}

static void edge_label(struct pwrap_buf *b, xp_set s)
{
	for (int c = 0, first = 1; c < 64; c++) {
		if (s & XP_BIT(c)) {
			pwrap_buf_fmt(b, "%s%s", first ? "" : ", ", xp_code_word(c));
			first = 0;
		}
	}
}

static void dot(struct pwrap_buf *b, const struct xp_report *r, size_t k)
{
	const struct xp_graph *g = &r->g;

	pwrap_buf_fmt(b, "  subgraph cluster_%zu {\n    label=\"", k);
	dot_text(b, r->service);
	pwrap_buf_fmt(b, " %s\";\n", pwrap_group_name(r->type));
	for (size_t n = 0; n < g->nnodes; n++) {
		struct pwrap_buf l = { 0 }, s = { 0 };

		node_label(&l, &s, g, (int)n);
		pwrap_buf_fmt(b, "    g%zu_%zu [label=\"", k, n);
		dot_text(b, l.failed ? "?" : l.p);
		if (s.p != NULL) {
			/* dot's own line break */
			pwrap_buf_str(b, "\\n");
			dot_text(b, s.failed ? "?" : s.p);
		}
		pwrap_buf_str(b, "\"");
		pwrap_buf_free(&s);
		pwrap_buf_str(b, g->nodes[n].st.pos < 0 ?
				  (g->nodes[n].result == PAM_SUCCESS ?
					   ", shape=ellipse, style=filled, fillcolor=palegreen" :
					   ", shape=ellipse, style=filled, fillcolor=lightpink") :
				  "");
		pwrap_buf_str(b, n == (size_t)g->root ? ", penwidth=2];\n" : "];\n");
		pwrap_buf_free(&l);
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		for (size_t e = 0; e < g->nodes[n].ne; e++) {
			pwrap_buf_fmt(b, "    g%zu_%zu -> g%zu_%d [label=\"", k, n, k,
				g->nodes[n].e[e].to);
			edge_label(b, g->nodes[n].e[e].outcomes);
			pwrap_buf_str(b, "\"];\n");
		}
	}
	pwrap_buf_str(b, "  }\n");
}

static void mermaid(struct pwrap_buf *b, const struct xp_report *r, size_t k)
{
	const struct xp_graph *g = &r->g;

	pwrap_buf_fmt(b, "  subgraph s%zu[\"%s %s\"]\n", k, r->service,
		pwrap_group_name(r->type));
	for (size_t n = 0; n < g->nnodes; n++) {
		struct pwrap_buf l = { 0 }, s = { 0 };

		node_label(&l, &s, g, (int)n);
		if (s.p != NULL) {
			pwrap_buf_fmt(&l, "<br/>%s", s.p);
		}
		pwrap_buf_free(&s);
		for (char *c = l.p; c != NULL && *c != '\0'; c++) {
			if (*c == '"') {
				*c = '\'';
			}
		}
		pwrap_buf_fmt(b, g->nodes[n].st.pos < 0 ? "    g%zu_%zu([\"%s\"])\n"
						   : "    g%zu_%zu[\"%s\"]\n",
			k, n, l.failed ? "?" : l.p);
		pwrap_buf_free(&l);
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		for (size_t e = 0; e < g->nodes[n].ne; e++) {
			pwrap_buf_fmt(b, "    g%zu_%zu -->|\"", k, n);
			edge_label(b, g->nodes[n].e[e].outcomes);
			pwrap_buf_fmt(b, "\"| g%zu_%d\n", k, g->nodes[n].e[e].to);
		}
	}
	pwrap_buf_str(b, "  end\n");
}

void xp_print(FILE *f, enum xp_format fmt, struct xp_report *const *r,
	      size_t n, bool all)
{
	struct pwrap_buf b = { 0 };

	pwrap_buf_str(&b, "");
	if (fmt == XP_DOT) {
		pwrap_buf_str(&b, "digraph explore {\n  node [shape=box, fontname=\"monospace\"];\n");
	}
	if (fmt == XP_MERMAID) {
		pwrap_buf_str(&b, "flowchart TD\n");
	}
	if (fmt == XP_JSON && all) {
		pwrap_buf_str(&b, "[");
	}
	if (fmt == XP_HUMAN && n > 0) {
		absent(&b, r[0]->g.conf);
	}
	for (size_t i = 0; i < n; i++) {
		switch (fmt) {
		case XP_HUMAN:
			put_text(f, &b);
			pwrap_buf_free(&b);
			pwrap_buf_str(&b, "");
			human(f, r[i]);
			break;
		case XP_JSON:
			pwrap_buf_str(&b, i ? ",\n" : "");
			json(f, &b, r[i]);
			break;
		case XP_DOT:
			dot(&b, r[i], i);
			spill(f, &b);
			break;
		case XP_MERMAID:
			mermaid(&b, r[i], i);
			break;
		}
	}
	if (fmt == XP_JSON) {
		pwrap_buf_str(&b, all ? "]\n" : "\n");
	}
	if (fmt == XP_DOT) {
		pwrap_buf_str(&b, "}\n");
	}
	if (fmt == XP_HUMAN || fmt == XP_MERMAID) {
		put_text(f, &b);
	} else if (!b.failed) {
		fputs(b.p, f);
	}
	pwrap_buf_free(&b);
}
