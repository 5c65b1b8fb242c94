/* SPDX-License-Identifier: BSD-3-Clause */
/* Implementation of test_common.h (see there). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_common.h"

char *pt_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char *d = NULL;

	assert_true(asprintf(&d, "%s/pwrap-test.XXXXXX", t ? t : "/tmp") > 0);
	assert_non_null(mkdtemp(d));
	return d;
}

void pt_rmtree(const char *dir)
{
	char *cmd = NULL;

	/* test-only: the path comes from mkdtemp, no shell metacharacters */
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

char *pt_path(const char *dir, const char *name)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

void pt_write_file(const char *dir, const char *name, const char *content)
{
	char *p = pt_path(dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	size_t len = strlen(content);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
	free(p);
}

char *pt_read_file_at(const char *dir, const char *name)
{
	char *p = pt_path(dir, name);
	char *buf = calloc(1, 65536);
	int fd = open(p, O_RDONLY);
	ssize_t n;

	assert_non_null(buf);
	free(p);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	n = read(fd, buf, 65535);
	close(fd);
	assert_true(n >= 0);
	return buf;
}

void pt_unlink_at(const char *dir, const char *name)
{
	char *p = pt_path(dir, name);

	assert_int_equal(unlink(p), 0);
	free(p);
}

int pt_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			n++;
		}
	}
	closedir(d);
	return n;
}

static int saved_stderr = -1;
static FILE *capture;

void pt_stderr_begin(void)
{
	fflush(stderr);
	capture = tmpfile();
	assert_non_null(capture);
	saved_stderr = dup(2);
	assert_true(saved_stderr >= 0);
	assert_true(dup2(fileno(capture), 2) >= 0);
}

char *pt_stderr_end(void)
{
	char *buf = calloc(1, 1 << 20);
	size_t n;

	assert_non_null(buf);
	fflush(stderr);
	assert_true(dup2(saved_stderr, 2) >= 0);
	close(saved_stderr);
	saved_stderr = -1;
	rewind(capture);
	n = fread(buf, 1, (1 << 20) - 1, capture);
	buf[n] = '\0';
	fclose(capture);
	capture = NULL;
	return buf;
}
