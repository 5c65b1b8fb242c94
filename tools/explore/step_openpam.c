/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, OpenPAM: its dispatch rule (openpam_dispatch.c) as a
 * step function over its small state (xp_openpam): whether a required (or
 * binding) module failed, the code kept (the first failure's, or the first
 * required one's), whether a module succeeded.  PAM_IGNORE is skipped;
 * success of sufficient or binding ends the chain unless something
 * required failed (not in chauthtok's PAM_PRELIM_CHECK pass); requisite
 * failure ends it.  No success at all is PAM_SYSTEM_ERR ("all modules were
 * unsuccessful").
 */
#define _GNU_SOURCE
#include "explore.h"

#include <security/pam_appl.h>
#include <stdio.h>
#include <string.h>

static int begin(const struct xp_graph *g, int pass, struct xp_state *s);

static int finish(const struct xp_graph *g, int pass, const struct xp_state *s,
		  struct xp_state *next)
{
	int err = s->status;

	if (!s->imp && err != PAM_NEW_AUTHTOK_REQD) {
		err = PAM_SUCCESS;
	}
	if (err == PAM_SUCCESS && !s->flag) {
		err = PAM_SYSTEM_ERR;	/* "all modules were unsuccessful" */
	}
	if (err == PAM_SUCCESS && pass + 1 < g->npasses) {
		return begin(g, pass + 1, next);
	}
	return err;
}

static int begin(const struct xp_graph *g, int pass, struct xp_state *s)
{
	struct xp_state st;

	memset(&st, 0, sizeof(st));
	st.status = PAM_SUCCESS;
	if (g->perpass == 0) {
		return finish(g, pass, &st, s);
	}
	*s = st;
	s->pos = (int)((size_t)pass * g->perpass);
	return -1;
}

static int step(const struct xp_graph *g, const struct xp_state *s, int code,
		struct xp_state *next)
{
	const struct xp_line *l = g->seq[s->pos].l;
	int pass = g->seq[s->pos].pass;
	bool prelim = g->npasses == 2 && pass == 0;
	struct xp_state st = *s;
	bool end = false;

	if (code == PAM_SUCCESS) {
		st.flag = 1;
		end = (l->flag == PAMCONF_SUFFICIENT || l->flag == PAMCONF_BINDING) &&
		      !st.imp && !prelim;
	} else if (code != PAM_IGNORE) {
		if (st.status == PAM_SUCCESS) {
			st.status = (unsigned char)code;
		}
		if ((l->flag == PAMCONF_REQUIRED || l->flag == PAMCONF_BINDING) &&
		    !st.imp) {
			st.imp = 1;
			st.status = (unsigned char)code;
		}
		if (l->flag == PAMCONF_REQUISITE) {
			st.imp = 1;
			end = true;
		}
	}
	if (end || (size_t)s->pos + 1 >= (size_t)(pass + 1) * g->perpass) {
		return finish(g, pass, &st, next);
	}
	*next = st;
	next->pos = s->pos + 1;
	return -1;
}

static void state_text(const struct xp_state *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", s->imp ? "failed " : "",
		 s->status != PAM_SUCCESS || s->imp ? xp_code_name(s->status) : "",
		 s->flag ? (s->imp || s->status != PAM_SUCCESS ? ", a success"
							       : "a success")
			 : (s->imp || s->status != PAM_SUCCESS ? "" : "nothing yet"));
}

const struct xp_impl xp_openpam = { begin, step, state_text };
