/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, stage 2: what each call may return.  A group's default
 * set, what Linux-PAM's stock modules return in each group (a table, from
 * their man pages and sources), pam_permit's and pam_deny's fixed codes,
 * --outcomes for every module, --model for one (by name or FILE:LINE).  A module this machine
 * cannot load returns what libpam gives such a line (PAM_MODULE_UNKNOWN)
 * unless --model says what it returns (a stack audited on a machine
 * without the module); one without the group's function returns what
 * libpam gives then.  On OpenPAM a module that cannot be loaded makes
 * pam_start fail, unless it is modelled.  The modules absent here are
 * listed in c->absent, once each, with what they were taken to return.
 */
#define _GNU_SOURCE
#include "explore.h"

#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

xp_set xp_default_outcomes(enum xp_type t)
{
	switch (t) {
	case XP_AUTH:
		return XP_BIT(PAM_SUCCESS) | XP_BIT(PAM_AUTH_ERR) |
		       XP_BIT(PAM_USER_UNKNOWN) | XP_BIT(PAM_AUTHINFO_UNAVAIL) |
		       XP_BIT(PAM_IGNORE);
	case XP_ACCOUNT:
		return XP_BIT(PAM_SUCCESS) | XP_BIT(PAM_NEW_AUTHTOK_REQD) |
		       XP_BIT(PAM_ACCT_EXPIRED) | XP_BIT(PAM_PERM_DENIED) |
		       XP_BIT(PAM_USER_UNKNOWN) | XP_BIT(PAM_IGNORE);
	case XP_PASSWORD:
		return XP_BIT(PAM_SUCCESS) | XP_BIT(PAM_AUTHTOK_ERR) |
		       XP_BIT(PAM_TRY_AGAIN) | XP_BIT(PAM_IGNORE);
	default:
		return XP_BIT(PAM_SUCCESS) | XP_BIT(PAM_SESSION_ERR) |
		       XP_BIT(PAM_IGNORE);
	}
}

/* A stock module whose outcome is fixed (pam_permit, pam_deny): its code
 * (the same on Linux-PAM and OpenPAM), else -1. */
static int stock_fixed(const char *name, enum xp_type t)
{
	static const int deny[XP_NTYPES] = { PAM_AUTH_ERR, PAM_AUTH_ERR,
					     PAM_AUTHTOK_ERR, PAM_SESSION_ERR };

	if (strcmp(name, "pam_permit") == 0) {
		return PAM_SUCCESS;
	}
	return strcmp(name, "pam_deny") == 0 ? deny[t] : -1;
}

/*
 * What Linux-PAM's stock modules (and a few others Debian's stacks name)
 * return from the function of each group: from their man pages' RETURN
 * VALUES and, where those do not tell the groups apart, their sources
 * (Linux-PAM 1.5's modules/).  Faults are left out as the groups'
 * defaults leave them out (PAM_BUF_ERR, PAM_SYSTEM_ERR, PAM_SERVICE_ERR of
 * a misconfigured line, PAM_ABORT, and the conversation's PAM_CONV_ERR,
 * PAM_CONV_AGAIN and PAM_INCOMPLETE), unless the function returns nothing
 * else (pam_env called for account).  0: not known, the group's default.
 * pamtest-explore(1) lists this table; its test compares the two.
 */
