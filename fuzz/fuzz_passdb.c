/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: pam_matrix's passdb (src/modules/pam_matrix/passdb.c),
 * compiled into this program with the smallest read buffer (PM_READ_BUF =
 * PM_READ_MIN, see fuzz/CMakeLists.txt); its only libpam call,
 * pam_syslog(), is replaced by a stub below that formats the message and
 * keeps the "file:line: reason" reports of malformed lines.
 *
 * Input: "USER\nNEWPW\nPASSDB..." (USER and NEWPW end at the first NUL as
 * C strings do; a missing part is empty).  For each input:
 *
 *  1. pm_passdb_lookup(USER) of a file holding the passdb bytes must agree
 *     with a straightforward reference reading of the documented line
 *     rules (comments, over-long, blank, CR-terminated, NUL-carrying lines
 *     and lines without exactly three fields or with an empty user are
 *     skipped; the first valid line of USER wins): same fields, and
 *     exactly the reports the contract names (the malformed lines that
 *     start with "USER:" before the line used, or every malformed line
 *     when USER has none), in file order.
 *  2. The same with the bytes placed after valid filler lines so that they
 *     start 0 to 63 bytes before the first read edge: lines of the input
 *     are then split between reads (and inputs longer than a read cross a
 *     second edge).
 *  3. pm_passdb_set_password(USER, NEWPW) on a file holding the bytes must
 *     give exactly: the old bytes with that one password replaced (or the
 *     file unchanged when USER has no line or NEWPW cannot be stored), the
 *     file mode kept, and no temporary file left in the directory.
 *
 * Files live in a private directory below $PWRAP_FUZZ_TMPDIR, /dev/shm or
 * $TMPDIR, removed at exit (fuzz/run.sh also runs us in a private TMPDIR).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <security/pam_ext.h>

#include "passdb.h"
#include "passdb_ref.h"

#define FUZZ_MODE 0640

static char *workdir;	/* owned; removed at exit */
static char *dbpath;	/* owned */

/* The "line skipped" reports of the current call, in order (owned). */
#define MAXREPORTS 20000
static char *reports[MAXREPORTS];
static size_t nreports;

static void reports_clear(void)
{
	for (size_t i = 0; i < nreports; i++) {
		free(reports[i]);
	}
	nreports = 0;
}

/* The module's only libpam dependency.  Formatting checks the arguments
 * match the format (ASan/UBSan see a bad %s). */
void pam_syslog(const pam_handle_t *pamh, int priority, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	(void)pamh;
	if (priority < 0 || priority > 7) {
		abort();
	}
	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Only the bad-line reports, which are logged as a warning with the
	 * "%s:%lu: %s, line skipped" format (a user name may contain that
	 * text too: it comes in other messages, at other priorities). */
	if (priority == LOG_WARNING && strcmp(fmt, "%s:%lu: %s, line skipped") == 0 &&
	    nreports < MAXREPORTS) {
		reports[nreports] = strdup(buf);
		if (reports[nreports] == NULL) {
			abort();
		}
		nreports++;
	}
}

static void die(const char *why)
{
	fprintf(stderr, "fuzz_passdb: %s\n", why);
	abort();
}

static void cleanup(void)
{
	if (dbpath != NULL) {
		unlink(dbpath);
	}
	if (workdir != NULL) {
		rmdir(workdir);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = getenv("PWRAP_FUZZ_TMPDIR");

	(void)argc;
	(void)argv;
	if (base == NULL && access("/dev/shm", W_OK) == 0) {
		base = "/dev/shm";
	}
	if (base == NULL) {
		base = getenv("TMPDIR");
	}
	if (base == NULL) {
		base = "/tmp";
	}
	if (asprintf(&workdir, "%s/fuzz_passdb.XXXXXX", base) < 0 ||
	    mkdtemp(workdir) == NULL ||
	    asprintf(&dbpath, "%s/passdb", workdir) < 0) {
		die("cannot create a work directory");
	}
	atexit(cleanup);
	return 0;
}

/* ---- the reference reading ------------------------------------------ */

/* NULL for a valid line, "" for a comment, else the reason reported. */

struct ref_hit {
	size_t off;	/* of the line */
	size_t len;
	size_t c1, c2;	/* offsets of the colons in the line */
	/* the reports a lookup must log: "line:reason" (owned) */
	char **want;
	size_t nwant;
};

static void ref_free(struct ref_hit *h)
{
	for (size_t i = 0; i < h->nwant; i++) {
		free(h->want[i]);
	}
	free(h->want);
	h->want = NULL;
	h->nwant = 0;
}

/* Whether the passdb D[0, N) has a valid line for USER (then *H is it);
 * H->want gets what a lookup reports, for the file at PATH. */
static bool ref_find(const char *path, const char *d, size_t n,
		     const char *user, struct ref_hit *h)
{
	size_t ulen = strlen(user);
	bool can = ulen > 0 && ulen < PM_LINE_MAX &&
		   strpbrk(user, ":\n") == NULL;

	memset(h, 0, sizeof(*h));
	for (int all = 0; all < 2; all++) {
		size_t p = 0;
		unsigned long lineno = 0;

		ref_free(h);
		while (p < n) {
			const char *nl = memchr(d + p, '\n', n - p);
			size_t len = nl ? (size_t)(nl - (d + p)) : n - p;
			const char *why = ref_why(d + p, len);
			bool mine = can && len > ulen && d[p + ulen] == ':' &&
				    memcmp(d + p, user, ulen) == 0;

			lineno++;
			if (why == NULL && mine) {
				const char *c2 = memchr(d + p + ulen + 1, ':',
							len - ulen - 1);

				h->off = p;
				h->len = len;
				h->c1 = ulen;
				h->c2 = (size_t)(c2 - (d + p));
				return true;
			}
			if (why != NULL && *why != '\0' && (all || mine)) {
				char **w = realloc(h->want, (h->nwant + 1) *
								    sizeof(*w));

				if (w == NULL) {
					die("out of memory");
				}
				h->want = w;
				if (asprintf(&w[h->nwant], "%s:%lu: %s, line "
							   "skipped",
					     path, lineno, why) < 0) {
					die("out of memory");
				}
				h->nwant++;
			}
			p += len + 1;
		}
	}
	return false;
}

/* ---- file helpers ------------------------------------------------------ */

static void write_file(const char *path, const char *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || fchmod(fd, FUZZ_MODE) != 0) {
		die("cannot create the passdb");
	}
	while (n > 0) {
		ssize_t w = write(fd, d, n);

		if (w <= 0) {
			die("cannot write the passdb");
		}
		d += w;
		n -= (size_t)w;
	}
	close(fd);
}

