/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interfaces shared by the pieces of libpam_wrapper.so.  The layers,
 * each calling only the ones below it:
 *
 *   pwrap.c           the exported entry points (pam_start, ...)
 *   pwrap_legacy.c    libpam without pam_start_confdir: its fopen calls
 *                     of pam.d files are sent to the prepared conf/
 *   pwrap_prepare.c   service name -> prepared conf/ directory (the lock)
 *   pwrap_walk.c      conf/ for one service: its files and includes as
 *                     libpam reads them, rewritten
 *   pwrap_services.c  services/: the service directory's files, a test's win
 *   pwrap_rundir.c    the runtime directory: create, lock, check;
 *                     pwrap_base.c: where (trusted bases);
 *                     pwrap_sweep.c: removing unused ones
 *   pwrap_uid.c       setuid and friends: the directory goes before a
 *                     switch of uid for good, stays through one for a
 *                     while; pwrap_cred.c: whose directories to trust
 *   pwrap_conf.c      the rewriter, a pure function (text in, text out)
 *   pwrap_file.c, pwrap_libpam.c, pwrap_log.c, pwrap_list.c
 *                     helpers, the real libpam, the list and string vector
 *   ../common/        shared with the tools: the growing string and its
 *                     escapes (pwrap_buf.h), PAM's name tables
 *                     (pwrap_names.h), tree removal (pwrap_rmtree.h)
 *
 * Nothing here is exported from the shared object (hidden visibility).
 */
#ifndef PWRAP_PRIVATE_H
#define PWRAP_PRIVATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "pamconf.h"
#include "pwrap_buf.h"
#include "pwrap_base.h"
#include "pwrap_rmtree.h"

#define PWRAP_HIDDEN __attribute__((visibility("hidden")))
#define PWRAP_EXPORT __attribute__((visibility("default")))

enum pwrap_dbglvl {
	PWRAP_LOG_ERROR = 0,
	PWRAP_LOG_WARN = 1,
	PWRAP_LOG_DEBUG = 2,
	PWRAP_LOG_TRACE = 3,
	/* A warning the user must see with PAM_WRAPPER_DEBUGLEVEL unset (a
	 * fall-back, a pass-through): labelled WARN, printed at every level. */
	PWRAP_LOG_NOTICE = 4,
};

/* Writes one `PWRAP_<LEVEL>[prog (pid)] - <func>: <msg>` line to stderr when
 * lvl <= PAM_WRAPPER_DEBUGLEVEL (errors and notices always).  One write(2)
 * per line; a message longer than a line (4 KiB) is cut. */
