/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where service files come from, and services/ of the runtime directory
 * (PAM_WRAPPER_RUNTIME_DIR): a copy of the service directory that tests
 * written for upstream read and add to.
 * A file a test wrote or changed there wins over the service directory's;
 * otherwise services/ follows the service directory as it is now.
 *
 * To tell our copies from a test's files, each copy we make is remembered
 * with the signatures of its source and of the copy right after writing.
 * A forked child gets a runtime directory of its own (so that what it
 * copies never looks like a test's file to its parent) and takes the
 * parent's test-written files along; so does a new directory that replaces
 * a full one, or one removed before a switch of uid.  Only files from a
 * directory of root or of the new directory's owner are taken along: after
 * a switch back to root, what the other user could write is left behind.
 *
 * Called with the preparation lock held (pwrap_prepare.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pwrap_private.h"

/* A copy this process made in services/ (e.name: its file name there). */
struct copy {
	struct pwrap_entry e;	/* first */
	struct pwrap_sig src;	/* the service dir's file when copied */
	struct pwrap_sig copy;	/* our copy right after writing it */
};

/* A file a test wrote into an inherited services/ (e.name, contents). */
struct saved {
	struct pwrap_entry e;	/* first */
	char *buf;
	size_t len;
	uid_t from;		/* owner of the directory it was in */
};

static struct pwrap_entry *copies;	/* of struct copy */
static struct pwrap_entry *saved;	/* of struct saved */

/* What PAM_WRAPPER_SERVICE_DIR resolved to, when it is relative: a daemon
 * that chdir("/")s keeps its service directory.  Resolved against the
 * working directory when the value is first seen, and again only when the
 * value changes (as upstream does). */
static char *env_seen;
static char *env_abs;
/* The split of a single-file source. */
static char *single_dir;
static char *single_name;

static const char *env_dir(const char *v)
{
	pwrap_path cwd;

	if (v[0] == '/') {
		return v;
	}
	if (env_seen != NULL && strcmp(env_seen, v) == 0) {
		return env_abs;
	}
	free(env_seen);
	free(env_abs);
	env_seen = strdup(v);
	env_abs = getcwd(cwd, sizeof(cwd)) != NULL ? pwrap_join(cwd, v) : NULL;
	if (env_seen == NULL || env_abs == NULL) {
		free(env_seen);
		env_seen = NULL;
		return v;
	}
	return env_abs;
}

/* A directory gives all its files; a regular file gives itself, as the
 * service of its name (upstream's behaviour, which Bareos' tests use). */
bool pwrap_source_of(const char *svcdir, struct pwrap_source *src, bool log)
{
	struct stat st;
	const char *slash;

	if (svcdir == NULL) {
		svcdir = getenv("PAM_WRAPPER_SERVICE_DIR");
		if (svcdir != NULL && svcdir[0] != '\0') {
			svcdir = env_dir(svcdir);
		}
	}
	if (svcdir == NULL || svcdir[0] == '\0') {
		if (log) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "PAM_WRAPPER=1 but "
				  "PAM_WRAPPER_SERVICE_DIR is not set; refusing "
				  "to use the system's PAM configuration");
		}
		return false;
	}
	if (stat(svcdir, &st) != 0) {
		if (log) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "service directory %s: %s",
				  svcdir, strerror(errno));
		}
		return false;
	}
	src->dir = svcdir;
	src->only = NULL;
	if (S_ISDIR(st.st_mode)) {
		return true;
	}
	slash = strrchr(svcdir, '/');
	if (!S_ISREG(st.st_mode) || (slash != NULL && slash[1] == '\0')) {
		if (log) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "service directory %s: not a "
				  "directory or a service file", svcdir);
		}
		return false;
	}
	free(single_dir);
	free(single_name);
	single_dir = slash == NULL ? strdup(".")
		     : slash == svcdir ? strdup("/")
				       : strndup(svcdir, (size_t)(slash - svcdir));
	single_name = strdup(slash == NULL ? svcdir : slash + 1);
	if (single_dir == NULL || single_name == NULL) {
		return false;
	}
	src->dir = single_dir;
	src->only = single_name;
	return true;
}

