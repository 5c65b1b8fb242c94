/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Differential test of the wrapper against bare libpam: for each case below
 * a fresh directory gets the case's service file ("svc", or "other") and the
 * files it includes, and tests/wrapper/pwrap_diff_client runs one full
 * transaction on it twice:
 *
 *   bare      pam_start_confdir(service, ..., DIR) in a process that is not
 *             preloaded: libpam reads the files as written;
 *   wrapped   pam_start(service, ...) preloaded with PAM_WRAPPER=1 and
 *             PAM_WRAPPER_SERVICE_DIR=DIR: libpam reads the wrapper's
 *             rewritten copies.
 *
 *   traced    the wrapped run again with PAM_WRAPPER_TRACE set: libpam
 *             reads copies whose module lines name the trace's stand-in,
 *             which runs the real modules.
 *
 * The three result lines (the return code of every call, and the text of
 * every message a module sent) must be identical, and the results the
 * trace records must be the traced client's.  Modules are named by
 * absolute path and include targets are absolute paths into the directory,
 * so bare libpam and the wrapper must read the same stacks: any token the
 * rewriter changed, split, joined or dropped shows.  The cases are the
 * corners of libpam's reader (pam_handlers.c): CR, \v and \f (not
 * separators), keywords in any case, "-type", "[...]" tokens, comments,
 * continuation lines, its 1024-byte line buffer, files ending in a
 * continued line, includes (missing, nested, broken), "other", NUL bytes.
 * Each case also states the line bare libpam gives, measured per kind of
 * libpam (Debian 12's 1.5.2, upstream 1.3.1 and 1.5.2 without Debian's
 * patches, Debian 13's 1.7.0 and upstream 1.6.0 to 1.7.2, which read lines
 * of any length and limit includes), which makes sure the case exercises
 * what it says: a case whose stack fails for an unrelated reason would
 * hide a wrong rewrite.  Which kind the loaded libpam is, src/pamconf
 * tells from the library itself (pamconf_rules_detect), as the wrapper
 * does.
 *
 * pam_debug.so (arguments choose each call's return code) and pam_echo.so
 * (its arguments come back as a message) make the argument tokens part of
 * the result.
 *
 * Files on which libpam loops forever in pam_start() (a continued line that
 * fills its buffer but for one byte) or blocks (a FIFO without a writer)
 * are separate tests: bare libpam must hang and the wrapper must refuse the
 * file, pam_start() failing.  So are files on which libpam crashes (an
 * include line without a target): the wrapper must crash the same way or
 * refuse the file.
 *
 * What is a hang does not depend on how fast the machine is (a loaded CI
 * machine takes its time honestly): a run hangs when it used more than
 * RUN_CPU_SECONDS of CPU time (the client's RLIMIT_CPU: a loop), when bare
 * libpam opened a FIFO of the case for reading (a writer's non-blocking
 * open finds the reader: it blocks there for ever), or, for anything else,
 * when it has not ended after TU_HANG_SECONDS.
 *
 * PWRAP_DIFF_VERBOSE=1 prints every case's files and results.
 *
 * Placeholders in the case texts: @M@ is $PWRAP_SYSTEM_MODULE_DIR, @D@ the
 * case's directory, and @PADTO:N@ as many 'a' as make the next byte land in
 * column N (0-based) of its physical line, so that lengths do not depend on
 * the paths.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pamconf.h"

#include "testutil.h"
#include "trace_records.h"

#ifndef PWRAP_DIFF_CLIENT
#error PWRAP_DIFF_CLIENT (path of pwrap_diff_client) must be defined
#endif

/* The CPU time a client may use: far above what a case honestly takes
 * (under 0.1 s; a chain of includes up to 1.5 s, measured on a loaded
 * machine: CPU time hardly grows with the load, wall time does), so that
 * only a libpam looping on a line reaches it.  A case may set its own. */
#define RUN_CPU_SECONDS 10
#define RUN_CPU_SECONDS_CHAIN 60

/* How the client runs bare libpam on a case's directory: through
 * pam_start_confdir, or where there is none, with the directory mounted
 * over /etc/pam.d in a private mount namespace. */
#if defined(PWRAP_HAVE_PAM_START_CONFDIR)
#define BARE_MODE "confdir"
#else
#define BARE_MODE "ns"
#endif

struct dfile {
	const char *name;
	const char *text;
	size_t len;
	char type;	/* 0 a regular file ('m': of mode `mode`), 'd' a
			 * directory, 'p' a FIFO */
	mode_t mode;
};

struct dcase {
	const char *name;
	const char *service;	/* NULL: "svc" */
	struct dfile files[4];	/* the first with name NULL ends the list */
	const char *expect;	/* what bare libpam prints */
	/* chain > 0: files c1 ... c<chain> too, each including the next by
	 * absolute path ("auth include @D@/c<i+1>"); the last holds
	 * CHAIN_END */
	unsigned chain;
	const char *expect_root;	/* as root, when it differs */
	unsigned stack_kib;	/* the clients' stack limit (0: as is) */
	unsigned cpu_s;		/* their CPU time limit (0: RUN_CPU_SECONDS,
				 * or with a chain RUN_CPU_SECONDS_CHAIN) */
	/* what Linux-PAM 1.3.1 (upstream, without Debian's patches: no
	 * "@include", no crash on an include without a target) prints, when
	 * it differs; used where libpam has no pam_start_confdir */
	const char *expect_old;
	/* a difference the wrapper documents: what it gives instead */
	const char *expect_wrapped;
	/* what Linux-PAM 1.6 and later print (a reader of lines of any
	 * length, includes limited to 16 levels), when it differs: with
	 * Debian's patches (Debian 13), and upstream (1.7.2) when that
	 * differs again; measured on 1.6.0 to 1.7.2 */
	const char *expect16;
	const char *expect16_old;
};

#define F(n, lit) { (n), (lit), sizeof(lit) - 1, 0, 0 }
#define FMODE(n, lit, m) { (n), (lit), sizeof(lit) - 1, 'm', (m) }
#define DIRE(n) { (n), NULL, 0, 'd', 0 }
#define FIFO(n) { (n), NULL, 0, 'p', 0 }

#define P "@M@/pam_permit.so"
#define DN "@M@/pam_deny.so"
#define DBG "@M@/pam_debug.so"
#define ECHO "@M@/pam_echo.so"
#define NX "@M@/pam_pwrap_nonexistent.so"

#define ALLP                                                                 \
	"auth required " P "\naccount required " P "\n"                      \
	"password required " P "\nsession required " P "\n"
/* Every call gives a different code (and pam_debug says which). */
#define DBG_ALL                                                              \
	"auth required " DBG " auth=perm_denied cred=cred_unavail\n"         \
	"account required " DBG " acct=new_authtok_reqd\n"                   \
	"session required " DBG " open_session=session_err "                 \
	"close_session=abort\n"                                              \
	"password required " DBG " prechauthtok=try_again\n"

#define ALL0 "start=0 auth=0 setcred=0 acct=0 open=0 close=0 chauthtok=0 end=0"
#define START26 "start=26"
#define NOMOD "start=0 auth=6 setcred=6 acct=6 open=6 close=6 chauthtok=6 end=0"
#define DBG_ALL_RES                                                          \
	"start=0 {4:auth=perm_denied} auth=6 {4:cred=cred_unavail} "         \
	"setcred=15 {4:acct=new_authtok_reqd} acct=12 "                      \
	"{4:open_session=session_err} open=14 {4:close_session=abort} "      \
	"close=26 {4:prechauthtok=try_again} chauthtok=24 end=0"

/* Most cases leave chain, expect_root and stack_kib zero. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#if !defined(PWRAP_OPENPAM)
static const struct dcase cases[] = {
	{ "plain_permit", NULL, { F("svc", ALLP) }, ALL0 },
	{ "plain_deny", NULL,
	  { F("svc", "auth required " DN "\naccount required " DN "\n"
		     "password required " DN "\nsession required " DN "\n") },
	  "start=0 auth=7 setcred=17 acct=7 open=14 close=14 chauthtok=20 "
	  "end=0" },
	{ "debug_codes", NULL, { F("svc", DBG_ALL) }, DBG_ALL_RES },
	{ "echo_arguments", NULL,
	  { F("svc", "auth optional " ECHO " a\tb  c [x y\\]z] %s %u\n"
		     "auth optional " ECHO "   \t  trailing \t \n" ALLP) },
	  "start=0 {4:a b c x y]z svc alice} {4:trailing} auth=0 setcred=0 "
	  "acct=0 open=0 close=0 chauthtok=0 end=0" },
	{ "crlf", NULL,
	  { F("svc", "auth required " DBG " auth=perm_denied\r\n"
		     "auth optional " ECHO " crlf\r\n"
		     "account required " P "\r\n"
		     "session required " DBG " open_session=session_err\r\n"
		     "password required " P "\n") },
	  "start=0 {4:crlf\\x0d} auth=0 setcred=0 acct=28 open=0 close=0 "
	  "chauthtok=0 end=0" },
	{ "crlf_keywords", NULL,
	  { F("svc", "auth required " P "\n"
		     "account required\r " P "\n"
		     "session include\r @D@/inc1\n"
		     "password sufficient\r " P "\npassword required " DN
		     "\n"),
	    F("inc1", "session required " P "\n") },
	  "start=0 auth=0 setcred=0 acct=6 open=28 close=28 chauthtok=6 "
	  "end=0" },
	{ "cr_only", NULL,
	  { F("svc", "auth required " P "\rauth required " DN "\r"
		     "account required " P "\n"
		     "session required " DBG " open_session=session_err\r"
		     "\n") },
	  "start=0 auth=28 setcred=28 acct=6 open=0 close=0 chauthtok=6 "
	  "end=0" },
	{ "vt_ff_between_tokens", NULL,
	  { F("svc", "auth\vrequired " P "\n"
		     "account required\f" P "\n"
		     "session required " DBG "\vopen_session=session_err\n"
		     "password\frequired " P "\n"
		     "session optional " ECHO " ok\n") },
	  "start=0 auth=6 setcred=6 acct=6 {4:ok} open=28 close=28 "
	  "chauthtok=6 end=0" },
	{ "vt_ff_in_arguments", NULL,
	  { F("svc", "auth optional " ECHO " a\vb \fc d\v\f\n"
		     "auth required " DBG " \vauth=perm_denied\n"
		     "account required " DBG " acct=perm_denied\f\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 {4:a\\x0bb \\x0cc d\\x0b\\x0c} auth=0 setcred=0 "
	  "acct=0 open=0 close=0 chauthtok=0 end=0" },
	{ "keywords_mixed_case", NULL,
	  { F("svc", "AUTH Required " P "\n"
		     "Account REQUISITE " DBG " acct=perm_denied\n"
		     "Session Optional " DN "\nsession REQUIRED " P "\n"
		     "PassWord SUFFICIENT " P "\nPASSWORD required " DN
		     "\n") },
	  "start=0 auth=0 setcred=0 {4:acct=perm_denied} acct=6 open=0 "
	  "close=0 chauthtok=0 end=0" },
	{ "include_keywords_mixed_case", NULL,
	  { F("svc", "Auth Include @D@/inc1\n"
		     "ACCOUNT SUBSTACK @D@/inc1\n"
		     "@INCLUDE @D@/inc2\n"
		     "session [include] @D@/inc1\n"
		     "password [SubStack] @D@/inc1\n"),
	    F("inc1", "auth required " DBG " auth=cred_insufficient\n"
		      "account required " DBG " acct=user_unknown\n"
		      "session required " DBG " open_session=session_err\n"
		      "password required " DN "\n"),
	    F("inc2", "password required " DBG
		      " prechauthtok=authinfo_unavail\n"
		      "auth optional " ECHO " from inc2\n") },
	  "start=0 {4:auth=cred_insufficient} {4:from inc2} auth=8 "
	  "setcred=6 {4:acct=user_unknown} acct=10 "
	  "{4:open_session=session_err} open=14 close=6 "
	  "{4:prechauthtok=authinfo_unavail} chauthtok=9 end=0", 0, NULL, 0, 0,
	  "start=0 {4:auth=cred_insufficient} auth=8 setcred=6 "
	  "{4:acct=user_unknown} acct=10 {4:open_session=session_err} "
	  "open=14 close=6 chauthtok=20 end=0" },
	{ "at_include", NULL,
	  { F("svc", "@include @D@/inc1\n"
		     "account required " DBG " acct=perm_denied\n"
		     "  @Include\t@D@/inc2 ignored words\n"),
	    F("inc1", "auth required " DBG " auth=maxtries\n"
		      "password required " P "\nsession required " P "\n"),
	    F("inc2", "auth optional " ECHO " inc2\n") },
	  "start=0 {4:auth=maxtries} {4:inc2} auth=11 setcred=6 "
	  "{4:acct=perm_denied} acct=6 open=0 close=0 chauthtok=0 end=0", 0, NULL, 0, 0,
	  "start=0 auth=6 setcred=6 {4:acct=perm_denied} acct=6 "
	  "open=6 close=6 chauthtok=6 end=0" },
	{ "dash_types", NULL,
	  { F("svc", "-auth required " NX "\n"
		     "-session optional " NX "\n"
		     "-account required " DN "\n"
		     "-Auth sufficient " DBG " auth=success\n"
		     "AUTH required " DN "\n"
		     "-password include @D@/inc1\n"
		     "session required " P "\n"
		     "-Session required " NX " x\n"),
	    F("inc1", "password required " DBG " prechauthtok=cred_err\n") },
	  "start=0 {4:auth=success} auth=28 setcred=28 acct=7 open=28 "
	  "close=28 {4:prechauthtok=cred_err} chauthtok=17 end=0" },
	{ "jumps", NULL,
	  { F("svc", "auth [success=1 default=ignore] " P "\n"
		     "auth required " DN "\n"
		     "auth [ success=ok  new_authtok_reqd=ok\tdefault=die ] " DBG
		     " auth=new_authtok_reqd\n"
		     "account [default=bad success=2] " P "\n"
		     "account required " DN "\naccount required " DN "\n"
		     "account [success=done default=die] " DBG
		     " acct=perm_denied\n"
		     "session [success=1 default=ignore]" P "\n"
		     "session requisite " DN "\n"
		     "session optional " ECHO " jumped\n"
		     "password [success=3 default=bad] " P "\n"
		     "password required " P "\n") },
	  "start=0 {4:auth=new_authtok_reqd} auth=12 setcred=0 "
	  "{4:acct=perm_denied} acct=6 {4:jumped} open=0 close=6 "
	  "chauthtok=6 end=0", 0, NULL, 0, 0,
	  "start=0 {4:auth=new_authtok_reqd} auth=12 setcred=0 "
	  "{4:acct=perm_denied} acct=6 {4:jumped} open=0 close=0 "
	  "chauthtok=6 end=0" },
	{ "brackets", NULL,
	  { F("svc", "[auth] [required] [" P "]\n"
		     "[-account] required [" NX "]\n"
		     "account optional [" ECHO "]x [y \\] z] [unterminated w\n"
		     "session [success=ok default=bad]" P "\n"
		     "password [required] " P " [a]b\n") },
	  "start=0 auth=0 setcred=0 {4:x y ] z unterminated w\\x0a} "
	  "acct=28 open=0 close=0 chauthtok=0 end=0" },
	{ "comments", NULL,
	  { F("svc", "# a comment\n   # an indented one\n\t#\n"
		     "auth required " P " # trailing " DN "\n"
		     "auth required " DBG " cred=cred_err#cut auth=perm_denied\n"
		     "account required " P "\t#\t" DN "\n"
		     "session optional " ECHO " \\# after a backslash\n"
		     "session required " P "#\n"
		     "password required " P "\n") },
	  "start=0 auth=0 {4:cred=cred_err} setcred=17 acct=0 {4:\\x5c} "
	  "open=0 close=0 chauthtok=0 end=0" },
	{ "comment_after_backslash", NULL,
	  { F("svc", "auth required " DBG " \\ # not a continuation\n"
		     "auth=perm_denied\n"
		     "account optional " ECHO " x\\#y\n"
		     "account required " P "\n"
		     "session required " P "\\#\npassword required " P "\n") },
	  "start=0 auth=6 setcred=6 {4:x\\x5c} acct=0 open=28 close=28 "
	  "chauthtok=0 end=0" },
	{ "continuation", NULL,
	  { F("svc", "auth required " DBG " \\\n  auth=perm_denied \\\n"
		     "\tcred=cred_expired\n"
		     "account required \\\n " DBG " acct=acct_expired\n"
		     "session \\\n required \\\n " P "\n"
		     "password required " DBG " \\   \t\n"
		     "prechauthtok=perm_denied\n"
		     "auth optional " ECHO " a\\\nb\\\n\\\nc\n") },
	  "start=0 {4:auth=perm_denied} {4:a b c} auth=6 "
	  "{4:cred=cred_expired} setcred=16 {4:acct=acct_expired} "
	  "acct=13 open=0 close=0 {4:prechauthtok=perm_denied} "
	  "chauthtok=6 end=0" },
	{ "continuation_blank_and_comment_lines", NULL,
	  { F("svc", "auth required " DBG " \\\n\n   \n# comment inside\n"
		     "\t# another # one\nauth=perm_denied\n"
		     "account optional " ECHO " \\\n#c\n one\\\n   \ntwo\n"
		     "account required " P "\nsession required " P "\n"
		     "password required " P "\n") },
	  "start=0 {4:auth=perm_denied} auth=6 setcred=6 {4:one two} "
	  "acct=0 open=0 close=0 chauthtok=0 end=0",
	  .expect16 = "start=0 auth=6 setcred=6 {4:} acct=0 open=0 close=0 "
		      "chauthtok=0 end=0" },
	{ "eof_in_continued_line", NULL,
	  { F("svc", ALLP "auth required " P " \\\n") },
	  START26 },
	{ "eof_in_continued_line_no_newline", NULL,
	  { F("svc", ALLP "auth required " P "\\") },
	  START26 },
	{ "eof_after_continuation_and_blank_lines", NULL,
	  { F("svc", ALLP "account required " P " \\\n\n  \n# c\n") },
	  START26,
	  .expect16 = ALL0 },
	{ "line_of_999_bytes", NULL,
	  { F("svc", "auth required " DBG " cred=cred_err a@PADTO:982@"
		     " auth=perm_denied\n"
		     "account required " P "\nsession required " P "\n"
		     "password required " P "\n") },
	  "start=0 {4:auth=perm_denied} auth=6 {4:cred=cred_err} "
	  "setcred=17 acct=0 open=0 close=0 chauthtok=0 end=0" },
	{ "line_of_1023_bytes", NULL,
	  { F("svc", "auth required " DBG " cred=cred_err a@PADTO:1006@"
		     " auth=perm_denied\n"
		     "account required " P "\nsession required " P "\n"
		     "password required " P "\n") },
	  "start=0 {4:auth=perm_denied} auth=6 {4:cred=cred_err} "
	  "setcred=17 acct=0 open=0 close=0 chauthtok=0 end=0" },
	{ "long_line_split_into_a_line", NULL,
	  { F("svc", "auth required " P " a@PADTO:1022@ "
		     "account required " DBG " acct=perm_denied\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 auth=0 setcred=0 {4:acct=perm_denied} acct=6 open=0 "
	  "close=0 chauthtok=0 end=0",
	  .expect16 = "start=0 auth=0 setcred=0 acct=6 open=0 close=0 "
		      "chauthtok=0 end=0" },
	{ "long_line_split_in_a_token", NULL,
	  { F("svc", "auth required " DBG " a@PADTO:1010@ auth=perm_denied\n"
		     "account required " P "\nsession required " P "\n"
		     "password required " P "\n") },
	  "start=0 auth=6 setcred=6 acct=0 open=0 close=0 chauthtok=0 "
	  "end=0",
	  .expect16 = "start=0 {4:auth=perm_denied} auth=6 setcred=6 acct=0 "
		      "open=0 close=0 chauthtok=0 end=0" },
	{ "long_line_split_before_backslash", NULL,
	  { F("svc", "auth required " P " a@PADTO:1023@b \\\n"
		     "account required " DBG " acct=perm_denied\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 auth=6 setcred=6 acct=6 open=0 close=0 chauthtok=0 "
	  "end=0",
	  .expect16 = "start=0 auth=0 setcred=0 acct=6 open=0 close=0 "
		      "chauthtok=0 end=0" },
	{ "continuation_overflows_into_next_line", NULL,
	  { F("svc", "auth required " P " a@PADTO:99@\\\n"
		     "a@PADTO:922@ account required " DBG " acct=perm_denied\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 auth=0 setcred=0 {4:acct=perm_denied} acct=6 open=0 "
	  "close=0 chauthtok=0 end=0",
	  .expect16 = "start=0 auth=0 setcred=0 acct=6 open=0 close=0 "
		      "chauthtok=0 end=0" },
	{ "continuation_fills_buffer_but_two_bytes", NULL,
	  { F("svc", "auth required " P " a@PADTO:99@\\\n"
		     "a@PADTO:921@\\ account required " DBG " acct=perm_denied\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 auth=6 setcred=6 acct=6 open=0 close=0 chauthtok=0 "
	  "end=0",
	  .expect16 = "start=0 auth=0 setcred=0 acct=6 open=0 close=0 "
		      "chauthtok=0 end=0" },
	{ "include_missing", NULL,
	  { F("svc", "auth include @D@/missing\nauth required " P "\n"
		     "account substack @D@/missing\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 auth=6 setcred=6 acct=6 open=0 close=0 chauthtok=0 "
	  "end=0" },
	/* Debian's @include of a missing file fails the whole service */
	{ "at_include_missing", NULL,
	  { F("svc", ALLP "@include @D@/missing\n") },
	  START26 , 0, NULL, 0, 0,
	  "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
	  "chauthtok=0 end=0" },
	{ "lines_without_module", NULL,
	  { F("svc", "auth\naccount required\nsession\t\n-password\n"
		     "auth optional " ECHO " x\n") },
	  "start=0 {4:x} auth=6 setcred=6 acct=6 open=6 close=6 "
	  "chauthtok=6 end=0" },
	{ "nested_includes", NULL,
	  { F("svc", "auth include @D@/inc1\naccount include @D@/inc1\n"
		     "session substack @D@/inc1\nsession required " P "\n"
		     "password required " P "\n"),
	    F("inc1", "auth substack @D@/inc2\n"
		      "auth required " DBG " auth=maxtries\n"
		      "account required " DBG " acct=perm_denied\n"
		      "session [success=done default=die] " DBG
		      " open_session=session_err\n"
		      "@include @D@/inc3\n"),
	    F("inc2", "auth [success=done default=die] " DBG
		      " auth=user_unknown\naccount optional " P "\n"),
	    F("inc3", "session optional " ECHO " inc3\n"
		      "password optional " ECHO " inc3 pw\n") },
	  "start=0 {4:auth=user_unknown} {4:auth=maxtries} auth=10 "
	  "setcred=6 {4:acct=perm_denied} acct=6 "
	  "{4:open_session=session_err} open=14 close=6 chauthtok=0 "
	  "end=0" },
	{ "include_of_a_broken_file", NULL,
	  { F("svc", "auth include @D@/inc1\naccount substack @D@/inc1\n"
		     "session required " P "\npassword required " P "\n"),
	    F("inc1", "auth optional " ECHO " inc1\n"
		      "account required " P "\nauth required " DN " \\\n") },
	  "start=0 {4:inc1} auth=6 setcred=6 acct=6 open=0 close=0 "
	  "chauthtok=0 end=0" },
	{ "other_for_an_unknown_service", "nosuch",
	  { F("other", DBG_ALL), F("svc", "auth required " DN "\n") },
	  DBG_ALL_RES },
	{ "other_with_a_broken_last_line", NULL,
	  { F("svc", ALLP), F("other", "auth required " P "\n"
				      "account required " P " \\\n") },
	  START26 },
	{ "other_broken_unknown_service", "nosuch",
	  { F("other", ALLP "account required " P " \\") },
	  START26 },
	{ "no_service_and_no_other", "nosuch",
	  { F("svc", ALLP) },
	  START26 },
	{ "empty_file", NULL, { F("svc", "") }, NOMOD },
	{ "no_trailing_newline", NULL,
	  { F("svc", "auth required " P "\nsession required " P "\n"
		     "password required " P "\n"
		     "account required " DBG " acct=perm_denied") },
	  "start=0 auth=0 setcred=0 {4:acct=perm_denied} acct=6 open=0 "
	  "close=0 chauthtok=0 end=0" },
	{ "nul_bytes", NULL,
	  { F("svc", "auth required " DBG " auth=perm_denied\0 cred=cred_err\n"
		     "\0auth required " DN "\n"
		     "auth optional " ECHO " hello\0world\n"
		     "account required " P "\0\\\n"
		     "session required " DBG " \\\n\0xx\n"
		     "open_session=session_err\n"
		     "password required " P "\n") },
	  "start=0 {4:auth=perm_denied} {4:hello} auth=6 setcred=6 "
	  "acct=0 {4:open_session=session_err} open=14 close=6 "
	  "chauthtok=0 end=0",
	  .expect16 = "start=0 {4:auth=perm_denied} {4:hello} auth=6 setcred=6 "
		      "acct=0 open=6 close=6 chauthtok=0 end=0" },
	{ "blanks_everywhere", NULL,
	  { F("svc", "\t auth \t required\t\t" P " \t\n \n\t\n"
		     "account\t\trequired " P "\t\t\n"
		     "session required  " P "\npassword required " P) },
	  ALL0 },
	/* an unclosed "[..." whose line libpam ends without a newline (cut
	 * at '#' or NUL, or the last line): the copy must not hand the token
	 * a newline (found by fuzz_pamdiff) */
	{ "unterminated_bracket_cut", NULL,
	  { F("svc", "auth optional " ECHO " [abc#\nauth optional " ECHO
		     " [def\0x\n" ALLP "auth optional " ECHO " [ghi") },
	  "start=0 {4:abc} {4:def} {4:ghi} auth=0 setcred=0 acct=0 open=0 "
	  "close=0 chauthtok=0 end=0" },
	{ "empty_module_from_bracket", NULL,
	  { F("svc", ALLP "auth required [#\n") }, START26 },
	/* include targets that are not regular files: libpam opens a
	 * directory and /dev/null and reads no line from them */
	{ "include_a_directory", NULL,
	  { F("svc", "auth include @D@/sub\nauth required " DBG
		     " auth=maxtries\naccount substack @D@/sub\n"
		     "account required " P "\nsession [include] @D@/sub/\n"
		     "session required " P "\npassword required " P "\n"),
	    DIRE("sub") },
	  "start=0 {4:auth=maxtries} auth=11 setcred=6 acct=0 open=0 "
	  "close=0 chauthtok=0 end=0" },
	{ "include_dev_null", NULL,
	  { F("svc", "auth include /dev/null\nauth required " DBG
		     " auth=maxtries\naccount substack /dev/null\n"
		     "@include /dev/null\n"
		     "account required " P "\nsession required " P "\n"
		     "password required " P "\n") },
	  "start=0 {4:auth=maxtries} auth=11 setcred=6 acct=0 open=0 "
	  "close=0 chauthtok=0 end=0" },
	{ "include_an_empty_file", NULL,
	  { F("svc", "auth include @D@/empty\nauth required " DBG
		     " auth=maxtries\naccount substack @D@/empty\n"
		     "account required " P "\nsession required " P "\n"
		     "password include @D@/empty\n"),
	    F("empty", "") },
	  "start=0 {4:auth=maxtries} auth=11 setcred=6 acct=0 open=0 "
	  "close=0 chauthtok=6 end=0" },
	/* a substack is named after its target's last path component, and
	 * libpam refuses the service when that name is empty (found by
	 * fuzz_pamdiff).  (In an included file libpam 1.5.2 then leaves a
	 * half-made handler in the stack, with an uninitialised next
	 * pointer: what follows depends on the allocator, a crash under
	 * ASan; the wrapper keeps the line as written, so libpam does the
	 * same on the copy.) */
	{ "substack_named_empty", NULL,
	  { F("svc", ALLP "account substack @D@/sub/\n"), DIRE("sub") },
	  START26 },
	{ "at_include_a_directory", NULL,
	  { F("svc", ALLP "@include @D@/sub\n"), DIRE("sub") }, ALL0 , 0, NULL, 0, 0,
	  "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
	  "chauthtok=0 end=0" },
	/* a target libpam cannot open fails its line's stack, as a missing
	 * one does (as root it is read) */
	{ "include_unreadable", NULL,
	  { F("svc", "auth include @D@/secret\nauth required " P "\n"
		     "account substack @D@/secret\n"
		     "session required " P "\npassword required " P "\n"),
	    FMODE("secret", "auth optional " ECHO " read\n"
			    "account required " P "\n", 0) },
	  "start=0 auth=6 setcred=6 acct=6 open=0 close=0 chauthtok=0 end=0",
	  0, "start=0 {4:read} auth=0 setcred=0 acct=0 open=0 close=0 "
	     "chauthtok=0 end=0" },
	/* libpam has no depth limit for includes: only its stack ends the
	 * recursion (at about 5340 levels on 8 MiB) */
	{ "includes_nested_40_deep", NULL,
	  { F("svc", "auth include @D@/c1\naccount required " P "\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 {4:auth=perm_denied} auth=6 setcred=6 acct=0 open=0 "
	  "close=0 chauthtok=0 end=0", 40,
	  .expect16 = "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
		      "chauthtok=0 end=0" },
	{ "includes_nested_1000_deep", NULL,
	  { F("svc", "auth include @D@/c1\naccount required " P "\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 {4:auth=perm_denied} auth=6 setcred=6 acct=0 open=0 "
	  "close=0 chauthtok=0 end=0", 1000,
	  .expect16 = "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
		      "chauthtok=0 end=0" },
	/* on a 1 MiB stack libpam survives 600 levels: the wrapper's walk
	 * of them, on the same stack before libpam's, must too */
	{ "includes_nested_600_deep_on_1_mib", NULL,
	  { F("svc", "auth include @D@/c1\naccount required " P "\n"
		     "session required " P "\npassword required " P "\n") },
	  "start=0 {4:auth=perm_denied} auth=6 setcred=6 acct=0 open=0 "
	  "close=0 chauthtok=0 end=0", 600, NULL, 1024,
	  .expect16 = "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
		      "chauthtok=0 end=0" },
};

/* Continued lines that make libpam loop forever (bare: "hang"). */
static const struct dcase hang_cases[] = {
	/* libpam blocks opening a FIFO (no writer), as the service's own
	 * file or in "other" */
	{ "hang_include_a_fifo", NULL,
	  { F("svc", ALLP "account include @D@/fifo\n"), FIFO("fifo") },
	  "hang" },
	{ "hang_substack_a_fifo_in_other", "nosuch",
	  { F("other", ALLP "auth substack @D@/fifo\n"), FIFO("fifo") },
	  "hang" },
	{ "hang_long_line", NULL,
	  { F("svc", ALLP "auth required " P " a@PADTO:1022@\\\n"
		     "auth required " P "\n") },
	  "hang",
	  .expect16 = ALL0 },
	{ "hang_continued_line", NULL,
	  { F("svc", ALLP "auth required " P " a@PADTO:99@\\\n"
		     "a@PADTO:922@\\\nauth required " P "\n") },
	  "hang",
	  .expect16 = ALL0 },
	{ "hang_in_included_file", NULL,
	  { F("svc", ALLP "account include @D@/inc1\n"),
	    F("inc1", "account required " P " a@PADTO:1022@\\\n"
		      "account required " P "\n") },
	  "hang",
	  .expect16 = ALL0 },
	{ "hang_in_other", "nosuch",
	  { F("other", "auth required " P " a@PADTO:1022@\\\n\n") },
	  "hang",
	  .expect16 = "start=0 auth=0 setcred=0 acct=6 open=6 close=6 "
		      "chauthtok=6 end=0" },
};

/* Lines on which libpam crashes (an include with no target: libpam
 * 1.5.2 dereferences the missing name).  The wrapper may pass them on
 * (the same crash) or refuse the file; nothing else. */
static const struct dcase crash_cases[] = {
	{ "crash_include_without_target", NULL,
	  { F("svc", ALLP "auth include\n") },
	  "signal:11", 0, NULL, 0, 0,
	  "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
	  "chauthtok=0 end=0" },
	{ "crash_substack_without_target", NULL,
	  { F("svc", ALLP "account [SubStack] # x\n") },
	  "signal:11", 0, NULL, 0, 0,
	  "start=0 auth=0 setcred=0 acct=6 open=0 close=0 "
	  "chauthtok=0 end=0" },
	{ "crash_at_include_without_target", NULL,
	  { F("svc", ALLP "@INCLUDE \t\n") },
	  "signal:11", 0, NULL, 0, 0,
	  "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
	  "chauthtok=0 end=0" },
	{ "crash_in_included_file", NULL,
	  { F("svc", ALLP "session include @D@/inc1\n"),
	    F("inc1", "session include\n") },
	  "signal:11", 0, NULL, 0, 0,
	  "start=0 auth=0 setcred=0 acct=0 open=6 close=6 "
	  "chauthtok=0 end=0" },
	/* deeper than libpam's stack holds (a 1 KiB line buffer per level:
	 * 8200 levels need more than 8 MiB): the wrapper refuses (its limit
	 * is 8192 levels).  Walking 8192 files takes it seconds of CPU time:
	 * 120 s of it, not the chains' 60. */
	{ "crash_includes_nested_8200_deep", NULL,
	  { F("svc", "auth include @D@/c1\naccount required " P "\n"
		     "session required " P "\npassword required " P "\n") },
	  "signal:11", 8200, NULL, 8192, 120,
	  .expect16 = "start=0 auth=6 setcred=6 acct=0 open=0 close=0 "
		      "chauthtok=0 end=0" },
};

#else
#include "diff_cases_openpam.h"
#endif
#pragma GCC diagnostic pop

/* What the last file of a chain holds. */
#if defined(PWRAP_OPENPAM)
#define CHAIN_END "auth required @M@/pam_return.so error=PAM_AUTH_ERR\n"
#define CHAIN_LINK "auth include c%u\n"	/* OpenPAM: by name */
#else
#define CHAIN_END "auth required " DBG " auth=perm_denied\n"
#define CHAIN_LINK "auth include %s/c%u\n"
#endif

struct gstate {
	char *work;	/* the wrapped children's TMPDIR, and stderr logs */
	char *no_bare;	/* why bare libpam cannot be run here, or NULL */
	const char *moddir;
	char **env_bare;
	char **env_wrapped;
	void *libpam;
};

static struct gstate G;

/* ---- helpers ------------------------------------------------------------ */

struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static size_t column(const struct buf *b)
{
	size_t i = b->len;

	while (i > 0 && b->p[i - 1] != '\n') {
		i--;
	}
	return b->len - i;
}

/* The case text with its placeholders expanded (may contain NULs). */
static struct buf expand(const struct dfile *f, const char *dir)
{
	struct buf b = { NULL, 0, 0 };
	size_t i = 0;

	buf_add(&b, "", 0);
	while (i < f->len) {
		const char *s = f->text + i;
		size_t rest = f->len - i;

		if (rest >= 3 && memcmp(s, "@M@", 3) == 0) {
			buf_add(&b, G.moddir, strlen(G.moddir));
			i += 3;
		} else if (rest >= 3 && memcmp(s, "@D@", 3) == 0) {
			buf_add(&b, dir, strlen(dir));
			i += 3;
		} else if (rest > 7 && memcmp(s, "@PADTO:", 7) == 0) {
			char *end = NULL;
			unsigned long to = strtoul(s + 7, &end, 10);
			size_t col = column(&b);

			assert_true(end != NULL && *end == '@');
			if (to < col) {
				fail_msg("%s: @PADTO:%lu@ but already at column "
					 "%zu (paths too long)", f->name, to,
					 col);
			}
			for (; col < to; col++) {
				buf_add(&b, "a", 1);
			}
			i = (size_t)(end + 1 - f->text);
		} else {
			buf_add(&b, s, 1);
			i++;
		}
	}
	return b;
}

static void write_bytes(const char *dir, const char *name, const char *p,
			size_t len)
{
	char *path = tu_path(dir, name);

	tu_write_file(path, p, len, 0644);
	free(path);
}

static char **make_env(bool wrapped)
{
	static const char *const drop[] = { "TMPDIR=", "PAM_WRAPPER",
					    "LD_PRELOAD=", "ASAN_OPTIONS=",
					    NULL };
	const char *a = getenv("ASAN_OPTIONS");
	char **env = tu_env_copy(drop);

	/* In the sanitizer build the client is instrumented: a crash of
	 * libpam must still end it by the signal these cases look for. */
	tu_env_add(&env, "ASAN_OPTIONS=%s%shandle_segv=0", a ? a : "",
		   a && *a ? ":" : "");
	tu_env_add(&env, "TMPDIR=%s", G.work);
	if (wrapped) {
		const char *pre = getenv("PWRAP_PRELOAD");

		assert_non_null(pre);
		tu_env_add(&env, "LD_PRELOAD=%s", pre);
		tu_env_add(&env, "PAM_WRAPPER=1");
	}
	return env;
}

/* The FIFOs in dir (malloc'd paths, NULL-terminated). */
static char **fifos_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = calloc(1, sizeof(*v));
	size_t n = 0;

	assert_non_null(d);
	assert_non_null(v);
	while ((de = readdir(d)) != NULL) {
		char *p = tu_path(dir, de->d_name);
		struct stat st;

		if (lstat(p, &st) == 0 && S_ISFIFO(st.st_mode)) {
			v = realloc(v, (n + 2) * sizeof(*v));
			assert_non_null(v);
			v[n++] = p;
			v[n] = NULL;
		} else {
			free(p);
		}
	}
	closedir(d);
	return v;
}

/* Whether a process has one of the FIFOs open for reading: a writer's
 * non-blocking open finds it (ENXIO when there is none).  Bare libpam
 * blocks in that open for ever (no writer comes). */
static bool fifo_read(char **fifos)
{
	for (size_t i = 0; fifos[i] != NULL; i++) {
		int fd = open(fifos[i], O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0) {
			close(fd);
			return true;
		}
	}
	return false;
}

/*
 * Runs the client (wrapped or bare) on dir/service with cpu_s seconds of
 * CPU time; returns its output line (malloc'd, without the newline), or
 * "hang" (it is killed) when it ran out of CPU time, when it (bare) opened a
 * FIFO of dir for reading, or when it has not ended after TU_HANG_SECONDS
 * (see the top of the file: nothing here depends on the machine's speed),
 * or "exit:<status>" when it failed.  Its stderr goes to errlog.  *ms gets
 * the time it took and *cpu_ms the CPU time it used (for reports only).
 */
static char *run_client(bool wrapped, const char *trace, const char *dir,
			const char *service, unsigned cpu_s,
			const char *errlog, long long *ms, long long *cpu_ms)
{
	struct rusage ru;
	char *argv[] = { (char *)PWRAP_DIFF_CLIENT,
			 (char *)(wrapped ? "start" : BARE_MODE), (char *)dir,
			 (char *)service, NULL };
	char **env = make_env(wrapped);
	char **fifos = wrapped ? calloc(1, sizeof(char *)) : fifos_in(dir);
	posix_spawn_file_actions_t fa;
	struct buf out = { NULL, 0, 0 };
	long long start = tu_now_ms();
	long long deadline = start + TU_HANG_SECONDS * 1000LL;
	bool hung = false, open_ended = false;
	char *res = NULL;
	int p[2];
	pid_t pid;
	int st;

	assert_non_null(fifos);
	/* the wrapped client's PAM_WRAPPER_SERVICE_DIR is the case's dir */
	if (wrapped) {
		tu_env_add(&env, "PAM_WRAPPER_SERVICE_DIR=%s", dir);
	}
	if (trace != NULL) {
		tu_env_add(&env, "PAM_WRAPPER_TRACE=%s", trace);
	}
	tu_env_add(&env, "PWRAP_DIFF_CPU_SECONDS=%u", cpu_s);
	buf_add(&out, "", 0);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, errlog,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);

	/* its output until it closes stdout (it ends), it blocks on a FIFO,
	 * or the last resort; every 50 ms a look at the FIFOs */
	while (!open_ended) {
		struct pollfd pfd = { p[0], POLLIN, 0 };
		char chunk[4096];
		ssize_t n;

		if (fifo_read(fifos) || tu_now_ms() >= deadline) {
			hung = true;
			break;
		}
		n = poll(&pfd, 1, 50);
		if (n <= 0) {
			assert_true(n == 0 || errno == EINTR);
			continue;
		}
		n = read(p[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		assert_true(n >= 0);
		open_ended = n == 0;
		buf_add(&out, chunk, (size_t)n);
	}
	close(p[0]);
	/* stdout closed: the process is ending (or it closed stdout early
	 * and goes on: the same last resort then) */
	memset(&ru, 0, sizeof(ru));
	while (!hung && wait4(pid, &st, WNOHANG, &ru) == 0) {
		hung = fifo_read(fifos) || tu_now_ms() >= deadline;
		usleep(2000);
	}
	if (hung) {
		kill(pid, SIGKILL);
		while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
		}
	}
	*cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000LL +
		  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
	if (hung || (WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU) ||
	    (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)) {
		/* SIGXCPU: the CPU limit; SIGKILL: its hard limit (or ours) */
		res = strdup("hang");
	} else if (WIFSIGNALED(st)) {
		assert_true(asprintf(&res, "signal:%d", WTERMSIG(st)) > 0);
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		assert_true(asprintf(&res, "exit:%d", WEXITSTATUS(st)) > 0);
	} else {
		if (out.len > 0 && out.p[out.len - 1] == '\n') {
			out.p[--out.len] = '\0';
		}
		res = strdup(out.p);
	}
	assert_non_null(res);
	*ms = tu_now_ms() - start;
	free(out.p);
	for (size_t i = 0; fifos[i] != NULL; i++) {
		free(fifos[i]);
	}
	free(fifos);
	tu_env_free(env);
	return res;
}

static void show_file(const char *what, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[2048];

	print_message("---- %s\n", what);
	if (f == NULL) {
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t n = strlen(line);

		print_message("  %s%s", line,
			      n > 0 && line[n - 1] == '\n' ? "" : "\n");
	}
	fclose(f);
}

struct outcome {
	char *bare, *wrapped, *traced;
	long long bare_ms, wrapped_ms, traced_ms;
	long long bare_cpu, wrapped_cpu, traced_cpu;	/* CPU ms */
	char *dir;
	char *errlog[3];
	char *trace;	/* the traced run's records */
};

static void outcome_free(struct outcome *o)
{
	for (int i = 0; i < 3; i++) {
		unlink(o->errlog[i]);
		free(o->errlog[i]);
	}
	unlink(o->trace);
	free(o->trace);
	tu_rmtree(o->dir);
	free(o->dir);
	free(o->bare);
	free(o->wrapped);
	free(o->traced);
}

/* A client's line without its messages and pam_end: what the trace's
 * start and result records give (NULL when the run did not finish). */
static char *calls_only(const char *line)
{
	char *s = strdup(line), *o = s;
	const char *p = line;

	assert_non_null(s);
	if (strncmp(line, "start=", 6) != 0) {
		free(s);
		return NULL;
	}
	while (*p != '\0') {
		if (strncmp(p, " {", 2) == 0) {
			p = strchr(p, '}');	/* '}' inside is written \x7d */
			assert_non_null(p);
			p++;
		} else if (strncmp(p, " end=", 5) == 0) {
			p += strcspn(p + 1, " ") + 1;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return s;
}

/* The results the trace recorded agree with what the client saw. */
static bool trace_agrees(const struct outcome *o, char **why)
{
	struct trecs t = tr_read(o->trace);
	char *want = calls_only(o->traced);
	char *got = tr_results(&t);
	char *summary = tr_summary(&t, o->dir);
	bool ok = want == NULL || strcmp(want, got) == 0;

	if (!ok) {
		assert_true(asprintf(why, "the client saw \"%s\", the trace "
				     "says \"%s\" (%s)", want, got,
				     summary) > 0);
	}
	tr_free(&t);
	free(want);
	free(got);
	free(summary);
	return ok;
}

/* Writes the case's files into a fresh directory and runs both clients. */
/* Files c1 ... cN of a chain of includes in dir. */
static void write_chain(const char *dir, unsigned n)
{
	for (unsigned i = 1; i <= n; i++) {
		char name[32];
		char *text = NULL;

		snprintf(name, sizeof(name), "c%u", i);
		if (i < n) {
#if defined(PWRAP_OPENPAM)
			assert_true(asprintf(&text, CHAIN_LINK, i + 1) > 0);
			(void)dir;
#else
			assert_true(asprintf(&text, CHAIN_LINK, dir, i + 1) > 0);
#endif
			write_bytes(dir, name, text, strlen(text));
		} else {
			struct dfile end = F(name, CHAIN_END);
			struct buf b = expand(&end, dir);

			write_bytes(dir, name, b.p, b.len);
			free(b.p);
		}
		free(text);
	}
}

/* The clients inherit this process's stack limit: kib > 0 sets it (soft)
 * for them, and the descriptor limit as high as allowed, so that only the
 * stack bounds libpam's nesting. */
struct limits {
	struct rlimit stack, files;
};

static void with_stack_limit(unsigned kib, struct limits *saved)
{
	struct rlimit r;

	if (kib == 0) {
		return;
	}
	assert_int_equal(getrlimit(RLIMIT_STACK, &saved->stack), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved->files), 0);
	r = saved->stack;
	r.rlim_cur = (rlim_t)kib * 1024;
	if (r.rlim_max != RLIM_INFINITY && r.rlim_cur > r.rlim_max) {
		r.rlim_cur = r.rlim_max;
	}
	assert_int_equal(setrlimit(RLIMIT_STACK, &r), 0);
	r = saved->files;
	r.rlim_cur = r.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &r);
}

static void restore_stack_limit(unsigned kib, const struct limits *saved)
{
	if (kib == 0) {
		return;
	}
	assert_int_equal(setrlimit(RLIMIT_STACK, &saved->stack), 0);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved->files), 0);
}

static unsigned case_cpu_s(const struct dcase *c)
{
	return c->cpu_s != 0 ? c->cpu_s
			     : c->chain > 0 ? RUN_CPU_SECONDS_CHAIN
					    : RUN_CPU_SECONDS;
}

static struct outcome run_case(const struct dcase *c)
{
	struct outcome o;
	struct limits saved;
	const char *svc = c->service ? c->service : "svc";
	size_t i;

	memset(&o, 0, sizeof(o));
	o.dir = tu_mkdtemp("pwrap-test");
	/* the directory is the test user's own: its 0700 lets libpam (and
	 * the wrapper) read what the files' modes allow */
	for (i = 0; i < 4 && c->files[i].name != NULL; i++) {
		const struct dfile *f = &c->files[i];
		char *path = tu_path(o.dir, f->name);

		if (f->type == 'd') {
			assert_int_equal(mkdir(path, 0755), 0);
		} else if (f->type == 'p') {
			assert_int_equal(mkfifo(path, 0644), 0);
		} else {
			struct buf b = expand(f, o.dir);

			write_bytes(o.dir, f->name, b.p, b.len);
			if (f->type == 'm') {
				assert_int_equal(chmod(path, f->mode), 0);
			}
			free(b.p);
		}
		free(path);
	}
	write_chain(o.dir, c->chain);
	assert_true(asprintf(&o.errlog[0], "%s/%s.bare.err", G.work,
			     c->name) > 0);
	assert_true(asprintf(&o.errlog[1], "%s/%s.wrapped.err", G.work,
			     c->name) > 0);
	assert_true(asprintf(&o.errlog[2], "%s/%s.traced.err", G.work,
			     c->name) > 0);
	assert_true(asprintf(&o.trace, "%s/%s.trace", G.work, c->name) > 0);
	with_stack_limit(c->stack_kib, &saved);
	o.bare = run_client(false, NULL, o.dir, svc, case_cpu_s(c),
			    o.errlog[0], &o.bare_ms, &o.bare_cpu);
	o.wrapped = run_client(true, NULL, o.dir, svc, case_cpu_s(c),
			       o.errlog[1], &o.wrapped_ms,
			       &o.wrapped_cpu);
	o.traced = run_client(true, o.trace, o.dir, svc, case_cpu_s(c),
			      o.errlog[2], &o.traced_ms,
			      &o.traced_cpu);
	restore_stack_limit(c->stack_kib, &saved);
	return o;
}

/* What bare libpam gives for c here. */
/* How the libpam the client loads reads its configuration. */
static struct pamconf_rules R;

/* What bare libpam gives for case c, for the kind of libpam this is:
 * Linux-PAM 1.6 or later, with Debian's patches (@include) or not. */
static const char *expected(const struct dcase *c)
{
	bool v16 = R.impl == PAMCONF_LINUX_PAM && R.version >= 106;
	bool upstream = R.impl == PAMCONF_LINUX_PAM && !R.at_include;

	if (v16 && upstream && c->expect16_old != NULL) {
		return c->expect16_old;
	}
	if (v16 && c->expect16 != NULL) {
		return c->expect16;
	}
	if (upstream && c->expect_old != NULL) {
		return c->expect_old;
	}
	if (geteuid() == 0 && c->expect_root != NULL) {
		return c->expect_root;
	}
	return c->expect;
}

/* run_case(), unless bare libpam cannot be run here: then the test is
 * skipped, saying why. */
static struct outcome run_case_or_skip(const struct dcase *c)
{
	if (G.no_bare != NULL) {
		TU_SKIP("%s", G.no_bare);
	}
	return run_case(c);
}

static void report(const struct dcase *c, const struct outcome *o)
{
	size_t i;

	print_message("case %s (service %s) in %s\n", c->name,
		      c->service ? c->service : "svc", o->dir);
	for (i = 0; i < 4 && c->files[i].name != NULL; i++) {
		char *p = tu_path(o->dir, c->files[i].name);

		if (c->files[i].type == 0 || c->files[i].type == 'm') {
			show_file(c->files[i].name, p);
		} else {
			print_message("---- %s: a %s\n", c->files[i].name,
				      c->files[i].type == 'd' ? "directory"
							      : "FIFO");
		}
		free(p);
	}
	if (c->chain > 0) {
		print_message("---- c1 ... c%u: a chain of includes, ending "
			      "in %s", c->chain, CHAIN_END);
	}
	print_message("bare:     %s (%lld ms, CPU %lld ms)\n"
		      "wrapped:  %s (%lld ms, CPU %lld ms)\n"
		      "traced:   %s (%lld ms, CPU %lld ms)\n", o->bare,
		      o->bare_ms, o->bare_cpu, o->wrapped, o->wrapped_ms,
		      o->wrapped_cpu, o->traced, o->traced_ms, o->traced_cpu);
	if (expected(c) != NULL) {
		print_message("expected: %s\n", expected(c));
	}
	show_file("bare stderr", o->errlog[0]);
	show_file("wrapped stderr", o->errlog[1]);
	show_file("traced stderr", o->errlog[2]);
	show_file("trace", o->trace);
}

/* ---- the tests ---------------------------------------------------------- */

static void test_case(void **state)
{
	const struct dcase *c = *state;
	struct outcome o = run_case_or_skip(c);
	/* the wrapper's answer, untraced and traced: bare libpam's, or where
	 * the wrapper differs on purpose, the case's */
	const char *want = c->expect_wrapped != NULL ? c->expect_wrapped
						     : o.bare;
	bool same = strcmp(want, o.wrapped) == 0;
	bool same_traced = strcmp(want, o.traced) == 0;
	const char *expect = expected(c);
	bool as_expected = expect == NULL || strcmp(o.bare, expect) == 0;
	char *why = NULL;
	bool agrees = trace_agrees(&o, &why);

	if (!same || !same_traced || !as_expected || !agrees ||
	    getenv("PWRAP_DIFF_VERBOSE") != NULL) {
		report(c, &o);
	}
	if (!as_expected) {
		outcome_free(&o);
		fail_msg("bare libpam does not give what the case expects: "
			 "libpam changed, or the case no longer tests what "
			 "it says");
	}
	if (!same) {
		outcome_free(&o);
		fail_msg("the wrapper and bare libpam disagree");
	}
	if (!same_traced) {
		outcome_free(&o);
		fail_msg("the wrapper with PAM_WRAPPER_TRACE and bare libpam "
			 "disagree");
	}
	if (!agrees) {
		print_message("%s\n", why);
		free(why);
		outcome_free(&o);
		fail_msg("the trace's results are not the client's");
	}
	outcome_free(&o);
}

/* libpam hangs; the wrapper must refuse the file, in time.  (A libpam
 * that reads the case without hanging, 1.6 and later for most of them, is
 * compared as any other case.) */
static void test_hang_case(void **state)
{
	const struct dcase *c = *state;
	struct outcome o;

	if (strcmp(expected(c), "hang") != 0) {
		test_case(state);
		return;
	}
	o = run_case_or_skip(c);
	int start = -1;
	bool refused = strncmp(o.wrapped, "start=", 6) == 0 &&
		       sscanf(o.wrapped, "start=%d", &start) == 1 &&
		       start != 0 && strcmp(o.wrapped, o.traced) == 0;

	if (strcmp(o.bare, "hang") != 0 || !refused ||
	    getenv("PWRAP_DIFF_VERBOSE") != NULL) {
		report(c, &o);
	}
	if (strcmp(o.bare, "hang") != 0) {
		outcome_free(&o);
		fail_msg("bare libpam did not hang: the case no longer tests "
			 "what it says");
	}
	if (!refused) {
		outcome_free(&o);
		fail_msg("the wrapper did not refuse a file on which libpam "
			 "hangs (pam_start must fail; \"hang\" here: it ran "
			 "out of CPU time too, or blocked)");
	}
	outcome_free(&o);
}

/* libpam crashes; the wrapper crashes the same way or refuses the file.
 * A libpam that does not crash on the case (one without Debian's include
 * patch on an include without a target: it fails the line's stack; 1.6
 * and later on deep includes: it stops at 16 levels) the wrapper must
 * follow. */
static void test_crash_case(void **state)
{
	const struct dcase *c = *state;
	struct outcome o = run_case_or_skip(c);
	const char *expect = expected(c);
	bool crash = strncmp(expect, "signal:", 7) == 0;
	int start = -1;
	bool refused = sscanf(o.wrapped, "start=%d", &start) == 1 &&
		       start != 0 && strchr(o.wrapped, ' ') == NULL &&
		       strcmp(o.wrapped, o.traced) == 0;
	bool same = strcmp(o.bare, o.wrapped) == 0 &&
		    strcmp(o.bare, o.traced) == 0;
	bool ok = crash ? refused || same : same;

	if (strcmp(o.bare, expect) != 0 || !ok ||
	    getenv("PWRAP_DIFF_VERBOSE") != NULL) {
		report(c, &o);
	}
	if (strcmp(o.bare, expect) != 0) {
		outcome_free(&o);
		fail_msg("bare libpam does not give what the case expects: "
			 "the case no longer tests what it says");
	}
	if (!ok) {
		outcome_free(&o);
		if (crash) {
			fail_msg("the wrapper neither behaves as libpam nor "
				 "refuses the file");
		}
		fail_msg("the wrapper and bare libpam disagree");
	}
	outcome_free(&o);
}

static void test_runs_unprivileged_when_asked(void **state)
{
	(void)state;
	if (getenv("PWRAP_AS_NOBODY") != NULL) {
		assert_int_not_equal(getuid(), 0);
		assert_int_not_equal(geteuid(), 0);
	}
}

/* Without pam_start_confdir, whether the private mount namespace can be
 * had (G.no_bare says why not). */
static void probe_bare(void)
{
#if !defined(PWRAP_HAVE_PAM_START_CONFDIR)
	char *argv[] = { (char *)PWRAP_DIFF_CLIENT, (char *)"nsprobe", G.work,
			 NULL };
	char **env = tu_env_copy(NULL);
	char *out = NULL, *err = NULL;
	int st = tu_run_capture(argv, env, &out, &err);

	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		out[strcspn(out, "\n")] = '\0';
		if (asprintf(&G.no_bare, "this libpam has no pam_start_confdir "
			     "and %s", out[0] ? out : err) < 0) {
			G.no_bare = NULL;
		}
		print_message("skipped: %s\n", G.no_bare);
	}
	free(out);
	free(err);
	tu_env_free(env);
#endif
}

static int group_setup(void **state)
{
	struct stat st;

	(void)state;
	G.moddir = getenv("PWRAP_SYSTEM_MODULE_DIR");
	if (G.moddir == NULL || getenv("PWRAP_PRELOAD") == NULL) {
		fprintf(stderr, "PWRAP_SYSTEM_MODULE_DIR and PWRAP_PRELOAD "
			"must be set (run through ctest)\n");
		return -1;
	}
	if (stat(G.moddir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "no module directory %s\n", G.moddir);
		return -1;
	}
	G.work = tu_mkdtemp("pwrap-test");
	probe_bare();
	/* the libpam the client links (kept loaded: only its bytes are
	 * read) */
	G.libpam = dlopen(PWRAP_LIBPAM_SONAME, RTLD_LAZY | RTLD_LOCAL);
	pamconf_rules_detect(&R, G.libpam,
			     G.libpam != NULL ? dlsym(G.libpam, "pam_start")
					      : NULL);
	print_message("bare libpam reads as %s%s\n", R.label,
		      R.at_include ? " with Debian's @include" : "");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (G.work != NULL) {
		tu_rmtree(G.work);
		free(G.work);
		G.work = NULL;
	}
	free(G.no_bare);
	G.no_bare = NULL;
	return 0;
}

int main(void)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	const size_t nh = sizeof(hang_cases) / sizeof(hang_cases[0]);
	const size_t nc = sizeof(crash_cases) / sizeof(crash_cases[0]);
	struct CMUnitTest *tests = calloc(n + nh + nc + 1, sizeof(*tests));
	size_t i, k = 0;
	int rc;

	if (tests == NULL) {
		return 1;
	}
	tests[k++] = (struct CMUnitTest)cmocka_unit_test(
		test_runs_unprivileged_when_asked);
	for (i = 0; i < n; i++) {
		tests[k].name = cases[i].name;
		tests[k].test_func = test_case;
		tests[k].initial_state = (void *)&cases[i];
		k++;
	}
	for (i = 0; i < nh; i++) {
		tests[k].name = hang_cases[i].name;
		tests[k].test_func = test_hang_case;
		tests[k].initial_state = (void *)&hang_cases[i];
		k++;
	}
	for (i = 0; i < nc; i++) {
		if (crash_cases[i].name == NULL) {
			continue;	/* an empty table */
		}
		tests[k].name = crash_cases[i].name;
		tests[k].test_func = test_crash_case;
		tests[k].initial_state = (void *)&crash_cases[i];
		k++;
	}
	rc = _cmocka_run_group_tests("differential", tests, k, group_setup,
				     group_teardown);
	free(tests);
	return rc;
}
