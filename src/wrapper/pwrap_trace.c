/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module trace, at run time: one state per traced handle, the real
 * modules, and the calls the stand-in module (pwrap_trace_standin.c)
 * forwards here through pam_wrapper_trace_call().
 *
 * The real modules live as long as libpam would keep them: the modules of
 * the lines libpam read are loaded when pam_start returns (libpam loads
 * them inside it), with dlopen(RTLD_NOW) as libpam does, and closed after
 * the real pam_end (whose data cleanups may still call into them), in the
 * order libpam closes them.  A module that cannot be loaded gives what
 * libpam gives such a line: Linux-PAM installs it as "faulty" and its
 * calls return PAM_MODULE_UNKNOWN; OpenPAM refuses pam_start.  A module
 * loaded later (a line libpam read after pam_set_item(PAM_SERVICE)) is
 * loaded at its first call.
 *
 * Records of one application call are kept until it returns and written
 * with its result (pwrap_trace_api.c); the lock is never held while a
 * module or libpam runs, nor while writing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <security/pam_appl.h>
#if defined(PWRAP_OPENPAM)
#include <security/openpam.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pwrap_trace.h"
#include "pwrap_trace_plan.h"

typedef int (*sm_fn)(pam_handle_t *pamh, int flags, int argc,
		     const char **argv);

/* A real module loaded for a handle. */
struct tmod {
	struct tmod *next;
	char *path;
	void *dl;		/* NULL: it could not be loaded */
	char *error;		/* then why */
};

/* A record waiting for the end of its application call. */
struct pend {
	struct pwrap_trace_rec r;
	char *service;
	char *error;
};

struct thandle {
	struct thandle *next;
	const void *pamh;
	unsigned long tx;
	char *dest;		/* NULL: records are dropped */
	enum pwrap_trace_fmt fmt;
	struct tmod *mods, **mods_tail;	/* in load order */
	struct { unsigned id; int rc; } *cache;	/* last auth/open codes */
	size_t n_cache;
	struct pend *pend;
	size_t n_pend;
	unsigned seq;
	int depth;		/* application calls in progress */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct thandle *handles;
/* pamtest explore's plan (pwrap_trace_plan.h), or NULL */
static const struct pam_wrapper_trace_plan *plan;
static unsigned long n_handles;	/* atomic: the fast path reads it */
static unsigned long n_tx;	/* atomic: transactions started */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void trace_init(void)
{
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}

bool pwrap_trace_any(void)
{
	return __atomic_load_n(&n_handles, __ATOMIC_ACQUIRE) != 0;
}

/* ---- where records go ------------------------------------------------------ */

/* What the next pam_start of this thread records (pwrap_trace_begin). */
static _Thread_local char *next_dest;
static _Thread_local enum pwrap_trace_fmt next_fmt;

bool pwrap_trace_begin(void)
{
	const char *v = getenv("PAM_WRAPPER_TRACE");

	free(next_dest);
	next_dest = NULL;
	if (v == NULL || v[0] == '\0') {
		pwrap_trace_set_active(false, false);
		return false;
	}
	/* with pamtest explore's plan the plan hears every call: no
	 * records are written */
	next_dest = pwrap_trace_plan() == NULL ? pwrap_trace_dest(v) : NULL;
	next_fmt = pwrap_trace_fmt_env();
	/* without the stand-in only starts and results are recorded */
	pwrap_trace_set_active(pwrap_trace_standin() != NULL, true);
	return true;
}

/* ---- handles --------------------------------------------------------------- */

/* With the lock held. */
static struct thandle *find(const void *pamh)
{
	struct thandle *h;

	for (h = handles; h != NULL && h->pamh != pamh; h = h->next) {
	}
	return h;
}

/* Takes pamh's state out of the list (lock held); the caller frees it. */
static struct thandle *take(const void *pamh)
{
	struct thandle **p, *h;

