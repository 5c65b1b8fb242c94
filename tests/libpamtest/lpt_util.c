/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the libpamtest tests (see lpt_util.h): temporary service
 * directories below $TMPDIR and small file helpers.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lpt_util.h"

char *lpt_tmpdir_new(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = NULL;

	if (tmp == NULL || tmp[0] == '\0') {
		tmp = "/tmp";
	}
	if (asprintf(&dir, "%s/lpt.XXXXXX", tmp) < 0) {
		return NULL;
	}
	if (mkdtemp(dir) == NULL) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *lpt_svcdir_new(void)
{
	char *dir = lpt_tmpdir_new();

	if (dir != NULL && setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1) != 0) {
		lpt_tmpdir_free(dir);
		return NULL;
	}
	return dir;
}

int lpt_write_file(const char *dir, const char *name, const char *content)
{
	char *path = NULL;
	FILE *f = NULL;
	int rc = -1;

	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		return -1;
	}
	f = fopen(path, "w");
	if (f == NULL) {
		goto out;
	}
	if (fputs(content, f) == EOF) {
		goto out;
	}
	rc = 0;
out:
	if (f != NULL && fclose(f) != 0) {
		rc = -1;
	}
	free(path);
	return rc;
}

char *lpt_read_file(const char *dir, const char *name)
{
	char *path = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;
	FILE *mem = NULL;
	int c;

	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		return NULL;
	}
	f = fopen(path, "r");
	free(path);
	if (f == NULL) {
		return NULL;
	}
	mem = open_memstream(&buf, &len);
	if (mem != NULL) {
		while ((c = fgetc(f)) != EOF) {
			fputc(c, mem);
		}
		fclose(mem);
	}
	fclose(f);
	return buf;
}

void lpt_tmpdir_free(char *dir)
{
	DIR *d;
	struct dirent *e;

	if (dir == NULL) {
		return;
	}
	d = opendir(dir);
	if (d != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0) {
				unlinkat(dirfd(d), e->d_name, 0);
			}
		}
		closedir(d);
	}
	rmdir(dir);
	free(dir);
}

const char *lpt_envlist_get(char **envlist, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envlist != NULL && envlist[i] != NULL; i++) {
		if (strncmp(envlist[i], name, n) == 0 && envlist[i][n] == '=') {
			return envlist[i] + n + 1;
		}
	}
	return NULL;
}
