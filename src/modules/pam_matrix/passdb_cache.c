/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's per-process passdb cache (see passdb_cache.h for what it
 * keeps, when it trusts it and what it costs).  Everything here runs under
 * one mutex; what a lookup returns is copied before the mutex is released.
 * The slots own their path strings, their file data (pm_passdb: a mapping
 * or a malloc'd copy) and their index.
 */
#define _GNU_SOURCE
#include "passdb_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "passdb.h"

/* A malformed line, for logging it again. */
struct pm_bad {
	size_t off;
	unsigned long lineno;
	unsigned why;
};

/*
 * User name -> offsets of its valid lines: an array of
 * (tag << 40) | (offset + 1), the tag being the top 24 bits of the name's
 * hash, in buckets by the top PM_DIR_BITS bits of the tag (DIR[t] is where
 * bucket t starts) and in file order within a bucket, so the first entry
 * of a bucket whose tag and name match is the user's line.  Built by
 * appending in file order (the walk is sequential) and a stable radix sort
 * on the bucket bits, which touch memory in order: a hash table filled at
 * random costs a TLB and cache miss per line, about 200 ns each in a
 * virtual machine.  Buckets hold a handful of entries (a few for each
 * 65,536 lines).  Plus the malformed lines in file order.
 */
struct pm_index {
	uint64_t *ent;
	size_t n;
	size_t cap;
	uint32_t *dir;     /* (1 << PM_DIR_BITS) + 1 entries */
	struct pm_bad *bad;
	size_t nbad;
	size_t badcap;
	size_t bytes;      /* counted against PM_INDEX_BUDGET */
	const char *data;  /* the file the offsets point into */
	size_t size;
};

#define PM_OFF_BITS 40
#define PM_OFF_MASK ((1ULL << PM_OFF_BITS) - 1)
#define PM_TAG_BITS (64 - PM_OFF_BITS)
#define PM_DIR_BITS 16

struct pm_slot {
	char *path;           /* NULL: the slot is free */
	struct stat id;       /* fstat of what db holds */
	uid_t euid;
	gid_t egid;
	bool trusted;         /* old enough to be recognised by stat() */
	struct pm_passdb db;  /* db.path is path */
	struct pm_index *ix;  /* NULL until built */
	bool no_index;        /* over the budget: scan db instead */
	unsigned long used_at;
};

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pm_once = PTHREAD_ONCE_INIT;
static struct pm_slot pm_slots[PM_CACHE_SLOTS];
static unsigned long pm_clock;
static size_t pm_index_bytes;
static struct pm_cache_stats pm_stats;

/* fork() while another thread holds the mutex would leave the child's copy
 * locked for ever; take it around fork so both sides get it free.  The
 * module is never unloaded (-z nodelete), so these stay valid. */
static void pm_atfork_prepare(void)
{
	pthread_mutex_lock(&pm_lock);
}

static void pm_atfork_release(void)
{
	pthread_mutex_unlock(&pm_lock);
}

static void pm_init(void)
{
	(void)pthread_atfork(pm_atfork_prepare, pm_atfork_release,
			     pm_atfork_release);
}

/* ---- the index ---------------------------------------------------------- */

/* A hash of a user name: a multiply per 8 bytes, one mix at the end. */
static uint64_t pm_hash(const char *p, size_t n)
{
	const uint64_t k = 0x9e3779b97f4a7c15ULL;
	uint64_t h = n * k;

	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (n > 0) {
		uint64_t w = 0;

		memcpy(&w, p, n);
		h = (h ^ w) * k;
	}
	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return h;
}

static void pm_index_free(struct pm_index *ix)
{
	if (ix == NULL) {
		return;
	}
	free(ix->ent);
	free(ix->dir);
	free(ix->bad);
	free(ix);
}

/* Grows *ARR (of *CAP elements of SIZE bytes) to hold one more, within the
 * budget. */
static bool pm_index_room(struct pm_index *ix, void **arr, size_t *cap,
			  size_t n, size_t size)
{
	size_t ncap;
	void *na;

	if (n < *cap) {
		return true;
	}
	ncap = *cap ? *cap * 2 : 1024;
	if (pm_index_bytes + ix->bytes + (ncap - *cap) * size >
		    PM_INDEX_BUDGET ||
	    (na = realloc(*arr, ncap * size)) == NULL) {
		return false;
	}
	ix->bytes += (ncap - *cap) * size;
	*arr = na;
	*cap = ncap;
	return true;
}

static bool pm_index_entry(void *ctx, size_t off, size_t ulen,
			   unsigned long lineno)
{
	struct pm_index *ix = ctx;
	uint64_t tag = pm_hash(ix->data + off, ulen) >> PM_OFF_BITS;

	(void)lineno;
	if (!pm_index_room(ix, (void **)&ix->ent, &ix->cap, ix->n,
			   sizeof(*ix->ent))) {
		return false;
	}
	ix->ent[ix->n++] = tag << PM_OFF_BITS | (uint64_t)(off + 1);
	return true;
}

static bool pm_index_bad(void *ctx, size_t off, unsigned long lineno,
			 unsigned why)
{
	struct pm_index *ix = ctx;

	if (!pm_index_room(ix, (void **)&ix->bad, &ix->badcap, ix->nbad,
			   sizeof(*ix->bad))) {
		return false;
	}
	ix->bad[ix->nbad].off = off;
	ix->bad[ix->nbad].lineno = lineno;
	ix->bad[ix->nbad].why = why;
	ix->nbad++;
	return true;
}

/* Stable sort of the entries by bucket (least significant byte first; the
 * entries are in file order to begin with) and the directory. */
static bool pm_index_sort(struct pm_index *ix)
{
	uint64_t *tmp;
	uint64_t *from = ix->ent;
	uint64_t *to;

	if (pm_index_bytes + ix->bytes + ix->n * sizeof(uint64_t) +
		    (((size_t)1 << PM_DIR_BITS) + 1) * sizeof(uint32_t) >
	    PM_INDEX_BUDGET) {
		return false;
	}
	tmp = malloc((ix->n ? ix->n : 1) * sizeof(uint64_t));
	ix->dir = malloc((((size_t)1 << PM_DIR_BITS) + 1) * sizeof(uint32_t));
	if (tmp == NULL || ix->dir == NULL) {
		free(tmp);
		return false;
	}
	to = tmp;
	for (unsigned shift = 64 - PM_DIR_BITS; shift < 64; shift += 8) {
		size_t count[256] = { 0 };
		size_t pos = 0;
		uint64_t *t;

		for (size_t i = 0; i < ix->n; i++) {
			count[(from[i] >> shift) & 0xff]++;
		}
		for (unsigned b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = pos;
			pos += c;
		}
		for (size_t i = 0; i < ix->n; i++) {
			to[count[(from[i] >> shift) & 0xff]++] = from[i];
		}
		t = from;
		from = to;
		to = t;
	}
	/* PM_DIR_BITS / 8 passes, back and forth. */
	if (from != ix->ent) {
		free(ix->ent);
		ix->ent = from;
	} else {
		free(tmp);
	}
	/* Give back what the estimate of the number of lines overshot. */
	if (ix->n < ix->cap) {
		uint64_t *fit = realloc(ix->ent, (ix->n ? ix->n : 1) *
							 sizeof(uint64_t));

		if (fit != NULL) {
			ix->bytes -= (ix->cap - ix->n) * sizeof(uint64_t);
			ix->ent = fit;
			ix->cap = ix->n;
		}
	}
	ix->bytes += (((size_t)1 << PM_DIR_BITS) + 1) * sizeof(uint32_t);
	for (size_t t = 0, i = 0; t <= ((size_t)1 << PM_DIR_BITS); t++) {
		while (i < ix->n &&
		       (ix->ent[i] >> (64 - PM_DIR_BITS)) < (uint64_t)t) {
			i++;
		}
		ix->dir[t] = (uint32_t)i;
	}
	return true;
}

/* Offset of USER's line, or SIZE_MAX. */
static size_t pm_index_find(const struct pm_index *ix, const char *user,
			    size_t ulen)
{
	uint64_t tag = pm_hash(user, ulen) >> PM_OFF_BITS;
	size_t b = (size_t)(tag >> (PM_TAG_BITS - PM_DIR_BITS));

	for (size_t i = ix->dir[b]; i < ix->dir[b + 1]; i++) {
		size_t off = (size_t)(ix->ent[i] & PM_OFF_MASK) - 1;

		if ((ix->ent[i] >> PM_OFF_BITS) == tag &&
		    pm_line_starts_with_user(ix->data, ix->size, off, user,
					     ulen)) {
			return off;
		}
	}
	return SIZE_MAX;
}

/* Frees S's index and gives its bytes back to the budget. */
static void pm_slot_drop_index(struct pm_slot *s)
{
	pm_index_bytes -= s->ix->bytes;
	pm_index_free(s->ix);
	s->ix = NULL;
}

/* Drops the index of the least recently used slot other than KEEP;
 * false when there is none. */
static bool pm_drop_oldest_index(const struct pm_slot *keep)
{
	struct pm_slot *old = NULL;

	for (size_t i = 0; i < PM_CACHE_SLOTS; i++) {
		struct pm_slot *s = &pm_slots[i];

		if (s != keep && s->ix != NULL &&
		    (old == NULL || s->used_at < old->used_at)) {
			old = s;
		}
	}
	if (old == NULL) {
		return false;
	}
	pm_slot_drop_index(old);
	return true;
}

/* Builds S's index; on failure (over the budget, out of memory) marks S
 * as scanned at each lookup instead. */
static void pm_index_build(struct pm_slot *s)
{
	struct pm_index *ix = calloc(1, sizeof(*ix));
	struct pm_walker w = { pm_index_entry, pm_index_bad, ix };
	/* What a file of 16-byte lines needs (entries and the sort's copy):
	 * make room for it first. */
	size_t guess = (s->db.size / 16 + 1024) * sizeof(uint64_t) * 2;

	while (pm_index_bytes + guess > PM_INDEX_BUDGET &&
	       pm_drop_oldest_index(s)) {
	}
	if (ix == NULL) {
		s->no_index = true;
		return;
	}
	ix->data = s->db.data;
	ix->size = s->db.size;
	ix->cap = s->db.size / 16 + 1024;
	ix->ent = malloc(ix->cap * sizeof(*ix->ent));
	ix->bytes = ix->cap * sizeof(*ix->ent);
	if (ix->ent == NULL || pm_index_bytes + ix->bytes > PM_INDEX_BUDGET ||
	    !pm_passdb_walk(&s->db, &w) || !pm_index_sort(ix)) {
		pm_index_free(ix);
		s->no_index = true;
		return;
	}
	s->ix = ix;
	pm_index_bytes += ix->bytes;
	pm_stats.indexed++;
}

/* Replays the malformed lines before offset LIMIT. */
static void pm_index_replay(pam_handle_t *pamh, const struct pm_slot *s,
			    size_t limit)
{
	const struct pm_index *ix = s->ix;

	for (size_t i = 0; i < ix->nbad && ix->bad[i].off < limit; i++) {
		pm_passdb_log_bad(pamh, s->path, ix->bad[i].lineno,
				  ix->bad[i].why);
	}
}

/* ---- results -------------------------------------------------------------- */

void pm_found_free(struct pm_found *f)
{
	if (f->pass != NULL) {
		/* pass and service share one buffer */
		explicit_bzero(f->pass, f->pass_len + f->service_len + 2);
		free(f->pass);
	}
	f->found = false;
	f->pass = NULL;
	f->pass_len = 0;
	f->service = NULL;
	f->service_len = 0;
}

static int pm_found_set(struct pm_found *f, const struct pm_entry *e)
{
	char *buf = malloc(e->pass_len + e->service_len + 2);

	if (buf == NULL) {
		return PAM_BUF_ERR;
	}
	memcpy(buf, e->pass, e->pass_len);
	buf[e->pass_len] = '\0';
	memcpy(buf + e->pass_len + 1, e->service, e->service_len);
	buf[e->pass_len + 1 + e->service_len] = '\0';
	f->found = true;
	f->pass = buf;
	f->pass_len = e->pass_len;
	f->service = buf + e->pass_len + 1;
	f->service_len = e->service_len;
	return PAM_SUCCESS;
}

/* pm_passdb_find on DB into F. */
static int pm_find_into(pam_handle_t *pamh, const struct pm_passdb *db,
			const char *user, struct pm_found *f)
{
	struct pm_entry e;

	if (!pm_passdb_find(pamh, db, user, &e)) {
		return PAM_SUCCESS;
	}
	return pm_found_set(f, &e);
}

/* ---- slots ---------------------------------------------------------------- */

static void pm_slot_clear(struct pm_slot *s)
{
	if (s->ix != NULL) {
		pm_slot_drop_index(s);
	}
	pm_passdb_close(&s->db);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

static struct pm_slot *pm_slot_find(const char *path)
{
	for (size_t i = 0; i < PM_CACHE_SLOTS; i++) {
		if (pm_slots[i].path != NULL &&
		    strcmp(pm_slots[i].path, path) == 0) {
			return &pm_slots[i];
		}
	}
	return NULL;
}

/* A free slot, or the least recently used one, emptied. */
static struct pm_slot *pm_slot_take(void)
{
	struct pm_slot *old = &pm_slots[0];

	for (size_t i = 0; i < PM_CACHE_SLOTS; i++) {
		if (pm_slots[i].path == NULL) {
			return &pm_slots[i];
		}
		if (pm_slots[i].used_at < old->used_at) {
			old = &pm_slots[i];
		}
	}
	pm_slot_clear(old);
	return old;
}

static bool pm_same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool pm_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size && a->st_mode == b->st_mode &&
	       pm_same_time(&a->st_mtim, &b->st_mtim) &&
	       pm_same_time(&a->st_ctim, &b->st_ctim);
}

/* Whether a change after T0 must give the file another ctime: its ctime
 * is older than T0 by more than the time stamps' granularity could hide. */
static bool pm_old_enough(const struct stat *st, const struct timespec *t0)
{
	long margin = st->st_ctim.tv_nsec == 0 && st->st_mtim.tv_nsec == 0
			      ? PM_TRUST_COARSE_NS
			      : PM_TRUST_NS;
	struct timespec lim = st->st_ctim;

	lim.tv_sec += margin / 1000000000L;
	lim.tv_nsec += margin % 1000000000L;
	if (lim.tv_nsec >= 1000000000L) {
		lim.tv_sec++;
		lim.tv_nsec -= 1000000000L;
	}
	return lim.tv_sec < t0->tv_sec ||
	       (lim.tv_sec == t0->tv_sec && lim.tv_nsec < t0->tv_nsec);
}

/* A lookup from a slot whose file is unchanged. */
static int pm_slot_lookup(pam_handle_t *pamh, struct pm_slot *s,
			  const char *user, struct pm_found *f)
{
	size_t ulen = strlen(user);
	struct pm_entry e;
	size_t off;

	pm_stats.hits++;
	if (s->ix == NULL && !s->no_index && s->db.size >= PM_INDEX_MIN) {
		pm_index_build(s);
	}
	if (s->ix == NULL) {
		return pm_find_into(pamh, &s->db, user, f);
	}
	pm_stats.by_index++;
	if (!pm_user_searchable(user, ulen)) {
		pm_index_replay(pamh, s, SIZE_MAX);
		return PAM_SUCCESS;
	}
	off = pm_index_find(s->ix, user, ulen);
	pm_index_replay(pamh, s, off);
	if (off == SIZE_MAX) {
		return PAM_SUCCESS;
	}
	pm_passdb_entry_at(&s->db, off, ulen, 0, &e);
	return pm_found_set(f, &e);
}

/* Reads PATH, looks USER up, and keeps the data in a slot when it can; S
 * is PATH's slot (NULL if none), emptied first. */
static int pm_load_lookup(pam_handle_t *pamh, struct pm_slot *s,
			  const char *path, const char *user,
			  struct pm_found *f)
{
	struct pm_passdb db = PM_PASSDB_INIT;
	struct timespec t0;
	struct stat st;
	char *copy = NULL;
	int rv;

	if (s != NULL) {
		pm_slot_clear(s);
	}
	pm_stats.loads++;
	clock_gettime(CLOCK_REALTIME, &t0);
	rv = pm_passdb_load_st(pamh, path, -1, &db, &st);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size <= PM_CACHE_MAX_FILE) {
		copy = strdup(path);
	}
	if (copy != NULL) {
		s = pm_slot_take();
		s->path = copy;
		s->id = st;
		s->euid = geteuid();
		s->egid = getegid();
		s->trusted = pm_old_enough(&st, &t0);
		s->db = db;
		s->db.path = copy;
		s->used_at = ++pm_clock;
		return pm_find_into(pamh, &s->db, user, f);
	}
	rv = pm_find_into(pamh, &db, user, f);
	pm_passdb_close(&db);
	return rv;
}