PWRAP_HIDDEN void pwrap_log(enum pwrap_dbglvl lvl, const char *func,
			    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define PWRAP_LOG(lvl, ...) pwrap_log((lvl), __func__, __VA_ARGS__)

/* True when PAM_WRAPPER starts with '1' and the process is not AT_SECURE. */
PWRAP_HIDDEN bool pwrap_enabled(void);

/*
 * Service-file rewriting: pamconf_rewrite() (src/pamconf, the one reader of
 * PAM's configuration) with the wrapper's logging: a replacement not made
 * is a warning, a refused file an error naming src and the line.  The
 * rules are those of the loaded libpam (pwrap_rules()); 0, or -1 with errno
 * (ENOMEM, EINVAL, E2BIG: see pamconf_rewrite).
 */
PWRAP_HIDDEN int pwrap_rewrite(const struct pamconf_rules *r, const char *in,
			       size_t len, const char *src,
			       const struct pamconf_ops *ops, char **out,
			       size_t *out_len);
/* The error line for a bad include line that libpam reads. */
PWRAP_HIDDEN void pwrap_log_bad_include(enum pamconf_bad_include why,
					const char *target, const char *src,
					unsigned line);
/* How the loaded libpam reads its configuration (told once, from the
 * library itself: pamconf_rules_detect); Linux-PAM's newest rules when no
 * libpam could be bound. */
PWRAP_HIDDEN const struct pamconf_rules *pwrap_rules(void);

/* ---- binding the real libpam (pwrap_libpam.c) -------------------------- */

/* The real libpam functions, looked up in the loaded libpam (not RTLD_NEXT: libpam
 * may live in a dlopen'ed local scope, e.g. under Python). */
struct pwrap_real {
	int (*pam_start)(const char *, const char *, const void *, void **);
	int (*pam_start_confdir)(const char *, const char *, const void *,
				 const char *, void **);
	int (*pam_set_item)(void *, int, const void *);
	int (*pam_end)(void *, int);
	int (*pam_get_item)(const void *, int, const void **);
	void (*pam_vsyslog)(const void *, int, const char *, va_list);
	int (*audit_open)(void);
	int (*openpam_set_feature)(int, int);	/* OpenPAM only */
	const char *const *openpam_module_path;	/* OpenPAM only, or NULL */
};
PWRAP_HIDDEN const struct pwrap_real *pwrap_real(void);
/* Any other function of that libpam (dlsym), or NULL. */
PWRAP_HIDDEN void *pwrap_libpam_sym(const char *name);

/* The load address of that libpam (for telling its calls from others'), or
 * NULL before pwrap_real() found it.  Never loads anything. */
PWRAP_HIDDEN const void *pwrap_libpam_base(void);

/* Whether transactions take the legacy path even when libpam has
 * pam_start_confdir (the PAM_WRAPPER_FORCE_LEGACY build option). */
PWRAP_HIDDEN bool pwrap_force_legacy(void);

/* ---- the legacy path (pwrap_legacy.c) ----------------------------------- */

/* Called before libpam's pam_start on the legacy path: from now on libpam's
 * own fopen calls of pam.d files are answered from conf/. */
PWRAP_HIDDEN void pwrap_legacy_start(void);
/* How many of libpam's configuration opens this thread has answered so far
 * (a pam_start that answered none did not go through us). */
PWRAP_HIDDEN unsigned long pwrap_legacy_seen(void);

/* Whether libpam is already loaded in this process (no dlopen). */
PWRAP_HIDDEN bool pwrap_libpam_loaded(void);

/* Where modules named without a '/' are looked for: ours
 * (<dir of libpam_wrapper.so>/pam_wrapper) and the loaded libpam's (<dir of
 * libpam>/security; OpenPAM: <dir of libpam>/openpam, else its directory).
 * NULL when unknown.  Computed once. */
PWRAP_HIDDEN const char *pwrap_moddir(void);
PWRAP_HIDDEN const char *pwrap_sysmoddir(void);

/*
 * What a module token of a service file becomes: NULL to keep it (a path,
 * a module libpam itself finds by the name, or one found nowhere: logged
 * with src:line and the directories searched, as an error unless `quiet`),
 * else the malloc'd absolute path of the module (one of ours, or the
 * loaded libpam's own module where libpam would not find it by the name);
 * a path libpam would split goes through a link in conf/.m/.
 */
PWRAP_HIDDEN char *pwrap_module_path(const char *conf, const char *module,
				     bool quiet, const char *src,
				     unsigned line);

/* ---- small file helpers (pwrap_file.c) ---------------------------------- */

/* Path buffers of the hot path live on the stack. */
typedef char pwrap_path[4096];

/* out = a "/" b; false when it does not fit. */
PWRAP_HIDDEN bool pwrap_pjoin(pwrap_path out, const char *a, const char *b);
/* The same, malloc'd (owned by the caller), or NULL. */
PWRAP_HIDDEN char *pwrap_join(const char *a, const char *b);

/* What tells that a file changed: identity, size and time stamps. */
struct pwrap_sig {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim;
	struct timespec ctim;
};
/* The signature of the regular file at path (symlinks followed). */
PWRAP_HIDDEN bool pwrap_sig_of(const char *path, struct pwrap_sig *sig);
PWRAP_HIDDEN bool pwrap_sig_eq(const struct pwrap_sig *a,
			       const struct pwrap_sig *b);

/* Reads a whole regular file, of any size (no more than its size when
 * opened: it never reads without bound); *buf is malloc'd (caller frees)
 * and NUL-terminated.  -1 with errno set (EINVAL: not a regular file). */
PWRAP_HIDDEN int pwrap_read_file(const char *path, char **buf, size_t *len);
/* Writes buf to path so that no reader sees part of it: a temporary file in
 * the same directory, then rename; when the caller knows path is new
 * (`fresh`), in place (a file that does not exist is read by nobody), the
 * rename way if it exists after all.  -1 with errno set; nothing half
 * written is left. */
PWRAP_HIDDEN int pwrap_write_file(const char *path, const char *buf,
				  size_t len, bool fresh);
/* Whether a file may grow from size to size + len under the file size
 * limit (RLIMIT_FSIZE, ulimit -f): a write past it would end the program
 * with SIGXFSZ.  When not, errno is EFBIG. */
PWRAP_HIDDEN bool pwrap_fsize_allows(off_t size, size_t len);

/* ---- lists of named entries (pwrap_list.c) ----------------------------- */

/*
 * An entry of one of the wrapper's lists starts with this (its first
 * member, so a pointer to it is a pointer to the entry).  name is the key,
 * malloc'd and owned by the entry; a list is a pointer to its first entry.
 */
struct pwrap_entry {
	struct pwrap_entry *next;
	char *name;
};
/* The entry called name, or NULL. */
PWRAP_HIDDEN struct pwrap_entry *pwrap_list_find(struct pwrap_entry *head,
						 const char *name);
/* Puts e first in the list. */
PWRAP_HIDDEN void pwrap_list_push(struct pwrap_entry **head,
				  struct pwrap_entry *e);
/* Takes the entry called name (NULL: the first) out of the list and
 * returns it, now the caller's to free; NULL when there is none. */
PWRAP_HIDDEN struct pwrap_entry *pwrap_list_take(struct pwrap_entry **head,
						 const char *name);
/* A vector of N malloc'd strings: frees them and V; appends a copy of S
 * (0, or -1 when out of memory). */
PWRAP_HIDDEN void pwrap_strv_free(char **v, size_t n);
PWRAP_HIDDEN int pwrap_strv_add(char ***v, size_t *n, const char *s);

/* ---- credentials (pwrap_cred.c) ---------------------------------------- */

/* A process's real, effective and saved uid. */
struct pwrap_ids {
	uid_t r, e, s;
};
/* The kernel's (not uid_wrapper's or fakeroot's made-up ones). */
PWRAP_HIDDEN void pwrap_ids_real(struct pwrap_ids *ids);
/* Whether a process with ids may read a stack from a directory of owner:
 * root's, or one of a uid that is all three of its uids. */
PWRAP_HIDDEN bool pwrap_ids_trust(const struct pwrap_ids *ids, uid_t owner);
/* The same for this process now; *ids (may be NULL) gets its ids. */
PWRAP_HIDDEN bool pwrap_owner_trusted(uid_t owner, struct pwrap_ids *ids);
/* Whether owner is root or the process's real or effective uid: not
 * another user (for files the process writes into). */
PWRAP_HIDDEN bool pwrap_owner_ours(uid_t owner);
/* Sets the effective uid of the calling thread only (Linux; elsewhere,
 * or when refused, false): for the last clean-up of a process that ends
 * while it runs as another euid for a while. */
PWRAP_HIDDEN bool pwrap_thread_euid(uid_t euid);

/* ---- where runtime directories go: src/common/pwrap_base.h ------------ */

/* ---- the runtime directory (pwrap_rundir.c) ----------------------------- */

/*
 * base/pam_wrapper.<pid>.XXXXXX/ with .lock, services/ (exported as
 * PAM_WRAPPER_RUNTIME_DIR) and conf/ (what libpam reads; conf/.inc/, made
 * when first needed, holds included files).  Not thread-safe: callers
 * serialise (pwrap_prepare.c).
 */
struct pwrap_rundir {
	const char *top;
	const char *svc;
	const char *conf;
};

#define PWRAP_LOCK_NAME ".lock"
#define PWRAP_PREFIX "pam_wrapper"
#define PWRAP_KEPT_PREFIX "pam_wrapper_kept"

/* Whether fd is open on the file (dev, ino). */
PWRAP_HIDDEN bool pwrap_fd_is(int fd, dev_t dev, ino_t ino);
/* Removes base/name (basefd stays open) if nobody holds its lock and it
 * is ours: its .lock is the file (ldev, lino), or, with lino 0 (the
 * sweep), the directory belongs to uid (pwrap_sweep.c).  True when it
 * removed it. */
PWRAP_HIDDEN bool pwrap_reap(int basefd, const char *name, uid_t uid,
			     dev_t ldev, ino_t lino);
/* Removes unused runtime directories of uid in base, except mine: of the
 * others it looks at PWRAP_SWEEP_MAX at most, picked at random. */
#define PWRAP_SWEEP_MAX 8
PWRAP_HIDDEN void pwrap_sweep(const char *base, const char *mine, uid_t uid);

/*
 * Makes sure this process has a live runtime directory that is still the
 * one it made: it holds the lock, and conf/ has the identity it had when
 * made.  Otherwise (none yet, inherited from the parent of a fork, gone,
 * renamed or replaced, or full: see pwrap_rundir_no_space) a new one is
 * made in the first trusted base that takes it.  Returns 0 when the one it
 * had is still good, 1 when a new one was made (empty services/ and conf/),
 * -1 on failure (logged, with the real cause).
 */
PWRAP_HIDDEN int pwrap_rundir_ensure(void);
/* Whether conf/ of the current directory is still what we made (errno
 * EEXIST: something else is at its path). */
PWRAP_HIDDEN bool pwrap_rundir_intact(void);
/* The current directory (NULL fields before the first ensure). */
PWRAP_HIDDEN const struct pwrap_rundir *pwrap_rundir(void);
/* True when the current directory was made by another process (the parent
 * of a fork): the next ensure makes this process its own. */
PWRAP_HIDDEN bool pwrap_rundir_inherited(void);
/* A write into the runtime directory failed with err: true when for lack of
 * space (ENOSPC, EDQUOT); the directory is then marked full (see
 * pwrap_rundir_full) and the next ensure replaces it by one in another
 * base.  The caller logs such a failure at debug level only. */
PWRAP_HIDDEN bool pwrap_rundir_no_space(int err);
PWRAP_HIDDEN bool pwrap_rundir_full(void);
/* The real file-system uid that owns the directories this process holds
 * (made or inherited from the parent of a fork), or (uid_t)-1 when it
 * holds none. */
PWRAP_HIDDEN uid_t pwrap_rundir_owner(void);
/* Before a switch of uid after which the process could not remove them:
 * the directory it made (and one it inherited before that) is let go of,
 * removed when nobody else holds it, and forgotten; one it inherited and
 * still uses is removed and forgotten only when nobody else holds it,
 * else left as it is.  True when PAM_WRAPPER_RUNTIME_DIR needs a new
 * one. */
PWRAP_HIDDEN bool pwrap_rundir_drop(void);
/* In the parent of daemon(3), right after its fork (it only calls _exit
 * then): its holds on the directories go (descriptor and mapping, never
 * flock(LOCK_UN), which would free the child's too), the directories are
 * removed if the child let go of them already, and forgotten: whichever
 * of the two lets go last removes them, whenever the parent's _exit
 * comes. */
PWRAP_HIDDEN void pwrap_rundir_parent_leaves(void);
/* A descriptor of conf/ checked to be the one we made (kept; never close
 * it), or -1 (errno EEXIST: replaced). */
PWRAP_HIDDEN int pwrap_rundir_conf_fd(void);
/* Whether this process may read stacks from the current directory, given
 * its credentials now (pwrap_cred.c); when not, the error is said. */
PWRAP_HIDDEN bool pwrap_rundir_trusted(void);
/* Makes the current directory searchable by every uid (0711), or private
 * again (0700), for a process that runs as another euid for a while. */
PWRAP_HIDDEN void pwrap_rundir_searchable(bool on);
/* Whether this process made the current directory searchable. */
PWRAP_HIDDEN bool pwrap_rundir_searchable_now(void);

/* ---- preparation (pwrap_prepare.c, pwrap_walk.c, pwrap_services.c) ------ */

/*
 * Prepares the private configuration directory for `service` (and "other")
 * from `svcdir` (the app's confdir, or PAM_WRAPPER_SERVICE_DIR when NULL).
 * On success returns PAM_SUCCESS and, unless confdir is NULL, a malloc'd path
 * for pam_start_confdir in *confdir (caller frees).  On failure logs why and
 * returns a PAM error code.
 */
PWRAP_HIDDEN int pwrap_prepare(const char *service, const char *svcdir,
			       char **confdir);

/* Opens conf/name of the current runtime directory for reading, through
 * the descriptor of conf/ (the legacy path): a descriptor, or -1 with
 * errno set.  Only a service's name (pwrap_name_is_service).  Takes the
 * preparation lock: never call it with that lock held. */
PWRAP_HIDDEN int pwrap_prepared_open(const char *name);

/* A call that sets uids (pwrap_uid.c): which one, and its arguments
 * ((uid_t)-1: unchanged; setuid and seteuid give theirs in e). */
enum pwrap_uid_fn {
	PWRAP_SETUID,
	PWRAP_SETEUID,
	PWRAP_SETREUID,
	PWRAP_SETRESUID,
};
struct pwrap_uid_call {
	enum pwrap_uid_fn fn;
	uid_t r, e, s;
};
/* Before the call: takes the preparation lock (held until
 * pwrap_uid_after, so that no thread prepares across the switch) and gets
 * the runtime directories ready for the credentials the call gives: for
 * good away from their owner, they go (test's files kept in memory); for
 * a while, they stay and are made searchable.  Returns what
 * pwrap_uid_after must do. */
#define PWRAP_UID_WENT 1u	/* a new directory is needed */
#define PWRAP_UID_OPENED 2u	/* the directory is searchable */
PWRAP_HIDDEN unsigned pwrap_uid_before(const struct pwrap_uid_call *call);
/* After the call: a new directory (PWRAP_UID_WENT), or mode 0700 again
 * when the process is back at the owner's euid; releases the lock. */
PWRAP_HIDDEN void pwrap_uid_after(unsigned what);
/* Whether this process is a child of fork(2) (whose fork handlers ran):
 * not the process that made its runtime directory, and not a child of
 * vfork(2), which shares its parent's memory. */
PWRAP_HIDDEN bool pwrap_fork_child(void);

/*
 * Brings conf/ up to date for the service file `name` (libpam's view of the
 * service name) and "other", from src and services/ (pwrap_walk.c).
 * Returns PAM_SUCCESS, PAM_SERVICE_ERR (neither file exists) or PAM_ABORT
 * (logged); *suspect says that files of ours vanished, so the runtime
 * directory needs a look.  walk_forget drops what it knows of conf/ (a new
 * runtime directory).  Both with the preparation lock held.
 */
struct pwrap_source;
PWRAP_HIDDEN int pwrap_walk_update(const struct pwrap_source *src,
				   const char *name, bool *suspect);
PWRAP_HIDDEN void pwrap_walk_forget(void);

/* Creates the runtime directory now if the process links libpam (so that
 * PAM_WRAPPER_RUNTIME_DIR exists before the first pam_start, as tests
 * written for upstream expect).  Called from the constructor when enabled. */
PWRAP_HIDDEN void pwrap_runtime_early(void);
/* Creates the runtime directory now (if it does not exist yet). */
PWRAP_HIDDEN void pwrap_runtime_now(void);

/*
 * Where service files come from: a directory, or (as upstream allows) a
 * single file, when PAM_WRAPPER_SERVICE_DIR names one: then dir is its
 * directory and only its name, the one service it provides.
 */
struct pwrap_source {
	const char *dir;
	const char *only;	/* NULL: every file of dir */
};

/*
 * services/ mirrors the service directory; a file a test wrote there wins.
 * Called with the preparation lock held.
 */
/*
 * The service files to use: svcdir (an application's confdir), else
 * PAM_WRAPPER_SERVICE_DIR (a relative value resolved when first seen).
 * False when there are none (logged when `log`).  The strings live until
 * the next call.
 */
PWRAP_HIDDEN bool pwrap_source_of(const char *svcdir, struct pwrap_source *src,
				  bool log);
/* For messages: the directory, or the single file, of a source. */
PWRAP_HIDDEN const char *pwrap_source_shown(const struct pwrap_source *src);

/* Whether name can be a file of services/ (no '/', no leading '.'). */
PWRAP_HIDDEN bool pwrap_name_is_plain(const char *name);
/* Whether libpam reads a file of that name in its configuration directory
 * for a service of that name: not empty, no '/', not "." or ".." (which it
 * reads as empty directories) and not one of the names the wrapper keeps
 * for itself in conf/ (pwrap_name_reserved: .inc and .m). */
PWRAP_HIDDEN bool pwrap_name_is_service(const char *name);
PWRAP_HIDDEN bool pwrap_name_reserved(const char *name);
/* Before a new runtime directory replaces the current one (inherited,
 * full, or before a switch of uid): remembers the files a test wrote into
 * its services/ (added to what is remembered already). */
PWRAP_HIDDEN void pwrap_services_save(void);
/* After a new runtime directory was made: fills services/ from src (NULL:
 * nothing) and puts back what pwrap_services_save() kept (kept on when the
 * directory turned out full, for the next one). */
PWRAP_HIDDEN void pwrap_services_fill(const struct pwrap_source *src);
/*
 * The file libpam should see for name: services/name when a test wrote or
 * changed it, else a fresh copy of the source's file.  Returns true with its
 * path, the path to name in messages (the user's file: the test's file in
 * services/, or the service directory's file) and its signature; *suspect is
 * set when a file of ours vanished (someone tidied the runtime directory),
 * *failed when the file is there but could not be copied (logged with the
 * cause: a full file system, a file too large).
 */
PWRAP_HIDDEN bool pwrap_services_source(const struct pwrap_source *src,
					const char *name, pwrap_path out,
					pwrap_path shown, struct pwrap_sig *sig,
					bool *suspect, bool *failed);

#endif
