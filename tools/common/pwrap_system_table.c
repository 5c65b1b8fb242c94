/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table of `pam_wrapper --system` (pwrap_system.h): what becomes of
 * each module of a system's stacks in the private copy, and why.  One row
 * per module, by libpam's name for it (the file name without ".so");
 * pam_wrapper(1) lists the same rows with the same reasons (tests/tools
 * checks that the two agree).  A module that is in no row is refused
 * unless the test swaps it (--swap).
 *
 *   REAL    runs as it is: it needs no root and writes nothing, or only
 *           reads configuration (the system's own), or looks users and
 *           groups up (nss_wrapper gives it the test's);
 *   STATE   runs for real with its state and configuration files in the
 *           private directory (DIR/state), given by its own options in
 *           front of the line's (a file the system has is copied there
 *           first, so the test starts from the system's configuration and
 *           may change it);
 *   MATRIX  an account source: pam_matrix as=MODULE with the test's users
 *           (pam_matrix(8), AS A DOUBLE, for the options kept);
 *   DOUBLE  needs a system service or root and has no state a test could
 *           own: pam_double returns what the module returns on a working
 *           system, for the functions the module has (the others give
 *           PAM_MODULE_UNKNOWN, as libpam does for a missing function).
 */
#define _GNU_SOURCE
#include "pwrap_system.h"

#include <stddef.h>
#include <string.h>

#define MATRIX(m, why) { m, PWRAP_SYS_MATRIX, NULL, { { 0 } }, why }
#define REAL(m, why) { m, PWRAP_SYS_REAL, NULL, { { 0 } }, why }
#define DOUBLE(m, codes, why) { m, PWRAP_SYS_DOUBLE, codes, { { 0 } }, why }

const struct pwrap_sys_row pwrap_sys_table[] = {
	/* account sources */
	MATRIX("pam_unix", "reads /etc/shadow through a setuid helper "
	       "that checks only the caller's own account"),
	MATRIX("pam_sss", "asks the sssd daemon"),
	MATRIX("pam_winbind", "asks Samba's winbindd daemon"),
	MATRIX("pam_krb5", "asks a Kerberos KDC"),
	MATRIX("pam_ldap", "asks an LDAP server through nslcd"),
	MATRIX("pam_systemd_home", "asks systemd-homed"),
	MATRIX("pam_userdb", "reads an account database file"),

	/* real, with their state in the private directory */
	{ "pam_faillock", PWRAP_SYS_STATE, NULL,
	  { { "dir", "faillock", NULL, true, true, NULL, false },
	    { "conf", "faillock.conf", "/etc/security/faillock.conf", false,
	      false, "conf=", true } },
	  "writes its tally files below /var/run/faillock" },
	{ "pam_pwhistory", PWRAP_SYS_STATE, NULL,
	  { { "file", "opasswd", NULL, false, true, "file=", false },
	    { "conf", "pwhistory.conf", "/etc/security/pwhistory.conf", false,
	      false, "conf=", true } },
	  "writes the password history to /etc/security/opasswd" },
	{ "pam_nologin", PWRAP_SYS_STATE, NULL,
	  { { "file", "nologin", NULL, false, false, NULL, false } },
	  "reads /etc/nologin and /var/run/nologin, which a test makes" },
	{ "pam_access", PWRAP_SYS_STATE, NULL,
	  { { "accessfile", "access.conf",
	      "/etc/security/access.conf /etc/security/access.d/*.conf",
	      false, false, NULL, false } },
	  "reads /etc/security/access.conf, which a test changes" },
	{ "pam_env", PWRAP_SYS_STATE, NULL,
	  { { "conffile", "pam_env.conf", "/etc/security/pam_env.conf",
	      false, false, NULL, false },
	    { "envfile", "environment", "/etc/environment", false, false,
	      NULL, false } },
	  "reads /etc/security/pam_env.conf and /etc/environment" },
	{ "pam_time", PWRAP_SYS_STATE, NULL,
	  { { "conffile", "time.conf", "/etc/security/time.conf", false,
	      false, "conffile=", true } },
	  "reads /etc/security/time.conf" },
	{ "pam_group", PWRAP_SYS_STATE, NULL,
	  { { "conffile", "group.conf", "/etc/security/group.conf", false,
	      false, "conffile=", true } },
	  "reads /etc/security/group.conf" },
	{ "pam_localuser", PWRAP_SYS_STATE, NULL,
	  { { "file", "passwd", NULL, false, false, NULL, false } },
	  "reads /etc/passwd itself, not through NSS" },

	/* real as they are */
	REAL("pam_permit", "decides alone"),
	REAL("pam_deny", "decides alone"),
	REAL("pam_warn", "only logs"),
	REAL("pam_echo", "only prints"),
	REAL("pam_debug", "decides from its arguments"),
	REAL("pam_issue", "only reads /etc/issue"),
	REAL("pam_rootok", "asks getuid(), which uid_wrapper makes 0"),
	REAL("pam_wheel", "looks users and groups up through NSS"),
	REAL("pam_succeed_if", "looks users and groups up through NSS"),
	REAL("pam_usertype", "looks users up through NSS and reads "
	     "/etc/login.defs"),
	REAL("pam_shells", "looks users up through NSS and reads "
	     "/etc/shells"),
	REAL("pam_securetty", "reads /etc/securetty"),
	REAL("pam_listfile", "reads the file its line names"),
	REAL("pam_pwquality", "reads /etc/security/pwquality.conf"),
	REAL("pam_cracklib", "reads the cracklib dictionary"),
	REAL("pam_matrix", "is one of pam_wrapper's test modules"),
	REAL("pam_double", "is one of pam_wrapper's test modules"),
	REAL("pam_chatty", "is one of pam_wrapper's test modules"),
	REAL("pam_get_items", "is one of pam_wrapper's test modules"),
	REAL("pam_set_items", "is one of pam_wrapper's test modules"),

	/* stand-ins: what a working system returns */
	DOUBLE("pam_faildelay", "auth=ignore setcred=ignore",
	       "only makes libpam wait seconds after a failure"),
	DOUBLE("pam_systemd", "session=success",
	       "registers the session with systemd-logind"),
	DOUBLE("pam_loginuid", "account=success session=success",
	       "writes /proc/self/loginuid, which needs CAP_AUDIT_CONTROL"),
	DOUBLE("pam_selinux", "auth=auth_err setcred=success "
	       "session=success", "sets SELinux contexts"),
	DOUBLE("pam_keyinit", "auth=ignore setcred=ignore session=success",
	       "makes the kernel session keyring of the process"),
	DOUBLE("pam_limits", "session=success",
	       "sets resource limits on the test's own process; raising "
	       "them needs root"),
	DOUBLE("pam_umask", "session=success",
	       "sets the umask of the test's own process"),
	DOUBLE("pam_lastlog", "auth=success setcred=success "
	       "account=success session=success",
	       "writes /var/log/lastlog and wtmp"),
	DOUBLE("pam_mkhomedir", "session=success",
	       "makes home directories as root"),
	DOUBLE("pam_mail", "auth=ignore setcred=ignore session=success",
	       "looks at the mail spool"),
	DOUBLE("pam_motd", "session=success",
	       "runs /etc/update-motd.d and writes /run/motd.dynamic"),
	DOUBLE("pam_cap", "auth=ignore setcred=ignore",
	       "sets capabilities of the process"),
	DOUBLE("pam_xauth", "session=success",
	       "copies X authority as the target user"),
	DOUBLE("pam_tty_audit", "session=success",
	       "sets kernel TTY auditing, which needs CAP_AUDIT_CONTROL"),
	DOUBLE("pam_namespace", "session=success",
	       "sets up mount namespaces as root"),
	{ NULL, PWRAP_SYS_REAL, NULL, { { 0 } }, NULL },
};

const struct pwrap_sys_row *pwrap_sys_row(const char *module)
{
	for (const struct pwrap_sys_row *r = pwrap_sys_table; r->module; r++) {
		if (strcmp(r->module, module) == 0) {
			return r;
		}
	}
	return NULL;
}
