/*
 * Linux-PAM's control words read into one action per return code, as
 * libpam's configuration reader reads them (see pwrap_control.h).  Used by
 * the module trace inside the wrapper and by pamtest explore; no state, no
 * allocation.
 */
#include "pwrap_control.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#define UNSET 100	/* not set yet: filled by a default */

/* Linux-PAM's values, whatever PAM this is compiled against */
enum { LP_SUCCESS = 0, LP_NEW_AUTHTOK_REQD = 12, LP_IGNORE = 25 };

/* The return-value names of pam.conf(5), in Linux-PAM's code order, then
 * "default". */
static const char *const words[PWRAP_CONTROL_CODES + 1] = {
	"success", "open_err", "symbol_err", "service_err", "system_err",
	"buf_err", "perm_denied", "auth_err", "cred_insufficient",
	"authinfo_unavail", "user_unknown", "maxtries", "new_authtok_reqd",
	"acct_expired", "session_err", "cred_unavail", "cred_expired",
	"cred_err", "no_module_data", "conv_err", "authtok_err",
	"authtok_recover_err", "authtok_lock_busy", "authtok_disable_aging",
	"try_again", "ignore", "abort", "authtok_expired", "module_unknown",
	"bad_item", "conv_again", "incomplete", "default",
};
static const char *const actions[] = { "ignore", "ok", "done", "bad", "die",
				       "reset" };
#define NACTIONS (sizeof(actions) / sizeof(actions[0]))

const char *pwrap_control_code_word(int code)
{
	return code >= 0 && code < PWRAP_CONTROL_CODES ? words[code] : "?";
}

static void set_unset(int *act, int a)
{
	for (int i = 0; i < PWRAP_CONTROL_CODES; i++) {
		if (act[i] == UNSET) {
			act[i] = a;
		}
	}
}

static const char *skip_blanks(const char *p)
{
	while (isspace((unsigned char)*p)) {
		p++;
	}
	return p;
}

/* "[value=action ...]": a value or action name is recognised by its prefix
 * (so "successful" is "success" followed by garbage); blanks around '=' are
 * allowed.  False on any error (with `exact_jumps`, as from Linux-PAM 1.6,
 * a jump past INT_MAX is one; before, it wrapped as libpam's int does). */
static bool parse_brackets(const char *p, int *act, bool exact_jumps)
{
	for (p = skip_blanks(p); *p != '\0'; p = skip_blanks(p)) {
		size_t v, k, len = 0;
		int a = 0;

		for (v = 0; v <= PWRAP_CONTROL_CODES; v++) {
			len = strlen(words[v]);
			if (strncmp(words[v], p, len) == 0) {
				break;
			}
		}
		if (v > PWRAP_CONTROL_CODES || p[len] == '\0') {
			return false;
		}
		p = skip_blanks(p + len);
		if (*p++ != '=') {
			return false;
		}
		p = skip_blanks(p);
		for (k = 0; k < NACTIONS; k++) {
			len = strlen(actions[k]);
			if (strncmp(actions[k], p, len) == 0) {
				a = -(int)k;
				p += len;
				break;
			}
		}
		if (k == NACTIONS) {
			uint32_t n = 0;	/* libpam's int, wrapping */

			if (!isdigit((unsigned char)*p)) {
				return false;
			}
			while (isdigit((unsigned char)*p)) {
				uint32_t d = (uint32_t)(*p++ - '0');

				if (exact_jumps &&
				    (n > INT32_MAX / 10 || n * 10 > INT32_MAX - d)) {
					return false;
				}
				n = n * 10 + d;
			}
			a = (int)n;
			if (a == 0) {
				return false;
			}
		}
		if (v == PWRAP_CONTROL_CODES) {
			set_unset(act, a);
		} else {
			act[v] = a;
		}
	}
	return true;
}

/* What libpam makes of CONTROL (see pwrap_control_actions): 0 include or
 * substack (ACT untouched), 1 read, -1 an error (every code "bad"). */
static int read_control(const char *control, int act[PWRAP_CONTROL_CODES],
			bool exact_jumps)
{
	static const struct {
		const char *name;
		int success, other;
		bool ignore_is_ignore;
	} keywords[] = {
		{ "required", PWRAP_CONTROL_OK, PWRAP_CONTROL_BAD, true },
		{ "requisite", PWRAP_CONTROL_OK, PWRAP_CONTROL_DIE, true },
		{ "optional", PWRAP_CONTROL_OK, PWRAP_CONTROL_IGNORE, false },
		{ "sufficient", PWRAP_CONTROL_DONE, PWRAP_CONTROL_IGNORE, false },
	};
	int rc = 1;

	if (strcasecmp(control, "include") == 0 ||
	    strcasecmp(control, "substack") == 0) {
		return 0;
	}
	for (int i = 0; i < PWRAP_CONTROL_CODES; i++) {
		act[i] = UNSET;
	}
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++) {
		if (strcasecmp(control, keywords[i].name) == 0) {
			act[LP_SUCCESS] = keywords[i].success;
			act[LP_NEW_AUTHTOK_REQD] = keywords[i].success;
			if (keywords[i].ignore_is_ignore) {
				act[LP_IGNORE] = PWRAP_CONTROL_IGNORE;
			}
			set_unset(act, keywords[i].other);
			return 1;
		}
	}
	if (!parse_brackets(control, act, exact_jumps)) {
		for (int i = 0; i < PWRAP_CONTROL_CODES; i++) {
			act[i] = PWRAP_CONTROL_BAD;
		}
		rc = -1;
	}
	set_unset(act, PWRAP_CONTROL_BAD);
	return rc;
}

bool pwrap_control_readable(const char *control, bool exact_jumps)
{
	int act[PWRAP_CONTROL_CODES];

	return read_control(control, act, exact_jumps) >= 0;
}

bool pwrap_control_actions(const char *control, int act[PWRAP_CONTROL_CODES],
			   bool exact_jumps)
{
	return read_control(control, act, exact_jumps) != 0;
}
