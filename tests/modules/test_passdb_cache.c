/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's passdb scanner and per-process cache, compiled into this
 * program (src/modules/pam_matrix/passdb.c, passdb_cache.c) with a
 * pam_syslog() that records what they log, so the cache's counters and
 * every scanner kernel can be reached:
 *
 *   - every kernel (portable C, SSE2, AVX2, AVX-512 as the CPU allows),
 *     and the parallel search of files of 4 MiB and more,
 *     agrees with a plain reference reading of the line rules on random
 *     passdbs: same line, same fields, same "file:line: reason" logs;
 *   - cached lookups (the file kept in memory, then an index) answer and
 *     log exactly like that reference, again and again;
 *   - the cache notices an edit in place that keeps the size and the mtime
 *     (time stamps restored with utimensat), also right after the file was
 *     read, and a file renamed over the passdb;
 *   - it survives fork() and concurrent threads, and reports errors like
 *     an uncached read.
 * Files live in a private directory below $TMPDIR.  Cached lookups need
 * files whose ctime is older than PM_TRUST_NS, so tests wait that long.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include <security/pam_ext.h>

#include "passdb.h"
#include "passdb_cache.h"

/* ---- log capture ----------------------------------------------------- */

#define MAXLOG 4096

static char *logs[MAXLOG];
static size_t nlogs;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static bool log_off; /* threads test: not recorded */

void pam_syslog(const pam_handle_t *pamh, int priority, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	(void)pamh;
	(void)priority;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		s = NULL;
	}
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (s != NULL && !log_off && nlogs < MAXLOG) {
		logs[nlogs++] = s;
		s = NULL;
	}
	pthread_mutex_unlock(&log_lock);
	free(s);
}

static void log_clear(void)
{
	for (size_t i = 0; i < nlogs; i++) {
		free(logs[i]);
	}
	nlogs = 0;
}

static void log_dump(void)
{
	for (size_t i = 0; i < nlogs; i++) {
		fprintf(stderr, "log: %s\n", logs[i]);
	}
}

/* ---- random passdbs and the reference reading ------------------------ */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* Names of all lengths the scanner treats differently: 1, 2, 63 and 64
 * bytes (its look-ahead reaches 63), a name with ':', the empty name. */
static const char *const users[] = {
	"a", "bo", "u1", "user999999", "alice", "u1x", "#c",
	"n62aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"n64aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"x:y", "",
};
#define NUSERS_LINES 9 /* users[] that appear in lines */
#define NUSERS (sizeof(users) / sizeof(users[0]))

struct buf {
	char *d;
	size_t n;
	size_t cap;
};

