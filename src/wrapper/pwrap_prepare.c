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
 * another thread held it.
 */
#define _GNU_SOURCE
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

static void atfork_prepare(void)
{
	pthread_mutex_lock(&prep_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&prep_lock);
}

static void atfork_child(void)
{
	/* The child has one thread, ours: the lock is free again. */
	pthread_mutex_unlock(&prep_lock);
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

void pwrap_runtime_now(void)
{
	struct pwrap_source src;
	int ok;

	pthread_mutex_lock(&prep_lock);
	/* A missing service dir only leaves services/ empty; pam_start
	 * reports it. */
	ok = pwrap_source_of(NULL, &src, false);
	(void)runtime_ready(ok ? &src : NULL);
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

	if (!pwrap_name_is_plain(name)) {
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

bool pwrap_uid_switch(uid_t euid)
{
	bool went = false;
	uid_t owner;

	pthread_mutex_lock(&prep_lock);
	owner = pwrap_rundir_owner();
	/* any uid only its own: one another could not use, and (root may
	 * enter anyone's) one whose owner could swap what root reads */
	if (owner != (uid_t)-1 && euid != owner) {
		/* (an inherited one changes nothing unless it goes: see
		 * pwrap_rundir_drop) */
		if (!pwrap_rundir_inherited() && pwrap_rundir_intact()) {
			pwrap_services_save();
		}
		went = pwrap_rundir_drop();
		if (went) {
			pwrap_walk_forget();
		}
	}
	pthread_mutex_unlock(&prep_lock);
	return went;
}
