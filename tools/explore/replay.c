/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, stage 5: the graph checked on libpam, on the user's own
 * files.  Each path of the replay set runs as one transaction through
 * libpam_wrapper, in this process, with PAM_WRAPPER_SERVICE_DIR the
 * service's directory: the wrapper reads and rewrites the files as it does
 * for any wrapped test, and its module trace (PAM_WRAPPER_TRACE) puts its
 * stand-in in the place of every module.  With our plan set
 * (pwrap_trace_plan.h) no module of the stack is loaded: each call asks us
 * for the outcome the path gives that line.  The lines libpam called, in
 * that order, with those functions, and its result must be the graph's;
 * the model's reading is checked with it, since the copy libpam reads is
 * made from the user's files, never from the model.  A configuration on
 * which pam_start fails must fail there too.  The first difference is
 * reported as an error of ours.
 *
 * While replays run, the variables the wrapper reads are ours and stderr
 * (libpam's and the wrapper's complaints) goes to an unnamed temporary
 * file, whose end is shown with a disagreement; all is restored
 * afterwards.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_buf.h"
#include "pwrap_trace_plan.h"

#include <dlfcn.h>
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_TAIL 1500
#define SEEN 64		/* calls shown in a message */
#define XP_STR2(x) #x
#define XP_STR(x) XP_STR2(x)

static const char *const vars[] = { "PAM_WRAPPER", "PAM_WRAPPER_SERVICE_DIR",
				    "PAM_WRAPPER_TRACE",
				    "PAM_WRAPPER_TRACE_FORMAT" };
#define NVARS (sizeof(vars) / sizeof(vars[0]))

/* A call the path expects. */
struct want {
	int site;
	int pass;
	int code;
};

struct xp_replayer {
	const struct xp_conf *c;
	pam_wrapper_trace_plan_fn *set;
	struct pam_wrapper_trace_plan plan;
	char **where;		/* per site: "path:line", as the trace says */
	bool *loads;		/* per site: its module loads (or is modelled) */
	FILE *log;
	char *saved[NVARS];
	int err_fd;
	/* the transaction being replayed */
	struct want *want;
	size_t n, ncalls;
	int sm;			/* the function each call must be */
	bool wrong;		/* a call that was not the one expected */
	char *seen[SEEN];	/* the first calls: "where/pass" */
	char *unfit;		/* where the stand-in did not fit */
};

/* The site of a where the trace gives ("PATH:LINE" of the user's file),
 * or -1. */
static int site_of(const struct xp_replayer *rp, const char *where)
{
	const char *colon = strrchr(where, ':');
	unsigned long line;
	char *end;

	if (colon == NULL) {
		return -1;
	}
	line = strtoul(colon + 1, &end, 10);
	for (size_t f = 0; *end == '\0' && f < rp->c->nfiles; f++) {
		const char *path = rp->c->files[f].path;

		if (strlen(path) == (size_t)(colon - where) &&
		    memcmp(path, where, (size_t)(colon - where)) == 0) {
			return xp_site_at(rp->c, (int)f, (unsigned)line);
		}
	}
	return -1;
}

static int plan_call(void *ctx, const char *where, const char *module, int sm,
		     int flags)
{
	struct xp_replayer *rp = ctx;
	size_t k = rp->ncalls++;
	int pass = (flags & PAM_UPDATE_AUTHTOK) != 0;
	/* the expected line's, else looked for (for the message) */
	int site = k < rp->n && strcmp(rp->where[rp->want[k].site], where) == 0
			   ? rp->want[k].site
			   : site_of(rp, where);

	(void)module;
	if (k < SEEN) {
		const struct xp_site *s = site >= 0 ? &rp->c->sites[site] : NULL;

		if (s == NULL ||
		    asprintf(&rp->seen[k], "%s:%u%s", rp->c->files[s->file].show,
			     s->line, pass ? " (update)" : "") < 0) {
			rp->seen[k] = strdup(where);
		}
	}
	if (k < rp->n && site == rp->want[k].site && pass == rp->want[k].pass &&
	    sm == rp->sm) {
		return rp->want[k].code;
	}
	rp->wrong = true;
	return PAM_SYSTEM_ERR;
}

