/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A service file read as Linux-PAM reads it (pam_handlers.c), into logical
 * lines, tokens and what libpam makes of each line.  No I/O.
 *
 * Lines.  Up to 1.5 libpam fgets()s into a 1024-byte buffer: a longer
 * physical line becomes several; blank lines and lines starting with '#'
 * are skipped, everything from a '#' on is dropped, and a line whose last
 * non-blank is a backslash continues on the next non-blank, non-comment
 * line, in the same buffer (overflowing it, or ending the file in a
 * continued line, makes libpam give up on the file; a continued line that
 * fills it but for one byte makes it loop forever).  From 1.6 it reads
 * whole lines (getline): no length limit, and a continued line ends at the
 * next line whatever it holds (a blank or comment line ends it too).  In
 * both, a NUL ends the text libpam sees (the bytes after it still count
 * for the continuation test in 1.6, as getline's length does).
 *
 * Tokens are separated by " \n\t" only (not CR); "[...]" is one token, with
 * "\]" for ']'; keywords compare without case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pamconf.h"
#include "pamconf_impl.h"

/* libpam's line buffer up to 1.5 (BUF_SIZE in pam_handlers.c). */
#define LP15_BUF 1024

/* The input, read as fgets()/getline() read a FILE. */
struct input {
	const char *p;
	const char *end;
	unsigned line;	/* physical lines started so far */
	bool mid;	/* the last read stopped inside a physical line */
};

enum { ASM_EOF = 0, ASM_LINE = 1, ASM_BROKEN = -1, ASM_HANG = -2 };

/* fgets(buf, cap, f): at most cap - 1 bytes, up to and including a '\n';
 * false at the end of the input. */
static bool in_gets(struct input *in, char *buf, size_t cap)
{
	size_t n = 0;

	if (in->p >= in->end) {
		return false;
	}
	if (!in->mid) {
		in->line++;
	}
	while (n + 1 < cap && in->p < in->end) {
		char c = *in->p++;

		buf[n++] = c;
		if (c == '\n') {
			break;
		}
	}
	in->mid = n == 0 || buf[n - 1] != '\n';
	buf[n] = '\0';
	return true;
}

/*
 * Up to 1.5: one logical line into buf (LP15_BUF bytes), as
 * _pam_assemble_line does it; *first gets the physical line it starts on.
 */
static int assemble15(struct input *in, char *buf, unsigned *first)
{
	char *p = buf;
	char *endp = buf + LP15_BUF;
	bool used = false;

	for (;;) {
		char *s, *os;

		if (p >= endp) {
			return ASM_BROKEN;
		}
		if (endp - p == 1) {
			return ASM_HANG;
		}
		if (!in_gets(in, p, (size_t)(endp - p))) {
			return used ? ASM_BROKEN : ASM_EOF;
		}
		if (!used) {
			*first = in->line;
		}
		s = p + strspn(p, " \n\t");
		if (*s == '\0' || *s == '#') {
			continue;	/* nothing on this line */
		}
		os = s;
		s += strcspn(s, "#");
		if (*s == '#') {
			*s = '\0';
			return ASM_LINE;
		}
		s = os + strlen(os);
		while (s > os && (*--s == ' ' || *s == '\t' || *s == '\n')) {
		}
		if (*s != '\\') {
			return ASM_LINE;
		}
		*s++ = ' ';	/* the backslash becomes a blank */
		*s = '\0';
		p = s;
		used = true;
	}
}

/* getline(): the next physical line [*s, *e), '\n' included; false at the
 * end of the input. */
static bool in_getline(struct input *in, const char **s, const char **e)
{
	const char *nl;

	if (in->p >= in->end) {
		return false;
	}
	in->line++;
	nl = memchr(in->p, '\n', (size_t)(in->end - in->p));
	*s = in->p;
	in->p = nl != NULL ? nl + 1 : in->end;
	*e = in->p;
	return true;
}

/* strspn(s, " \t") within [s, e): the input is not NUL-terminated (a line
 * that getline() gives libpam is; a NUL stops both). */
static size_t blanks(const char *s, const char *e)
{
	const char *p = s;

	while (p < e && (*p == ' ' || *p == '\t')) {
		p++;
	}
	return (size_t)(p - s);
}

/*
 * From 1.6: one logical line into *out (its bytes; what libpam sees ends at
 * the first NUL), as _pam_line_assemble does it: each physical line loses
 * its leading blanks (" \t") and everything from a '#'; a trailing
 * backslash (blanks and newlines after it) becomes a blank and continues
 * the line unless the line holds a '#'; a line that does not continue ends
 * the logical line, added to it when something is there already, else only
 * when it starts with something else than a NUL or a newline.
 */
static int assemble16(struct input *in, struct pwrap_buf *out,
		      unsigned *first)
{
	bool going = false;	/* a continued line is being read */

	out->len = 0;
	for (;;) {
		const char *s, *e, *p, *hash;
		size_t vis;

		if (!in_getline(in, &s, &e)) {
			return going ? ASM_BROKEN : ASM_EOF;
		}
		if (out->len == 0) {
			*first = in->line;
		}
		/* the continuation test looks at every byte read, a NUL's
		 * too; the '#' test only at the string (up to a NUL) */
		for (p = e; p > s && (p[-1] == ' ' || p[-1] == '\t' ||
				      p[-1] == '\n'); p--) {
		}
		vis = strnlen(s, (size_t)(e - s));
		if (p > s && p[-1] == '\\') {
			size_t bs = (size_t)(p - s) - 1;	/* the backslash */

			if (memchr(s, '#', vis < bs ? vis : bs) == NULL) {
				/* it becomes a blank and the string ends
				 * there; leading blanks (that one too) go */
				size_t lead = blanks(s, e);

				if (lead < bs) {
					pwrap_buf_add(out, s + lead, bs - lead);
					pwrap_buf_add(out, " ", 1);
				}
				going = true;
				continue;
			}
			e = p;	/* a '#' ends the line all the same */
		}
		s += blanks(s, e);
		vis = strnlen(s, (size_t)(e - s));
		hash = memchr(s, '#', vis);
		if (hash != NULL) {
			e = hash;	/* libpam's string ends there */
		}
		if (out->len > 0 || (e > s && *s != '\0' && *s != '\n')) {
			pwrap_buf_add(out, s, (size_t)(e - s));
		}
		if (out->failed) {
			return ASM_BROKEN;	/* the caller reports ENOMEM */
		}
		if (out->len > 0 && out->p[0] != '\0') {
			return ASM_LINE;
		}
		out->len = 0;	/* nothing libpam would use: read on */
		going = false;
	}
}

/* ---- tokens ------------------------------------------------------------- */

static bool is_delim(char c)
{
	return c == ' ' || c == '\n' || c == '\t';
}

/* The next token as _pam_tokenize() sees it, from `from` in l: [*s, *e),
 * "[...]" included, and where the search for the next one starts. */
static bool tok_next(const char *l, size_t from, size_t *s, size_t *e,
		     size_t *next, bool *bracket)
{
	size_t i = from;

	while (l[i] != '\0' && is_delim(l[i])) {
		i++;
	}
	if (l[i] == '\0') {
		return false;
	}
	*s = i;
	*bracket = l[i] == '[';
	if (*bracket) {
		for (i++; l[i] != '\0' && l[i] != ']'; i++) {
			if (l[i] == '\\' && l[i + 1] == ']') {
				i++;
			}
		}
	} else {
		while (l[i] != '\0' && !is_delim(l[i])) {
			i++;
		}
	}
	/* libpam ends the token at the ']' or blank and goes on after it */
	*e = *bracket && l[i] == ']' ? i + 1 : i;
	*next = l[i] != '\0' ? i + 1 : i;
	return true;
}

/* The token's text as libpam passes it on: a bracketed token loses its
 * brackets and the backslash of "\]".  Malloc'd, or NULL. */
static char *tok_text(const char *l, size_t s, size_t e, bool bracket)
{
	size_t i = s + (bracket ? 1 : 0);
	char *text, *o;

	if (bracket && e > i && l[e - 1] == ']') {
		e--;
	}
	text = malloc(e - i + 1);
	if (text == NULL) {
		return NULL;
	}
	for (o = text; i < e; i++) {
		if (bracket && l[i] == '\\' && l[i + 1] == ']') {
			continue;
		}
		*o++ = l[i];
	}
	*o = '\0';
	return text;
}

/* Splits l->text into tokens.  0, or -1 out of memory. */
static int tokenize(struct pamconf_line *l)
{
	size_t from = 0, s, e, next;
	bool bracket;

	while (tok_next(l->text, from, &s, &e, &next, &bracket)) {
		struct pamconf_tok *v = realloc(l->tok,
						(l->ntok + 1) * sizeof(*v));

		if (v == NULL) {
			return -1;
		}
		l->tok = v;
		v[l->ntok].s = s;
		v[l->ntok].e = e;
		v[l->ntok].bracket = bracket;
		v[l->ntok].text = tok_text(l->text, s, e, bracket);
		if (v[l->ntok].text == NULL) {
			return -1;
		}
		l->ntok++;
		from = next;
	}
	return 0;
}

/* ---- what libpam makes of a line ----------------------------------------- */

static void set_default(int *act, int a)
{
	for (int i = 0; i < PWRAP_CONTROL_CODES; i++) {
		act[i] = a;
	}
}

/* Fills in kind, group, silent, actions and the indexes of l (tokenized),
 * as _pam_parse_conf_file reads a line of a file with no service field. */
static void classify(const struct pamconf_rules *r, struct pamconf_line *l)
{
	const char *type, *ctl;

	l->group = -1;
	l->control = l->target = -1;
	l->kind = PAMCONF_MODULE;
	if (l->ntok == 0) {
		l->kind = PAMCONF_FAILING;	/* not reached: a line has a
						 * token (see assemble*) */
		l->why = "an empty line";
		set_default(l->act, PWRAP_CONTROL_BAD);
		return;
	}
	type = l->tok[0].text;
	if (type[0] == '-') {
		l->silent = true;	/* "do not log module load errors" */
		type++;
	}
	if (r->at_include && strcasecmp(type, "@include") == 0) {
		l->kind = PAMCONF_AT_INCLUDE;
		l->target = l->ntok > 1 ? 1 : -1;
		if (l->target < 0) {
			l->kind = PAMCONF_CRASH;
			l->why = "an @include without a target, on which libpam "
				 "crashes";
		}
		return;
	}
	l->group = pwrap_group_parse(type, true);
	if (l->group < 0) {
		l->kind = PAMCONF_FAILING;
		l->why = "a line of an unknown management group";
	}
	if (l->ntok < 2) {
		set_default(l->act, PWRAP_CONTROL_BAD);
		l->kind = PAMCONF_FAILING;
		if (l->why == NULL) {
			l->why = "a line without a control";
		}
		return;
	}
	l->control = 1;
	ctl = l->tok[1].text;
	if (!pwrap_control_actions(ctl, l->act, r->version >= 106)) {
		/* "include" or "substack" */
		l->kind = (ctl[0] | 0x20) == 's' ? PAMCONF_SUBSTACK
						       : PAMCONF_INCLUDE;
		if (l->ntok < 3) {
			/* Debian's include patch dereferences the missing
			 * name; upstream fails the line */
			set_default(l->act, PWRAP_CONTROL_BAD);
			l->kind = r->at_include ? PAMCONF_CRASH
						: PAMCONF_FAILING;
			l->why = r->at_include ? "an include without a target, "
						 "on which libpam crashes"
					       : "an include without a target";
			return;
		}
		l->target = 2;
		if (l->kind == PAMCONF_SUBSTACK &&
		    pamconf_name_refused(l->tok[2].text)) {
			l->kind = PAMCONF_STOP;
			l->why = "the substack's name without its directory "
				 "and suffix is empty or \"?\": libpam stops "
				 "reading the file there";
		}
		return;
	}
	if (l->ntok < 3) {
		if (l->why == NULL) {
			l->kind = PAMCONF_FAILING;
			l->why = "a line without a module";
		}
		return;
	}
	l->target = 2;
	if (pamconf_name_refused(l->tok[2].text)) {
		l->kind = PAMCONF_STOP;
		l->why = "the module's name without its directory and "
			 "suffix is empty or \"?\": libpam stops reading "
			 "the file there";
	}
}

/* Adds the logical line text (len bytes, as libpam sees it) starting at
 * physical line `first`.  0, or -1 out of memory. */
static int add_line(const struct pamconf_rules *r, struct pamconf_file *f,
		    const char *text, size_t len, unsigned first)
{
	struct pamconf_line *v = realloc(f->v, (f->n + 1) * sizeof(*v));
	struct pamconf_line *l;

	if (v == NULL) {
		return -1;
	}
	f->v = v;
	l = &v[f->n];
	memset(l, 0, sizeof(*l));
	l->line = first;
	l->text = malloc(len + 1);
	f->n++;
	if (l->text == NULL) {
		return -1;
	}
	memcpy(l->text, text, len);
	l->text[len] = '\0';
	l->len = len;
	if (tokenize(l) != 0) {
		return -1;
	}
	classify(r, l);
	return 0;
}

int pamconf_parse_linux(const struct pamconf_rules *r, const char *text,
			size_t len, struct pamconf_file *f)
{
	struct input in = { text, text + len, 0, false };
	struct pwrap_buf big = { 0 };
	char buf[LP15_BUF];
	unsigned first = 0;
	int a;

	memset(f, 0, sizeof(*f));
	for (;;) {
		if (r->line_buf != 0) {
			a = assemble15(&in, buf, &first);
		} else {
			a = assemble16(&in, &big, &first);
		}
		if (big.failed) {
			goto nomem;
		}
		if (a != ASM_LINE) {
			break;
		}
		if (r->line_buf != 0 ? add_line(r, f, buf, strlen(buf), first)
				     : add_line(r, f, big.p,
						strnlen(big.p, big.len),
						first)) {
			goto nomem;
		}
	}
	f->end = a == ASM_HANG	   ? PAMCONF_END_HANG
		 : a == ASM_BROKEN ? PAMCONF_END_BROKEN
				   : PAMCONF_END_OK;
	f->end_line = in.line;
	pwrap_buf_free(&big);
	return 0;
nomem:
	pwrap_buf_free(&big);
	pamconf_file_free(f);
	errno = ENOMEM;
	return -1;
}
