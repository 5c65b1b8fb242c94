/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: libpamtest's built-in conversation
 * (src/libpamtest/libpamtest.c and pamtest_conv.c, compiled into this
 * program).  The libpam
 * functions libpamtest calls are stubs defined here: pam_start() and
 * pam_set_item(PAM_CONV) keep a copy of the conversation, and every PAM
 * operation calls it once with a message array read from the fuzz input,
 * then returns what it returned.  So the fuzzer controls the answers, the
 * number of message buffers (none, a NULL array, up to 22: more and fewer
 * than the 16 pypamtest gives), the number of messages per call (0, -1,
 * up to 39, i.e. more than PAM_MAX_NUM_MSG), their styles (valid and
 * invalid), NULL message pointers, NULL and over-long message texts, a NULL
 * message array and a NULL response pointer, plus the conversation a kept
 * handle is left with (PAMTEST_KEEPHANDLE).
 *
 * Buffers are malloc'd with exactly PAM_MAX_MSG_SIZE bytes and filled with
 * a sentinel, so AddressSanitizer reports any write past one, and a model
 * of the documented behaviour (include/libpamtest.h) checks the results:
 * answers handed out in order, a prompt without an answer (and a message
 * of another style) gets a NULL response in a call that succeeds, as
 * upstream's conversation gives (the detached conversation of a kept
 * handle fails it, with *resp NULL), messages copied cut to
 * PAM_MAX_MSG_SIZE - 1 bytes into
 * the next buffer or dropped when none is left, untouched buffers keep the
 * sentinel.  LeakSanitizer checks that replies are freed on every path.
 *
 * Input layout (a byte reader; missing bytes read as 0): answers for
 * ECHO_OFF and ECHO_ON (count byte, then length byte + bytes each), error
 * and info buffer counts, a case count and a flags byte, then for each
 * conversation call: a count byte, then per message a flags byte, a style
 * byte and a length byte followed by the text.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>

#include "libpamtest.h"

#define SENTINEL 0xA5
#define MAX_ANSWERS 7
#define MAX_BUFS 22
#define MAX_MSGS 39

/* ---- the fuzz input ---------------------------------------------------- */

struct reader {
	const uint8_t *p;
	size_t n;
};

static struct reader rd;

static uint8_t rd_byte(void)
{
	if (rd.n == 0) {
		return 0;
	}
	rd.n--;
	return *rd.p++;
}

/* A malloc'd string of len bytes from the input (NUL bytes end it early
 * as far as C is concerned). */
static char *rd_string(size_t len)
{
	char *s = malloc(len + 1);

	if (s == NULL) {
		abort();
	}
	for (size_t i = 0; i < len; i++) {
		s[i] = rd.n > 0 ? (char)rd_byte() : 'x';
	}
	s[len] = '\0';
	return s;
}

static void die(const char *why)
{
	fprintf(stderr, "fuzz_conv: %s\n", why);
	abort();
}

/* ---- the model ---------------------------------------------------------- */

struct list {
	bool null_array;
	size_t n;
	size_t idx;	/* how many this pamtest call used */
};

static struct {
	const char *off[MAX_ANSWERS + 1];
	const char *on[MAX_ANSWERS + 1];
	char *err[MAX_BUFS + 1];
	char *info[MAX_BUFS + 1];
	struct list l_off, l_on, l_err, l_info;
	bool uncertain;	/* a call failed: indexes no longer known */
} m;

static void fill_sentinel(char **bufs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		memset(bufs[i], SENTINEL, PAM_MAX_MSG_SIZE);
	}
}

static bool is_sentinel(const char *b)
{
	for (size_t i = 0; i < PAM_MAX_MSG_SIZE; i++) {
		if ((unsigned char)b[i] != SENTINEL) {
			return false;
		}
	}
	return true;
}

/* Every buffer holds either nothing or one terminated message. */
static void check_bufs_sane(char **bufs, const struct list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (!is_sentinel(bufs[i]) &&
		    memchr(bufs[i], '\0', PAM_MAX_MSG_SIZE) == NULL) {
			die("a message buffer is not NUL-terminated");
		}
		if (!m.uncertain && i >= l->idx && !is_sentinel(bufs[i])) {
			die("a buffer that got no message was written");
		}
	}
}

static bool is_prompt(int style)
{
	return style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON;
}

