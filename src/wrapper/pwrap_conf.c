/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The service-file rewriter.  libpam is given a private copy of each service
 * file in which (a) include/substack/@include targets point at our own
 * rewritten copies of the included files, because Debian's libpam sends
 * relative includes to /etc/pam.d even with a confdir, and (b) bare names of
 * our test modules become absolute paths, because libpam looks for relative
 * module names only in the system module directory.
 *
 * The rule: libpam must read the copy exactly as it reads the original,
 * except for those tokens.  So the file is read the way Linux-PAM reads it
 * (pam_handlers.c): fgets() into a 1024-byte buffer (a longer physical line
 * becomes several lines), blank lines and lines starting with '#' skipped,
 * everything from a '#' on dropped, a trailing backslash joining the next
 * line (in the same buffer: overflowing it, or ending the file in a
 * continued line, makes libpam give up on the file), tokens separated by
 * " \n\t" only (not CR), "[...]" one token, keywords compared without case.
 * Each logical line is written back as libpam assembled it, on one physical
 * line, with only the target token replaced; a module path that would make
 * the line too long for libpam's buffer is left as written (with a
 * warning), so a valid line never becomes an invalid one.
 *
 * This file does no I/O: the caller reads the file and decides through the
 * callbacks what each target becomes, which keeps it fuzzable on its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pwrap_private.h"

/* libpam's line buffer (BUF_SIZE in pam_handlers.c). */
#define PAM_LINE_BUF 1024

/* The input, read as fgets() reads a FILE. */
struct input {
	const char *p;
	const char *end;
	unsigned line;	/* physical lines started so far */
	bool mid;	/* the last read stopped inside a physical line */
};

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

enum { ASM_EOF = 0, ASM_LINE = 1, ASM_BROKEN = -1, ASM_HANG = -2 };

/*
 * One logical line into buf (PAM_LINE_BUF bytes), as _pam_assemble_line
 * does it; *first gets the physical line it starts on.  ASM_BROKEN: libpam
 * gives up on the file here (buffer full, or the file ends in a continued
 * line); ASM_HANG: the buffer is full but for its last byte, on which
 * libpam's fgets() reads nothing, forever.
 */
static int assemble(struct input *in, char *buf, unsigned *first)
{
	char *p = buf;
	char *endp = buf + PAM_LINE_BUF;
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

/* A token as _pam_StrTok sees it: [s, e) in the line, "[...]" included. */
struct tok {
	size_t s, e;
	size_t next;	/* where the search for the next one starts */
	bool bracket;
};

static bool is_delim(char c)
{
	return c == ' ' || c == '\n' || c == '\t';
}

static bool tok_next(const char *l, size_t from, struct tok *t)
{
	size_t i = from;

	while (l[i] != '\0' && is_delim(l[i])) {
		i++;
	}
	if (l[i] == '\0') {
		return false;
	}
	t->s = i;
	t->bracket = l[i] == '[';
	if (t->bracket) {
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
	t->e = t->bracket && l[i] == ']' ? i + 1 : i;
	t->next = l[i] != '\0' ? i + 1 : i;
	return true;
}

/* The text libpam compares (cut at PAM_LINE_BUF - 1 bytes, more than a
 * line holds): a bracketed token loses its brackets and the backslash of
 * "\]". */
static void tok_word(const char *l, const struct tok *t,
		     char text[PAM_LINE_BUF])
{
	size_t n = 0;
	size_t i = t->s;
	size_t end = t->e;

	if (t->bracket) {
		i++;
		if (end > i && l[end - 1] == ']') {
			end--;
		}
	}
	for (; i < end && n + 1 < PAM_LINE_BUF; i++) {
		if (t->bracket && l[i] == '\\' && l[i + 1] == ']') {
			continue;
		}
		text[n++] = l[i];
	}
	text[n] = '\0';
}

static bool tok_is(const char *l, const struct tok *t, const char *word)
{
	char text[PAM_LINE_BUF];

	tok_word(l, t, text);
	return strcasecmp(text, word) == 0;
}

/* Whether a line's first token is "@include": libpam drops a leading '-'
 * ("do not log module load errors") first, so "-@include" is one too. */
static bool is_at_include(const char *l, const struct tok *t)
{
	char text[PAM_LINE_BUF];

	tok_word(l, t, text);
	return strcasecmp(text[0] == '-' ? text + 1 : text, "@include") == 0;
}

/* The stack a line with first token t belongs to, as libpam tells it. */
static enum pwrap_stack line_stack(const char *l, const struct tok *t)
{
	static const char *const names[] = {
		[PWRAP_STACK_AUTH] = "auth",
		[PWRAP_STACK_ACCOUNT] = "account",
		[PWRAP_STACK_SESSION] = "session",
		[PWRAP_STACK_PASSWORD] = "password",
	};
	char text[PAM_LINE_BUF];
	const char *w = text;

	tok_word(l, t, text);
	if (w[0] == '-') {
		w++;	/* "do not log module load errors" */
	}
	if (strcasecmp(w, "@include") == 0) {
		return PWRAP_STACK_ASKED;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i] != NULL && strcasecmp(w, names[i]) == 0) {
			return (enum pwrap_stack)i;
		}
	}
	return PWRAP_STACK_BAD;
}

