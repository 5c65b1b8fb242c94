/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: names every stage prints (a leaf: it calls no other
 * stage).  Codes by src/common's table; the words of controls are
 * Linux-PAM's (pwrap_control.c), OpenPAM's codes as their names in lower
 * case, told by the linked libpam at run time.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *xp_code_name(int code)
{
	const char *n = pwrap_code_name(code);

	return n != NULL ? n : "?";
}

const char *xp_code_word(int code)
{
	static struct pamconf_rules r;
	static char words[64][32];
	const char *n = xp_code_name(code);
	char *w;

	if (r.label == NULL) {
		pamconf_rules_linked(&r);
	}
	if (r.impl == PAMCONF_LINUX_PAM) {
		return pwrap_control_code_word(code);
	}
	if (code < 0 || code >= 64 || strncmp(n, "PAM_", 4) != 0) {
		return "?";
	}
	w = words[code];
	if (w[0] == '\0') {
		snprintf(w, sizeof(words[0]), "%s", n + 4);
		for (char *p = w; *p != '\0'; p++) {
			*p = (char)tolower((unsigned char)*p);
		}
	}
	return w;
}

char *xp_short_name(const char *module)
{
	const char *b = strrchr(module, '/');
	size_t n;

	b = b != NULL && b[1] != '\0' ? b + 1 : module;
	n = strlen(b);
	if (n > 3 && strcmp(b + n - 3, ".so") == 0) {
		n -= 3;
	}
	return strndup(b, n);
}

bool xp_name_is(const char *name, const char *want)
{
	const char *b = strrchr(want, '/');
	size_t n;

	b = b != NULL ? b + 1 : want;
	n = strlen(b);
	if (n > 3 && strcmp(b + n - 3, ".so") == 0) {
		n -= 3;
	}
	return strlen(name) == n && strncmp(name, b, n) == 0;
}

const char *xp_where_at(const struct xp_conf *c, int file, unsigned line)
{
	static char buf[4096];
	const struct xp_file *f = &c->files[file];

	if (f->alias != NULL && line >= 1 && line <= f->nlines) {
		snprintf(buf, sizeof(buf), "%s:%d", f->alias,
			 f->lines[line - 1]);
	} else {
		snprintf(buf, sizeof(buf), "%s:%u", f->show, line);
	}
	return buf;
}

const char *xp_where(const struct xp_conf *c, const struct xp_line *l)
{
	return xp_where_at(c, l->file, l->line);
}

char *xp_path_text(const struct xp_graph *g, const struct xp_path *p)
{
	struct pwrap_buf b = { 0 };

	pwrap_buf_str(&b, "");
	for (size_t i = 0; i < p->n; i++) {
		const struct xp_pos *at = &g->seq[p->c[i].pos];

		pwrap_buf_fmt(&b, "%s%s %s%s = %s", i ? ", " : "",
			      xp_where(g->conf, at->l), at->l->name,
			      g->npasses < 2 ? ""
			      : at->pass == 0 ? " (prelim)"
					      : " (update)",
			      xp_code_word(p->c[i].code));
	}
	pwrap_buf_fmt(&b, "%s-> %s", p->n ? " " : "", xp_code_name(p->result));
	return pwrap_buf_take(&b);
}
