/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PAM items that pam_set_items copies from the process environment and
 * pam_get_items copies into the PAM environment, each under the name of its
 * constant (PAM_USER, PAM_RHOST, ...), so a test can write
 * "PAM_RHOST=host" on one side and read "PAM_RHOST=host" on the other.
 */
#ifndef PWRAP_ITEMS_H
#define PWRAP_ITEMS_H

#include <stddef.h>

#include <security/pam_appl.h>

struct pwrap_item {
	int type;
	const char *name;
};

#define PWRAP_ITEM(x) { x, #x }

static const struct pwrap_item pwrap_items[] = {
	PWRAP_ITEM(PAM_SERVICE),
	PWRAP_ITEM(PAM_USER),
	PWRAP_ITEM(PAM_USER_PROMPT),
	PWRAP_ITEM(PAM_TTY),
	PWRAP_ITEM(PAM_RUSER),
	PWRAP_ITEM(PAM_RHOST),
	PWRAP_ITEM(PAM_AUTHTOK),
	PWRAP_ITEM(PAM_OLDAUTHTOK),
#if !defined(PWRAP_OPENPAM)	/* Linux-PAM's */
	PWRAP_ITEM(PAM_XDISPLAY),
	PWRAP_ITEM(PAM_AUTHTOK_TYPE),
#endif
};

#define PWRAP_NITEMS (sizeof(pwrap_items) / sizeof(pwrap_items[0]))

#endif
