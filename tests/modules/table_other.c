/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rows of the differential table (table.h): pam_chatty's options, and
 * pam_set_items (process environment -> items) and pam_get_items (items
 * -> PAM environment) for every item and every PAM function.  The items
 * are set and read by the test-only pam_table_probe.so, so that neither
 * module is checked with the other.
 */
#include "table.h"

#define CH .module = "pam_chatty"
#define INFO "I:Authentication succeeded"
#define ERR "E:Authentication generated an error"
#define I3 INFO "\n" INFO "\n" INFO
#define E3 ERR "\n" ERR "\n" ERR
#define I5 I3 "\n" INFO "\n" INFO
#define I16 I5 "\n" I5 "\n" I5 "\n" INFO
#define E16 E3 "\n" E3 "\n" E3 "\n" E3 "\n" E3 "\n" ERR
#define CHATTY_ROW(name, src_, opts, m)                                    \
	{ .id = name, .src = src_, CH, .options = opts, .steps = AUTH,     \
	  .codes = { PAM_SUCCESS }, .msgs = m }
#define CHATTY_OURS(name, opts, m, why)                                   \
	{ .id = name, .src = SRC_DEB, CH, .options = opts, .steps = AUTH, \
	  .codes = { PAM_SUCCESS }, .msgs = m, .ours = why }
#define RANGE "extension: upstream sends at least 3 and at most 16"
#define PREFIX "upstream takes an option by its prefix"
#define ONLY_AUTH "extension: upstream has only the auth group"

/* The probe in every group. */
#define PR(g, args) g " required %T/pam_table_probe.so " args "\n"
#define PROBE4(args) \
	PR("auth", args) PR("account", args) PR("password", args) \
	PR("session", args)
#define DUMP4 PROBE4("dump")
#define BASE "PROBE_PAM_SERVICE=svc\nPROBE_PAM_USER=alice"
#define GBASE "PAM_SERVICE=svc\nPAM_USER=alice"

/* pam_set_items with ENV, the probe dumping the items after it. */
#define SET_ROW(name, env_, steps_, penv_)                                \
	{ .id = name, .src = SRC_MAN_ITEMS, .module = "pam_set_items",    \
	  .env = env_, .post = DUMP4, .steps = steps_,                    \
	  .codes = { PAM_SUCCESS }, .penv = penv_ }
/* the probe setting ARGS, pam_get_items after it */
#define GET_ROW(name, args, steps_, penv_)                                \
	{ .id = name, .src = SRC_MAN_ITEMS, .module = "pam_get_items",    \
	  .pre = PROBE4(args), .steps = steps_, .codes = { PAM_SUCCESS },  \
	  .penv = penv_ }
/* pam_set_items with ENV, then pam_get_items */
#define BOTH_ROW(name, env_, steps_, penv_)                               \
	{ .id = name, .src = SRC_MAN_ITEMS, .module = "pam_set_items",    \
	  .env = env_,                                                    \
	  .post = "auth required %M/pam_get_items.so\n"                   \
		  "account required %M/pam_get_items.so\n"                \
		  "password required %M/pam_get_items.so\n"               \
		  "session required %M/pam_get_items.so\n",               \
	  .steps = steps_, .codes = { PAM_SUCCESS }, .penv = penv_ }

