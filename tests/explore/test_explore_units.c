/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of pamtest explore's stages (tools/explore, pwrap_explore):
 * both dispatch rules (Linux-PAM's and OpenPAM's, whatever libpam the
 * build has) on stacks made by hand, and the replay, in this process
 * through libpam_wrapper (preloaded): it must agree with the model read
 * from a service's files, and catch a reading mistake planted in that
 * model as a disagreement. */
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

/* ---- the dispatch rules, on stacks made by hand ------------------------ */

static const struct xp_file file = { .path = "/x/svc", .show = "svc" };

/* A line: Linux-PAM's actions from control ("[...]" without its brackets,
 * as libpam passes the token), OpenPAM's flag. */
static struct xp_line line(unsigned n, const char *control, int flag,
			   xp_set outcomes)
{
	struct xp_line l = { .kind = XP_CALL, .line = n, .flag = flag,
			     .name = (char *)"m", .outcomes = outcomes,
			     .site = (int)n - 1 };

	assert_true(pwrap_control_actions(control, l.act, true));
	return l;
}

/* The results reachable in group t of a stack on impl. */
static xp_set results(const struct xp_impl *impl, struct xp_line *v, size_t n,
		      enum xp_type t)
{
	struct xp_conf c = { .impl = impl, .files = (struct xp_file *)&file,
			     .nfiles = 1 };
	struct xp_graph g;
	xp_set r;

	c.conf[t].v = v;
	c.conf[t].n = n;
	assert_int_equal(xp_graph_build(&g, &c, t, false), 0);
	r = g.nodes[g.root].reach;
	xp_graph_free(&g);
	return r;
}

#define B(code) XP_BIT(code)

static void test_linux_rule(void **state)
{
	/* a jump over a requisite pam_deny: success only through it */
	struct xp_line v[] = {
		line(1, "success=1 default=ignore", 0,
		     B(PAM_SUCCESS) | B(PAM_AUTH_ERR)),
		line(2, "requisite", 0, B(PAM_AUTH_ERR)),
		line(3, "required", 0, B(PAM_SUCCESS)),
	};

	(void)state;
	assert_int_equal(results(&xp_linux, v, 3, XP_AUTH),
			 B(PAM_SUCCESS) | B(PAM_AUTH_ERR));
	/* ignore all the way: no module decided */
	v[0] = line(1, "optional", 0, B(PAM_IGNORE));
	assert_int_equal(results(&xp_linux, v, 1, XP_AUTH), B(PAM_PERM_DENIED));
	/* sufficient ends it on success, a failure before stays */
	v[0] = line(1, "required", 0, B(PAM_AUTH_ERR));
	v[1] = line(2, "sufficient", 0, B(PAM_SUCCESS));
	assert_int_equal(results(&xp_linux, v, 2, XP_AUTH), B(PAM_AUTH_ERR));
}

static void test_openpam_rule(void **state)
{
	/* binding: its success ends the chain, its failure is required's */
	struct xp_line v[] = {
		line(1, "required", PAMCONF_BINDING,
		     B(PAM_SUCCESS) | B(PAM_AUTH_ERR)),
		line(2, "required", PAMCONF_REQUIRED, B(PAM_AUTH_ERR)),
	};

	(void)state;
	assert_int_equal(results(&xp_openpam, v, 2, XP_AUTH),
			 B(PAM_SUCCESS) | B(PAM_AUTH_ERR));
	/* the same stack read by Linux-PAM's rule never succeeds */
	assert_int_equal(results(&xp_linux, v, 2, XP_AUTH), B(PAM_AUTH_ERR));
	/* nothing succeeded: "all modules were unsuccessful" */
	v[0] = line(1, "optional", PAMCONF_OPTIONAL, B(PAM_IGNORE));
	assert_int_equal(results(&xp_openpam, v, 1, XP_AUTH),
			 B(PAM_SYSTEM_ERR));
	/* chauthtok: sufficient does not end the prelim pass */
	v[0] = line(1, "sufficient", PAMCONF_SUFFICIENT, B(PAM_SUCCESS));
	v[1] = line(2, "required", PAMCONF_REQUIRED,
		    B(PAM_SUCCESS) | B(PAM_AUTHTOK_ERR));
	assert_int_equal(results(&xp_openpam, v, 2, XP_PASSWORD),
			 B(PAM_SUCCESS) | B(PAM_AUTHTOK_ERR));
	assert_int_equal(results(&xp_openpam, v, 2, XP_AUTH), B(PAM_SUCCESS));
}

/* ---- the replay, through libpam_wrapper -------------------------------- */

static struct xp_opts opts(void)
{
	struct xp_opts o = { .type = XP_AUTH };

	o.moddir = getenv("PWRAP_MODULE_DIR");
	o.sysmoddir = system_module_dir();
	return o;
}

/* Explores service in dir for auth, with plant() changing the model
 * between reading and building; *r the report (replayed). */