static void put(struct buf *b, const char *s, size_t len)
{
	if (b->n + len > b->cap) {
		b->cap = (b->n + len) * 2 + 64;
		b->d = realloc(b->d, b->cap);
		assert_non_null(b->d);
	}
	memcpy(b->d + b->n, s, len);
	b->n += len;
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* One line without its '\n': mostly valid when GOOD. */
static void random_line(struct buf *b, bool good, unsigned i)
{
	const char *u = users[rnd(NUSERS_LINES)];
	char tmp[64];

	if (good && rnd(50) != 0) {
		puts_(b, u);
		snprintf(tmp, sizeof(tmp), ":pw%u:svc%u", i, rnd(100));
		puts_(b, tmp);
		return;
	}
	switch (rnd(16)) {
	case 0:
		break; /* empty */
	case 1:
		puts_(b, " \t ");
		break;
	case 2:
		puts_(b, u);
		puts_(b, ":pw:svc\r");
		break;
	case 3:
		puts_(b, u);
		put(b, ":p\0w:svc", 8);
		break;
	case 4:
		puts_(b, u);
		puts_(b, ":pw");
		break;
	case 5:
		puts_(b, u);
		puts_(b, ":a:b:c");
		break;
	case 6:
		puts_(b, "#");
		puts_(b, u);
		puts_(b, ":c:s");
		break;
	case 7:
		puts_(b, "# a comment");
		break;
	case 8:
		puts_(b, ":pw:svc");
		break;
	case 9: {
		/* around the 8192-byte limit */
		size_t k = 8180 + rnd(20);

		puts_(b, u);
		puts_(b, ":");
		for (size_t j = 0; j < k; j++) {
			put(b, "L", 1);
		}
		puts_(b, ":s");
		break;
	}
	case 10:
		puts_(b, u);
		puts_(b, ":p\rw:svc"); /* a CR inside is fine */
		break;
	case 11:
		puts_(b, u);
		puts_(b, "::");
		break;
	case 12:
		puts_(b, "::::");
		break;
	case 13:
		puts_(b, u);
		puts_(b, ":a:b:c:d");
		break;
	case 14:
		puts_(b, "nocolon");
		break;
	default:
		puts_(b, u);
		snprintf(tmp, sizeof(tmp), ":pw%u:", i);
		puts_(b, tmp);
		for (unsigned j = rnd(50); j > 0; j--) {
			put(b, "s", 1);
		}
		break;
	}
}

static void random_passdb(struct buf *b, unsigned nlines, bool good)
{
	b->n = 0;
	for (unsigned i = 0; i < nlines; i++) {
		random_line(b, good, i);
		if (i + 1 < nlines || rnd(2)) {
			put(b, "\n", 1);
		}
	}
}

struct ref {
	bool found;
	unsigned long lineno;
	size_t off, len;
	const char *pass, *service;
	size_t pass_len, service_len;
	char **want; /* expected log lines */
	size_t nwant;
};

static const char *ref_why(const char *p, size_t len)
{
	size_t colons = 0;
	bool blank = true;

	if (len > 0 && p[0] == '#') {
		return "";
	}
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') {
			blank = false;
		}
		colons += p[i] == ':';
	}
	if (len == 0 || blank) {
		return "blank line";
	}
	if (len > 8192) {
		return "line longer than 8192 bytes";
	}
	if (p[len - 1] == '\r') {
		return "CRLF line ending (line ends with CR)";
	}
	if (memchr(p, '\0', len) != NULL) {
		return "NUL byte in line";
	}
	if (colons < 2) {
		return "too few fields (expected user:password:service)";
	}
	if (colons > 2) {
		return "too many fields (expected user:password:service)";
	}
	if (p[0] == ':') {
		return "empty user name";
	}
	return NULL;
}

static void ref_free(struct ref *r)
{
	for (size_t i = 0; i < r->nwant; i++) {
		free(r->want[i]);
	}
	free(r->want);
	memset(r, 0, sizeof(*r));
}

static void ref_lookup(const char *path, const char *d, size_t n,
		       const char *user, struct ref *r)
{
	size_t ulen = strlen(user);
	bool can = ulen > 0 && strpbrk(user, ":\n") == NULL;
	size_t pos = 0;
	unsigned long lineno = 0;

	memset(r, 0, sizeof(*r));
	while (pos < n) {
		const char *p = d + pos;
		const char *nl = memchr(p, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - p) : n - pos;
		const char *why = ref_why(p, len);

		lineno++;
		if (why == NULL && can && len > ulen && p[ulen] == ':' &&
		    memcmp(p, user, ulen) == 0) {
			const char *c2 = memchr(p + ulen + 1, ':',
						len - ulen - 1);

			r->found = true;
			r->lineno = lineno;
			r->off = pos;
			r->len = len;
			r->pass = p + ulen + 1;
			r->pass_len = (size_t)(c2 - r->pass);
			r->service = c2 + 1;
			r->service_len = (size_t)(p + len - r->service);
			return;
		}
		if (why != NULL && *why != '\0') {
			r->want = realloc(r->want,
					  (r->nwant + 1) * sizeof(*r->want));
			assert_non_null(r->want);
			assert_true(asprintf(&r->want[r->nwant++],
					     "%s:%lu: %s, line skipped", path,
					     lineno, why) > 0);
		}
		pos += len + 1;
	}
}

/* The captured log is exactly R's expected lines. */
static void check_logs(const struct ref *r, const char *what)
{
	bool ok = nlogs == r->nwant;

	for (size_t i = 0; ok && i < nlogs; i++) {
		ok = strcmp(logs[i], r->want[i]) == 0;
	}
	if (!ok) {
		log_dump();
		for (size_t i = 0; i < r->nwant; i++) {
			fprintf(stderr, "want: %s\n", r->want[i]);
		}
		fail_msg("%s: logged %zu lines, expected %zu", what, nlogs,
			 r->nwant);
	}
}

/* ---- the scanner kernels ------------------------------------------------- */

