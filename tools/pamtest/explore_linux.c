/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, Linux-PAM: a service read the way libpam reads it
 * (pam_handlers.c) into one stack per management group (libpam's dispatch
 * rule is explore_linux_step.c).
 *
 * Reading: fgets() into a 1024-byte buffer, '#' ends a line, a trailing
 * backslash continues it, tokens split on " \n\t" with "[...]" one token,
 * keywords without case.  The service file is read for every group, an
 * included file for the group of the including line ("@include", Debian's,
 * for the group being read).  A line of an unknown group, without a
 * control or without a module becomes a line that always fails; a module
 * that cannot be loaded returns PAM_MODULE_UNKNOWN, as does a module
 * without the group's function.  Include targets resolve as libpam_wrapper
 * resolves them: relative ones inside the service directory (the system's
 * /etc/pam.d with --system), absolute ones as written.  What makes libpam
 * fail pam_start (a broken service file or "other", a failed @include in
 * one; in an included file it cannot be told, see read_line) or
 * crash (an include without a target), and include cycles, which the
 * wrapper refuses, end in xp_conf.refused.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_names.h"
#include "explore_read.h"
#include "pwrap_control.h"
#include "pwrap_private.h"

#include <ctype.h>
#include <stdio.h>
#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LINE_BUF 1024	/* libpam's BUF_SIZE */
#define TYPE_ANY (-1)

/* l.act holds pwrap_control.c's actions as they are */
#define XP_SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(XP_NCODES == PWRAP_CONTROL_CODES &&
	       XP_SAME(XP_IGNORE, PWRAP_CONTROL_IGNORE) &&
	       XP_SAME(XP_OK, PWRAP_CONTROL_OK) &&
	       XP_SAME(XP_DONE, PWRAP_CONTROL_DONE) &&
	       XP_SAME(XP_BAD, PWRAP_CONTROL_BAD) &&
	       XP_SAME(XP_DIE, PWRAP_CONTROL_DIE) &&
	       XP_SAME(XP_RESET, PWRAP_CONTROL_RESET),
	       "explore's actions are pwrap_control.c's");

const char *xp_code_word(int code)
{
	return pwrap_control_code_word(code);
}

const char *xp_system_dir(void)
{
	return "/etc/pam.d";
}

/* ---- lines and tokens, as libpam reads them ------------------------------ */

/* One logical line into buf; 1, 0 at the end, -1 libpam gives up on the
 * file, -2 libpam loops forever (fgets with room for the NUL only). */
static int assemble(struct xp_text *in, char *buf, unsigned *first)
{
	char *p = buf, *endp = buf + LINE_BUF;
	int used = 0;

	for (;;) {
		char *s, *os;

		if (p >= endp)
			return -1;
		if (endp - p == 1)
			return -2;
		if (!xp_gets(in, p, (size_t)(endp - p)))
			return used ? -1 : 0;
		if (!used)
			*first = in->line;
		s = p + strspn(p, " \n\t");
		if (*s == '\0' || *s == '#')
			continue;
		os = s;
		s += strcspn(s, "#");
		if (*s == '#') {
			*s = '\0';
			return 1;
		}
		s = os + strlen(os);
		while (s > os && (*--s == ' ' || *s == '\t' || *s == '\n'))
			;
		if (*s != '\\')
			return 1;
		*s++ = ' ';
		*s = '\0';
		p = s;
		used = 1;
	}
}

static int delim(char c)
{
	return c == ' ' || c == '\n' || c == '\t';
}

/* The next token of *next (cut in place), "[...]" without its brackets and
 * with "\]" as "]"; NULL when none is left. */
static char *token(char **next)
{
	char *from = *next, *end, *to;

	if (from == NULL)
		return NULL;
	while (*from != '\0' && delim(*from))
		from++;
	if (*from == '[') {
		for (to = end = ++from; *end != '\0' && *end != ']'; ++to, ++end) {
			if (*end == '\\' && end[1] == ']')
				++end;
			if (to != end)
				*to = *end;
		}
		if (to != end)
			*to = '\0';
	} else if (*from != '\0') {
		for (end = from; *end != '\0' && !delim(*end); ++end)
			;
	} else {
		*next = NULL;
		return NULL;
	}
	if (*end != '\0')
		*end++ = '\0';
	*next = *end != '\0' ? end : NULL;
	return from;
}

static void set_default(int *act, int a)
{
	for (int i = 0; i < XP_NCODES; i++)
		if (act[i] == XP_UNDEF)
			act[i] = a;
}

/* ---- reading a file ------------------------------------------------------ */

