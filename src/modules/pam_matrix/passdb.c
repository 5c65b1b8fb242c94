/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's passdb: loading, lookup and the locked, atomic rewrite used
 * by password changes (see passdb.h for the contract).
 *
 * Concurrency: readers never lock.  A writer takes flock(LOCK_EX) on the
 * passdb itself, checks that the path still names the inode it locked (an
 * earlier writer may have renamed a new file over it while we waited),
 * writes the new content to a mkstemp file in the same directory and renames
 * it over the passdb.  Readers therefore always see a whole old or a whole
 * new file, and concurrent writers are serialised without losing updates.
 * Nothing in this file logs a password or a line's content.
 */
#define _GNU_SOURCE
#include "passdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include <security/pam_ext.h>

#define PM_STR2(x) #x
#define PM_STR(x) PM_STR2(x)

/* How often a writer re-opens a passdb that was replaced while it waited
 * for the lock before giving up (each retry means another writer finished,
 * so this only bounds pathological churn). */
#define PM_LOCK_RETRIES 100000

static const char *pm_strerror(int errnum, char *buf, size_t len)
{
	/* GNU strerror_r: thread-safe, may return a static string. */
	return strerror_r(errnum, buf, len);
}

static int pm_open_error(pam_handle_t *pamh, const char *path,
			 const char *what, int errnum)
{
	char ebuf[128];

	pam_syslog(pamh, LOG_ERR, "%s: cannot %s passdb: %s", path, what,
		   pm_strerror(errnum, ebuf, sizeof(ebuf)));
	return errnum == ENOMEM ? PAM_BUF_ERR : PAM_AUTHINFO_UNAVAIL;
}

/* Reads FD to its end into a malloc'd buffer (small files, and files that
 * cannot be mapped: pipes, /proc files, character devices).  HINT is the
 * expected size: a regular file is then read with one read() that asks for
 * a byte more, whose short count tells the end. */
static int pm_read_all(pam_handle_t *pamh, const char *path, int fd,
		       size_t hint, struct pm_passdb *db)
{
	size_t cap = 0;

	for (;;) {
		ssize_t n;

		if (db->size == cap) {
			size_t ncap = cap    ? cap * 2
				      : hint ? hint + 1
					     : 65536;
			char *nbuf = malloc(ncap);

			if (nbuf == NULL || ncap < cap) {
				free(nbuf);
				return pm_open_error(pamh, path, "read",
						     ENOMEM);
			}
			if (db->data != NULL) {
				memcpy(nbuf, db->data, db->size);
				explicit_bzero(db->data, db->size);
				free(db->data);
			}
			db->data = nbuf;
			cap = ncap;
		}
		n = read(fd, db->data + db->size, cap - db->size);
		if (n == 0) {
			return PAM_SUCCESS;
		}
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return pm_open_error(pamh, path, "read", errno);
		}
		db->size += (size_t)n;
		if (hint > 0 && db->size < cap) {
			/* A regular file at its end (a short read). */
			return PAM_SUCCESS;
		}
	}
}

int pm_passdb_load(pam_handle_t *pamh, const char *path, int fd,
		   struct pm_passdb *db)
{
	struct stat st;

	return pm_passdb_load_st(pamh, path, fd, db, &st);
}

int pm_passdb_load_st(pam_handle_t *pamh, const char *path, int fd,
		      struct pm_passdb *db, struct stat *st)
{
	int own_fd = -1;
	int rv = PAM_SUCCESS;
	bool reg;

	db->path = path;
	db->data = NULL;
	db->size = 0;
	db->mapped = false;

	if (fd < 0) {
		own_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (own_fd < 0) {
			return pm_open_error(pamh, path, "open", errno);
		}
		fd = own_fd;
	}
	if (fstat(fd, st) != 0) {
		rv = pm_open_error(pamh, path, "stat", errno);
		goto out;
	}
	if (S_ISDIR(st->st_mode)) {
		rv = pm_open_error(pamh, path, "read", EISDIR);
		goto out;
	}
	reg = S_ISREG(st->st_mode);
	if (reg && st->st_size >= PM_READ_MAX) {
		void *m;

		if ((uintmax_t)st->st_size > SIZE_MAX) {
			rv = pm_open_error(pamh, path, "map", EFBIG);
			goto out;
		}
		m = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE,
			 fd, 0);
		if (m != MAP_FAILED) {
			db->data = m;
			db->size = (size_t)st->st_size;
			db->mapped = true;
		}
	}
	/* Empty regular files need no buffer; the rest are read whole. */
	if (!db->mapped && !(reg && st->st_size == 0)) {
		size_t hint = reg && st->st_size < PM_READ_MAX
				      ? (size_t)st->st_size
				      : 0;

		rv = pm_read_all(pamh, path, fd, hint, db);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
out:
	if (own_fd >= 0) {
		close(own_fd);
	}
	if (rv != PAM_SUCCESS) {
		pm_passdb_close(db);
	}
	return rv;
}

