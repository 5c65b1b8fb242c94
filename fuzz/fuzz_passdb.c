/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: pam_matrix's passdb (src/modules/pam_matrix/passdb.c),
 * compiled into this program; its only libpam call, pam_syslog(), is
 * replaced by a stub below that formats and discards the message.
 *
 * Input: "USER\nNEWPW\nPASSDB..." (USER and NEWPW end at the first NUL as
 * C strings do; a missing part is empty).  For each input:
 *
 *  1. pm_passdb_find() over the passdb bytes (an exact-size heap copy, so
 *     AddressSanitizer sees any read past the end) must agree with a
 *     straightforward reference reading of the documented line rules
 *     (comments, blank, over-long, CR-terminated, NUL-carrying lines and
 *     lines without exactly three fields or with an empty user are
 *     skipped; the first valid line of USER wins): same line, same fields.
 *  2. pm_passdb_load() of the bytes from a regular file (mmap) and from a
 *     pipe (the read loop) gives the same bytes.
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
#include <sys/stat.h>
#include <unistd.h>

#include <security/pam_ext.h>

#include "passdb.h"

#define FUZZ_MODE 0640

static char *workdir;	/* owned; removed at exit */
static char *dbpath;	/* owned */

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

static bool ref_valid(const char *p, size_t len, size_t *c1, size_t *c2)
{
	size_t colons = 0;
	bool blank = true;

	if (len == 0 || len > PM_LINE_MAX || p[len - 1] == '\r') {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
			blank = false;
		}
		if (p[i] == '\0') {
			return false;
		}
		if (p[i] == ':') {
			if (colons == 0) {
				*c1 = i;
			} else if (colons == 1) {
				*c2 = i;
			}
			colons++;
		}
	}
	return !blank && colons == 2 && *c1 > 0;
}

struct ref_hit {
	size_t off;	/* of the line */
	size_t len;
	size_t c1, c2;	/* offsets of the colons in the line */
	unsigned long lineno;
};

static bool ref_find(const char *d, size_t n, const char *user,
		     struct ref_hit *h)
{
	size_t ulen = strlen(user);
	size_t p = 0;
	unsigned long lineno = 0;

	while (p < n) {
		const char *nl = memchr(d + p, '\n', n - p);
		size_t len = nl ? (size_t)(nl - (d + p)) : n - p;
		size_t c1 = 0, c2 = 0;

		lineno++;
		if (!(len > 0 && d[p] == '#') &&
		    ref_valid(d + p, len, &c1, &c2) && c1 == ulen &&
		    memcmp(d + p, user, ulen) == 0) {
			h->off = p;
			h->len = len;
			h->c1 = c1;
			h->c2 = c2;
			h->lineno = lineno;
			return true;
		}
		p += len + 1;
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

static void check_load(const char *d, size_t n)
{
	struct pm_passdb db = PM_PASSDB_INIT;
	int p[2];

	/* from a regular file */
	write_file(dbpath, d, n);
	if (pm_passdb_load(NULL, dbpath, -1, &db) != PAM_SUCCESS ||
	    db.size != n || (n > 0 && memcmp(db.data, d, n) != 0)) {
		die("load of a regular file differs");
	}
	pm_passdb_close(&db);

	/* from a pipe: what fits in the pipe buffer without a writer thread */
	if (n > 16384 || pipe2(p, O_CLOEXEC) != 0) {
		return;
	}
	if (write(p[1], d, n) != (ssize_t)n) {
		die("pipe write");
	}
	close(p[1]);
	if (pm_passdb_load(NULL, "pipe", p[0], &db) != PAM_SUCCESS ||
	    db.size != n || (n > 0 && memcmp(db.data, d, n) != 0)) {
		die("load of a pipe differs");
	}
	pm_passdb_close(&db);
	close(p[0]);
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
	rv = pm_passdb_set_password(NULL, dbpath, user, newpw);
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
		size_t plen = strlen(newpw);

		if (after_n != n - (pend - pstart) + plen ||
		    memcmp(after, d, pstart) != 0 ||
		    memcmp(after + pstart, newpw, plen) != 0 ||
		    memcmp(after + pstart + plen, d + pend, n - pend) != 0) {
			die("the rewritten passdb is not the old one with one "
			    "password replaced");
		}
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
	struct pm_passdb db = PM_PASSDB_INIT;
	struct pm_entry e;
	struct ref_hit h;
	bool found, ref;

	if (user == NULL || newpw == NULL || copy == NULL) {
		die("out of memory");
	}
	memcpy(copy, body, n);
	db.path = "fuzz";
	db.data = copy;
	db.size = n;

	found = pm_passdb_find(NULL, &db, user, &e);
	ref = ref_find(copy, n, user, &h);
	if (found != ref) {
		fprintf(stderr, "find says %d, reference says %d\n", found, ref);
		die("pm_passdb_find disagrees with the line rules");
	}
	if (found &&
	    (e.line != copy + h.off || e.line_len != h.len ||
	     e.lineno != h.lineno || e.pass != copy + h.off + h.c1 + 1 ||
	     e.pass_len != h.c2 - h.c1 - 1 ||
	     e.service != copy + h.off + h.c2 + 1 ||
	     e.service_len != h.len - h.c2 - 1)) {
		die("pm_passdb_find returned wrong fields");
	}

	check_load(copy, n);
	check_set_password(copy, n, user, newpw, found, &h);

	free(copy);
	free(user);
	explicit_bzero(newpw, strlen(newpw));
	free(newpw);
	return 0;
}
