/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-only PAM module of the differential table (test_module_table.c):
 * reads and changes PAM items from inside a real libpam dispatch, where
 * the application cannot (PAM_AUTHTOK and PAM_OLDAUTHTOK are module-only
 * items).  Used around the module under test, so that the table can give
 * it items and see what it left without trusting pam_set_items or
 * pam_get_items, which are themselves under test.  Never installed.
 *
 * Arguments, applied in order in every entry point:
 *   phase=prelim|update   in chauthtok, act only in that phase (the
 *                         arguments after it; "phase=any" ends the limit)
 *   set=ITEM=value        pam_set_item(ITEM, "value")
 *   unset=ITEM            pam_set_item(ITEM, NULL)
 *   dump                  pam_putenv("PROBE_ITEM=value") for every item of
 *                         items.h that is set ("PROBE_ITEM" alone, i.e.
 *                         removed, when it is not)
 *   rc=N                  return N instead of PAM_SUCCESS
 *   unlink=PATH           unlink(PATH) (a passdb gone between two calls)
 *   copy=SRC,DST          replace DST by a copy of SRC (a passdb changed
 *                         between two calls)
 * An argument it does not know, or an item name not in items.h, returns
 * PAM_SERVICE_ERR: a typo in a row must not pass quietly.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include <security/pam_modules.h>

#include "items.h"

static int probe_item(const char *name, size_t len)
{
	for (size_t i = 0; i < PWRAP_NITEMS; i++) {
		if (strlen(pwrap_items[i].name) == len &&
		    memcmp(pwrap_items[i].name, name, len) == 0) {
			return pwrap_items[i].type;
		}
	}
	return -1;
}

static int probe_dump(pam_handle_t *pamh)
{
	for (size_t i = 0; i < PWRAP_NITEMS; i++) {
		const void *v = NULL;
		char *s = NULL;
		int rv = PAM_SUCCESS;

		if (pam_get_item(pamh, pwrap_items[i].type, &v) != PAM_SUCCESS) {
			v = NULL;
		}
		if (asprintf(&s, "PROBE_%s%s%s", pwrap_items[i].name,
			     v != NULL ? "=" : "",
			     v != NULL ? (const char *)v : "") < 0) {
			return PAM_BUF_ERR;
		}
		/* "NAME" alone removes; removing an absent one is an error */
		if (v != NULL || pam_getenv(pamh, s) != NULL) {
			rv = pam_putenv(pamh, s);
		}
		free(s);
		if (rv != PAM_SUCCESS) {
			return rv;
		}
	}
	return PAM_SUCCESS;
}

/* Replaces DST by a copy of SRC ("SRC,DST" in ARG). */
static int probe_copy(const char *arg)
{
	const char *comma = strchr(arg, ',');
	char *src = comma ? strndup(arg, (size_t)(comma - arg)) : NULL;
	char buf[4096];
	int in = src ? open(src, O_RDONLY | O_CLOEXEC) : -1;
	int out = comma ? open(comma + 1, O_WRONLY | O_CREAT | O_TRUNC |
					       O_CLOEXEC, 0600)
			: -1;
	int rv = in >= 0 && out >= 0 ? PAM_SUCCESS : PAM_SYSTEM_ERR;
	ssize_t n;

	while (rv == PAM_SUCCESS && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 || write(out, buf, (size_t)n) != n) {
			rv = PAM_SYSTEM_ERR;
		}
	}
	if (in >= 0) {
		close(in);
	}
	if (out >= 0 && close(out) != 0) {
		rv = PAM_SYSTEM_ERR;
	}
	free(src);
	return rv;
}

static int probe(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	int ret = PAM_SUCCESS;
	int only = 0; /* 0 any, else the chauthtok flag to act in */

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int rv = PAM_SUCCESS;

		if (strcmp(a, "phase=prelim") == 0) {
			only = PAM_PRELIM_CHECK;
			continue;
		}
		if (strcmp(a, "phase=update") == 0) {
			only = PAM_UPDATE_AUTHTOK;
			continue;
		}
		if (strcmp(a, "phase=any") == 0) {
			only = 0;
			continue;
		}
		if (only != 0 && !(flags & only)) {
			continue;
		}
		if (strncmp(a, "set=", 4) == 0) {
			const char *eq = strchr(a + 4, '=');
			int item = eq ? probe_item(a + 4, (size_t)(eq - a - 4))
				      : -1;

			if (item < 0) {
				return PAM_SERVICE_ERR;
			}
			rv = pam_set_item(pamh, item, eq + 1);
		} else if (strncmp(a, "unset=", 6) == 0) {
			int item = probe_item(a + 6, strlen(a + 6));

			if (item < 0) {
				return PAM_SERVICE_ERR;
			}
			rv = pam_set_item(pamh, item, NULL);
		} else if (strcmp(a, "dump") == 0) {
			rv = probe_dump(pamh);
		} else if (strncmp(a, "unlink=", 7) == 0) {
			rv = unlink(a + 7) == 0 ? PAM_SUCCESS : PAM_SYSTEM_ERR;
		} else if (strncmp(a, "copy=", 5) == 0) {
			rv = probe_copy(a + 5);
		} else if (strncmp(a, "rc=", 3) == 0) {
			ret = atoi(a + 3);
		} else {
			return PAM_SERVICE_ERR;
		}
		if (rv != PAM_SUCCESS) {
			return rv;
		}
	}
	return ret;
}

#define PROBE_ENTRY(name)                                                  \
	__attribute__((visibility("default"))) int name(                   \
		pam_handle_t *pamh, int flags, int argc, const char **argv) \
	{                                                                  \
		return probe(pamh, flags, argc, argv);                     \
	}

PROBE_ENTRY(pam_sm_authenticate)
PROBE_ENTRY(pam_sm_setcred)
PROBE_ENTRY(pam_sm_acct_mgmt)
PROBE_ENTRY(pam_sm_open_session)
PROBE_ENTRY(pam_sm_close_session)
PROBE_ENTRY(pam_sm_chauthtok)