void pm_passdb_close(struct pm_passdb *db)
{
	if (db->data != NULL) {
		if (db->mapped) {
			/* Page-cache pages, not a private copy of secrets. */
			munmap(db->data, db->size);
		} else {
			explicit_bzero(db->data, db->size);
			free(db->data);
		}
	}
	db->data = NULL;
	db->size = 0;
	db->mapped = false;
}

/* ---- line rules ------------------------------------------------------ */

/* Why a line is skipped; PM_VALID and PM_COMMENT are not logged. */
enum pm_why {
	PM_VALID,
	PM_COMMENT,
	PM_BLANK,
	PM_LONG,
	PM_CRLF,
	PM_NUL,
	PM_FEW,
	PM_MANY,
	PM_NOUSER,
	PM_NWHY
};

static const char *const pm_why_text[PM_NWHY] = {
	[PM_VALID] = "valid",
	[PM_COMMENT] = "comment",
	[PM_BLANK] = "blank line",
	[PM_LONG] = "line longer than " PM_STR(PM_LINE_MAX) " bytes",
	[PM_CRLF] = "CRLF line ending (line ends with CR)",
	[PM_NUL] = "NUL byte in line",
	[PM_FEW] = "too few fields (expected user:password:service)",
	[PM_MANY] = "too many fields (expected user:password:service)",
	[PM_NOUSER] = "empty user name",
};

static const char *pm_passdb_why(unsigned why)
{
	return why < PM_NWHY ? pm_why_text[why] : "malformed line";
}

void pm_passdb_log_bad(pam_handle_t *pamh, const char *path,
		       unsigned long lineno, unsigned why)
{
	pam_syslog(pamh, LOG_WARNING, "%s:%lu: %s, line skipped", path, lineno,
		   pm_passdb_why(why));
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

/* The exact rules for the line P[0..LEN) (without its '\n'), in the order
 * of the man page.  *C1 gets the offset of the first ':' of a valid line. */
static enum pm_why pm_classify(const char *p, size_t len, size_t *c1)
{
	size_t ncolon = 0;
	bool nul = false;

	if (len > 0 && p[0] == '#') {
		return PM_COMMENT;
	}
	if (len == 0 || ((p[0] == ' ' || p[0] == '\t' || p[0] == '\r') &&
			 pm_is_blank(p, len))) {
		return PM_BLANK;
	}
	if (len > PM_LINE_MAX) {
		return PM_LONG;
	}
	if (p[len - 1] == '\r') {
		return PM_CRLF;
	}
	for (size_t i = 0; i < len; i++) {
		if (p[i] == ':' && ncolon++ == 0) {
			*c1 = i;
		}
		nul |= p[i] == '\0';
	}
	if (nul) {
		return PM_NUL;
	}
	if (ncolon < 2) {
		return PM_FEW;
	}
	if (ncolon > 2) {
		return PM_MANY;
	}
	if (p[0] == ':') {
		return PM_NOUSER;
	}
	return PM_VALID;
}

void pm_passdb_entry_at(const struct pm_passdb *db, size_t off, size_t ulen,
			unsigned long lineno, struct pm_entry *e)
{
	const char *p = db->data + off;
	const char *nl = memchr(p, '\n', db->size - off);
	size_t len = nl != NULL ? (size_t)(nl - p) : db->size - off;
	const char *c2 = memchr(p + ulen + 1, ':', len - ulen - 1);

	e->line = p;
	e->line_len = len;
	e->lineno = lineno;
	e->pass = p + ulen + 1;
	e->pass_len = (size_t)(c2 - e->pass);
	e->service = c2 + 1;
	e->service_len = (size_t)(p + len - e->service);
}

/* ---- the bulk scanner -------------------------------------------------- */

/*
 * The file is cut into pieces of about PM_PIECE bytes that end after a
 * '\n'.  One pass over a piece (pm_piece_*) finds the first line that
 * starts with "USER:" and proves the lines valid in bulk, at about a byte
 * per cycle; only when the proof fails - the piece has a malformed line, a
 * comment that does not look like an entry, or a CR - are its lines parsed
 * one by one to log the bad ones.  A piece is at most PM_LINE_MAX + 1
 * bytes for the proof, which then needs no length check; longer ones (long
 * lines) are parsed exactly.
 */
#define PM_PIECE 4096

/* What pm_piece_* looks for: on is false when there is nobody to look for
 * or the name is too long (>= 64 bytes) for pm_piece's shifts. */
struct pm_needle {
	const char *user;
	size_t ulen;
	char c1; /* user[ulen - 1] */
	char c3; /* user[ulen - 2], when ulen >= 2 */
	bool on;
};

/* Bits set in a mask, without relying on a POPCNT instruction. */
static inline __attribute__((always_inline)) unsigned
pm_popcount64(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

static inline __attribute__((always_inline)) uint64_t pm_pxor64(uint64_t x)
{
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	return x;
}

/* Portable: 8 bytes at a time, with the "has a zero byte" trick. */
static inline __attribute__((always_inline)) uint64_t
pm_eq_generic(const char *p, char c)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t highs = 0x8080808080808080ULL;
	uint64_t m = 0;

	for (unsigned i = 0; i < 64; i += 8) {
		uint64_t w, t;
		uint8_t bytes[8];

		memcpy(&w, p + i, 8);
		w ^= ones * (unsigned char)c; /* matching bytes are now 0 */
		/* Exact: 0x80 in each zero byte, no false positives. */
		t = ~(((w & ~highs) + ~highs) | w) & highs;
		memcpy(bytes, &t, 8);
		for (unsigned j = 0; j < 8; j++) {
			m |= (uint64_t)(bytes[j] >> 7) << (i + j);
		}
	}
	return m;
}

#define PM_ISA generic
#define PM_ATTR
#define PM_EQ pm_eq_generic
#define PM_POPCNT pm_popcount64
#define PM_PXOR pm_pxor64
#include "passdb_kern.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PM_X86 1

/* Baseline x86-64: SSE2, a software popcount and prefix xor. */
static inline __attribute__((always_inline)) uint64_t
pm_eq_sse2(const char *p, char c)
{
	const __m128i v = _mm_set1_epi8(c);
	uint64_t m = 0;

	for (unsigned i = 0; i < 64; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));

		m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, v))
		     << i;
	}
	return m;
}

