/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_get_items: in every management group, puts "NAME=value" into the PAM
 * environment for each PAM item listed in items.h that is set, so that the
 * application (pam_getenvlist) can see the items the modules before it
 * left, even the tokens a module set.  Always returns PAM_SUCCESS: a failed
 * pam_putenv is only logged.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_appl.h>
#include "pam_compat.h"
#include <security/pam_modules.h>

#include "items.h"
#include "modutil.h"

static int pgi_get_items(pam_handle_t *pamh, int flags, int argc,
			 const char **argv)
{
	(void)flags;
	(void)argc;
	(void)argv;
	for (size_t i = 0; i < PWRAP_NITEMS; i++) {
		const void *v = NULL;
		char *s = NULL;
		int rv = pam_get_item(pamh, pwrap_items[i].type, &v);

		if (rv != PAM_SUCCESS || v == NULL) {
			continue;
		}
		if (asprintf(&s, "%s=%s", pwrap_items[i].name,
			     (const char *)v) < 0) {
			pam_syslog(pamh, LOG_WARNING, "cannot copy %s: %s",
				   pwrap_items[i].name,
				   pam_strerror(pamh, PAM_BUF_ERR));
			continue;
		}
		/* pam_putenv copies S; ours may hold a token: wipe it. */
		rv = pam_putenv(pamh, s);
		if (rv != PAM_SUCCESS) {
			pam_syslog(pamh, LOG_WARNING, "cannot export %s: %s",
				   pwrap_items[i].name,
				   pam_strerror(pamh, rv));
		}
		pwrap_free_secret(s);
	}
	return PAM_SUCCESS;
}

PWRAP_ALL_ENTRY_POINTS(pgi_get_items)
