/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of pamtest explore --diff (tools/explore/diff.c): on random
 * pairs of stacks (the second made from the first by inserting, deleting,
 * moving or re-controlling lines), the pairs of results diff.c finds must
 * be exactly those of every combination of outcomes, enumerated here one
 * by one over the lines of both versions; every combination it shows must
 * be one (each side's path a path of its graph, a line both have with one
 * outcome) and meet the condition it is shown with.  In the syntax of the
 * linked libpam (Linux-PAM's controls and jumps, or OpenPAM's flags); the
 * modules are made up and modelled, so any build runs it.  And by hand: a
 * moved line is no change, an identical copy neither, a new pam_permit
 * behind a failing line is a new way in. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <security/pam_appl.h>

#include "explore.h"
#include "pwrap_tool.h"
#include "testutil.h"

#define B(code) XP_BIT(code)
#define MAXLINES 12
#define MAXVARS 24

/* ---- stacks ------------------------------------------------------------- */

struct stack {
	char *line[MAXLINES];
	size_t n;
};

static unsigned long rnd_state = 20261205;

static unsigned rnd(unsigned n)
{
	rnd_state = rnd_state * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)((rnd_state >> 33) % n);
}

static bool openpam(void)
{
	struct pamconf_rules r;

	pamconf_rules_linked(&r);
	return r.impl == PAMCONF_OPENPAM;
}

/* A random line of group auth or password. */
static char *random_line(void)
{
	static const char *const lin[] = {
		"required", "requisite", "sufficient", "optional",
		"[success=1 default=ignore]", "[success=2 default=ignore]",
		"[default=die]", "[success=ok default=bad]",
		"[success=done ignore=ignore default=1]", "[auth_err=reset default=ok]",
	};
	static const char *const opp[] = { "required", "requisite", "sufficient",
					   "binding", "optional" };
	static const char *const mods[] = { "pam_a", "pam_b", "pam_c", "pam_d" };
	const char *type = rnd(4) == 0 ? "password" : "auth";
	char *s = NULL;

	assert_true(asprintf(&s, "%s %s %s.so\n", type,
			     openpam() ? opp[rnd(5)] : lin[rnd(10)],
			     mods[rnd(4)]) > 0);
	return s;
}

/* The stack as a file's text (malloc'd). */
static char *stack_text(const struct stack *st)
{
	size_t len = 0;
	char *text = calloc(1, 1);

	for (size_t i = 0; i < st->n; i++) {
		size_t l = strlen(st->line[i]);

		text = realloc(text, len + l + 1);
		assert_non_null(text);
		memcpy(text + len, st->line[i], l + 1);
		len += l;
	}
	return text;
}

/* One to three edits of a copy: insert, delete, move, re-control. */
static void mutate(const struct stack *a, struct stack *b)
{
	b->n = a->n;
	for (size_t i = 0; i < a->n; i++) {
		b->line[i] = strdup(a->line[i]);
	}
	for (unsigned e = 0, ne = 1 + rnd(3); e < ne; e++) {
		unsigned what = rnd(4), i = b->n ? rnd((unsigned)b->n) : 0;

		if ((what == 0 || b->n == 0) && b->n < MAXLINES) {
			memmove(&b->line[i + 1], &b->line[i], (b->n - i) * sizeof(char *));
			b->line[i] = random_line();
			b->n++;
		} else if (what == 1 && b->n > 1) {
			free(b->line[i]);
			memmove(&b->line[i], &b->line[i + 1], (b->n - i - 1) * sizeof(char *));
			b->n--;
		} else if (what == 2 && b->n > 1) {
			char *l = b->line[i];
			unsigned j;

			memmove(&b->line[i], &b->line[i + 1], (b->n - i - 1) * sizeof(char *));
			j = rnd((unsigned)b->n);
			memmove(&b->line[j + 1], &b->line[j], (b->n - 1 - j) * sizeof(char *));
			b->line[j] = l;
		} else if (b->n > 0) {
			/* the same type and module, another control */
			char *l = random_line(), *mod = strrchr(b->line[i], ' ');
			char *type_end = strchr(b->line[i], ' ');
			char *ctl = strchr(l, ' ') + 1, *ctl_end = strrchr(l, ' ');
			char *s = NULL;

			assert_true(asprintf(&s, "%.*s %.*s%s", (int)(type_end - b->line[i]),
					     b->line[i], (int)(ctl_end - ctl), ctl, mod) > 0);
			free(l);
			free(b->line[i]);
			b->line[i] = s;
		}
	}
}

