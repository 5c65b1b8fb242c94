/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's passdb code (src/modules/pam_matrix/passdb.c) compiled into
 * this program with a pam_syslog() that records what it logs.  Built twice
 * (tests/modules/CMakeLists.txt): with the module's read buffer and size
 * bound, and with the smallest buffer (a read edge every 16 KiB) and a
 * 2 MiB bound; the tests place lines relative to PM_READ_BUF and
 * PM_PASSDB_MAX, so both builds run every case.
 *
 *   - lookups agree with a plain reference reading of the line rules on
 *     random passdbs: same line, same fields, and exactly the "file:line:
 *     reason" reports the contract asks for (the malformed lines starting
 *     with "USER:" before the line used; every malformed line when USER
 *     has none);
 *   - lines placed across the first read edge: "\nUSER:" split by it, a
 *     candidate line split by it, lines of PM_LINE_MAX and PM_LINE_MAX + 1
 *     bytes across it;
 *   - what is not a regular file (a FIFO, /dev/zero, /dev/null, a
 *     directory) is refused at once, and so is a file over PM_PASSDB_MAX,
 *     by its size or by the bytes actually read (a /proc file);
 *   - a passdb truncated and rewritten in place during lookups gives clean
 *     answers, never a signal;
 *   - fork() while other threads do the first lookups of a process leaves
 *     children that can look up (no lock held for ever);
 *   - a rewritten passdb keeps its owner and group, and when they cannot
 *     be given to the new file (fchown fails: interposed here) the change
 *     fails and the passdb stays as it was, byte for byte, with nothing
 *     left beside it (root only).
 * Files live in a private directory below $TMPDIR.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "pam_compat.h"

#include "passdb.h"
#include "passdb_ref.h"
#include "testutil.h"

static const char *self_exe; /* argv[0], for the fork worker */

/* ---- log capture ----------------------------------------------------- */

#define MAXLOG 100000

static char *logs[MAXLOG];
static size_t nlogs;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static bool log_off; /* threads and forks: nothing recorded, no lock */

void pam_syslog(const pam_handle_t *pamh, int priority, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	(void)pamh;
	(void)priority;
	if (log_off) {
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		s = NULL;
	}
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (s != NULL && nlogs < MAXLOG) {
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

/* Exactly one line was logged and it is WANT. */
static void assert_one_log(const char *want)
{
	if (nlogs != 1 || strcmp(logs[0], want) != 0) {
		log_dump();
		fail_msg("expected exactly the log line \"%s\"", want);
	}
}

/* ---- buffers, files ------------------------------------------------- */

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

static void putc_n(struct buf *b, char c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put(b, &c, 1);
	}
}

struct env {
	char *dir;  /* private, below $TMPDIR */
	char *path; /* <dir>/passdb */
};

static int setup(void **state)
{
	struct env *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		return -1;
	}
	t->dir = tu_mkdtemp("pwrap-passdb");
	t->path = tu_path(t->dir, "passdb");
	log_clear();
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct env *t = *state;

	if (tu_rmtree_quiet(t->dir) != 0) {
		fprintf(stderr, "cannot remove %s\n", t->dir);
	}
	free(t->dir);
	free(t->path);
	free(t);
	log_clear();
	return 0;
}

/* What ends a test whose passdb open or read blocks (tu_alarm). */
#define BLOCKED_MSG "timed out: opening or reading the passdb blocked\n"

/* ---- the reference reading (passdb_ref.h) ------------------------------ */

/* The captured log is exactly R's expected lines. */
static void check_logs(const struct ref_result *r, const char *what)
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

/* A lookup of USER in the passdb at PATH, which holds D[0, N), answers
 * and logs as the reference says. */
static void check_lookup(const char *path, const char *d, size_t n,
			 const char *user, const char *what)
{
	struct pm_found f = PM_FOUND_INIT;
	struct ref_result r;

	ref_lookup(path, d, n, user, &r);
	log_clear();
	assert_int_equal(pm_passdb_lookup(NULL, path, user, &f), PAM_SUCCESS);
	check_logs(&r, what);
	if (f.found != r.found) {
		fail_msg("%s: found %d, reference %d", what, f.found, r.found);
	}
	if (f.found) {
		assert_int_equal(f.pass_len, r.f.pass_len);
		assert_memory_equal(f.pass, r.f.pass, r.f.pass_len);
		assert_int_equal(f.pass[f.pass_len], '\0');
		assert_int_equal(f.service_len, r.f.svc_len);
		assert_memory_equal(f.service, r.f.svc, r.f.svc_len);
		assert_int_equal(f.service[f.service_len], '\0');
		assert_int_equal(f.flags, r.f.bits);
	}
	pm_found_free(&f);
	ref_result_free(&r);
	log_clear();
}

/* ---- random passdbs -------------------------------------------------- */

static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* Names of several lengths, one that is a prefix of another, one that
 * starts like a comment, one with ':' and the empty one. */