static bool plan_loads(void *ctx, const char *where, const char *module)
{
	const struct xp_replayer *rp = ctx;
	int site = site_of(rp, where);

	(void)module;
	/* a line the model does not have: libpam says */
	return site < 0 || rp->loads[site];
}

static void plan_unfit(void *ctx, const char *where)
{
	struct xp_replayer *rp = ctx;

	if (rp->unfit == NULL) {
		rp->unfit = strdup(where);
	}
}

struct xp_replayer *xp_replay_begin(const struct xp_conf *c, char **err)
{
	struct xp_replayer *rp = calloc(1, sizeof(*rp));

	*err = NULL;
	if (rp == NULL || (rp->where = calloc(c->nsites + 1,
					      sizeof(char *))) == NULL) {
		goto oom;
	}
	rp->c = c;
	rp->err_fd = -1;
	if ((rp->loads = calloc(c->nsites + 1, sizeof(bool))) == NULL) {
		goto oom;
	}
	for (size_t i = 0; i < c->nsites; i++) {
		rp->loads[i] = true;
	}
	for (int t = 0; t < XP_NTYPES; t++) {
		for (int k = 0; k < 2; k++) {
			const struct xp_stack *s = k ? &c->other[t] : &c->conf[t];

			for (size_t i = 0; i < s->n; i++) {
				if (s->v[i].kind == XP_CALL) {
					rp->loads[s->v[i].site] =
						!s->v[i].absent || s->v[i].modelled;
				}
			}
		}
	}
	for (size_t i = 0; i < c->nsites; i++) {
		if (asprintf(&rp->where[i], "%s:%u",
			     c->files[c->sites[i].file].path,
			     c->sites[i].line) < 0) {
			rp->where[i] = NULL;
			goto oom;
		}
	}
	*(void **)&rp->set = dlsym(RTLD_DEFAULT, PAM_WRAPPER_TRACE_PLAN);
	if (rp->set == NULL) {
		*err = strdup("cannot replay: libpam_wrapper.so is not loaded");
	} else if ((rp->log = tmpfile()) == NULL) {
		*err = strdup("cannot replay: no temporary file for its log");
	}
	if (*err != NULL) {
		xp_replay_end(rp);
		return NULL;
	}
	rp->plan = (struct pam_wrapper_trace_plan){ rp, plan_call, plan_loads,
						    plan_unfit };
	return rp;
oom:
	xp_replay_end(rp);
	*err = strdup("out of memory");
	return NULL;
}

void xp_replay_end(struct xp_replayer *rp)
{
	if (rp == NULL) {
		return;
	}
	for (size_t i = 0; rp->where != NULL && i < rp->c->nsites; i++) {
		free(rp->where[i]);
	}
	for (size_t i = 0; i < SEEN; i++) {
		free(rp->seen[i]);
	}
	free(rp->where);
	free(rp->loads);
	free(rp->want);
	free(rp->unfit);
	if (rp->log != NULL) {
		fclose(rp->log);
	}
	free(rp);
}

/* Our variables and plan in, stderr to the log: 0, or -1. */
static int enter(struct xp_replayer *rp)
{
	const char *mine[NVARS] = { "1", rp->c->dir, "-", "text" };

	/* (the trace on, for its stand-in; with the plan it writes no
	 * record) */

	for (size_t i = 0; i < NVARS; i++) {
		const char *v = getenv(vars[i]);

		rp->saved[i] = v != NULL ? strdup(v) : NULL;
		if (setenv(vars[i], mine[i], 1) != 0) {
			return -1;
		}
	}
	fflush(stderr);
	rp->err_fd = dup(STDERR_FILENO);
	if (rp->err_fd < 0 || dup2(fileno(rp->log), STDERR_FILENO) < 0 ||
	    rp->set(&rp->plan) != 0) {
		return -1;
	}
	return 0;
}