	for (p = &handles; *p != NULL && (*p)->pamh != pamh; p = &(*p)->next) {
	}
	h = *p;
	if (h != NULL) {
		*p = h->next;
		__atomic_sub_fetch(&n_handles, 1, __ATOMIC_RELEASE);
	}
	return h;
}

static void handle_free(struct thandle *h);

static void put(struct thandle *h)
{
	struct thandle *stale;

	pthread_mutex_lock(&lock);
	/* a handle the program never ended, whose memory libpam reuses:
	 * its modules stay loaded, as libpam leaves them */
	stale = take(h->pamh);
	h->next = handles;
	handles = h;
	__atomic_add_fetch(&n_handles, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	if (stale != NULL) {
		while (stale->mods != NULL) {
			struct tmod *m = stale->mods;

			stale->mods = m->next;
			free(m->path);
			free(m->error);
			free(m);
		}
		handle_free(stale);
	}
}

static struct thandle *handle_new(const void *pamh, char *dest,
				  enum pwrap_trace_fmt fmt, unsigned long tx)
{
	struct thandle *h = calloc(1, sizeof(*h));

	if (h == NULL) {
		free(dest);
		return NULL;
	}
	h->pamh = pamh;
	h->dest = dest;
	h->fmt = fmt;
	h->tx = tx;
	h->mods_tail = &h->mods;
	return h;
}

/* The module at path for h: loaded now if it is not yet. */
static struct tmod *module(struct thandle *h, const char *path, bool silent)
{
	struct tmod *m;
	const char *e;

	for (m = h->mods; m != NULL; m = m->next) {
		if (strcmp(m->path, path) == 0) {
			return m;
		}
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL || (m->path = strdup(path)) == NULL) {
		free(m);
		return NULL;
	}
	m->dl = dlopen(path, RTLD_NOW);
	if (m->dl == NULL) {
		e = dlerror();
		m->error = strdup(e != NULL ? e : "cannot be loaded");
		if (!silent) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "unable to dlopen(%s): %s",
				  path, e != NULL ? e : "?");
		}
	}
	*h->mods_tail = m;
	h->mods_tail = &m->next;
	return m;
}

static void modules_close(struct tmod *m)
{
	while (m != NULL) {
		struct tmod *next = m->next;

		if (m->dl != NULL) {
			dlclose(m->dl);
		}
		free(m->path);
		free(m->error);
		free(m);
		m = next;
	}
}

static void handle_free(struct thandle *h)
{
	modules_close(h->mods);
	for (size_t i = 0; i < h->n_pend; i++) {
		free(h->pend[i].service);
		free(h->pend[i].error);
	}
	free(h->pend);
	free(h->cache);
	free(h->dest);
	free(h);
}

/* ---- writing ----------------------------------------------------------- */

/* Formats h's pending records (then a "result" record when has_result)
 * into b and forgets them; lock held. */
static void drain(struct thandle *h, struct pwrap_buf *b, bool has_result,
		  enum pwrap_sm sm, int flags, int result, const char *service)
{
	struct pwrap_trace_who who = { (long)getpid(), h->tx, NULL };

	for (size_t i = 0; i < h->n_pend; i++) {
		struct pend *p = &h->pend[i];

		p->r.has_result = has_result;
		p->r.result = result;
		p->r.error = p->error;
		who.service = p->service;
		if (h->dest != NULL) {
			pwrap_trace_format(b, h->fmt, &who, &p->r);
		}
		free(p->service);
		free(p->error);
	}
	if (has_result && h->dest != NULL) {
		struct pwrap_trace_rec r = { .sm = sm, .flags = flags,
					     .rc = result, .seq = h->seq };

		who.service = service;
		pwrap_trace_format(b, h->fmt, &who, &r);
	}
	h->n_pend = 0;
	h->seq = 0;
}

static void write_out(const char *dest, struct pwrap_buf *b)
{
	if (dest != NULL && b->len > 0) {
		pwrap_trace_write(dest, b->p, b->len);
	}
	free(b->p);
}

