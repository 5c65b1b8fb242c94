/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared helpers of the pam_wrapper(1) launcher and the pamtest(1) runner:
 * locating the preload library and modules, LD_PRELOAD handling, private
 * temporary directories and the files written into them.  Nothing here
 * exits; callers own every malloc'd result they get back.
 */
#define _GNU_SOURCE
#include "pwrap_tool.h"
#include "pamconf.h"

#include <dlfcn.h>
#include <link.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <link.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by tools/CMakeLists.txt. */
#ifndef PWRAP_REL_LIBDIR
#define PWRAP_REL_LIBDIR "../lib"
#endif
#ifndef PWRAP_INSTALL_LIBDIR
#define PWRAP_INSTALL_LIBDIR "/usr/local/lib"
#endif
#ifndef PWRAP_NSS_WRAPPER_DEFAULT
#define PWRAP_NSS_WRAPPER_DEFAULT ""
#endif
#ifndef PWRAP_LIB_ARCH
#define PWRAP_LIB_ARCH ""
#endif

#define PWRAP_LIB_NAME "libpam_wrapper.so"

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Directory of the running executable, malloc'd, or NULL. */
static char *exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0) {
		return NULL;
	}
	buf[n] = '\0';
	return strdup(dirname(buf));
}

/*
 * Absolute, clean form of an existing file's path: its directory resolved,
 * its own name kept (libpam_wrapper.so stays libpam_wrapper.so rather than
 * the versioned file the symlink points to).  Malloc'd.
 */
static char *canon(const char *path)
{
	char *dcopy = strdup(path), *bcopy = strdup(path);
	char *dir = NULL, *out = NULL;

	if (dcopy == NULL || bcopy == NULL) {
		goto out;
	}
	dir = realpath(dirname(dcopy), NULL);
	if (dir == NULL ||
	    asprintf(&out, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir,
		     basename(bcopy)) < 0) {
		out = strdup(path);
	}
out:
	free(dcopy);
	free(bcopy);
	free(dir);
	return out;
}

int pwrap_locate(const char *opt_lib, const char *opt_moddir, struct pwrap_paths *out)
{
	struct pwrap_buf tried = {0};
	char *dir = NULL;
	char *cand = NULL;
	const char *env;
	int rc = -1;

	out->lib = NULL;
	out->moddir = NULL;

	env = getenv("PAM_WRAPPER_LIB");
	if (opt_lib != NULL || (env != NULL && env[0] != '\0')) {
		const char *want = opt_lib != NULL ? opt_lib : env;
		if (!is_file(want)) {
			warnx("%s: no such library (given by %s)", want,
			      opt_lib != NULL ? "--lib" : "PAM_WRAPPER_LIB");
			goto out;
		}
		out->lib = canon(want);
	} else {
		const char *rels[] = {"../lib", PWRAP_REL_LIBDIR};
		dir = exe_dir();
		for (size_t i = 0; dir != NULL && i < sizeof(rels) / sizeof(rels[0]); i++) {
			free(cand);
			if (asprintf(&cand, "%s/%s/" PWRAP_LIB_NAME, dir, rels[i]) < 0) {
				cand = NULL;
				goto out;
			}
			pwrap_buf_fmt(&tried, " %s", cand);
			if (is_file(cand)) {
				out->lib = canon(cand);
				break;
			}
		}
		if (out->lib == NULL) {
			const char *inst = PWRAP_INSTALL_LIBDIR "/" PWRAP_LIB_NAME;
			pwrap_buf_fmt(&tried, " %s", inst);
			if (is_file(inst)) {
				out->lib = strdup(inst);
			}
		}
		if (out->lib == NULL) {
			warnx("cannot find " PWRAP_LIB_NAME " (tried%s); use --lib or PAM_WRAPPER_LIB",
			      tried.p != NULL ? tried.p : "");
			goto out;
		}
	}
	if (out->lib == NULL) {
		goto out;
	}

	env = getenv("PAM_WRAPPER_MODULE_DIR");
	if (opt_moddir != NULL) {
		out->moddir = canon(opt_moddir);
	} else if (env != NULL && env[0] != '\0') {
		out->moddir = canon(env);
	} else {
		char *copy = strdup(out->lib);
		if (copy == NULL) {
			goto out;
		}
		if (asprintf(&out->moddir, "%s/pam_wrapper", dirname(copy)) <
		    0) {
			out->moddir = NULL;
		}
		free(copy);
	}
	if (out->moddir == NULL) {
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		pwrap_paths_free(out);
	}
	free(cand);
	free(dir);
	pwrap_buf_free(&tried);
	return rc;
}

