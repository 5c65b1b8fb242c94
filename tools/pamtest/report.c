/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output of pamtest(1): human-readable (default), TAP version 13 and JUnit
 * XML.  Human and TAP output is written as each scenario finishes; JUnit is
 * written at the end because its header carries the totals.  Failure texts
 * were made safe by show() (secrets hidden, control characters escaped);
 * here they are only escaped for the output format.  File names and the
 * texts of failures may still hold control characters (a newline in a
 * scenario's file name): in the human and TAP output they are written as
 * \xNN (pwrap_buf_text), so that no line of a report can be forged.
 */
#define _GNU_SOURCE
#include "pwrap_buf.h"
#include "scenario.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static size_t count_failed(const struct file_results *fr)
{
	size_t n = 0;

	for (size_t i = 0; i < fr->nres; i++) {
		n += !fr->res[i].passed;
	}
	return n;
}

/*
 * The code point of the UTF-8 sequence at p and its length in *len, or -1
 * when it is not well-formed: a stray or missing continuation byte, an
 * overlong form (C0 AF for '/'), a surrogate (ED A0 80) or beyond U+10FFFF.
 */
static long utf8_decode(const unsigned char *p, size_t *len)
{
	static const long least[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t n;
	long cp;

	if (p[0] < 0x80) {
		*len = 1;
		return p[0];
	}
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return -1;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) { /* also stops at the NUL */
			return -1;
		}
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
		return -1;
	}
	*len = n;
	return cp;
}

