/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, stage 4: what a graph says, the findings:
 *
 *   bypass     (auth, account, password) PAM_SUCCESS is reachable while no
 *              authenticating module returned PAM_SUCCESS (in chauthtok's
 *              update pass).  Authenticating: every module but a built-in
 *              list of modules that check or set up something else, or
 *              exactly the --must modules when there are some.
 *   lockout    no path leads to PAM_SUCCESS.
 *   dead-line  a line no path reaches.
 *   ignored    the result does not depend on what a --must module returns.
 *
 * Each names a path (the shortest, breadth first) and a line: for a bypass
 * the call after which success is certain, for a lockout the first line on
 * the path that cannot succeed (a missing module, pam_deny, a broken line)
 * or else its last call.  The decision table comes from table.c.
 */
#define _GNU_SOURCE
#include "explore.h"

#include <security/pam_appl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Modules that do not prove who the user is (they check or set up
 * something else).  pam_rootok is not here: it proves the caller is root. */
static const char *const not_auth[] = {
	"pam_permit", "pam_deny", "pam_env", "pam_echo", "pam_warn",
	"pam_faildelay", "pam_nologin", "pam_cap", "pam_group", "pam_motd",
	"pam_limits", "pam_mail", "pam_lastlog", "pam_loginuid", "pam_keyinit",
	"pam_selinux", "pam_sepermit", "pam_systemd", "pam_umask",
	"pam_mkhomedir", "pam_xauth", "pam_namespace", "pam_issue", "pam_time",
	"pam_access", "pam_securetty", "pam_shells", "pam_listfile",
	"pam_localuser", "pam_succeed_if", "pam_wheel", "pam_faillock",
	"pam_tally", "pam_tally2", "pam_debug", "pam_usertype", "pam_tty_audit",
	"pam_pwquality", "pam_cracklib", "pam_pwhistory", "pam_passwdqc",
	"pam_gnome_keyring", "pam_kwallet5", "pam_lastlog2", "pam_setquota",
	"pam_set_items", "pam_get_items", "pam_chatty",
};

const char *xp_finding_name(enum xp_kind_f k)
{
	static const char *const n[] = { "bypass", "lockout", "dead-line",
					 "ignored" };

	return n[k];
}

/* ---- searching with one bit of memory --------------------------------------- */

static bool authenticating(const struct xp_opts *o, const char *name)
{
	if (o->nmust > 0) {
		for (size_t i = 0; i < o->nmust; i++) {
			if (xp_name_is(name, o->must[i])) {
				return true;
			}
		}
		return false;
	}
	for (size_t i = 0; i < sizeof(not_auth) / sizeof(not_auth[0]); i++) {
		if (strcmp(name, not_auth[i]) == 0) {
			return false;
		}
	}
	return true;
}

/* Sets the bit: a call of a module that counts returned PAM_SUCCESS. */
struct marker {
	bool (*counts)(const struct xp_graph *g, int pos, const void *ctx);
	const void *ctx;
};

static bool marks(const struct xp_graph *g, const struct marker *mk, int pos,
		  int code)
{
	const struct xp_line *l = g->seq[pos].l;

	return code == PAM_SUCCESS && l->kind == XP_CALL && mk->counts(g, pos, mk->ctx);
}

/*
 * Breadth first over (node, bit): the first result node whose (result,
 * bit) `bad` accepts, with the path there in *p; -1 when there is none.
 */
