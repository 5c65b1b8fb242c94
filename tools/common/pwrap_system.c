/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The private copy of a system's service files (pwrap_system.h): each file
 * is read and rewritten with pamconf_rewrite() (src/pamconf, the one
 * reader of libpam's grammar, with the rules of the installed libpam), so
 * that libpam reads the copy exactly as the original but for the module
 * tokens replaced here.  The table (pwrap_system_table.c) or a --swap decides
 * each module line; the replacement is "module options", which libpam
 * puts in front of the line's own arguments, so the line keeps its type,
 * control, place and arguments.  Include targets stay relative (the
 * wrapper resolves them inside the copy); an absolute one into the source
 * directory (or /etc/pam.d) becomes the copy's name.  Only this file of the
 * tools' uses the rewriter.
 *
 * Nothing of the source is changed: files are opened read-only and must
 * belong to root or the real user and be writable by nobody else, like
 * the directory.  Errors are collected and all reported before the copy
 * is refused.
 */
#define _GNU_SOURCE
#include "pwrap_system.h"
#include "pwrap_private.h"
#include "pwrap_tool.h"
#include "pamconf.h"

#include <dirent.h>
#include <dlfcn.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest file read (service files, configuration, modules). */
#define SYS_MAX_FILE (64u * 1024 * 1024)

struct copy {
	const struct pwrap_system *s;
	struct pamconf_rules rules;	/* of the installed libpam */
	char *pamd;		/* DIR/pam.d */
	char *state;		/* DIR/state */
	char **files;		/* names to copy (queue) */
	size_t nfiles;
	char **seeded;		/* state names made so far */
	size_t nseeded;
	struct pwrap_buf report;	/* "module\treplacement\twhy\twhere" */
	struct pwrap_buf json;	/* DIR/swaps.json */
	struct pwrap_buf text;	/* DIR/swaps.txt: the trace's text form */
	char *passdb_arg;	/* " passdb=..." (quoted for libpam) or "" */
	size_t nnotes;
	int errors;
};

/* ---- small helpers ------------------------------------------------------ */

const char *pwrap_sys_swap_parse(const char *arg, struct pwrap_sys_swap *s)
{
	const char *eq = strchr(arg, '=');
	const char *r;
	size_t n;

	memset(s, 0, sizeof(*s));
	if (eq == NULL || eq == arg || eq[1] == '\0') {
		return "expected MODULE=REPLACEMENT (real, matrix, standin, "
		       "standin:CODE or a module's path)";
	}
	n = (size_t)(eq - arg);
	if (n > 3 && strncmp(eq - 3, ".so", 3) == 0) {
		n -= 3;
	}
	r = eq + 1;
	if (memchr(arg, '/', n) != NULL) {
		return "MODULE is a name (pam_exec), not a path";
	}
	if (strcmp(r, "real") == 0) {
		s->kind = PWRAP_SYS_REAL;
	} else if (strcmp(r, "matrix") == 0) {
		s->kind = PWRAP_SYS_MATRIX;
	} else if (strcmp(r, "standin") == 0 ||
		   strncmp(r, "standin:", 8) == 0) {
		s->kind = PWRAP_SYS_DOUBLE;
		s->arg = strdup(r[7] == ':' ? r + 8 : "success");
		if (s->arg == NULL || s->arg[0] == '\0' ||
		    strpbrk(s->arg, " \t\n=[]") != NULL) {
			pwrap_sys_swap_free(s);
			return "standin:CODE needs a PAM code's name "
			       "(PAM_SUCCESS, ignore, ...)";
		}
	} else if (strchr(r, '/') != NULL) {
		s->kind = PWRAP_SYS_MODULE;
		s->arg = strdup(r);
		if (s->arg == NULL || strpbrk(r, " \t\n#") != NULL) {
			pwrap_sys_swap_free(s);
			return "a module's path cannot hold blanks or '#'";
		}
	} else {
		return "REPLACEMENT is real, matrix, standin, standin:CODE or a "
		       "module's path (with a '/')";
	}
	s->module = strndup(arg, n);
	if (s->module == NULL) {
		pwrap_sys_swap_free(s);
		return "out of memory";
	}
	return NULL;
}

void pwrap_sys_swap_free(struct pwrap_sys_swap *s)
{
	free(s->module);
	free(s->arg);
	memset(s, 0, sizeof(*s));
}

/* libpam's name of a module token: its last component without the last
 * ".suffix" (malloc'd). */
static char *mod_name(const char *module)
{
	const char *base = strrchr(module, '/');
	const char *dot;

	base = base != NULL ? base + 1 : module;
	dot = strrchr(base, '.');
	return strndup(base, dot != NULL ? (size_t)(dot - base) : strlen(base));
}

static bool strv_has(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i], s) == 0) {
			return true;
		}
	}
	return false;
}

