/*
 * Linux-PAM's control words ("required", "[success=ok default=bad]", ...)
 * read into one action per return code, exactly as libpam reads them, for
 * the reader (pamconf_linux.c) and the module trace (pwrap_trace_conf.c);
 * this is the one copy.
 */
#ifndef PWRAP_CONTROL_H
#define PWRAP_CONTROL_H

#include <stdbool.h>

/* not exported from libpam_wrapper.so (same definition as pwrap_private.h) */
#ifndef PWRAP_HIDDEN
#define PWRAP_HIDDEN __attribute__((visibility("hidden")))
#endif

#define PWRAP_CONTROL_CODES 32	/* Linux-PAM's return values (0..31) */

/* libpam's actions; a positive value is a jump over that many lines */
enum {
	PWRAP_CONTROL_IGNORE = 0,
	PWRAP_CONTROL_OK = -1,
	PWRAP_CONTROL_DONE = -2,
	PWRAP_CONTROL_BAD = -3,
	PWRAP_CONTROL_DIE = -4,
	PWRAP_CONTROL_RESET = -5,
};

/* Fills ACT from CONTROL as libpam does: a keyword, or "[value=action ...]"
 * (any error in it makes every code "bad"; a jump's number past INT_MAX
 * wraps as libpam's int does up to Linux-PAM 1.5, is an error from 1.6:
 * EXACT_JUMPS); codes left unset are "bad".  Returns false, with ACT
 * untouched, for "include" and "substack", which are not actions. */
PWRAP_HIDDEN bool pwrap_control_actions(const char *control,
					int act[PWRAP_CONTROL_CODES],
					bool exact_jumps);

/* Whether libpam reads CONTROL without an error (a keyword, "include",
 * "substack" or "[value=action ...]"); on an error it takes every code as
 * "bad" (pwrap_control_actions() gives that). */
PWRAP_HIDDEN bool pwrap_control_readable(const char *control,
					 bool exact_jumps);

/* The pam.conf(5) name of return value CODE ("success", ...), "?" if none */
PWRAP_HIDDEN const char *pwrap_control_code_word(int code);

#endif
