/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writing a file back with chosen tokens replaced (pamconf_rewrite()), so
 * that libpam reads the copy exactly as it reads the original but for
 * those tokens.  The wrapper uses it for include targets and bare names of
 * our modules, the module trace for its stand-in, pamtest explore for its
 * replays.
 *
 * Linux-PAM: each logical line is written back as libpam assembled it, on
 * one physical line, with only the replaced token changed; a module path
 * that would make the line too long for the line buffer of Linux-PAM up to
 * 1.5 is left as written (the callback's owner hears why), so a valid line
 * never becomes an invalid one.  OpenPAM: the copy is the file byte for
 * byte but for replaced words.  No I/O.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pamconf.h"
#include "pamconf_impl.h"

/* ---- Linux-PAM ----------------------------------------------------------- */

static bool is_delim(char c)
{
	return c == ' ' || c == '\n' || c == '\t';
}

/* Whether the last token of l is a "[..." that no ']' closes: libpam's
 * token then runs to the end of the line, newline included. */
static bool ends_in_open_bracket(const struct pamconf_line *l, const char *t)
{
	const struct pamconf_tok *last;

	if (l->ntok == 0) {
		return false;
	}
	last = &l->tok[l->ntok - 1];
	return last->bracket && t[last->e - 1] != ']';
}

/*
 * How line text t (len bytes, as libpam assembled it) is written back so
 * that libpam assembles it again: the '\n' libpam kept at its end is
 * written once; a '#' is added when libpam's line had no '\n' there but the
 * copy needs one, and cutting it at a '#' keeps the two equal: after a
 * last word ending in a backslash (which would else continue the line) and
 * after an unclosed "[..." (whose token would else take the newline).
 * *body gets the bytes of t to write, the result says whether '#' follows.
 */
static bool emit_form(const struct pamconf_line *l, const char *t, size_t len,
		      size_t *body)
{
	bool nl = len > 0 && t[len - 1] == '\n';
	size_t n = nl ? len - 1 : len;

	*body = n;
	while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t')) {
		n--;
	}
	return (n > 0 && t[n - 1] == '\\') ||
	       (!nl && ends_in_open_bracket(l, t));
}

static void emit(struct pwrap_buf *out, const struct pamconf_line *l,
		 const char *t, size_t len)
{
	size_t body;
	bool hash = emit_form(l, t, len, &body);

	pwrap_buf_add(out, t, body);
	pwrap_buf_str(out, hash ? "#\n" : "\n");
}

/* The line l with its token k replaced by rep, and its tokens as they then
 * are (the tokens after k moved): nl->text, nl->tok[] point into nb and
 * the caller's token array nt (l->ntok entries). */
static void replace_tok(struct pwrap_buf *nb, const struct pamconf_line *l,
			size_t k, const char *rep, struct pamconf_line *nl,
			struct pamconf_tok *nt)
{
	const struct pamconf_tok *t = &l->tok[k];
	size_t grow;

	pwrap_buf_add(nb, l->text, t->s);
	pwrap_buf_str(nb, rep);
	/* "[x]y" is two tokens; a replaced "[x]" must stay apart from "y" */
	if (l->text[t->e] != '\0' && !is_delim(l->text[t->e])) {
		pwrap_buf_str(nb, " ");
	}
	grow = nb->len - t->e;
	pwrap_buf_str(nb, l->text + t->e);
	*nl = *l;
	nl->tok = nt;
	for (size_t i = 0; i < l->ntok; i++) {
		nt[i] = l->tok[i];
		if (i == k) {
			nt[i].e = t->s + strlen(rep);
			nt[i].bracket = false;
		} else if (i > k) {
			nt[i].s += grow;
			nt[i].e += grow;
		}
	}
	nl->text = nb->p;
	nl->len = nb->len;
}

struct rw {
	const struct pamconf_rules *r;
	const struct pamconf_ops *ops;
	const char *src;
	struct pwrap_buf *out;
	struct pamconf_err *err;
};

static void warn(const struct rw *w, unsigned line, const char *fmt,
		 const char *what)
{
	struct pwrap_buf m = { 0 };
	char *msg;

	if (w->ops->warn == NULL) {
		return;
	}
	pwrap_buf_fmt(&m, fmt, what, w->r->line_buf);
	msg = pwrap_buf_take(&m);
	if (msg != NULL) {
		w->ops->warn(w->ops->ctx, w->src, line, msg);
	}
	free(msg);
}

/* Whether a line is an include (its target a file, not a module). */
static bool is_include(const struct pamconf_line *l)
{
	const char *c;

	if (l->kind == PAMCONF_INCLUDE || l->kind == PAMCONF_SUBSTACK ||
	    l->kind == PAMCONF_AT_INCLUDE) {
		return true;
	}
	c = l->control >= 0 ? l->tok[l->control].text : NULL;
	return c != NULL &&
	       (strcasecmp(c, "include") == 0 || strcasecmp(c, "substack") == 0);
}