/* Appends a copy of s to v unless it is there: 0, or -1 (ENOMEM). */
static int strv_add_new(char ***v, size_t *n, const char *s)
{
	return strv_has(*v, *n, s) ? 0 : pwrap_strv_add(v, n, s);
}

/*
 * Reads the file at dfd/name (dfd AT_FDCWD: a path) when it belongs to
 * root or the real user and no one else may write it (checked first: the
 * directory it is in is trusted as well, so it cannot be swapped between
 * the check and the read).  0 with *buf malloc'd and NUL-terminated; 1
 * when it does not exist; -1 with *why.
 */
static int read_trusted(int dfd, const char *name, char **buf, size_t *len,
			const char **why)
{
	struct stat st;

	*buf = NULL;
	if (fstatat(dfd, name, &st, 0) != 0) {
		*why = strerror(errno);
		return errno == ENOENT ? 1 : -1;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		return -1;
	}
	if ((st.st_uid != 0 && st.st_uid != getuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		*why = "it belongs to another user or others may write it";
		return -1;
	}
	if (pamconf_read_file(dfd, name, SYS_MAX_FILE, buf, len) != 0) {
		*why = strerror(errno);
		return -1;
	}
	return 0;
}

/* Whether the module file at path holds the string probe (knows the
 * option the probe stands for). */
static bool module_knows(const char *path, const char *probe)
{
	char *buf = NULL;
	size_t len = 0;
	bool yes;

	if (pamconf_read_file(AT_FDCWD, path, SYS_MAX_FILE, &buf, &len) != 0) {
		return false;
	}
	yes = memmem(buf, len, probe, strlen(probe)) != NULL;
	free(buf);
	return yes;
}

/* Where libpam loads a module token from (malloc'd), NULL when unknown. */
static char *module_file(const struct copy *c, const char *module)
{
	char *p = NULL;

	if (module[0] == '/') {
		return strdup(module);
	}
	if (c->s->sysmoddir == NULL ||
	    asprintf(&p, "%s/%s", c->s->sysmoddir, module) < 0) {
		return NULL;
	}
	return p;
}

/* "--swap " or the caller's word for it. */
static const char *swap_word(const struct copy *c)
{
	return c->s->swap_word != NULL ? c->s->swap_word : "--swap ";
}

static void error_at(struct copy *c, const char *src, unsigned line,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void error_at(struct copy *c, const char *src, unsigned line,
		     const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s:%u: ", c->s->prog, src, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	c->errors++;
}

/* ---- the state directory ------------------------------------------------ */

/* DIR/state/<st->name>, made (and seeded) once. */
static char *state_file(struct copy *c, const struct pwrap_sys_state *st)
{
	struct pwrap_buf b = { 0 };
	char *path = NULL, *words = NULL, *save = NULL;

	if (asprintf(&path, "%s/%s", c->state, st->name) < 0) {
		return NULL;
	}
	if (strv_has(c->seeded, c->nseeded, st->name)) {
		return path;
	}
	if (pwrap_strv_add(&c->seeded, &c->nseeded, st->name) != 0) {
		goto fail;
	}
	if (st->dir) {
		if (mkdir(path, 0700) != 0) {
			goto fail;
		}
		return path;
	}
	if (st->seed == NULL) {
		return path;	/* made by the test when it wants it */
	}
	words = strdup(st->seed);
	pwrap_buf_add(&b, "", 0);
	for (char *w = words ? strtok_r(words, " ", &save) : NULL; w != NULL;
	     w = strtok_r(NULL, " ", &save)) {
		glob_t g;

		if (glob(w, 0, NULL, &g) != 0) {
			continue;	/* the system has none */
		}
		for (size_t i = 0; i < g.gl_pathc; i++) {
			char *text = NULL;
			size_t len = 0;
			const char *why = NULL;
			int r = read_trusted(AT_FDCWD, g.gl_pathv[i], &text,
					     &len, &why);

			if (r < 0) {
				warnx("%s: %s", g.gl_pathv[i], why);
				c->errors++;
			}
			pwrap_buf_add(&b, text != NULL ? text : "", len);
			if (len > 0 && text[len - 1] != '\n') {
				pwrap_buf_str(&b, "\n");
			}
			free(text);
		}
		globfree(&g);
	}
	free(words);
	if (b.failed || pwrap_tool_write_file(c->state, st->name, b.p, NULL) != 0) {
		goto fail;
	}
	free(b.p);
	return path;
fail:
	warn("%s", path);
	free(b.p);
	free(path);
	return NULL;
}

/* " opt=<state file>" for each option of a state row (quoted for libpam
 * when the path needs it); NULL after an error (logged). */
static char *state_args(struct copy *c, const struct pwrap_sys_row *row,
			const char *module, const char *src, unsigned line)
{
	char *file = module_file(c, module);
	struct pwrap_buf b = { 0 };

	pwrap_buf_add(&b, "", 0);
	for (size_t i = 0; i < 2 && row->state[i].opt != NULL; i++) {
		const struct pwrap_sys_state *st = &row->state[i];
		bool knows = st->probe == NULL ||
			     (file != NULL && module_knows(file, st->probe));
		char *path, *arg = NULL, *word;

		if (!knows && st->optional) {
			continue;	/* it reads the system's, harmless */
		}
		if (!knows && file != NULL && access(file, F_OK) == 0) {
			error_at(c, src, line, "%s has no %s= option (an older "
				 "version?), and it %s; %s%s=standin "
				 "replaces it", file, st->opt, row->why,
				 swap_word(c), row->module);
			goto fail;
		}
		path = state_file(c, st);
		if (path == NULL || asprintf(&arg, "%s=%s", st->opt, path) < 0) {
			free(path);
			goto fail;
		}
		word = pamconf_word(&c->rules, arg);
		free(path);
		free(arg);
		if (word == NULL) {
			error_at(c, src, line, "the private directory's path "
				 "cannot be written in a service file");
			goto fail;
		}
		pwrap_buf_fmt(&b, " %s", word);
		free(word);
	}
	free(file);
	return b.failed ? NULL : b.p;
fail:
	free(file);
	free(b.p);
	return NULL;
}

/* ---- the rewriter's callbacks ------------------------------------------- */

/* The row or swap for a module name: kind and (DOUBLE) codes. */
static const struct pwrap_sys_row *decide(const struct copy *c,
					  const char *name,
					  struct pwrap_sys_row *tmp,
					  const char **module_path)
{
	*module_path = NULL;
	for (size_t i = 0; i < c->s->nswaps; i++) {
		const struct pwrap_sys_swap *w = &c->s->swaps[i];
		const struct pwrap_sys_row *row = pwrap_sys_row(name);

		if (strcmp(w->module, name) != 0) {
			continue;
		}
		memset(tmp, 0, sizeof(*tmp));
		tmp->module = w->module;
		tmp->kind = w->kind;
		tmp->why = "--swap";
		if (w->kind == PWRAP_SYS_DOUBLE) {
			tmp->codes = w->arg;	/* "all=" is put in front */
		} else if (w->kind == PWRAP_SYS_MODULE) {
			*module_path = w->arg;
		} else if (w->kind == PWRAP_SYS_REAL && row != NULL &&
			   row->kind == PWRAP_SYS_STATE) {
			*tmp = *row;	/* real, with its state kept private */
			tmp->why = row->why;
		}
		return tmp;
	}
	return pwrap_sys_row(name);
}

/* What the module token of a line becomes (malloc'd), NULL to keep it. */
static char *replacement(struct copy *c, const struct pamconf_module_line *ml,
			 const char *name, const struct pwrap_sys_row *row,
			 const char *module_path, enum pwrap_sys_kind *kind)
{
	char *rep = NULL, *args;

	*kind = row->kind;
	switch (row->kind) {
	case PWRAP_SYS_REAL:
		return NULL;
	case PWRAP_SYS_MODULE:
		return strdup(module_path);
	case PWRAP_SYS_MATRIX:
		if (c->passdb_arg == NULL) {
			return NULL;	/* said by pwrap_system_copy() */
		}
		if (asprintf(&rep, "%s/pam_matrix.so%s as=%s", c->s->moddir,
			     c->passdb_arg, name) < 0) {
			rep = NULL;
		}
		return rep;
	case PWRAP_SYS_DOUBLE:
		if (asprintf(&rep, "%s/pam_double.so as=%s %s%s --",
			     c->s->moddir, name,
			     strcmp(row->why, "--swap") == 0 ? "all=" : "",
			     row->codes) < 0) {
			rep = NULL;
		}
		return rep;
	case PWRAP_SYS_STATE:
		args = state_args(c, row, ml->module, ml->src, ml->line);
		if (args != NULL && args[0] == '\0') {
			*kind = PWRAP_SYS_REAL;	/* knows none of its options */
		} else if (args != NULL &&
			   asprintf(&rep, "%s%s", ml->module, args) < 0) {
			rep = NULL;
		}
		if (args == NULL) {
			*kind = PWRAP_SYS_STATE;	/* failed: said why */
		}
		free(args);
		return rep;
	}
	return NULL;
}

/*
 * What a line's own arguments ask that the copy cannot give, said before
 * anything runs (true: refused): pam_unix's remember=N (a history kept in
 * /etc), and an option of a state row that the module writes through and
 * the line sets itself (pam_faillock's dir=, pam_pwhistory's file=): it
 * comes after ours, wins, and the module would write there.
 */
static bool args_refused(struct copy *c, const struct pamconf_module_line *ml,
			 const char *name, const struct pwrap_sys_row *row)
{
	size_t n = pamconf_argc(ml->l);
	bool bad = false;

	for (size_t i = 0; i < n; i++) {
		const char *a = pamconf_arg(ml->l, i);

		if (row->kind == PWRAP_SYS_MATRIX &&
		    strcmp(name, "pam_unix") == 0 &&
		    strncmp(a, "remember=", 9) == 0 &&
		    strtol(a + 9, NULL, 10) > 0) {
			error_at(c, ml->src, ml->line, "pam_unix's %s keeps a "
				 "password history in /etc/security/opasswd, "
				 "which its double cannot: remove the option "
				 "from the test's copy", a);
			bad = true;
		}
		for (size_t k = 0; row->kind == PWRAP_SYS_STATE && k < 2 &&
		     row->state[k].opt != NULL; k++) {
			const struct pwrap_sys_state *st = &row->state[k];
			size_t ol = strlen(st->opt);

			if (st->written && strncmp(a, st->opt, ol) == 0 &&
			    a[ol] == '=') {
				error_at(c, ml->src, ml->line, "the line's own "
					 "%s would make %s write there, not in "
					 "the private directory: remove the "
					 "option from the test's copy", a,
					 name);
				bad = true;
			}
		}
	}
	return bad;
}

/* Records a line's fate for the report and DIR/swaps.json. */
static void note(struct copy *c, const struct pamconf_module_line *ml,
		 const char *name, enum pwrap_sys_kind kind, const char *why,
		 const char *rep)
{
	static const char *const kinds[] = {
		[PWRAP_SYS_REAL] = "real", [PWRAP_SYS_STATE] = "state",
		[PWRAP_SYS_MATRIX] = "matrix", [PWRAP_SYS_DOUBLE] = "standin",
		[PWRAP_SYS_MODULE] = "module",
	};
	static const char *const shown[] = {
		[PWRAP_SYS_REAL] = "runs as it is",
		[PWRAP_SYS_STATE] = ("runs with its files in the private "
				     "directory"),
		[PWRAP_SYS_MATRIX] = "becomes pam_matrix.so as=",
		[PWRAP_SYS_DOUBLE] = "becomes the stand-in pam_double.so",
		[PWRAP_SYS_MODULE] = "becomes ",
	};
	char *where = NULL;

	if (asprintf(&where, "%s:%u", ml->src, ml->line) < 0) {
		c->report.failed = true;
		return;
	}
	/* "<module>\t<kind>\t<why>\t<n>\t<where>": sorted for the report */
	pwrap_buf_fmt(&c->report, "%s\t%s%s\t%s\t%08zu\t%s\n", name,
		      shown[kind], kind == PWRAP_SYS_MATRIX ? name :
		      kind == PWRAP_SYS_MODULE ? rep : "", why, c->nnotes++,
		      where);
	pwrap_buf_fmt(&c->json, "{\"kind\":\"swap\",\"pid\":%ld,\"where\":",
		      (long)getpid());
	pwrap_buf_json(&c->json, where);
	pwrap_buf_str(&c->json, ",\"type\":");
	pwrap_buf_json(&c->json, ml->type);
	pwrap_buf_str(&c->json, ",\"control\":");
	pwrap_buf_json(&c->json, ml->control);
	pwrap_buf_str(&c->json, ",\"module\":");
	pwrap_buf_json(&c->json, ml->module);
	pwrap_buf_fmt(&c->json, ",\"as\":\"%s\",\"replacement\":",
		      kinds[kind]);
	if (rep != NULL) {
		pwrap_buf_json(&c->json, rep);
	} else {
		pwrap_buf_str(&c->json, "null");
	}
	pwrap_buf_str(&c->json, ",\"why\":");
	pwrap_buf_json(&c->json, why);
	pwrap_buf_str(&c->json, "}\n");
	/* (names from the configuration; control characters are not in a
	 * line libpam read as one) */
	pwrap_buf_fmt(&c->text, "pam_wrapper[%ld] swap %s: %s %s%s%s %s -> %s%s%s "
		      "(%s)\n", (long)getpid(), where, ml->type,
		      ml->bracket ? "[" : "", ml->control, ml->bracket ? "]" : "",
		      ml->module, kinds[kind], rep ? ": " : "",
		      rep ? rep : "", why);
	free(where);
}

static char *cb_module_line(void *ctx, const struct pamconf_module_line *ml)
{
	struct copy *c = ctx;
	struct pwrap_sys_row tmp;
	const struct pwrap_sys_row *row;
	enum pwrap_sys_kind kind;
	const char *path = NULL;
	char *name = mod_name(ml->module), *rep = NULL, *file;
	int before;

	if (name == NULL) {
		c->errors++;
		return NULL;
	}
	row = decide(c, name, &tmp, &path);
	if (row == NULL) {
		file = module_file(c, ml->module);
		if (ml->type[0] == '-' && file != NULL &&
		    access(file, F_OK) != 0) {
			free(file);	/* libpam skips the line: harmless */
			free(name);
			return NULL;
		}
		free(file);
		error_at(c, ml->src, ml->line, "%s: no row of pam_wrapper's "
			 "table says how to run it without root or the system "
			 "(pam_wrapper(1), SYSTEM STACKS): %s%s=real runs "
			 "it as it is, %s%s=standin replaces it by a "
			 "stand-in that succeeds", ml->module, swap_word(c),
			 name, swap_word(c), name);
		free(name);
		return NULL;
	}
	kind = row->kind;
	if (args_refused(c, ml, name, row)) {
		free(name);
		return NULL;	/* (counted) */
	}
	before = c->errors;
	rep = replacement(c, ml, name, row, path, &kind);
	if (rep == NULL && kind != PWRAP_SYS_REAL && c->errors == before) {
		c->errors++;	/* out of memory (state_args counts its own) */
	}
	note(c, ml, name, kind, row->why, rep);
	free(name);
	return rep;
}

/* Include targets: relative ones stay (the wrapper finds them in the
 * copy), absolute ones into the source become relative; each is copied. */
static char *cb_include(void *ctx, const char *target, enum pamconf_stack stack,
			const char *src, unsigned line)
{
	struct copy *c = ctx;
	const char *dirs[] = { c->s->src, PWRAP_SYSTEM_SRC };
	const char *name = target;

	(void)stack;
	if (target[0] == '/') {
		name = NULL;
		for (size_t i = 0; i < 2 && name == NULL; i++) {
			size_t n = strlen(dirs[i]);

			if (strncmp(target, dirs[i], n) == 0 &&
			    target[n] == '/') {
				name = target + n + 1;
			}
		}
	}
	if (name == NULL || strchr(name, '/') != NULL || name[0] == '.' ||
	    name[0] == '\0') {
		error_at(c, src, line, "include of %s: --system copies only "
			 "the files of %s", target, c->s->src);
		return NULL;
	}
	if (strv_add_new(&c->files, &c->nfiles, name) != 0) {
		c->errors++;
	}
	return name == target ? NULL : strdup(name);
}

/* ---- the copy ----------------------------------------------------------- */

/* The rewriter did not make a replacement (the line would not fit
 * libpam's buffer): the real module would run, so the copy is refused. */
static void cb_warn(void *ctx, const char *src, unsigned line, const char *msg)
{
	struct copy *c = ctx;

	error_at(c, src, line, "%s: the module would run as it is; shorten "
		 "the line", msg);
}

/* Copies the file `name` of the source (dfd) into DIR/pam.d. */
static void copy_file(struct copy *c, int dfd, const char *name)
{
	struct pamconf_ops ops = {
		.ctx = c,
		.include_target = cb_include,
		.module_line = cb_module_line,
		.warn = cb_warn,
		/* libpam's messages and the trace name /etc/pam.d's lines */
		.keep_lines = true,
	};
	struct pamconf_err err = { 0 };
	char *in = NULL, *out = NULL, *show = NULL;
	size_t len = 0;
	const char *why = NULL;
	int r = read_trusted(dfd, name, &in, &len, &why);

	if (r == 1) {
		return;	/* missing: libpam fails as on the system */
	}
	if (asprintf(&show, "%s/%s", c->s->src, name) < 0) {
		show = NULL;
	}
	if (r < 0 || show == NULL) {
		warnx("%s/%s: %s", c->s->src, name, why ? why : "out of memory");
		c->errors++;
		goto out;
	}
	if (pamconf_rewrite(&c->rules, in, len, show, &ops, &out, NULL,
			    &err) != 0) {
		if (err.why != NULL) {
			error_at(c, show, err.line, "%s", err.why);
		} else {
			warn("%s", show);
			c->errors++;
		}
		goto out;
	}
	if (c->errors == 0) {
		if (pwrap_tool_write_file(c->pamd, name, out, NULL) != 0) {
			c->errors++;
		}
	}
out:
	free(in);
	free(out);
	free(show);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of every service file of the source, sorted. */
static int list_all(struct copy *c, int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (d == NULL) {
		if (fd >= 0) {
			close(fd);
		}
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.' &&
		    strv_add_new(&c->files, &c->nfiles, e->d_name) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	qsort(c->files, c->nfiles, sizeof(*c->files), cmp_str);
	return 0;
}

/* Opens the source directory if it is root's or the real user's and only
 * its owner may write it. */
static int open_source(const char *src)
{
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (fd < 0) {
		warn("%s", src);
		return -1;
	}
	if (fstat(fd, &st) != 0 ||
	    (st.st_uid != 0 && st.st_uid != getuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		warnx("%s: it belongs to another user or others may write it",
		      src);
		close(fd);
		return -1;
	}
	return fd;
}

/* The report: for each module and what it became, the lines it is on. */
static void print_report(const struct copy *c)
{
	char *text = c->report.p != NULL ? strdup(c->report.p) : NULL;
	char **lines = NULL, *save = NULL;
	size_t n = 0, cap = 0, srcn = strlen(c->s->src);
	const char *last = NULL;

	for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			char **v = realloc(lines, (cap = cap * 2 + 16) *
						  sizeof(*v));

			if (v == NULL) {
				goto out;
			}
			lines = v;
		}
		lines[n++] = l;
	}
	qsort(lines, n, sizeof(*lines), cmp_str);
	fprintf(stderr, "%s: %s copied to %s; each module, what runs and "
		"where:\n", c->s->prog, c->s->src, c->pamd);
	for (size_t i = 0; i < n; i++) {
		/* module, kind, why, number, where */
		char *f[5], *p = lines[i];

		for (int k = 0; k < 5; k++) {
			f[k] = strsep(&p, "\t");
		}
		if (f[4] == NULL) {
			continue;
		}
		if (strncmp(f[4], c->s->src, srcn) == 0 && f[4][srcn] == '/') {
			f[4] += srcn + 1;
		}
		if (last == NULL || strcmp(last, f[0]) != 0) {
			fprintf(stderr, "%s  %s %s (it %s):", last ? "\n" : "",
				f[0], f[1], f[2]);
		}
		fprintf(stderr, " %s", f[4]);
		last = f[0];
	}
	if (last != NULL) {
		fputc('\n', stderr);
	}
out:
	free(lines);
	free(text);
}

/* The rules of the installed libpam (loaded to be asked, when it is not
 * already: the launcher does not link it). */
static void system_rules(struct pamconf_rules *r)
{
	void *h = dlopen(PWRAP_LIBPAM_SONAME, RTLD_LAZY);

	pamconf_rules_detect(r, h, h != NULL ? dlsym(h, "pam_start") : NULL);
	if (h != NULL) {
		dlclose(h);
	}
}

int pwrap_system_copy(const struct pwrap_system *s)
{
	struct copy c = { .s = s };
	char *path = NULL;
	int dfd = -1, rc = -1;

	system_rules(&c.rules);
	if (c.rules.impl != PAMCONF_LINUX_PAM) {
		warnx("%s: the installed libpam is %s; the table knows "
		      "Linux-PAM's modules only", s->prog, c.rules.label);
		goto out;
	}
	if (asprintf(&c.pamd, "%s/pam.d", s->dir) < 0 ||
	    asprintf(&c.state, "%s/state", s->dir) < 0) {
		goto oom;
	}
	if (s->passdb == NULL) {
		c.passdb_arg = strdup("");
	} else {
		char *arg = NULL, *word = NULL;

		if (asprintf(&arg, "passdb=%s", s->passdb) >= 0) {
			word = pamconf_word(&c.rules, arg);
		}
		if (word == NULL || asprintf(&c.passdb_arg, " %s", word) < 0) {
			c.passdb_arg = NULL;
			warnx("%s: the passdb's path %s cannot be written in a "
			      "service file", s->prog, s->passdb);
		}
		free(arg);
		free(word);
		if (c.passdb_arg == NULL) {
			goto out;
		}
	}
	dfd = open_source(s->src);
	if (dfd < 0) {
		goto out;
	}
	if (mkdir(c.pamd, 0700) != 0 || mkdir(c.state, 0700) != 0) {
		warn("%s", s->dir);
		goto out;
	}
	if (s->nservices == 0 && list_all(&c, dfd) != 0) {
		warn("%s", s->src);
		goto out;
	}
	for (size_t i = 0; i < s->nservices; i++) {
		if (strv_add_new(&c.files, &c.nfiles, s->services[i]) != 0) {
			goto oom;
		}
	}
	if (s->nservices > 0 && strv_add_new(&c.files, &c.nfiles, "other") != 0) {
		goto oom;
	}
	pwrap_buf_add(&c.report, "", 0);
	pwrap_buf_add(&c.json, "", 0);
	pwrap_buf_add(&c.text, "", 0);
	/* copy_file() may add include targets to the queue */
	for (size_t i = 0; i < c.nfiles; i++) {
		copy_file(&c, dfd, c.files[i]);
	}
	if (c.report.failed || c.json.failed || c.text.failed) {
		goto oom;
	}
	if (c.errors > 0) {
		fprintf(stderr, "%s: %d problem%s above: nothing runs\n",
			s->prog, c.errors, c.errors == 1 ? "" : "s");
		goto out;
	}
	if (pwrap_tool_write_file(s->dir, "swaps.json", c.json.p, NULL) != 0 ||
	    pwrap_tool_write_file(s->dir, "swaps.txt", c.text.p, NULL) != 0) {
		goto out;
	}
	if (!s->quiet) {
		print_report(&c);
	}
	rc = 0;
	goto out;
oom:
	warnx("%s: out of memory", s->prog);
out:
	if (dfd >= 0) {
		close(dfd);
	}
	pwrap_strv_free(c.files, c.nfiles);
	pwrap_strv_free(c.seeded, c.nseeded);
	free(c.passdb_arg);
	free(c.report.p);
	free(c.json.p);
	free(c.text.p);
	free(c.pamd);
	free(c.state);
	free(path);
	return rc;
}

/* Opens the trace file for appending, as the wrapper does. */
static int open_trace(const char *trace)
{
	struct stat st;
	int fd;

	if (strcmp(trace, "-") == 0) {
		return dup(STDERR_FILENO);
	}
	fd = open(trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0 && errno == ELOOP && lstat(trace, &st) == 0 &&
	    (st.st_uid == 0 || st.st_uid == getuid())) {
		fd = open(trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			  0600);
	}
	return fd;
}

int pwrap_system_trace(const char *dir, const char *trace, const char *format)
{
	char *src = NULL, *text = NULL;
	size_t len = 0, off = 0;
	const char *why = NULL;
	int fd = -1, rc = -1;

	if (trace == NULL || trace[0] == '\0') {
		return 0;
	}
	if (asprintf(&src, "%s/swaps.%s", dir, format != NULL &&
		     strcmp(format, "text") == 0 ? "txt" : "json") < 0) {
		return -1;
	}
	if (read_trusted(AT_FDCWD, src, &text, &len, &why) != 0) {
		warnx("%s: %s", src, why != NULL ? why : "cannot read it");
		goto out;
	}
	fd = open_trace(trace);
	if (fd < 0) {
		warn("trace %s", trace);
		goto out;
	}
	/* one write for the whole: processes sharing the file append whole
	 * lines */
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			warn("trace %s", trace);
			goto out;
		}
		off += (size_t)n;
	}
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
	}
	free(text);
	free(src);
	return rc;
}