/* For messages: the single file a source is made of. */
const char *pwrap_source_shown(const struct pwrap_source *src)
{
	static pwrap_path shown;

	if (src->only == NULL || !pwrap_pjoin(shown, src->dir, src->only)) {
		return src->only == NULL ? src->dir : src->only;
	}
	return shown;
}


bool pwrap_name_is_plain(const char *name)
{
	return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL &&
	       strlen(name) < NAME_MAX - 16;
}

bool pwrap_name_reserved(const char *name)
{
	return strcmp(name, ".inc") == 0 || strcmp(name, ".m") == 0;
}

bool pwrap_name_is_service(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL &&
	       strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
	       !pwrap_name_reserved(name) && strlen(name) < NAME_MAX - 16;
}

static struct copy *copy_find(const char *name)
{
	return (struct copy *)pwrap_list_find(copies, name);
}

/* Forgets the copy called name (NULL: the first). */
static void copy_drop(const char *name)
{
	struct copy *c = (struct copy *)pwrap_list_take(&copies, name);

	if (c != NULL) {
		free(c->e.name);
		free(c);
	}
}

static void copies_free(void)
{
	while (copies != NULL) {
		copy_drop(NULL);
	}
}

/* Copies src to services/name and remembers both signatures; the copy's
 * goes to *copy_sig. */
static int copy_in(const char *src, const char *name,
		   const struct pwrap_sig *src_sig, struct pwrap_sig *copy_sig)
{
	const char *svc = pwrap_rundir()->svc;
	struct copy *c = NULL;
	pwrap_path dst;
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;

	if (!pwrap_pjoin(dst, svc, name) ||
	    pwrap_read_file(src, &buf, &len) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot copy %s into %s: %s", src,
			  svc, strerror(errno));
		goto out;
	}
	if (pwrap_write_file(dst, buf, len, copy_find(name) == NULL) != 0) {
		/* no space: the caller moves to the next base */
		PWRAP_LOG(pwrap_rundir_no_space(errno) ? PWRAP_LOG_DEBUG
						       : PWRAP_LOG_ERROR,
			  "cannot copy %s into %s: %s", src, svc,
			  strerror(errno));
		goto out;
	}
	c = copy_find(name);
	if (c == NULL) {
		c = calloc(1, sizeof(*c));
		if (c == NULL || (c->e.name = strdup(name)) == NULL) {
			free(c);
			goto out;
		}
		pwrap_list_push(&copies, &c->e);
	}
	c->src = *src_sig;
	if (!pwrap_sig_of(dst, &c->copy)) {
		copy_drop(name);
		goto out;
	}
	*copy_sig = c->copy;
	PWRAP_LOG(PWRAP_LOG_TRACE, "copied %s to %s", src, dst);
	rc = 0;
out:
	free(buf);
	return rc;
}

static void saved_free(void)
{
	while (saved != NULL) {
		struct saved *h = (struct saved *)pwrap_list_take(&saved, NULL);

		free(h->e.name);
		free(h->buf);
		free(h);
	}
}

void pwrap_services_save(void)
{
	const char *svc = pwrap_rundir()->svc;
	struct stat dst;
	DIR *d = svc != NULL && stat(svc, &dst) == 0 ? opendir(svc) : NULL;
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct copy *c = copy_find(de->d_name);
		struct saved *h;
		struct pwrap_sig sig;
		pwrap_path path;

		if (!pwrap_name_is_service(de->d_name) ||
		    pwrap_list_find(saved, de->d_name) != NULL ||
		    !pwrap_pjoin(path, svc, de->d_name) ||
		    !pwrap_sig_of(path, &sig) ||
		    (c != NULL && pwrap_sig_eq(&sig, &c->copy))) {
			/* not a file, our pristine copy, or kept already */
			continue;
		}
		h = calloc(1, sizeof(*h));
		if (h == NULL) {
			continue;
		}
		if ((h->e.name = strdup(de->d_name)) == NULL ||
		    pwrap_read_file(path, &h->buf, &h->len) != 0) {
			free(h->e.name);
			free(h);
			continue;
		}
		h->from = dst.st_uid;
		pwrap_list_push(&saved, &h->e);
	}
	if (d != NULL) {
		closedir(d);
	}
}

/* Whether src provides a file called name. */
static bool provides(const struct pwrap_source *src, const char *name)
{
	return src->only == NULL || strcmp(src->only, name) == 0;
}

