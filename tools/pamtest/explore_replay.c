/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: the graph checked against the real PAM library.  A
 * private service directory gets a copy of every file the service reads in
 * which each module is our stand-in (explore_gen_*.c); then each path of
 * the replay set (every edge of the graph at least once) runs as one
 * transaction through libpam_wrapper, in this process: the stand-in gets
 * the path's calls as its plan, pam_start() and the group's function run,
 * and the calls libpam made, their order and the result must be the
 * graph's.  The first difference is reported as an error of ours.
 *
 * While replays run, PAM_WRAPPER and PAM_WRAPPER_SERVICE_DIR point at the
 * copy and stderr (libpam's complaints about the modules that cannot be
 * loaded, bad jumps...) goes to a file in the directory, shown with a
 * disagreement; all three are restored afterwards.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "explore_plan.h"
#include "explore_read.h"
#include "pwrap_tool.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_TAIL 1500

struct saved_env {
	char *wrapper, *dir;
	int err_fd;
};

static int no_conv(int n, const struct pam_message **m, struct pam_response **r,
		   void *d)
{
	(void)n;
	(void)m;
	(void)r;
	(void)d;
	return PAM_CONV_ERR;
}

static char *dup_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL ? strdup(v) : NULL;
}

static void put_env(const char *name, const char *value)
{
	if (value != NULL)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static int enter(struct xp_replayer *rp, struct saved_env *s)
{
	char *log = NULL;
	int fd;

	s->wrapper = dup_env("PAM_WRAPPER");
	s->dir = dup_env("PAM_WRAPPER_SERVICE_DIR");
	s->err_fd = -1;
	if (setenv("PAM_WRAPPER", "1", 1) != 0 ||
	    setenv("PAM_WRAPPER_SERVICE_DIR", rp->dir, 1) != 0 ||
	    asprintf(&log, "%s/log", rp->dir) < 0)
		return -1;
	fflush(stderr);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(log);
	if (fd < 0)
		return -1;
	s->err_fd = dup(STDERR_FILENO);
	if (s->err_fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void leave(struct saved_env *s)
{
	fflush(stderr);
	if (s->err_fd >= 0) {
		dup2(s->err_fd, STDERR_FILENO);
		close(s->err_fd);
	}
	put_env("PAM_WRAPPER", s->wrapper);
	put_env("PAM_WRAPPER_SERVICE_DIR", s->dir);
	free(s->wrapper);
	free(s->dir);
}

/* The end of the replay's log (malloc'd, "" when empty). */
static char *log_tail(const struct xp_replayer *rp)
{
	struct xp_text t = { 0 };
	char *path = NULL, *r;

	if (asprintf(&path, "%s/log", rp->dir) < 0)
		return strdup("");
	r = xp_text_load(&t, path) == 0 ?
		    strdup(t.len > LOG_TAIL ? t.buf + t.len - LOG_TAIL : t.buf) :
		    strdup("");
	xp_text_free(&t);
	free(path);
	return r;
}

int xp_replay_begin(struct xp_replayer *rp, const struct xp_conf *c,
		    const char *standin, char **err)
{
	struct saved_env env;
	int rc;

	memset(rp, 0, sizeof(*rp));
	rp->c = c;
	*err = NULL;
	if (dlsym(RTLD_DEFAULT, "pam_wrapper_enabled") == NULL) {
		*err = strdup("cannot replay: libpam_wrapper.so is not loaded");
		return -1;
	}
	rp->h = dlopen(standin, RTLD_NOW | RTLD_LOCAL);
	rp->set = rp->h != NULL ? (pwrap_xp_plan_fn *)dlsym(rp->h, "pwrap_xp_plan")
				: NULL;
	if (rp->set == NULL) {
		if (asprintf(err, "cannot replay: cannot load %s: %s", standin,
			     dlerror()) < 0)
			*err = NULL;
		return -1;
	}
	rp->dir = pwrap_mkdtemp("pamtest-explore");
	if (rp->dir == NULL) {
		*err = strdup("cannot replay: no private directory");
		return -1;
	}
	/* the rewriter's complaints go to the log as well */
	if (enter(rp, &env) != 0) {
		leave(&env);
		*err = strdup("cannot replay: cannot set up the environment");
		return -1;
	}
	rc = xp_gen_replay(c, rp->dir, standin, err);
	leave(&env);
	if (rc == 1) {
		rp->none = true;
		rp->why_none = *err;
		*err = NULL;
	}
	return rc < 0 ? -1 : 0;
}

void xp_replay_end(struct xp_replayer *rp)
{
	if (rp->dir != NULL && !rp->keep)
		pwrap_rmtree(rp->dir);
	else if (rp->dir != NULL)
		fprintf(stderr, "pamtest explore: replay directory %s (kept)\n",
			rp->dir);
	free(rp->dir);
	free(rp->why_none);
	if (rp->h != NULL) {
		rp->set(NULL);
		dlclose(rp->h);
	}
	memset(rp, 0, sizeof(*rp));
}

static int fn_of(enum xp_type t, int pass)
{
	switch (t) {
	case XP_AUTH:
		return PWRAP_XP_AUTHENTICATE;
	case XP_ACCOUNT:
		return PWRAP_XP_ACCT_MGMT;
	case XP_PASSWORD:
		return pass == 0 ? PWRAP_XP_PRELIM : PWRAP_XP_UPDATE;
	default:
		return PWRAP_XP_OPEN_SESSION;
	}
}

static int run_op(pam_handle_t *h, enum xp_type t)
{
	switch (t) {
	case XP_AUTH:
		return pam_authenticate(h, 0);
	case XP_ACCOUNT:
		return pam_acct_mgmt(h, 0);
	case XP_PASSWORD:
		return pam_chauthtok(h, 0);
	default:
		return pam_open_session(h, 0);
	}
}

/* "site/fn" of each call, for messages (malloc'd). */
static char *calls_text(const struct xp_conf *c, const int *site, const int *fn,
			size_t n, size_t shown)
{
	struct pwrap_buf b = { 0 };

	pwrap_buf_str(&b, "");
	for (size_t i = 0; i < n && i < shown; i++) {
		const struct xp_site *s = site[i] >= 0 && (size_t)site[i] < c->nsites ?
					  &c->sites[site[i]] : NULL;

		if (s != NULL)
			pwrap_buf_fmt(&b, "%s%s:%u/%d", i ? ", " : "",
				c->files[s->file].show, s->line, fn[i]);
		else
			pwrap_buf_fmt(&b, "%s?/%d", i ? ", " : "", fn[i]);
	}
	if (n > shown)
		pwrap_buf_fmt(&b, ", ... (%zu calls)", n);
	return pwrap_buf_take(&b);
}

/* One path; NULL when libpam agreed, else what differed (malloc'd). */
static char *replay_path(struct xp_replayer *rp, const struct xp_graph *g,
			 const struct xp_path *p)
{
	size_t n = 0, cap = p->n + 8;
	int *site = calloc(cap, sizeof(int)), *fn = calloc(cap, sizeof(int));
	int *code = calloc(cap, sizeof(int)), *ssite = calloc(cap, sizeof(int));
	int *sfn = calloc(cap, sizeof(int));
	struct pwrap_xp_plan plan = { 0 };
	pam_handle_t *h = NULL;
	struct pam_conv conv = { no_conv, NULL };
	char *msg = NULL, *want = NULL, *got = NULL, *path = NULL, *log = NULL;
	int rc;

	if (site == NULL || fn == NULL || code == NULL || ssite == NULL || sfn == NULL) {
		msg = strdup("out of memory");
		goto out;
	}
	for (size_t i = 0; i < p->n; i++) {
		const struct xp_pos *at = &g->seq[p->c[i].pos];

		if (!at->l->standin)
			continue;
		site[n] = at->l->site;
		fn[n] = fn_of(g->type, at->pass);
		code[n] = p->c[i].code;
		n++;
	}
	plan = (struct pwrap_xp_plan){ site, fn, code, n, ssite, sfn, cap, 0 };
	rp->set(&plan);
	rc = pam_start(g->conf->service, "pwrap-explore", &conv, &h);
	if (rc == PAM_SUCCESS) {
		rc = run_op(h, g->type);
		pam_end(h, rc);
	} else if (asprintf(&msg, "pam_start failed (%s)", xp_code_name(rc)) < 0) {
		msg = NULL;
	}
	rp->set(NULL);
	if (msg == NULL && plan.ncalls == n && rc == p->result &&
	    memcmp(site, ssite, n * sizeof(int)) == 0 &&
	    memcmp(fn, sfn, n * sizeof(int)) == 0)
		goto out;
	want = calls_text(g->conf, site, fn, n, n);
	got = calls_text(g->conf, ssite, sfn, plan.ncalls, cap);
	path = xp_path_text(g, p);
	log = log_tail(rp);
	if (asprintf(&msg, "libpam disagrees with the graph (an error of "
		     "pamtest explore; please report it): path %s: expected "
		     "calls [%s] and %s; libpam made [%s] and returned %s%s%s%s",
		     path ? path : "?", want ? want : "?",
		     xp_code_name(p->result), got ? got : "?",
		     msg != NULL ? msg : xp_code_name(rc),
		     log && *log ? "; its log ended with:\n" : "", log ? log : "",
		     "") < 0)
		msg = NULL;
out:
	free(want);
	free(got);
	free(path);
	free(log);
	free(site);
	free(fn);
	free(code);
	free(ssite);
	free(sfn);
	return msg;
}

int xp_replay_run(struct xp_replayer *rp, struct xp_report *r)
{
	struct saved_env env;
	int rc = 0;

	if (rp->none)
		return 0;
	if (enter(rp, &env) != 0) {
		leave(&env);
		r->disagree = strdup("cannot replay: cannot set up the environment");
		return -1;
	}
	for (size_t i = 0; i < r->g.npaths && r->disagree == NULL; i++) {
		r->disagree = replay_path(rp, &r->g, &r->g.paths[i]);
		r->replays++;
	}
	leave(&env);
	r->replayed = true;
	return rc;
}

char *xp_replay_refused(struct xp_replayer *rp)
{
	struct saved_env env;
	struct pam_conv conv = { no_conv, NULL };
	pam_handle_t *h = NULL;
	char *msg = NULL;
	int rc;

	if (rp->none)
		return NULL;
	if (enter(rp, &env) != 0) {
		leave(&env);
		return strdup("cannot replay: cannot set up the environment");
	}
	rc = pam_start(rp->c->service, "pwrap-explore", &conv, &h);
	if (rc == PAM_SUCCESS) {
		pam_end(h, rc);
		if (asprintf(&msg, "libpam disagrees (an error of pamtest "
			     "explore; please report it): pam_start succeeds "
			     "although %s", rp->c->refused) < 0)
			msg = NULL;
	}
	leave(&env);
	return msg;
}
