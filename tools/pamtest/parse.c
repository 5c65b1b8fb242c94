/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parser of pamtest(1) scenario files (format: pamtest-scenario(5)).
 * Line based: a directive per line, words separated by blanks, "quoted
 * strings" with C-like escapes, /regex/ where a text is matched, whole-line
 * # comments, and the indented lines right after `service NAME` forming that
 * service's file.  Every problem is printed as "file:line: what is wrong" and
 * parsing goes on so that one run shows all of them.
 */
#define _GNU_SOURCE
#include "scen.h"
#include "names.h"
#include "pwrap_tool.h"
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <security/pam_appl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A position inside one line of one file. */
struct cur {
	const char *p;
	const char *file;
	int line;
	int *nerr;
};

static void vperr(const char *file, int line, int *nerr, const char *fmt,
		  va_list ap)
{
	fprintf(stderr, "%s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	(*nerr)++;
}

void scenario_perr(const char *file, int line, int *nerr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vperr(file, line, nerr, fmt, ap);
	va_end(ap);
}

static void perr(struct cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct cur *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vperr(c->file, c->line, c->nerr, fmt, ap);
	va_end(ap);
}

/* The error for a name that is not a text item (names.c accepts these). */
static void item_error(struct cur *c, const char *w)
{
	perr(c, "unknown or non-text item \"%s\" (PAM_SERVICE, PAM_USER, PAM_TTY, "
		"PAM_RHOST, PAM_AUTHTOK, PAM_OLDAUTHTOK, PAM_RUSER, "
		"PAM_USER_PROMPT"
#if !defined(PWRAP_OPENPAM)
		", PAM_XDISPLAY, PAM_AUTHTOK_TYPE"
#endif
		")", w);
}

static void skip_ws(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t') {
		c->p++;
	}
}

static int at_end(struct cur *c)
{
	skip_ws(c);
	return *c->p == '\0';
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	void *r = reallocarray(p, n, size);

	if (r == NULL) {
		perror("pamtest");
		exit(2);
	}
	return r;
}

static char *xstrdup(const char *s)
{
	char *r = strdup(s);

	if (r == NULL) {
		perror("pamtest");
		exit(2);
	}
	return r;
}

/* "quoted string" at c->p (on the opening quote).  Malloc'd or NULL. */
static char *read_quoted(struct cur *c)
{
	size_t cap = strlen(c->p) + 1, n = 0;
	char *out = xrealloc(NULL, cap, 1);

	c->p++;
	for (;;) {
		char ch = *c->p++;
		if (ch == '\0') {
			perr(c, "unterminated quoted string");
			free(out);
			return NULL;
		}
		if (ch == '"') {
			break;
		}
		if (ch == '\\') {
			char e = *c->p++;
			switch (e) {
			case '\\': ch = '\\'; break;
			case '"': ch = '"'; break;
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			default:
				perr(c, "unknown escape \\%c in quoted string (use \\\\, \\\", \\n, \\t or \\r)",
				     e != '\0' ? e : ' ');
				free(out);
				return NULL;
			}
		}
		out[n++] = ch;
	}
	out[n] = '\0';
	if (*c->p != '\0' && *c->p != ' ' && *c->p != '\t') {
		perr(c, "expected a blank after the closing quote");
		free(out);
		return NULL;
	}
	return out;
}

/* The next word (bare or quoted), or NULL with an error naming `what`. */
static char *read_word(struct cur *c, const char *what)
{
	const char *s;

	if (at_end(c)) {
		perr(c, "missing %s", what);
		return NULL;
	}
	if (*c->p == '"') {
		return read_quoted(c);
	}
	s = c->p;
	while (*c->p != '\0' && *c->p != ' ' && *c->p != '\t') {
		c->p++;
	}
	return strndup(s, (size_t)(c->p - s));
}

/* Peek: is the next bare word `w`?  Consumes it if so. */
static int accept_word(struct cur *c, const char *w)
{
	size_t n = strlen(w);

	skip_ws(c);
	if (strncmp(c->p, w, n) == 0 && (c->p[n] == '\0' || c->p[n] == ' ' || c->p[n] == '\t')) {
		c->p += n;
		return 1;
	}
	return 0;
}

static int compile_match(struct cur *c, struct match *m, int icase)
{
	int rc = regcomp(&m->re, m->text, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));

	if (rc != 0) {
		char buf[256];
		regerror(rc, &m->re, buf, sizeof(buf));
		perr(c, "bad regular expression /%s/: %s", m->text, buf);
		return -1;
	}
	m->compiled = 1;
	return 0;
}

/* A text to match: "exact", /regex/[i] or a bare word (exact). */
static int read_match(struct cur *c, struct match *m, const char *what)
{
	memset(m, 0, sizeof(*m));
	if (at_end(c)) {
		perr(c, "missing %s", what);
		return -1;
	}
	if (*c->p == '/') {
		size_t cap = strlen(c->p), n = 0;
		int icase = 0;
		m->text = xrealloc(NULL, cap + 1, 1);
		c->p++;
		for (;;) {
			char ch = *c->p++;
			if (ch == '\0') {
				perr(c, "unterminated /regular expression/");
				return -1;
			}
			if (ch == '/') {
				break;
			}
			if (ch == '\\' && *c->p == '/') {
				ch = '/';
				c->p++;
			} else if (ch == '\\' && *c->p != '\0') {
				m->text[n++] = ch;
				ch = *c->p++;
			}
			m->text[n++] = ch;
		}
		m->text[n] = '\0';
		if (*c->p == 'i') {
			icase = 1;
			c->p++;
		}
		if (*c->p != '\0' && *c->p != ' ' && *c->p != '\t') {
			perr(c, "expected a blank after /regular expression/ (only the flag i may follow)");
			return -1;
		}
		m->is_regex = 1;
		return compile_match(c, m, icase);
	}
	m->text = read_word(c, what);
	return m->text != NULL ? 0 : -1;
}

