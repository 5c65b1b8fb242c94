/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cases of test_differential.c for OpenPAM (included there in place of
 * Linux-PAM's): OpenPAM's own syntax (facility, control flag including
 * "binding" and "include NAME", module, options; words, quotes, backslash
 * escapes and continuations, comments at the start of a word) and its
 * modules (pam_permit, pam_deny, pam_return error=NAME).  Include targets
 * are service names, found through the policy path: bare libpam reads them
 * from the case's directory mounted over /etc/pam.d.  Expectations are
 * what OpenPAM (git master cc0d612, and 20190224) prints.
 */
#define RET "@M@/pam_return.so error="
#define OALL                                                               \
	"auth required " P "\naccount required " P "\n"                    \
	"session required " P "\npassword required " P "\n"

#define OALL0 "start=0 auth=0 setcred=0 acct=0 open=0 close=0 chauthtok=0 end=0"
#define OSTART4 "start=4"	/* PAM_SYSTEM_ERR: OpenPAM refuses the policy */

static const struct dcase cases[] = {
	{ "plain_permit", NULL, { F("svc", OALL) }, OALL0 },
	{ "return_codes", NULL,
	  { F("svc", "auth required " RET "PAM_AUTH_ERR\n"
		     "account required " RET "PAM_ACCT_EXPIRED\n"
		     "session required " RET "PAM_SESSION_ERR\n"
		     "password required " RET "PAM_AUTHTOK_ERR\n") },
	  "start=0 auth=9 setcred=9 acct=17 open=19 close=19 "
	  "chauthtok=20 end=0" },
	{ "control_flags", NULL,
	  { F("svc", "auth sufficient " P "\nauth required " DN "\n"
		     "account optional " DN "\naccount requisite " RET
		     "PAM_PERM_DENIED\naccount required " P "\n"
		     "session binding " P "\nsession required " DN "\n"
		     "password required " DN "\npassword binding " P "\n") },
	  "start=0 auth=0 setcred=16 acct=9 open=0 close=0 "
	  "chauthtok=20 end=0" },
	{ "comments", NULL,
	  { F("svc", "# a comment\n  # indented\nauth required " P
		     " # trailing " DN "\n"
		     "account required " RET "PAM_PERM_DENIED#not-a-comment\n"
		     "session required " P "\t#\t" DN "\n"
		     "password required " RET "PAM_AUTH_ERR x#y\n") },
	  "start=0 auth=0 setcred=0 acct=4 open=0 close=0 chauthtok=9 "
	  "end=0" },
	{ "quotes_and_escapes", NULL,
	  { F("svc", "auth required " RET "\"PAM_AUTH_ERR\"\n"
		     "account required " RET "'PAM_PERM_DENIED' \"a # b\"\n"
		     "session required " RET "PAM_SESSION\\_ERR\n"
		     "password required " P " \"\" '' a\\ b\n") },
	  "start=0 auth=9 setcred=9 acct=7 open=19 close=19 "
	  "chauthtok=0 end=0" },
	{ "continuation", NULL,
	  { F("svc", "auth required \\\n " RET "PAM_AUTH_ERR\n"
		     "account \\\nrequired " RET "PAM_PERM\\\n_DENIED\n"
		     "session required " P " \\\n\n"
		     "password required " P "\n") },
	  "start=0 auth=9 setcred=9 acct=7 open=0 close=0 chauthtok=0 "
	  "end=0" },
	{ "long_line", NULL,
	  { F("svc", "auth required " P " a@PADTO:1500@ b\n"
		     "account required " RET "PAM_PERM_DENIED x@PADTO:1030@"
		     "\nsession required " P "\npassword required " P "\n") },
	  "start=0 auth=0 setcred=0 acct=7 open=0 close=0 chauthtok=0 "
	  "end=0" },
	{ "crlf", NULL,
	  { F("svc", "auth required " P "\r\naccount required " P "\n"
		     "session required " P "\npassword required " P "\n") },
	  OALL0 },
	{ "linux_pam_syntax", NULL,
	  { F("svc", OALL "-auth required " P "\n") }, OSTART4 },
	{ "linux_pam_brackets", NULL,
	  { F("svc", OALL "auth [success=ok] " P "\n") }, OSTART4 },
	{ "linux_pam_substack", NULL,
	  { F("svc", OALL "account substack inc1\n"),
	    F("inc1", "account required " P "\n") },
	  OSTART4 },
	{ "linux_pam_at_include", NULL,
	  { F("svc", OALL "@include inc1\n"),
	    F("inc1", "account required " P "\n") },
	  OSTART4 },
	{ "uppercase_facility", NULL,
	  { F("svc", OALL "AUTH required " P "\n") }, OSTART4 },
	{ "include_by_name", NULL,
	  { F("svc", "auth include inc1\naccount include inc1\n"
		     "session required " P "\npassword include inc2\n"),
	    F("inc1", "auth required " RET "PAM_MAXTRIES\n"
		      "account required " P "\npassword required " DN "\n"),
	    F("inc2", "password required " RET "PAM_TRY_AGAIN\n") },
	  "start=0 auth=8 setcred=8 acct=0 open=0 close=0 chauthtok=27 "
	  "end=0" },
	{ "include_missing", NULL,
	  { F("svc", OALL "account include missing\n") }, OSTART4 },
	{ "include_a_directory", NULL,
	  { F("svc", OALL "auth include sub\n"), DIRE("sub") }, OSTART4 },
	{ "include_an_empty_file", NULL,
	  { F("svc", OALL "auth include empty\n"), F("empty", "") }, OALL0 },
	{ "include_unreadable", NULL,
	  { F("svc", OALL "auth include secret\n"),
	    FMODE("secret", "auth required " DN "\n", 0) },
	  OSTART4, 0, "start=0 auth=9 setcred=16 acct=0 open=0 close=0 "
		      "chauthtok=0 end=0" },
	{ "include_a_path", NULL,
	  { F("svc", OALL "auth include @D@/inc1\n"),
	    F("inc1", "auth required " DN "\n") },
	  OSTART4 },
	{ "includes_nested_40_deep", NULL,
	  { F("svc", "auth include c1\naccount required " P "\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 auth=9 setcred=9 acct=0 open=0 close=0 chauthtok=0 "
	  "end=0", 40 },
	{ "other_for_an_unknown_service", "nosuch",
	  { F("other", "auth required " RET "PAM_AUTH_ERR\n"
		       "account required " P "\n"),
	    F("svc", OALL) },
	  "start=0 auth=9 setcred=9 acct=0 open=4 close=4 "
	  "chauthtok=4 end=0" },
	{ "empty_file", NULL, { F("svc", ""), F("other", OALL) }, OALL0 },
	{ "no_trailing_newline", NULL,
	  { F("svc", "auth required " P "\naccount required " DN),
	    F("other", OALL) },
	  NULL },
	/* A documented difference: OpenPAM fails pam_start when a facility
	 * the service lacks has no "other" to fall back to; the wrapper's
	 * stand-in for a missing "other" is empty, and that facility fails
	 * when it is called (as with Linux-PAM) */
	{ "facility_without_other", NULL,
	  { F("svc", "auth required " P "\n") },
	  OSTART4, 0, NULL, 0, 0, NULL,
	  "start=0 auth=0 setcred=0 acct=4 open=4 close=4 chauthtok=4 "
	  "end=0" },
	/* The wrapper's own refusal: neither the service's file nor "other"
	 * is PAM_ABORT with a message (OpenPAM itself says PAM_SYSTEM_ERR) */
	{ "no_service_and_no_other", "nosuch", { F("svc", OALL) }, OSTART4,
	  .expect_wrapped = "start=26" },
};

static const struct dcase hang_cases[] = {
	{ "hang_include_a_fifo", NULL,
	  { F("svc", OALL "account include fifo\n"), FIFO("fifo") },
	  "hang" },
};

/* OpenPAM crashes on none of its cases. */
static const struct dcase crash_cases[] = {
	{ NULL },
};