/* Reads path whole into a malloc'd buffer; *n its size. */
static char *read_file(const char *path, size_t *n)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) != 0) {
		die("cannot read back the passdb");
	}
	if ((st.st_mode & 07777) != FUZZ_MODE) {
		die("the passdb lost its mode");
	}
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL) {
		die("out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0) {
			die("short read of the passdb");
		}
		got += (size_t)r;
	}
	close(fd);
	*n = got;
	return buf;
}

static void check_dir_clean(void)
{
	DIR *d = opendir(workdir);
	struct dirent *e;

	if (d == NULL) {
		die("cannot list the work directory");
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    strcmp(e->d_name, "passdb") != 0) {
			fprintf(stderr, "left behind: %s\n", e->d_name);
			die("set_password left a file next to the passdb");
		}
	}
	closedir(d);
}

/* The reports logged are exactly H's. */
static void check_reports(const struct ref_hit *h, const char *what)
{
	bool ok = nreports == h->nwant;

	for (size_t i = 0; ok && i < nreports; i++) {
		ok = strcmp(reports[i], h->want[i]) == 0;
	}
	if (!ok) {
		for (size_t i = 0; i < nreports; i++) {
			fprintf(stderr, "logged: %s\n", reports[i]);
		}
		for (size_t i = 0; i < h->nwant; i++) {
			fprintf(stderr, "wanted: %s\n", h->want[i]);
		}
		die(what);
	}
}

/* A lookup of USER in a file holding D[0, N) agrees with the reference:
 * fields and reports. */
static void check_lookup(const char *d, size_t n, const char *user)
{
	size_t svc_len = 0;
	struct pm_found f = PM_FOUND_INIT;
	struct ref_hit h;
	bool ref;

	write_file(dbpath, d, n);
	ref = ref_find(dbpath, d, n, user, &h);
	reports_clear();
	if (pm_passdb_lookup(NULL, dbpath, user, &f) != PAM_SUCCESS) {
		die("pm_passdb_lookup failed on a regular file");
	}
	if (f.found != ref) {
		fprintf(stderr, "lookup says %d, reference says %d\n", f.found,
			ref);
		die("pm_passdb_lookup disagrees with the line rules");
	}
	if (f.found) {
		/* the service ends at an optional fourth field (flags) */
		const char *c3 = memchr(d + h.off + h.c2 + 1, ':',
					h.len - h.c2 - 1);

		svc_len = c3 != NULL ? (size_t)(c3 - (d + h.off + h.c2 + 1))
				     : h.len - h.c2 - 1;
	}
	if (f.found &&
	    (f.pass_len != h.c2 - h.c1 - 1 ||
	     memcmp(f.pass, d + h.off + h.c1 + 1, f.pass_len) != 0 ||
	     f.pass[f.pass_len] != '\0' ||
	     f.service_len != svc_len ||
	     memcmp(f.service, d + h.off + h.c2 + 1, f.service_len) != 0 ||
	     f.service[f.service_len] != '\0')) {
		die("pm_passdb_lookup returned wrong fields");
	}
	check_reports(&h, "pm_passdb_lookup reported other lines than the "
			  "contract says");
	reports_clear();
	ref_free(&h);
	pm_found_free(&f);
}

/* D[0, N) after valid filler lines ("\x01:p:sss...") so that it starts
 * SHIFT bytes before the first read edge (the first read holds the file's
 * first PM_READ_BUF - 1 bytes). */
