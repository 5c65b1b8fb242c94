/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest --trace FILE: the wrapper's module trace (PAM_WRAPPER_TRACE, see
 * libpam_wrapper(7)) of every scenario, appended to FILE ('-': stderr).
 * The wrapper writes each scenario's records into its private directory;
 * they are then copied to FILE with the places in a service written inline
 * in the scenario ("<private dir>/<service>:<N>") named as the user wrote
 * them: "<scenario>:<line>".  Records name no password (the wrapper writes
 * none).
 */
#define _GNU_SOURCE
#include "pwrap_tool.h"
#include "scenario.h"

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *pamtest_trace;               /* set by main(); NULL: no trace */
const char *pamtest_trace_format = "json";

char *trace_path(const char *dir)
{
	char *p = NULL;

	if (asprintf(&p, "%s/.trace", dir) < 0) {
		return NULL;
	}
	return p;
}

/* The scenario line of line n of the inline service name, or 0. */
static int scenario_line(const struct scenario *sc, const char *name,
			 size_t len, unsigned long n)
{
	for (size_t i = 0; i < sc->nsvcs; i++) {
		const struct service *sv = &sc->svcs[i];

		if (sv->text != NULL && strlen(sv->name) == len &&
		    strncmp(sv->name, name, len) == 0 && n >= 1 &&
		    n <= sv->nlines) {
			return sv->lines[n - 1];
		}
	}
	return 0;
}

/* text with every "<dir>/<service>:<N>" of an inline service replaced. */
static char *renamed(const struct scenario *sc, const char *dir, const char *text)
{
	/* a path that JSON would escape is left alone (as is the record) */
	int plain = strpbrk(sc->path, "\"\\") == NULL;
	size_t dl = strlen(dir);
	struct pwrap_buf b = {0};
	const char *p = text, *hit;

	pwrap_buf_str(&b, "");
	while ((hit = strstr(p, dir)) != NULL) {
		const char *name = hit + dl + 1, *colon;
		char *end = NULL;
		unsigned long n = 0;
		int line = 0;

		pwrap_buf_add(&b, p, (size_t)(hit - p));
		colon = hit[dl] == '/' ? strchr(name, ':') : NULL;
		if (colon != NULL && colon[1] >= '1' && colon[1] <= '9') {
			n = strtoul(colon + 1, &end, 10);
		}
		if (plain && n > 0 &&
		    memchr(name, '/', (size_t)(colon - name)) == NULL) {
			line = scenario_line(sc, name, (size_t)(colon - name), n);
		}
		if (line > 0) {
			pwrap_buf_fmt(&b, "%s:%d", sc->path, line);
			p = end;
		} else {
			pwrap_buf_add(&b, hit, dl);
			p = hit + dl;
		}
	}
	pwrap_buf_str(&b, p);
	return pwrap_buf_take(&b);
}

int trace_collect(const struct scenario *sc, const char *dir)
{
	char *tmp = trace_path(dir), *text = NULL, *out = NULL;
	size_t len = 0, off = 0;
	FILE *f;
	int fd = -1, rc = -1;

	if (tmp == NULL) {
		return -1;
	}
	f = fopen(tmp, "re");
	if (f == NULL) {
		rc = errno == ENOENT ? 0 : -1;	/* no transaction ran */
		if (rc != 0) {
			warn("%s", tmp);
		}
		goto out;
	}
	text = calloc(1, 1);
	for (char chunk[8192]; text != NULL;) {
		size_t n = fread(chunk, 1, sizeof(chunk), f);
		char *t;

		if (n == 0) {
			break;
		}
		t = realloc(text, len + n + 1);
		if (t == NULL) {
			free(text);
			text = NULL;
			break;
		}
		text = t;
		memcpy(text + len, chunk, n);
		len += n;
		text[len] = '\0';
	}
	fclose(f);
	out = text != NULL ? renamed(sc, dir, text) : NULL;
	if (out == NULL) {
		warnx("--trace: out of memory");
		goto out;
	}
	fd = strcmp(pamtest_trace, "-") == 0 ? STDERR_FILENO :
		open(pamtest_trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		warn("--trace %s", pamtest_trace);
		goto out;
	}
	for (len = strlen(out); off < len;) {
		ssize_t n = write(fd, out + off, len - off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			warn("--trace %s", pamtest_trace);
			goto out;
		}
		off += (size_t)n;
	}
	rc = 0;
out:
	if (fd > STDERR_FILENO) {
		close(fd);
	}
	if (tmp != NULL) {
		unlink(tmp);
	}
	free(tmp);
	free(text);
	free(out);
	return rc;
}