static int best_isa(void)
{
	struct pm_passdb db = PM_PASSDB_INIT;
	struct pm_entry e;

	pm_passdb_isa = -1;
	db.path = "x";
	(void)pm_passdb_find(NULL, &db, "a", &e);
	return pm_passdb_isa;
}

/* pm_passdb_find with kernel ISA on an exact-size copy of B (any read past
 * the end is an error under ASan and valgrind) answers and logs as R. */
static void check_find(const struct buf *b, const char *user, int isa,
		       const struct ref *r, const char *what)
{
	char *copy = malloc(b->n ? b->n : 1);
	struct pm_passdb db = PM_PASSDB_INIT;
	struct pm_entry e;
	bool found;

	assert_non_null(copy);
	memcpy(copy, b->d, b->n);
	db.path = "mem";
	db.data = copy;
	db.size = b->n;
	pm_passdb_isa = isa;
	log_clear();
	found = pm_passdb_find(NULL, &db, user, &e);
	check_logs(r, what);
	assert_int_equal(found, r->found);
	if (found) {
		assert_int_equal(e.lineno, r->lineno);
		assert_ptr_equal(e.line, copy + r->off);
		assert_int_equal(e.line_len, r->len);
		assert_int_equal(e.pass_len, r->pass_len);
		assert_ptr_equal(e.pass, copy + (r->pass - b->d));
		assert_int_equal(e.service_len, r->service_len);
	}
	free(copy);
}

static void scanner_kernels(void **state)
{
	int best = best_isa();
	struct buf b = { NULL, 0, 0 };
	char what[128];

	(void)state;
	print_message("scanner kernels 0..%d\n", best);
	for (int it = 0; it < 400; it++) {
		unsigned nlines = rnd(it % 10 == 0 ? 3000 : 80);
		const char *user = users[rnd(NUSERS)];
		struct ref r;

		random_passdb(&b, nlines, rnd(3) == 0);
		ref_lookup("mem", b.d, b.n, user, &r);
		for (int isa = 0; isa <= best; isa++) {
			snprintf(what, sizeof(what),
				 "iteration %d, kernel %d, user \"%s\"", it,
				 isa, user);
			check_find(&b, user, isa, &r, what);
		}
		ref_free(&r);
	}
	pm_passdb_isa = -1;
	log_clear();
	free(b.d);
}

/*
 * Files of 4 MiB and more are searched in 16 chunks of whole lines, by this
 * thread and a helper (passdb.c, pm_find_par); chunk k starts at the first
 * line that starts after byte size / 16 * k.  Lines here all have the same
 * length, so each case can put the user and malformed lines exactly: in
 * early or late chunks, on both sides of a chunk edge, in several chunks
 * (the first line must win), or nowhere.  The answer, the line number and
 * the "file:line" logs (in file order, each once) must be those of a single
 * sequential reading.
 */
#define SPLIT_LINE 22 /* bytes per line, with its '\n' */
#define SPLIT_LINES 220000 /* 4.6 MiB */

enum { AT_NONE = -1 };

static void split_passdb(struct buf *b, const long *alice, size_t nalice,
			 const long *bad, size_t nbad)
{
	char line[SPLIT_LINE + 1];

	b->n = 0;
	for (long i = 0; i < SPLIT_LINES; i++) {
		bool is_alice = false, is_bad = false;

		for (size_t k = 0; k < nalice; k++) {
			is_alice = is_alice || alice[k] == i;
		}
		for (size_t k = 0; k < nbad; k++) {
			is_bad = is_bad || bad[k] == i;
		}
		if (is_alice) {
			snprintf(line, sizeof(line), "alice:p%010ld:svc\n", i);
		} else if (is_bad) {
			snprintf(line, sizeof(line), "no-colons-%011ld\n", i);
		} else {
			snprintf(line, sizeof(line), "u%07ld:p%07ld:svc\n", i, i);
		}
		assert_int_equal(strlen(line), SPLIT_LINE);
		put(b, line, SPLIT_LINE);
	}
}

