/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bare libpam without pam_start_confdir (Linux-PAM before 1.4, OpenPAM)
 * reads /etc/pam.d: the differential test's client and fuzz_pamdiff give
 * it a directory of their own there, in a private mount namespace.
 */
#ifndef PWRAP_NS_H
#define PWRAP_NS_H

#include <stddef.h>

/* Enters a private mount namespace (a user namespace too when not root,
 * with the same ids inside) in which dir is mounted over /etc/pam.d and
 * the other places libpam looks (/usr/lib/pam.d, /usr/local/etc/pam.d,
 * pam.conf) are empty.  0, or -1 with why (n bytes) saying what failed;
 * the process is then half set up and should end. */
int pwrap_ns_enter(const char *dir, char *why, size_t n);

#endif
