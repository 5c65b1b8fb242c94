/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding the real libpam: the functions our exported ones forward to, and
 * where modules are found (a bare name: the system's module directory,
 * else ours).  libpam_wrapper.so does not link libpam (that
 * would load it into every wrapped process, PAM user or not); it looks the
 * functions up in the libpam.so.0 the program loaded, once, at first use.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_private.h"

static struct pwrap_real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static const void *libpam_base;
static void *libpam_handle;

bool pwrap_force_legacy(void)
{
#if defined(PWRAP_FORCE_LEGACY)
	return true;
#else
	return false;
#endif
}

/* dl_iterate_phdr callback: copies the path of a loaded libpam.so* into
 * the buffer data (PATH_MAX bytes) and stops. */
static int find_libpam(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *slash;

	(void)size;
	if (info->dlpi_name == NULL) {
		return 0;
	}
	slash = strrchr(info->dlpi_name, '/');
	if (strncmp(slash ? slash + 1 : info->dlpi_name, "libpam.so", 9) !=
	    0) {
		return 0;
	}
	if (data != NULL) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
	}
	return 1;
}

/*
 * The libpam the program loaded (whatever its SONAME: Linux-PAM's
 * libpam.so.0, OpenPAM's libpam.so.2 or .6), else the one this wrapper was
 * built against.
 */
static void real_load(void)
{
	char loaded[PATH_MAX];
	void *h = NULL;
	void *ha;
	Dl_info info;

	if (dl_iterate_phdr(find_libpam, loaded) != 0) {
		h = dlopen(loaded, RTLD_LAZY | RTLD_NOLOAD);
	}
	if (h == NULL) {
		h = dlopen(PWRAP_LIBPAM_SONAME, RTLD_LAZY);
	}
	if (h == NULL) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot load %s: %s",
			  PWRAP_LIBPAM_SONAME, dlerror());
		return;
	}
	libpam_handle = h;
	*(void **)&real.pam_start = dlsym(h, "pam_start");
	*(void **)&real.pam_start_confdir = dlsym(h, "pam_start_confdir");
	*(void **)&real.pam_set_item = dlsym(h, "pam_set_item");
	*(void **)&real.pam_end = dlsym(h, "pam_end");
	*(void **)&real.pam_get_item = dlsym(h, "pam_get_item");
	*(void **)&real.pam_vsyslog = dlsym(h, "pam_vsyslog");
	*(void **)&real.openpam_set_feature = dlsym(h, "openpam_set_feature");
	if (real.pam_start != NULL &&
	    dladdr(*(void **)&real.pam_start, &info) != 0) {
		__atomic_store_n(&libpam_base, info.dli_fbase,
				 __ATOMIC_RELEASE);
	}
	ha = dlopen("libaudit.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (ha != NULL) {
		*(void **)&real.audit_open = dlsym(ha, "audit_open");
	}
}

const struct pwrap_real *pwrap_real(void)
{
	pthread_once(&real_once, real_load);
	return &real;
}

void *pwrap_libpam_sym(const char *name)
{
	pthread_once(&real_once, real_load);
	return libpam_handle != NULL ? dlsym(libpam_handle, name) : NULL;
}

const void *pwrap_libpam_base(void)
{
	return __atomic_load_n(&libpam_base, __ATOMIC_ACQUIRE);
}

bool pwrap_libpam_loaded(void)
{
	return dl_iterate_phdr(find_libpam, NULL) != 0;
}

/* <directory of the object that defines sym>/sub, malloc'd, or NULL. */
static char *dir_of(const void *sym, const char *sub)
{
	Dl_info info;
	char *self, *slash;
	char *dir = NULL;

	if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL) {
		return NULL;
	}
	self = realpath(info.dli_fname, NULL);
	if (self != NULL && (slash = strrchr(self, '/')) != NULL) {
		*slash = '\0';
		dir = pwrap_join(self, sub);
	}
	free(self);
	return dir;
}

/* Computed once and kept for the life of the process. */
static char *moddir;
static char *sysmoddir;
static pthread_once_t dirs_once = PTHREAD_ONCE_INIT;

static void dirs_load(void)
{
	moddir = dir_of((const void *)pwrap_enabled, "pam_wrapper");
#if defined(PWRAP_OPENPAM)
	/* OpenPAM: openpam/ next to libpam when there (a build with
	 * --with-modules-dir), else libpam's own directory (FreeBSD) */
	sysmoddir = dir_of((const void *)pwrap_real()->pam_start, "openpam");
	if (sysmoddir != NULL && access(sysmoddir, X_OK) != 0) {
		free(sysmoddir);
		sysmoddir = dir_of((const void *)pwrap_real()->pam_start, ".");
	}
#else
	sysmoddir = dir_of((const void *)pwrap_real()->pam_start, "security");
#endif
}

const char *pwrap_moddir(void)
{
	pthread_once(&dirs_once, dirs_load);
	return moddir;
}

const char *pwrap_sysmoddir(void)
{
	pthread_once(&dirs_once, dirs_load);
	return sysmoddir;
}

/*
 * A module whose path libpam would split (our library installed below a
 * directory with a blank in its name) is named through a link in conf/.m/,
 * whose path has none (the runtime directory never has one).
 */
static char *module_link(const char *conf, const char *target,
			 const char *module)
{
	pwrap_path dir, link;
	char now[sizeof(pwrap_path)];
	ssize_t n;

	if (!pwrap_pjoin(dir, conf, ".m") || !pwrap_pjoin(link, dir, module)) {
		return NULL;
	}
	(void)mkdir(dir, 0755);
	n = readlink(link, now, sizeof(now) - 1);
	if (n < 0 || (size_t)n != strlen(target) ||
	    memcmp(now, target, (size_t)n) != 0) {
		(void)unlink(link);
		if (symlink(target, link) != 0) {
			bool full = pwrap_rundir_no_space(errno);

			PWRAP_LOG(full ? PWRAP_LOG_DEBUG : PWRAP_LOG_ERROR,
				  "cannot link %s to %s: %s", link, target,
				  strerror(errno));
			return NULL;
		}
	}
	return strdup(link);
}

char *pwrap_module_path(const char *conf, const char *module, const char *src,
			unsigned line)
{
	const char *ours, *sys;
	pwrap_path p;

	if (strchr(module, '/') != NULL) {
		return NULL;	/* a path: nothing to resolve (or to look up) */
	}
	ours = pwrap_moddir();
	sys = pwrap_sysmoddir();
	if (ours == NULL) {
		return NULL;
	}
	if (sys != NULL && pwrap_pjoin(p, sys, module) &&
	    access(p, F_OK) == 0) {
		return NULL;	/* the system has it: libpam finds it */
	}
	if (pwrap_pjoin(p, ours, module) && access(p, F_OK) == 0) {
		return strpbrk(p, " \t\n#") == NULL ? strdup(p)
						     : module_link(conf, p, module);
	}
	PWRAP_LOG(PWRAP_LOG_WARN, "%s:%u: module %s is neither in %s nor in %s",
		  src, line, module, sys ? sys : "?", ours);
	return NULL;
}

