/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libpamtest's built-in conversation (see pamtest_conv.h, and
 * libpamtest(3) for what callers are promised).  Prompts are answered from
 * the caller's NULL-terminated answer lists, in order; messages are copied
 * into the caller's NULL-terminated buffer arrays, never past either end,
 * or handed to the run's message sink.  Compiled into libpamtest and into
 * pypamtest, so both answer modules with this one routing.
 *
 * As upstream's libpamtest does (observed with Debian's libpamtest0
 * 1.1.4): a prompt with no answer left, and a message of a style it does
 * not know (binary, radio), get an empty (NULL) response while the call
 * succeeds, so that the module decides (pam_matrix answers PAM_CRED_ERR to
 * a NULL password, as upstream's suite expects).  Upstream crashes where
 * an answer list or conv_data is NULL; here those read as empty lists.
 * The detached conversation (no run: a kept handle between runs, or no
 * conversation given) fails every prompt instead: there is no list to run
 * out of.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pamtest_conv.h"

const struct pam_conv pamtest_detached_conv = {
	.conv = pamtest_builtin_conv,
	.appdata_ptr = NULL,
};

/* The next answer of a NULL-terminated list, or NULL when there is none. */
static const char *next_answer(const char **answers, size_t *idx)
{
	if (answers == NULL || answers[*idx] == NULL) {
		return NULL;
	}
	return answers[(*idx)++];
}

/*
 * Copy msg into the next buffer of a NULL-terminated array of
 * PAM_MAX_MSG_SIZE buffers; drop it when there is no buffer left.
 */
static void copy_message(char **bufs, size_t *idx, const char *msg)
{
	char *dst;
	size_t len;

	if (bufs == NULL || bufs[*idx] == NULL) {
		return;
	}
	dst = bufs[(*idx)++];
	len = strnlen(msg, PAM_MAX_MSG_SIZE - 1);
	memcpy(dst, msg, len);
	dst[len] = '\0';
}

/* An error or info message to the sink, else to data's buffers.  0 or -1. */
static int keep_message(struct pamtest_conv_state *st, int style,
			const char *msg)
{
	struct pamtest_conv_data *data = st->data;

	if (msg == NULL) {
		msg = "";
	}
	if (st->sink != NULL) {
		return st->sink(st->sink_ctx, style, msg);
	}
	if (style == PAM_ERROR_MSG) {
		copy_message(data ? data->out_err : NULL, &st->err_idx, msg);
	} else {
		copy_message(data ? data->out_info : NULL, &st->info_idx, msg);
	}
	return 0;
}

void pamtest_free_reply(struct pam_response *reply, int num_msg)
{
	for (int i = 0; i < num_msg; i++) {
		if (reply[i].resp != NULL) {
			explicit_bzero(reply[i].resp, strlen(reply[i].resp));
			free(reply[i].resp);
		}
	}
	free(reply);
}

int pamtest_builtin_conv(int num_msg, const struct pam_message **msg,
			 struct pam_response **resp, void *appdata_ptr)
{
	struct pamtest_conv_state *st = appdata_ptr;
	struct pamtest_conv_state none = { .data = NULL };
	struct pamtest_conv_data *data = NULL;
	struct pam_response *reply = NULL;
	bool detached = st == NULL;
	int rv = PAM_CONV_ERR;

	if (resp == NULL) {
		return PAM_CONV_ERR;
	}
	*resp = NULL;
	if (msg == NULL || num_msg <= 0) {
		return PAM_CONV_ERR;
	}
	if (st == NULL) {
		st = &none;
	}
	data = st->data;

	reply = calloc((size_t)num_msg, sizeof(*reply));
	if (reply == NULL) {
		st->oom = true;
		return PAM_BUF_ERR;
	}

	for (int i = 0; i < num_msg; i++) {
		const struct pam_message *m = msg[i];
		const char *answer;

		if (m == NULL) {
			rv = PAM_CONV_ERR;
			goto out;
		}
		switch (m->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
		case PAM_PROMPT_ECHO_ON:
			if (m->msg_style == PAM_PROMPT_ECHO_OFF) {
				answer = next_answer(data ? data->in_echo_off : NULL,
						     &st->echo_off_idx);
			} else {
				answer = next_answer(data ? data->in_echo_on : NULL,
						     &st->echo_on_idx);
			}
			if (answer == NULL && detached) {
				goto out;
			}
			if (answer == NULL) {
				break;	/* no answer left: a NULL response */
			}
			reply[i].resp = strdup(answer);
			if (reply[i].resp == NULL) {
				st->oom = true;
				rv = PAM_BUF_ERR;
				goto out;
			}
			break;
		case PAM_ERROR_MSG:
		case PAM_TEXT_INFO:
			if (keep_message(st, m->msg_style, m->msg) != 0) {
				st->oom = true;
				rv = PAM_BUF_ERR;
				goto out;
			}
			break;
		default:
			if (detached) {
				goto out;
			}
			break;	/* binary and radio prompts: a NULL response */
		}
	}

	*resp = reply;
	reply = NULL;
	rv = PAM_SUCCESS;
out:
	if (reply != NULL) {
		pamtest_free_reply(reply, num_msg);
	}
	return rv;
}
