/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The module API our modules use beyond XSSO, on Linux-PAM and on OpenPAM.
 * Linux-PAM declares pam_syslog in security/pam_ext.h; OpenPAM has none, so
 * there it is declared here and defined in modutil.c (hidden in each
 * module): it forwards to libpam_wrapper's pam_vsyslog when the wrapper is
 * loaded (the same PWRAP log lines as on Linux-PAM), else to syslog(3).
 * Code compiled outside a module (tests, fuzzers) brings its own.
 */
#ifndef PWRAP_PAM_COMPAT_H
#define PWRAP_PAM_COMPAT_H

#include <security/pam_appl.h>
#include <security/pam_modules.h>

#if defined(PWRAP_OPENPAM)
#include <security/openpam.h>

void pam_syslog(const pam_handle_t *pamh, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#else
#include <security/pam_ext.h>
#endif

#endif