struct rd {
	struct xp_conf *c;
	const char *base;	/* where relative targets are */
	bool other;		/* lines go to the "other" stacks */
	int chain[64];		/* files being read (cycle check) */
	int nchain;
};

static int add_line(struct rd *r, int type, const struct xp_line *l)
{
	struct xp_stack *s = r->other ? &r->c->other[type] : &r->c->conf[type];
	struct xp_line *v = reallocarray(s->v, s->n + 1, sizeof(*v));

	if (v == NULL)
		return -1;
	s->v = v;
	v[s->n++] = *l;
	return 0;
}

static int read_file(struct rd *r, int file, int type, int level);

/* Reads an include target for `type` at `level`: 0, or -1 when libpam's
 * read fails (the line then fails); -2 refused (set in r->c). */
static int include(struct rd *r, const char *target, int type, int level,
		   int from, unsigned line)
{
	char *path = NULL;
	int f, rc;

	if (level >= XP_MAXLEVEL)
		return -1;	/* "maximum level of substacks reached" */
	if (target[0] == '/')
		path = strdup(target);
	else if (asprintf(&path, "%s/%s", r->base, target) < 0)
		path = NULL;
	if (path == NULL)
		return xp_oom(r->c);
	f = xp_file_index(r->c, path, r->base);
	free(path);
	if (f < 0)
		return xp_oom(r->c);
	for (int i = 0; i < r->nchain; i++) {
		if (r->chain[i] == f) {
			xp_refuse(r->c, from, line, "an include cycle through %s "
				  "(libpam would recurse until it fails; the "
				  "wrapper refuses it)", r->c->files[f].show);
			return -2;
		}
	}
	if (r->nchain >= (int)(sizeof(r->chain) / sizeof(r->chain[0]))) {
		xp_refuse(r->c, from, line, "includes nested too deeply");
		return -2;
	}
	rc = read_file(r, f, type, level);
	return rc == -2 ? -2 : rc;
}

/* One logical line of file `file` read for `want` (TYPE_ANY or a type). */
static int read_line(struct rd *r, int file, unsigned lineno, char *buf,
		     int want, int level)
{
	struct xp_line l = { .kind = XP_CALL, .file = file, .line = lineno,
			     .level = level };
	char *next = buf, *tok, *target;
	int type = -1, silent = 0, inc = 0, sub = 0, rc;

	for (int i = 0; i < XP_NCODES; i++)
		l.act[i] = XP_UNDEF;
	tok = token(&next);
	if (tok == NULL)
		return 0;
	if (tok[0] == '-') {
		silent = 1;
		tok++;
	}
#if defined(PWRAP_LIBPAM_AT_INCLUDE)
	if (strcasecmp(tok, "@include") == 0) {
		target = token(&next);
		if (target == NULL) {
			xp_refuse(r->c, file, lineno, "an @include without a "
				  "target, on which libpam crashes");
			return -2;
		}
		/* Debian's libpam: an include of the group being read */
		rc = include(r, target, want, level, file, lineno);
		if (rc != -1)
			return rc;
		/* Read for every group (the service file), libpam then gives
		 * up on the file.  Elsewhere it adds a failing line, but to a
		 * group that depends on what it did before (memory it does
		 * not set): nobody can say what that stack does. */
		if (want == TYPE_ANY)
			return -1;
		if (asprintf(&r->c->error, "%s:%u: @include %s cannot be read: "
			     "Debian's libpam then adds a failing line to a "
			     "management group that depends on what it read "
			     "before, so what the stack does cannot be told; "
			     "fix the @include", r->c->files[file].show, lineno,
			     target) < 0)
			r->c->error = NULL;
		return xp_oom(r->c);
	}
#endif
	for (int t = 0; t < XP_NTYPES; t++)
		if (strcasecmp(tok, pwrap_group_name(t)) == 0)
			type = t;
	if (type < 0) {
		l.kind = XP_FIXED;
		l.why = "a line of an unknown management group";
		type = want != TYPE_ANY ? want : XP_AUTH;
	}
	if (want != TYPE_ANY && type != want)
		return 0;
	tok = token(&next);
	if (tok == NULL) {
		set_default(l.act, XP_BAD);
		l.kind = XP_FIXED;
		l.why = "a line without a control";
	} else if (!pwrap_control_actions(tok, l.act,
					  xp_rules()->version >= 106)) {
		inc = 1;	/* include or substack */
		sub = tolower((unsigned char)tok[0]) == 's';
	}
	target = token(&next);
	if (inc) {
		if (target == NULL) {
			xp_refuse(r->c, file, lineno, "an include without a "
				  "target, on which libpam crashes");
			return -2;
		}
		if (sub) {
			struct xp_line m = l;

			m.kind = XP_SUBSTACK;
			m.name = strdup(target);
			if (m.name == NULL || xp_add_site(r->c, &m) != 0 ||
			    add_line(r, type, &m) != 0) {
				free(m.name);
				return xp_oom(r->c);
			}
			if (pamconf_name_refused(target))
				return -1;
		}
		rc = include(r, target, type, level + sub, file, lineno);
		if (rc != -1)
			return rc;
		set_default(l.act, XP_BAD);
		l.kind = XP_FIXED;
		l.why = "its include cannot be read";
		target = NULL;
		if (asprintf(&l.name, "(include failed)") < 0)
			l.name = NULL;
	} else if (target == NULL && l.kind == XP_CALL) {
		l.kind = XP_FIXED;
		l.why = "a line without a module";
	}
	l.fixed = PAM_PERM_DENIED;
	if (target != NULL)
		l.module = strdup(target);
	if (l.name == NULL)
		l.name = xp_short_name(target != NULL ? target : "?");
	if ((target != NULL && l.module == NULL) || l.name == NULL ||
	    (l.kind == XP_CALL && xp_module_kind(&l, pwrap_sm_name(pwrap_group_sm(type))) != 0) ||
	    xp_add_site(r->c, &l) != 0 || add_line(r, type, &l) != 0) {
		free(l.module);
		free(l.name);
		return xp_oom(r->c);
	}
	(void)silent;	/* "-type" only silences libpam's log */
	return target != NULL && pamconf_name_refused(target) ? -1 : 0;
}

