/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Preparation: service name -> a conf/ directory libpam can read.  At each
 * pam_start the runtime directory is made ready and checked to be still
 * ours (pwrap_rundir.c, pwrap_services.c) and conf/ brought up to date for
 * the service (pwrap_walk.c); a write that lacks space moves everything to
 * the next base.  Nothing is cached beyond the rewritten files, whatever
 * the program does with its descriptors.
 *
 * One mutex serialises preparation (threads may call pam_start at once);
 * fork handlers, registered at load, keep it usable in a child forked while
 * another thread held it.  daemon(3) is wrapped so that its fork's parent
 * hands the runtime directories over to the child (pwrap_rundir.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_private.h"

static pthread_mutex_t prep_lock = PTHREAD_MUTEX_INITIALIZER;
/* The pid of this process when it is a child of fork(2) (set by the fork
 * handler, which a child of vfork(2) does not run), else 0 or the pid of
 * the process it was copied from. */
static pid_t fork_pid;

bool pwrap_fork_child(void)
{
	return fork_pid != 0 && fork_pid == getpid();
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&prep_lock);
}

/* Set by this thread around daemon(3), whose parent only calls _exit
 * after the fork. */
static __thread bool daemonizing;

static void atfork_parent(void)
{
	if (daemonizing) {
		/* the parent lets go of the directories now, not at its
		 * _exit, which may come after the child's end: the last of
		 * the two to let go removes them (a fork that failed: the
		 * process makes new ones) */
		pwrap_rundir_parent_leaves();
	}
	pthread_mutex_unlock(&prep_lock);
}

static void atfork_child(void)
{
	fork_pid = getpid();
	/* The child has one thread, ours: the lock is free again. */
	pthread_mutex_unlock(&prep_lock);
}

/* daemon(3), around the next definition: its fork's parent handler (above)
 * hands the runtime directories over to the child. */
PWRAP_EXPORT int daemon(int nochdir, int noclose)
{
	static void *slot;
	void *sym = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
	int (*fn)(int, int);
	int rc;

	if (sym == NULL) {
		sym = dlsym(RTLD_NEXT, "daemon");
		__atomic_store_n(&slot, sym, __ATOMIC_RELEASE);
	}
	if (sym == NULL) {
		errno = ENOSYS;
		return -1;
	}
	*(void **)&fn = sym;
	daemonizing = true;
	rc = fn(nochdir, noclose);
	daemonizing = false;	/* the child (or a parent whose fork failed) */
	return rc;
}

/* Registered at load (not at first use): a fork racing with the first
 * pam_start of another thread must find the handlers in place.  It costs a
 * list entry, no system call. */
__attribute__((constructor)) static void prep_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/*
 * Makes sure the runtime directory is there, still ours, and services/ is
 * filled; with the lock held.  A forked child gets a directory of its own,
 * with the files a test wrote into its parent's; so does a process whose
 * directory lacked space (in the next base).
 */
static int runtime_ready(const struct pwrap_source *src)
{
	struct pwrap_ids ids;

	if (pwrap_rundir_inherited()) {
		/* A child that runs as another euid than its real or saved
		 * uid (a forked child after seteuid) could make only a
		 * directory it must not trust: it reads its parent's as it
		 * is (the parent opened it for search, see pwrap_uid.c). */
		pwrap_ids_real(&ids);
		if (!pwrap_ids_trust(&ids, ids.e) && pwrap_rundir_intact()) {
			return pwrap_rundir_trusted() ? 0 : -1;
		}
		if (!pwrap_ids_trust(&ids, ids.e)) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "this forked process runs "
				  "as effective uid %lu for a while (real and "
				  "saved uids %lu, %lu): a runtime directory "
				  "made now could not be trusted, and its "
				  "parent's %s cannot be read: %s",
				  (unsigned long)ids.e, (unsigned long)ids.r,
				  (unsigned long)ids.s, pwrap_rundir()->top,
				  strerror(errno));
			return -1;
		}
	}
	/* each round that fills a new directory either succeeds or marks a
	 * base full, and pwrap_rundir_ensure skips full bases */
	for (int round = 0; round <= PWRAP_MAX_BASES; round++) {
		int rc;

		if ((pwrap_rundir_inherited() || pwrap_rundir_full()) &&
		    pwrap_rundir_intact()) {
			pwrap_services_save();
		}
		rc = pwrap_rundir_ensure();
		if (rc <= 0) {
			return rc;
		}
		pwrap_walk_forget();
		pwrap_services_fill(src);
		if (!pwrap_rundir_full()) {
			return 0;
		}
	}
	return -1;
}