int pm_passdb_lookup(pam_handle_t *pamh, const char *path, const char *user,
		     struct pm_found *f)
{
	struct pm_slot *s;
	struct stat st;
	int rv;

	pm_found_free(f);
	(void)pthread_once(&pm_once, pm_init);
	if (stat(path, &st) != 0) {
		st.st_mode = 0; /* the load below reports the error */
	}
	pthread_mutex_lock(&pm_lock);
	pm_stats.lookups++;
	s = pm_slot_find(path);
	if (s != NULL && S_ISREG(st.st_mode) && s->trusted &&
	    pm_same_file(&s->id, &st) &&
	    s->euid == geteuid() && s->egid == getegid()) {
		s->used_at = ++pm_clock;
		rv = pm_slot_lookup(pamh, s, user, f);
	} else {
		rv = pm_load_lookup(pamh, s, path, user, f);
	}
	pthread_mutex_unlock(&pm_lock);
	if (rv != PAM_SUCCESS) {
		pm_found_free(f);
	}
	return rv;
}

void pm_passdb_forget(const char *path)
{
	struct pm_slot *s;

	(void)pthread_once(&pm_once, pm_init);
	pthread_mutex_lock(&pm_lock);
	s = pm_slot_find(path);
	if (s != NULL) {
		pm_slot_clear(s);
	}
	pthread_mutex_unlock(&pm_lock);
}

void pm_passdb_cache_stats(struct pm_cache_stats *st)
{
	pthread_mutex_lock(&pm_lock);
	*st = pm_stats;
	pthread_mutex_unlock(&pm_lock);
}
