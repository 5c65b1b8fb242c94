/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small file helpers of libpam_wrapper.so, plain POSIX: joining paths,
 * telling whether a file changed (its signature), reading a whole service
 * file and writing one atomically.  They know
 * nothing of PAM or of the runtime directory's layout.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_private.h"

bool pwrap_pjoin(pwrap_path out, const char *a, const char *b)
{
	size_t la = strlen(a);
	size_t lb = strlen(b);

	if (la + 1 + lb + 1 > sizeof(pwrap_path)) {
		return false;
	}
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
	return true;
}

char *pwrap_join(const char *a, const char *b)
{
	pwrap_path p;

	return pwrap_pjoin(p, a, b) ? strdup(p) : NULL;
}

bool pwrap_sig_of(const char *path, struct pwrap_sig *sig)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		return false;
	}
	sig->dev = st.st_dev;
	sig->ino = st.st_ino;
	sig->size = st.st_size;
	sig->mtim = st.st_mtim;
	sig->ctim = st.st_ctim;
	return true;
}

bool pwrap_sig_eq(const struct pwrap_sig *a, const struct pwrap_sig *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtim.tv_sec == b->mtim.tv_sec &&
	       a->mtim.tv_nsec == b->mtim.tv_nsec &&
	       a->ctim.tv_sec == b->ctim.tv_sec &&
	       a->ctim.tv_nsec == b->ctim.tv_nsec;
}

int pwrap_read_file(const char *path, char **buf, size_t *len)
{
	/* Any size, as libpam reads any: only a regular file, whose size
	 * when opened bounds the read (a device or FIFO could give bytes for
	 * ever), and no more than a buffer can hold. */
	return pamconf_read_file(AT_FDCWD, path, SIZE_MAX - 1, buf, len);
}

/* Files readable by all: the runtime directory (0700) keeps them private,
 * except while a process runs as another euid for a while, when libpam
 * reads them as that uid (pwrap_uid.c). */
#define PWRAP_FILE_MODE 0644

bool pwrap_fsize_allows(off_t size, size_t len)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    ((uintmax_t)size <= rl.rlim_cur &&
	     len <= rl.rlim_cur - (uintmax_t)size)) {
		return true;
	}
	errno = EFBIG;
	return false;
}

/* Writes all of buf to fd. */
static int write_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/* A file that does not exist yet cannot be being read: it is written in
 * place, without a temporary file and a rename.  1 if path exists after
 * all (nothing done), 0 done, -1 failed (nothing left). */
static int write_new(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC | O_NOCTTY, 0600);
	int saved;

	if (fd < 0) {
		return errno == EEXIST ? 1 : -1;
	}
	if (fchmod(fd, PWRAP_FILE_MODE) != 0 || write_all(fd, buf, len) != 0) {
		saved = errno;
		close(fd);
	} else if (close(fd) == 0) {
		return 0;
	} else {
		saved = errno;	/* the descriptor is gone all the same */
	}
	unlink(path);
	errno = saved;
	return -1;
}

int pwrap_write_file(const char *path, const char *buf, size_t len,
		     bool fresh)
{
	char *tmp = NULL;
	int fd = -1;
	int rc = -1;

	if (!pwrap_fsize_allows(0, len)) {
		/* a write past the limit would end the program (SIGXFSZ) */
		PWRAP_LOG(PWRAP_LOG_ERROR, "not writing %s: its %zu bytes are "
			  "over the file size limit of this process (ulimit "
			  "-f); libpam only reads service files, the wrapper "
			  "must write its copies", path, len);
		errno = EFBIG;
		return -1;
	}
	if (fresh && (rc = write_new(path, buf, len)) <= 0) {
		return rc;
	}
	rc = -1;
	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
		tmp = NULL;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || fchmod(fd, PWRAP_FILE_MODE) != 0 ||
	    write_all(fd, buf, len) != 0) {
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
	}
	if (rc != 0 && tmp != NULL) {
		int saved = errno;

		unlink(tmp);
		errno = saved;
	}
	free(tmp);
	return rc;
}