#define PM_ISA sse2
#define PM_ATTR
#define PM_EQ pm_eq_sse2
#define PM_POPCNT pm_popcount64
#define PM_PXOR pm_pxor64
#define PM_ADDC _addcarry_u64
#include "passdb_kern.h"

#define PM_T_AVX2 __attribute__((target("avx2,popcnt,pclmul"), always_inline))
#define PM_T_AVX512 \
	__attribute__((target("avx512f,avx512bw,popcnt,pclmul"), always_inline))

static inline PM_T_AVX2 uint64_t pm_eq_avx2(const char *p, char c)
{
	const __m256i v = _mm256_set1_epi8(c);
	__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
	__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));

	return (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, v)) |
	       (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, v))
		       << 32;
}

static inline PM_T_AVX2 unsigned pm_popcnt_avx2(uint64_t x)
{
	return (unsigned)__builtin_popcountll(x);
}

/* Carry-less multiplication by all ones is a prefix xor. */
static inline PM_T_AVX2 uint64_t pm_pxor_avx2(uint64_t x)
{
	return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(
		_mm_cvtsi64_si128((long long)x), _mm_set1_epi8((char)0xff), 0));
}

#define PM_ISA avx2
#define PM_ATTR __attribute__((target("avx2,popcnt,pclmul")))
#define PM_EQ pm_eq_avx2
#define PM_POPCNT pm_popcnt_avx2
#define PM_PXOR pm_pxor_avx2
#define PM_ADDC _addcarry_u64
#include "passdb_kern.h"

static inline PM_T_AVX512 uint64_t pm_eq_avx512(const char *p, char c)
{
	return (uint64_t)_mm512_cmpeq_epi8_mask(_mm512_loadu_si512(p),
						_mm512_set1_epi8(c));
}

#define PM_ISA avx512
#define PM_ATTR __attribute__((target("avx512f,avx512bw,popcnt,pclmul")))
#define PM_EQ pm_eq_avx512
#define PM_POPCNT pm_popcnt_avx2 /* AVX-512F implies AVX2 */
#define PM_PXOR pm_pxor_avx2
#define PM_ADDC _addcarry_u64
#include "passdb_kern.h"
#endif /* x86-64 */

struct pm_kernels {
	size_t (*piece)(const char *d, size_t size, size_t a, size_t b,
			const struct pm_needle *n, bool *ok,
			unsigned long *nlines);
	size_t (*search)(const char *d, size_t size, size_t from, size_t to,
			 const char *user, size_t ulen);
};

int pm_passdb_isa = -1;

static const struct pm_kernels pm_kernel_table[] = {
	{ pm_piece_generic, pm_search_generic },
#ifdef PM_X86
	{ pm_piece_sse2, pm_search_sse2 },
	{ pm_piece_avx2, pm_search_avx2 },
	{ pm_piece_avx512, pm_search_avx512 },
#endif
};

#define PM_NKERNELS (sizeof(pm_kernel_table) / sizeof(pm_kernel_table[0]))

/* The best kernels this CPU runs (valgrind hides what it cannot emulate,
 * AVX-512 for one, from CPUID).  Racing first calls store the same value. */