void pwrap_runtime_early(void)
{
	if (pwrap_libpam_loaded()) {
		pwrap_runtime_now();
	}
	/* else no PAM here (yet): stay out of the way */
}

/* pwrap_runtime_now with the lock held. */
static void runtime_now_locked(void)
{
	struct pwrap_source src;
	int ok;

	/* A missing service dir only leaves services/ empty; pam_start
	 * reports it. */
	ok = pwrap_source_of(NULL, &src, false);
	(void)runtime_ready(ok ? &src : NULL);
}

void pwrap_runtime_now(void)
{
	pthread_mutex_lock(&prep_lock);
	runtime_now_locked();
	pthread_mutex_unlock(&prep_lock);
}

/* ---- preparation -------------------------------------------------------- */

/* libpam's view of a service name: the part after the last '/', lowercase. */
static void service_file_name(const char *service, pwrap_path name)
{
	const char *slash = strrchr(service, '/');
	char *c;

	snprintf(name, sizeof(pwrap_path), "%s", slash ? slash + 1 : service);
#if defined(PWRAP_OPENPAM)
	/* OpenPAM opens the service's file under the name as given */
	return;
#endif
	for (c = name; *c != '\0'; c++) {
		if (*c >= 'A' && *c <= 'Z') {
			*c = (char)(*c - 'A' + 'a');
		}
	}
}

/* After a failed preparation: when the process runs as another euid than
 * its directory's owner for a while, that is why (it cannot write there). */
static void explain_switch(void)
{
	const struct pwrap_rundir *d = pwrap_rundir();
	uid_t owner = pwrap_rundir_owner();
	struct pwrap_ids ids;

	if (owner == (uid_t)-1 || d->top == NULL) {
		return;
	}
	pwrap_ids_real(&ids);
	if (ids.e == owner || (ids.r != owner && ids.s != owner)) {
		return;
	}
	PWRAP_LOG(PWRAP_LOG_ERROR, "the runtime directory %s is uid %lu's and "
		  "this process runs as effective uid %lu until it switches "
		  "back: the wrapper cannot bring it up to date meanwhile (a "
		  "service used for the first time, or service files changed, "
		  "since the switch), and it reads no stack from a directory "
		  "uid %lu could write, from which a module could take uid %lu "
		  "back; use the service once before the switch",
		  d->top, (unsigned long)owner, (unsigned long)ids.e,
		  (unsigned long)ids.e, (unsigned long)owner);
}

int pwrap_prepare(const char *service, const char *svcdir, char **confdir)
{
	struct pwrap_source src;
	bool suspect = false;
	pwrap_path name;
	int rc = PAM_ABORT;

	if (confdir != NULL) {
		*confdir = NULL;
	}
	pthread_mutex_lock(&prep_lock);
	if (!pwrap_source_of(svcdir, &src, true)) {
		goto out;
	}
	if (service == NULL) {
		rc = PAM_SYSTEM_ERR;
		goto out;
	}
	service_file_name(service, name);
	if (pwrap_name_reserved(name)) {
		/* libpam would read conf/<name>, the wrapper's own */
		PWRAP_LOG(PWRAP_LOG_ERROR, "service name '%s' is reserved: the "
			  "wrapper keeps conf/%s of its runtime directory for "
			  "itself, so libpam cannot read a service file of that "
			  "name there; rename it", name, name);
		goto out;
	}
	for (int round = 0;; round++) {
		if (runtime_ready(&src) != 0) {
			rc = PAM_ABORT;
			goto out;
		}
		rc = pwrap_walk_update(&src, name, &suspect);
		/* A write lacked space: on to the next base.  Files of ours
		 * vanished (a tidy-up of TMPDIR, or a sweep after the program
		 * closed our lock descriptor): the directory is checked again
		 * (a new one made if needed), and the walk tried once more. */
		if (!(pwrap_rundir_full() || (suspect && round == 0)) ||
		    round > PWRAP_MAX_BASES) {
			break;
		}
	}
	if (rc == PAM_SERVICE_ERR) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "no service file '%s' and no "
			  "'other' in %s (or %s)%s", name,
			  pwrap_source_shown(&src),
			  pwrap_rundir()->svc,
			  access(src.dir, R_OK | X_OK) != 0 ?
			  ": the directory is not readable" : "");
		rc = PAM_ABORT;	/* what libpam says (and it would leak) */
		goto out;
	}
	if (rc != PAM_SUCCESS) {
		explain_switch();
		goto out;
	}
	if (confdir != NULL &&
	    (*confdir = strdup(pwrap_rundir()->conf)) == NULL) {
		rc = PAM_BUF_ERR;
		goto out;
	}
	PWRAP_LOG(PWRAP_LOG_DEBUG, "service '%s' from %s via %s", name,
		  src.dir, pwrap_rundir()->conf);
