/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Files on disk as libpam meets them: what an include target is (the one
 * classifier; it never blocks), reading a service file (never from
 * anything but a regular file, never blocking), the names libpam tries for
 * a module and where a module named in a line is found (the one resolver),
 * and how a word is written so that libpam reads it back as one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pamconf.h"
#include "pamconf_impl.h"

enum pamconf_target pamconf_target_kind(const struct pamconf_rules *r,
					int dirfd, const char *path, int *why)
{
	struct stat st, null;
	int fd;

	if (fstatat(dirfd, path, &st, 0) != 0) {
		*why = errno;
		return PAMCONF_TARGET_NONE;
	}
	if (S_ISCHR(st.st_mode) && stat("/dev/null", &null) == 0 &&
	    S_ISCHR(null.st_mode) && st.st_rdev == null.st_rdev) {
		return PAMCONF_TARGET_EMPTY;
	}
	if (S_ISSOCK(st.st_mode)) {
		*why = ENXIO;	/* fopen() of a socket fails */
		return PAMCONF_TARGET_NONE;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		return PAMCONF_TARGET_BLOCKS;
	}
	/* what libpam's fopen(path, "r") would say; O_NONBLOCK in case it
	 * changed into a FIFO since */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		*why = errno;
		return PAMCONF_TARGET_NONE;
	}
	close(fd);
	if (S_ISDIR(st.st_mode) && r->impl == PAMCONF_OPENPAM) {
		*why = EISDIR;	/* OpenPAM fails reading it, as a missing one */
		return PAMCONF_TARGET_NONE;
	}
	/* Linux-PAM reads a directory as empty: fgets()/getline() fail */
	return S_ISDIR(st.st_mode) ? PAMCONF_TARGET_EMPTY : PAMCONF_TARGET_FILE;
}

int pamconf_read_file(int dirfd, const char *path, size_t max, char **text,
		      size_t *len)
{
	struct stat st;
	char *b = NULL;
	size_t got = 0;
	int fd;
	int rc = -1;

	/* O_NONBLOCK: a FIFO named like a service must not hang anyone */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) != 0) {
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		goto out;
	}
	b = malloc((size_t)st.st_size + 1);
	if (b == NULL) {
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			goto out;
		}
		if (n == 0) {
			break;	/* shrank while reading */
		}
		got += (size_t)n;
	}
	b[got] = '\0';
	*text = b;
	b = NULL;
	*len = got;
	rc = 0;
out:
	free(b);
	if (fd >= 0) {
		close(fd);
	}
	return rc;
}

size_t pamconf_module_names(const struct pamconf_rules *r, const char *module,
			    char names[2][PAMCONF_NAME_MAX + 1])
{
	size_t len = strlen(module);
	size_t digits = 0;
	const char *so = "";
	size_t n = 0;

	if (r->impl != PAMCONF_OPENPAM) {
		return snprintf(names[0], PAMCONF_NAME_MAX + 1, "%s", module) <=
		       PAMCONF_NAME_MAX;
	}
	/* openpam_dynamic(): a name ending in a version number as it is,
	 * else "NAME[.so].MAJ" then "NAME[.so]" */
	while (digits < len && module[len - 1 - digits] >= '0' &&
	       module[len - 1 - digits] <= '9') {
		digits++;
	}
	if (digits == 0 || digits == len || module[len - 1 - digits] != '.') {
		if (len < 3 || strcmp(module + len - 3, ".so") != 0) {
			so = ".so";
		}
		if (r->lib_maj != 0 &&
		    snprintf(names[n], PAMCONF_NAME_MAX + 1, "%s%s.%u", module,
			     so, r->lib_maj) <= PAMCONF_NAME_MAX) {
			n++;
		}
	}
	if (snprintf(names[n], PAMCONF_NAME_MAX + 1, "%s%s", module, so) <=
	    PAMCONF_NAME_MAX) {
		n++;
	}
	return n;
}

bool pamconf_module_plain(const struct pamconf_rules *r, const char *module)
{
	if (r->impl == PAMCONF_OPENPAM) {
		return strspn(module, "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/") ==
		       strlen(module);
	}
	return strpbrk(module, " \t\n#") == NULL;
}

/* dir/name into out (out_len bytes); false when it does not fit. */
static bool join(char *out, size_t out_len, const char *dir, const char *name)
{
	int n = snprintf(out, out_len, "%s/%s", dir, name);

	return n >= 0 && (size_t)n < out_len;
}

int pamconf_module_find(const struct pamconf_rules *r, const char *module,
			const char *const *dirs, char *out, size_t out_len,
			int *why)
{
	char names[2][PAMCONF_NAME_MAX + 1];
	size_t n;

	*why = ENOENT;
	if (module[0] == '/' ||
	    (strchr(module, '/') != NULL && r->impl == PAMCONF_OPENPAM)) {
		/* a path: as written (OpenPAM takes a relative one as it
		 * is too) */
		if (snprintf(out, out_len, "%s", module) >= (int)out_len) {
			*why = ENAMETOOLONG;
			return -1;
		}
		if (access(out, F_OK) == 0) {
			return PAMCONF_FOUND_PATH;
		}
		*why = errno;
		return -1;
	}
	if (strchr(module, '/') != NULL) {
		/* Linux-PAM: a relative path below its module directory */
		if (dirs[0] == NULL || !join(out, out_len, dirs[0], module)) {
			return -1;
		}
		if (access(out, F_OK) == 0) {
			return 0;
		}
		*why = errno;
		return -1;
	}
	n = pamconf_module_names(r, module, names);
	if (n == 0) {
		*why = ENAMETOOLONG;
	}
	for (int d = 0; dirs[d] != NULL; d++) {
		for (size_t i = 0; i < n; i++) {
			if (!join(out, out_len, dirs[d], names[i])) {
				*why = ENAMETOOLONG;
			} else if (access(out, F_OK) == 0) {
				return d;
			} else {
				*why = errno;
			}
		}
	}
	return -1;
}

char *pamconf_word(const struct pamconf_rules *r, const char *word)
{
	struct pwrap_buf b = { 0 };

	if (strpbrk(word, "#\n") != NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (r->impl == PAMCONF_OPENPAM) {
		/* openpam_readword(): quotes and backslashes are special
		 * anywhere; single quotes keep everything else as it is */
		if (word[0] != '\0' && strpbrk(word, " \t\r\v\f'\"\\") == NULL) {
			pwrap_buf_str(&b, word);
		} else if (strchr(word, '\'') == NULL) {
			pwrap_buf_fmt(&b, "'%s'", word);
		} else if (strpbrk(word, "\"\\") == NULL) {
			pwrap_buf_fmt(&b, "\"%s\"", word);
		} else {
			errno = EINVAL;
			return NULL;
		}
	} else if (word[0] != '\0' && word[0] != '[' &&
		   strpbrk(word, " \t") == NULL) {
		/* Linux-PAM splits at " \t" unless the word is in [...],
		 * where "\]" stands for ']' */
		pwrap_buf_str(&b, word);
	} else {
		pwrap_buf_str(&b, "[");
		for (const char *p = word; *p != '\0'; p++) {
			if (*p == ']') {
				pwrap_buf_str(&b, "\\");
			}
			pwrap_buf_add(&b, p, 1);
		}
		pwrap_buf_str(&b, "]");
	}
	if (b.failed) {
		errno = ENOMEM;
	}
	return pwrap_buf_take(&b);
}