static const struct pm_kernels *pm_kernels(void)
{
	int isa = __atomic_load_n(&pm_passdb_isa, __ATOMIC_RELAXED);

	if (isa < 0 || (size_t)isa >= PM_NKERNELS) {
		isa = 0;
#ifdef PM_X86
		__builtin_cpu_init();
		isa = 1;
		if (__builtin_cpu_supports("avx2") &&
		    __builtin_cpu_supports("popcnt") &&
		    __builtin_cpu_supports("pclmul")) {
			isa = 2;
			if (__builtin_cpu_supports("avx512f") &&
			    __builtin_cpu_supports("avx512bw")) {
				isa = 3;
			}
		}
#endif
		__atomic_store_n(&pm_passdb_isa, isa, __ATOMIC_RELAXED);
	}
	return &pm_kernel_table[isa];
}

/* One scan and where it reports lines: find() logs bad lines to pamh and
 * looks for user; walk() hands every line to w. */
struct pm_scan {
	const struct pm_passdb *db;
	const struct pm_kernels *k;
	unsigned long lineno; /* lines before the current position */
	pam_handle_t *pamh;
	const char *user; /* NULL: nobody to look for */
	size_t ulen;
	struct pm_entry *e;
	const struct pm_walker *w;
	bool stop; /* found, or the walker asked to stop */
	bool bad;   /* a chunk of a parallel find() met a malformed line */
	/* A chunk of a parallel find() (NULL otherwise): a malformed line
	 * stops it unlogged, and it stops at the next piece once
	 * *limit < index (an earlier chunk decided). */
	const int *limit;
	int index;
};

/* Start of the piece after POS: after the first '\n' at or beyond
 * POS + PM_PIECE - 1, or the end. */
static size_t pm_piece_end(const struct pm_passdb *db, size_t pos)
{
	const char *nl;

	if (db->size - pos <= PM_PIECE) {
		return db->size;
	}
	nl = memchr(db->data + pos + PM_PIECE - 1, '\n',
		    db->size - (pos + PM_PIECE - 1));
	return nl != NULL ? (size_t)(nl - db->data) + 1 : db->size;
}

/* The exact parser: every line in [A, B) (A a line start), one at a time:
 * bad lines are logged or handed to the walker, USER's line ends the scan. */
static void pm_exact(struct pm_scan *s, size_t a, size_t b)
{
	const char *d = s->db->data;

	while (a < b && !s->stop) {
		const char *nl = memchr(d + a, '\n', b - a);
		size_t len = nl != NULL ? (size_t)(nl - (d + a)) : b - a;
		size_t c1 = 0;
		enum pm_why why = pm_classify(d + a, len, &c1);

		s->lineno++;
		if (s->w != NULL) {
			if (why == PM_VALID) {
				s->stop = !s->w->entry(s->w->ctx, a, c1,
						       s->lineno);
			} else if (why != PM_COMMENT) {
				s->stop = !s->w->bad(s->w->ctx, a, s->lineno,
						     why);
			}
		} else if (why == PM_VALID) {
			if (s->user != NULL && c1 == s->ulen &&
			    memcmp(d + a, s->user, s->ulen) == 0) {
				pm_passdb_entry_at(s->db, a, c1, s->lineno,
						   s->e);
				s->stop = true;
			}
		} else if (why != PM_COMMENT && s->limit != NULL) {
			s->bad = true; /* logged by the rescan, in order */
			s->stop = true;
		} else if (why != PM_COMMENT) {
			pm_passdb_log_bad(s->pamh, s->db->path, s->lineno,
					  why);
		}
		a += len + 1;
	}
}

/* Walker only: the lines of [A, B), proven valid (or comments). */
static void pm_walk_valid(struct pm_scan *s, size_t a, size_t b)
{
	const char *d = s->db->data;

	while (a < b) {
		const char *p = d + a;
		const char *c1 = memchr(p, ':', b - a);
		const char *nl = memchr(c1 + 1, '\n', b - a - (size_t)(c1 - p) - 1);

		s->lineno++;
		if (p[0] != '#' &&
		    !s->w->entry(s->w->ctx, a, (size_t)(c1 - p), s->lineno)) {
			s->stop = true;
			return;
		}
		a = (size_t)(nl - d) + 1;
	}
}

/* Lines of [A, B), B a line start: proven in bulk, else parsed exactly.
 * When N is not NULL, looks for its user first: returns where the first
 * line after A that starts with "USER:" begins (the lines before it
 * handled, not it), or SIZE_MAX when there is none. */