/* Writes l with its token k replaced by rep when the result fits libpam's
 * buffer: 1 written, 0 it would not fit, -1 out of memory. */
static int emit_replaced(const struct rw *w, const struct pamconf_line *l,
			 size_t k, const char *rep)
{
	struct pwrap_buf nb = { 0 };
	struct pamconf_line nl;
	struct pamconf_tok *nt = calloc(l->ntok, sizeof(*nt));
	size_t body;
	int rc = -1;

	if (nt == NULL) {
		return -1;
	}
	replace_tok(&nb, l, k, rep, &nl, nt);
	if (!nb.failed) {
		bool hash = emit_form(&nl, nl.text, nl.len, &body);

		rc = 0;
		if (w->r->line_buf == 0 || body + hash < w->r->line_buf) {
			emit(w->out, &nl, nl.text, nl.len);
			rc = 1;
		}
	}
	pwrap_buf_free(&nb);
	free(nt);
	return rc;
}

/* A module line through ops->module_line (the trace): 1 written, 0 not
 * (no replacement, or one too long: then module_path is asked), -1. */
static int traced_line(const struct rw *w, const struct pamconf_line *l)
{
	const struct pamconf_tok *ctl = &l->tok[l->control];
	struct pamconf_module_line ml = {
		.l = l,
		.type = l->tok[0].text,
		.control = ctl->text,
		.bracket = ctl->bracket,
		.module = l->tok[l->target].text,
		.stack = pamconf_line_stack(l),
		.src = w->src,
		.line = l->line,
	};
	char *rep = w->ops->module_line(w->ops->ctx, &ml);
	int rc = 0;

	if (rep != NULL) {
		rc = emit_replaced(w, l, (size_t)l->target, rep);
		if (rc == 0 && w->ops->unfit != NULL &&
		    w->ops->unfit(w->ops->ctx, &ml) != 0) {
			w->err->why = "the trace's stand-in does not fit into "
				      "the line (libpam's line buffer)";
			w->err->line = l->line;
			errno = E2BIG;
			rc = -1;
		} else if (rc == 0) {
			warn(w, l->line, "with the trace's stand-in for %s the "
			     "line would not fit libpam's %zu-byte line buffer; "
			     "its calls are not traced", ml.module);
		}
	}
	free(rep);
	return rc;
}

/* Rewrites one logical line.  0, or -1 (refused: w->err; ENOMEM). */
static int rewrite_line(const struct rw *w, const struct pamconf_line *l)
{
	const struct pamconf_ops *ops = w->ops;
	enum pamconf_stack stack = pamconf_line_stack(l);
	bool include = is_include(l);
	const char *target;
	char *rep = NULL;
	int rc = 0, done;

	if (l->kind == PAMCONF_CRASH) {
		if (ops->bad_include != NULL &&
		    ops->bad_include(ops->ctx, stack, PAMCONF_INCLUDE_NO_TARGET,
				     NULL, w->src, l->line) == 0) {
			emit(w->out, l, l->text, l->len);
			return 0;
		}
		w->err->why = "include without a target, on which libpam "
			      "crashes";
		w->err->line = l->line;
		errno = EINVAL;
		return -1;
	}
	if (pamconf_stop_crashes(w->r, l)) {
		/* refused where libpam reads the line, as a bad include */
		if (ops->bad_include != NULL &&
		    ops->bad_include(ops->ctx, stack, PAMCONF_NAME_CRASHES,
				     l->tok[l->target].text, w->src,
				     l->line) == 0) {
			emit(w->out, l, l->text, l->len);
			return 0;
		}
		w->err->why = "a module or substack named \"\" or \"?\": "
			      PAMCONF_STOP_CRASHES;
		w->err->line = l->line;
		errno = EINVAL;
		return -1;
	}
	if (l->target < 0) {
		emit(w->out, l, l->text, l->len);
		return 0;
	}
	target = l->tok[l->target].text;
	if (!include && ops->module_line != NULL && l->control >= 0) {
		done = traced_line(w, l);
		if (done != 0) {
			return done > 0 ? 0 : -1;
		}
	}
	if (include && l->kind == PAMCONF_STOP) {
		rep = NULL;	/* libpam refuses the substack as it is */
	} else if (include && ops->include_target != NULL) {
		rep = ops->include_target(ops->ctx, target, stack, w->src,
					  l->line);
	} else if (!include && ops->module_path != NULL) {
		rep = ops->module_path(ops->ctx, target, l->silent, w->src,
				       l->line);
	}
	if (rep == NULL) {
		emit(w->out, l, l->text, l->len);
		return 0;
	}
	done = emit_replaced(w, l, (size_t)l->target, rep);
	if (done < 0) {
		rc = -1;
	} else if (done == 0 && !include) {
		warn(w, l->line, "with the full path of %s the line would not "
		     "fit libpam's %zu-byte line buffer; the module name is left "
		     "as written", target);
		emit(w->out, l, l->text, l->len);
	} else if (done == 0 && ops->bad_include != NULL &&
		   ops->bad_include(ops->ctx, stack, PAMCONF_INCLUDE_TOO_LONG,
				    target, w->src, l->line) == 0) {
		emit(w->out, l, l->text, l->len);	/* libpam skips it */
	} else if (done == 0) {
		w->err->why = "with the include target resolved the line "
			      "would not fit libpam's line buffer; shorten "
			      "the line";
		w->err->line = l->line;
		errno = E2BIG;
		rc = -1;
	}
	free(rep);
	return rc;
}