static const char *const users[] = {
	"a", "bo", "u1", "user999999", "alice", "u1x", "#c",
	"n62aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"x:y", "",
};
#define NUSERS_LINES 8 /* users[] that appear in lines */
#define NUSERS (sizeof(users) / sizeof(users[0]))

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
	switch (rnd(22)) {
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
	case 9:
		/* around the 8192-byte limit */
		puts_(b, u);
		puts_(b, ":");
		putc_n(b, 'L', 8180 + rnd(20));
		puts_(b, ":s");
		break;
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
		/* long: a comment, blanks, or a line of a user */
		puts_(b, rnd(3) == 0 ? "#" : rnd(2) ? " " : u);
		putc_n(b, rnd(2) ? ' ' : ':', 8190 + rnd(30));
		break;
	case 14:
		puts_(b, "nocolon");
		break;
	case 15:
		puts_(b, u); /* a name alone, then a valid line */
		puts_(b, "\n");
		puts_(b, u);
		puts_(b, ":late:svc");
		break;
	case 17:
		puts_(b, u);
		puts_(b, rnd(2) ? ":pw:svc:locked" : ":pw:s:expired,,must_change");
		break;
	case 18:
		puts_(b, u);
		puts_(b, rnd(2) ? ":pw:svc:lockd" : ":pw:svc:");
		break;
	case 19:
		puts_(b, u);
		puts_(b, rnd(2) ? ": pw:\tsvc" : ":\t \t:  ");
		break;
	case 20:
		puts_(b, u);
		puts_(b, ":pw:svc:locked\r");
		break;
	default:
		puts_(b, u);
		snprintf(tmp, sizeof(tmp), ":pw%u:", i);
		puts_(b, tmp);
		putc_n(b, 's', rnd(50));
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

/* Random files of a few lines and of thousands (many read edges in the
 * small-buffer build), every user looked up in each. */
static void lookup_random(void **state)
{
	struct env *t = *state;
	struct buf b = { NULL, 0, 0 };
	char what[160];

	for (int it = 0; it < 300; it++) {
		unsigned nlines = rnd(it % 10 == 0 ? 4000 : 80);

		bool good = rnd(3) != 0;

		random_passdb(&b, nlines, good);
		while (b.n > PM_PASSDB_MAX) { /* the small build's bound */
			random_passdb(&b, nlines /= 2, good);
		}
		tu_write_file(t->path, b.d, b.n, 0644);
		for (size_t u = 0; u < NUSERS; u++) {
			snprintf(what, sizeof(what),
				 "iteration %d (%zu bytes), user \"%s\"", it,
				 b.n, users[u]);
			check_lookup(t->path, b.d, b.n, users[u], what);
		}
	}
	free(b.d);
}

/* ---- hand-made cases -------------------------------------------------- */

/* The report contract, line by line. */
static void lookup_reports(void **state)
{
	struct env *t = *state;
	struct buf b = { NULL, 0, 0 };
	char want[PATH_MAX + 256];
	const char *who[] = { "alice", "bob", "nobody", "", "a:b", "alic",
			      "zed", "carol", "dave" };

	puts_(&b, "# comment\n");            /* 1 */
	puts_(&b, "alice:x\n");              /* 2 too few, alice's */
	puts_(&b, "bob\n");                  /* 3 too few */
	puts_(&b, "\n");                     /* 4 blank */
	putc_n(&b, ' ', 9000);               /* 5 long (and blank) */
	puts_(&b, "\n#");                    /* 6 a long comment */
	putc_n(&b, 'x', 9000);
	puts_(&b, "\nalice:a:b:c:d\n");      /* 7 alice: service b:c:d */
	puts_(&b, "alice:pw:svc\n");         /* 8 alice, second */
	puts_(&b, "carol:pw:svc:lockd\n");   /* 9 carol, a note */
	puts_(&b, "dave:pw:svc\r\n");        /* 10 dave, a note */
	puts_(&b, "bob:");                   /* 11 bob's, long */
	putc_n(&b, 'b', 9000);
	puts_(&b, "\n:no:user");             /* 12 the empty user */
	tu_write_file(t->path, b.d, b.n, 0644);

	for (size_t i = 0; i < sizeof(who) / sizeof(who[0]); i++) {
		check_lookup(t->path, b.d, b.n, who[i], who[i]);
	}
	{
		struct pm_found f = PM_FOUND_INIT;

		/* Found on line 7: only alice's skipped line 2 before it. */
		assert_int_equal(pm_passdb_lookup(NULL, t->path, "alice", &f),
				 PAM_SUCCESS);
		assert_true(f.found);
		assert_string_equal(f.pass, "a");
		assert_string_equal(f.service, "b:c:d");
		assert_int_equal(nlogs, 1);
		snprintf(want, sizeof(want),
			 "%s:2: too few fields (expected user:password:"
			 "service[:flags]), line skipped", t->path);
		assert_string_equal(logs[0], want);
		log_clear();
		/* Found with a note: the line used is named. */
		assert_int_equal(pm_passdb_lookup(NULL, t->path, "carol", &f),
				 PAM_SUCCESS);
		assert_true(f.found);
		assert_string_equal(f.service, "svc:lockd");
		assert_int_equal(nlogs, 1);
		snprintf(want, sizeof(want), "%s:9: the fourth field is not",
			 t->path);
		assert_non_null(strstr(logs[0], want));
		log_clear();
		assert_int_equal(pm_passdb_lookup(NULL, t->path, "dave", &f),
				 PAM_SUCCESS);
		assert_string_equal(f.service, "svc\r");
		snprintf(want, sizeof(want),
			 "%s:10: line ends with CR (CRLF line ending?): the "
			 "CR is part of the service",
			 t->path);
		assert_one_log(want);
		log_clear();
		/* Unknown: every skipped line, in order. */
		assert_int_equal(pm_passdb_lookup(NULL, t->path, "nobody", &f),
				 PAM_SUCCESS);
		assert_false(f.found);
		assert_int_equal(nlogs, 5);
		snprintf(want, sizeof(want), "%s:5: line longer than 8192",
			 t->path);
		assert_non_null(strstr(logs[3], want));
		snprintf(want, sizeof(want), "%s:11: line longer than 8192",
			 t->path);
		assert_non_null(strstr(logs[4], want));
		log_clear();
		/* The empty name is the one of line 12. */
		assert_int_equal(pm_passdb_lookup(NULL, t->path, "", &f),
				 PAM_SUCCESS);
		assert_true(f.found);
		assert_string_equal(f.pass, "no");
		log_clear();
		pm_found_free(&f);
	}
	/* A well-formed file: nothing to report. */
	tu_write_file(t->path, "a:1:s\nb:2:s\n", 12, 0644);
	check_lookup(t->path, "a:1:s\nb:2:s\n", 12, "b", "good file");
	free(b.d);
}

/* First line, last line without '\n', NUL, CR, first valid line wins. */
static void lookup_lines(void **state)
{
	struct env *t = *state;
	static const struct {
		const char *data;
		size_t n;
		const char *user;
	} cases[] = {
#define C(s, u) { s, sizeof(s) - 1, u }
		C("alice:first:svc\nalice:second:svc\n", "alice"),
		C("bob:b:s\nalice:last:svc", "alice"),
		C("alice:x:y\nalice:last:svc", "alice"),
		C("alice:last", "alice"),
		C("alice:", "alice"),
		C("alice", "alice"),
		C("alice:p\0w:svc\nalice:good:svc\n", "alice"),
		C("alice:pw:svc\r\nalice:good:svc\n", "alice"),
		C("alice:p\rw:svc\n", "alice"),
		C("\nalice::\n", "alice"),
		C("xalice:a:b\n alice:b:c\nalice:c:d", "alice"),
		C("#alice:a:b\nalice:c:d\n", "#alice"),
		C("", "alice"),
		C("\n\n\n", "alice"),
		C("alice:a:b\n", "alic"),
		C("alice:a:b\n", "alicex"),
#undef C
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char what[32];

		snprintf(what, sizeof(what), "case %zu", i);
		tu_write_file(t->path, cases[i].data, cases[i].n, 0644);
		check_lookup(t->path, cases[i].data, cases[i].n, cases[i].user,
			     what);
	}
}

/* Valid filler lines "f:p:sss...\n" of exactly N bytes in all (N is 0
 * or at least 5). */
static void filler(struct buf *b, size_t n)
{
	assert_true(n == 0 || n >= 5);
	while (n > 0) {
		size_t len = n > 128 ? 64 : n; /* a last line of 5..128 */

		puts_(b, "f:p:");
		putc_n(b, 's', len - 5);
		puts_(b, "\n");
		n -= len;
	}
}

/* For placements over a long range: its ends, its middle and the last
 * dozen offsets before the edge; every offset of a short range. */
static bool interesting(long d, long from, long to)
{
	long mid = (from + to) / 2;

	return to - from <= 40 || d <= from + 3 || d >= -12 ||
	       (d >= mid - 2 && d <= mid + 2);
}

/*
 * The first read of a big file fills the buffer: the '\n' put before the
 * file and its first PM_READ_BUF - 1 bytes.  Lines of the user (valid,
 * malformed, long) are placed so that they start at every offset around
 * that edge, with "\nUSER:" split by it and the line split by it; each
 * lookup must answer and log as the reference.
 */
static void lookup_read_edges(void **state)
{
	struct env *t = *state;
	const size_t edge = PM_READ_BUF - 1; /* first file byte of read 2 */
	struct buf line = { NULL, 0, 0 };
	struct buf b = { NULL, 0, 0 };
	char what[160];
	int ncases = 0;

	for (int kind = 0; kind < 7; kind++) {
		/* where the user's first line starts, relative to edge */
		long from = -12, to = 3;

		line.n = 0;
		switch (kind) {
		case 0: /* valid */
			puts_(&line, "alice:pw:svc\n");
			break;
		case 1: /* malformed, then valid */
			puts_(&line, "alice:bad\nalice:pw:svc\n");
			break;
		case 2: /* NUL, then CR, then valid */
			put(&line, "alice:p\0w:svc\nalice:pw:svc\r\n", 28);
			puts_(&line, "alice:good:svc\n");
			break;
		case 3: /* exactly PM_LINE_MAX bytes */
		case 4: /* PM_LINE_MAX + 1 bytes, then valid */
			puts_(&line, "alice:");
			putc_n(&line, 'x', PM_LINE_MAX - 10 + (kind == 4));
			puts_(&line, ":svc\nalice:pw:svc\n");
			from = -(long)PM_LINE_MAX - 3;
			to = 3;
			break;
		case 5: /* a long comment and a long blank line first */
			puts_(&line, "#");
			putc_n(&line, 'c', PM_LINE_MAX + 5);
			puts_(&line, "\n");
			putc_n(&line, ' ', PM_LINE_MAX + 5);
			puts_(&line, "\nalice:pw:svc\n");
			from = -(long)PM_LINE_MAX - 10;
			to = 2;
			break;
		default: /* the last line, no '\n' */
			puts_(&line, "alice:pw:svc");
			break;
		}
		for (long d = from; d <= to; d++) {
			size_t at = (size_t)((long)edge + d);

			if (!interesting(d, from, to)) {
				continue;
			}
			b.n = 0;
			filler(&b, at);
			put(&b, line.d, line.n);
			if (kind != 6) {
				filler(&b, 3 * PM_LINE_MAX);
			}
			tu_write_file(t->path, b.d, b.n, 0644);
			snprintf(what, sizeof(what),
				 "kind %d at edge%+ld (file %zu bytes)", kind,
				 d, b.n);
			check_lookup(t->path, b.d, b.n, "alice", what);
			check_lookup(t->path, b.d, b.n, "nobody", what);
			ncases++;
		}
	}
	print_message("%d placements around the read edge at %zu\n", ncases,
		      edge);
	free(line.d);
	free(b.d);
}

/* ---- what is refused ------------------------------------------------- */

/* Refused without blocking (tu_alarm ends a blocked open), with
 * PAM_AUTHINFO_UNAVAIL and one
 * message naming PATH, for a lookup and for a password change. */
static void check_refused(const char *path, const char *reason)
{
	struct pm_found f = PM_FOUND_INIT;
	char want[PATH_MAX + 128];

	snprintf(want, sizeof(want), "%s: %s", path, reason);
	log_clear();
	tu_alarm(TU_HANG_SECONDS, BLOCKED_MSG);
	assert_int_equal(pm_passdb_lookup(NULL, path, "alice", &f),
			 PAM_AUTHINFO_UNAVAIL);
	assert_false(f.found);
	assert_one_log(want);
	log_clear();
	assert_int_equal(pm_passdb_set_password(NULL, path, "alice", "n"),
			 PAM_AUTHINFO_UNAVAIL);
	assert_one_log(want);
	alarm(0);
	log_clear();
}

/* A FIFO: open() must not wait for a writer, nor reading for data. */
static void refuse_fifo(void **state)
{
	struct env *t = *state;

	assert_int_equal(mkfifo(t->path, 0600), 0);
	check_refused(t->path, "passdb is not a regular file");
}

/* A passdb that reads as empty, as upstream reads it: found nobody,
 * changed nobody's password, at once. */
static void check_empty(const char *path, const char *log)
{
	struct pm_found f = PM_FOUND_INIT;

	log_clear();
	tu_alarm(TU_HANG_SECONDS, BLOCKED_MSG);
	assert_int_equal(pm_passdb_lookup(NULL, path, "alice", &f),
			 PAM_SUCCESS);
	assert_false(f.found);
	if (log != NULL) {
		assert_one_log(log);
	} else {
		assert_int_equal(nlogs, 0);
	}
	log_clear();
	assert_int_equal(pm_passdb_set_password(NULL, path, "alice", "n"),
			 PAM_USER_UNKNOWN);
	alarm(0);
	log_clear();
}

/* Devices: /dev/zero never ends (refused); /dev/null and a directory read
 * as empty, as upstream reads them (a directory with an error message). */
static void refuse_devices(void **state)
{
	struct env *t = *state;
	char want[PATH_MAX + 64];

	check_refused("/dev/zero", "passdb is not a regular file");
	check_empty("/dev/null", NULL);
	snprintf(want, sizeof(want),
		 "%s: passdb is a directory, read as an empty file (no users)",
		 t->dir);
	check_empty(t->dir, want);
}

/* A sparse file of PM_PASSDB_MAX + 1 bytes: refused by its size. */
static void refuse_too_big(void **state)
{
	struct env *t = *state;
	char want[64];
	int fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)PM_PASSDB_MAX + 1), 0);
	assert_int_equal(close(fd), 0);
	snprintf(want, sizeof(want),
		 "passdb is larger than the limit of %llu bytes",
		 (unsigned long long)PM_PASSDB_MAX);
	check_refused(t->path, want);
	/* At the limit it is read (only in the small build: reading 1 GiB
	 * would take long under valgrind). */
	if (PM_PASSDB_MAX <= ((unsigned long long)16 << 20)) {
		struct pm_found f = PM_FOUND_INIT;

		assert_int_equal(truncate(t->path, (off_t)PM_PASSDB_MAX), 0);
		assert_int_equal(pm_passdb_lookup(NULL, t->path, "alice", &f),
				 PAM_SUCCESS);
		assert_false(f.found);
		/* one line of NUL bytes, longer than a line may be */
		assert_int_equal(nlogs, 1);
		assert_non_null(strstr(logs[0], ":1: line longer than"));
		log_clear();
	}
}