static int expect_end(struct cur *c)
{
	if (!at_end(c)) {
		perr(c, "unexpected \"%s\" at the end of the line", c->p);
		return -1;
	}
	return 0;
}

static void add_secret(struct scenario *sc, const char *s)
{
	if (s == NULL || s[0] == '\0') {
		return;
	}
	sc->secrets = xrealloc(sc->secrets, sc->nsecrets + 1, sizeof(char *));
	sc->secrets[sc->nsecrets++] = xstrdup(s);
}

static int secret_name(const char *name)
{
	return strcasestr(name, "AUTHTOK") != NULL || strcasestr(name, "PASS") != NULL;
}

static int valid_env_name(const char *s)
{
	if (s[0] == '\0' || isdigit((unsigned char)s[0])) {
		return 0;
	}
	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s) && *s != '_') {
			return 0;
		}
	}
	return 1;
}

static int read_code(struct cur *c, int *code)
{
	char *w = read_word(c, "PAM code after `expect`");
	int rc = -1;

	if (w == NULL) {
		return -1;
	}
	if (parse_pam_code(w, code) != 0) {
		perr(c, "unknown PAM code \"%s\" (e.g. PAM_SUCCESS, PAM_AUTH_ERR or a number)", w);
	} else {
		rc = 0;
	}
	free(w);
	return rc;
}

static struct step *new_step(struct scenario *sc, enum step_kind kind, int line)
{
	struct step *s;

	sc->steps = xrealloc(sc->steps, sc->nsteps + 1, sizeof(*s));
	s = &sc->steps[sc->nsteps++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->line = line;
	return s;
}

/* The `run` step that expectation lines attach to, or NULL with an error. */
static struct step *current_run(struct scenario *sc, struct cur *c, const char *kw)
{
	if (sc->nsteps == 0 || sc->steps[sc->nsteps - 1].kind != STEP_RUN) {
		perr(c, "`%s` must follow a `run` line (or another expectation of it)", kw);
		return NULL;
	}
	return &sc->steps[sc->nsteps - 1];
}

static struct expect *new_expect(struct step *run, enum exp_kind kind, int line)
{
	struct expect *e;