const struct tb_row tb_other_rows[] = {
	/* ---- pam_chatty ---- */
	CHATTY_ROW("chatty-info", SRC_MAN_CHATTY, "info", I3),
	CHATTY_ROW("chatty-error", SRC_MAN_CHATTY, "error", E3),
	CHATTY_ROW("chatty-both", SRC_MAN_CHATTY, "info error", I3 "\n" E3),
	CHATTY_ROW("chatty-both-reversed", SRC_DEB, "error info", I3 "\n" E3),
	CHATTY_ROW("chatty-none", SRC_DEB, "", NULL),
	CHATTY_ROW("chatty-num-only", SRC_DEB, "num_lines=5", NULL),
	CHATTY_ROW("chatty-5", SRC_MAN_CHATTY, "num_lines=5 info", I5),
	CHATTY_ROW("chatty-5-after", SRC_DEB, "info num_lines=5", I5),
	CHATTY_ROW("chatty-3", SRC_DEB, "num_lines=3 error", E3),
	CHATTY_ROW("chatty-16", SRC_MAN_CHATTY, "num_lines=16 info", I16),
	CHATTY_ROW("chatty-16-error", SRC_MAN_CHATTY, "num_lines=16 error",
		   E16),
	CHATTY_ROW("chatty-bad-num", SRC_DEB, "num_lines=abc info", I3),
	CHATTY_ROW("chatty-empty-num", SRC_DEB, "num_lines= info", I3),
	CHATTY_ROW("chatty-unknown", SRC_DEB, "verbose info", I3),
	CHATTY_ROW("chatty-twice", SRC_DEB, "info info", I3),
	CHATTY_OURS("chatty-0", "num_lines=0 info", NULL, RANGE),
	CHATTY_OURS("chatty-1", "num_lines=1 info", INFO, RANGE),
	CHATTY_OURS("chatty-2", "num_lines=2 error", ERR "\n" ERR, RANGE),
	CHATTY_OURS("chatty-17", "num_lines=17 info", I16 "\n" INFO, RANGE),
	CHATTY_OURS("chatty-errors", "errors", NULL, PREFIX),
	CHATTY_OURS("chatty-information", "information", NULL, PREFIX),
	{ .id = "chatty-conv-fail", .src = SRC_DEB, CH, .options = "info",
	  .on_msg = TB_FAIL, .steps = AUTH, .codes = { PAM_SUCCESS },
	  .msgs = I3 },
	{ .id = "chatty-conv-fail-both", .src = SRC_DEB, CH,
	  .options = "info error", .on_msg = TB_FAIL, .steps = AUTH,
	  .codes = { PAM_SUCCESS }, .msgs = I3 "\n" E3 },
	{ .id = "chatty-conv-nullresp", .src = SRC_DEB, CH, .options = "error",
	  .on_msg = TB_NULLRESP, .steps = AUTH, .codes = { PAM_SUCCESS },
	  .msgs = E3 },
	{ .id = "chatty-null-conv-fn", .src = SRC_DEB, CH, .options = "info",
	  .null_conv = true, .steps = AUTH, .codes = { PAM_SUCCESS },
	  .ours = "upstream crashes on a NULL conversation function" },
	{ .id = "chatty-acct", .src = SRC_DEB, CH, .options = "info",
	  .steps = ACCT, .codes = { PAM_SUCCESS }, .ours = ONLY_AUTH },
	{ .id = "chatty-setcred", .src = SRC_DEB, CH, .options = "info",
	  .steps = SETCRED, .codes = { PAM_SUCCESS }, .ours = ONLY_AUTH },
	{ .id = "chatty-open", .src = SRC_DEB, CH, .options = "info",
	  .steps = OPEN, .codes = { PAM_SUCCESS }, .ours = ONLY_AUTH },
	{ .id = "chatty-close", .src = SRC_DEB, CH, .options = "info",
	  .steps = CLOSE, .codes = { PAM_SUCCESS }, .ours = ONLY_AUTH },
	{ .id = "chatty-chauthtok", .src = SRC_DEB, CH, .options = "info",
	  .steps = CHTOK, .codes = { PAM_SUCCESS }, .ours = ONLY_AUTH },

	/* ---- pam_set_items: each item ---- */
	SET_ROW("set-none", NULL, AUTH, BASE),
#if defined(PWRAP_OPENPAM)
	/* OpenPAM's pam_set_item sets PAM_SERVICE once only, in pam_start:
	 * later it answers PAM_BAD_ITEM, which pam_set_items ignores. */
	SET_ROW("set-service", "PAM_SERVICE=Other", AUTH, BASE),
#else
	/* Linux-PAM lowercases the service name it is given. */
	SET_ROW("set-service", "PAM_SERVICE=Other", AUTH,
		"PROBE_PAM_SERVICE=other\nPROBE_PAM_USER=alice"),
#endif
	SET_ROW("set-user", "PAM_USER=bob", AUTH,
		"PROBE_PAM_SERVICE=svc\nPROBE_PAM_USER=bob"),
	SET_ROW("set-user-prompt", "PAM_USER_PROMPT=Who? ", AUTH,
		BASE "\nPROBE_PAM_USER_PROMPT=Who? "),
	SET_ROW("set-tty", "PAM_TTY=/dev/pts/7", AUTH,
		"PROBE_PAM_SERVICE=svc\nPROBE_PAM_TTY=/dev/pts/7\n"
		"PROBE_PAM_USER=alice"),
	SET_ROW("set-ruser", "PAM_RUSER=remote", AUTH,
		"PROBE_PAM_RUSER=remote\n" BASE),
	SET_ROW("set-rhost", "PAM_RHOST=host.example", AUTH,
		"PROBE_PAM_RHOST=host.example\n" BASE),
	SET_ROW("set-authtok", "PAM_AUTHTOK=s3cr=t", AUTH,
		"PROBE_PAM_AUTHTOK=s3cr=t\n" BASE),
	SET_ROW("set-oldauthtok", "PAM_OLDAUTHTOK=old", AUTH,
		"PROBE_PAM_OLDAUTHTOK=old\n" BASE),
#if !defined(PWRAP_OPENPAM)
	SET_ROW("set-xdisplay", "PAM_XDISPLAY=:0.0", AUTH,
		BASE "\nPROBE_PAM_XDISPLAY=:0.0"),
	SET_ROW("set-authtok-type", "PAM_AUTHTOK_TYPE=UNIX", AUTH,
		"PROBE_PAM_AUTHTOK_TYPE=UNIX\n" BASE),
#endif
	SET_ROW("set-empty", "PAM_RHOST=", AUTH, "PROBE_PAM_RHOST=\n" BASE),
	SET_ROW("set-two", "PAM_RHOST=h\nPAM_RUSER=r", AUTH,
		"PROBE_PAM_RHOST=h\nPROBE_PAM_RUSER=r\n" BASE),
	SET_ROW("set-lowercase-name", "pam_rhost=h", AUTH, BASE),
	/* ---- pam_set_items: each function ---- */
	SET_ROW("set-setcred", "PAM_RHOST=h", SETCRED,
		"PROBE_PAM_RHOST=h\n" BASE),
	SET_ROW("set-acct", "PAM_RHOST=h", ACCT, "PROBE_PAM_RHOST=h\n" BASE),
	SET_ROW("set-open", "PAM_RHOST=h", OPEN, "PROBE_PAM_RHOST=h\n" BASE),
	SET_ROW("set-close", "PAM_RHOST=h", CLOSE, "PROBE_PAM_RHOST=h\n" BASE),
	SET_ROW("set-chauthtok", "PAM_AUTHTOK=t\nPAM_OLDAUTHTOK=o", CHTOK,
		"PROBE_PAM_AUTHTOK=t\nPROBE_PAM_OLDAUTHTOK=o\n" BASE),

	/* ---- pam_get_items: each item ---- */
	GET_ROW("get-none", "", AUTH, GBASE),
	{ .id = "get-no-user", .src = SRC_MAN_ITEMS, .module = "pam_get_items",
	  .nouser = true, .steps = AUTH, .codes = { PAM_SUCCESS },
	  .penv = "PAM_SERVICE=svc" },
	GET_ROW("get-user", "set=PAM_USER=bob", AUTH,
		"PAM_SERVICE=svc\nPAM_USER=bob"),
	GET_ROW("get-user-prompt", "set=PAM_USER_PROMPT=Who?", AUTH,
		GBASE "\nPAM_USER_PROMPT=Who?"),
	GET_ROW("get-tty", "set=PAM_TTY=tty7", AUTH,
		"PAM_SERVICE=svc\nPAM_TTY=tty7\nPAM_USER=alice"),
	GET_ROW("get-ruser", "set=PAM_RUSER=remote", AUTH,
		"PAM_RUSER=remote\n" GBASE),
	GET_ROW("get-rhost", "set=PAM_RHOST=host", AUTH,
		"PAM_RHOST=host\n" GBASE),
	GET_ROW("get-authtok", "set=PAM_AUTHTOK=tok", AUTH,
		"PAM_AUTHTOK=tok\n" GBASE),
	GET_ROW("get-oldauthtok", "set=PAM_OLDAUTHTOK=old", AUTH,
		"PAM_OLDAUTHTOK=old\n" GBASE),
#if !defined(PWRAP_OPENPAM)
	GET_ROW("get-xdisplay", "set=PAM_XDISPLAY=:1", AUTH,
		GBASE "\nPAM_XDISPLAY=:1"),
	GET_ROW("get-authtok-type", "set=PAM_AUTHTOK_TYPE=UNIX", AUTH,
		"PAM_AUTHTOK_TYPE=UNIX\n" GBASE),
#endif
#if defined(PWRAP_OPENPAM)
	/* The probe's pam_set_item(PAM_SERVICE) fails (set once only, by
	 * pam_start): its PAM_BAD_ITEM is the stack's; pam_get_items still
	 * runs and reports the service pam_start set. */
	{ .id = "get-service", .src = SRC_MAN_ITEMS,
	  .module = "pam_get_items", .pre = PROBE4("set=PAM_SERVICE=Other"),
	  .steps = AUTH, .codes = { PAM_BAD_ITEM }, .penv = GBASE },
#else
	GET_ROW("get-service", "set=PAM_SERVICE=Other", AUTH,
		"PAM_SERVICE=other\nPAM_USER=alice"),
#endif
	GET_ROW("get-empty", "set=PAM_RHOST=", AUTH, "PAM_RHOST=\n" GBASE),
	GET_ROW("get-unset", "set=PAM_RHOST=h unset=PAM_RHOST", AUTH, GBASE),
	GET_ROW("get-with-equals", "set=PAM_AUTHTOK=a=b", AUTH,
		"PAM_AUTHTOK=a=b\n" GBASE),
	/* ---- pam_get_items: each function ---- */
	GET_ROW("get-setcred", "set=PAM_RHOST=h", SETCRED,
		"PAM_RHOST=h\n" GBASE),
	GET_ROW("get-acct", "set=PAM_RHOST=h", ACCT, "PAM_RHOST=h\n" GBASE),
	GET_ROW("get-open", "set=PAM_RHOST=h", OPEN, "PAM_RHOST=h\n" GBASE),
	GET_ROW("get-close", "set=PAM_RHOST=h", CLOSE, "PAM_RHOST=h\n" GBASE),
	GET_ROW("get-chauthtok", "set=PAM_AUTHTOK=t set=PAM_OLDAUTHTOK=o",
		CHTOK, "PAM_AUTHTOK=t\nPAM_OLDAUTHTOK=o\n" GBASE),
	/* ---- both: environment -> items -> PAM environment ---- */
	BOTH_ROW("both-rhost", "PAM_RHOST=h", AUTH, "PAM_RHOST=h\n" GBASE),
	BOTH_ROW("both-authtok", "PAM_AUTHTOK=tok", AUTH,
		 "PAM_AUTHTOK=tok\n" GBASE),
	BOTH_ROW("both-user", "PAM_USER=bob", OPEN,
		 "PAM_SERVICE=svc\nPAM_USER=bob"),
	BOTH_ROW("both-tty-acct", "PAM_TTY=t", ACCT,
		 "PAM_SERVICE=svc\nPAM_TTY=t\nPAM_USER=alice"),
	BOTH_ROW("both-chauthtok", "PAM_OLDAUTHTOK=o", CHTOK,
		 "PAM_OLDAUTHTOK=o\n" GBASE),
};

const size_t tb_other_nrows = TB_NROWS(tb_other_rows);
