/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hot loops of the passdb scanner, written once and compiled once per
 * instruction set: passdb.c includes this file several times, each time
 * with PM_ISA (a name suffix), PM_ATTR (function attributes, e.g. a GCC
 * target), PM_EQ(p, c) (a 64-bit mask of the 64 bytes at p equal to c),
 * PM_POPCNT(x) and PM_PXOR(x) (prefix xor: bit i = xor of bits 0..i)
 * defined, and optionally PM_ADDC (with _addcarry_u64's signature; else
 * plain C computes the carry), all undefined again at the end, and picks
 * one instantiation at run time (pm_kernels() in passdb.c).  No state, no
 * allocation; nothing outside D[0..SIZE) is read.
 *
 *   pm_piece_ISA   one pass over a run of complete lines that both proves
 *                  them valid in bulk (or says it cannot, and the caller
 *                  then parses them one by one) and finds the first line
 *                  that starts with "USER:".
 *   pm_search_ISA  only the search, for runs too long for pm_piece and
 *                  user names too long for its look-ahead.
 */

#define PM_CAT2(a, b) a##_##b
#define PM_CAT(a, b) PM_CAT2(a, b)
#define PM_FN(name) PM_CAT(name, PM_ISA)

/* The carry out of X + Y + (0 or 1) = S, from the top bits. */
#ifndef PM_CARRY
#define PM_CARRY(x, y, s) ((((x) & (y)) | (((x) | (y)) & ~(s))) >> 63)
#endif

struct PM_FN(pm_kstate) {
	uint64_t bad;
	uint64_t par;   /* all ones when the colon parity is odd */
	uint64_t carry; /* of the ~CO + ST addition, 0 or 1 */
	uint64_t start; /* line start carried into the next block */
	uint64_t nnl;
};

/*
 * One block at P, bits outside RNG ignored.  With SEARCH, P[K - 2 .. K + 63]
 * are read too (K = the user name's length, 1..63), and the mask of the
 * line starts followed by the last two bytes of the name (C3 C1, or C1
 * alone when K == 1) and ':' at K is returned.
 */
static inline __attribute__((always_inline)) PM_ATTR uint64_t
PM_FN(pm_kblock)(struct PM_FN(pm_kstate) *z, const char *p, uint64_t rng,
		 bool search, unsigned k, char c1, char c3)
{
	uint64_t nl = PM_EQ(p, '\n');
	uint64_t co = PM_EQ(p, ':');
	uint64_t odd = PM_EQ(p, '\0') | PM_EQ(p, '\r');
	uint64_t st = (nl << 1) | z->start;
	uint64_t px, s2;

	z->start = nl >> 63;
	nl &= rng;
	co &= rng;
	st &= rng;
	px = PM_PXOR(co) ^ z->par;
	z->par = 0 - (px >> 63);
#ifdef PM_ADDC
	{
		unsigned long long sum;

		z->carry = PM_ADDC((unsigned char)z->carry, ~co, st, &sum);
		s2 = sum;
	}
#else
	s2 = ~co + st + z->carry;
	z->carry = PM_CARRY(~co, st, s2);
#endif
	/* At a colon the parity after it must equal "a carry arrived"; at a
	 * newline it must be even with no carry passing.  The first line
	 * that breaks the rules breaks one of these (see pm_piece). */
	z->bad |= (odd & rng) | (st & co) | ((co | nl) & (px ^ s2 ^ nl));
	z->nnl += PM_POPCNT(nl);
	if (search) {
		uint64_t cand = st & PM_EQ(p + k, ':') & PM_EQ(p + k - 1, c1);

		if (k >= 2) {
			cand &= PM_EQ(p + k - 2, c3);
		}
		return cand;
	}
	return 0;
}

/* The first line start in CAND (bits of the block at offset BLK) that
 * really begins with USER, as an offset, or SIZE_MAX. */