static void explore(const char *dir, struct xp_opts *o,
		    void (*plant)(struct xp_conf *), struct xp_conf *c,
		    struct xp_report *r)
{
	struct xp_replayer *rp;
	char *err = NULL;

	assert_int_equal(xp_read(c, dir, "svc", o), 0);
	assert_int_equal(xp_apply_outcomes(c, o), 0);
	if (plant != NULL) {
		plant(c);
	}
	memset(r, 0, sizeof(*r));
	r->service = c->service;
	r->type = XP_AUTH;
	assert_null(c->refused);
	assert_int_equal(xp_graph_build(&r->g, c, XP_AUTH, true), 0);
	assert_int_equal(xp_analyse(r, o), 0);
	rp = xp_replay_begin(c, &err);
	assert_non_null(rp);
	xp_replay_run(rp, r, NULL);
	xp_replay_end(rp);
	assert_true(r->replayed);
}

static void done(struct xp_conf *c, struct xp_report *r, struct xp_opts *o)
{
	xp_report_free(r);
	xp_conf_free(c);
	free((char *)o->sysmoddir);
}

/* The model misses the last line of the auth stack. */
static void drop_last(struct xp_conf *c)
{
	c->conf[XP_AUTH].n--;
	free(c->conf[XP_AUTH].v[c->conf[XP_AUTH].n].name);
}

/* Issue 33's reading mistake: the include of /dev/null (line 1) taken as
 * one that cannot be read, a line that fails. */
static void devnull_fails(struct xp_conf *c)
{
	struct xp_stack *s = &c->conf[XP_AUTH];
	struct xp_line *l;

	s->v = realloc(s->v, (s->n + 1) * sizeof(*s->v));
	c->sites = realloc(c->sites, (c->nsites + 1) * sizeof(*c->sites));
	assert_non_null(s->v);
	assert_non_null(c->sites);
	memmove(s->v + 1, s->v, s->n++ * sizeof(*s->v));
	l = &s->v[0];
	memset(l, 0, sizeof(*l));
	l->kind = XP_FIXED;
	l->line = 1;
	l->fixed = PAM_PERM_DENIED;
	l->why = "its include cannot be read";
	l->name = strdup("(include failed)");
	for (int i = 0; i < XP_NCODES; i++) {
		l->act[i] = XP_BAD;
	}
	c->sites[c->nsites] = (struct xp_site){ 0, 1 };
	l->site = (int)c->nsites++;
}

static void test_replay_agrees_and_catches(void **state)
{
	const char *d = *state;
	struct pamconf_rules rules;
	struct xp_opts o = opts();
	struct xp_conf c;
	struct xp_report r;

	pamconf_rules_linked(&rules);
	tu_write_text(d, "svc", rules.impl == PAMCONF_OPENPAM
			       ? "auth required pam_matrix.so\n"
				 "auth required pam_matrix.so\n"
			       : "auth include /dev/null\n"
				 "auth required pam_matrix.so\n"
				 "auth required pam_matrix.so\n");
	/* as read: libpam agrees */
	explore(d, &o, NULL, &c, &r);
	assert_null(r.disagree);
	assert_true(r.replays >= 1);
	done(&c, &r, &o);
	/* a line the model missed */
	o = opts();
	explore(d, &o, drop_last, &c, &r);
	assert_non_null(r.disagree);
	assert_non_null(strstr(r.disagree, "libpam disagrees with the graph"));
	done(&c, &r, &o);
	if (rules.impl == PAMCONF_OPENPAM) {
		return;
	}
	/* /dev/null read as a target that cannot be read */
	o = opts();
	explore(d, &o, devnull_fails, &c, &r);
	assert_non_null(r.disagree);
	assert_non_null(strstr(r.disagree, "-> PAM_PERM_DENIED"));
	done(&c, &r, &o);
}

static void test_absent_module_modelled(void **state)
{
	const char *d = *state;
	struct xp_model m = { (char *)"pam_nowhere",
			      B(PAM_SUCCESS) | B(PAM_AUTH_ERR) };
	struct xp_opts o = opts();
	struct xp_conf c;
	struct xp_report r;

	tu_write_text(d, "svc", "auth required pam_nowhere.so\n");
	o.models = &m;
	o.nmodels = 1;
	explore(d, &o, NULL, &c, &r);
	/* modelled: both outcomes in the table, checked on libpam */
	assert_null(r.disagree);
	assert_int_equal(r.g.nodes[r.g.root].reach,
			 B(PAM_SUCCESS) | B(PAM_AUTH_ERR));
	assert_int_equal(c.nabsent, 1);
	assert_string_equal(c.absent[0].name, "pam_nowhere");
	assert_true(c.absent[0].modelled);
	done(&c, &r, &o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux_rule),
		cmocka_unit_test(test_openpam_rule),
		cmocka_unit_test_setup_teardown(test_replay_agrees_and_catches,
						tu_setup_tmpdir, tu_teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_absent_module_modelled,
						tu_setup_tmpdir, tu_teardown_tmpdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