static int search(const struct xp_graph *g, const struct marker *mk,
		  bool (*bad)(int result, bool bit), struct xp_path *p)
{
	size_t n2 = g->nnodes * 2;
	int *from = malloc(n2 * sizeof(*from)), *code = malloc(n2 * sizeof(*code));
	int *queue = malloc(n2 * sizeof(*queue));
	size_t qh = 0, qt = 0;
	int found = -1;

	if (from == NULL || code == NULL || queue == NULL) {
		goto out;
	}
	for (size_t i = 0; i < n2; i++) {
		from[i] = -2;
	}
	from[g->root * 2] = -1;
	queue[qt++] = g->root * 2;
	while (qh < qt && found < 0) {
		int v = queue[qh++], n = v / 2;
		const struct xp_node *nd = &g->nodes[n];

		if (nd->st.pos < 0) {
			if (bad(nd->result, v & 1)) {
				found = v;
			}
			continue;
		}
		for (size_t k = 0; k < nd->ne; k++) {
			for (int c = 0; c < 64; c++) {
				int w;

				if (!(nd->e[k].outcomes & XP_BIT(c))) {
					continue;
				}
				w = nd->e[k].to * 2 +
				    ((v & 1) || marks(g, mk, nd->st.pos, c));
				if (from[w] != -2) {
					continue;
				}
				from[w] = v;
				code[w] = c;
				queue[qt++] = w;
			}
		}
	}
	if (found >= 0) {
		size_t len = 0, i;

		for (int v = found; from[v] >= 0; v = from[v]) {
			len++;
		}
		p->c = calloc(len + 1, sizeof(*p->c));
		if (p->c == NULL) {
			found = -1;
			goto out;
		}
		p->n = len;
		i = len;
		for (int v = found; from[v] >= 0; v = from[v]) {
			i--;
			p->c[i].pos = g->nodes[from[v] / 2].st.pos;
			p->c[i].code = code[v];
		}
		p->result = g->nodes[found / 2].result;
		found /= 2;
	}
out:
	free(from);
	free(code);
	free(queue);
	return found;
}

struct auth_ctx {
	const struct xp_opts *o;
};

static bool auth_counts(const struct xp_graph *g, int pos, const void *ctx)
{
	const struct auth_ctx *a = ctx;

	/* chauthtok: what the update pass does is what counts */
	if (g->npasses == 2 && g->seq[pos].pass == 0) {
		return false;
	}
	return authenticating(a->o, g->seq[pos].l->name);
}

static bool bypass_bad(int result, bool bit)
{
	return result == PAM_SUCCESS && !bit;
}

struct iff_ctx {
	char *const *mods;
	size_t n;
};

static bool iff_counts(const struct xp_graph *g, int pos, const void *ctx)
{
	const struct iff_ctx *m = ctx;

	if (g->npasses == 2 && g->seq[pos].pass == 0) {
		return false;	/* chauthtok: the update pass decides */
	}
	for (size_t i = 0; i < m->n; i++) {
		if (xp_name_is(g->seq[pos].l->name, m->mods[i])) {
			return true;
		}
	}
	return false;
}

static bool iff_bad(int result, bool bit)
{
	return (result == PAM_SUCCESS) != bit;
}

bool xp_iff(const struct xp_graph *g, char *const *mods, size_t n,
	    struct xp_path *witness)
{
	struct iff_ctx ctx = { mods, n };
	struct marker mk = { iff_counts, &ctx };

	memset(witness, 0, sizeof(*witness));
	return search(g, &mk, iff_bad, witness) < 0;
}

/* ---- findings -------------------------------------------------------------- */