static __attribute__((noinline, cold)) size_t
PM_FN(pm_kverify)(const char *d, size_t blk, uint64_t cand,
		  const struct pm_needle *n)
{
	for (; cand != 0; cand &= cand - 1) {
		size_t s = blk + (size_t)__builtin_ctzll(cand);

		if (memcmp(d + s, n->user, n->ulen) == 0) {
			return s;
		}
	}
	return SIZE_MAX;
}

/* Copies the bytes of [DLO, DHI) that fall in [Q, Q + 128) to TMP, padded
 * with a byte that is no event (for blocks at the ends of the data). */
static __attribute__((noinline, cold)) void
PM_FN(pm_kcopy)(char *tmp, uintptr_t q, uintptr_t dlo, uintptr_t dhi)
{
	uintptr_t from = q < dlo ? dlo : q;
	uintptr_t to = dhi - q < 128 ? dhi : q + 128;

	memset(tmp, 'x', 128);
	if (to > from) {
		memcpy(tmp + (from - q), (const char *)from, to - from);
	}
}

static inline __attribute__((always_inline)) PM_ATTR size_t
PM_FN(pm_kpiece)(const char *d, size_t size, size_t a, size_t b,
		 const struct pm_needle *n, bool *ok, unsigned long *nlines,
		 bool search)
{
	const uintptr_t dlo = (uintptr_t)d;
	const uintptr_t lo = dlo + a;
	const uintptr_t hi = dlo + b;
	const uintptr_t dhi = dlo + size;
	/* Blocks ending at or before this are read in place with their
	 * look-ahead: inside [lo, hi), and 64 more bytes inside D. */
	const uintptr_t fast_end = size < 64 ? dlo
				   : hi < dhi - 64 ? hi
						   : dhi - 64;
	const unsigned k = search ? (unsigned)n->ulen : 0;
	const char c1 = search ? n->c1 : 0;
	const char c3 = search ? n->c3 : 0;
	struct PM_FN(pm_kstate) z = { 0, 0, 0, 0, 0 };
	uintptr_t q = lo & ~(uintptr_t)63;
	char tmp[128];
	bool used_tmp = false;
	size_t found = SIZE_MAX;
	uint64_t cand;

	z.start = 1ULL << (lo - q);
	while (q < hi) {
		if (q >= lo && q + 64 <= fast_end) {
			/* The hot loop.  Prefetching a page ahead hides the
			 * miss (and page walk) at each page boundary, which
			 * the hardware prefetchers do not cross: a fifth
			 * faster in a fresh process. */
			do {
				__builtin_prefetch((const char *)q + 4096);
				cand = PM_FN(pm_kblock)(&z, (const char *)q,
							~0ULL, search, k, c1,
							c3);
				if (search && __builtin_expect(cand != 0, 0)) {
					goto verify;
				}
				q += 64;
			} while (q + 64 <= fast_end);
			continue;
		} else {
			/* An edge: a part of [lo, hi), maybe copied. */
			const char *p = (const char *)q;
			uint64_t rng = ~0ULL;

			if (q < lo) {
				rng &= ~0ULL << (lo - q);
			}
			if (hi - q < 64) {
				rng &= ~0ULL >> (64 - (hi - q));
			}
			if (q < dlo || dhi - q < 128) {
				PM_FN(pm_kcopy)(tmp, q, dlo, dhi);
				p = tmp;
				used_tmp = true;
			}
			cand = PM_FN(pm_kblock)(&z, p, rng, search, k, c1, c3);
			if (!search || cand == 0) {
				q += 64;
				continue;
			}
		}
verify:
		found = PM_FN(pm_kverify)(d, (size_t)(q - dlo), cand, n);
		if (found != SIZE_MAX) {
			break;
		}
		q += 64;
	}
	if (used_tmp) {
		explicit_bzero(tmp, sizeof(tmp)); /* may hold a password */
	}
	*nlines = (unsigned long)z.nnl;
	*ok = z.bad == 0 && z.carry == 0;
	return found;
}