void pwrap_log_bad_include(enum pwrap_bad_include why, const char *target,
			   const char *src, unsigned line)
{
	if (why == PWRAP_INCLUDE_NO_TARGET) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s:%u: include without a target, "
			  "on which libpam crashes; refusing the file", src,
			  line);
	} else {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s:%u: with the include target "
			  "%s resolved the line would not fit libpam's "
			  "%d-byte line buffer; shorten the line", src, line,
			  target, PAM_LINE_BUF);
	}
}

bool pwrap_stack_reads(enum pwrap_stack line, enum pwrap_stack asked)
{
	return asked == PWRAP_STACK_ANY || line == asked ||
	       line == PWRAP_STACK_BAD || line == PWRAP_STACK_ASKED;
}

enum pwrap_stack pwrap_stack_included(enum pwrap_stack line,
				      enum pwrap_stack asked)
{
	if (line == PWRAP_STACK_ASKED) {
		return asked;
	}
	if (line == PWRAP_STACK_BAD) {
		/* libpam: "most sensitive" when it reads every stack */
		return asked == PWRAP_STACK_ANY ? PWRAP_STACK_AUTH : asked;
	}
	return line;
}

/*
 * libpam names a module or substack after its path (the last component
 * without its last ".suffix") and fails the line when that name is empty
 * or "?", before it opens anything: such a substack target stays as
 * written (a rewritten one always has a name).
 */
bool pwrap_libpam_name_refused(const char *target)
{
	const char *base = strrchr(target, '/');
	const char *dot;
	size_t n;

	base = base != NULL ? base + 1 : target;
	dot = strrchr(base, '.');
	n = dot != NULL ? (size_t)(dot - base) : strlen(base);
	return n == 0 || (n == 1 && base[0] == '?');
}

/* The token's text as libpam passes it on (malloc'd), or NULL. */
static char *tok_text(const char *l, const struct tok *t)
{
	size_t i = t->s + (t->bracket ? 1 : 0);
	size_t end = t->e;
	char *text, *o;

	if (t->bracket && end > i && l[end - 1] == ']') {
		end--;
	}
	text = malloc(end - i + 1);
	if (text == NULL) {
		return NULL;
	}
	for (o = text; i < end; i++) {
		if (t->bracket && l[i] == '\\' && l[i + 1] == ']') {
			continue;
		}
		*o++ = l[i];
	}
	*o = '\0';
	return text;
}

/* Whether the last token of l is a "[..." that no ']' closes: libpam's
 * token then runs to the end of the line, newline included. */
static bool ends_in_open_bracket(const char *l)
{
	struct tok t;
	size_t from = 0;
	bool open = false;

	while (tok_next(l, from, &t)) {
		open = t.bracket && l[t.e - 1] != ']';
		from = t.next;
	}
	return open;
}

/*
 * How line l (len bytes, as libpam assembled it) is written back so that
 * libpam assembles it again: the '\n' libpam kept at its end is written
 * once; a '#' is added when libpam's line had no '\n' there but the copy
 * needs one, and cutting it at a '#' keeps the two equal: after a last
 * word ending in a backslash (which would else continue the line) and
 * after an unclosed "[..." (whose token would else take the newline).
 * *body gets the bytes of l to write, the result says whether '#' follows.
 */
