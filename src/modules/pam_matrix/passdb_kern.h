/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hot loops of the passdb scanner, written once and compiled once per
 * instruction set: passdb.c includes this file several times, each time
 * with PM_ISA (a name suffix), PM_ATTR (function attributes, e.g. a GCC
 * target), PM_EQ(p, c) (a 64-bit mask of the 64 bytes at p equal to c),
 * PM_POPCNT(x), PM_PXOR(x) (prefix xor: bit i = xor of bits 0..i) and
 * PM_ADC(cin, x, y, &sum) (x + y + cin, returns the carry out) defined
 * (and undefined again at the end), and picks one instantiation at run time (pm_kernels() in
 * passdb.c).  No state, no allocation; nothing outside D[0..SIZE) is read.
 *
 *   pm_piece_ISA   one pass over a run of complete lines that both proves
 *                  them valid in bulk (or says it cannot, and the caller
 *                  then parses them one by one) and finds the first line
 *                  that starts with "USER:".
 *   pm_search_ISA  only the search, for user names too long for the shift
 *                  tricks of pm_piece.
 */

#define PM_CAT2(a, b) a##_##b
#define PM_CAT(a, b) PM_CAT2(a, b)
#define PM_FN(name) PM_CAT(name, PM_ISA)

struct PM_FN(pm_kstate) {
	uint64_t bad;
	uint64_t par;   /* all ones when the colon parity is odd */
	uint64_t carry; /* of the ~CO + ST addition */
	uint64_t start; /* line start carried into the next block */
	uint64_t pst, pc1, pc3; /* previous block's masks (search) */
	uint64_t nnl;
};

/* One block at P (64 readable bytes), bits outside RNG ignored.  Returns
 * the candidate mask (search) or 0. */
static inline __attribute__((always_inline)) PM_ATTR uint64_t
PM_FN(pm_kblock)(struct PM_FN(pm_kstate) *z, const char *p, uint64_t rng,
		 bool search, unsigned k, char c1v, char c3v)
{
	uint64_t nl = PM_EQ(p, '\n');
	uint64_t co = PM_EQ(p, ':');
	uint64_t odd = PM_EQ(p, '\0') | PM_EQ(p, '\r');
	uint64_t st = (nl << 1) | z->start;
	uint64_t px, x, s1, s2, cand = 0;

	z->start = nl >> 63;
	nl &= rng;
	co &= rng;
	st &= rng;
	px = PM_PXOR(co) ^ z->par;
	z->par = 0 - (px >> 63);
	x = ~co;
	s1 = x + st;
	s2 = s1 + z->carry;
	z->carry = (uint64_t)(s1 < x) | (uint64_t)(s2 < s1);
	z->bad |= (odd & rng) | (st & co) | (co & (px ^ s2)) |
		  (nl & (px | ~s2));
	z->nnl += PM_POPCNT(nl);
	if (search) {
		/* Line start at f - k, last two bytes of the name at f - 1
		 * and f - 2 (f - 2 >= the start when k >= 2). */
		uint64_t m1 = PM_EQ(p, c1v);
		uint64_t m3 = PM_EQ(p, c3v);

		cand = s2 & co & ((st << k) | (z->pst >> (64 - k))) &
		       ((m1 << 1) | (z->pc1 >> 63));
		if (k >= 2) {
			cand &= (m3 << 2) | (z->pc3 >> 62);
		}
		z->pst = st;
		z->pc1 = m1;
		z->pc3 = m3;
	}
	return cand;
}

/* The first candidate of CAND (bits of the block at offset BLK) that is
 * really "USER:" at a line start, as an offset, or SIZE_MAX. */
