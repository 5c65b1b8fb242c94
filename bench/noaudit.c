/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Preloaded into the "bare" P2/P3 variant only: Linux-PAM run as root sends
 * a kernel audit record for every authenticate/acct_mgmt (a netlink
 * round trip), which both wrappers switch off by answering audit_open()
 * with EPROTONOSUPPORT.  Doing the same here makes "bare" the very same
 * work as the wrapped runs minus the wrapper, so ours/bare measures the
 * wrapper alone.  (The bench also reports bare with audit, for reference.)
 */
#include <errno.h>

__attribute__((visibility("default"))) int audit_open(void);
int audit_open(void)
{
	errno = EPROTONOSUPPORT;
	return -1;
}