void pwrap_paths_free(struct pwrap_paths *p)
{
	free(p->lib);
	free(p->moddir);
	p->lib = NULL;
	p->moddir = NULL;
}

/* True when `lib` (a path) is a sanitizer runtime that must stay first. */
static int pwrap_is_sanitizer_runtime(const char *lib)
{
	const char *base = strrchr(lib, '/');

	base = base != NULL ? base + 1 : lib;
	return strncmp(base, "libasan", 7) == 0 || strncmp(base, "libubsan", 8) == 0 ||
	       strncmp(base, "libtsan", 7) == 0 || strncmp(base, "libclang_rt.", 12) == 0;
}

int pwrap_preload_prepend(const char *libs)
{
	const char *old = getenv("LD_PRELOAD");
	struct pwrap_buf first = {0}, rest = {0};
	char *copy = NULL, *save = NULL;
	int rc = -1;

	/* LD_PRELOAD also accepts spaces as separators. */
	copy = strdup(old != NULL ? old : "");
	if (copy == NULL) {
		goto out;
	}
	for (char *t = strtok_r(copy, ": ", &save); t != NULL; t = strtok_r(NULL, ": ", &save)) {
		struct pwrap_buf *b = pwrap_is_sanitizer_runtime(t) ? &first : &rest;
		if (b->len > 0) {
			pwrap_buf_str(b, ":");
		}
		pwrap_buf_str(b, t);
	}
	if (first.len > 0) {
		pwrap_buf_str(&first, ":");
	}
	pwrap_buf_str(&first, libs);
	if (rest.len > 0) {
		pwrap_buf_str(&first, ":");
		pwrap_buf_str(&first, rest.p);
	}
	if (first.failed || rest.failed) {
		goto out;
	}
	if (setenv("LD_PRELOAD", first.p, 1) != 0) {
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		warn("cannot set LD_PRELOAD");
	}
	free(copy);
	pwrap_buf_free(&first);
	pwrap_buf_free(&rest);
	return rc;
}

/* dir/name (dfd: dir's descriptor, or AT_FDCWD) created with content,
 * never through a link; 0 or -1 after a warning. */
static int write_at(int dfd, const char *dir, const char *name,
		    const char *content, char **path_out)
{
	char *path = NULL;
	int fd = -1;
	int rc = -1;
	size_t len = strlen(content);
	size_t off = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		path = NULL;
		goto out;
	}
	fd = openat(dfd, dfd == AT_FDCWD ? path : name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		warn("cannot create %s", path);
		goto out;
	}
	while (off < len) {
		ssize_t n = write(fd, content + off, len - off);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			warn("cannot write %s", path);
			goto out;
		}
		off += (size_t)n;
	}
	if (close(fd) != 0) {
		fd = -1;
		warn("cannot write %s", path);
		goto out;
	}
	fd = -1;
	if (path_out != NULL) {
		*path_out = path;
		path = NULL;
	}
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
	}
	free(path);
	return rc;
}

int pwrap_tool_write_file(const char *dir, const char *name, const char *content,
		     char **path_out)
{
	return write_at(AT_FDCWD, dir, name, content, path_out);
}

int pwrap_tmp_write(const struct pwrap_tmp *t, const char *name,
		    const char *content, char **path_out)
{
	return write_at(t->fd, t->path, name, content, path_out);
}

