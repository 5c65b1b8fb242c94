/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A test-only PAM module for the libpamtest tests: it drives the
 * application's conversation exactly as a service line says, so the tests
 * can check libpamtest's conversation (order of answers, message copying,
 * buffer ends, batching) and its handling of return values and pam_end().
 * Never installed.
 *
 * Options, acted on in order (chauthtok acts in its UPDATE_AUTHTOK pass):
 *   off=ANSWER   PAM_PROMPT_ECHO_OFF prompt; PAM_AUTH_ERR unless ANSWER comes back
 *   on=ANSWER    PAM_PROMPT_ECHO_ON prompt; likewise
 *   offlen=N     PAM_PROMPT_ECHO_OFF prompt; PAM_AUTH_ERR unless the answer
 *                is N characters "abcd...zabc..." (libpamtest's long answer)
 *   ifnull=N     return N when a call succeeds without a response array
 *   ifnullentry=N  return N when a call succeeds with a NULL answer to a
 *                prompt (both checked before the answers are compared)
 *   logans       log every answer with pam_syslog ("answer: ANSWER", at
 *                LOG_ERR): a careless module, for the masking tests
 *   style=N      a message of style N ("lpt style"; a binary or radio
 *                prompt, or one no PAM knows) answered like a prompt:
 *                any answer will do, ifnullentry= sees a NULL one
 *   info=TEXT    PAM_TEXT_INFO message; each "%u" in TEXT becomes PAM_USER
 *                (empty when unset), as in Linux-PAM's pam_echo
 *   err=TEXT     PAM_ERROR_MSG message, "%u" likewise
 *   long=N       PAM_TEXT_INFO message of N characters "abc...zabc..."
 *   batch        send all messages of the line in one conversation call
 *   flags=N      PAM_SERVICE_ERR unless the flags passed are N (not chauthtok)
 *   putenv=N=V   pam_putenv("N=V")
 *   endstatus    at pam_end() setenv("LPT_END_STATUS", <status>) in the process
 *   getuser      pam_get_user() (libpam prompts for a user not yet known)
 *   sleep=N      sleep N seconds (a transaction that takes a while)
 *   waitfor=PATH wait until PATH exists (a test acts meanwhile), at most
 *                600 s (only a hang takes that long), then go on
 *   pidfile=PATH write "<pid>\n" of the process running PAM to PATH (through
 *                PATH.tmp and rename, so a reader sees all of it or nothing)
 *   ret=N        return N (default PAM_SUCCESS) once everything else passed
 *   FN=N         the same, but only in pam_sm_FN (authenticate, setcred,
 *                acct_mgmt, open_session, close_session, chauthtok), where
 *                it wins over ret=: one line gives each function its code,
 *                as Linux-PAM's pam_debug does
 * A failed conversation call makes the module return what it returned.
 * These options stand in for Linux-PAM's pam_debug, pam_echo, pam_env and
 * pam_exec, so that the tests using them run on OpenPAM too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include <security/pam_modules.h>

#define LPT_MAX_MSGS 32

/* Messages waiting to be sent; text is owned by the module (strdup/malloc). */
struct lpt_batch {
	struct pam_message msgs[LPT_MAX_MSGS];
	char *text[LPT_MAX_MSGS];
	const char *expect[LPT_MAX_MSGS]; /* answer expected for prompts; argv-owned */
	long expect_len[LPT_MAX_MSGS];    /* offlen=N prompts: N; else -1 */
	int any[LPT_MAX_MSGS];            /* style=N: any answer will do */
	int n;
	int ifnull;      /* returned for a NULL response array; 0: PAM_AUTH_ERR */
	int ifnullentry; /* returned for a NULL answer; 0: PAM_AUTH_ERR */
	int logans;      /* log every answer */
};

static void lpt_batch_clear(struct lpt_batch *b)
{
	int ifnull = b->ifnull;
	int ifnullentry = b->ifnullentry;
	int logans = b->logans;

	for (int i = 0; i < b->n; i++) {
		free(b->text[i]);
	}
	memset(b, 0, sizeof(*b));
	b->ifnull = ifnull;
	b->ifnullentry = ifnullentry;
	b->logans = logans;
}

/* Whether s is the n characters "abcd...zabc...". */
static int lpt_is_long(const char *s, long n)
{
	if ((long)strlen(s) != n) {
		return 0;
	}
	for (long i = 0; i < n; i++) {
		if (s[i] != (char)('a' + i % 26)) {
			return 0;
		}
	}
	return 1;
}

/* pam_syslog(pamh, LOG_ERR, "answer: %s", answer): found at run time, since
 * OpenPAM's libpam has none (the wrapper has it there too); else syslog. */
static void lpt_log_answer(pam_handle_t *pamh, const char *answer)
{
	typedef void logfn(const pam_handle_t *, int, const char *, ...);
	void *sym = dlsym(RTLD_DEFAULT, "pam_syslog");
	logfn *f;

	if (sym == NULL) {
		syslog(LOG_ERR, "answer: %s", answer);
		return;
	}
	memcpy(&f, &sym, sizeof(f));
	f(pamh, LOG_ERR, "answer: %s", answer);
}

/* Send the queued messages in one call and check the answers. */
static int lpt_flush(pam_handle_t *pamh, struct lpt_batch *b)
{
	const struct pam_conv *conv = NULL;
	const struct pam_message *ptrs[LPT_MAX_MSGS];
	struct pam_response *resp = NULL;
	int rv;

	if (b->n == 0) {
		return PAM_SUCCESS;
	}
	rv = pam_get_item(pamh, PAM_CONV, (const void **)&conv);
	if (rv != PAM_SUCCESS || conv == NULL || conv->conv == NULL) {
		rv = PAM_CONV_ERR;
		goto out;
	}
	for (int i = 0; i < b->n; i++) {
		ptrs[i] = &b->msgs[i];
	}
	rv = conv->conv(b->n, ptrs, &resp, conv->appdata_ptr);
	if (rv != PAM_SUCCESS) {
		goto out;
	}
	for (int i = 0; i < b->n; i++) {
		const char *got = resp != NULL ? resp[i].resp : NULL;
		int prompt = b->expect[i] != NULL || b->expect_len[i] >= 0 ||
			     b->any[i];

		if (prompt && got != NULL && b->logans) {
			lpt_log_answer(pamh, got);
		}

		if (prompt && resp == NULL && b->ifnull != 0) {
			rv = b->ifnull;
			break;
		}
		if (prompt && got == NULL && b->ifnullentry != 0) {
			rv = b->ifnullentry;
			break;
		}
		if (b->expect[i] != NULL &&
		    (got == NULL || strcmp(got, b->expect[i]) != 0)) {
			rv = PAM_AUTH_ERR;
		}
		if (b->expect_len[i] >= 0 &&
		    (got == NULL || !lpt_is_long(got, b->expect_len[i]))) {
			rv = PAM_AUTH_ERR;
		}
	}
out:
	if (resp != NULL) {
		for (int i = 0; i < b->n; i++) {
			free(resp[i].resp);
		}
		free(resp);
	}
	lpt_batch_clear(b);
	return rv;
}

static int lpt_queue(pam_handle_t *pamh, struct lpt_batch *b, int batch,
		     int style, char *text, const char *expect, long expect_len)
{
	if (text == NULL) {
		return PAM_BUF_ERR;
	}
	if (b->n == LPT_MAX_MSGS) {
		int rv = lpt_flush(pamh, b);
		if (rv != PAM_SUCCESS) {
			free(text);
			return rv;
		}
	}
	b->msgs[b->n].msg_style = style;
	b->msgs[b->n].msg = text;
	b->text[b->n] = text;
	b->expect[b->n] = expect;
	b->expect_len[b->n] = expect_len;
	b->any[b->n] = expect == NULL && expect_len == -2;
	if (b->any[b->n]) {
		b->expect_len[b->n] = -1;
	}
	b->n++;
	return batch ? PAM_SUCCESS : lpt_flush(pamh, b);
}

static char *lpt_long_text(long n)
{
	char *s = malloc((size_t)n + 1);

	if (s == NULL) {
		return NULL;
	}
	for (long i = 0; i < n; i++) {
		s[i] = (char)('a' + i % 26);
	}
	s[n] = '\0';
	return s;
}

/* TEXT with each "%u" replaced by PAM_USER (nothing when unset); the
 * caller owns the result (NULL when out of memory). */
static char *lpt_expand(pam_handle_t *pamh, const char *text)
{
	const void *item = NULL;
	const char *user;
	size_t ulen, len = 0;
	char *out;

	if (pam_get_item(pamh, PAM_USER, &item) != PAM_SUCCESS || item == NULL) {
		item = "";
	}
	user = item;
	ulen = strlen(user);
	for (const char *p = text; *p != '\0'; p++) {
		if (p[0] == '%' && p[1] == 'u') {
			len += ulen;
			p++;
		} else {
			len++;
		}
	}
	out = malloc(len + 1);
	if (out == NULL) {
		return NULL;
	}
	len = 0;
	for (const char *p = text; *p != '\0'; p++) {
		if (p[0] == '%' && p[1] == 'u') {
			memcpy(out + len, user, ulen);
			len += ulen;
			p++;
		} else {
			out[len++] = *p;
		}
	}
	out[len] = '\0';
	return out;
}

/* Write "<pid>\n" to path, whole or not at all (PAM_SYSTEM_ERR). */
static int lpt_pidfile(const char *path)
{
	char *tmp = NULL;
	FILE *f = NULL;
	int rv = PAM_SYSTEM_ERR;

	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		tmp = NULL;
		goto out;
	}
	f = fopen(tmp, "w");
	if (f == NULL) {
		goto out;
	}
	if (fprintf(f, "%ld\n", (long)getpid()) < 0) {
		goto out;
	}
	if (fclose(f) != 0) {
		f = NULL;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) == 0) {
		rv = PAM_SUCCESS;
	}
