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
 *     with the reference reading of the documented line rules
 *     (tests/modules/passdb_ref.h: comments, over-long, blank,
 *     NUL-carrying lines and lines with fewer than two colons are skipped;
 *     the first other line of USER is used, split as upstream splits it):
 *     same fields and flags, and exactly the reports the contract names
 *     (the skipped lines that start with "USER:" before the line used and
 *     that line's note, or every skipped line when USER has none), in file
 *     order.
 *  2. The same with the bytes placed after valid filler lines so that they
 *     start 0 to 63 bytes before the first read edge: lines of the input
 *     are then split between reads (and inputs longer than a read cross a
 *     second edge).
 *  3. pm_passdb_set_password(USER, NEWPW) on a file holding the bytes must
 *     give exactly the reference's result and file (every line of USER
 *     that is read rewritten, every other byte kept; the file unchanged
 *     when USER has no line or NEWPW cannot be stored), the file mode
 *     kept, and no temporary file left in the directory.
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

/* The line reports ("file:line: ...") of the current call, in order
 * (owned). */
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
	/* Only the line reports, which have the "%s:%lu: %s%s" format (a
	 * user name may contain such text too: it comes in other
	 * messages). */
	if (strcmp(fmt, "%s:%lu: %s%s") == 0 && nreports < MAXREPORTS) {
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

/* ---- the reference reading: passdb_ref.h ------------------------------ */

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

/* The reports logged are exactly R's. */
static void check_reports(const struct ref_result *r, const char *what)
{
	bool ok = nreports == r->nwant;

	for (size_t i = 0; ok && i < nreports; i++) {
		ok = strcmp(reports[i], r->want[i]) == 0;
	}
	if (!ok) {
		for (size_t i = 0; i < nreports; i++) {
			fprintf(stderr, "logged: %s\n", reports[i]);
		}
		for (size_t i = 0; i < r->nwant; i++) {
			fprintf(stderr, "wanted: %s\n", r->want[i]);
		}
		die(what);
	}
}

/* A lookup of USER in a file holding D[0, N) agrees with the reference:
 * fields and reports. */
static void check_lookup(const char *d, size_t n, const char *user)
{
	struct pm_found f = PM_FOUND_INIT;
	struct ref_result r;

	write_file(dbpath, d, n);
	ref_lookup(dbpath, d, n, user, &r);
	reports_clear();
	if (pm_passdb_lookup(NULL, dbpath, user, &f) != PAM_SUCCESS) {
		die("pm_passdb_lookup failed on a regular file");
	}
	if (f.found != r.found) {
		fprintf(stderr, "lookup says %d, reference says %d\n", f.found,
			r.found);
		die("pm_passdb_lookup disagrees with the line rules");
	}
	if (f.found &&
	    (f.pass_len != r.f.pass_len ||
	     memcmp(f.pass, r.f.pass, f.pass_len) != 0 ||
	     f.pass[f.pass_len] != '\0' || f.service_len != r.f.svc_len ||
	     memcmp(f.service, r.f.svc, f.service_len) != 0 ||
	     f.service[f.service_len] != '\0' || f.flags != r.f.bits)) {
		die("pm_passdb_lookup returned wrong fields");
	}
	check_reports(&r, "pm_passdb_lookup reported other lines than the "
			  "contract says");
	reports_clear();
	ref_result_free(&r);
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

static void check_set_password(const char *d, size_t n, const char *user,
			       const char *newpw)
{
	char *after, *want = NULL;
	size_t after_n = 0, want_n = 0;
	struct ref_result r;
	int rv, ref;

	write_file(dbpath, d, n);
	ref_lookup(dbpath, d, n, user, &r);
	ref = ref_set_password(d, n, user, newpw, &want, &want_n);
	reports_clear();
	rv = pm_passdb_set_password(NULL, dbpath, user, newpw);
	check_reports(&r, "pm_passdb_set_password reported other lines than "
			  "a lookup");
	reports_clear();
	ref_result_free(&r);
	if (rv != ref) {
		fprintf(stderr, "set_password returned %d, expected %d\n", rv,
			ref);
		die("wrong result of set_password");
	}
	after = read_file(dbpath, &after_n);
	if (ref != PAM_SUCCESS) {
		if (after_n != n || (n > 0 && memcmp(after, d, n) != 0)) {
			die("a refused change modified the passdb");
		}
	} else {
		if (after_n != want_n || memcmp(after, want, want_n) != 0) {
			die("the rewritten passdb is not the reference's (every "
			    "line of the user rewritten, every other byte "
			    "kept)");
		}
		explicit_bzero(want, want_n);
		free(want);
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
	if (user == NULL || newpw == NULL || copy == NULL) {
		die("out of memory");
	}
	memcpy(copy, body, n);

	check_lookup(copy, n, user);
	check_lookup_at_edge(copy, n, user, size % 64);
	check_set_password(copy, n, user, newpw);

	free(copy);
	free(user);
	explicit_bzero(newpw, strlen(newpw));
	free(newpw);
	return 0;
}
