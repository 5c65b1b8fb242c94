/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A file of PAM configuration as one model, whatever its grammar: the
 * dispatch to the grammar's reader, the lines' arguments, and which stack
 * libpam reads a line for (pamconf.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pamconf.h"
#include "pamconf_impl.h"

int pamconf_parse(const struct pamconf_rules *r, const char *text, size_t len,
		  struct pamconf_file *f)
{
	return r->impl == PAMCONF_OPENPAM
		       ? pamconf_parse_openpam(text, len, f)
		       : pamconf_parse_linux(r, text, len, f);
}

void pamconf_line_free(struct pamconf_line *l)
{
	for (size_t i = 0; i < l->ntok; i++) {
		free(l->tok[i].text);
	}
	free(l->tok);
	free(l->text);
	memset(l, 0, sizeof(*l));
}

void pamconf_file_free(struct pamconf_file *f)
{
	for (size_t i = 0; i < f->n; i++) {
		pamconf_line_free(&f->v[i]);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

size_t pamconf_argc(const struct pamconf_line *l)
{
	return l->target >= 0 && (size_t)l->target < l->ntok
		       ? l->ntok - (size_t)l->target - 1
		       : 0;
}

const char *pamconf_arg(const struct pamconf_line *l, size_t i)
{
	return i < pamconf_argc(l) ? l->tok[(size_t)l->target + 1 + i].text
				   : NULL;
}

enum pamconf_stack pamconf_line_stack(const struct pamconf_line *l)
{
	if (l->kind == PAMCONF_AT_INCLUDE ||
	    (l->kind == PAMCONF_CRASH && l->group < 0 && l->control < 0)) {
		return PAMCONF_STACK_ASKED;	/* "@include", with or without
						 * its target */
	}
	return l->group < 0 ? PAMCONF_STACK_BAD : PAMCONF_STACK_OF(l->group);
}

bool pamconf_stack_reads(enum pamconf_stack line, enum pamconf_stack asked)
{
	return asked == PAMCONF_STACK_ANY || line == asked ||
	       line == PAMCONF_STACK_BAD || line == PAMCONF_STACK_ASKED;
}

enum pamconf_stack pamconf_stack_included(enum pamconf_stack line,
					  enum pamconf_stack asked)
{
	if (line == PAMCONF_STACK_ASKED) {
		return asked;
	}
	if (line == PAMCONF_STACK_BAD) {
		/* libpam: "most sensitive" when it reads every stack */
		return asked == PAMCONF_STACK_ANY ? PAMCONF_STACK_AUTH : asked;
	}
	return line;
}

/*
 * libpam names a module or substack after its path (the last component
 * without its last ".suffix") and fails the line when that name is empty
 * or "?", before it opens anything.
 */
bool pamconf_name_refused(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot;
	size_t n;

	base = base != NULL ? base + 1 : path;
	dot = strrchr(base, '.');
	n = dot != NULL ? (size_t)(dot - base) : strlen(base);
	return n == 0 || (n == 1 && base[0] == '?');
}

bool pamconf_stop_crashes(const struct pamconf_rules *r,
			  const struct pamconf_line *l)
{
	/* 1.6 allocates the handler with calloc(): its `next` is NULL */
	return l->kind == PAMCONF_STOP && r->impl == PAMCONF_LINUX_PAM &&
	       r->version < 106;
}
