/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tree removal (pwrap_rmtree.c): the wrapper's runtime directories and the
 * tools' private directories go this one way.
 */
#ifndef PWRAP_RMTREE_H
#define PWRAP_RMTREE_H

#include <sys/stat.h>

/* Removes a directory tree (symlinks are removed, never followed); a path
 * that is not there is no error.  0, or -1 with errno set. */
int pwrap_rmtree(const char *path);
/* Removes everything in the open directory dfd except the entry named
 * keep (NULL: none); closes dfd. */
int pwrap_rmtree_at(int dfd, const char *keep);
/* Removes the directory `name` of the open directory parent with all it
 * holds, but only while name still is the directory `made` describes (its
 * device and inode; no link is followed): a name pointed elsewhere is left
 * alone.  0 (also when name is gone), or -1 with errno (ESTALE: name is
 * another directory, or not a directory). */
int pwrap_rmtree_in(int parent, const char *name, const struct stat *made);

#endif
