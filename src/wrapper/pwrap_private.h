/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interfaces shared by the pieces of libpam_wrapper.so: logging,
 * the service-file rewriter (a pure function, fuzzed on its own), the
 * per-process runtime directory and the lookup of the real libpam symbols.
 * Nothing here is exported from the shared object (hidden visibility).
 */
#ifndef PWRAP_PRIVATE_H
#define PWRAP_PRIVATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PWRAP_HIDDEN __attribute__((visibility("hidden")))

enum pwrap_dbglvl {
	PWRAP_LOG_ERROR = 0,
	PWRAP_LOG_WARN = 1,
	PWRAP_LOG_DEBUG = 2,
	PWRAP_LOG_TRACE = 3,
};

/* Writes one `PWRAP_<LEVEL>[prog (pid)] - <func>: <msg>` line to stderr when
 * lvl <= PAM_WRAPPER_DEBUGLEVEL (errors always).  One write(2) per line. */
PWRAP_HIDDEN void pwrap_log(enum pwrap_dbglvl lvl, const char *func,
			    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define PWRAP_LOG(lvl, ...) pwrap_log((lvl), __func__, __VA_ARGS__)

/* True when PAM_WRAPPER starts with '1' and the process is not AT_SECURE. */
PWRAP_HIDDEN bool pwrap_enabled(void);

/*
 * Service-file rewriting.  The rewriter copies a Linux-PAM service file,
 * replacing include/substack/@include targets and module paths with what the
 * callbacks return.  Callbacks return a malloc'd replacement, or NULL to keep
 * the token as written.  `src_name` and line numbers are only used in
 * messages.  On success *out is a malloc'd NUL-terminated buffer owned by the
 * caller.  Returns 0, or -1 (ENOMEM).  Every output line ends in '\n',
 * except when the input ends inside a continued line: then the output ends
 * in a backslash, as libpam (which refuses such a file) would see it.
 */
struct pwrap_rewrite_ops {
	char *(*include_target)(void *ctx, const char *target,
				const char *src_name, unsigned line);
	char *(*module_path)(void *ctx, const char *module,
			     const char *src_name, unsigned line);
	void *ctx;
};
PWRAP_HIDDEN int pwrap_rewrite_service(const char *in, size_t len,
				       const char *src_name,
				       const struct pwrap_rewrite_ops *ops,
				       char **out, size_t *out_len);

/*
 * Prepares the private configuration directory for `service` (and "other")
 * from `svcdir` (the app's confdir, or PAM_WRAPPER_SERVICE_DIR when NULL).
 * On success returns PAM_SUCCESS and, unless confdir is NULL, a malloc'd path
 * for pam_start_confdir in *confdir (caller frees).  On failure logs why and returns a PAM error code.
 */
PWRAP_HIDDEN int pwrap_prepare(const char *service, const char *svcdir,
			       char **confdir);

/* Creates the runtime directory now if the process links libpam (so that
 * PAM_WRAPPER_RUNTIME_DIR exists before the first pam_start, as tests
 * written for upstream expect).  Called from the constructor when enabled. */
PWRAP_HIDDEN void pwrap_runtime_early(void);
/* Creates the runtime directory now (if it does not exist yet). */
PWRAP_HIDDEN void pwrap_runtime_now(void);

/* Removes a directory tree; safe to call in a freshly forked child. */
PWRAP_HIDDEN int pwrap_rmtree(const char *path);

/* The real libpam functions, looked up in libpam.so.0 (not RTLD_NEXT: libpam
 * may live in a dlopen'ed local scope, e.g. under Python). */
struct pwrap_real {
	int (*pam_start)(const char *, const char *, const void *, void **);
	int (*pam_start_confdir)(const char *, const char *, const void *,
				 const char *, void **);
	int (*pam_set_item)(void *, int, const void *);
	int (*pam_get_item)(const void *, int, const void **);
	void (*pam_vsyslog)(const void *, int, const char *, va_list);
	int (*audit_open)(void);
};
PWRAP_HIDDEN const struct pwrap_real *pwrap_real(void);

#endif
