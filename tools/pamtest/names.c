/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Name tables of pamtest(1): PAM return codes, operations, string items and
 * flags, used both to parse scenarios and to print results.  All tables are
 * static and read-only.
 */
#define _GNU_SOURCE
#include "names.h"
#include "pwrap_names.h"

#include <ctype.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(x) {#x, x}
struct name { const char *name; int value; };

static const struct name items[] = {
	N(PAM_SERVICE), N(PAM_USER), N(PAM_TTY), N(PAM_RHOST), N(PAM_AUTHTOK),
	N(PAM_OLDAUTHTOK), N(PAM_RUSER), N(PAM_USER_PROMPT),
#if !defined(PWRAP_OPENPAM)	/* Linux-PAM's */
	N(PAM_XDISPLAY), N(PAM_AUTHTOK_TYPE),
#endif
};

static const struct name flags[] = {
	N(PAM_SILENT), N(PAM_DISALLOW_NULL_AUTHTOK), N(PAM_ESTABLISH_CRED),
	N(PAM_DELETE_CRED), N(PAM_REINITIALIZE_CRED), N(PAM_REFRESH_CRED),
	N(PAM_CHANGE_EXPIRED_AUTHTOK),
};

static const struct name ops[] = {
	{"authenticate", OP_AUTHENTICATE}, {"setcred", OP_SETCRED},
	{"acct_mgmt", OP_ACCT_MGMT},       {"chauthtok", OP_CHAUTHTOK},
	{"open_session", OP_OPEN_SESSION}, {"close_session", OP_CLOSE_SESSION},
	{"account", OP_ACCT_MGMT},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *by_value(const struct name *t, size_t n, int v)
{
	for (size_t i = 0; i < n; i++) {
		if (t[i].value == v) {
			return t[i].name;
		}
	}
	return NULL;
}

/* Names match with or without the "PAM_" prefix. */
static int by_name(const struct name *t, size_t n, const char *s, int *out)
{
	for (size_t i = 0; i < n; i++) {
		const char *nm = t[i].name;
		if (strcmp(nm, s) == 0 ||
		    (strncmp(nm, "PAM_", 4) == 0 && strcmp(nm + 4, s) == 0)) {
			*out = t[i].value;
			return 0;
		}
	}
	return -1;
}

const char *pam_code_name(int code)
{
	static char buf[32]; /* only for unknown codes; single-threaded tool */
	const char *n = pwrap_code_name(code);

	if (n != NULL) {
		return n;
	}
	snprintf(buf, sizeof(buf), "PAM code %d", code);
	return buf;
}

int parse_pam_code(const char *s, int *out)
{
	char *end;
	long v;

	if (pwrap_code_parse(s, out) == 0) {
		return 0;
	}
	if (!isdigit((unsigned char)s[0])) {
		return -1;
	}
	v = strtol(s, &end, 10);
	if (*end != '\0' || v > 1000) {
		return -1;
	}
	*out = (int)v;
	return 0;
}

const char *op_name(enum op op)
{
	return by_value(ops, COUNT(ops), (int)op);
}

int parse_op(const char *s, enum op *out)
{
	char buf[32];
	int v;
	size_t i;

	for (i = 0; s[i] != '\0' && i < sizeof(buf) - 1; i++) {
		buf[i] = s[i] == '-' ? '_' : s[i];
	}
	buf[i] = '\0';
	if (s[i] != '\0' || by_name(ops, COUNT(ops), buf, &v) != 0) {
		return -1;
	}
	*out = (enum op)v;
	return 0;
}

const char *item_name(int item)
{
	const char *n = by_value(items, COUNT(items), item);

	return n != NULL ? n : "PAM_?";
}

int parse_item(const char *s, int *out)
{
	return by_name(items, COUNT(items), s, out);
}

int parse_flag(const char *s, int *out)
{
	return by_name(flags, COUNT(flags), s, out);
}

const char *flag_name(int flag)
{
	return by_value(flags, COUNT(flags), flag);
}

int is_secret_item(int item)
{
	return item == PAM_AUTHTOK || item == PAM_OLDAUTHTOK;
}