/* ---- the libpam stubs ---------------------------------------------------- */

struct pam_handle {
	struct pam_conv conv;
};

static struct pam_handle *live;	/* at most one at a time */

int pam_start(const char *service, const char *user,
	      const struct pam_conv *conv, pam_handle_t **pamh)
{
	(void)service;
	(void)user;
	if (live != NULL) {
		die("pam_start misuse");
	}
	live = calloc(1, sizeof(*live));
	if (live == NULL) {
		abort();
	}
	live->conv = *conv;	/* libpam copies it too */
	*pamh = live;
	return PAM_SUCCESS;
}

int pam_end(pam_handle_t *pamh, int status)
{
	(void)status;
	if (pamh != live) {
		die("pam_end of an unknown handle");
	}
	free(live);
	live = NULL;
	return PAM_SUCCESS;
}

int pam_set_item(pam_handle_t *pamh, int type, const void *item)
{
	if (pamh != live || type != PAM_CONV || item == NULL) {
		die("unexpected pam_set_item");
	}
	pamh->conv = *(const struct pam_conv *)item;
	return PAM_SUCCESS;
}

int pam_get_item(const pam_handle_t *pamh, int type, const void **item)
{
	if (pamh != live || type != PAM_CONV || item == NULL) {
		die("unexpected pam_get_item");
	}
	*item = &pamh->conv;
	return PAM_SUCCESS;
}

char **pam_getenvlist(pam_handle_t *pamh)
{
	char **l = calloc(2, sizeof(*l));

	(void)pamh;
	if (l == NULL || (l[0] = strdup("FUZZ=1")) == NULL) {
		abort();
	}
	return l;
}

/*
 * One conversation call with messages from the input.  `nodata` is a
 * conversation without answers and buffers: a call given NULL conv_data,
 * or (`detached`) the one a kept handle is left with, which fails every
 * prompt.
 */