#define S(c) XP_BIT(PAM_##c)
static const struct {
	const char *name;
	xp_set set[XP_NTYPES];	/* auth, account, password, session */
} stock[] = {
	{ "pam_access", { S(SUCCESS) | S(PERM_DENIED) | S(USER_UNKNOWN),
			  S(SUCCESS) | S(PERM_DENIED) | S(USER_UNKNOWN),
			  S(SUCCESS) | S(PERM_DENIED) | S(USER_UNKNOWN),
			  S(SUCCESS) | S(PERM_DENIED) | S(USER_UNKNOWN) } },
	{ "pam_echo", { S(SUCCESS) | S(IGNORE), S(SUCCESS) | S(IGNORE),
			S(SUCCESS) | S(IGNORE), S(SUCCESS) | S(IGNORE) } },
	{ "pam_env", { S(IGNORE), S(SERVICE_ERR), S(SERVICE_ERR),
		       S(SUCCESS) | S(SESSION_ERR) } },
	{ "pam_exec", { S(SUCCESS) | S(SYSTEM_ERR) | S(IGNORE),
			S(SUCCESS) | S(SYSTEM_ERR) | S(IGNORE),
			S(SUCCESS) | S(SYSTEM_ERR) | S(IGNORE),
			S(SUCCESS) | S(SYSTEM_ERR) | S(IGNORE) } },
	{ "pam_faildelay", { S(IGNORE), 0, 0, 0 } },
	{ "pam_faillock", { S(SUCCESS) | S(AUTH_ERR) | S(IGNORE), S(SUCCESS),
			    0, 0 } },
	{ "pam_ftp", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN), 0, 0, 0 } },
	{ "pam_group", { S(IGNORE), 0, 0, 0 } },
	{ "pam_issue", { S(SUCCESS) | S(IGNORE), 0, 0, 0 } },
	{ "pam_keyinit", { S(IGNORE), 0, 0,
			   S(SUCCESS) | S(SESSION_ERR) | S(USER_UNKNOWN) } },
	{ "pam_lastlog", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) | S(IGNORE),
			   S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) | S(IGNORE),
			   0, S(SUCCESS) | S(USER_UNKNOWN) } },
	{ "pam_limits", { 0, 0, 0, S(SUCCESS) | S(SESSION_ERR) |
				   S(PERM_DENIED) | S(USER_UNKNOWN) } },
	{ "pam_listfile", { S(SUCCESS) | S(AUTH_ERR) | S(IGNORE),
			    S(SUCCESS) | S(AUTH_ERR) | S(IGNORE),
			    S(SUCCESS) | S(AUTH_ERR) | S(IGNORE),
			    S(SUCCESS) | S(AUTH_ERR) | S(IGNORE) } },
	{ "pam_localuser", { S(SUCCESS) | S(PERM_DENIED), S(SUCCESS) | S(PERM_DENIED),
			     S(SUCCESS) | S(PERM_DENIED), S(SUCCESS) | S(PERM_DENIED) } },
	{ "pam_loginuid", { 0, S(SUCCESS) | S(SESSION_ERR) | S(IGNORE), 0,
			    S(SUCCESS) | S(SESSION_ERR) | S(IGNORE) } },
	{ "pam_mail", { S(IGNORE), 0, 0,
			S(SUCCESS) | S(SESSION_ERR) | S(USER_UNKNOWN) } },
	{ "pam_mkhomedir", { 0, 0, 0, S(SUCCESS) | S(PERM_DENIED) |
				      S(SESSION_ERR) | S(USER_UNKNOWN) } },
	{ "pam_motd", { 0, 0, 0, S(IGNORE) } },
	{ "pam_namespace", { 0, 0, 0, S(SUCCESS) | S(SESSION_ERR) |
				      S(USER_UNKNOWN) | S(IGNORE) } },
	{ "pam_nologin", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) | S(IGNORE),
			   S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) | S(IGNORE),
			   0, 0 } },
	{ "pam_pwhistory", { 0, 0, S(SUCCESS) | S(AUTHTOK_ERR) | S(MAXTRIES) |
				   S(TRY_AGAIN) | S(USER_UNKNOWN) | S(IGNORE), 0 } },
	{ "pam_pwquality", { 0, 0, S(SUCCESS) | S(AUTHTOK_ERR), 0 } },
	{ "pam_rhosts", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN), 0, 0, 0 } },
	{ "pam_rootok", { S(SUCCESS) | S(AUTH_ERR), S(SUCCESS) | S(AUTH_ERR),
			  S(SUCCESS) | S(AUTH_ERR), 0 } },
	{ "pam_securetty", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN),
			     S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN), 0, 0 } },
	{ "pam_selinux", { S(AUTH_ERR), 0, 0, S(SUCCESS) | S(SESSION_ERR) } },
	{ "pam_sepermit", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) | S(IGNORE),
			    S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) | S(IGNORE),
			    0, 0 } },
	{ "pam_setquota", { 0, 0, 0, S(SUCCESS) | S(PERM_DENIED) |
				     S(USER_UNKNOWN) | S(IGNORE) } },
	{ "pam_shells", { S(SUCCESS) | S(AUTH_ERR), S(SUCCESS) | S(AUTH_ERR), 0, 0 } },
	{ "pam_succeed_if", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN),
			      S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN),
			      S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN),
			      S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) } },
	{ "pam_systemd", { 0, 0, 0, S(SUCCESS) | S(SESSION_ERR) } },
	{ "pam_time", { 0, S(SUCCESS) | S(PERM_DENIED) | S(USER_UNKNOWN), 0, 0 } },
	{ "pam_timestamp", { S(SUCCESS) | S(AUTH_ERR), 0, 0,
			     S(SUCCESS) | S(SESSION_ERR) } },
	{ "pam_tty_audit", { 0, 0, 0, S(SUCCESS) | S(SESSION_ERR) | S(IGNORE) } },
	{ "pam_umask", { 0, 0, 0, S(SUCCESS) | S(USER_UNKNOWN) } },
	{ "pam_unix", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) |
			S(AUTHINFO_UNAVAIL) | S(CRED_INSUFFICIENT) | S(MAXTRIES),
			S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) |
			S(AUTHINFO_UNAVAIL) | S(NEW_AUTHTOK_REQD) |
			S(ACCT_EXPIRED) | S(AUTHTOK_EXPIRED),
			S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) |
			S(AUTHTOK_ERR) | S(AUTHTOK_RECOVERY_ERR) |
			S(AUTHTOK_LOCK_BUSY) | S(TRY_AGAIN),
			S(SUCCESS) | S(SESSION_ERR) } },
	{ "pam_userdb", { S(SUCCESS) | S(AUTH_ERR) | S(AUTHTOK_RECOVERY_ERR) |
			  S(USER_UNKNOWN) | S(IGNORE),
			  S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN), 0, 0 } },
	{ "pam_usertype", { S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN),
			    S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN),
			    S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN),
			    S(SUCCESS) | S(AUTH_ERR) | S(USER_UNKNOWN) } },
	{ "pam_warn", { S(IGNORE), S(IGNORE), S(IGNORE), S(IGNORE) } },
	{ "pam_wheel", { S(SUCCESS) | S(AUTH_ERR) | S(PERM_DENIED) |
			 S(USER_UNKNOWN) | S(IGNORE),
			 S(SUCCESS) | S(AUTH_ERR) | S(PERM_DENIED) |
			 S(USER_UNKNOWN) | S(IGNORE), 0, 0 } },
	{ "pam_xauth", { 0, 0, 0, S(SUCCESS) | S(SESSION_ERR) } },
};
#undef S