static int add_finding(struct xp_report *r, enum xp_kind_f kind,
		       const char *where, struct xp_path *p, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int add_finding(struct xp_report *r, enum xp_kind_f kind,
		       const char *where, struct xp_path *p, const char *fmt, ...)
{
	struct xp_finding *v = reallocarray(r->f, r->nf + 1, sizeof(*v));
	va_list ap;

	if (v == NULL) {
		return -1;
	}
	r->f = v;
	v = &v[r->nf];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->site = -1;
	v->where = strdup(where);
	va_start(ap, fmt);
	if (vasprintf(&v->msg, fmt, ap) < 0) {
		v->msg = NULL;
	}
	va_end(ap);
	if (p != NULL) {
		v->path = *p;
		memset(p, 0, sizeof(*p));
	}
	r->nf++;
	return v->where != NULL && v->msg != NULL ? 0 : -1;
}

/* The node a path ends at, step by step: the index of the first call after
 * which only PAM_SUCCESS can follow. */
static size_t decisive(const struct xp_graph *g, const struct xp_path *p)
{
	int n = g->root;

	for (size_t i = 0; i < p->n; i++) {
		const struct xp_node *nd = &g->nodes[n];

		for (size_t k = 0; k < nd->ne; k++) {
			if (nd->e[k].outcomes & XP_BIT(p->c[i].code)) {
				n = nd->e[k].to;
			}
		}
		if (g->nodes[n].reach == XP_BIT(PAM_SUCCESS)) {
			return i;
		}
	}
	return p->n ? p->n - 1 : 0;
}

static const char *file_of_service(const struct xp_conf *c)
{
	int f = c->s.service_file >= 0 ? c->s.service_file : c->s.other_file;

	return f >= 0 ? c->files[f].show : c->service;
}

static int find_bypass(struct xp_report *r, const struct xp_opts *o)
{
	const struct xp_graph *g = &r->g;
	struct auth_ctx ctx = { o };
	struct marker mk = { auth_counts, &ctx };
	struct xp_path p = { 0 };
	const struct xp_line *l;
	size_t d;

	if (g->type == XP_SESSION || search(g, &mk, bypass_bad, &p) < 0) {
		return 0;
	}
	if (p.n == 0) {
		return add_finding(r, XP_BYPASS, file_of_service(g->conf), &p,
				   "PAM_SUCCESS without any module call");
	}
	d = decisive(g, &p);
	l = g->seq[p.c[d].pos].l;
	return add_finding(r, XP_BYPASS, xp_where(g->conf, l), &p,
			   "PAM_SUCCESS although no authenticating module "
			   "succeeded: after %s returned %s nothing can fail",
			   l->name, xp_code_word(p.c[d].code));
}

/* The path on which every module succeeds where it can (else ignores,
 * else the first outcome).  0 or -1. */
static int optimistic(const struct xp_graph *g, struct xp_path *p)
{
	int n = g->root;

	memset(p, 0, sizeof(*p));
	while (g->nodes[n].st.pos >= 0) {
		const struct xp_node *nd = &g->nodes[n];
		xp_set all = 0;
		int code;

		for (size_t k = 0; k < nd->ne; k++) {
			all |= nd->e[k].outcomes;
		}
		code = all & XP_BIT(PAM_SUCCESS) ? PAM_SUCCESS
		       : all & XP_BIT(PAM_IGNORE) ? PAM_IGNORE
		       : __builtin_ctzll(all);
		if (xp_path_push(p, nd->st.pos, code) != 0) {
			return -1;
		}
		for (size_t k = 0; k < nd->ne; k++) {
			if (nd->e[k].outcomes & XP_BIT(code)) {
				n = nd->e[k].to;
			}
		}
	}
	p->result = g->nodes[n].result;
	return 0;
}

/* Why line l, returning code (which it can), fails on Linux-PAM when its
 * control makes that a failure (static or in buf), or NULL. */
static const char *control_fails(const struct xp_graph *g,
				 const struct xp_line *l, int code, char *buf,
				 size_t len)
{
	const struct xp_conf *c = g->conf;
	int a = code < XP_NCODES ? l->act[code] : XP_BAD;
	bool all_bad = true;

	if (c->rules.impl == PAMCONF_OPENPAM || l->kind != XP_CALL ||
	    code != PAM_SUCCESS || l->control == NULL) {
		return NULL;
	}
	for (int i = 0; i < XP_NCODES; i++) {
		all_bad &= l->act[i] == XP_BAD;
	}
	if (all_bad && !pwrap_control_readable(l->control,
					       c->rules.version >= 106)) {
		snprintf(buf, len, "libpam cannot read its control \"%s\" and "
			 "takes every code %s returns, success too, as a "
			 "failure", l->control, l->name);
		return buf;
	}
	if (a == XP_BAD || a == XP_DIE) {
		snprintf(buf, len, "its control \"%s\" takes success as a "
			 "failure", l->control);
		return buf;
	}
	return NULL;
}

/* The line to blame for a lockout, on the optimistic path p: the first
 * that cannot succeed (a missing module, pam_deny, a broken line) or
 * whose control fails its success (*why then says how), else its last
 * call. */
static const struct xp_line *lockout_line(const struct xp_graph *g,
					  const struct xp_path *p,
					  const char **why, char *buf,
					  size_t len)
{
	*why = NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct xp_line *x = g->seq[p->c[i].pos].l;

		if (!(xp_codes_at(g, p->c[i].pos) & XP_BIT(PAM_SUCCESS)) &&
		    p->c[i].code != PAM_IGNORE) {
			return x;
		}
		if ((*why = control_fails(g, x, p->c[i].code, buf, len)) !=
		    NULL) {
			return x;
		}
	}
	return p->n > 0 ? g->seq[p->c[p->n - 1].pos].l : NULL;
}

