/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: what the two readers (explore_linux.c, explore_openpam.c)
 * share: a file's bytes read as fgets() reads them, the table of files and
 * (file, line) sites of an xp_conf, and what a module line's module is
 * (present with the function, present without it, or not loadable).
 */
#ifndef PAMTEST_EXPLORE_READ_H
#define PAMTEST_EXPLORE_READ_H

#include "explore.h"
#include "pamconf.h"

/* A file's bytes (owned) and a read position in them. */
struct xp_text {
	char *buf;
	size_t len;
	size_t off;
	unsigned line;	/* physical lines started so far */
	bool mid;	/* the last read stopped inside a physical line */
};

/* Reads the whole file (at most 16 MiB).  0, or -1 with errno. */
int xp_text_load(struct xp_text *t, const char *path);
void xp_text_free(struct xp_text *t);
/* fgets(buf, cap, f) on the text: false at its end. */
bool xp_gets(struct xp_text *t, char *buf, size_t cap);
/* Whether path is a regular file we can read (libpam's fopen works). */
bool xp_readable(const char *path);

/* The index of path in c->files (added when new; shown relative to base
 * when below it), or -1 (out of memory). */
int xp_file_index(struct xp_conf *c, const char *path, const char *base);
/* Sets l->site to the index of (l->file, l->line) in c->sites.  0 or -1. */
int xp_add_site(struct xp_conf *c, struct xp_line *l);
/* Records why pam_start fails (the first reason wins). file < 0: none. */
void xp_refuse(struct xp_conf *c, int file, unsigned line, const char *fmt,
	       ...) __attribute__((format(printf, 4, 5)));
/* Records "out of memory" in c->error; returns -2. */
int xp_oom(struct xp_conf *c);
/* "pam_unix" of "/lib/security/pam_unix.so" (malloc'd). */
char *xp_short_name(const char *module);
/*
 * Resolves l->module as libpam and the wrapper do (an absolute path as is;
 * a bare name in the system's module directory, else in ours) and looks
 * for function fn in it: present, l stays XP_CALL; without fn, XP_FIXED
 * PAM_MODULE_UNKNOWN still calling the stand-in; not loadable, XP_FIXED
 * PAM_MODULE_UNKNOWN without a call.  0, or -1 (out of memory).
 */
int xp_module_kind(struct xp_line *l, const char *fn);

/* How the libpam pamtest is linked with reads its configuration. */
const struct pamconf_rules *xp_rules(void);

/* Set by explore_main: the system's module directory and ours (or NULL). */
extern const char *xp_sysmoddir;
extern const char *xp_moddir;

#endif