int pwrap_valid_service_name(const char *name)
{
	/* A file of the service directory that the wrapper uses: not hidden
	 * (it skips names starting with '.'), no path, no blank; and a
	 * passdb field: no ':'. */
	return name[0] != '\0' && name[0] != '.' && strpbrk(name, "/: \t\n") == NULL;
}

const char *pwrap_user_name_problem(const char *name)
{
	if (name[0] == '\0') {
		return "the user name is empty";
	}
	if (strpbrk(name, ":\n") != NULL) {
		return "a passdb user name cannot contain ':' or a newline";
	}
	if (name[0] == '#') {
		return "a passdb line that starts with '#' is a comment to pam_matrix, "
		       "so this user could never log in";
	}
	return NULL;
}

const char *pwrap_service_case_problem(const char *name)
{
#if defined(PWRAP_OPENPAM)
	/* OpenPAM keeps the case of service names, but refuses any outside
	 * the portable file-name set */
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") != strlen(name))
		return "OpenPAM accepts only letters, digits, '.', '_' and '-' in "
		       "a service name (pam_start() refuses any other), so this one "
		       "would never be used";
#else
	for (const char *p = name; *p != '\0'; p++) {
		if (*p >= 'A' && *p <= 'Z') {
			return "Linux-PAM lowercases service names (pam_start() reads "
			       "the file of the lowercase name, and modules see that "
			       "name), so this one would never be used: write it in "
			       "lowercase; an application may still pass it in capitals";
		}
	}
#endif
	return NULL;
}

int tool_valid_account_flags(const char *f)
{
	static const char *const known[] = {"expired", "must_change", "locked"};

	while (*f != '\0') {
		size_t n = strcspn(f, ",");
		int ok = n == 0;

		for (size_t i = 0; !ok && i < sizeof(known) / sizeof(known[0]);
		     i++) {
			ok = strlen(known[i]) == n && strncmp(known[i], f, n) == 0;
		}
		if (!ok) {
			return 0;
		}
		f += n + (f[n] == ',');
	}
	return 1;
}

char *pwrap_matrix_service(const char *module, const char *passdb)
{
	struct pamconf_rules rules;
	struct pwrap_buf b = {0};
	char *arg = NULL, *word = NULL;

	if (asprintf(&arg, "passdb=%s", passdb) < 0) {
		return NULL;
	}
	pamconf_rules_linked(&rules);
	word = pamconf_word(&rules, arg);
	if (word == NULL) {
		if (errno == EINVAL) {
			warnx("%s: a PAM service file cannot name this path (it holds "
			      "a newline or a '#', which starts a comment); set TMPDIR "
			      "to a directory without them", passdb);
		}
		free(arg);
		return NULL;
	}
	for (int g = 0; g < PWRAP_GROUPS; g++) {
		pwrap_buf_fmt(&b, "%-8s required %s %s\n", pwrap_group_name(g),
			      module, word);
	}
	free(arg);
	free(word);
	return pwrap_buf_take(&b);
}

char *pwrap_find_nss_wrapper(void)
{
	const char *env = getenv("PAM_WRAPPER_NSS_LIB");
	const char *cands[] = {
		PWRAP_NSS_WRAPPER_DEFAULT,
		"/usr/lib/" PWRAP_LIB_ARCH "/libnss_wrapper.so",
		"/usr/lib/" PWRAP_LIB_ARCH "/libnss_wrapper.so.0",
		"/usr/local/lib/libnss_wrapper.so",
		"/usr/lib64/libnss_wrapper.so",
		"/usr/lib/libnss_wrapper.so",
	};

	if (env != NULL && env[0] != '\0') {
		return is_file(env) ? canon(env) : NULL;
	}
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (cands[i][0] != '\0' && is_file(cands[i])) {
			return canon(cands[i]);
		}
	}
	return NULL;
}

#if defined(PWRAP_OPENPAM)
#define PWRAP_SYSMOD_SUB "openpam"
#else
#define PWRAP_SYSMOD_SUB "security"
#endif

