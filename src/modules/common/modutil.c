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

#include "pam_compat.h"

#if defined(PWRAP_OPENPAM)
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

/* OpenPAM has no pam_syslog (see pam_compat.h).  The wrapper's pam_vsyslog
 * is looked up at each call: a module may be loaded before or without it. */
void pam_syslog(const pam_handle_t *pamh, int priority, const char *fmt, ...)
{
	void (*wrapped)(const pam_handle_t *, int, const char *, va_list);
	const void *service = NULL;
	char msg[1024];
	va_list ap;

	*(void **)&wrapped = dlsym(RTLD_DEFAULT, "pam_vsyslog");
	va_start(ap, fmt);
	if (wrapped != NULL) {
		wrapped(pamh, priority, fmt, ap);
		va_end(ap);
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pam_get_item(pamh, PAM_SERVICE, &service) != PAM_SUCCESS ||
	    service == NULL) {
		service = "?";
	}
	syslog(priority | LOG_AUTHPRIV, "(%s) %s", (const char *)service, msg);
	explicit_bzero(msg, sizeof(msg));
}
#endif

void pwrap_free_secret(char *s)
{
	if (s == NULL) {
		return;
	}
	explicit_bzero(s, strlen(s));
	free(s);
}

int pwrap_conv_one(pam_handle_t *pamh, int style, const char *text,
		   char **answer, const char **cause)
{
	const struct pam_conv *conv = NULL;
	struct pam_message msg;
	const struct pam_message *msgp = &msg;
	struct pam_response *resp = NULL;
	const char *why = NULL;
	int rv;

	if (answer != NULL) {
		*answer = NULL;
	}
	rv = pam_get_item(pamh, PAM_CONV, (const void **)&conv);
	if (rv != PAM_SUCCESS) {
		why = "cannot get the conversation";
		goto out;
	}
	if (conv == NULL || conv->conv == NULL) {
		why = "the application gave no conversation function";
		rv = PAM_CONV_ERR;
		goto out;
	}

	msg.msg_style = style;
	msg.msg = (char *)text;	/* OpenPAM declares it char *; never written */
	rv = conv->conv(1, &msgp, &resp, conv->appdata_ptr);
	if (rv != PAM_SUCCESS) {
		why = "the conversation function failed";
	} else if (answer != NULL && resp == NULL) {
		why = "the conversation function returned no response";
		rv = PAM_CONV_ERR;
	} else if (answer != NULL) {
		/* Ownership of the string moves to the caller. */
		*answer = resp->resp;
		resp->resp = NULL;
		if (*answer == NULL) {
			why = "the conversation function answered with a "
			      "NULL string";
		}
	}
	/* The application allocated the array; whatever it holds that we
	 * did not take is ours to release. */
	if (resp != NULL) {
		pwrap_free_secret(resp->resp);
		free(resp);
	}
out:
	if (cause != NULL) {
		*cause = why;
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