static __attribute__((noinline, cold)) size_t
PM_FN(pm_kverify)(const char *d, size_t blk, uint64_t cand,
		  const struct pm_needle *n)
{
	for (; cand != 0; cand &= cand - 1) {
		size_t f = blk + (size_t)__builtin_ctzll(cand);

		if (memcmp(d + f - n->ulen, n->user, n->ulen) == 0) {
			return f - n->ulen;
		}
	}
	return SIZE_MAX;
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
	const unsigned k = search ? (unsigned)n->ulen : 1; /* 1..63 */
	const char c1v = search ? n->c1 : 0;
	const char c3v = search ? n->c3 : 0;
	struct PM_FN(pm_kstate) z = { 0, 0, 0, 0, 0, 0, 0, 0 };
	uintptr_t q = lo & ~(uintptr_t)63;
	size_t found = SIZE_MAX;

	z.start = 1ULL << (lo - q);
	while (q < hi) {
		uint64_t rng = ~0ULL;
		uint64_t cand;

		if (q < lo) {
			rng &= ~0ULL << (lo - q);
		}
		if (q + 64 > hi) {
			rng &= ~0ULL >> (q + 64 - hi);
		}
		if (q < dlo || q + 64 > dhi) {
			/* A block sticking out of D: only D's bytes, padded
			 * with a byte that is no event. */
			char tmp[64];
			uintptr_t from = q < dlo ? dlo : q;
			uintptr_t to = q + 64 > dhi ? dhi : q + 64;

			memset(tmp, 'x', sizeof(tmp));
			memcpy(tmp + (from - q), (const char *)from, to - from);
			cand = PM_FN(pm_kblock)(&z, tmp, rng, search, k, c1v,
						c3v);
			explicit_bzero(tmp, sizeof(tmp)); /* may hold a password */
		} else {
			/* The hot loop: whole blocks inside [lo, hi). */
			const uintptr_t qend = (hi & ~(uintptr_t)63) <
							       (dhi & ~(uintptr_t)63)
						       ? (hi & ~(uintptr_t)63)
						       : (dhi & ~(uintptr_t)63);

			if (q >= lo && q + 64 <= qend) {
				do {
					cand = PM_FN(pm_kblock)(
						&z, (const char *)q, ~0ULL,
						search, k, c1v, c3v);
					if (search && cand != 0) {
						break;
					}
					q += 64;
				} while (q < qend);
				if (!search || cand == 0) {
					continue;
				}
			} else {
				cand = PM_FN(pm_kblock)(&z, (const char *)q,
							rng, search, k, c1v,
							c3v);
			}
		}
		if (search && cand != 0) {
			found = PM_FN(pm_kverify)(d, (size_t)(q - dlo), cand, n);
			if (found != SIZE_MAX) {
				return found;
			}
		}
		q += 64;
	}
	*nlines = (unsigned long)z.nnl;
	*ok = z.bad == 0 && z.carry == 0;
	return SIZE_MAX;
}

/*
 * Scans the complete lines of D[A..B) (A a line start, D[B-1] == '\n',
 * B - A <= PM_LINE_MAX + 1 so that no line can be too long) in 64-byte
 * blocks aligned in memory (blocks that stick out of D[0..SIZE) are copied
 * first).  Per block, with masks NL (newlines), CO (colons) and ST (line
 * starts):
 *   - proof: adding ST to ~CO carries each line start to the first colon
 *     after it (S2 has a 1 there and 0s along the way); a valid line has
 *     exactly two colons, so its newline is reached by no carry and has an
 *     even colon parity (prefix xor of CO), and its colons are, in order,
 *     the one a carry reached (parity odd after it) and one it did not
 *     (parity even again).  That is every valid line and only them:
 *     no colon lets the carry run over the newline, one or three leave
 *     the parity odd there, and two more (four, six...) put an odd-parity
 *     colon where no carry arrives.  NUL, CR and ':' at a line start
 *     (empty user name) are flagged directly.
 *   - search (when N->on): line starts followed, ULEN bytes on, by ':'
 *     and before it the last two bytes of USER (compared 64 positions at
 *     a time on look-ahead loads); the survivors are compared with
 *     memcmp.  Exact whatever the other lines look like, so the search
 *     holds even where the proof fails.
 * Returns the offset of the first line that starts with "USER:" (the
 * proof then says nothing), or SIZE_MAX with *OK telling whether every
 * line is valid (or a comment that looks like an entry) and *NLINES their
 * number.
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
#undef PM_ADC