/*
 * libpam's module directory, the one libpam itself looks in: Linux-PAM's
 * security/ next to the libpam this process loaded; OpenPAM's openpam/
 * there when it exists (a build with --with-modules-dir), else libpam's own
 * directory (FreeBSD's /usr/lib).  The file is asked for by name (and
 * loaded when the process has none, as in pam_wrapper(1)), not through
 * pam_start, which a preloaded wrapper defines.  Malloc'd, or NULL.
 */
char *system_module_dir(void)
{
	struct link_map *lm = NULL;
	void *h = dlopen(PWRAP_LIBPAM_SONAME, RTLD_LAZY);
	char *real = NULL, *dir = NULL;

	if (h == NULL) {
		return NULL;
	}
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL &&
	    lm->l_name != NULL && (real = realpath(lm->l_name, NULL)) != NULL &&
	    asprintf(&dir, "%s/%s", dirname(real), PWRAP_SYSMOD_SUB) < 0) {
		dir = NULL;
	}
#if defined(PWRAP_OPENPAM)
	if (dir != NULL && access(dir, X_OK) != 0)
		dir[strlen(dir) - strlen("/" PWRAP_SYSMOD_SUB)] = '\0';
#endif
	free(real);
	dlclose(h);
	return dir;
}

int pwrap_replace_file(const char *dir, const char *name, const char *content)
{
	char *tmp = NULL, *path = NULL;
	size_t len = strlen(content), off = 0;
	int fd = -1, rc = -1;

	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0) {
		tmp = NULL;
		goto out;
	}
	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		path = NULL;
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		warn("cannot create %s", tmp);
		free(tmp);
		tmp = NULL;
		goto out;
	}
	while (off < len) {
		ssize_t n = write(fd, content + off, len - off);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		off += (size_t)n;
	}
	if (off < len || fchmod(fd, 0644) != 0 || close(fd) != 0) {
		fd = -1;
		warn("cannot write %s", tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		warn("cannot replace %s", path);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
	}
	if (rc != 0 && tmp != NULL) {
		unlink(tmp);
	}
	free(tmp);
	free(path);
	return rc;
}

static int uid_taken(const uid_t *uids, size_t n, uid_t uid)
{
	for (size_t i = 0; i < n; i++) {
		if (uids[i] == uid) {
			return 1;
		}
	}
	return 0;
}

/* The members of group NAME, or NULL when it is not given. */
static const char *group_members(const struct pwrap_nss_group *g, size_t n,
				 const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(g[i].name, name) == 0) {
			return g[i].members;
		}
	}
	return NULL;
}

/*
 * The line of /etc/passwd (file 'p') or /etc/group ('g') whose third field
 * is id, malloc'd, or NULL.  Read from the file, not through getpwuid():
 * in a process where nss_wrapper's variables are already set (pamtest's
 * child, a pytest process), a lookup would read nss_wrapper's files, or fix
 * their paths for good before they are written.
 */