static void stack_free(struct stack *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->line[i]);
	}
	st->n = 0;
}

/* ---- every combination, one by one -------------------------------------- */

/* A line's identity: file, module, occurrence among the earlier positions
 * of its pass with that file and module, pass.  Malloc'd. */
static char *key_of(const struct xp_graph *g, size_t pos)
{
	const struct xp_line *l = g->seq[pos].l;
	const char *show = g->conf->files[l->file].show;
	int occ = 0;
	char *k = NULL;

	for (size_t i = g->perpass * (size_t)g->seq[pos].pass; i < pos; i++) {
		const struct xp_line *m = g->seq[i].l;

		occ += m->kind != XP_SUBSTACK && strcmp(m->name, l->name) == 0 &&
		       strcmp(g->conf->files[m->file].show, show) == 0;
	}
	assert_true(asprintf(&k, "%s\t%s\t%d\t%d", show, l->name, occ,
			     g->seq[pos].pass) > 0);
	return k;
}

struct vars {
	const struct xp_graph *g[2];
	char *key[MAXVARS];
	xp_set codes[MAXVARS];
	size_t n;
	int *var[2];		/* per position */
	int val[MAXVARS];
	xp_set pairs[64];	/* pairs[before]: the results after */
};

static void vars_build(struct vars *v, const struct xp_graph *g0,
		       const struct xp_graph *g1)
{
	memset(v, 0, sizeof(*v));
	v->g[0] = g0;
	v->g[1] = g1;
	for (int s = 0; s < 2; s++) {
		v->var[s] = calloc(v->g[s]->nseq + 1, sizeof(int));
		assert_non_null(v->var[s]);
		for (size_t p = 0; p < v->g[s]->nseq; p++) {
			char *k = key_of(v->g[s], p);
			size_t i;

			for (i = 0; i < v->n && strcmp(v->key[i], k) != 0; i++) {
			}
			if (i == v->n) {
				assert_true(v->n < MAXVARS);
				v->key[v->n] = k;
				v->codes[v->n++] = ~(xp_set)0;
			} else {
				free(k);
			}
			v->var[s][p] = (int)i;
			v->codes[i] &= xp_codes_at(v->g[s], (int)p);
		}
	}
}

static void vars_free(struct vars *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->key[i]);
	}
	free(v->var[0]);
	free(v->var[1]);
}

static int edge(const struct xp_graph *g, int n, int code)
{
	for (size_t k = 0; k < g->nodes[n].ne; k++) {
		if (g->nodes[n].e[k].outcomes & B(code)) {
			return g->nodes[n].e[k].to;
		}
	}
	fail_msg("no edge for %d", code);
	return -1;
}

static int walk(const struct vars *v, int s)
{
	const struct xp_graph *g = v->g[s];
	int n = g->root;

	if (g->nnodes == 0) {
		return PAM_ABORT;	/* pam_start fails */
	}
	while (g->nodes[n].st.pos >= 0) {
		n = edge(g, n, v->val[v->var[s][g->nodes[n].st.pos]]);
	}
	return g->nodes[n].result;
}

static void every(struct vars *v, size_t i)
{
	if (i == v->n) {
		v->pairs[walk(v, 0)] |= B(walk(v, 1));
		return;
	}
	for (int c = 0; c < 64; c++) {
		if (v->codes[i] & B(c)) {
			v->val[i] = c;
			every(v, i + 1);
		}
	}
}

/* The path p on side s is one of its graph's, ending in its result. */
static void check_path(const struct vars *v, int s, const struct xp_path *p)
{
	const struct xp_graph *g = v->g[s];
	int n = g->root;

	for (size_t i = 0; i < p->n; i++) {
		assert_int_equal(g->nodes[n].st.pos, p->c[i].pos);
		n = edge(g, n, p->c[i].code);
	}
	assert_int_equal(g->nnodes ? g->nodes[n].result : PAM_ABORT, p->result);
}

