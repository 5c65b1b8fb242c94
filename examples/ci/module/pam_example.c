/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_example: the PAM module that examples/ci/ tests, standing in for
 * yours.  "auth required pam_example.so secret=WORD" asks for a password
 * and accepts exactly WORD; account management accepts everyone.  Without
 * a secret= option the module is misconfigured: PAM_SERVICE_ERR, logged.
 */
#define _GNU_SOURCE
#include <string.h>
#include <syslog.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

/* The value of the secret= option, or NULL. */
static const char *secret_of(pam_handle_t *pamh, int argc, const char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "secret=", 7) == 0)
			return argv[i] + 7;
		pam_syslog(pamh, LOG_ERR, "unknown option: %s", argv[i]);
	}
	return NULL;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc,
				   const char **argv)
{
	const char *secret = secret_of(pamh, argc, argv);
	const char *password = NULL;
	int rv;

	(void)flags;
	if (secret == NULL) {
		pam_syslog(pamh, LOG_ERR, "no secret= option");
		return PAM_SERVICE_ERR;
	}
	/* The application's conversation asks "Password: "; libpam keeps
	 * the answer (PAM_AUTHTOK) and wipes it at pam_end(). */
	rv = pam_get_authtok(pamh, PAM_AUTHTOK, &password, NULL);
	if (rv != PAM_SUCCESS)
		return rv;
	return strcmp(password, secret) == 0 ? PAM_SUCCESS : PAM_AUTH_ERR;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc,
			      const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc,
				const char **argv)
{
	(void)pamh; (void)flags; (void)argc; (void)argv;
	return PAM_SUCCESS;
}