out:
	pthread_mutex_unlock(&prep_lock);
	return rc;
}

int pwrap_prepared_open(const char *name)
{
	int dfd, fd = -1;

	if (!pwrap_name_is_service(name)) {
		errno = ENOENT;
		return -1;
	}
	pthread_mutex_lock(&prep_lock);
	dfd = pwrap_rundir_conf_fd();
	if (dfd >= 0) {
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY |
			    O_NOFOLLOW);
	} else if (errno == EEXIST) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s is not the directory made "
			  "there any more (renamed or replaced); not reading "
			  "%s from it", pwrap_rundir()->conf, name);
		errno = ENOENT;
	}
	pthread_mutex_unlock(&prep_lock);
	return fd;
}

/* The credentials a call would give a process that has cur (see
 * setresuid(2): setreuid also sets the saved uid when it sets the real
 * one, or the effective one to another than the real). */
static void predict(const struct pwrap_uid_call *c, const struct pwrap_ids *cur,
		    struct pwrap_ids *next)
{
	const uid_t keep = (uid_t)-1;

	*next = *cur;
	switch (c->fn) {
	case PWRAP_SETUID:
		if (cur->e == 0) {
			next->r = next->s = c->e;
		}
		next->e = c->e;
		break;
	case PWRAP_SETEUID:
		next->e = c->e;
		break;
	case PWRAP_SETREUID:
		next->r = c->r != keep ? c->r : cur->r;
		next->e = c->e != keep ? c->e : cur->e;
		if (c->r != keep || (c->e != keep && c->e != cur->r)) {
			next->s = next->e;
		}
		break;
	case PWRAP_SETRESUID:
		next->r = c->r != keep ? c->r : cur->r;
		next->e = c->e != keep ? c->e : cur->e;
		next->s = c->s != keep ? c->s : cur->s;
		break;
	}
}

unsigned pwrap_uid_before(const struct pwrap_uid_call *call)
{
	struct pwrap_ids cur, next;
	uid_t owner;

	pthread_mutex_lock(&prep_lock);
	owner = pwrap_rundir_owner();
	if (owner == (uid_t)-1) {
		return 0;
	}
	pwrap_ids_real(&cur);
	predict(call, &cur, &next);
	if (next.r != owner && next.e != owner && next.s != owner) {
		/* For good: afterwards the process could neither use the
		 * directories nor remove them.  The test's files go along
		 * (from a directory a forked child inherited too, but not
		 * in a child of vfork(2), whose memory is its parent's). */
		if ((!pwrap_rundir_inherited() || pwrap_fork_child()) &&
		    pwrap_rundir_intact()) {
			pwrap_services_save();
		}
		if (pwrap_rundir_drop()) {
			pwrap_walk_forget();
			return PWRAP_UID_WENT;
		}
		return 0;
	}
	if (next.e != owner && cur.e == owner &&
	    (!pwrap_rundir_inherited() || pwrap_fork_child())) {
		/* For a while: the directory stays in use, and libpam (of
		 * any thread) reads it as the new euid from the switch on.
		 * (A child of vfork(2) is about to exec: its parent's
		 * directory stays private.) */
		pwrap_rundir_searchable(true);
		return PWRAP_UID_OPENED;
	}
	return pwrap_rundir_searchable_now() ? PWRAP_UID_OPENED : 0;
}

void pwrap_uid_after(unsigned what)
{
	struct pwrap_ids now;
	uid_t owner = pwrap_rundir_owner();

	if ((what & PWRAP_UID_WENT) != 0 && pwrap_enabled()) {
		runtime_now_locked();
	}
	if ((what & PWRAP_UID_OPENED) != 0 && owner != (uid_t)-1 &&
	    !pwrap_rundir_inherited()) {
		/* back to the owner (or the call failed): closed again */
		pwrap_ids_real(&now);
		if (now.e == owner) {
			pwrap_rundir_searchable(false);
		}
	}
	pthread_mutex_unlock(&prep_lock);
}
