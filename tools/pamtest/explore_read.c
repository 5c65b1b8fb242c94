/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore: helpers of the two service readers (explore_read.h),
 * and the parts of an xp_conf that do not depend on the PAM library.
 */
#define _GNU_SOURCE
#include "explore_read.h"

#include <errno.h>
#include <fcntl.h>
#include <security/pam_appl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE (16u << 20)

const char *xp_sysmoddir;
const char *xp_moddir;

const struct pamconf_rules *xp_rules(void)
{
	static struct pamconf_rules rules;
	static bool known;

	if (!known) {
		pamconf_rules_linked(&rules);
		known = true;
	}
	return &rules;
}

int xp_text_load(struct xp_text *t, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t cap = 4096;

	memset(t, 0, sizeof(*t));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	t->buf = malloc(cap + 1);
	while (t->buf != NULL) {
		ssize_t n;

		if (t->len == cap) {
			char *nb = cap >= MAX_FILE ? NULL : realloc(t->buf, cap * 2 + 1);

			if (nb == NULL) {
				free(t->buf);
				t->buf = NULL;
				errno = EFBIG;
				break;
			}
			t->buf = nb;
			cap *= 2;
		}
		n = read(fd, t->buf + t->len, cap - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(t->buf);
			t->buf = NULL;
			break;
		}
		if (n == 0) {
			t->buf[t->len] = '\0';
			close(fd);
			return 0;
		}
		t->len += (size_t)n;
	}
	close(fd);
	return -1;
}

void xp_text_free(struct xp_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

bool xp_gets(struct xp_text *t, char *buf, size_t cap)
{
	size_t n = 0;

	if (t->off >= t->len)
		return false;
	if (!t->mid)
		t->line++;
	while (n + 1 < cap && t->off < t->len) {
		char ch = t->buf[t->off++];

		buf[n++] = ch;
		if (ch == '\n')
			break;
	}
	t->mid = n == 0 || buf[n - 1] != '\n';
	buf[n] = '\0';
	return true;
}

bool xp_readable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, R_OK) == 0;
}

int xp_file_index(struct xp_conf *c, const char *path, const char *base)
{
	size_t bl = strlen(base);
	struct xp_file *v;
	const char *show = path;

	for (size_t i = 0; i < c->nfiles; i++)
		if (strcmp(c->files[i].path, path) == 0)
			return (int)i;
	v = reallocarray(c->files, c->nfiles + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	c->files = v;
	if (strncmp(path, base, bl) == 0 && path[bl] == '/' && path[bl + 1] != '\0')
		show = path + bl + 1;
	memset(&v[c->nfiles], 0, sizeof(v[c->nfiles]));
	v[c->nfiles].path = strdup(path);
	v[c->nfiles].show = strdup(show);
	if (v[c->nfiles].path == NULL || v[c->nfiles].show == NULL) {
		free(v[c->nfiles].path);
		free(v[c->nfiles].show);
		return -1;
	}
	return (int)c->nfiles++;
}

int xp_add_site(struct xp_conf *c, struct xp_line *l)
{
	struct xp_site *v;

	for (size_t i = 0; i < c->nsites; i++) {
		if (c->sites[i].file == l->file && c->sites[i].line == l->line) {
			l->site = (int)i;
			return 0;
		}
	}
	v = reallocarray(c->sites, c->nsites + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	c->sites = v;
	v[c->nsites].file = l->file;
	v[c->nsites].line = l->line;
	l->site = (int)c->nsites++;
	return 0;
}

void xp_refuse(struct xp_conf *c, int file, unsigned line, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	if (c->refused != NULL)
		return;
	c->refused_file = file;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg == NULL) {
		xp_oom(c);
		return;
	}
	if (file < 0)
		c->refused = msg;
	else if (line == 0 && asprintf(&c->refused, "%s: %s",
				       c->files[file].show, msg) < 0)
		c->refused = NULL;
	else if (line > 0 && asprintf(&c->refused, "%s:%u: %s",
				      c->files[file].show, line, msg) < 0)
		c->refused = NULL;
	if (c->refused != msg)
		free(msg);
	if (c->refused == NULL)
		xp_oom(c);
}

int xp_oom(struct xp_conf *c)
{
	if (c->error == NULL)
		c->error = strdup("out of memory");
	return -2;
}

char *xp_short_name(const char *module)
{
	const char *b = strrchr(module, '/');
	size_t n;

	b = b != NULL && b[1] != '\0' ? b + 1 : module;
	n = strlen(b);
	if (n > 3 && strcmp(b + n - 3, ".so") == 0)
		n -= 3;
	return strndup(b, n);
}

int xp_module_kind(struct xp_line *l, const char *fn)
{
	char *path = NULL;
	int has;

	if (l->module[0] == '/') {
		path = strdup(l->module);
	} else {
		if (asprintf(&path, "%s/%s", xp_sysmoddir != NULL ? xp_sysmoddir
				     : "/nonexistent", l->module) < 0)
			path = NULL;
		/* the wrapper: a bare name the system lacks is one of ours */
		if (path != NULL && access(path, F_OK) != 0 &&
		    strchr(l->module, '/') == NULL && xp_moddir != NULL) {
			free(path);
			if (asprintf(&path, "%s/%s", xp_moddir, l->module) < 0)
				path = NULL;
		}
	}
	if (path == NULL)
		return -1;
	has = xp_module_has(path, fn);
	free(path);
	l->standin = has >= 0;
	if (has == 1)
		return 0;
	l->kind = XP_FIXED;
	l->fixed = PAM_MODULE_UNKNOWN;
	l->why = has == 0 ? "the module has no function for this group"
			  : "the module cannot be loaded";
	return 0;
}

/* ---- the configuration --------------------------------------------------- */

const struct xp_stack *xp_stack_of(const struct xp_conf *c, enum xp_type t)
{
	return c->conf[t].n > 0 ? &c->conf[t] : &c->other[t];
}

static void stack_free(struct xp_stack *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].module);
		free(s->v[i].name);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void xp_conf_free(struct xp_conf *c)
{
	for (size_t i = 0; i < c->nfiles; i++) {
		free(c->files[i].path);
		free(c->files[i].show);
	}
	for (int t = 0; t < XP_NTYPES; t++) {
		stack_free(&c->conf[t]);
		stack_free(&c->other[t]);
	}
	free(c->files);
	free(c->sites);
	free(c->service);
	free(c->dir);
	free(c->refused);
	free(c->error);
	if (c->impl_free != NULL)
		c->impl_free(c->impl);
	memset(c, 0, sizeof(*c));
}