static bool emit_form(const char *l, size_t len, size_t *body)
{
	bool nl = len > 0 && l[len - 1] == '\n';
	size_t t = nl ? len - 1 : len;

	*body = t;
	while (t > 0 && (l[t - 1] == ' ' || l[t - 1] == '\t')) {
		t--;
	}
	return (t > 0 && l[t - 1] == '\\') || (!nl && ends_in_open_bracket(l));
}

static void emit(struct pwrap_buf *out, const char *l, size_t len)
{
	size_t body;
	bool hash = emit_form(l, len, &body);

	pwrap_buf_add(out, l, body);
	pwrap_buf_str(out, hash ? "#\n" : "\n");
}

/* The length emit() writes for a line of len bytes (without its '\n'). */
static size_t emitted_len(const char *l, size_t len)
{
	size_t body;
	bool hash = emit_form(l, len, &body);

	return body + (hash ? 1 : 0);
}

/* nl = l with the token target replaced by rep. */
static void replace_tok(struct pwrap_buf *nl, const char *l,
			const struct tok *target, const char *rep)
{
	pwrap_buf_add(nl, l, target->s);
	pwrap_buf_str(nl, rep);
	/* "[x]y" is two tokens; a replaced "[x]" must stay apart from "y" */
	if (l[target->e] != '\0' && !is_delim(l[target->e])) {
		pwrap_buf_str(nl, " ");
	}
	pwrap_buf_str(nl, l + target->e);
}

/*
 * The module line l (tokens t1 t2, module token target with text) written
 * with what ops->module_line gives (the trace's stand-in): true when it is
 * written (or out failed), false to go on as without (no replacement, or
 * one that would not fit libpam's line buffer).
 */
static bool traced_line(struct pwrap_buf *out, const char *l,
			const struct tok *t1, const struct tok *t2,
			const struct tok *target,
			const char *text, const char *src, unsigned line,
			const struct pwrap_rewrite_ops *ops)
{
	struct pwrap_module_line ml = { .src = src, .line = line };
	char *type = tok_text(l, t1);
	char *control = tok_text(l, t2);
	char *rep = NULL;
	struct pwrap_buf nl = { 0 };
	bool done = false;

	if (type == NULL || control == NULL) {
		out->failed = true;
		done = true;
		goto out;
	}
	ml.type = type;
	ml.control = control;
	ml.bracket = t2->bracket;
	ml.module = text;
	ml.stack = line_stack(l, t1);
	rep = ops->module_line(ops->ctx, &ml);
	if (rep == NULL) {
		goto out;
	}
	replace_tok(&nl, l, target, rep);
	if (nl.failed) {
		out->failed = true;
		done = true;
	} else if (emitted_len(nl.p, nl.len) < PAM_LINE_BUF) {
		emit(out, nl.p, nl.len);
		done = true;
	} else {
		PWRAP_LOG(PWRAP_LOG_WARN, "%s:%u: with the trace's stand-in for "
			  "%s the line would not fit libpam's %d-byte line "
			  "buffer; its calls are not traced", src, line, text,
			  PAM_LINE_BUF);
	}
out:
	free(nl.p);
	free(rep);
	free(type);
	free(control);
	return done;
}

/*
 * Rewrites one logical line.  Returns 0, or -1 when an include target
 * cannot be replaced without breaking libpam's line limit (logged; the
 * caller refuses the file) or on ENOMEM.
 */
