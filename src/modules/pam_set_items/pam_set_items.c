/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_set_items: in every management group, sets each PAM item listed in
 * items.h to the value of the process environment variable of the same name
 * (PAM_USER=alice sets PAM_USER to "alice"); unset variables leave their
 * item alone.  Tests use it to feed items, even PAM_AUTHTOK, to the modules
 * stacked after it.  Always returns PAM_SUCCESS: a failed pam_set_item is
 * only logged.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <syslog.h>

#include <security/pam_appl.h>
#include "pam_compat.h"
#include <security/pam_modules.h>

#include "items.h"
#include "modutil.h"

static int psi_set_items(pam_handle_t *pamh, int flags, int argc,
			 const char **argv)
{
	(void)flags;
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < PWRAP_NITEMS; i++) {
		const char *v = getenv(pwrap_items[i].name);
		int rv;

		if (v == NULL) {
			continue;
		}
		/* libpam copies V; the environment keeps its own. */
		rv = pam_set_item(pamh, pwrap_items[i].type, v);
		if (rv != PAM_SUCCESS) {
			pam_syslog(pamh, LOG_WARNING, "cannot set %s: %s",
				   pwrap_items[i].name,
				   pam_strerror(pamh, rv));
		}
	}
	return PAM_SUCCESS;
}

PWRAP_ALL_ENTRY_POINTS(psi_set_items)
