/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest -c, second half: after the syntax, check that every module the
 * scenario's service files name exists, so that a typo in a module name is
 * reported with its scenario line before anything runs (at run time it
 * would only show as PAM_ABORT or PAM_SYSTEM_ERR from some operation).
 *
 * The service files are the inline ones (each line knows its scenario
 * line), else the files of service-dir (or of the inherited
 * PAM_WRAPPER_SERVICE_DIR, as the runner uses them), and what they include
 * (include, substack, @include), each file once.  Module names resolve as
 * at run time: an absolute path as is; a bare name in the system module
 * directory first, then in our module directory (the wrapper's rule); any
 * other relative path in the system module directory (libpam's).  Lines
 * whose type starts with '-' are skipped: libpam ignores their module when
 * it is missing.  A missing service or include file is not reported here:
 * a scenario may test that failure on purpose.
 */
#define _GNU_SOURCE
#include "pwrap_tool.h"
#include "scenario.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deeper include chains are cut (libpam refuses cycles, we stop at this). */
#define CHECK_MAX_DEPTH 16

struct checker {
	const struct scenario *sc;
	const char *moddir;    /* ours; NULL when unknown */
	const char *sysmoddir; /* libpam's; NULL when unknown */
	const char *svcdir;    /* files of service-dir mode; NULL for inline */
	char **seen;           /* files already checked */
	size_t nseen;
	int errors;
};

/* Where a line comes from, for the message. */
struct origin {
	const char *service; /* the scenario's service being checked */
	int scen_line;       /* scenario line to report */
	const char *file;    /* service file, NULL for the scenario's own lines */
	int file_line;
};

static void check_text(struct checker *ck, const char *text,
		       const int *lines, size_t nlines,
		       const struct origin *from, int depth);

static void report(struct checker *ck, const struct origin *o,
		   const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(struct checker *ck, const struct origin *o,
		   const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: service \"%s\"", ck->sc->path, o->scen_line,
		o->service);
	if (o->file != NULL)
		fprintf(stderr, ", %s:%d", o->file, o->file_line);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ck->errors++;
}

static int exists(const char *dir, const char *name)
{
	char *p = NULL;
	int ok;

	if (dir == NULL || asprintf(&p, "%s/%s", dir, name) < 0)
		return 0;
	ok = access(p, F_OK) == 0;
	free(p);
	return ok;
}

/* ${MODULE_DIR} and ${SCENARIO_DIR} expanded; NULL when not known here. */
static char *expand_module(const struct checker *ck, const char *tok)
{
	struct pwrap_buf b = {0};
	const char *p = tok;

	for (const char *v; (v = strstr(p, "${")) != NULL;) {
		const char *e = strchr(v, '}');
		const char *val = NULL;

		if (e == NULL)
			break;
		if (strncmp(v, "${MODULE_DIR}", (size_t)(e - v + 1)) == 0)
			val = ck->moddir;
		else if (strncmp(v, "${SCENARIO_DIR}", (size_t)(e - v + 1)) == 0)
			val = ck->sc->dir;
		if (val == NULL) {
			pwrap_buf_free(&b);
			return NULL;
		}
		pwrap_buf_add(&b, p, (size_t)(v - p));
		pwrap_buf_str(&b, val);
		p = e + 1;
	}
	pwrap_buf_str(&b, p);
	return pwrap_buf_take(&b);
}

static void check_module(struct checker *ck, const char *tok,
			 const struct origin *o)
{
	char *mod = expand_module(ck, tok);

	if (mod == NULL) {
		/* ${DIR}/${PASSDB} exist only at run time; ${MODULE_DIR} needs
		 * the library, whose absence pwrap_locate() reported. */
		if (strstr(tok, "${MODULE_DIR}") != NULL)
			report(ck, o, "cannot check module %s: our module "
			       "directory is unknown (use --module-dir)", tok);
		goto out;
	}
	if (mod[0] == '/') {
		if (access(mod, F_OK) != 0)
			report(ck, o, "module %s not found", mod);
	} else if (strchr(mod, '/') != NULL) {
		if (!exists(ck->sysmoddir, mod))
			report(ck, o, "module %s not found in %s", mod,
			       ck->sysmoddir != NULL ? ck->sysmoddir
						     : "(the system module directory: unknown)");
	} else if (!exists(ck->sysmoddir, mod) && !exists(ck->moddir, mod)) {
		report(ck, o, "module %s not found (neither in %s nor in %s)",
		       mod, ck->sysmoddir != NULL ? ck->sysmoddir : "(unknown)",
		       ck->moddir != NULL ? ck->moddir : "(our module directory: unknown)");
	}
out:
	free(mod);
}

/* Checks a file once (whoever names it first); missing files are skipped. */
static void check_file(struct checker *ck, const char *path,
		       const struct origin *from, int depth)
{
	struct origin o = *from;
	struct pwrap_buf text = {0};
	char buf[4096];
	FILE *f = NULL;
	char **seen;
	size_t n;

	for (size_t i = 0; i < ck->nseen; i++)
		if (strcmp(ck->seen[i], path) == 0)
			return;
	seen = reallocarray(ck->seen, ck->nseen + 1, sizeof(*seen));
	if (seen == NULL)
		return;
	ck->seen = seen;
	if ((ck->seen[ck->nseen] = strdup(path)) == NULL)
		return;
	ck->nseen++;

	f = fopen(path, "r");
	if (f == NULL)
		goto out;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		pwrap_buf_add(&text, buf, n);
	if (ferror(f) || text.failed || text.p == NULL)
		goto out;
	o.file = path;
	check_text(ck, text.p, NULL, 0, &o, depth);
out:
	if (f != NULL)
		fclose(f);
	pwrap_buf_free(&text);
}

static const struct service *inline_service(const struct scenario *sc,
					    const char *name)
{
	for (size_t i = 0; i < sc->nsvcs; i++)
		if (sc->svcs[i].text != NULL && strcmp(sc->svcs[i].name, name) == 0)
			return &sc->svcs[i];
	return NULL;
}

/*
 * An include target: absolute as is; otherwise in the directory the
 * services come from.  With inline services that is the runner's private
 * directory, which holds exactly the inline services: those are checked on
 * their own, so nothing is left to do.
 */
static void check_include(struct checker *ck, const char *target,
			  const struct origin *o, int depth)
{
	char *path = NULL;

	if (depth >= CHECK_MAX_DEPTH)
		return;
	if (target[0] == '/') {
		check_file(ck, target, o, depth + 1);
		return;
	}
	if (ck->svcdir == NULL || inline_service(ck->sc, target) != NULL)
		return;
	if (asprintf(&path, "%s/%s", ck->svcdir, target) < 0)
		return;
	check_file(ck, path, o, depth + 1);
	free(path);
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Next blank-separated word of *p (a [...] control as one word). */
static char *next_word(const char **p, int bracketed)
{
	const char *s = *p, *e;

	while (is_blank(*s))
		s++;
	if (*s == '\0')
		return NULL;
	e = s;
	if (bracketed && *s == '[') {
		while (*e != '\0' && *e != ']')
			e++;
		if (*e == ']')
			e++;
	} else {
		while (*e != '\0' && !is_blank(*e))
			e++;
	}
	*p = e;
	return strndup(s, (size_t)(e - s));
}

/* One logical line (comment and continuations already removed). */
static void check_line(struct checker *ck, const char *line,
		       const struct origin *o, int depth)
{
	const char *p = line;
	char *type = next_word(&p, 0);
	char *control = type != NULL ? next_word(&p, 1) : NULL;
	char *target = control != NULL ? next_word(&p, 0) : NULL;

	if (type == NULL)
		goto out;
	if (strcmp(type, "@include") == 0) {
		if (control != NULL)
			check_include(ck, control, o, depth);
	} else if (target == NULL) {
		/* libpam complains about the line itself */
	} else if (strcmp(control, "include") == 0 ||
		   strcmp(control, "substack") == 0) {
		check_include(ck, target, o, depth);
	} else if (type[0] != '-') {
		check_module(ck, target, o);
	}
out:
	free(type);
	free(control);
	free(target);
}

/*
 * Splits text into logical lines as libpam reads them: '#' starts a
 * comment, a line ending in '\' goes on on the next one.  lines[] (nlines
 * entries) gives the scenario line of each physical line of inline text.
 */
static void check_text(struct checker *ck, const char *text,
		       const int *lines, size_t nlines,
		       const struct origin *from, int depth)
{
	struct pwrap_buf logical = {0};
	struct origin o = *from;
	const char *p = text;
	size_t phys = 0;
	int first = 1;

	while (*p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		const char *hash = memchr(p, '#', len);
		size_t keep = hash != NULL ? (size_t)(hash - p) : len;

		phys++;
		if (first) {
			if (lines != NULL && phys <= nlines)
				o.scen_line = lines[phys - 1];
			o.file_line = (int)phys;
			first = 0;
		}
		while (keep > 0 && is_blank(p[keep - 1]))
			keep--;
		if (hash == NULL && keep > 0 && p[keep - 1] == '\\') {
			pwrap_buf_add(&logical, p, keep - 1);
			pwrap_buf_str(&logical, " ");
		} else {
			pwrap_buf_add(&logical, p, keep);
			if (logical.p != NULL && !logical.failed)
				check_line(ck, logical.p, &o, depth);
			pwrap_buf_free(&logical);
			first = 1;
		}
		p = nl != NULL ? nl + 1 : p + len;
	}
	if (logical.p != NULL && !logical.failed)
		check_line(ck, logical.p, &o, depth);
	pwrap_buf_free(&logical);
}

/* `service-dir system`: the copy is made (and thrown away) as the run
 * makes it, which reports every module it would refuse. */
static int check_system(const struct scenario *sc, const char *moddir,
			const char *sysmoddir)
{
	const char **names = calloc(sc->nsvcs + 1, sizeof(*names));
	struct pwrap_system sys = {
		.src = sc->system, .moddir = moddir ? moddir : "/nonexistent",
		.sysmoddir = sysmoddir, .services = names, .nservices = sc->nsvcs,
		.swaps = sc->swaps, .nswaps = sc->nswaps, .quiet = 1,
		.swap_word = "swap ",
	};
	char *dir = pwrap_mkdtemp("pamtest-check");
	int errors = 1;

	for (size_t i = 0; names != NULL && i < sc->nsvcs; i++)
		names[i] = sc->svcs[i].name;
	if (asprintf((char **)&sys.prog, "%s:%d: service-dir system", sc->path,
		     sc->service_dir_line) < 0)
		sys.prog = NULL;
	sys.dir = dir;
	if (names != NULL && dir != NULL && sys.prog != NULL)
		errors = pwrap_system_copy(&sys) != 0;
	if (dir != NULL)
		pwrap_rmtree(dir);
	free(dir);
	free((char *)sys.prog);
	free(names);
	return errors;
}

int scenario_check_modules(const struct scenario *sc, const char *moddir,
			   const char *sysmoddir)
{
	struct checker ck = {.sc = sc, .moddir = moddir, .sysmoddir = sysmoddir};
	int has_text = 0;

	if (sc->system != NULL)
		return check_system(sc, moddir, sysmoddir);

	for (size_t i = 0; i < sc->nsvcs; i++)
		has_text |= sc->svcs[i].text != NULL;
	/* As the runner does: service-dir, else the inherited variable. */
	if (!has_text)
		ck.svcdir = sc->service_dir != NULL ? sc->service_dir
						    : getenv("PAM_WRAPPER_SERVICE_DIR");

	for (size_t i = 0; i < sc->nsvcs; i++) {
		const struct service *sv = &sc->svcs[i];
		struct origin o = {.service = sv->name, .scen_line = sv->line};
		char *path = NULL;

		if (sv->text != NULL) {
			check_text(&ck, sv->text, sv->lines, sv->nlines, &o, 0);
			continue;
		}
		if (ck.svcdir == NULL ||
		    asprintf(&path, "%s/%s", ck.svcdir, sv->name) < 0)
			continue;
		/* libpam falls back to "other" when the service has no file. */
		if (access(path, F_OK) != 0) {
			free(path);
			if (asprintf(&path, "%s/other", ck.svcdir) < 0)
				continue;
		}
		check_file(&ck, path, &o, 0);
		free(path);
	}
	for (size_t i = 0; i < ck.nseen; i++)
		free(ck.seen[i]);
	free(ck.seen);
	return ck.errors;
}