/* PAM_SERVICE of pamh, malloc'd (NULL when there is none). */
static char *service_of(const void *pamh)
{
	const void *s = NULL;
	const struct pwrap_real *r = pwrap_real();

	if (r->pam_get_item == NULL ||
	    r->pam_get_item(pamh, PAM_SERVICE, &s) != PAM_SUCCESS || s == NULL) {
		return NULL;
	}
	return strdup(s);
}

/* ---- pam_start ------------------------------------------------------------- */

int pwrap_trace_started(void **pamh, const char *service, const char *dir,
			int rc)
{
	struct pwrap_trace_who who = { (long)getpid(), 0, service };
	struct thandle *h = NULL;
	struct pwrap_buf b = { 0 };
	const struct pwrap_trace_line **lines;
	char *dest = next_dest;
	size_t n, i;

	next_dest = NULL;
	lines = pwrap_trace_walked_lines(&n);
	pwrap_trace_set_active(false, false);
	who.tx = __atomic_add_fetch(&n_tx, 1, __ATOMIC_RELAXED);
	if (rc == PAM_SUCCESS && pamh != NULL && *pamh != NULL) {
		h = handle_new(*pamh, dest, next_fmt, who.tx);
		dest = NULL;
	}
	for (i = 0; h != NULL && i < n; i++) {
		const struct pam_wrapper_trace_plan *p = pwrap_trace_plan();
		/* with a plan no module is loaded: the plan says */
		struct tmod *m = p == NULL ? module(h, lines[i]->path,
						    lines[i]->silent)
					   : NULL;
#if defined(PWRAP_OPENPAM)
		bool loads = p != NULL ? p->loads == NULL ||
						 p->loads(p->ctx, lines[i]->where,
							  lines[i]->module)
				       : m != NULL && m->dl != NULL;

		/* OpenPAM fails pam_start on a module it cannot load */
		if (!loads) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "%s: module %s cannot be "
				  "loaded; OpenPAM refuses the service",
				  lines[i]->where, lines[i]->path);
			if (pwrap_real()->pam_end != NULL) {
				pwrap_real()->pam_end(*pamh, PAM_SYSTEM_ERR);
			}
			*pamh = NULL;
			rc = PAM_SYSTEM_ERR;
			dest = h->dest;
			h->dest = NULL;
			handle_free(h);
			h = NULL;
		}
#else
		(void)m;	/* a faulty module: its calls say so */
#endif
	}
	free(lines);
	pwrap_trace_format_start(&b, h ? h->fmt : next_fmt, &who,
				 dir ? dir : getenv("PAM_WRAPPER_SERVICE_DIR"),
				 rc);
	write_out(h ? h->dest : dest, &b);
	free(dest);
	if (h != NULL) {
		put(h);
	}
	return rc;
}

void pwrap_trace_resume(const void *pamh)
{
	bool traced;

	pthread_mutex_lock(&lock);
	traced = find(pamh) != NULL;
	pthread_mutex_unlock(&lock);
	/* (its modules load at their first call: nothing to collect) */
	pwrap_trace_set_active(traced && pwrap_trace_standin() != NULL, false);
}

/* ---- the application's calls --------------------------------------------- */

bool pwrap_trace_call_before(const void *pamh)
{
	struct pwrap_buf b = { 0 };
	struct thandle *h;
	char *dest = NULL;

	pthread_mutex_lock(&lock);
	h = find(pamh);
	if (h != NULL && h->depth++ == 0 && h->n_pend > 0) {
		/* records of a call that did not come through here */
		drain(h, &b, false, PWRAP_SM_AUTHENTICATE, 0, 0, NULL);
		dest = h->dest != NULL ? strdup(h->dest) : NULL;
	}
	pthread_mutex_unlock(&lock);
	write_out(dest, &b);
	free(dest);
	return h != NULL;
}