out:
	if (f != NULL) {
		fclose(f);
	}
	free(tmp);
	return rv;
}

static void lpt_end_cleanup(pam_handle_t *pamh, void *data, int error_status)
{
	char buf[32];

	(void)pamh;
	(void)data;
	snprintf(buf, sizeof(buf), "%d", error_status);
	setenv("LPT_END_STATUS", buf, 1);
}

static int lpt_run(pam_handle_t *pamh, const char *fn, int flags,
		   int check_flags, int argc, const char **argv)
{
	struct lpt_batch b;
	int batch = 0;
	int ret = PAM_SUCCESS;
	int rv = PAM_SUCCESS;
	int fn_ret = -1; /* FN=N for this function; -1: none */
	size_t fnlen = strlen(fn);

	memset(&b, 0, sizeof(b));
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], fn, fnlen) == 0 && argv[i][fnlen] == '=') {
			fn_ret = (int)strtol(argv[i] + fnlen + 1, NULL, 10);
		} else if (strcmp(argv[i], "batch") == 0) {
			batch = 1;
		} else if (strncmp(argv[i], "ifnull=", 7) == 0) {
			b.ifnull = (int)strtol(argv[i] + 7, NULL, 10);
		} else if (strncmp(argv[i], "ifnullentry=", 12) == 0) {
			b.ifnullentry = (int)strtol(argv[i] + 12, NULL, 10);
		} else if (strcmp(argv[i], "logans") == 0) {
			b.logans = 1;
		}
	}
	for (int i = 0; i < argc && rv == PAM_SUCCESS; i++) {
		const char *a = argv[i];

		if (strncmp(a, "off=", 4) == 0) {
			rv = lpt_queue(pamh, &b, batch, PAM_PROMPT_ECHO_OFF,
				       strdup("off: "), a + 4, -1);
		} else if (strncmp(a, "offlen=", 7) == 0) {
			rv = lpt_queue(pamh, &b, batch, PAM_PROMPT_ECHO_OFF,
				       strdup("offlen: "), NULL,
				       strtol(a + 7, NULL, 10));
		} else if (strncmp(a, "on=", 3) == 0) {
			rv = lpt_queue(pamh, &b, batch, PAM_PROMPT_ECHO_ON,
				       strdup("on: "), a + 3, -1);
		} else if (strncmp(a, "style=", 6) == 0) {
			rv = lpt_queue(pamh, &b, batch, (int)strtol(a + 6, NULL, 10),
				       strdup("lpt style"), NULL, -2);
		} else if (strncmp(a, "info=", 5) == 0) {
			rv = lpt_queue(pamh, &b, batch, PAM_TEXT_INFO,
				       lpt_expand(pamh, a + 5), NULL, -1);
		} else if (strncmp(a, "err=", 4) == 0) {
			rv = lpt_queue(pamh, &b, batch, PAM_ERROR_MSG,
				       lpt_expand(pamh, a + 4), NULL, -1);
		} else if (strncmp(a, "long=", 5) == 0) {
			rv = lpt_queue(pamh, &b, batch, PAM_TEXT_INFO,
				       lpt_long_text(strtol(a + 5, NULL, 10)), NULL, -1);
		} else if (strncmp(a, "flags=", 6) == 0) {
			if (check_flags && flags != (int)strtol(a + 6, NULL, 0)) {
				rv = PAM_SERVICE_ERR;
			}
		} else if (strncmp(a, "putenv=", 7) == 0) {
			rv = pam_putenv(pamh, a + 7);
		} else if (strcmp(a, "endstatus") == 0) {
			rv = pam_set_data(pamh, "lpt_test_end", pamh, lpt_end_cleanup);
		} else if (strcmp(a, "getuser") == 0) {
			const char *user = NULL;

			rv = pam_get_user(pamh, &user, NULL);
		} else if (strncmp(a, "sleep=", 6) == 0) {
			sleep((unsigned int)strtoul(a + 6, NULL, 10));
		} else if (strncmp(a, "pidfile=", 8) == 0) {
			rv = lpt_pidfile(a + 8);
		} else if (strncmp(a, "waitfor=", 8) == 0) {
			for (long n = 0; n < 60000 && access(a + 8, F_OK) != 0;
			     n++) {
				usleep(10000);
			}
		} else if (strncmp(a, "ret=", 4) == 0) {
			ret = (int)strtol(a + 4, NULL, 10);
		}
	}
	if (rv == PAM_SUCCESS) {
		rv = lpt_flush(pamh, &b);
	}
	lpt_batch_clear(&b);
	if (rv != PAM_SUCCESS) {
		return rv;
	}
	return fn_ret >= 0 ? fn_ret : ret;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc,
				   const char **argv)
{
	return lpt_run(pamh, "authenticate", flags, 1, argc, argv);
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc,
			      const char **argv)
{
	return lpt_run(pamh, "setcred", flags, 1, argc, argv);
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc,
				const char **argv)
{
	return lpt_run(pamh, "acct_mgmt", flags, 1, argc, argv);
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc,
				   const char **argv)
{
	return lpt_run(pamh, "open_session", flags, 1, argc, argv);
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc,
				    const char **argv)
{
	return lpt_run(pamh, "close_session", flags, 1, argc, argv);
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc,
				const char **argv)
{
	if (!(flags & PAM_UPDATE_AUTHTOK)) {
		return PAM_SUCCESS;
	}
	return lpt_run(pamh, "chauthtok", flags, 0, argc, argv);
}