/* 0 read, -1 libpam's read fails (what was read stays), -2 refused. */
static int read_file(struct rd *r, int file, int want, int level)
{
	struct xp_text in = { 0 };
	char buf[LINE_BUF];
	unsigned first = 0;
	int a, rc = 0;

	if (xp_text_load(&in, r->c->files[file].path) != 0)
		return -1;
	r->chain[r->nchain++] = file;
	while (rc == 0 && (a = assemble(&in, buf, &first)) == 1)
		rc = read_line(r, file, first, buf, want, level);
	if (rc == 0 && a == -2) {
		xp_refuse(r->c, file, in.line, "a continued line fills libpam's "
			  "line buffer but for one byte: libpam loops forever "
			  "(the wrapper refuses it)");
		rc = -2;
	} else if (rc == 0 && a == -1) {
		rc = -1;
	}
	r->nchain--;
	xp_text_free(&in);
	return rc;
}

int xp_read(struct xp_conf *c, const char *dir, const char *service)
{
	struct rd r = { .c = c, .base = dir != NULL ? dir : xp_system_dir() };
	char *name = strdup(service), *path = NULL;
	int read_any = 0, rc = -1;

	memset(c, 0, sizeof(*c));
	c->service_file = c->other_file = -1;
	c->dir = dir != NULL ? strdup(dir) : NULL;
	if (name == NULL || (dir != NULL && c->dir == NULL))
		goto oom;
	for (char *p = name; *p != '\0'; p++)	/* libpam lowercases it */
		*p = (char)tolower((unsigned char)*p);
	c->service = name;
	name = NULL;
	if (asprintf(&path, "%s/%s", r.base, c->service) < 0)
		goto oom;
	/* The service file's lines go to the "other" stacks when the service
	 * is "other" (libpam then reads the file twice). */
	r.other = strcasecmp(c->service, "other") == 0;
	if (xp_readable(path)) {
		if ((c->service_file = xp_file_index(c, path, r.base)) < 0)
			goto oom;
		rc = read_file(&r, c->service_file, TYPE_ANY, 0);
		if (rc == -1 && c->refused == NULL)
			xp_refuse(c, c->service_file, 0, "libpam cannot read "
				  "the service file: pam_start fails");
		if (rc != 0)
			goto done;
		read_any = 1;
	}
	free(path);
	if (asprintf(&path, "%s/other", r.base) < 0)
		goto oom;
	r.other = true;
	if (xp_readable(path)) {
		if ((c->other_file = xp_file_index(c, path, r.base)) < 0)
			goto oom;
		rc = read_file(&r, c->other_file, TYPE_ANY, 0);
		if (rc == -1 && c->refused == NULL)
			xp_refuse(c, c->other_file, 0, "libpam cannot read "
				  "\"other\": pam_start fails");
		if (rc != 0)
			goto done;
		read_any = 1;
	}
	if (!read_any)
		xp_refuse(c, -1, 0, "neither %s/%s nor %s/other exists: "
			  "pam_start fails", r.base, c->service, r.base);
	rc = 0;
	goto done;
oom:
	xp_oom(c);
done:
	free(name);
	free(path);
	if (c->error != NULL)
		return -1;
	return 0;
}
