/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Removing a directory tree, the one way the wrapper and the tools do it:
 * relative to directory descriptors, never following a symbolic link (a
 * link is removed, not what it points to), so a directory another user
 * swaps for a link while the tree is removed cannot turn the removal
 * against a third directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pwrap_rmtree.h"

/* Deep enough for anything a test or a tool puts there; bounds the
 * recursion. */
#define PWRAP_RMTREE_DEPTH 64

/* A directory entry's type, where the system gives it, spares a failing
 * unlink per directory; elsewhere unlink tells. */
#if defined(DT_DIR)
#define KNOWN_DIR(de) ((de)->d_type == DT_DIR)
#else
#define KNOWN_DIR(de) false
#endif

static int rmtree_depth(int dfd, const char *keep, int depth);

/* Removes the subdirectory nm of dfd with all it holds; with `made`, only
 * while nm is that directory (its device and inode): else nothing is
 * removed and errno is ESTALE. */
static int rmdir_tree(int dfd, const char *nm, int depth,
		      const struct stat *made)
{
	/* Entries removed while a directory is read may be returned or not:
	 * when the directory is not empty after one pass, a second one
	 * catches what the first missed. */
	for (int pass = 0; pass < 2; pass++) {
		int sub = openat(dfd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				 O_CLOEXEC);
		struct stat st;

		if (sub < 0 && made != NULL) {
			if (errno == ENOENT) {
				return 0;
			}
			errno = errno == ELOOP || errno == ENOTDIR ? ESTALE
								 : errno;
			return -1;
		}
		if (made != NULL &&
		    (fstat(sub, &st) != 0 || st.st_dev != made->st_dev ||
		     st.st_ino != made->st_ino)) {
			close(sub);
			errno = ESTALE;
			return -1;
		}
		if (sub >= 0) {
			rmtree_depth(sub, NULL, depth + 1);
		}
		/* the name cannot have been pointed elsewhere meanwhile by
		 * another user where it matters (a trusted base); at worst
		 * an empty directory put there would go */
		if (unlinkat(dfd, nm, AT_REMOVEDIR) == 0 || errno == ENOENT) {
			return 0;
		}
		if (errno != ENOTEMPTY && errno != EEXIST) {
			break;
		}
	}
	return -1;
}

/* One pass over the directory dfd (closed here): everything but keep is
 * removed, subdirectories with what they hold. */
static int rmtree_depth(int dfd, const char *keep, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		close(dfd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		const char *nm = de->d_name;
		bool dir = KNOWN_DIR(de);

		if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0 ||
		    (keep != NULL && strcmp(nm, keep) == 0)) {
			continue;
		}
		if (!dir &&
		    (unlinkat(dirfd(d), nm, 0) == 0 || errno == ENOENT)) {
			continue;
		}
		if ((!dir && errno != EISDIR && errno != EPERM) ||
		    depth >= PWRAP_RMTREE_DEPTH ||
		    rmdir_tree(dirfd(d), nm, depth, NULL) != 0) {
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

int pwrap_rmtree_at(int dfd, const char *keep)
{
	return rmtree_depth(dfd, keep, 0);
}

int pwrap_rmtree_in(int parent, const char *name, const struct stat *made)
{
	return rmdir_tree(parent, name, 0, made);
}

int pwrap_rmtree(const char *path)
{
	for (int pass = 0; pass < 2; pass++) {
		int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			       O_CLOEXEC);

		if (dfd < 0) {
			return errno == ENOENT ? 0 : -1;
		}
		pwrap_rmtree_at(dfd, NULL);
		if (rmdir(path) == 0 || errno == ENOENT) {
			return 0;
		}
		if (errno != ENOTEMPTY && errno != EEXIST) {
			break;
		}
	}
	return -1;
}
