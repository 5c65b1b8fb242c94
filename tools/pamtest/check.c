/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest -c, second half: after the syntax, check that every module the
 * scenario's service files name exists, so that a typo in a module name is
 * reported with its scenario line before anything runs (at run time it
 * would only show as PAM_ABORT or PAM_SYSTEM_ERR from some operation).
 *
 * Each service is read as the linked libpam reads it (src/pamconf's walk,
 * OpenPAM's rules on OpenPAM): from the scenario's own lines (variables
 * expanded as the runner does; ${DIR} and ${PASSDB} exist only then), else
 * from service-dir (or the inherited PAM_WRAPPER_SERVICE_DIR, as the runner
 * uses them), with "other" and what they include.  Every module line of
 * each file read is checked, each file once: a bare name where the wrapper
 * looks at run time (the system module directory, then ours).  "-type"
 * lines are skipped: libpam ignores their module when it is missing.  A
 * missing service or include file is not reported here: a scenario may
 * test that failure on purpose.  A `service-dir system` scenario is
 * checked by making its copy as the run makes it (pwrap_system.c).
 */
#define _GNU_SOURCE
#include "pamconf.h"
#include "pwrap_tool.h"
#include "scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scenario's own services, as a directory of that name. */
#define INLINE "\001inline"

struct checker {
	const struct scenario *sc;
	struct pamconf_rules r;
	const char *moddir;	/* ours; NULL when unknown */
	const char *sysmoddir;	/* libpam's; NULL when unknown */
	char **seen;		/* files already checked */
	size_t nseen;
	int errors;
};

/* The scenario's own service a path of INLINE names, or NULL. */
static const struct service *inline_service(const struct scenario *sc,
					    const char *path)
{
	size_t n = strlen(INLINE);

	if (strncmp(path, INLINE "/", n + 1) != 0) {
		return NULL;
	}
	for (size_t i = 0; i < sc->nsvcs; i++) {
		if (sc->svcs[i].text != NULL &&
		    strcmp(sc->svcs[i].name, path + n + 1) == 0) {
			return &sc->svcs[i];
		}
	}
	return NULL;
}

static enum pamconf_target kind(void *ctx, const char *path, int *why)
{
	struct checker *ck = ctx;

	if (strncmp(path, INLINE "/", strlen(INLINE) + 1) == 0) {
		*why = ENOENT;
		return inline_service(ck->sc, path) != NULL ? PAMCONF_TARGET_FILE
							    : PAMCONF_TARGET_NONE;
	}
	return pamconf_target_kind(&ck->r, AT_FDCWD, path, why);
}

static int read_text(void *ctx, const char *path, char **text, size_t *len)
{
	struct checker *ck = ctx;
	const struct service *sv = inline_service(ck->sc, path);

	if (sv == NULL) {
		return pamconf_read_file(AT_FDCWD, path, 16u << 20, text, len);
	}
	*text = scenario_expand(ck->sc, sv->text, NULL, NULL, true);
	*len = *text != NULL ? strlen(*text) : 0;
	return *text != NULL ? 0 : -1;
}

static void report(struct checker *ck, const struct pamconf_sfile *f,
		   const struct pamconf_line *l, const char *service,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void report(struct checker *ck, const struct pamconf_sfile *f,
		   const struct pamconf_line *l, const char *service,
		   const char *fmt, ...)
{
	const struct service *sv = inline_service(ck->sc, f->path);
	const struct service *own = NULL;
	va_list ap;

	for (size_t i = 0; i < ck->sc->nsvcs && own == NULL; i++) {
		if (strcmp(ck->sc->svcs[i].name, service) == 0) {
			own = &ck->sc->svcs[i];
		}
	}
	fprintf(stderr, "%s:%d: service \"%s\"", ck->sc->path,
		sv != NULL && l->line <= sv->nlines ? sv->lines[l->line - 1]
		: own != NULL			     ? own->line
						     : 0,
		service);
	if (sv == NULL) {
		fprintf(stderr, ", %s:%u", f->path, l->line);
	}
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ck->errors++;
}

/* The module lines of file f, read for service. */
static void check_file(struct checker *ck, const struct pamconf_sfile *f,
		       const char *service)
{
	const char *dirs[3] = { ck->sysmoddir != NULL ? ck->sysmoddir
						      : "/nonexistent",
				ck->moddir, NULL };
	char path[4096];
	int why;

	for (size_t i = 0; i < f->f.n; i++) {
		const struct pamconf_line *l = &f->f.v[i];
		const char *mod = l->target >= 0 ? l->tok[l->target].text : "";

		if (l->kind != PAMCONF_MODULE || l->group < 0 || l->silent) {
			continue;
		}
		if (strstr(mod, "${MODULE_DIR}") != NULL) {
			report(ck, f, l, service, "cannot check module %s: our "
			       "module directory is unknown (use --module-dir)",
			       mod);
		}
		if (strstr(mod, "${") != NULL ||
		    pamconf_module_find(&ck->r, mod, dirs, path, sizeof(path),
					&why) >= 0) {
			continue;	/* ${DIR}, ${PASSDB}: only at run time */
		}
		if (mod[0] == '/') {
			report(ck, f, l, service, "module %s not found", mod);
		} else if (strchr(mod, '/') != NULL) {
			report(ck, f, l, service, "module %s not found in %s",
			       mod, ck->sysmoddir != NULL ? ck->sysmoddir
				    : "(the system module directory: unknown)");
		} else {
			report(ck, f, l, service, "module %s not found "
			       "(neither in %s nor in %s)", mod,
			       ck->sysmoddir != NULL ? ck->sysmoddir
						     : "(unknown)",
			       ck->moddir != NULL ? ck->moddir
				    : "(our module directory: unknown)");
		}
	}
}

/* Checks the files the walk of service read that were not checked yet. */
static void check_service(struct checker *ck, const char *dir,
			  const char *service)
{
	struct pamconf_walk_ops ops = { .ctx = ck, .kind = kind,
					.read = read_text };
	struct pamconf_service s;

	(void)pamconf_service_read(&ck->r, dir, service, &ops, &s);
	for (size_t i = 0; i < s.nfiles; i++) {
		const struct pamconf_sfile *f = &s.files[i];
		char **v;
		size_t k;

		for (k = 0; k < ck->nseen && strcmp(ck->seen[k], f->path); k++) {
		}
		if (!f->loaded || k < ck->nseen ||
		    (v = reallocarray(ck->seen, ck->nseen + 1,
				      sizeof(*v))) == NULL) {
			continue;
		}
		ck->seen = v;
		if ((v[ck->nseen] = strdup(f->path)) == NULL) {
			continue;
		}
		ck->nseen++;
		check_file(ck, f, (int)i == s.other_file ? "other" : service);
	}
	pamconf_service_free(&s);
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
	struct pwrap_tmp *tmp = pwrap_tmp_make("pamtest-check");
	const char *dir = tmp != NULL ? tmp->path : NULL;
	int errors = 1;

	for (size_t i = 0; names != NULL && i < sc->nsvcs; i++) {
		names[i] = sc->svcs[i].name;
	}
	if (asprintf((char **)&sys.prog, "%s:%d: service-dir system", sc->path,
		     sc->service_dir_line) < 0) {
		sys.prog = NULL;
	}
	sys.dir = dir;
	if (names != NULL && dir != NULL && sys.prog != NULL) {
		errors = pwrap_system_copy(&sys) != 0;
	}
	(void)pwrap_tmp_remove(tmp);
	free((char *)sys.prog);
	free(names);
	return errors;
}

int scenario_check_modules(const struct scenario *sc, const char *moddir,
			   const char *sysmoddir)
{
	struct checker ck = { .sc = sc, .moddir = moddir,
			      .sysmoddir = sysmoddir };
	const char *dir = INLINE;

	if (sc->system != NULL) {
		return check_system(sc, moddir, sysmoddir);
	}

	pamconf_rules_linked(&ck.r);
	for (size_t i = 0; i < sc->nsvcs; i++) {
		if (sc->svcs[i].text == NULL) {
			/* as the runner does: service-dir, else the
			 * inherited variable */
			dir = sc->service_dir != NULL
				      ? sc->service_dir
				      : getenv("PAM_WRAPPER_SERVICE_DIR");
		}
	}
	for (size_t i = 0; dir != NULL && i < sc->nsvcs; i++) {
		check_service(&ck, dir, sc->svcs[i].name);
	}
	for (size_t i = 0; i < ck.nseen; i++) {
		free(ck.seen[i]);
	}
	free(ck.seen);
	return ck.errors;
}