	run->exps = xrealloc(run->exps, run->nexps + 1, sizeof(*e));
	e = &run->exps[run->nexps++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->line = line;
	return e;
}

/*
 * NAME=VALUE, NAME="quoted value", "NAME=VALUE" or NAME alone: *name and
 * *value are malloc'd; *value is NULL when there is no '='.
 */
static int read_assign(struct cur *c, const char *what, char **name, char **value)
{
	*name = NULL;
	*value = NULL;
	if (at_end(c)) {
		perr(c, "missing %s", what);
		return -1;
	}
	if (*c->p == '"') {
		char *w = read_quoted(c);
		if (w == NULL) {
			return -1;
		}
		char *eq = strchr(w, '=');
		if (eq != NULL) {
			*value = xstrdup(eq + 1);
			*eq = '\0';
		}
		*name = w;
		return 0;
	}
	const char *s = c->p;
	while (*c->p != '\0' && *c->p != ' ' && *c->p != '\t' && *c->p != '=') {
		c->p++;
	}
	*name = strndup(s, (size_t)(c->p - s));
	if (*name == NULL) {
		return -1;
	}
	if (*c->p != '=') {
		return 0;
	}
	c->p++;
	if (*c->p == '\0' || *c->p == ' ' || *c->p == '\t') {
		*value = xstrdup("");
	} else {
		*value = read_word(c, "value");
	}
	return *value != NULL ? 0 : -1;
}

/* read_assign() for environment variables: checks the name. */
static int read_env_assign(struct cur *c, const char *what, char **name, char **value)
{
	if (read_assign(c, what, name, value) != 0) {
		return -1;
	}
	if (!valid_env_name(*name)) {
		perr(c, "invalid environment variable name \"%s\"", *name);
		return -1;
	}
	return 0;
}

static int parse_service(struct scenario *sc, struct cur *c)
{
	char *name = read_word(c, "service name");
	const char *why;

	if (name == NULL) {
		return -1;
	}
	if (expect_end(c) != 0) {
		goto fail;
	}
	if (!pwrap_valid_service_name(name)) {
		perr(c, "invalid service name \"%s\"", name);
		goto fail;
	}
	if ((why = pwrap_service_case_problem(name)) != NULL) {
		perr(c, "invalid service name \"%s\": %s", name, why);
		goto fail;
	}
	for (size_t i = 0; i < sc->nsvcs; i++) {
		if (strcmp(sc->svcs[i].name, name) == 0) {
			perr(c, "service \"%s\" already declared at line %d", name, sc->svcs[i].line);
			goto fail;
		}
	}
	sc->svcs = xrealloc(sc->svcs, sc->nsvcs + 1, sizeof(*sc->svcs));
	memset(&sc->svcs[sc->nsvcs], 0, sizeof(*sc->svcs));
	sc->svcs[sc->nsvcs].name = name;
	sc->svcs[sc->nsvcs].line = c->line;
	sc->nsvcs++;
	return 0;
fail:
	free(name);
	return -1;
}

/* `service-dir system [DIR]`: the system's stacks (or DIR's), copied
 * with test doubles (pam_wrapper(1), SYSTEM STACKS). */
static int parse_system(struct scenario *sc, struct cur *c, char *word)
{
	char *path = NULL, *full = NULL;
	int rc = -1;

	free(word);
	if (!at_end(c) &&
	    (path = read_word(c, "directory after `service-dir system`")) ==
		    NULL) {
		goto out;
	}
	if (expect_end(c) != 0) {
		goto out;
	}
	if (path == NULL) {
		full = xstrdup(PWRAP_SYSTEM_SRC);
	} else if (path[0] == '/') {
		full = xstrdup(path);
	} else if (asprintf(&full, "%s/%s", sc->dir, path) < 0) {
		goto out;
	}
	sc->system = realpath(full, NULL);
	if (sc->system == NULL) {
		perr(c, "service-dir system %s: %s", full, strerror(errno));
		goto out;
	}
#if defined(PWRAP_OPENPAM)
	perr(c, "`service-dir system`: this build is for OpenPAM; it knows "
	     "Linux-PAM's modules only");
	goto out;
#endif
	sc->service_dir_line = c->line;
	rc = 0;
out:
	free(path);
	free(full);
	return rc;
}

static int parse_service_dir(struct scenario *sc, struct cur *c)
{
	char *path = read_word(c, "directory after `service-dir`");
	char *full = NULL;

	if (path != NULL && (sc->service_dir != NULL || sc->system != NULL)) {
		perr(c, "`service-dir` given twice (first at line %d)", sc->service_dir_line);
		goto fail;
	}
	if (path != NULL && strcmp(path, "system") == 0) {
		return parse_system(sc, c, path);
	}
	if (path == NULL || expect_end(c) != 0) {
		goto fail;
	}
	if (path[0] == '/') {
		full = xstrdup(path);
	} else if (asprintf(&full, "%s/%s", sc->dir, path) < 0) {
		goto fail;
	}
	sc->service_dir = realpath(full, NULL);
	if (sc->service_dir == NULL) {
		perr(c, "service-dir %s: %s", full, strerror(errno));
		goto fail;
	}
	sc->service_dir_line = c->line;
	free(path);
	free(full);
	return 0;
fail:
	free(path);
	free(full);
	return -1;
}

/* `group NAME [USER...]` */
static int parse_group(struct scenario *sc, struct cur *c)
{
	struct scen_group g = {0};
	char *name = read_word(c, "group name"), *u;
	const char *why;
	size_t len = 0;

	g.line = c->line;
	g.members = xstrdup("");
	if (name == NULL) {
		goto fail;
	}
	g.name = name;
	if (strpbrk(name, ":,\n ") != NULL || (why = pwrap_user_name_problem(name)) != NULL) {
		perr(c, "invalid group name \"%s\"", name);
		goto fail;
	}
	for (size_t i = 0; i < sc->ngroups; i++) {
		if (strcmp(sc->groups[i].name, name) == 0) {
			perr(c, "group %s given twice (first at line %d)", name,
			     sc->groups[i].line);
			goto fail;
		}
	}
	while (!at_end(c)) {
		if ((u = read_word(c, "member")) == NULL) {
			goto fail;
		}
		if (u[0] == '\0' || strpbrk(u, ":,\n ") != NULL) {
			perr(c, "invalid member \"%s\" of group %s", u, name);
			free(u);
			goto fail;
		}
		g.members = xrealloc(g.members, len + strlen(u) + 2, 1);
		len += (size_t)sprintf(g.members + len, "%s%s", len ? "," : "", u);
		free(u);
	}
	if (sc->ngroups == 0) {
		sc->group_line = c->line;
	}
	sc->groups = xrealloc(sc->groups, sc->ngroups + 1, sizeof(g));
	sc->groups[sc->ngroups++] = g;
	return 0;
fail:
	free(g.name);
	free(g.members);
	return -1;
}

/* `swap MODULE=REPLACEMENT` */
static int parse_swap(struct scenario *sc, struct cur *c)
{
	char *w = read_word(c, "MODULE=REPLACEMENT");
	struct pwrap_sys_swap sw;
	const char *why;

	if (w == NULL || expect_end(c) != 0) {
		free(w);
		return -1;
	}
	why = pwrap_sys_swap_parse(w, &sw);
	if (why != NULL) {
		perr(c, "swap %s: %s", w, why);
		free(w);
		return -1;
	}
	free(w);
	if (sc->nswaps == 0) {
		sc->swap_line = c->line;
	}
	sc->swaps = xrealloc(sc->swaps, sc->nswaps + 1, sizeof(sw));
	sc->swaps[sc->nswaps++] = sw;
	return 0;
}

/* `write-file PATH TEXT` and `remove-file PATH`: a file below the private
 * directory (state/nologin, ...). */
static int parse_write(struct scenario *sc, struct cur *c, int remove)
{
	struct step *s = new_step(sc, STEP_WRITE, c->line);
	const char *p;

	if ((s->name = read_word(c, "path below the private directory")) ==
	    NULL) {
		return -1;
	}
	p = s->name;
	if (p[0] == '/' || p[0] == '\0' || strcmp(p, "..") == 0 ||
	    strncmp(p, "../", 3) == 0 || strstr(p, "/../") != NULL ||
	    (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0)) {
		perr(c, "\"%s\": a path below the scenario's private directory "
		     "(no leading '/', no '..')", p);
		return -1;
	}
	if (!remove && (s->value = read_word(c, "the file's text")) == NULL) {
		return -1;
	}
	return expect_end(c);
}

static int parse_user(struct scenario *sc, struct cur *c)
{
	struct user u = {0};
	const char *why;

	u.line = c->line;
	u.name = read_word(c, "user name");
	if (u.name == NULL) {
		goto fail;
	}
	u.password = read_word(c, "password after the user name");
	if (u.password == NULL) {
		goto fail;
	}
	if (!at_end(c) && (u.service = read_word(c, "service")) == NULL) {
		goto fail;
	}
	if (!at_end(c) && (u.flags = read_word(c, "account flags")) == NULL) {
		goto fail;
	}
	if (expect_end(c) != 0) {
		goto fail;
	}
	if (u.flags != NULL && !tool_valid_account_flags(u.flags)) {
		perr(c, "unknown account flag in \"%s\" (known: expired, "
		     "must_change, locked, separated by ',')", u.flags);
		goto fail;
	}
	if (u.name[0] == '\0' || strpbrk(u.name, ":\n") != NULL) {
		perr(c, "invalid user name \"%s\" (no ':' or newline)", u.name);
		goto fail;
	}
	if (strpbrk(u.password, ":\n") != NULL) {
		perr(c, "the password of %s may not contain ':' or a newline (passdb format)", u.name);
		goto fail;
	}
	if ((why = pwrap_user_name_problem(u.name)) != NULL) {
		perr(c, "invalid user name \"%s\": %s", u.name, why);
		goto fail;
	}
	if (u.service != NULL && strpbrk(u.service, ":\n") != NULL) {
		perr(c, "invalid service \"%s\"", u.service);
		goto fail;
	}
	if (u.service != NULL && (why = pwrap_service_case_problem(u.service)) != NULL) {
		perr(c, "invalid service \"%s\": %s", u.service, why);
		goto fail;
	}
	add_secret(sc, u.password);
	sc->users = xrealloc(sc->users, sc->nusers + 1, sizeof(u));
	sc->users[sc->nusers++] = u;
	return 0;
fail:
	free(u.name);
	free(u.password);
	free(u.service);
	free(u.flags);
	return -1;
}

static int parse_start(struct scenario *sc, struct cur *c)
{
	struct step *s = new_step(sc, STEP_START, c->line);

	while (!at_end(c)) {
		if (accept_word(c, "user")) {
			if (s->user != NULL || s->no_user) {
				perr(c, "`user` given twice");
				return -1;
			}
			if ((s->user = read_word(
				     c, "user name after `user`")) == NULL) {
				return -1;
			}
		} else if (accept_word(c, "no-user")) {
			if (s->user != NULL || s->no_user) {
				perr(c, "`no-user` and `user` exclude each other");
				return -1;
			}
			s->no_user = 1;
		} else if (accept_word(c, "service")) {
			if (s->service != NULL) {
				perr(c, "`service` given twice");
				return -1;
			}
			if ((s->service = read_word(
				     c, "service name after `service`")) ==
			    NULL) {
				return -1;
			}
		} else if (accept_word(c, "expect")) {
			/* An expected pam_start result makes the start a test point. */
			if (read_code(c, &s->expected) != 0) {
				return -1;
			}
			s->has_expect = 1;
			return expect_end(c);
		} else {
			perr(c, "unexpected \"%s\" (start [user NAME | no-user] [service NAME] "
				"[expect CODE])", c->p);
			return -1;
		}
	}
	return 0;
}

static int parse_run(struct scenario *sc, struct cur *c)
{
	struct step *s = new_step(sc, STEP_RUN, c->line);
	char *w = read_word(c, "operation (authenticate, setcred, acct_mgmt, chauthtok, "
			       "open_session or close_session)");

	s->expected = PAM_SUCCESS;
	if (w == NULL) {
		return -1;
	}
	if (parse_op(w, &s->op) != 0) {
		perr(c, "unknown operation \"%s\" (authenticate, setcred, acct_mgmt, chauthtok, "
			"open_session or close_session)", w);
		free(w);
		return -1;
	}
	free(w);
	while (!at_end(c)) {
		int flag;
		if (accept_word(c, "expect")) {
			if (read_code(c, &s->expected) != 0) {
				return -1;
			}
			return expect_end(c);
		}
		if ((w = read_word(c, "flag")) == NULL) {
			return -1;
		}
		if (parse_flag(w, &flag) != 0) {
			perr(c, "unknown flag \"%s\" (PAM_SILENT, PAM_DISALLOW_NULL_AUTHTOK, "
				"PAM_ESTABLISH_CRED, PAM_DELETE_CRED, PAM_REINITIALIZE_CRED, "
				"PAM_REFRESH_CRED, PAM_CHANGE_EXPIRED_AUTHTOK) or `expect`", w);
			free(w);
			return -1;
		}
		free(w);
		s->flags |= flag;
	}
	return 0;
}

static int parse_end(struct scenario *sc, struct cur *c)
{
	struct step *s = new_step(sc, STEP_END, c->line);

	s->expected = PAM_SUCCESS;
	if (accept_word(c, "expect") && read_code(c, &s->expected) != 0) {
		return -1;
	}
	return expect_end(c);
}

static int parse_setenv(struct scenario *sc, struct cur *c, int unset)
{
	struct step *s = new_step(sc, STEP_SETENV, c->line);

	if (read_env_assign(c, unset ? "variable name" : "NAME=VALUE", &s->name,
			    &s->value) != 0) {
		return -1;
	}
	if (unset && s->value != NULL) {
		perr(c, "`unsetenv` takes a name, not NAME=VALUE");
		return -1;
	}
	if (!unset && s->value == NULL) {
		perr(c, "`setenv` takes NAME=VALUE");
		return -1;
	}
	if (s->value != NULL && secret_name(s->name)) {
		add_secret(sc, s->value);
	}
	return expect_end(c);
}

/* Stored as name (always) and value (NULL: remove the variable). */
static int parse_putenv(struct scenario *sc, struct cur *c)
{
	struct step *s = new_step(sc, STEP_PUTENV, c->line);

	if (read_env_assign(c, "NAME=VALUE (or NAME to remove it)", &s->name,
			    &s->value) != 0) {
		return -1;
	}
	if (s->value != NULL && secret_name(s->name)) {
		add_secret(sc, s->value);
	}
	return expect_end(c);
}

static int read_item(struct cur *c, int *item)
{
	char *w = read_word(c, "item name (PAM_USER, PAM_RHOST, ...)");
	int rc = 0;

	if (w == NULL) {
		return -1;
	}
	if (parse_item(w, item) != 0) {
		item_error(c, w);
		rc = -1;
	}
	free(w);
	return rc;
}

static int parse_set_item(struct scenario *sc, struct cur *c)
{
	struct step *s = new_step(sc, STEP_SET_ITEM, c->line);

	if (read_item(c, &s->item) != 0) {
		return -1;
	}
	if ((s->value = read_word(c, "item value")) == NULL) {
		return -1;
	}
	if (is_secret_item(s->item)) {
		add_secret(sc, s->value);
	}
	return expect_end(c);
}

static int parse_prompt(struct scenario *sc, struct cur *c)
{
	struct step *run = current_run(sc, c, "prompt");
	struct expect *e;

	if (run == NULL) {
		return -1;
	}
	e = new_expect(run, EXP_PROMPT, c->line);
	if (accept_word(c, "echo-on")) {
		e->style = PAM_PROMPT_ECHO_ON;
	} else if (accept_word(c, "echo-off")) {
		e->style = PAM_PROMPT_ECHO_OFF;
	}
	if (read_match(c, &e->m, "prompt text (\"text\" or /regex/)") != 0) {
		return -1;
	}
	if (!accept_word(c, "answer")) {
		perr(c, "expected `answer VALUE` after the prompt text");
		return -1;
	}
	if ((e->answer = read_word(c, "answer after `answer`")) == NULL) {
		return -1;
	}
	add_secret(sc, e->answer);
	return expect_end(c);
}

/* Default length of a long answer: libpamtest's PAMTEST_CONV_LONG_ANSWER_LEN. */
#define FAULT_LONG_DEFAULT 2048
#define FAULT_LONG_MAX (1 << 24)

/* A decimal number from 1 to max, or -1 with an error naming what. */
static long read_count(struct cur *c, const char *what, long max)
{
	char *w = read_word(c, what);
	char *end = NULL;
	long v = -1;

	if (w == NULL) {
		return -1;
	}
	errno = 0;
	if (w[0] >= '0' && w[0] <= '9') {
		v = strtol(w, &end, 10);
	}
	if (v < 1 || v > max || errno != 0 || end == NULL || *end != '\0') {
		perr(c, "%s must be a number from 1 to %ld, not \"%s\"", what, max, w);
		v = -1;
	}
	free(w);
	return v;
}

/*
 * fault KIND [at N] [code CODE] [length L], after a `start` (faults of the
 * whole transaction, calls counted from pam_start) or a `run` (of that
 * operation, calls counted from its start).
 */
static int parse_fault(struct scenario *sc, struct cur *c)
{
	static const char *const kinds =
		"fail, null-resp, null-entry or long-answer";
	struct step *s = sc->nsteps > 0 ? &sc->steps[sc->nsteps - 1] : NULL;
	struct fault *f;
	int has_at = 0, has_code = 0, has_len = 0;
	char *w;

	if (s == NULL || (s->kind != STEP_START && s->kind != STEP_RUN)) {
		perr(c, "`fault` must follow a `start` line (a fault of the whole "
			"transaction) or a `run` line (of that operation)");
		return -1;
	}
	s->faults = xrealloc(s->faults, s->nfaults + 1, sizeof(*f));
	f = &s->faults[s->nfaults++];
	memset(f, 0, sizeof(*f));
	f->line = c->line;
	f->code = PAM_CONV_ERR;
	f->length = FAULT_LONG_DEFAULT;
	if ((w = read_word(
		     c,
		     "fault kind (fail, null-resp, null-entry or long-answer)")) ==
	    NULL) {
		return -1;
	}
	if (strcmp(w, "fail") == 0) {
		f->kind = FAULT_FAIL;
	} else if (strcmp(w, "null-resp") == 0) {
		f->kind = FAULT_NULL_RESP;
	} else if (strcmp(w, "null-entry") == 0) {
		f->kind = FAULT_NULL_ENTRY;
	} else if (strcmp(w, "long-answer") == 0) {
		f->kind = FAULT_LONG_ANSWER;
	} else {
		perr(c, "unknown fault \"%s\" (%s)", w, kinds);
		free(w);
		return -1;
	}
	free(w);
	while (!at_end(c)) {
		long v;

		if (accept_word(c, "at")) {
			if (has_at++) {
				perr(c, "`at` given twice");
				return -1;
			}
			/* Call numbers as libpamtest's: below its "every call". */
			if ((v = read_count(c, "call number after `at`",
					    INT_MAX)) < 0) {
				return -1;
			}
			f->at = (unsigned int)v;
		} else if (accept_word(c, "code")) {
			if (f->kind != FAULT_FAIL) {
				perr(c, "`code` goes only with `fault fail`");
				return -1;
			}
			if (has_code++) {
				perr(c, "`code` given twice");
				return -1;
			}
			if ((w = read_word(c, "PAM code after `code`")) ==
			    NULL) {
				return -1;
			}
			if (parse_pam_code(w, &f->code) != 0) {
				perr(c, "unknown PAM code \"%s\" (e.g. PAM_CONV_ERR, PAM_BUF_ERR "
					"or a number)", w);
				free(w);
				return -1;
			}
			free(w);
			if (f->code == PAM_SUCCESS) {
				perr(c, "a failing call cannot return PAM_SUCCESS (that is "
					"`fault null-resp`)");
				return -1;
			}
		} else if (accept_word(c, "length")) {
			if (f->kind != FAULT_LONG_ANSWER) {
				perr(c, "`length` goes only with `fault long-answer`");
				return -1;
			}
			if (has_len++) {
				perr(c, "`length` given twice");
				return -1;
			}
			if ((v = read_count(c, "length after `length`",
					    FAULT_LONG_MAX)) < 0) {
				return -1;
			}
			f->length = (size_t)v;
		} else {
			perr(c, "unexpected \"%s\" (fault KIND [at N] [code CODE] "
				"[length L])", c->p);
			return -1;
		}
	}
	return 0;
}

static int parse_message(struct scenario *sc, struct cur *c, enum exp_kind kind, const char *kw)
{
	struct step *run = current_run(sc, c, kw);
	struct expect *e;

	if (run == NULL) {
		return -1;
	}
	e = new_expect(run, kind, c->line);
	if (kind == EXP_INFO || kind == EXP_ERROR) {
		if (read_match(c, &e->m,
			       "message text (\"text\" or /regex/)") != 0) {
			return -1;
		}
	}
	return expect_end(c);
}

static int parse_env(struct scenario *sc, struct cur *c, int absent)
{
	struct step *run = current_run(sc, c, absent ? "absent-env" : "env");
	struct expect *e;
	char *value = NULL;

	if (run == NULL) {
		return -1;
	}
	e = new_expect(run, absent ? EXP_ABSENT_ENV : EXP_ENV, c->line);
	if (read_env_assign(c, "PAM environment variable name", &e->name,
			    &value) != 0) {
		goto fail;
	}
	if (absent && value != NULL) {
		perr(c, "`absent-env` takes a name, not NAME=VALUE");
		goto fail;
	}
	if (value != NULL) {
		e->has_match = 1;
		e->m.text = value;
		value = NULL;
	} else if (!absent && !at_end(c)) {
		e->has_match = 1;
		if (read_match(c, &e->m, "value") != 0) {
			goto fail;
		}
	}
	return expect_end(c);
fail:
	free(value);
	return -1;
}

/* item PAM_USER=bob, item PAM_USER "bob", item PAM_USER /regex/. */
static int parse_item_expect(struct scenario *sc, struct cur *c, int absent)
{
	struct step *run = current_run(sc, c, absent ? "absent-item" : "item");
	struct expect *e;
	char *name = NULL, *value = NULL;
	int rc = -1;

	if (run == NULL) {
		return -1;
	}
	e = new_expect(run, absent ? EXP_ABSENT_ITEM : EXP_ITEM, c->line);
	if (read_assign(c, "item name (PAM_USER, PAM_RHOST, ...)", &name,
			&value) != 0) {
		goto out;
	}
	if (parse_item(name, &e->item) != 0) {
		item_error(c, name);
		goto out;
	}
	if (absent && value != NULL) {
		perr(c, "`absent-item` takes an item name, not NAME=VALUE");
		goto out;
	}
	if (value != NULL) {
		e->m.text = value;
		value = NULL;
	} else if (!absent && read_match(c, &e->m, "item value (\"text\" or /regex/)") != 0) {
		goto out;
	}
	rc = expect_end(c);
out:
	free(name);
	free(value);
	return rc;
}

static int parse_directive(struct scenario *sc, struct cur *c)
{
	static const char *const kws =
		"service, service-dir, user, group, swap, start, run, end, setenv, unsetenv, "
		"putenv, set-item, write-file, remove-file, "
		"prompt, info, error, no-info, no-error, env, absent-env, item, absent-item, "
		"fault, explore, outcomes, model, must, expect, accept";
	char *kw;
	int rc;

	skip_ws(c);
	const char *s = c->p;
	while (*c->p != '\0' && *c->p != ' ' && *c->p != '\t') {
		c->p++;
	}
	kw = strndup(s, (size_t)(c->p - s));
	if (kw == NULL) {
		return -1;
	}
	if (strcmp(kw, "service") == 0) {
		rc = parse_service(sc, c);
	} else if (strcmp(kw, "service-dir") == 0) {
		rc = parse_service_dir(sc, c);
	} else if (strcmp(kw, "user") == 0) {
		rc = parse_user(sc, c);
	} else if (strcmp(kw, "group") == 0) {
		rc = parse_group(sc, c);
	} else if (strcmp(kw, "swap") == 0) {
		rc = parse_swap(sc, c);
	} else if (strcmp(kw, "write-file") == 0) {
		rc = parse_write(sc, c, 0);
	} else if (strcmp(kw, "remove-file") == 0) {
		rc = parse_write(sc, c, 1);
	} else if (strcmp(kw, "start") == 0) {
		rc = parse_start(sc, c);
	} else if (strcmp(kw, "run") == 0) {
		rc = parse_run(sc, c);
	} else if (strcmp(kw, "end") == 0) {
		rc = parse_end(sc, c);
	} else if (strcmp(kw, "setenv") == 0) {
		rc = parse_setenv(sc, c, 0);
	} else if (strcmp(kw, "unsetenv") == 0) {
		rc = parse_setenv(sc, c, 1);
	} else if (strcmp(kw, "putenv") == 0) {
		rc = parse_putenv(sc, c);
	} else if (strcmp(kw, "set-item") == 0) {
		rc = parse_set_item(sc, c);
	} else if (strcmp(kw, "prompt") == 0) {
		rc = parse_prompt(sc, c);
	} else if (strcmp(kw, "info") == 0) {
		rc = parse_message(sc, c, EXP_INFO, kw);
	} else if (strcmp(kw, "error") == 0) {
		rc = parse_message(sc, c, EXP_ERROR, kw);
	} else if (strcmp(kw, "no-info") == 0) {
		rc = parse_message(sc, c, EXP_NO_INFO, kw);
	} else if (strcmp(kw, "no-error") == 0) {
		rc = parse_message(sc, c, EXP_NO_ERROR, kw);
	} else if (strcmp(kw, "env") == 0) {
		rc = parse_env(sc, c, 0);
	} else if (strcmp(kw, "absent-env") == 0) {
		rc = parse_env(sc, c, 1);
	} else if (strcmp(kw, "item") == 0) {
		rc = parse_item_expect(sc, c, 0);
	} else if (strcmp(kw, "absent-item") == 0) {
		rc = parse_item_expect(sc, c, 1);
	} else if (strcmp(kw, "fault") == 0) {
		rc = parse_fault(sc, c);
	} else if (xp_scen_keyword(kw)) {
		char **w = NULL;
		size_t n = 0;

		for (rc = 0; rc == 0 && !at_end(c); n++) {
			w = xrealloc(w, n + 1, sizeof(*w));
			if ((w[n] = read_word(c, "word")) == NULL) {
				rc = -1;
			}
		}
		if (rc == 0) {
			rc = xp_scen_parse(sc, kw, w, n, c->file, c->line, c->nerr);
		}
		for (size_t i = 0; i < n; i++) {
			free(w[i]);
		}
		free(w);
	} else if (strcmp(kw, "auth") == 0 || strcmp(kw, "account") == 0 ||
		   strcmp(kw, "password") == 0 || strcmp(kw, "session") == 0 ||
		   strncmp(kw, "-", 1) == 0 || strcmp(kw, "@include") == 0) {
		perr(c, "\"%s\" looks like a service file line: indent it directly below a "
			"`service NAME` line", kw);
		rc = -1;
	} else {
		perr(c, "unknown directive \"%s\" (one of: %s)", kw, kws);
		rc = -1;
	}
	free(kw);
	return rc;
}

/* Check ${NAME} references in service text; the runner expands them. */
static void check_vars(struct cur *c, const char *text)
{
	static const char *const vars[] = {"PASSDB", "MODULE_DIR", "SCENARIO_DIR", "DIR"};

	for (const char *p = strstr(text, "${"); p != NULL; p = strstr(p + 2, "${")) {
		const char *e = strchr(p, '}');
		size_t n = e != NULL ? (size_t)(e - p - 2) : 0;
		int ok = 0;
		for (size_t i = 0;
		     e != NULL && i < sizeof(vars) / sizeof(vars[0]); i++) {
			ok |= strlen(vars[i]) == n && strncmp(vars[i], p + 2, n) == 0;
		}
		if (!ok) {
			perr(c, "unknown variable %.*s in service line (known: ${PASSDB}, "
				"${MODULE_DIR}, ${SCENARIO_DIR}, ${DIR})",
			     e != NULL ? (int)(e - p + 1) : (int)strlen(p), p);
		}
	}
}

static void check_scenario(struct scenario *sc, struct cur *c)
{
	int has_text = 0, has_run = 0;

	c->line = 1;
	if (sc->nsvcs == 0) {
		perr(c, "no `service NAME` line: a scenario needs a service");
	}
	for (size_t i = 0; i < sc->nsvcs; i++) {
		if (sc->svcs[i].text == NULL) {
			continue;
		}
		has_text = 1;
		if (sc->service_dir != NULL || sc->system != NULL) {
			c->line = sc->svcs[i].line;
			perr(c, "service \"%s\" has its own lines, but service-dir (line %d) is given: "
				"use one or the other", sc->svcs[i].name, sc->service_dir_line);
		}
	}
	if (sc->system == NULL && sc->ngroups > 0) {
		c->line = sc->group_line;
		perr(c, "`group` needs `service-dir system` (its users and groups "
		     "are served by nss_wrapper)");
	}
	if (sc->system == NULL && sc->nswaps > 0) {
		c->line = sc->swap_line;
		perr(c, "`swap` needs `service-dir system`");
	}
	for (size_t i = 0; i < sc->nsvcs && has_text; i++) {
		if (sc->svcs[i].text == NULL) {
			c->line = sc->svcs[i].line;
			perr(c, "service \"%s\" has no indented service lines (needed unless service-dir is given)",
			     sc->svcs[i].name);
		}
	}
	for (size_t i = 0; i < sc->nsteps; i++) {
		has_run |= sc->steps[i].kind == STEP_RUN ||
			   sc->steps[i].kind == STEP_EXPLORE;
	}
	if (!has_run) {
		c->line = 1;
		perr(c, "no `run` line (nor `explore` block): nothing to test");
	}
}

/*
 * The whole scenario file, read into *buf (malloc'd, *len bytes, the
 * caller's to wipe and free, NUL-terminated): a regular file of at most
 * PAMTEST_MAX_SCENARIO bytes that does not grow while it is read (a FIFO,
 * a device such as /dev/zero or a directory is refused, without blocking
 * in open).  0, or -1 after a message naming the file.
 */
static int read_scenario(const char *path, char **buf, size_t *len)
{
	struct stat st;
	const char *why = NULL;
	ssize_t n = 1;
	int fd;

	*buf = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		why = strerror(errno);
	} else if (!S_ISREG(st.st_mode)) {
		why = "not a regular file (scenarios are read only from regular "
		      "files)";
	} else if (st.st_size > PAMTEST_MAX_SCENARIO) {
		why = "larger than " PAMTEST_MAX_SCENARIO_TEXT " (refused)";
	} else if ((*buf = malloc((size_t)st.st_size + 2)) == NULL) {
		why = strerror(errno);
	}
	/* one byte more than fstat said: a file that grew is found out */
	while (why == NULL && n != 0 && *len < (size_t)st.st_size + 1) {
		n = read(fd, *buf + *len, (size_t)st.st_size + 1 - *len);
		if (n < 0 && errno != EINTR) {
			why = strerror(errno);
		} else if (n > 0) {
			*len += (size_t)n;
		}
	}
	if (why == NULL && *len > (size_t)st.st_size) {
		why = "it changed while it was read";
	}
	if (why == NULL) {
		(*buf)[*len] = '\0';
	}
	if (fd >= 0) {
		close(fd);
	}
	if (why != NULL) {
		fprintf(stderr, "%s: %s\n", path, why);
		if (*buf != NULL) {
			explicit_bzero(*buf, *len);
		}
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return 0;
}

int scenario_parse(const char *path, struct scenario *sc)
{
	char *line = NULL;
	ssize_t len;
	char *whole = NULL;
	size_t wlen = 0;
	int nerr = 0;
	struct cur c = {.file = path, .line = 0, .nerr = &nerr};
	struct service *block = NULL; /* service whose indented lines we read */
	struct pwrap_buf text = {0};       /* those lines so far */
	int *lines = NULL;            /* and their line numbers */
	size_t nlines = 0;

	memset(sc, 0, sizeof(*sc));
	sc->path = xstrdup(path);
	{
		char *copy = xstrdup(path);
		char *d = realpath(dirname(copy), NULL);
		sc->dir = d != NULL ? d : xstrdup(".");
		free(copy);
	}
	if (read_scenario(path, &whole, &wlen) != 0) {
		scenario_free(sc);
		return -1;
	}
	for (size_t pos = 0, next; pos < wlen; pos = next) {
		char *nl = memchr(whole + pos, '\n', wlen - pos);

		/* the line in place (its newline becomes the end) */
		line = whole + pos;
		next = nl != NULL ? (size_t)(nl - whole) + 1 : wlen;
		len = (ssize_t)((nl != NULL ? next - 1 : wlen) - pos);
		line[len] = '\0';
		c.line++;
		while (len > 0 &&
		       (line[len - 1] == '\n' || line[len - 1] == '\r')) {
			line[--len] = '\0';
		}
		if (strlen(line) != (size_t)len) {
			c.p = line;
			perr(&c, "NUL byte in line");
			continue;
		}
		c.p = line;
		if (at_end(&c) || *c.p == '#') {
			continue;
		}
		int indented = line[0] == ' ' || line[0] == '\t';
		if (indented && block != NULL) {
			check_vars(&c, c.p);
			pwrap_buf_str(&text, c.p);
			pwrap_buf_str(&text, "\n");
			lines = xrealloc(lines, nlines + 1, sizeof(*lines));
			lines[nlines++] = c.line;
			continue;
		}
		if (block != NULL) {
			if (text.failed) {
				perror("pamtest");
				exit(2);
			}
			block->text = text.p;
			block->lines = lines;
			block->nlines = nlines;
			memset(&text, 0, sizeof(text));
			lines = NULL;
			nlines = 0;
			block = NULL;
		}
		size_t before = sc->nsvcs;
		if (parse_directive(sc, &c) == 0 && sc->nsvcs > before) {
			block = &sc->svcs[sc->nsvcs - 1];
		}
	}
	if (block != NULL && !text.failed) {
		block->text = text.p;
		block->lines = lines;
		block->nlines = nlines;
		memset(&text, 0, sizeof(text));
		lines = NULL;
	}
	free(lines);
	/* it held passwords */
	explicit_bzero(whole, wlen);
	free(whole);
	pwrap_buf_free(&text);
	if (nerr == 0) {
		check_scenario(sc, &c);
	}
	if (nerr != 0) {
		scenario_free(sc);
		return -1;
	}
	return 0;
}

static void match_free(struct match *m)
{
	free(m->text);
	if (m->compiled) {
		regfree(&m->re);
	}
}

void scenario_free(struct scenario *sc)
{
	for (size_t i = 0; i < sc->nsvcs; i++) {
		free(sc->svcs[i].name);
		free(sc->svcs[i].text);
		free(sc->svcs[i].lines);
	}
	for (size_t i = 0; i < sc->nusers; i++) {
		free(sc->users[i].name);
		explicit_bzero(sc->users[i].password, strlen(sc->users[i].password));
		free(sc->users[i].password);
		free(sc->users[i].service);
		free(sc->users[i].flags);
	}
	for (size_t i = 0; i < sc->nsteps; i++) {
		struct step *s = &sc->steps[i];
		for (size_t j = 0; j < s->nexps; j++) {
			struct expect *e = &s->exps[j];
			free(e->name);
			if (e->answer != NULL) {
				explicit_bzero(e->answer, strlen(e->answer));
			}
			free(e->answer);
			match_free(&e->m);
		}
		free(s->exps);
		free(s->faults);
		xp_scen_free(s->explore);
		free(s->user);
		free(s->service);
		free(s->name);
		free(s->value);
	}
	for (size_t i = 0; i < sc->nsecrets; i++) {
		explicit_bzero(sc->secrets[i], strlen(sc->secrets[i]));
		free(sc->secrets[i]);
	}
	free(sc->secrets);
	free(sc->svcs);
	free(sc->users);
	free(sc->steps);
	free(sc->path);
	free(sc->dir);
	free(sc->service_dir);
	free(sc->system);
	for (size_t i = 0; i < sc->ngroups; i++) {
		free(sc->groups[i].name);
		free(sc->groups[i].members);
	}
	free(sc->groups);
	for (size_t i = 0; i < sc->nswaps; i++) {
		pwrap_sys_swap_free(&sc->swaps[i]);
	}
	free(sc->swaps);
	memset(sc, 0, sizeof(*sc));
}

size_t scenario_ntests(const struct scenario *sc)
{
	size_t n = 0;

	for (size_t i = 0; i < sc->nsteps; i++) {
		n += step_is_test(&sc->steps[i]) != 0;
	}
	return n;
}

int match_test(const struct match *m, const char *text)
{
	if (text == NULL) {
		return 0;
	}
	if (m->is_regex) {
		return regexec(&m->re, text, 0, NULL, 0) == 0;
	}
	return strcmp(m->text, text) == 0;
}