static char *files_entry(char file, unsigned id)
{
	FILE *f = fopen(file == 'p' ? "/etc/passwd" : "/etc/group", "re");
	char *line = NULL, *found = NULL;
	size_t cap = 0;
	ssize_t n;

	while (f != NULL && found == NULL && (n = getline(&line, &cap, f)) > 0) {
		const char *f3;

		if (line[n - 1] == '\n') {
			line[n - 1] = '\0';
		}
		f3 = strchr(line, ':');
		f3 = f3 != NULL ? strchr(f3 + 1, ':') : NULL;
		if (f3 != NULL && f3[1] >= '0' && f3[1] <= '9' &&
		    strtoul(f3 + 1, NULL, 10) == id &&
		    strchr(f3 + 1, ':') != NULL) {
			found = strdup(line);
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	free(line);
	return found;
}

int pwrap_nss_files(const char *dir, const char *const *users, size_t nusers,
		    const struct pwrap_nss_group *groups, size_t ngroups,
		    char **passwd, char **group)
{
	struct pwrap_buf pw = {0}, gr = {0};
	uid_t *uids = NULL;
	size_t nuids = 0;
	char *mygroup = NULL;	/* the caller's primary group, if written */
	uid_t me = getuid();
	gid_t mygid = getgid();
	const char *rootm = group_members(groups, ngroups, "root");
	int rc = -1;

	*passwd = *group = NULL;
	uids = calloc(nusers + 2, sizeof(*uids));
	if (uids == NULL) {
		goto out;
	}
	pwrap_buf_str(&pw, "root:x:0:0:root:/root:/bin/sh\n");
	pwrap_buf_fmt(&gr, "root:x:0:%s\n", rootm ? rootm : "");
	uids[nuids++] = 0;
	if (me != 0) {
		/* "name:x:uid:gid:gecos:dir:shell", "name:x:gid:members" */
		char *p = files_entry('p', me), *g = files_entry('g', mygid);
		size_t pn = p != NULL ? strcspn(p, ":") : 0;
		size_t gn = g != NULL ? strcspn(g, ":") : 0;
		int clash = 0;
		for (size_t i = 0; p != NULL && i < nusers; i++) {
			clash |= strlen(users[i]) == pn && strncmp(users[i], p, pn) == 0;
		}
		if (p != NULL && !clash) {
			pwrap_buf_fmt(&pw, "%s\n", p);
			uids[nuids++] = me;
		}
		if (g != NULL && mygid != 0) {
			mygroup = strndup(g, gn);
			const char *m = mygroup != NULL ?
				group_members(groups, ngroups, mygroup) : NULL;
			pwrap_buf_fmt(&gr, "%.*s:x:%u:%s\n", (int)gn, g, (unsigned)mygid,
				m ? m : "");
		}
		free(p);
		free(g);
	}
	uid_t next = 1000;
	for (size_t i = 0; i < nusers; i++) {
		int dup = 0;
		for (size_t j = 0; j < i; j++) {
			dup |= strcmp(users[j], users[i]) == 0;
		}
		if (dup) {
			continue;
		}
		while (uid_taken(uids, nuids, next) || next == mygid) {
			next++;
		}
		const char *m = group_members(groups, ngroups, users[i]);
		pwrap_buf_fmt(&pw, "%s:x:%u:%u:%s:/home/%s:/bin/sh\n", users[i],
			(unsigned)next, (unsigned)next, users[i], users[i]);
		pwrap_buf_fmt(&gr, "%s:x:%u:%s\n", users[i], (unsigned)next, m ? m : "");
		uids[nuids++] = next;
	}
	for (size_t i = 0; i < ngroups; i++) {
		int written = strcmp(groups[i].name, "root") == 0 ||
			      (mygroup != NULL && strcmp(groups[i].name, mygroup) == 0);
		for (size_t j = 0; j < nusers; j++) {
			written |= strcmp(users[j], groups[i].name) == 0;
		}
		if (written) {
			continue;
		}
		while (uid_taken(uids, nuids, next) || next == mygid) {
			next++;
		}
		pwrap_buf_fmt(&gr, "%s:x:%u:%s\n", groups[i].name, (unsigned)next,
			groups[i].members);
		next++;
	}
	if (pw.failed || gr.failed) {
		goto out;
	}
	if (pwrap_replace_file(dir, "passwd", pw.p) != 0 ||
	    pwrap_replace_file(dir, "group", gr.p) != 0) {
		goto out;
	}
	if (asprintf(passwd, "%s/passwd", dir) < 0 ||
	    asprintf(group, "%s/group", dir) < 0) {
		goto out;
	}
	rc = 0;
out:
	if (rc != 0) {
		free(*passwd);
		free(*group);
		*passwd = *group = NULL;
	}
	free(mygroup);
	free(uids);
	pwrap_buf_free(&pw);
	pwrap_buf_free(&gr);
	return rc;
}
