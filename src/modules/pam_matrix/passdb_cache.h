/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_matrix's per-process passdb cache.  libpam unloads modules at
 * pam_end, so pam_matrix.so is linked with -z nodelete and this cache, in
 * its static data, serves every transaction of the process: a lookup costs
 * one stat() of the passdb when the file has not changed, and after the
 * second lookup of a big passdb (>= PM_INDEX_MIN bytes) a hash of the user
 * name instead of a scan.  Lookups log exactly what a scan of the file
 * would log ("file:line: reason" for each malformed line before the user's
 * line, or all of them for an unknown user); the cache keeps the malformed
 * lines' numbers and reasons to do so.
 *
 * Freshness: a cached file is used only while stat() reports the same
 * device, inode, size, mtime and ctime (to the nanosecond), the process has
 * the same effective uid and gid, and the file's ctime was already at least
 * PM_TRUST_NS (PM_TRUST_COARSE_NS for files with whole-second time stamps)
 * older than the clock when it was read, so that a change made after the
 * read cannot have kept the same time stamps.  A younger file is read again
 * at every lookup until it ages.  A rewrite by pm_passdb_set_password
 * (rename: a new inode) or any edit in place changes the identity.
 *
 * Memory: at most PM_CACHE_SLOTS passdbs (least recently used dropped).
 * Per passdb: regular files below PM_READ_MAX bytes are copied (wiped when
 * dropped), bigger ones stay mapped read-only (page-cache pages shared with
 * every process, no copy).  An index costs 8 bytes per valid line (16
 * while it is sorted), 24 bytes per malformed line and a 256 KiB
 * directory; all indexes together stay below PM_INDEX_BUDGET bytes (older
 * ones are dropped first; a passdb whose index alone would not fit is
 * scanned from memory at each lookup instead).  Files bigger than
 * PM_CACHE_MAX_FILE are not cached.
 *
 * Thread-safe (one mutex; lookups copy what they return) and fork-safe
 * (the mutex is taken around fork(); a child keeps a valid copy).
 */
#ifndef PM_PASSDB_CACHE_H
#define PM_PASSDB_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include <security/pam_modules.h>

#define PM_CACHE_SLOTS 8
#define PM_INDEX_MIN 65536
#define PM_INDEX_BUDGET ((size_t)64 << 20)
#define PM_CACHE_MAX_FILE ((size_t)4 << 30)
#define PM_TRUST_NS 100000000L         /* 0.1 s */
#define PM_TRUST_COARSE_NS 2000000000L /* 2 s */

/* What a lookup found: copies, owned by the caller (pm_found_free). */
struct pm_found {
	bool found;
	char *pass; /* NUL-terminated; a valid line holds no NUL */
	size_t pass_len;
	char *service;
	size_t service_len;
};

#define PM_FOUND_INIT { false, NULL, 0, NULL, 0 }

/*
 * Finds USER's line in the passdb at PATH like pm_passdb_load followed by
 * pm_passdb_find (same logging, same errors: PAM_AUTHINFO_UNAVAIL or
 * PAM_BUF_ERR, logged), through the cache.  On PAM_SUCCESS *F says whether
 * USER was found and holds copies of the fields.
 */
int pm_passdb_lookup(pam_handle_t *pamh, const char *path, const char *user,
		     struct pm_found *f);

/* Wipes and frees what a lookup returned; F can be looked up again. */
void pm_found_free(struct pm_found *f);

/* Drops what the cache holds for PATH (after rewriting it). */
void pm_passdb_forget(const char *path);

/* Tests only: counters of this process's cache. */
struct pm_cache_stats {
	unsigned long lookups;
	unsigned long loads;    /* the file was read */
	unsigned long hits;     /* served from memory */
	unsigned long indexed;  /* indexes built */
	unsigned long by_index; /* hits answered by an index */
};

void pm_passdb_cache_stats(struct pm_cache_stats *st);

#endif