static void leave(struct xp_replayer *rp)
{
	rp->set(NULL);
	fflush(stderr);
	if (rp->err_fd >= 0) {
		dup2(rp->err_fd, STDERR_FILENO);
		close(rp->err_fd);
		rp->err_fd = -1;
	}
	for (size_t i = 0; i < NVARS; i++) {
		if (rp->saved[i] != NULL) {
			setenv(vars[i], rp->saved[i], 1);
		} else {
			unsetenv(vars[i]);
		}
		free(rp->saved[i]);
		rp->saved[i] = NULL;
	}
}

/* The end of the log (malloc'd, "" when empty). */
static char *log_tail(const struct xp_replayer *rp)
{
	int fd = fileno(rp->log);
	off_t end = lseek(fd, 0, SEEK_END);
	off_t from = end > LOG_TAIL ? end - LOG_TAIL : 0;
	char *b = calloc(LOG_TAIL + 1, 1);
	ssize_t n;

	if (b != NULL && end > 0 &&
	    (n = pread(fd, b, (size_t)(end - from), from)) > 0) {
		b[n] = '\0';
	}
	return b;
}

static int no_conv(int n, const struct pam_message **m, struct pam_response **r,
		   void *d)
{
	(void)n;
	(void)m;
	(void)r;
	(void)d;
	return PAM_CONV_ERR;
}

/* One transaction of type t (pam_start only when t < 0): its result, or
 * with *start_failed what pam_start returned. */
static int transaction(const struct xp_replayer *rp, int t, bool *start_failed)
{
	struct pam_conv conv = { no_conv, NULL };
	pam_handle_t *h = NULL;
	/* the name as given: libpam (and the wrapper) read it their way */
	int rc = pam_start(rp->c->asked, "pwrap-explore", &conv, &h);

	*start_failed = rc != PAM_SUCCESS;
	if (rc != PAM_SUCCESS) {
		return rc;
	}
	switch (t) {
	case XP_AUTH:
		rc = pam_authenticate(h, 0);
		break;
	case XP_ACCOUNT:
		rc = pam_acct_mgmt(h, 0);
		break;
	case XP_PASSWORD:
		rc = pam_chauthtok(h, 0);
		break;
	case XP_SESSION:
		rc = pam_open_session(h, 0);
		break;
	}
	pam_end(h, rc);
	return rc;
}

/* "where (pass)" of the expected calls, or of those seen (malloc'd). */
static char *calls_text(const struct xp_replayer *rp, bool seen)
{
	struct pwrap_buf b = { 0 };
	size_t n = seen ? rp->ncalls : rp->n;

	pwrap_buf_str(&b, "");
	for (size_t i = 0; i < n && i < SEEN; i++) {
		const struct want *w = &rp->want[i];
		const struct xp_site *s = &rp->c->sites[w->site];

		if (seen) {
			pwrap_buf_fmt(&b, "%s%s", i ? ", " : "", rp->seen[i]);
		} else {
			pwrap_buf_fmt(&b, "%s%s:%u%s", i ? ", " : "",
				      rp->c->files[s->file].show, s->line,
				      w->pass ? " (update)" : "");
		}
	}
	if (n > SEEN) {
		pwrap_buf_fmt(&b, ", ... (%zu calls)", n);
	}
	return pwrap_buf_take(&b);
}

