/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Captures what PAM modules log.  pam_syslog ends in libpam's call of
 * syslog (__syslog_chk in Debian's fortified build); the test programs are
 * linked with exported symbols, so these definitions take precedence for
 * libpam and the lines land in memory, where tests look for the
 * "file:line: reason" messages, instead of in the system log.
 * This file deliberately does not include <syslog.h>, whose fortified
 * inline wrappers would clash with these definitions.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modtest.h"

void syslog(int pri, const char *fmt, ...);
void vsyslog(int pri, const char *fmt, va_list ap);
void __syslog_chk(int pri, int flag, const char *fmt, ...);
void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap);

static char **mt_lines;
static int *mt_prios; /* each line's priority, without the facility */
static size_t mt_nlines;
static size_t mt_cap;

static void mt_log_v(int pri, const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0) {
		return;
	}
	if (mt_nlines == mt_cap) {
		size_t ncap = mt_cap ? mt_cap * 2 : 64;
		char **n = realloc(mt_lines, ncap * sizeof(*n));
		int *p = n ? realloc(mt_prios, ncap * sizeof(*p)) : NULL;

		if (n != NULL) {
			mt_lines = n;
		}
		if (p == NULL) {
			free(s);
			return;
		}
		mt_prios = p;
		mt_cap = ncap;
	}
	mt_prios[mt_nlines] = pri & 7; /* LOG_PRIMASK */
	mt_lines[mt_nlines++] = s;
	if (getenv("MT_LOG_STDERR") != NULL) {
		fprintf(stderr, "syslog: %s\n", s);
	}
}

void syslog(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mt_log_v(pri, fmt, ap);
	va_end(ap);
}

void vsyslog(int pri, const char *fmt, va_list ap)
{
	mt_log_v(pri, fmt, ap);
}

void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
	va_list ap;

	(void)flag;
	va_start(ap, fmt);
	mt_log_v(pri, fmt, ap);
	va_end(ap);
}

void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	mt_log_v(pri, fmt, ap);
}

void mt_log_clear(void)
{
	for (size_t i = 0; i < mt_nlines; i++) {
		free(mt_lines[i]);
	}
	free(mt_lines);
	free(mt_prios);
	mt_lines = NULL;
	mt_prios = NULL;
	mt_nlines = 0;
	mt_cap = 0;
}

bool mt_log_has(const char *needle)
{
	for (size_t i = 0; i < mt_nlines; i++) {
		if (strstr(mt_lines[i], needle) != NULL) {
			return true;
		}
	}
	return false;
}

size_t mt_log_count_has(const char *needle)
{
	size_t n = 0;

	for (size_t i = 0; i < mt_nlines; i++) {
		n += strstr(mt_lines[i], needle) != NULL;
	}
	return n;
}

size_t mt_log_count_prio(int prio, const char *needle)
{
	size_t n = 0;

	for (size_t i = 0; i < mt_nlines; i++) {
		n += mt_prios[i] == prio && strstr(mt_lines[i], needle) != NULL;
	}
	return n;
}

size_t mt_log_count(void)
{
	return mt_nlines;
}

void mt_log_dump(void)
{
	for (size_t i = 0; i < mt_nlines; i++) {
		fprintf(stderr, "  log: %s\n", mt_lines[i]);
	}
}
