/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's passdb: the line rules (see pam_matrix(8), THE PASSDB):
 * which lines are skipped and why, how a line that is read splits into
 * its fields as upstream's pam_matrix splits it, the account flags, and
 * the log lines that name a line.  passdb.c's reader and passdb_write.c's
 * rewrite use them through passdb_int.h.
 *
 * Nothing in this file logs a password or a line's content.
 */
#define _GNU_SOURCE /* memmem */
#include "passdb.h"
#include "passdb_int.h"

#include <stdbool.h>
#include <string.h>
#include <syslog.h>

#include "pam_compat.h"

static const char *const pm_why_text[PM_NWHY] = {
	[PM_VALID] = "valid",
	[PM_COMMENT] = "comment",
	[PM_LONG] = ("line longer than " PM_STR(PM_LINE_MAX) " bytes"),
	[PM_BLANK] = "blank line",
	[PM_NUL] = "NUL byte in line",
	[PM_FEW] = ("too few fields (expected user:password:service"
		    "[:flags])"),
};

static const char *const pm_note_text[] = {
	[PM_NOTE_NONE] = "",
	/* (parentheses: one string each, not a forgotten comma) */
	[PM_NOTE_FLAG] = ("the fourth field is not a list of account flags "
			  "(expired, must_change, locked): it is read as "
			  "part of the service"),
	[PM_NOTE_CR] = ("line ends with CR (CRLF line ending?): the CR is "
			"part of the service"),
};

/* A skipped line (WHY) or a note on a line that is read.  Lines of the
 * user looked up are logged as errors (the default log level shows them:
 * they are why a test fails); the rest of a file whose user was not
 * found as warnings. */
void pm_log_line(pam_handle_t *pamh, const char *path,
			unsigned long lineno, enum pm_why why,
			enum pm_note note, bool users)
{
	pam_syslog(pamh, users ? LOG_ERR : LOG_WARNING, "%s:%lu: %s%s", path,
		   lineno, why != PM_VALID ? pm_why_text[why] : pm_note_text[note],
		   why != PM_VALID ? ", line skipped" : "");
}

static bool pm_is_blank(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
			return false;
		}
	}
	return true;
}

/* The account flags of the optional fourth field F[0, LEN): names
 * separated by commas (empty items are ignored).  False on an unknown
 * name, or when there is no name at all. */
bool pm_parse_flags(const char *f, size_t len, unsigned *flags)
{
	static const struct {
		const char *name;
		unsigned bit;
	} known[] = {
		{ "expired", PM_F_EXPIRED },
		{ "must_change", PM_F_MUST_CHANGE },
		{ "locked", PM_F_LOCKED },
	};
	const char *end = f + len;
	bool any = false;

	*flags = 0;
	while (f < end) {
		const char *comma = memchr(f, ',', (size_t)(end - f));
		size_t n = (size_t)((comma != NULL ? comma : end) - f);
		bool ok = n == 0;

		for (size_t i = 0; !ok && i < sizeof(known) / sizeof(known[0]);
		     i++) {
			if (strlen(known[i].name) == n &&
			    memcmp(known[i].name, f, n) == 0) {
				*flags |= known[i].bit;
				ok = true;
			}
		}
		if (!ok) {
			return false;
		}
		any |= n > 0;
		f += n + (comma != NULL ? 1 : 0);
	}
	return any;
}

static const char *pm_skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t')) {
		p++;
	}
	return p;
}

/* As upstream reads a line: blanks after the first and the second ':' are
 * dropped, only '\n' ends the line (a CR is data) and what follows the
 * second ':' is the service, unless it is "service:flags" with a list of
 * known flags (our extension). */
void pm_split(const char *p, size_t len, size_t ulen, struct pm_fields *f)
{
	const char *end = p + len;
	const char *c2, *rest, *c3;

	f->pass = pm_skip_blanks(p + ulen + 1, end);
	c2 = memchr(f->pass, ':', (size_t)(end - f->pass));
	f->pass_len = (size_t)(c2 - f->pass);
	rest = pm_skip_blanks(c2 + 1, end);
	f->service = rest;
	f->service_len = (size_t)(end - rest);
	f->flags = NULL;
	f->flags_len = 0;
	f->flagbits = 0;
	f->note = PM_NOTE_NONE;
	c3 = memchr(rest, ':', (size_t)(end - rest));
	if (c3 != NULL && memchr(c3 + 1, ':', (size_t)(end - c3 - 1)) == NULL) {
		if (pm_parse_flags(c3 + 1, (size_t)(end - c3 - 1),
				   &f->flagbits)) {
			f->service_len = (size_t)(c3 - rest);
			f->flags = c3 + 1;
			f->flags_len = (size_t)(end - c3 - 1);
		} else {
			f->note = PM_NOTE_FLAG;
		}
	}
	if (f->note == PM_NOTE_NONE && len > 0 && end[-1] == '\r') {
		f->note = PM_NOTE_CR;
	}
}

/* The exact rules for the line P[0..LEN) (without its '\n'), in the order
 * of the man page: which lines are skipped.  A line longer than
 * PM_LINE_MAX is only looked at for a leading '#'. */
enum pm_why pm_classify(const char *p, size_t len)
{
	size_t ncolon = 0;
	bool nul = false;

	if (len > 0 && p[0] == '#') {
		return PM_COMMENT;
	}
	if (len > PM_LINE_MAX) {
		return PM_LONG;
	}
	if (len == 0 || pm_is_blank(p, len)) {
		return PM_BLANK;
	}
	/* no branch per byte: this runs on every line of an unknown user's
	 * lookup */
	for (size_t i = 0; i < len; i++) {
		ncolon += p[i] == ':';
		nul |= p[i] == '\0';
	}
	if (nul) {
		return PM_NUL;
	}
	if (ncolon < 2) {
		return PM_FEW;
	}
	return PM_VALID;
}

/* Whether a line could be USER's at all: a name shorter than a line,
 * without ':' or '\n' (the empty name is the one of lines that start with
 * ':', as upstream reads them).  Other names are not searched for (the
 * lookup then reports the file's malformed lines, as for an unknown
 * user). */
bool pm_user_searchable(const char *user, size_t ulen)
{
	return ulen < PM_LINE_MAX && strpbrk(user, ":\n") == NULL;
}