static int rewrite_linux(const struct rw *w, const struct pamconf_file *f)
{
	unsigned at = 1;	/* the physical line written next */

	for (size_t i = 0; i < f->n; i++) {
		for (; w->ops->keep_lines && at < f->v[i].line; at++) {
			pwrap_buf_str(w->out, "\n");
		}
		if (rewrite_line(w, &f->v[i]) != 0) {
			return -1;
		}
		at++;
	}
	if (f->end == PAMCONF_END_HANG) {
		w->err->why = "a continued line fills libpam's 1024-byte line "
			      "buffer but for one byte, on which libpam loops "
			      "forever; refusing the file";
		w->err->line = f->end_line;
		errno = EINVAL;
		return -1;
	}
	if (f->end == PAMCONF_END_BROKEN) {
		/* libpam gives up on the file here, keeping the lines before:
		 * end the copy in a continued line, which it gives up on the
		 * same way */
		pwrap_buf_str(w->out, "\\");
	}
	return 0;
}

/* ---- OpenPAM -------------------------------------------------------------- */

static int rewrite_openpam(const struct rw *w, const struct pamconf_file *f,
			   const char *text, size_t len)
{
	const struct pamconf_ops *ops = w->ops;
	size_t copied = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct pamconf_line *l = &f->v[i];
		const struct pamconf_tok *t;
		char *rep = NULL;

		/* the third word of every line of three or more: what a
		 * line OpenPAM fails names does not matter */
		if (l->ntok < 3) {
			continue;
		}
		if (strcmp(l->tok[1].text, "include") == 0) {
			/* a service name: it stays, the caller follows it */
			if (ops->include_target != NULL) {
				free(ops->include_target(
					ops->ctx, l->tok[2].text,
					pamconf_line_stack(l), w->src,
					l->line));
			}
			continue;
		}
		t = &l->tok[2];
		if (ops->module_line != NULL) {
			struct pamconf_module_line ml = {
				.l = l,
				.type = l->tok[0].text,
				.control = l->tok[1].text,
				.module = t->text,
				.stack = pamconf_line_stack(l),
				.src = w->src,
				.line = l->line,
			};

			rep = ops->module_line(ops->ctx, &ml);
		}
		if (rep == NULL && ops->module_path != NULL) {
			rep = ops->module_path(ops->ctx, t->text, false, w->src,
					       l->line);
		}
		if (rep != NULL) {
			pwrap_buf_add(w->out, text + copied, t->s - copied);
			pwrap_buf_str(w->out, rep);
			copied = t->e;
			free(rep);
		}
	}
	pwrap_buf_add(w->out, text + copied, len - copied);
	return 0;
}

int pamconf_rewrite(const struct pamconf_rules *r, const char *text,
		    size_t len, const char *src, const struct pamconf_ops *ops,
		    char **out, size_t *out_len, struct pamconf_err *err)
{
	struct pamconf_file f;
	struct pwrap_buf o = { 0 };
	struct pamconf_err dummy;
	struct rw w = { r, ops, src, &o, err != NULL ? err : &dummy };
	int rc;

	*out = NULL;
	if (out_len != NULL) {
		*out_len = 0;
	}
	w.err->why = NULL;
	w.err->line = 0;
	if (pamconf_parse(r, text, len, &f) != 0) {
		return -1;
	}
	pwrap_buf_add(&o, "", 0);	/* an empty file gives "" */
	rc = r->impl == PAMCONF_OPENPAM ? rewrite_openpam(&w, &f, text, len)
					: rewrite_linux(&w, &f);
	pamconf_file_free(&f);
	if (rc == 0 && o.failed) {
		errno = ENOMEM;
		rc = -1;
	}
	if (rc == 0) {
		if (out_len != NULL) {
			*out_len = o.len;
		}
		*out = pwrap_buf_take(&o);
	}
	pwrap_buf_free(&o);
	return rc;
}