static void scanner_split(void **state)
{
	const long n = SPLIT_LINES;
	/* the first line of chunk 8 (the middle); of chunks 1 and 15 */
	const long mid = (n * SPLIT_LINE / 16 * 8) / SPLIT_LINE + 1;
	const long e1 = (n * SPLIT_LINE / 16) / SPLIT_LINE + 1;
	const long e15 = (n * SPLIT_LINE / 16 * 15) / SPLIT_LINE + 1;
	const struct {
		long alice[2];
		long bad[3];
	} cases[] = {
		{ { AT_NONE, AT_NONE }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { n / 4, AT_NONE }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { 3 * n / 4, AT_NONE }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { n - 1, AT_NONE }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { mid, AT_NONE }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { mid - 1, AT_NONE }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { n / 4, 3 * n / 4 }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { mid - 1, mid }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { 3 * n / 4, AT_NONE }, { n / 8, 5 * n / 8, 7 * n / 8 } },
		{ { n / 4, AT_NONE }, { n / 8, 5 * n / 8, AT_NONE } },
		{ { AT_NONE, AT_NONE }, { n / 8, mid, n - 2 } },
		{ { mid + 1, AT_NONE }, { mid, AT_NONE, AT_NONE } },
		{ { e1, AT_NONE }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { e1 - 1, e15 }, { AT_NONE, AT_NONE, AT_NONE } },
		{ { e15 - 1, AT_NONE }, { e1 - 1, e1, e15 } },
		{ { 0, AT_NONE }, { 1, AT_NONE, AT_NONE } },
		{ { AT_NONE, AT_NONE }, { 0, e15 - 1, n - 1 } },
	};
	const int best = best_isa();
	struct buf b = { NULL, 0, 0 };
	char what[128];

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct ref r;

		split_passdb(&b, cases[c].alice, 2, cases[c].bad, 3);
		assert_true(b.n >= ((size_t)4 << 20));
		ref_lookup("mem", b.d, b.n, "alice", &r);
		/* the best kernel always, the portable one for some */
		for (int isa = best; isa >= 0; isa -= (c % 4 == 0 ? best : best + 1)) {
			snprintf(what, sizeof(what), "split case %zu, kernel %d",
				 c, isa);
			check_find(&b, "alice", isa, &r, what);
			if (best == 0) {
				break;
			}
		}
		ref_free(&r);
	}
	pm_passdb_isa = -1;
	log_clear();
	free(b.d);
}

/* ---- the cache -------------------------------------------------------------- */

struct env {
	char dir[PATH_MAX];
	char path[PATH_MAX + 32];
};

static int setup(void **state)
{
	struct env *t = calloc(1, sizeof(*t));
	const char *tmp = getenv("TMPDIR");

	if (t == NULL) {
		return -1;
	}
	snprintf(t->dir, sizeof(t->dir), "%s/pwrap-pmcache.XXXXXX",
		 tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	if (mkdtemp(t->dir) == NULL) {
		free(t);
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "%s/passdb", t->dir);
	log_clear();
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct env *t = *state;
	char cmd[PATH_MAX + 16];

	pm_passdb_forget(t->path);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot remove %s\n", t->dir);
	}
	free(t);
	log_clear();
	return 0;
}