static size_t pm_run(struct pm_scan *s, size_t a, size_t b,
		     const struct pm_needle *n)
{
	static const struct pm_needle none = { NULL, 0, 0, 0, false };
	const bool small = b - a <= PM_LINE_MAX + 1;
	unsigned long nl = 0;
	bool ok = false;

	if (a >= b) {
		return SIZE_MAX;
	}
	if (n != NULL && (!small || !n->on)) {
		/* Long lines or a long name: the search on its own. */
		size_t i = s->k->search(s->db->data, s->db->size, a, b - 1,
					n->user, n->ulen);

		if (i != SIZE_MAX) {
			(void)pm_run(s, a, i + 1, NULL);
			return i + 1;
		}
		n = NULL;
	}
	if (small) {
		size_t cand = s->k->piece(s->db->data, s->db->size, a, b,
					  n != NULL ? n : &none, &ok, &nl);

		if (cand != SIZE_MAX) {
			(void)pm_run(s, a, cand, NULL);
			return cand;
		}
	}
	if (ok && s->w == NULL) {
		s->lineno += nl;
	} else if (ok) {
		pm_walk_valid(s, a, b);
	} else {
		pm_exact(s, a, b);
	}
	return SIZE_MAX;
}

bool pm_line_starts_with_user(const char *data, size_t size, size_t off,
			      const char *user, size_t ulen)
{
	return size - off > ulen && data[off + ulen] == ':' &&
	       memcmp(data + off, user, ulen) == 0;
}

bool pm_user_searchable(const char *user, size_t ulen)
{
	return ulen > 0 && ulen < PM_LINE_MAX && strpbrk(user, ":\n") == NULL;
}

/* The scan of find() and walk(): piece by piece. */
static void pm_scan_all(struct pm_scan *s)
{
	const struct pm_passdb *db = s->db;
	const char *d = db->data;
	struct pm_needle n = { s->user, s->ulen, 0, 0, false };
	size_t pos = 0;

	if (s->user != NULL) {
		n.c1 = s->user[s->ulen - 1];
		n.c3 = s->ulen >= 2 ? s->user[s->ulen - 2] : 0;
		n.on = s->ulen < 64; /* pm_piece's shifts */
	}
	while (pos < db->size && !s->stop &&
	       (s->limit == NULL ||
		__atomic_load_n(s->limit, __ATOMIC_RELAXED) >= s->index)) {
		size_t end = pm_piece_end(db, pos);
		size_t full = end; /* end of the complete lines */
		size_t cand = SIZE_MAX;

		if (d[end - 1] != '\n') {
			const char *nl = memrchr(d + pos, '\n', end - pos);

			full = nl != NULL ? (size_t)(nl - d) + 1 : pos;
		}
		if (s->user != NULL &&
		    pm_line_starts_with_user(db->data, db->size, pos, s->user,
					     s->ulen)) {
			cand = pos;
		} else if (full > pos) {
			cand = pm_run(s, pos, full,
				      s->user != NULL ? &n : NULL);
		}
		if (cand != SIZE_MAX) {
			/* Its own exact check: the first valid one is it. */
			const char *nl = memchr(d + cand, '\n', db->size - cand);
			size_t len = nl != NULL ? (size_t)(nl - (d + cand))
						: db->size - cand;

			pm_exact(s, cand, cand + len);
			pos = cand + len + 1;
			continue;
		}
		/* The last line without its '\n'. */
		pm_exact(s, full, end);
		pos = end;
	}
}

/*
 * Files at least this big are searched in parallel: one thread reads
 * page-cache memory at about 7-9 GB/s on the 2-core VMs we measure on, two at
 * about 15-18 (bench/ P3); below this, starting a thread costs more than it
 * saves.
 */
#define PM_PAR_MIN ((size_t)4 << 20)
#define PM_PAR_CHUNKS 16

/* One chunk of a parallel find(): whole lines [a, b) of the file. */
struct pm_chunk {
	size_t a, b;
	unsigned long lines; /* lines scanned (all of them, or up to the hit) */
	struct pm_entry e;   /* the hit; lineno counted from the chunk */
	bool found, bad;     /* a hit / a malformed line (which stopped it) */
	int done;            /* atomic: the fields above are final */
};

/* Shared by this thread and the helper; the last one out frees it. */
struct pm_par {
	int refs;  /* atomic */
	int next;  /* atomic: the next chunk to take */
	int limit; /* atomic: chunks after this one are not needed */
	size_t n;
	struct pm_passdb db; /* a copy; the data stays the caller's */
	struct pm_scan proto;
	struct pm_chunk c[PM_PAR_CHUNKS];
};

static void pm_par_unref(struct pm_par *p)
{
	if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(p);
	}
}

/* Takes chunks in file order until none is left.  A hit or a malformed
 * line in chunk i makes the chunks after i unneeded: they are skipped, or
 * stopped at their next piece. */
