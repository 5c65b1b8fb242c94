/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The wrapper's use of the service-file rewriter (src/pamconf): libpam is
 * given a private copy of each service file in which (a) include/substack/
 * @include targets point at our own rewritten copies of the included files,
 * because Debian's libpam sends relative includes to /etc/pam.d even with a
 * confdir, and (b) bare names of our test modules become absolute paths,
 * because libpam looks for relative module names only in the system module
 * directory.  pamconf_rewrite() makes the copy, read exactly as libpam
 * reads the original; this file only says what went wrong, in the
 * wrapper's log, naming the user's file and line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "pwrap_private.h"

void pwrap_log_bad_include(enum pamconf_bad_include why, const char *target,
			   const char *src, unsigned line)
{
	if (why == PAMCONF_INCLUDE_NO_TARGET) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s:%u: include without a target, "
			  "on which libpam crashes; refusing the file", src,
			  line);
	} else if (why == PAMCONF_NAME_CRASHES) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s:%u: a module or substack named "
			  "\"%s\", on which libpam up to 1.5 may crash (a "
			  "half-made handler); refusing the file", src, line,
			  target);
	} else {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s:%u: with the include target "
			  "%s resolved the line would not fit libpam's "
			  "line buffer; shorten the line", src, line, target);
	}
}

static void warn(void *ctx, const char *src, unsigned line, const char *msg)
{
	(void)ctx;
	PWRAP_LOG(PWRAP_LOG_WARN, "%s:%u: %s", src, line, msg);
}

int pwrap_rewrite(const struct pamconf_rules *r, const char *in, size_t len,
		  const char *src, const struct pamconf_ops *ops, char **out,
		  size_t *out_len)
{
	struct pamconf_ops o = *ops;
	struct pamconf_err err;
	int rc;

	if (o.warn == NULL) {
		o.warn = warn;
	}
	rc = pamconf_rewrite(r, in, len, src, &o, out, out_len, &err);
	if (rc != 0 && err.why != NULL) {
		int saved = errno;

		PWRAP_LOG(PWRAP_LOG_ERROR, "%s:%u: %s", src, err.line, err.why);
		errno = saved;
	}
	return rc;
}