static void write_file(const char *path, const char *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, d, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

/* Waits until files written before now are trusted by the cache. */
static void age(void)
{
	struct timespec ts = { 0, PM_TRUST_NS + 50000000L };

	nanosleep(&ts, NULL);
}

static char *read_file(const char *path, size_t *n)
{
	struct stat st;
	char *d;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	d = malloc((size_t)st.st_size + 1);
	assert_non_null(d);
	assert_int_equal(read(fd, d, (size_t)st.st_size), st.st_size);
	close(fd);
	*n = (size_t)st.st_size;
	return d;
}

/* One cached lookup checked against the reference reading of D. */
static void check_lookup(const char *path, const char *d, size_t n,
			 const char *user, const char *what)
{
	struct pm_found f = PM_FOUND_INIT;
	struct ref r;

	ref_lookup(path, d, n, user, &r);
	log_clear();
	assert_int_equal(pm_passdb_lookup(NULL, path, user, &f), PAM_SUCCESS);
	check_logs(&r, what);
	assert_int_equal(f.found, r.found);
	if (f.found) {
		assert_int_equal(f.pass_len, r.pass_len);
		assert_memory_equal(f.pass, r.pass, r.pass_len);
		assert_int_equal(f.pass[f.pass_len], '\0');
		assert_int_equal(f.service_len, r.service_len);
		assert_memory_equal(f.service, r.service, r.service_len);
	}
	pm_found_free(&f);
	ref_free(&r);
}

static struct pm_cache_stats stats(void)
{
	struct pm_cache_stats st;

	pm_passdb_cache_stats(&st);
	return st;
}

/* Random files, small (kept in memory, scanned) and big (indexed), each
 * read once and then answered from memory, logging like a scan. */
static void cache_random(void **state)
{
	struct env *t = *state;
	struct buf b = { NULL, 0, 0 };
	struct pm_cache_stats s0 = stats(), s1;
	unsigned nbig = 0;
	const unsigned nfiles = 24;
	char what[128];

	for (unsigned i = 0; i < nfiles; i++) {
		bool big = i % 3 == 0;
		char path[PATH_MAX + 48];

		random_passdb(&b, big ? 4000 + rnd(4000) : rnd(60),
			      rnd(4) != 0);
		nbig += b.n >= PM_INDEX_MIN;
		snprintf(path, sizeof(path), "%s/db%u", t->dir, i);
		write_file(path, b.d, b.n);
	}
	age();
	for (unsigned i = 0; i < nfiles; i++) {
		char path[PATH_MAX + 48];
		char *d;
		size_t n;

		snprintf(path, sizeof(path), "%s/db%u", t->dir, i);
		d = read_file(path, &n);
		for (unsigned j = 0; j < 3 * NUSERS; j++) {
			const char *user = users[j % NUSERS];

			snprintf(what, sizeof(what), "file %u, lookup %zu of %s",
				 i, (size_t)j / NUSERS, user);
			check_lookup(path, d, n, user, what);
		}
		pm_passdb_forget(path);
		free(d);
	}
	s1 = stats();
	print_message("%lu lookups, %lu loads, %lu indexes, %lu by index\n",
		      s1.lookups - s0.lookups, s1.loads - s0.loads,
		      s1.indexed - s0.indexed, s1.by_index - s0.by_index);
	assert_int_equal(s1.lookups - s0.lookups, nfiles * 3 * NUSERS);
	assert_int_equal(s1.loads - s0.loads, nfiles);
	assert_int_equal(s1.indexed - s0.indexed, nbig);
	assert_true(nbig > 0);
	assert_true(s1.by_index - s0.by_index >= nbig * (3 * NUSERS - 2));
	free(b.d);
}

/* A passdb of N valid lines and USER's line last; *PWOFF gets the offset
 * of its password ("old-pw..."). */
static char *user_last(unsigned n, const char *user, size_t *len,
		       size_t *pwoff)
{
	struct buf b = { NULL, 0, 0 };
	char tmp[64];

	puts_(&b, "# passdb\nbad line\n");
	for (unsigned i = 0; i < n; i++) {
		snprintf(tmp, sizeof(tmp), "user%07u:pass%07u:svc\n", i, i);
		puts_(&b, tmp);
	}
	puts_(&b, user);
	puts_(&b, ":");
	*pwoff = b.n;
	puts_(&b, "old-pw:svc\n");
	put(&b, "", 1);
	*len = b.n - 1;
	return b.d;
}

/* Changes the password bytes in place (same size) and puts the atime and
 * mtime back, so that only the ctime tells. */
static void edit_in_place(const char *path, size_t pwoff, const char *pw)
{
	struct stat before, after;
	struct timespec ts[2];
	int fd;

	assert_int_equal(stat(path, &before), 0);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, pw, strlen(pw), (off_t)pwoff),
			 (ssize_t)strlen(pw));
	ts[0] = before.st_atim;
	ts[1] = before.st_mtim;
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

static void expect_pw(const char *path, const char *user, const char *pw)
{
	struct pm_found f = PM_FOUND_INIT;

	assert_int_equal(pm_passdb_lookup(NULL, path, user, &f), PAM_SUCCESS);
	assert_true(f.found);
	assert_string_equal(f.pass, pw);
	pm_found_free(&f);
}

/* Same size, same mtime: an edit of a cached (trusted, indexed) file is
 * noticed through its ctime, for a big and a small file. */