static void pm_par_work(struct pm_par *p)
{
	int i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_ACQ_REL)) <
	       (int)p->n) {
		struct pm_chunk *c = &p->c[i];
		struct pm_passdb view = p->db;
		struct pm_scan s = p->proto;

		if (__atomic_load_n(&p->limit, __ATOMIC_RELAXED) >= i) {
			view.data += c->a;
			view.size = c->b - c->a;
			s.db = &view;
			s.e = &c->e;
			s.lineno = 0;
			s.limit = &p->limit;
			s.index = i;
			pm_scan_all(&s);
			c->lines = s.lineno;
			c->bad = s.bad;
			c->found = s.stop && !s.bad;
			if (c->found || c->bad) {
				int l = __atomic_load_n(&p->limit,
							__ATOMIC_RELAXED);

				while (i < l &&
				       !__atomic_compare_exchange_n(
					       &p->limit, &l, i, false,
					       __ATOMIC_RELAXED,
					       __ATOMIC_RELAXED)) {
				}
			}
		}
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
}

static void *pm_par_main(void *arg)
{
	pm_par_work(arg);
	pm_par_unref(arg);
	return NULL;
}

/*
 * Puts the helper on another CPU than ours.  Left to itself the scheduler
 * starts a new thread on the CPU of the thread that made it, where it
 * preempts that thread and the two take turns for a millisecond or more
 * before one is moved.
 */
static void pm_par_other_cpu(pthread_attr_t *attr)
{
	cpu_set_t set;
	int me = sched_getcpu();

	if (me >= 0 && me < CPU_SETSIZE &&
	    sched_getaffinity(0, sizeof(set), &set) == 0 &&
	    CPU_ISSET(me, &set) && CPU_COUNT(&set) > 1) {
		CPU_CLR(me, &set);
		pthread_attr_setaffinity_np(attr, sizeof(set), &set);
	}
}

/*
 * find() over a big file: the file is cut into chunks of whole lines, which
 * this thread and a helper take in order.  This thread starts at once and
 * never waits for the helper to start (on a VM, waking an idle CPU can take
 * milliseconds; a helper that starts late finds nothing left and exits); it
 * waits only for a chunk the helper is scanning.  Chunks log nothing: the
 * answer is the first chunk, in file order, with a hit (its line numbers
 * offset by the lines before it) or with a malformed line, from which the
 * file is scanned again here, logging as a single scan does.  Returns false
 * when it cannot run (the caller then scans alone).
 */
static bool pm_find_par(struct pm_scan *s)
{
	const struct pm_passdb *db = s->db;
	struct pm_par *p = calloc(1, sizeof(*p));
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	size_t a = 0;

	if (p == NULL) {
		return false;
	}
	for (size_t i = 0; i < PM_PAR_CHUNKS && a < db->size; i++) {
		size_t want = db->size / PM_PAR_CHUNKS * (i + 1);
		const char *nl;

		want = want > a ? want : a; /* after a line longer than a chunk */
		nl = i + 1 == PM_PAR_CHUNKS ? NULL :
		     memchr(db->data + want, '\n', db->size - want);
		size_t b = nl != NULL ? (size_t)(nl - db->data) + 1 : db->size;

		p->c[p->n].a = a;
		p->c[p->n].b = b;
		p->n++;
		a = b;
	}
	p->refs = 1;
	p->limit = (int)p->n;
	p->db = *db;
	p->proto = *s;
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setstacksize(&attr, 256 * 1024);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pm_par_other_cpu(&attr);
		p->refs = 2;
		/* The helper must never run the application's handlers. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&t, &attr, pm_par_main, p) != 0) {
			p->refs = 1;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	pm_par_work(p);
	/* Every chunk is taken; wait for the helper to leave the data. */
	for (size_t i = 0, spins = 0; i < p->n; i++) {
		while (!__atomic_load_n(&p->c[i].done, __ATOMIC_ACQUIRE)) {
			/* a chunk takes well under a millisecond; a helper
			 * that lost its CPU is waited for without spinning */
			if (++spins < 1000) {
				sched_yield();
			} else {
				nanosleep(&(struct timespec){ 0, 50000 }, NULL);
			}
		}
	}
	for (size_t i = 0; i < p->n && !s->stop; i++) {
		const struct pm_chunk *c = &p->c[i];

		if (c->bad) {
			struct pm_passdb rest = *db;

			rest.data += c->a;
			rest.size -= c->a;
			s->db = &rest;
			pm_scan_all(s);
			s->db = db;
			break;
		}
		if (c->found) {
			*s->e = c->e;
			s->e->lineno += s->lineno;
			s->stop = true;
			break;
		}
		s->lineno += c->lines;
	}
	pm_par_unref(p);
	return true;
}

