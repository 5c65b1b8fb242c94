/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-only PAM module: calls another module's pam_sm_chauthtok with chosen
 * flags, from inside a real libpam dispatch.  pam_chauthtok always runs the
 * preliminary phase before the update one, and libpam refuses
 * pam_get_data to code called from the application, so this is how the
 * tests reach "update without a preliminary check" and "neither flag".
 *
 *   auth required pam_call_shim.so /abs/module.so STEPS... -- ARGS...
 *
 * STEPS are prelim, update or none (flags 0), run in order; the first
 * result other than PAM_SUCCESS is returned.  ARGS are passed to the
 * module.  The module stays loaded until pam_end, after its own data's
 * cleanup has run.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include <security/pam_appl.h>
#include <security/pam_modules.h>

typedef int (*sm_fn)(pam_handle_t *, int, int, const char **);

static void shim_unload(pam_handle_t *pamh, void *dl, int status)
{
	(void)pamh;
	(void)status;
	dlclose(dl);
}

__attribute__((visibility("default"))) int
pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc,
		    const char **argv)
{
	void *dl;
	sm_fn fn;
	int sep;

	(void)flags;
	if (argc < 1) {
		return PAM_SERVICE_ERR;
	}
	dl = dlopen(argv[0], RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		return PAM_MODULE_UNKNOWN;
	}
	/* Registered first, so freed after the module's own data. */
	if (pam_set_data(pamh, "pam_call_shim:dl", dl, shim_unload) !=
	    PAM_SUCCESS) {
		dlclose(dl);
		return PAM_SYSTEM_ERR;
	}
	*(void **)&fn = dlsym(dl, "pam_sm_chauthtok");
	if (fn == NULL) {
		return PAM_SYMBOL_ERR;
	}
	for (sep = 1; sep < argc && strcmp(argv[sep], "--") != 0; sep++) {
	}
	for (int i = 1; i < sep; i++) {
		int f = strcmp(argv[i], "prelim") == 0	 ? PAM_PRELIM_CHECK
			: strcmp(argv[i], "update") == 0 ? PAM_UPDATE_AUTHTOK
							 : 0;
		int mod_argc = sep < argc ? argc - sep - 1 : 0;
		int rv = fn(pamh, f, mod_argc, argv + sep + 1);

		if (rv != PAM_SUCCESS) {
			return rv;
		}
	}
	return PAM_SUCCESS;
}

__attribute__((visibility("default"))) int
pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
	(void)pamh;
	(void)flags;
	(void)argc;
	(void)argv;
	return PAM_SUCCESS;
}
