/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding the real libpam: the functions our exported ones forward to, and
 * where modules named bare are found: the loaded libpam's own modules
 * (bare when libpam itself finds that file, else by absolute path), then
 * libpam's search path, then ours; a name found nowhere is reported with
 * the directories searched.  libpam_wrapper.so does not link libpam (that
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
static struct pamconf_rules rules;
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
		pamconf_rules_detect(&rules, NULL, NULL);
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
	/* OpenPAM's compiled-in module search path (exported data) */
	real.openpam_module_path = dlsym(h, "openpam_module_path");
	if (real.pam_start != NULL &&
	    dladdr(*(void **)&real.pam_start, &info) != 0) {
		__atomic_store_n(&libpam_base, info.dli_fbase,
				 __ATOMIC_RELEASE);
	}
	/* how it reads service files, told from the library itself */
	pamconf_rules_detect(&rules, h, *(void **)&real.pam_start);
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

const struct pamconf_rules *pwrap_rules(void)
{
	pthread_once(&real_once, real_load);
	return &rules;
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

/* <directory of the object that defines sym>/sub (sub NULL: the
 * directory), malloc'd, or NULL. */
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
		dir = sub != NULL ? pwrap_join(self, sub) : strdup(self);
	}
	free(self);
	return dir;
}

/* Computed once and kept for the life of the process. */
static char *moddir;		/* ours */
static char *sysmoddir;		/* the loaded libpam's modules */
static pthread_once_t dirs_once = PTHREAD_ONCE_INIT;
static void dirs_load(void)
{
	const void *pam = (const void *)pwrap_real()->pam_start;

	moddir = dir_of((const void *)pwrap_enabled, "pam_wrapper");
	if (pwrap_rules()->impl == PAMCONF_OPENPAM) {
		/* OpenPAM installs its modules into openpam/ next to libpam
		 * (built with --with-modules-dir), else next to libpam itself
		 * (a default build; FreeBSD's /usr/lib) */
		sysmoddir = dir_of(pam, "openpam");
		if (sysmoddir != NULL && access(sysmoddir, X_OK) != 0) {
			free(sysmoddir);
			sysmoddir = dir_of(pam, NULL);
		}
	} else {
		sysmoddir = dir_of(pam, "security");
	}
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
	if (mkdir(dir, 0755) == 0) {
		(void)chmod(dir, 0755);	/* whatever the umask */
	}
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

/* The absolute path a module token becomes (malloc'd), or NULL: through
 * a link when libpam would not take the path as one word (Linux-PAM splits
 * at blanks and cuts at '#'; OpenPAM takes only letters, digits, '.', '_',
 * '-' and '/' in a module name). */
static char *module_abs(const char *conf, const char *path,
			const char *module)
{
	return pamconf_module_plain(pwrap_rules(), path)
		       ? strdup(path)
		       : module_link(conf, path, module);
}

/* The first file of module's names in dir: true with its path in out;
 * else false and *why says why the last one failed (ENOENT: none is there,
 * ENOTDIR/ENOENT of the directory itself included). */
static bool find_in(const char *dir, const char *module, pwrap_path out,
		    int *why)
{
	char names[2][PAMCONF_NAME_MAX + 1];
	size_t n = pamconf_module_names(pwrap_rules(), module, names);

	*why = n == 0 ? ENAMETOOLONG : ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (!pwrap_pjoin(out, dir, names[i])) {
			*why = ENAMETOOLONG;
		} else if (access(out, F_OK) == 0) {
			return true;
		} else {
			*why = errno;
		}
	}
	return false;
}

/* The directories libpam itself searches for a bare name, in its order:
 * OpenPAM's compiled-in openpam_module_path (when the library exports it),
 * Linux-PAM's <libdir>/security (its DEFAULT_MODULE_PATH in the builds we
 * know; the library does not export it). */
static const char *const *libpam_path(const char *sys, const char *one[2])
{
	const char *const *v = pwrap_real()->openpam_module_path;

	if (v != NULL) {
		return v;
	}
	one[0] = sys;
	one[1] = NULL;
	return one;
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Appends "DIR (what it is[: why])" to the list of directories searched
 * in msg; why is left out when it is a plain "not there". */
static void add_searched(char *msg, size_t cap, const char *dir,
			 const char *what, int why)
{
	size_t used = strlen(msg);

	if (used + 1 >= cap) {
		return;
	}
	snprintf(msg + used, cap - used, "%s%s (%s%s%s)", used ? ", " : "",
		 dir, what, why == ENOENT ? "" : ": ",
		 why == ENOENT ? "" : strerror(why));
}

char *pwrap_module_path(const char *conf, const char *module, bool quiet,
			const char *src, unsigned line)
{
	const char *one[2];
	const char *const *path;
	const char *ours, *sys;
	char searched[1024] = "";
	char names[2][PAMCONF_NAME_MAX + 1];
	pwrap_path p, q;
	size_t i, n;
	int why;

	if (strchr(module, '/') != NULL) {
		return NULL;	/* a path: nothing to resolve (or to look up) */
	}
	ours = pwrap_moddir();
	sys = pwrap_sysmoddir();
	path = libpam_path(sys, one);
	/* the loaded libpam's own module: bare when libpam finds that very
	 * file by the name, else by its path (OpenPAM built into a prefix
	 * searches only its compiled-in path, /usr/lib:/usr/local/lib) */
	if (sys != NULL && find_in(sys, module, p, &why)) {
		for (i = 0; path[i] != NULL; i++) {
			if (find_in(path[i], module, q, &why)) {
				return same_file(p, q)
					       ? NULL
					       : module_abs(conf, p, module);
			}
		}
		return module_abs(conf, p, module);
	}
	if (sys != NULL) {
		add_searched(searched, sizeof(searched), sys,
			     "the loaded libpam's modules", why);
	}
	for (i = 0; path[i] != NULL; i++) {
		if (path[i] == sys) {
			continue;
		}
		if (find_in(path[i], module, q, &why)) {
			return NULL;	/* libpam finds it by the name */
		}
		add_searched(searched, sizeof(searched), path[i],
			     "libpam's search path", why);
	}
	if (ours != NULL) {
		if (find_in(ours, module, p, &why)) {
			return module_abs(conf, p, module);
		}
		add_searched(searched, sizeof(searched), ours,
			     "pam_wrapper's modules", why);
	}
	n = pamconf_module_names(pwrap_rules(), module, names);
	PWRAP_LOG(quiet ? PWRAP_LOG_WARN : PWRAP_LOG_ERROR,
		  "%s:%u: module %s not found: looked for %s%s%s in %s; "
		  "libpam cannot load it", src, line, module,
		  n > 0 ? names[0] : module, n > 1 ? " and " : "",
		  n > 1 ? names[1] : "", searched);
	return NULL;
}