/* XML 1.0 allows only these characters, even as &#...; references. */
static int xml_char(long c)
{
	return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
	       (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

/*
 * XML text or attribute value.  Whatever a name or message holds, the
 * output is well-formed: malformed UTF-8 and characters XML does not allow
 * (control bytes, U+FFFE, U+FFFF) become U+FFFD.
 */
static void xml_put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");

	while (*p != '\0') {
		size_t n = 1;
		long c = utf8_decode(p, &n);

		if (c < 0 || !xml_char(c)) {
			fputs("\xef\xbf\xbd", f);
			p += n;
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\t': fputs("&#9;", f); break;
		case '\r': fputs("&#13;", f); break;
		default: fwrite(p, 1, n, f);
		}
		p += n;
	}
}

/* fflush, keeping the first write error's errno (a later flush of an
 * emptied buffer would succeed and hide it). */
static void flush(struct reporter *r)
{
	if (fflush(r->out) != 0 && r->err == 0) {
		r->err = errno != 0 ? errno : EIO;
	}
}

/* s on one line of text: control characters (newlines too) as \xNN. */
static void put_text(FILE *f, const char *s)
{
	struct pwrap_buf b = {0};

	pwrap_buf_text(&b, s);
	fputs(b.failed || b.p == NULL ? "?" : b.p, f);
	pwrap_buf_free(&b);
}

/* TAP descriptions must not contain '#' (it starts a directive) or
 * control characters (a newline would start a line of its own). */
static void tap_put(FILE *f, const char *s)
{
	struct pwrap_buf b = {0};

	pwrap_buf_text(&b, s);
	for (const char *p = b.failed || b.p == NULL ? "?" : b.p; *p != '\0'; p++) {
		if (*p == '#') {
			fputs("\\#", f);
		} else {
			fputc(*p, f);
		}
	}
	pwrap_buf_free(&b);
}

void report_begin(struct reporter *r)
{
	if (r->fmt == FMT_TAP) {
		fprintf(r->out, "TAP version 13\n1..%zu\n", r->total);
		flush(r);
	}
}

void report_file(struct reporter *r, const struct file_results *fr)
{
	size_t failed = count_failed(fr);

	r->files++;
	r->failed += failed;
	r->passed += fr->nres - failed;
	if (r->fmt == FMT_JUNIT) {
		return;
	}
	if (r->fmt == FMT_HUMAN && (!r->quiet || failed > 0 || fr->error != NULL)) {
		put_text(r->out, fr->sc->path);
		fputc('\n', r->out);
	}
	if (r->fmt == FMT_HUMAN && fr->error != NULL) {
		fputs("  ERROR ", r->out);
		put_text(r->out, fr->error);
		fputc('\n', r->out);
	}
	for (size_t i = 0; i < fr->nres; i++) {
		const struct result *res = &fr->res[i];
		if (r->fmt == FMT_TAP) {
			fprintf(r->out, "%sok %zu - ", res->passed ? "" : "not ", ++r->counter);
			tap_put(r->out, fr->sc->path);
			fputs(": ", r->out);
			tap_put(r->out, res->name != NULL ? res->name : "?");
			fputc('\n', r->out);
			for (size_t j = 0; j < res->nfailures; j++) {
				fputs("# ", r->out);
				put_text(r->out, res->failures[j]);
				fputc('\n', r->out);
			}
			continue;
		}
		if (res->passed) {
			if (!r->quiet) {
				fprintf(r->out, "  ok    %s\n", res->name != NULL ? res->name : "?");
			}
			continue;
		}
		fprintf(r->out, "  FAIL  %s\n", res->name != NULL ? res->name : "?");
		for (size_t j = 0; j < res->nfailures; j++) {
			fputs("        ", r->out);
			put_text(r->out, res->failures[j]);
			fputc('\n', r->out);
		}
	}
	flush(r);
}

static void junit(struct reporter *r, const struct file_results *all, size_t nall)
{
	char host[256] = "localhost", stamp[32] = "";
	size_t errors = 0;
	double total_time = 0;
	time_t t = time(NULL);
	struct tm tm;
	FILE *f = r->out;

	if (gethostname(host, sizeof(host)) != 0) {
		strcpy(host, "localhost");
	}
	host[sizeof(host) - 1] = '\0';
	if (localtime_r(&t, &tm) != NULL) {
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	}
	for (size_t i = 0; i < nall; i++) {
		total_time += all[i].seconds;
		if (all[i].error != NULL) {
			errors += all[i].nres;
		}
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"pamtest\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.6f\">\n",
		r->passed + r->failed, r->failed - errors, errors, total_time);
	for (size_t i = 0; i < nall; i++) {
		const struct file_results *fr = &all[i];
		size_t failed = count_failed(fr);
		int is_err = fr->error != NULL;
		char *copy = strdup(fr->sc->path);
		char *cls = copy != NULL ? basename(copy) : NULL;
		char *dot = cls != NULL ? strrchr(cls, '.') : NULL;

		if (dot != NULL && dot != cls) {
			*dot = '\0';
		}
		for (char *p = cls; p != NULL && *p != '\0'; p++) {
			if (*p == '.') {
				*p = '_';
			}
		}
		fputs("  <testsuite name=\"", f);
		xml_put(f, fr->sc->path);
		fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" time=\"%.6f\" "
			   "timestamp=\"%s\" hostname=\"", fr->nres, is_err ? 0 : failed,
			is_err ? fr->nres : 0, fr->seconds, stamp);
		xml_put(f, host);
		fputs("\">\n", f);
		for (size_t j = 0; j < fr->nres; j++) {
			const struct result *res = &fr->res[j];
			fputs("    <testcase name=\"", f);
			xml_put(f, res->name);
			fputs("\" classname=\"", f);
			xml_put(f, cls != NULL ? cls : "pamtest");
			fputs("\" file=\"", f);
			xml_put(f, fr->sc->path);
			fprintf(f, "\" line=\"%d\" time=\"%.6f\"", res->step->line, res->seconds);
			if (res->passed) {
				fputs("/>\n", f);
				continue;
			}
			fprintf(f, ">\n      <%s message=\"", is_err ? "error" : "failure");
			xml_put(f, res->nfailures > 0 ? res->failures[0] : "failed");
			fprintf(f, "\" type=\"%s\">", is_err ? "setup" : "expectation");
			for (size_t k = 0; k < res->nfailures; k++) {
				xml_put(f, res->failures[k]);
				if (k + 1 < res->nfailures) {
					fputs("\n", f);
				}
			}
			fprintf(f, "</%s>\n    </testcase>\n", is_err ? "error" : "failure");
		}
		fputs("  </testsuite>\n", f);
		free(copy);
	}
	fputs("</testsuites>\n", f);
}

void report_end(struct reporter *r, const struct file_results *all, size_t nall)
{
	switch (r->fmt) {
	case FMT_JUNIT:
		junit(r, all, nall);
		break;
	case FMT_TAP:
		fprintf(r->out, "# %zu passed, %zu failed\n", r->passed, r->failed);
		break;
	case FMT_HUMAN:
		fprintf(r->out, "%s: %zu passed, %zu failed (%zu scenario%s)\n",
			r->failed > 0 ? "FAILED" : "OK", r->passed, r->failed, r->files,
			r->files == 1 ? "" : "s");
		break;
	}
	flush(r);
}

int report_close(struct reporter *r)
{
	int rc = 0;

	flush(r);
	if (r->err != 0 || ferror(r->out)) {
		rc = -1;
	}
	if (r->out != stdout && fclose(r->out) != 0) {
		if (r->err == 0) {
			r->err = errno;
		}
		rc = -1;
	}
	r->out = NULL;
	errno = r->err;
	return rc;
}