static int conv_round(pam_handle_t *ph, bool nodata, bool detached)
{
	static const int styles[] = { PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON,
		PAM_ERROR_MSG, PAM_TEXT_INFO, 0, PAM_RADIO_TYPE,
		PAM_BINARY_PROMPT, -1, 0x7fffffff };
	struct pam_response *const junk = (struct pam_response *)&styles;
	struct pam_message *msgs = NULL;
	const struct pam_message **ptrs = NULL;
	const struct pam_message **ptrs_arg;
	struct pam_response *resp = junk;
	struct pam_response **respp = &resp;
	const char *expect[MAX_MSGS] = { NULL };
	size_t off_idx = m.l_off.idx, on_idx = m.l_on.idx;
	size_t err_idx = m.l_err.idx, info_idx = m.l_info.idx;
	enum { P_OK, P_FAIL, P_ANY } pred = P_OK;
	uint8_t cnt = rd_byte();
	int built, num;
	int rv;

	if (cnt == 0xff) {
		built = num = 0;
	} else if (cnt == 0xfe) {
		built = 0;
		num = -1;
	} else {
		built = num = cnt % (MAX_MSGS + 1);
	}
	if (built > 0) {
		msgs = calloc((size_t)built, sizeof(*msgs));
		ptrs = calloc((size_t)built, sizeof(*ptrs));
		if (msgs == NULL || ptrs == NULL) {
			abort();
		}
	}
	for (int i = 0; i < built; i++) {
		uint8_t fl = rd_byte();
		uint8_t st = rd_byte();
		uint8_t len = rd_byte();

		msgs[i].msg_style = st < 240 ? styles[st % 4] : styles[st % 9];
		msgs[i].msg = len == 255 ? NULL : rd_string((size_t)len * 8);
		ptrs[i] = (fl & 0x1f) == 0x1f ? NULL : &msgs[i];
	}
	ptrs_arg = ptrs;
	if (num <= 0) {
		pred = P_ANY;	/* nothing to converse about: not specified */
	}
	if (cnt == 0xfd) {
		pred = P_ANY;
		ptrs_arg = NULL;	/* no message array at all */
	}
	if (cnt == 0xfc) {
		pred = P_ANY;
		respp = NULL;
	}

	/* What the documentation says must happen. */
	for (int i = 0; pred == P_OK && i < num; i++) {
		const struct pam_message *p = ptrs[i];

		if (p == NULL) {
			pred = P_ANY;
		} else if (is_prompt(p->msg_style)) {
			bool off = p->msg_style == PAM_PROMPT_ECHO_OFF;
			struct list *l = off ? &m.l_off : &m.l_on;
			size_t *idx = off ? &off_idx : &on_idx;

			if (detached) {
				pred = P_FAIL;
			} else if (nodata || l->null_array || *idx >= l->n) {
				expect[i] = NULL;	/* a NULL answer */
			} else {
				expect[i] = (off ? m.off : m.on)[(*idx)++];
			}
		} else if (p->msg_style == PAM_ERROR_MSG) {
			if (!nodata && !m.l_err.null_array &&
			    err_idx < m.l_err.n) {
				expect[i] = p->msg ? p->msg : "";
				err_idx++;
			}
		} else if (p->msg_style == PAM_TEXT_INFO) {
			if (!nodata && !m.l_info.null_array &&
			    info_idx < m.l_info.n) {
				expect[i] = p->msg ? p->msg : "";
				info_idx++;
			}
		} else if (detached) {
			pred = P_FAIL;	/* another style: a NULL answer, or */
		}			/* detached, a failure */
	}

	rv = ph->conv.conv(num, ptrs_arg, respp, ph->conv.appdata_ptr);

	if (respp != NULL && rv != PAM_SUCCESS && resp != junk && resp != NULL) {
		die("a failed conversation handed out a reply");
	}
	if (rv == PAM_SUCCESS && pred == P_FAIL) {
		die("the detached conversation did not fail a prompt");
	}
	if (rv != PAM_SUCCESS && pred == P_OK) {
		die("a conversation with every answer it needs failed");
	}
	if (rv == PAM_SUCCESS && pred == P_OK) {
		size_t e = m.l_err.idx, n_info = m.l_info.idx;

		if (resp == NULL || resp == junk) {
			die("success without a reply array");
		}
		for (int i = 0; i < num; i++) {
			int style = ptrs[i]->msg_style;

			if (is_prompt(style) && expect[i] == NULL) {
				if (resp[i].resp != NULL) {
					die("an answer where none was left");
				}
			} else if (is_prompt(style)) {
				if (resp[i].resp == NULL ||
				    strcmp(resp[i].resp, expect[i]) != 0) {
					die("wrong answer handed out");
				}
			} else if (resp[i].resp != NULL) {
				die("a reply to a message that is no prompt");
			}
			if ((style == PAM_ERROR_MSG || style == PAM_TEXT_INFO) &&
			    expect[i] != NULL) {
				char *b = style == PAM_ERROR_MSG ?
					  m.err[e++] : m.info[n_info++];
				size_t want = strnlen(expect[i],
						      PAM_MAX_MSG_SIZE - 1);

				if (memcmp(b, expect[i], want) != 0 ||
				    b[want] != '\0') {
					die("message copied wrongly");
				}
			}
		}
		m.l_off.idx = off_idx;
		m.l_on.idx = on_idx;
		m.l_err.idx = err_idx;
		m.l_info.idx = info_idx;
	} else if (!nodata) {
		m.uncertain = true;
	}

	if (rv == PAM_SUCCESS && respp != NULL && resp != NULL &&
	    resp != junk) {
		for (int i = 0; i < num; i++) {
			free(resp[i].resp);
		}
		free(resp);
	}
	for (int i = 0; i < built; i++) {
		free((char *)msgs[i].msg);
	}
	free(msgs);
	free(ptrs);
	return rv;
}

static bool no_conv_data;

static int op(pam_handle_t *ph)
{
	if (ph != live) {
		die("operation on an unknown handle");
	}
	return conv_round(ph, no_conv_data, false);
}

/* The six PAM operations: each runs one conversation call. */
#define STUB_OP(name)                            \
	int name(pam_handle_t *ph, int flags)    \
	{                                        \
		(void)flags;                     \
		return op(ph);                   \
	}
STUB_OP(pam_authenticate)
STUB_OP(pam_setcred)
STUB_OP(pam_acct_mgmt)
STUB_OP(pam_open_session)
STUB_OP(pam_close_session)
STUB_OP(pam_chauthtok)

/* ---- the driver ------------------------------------------------------------ */

