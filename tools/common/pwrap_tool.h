/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the command-line tools pam_wrapper(1) and pamtest(1):
 * finding libpam_wrapper.so and our module directory, building LD_PRELOAD,
 * private temporary directories and the small files (passdb, service files)
 * written into them.  Everything here reports problems with warnx() and
 * returns -1/NULL so that each tool decides its own exit status.
 */
#ifndef PWRAP_TOOL_H
#define PWRAP_TOOL_H

#include <stddef.h>
#include <sys/types.h>

#include "pwrap_buf.h"
#include "pwrap_rmtree.h"

/* Where the wrapper lives.  Both strings are malloc'd and owned by the struct. */
struct pwrap_paths {
	char *lib;    /* .../libpam_wrapper.so */
	char *moddir; /* .../pam_wrapper (our modules) */
};

/*
 * Locate libpam_wrapper.so: opt_lib, else $PAM_WRAPPER_LIB, else relative to
 * the running executable (bin/../lib for the build tree, then the installed
 * bindir->libdir relation), else the configured install libdir.  The module
 * directory is opt_moddir, else $PAM_WRAPPER_MODULE_DIR, else "pam_wrapper"
 * next to the library.  Returns 0, or -1 after a warning naming what was tried.
 */
int pwrap_locate(const char *opt_lib, const char *opt_moddir, struct pwrap_paths *out);
void pwrap_paths_free(struct pwrap_paths *p);

/*
 * Put the colon-separated `libs` in front of LD_PRELOAD, keeping sanitizer
 * runtimes that are already there first (ASan insists on coming first).
 * Returns 0 or -1.
 */
int pwrap_preload_prepend(const char *libs);

/*
 * A private directory of a tool (pwrap_tmp.c): made 0700 in the first
 * trusted base ($TMPDIR resolved, /dev/shm, /tmp: owned by this process's
 * user or root, writable by nobody else unless sticky; a base passed over
 * is named once on stderr), or inside the directory given to
 * pwrap_set_tmpbase(); held by descriptor until pwrap_tmp_remove() or
 * pwrap_tmp_keep().  The struct is malloc'd and owned by the caller.
 */
struct pwrap_tmp {
	char *path;		/* absolute: what the wrapper and libpam get */
	const char *name;	/* its last component (inside path) */
	int fd;			/* the directory */
	int parent;		/* the directory it was made in */
	dev_t dev, pdev;	/* device and inode of both */
	ino_t ino, pino;
};
/* "<prefix>.XXXXXX"; NULL after a warning. */
struct pwrap_tmp *pwrap_tmp_make(const char *prefix);
/* Removes t with all it holds and frees t: its contents through its
 * descriptor, its name from the base's descriptor, only while that name
 * is still t (else left alone, said).  0, or -1 after a warning. */
int pwrap_tmp_remove(struct pwrap_tmp *t);
/* Leaves t's directory in place (--keep) and frees t. */
void pwrap_tmp_keep(struct pwrap_tmp *t);
/* Make later pwrap_tmp_make() calls create inside dir (not copied; NULL:
 * in the trusted bases again). */
void pwrap_set_tmpbase(const struct pwrap_tmp *dir);
/* pwrap_tool_write_file() into t, through its descriptor. */
int pwrap_tmp_write(const struct pwrap_tmp *t, const char *name,
		    const char *content, char **path_out);

/*
 * Create dir/name with `content` (mode 0644, must not exist yet).  On success
 * *path_out (if not NULL) gets the malloc'd full path.  Returns 0 or -1.
 */
int pwrap_tool_write_file(const char *dir, const char *name, const char *content,
		     char **path_out);

/*
 * Replace (or create) dir/name with `content`, mode 0644: written to a
 * temporary file next to it, then renamed over it, so a reader (and
 * nss_wrapper, which reloads a file whose identity changed) sees the old
 * file or the new one.  Returns 0 or -1 after a warning.
 */
int pwrap_replace_file(const char *dir, const char *name, const char *content);

/* A group of pwrap_nss_files(): its members, comma-separated. */
struct pwrap_nss_group {
	const char *name;
	const char *members;
};

/*
 * nss_wrapper's passwd and group files, dir/passwd and dir/group (replaced
 * whole): root, the calling user and its primary group (so `id` and
 * friends keep working), each user (duplicates once) with uid = gid from
 * 1000 up (skipping the ids taken), home /home/USER and shell /bin/sh, a
 * group of the user's name, and each group with the next free gid and its
 * members (a group named as root's, the caller's or a user's own gives
 * that group its members).  *passwd and *group get the malloc'd paths.
 * Returns 0 or -1 after a warning.
 */
int pwrap_nss_files(const char *dir, const char *const *users, size_t nusers,
		    const struct pwrap_nss_group *groups, size_t ngroups,
		    char **passwd, char **group);

/* Is `name` usable as a service file name (non-empty, no '/', not . or ..)? */
int pwrap_valid_service_name(const char *name);

/*
 * Names that can never work, caught before anything runs.  Each returns
 * NULL when `name` works, else why not (a static string to print after
 * the name).  A passdb line starting with '#' is a comment to pam_matrix;
 * Linux-PAM lowercases the service name given to pam_start() (it reads the
 * lowercase file, modules see the lowercase name), so a service file or
 * passdb service with capitals is never used there (OpenPAM keeps case,
 * but refuses names with characters other than letters, digits, '.', '_'
 * and '-').
 */
const char *pwrap_user_name_problem(const char *name);
const char *pwrap_service_case_problem(const char *name);

/* Whether F is a list of pam_matrix account flags (expired, must_change,
 * locked) separated by ','. */
int tool_valid_account_flags(const char *f);

/*
 * The service file text that runs pam_matrix (module at `module`, which may be
 * a bare name) with passdb=`passdb` for all four management groups.  Malloc'd;
 * NULL after a warning when the passdb path cannot be written in a service
 * file.
 */
char *pwrap_matrix_service(const char *module, const char *passdb);


/*
 * Locate libnss_wrapper.so: $PAM_WRAPPER_NSS_LIB when set (and then only it),
 * else the path found at build time, else the usual library directories.
 * Malloc'd path, or NULL when it is not installed.
 */
char *pwrap_find_nss_wrapper(void);

/*
 * libpam's module directory, where it loads modules named without a path
 * from (Linux-PAM: security/ next to libpam; OpenPAM: openpam/ there, else
 * libpam's own directory).  Malloc'd, or NULL when unknown.
 */
char *system_module_dir(void);

#endif