xp_set xp_stock_outcomes(const char *name, enum xp_type t)
{
	for (size_t i = 0; i < sizeof(stock) / sizeof(stock[0]); i++) {
		if (strcmp(stock[i].name, name) == 0) {
			return stock[i].set[t];
		}
	}
	return 0;
}

int xp_parse_outcomes(const char *s, xp_set *out)
{
	const char *p = s;

	*out = 0;
	while (*p != '\0') {
		size_t n = strcspn(p, ", ");
		char w[64];
		int code = -1;

		if (n > 0 && n < sizeof(w)) {
			memcpy(w, p, n);
			w[n] = '\0';
			for (int c = 0; c < 64 && code < 0; c++) {
				code = strcasecmp(w, xp_code_word(c)) == 0 ? c
									   : -1;
			}
			if (code < 0 && pwrap_code_parse(w, &code) != 0) {
				code = -1;
			}
		}
		if (n > 0 && (code < 0 || code >= 64 ||
			      strcmp(xp_code_name(code), "?") == 0 ||
			      strcmp(xp_code_name(code), "PAM_INCOMPLETE") == 0)) {
			return -1;
		}
		if (n > 0) {
			*out |= XP_BIT(code);
		}
		p += n + (p[n] != '\0');
	}
	return *out != 0 ? 0 : -1;
}

static const struct xp_model *model_for(const struct xp_conf *c,
					const struct xp_line *l,
					const struct xp_opts *o)
{
	const struct xp_model *by_name = NULL;

	for (size_t i = 0; i < o->nmodels; i++) {
		if (strchr(o->models[i].target, ':') != NULL) {
			if (strcmp(o->models[i].target, xp_where(c, l)) == 0) {
				return &o->models[i];
			}
		} else if (xp_name_is(l->name, o->models[i].target)) {
			by_name = &o->models[i];
		}
	}
	return by_name;
}