static int rewrite_line(struct pwrap_buf *out, const char *l, const char *src,
			unsigned line, const struct pwrap_rewrite_ops *ops)
{
	struct tok t1, t2, t3;
	const struct tok *target = NULL;
	bool include = false;
	bool substack = false;
	char *text = NULL;
	char *rep = NULL;
	struct pwrap_buf nl = { 0 };
	size_t len = strlen(l);
	int rc = 0;

	if (!tok_next(l, 0, &t1)) {
		return 0;	/* nothing libpam would use */
	}
	if (is_at_include(l, &t1)) {
		if (tok_next(l, t1.next, &t2)) {
			target = &t2;
			include = true;
		}
	} else if (tok_next(l, t1.next, &t2) &&
		   tok_next(l, t2.next, &t3)) {
		target = &t3;
		substack = tok_is(l, &t2, "substack");
		include = substack || tok_is(l, &t2, "include");
	}
	if (target == NULL) {
		if ((is_at_include(l, &t1) ||
		     (tok_next(l, t1.next, &t2) &&
		      (tok_is(l, &t2, "include") ||
		       tok_is(l, &t2, "substack")))) &&
		    (ops->bad_include == NULL ||
		     ops->bad_include(ops->ctx, line_stack(l, &t1),
				      PWRAP_INCLUDE_NO_TARGET, NULL, src,
				      line) != 0)) {
			pwrap_log_bad_include(PWRAP_INCLUDE_NO_TARGET, NULL,
					      src, line);
			errno = EINVAL;
			return -1;
		}
		emit(out, l, len);
		return 0;
	}
	text = tok_text(l, target);
	if (text == NULL) {
		out->failed = true;
		return -1;
	}
	if (!include && ops->module_line != NULL &&
	    traced_line(out, l, &t1, &t2, target, text, src, line, ops)) {
		goto out;
	}
	/* a callback left NULL keeps its tokens as written */
	if (include && substack && pwrap_libpam_name_refused(text)) {
		rep = NULL;	/* libpam refuses the line as it is */
	} else if (include && ops->include_target != NULL) {
		rep = ops->include_target(ops->ctx, text, line_stack(l, &t1),
					  src, line);
	} else if (!include && ops->module_path != NULL) {
		char first[PAM_LINE_BUF];

		tok_word(l, &t1, first);
		rep = ops->module_path(ops->ctx, text, first[0] == '-', src,
				       line);
	}
	if (rep == NULL) {
		emit(out, l, len);
		goto out;
	}
	replace_tok(&nl, l, target, rep);
	if (nl.failed) {
		out->failed = true;
		rc = -1;
		goto out;
	}
	if (emitted_len(nl.p, nl.len) < PAM_LINE_BUF) {
		emit(out, nl.p, nl.len);
	} else if (!include) {
		PWRAP_LOG(PWRAP_LOG_WARN, "%s:%u: with the full path of %s the "
			  "line would not fit libpam's %d-byte line buffer; "
			  "the module name is left as written", src, line,
			  text, PAM_LINE_BUF);
		emit(out, l, len);
	} else if (ops->bad_include != NULL &&
		   ops->bad_include(ops->ctx, line_stack(l, &t1),
				    PWRAP_INCLUDE_TOO_LONG, text, src,
				    line) == 0) {
		emit(out, l, len);	/* as written: libpam skips it */
	} else {
		pwrap_log_bad_include(PWRAP_INCLUDE_TOO_LONG, text, src, line);
		errno = E2BIG;
		rc = -1;
	}
out:
	free(nl.p);
	free(rep);
	free(text);
	return rc;
}

int pwrap_rewrite_service(const char *in, size_t len, const char *src_name,
			  const struct pwrap_rewrite_ops *ops, char **out,
			  size_t *out_len)
{
	struct input input = { in, in + len, 0, false };
	struct pwrap_buf result = { 0 };
	char buf[PAM_LINE_BUF];
	unsigned first = 0;
	int rc = -1;
	int a;

	*out = NULL;
	if (out_len != NULL) {
		*out_len = 0;
	}
	pwrap_buf_add(&result, "", 0);	/* an empty file gives an empty string */

	while ((a = assemble(&input, buf, &first)) == ASM_LINE) {
		if (rewrite_line(&result, buf, src_name, first, ops) != 0) {
			if (result.failed) {
				errno = ENOMEM;
			}
			goto out;
		}
	}
	if (a == ASM_HANG) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s:%u: a continued line fills "
			  "libpam's %d-byte line buffer but for one byte, on "
			  "which libpam loops forever; refusing the file",
			  src_name, input.line, PAM_LINE_BUF);
		errno = EINVAL;
		goto out;
	}
	if (a == ASM_BROKEN) {
		/* libpam gives up on the file here, keeping the lines before:
		 * end the copy in a continued line, which it gives up on the
		 * same way. */
		pwrap_buf_str(&result, "\\");
	}
	if (result.failed) {
		errno = ENOMEM;
		goto out;
	}
	*out = result.p;
	result.p = NULL;
	if (out_len != NULL) {
		*out_len = result.len;
	}
	rc = 0;
out:
	free(result.p);
	return rc;
}