void pwrap_trace_call_after(const void *pamh, enum pwrap_sm sm, int flags,
			    int rc)
{
	struct pwrap_buf b = { 0 };
	char *service = service_of(pamh);
	struct thandle *h;
	char *dest = NULL;

	pthread_mutex_lock(&lock);
	h = find(pamh);
	if (h != NULL && --h->depth <= 0) {
		h->depth = 0;
		drain(h, &b, true, sm, flags, rc, service);
		dest = h->dest != NULL ? strdup(h->dest) : NULL;
	}
	pthread_mutex_unlock(&lock);
	write_out(dest, &b);
	free(dest);
	free(service);
}

void pwrap_trace_ended(const void *pamh)
{
	struct pwrap_buf b = { 0 };
	struct thandle *h;

	if (pamh == NULL) {
		return;
	}
	pthread_mutex_lock(&lock);
	h = take(pamh);
	if (h != NULL) {
		drain(h, &b, false, PWRAP_SM_AUTHENTICATE, 0, 0, NULL);
	}
	pthread_mutex_unlock(&lock);
	if (h != NULL) {
		write_out(h->dest, &b);
		handle_free(h);
	}
}

/* ---- the calls from the stand-in ------------------------------------------ */

/* The module's function sm, or NULL. */
static sm_fn function(const struct tmod *m, enum pwrap_sm sm)
{
	sm_fn fn = NULL;

	if (m == NULL || m->dl == NULL) {
		return NULL;
	}
#if defined(PWRAP_OPENPAM)
	{
		/* a module may describe itself (OpenPAM's PAM_MODULE_ENTRY) */
		const struct pam_module *pm = dlsym(m->dl, "_pam_module");

		if (pm != NULL) {
			return (sm_fn)pm->func[sm];
		}
	}
#endif
	*(void **)&fn = dlsym(m->dl, pwrap_sm_name(sm));
	return fn;
}

#if !defined(PWRAP_OPENPAM)
/* Linux-PAM: the action libpam takes for rc on line l (lock held). */
static int action_of(struct thandle *h, const struct pwrap_trace_line *l,
		     enum pwrap_sm sm, int rc)
{
	int code = rc;
	size_t i;

#if defined(PAM_INCOMPLETE)
	if (rc == PAM_INCOMPLETE) {
		return PWRAP_ACT_INCOMPLETE;
	}
#endif
	for (i = 0; i < h->n_cache && h->cache[i].id != l->id; i++) {
	}
	if (sm == PWRAP_SM_AUTHENTICATE || sm == PWRAP_SM_OPEN_SESSION) {
		/* what the "frozen chain" of setcred/close_session uses */
		if (i == h->n_cache) {
			void *v = realloc(h->cache, (i + 1) * sizeof(*h->cache));

			if (v != NULL) {
				h->cache = v;
				h->cache[i].id = l->id;
				h->n_cache++;
			}
		}
		if (i < h->n_cache) {
			h->cache[i].rc = rc;
		}
	} else if ((sm == PWRAP_SM_SETCRED || sm == PWRAP_SM_CLOSE_SESSION) &&
		   i < h->n_cache) {
		code = h->cache[i].rc;
	}
	if (code < 0 || code >= PWRAP_TRACE_CODES) {
		return PWRAP_ACT_BAD;
	}
	return l->actions[code];
}
#endif

/* The line a call is for: argv[0] is "pwrap_trace=N". */
static const struct pwrap_trace_line *line_of(int argc, const char **argv)
{
	static const char key[] = "pwrap_trace=";
	char *end;
	unsigned long id;

	if (argc < 1 || argv == NULL || argv[0] == NULL ||
	    strncmp(argv[0], key, sizeof(key) - 1) != 0) {
		return NULL;
	}
	id = strtoul(argv[0] + sizeof(key) - 1, &end, 10);
	return *end == '\0' && id <= 0xffffffffUL ?
		       pwrap_trace_line_get((unsigned)id) : NULL;
}

PWRAP_EXPORT int pam_wrapper_trace_call(int sm, pam_handle_t *pamh, int flags,
					int argc, const char **argv);