bool pm_passdb_find(pam_handle_t *pamh, const struct pm_passdb *db,
		    const char *user, struct pm_entry *e)
{
	const size_t ulen = strlen(user);
	struct pm_scan s = { db, pm_kernels(), 0, pamh, NULL, 0, e, NULL,
			     false, false, NULL, 0 };

	/* An empty name, or one with ':' or '\n', can match no line, nor can
	 * one too long for a valid line; still scan, so that bad lines are
	 * reported the same way. */
	if (pm_user_searchable(user, ulen)) {
		s.user = user;
		s.ulen = ulen;
	}
	if (db->size < PM_PAR_MIN || !pm_find_par(&s)) {
		pm_scan_all(&s);
	}
	return s.stop;
}

bool pm_passdb_walk(const struct pm_passdb *db, const struct pm_walker *w)
{
	struct pm_scan s = { db, pm_kernels(), 0, NULL, NULL, 0, NULL, w,
			     false, false, NULL, 0 };

	pm_scan_all(&s);
	return !s.stop;
}

/*
 * Opens PATH and takes an exclusive flock on it, making sure the locked
 * inode is still the one PATH names.  Fills *FD and *ST.
 */
static int pm_lock_current(pam_handle_t *pamh, const char *path, int *fd,
			   struct stat *st)
{
	char ebuf[128];

	for (long tries = 0; tries < PM_LOCK_RETRIES; tries++) {
		struct stat now;
		int lfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

		if (lfd < 0) {
			return pm_open_error(pamh, path, "open", errno);
		}
		while (flock(lfd, LOCK_EX) != 0) {
			if (errno != EINTR) {
				pam_syslog(pamh, LOG_ERR,
					   "%s: cannot lock passdb: %s", path,
					   pm_strerror(errno, ebuf,
						       sizeof(ebuf)));
				close(lfd);
				return PAM_AUTHTOK_LOCK_BUSY;
			}
		}
		if (fstat(lfd, st) != 0) {
			int rv = pm_open_error(pamh, path, "stat", errno);

			close(lfd);
			return rv;
		}
		if (stat(path, &now) == 0 && now.st_dev == st->st_dev &&
		    now.st_ino == st->st_ino) {
			*fd = lfd;
			return PAM_SUCCESS;
		}
		/* Replaced while we waited: lock the new file instead. */
		close(lfd);
	}
	pam_syslog(pamh, LOG_ERR, "%s: passdb keeps changing, giving up", path);
	return PAM_AUTHTOK_LOCK_BUSY;
}

static int pm_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Checks that NEWPW fits in USER's passdb line E; logs why not. */
static bool pm_storable(pam_handle_t *pamh, const char *path,
			const struct pm_entry *e, size_t ulen,
			const char *newpw)
{
	size_t plen = strlen(newpw);

	if (strpbrk(newpw, ":\n\r") != NULL) {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password contains ':', CR or LF, "
			   "which the passdb cannot store",
			   path, e->lineno);
		return false;
	}
	if (plen > PM_LINE_MAX || ulen + plen + e->service_len + 2 >
					  PM_LINE_MAX) {
		pam_syslog(pamh, LOG_ERR,
			   "%s:%lu: new password would make the line longer "
			   "than " PM_STR(PM_LINE_MAX) " bytes",
			   path, e->lineno);
		return false;
	}
	return true;
}

/* Writes DB with line E's password replaced by NEWPW to the open TFD. */
static int pm_write_changed(int tfd, const struct pm_passdb *db,
			    const struct pm_entry *e, const char *newpw)
{
	const char *after = e->pass + e->pass_len; /* ":service..." */
	const char *end = db->data + db->size;

	if (pm_write_all(tfd, db->data, (size_t)(e->pass - db->data)) != 0 ||
	    pm_write_all(tfd, newpw, strlen(newpw)) != 0 ||
	    pm_write_all(tfd, after, (size_t)(end - after)) != 0) {
		return -1;
	}
	return 0;
}

/* The directory part of PATH (malloc'd), or NULL. */
static char *pm_dir_of(const char *path)
{
	char *copy = strdup(path);
	char *slash = copy ? strrchr(copy, '/') : NULL;

	if (slash == NULL) {
		free(copy);
		return NULL;
	}
	if (slash == copy) {
		slash[1] = '\0';
	} else {
		slash[0] = '\0';
	}
	return copy;
}

