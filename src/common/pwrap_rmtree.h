/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tree removal (pwrap_rmtree.c): the wrapper's runtime directories and the
 * tools' private directories go this one way.
 */
#ifndef PWRAP_RMTREE_H
#define PWRAP_RMTREE_H

/* Removes a directory tree (symlinks are removed, never followed); a path
 * that is not there is no error.  0, or -1 with errno set. */
int pwrap_rmtree(const char *path);
/* Removes everything in the open directory dfd except the entry named
 * keep (NULL: none); closes dfd. */
int pwrap_rmtree_at(int dfd, const char *keep);

#endif