int pam_wrapper_trace_call(int sm, pam_handle_t *pamh, int flags, int argc,
			   const char **argv)
{
	const struct pwrap_trace_line *l = line_of(argc, argv);
	const struct pam_wrapper_trace_plan *pl;
	struct thandle *h;
	struct tmod *m;
	struct pend *p;
	const char *error = NULL;
	char *service;
	char why[128];
	sm_fn fn;
	int rc, saved = errno;

	if (l == NULL || sm < 0 || sm >= PWRAP_SM_COUNT) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "pam_wrapper_trace.so: not a line of "
			  "a traced stack (%s)", argc > 0 && argv != NULL &&
			  argv[0] != NULL ? argv[0] : "no arguments");
		return PAM_SYSTEM_ERR;
	}
	pthread_mutex_lock(&lock);
	h = find(pamh);
	pthread_mutex_unlock(&lock);
	if (h == NULL) {
		/* started untraced (cannot happen: the stand-in is only in
		 * traced copies); keep its modules until pam_end */
		h = handle_new(pamh, NULL, PWRAP_TRACE_JSON, 0);
		if (h == NULL) {
			return PAM_BUF_ERR;
		}
		put(h);
	}
	/* the handle is this thread's while its call runs: no lock */
	pl = pwrap_trace_plan();
	m = pl == NULL ? module(h, l->path, l->silent) : NULL;
	fn = function(m, (enum pwrap_sm)sm);
	if (pl != NULL) {
		rc = pl->call(pl->ctx, l->where, l->module, sm, flags);
	} else if (fn != NULL) {
		rc = fn(pamh, flags, argc - 1, argv + 1);
		saved = errno;	/* the module's, for libpam */
	} else {
		if (m == NULL || m->dl == NULL) {
			error = m != NULL ? m->error : "out of memory";
		} else {
			snprintf(why, sizeof(why), "no %s()",
				 pwrap_sm_name((enum pwrap_sm)sm));
			error = why;
			PWRAP_LOG(PWRAP_LOG_ERROR, "%s: %s: %s", l->where,
				  l->path, why);
		}
#if defined(PWRAP_OPENPAM)
		rc = m != NULL && m->dl != NULL ? PAM_SYMBOL_ERR
						: PAM_SYSTEM_ERR;
#else
		rc = PAM_MODULE_UNKNOWN;	/* libpam: a faulty module */
#endif
	}
	service = service_of(pamh);
	pthread_mutex_lock(&lock);
	p = realloc(h->pend, (h->n_pend + 1) * sizeof(*p));
	if (p != NULL) {
		h->pend = p;
		p = &h->pend[h->n_pend++];
		memset(p, 0, sizeof(*p));
		p->r.line = l;
		p->r.sm = (enum pwrap_sm)sm;
		p->r.flags = flags;
		p->r.rc = rc;
#if !defined(PWRAP_OPENPAM)
		p->r.action = action_of(h, l, (enum pwrap_sm)sm, rc);
#endif
		p->r.seq = ++h->seq;
		p->error = error != NULL ? strdup(error) : NULL;
		p->service = service;
		service = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(service);
	errno = saved;
	return rc;
}

const struct pam_wrapper_trace_plan *pwrap_trace_plan(void)
{
	return __atomic_load_n(&plan, __ATOMIC_ACQUIRE);
}

PWRAP_EXPORT int pam_wrapper_trace_plan(const struct pam_wrapper_trace_plan *p);
int pam_wrapper_trace_plan(const struct pam_wrapper_trace_plan *p)
{
	/* the stand-in stays loaded while a plan is set: each transaction's
	 * libpam loads it again without mapping it again */
	static void *held;

	if (p != NULL && pwrap_trace_standin() == NULL) {
		return -1;
	}
	if (p != NULL && held == NULL) {
		held = dlopen(pwrap_trace_standin(), RTLD_NOW | RTLD_LOCAL);
	} else if (p == NULL && held != NULL) {
		dlclose(held);
		held = NULL;
	}
	__atomic_store_n(&plan, p, __ATOMIC_RELEASE);
	return 0;
}

__attribute__((destructor)) static void trace_fini(void)
{
	free(next_dest);
	next_dest = NULL;
}
