/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Logging of libpam_wrapper.so.  Lines go to stderr in the format users of
 * upstream grep for: `PWRAP_<LEVEL>[<program> (<pid>)] - <function>: <msg>`.
 * PAM_WRAPPER_DEBUGLEVEL is read at each call so tests may change it at run
 * time.  Each line is written with a single write(2) so that lines of
 * concurrent processes and threads do not interleave.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pwrap_private.h"

static int pwrap_debuglevel(void)
{
	const char *s = getenv("PAM_WRAPPER_DEBUGLEVEL");
	char *end = NULL;
	long v;

	if (s == NULL || *s == '\0') {
		return PWRAP_LOG_ERROR;
	}
	v = strtol(s, &end, 10);
	if (end == s || v < 0) {
		return PWRAP_LOG_ERROR;
	}
	return v > PWRAP_LOG_TRACE ? PWRAP_LOG_TRACE : (int)v;
}

/* The program's name for the line's prefix. */
static const char *prog_name(void)
{
#if defined(__GLIBC__)
	return program_invocation_short_name;
#else
	return getprogname();
#endif
}

static bool pwrap_log_wanted(enum pwrap_dbglvl lvl)
{
	return lvl == PWRAP_LOG_ERROR || lvl == PWRAP_LOG_NOTICE ||
	       (int)lvl <= pwrap_debuglevel();
}

__attribute__((format(printf, 3, 0)))
static void pwrap_vlog(enum pwrap_dbglvl lvl, const char *func,
		       const char *fmt, va_list ap)
{
	static const char *const names[] = { "ERROR", "WARN", "DEBUG", "TRACE",
					     "WARN" };
	char line[4096];
	int saved_errno = errno;
	int n, m;

	if (!pwrap_log_wanted(lvl)) {
		return;
	}
	n = snprintf(line, sizeof(line), "PWRAP_%s[%s (%ld)] - %s: ",
		     names[lvl], prog_name(), (long)getpid(),
		     func);
	if (n < 0 || (size_t)n >= sizeof(line) - 2) {
		goto out;
	}
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0) {
		goto out;
	}
	n += m;
	if ((size_t)n > sizeof(line) - 2) {
		n = (int)sizeof(line) - 2;	/* truncated message */
	}
	line[n++] = '\n';
	/* Best effort: a failed diagnostic write must not change behaviour. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		goto out;
	}
out:
	errno = saved_errno;
}

void pwrap_log(enum pwrap_dbglvl lvl, const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pwrap_vlog(lvl, func, fmt, ap);
	va_end(ap);
}
