/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A policy file read as OpenPAM reads it (openpam_readword(),
 * openpam_readlinev(), openpam_parse_chain()), into lines of words and what
 * OpenPAM makes of each.  No I/O.
 *
 * Words: blanks (space, tab, form feed, CR) separate them; '#' where a word
 * would start comments out the rest of the line; a backslash-newline joins
 * lines; quotes ('...', "...") and backslashes make blanks, '#' and
 * newlines part of a word; a line ends at an unescaped newline; no length
 * limit.  Lines: "facility control module [args]" or "facility include
 * service"; facility and control names compare exactly.  A line with an
 * error (a wrong word, a missing one, an unterminated quote) makes OpenPAM
 * fail the whole policy, but only where it reads the line: a line of
 * another facility than the one read is skipped before its control is
 * looked at.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pamconf.h"
#include "pamconf_impl.h"

/* OpenPAM's is_lws() and is_ws() (openpam_ctype.h). */
static bool is_lws(char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\r';
}

static bool is_ws(char c)
{
	return is_lws(c) || c == '\n';
}

struct oin {
	const char *p;
	size_t len;
	size_t pos;
	unsigned line;	/* of pos */
	unsigned wline;	/* where the last word started */
	bool broken;	/* an unterminated quote or escape at the end */
};

/*
 * The next word of the current line, as openpam_readword() reads it: *w
 * gets its bytes [s, e) in the input and its text (quotes and escapes
 * resolved; cut at a NUL, as OpenPAM's C string is).  Returns 1, 0 at the
 * end of the line (the newline is consumed) or of the input, -1 when out
 * of memory.
 */
static int next_word(struct oin *in, struct pamconf_tok *w)
{
	struct pwrap_buf t = { 0 };
	size_t bs = 0;
	bool escape = false;
	char quote = 0;
	char c;

	/* blanks, continuations and comments before the word */
	for (;;) {
		if (in->pos >= in->len) {
			return 0;
		}
		c = in->p[in->pos++];
		if (c == '\n') {
			in->line++;
			if (!escape) {
				return 0;	/* the end of the line */
			}
			escape = false;
		} else if (escape) {
			in->pos--;	/* an escaped character starts it */
			break;
		} else if (c == '#') {
			while (in->pos < in->len && in->p[in->pos++] != '\n') {
			}
			in->line++;
			return 0;
		} else if (c == '\\') {
			escape = true;
			bs = in->pos - 1;
		} else if (!is_ws(c)) {
			in->pos--;
			break;
		}
	}
	w->s = escape ? bs : in->pos;
	w->bracket = false;
	in->wline = in->line;
	while (in->pos < in->len) {
		c = in->p[in->pos];
		if (is_ws(c) && !quote && !escape) {
			break;
		}
		in->pos++;
		if (c == '\n') {
			in->line++;
		}
		if (c == '\\' && !escape && quote != '\'') {
			escape = true;
		} else if ((c == '\'' || c == '"') && !quote && !escape) {
			quote = c;
		} else if (c == quote && !escape) {
			quote = 0;
		} else if (c == '\n' && escape) {
			escape = false;	/* a continuation inside the word */
		} else {
			if (escape && quote && c != '\\' && c != quote) {
				pwrap_buf_add(&t, "\\", 1);
			}
			pwrap_buf_add(&t, &c, 1);
			escape = false;
		}
	}
	w->text = pwrap_buf_take(&t);	/* cut at a NUL when read as C */
	if (w->text == NULL) {
		return -1;
	}
	w->e = in->pos;
	if (escape || quote) {
		in->broken = true;	/* OpenPAM refuses the file here */
	}
	return 1;
}

/* OpenPAM's portable file-name characters, and '/' where allowed. */
static bool pfcs(const char *s, bool slash)
{
	if (*s == '\0') {
		return false;
	}
	for (; *s != '\0'; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
		      *s == '-' || (slash && *s == '/'))) {
			return false;
		}
	}
	return true;
}

static int flag_of(const char *w)
{
	static const char *const flags[] = {
		[PAMCONF_REQUIRED] = "required",
		[PAMCONF_REQUISITE] = "requisite",
		[PAMCONF_SUFFICIENT] = "sufficient",
		[PAMCONF_BINDING] = "binding",
		[PAMCONF_OPTIONAL] = "optional",
	};

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strcmp(w, flags[i]) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* What openpam_parse_chain() makes of a line of words. */
static void classify(struct pamconf_line *l)
{
	l->group = l->ntok > 0 ? pwrap_group_parse(l->tok[0].text, false)
			       : -1;
	l->control = l->target = -1;
	l->kind = PAMCONF_STOP;
	if (l->group < 0) {
		l->why = "missing or invalid facility";
		return;
	}
	if (l->ntok > 1 && strcmp(l->tok[1].text, "include") == 0) {
		l->control = 1;
		if (l->ntok < 3 || !pfcs(l->tok[2].text, false)) {
			l->why = "missing or invalid service name";
		} else if (l->ntok > 3) {
			l->why = "garbage at end of line";
		} else {
			l->kind = PAMCONF_INCLUDE;
			l->target = 2;
		}
		return;
	}
	l->flag = l->ntok > 1 ? flag_of(l->tok[1].text) : -1;
	if (l->flag < 0) {
		l->why = "missing or invalid control flag";
		return;
	}
	l->control = 1;
	if (l->ntok < 3 || !pfcs(l->tok[2].text, true)) {
		l->why = "missing or invalid module name";
		return;
	}
	l->kind = PAMCONF_MODULE;
	l->target = 2;
}

int pamconf_parse_openpam(const char *text, size_t len,
			  struct pamconf_file *f)
{
	struct oin in = { text, len, 0, 1, 1, false };

	memset(f, 0, sizeof(*f));
	while (in.pos < in.len && !in.broken) {
		struct pamconf_line l = { .line = in.line, .start = in.pos };
		struct pamconf_tok w;
		struct pamconf_line *v;
		int k;

		while ((k = next_word(&in, &w)) == 1) {
			struct pamconf_tok *nt = realloc(
				l.tok, (l.ntok + 1) * sizeof(*nt));

			if (nt == NULL) {
				free(w.text);
				k = -1;
				break;
			}
			if (l.ntok == 0) {
				l.line = in.wline;
			}
			l.tok = nt;
			l.tok[l.ntok++] = w;
		}
		l.end = in.pos;
		if (k < 0) {
			pamconf_line_free(&l);
			goto nomem;
		}
		if (l.ntok == 0) {
			continue;	/* a blank or comment line */
		}
		v = realloc(f->v, (f->n + 1) * sizeof(*v));
		if (v == NULL) {
			pamconf_line_free(&l);
			goto nomem;
		}
		f->v = v;
		classify(&l);
		f->v[f->n++] = l;
	}
	if (in.broken) {
		/* the last word read was cut: OpenPAM fails the file there
		 * (its line stays in the model, read as OpenPAM would not) */
		f->end = PAMCONF_END_BROKEN;
		f->end_line = in.line;
	}
	return 0;
nomem:
	pamconf_file_free(f);
	errno = ENOMEM;
	return -1;
}