/*
 * Files that report size 0 but have content (/proc) are read to their
 * end; one bigger than PM_PASSDB_MAX is refused by the bytes actually
 * read.  /proc/self/smaps grows by some 700 bytes per mapping: with 4096
 * more it passes 2 MiB (the small build's bound).
 */
static void refuse_proc_over_bound(void **state)
{
	struct pm_found f = PM_FOUND_INIT;
	struct stat st;
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t nmaps = 4096;
	char *area;
	char want[128];

	(void)state;
	if (stat("/proc/self/status", &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != 0) {
		skip();
	}
	assert_int_equal(pm_passdb_lookup(NULL, "/proc/self/status", "Name",
					  &f),
			 PAM_SUCCESS);
	assert_false(f.found);
	/* "Name:\t<program>" has one ':': its content was read */
	assert_true(nlogs > 3);
	assert_non_null(strstr(logs[0], "/proc/self/status:1: too few"));
	log_clear();
	if (PM_PASSDB_MAX > ((unsigned long long)2 << 20)) {
		print_message("bound %llu: not reachable with /proc\n",
			      (unsigned long long)PM_PASSDB_MAX);
		return;
	}
	/* Pages alternately readable and not: mappings that do not merge. */
	area = mmap(NULL, 2 * nmaps * page, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(area != MAP_FAILED);
	for (size_t i = 0; i < nmaps; i++) {
		assert_int_equal(mprotect(area + (2 * i + 1) * page, page,
					  PROT_NONE),
				 0);
	}
	snprintf(want, sizeof(want),
		 "/proc/self/smaps: passdb is larger than the limit of %llu "
		 "bytes",
		 (unsigned long long)PM_PASSDB_MAX);
	assert_int_equal(pm_passdb_lookup(NULL, "/proc/self/smaps", "alice",
					  &f),
			 PAM_AUTHINFO_UNAVAIL);
	assert_one_log(want);
	log_clear();
	assert_int_equal(munmap(area, 2 * nmaps * page), 0);
}

/* ---- a passdb rewritten in place -------------------------------------- */

/* 1.5 MiB of users, then zed:pwXXXX:svc with X all A or all B. */
static void inplace_content(struct buf *b, char x)
{
	char line[64];

	b->n = 0;
	for (unsigned i = 0; b->n < ((size_t)3 << 19); i++) {
		snprintf(line, sizeof(line), "user%07u:pass%07u:svc\n", i, i);
		puts_(b, line);
	}
	snprintf(line, sizeof(line), "zed:pw%c%c%c%c:svc\n", x, x, x, x);
	puts_(b, line);
}

/*
 * A writer truncates the passdb and writes it again in 64 KiB pieces
 * (what "cat new > passdb" does), over and over, while a worker looks zed
 * up.  The worker must never die of a signal (a mapped file that shrinks
 * gives SIGBUS) and every answer must be clean: not found, or zed with a
 * password of A and B bytes (a read may mix both versions).
 */
static void inplace_rewrite(void **state)
{
	struct env *t = *state;
	struct buf a = { NULL, 0, 0 }, b = { NULL, 0, 0 };
	pid_t writer, worker;
	int st;

	inplace_content(&a, 'A');
	inplace_content(&b, 'B');
	tu_write_file(t->path, a.d, a.n, 0644);
	writer = tu_rewriter_start(t->path, a.d, a.n, b.d, b.n);
	worker = fork();
	assert_true(worker >= 0);
	if (worker == 0) {
		/* no cmocka assertions in the child */
		double end = tu_now() + 2.0;
		unsigned long n = 0, hits = 0;
		int bad = 0;

		tu_child_signals();
		log_off = true;
		while (tu_now() < end || n < 20) {
			struct pm_found f = PM_FOUND_INIT;
			int rv = pm_passdb_lookup(NULL, t->path, "zed", &f);

			n++;
			if (rv == PAM_SUCCESS && f.found) {
				hits++;
				bad |= f.pass_len != 6 ||
				       strncmp(f.pass, "pw", 2) != 0 ||
				       strspn(f.pass + 2, "AB") != 4 ||
				       strcmp(f.service, "svc") != 0;
			} else if (rv != PAM_SUCCESS) {
				bad |= rv != PAM_AUTHINFO_UNAVAIL;
			}
			pm_found_free(&f);
		}
		fprintf(stderr, "# %lu lookups during rewrites, %lu found\n",
			n, hits);
		free(a.d); /* valgrind checks the child's heap at _exit */
		free(b.d);
		_exit(bad ? 1 : 0);
	}
	st = tu_wait_bounded(worker, TU_HANG_SECONDS);
	tu_kill_wait(writer);
	free(a.d);
	free(b.d);
	if (st <= -2) {
		fail_msg("the lookups died of signal %d", -2 - st);
	}
	if (st != 0) {
		fail_msg("the lookups %s", st < 0 ? "hung" : "got a bad answer");
	}
}

/* ---- fork during the first lookups ------------------------------------ */

#define FORK_THREADS 4
#define FORK_CHILDREN 30

struct fork_thr {
	const char *path;
	volatile int stop;
	unsigned long errors;
};

static void *fork_thread(void *arg)
{
	struct fork_thr *th = arg;

	while (!th->stop) {
		struct pm_found f = PM_FOUND_INIT;

		if (pm_passdb_lookup(NULL, th->path, "user0001999", &f) !=
			    PAM_SUCCESS ||
		    !f.found) {
			th->errors++;
		}
		pm_found_free(&f);
	}
	return NULL;
}

/*
 * The worker, a fresh process (this program run as "--fork-worker PATH"):
 * threads start their first lookups while this thread forks; each child
 * looks up once and exits.  Exit 0, or 1 for a failed lookup, 2 for a
 * child that hung or died.
 */
static int fork_worker(const char *path)
{
	pthread_t tid[FORK_THREADS];
	struct fork_thr th = { path, 0, 0 };
	int rc = 0;

	log_off = true;
	for (int i = 0; i < FORK_THREADS; i++) {
		if (pthread_create(&tid[i], NULL, fork_thread, &th) != 0) {
			return 3;
		}
	}
	for (int i = 0; i < FORK_CHILDREN && rc == 0; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			rc = 3;
			break;
		}
		if (pid == 0) {
			struct pm_found f = PM_FOUND_INIT;
			int ok = pm_passdb_lookup(NULL, path, "user0000007",
						  &f) == PAM_SUCCESS &&
				 f.found && strcmp(f.pass, "pass0000007") == 0;

			_exit(ok ? 0 : 1);
		}
		switch (tu_wait_bounded(pid, TU_HANG_SECONDS)) {
		case 0:
			break;
		case 1:
			rc = 1;
			break;
		default:
			rc = 2;
			break;
		}
	}
	th.stop = 1;
	for (int i = 0; i < FORK_THREADS; i++) {
		pthread_join(tid[i], NULL);
	}
	return rc != 0 ? rc : th.errors != 0;
}

/* GCC 12's AddressSanitizer allocator is not fork-safe: a child forked
 * while another thread holds one of its locks hangs in its first malloc,
 * whatever the code under test does. */
#if defined(__SANITIZE_ADDRESS__)
#define PM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PM_TEST_ASAN 1
#endif
#endif

static void fork_first_lookups(void **state)
{
	struct env *t = *state;
	struct buf b = { NULL, 0, 0 };
	char line[64];

#ifdef PM_TEST_ASAN
	print_message("skipped under AddressSanitizer (its allocator is not "
		      "fork-safe with threads)\n");
	skip();
#endif

	for (unsigned i = 0; i < 2000; i++) {
		snprintf(line, sizeof(line), "user%07u:pass%07u:svc\n", i, i);
		puts_(&b, line);
	}
	tu_write_file(t->path, b.d, b.n, 0644);
	free(b.d);
	for (int round = 0; round < 5; round++) {
		pid_t pid = fork();
		int rc;

		assert_true(pid >= 0);
		if (pid == 0) {
			execl(self_exe, self_exe, "--fork-worker", t->path,
			      (char *)NULL);
			_exit(127);
		}
		rc = tu_wait_bounded(pid, TU_HANG_SECONDS);
		if (rc != 0) {
			fail_msg("round %d: worker says %d (1: a lookup "
				 "failed, 2: a forked child hung or died, -1: "
				 "the worker hung, below: it died)",
				 round, rc);
		}
	}
}

/* ---- password changes -------------------------------------------------- */

/* set_password logs like a lookup, numbers its own errors, and keeps
 * every other byte. */
static void set_password_reports(void **state)
{
	struct env *t = *state;
	static const char orig[] = "bob\nalice:x\n\nalice:old:svc\nzed:1\n";
	static const char want[] = "bob\nalice:x\n\nalice:n3w:svc\nzed:1\n";
	char expect[PATH_MAX + 128];
	struct pm_found f = PM_FOUND_INIT;

	tu_write_file(t->path, orig, sizeof(orig) - 1, 0644);
	assert_int_equal(pm_passdb_set_password(NULL, t->path, "alice", "n3w"),
			 PAM_SUCCESS);
	snprintf(expect, sizeof(expect),
		 "%s:2: too few fields (expected user:password:service[:flags]), "
		 "line skipped",
		 t->path);
	assert_one_log(expect);
	log_clear();
	{
		size_t n;
		char *got = tu_read_file(t->path, &n);

		assert_int_equal(n, sizeof(want) - 1);
		assert_memory_equal(got, want, n);
		free(got);
	}
	assert_int_equal(pm_passdb_lookup(NULL, t->path, "alice", &f),
			 PAM_SUCCESS);
	assert_string_equal(f.pass, "n3w");
	pm_found_free(&f);
	log_clear();
	/* Its own error names the line. */
	assert_int_equal(pm_passdb_set_password(NULL, t->path, "alice", "a:b"),
			 PAM_AUTHTOK_ERR);
	assert_int_equal(nlogs, 2);
	assert_non_null(strstr(logs[1], "passdb:4: new password contains"));
	log_clear();
	/* Unknown: every bad line, then the error. */
	assert_int_equal(pm_passdb_set_password(NULL, t->path, "nobody", "x"),
			 PAM_USER_UNKNOWN);
	assert_int_equal(nlogs, 5);
	assert_non_null(strstr(logs[4], "no line for user nobody"));
	log_clear();
	/* A leading blank would be dropped by the next reading. */
	assert_int_equal(pm_passdb_set_password(NULL, t->path, "alice", " x"),
			 PAM_AUTHTOK_ERR);
	assert_non_null(strstr(logs[nlogs - 1],
			       "passdb:4: new password starts with a blank"));
	log_clear();
}

/*
 * Random passdbs, users and new passwords (some that cannot be stored):
 * pm_passdb_set_password answers, logs and leaves the file (byte for byte,
 * mode kept) as the reference rewrite says: every line of the user that
 * is read rewritten, every other byte kept.
 */
static void set_password_random(void **state)
{
	struct env *t = *state;
	struct buf b = { NULL, 0, 0 };
	static const char *const pws[] = { "n3w", "", "a:b", " lead", "x\ry",
					   "in ner", "tab\t" };
	char what[160];

	for (int it = 0; it < 400; it++) {
		const char *user = users[rnd(NUSERS)];
		const char *pw = pws[rnd(sizeof(pws) / sizeof(pws[0]))];
		char *want = NULL, *got;
		size_t wlen = 0, glen = 0;
		struct ref_result r;
		int rv, rrv;

		random_passdb(&b, rnd(40), rnd(3) != 0);
		tu_write_file(t->path, b.d, b.n, 0640);
		snprintf(what, sizeof(what), "iteration %d, user \"%s\"", it,
			 user);
		ref_lookup(t->path, b.d, b.n, user, &r);
		rrv = ref_set_password(b.d, b.n, user, pw, &want, &wlen);
		log_clear();
		rv = pm_passdb_set_password(NULL, t->path, user, pw);
		if (rv != rrv) {
			log_dump();
			fail_msg("%s: returned %d, reference %d", what, rv, rrv);
		}
		/* the lookup's reports, then the error, if any */
		assert_true(nlogs >= r.nwant);
		for (size_t i = 0; i < r.nwant; i++) {
			assert_string_equal(logs[i], r.want[i]);
		}
		assert_int_equal(nlogs - r.nwant, rv == PAM_SUCCESS ? 0 : 1);
		got = tu_read_file(t->path, &glen);
		if (rrv != PAM_SUCCESS) {
			want = b.d;
			wlen = b.n;
		}
		if (glen != wlen || (wlen > 0 && memcmp(got, want, wlen) != 0)) {
			fail_msg("%s: the passdb after is not the reference's",
				 what);
		}
		if (rrv == PAM_SUCCESS) {
			free(want);
		}
		free(got);
		ref_result_free(&r);
		{
			struct stat st;

			assert_int_equal(stat(t->path, &st), 0);
			assert_int_equal(st.st_mode & 07777, 0640);
		}
	}
	log_clear();
	free(b.d);
}

/* ---- passwords are wiped before their memory is freed ---------------- */

/*
 * Every malloc() and free() of this program and of passdb.c comes here
 * (-Wl,--wrap, tests/modules/CMakeLists.txt).  New blocks are filled, so
 * that all of a block is defined when it is scanned; while `secret` is set,
 * a freed block that still holds it is counted.
 */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define PWRAP_MAKE_DEFINED(p, n) (void)VALGRIND_MAKE_MEM_DEFINED((p), (n))
#endif
#endif
#ifndef PWRAP_MAKE_DEFINED
#define PWRAP_MAKE_DEFINED(p, n) ((void)(p), (void)(n))
#endif

void *__real_malloc(size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void __wrap_free(void *p);

static const char *secret;
static unsigned unwiped;

void *__wrap_malloc(size_t n)
{
	void *p = __real_malloc(n);

	if (p != NULL) {
		memset(p, 0xa5, malloc_usable_size(p));
	}
	return p;
}

void __wrap_free(void *p)
{
	if (p != NULL && secret != NULL) {
		size_t n = malloc_usable_size(p);

		/* (the C library's own blocks, asprintf's, may end in bytes
		 * never written: valgrind must not count reading them) */
		PWRAP_MAKE_DEFINED(p, n);
		if (memmem(p, n, secret, strlen(secret)) != NULL) {
			unwiped++;
		}
	}
	__real_free(p);
}

/* A lookup of the user, of another one and of an unknown one, and a
 * password change, in a file larger than one read: no freed buffer holds
 * a password of the file, or the new one. */
static void secrets_wiped(void **state)
{
	struct env *t = *state;
	struct buf b = { 0 };
	struct pm_found f = PM_FOUND_INIT;
	const char *who[] = { "alice", "bob", "nobody-here" };

	for (int i = 0; i < 3000; i++) {
		char line[64];

		snprintf(line, sizeof(line), "user%d:pw%d:svc\n", i, i);
		puts_(&b, line);
		if (i == 1500) {
			puts_(&b, "alice:Sekr3t-alice:svc\n"
				  "bob:Sekr3t-bob:svc\n");
		}
	}
	tu_write_file(t->path, b.d, b.n, 0644);
	free(b.d);
	unwiped = 0;
	secret = "Sekr3t-alice";
	for (size_t i = 0; i < sizeof(who) / sizeof(who[0]); i++) {
		assert_int_equal(pm_passdb_lookup(NULL, t->path, who[i], &f),
				 PAM_SUCCESS);
		assert_int_equal(f.found, i < 2);
		pm_found_free(&f);
	}
	assert_int_equal(pm_passdb_set_password(NULL, t->path, "bob",
						"Sekr3t-new"),
			 PAM_SUCCESS);
	secret = "Sekr3t-new";
	assert_int_equal(pm_passdb_lookup(NULL, t->path, "bob", &f),
			 PAM_SUCCESS);
	assert_string_equal(f.pass, "Sekr3t-new");
	pm_found_free(&f);
	secret = NULL;
	assert_int_equal(unwiped, 0);
	log_clear();
}

/* The passdb code calls this fchown (it is linked into this program):
 * failing on demand, else the C library's. */
static bool fchown_fails;

int fchown(int fd, uid_t uid, gid_t gid)
{
	int (*real)(int, uid_t, gid_t);
	void *sym;

	if (fchown_fails) {
		errno = EPERM;
		return -1;
	}
	sym = dlsym(RTLD_NEXT, "fchown");
	if (sym == NULL) {
		errno = ENOSYS;
		return -1;
	}
	memcpy(&real, &sym, sizeof(real));
	return real(fd, uid, gid);
}

/* t's passdb holds text, is uid 4242's (group 4343), mode 0640, and is
 * alone in its directory. */
static void assert_passdb_is(const struct env *t, const char *text)
{
	struct stat st;
	size_t n;
	char *got = tu_read_file(t->path, &n);

	assert_int_equal(n, strlen(text));
	assert_memory_equal(got, text, n);
	free(got);
	assert_int_equal(stat(t->path, &st), 0);
	assert_true(st.st_uid == 4242 && st.st_gid == 4343);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(tu_count_entries(t->dir, false), 1);
}

/* Root changes the password in a passdb of another user (uid 4242): the
 * new file is that user's again; when fchown fails, the change fails with
 * an error naming the step, and the passdb and its directory are as they
 * were (9c82650 ignored the failure: the passdb became root's). */
static void set_password_keeps_owner(void **state)
{
	struct env *t = *state;
	static const char orig[] = "alice:old:svc\n";
	static const char want[] = "alice:n3w:svc\n";
	if (geteuid() != 0) {
		TU_SKIP("needs root: only root rewrites a passdb of another user");
	}
	tu_write_file(t->path, orig, sizeof(orig) - 1, 0640);
	assert_int_equal(chown(t->path, 4242, 4343), 0);
	fchown_fails = true;
	assert_int_not_equal(pm_passdb_set_password(NULL, t->path, "alice",
						    "n3w"), PAM_SUCCESS);
	fchown_fails = false;
	assert_true(nlogs >= 1);
	assert_non_null(strstr(logs[nlogs - 1], "cannot give the passdb's owner "
			       "and group to the new passdb"));
	assert_passdb_is(t, orig);
	log_clear();

	assert_int_equal(pm_passdb_set_password(NULL, t->path, "alice", "n3w"),
			 PAM_SUCCESS);
	assert_passdb_is(t, want);
	log_clear();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(lookup_random),
		T(lookup_reports),
		T(lookup_lines),
		T(lookup_read_edges),
		T(refuse_fifo),
		T(refuse_devices),
		T(refuse_too_big),
		T(refuse_proc_over_bound),
		T(inplace_rewrite),
		T(fork_first_lookups),
		T(set_password_reports),
		T(set_password_random),
		T(secrets_wiped),
		T(set_password_keeps_owner),
#undef T
	};

	self_exe = argv[0];
	if (argc == 3 && strcmp(argv[1], "--fork-worker") == 0) {
		return fork_worker(argv[2]);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