/*
 * Scans the complete lines of D[A..B) (A a line start, D[B-1] == '\n',
 * B - A <= PM_LINE_MAX + 1 so that no line can be too long) in 64-byte
 * blocks aligned in memory (blocks that stick out of D[0..SIZE) are copied
 * first).  Per block, with masks NL (newlines), CO (colons) and ST (line
 * starts):
 *   - proof: adding ST to ~CO carries each line start to the first colon
 *     after it (S2 has a 1 there and 0s along the way).  A valid line has
 *     exactly two colons: the first is reached by the carry and makes the
 *     colon parity (prefix xor of CO) odd, the second is not reached and
 *     makes it even again, and its newline is reached by no carry with an
 *     even parity.  Take the first line that is not valid (the parity and
 *     the carry are clean at its start): with no colon the carry runs
 *     over its newline; with one or three the parity is odd at the
 *     newline; with four or more the third colon makes the parity odd
 *     where no carry arrived.  NUL and CR anywhere and ':' at a line start
 *     (empty user name) are flagged directly; blank lines have no colon.
 *     So "no flag" means every line is valid (or a comment that looks
 *     like an entry).
 *   - search (when N->on): line starts followed, ULEN bytes on, by ':'
 *     and before it the last two bytes of USER (compared 64 positions at
 *     a time on look-ahead loads); the survivors are compared with
 *     memcmp.  Exact whatever the other lines look like, so the search
 *     holds even where the proof fails.
 * Returns the offset of the first line that starts with "USER:" (the
 * proof then says nothing), or SIZE_MAX with *OK telling whether every
 * line is valid and *NLINES their number.
 */
PM_ATTR static size_t PM_FN(pm_piece)(const char *d, size_t size, size_t a,
				      size_t b, const struct pm_needle *n,
				      bool *ok, unsigned long *nlines)
{
	if (n->on) {
		return PM_FN(pm_kpiece)(d, size, a, b, n, ok, nlines, true);
	}
	return PM_FN(pm_kpiece)(d, size, a, b, n, ok, nlines, false);
}

/*
 * The smallest I in [FROM, TO) with D[I] == '\n' and USER followed by ':'
 * right after it, or SIZE_MAX.  ULEN >= 1; D has SIZE bytes.  Four bytes
 * of each position are compared at once (the '\n', the last two bytes of
 * the name and the ':'); the survivors are checked with memcmp.
 */
PM_ATTR static size_t PM_FN(pm_search)(const char *d, size_t size,
				       size_t from, size_t to,
				       const char *user, size_t ulen)
{
	const size_t o3 = ulen >= 2 ? ulen - 1 : 0;
	const char c1 = user[ulen - 1];
	const char c3 = ulen >= 2 ? user[ulen - 2] : '\n';
	size_t i = from;

	/* The widest read is at i + 63 + ulen + 1. */
	while (i < to && size >= 65 && i + ulen < size - 65) {
		uint64_t m = PM_EQ(d + i, '\n') & PM_EQ(d + i + ulen + 1, ':') &
			     PM_EQ(d + i + ulen, c1) & PM_EQ(d + i + o3, c3);

		if (to - i < 64) {
			m &= (1ULL << (to - i)) - 1;
		}
		for (; m != 0; m &= m - 1) {
			size_t j = i + (size_t)__builtin_ctzll(m);

			if (memcmp(d + j + 1, user, ulen) == 0) {
				return j;
			}
		}
		i += 64;
	}
	for (; i < to; i++) {
		if (d[i] == '\n' && ulen + 1 < size - i &&
		    d[i + ulen + 1] == ':' &&
		    memcmp(d + i + 1, user, ulen) == 0) {
			return i;
		}
	}
	return SIZE_MAX;
}

#undef PM_FN
#undef PM_CAT
#undef PM_CAT2
#undef PM_ISA
#undef PM_ATTR
#undef PM_EQ
#undef PM_POPCNT
#undef PM_PXOR
#undef PM_ADDC
