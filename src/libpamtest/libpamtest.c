/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libpamtest: runs a list of PAM operations in one transaction and compares
 * each result with the expected one (see include/libpamtest.h and
 * libpamtest(3)).  The built-in conversation (pamtest_conv.c) answers
 * prompts from the caller's answer lists and copies messages into the
 * caller's buffers.  Its state lives in the frame of the running call;
 * before the call returns the handle is either ended or, when kept, given
 * a conversation without state, so a kept handle never points into a dead
 * frame.
 *
 * Fault injection (_pamtest_faults(), _pamtest_conv_faults()) puts
 * pamtest_fault_conv in front of the conversation that would otherwise
 * answer (the built-in one or the caller's): it counts the calls and, on
 * the calls struct pamtest_conv_faults names, fails, answers with no array
 * or with NULL answers, or answers the prompts with a long string.  Its
 * state lives in the running call's frame too, so a kept handle gets the
 * conversation behind it back, never the fault layer.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>

#include "libpamtest.h"
#include "pamtest_conv.h"
#include "pamtest_preload.h"

/*
 * State of the fault layer for one call: the caller's faults (their calls
 * member counts the conversation calls) and the conversation that answers
 * whatever is not faulted.  Both are borrowed for the duration of the call.
 */
struct pamtest_fault_state {
	struct pamtest_conv_faults *faults;
	struct pam_conv inner;
};

/* Whether the fault "at" (0 never, PAMTEST_CONV_EVERY_CALL, N) hits call. */
static bool fault_hits(unsigned int at, unsigned int call)
{
	return at != 0 && (at == PAMTEST_CONV_EVERY_CALL || at == call);
}

/* A malloc'd string "abcd...zabc..." of len characters, or NULL. */
static char *long_answer(size_t len)
{
	char *s = NULL;

	if (len == SIZE_MAX) {
		return NULL;
	}
	s = malloc(len + 1);
	if (s == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < len; i++) {
		s[i] = (char)('a' + i % 26);
	}
	s[len] = '\0';
	return s;
}

static bool is_prompt(const struct pam_message *m)
{
	return m->msg_style == PAM_PROMPT_ECHO_OFF ||
	       m->msg_style == PAM_PROMPT_ECHO_ON;
}

/*
 * A long-answer call: the prompts are answered here, the other messages
 * (info, error, anything else) go to the inner conversation in one call
 * of their own, whose reply we release.  On success the reply array and
 * its strings belong to the caller (the module).
 */
static int long_answer_conv(const struct pamtest_fault_state *fs, int num_msg,
			    const struct pam_message **msg,
			    struct pam_response **resp)
{
	size_t len = fs->faults->long_answer_len != 0 ?
			     fs->faults->long_answer_len :
			     PAMTEST_CONV_LONG_ANSWER_LEN;
	const struct pam_message **others = NULL; /* borrowed from msg */
	struct pam_response *inner_reply = NULL;
	struct pam_response *reply = NULL;
	int nothers = 0;
	int rv = PAM_BUF_ERR;

	others = calloc((size_t)num_msg, sizeof(*others));
	reply = calloc((size_t)num_msg, sizeof(*reply));
	if (others == NULL || reply == NULL) {
		goto out;
	}
	for (int i = 0; i < num_msg; i++) {
		if (msg[i] == NULL) {
			rv = PAM_CONV_ERR;
			goto out;
		}
		if (!is_prompt(msg[i])) {
			others[nothers++] = msg[i];
			continue;
		}
		reply[i].resp = long_answer(len);
		if (reply[i].resp == NULL) {
			rv = PAM_BUF_ERR;
			goto out;
		}
	}
	if (nothers > 0) {
		if (fs->inner.conv == NULL) {
			rv = PAM_CONV_ERR;
			goto out;
		}
		rv = fs->inner.conv(nothers, others, &inner_reply,
				    fs->inner.appdata_ptr);
		if (rv != PAM_SUCCESS) {
			goto out;
		}
	}
	*resp = reply;
	reply = NULL;
	rv = PAM_SUCCESS;
out:
	if (inner_reply != NULL) {
		pamtest_free_reply(inner_reply, nothers);
	}
	if (reply != NULL) {
		pamtest_free_reply(reply, num_msg);
	}
	free(others);
	return rv;
}

/*
 * The fault layer (appdata_ptr: struct pamtest_fault_state).  Calls that no
 * fault names go to the inner conversation unchanged.
 */
static int pamtest_fault_conv(int num_msg, const struct pam_message **msg,
			      struct pam_response **resp, void *appdata_ptr)
{
	struct pamtest_fault_state *fs = appdata_ptr;
	struct pamtest_conv_faults *f = fs->faults;
	unsigned int call;

	/* Saturates below PAMTEST_CONV_EVERY_CALL, which is no call number. */
	if (f->calls < UINT_MAX - 1) {
		f->calls++;
	}
	call = f->calls;

	if (fault_hits(f->fail_at, call)) {
		if (resp != NULL) {
			*resp = NULL;
		}
		return f->fail_code != PAM_SUCCESS ? f->fail_code
						   : PAM_CONV_ERR;
	}
	if (resp == NULL || msg == NULL || num_msg <= 0) {
		return PAM_CONV_ERR;
	}
	*resp = NULL;
	if (fault_hits(f->null_resp_at, call)) {
		return PAM_SUCCESS;
	}
	if (fault_hits(f->null_entry_at, call)) {
		/* Every resp NULL; the module frees the array. */
		*resp = calloc((size_t)num_msg, sizeof(**resp));
		return *resp != NULL ? PAM_SUCCESS : PAM_BUF_ERR;
	}
	if (fault_hits(f->long_answer_at, call)) {
		return long_answer_conv(fs, num_msg, msg, resp);
	}
	if (fs->inner.conv == NULL) {
		return PAM_CONV_ERR;
	}
	return fs->inner.conv(num_msg, msg, resp, fs->inner.appdata_ptr);
}

/*
 * Run one case.  Returns PAMTEST_ERR_OP for an unknown operation, else
 * PAMTEST_ERR_OK with tc->op_rv set.
 */
static enum pamtest_err run_case(pam_handle_t *ph, struct pam_testcase *tc,
				 bool *keep)
{
	switch (tc->pam_operation) {
	case PAMTEST_AUTHENTICATE:
		tc->op_rv = pam_authenticate(ph, tc->flags);
		break;
	case PAMTEST_SETCRED:
		tc->op_rv = pam_setcred(ph, tc->flags);
		break;
	case PAMTEST_ACCOUNT:
		tc->op_rv = pam_acct_mgmt(ph, tc->flags);
		break;
	case PAMTEST_OPEN_SESSION:
		tc->op_rv = pam_open_session(ph, tc->flags);
		break;
	case PAMTEST_CLOSE_SESSION:
		tc->op_rv = pam_close_session(ph, tc->flags);
		break;
	case PAMTEST_CHAUTHTOK:
		tc->op_rv = pam_chauthtok(ph, tc->flags);
		break;
	case PAMTEST_GETENVLIST:
		/* pam_getenvlist() gives NULL only when out of memory. */
		tc->case_out.envlist = pam_getenvlist(ph);
		tc->op_rv = tc->case_out.envlist != NULL ? PAM_SUCCESS : PAM_BUF_ERR;
		break;
	case PAMTEST_KEEPHANDLE:
		tc->case_out.ph = ph;
		tc->op_rv = PAM_SUCCESS;
		*keep = true;
		break;
	default:
		return PAMTEST_ERR_OP;
	}
	return PAMTEST_ERR_OK;
}

/*
 * The common driver.  conv is installed for this call (pam_start() of a new
 * handle, pam_set_item() on a given one); NULL keeps a given handle's
 * conversation.  keep_conv is installed on a kept handle before returning;
 * NULL leaves the call's conversation there (it then holds only the
 * caller's own pointers).  Whatever happens, the handle is ended before
 * returning unless a KEEPHANDLE case ran and keep_conv could be installed.
 */
static enum pamtest_err pamtest_run(const char *service, const char *user,
				    const struct pam_conv *conv,
				    const struct pam_conv *keep_conv,
				    struct pam_testcase test_cases[],
				    size_t num_test_cases, pam_handle_t *ph)
{
	enum pamtest_err perr = PAMTEST_ERR_OK;
	int last_rv = PAM_SUCCESS;
	bool keep = false;
	size_t ran = 0;
	int rv;

	if (ph == NULL) {
		if (test_cases == NULL && num_test_cases > 0) {
			return PAMTEST_ERR_INTERNAL;
		}
		if (service == NULL) {
			return PAMTEST_ERR_START;	/* pam_start's is nonnull */
		}
		/*
		 * The test asked for the wrapper but it is not loaded: running
		 * would test /etc/pam.d instead (see pamtest_preload.h).  Only
		 * a new handle is checked: a kept one was started already.
		 */
		if (pamtest_preload_missing()) {
			fprintf(stderr, "libpamtest: %s\n",
				PAMTEST_PRELOAD_MISSING_MSG);
			return PAMTEST_ERR_START;
		}
		rv = pam_start(service, user, conv, &ph);
		if (rv != PAM_SUCCESS || ph == NULL) {
			/* Linux-PAM frees the handle of a failed pam_start(). */
			return PAMTEST_ERR_START;
		}
	} else {
		if (test_cases == NULL && num_test_cases > 0) {
			perr = PAMTEST_ERR_INTERNAL;
			goto end;
		}
		if (conv != NULL) {
			rv = pam_set_item(ph, PAM_CONV, conv);
			if (rv != PAM_SUCCESS) {
				perr = PAMTEST_ERR_INTERNAL;
				last_rv = rv;
				goto end;
			}
		}
	}

	for (ran = 0; ran < num_test_cases; ran++) {
		struct pam_testcase *tc = &test_cases[ran];

		perr = run_case(ph, tc, &keep);
		if (perr != PAMTEST_ERR_OK) {
			break;
		}
		last_rv = tc->op_rv;
		if (tc->op_rv != tc->expected_rv) {
			perr = PAMTEST_ERR_CASE;
			ran++;
			break;
		}
	}

	if (keep) {
		if (keep_conv == NULL ||
		    pam_set_item(ph, PAM_CONV, keep_conv) == PAM_SUCCESS) {
			return perr;
		}
		/*
		 * The handle would keep pointing into this frame: end it
		 * rather than hand out something that crashes later.
		 */
		for (size_t i = 0; i < ran; i++) {
			if (test_cases[i].pam_operation == PAMTEST_KEEPHANDLE) {
				test_cases[i].case_out.ph = NULL;
			}
		}
		if (perr == PAMTEST_ERR_OK) {
			perr = PAMTEST_ERR_KEEPHANDLE;
		}
	}

end:
	rv = pam_end(ph, last_rv);
	if (rv != PAM_SUCCESS) {
		return PAMTEST_ERR_END;
	}
	return perr;
}

enum pamtest_err _pamtest(const char *service,
			  const char *user,
			  struct pamtest_conv_data *conv_data,
			  struct pam_testcase test_cases[],
			  size_t num_test_cases,
			  pam_handle_t *pam_handle)
{
	/* Lives only as long as this call; see pamtest_run(). */
	struct pamtest_conv_state state = { .data = conv_data };
	const struct pam_conv conv = {
		.conv = pamtest_builtin_conv,
		.appdata_ptr = &state,
	};

	return pamtest_run(service, user, &conv, &pamtest_detached_conv,
			   test_cases, num_test_cases, pam_handle);
}

enum pamtest_err _pamtest_conv(const char *service,
			       const char *user,
			       pam_conv_fn conv_fn,
			       void *conv_userdata,
			       struct pam_testcase test_cases[],
			       size_t num_test_cases,
			       pam_handle_t *pam_handle)
{
	const struct pam_conv conv = {
		.conv = conv_fn,
		.appdata_ptr = conv_userdata,
	};
	const struct pam_conv *install = &conv;

	if (conv_fn == NULL) {
		install = pam_handle != NULL ? NULL : &pamtest_detached_conv;
	}
	/* The caller's function and data stay on a kept handle: they are theirs. */
	return pamtest_run(service, user, install, NULL,
			   test_cases, num_test_cases, pam_handle);
}

enum pamtest_err _pamtest_faults(const char *service,
				 const char *user,
				 struct pamtest_conv_data *conv_data,
				 struct pamtest_conv_faults *faults,
				 struct pam_testcase test_cases[],
				 size_t num_test_cases,
				 pam_handle_t *pam_handle)
{
	/* Both live only as long as this call; see pamtest_run(). */
	struct pamtest_conv_state state = { .data = conv_data };
	struct pamtest_fault_state fs = {
		.faults = faults,
		.inner = { .conv = pamtest_builtin_conv, .appdata_ptr = &state },
	};
	const struct pam_conv conv = {
		.conv = pamtest_fault_conv,
		.appdata_ptr = &fs,
	};

	if (faults == NULL) {
		return _pamtest(service, user, conv_data, test_cases,
				num_test_cases, pam_handle);
	}
	faults->calls = 0;
	return pamtest_run(service, user, &conv, &pamtest_detached_conv,
			   test_cases, num_test_cases, pam_handle);
}

enum pamtest_err _pamtest_conv_faults(const char *service,
				      const char *user,
				      pam_conv_fn conv_fn,
				      void *conv_userdata,
				      struct pamtest_conv_faults *faults,
				      struct pam_testcase test_cases[],
				      size_t num_test_cases,
				      pam_handle_t *pam_handle)
{
	struct pamtest_fault_state fs = { .faults = faults };
	const struct pam_conv conv = {
		.conv = pamtest_fault_conv,
		.appdata_ptr = &fs,
	};

	if (faults == NULL) {
		return _pamtest_conv(service, user, conv_fn, conv_userdata,
				     test_cases, num_test_cases, pam_handle);
	}
	faults->calls = 0;
	if (conv_fn != NULL) {
		fs.inner.conv = conv_fn;
		fs.inner.appdata_ptr = conv_userdata;
	} else {
		const void *cur = NULL;

		/*
		 * A given handle keeps talking to its own conversation, behind
		 * the faults.  pam_set_item() below frees libpam's copy, so
		 * ours is a copy of the struct, not a pointer to it.
		 */
		fs.inner = pamtest_detached_conv;
		if (pam_handle != NULL &&
		    pam_get_item(pam_handle, PAM_CONV, &cur) == PAM_SUCCESS &&
		    cur != NULL) {
			fs.inner = *(const struct pam_conv *)cur;
		}
	}
	/*
	 * A kept handle gets the inner conversation back: it holds only the
	 * caller's pointers (or none), never this frame's.
	 */
	return pamtest_run(service, user, &conv, &fs.inner,
			   test_cases, num_test_cases, pam_handle);
}

const struct pam_testcase *
_pamtest_failed_case(struct pam_testcase test_cases[], size_t num_test_cases)
{
	if (test_cases == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < num_test_cases; i++) {
		if (test_cases[i].op_rv != test_cases[i].expected_rv) {
			return &test_cases[i];
		}
	}
	return NULL;
}

const char *pamtest_strerror(enum pamtest_err perr)
{
	switch (perr) {
	case PAMTEST_ERR_OK:
		return "Success";
	case PAMTEST_ERR_START:
		return "pam_start failed()";
	case PAMTEST_ERR_CASE:
		return "Unexpected testcase result";
	case PAMTEST_ERR_OP:
		return "Could not run a test case";
	case PAMTEST_ERR_END:
		return "pam_end failed()";
	case PAMTEST_ERR_KEEPHANDLE:
	case PAMTEST_ERR_INTERNAL:
		return "Internal libpamtest error";
	}
	return "Unknown";
}

void pamtest_free_env(char **envlist)
{
	if (envlist == NULL) {
		return;
	}
	/* The environment may carry PAM_AUTHTOK (pam_get_items): wipe it. */
	for (size_t i = 0; envlist[i] != NULL; i++) {
		explicit_bzero(envlist[i], strlen(envlist[i]));
		free(envlist[i]);
	}
	free(envlist);
}