static int find_lockout(struct xp_report *r)
{
	const struct xp_graph *g = &r->g;
	struct xp_path p = { 0 };
	const struct xp_line *l;
	const char *why;
	char buf[1024];

	if (g->nodes[g->root].reach & XP_BIT(PAM_SUCCESS)) {
		return 0;
	}
	if (optimistic(g, &p) != 0) {
		xp_path_free(&p);
		return -1;
	}
	l = lockout_line(g, &p, &why, buf, sizeof(buf));
	if (l == NULL) {
		return add_finding(r, XP_LOCKOUT, file_of_service(g->conf), &p,
				   "no module in this group: always %s",
				   xp_code_name(p.result));
	}
	if (why != NULL) {
		return add_finding(r, XP_LOCKOUT, xp_where(g->conf, l), &p,
				   "no path leads to PAM_SUCCESS; %s", why);
	}
	if (l->kind == XP_FIXED || ((l->absent && !l->modelled) || l->no_fn)) {
		return add_finding(r, XP_LOCKOUT, xp_where(g->conf, l), &p,
				   "no path leads to PAM_SUCCESS; %s returns "
				   "%s here (%s)", l->name, xp_code_name(
				   l->kind == XP_FIXED ? l->fixed
				   : __builtin_ctzll(l->outcomes)),
				   l->kind == XP_FIXED ? l->why : l->no_fn ?
				   "the module has no function for this group" :
				   l->absent_why != NULL ? l->absent_why :
				   "the module is not on this machine");
	}
	return add_finding(r, XP_LOCKOUT, xp_where(g->conf, l), &p,
			   "no path leads to PAM_SUCCESS, even when every "
			   "module succeeds where it can");
}

/* A path through node n: the way there, then first edges to a result. */
static int path_through(const struct xp_graph *g, int n, struct xp_path *p)
{
	memset(p, 0, sizeof(*p));
	if (xp_path_to(g, n, p) != 0) {
		return -1;
	}
	while (g->nodes[n].st.pos >= 0) {
		const struct xp_node *nd = &g->nodes[n];

		if (xp_path_push(p, nd->st.pos, __builtin_ctzll(nd->e[0].outcomes)) !=
		    0) {
			return -1;
		}
		n = nd->e[0].to;
	}
	p->result = g->nodes[n].result;
	return 0;
}

/* The lines the stack leaves unread (past a nesting limit, after a line
 * that stops libpam's reading) and that are nowhere in it: dead too. */
static int find_unread(struct xp_report *r, bool *seen)
{
	const struct xp_conf *c = r->g.conf;
	const struct xp_unreads *u = xp_unread_of(c, r->g.type);

	for (size_t i = 0; i < u->n; i++) {
		const struct xp_unread *x = &u->v[i];
		const struct xp_site *s = &c->sites[x->site];
		char *name, *at;
		int rc;

		if (seen[x->site]) {
			continue;
		}
		seen[x->site] = true;
		at = strdup(xp_where_at(c, x->at_file, x->at_line));
		name = x->l->target >= 0 ? xp_short_name(x->l->tok[x->l->target].text)
					 : strdup("?");
		rc = at == NULL || name == NULL ? -1 :
		     add_finding(r, XP_DEAD, xp_where_at(c, s->file, s->line),
				 NULL, "libpam never reads this line (%s): %s: "
				 "%s", name, at, x->why);
		free(at);
		free(name);
		if (rc != 0) {
			return -1;
		}
	}
	return 0;
}

/*
 * Lines no path reaches, once each (a line of chauthtok's two passes is
 * reached if either is), with the shortest path through the nearest node
 * before it (the first of those after the same node only: the others'
 * would be the same; theirs is empty); then the lines the stack does not
 * have although the service names them (find_unread).
 */