void pwrap_services_fill(const struct pwrap_source *src)
{
	const char *svc = pwrap_rundir()->svc;
	DIR *d = src != NULL ? opendir(src->dir) : NULL;
	struct dirent *de;
	struct stat nst;

	copies_free();
	/* A missing or unreadable service dir leaves services/ empty;
	 * pam_start reports it. */
	while (d != NULL && !pwrap_rundir_full() &&
	       (de = readdir(d)) != NULL) {
		struct pwrap_sig sig, csig;
		pwrap_path path;

		if (pwrap_name_is_service(de->d_name) &&
		    provides(src, de->d_name) &&
		    pwrap_pjoin(path, src->dir, de->d_name) &&
		    pwrap_sig_of(path, &sig)) {
			(void)copy_in(path, de->d_name, &sig, &csig);
		}
	}
	if (d != NULL) {
		closedir(d);
	}
	if (pwrap_rundir_full()) {
		return;	/* saved is kept for the directory in the next base */
	}
	if (svc == NULL || stat(svc, &nst) != 0) {
		return;
	}
	for (const struct pwrap_entry *e = saved; e != NULL; e = e->next) {
		const struct saved *h = (const struct saved *)e;
		pwrap_path path;

		if (h->from != 0 && h->from != nst.st_uid) {
			/* uid `from` could have written it: not for another
			 * uid, root included */
			PWRAP_LOG(PWRAP_LOG_NOTICE, "not taking %s, written "
				  "into services/ of a directory of uid %lu, "
				  "into %s (uid %lu's)", h->e.name,
				  (unsigned long)h->from, svc,
				  (unsigned long)nst.st_uid);
			continue;
		}
		if (pwrap_pjoin(path, svc, h->e.name) &&
		    pwrap_write_file(path, h->buf, h->len, false) != 0 &&
		    pwrap_rundir_no_space(errno)) {
			return;	/* kept for the directory in the next base */
		}
	}
	saved_free();
}

/* Whether the service directory's entry path is a FIFO or a device other
 * than /dev/null, on which libpam would block, or which it would read for
 * ever (said as an error).  A directory or a socket libpam reads as empty
 * or not at all: as a missing file. */
static bool endless(const char *path)
{
	struct stat st, null;

	if (stat(path, &st) != 0 ||
	    !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
	      S_ISBLK(st.st_mode)) ||
	    (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 &&
	     st.st_rdev == null.st_rdev)) {
		return false;
	}
	PWRAP_LOG(PWRAP_LOG_ERROR, "%s: not a regular file (a FIFO or a "
		  "device), on which libpam would block or which it would "
		  "read without end; refusing the service", path);
	return true;
}

bool pwrap_services_source(const struct pwrap_source *src, const char *name,
			   pwrap_path out, pwrap_path shown,
			   struct pwrap_sig *sig, bool *suspect, bool *failed)
{
	struct copy *c = copy_find(name);
	struct pwrap_sig rsig, ssig;
	pwrap_path spath;
	bool have_r;

	if (!pwrap_pjoin(out, pwrap_rundir()->svc, name) ||
	    !pwrap_pjoin(spath, src->dir, name)) {
		return false;
	}
	have_r = pwrap_sig_of(out, &rsig);
	if (have_r && (c == NULL || !pwrap_sig_eq(&rsig, &c->copy))) {
		*sig = rsig;	/* written or edited by the test */
		memcpy(shown, out, sizeof(pwrap_path));
		return true;
	}
	if (!have_r && c != NULL) {
		*suspect = true;	/* our copy vanished */
	}
	if (provides(src, name) && pwrap_sig_of(spath, &ssig)) {
		if (!have_r || c == NULL || !pwrap_sig_eq(&ssig, &c->src)) {
			if (copy_in(spath, name, &ssig, &rsig) != 0) {
				*failed = true;
				return false;
			}
		}
		*sig = rsig;
		memcpy(shown, spath, sizeof(pwrap_path));
		return true;
	}
	if (provides(src, name) && endless(spath)) {
		*failed = true;
		return false;
	}
	if (have_r) {
		unlink(out);	/* our copy of a file that is gone */
	}
	copy_drop(name);
	return false;
}
