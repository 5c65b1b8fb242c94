/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: findings a project accepts (pamtest-explore(1),
 * ACCEPTED FINDINGS), so that a stack with a known finding stays under
 * test with exit status 0 until something new appears.  An accept names a
 * finding as "KIND:WHERE", WHERE as findings name it ("FILE:LINE", or
 * "FILE" for one of the whole service), given with --accept, in an accept
 * file (--accept-file: one a line, '#' starts a comment) or in a
 * scenario's explore block (`accept`).  One rule is built in: the dead
 * pam_deny line of Debian's pam-auth-update (see debian_idiom()).
 *
 * Accepted findings leave r->f for r->acc; each keeps what accepted it.
 */
#define _GNU_SOURCE
#include "explore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xp_add_accept(struct xp_accept **v, size_t *n, const char *arg,
		  const char *from)
{
	const char *colon = strchr(arg, ':');
	const char *w;
	struct xp_accept *nv;
	int kind = -1;

	if (colon == NULL) {
		return -1;
	}
	for (int k = 0; k < XP_NKINDS; k++) {
		const char *name = xp_finding_name((enum xp_kind_f)k);

		if (strlen(name) == (size_t)(colon - arg) &&
		    strncmp(arg, name, strlen(name)) == 0) {
			kind = k;
		}
	}
	for (w = colon + 1; *w == ' ' || *w == '\t'; w++) {
	}
	if (kind < 0 || *w == '\0') {
		return -1;
	}
	nv = reallocarray(*v, *n + 1, sizeof(*nv));
	if (nv == NULL) {
		return -1;
	}
	*v = nv;
	nv[*n] = (struct xp_accept){ (enum xp_kind_f)kind, strdup(w),
				     strdup(from) };
	if (nv[*n].where == NULL || nv[*n].from == NULL) {
		free(nv[*n].where);
		free(nv[*n].from);
		return -1;
	}
	(*n)++;
	return 0;
}

void xp_accepts_free(struct xp_accept *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].where);
		free(v[i].from);
	}
	free(v);
}

/* The line's words: blanks around it and a '#' comment off (in place). */
static char *trim(char *line)
{
	char *e;

	line[strcspn(line, "#\n")] = '\0';
	while (*line == ' ' || *line == '\t') {
		line++;
	}
	for (e = line + strlen(line); e > line && (e[-1] == ' ' ||
						    e[-1] == '\t' ||
						    e[-1] == '\r');) {
		*--e = '\0';
	}
	return line;
}

int xp_read_accepts(const char *path, struct xp_accept **v, size_t *n)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *from = NULL;
	size_t cap = 0;
	unsigned no = 0;
	int rc = 0;

	if (f == NULL) {
		fprintf(stderr, "pamtest explore: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		char *w = trim(line);

		no++;
		if (*w == '\0') {
			continue;
		}
		free(from);
		if (asprintf(&from, "%s:%u", path, no) < 0) {
			from = NULL;
			rc = -1;
		} else if (xp_add_accept(v, n, w, from) != 0) {
			fprintf(stderr, "pamtest explore: %s: expected "
				"KIND:FILE:LINE (KIND: bypass, lockout, "
				"dead-line or ignored)\n", from);
			rc = -1;
		}
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "pamtest explore: %s: %s\n", path,
			strerror(errno));
		rc = -1;
	}
	free(from);
	free(line);
	fclose(f);
	return rc;
}

/*
 * Debian's pam-auth-update writes each common-* file with a "Primary"
 * block of modules that jump over a `requisite pam_deny.so` on success;
 * when no package puts a module there (common-session, usually) it writes
 * `[default=1] pam_permit.so` instead, which always jumps over the deny:
 * a dead line on purpose.  Accepted when the dead line is a pam_deny call
 * and the line before it in the stack, in the same file, a pam_permit
 * call that jumps one line whatever it returns.
 */
static bool debian_idiom(const struct xp_graph *g, int site)
{
	for (size_t i = 1; i < g->perpass; i++) {
		const struct xp_line *l = g->seq[i].l, *p = g->seq[i - 1].l;
		bool jumps = true;

		if (l->site != site) {
			continue;
		}
		if (l->kind != XP_CALL || strcmp(l->name, "pam_deny") != 0 ||
		    p->kind != XP_CALL || strcmp(p->name, "pam_permit") != 0 ||
		    p->file != l->file || g->conf->rules.impl == PAMCONF_OPENPAM) {
			return false;
		}
		for (int c = 0; c < XP_NCODES; c++) {
			jumps &= p->act[c] == 1;
		}
		return jumps;
	}
	return false;
}

#define DEBIAN_RULE "the pam-auth-update rule"

/* What accepts finding f: an index into o->accepts, -2 the built-in
 * rule, or -1. */
static int accepted_by(const struct xp_report *r, const struct xp_finding *f,
		       const struct xp_opts *o)
{
	for (size_t i = 0; i < o->naccepts; i++) {
		if (o->accepts[i].kind == f->kind &&
		    strcmp(o->accepts[i].where, f->where) == 0) {
			return (int)i;
		}
	}
	return f->kind == XP_DEAD && f->site >= 0 && !r->refused &&
			       debian_idiom(&r->g, f->site)
		       ? -2
		       : -1;
}

int xp_accept(struct xp_report *r, const struct xp_opts *o)
{
	size_t keep = 0;

	for (size_t i = 0; i < r->nf; i++) {
		struct xp_finding *f = &r->f[i];
		int by = accepted_by(r, f, o);
		struct xp_finding *v;

		if (by == -1) {
			r->f[keep++] = *f;
			continue;
		}
		v = reallocarray(r->acc, r->nacc + 1, sizeof(*v));
		if (v == NULL) {
			return -1;
		}
		r->acc = v;
		v[r->nacc] = *f;
		v[r->nacc].accept = by;
		v[r->nacc].by = by == -2 ? DEBIAN_RULE : o->accepts[by].from;
		r->nacc++;
	}
	r->nf = keep;
	return 0;
}
