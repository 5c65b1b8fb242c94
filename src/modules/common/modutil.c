/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conversation and option helpers shared by our test modules (see
 * modutil.h).  The conversation always passes a real struct pam_response **
 * so that conversation functions which write through it (pamtester's
 * misc_conv, every libpamtest conversation) never see NULL.
 */
#define _GNU_SOURCE
#include "modutil.h"

#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>

void pwrap_free_secret(char *s)
{
	if (s == NULL) {
		return;
	}
	explicit_bzero(s, strlen(s));
	free(s);
}

int pwrap_conv_one(pam_handle_t *pamh, int style, const char *text,
		   char **answer)
{
	const struct pam_conv *conv = NULL;
	struct pam_message msg;
	const struct pam_message *msgp = &msg;
	struct pam_response *resp = NULL;
	int rv;

	if (answer != NULL) {
		*answer = NULL;
	}
	rv = pam_get_item(pamh, PAM_CONV, (const void **)&conv);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (conv == NULL || conv->conv == NULL) {
		return PAM_CONV_ERR;
	}

	msg.msg_style = style;
	msg.msg = text;
	rv = conv->conv(1, &msgp, &resp, conv->appdata_ptr);
	if (rv == PAM_SUCCESS && answer != NULL) {
		if (resp != NULL && resp->resp != NULL) {
			/* Ownership of the string moves to the caller. */
			*answer = resp->resp;
			resp->resp = NULL;
		} else {
			rv = PAM_CONV_ERR;
		}
	}
	/* The application allocated the array; whatever it holds that we
	 * did not take is ours to release. */
	if (resp != NULL) {
		pwrap_free_secret(resp->resp);
		free(resp);
	}
	return rv;
}

const char *pwrap_opt_value(const char *arg, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(arg, name, n) == 0 && arg[n] == '=') {
		return arg + n + 1;
	}
	return NULL;
}
