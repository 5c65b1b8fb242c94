/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module trace, at rewrite time: what a module line of a traced copy
 * becomes, and which lines libpam reads.
 *
 * A module line "TYPE CONTROL MODULE ARGS" becomes
 * "TYPE CONTROL <conf>/.t/<name of MODULE> pwrap_trace=N ARGS": the link
 * points at the stand-in pam_wrapper_trace.so and carries the module's own
 * file name, because libpam names a module by its file (the prefix of its
 * log lines); N is the line's entry in a table that says where the line is
 * (the user's FILE:LINE), its control, the module as written and the file
 * it resolves to, as libpam would resolve it.  Entries are never freed: a
 * transaction started before a file changed still runs its old lines.
 * Identical lines share an entry, so rewriting again costs no memory.
 *
 * Lines stay as written (untraced, and exactly as without the trace) when
 * libpam would not load their module anyway: a bad type (libpam fails the
 * line without loading), a module name with "$ISA" (Linux-PAM's own
 * substitution) or whose file name without its suffix is empty or "?"
 * (Linux-PAM refuses pam_start), and on OpenPAM a module it would not find
 * or accept (OpenPAM then refuses pam_start itself).
 *
 * A line's Linux-PAM control is turned into the action for each return
 * code here, once, as pam.conf(5) defines them (the record says what the
 * control made of a code; libpam still decides).
 *
 * For each rewritten file the current entries of its lines are kept, so
 * that the walk (pwrap_walk.c) can tell, file by file as libpam reads
 * them, which modules libpam loads at pam_start: the trace loads the same
 * (pwrap_trace.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_trace.h"
#include "pwrap_trace_plan.h"

#define STANDIN "pam_wrapper_trace.so"

/* ---- the table of traced lines ------------------------------------------ */

static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pwrap_trace_line **lines;	/* [id - 1] */
static size_t n_lines;

/* The current lines of each rewritten file (e.name: its path in conf/). */
struct tfile {
	struct pwrap_entry e;
	const struct pwrap_trace_line **v;
	size_t n;
};
static struct pwrap_entry *files;

static void line_free(struct pwrap_trace_line *l)
{
	if (l != NULL) {
		free(l->where);
		free(l->control);
		free(l->module);
		free(l->path);
		free(l);
	}
}

static bool line_same(const struct pwrap_trace_line *a,
		      const struct pwrap_trace_line *b)
{
	return strcmp(a->where, b->where) == 0 &&
	       strcmp(a->control, b->control) == 0 &&
	       strcmp(a->module, b->module) == 0 &&
	       strcmp(a->path, b->path) == 0 && a->stack == b->stack &&
	       a->silent == b->silent;
}

/* Adds l (taking it) to the table and to gpath's lines; returns the entry
 * now in the table (an identical older one, l freed), or NULL. */
static const struct pwrap_trace_line *line_add(const char *gpath,
					       struct pwrap_trace_line *l)
{
	const struct pwrap_trace_line *got = NULL;
	struct tfile *f;
	size_t i;

	pthread_mutex_lock(&lines_lock);
	for (i = 0; i < n_lines && got == NULL; i++) {
		if (line_same(lines[i], l)) {
			got = lines[i];
		}
	}
	if (got == NULL) {
		struct pwrap_trace_line **v =
			realloc(lines, (n_lines + 1) * sizeof(*v));

		if (v == NULL) {
			goto out;
		}
		lines = v;
		l->id = (unsigned)n_lines + 1;
		lines[n_lines++] = l;
		got = l;
		l = NULL;
	}
	f = (struct tfile *)pwrap_list_find(files, gpath);
	if (f == NULL) {
		f = calloc(1, sizeof(*f));
		if (f == NULL || (f->e.name = strdup(gpath)) == NULL) {
			free(f);
			goto out;
		}
		pwrap_list_push(&files, &f->e);
	}
	for (i = 0; i < f->n && f->v[i] != got; i++) {
	}
	if (i == f->n) {
		const struct pwrap_trace_line **v =
			realloc(f->v, (f->n + 1) * sizeof(*v));

		if (v != NULL) {
			f->v = v;
			f->v[f->n++] = got;
		}
	}
out:
	pthread_mutex_unlock(&lines_lock);
	line_free(l);
	return got;
}

const struct pwrap_trace_line *pwrap_trace_line_get(unsigned id)
{
	const struct pwrap_trace_line *l = NULL;

	pthread_mutex_lock(&lines_lock);
	if (id >= 1 && id <= n_lines) {
		l = lines[id - 1];
	}
	pthread_mutex_unlock(&lines_lock);
	return l;
}

void pwrap_trace_forget_file(const char *gpath)
{
	struct tfile *f;

	pthread_mutex_lock(&lines_lock);
	f = (struct tfile *)pwrap_list_find(files, gpath);
	if (f != NULL) {
		f->n = 0;
	}
	pthread_mutex_unlock(&lines_lock);
}

void pwrap_trace_forget_all(void)
{
	struct tfile *f;

	while ((f = (struct tfile *)pwrap_list_take(&files, NULL)) != NULL) {
		free(f->v);
		free(f->e.name);
		free(f);
	}
	for (size_t i = 0; i < n_lines; i++) {
		line_free(lines[i]);
	}
	free(lines);
	lines = NULL;
	n_lines = 0;
}

__attribute__((destructor)) static void lines_fini(void)
{
	pwrap_trace_forget_all();
}

/* ---- which lines libpam reads --------------------------------------------- */

/* This thread's transaction: traced (the walk rewrites for the trace),
 * collecting (a pam_start: the lines read are loaded afterwards).  A file
 * walked for every stack is the service's or, after it, "other" (includes
 * are walked for one stack): n_first counts the lines of the first. */
static _Thread_local bool active, collect;
static _Thread_local const struct pwrap_trace_line **walked;
static _Thread_local size_t n_walked, n_first;
static _Thread_local unsigned roots;

bool pwrap_trace_active(void)
{
	return active;
}

int pwrap_trace_mode(void)
{
	return !active ? 0 : pwrap_trace_plan() != NULL ? 2 : 1;
}

int pwrap_trace_unfit(const char *src, unsigned line)
{
	const struct pam_wrapper_trace_plan *p = pwrap_trace_plan();
	char where[sizeof(pwrap_path) + 16];

	if (p == NULL || !active) {
		return 0;
	}
	snprintf(where, sizeof(where), "%s:%u", src, line);
	if (p->unfit != NULL) {
		p->unfit(p->ctx, where);
	}
	return 1;
}

void pwrap_trace_set_active(bool on, bool collect_walked)
{
	active = on;
	collect = on && collect_walked;
	if (!collect) {
		pwrap_trace_walk_begin();
	}
}

void pwrap_trace_walk_begin(void)
{
	free(walked);
	walked = NULL;
	n_walked = n_first = 0;
	roots = 0;
}

#if defined(PWRAP_OPENPAM)
/* Whether the service's own lines (the first n_first) include one of
 * stack: OpenPAM then does not read "other" for it. */
static bool first_has(enum pamconf_stack stack)
{
	for (size_t j = 0; j < n_first; j++) {
		if (walked[j]->stack == stack) {
			return true;
		}
	}
	return false;
}
#endif

void pwrap_trace_walked(const char *gpath, enum pamconf_stack asked)
{
	const struct tfile *f;

	if (!collect) {
		return;
	}
	if (asked == PAMCONF_STACK_ANY && ++roots == 2) {
		n_first = n_walked;
	}
	pthread_mutex_lock(&lines_lock);
	f = (const struct tfile *)pwrap_list_find(files, gpath);
	for (size_t i = 0; f != NULL && i < f->n; i++) {
		const struct pwrap_trace_line **v;
		size_t j;

		if (!pamconf_stack_reads(f->v[i]->stack, asked)) {
			continue;
		}
#if defined(PWRAP_OPENPAM)
		/* "other" only for the facilities the service lacks
		 * (Linux-PAM reads all of it) */
		if (roots >= 2 && first_has(f->v[i]->stack)) {
			continue;
		}
#endif
		for (j = 0; j < n_walked && walked[j] != f->v[i]; j++) {
		}
		if (j < n_walked) {
			continue;
		}
		v = realloc(walked, (n_walked + 1) * sizeof(*v));
		if (v == NULL) {
			break;
		}
		walked = v;
		walked[n_walked++] = f->v[i];
	}
	pthread_mutex_unlock(&lines_lock);
}

const struct pwrap_trace_line **pwrap_trace_walked_lines(size_t *n)
{
	const struct pwrap_trace_line **v = walked;

	*n = n_walked;
	walked = NULL;
	pwrap_trace_walk_begin();
	return v;
}

/* ---- Linux-PAM's controls ---------------------------------------------- */

/* The actions libpam takes from CONTROL (pwrap_control.c reads it), in the
 * trace's signed chars: a jump past 99 lines is a jump past the stack
 * either way, so it is kept as 99. */
void pwrap_trace_actions(const char *control,
			 signed char actions[PWRAP_TRACE_CODES])
{
	int act[PWRAP_CONTROL_CODES];

	if (!pwrap_control_actions(control, act,
				   pwrap_rules()->version >= 106)) {
		/* include and substack lines are not module calls */
		memset(actions, PWRAP_ACT_BAD, PWRAP_TRACE_CODES);
		return;
	}
	for (int i = 0; i < PWRAP_TRACE_CODES; i++) {
		actions[i] = (signed char)(act[i] > 99 ||
					   act[i] < PWRAP_ACT_RESET ? 99
								    : act[i]);
	}
}

/* ---- what a module line becomes ------------------------------------------ */

static char *standin;
static pthread_once_t standin_once = PTHREAD_ONCE_INIT;

static void standin_find(void)
{
	const char *dir = pwrap_moddir();

	standin = dir != NULL ? pwrap_join(dir, STANDIN) : NULL;
	if (standin != NULL && access(standin, R_OK) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "PAM_WRAPPER_TRACE: the trace's "
			  "stand-in module %s is missing (%s); module calls "
			  "are not recorded", standin, strerror(errno));
		free(standin);
		standin = NULL;
	}
}

const char *pwrap_trace_standin(void)
{
	pthread_once(&standin_once, standin_find);
	return standin;
}

__attribute__((destructor)) static void standin_fini(void)
{
	free(standin);
	standin = NULL;
}

/* The file libpam loads for module (malloc'd), or NULL when the line is
 * left as written (see the top). */
static char *resolve(const char *conf, const struct pamconf_module_line *ml)
{
	/* a "-type" line: libpam says nothing when its module is missing */
	char *ours = pwrap_module_path(conf, ml->module, ml->type[0] == '-',
				       ml->src, ml->line);
	const char *dirs[2] = { pwrap_sysmoddir(), NULL };
	const struct pamconf_rules *r = pwrap_rules();
	pwrap_path p;
	int why;

	if (ours != NULL) {
		return ours;
	}
	/* Linux-PAM refuses pam_start when the module's name (its file name
	 * up to the last '.') is empty or "?"; "$ISA" it expands */
	if (r->impl != PAMCONF_OPENPAM &&
	    (pamconf_name_refused(ml->module) ||
	     strstr(ml->module, "$ISA") != NULL)) {
		return NULL;
	}
	if (dirs[0] != NULL &&
	    pamconf_module_find(r, ml->module, dirs, p, sizeof(p), &why) >= 0) {
		return strdup(p);
	}
	if (r->impl == PAMCONF_OPENPAM || dirs[0] == NULL) {
		return NULL;
	}
	/* Linux-PAM tries <module directory>/NAME (a relative path too)
	 * even when nothing is there: the trace records the failed load */
	return ml->module[0] == '/' ? strdup(ml->module)
				    : pwrap_join(dirs[0], ml->module);
}

/* <conf>/.t/<file name of module> -> the stand-in, or the stand-in itself
 * when the name would not do as a file name.  malloc'd, or NULL. */
static char *standin_link(const char *conf, const char *module)
{
	const char *base = strrchr(module, '/');
	pwrap_path dir, link;
	char now[sizeof(pwrap_path)];
	ssize_t n;

	base = base != NULL ? base + 1 : module;
	/* with pamtest explore's plan nobody reads libpam's log lines: one
	 * file, which libpam loads once per transaction */
	if (pwrap_trace_plan() != NULL || base[0] == '\0' || base[0] == '.' ||
	    strlen(base) > 200 ||
	    strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") != strlen(base) ||
	    !pwrap_pjoin(dir, conf, ".t") || !pwrap_pjoin(link, dir, base)) {
		return strdup(pwrap_trace_standin());
	}
	n = readlink(link, now, sizeof(now) - 1);
	if (n < 0 || (size_t)n != strlen(pwrap_trace_standin()) ||
	    memcmp(now, pwrap_trace_standin(), (size_t)n) != 0) {
		(void)mkdir(dir, 0755);
		(void)unlink(link);
		if (symlink(pwrap_trace_standin(), link) != 0) {
			PWRAP_LOG(PWRAP_LOG_WARN, "cannot link %s to %s: %s",
				  link, pwrap_trace_standin(), strerror(errno));
			return strdup(pwrap_trace_standin());
		}
	}
	return strdup(link);
}

/* A malloc'd copy of what b holds, or NULL (b is freed). */
static char *tbuf_take(struct pwrap_buf *b)
{
	if (b->failed || b->p == NULL) {
		free(b->p);
		return NULL;
	}
	return b->p;
}

char *pwrap_trace_line(const char *conf, const char *gpath,
		       const struct pamconf_module_line *ml)
{
	struct pwrap_buf where = { 0 }, control = { 0 }, rep = { 0 };
	struct pwrap_trace_line *l = NULL;
	const struct pwrap_trace_line *got;
	char *link = NULL;

	if (ml->stack < PAMCONF_STACK_AUTH || ml->stack > PAMCONF_STACK_SESSION ||
	    pwrap_trace_standin() == NULL) {
		return NULL;
	}
	pwrap_buf_fmt(&where, "%s:%u", ml->src, ml->line);
	pwrap_buf_fmt(&control, "%s%s%s", ml->bracket ? "[" : "", ml->control,
		       ml->bracket ? "]" : "");
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		free(where.p);
		free(control.p);
		return NULL;
	}
	l->where = tbuf_take(&where);
	l->control = tbuf_take(&control);
	l->module = strdup(ml->module);
	l->path = resolve(conf, ml);
	if (l->path == NULL && pwrap_trace_plan() != NULL &&
	    (pwrap_rules()->impl == PAMCONF_OPENPAM ||
	     !pamconf_name_refused(ml->module))) {
		/* with a plan nothing is loaded: the stand-in takes the
		 * place of a module libpam would not find too (but not of a
		 * name libpam refuses before it looks) */
		l->path = strdup(ml->module);
	}
	if (l->where == NULL || l->control == NULL || l->module == NULL ||
	    l->path == NULL) {
		line_free(l);
		return NULL;
	}
	l->stack = ml->stack;
	l->silent = ml->type[0] == '-';
#if !defined(PWRAP_OPENPAM)
	pwrap_trace_actions(ml->control, l->actions);
#endif
	got = line_add(gpath, l);	/* takes l */
	if (got == NULL || (link = standin_link(conf, ml->module)) == NULL) {
		free(link);
		return NULL;
	}
	pwrap_buf_fmt(&rep, "%s pwrap_trace=%u", link, got->id);
	free(link);
	return tbuf_take(&rep);
}
