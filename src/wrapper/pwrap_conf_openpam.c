/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The service-file rewriter for OpenPAM's syntax (pwrap_rewrite_service()
 * hands files to it in an OpenPAM build).  OpenPAM reads a policy file as
 * words, not as Linux-PAM's 1024-byte lines: openpam_readword() skips
 * blanks (space, tab, form feed, CR), takes '#' at the start of a word as
 * a comment to the end of the line, joins lines at a backslash-newline,
 * and lets quotes ('...', "...") and backslashes make blanks, '#' and
 * newlines part of a word; a line ends at an unescaped newline.  Nothing of
 * that may change in the copy, so the copy is the file byte for byte except
 * for one word per line: a module name that the callback resolves, or in
 * a traced copy the trace's stand-in with its "pwrap_trace=N" (OpenPAM's
 * include targets are service names, found through the redirected policy
 * path: they stay as written, the callback only hears of them).  Lines
 * OpenPAM refuses (no facility, an unterminated quote) stay as they are:
 * OpenPAM refuses the copy the same way.
 *
 * No I/O, like pwrap_conf.c: text in, text out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pwrap_private.h"

/* OpenPAM's is_lws() and is_ws() (openpam_ctype.h). */
static bool is_lws(char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\r';
}

static bool is_ws(char c)
{
	return is_lws(c) || c == '\n';
}

/* A word: its bytes [s, e) in the input and its text as OpenPAM gets it
 * (quotes and escapes resolved; cut at a NUL, as OpenPAM's C string is). */
struct oword {
	size_t s, e;
	char *text;	/* malloc'd */
};

struct oin {
	const char *p;
	size_t len;
	size_t pos;
	bool broken;	/* an unterminated quote or escape at the end */
};

/* Appends c to the word *t (n bytes, room for cap); false when out of
 * memory. */
static bool add(char **t, size_t *n, size_t *cap, char c)
{
	if (*n + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		char *nt = realloc(*t, ncap);

		if (nt == NULL) {
			return false;
		}
		*t = nt;
		*cap = ncap;
	}
	(*t)[(*n)++] = c;
	return true;
}

/*
 * The next word of the current line, as openpam_readword() reads it.
 * Returns 1 with *w filled, 0 at the end of the line (the newline is
 * consumed) or of the input, -1 when out of memory.
 */
static int next_word(struct oin *in, struct oword *w)
{
	size_t bs = 0;
	size_t n = 0, cap = 0;
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
	w->text = NULL;
	while (in->pos < in->len) {
		c = in->p[in->pos];
		if (is_ws(c) && !quote && !escape) {
			break;
		}
		in->pos++;
		if (c == '\\' && !escape && quote != '\'') {
			escape = true;
		} else if ((c == '\'' || c == '"') && !quote && !escape) {
			quote = c;
		} else if (c == quote && !escape) {
			quote = 0;
		} else if (c == '\n' && escape) {
			escape = false;	/* a continuation inside the word */
		} else {
			if ((escape && quote && c != '\\' && c != quote &&
			     !add(&w->text, &n, &cap, '\\')) ||
			    !add(&w->text, &n, &cap, c)) {
				free(w->text);
				return -1;
			}
			escape = false;
		}
	}
	if (!add(&w->text, &n, &cap, '\0')) {
		free(w->text);
		return -1;
	}
	w->e = in->pos;
	if (escape || quote) {
		in->broken = true;	/* OpenPAM refuses the file here */
	}
	return 1;
}

/* The stack a facility word names (OpenPAM compares them exactly). */
static enum pwrap_stack facility(const char *w)
{
	static const char *const names[] = {
		[PWRAP_STACK_AUTH] = "auth",
		[PWRAP_STACK_ACCOUNT] = "account",
		[PWRAP_STACK_SESSION] = "session",
		[PWRAP_STACK_PASSWORD] = "password",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i] != NULL && strcmp(w, names[i]) == 0) {
			return (enum pwrap_stack)i;
		}
	}
	return PWRAP_STACK_BAD;
}

static unsigned line_of(const char *p, size_t pos)
{
	unsigned line = 1;

	for (size_t i = 0; i < pos; i++) {
		line += p[i] == '\n';
	}
	return line;
}

/* The replacement of a module line's module word (the words w[0..2]):
 * the trace's stand-in when ops->module_line gives one (it takes the
 * module's place, "STANDIN pwrap_trace=N", the module's own arguments
 * after it), else the resolved path; NULL keeps the word as written. */
static char *module_word(const struct pwrap_rewrite_ops *ops,
			 const struct oword w[3], const char *src_name,
			 unsigned line)
{
	char *rep = NULL;

	if (ops->module_line != NULL) {
		struct pwrap_module_line ml = {
			.type = w[0].text,
			.control = w[1].text,
			.bracket = false,
			.module = w[2].text,
			.stack = facility(w[0].text),
			.src = src_name,
			.line = line,
		};

		rep = ops->module_line(ops->ctx, &ml);
	}
	if (rep == NULL && ops->module_path != NULL) {
		rep = ops->module_path(ops->ctx, w[2].text, false, src_name,
				       line);
	}
	return rep;
}

int pwrap_rewrite_openpam(const char *in, size_t len, const char *src_name,
			  const struct pwrap_rewrite_ops *ops, char **out,
			  size_t *out_len)
{
	struct oin r = { in, len, 0, false };
	struct oword w[3];
	size_t copied = 0;
	struct pwrap_buf o = { 0 };
	int rc = -1;

	*out = NULL;
	if (out_len != NULL) {
		*out_len = 0;
	}
	pwrap_buf_add(&o, "", 0);	/* an empty file gives "" */
	while (r.pos < r.len && !r.broken) {
		size_t nw = 0;
		int k;
		char *rep = NULL;

		/* the words of one line: the first three matter */
		for (;;) {
			struct oword cur;

			k = next_word(&r, &cur);
			if (k != 1) {
				break;
			}
			if (nw < 3) {
				w[nw++] = cur;
			} else {
				free(cur.text);	/* an argument */
			}
		}
		if (k < 0) {
			for (size_t i = 0; i < nw; i++) {
				free(w[i].text);
			}
			goto nomem;
		}
		if (nw == 3 && strcmp(w[1].text, "include") == 0 &&
		    ops->include_target != NULL) {
			/* a service name: it stays, the walk follows it */
			free(ops->include_target(ops->ctx, w[2].text,
						 facility(w[0].text), src_name,
						 line_of(in, w[0].s)));
		} else if (nw == 3) {
			rep = module_word(ops, w, src_name,
					  line_of(in, w[0].s));
		}
		if (rep != NULL) {
			pwrap_buf_add(&o, in + copied, w[2].s - copied);
			pwrap_buf_str(&o, rep);
			copied = w[2].e;
			free(rep);
		}
		for (size_t i = 0; i < nw; i++) {
			free(w[i].text);
		}
	}
	pwrap_buf_add(&o, in + copied, len - copied);
	if (o.failed) {
		goto nomem;
	}
	*out = o.p;
	o.p = NULL;
	if (out_len != NULL) {
		*out_len = o.len;
	}
	rc = 0;
	goto out;
nomem:
	errno = ENOMEM;
out:
	free(o.p);
	return rc;
}