static void cache_edit_same_size(void **state)
{
	struct env *t = *state;

	for (unsigned n = 0; n <= 4000; n += 4000) {
		size_t len, pwoff;
		char *d = user_last(n, "zed", &len, &pwoff);
		struct pm_cache_stats s0;

		write_file(t->path, d, len);
		age();
		expect_pw(t->path, "zed", "old-pw");
		expect_pw(t->path, "zed", "old-pw"); /* indexed if big */
		expect_pw(t->path, "zed", "old-pw");
		s0 = stats();
		edit_in_place(t->path, pwoff, "new-pw");
		expect_pw(t->path, "zed", "new-pw");
		assert_int_equal(stats().loads, s0.loads + 1);
		/* and again, from the new cached copy */
		age();
		expect_pw(t->path, "zed", "new-pw");
		expect_pw(t->path, "zed", "new-pw");
		edit_in_place(t->path, pwoff, "3rd-pw");
		expect_pw(t->path, "zed", "3rd-pw");
		free(d);
	}
}

/* An edit right after the file was read (same size, same second, mtime
 * put back): the file was too young to be trusted, so it is read again. */
static void cache_edit_right_after_read(void **state)
{
	struct env *t = *state;
	size_t len, pwoff;
	char *d = user_last(10, "zed", &len, &pwoff);

	for (int i = 0; i < 20; i++) {
		write_file(t->path, d, len);
		expect_pw(t->path, "zed", "old-pw");
		edit_in_place(t->path, pwoff, "new-pw");
		expect_pw(t->path, "zed", "new-pw");
		edit_in_place(t->path, pwoff, "old-pw");
		expect_pw(t->path, "zed", "old-pw");
	}
	free(d);
}

/* A new file renamed over the passdb (what a password change does). */
static void cache_replaced(void **state)
{
	struct env *t = *state;
	size_t len, pwoff;
	char *d = user_last(4000, "zed", &len, &pwoff);
	char tmp[PATH_MAX + 48];

	write_file(t->path, d, len);
	age();
	expect_pw(t->path, "zed", "old-pw");
	expect_pw(t->path, "zed", "old-pw");
	memcpy(d + pwoff, "new-pw", 6);
	snprintf(tmp, sizeof(tmp), "%s.new", t->path);
	write_file(tmp, d, len);
	assert_int_equal(rename(tmp, t->path), 0);
	expect_pw(t->path, "zed", "new-pw");
	/* and then deleted: the error of an uncached read */
	assert_int_equal(unlink(t->path), 0);
	{
		struct pm_found f = PM_FOUND_INIT;

		log_clear();
		assert_int_equal(pm_passdb_lookup(NULL, t->path, "zed", &f),
				 PAM_AUTHINFO_UNAVAIL);
		assert_false(f.found);
		assert_true(nlogs == 1 && strstr(logs[0], "cannot open passdb") != NULL);
	}
	free(d);
}

/* Malformed lines before the user are logged again by every cached
 * lookup (from the index), with their numbers. */
static void cache_replay(void **state)
{
	struct env *t = *state;
	struct buf b = { NULL, 0, 0 };
	char tmp[64];
	struct pm_cache_stats s0;

	for (unsigned i = 0; i < 6000; i++) {
		switch (i % 1000) {
		case 10:
			puts_(&b, "\n");
			break;
		case 20:
			puts_(&b, "broken\n");
			break;
		case 30:
			puts_(&b, "user0000031:x:y:z\n"); /* bad, then good */
			break;
		case 40:
			puts_(&b, "crlf:x:y\r\n");
			break;
		default:
			snprintf(tmp, sizeof(tmp), "user%07u:pass%07u:svc\n",
				 i, i);
			puts_(&b, tmp);
		}
	}
	write_file(t->path, b.d, b.n);
	age();
	s0 = stats();
	for (int round = 0; round < 3; round++) {
		check_lookup(t->path, b.d, b.n, "user0000031", "first bad");
		check_lookup(t->path, b.d, b.n, "user0002500", "middle");
		check_lookup(t->path, b.d, b.n, "user0005999", "last");
		check_lookup(t->path, b.d, b.n, "nobody", "unknown");
		check_lookup(t->path, b.d, b.n, "x:y", "impossible name");
		check_lookup(t->path, b.d, b.n, "", "empty name");
	}
	assert_int_equal(stats().loads, s0.loads + 1);
	assert_int_equal(stats().indexed, s0.indexed + 1);
	free(b.d);
}

/* A child of a process that cached the file looks up (no stuck mutex, a
 * valid copy), and the parent's cache still works after the fork. */