/* Best effort: makes the rename durable. */
static void pm_sync_dir(const char *path)
{
	char *dir = pm_dir_of(path);
	int dfd;

	if (dir == NULL) {
		return;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	free(dir);
}

/*
 * Opens the file the new content of REAL goes to, in its directory.  Where
 * the file system has them it is an unnamed O_TMPFILE, so that a writer
 * killed before it links the file leaves nothing behind; *TMP then gets the
 * fixed name it will be linked as just before the rename (REAL.pam_matrix-
 * new).  Elsewhere a mkstemp file REAL.XXXXXX (*TMP its name).  Returns the
 * descriptor, or -1 with errno set (*TMP NULL).
 */
static int pm_new_file(const char *real, char **tmp, bool *unnamed)
{
	char *dir = pm_dir_of(real);
	int tfd = -1;

	*tmp = NULL;
	*unnamed = false;
#ifdef O_TMPFILE
	if (dir != NULL) {
		tfd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	}
	if (tfd >= 0) {
		if (asprintf(tmp, "%s.pam_matrix-new", real) < 0) {
			*tmp = NULL;
			close(tfd);
			free(dir);
			errno = ENOMEM;
			return -1;
		}
		*unnamed = true;
		free(dir);
		return tfd;
	}
#endif
	free(dir);
	if (asprintf(tmp, "%s.XXXXXX", real) < 0) {
		*tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	tfd = mkostemp(*tmp, O_CLOEXEC);
	if (tfd < 0) {
		int e = errno;

		free(*tmp);
		*tmp = NULL;
		errno = e;
	}
	return tfd;
}

/* Gives the unnamed file TFD the name TMP.  A file of that name can only
 * be what a writer killed between this step and its rename left: we hold
 * the lock every writer of this passdb takes first, so it goes. */
static int pm_link_new(int tfd, const char *tmp)
{
	char proc[64];

	(void)unlink(tmp);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tfd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
		return 0;
	}
	/* No /proc: this needs CAP_DAC_READ_SEARCH on older kernels. */
	return linkat(tfd, "", AT_FDCWD, tmp, AT_EMPTY_PATH);
}

int pm_passdb_set_password(pam_handle_t *pamh, const char *path,
			   const char *user, const char *newpw)
{
	struct pm_passdb db = PM_PASSDB_INIT;
	struct pm_entry e;
	struct stat st;
	char *real = NULL;
	char *tmp = NULL;
	int fd = -1;
	int tfd = -1;
	bool unnamed = false; /* tfd is an O_TMPFILE */
	bool named = false;   /* tmp names the new file */
	bool renamed = false;
	char ebuf[128];
	const char *step = NULL;
	int rv;

	/* Rename onto the target, not onto a symlink that names it. */
	real = realpath(path, NULL);
	if (real == NULL) {
		return pm_open_error(pamh, path, "resolve", errno);
	}
	rv = pm_lock_current(pamh, real, &fd, &st);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		pam_syslog(pamh, LOG_ERR,
			   "%s: passdb is not a regular file, cannot rewrite",
			   path);
		rv = PAM_AUTHTOK_ERR;
		goto out;
	}
	/* Read under the lock: this is the content we replace. */
	rv = pm_passdb_load(pamh, path, fd, &db);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	if (!pm_passdb_find(pamh, &db, user, &e)) {
		pam_syslog(pamh, LOG_ERR, "%s: no line for user %s", path,
			   user);
		rv = PAM_USER_UNKNOWN;
		goto out;
	}
	if (!pm_storable(pamh, path, &e, strlen(user), newpw)) {
		rv = PAM_AUTHTOK_ERR;
		goto out;
	}

	rv = PAM_AUTHTOK_ERR;
	step = "create a temporary file for";
	tfd = pm_new_file(real, &tmp, &unnamed);
	if (tfd < 0) {
		rv = errno == ENOMEM ? PAM_BUF_ERR : PAM_AUTHTOK_ERR;
		goto out;
	}
	named = !unnamed;
	step = "set the mode of the new";
	if (fchmod(tfd, st.st_mode & 07777) != 0) {
		goto out;
	}
	/* Keep the owner when we are allowed to (root rewriting a user's
	 * file); an unprivileged writer owns the file it rewrites anyway. */
	if (geteuid() == 0) {
		(void)fchown(tfd, st.st_uid, st.st_gid);
	}
	step = "write the new";
	if (pm_write_changed(tfd, &db, &e, newpw) != 0 || fsync(tfd) != 0) {
		goto out;
	}
	step = "name the new";
	if (unnamed) {
		if (pm_link_new(tfd, tmp) != 0) {
			goto out;
		}
		named = true;
	}
	step = "close the new";
	if (close(tfd) != 0) {
		tfd = -1;
		goto out;
	}
	tfd = -1;
	step = "rename the new file onto the";
	if (rename(tmp, real) != 0) {
		goto out;
	}
	renamed = true;
	step = NULL;
	pm_sync_dir(real);
	rv = PAM_SUCCESS;
out:
	if (step != NULL) {
		pam_syslog(pamh, LOG_ERR, "%s: cannot %s passdb: %s", path,
			   step, pm_strerror(errno, ebuf, sizeof(ebuf)));
	}
	if (tfd >= 0) {
		close(tfd);
	}
	if (named && !renamed) {
		unlink(tmp);
	}
	free(tmp);
	pm_passdb_close(&db);
	if (fd >= 0) {
		close(fd); /* releases the lock, after the rename */
	}
	free(real);
	return rv;
}