static void read_answers(const char **a, struct list *l)
{
	uint8_t c = rd_byte() % (MAX_ANSWERS + 2);

	l->null_array = c == MAX_ANSWERS + 1;
	l->n = l->null_array ? 0 : c;
	l->idx = 0;
	for (size_t i = 0; i < l->n; i++) {
		a[i] = rd_string(rd_byte() % 64);
	}
	a[l->n] = NULL;
}

static void alloc_bufs(char **b, struct list *l)
{
	uint8_t c = rd_byte() % (MAX_BUFS + 2);

	l->null_array = c == MAX_BUFS + 1;
	l->n = l->null_array ? 0 : c;
	l->idx = 0;
	for (size_t i = 0; i < l->n; i++) {
		b[i] = malloc(PAM_MAX_MSG_SIZE);	/* exactly: ASan */
		if (b[i] == NULL) {
			abort();
		}
	}
	b[l->n] = NULL;
	fill_sentinel(b, l->n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum pamtest_ops ops[] = { PAMTEST_AUTHENTICATE,
		PAMTEST_SETCRED, PAMTEST_ACCOUNT, PAMTEST_OPEN_SESSION,
		PAMTEST_CLOSE_SESSION, PAMTEST_CHAUTHTOK, PAMTEST_GETENVLIST,
		(enum pamtest_ops)99 };
	struct pam_testcase cases[6];
	struct pamtest_conv_data cd;
	size_t ncases;
	uint8_t flags;
	bool keep;
	enum pamtest_err perr;

	rd.p = data;
	rd.n = size;
	memset(&m, 0, sizeof(m));
	read_answers(m.off, &m.l_off);
	read_answers(m.on, &m.l_on);
	alloc_bufs(m.err, &m.l_err);
	alloc_bufs(m.info, &m.l_info);
	ncases = 1 + rd_byte() % 5;
	flags = rd_byte();
	keep = (flags & 1) != 0;

	for (size_t i = 0; i < ncases; i++) {
		uint8_t o = rd_byte();
		struct pam_testcase tc = pam_test(ops[o < 250 ? o % 6 : o % 8],
						  PAM_SUCCESS);

		cases[i] = tc;
	}
	if (keep) {
		struct pam_testcase tc = pam_test(PAMTEST_KEEPHANDLE,
						  PAM_SUCCESS);

		cases[ncases++] = tc;
	}

	cd.in_echo_off = m.l_off.null_array ? NULL : m.off;
	cd.in_echo_on = m.l_on.null_array ? NULL : m.on;
	cd.out_err = m.l_err.null_array ? NULL : m.err;
	cd.out_info = m.l_info.null_array ? NULL : m.info;

	/* Without conv_data nothing can be answered or copied: the model
	 * then expects every buffer untouched. */
	no_conv_data = (flags & 2) != 0;
	perr = _pamtest("fuzz", "fuzz", no_conv_data ? NULL : &cd, cases,
			ncases, NULL);
	check_bufs_sane(m.err, &m.l_err);
	check_bufs_sane(m.info, &m.l_info);

	for (size_t i = 0; i < ncases; i++) {
		if (cases[i].pam_operation == PAMTEST_GETENVLIST) {
			pamtest_free_env(cases[i].case_out.envlist);
		}
	}
	if (live != NULL) {
		/* a kept handle: its conversation must not point into the
		 * finished call (ASan: stack-use-after-return) and must work
		 * without data */
		if (perr != PAMTEST_ERR_OK || !keep ||
		    cases[ncases - 1].case_out.ph != live) {
			die("a handle outlived its call without KEEPHANDLE");
		}
		fill_sentinel(m.err, m.l_err.n);
		fill_sentinel(m.info, m.l_info.n);
		(void)conv_round(live, true, true);
		m.uncertain = false;
		m.l_err.idx = m.l_info.idx = 0;
		check_bufs_sane(m.err, &m.l_err);
		check_bufs_sane(m.info, &m.l_info);
		pam_end(live, PAM_SUCCESS);
	}

	for (size_t i = 0; i < m.l_off.n; i++) {
		free((char *)m.off[i]);
	}
	for (size_t i = 0; i < m.l_on.n; i++) {
		free((char *)m.on[i]);
	}
	for (size_t i = 0; i < m.l_err.n; i++) {
		free(m.err[i]);
	}
	for (size_t i = 0; i < m.l_info.n; i++) {
		free(m.info[i]);
	}
	return 0;
}