static void cache_fork(void **state)
{
	struct env *t = *state;
	size_t len, pwoff;
	char *d = user_last(4000, "zed", &len, &pwoff);
	int st;
	pid_t pid;

	write_file(t->path, d, len);
	age();
	expect_pw(t->path, "zed", "old-pw");
	expect_pw(t->path, "zed", "old-pw");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* no cmocka assertions in the child */
		struct pm_found f = PM_FOUND_INIT;
		int ok = pm_passdb_lookup(NULL, t->path, "zed", &f) ==
				 PAM_SUCCESS &&
			 f.found && strcmp(f.pass, "old-pw") == 0;

		pm_found_free(&f);
		free(d);	/* valgrind checks the child's heap at _exit */
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	expect_pw(t->path, "zed", "old-pw");
	free(d);
}

struct thr {
	const char *path[2];
	int errors;
};

static void *thread_main(void *arg)
{
	struct thr *th = arg;

	for (int i = 0; i < 300; i++) {
		struct pm_found f = PM_FOUND_INIT;
		char user[32], pw[32];
		unsigned u = (unsigned)(i * 37 % 4000);

		snprintf(user, sizeof(user), "user%07u", u);
		snprintf(pw, sizeof(pw), "pass%07u", u);
		if (pm_passdb_lookup(NULL, th->path[i % 2], user, &f) !=
			    PAM_SUCCESS ||
		    !f.found || strcmp(f.pass, pw) != 0) {
			th->errors++;
		}
		pm_found_free(&f);
		if (i % 100 == 50) {
			pm_passdb_forget(th->path[0]);
		}
	}
	return NULL;
}

/* Threads looking up in two passdbs at once, one of them dropped now and
 * then. */
static void cache_threads(void **state)
{
	struct env *t = *state;
	size_t len, pwoff;
	char *d = user_last(4000, "zed", &len, &pwoff);
	char other[PATH_MAX + 48];
	pthread_t tid[4];
	struct thr th[4];

	snprintf(other, sizeof(other), "%s/other", t->dir);
	write_file(t->path, d, len);
	write_file(other, d, len);
	age();
	log_off = true; /* the "bad line" of user_last, many times */
	for (int i = 0; i < 4; i++) {
		th[i].path[0] = t->path;
		th[i].path[1] = other;
		th[i].errors = 0;
		assert_int_equal(pthread_create(&tid[i], NULL, thread_main,
						&th[i]),
				 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		assert_int_equal(th[i].errors, 0);
	}
	log_off = false;
	pm_passdb_forget(other);
	free(d);
}

/* What is not a regular file is never cached; errors are those of an
 * uncached read. */
static void cache_not_regular(void **state)
{
	struct env *t = *state;
	struct pm_found f = PM_FOUND_INIT;
	struct pm_cache_stats s0 = stats();

	assert_int_equal(pm_passdb_lookup(NULL, "/dev/null", "a", &f),
			 PAM_SUCCESS);
	assert_false(f.found);
	assert_int_equal(pm_passdb_lookup(NULL, "/dev/null", "a", &f),
			 PAM_SUCCESS);
	assert_false(f.found);
	/* both read it again, neither was served from memory */
	assert_int_equal(stats().loads, s0.loads + 2);
	assert_int_equal(stats().hits, s0.hits);
	log_clear();
	assert_int_equal(pm_passdb_lookup(NULL, t->dir, "a", &f),
			 PAM_AUTHINFO_UNAVAIL);
	assert_true(nlogs == 1 && strstr(logs[0], "cannot read passdb") != NULL);
	log_clear();
	assert_int_equal(pm_passdb_lookup(NULL, t->path, "a", &f),
			 PAM_AUTHINFO_UNAVAIL);
	assert_true(nlogs == 1 && strstr(logs[0], "cannot open passdb") != NULL);
	pm_found_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scanner_kernels),
		cmocka_unit_test(scanner_split),
		cmocka_unit_test_setup_teardown(cache_random, setup, teardown),
		cmocka_unit_test_setup_teardown(cache_edit_same_size, setup,
						teardown),
		cmocka_unit_test_setup_teardown(cache_edit_right_after_read,
						setup, teardown),
		cmocka_unit_test_setup_teardown(cache_replaced, setup,
						teardown),
		cmocka_unit_test_setup_teardown(cache_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(cache_fork, setup, teardown),
		cmocka_unit_test_setup_teardown(cache_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(cache_not_regular, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