static int find_dead(struct xp_report *r)
{
	const struct xp_graph *g = &r->g;
	const struct xp_conf *c = g->conf;
	bool *seen = calloc(c->nsites + 1, sizeof(*seen));
	int *before = calloc(g->nseq + 1, sizeof(*before));
	int near = g->root, shown = -1, rc = -1;

	if (seen == NULL || before == NULL) {
		goto out;
	}
	for (size_t i = 0; i < g->nseq; i++) {
		before[i] = -1;
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		int pos = g->nodes[n].st.pos;

		if (pos < 0) {
			continue;
		}
		seen[g->seq[pos].l->site] = true;
		if (before[pos] < 0) {
			before[pos] = (int)n;
		}
	}
	for (size_t i = 0; i < g->perpass; i++) {
		const struct xp_line *l = g->seq[i].l;
		struct xp_path p = { 0 };

		if (i > 0 && before[i - 1] >= 0) {
			near = before[i - 1];
		}
		if (l->kind == XP_SUBSTACK || seen[l->site]) {
			continue;
		}
		seen[l->site] = true;	/* once per line */
		if ((near != shown && path_through(g, near, &p) != 0) ||
		    add_finding(r, XP_DEAD, xp_where(c, l), &p,
				"no path reaches this line (%s)", l->name) != 0) {
			xp_path_free(&p);
			goto out;
		}
		r->f[r->nf - 1].site = l->site;
		shown = near;
	}
	/* substack marks are in the stack, never reached: not unread */
	for (size_t i = 0; i < g->perpass; i++) {
		seen[g->seq[i].l->site] = true;
	}
	rc = find_unread(r, seen);
out:
	free(seen);
	free(before);
	return rc;
}

static int find_ignored(struct xp_report *r, const struct xp_opts *o)
{
	const struct xp_graph *g = &r->g;

	for (size_t m = 0; m < o->nmust; m++) {
		int first = -1, node = -1;
		bool matters = false;
		struct xp_path p = { 0 };

		for (size_t i = 0; i < g->nseq; i++) {
			if (g->seq[i].l->kind == XP_SUBSTACK ||
			    !xp_name_is(g->seq[i].l->name, o->must[m])) {
				continue;
			}
			if (first < 0) {
				first = (int)i;
			}
			matters |= xp_depends(r, (int)i);
		}
		if (matters) {
			continue;
		}
		for (size_t n = 0; n < g->nnodes && first >= 0 && node < 0;
		     n++) {
			if (g->nodes[n].st.pos >= 0 &&
			    xp_name_is(g->seq[g->nodes[n].st.pos].l->name,
				       o->must[m])) {
				node = (int)n;
			}
		}
		if (node >= 0 && path_through(g, node, &p) != 0) {
			return -1;
		}
		if (first < 0 &&
		    add_finding(r, XP_IGNORED, file_of_service(g->conf), &p,
				"%s is not in this stack", o->must[m]) != 0) {
			return -1;
		}
		if (first >= 0 &&
		    add_finding(r, XP_IGNORED,
				xp_where(g->conf, g->seq[first].l), &p,
				"the result is the same whatever "
				"%s returns%s",
				g->seq[first].l->name,
				g->seq[first].l->kind == XP_FIXED
					? " (it cannot: see its line)"
					: "") != 0) {
			return -1;
		}
	}
	return 0;
}

int xp_add_lockout(struct xp_report *r, const char *refused,
		   struct xp_path *p)
{
	const char *sep = strstr(refused, ": ");
	char *where = strndup(refused, sep != NULL ? (size_t)(sep - refused)
						   : strlen(refused));
	int rc;

	if (where == NULL) {
		return -1;
	}
	rc = add_finding(r, XP_LOCKOUT, where, p, "pam_start fails: %s",
			 sep != NULL ? sep + 2 : refused);
	free(where);
	return rc;
}

int xp_analyse(struct xp_report *r, const struct xp_opts *o)
{
	if (xp_table(r) != 0 || find_bypass(r, o) != 0 ||
	    find_lockout(r) != 0 || find_dead(r) != 0 ||
	    find_ignored(r, o) != 0) {
		return -1;
	}
	return 0;
}

void xp_report_free(struct xp_report *r)
{
	for (size_t i = 0; i < r->nf; i++) {
		free(r->f[i].where);
		free(r->f[i].msg);
		xp_path_free(&r->f[i].path);
	}
	free(r->f);
	for (size_t i = 0; i < r->nacc; i++) {
		free(r->acc[i].where);
		free(r->acc[i].msg);
		xp_path_free(&r->acc[i].path);
	}
	free(r->acc);
	xp_table_free(r);
	free(r->disagree);
	free(r->not_replayed);
	xp_graph_free(&r->g);
	memset(r, 0, sizeof(*r));
}
