/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The name tables of pwrap_names.h.
 */
#include <security/pam_appl.h>
#if defined(PWRAP_OPENPAM)
#include <security/openpam.h>
#endif
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "pwrap_names.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const groups[PWRAP_GROUPS] = {
	[PWRAP_GROUP_AUTH] = "auth",
	[PWRAP_GROUP_ACCOUNT] = "account",
	[PWRAP_GROUP_PASSWORD] = "password",
	[PWRAP_GROUP_SESSION] = "session",
};

const char *pwrap_group_name(int group)
{
	return group >= 0 && group < PWRAP_GROUPS ? groups[group] : NULL;
}

int pwrap_group_parse(const char *word, bool nocase)
{
	for (int g = 0; g < PWRAP_GROUPS; g++) {
		if ((nocase ? strcasecmp(word, groups[g])
			    : strcmp(word, groups[g])) == 0) {
			return g;
		}
	}
	return -1;
}

static const struct {
	const char *call, *sm;
	enum pwrap_group group;
} sms[PWRAP_SM_COUNT] = {
	[PWRAP_SM_AUTHENTICATE] = { "pam_authenticate", "pam_sm_authenticate",
				    PWRAP_GROUP_AUTH },
	[PWRAP_SM_SETCRED] = { "pam_setcred", "pam_sm_setcred",
			       PWRAP_GROUP_AUTH },
	[PWRAP_SM_ACCT_MGMT] = { "pam_acct_mgmt", "pam_sm_acct_mgmt",
				 PWRAP_GROUP_ACCOUNT },
	[PWRAP_SM_OPEN_SESSION] = { "pam_open_session", "pam_sm_open_session",
				    PWRAP_GROUP_SESSION },
	[PWRAP_SM_CLOSE_SESSION] = { "pam_close_session",
				     "pam_sm_close_session",
				     PWRAP_GROUP_SESSION },
	[PWRAP_SM_CHAUTHTOK] = { "pam_chauthtok", "pam_sm_chauthtok",
				 PWRAP_GROUP_PASSWORD },
};

const char *pwrap_sm_call(enum pwrap_sm sm)
{
	return sms[sm].call;
}

const char *pwrap_sm_name(enum pwrap_sm sm)
{
	return sms[sm].sm;
}

enum pwrap_group pwrap_sm_group(enum pwrap_sm sm)
{
	return sms[sm].group;
}

enum pwrap_sm pwrap_group_sm(enum pwrap_group group)
{
	static const enum pwrap_sm first[PWRAP_GROUPS] = {
		[PWRAP_GROUP_AUTH] = PWRAP_SM_AUTHENTICATE,
		[PWRAP_GROUP_ACCOUNT] = PWRAP_SM_ACCT_MGMT,
		[PWRAP_GROUP_PASSWORD] = PWRAP_SM_CHAUTHTOK,
		[PWRAP_GROUP_SESSION] = PWRAP_SM_OPEN_SESSION,
	};

	return first[group];
}

#define N(x) { #x, x }
static const struct {
	const char *name;
	int code;
} codes[] = {
	N(PAM_SUCCESS), N(PAM_OPEN_ERR), N(PAM_SYMBOL_ERR), N(PAM_SERVICE_ERR),
	N(PAM_SYSTEM_ERR), N(PAM_BUF_ERR), N(PAM_PERM_DENIED), N(PAM_AUTH_ERR),
	N(PAM_CRED_INSUFFICIENT), N(PAM_AUTHINFO_UNAVAIL), N(PAM_USER_UNKNOWN),
	N(PAM_MAXTRIES), N(PAM_NEW_AUTHTOK_REQD), N(PAM_ACCT_EXPIRED),
	N(PAM_SESSION_ERR), N(PAM_CRED_UNAVAIL), N(PAM_CRED_EXPIRED),
	N(PAM_CRED_ERR), N(PAM_NO_MODULE_DATA), N(PAM_CONV_ERR),
	N(PAM_AUTHTOK_ERR), N(PAM_AUTHTOK_RECOVERY_ERR),
	N(PAM_AUTHTOK_LOCK_BUSY), N(PAM_AUTHTOK_DISABLE_AGING),
	N(PAM_TRY_AGAIN), N(PAM_IGNORE), N(PAM_ABORT), N(PAM_AUTHTOK_EXPIRED),
	N(PAM_MODULE_UNKNOWN), N(PAM_BAD_ITEM),
#if defined(PAM_CONV_AGAIN)
	N(PAM_CONV_AGAIN),
#endif
#if defined(PAM_INCOMPLETE)
	N(PAM_INCOMPLETE),
#endif
#if defined(PWRAP_OPENPAM)
	N(PAM_DOMAIN_UNKNOWN), N(PAM_BAD_HANDLE), N(PAM_BAD_FEATURE),
	N(PAM_BAD_CONSTANT),
#endif
	/* accepted when parsed, never printed (a later entry) */
	{ "PAM_AUTHTOK_RECOVER_ERR", PAM_AUTHTOK_RECOVERY_ERR },
};
#undef N

const char *pwrap_code_name(int code)
{
	for (size_t i = 0; i < COUNT(codes); i++) {
		if (codes[i].code == code) {
			return codes[i].name;
		}
	}
	return NULL;
}

int pwrap_code_parse(const char *name, int *code)
{
	for (size_t i = 0; i < COUNT(codes); i++) {
		const char *n = codes[i].name;

		if (strcmp(n, name) == 0 || strcmp(n + 4, name) == 0) {
			*code = codes[i].code;
			return 0;
		}
	}
	return -1;
}