static void check_lookup_at_edge(const char *d, size_t n, const char *user,
				 size_t shift)
{
	size_t pre = PM_READ_BUF - 1 - shift;
	char *buf = malloc(pre + n + 1);
	size_t at = 0;

	if (buf == NULL) {
		die("out of memory");
	}
	while (at < pre) {
		size_t len = pre - at > 128 ? 64 : pre - at;

		memcpy(buf + at, "\x01:p:", 5);
		memset(buf + at + 5, 's', len - 5);
		buf[at + len - 1] = '\n';
		at += len;
	}
	memcpy(buf + pre, d, n);
	check_lookup(buf, pre + n, user);
	explicit_bzero(buf, pre + n);
	free(buf);
}

static bool storable(const char *newpw, size_t ulen, size_t service_len)
{
	size_t plen = strlen(newpw);

	return strpbrk(newpw, ":\n\r") == NULL && plen <= PM_LINE_MAX &&
	       ulen + plen + service_len + 2 <= PM_LINE_MAX;
}

static void check_set_password(const char *d, size_t n, const char *user,
			       const char *newpw, bool found,
			       const struct ref_hit *h)
{
	char *after;
	size_t after_n = 0;
	int rv, want;
	bool changes = false;

	write_file(dbpath, d, n);
	reports_clear();
	rv = pm_passdb_set_password(NULL, dbpath, user, newpw);
	check_reports(h, "pm_passdb_set_password reported other lines than "
			 "a lookup");
	reports_clear();
	if (!found) {
		want = PAM_USER_UNKNOWN;
	} else if (!storable(newpw, strlen(user), h->len - h->c2 - 1)) {
		want = PAM_AUTHTOK_ERR;
	} else {
		want = PAM_SUCCESS;
		changes = true;
	}
	if (rv != want) {
		fprintf(stderr, "set_password returned %d, expected %d\n", rv,
			want);
		die("wrong result of set_password");
	}
	after = read_file(dbpath, &after_n);
	if (!changes) {
		if (after_n != n || (n > 0 && memcmp(after, d, n) != 0)) {
			die("a refused change modified the passdb");
		}
	} else {
		size_t pstart = h->off + h->c1 + 1;
		size_t pend = h->off + h->c2;
		size_t lend = h->off + h->len;
		size_t plen = strlen(newpw);
		char *exp = malloc(n + plen + 1);
		size_t w = 0;
		const char *c3 = memchr(d + pend + 1, ':', lend - pend - 1);

		if (exp == NULL) {
			die("out of memory");
		}
		/* the old bytes, the new password, and the rest of the line
		 * without the must_change flag (an emptied field goes) */
		memcpy(exp, d, pstart);
		w = pstart;
		memcpy(exp + w, newpw, plen);
		w += plen;
		if (c3 == NULL) {
			memcpy(exp + w, d + pend, lend - pend);
			w += lend - pend;
		} else {
			const char *f = c3 + 1, *end = d + lend;
			bool any = false;

			memcpy(exp + w, d + pend, (size_t)(c3 - (d + pend)));
			w += (size_t)(c3 - (d + pend));
			while (f < end) {
				const char *c = memchr(f, ',', (size_t)(end - f));
				size_t k = (size_t)((c ? c : end) - f);

				if (k > 0 && !(k == 11 &&
					       memcmp(f, "must_change", 11) == 0)) {
					exp[w++] = any ? ',' : ':';
					memcpy(exp + w, f, k);
					w += k;
					any = true;
				}
				f += k + (c != NULL);
			}
		}
		memcpy(exp + w, d + lend, n - lend);
		w += n - lend;
		if (after_n != w || memcmp(after, exp, w) != 0) {
			die("the rewritten passdb is not the old one with one "
			    "password replaced (and must_change cleared)");
		}
		free(exp);
	}
	free(after);
	check_dir_clean();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	const char *nl1 = memchr(in, '\n', size);
	const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', size - (size_t)(nl1 + 1 - in)) : NULL;
	char *user = strndup(in, nl1 ? (size_t)(nl1 - in) : size);
	char *newpw = nl1 ? strndup(nl1 + 1, nl2 ? (size_t)(nl2 - nl1 - 1)
					     : size - (size_t)(nl1 + 1 - in))
			  : strdup("");
	const char *body = nl2 ? nl2 + 1 : in + size;
	size_t n = size - (size_t)(body - in);
	char *copy = malloc(n ? n : 1);
	struct ref_hit h;
	bool found;

	if (user == NULL || newpw == NULL || copy == NULL) {
		die("out of memory");
	}
	memcpy(copy, body, n);

	check_lookup(copy, n, user);
	check_lookup_at_edge(copy, n, user, size % 64);
	found = ref_find(dbpath, copy, n, user, &h);
	check_set_password(copy, n, user, newpw, found, &h);

	ref_free(&h);
	free(copy);
	free(user);
	explicit_bzero(newpw, strlen(newpw));
	free(newpw);
	return 0;
}