/* The outcome a combination gives variable k (-1: no call of it). */
static int value(const struct vars *v, const struct xp_path p[2], int k)
{
	int val = -1;

	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < p[s].n; i++) {
			if (v->var[s][p[s].c[i].pos] == k) {
				assert_true(val < 0 || val == p[s].c[i].code);
				val = p[s].c[i].code;
			}
		}
	}
	return val;
}

static void check_change(const struct vars *v, const struct xp_change *ch)
{
	assert_int_not_equal(ch->before, ch->after);
	for (int s = 0; s < 2; s++) {
		check_path(v, s, &ch->path[s]);
	}
	assert_int_equal(ch->path[0].result, ch->before);
	assert_int_equal(ch->path[1].result, ch->after);
	for (size_t k = 0; k < v->n; k++) {
		(void)value(v, ch->path, (int)k);	/* one outcome a line */
	}
	for (size_t i = 0; ch->term != NULL && i < ch->term->n; i++) {
		const struct xp_lit *l = &ch->term->l[i];
		int val = value(v, ch->path, v->var[ch->side][l->pos]);

		assert_true(val < 0 || (l->codes & B(val)));
		assert_int_equal(ch->side == 1 ? ch->after : ch->before, PAM_SUCCESS);
	}
}

/* The texts compared (for the messages). */
static const char *text_a, *text_b;

/* diff.c's answer for each group of d against the enumeration. */
static void check_diff(const struct xp_diff *d)
{
	assert_int_equal(d->n[0], d->n[1]);
	for (int k = 0; k < d->n[1]; k++) {
		const struct xp_cmp *c = &d->cmp[k];
		struct vars v;
		xp_set got[64] = { 0 };
		bool weaker = false;

		vars_build(&v, &d->r[0][k].g, &d->r[1][k].g);
		every(&v, 0);
		for (size_t i = 0; i < c->nch; i++) {
			check_change(&v, &c->ch[i]);
			got[c->ch[i].before] |= B(c->ch[i].after);
		}
		for (int b = 0; b < 64; b++) {
			xp_set want = v.pairs[b] & ~B(b);

			if (got[b] != want) {
				fail_msg("group %d: from %s: diff.c %#llx, every "
					 "combination %#llx\n-- before:\n%s-- after:\n%s",
					 k, xp_code_name(b), (unsigned long long)got[b],
					 (unsigned long long)want, text_a, text_b);
			}
			weaker |= b != PAM_SUCCESS && (want & B(PAM_SUCCESS));
		}
		assert_int_equal(c->weaker, weaker);
		assert_int_equal(c->same, c->nch == 0);
		vars_free(&v);
	}
}

/* ---- the tests -------------------------------------------------------------- */

struct dirs {
	char *top, *a, *b;
	struct xp_opts o;
	struct xp_model m[4];
};

static int setup(void **state)
{
	static const char *const mods[] = { "pam_a", "pam_b", "pam_c", "pam_d" };
	struct dirs *d = calloc(1, sizeof(*d));
	static struct xp_model used[5];

	assert_non_null(d);
	d->top = tu_mkdtemp("explore-diff");
	d->a = tu_subdir(d->top, "a");
	d->b = tu_subdir(d->top, "b");
	for (int i = 0; i < 4; i++) {
		d->m[i].target = (char *)mods[i];
		d->m[i].outcomes = B(PAM_SUCCESS) | B(PAM_AUTH_ERR) | B(PAM_IGNORE);
	}
	d->m[3].outcomes = B(PAM_SUCCESS);	/* pam_d: a pam_permit */
	d->o.type = XP_ALL_TYPES;
	d->o.models = used;
	d->o.no_replay = true;
	d->o.sysmoddir = system_module_dir();
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dirs *d = *state;

	tu_rmtree(d->top);
	free(d->top);
	free(d->a);
	free(d->b);
	free((char *)d->o.sysmoddir);
	free(d);
	return 0;
}

/* The models of the made-up modules either text names (a model that
 * names nothing in either version is an error). */
static void set_models(struct dirs *d, const char *a, const char *b)
{
	static const char *const mods[] = { "pam_a.so", "pam_b.so", "pam_c.so",
					    "pam_d.so" };

	d->o.nmodels = 0;
	for (int i = 0; i < 4; i++) {
		if (strstr(a, mods[i]) != NULL || strstr(b, mods[i]) != NULL) {
			d->o.models[d->o.nmodels++] = d->m[i];
		}
	}
}