/* One path; NULL when libpam agreed, else what differed (malloc'd). */
static char *replay_path(struct xp_replayer *rp, const struct xp_graph *g,
			 const struct xp_path *p)
{
	char *msg = NULL, *want, *got, *path, *log;
	bool start_failed;
	int rc;

	rp->n = rp->ncalls = 0;
	rp->sm = (int)pwrap_group_sm((enum pwrap_group)g->type);
	rp->wrong = false;
	for (size_t i = 0; i < SEEN; i++) {
		free(rp->seen[i]);
		rp->seen[i] = NULL;
	}
	free(rp->want);
	rp->want = calloc(p->n + 1, sizeof(*rp->want));
	if (rp->want == NULL) {
		return strdup("out of memory");
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct xp_pos *at = &g->seq[p->c[i].pos];

		if (at->l->kind == XP_CALL) {
			rp->want[rp->n++] = (struct want){ at->l->site, at->pass,
							   p->c[i].code };
		}
	}
	rc = transaction(rp, g->type, &start_failed);
	if (rp->unfit != NULL ||
	    (!start_failed && !rp->wrong && rp->ncalls == rp->n &&
	     rc == p->result)) {
		return NULL;
	}
	want = calls_text(rp, false);
	got = calls_text(rp, true);
	path = xp_path_text(g, p);
	log = log_tail(rp);
	if (asprintf(&msg, "libpam disagrees with the graph (an error of "
		     "pamtest explore; please report it): path %s: expected "
		     "calls [%s] and %s; libpam made [%s] and %s %s%s%s",
		     path ? path : "?", want ? want : "?",
		     xp_code_name(p->result), got ? got : "?",
		     start_failed ? "pam_start returned" : "returned",
		     xp_code_name(rc), log && *log ? "; its log ended with:\n"
						   : "",
		     log ? log : "") < 0) {
		msg = NULL;
	}
	free(want);
	free(got);
	free(path);
	free(log);
	return msg;
}

/* Why r is not replayed (static), or NULL. */
static const char *too_long(const struct xp_report *r)
{
	return r->g.conf->nsites > XP_REPLAY_MAX
		       ? "the service has more than " XP_STR(XP_REPLAY_MAX)
			 " lines: libpam's pam_start alone takes time that "
			 "grows with the square of their number"
		       : NULL;
}

void xp_replay_run(struct xp_replayer *rp, struct xp_report *r,
		   bool (*stop)(void))
{
	bool start_failed;

	if (too_long(r) != NULL) {
		r->not_replayed = strdup(too_long(r));
		return;
	}

	if (rp->unfit == NULL && enter(rp) != 0) {
		r->disagree = strdup("cannot replay: cannot set up the "
				     "environment");
		leave(rp);
		return;
	}
	if (rp->unfit == NULL && r->refused != NULL) {
		/* libpam's pam_start must fail as well */
		(void)transaction(rp, -1, &start_failed);
		r->replays = 1;
		if (!start_failed && asprintf(&r->disagree, "libpam disagrees "
					      "(an error of pamtest explore; "
					      "please report it): pam_start "
					      "succeeds although %s",
					      r->refused) < 0) {
			r->disagree = NULL;
		}
	}
	for (size_t i = 0; rp->unfit == NULL && r->refused == NULL &&
			   i < r->g.npaths && r->disagree == NULL; i++) {
		if (stop != NULL && stop()) {
			break;
		}
		r->disagree = replay_path(rp, &r->g, &r->g.paths[i]);
		r->replays++;
	}
	if (rp->err_fd >= 0) {
		leave(rp);
	}
	r->replayed = rp->unfit == NULL;
	if (rp->unfit != NULL) {
		int site = site_of(rp, rp->unfit);
		const struct xp_site *st = site >= 0 ? &rp->c->sites[site] : NULL;
		char *where = NULL;

		if (st != NULL && asprintf(&where, "%s:%u",
					   rp->c->files[st->file].show,
					   st->line) >= 0) {
			free(rp->unfit);
			rp->unfit = where;
		}
		free(r->disagree);
		r->disagree = NULL;
		r->replays = 0;
		if (asprintf(&r->not_replayed, "a line is too long for "
			     "libpam's 1024-byte line buffer once libpam_wrapper "
			     "rewrites it (the stand-in or the include target): "
			     "%s", rp->unfit) < 0) {
			r->not_replayed = NULL;
		}
	}
}