/* Lists l's module among the absent ones (once per name). */
static int note_absent(struct xp_conf *c, const struct xp_line *l)
{
	struct xp_absent *v;

	for (size_t i = 0; i < c->nabsent; i++) {
		if (strcmp(c->absent[i].name, l->name) == 0) {
			return 0;
		}
	}
	v = reallocarray(c->absent, c->nabsent + 1, sizeof(*v));
	if (v == NULL) {
		return -1;
	}
	c->absent = v;
	v[c->nabsent++] = (struct xp_absent){ l->name, l->outcomes,
					      l->modelled };
	return 0;
}

/* The outcomes of call l of type t (m: its model, or NULL). */
static xp_set outcomes_of(const struct xp_conf *c, struct xp_line *l,
			  enum xp_type t, const struct xp_model *m,
			  const struct xp_opts *o)
{
	bool openpam = c->rules.impl == PAMCONF_OPENPAM;
	int fixed = stock_fixed(l->name, t);

	if (l->no_fn) {
		/* libpam finds no function: what it gives then */
		return XP_BIT(openpam ? PAM_SYMBOL_ERR : PAM_MODULE_UNKNOWN);
	}
	l->modelled = l->absent && m != NULL;
	if (m != NULL) {
		return m->outcomes;
	}
	if (l->absent) {
		return XP_BIT(openpam ? PAM_SYSTEM_ERR : PAM_MODULE_UNKNOWN);
	}
	if (fixed >= 0) {
		return XP_BIT(fixed);
	}
	if (o->outcomes) {
		return o->outcomes;
	}
	/* Linux-PAM's modules: OpenPAM's of the same names are others */
	return !openpam && xp_stock_outcomes(l->name, t) != 0
		       ? xp_stock_outcomes(l->name, t)
		       : xp_default_outcomes(t);
}

/* OpenPAM: the first module read that cannot be loaded (nor is
 * modelled) makes pam_start fail there. */
static int openpam_refusal(struct xp_conf *c)
{
	const struct xp_line *first = NULL;

	for (int t = 0; t < XP_NTYPES; t++) {
		for (int k = 0; k < 2; k++) {
			const struct xp_stack *s = k ? &c->other[t] : &c->conf[t];

			for (size_t i = 0; i < s->n; i++) {
				const struct xp_line *l = &s->v[i];

				if (l->absent && !l->modelled &&
				    (first == NULL || l->seq < first->seq)) {
					first = l;
				}
			}
		}
	}
	if (first == NULL) {
		return 0;
	}
	free(c->refused);
	c->refused_file = first->file;
	return asprintf(&c->refused, "%s: module %s cannot be loaded: "
			"pam_start fails", xp_where(c, first),
			first->module) < 0 ? -1 : 0;
}

int xp_apply_outcomes(struct xp_conf *c, const struct xp_opts *o)
{
	bool *used = calloc(o->nmodels + 1, sizeof(*used));
	int rc = -1;

	if (used == NULL) {
		return -1;
	}
	for (int t = 0; t < XP_NTYPES; t++) {
		for (int k = 0; k < 2; k++) {
			struct xp_stack *s = k ? &c->other[t] : &c->conf[t];

			for (size_t i = 0; i < s->n; i++) {
				struct xp_line *l = &s->v[i];
				const struct xp_model *m = model_for(c, l, o);

				if (m != NULL) {
					used[m - o->models] = true;
				}
				if (l->kind != XP_CALL) {
					continue;
				}
				l->outcomes = outcomes_of(c, l, t, m, o);
				if (l->absent && note_absent(c, l) != 0) {
					goto out;
				}
			}
		}
	}
	for (size_t i = 0; i < o->nmodels; i++) {
		if (!used[i]) {
			fprintf(stderr, "pamtest explore: --model %s: no such "
				"module or line in %s\n", o->models[i].target,
				c->service);
			goto out;
		}
	}
	rc = c->rules.impl == PAMCONF_OPENPAM ? openpam_refusal(c) : 0;
out:
	free(used);
	return rc;
}
