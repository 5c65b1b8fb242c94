/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, Linux-PAM: libpam's dispatch rule (pam_dispatch.c,
 * _pam_dispatch_aux) as a step function over its small state (xp_linux).
 *
 * Dispatch: impression (undecided, positive, negative) and the code held,
 * saved on entering each substack for "reset"; actions ok, done, bad, die,
 * ignore, reset and jumps, which count a substack as one line and end at
 * its end (a jump beyond it is a "bad jump").  chauthtok is two passes
 * (PAM_PRELIM_CHECK, then PAM_UPDATE_AUTHTOK if the first succeeded).
 */
#define _GNU_SOURCE
#include "explore.h"

#include <security/pam_appl.h>
#include <stdio.h>
#include <string.h>

#define UNDEF 0
#define POSITIVE 1
#define NEGATIVE (-1)

/* The pass's result once its last line is done. */
static int begin(const struct xp_graph *g, int pass, struct xp_state *s);

static int finish(const struct xp_graph *g, int pass, const struct xp_state *s,
		  struct xp_state *next)
{
	int status = s->status;

	if (status == PAM_SUCCESS && s->imp != POSITIVE) {
		status = PAM_PERM_DENIED;
	}
	if (status == PAM_SUCCESS && pass + 1 < g->npasses) {
		return begin(g, pass + 1, next);
	}
	return status;
}

/* From line h on (prev: the level of the line processed before it), passes
 * over substack marks, saving the state where a substack is entered. */
static int settle(const struct xp_graph *g, int pass, size_t h, int prev,
		  struct xp_state *s, struct xp_state *next)
{
	size_t end = (size_t)(pass + 1) * g->perpass;

	for (; h < end; h++) {
		int lvl = g->seq[h].l->level;

		if (prev < lvl) {
			s->saved[lvl].imp = s->imp;
			s->saved[lvl].status = s->status;
		}
		prev = lvl;
		if (g->seq[h].l->kind != XP_SUBSTACK) {
			break;
		}
	}
	if (h >= end) {
		return finish(g, pass, s, next);
	}
	memset(next, 0, sizeof(*next));
	next->pos = (int)h;
	next->imp = s->imp;
	next->status = s->status;
	next->depth = (unsigned char)g->seq[h].l->level;
	for (int i = 1; i <= next->depth; i++) {
		next->saved[i] = s->saved[i];
	}
	return -1;
}

static int begin(const struct xp_graph *g, int pass, struct xp_state *s)
{
	struct xp_state st;

	if (g->perpass == 0) {
		return PAM_PERM_DENIED;	/* "no modules loaded" */
	}
	memset(&st, 0, sizeof(st));
	st.imp = UNDEF;
	st.status = PAM_PERM_DENIED;
	return settle(g, pass, (size_t)pass * g->perpass, 0, &st, s);
}

static int step(const struct xp_graph *g, const struct xp_state *s, int code,
		struct xp_state *next)
{
	const struct xp_line *l = g->seq[s->pos].l;
	int pass = g->seq[s->pos].pass;
	size_t h = (size_t)s->pos, end = (size_t)(pass + 1) * g->perpass;
	int lvl = l->level, action;
	struct xp_state st = *s;

	action = code >= 0 && code < XP_NCODES ? l->act[code] : XP_BAD;
	if (code < 0 || code >= XP_NCODES) {
		code = PAM_PERM_DENIED;
	}
	switch (action) {
	case XP_RESET:
		st.imp = lvl == 0 ? UNDEF : s->saved[lvl].imp;
		st.status = lvl == 0 ? PAM_PERM_DENIED : s->saved[lvl].status;
		break;
	case XP_OK:
	case XP_DONE:
		if (st.imp == UNDEF ||
		    (st.imp == POSITIVE && st.status == PAM_SUCCESS)) {
			st.imp = POSITIVE;
			st.status = (unsigned char)code;
		}
		if (st.imp == POSITIVE && action == XP_DONE) {
			goto decided;
		}
		break;
	case XP_BAD:
	case XP_DIE:
		if (st.imp != NEGATIVE) {
			st.imp = NEGATIVE;
			st.status = (unsigned char)(code == PAM_IGNORE ?
						    PAM_PERM_DENIED : code);
		}
		if (action == XP_DIE) {
			goto decided;
		}
		break;
	case XP_IGNORE:
		break;
	default:
		while (action > 0 && h + 1 < end && g->seq[h + 1].l->level >= lvl) {
			do {
				h++;
			} while (h + 1 < end && g->seq[h + 1].l->level > lvl);
			action--;
		}
		if (action != 0) {	/* "bad jump in stack" */
			st.imp = NEGATIVE;
			st.status = PAM_PERM_DENIED;
		}
	}
	return settle(g, pass, h + 1, lvl, &st, next);
decided:
	while (h + 1 < end && g->seq[h + 1].l->level >= lvl) {
		h++;
	}
	return settle(g, pass, h + 1, lvl, &st, next);
}

static void state_text(const struct xp_state *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s%s",
		 s->imp == UNDEF ? "undecided" : s->imp == POSITIVE ? "positive"
								    : "negative",
		 xp_code_name(s->status), s->depth > 0 ? " (in a substack)" : "");
}

const struct xp_impl xp_linux = { begin, step, state_text };