static void diff_texts(struct dirs *d, const char *a, const char *b,
		       struct xp_diff *x)
{
	tu_write_text(d->a, "svc", a);
	tu_write_text(d->b, "svc", b);
	set_models(d, a, b);
	text_a = a;
	text_b = b;
	if (xp_diff(x, d->a, d->b, "svc", &d->o) != 0) {
		fail_msg("%s\n-- before:\n%s-- after:\n%s", x->error, a, b);
	}
	check_diff(x);
}

static void test_random_pairs(void **state)
{
	struct dirs *d = *state;
	unsigned weaker = 0, same = 0, moved = 0;

	for (int i = 0; i < 300; i++) {
		struct stack a = { .n = 2 + rnd(5) }, b;
		struct xp_diff x;

		for (size_t k = 0; k < a.n; k++) {
			a.line[k] = random_line();
		}
		char *ta, *tb;

		mutate(&a, &b);
		ta = stack_text(&a);
		tb = stack_text(&b);
		diff_texts(d, ta, tb, &x);
		free(ta);
		free(tb);
		for (int k = 0; k < x.n[1]; k++) {
			weaker += x.cmp[k].weaker;
			same += x.cmp[k].same && k == XP_AUTH;
		}
		moved += a.n == b.n;
		xp_diff_free(&x);
		stack_free(&a);
		stack_free(&b);
	}
	/* the cases are not all alike */
	assert_true(weaker > 20 && same > 5 && moved > 20);
}

static void test_by_hand(void **state)
{
	struct dirs *d = *state;
	const char *ab = "auth required pam_a.so\nauth required pam_b.so\n";
	const char *ba = "auth required pam_b.so\nauth required pam_a.so\n";
	struct xp_diff x;

	/* a line moved across another: every combination gives what it gave */
	diff_texts(d, ab, ba, &x);
	assert_true(x.cmp[XP_AUTH].same);
	assert_int_equal(xp_diff_status(&x), 0);
	xp_diff_free(&x);
	/* the same files: the same, and the same findings */
	diff_texts(d, ab, ab, &x);
	for (int k = 0; k < x.n[1]; k++) {
		assert_true(x.cmp[k].same);
		assert_int_equal(x.cmp[k].nfnew + x.cmp[k].nfgone, 0);
	}
	xp_diff_free(&x);
	/* pam_d (always success) made sufficient in front: a new way in,
	 * where after always succeeds; pam_a's line, now dead, a new finding
	 * (no bypass: pam_d is not on the list of modules that prove
	 * nothing) */
	diff_texts(d, "auth required pam_a.so\n",
		   "auth sufficient pam_d.so\nauth required pam_a.so\n", &x);
	assert_true(x.cmp[XP_AUTH].weaker);
	assert_int_equal(xp_diff_status(&x), 1);
	assert_int_equal(x.cmp[XP_AUTH].ch[0].after, PAM_SUCCESS);
	assert_int_equal(x.cmp[XP_AUTH].ch[0].before, PAM_AUTH_ERR);
	assert_non_null(x.cmp[XP_AUTH].ch[0].term);
	assert_int_equal(x.cmp[XP_AUTH].ch[0].term->n, 0);
	assert_int_equal(x.cmp[XP_AUTH].nfnew, 1);
	assert_int_equal(x.r[1][XP_AUTH].f[x.cmp[XP_AUTH].fnew[0]].kind, XP_DEAD);
	xp_diff_free(&x);
	/* a model that names a line of neither version */
	tu_write_text(d->a, "svc", ab);
	tu_write_text(d->b, "svc", ab);
	set_models(d, ab, ab);
	d->o.models[d->o.nmodels].target = (char *)"pam_nowhere";
	d->o.models[d->o.nmodels++].outcomes = B(PAM_SUCCESS);
	assert_int_equal(xp_diff(&x, d->a, d->b, "svc", &d->o), -1);
	assert_non_null(strstr(x.error, "--model pam_nowhere: no such module"));
	xp_diff_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_random_pairs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_hand, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
